/*
 * test_server_budget.c — server-wide default query budgets (--query-timeout,
 * --query-max-memory, $OMNIGRAPH_QUERY_TIMEOUT / $OMNIGRAPH_QUERY_MAX_MEMORY): a runaway
 * query (a sorted cross product of 3,000 people: 9M rows, seconds of CPU even in a release
 * build on an idle machine) is stopped promptly with the typed limit error — 413, code
 * bad_request, resource_limit naming the budget — and the server stays up and answers the
 * next query.  Malformed values refuse to start.
 *
 * The time budgets (1.5 s, 2 s) apply to every query of the server, the small one after the
 * runaway included: they are long enough for it on a machine at load 30 (a budget of 150 ms
 * once stopped it there: a wall-clock budget counts the time the query waits for a CPU),
 * and the runaway still needs several times more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static srv s; /* stopped by teardown too, when an assertion ended a test early */
static char dir[64], graph[128], logpath[128];

#define PEOPLE 3000

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvbudget-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    if (make_graph_of(dir, "g", PEOPLE)) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    curl_global_init(CURL_GLOBAL_ALL);
    return 0;
}

static int teardown(void **state)
{
    if (srv_alive(&s)) srv_stop(&s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

static const char *RUNAWAY = "{\"query\":\"query q() { match { $a: Person  $b: Person } return { $a.name, $b.age } "
                             "order { $b.age, $a.name } }\"}";
static const char *SMALL = "{\"query\":\"query q() { match { $p: Person { name: \\\"p7\\\" } } return { $p.age } }\"}";

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs the runaway through s: 413 with resource_limit{resource, limit}, then a small query
 * answers 200. */
static void runaway_is_stopped(const srv *sv, const char *resource, long long limit)
{
    int64_t t0 = now_ms();
    http_resp r = post_json(sv, NULL, "/graphs/g1/query", RUNAWAY);
    int64_t took = now_ms() - t0;
    if (r.status != 413) fprintf(stderr, "runaway: %ld %s\n", r.status, r.body ? r.body : "");
    assert_int_equal(r.status, 413);
    assert_string_equal(jstr(r.json, "code"), "bad_request");
    assert_non_null(strstr(jstr(r.json, "error"), "query stopped"));
    json_t *d = json_object_get(r.json, "resource_limit");
    assert_non_null(d);
    assert_string_equal(jstr(d, "resource"), resource);
    assert_int_equal(json_integer_value(json_object_get(d, "limit")), limit);
    http_free(&r);
    assert_true(took < 60000); /* promptly, not after the whole product was sorted */
    assert_true(srv_alive(sv));
    r = post_json(sv, NULL, "/graphs/g1/query", SMALL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    http_free(&r);
}

static void test_time_budget_flag(void **state)
{
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--query-timeout", "1500ms", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    runaway_is_stopped(&s, "query_time_ms", 1500);
    runaway_is_stopped(&s, "query_time_ms", 1500); /* again: the handle is fine */
    assert_int_equal(srv_stop(&s), 0);
}

static void test_memory_budget_env(void **state)
{
    setenv("OMNIGRAPH_QUERY_MAX_MEMORY", "4M", 1);
    setenv("OMNIGRAPH_QUERY_TIMEOUT", "unlimited", 1);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    int rc = srv_start(&s, logpath, args);
    unsetenv("OMNIGRAPH_QUERY_MAX_MEMORY");
    unsetenv("OMNIGRAPH_QUERY_TIMEOUT");
    assert_int_equal(rc, 0);
    runaway_is_stopped(&s, "query_memory_bytes", 4 << 20);
    assert_int_equal(srv_stop(&s), 0);
}

static void test_env_time_and_flag_wins(void **state)
{
    setenv("OMNIGRAPH_QUERY_TIMEOUT", "1h", 1);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--query-timeout", "2000", NULL};
    int rc = srv_start(&s, logpath, args);
    unsetenv("OMNIGRAPH_QUERY_TIMEOUT");
    assert_int_equal(rc, 0);
    runaway_is_stopped(&s, "query_time_ms", 2000); /* the flag wins over the environment */
    assert_int_equal(srv_stop(&s), 0);
}

/* dir/notes: 100 Note rows whose bodies are 10 KB each. */
static int make_notes_graph(void)
{
    char uri[160], data[160];
    snprintf(uri, sizeof uri, "%s/notes", dir);
    snprintf(data, sizeof data, "%s/notes.jsonl", dir);
    og_db *db;
    if (og_db_init(&db, uri, "test.pg", TEST_SCHEMA, strlen(TEST_SCHEMA), NULL)) return -1;
    FILE *f = fopen(data, "w");
    if (!f) return og_db_close(db), -1;
    for (int i = 0; i < 100; i++) {
        fprintf(f, "{\"type\":\"Note\",\"data\":{\"title\":\"n%d\",\"body\":\"", i);
        for (int k = 0; k < 1000; k++) fprintf(f, "note%05d.", i);
        fputs("\"}}\n", f);
    }
    fclose(f);
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt r;
    og_status st = og_db_load(&r, db, data, &lo);
    og_db_close(db);
    return st ? -1 : 0;
}

static void test_time_budget_covers_rendering(void **state)
{
    assert_int_equal(make_notes_graph(), 0);
    char notes[160];
    snprintf(notes, sizeof notes, "g2=%s/notes", dir);
    const char *args[] = {"--graph", notes, "--bind", "127.0.0.1:0", "--unauthenticated", "--query-timeout", "4s", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    const char *big = "{\"query\":\"query q() { match { $a: Note  $b: Note } return { $a.body, $b.title } }\"}";
    int64_t t0 = now_ms();
    http_resp r = post_json(&s, NULL, "/graphs/g2/query", big);
    int64_t took = now_ms() - t0;
    if (r.status != 413) fprintf(stderr, "big result: %ld after %lld ms, %zu bytes\n", r.status, (long long)took,
                                 r.body ? strlen(r.body) : 0);
    assert_int_equal(r.status, 413);
    assert_non_null(strstr(jstr(r.json, "error"), "stopped: time budget of 4000 ms exceeded"));
    assert_string_equal(jstr(json_object_get(r.json, "resource_limit"), "resource"), "query_time_ms");
    http_free(&r);
    assert_true(took < 15000); /* at the budget, not after the whole document was written */
    /* one page of the same query fits the budget: max_rows bounds what is rendered */
    const char *page = "{\"query\":\"query q() { match { $a: Note  $b: Note } return { $a.body, $b.title } }\","
                       "\"max_rows\":3}";
    r = post_json(&s, NULL, "/graphs/g2/query", page);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 3);
    assert_int_equal(json_integer_value(json_object_get(r.json, "total_rows")), 10000);
    assert_true(json_is_true(json_object_get(r.json, "truncated")));
    http_free(&r);
    assert_int_equal(srv_stop(&s), 0);
}

static void test_malformed_values_refuse_to_start(void **state)
{
    const char *a1[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--query-timeout", "soon", NULL};
    assert_true(srv_start_fails(logpath, a1));
    const char *a2[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--query-max-memory", "-5M", NULL};
    assert_true(srv_start_fails(logpath, a2));
    const char *a3[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--query-timeout", "0", NULL};
    assert_true(srv_start_fails(logpath, a3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_budget_flag),
        cmocka_unit_test(test_memory_budget_env),
        cmocka_unit_test(test_env_time_and_flag_wins),
        cmocka_unit_test(test_malformed_values_refuse_to_start),
        cmocka_unit_test(test_time_budget_covers_rendering),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
