/*
 * test_server_mcp_owners.c — branch ownership under a policy (issue 38, docs/policy.md
 * "Branch ownership"): agents create branches only in their own namespace (`agent-a/...`),
 * write, delete and merge into only the branches they created, and cannot do any of it to
 * another agent's branch — over the server's MCP endpoint and its HTTP routes alike.  A branch
 * in agent-a's namespace that agent-c created (before the rule) stays agent-c's: ownership is
 * the creator recorded in the branch log, not the name.
 *
 * Merge proposals on the same server: an agent proposes its own branch (another agent may not
 * propose it), the proposal survives a server restart, the agent cannot approve it (merging
 * into main is the lead's), the lead reviews and approves it over HTTP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static policy_server P;

static const char *BUNDLE =
    "version: 1\n"
    "groups:\n"
    "  agents: [agent-a, agent-b]\n"
    "  legacy: [agent-c]\n"
    "  leads: [lead]\n"
    "protected_branches: [main]\n"
    "rules:\n"
    "  - id: read\n"
    "    allow: { actors: { group: agents }, actions: [read], branch_scope: any }\n"
    "  - id: create-own-namespace\n"
    "    allow: { actors: { group: agents }, actions: [branch_create], target_branch_scope: actor_namespace }\n"
    "  - id: write-own\n"
    "    allow: { actors: { group: agents }, actions: [change], branch_scope: owned }\n"
    "  - id: land-own\n"
    "    allow: { actors: { group: agents }, actions: [branch_delete, branch_merge], target_branch_scope: owned }\n"
    "  - id: legacy-read\n"
    "    allow: { actors: { group: legacy }, actions: [read], branch_scope: any }\n"
    "  - id: legacy-create\n"
    "    allow: { actors: { group: legacy }, actions: [branch_create], target_branch_scope: unprotected }\n"
    "  - id: leads-land\n"
    "    allow: { actors: { group: leads }, actions: [read, branch_merge] }\n";

static int setup(void **state)
{
    (void)state;
    return policy_server_setup(&P, "/tmp/og-mcpowners-XXXXXX", BUNDLE,
                               "{\"agent-a\":\"tok-a\",\"agent-b\":\"tok-b\",\"agent-c\":\"tok-c\",\"lead\":\"tok-l\"}");
}

static int teardown(void **state)
{
    (void)state;
    return policy_server_teardown(&P);
}

static http_resp rpc(const char *token, const char *body)
{
    char auth[64];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    const char *h[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream", auth, NULL};
    http_resp r = http(&P.s, "POST", "/graphs/g/mcp", h, body, strlen(body));
    assert_int_equal(r.status, 200);
    return r;
}

/* A tools/call; *is_error and the first text (copied into text) of its result. */
static void call(const char *token, const char *name, const char *args, int *is_error, char *text, size_t cap)
{
    char body[2048];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}", name,
             args);
    http_resp r = rpc(token, body);
    json_t *res = json_object_get(r.json, "result");
    assert_non_null(res);
    *is_error = json_is_true(json_object_get(res, "isError"));
    const char *t = json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    snprintf(text, cap, "%s", t ? t : "");
    http_free(&r);
}

static void ok(const char *token, const char *name, const char *args)
{
    int err;
    char text[4096];
    call(token, name, args, &err, text, sizeof text);
    if (err) fail_msg("%s %s: %s", name, args, text);
}

static void refused(const char *token, const char *name, const char *args, const char *want)
{
    int err;
    char text[4096];
    call(token, name, args, &err, text, sizeof text);
    if (!err || !strstr(text, want)) fail_msg("%s %s: expected a refusal with \"%s\", got \"%s\"", name, args, want, text);
}

static int lists_tool(const char *token, const char *name)
{
    http_resp r = rpc(token, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    json_t *tools = json_object_get(json_object_get(r.json, "result"), "tools");
    int found = 0;
    for (size_t i = 0; i < json_array_size(tools); i++)
        found |= !strcmp(jstr(json_array_get(tools, i), "name"), name);
    http_free(&r);
    return found;
}

static long http_status(const char *method, const char *token, const char *path, const char *body)
{
    char auth[64];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    const char *h[] = {"Content-Type: application/json", auth, NULL};
    http_resp r = http(&P.s, method, path, h, body, body ? strlen(body) : 0);
    long st = r.status;
    http_free(&r);
    return st;
}

#define INSERT(name, branch)                                                                                     \
    "{\"query\":\"query m() { insert Person { name: \\\"" name "\\\", age: 1 } }\",\"branch\":\"" branch "\"}"

static void test_agents_cannot_touch_each_others_branches(void **state)
{
    (void)state;
    /* the tools an agent may use on a branch of its own are listed */
    assert_true(lists_tool("tok-a", "branch_delete"));
    assert_true(lists_tool("tok-a", "branch_merge"));
    assert_true(lists_tool("tok-a", "graph_mutate"));

    /* the namespace rule: each agent creates branches under its own id only */
    ok("tok-a", "branch_create", "{\"name\":\"agent-a/work\"}");
    ok("tok-a", "branch_create", "{\"name\":\"agent-a/scratch\"}");
    ok("tok-b", "branch_create", "{\"name\":\"agent-b/work\"}");
    refused("tok-b", "branch_create", "{\"name\":\"agent-a/sneaky\"}",
            "forbidden: policy denied action 'branch_create' on branch 'main' targeting branch 'agent-a/sneaky' for actor "
            "'agent-b'");
    refused("tok-b", "branch_create", "{\"name\":\"agent-b-x/work\"}", "forbidden"); /* a prefix is not a namespace */
    assert_int_equal(http_status("POST", "tok-b", "/graphs/g/branches", "{\"name\":\"agent-a/sneaky2\"}"), 403);

    /* writes: own branch yes, another's no (MCP and HTTP) */
    ok("tok-a", "graph_mutate", INSERT("Ann", "agent-a/work"));
    ok("tok-b", "graph_mutate", INSERT("Bob", "agent-b/work"));
    refused("tok-b", "graph_mutate", INSERT("Eve", "agent-a/work"),
            "forbidden: policy denied action 'change' on branch 'agent-a/work' for actor 'agent-b'");
    assert_int_equal(http_status("POST", "tok-b", "/graphs/g/change",
                                 "{\"query\":\"query m() { insert Person { name: \\\"Eve\\\" } }\",\"branch\":\"agent-a/work\"}"),
                     403);

    /* merging into another agent's branch is refused; into one's own it runs (reading the
     * other's branch is allowed) */
    refused("tok-b", "branch_merge", "{\"source\":\"agent-b/work\",\"target\":\"agent-a/work\"}",
            "forbidden: policy denied action 'branch_merge' on branch 'agent-b/work' targeting branch 'agent-a/work'");
    assert_int_equal(http_status("POST", "tok-b", "/graphs/g/branches/merge",
                                 "{\"source\":\"agent-b/work\",\"target\":\"agent-a/work\"}"),
                     403);
    refused("tok-a", "branch_merge", "{\"source\":\"agent-a/work\"}", /* main is nobody's here */
            "forbidden: policy denied action 'branch_merge' on branch 'agent-a/work' targeting branch 'main'");
    ok("tok-a", "branch_merge", "{\"source\":\"agent-b/work\",\"target\":\"agent-a/work\"}");

    /* deleting another's branch is refused (MCP and HTTP); one's own is not */
    refused("tok-b", "branch_delete", "{\"name\":\"agent-a/scratch\"}",
            "forbidden: policy denied action 'branch_delete' targeting branch 'agent-a/scratch' for actor 'agent-b'");
    assert_int_equal(http_status("DELETE", "tok-b", "/graphs/g/branches/agent-a%2Fscratch", NULL), 403);
    ok("tok-a", "branch_delete", "{\"name\":\"agent-a/scratch\"}");
    assert_int_equal(http_status("DELETE", "tok-b", "/graphs/g/branches/agent-b%2Fwork", NULL), 200);

    /* ownership is the creator in the branch log, not the name: agent-c (allowed any
     * unprotected name) creates one in agent-a's namespace, and agent-a may not delete it */
    ok("tok-c", "branch_create", "{\"name\":\"agent-a/planted\"}");
    refused("tok-a", "branch_delete", "{\"name\":\"agent-a/planted\"}",
            "forbidden: policy denied action 'branch_delete' targeting branch 'agent-a/planted' for actor 'agent-a'");
    refused("tok-a", "graph_mutate", INSERT("Ann", "agent-a/planted"), "forbidden");
}

static json_t *http_json(const char *method, const char *token, const char *path, const char *body, long want)
{
    char auth[64];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    const char *h[] = {"Content-Type: application/json", auth, NULL};
    http_resp r = http(&P.s, method, path, h, body, body ? strlen(body) : 0);
    if (r.status != want) fail_msg("%s %s: want %ld, got %ld: %.*s", method, path, want, r.status, (int)r.len, r.body);
    json_t *j = json_incref(r.json);
    http_free(&r);
    return j;
}

static void test_proposals_survive_a_restart_and_need_the_policy(void **state)
{
    (void)state;
    ok("tok-a", "branch_create", "{\"name\":\"agent-a/prop\"}");
    ok("tok-a", "graph_mutate", INSERT("Pat", "agent-a/prop"));
    refused("tok-b", "proposal_create", "{\"source\":\"agent-a/prop\",\"title\":\"not mine\"}",
            "forbidden: policy denied action 'change' on branch 'agent-a/prop' for actor 'agent-b'");
    int err;
    char text[4096];
    call("tok-a", "proposal_create", "{\"source\":\"agent-a/prop\",\"title\":\"add Pat\"}", &err, text, sizeof text);
    assert_false(err);
    json_t *p = json_loads(text, 0, NULL);
    char id[64], path[160];
    snprintf(id, sizeof id, "%s", jstr(p, "id"));
    json_decref(p);

    /* a restart forgets nothing: the proposal is in the graph */
    assert_int_equal(srv_stop(&P.s), 0);
    assert_int_equal(policy_server_start(&P), 0);
    json_t *l = http_json("GET", "tok-l", "/graphs/g/proposals?state=open", NULL, 200);
    json_t *first = json_array_get(json_object_get(l, "proposals"), 0);
    assert_string_equal(jstr(first, "id"), id);
    assert_string_equal(jstr(first, "created_by"), "agent-a");
    json_decref(l);

    /* the agent may not approve (merging into main is not its); the lead reviews and approves */
    char args[128];
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", id);
    refused("tok-a", "proposal_approve", args, "forbidden: policy denied action 'branch_merge'");
    snprintf(path, sizeof path, "/graphs/g/proposals/%s/approve", id);
    json_decref(http_json("POST", "tok-a", path, "{}", 403));
    snprintf(path, sizeof path, "/graphs/g/proposals/%s", id);
    json_t *rv = http_json("GET", "tok-l", path, NULL, 200);
    assert_string_equal(jstr(json_object_get(rv, "merge"), "outcome"), "fast_forward");
    json_decref(rv);
    snprintf(path, sizeof path, "/graphs/g/proposals/%s/approve", id);
    json_t *a = http_json("POST", "tok-l", path, "{}", 200);
    assert_string_equal(jstr(json_object_get(a, "proposal"), "state"), "merged");
    assert_string_equal(jstr(json_object_get(a, "proposal"), "updated_by"), "lead");
    json_decref(a);
    json_decref(http_json("GET", "tok-l", "/graphs/g/proposals/01ARZ3NDEKTSV4RRFFQ69G5FAV", NULL, 404));
}

/* Issue 38: the server's default agent-branch rule under ownership scopes (docs/policy.md
 * "Branch ownership"): agent-a's write naming no branch creates agent-a/work — allowed as a
 * create in its namespace — and is then decided on a branch agent-a owns; agent-b cannot write
 * that branch by naming it, and its own rule-made branch is its own. */
static void test_agent_branch_rule_makes_owned_branches(void **state)
{
    (void)state;
    assert_int_equal(srv_stop(&P.s), 0);
    const char *args[] = {"--graph", P.graph, "--bind", "127.0.0.1:0", "--policy", P.pol, "--mcp-agent-branch", "{actor}/work", NULL};
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", P.tokens_json, 1);
    assert_int_equal(srv_start(&P.s, P.logpath, args), 0);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    const char *write = "{\"query\":\"query m() { insert Person { name: \\\"Wes\\\" } }\"}";
    int err;
    char text[4096];
    call("tok-a", "graph_mutate", write, &err, text, sizeof text);
    if (err) fail_msg("rule write: %s", text);
    assert_non_null(strstr(text, "\"branch\":\"agent-a/work\""));
    refused("tok-b", "graph_mutate", INSERT("Bo", "agent-a/work"),
            "forbidden: policy denied action 'change' on branch 'agent-a/work' for actor 'agent-b'");
    call("tok-b", "graph_mutate", write, &err, text, sizeof text);
    if (err) fail_msg("rule write: %s", text);
    assert_non_null(strstr(text, "\"branch\":\"agent-b/work\""));
    /* the lead may not create branches at all: the rule cannot make one for it */
    refused("tok-l", "graph_mutate", write, "forbidden: the agent branch 'lead/work' does not exist and cannot be created");
    assert_int_equal(srv_stop(&P.s), 0);
    assert_int_equal(policy_server_start(&P), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_agents_cannot_touch_each_others_branches),
                                       cmocka_unit_test(test_proposals_survive_a_restart_and_need_the_policy),
                                       cmocka_unit_test(test_agent_branch_rule_makes_owned_branches)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
