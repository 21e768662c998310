/*
 * test_mcp.c — the MCP request handler (src/mcp/mcp.h), transport-free: the handshake and
 * version negotiation, notifications, JSON-RPC errors, the tool catalog with stored-query
 * tools and their input schemas, calls (stored read, mutation on a branch, merge), resources,
 * per-actor visibility and denial masking through the authorizer, and the meta mode.
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
#include "util/buf.h"

static char dir[64];
static og_db *db;
static og_stored_set *set;
static og_mcp *mcp;

static const char *SCHEMA = "node Person {\n    name: String @key\n    age: I32?\n}\nedge Knows: Person -> Person\n";
static const char *QUERIES =
    "query adults($min: I32) @description(\"People at least $min years old.\") {\n"
    "    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n    order { $p.name asc }\n}\n"
    "query add_person($name: String, $age: I32?) {\n    insert Person { name: $name, age: $age }\n}\n"
    "query secret() {\n    match { $p: Person }\n    return { $p.name }\n}\n";

/* The test authorizer: actor "reader" may read and invoke adults only; "nobody" nothing;
 * anyone else everything. */
static og_mcp_verdict authz(void *ctx, const char *actor, const char *action, const char *branch, const char *target,
                            const char *query, int listing, char *why, size_t cap)
{
    (void)ctx, (void)branch, (void)target, (void)listing;
    if (!actor || (strcmp(actor, "reader") && strcmp(actor, "nobody"))) return OG_MCP_ALLOW;
    if (!strcmp(actor, "nobody")) {
        snprintf(why, cap, "policy denied action '%s' for actor 'nobody'", action);
        return !strcmp(action, "invoke_query") ? OG_MCP_MASK : OG_MCP_DENY;
    }
    if (!strcmp(action, "read")) return OG_MCP_ALLOW;
    if (!strcmp(action, "invoke_query")) return query && !strcmp(query, "adults") ? OG_MCP_ALLOW : OG_MCP_MASK;
    snprintf(why, cap, "policy denied action '%s' for actor 'reader'", action);
    return OG_MCP_DENY;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-mcp-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char root[128];
    snprintf(root, sizeof root, "%s/g", dir);
    if (og_db_init(&db, root, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    if (og_stored_set_new(&set) != OG_OK) return -1;
    if (og_stored_set_add(set, "q.gq", QUERIES, strlen(QUERIES), NULL, SCHEMA, strlen(SCHEMA)) != OG_OK) return -1;
    og_mcp_opts o = {.db = db, .queries = set, .graph_id = "people", .authorize = authz};
    return og_mcp_new(&mcp, &o) == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_mcp_free(mcp);
    og_stored_set_free(set);
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Sends one message as `actor`; returns the parsed response (NULL for none). */
static json_t *send_as(const char *actor, const char *msg)
{
    char *out = NULL;
    assert_int_equal(og_mcp_handle(mcp, actor, msg, strlen(msg), &out), OG_OK);
    if (!out) return NULL;
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    og_free(out);
    return j;
}

static json_t *call(const char *actor, const char *tool, const char *args_json)
{
    char msg[4096];
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             tool, args_json);
    return send_as(actor, msg);
}

static json_t *result(json_t *r) { return json_object_get(r, "result"); }
static int is_error(json_t *r) { return json_is_true(json_object_get(result(r), "isError")); }
static const char *text_of(json_t *r)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(result(r), "content"), 0), "text"));
}
static long err_code(json_t *r) { return (long)json_integer_value(json_object_get(json_object_get(r, "error"), "code")); }

static json_t *tool_named(json_t *list, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(result(list), "tools"), i, t)
        if (!strcmp(json_string_value(json_object_get(t, "name")), name)) return t;
    return NULL;
}

static void test_handshake(void **state)
{
    (void)state;
    json_t *r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                              "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}");
    assert_string_equal(json_string_value(json_object_get(result(r), "protocolVersion")), "2025-06-18");
    assert_non_null(json_object_get(json_object_get(result(r), "capabilities"), "tools"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(result(r), "serverInfo"), "name")), "omnigraph");
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    json_decref(r);
    /* an unknown version: we answer with ours */
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
    assert_string_equal(json_string_value(json_object_get(result(r), "protocolVersion")), og_mcp_protocol_versions[0]);
    assert_string_equal(json_string_value(json_object_get(r, "id")), "a");
    json_decref(r);
    assert_null(send_as(NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    assert_true(json_is_object(result(r)));
    json_decref(r);
}

/* prompts: offered with an empty catalog; logging: a valid level is acknowledged with {} */
static void test_prompts_and_logging(void **state)
{
    (void)state;
    json_t *r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
    json_t *caps = json_object_get(result(r), "capabilities");
    assert_non_null(json_object_get(caps, "prompts"));
    assert_non_null(json_object_get(caps, "logging"));
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\",\"params\":{}}");
    assert_true(json_is_array(json_object_get(result(r), "prompts")));
    assert_int_equal(json_array_size(json_object_get(result(r), "prompts")), 3);
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":\"x\"}}");
    assert_int_equal(err_code(r), -32602);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "error"), "message")), "Invalid params: unknown prompt: x");
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"}}");
    assert_true(json_is_object(result(r)));
    assert_int_equal(json_object_size(result(r)), 0);
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}");
    assert_int_equal(err_code(r), -32602);
    json_decref(r);
}

static void test_protocol_errors(void **state)
{
    (void)state;
    json_t *r = send_as(NULL, "{not json");
    assert_int_equal(err_code(r), -32700);
    assert_true(json_is_null(json_object_get(r, "id")));
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}");
    assert_int_equal(err_code(r), -32600);
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\"}");
    assert_int_equal(err_code(r), -32601);
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}");
    assert_int_equal(err_code(r), -32602);
    json_decref(r);
    r = call(NULL, "no_such_tool", "{}");
    assert_int_equal(err_code(r), -32602);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "error"), "message")), "Unknown tool: no_such_tool");
    json_decref(r);
    r = call(NULL, "graph_query", "{\"snapshot\":1}");
    assert_true(is_error(r));
    assert_string_equal(text_of(r), "invalid: graph_query: argument `query` (a string) is required");
    json_decref(r);
}

/* Pagination: every list is one page (no nextCursor), so a cursor is one we never issued. */
static void test_list_cursor(void **state)
{
    (void)state;
    const char *methods[] = {"tools/list", "resources/list", "resources/templates/list", "prompts/list"};
    for (size_t i = 0; i < 4; i++) {
        char msg[256];
        snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{}}", methods[i]);
        json_t *r = send_as(NULL, msg);
        assert_non_null(result(r));
        assert_null(json_object_get(result(r), "nextCursor"));
        json_decref(r);
        snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s\",\"params\":{\"cursor\":\"abc\"}}", methods[i]);
        r = send_as(NULL, msg);
        assert_int_equal(err_code(r), -32602);
        assert_string_equal(json_string_value(json_object_get(json_object_get(r, "error"), "message")),
                            "Invalid params: invalid cursor (every list is a single page)");
        json_decref(r);
        snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"%s\",\"params\":{\"cursor\":null}}", methods[i]);
        r = send_as(NULL, msg);
        assert_non_null(result(r));
        json_decref(r);
    }
}

/* JSON-RPC batches (MCP 2025-03-26): one response per request, in order; notifications and
 * client responses answer nothing; initialize may not be batched; an empty batch is invalid. */
static void test_batches(void **state)
{
    (void)state;
    json_t *r = send_as(NULL, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                              "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\",\"params\":{\"name\":\"graph_health\"}},"
                              "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"},"
                              "7]");
    assert_true(json_is_array(r));
    assert_int_equal(json_array_size(r), 4);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r, 0), "id")), 1);
    assert_true(json_is_object(result(json_array_get(r, 0))));
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 1), "id")), "b");
    assert_false(is_error(json_array_get(r, 1)));
    assert_int_equal(err_code(json_array_get(r, 2)), -32601);
    assert_int_equal(err_code(json_array_get(r, 3)), -32600);
    json_decref(r);
    /* only notifications / responses: nothing to answer */
    assert_null(send_as(NULL, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                              "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}]"));
    r = send_as(NULL, "[]");
    assert_true(json_is_object(r));
    assert_int_equal(err_code(r), -32600);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "error"), "message")), "Invalid Request: an empty batch");
    json_decref(r);
    /* at most 64 members; a larger batch is refused whole, none of it run */
    {
        char big[65 * 48 + 8];
        size_t o = 0;
        for (int k = 0; k < 65; k++)
            o += (size_t)snprintf(big + o, sizeof big - o, "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}",
                                  k ? "," : "[", k);
        snprintf(big + o, sizeof big - o, "]");
        r = send_as(NULL, big);
        assert_true(json_is_object(r));
        assert_int_equal(err_code(r), -32600);
        assert_string_equal(json_string_value(json_object_get(json_object_get(r, "error"), "message")),
                            "Invalid Request: a batch of 65 messages (at most 64)");
        json_decref(r);
        big[o - 1 - strlen("{\"jsonrpc\":\"2.0\",\"id\":64,\"method\":\"ping\"}")] = ']';
        big[o - strlen("{\"jsonrpc\":\"2.0\",\"id\":64,\"method\":\"ping\"}")] = 0;
        r = send_as(NULL, big);
        assert_true(json_is_array(r));
        assert_int_equal(json_array_size(r), 64);
        json_decref(r);
    }
    r = send_as(NULL, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\"}}]");
    assert_int_equal(json_array_size(r), 1);
    assert_int_equal(err_code(json_array_get(r, 0)), -32600);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r, 0), "id")), 1);
    json_decref(r);
    /* over HTTP: 200 with the array, 202 when nothing is answered */
    const char *b = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]";
    og_mcp_http_request rq = {.method = "POST", .content_type = "application/json", .body = b, .body_len = strlen(b)};
    unsigned status = 0;
    char *out = NULL;
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 200);
    assert_string_equal(out, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]");
    og_free(out);
    b = "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}]";
    rq.body = b;
    rq.body_len = strlen(b);
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 202);
    assert_null(out);
}

static void test_tool_catalog(void **state)
{
    (void)state;
    json_t *r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    const char *builtin[] = {"graph_health", "graph_query", "graph_snapshot", "schema_get", "branch_list", "commit_list",
                             "commit_get", "graph_mutate", "graph_load", "branch_create", "branch_delete", "branch_merge",
                             "schema_apply"};
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++) assert_non_null(tool_named(r, builtin[i]));
    json_t *t = tool_named(r, "adults");
    assert_non_null(t);
    assert_string_equal(json_string_value(json_object_get(t, "description")), "People at least $min years old.");
    json_t *schema = json_object_get(json_object_get(json_object_get(t, "inputSchema"), "properties"), "params");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(schema, "properties"), "min"), "type")),
                        "integer");
    assert_true(json_is_true(json_object_get(json_object_get(t, "annotations"), "readOnlyHint")));
    assert_true(json_is_true(json_object_get(json_object_get(tool_named(r, "add_person"), "annotations"), "destructiveHint")));
    json_decref(r);
}

/* branch_create's message is kept with the branch and listed by branch_list — also by a new
 * MCP session over a reopened graph (it is in the graph's storage); a bad message refuses the
 * create and leaves no branch. */
static void test_branch_message(void **state)
{
    (void)state;
    json_t *r = call("alice", "branch_create", "{\"name\":\"alice/why\",\"message\":\"record the Q3 decision\"}");
    assert_false(is_error(r));
    assert_string_equal(json_string_value(json_object_get(json_object_get(result(r), "structuredContent"), "message")),
                        "record the Q3 decision");
    json_decref(r);
    r = call("alice", "branch_create", "{\"name\":\"alice/bad\",\"message\":7}");
    assert_true(is_error(r));
    json_decref(r);
    r = call("alice", "branch_create", "{\"name\":\"alice/bad\",\"message\":\"bell\\u0007\"}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_of(r), "control"));
    json_decref(r);
    /* the same graph opened afresh, a new handler: the message is read from the branch log */
    char root[128];
    snprintf(root, sizeof root, "%s/g", dir);
    og_db *db2;
    og_mcp *m2;
    assert_int_equal(og_db_open(&db2, root, NULL), OG_OK);
    og_mcp_opts o = {.db = db2, .queries = set, .graph_id = "people", .authorize = authz};
    assert_int_equal(og_mcp_new(&m2, &o), OG_OK);
    og_mcp *saved = mcp;
    mcp = m2;
    r = call("alice", "branch_list", "{}");
    mcp = saved;
    assert_false(is_error(r));
    json_t *list = json_object_get(json_object_get(result(r), "structuredContent"), "branches"), *b;
    size_t i;
    int seen = 0;
    json_array_foreach(list, i, b)
    {
        const char *name = json_string_value(json_object_get(b, "name"));
        assert_string_not_equal(name, "alice/bad");
        if (!strcmp(name, "alice/why")) {
            assert_string_equal(json_string_value(json_object_get(b, "message")), "record the Q3 decision");
            seen = 1;
        }
    }
    assert_true(seen);
    json_decref(r);
    og_mcp_free(m2);
    og_db_close(db2);
    assert_int_equal(og_db_branch_delete(db, "alice/why"), OG_OK);
}

static void test_agent_flow(void **state)
{
    (void)state;
    /* a branch, a stored mutation on it, a stored read on it and on main, a merge */
    json_t *r = call("alice", "branch_create", "{\"name\":\"feature\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("alice", "add_person", "{\"params\":{\"name\":\"Ada\",\"age\":36},\"branch\":\"feature\"}");
    assert_false(is_error(r));
    json_t *sc = json_object_get(result(r), "structuredContent");
    assert_int_equal(json_integer_value(json_object_get(sc, "affected_nodes")), 1);
    assert_string_equal(json_string_value(json_object_get(sc, "branch")), "feature");
    assert_string_equal(json_string_value(json_object_get(sc, "actor_id")), "alice");
    json_decref(r);
    r = call("alice", "adults", "{\"params\":{\"min\":30},\"branch\":\"feature\"}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(result(r), "structuredContent"), "row_count")), 1);
    json_decref(r);
    r = call("alice", "adults", "{\"params\":{\"min\":30}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(result(r), "structuredContent"), "row_count")), 0);
    json_decref(r);
    r = call("alice", "branch_merge", "{\"source\":\"feature\",\"delete_branch\":true}");
    assert_false(is_error(r));
    assert_string_equal(json_string_value(json_object_get(json_object_get(result(r), "structuredContent"), "outcome")),
                        "fast_forward");
    json_decref(r);
    r = call("alice", "adults", "{\"params\":{\"min\":30}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(result(r), "structuredContent"), "row_count")), 1);
    json_decref(r);
    /* the engine's errors come back as tool errors the model can read */
    r = call("alice", "adults", "{\"params\":{\"min\":\"thirty\"}}");
    assert_true(is_error(r));
    assert_string_equal(text_of(r), "invalid: param `$min`: expected I32 (int), got a string");
    json_decref(r);
    /* a parameter beside `params` instead of inside it is named, with the fix */
    r = call("alice", "adults", "{\"min\":30}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_of(r), "`min` is not an argument of tool adults; a stored query's parameters go inside "
                                        "`params`: {\"params\": {\"min\": ...}}"));
    json_decref(r);
    r = call("alice", "graph_query", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("alice", "graph_load", "{\"data\":\"{\\\"type\\\":\\\"Person\\\",\\\"data\\\":{\\\"name\\\":\\\"Grace\\\"}}\\n\",\"branch\":\"main\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("alice", "commit_list", "{\"limit\":1}");
    assert_false(is_error(r));
    json_decref(r);
    /* a write's "message" labels its commit */
    r = call("alice", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"Kay\\\" } }\",\"message\":\"kay via mcp\",\"branch\":\"main\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("alice", "commit_list", "{\"limit\":1}");
    assert_non_null(strstr(text_of(r), "kay via mcp"));
    json_decref(r);
    r = call("alice", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"Lu\\\" } }\",\"message\":\"a\\u0001b\",\"branch\":\"main\"}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_of(r), "invalid: message: a commit message holds no control characters"));
    json_decref(r);
}

static void test_resources(void **state)
{
    (void)state;
    json_t *r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}");
    assert_int_equal(json_array_size(json_object_get(result(r), "resources")), 3);
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://schema\"}}");
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(result(r), "contents"), 0), "text")), SCHEMA);
    json_decref(r);
    r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://nope\"}}");
    assert_int_equal(err_code(r), -32002);
    json_decref(r);
}

static void test_visibility_and_masking(void **state)
{
    (void)state;
    /* the reader sees read tools and the one query it may invoke, no writers */
    json_t *r = send_as("reader", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    assert_non_null(tool_named(r, "graph_query"));
    assert_non_null(tool_named(r, "adults"));
    assert_null(tool_named(r, "secret"));
    assert_null(tool_named(r, "add_person"));
    assert_null(tool_named(r, "graph_mutate"));
    json_decref(r);
    /* a query it may not invoke is exactly an unknown tool */
    json_t *masked = call("reader", "secret", "{}");
    json_t *unknown = call("reader", "really_unknown", "{}");
    assert_int_equal(err_code(masked), err_code(unknown));
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(masked, "error"), "message")), "Unknown tool: secret"));
    json_decref(masked);
    json_decref(unknown);
    /* a builtin it may not call is a tool error naming the denial */
    r = call("reader", "graph_mutate", "{\"query\":\"query m() { delete Person where name = \\\"Ada\\\" }\",\"branch\":\"main\"}");
    assert_true(is_error(r));
    assert_string_equal(text_of(r), "forbidden: policy denied action 'change' for actor 'reader'");
    json_decref(r);
    /* nobody sees no stored query and no resource */
    r = send_as("nobody", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    assert_non_null(tool_named(r, "graph_health"));
    assert_null(tool_named(r, "adults"));
    assert_null(tool_named(r, "graph_query"));
    json_decref(r);
    r = send_as("nobody", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://schema\"}}");
    assert_int_equal(err_code(r), -32002);
    json_decref(r);
}

static void test_meta_mode(void **state)
{
    (void)state;
    /* 24 or more exposed queries collapse into stored_query_list + stored_query_run */
    og_buf b = OG_BUF_INIT;
    for (int i = 0; i < 25; i++)
        og_buf_printf(&b, "query q%02d() {\n    match { $p: Person }\n    return { $p.name }\n}\n", i);
    og_stored_set *many = NULL;
    assert_int_equal(og_stored_set_new(&many), OG_OK);
    assert_int_equal(og_stored_set_add(many, "many.gq", (const char *)b.data, b.len, NULL, SCHEMA, strlen(SCHEMA)), OG_OK);
    og_buf_free(&b);
    og_mcp *m = NULL;
    og_mcp_opts o = {.db = db, .queries = many};
    assert_int_equal(og_mcp_new(&m, &o), OG_OK);
    og_mcp *saved = mcp;
    mcp = m;
    json_t *r = send_as(NULL, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    assert_null(tool_named(r, "q00"));
    assert_non_null(tool_named(r, "stored_query_list"));
    assert_non_null(tool_named(r, "stored_query_run"));
    json_decref(r);
    r = call(NULL, "stored_query_run", "{\"name\":\"q07\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call(NULL, "stored_query_run", "{\"name\":\"q07\",\"x\":1}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_of(r), "`x` is not an argument"));
    json_decref(r);
    r = call(NULL, "stored_query_list", "{\"filter\":\"q1\"}");
    assert_int_equal(json_array_size(json_object_get(json_object_get(result(r), "structuredContent"), "queries")), 10);
    json_decref(r);
    mcp = saved;
    og_mcp_free(m);
    og_stored_set_free(many);
}

static void test_http_binding(void **state)
{
    (void)state;
    const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
    og_mcp_http_request rq = {.method = "POST", .content_type = "application/json",
                              .accept = "application/json, text/event-stream", .protocol_version = "2025-06-18",
                              .body = ping, .body_len = strlen(ping)};
    unsigned status = 0;
    char *out = NULL;
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 200);
    assert_non_null(strstr(out, "\"id\":9"));
    og_free(out);
    const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    rq.body = note;
    rq.body_len = strlen(note);
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 202);
    assert_null(out);
    rq.body = ping;
    rq.body_len = strlen(ping);
    rq.method = "GET";
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 405);
    og_free(out);
    rq.method = "POST";
    rq.content_type = "text/plain";
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 415);
    og_free(out);
    rq.content_type = "application/json; charset=utf-8";
    rq.accept = "text/html";
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 406);
    og_free(out);
    rq.accept = NULL;
    rq.protocol_version = "1999-01-01";
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 400);
    og_free(out);
    /* initialize is exempt: it negotiates the version in its body */
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}";
    rq.body = init;
    rq.body_len = strlen(init);
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 200);
    og_free(out);
    /* ...decided from the parsed method: an argument reading "initialize" is no exemption */
    const char *sneaky = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\","
                         "\"arguments\":{\"query\":\"initialize\",\"name\":\"initialize\"}}}";
    rq.body = sneaky;
    rq.body_len = strlen(sneaky);
    assert_int_equal(og_mcp_http(mcp, &rq, &status, &out), OG_OK);
    assert_int_equal(status, 400);
    og_free(out);
}

/* The write-lock hook brackets exactly the writing tools, balanced. */
static int lock_depth, lock_calls;
static void count_lock(void *ctx, int lock)
{
    (void)ctx;
    lock_depth += lock ? 1 : -1;
    lock_calls += lock;
    assert_true(lock_depth == 0 || lock_depth == 1);
}

static void test_write_lock_hook(void **state)
{
    (void)state;
    og_mcp *m = NULL;
    og_mcp_opts o = {.db = db, .queries = set, .graph_id = "people", .write_lock = count_lock};
    assert_int_equal(og_mcp_new(&m, &o), OG_OK);
    const char *reads[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\",\"arguments\":{\"params\":{\"min\":1}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_list\",\"arguments\":{}}}",
    };
    const char *writes[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"add_person\",\"arguments\":{\"params\":{\"name\":\"Lock\"},\"branch\":\"main\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_create\",\"arguments\":{\"name\":\"locked\"}}}",
    };
    for (size_t i = 0; i < 2; i++) {
        char *out = NULL;
        assert_int_equal(og_mcp_handle(m, "w", reads[i], strlen(reads[i]), &out), OG_OK);
        og_free(out);
    }
    assert_int_equal(lock_calls, 0);
    for (size_t i = 0; i < 2; i++) {
        char *out = NULL;
        assert_int_equal(og_mcp_handle(m, "w", writes[i], strlen(writes[i]), &out), OG_OK);
        assert_null(strstr(out, "\"isError\":true"));
        og_free(out);
    }
    assert_int_equal(lock_calls, 2);
    assert_int_equal(lock_depth, 0);
    og_mcp_free(m);
}

/* The admission hook: asked once per writing call, after authorization; a refusal is the
 * JSON-RPC error OG_MCP_TOO_MANY_REQUESTS, the call does not run, and og_mcp_http says 429. */
static int admit_calls;
static int refuse_all(void *ctx, char *why, size_t cap)
{
    (void)ctx;
    admit_calls++;
    snprintf(why, cap, "budget spent");
    return 1;
}

static void test_admission_hook(void **state)
{
    (void)state;
    og_mcp *m = NULL;
    lock_calls = lock_depth = 0;
    admit_calls = 0;
    og_mcp_opts o = {.db = db, .queries = set, .graph_id = "people", .write_lock = count_lock, .admit = refuse_all};
    assert_int_equal(og_mcp_new(&m, &o), OG_OK);
    const char *writes[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"add_person\",\"arguments\":{\"params\":{\"name\":\"Adm\"},\"branch\":\"main\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_create\",\"arguments\":{\"name\":\"refused\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_mutate\",\"arguments\":{\"query\":\"query m() { insert Person { name: \\\"X\\\" } }\",\"branch\":\"main\"}}}",
    };
    for (size_t i = 0; i < 3; i++) {
        og_mcp_http_request rq = {.method = "POST", .body = writes[i], .body_len = strlen(writes[i])};
        unsigned status = 0;
        char *out = NULL;
        assert_int_equal(og_mcp_http(m, &rq, &status, &out), OG_OK);
        assert_int_equal(status, 429);
        assert_true(og_mcp_throttled(m));
        json_t *j = json_loads(out, 0, NULL);
        json_t *e = json_object_get(j, "error");
        assert_int_equal(json_integer_value(json_object_get(e, "code")), OG_MCP_TOO_MANY_REQUESTS);
        assert_string_equal(json_string_value(json_object_get(e, "message")), "too_many_requests: budget spent");
        json_decref(j);
        og_free(out);
    }
    assert_int_equal(admit_calls, 3);
    assert_int_equal(lock_calls, 0); /* refused before the lock: nothing ran */
    /* reads are not asked, and the flag is per message */
    const char *read = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_list\",\"arguments\":{}}}";
    char *out = NULL;
    assert_int_equal(og_mcp_handle(m, "w", read, strlen(read), &out), OG_OK);
    assert_false(og_mcp_throttled(m));
    assert_null(strstr(out, "refused"));
    og_free(out);
    assert_int_equal(admit_calls, 3);
    og_mcp_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admission_hook),
        cmocka_unit_test(test_handshake),      cmocka_unit_test(test_protocol_errors),
        cmocka_unit_test(test_prompts_and_logging), cmocka_unit_test(test_list_cursor),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_tool_catalog),   cmocka_unit_test(test_agent_flow),
        cmocka_unit_test(test_resources),      cmocka_unit_test(test_visibility_and_masking),
        cmocka_unit_test(test_meta_mode),      cmocka_unit_test(test_http_binding),
        cmocka_unit_test(test_write_lock_hook), cmocka_unit_test(test_branch_message),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
