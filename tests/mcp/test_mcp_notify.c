/*
 * test_mcp_notify.c — the notifications a tools/call sends while it runs (src/mcp/mcp.h,
 * docs/mcp.md "Protocol"): notifications/progress only for a call that carries a
 * progressToken, strictly increasing, before the response; notifications/message only at or
 * above the level logging/setLevel set (none without one); graph_load's progress counting its
 * records; and the HTTP binding's SSE answer (events parseable, the response last) versus
 * plain JSON when Accept lacks text/event-stream, for batches too, and a write refused by
 * admission staying a plain 429.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/stored.h"
#include "mcp/mcp.h"

static char dir[64];
static og_db *db;
static og_stored_set *set;

static const char *SCHEMA = "node Person {\n    name: String @key\n    age: I32?\n}\n";
static const char *QUERIES = "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n}\n";
static const char *READ = "query q() { match { $p: Person } return { $p.name } }";

/* The notifications the sink received, parsed, in order. */
static json_t *notes;

static void sink(void *ctx, const char *json)
{
    (void)ctx;
    json_t *j = json_loads(json, 0, NULL);
    assert_non_null(j);
    json_array_append_new(notes, j);
}

static og_mcp *new_mcp(og_mcp_notify_fn fn, og_mcp_log_level lv, int (*admit)(void *, char *, size_t))
{
    og_mcp *m = NULL;
    og_mcp_opts o = {.db = db, .queries = set, .graph_id = "people", .notify = fn, .log_level = lv, .admit = admit};
    assert_int_equal(og_mcp_new(&m, &o), OG_OK);
    return m;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-mcpn-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char root[128];
    snprintf(root, sizeof root, "%s/g", dir);
    if (og_db_init(&db, root, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    if (og_stored_set_new(&set) != OG_OK) return -1;
    if (og_stored_set_add(set, "q.gq", QUERIES, strlen(QUERIES), NULL, SCHEMA, strlen(SCHEMA)) != OG_OK) return -1;
    notes = json_array();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(notes);
    og_stored_set_free(set);
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static json_t *send(og_mcp *m, const char *msg)
{
    char *out = NULL;
    json_array_clear(notes);
    assert_int_equal(og_mcp_handle(m, "agent", msg, strlen(msg), &out), OG_OK);
    assert_non_null(out);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    og_free(out);
    return j;
}

/* A tools/call of graph_query (READ), with `meta` as params._meta (JSON text, or NULL). */
static json_t *query_call(og_mcp *m, const char *meta)
{
    char msg[1024];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
             "\"arguments\":{\"query\":\"%s\"}%s%s}}",
             READ, meta ? ",\"_meta\":" : "", meta ? meta : "");
    return send(m, msg);
}

static const char *method_of(json_t *n) { return json_string_value(json_object_get(n, "method")); }
static json_t *params_of(json_t *n) { return json_object_get(n, "params"); }

static size_t count_method(json_t *arr, const char *method)
{
    size_t i, k = 0;
    json_t *n;
    json_array_foreach(arr, i, n) k += method_of(n) && !strcmp(method_of(n), method);
    return k;
}

/* Every progress notification of `arr` carries `token` and increases strictly. */
static size_t check_progress(json_t *arr, json_t *token)
{
    size_t i, k = 0;
    json_t *n;
    double last = -1;
    json_array_foreach(arr, i, n) {
        if (!method_of(n) || strcmp(method_of(n), "notifications/progress")) continue;
        json_t *p = params_of(n);
        assert_true(json_equal(json_object_get(p, "progressToken"), token));
        double v = json_number_value(json_object_get(p, "progress"));
        assert_true(v > last);
        last = v;
        json_t *total = json_object_get(p, "total");
        if (total) assert_true(json_number_value(total) >= v);
        assert_non_null(json_string_value(json_object_get(p, "message")));
        k++;
    }
    return k;
}

static void test_progress_only_with_token(void **state)
{
    (void)state;
    og_mcp *m = new_mcp(sink, OG_MCP_LOG_OFF, NULL);
    json_t *r = query_call(m, NULL);
    assert_false(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
    assert_int_equal(json_array_size(notes), 0); /* no token: nothing */
    assert_int_equal(og_mcp_notified(m), 0);
    json_decref(r);

    r = query_call(m, "{\"progressToken\":\"tok-1\"}");
    json_t *tok = json_string("tok-1");
    assert_true(check_progress(notes, tok) >= 3);
    assert_int_equal(json_array_size(notes), count_method(notes, "notifications/progress")); /* no level: no logs */
    assert_int_equal(og_mcp_notified(m), json_array_size(notes));
    json_decref(tok);
    json_decref(r);

    r = query_call(m, "{\"progressToken\":42}"); /* an integer token is echoed as one */
    tok = json_integer(42);
    assert_true(check_progress(notes, tok) >= 3);
    json_decref(tok);
    json_decref(r);

    r = query_call(m, "{\"progressToken\":{\"not\":\"a token\"}}"); /* neither string nor integer */
    assert_int_equal(json_array_size(notes), 0);
    json_decref(r);

    /* a stored query reports its stages too; an unknown tool reports nothing */
    r = send(m, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\","
                "\"arguments\":{\"params\":{\"min\":1}},\"_meta\":{\"progressToken\":\"s\"}}}");
    tok = json_string("s");
    assert_true(check_progress(notes, tok) >= 3);
    json_decref(tok);
    json_decref(r);
    r = send(m, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\",\"arguments\":{},"
                "\"_meta\":{\"progressToken\":\"s\"}}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
    assert_int_equal(json_array_size(notes), 0);
    json_decref(r);
    og_mcp_free(m);
}

/* Levels of the notifications/message in `notes`: each at or above `min`, logger omnigraph. */
static size_t check_levels(const char *min, int *saw_debug)
{
    static const char *const order[] = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};
    int lo = 0;
    while (strcmp(order[lo], min)) lo++;
    size_t i, k = 0;
    json_t *n;
    *saw_debug = 0;
    json_array_foreach(notes, i, n) {
        if (!method_of(n) || strcmp(method_of(n), "notifications/message")) continue;
        json_t *p = params_of(n);
        assert_string_equal(json_string_value(json_object_get(p, "logger")), "omnigraph");
        assert_non_null(json_string_value(json_object_get(p, "data")));
        const char *lv = json_string_value(json_object_get(p, "level"));
        int at = 0;
        while (at < 8 && strcmp(order[at], lv)) at++;
        assert_true(at < 8 && at >= lo);
        *saw_debug |= at == 0;
        k++;
    }
    return k;
}

static void test_log_levels(void **state)
{
    (void)state;
    og_mcp *m = new_mcp(sink, OG_MCP_LOG_OFF, NULL);
    int dbg;
    json_t *r = query_call(m, NULL);
    assert_int_equal(json_array_size(notes), 0); /* no level set: no log notifications */
    json_decref(r);

    json_decref(send(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}"));
    assert_int_equal(og_mcp_log_level_get(m), OG_MCP_LOG_DEBUG);
    r = query_call(m, NULL);
    assert_true(check_levels("debug", &dbg) >= 3);
    assert_true(dbg);
    assert_int_equal(count_method(notes, "notifications/progress"), 0); /* logs only: no token */
    json_decref(r);

    json_decref(send(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"}}"));
    r = query_call(m, NULL);
    assert_true(check_levels("info", &dbg) >= 1);
    assert_false(dbg); /* below the level: absent */
    json_decref(r);

    json_decref(send(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"error\"}}"));
    r = query_call(m, NULL);
    assert_int_equal(json_array_size(notes), 0); /* a successful call logs nothing at error */
    json_decref(r);
    r = send(m, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
                "\"arguments\":{\"query\":\"query q() { match { $p: Nobody } return { $p.name } }\"}}}");
    assert_int_equal(check_levels("error", &dbg), 1); /* the failure is */
    json_decref(r);

    /* an unknown level changes nothing */
    r = send(m, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
    assert_int_equal(og_mcp_log_level_get(m), OG_MCP_LOG_ERROR);
    json_decref(r);
    og_mcp_free(m);

    /* the level a surface remembered starts a new handler (the HTTP server's per-actor rule) */
    m = new_mcp(sink, OG_MCP_LOG_INFO, NULL);
    r = query_call(m, NULL);
    assert_true(check_levels("info", &dbg) >= 1);
    json_decref(r);
    og_mcp_free(m);
    /* no sink: nothing is produced, whatever the level */
    m = new_mcp(NULL, OG_MCP_LOG_DEBUG, NULL);
    r = query_call(m, "{\"progressToken\":\"t\"}");
    assert_int_equal(og_mcp_notified(m), 0);
    json_decref(r);
    og_mcp_free(m);
}

static void test_load_counts_records(void **state)
{
    (void)state;
    og_mcp *m = new_mcp(sink, OG_MCP_LOG_OFF, NULL);
    /* 2,500 records: progress after 1,000 and 2,000 read, then validating / writing 2,500 */
    size_t cap = 2500 * 64, len = 0;
    char *nd = malloc(cap);
    for (int i = 0; i < 2500; i++)
        len += (size_t)snprintf(nd + len, cap - len, "{\"type\":\"Person\",\"data\":{\"name\":\"p%d\",\"age\":%d}}\n", i, i % 90);
    json_t *msg = json_pack("{ss si ss s{ss s{ss ss} s{ss}}}", "jsonrpc", "2.0", "id", 3, "method", "tools/call", "params",
                            "name", "graph_load", "arguments", "data", nd, "branch", "main", "_meta", "progressToken", "L");
    free(nd);
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    json_t *r = send(m, text);
    free(text);
    json_t *sc = json_object_get(json_object_get(r, "result"), "structuredContent");
    assert_int_equal(json_integer_value(json_object_get(sc, "total_entities")), 2500);
    json_t *tok = json_string("L");
    assert_true(check_progress(notes, tok) >= 5);
    json_decref(tok);
    int read1000 = 0, read2000 = 0, validating = 0, writing = 0;
    size_t i;
    json_t *n;
    json_array_foreach(notes, i, n) {
        const char *msg_text = json_string_value(json_object_get(params_of(n), "message"));
        double v = json_number_value(json_object_get(params_of(n), "progress"));
        if (!strncmp(msg_text, "read 1000 records", 17)) read1000 = v == 1000;
        if (!strncmp(msg_text, "read 2000 records", 17)) read2000 = v == 2000;
        validating |= !strcmp(msg_text, "validating 2500 records");
        writing |= !strcmp(msg_text, "writing 2500 records");
    }
    assert_true(read1000 && read2000 && validating && writing);
    json_decref(r);
    og_mcp_free(m);
}

/* Splits an SSE body into the JSON messages of its events (each "event: message" + one data
 * line, blank-line separated); fails on anything else. */
static json_t *sse_messages(const char *body)
{
    json_t *arr = json_array();
    const char *p = body;
    while (*p) {
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

static og_status http_post(og_mcp *m, const char *accept, const char *body, unsigned *status, char **out)
{
    og_mcp_http_request rq = {.method = "POST", .content_type = "application/json", .accept = accept,
                              .actor = "agent", .body = body, .body_len = strlen(body)};
    return og_mcp_http(m, &rq, status, out);
}

static void test_http_sse_framing(void **state)
{
    (void)state;
    og_mcp *m = new_mcp(NULL, OG_MCP_LOG_OFF, NULL); /* no live sink: og_mcp_http buffers */
    char body[1024];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
             "\"arguments\":{\"query\":\"%s\"},\"_meta\":{\"progressToken\":\"h\"}}}",
             READ);
    unsigned status = 0;
    char *out = NULL;
    assert_int_equal(http_post(m, "application/json, text/event-stream", body, &status, &out), OG_OK);
    assert_int_equal(status, 200);
    assert_true(og_mcp_http_sse(m));
    json_t *ev = sse_messages(out);
    og_free(out);
    size_t n = json_array_size(ev);
    assert_true(n >= 4);
    json_t *tok = json_string("h");
    assert_int_equal(check_progress(ev, tok), n - 1); /* every event before the last is progress */
    json_decref(tok);
    json_t *last = json_array_get(ev, n - 1);
    assert_int_equal(json_integer_value(json_object_get(last, "id")), 5); /* the response, last */
    assert_non_null(json_object_get(last, "result"));
    json_decref(ev);

    /* Accept without text/event-stream: plain JSON, nothing sent */
    assert_int_equal(http_post(m, "application/json", body, &status, &out), OG_OK);
    assert_int_equal(status, 200);
    assert_false(og_mcp_http_sse(m));
    assert_int_equal(og_mcp_notified(m), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 5);
    json_decref(j);
    og_free(out);

    /* no token and no level: plain JSON even when a stream is accepted */
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
             "\"arguments\":{\"query\":\"%s\"}}}",
             READ);
    assert_int_equal(http_post(m, "application/json, text/event-stream", body, &status, &out), OG_OK);
    assert_false(og_mcp_http_sse(m));
    j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_decref(j);
    og_free(out);

    /* a batch: both calls' notifications, then the array of responses as the last event */
    snprintf(body, sizeof body,
             "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
             "\"arguments\":{\"query\":\"%s\"},\"_meta\":{\"progressToken\":\"a\"}}},"
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},"
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_list\",\"arguments\":{},"
             "\"_meta\":{\"progressToken\":\"b\"}}}]",
             READ);
    assert_int_equal(http_post(m, "text/event-stream, application/json", body, &status, &out), OG_OK);
    assert_int_equal(status, 200);
    assert_true(og_mcp_http_sse(m));
    ev = sse_messages(out);
    og_free(out);
    n = json_array_size(ev);
    last = json_array_get(ev, n - 1);
    assert_true(json_is_array(last));
    assert_int_equal(json_array_size(last), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(last, 2), "id")), 3);
    size_t fa = 0, fb = 0, i;
    json_t *e;
    json_array_foreach(ev, i, e) {
        if (i == n - 1) break;
        const char *t = json_string_value(json_object_get(params_of(e), "progressToken"));
        fa += t && !strcmp(t, "a");
        fb += t && !strcmp(t, "b");
    }
    assert_true(fa >= 3 && fb >= 3);
    json_decref(ev);
    og_mcp_free(m);
}

static int refuse(void *ctx, char *why, size_t cap)
{
    (void)ctx;
    snprintf(why, cap, "busy");
    return 1;
}

/* A write refused by admission sends nothing first, so it stays a plain 429. */
static void test_refused_write_stays_plain(void **state)
{
    (void)state;
    og_mcp *m = new_mcp(NULL, OG_MCP_LOG_DEBUG, refuse);
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_create\","
                       "\"arguments\":{\"name\":\"x\"},\"_meta\":{\"progressToken\":\"w\"}}}";
    unsigned status = 0;
    char *out = NULL;
    assert_int_equal(http_post(m, "application/json, text/event-stream", body, &status, &out), OG_OK);
    assert_int_equal(status, 429);
    assert_false(og_mcp_http_sse(m));
    json_t *j = json_loads(out, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "error"), "code")), OG_MCP_TOO_MANY_REQUESTS);
    json_decref(j);
    og_free(out);
    og_mcp_free(m);
}

static void test_sse_event(void **state)
{
    (void)state;
    char *e = og_mcp_sse_event("{\"a\":1}");
    assert_string_equal(e, "event: message\ndata: {\"a\":1}\n\n");
    free(e);
    assert_true(og_mcp_accepts_sse("application/json, text/event-stream"));
    assert_true(og_mcp_accepts_sse("TEXT/EVENT-STREAM"));
    assert_false(og_mcp_accepts_sse("application/json"));
    assert_false(og_mcp_accepts_sse(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_only_with_token), cmocka_unit_test(test_log_levels),
        cmocka_unit_test(test_load_counts_records),      cmocka_unit_test(test_http_sse_framing),
        cmocka_unit_test(test_refused_write_stays_plain), cmocka_unit_test(test_sse_event),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
