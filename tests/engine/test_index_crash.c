/*
 * test_index_crash.c — a build of the vector (ANN) and scalar property indexes killed at any
 * point leaves every index file absent or whole (docs/indexes.md "Damage and crashes";
 * issue 15, "Indexes as derived state").  test_fts_index.c does the same for the fts kind.
 *
 * Why a crash test per kind: `index build` writes one file per (data file, property) through
 * put_if_absent, so a kill can stop it between any two files, or inside one put; each kind has
 * its own check and its own reader, and either could accept a file the other rejects.
 *
 * How: the graph has three data files of Doc (a deletion in two of them).  A child process
 * first runs the build with OG_FAULT_TRACE=1, which lists every fault point the build passes
 * and how often; then, for every point and every pass k of it, a child runs the build with
 * OG_FAULT=<point>#k and must die there.  After each kill: every index file present opens and
 * validates (the kind's check against its data file's row count, and its reader), no file sits
 * under another name, `index status` counts exactly the files present per property, the
 * queries (nearest top-k; scalar equality, range, `in`, `is null`) answer exactly as with index
 * files off and exact search forced, and a following build reaches full coverage with the same
 * answers — read through the files (the kind's use counter moves).  The same again starting
 * from torn files (every file of the kind truncated, as a crash mid-write without the atomic
 * publish would leave them): they must be refused, and their repair killed anywhere too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include "compiler/catalog.h"
#include "engine/index_build.h"
#include "engine/layout.h"
#include "engine/mutate.h"
#include "engine/scan_index.h"
#include "engine/search_ann.h"
#include "engine/tableview.h"
#include "fixture.h"
#include "index/ann.h"
#include "index/index.h"
#include "index/scalar.h"
#include "util/fault.h"

#define NFILES 3
#define PER_FILE 40
#define DIM 4
#define MAX_POINTS 16

static const char *SCHEMA = "node Doc { slug: String @key  year: I32 @index  score: F64? @index  "
                            "kind: enum(alpha, beta, gamma)? @index  emb: Vector(4)? @index }\n";

static const char *QUERIES =
    "query knn($v: Vector(4)) { match { $d: Doc } return { $d.slug, nearest($d.emb, $v) as dist } "
    "order { nearest($d.emb, $v) } limit 5 }\n"
    "query yeq($y: I32) { match { $d: Doc  $d.year = $y } return { $d.slug } order { $d.slug } }\n"
    "query yrange($lo: I32, $hi: I32) { match { $d: Doc  $d.year >= $lo  $d.year < $hi } return { $d.slug } "
    "order { $d.slug } }\n"
    "query sgt($s: F64) { match { $d: Doc  $d.score > $s } return { $d.slug, $d.score } order { $d.slug } }\n"
    "query snull() { match { $d: Doc  $d.score is null } return { $d.slug } order { $d.slug } }\n"
    "query keq($k: String) { match { $d: Doc  $d.kind = $k } return { $d.slug } order { $d.slug } }\n"
    "query kin() { match { $d: Doc  $d.kind in [\"alpha\", \"gamma\"] } return { $d.slug } order { $d.slug } }\n";

static fixture *F;
static int nonnull_emb[NFILES], nonnull_score[NFILES], nonnull_kind[NFILES];

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* The NDJSON of data file `file` (PER_FILE rows; some nulls in every nullable property). */
static void make_data(int file, char *out, size_t cap)
{
    static const char *kinds[] = {"alpha", "beta", "gamma"};
    size_t w = 0;
    out[0] = 0;
    for (int i = 0; i < PER_FILE; i++) {
        char score[32] = "", kind[32] = "", emb[128] = "";
        if (i % 7 != 3) {
            snprintf(score, sizeof score, ",\"score\":%.2f", urand() * 100.0);
            nonnull_score[file]++;
        }
        if (i % 5 != 1) {
            snprintf(kind, sizeof kind, ",\"kind\":\"%s\"", kinds[(i * 7 + file) % 3]);
            nonnull_kind[file]++;
        }
        if (i % 6 != 2) {
            double x[DIM];
            for (int c = 0; c < DIM; c++) x[c] = urand();
            snprintf(emb, sizeof emb, ",\"emb\":[%.4f,%.4f,%.4f,%.4f]", x[0], x[1], x[2], x[3]);
            nonnull_emb[file]++;
        }
        w += (size_t)snprintf(out + w, cap - w,
                              "{\"type\":\"Doc\",\"data\":{\"slug\":\"d%d-%02d\",\"year\":%d%s%s%s}}\n", file, i,
                              1990 + (i * 13 + file * 5) % 20, score, kind, emb);
    }
}

static void delete_slug(const char *slug)
{
    const char *mq = "query del($s: String) { delete Doc where slug = $s }\n";
    json_t *pj = json_pack("{s:s}", "s", slug);
    og_mutate_opts mo = {NULL, NULL};
    og_write_result w;
    if (og_engine_mutate(F->e, "m.gq", mq, strlen(mq), "del", pj, &mo, &w, NULL) != OG_OK)
        fail_msg("delete %s: %s", slug, og_error_message());
    json_decref(pj);
}

static int setup(void **state)
{
    (void)state;
    og_tableview_set_index_mode(2);
    og_search_set_exact(0);
    memset(nonnull_emb, 0, sizeof nonnull_emb);
    memset(nonnull_score, 0, sizeof nonnull_score);
    memset(nonnull_kind, 0, sizeof nonnull_kind);
    F = fixture_new(SCHEMA, QUERIES);
    if (!F) return -1;
    static char data[PER_FILE * 200];
    for (int file = 0; file < NFILES; file++) {
        make_data(file, data, sizeof data);
        og_write_result w;
        if (fixture_load(F, data, file ? OG_LOAD_APPEND : OG_LOAD_OVERWRITE, &w) != OG_OK) {
            fprintf(stderr, "setup: %s\n", og_error_message());
            return -1;
        }
    }
    delete_slug("d0-04"); /* deletion vectors on two of the three data files */
    delete_slug("d1-10");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_free(F);
    og_tableview_set_index_mode(2);
    og_search_set_exact(0);
    return 0;
}

/* Every answer of the queries, one string. */
static void answers(char *out, size_t cap)
{
    static const char *calls[][2] = {
        {"knn", "{\"v\": [0.5, 0.5, 0.5, 0.5]}"},
        {"knn", "{\"v\": [0.05, 0.9, 0.2, 0.7]}"},
        {"knn", "{\"v\": [1.0, 0.0, 1.0, 0.0]}"},
        {"yeq", "{\"y\": 1997}"},
        {"yrange", "{\"lo\": 1993, \"hi\": 1998}"},
        {"sgt", "{\"s\": 71.5}"},
        {"snull", NULL},
        {"keq", "{\"k\": \"beta\"}"},
        {"kin", NULL},
    };
    out[0] = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char one[4096];
        if (fixture_query(F, calls[i][0], calls[i][1], NULL, one, sizeof one) != OG_OK)
            fail_msg("%s: %s", calls[i][0], og_error_message());
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s[%s]", l ? " " : "", calls[i][0], one);
    }
}

/* The ground truth: no index file read, exact nearest search. */
static void truth(char *out, size_t cap)
{
    og_tableview_set_index_mode(0);
    og_search_set_exact(1);
    answers(out, cap);
    og_search_set_exact(0);
    og_tableview_set_index_mode(2);
}

/* How often the query path started from index files of `kind` so far. */
static uint64_t uses(const char *kind) { return !strcmp(kind, "vector") ? og_search_ann_uses() : og_scan_index_uses(); }

/* Runs the reconciler on every property of `kind`; returns its report (owned). */
static json_t *run(const char *kind, int build)
{
    og_index_run_opts o = {NULL, kind, NULL, build};
    json_t *rep;
    if (og_engine_index_run(F->e, &o, &rep) != OG_OK) fail_msg("index %s: %s", kind, og_error_message());
    return rep;
}

static long covered_of(json_t *rep, const char *prop)
{
    json_t *ix;
    size_t i;
    json_array_foreach(json_object_get(rep, "indexes"), i, ix) {
        if (!strcmp(json_string_value(json_object_get(ix, "property")), prop))
            return (long)json_integer_value(json_object_get(ix, "covered"));
    }
    fail_msg("no status entry for %s", prop);
    return -1;
}

static void count_offset(void *ud, uint32_t offset)
{
    (void)offset;
    (*(size_t *)ud)++;
}

/* Validates one present index file of kind d for fragment `file` (load order) of property p:
 * 1 when it is whole and describes its data file; 0 when it fails the kind's check (a torn
 * file: allowed only where the test tore it). */
static int check_whole(const og_index_def *d, const og_cat_prop *p, int file, const og_fragment *f, const char *path)
{
    og_buf b = OG_BUF_INIT;
    if (og_buf_read_file(&b, path) != OG_OK) fail_msg("read %s", path);
    if (d->check(b.data, b.len, f->physical_rows) != OG_OK) {
        og_error_clear();
        og_buf_free(&b);
        return 0;
    }
    if (!strcmp(d->name, "vector")) {
        og_ann *a;
        if (og_ann_open_bytes(&a, b.data, b.len) != OG_OK) fail_msg("%s: does not open", path);
        assert_int_equal(og_ann_rows(a), f->physical_rows);
        assert_int_equal(og_ann_count(a), nonnull_emb[file]);
        assert_int_equal(og_ann_dim(a), DIM);
        og_ann_free(a);
    } else {
        og_scalar_kind want = !strcmp(p->name, "year") ? OG_SCALAR_INT
                              : !strcmp(p->name, "score") ? OG_SCALAR_FLOAT
                                                          : OG_SCALAR_STRING;
        assert_int_equal(og_scalar_file_kind(b.data), want);
        og_scalar_range all = {0};
        size_t n = 0;
        if (og_scalar_lookup(b.data, b.len, want == OG_SCALAR_STRING, &all, count_offset, &n) != OG_OK)
            fail_msg("%s: lookup failed", path);
        size_t nonnull = !strcmp(p->name, "year") ? PER_FILE : !strcmp(p->name, "score") ? nonnull_score[file]
                                                                                          : nonnull_kind[file];
        assert_int_equal(n, nonnull);
    }
    og_buf_free(&b);
    return 1;
}

/* Paths of the index files of `kind` under the graph, whatever their name (up to 32). */
static size_t kind_files(const char *kind)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "find '%s/_index' -type f -name '%s-*' 2>/dev/null | wc -l", F->uri, kind);
    FILE *p = popen(cmd, "r");
    long n = 0;
    if (!p || fscanf(p, "%ld", &n) != 1) fail_msg("find failed");
    pclose(p);
    return (size_t)n;
}

/* Checks every index file of `kind` the head's data files could have: each present one is whole
 * and describes its data file, or (only when allow_torn) fails the kind's check; `index status`
 * covers exactly the whole ones; no file of the kind sits anywhere else.  Returns how many are
 * whole; *slots = how many there could be, *torn = how many are present but not whole. */
static size_t check_files(const char *kind, int allow_torn, size_t *slots, size_t *torn)
{
    const og_index_def *d = og_index_def_find(kind);
    assert_non_null(d);
    json_t *rep = run(kind, 0);
    og_read *r;
    if (og_read_begin(&r, F->e, NULL, NULL) != OG_OK) fail_msg("read: %s", og_error_message());
    const og_catalog *cat = og_read_catalog(r);
    size_t whole = 0;
    *slots = *torn = 0;
    for (size_t n = 0; n < cat->nnodes; n++) {
        for (size_t k = 0; k < cat->nodes[n].nprops; k++) {
            const og_cat_prop *p = &cat->nodes[n].props[k];
            if (p->index == OG_INDEX_NONE || !d->applies(p->type, (int)p->index)) continue;
            og_tableview *v;
            assert_int_equal(og_read_node_view(r, n, &v), OG_OK);
            int32_t fid;
            assert_int_equal(og_layout_field_id(p->id, &fid), OG_OK);
            const og_manifest *m = og_tableview_manifest(v);
            assert_int_equal(m->nfragments, NFILES);
            long here = 0;
            for (size_t i = 0; i < m->nfragments; i++) {
                char key[512], path[768];
                assert_int_equal(og_index_file_key(key, sizeof key, og_tableview_dir(v), &m->fragments[i], fid, d),
                                 OG_OK);
                snprintf(path, sizeof path, "%s/%s", F->uri, key);
                (*slots)++;
                struct stat sb;
                if (stat(path, &sb) != 0) continue;
                if (check_whole(d, p, (int)i, &m->fragments[i], path)) {
                    here++;
                } else {
                    if (!allow_torn) fail_msg("%s: present but not whole", path);
                    (*torn)++;
                }
            }
            if (covered_of(rep, p->name) != here)
                fail_msg("%s.%s: status covers %ld, %ld whole files present", kind, p->name, covered_of(rep, p->name),
                         here);
            whole += (size_t)here;
        }
    }
    og_read_end(r);
    assert_int_equal(json_integer_value(json_object_get(rep, "files")), *slots);
    assert_int_equal(json_integer_value(json_object_get(rep, "covered")), whole);
    json_decref(rep);
    assert_int_equal(kind_files(kind), whole + *torn);
    return whole;
}

/* Truncates every index file of `kind` (a torn write): the first half of one, all but the
 * trailer of the next, and so on. */
static void tear_files(const char *kind)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "find '%s/_index' -type f -name '%s-*' | sort", F->uri, kind);
    FILE *p = popen(cmd, "r");
    char path[768];
    int i = 0;
    while (p && fgets(path, sizeof path, p)) {
        path[strcspn(path, "\n")] = 0;
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        off_t to = i++ % 2 ? sb.st_size / 2 : sb.st_size - 8;
        assert_int_equal(truncate(path, to), 0);
    }
    if (p) pclose(p);
    assert_true(i > 0);
}

/* Before each child: no index file at all, or (torn) every file of `kind` built and torn. */
static void prepare(const char *kind, int torn)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/_index'", F->uri);
    assert_int_equal(system(cmd), 0);
    if (!torn) return;
    json_decref(run(kind, 1));
    tear_files(kind);
}

/* Runs the build of `kind` in a child with OG_FAULT = fault (or none), its stderr into
 * trace_fd with OG_FAULT_TRACE=1 when trace_fd >= 0; returns the child's exit code. */
static int child_build(const char *kind, const char *fault, int trace_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (trace_fd >= 0) {
            dup2(trace_fd, 2);
            setenv("OG_FAULT_TRACE", "1", 1);
        }
        if (fault) setenv("OG_FAULT", fault, 1);
        og_index_run_opts o = {NULL, kind, NULL, 1};
        json_t *rep;
        _exit(og_engine_index_run(F->e, &o, &rep) == OG_OK ? 0 : 3);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    return WEXITSTATUS(ws);
}

/* The fault points a whole build of `kind` passes, with how often. */
static size_t discover(const char *kind, int torn, char names[MAX_POINTS][64], int passes[MAX_POINTS])
{
    prepare(kind, torn);
    char path[128];
    snprintf(path, sizeof path, "%s/trace-XXXXXX", F->dir);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(child_build(kind, NULL, fd), 0);
    close(fd);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = 0;
    char line[256];
    while (fgets(line, sizeof line, fp)) {
        char name[64];
        if (sscanf(line, "og_fault_point: %63s", name) != 1) continue;
        size_t i = 0;
        while (i < n && strcmp(names[i], name)) i++;
        if (i == n) {
            assert_true(n < MAX_POINTS);
            strcpy(names[n], name);
            passes[n++] = 0;
        }
        passes[i]++;
    }
    fclose(fp);
    unlink(path);
    return n;
}

static int passes_of(char names[MAX_POINTS][64], const int passes[MAX_POINTS], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return passes[i];
    return 0;
}

/* The test of one kind: killed at every pass of every point, from no files or from torn ones. */
static void killed_anywhere(const char *kind, size_t nprops)
{
    char want[16384], got[16384];
    truth(want, sizeof want);
    assert_true(strlen(want) < sizeof want - 1); /* not cut short */
    answers(got, sizeof got); /* no file yet: the same, trivially */
    assert_string_equal(got, want);
    size_t nfiles = NFILES * nprops;
    for (int torn = 0; torn < 2; torn++) {
        char names[MAX_POINTS][64];
        int passes[MAX_POINTS];
        size_t np = discover(kind, torn, names, passes);
        for (size_t i = 0; i < np; i++)
            print_message("%s build (%s): %s passed %d times\n", kind, torn ? "torn" : "fresh", names[i], passes[i]);
        /* the points every build passes once per file it writes */
        assert_int_equal(passes_of(names, passes, np, "index.build.after_file"), nfiles);
        assert_int_equal(passes_of(names, passes, np, "store.put.before_publish"), nfiles);
        assert_int_equal(passes_of(names, passes, np, "store.put.after_write"), nfiles);
        size_t slots, ntorn;
        if (torn) { /* torn files are refused: no coverage, the answers of no index */
            prepare(kind, 1);
            assert_int_equal(check_files(kind, 1, &slots, &ntorn), 0);
            assert_int_equal(ntorn, nfiles);
            answers(got, sizeof got);
            assert_string_equal(got, want);
        }
        for (size_t i = 0; i < np; i++) {
            for (int k = 1; k <= passes[i]; k++) {
                prepare(kind, torn);
                char fault[96];
                snprintf(fault, sizeof fault, "%s#%d", names[i], k);
                int code = child_build(kind, fault, -1);
                if (code != OG_FAULT_EXIT_CODE)
                    fail_msg("%s (%s): child exited %d", fault, torn ? "torn" : "fresh", code);
                size_t present = check_files(kind, torn, &slots, &ntorn);
                assert_int_equal(slots, nfiles);
                assert_true(present + ntorn <= nfiles);
                /* after its k-th file a build has published k files, before it k - 1 */
                if (!strcmp(names[i], "index.build.after_file")) assert_int_equal(present, (size_t)k);
                if (!strcmp(names[i], "store.put.before_publish") || !strcmp(names[i], "store.put.after_write"))
                    assert_int_equal(present, (size_t)k - 1);
                uint64_t u0 = uses(kind);
                answers(got, sizeof got);
                if (strcmp(got, want)) fail_msg("%s (%s), %zu files: answers differ\n got %s\nwant %s", fault,
                                                torn ? "torn" : "fresh", present, got, want);
                if (present) assert_true(uses(kind) > u0); /* the files present were read */
                json_t *rep = run(kind, 1);
                assert_int_equal(json_integer_value(json_object_get(rep, "built")), nfiles - present);
                json_decref(rep);
                assert_int_equal(check_files(kind, 0, &slots, &ntorn), nfiles);
                u0 = uses(kind);
                answers(got, sizeof got);
                assert_string_equal(got, want);
                assert_true(uses(kind) > u0);
            }
        }
    }
}

static void a_vector_build_killed_anywhere_leaves_whole_files(void **state)
{
    (void)state;
    killed_anywhere("vector", 1);
}

static void a_scalar_build_killed_anywhere_leaves_whole_files(void **state)
{
    (void)state;
    killed_anywhere("scalar", 3); /* year (integer keys), score (float), kind (enum: strings) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_vector_build_killed_anywhere_leaves_whole_files, setup, teardown),
        cmocka_unit_test_setup_teardown(a_scalar_build_killed_anywhere_leaves_whole_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
