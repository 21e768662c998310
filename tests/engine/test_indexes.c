/*
 * test_indexes.c — persisted graph indexes are derived (INVARIANTS.md 7): every query answers
 * the same with the index files written by a first reader, opened by a fresh handle, damaged,
 * deleted, or switched off; deleted and re-inserted keys are found in their live rows only; a
 * writer's plan never writes index files (a bulk load writes the key maps and topology of what
 * it loaded after its publish); and a crash right after an index file is published
 * leaves only whole files and correct answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "engine/graph_index.h"
#include "engine/mutate.h"
#include "engine/tableview.h"
#include "fixture.h"
#include "index/csr.h"
#include "index/keymap.h"
#include "util/fault.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32? }\n"
    "edge Knows: Person -> Person\n";

static const char *SEED =
    "{\"type\": \"Person\", \"data\": {\"name\": \"Alice\", \"age\": 30}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Bob\", \"age\": 25}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Charlie\", \"age\": 35}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Diana\", \"age\": 28}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Eve\"}}\n"
    "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Bob\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Charlie\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Bob\", \"to\": \"Diana\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Diana\", \"to\": \"Alice\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Charlie\", \"to\": \"Eve\"}\n";

static const char *READS =
    "query age($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age } }\n"
    "query friends($n: String) { match { $p: Person { name: $n } $p knows $f } return { $f.name, $f.age } order { $f.name } }\n"
    "query reach($n: String) { match { $p: Person { name: $n } $p knows{1,3} $f } return { $f.name } order { $f.name } }\n"
    "query fans($n: String) { match { $p: Person { name: $n } $f knows $p } return { $f.name } order { $f.name } }\n"
    "query people() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n";

static const char *MUTS =
    "query insert_person($name: String, $age: I32) { insert Person { name: $name, age: $age } }\n"
    "query add_friend($from: String, $to: String) { insert Knows { from: $from, to: $to } }\n"
    "query remove_person($name: String) { delete Person where name = $name }\n";

/* Every answer, as one string, under the current index mode and files. */
static void answers(fixture *f, char *out, size_t cap)
{
    static const char *names[] = {"Alice", "Bob", "Charlie", "Diana", "Eve", "Zed"};
    static const char *queries[] = {"age", "friends", "reach", "fans"};
    size_t w = 0;
    out[0] = '\0';
    for (size_t q = 0; q < 4; q++)
        for (size_t n = 0; n < 6; n++) {
            char params[64], got[512];
            snprintf(params, sizeof params, "{\"n\":\"%s\"}", names[n]);
            if (fixture_query(f, queries[q], params, NULL, got, sizeof got) != OG_OK)
                fail_msg("%s(%s): %s", queries[q], names[n], og_error_message());
            w += (size_t)snprintf(out + w, cap - w, "%s(%s)=%s\n", queries[q], names[n], got);
        }
    char got[512];
    if (fixture_query(f, "people", NULL, NULL, got, sizeof got) != OG_OK) fail_msg("people: %s", og_error_message());
    snprintf(out + w, cap - w, "people=%s\n", got);
}

/* A fresh handle on the same graph (an empty cache: what a new process sees). */
static void reopen(fixture *f)
{
    og_engine_close(f->e);
    if (og_engine_open(&f->e, f->uri, NULL) != OG_OK) fail_msg("reopen: %s", og_error_message());
}

/* Counts files under <graph>/_index whose name ends with `suffix`. */
static size_t count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(p, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            n += count_files(p, suffix);
        } else {
            size_t l = strlen(e->d_name), s = strlen(suffix);
            if (l >= s && !strcmp(e->d_name + l - s, suffix)) n++;
        }
    }
    closedir(d);
    return n;
}

static size_t index_files(fixture *f, const char *suffix)
{
    char p[160];
    snprintf(p, sizeof p, "%s/_index", f->uri);
    return count_files(p, suffix);
}

static void rm_index(fixture *f)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/_index'", f->uri);
    assert_int_equal(system(cmd), 0);
}

/* Loads `ndjson` (overwrite) flushing every `rows` staged rows (OG_LOAD_FLUSH_ROWS, put back
 * after), so that the load leaves several data files per table. */
static void load_in_batches(fixture *f, const char *ndjson, const char *rows)
{
    const char *was = getenv("OG_LOAD_FLUSH_ROWS");
    char saved[32];
    snprintf(saved, sizeof saved, "%s", was ? was : "");
    setenv("OG_LOAD_FLUSH_ROWS", rows, 1);
    assert_int_equal(fixture_load(f, ndjson, OG_LOAD_OVERWRITE, NULL), OG_OK);
    if (was)
        setenv("OG_LOAD_FLUSH_ROWS", saved, 1);
    else
        unsetenv("OG_LOAD_FLUSH_ROWS");
}

static og_status mut(fixture *f, const char *name, const char *params)
{
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_write_result res;
    og_status st = og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), name, pj, NULL, &res, NULL);
    json_decref(pj);
    return st;
}

static int setup(void **state)
{
    /* the seed is loaded with index files read-only, so the graph starts without any (a load
     * writes the key maps and topology of what it loaded: the last test below) */
    og_tableview_set_index_mode(1);
    fixture *f = fixture_new(SCHEMA, READS);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    og_tableview_set_index_mode(2);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    og_tableview_set_index_mode(2);
    fixture_free(*state);
    return 0;
}

static void answers_do_not_depend_on_index_files(void **state)
{
    fixture *f = *state;
    char want[8192], got[8192];
    /* a load with index files read-only wrote none */
    assert_int_equal(index_files(f, ".v1") + index_files(f, ".csr"), 0);
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    assert_non_null(strstr(want, "friends(Alice)=Bob|25;Charlie|35\n"));
    assert_non_null(strstr(want, "reach(Alice)=Bob;Charlie;Diana;Eve\n"));
    assert_non_null(strstr(want, "age(Eve)=Eve|null\n"));
    assert_non_null(strstr(want, "age(Zed)=\n"));
    assert_int_equal(index_files(f, ".v1") + index_files(f, ".csr"), 0);

    /* a first reader writes them ... */
    og_tableview_set_index_mode(2);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(index_files(f, "keymap.v1"), 1);
    assert_int_equal(index_files(f, ".csr"), 1);
    /* ... a fresh handle answers from them ... */
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    /* ... read-only mode uses them without writing ... */
    og_tableview_set_index_mode(1);
    rm_index(f);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(index_files(f, ".v1") + index_files(f, ".csr"), 0);
    /* ... and deleting them changes nothing */
    og_tableview_set_index_mode(2);
    reopen(f);
    answers(f, got, sizeof got);
    rm_index(f);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
}

/* og_engine_graph_index_build (what optimize runs) writes every key map and topology of the
 * head ahead of the first query, writes nothing in read-only mode, and changes no answer. */
static void graph_index_build_writes_the_heads_files_ahead_of_queries(void **state)
{
    fixture *f = *state;
    char want[8192], got[8192];
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    og_graph_index_report rep;
    assert_int_equal(og_engine_graph_index_build(f->e, NULL, &rep), OG_OK); /* off: nothing */
    assert_int_equal(rep.node_tables + rep.edge_types, 0);
    og_tableview_set_index_mode(1);
    assert_int_equal(og_engine_graph_index_build(f->e, NULL, &rep), OG_OK); /* read only: nothing */
    assert_int_equal(index_files(f, ".v1") + index_files(f, ".csr"), 0);
    og_tableview_set_index_mode(2);
    reopen(f);
    assert_int_equal(og_engine_graph_index_build(f->e, NULL, &rep), OG_OK);
    assert_int_equal(rep.node_tables, 1);
    assert_int_equal(rep.edge_types, 1);
    assert_int_equal(index_files(f, "keymap.v1"), 1);
    assert_int_equal(index_files(f, ".csr"), 1);
    /* a fresh handle in read-only mode answers from them, the same */
    og_tableview_set_index_mode(1);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    /* a new head (one more node, one more edge): its new data file and versions get theirs */
    og_tableview_set_index_mode(2);
    assert_int_equal(mut(f, "insert_person", "{\"name\": \"Zed\", \"age\": 9}"), OG_OK);
    assert_int_equal(mut(f, "add_friend", "{\"from\": \"Zed\", \"to\": \"Alice\"}"), OG_OK);
    assert_int_equal(og_engine_graph_index_build(f->e, NULL, &rep), OG_OK);
    assert_int_equal(index_files(f, "keymap.v1"), 2);
    assert_int_equal(index_files(f, ".csr"), 2);
    assert_int_equal(og_engine_graph_index_build(f->e, "nope", &rep), OG_ERR_NOT_FOUND);
}

/* A load whose types' new images are exactly the rows it staged (an overwrite, or into empty
 * tables) writes, right after its publish, the key map of every node data file it wrote and
 * the topology of every edge type — the topology from the endpoint rows its RI check found —
 * so a fresh handle's first lookup and traversal open them and build nothing; the answers are
 * those without any index file.  Over several flushed fragments too.  A load in read-only
 * mode writes none, and a merge load into a non-empty table leaves the new triple's topology
 * to the readers (composed), with the same answers. */
static void a_bulk_load_writes_the_key_maps_and_topology_its_first_query_opens(void **state)
{
    fixture *f = *state;
    char want[8192], got[8192];
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    assert_int_equal(index_files(f, ".v1") + index_files(f, ".csr"), 0);

    og_tableview_set_index_mode(2);
    load_in_batches(f, SEED, "2"); /* 5 people: 3 data files; 5 edges: 3 */
    assert_int_equal(index_files(f, "keymap.v1"), 3);
    assert_int_equal(index_files(f, ".csr"), 1);
    og_tableview_set_index_mode(1); /* read them, write nothing */
    reopen(f);
    size_t before = og_tableview_whole_reads();
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    size_t load_reads = og_tableview_whole_reads() - before;
    assert_int_equal(index_files(f, "keymap.v1"), 3);
    /* as little whole-table work as over the files optimize's index build writes (the
     * `people` scan's columns only): no key map or topology was built */
    rm_index(f);
    og_tableview_set_index_mode(2);
    reopen(f);
    og_graph_index_report rep;
    assert_int_equal(og_engine_graph_index_build(f->e, NULL, &rep), OG_OK);
    og_tableview_set_index_mode(1);
    reopen(f);
    before = og_tableview_whole_reads();
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(og_tableview_whole_reads() - before, load_reads);

    /* read-only: a load writes no index file */
    rm_index(f);
    assert_int_equal(fixture_load(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    assert_int_equal(index_files(f, ".v1") + index_files(f, ".csr"), 0);

    /* a merge into the non-empty tables: key maps of the new data files, no topology */
    og_tableview_set_index_mode(2);
    assert_int_equal(fixture_load(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    assert_int_equal(index_files(f, ".csr"), 1);
    assert_int_equal(fixture_load(f,
                                  "{\"type\": \"Person\", \"data\": {\"name\": \"Zed\", \"age\": 9}}\n"
                                  "{\"edge\": \"Knows\", \"from\": \"Zed\", \"to\": \"Alice\"}\n",
                                  OG_LOAD_MERGE, NULL),
                     OG_OK);
    assert_int_equal(index_files(f, ".csr"), 1);
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    assert_non_null(strstr(want, "fans(Alice)=Diana;Zed\n"));
    og_tableview_set_index_mode(2);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
}

/* After a commit that only appends (a node and an edge), the next process composes the new
 * topology from the persisted one plus the new edges — nothing built, nothing written — with
 * the same answers as a full build, and so does every process after it; after a commit with a
 * deletion too.  The index build (what optimize runs) then writes the head's own file, built
 * as a delta, which the next process maps. */
static void appended_edges_compose_with_the_persisted_topology(void **state)
{
    fixture *f = *state;
    char want[8192], got[8192];
    og_tableview_set_index_mode(2);
    reopen(f);
    answers(f, got, sizeof got); /* writes the key map and the topology */
    assert_int_equal(index_files(f, ".csr"), 1);
    assert_int_equal(mut(f, "insert_person", "{\"name\": \"Zed\", \"age\": 9}"), OG_OK);
    assert_int_equal(mut(f, "add_friend", "{\"from\": \"Eve\", \"to\": \"Zed\"}"), OG_OK);
    assert_int_equal(mut(f, "add_friend", "{\"from\": \"Zed\", \"to\": \"Alice\"}"), OG_OK);
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want); /* full builds in memory, no files */
    assert_non_null(strstr(want, "reach(Charlie)=Alice;Eve;Zed\n"));
    assert_non_null(strstr(want, "fans(Alice)=Diana;Zed\n"));
    og_tableview_set_index_mode(2);
    reopen(f);
    size_t deltas = og_tableview_delta_topologies(), composed = og_tableview_composed_topologies();
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(og_tableview_composed_topologies(), composed + 1);
    assert_int_equal(og_tableview_delta_topologies(), deltas);
    assert_int_equal(index_files(f, ".csr"), 1);
    reopen(f); /* the next process composes again */
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(og_tableview_composed_topologies(), composed + 2);
    /* a deletion renumbers rows (a node and its edges cascade): composed too, the old rows
     * translated through the fragments both versions hold (tests/engine/test_topology_delta.c
     * covers updates, compactions and merges) */
    assert_int_equal(mut(f, "remove_person", "{\"name\": \"Bob\"}"), OG_OK);
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    og_tableview_set_index_mode(2);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(og_tableview_composed_topologies(), composed + 3);
    assert_int_equal(index_files(f, ".csr"), 1);
    /* the index build writes the head's own file (a delta from the persisted one) */
    og_graph_index_report rep;
    assert_int_equal(og_engine_graph_index_build(f->e, NULL, &rep), OG_OK);
    assert_int_equal(og_tableview_delta_topologies(), deltas + 1);
    assert_int_equal(index_files(f, ".csr"), 2);
    reopen(f); /* which the next process maps */
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    assert_int_equal(og_tableview_composed_topologies(), composed + 3);
    assert_int_equal(og_tableview_delta_topologies(), deltas + 1);
}

/* Replaces every file under dir ending in suffix with `bytes` (len). */
static void clobber(const char *dir, const char *suffix, const void *bytes, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(p, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            clobber(p, suffix, bytes, len);
            continue;
        }
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (l < s || strcmp(e->d_name + l - s, suffix)) continue;
        FILE *fp = fopen(p, "wb");
        assert_non_null(fp);
        fwrite(bytes, 1, len, fp);
        fclose(fp);
    }
    closedir(d);
}

static void damaged_or_foreign_index_files_are_not_trusted(void **state)
{
    fixture *f = *state;
    char want[8192], got[8192];
    answers(f, want, sizeof want); /* writes the files */
    char idx[160];
    snprintf(idx, sizeof idx, "%s/_index", f->uri);
    /* garbage */
    clobber(idx, ".v1", "garbage", 7);
    clobber(idx, ".csr", "garbage", 7);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    /* a well-formed keymap of another file (two rows where the data file has five) */
    og_vector ids;
    assert_int_equal(og_vector_init(&ids, (og_type){OG_T_STRING, OG_T_NULL, 0}), OG_OK);
    assert_int_equal(og_vector_append_bytes(&ids, "x", 1), OG_OK);
    assert_int_equal(og_vector_append_bytes(&ids, "y", 1), OG_OK);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_keymap_encode(&ids, &b), OG_OK);
    clobber(idx, ".v1", b.data, b.len);
    og_buf_free(&b);
    og_vector_free(&ids);
    /* a well-formed topology of other versions (1 node each side, no edges) */
    uint64_t off[2] = {0, 0};
    og_csr_arrays a = {1, 1, 0, 0, {off, off}, {NULL, NULL}, {NULL, NULL}};
    assert_int_equal(og_csr_encode(&a, &b), OG_OK);
    clobber(idx, ".csr", b.data, b.len);
    og_buf_free(&b);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
}

static void deleted_and_reinserted_keys_follow_the_version(void **state)
{
    fixture *f = *state;
    char got[8192];
    answers(f, got, sizeof got); /* index files of the loaded versions */
    reopen(f);
    /* Bob deleted (a deletion vector on the first fragment, edges cascade), Alice re-inserted
     * (the old row deleted, the new one in a new fragment), Frank added */
    assert_int_equal(mut(f, "remove_person", "{\"name\":\"Bob\"}"), OG_OK);
    assert_int_equal(mut(f, "insert_person", "{\"name\":\"Alice\",\"age\":99}"), OG_OK);
    assert_int_equal(mut(f, "insert_person", "{\"name\":\"Frank\",\"age\":40}"), OG_OK);
    assert_int_equal(mut(f, "add_friend", "{\"from\":\"Frank\",\"to\":\"Alice\"}"), OG_OK);
    char want[8192];
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    assert_non_null(strstr(want, "age(Bob)=\n"));
    assert_non_null(strstr(want, "age(Alice)=Alice|99\n"));
    assert_non_null(strstr(want, "friends(Alice)=Charlie|35\n"));
    assert_non_null(strstr(want, "fans(Alice)=Diana;Frank\n"));
    og_tableview_set_index_mode(2);
    for (int pass = 0; pass < 2; pass++) { /* building, then from the files */
        reopen(f);
        answers(f, got, sizeof got);
        assert_string_equal(got, want);
    }
    /* one keymap per data file: the new fragments added maps, the old ones were reused */
    assert_true(index_files(f, "keymap.v1") >= 3);
}

static void a_crash_after_publishing_an_index_file_leaves_whole_files(void **state)
{
    fixture *f = *state;
    char want[8192], got[8192];
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    og_tableview_set_index_mode(2);
    static const char *points[] = {"index.after_keymap", "index.after_topology", "store.put.before_publish"};
    for (size_t i = 0; i < 3; i++) {
        rm_index(f);
        og_engine_close(f->e);
        f->e = NULL;
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            setenv("OG_FAULT", points[i], 1);
            og_engine *e;
            if (og_engine_open(&e, f->uri, NULL) != OG_OK) _exit(1);
            f->e = e;
            answers(f, got, sizeof got);
            _exit(0);
        }
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        assert_true(WIFEXITED(ws));
        assert_int_equal(WEXITSTATUS(ws), OG_FAULT_EXIT_CODE);
        if (i == 0) assert_int_equal(index_files(f, "keymap.v1"), 1);
        if (i == 1) assert_int_equal(index_files(f, ".csr"), 1);
        if (og_engine_open(&f->e, f->uri, NULL) != OG_OK) fail_msg("reopen: %s", og_error_message());
        answers(f, got, sizeof got); /* whatever the crash left is whole: same answers */
        assert_string_equal(got, want);
        reopen(f);
        answers(f, got, sizeof got);
        assert_string_equal(got, want);
    }
}

/* Runs cmd (a shell command over the graph directory) and checks it succeeded. */
static void shell(fixture *f, const char *fmt)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, fmt, f->uri);
    assert_int_equal(system(cmd), 0);
}

/* A bulk load of many node batches writes one run map of them all (index/keymap.h "Run
 * maps") beside the fragments' own maps; a fresh process's key lookups answer from it alone
 * (with the fragments' own maps deleted and index files read-only, no map is built from the
 * data), and alike after deletions, a re-insert and appends (fragments it does not cover), and
 * with the run map damaged or naming other files. */
static void a_run_map_answers_lookups_for_the_fragments_it_covers(void **state)
{
    fixture *f = *state;
    char want[8192], got[8192];
    char seed[4096];
    int w = snprintf(seed, sizeof seed, "%s", SEED);
    for (int i = 0; i < 5; i++)
        w += snprintf(seed + w, sizeof seed - (size_t)w,
                      "{\"type\": \"Person\", \"data\": {\"name\": \"P%d\", \"age\": %d}}\n"
                      "{\"edge\": \"Knows\", \"from\": \"P%d\", \"to\": \"Eve\"}\n", i, 50 + i, i);
    og_tableview_set_index_mode(2);
    load_in_batches(f, seed, "1"); /* 5 people + 5 more: 10 data files */
    assert_int_equal(index_files(f, "keyrun.v1"), 1);
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    assert_non_null(strstr(want, "fans(Eve)=Charlie;P0;P1;P2;P3;P4\n"));
    /* from the run map alone: no per-fragment map to open, none built */
    shell(f, "find '%s/_index' -name keymap.v1 -delete");
    og_tableview_set_index_mode(1);
    reopen(f);
    size_t before = og_tableview_whole_reads();
    for (int i = 0; i < 5; i++) {
        char params[64], row[128];
        snprintf(params, sizeof params, "{\"n\":\"%s\"}", i < 4 ? (const char *[]){"Alice", "Eve", "P4", "Zed"}[i] : "P0");
        assert_int_equal(fixture_query(f, "age", params, NULL, row, sizeof row), OG_OK);
    }
    assert_int_equal(og_tableview_whole_reads() - before, 0);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);

    /* deletions in covered fragments, a re-insert (its old row covered and deleted, its new one
     * appended), an appended node: the run map for the first, the new fragments' own maps */
    og_tableview_set_index_mode(2);
    assert_int_equal(mut(f, "remove_person", "{\"name\":\"Bob\"}"), OG_OK);
    assert_int_equal(mut(f, "insert_person", "{\"name\":\"Alice\",\"age\":99}"), OG_OK);
    assert_int_equal(mut(f, "insert_person", "{\"name\":\"Frank\",\"age\":40}"), OG_OK);
    assert_int_equal(mut(f, "add_friend", "{\"from\":\"Frank\",\"to\":\"P3\"}"), OG_OK);
    og_tableview_set_index_mode(0);
    reopen(f);
    answers(f, want, sizeof want);
    assert_non_null(strstr(want, "age(Alice)=Alice|99\n"));
    assert_non_null(strstr(want, "age(Bob)=\n"));
    og_tableview_set_index_mode(2);
    for (int pass = 0; pass < 2; pass++) {
        reopen(f);
        answers(f, got, sizeof got);
        assert_string_equal(got, want);
    }
    assert_int_equal(index_files(f, "keyrun.v1"), 1);

    /* a damaged run map, then a well-formed one of other files: never trusted */
    char idx[160];
    snprintf(idx, sizeof idx, "%s/_index", f->uri);
    clobber(idx, "keyrun.v1", "garbage", 7);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
    og_vector ids;
    assert_int_equal(og_vector_init(&ids, (og_type){OG_T_STRING, OG_T_NULL, 0}), OG_OK);
    assert_int_equal(og_vector_append_bytes(&ids, "Alice", 5), OG_OK);
    og_buf b = OG_BUF_INIT, rb = OG_BUF_INIT;
    assert_int_equal(og_keymap_encode(&ids, &b), OG_OK);
    og_keymap *one = NULL;
    assert_int_equal(og_keymap_open_bytes(&one, b.data, b.len, NULL, NULL), OG_OK);
    og_keymap_frag other = {1, 1, 12345};
    assert_int_equal(og_keymap_encode_run(&one, &other, 1, &rb), OG_OK);
    clobber(idx, "keyrun.v1", rb.data, rb.len);
    og_keymap_free(one);
    og_buf_free(&b);
    og_buf_free(&rb);
    og_vector_free(&ids);
    reopen(f);
    answers(f, got, sizeof got);
    assert_string_equal(got, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(answers_do_not_depend_on_index_files, setup, teardown),
        cmocka_unit_test_setup_teardown(graph_index_build_writes_the_heads_files_ahead_of_queries, setup, teardown),
        cmocka_unit_test_setup_teardown(appended_edges_compose_with_the_persisted_topology, setup, teardown),
        cmocka_unit_test_setup_teardown(damaged_or_foreign_index_files_are_not_trusted, setup, teardown),
        cmocka_unit_test_setup_teardown(deleted_and_reinserted_keys_follow_the_version, setup, teardown),
        cmocka_unit_test_setup_teardown(a_crash_after_publishing_an_index_file_leaves_whole_files, setup, teardown),
        cmocka_unit_test_setup_teardown(a_bulk_load_writes_the_key_maps_and_topology_its_first_query_opens, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_run_map_answers_lookups_for_the_fragments_it_covers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
