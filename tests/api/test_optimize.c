/*
 * test_optimize.c — `optimize` through the public API, checked against the stored tables:
 * 300 one-row commits leave every table with a bounded number of fragments (automatic
 * compaction) and the same answers as without it; an explicit optimize merges fragments and
 * drops deleted rows as one `optimize` commit with the same answers and ids, and a second run
 * publishes nothing; --if-commit style pinning is honoured; a crash at any point of an
 * optimize leaves the old state or the new one, never a broken one; og_db_optimize leaves
 * every persisted property index of the new head built (full coverage), answers unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <jansson.h>

#include "engine/scan_index.h"
#include "engine/search_ann.h"
#include "engine/tableview.h"
#include "omnigraph.h"
#include "store/store.h"
#include "table/table.h"
#include "util/fault.h"

#include "api_rows.h"

typedef struct ctx {
    char dir[64], uri[96], data[96];
    og_db *db;
    og_store *st;
} ctx;

static const char *SCHEMA = "node Person { name: String @key  age: I32? }\n"
                            "edge Knows: Person -> Person\n";

static const char *MUTS =
    "query add($n: String, $a: I32) { insert Person { name: $n, age: $a } }\n"
    "query link($f: String, $t: String) { insert Knows { from: $f, to: $t } }\n"
    "query drop_old($a: I32) { delete Person where age < $a }\n";

static const char *Q_COUNT = "query q() { match { $p: Person } return { count($p) as n, max($p.age) as m } }";
static const char *Q_SOME =
    "query q() { match { $p: Person  $p.age >= 100  $p.age < 110 } return { $p.name, $p.age } order { $p.name } }";
static const char *Q_HOP =
    "query q() { match { $p: Person { name: \"p0\" } $p knows{1,3} $f } return { count($f) as n } }";
static const char *Q_KEY = "query q() { match { $p: Person { name: \"p150\" } } return { $p.name, $p.age } }";

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-optimize-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    snprintf(c->data, sizeof c->data, "%s/in.jsonl", c->dir);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "16", 1);
    if (og_db_init(&c->db, c->uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    if (og_store_open(&c->st, c->uri) != OG_OK) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    og_store_close(c->st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
    free(c);
    unsetenv("OG_AUTO_OPTIMIZE_FRAGMENTS");
    return 0;
}

static void mut(ctx *c, const char *name, const char *params, int expect_published)
{
    og_receipt r;
    og_status st = og_db_mutate(&r, c->db, MUTS, strlen(MUTS), name, params, NULL, NULL);
    if (st != OG_OK) fail_msg("%s %s: %s", name, params, og_error_message());
    if (expect_published >= 0) assert_int_equal(r.published, expect_published);
}

/* The most fragments any table of the head has, and whether any has a deletion file. */
static size_t max_fragments(ctx *c, int *deletions)
{
    char *snap;
    assert_int_equal(og_db_snapshot(&snap, c->db, NULL), OG_OK);
    json_t *j = json_loads(snap, 0, NULL);
    og_free(snap);
    assert_non_null(j);
    size_t most = 0;
    if (deletions) *deletions = 0;
    json_t *tables = json_object_get(j, "tables"), *t;
    size_t i;
    json_array_foreach(tables, i, t) {
        og_table *tab;
        assert_int_equal(og_table_open(&tab, c->st, json_string_value(json_object_get(t, "table"))), OG_OK);
        og_manifest m;
        og_manifest_init(&m);
        assert_int_equal(og_table_load(tab, (uint64_t)json_integer_value(json_object_get(t, "version")), &m), OG_OK);
        if (m.nfragments > most) most = m.nfragments;
        for (size_t k = 0; deletions && k < m.nfragments; k++) *deletions |= m.fragments[k].deletion.present;
        og_manifest_free(&m);
        og_table_close(tab);
    }
    json_decref(j);
    return most;
}

static void answers(ctx *c, char *out, size_t cap)
{
    const char *qs[] = {Q_COUNT, Q_SOME, Q_HOP, Q_KEY};
    size_t w = 0;
    for (size_t i = 0; i < 4; i++) {
        char got[2048];
        if (api_rows_render(c->db, qs[i], NULL, got, sizeof got) != OG_OK) fail_msg("query: %s", og_error_message());
        w += (size_t)snprintf(out + w, cap - w, "%s\n", got);
    }
}

static char *head_commit_kinds(ctx *c, size_t limit)
{
    char *list;
    assert_int_equal(og_db_commit_list(&list, c->db, NULL, limit), OG_OK);
    return list;
}

static void one_row_commits_keep_fragments_bounded(void **state)
{
    ctx *c = *state;
    char p[96];
    for (int i = 0; i < 300; i++) {
        snprintf(p, sizeof p, "{\"n\":\"p%d\",\"a\":%d}", i, i);
        mut(c, "add", p, 1);
        if (i && i % 10 == 0) {
            snprintf(p, sizeof p, "{\"f\":\"p%d\",\"t\":\"p%d\"}", i - 10, i);
            mut(c, "link", p, 1);
        }
        /* 16 is the threshold: the write that passes it compacts right after its commit */
        assert_true(max_fragments(c, NULL) <= 16);
    }
    char got[8192];
    answers(c, got, sizeof got);
    assert_string_equal(got, "300|299\n"
                             "p100|100;p101|101;p102|102;p103|103;p104|104;p105|105;p106|106;p107|107;p108|108;p109|109\n"
                             "3\n"
                             "p150|150\n");
    char *list = head_commit_kinds(c, 600);
    assert_non_null(strstr(list, "optimize"));
    og_free(list);
}

/* The automatic policy merges only the newest run of small fragments (sizes falling
 * geometrically from old to new), so the rows it rewrites grow like rows * log(rows), not
 * rows^2 / threshold: 400 one-row commits with a threshold of 16 rewrite ~1,800 rows in all
 * (merging every small fragment on each trigger rewrote ~4,800), the fragments stay bounded,
 * and the answers are the same. */
static void automatic_compaction_is_tiered(void **state)
{
    ctx *c = *state;
    char p[96];
    for (int i = 0; i < 400; i++) {
        snprintf(p, sizeof p, "{\"n\":\"p%d\",\"a\":%d}", i, i);
        mut(c, "add", p, 1);
        assert_true(max_fragments(c, NULL) <= 16);
    }
    char *list = head_commit_kinds(c, 0);
    json_t *j = json_loads(list, 0, NULL);
    og_free(list);
    assert_non_null(j);
    json_t *commits = json_object_get(j, "commits"), *cm;
    size_t i, optimizes = 0;
    long long rewritten = 0;
    json_array_foreach(commits, i, cm) {
        if (strcmp(json_string_value(json_object_get(cm, "kind")), "optimize")) continue;
        optimizes++;
        rewritten += json_integer_value(json_object_get(json_object_get(cm, "stats"), "rows_rewritten"));
    }
    json_decref(j);
    assert_true(optimizes > 0);
    assert_true(rewritten > 0 && rewritten < 3000);
    char got[8192];
    answers(c, got, sizeof got);
    assert_non_null(strstr(got, "400|399\n"));
}

static void optimize_merges_and_drops_deleted_rows(void **state)
{
    ctx *c = *state;
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "0", 1); /* only the explicit one */
    char p[96];
    for (int i = 0; i < 40; i++) {
        snprintf(p, sizeof p, "{\"n\":\"p%d\",\"a\":%d}", i, 100 + i);
        mut(c, "add", p, 1);
    }
    mut(c, "add", "{\"n\":\"p0\",\"a\":500}", 1);          /* an upsert: a deletion + a new row */
    mut(c, "drop_old", "{\"a\":103}", 1);                   /* deletes p1, p2 */
    mut(c, "link", "{\"f\":\"p0\",\"t\":\"p5\"}", 1);
    int dels;
    assert_true(max_fragments(c, &dels) > 40);
    assert_true(dels);
    char want[8192], got[8192];
    answers(c, want, sizeof want);
    og_optimize_result r;
    /* pinned to another head: nothing happens */
    assert_int_equal(og_db_optimize(&r, c->db, NULL, "01ARZ3NDEKTSV4RRFFQ69G5FAV"), OG_ERR_PRECONDITION_FAILED);
    assert_int_equal(og_db_optimize(&r, c->db, NULL, NULL), OG_OK);
    assert_int_equal(r.published, 1);
    assert_int_equal(r.tables, 1); /* the edge table's one fragment is left alone */
    assert_true(r.fragments_after < r.fragments_before);
    assert_int_equal(r.deleted_rows_dropped, 3);
    assert_int_equal(max_fragments(c, &dels), 1);
    assert_false(dels);
    answers(c, got, sizeof got);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "38|"));
    /* the commit is an optimize commit, and a second run has nothing to do */
    char *list = head_commit_kinds(c, 1);
    assert_non_null(strstr(list, "optimize"));
    og_free(list);
    assert_int_equal(og_db_optimize(&r, c->db, NULL, NULL), OG_OK);
    assert_int_equal(r.published, 0);
    /* the earlier commits still read their own rows */
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "16", 1);
}

static void a_crash_during_optimize_leaves_old_or_new(void **state)
{
    ctx *c = *state;
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "0", 1);
    char p[96];
    for (int i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "{\"n\":\"p%d\",\"a\":%d}", i, 100 + i);
        mut(c, "add", p, 1);
    }
    mut(c, "drop_old", "{\"a\":101}", 1);
    char want[8192], got[8192];
    answers(c, want, sizeof want);
    /* the parent's reads use index files but write none, so each graph index file is left for
     * the optimize that crashes writing it */
    og_tableview_set_index_mode(1);
    /* every point an optimize passes, in order (it writes no deletion file: it drops them) */
    static const char *points[] = {"table.after_data_file",     "table.after_manifest", "graph.after_effects",
                                   "graph.after_commit_object", "graph.after_publish",  "index.after_keymap",
                                   "index.after_topology"};
    int crashed = 0;
    for (size_t i = 0; i < sizeof points / sizeof *points; i++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            setenv("OG_FAULT", points[i], 1);
            og_tableview_set_index_mode(2); /* the child writes graph index files */
            og_optimize_result r;
            og_db_optimize(&r, c->db, NULL, NULL);
            _exit(0);
        }
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        assert_true(WIFEXITED(ws));
        crashed += WEXITSTATUS(ws) == OG_FAULT_EXIT_CODE;
        og_db_close(c->db);
        assert_int_equal(og_db_open(&c->db, c->uri, NULL), OG_OK);
        answers(c, got, sizeof got);
        assert_string_equal(got, want);
        /* a fresh cache for the next child (views prepared in read-only mode stay unsaved) */
        og_db_close(c->db);
        assert_int_equal(og_db_open(&c->db, c->uri, NULL), OG_OK);
    }
    assert_int_equal(crashed, 7); /* the last three crashed after publishing (two writing graph indexes) */
    og_tableview_set_index_mode(2);
    og_optimize_result r;
    assert_int_equal(og_db_optimize(&r, c->db, NULL, NULL), OG_OK); /* whatever state: it converges */
    answers(c, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(max_fragments(c, NULL), 1);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "16", 1);
}

/* Counts the files under dir whose name ends with suffix. */
static size_t count_suffix(const char *dir, const char *suffix)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*%s' 2>/dev/null | wc -l", dir, suffix);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0;
    if (fscanf(p, "%zu", &n) != 1) n = 0;
    pclose(p);
    return n;
}

/* optimize writes the key maps and topologies of the head, so a new process's first query
 * opens them: after load + optimize nothing is left for a reader to build. */
static void optimize_writes_the_graph_indexes_of_the_head(void **state)
{
    ctx *c = *state;
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "0", 1);
    char p[96], ix[128];
    for (int i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "{\"n\":\"p%d\",\"a\":%d}", i, 100 + i);
        mut(c, "add", p, 1);
    }
    mut(c, "link", "{\"f\":\"p0\",\"t\":\"p1\"}", 1);
    mut(c, "link", "{\"f\":\"p1\",\"t\":\"p2\"}", 1);
    snprintf(ix, sizeof ix, "%s/_index", c->uri);
    assert_int_equal(count_suffix(ix, "keymap.v1") + count_suffix(ix, ".csr"), 0); /* writers never build them */
    og_optimize_result r;
    assert_int_equal(og_db_optimize(&r, c->db, NULL, NULL), OG_OK);
    assert_int_equal(r.published, 1);
    assert_int_equal(r.index_status, OG_OK);
    assert_int_equal(count_suffix(ix, "keymap.v1"), 1); /* the compacted Person data file */
    assert_int_equal(count_suffix(ix, ".csr"), 1);      /* Knows at the head's versions */
    char want[8192], got[8192];
    answers(c, want, sizeof want);
    /* a fresh handle answers the same from them, and a reader writes nothing more */
    og_db_close(c->db);
    assert_int_equal(og_db_open(&c->db, c->uri, NULL), OG_OK);
    answers(c, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(count_suffix(ix, "keymap.v1"), 1);
    assert_int_equal(count_suffix(ix, ".csr"), 1);
    /* nothing to compact: the files are there already, nothing changes */
    assert_int_equal(og_db_optimize(&r, c->db, NULL, NULL), OG_OK);
    assert_int_equal(r.published, 0);
    assert_int_equal(r.index_status, OG_OK);
    assert_int_equal(count_suffix(ix, "keymap.v1") + count_suffix(ix, ".csr"), 2);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "16", 1);
}

/* ---- og_db_optimize brings the persisted indexes up to date -------------------------------- */

static const char *IX_SCHEMA = "node Item { slug: String @key  year: I32 @index  emb: Vector(4)? @index }\n";
static const char *IX_MUTS =
    "query add($s: String, $y: I32, $e: Vector(4)) { insert Item { slug: $s, year: $y, emb: $e } }\n"
    "query drop($s: String) { delete Item where slug = $s }\n";
static const char *IX_QUERIES =
    "query knn($v: Vector(4)) { match { $i: Item } return { $i.slug, nearest($i.emb, $v) as d } "
    "order { nearest($i.emb, $v) } limit 5 }\n"
    "query yr($y: I32) { match { $i: Item  $i.year >= $y } return { $i.slug } order { $i.slug } }\n"
    "query txt($q: String) { match { $i: Item  search($i.slug, $q) } return { $i.slug } order { $i.slug } }\n";

static int setup_ix(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-optimize-ix-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "0", 1);
    if (og_db_init(&c->db, c->uri, "s.pg", IX_SCHEMA, strlen(IX_SCHEMA), NULL) != OG_OK) return -1;
    if (og_store_open(&c->st, c->uri) != OG_OK) return -1;
    *state = c;
    return 0;
}

static void ix_answers(ctx *c, char *out, size_t cap)
{
    static const char *q[][2] = {{"knn", "{\"v\":[1,2,3,4]}"}, {"knn", "{\"v\":[30,1,0,5]}"}, {"yr", "{\"y\":2010}"},
                                 {"txt", "{\"q\":\"item7\"}"}};
    size_t w = 0;
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        og_rows *rows;
        if (og_db_query(&rows, c->db, IX_QUERIES, strlen(IX_QUERIES), q[i][0], q[i][1], NULL) != OG_OK)
            fail_msg("%s: %s", q[i][0], og_error_message());
        char *text;
        assert_int_equal(og_rows_render(&text, NULL, rows, OG_FORMAT_CSV, "main"), OG_OK);
        og_rows_free(rows);
        w += (size_t)snprintf(out + w, cap - w, "%s\n", text);
        free(text);
    }
}

/* {"files","covered"} of the index status report, over every kind. */
static void ix_status(ctx *c, long long *files, long long *covered, long long *built)
{
    char *rep;
    assert_int_equal(og_db_index_status(&rep, c->db, NULL, NULL, NULL), OG_OK);
    json_t *j = json_loads(rep, 0, NULL);
    og_free(rep);
    assert_non_null(j);
    *files = json_integer_value(json_object_get(j, "files"));
    *covered = json_integer_value(json_object_get(j, "covered"));
    if (built) *built = json_integer_value(json_object_get(j, "built"));
    json_t *ix = json_object_get(j, "indexes");
    assert_true(json_array_size(ix) >= 3); /* fts on slug, scalar on year, vector on emb */
    json_decref(j);
}

static void optimize_builds_the_indexes(void **state)
{
    ctx *c = *state;
    char p[160];
    for (int i = 0; i < 24; i++) { /* 24 one-row commits: 24 small data files */
        snprintf(p, sizeof p, "{\"s\":\"item%d\",\"y\":%d,\"e\":[%d,%d,%d,%d]}", i, 2000 + i, i, (i * 7) % 5, i % 3, 24 - i);
        og_receipt r;
        if (og_db_mutate(&r, c->db, IX_MUTS, strlen(IX_MUTS), "add", p, NULL, NULL) != OG_OK)
            fail_msg("add: %s", og_error_message());
    }
    og_receipt r;
    assert_int_equal(og_db_mutate(&r, c->db, IX_MUTS, strlen(IX_MUTS), "drop", "{\"s\":\"item3\"}", NULL, NULL), OG_OK);
    char *rep;
    assert_int_equal(og_db_index_build(&rep, c->db, NULL, "vector", NULL), OG_OK); /* some files, one kind */
    og_free(rep);
    long long files, covered, built;
    ix_status(c, &files, &covered, NULL);
    assert_true(files > 0 && covered < files);
    char want[8192], got[8192];
    ix_answers(c, want, sizeof want);
    assert_non_null(strstr(want, "item7"));
    assert_null(strstr(want, "item3,"));

    og_optimize_result o;
    assert_int_equal(og_db_optimize(&o, c->db, NULL, NULL), OG_OK);
    assert_int_equal(o.published, 1);
    assert_int_equal(o.index_status, OG_OK);
    assert_string_equal(o.index_error, "");
    assert_true(o.index_files_built >= 3); /* the compacted file, once per kind */
    assert_int_equal(o.index_covered, o.index_files);
    ix_status(c, &files, &covered, &built);
    assert_int_equal(files, (long long)o.index_files);
    assert_int_equal(covered, files); /* full coverage */
    assert_int_equal(built, 0);
    /* the answers are unchanged, and now come through the index files */
    uint64_t ann = og_search_ann_uses(), scans = og_scan_index_uses();
    ix_answers(c, got, sizeof got);
    assert_string_equal(got, want);
    assert_true(og_search_ann_uses() > ann);
    assert_true(og_scan_index_uses() > scans);
    /* nothing left to do: no commit, no file */
    assert_int_equal(og_db_optimize(&o, c->db, NULL, NULL), OG_OK);
    assert_int_equal(o.published, 0);
    assert_int_equal(o.index_files_built, 0);
    assert_int_equal(o.index_covered, o.index_files);
    /* a branch that does not exist: the optimize's own error, nothing built */
    assert_int_equal(og_db_optimize(&o, c->db, "nope", NULL), OG_ERR_NOT_FOUND);
    assert_int_equal(o.index_files_built, 0);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "16", 1);
}

/* ---- a vector table's data files stay the size of one good ANN graph ----------------------- */

/* Two load files of 35,000 rows per type: optimize folds the Tag files into one, and leaves
 * the Item files (a Vector property: one ANN graph per data file) as they are — together they
 * would pass OG_OPTIMIZE_VECTOR_TARGET_ROWS (65,536), the size past which a graph's recall at
 * the default beam falls (docs/indexes.md "Compaction and vector recall"). */
static void vector_tables_keep_data_files_of_ann_size(void **state)
{
    (void)state;
    char dir[64] = "/tmp/og-optimize-vec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char uri[96], data[96];
    snprintf(uri, sizeof uri, "%s/g", dir);
    snprintf(data, sizeof data, "%s/in.jsonl", dir);
    static const char *VS = "node Item { slug: String @key  emb: Vector(2)? @index }\nnode Tag { name: String @key }\n";
    FILE *f = fopen(data, "w");
    assert_non_null(f);
    for (int i = 0; i < 70000; i++) fprintf(f, "{\"type\":\"Item\",\"data\":{\"slug\":\"i%d\"}}\n", i);
    for (int i = 0; i < 70000; i++) fprintf(f, "{\"type\":\"Tag\",\"data\":{\"name\":\"t%d\"}}\n", i);
    fclose(f);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "0", 1);
    setenv("OG_LOAD_FLUSH_ROWS", "35000", 1);
    og_db *db;
    assert_int_equal(og_db_init(&db, uri, "s.pg", VS, strlen(VS), NULL), OG_OK);
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt rc;
    if (og_db_load(&rc, db, data, &lo) != OG_OK) fail_msg("load: %s", og_error_message());
    unsetenv("OG_LOAD_FLUSH_ROWS");
    og_optimize_result o;
    assert_int_equal(og_db_optimize(&o, db, NULL, NULL), OG_OK);
    assert_int_equal(o.published, 1);
    assert_int_equal(o.tables, 1); /* Tag only */
    assert_int_equal(o.fragments_before, 2);
    assert_int_equal(o.fragments_after, 1);
    assert_int_equal(o.rows_rewritten, 70000);
    og_db_close(db);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "16", 1);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(one_row_commits_keep_fragments_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(automatic_compaction_is_tiered, setup, teardown),
        cmocka_unit_test_setup_teardown(optimize_merges_and_drops_deleted_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(a_crash_during_optimize_leaves_old_or_new, setup, teardown),
        cmocka_unit_test_setup_teardown(optimize_builds_the_indexes, setup_ix, teardown),
        cmocka_unit_test(vector_tables_keep_data_files_of_ann_size),
        cmocka_unit_test_setup_teardown(optimize_writes_the_graph_indexes_of_the_head, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
