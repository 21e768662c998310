/*
 * test_server_mcp_stream.c — the MCP endpoint's notifications over HTTP on a real server
 * (docs/mcp.md "Protocol"): an SSE response (text/event-stream, each message one event, the
 * response last, the stream closed) when the client accepts one and the call has something to
 * report; plain JSON otherwise; the logging/setLevel of one actor applying to that actor's
 * later POSTs only; and the events of a graph_load arriving while the load runs, not all at
 * its end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], logpath[128];

static const char *const SSE_ACCEPT = "Accept: application/json, text/event-stream";

static http_resp mcp_post(const srv *s, const char *token, const char *accept, const char *body)
{
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    const char *h[] = {"Content-Type: application/json", accept, token ? auth : NULL, NULL};
    return http(s, "POST", "/graphs/g/mcp", h, body, strlen(body));
}

static int is_sse(const http_resp *r) { return r->headers && strstr(r->headers, "Content-Type: text/event-stream"); }

/* The JSON messages of an SSE body ("event: message" + one data line per event). */
static json_t *sse_messages(const char *body)
{
    json_t *arr = json_array();
    const char *p = body;
    while (p && *p) {
        assert_int_equal(strncmp(p, "event: message\ndata: ", 21), 0);
        p += 21;
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        json_t *j = json_loadb(p, (size_t)(nl - p), 0, NULL);
        assert_non_null(j);
        json_array_append_new(arr, j);
        assert_int_equal(nl[1], '\n');
        p = nl + 2;
    }
    return arr;
}

static size_t count_method(json_t *arr, const char *method)
{
    size_t i, k = 0;
    json_t *n;
    json_array_foreach(arr, i, n) {
        const char *m = json_string_value(json_object_get(n, "method"));
        k += m && !strcmp(m, method);
    }
    return k;
}

static const char *QUERY_CALL = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
                                "\"arguments\":{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}}}";
static const char *QUERY_CALL_TOKEN =
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
    "\"arguments\":{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"},\"_meta\":{\"progressToken\":\"t\"}}}";

static void test_per_actor_levels_and_framing(void **state)
{
    (void)state;
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"alice\":\"tok-a\",\"bob\":\"tok-b\"}", 1);
    const char *args[] = {"--graph", NULL, "--bind", "127.0.0.1:0", NULL};
    char g[128];
    snprintf(g, sizeof g, "g=%s/g", dir);
    args[1] = g;
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");

    /* nobody set a level: plain JSON */
    http_resp r = mcp_post(&s, "tok-a", SSE_ACCEPT, QUERY_CALL);
    assert_int_equal(r.status, 200);
    assert_false(is_sse(&r));
    assert_non_null(r.json);
    http_free(&r);

    /* alice sets debug (its own POST, answered plainly) */
    r = mcp_post(&s, "tok-a", SSE_ACCEPT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}");
    assert_int_equal(r.status, 200);
    assert_false(is_sse(&r));
    http_free(&r);

    /* alice's next call streams its log lines, the response last */
    r = mcp_post(&s, "tok-a", SSE_ACCEPT, QUERY_CALL);
    assert_int_equal(r.status, 200);
    assert_true(is_sse(&r));
    json_t *ev = sse_messages(r.body);
    size_t n = json_array_size(ev);
    assert_true(count_method(ev, "notifications/message") >= 3);
    assert_int_equal(count_method(ev, "notifications/message"), n - 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ev, n - 1), "id")), 7);
    json_decref(ev);
    http_free(&r);

    /* ...but not when her Accept lacks text/event-stream */
    r = mcp_post(&s, "tok-a", "Accept: application/json", QUERY_CALL);
    assert_false(is_sse(&r));
    assert_int_equal(json_integer_value(json_object_get(r.json, "id")), 7);
    http_free(&r);

    /* bob set nothing: plain; with a token he gets progress and no log lines */
    r = mcp_post(&s, "tok-b", SSE_ACCEPT, QUERY_CALL);
    assert_false(is_sse(&r));
    assert_non_null(r.json);
    http_free(&r);
    r = mcp_post(&s, "tok-b", SSE_ACCEPT, QUERY_CALL_TOKEN);
    assert_true(is_sse(&r));
    ev = sse_messages(r.body);
    assert_true(count_method(ev, "notifications/progress") >= 3);
    assert_int_equal(count_method(ev, "notifications/message"), 0);
    json_decref(ev);
    http_free(&r);

    /* alice raises hers to warning: a quick read logs nothing any more */
    r = mcp_post(&s, "tok-a", SSE_ACCEPT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}");
    http_free(&r);
    r = mcp_post(&s, "tok-a", SSE_ACCEPT, QUERY_CALL);
    assert_false(is_sse(&r));
    http_free(&r);

    /* a batch with a token streams, its array of responses last */
    r = mcp_post(&s, "tok-b", SSE_ACCEPT,
                 "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_list\",\"arguments\":{},"
                 "\"_meta\":{\"progressToken\":\"b\"}}}]");
    assert_true(is_sse(&r));
    ev = sse_messages(r.body);
    n = json_array_size(ev);
    assert_true(json_is_array(json_array_get(ev, n - 1)));
    assert_int_equal(json_array_size(json_array_get(ev, n - 1)), 2);
    assert_int_equal(count_method(ev, "notifications/progress"), n - 1);
    json_decref(ev);
    http_free(&r);

    /* a denied write reports nothing, so it stays plain JSON (a tool error) */
    r = mcp_post(&s, "tok-b", SSE_ACCEPT,
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_create\","
                 "\"arguments\":{\"name\":\"x\"},\"_meta\":{\"progressToken\":\"w\"}}}");
    assert_false(is_sse(&r));
    assert_true(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
    http_free(&r);
    assert_int_equal(srv_stop(&s), 0);
}

/* ---- live delivery: when each event arrives ---- */

typedef struct timed {
    char *data;
    size_t len;
    double first_event_ms, response_ms; /* arrival of the first event's bytes / of the response */
    double t0;
} timed;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static size_t timed_collect(char *p, size_t sz, size_t n, void *arg)
{
    timed *t = arg;
    double at = now_ms() - t->t0;
    char *b = realloc(t->data, t->len + sz * n + 1);
    if (!b) return 0;
    memcpy(b + t->len, p, sz * n);
    t->len += sz * n;
    b[t->len] = 0;
    t->data = b;
    if (t->first_event_ms < 0 && strstr(b, "notifications/progress")) t->first_event_ms = at;
    if (t->response_ms < 0 && strstr(b, "\"id\":9")) t->response_ms = at;
    return sz * n;
}

static void test_load_progress_is_live(void **state)
{
    (void)state;
    const char *args[] = {"--graph", NULL, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    char g[128];
    snprintf(g, sizeof g, "g=%s/g", dir);
    args[1] = g;
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    /* ~0.8 MB of NDJSON (the body limit is 1 MiB): long enough that its stages are apart */
    size_t cap = 18000 * 64, len = 0;
    char *nd = malloc(cap);
    for (int i = 0; i < 18000; i++) len += (size_t)snprintf(nd + len, cap - len, "{\"type\":\"Person\",\"data\":{\"name\":\"n%d\"}}\n", i);
    json_t *msg = json_pack("{ss si ss s{ss s{ss ss ss} s{ss}}}", "jsonrpc", "2.0", "id", 9, "method", "tools/call", "params",
                            "name", "graph_load", "arguments", "data", nd, "branch", "bulk", "from", "main", "_meta",
                            "progressToken", "L");
    free(nd);
    char *body = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);

    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "http://%s/graphs/g/mcp", s.addr);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = curl_slist_append(h, SSE_ACCEPT);
    h = curl_slist_append(h, "Expect:");
    timed t = {NULL, 0, -1, -1, 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, timed_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
    t.t0 = now_ms();
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(body);
    assert_int_equal(status, 200);

    json_t *ev = sse_messages(t.data);
    size_t n = json_array_size(ev);
    json_t *last = json_array_get(ev, n - 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(last, "result"), "structuredContent"),
                                                        "total_entities")),
                     18000);
    assert_true(count_method(ev, "notifications/progress") >= 18); /* every 1,000 records, and the stages */
    json_decref(ev);
    free(t.data);
    /* the first event came while the load still ran: the stream is not assembled at the end
     * (buffered, the first event and the response arrive together) */
    print_message("first progress event at %.1f ms, response at %.1f ms\n", t.first_event_ms, t.response_ms);
    assert_true(t.first_event_ms >= 0 && t.response_ms > t.first_event_ms + 10.0);
    assert_int_equal(srv_stop(&s), 0);
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-srvmcps-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    return make_graph(dir, "g");
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
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_per_actor_levels_and_framing),
                                       cmocka_unit_test(test_load_progress_is_live)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
