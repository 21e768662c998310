/*
 * test_server_cluster.c — `omnigraph-server --cluster DIR` against a copy of examples/cluster
 * (applied with the cluster library, seeded with its seed.ndjson): the applied graphs are
 * served with their stored queries and bound policy bundle; stored-query routes (typed
 * parameters, the two decisions, 404 masking, CAS 412, results as the ad-hoc lane); the MCP
 * endpoint over HTTP (per-actor tool lists, masking); schema apply refused (409) under cluster
 * serving; a graph whose stored query no longer type-checks is quarantined at boot, or stops
 * it with --require-all-graphs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cluster/cluster.h"
#include "server_client.h"

static char dir[64], cdir[128], logpath[128];
static srv S;

static const char *ALICE = "Authorization: Bearer tok-alice";

static void clear_env(void)
{
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    unsetenv("OMNIGRAPH_UNAUTHENTICATED");
    unsetenv("OMNIGRAPH_CLUSTER");
}

/* Copies examples/cluster to `to`, imports and applies it, and loads the seed. */
static int make_cluster(const char *to)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp -r '%s/examples/cluster' '%s'", OG_SOURCE_DIR, to);
    if (system(cmd)) return -1;
    char *out = NULL;
    og_cluster_opts o = {.actor = "setup"};
    if (og_cluster_import(&out, to, &o)) return -1;
    og_free(out);
    if (og_cluster_apply(&out, to, &o)) {
        fprintf(stderr, "apply: %s\n%s\n", og_error_message(), out ? out : "");
        og_free(out);
        return -1;
    }
    og_free(out);
    char uri[256], seed[256];
    snprintf(uri, sizeof uri, "%s/graphs/people.omni", to);
    snprintf(seed, sizeof seed, "%s/seed.ndjson", to);
    og_db *db;
    if (og_db_open(&db, uri, NULL)) return -1;
    og_load_opts lo = {.mode = OG_LOAD_MERGE};
    og_receipt r;
    og_status st = og_db_load(&r, db, seed, &lo);
    og_db_close(db);
    return st ? -1 : 0;
}

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvcl-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(cdir, sizeof cdir, "%s/cluster", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    if (make_cluster(cdir)) return -1;
    clear_env();
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON",
           "{\"alice\":\"tok-alice\",\"root\":\"tok-root\",\"mallory\":\"tok-mallory\",\"gus\":\"tok-gus\","
           "\"ivy\":\"tok-ivy\",\"kim\":\"tok-kim\"}", 1);
    const char *args[] = {"--cluster", cdir, "--bind", "127.0.0.1:0", NULL};
    return srv_start(&S, logpath, args);
}

static int teardown(void **state)
{
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

static http_resp call(const char *token, const char *path, const char *body)
{
    return post_json(&S, token, path, body);
}

static void test_serves_applied_state(void **state)
{
    /* the applied graph, with no cluster bundle: graph_list stays closed */
    http_resp r = get(&S, "tok-alice", "/graphs");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = get(&S, "tok-alice", "/graphs/people/snapshot");
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* the stored queries, with typed parameters and their JSON Schema */
    r = get(&S, "tok-alice", "/graphs/people/queries");
    assert_int_equal(r.status, 200);
    json_t *qs = json_object_get(r.json, "queries");
    assert_int_equal(json_array_size(qs), 4);
    json_t *adults = NULL;
    size_t i;
    json_t *q;
    json_array_foreach(qs, i, q) if (!strcmp(jstr(q, "name"), "adults")) adults = q;
    assert_non_null(adults);
    assert_false(json_is_true(json_object_get(adults, "mutation")));
    json_t *p0 = json_array_get(json_object_get(adults, "params"), 0);
    assert_string_equal(jstr(p0, "name"), "min");
    assert_string_equal(jstr(p0, "kind"), "int");
    json_t *schema = json_object_get(adults, "params_schema");
    assert_string_equal(jstr(json_object_get(json_object_get(schema, "properties"), "min"), "type"), "integer");
    assert_string_equal(json_string_value(json_array_get(json_object_get(schema, "required"), 0)), "min");
    http_free(&r);
    /* a token is still needed */
    r = get(&S, NULL, "/graphs/people/queries");
    assert_int_equal(r.status, 401);
    http_free(&r);
}

static void test_invoke_read_like_adhoc(void **state)
{
    http_resp r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":40}}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "query_name"), "adults");
    assert_string_equal(jstr(json_object_get(r.json, "target"), "branch"), "main");
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "rows"), 0), "p.name"), "Grace");
    /* the same source through the ad-hoc lane gives the same result */
    char *src = NULL;
    {
        char path[256];
        snprintf(path, sizeof path, "%s/queries/people.gq", cdir);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        src = calloc(1, 8192);
        size_t n = fread(src, 1, 8191, f);
        fclose(f);
        src[n] = 0;
    }
    json_t *req = json_pack("{s:s,s:s,s:{s:i}}", "query", src, "name", "adults", "params", "min", 40);
    char *body = json_dumps(req, JSON_COMPACT);
    http_resp a = call("tok-alice", "/graphs/people/query", body);
    assert_int_equal(a.status, 200);
    assert_true(json_equal(a.json, r.json));
    http_free(&a);
    free(body);
    json_decref(req);
    free(src);
    http_free(&r);
    /* no body at all: the parameters are then missing */
    r = http(&S, "POST", "/graphs/people/queries/friends", (const char *[]){ALICE, NULL}, NULL, 0);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error"), "$name"));
    http_free(&r);
    /* typed parameters: the declaration is the contract */
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":\"forty\"}}");
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "code"), "bad_request");
    assert_string_equal(jstr(r.json, "error"), "param `$min`: expected I32 (int), got a string");
    http_free(&r);
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":1,\"max\":2}}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":1},\"extra\":1}");
    assert_int_equal(r.status, 400);
    assert_string_equal(jstr(r.json, "error"), "unknown field 'extra'");
    http_free(&r);
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":1},\"expect_mutation\":true}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":1},\"branch\":\"nope\"}");
    assert_int_equal(r.status, 404);
    http_free(&r);
    /* a stored read pages as /query does: max_rows / offset, the total and the next offset */
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":0}}");
    assert_int_equal(r.status, 200);
    json_int_t all = json_integer_value(json_object_get(r.json, "row_count"));
    http_free(&r);
    assert_true(all >= 2);
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":0},\"max_rows\":1}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    assert_int_equal(json_integer_value(json_object_get(r.json, "total_rows")), all);
    assert_int_equal(json_integer_value(json_object_get(r.json, "next_offset")), 1);
    http_free(&r);
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":0},\"max_rows\":0}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    /* a mutation has no rows to page */
    r = call("tok-alice", "/graphs/people/queries/add_person", "{\"params\":{\"name\":\"Zed\"},\"max_rows\":1}");
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error"), "max_rows and offset page a read"));
    http_free(&r);
}

static void test_masking(void **state)
{
    /* mallory may not invoke: exactly the answer for a name that does not exist */
    http_resp denied = call("tok-mallory", "/graphs/people/queries/adults", "{\"params\":{\"min\":1}}");
    http_resp unknown = call("tok-alice", "/graphs/people/queries/no_such_query", "{}");
    assert_int_equal(denied.status, 404);
    assert_int_equal(unknown.status, 404);
    assert_string_equal(jstr(denied.json, "code"), "not_found");
    assert_string_equal(jstr(denied.json, "error"), "stored query 'adults' not found");
    assert_string_equal(jstr(unknown.json, "error"), "stored query 'no_such_query' not found");
    http_free(&denied);
    http_free(&unknown);
    /* an unknown graph stays the graph's 404 */
    http_resp r = call("tok-alice", "/graphs/nope/queries/adults", "{}");
    assert_int_equal(r.status, 404);
    assert_string_equal(jstr(r.json, "error"), "graph 'nope' not found");
    http_free(&r);
}

static void test_mutation_gated_twice(void **state)
{
    /* alice may invoke, but not change the protected main */
    http_resp r = call("tok-alice", "/graphs/people/queries/add_person", "{\"params\":{\"name\":\"Zed\"}}");
    assert_int_equal(r.status, 403);
    assert_string_equal(jstr(r.json, "code"), "forbidden");
    http_free(&r);
    /* root may invoke but not change at all */
    r = call("tok-root", "/graphs/people/queries/add_person", "{\"params\":{\"name\":\"Zed\"},\"branch\":\"feat\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = call("tok-alice", "/graphs/people/branches", "{\"name\":\"feat\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = call("tok-alice", "/graphs/people/queries/add_person",
             "{\"params\":{\"name\":\"Zed\",\"age\":50},\"branch\":\"feat\",\"expect_mutation\":true}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "query_name"), "add_person");
    assert_string_equal(jstr(r.json, "branch"), "feat");
    assert_int_equal(json_integer_value(json_object_get(r.json, "affected_nodes")), 1);
    assert_string_equal(jstr(r.json, "actor_id"), "alice");
    json_t *commit = json_object_get(r.json, "commit");
    assert_string_equal(jstr(commit, "actor_id"), "alice");
    char head[64];
    snprintf(head, sizeof head, "%s", jstr(commit, "graph_commit_id"));
    http_free(&r);
    /* a snapshot cannot be written; the CAS header only on the conditional route */
    r = call("tok-alice", "/graphs/people/queries/add_person", "{\"params\":{\"name\":\"Q\"},\"snapshot\":\"x\"}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    char cas[128];
    snprintf(cas, sizeof cas, "Omnigraph-If-Graph-Commit: %s", head);
    const char *h[] = {"Content-Type: application/json", ALICE, cas, NULL};
    const char *body = "{\"params\":{\"name\":\"Yan\"},\"branch\":\"feat\"}";
    r = http(&S, "POST", "/graphs/people/queries/add_person", h, body, strlen(body));
    assert_int_equal(r.status, 400);
    http_free(&r);
    /* CAS: the head we saw → 200; the same head again (it moved) → 412, nothing written */
    r = http(&S, "POST", "/graphs/people/queries/add_person/if-graph-commit", h, body, strlen(body));
    assert_int_equal(r.status, 200);
    http_free(&r);
    const char *body2 = "{\"params\":{\"name\":\"Xi\"},\"branch\":\"feat\"}";
    r = http(&S, "POST", "/graphs/people/queries/add_person/if-graph-commit", h, body2, strlen(body2));
    assert_int_equal(r.status, 412);
    assert_null(json_object_get(r.json, "code"));
    assert_string_equal(jstr(json_object_get(r.json, "precondition_failure"), "expected"), head);
    http_free(&r);
    /* a read takes no condition */
    r = http(&S, "POST", "/graphs/people/queries/adults/if-graph-commit", h, "{\"params\":{\"min\":1}}", 20);
    assert_int_equal(r.status, 400);
    http_free(&r);
    /* the branch has Zed and Yan, not Xi; main has neither */
    r = call("tok-alice", "/graphs/people/queries/adults", "{\"params\":{\"min\":0},\"branch\":\"feat\"}");
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 3); /* Ada, Grace, Zed (Yan: no age) */
    http_free(&r);
    r = call("tok-alice", "/graphs/people/query",
             "{\"query\":\"query n() { match { $p: Person } return { count($p) as n } }\",\"branch\":\"feat\"}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(r.json, "rows"), 0), "n")), 5);
    http_free(&r);
}

static void test_schema_apply_refused(void **state)
{
    /* nobody in the bundle may apply schemas: 403 first (the decision comes before the 409) */
    http_resp r = call("tok-root", "/graphs/people/schema/apply", "{\"schema_source\":\"node A { x: String }\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
}

static http_resp mcp(const char *token, const char *body)
{
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    const char *h[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream",
                       token ? auth : NULL, NULL};
    return http(&S, "POST", "/graphs/people/mcp", h, body, strlen(body));
}

static int has_tool(json_t *res, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(json_object_get(res, "result"), "tools"), i, t) if (!strcmp(jstr(t, "name"), name))
        return 1;
    return 0;
}

static void test_mcp_over_http(void **state)
{
    http_resp r = mcp("tok-alice", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                                   "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "application/json"));
    assert_string_equal(jstr(json_object_get(r.json, "result"), "protocolVersion"), "2025-06-18");
    http_free(&r);
    /* a notification: 202, no body */
    r = mcp("tok-alice", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    assert_int_equal(r.status, 202);
    http_free(&r);
    /* a JSON-RPC batch (MCP 2025-03-26): one array of the answers, in order */
    r = mcp("tok-alice", "[{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\"},"
                         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                         "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"resources/list\"}]");
    assert_int_equal(r.status, 200);
    assert_true(json_is_array(r.json));
    assert_int_equal(json_array_size(r.json), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r.json, 0), "id")), 11);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r.json, 1), "id")), 12);
    http_free(&r);
    /* the same bearer tokens: none → 401 */
    const char *h[] = {"Content-Type: application/json", NULL};
    r = http(&S, "POST", "/graphs/people/mcp", h, "{}", 2);
    assert_int_equal(r.status, 401);
    http_free(&r);
    /* per-actor tool lists */
    const char *list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    r = mcp("tok-alice", list);
    assert_true(has_tool(r.json, "adults"));
    assert_true(has_tool(r.json, "add_person"));
    assert_true(has_tool(r.json, "graph_query"));
    assert_false(has_tool(r.json, "branch_merge"));
    http_free(&r);
    r = mcp("tok-mallory", list);
    assert_true(has_tool(r.json, "graph_health"));
    assert_false(has_tool(r.json, "adults"));
    assert_false(has_tool(r.json, "graph_query"));
    http_free(&r);
    r = mcp("tok-root", list);
    assert_true(has_tool(r.json, "branch_merge"));
    assert_true(has_tool(r.json, "adults"));
    assert_false(has_tool(r.json, "add_person")); /* invoke, but no change anywhere */
    http_free(&r);
    /* a stored query called through MCP: the same rows */
    r = mcp("tok-alice", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\","
                         "\"arguments\":{\"params\":{\"min\":40}}}}");
    assert_int_equal(r.status, 200);
    json_t *sc = json_object_get(json_object_get(r.json, "result"), "structuredContent");
    assert_int_equal(json_integer_value(json_object_get(sc, "row_count")), 1);
    http_free(&r);
    /* masking: mallory calling a stored query reads exactly like an unknown tool */
    http_resp d = mcp("tok-mallory", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                                     "\"adults\",\"arguments\":{\"params\":{\"min\":1}}}}");
    http_resp u = mcp("tok-mallory", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                                     "\"zzz\",\"arguments\":{}}}");
    json_t *de = json_object_get(d.json, "error"), *ue = json_object_get(u.json, "error");
    assert_non_null(de);
    assert_int_equal(json_integer_value(json_object_get(de, "code")), json_integer_value(json_object_get(ue, "code")));
    const char *dm = jstr(de, "message"), *um = jstr(ue, "message");
    assert_non_null(strstr(dm, "adults"));
    assert_non_null(strstr(um, "zzz"));
    assert_int_equal(strlen(dm) - strlen("adults"), strlen(um) - strlen("zzz"));
    http_free(&d);
    http_free(&u);
    /* a write through MCP carries the token's actor */
    r = mcp("tok-alice", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_create\","
                         "\"arguments\":{\"name\":\"mcp-b\"}}}");
    assert_int_equal(r.status, 200);
    assert_false(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
    http_free(&r);
    r = mcp("tok-alice", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"add_person\","
                         "\"arguments\":{\"params\":{\"name\":\"Mo\"},\"branch\":\"mcp-b\"}}}");
    assert_false(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
    http_free(&r);
    r = get(&S, "tok-alice", "/graphs/people/commits?branch=mcp-b");
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "commits"), 0), "actor_id"), "alice");
    http_free(&r);
    /* transport errors of the binding */
    const char *txt[] = {"Content-Type: text/plain", ALICE, NULL};
    r = http(&S, "POST", "/graphs/people/mcp", txt, "{}", 2);
    assert_int_equal(r.status, 415);
    http_free(&r);
    /* GET is not part of the stateless transport: 405 naming POST */
    r = get(&S, "tok-alice", "/graphs/people/mcp");
    assert_int_equal(r.status, 405);
    assert_non_null(strstr(r.headers, "Allow: POST"));
    http_free(&r);
    /* DNS rebinding: a loopback server refuses a foreign Host or Origin */
    const char *evil_host[] = {"Content-Type: application/json", ALICE, "Host: evil.example.com", NULL};
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
    r = http(&S, "POST", "/graphs/people/mcp", evil_host, ping, strlen(ping));
    assert_int_equal(r.status, 403);
    http_free(&r);
    const char *evil_origin[] = {"Content-Type: application/json", ALICE, "Origin: http://evil.example.com", NULL};
    r = http(&S, "POST", "/graphs/people/mcp", evil_origin, ping, strlen(ping));
    assert_int_equal(r.status, 403);
    http_free(&r);
    const char *local_origin[] = {"Content-Type: application/json", ALICE, "Origin: http://localhost:6274", NULL};
    r = http(&S, "POST", "/graphs/people/mcp", local_origin, ping, strlen(ping));
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = mcp("tok-alice", "{not json");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r.json, "error"), "code")), -32700);
    http_free(&r);
}

/* Per-query rules (the example bundle's guests-friends and interns-no-stored-writes): each
 * actor's query list, HTTP invocation and MCP tools are exactly the queries it may invoke; a
 * denied one answers exactly as an unknown name. */
static const char *names_of(json_t *arr, const char *key, char *out, size_t cap)
{
    out[0] = 0;
    const char *names[64];
    size_t n = 0, i;
    json_t *q;
    json_array_foreach(arr, i, q) if (n < 64) names[n++] = jstr(q, key);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
            const char *x = names[b];
            names[b] = names[b - 1];
            names[b - 1] = x;
        }
    for (i = 0; i < n; i++) snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? "," : "", names[i]);
    return out;
}

static void test_per_query_policy(void **state)
{
    char got[1024];
    /* HTTP: the list shows each actor the queries it may invoke */
    http_resp r = get(&S, "tok-gus", "/graphs/people/queries");
    assert_int_equal(r.status, 200);
    assert_string_equal(names_of(json_object_get(r.json, "queries"), "name", got, sizeof got), "friends");
    http_free(&r);
    r = get(&S, "tok-ivy", "/graphs/people/queries");
    assert_string_equal(names_of(json_object_get(r.json, "queries"), "name", got, sizeof got), "adults,friends");
    http_free(&r);
    r = get(&S, "tok-alice", "/graphs/people/queries");
    assert_string_equal(names_of(json_object_get(r.json, "queries"), "name", got, sizeof got),
                        "add_person,adults,befriend,friends");
    http_free(&r);
    /* HTTP invoke: allowed by name; denied by name = the unknown query's 404 */
    r = call("tok-gus", "/graphs/people/queries/friends", "{\"params\":{\"name\":\"Alice\"}}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    const char *cases[][3] = {{"tok-gus", "adults", "{\"params\":{\"min\":1}}"},
                              {"tok-ivy", "add_person", "{\"params\":{\"name\":\"Q\"},\"branch\":\"x\"}"},
                              {"tok-ivy", "befriend", "{}"}};
    for (size_t i = 0; i < 3; i++) {
        char path[128], unknown_path[128], want[128];
        snprintf(path, sizeof path, "/graphs/people/queries/%s", cases[i][1]);
        snprintf(unknown_path, sizeof unknown_path, "/graphs/people/queries/%sz", cases[i][1]);
        http_resp d = call(cases[i][0], path, cases[i][2]);
        http_resp u = call(cases[i][0], unknown_path, cases[i][2]);
        assert_int_equal(d.status, 404);
        assert_int_equal(u.status, 404);
        assert_string_equal(jstr(d.json, "code"), jstr(u.json, "code"));
        snprintf(want, sizeof want, "stored query '%s' not found", cases[i][1]);
        assert_string_equal(jstr(d.json, "error"), want);
        assert_int_equal(strlen(d.body), strlen(u.body) - 1); /* the same body but for the name */
        http_free(&d);
        http_free(&u);
    }
    r = call("tok-ivy", "/graphs/people/queries/adults", "{\"params\":{\"min\":40}}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* MCP: tools/list shows exactly the callable tools; a denied call = an unknown tool */
    const char *list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    r = mcp("tok-gus", list);
    assert_string_equal(names_of(json_object_get(json_object_get(r.json, "result"), "tools"), "name", got, sizeof got),
                        "branch_diff,branch_list,change_feed,commit_get,commit_list,friends,graph_explain,graph_health,graph_query,graph_snapshot,graph_validate,"
                        "proposal_list,proposal_show,schema_get");
    http_free(&r);
    r = mcp("tok-ivy", list);
    assert_true(has_tool(r.json, "adults"));
    assert_true(has_tool(r.json, "graph_mutate"));
    assert_false(has_tool(r.json, "add_person"));
    assert_false(has_tool(r.json, "befriend"));
    http_free(&r);
    r = mcp("tok-gus", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"friends\","
                       "\"arguments\":{\"params\":{\"name\":\"Alice\"}}}}");
    assert_false(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
    http_free(&r);
    const char *mcases[][2] = {{"tok-gus", "adults"}, {"tok-ivy", "add_person"}};
    for (size_t i = 0; i < 2; i++) {
        char d_msg[256], u_msg[256];
        snprintf(d_msg, sizeof d_msg, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"%s\",\"arguments\":{\"params\":{\"min\":1,\"name\":\"Q\"},\"branch\":\"b\"}}}", mcases[i][1]);
        snprintf(u_msg, sizeof u_msg, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"%sz\",\"arguments\":{\"params\":{\"min\":1,\"name\":\"Q\"},\"branch\":\"b\"}}}", mcases[i][1]);
        http_resp d = mcp(mcases[i][0], d_msg), u = mcp(mcases[i][0], u_msg);
        json_t *de = json_object_get(d.json, "error"), *ue = json_object_get(u.json, "error");
        assert_non_null(de);
        assert_non_null(ue);
        assert_int_equal(json_integer_value(json_object_get(de, "code")), json_integer_value(json_object_get(ue, "code")));
        char want[128];
        snprintf(want, sizeof want, "Unknown tool: %s", mcases[i][1]);
        assert_string_equal(jstr(de, "message"), want);
        snprintf(want, sizeof want, "Unknown tool: %sz", mcases[i][1]);
        assert_string_equal(jstr(ue, "message"), want);
        assert_int_equal(d.status, u.status);
        http_free(&d);
        http_free(&u);
    }
}

/* Issue 37 item 5: kim is granted `adults` and nothing else (`read` with `queries: [adults]`
 * in examples/cluster/policies/team.policy.yaml).  The stored query runs over HTTP and MCP;
 * every ad-hoc read — the very query `adults` runs, sent as text — is refused. */
static void test_stored_queries_only(void **state)
{
    char got[1024];
    http_resp r = call("tok-kim", "/graphs/people/queries/adults", "{\"params\":{\"min\":0}}");
    assert_int_equal(r.status, 200);
    assert_true(json_array_size(json_object_get(r.json, "rows")) > 0);
    http_free(&r);
    r = get(&S, "tok-kim", "/graphs/people/queries");
    assert_int_equal(r.status, 200);
    assert_string_equal(names_of(json_object_get(r.json, "queries"), "name", got, sizeof got), "adults");
    http_free(&r);
    r = call("tok-kim", "/graphs/people/query",
             "{\"query\":\"query adults($min: I32) { match { $p: Person  $p.age >= $min } return { $p.name, $p.age } }\","
             "\"params\":{\"min\":0}}");
    assert_int_equal(r.status, 403);
    assert_string_equal(jstr(r.json, "error"), "policy denied action 'read' on branch 'main' for actor 'kim'");
    http_free(&r);
    r = get(&S, "tok-kim", "/graphs/people/snapshot");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = call("tok-kim", "/graphs/people/queries/friends", "{\"params\":{\"name\":\"Alice\"}}");
    assert_int_equal(r.status, 404); /* not granted: the unknown query's answer */
    http_free(&r);
    /* MCP: only the granted tool (and the health probe) */
    r = mcp("tok-kim", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    assert_string_equal(names_of(json_object_get(json_object_get(r.json, "result"), "tools"), "name", got, sizeof got),
                        "adults,graph_health");
    http_free(&r);
    r = mcp("tok-kim", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\","
                       "\"arguments\":{\"params\":{\"min\":0}}}}");
    assert_false(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
    http_free(&r);
    r = mcp("tok-kim", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
                       "\"arguments\":{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}}}");
    json_t *res = json_object_get(r.json, "result");
    assert_true(json_is_true(json_object_get(res, "isError")));
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text")),
                           "forbidden: policy denied action 'read' on branch 'main' for actor 'kim'"));
    http_free(&r);
}

/* A second cluster: two graphs; after apply, one graph's schema is changed out of band so
 * that its stored query no longer type-checks. */
static void test_quarantine_at_boot(void **state)
{
    char c2[160], path[256], cmd[512];
    snprintf(c2, sizeof c2, "%s/c2", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/q' && cp '%s/examples/cluster/people.pg' '%s/'", c2, OG_SOURCE_DIR, c2);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/cluster.yaml", c2);
    FILE *f = fopen(path, "w");
    fputs("version: 1\ngraphs:\n  good:\n    schema: people.pg\n    queries: q/\n  bad:\n    schema: people.pg\n"
          "    queries: q/\n",
          f);
    fclose(f);
    snprintf(path, sizeof path, "%s/q/ages.gq", c2);
    f = fopen(path, "w");
    fputs("query ages() { match { $p: Person } return { $p.name, $p.age } }\n", f);
    fclose(f);
    char *out = NULL;
    og_cluster_opts o = {0};
    assert_int_equal(og_cluster_import(&out, c2, &o), OG_OK);
    og_free(out);
    assert_int_equal(og_cluster_apply(&out, c2, &o), OG_OK);
    og_free(out);
    /* drop `age` from graph bad, behind the cluster's back */
    snprintf(path, sizeof path, "%s/graphs/bad.omni", c2);
    og_db *db;
    assert_int_equal(og_db_open(&db, path, NULL), OG_OK);
    const char *narrow = "node Person {\n    name: String @key\n}\nedge Knows: Person -> Person\n";
    og_receipt rc;
    og_status st = og_db_schema_apply(&rc, NULL, db, NULL, "people.pg", narrow, strlen(narrow), 0, 0);
    og_db_close(db);
    assert_int_equal(st, OG_OK);

    clear_env();
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    char log2[200];
    snprintf(log2, sizeof log2, "%s/c2.log", dir);
    const char *args[] = {"--cluster", c2, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    srv s2;
    assert_int_equal(srv_start(&s2, log2, args), 0);
    http_resp r = get(&s2, NULL, "/graphs/good/queries");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = get(&s2, NULL, "/graphs/bad/queries");
    assert_int_equal(r.status, 404);
    assert_string_equal(jstr(r.json, "error"), "graph 'bad' not found");
    http_free(&r);
    /* cluster serving refuses schema apply (after the decision: open mode allows it) */
    r = post_json(&s2, NULL, "/graphs/good/schema/apply", "{\"schema_source\":\"node A { x: String }\"}");
    assert_int_equal(r.status, 409);
    assert_string_equal(jstr(r.json, "code"), "conflict");
    http_free(&r);
    /* MCP's schema_apply tool is refused likewise */
    const char *h[] = {"Content-Type: application/json", NULL};
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"schema_apply\","
                       "\"arguments\":{\"schema_source\":\"node A { x: String }\"}}}";
    r = http(&s2, "POST", "/graphs/good/mcp", h, call, strlen(call));
    assert_true(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
    http_free(&r);
    assert_int_equal(srv_stop(&s2), 0);
    /* the reason is reported clearly */
    f = fopen(log2, "r");
    char *logtext = calloc(1, 1 << 16);
    size_t n = fread(logtext, 1, (1 << 16) - 1, f);
    fclose(f);
    logtext[n] = 0;
    assert_non_null(strstr(logtext, "graph 'bad' quarantined"));
    assert_non_null(strstr(logtext, "does not type-check"));
    assert_non_null(strstr(logtext, "\"mcp\":\"tools/call schema_apply\"")); /* the request's audit line */
    free(logtext);
    /* --require-all-graphs makes it fatal */
    const char *strict[] = {"--cluster", c2, "--bind", "127.0.0.1:0", "--unauthenticated", "--require-all-graphs", NULL};
    assert_true(srv_start_fails(log2, strict));
    /* a cluster with no applied state does not boot */
    char c3[160];
    snprintf(c3, sizeof c3, "%s/c3", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s/cluster.yaml' '%s/people.pg' '%s/'", c3, c2, c2, c3);
    assert_int_equal(system(cmd), 0);
    const char *none[] = {"--cluster", c3, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_true(srv_start_fails(log2, none));
    /* a catalog blob that no longer matches its digest stops the boot */
    snprintf(cmd, sizeof cmd, "for f in '%s'/__cluster/resources/query/good/*/*.gq; do echo x >> \"$f\"; done", c2);
    assert_int_equal(system(cmd), 0);
    assert_true(srv_start_fails(log2, args));
    f = fopen(log2, "r");
    logtext = calloc(1, 1 << 16);
    n = fread(logtext, 1, (1 << 16) - 1, f);
    fclose(f);
    logtext[n] = 0;
    assert_non_null(strstr(logtext, "catalog_payload_digest_mismatch"));
    assert_non_null(strstr(logtext, "cluster_state_missing"));
    free(logtext);
    /* the boot errors name their remedies: no graph at all (cluster_empty), and every graph
     * quarantined (cluster_no_healthy_graphs) */
    f = fopen(log2, "w"); /* a fresh log */
    fclose(f);
    char c4[160], c5[160];
    snprintf(c4, sizeof c4, "%s/c4", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && printf 'version: 1\\ngraphs: {}\\n' > '%s/cluster.yaml'", c4, c4);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(og_cluster_import(&out, c4, &o), OG_OK);
    og_free(out);
    assert_int_equal(og_cluster_apply(&out, c4, &o), OG_OK);
    og_free(out);
    const char *empty[] = {"--cluster", c4, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_true(srv_start_fails(log2, empty));
    snprintf(c5, sizeof c5, "%s/c5", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp -r '%s/people.pg' '%s/q' '%s/' && "
                              "printf 'version: 1\\ngraphs:\\n  bad:\\n    schema: people.pg\\n    queries: q/\\n' > '%s/cluster.yaml'",
             c5, c2, c2, c5, c5);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(og_cluster_import(&out, c5, &o), OG_OK);
    og_free(out);
    assert_int_equal(og_cluster_apply(&out, c5, &o), OG_OK);
    og_free(out);
    snprintf(path, sizeof path, "%s/graphs/bad.omni", c5);
    assert_int_equal(og_db_open(&db, path, NULL), OG_OK);
    st = og_db_schema_apply(&rc, NULL, db, NULL, "people.pg", narrow, strlen(narrow), 0, 0);
    og_db_close(db);
    assert_int_equal(st, OG_OK);
    const char *sick[] = {"--cluster", c5, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_true(srv_start_fails(log2, sick));
    f = fopen(log2, "r");
    logtext = calloc(1, 1 << 16);
    n = fread(logtext, 1, (1 << 16) - 1, f);
    fclose(f);
    logtext[n] = 0;
    assert_non_null(strstr(logtext, "cluster_empty: the applied state has no graph; declare one in cluster.yaml and run "
                                    "`omnigraph cluster apply`"));
    assert_non_null(strstr(logtext, "graph 'bad' quarantined"));
    assert_non_null(strstr(logtext, "cluster_no_healthy_graphs: no graph of the cluster can be served (reasons above)"));
    free(logtext);
    /* --cluster and --graph do not mix */
    const char *mixed[] = {"--cluster", c2, "--graph", "x=/nowhere", "--unauthenticated", NULL};
    assert_true(srv_start_fails(log2, mixed));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serves_applied_state), cmocka_unit_test(test_invoke_read_like_adhoc),
        cmocka_unit_test(test_masking),              cmocka_unit_test(test_mutation_gated_twice),
        cmocka_unit_test(test_schema_apply_refused), cmocka_unit_test(test_mcp_over_http),
        cmocka_unit_test(test_per_query_policy),     cmocka_unit_test(test_stored_queries_only),
        cmocka_unit_test(test_quarantine_at_boot),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
