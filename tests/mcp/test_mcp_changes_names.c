/*
 * test_mcp_changes_names.c — two things an agent reads through MCP that come from the API's
 * text: a change image's U64 above 2^63-1 stays a bare number in branch_diff and change_feed
 * (text and structuredContent; docs/query-language.md "Values in JSON"), and the compiler's
 * did-you-mean for a capitalised edge and a mistyped parameter arrives as the error's
 * `candidates` (docs/errors.md, issue 38 item 4).
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

#include "mcp/mcp.h"

static char dir[64], before[32], after[32];
static og_db *db;
static og_mcp *mcp;

static const char *SCHEMA = "node Meter { name: String @key  reading: U64? }\nnode Site { name: String @key }\n"
                            "edge At: Meter -> Site\n";

static int mutate(const char *q, const char *params)
{
    og_receipt r;
    return og_db_mutate(&r, db, q, strlen(q), NULL, params, NULL, NULL) == OG_OK ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-mcpu-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char root[128];
    snprintf(root, sizeof root, "%s/g", dir);
    if (og_db_init(&db, root, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    if (mutate("query m() { insert Meter { name: \"m\", reading: 1 } }", NULL) ||
        og_db_resolve_commit(db, "main", before, sizeof before) ||
        mutate("query m($r: U64) { update Meter set { reading: $r } where name = \"m\" }", "{\"r\":\"18446744073709551615\"}") ||
        og_db_resolve_commit(db, "main", after, sizeof after))
        return -1;
    og_mcp_opts o = {.db = db, .graph_id = "meters"};
    return og_mcp_new(&mcp, &o) == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_mcp_free(mcp);
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* One tools/call; the response as sent (*raw, freed by the caller) and read with og_json_read. */
static json_t *call(const char *tool, const char *args_json, char **raw)
{
    char msg[4096];
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             tool, args_json);
    char *out = NULL;
    assert_int_equal(og_mcp_handle(mcp, "agent", msg, strlen(msg), &out), OG_OK);
    assert_non_null(out);
    json_t *j = og_json_read(out, strlen(out));
    assert_non_null(j);
    *raw = out;
    return j;
}

static json_t *sc(json_t *r) { return json_object_get(json_object_get(r, "result"), "structuredContent"); }

static void u64_in_change_images_is_bare(void **state)
{
    (void)state;
    char args[256], *raw;
    snprintf(args, sizeof args, "{\"from\":\"%s\",\"to\":\"%s\"}", before, after);
    const char *calls[][2] = {{"branch_diff", args}, {"change_feed", "{\"start\":\"beginning\"}"}};
    for (size_t i = 0; i < 2; i++) {
        json_t *r = call(calls[i][0], calls[i][1], &raw);
        if (!strstr(raw, "\"reading\":18446744073709551615")) fail_msg("%s: no bare U64 in %s", calls[i][0], raw);
        assert_null(strstr(raw, "\\\"18446744073709551615\\\"")); /* nor quoted in the text content */
        assert_non_null(sc(r)); /* the document is structured, not text only */
        char *s = og_json_text(sc(r), JSON_COMPACT);
        assert_non_null(strstr(s, "\"reading\":18446744073709551615"));
        og_free(s);
        json_decref(r);
        og_free(raw);
    }
}

static void did_you_mean_arrives_as_candidates(void **state)
{
    (void)state;
    static const struct {
        const char *query, *code, *candidate;
    } cases[] = {
        {"query q() { match { $m: Meter  $m At $s } return { $s.name } }", "parse", "at"},
        {"query q($name: String) { match { $m: Meter  $m.name = $nme } return { $m.reading } }", "type", "$name"},
    };
    for (size_t i = 0; i < 2; i++) {
        char args[512], *raw;
        snprintf(args, sizeof args, "{\"query\":\"%s\"}", cases[i].query);
        json_t *r = call("graph_query", args, &raw);
        json_t *e = json_object_get(sc(r), "error");
        assert_string_equal(json_string_value(json_object_get(e, "code")), cases[i].code);
        json_t *c = json_object_get(e, "candidates");
        if (json_array_size(c) != 1) fail_msg("candidates in %s", raw);
        assert_string_equal(json_string_value(json_array_get(c, 0)), cases[i].candidate);
        json_decref(r);
        og_free(raw);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(u64_in_change_images_is_bare),
        cmocka_unit_test(did_you_mean_arrives_as_candidates),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
