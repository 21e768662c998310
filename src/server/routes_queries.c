/*
 * routes_queries.c — the catalog lane of omnigraph-server: stored queries (GET
 * /graphs/{id}/queries, POST /graphs/{id}/queries/{name}[/if-graph-commit]) and the MCP
 * endpoint (POST /graphs/{id}/mcp, stateless Streamable HTTP over src/mcp/).
 *
 * Why here and not in routes.c: both lanes are decided twice — invoke_query (a deny is
 * masked as an unknown name, §4 anti-probing) and then read or change on the branch — and
 * both run the same bodies as the ad-hoc lane (og_run_read / og_run_mutation), so results
 * and errors are exactly the ad-hoc lane's.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster/stored.h"
#include "mcp/mcp.h"
#include "server/server_int.h"

/* ---- GET /graphs/{id}/queries ------------------------------------------------------------ */

/* Under a bundle with per-query rules (`queries:`, docs/policy.md), may the caller invoke
 * `name`?  Decided quietly (no audit line per entry); 1 without such rules (the reference's
 * list: everything, for `read`). */
static int may_invoke(og_req *r, const char *name)
{
    const og_authz *az = r->s->o.policy;
    if (r->s->mode != OG_AUTH_POLICY || !az || !az->query_rules || !az->query_rules(az->ctx, r->g->id)) return 1;
    og_authz_request q = {r->actor, OG_ACTION_INVOKE_QUERY, r->g->id, NULL, NULL, name, NULL, NULL};
    og_authz_decision d;
    return og_authz_decide(r->s->mode, az, &q, &d) == OG_OK && d.allowed;
}

/* An actor granted stored queries only (per-query read rules) may not `read`, yet must be able
 * to see what it can call: under per-query rules the list shows only invocable queries, so
 * one of them is enough to list. */
static int may_invoke_some(og_req *r)
{
    const og_authz *az = r->s->o.policy;
    if (r->s->mode != OG_AUTH_POLICY || !az || !az->query_rules || !az->query_rules(az->ctx, r->g->id)) return 0;
    for (size_t i = 0; r->g->queries && i < og_stored_set_count(r->g->queries); i++)
        if (may_invoke(r, og_stored_set_at(r->g->queries, i)->name)) return 1;
    return 0;
}

struct MHD_Response *og_h_queries_list(og_req *r)
{
    struct MHD_Response *deny = may_invoke_some(r) ? NULL : og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    json_t *list = NULL;
    if (r->g->queries) {
        char *text = NULL;
        og_status st = og_stored_set_list_json(&text, r->g->queries);
        if (st) return og_resp_status(r, st);
        list = json_loads(text, 0, NULL);
        og_free(text);
    }
    if (!list) list = json_pack("{s:[]}", "queries");
    /* each entry also carries its parameters' JSON Schema (an OmniGraph-C addition) */
    json_t *arr = json_object_get(list, "queries"), *shown = json_array();
    size_t i;
    json_t *q;
    json_array_foreach(arr, i, q)
    {
        const og_stored_query *sq = og_stored_set_at(r->g->queries, i);
        if (sq && !may_invoke(r, sq->name)) continue; /* a query it may not invoke does not exist for it */
        json_t *schema = sq ? og_stored_params_schema_json(sq) : NULL;
        if (schema) json_object_set_new(q, "params_schema", schema);
        json_array_append(shown, q);
    }
    json_object_set_new(list, "queries", shown);
    return og_resp_json(r, 200, list);
}

/* ---- POST /graphs/{id}/queries/{name} ------------------------------------------------------ */

static struct MHD_Response *invoke(og_req *r, int conditional)
{
    struct MHD_Response *resp = NULL;
    const char *cas = og_req_cas(r, conditional, &resp);
    if (resp) return resp;
    /* the body is optional: {params?, branch?, snapshot?, expect_mutation?, max_rows?, offset?}
     * (a read's page: og_run_read reads those two) */
    const char *key;
    json_t *v;
    int paged = 0;
    json_object_foreach(r->json, key, v)
    {
        int page_key = !strcmp(key, "max_rows") || !strcmp(key, "offset");
        paged |= page_key && !json_is_null(v);
        if (strcmp(key, "params") && strcmp(key, "branch") && strcmp(key, "snapshot") && strcmp(key, "expect_mutation") &&
            !page_key)
            return og_bad(r, "unknown field '%s'", key);
    }
    int wrong = 0;
    const char *branch = og_req_str(r, "branch", &wrong);
    if (wrong) return og_bad(r, "field '%s' must be a string", "branch");
    const char *snapshot = og_req_str(r, "snapshot", &wrong);
    if (wrong) return og_bad(r, "field '%s' must be a string", "snapshot");
    json_t *em = json_object_get(r->json, "expect_mutation");
    int expect = -1;
    if (em && !json_is_null(em)) {
        if (!json_is_boolean(em)) return og_bad(r, "field '%s' must be a boolean", "expect_mutation");
        expect = json_is_true(em);
    }
    json_t *pj = json_object_get(r->json, "params");
    if (pj && !json_is_null(pj) && !json_is_object(pj)) return og_bad(r, "field '%s' must be a JSON object", "params");
    if (branch && snapshot) return og_bad(r, "%s", "'branch' and 'snapshot' are mutually exclusive");

    /* decided once for the graph: a deny reads exactly like an unknown name */
    char missing[256];
    snprintf(missing, sizeof missing, "stored query '%.100s' not found", r->name);
    r->masked_msg = missing;
    r->query = r->name; /* per-query rules decide on the name, known or not */
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_INVOKE_QUERY, NULL, NULL);
    if (deny) return deny;
    const og_stored_query *q = r->g->queries ? og_stored_set_find(r->g->queries, r->name) : NULL;
    if (!q) return og_resp_error(r, 404, "not_found", missing, NULL, NULL);

    if (expect >= 0 && expect != q->mutation) {
        char msg[300];
        snprintf(msg, sizeof msg, "stored query '%.100s' is a %s, but expect_mutation is %s", q->name,
                 q->mutation ? "mutation" : "read", expect ? "true" : "false");
        return og_resp_error(r, 400, "bad_request", msg, NULL, NULL);
    }
    if (conditional && !q->mutation) return og_bad(r, "stored query '%s' is a read: only mutations take a condition", q->name);
    if (q->mutation && snapshot) return og_bad(r, "stored query '%s' is a mutation: a snapshot cannot be written", q->name);
    if (q->mutation && paged) return og_bad(r, "stored query '%s' is a mutation: max_rows and offset page a read's rows", q->name);

    /* then the body's own decision, as the ad-hoc lane */
    if (q->mutation) {
        deny = og_req_authorize(r, OG_ACTION_CHANGE, branch ? branch : "main", NULL);
    } else {
        deny = og_req_authorize(r, OG_ACTION_READ, snapshot ? branch : (branch ? branch : "main"), NULL);
    }
    if (deny) return deny;
    char *params = pj && !json_is_null(pj) ? og_json_text(pj, JSON_COMPACT) : NULL; /* a wide U64 stays a number */
    og_status st = og_stored_check_params(q, params);
    if (st) {
        free(params);
        return og_resp_status(r, st);
    }
    struct MHD_Response *out = q->mutation ? og_run_mutation(r, q->source, q->name, params, branch ? branch : "main", cas)
                                           : og_run_read(r, q->source, q->name, params, branch, snapshot);
    free(params);
    return out;
}

struct MHD_Response *og_h_query_invoke(og_req *r) { return invoke(r, 0); }
struct MHD_Response *og_h_query_invoke_if(og_req *r) { return invoke(r, 1); }

/* ---- POST /graphs/{id}/mcp ---------------------------------------------------------------- */

/* A branch name no bundle protects (the decision compares names only). */
#define UNPROTECTED_PROBE "mcp list probe: unprotected"

static int action_of(const char *name, og_action *out)
{
    for (int a = 0; a < OG_ACTION_NONE; a++)
        if (!strcmp(og_action_name((og_action)a), name)) {
            *out = (og_action)a;
            return 1;
        }
    return 0;
}

/* A listing probe: a branch name and who created it. */
typedef struct probe {
    const char *name, *creator;
} probe;

static int quiet_allowed(og_req *r, og_action a, const probe *b, const probe *t, const char *query, char *why,
                         size_t cap)
{
    og_authz_request q = {r->actor, a, r->g->id, b ? b->name : NULL, t ? t->name : NULL, query,
                          b ? b->creator : NULL, t ? t->creator : NULL};
    og_authz_decision d;
    if (og_authz_decide(r->s->mode, r->s->o.policy, &q, &d)) {
        snprintf(why, cap, "policy evaluation failed");
        return 0;
    }
    if (!d.allowed) snprintf(why, cap, "%s", d.message);
    return d.allowed;
}

/* The MCP handler's authorizer: the server's own decision for the bearer token's actor. */
static og_mcp_verdict mcp_authorize(void *ctx, const char *actor, const char *action, const char *branch,
                                    const char *target, const char *query, int listing, char *why, size_t cap)
{
    (void)actor; /* always the request's: the token's actor */
    og_req *r = ctx;
    og_action a;
    if (!action_of(action, &a)) {
        snprintf(why, cap, "unknown action '%s'", action);
        return OG_MCP_DENY;
    }
    og_mcp_verdict no = a == OG_ACTION_INVOKE_QUERY ? OG_MCP_MASK : OG_MCP_DENY;
    if (!listing || (branch && target)) {
        og_authz_decision d;
        r->query = query; /* the stored query of an invoke_query or of its read/change (per-query rules), audited */
        og_status st = og_req_decide(r, a, branch, target, &d);
        r->query = NULL;
        if (st) {
            snprintf(why, cap, "policy evaluation failed");
            return OG_MCP_DENY;
        }
        if (!d.allowed) {
            snprintf(why, cap, "%s", d.message);
            return d.mask_as_not_found ? OG_MCP_MASK : no;
        }
        return OG_MCP_ALLOW;
    }
    /* listing: allowed on some branch?  Scopes tell protected from unprotected names, and
     * branches the actor created or named in its namespace from others', so one protected
     * name of the graph's bundle (`main` when it has none), one unprotected name created by
     * someone else and one in the actor's namespace created by the actor cover every way a
     * rule can match. */
    const og_authz *az = r->s->o.policy;
    const char *prot = az && az->protected_branch ? az->protected_branch(az->ctx, r->g->id, 0) : NULL;
    char own[OG_ACTOR_NAME_MAX + 32];
    snprintf(own, sizeof own, "%s/mcp list probe", r->actor ? r->actor : "");
    const probe probes[] = {{prot ? prot : "main", NULL}, {UNPROTECTED_PROBE, NULL}, {own, r->actor}};
    int two = a == OG_ACTION_BRANCH_CREATE || a == OG_ACTION_BRANCH_MERGE;
    int scoped_b = a == OG_ACTION_READ || a == OG_ACTION_EXPORT || a == OG_ACTION_CHANGE || two;
    int scoped_t = a == OG_ACTION_SCHEMA_APPLY || a == OG_ACTION_BRANCH_DELETE || two;
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 3; k++) {
            probe gb = {branch, NULL}, gt = {target, NULL};
            const probe *b = branch ? &gb : scoped_b ? &probes[i] : NULL;
            const probe *t = target ? &gt : scoped_t ? &probes[k] : NULL;
            if (quiet_allowed(r, a, b, t, query, why, cap)) return OG_MCP_ALLOW;
        }
    return no;
}

/* MCP writes take the graph's in-process write lock, like every other write route; the
 * hook names no branch, so they take the whole graph (write_locks.c).  One tool call holds
 * it at a time: the request's hold lives in the request. */
static void mcp_write_lock(void *ctx, int lock)
{
    og_req *r = ctx;
    if (lock)
        og_write_lock(r->g->locks, NULL, &r->write_hold);
    else
        og_write_unlock(&r->write_hold);
}

/* MCP writes share the actor's concurrent-write budget with the write routes (§2.7): the
 * slot is taken after the call's authorization and released when the request ends. */
static int mcp_admit(void *ctx, char *why, size_t cap)
{
    og_req *r = ctx;
    if (og_req_take_slot(r)) return 0;
    snprintf(why, cap, "too many concurrent writes for actor '%s' (limit %u); retry later",
             r->actor ? r->actor : "anonymous", r->s->o.per_actor_inflight);
    return 1;
}

/* A transport answer with a JSON-RPC error body (no id: it concerns the request, not a
 * message). */
static struct MHD_Response *mcp_transport_error(og_req *r, unsigned status, int code, const char *msg)
{
    json_t *j = json_pack("{ss sn s{si ss}}", "jsonrpc", "2.0", "id", "error", "code", code, "message", msg);
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    struct MHD_Response *resp = t ? MHD_create_response_from_buffer(strlen(t), t, MHD_RESPMEM_MUST_FREE) : NULL;
    if (!resp) {
        free(t);
        return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    r->status = status;
    return resp;
}

/* The answer to an `initialize` POST opens a session (mcp_session.c): its id, or "" when the
 * answer is not a successful initialize result or no session could be issued. */
static void mcp_open_session(og_req *r, const char *out, char *id)
{
    id[0] = 0;
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    const char *ver = json_string_value(json_object_get(json_object_get(j, "result"), "protocolVersion"));
    if (ver && og_mcp_session_new(r->s, r->g->id, r->actor, ver, id) != 0) id[0] = 0;
    json_decref(j);
}

/* ---- cancellation: notifications/cancelled stops a running tools/call (docs/mcp.md) ---- */

static int same_actor(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* The request's tools/call enters the cancellable set; its thread watches r->mcp_run.cancel. */
static void mcp_running_begin(og_req *r, json_t *id)
{
    og_mcp_running *e = &r->mcp_run;
    e->id = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!e->id) return; /* out of memory: the call runs, not cancellable */
    e->graph = r->g->id;
    e->actor = r->actor;
    e->session = r->mcp_session;
    e->cancel = 0;
    pthread_mutex_lock(&r->s->mu);
    e->next = r->s->mcp_running;
    r->s->mcp_running = e;
    pthread_mutex_unlock(&r->s->mu);
}

void og_mcp_running_end(og_req *r)
{
    og_mcp_running *e = &r->mcp_run;
    og_set_thread_cancel(NULL);
    if (!e->id) return;
    pthread_mutex_lock(&r->s->mu);
    for (og_mcp_running **p = &r->s->mcp_running; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    pthread_mutex_unlock(&r->s->mu);
    free(e->id);
    e->id = NULL;
}

/* notifications/cancelled from this actor: stops its running call with that request id on this
 * graph, in the same session (or both sessionless).  Another actor's call of the same id is not
 * touched; an id that is not running (finished, never sent) is ignored, as MCP allows. */
static void mcp_cancel(og_req *r, json_t *request_id)
{
    char *id = json_is_string(request_id) || json_is_integer(request_id)
                   ? json_dumps(request_id, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (!id) return;
    pthread_mutex_lock(&r->s->mu);
    for (og_mcp_running *e = r->s->mcp_running; e; e = e->next)
        if (!strcmp(e->id, id) && !strcmp(e->graph, r->g->id) && same_actor(e->actor, r->actor) &&
            !strcmp(e->session, r->mcp_session))
            e->cancel = 1;
    pthread_mutex_unlock(&r->s->mu);
    free(id);
}

struct MHD_Response *og_h_mcp(og_req *r)
{
    const char *sid = og_req_header(r, "Mcp-Session-Id");
    if (sid && !*sid) sid = NULL;
    /* DELETE ends a session (MCP Streamable HTTP "Session Management") */
    if (!strcmp(r->method, "DELETE")) {
        snprintf(r->mcp, sizeof r->mcp, "end session");
        if (!sid) return mcp_transport_error(r, 400, -32600, "Bad Request: DELETE ends a session: send its Mcp-Session-Id");
        if (!og_mcp_session_end(r->s, sid, r->g->id, r->actor))
            return mcp_transport_error(r, 404, -32001, "Session not found: start a new one with initialize");
        struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        if (resp) r->status = 200;
        return resp;
    }
    /* audit: which method (and tool / resource) this message was */
    json_t *msg = json_loadb(r->body ? r->body : "", r->body_len, 0, NULL);
    const char *method = json_string_value(json_object_get(msg, "method"));
    int init = method && !strcmp(method, "initialize"); /* not within a batch: refused there */
    json_t *params = json_object_get(msg, "params");
    const char *what = json_string_value(json_object_get(params, "name"));
    if (!what) what = json_string_value(json_object_get(params, "uri"));
    if (method) snprintf(r->mcp, sizeof r->mcp, "%.60s%s%.90s", method, what ? " " : "", what ? what : "");
    else if (json_is_array(msg)) snprintf(r->mcp, sizeof r->mcp, "batch of %zu", json_array_size(msg));
    /* a request in a session: the session must be this actor's on this graph, and alive; its
     * log level applies.  initialize always opens a new session (an id sent with it is not
     * consulted).  Without a session: the level the actor set on the graph. */
    og_mcp_log_level level;
    r->mcp_session[0] = 0;
    if (sid && !init) {
        if (!og_mcp_session_get(r->s, sid, r->g->id, r->actor, &level)) {
            json_decref(msg);
            return mcp_transport_error(r, 404, -32001, "Session not found: start a new one with initialize");
        }
        snprintf(r->mcp_session, sizeof r->mcp_session, "%s", sid);
    } else {
        level = init ? OG_MCP_LOG_OFF : og_mcp_level_get(r->s, r->g->id, r->actor);
    }
    /* a tool call can be cancelled while it runs; a cancellation stops the call it names */
    json_t *rid = json_object_get(msg, "id");
    if (method && !strcmp(method, "tools/call") && (json_is_string(rid) || json_is_integer(rid)))
        mcp_running_begin(r, rid);
    else if (method && !strcmp(method, "notifications/cancelled"))
        mcp_cancel(r, json_object_get(params, "requestId"));
    json_decref(msg);
    og_mcp_opts mo = {.db = r->g->db,
                      .queries = r->g->queries,
                      .graph_id = r->g->id,
                      .schema_apply_disabled = r->s->o.cluster,
                      .authorize = mcp_authorize,
                      .authorize_ctx = r,
                      .write_lock = mcp_write_lock,
                      .write_lock_ctx = r,
                      .admit = mcp_admit,
                      .admit_ctx = r,
                      .log_level = level,
                      .agent_branch = r->s->o.mcp_agent_branch};
    og_mcp_http_request hr = {.method = r->method,
                              .content_type = og_req_header(r, "Content-Type"),
                              .accept = og_req_header(r, "Accept"),
                              .protocol_version = og_req_header(r, "MCP-Protocol-Version"),
                              .actor = r->actor,
                              .body = r->body ? r->body : "",
                              .body_len = r->body_len};
    unsigned status = 500;
    char *out = NULL;
    og_status st = OG_OK;
    int sse = 0;
    /* a call that may send notifications, to a client that takes a stream: run it on a thread
     * of its own and stream them as they happen (mcp_stream.c); anything else inline */
    struct MHD_Response *live = NULL;
    int may_notify = mo.log_level != OG_MCP_LOG_OFF || (r->body && memmem(r->body, r->body_len, "progressToken", 13));
    if (!(may_notify && og_mcp_accepts_sse(hr.accept) && og_mcp_live(r, &mo, &hr, &live, &status, &out, &st))) {
        og_mcp *m = NULL;
        if (og_mcp_new(&m, &mo)) {
            og_mcp_running_end(r);
            return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
        }
        og_set_thread_cancel(r->mcp_run.id ? &r->mcp_run.cancel : NULL);
        st = og_mcp_http(m, &hr, &status, &out);
        og_mcp_running_end(r);
        sse = og_mcp_http_sse(m); /* buffered: the whole stream at once */
        if (st == OG_OK && og_mcp_log_level_get(m) != mo.log_level) og_mcp_level_save(r, og_mcp_log_level_get(m));
        og_mcp_free(m);
    }
    if (live) return live;
    if (st) {
        og_free(out);
        return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    }
    size_t n = out ? strlen(out) : 0;
    char *copy = malloc(n + 1);
    if (!copy) {
        og_free(out);
        return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    }
    memcpy(copy, out ? out : "", n + 1);
    og_free(out);
    struct MHD_Response *resp = MHD_create_response_from_buffer(n, copy, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(copy);
        return NULL;
    }
    if (n) MHD_add_response_header(resp, "Content-Type", sse ? "text/event-stream" : "application/json");
    if (init && status == 200) {
        char id[OG_MCP_SESSION_ID_LEN + 1];
        mcp_open_session(r, sse ? NULL : copy, id);
        if (id[0]) MHD_add_response_header(resp, "Mcp-Session-Id", id);
    }
    if (status == 405) MHD_add_response_header(resp, "Allow", "POST, DELETE");
    if (status == 429) MHD_add_response_header(resp, "Retry-After", "60");
    r->status = status;
    return resp;
}
