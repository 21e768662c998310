/*
 * test_mcp_policy.c — per-actor tool visibility and denial masking with a real policy bundle
 * (examples/cluster/policies/team.policy.yaml through src/policy/): each actor's tools/list
 * shows exactly what it may call on some branch; calls are decided on the actual branch; a
 * stored query an actor may not invoke is indistinguishable from an unknown tool.
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
static og_mcp_policy *pol;
static og_mcp *mcp;

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-mcp-pol-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    og_buf schema = OG_BUF_INIT, q1 = OG_BUF_INIT, q2 = OG_BUF_INIT, bundle = OG_BUF_INIT;
    if (og_buf_read_file(&schema, OG_SOURCE_DIR "/examples/cluster/people.pg") != OG_OK ||
        og_buf_read_file(&q1, OG_SOURCE_DIR "/examples/cluster/queries/people.gq") != OG_OK ||
        og_buf_read_file(&q2, OG_SOURCE_DIR "/examples/cluster/queries/writes.gq") != OG_OK ||
        og_buf_read_file(&bundle, OG_SOURCE_DIR "/examples/cluster/policies/team.policy.yaml") != OG_OK)
        return -1;
    char root[128];
    snprintf(root, sizeof root, "%s/g", dir);
    int rc = 0;
    if (og_db_init(&db, root, "people.pg", (const char *)schema.data, schema.len, NULL) != OG_OK ||
        og_stored_set_new(&set) != OG_OK ||
        og_stored_set_add(set, "people.gq", (const char *)q1.data, q1.len, NULL, (const char *)schema.data, schema.len) ||
        og_stored_set_add(set, "writes.gq", (const char *)q2.data, q2.len, NULL, (const char *)schema.data, schema.len) ||
        og_mcp_policy_new(&pol, (const char *)bundle.data, bundle.len, "team.policy.yaml", "people") != OG_OK)
        rc = -1;
    og_buf_free(&schema);
    og_buf_free(&q1);
    og_buf_free(&q2);
    og_buf_free(&bundle);
    if (rc) return rc;
    og_mcp_opts o = {.db = db, .queries = set, .graph_id = "people", .authorize = og_mcp_policy_authorize, .authorize_ctx = pol};
    return og_mcp_new(&mcp, &o) == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_mcp_free(mcp);
    og_mcp_policy_free(pol);
    og_stored_set_free(set);
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static json_t *send_as(const char *actor, const char *msg)
{
    char *out = NULL;
    assert_int_equal(og_mcp_handle(mcp, actor, msg, strlen(msg), &out), OG_OK);
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    og_free(out);
    return j;
}

static json_t *call(const char *actor, const char *tool, const char *args)
{
    char msg[2048];
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             tool, args);
    return send_as(actor, msg);
}

/* The sorted, comma-joined tool names actor sees. */
static void tools_of(const char *actor, char *out, size_t cap)
{
    json_t *r = send_as(actor, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
    const char *names[64];
    size_t n = 0, i;
    json_t *t;
    json_array_foreach(tools, i, t) if (n < 64) names[n++] = json_string_value(json_object_get(t, "name"));
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
            const char *x = names[b];
            names[b] = names[b - 1];
            names[b - 1] = x;
        }
    out[0] = 0;
    for (i = 0; i < n; i++) snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? "," : "", names[i]);
    json_decref(r);
}

static int is_error(json_t *r) { return json_is_true(json_object_get(json_object_get(r, "result"), "isError")); }
static const char *text_of(json_t *r)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0), "text"));
}
static const char *err_msg(json_t *r) { return json_string_value(json_object_get(json_object_get(r, "error"), "message")); }

static void test_visibility(void **state)
{
    (void)state;
    char got[2048];
    /* team: read anywhere, invoke, change + branch_create on unprotected branches */
    tools_of("alice", got, sizeof got);
    assert_string_equal(got, "add_person,adults,befriend,branch_create,branch_diff,branch_list,change_feed,commit_get,commit_list,friends,graph_explain,graph_health,"
                             "graph_load,graph_mutate,graph_query,graph_snapshot,graph_validate,proposal_close,proposal_create,proposal_list,proposal_show,"
                             "schema_get");
    /* admins: read, invoke, merge and delete branches; no writes */
    tools_of("root", got, sizeof got);
    assert_string_equal(got, "adults,branch_delete,branch_diff,branch_list,branch_merge,change_feed,commit_get,commit_list,friends,graph_explain,graph_health,"
                             "graph_query,graph_snapshot,graph_validate,proposal_approve,proposal_close,proposal_list,proposal_show,schema_get");
    /* an actor in no group sees only the health probe */
    tools_of("mallory", got, sizeof got);
    assert_string_equal(got, "graph_health");
    tools_of(NULL, got, sizeof got);
    assert_string_equal(got, "graph_health");
    /* per-query rules: gus may read and invoke `friends` only; ivy (team, interns) everything
     * of team but the two stored writes, which a deny rule names */
    tools_of("gus", got, sizeof got);
    assert_string_equal(got, "branch_diff,branch_list,change_feed,commit_get,commit_list,friends,graph_explain,graph_health,graph_query,graph_snapshot,graph_validate,"
                             "proposal_list,proposal_show,schema_get");
    tools_of("ivy", got, sizeof got);
    assert_string_equal(got, "adults,branch_create,branch_diff,branch_list,change_feed,commit_get,commit_list,friends,graph_explain,graph_health,graph_load,"
                             "graph_mutate,graph_query,graph_snapshot,graph_validate,proposal_close,proposal_create,proposal_list,proposal_show,schema_get");
}

/* A denied stored query and an unknown tool: the same protocol error, the same message but
 * for the name. */
static void assert_masked(const char *actor, const char *tool, const char *args)
{
    char unknown[128], want[160];
    snprintf(unknown, sizeof unknown, "%s_nope", tool);
    json_t *d = call(actor, tool, args), *u = call(actor, unknown, args);
    assert_null(json_object_get(d, "result"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(d, "error"), "code")),
                     json_integer_value(json_object_get(json_object_get(u, "error"), "code")));
    snprintf(want, sizeof want, "Unknown tool: %s", tool);
    assert_string_equal(err_msg(d), want);
    snprintf(want, sizeof want, "Unknown tool: %s", unknown);
    assert_string_equal(err_msg(u), want);
    json_decref(d);
    json_decref(u);
}

static void test_per_query_rules(void **state)
{
    (void)state;
    json_t *r = call("gus", "friends", "{\"params\":{\"name\":\"Ada\"}}");
    assert_false(is_error(r));
    json_decref(r);
    assert_masked("gus", "adults", "{\"params\":{\"min\":30}}");
    assert_masked("gus", "add_person", "{\"params\":{\"name\":\"G\"},\"branch\":\"g\"}");
    r = call("ivy", "adults", "{\"params\":{\"min\":30}}");
    assert_false(is_error(r));
    json_decref(r);
    /* the deny names the query: masked even on a branch ivy may write */
    assert_masked("ivy", "add_person", "{\"params\":{\"name\":\"I\"},\"branch\":\"ivy-b\"}");
    assert_masked("ivy", "befriend", "{\"params\":{\"from\":\"a\",\"to\":\"b\"}}");
    /* ... while ivy's own ad-hoc writes stay allowed (the deny is per query) */
    r = call("ivy", "branch_create", "{\"name\":\"ivy-b\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("ivy", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"Ivy\\\" } }\",\"branch\":\"ivy-b\"}");
    if (is_error(r)) fprintf(stderr, "%s\n", text_of(r));
    assert_false(is_error(r));
    json_decref(r);
}

static void test_calls_and_masking(void **state)
{
    (void)state;
    /* a stored mutation on protected main is refused, on a feature branch allowed */
    json_t *r = call("alice", "add_person", "{\"params\":{\"name\":\"Ada\",\"age\":36}}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_of(r), "forbidden: policy denied action 'change' on query 'add_person' on branch 'main'"));
    json_decref(r);
    r = call("alice", "branch_create", "{\"name\":\"feature\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("alice", "add_person", "{\"params\":{\"name\":\"Ada\",\"age\":36},\"branch\":\"feature\"}");
    assert_false(is_error(r));
    json_decref(r);
    /* alice cannot merge; root can */
    r = call("alice", "branch_merge", "{\"source\":\"feature\"}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_of(r), "forbidden: policy denied action 'branch_merge'"));
    json_decref(r);
    r = call("root", "branch_merge", "{\"source\":\"feature\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("alice", "adults", "{\"params\":{\"min\":30}}");
    assert_false(is_error(r));
    json_decref(r);
    /* mallory: a stored query is exactly an unknown tool */
    json_t *masked = call("mallory", "adults", "{\"params\":{\"min\":30}}");
    json_t *unknown = call("mallory", "adultz", "{\"params\":{\"min\":30}}");
    assert_non_null(json_object_get(masked, "error"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(masked, "error"), "code")),
                     json_integer_value(json_object_get(json_object_get(unknown, "error"), "code")));
    assert_string_equal(err_msg(masked), "Unknown tool: adults");
    assert_string_equal(err_msg(unknown), "Unknown tool: adultz");
    json_decref(masked);
    json_decref(unknown);
    /* a built-in read is a named denial */
    r = call("mallory", "graph_query", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_of(r), "forbidden: policy denied action 'read'"));
    json_decref(r);
}

/* Issue 37 item 5: a grant of "these stored queries and nothing else".  A `read` (or `change`)
 * rule with `queries:` holds only while one of those stored queries runs, so the guest sees
 * and runs `adults` but has no graph_query, and no other tool that reads. */
static void test_stored_queries_only(void **state)
{
    (void)state;
    static const char bundle[] =
        "version: 1\n"
        "groups: {guests: [gus], clerks: [cleo]}\n"
        "protected_branches: [main]\n"
        "rules:\n"
        "  - {id: guests-adults, allow: {actors: {group: guests}, actions: [invoke_query, read], queries: [adults]}}\n"
        "  - {id: clerks-add, allow: {actors: {group: clerks}, actions: [invoke_query, change], queries: [add_person]}}\n";
    og_mcp_policy *p2;
    og_mcp *m2;
    assert_int_equal(og_mcp_policy_new(&p2, bundle, strlen(bundle), "stored.yaml", "people"), OG_OK);
    og_mcp_opts o = {.db = db, .queries = set, .graph_id = "people", .authorize = og_mcp_policy_authorize, .authorize_ctx = p2};
    assert_int_equal(og_mcp_new(&m2, &o), OG_OK);
    og_mcp *saved = mcp;
    mcp = m2;
    char got[2048];
    tools_of("gus", got, sizeof got);
    assert_string_equal(got, "adults,graph_health");
    tools_of("cleo", got, sizeof got);
    assert_string_equal(got, "add_person,graph_health");
    json_t *r = call("gus", "adults", "{\"params\":{\"min\":0}}");
    if (is_error(r)) fprintf(stderr, "%s\n", text_of(r));
    assert_false(is_error(r));
    json_decref(r);
    /* the ad-hoc lane reads nothing: a named denial, as for any built-in read */
    r = call("gus", "graph_query", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}");
    assert_true(is_error(r));
    assert_string_equal(text_of(r), "forbidden: policy denied action 'read' on branch 'main' for actor 'gus'");
    json_decref(r);
    assert_masked("gus", "friends", "{\"params\":{\"name\":\"Ada\"}}");
    r = send_as("gus", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://schema\"}}");
    assert_non_null(json_object_get(r, "error"));
    json_decref(r);
    /* a stored mutation without ad-hoc writes: on main, add_person runs; graph_mutate does not */
    r = call("cleo", "add_person", "{\"params\":{\"name\":\"Cleo\",\"age\":41},\"branch\":\"main\"}");
    if (is_error(r)) fprintf(stderr, "%s\n", text_of(r));
    assert_false(is_error(r));
    json_decref(r);
    r = call("cleo", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"X\\\" } }\",\"branch\":\"main\"}");
    assert_true(is_error(r));
    assert_string_equal(text_of(r), "forbidden: policy denied action 'change' on branch 'main' for actor 'cleo'");
    json_decref(r);
    mcp = saved;
    og_mcp_free(m2);
    og_mcp_policy_free(p2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_visibility), cmocka_unit_test(test_calls_and_masking),
                                       cmocka_unit_test(test_per_query_rules), cmocka_unit_test(test_stored_queries_only)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
