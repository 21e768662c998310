/*
 * http.c — the HTTP machinery of omnigraph-server on libmicrohttpd: the daemon (a few
 * connection threads, keep-alive, idle and head deadlines (conn.c), connection caps in all
 * and per address), the request life cycle (framing and Host/Origin (guard.c) → route →
 * bearer auth → graph → content type → body within its limit → a worker of the pool
 * (pool.c), 503 when it is full → handler),
 * the JSON error body (docs/server.md "Errors"), graceful stop, and the audit line
 * written when each request completes.  Handlers live in routes.c.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cluster/stored.h"
#include "server/guard.h"
#include "server/pool.h"
#include "server/server_int.h"
#include "util/error.h"

uint64_t og_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- server life cycle ------------------------------------------------------------------ */

/* The server-wide memory bound of read queries, and what one query is admitted as.  The
 * workers bound how many queries run at once, so with the per-query budget defaulting to
 * bound / workers (at most the engine's 4 GiB), the defaults never exceed the bound and
 * nothing waits; an explicit larger budget is admitted against the bound instead. */
static int memory_bound(og_server *s)
{
    int64_t total = s->o.max_memory;
    if (!total) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        total = pages > 0 && page > 0 ? (int64_t)pages * page / 2 : 0;
    }
    if (total < 0) total = 0; /* unbounded */
    s->mem_total = total;
    int64_t q = s->o.budget.memory_bytes;
    const char *env = getenv("OG_QUERY_MAX_MEMORY");
    if (!q && env && *env) q = strtoll(env, NULL, 10);
    if (!q && total) {
        q = total / s->o.threads;
        if (q > OG_QUERY_DEFAULT_MEMORY_BYTES) q = OG_QUERY_DEFAULT_MEMORY_BYTES;
        s->o.budget.memory_bytes = q; /* every served graph gets it (og_server_add_graph) */
    }
    if (!q) q = OG_QUERY_DEFAULT_MEMORY_BYTES;
    s->query_mem = total && q > 0 ? q : 0;
    if (s->query_mem > total && total) {
        fprintf(stderr, "omnigraph-server: the query memory budget (%lld bytes) is larger than --max-memory (%lld "
                        "bytes): no query could run; lower --query-max-memory or raise --max-memory\n",
                (long long)q, (long long)total);
        return -1;
    }
    return 0;
}

og_status og_server_new(og_server **out, const og_server_opts *opts)
{
    *out = NULL;
    og_server *s = calloc(1, sizeof *s);
    if (!s) {
        og_tokenset_free(opts->tokens); /* taken over in every case */
        return OG_ERR_NOMEM;
    }
    s->o = *opts;
    s->tokens = opts->tokens;
    s->o.tokens = NULL;
    if (!s->o.threads) s->o.threads = 8;
    if (!s->o.timeout_s) s->o.timeout_s = 30;
    if (!s->o.max_connections) s->o.max_connections = 1024;
    if (!s->o.max_per_address) s->o.max_per_address = 512;
    if (!s->o.header_timeout_s) s->o.header_timeout_s = 10;
    if (!s->o.max_queued) s->o.max_queued = 512;
    if (!s->o.body_limit) s->o.body_limit = OG_SERVER_BODY_LIMIT;
    if (!s->o.load_body_limit) s->o.load_body_limit = OG_SERVER_LOAD_BODY_LIMIT;
    if (!s->o.export_slots) s->o.export_slots = 8;
    if (!s->o.per_actor_inflight) {
        const char *v = getenv("OMNIGRAPH_PER_ACTOR_INFLIGHT_MAX");
        unsigned long n = v && *v ? strtoul(v, NULL, 10) : 0;
        s->o.per_actor_inflight = n ? (unsigned)n : 16;
    }
    s->log = opts->log ? opts->log : stderr;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    pthread_mutex_init(&s->log_mu, NULL);
    if (s->o.graph_dir) {
        pthread_mutex_init(&s->graphs_mu, NULL);
        s->graphs_dynamic = 1;
    }
    og_status st = og_auth_classify(og_tokenset_count(s->tokens), opts->policy != NULL, opts->unauthenticated, &s->mode);
    if (st) {
        og_server_free(s);
        return st;
    }
    const char *bind = opts->bind ? opts->bind : "127.0.0.1:8080";
    const char *colon = strrchr(bind, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || colon == bind || (size_t)(colon - bind) >= sizeof s->bind_host || port < 0 || port > 65535 ||
        *end || !colon[1]) {
        fprintf(stderr, "omnigraph-server: --bind '%s': expected HOST:PORT\n", bind);
        og_server_free(s);
        return OG_ERR_INVALID;
    }
    memcpy(s->bind_host, bind, (size_t)(colon - bind));
    s->bind_port = (unsigned)port;
    for (size_t i = 0; i < opts->nallowed_hosts; i++) {
        char h[256];
        int p;
        const char *e = opts->allowed_hosts[i];
        if (!og_guard_authority(e, strlen(e), h, sizeof h, &p)) {
            fprintf(stderr, "omnigraph-server: --allowed-host '%s': expected a host name or address, optionally "
                            "with :PORT\n", e);
            og_server_free(s);
            return OG_ERR_INVALID;
        }
    }
    if (memory_bound(s)) {
        og_server_free(s);
        return OG_ERR_INVALID;
    }
    *out = s;
    return OG_OK;
}

static int reserved_id(const char *id)
{
    return !strcmp(id, "policies") || !strcmp(id, "healthz") || !strcmp(id, "openapi") || !strcmp(id, "graphs");
}

int og_graph_id_valid(const char *id)
{
    size_t n = strlen(id);
    if (!n || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)id[i]) && id[i] != '-') return 0;
    return !reserved_id(id);
}

og_status og_server_add_graph(og_server *s, const char *id, const char *uri)
{
    if (!og_graph_id_valid(id)) {
        fprintf(stderr, "omnigraph-server: graph id '%s' must match ^[a-zA-Z0-9-]{1,64}$ and not be a reserved word\n",
                id);
        return OG_ERR_INVALID;
    }
    for (size_t i = 0; i < s->ngraphs; i++)
        if (!strcmp(s->graphs[i].id, id)) {
            fprintf(stderr, "omnigraph-server: graph id '%s' given twice\n", id);
            return OG_ERR_ALREADY_EXISTS;
        }
    og_db *db;
    og_status st = og_db_open(&db, uri, NULL);
    if (st) {
        fprintf(stderr, "omnigraph-server: graph '%s' (%s): %s: %s\n", id, uri, og_status_name(st), og_error_message());
        return st;
    }
    if (s->o.budget.time_ms || s->o.budget.memory_bytes) og_db_set_budget(db, &s->o.budget);
    /* a served graph lives for the process: keep branch heads between requests (validated by
     * a change watch on local graphs, so another process's write is still seen at once) */
    og_db_keep_heads(db, 1);
    og_served_graph *v = realloc(s->graphs, (s->ngraphs + 1) * sizeof *v);
    char *u = strdup(uri);
    og_write_locks *mu = og_write_locks_new();
    if (!v || !u || !mu) {
        free(u);
        og_write_locks_free(mu);
        if (v) s->graphs = v;
        og_db_close(db);
        return OG_ERR_NOMEM;
    }
    s->graphs = v;
    og_served_graph *g = &s->graphs[s->ngraphs];
    /* keep the list sorted by id: /graphs lists it in order */
    size_t at = s->ngraphs;
    while (at && strcmp(s->graphs[at - 1].id, id) > 0) at--;
    memmove(&s->graphs[at + 1], &s->graphs[at], (s->ngraphs - at) * sizeof *g);
    g = &s->graphs[at];
    memset(g, 0, sizeof *g);
    snprintf(g->id, sizeof g->id, "%s", id);
    g->uri = u;
    g->db = db;
    g->locks = mu;
    s->ngraphs++;
    return OG_OK;
}

static og_served_graph *graph_by_id(og_server *s, const char *id)
{
    for (size_t i = 0; i < s->ngraphs; i++)
        if (!strcmp(s->graphs[i].id, id)) return &s->graphs[i];
    return NULL;
}

og_db *og_server_graph_db(og_server *s, const char *id)
{
    og_served_graph *g = graph_by_id(s, id);
    return g ? g->db : NULL;
}

og_status og_server_set_queries(og_server *s, const char *id, og_stored_set *set)
{
    og_served_graph *g = graph_by_id(s, id);
    if (!g) {
        og_stored_set_free(set);
        return OG_ERR_NOT_FOUND;
    }
    og_stored_set_free(g->queries);
    g->queries = set;
    return OG_OK;
}

void og_served_graph_release(og_served_graph *g)
{
    og_db_close(g->db);
    free(g->uri);
    og_write_locks_free(g->locks);
    og_stored_set_free(g->queries);
}

void og_server_remove_graph(og_server *s, const char *id)
{
    og_served_graph *g = graph_by_id(s, id);
    if (!g) return;
    og_served_graph_release(g);
    size_t at = (size_t)(g - s->graphs);
    memmove(g, g + 1, (s->ngraphs - at - 1) * sizeof *g);
    s->ngraphs--;
}

static void spare_drop(void);

void og_server_free(og_server *s)
{
    if (!s) return;
    og_pool_stop(s->pool); /* its requests resume their connections: before the daemon stops */
    if (s->d) MHD_stop_daemon(s->d);
    og_pool_free(s->pool); /* no connection thread is left to reach it */
    s->pool = NULL;
    og_conn_stop(s);
    spare_drop();
    og_audit_stop(s);
    for (size_t i = 0; i < s->ngraphs; i++)
        if (s->graphs[i].db) og_served_graph_release(&s->graphs[i]);
    if (s->graphs_dynamic) pthread_mutex_destroy(&s->graphs_mu);
    free(s->graphs);
    free(s->admit);
    free(s->mcp_sessions);
    og_tokenset_free(s->tokens);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->log_mu);
    free(s);
}

/* ---- responses ------------------------------------------------------------------------- */

static struct MHD_Response *resp_bytes(char *data, size_t len, const char *ctype)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(data);
        return NULL;
    }
    MHD_add_response_header(resp, "Content-Type", ctype);
    return resp;
}

struct MHD_Response *og_resp_json(og_req *r, unsigned status, json_t *body)
{
    char *text = og_json_text(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(body);
    if (!text) text = strdup("{\"error\":\"out of memory\",\"code\":\"internal\",\"merge_conflicts\":[]}");
    r->status = status;
    return resp_bytes(text, strlen(text), "application/json");
}

/* `text` with every occurrence of `what` replaced by `with` (malloc'd; NULL when out of
 * memory). */
static char *replace_all(const char *text, const char *what, const char *with)
{
    size_t wn = strlen(what), n = 0;
    for (const char *p = text; wn && (p = strstr(p, what)); p += wn) n++;
    size_t len = strlen(text) + n * strlen(with) + 1;
    char *out = malloc(len), *q = out;
    if (!out) return NULL;
    for (const char *p = text;;) {
        const char *hit = wn ? strstr(p, what) : NULL;
        if (!hit) {
            strcpy(q, p);
            break;
        }
        memcpy(q, p, (size_t)(hit - p));
        q += hit - p;
        strcpy(q, with);
        q += strlen(with);
        p = hit + wn;
    }
    return out;
}

/* A 4xx message without the server's own paths: its upload spool file becomes "request body",
 * the graph's storage root "graph 'ID'" (a client knows the graph by its id, never by where
 * the server keeps it). */
static char *scrub_paths(og_req *r, const char *msg)
{
    char *out = strdup(msg);
    if (out && r->spool_path[0] && strstr(out, r->spool_path)) {
        char *t = replace_all(out, r->spool_path, "request body");
        free(out);
        out = t;
    }
    if (out && r->g && r->g->uri && strstr(out, r->g->uri)) {
        char with[80];
        snprintf(with, sizeof with, "graph '%s'", r->g->id);
        char *t = replace_all(out, r->g->uri, with);
        free(out);
        out = t;
    }
    return out;
}

void og_server_log(og_server *s, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&s->log_mu);
    fprintf(stderr, "omnigraph-server: %s\n", line);
    pthread_mutex_unlock(&s->log_mu);
}

struct MHD_Response *og_resp_error(og_req *r, unsigned status, const char *code, const char *msg, const char *detail_key,
                                   json_t *detail)
{
    json_t *o = json_object();
    char *clean = NULL;
    if (status >= 500 && status != 503) {
        /* a failure inside the server may name its storage paths, tables and data files:
         * those go to the server's log under the request id, the client gets the id */
        og_server_log(r->s, "request %s: %u %s: %s", r->request_id, status, code ? code : "",
                      msg && *msg ? msg : "error");
        json_object_set_new(o, "error", json_pack("s++", "internal error; the server log has the details under request id ",
                                                  r->request_id, ""));
    } else {
        clean = scrub_paths(r, msg && *msg ? msg : "error");
        json_object_set_new(o, "error", json_string(clean ? clean : "error"));
        free(clean);
    }
    if (code) json_object_set_new(o, "code", json_string(code));
    json_object_set_new(o, "merge_conflicts", json_array());
    if (status >= 500 && status != 503) json_object_set_new(o, "request_id", json_string(r->request_id));
    if (detail_key && detail) {
        if (!strcmp(detail_key, "merge_conflicts"))
            json_object_set_new(o, "merge_conflicts", detail);
        else
            json_object_set_new(o, detail_key, detail);
    } else if (detail) {
        json_decref(detail);
    }
    struct MHD_Response *resp = og_resp_json(r, status, o);
    if (resp && status == 429) MHD_add_response_header(resp, "Retry-After", "60");
    if (resp && status == 503) MHD_add_response_header(resp, "Retry-After", "1");
    return resp;
}

unsigned og_status_http(og_status st, const char **code)
{
    switch (st) {
    case OG_OK: *code = NULL; return 200;
    case OG_ERR_INVALID:
    case OG_ERR_PARSE:
    case OG_ERR_TYPE:
    case OG_ERR_UNSUPPORTED:
    case OG_ERR_CONSTRAINT: *code = "bad_request"; return 400;
    case OG_ERR_NOT_FOUND: *code = "not_found"; return 404;
    case OG_ERR_ALREADY_EXISTS:
    case OG_ERR_CONFLICT: *code = "conflict"; return 409;
    case OG_ERR_PRECONDITION_FAILED: *code = NULL; return 412;
    case OG_ERR_LIMIT: *code = "bad_request"; return 413;
    case OG_ERR_AUTH: *code = "unauthorized"; return 401;
    case OG_ERR_THROTTLED: *code = "too_many_requests"; return 429;
    /* the object store is down: retryable, like a full queue (the wire's closed code set has
     * no other retryable code; Omnigraph-Error-Class says "unavailable") */
    case OG_ERR_UNAVAILABLE: *code = "too_many_requests"; return 503;
    default: *code = "internal"; return 500;
    }
}

/* A query stopped by its budget (util/budget.c's messages): the resource_limit detail. */
static json_t *budget_detail(const char *msg)
{
    const char *p;
    long long n;
    if ((p = strstr(msg, "time budget of ")) && sscanf(p, "time budget of %lld ms", &n) == 1)
        return json_pack("{s:s,s:I}", "resource", "query_time_ms", "limit", (json_int_t)n);
    if ((p = strstr(msg, "memory budget of ")) && sscanf(p, "memory budget of %lld bytes", &n) == 1)
        return json_pack("{s:s,s:I}", "resource", "query_memory_bytes", "limit", (json_int_t)n);
    return NULL;
}

/* The wire's `code` set is the reference's and folds five library statuses into bad_request;
 * the exact one rides in a header (docs/server.md "Errors") so the CLI's served verbs and
 * `omnigraph test --server` print the class the embedded library gives. */
static struct MHD_Response *with_class(struct MHD_Response *resp, og_status st)
{
    if (resp) MHD_add_response_header(resp, "Omnigraph-Error-Class", og_status_name(st));
    return resp;
}

struct MHD_Response *og_resp_status(og_req *r, og_status st)
{
    const char *code;
    unsigned http = og_status_http(st, &code);
    const char *msg = og_error_message();
    json_t *d = st == OG_ERR_LIMIT ? budget_detail(msg) : NULL;
    const char *raise = d ? strstr(msg, "(raise it with ") : NULL;
    if (raise) {
        /* the engine names the library's and CLI's knobs; a client of the server has only the
         * operator's flags */
        char text[512];
        int time = !strcmp(json_string_value(json_object_get(d, "resource")), "query_time_ms");
        snprintf(text, sizeof text, "%.*s(the server's %s)", (int)(raise - msg), msg,
                 time ? "--query-timeout" : "--query-max-memory");
        return with_class(og_resp_error(r, http, code, text, "resource_limit", d), st);
    }
    return with_class(og_resp_error(r, http, code, msg, d ? "resource_limit" : NULL, d), st);
}

/* ---- request helpers ------------------------------------------------------------------- */

const char *og_req_arg(og_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->c, MHD_GET_ARGUMENT_KIND, name);
}

const char *og_req_header(og_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, name);
}

const char *og_req_str(og_req *r, const char *key, int *bad)
{
    if (r->flat_ok) {
        const og_jtok *t = og_body_flat_get(r, key);
        if (!t || t->kind == OG_J_NULL) return NULL;
        if (t->kind != OG_J_STRING) {
            if (bad) *bad = 1;
            return NULL;
        }
        return t->v.s;
    }
    json_t *v = r->json ? json_object_get(r->json, key) : NULL;
    if (!v || json_is_null(v)) return NULL;
    if (!json_is_string(v)) {
        if (bad) *bad = 1;
        return NULL;
    }
    return json_string_value(v);
}

char *og_req_object_text(og_req *r, const char *key, int *bad)
{
    if (r->flat_ok) {
        const og_jtok *t = og_body_flat_get(r, key);
        if (!t || t->kind == OG_J_NULL) return NULL;
        if (t->kind != OG_J_OBJECT) {
            *bad = 1;
            return NULL;
        }
        og_buf b = OG_BUF_INIT;
        if (og_jtok_text(t, &b) != OG_OK || og_buf_append_byte(&b, 0) != OG_OK) {
            og_buf_free(&b);
            *bad = 2;
            return NULL;
        }
        return (char *)b.data;
    }
    json_t *p = r->json ? json_object_get(r->json, key) : NULL;
    if (!p || json_is_null(p)) return NULL;
    if (!json_is_object(p)) {
        *bad = 1;
        return NULL;
    }
    char *text = og_json_text(p, JSON_COMPACT); /* a wide U64 (og_json_read) stays a number */
    if (!text) *bad = 2;
    return text;
}

/* snprintf(dst, cap, "%s", src ? src : "") without the format machinery (per request). */
static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    memcpy(dst, src ? src : "", n);
    dst[n] = 0;
}

/* Decimal digits of v into the end of buf[0..cap): returns where they start. */
static char *utoa_end(uint64_t v, char *buf, size_t cap)
{
    char *p = buf + cap - 1;
    *p = 0;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

/* Who created `branch` on the request's graph, into out ("" when unknown: no such branch, its
 * create entry cleaned up, or the look-up failed — never owned, so a failure denies). */
void og_req_branch_creator(og_req *r, const char *branch, char *out, size_t cap)
{
    out[0] = 0;
    const og_authz *az = r->s->o.policy;
    if (r->s->mode != OG_AUTH_POLICY || !az || !az->owner_rules || !r->g || !az->owner_rules(az->ctx, r->g->id)) return;
    if (!branch || !r->g->db) return;
    if (og_db_branch_creator(r->g->db, branch, out, cap) != OG_OK) {
        out[0] = 0;
        og_error_clear();
    }
}

og_status og_req_decide(og_req *r, og_action a, const char *branch, const char *target_branch, og_authz_decision *d)
{
    const char *query = r->query; /* set while a stored query is decided: invoke_query, then its read/change */
    const char *graph = r->g ? r->g->id : r->decide_graph;
    og_authz_request q = {r->actor, a, graph, branch, target_branch, query, NULL, NULL};
    /* the `owned` scope compares the branch's creator with the actor (docs/policy.md): looked
     * up in the branch log only when the graph's bundle has such a rule */
    char bc[OG_ACTOR_NAME_MAX], tc[OG_ACTOR_NAME_MAX];
    og_req_branch_creator(r, branch, bc, sizeof bc);
    og_req_branch_creator(r, target_branch, tc, sizeof tc);
    q.branch_creator = bc;
    q.target_branch_creator = tc;
    og_status st = og_authz_decide(r->s->mode, r->s->o.policy, &q, d);
    r->decided = 1;
    r->action = a;
    r->allowed = st == OG_OK && d->allowed;
    copy_cut(r->branch, sizeof r->branch, branch);
    copy_cut(r->target_branch, sizeof r->target_branch, target_branch);
    copy_cut(r->rule, sizeof r->rule, st == OG_OK ? d->matched_rule : NULL);
    /* one line per policy decision (reference-surfaces.md §3 Audit), written with the
     * request's line when it completes */
    og_audit *au = &r->audit;
    og_audit_begin(au, "policy_decision");
    og_audit_str(au, "actor", r->actor);
    og_audit_str(au, "action", og_action_name(a));
    og_audit_str(au, "graph", graph);
    og_audit_str(au, "branch", branch);
    og_audit_str(au, "target_branch", target_branch);
    if (query) og_audit_str(au, "query", query);
    og_audit_raw(au, "allowed", r->allowed ? "true" : "false");
    og_audit_str(au, "matched_rule_id", r->rule[0] ? r->rule : NULL);
    og_audit_str(au, "mode", og_auth_mode_name(r->s->mode));
    og_audit_end(au);
    return st;
}

static int is_write_action(og_action a)
{
    return a == OG_ACTION_CHANGE || a == OG_ACTION_SCHEMA_APPLY || a == OG_ACTION_BRANCH_CREATE ||
           a == OG_ACTION_BRANCH_DELETE || a == OG_ACTION_BRANCH_MERGE;
}

struct MHD_Response *og_req_authorize(og_req *r, og_action a, const char *branch, const char *target_branch)
{
    og_authz_decision d;
    og_status st = og_req_decide(r, a, branch, target_branch, &d);
    if (st) return og_resp_error(r, 500, "internal", "policy evaluation failed", NULL, NULL);
    if (!d.allowed && d.mask_as_not_found)
        return og_resp_error(r, 404, "not_found", r->masked_msg ? r->masked_msg : "not found", NULL, NULL);
    if (!d.allowed) return og_resp_error(r, 403, "forbidden", d.message, NULL, NULL);
    /* admission after the decision, so denials do not consume slots (§2.7) */
    if (is_write_action(a)) return og_req_admit(r);
    return NULL;
}

struct MHD_Response *og_req_admit(og_req *r)
{
    if (og_req_take_slot(r)) return NULL;
    char msg[256];
    snprintf(msg, sizeof msg, "too many concurrent writes for actor '%s' (limit %u); retry later",
             r->actor ? r->actor : "anonymous", r->s->o.per_actor_inflight);
    return og_resp_error(r, 429, "too_many_requests", msg, NULL, NULL);
}

int og_req_take_slot(og_req *r)
{
    if (r->admitted) return 1;
    og_server *s = r->s;
    const char *actor = r->actor ? r->actor : "";
    int ok = 1;
    pthread_mutex_lock(&s->mu);
    og_admit_slot *slot = NULL;
    for (size_t i = 0; i < s->nadmit && !slot; i++)
        if (!strcmp(s->admit[i].actor, actor)) slot = &s->admit[i];
    if (!slot) {
        og_admit_slot *v = realloc(s->admit, (s->nadmit + 1) * sizeof *v);
        if (v) {
            s->admit = v;
            slot = &s->admit[s->nadmit++];
            memset(slot, 0, sizeof *slot);
            snprintf(slot->actor, sizeof slot->actor, "%s", actor);
        }
    }
    if (!slot || slot->inflight >= s->o.per_actor_inflight) ok = 0;
    else slot->inflight++;
    pthread_mutex_unlock(&s->mu);
    if (!ok) return 0;
    r->admitted = 1;
    return 1;
}

struct MHD_Response *og_req_mem_admit(og_req *r)
{
    og_server *s = r->s;
    if (!s->query_mem || r->mem_held) return NULL;
    pthread_mutex_lock(&s->mu);
    int ok = s->mem_used + s->query_mem <= s->mem_total;
    if (ok) s->mem_used += s->query_mem;
    int64_t used = s->mem_used;
    pthread_mutex_unlock(&s->mu);
    if (ok) {
        r->mem_held = s->query_mem;
        return NULL;
    }
    char msg[256];
    snprintf(msg, sizeof msg,
             "the server's query memory is taken (%lld MiB of %lld MiB held by running queries, %lld MiB each); "
             "retry after a second",
             (long long)(used >> 20), (long long)(s->mem_total >> 20), (long long)(s->query_mem >> 20));
    return og_resp_error(r, 503, "too_many_requests", msg, NULL, NULL);
}

void og_req_mem_release(og_req *r)
{
    if (!r->mem_held) return;
    pthread_mutex_lock(&r->s->mu);
    r->s->mem_used -= r->mem_held;
    pthread_mutex_unlock(&r->s->mu);
    r->mem_held = 0;
}

void og_req_admit_release(og_req *r)
{
    if (!r->admitted) return;
    og_server *s = r->s;
    const char *actor = r->actor ? r->actor : "";
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nadmit; i++)
        if (!strcmp(s->admit[i].actor, actor) && s->admit[i].inflight) {
            s->admit[i].inflight--;
            break;
        }
    pthread_mutex_unlock(&s->mu);
    r->admitted = 0;
}

/* ---- routing --------------------------------------------------------------------------- */

/* Splits the path (libmicrohttpd has percent-decoded it) into segments; 0 when malformed
 * or too deep. */
static int split_path(og_req *r, const char *url)
{
    if (url[0] != '/') return 0;
    const char *p = url + 1;
    while (*p) {
        if (r->nseg == OG_MAX_SEGMENTS) return 0;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!n) return 0; /* empty segments are not paths */
        char *seg = strndup(p, n);
        if (!seg) return 0;
        r->seg[r->nseg++] = seg;
        if (!e) break;
        p = e + 1;
        if (!*p) return 0; /* a trailing slash */
    }
    return 1;
}

/* Does route path `pat` match the request's segments?  Captures parameters. */
static int path_matches(og_req *r, const char *pat, int capture)
{
    const char *p = pat + 1;
    size_t i = 0;
    if (!*p) return r->nseg == 0;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (i >= r->nseg) return 0;
        if (p[0] == '{') {
            if (!e && !strncmp(p, "{branch}", n)) {
                /* a trailing {branch} takes the rest of the path: branch names hold '/'
                 * ("feature/x", sent as feature/x or feature%2Fx) */
                if (capture) {
                    size_t len = 0;
                    r->branch_path[0] = 0;
                    for (size_t k = i; k < r->nseg; k++) {
                        int w = snprintf(r->branch_path + len, sizeof r->branch_path - len, "%s%s", k > i ? "/" : "",
                                         r->seg[k]);
                        if (w < 0 || (size_t)w >= sizeof r->branch_path - len) return 0;
                        len += (size_t)w;
                    }
                    r->path_branch = r->branch_path;
                }
                return 1;
            }
            if (capture) {
                if (!strncmp(p, "{graph_id}", n)) r->graph_id = r->seg[i];
                else if (!strncmp(p, "{branch}", n)) r->path_branch = r->seg[i];
                else if (!strncmp(p, "{commit_id}", n)) r->commit_id = r->seg[i];
                else if (!strncmp(p, "{name}", n)) r->name = r->seg[i];
            }
        } else if (strlen(r->seg[i]) != n || strncmp(r->seg[i], p, n)) {
            return 0;
        }
        i++;
        if (!e) break;
        p = e + 1;
    }
    return i == r->nseg;
}

/* 0: route found; 404: no such path; 405: the path exists for other methods. */
static unsigned find_route(og_req *r)
{
    int path_seen = 0;
    for (size_t i = 0; i < og_nroutes; i++) {
        if (!path_matches(r, og_routes[i].path, 0)) continue;
        path_seen = 1;
        if (strcmp(og_routes[i].method, r->method)) continue;
        r->route = &og_routes[i];
        path_matches(r, og_routes[i].path, 1);
        return 0;
    }
    return path_seen ? 405 : 404;
}

static int media_type_is(const char *ct, const char *want)
{
    if (!ct) return 0;
    while (*ct == ' ') ct++;
    size_t n = strlen(want);
    if (strncasecmp(ct, want, n)) return 0;
    const char *rest = ct + n;
    while (*rest == ' ' || *rest == '\t') rest++;
    return *rest == 0 || *rest == ';';
}

typedef struct qp_check {
    const char *allowed;
    const char *bad;
} qp_check;

static int word_in(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncmp(p, w, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    qp_check *q = cls;
    if (!word_in(q->allowed, key)) {
        q->bad = key;
        return MHD_NO;
    }
    return MHD_YES;
}

/* ---- the guard: framing, Host and Origin (guard.c) -------------------------------------- */

#define OG_MAX_HEADERS 128

typedef struct head_walk {
    og_hdr h[OG_MAX_HEADERS];
    size_t n;
    int overflow, nul_arg;
} head_walk;

static const char no_value[2] = "";

static enum MHD_Result walk_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                   const char *value, size_t value_size)
{
    (void)kind;
    head_walk *w = cls;
    if (w->n == OG_MAX_HEADERS) {
        w->overflow = 1;
        return MHD_NO;
    }
    w->h[w->n++] = (og_hdr){key ? key : "", key ? key_size : 0, value ? value : no_value, value ? value_size : 0};
    return MHD_YES;
}

static enum MHD_Result walk_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                const char *value, size_t value_size)
{
    (void)kind;
    head_walk *w = cls;
    if ((key && strlen(key) != key_size) || (value && strlen(value) != value_size)) {
        w->nul_arg = 1;
        return MHD_NO;
    }
    return MHD_YES;
}

/* libmicrohttpd cuts a header value at a NUL byte and reports the cut length, so "Bearer
 * good\0junk" would reach us as "Bearer good".  The line's remaining bytes stay in its read
 * buffer, where the value's own end would be followed only by the line's terminator (NUL, CR
 * or LF, after any trailing blanks) or by the next header's name: anything else there is the
 * hidden rest of a cut value, and the header is marked as holding a control character. */
static void hidden_nul(head_walk *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const char *p = w->h[i].v + w->h[i].vlen + 1;
        const char *next = i + 1 < w->n ? w->h[i + 1].k : NULL;
        if (w->h[i].v == no_value) continue;
        while (*p == ' ' || *p == '\t') p++;
        if (p != next && *p && *p != '\r' && *p != '\n') w->h[i].vlen++; /* strlen(v) != vlen: refused */
    }
}

/* Refuses a request before its route is looked up: a head whose framing a proxy could read
 * differently (400, and the connection is closed: where the body ends is in doubt), or one
 * addressed to a name that is not the server's (403).  NULL when it passes. */
static struct MHD_Response *guard(og_req *r, const char *version)
{
    head_walk *w = malloc(sizeof *w);
    if (!w) return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    w->n = 0;
    w->overflow = w->nul_arg = 0;
    MHD_get_connection_values_n(r->c, MHD_HEADER_KIND, walk_header, w);
    hidden_nul(w);
    MHD_get_connection_values_n(r->c, MHD_GET_ARGUMENT_KIND, walk_arg, w);
    const char *why = w->overflow ? "too many header fields"
                      : w->nul_arg ? "a query parameter holds a NUL byte"
                                   : og_guard_frame(!strcmp(version, MHD_HTTP_VERSION_1_1), w->h, w->n);
    free(w);
    if (why) {
        r->close = 1;
        return og_resp_error(r, 400, "bad_request", why, NULL, NULL);
    }
    og_server *s = r->s;
    og_host_allow a = {s->bind_host, s->listen_port, s->o.allowed_hosts, s->o.nallowed_hosts};
    const char *host = og_req_header(r, "Host"), *origin = og_req_header(r, "Origin");
    if (host && !og_guard_host_allowed(&a, host)) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "Host '%.200s' is not a name of this server (DNS-rebinding protection); start the server with "
                 "--allowed-host NAME to accept it",
                 host);
        return og_resp_error(r, 403, "forbidden", msg, NULL, NULL);
    }
    if (origin && !og_guard_origin_allowed(&a, origin)) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "Origin '%.200s' is not a page of this server's names (DNS-rebinding protection); start the server "
                 "with --allowed-host NAME to accept it",
                 origin);
        return og_resp_error(r, 403, "forbidden", msg, NULL, NULL);
    }
    return NULL;
}

/* Checks done before the body is read: query parameters, auth, graph, content type. */
static struct MHD_Response *precheck(og_req *r)
{
    unsigned rc = find_route(r);
    if (rc == 404) return og_resp_error(r, 404, "not_found", "no route for this path", NULL, NULL);
    if (rc == 405) {
        /* Allow: the methods this path answers */
        char allow[64] = "";
        for (size_t i = 0; i < og_nroutes; i++) {
            if (!path_matches(r, og_routes[i].path, 0) || strstr(allow, og_routes[i].method)) continue;
            size_t n = strlen(allow);
            snprintf(allow + n, sizeof allow - n, "%s%s", n ? ", " : "", og_routes[i].method);
        }
        struct MHD_Response *resp =
            og_resp_error(r, 405, "method_not_allowed", "method not allowed on this path", NULL, NULL);
        if (resp && allow[0]) MHD_add_response_header(resp, "Allow", allow);
        return resp;
    }
    const og_route *rt = r->route;
    /* bearer auth first (middleware order of §2.2) */
    if (rt->needs_auth && r->s->mode != OG_AUTH_OPEN) {
        const char *h = og_req_header(r, "Authorization");
        if (!h || strncmp(h, "Bearer ", 7) || !h[7])
            return og_resp_error(r, 401, "unauthorized", "missing bearer token", NULL, NULL);
        r->actor = og_tokenset_match(r->s->tokens, h + 7, strlen(h + 7));
        if (!r->actor) return og_resp_error(r, 401, "unauthorized", "invalid bearer token", NULL, NULL);
    }
    if (r->graph_id) {
        size_t n = strlen(r->graph_id);
        int ok = n && n <= 64;
        for (size_t i = 0; ok && i < n; i++) ok = isalnum((unsigned char)r->graph_id[i]) || r->graph_id[i] == '-';
        if (!ok || reserved_id(r->graph_id))
            return og_resp_error(r, 400, "bad_request", "invalid graph id (expected ^[a-zA-Z0-9-]{1,64}$)", NULL, NULL);
        if (r->s->graphs_dynamic) pthread_mutex_lock(&r->s->graphs_mu);
        for (size_t i = 0; i < r->s->ngraphs; i++)
            if (!r->s->graphs[i].dead && r->s->graphs[i].db && !strcmp(r->s->graphs[i].id, r->graph_id))
                r->g = &r->s->graphs[i];
        if (r->g && r->s->graphs_dynamic) { /* held until the request ends (req_free) */
            r->g->refs++;
            r->g_ref = 1;
        }
        if (r->s->graphs_dynamic) pthread_mutex_unlock(&r->s->graphs_mu);
        if (!r->g) {
            char msg[128];
            snprintf(msg, sizeof msg, "graph '%s' not found", r->graph_id);
            return og_resp_error(r, 404, "not_found", msg, NULL, NULL);
        }
    }
    /* query parameters: unknown ones are refused, not ignored */
    qp_check q = {rt->query_params ? rt->query_params : "", NULL};
    MHD_get_connection_values(r->c, MHD_GET_ARGUMENT_KIND, check_arg, &q);
    if (q.bad) {
        char msg[160];
        snprintf(msg, sizeof msg, "unknown query parameter '%.64s'", q.bad);
        return og_resp_error(r, 400, "bad_request", msg, NULL, NULL);
    }
    if (rt->body == OG_BODY_NDJSON) {
        /* the decision is made before any of the body is read (§2.6) */
        const char *b = og_req_arg(r, "branch");
        struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_CHANGE, b && *b ? b : "main", NULL);
        if (deny) return deny;
        int csv = strstr(rt->path, "/load/csv") != NULL; /* the spooled CSV body (docs/server.md) */
        if (!media_type_is(og_req_header(r, "Content-Type"), csv ? "text/csv" : "application/x-ndjson"))
            return og_resp_error(r, 415, "bad_request",
                                 csv ? "Content-Type must be text/csv" : "Content-Type must be application/x-ndjson", NULL, NULL);
    } else if (rt->body == OG_BODY_JSON) {
        if (!media_type_is(og_req_header(r, "Content-Type"), "application/json"))
            return og_resp_error(r, 415, "bad_request", "Content-Type must be application/json", NULL, NULL);
    }
    size_t limit = (rt->body == OG_BODY_NDJSON || strstr(rt->path, "/load") || strstr(rt->path, "/ingest"))
                       ? r->s->o.load_body_limit
                       : r->s->o.body_limit;
    r->body_limit = limit;
    const char *cl = og_req_header(r, "Content-Length");
    if (cl) {
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (n > limit) {
            json_t *d = json_pack("{s:s,s:I,s:I}", "resource",
                                  rt->body == OG_BODY_NDJSON ? "graph_batch_request_bytes" : "request_body_bytes",
                                  "limit", (json_int_t)limit, "actual", (json_int_t)n);
            return og_resp_error(r, 413, "bad_request", "request body is larger than the limit", "resource_limit", d);
        }
    }
    return NULL;
}

/* ---- the request life cycle ------------------------------------------------------------ */

/* One spare request per thread: a worker reuses its last request's struct, body buffer and
 * audit buffer instead of allocating them again (a struct of over 1 KiB and a 4 KiB body
 * buffer are "large" to malloc, which consolidates its free lists for each: ~6 % of a key
 * lookup's server CPU).  Threads free theirs when they end; og_server_free drops the
 * caller's. */
#define OG_SPARE_BODY_MAX ((size_t)64 * 1024) /* a bigger body buffer is not kept */
static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static int spare_ok;

static void spare_free(void *p)
{
    og_req *r = p;
    if (!r) return;
    free(r->body);
    free(r->flat_buf);
    og_jdoc_free(&r->flat);
    og_audit_free(&r->audit);
    free(r);
}

static void spare_init(void) { spare_ok = pthread_key_create(&spare_key, spare_free) == 0; }

static og_req *req_new(void)
{
    pthread_once(&spare_once, spare_init);
    og_req *r = spare_ok ? pthread_getspecific(spare_key) : NULL;
    if (!r) return calloc(1, sizeof(og_req));
    pthread_setspecific(spare_key, NULL);
    char *body = r->body, *flat_buf = r->flat_buf;
    size_t cap = r->body_cap, flat_cap = r->flat_cap;
    og_audit au = r->audit;
    og_jdoc flat = r->flat;
    memset(r, 0, sizeof *r);
    r->body = body;
    r->body_cap = cap;
    r->flat_buf = flat_buf;
    r->flat_cap = flat_cap;
    r->flat = flat;
    og_jdoc_reset(&r->flat);
    r->audit.p = au.p;
    r->audit.cap = au.cap;
    return r;
}

static void spare_drop(void)
{
    if (!spare_ok) return;
    spare_free(pthread_getspecific(spare_key));
    pthread_setspecific(spare_key, NULL);
}

static void req_free(og_req *r)
{
    if (r->g_ref) og_server_graph_unref(r->s, r->g);
    r->g_ref = 0;
    for (size_t i = 0; i < r->nseg; i++) free(r->seg[i]);
    free(r->url);
    json_decref(r->json);
    if (r->spool_fd >= 0) close(r->spool_fd);
    if (r->spool_path[0]) unlink(r->spool_path);
    if (r->pending) MHD_destroy_response(r->pending);
    /* a worker's answer whose connection ended (the client left, or the daemon stopped)
     * before its thread queued it */
    if (r->done) MHD_destroy_response(r->done);
    r->pending = r->done = NULL;
    r->queued = 0;
    if (spare_ok && r->body_cap <= OG_SPARE_BODY_MAX && r->flat_cap <= OG_SPARE_BODY_MAX &&
        r->flat.cap <= OG_SPARE_BODY_MAX / sizeof(og_jtok) && !pthread_getspecific(spare_key) &&
        pthread_setspecific(spare_key, r) == 0)
        return;
    spare_free(r);
}

static enum MHD_Result queue(og_req *r, struct MHD_Response *resp)
{
    /* The write's work is over once its answer exists: free the actor's slot BEFORE the
     * answer can reach the client.  libmicrohttpd calls on_completed only after the
     * response is sent, and in epoll mode often not before the connection's next event, so
     * a client that already read its write's answer could otherwise see its next write (a
     * held NDJSON load, say) refused 429 by its own finished one.  A streamed MCP call's
     * thread still runs and frees its slot itself when its answer exists (mcp_stream.c). */
    if (!r->mcp_job) og_req_admit_release(r);
    if (!resp) {
        r->status = 500;
        return MHD_NO;
    }
    if (!r->status) r->status = 200;
    if (r->close) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    MHD_add_response_header(resp, "X-Request-Id", r->request_id);
    enum MHD_Result rc = MHD_queue_response(r->c, r->status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static int spool_open(og_req *r)
{
    const char *dir = getenv("TMPDIR");
    snprintf(r->spool_path, sizeof r->spool_path, "%s/omnigraph-load-XXXXXX", dir && *dir ? dir : "/tmp");
    r->spool_fd = mkstemp(r->spool_path);
    if (r->spool_fd < 0) {
        r->spool_path[0] = 0;
        return 0;
    }
    return 1;
}

static struct MHD_Response *too_large(og_req *r, uint64_t actual)
{
    json_t *d = json_pack("{s:s,s:I,s:I}", "resource",
                          r->route->body == OG_BODY_NDJSON ? "graph_batch_request_bytes" : "request_body_bytes", "limit",
                          (json_int_t)r->body_limit, "actual", (json_int_t)actual);
    return og_resp_error(r, 413, "bad_request", "request body is larger than the limit", "resource_limit", d);
}

/* Appends an upload chunk; a response when the body must be refused. */
static struct MHD_Response *take_body(og_req *r, const char *data, size_t n)
{
    if (r->route->body == OG_BODY_NONE) {
        if (n) return og_resp_error(r, 400, "bad_request", "this route takes no request body", NULL, NULL);
        return NULL;
    }
    if (r->route->body == OG_BODY_NDJSON) {
        if (r->spool_len + n > r->body_limit) return too_large(r, r->spool_len + n);
        if (r->spool_fd < 0 && !spool_open(r))
            return og_resp_error(r, 500, "internal", "cannot create a temporary file for the upload", NULL, NULL);
        for (size_t off = 0; off < n;) {
            ssize_t w = write(r->spool_fd, data + off, n - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return og_resp_error(r, 500, "internal", "cannot spool the upload", NULL, NULL);
            off += (size_t)w;
        }
        r->spool_len += n;
        return NULL;
    }
    if (r->body_len + n > r->body_limit) return too_large(r, r->body_len + n);
    if (r->body_len + n + 1 > r->body_cap) {
        size_t cap = r->body_cap ? r->body_cap : 4096;
        while (cap < r->body_len + n + 1) cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b) return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
        r->body = b;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = 0;
    return NULL;
}

static struct MHD_Response *dispatch(og_req *r)
{
    const og_route *rt = r->route;
    if ((rt->body == OG_BODY_JSON || (rt->body == OG_BODY_JSON_OPTIONAL && r->body_len)) &&
        !(og_route_flat_body(rt) && og_body_flat_parse(r))) {
        json_error_t e;
        r->json = json_loadb(r->body ? r->body : "", r->body_len, JSON_REJECT_DUPLICATES, &e);
        /* a U64 parameter above 2^63-1 is a bare number jansson refuses; og_json_read keeps it
         * (as strict otherwise), and og_req_object_text prints it back as sent */
        if (!r->json && json_error_code(&e) == json_error_numeric_overflow)
            r->json = og_json_read(r->body ? r->body : "", r->body_len);
        if (!r->json || !json_is_object(r->json)) {
            char msg[256];
            if (r->json)
                snprintf(msg, sizeof msg, "request body must be a JSON object");
            else
                snprintf(msg, sizeof msg, "request body is not valid JSON: %s (line %d, column %d)", e.text, e.line,
                         e.column);
            return og_resp_error(r, 400, "bad_request", msg, NULL, NULL);
        }
    }
    /* the commits this request writes record who and how: a token's actor, or none */
    og_status st = og_set_thread_actor_via(r->actor, r->actor ? "token" : "unauthenticated");
    if (st) return og_resp_status(r, st);
    /* a write's body may name its commit's message ({"message": "..."}), as the CLI's -m */
    json_t *m = r->json ? json_object_get(r->json, "message") : NULL;
    if (m && !json_is_string(m) && !json_is_null(m)) {
        og_set_thread_actor(NULL);
        return og_resp_error(r, 400, "bad_request", "\"message\" (the commit message) must be a string", NULL, NULL);
    }
    if (json_is_string(m) && (st = og_set_thread_commit_message(json_string_value(m)))) {
        og_set_thread_actor(NULL);
        return og_resp_status(r, st);
    }
    struct MHD_Response *resp = rt->handler(r);
    og_set_thread_commit_message(NULL);
    og_set_thread_actor(NULL);
    return resp;
}

/* Bytes of a refused request's body read and dropped before the connection is closed. */
#define OG_DRAIN_MAX ((uint64_t)64 << 20)

static enum MHD_Result queue_pending(og_req *r)
{
    struct MHD_Response *resp = r->pending;
    r->pending = NULL;
    r->early = 1;
    return queue(r, resp);
}

/* A refusal before the body: answered at once when no body follows (or the client waits
 * for 100 Continue, which then is never sent), else after the body has been drained. */
static enum MHD_Result refuse(og_req *r, struct MHD_Response *resp)
{
    og_req_admit_release(r); /* a refused request holds no slot while its body drains */
    const char *cl = og_req_header(r, "Content-Length");
    const char *te = og_req_header(r, "Transfer-Encoding");
    const char *expect = og_req_header(r, "Expect");
    int body = (cl && strcmp(cl, "0")) || te;
    if (cl && strtoull(cl, NULL, 10) > OG_DRAIN_MAX) {
        /* more than would ever be drained (a 1 GiB declared length): answer now, then close */
        r->close = 1;
        r->early = 1;
        return queue(r, resp);
    }
    if (!body || (expect && !strcasecmp(expect, "100-continue"))) {
        r->early = 1;
        return queue(r, resp);
    }
    r->pending = resp;
    return MHD_YES;
}

/* "<8 hex digits of this process>-<sequence>": unique in a log, no meaning to a client. */
static void request_id(og_server *s, char *out)
{
    pthread_mutex_lock(&s->mu);
    uint64_t n = ++s->req_seq;
    if (!s->req_prefix) {
        unsigned v = 0;
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(&v, sizeof v, 1, f) != 1) v = (unsigned)getpid() ^ (unsigned)og_now_us();
        if (f) fclose(f);
        s->req_prefix = v | 1u;
    }
    unsigned prefix = s->req_prefix;
    pthread_mutex_unlock(&s->mu);
    snprintf(out, OG_REQUEST_ID_LEN, "%08x-%llu", prefix, (unsigned long long)n);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    og_server *s = cls;
    og_req *r = *con_cls;
    if (!r) {
        r = req_new();
        if (!r) return MHD_NO;
        r->s = s;
        r->c = c;
        r->spool_fd = -1;
        r->t0_us = og_now_us();
        r->method = method;
        r->url = strdup(url);
        r->action = OG_ACTION_NONE;
        request_id(s, r->request_id);
        *con_cls = r;
        pthread_mutex_lock(&s->mu);
        s->inflight++;
        pthread_mutex_unlock(&s->mu);
        /* the head is complete: a body must now keep coming (conn.c), else no deadline */
        r->conn = og_conn_of(c);
        const char *cl = og_req_header(r, "Content-Length");
        int body = (cl && strcmp(cl, "0")) || og_req_header(r, "Transfer-Encoding");
        og_conn_deadline(s, r->conn, body ? s->o.header_timeout_s : 0);
        struct MHD_Response *bad = guard(r, version);
        if (bad) {
            if (r->close) { /* the framing is in doubt: answer now and read nothing more */
                r->early = 1;
                return queue(r, bad);
            }
            return refuse(r, bad);
        }
        if (r->url && og_ui_path(url)) return refuse(r, og_ui_answer(r)); /* the studio's files (ui.c) */
        if (!r->url || !split_path(r, url))
            return refuse(r, og_resp_error(r, 404, "not_found", "no route for this path", NULL, NULL));
        struct MHD_Response *resp = precheck(r);
        if (resp) return refuse(r, resp);
        return MHD_YES;
    }
    if (r->queued) {
        /* resumed by its worker (run_request): the answer is ready */
        struct MHD_Response *resp = r->done;
        r->queued = 0;
        r->done = NULL;
        return queue(r, resp);
    }
    if (r->early) {
        *upload_data_size = 0; /* the response is queued; the rest of the body is discarded */
        return MHD_YES;
    }
    og_conn_body(s, r->conn, *upload_data_size);
    if (r->pending) {
        /* drain the body the client is sending, so it reads the error instead of a reset */
        if (!*upload_data_size) return queue_pending(r);
        r->drained += *upload_data_size;
        *upload_data_size = 0;
        if (r->drained > OG_DRAIN_MAX) return queue_pending(r);
        return MHD_YES;
    }
    if (*upload_data_size) {
        struct MHD_Response *resp = take_body(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        if (resp) {
            r->pending = resp;
            og_req_admit_release(r); /* refused (413, …): no slot while the rest drains */
        }
        return MHD_YES;
    }
    r->early = 1; /* from now on nothing more is read */
    og_conn_deadline(s, r->conn, 0);
    /* the routes without a token (health, the OpenAPI document) are answered here, so a
     * saturated pool never makes the server look dead to its health checks */
    if (!r->route->needs_auth || !s->pool) return queue(r, dispatch(r));
    if (!og_pool_reserve(s->pool)) {
        /* the code stays in the reference's closed set (a 503, not the actor's 429) */
        char msg[160];
        snprintf(msg, sizeof msg, "the server is busy (%u requests running, %u waiting); retry after a second",
                 s->o.threads, s->o.max_queued);
        return queue(r, og_resp_error(r, 503, "too_many_requests", msg, NULL, NULL));
    }
    r->queued = 1;
    MHD_suspend_connection(c);
    og_pool_push(s->pool, r);
    return MHD_YES;
}

/* A worker runs one complete request, then wakes its connection, whose thread sends the
 * answer (on_request, r->queued). */
static void run_request(void *item)
{
    og_req *r = item;
    r->done = dispatch(r);
    /* the write is over: its slot is free now, not when a connection thread (which may lag
     * behind the workers under load) gets round to queueing the answer */
    if (!r->mcp_job) og_req_admit_release(r);
    MHD_resume_connection(r->c);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    og_server *s = cls;
    og_req *r = *con_cls;
    if (!r) return;
    *con_cls = NULL;
    /* keep-alive: the next request's head must be complete within the idle timeout */
    og_conn_deadline(s, og_conn_of(c), s->o.timeout_s);
    og_mcp_live_end(r); /* a streamed MCP call (also one whose client went away) is over first */
    uint64_t us = og_now_us() - r->t0_us;
    og_audit *au = &r->audit;
    og_audit_begin(au, "request");
    og_audit_str(au, "method", r->method ? r->method : "");
    og_audit_str(au, "path", r->url ? r->url : "");
    og_audit_str(au, "route", r->route ? r->route->path : NULL);
    og_audit_str(au, "request_id", r->request_id);
    og_audit_str(au, "graph", r->g ? r->g->id : NULL);
    og_audit_str(au, "actor", r->actor);
    og_audit_str(au, "action", r->decided ? og_action_name(r->action) : NULL);
    og_audit_str(au, "branch", r->branch[0] ? r->branch : NULL);
    og_audit_str(au, "target_branch", r->target_branch[0] ? r->target_branch : NULL);
    og_audit_str(au, "decision", r->decided ? (r->allowed ? "allow" : "deny") : "not_evaluated");
    og_audit_str(au, "matched_rule", r->rule[0] ? r->rule : NULL);
    char num[48], frac[8];
    og_audit_raw(au, "status", utoa_end(r->status, num, sizeof num));
    /* milliseconds with three decimals, as "%.3f" of us / 1000 would print them */
    char *ms = utoa_end(us / 1000, num, sizeof num - 4);
    char *f = utoa_end(us % 1000 + 1000, frac, sizeof frac); /* "1ddd": the leading 1 keeps the zeros */
    num[sizeof num - 5] = '.';
    memcpy(num + sizeof num - 4, f + 1, 4);
    og_audit_raw(au, "latency_ms", ms);
    if (r->mcp[0]) og_audit_str(au, "mcp", r->mcp);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK || r->stream_failed)
        og_audit_str(au, "terminated", r->stream_failed ? "stream_failed" : "connection_closed");
    og_audit_end(au);
    og_audit_flush(s, au);
    og_req_admit_release(r);
    og_req_mem_release(r);
    if (r->export_slot) {
        pthread_mutex_lock(&s->mu);
        s->exports--;
        pthread_mutex_unlock(&s->mu);
    }
    req_free(r);
    pthread_mutex_lock(&s->mu);
    if (--s->inflight == 0) pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
}

og_status og_server_start(og_server *s, char *addr, size_t addr_len)
{
    if (s->graphs_dynamic && !s->graphs_cap) { /* sized once: a request's graph never moves */
        size_t cap = s->ngraphs + OG_SERVER_CREATED_MAX;
        og_served_graph *v = realloc(s->graphs, cap * sizeof *v);
        if (!v) return OG_ERR_NOMEM;
        memset(v + s->ngraphs, 0, (cap - s->ngraphs) * sizeof *v);
        s->graphs = v;
        s->graphs_cap = cap;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)s->bind_port);
    const char *host = !strcmp(s->bind_host, "localhost") ? "127.0.0.1" : s->bind_host;
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "omnigraph-server: --bind host '%s' is not an IPv4 address\n", s->bind_host);
        return OG_ERR_INVALID;
    }
    int loopback = (ntohl(sa.sin_addr.s_addr) >> 24) == 127;
    if (s->mode == OG_AUTH_OPEN && !loopback && !s->o.allow_public_unauthenticated) {
        fprintf(stderr, "omnigraph-server: --unauthenticated serves loopback addresses only; bind 127.0.0.1 or add "
                        "--allow-public-unauthenticated on a trusted network\n");
        return OG_ERR_INVALID;
    }
    /* a socket per connection, beside the graphs' files: raise the soft descriptor limit
     * toward the hard one when the connection cap needs it */
    struct rlimit rl;
    rlim_t want = (rlim_t)s->o.max_connections + 512;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* our own listening socket: SO_REUSEADDR (a restart binds at once) but not SO_REUSEPORT,
     * so a second server on a taken port fails instead of silently sharing its traffic */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 1024)) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (e == EADDRINUSE)
            fprintf(stderr, "omnigraph-server: cannot listen on %s:%u: the port is already in use (another "
                            "omnigraph-server?); choose another with --bind HOST:PORT, or port 0 for any free one\n",
                    s->bind_host, s->bind_port);
        else
            fprintf(stderr, "omnigraph-server: cannot listen on %s:%u: %s\n", s->bind_host, s->bind_port, strerror(e));
        return OG_ERR_IO;
    }
    struct sockaddr_in got;
    socklen_t glen = sizeof got;
    unsigned port = getsockname(fd, (struct sockaddr *)&got, &glen) == 0 ? ntohs(got.sin_port) : s->bind_port;
    s->listen_port = port;
    signal(SIGPIPE, SIG_IGN);
    if (!s->audit_inited) og_audit_start(s);
    if (!s->conn_inited && og_conn_start(s)) {
        close(fd);
        fprintf(stderr, "omnigraph-server: cannot start the connection reaper\n");
        return OG_ERR_IO;
    }
    s->pool = og_pool_new(s->o.threads, s->o.max_queued, run_request);
    if (!s->pool) {
        close(fd);
        fprintf(stderr, "omnigraph-server: cannot start %u worker threads\n", s->o.threads);
        return OG_ERR_IO;
    }
    /* the connection threads only read heads and bodies and write answers (requests run on
     * the pool): a few suffice for many connections */
    unsigned io = s->o.threads < 4 ? 2 : 4;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
                            MHD_OPTION_THREAD_POOL_SIZE, io, MHD_OPTION_CONNECTION_TIMEOUT, s->o.timeout_s,
                            MHD_OPTION_CONNECTION_LIMIT, s->o.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                            s->o.max_per_address, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_NOTIFY_CONNECTION, og_conn_notify, s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)64 * 1024, MHD_OPTION_END);
    if (!s->d) {
        close(fd);
        og_pool_free(s->pool);
        s->pool = NULL;
        fprintf(stderr, "omnigraph-server: cannot serve on %s:%u: %s\n", s->bind_host, port, strerror(errno));
        return OG_ERR_IO;
    }
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    if (addr) snprintf(addr, addr_len, "%s:%u", ip, port);
    return OG_OK;
}

void og_server_stop(og_server *s, unsigned grace_s)
{
    if (!s->d) return;
    MHD_socket fd = MHD_quiesce_daemon(s->d);
    if (fd != MHD_INVALID_SOCKET) close(fd);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += grace_s;
    pthread_mutex_lock(&s->mu);
    while (s->inflight && pthread_cond_timedwait(&s->idle, &s->mu, &until) == 0) {
    }
    pthread_mutex_unlock(&s->mu);
    /* what still runs resumes its connection: before the daemon stops.  The pool itself stays
     * until og_server_free, as connection threads may still ask it for a place (and hear no). */
    og_pool_stop(s->pool);
    MHD_stop_daemon(s->d);
    s->d = NULL;
    og_conn_stop(s);
    spare_drop();
    og_audit_stop(s); /* every request has completed: write their lines out */
}
