/*
 * test_explain.c — filter placement and the plan text of `query --explain`.
 *
 * Placement is measured by the work a query does, not by time: og_result.rows_through sums
 * the rows every operator produced.  A generated graph and queries whose filter reads two
 * bindings run with placement off (the filter after every traversal, as the compiler writes
 * it) and on: same rows, several times fewer intermediate rows.  The explain text of a few
 * queries over a small fixed graph is pinned line for line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "engine/exec.h"
#include "fixture.h"

#define SCHEMA                                                                                    \
    "node Person {\n  name: String @key\n  age: I32?\n}\n"                                         \
    "node Company {\n  name: String @key\n}\n"                                                     \
    "edge Knows: Person -> Person\n"                                                               \
    "edge WorksAt: Person -> Company\n"

#define QUERIES                                                                                   \
    "query older_chain() {\n"                                                                     \
    "  match {\n    $a: Person\n    $a knows $b\n    $b knows $c\n    $c knows $d\n"              \
    "    $a.age > $b.age\n  }\n  return { count($d) as n }\n}\n"                                  \
    "query same_age_pairs() {\n"                                                                  \
    "  match {\n    $a: Person\n    $a knows $c\n    $b: Person\n    $b knows $d\n"               \
    "    $a.age = $b.age\n  }\n  return { count($d) as n }\n}\n"                                  \
    "query by_key($n: String) {\n"                                                                \
    "  match {\n    $p: Person { name: $n }\n    $p knows $f\n    $f.age > 30\n  }\n"             \
    "  return { $f.name }\n}\n"                                                                   \
    "query loners() {\n"                                                                          \
    "  match {\n    $p: Person\n    $c: Company\n    $p.age < 40\n"                               \
    "    not { $p worksAt $c }\n  }\n  return { $p.name, $c.name }\n}\n"                    \
    "query employers() {\n"                                                                       \
    "  match {\n    $p: Person\n    optional { $p worksAt $c }\n  }\n"                          \
    "  return { $p.name, $c.name }\n}\n"                                                                   \
    "query paths() {\n"                                                                           \
    "  match {\n    $a: Person\n    $b: Person\n    $p: shortest { $a knows{1,3} $b }\n  }\n"     \
    "  return { length($p) as n }\n}\n"

/* Deterministic pseudo-random graph: n people, aged 1..20, each knowing `deg` others. */
static char *generated(int n, int deg)
{
    size_t cap = (size_t)n * (64 + (size_t)deg * 64), w = 0;
    char *s = malloc(cap);
    uint32_t x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        w += (size_t)snprintf(s + w, cap - w, "{\"type\":\"Person\",\"data\":{\"name\":\"p%d\",\"age\":%u}}\n", i,
                              1 + (x >> 16) % 20);
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < deg; k++) {
            x = x * 1103515245u + 12345u;
            w += (size_t)snprintf(s + w, cap - w, "{\"edge\":\"Knows\",\"from\":\"p%d\",\"to\":\"p%u\"}\n", i,
                                  (x >> 16) % (unsigned)n);
        }
    return s;
}

static og_status run(fixture *f, const char *name, og_result *r)
{
    return og_engine_query(f->e, NULL, NULL, "q.gq", f->queries, strlen(f->queries), name, NULL, r, NULL);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void compare_placement(fixture *f, const char *name, double min_ratio)
{
    og_result off, on;
    og_exec_place_filters = 0;
    double t0 = now_s();
    og_status st = run(f, name, &off);
    double t1 = now_s();
    og_exec_place_filters = 1;
    if (st) fail_msg("%s: %s", name, og_error_message());
    if (run(f, name, &on)) fail_msg("%s: %s", name, og_error_message());
    double t2 = now_s();
    if (getenv("OG_EXPLAIN_BENCH")) print_message("%s: %.3f s as written, %.3f s placed\n", name, t1 - t0, t2 - t1);
    char a[256], b[256];
    fixture_render(&off, a, sizeof a);
    fixture_render(&on, b, sizeof b);
    assert_string_equal(a, b);
    print_message("%s: n=%s, rows through the pipeline %llu as written, %llu placed (peak %llu -> %llu)\n", name, b,
                  (unsigned long long)off.rows_through, (unsigned long long)on.rows_through,
                  (unsigned long long)off.rows_peak, (unsigned long long)on.rows_peak);
    if ((double)off.rows_through < min_ratio * (double)on.rows_through)
        fail_msg("%s: %llu vs %llu intermediate rows, expected a %.1fx reduction", name,
                 (unsigned long long)off.rows_through, (unsigned long long)on.rows_through, min_ratio);
    og_result_free(&off);
    og_result_free(&on);
}

static void a_filter_over_two_bindings_runs_once_both_exist(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    /* OG_EXPLAIN_BENCH=N: N people instead of 120, and timings (docs/benchmarks.md) */
    const char *bench = getenv("OG_EXPLAIN_BENCH");
    char *data = generated(bench ? atoi(bench) : 120, 4);
    assert_int_equal(fixture_load(f, data, OG_LOAD_OVERWRITE, NULL), OG_OK);
    free(data);
    /* one component: $a.age > $b.age right after $a knows $b, before two more hops */
    compare_placement(f, "older_chain", 1.5);
    /* two components: the filter right after the cross join, before $b knows $d */
    compare_placement(f, "same_age_pairs", 3);
    fixture_free(f);
}

static char *explain(fixture *f, const char *name, const char *params, int run_it)
{
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_buf b = OG_BUF_INIT;
    og_status st =
        og_engine_query_explain(f->e, NULL, NULL, "q.gq", f->queries, strlen(f->queries), name, pj, run_it, &b, NULL);
    json_decref(pj);
    if (st) fail_msg("%s: %s", name, og_error_message());
    char *s = strdup(og_buf_cstr(&b));
    og_buf_free(&b);
    return s;
}

#define EXPECT_PLAN(f, name, params, run_it, want)                                                  \
    do {                                                                                            \
        char *got_ = explain((f), (name), (params), (run_it));                                      \
        if (strcmp(got_, (want))) fail_msg("%s:\n--- got\n%s--- want\n%s", (name), got_, (want));   \
        free(got_);                                                                                 \
    } while (0)

static const char *SEED = "{\"type\":\"Person\",\"data\":{\"name\":\"ann\",\"age\":34}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"bo\",\"age\":52}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"cy\",\"age\":19}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"dee\",\"age\":41}}\n"
                          "{\"type\":\"Company\",\"data\":{\"name\":\"acme\"}}\n"
                          "{\"type\":\"Company\",\"data\":{\"name\":\"globex\"}}\n"
                          "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"bo\"}\n"
                          "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"cy\"}\n"
                          "{\"edge\":\"Knows\",\"from\":\"bo\",\"to\":\"dee\"}\n"
                          "{\"edge\":\"Knows\",\"from\":\"cy\",\"to\":\"ann\"}\n"
                          "{\"edge\":\"Knows\",\"from\":\"dee\",\"to\":\"ann\"}\n"
                          "{\"edge\":\"Knows\",\"from\":\"dee\",\"to\":\"cy\"}\n"
                          "{\"edge\":\"WorksAt\",\"from\":\"ann\",\"to\":\"acme\"}\n"
                          "{\"edge\":\"WorksAt\",\"from\":\"cy\",\"to\":\"globex\"}\n";

static void explain_text_is_pinned(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    EXPECT_ROWS(f, "loners", NULL, "cy|acme;ann|globex");
    EXPECT_PLAN(f, "by_key", "{\"n\":\"ann\"}", 0,
                "query by_key: 2 steps, filters placed early\n"
                "1. scan $p: Person  access=key_lookup  est=1\n"
                "     pushed: $p.name = $n\n"
                "2. expand $p -[Knows out 1..1]-> $f: Person  traversal=csr  est=0.5\n"
                "     pushed: $f.age > 30\n"
                "pipeline: est=0.5\n");
    EXPECT_PLAN(f, "by_key", "{\"n\":\"ann\"}", 1,
                "query by_key: 2 steps, filters placed early\n"
                "1. scan $p: Person  access=key_lookup  est=1  rows=1\n"
                "     pushed: $p.name = $n\n"
                "2. expand $p -[Knows out 1..1]-> $f: Person  traversal=csr  est=0.5  rows=1\n"
                "     pushed: $f.age > 30\n"
                "pipeline: est=0.5  rows_through=2  rows_peak=1  result_rows=1\n");
    EXPECT_PLAN(f, "by_key", "{\"n\":\"zed\"}", 1,
                "query by_key: 2 steps, filters placed early\n"
                "1. scan $p: Person  access=key_lookup  est=0  rows=0\n"
                "     pushed: $p.name = $n\n"
                "2. expand $p -[Knows out 1..1]-> $f: Person  traversal=csr  est=0  rows=0\n"
                "     pushed: $f.age > 30\n"
                "pipeline: est=0  rows_through=0  rows_peak=0  result_rows=0\n");
    EXPECT_PLAN(f, "older_chain", NULL, 1,
                "query older_chain: 5 steps, filters placed early\n"
                "1. scan $a: Person  access=full_scan  est=4  rows=4\n"
                "2. expand $a -[Knows out 1..1]-> $b: Person  traversal=csr  est=6  rows=6\n"
                "3. filter $a.age > $b.age  est=2  rows=4  placed_from=5\n"
                "4. expand $b -[Knows out 1..1]-> $c: Person  traversal=csr  est=3  rows=6\n"
                "5. expand $c -[Knows out 1..1]-> $d: Person  traversal=csr  est=4.5  rows=9\n"
                "pipeline: est=4.5  rows_through=29  rows_peak=9  result_rows=1\n");
    EXPECT_PLAN(f, "loners", NULL, 1,
                "query loners: 4 steps, filters placed early\n"
                "1. scan $p: Person  access=full_scan  est=1.3  rows=2\n"
                "     pushed: $p.age < 40\n"
                "2. scan $c: Company  access=full_scan  join=cross  est=2.7  rows=4\n"
                "3. anti_join not {...} on $p, $c  est=1.3  rows=2\n"
                "  3.1. expand $p -[WorksAt out 1..1]-> $c: Company  traversal=reach_check  est=0.67  rows=2\n"
                "pipeline: est=1.3  rows_through=10  rows_peak=4  result_rows=2\n");
    /* optional { }: a left join, every person kept (those without an employer once) */
    EXPECT_PLAN(f, "employers", NULL, 1,
                "query employers: 3 steps, filters placed early\n"
                "1. scan $p: Person  access=full_scan  est=4  rows=4\n"
                "2. left_join optional {...} on $p  est=4  rows=4\n"
                "  2.1. expand $p -[WorksAt out 1..1]-> $c: Company  traversal=csr  est=2  rows=2\n"
                "pipeline: est=4  rows_through=10  rows_peak=4  result_rows=4\n");
    /* a shortest path: one search per destination, rows without a path dropped */
    EXPECT_PLAN(f, "paths", NULL, 1,
                "query paths: 3 steps, filters placed early\n"
                "1. scan $a: Person  access=full_scan  est=4  rows=4\n"
                "2. scan $b: Person  access=full_scan  join=cross  est=16  rows=16\n"
                "3. shortest $p = $a -[Knows out 1..3]-> $b: Person  traversal=bfs_from_destination  est=8  rows=12\n"
                "pipeline: est=8  rows_through=32  rows_peak=16  result_rows=12\n");
    /* an equality across components is a hash join: only the 6 matching pairs are formed */
    EXPECT_PLAN(f, "same_age_pairs", NULL, 1,
                "query same_age_pairs: 5 steps, filters placed early\n"
                "1. scan $a: Person  access=full_scan  est=4  rows=4\n"
                "2. expand $a -[Knows out 1..1]-> $c: Person  traversal=csr  est=6  rows=6\n"
                "3. scan $b: Person  access=full_scan  join=hash  est=2.4  rows=6\n"
                "4. filter $a.age = $b.age  est=2.4  rows=6  placed_from=5  hash_key\n"
                "5. expand $b -[Knows out 1..1]-> $d: Person  traversal=csr  est=3.6  rows=10\n"
                "pipeline: est=3.6  rows_through=32  rows_peak=10  result_rows=1\n");
    /* ... the same answer as the cross join filtered during the join */
    og_exec_hash_join = 0;
    EXPECT_PLAN(f, "same_age_pairs", NULL, 1,
                "query same_age_pairs: 5 steps, filters placed early\n"
                "1. scan $a: Person  access=full_scan  est=4  rows=4\n"
                "2. expand $a -[Knows out 1..1]-> $c: Person  traversal=csr  est=6  rows=6\n"
                "3. scan $b: Person  access=full_scan  join=cross  est=24  rows=24\n"
                "4. filter $a.age = $b.age  est=2.4  rows=6  placed_from=5  during_join\n"
                "5. expand $b -[Knows out 1..1]-> $d: Person  traversal=csr  est=3.6  rows=10\n"
                "pipeline: est=3.6  rows_through=50  rows_peak=10  result_rows=1\n");
    og_exec_hash_join = 1;
    og_exec_place_filters = 0;
    EXPECT_PLAN(f, "older_chain", NULL, 0,
                "query older_chain: 5 steps, filters placed as written\n"
                "1. scan $a: Person  access=full_scan  est=4\n"
                "2. expand $a -[Knows out 1..1]-> $b: Person  traversal=csr  est=6\n"
                "3. expand $b -[Knows out 1..1]-> $c: Person  traversal=csr  est=9\n"
                "4. expand $c -[Knows out 1..1]-> $d: Person  traversal=csr  est=14\n"
                "5. filter $a.age > $b.age  est=4.5\n"
                "pipeline: est=4.5\n");
    og_exec_place_filters = 1;
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_filter_over_two_bindings_runs_once_both_exist),
        cmocka_unit_test(explain_text_is_pinned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
