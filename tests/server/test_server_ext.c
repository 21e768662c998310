/*
 * test_server_ext.c — the routes OmniGraph-C adds for the CLI's served verbs (docs/server.md):
 * POST …/query/explain, GET …/diff, …/load/ndjson/if-graph-commit, the merge's
 * `strategy`, `snapshot` on GET …/snapshot and POST …/export, and POST /graphs + DELETE
 * /graphs/{id} under --graph-dir (refused without it, decided as `admin`, boot graphs never
 * deleted, a deleted graph's directory gone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "server_client.h"

static char dir[64];
static srv S;     /* --graph g1 --graph-dir DIR/made, unauthenticated */
static srv PLAIN; /* --graph g1 only, tokens without a policy (DefaultDeny) */
static srv DENY;  /* --graph-dir, tokens without a policy: `admin` is denied */

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-srvext-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    char graph[128], made[128], log[128], log2[128];
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(made, sizeof made, "%s/made", dir);
    if (mkdir(made, 0700)) return -1;
    snprintf(log, sizeof log, "%s/server.log", dir);
    snprintf(log2, sizeof log2, "%s/plain.log", dir);
    const char *args[] = {"--graph", graph, "--graph-dir", made, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    if (srv_start(&S, log, args)) return -1;
    setenv("OMNIGRAPH_SERVER_BEARER_TOKEN", "tok", 1);
    const char *args2[] = {"--graph", graph, "--bind", "127.0.0.1:0", NULL};
    int rc = srv_start(&PLAIN, log2, args2);
    char log3[128];
    snprintf(log3, sizeof log3, "%s/deny.log", dir);
    const char *args3[] = {"--graph", graph, "--graph-dir", made, "--bind", "127.0.0.1:0", NULL};
    if (!rc) rc = srv_start(&DENY, log3, args3);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    int rc = srv_stop(&S) | srv_stop(&PLAIN) | srv_stop(&DENY);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

static void head_of(const char *graph, const char *branch, char out[64])
{
    char path[200];
    snprintf(path, sizeof path, "/graphs/%s/commits?branch=%s", graph, branch);
    http_resp r = get(&S, NULL, path);
    assert_int_equal(r.status, 200);
    snprintf(out, 64, "%s", jstr(json_array_get(json_object_get(r.json, "commits"), 0), "graph_commit_id"));
    http_free(&r);
}

static void test_explain(void **state)
{
    (void)state;
    http_resp r = post_json(&S, NULL, "/graphs/g1/query/explain",
                            "{\"query\":\"query q() { match { $p: Person { name: \\\"Ada\\\" } } return { $p.age } }\"}");
    assert_int_equal(r.status, 200);
    const char *plan = jstr(r.json, "plan");
    assert_non_null(plan);
    assert_non_null(strstr(plan, "key_lookup"));
    assert_null(strstr(plan, "rows=")); /* no analyze: nothing ran */
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/query/explain",
                  "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\",\"analyze\":true}");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(jstr(r.json, "plan"), "rows=2")); /* analyze: the two people it read */
    http_free(&r);
    /* a type error is the /query's 400 with its class; an unknown field and a bad analyze 400 */
    r = post_json(&S, NULL, "/graphs/g1/query/explain", "{\"query\":\"query q() { match { $p: Persn } return { $p.name } }\"}");
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.headers, "Omnigraph-Error-Class: type"));
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/query/explain", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\",\"x\":1}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/query/explain", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\",\"analyze\":\"yes\"}");
    assert_int_equal(r.status, 400);
    http_free(&r);
}

/* load CAS, range diff, snapshot and export at a commit — one history */
static void test_cas_diff_at(void **state)
{
    (void)state;
    char before[64], path[256];
    head_of("g1", "main", before);
    const char *batch = "{\"type\":\"Person\",\"data\":{\"name\":\"Grace\",\"age\":85}}\n";
    char cas[128];
    snprintf(cas, sizeof cas, "Omnigraph-If-Graph-Commit: %s", before);
    const char *h[] = {"Content-Type: application/x-ndjson", cas, NULL};
    http_resp r = http(&S, "POST", "/graphs/g1/load/ndjson/if-graph-commit?mode=merge", h, batch, strlen(batch));
    assert_int_equal(r.status, 200);
    http_free(&r);
    char after[64];
    head_of("g1", "main", after);
    assert_string_not_equal(before, after);
    /* the same expected head again: 412 with the structured detail, nothing written */
    r = http(&S, "POST", "/graphs/g1/load/ndjson/if-graph-commit?mode=merge", h, batch, strlen(batch));
    assert_int_equal(r.status, 412);
    json_t *pf = json_object_get(r.json, "precondition_failure");
    assert_string_equal(jstr(pf, "expected"), before);
    assert_string_equal(jstr(pf, "actual"), after);
    http_free(&r);
    char now[64];
    head_of("g1", "main", now);
    assert_string_equal(now, after);
    /* the header on the plain route, and the conditional route without it: 400 */
    r = http(&S, "POST", "/graphs/g1/load/ndjson?mode=merge", h, batch, strlen(batch));
    assert_int_equal(r.status, 400);
    http_free(&r);
    const char *h2[] = {"Content-Type: application/x-ndjson", NULL};
    r = http(&S, "POST", "/graphs/g1/load/ndjson/if-graph-commit?mode=merge", h2, batch, strlen(batch));
    assert_int_equal(r.status, 400);
    http_free(&r);

    /* the diff between the two heads: Grace inserted */
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s", before, after);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 200);
    json_t *ch = json_object_get(r.json, "changes");
    assert_int_equal(json_array_size(ch), 1);
    assert_string_equal(jstr(json_array_get(ch, 0), "id"), "Grace");
    assert_string_equal(jstr(json_array_get(ch, 0), "op"), "insert");
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s&op=delete", before, after);
    r = get(&S, NULL, path);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 0);
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/diff?from=main");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/diff?from=main&to=nosuchcommit");
    assert_int_equal(r.status, 404);
    http_free(&r);

    /* snapshot and export at the commit before: no Grace */
    snprintf(path, sizeof path, "/graphs/g1/snapshot?snapshot=%s", before);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "graph_commit_id"), before);
    assert_string_equal(jstr(r.json, "graph_branch"), "main");
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/snapshot?snapshot=%s&branch=main", before);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 400);
    http_free(&r);
    char body[200];
    snprintf(body, sizeof body, "{\"snapshot\":\"%s\",\"type_names\":[\"Person\"]}", before);
    r = post_json(&S, NULL, "/graphs/g1/export", body);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"Ada\""));
    assert_null(strstr(r.body, "Grace"));
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/export", "{\"type_names\":[\"Person\"]}");
    assert_non_null(strstr(r.body, "Grace"));
    http_free(&r);
}

/* a row changed on both sides: the plain merge is 409; `strategy` settles it */
static void test_merge_strategy(void **state)
{
    (void)state;
    http_resp r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"s1\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/mutate",
                  "{\"query\":\"query m() { update Person set { age: 1 } where name = \\\"Ada\\\" }\",\"branch\":\"s1\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/mutate", "{\"query\":\"query m() { update Person set { age: 2 } where name = \\\"Ada\\\" }\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/branches/merge", "{\"source\":\"s1\"}");
    assert_int_equal(r.status, 409);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/branches/merge", "{\"source\":\"s1\",\"strategy\":\"sideways\"}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/branches/merge", "{\"source\":\"s1\",\"strategy\":{\"divergent_update\":\"theirs\"}}");
    assert_int_equal(r.status, 200);
    json_t *res = json_object_get(r.json, "resolved");
    assert_int_equal(json_array_size(res), 1);
    assert_string_equal(jstr(json_array_get(res, 0), "resolution"), "theirs");
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/query", "{\"query\":\"query q() { match { $p: Person { name: \\\"Ada\\\" } } return { $p.age } }\"}");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(r.json, "rows"), 0), "p.age")), 1);
    http_free(&r);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void test_graph_create_delete(void **state)
{
    (void)state;
    const char *body = "{\"graph_id\":\"fresh-1\",\"schema_source\":\"node T { k: String @key }\"}";
    http_resp r = post_json(&S, NULL, "/graphs", body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "graph_id"), "fresh-1");
    http_free(&r);
    char made[128];
    snprintf(made, sizeof made, "%s/made/fresh-1", dir);
    assert_true(exists(made));
    /* it is served, listed, and writable */
    r = post_json(&S, NULL, "/graphs/fresh-1/mutate", "{\"query\":\"query m() { insert T { k: \\\"x\\\" } }\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = get(&S, NULL, "/graphs"); /* answered in --unauthenticated mode (issue 31) */
    assert_int_equal(r.status, 200);
    json_t *gs = json_object_get(r.json, "graphs");
    assert_int_equal(json_array_size(gs), 2);
    assert_string_equal(jstr(json_array_get(gs, 0), "graph_id"), "fresh-1"); /* sorted */
    assert_string_equal(jstr(json_array_get(gs, 1), "graph_id"), "g1");
    http_free(&r);
    /* twice: 409; a bad id, a bad schema, an unknown field: 400 (the message names no path) */
    r = post_json(&S, NULL, "/graphs", body);
    assert_int_equal(r.status, 409);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs", "{\"graph_id\":\"no/slash\",\"schema_source\":\"node T { k: String @key }\"}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs", "{\"graph_id\":\"bad-schema\",\"schema_source\":\"node T { k: Strin @key }\"}");
    assert_int_equal(r.status, 400);
    assert_null(strstr(r.body, dir));
    http_free(&r);
    snprintf(made, sizeof made, "%s/made/bad-schema", dir);
    assert_false(exists(made));
    r = post_json(&S, NULL, "/graphs", "{\"graph_id\":\"x\",\"schema_source\":\"node T { k: String @key }\",\"y\":1}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    /* a boot graph is never deleted */
    r = http(&S, "DELETE", "/graphs/g1", NULL, NULL, 0);
    assert_int_equal(r.status, 400);
    http_free(&r);
    /* delete: gone from the routes, the list and the disk; the id can be created again */
    r = http(&S, "DELETE", "/graphs/fresh-1", NULL, NULL, 0);
    assert_int_equal(r.status, 200);
    http_free(&r);
    snprintf(made, sizeof made, "%s/made/fresh-1", dir);
    assert_false(exists(made));
    r = get(&S, NULL, "/graphs/fresh-1/branches");
    assert_int_equal(r.status, 404);
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/fresh-1", NULL, NULL, 0);
    assert_int_equal(r.status, 404);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs", body);
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/fresh-1/query", "{\"query\":\"query q() { match { $t: T } return { $t.k } }\"}");
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 0); /* a new graph, not the old one */
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/fresh-1", NULL, NULL, 0);
    assert_int_equal(r.status, 200);
    http_free(&r);
}

/* many creates and deletes: slots are reused, nothing is left on disk */
static void test_graph_churn(void **state)
{
    (void)state;
    for (int i = 0; i < 300; i++) {
        char body[160], path[64];
        snprintf(body, sizeof body, "{\"graph_id\":\"c%d\",\"schema_source\":\"node T { k: String @key }\"}", i);
        http_resp r = post_json(&S, NULL, "/graphs", body);
        assert_int_equal(r.status, 200);
        http_free(&r);
        snprintf(path, sizeof path, "/graphs/c%d", i);
        r = http(&S, "DELETE", path, NULL, NULL, 0);
        assert_int_equal(r.status, 200);
        http_free(&r);
    }
    char cmd[160];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s/made')\"", dir);
    assert_int_equal(system(cmd), 0);
}

/* without --graph-dir: refused with the fix; with tokens and no policy, `admin` is denied */
static void test_graph_create_refused(void **state)
{
    (void)state;
    http_resp r = post_json(&PLAIN, "tok", "/graphs", "{\"graph_id\":\"n\",\"schema_source\":\"node T { k: String @key }\"}");
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "--graph-dir"));
    assert_non_null(strstr(r.headers, "Omnigraph-Error-Class: unsupported"));
    http_free(&r);
    r = http(&PLAIN, "DELETE", "/graphs/g1", (const char *const[]){"Authorization: Bearer tok", NULL}, NULL, 0);
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = post_json(&PLAIN, NULL, "/graphs", "{\"graph_id\":\"n\",\"schema_source\":\"node T { k: String @key }\"}");
    assert_int_equal(r.status, 401);
    http_free(&r);
    r = post_json(&DENY, "tok", "/graphs", "{\"graph_id\":\"n\",\"schema_source\":\"node T { k: String @key }\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    char made[128];
    snprintf(made, sizeof made, "%s/made/n", dir);
    assert_false(exists(made));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_cas_diff_at),
        cmocka_unit_test(test_merge_strategy),
        cmocka_unit_test(test_graph_create_delete),
        cmocka_unit_test(test_graph_churn),
        cmocka_unit_test(test_graph_create_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
