/*
 * test_budget.c — per-query budgets (docs/maintenance.md "Query budgets"): a runaway dense
 * multi-hop over a generated graph and a huge sort stop promptly with OG_ERR_LIMIT naming the
 * budget (time or memory), per call and per handle; the handle answers the next query
 * normally; an unlimited budget lets the same query finish; a cancel flag (Ctrl-C in the
 * shell) stops a running query, and the flag cleared, the next one runs; rendering held to the
 * query's budget (og_rows_render_in_budget) stops once that budget, counted from the query's
 * start, is spent, while plain og_rows_render is not held to it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "omnigraph.h"

typedef struct ctx {
    char dir[64], uri[96], data[96];
    og_db *db;
} ctx;

static const char *SCHEMA = "node P { name: String @key  n: I32? }\nedge K: P -> P\n";
#define NODES 3000
#define DEGREE 8

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-budget-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    snprintf(c->data, sizeof c->data, "%s/in.jsonl", c->dir);
    if (og_db_init(&c->db, c->uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    FILE *f = fopen(c->data, "w");
    if (!f) return -1;
    for (int i = 0; i < NODES; i++) fprintf(f, "{\"type\":\"P\",\"data\":{\"name\":\"p%d\",\"n\":%d}}\n", i, (i * 7919) % NODES);
    for (int i = 0; i < NODES; i++)
        for (int k = 1; k <= DEGREE; k++) fprintf(f, "{\"edge\":\"K\",\"from\":\"p%d\",\"to\":\"p%d\"}\n", i, (i * 31 + k * 977) % NODES);
    fclose(f);
    og_load_opts o;
    memset(&o, 0, sizeof o);
    o.mode = OG_LOAD_OVERWRITE;
    og_receipt r;
    if (og_db_load(&r, c->db, c->data, &o) != OG_OK) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) fprintf(stderr, "rm failed\n");
    free(c);
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* every pair of nodes 1..4 hops apart: millions of rows, then sorted */
static const char *RUNAWAY = "query q() { match { $a: P  $a k{1,4} $b } return { $a.name, $b.name } order { $b.name } }";
/* a cross product sorted: 9M rows */
static const char *HUGE_SORT = "query q() { match { $a: P  $b: P } return { $a.name, $b.n } order { $b.n, $a.name } }";
static const char *SMALL = "query q() { match { $p: P { name: \"p1\" } } return { $p.n } }";

static void small_query_still_works(ctx *c)
{
    og_rows *r;
    assert_int_equal(og_db_query(&r, c->db, SMALL, strlen(SMALL), NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_rows_count(r), 1);
    og_rows_free(r);
}

static void a_runaway_multi_hop_stops_on_its_time_budget(void **state)
{
    ctx *c = *state;
    og_budget b = {300, -1};
    og_rows *r = NULL;
    int64_t t0 = now_ms();
    og_status st = og_db_query_budget(&r, c->db, RUNAWAY, strlen(RUNAWAY), NULL, NULL, NULL, &b);
    int64_t took = now_ms() - t0;
    assert_int_equal(st, OG_ERR_LIMIT);
    assert_null(r);
    assert_non_null(strstr(og_error_message(), "time budget of 300 ms"));
    assert_true(took < 300 + 5000); /* promptly (generous for sanitizer builds) */
    small_query_still_works(c);
}

static void a_huge_sort_stops_on_its_memory_budget(void **state)
{
    ctx *c = *state;
    og_budget b = {-1, 8 << 20}; /* 8 MiB of intermediate results */
    og_rows *r = NULL;
    og_status st = og_db_query_budget(&r, c->db, HUGE_SORT, strlen(HUGE_SORT), NULL, NULL, NULL, &b);
    assert_int_equal(st, OG_ERR_LIMIT);
    assert_non_null(strstr(og_error_message(), "memory budget of 8388608 bytes"));
    small_query_still_works(c);
    /* the handle's budget applies to every later query; a per-call one overrides it */
    og_budget h = {200, -1};
    og_db_set_budget(c->db, &h);
    st = og_db_query(&r, c->db, HUGE_SORT, strlen(HUGE_SORT), NULL, NULL, NULL);
    assert_int_equal(st, OG_ERR_LIMIT);
    assert_non_null(strstr(og_error_message(), "time budget of 200 ms"));
    small_query_still_works(c);
    og_db_set_budget(c->db, NULL);
}

static void within_its_budget_a_query_finishes(void **state)
{
    ctx *c = *state;
    const char *q = "query q() { match { $a: P { name: \"p0\" }  $a k{1,2} $b } return { count($b) as n } }";
    og_budget b = {-1, -1};
    og_rows *r = NULL;
    assert_int_equal(og_db_query_budget(&r, c->db, q, strlen(q), NULL, NULL, NULL, &b), OG_OK);
    assert_true(og_rows_int(r, 0, 0) > 0);
    og_rows_free(r);
}

static volatile int cancel_flag;

static void *cancel_after_200ms(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cancel_flag = 1;
    return NULL;
}

static void a_set_cancel_flag_stops_a_running_query(void **state)
{
    ctx *c = *state;
    og_db_set_cancel(c->db, &cancel_flag);
    cancel_flag = 0;
    og_budget b = {-1, -1}; /* no time budget: only the flag can stop it */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, cancel_after_200ms, NULL), 0);
    og_rows *r = NULL;
    int64_t t0 = now_ms();
    og_status st = og_db_query_budget(&r, c->db, RUNAWAY, strlen(RUNAWAY), NULL, NULL, NULL, &b);
    int64_t took = now_ms() - t0;
    pthread_join(t, NULL);
    assert_int_equal(st, OG_ERR_LIMIT);
    assert_null(r);
    assert_string_equal(og_error_message(), "query cancelled");
    assert_true(took < 200 + 5000);
    /* while the flag stays set, the next query is refused too; cleared, it runs */
    assert_int_equal(og_db_query(&r, c->db, SMALL, strlen(SMALL), NULL, NULL, NULL), OG_ERR_LIMIT);
    cancel_flag = 0;
    small_query_still_works(c);
    og_db_set_cancel(c->db, NULL);
}

/* The budget a server gives a query covers its rendering: og_rows_render_in_budget counts from
 * when the query began, so rows whose budget is spent before (or while) they are rendered
 * stop with the typed time limit; og_rows_render itself is not held to any budget. */
static void rendering_in_budget_counts_from_the_query_start(void **state)
{
    ctx *c = *state;
    const char *all = "query q() { match { $p: P } return { $p.name, $p.n } }";
    og_budget tight = {300, 0};
    og_rows *r;
    for (int fmt = 0; fmt < 3; fmt++) {
        static const og_format fmts[] = {OG_FORMAT_JSON, OG_FORMAT_ARROW, OG_FORMAT_CSV};
        assert_int_equal(og_db_query_budget(&r, c->db, all, strlen(all), "q", NULL, NULL, &tight), OG_OK);
        usleep(400 * 1000); /* the whole budget passes between the query and its rendering */
        char *out = (char *)1;
        size_t len;
        assert_int_equal(og_rows_render_in_budget(&out, &len, r, fmts[fmt], "main"), OG_ERR_LIMIT);
        assert_null(out);
        assert_non_null(strstr(og_error_message(), "rendering its rows"));
        assert_non_null(strstr(og_error_message(), "time budget of 300 ms exceeded"));
        assert_int_equal(og_rows_render(&out, &len, r, fmts[fmt], "main"), OG_OK); /* not held to it */
        og_free(out);
        og_rows_free(r);
    }
    /* within the budget, or without one, the same rows render */
    og_budget ample = {60000, 0}, none = {-1, 0};
    assert_int_equal(og_db_query_budget(&r, c->db, all, strlen(all), "q", NULL, NULL, &ample), OG_OK);
    char *out;
    size_t len;
    assert_int_equal(og_rows_render_in_budget(&out, &len, r, OG_FORMAT_JSON, "main"), OG_OK);
    assert_non_null(strstr(out, "\"row_count\": 3000"));
    og_free(out);
    og_rows_free(r);
    assert_int_equal(og_db_query_budget(&r, c->db, all, strlen(all), "q", NULL, NULL, &none), OG_OK);
    usleep(50 * 1000);
    assert_int_equal(og_rows_render_in_budget(&out, &len, r, OG_FORMAT_JSON, "main"), OG_OK);
    og_free(out);
    og_rows_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_runaway_multi_hop_stops_on_its_time_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(a_huge_sort_stops_on_its_memory_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(within_its_budget_a_query_finishes, setup, teardown),
        cmocka_unit_test_setup_teardown(a_set_cancel_flag_stops_a_running_query, setup, teardown),
        cmocka_unit_test_setup_teardown(rendering_in_budget_counts_from_the_query_start, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
