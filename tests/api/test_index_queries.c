/*
 * test_index_queries.c — vector (ANN) and scalar indexes seen through queries (public C API,
 * docs/search.md "Vector index", docs/indexes.md "Scalar indexes"): the same queries answered
 * before any index file exists, after `index build` (covering two of three data files:
 * partial coverage), with exact search forced, after deletes, at an old commit and on a
 * branch.  Scalar-indexed scans must answer byte-for-byte like scans; nearest through the
 * index must return exact distances, recall@10 >= 0.95, never a deleted row, and filtered
 * nearest must stay the exact pre-filtered answer.  rrf(nearest, bm25) with its nearest arm
 * unfiltered and limited takes that arm's candidates from the index too: the same fused rows
 * as exact search at recall level, never a deleted row, exact with --exact or a filter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/scan_index.h"
#include "engine/search_ann.h"
#include "engine/tableview.h"
#include "omnigraph.h"

#define DIM 8
#define PER_FILE 400
#define NQ 30

static const char SCHEMA[] = "node Doc { slug: String @key  year: I32 @index  score: F64? @index  "
                             "kind: enum(alpha, beta, delta, gamma)? @index  emb: Vector(8)? @index  flag: Bool? @index  "
                             "body: String? @index }\n";
static const char QUERIES[] =
    "query knn($v: Vector(8)) { match { $d: Doc } return { $d.slug, nearest($d.emb, $v) as dist } "
    "order { nearest($d.emb, $v) } limit 10 }\n"
    "query knnf($v: Vector(8), $y: I32) { match { $d: Doc  $d.year >= $y } return { $d.slug, nearest($d.emb, $v) as dist } "
    "order { nearest($d.emb, $v) } limit 10 }\n"
    "query yeq($y: I32) { match { $d: Doc  $d.year = $y } return { $d.slug } order { $d.slug } }\n"
    "query ylt($y: I32) { match { $d: Doc  $d.year < $y } return { $d.slug } order { $d.slug } }\n"
    "query yge($y: I32) { match { $d: Doc  $y <= $d.year  $d.year <= 1995 } return { $d.slug } order { $d.slug } }\n"
    "query sgt($s: F64) { match { $d: Doc  $d.score > $s } return { $d.slug } order { $d.slug } }\n"
    "query seqi($s: I64) { match { $d: Doc  $d.score = $s } return { $d.slug } order { $d.slug } }\n"
    "query keq($k: String) { match { $d: Doc  $d.kind = $k } return { $d.slug } order { $d.slug } }\n"
    "query kge($k: String) { match { $d: Doc  $d.kind >= $k } return { $d.slug } order { $d.slug } }\n"
    "query yne($y: I32) { match { $d: Doc  $d.year != $y } return { $d.slug } order { $d.slug } }\n"
    "query yin($ys: [I32]) { match { $d: Doc  $d.year in $ys } return { $d.slug } order { $d.slug } }\n"
    "query yinl() { match { $d: Doc  $d.year in [1985, 1999, 2024] } return { $d.slug } order { $d.slug } }\n"
    "query kin($ks: [String]) { match { $d: Doc  $d.kind in $ks } return { $d.slug } order { $d.slug } }\n"
    "query kne($k: String) { match { $d: Doc  $d.kind != $k } return { $d.slug } order { $d.slug } }\n"
    "query knull() { match { $d: Doc  $d.kind is null } return { $d.slug } order { $d.slug } }\n"
    "query knotnull() { match { $d: Doc  $d.kind is not null } return { $d.slug } order { $d.slug } }\n"
    "query snull() { match { $d: Doc  $d.score is null } return { $d.slug } order { $d.slug } }\n"
    "query feq($f: Bool) { match { $d: Doc  $d.flag = $f } return { $d.slug } order { $d.slug } }\n"
    "query fne() { match { $d: Doc  $d.flag != true } return { $d.slug } order { $d.slug } }\n"
    "query fnull() { match { $d: Doc  $d.flag is null } return { $d.slug } order { $d.slug } }\n"
    "query fuse($v: Vector(8), $q: String) { match { $d: Doc } return { $d.slug, rrf(nearest($d.emb, $v), "
    "bm25($d.body, $q)) as s } order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 10 }\n"
    "query fusef($v: Vector(8), $q: String, $y: I32) { match { $d: Doc  $d.year >= $y } return { $d.slug, "
    "rrf(nearest($d.emb, $v), bm25($d.body, $q)) as s } order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 10 }\n";
/* Full-text functions next to scalar-indexed filters: both kinds of index file in one scan. */
static const char TEXTQ[] =
    "query tyr($q: String, $y: I32) { match { $d: Doc  $d.year >= $y } return { $d.slug, bm25($d.body, $q) as s } "
    "order { bm25($d.body, $q) } limit 10 }\n"
    "query tall($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 7 }\n"
    "query tsk($q: String, $k: String) { match { $d: Doc  $d.kind = $k  search($d.body, $q) } return { $d.slug } "
    "order { $d.slug } }\n"
    "query tmt($q: String, $y: I32) { match { $d: Doc  $d.year < $y  match_text($d.body, $q) } return { $d.slug } "
    "order { $d.slug } }\n"
    "query tfz($q: String, $ks: [String]) { match { $d: Doc  $d.kind in $ks  fuzzy($d.body, $q, 1) } return { $d.slug } "
    "order { $d.slug } }\n"
    "query tnull($q: String) { match { $d: Doc  $d.score is null } return { $d.slug, bm25($d.body, $q) as s } "
    "order { bm25($d.body, $q), $d.slug } }\n";
static const char *TEXT[][2] = {
    {"tyr", "{\"q\":\"w3 v5\",\"y\":1995}"}, {"tyr", "{\"q\":\"w12\",\"y\":2010}"},
    {"tall", "{\"q\":\"w1 v22\"}"},           {"tsk", "{\"q\":\"w2\",\"k\":\"beta\"}"},
    {"tsk", "{\"q\":\"w2 v9\",\"k\":\"gamma\"}"}, {"tmt", "{\"q\":\"w4 w4\",\"y\":2000}"},
    {"tmt", "{\"q\":\"w5 w3\",\"y\":1999}"}, {"tfz", "{\"q\":\"w1\",\"ks\":[\"alpha\",\"delta\"]}"},
    {"tnull", "{\"q\":\"v1 w6\"}"},
};
#define NTEXT (sizeof TEXT / sizeof TEXT[0])

static const char MUTS[] = "query del($s: String) { delete Doc where slug = $s }\n";

static char dir[64];
static og_db *db;
static float vecs[3 * PER_FILE][DIM];

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

#define OK(expr)                                                                                   \
    do {                                                                                           \
        og_status ok_st_ = (expr);                                                                 \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message());   \
    } while (0)

static void load_file(size_t file, og_load_mode mode)
{
    char path[128];
    snprintf(path, sizeof path, "%s/part%zu.ndjson", dir, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    static const char *kinds[] = {"alpha", "beta", "gamma", "delta"};
    for (size_t i = file * PER_FILE; i < (file + 1) * PER_FILE; i++) {
        fprintf(f, "{\"type\":\"Doc\",\"data\":{\"slug\":\"d%04zu\",\"year\":%zu", i, 1980 + (i * 7) % 31);
        if (i % 9) fprintf(f, ",\"score\":%g", (double)((i * 13) % 41) / 4.0);
        if (i % 5) fprintf(f, ",\"kind\":\"%s\"", kinds[i % 4]);
        if (i % 11) fprintf(f, ",\"body\":\"w%zu w%zu v%zu\"", i % 13, i % 7, i % 23);
        if (i % 3) fprintf(f, ",\"flag\":%s", i % 7 < 3 ? "true" : "false");
        if (i % 17) {
            fputs(",\"emb\":[", f);
            for (int d = 0; d < DIM; d++) fprintf(f, d ? ",%.9g" : "%.9g", (double)vecs[i][d]);
            fputc(']', f);
        }
        fputs("}}\n", f);
    }
    fclose(f);
    og_load_opts lo = {.mode = mode};
    og_receipt r;
    OK(og_db_load(&r, db, path, &lo));
}

static char *run(const char *name, const char *params, const og_read_opts *at, int exact)
{
    og_rows *rows;
    og_query_opts qo = {.exact = exact};
    og_status st = og_db_query_ex(&rows, db, QUERIES, strlen(QUERIES), name, params, at, &qo);
    if (st) fail_msg("%s %s: %s", name, params, og_error_message());
    char *text;
    OK(og_rows_render(&text, NULL, rows, OG_FORMAT_CSV, "main"));
    og_rows_free(rows);
    return text;
}

static void vec_params(char *buf, size_t cap, size_t q)
{
    size_t at = (size_t)snprintf(buf, cap, "{\"v\":[");
    for (int d = 0; d < DIM; d++) at += (size_t)snprintf(buf + at, cap - at, d ? ",%.6f" : "%.6f", vecs[(q * 37) % (3 * PER_FILE)][d] + 0.05 * (urand() - 0.5));
    snprintf(buf + at, cap - at, "]}");
}

/* Scalar queries: identical text with and without index files, and with them. */
static const char *SCALAR[][2] = {
    {"yeq", "{\"y\":1985}"}, {"yeq", "{\"y\":1979}"}, {"ylt", "{\"y\":1984}"}, {"yge", "{\"y\":1990}"},
    {"sgt", "{\"s\":7.5}"},  {"sgt", "{\"s\":-1}"},   {"seqi", "{\"s\":5}"},   {"keq", "{\"k\":\"beta\"}"},
    {"kge", "{\"k\":\"c\"}"}, {"keq", "{\"k\":\"zeta\"}"},
    /* != , in, is null, is not null, Bool */
    {"yne", "{\"y\":1985}"}, {"yin", "{\"ys\":[1985,1990,1979]}"}, {"yin", "{\"ys\":[]}"}, {"yinl", "{}"},
    {"kin", "{\"ks\":[\"beta\",\"delta\"]}"}, {"kne", "{\"k\":\"alpha\"}"}, {"knull", "{}"}, {"knotnull", "{}"},
    {"snull", "{}"}, {"feq", "{\"f\":true}"}, {"feq", "{\"f\":false}"}, {"fne", "{}"}, {"fnull", "{}"},
};
#define NSCALAR (sizeof SCALAR / sizeof SCALAR[0])

static char *before_knn[NQ], *before_knnf[NQ];
static char qparams[NQ][512], fparams[NQ][540];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-test-ixq-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    for (size_t i = 0; i < 3 * PER_FILE; i++) {
        size_t c = (size_t)(urand() * 12);
        for (int d = 0; d < DIM; d++) vecs[i][d] = (float)(c * 0.7 + (d == (int)(c % DIM) ? 3 : 0) + urand());
    }
    char uri[128];
    snprintf(uri, sizeof uri, "%s/g", dir);
    og_open_opts oo = {0};
    if (og_db_init(&db, uri, "s.pg", SCHEMA, strlen(SCHEMA), &oo)) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void indexes_change_no_answer(void **state)
{
    (void)state;
    load_file(0, OG_LOAD_OVERWRITE);
    load_file(1, OG_LOAD_APPEND);
    for (size_t q = 0; q < NQ; q++) {
        vec_params(qparams[q], sizeof qparams[q], q);
        snprintf(fparams[q], sizeof fparams[q], "%.*s, \"y\": 1990}", (int)strlen(qparams[q]) - 1, qparams[q]);
    }
    uint64_t ann0 = og_search_ann_uses();
    free(run("knn", qparams[0], NULL, 0)); /* no index files yet: nothing to use */
    assert_int_equal(og_search_ann_uses(), ann0);
    char *report;
    OK(og_db_index_build(&report, db, NULL, "vector", NULL));
    og_free(report);
    OK(og_db_index_build(&report, db, NULL, "scalar", NULL));
    og_free(report);
    load_file(2, OG_LOAD_APPEND); /* a third data file no index covers */
    /* exact answers over all three files, then indexed ones */
    size_t same = 0, hits = 0;
    for (size_t q = 0; q < NQ; q++) {
        before_knn[q] = run("knn", qparams[q], NULL, 1);
        before_knnf[q] = run("knnf", fparams[q], NULL, 1);
        char *a = run("knn", qparams[q], NULL, 0);
        char *f = run("knnf", fparams[q], NULL, 0);
        assert_string_equal(f, before_knnf[q]); /* filtered: exact pre-filtered search, always */
        same += !strcmp(a, before_knn[q]);
        /* every returned line (slug,dist) must be a line of the exact answer, or farther */
        for (char *l = strchr(a, '\n') + 1; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            char line[128];
            size_t n = strcspn(l, "\n");
            snprintf(line, sizeof line, "%.*s\n", (int)n, l);
            hits += strstr(before_knn[q], line) != NULL;
        }
        free(a);
        free(f);
    }
    assert_true(og_search_ann_uses() > ann0); /* the index was used */
    if ((double)hits / (NQ * 10) < 0.95) fail_msg("recall@10 %.3f", (double)hits / (NQ * 10));
    (void)same;
    /* forcing exact: no index use */
    uint64_t u = og_search_ann_uses();
    free(run("knn", qparams[0], NULL, 1));
    assert_int_equal(og_search_ann_uses(), u);
}

/* The fused top 10 of rrf(nearest, bm25): the nearest arm through the index (unfiltered,
 * limited) has the exact answer's entities at recall level; filtered or --exact: no index. */
static void rrf_uses_the_index(void **state)
{
    (void)state;
    size_t hits = 0, total = 0;
    uint64_t u0 = og_search_ann_uses();
    for (size_t q = 0; q < NQ; q++) {
        char p[600], pf[620];
        snprintf(p, sizeof p, "%.*s, \"q\": \"w%zu v%zu\"}", (int)strlen(qparams[q]) - 1, qparams[q], q % 13, q % 23);
        snprintf(pf, sizeof pf, "%.*s, \"y\": 1990}", (int)strlen(p) - 1, p);
        uint64_t u = og_search_ann_uses();
        char *exact = run("fuse", p, NULL, 1);
        assert_int_equal(og_search_ann_uses(), u); /* --exact: no index */
        char *ann = run("fuse", p, NULL, 0);
        assert_int_equal(og_search_ann_uses(), u + 1);
        char *fe = run("fusef", pf, NULL, 1), *fa = run("fusef", pf, NULL, 0);
        assert_int_equal(og_search_ann_uses(), u + 1); /* a filter: exact pre-filtered, identical */
        assert_string_equal(fa, fe);
        /* every entity of the exact fused top 10 that the indexed answer also has */
        for (char *l = strchr(exact, '\n') + 1; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            char needle[24];
            snprintf(needle, sizeof needle, "\n%.*s,", (int)strcspn(l, ","), l);
            total++;
            hits += strstr(ann, needle) != NULL;
        }
        free(exact);
        free(ann);
        free(fe);
        free(fa);
    }
    assert_true(total >= NQ * 10);
    if ((double)hits / (double)total < 0.95) fail_msg("rrf: %zu of %zu fused entities found", hits, total);
    assert_int_equal(og_search_ann_uses(), u0 + NQ);
    /* OG_ANN=off: the process-wide switch */
    setenv("OG_ANN", "off", 1);
    char p[600];
    snprintf(p, sizeof p, "%.*s, \"q\": \"w1\"}", (int)strlen(qparams[0]) - 1, qparams[0]);
    free(run("fuse", p, NULL, 0));
    unsetenv("OG_ANN");
    assert_int_equal(og_search_ann_uses(), u0 + NQ);
}

/* Scalar answers with the index files (two of three files covered) equal a scan's. */
static void scalar_scans_match(void **state)
{
    (void)state;
    uint64_t sc0 = og_scan_index_uses();
    char *with[NSCALAR];
    for (size_t i = 0; i < NSCALAR; i++) {
        uint64_t u = og_scan_index_uses();
        with[i] = run(SCALAR[i][0], SCALAR[i][1], NULL, 0);
        /* != / in / is null / is not null / Bool (the second block) must use the index */
        if (i >= 10 && og_scan_index_uses() == u) fail_msg("%s %s did not use the scalar index", SCALAR[i][0], SCALAR[i][1]);
    }
    assert_true(og_scan_index_uses() >= sc0 + NSCALAR - 1);
    for (size_t i = 10; i < NSCALAR; i++)
        if (!strcmp(SCALAR[i][0], "yin") && strcmp(SCALAR[i][1], "{\"ys\":[]}") && strlen(with[i]) < 20)
            fail_msg("%s returned no rows", SCALAR[i][0]);
    assert_true(strlen(with[0]) > 20 && strlen(with[2]) > 20 && strlen(with[7]) > 20); /* rows, not just headers */
    og_tableview_set_index_mode(0); /* no index files at all: plain scans */
    for (size_t i = 0; i < NSCALAR; i++) {
        char *without = run(SCALAR[i][0], SCALAR[i][1], NULL, 0);
        assert_string_equal(with[i], without);
        free(without);
        free(with[i]);
    }
    og_tableview_set_index_mode(2);
}

static char *run_text(const char *name, const char *params)
{
    og_rows *rows;
    if (og_db_query(&rows, db, TEXTQ, strlen(TEXTQ), name, params, NULL) != OG_OK)
        fail_msg("%s %s: %s", name, params, og_error_message());
    char *text;
    OK(og_rows_render(&text, NULL, rows, OG_FORMAT_CSV, "main"));
    og_rows_free(rows);
    return text;
}

/* The index-off twin of full-text search beside scalar-indexed filters: with fts files on
 * every data file and scalar files on two of three, each text query (a filtered bm25 top k,
 * the bare-scan top k cut, search / match_text / fuzzy next to =, <, in and is null) answers
 * exactly as with no index file at all. */
static void text_with_indexed_filters_matches(void **state)
{
    (void)state;
    char *before[NTEXT];
    for (size_t i = 0; i < NTEXT; i++) before[i] = run_text(TEXT[i][0], TEXT[i][1]);
    char *report;
    OK(og_db_index_build(&report, db, NULL, "fts", "Doc.body"));
    assert_non_null(strstr(report, "\"built\":3,")); /* body on each of the three data files */
    og_free(report);
    uint64_t sc = og_scan_index_uses();
    for (size_t i = 0; i < NTEXT; i++) {
        char *with = run_text(TEXT[i][0], TEXT[i][1]);
        assert_string_equal(with, before[i]);
        assert_true(strlen(with) > 12); /* rows, not just the header */
        og_tableview_set_index_mode(0);
        char *without = run_text(TEXT[i][0], TEXT[i][1]);
        og_tableview_set_index_mode(2);
        assert_string_equal(with, without);
        free(with);
        free(without);
        free(before[i]);
    }
    assert_true(og_scan_index_uses() >= sc + 6); /* the filtered ones started from scalar files */
}

static void deletes_branches_and_time_travel(void **state)
{
    (void)state;
    /* delete the 3 nearest rows of query 0 (from the exact answer) */
    char *ex = run("knn", qparams[0], NULL, 1);
    char slugs[3][16];
    char *l = strchr(ex, '\n') + 1;
    for (int k = 0; k < 3; k++) {
        size_t n = strcspn(l, ",");
        snprintf(slugs[k], sizeof slugs[k], "%.*s", (int)n, l);
        l = strchr(l, '\n') + 1;
    }
    /* the commit before the deletes */
    og_rows *rows;
    og_read_opts at0 = {NULL, NULL};
    OK(og_db_query(&rows, db, QUERIES, strlen(QUERIES), "yeq", "{\"y\":1985}", &at0));
    char commit0[40];
    snprintf(commit0, sizeof commit0, "%s", og_rows_commit(rows));
    og_rows_free(rows);
    /* on branch "b" (forked from main) */
    for (int k = 0; k < 3; k++) {
        char p[64];
        snprintf(p, sizeof p, "{\"s\":\"%s\"}", slugs[k]);
        og_receipt r;
        og_db_mutate_opts mo = {"b", "main", NULL};
        OK(og_db_mutate_ex(&r, db, MUTS, strlen(MUTS), "del", p, &mo));
        assert_int_equal(r.affected_nodes, 1);
        OK(og_db_mutate(&r, db, MUTS, strlen(MUTS), "del", p, NULL, NULL));
    }
    og_read_opts onb = {"b", NULL}, old = {NULL, commit0};
    const og_read_opts *ats[] = {NULL, &onb, &old};
    for (int a = 0; a < 3; a++) {
        uint64_t u = og_search_ann_uses();
        char *idx = run("knn", qparams[0], ats[a], 0);
        char *exact = run("knn", qparams[0], ats[a], 1);
        assert_true(og_search_ann_uses() > u);
        for (int k = 0; k < 3; k++) {
            char needle[24];
            snprintf(needle, sizeof needle, "\n%s,", slugs[k]);
            int in_idx = strstr(idx, needle) != NULL, in_exact = strstr(exact, needle) != NULL;
            assert_int_equal(in_exact, a == 2); /* only the old commit still has them */
            assert_int_equal(in_idx, in_exact); /* a deleted row is never returned */
        }
        free(idx);
        free(exact);
        /* rrf through the index: never a deleted row either */
        char fp[600];
        snprintf(fp, sizeof fp, "%.*s, \"q\": \"w1 w2\"}", (int)strlen(qparams[0]) - 1, qparams[0]);
        u = og_search_ann_uses();
        char *fidx = run("fuse", fp, ats[a], 0), *fex = run("fuse", fp, ats[a], 1);
        assert_true(og_search_ann_uses() > u);
        for (int k = 0; k < 3 && a < 2; k++) {
            char needle[24];
            snprintf(needle, sizeof needle, "\n%s,", slugs[k]);
            assert_null(strstr(fidx, needle));
            assert_null(strstr(fex, needle));
        }
        free(fidx);
        free(fex);
        /* scalar scans: the same on each state with and without files */
        for (size_t i = 0; i < NSCALAR; i++) {
            char *w = run(SCALAR[i][0], SCALAR[i][1], ats[a], 0);
            og_tableview_set_index_mode(0);
            char *wo = run(SCALAR[i][0], SCALAR[i][1], ats[a], 0);
            og_tableview_set_index_mode(2);
            assert_string_equal(w, wo);
            free(w);
            free(wo);
        }
    }
    free(ex);
    for (size_t q = 0; q < NQ; q++) {
        free(before_knn[q]);
        free(before_knnf[q]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(indexes_change_no_answer),
        cmocka_unit_test(rrf_uses_the_index),
        cmocka_unit_test(scalar_scans_match),
        cmocka_unit_test(text_with_indexed_filters_matches),
        cmocka_unit_test(deletes_branches_and_time_travel),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
