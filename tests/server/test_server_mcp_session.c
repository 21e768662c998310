/*
 * test_server_mcp_session.c — the MCP endpoint's optional sessions on a real server
 * (docs/mcp.md "Sessions"): initialize answers an Mcp-Session-Id; a request in a session uses
 * the session's log level (a setLevel in one session changes neither another session nor
 * the actor's sessionless level); an unknown, malformed, ended, evicted or expired id — or
 * one issued to another actor or graph — is 404; DELETE ends a session; concurrent POSTs in
 * one session are all answered; requests without the header work as before.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <strings.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], logpath[128];

static const char *const SSE_ACCEPT = "Accept: application/json, text/event-stream";
static const char *INIT = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                          "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
static const char *QUERY_CALL = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
                                "\"arguments\":{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}}}";
static const char *PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
static const char *TOOLS_LIST = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";

static const char *set_level(const char *lv)
{
    static char b[160];
    snprintf(b, sizeof b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"%s\"}}", lv);
    return b;
}

/* A request to /graphs/{graph}/mcp: `token` and `sid` may be NULL (no header). */
static http_resp mcp_req(const srv *s, const char *method, const char *graph, const char *token, const char *sid,
                         const char *body)
{
    char auth[128], sh[128], path[64];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    snprintf(sh, sizeof sh, "Mcp-Session-Id: %s", sid ? sid : "");
    snprintf(path, sizeof path, "/graphs/%s/mcp", graph);
    const char *h[5] = {0};
    int n = 0;
    h[n++] = "Content-Type: application/json";
    h[n++] = SSE_ACCEPT;
    if (token) h[n++] = auth;
    if (sid) h[n++] = sh;
    return http(s, method, path, h, body, body ? strlen(body) : 0);
}

static http_resp post(const srv *s, const char *token, const char *sid, const char *body)
{
    return mcp_req(s, "POST", "g", token, sid, body);
}

/* strcasestr without _GNU_SOURCE */
static const char *find_ci(const char *h, const char *needle)
{
    size_t n = strlen(needle);
    for (; h && *h; h++)
        if (!strncasecmp(h, needle, n)) return h;
    return NULL;
}

static int is_sse(const http_resp *r) { return r->headers && strstr(r->headers, "Content-Type: text/event-stream"); }

/* The Mcp-Session-Id of a response (32 hex digits asserted) into id[33]. */
static void session_of(const http_resp *r, char *id)
{
    const char *h = r->headers ? find_ci(r->headers, "\nMcp-Session-Id: ") : NULL;
    assert_non_null(h);
    h += strlen("\nMcp-Session-Id: ");
    size_t n = strspn(h, "0123456789abcdef");
    assert_int_equal(n, 32);
    assert_true(h[n] == '\r' || h[n] == '\n');
    memcpy(id, h, 32);
    id[32] = 0;
}

static char *initialize(const srv *s, const char *token)
{
    http_resp r = post(s, token, NULL, INIT);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "result"), "protocolVersion"), "2025-06-18");
    char *id = malloc(33);
    session_of(&r, id);
    http_free(&r);
    return id;
}

/* A 404 with a JSON-RPC error body (MCP: the client starts a new session). */
static void assert_gone(http_resp *r)
{
    assert_int_equal(r->status, 404);
    assert_string_equal(jstr(r->json, "jsonrpc"), "2.0");
    assert_true(json_is_null(json_object_get(r->json, "id")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r->json, "error"), "code")), -32001);
    http_free(r);
}

static long status_of(http_resp r)
{
    long st = r.status;
    http_free(&r);
    return st;
}

typedef struct conc {
    const srv *s;
    const char *sid;
    long status;
    int tools;
} conc;

static void *conc_run(void *p)
{
    conc *c = p;
    http_resp r = post(c->s, "tok-a", c->sid, TOOLS_LIST);
    c->status = r.status;
    c->tools = (int)json_array_size(json_object_get(json_object_get(r.json, "result"), "tools"));
    http_free(&r);
    return NULL;
}

static void test_sessions(void **state)
{
    (void)state;
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"alice\":\"tok-a\",\"bob\":\"tok-b\"}", 1);
    const char *args[] = {"--graph", NULL, "--graph", NULL, "--bind", "127.0.0.1:0", NULL};
    char g[128], h[128];
    snprintf(g, sizeof g, "g=%s/g", dir);
    snprintf(h, sizeof h, "h=%s/h", dir);
    args[1] = g;
    args[3] = h;
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");

    /* two sessions of alice: distinct ids */
    char *a = initialize(&s, "tok-a"), *b = initialize(&s, "tok-a");
    assert_string_not_equal(a, b);

    /* debug in session A: A's calls stream their log lines */
    http_resp r = post(&s, "tok-a", a, set_level("debug"));
    assert_int_equal(r.status, 200);
    assert_non_null(json_object_get(r.json, "result"));
    http_free(&r);
    r = post(&s, "tok-a", a, QUERY_CALL);
    assert_int_equal(r.status, 200);
    assert_true(is_sse(&r));
    assert_non_null(strstr(r.body, "notifications/message"));
    http_free(&r);
    /* ...but not session B's, nor alice's sessionless ones */
    r = post(&s, "tok-a", b, QUERY_CALL);
    assert_int_equal(r.status, 200);
    assert_false(is_sse(&r));
    assert_int_equal(json_integer_value(json_object_get(r.json, "id")), 7);
    http_free(&r);
    r = post(&s, "tok-a", NULL, QUERY_CALL);
    assert_int_equal(r.status, 200);
    assert_false(is_sse(&r));
    http_free(&r);
    /* the sessionless level is the actor's, as before, and does not reach the sessions */
    assert_int_equal(status_of(post(&s, "tok-a", NULL, set_level("info"))), 200);
    r = post(&s, "tok-a", NULL, QUERY_CALL);
    assert_true(is_sse(&r));
    http_free(&r);
    r = post(&s, "tok-a", b, QUERY_CALL);
    assert_false(is_sse(&r));
    http_free(&r);
    /* raising A's level to error silences A; the actor's sessionless info stays */
    assert_int_equal(status_of(post(&s, "tok-a", a, set_level("error"))), 200);
    r = post(&s, "tok-a", a, QUERY_CALL);
    assert_false(is_sse(&r));
    http_free(&r);
    r = post(&s, "tok-a", NULL, QUERY_CALL);
    assert_true(is_sse(&r));
    http_free(&r);

    /* unknown, malformed: 404 */
    r = post(&s, "tok-a", "00000000000000000000000000000000", PING);
    assert_gone(&r);
    r = post(&s, "tok-a", "not-a-session", PING);
    assert_gone(&r);
    /* another actor's id, or the id on another graph: 404, as unknown */
    r = post(&s, "tok-b", a, PING);
    assert_gone(&r);
    r = mcp_req(&s, "POST", "h", "tok-a", a, PING);
    assert_gone(&r);
    /* ...which did not end it */
    assert_int_equal(status_of(post(&s, "tok-a", a, PING)), 200);

    /* concurrent POSTs in one session: all answered */
    enum { N = 6 };
    conc c[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        c[i] = (conc){&s, b, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, conc_run, &c[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(c[i].status, 200);
        assert_true(c[i].tools > 0);
    }

    /* DELETE: without an id 400; another actor's 404 (still alive); its own 200, then gone */
    r = mcp_req(&s, "DELETE", "g", "tok-a", NULL, NULL);
    assert_int_equal(r.status, 400);
    assert_non_null(json_object_get(r.json, "error"));
    http_free(&r);
    r = mcp_req(&s, "DELETE", "g", "tok-b", a, NULL);
    assert_gone(&r);
    r = mcp_req(&s, "DELETE", "h", "tok-a", a, NULL);
    assert_gone(&r);
    assert_int_equal(status_of(post(&s, "tok-a", a, PING)), 200);
    r = mcp_req(&s, "DELETE", "g", "tok-a", a, NULL);
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post(&s, "tok-a", a, PING);
    assert_gone(&r);
    r = mcp_req(&s, "DELETE", "g", "tok-a", a, NULL);
    assert_gone(&r);
    assert_int_equal(status_of(post(&s, "tok-a", b, PING)), 200); /* B lives on */

    /* initialize with an old id opens a new session */
    r = post(&s, "tok-a", a, INIT);
    assert_int_equal(r.status, 200);
    char fresh[33];
    session_of(&r, fresh);
    assert_string_not_equal(fresh, a);
    http_free(&r);
    /* a failed initialize (a batch) opens none */
    char batch[1024];
    snprintf(batch, sizeof batch, "[%s]", INIT);
    r = post(&s, "tok-a", NULL, batch);
    assert_null(find_ci(r.headers, "Mcp-Session-Id"));
    http_free(&r);

    /* GET: no server-initiated stream */
    r = mcp_req(&s, "GET", "g", "tok-a", b, NULL);
    assert_int_equal(r.status, 405);
    assert_non_null(strstr(r.headers, "Allow: POST"));
    http_free(&r);
    free(a);
    free(b);
    assert_int_equal(srv_stop(&s), 0);
}

/* At most OMNIGRAPH_MCP_SESSIONS_MAX sessions, the least recently used forgotten first; one
 * idle for longer than OMNIGRAPH_MCP_SESSION_IDLE_S is gone. */
static void test_bound_and_expiry(void **state)
{
    (void)state;
    setenv("OMNIGRAPH_MCP_SESSIONS_MAX", "3", 1);
    setenv("OMNIGRAPH_MCP_SESSION_IDLE_S", "2", 1);
    const char *args[] = {"--graph", NULL, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    char g[128];
    snprintf(g, sizeof g, "g=%s/g", dir);
    args[1] = g;
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    unsetenv("OMNIGRAPH_MCP_SESSIONS_MAX");
    unsetenv("OMNIGRAPH_MCP_SESSION_IDLE_S");

    char *s1 = initialize(&s, NULL), *s2 = initialize(&s, NULL), *s3 = initialize(&s, NULL);
    assert_int_equal(status_of(post(&s, NULL, s1, PING)), 200); /* s2 is now the least recently used */
    char *s4 = initialize(&s, NULL);
    http_resp r = post(&s, NULL, s2, PING);
    assert_gone(&r);
    assert_int_equal(status_of(post(&s, NULL, s1, PING)), 200);
    assert_int_equal(status_of(post(&s, NULL, s3, PING)), 200);
    assert_int_equal(status_of(post(&s, NULL, s4, PING)), 200);
    /* idle past the expiry: gone; one kept in use is not */
    for (int i = 0; i < 4; i++) {
        sleep(1);
        assert_int_equal(status_of(post(&s, NULL, s4, PING)), 200);
    }
    r = post(&s, NULL, s1, PING);
    assert_gone(&r);
    r = post(&s, NULL, s3, PING);
    assert_gone(&r);
    assert_int_equal(status_of(post(&s, NULL, s4, PING)), 200);
    free(s1);
    free(s2);
    free(s3);
    free(s4);
    assert_int_equal(srv_stop(&s), 0);
}

/* Issue 37 item 7: one token initializing in a loop replaces only its own sessions. */
static void test_per_actor_quota(void **state)
{
    (void)state;
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"alice\":\"tok-a\",\"bob\":\"tok-b\"}", 1);
    setenv("OMNIGRAPH_MCP_SESSIONS_MAX", "8", 1);
    setenv("OMNIGRAPH_MCP_SESSIONS_PER_ACTOR", "3", 1);
    const char *args[] = {"--graph", NULL, "--bind", "127.0.0.1:0", NULL};
    char g[128];
    snprintf(g, sizeof g, "g=%s/g", dir);
    args[1] = g;
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    unsetenv("OMNIGRAPH_MCP_SESSIONS_MAX");
    unsetenv("OMNIGRAPH_MCP_SESSIONS_PER_ACTOR");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    char *b1 = initialize(&s, "tok-b"), *b2 = initialize(&s, "tok-b");
    char *a[20];
    for (int i = 0; i < 20; i++) a[i] = initialize(&s, "tok-a"); /* far past the table's 8 */
    /* bob's sessions survive the flood */
    assert_int_equal(status_of(post(&s, "tok-b", b1, PING)), 200);
    assert_int_equal(status_of(post(&s, "tok-b", b2, PING)), 200);
    /* alice keeps her newest three; her older ones are gone */
    for (int i = 0; i < 20; i++) {
        http_resp r = post(&s, "tok-a", a[i], PING);
        if (i >= 17) {
            assert_int_equal(r.status, 200);
            http_free(&r);
        } else {
            assert_gone(&r);
        }
        free(a[i]);
    }
    free(b1);
    free(b2);
    assert_int_equal(srv_stop(&s), 0);
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-srvmcpss-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    return make_graph(dir, "g") || make_graph(dir, "h");
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sessions), cmocka_unit_test(test_per_actor_quota),
        cmocka_unit_test(test_bound_and_expiry)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
