/*
 * test_colscan_query.c — end to end through the engine: filter + aggregate queries give the
 * same answers on the typed column kernels (engine/colscan.h: fused ranges, zone maps, the
 * direct scan, grouped aggregates, two threads) as on the generic paths (og_exec_typed = 0),
 * over a table large enough for zone maps and threads, before and after a delete.
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

#define N 250000 /* over OG_COLSCAN_PAR_MIN and many zones */

static const char *SCHEMA = "node T {\n    k: String @key\n    v: I64?\n    f: F64?\n    d: Date?\n"
                            "    c: enum(a, b, c)?\n}\n";

static const char *QUERIES =
    "query r($lo: I64, $hi: I64) {\n"
    "    match { $n: T  $n.v >= $lo  $n.v < $hi }\n"
    "    return { $n.c, count($n) as n, sum($n.v) as s, min($n.f) as mf, max($n.v) as m, avg($n.f) as af }\n"
    "    order { $n.c asc }\n}\n"
    "query g($lo: F64) {\n"
    "    match { $n: T  $n.f > $lo  $n.f <= 900.5 }\n"
    "    return { count($n) as n, avg($n.v) as a, min($n.v) as m }\n}\n"
    "query s($lo: I64) {\n"
    "    match { $n: T  $n.v >= $lo  $n.c = \"b\" }\n"
    "    return { count($n) as n, max($n.k) as mk, min($n.v) as m }\n}\n"
    "query ne($x: I64) {\n"
    "    match { $n: T  $n.v != $x  $n.v < 50000 }\n"
    "    return { $n.c, count($n) as n }\n    order { $n.c asc }\n}\n"
    "query ce($c: String, $hi: I64) {\n"
    "    match { $n: T  $n.c >= $c  $n.v < $hi }\n"
    "    return { $n.c, count($n) as n, count($n.c) as nc }\n    order { $n.c desc }\n}\n"
    "query cne($c: String) {\n"
    "    match { $n: T  $n.c != $c }\n"
    "    return { count($n) as n }\n}\n"
    "query co($lo: I64) {\n"
    "    match { $n: T  $n.v >= $lo }\n"
    "    return { $n.k, $n.c }\n    order { $n.c desc, $n.k asc }\n    limit 40\n}\n"
    "query dt() {\n"
    "    match { $n: T  $n.d >= date(\"2021-01-01\")  $n.d < date(\"2021-02-01\") }\n"
    "    return { count($n) as n, max($n.v) as m }\n}\n";

static int setup(void **state)
{
    fixture *f = fixture_new(SCHEMA, QUERIES);
    if (!f) return -1;
    size_t cap = (size_t)N * 96, w = 0;
    char *text = malloc(cap);
    static const char *cats[] = {"a", "b", "c"};
    for (size_t i = 0; i < N; i++) {
        w += (size_t)snprintf(text + w, cap - w, "{\"type\":\"T\",\"data\":{\"k\":\"k%06zu\"", i);
        /* v ascending (zone maps can skip), null over rows 8192..12287 and every 13th */
        if (!(i >= 8192 && i < 12288) && i % 13) w += (size_t)snprintf(text + w, cap - w, ",\"v\":%zu", i);
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
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

/* Runs every query shape over many ranges with the typed paths on (1 and 2 threads) and off. */
static void compare_all(fixture *f)
{
    static const char *cases[][2] = {
        {"r", "{\"lo\": 0, \"hi\": 1000000}"},    {"r", "{\"lo\": 5000, \"hi\": 9000}"},
        {"r", "{\"lo\": 100000, \"hi\": 100000}"}, {"r", "{\"lo\": 200001, \"hi\": 249000}"},
        {"r", "{\"lo\": -5, \"hi\": 70}"},         {"r", "{\"lo\": 9000, \"hi\": 12000}"},
        {"g", "{\"lo\": -100.0}"},                 {"g", "{\"lo\": 899.75}"},
        {"g", "{\"lo\": 1e9}"},                    {"s", "{\"lo\": 240000}"},
        {"s", "{\"lo\": 0}"},                      {"ne", "{\"x\": 300}"},
        {"dt", "{}"},
        {"ce", "{\"c\": \"b\", \"hi\": 200000}"}, {"ce", "{\"c\": \"bb\", \"hi\": 9000000}"},
        {"ce", "{\"c\": \"\", \"hi\": 100}"},         {"cne", "{\"c\": \"a\"}"},
        {"cne", "{\"c\": \"zz\"}"},                      {"co", "{\"lo\": 240000}"},
        {"co", "{\"lo\": 0}"},
    };
    static char want[8192], got[8192];
    size_t coded = og_tableview_dict_loads();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* typed first: the enum column is then loaded dictionary-coded (engine/dictcol.h), as a
         * process that never takes the generic path holds it */
        for (int threads = 1; threads <= 2; threads++) {
            og_exec_typed = 1;
            og_colscan_threads = threads;
            if (fixture_query(f, cases[i][0], cases[i][1], NULL, threads == 1 ? got : want, sizeof got))
                fail_msg("%s %s: %s", cases[i][0], cases[i][1], og_error_message());
        }
        if (strcmp(got, want)) fail_msg("%s %s: 1 thread '%s', 2 threads '%s'", cases[i][0], cases[i][1], got, want);
        og_exec_typed = 0;
        if (fixture_query(f, cases[i][0], cases[i][1], NULL, want, sizeof want))
            fail_msg("%s %s: %s", cases[i][0], cases[i][1], og_error_message());
        if (strcmp(got, want))
            fail_msg("%s %s: typed '%s', generic '%s'", cases[i][0], cases[i][1], got, want);
    }
    assert_true(og_tableview_dict_loads() > coded); /* the typed runs read the coded column */
    og_exec_typed = 1;
    og_colscan_threads = 2;
}

static void typed_and_generic_paths_agree(void **state)
{
    fixture *f = *state;
    compare_all(f);
    char got[256];
    assert_int_equal(fixture_query(f, "r", "{\"lo\": 5000, \"hi\": 5010}", NULL, got, sizeof got), OG_OK);
    /* 5000..5009 minus multiples of 13 (5005); c = i % 3 unless i % 11 == 0 (5005 again) */
    assert_non_null(strstr(got, "a|3|"));
}

static void still_after_a_delete(void **state)
{
    fixture *f = *state;
    const char *mq = "query del($lo: I64, $hi: I64) { delete T where v >= $lo and v < $hi }\n";
    json_t *pj = json_pack("{s:i,s:i}", "lo", 3000, "hi", 150000);
    og_write_result w;
    og_status st = og_engine_mutate(f->e, "m.gq", mq, strlen(mq), "del", pj, NULL, &w, NULL);
    json_decref(pj);
    if (st) fail_msg("delete: %s", og_error_message());
    compare_all(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(typed_and_generic_paths_agree),
        cmocka_unit_test(still_after_a_delete),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
