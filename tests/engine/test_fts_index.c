/*
 * test_fts_index.c — persisted full-text indexes end to end (engine/index_build.h,
 * docs/indexes.md): `index status|build` count the data files per property; a second build
 * writes nothing; the query path really reads the files (a valid file with other content
 * changes an answer); a damaged file is ignored (same answers as without any file) and
 * rebuilt by the next build; a build killed at any fault point leaves every file absent or
 * whole, and the next build completes it.  Without files, a data file is analysed once per
 * process and cached (search.c): later queries read the cache, an update (a new deletion
 * file) is never answered from the stale entry, and an old commit still gets its own rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "engine/index_build.h"
#include "engine/mutate.h"
#include "engine/search.h"
#include "engine/tableview.h"
#include "fixture.h"
#include "index/fts.h"
#include "util/fault.h"

static const char *SCHEMA = "node Doc { slug: String @key  body: String? @index  n: I32 }\n";

static const char *DATA1 =
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"graph databases store graphs\",\"n\":1}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"the quick brown fox\",\"n\":2}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"n\":3}}\n";
static const char *DATA2 =
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d\",\"body\":\"a graph of foxes\",\"n\":4}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"e\",\"body\":\"state of the art graph search\",\"n\":5}}\n";

static const char *QUERIES =
    "query rank($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } }\n"
    "query s($q: String) { match { $d: Doc  search($d.body, $q) } return { $d.slug } order { $d.slug } }\n"
    "query ph($q: String) { match { $d: Doc  match_text($d.body, $q) } return { $d.slug } order { $d.slug } }\n"
    "query fz($q: String) { match { $d: Doc  fuzzy($d.body, $q, 1) } return { $d.slug } order { $d.slug } }\n";

static fixture *F;
static og_write_result W; /* setup's last load: its commit */

static int setup(void **state)
{
    (void)state;
    og_tableview_set_index_mode(2);
    F = fixture_new(SCHEMA, QUERIES);
    if (!F || fixture_load(F, DATA1, OG_LOAD_OVERWRITE, &W) != OG_OK || fixture_load(F, DATA2, OG_LOAD_APPEND, &W) != OG_OK) {
        fprintf(stderr, "setup: %s\n", og_error_message());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_free(F);
    og_tableview_set_index_mode(2);
    return 0;
}

/* Runs the reconciler on Doc.body and returns its totals. */
static void run(int build, long *files, long *covered, long *built)
{
    og_index_run_opts o = {NULL, NULL, "Doc.body", build};
    json_t *rep;
    if (og_engine_index_run(F->e, &o, &rep) != OG_OK) fail_msg("index run: %s", og_error_message());
    *files = (long)json_integer_value(json_object_get(rep, "files"));
    *covered = (long)json_integer_value(json_object_get(rep, "covered"));
    *built = (long)json_integer_value(json_object_get(rep, "built"));
    json_t *ix = json_array_get(json_object_get(rep, "indexes"), 0);
    assert_string_equal(json_string_value(json_object_get(ix, "kind")), "fts");
    assert_string_equal(json_string_value(json_object_get(ix, "type")), "Doc");
    json_decref(rep);
}

/* Every answer of the queries, one string. */
static void answers(char *out, size_t cap)
{
    static const char *calls[][2] = {{"rank", "{\"q\": \"graph fox\"}"}, {"s", "{\"q\": \"graph\"}"},
                                     {"ph", "{\"q\": \"state of the art\"}"}, {"fz", "{\"q\": \"grap\"}"},
                                     {"rank", "{\"q\": \"the\"}"}};
    out[0] = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char one[1024];
        if (fixture_query(F, calls[i][0], calls[i][1], NULL, one, sizeof one) != OG_OK)
            fail_msg("%s: %s", calls[i][0], og_error_message());
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s[%s]", l ? " " : "", one);
    }
}

/* Paths of the fts files under the graph (up to 8). */
static size_t fts_files(char paths[8][512])
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "find '%s/_index' -name 'fts-*.v1' 2>/dev/null | sort", F->uri);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    while (p && n < 8 && fgets(paths[n], 512, p)) {
        paths[n][strcspn(paths[n], "\n")] = 0;
        n++;
    }
    if (p) pclose(p);
    return n;
}

static void status_and_build_count_data_files(void **state)
{
    (void)state;
    long files, covered, built;
    run(0, &files, &covered, &built);
    assert_int_equal(files, 2);
    assert_int_equal(covered, 0);
    assert_int_equal(built, 0);
    run(1, &files, &covered, &built);
    assert_int_equal(covered, 2);
    assert_int_equal(built, 2);
    run(1, &files, &covered, &built); /* nothing left to do */
    assert_int_equal(built, 0);
    assert_int_equal(covered, 2);
    char paths[8][512];
    assert_int_equal(fts_files(paths), 2);
    /* a third load adds one uncovered data file */
    og_write_result w;
    assert_int_equal(fixture_load(F, "{\"type\":\"Doc\",\"data\":{\"slug\":\"f\",\"body\":\"graph\",\"n\":6}}\n",
                                  OG_LOAD_APPEND, &w), OG_OK);
    run(0, &files, &covered, &built);
    assert_int_equal(files, 3);
    assert_int_equal(covered, 2);
    /* filters */
    og_index_run_opts bad = {NULL, "nope", NULL, 0};
    json_t *rep = NULL;
    assert_int_equal(og_engine_index_run(F->e, &bad, &rep), OG_ERR_INVALID);
    og_index_run_opts none = {NULL, "fts", "Doc.n", 0};
    assert_int_equal(og_engine_index_run(F->e, &none, &rep), OG_ERR_NOT_FOUND);
    og_index_run_opts nob = {"nobranch", NULL, NULL, 0};
    assert_int_equal(og_engine_index_run(F->e, &nob, &rep), OG_ERR_NOT_FOUND);
    assert_null(rep);
    og_error_clear();
}

/* Overwrites the file at path with bytes. */
static void put_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void the_query_path_reads_the_files_and_ignores_damaged_ones(void **state)
{
    (void)state;
    char want[4096], got[4096];
    og_tableview_set_index_mode(0);
    answers(want, sizeof want);
    og_tableview_set_index_mode(2);
    long files, covered, built;
    run(1, &files, &covered, &built);
    answers(got, sizeof got);
    assert_string_equal(got, want);
    char paths[8][512];
    assert_int_equal(fts_files(paths), 2);
    /* which file is the 3-row one (a, b, c)? */
    size_t three = 0;
    for (size_t i = 0; i < 2; i++) {
        og_buf b = OG_BUF_INIT;
        if (og_buf_read_file(&b, paths[i]) != OG_OK) fail_msg("read %s", paths[i]);
        og_fts *f;
        assert_int_equal(og_fts_open_bytes(&f, b.data, b.len, b.data, NULL), OG_OK);
        if (og_fts_rows(f) == 3) three = i;
        og_fts_free(f);
    }
    /* a valid index of OTHER text for the 3-row file: the answers follow it, so it is read */
    og_analyzer *an;
    assert_int_equal(og_analyzer_new(&an, NULL), OG_OK);
    og_vector v;
    assert_int_equal(og_vector_init(&v, (og_type){OG_T_STRING, OG_T_NULL, 0}), OG_OK);
    const char *other[] = {"zebra", "zebra", "zebra"};
    for (size_t i = 0; i < 3; i++) assert_int_equal(og_vector_append_bytes(&v, other[i], strlen(other[i])), OG_OK);
    og_buf fake = OG_BUF_INIT;
    assert_int_equal(og_fts_encode_vector(an, &v, &fake), OG_OK);
    og_vector_free(&v);
    og_analyzer_free(an);
    og_buf orig = OG_BUF_INIT;
    assert_int_equal(og_buf_read_file(&orig, paths[three]), OG_OK);
    put_file(paths[three], fake.data, fake.len);
    char one[1024];
    assert_int_equal(fixture_query(F, "s", "{\"q\": \"zebra\"}", NULL, one, sizeof one), OG_OK);
    assert_string_equal(one, "a;b;c");
    og_buf_free(&fake);
    /* damaged: truncated, garbage postings, another analyzer: ignored, same answers */
    for (int k = 0; k < 3; k++) {
        og_buf d = OG_BUF_INIT;
        assert_int_equal(og_buf_append(&d, orig.data, orig.len), OG_OK);
        if (k == 0) d.len /= 2;
        if (k == 1) { /* the postings streams (after header, lengths, dict and terms): garbage */
            uint64_t rows, nterms, blob;
            memcpy(&rows, d.data + 16, 8);
            memcpy(&nterms, d.data + 24, 8);
            memcpy(&blob, d.data + 32, 8);
            size_t at = 96 + ((rows * 4 + 7) & ~7ull) + nterms * 40 + ((blob + 7) & ~7ull);
            assert_true(at + 8 < d.len);
            for (size_t i = at; i + 8 < d.len; i++) d.data[i] = 0xff;
        }
        if (k == 2) d.data[12] ^= 0x40;
        put_file(paths[three], d.data, d.len);
        og_buf_free(&d);
        answers(got, sizeof got);
        assert_string_equal(got, want);
        if (k != 1) { /* a header-level damage is seen by status and repaired by build */
            run(0, &files, &covered, &built);
            assert_int_equal(covered, 1);
            run(1, &files, &covered, &built);
            assert_int_equal(built, 1);
            assert_int_equal(covered, 2);
        }
    }
    og_buf_free(&orig);
    /* deletions on an indexed file and an update: still the same as without files */
    const char *mq = "query del($s: String) { delete Doc where slug = $s }\n";
    json_t *pj = json_pack("{s:s}", "s", "a");
    og_mutate_opts mo = {NULL, NULL};
    og_write_result w;
    assert_int_equal(og_engine_mutate(F->e, "m.gq", mq, strlen(mq), "del", pj, &mo, &w, NULL), OG_OK);
    json_decref(pj);
    answers(got, sizeof got);
    og_tableview_set_index_mode(0);
    answers(want, sizeof want);
    og_tableview_set_index_mode(2);
    assert_string_equal(got, want);
    assert_null(strstr(got, "a|"));
}

static void the_analysis_cache_serves_later_queries_and_respects_updates(void **state)
{
    (void)state;
    char a1[8192], a2[8192], a3[8192], a4[8192], old[1024], old2[1024];
    answers(a1, sizeof a1); /* no index files: analyses both data files and caches them */
    uint64_t h0 = og_search_text_cache_hits();
    answers(a2, sizeof a2);
    assert_string_equal(a1, a2);
    assert_true(og_search_text_cache_hits() >= h0 + 5); /* every query found its data files cached */
    assert_int_equal(fixture_query(F, "rank", "{\"q\": \"graph fox\"}", NULL, old, sizeof old), OG_OK);
    /* an update: row a's old version is deleted from the first data file (a new deletion file) */
    og_write_result w;
    assert_int_equal(fixture_load(F, "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"only foxes now\",\"n\":1}}\n",
                                  OG_LOAD_MERGE, &w), OG_OK);
    answers(a3, sizeof a3);
    assert_string_not_equal(a1, a3);
    /* the commit before the update still sees its own rows and statistics (the cached entry of
     * the first data file without the deletion) */
    uint64_t h1 = og_search_text_cache_hits();
    assert_int_equal(fixture_query(F, "rank", "{\"q\": \"graph fox\"}", W.commit, old2, sizeof old2), OG_OK);
    assert_string_equal(old, old2);
    assert_true(og_search_text_cache_hits() >= h1 + 2);
    /* the same answers from index files */
    long files, covered, built;
    run(1, &files, &covered, &built);
    assert_int_equal(covered, files);
    answers(a4, sizeof a4);
    assert_string_equal(a3, a4);
}

static void a_build_killed_anywhere_leaves_whole_files(void **state)
{
    (void)state;
    char want[4096], got[4096];
    og_tableview_set_index_mode(0);
    answers(want, sizeof want);
    og_tableview_set_index_mode(2);
    static const char *points[] = {"index.build.after_file", "store.put.before_publish", "store.put.after_write"};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        assert_int_equal(system("true"), 0);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/_index'", F->uri);
        assert_int_equal(system(cmd), 0);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            setenv("OG_FAULT", points[i], 1);
            og_index_run_opts o = {NULL, "fts", "Doc.body", 1};
            json_t *rep;
            (void)og_engine_index_run(F->e, &o, &rep);
            _exit(0);
        }
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        assert_true(WIFEXITED(ws));
        assert_int_equal(WEXITSTATUS(ws), OG_FAULT_EXIT_CODE);
        /* every file present is whole */
        char paths[8][512];
        size_t n = fts_files(paths);
        assert_true(n <= 1);
        if (i == 0) assert_int_equal(n, 1);
        if (i == 1) assert_int_equal(n, 0);
        long files, covered, built;
        run(0, &files, &covered, &built);
        assert_int_equal(covered, (long)n);
        answers(got, sizeof got);
        assert_string_equal(got, want);
        run(1, &files, &covered, &built);
        assert_int_equal(covered, 2);
        answers(got, sizeof got);
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(status_and_build_count_data_files, setup, teardown),
        cmocka_unit_test_setup_teardown(the_query_path_reads_the_files_and_ignores_damaged_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(a_build_killed_anywhere_leaves_whole_files, setup, teardown),
        cmocka_unit_test_setup_teardown(the_analysis_cache_serves_later_queries_and_respects_updates, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
