/*
 * test_mcp_results.c — what an agent gets back (docs/mcp.md "Results"): row results one
 * bounded page at a time (max_rows, max_bytes, offset, total_rows, next_offset, a note), compact
 * JSON with shortest reals, errors as data ({"error":{"code","message"}}), output schemas and
 * honest annotations, writes only on an explicit branch, branch_diff against the merge base
 * (right after the target moved on), branch_merge's strategy and if_commit; prompts, resource
 * templates and branch-name completion; graph_explain and the change feed.
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
static og_mcp *mcp;
static char *last_raw; /* the last response's text as sent */

static const char *SCHEMA = "node Person {\n    name: String @key\n    score: F64?\n}\n";

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-mcpr-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char root[128], nd[128];
    snprintf(root, sizeof root, "%s/g", dir);
    snprintf(nd, sizeof nd, "%s/people.jsonl", dir);
    if (og_db_init(&db, root, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    FILE *f = fopen(nd, "w");
    if (!f) return -1;
    for (int i = 0; i < 250; i++) /* p000 .. p249; p007's score is 0.7358 */
        fprintf(f, "{\"type\":\"Person\",\"data\":{\"name\":\"p%03d\",\"score\":%s}}\n", i, i == 7 ? "0.7358" : "1.5");
    fclose(f);
    og_receipt r;
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    if (og_db_load(&r, db, nd, &lo) != OG_OK) return -1;
    og_mcp_opts o = {.db = db, .graph_id = "people"};
    return og_mcp_new(&mcp, &o) == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_mcp_free(mcp);
    og_db_close(db);
    free(last_raw);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static json_t *send_to(og_mcp *m, const char *msg)
{
    char *out = NULL;
    assert_int_equal(og_mcp_handle(m, "agent", msg, strlen(msg), &out), OG_OK);
    assert_non_null(out);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    free(last_raw);
    last_raw = out;
    return j;
}

static json_t *call_on(og_mcp *m, const char *tool, const char *args_json)
{
    char msg[4096];
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             tool, args_json);
    return send_to(m, msg);
}
static json_t *call(const char *tool, const char *args_json) { return call_on(mcp, tool, args_json); }

static json_t *result(json_t *r) { return json_object_get(r, "result"); }
static json_t *sc(json_t *r) { return json_object_get(result(r), "structuredContent"); }
static int is_error(json_t *r) { return json_is_true(json_object_get(result(r), "isError")); }
static const char *text_at(json_t *r, size_t i)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(result(r), "content"), i), "text"));
}
static long long num(json_t *o, const char *k) { return (long long)json_integer_value(json_object_get(o, k)); }
static const char *err_code(json_t *r) { return json_string_value(json_object_get(json_object_get(sc(r), "error"), "code")); }

static const char *ALL = "{\"query\":\"query q() { match { $p: Person } return { $p.name, $p.score } order { $p.name } }\"";

static void test_default_page_is_bounded_with_a_way_on(void **state)
{
    (void)state;
    char args[512];
    snprintf(args, sizeof args, "%s}", ALL);
    json_t *r = call("graph_query", args);
    assert_false(is_error(r));
    json_t *s = sc(r);
    assert_int_equal(json_array_size(json_object_get(s, "rows")), 100); /* the default page */
    assert_int_equal(num(s, "row_count"), 100);
    assert_int_equal(num(s, "total_rows"), 250);
    assert_int_equal(num(s, "offset"), 0);
    assert_true(json_is_true(json_object_get(s, "truncated")));
    assert_int_equal(num(s, "next_offset"), 100);
    assert_non_null(strstr(text_at(r, 1), "offset=100"));
    json_decref(r);
    /* the last page: no next_offset, no note */
    snprintf(args, sizeof args, "%s,\"offset\":200}", ALL);
    r = call("graph_query", args);
    s = sc(r);
    assert_int_equal(json_array_size(json_object_get(s, "rows")), 50);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(s, "rows"), 0), "p.name")), "p200");
    assert_false(json_is_true(json_object_get(s, "truncated")));
    assert_null(json_object_get(s, "next_offset"));
    assert_null(text_at(r, 1));
    json_decref(r);
    /* a page size of the caller's */
    snprintf(args, sizeof args, "%s,\"max_rows\":7,\"offset\":3}", ALL);
    r = call("graph_query", args);
    s = sc(r);
    assert_int_equal(json_array_size(json_object_get(s, "rows")), 7);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(s, "rows"), 0), "p.name")), "p003");
    assert_int_equal(num(s, "next_offset"), 10);
    json_decref(r);
}

static void test_byte_cap_holds_for_the_text_sent(void **state)
{
    (void)state;
    char args[512];
    snprintf(args, sizeof args, "%s,\"max_rows\":1000,\"max_bytes\":1024}", ALL);
    json_t *r = call("graph_query", args);
    json_t *s = sc(r);
    size_t kept = json_array_size(json_object_get(s, "rows"));
    assert_true(kept > 5 && kept < 40);
    assert_true(strlen(text_at(r, 0)) <= 1024);
    assert_int_equal(num(s, "next_offset"), (long long)kept);
    json_decref(r);
}

static void test_output_is_compact_with_shortest_reals(void **state)
{
    (void)state;
    json_t *r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"p007\\\" } return { $p.score } }\"}");
    assert_false(is_error(r));
    assert_null(strchr(text_at(r, 0), '\n'));
    assert_non_null(strstr(text_at(r, 0), "{\"p.score\":0.7358}"));
    assert_non_null(strstr(last_raw, "0.7358"));
    assert_null(strstr(last_raw, "0.73580000000000001"));
    json_decref(r);
}

static void test_errors_are_data(void **state)
{
    (void)state;
    json_t *r = call("graph_query", "{\"query\":\"query q() { match { $p: Persn } return { $p.name } }\"}");
    assert_true(is_error(r));
    assert_non_null(err_code(r));
    assert_true(!strcmp(err_code(r), "type") || !strcmp(err_code(r), "parse"));
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(sc(r), "error"), "message")), "Persn"));
    json_decref(r);
    /* a compiler error says where (line, column), which rule, and the names it meant */
    r = call("graph_query", "{\"query\":\"query q() {\\n  match { $p: Person }\\n  return { $p.nam }\\n}\"}");
    assert_true(is_error(r));
    json_t *e = json_object_get(sc(r), "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "type");
    assert_int_equal(num(e, "line"), 3);
    assert_int_equal(num(e, "column"), 12);
    assert_string_equal(json_string_value(json_object_get(e, "diagnostic")), "T6");
    assert_int_equal(json_array_size(json_object_get(e, "candidates")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(e, "candidates"), 0)), "name");
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\",\"max_rows\":0}");
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "invalid");
    assert_null(json_object_get(json_object_get(sc(r), "error"), "line")); /* not a compiler error: no position */
    json_decref(r);
}

static void test_writes_need_an_explicit_branch(void **state)
{
    (void)state;
    json_t *r = call("graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"zed\\\" } }\"}");
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "invalid");
    assert_non_null(strstr(text_at(r, 0), "branch_create"));
    json_decref(r);
    r = call("graph_load", "{\"data\":\"{\\\"type\\\":\\\"Person\\\",\\\"data\\\":{\\\"name\\\":\\\"zed\\\"}}\"}");
    assert_true(is_error(r));
    json_decref(r);
    /* nothing reached main */
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"zed\\\" } return { $p.name } }\"}");
    assert_int_equal(num(sc(r), "total_rows"), 0);
    json_decref(r);
}

/* Safe writes (issue 38): a receipt tells inserted from updated (an upsert) from deleted, and
 * `insert strict` refuses an existing key with a typed error, publishing nothing. */
static void test_receipts_split_counts_and_strict_insert_refuses(void **state)
{
    (void)state;
    json_decref(call("branch_create", "{\"name\":\"safe\"}"));
    /* p001 exists: a plain insert upserts it (updated), zz1 is new (inserted) */
    json_t *r = call("graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"p001\\\", score: 9.0 } "
                                     "insert Person { name: \\\"zz1\\\" } }\",\"branch\":\"safe\"}");
    assert_false(is_error(r));
    assert_int_equal(num(sc(r), "affected_nodes"), 2);
    assert_int_equal(num(sc(r), "inserted"), 1);
    assert_int_equal(num(sc(r), "updated"), 1);
    assert_int_equal(num(sc(r), "deleted"), 0);
    json_decref(r);
    r = call("graph_mutate", "{\"query\":\"query m() { delete Person where name in [\\\"zz1\\\", \\\"p002\\\"] }\","
                             "\"branch\":\"safe\"}");
    assert_false(is_error(r));
    assert_int_equal(num(sc(r), "deleted"), 2);
    assert_int_equal(num(sc(r), "inserted") + num(sc(r), "updated"), 0);
    json_decref(r);
    /* strict: an existing key is refused, typed, and the branch does not move */
    r = call("commit_list", "{\"branch\":\"safe\",\"limit\":1}");
    char head[64];
    snprintf(head, sizeof head, "\"id\":\"%.26s\"", strstr(text_at(r, 0), "\"id\":\"") + 6);
    json_decref(r);
    r = call("graph_mutate", "{\"query\":\"query m() { insert strict Person { name: \\\"p003\\\", score: 0.0 } }\","
                             "\"branch\":\"safe\"}");
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "already_exists");
    assert_non_null(strstr(text_at(r, 0), "key_conflict: Person 'p003' already exists"));
    json_decref(r);
    r = call("commit_list", "{\"branch\":\"safe\",\"limit\":1}");
    assert_non_null(strstr(text_at(r, 0), head));
    json_decref(r);
    r = call("graph_mutate", "{\"query\":\"query m() { insert strict Person { name: \\\"zz2\\\" } }\",\"branch\":\"safe\"}");
    assert_false(is_error(r));
    assert_int_equal(num(sc(r), "inserted"), 1);
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"p003\\\" } return { $p.score } }\","
                            "\"branch\":\"safe\"}");
    assert_non_null(strstr(text_at(r, 0), "\"p.score\":1.5")); /* untouched */
    json_decref(r);
}

/* Merge proposals over MCP (issue 38): propose a branch, list, show its diff and what the merge
 * would do (dry run: main does not move), approve = merge, closed ones stay closed. */
static void test_proposals_propose_review_approve(void **state)
{
    (void)state;
    json_decref(call("branch_create", "{\"name\":\"prop1\"}"));
    json_decref(call("graph_mutate", "{\"query\":\"query m() { update Person set { score: 7.25 } where name = \\\"p200\\\" }\","
                                     "\"branch\":\"prop1\"}"));
    json_t *r = call("proposal_create", "{\"source\":\"prop1\",\"title\":\"rescore p200\",\"description\":\"one person\"}");
    assert_false(is_error(r));
    char id[64];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(sc(r), "id")));
    assert_string_equal(json_string_value(json_object_get(sc(r), "state")), "open");
    json_decref(r);
    r = call("proposal_list", "{\"state\":\"open\"}");
    assert_non_null(strstr(text_at(r, 0), id));
    json_decref(r);
    char args[256];
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", id);
    r = call("branch_merge", "{\"source\":\"prop1\",\"dry_run\":true}"); /* what approving would do */
    assert_false(is_error(r));
    assert_true(json_is_true(json_object_get(sc(r), "dry_run")));
    assert_true(json_is_null(json_object_get(sc(r), "commit")));
    json_decref(r);
    r = call("proposal_show", args);
    assert_false(is_error(r));
    assert_int_equal(num(sc(r), "total_rows"), 1); /* one row change, paged */
    assert_non_null(strstr(text_at(r, 0), "\"p200\""));
    assert_int_equal(json_array_size(json_object_get(sc(r), "conflicts")), 0);
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"p200\\\" } return { $p.score } }\"}");
    assert_non_null(strstr(text_at(r, 0), "\"p.score\":1.5")); /* reviewing merged nothing */
    json_decref(r);
    r = call("proposal_approve", args);
    assert_false(is_error(r));
    assert_string_equal(json_string_value(json_object_get(json_object_get(sc(r), "proposal"), "state")), "merged");
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"p200\\\" } return { $p.score } }\"}");
    assert_non_null(strstr(text_at(r, 0), "\"p.score\":7.25"));
    json_decref(r);
    r = call("proposal_close", args);
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "precondition_failed");
    json_decref(r);
    r = call("proposal_show", "{\"id\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\"}");
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "not_found");
    json_decref(r);
}

static void test_tools_declare_outputs_and_honest_hints(void **state)
{
    (void)state;
    json_t *r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    size_t i;
    json_t *t;
    int seen = 0;
    json_array_foreach(json_object_get(result(r), "tools"), i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        json_t *ann = json_object_get(t, "annotations");
        if (!strcmp(n, "graph_query") || !strcmp(n, "branch_diff")) {
            seen++;
            assert_true(json_is_true(json_object_get(ann, "readOnlyHint")));
            assert_string_equal(json_string_value(json_object_get(json_object_get(t, "outputSchema"), "type")), "object");
        }
        if (!strcmp(n, "graph_mutate")) {
            seen++;
            assert_true(json_is_true(json_object_get(ann, "destructiveHint")));
            json_t *req = json_object_get(json_object_get(t, "inputSchema"), "required");
            int has_branch = 0;
            size_t k;
            json_t *v;
            json_array_foreach(req, k, v) has_branch |= !strcmp(json_string_value(v), "branch");
            assert_true(has_branch);
        }
    }
    assert_int_equal(seen, 3);
    json_decref(r);
}

static void test_meta_mode_splits_reads_from_mutations(void **state)
{
    (void)state;
    og_buf b = OG_BUF_INIT;
    for (int i = 0; i < 24; i++) og_buf_printf(&b, "query q%02d() {\n    match { $p: Person }\n    return { $p.name }\n}\n", i);
    og_buf_printf(&b, "query add($n: String) {\n    insert Person { name: $n }\n}\n");
    og_stored_set *many = NULL;
    assert_int_equal(og_stored_set_new(&many), OG_OK);
    assert_int_equal(og_stored_set_add(many, "many.gq", (const char *)b.data, b.len, NULL, SCHEMA, strlen(SCHEMA)), OG_OK);
    og_buf_free(&b);
    og_mcp *m = NULL;
    og_mcp_opts o = {.db = db, .queries = many, .max_rows = 20};
    assert_int_equal(og_mcp_new(&m, &o), OG_OK);
    json_t *r = send_to(m, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    size_t i;
    json_t *t;
    int reads = 0, muts = 0;
    json_array_foreach(json_object_get(result(r), "tools"), i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        json_t *ann = json_object_get(t, "annotations");
        if (!strcmp(n, "stored_query_run")) reads = json_is_true(json_object_get(ann, "readOnlyHint"));
        if (!strcmp(n, "stored_mutation_run")) muts = json_is_true(json_object_get(ann, "destructiveHint"));
    }
    assert_true(reads && muts);
    json_decref(r);
    /* the handler's own default page (max_rows 20) */
    r = call_on(m, "stored_query_run", "{\"name\":\"q03\"}");
    assert_int_equal(json_array_size(json_object_get(sc(r), "rows")), 20);
    assert_int_equal(num(sc(r), "total_rows"), 250);
    json_decref(r);
    r = call_on(m, "stored_query_run", "{\"name\":\"add\",\"params\":{\"n\":\"x\"},\"branch\":\"main\"}");
    assert_true(is_error(r));
    assert_non_null(strstr(text_at(r, 0), "stored_mutation_run"));
    json_decref(r);
    r = call_on(m, "stored_mutation_run", "{\"name\":\"add\",\"params\":{\"n\":\"x\"}}");
    assert_true(is_error(r)); /* no branch */
    json_decref(r);
    og_mcp_free(m);
    og_stored_set_free(many);
}

static void test_branch_diff_is_against_the_merge_base(void **state)
{
    (void)state;
    json_t *r = call("branch_create", "{\"name\":\"agent-1\"}");
    assert_false(is_error(r));
    char forked[32];
    snprintf(forked, sizeof forked, "%s", json_string_value(json_object_get(sc(r), "head")));
    json_decref(r);
    r = call("graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"new-on-branch\\\" } }\",\"branch\":\"agent-1\"}");
    assert_false(is_error(r));
    json_decref(r);
    /* main moves on after the fork: two reads compared would now differ by both rows */
    r = call("graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"new-on-main\\\" } }\",\"branch\":\"main\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("branch_diff", "{\"branch\":\"agent-1\"}");
    assert_false(is_error(r));
    json_t *s = sc(r);
    assert_string_equal(json_string_value(json_object_get(s, "merge_base")), forked);
    assert_int_equal(num(s, "total_rows"), 1);
    json_t *c = json_array_get(json_object_get(s, "changes"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "op")), "insert");
    assert_string_equal(json_string_value(json_object_get(c, "id")), "new-on-branch");
    json_decref(r);
    /* from/to form, and the arguments are checked */
    char args[256];
    snprintf(args, sizeof args, "{\"from\":\"%s\",\"to\":\"main\",\"max_rows\":1}", forked);
    r = call("branch_diff", args);
    assert_false(is_error(r));
    assert_int_equal(num(sc(r), "total_rows"), 1);
    json_decref(r);
    r = call("branch_diff", "{\"branch\":\"agent-1\",\"from\":\"main\"}");
    assert_true(is_error(r));
    json_decref(r);
}

static void test_merge_strategy_and_if_commit(void **state)
{
    (void)state;
    json_t *r = call("branch_create", "{\"name\":\"s1\"}");
    json_decref(r);
    r = call("graph_mutate", "{\"query\":\"query m() { update Person set { score: 2.0 } where name = \\\"p001\\\" }\",\"branch\":\"s1\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("graph_mutate", "{\"query\":\"query m() { update Person set { score: 3.0 } where name = \\\"p001\\\" }\",\"branch\":\"main\"}");
    assert_false(is_error(r));
    json_decref(r);
    /* a stale if_commit is refused before anything is merged */
    r = call("branch_merge", "{\"source\":\"s1\",\"strategy\":\"theirs\",\"if_commit\":\"main~1\"}");
    assert_true(is_error(r));
    json_decref(r);
    r = call("branch_merge", "{\"source\":\"s1\"}");
    assert_true(is_error(r)); /* the row conflict fails by default */
    json_decref(r);
    r = call("branch_merge", "{\"source\":\"s1\",\"strategy\":\"sideways\"}");
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "invalid");
    json_decref(r);
    r = call("branch_merge", "{\"source\":\"s1\",\"strategy\":\"theirs\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"p001\\\" } return { $p.score } }\"}");
    assert_non_null(strstr(text_at(r, 0), "\"p.score\":2.0"));
    json_decref(r);
}

static void test_discovery_prompts_templates_completion(void **state)
{
    (void)state;
    json_t *r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                             "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}");
    assert_non_null(json_object_get(json_object_get(result(r), "capabilities"), "completions"));
    assert_non_null(strstr(json_string_value(json_object_get(result(r), "instructions")), "branch of your own"));
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\"}");
    assert_int_equal(json_array_size(json_object_get(result(r), "prompts")), 3);
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":\"review_branch\","
                     "\"arguments\":{\"branch\":\"agent-1\"}}}");
    const char *txt = json_string_value(json_object_get(
        json_object_get(json_array_get(json_object_get(result(r), "messages"), 0), "content"), "text"));
    assert_non_null(strstr(txt, "branch_diff with branch=agent-1"));
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":\"propose_change\"}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/templates/list\"}");
    assert_int_equal(json_array_size(json_object_get(result(r), "resourceTemplates")), 3);
    json_decref(r);
    /* the branch of test_branch_diff_is_against_the_merge_base, read through its template */
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://branches/agent-1/diff\"}}");
    txt = json_string_value(json_object_get(json_array_get(json_object_get(result(r), "contents"), 0), "text"));
    assert_non_null(txt);
    assert_non_null(strstr(txt, "new-on-branch"));
    assert_null(strstr(txt, "new-on-main"));
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://commits/main\"}}");
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://branches/nope/diff\"}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32002);
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
                     "\"name\":\"review_branch\"},\"argument\":{\"name\":\"branch\",\"value\":\"age\"}}}");
    json_t *vals = json_object_get(json_object_get(result(r), "completion"), "values");
    assert_int_equal(json_array_size(vals), 1);
    assert_string_equal(json_string_value(json_array_get(vals, 0)), "agent-1");
    json_decref(r);
}

/* One completion/complete of the node template's `arg` with `value` (and context type `type`). */
static json_t *complete_node(const char *arg, const char *value, const char *type)
{
    char msg[512];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/resource\","
             "\"uri\":\"omnigraph://nodes/{type}/{key}\"},\"argument\":{\"name\":\"%s\",\"value\":\"%s\"}%s%s%s}}",
             arg, value, type ? ",\"context\":{\"arguments\":{\"type\":\"" : "", type ? type : "", type ? "\"}}" : "");
    json_t *r = send_to(mcp, msg);
    json_t *c = json_incref(json_object_get(result(r), "completion"));
    json_decref(r);
    assert_non_null(c);
    return c;
}

/* Issue 38: completion offers key values of a type (prefix-filtered, at most 100, hasMore past
 * that) and node types; the node template reads one node by its key. */
static void test_key_completion_and_node_template(void **state)
{
    (void)state;
    json_t *c = complete_node("key", "p00", "Person");
    json_t *vals = json_object_get(c, "values");
    assert_int_equal(json_array_size(vals), 10); /* p000 .. p009, in key order */
    assert_string_equal(json_string_value(json_array_get(vals, 0)), "p000");
    assert_string_equal(json_string_value(json_array_get(vals, 9)), "p009");
    assert_int_equal(num(c, "total"), 10);
    assert_false(json_is_true(json_object_get(c, "hasMore")));
    json_decref(c);
    c = complete_node("key", "p", "Person"); /* 250 keys: a bounded page */
    assert_int_equal(json_array_size(json_object_get(c, "values")), 100);
    assert_true(json_is_true(json_object_get(c, "hasMore")));
    json_decref(c);
    c = complete_node("key", "zz", "Person");
    assert_int_equal(json_array_size(json_object_get(c, "values")), 0);
    json_decref(c);
    c = complete_node("key", "p", "Nope"); /* an unknown type offers nothing */
    assert_int_equal(json_array_size(json_object_get(c, "values")), 0);
    json_decref(c);
    c = complete_node("type", "Pe", NULL);
    assert_int_equal(json_array_size(json_object_get(c, "values")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(c, "values"), 0)), "Person");
    json_decref(c);
    /* the template a completed key is for */
    json_t *r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://nodes/Person/p007\"}}");
    const char *txt = json_string_value(json_object_get(json_array_get(json_object_get(result(r), "contents"), 0), "text"));
    assert_non_null(txt);
    json_t *node = json_loads(txt, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(node, "name")), "p007");
    assert_true(json_real_value(json_object_get(node, "score")) == 0.7358);
    json_decref(node);
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://nodes/Person/nobody\"}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32002);
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://nodes/Nope/p007\"}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32002);
    json_decref(r);
}

/* Notifications collected from an og_mcp with subscriptions. */
static json_t *seen_notes;
static void collect(void *ctx, const char *json)
{
    (void)ctx;
    json_array_append_new(seen_notes, json_loads(json, 0, NULL));
}

/* Issue 38: resources/subscribe where the surface delivers updates (opts.subscriptions, as
 * stdio): a moved branch head is one notifications/resources/updated for the resources that
 * depend on it, once; unsubscribed, nothing.  Without the option the capability is not offered
 * and the methods are unknown. */
static void test_subscriptions_report_a_moved_head(void **state)
{
    (void)state;
    json_t *r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
    assert_false(json_is_true(json_object_get(json_object_get(json_object_get(result(r), "capabilities"), "resources"), "subscribe")));
    json_decref(r);
    r = send_to(mcp, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"omnigraph://commits/main\"}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32601);
    json_decref(r);

    seen_notes = json_array();
    og_mcp *w = NULL;
    og_mcp_opts o = {.db = db, .graph_id = "people", .notify = collect, .subscriptions = 1};
    assert_int_equal(og_mcp_new(&w, &o), OG_OK);
    r = send_to(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
    assert_true(json_is_true(json_object_get(json_object_get(json_object_get(result(r), "capabilities"), "resources"), "subscribe")));
    json_decref(r);
    json_decref(call_on(w, "branch_create", "{\"name\":\"watched\"}"));
    r = send_to(w, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"omnigraph://branches/watched/diff\"}}");
    assert_non_null(result(r));
    json_decref(r);
    r = send_to(w, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"omnigraph://commits/main\"}}");
    assert_non_null(result(r));
    json_decref(r);
    r = send_to(w, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"omnigraph://branches/nope/diff\"}}");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32002);
    json_decref(r);
    assert_int_equal(og_mcp_subscriptions_check(w), 0); /* nothing moved */
    /* the watched branch moves: its diff is updated, main's head is not */
    json_decref(call_on(w, "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"w1\\\" } }\",\"branch\":\"watched\"}"));
    assert_int_equal(og_mcp_subscriptions_check(w), 1);
    json_t *n = json_array_get(seen_notes, json_array_size(seen_notes) - 1);
    assert_string_equal(json_string_value(json_object_get(n, "method")), "notifications/resources/updated");
    assert_string_equal(json_string_value(json_object_get(json_object_get(n, "params"), "uri")), "omnigraph://branches/watched/diff");
    assert_int_equal(og_mcp_subscriptions_check(w), 0); /* reported once */
    /* main moves (written by another handle of the graph): both depend on it */
    json_decref(call("graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"m1\\\" } }\",\"branch\":\"main\"}"));
    assert_int_equal(og_mcp_subscriptions_check(w), 2);
    r = send_to(w, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/unsubscribe\",\"params\":{\"uri\":\"omnigraph://commits/main\"}}");
    assert_non_null(result(r));
    json_decref(r);
    json_decref(call("graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"m2\\\" } }\",\"branch\":\"main\"}"));
    assert_int_equal(og_mcp_subscriptions_check(w), 1); /* the diff only */
    og_mcp_free(w);
    json_decref(seen_notes);
}

/* Issue 38: with the default agent-branch rule a write naming no branch goes to the caller's
 * branch (created from main on first use), the schema no longer requires `branch`, and main is
 * untouched; without the rule (test_writes_need_an_explicit_branch) such a write is refused. */
static void test_agent_branch_rule(void **state)
{
    (void)state;
    og_mcp *w = NULL;
    og_mcp_opts o = {.db = db, .graph_id = "people", .agent_branch = "agents/{actor}"};
    assert_int_equal(og_mcp_new(&w, &o), OG_OK);
    json_t *r = send_to(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    json_t *tools = json_object_get(result(r), "tools");
    for (size_t i = 0; i < json_array_size(tools); i++) {
        json_t *t = json_array_get(tools, i);
        if (strcmp(json_string_value(json_object_get(t, "name")), "graph_mutate")) continue;
        json_t *req = json_object_get(json_object_get(t, "inputSchema"), "required");
        for (size_t k = 0; k < json_array_size(req); k++) assert_string_not_equal(json_string_value(json_array_get(req, k)), "branch");
        assert_non_null(strstr(last_raw, "agents/agent"));
    }
    json_decref(r);
    r = call_on(w, "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"by-rule\\\" } }\"}");
    assert_false(is_error(r));
    assert_string_equal(json_string_value(json_object_get(sc(r), "branch")), "agents/agent"); /* send_to's actor */
    json_decref(r);
    r = call_on(w, "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"by-rule-2\\\" } }\"}");
    assert_false(is_error(r)); /* the branch exists now: written again */
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name starts_with \\\"by-rule\\\" } return { $p.name } }\","
                            "\"branch\":\"agents/agent\"}");
    assert_int_equal(num(sc(r), "total_rows"), 2);
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name starts_with \\\"by-rule\\\" } return { $p.name } }\"}");
    assert_int_equal(num(sc(r), "total_rows"), 0); /* main untouched */
    json_decref(r);
    /* an explicit branch still wins */
    r = call_on(w, "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"x\\\" } }\",\"branch\":\"nope\"}");
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "not_found");
    json_decref(r);
    og_mcp_free(w);
}

/* Issue 38 (learnability): graph_validate checks GQ text — mutations too — without running it:
 * each finding with its position and a did-you-mean; nothing is written. */
static void test_validate_checks_without_running(void **state)
{
    (void)state;
    json_t *r = call("graph_validate", "{\"query\":\"query add($n: String) {\\n  insert Person { nam: $n }\\n}\"}");
    assert_false(is_error(r)); /* the check ran; its verdict is data */
    json_t *s = sc(r);
    assert_false(json_is_true(json_object_get(s, "ok")));
    json_t *d = json_array_get(json_object_get(s, "diagnostics"), 0);
    assert_int_equal(num(d, "line"), 2);
    assert_non_null(strstr(json_string_value(json_object_get(d, "message")), "name"));
    json_decref(r);
    r = call("graph_validate", "{\"query\":\"query add($n: String) { insert Person { name: $n } }\"}");
    assert_true(json_is_true(json_object_get(sc(r), "ok")));
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(sc(r), "queries"), 0), "kind")), "mutation");
    json_decref(r);
    r = call("graph_query", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"\\\" } return { $p.name } }\"}");
    assert_int_equal(num(sc(r), "total_rows"), 0); /* nothing was inserted */
    json_decref(r);
}

static void test_explain_and_change_feed(void **state)
{
    (void)state;
    json_t *r = call("graph_explain", "{\"query\":\"query q() { match { $p: Person  $p.name = \\\"p001\\\" } return { $p.score } }\"}");
    assert_false(is_error(r));
    assert_true(json_is_true(json_object_get(sc(r), "ok")));
    assert_non_null(strstr(json_string_value(json_object_get(sc(r), "plan")), "key_lookup"));
    json_decref(r);
    r = call("graph_explain", "{\"query\":\"query q() { match { $p: Person } return { $p.nope } }\"}");
    assert_true(is_error(r));
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(sc(r), "error"), "message")), "nope"));
    json_decref(r);
    r = call("change_feed", "{\"start\":\"now\"}");
    assert_false(is_error(r));
    char cursor[512];
    snprintf(cursor, sizeof cursor, "%s", json_string_value(json_object_get(sc(r), "cursor")));
    json_decref(r);
    r = call("graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"fed\\\" } }\",\"branch\":\"main\"}");
    assert_false(is_error(r));
    json_decref(r);
    char args[700];
    snprintf(args, sizeof args, "{\"cursor\":\"%s\"}", cursor);
    r = call("change_feed", args);
    assert_false(is_error(r));
    json_t *blocks = json_object_get(sc(r), "blocks");
    assert_int_equal(json_array_size(blocks), 1);
    json_t *ch = json_array_get(json_object_get(json_array_get(blocks, 0), "changes"), 0);
    assert_string_equal(json_string_value(json_object_get(ch, "id")), "fed");
    json_decref(r);
}

/* Every example of omnigraph://language compiles against the graph it was written for: reads
 * through graph_explain, mutations by running them on a branch. */
static void test_language_examples_run_on_their_graph(void **state)
{
    (void)state;
    const char *schema = "node Person {\n    name: String @key\n    age: I32?\n}\nnode Team {\n    slug: String @key\n}\n"
                         "edge WorksIn: Person -> Team {\n    since: I32?\n}\nedge Knows: Person -> Person\n";
    char root[128];
    snprintf(root, sizeof root, "%s/lang", dir);
    og_db *g = NULL;
    assert_int_equal(og_db_init(&g, root, "s.pg", schema, strlen(schema), NULL), OG_OK);
    og_mcp *m = NULL;
    og_mcp_opts o = {.db = g};
    assert_int_equal(og_mcp_new(&m, &o), OG_OK);
    json_t *r = send_to(m, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://language\"}}");
    const char *md = json_string_value(json_object_get(json_array_get(json_object_get(result(r), "contents"), 0), "text"));
    assert_non_null(md);
    assert_non_null(strstr(md, "worksIn"));                     /* the edge as a traversal names it */
    assert_non_null(strstr(md, "$a: Person { name: $key }  $a worksIn $b"));
    json_t *b = call_on(m, "branch_create", "{\"name\":\"lang-check\"}");
    assert_false(is_error(b));
    json_decref(b);
    int reads = 0, writes = 0;
    const char *from = strstr(md, "## Examples for this graph");
    assert_non_null(from);
    for (const char *p = strstr(from, "```gq\n"); p; p = strstr(p, "```gq\n")) {
        p += 6;
        const char *end = strstr(p, "```");
        assert_non_null(end);
        json_t *args = json_pack("{ss% s{ss sf}}", "query", p, (size_t)(end - p), "params", "key", "lang-x", "value", 1.0);
        int mutation = strstr(p, "insert ") && strstr(p, "insert ") < end;
        mutation |= (strstr(p, "update ") && strstr(p, "update ") < end) || (strstr(p, "delete ") && strstr(p, "delete ") < end);
        if (mutation) json_object_set_new(args, "branch", json_string("lang-check"));
        json_t *params = json_object_get(args, "params");
        if (!strstr(p, "$value") || strstr(p, "$value") > end) json_object_del(params, "value");
        if (!strstr(p, "$key") || strstr(p, "$key") > end) json_object_del(params, "key");
        const char *i32 = strstr(p, "$value: I32");
        if (i32 && i32 < end) json_object_set_new(params, "value", json_integer(7));
        char *a = json_dumps(args, JSON_COMPACT);
        json_decref(args);
        json_t *res = call_on(m, mutation ? "graph_mutate" : "graph_explain", a);
        if (is_error(res)) fail_msg("example failed: %s -> %s", a, text_at(res, 0));
        free(a);
        json_decref(res);
        mutation ? writes++ : reads++;
        p = end + 3;
    }
    assert_true(reads >= 4);  /* find, count, two traversals */
    assert_int_equal(writes, 3); /* insert, update, delete */
    json_decref(r);
    og_mcp_free(m);
    og_db_close(g);
}

/* A guest who may read only unprotected branches may fork and merge, but not from main: the
 * fork or merge would copy main into a branch the guest can read (docs/policy.md). */
static og_mcp_verdict guest_authz(void *ctx, const char *actor, const char *action, const char *branch, const char *target,
                                  const char *query, int listing, char *why, size_t cap)
{
    (void)ctx, (void)actor, (void)target, (void)query, (void)listing;
    if (!strcmp(action, "read") && branch && !strcmp(branch, "main")) {
        snprintf(why, cap, "guests read no protected branch");
        return OG_MCP_DENY;
    }
    return OG_MCP_ALLOW;
}

static void test_fork_and_merge_need_read_on_the_source(void **state)
{
    (void)state;
    og_mcp *m = NULL;
    og_mcp_opts o = {.db = db, .authorize = guest_authz};
    assert_int_equal(og_mcp_new(&m, &o), OG_OK);
    json_t *r = call_on(m, "branch_create", "{\"name\":\"g-1\",\"from\":\"agent-1\"}");
    assert_false(is_error(r));
    json_decref(r);
    r = call_on(m, "branch_create", "{\"name\":\"g-2\"}"); /* from main */
    assert_true(is_error(r));
    assert_string_equal(err_code(r), "forbidden");
    json_decref(r);
    r = call_on(m, "branch_merge", "{\"source\":\"main\",\"target\":\"g-1\"}");
    assert_true(is_error(r));
    json_decref(r);
    r = call_on(m, "graph_load", "{\"data\":\"{\\\"type\\\":\\\"Person\\\",\\\"data\\\":{\\\"name\\\":\\\"q\\\"}}\",\"branch\":\"g-3\",\"from\":\"main\"}");
    assert_true(is_error(r));
    json_decref(r);
    og_mcp_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_page_is_bounded_with_a_way_on),
        cmocka_unit_test(test_byte_cap_holds_for_the_text_sent),
        cmocka_unit_test(test_output_is_compact_with_shortest_reals),
        cmocka_unit_test(test_errors_are_data),
        cmocka_unit_test(test_writes_need_an_explicit_branch),
        cmocka_unit_test(test_receipts_split_counts_and_strict_insert_refuses),
        cmocka_unit_test(test_proposals_propose_review_approve),
        cmocka_unit_test(test_tools_declare_outputs_and_honest_hints),
        cmocka_unit_test(test_meta_mode_splits_reads_from_mutations),
        cmocka_unit_test(test_branch_diff_is_against_the_merge_base),
        cmocka_unit_test(test_merge_strategy_and_if_commit),
        cmocka_unit_test(test_discovery_prompts_templates_completion),
        cmocka_unit_test(test_key_completion_and_node_template),
        cmocka_unit_test(test_subscriptions_report_a_moved_head),
        cmocka_unit_test(test_agent_branch_rule),
        cmocka_unit_test(test_validate_checks_without_running),
        cmocka_unit_test(test_explain_and_change_feed),
        cmocka_unit_test(test_language_examples_run_on_their_graph),
        cmocka_unit_test(test_fork_and_merge_need_read_on_the_source),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
