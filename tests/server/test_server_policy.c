/*
 * test_server_policy.c — policy bundles (src/policy/) wired into a real server process with
 * --policy / --server-policy: allow and deny per action and per branch scope (protected
 * main, unprotected feature branches, target-branch scopes of branch create / merge /
 * delete), unknown actors denied, graph_list only through the server bundle, the matched
 * rule in the audit log, and the states that refuse to start (policy without tokens, a
 * bundle that does not validate).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], graph[128], logpath[128], gpol[128], spol[128];

static const char *GRAPH_BUNDLE =
    "version: 1\n"
    "groups:\n"
    "  team: [alice, bob]\n"
    "  admins: [root]\n"
    "  guests: [gus]\n"
    "protected_branches: [main]\n"
    "rules:\n"
    "  - id: team-read\n"
    "    allow: { actors: { group: team }, actions: [read, export], branch_scope: any }\n"
    "  - id: team-write-unprotected\n"
    "    allow: { actors: { group: team }, actions: [change], branch_scope: unprotected }\n"
    "  - id: team-branch\n"
    "    allow: { actors: { group: team }, actions: [branch_create, branch_delete], target_branch_scope: unprotected }\n"
    "  - id: admins-rw\n"
    "    allow: { actors: { group: admins }, actions: [read, change], branch_scope: any }\n"
    "  - id: admins-ops\n"
    "    allow: { actors: { group: admins }, actions: [branch_merge, schema_apply], target_branch_scope: any }\n"
    "  - id: guests-read\n"
    "    allow: { actors: { group: guests }, actions: [read, change], branch_scope: unprotected }\n"
    "  - id: guests-branch\n"
    "    allow: { actors: { group: guests }, actions: [branch_create, branch_merge], target_branch_scope: unprotected }\n";

static const char *SERVER_BUNDLE = "version: 1\n"
                                   "groups: { admins: [root] }\n"
                                   "rules:\n"
                                   "  - id: admins-list\n"
                                   "    allow: { actors: { group: admins }, actions: [graph_list] }\n";

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvpolicy-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    snprintf(gpol, sizeof gpol, "%s/graph.policy.yaml", dir);
    snprintf(spol, sizeof spol, "%s/server.policy.yaml", dir);
    write_text(gpol, GRAPH_BUNDLE);
    write_text(spol, SERVER_BUNDLE);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    unsetenv("OMNIGRAPH_UNAUTHENTICATED");
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

static long mutate(const srv *s, const char *tok, const char *name, const char *branch, char actor[64])
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"query\":\"query a($n: String) { insert Person { name: $n } }\",\"params\":{\"n\":\"%s\"},\"branch\":\"%s\"}",
             name, branch);
    http_resp r = post_json(s, tok, "/graphs/g1/mutate", body);
    long st = r.status;
    if (actor && st == 200) snprintf(actor, 64, "%s", jstr(json_object_get(r.json, "commit"), "actor_id"));
    if (st == 200) /* issue 37 item 10: the commit says its actor came from a token */
        assert_string_equal(jstr(json_object_get(r.json, "commit"), "actor_via"), "token");
    if (st == 403) assert_string_equal(jstr(r.json, "code"), "forbidden");
    http_free(&r);
    return st;
}

static void test_policy_decisions(void **state)
{
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"alice\":\"tok-a\",\"root\":\"tok-r\",\"mallory\":\"tok-m\",\"gus\":\"tok-g\"}", 1);
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--policy", gpol, "--server-policy", spol, NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    /* read: any branch */
    http_resp r = get(&s, "tok-a", "/graphs/g1/snapshot");
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* change: main is protected for the team, open for admins */
    assert_int_equal(mutate(&s, "tok-a", "A1", "main", NULL), 403);
    char actor[64];
    assert_int_equal(mutate(&s, "tok-r", "R1", "main", actor), 200);
    assert_string_equal(actor, "root");
    /* branch_create: the target scope is the new branch (unprotected) */
    r = post_json(&s, "tok-a", "/graphs/g1/branches", "{\"name\":\"feat\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&s, "tok-a", "/graphs/g1/branches", "{\"name\":\"main2\",\"from\":\"feat\"}");
    assert_int_equal(r.status, 200); /* from a branch, to an unprotected one */
    http_free(&r);
    assert_int_equal(mutate(&s, "tok-a", "A2", "feat", actor), 200);
    assert_string_equal(actor, "alice");
    /* branch_merge into protected main: only admins */
    r = post_json(&s, "tok-a", "/graphs/g1/branches/merge", "{\"source\":\"feat\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = post_json(&s, "tok-r", "/graphs/g1/branches/merge", "{\"source\":\"feat\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "actor_id"), "root");
    http_free(&r);
    /* branch_delete: the team may delete unprotected branches, never main */
    const char *ha[] = {"Authorization: Bearer tok-a", NULL};
    r = http(&s, "DELETE", "/graphs/g1/branches/main2", ha, NULL, 0);
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = http(&s, "DELETE", "/graphs/g1/branches/main", ha, NULL, 0);
    assert_int_equal(r.status, 403);
    http_free(&r);
    /* schema_apply: target main, admins only */
    r = post_json(&s, "tok-a", "/graphs/g1/schema/apply", "{\"schema_source\":\"node X { a: String }\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    /* export: the team has it */
    r = post_json(&s, "tok-a", "/graphs/g1/export", "{}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&s, "tok-r", "/graphs/g1/export", "{}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    /* load = change on the branch of the query string */
    const char *hl[] = {"Content-Type: application/x-ndjson", "Authorization: Bearer tok-a", NULL};
    const char *nd = "{\"type\":\"Person\",\"data\":{\"name\":\"L1\"}}\n";
    r = http(&s, "POST", "/graphs/g1/load/ndjson", hl, nd, strlen(nd));
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = http(&s, "POST", "/graphs/g1/load/ndjson?branch=feat", hl, nd, strlen(nd));
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* read on the source of a fork or a merge: gus reads unprotected branches only, so he may
     * not copy protected main into a branch of his own by forking, merging or loading from it */
    r = post_json(&s, "tok-g", "/graphs/g1/branches", "{\"name\":\"gus-1\",\"from\":\"feat\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&s, "tok-g", "/graphs/g1/branches", "{\"name\":\"gus-2\",\"from\":\"main\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = post_json(&s, "tok-g", "/graphs/g1/branches", "{\"name\":\"gus-3\"}"); /* from main by default */
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = post_json(&s, "tok-g", "/graphs/g1/branches/merge", "{\"source\":\"main\",\"target\":\"gus-1\"}");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = post_json(&s, "tok-g", "/graphs/g1/branches/merge", "{\"source\":\"feat\",\"target\":\"gus-1\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    const char *hg[] = {"Content-Type: application/x-ndjson", "Authorization: Bearer tok-g", NULL};
    r = http(&s, "POST", "/graphs/g1/load/ndjson?branch=gus-4&from=main", hg, nd, strlen(nd));
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = get(&s, "tok-r", "/graphs/g1/branches"); /* nothing was created by the refused calls */
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "gus-1"));
    assert_null(strstr(r.body, "gus-2"));
    assert_null(strstr(r.body, "gus-3"));
    assert_null(strstr(r.body, "gus-4"));
    http_free(&r);
    /* an actor in no group is denied everything */
    r = get(&s, "tok-m", "/graphs/g1/snapshot");
    assert_int_equal(r.status, 403);
    assert_non_null(strstr(jstr(r.json, "error"), "mallory"));
    http_free(&r);
    /* graph_list through the server bundle only */
    r = get(&s, "tok-a", "/graphs");
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = get(&s, "tok-r", "/graphs");
    assert_int_equal(r.status, 200);
    http_free(&r);
    assert_int_equal(srv_stop(&s), 0);
    /* matched rules in the log */
    FILE *f = fopen(logpath, "r");
    char line[4096];
    int team_write = 0, admins_list = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "\"matched_rule_id\":\"team-write-unprotected\"")) team_write = 1;
        if (strstr(line, "\"matched_rule_id\":\"admins-list\"")) admins_list = 1;
    }
    fclose(f);
    assert_true(team_write);
    assert_true(admins_list);
}

static void test_policy_refusals(void **state)
{
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--policy", gpol, NULL};
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    assert_true(srv_start_fails(logpath, args)); /* a policy without tokens refuses to start */
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"alice\":\"tok-a\"}", 1);
    char bad[160];
    snprintf(bad, sizeof bad, "%s/bad.yaml", dir);
    write_text(bad, "version: 1\nrules:\n  - id: r\n    allow: { actors: { group: nobody }, actions: [read] }\n");
    const char *badargs[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--policy", bad, NULL};
    assert_true(srv_start_fails(logpath, badargs));
    /* a graph bundle given as the server bundle (graph_list only there) */
    const char *swapped[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--server-policy", gpol, NULL};
    assert_true(srv_start_fails(logpath, swapped));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_decisions),
        cmocka_unit_test(test_policy_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
