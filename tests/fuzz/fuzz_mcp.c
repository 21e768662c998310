/*
 * fuzz_mcp.c — libFuzzer target for the MCP request handler (src/mcp/mcp.h): arbitrary bytes
 * as one JSON-RPC message, against a small graph with stored queries.  Writes are denied by
 * the authorizer (so each run stays fast and the graph small); reads, the catalog, resources,
 * parameter checking and every envelope path (batches too) run, with a notification sink and
 * the debug log level, so progress tokens (params._meta) and log messages are produced too.
 * Checks: no crash or leak; a response (when there is one) is one JSON object with
 * "jsonrpc":"2.0" and exactly one of result or error, or a non-empty array of them; each
 * notification is a JSON-RPC notification (no id) of notifications/progress (a token of the
 * request's kind, a number) or notifications/message (a level, logger "omnigraph").  The
 * handler is made anew for each input, so logging/setLevel of one input does not carry into
 * the next.  Seeds: tests/fuzz/corpus/fuzz_mcp/.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/stored.h"
#include "mcp/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static og_mcp *mcp;
static og_mcp_opts opts;

/* Every notification: well-formed, of the two kinds the handler sends. */
static void check_note(void *ctx, const char *text)
{
    (void)ctx;
    json_t *j = json_loads(text, 0, NULL);
    const char *v = json_string_value(json_object_get(j, "jsonrpc"));
    const char *m = json_string_value(json_object_get(j, "method"));
    json_t *p = json_object_get(j, "params");
    if (!json_is_object(j) || !v || strcmp(v, "2.0") || json_object_get(j, "id") || !m || !json_is_object(p)) abort();
    if (!strcmp(m, "notifications/progress")) {
        json_t *t = json_object_get(p, "progressToken");
        if (!(json_is_string(t) || json_is_integer(t)) || !json_is_number(json_object_get(p, "progress"))) abort();
    } else if (!strcmp(m, "notifications/message")) {
        const char *lg = json_string_value(json_object_get(p, "logger"));
        if (!json_is_string(json_object_get(p, "level")) || !lg || strcmp(lg, "omnigraph")) abort();
    } else {
        abort();
    }
    json_decref(j);
}

static og_mcp_verdict reads_only(void *ctx, const char *actor, const char *action, const char *branch,
                                 const char *target, const char *query, int listing, char *why, size_t cap)
{
    (void)ctx, (void)actor, (void)branch, (void)target, (void)query, (void)listing;
    if (!strcmp(action, "read") || !strcmp(action, "invoke_query")) return OG_MCP_ALLOW;
    snprintf(why, cap, "writes are off while fuzzing");
    return OG_MCP_DENY;
}

static void init(void)
{
    static const char *schema = "node Person {\n    name: String @key\n    age: I32?\n}\nedge Knows: Person -> Person\n";
    static const char *queries = "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n}\n"
                                 "query add($name: String) {\n    insert Person { name: $name }\n}\n";
    char dir[] = "/tmp/og-fuzz-mcp-XXXXXX";
    if (!mkdtemp(dir)) abort();
    char root[64];
    snprintf(root, sizeof root, "%s/g", dir);
    og_db *db = NULL;
    og_stored_set *set = NULL;
    if (og_db_init(&db, root, "s.pg", schema, strlen(schema), NULL) != OG_OK) abort();
    if (og_stored_set_new(&set) != OG_OK) abort();
    if (og_stored_set_add(set, "q.gq", queries, strlen(queries), NULL, schema, strlen(schema)) != OG_OK) abort();
    og_mcp_opts o = {.db = db, .queries = set, .graph_id = "fuzz", .authorize = reads_only, .notify = check_note,
                     .log_level = OG_MCP_LOG_DEBUG};
    opts = o;
    /* db, set and the directory live as long as the process */
}

/* One JSON-RPC response: an object with "jsonrpc":"2.0" and exactly one of result or error. */
static void check_response(json_t *j)
{
    const char *v = json_string_value(json_object_get(j, "jsonrpc"));
    if (!json_is_object(j) || !v || strcmp(v, "2.0")) abort();
    if (!json_object_get(j, "result") == !json_object_get(j, "error")) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!opts.db) init();
    if (og_mcp_new(&mcp, &opts) != OG_OK) abort();
    char *out = NULL;
    if (og_mcp_handle(mcp, "fuzzer", (const char *)data, size, &out) != OG_OK) abort();
    og_mcp_free(mcp);
    mcp = NULL;
    if (!out) return 0;
    json_t *j = json_loads(out, 0, NULL);
    if (json_is_array(j)) { /* a batch: a non-empty array of such responses */
        if (!json_array_size(j)) abort();
        size_t i;
        json_t *e;
        json_array_foreach(j, i, e) check_response(e);
    } else {
        check_response(j);
    }
    json_decref(j);
    og_free(out);
    return 0;
}
