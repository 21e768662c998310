/*
 * mcp.c — the MCP request handler (mcp.h): JSON-RPC 2.0 envelope checks, the initialize
 * handshake, the tool catalog and dispatch, resources.  Every tool is a thin call of the
 * public API (or of the stored-query module), so an agent sees the same results and errors as
 * the CLI and the HTTP routes.
 *
 * Why errors split in two: the protocol's own failures (malformed JSON, unknown method, bad
 * params, unknown tool) are JSON-RPC errors; a tool that ran and failed is a successful
 * response with isError: true, so the model can read the reason and correct itself.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp_int.h"
#include "util/buf.h"

#define META_THRESHOLD 24

const char *const og_mcp_protocol_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL};

static const char *sarg_(json_t *args, const char *k) { return json_string_value(json_object_get(args, k)); }

/* Above this a call's completion is logged as a warning (slow). */
#define SLOW_CALL_MS 1000

og_status og_mcp_new(og_mcp **out, const og_mcp_opts *o)
{
    *out = NULL;
    if (!o || !o->db) return OG_ERR_INVALID;
    og_mcp *m = calloc(1, sizeof *m);
    if (!m) return OG_ERR_NOMEM;
    m->o = *o;
    m->level = o->log_level;
    if (o->subscriptions && og_mcp_subs_new(&m->subs) != OG_OK) {
        free(m);
        return OG_ERR_NOMEM;
    }
    *out = m;
    return OG_OK;
}

void og_mcp_free(og_mcp *m)
{
    if (!m) return;
    og_mcp_subs_free(m->subs);
    free(m);
}

int og_mcp_throttled(const og_mcp *m) { return m && m->throttled; }

int og_mcp_http_sse(const og_mcp *m) { return m && m->sse; }

og_mcp_log_level og_mcp_log_level_get(const og_mcp *m) { return m ? m->level : OG_MCP_LOG_OFF; }

size_t og_mcp_notified(const og_mcp *m) { return m ? m->notified : 0; }

/* ---- notifications: progress and log messages while a tool runs ----------------------------- */

static const char *const level_names[] = {"off", "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Sends one notification (takes `params`). */
static void notify(og_mcp *m, const char *method, json_t *params)
{
    json_t *n = json_pack("{ss ss so}", "jsonrpc", "2.0", "method", method, "params", params);
    char *t = n ? og_mcp_dump(n) : NULL;
    json_decref(n);
    if (t) {
        m->o.notify(m->o.notify_ctx, t);
        m->notified++;
    }
    free(t);
}

/* notifications/progress for the running call, when it carries a token.  Progress strictly
 * increases (MCP): a value not above the last one is sent as the last + 1, and the message
 * says what it counts.  total <= 0: unknown. */
static void progress(og_mcp *m, double value, double total, const char *fmt, ...)
{
    if (!m->token || !m->o.notify) return;
    if (!(value > m->progress)) value = m->progress + 1;
    m->progress = value;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *p = json_pack("{sO ss}", "progressToken", m->token, "message", msg);
    json_object_set_new(p, "progress", value == (double)(json_int_t)value ? json_integer((json_int_t)value) : json_real(value));
    if (total > 0 && total >= value) json_object_set_new(p, "total", total == (double)(json_int_t)total ? json_integer((json_int_t)total) : json_real(total));
    notify(m, "notifications/progress", p);
}

/* notifications/message at `lv`, when the log level lets it through. */
static void logmsg(og_mcp *m, og_mcp_log_level lv, const char *fmt, ...)
{
    if (!m->o.notify || m->level == OG_MCP_LOG_OFF || lv < m->level) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    notify(m, "notifications/message", json_pack("{ss ss ss}", "level", level_names[lv], "logger", "omnigraph", "data", msg));
}

/* A tool starts running (authorized and admitted: nothing is sent before both, so a refusal
 * is still answered plainly).  `staged`: the call reports three stages (total 3); otherwise
 * the tool counts its own progress (graph_load: records). */
static void call_begin(og_mcp *m, const char *actor, const char *tool, json_t *args, int staged)
{
    m->tool = tool;
    m->t0_us = now_us();
    json_t *p = json_object_get(args, "params");
    const char *br = sarg_(args, "branch"), *snap = sarg_(args, "snapshot");
    logmsg(m, OG_MCP_LOG_DEBUG, "tools/call %s by %s: %zu argument(s), %zu param(s), %s %s", tool, actor ? actor : "anonymous",
           json_object_size(args), json_is_object(p) ? json_object_size(p) : 0, snap ? "snapshot" : "branch",
           snap ? snap : br ? br : "main");
    progress(m, 1, staged ? 3 : 0, "running %s", tool);
}

/* A tool has run: what it produced (rows, a commit, an error) as a stage and log lines. */
static void call_end(og_mcp *m, json_t *res, int staged)
{
    double ms = (double)(now_us() - m->t0_us) / 1000.0;
    json_t *sc = json_object_get(res, "structuredContent");
    int failed = json_is_true(json_object_get(res, "isError"));
    const char *text = json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    json_t *rows = json_object_get(sc, "row_count");
    const char *commit = json_string_value(json_object_get(sc, "graph_commit_id"));
    json_t *c = json_object_get(sc, "commit");
    if (!commit && json_is_object(c)) commit = json_string_value(json_object_get(c, "graph_commit_id"));
    char what[256];
    if (failed) {
        int limited = text && !strncmp(text, "limit:", 6);
        logmsg(m, limited ? OG_MCP_LOG_WARNING : OG_MCP_LOG_ERROR, "%s %s after %.1f ms: %s", m->tool,
               limited ? "stopped by a limit" : "failed", ms, text ? text : "");
        snprintf(what, sizeof what, "failed after %.1f ms", ms);
    } else if (json_is_integer(rows)) {
        const char *target = json_string_value(json_object_get(sc, "target"));
        logmsg(m, OG_MCP_LOG_INFO, "read %s at commit %s", target ? target : "main", commit ? commit : "?");
        logmsg(m, OG_MCP_LOG_INFO, "%lld rows in %.1f ms", (long long)json_integer_value(rows), ms);
        snprintf(what, sizeof what, "%lld rows in %.1f ms", (long long)json_integer_value(rows), ms);
    } else if (commit) {
        logmsg(m, OG_MCP_LOG_INFO, "%s published commit %s in %.1f ms", m->tool, commit, ms);
        snprintf(what, sizeof what, "published commit %s in %.1f ms", commit, ms);
    } else {
        logmsg(m, OG_MCP_LOG_INFO, "%s done in %.1f ms", m->tool, ms);
        snprintf(what, sizeof what, "done in %.1f ms", ms);
    }
    if (ms > SLOW_CALL_MS) logmsg(m, OG_MCP_LOG_WARNING, "%s was slow: %.1f ms (over %d ms)", m->tool, ms, SLOW_CALL_MS);
    progress(m, staged ? 2 : m->progress + 1, staged ? 3 : 0, "%s", what);
    size_t bytes = text ? strlen(text) : 0;
    progress(m, staged ? 3 : m->progress + 1, staged ? 3 : 0, "result ready (%zu bytes)", bytes);
}

/* Admission for one writing call: 1 = go ahead; 0 = refused (m->throttled, the message set). */
static int admitted(og_mcp *m)
{
    if (!m->o.admit) return 1;
    char why[256] = "";
    if (!m->o.admit(m->o.admit_ctx, why, sizeof why)) return 1;
    m->throttled = 1;
    snprintf(m->throttle_msg, sizeof m->throttle_msg, "too_many_requests: %s", why[0] ? why : "retry later");
    return 0;
}

/* ---- the default agent branch (opts.agent_branch) --------------------------------------------- */

/* The rule's template with each "{actor}" replaced by the caller. */
static void agent_branch_name(const og_mcp *m, const char *actor, char *out, size_t cap)
{
    const char *t = m->o.agent_branch, *who = actor && *actor ? actor : "anonymous";
    size_t n = 0;
    out[0] = 0;
    while (*t && n + 1 < cap) {
        if (!strncmp(t, "{actor}", 7)) {
            n += (size_t)snprintf(out + n, cap - n, "%s", who);
            if (n >= cap) n = cap - 1;
            t += 7;
        } else {
            out[n++] = *t++;
            out[n] = 0;
        }
    }
}

/* A write's arguments with the agent branch filled in (a new reference) when they name no
 * branch and the rule is configured; else NULL (the arguments stand as given). */
static json_t *agent_args(const og_mcp *m, const char *actor, json_t *args)
{
    if (!m->o.agent_branch || !json_is_object(args) || json_is_string(json_object_get(args, "branch"))) return NULL;
    char name[512];
    agent_branch_name(m, actor, name, sizeof name);
    json_t *a = json_copy(args);
    if (a) json_object_set_new(a, "branch", json_string(name));
    return a;
}

static json_t *tool_text(const char *text, int is_error);
static json_t *tool_status(og_status st);
static og_mcp_verdict ask(og_mcp *m, const char *actor, const char *action, const char *branch, const char *target,
                          const char *query, int listing, char *why, size_t cap);

/* The agent branch `name` exists, or is created from main now as the caller's branch_create
 * (decided by the policy first, with read on main, as an explicit branch_create is): NULL when
 * it is ready, else the tool error. */
/* Whether branch `name` exists (by name: a commit reference that merely resolves does not count). */
static int branch_exists(og_db *db, const char *name)
{
    char *text = NULL;
    int found = 0;
    if (og_db_branch_list(&text, db) == OG_OK) {
        json_t *j = json_loads(text, 0, NULL);
        size_t i;
        json_t *b;
        json_array_foreach(json_object_get(j, "branches"), i, b) {
            const char *n = json_string_value(json_object_get(b, "name"));
            found |= n && !strcmp(n, name);
        }
        json_decref(j);
    }
    og_free(text);
    return found;
}

static json_t *agent_branch_ready(og_mcp *m, const char *actor, const char *name)
{
    char head[32], why[512];
    if (branch_exists(m->o.db, name)) return NULL;
    og_mcp_verdict v = ask(m, actor, "branch_create", "main", name, NULL, 0, why, sizeof why);
    if (v == OG_MCP_ALLOW) v = ask(m, actor, "read", "main", NULL, NULL, 0, why, sizeof why);
    if (v != OG_MCP_ALLOW) {
        char msg[800];
        snprintf(msg, sizeof msg, "forbidden: the agent branch '%s' does not exist and cannot be created: %s", name,
                 why[0] ? why : "denied by policy");
        return tool_text(msg, 1);
    }
    if (m->o.write_lock) m->o.write_lock(m->o.write_lock_ctx, 1);
    og_status st = og_db_branch_create(m->o.db, name, "main", NULL, head);
    if (m->o.write_lock) m->o.write_lock(m->o.write_lock_ctx, 0);
    if (st == OG_ERR_ALREADY_EXISTS) st = OG_OK; /* created meanwhile by a concurrent write of the agent's */
    return st == OG_OK ? NULL : tool_status(st);
}

/* ---- JSON-RPC helpers ---------------------------------------------------------------------- */

static json_t *rpc_error(json_t *id, int code, const char *msg)
{
    return json_pack("{ss sO s{si ss}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code", code, "message", msg);
}

static json_t *rpc_result(json_t *id, json_t *result)
{
    return json_pack("{ss sO so}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* A tool result: text mirror + structured content (mcp_result.c). */
static json_t *tool_text(const char *text, int is_error) { return og_mcp_tool_text(text, is_error); }

static json_t *tool_status(og_status st)
{
    char msg[2048];
    snprintf(msg, sizeof msg, "%s: %s", og_status_name(st), og_error_message());
    return tool_text(msg, 1);
}

/* Takes ownership of text (og_free). */
static json_t *tool_owned(og_status st, char *text)
{
    json_t *r = st == OG_OK ? tool_text(text, 0) : tool_status(st);
    og_free(text);
    return r;
}

/* ---- the tool catalog ---------------------------------------------------------------------- */

typedef struct builtin {
    const char *name, *title, *action, *description;
    int read_only;
    const char *schema; /* JSON text of the input schema */
    const char *output; /* JSON text of the output schema (NULL = none) */
} builtin;

#define S_BRANCH "\"branch\":{\"type\":\"string\",\"description\":\"branch (default main)\"}"
#define S_MESSAGE "\"message\":{\"type\":\"string\",\"description\":\"the commit's message (commit_list shows it)\"}"
#define S_PARAMS "\"params\":{\"type\":\"object\",\"description\":\"query parameters by name (without $)\"}"
#define S_WBRANCH "\"branch\":{\"type\":\"string\",\"description\":\"the branch to write (required: write on your own branch)\"}"
#define S_IFCOMMIT "\"if_commit\":{\"type\":\"string\",\"description\":\"refuse unless the branch head is still this commit\"}"
#define S_PAGE                                                                                                      \
    "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"first row of the page (see next_offset)\"},"         \
    "\"max_rows\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10000,\"description\":\"rows per page (default 100)\"}," \
    "\"max_bytes\":{\"type\":\"integer\",\"minimum\":1024,\"maximum\":4194304,\"description\":\"JSON bytes per page (default 32768)\"}"
/* What the row results, change receipts and diffs look like (MCP outputSchema).  Nothing is
 * required, so an error result ({"error":{"code","message"}}) validates too. */
#define O_ERROR                                                                                                    \
    "\"error\":{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"},"   \
    "\"line\":{\"type\":\"integer\"},\"column\":{\"type\":\"integer\"},\"diagnostic\":{\"type\":\"string\"},"             \
    "\"candidates\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}"
#define O_PAGED                                                                                                    \
    "\"total_rows\":{\"type\":\"integer\"},\"offset\":{\"type\":\"integer\"},\"truncated\":{\"type\":\"boolean\"},"        \
    "\"next_offset\":{\"type\":\"integer\"}," O_ERROR
#define O_READ                                                                                                     \
    "{\"type\":\"object\",\"properties\":{\"query_name\":{\"type\":\"string\"},\"target\":{\"type\":\"string\"},"           \
    "\"row_count\":{\"type\":\"integer\"},\"columns\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"                 \
    "\"rows\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"graph_commit_id\":{\"type\":\"string\"}," O_PAGED "}}"
#define O_CHANGE                                                                                                   \
    "{\"type\":\"object\",\"properties\":{\"query_name\":{\"type\":\"string\"},\"branch\":{\"type\":\"string\"},"             \
    "\"affected_nodes\":{\"type\":\"integer\"},\"affected_edges\":{\"type\":\"integer\"},"                             \
    "\"inserted\":{\"type\":\"integer\"},\"updated\":{\"type\":\"integer\"},\"deleted\":{\"type\":\"integer\"},"          \
    "\"actor_id\":{\"type\":[\"string\",\"null\"]},"                                                                    \
    "\"commit\":{\"type\":[\"object\",\"null\"]}," O_ERROR "}}"
#define O_PROPOSAL                                                                                                 \
    "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"state\":{\"type\":\"string\"},"                  \
    "\"source\":{\"type\":\"string\"},\"target\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"}," O_ERROR "}}"
#define O_DIFF                                                                                                     \
    "{\"type\":\"object\",\"properties\":{\"from\":{\"type\":\"string\"},\"to\":{\"type\":\"string\"},"                     \
    "\"merge_base\":{\"type\":\"string\"},\"stats\":{\"type\":\"object\"},\"changes\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}," O_PAGED "}}"

static const builtin builtins[] = {
    {"graph_health", "Health", NULL, "Liveness and identity of this graph: status, version, graph id.", 1,
     "{\"type\":\"object\",\"properties\":{}}", NULL},
    {"graph_query", "Run a read query", "read",
     "Run an ad-hoc read-only GQ query (`query name($p: T) { match {...} return {...} }`) against a branch or a "
     "snapshot. Mutations are rejected: use graph_mutate.", 1,
     "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\",\"description\":\"GQ source\"},"
     "\"name\":{\"type\":\"string\",\"description\":\"which query of the source to run (default: the only one)\"}," S_PARAMS
     "," S_BRANCH ",\"snapshot\":{\"type\":\"string\",\"description\":\"a commit id to read at\"}," S_PAGE "},\"required\":[\"query\"]}",
     O_READ},
    {"graph_explain", "Check and explain a read query", "read",
     "Compile a read query without running it: a type error comes back with its position and code; otherwise the plan "
     "(the operators in order, access paths, where filters run, estimated rows). analyze=true also runs it and adds the "
     "rows each step produced.", 1,
     "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\",\"description\":\"GQ source\"},"
     "\"name\":{\"type\":\"string\"}," S_PARAMS "," S_BRANCH ",\"analyze\":{\"type\":\"boolean\"}},\"required\":[\"query\"]}",
     NULL},
    {"graph_validate", "Check GQ text", "read",
     "Check GQ text — one or several queries, reads and mutations — against the schema of a branch (default main) "
     "without running anything: ok, and each finding with its code, line, column and hint (a did-you-mean when a name "
     "is a typo). Check a mutation here before writing it.", 1,
     "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\",\"description\":\"GQ source\"}," S_BRANCH
     "},\"required\":[\"query\"]}",
     NULL},
    {"change_feed", "Follow a branch", "read",
     "Row changes committed to a branch (default main) after a cursor, oldest first, one page at a time: start with "
     "start=\"now\" (nothing replayed; keep the returned cursor) or \"beginning\", then pass cursor to see what landed since. "
     "page_token continues a long page.", 1,
     "{\"type\":\"object\",\"properties\":{" S_BRANCH ",\"cursor\":{\"type\":\"string\"},\"start\":{\"type\":\"string\"},"
     "\"page_token\":{\"type\":\"string\"},\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":8192}}}",
     NULL},
    {"graph_snapshot", "Snapshot", "read", "Commit, schema and per-table version and row count a read of the branch sees.", 1,
     "{\"type\":\"object\",\"properties\":{" S_BRANCH "}}", NULL},
    {"schema_get", "Schema", "read", "The graph's .pg schema source.", 1, "{\"type\":\"object\",\"properties\":{}}", NULL},
    {"branch_list", "List branches", "read", "The graph's branches: head, creator (created_by), the commit each was created from (base), when (created_at) and what for (message).", 1, "{\"type\":\"object\",\"properties\":{}}", NULL},
    {"commit_list", "List commits", "read", "First-parent history of a branch, newest first.", 1,
     "{\"type\":\"object\",\"properties\":{" S_BRANCH ",\"limit\":{\"type\":\"integer\",\"minimum\":0}}}", NULL},
    {"commit_get", "Show a commit", "read", "One commit with the table versions it published.", 1,
     "{\"type\":\"object\",\"properties\":{\"commit_id\":{\"type\":\"string\"}},\"required\":[\"commit_id\"]}", NULL},
    {"graph_mutate", "Run a mutation", "change",
     "Run an ad-hoc GQ insert/update/delete on a branch as one commit. `branch` is required: write on your own "
     "branch (branch_create) and have it reviewed and merged.", 0,
     "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\",\"description\":\"GQ source\"},"
     "\"name\":{\"type\":\"string\"}," S_PARAMS "," S_WBRANCH "," S_IFCOMMIT "," S_MESSAGE "},\"required\":[\"query\",\"branch\"]}",
     O_CHANGE},
    {"graph_load", "Load NDJSON", "change",
     "Load NDJSON records ({\"type\":T,\"data\":{...}} / {\"edge\":E,\"from\":..,\"to\":..}) as one commit.", 0,
     "{\"type\":\"object\",\"properties\":{\"data\":{\"type\":\"string\",\"description\":\"NDJSON text\"}," S_WBRANCH
     ",\"from\":{\"type\":\"string\",\"description\":\"fork the branch from this one when it does not exist\"},"
     "\"mode\":{\"type\":\"string\",\"enum\":[\"merge\",\"append\",\"overwrite\"],\"default\":\"merge\"}," S_MESSAGE
     "},\"required\":[\"data\",\"branch\"]}", NULL},
    {"branch_create", "Create a branch", "branch_create",
     "Create a branch from the head of another (default main); `message` says what it is for (branch_list shows it).", 0,
     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"from\":{\"type\":\"string\"},"
     "\"message\":{\"type\":\"string\",\"description\":\"what the branch is for (at most 1024 bytes), kept with it\"}},"
     "\"required\":[\"name\"]}", NULL},
    {"branch_delete", "Delete a branch", "branch_delete", "Delete a branch (not main).", 0,
     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}", NULL},
    {"branch_merge", "Merge a branch", "branch_merge",
     "Merge a source branch into a target (default main): already_up_to_date, fast_forward or merged. Row conflicts "
     "fail the merge (nothing published) unless `strategy` settles them: ours keeps the target's row, theirs takes the "
     "source's. `dry_run` decides it (outcome, counts, conflicts) and publishes nothing.", 0,
     "{\"type\":\"object\",\"properties\":{\"source\":{\"type\":\"string\"},\"target\":{\"type\":\"string\"},"
     "\"delete_branch\":{\"type\":\"boolean\"},\"dry_run\":{\"type\":\"boolean\"}," S_MESSAGE ",\"strategy\":{\"type\":\"string\",\"enum\":[\"fail\",\"ours\",\"theirs\"]},"
     "\"if_commit\":{\"type\":\"string\",\"description\":\"refuse unless the target head is still this commit\"}},"
     "\"required\":[\"source\"]}", NULL},
    {"branch_diff", "What a branch changed", "read",
     "Row-level changes a branch made since it forked from `against` (default main): the diff from their merge base to "
     "the branch head, so it stays right when `against` moves on. Or give `from` and `to` (any commit references) "
     "instead of `branch`. One page of changes at a time (offset, max_rows, max_bytes).", 1,
     "{\"type\":\"object\",\"properties\":{\"branch\":{\"type\":\"string\"},\"against\":{\"type\":\"string\"},"
     "\"from\":{\"type\":\"string\"},\"to\":{\"type\":\"string\"}," S_PAGE "}}",
     O_DIFF},
    {"proposal_create", "Propose a merge", "change",
     "Propose merging your branch `source` into `target` (default main) for review, with a `title` and a `description` "
     "of the change. Returns the proposal and its `id`; a reviewer shows, approves (merges) or closes it.", 0,
     "{\"type\":\"object\",\"properties\":{\"source\":{\"type\":\"string\"},\"target\":{\"type\":\"string\"},"
     "\"title\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"}},\"required\":[\"source\",\"title\"]}",
     O_PROPOSAL},
    {"proposal_list", "Merge proposals", "read",
     "Merge proposals, newest first: id, state (open, merged, closed), source, target, title, who opened it and when. "
     "`state` filters.", 1,
     "{\"type\":\"object\",\"properties\":{\"state\":{\"type\":\"string\",\"enum\":[\"open\",\"merged\",\"closed\"]}}}",
     NULL},
    {"proposal_show", "Review a merge proposal", "read",
     "A proposal with what it changes (row changes from the merge base to the source head, paged: offset, max_rows, "
     "max_bytes) and what approving would do now: the merge outcome and counts, or its conflicts. Publishes nothing.", 1,
     "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}," S_PAGE "},\"required\":[\"id\"]}", NULL},
    {"proposal_approve", "Approve (merge) a proposal", "branch_merge",
     "Merge an open proposal's source into its target and mark it merged (needs the policy's branch_merge on the "
     "target). `strategy` (fail | ours | theirs) settles row conflicts; `if_commit` requires the target head. On "
     "conflicts nothing is merged and the proposal stays open.", 0,
     "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"strategy\":{\"type\":\"string\","
     "\"enum\":[\"fail\",\"ours\",\"theirs\"]}," S_IFCOMMIT "},\"required\":[\"id\"]}", NULL},
    {"proposal_close", "Close a proposal", "change",
     "Close an open proposal without merging, with a `reason` (allowed to whoever may write its source branch or "
     "merge into its target).", 0,
     "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}},"
     "\"required\":[\"id\"]}", O_PROPOSAL},
    {"schema_apply", "Apply a schema", "schema_apply",
     "Migrate the graph to a new .pg schema (refused under cluster serving: use `omnigraph cluster apply`).", 0,
     "{\"type\":\"object\",\"properties\":{\"schema_source\":{\"type\":\"string\"},\"allow_data_loss\":{\"type\":\"boolean\"}},"
     "\"required\":[\"schema_source\"]}", NULL},
};
#define NBUILTINS (sizeof builtins / sizeof builtins[0])

static og_mcp_verdict ask(og_mcp *m, const char *actor, const char *action, const char *branch, const char *target,
                          const char *query, int listing, char *why, size_t cap)
{
    if (!m->o.authorize || !action) return OG_MCP_ALLOW;
    why[0] = 0;
    return m->o.authorize(m->o.authorize_ctx, actor, action, branch, target, query, listing, why, cap);
}

static size_t exposed_count(const og_mcp *m)
{
    size_t n = 0;
    for (size_t i = 0; i < og_stored_set_count(m->o.queries); i++) n += og_stored_set_at(m->o.queries, i)->mcp_expose;
    return n;
}

static char *query_description(const og_stored_query *q)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s%s", q->description ? q->description : "", q->instruction ? "\n\n" : "",
             q->instruction ? q->instruction : "");
    if (!buf[0]) snprintf(buf, sizeof buf, "Stored %s `%s` (%s).", q->mutation ? "mutation" : "query", q->name, q->file);
    return strdup(buf);
}

/* The input properties a stored read takes beside `params` (paging), or a mutation (if_commit). */
static void stored_extra_props(json_t *props, int mutation)
{
    json_t *x = json_loads(mutation ? "{" S_IFCOMMIT "," S_MESSAGE "}" : "{" S_PAGE "}", 0, NULL);
    json_object_update(props, x);
    json_decref(x);
}

static json_t *stored_tool(const og_stored_query *q)
{
    json_t *props = json_object();
    json_t *ps = og_stored_params_schema_json(q);
    json_object_set_new(props, "params", ps);
    json_object_set_new(props, "branch", json_pack("{ss ss}", "type", "string", "description",
                                                   q->mutation ? "the branch to write (required)" : "branch (default main)"));
    if (!q->mutation)
        json_object_set_new(props, "snapshot", json_pack("{ss ss}", "type", "string", "description", "a commit id to read at"));
    stored_extra_props(props, q->mutation);
    json_t *req = json_array();
    if (json_array_size(json_object_get(ps, "required"))) json_array_append_new(req, json_string("params"));
    if (q->mutation) json_array_append_new(req, json_string("branch"));
    char *d = query_description(q);
    json_t *t = json_pack("{ss ss s{ss so so}}", "name", q->tool_name, "description", d ? d : "", "inputSchema", "type",
                          "object", "properties", props, "required", req);
    json_object_set_new(t, "outputSchema", json_loads(q->mutation ? O_CHANGE : O_READ, 0, NULL));
    free(d);
    json_object_set_new(t, "annotations", json_pack("{sb sb}", "readOnlyHint", !q->mutation, "destructiveHint", q->mutation));
    return t;
}

/* Under the agent-branch rule a write's `branch` is optional: the input schema says where the
 * write goes without it. */
static void relax_branch(const og_mcp *m, const char *actor, json_t *schema)
{
    json_t *req = json_object_get(schema, "required");
    json_t *br = json_object_get(json_object_get(schema, "properties"), "branch");
    if (!m->o.agent_branch || !br) return;
    for (size_t i = 0; i < json_array_size(req); i++)
        if (!strcmp(json_string_value(json_array_get(req, i)), "branch")) {
            json_array_remove(req, i);
            char name[512], d[700];
            agent_branch_name(m, actor, name, sizeof name);
            snprintf(d, sizeof d, "the branch to write (default: your agent branch '%s', created from main when missing)", name);
            json_object_set_new(br, "description", json_string(d));
            break;
        }
}

static json_t *tools_list(og_mcp *m, const char *actor)
{
    json_t *tools = json_array();
    char why[256];
    for (size_t i = 0; i < NBUILTINS; i++) {
        const builtin *b = &builtins[i];
        /* proposal_close is the author's (change) or a reviewer's (branch_merge) */
        if (ask(m, actor, b->action, NULL, NULL, NULL, 1, why, sizeof why) != OG_MCP_ALLOW &&
            (strcmp(b->name, "proposal_close") || ask(m, actor, "branch_merge", NULL, NULL, NULL, 1, why, sizeof why) != OG_MCP_ALLOW))
            continue;
        json_t *t = json_object();
        json_object_set_new(t, "name", json_string(b->name));
        json_object_set_new(t, "title", json_string(b->title));
        json_object_set_new(t, "description", json_string(b->description));
        json_object_set_new(t, "inputSchema", json_loads(b->schema, 0, NULL));
        relax_branch(m, actor, json_object_get(t, "inputSchema"));
        if (b->output) json_object_set_new(t, "outputSchema", json_loads(b->output, 0, NULL));
        json_object_set_new(t, "annotations", json_pack("{sb sb}", "readOnlyHint", b->read_only, "destructiveHint", !b->read_only));
        json_array_append_new(tools, t);
    }
    int meta = exposed_count(m) >= META_THRESHOLD;
    int any = 0, any_mutation = 0;
    for (size_t i = 0; i < og_stored_set_count(m->o.queries); i++) {
        const og_stored_query *q = og_stored_set_at(m->o.queries, i);
        if (!q->mcp_expose) continue;
        if (ask(m, actor, "invoke_query", NULL, NULL, q->name, 1, why, sizeof why) != OG_MCP_ALLOW) continue;
        if (q->mutation && ask(m, actor, "change", NULL, NULL, q->name, 1, why, sizeof why) != OG_MCP_ALLOW) continue;
        any = 1;
        any_mutation |= q->mutation;
        if (!meta) {
            json_t *t = stored_tool(q);
            relax_branch(m, actor, json_object_get(t, "inputSchema"));
            json_array_append_new(tools, t);
        }
    }
    if (meta && any) {
        json_t *list = json_pack("{ss ss s{ss s{s{ss}} }}", "name", "stored_query_list", "description",
                                 "List the graph's stored queries (name, kind, typed parameters, description); "
                                 "filter by a substring of the name or description.",
                                 "inputSchema", "type", "object", "properties", "filter", "type", "string");
        json_object_set_new(list, "annotations", json_pack("{sb sb}", "readOnlyHint", 1, "destructiveHint", 0));
        json_array_append_new(tools, list);
        /* reads and mutations run through two tools, so a host can trust reads without asking */
        json_t *t = json_pack("{ss ss s{ss s{s{ss} s{ss} s{ss} s{ss}} s[s]}}", "name", "stored_query_run", "description",
                              "Run a stored read query by name with its parameters (see stored_query_list); one page of "
                              "rows at a time (offset, max_rows, max_bytes).", "inputSchema",
                              "type", "object", "properties", "name", "type", "string", "params", "type", "object",
                              "branch", "type", "string", "snapshot", "type", "string", "required", "name");
        stored_extra_props(json_object_get(json_object_get(t, "inputSchema"), "properties"), 0);
        json_object_set_new(t, "outputSchema", json_loads(O_READ, 0, NULL));
        json_object_set_new(t, "annotations", json_pack("{sb sb}", "readOnlyHint", 1, "destructiveHint", 0));
        json_array_append_new(tools, t);
        if (any_mutation) {
            t = json_pack("{ss ss s{ss s{s{ss} s{ss} s{ss}} s[ss]}}", "name", "stored_mutation_run", "description",
                          "Run a stored mutation by name with its parameters on a branch of your own (see "
                          "stored_query_list).", "inputSchema", "type", "object", "properties", "name", "type", "string",
                          "params", "type", "object", "branch", "type", "string", "required", "name", "branch");
            stored_extra_props(json_object_get(json_object_get(t, "inputSchema"), "properties"), 1);
            relax_branch(m, actor, json_object_get(t, "inputSchema"));
            json_object_set_new(t, "outputSchema", json_loads(O_CHANGE, 0, NULL));
            json_object_set_new(t, "annotations", json_pack("{sb sb}", "readOnlyHint", 0, "destructiveHint", 1));
            json_array_append_new(tools, t);
        }
    }
    return json_pack("{so}", "tools", tools);
}

/* ---- tool implementations ------------------------------------------------------------------ */

static const char *sarg(json_t *args, const char *k) { return json_string_value(json_object_get(args, k)); }

static char *params_text(json_t *args)
{
    json_t *p = json_object_get(args, "params");
    if (!p || json_is_null(p)) return strdup("{}");
    return json_dumps(p, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* A rendered row document as one page of a result of `total` rows (mcp_result.c). */
static json_t *paged(og_status st, char *out, const char *key, size_t total, const og_mcp_page *pg)
{
    if (st != OG_OK) return tool_owned(st, out);
    json_t *doc = og_json_read(out, strlen(out)); /* a U64 above 2^63-1 stays a number */
    if (!json_is_object(doc)) {
        json_decref(doc);
        return tool_owned(OG_OK, out);
    }
    og_free(out);
    return og_mcp_page_result(doc, key, total, pg);
}

static json_t *run_read(og_mcp *m, json_t *args)
{
    const char *src = sarg(args, "query"), *branch = sarg(args, "branch"), *snap = sarg(args, "snapshot");
    og_mcp_page pg;
    char buf[256];
    if (og_mcp_page_args(m, args, &pg, buf, sizeof buf)) return tool_text(buf, 1);
    char *params = params_text(args);
    og_rows *rows = NULL;
    og_read_opts at = {.branch = branch, .commit = snap};
    og_status st = og_db_query(&rows, m->o.db, src, strlen(src), sarg(args, "name"), params, &at);
    free(params);
    if (st != OG_OK) return tool_status(st);
    size_t total = og_rows_count(rows);
    og_rows_slice(rows, pg.offset, pg.max_rows); /* render only the page */
    char *out = NULL;
    size_t n = 0;
    /* under the query's own time budget, as the server's /query (docs/server.md "Query budgets") */
    st = og_rows_render_in_budget(&out, &n, rows, OG_FORMAT_JSON, snap ? snap : branch ? branch : "main");
    og_rows_free(rows);
    return paged(st, out, "rows", total, &pg);
}

/* branch_diff: the changes of `branch` since its merge base with `against`, or from..to. */
static json_t *run_diff(og_mcp *m, json_t *args)
{
    const char *branch = sarg(args, "branch"), *against = sarg(args, "against");
    const char *from = sarg(args, "from"), *to = sarg(args, "to");
    og_mcp_page pg;
    char buf[256];
    if (og_mcp_page_args(m, args, &pg, buf, sizeof buf)) return tool_text(buf, 1);
    if (branch ? (from || to) : !(from && to))
        return tool_text("invalid: give `branch` (and optionally `against`), or both `from` and `to`", 1);
    char base[32] = "";
    if (branch) {
        og_status st = og_db_merge_base(m->o.db, branch, against ? against : "main", base, sizeof base);
        if (st != OG_OK) return tool_status(st);
        from = base;
        to = branch;
    }
    og_changes_opts co = {.from = from, .to = to};
    char *out = NULL;
    og_status st = og_db_changes(&out, m->o.db, &co);
    if (st != OG_OK) {
        og_free(out);
        return tool_status(st);
    }
    json_t *doc = og_json_read(out, strlen(out)); /* a U64 above 2^63-1 stays a number */
    og_free(out);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return tool_text("internal: unreadable changes document", 1);
    }
    if (branch) json_object_set_new(doc, "merge_base", json_string(base));
    /* the whole diff is computed (it is bounded by what the branch changed); the page cuts what is sent */
    json_t *ch = json_object_get(doc, "changes");
    size_t total = json_array_size(ch);
    json_t *page = json_array();
    for (size_t i = pg.offset; i < total && i - pg.offset < pg.max_rows; i++) json_array_append(page, json_array_get(ch, i));
    json_object_set_new(doc, "changes", page);
    return og_mcp_page_result(doc, "changes", total, &pg);
}

static json_t *run_mutate(og_mcp *m, const char *actor, json_t *args)
{
    const char *src = sarg(args, "query"), *branch = sarg(args, "branch");
    char *params = params_text(args);
    og_receipt r;
    memset(&r, 0, sizeof r);
    og_db_mutate_opts mo = {.branch = branch, .expected_head = sarg(args, "if_commit")};
    og_status st = og_db_mutate_ex(&r, m->o.db, src, strlen(src), sarg(args, "name"), params, &mo);
    free(params);
    if (st != OG_OK) return tool_status(st);
    char *out = NULL;
    st = og_stored_change_output(&out, m->o.db, sarg(args, "name"), branch, &r, actor);
    return tool_owned(st, out);
}

/* og_load_opts.on_progress: the load's own counts as progress (records parsed) and debug lines. */
#define LOAD_PROGRESS_EVERY 1000
static void load_progress(void *ctx, const og_load_progress *p)
{
    og_mcp *m = ctx;
    char again[32] = "";
    if (p->attempt > 1) snprintf(again, sizeof again, " (attempt %d)", p->attempt);
    if (!strcmp(p->stage, "reading")) {
        progress(m, (double)p->records, 0, "read %llu records (%llu of %llu bytes)%s", (unsigned long long)p->records,
                 (unsigned long long)p->bytes_read, (unsigned long long)p->bytes_total, again);
        logmsg(m, OG_MCP_LOG_DEBUG, "graph_load: %llu records read, %llu batches flushed%s", (unsigned long long)p->records,
               (unsigned long long)p->flushed_batches, again);
    } else {
        progress(m, (double)p->records, 0, "%s %llu records%s", p->stage, (unsigned long long)p->records, again);
        logmsg(m, OG_MCP_LOG_DEBUG, "graph_load: %s %llu records%s", p->stage, (unsigned long long)p->records, again);
    }
}

static json_t *run_load(og_mcp *m, json_t *args)
{
    const char *data = sarg(args, "data"), *mode = sarg(args, "mode");
    og_load_opts lo = {.mode = OG_LOAD_MERGE, .branch = sarg(args, "branch"), .from = sarg(args, "from")};
    if (m->o.notify && (m->token || m->level != OG_MCP_LOG_OFF)) {
        lo.on_progress = load_progress;
        lo.progress_ctx = m;
        lo.progress_every = LOAD_PROGRESS_EVERY;
    }
    if (mode && og_load_mode_parse(mode, &lo.mode) != OG_OK) return tool_status(OG_ERR_INVALID);
    char path[] = "/tmp/og-mcp-load-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return tool_text("io: cannot create a temporary file for the load", 1);
    size_t n = strlen(data), off = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(fd);
    og_receipt r;
    memset(&r, 0, sizeof r);
    og_status st = off == n ? og_db_load(&r, m->o.db, path, &lo) : OG_ERR_IO;
    unlink(path);
    if (st != OG_OK) return tool_status(st);
    logmsg(m, OG_MCP_LOG_INFO, "graph_load: %llu records into branch %s (%s): %llu inserted, %llu updated",
           (unsigned long long)r.records, r.branch, og_load_mode_name(lo.mode), (unsigned long long)r.inserted,
           (unsigned long long)r.updated);
    json_t *o = json_pack("{ss ss sI sI sI}", "branch", r.branch, "mode", og_load_mode_name(lo.mode), "total_entities",
                          (json_int_t)r.records, "inserted", (json_int_t)r.inserted, "updated", (json_int_t)r.updated);
    json_object_set_new(o, "embedding_generation", r.embed_touched ? json_string("unsupported") : json_null());
    json_object_set_new(o, "commit", r.published ? json_pack("{ss ss}", "graph_commit_id", r.commit, "graph_branch", r.branch) : json_null());
    char *t = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return tool_owned(OG_OK, t);
}

static json_t *call_builtin(og_mcp *m, const char *actor, const builtin *b, json_t *args)
{
    char *out = NULL;
    og_status st;
    if (!strcmp(b->name, "graph_health")) {
        json_t *o = json_pack("{ss ss}", "status", "ok", "version", OG_VERSION_STRING);
        if (m->o.graph_id) json_object_set_new(o, "graph_id", json_string(m->o.graph_id));
        char *t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return tool_owned(OG_OK, t);
    }
    if (!strncmp(b->name, "proposal_", 9)) return og_mcp_proposal_run(m, b->name, args);
    if (!strcmp(b->name, "graph_query")) return run_read(m, args);
    if (!strcmp(b->name, "branch_diff")) return run_diff(m, args);
    if (!strcmp(b->name, "graph_explain")) {
        const char *src = sarg(args, "query");
        char *params = params_text(args);
        og_read_opts at = {.branch = sarg(args, "branch")};
        st = og_db_query_explain(&out, m->o.db, src, strlen(src), sarg(args, "name"), params, &at,
                                 json_is_true(json_object_get(args, "analyze")));
        free(params);
        if (st != OG_OK) return tool_status(st);
        json_t *o = json_pack("{sb ss}", "ok", 1, "plan", out);
        og_free(out);
        char *t = og_mcp_dump(o);
        json_decref(o);
        return tool_owned(OG_OK, t);
    }
    if (!strcmp(b->name, "graph_validate")) {
        const char *src = sarg(args, "query");
        og_read_opts at = {.branch = sarg(args, "branch")};
        st = og_db_lint(&out, m->o.db, src, strlen(src), &at);
        return tool_owned(st, out);
    }
    if (!strcmp(b->name, "change_feed")) {
        json_int_t lim = json_integer_value(json_object_get(args, "limit"));
        og_changes_poll_opts po = {.branch = sarg(args, "branch"), .cursor = sarg(args, "cursor"), .start = sarg(args, "start"),
                                   .page_token = sarg(args, "page_token"), .limit = lim > 0 ? (size_t)lim : 100};
        st = og_db_changes_poll(&out, m->o.db, &po);
        if (st != OG_OK) {
            og_free(out);
            return tool_status(st);
        }
        return tool_owned(OG_OK, out);
    }
    if (!strcmp(b->name, "graph_mutate")) return run_mutate(m, actor, args);
    if (!strcmp(b->name, "graph_load")) return run_load(m, args);
    if (!strcmp(b->name, "graph_snapshot")) {
        og_read_opts at = {.branch = sarg(args, "branch")};
        st = og_db_snapshot(&out, m->o.db, &at);
        return tool_owned(st, out);
    }
    if (!strcmp(b->name, "schema_get")) {
        st = og_db_schema_source(&out, m->o.db, NULL);
        if (st != OG_OK) return tool_status(st);
        json_t *o = json_pack("{ss}", "schema_source", out);
        og_free(out);
        char *t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return tool_owned(OG_OK, t);
    }
    if (!strcmp(b->name, "branch_list")) return st = og_db_branch_list(&out, m->o.db), tool_owned(st, out);
    if (!strcmp(b->name, "commit_list")) {
        json_int_t lim = json_integer_value(json_object_get(args, "limit"));
        st = og_db_commit_list(&out, m->o.db, sarg(args, "branch"), lim > 0 ? (size_t)lim : 0);
        return tool_owned(st, out);
    }
    if (!strcmp(b->name, "commit_get")) return st = og_db_commit_show(&out, m->o.db, sarg(args, "commit_id")), tool_owned(st, out);
    if (!strcmp(b->name, "branch_create")) {
        char head[32] = "";
        json_t *mv = json_object_get(args, "message");
        if (mv && !json_is_null(mv) && !json_is_string(mv)) return tool_text("invalid: `message` must be a string", 1);
        og_db_branch_create_opts co = {OG_DB_BRANCH_CREATE_OPTS_VERSION, sarg(args, "from"), NULL, sarg(args, "message")};
        st = og_db_branch_create_ex(head, m->o.db, sarg(args, "name"), &co);
        if (st != OG_OK) return tool_status(st);
        const char *bm = sarg(args, "message");
        json_t *o = json_pack("{ss ss ss so}", "name", sarg(args, "name"), "from", sarg(args, "from") ? sarg(args, "from") : "main",
                              "head", head, "message", bm && *bm ? json_string(bm) : json_null());
        if (actor) json_object_set_new(o, "actor_id", json_string(actor));
        char *t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return tool_owned(OG_OK, t);
    }
    if (!strcmp(b->name, "branch_delete")) {
        st = og_db_branch_delete(m->o.db, sarg(args, "name"));
        if (st != OG_OK) return tool_status(st);
        json_t *o = json_pack("{ss}", "name", sarg(args, "name"));
        if (actor) json_object_set_new(o, "actor_id", json_string(actor));
        char *t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return tool_owned(OG_OK, t);
    }
    if (!strcmp(b->name, "branch_merge")) {
        og_db_merge_opts mo = {.source = sarg(args, "source"), .target = sarg(args, "target"),
                               .expected_head = sarg(args, "if_commit"),
                               .delete_branch = json_is_true(json_object_get(args, "delete_branch"))};
        const char *how = sarg(args, "strategy");
        og_db_merge_strategy ms = {.all = !how || !strcmp(how, "fail") ? OG_MERGE_STRATEGY_FAIL
                                          : !strcmp(how, "ours")      ? OG_MERGE_STRATEGY_OURS
                                          : !strcmp(how, "theirs")    ? OG_MERGE_STRATEGY_THEIRS
                                                                      : (og_merge_strategy)-1};
        if ((int)ms.all < 0) return tool_text("invalid: `strategy` must be fail, ours or theirs", 1);
        st = json_is_true(json_object_get(args, "dry_run")) ? og_db_branch_merge_dry_run(&out, m->o.db, &mo, &ms)
                                                              : og_db_branch_merge_ex(&out, m->o.db, &mo, &ms);
        if (st != OG_OK) {
            json_t *r = tool_status(st);
            if (out) {
                /* the conflicts, for the model to read */
                json_array_append_new(json_object_get(r, "content"), json_pack("{ss ss}", "type", "text", "text", out));
            }
            og_free(out);
            return r;
        }
        return tool_owned(st, out);
    }
    if (!strcmp(b->name, "schema_apply")) {
        if (m->o.schema_apply_disabled)
            return tool_text("conflict: schema apply is disabled under cluster-backed serving: change the schema file and "
                             "run `omnigraph cluster apply`", 1);
        const char *src = sarg(args, "schema_source");
        og_receipt r;
        memset(&r, 0, sizeof r);
        og_db_schema_apply_opts so = {.allow_data_loss = json_is_true(json_object_get(args, "allow_data_loss")), .json = 1};
        st = og_db_schema_apply_ex(&r, &out, m->o.db, "schema.pg", src, strlen(src), &so);
        if (st != OG_OK) {
            og_free(out);
            return tool_status(st);
        }
        json_t *o = json_pack("{sb so}", "applied", r.published, "plan", json_loads(out ? out : "{}", 0, NULL));
        og_free(out);
        if (r.published) json_object_set_new(o, "graph_commit_id", json_string(r.commit));
        char *t = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return tool_owned(OG_OK, t);
    }
    return tool_text("internal: unhandled tool", 1);
}

/* The branch scopes of a builtin call, for the authorizer. */
static void scopes(const builtin *b, json_t *args, const char **branch, const char **target)
{
    *branch = *target = NULL;
    if (!strcmp(b->name, "branch_create")) {
        *branch = sarg(args, "from") ? sarg(args, "from") : "main";
        *target = sarg(args, "name");
    } else if (!strcmp(b->name, "branch_delete")) {
        *target = sarg(args, "name");
    } else if (!strcmp(b->name, "branch_merge")) {
        *branch = sarg(args, "source");
        *target = sarg(args, "target") ? sarg(args, "target") : "main";
    } else if (!strcmp(b->name, "schema_apply")) {
        *target = "main";
    } else if (!strcmp(b->name, "branch_diff")) {
        *branch = sarg(args, "branch") ? sarg(args, "branch") : sarg(args, "to");
    } else if (!strcmp(b->name, "proposal_create")) {
        *branch = sarg(args, "source"); /* proposing a branch needs change on it */
    } else if (b->action && (!strcmp(b->action, "read") || !strcmp(b->action, "change"))) {
        *branch = sarg(args, "branch") ? sarg(args, "branch") : (sarg(args, "snapshot") ? NULL : "main");
    }
}

/* Checks that `args` has the required string fields of a builtin; NULL or a message. */
static const char *missing_arg(const builtin *b, json_t *args, char *buf, size_t cap)
{
    json_t *schema = json_loads(b->schema, 0, NULL);
    json_t *req = json_object_get(schema, "required"), *props = json_object_get(schema, "properties");
    const char *bad = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(req, i, r) {
        json_t *v = json_object_get(args, json_string_value(r));
        if (!json_is_string(v) && !strcmp(json_string_value(r), "branch")) {
            snprintf(buf, cap, "%s: argument `branch` is required: write on a branch of your own (branch_create, "
                     "then %s with that branch), then have it merged", b->name, b->name);
            bad = buf;
            break;
        }
        if (!json_is_string(v)) {
            snprintf(buf, cap, "%s: argument `%s` (a string) is required", b->name, json_string_value(r));
            bad = buf;
            break;
        }
    }
    const char *k;
    json_t *v;
    if (!bad) json_object_foreach(args, k, v) {
        json_t *p = json_object_get(props, k);
        if (!p) {
            snprintf(buf, cap, "%s: unknown argument `%s`", b->name, k);
            bad = buf;
            break;
        }
        const char *t = json_string_value(json_object_get(p, "type"));
        int ok = !t || json_is_null(v) || (!strcmp(t, "string") && json_is_string(v)) ||
                 (!strcmp(t, "object") && json_is_object(v)) || (!strcmp(t, "boolean") && json_is_boolean(v)) ||
                 (!strcmp(t, "integer") && json_is_integer(v));
        if (!ok) {
            snprintf(buf, cap, "%s: argument `%s` must be %s %s", b->name, k, !strcmp(t, "object") || !strcmp(t, "integer") ? "an" : "a", t);
            bad = buf;
            break;
        }
    }
    json_decref(schema);
    return bad;
}

static json_t *call_stored_args(og_mcp *m, const char *actor, const og_stored_query *q, json_t *args, int via_run);

/* A stored query's call; a mutation naming no branch goes to the agent branch when the rule is set. */
static json_t *call_stored(og_mcp *m, const char *actor, const og_stored_query *q, json_t *args, int via_run)
{
    json_t *auto_args = q->mutation ? agent_args(m, actor, args) : NULL;
    if (!auto_args) return call_stored_args(m, actor, q, args, via_run);
    /* the branch is created only for a call the actor may make (invoke_query was decided) */
    json_t *res = agent_branch_ready(m, actor, sarg(auto_args, "branch"));
    if (!res) res = call_stored_args(m, actor, q, auto_args, via_run);
    json_decref(auto_args);
    return res;
}

static json_t *call_stored_args(og_mcp *m, const char *actor, const og_stored_query *q, json_t *args, int via_run)
{
    char why[512];
    const char *branch = sarg(args, "branch");
    og_mcp_verdict v = ask(m, actor, q->mutation ? "change" : "read", branch ? branch : sarg(args, "snapshot") ? NULL : "main",
                           NULL, q->name, 0, why, sizeof why); /* per-query read/change grants */
    if (v != OG_MCP_ALLOW) {
        char msg[700];
        snprintf(msg, sizeof msg, "forbidden: %s", why[0] ? why : "denied by policy");
        return tool_text(msg, 1);
    }
    json_t *p = json_object_get(args, "params");
    if (p && !json_is_object(p) && !json_is_null(p)) return tool_text("invalid: `params` must be an object", 1);
    { /* a parameter given beside `params` instead of inside it: say so, not "missing parameter".
       * The arguments a stored tool takes are those of its input schema (stored_tool); a snapshot
       * given to a mutation is left to og_stored_invoke, which says why it cannot be written. */
        json_t *tool = stored_tool(q);
        json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
        const char *k, *bad = NULL;
        json_t *av;
        json_object_foreach(args, k, av) {
            if (json_object_get(props, k) || !strcmp(k, "snapshot") || (via_run && !strcmp(k, "name"))) continue;
            bad = k;
            break;
        }
        if (bad) {
            og_buf names = OG_BUF_INIT;
            json_object_foreach(props, k, av) og_buf_printf(&names, "%s%s", names.len ? ", " : "", k);
            og_buf_append_byte(&names, 0);
            char msg[800];
            snprintf(msg, sizeof msg,
                     "invalid: `%s` is not an argument of tool %s; a stored query's parameters go inside `params`: "
                     "{\"params\": {\"%s\": ...}} (its arguments are %s)",
                     bad, q->tool_name, bad, names.data ? (const char *)names.data : "params");
            og_buf_free(&names);
            json_decref(tool);
            return tool_text(msg, 1);
        }
        json_decref(tool);
    }
    if (q->mutation && !branch) {
        snprintf(why, sizeof why, "invalid: %s: argument `branch` is required: write on a branch of your own "
                 "(branch_create), then have it merged", q->tool_name);
        return tool_text(why, 1);
    }
    og_mcp_page pg = {0};
    if (!q->mutation && og_mcp_page_args(m, args, &pg, why, sizeof why)) return tool_text(why, 1);
    if (q->mutation && !admitted(m)) return NULL; /* admission after both decisions */
    char *params = params_text(args);
    size_t total = 0;
    og_stored_invoke_opts io = {.params_json = params, .branch = branch, .snapshot = sarg(args, "snapshot"),
                                .expect_mutation = -1, .actor = actor, .expected_head = sarg(args, "if_commit"),
                                .row_offset = pg.offset, .row_limit = pg.max_rows, .total_rows = &total};
    char *out = NULL;
    call_begin(m, actor, q->tool_name, args, 1);
    logmsg(m, OG_MCP_LOG_DEBUG, "stored %s %s (%s)", q->mutation ? "mutation" : "query", q->name, q->file);
    if (q->mutation && m->o.write_lock) m->o.write_lock(m->o.write_lock_ctx, 1);
    const char *cmsg = q->mutation ? sarg(args, "message") : NULL; /* the commit's message, as the CLI's -m */
    og_status st = cmsg ? og_set_thread_commit_message(cmsg) : OG_OK;
    if (st == OG_OK) st = og_stored_invoke(&out, m->o.db, q, &io);
    if (cmsg) og_set_thread_commit_message(NULL);
    if (q->mutation && m->o.write_lock) m->o.write_lock(m->o.write_lock_ctx, 0);
    free(params);
    json_t *res = q->mutation ? tool_owned(st, out) : paged(st, out, "rows", total, &pg);
    call_end(m, res, 1);
    return res;
}

/* NULL = unknown tool (the caller answers with the protocol error). */
static json_t *tools_call(og_mcp *m, const char *actor, json_t *params, int *unknown)
{
    *unknown = 0;
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments");
    json_t *empty = json_object();
    if (!args || json_is_null(args)) args = empty;
    json_t *res = NULL;
    char why[512], buf[512];
    /* a write naming no branch goes to the caller's agent branch when the surface set the rule */
    json_t *auto_args = name && (!strcmp(name, "graph_mutate") || !strcmp(name, "graph_load")) ? agent_args(m, actor, args) : NULL;
    if (auto_args) args = auto_args;
    for (size_t i = 0; name && i < NBUILTINS && !res; i++) {
        const builtin *b = &builtins[i];
        if (strcmp(b->name, name)) continue;
        if (!json_is_object(args)) {
            res = tool_text("invalid: `arguments` must be an object", 1);
            break;
        }
        const char *bad = missing_arg(b, args, buf, sizeof buf);
        if (bad) {
            char msg[600];
            snprintf(msg, sizeof msg, "invalid: %s", bad);
            res = tool_text(msg, 1);
            break;
        }
        if (auto_args && (res = agent_branch_ready(m, actor, sarg(args, "branch")))) break;
        const char *br, *tg;
        scopes(b, args, &br, &tg);
        /* a proposal's tools are decided on its branches: show reads the source, approve merges
         * source into target, close needs change on the source or branch_merge on the target */
        char psrc[1024], ptgt[1024];
        int on_proposal = !strncmp(b->name, "proposal_", 9) && sarg(args, "id");
        if (on_proposal) {
            og_status pst = og_mcp_proposal_branches(m, sarg(args, "id"), psrc, ptgt, sizeof psrc);
            if (pst != OG_OK) {
                res = tool_status(pst);
                break;
            }
            br = psrc;
            tg = !strcmp(b->name, "proposal_approve") ? ptgt : NULL;
        }
        og_mcp_verdict v = ask(m, actor, b->action, br, tg, NULL, 0, why, sizeof why);
        if (v != OG_MCP_ALLOW && on_proposal && !strcmp(b->name, "proposal_close"))
            v = ask(m, actor, "branch_merge", psrc, ptgt, NULL, 0, why, sizeof why);
        if (v == OG_MCP_MASK) break;
        /* a fork or a merge copies its source: read on the source as well (docs/policy.md) */
        const char *source = !strcmp(b->name, "branch_create") ? (sarg(args, "from") ? sarg(args, "from") : "main")
                             : !strcmp(b->name, "branch_merge") ? sarg(args, "source")
                             : !strcmp(b->name, "graph_load")   ? sarg(args, "from")
                             : !strcmp(b->name, "proposal_approve") && on_proposal ? psrc
                                                                : NULL;
        if (v == OG_MCP_ALLOW && source) {
            og_mcp_verdict rv = ask(m, actor, "read", source, NULL, NULL, 0, why, sizeof why);
            if (rv != OG_MCP_ALLOW) v = OG_MCP_DENY;
        }
        if (v == OG_MCP_DENY) {
            char msg[700];
            snprintf(msg, sizeof msg, "forbidden: %s", why[0] ? why : "denied by policy");
            res = tool_text(msg, 1);
            break;
        }
        if (!b->read_only && !admitted(m)) break;
        int staged = strcmp(b->name, "graph_load") != 0; /* a load counts its records */
        call_begin(m, actor, b->name, args, staged);
        if (!b->read_only && m->o.write_lock) m->o.write_lock(m->o.write_lock_ctx, 1);
        /* a write's "message" labels its commit, as the CLI's -m */
        const char *cmsg = b->read_only || !strcmp(b->name, "branch_create") ? NULL : sarg(args, "message");
        /* (branch_create keeps its message with the branch, not on a commit) */
        if (cmsg && og_set_thread_commit_message(cmsg)) {
            char msg[600];
            snprintf(msg, sizeof msg, "invalid: message: %s", og_error_message());
            res = tool_text(msg, 1);
        } else {
            res = call_builtin(m, actor, b, args);
        }
        if (cmsg) og_set_thread_commit_message(NULL);
        if (!b->read_only && m->o.write_lock) m->o.write_lock(m->o.write_lock_ctx, 0);
        call_end(m, res, staged);
    }
    int builtin_name = 0;
    for (size_t i = 0; name && i < NBUILTINS; i++) builtin_name |= !strcmp(builtins[i].name, name);
    if (!res && name && !builtin_name) {
        int meta = exposed_count(m) >= META_THRESHOLD;
        const og_stored_query *q = NULL;
        json_t *qargs = args;
        int via_read = meta && !strcmp(name, "stored_query_run"), via_mut = meta && !strcmp(name, "stored_mutation_run");
        if (via_read || via_mut) {
            const char *qn = sarg(args, "name");
            q = qn ? og_stored_set_find(m->o.queries, qn) : NULL;
            if (q && !q->mcp_expose) q = NULL;
            if (!q) {
                snprintf(buf, sizeof buf, "not_found: stored query '%s' not found", qn ? qn : "");
                res = tool_text(buf, 1);
            } else if (q->mutation != via_mut) {
                snprintf(buf, sizeof buf, "invalid: '%s' is a stored %s: call %s", qn, q->mutation ? "mutation" : "read query",
                         q->mutation ? "stored_mutation_run" : "stored_query_run");
                res = tool_text(buf, 1);
                q = NULL;
            }
        } else if (meta && !strcmp(name, "stored_query_list")) {
            const char *filter = sarg(args, "filter");
            call_begin(m, actor, name, args, 1);
            json_t *arr = json_array();
            for (size_t i = 0; i < og_stored_set_count(m->o.queries); i++) {
                const og_stored_query *sq = og_stored_set_at(m->o.queries, i);
                if (!sq->mcp_expose) continue;
                if (ask(m, actor, "invoke_query", NULL, NULL, sq->name, 1, why, sizeof why) != OG_MCP_ALLOW) continue;
                if (filter && !strstr(sq->name, filter) && !(sq->description && strstr(sq->description, filter))) continue;
                char *d = query_description(sq);
                json_array_append_new(arr, json_pack("{ss ss sb so}", "name", sq->name, "description", d ? d : "", "mutation",
                                                     sq->mutation, "params_schema", og_stored_params_schema_json(sq)));
                free(d);
            }
            json_t *o = json_pack("{so}", "queries", arr);
            char *t = json_dumps(o, JSON_COMPACT);
            json_decref(o);
            res = tool_owned(OG_OK, t);
            call_end(m, res, 1);
        } else if (!meta) {
            q = og_stored_set_find_tool(m->o.queries, name);
        }
        if (q && !res) {
            og_mcp_verdict v = ask(m, actor, "invoke_query", NULL, NULL, q->name, 0, why, sizeof why);
            if (v == OG_MCP_ALLOW) res = call_stored(m, actor, q, qargs, meta); /* NULL only when throttled */
            /* a stored query the actor may not invoke is an unknown tool (anti-probing) */
        }
    }
    json_decref(empty);
    json_decref(auto_args);
    if (!res && !m->throttled) *unknown = 1;
    return res;
}

/* ---- resources ----------------------------------------------------------------------------- */

static json_t *resources_list(og_mcp *m, const char *actor)
{
    char why[256];
    json_t *arr = json_array();
    if (ask(m, actor, "read", "main", NULL, NULL, 1, why, sizeof why) == OG_MCP_ALLOW) {
        json_array_append_new(arr, json_pack("{ss ss ss ss}", "uri", "omnigraph://schema", "name", "schema", "description",
                                             "The graph's .pg schema source", "mimeType", "text/plain"));
        json_array_append_new(arr, json_pack("{ss ss ss ss}", "uri", "omnigraph://branches", "name", "branches", "description",
                                             "The graph's branches as JSON", "mimeType", "application/json"));
        json_array_append_new(arr, json_pack("{ss ss ss ss}", "uri", "omnigraph://language", "name", "language", "description",
                                             "The query language in brief, with examples written for this graph's schema",
                                             "mimeType", "text/markdown"));
    }
    return json_pack("{so}", "resources", arr);
}

/* omnigraph://commits/{commit} and omnigraph://branches/{branch}/diff (og_mcp_resource_templates). */
static json_t *template_read(og_mcp *m, const char *actor, const char *uri, int *code, char *msg, size_t cap)
{
    char why[256], name[256];
    const char *c = "omnigraph://commits/", *b = "omnigraph://branches/", *d = "/diff";
    size_t n = strlen(uri);
    int commit = !strncmp(uri, c, strlen(c)) && n > strlen(c);
    int diff = !strncmp(uri, b, strlen(b)) && n > strlen(b) + strlen(d) && !strcmp(uri + n - strlen(d), d);
    if (commit) snprintf(name, sizeof name, "%s", uri + strlen(c));
    else if (diff) snprintf(name, sizeof name, "%.*s", (int)(n - strlen(b) - strlen(d)), uri + strlen(b));
    if ((!commit && !diff) || ask(m, actor, "read", diff ? name : "main", NULL, NULL, 0, why, sizeof why) != OG_MCP_ALLOW) {
        *code = -32002;
        snprintf(msg, cap, "Resource not found: %s", uri);
        return NULL;
    }
    char *text = NULL;
    og_status st;
    if (commit) {
        st = og_db_commit_show(&text, m->o.db, name);
    } else {
        char base[32];
        st = og_db_merge_base(m->o.db, name, "main", base, sizeof base);
        og_changes_opts co = {.from = base, .to = name};
        if (st == OG_OK) st = og_db_changes(&text, m->o.db, &co);
    }
    if (st != OG_OK) {
        og_free(text);
        *code = st == OG_ERR_NOT_FOUND ? -32002 : -32603;
        snprintf(msg, cap, "%s: %s", og_status_name(st), og_error_message());
        return NULL;
    }
    json_t *doc = og_json_read(text, strlen(text)); /* a U64 above 2^63-1 stays a number */
    og_free(text);
    json_t *items = json_object_get(doc, "changes");
    while (json_array_size(items) > OG_MCP_DEFAULT_MAX_ROWS) json_array_remove(items, json_array_size(items) - 1);
    char *t = og_mcp_dump(doc);
    json_decref(doc);
    json_t *r = json_pack("{s[{ss ss ss}]}", "contents", "uri", uri, "mimeType", "application/json", "text", t ? t : "{}");
    og_free(t);
    return r;
}

/* omnigraph://nodes/{type}/{key}: one node of main by its key. */
static json_t *node_read(og_mcp *m, const char *actor, const char *uri, int *code, char *msg, size_t cap)
{
    char why[256], type[256];
    const char *rest = uri + strlen("omnigraph://nodes/"), *slash = strchr(rest, '/');
    if (!slash || slash == rest || !slash[1] || ask(m, actor, "read", "main", NULL, NULL, 0, why, sizeof why) != OG_MCP_ALLOW) {
        *code = -32002;
        snprintf(msg, cap, "Resource not found: %s", uri);
        return NULL;
    }
    snprintf(type, sizeof type, "%.*s", (int)(slash - rest), rest);
    char *text = NULL;
    og_status st = og_mcp_node_read(&text, m->o.db, type, slash + 1);
    if (st != OG_OK) {
        og_free(text);
        *code = st == OG_ERR_NOT_FOUND ? -32002 : st == OG_ERR_INVALID ? -32602 : -32603;
        snprintf(msg, cap, "%s: %s", st == OG_ERR_NOT_FOUND ? "Resource not found" : og_status_name(st), og_error_message());
        return NULL;
    }
    json_t *doc = json_loads(text, 0, NULL);
    og_free(text);
    json_t *row = json_array_get(json_object_get(doc, "rows"), 0); /* {"n": the node as an object} */
    char *t = og_mcp_dump(json_object_iter_value(json_object_iter(row)));
    json_decref(doc);
    json_t *r = json_pack("{s[{ss ss ss}]}", "contents", "uri", uri, "mimeType", "application/json", "text", t ? t : "{}");
    og_free(t);
    return r;
}

json_t *og_mcp_resources_read(og_mcp *m, const char *actor, const char *uri, int *code, char *msg, size_t cap)
{
    char why[256];
    *code = 0;
    if (uri && !strncmp(uri, "omnigraph://nodes/", 18)) return node_read(m, actor, uri, code, msg, cap);
    if (uri && (!strncmp(uri, "omnigraph://commits/", 20) || (!strncmp(uri, "omnigraph://branches/", 21))))
        return template_read(m, actor, uri, code, msg, cap);
    int schema = uri && !strcmp(uri, "omnigraph://schema"), branches = uri && !strcmp(uri, "omnigraph://branches");
    int language = uri && !strcmp(uri, "omnigraph://language");
    if ((!schema && !branches && !language) || ask(m, actor, "read", "main", NULL, NULL, 0, why, sizeof why) != OG_MCP_ALLOW) {
        *code = -32002;
        snprintf(msg, cap, "Resource not found: %s", uri ? uri : "");
        return NULL;
    }
    char *text = NULL;
    og_status st = schema     ? og_db_schema_source(&text, m->o.db, NULL)
                   : language ? og_mcp_language(&text, m->o.db)
                              : og_db_branch_list(&text, m->o.db);
    if (st != OG_OK) {
        *code = -32603;
        snprintf(msg, cap, "%s: %s", og_status_name(st), og_error_message());
        return NULL;
    }
    json_t *r = json_pack("{s[{ss ss ss}]}", "contents", "uri", uri, "mimeType",
                          schema ? "text/plain" : language ? "text/markdown" : "application/json", "text", text);
    og_free(text);
    return r;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static json_t *initialize(og_mcp *m, json_t *params)
{
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    const char *ver = og_mcp_protocol_versions[0];
    for (const char *const *v = og_mcp_protocol_versions; want && *v; v++)
        if (!strcmp(*v, want)) ver = *v;
    /* the lists never change while a handler serves (listChanged false); subscriptions where the
     * surface delivers their updates */
    json_t *r = json_pack("{ss s{s{sb} s{sb sb} s{sb} s{} s{}} s{ss ss}}", "protocolVersion", ver, "capabilities", "tools",
                          "listChanged", 0, "resources", "subscribe", m->subs != NULL, "listChanged", 0, "prompts", "listChanged", 0,
                          "logging", "completions", "serverInfo", "name", "omnigraph", "version", OG_VERSION_STRING);
    char ins[768];
    snprintf(ins, sizeof ins,
             "OmniGraph graph%s%s: a versioned, typed property graph. The schema is the omnigraph://schema resource; "
             "omnigraph://language teaches the query language with examples for this schema. "
             "Read with graph_query or the stored-query tools; results come one page at a time (offset, max_rows; "
             "next_offset says where the next page starts). Write on a branch of your own: branch_create, then "
             "graph_mutate or graph_load with that branch; branch_diff shows what the branch changed. Then propose it "
             "for review with proposal_create; a reviewer the graph's policy allows to merge (proposal_show, "
             "proposal_approve) lands it.",
             m->o.graph_id ? " " : "", m->o.graph_id ? m->o.graph_id : "");
    json_object_set_new(r, "instructions", json_string(ins));
    return r;
}

static json_t *handle_one(og_mcp *m, const char *actor, json_t *req)
{
    json_t *id = json_object_get(req, "id");
    const char *method = json_string_value(json_object_get(req, "method"));
    int has_id = id != NULL;
    if (!json_is_object(req) || !json_is_string(json_object_get(req, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(req, "jsonrpc")), "2.0"))
        return rpc_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600, "Invalid Request: jsonrpc must be \"2.0\"");
    if (has_id && !json_is_string(id) && !json_is_integer(id))
        return rpc_error(NULL, -32600, "Invalid Request: id must be a string or an integer");
    if (!method) {
        /* a response from the client (we never send requests): nothing to answer */
        if (json_object_get(req, "result") || json_object_get(req, "error")) return NULL;
        return rpc_error(id, -32600, "Invalid Request: method is required");
    }
    if (!has_id) return NULL; /* a notification */
    json_t *params = json_object_get(req, "params");
    if (params && !json_is_object(params)) return rpc_error(id, -32602, "Invalid params: params must be an object");
    /* pagination: every list fits one page and no nextCursor is ever sent, so any cursor a
     * client sends was not issued by us (MCP: an invalid cursor SHOULD be -32602) */
    json_t *cursor = json_object_get(params, "cursor");
    if (cursor && !json_is_null(cursor) &&
        (!strcmp(method, "tools/list") || !strcmp(method, "resources/list") || !strcmp(method, "resources/templates/list") ||
         !strcmp(method, "prompts/list")))
        return rpc_error(id, -32602, "Invalid params: invalid cursor (every list is a single page)");
    if (!strcmp(method, "initialize")) return rpc_result(id, initialize(m, params));
    if (!strcmp(method, "ping")) return rpc_result(id, json_object());
    if (!strcmp(method, "tools/list")) return rpc_result(id, tools_list(m, actor));
    if (!strcmp(method, "tools/call")) {
        if (!json_is_string(json_object_get(params, "name"))) return rpc_error(id, -32602, "Invalid params: name is required");
        int unknown = 0;
        /* progress is reported only for a call that asks for it (a string or integer token) */
        json_t *tok = json_object_get(json_object_get(params, "_meta"), "progressToken");
        m->token = json_is_string(tok) || json_is_integer(tok) ? tok : NULL;
        m->progress = 0;
        json_t *r = tools_call(m, actor, params, &unknown);
        m->token = NULL;
        m->tool = NULL;
        if (m->throttled) return rpc_error(id, OG_MCP_TOO_MANY_REQUESTS, m->throttle_msg);
        if (unknown) {
            char msg[512];
            snprintf(msg, sizeof msg, "Unknown tool: %s", json_string_value(json_object_get(params, "name")));
            return rpc_error(id, -32602, msg);
        }
        return rpc_result(id, r);
    }
    if (!strcmp(method, "resources/list")) return rpc_result(id, resources_list(m, actor));
    if (!strcmp(method, "resources/templates/list")) return rpc_result(id, og_mcp_resource_templates());
    if (!strcmp(method, "completion/complete")) {
        char why[256]; /* branch names and key values are the graph's data: offered to a reader of main */
        int may_read = ask(m, actor, "read", "main", NULL, NULL, 0, why, sizeof why) == OG_MCP_ALLOW;
        return rpc_result(id, og_mcp_complete(m->o.db, params, may_read));
    }
    if (!strcmp(method, "resources/read")) {
        int code;
        char msg[512];
        json_t *r = og_mcp_resources_read(m, actor, json_string_value(json_object_get(params, "uri")), &code, msg, sizeof msg);
        return r ? rpc_result(id, r) : rpc_error(id, code, msg);
    }
    /* subscriptions: only where the surface can deliver an update at any time (mcp_subscribe.c) */
    if (m->subs && (!strcmp(method, "resources/subscribe") || !strcmp(method, "resources/unsubscribe"))) {
        int code;
        char msg[512];
        json_t *r = og_mcp_subscribe(m, actor, json_string_value(json_object_get(params, "uri")),
                                     !strcmp(method, "resources/subscribe"), &code, msg, sizeof msg);
        return r ? rpc_result(id, r) : rpc_error(id, code, msg);
    }
    /* prompts: the agent workflows of this graph (mcp_discover.c) */
    if (!strcmp(method, "prompts/list")) return rpc_result(id, og_mcp_prompts_list());
    if (!strcmp(method, "prompts/get")) {
        const char *name = json_string_value(json_object_get(params, "name"));
        if (!name) return rpc_error(id, -32602, "Invalid params: name is required");
        char msg[300];
        json_t *p = og_mcp_prompt_get(name, json_object_get(params, "arguments"), msg, sizeof msg);
        return p ? rpc_result(id, p) : rpc_error(id, -32602, msg);
    }
    /* logging: the level holds for this og_mcp (a stdio process); an HTTP surface keeps it
     * per actor between its stateless requests (og_mcp_log_level_get, docs/mcp.md) */
    if (!strcmp(method, "logging/setLevel")) {
        const char *level = json_string_value(json_object_get(params, "level"));
        for (int l = OG_MCP_LOG_DEBUG; level && l <= OG_MCP_LOG_EMERGENCY; l++)
            if (!strcmp(level_names[l], level)) {
                m->level = (og_mcp_log_level)l;
                return rpc_result(id, json_object());
            }
        return rpc_error(id, -32602, "Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency");
    }
    char msg[300];
    snprintf(msg, sizeof msg, "Method not found: %.200s", method);
    return rpc_error(id, -32601, msg);
}

/* A JSON-RPC batch (MCP 2025-03-26 requires servers to receive them; 2025-06-18 dropped them
 * from the protocol, and a newer client never sends one): each member is handled on its own
 * and the responses come back as one array, notifications and client responses contributing
 * nothing (all of them: no body at all).  An empty batch is one Invalid Request, and
 * `initialize` must not be batched.  A member refused admission carries its own -32029 error;
 * the batch as a whole is not throttled.  At most OG_MCP_BATCH_MAX members: each gets a
 * query's whole time and memory budget, so an unbounded batch would let one request hold a
 * worker for any number of budgets. */
#define OG_MCP_BATCH_MAX 64
static json_t *handle_batch(og_mcp *m, const char *actor, json_t *batch)
{
    if (!json_array_size(batch)) return rpc_error(NULL, -32600, "Invalid Request: an empty batch");
    if (json_array_size(batch) > OG_MCP_BATCH_MAX) {
        char msg[128];
        snprintf(msg, sizeof msg, "Invalid Request: a batch of %zu messages (at most %d)", json_array_size(batch),
                 OG_MCP_BATCH_MAX);
        return rpc_error(NULL, -32600, msg);
    }
    json_t *out = json_array();
    size_t i;
    json_t *req;
    json_array_foreach(batch, i, req) {
        json_t *r;
        m->throttled = 0;
        const char *method = json_string_value(json_object_get(req, "method"));
        json_t *id = json_object_get(req, "id");
        if (!json_is_object(req))
            r = rpc_error(NULL, -32600, "Invalid Request: a message must be a JSON object");
        else if (method && !strcmp(method, "initialize"))
            r = rpc_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
                          "Invalid Request: initialize must not be part of a JSON-RPC batch");
        else
            r = handle_one(m, actor, req);
        if (r) json_array_append_new(out, r);
    }
    m->throttled = 0;
    if (!json_array_size(out)) {
        json_decref(out);
        return NULL;
    }
    return out;
}

char *og_mcp_sse_event(const char *json)
{
    size_t n = strlen(json) + 32;
    char *s = malloc(n);
    if (s) snprintf(s, n, "event: message\ndata: %s\n\n", json);
    return s;
}

og_status og_mcp_handle(og_mcp *m, const char *actor, const char *msg, size_t len, char **out)
{
    *out = NULL;
    m->throttled = 0;
    m->notified = 0;
    json_error_t je;
    json_t *req = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
    json_t *resp;
    if (!req) {
        char e[300];
        snprintf(e, sizeof e, "Parse error: %s", je.text);
        resp = rpc_error(NULL, -32700, e);
    } else if (json_is_array(req)) {
        resp = handle_batch(m, actor, req);
    } else if (!json_is_object(req)) {
        resp = rpc_error(NULL, -32600, "Invalid Request: a message must be a JSON object");
    } else {
        resp = handle_one(m, actor, req);
    }
    json_decref(req);
    if (!resp) return OG_OK;
    *out = og_mcp_dump(resp); /* shortest reals: jansson would print 0.1 as 0.10000000000000001 */
    json_decref(resp);
    return *out ? OG_OK : OG_ERR_NOMEM;
}
