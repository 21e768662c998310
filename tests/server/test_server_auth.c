/*
 * test_server_auth.c — bearer tokens and the startup classifier (reference-surfaces.md §3)
 * against real server processes: missing / malformed / wrong tokens (401 with the
 * reference's messages), DefaultDeny (tokens without a policy: read only), the token
 * sources (JSON, file, single token as actor "default"), the states that refuse to start,
 * --unauthenticated on a public address, and no plaintext token in the log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], graph[128], logpath[128];

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvauth-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

static void clear_env(void)
{
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_AWS_SECRET");
    unsetenv("OMNIGRAPH_UNAUTHENTICATED");
}

static void expect_401(http_resp r, const char *msg)
{
    assert_int_equal(r.status, 401);
    assert_string_equal(jstr(r.json, "code"), "unauthorized");
    assert_string_equal(jstr(r.json, "error"), msg);
    assert_null(strstr(r.headers, "WWW-Authenticate"));
    http_free(&r);
}

static void test_tokens_and_default_deny(void **state)
{
    clear_env();
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"alice\":\"alice-secret-1\",\"bob\":\" bob-secret-2 \"}", 1);
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    /* /healthz and /openapi.json need no token */
    http_resp r = get(&s, NULL, "/healthz");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = get(&s, NULL, "/openapi.json");
    assert_int_equal(r.status, 200);
    assert_non_null(json_object_get(json_object_get(json_object_get(r.json, "components"), "securitySchemes"),
                                    "bearer_token"));
    http_free(&r);
    expect_401(get(&s, NULL, "/graphs/g1/snapshot"), "missing bearer token");
    const char *basic[] = {"Authorization: Basic YWxpY2U6eA==", NULL};
    expect_401(http(&s, "GET", "/graphs/g1/snapshot", basic, NULL, 0), "missing bearer token");
    const char *lower[] = {"Authorization: bearer alice-secret-1", NULL};
    expect_401(http(&s, "GET", "/graphs/g1/snapshot", lower, NULL, 0), "missing bearer token");
    expect_401(get(&s, "alice-secret-2", "/graphs/g1/snapshot"), "invalid bearer token");
    expect_401(get(&s, "alice-secret-1x", "/graphs/g1/snapshot"), "invalid bearer token");
    /* auth comes before graph resolution: an unknown graph without a token is 401, not 404 */
    expect_401(get(&s, NULL, "/graphs/nope/snapshot"), "missing bearer token");
    /* a good token reads (values are trimmed: bob's token had spaces) */
    r = get(&s, "alice-secret-1", "/graphs/g1/snapshot");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = get(&s, "bob-secret-2", "/graphs/g1/commits");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&s, "alice-secret-1", "/graphs/g1/query",
                  "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* DefaultDeny: everything but read is 403, graph_list too */
    r = post_json(&s, "alice-secret-1", "/graphs/g1/mutate",
                  "{\"query\":\"query a() { insert Person { name: \\\"Eve\\\" } }\"}");
    assert_int_equal(r.status, 403);
    assert_string_equal(jstr(r.json, "code"), "forbidden");
    http_free(&r);
    r = post_json(&s, "alice-secret-1", "/graphs/g1/export", "{}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = post_json(&s, "alice-secret-1", "/graphs/g1/branches", "{\"name\":\"x\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    const char *h_nd[] = {"Content-Type: application/x-ndjson", "Authorization: Bearer alice-secret-1", NULL};
    r = http(&s, "POST", "/graphs/g1/load/ndjson", h_nd, "\n", 1);
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = get(&s, "alice-secret-1", "/graphs");
    assert_int_equal(r.status, 403);
    http_free(&r);
    assert_int_equal(srv_stop(&s), 0);
    /* the log has the actors and decisions, never a token */
    FILE *f = fopen(logpath, "r");
    assert_non_null(f);
    char line[4096];
    int saw_alice = 0, saw_deny = 0;
    while (fgets(line, sizeof line, f)) {
        assert_null(strstr(line, "secret"));
        if (strstr(line, "\"actor\":\"alice\"")) saw_alice = 1;
        if (strstr(line, "\"decision\":\"deny\"")) saw_deny = 1;
    }
    fclose(f);
    assert_true(saw_alice);
    assert_true(saw_deny);
}

static void test_token_file_and_single_token(void **state)
{
    clear_env();
    char path[160];
    snprintf(path, sizeof path, "%s/tokens.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"carol\":\"carol-tok\"}", f);
    fclose(f);
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE", path, 1);
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"ignored\":\"json-tok\"}", 1); /* FILE wins over JSON */
    setenv("OMNIGRAPH_SERVER_BEARER_TOKEN", "single-tok", 1);
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    http_resp r = get(&s, "carol-tok", "/graphs/g1/branches");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = get(&s, "single-tok", "/graphs/g1/branches");
    assert_int_equal(r.status, 200);
    http_free(&r);
    expect_401(get(&s, "json-tok", "/graphs/g1/branches"), "invalid bearer token");
    assert_int_equal(srv_stop(&s), 0);
}

static void test_refuses_to_start(void **state)
{
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", NULL};
    clear_env();
    assert_true(srv_start_fails(logpath, args)); /* no tokens, no policy, no flag */
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"a\":\"same\",\"b\":\"same\"}", 1);
    assert_true(srv_start_fails(logpath, args)); /* duplicate token value */
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"a\":\"  \"}", 1);
    assert_true(srv_start_fails(logpath, args)); /* blank token */
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "[\"x\"]", 1);
    assert_true(srv_start_fails(logpath, args)); /* not an object */
    clear_env();
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_AWS_SECRET", "arn:aws:secretsmanager:x", 1);
    assert_true(srv_start_fails(logpath, args)); /* no AWS client in this build: loud failure */
    clear_env();
    const char *pub[] = {"--graph", graph, "--bind", "0.0.0.0:0", "--unauthenticated", NULL};
    assert_true(srv_start_fails(logpath, pub)); /* unauthenticated on a public address */
    const char *badid[] = {"--graph", "bad_id=/nowhere", "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_true(srv_start_fails(logpath, badid));
    char missing[160];
    snprintf(missing, sizeof missing, "g2=%s/absent", dir);
    const char *nograph[] = {"--graph", missing, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_true(srv_start_fails(logpath, nograph));
    /* OMNIGRAPH_UNAUTHENTICATED=1 is the flag's environment form */
    setenv("OMNIGRAPH_UNAUTHENTICATED", "1", 1);
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    assert_int_equal(srv_stop(&s), 0);
    clear_env();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_and_default_deny),
        cmocka_unit_test(test_token_file_and_single_token),
        cmocka_unit_test(test_refuses_to_start),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
