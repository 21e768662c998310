/*
 * test_server_cache.c — the read path's caches never serve stale data.  A server compiles a
 * repeated query once per schema and reuses the branch head while it is unchanged; these
 * tests repeat ONE query text against server A while the graph changes underneath it through
 * another server process (B) and through an embedded handle in this process: every write is
 * visible to A's next read, and a schema change by B makes A compile the same text again
 * (a query that no longer type-checks is refused, not answered from the old plan).  Also:
 * every request's audit line is in the log once the server has stopped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], graph[128], graph_uri[128], logpath[128];
static srv a, b; /* stopped by teardown too, when an assertion ended the test early */

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvcache-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(graph_uri, sizeof graph_uri, "%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    curl_global_init(CURL_GLOBAL_ALL);
    return 0;
}

static int teardown(void **state)
{
    if (srv_alive(&a)) srv_stop(&a);
    if (srv_alive(&b)) srv_stop(&b);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

/* THE query text every read below repeats (only its parameter changes). */
static const char *LOOKUP = "{\"query\":\"query q($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age } "
                            "}\",\"params\":{\"n\":\"%s\"}}";

/* Rows of the lookup of `name` through s (-1 when the status is not 200; *status gets it). */
static int lookup(const srv *s, const char *name, long *status)
{
    char body[512];
    snprintf(body, sizeof body, LOOKUP, name);
    http_resp r = post_json(s, NULL, "/graphs/g1/query", body);
    if (status) *status = r.status;
    int n = r.status == 200 ? (int)json_integer_value(json_object_get(r.json, "row_count")) : -1;
    http_free(&r);
    return n;
}

static long insert_via(const srv *s, const char *name)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"query\":\"query a($n: String) { insert Person { name: $n, age: 7 } }\",\"params\":{\"n\":\"%s\"}}", name);
    http_resp r = post_json(s, NULL, "/graphs/g1/mutate", body);
    long st = r.status;
    http_free(&r);
    return st;
}

static void test_writes_elsewhere_are_visible(void **state)
{
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--threads", "2", NULL};
    assert_int_equal(srv_start(&a, logpath, args), 0);
    assert_int_equal(srv_start(&b, logpath, args), 0);
    /* warm A: the same text many times */
    for (int i = 0; i < 20; i++) assert_int_equal(lookup(&a, "Ada", NULL), 1);
    for (int round = 0; round < 10; round++) {
        char name[32];
        /* a write through server B (another process) is visible to A's very next read */
        snprintf(name, sizeof name, "viaB-%d", round);
        assert_int_equal(lookup(&a, name, NULL), 0);
        assert_int_equal(insert_via(&b, name), 200);
        assert_int_equal(lookup(&a, name, NULL), 1);
        /* and one through an embedded handle of this process */
        snprintf(name, sizeof name, "viaE-%d", round);
        assert_int_equal(lookup(&a, name, NULL), 0);
        og_db *db;
        assert_int_equal(og_db_open(&db, graph_uri, NULL), OG_OK);
        char params[64];
        snprintf(params, sizeof params, "{\"n\":\"%s\"}", name);
        const char *ins = "query a($n: String) { insert Person { name: $n } }";
        og_receipt rc;
        assert_int_equal(og_db_mutate(&rc, db, ins, strlen(ins), NULL, params, NULL, NULL), OG_OK);
        og_db_close(db);
        assert_int_equal(lookup(&a, name, NULL), 1);
        /* and A's own write, read back by B */
        snprintf(name, sizeof name, "viaA-%d", round);
        assert_int_equal(lookup(&b, name, NULL), 0);
        assert_int_equal(insert_via(&a, name), 200);
        assert_int_equal(lookup(&b, name, NULL), 1);
    }
    /* a branch created elsewhere, then written: A reads the new branch's head */
    http_resp r = post_json(&b, NULL, "/graphs/g1/branches", "{\"name\":\"side\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    char body[512];
    snprintf(body, sizeof body, LOOKUP, "Ada");
    body[strlen(body) - 1] = 0;
    strcat(body, ",\"branch\":\"side\"}");
    r = post_json(&a, NULL, "/graphs/g1/query", body);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    http_free(&r);

    r = http(&b, "DELETE", "/graphs/g1/branches/side", NULL, NULL, 0); /* schema apply needs main alone */
    assert_int_equal(r.status, 200);
    http_free(&r);

    /* a schema change through B: the text A has compiled no longer type-checks (age is
     * gone), and A says so instead of answering from its cached plan */
    r = post_json(&b, NULL, "/graphs/g1/schema/apply",
                  "{\"schema_source\":\"node Person { name: String @key }\\nnode Note { title: String  body: String? }\\n"
                  "edge Knows: Person -> Person\\n\",\"allow_data_loss\":true}");
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "applied")));
    http_free(&r);
    long st;
    assert_int_equal(lookup(&a, "Ada", &st), -1);
    assert_int_equal(st, 400);
    /* the schema comes back (age again, other data): the same text compiles and answers */
    r = post_json(&b, NULL, "/graphs/g1/schema/apply",
                  "{\"schema_source\":\"node Person { name: String @key  age: I32? }\\nnode Note { title: String  body: "
                  "String? }\\nedge Knows: Person -> Person\\n\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    assert_int_equal(lookup(&a, "Ada", &st), 1);

    unsigned requests = 0;
    assert_int_equal(srv_stop(&a), 0);
    assert_int_equal(srv_stop(&b), 0);
    /* every request of both servers has its audit line, each a whole JSON object */
    FILE *f = fopen(logpath, "r");
    assert_non_null(f);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (line[0] != '{') continue;
        json_t *o = json_loads(line, 0, NULL);
        assert_non_null(o);
        const char *ev = jstr(o, "event");
        if (ev && !strcmp(ev, "request")) requests++;
        json_decref(o);
    }
    fclose(f);
    /* A: 20 + 10 * 5 + 3 requests, B: 10 * 3 + 4: 107 in all */
    assert_int_equal(requests, 107);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_elsewhere_are_visible),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
