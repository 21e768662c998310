/*
 * test_server_studio.c — the routes the studio's editor, timeline and merge view use, against
 * a real server with tokens and a policy: POST /lint (a text checked against the schema: clean, a
 * type error with its code, line, column in code points and byte span, a parse error, several
 * queries, a branch that does not exist; refused without a token, for an actor the policy does
 * not let read, and for malformed bodies) and GET /diff (the net rows between two commits:
 * inserts from the genesis, an update's before and after, paging, the same refusals), and a
 * merge conflict's per-property values in merge_conflicts[].properties.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64];
static srv S;

static const char *BUNDLE = "version: 1\n"
                            "groups:\n"
                            "  team: [alice]\n"
                            "rules:\n"
                            "  - id: team-rw\n"
                            "    allow: { actors: { group: team }, actions: [read, change], branch_scope: any }\n"
                            "  - id: team-branches\n"
                            "    allow: { actors: { group: team }, actions: [branch_create, branch_merge], target_branch_scope: any }\n";

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvstudio-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    char graph[128], log[128], pol[128];
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(log, sizeof log, "%s/server.log", dir);
    snprintf(pol, sizeof pol, "%s/graph.policy.yaml", dir);
    FILE *f = fopen(pol, "w");
    if (!f) return -1;
    fputs(BUNDLE, f);
    fclose(f);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    unsetenv("OMNIGRAPH_UNAUTHENTICATED");
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "{\"alice\":\"tok-a\",\"mallory\":\"tok-m\"}", 1);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--policy", pol, NULL};
    return srv_start(&S, log, args);
}

static int teardown(void **state)
{
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

/* POST /lint of `text` (as a JSON string) with extra members `extra` ("" or ",\"branch\":…"). */
static http_resp lint(const char *tok, const char *text, const char *extra)
{
    json_t *q = json_string(text);
    char *qs = json_dumps(q, JSON_ENCODE_ANY);
    json_decref(q);
    size_t n = strlen(qs) + strlen(extra) + 32;
    char *body = malloc(n);
    snprintf(body, n, "{\"query\":%s%s}", qs, extra);
    free(qs);
    http_resp r = post_json(&S, tok, "/graphs/g1/lint", body);
    free(body);
    return r;
}

static json_t *diag(http_resp *r, size_t i) { return json_array_get(json_object_get(r->json, "diagnostics"), i); }
static json_int_t num(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

static void test_lint_clean(void **state)
{
    http_resp r = lint("tok-a", "query q() { match { $p: Person } return { $p.name, $p.age } }", "");
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    assert_int_equal(num(r.json, "errors"), 0);
    assert_int_equal(json_array_size(json_object_get(r.json, "diagnostics")), 0);
    json_t *q0 = json_array_get(json_object_get(r.json, "queries"), 0);
    assert_string_equal(jstr(q0, "name"), "q");
    assert_string_equal(jstr(q0, "kind"), "read");
    assert_true(json_is_true(json_object_get(q0, "ok")));
    http_free(&r);
}

static void test_lint_type_error(void **state)
{
    /* the misspelt property is on line 3, after a string with three two-byte characters on
     * line 2: the column counts code points, start counts bytes */
    const char *text = "query q() {\n"
                       "  match { $p: Person  $p.name = \"\xc3\xa9\xc3\xa9\xc3\xa9\" }\n"
                       "  return { $p.nmae }\n"
                       "}\n";
    http_resp r = lint("tok-a", text, "");
    assert_int_equal(r.status, 200);
    assert_true(json_is_false(json_object_get(r.json, "ok")));
    assert_int_equal(num(r.json, "errors"), 1);
    assert_int_equal(json_array_size(json_object_get(r.json, "diagnostics")), 1);
    json_t *d = diag(&r, 0);
    assert_string_equal(jstr(d, "severity"), "error");
    assert_string_equal(jstr(d, "code"), "T6");
    assert_string_equal(jstr(d, "query"), "q");
    assert_string_equal(jstr(d, "message"), "T6: type `Person` has no property `nmae`; did you mean `name`?");
    /* the span is exactly the property access; line 3 holds only ASCII, so its column is
     * the byte distance from the line's start */
    const char *at = strstr(text, "$p.nmae");
    assert_int_equal(num(d, "start"), at - text);
    assert_int_equal(num(d, "end"), at - text + 7);
    assert_int_equal(num(d, "line"), 3);
    assert_int_equal(num(d, "column"), at - strstr(text, "  return") + 1);
    assert_int_equal(num(d, "end_line"), 3);
    assert_int_equal(num(d, "end_column"), num(d, "column") + 7);
    http_free(&r);

    /* the same error on the line holding the multi-byte characters: column < byte offset + 1 */
    const char *one = "query q() { match { $p: Person  $p.name = \"\xc3\xa9\xc3\xa9\xc3\xa9\"  $p.agee = 3 } return { $p.name } }";
    r = lint("tok-a", one, "");
    assert_int_equal(r.status, 200);
    d = diag(&r, 0);
    assert_int_equal(num(d, "line"), 1);
    assert_int_equal(num(d, "start"), strstr(one, "$p.agee") - one);
    /* three two-byte characters before it: the column counts them once each */
    assert_int_equal(num(d, "column"), num(d, "start") + 1 - 3);
    http_free(&r);
}

static void test_lint_parse_error_and_several(void **state)
{
    http_resp r = lint("tok-a", "query q() {\n  match { $p: Person \n  return { $p.name }\n", "");
    assert_int_equal(r.status, 200);
    assert_true(json_is_false(json_object_get(r.json, "ok")));
    json_t *d = diag(&r, 0);
    assert_string_equal(jstr(d, "code"), "Q000");
    assert_true(json_is_null(json_object_get(d, "query")));
    assert_non_null(strstr(jstr(d, "message"), "parse error"));
    assert_int_equal(num(d, "line"), 3);
    assert_int_equal(json_array_size(json_object_get(r.json, "queries")), 0);
    http_free(&r);

    /* two queries: only the second is wrong, and only it is named */
    r = lint("tok-a",
             "query good() { match { $p: Person } return { $p.name } }\n"
             "query bad() { match { $p: Persn } return { $p.name } }\n",
             "");
    assert_int_equal(r.status, 200);
    json_t *qs = json_object_get(r.json, "queries");
    assert_int_equal(json_array_size(qs), 2);
    assert_true(json_is_true(json_object_get(json_array_get(qs, 0), "ok")));
    assert_true(json_is_false(json_object_get(json_array_get(qs, 1), "ok")));
    assert_int_equal(json_array_size(json_object_get(r.json, "diagnostics")), 1);
    d = diag(&r, 0);
    assert_string_equal(jstr(d, "query"), "bad");
    assert_int_equal(num(d, "line"), 2);
    assert_non_null(strstr(jstr(d, "message"), "Persn"));
    http_free(&r);

    /* a mutation without parameters: a warning pointing at the query's name, still ok */
    r = lint("tok-a", "query add() { insert Person { name: \"Zed\" } }", "");
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "queries"), 0), "kind"), "mutation");
    d = diag(&r, 0);
    assert_string_equal(jstr(d, "severity"), "warning");
    assert_int_equal(num(d, "start"), 6);
    assert_int_equal(num(d, "end"), 9);
    http_free(&r);
}

static void test_lint_refusals(void **state)
{
    const char *ok = "query q() { match { $p: Person } return { $p.name } }";
    http_resp r = lint(NULL, ok, "");
    assert_int_equal(r.status, 401);
    http_free(&r);
    r = lint("tok-m", ok, ""); /* a token the policy gives no read */
    assert_int_equal(r.status, 403);
    assert_string_equal(jstr(r.json, "code"), "forbidden");
    http_free(&r);
    r = lint("tok-a", ok, ",\"branch\":\"nope\"");
    assert_int_equal(r.status, 404);
    http_free(&r);
    r = lint("tok-a", ok, ",\"branch\":\"main\",\"snapshot\":\"main\"");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = lint("tok-a", ok, ",\"name\":\"q\"");
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error"), "unknown field 'name'"));
    http_free(&r);
    r = post_json(&S, "tok-a", "/graphs/g1/lint", "{\"query\": 3}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = post_json(&S, "tok-a", "/graphs/g1/lint", "{}");
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error"), "missing field 'query'"));
    http_free(&r);
    /* a commit of the graph is a valid snapshot */
    r = lint("tok-a", ok, ",\"snapshot\":\"main\"");
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    http_free(&r);
}

static void commits(char head[64], char genesis[64])
{
    http_resp r = get(&S, "tok-a", "/graphs/g1/commits");
    json_t *cs = json_object_get(r.json, "commits");
    snprintf(head, 64, "%s", jstr(json_array_get(cs, 0), "graph_commit_id"));
    snprintf(genesis, 64, "%s", jstr(json_array_get(cs, json_array_size(cs) - 1), "graph_commit_id"));
    http_free(&r);
}

static void test_diff(void **state)
{
    char seeded[64], genesis[64], head[64], path[320];
    commits(seeded, genesis);
    http_resp r = post_json(&S, "tok-a", "/graphs/g1/mutate",
                            "{\"query\":\"query b($n: String) { update Person set { age: 37 } where name = $n }\","
                            "\"params\":{\"n\":\"Ada\"}}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    commits(head, genesis);
    assert_string_not_equal(head, seeded);

    /* genesis -> head: the net rows, Ada inserted at her latest age */
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s", genesis, head);
    r = get(&S, "tok-a", path);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "from"), genesis);
    assert_string_equal(jstr(r.json, "to"), head);
    json_t *st = json_object_get(r.json, "stats");
    assert_int_equal(num(st, "inserted"), 3);
    assert_int_equal(num(st, "updated"), 0);
    json_t *ch = json_object_get(r.json, "changes");
    assert_int_equal(json_array_size(ch), 3);
    json_t *ada = json_array_get(ch, 0);
    assert_string_equal(jstr(ada, "op"), "insert");
    assert_string_equal(jstr(ada, "type"), "Person");
    assert_string_equal(jstr(ada, "id"), "Ada");
    assert_int_equal(num(json_object_get(ada, "after"), "age"), 37);
    assert_string_equal(jstr(json_array_get(ch, 2), "kind"), "edge");
    assert_true(json_is_null(json_object_get(r.json, "next_page_token")));
    http_free(&r);

    /* seeded -> head: one update, before and after */
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s", seeded, head);
    r = get(&S, "tok-a", path);
    assert_int_equal(r.status, 200);
    ch = json_object_get(r.json, "changes");
    assert_int_equal(json_array_size(ch), 1);
    assert_string_equal(jstr(json_array_get(ch, 0), "op"), "update");
    assert_int_equal(num(json_object_get(json_array_get(ch, 0), "before"), "age"), 36);
    assert_int_equal(num(json_object_get(json_array_get(ch, 0), "after"), "age"), 37);
    http_free(&r);

    /* paging and filters */
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s&limit=2", genesis, head);
    r = get(&S, "tok-a", path);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 2);
    assert_string_equal(jstr(r.json, "next_page_token"), "v1d2");
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s&limit=2&page_token=v1d2", genesis, head);
    r = get(&S, "tok-a", path);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "changes"), 0), "kind"), "edge");
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s&type=Knows", genesis, head);
    r = get(&S, "tok-a", path);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 1);
    http_free(&r);

    /* refusals */
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s", genesis, head);
    r = get(&S, "tok-m", path);
    assert_int_equal(r.status, 403);
    http_free(&r);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 401);
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s", genesis);
    r = get(&S, "tok-a", path);
    assert_int_equal(r.status, 400);
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=7zzzzzzzzzzzzzzzzzzzzzzzzz", genesis);
    r = get(&S, "tok-a", path);
    assert_int_equal(r.status, 404);
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/diff?from=%s&to=%s&page_token=v1o2", genesis, head);
    r = get(&S, "tok-a", path);
    assert_int_equal(r.status, 400);
    http_free(&r);
}

/* Ada's age changed on both sides of a merge: one conflict, its property with the three values */
static void test_merge_conflict_properties(void **state)
{
    http_resp r = post_json(&S, "tok-a", "/graphs/g1/branches", "{\"name\":\"side\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    const char *upd = "{\"query\":\"query b($a: I32) { update Person set { age: $a } where name = \\\"Ada\\\" }\","
                      "\"params\":{\"a\":%d},\"branch\":\"%s\"}";
    char body[256];
    snprintf(body, sizeof body, upd, 50, "side");
    r = post_json(&S, "tok-a", "/graphs/g1/mutate", body);
    assert_int_equal(r.status, 200);
    http_free(&r);
    snprintf(body, sizeof body, upd, 60, "main");
    r = post_json(&S, "tok-a", "/graphs/g1/mutate", body);
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&S, "tok-a", "/graphs/g1/branches/merge", "{\"source\":\"side\",\"target\":\"main\"}");
    assert_int_equal(r.status, 409);
    json_t *cs = json_object_get(r.json, "merge_conflicts");
    assert_int_equal(json_array_size(cs), 1);
    json_t *c = json_array_get(cs, 0);
    assert_string_equal(jstr(c, "kind"), "divergent_update");
    assert_string_equal(jstr(c, "type_name"), "Person");
    assert_string_equal(jstr(c, "entity_id"), "Ada");
    json_t *ps = json_object_get(c, "properties");
    assert_int_equal(json_array_size(ps), 1);
    json_t *p = json_array_get(ps, 0);
    assert_string_equal(jstr(p, "property"), "age");
    assert_int_equal(num(p, "base"), 37); /* test_diff's update */
    assert_int_equal(num(p, "source"), 50);
    assert_int_equal(num(p, "target"), 60);
    http_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lint_clean),
        cmocka_unit_test(test_lint_type_error),
        cmocka_unit_test(test_lint_parse_error_and_several),
        cmocka_unit_test(test_lint_refusals),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_merge_conflict_properties),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
