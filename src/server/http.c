/*
 * http.c — the HTTP machinery of omnigraph-server on libmicrohttpd: the daemon (a bounded
 * pool of worker threads, keep-alive, idle timeouts, a connection cap), the request life
 * cycle (route → bearer auth → graph → content type → body within its limit → handler),
 * the JSON error body of reference-surfaces.md §2.4, graceful stop, and the audit line
 * written when each request completes.  Handlers live in routes.c.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cluster/stored.h"
#include "server/server_int.h"

uint64_t og_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- server life cycle ------------------------------------------------------------------ */

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
    if (!s->o.max_connections) s->o.max_connections = 512;
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
    *out = s;
    return OG_OK;
}

static int reserved_id(const char *id)
{
    return !strcmp(id, "policies") || !strcmp(id, "healthz") || !strcmp(id, "openapi") || !strcmp(id, "graphs");
}

static int graph_id_valid(const char *id)
{
    size_t n = strlen(id);
    if (!n || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)id[i]) && id[i] != '-') return 0;
    return !reserved_id(id);
}

og_status og_server_add_graph(og_server *s, const char *id, const char *uri)
{
    if (!graph_id_valid(id)) {
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
    pthread_mutex_t *mu = malloc(sizeof *mu);
    if (!v || !u || !mu) {
        free(u);
        free(mu);
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
    pthread_mutex_init(mu, NULL);
    g->write_mu_p = mu;
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

static void graph_release(og_served_graph *g)
{
    og_db_close(g->db);
    free(g->uri);
    pthread_mutex_destroy(g->write_mu_p);
    free(g->write_mu_p);
    og_stored_set_free(g->queries);
}

void og_server_remove_graph(og_server *s, const char *id)
{
    og_served_graph *g = graph_by_id(s, id);
    if (!g) return;
    graph_release(g);
    size_t at = (size_t)(g - s->graphs);
    memmove(g, g + 1, (s->ngraphs - at - 1) * sizeof *g);
    s->ngraphs--;
}

static void spare_drop(void);

void og_server_free(og_server *s)
{
    if (!s) return;
    if (s->d) MHD_stop_daemon(s->d);
    spare_drop();
    og_audit_stop(s);
    for (size_t i = 0; i < s->ngraphs; i++) graph_release(&s->graphs[i]);
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

struct MHD_Response *og_resp_error(og_req *r, unsigned status, const char *code, const char *msg, const char *detail_key,
                                   json_t *detail)
{
    json_t *o = json_object();
    json_object_set_new(o, "error", json_string(msg && *msg ? msg : "error"));
    if (code) json_object_set_new(o, "code", json_string(code));
    json_object_set_new(o, "merge_conflicts", json_array());
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

struct MHD_Response *og_resp_status(og_req *r, og_status st)
{
    const char *code;
    unsigned http = og_status_http(st, &code);
    json_t *d = st == OG_ERR_LIMIT ? budget_detail(og_error_message()) : NULL;
    return og_resp_error(r, http, code, og_error_message(), d ? "resource_limit" : NULL, d);
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
    char *text = json_dumps(p, JSON_COMPACT);
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

og_status og_req_decide(og_req *r, og_action a, const char *branch, const char *target_branch, og_authz_decision *d)
{
    const char *query = a == OG_ACTION_INVOKE_QUERY ? r->query : NULL;
    og_authz_request q = {r->actor, a, r->g ? r->g->id : NULL, branch, target_branch, query};
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
    og_audit_str(au, "graph", r->g ? r->g->id : NULL);
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
        for (size_t i = 0; i < r->s->ngraphs; i++)
            if (!strcmp(r->s->graphs[i].id, r->graph_id)) r->g = &r->s->graphs[i];
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
        if (!media_type_is(og_req_header(r, "Content-Type"), "application/x-ndjson"))
            return og_resp_error(r, 415, "bad_request", "Content-Type must be application/x-ndjson", NULL, NULL);
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
    for (size_t i = 0; i < r->nseg; i++) free(r->seg[i]);
    free(r->url);
    json_decref(r->json);
    if (r->spool_fd >= 0) close(r->spool_fd);
    if (r->spool_path[0]) unlink(r->spool_path);
    if (r->pending) MHD_destroy_response(r->pending);
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
    og_status st = og_set_thread_actor(r->actor);
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
    if (!body || (expect && !strcasecmp(expect, "100-continue"))) {
        r->early = 1;
        return queue(r, resp);
    }
    r->pending = resp;
    return MHD_YES;
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
        *con_cls = r;
        pthread_mutex_lock(&s->mu);
        s->inflight++;
        pthread_mutex_unlock(&s->mu);
        if (!r->url || !split_path(r, url))
            return refuse(r, og_resp_error(r, 404, "not_found", "no route for this path", NULL, NULL));
        struct MHD_Response *resp = precheck(r);
        if (resp) return refuse(r, resp);
        return MHD_YES;
    }
    if (r->early) {
        *upload_data_size = 0; /* the response is queued; the rest of the body is discarded */
        return MHD_YES;
    }
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
    return queue(r, dispatch(r));
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    og_server *s = cls;
    og_req *r = *con_cls;
    if (!r) return;
    *con_cls = NULL;
    og_mcp_live_end(r); /* a streamed MCP call (also one whose client went away) is over first */
    uint64_t us = og_now_us() - r->t0_us;
    og_audit *au = &r->audit;
    og_audit_begin(au, "request");
    og_audit_str(au, "method", r->method ? r->method : "");
    og_audit_str(au, "path", r->url ? r->url : "");
    og_audit_str(au, "route", r->route ? r->route->path : NULL);
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
    signal(SIGPIPE, SIG_IGN);
    if (!s->audit_inited) og_audit_start(s);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_THREAD_POOL_SIZE, s->o.threads, MHD_OPTION_CONNECTION_TIMEOUT,
                            s->o.timeout_s, MHD_OPTION_CONNECTION_LIMIT, s->o.max_connections,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)64 * 1024, MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1, MHD_OPTION_END);
    if (!s->d) {
        fprintf(stderr, "omnigraph-server: cannot listen on %s:%u: %s\n", s->bind_host, s->bind_port, strerror(errno));
        return OG_ERR_IO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : s->bind_port;
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
    MHD_stop_daemon(s->d);
    s->d = NULL;
    spare_drop();
    og_audit_stop(s); /* every request has completed: write their lines out */
}
