/*
 * server_int.h — what the server's files share (private to src/server/): the server and
 * request structures, the route table and the response helpers.
 */
#ifndef OG_SERVER_INT_H
#define OG_SERVER_INT_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>

#include "mcp/mcp.h"
#include "server/server.h"
#include "util/buf.h"
#include "util/jsontok.h"

typedef struct og_served_graph {
    char id[65];
    char *uri;
    og_db *db;
    /* Writes to one branch run one at a time in this process, so they do not spend the
     * engine's publish retries racing each other; writes to different branches run at once
     * (write_locks.c).  Other processes still race through the store, which arbitrates. */
    struct og_write_locks *locks;
    struct og_stored_set *queries; /* stored queries (cluster serving), or NULL */
    /* graphs created at run time (routes_graphs.c): only those may be deleted.  With --graph-dir
     * every request holds a reference on its graph (refs, under graphs_mu); a deleted graph is
     * `dead`, found by no lookup, and closed when its last request ends. */
    int created, dead;
    unsigned refs;
} og_served_graph;

/* The per-branch write locks of a served graph (write_locks.c).  og_write_lock takes
 * `branch`'s lock (NULL: the whole graph, waiting for every branch writer); the hold is
 * the caller's storage, given back to og_write_unlock. */
typedef struct og_write_locks og_write_locks;
typedef struct og_write_hold {
    og_write_locks *l;
    void *b;
} og_write_hold;
og_write_locks *og_write_locks_new(void);
void og_write_locks_free(og_write_locks *l);
void og_write_lock(og_write_locks *l, const char *branch, og_write_hold *h);
void og_write_unlock(og_write_hold *h);

/* Graphs created at run time that one server holds at once (their slots are reused). */
#define OG_SERVER_CREATED_MAX 256

/* Admission (reference-surfaces.md §2.7): writes in flight per actor. */
typedef struct og_admit_slot {
    char actor[128];
    unsigned inflight;
} og_admit_slot;

/* The MCP log level an actor set on a graph (mcp_stream.c): logging/setLevel is remembered
 * per (graph, actor) between stateless requests, at most OG_MCP_LEVELS_MAX of them. */
#define OG_MCP_LEVELS_MAX 256
typedef struct og_mcp_level {
    char graph[65];
    char actor[128];
    og_mcp_log_level level;
    uint64_t used; /* og_server.mcp_level_clock when last set or read */
} og_mcp_level;

/* An MCP session (mcp_session.c, docs/mcp.md "Sessions"): issued with the answer to an
 * `initialize` POST, bound to the graph and the actor it was issued to.  At most
 * og_server.mcp_sessions_max of them (default OG_MCP_SESSIONS_MAX), each forgotten after
 * mcp_session_idle_s seconds unused (default OG_MCP_SESSION_IDLE_S); when full, the least
 * recently used one is forgotten.  One actor holds at most mcp_sessions_per_actor (default
 * OG_MCP_SESSIONS_PER_ACTOR): past it, its own least recently used one is forgotten, so no
 * single token can push other actors' sessions out. */
#define OG_MCP_SESSIONS_MAX 4096
#define OG_MCP_SESSIONS_PER_ACTOR 64
#define OG_MCP_SESSION_IDLE_S 3600
#define OG_MCP_SESSION_ID_LEN 32 /* hex digits of 16 random bytes */
typedef struct og_mcp_session {
    char id[OG_MCP_SESSION_ID_LEN + 1];
    char graph[65];
    char actor[128];
    char version[16];  /* the negotiated protocol version */
    og_mcp_log_level level;
    uint64_t used;     /* og_server.mcp_session_clock when last used */
    int64_t last_s;    /* CLOCK_MONOTONIC seconds when last used */
} og_mcp_session;

/* A tools/call running at a graph's MCP endpoint, which a notifications/cancelled POST of the
 * same actor (and session) naming its request id stops (routes_queries.c, docs/mcp.md "Over
 * HTTP"): linked into og_server.mcp_running while it runs; the calling thread watches `cancel`
 * (og_set_thread_cancel). */
typedef struct og_mcp_running {
    struct og_mcp_running *next;
    const char *graph, *actor, *session; /* the request's, borrowed */
    char *id;                            /* the request id as compact JSON (malloc'd) */
    volatile int cancel;
} og_mcp_running;

/* A connection's deadline (conn.c): head complete, body progressing, keep-alive bounded. */
typedef struct og_conn og_conn;
#define OG_CONN_MIN_CHUNK 1024 /* body bytes that move a body's deadline on */

struct og_server {
    og_server_opts o;
    char bind_host[64];
    unsigned bind_port;
    unsigned listen_port;         /* the port bound (bind_port, or the one chosen for port 0) */
    og_served_graph *graphs;
    size_t ngraphs;
    /* --graph-dir: graphs are added and removed while serving, under graphs_mu; the array is
     * sized once at start (graphs_cap) so that no request's graph pointer ever moves */
    pthread_mutex_t graphs_mu;
    size_t graphs_cap;
    int graphs_dynamic;
    og_tokenset *tokens;
    og_auth_mode mode;
    struct MHD_Daemon *d;
    pthread_mutex_t mu;
    pthread_cond_t idle;
    unsigned inflight;
    unsigned exports;
    pthread_mutex_t log_mu;
    FILE *log;
    og_admit_slot *admit;        /* under mu */
    size_t nadmit;
    /* the audit writer (audit.c): lines waiting in audit_buf, written by audit_thread */
    pthread_mutex_t audit_mu;
    pthread_cond_t audit_cv;
    pthread_t audit_thread;
    char *audit_buf;
    size_t audit_len, audit_cap;
    int audit_inited, audit_running, audit_idle, audit_stop;
    og_mcp_level mcp_levels[OG_MCP_LEVELS_MAX]; /* under mu */
    size_t nmcp_levels;
    uint64_t mcp_level_clock;
    og_mcp_session *mcp_sessions; /* under mu; allocated on the first initialize */
    size_t nmcp_sessions, mcp_sessions_max, mcp_sessions_per_actor;
    unsigned mcp_session_idle_s;
    uint64_t mcp_session_clock;
    og_mcp_running *mcp_running;  /* under mu: cancellable MCP calls */
    /* complete requests run on the worker pool (pool.c), not on the connection threads */
    struct og_pool *pool;
    /* connection deadlines (conn.c): every open connection, under conn_mu */
    pthread_mutex_t conn_mu;
    pthread_cond_t conn_cv;
    pthread_t conn_reaper;
    og_conn *conns;
    size_t nconns;
    uint64_t conns_reaped;
    uint64_t req_seq;             /* request ids (under mu) */
    int64_t mem_total;            /* the server-wide memory bound of read queries (0: none) */
    int64_t query_mem;            /* what one read query is admitted as: its memory budget (0: not admitted) */
    int64_t mem_used;             /* under mu: the budgets of the read queries running */
    unsigned req_prefix;
    int conn_inited, conn_running, conn_stop;
};

/* conn.c */
int og_conn_start(og_server *s);   /* the reaper thread; -1 when it cannot start */
void og_conn_stop(og_server *s);   /* after the daemon has stopped */
void og_conn_notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode code);
og_conn *og_conn_of(struct MHD_Connection *c);
void og_conn_deadline(og_server *s, og_conn *k, unsigned seconds); /* 0: none */
void og_conn_body(og_server *s, og_conn *k, size_t n);             /* body bytes arrived */

/* OG_BODY_RAW: kept in memory unparsed (the MCP endpoint parses JSON-RPC itself). */
typedef enum og_body_kind { OG_BODY_NONE = 0, OG_BODY_JSON, OG_BODY_JSON_OPTIONAL, OG_BODY_NDJSON, OG_BODY_RAW } og_body_kind;

/* A request's audit lines, written together when it completes (audit.c). */
typedef struct og_audit {
    char *p;
    size_t len, cap;
    int oom;
} og_audit;
void og_audit_begin(og_audit *a, const char *event);            /* {"ts":…,"event":… */
void og_audit_str(og_audit *a, const char *key, const char *v); /* ,"key":"v" (NULL: null) */
void og_audit_raw(og_audit *a, const char *key, const char *json);
void og_audit_end(og_audit *a);                                 /* }\n */
void og_audit_flush(og_server *s, og_audit *a);                 /* hands every line to the writer */
void og_audit_start(og_server *s);                              /* starts the writer thread */
void og_audit_stop(og_server *s);                               /* writes what is queued, joins it */
void og_audit_free(og_audit *a);

typedef struct og_req og_req;
typedef struct og_route {
    const char *method;
    const char *path;          /* "/graphs/{graph_id}/commits/{commit_id}" */
    struct MHD_Response *(*handler)(og_req *r);
    og_body_kind body;
    int needs_auth;
    og_action action;          /* the decision made before the handler; OG_ACTION_NONE: the handler decides */
    const char *query_params;  /* accepted query parameters, space separated ("" = none) */
    const char *op_id, *summary;
    const char *request_schema, *response_schema; /* component names for the OpenAPI doc, or NULL */
    const char *response_type; /* NULL = application/json */
} og_route;

extern const og_route og_routes[];
extern const size_t og_nroutes;
/* 1 for the routes whose JSON body is parsed flat (body.c): the query lanes. */
int og_route_flat_body(const og_route *rt);

#define OG_MAX_SEGMENTS 16
#define OG_REQUEST_ID_LEN 32

struct og_req {
    og_server *s;
    struct MHD_Connection *c;
    const og_route *route;
    char *url;
    const char *method;
    char *seg[OG_MAX_SEGMENTS];  /* decoded path segments */
    size_t nseg;
    const char *graph_id, *path_branch, *commit_id, *name; /* captured path parameters */
    char branch_path[256];
    char request_id[OG_REQUEST_ID_LEN]; /* in the X-Request-Id header, the audit line, a 500's body */       /* a trailing {branch} of several segments, joined by '/' */
    og_served_graph *g;
    int g_ref;                   /* holds a reference on g (graphs_dynamic) */
    const char *decide_graph;    /* the graph a decision concerns when g is NULL (POST /graphs) */
    const char *actor;           /* matched token's actor (NULL: Open mode) */
    uint64_t t0_us;
    /* body: JSON kept in memory, NDJSON spooled to a temporary file */
    char *body;
    size_t body_len, body_cap, body_limit;
    int spool_fd;
    char spool_path[256];
    uint64_t spool_len;
    int early;                   /* a response was queued before the body was read */
    int close;                   /* its answer closes the connection (the framing was refused) */
    og_conn *conn;               /* its connection's deadline record (NULL: none) */
    int queued;                  /* handed to the worker pool; the connection is suspended */
    int ready;                   /* the worker's answer is in `done` */
    struct MHD_Response *done;
    struct MHD_Response *pending; /* a refusal sent once the body is drained */
    uint64_t drained;
    json_t *json;                /* the parsed JSON body (object) */
    /* or, on the query lanes, the body parsed flat (body.c): flat_ok = 1 and json NULL */
    og_jdoc flat;
    char *flat_buf;
    size_t flat_cap, flat_root;
    int flat_ok;
    /* audit */
    unsigned status;
    int decided, allowed;
    og_action action;
    char branch[256], target_branch[256], rule[128];
    int stream_failed;
    int export_slot;
    int admitted;                /* holds one of its actor's admission slots */
    int64_t mem_held;            /* its share of the server's memory bound (og_req_mem_admit) */
    const char *masked_msg;      /* the 404 message of a masked deny (NULL: "not found") */
    char mcp[160];               /* audit: the MCP method (and tool or resource) of a /mcp request */
    og_audit audit;              /* its decision lines so far, then the request line */
    const char *query;           /* the stored query an invoke_query decision concerns (NULL: none) */
    struct og_mcp_job *mcp_job;  /* an MCP call streaming its notifications (mcp_stream.c) */
    char mcp_session[OG_MCP_SESSION_ID_LEN + 1]; /* the MCP session the request is in ("" = none) */
    og_mcp_running mcp_run;      /* its tools/call while it runs (id != NULL), cancellable */
    og_write_hold write_hold;    /* an MCP tool call's write lock (routes_queries.c) */
};

/* ---- the query lanes' body, parsed flat (body.c) ---- */
/* 1 when the body is a JSON object jsontok read exactly as jansson would (then flat_ok);
 * 0: parse it with jansson (which words every error). */
int og_body_flat_parse(og_req *r);
const og_jtok *og_body_flat_get(const og_req *r, const char *key); /* member of the body, or NULL */
og_status og_jtok_text(const og_jtok *t, og_buf *b);               /* compact JSON text of a value */
/* The body's member `key` as compact JSON object text (malloc'd; NULL when absent or null;
 * *bad = 1 when it is not an object, 2 when out of memory), from either parse. */
char *og_req_object_text(og_req *r, const char *key, int *bad);

/* ---- responses (http.c) ---- */
/* One line on the server's stderr, "omnigraph-server: " first. */
void og_server_log(og_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct MHD_Response *og_resp_json(og_req *r, unsigned status, json_t *body); /* steals body */
struct MHD_Response *og_resp_error(og_req *r, unsigned status, const char *code, const char *msg, const char *detail_key,
                                   json_t *detail);
/* Maps og_status + og_error_message() to status, code and body (reference-surfaces.md §2.4). */
struct MHD_Response *og_resp_status(og_req *r, og_status st);
unsigned og_status_http(og_status st, const char **code);

/* Policy decision for the request; NULL when allowed, else the 403 (or 500) response. */
struct MHD_Response *og_req_authorize(og_req *r, og_action a, const char *branch, const char *target_branch);

/* The decision alone (logged like og_req_authorize, no response): OG_OK and *d, or the
 * policy's error. */
/* Room for an actor id looked up in a branch log (OG_ACTOR_MAX in graph/graph.h, + NUL). */
#define OG_ACTOR_NAME_MAX 260
/* Who created `branch` on the request's graph into out ("" when unknown, or when the graph's
 * bundle has no `owned` scope and so the look-up is skipped). */
void og_req_branch_creator(og_req *r, const char *branch, char *out, size_t cap);
og_status og_req_decide(og_req *r, og_action a, const char *branch, const char *target_branch, og_authz_decision *d);
/* Takes one of the actor's write slots; NULL when admitted, else the 429. */
struct MHD_Response *og_req_admit(og_req *r);
/* The same without a response: 1 when admitted (or already holding a slot), 0 when refused. */
int og_req_take_slot(og_req *r);
/* Server-wide memory admission of a read query (docs/server.md "Memory"): NULL when
 * admitted (release with og_req_mem_release), else the 503. */
struct MHD_Response *og_req_mem_admit(og_req *r);
void og_req_mem_release(og_req *r);
/* Frees the request's slot, if it holds one. */
void og_req_admit_release(og_req *r);

/* Query-string value (NULL when absent). */
const char *og_req_arg(og_req *r, const char *name);
const char *og_req_header(og_req *r, const char *name);
/* A string field of the JSON body (NULL when absent or null); *bad set when present with another type. */
const char *og_req_str(og_req *r, const char *key, int *bad);

uint64_t og_now_us(void);

/* routes.c: the ad-hoc lane's read and mutation bodies, shared with stored queries */
struct MHD_Response *og_run_read(og_req *r, const char *src, const char *name, const char *params, const char *branch,
                                 const char *snapshot);
struct MHD_Response *og_run_mutation(og_req *r, const char *src, const char *name, const char *params,
                                     const char *branch, const char *cas);
struct MHD_Response *og_bad(og_req *r, const char *fmt, const char *arg);
const char *og_req_cas(og_req *r, int conditional, struct MHD_Response **resp);
/* routes_queries.c */
struct MHD_Response *og_h_queries_list(og_req *r);
struct MHD_Response *og_h_query_invoke(og_req *r);
struct MHD_Response *og_h_query_invoke_if(og_req *r);
struct MHD_Response *og_h_mcp(og_req *r);
/* mcp_stream.c: the per-(graph, actor) MCP log level, and live SSE delivery of a call's
 * notifications.  og_mcp_live runs the request on a thread of its own: 1 with *resp the SSE
 * stream (the job is the request's until og_mcp_live_end, called when it completes), or 1
 * with *resp NULL and *status / *out / *st the plain answer of a call that sent nothing; 0
 * when no thread could be started (handle it inline). */
og_mcp_log_level og_mcp_level_get(og_server *s, const char *graph, const char *actor);
void og_mcp_level_put(og_server *s, const char *graph, const char *actor, og_mcp_log_level lv);
int og_mcp_live(og_req *r, const og_mcp_opts *opts, const og_mcp_http_request *hr, struct MHD_Response **resp,
                unsigned *status, char **out, og_status *st);
void og_mcp_live_end(og_req *r);
/* routes_queries.c: the request's tools/call leaves the cancellable set (on the thread that ran
 * it, which stops watching its flag); nothing when it was not registered. */
void og_mcp_running_end(og_req *r);
/* The log level a request's MCP call ended with: its session's when it is in one, else its
 * (graph, actor)'s. */
void og_mcp_level_save(og_req *r, og_mcp_log_level lv);
/* mcp_session.c: MCP sessions.  new: 0 with `id` set (OG_MCP_SESSION_ID_LEN hex digits), -1
 * when none could be issued (no randomness; an actor name too long to keep).  get: 1 when `id`
 * is a live session of this graph and actor (its use is recorded, *lv its level), else 0.
 * end: 1 when it was one (it is forgotten), else 0.  set_level: a no-op for a forgotten one. */
int og_mcp_session_new(og_server *s, const char *graph, const char *actor, const char *version, char *id);
int og_mcp_session_get(og_server *s, const char *id, const char *graph, const char *actor, og_mcp_log_level *lv);
int og_mcp_session_end(og_server *s, const char *id, const char *graph, const char *actor);
void og_mcp_session_set_level(og_server *s, const char *id, og_mcp_log_level lv);
/* routes_changes.c */
struct MHD_Response *og_h_commit_changes(og_req *r);
struct MHD_Response *og_h_changes(og_req *r);
struct MHD_Response *og_h_diff(og_req *r);
/* routes_lint.c */
struct MHD_Response *og_h_lint(og_req *r);
/* routes_graphs.c: graphs created and deleted while serving (--graph-dir) */
struct MHD_Response *og_h_graph_create(og_req *r);
struct MHD_Response *og_h_graph_delete(og_req *r);
void og_server_graph_unref(og_server *s, og_served_graph *g); /* the last reference of a dead graph closes it */
int og_graph_id_valid(const char *id);
void og_served_graph_release(og_served_graph *g);
/* routes_ext.c: OmniGraph-C's routes beyond the reference's (docs/server.md) */
struct MHD_Response *og_h_query_explain(og_req *r);
/* routes_blob.c */
struct MHD_Response *og_h_blob(og_req *r);
/* routes_proposals.c: merge proposals */
struct MHD_Response *og_h_proposal_create(og_req *r);
struct MHD_Response *og_h_proposal_list(og_req *r);
struct MHD_Response *og_h_proposal_show(og_req *r);
struct MHD_Response *og_h_proposal_approve(og_req *r);
struct MHD_Response *og_h_proposal_close(og_req *r);
/* ui.c: OmniGraph Studio's files at /ui/ (docs/studio.md) */
int og_ui_path(const char *url);
struct MHD_Response *og_ui_answer(og_req *r);

#endif
