/*
 * test_search_defaults.c — search at its defaults, as a user meets it (public C API;
 * docs/search.md "Vector index", docs/indexes.md "Automatic indexing"):
 *
 *   - a load of 1,000+ rows builds the text and vector indexes of its data files right after
 *     the publish, so the next query reads files; `no_index` leaves them to `index build`; a
 *     write below the threshold builds nothing; bm25 and nearest answer the same with the
 *     automatic files, with none (OG_INDEX-off twin: forced exact / no files) and after
 *     `index build`;
 *   - recall@10 of `nearest` through the vector index at the default build parameters and
 *     search beam is at least 0.95 on a seeded data set hard enough that the former beam (64)
 *     gives about 0.91: isotropic Gaussian 64-d vectors, 5,000 of them in one data file; the
 *     per-query beam (og_query_opts.ef) is honoured both ways.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/search_ann.h"
#include "omnigraph.h"

#define DIM 64
#define ROWS 5000
#define NQ 40

static const char SCHEMA[] = "node P { slug: String @key  bio: String @index  emb: Vector(64) @index }\n";
static const char QUERIES[] =
    "query knn($v: Vector(64)) { match { $p: P } return { $p.slug } order { nearest($p.emb, $v) } limit 10 }\n"
    "query text($q: String) { match { $p: P } return { $p.slug, bm25($p.bio, $q) as s } "
    "order { bm25($p.bio, $q), $p.slug } limit 10 }\n"
    "query textall($q: String) { match { $p: P } return { $p.slug, bm25($p.bio, $q) as s } "
    "order { bm25($p.bio, $q), $p.slug } }\n"
    "query textk($q: String) { match { $p: P } return { $p.slug, bm25($p.bio, $q) as s } "
    "order { bm25($p.bio, $q), $p.slug } limit 3 }\n";

static char dir[64];
static og_db *db;
static uint64_t rng;

static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) { return sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand()); }

#define OK(expr)                                                                                   \
    do {                                                                                           \
        og_status ok_st_ = (expr);                                                                 \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message());   \
    } while (0)

static const char *WORDS[] = {"graph", "vector", "search", "index", "river", "stone", "music", "garden",
                              "engine", "pixel", "ocean", "forest", "cloud", "signal", "memory", "harbor"};

/* rows [from, to) as NDJSON: a bio of 6-12 words, a Gaussian vector; loaded with mode / no_index. */
static og_receipt load_rows(size_t from, size_t to, og_load_mode mode, int no_index)
{
    char path[128];
    snprintf(path, sizeof path, "%s/rows-%zu.ndjson", dir, from);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = from; i < to; i++) {
        fprintf(f, "{\"type\":\"P\",\"data\":{\"slug\":\"p%05zu\",\"bio\":\"", i);
        size_t n = 6 + (size_t)(urand() * 7);
        for (size_t k = 0; k < n; k++) fprintf(f, k ? " %s" : "%s", WORDS[(size_t)(urand() * urand() * 16)]);
        fputs("\",\"emb\":[", f);
        for (int d = 0; d < DIM; d++) fprintf(f, d ? ",%.6f" : "%.6f", gauss());
        fputs("]}}\n", f);
    }
    fclose(f);
    og_load_opts lo = {.mode = mode, .no_index = no_index};
    og_receipt r;
    OK(og_db_load(&r, db, path, &lo));
    assert_int_equal(r.index_status, OG_OK);
    return r;
}

static char *run(const char *name, const char *params, int exact, uint32_t ef)
{
    og_rows *rows;
    og_query_opts qo = {.exact = exact, .ef = ef};
    og_status st = og_db_query_ex(&rows, db, QUERIES, strlen(QUERIES), name, params, NULL, &qo);
    if (st) fail_msg("%s: %s", name, og_error_message());
    char *text;
    OK(og_rows_render(&text, NULL, rows, OG_FORMAT_CSV, "main"));
    og_rows_free(rows);
    return text;
}

/* covered / files of the index kind over every indexed property (index status). */
static void coverage(const char *kind, long *covered, long *files)
{
    char *js;
    OK(og_db_index_status(&js, db, NULL, kind, NULL));
    const char *c = strstr(js, "\"covered\":"), *f = strstr(js, "\"files\":");
    assert_non_null(c);
    assert_non_null(f);
    *covered = strtol(c + 10, NULL, 10);
    *files = strtol(f + 8, NULL, 10);
    og_free(js);
}

static int setup(void **state)
{
    (void)state;
    unsetenv("OG_AUTO_INDEX_ROWS");
    unsetenv("OG_INDEX");
    unsetenv("OG_ANN");
    rng = 0x2545f4914f6cdd1dull;
    snprintf(dir, sizeof dir, "/tmp/og-test-sdef-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char uri[128];
    snprintf(uri, sizeof uri, "%s/g", dir);
    og_open_opts oo = {0};
    return og_db_init(&db, uri, "s.pg", SCHEMA, strlen(SCHEMA), &oo) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void vec_params(char *buf, size_t cap)
{
    size_t at = (size_t)snprintf(buf, cap, "{\"v\":[");
    for (int d = 0; d < DIM; d++) at += (size_t)snprintf(buf + at, cap - at, d ? ",%.6f" : "%.6f", gauss());
    snprintf(buf + at, cap - at, "]}");
}

/* recall@10 of the index path (beam ef; 0 = the default) against exact search over NQ queries
 * drawn from the same distribution (a fresh seed per call: the same queries for every ef). */
static double recall(uint32_t ef)
{
    uint64_t saved = rng;
    rng = 0x9e3779b97f4a7c15ull;
    size_t hit = 0, total = 0;
    uint64_t uses = og_search_ann_uses();
    char p[4096];
    for (int q = 0; q < NQ; q++) {
        vec_params(p, sizeof p);
        char *exact0 = run("knn", p, 1, 0), *ann = run("knn", p, 0, ef);
        char *exact = malloc(strlen(exact0) + 2);
        assert_non_null(exact);
        sprintf(exact, "%s\n", exact0); /* every slug line ends with a newline */
        free(exact0);
        /* CSV: a header, then one slug per line; count the ANN slugs the exact list holds */
        for (char *line = strchr(ann, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
            char slug[16];
            if (sscanf(line + 1, "%15[^\n]", slug) != 1) continue;
            char needle[20];
            snprintf(needle, sizeof needle, "\n%s\n", slug);
            hit += strstr(exact, needle) != NULL;
        }
        total += 10;
        free(exact);
        free(ann);
    }
    assert_int_equal(og_search_ann_uses(), uses + NQ); /* every ANN run read the index */
    rng = saved;
    return (double)hit / (double)total;
}

/* A small load builds nothing; a --no-index load builds nothing; a load past the threshold
 * builds the fts and vector files of its data files, and answers stay the exact ones. */
static void indexes_follow_the_data(void **state)
{
    (void)state;
    long cov, files;
    /* fts files: two per data file (slug, a String @key, and bio); vector: one (emb) */
    og_receipt r = load_rows(0, 200, OG_LOAD_OVERWRITE, 0); /* below 1,000 rows */
    assert_int_equal(r.index_files_built, 0);
    coverage("fts", &cov, &files);
    assert_int_equal(cov, 0);
    assert_int_equal(files, 2);
    r = load_rows(200, 2200, OG_LOAD_APPEND, 1); /* --no-index: today's behaviour */
    assert_int_equal(r.index_files_built, 0);
    coverage("vector", &cov, &files);
    assert_int_equal(cov, 0);
    assert_int_equal(files, 2);
    char *before_text = run("text", "{\"q\":\"river garden\"}", 0, 0);
    /* 2,800 more rows: the rows without index files pass 1,000, so every data file of the
     * property is indexed right after this commit (the earlier two included) */
    r = load_rows(2200, ROWS, OG_LOAD_APPEND, 0);
    assert_int_equal(r.index_files_built, 9); /* 3 data files x (2 fts, 1 vector) */
    coverage("fts", &cov, &files);
    assert_int_equal(cov, 6);
    assert_int_equal(files, 6);
    coverage("vector", &cov, &files);
    assert_int_equal(cov, 3);
    assert_int_equal(files, 3);
    /* the index-off twin: the same bm25 answers read from the files and from the rows */
    char *after_text = run("text", "{\"q\":\"river garden\"}", 0, 0);
    setenv("OG_INDEX", "off", 1);
    char *off_text = run("text", "{\"q\":\"river garden\"}", 0, 0);
    unsetenv("OG_INDEX");
    assert_string_equal(after_text, off_text);
    assert_string_not_equal(before_text, after_text); /* the new rows take part */
    free(before_text);
    free(after_text);
    free(off_text);
    /* a one-row write below the threshold probes nothing and builds nothing */
    r = load_rows(ROWS, ROWS + 1, OG_LOAD_APPEND, 0);
    assert_int_equal(r.index_files_built, 0);
    coverage("fts", &cov, &files);
    assert_int_equal(cov, 6);
    assert_int_equal(files, 8);
    /* and `index build` is left nothing but that data file's (2 fts, 1 vector) */
    char *js;
    OK(og_db_index_build(&js, db, NULL, NULL, NULL));
    assert_non_null(strstr(js, "\"built\":3,"));
    og_free(js);
}

/* The default beam reaches recall@10 >= 0.95 where the former one (64) did not; the per-query
 * beam is honoured (a narrow one loses recall, a wide one reaches the exact answer). */
static void default_recall(void **state)
{
    (void)state;
    long cov, files;
    og_receipt r = load_rows(0, ROWS, OG_LOAD_OVERWRITE, 0); /* one data file, indexed on load */
    assert_true(r.index_files_built >= 2);
    coverage("vector", &cov, &files);
    assert_int_equal(cov, 1);
    assert_int_equal(files, 1);
    double def = recall(0), narrow = recall(16), former = recall(64), wide = recall(2000);
    print_message("recall@10: default %.3f, ef 16 %.3f, ef 64 %.3f, ef 2000 %.3f\n", def, narrow, former, wide);
    if (def < 0.95) fail_msg("recall@10 at the defaults %.3f < 0.95", def);
    assert_true(narrow < def);
    assert_true(former < def);
    assert_true(wide >= 0.99);
}

/* The first `lines` lines of text (a CSV header and rows), as a new string. */
static char *head_lines(const char *text, int lines)
{
    const char *e = text;
    for (int i = 0; i < lines && e; i++) e = strchr(e, '\n') ? strchr(e, '\n') + 1 : NULL;
    size_t n = e ? (size_t)(e - text) : strlen(text);
    char *h = malloc(n + 1);
    assert_non_null(h);
    memcpy(h, text, n);
    h[n] = 0;
    return h;
}

/* A bm25 top k (which streams the postings twice and keeps only the rows reaching the k-th
 * score, docs/search.md "Cost") gives the first k rows of the full ordering, scores included:
 * over indexed data files, a file with deleted rows (an upsert), rows no file covers (a small
 * write, analysed in memory) and with every index off; common words make many ties at the cut. */
static void bm25_top_is_the_full_prefix(void **state)
{
    (void)state;
    load_rows(0, 2400, OG_LOAD_OVERWRITE, 0);      /* indexed */
    load_rows(1000, 1100, OG_LOAD_MERGE, 0);       /* replaces 100 rows: deletions in the file */
    load_rows(2400, 2600, OG_LOAD_APPEND, 0);      /* below the threshold: no index file */
    static const char *qs[] = {"graph", "river garden", "ocean signal harbor memory", "search index engine",
                               "the graph", "nothingmatches"};
    for (int pass = 0; pass < 2; pass++) {
        if (pass) setenv("OG_INDEX", "off", 1);
        for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
            char p[128];
            snprintf(p, sizeof p, "{\"q\":\"%s\"}", qs[i]);
            char *all = run("textall", p, 0, 0), *top = run("text", p, 0, 0), *k3 = run("textk", p, 0, 0);
            char *h11 = head_lines(all, 11), *h4 = head_lines(all, 4);
            assert_string_equal(top, h11);
            assert_string_equal(k3, h4);
            if (i < 4) assert_true(strlen(top) > 40); /* these words occur: rows were ranked */
            free(h11);
            free(h4);
            free(all);
            free(top);
            free(k3);
        }
    }
    unsetenv("OG_INDEX");
}

/* A mutation builds the indexes too (docs/indexes.md "Automatic indexing": the check also runs
 * after a write whose automatic compaction published).  990 loaded rows (below the threshold:
 * no file) and then one-row inserts: none builds anything until the small fragments trigger the
 * automatic compaction, whose data file (1,000+ rows) then gets its fts and vector files in that
 * insert's call; bm25 reads them and answers as with OG_INDEX=off (the twin), nearest through
 * them keeps recall@10 >= 0.95 against exact search. */
static void mutations_index_after_compaction(void **state)
{
    (void)state;
    static const char MUT[] =
        "query add($s: String, $b: String, $v: Vector(64)) { insert P { slug: $s, bio: $b, emb: $v } }\n";
    og_receipt r = load_rows(0, 990, OG_LOAD_OVERWRITE, 0);
    assert_int_equal(r.index_files_built, 0);
    size_t at = 0;
    for (size_t i = 0; i < 40 && !at; i++) {
        char p[4096], v[4000];
        vec_params(v, sizeof v); /* {"v":[...]} */
        snprintf(p, sizeof p, "{\"s\":\"m%03zu\",\"b\":\"%s river %s\",%s", i, WORDS[i % 16], WORDS[(i * 5) % 16], v + 1);
        OK(og_db_mutate(&r, db, MUT, strlen(MUT), "add", p, NULL, NULL));
        assert_int_equal(r.affected_nodes, 1);
        assert_int_equal(r.index_status, OG_OK);
        if (r.index_files_built) at = i + 1;
    }
    if (!at) fail_msg("40 one-row inserts built no index file");
    assert_true(at > 1); /* the first inserts built nothing */
    long cov, files, vcov, vfiles;
    coverage("fts", &cov, &files);
    coverage("vector", &vcov, &vfiles);
    assert_int_equal(cov, files);
    assert_int_equal(vcov, vfiles);
    assert_true(vfiles >= 1 && files == 2 * vfiles); /* slug and bio (fts), emb (vector) per data file */
    assert_int_equal(r.index_files_built, (uint64_t)(files + vfiles)); /* all of them by that insert */
    static const char *qs[] = {"river", "garden stone", "music harbor cloud"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        char p[128];
        snprintf(p, sizeof p, "{\"q\":\"%s\"}", qs[i]);
        char *with = run("textall", p, 0, 0);
        setenv("OG_INDEX", "off", 1);
        char *without = run("textall", p, 0, 0);
        unsetenv("OG_INDEX");
        assert_string_equal(with, without);
        assert_true(strlen(with) > 40);
        free(with);
        free(without);
    }
    double rc = recall(0);
    if (rc < 0.95) fail_msg("recall@10 after the mutation's indexing %.3f < 0.95", rc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(indexes_follow_the_data, setup, teardown),
        cmocka_unit_test_setup_teardown(default_recall, setup, teardown),
        cmocka_unit_test_setup_teardown(bm25_top_is_the_full_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(mutations_index_after_compaction, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
