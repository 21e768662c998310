/*
 * test_stream_agg.c — the streamed scan + filter + aggregate (engine/exec_stream.c, issue 36):
 * over a bulk-loaded table of several fragments, under a small cap on what a query may load
 * whole (OMNIGRAPH_COLUMN_LOAD_MAX, or a small cache bound), the aggregates read their
 * columns batch by batch — on one thread and on two — and give the answers of the loaded
 * columns and of the generic paths; the view keeps no streamed column (no whole-column load,
 * the cache's charged bytes stay under one column's size); shapes it does not take still
 * answer, and a table with deleted rows falls back to the loaded columns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/colscan.h"
#include "engine/exec.h"
#include "engine/mutate.h"
#include "engine/tableview.h"
#include "fixture.h"

#define N 200000 /* 4 fragments of a bulk load (OG_LOAD_FLUSH_ROWS 65,536) */

static const char *SCHEMA = "node T {\n    k: String @key\n    v: I64?\n    u: I64\n    f: F64?\n    w: I32\n"
                            "    d: Date?\n    c: enum(a, b, c)?\n}\n";

static const char *QUERIES =
    "query r($lo: I64, $hi: I64) {\n"
    "    match { $n: T  $n.v >= $lo  $n.v < $hi }\n"
    "    return { $n.c, count($n) as n, sum($n.v) as s, min($n.f) as mf, max($n.v) as m, avg($n.w) as aw }\n"
    "    order { $n.c asc }\n}\n"
    "query g($lo: F64) {\n"
    "    match { $n: T  $n.f > $lo  $n.f <= 900.5 }\n"
    "    return { count($n) as n, avg($n.v) as a, min($n.v) as m, sum($n.f) as sf, count($n.f) as nf }\n}\n"
    "query all() {\n"
    "    match { $n: T }\n"
    "    return { $n.c, count($n) as n, max($n.w) as m, min($n.d) as md }\n    order { $n.c desc }\n}\n"
    "query wk($lo: I32) {\n"
    "    match { $n: T  $lo <= $n.w  $n.d >= date(\"2021-03-01\") }\n"
    "    return { $n.c, avg($n.v) as a, max($n.f) as m }\n    order { $n.c asc }\n}\n"
    "query none() {\n"
    "    match { $n: T  $n.v < -1 }\n"
    "    return { count($n) as n, sum($n.v) as s, max($n.f) as m }\n}\n"
    "query fast($lo: I64, $hi: I64) {\n" /* one range over a column without nulls */
    "    match { $n: T  $n.u >= $lo  $n.u <= $hi }\n"
    "    return { $n.c, count($n) as n, avg($n.u) as a, max($n.v) as m, min($n.f) as mf }\n"
    "    order { $n.c asc }\n}\n"
    "query str() {\n" /* a String predicate: not streamed */
    "    match { $n: T  $n.v >= 10  $n.c = \"b\" }\n"
    "    return { count($n) as n, max($n.v) as m }\n}\n";

static int setup(void **state)
{
    fixture *f = fixture_new(SCHEMA, QUERIES);
    if (!f) return -1;
    size_t cap = (size_t)N * 112, w = 0;
    char *text = malloc(cap);
    static const char *cats[] = {"a", "b", "c"};
    for (size_t i = 0; i < N; i++) {
        w += (size_t)snprintf(text + w, cap - w, "{\"type\":\"T\",\"data\":{\"k\":\"k%06zu\",\"w\":%zu,\"u\":%zu", i,
                              (i * 7919) % 1000, (i * 31337) % 100003);
        if (i % 13) w += (size_t)snprintf(text + w, cap - w, ",\"v\":%zu", (i * 104729) % 1000003);
        if (i % 7) w += (size_t)snprintf(text + w, cap - w, ",\"f\":%.2f", (double)(i % 4000) * 0.5 - 100);
        if (i % 5) w += (size_t)snprintf(text + w, cap - w, ",\"d\":\"2021-%02zu-%02zu\"", 1 + i % 12, 1 + i % 28);
        if (i % 11) w += (size_t)snprintf(text + w, cap - w, ",\"c\":\"%s\"", cats[i % 3]);
        w += (size_t)snprintf(text + w, cap - w, "}}\n");
    }
    og_write_result res;
    og_status st = fixture_load(f, text, OG_LOAD_OVERWRITE, &res);
    free(text);
    if (st) {
        fprintf(stderr, "load: %s\n", og_error_message());
        return -1;
    }
    og_tableview_load_split_rows = 1000; /* two threads over the fragments at this size */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    unsetenv("OMNIGRAPH_COLUMN_LOAD_MAX");
    return 0;
}

static const char *cases[][2] = {
    {"r", "{\"lo\": 0, \"hi\": 2000000}"}, {"r", "{\"lo\": 250000, \"hi\": 580000}"}, {"r", "{\"lo\": 7, \"hi\": 7}"},
    {"g", "{\"lo\": -100.0}"},              {"g", "{\"lo\": 899.75}"},                  {"all", "{}"},
    {"wk", "{\"lo\": 500}"},                {"none", "{}"},
    {"fast", "{\"lo\": 25000, \"hi\": 58000}"}, {"fast", "{\"lo\": -3, \"hi\": 0}"},
    {"str", "{}"},
};
#define NCASES (sizeof cases / sizeof cases[0])

static void run(fixture *f, size_t i, char *out, size_t cap)
{
    if (fixture_query(f, cases[i][0], cases[i][1], NULL, out, cap))
        fail_msg("%s %s: %s", cases[i][0], cases[i][1], og_error_message());
}

/* The cache's charged bytes after one more query (a hit recharges the view: tableview.h). */
static size_t charged(fixture *f)
{
    char out[64];
    run(f, 7, out, sizeof out); /* ("none": streamed or not, it loads nothing new) */
    og_cache_stats s;
    og_cache_get_stats(og_graph_cache(og_engine_graph(f->e)), &s);
    return s.bytes;
}

static void streamed_answers_equal_loaded_and_generic(void **state)
{
    fixture *f = *state;
    static char want[NCASES][4096], got[4096];
    /* the streamed runs first, on a fresh handle: no column of T is loaded yet */
    setenv("OMNIGRAPH_COLUMN_LOAD_MAX", "64K", 1);
    size_t whole = 0, streams = og_tableview_streams(), streamed_bytes = 0;
    for (size_t i = 0; i < NCASES; i++) {
        if (i == NCASES - 1) streamed_bytes = charged(f); /* (before "str" loads v whole) */
        for (int threads = 1; threads <= 2; threads++) {
            og_colscan_threads = threads;
            run(f, i, threads == 1 ? want[i] : got, sizeof got);
        }
        if (strcmp(got, want[i])) fail_msg("%s: 1 thread '%s', 2 threads '%s'", cases[i][0], want[i], got);
        if (i == 0) whole = og_tableview_whole_reads(); /* (the coded group key: loaded once) */
    }
    /* every case but the String predicate streamed, twice (charged() once more); nothing
     * more was loaded whole but the column v "str" filters */
    assert_int_equal(og_tableview_streams() - streams, 2 * (NCASES - 1) + 1);
    assert_true(og_tableview_whole_reads() - whole <= 1);
    assert_true(streamed_bytes < (size_t)N * 8); /* less than the one column v */
    /* the same queries on the loaded columns, then on the generic paths */
    for (int path = 0; path < 2; path++) {
        og_exec_stream = 0;
        og_exec_typed = path == 0;
        for (size_t i = 0; i < NCASES; i++) {
            run(f, i, got, sizeof got);
            if (strcmp(got, want[i]))
                fail_msg("%s %s: streamed '%s', %s '%s'", cases[i][0], cases[i][1], want[i],
                         path ? "generic" : "loaded", got);
        }
    }
    og_exec_stream = 1;
    og_exec_typed = 1;
    og_colscan_threads = 2;
    assert_true(charged(f) >= (size_t)N * 8); /* the loaded path kept its columns: the bound can fail */
    /* a loaded column is read where it is: no stream */
    streams = og_tableview_streams();
    run(f, 1, got, sizeof got);
    assert_int_equal(og_tableview_streams(), streams);
    assert_string_equal(got, want[1]);
    unsetenv("OMNIGRAPH_COLUMN_LOAD_MAX");
}

/* A small cache bound streams as well (a quarter of it is what a whole load may take). */
static void a_small_cache_bound_streams(void **state)
{
    fixture *f = *state;
    og_engine *small;
    og_engine_opts o = {.cache_bytes = 256 << 10};
    if (og_engine_open(&small, f->uri, &o)) fail_msg("open: %s", og_error_message());
    og_engine *big = f->e;
    char want[4096], got[4096];
    run(f, 1, want, sizeof want); /* (the first handle: loaded) */
    f->e = small;
    size_t streams = og_tableview_streams();
    run(f, 1, got, sizeof got);
    assert_true(og_tableview_streams() > streams);
    assert_string_equal(got, want);
    f->e = big;
    og_engine_close(small);
}

/* With deleted rows the view's rows are not the scan's: the columns are loaded instead. */
static void deleted_rows_fall_back_to_loading(void **state)
{
    fixture *f = *state;
    const char *mq = "query del($lo: I64, $hi: I64) { delete T where v >= $lo and v < $hi }\n";
    json_t *pj = json_pack("{s:i,s:i}", "lo", 3000, "hi", 150000);
    og_write_result w;
    og_status st = og_engine_mutate(f->e, "m.gq", mq, strlen(mq), "del", pj, NULL, &w, NULL);
    json_decref(pj);
    if (st) fail_msg("delete: %s", og_error_message());
    setenv("OMNIGRAPH_COLUMN_LOAD_MAX", "0", 1);
    static char want[NCASES][4096], got[4096];
    size_t streams = og_tableview_streams();
    for (size_t i = 0; i < NCASES; i++) run(f, i, want[i], sizeof want[i]);
    assert_int_equal(og_tableview_streams(), streams); /* (refused before any batch) */
    og_exec_typed = 0;
    for (size_t i = 0; i < NCASES; i++) {
        run(f, i, got, sizeof got);
        if (strcmp(got, want[i])) fail_msg("%s: '%s' vs generic '%s'", cases[i][0], want[i], got);
    }
    og_exec_typed = 1;
    unsetenv("OMNIGRAPH_COLUMN_LOAD_MAX");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(streamed_answers_equal_loaded_and_generic),
        cmocka_unit_test(a_small_cache_bound_streams),
        cmocka_unit_test(deleted_rows_fall_back_to_loading),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
