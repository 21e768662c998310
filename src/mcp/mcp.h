/*
 * mcp.h — the Model Context Protocol surface of one graph (docs/mcp.md): JSON-RPC 2.0 messages
 * in, responses out, with no transport.  `omnigraph mcp` feeds it newline-delimited stdio;
 * omnigraph-server mounts it at POST /graphs/{id}/mcp (stateless Streamable HTTP).
 *
 * Methods: initialize, ping, tools/list, tools/call, resources/list, resources/read,
 * resources/templates/list, prompts/list, prompts/get, completion/complete, logging/setLevel,
 * and resources/subscribe / unsubscribe where the surface delivers updates (notifications get
 * no response).  Tools: the operational set (reads, writes, branches, diffs, proposals,
 * validate/explain, the change feed; docs/mcp.md "Tools") and one tool per exposed stored
 * query (input schema from its parameter types), or — with 24 or more exposed —
 * stored_query_list / stored_query_run / stored_mutation_run.
 * Resources: omnigraph://schema, omnigraph://branches, omnigraph://language and the templates
 * of mcp_discover.c; subscriptions to them where the surface can deliver updates.
 *
 * Notifications: while a tools/call runs the handler reports progress (when the call carries a
 * progressToken) and log messages (at or above the log level) through opts.notify; the
 * surface decides how they travel (stdio lines, an SSE response stream).
 *
 * Authorization is a callback so the policy engine stays the surface's business: every call
 * asks it; tools/list shows a tool when the actor may call it on some branch; a stored query
 * the actor may not invoke is indistinguishable from an unknown tool.
 */
#ifndef OG_MCP_MCP_H
#define OG_MCP_MCP_H

#include <stddef.h>

#include "cluster/stored.h"
#include "omnigraph.h"

typedef struct og_mcp og_mcp;

typedef enum og_mcp_verdict {
    OG_MCP_ALLOW = 0,
    OG_MCP_DENY = 1, /* reported as a tool error naming the denial */
    OG_MCP_MASK = 2  /* reported exactly as an unknown tool / resource */
} og_mcp_verdict;

/* action: the policy action ("read", "change", "branch_create", "branch_delete",
 * "branch_merge", "schema_apply", "invoke_query").  branch / target_branch as the policy
 * request scopes (NULL = absent); `listing` = 1 for tools/list, where NULL branches mean "on
 * some branch".  query: the stored query's name for invoke_query and for the read/change a stored
 * query's call is decided on (per-query grants), else NULL. */
typedef og_mcp_verdict (*og_mcp_authorize_fn)(void *ctx, const char *actor, const char *action, const char *branch,
                                              const char *target_branch, const char *query, int listing,
                                              char *why, size_t why_cap);

/* MCP log levels (logging/setLevel), least severe first; OFF (0) sends no log notifications. */
typedef enum og_mcp_log_level {
    OG_MCP_LOG_OFF = 0,
    OG_MCP_LOG_DEBUG,
    OG_MCP_LOG_INFO,
    OG_MCP_LOG_NOTICE,
    OG_MCP_LOG_WARNING,
    OG_MCP_LOG_ERROR,
    OG_MCP_LOG_CRITICAL,
    OG_MCP_LOG_ALERT,
    OG_MCP_LOG_EMERGENCY
} og_mcp_log_level;

/* A sink for the notifications sent while a message is handled: `json` is one JSON-RPC
 * notification (compact, no newline), valid during the call.  Called on the handling thread,
 * in order, before og_mcp_handle returns the message's response. */
typedef void (*og_mcp_notify_fn)(void *ctx, const char *json);

typedef struct og_mcp_opts {
    og_db *db;                     /* required; borrowed */
    const og_stored_set *queries;  /* may be NULL; borrowed */
    const char *graph_id;          /* for serverInfo / descriptions (may be NULL) */
    int schema_apply_disabled;     /* cluster serving: schema_apply always answers a conflict */
    og_mcp_authorize_fn authorize; /* NULL = allow everything */
    void *authorize_ctx;
    /* Optional: called with 1 before and 0 after each writing tool call (a mutation, load,
     * branch operation, schema apply, stored mutation), so a surface can run one graph's
     * writes one at a time in its process, as its other write paths do. */
    void (*write_lock)(void *ctx, int lock);
    void *write_lock_ctx;
    /* Optional admission control: asked once before a writing tool call runs (after its
     * authorization, before write_lock).  0 = admitted; non-zero = refused with `why` (e.g.
     * the actor's concurrent-write budget is spent): the call does not run and is answered
     * with the JSON-RPC error OG_MCP_TOO_MANY_REQUESTS ("too_many_requests: <why>"), and
     * og_mcp_http answers HTTP 429.  The HTTP server holds the admitted slot until its
     * request ends. */
    int (*admit)(void *ctx, char *why, size_t why_cap);
    void *admit_ctx;
    /* Optional: where notifications go while a tools/call runs (docs/mcp.md "Protocol"):
     * notifications/progress when the call carries params._meta.progressToken, and
     * notifications/message at or above the log level.  NULL = none are produced. */
    og_mcp_notify_fn notify;
    void *notify_ctx;
    /* The log level the handler starts with (OFF = no log notifications); logging/setLevel
     * changes it for this og_mcp (og_mcp_log_level tells the current one). */
    og_mcp_log_level log_level;
    /* Default page of a row result (docs/mcp.md "Result size"): rows and bytes of JSON text a
     * read tool returns unless the call asks for another page size (0 = 100 rows, 32 KiB). */
    size_t max_rows, max_bytes;
    /* Optional default agent-branch rule (docs/mcp.md "Writes name their branch"): where a write
     * (graph_mutate, graph_load, a stored mutation) that names no `branch` goes — this template
     * with each "{actor}" replaced by the caller ("anonymous" when there is none), e.g.
     * "{actor}/work".  A branch that does not exist yet is first created from main, decided as
     * the caller's branch_create (and read on main).  NULL = such a write is refused. */
    const char *agent_branch;
    /* The surface can send a notification at any time, not only while a call runs (stdio): the
     * handler then offers resources/subscribe and resources/unsubscribe, and the surface calls
     * og_mcp_subscriptions_check on a timer to send notifications/resources/updated through
     * .notify.  0 = subscriptions are not offered (-32601), as over HTTP. */
    int subscriptions;
} og_mcp_opts;

/* The JSON-RPC error code of a write refused by admission (implementation-defined range). */
#define OG_MCP_TOO_MANY_REQUESTS (-32029)

og_status og_mcp_new(og_mcp **out, const og_mcp_opts *o);
void og_mcp_free(og_mcp *m);

/* Handles one message: an object, or a JSON-RPC batch array (MCP 2025-03-26; answered with an
 * array of the members' responses).  *out: the response JSON text (og_free), or NULL when
 * nothing is to be answered (notifications and client responses only).
 * Protocol failures are JSON-RPC error responses, not statuses: the return is OG_OK unless
 * memory ran out.  `actor` (may be NULL) is passed to the authorizer and echoed as actor_id. */
og_status og_mcp_handle(og_mcp *m, const char *actor, const char *msg, size_t len, char **out);
/* 1 when the last og_mcp_handle refused a write through opts.admit. */
int og_mcp_throttled(const og_mcp *m);
/* The current log level (opts.log_level, or what logging/setLevel last set). */
og_mcp_log_level og_mcp_log_level_get(const og_mcp *m);
/* Notifications handed to opts.notify by the last og_mcp_handle / og_mcp_http. */
size_t og_mcp_notified(const og_mcp *m);
/* One SSE event carrying a JSON-RPC message: "event: message\ndata: <json>\n\n" (malloc'd;
 * NULL when out of memory).  Compact JSON has no newline, so one data line is the message. */
char *og_mcp_sse_event(const char *json);

/* ---- mcp_policy.c: an authorizer backed by a graph's policy bundle (policy/policy.h) ---- */
typedef struct og_mcp_policy og_mcp_policy;
/* Room for an actor id read from a branch log (graph/graph.h's OG_ACTOR_MAX + NUL). */
#define OG_MCP_ACTOR_MAX 260
/* Loads a graph bundle (YAML text; `name` labels errors) for graph `graph_id`.  Errors as
 * og_policy_parse.  Free with og_mcp_policy_free. */
og_status og_mcp_policy_new(og_mcp_policy **out, const char *bundle, size_t len, const char *name, const char *graph_id);
void og_mcp_policy_free(og_mcp_policy *p);
/* The graph whose branch logs say who created a branch, for bundles with `owned` scopes
 * (docs/policy.md); without it no branch is owned.  The db must outlive the og_mcp_policy. */
void og_mcp_policy_set_db(og_mcp_policy *p, og_db *db);
/* The og_mcp_authorize_fn: pass the og_mcp_policy as authorize_ctx.  A denied invoke_query is
 * OG_MCP_MASK (an unknown tool), other denials OG_MCP_DENY with the policy's message; no
 * actor is denied.  Listing asks whether the action is allowed on some branch. */
og_mcp_verdict og_mcp_policy_authorize(void *ctx, const char *actor, const char *action, const char *branch,
                                       const char *target, const char *query, int listing, char *why, size_t cap);

/* ---- mcp_http.c: the stateless Streamable HTTP binding (POST /graphs/{id}/mcp) ---- */
typedef struct og_mcp_http_request {
    const char *method;           /* "POST"; anything else is 405 */
    const char *content_type;     /* may be NULL; else must name application/json (415) */
    const char *accept;           /* may be NULL; else must allow application/json (406) */
    const char *protocol_version; /* the MCP-Protocol-Version header (may be NULL); unknown = 400 */
    const char *actor;            /* the bearer token's actor (may be NULL) */
    const char *body;
    size_t body_len;
} og_mcp_http_request;
/* *status: 200 with *out the JSON-RPC response (application/json), 202 with *out NULL (a
 * notification), 429 with the JSON-RPC error of a write refused by admission (send
 * `Retry-After`), or 405/415/406/400 with a JSON-RPC error body (send `Allow: POST` with 405).
 * OG_OK unless memory ran out.
 *
 * Streaming: when the Accept header allows text/event-stream and the message produced
 * notifications (progress, log messages), the answer is an SSE stream instead:
 * og_mcp_http_sse(m) is 1 and the body is text/event-stream.  Without opts.notify the
 * notifications are buffered and *out is the whole stream (each notification one event, the
 * response the last).  With opts.notify (a surface that delivers them live) each
 * notification goes to the sink as it happens and *out is the response's event only.  When
 * Accept does not allow text/event-stream no notification is produced and the response is
 * plain JSON. */
og_status og_mcp_http(og_mcp *m, const og_mcp_http_request *req, unsigned *status, char **out);
/* 1 when the last og_mcp_http answered with an SSE stream (Content-Type: text/event-stream). */
int og_mcp_http_sse(const og_mcp *m);
/* Whether an Accept header value allows an SSE response (text/event-stream). */
int og_mcp_accepts_sse(const char *accept);

/* Sends notifications/resources/updated (through opts.notify) for each subscribed resource
 * that changed since it was subscribed or last reported — a branch head moved, the schema or
 * the branch list changed — and returns how many were sent.  Safe to call from a thread other
 * than the one calling og_mcp_handle (docs/mcp.md "Subscriptions"). */
size_t og_mcp_subscriptions_check(og_mcp *m);

/* The protocol versions this surface speaks, newest first (NULL-terminated). */
extern const char *const og_mcp_protocol_versions[];

#endif
