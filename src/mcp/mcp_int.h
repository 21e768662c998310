/*
 * mcp_int.h — the MCP handler's state, shared by the files of src/mcp/ (mcp.c, the handler;
 * mcp_http.c, the HTTP binding, which swaps the notification sink for one request).  Not for
 * surfaces: they use mcp.h.
 */
#ifndef OG_MCP_MCP_INT_H
#define OG_MCP_MCP_INT_H

#include <jansson.h>
#include <stdint.h>

#include "mcp/mcp.h"

struct og_mcp {
    og_mcp_opts o;
    int throttled;          /* the current message's write was refused by o.admit */
    char throttle_msg[320];
    og_mcp_log_level level; /* log notifications at or above it (OFF = none) */
    size_t notified;        /* notifications sent during the current og_mcp_handle */
    /* the tools/call being run (notifications are sent while it runs) */
    json_t *token;          /* its params._meta.progressToken (borrowed), NULL = no progress */
    double progress;        /* the last progress value sent for it */
    const char *tool;       /* its tool name (borrowed) */
    uint64_t t0_us;         /* when it started running */
    int sse;                /* the last og_mcp_http answered with an SSE stream */
    struct og_mcp_subs *subs; /* resource subscriptions (opts.subscriptions), else NULL */
};

/* resources/read (mcp.c): the result, or NULL with the JSON-RPC error code and message. */
json_t *og_mcp_resources_read(og_mcp *m, const char *actor, const char *uri, int *code, char *msg, size_t cap);

/* ---- mcp_subscribe.c: resource subscriptions ---- */
typedef struct og_mcp_subs og_mcp_subs;
og_status og_mcp_subs_new(og_mcp_subs **out);
void og_mcp_subs_free(og_mcp_subs *t);
/* resources/subscribe (on = 1) or unsubscribe: {} or NULL with the JSON-RPC error. */
json_t *og_mcp_subscribe(og_mcp *m, const char *actor, const char *uri, int on, int *code, char *msg, size_t cap);

/* ---- mcp_result.c: result shaping ---- */

/* Page size defaults (og_mcp_opts.max_rows / max_bytes = 0) and the largest a call may ask. */
#define OG_MCP_DEFAULT_MAX_ROWS 100
#define OG_MCP_DEFAULT_MAX_BYTES 32768
#define OG_MCP_MAX_ROWS_LIMIT 10000
#define OG_MCP_MAX_BYTES_LIMIT (4 << 20)

typedef struct og_mcp_page {
    size_t offset, max_rows, max_bytes;
} og_mcp_page;

/* Compact JSON with shortest reals (og_free). */
char *og_mcp_dump(const json_t *j);
/* A tool result from JSON text (an object becomes structuredContent and is re-spelled compactly)
 * or an error text "code: message" (structuredContent {"error":{"code","message"}}). */
json_t *og_mcp_tool_text(const char *text, int is_error);
/* The call's offset / max_rows / max_bytes arguments with the handler's defaults; NULL, or the
 * error text in buf. */
const char *og_mcp_page_args(const og_mcp *m, json_t *args, og_mcp_page *p, char *buf, size_t cap);
/* A tool result of document `doc` (taken) whose array `key` holds one page that starts at
 * p->offset of `total` items (already cut to max_rows by the caller where it could): items past
 * max_rows or max_bytes are dropped, and total_rows, offset, truncated, next_offset are added. */
json_t *og_mcp_page_result(json_t *doc, const char *key, size_t total, const og_mcp_page *p);

/* ---- mcp_discover.c: prompts, resource templates, completion ---- */
json_t *og_mcp_prompts_list(void);
/* The prompt's messages, or NULL with a JSON-RPC error message in err. */
json_t *og_mcp_prompt_get(const char *name, json_t *args, char *err, size_t cap);
json_t *og_mcp_resource_templates(void);
/* completion/complete; may_read: the caller may read main (else nothing is offered). */
json_t *og_mcp_complete(og_db *db, json_t *params, int may_read);
/* omnigraph://nodes/{type}/{key}: the node of main with that (percent-encoded) key, as a
 * one-row JSON row document (og_free).  OG_ERR_NOT_FOUND (type, key), OG_ERR_INVALID. */
og_status og_mcp_node_read(char **out, og_db *db, const char *type, const char *key);

/* ---- mcp_proposals.c: the merge-proposal tools ---- */
/* The source and target branches of proposal `id` (for the policy questions before a call). */
og_status og_mcp_proposal_branches(og_mcp *m, const char *id, char *source, char *target, size_t cap);
/* Runs proposal_create / _list / _show / _approve / _close (authorized already). */
json_t *og_mcp_proposal_run(og_mcp *m, const char *name, json_t *args);

/* ---- mcp_language.c: the omnigraph://language resource (markdown; free()) ---- */
og_status og_mcp_language(char **out, og_db *db);

#endif
