/*
 * server.h — omnigraph-server as a library (the `omnigraph-server` binary is a thin main
 * over it): an HTTP/1.1 surface over include/omnigraph.h serving one or more graphs under
 * /graphs/{graph_id}/… (reference-surfaces.md §2), with bearer-token actors (§3), a policy
 * decision per request (authz.h, §4) and one audit line per request.
 *
 * Life cycle: og_server_new, og_server_add_graph (each opens an og_db), og_server_start
 * (binds, serves on its own thread pool), og_server_stop (stops accepting, lets in-flight
 * requests finish, closes), og_server_free.
 */
#ifndef OG_SERVER_SERVER_H
#define OG_SERVER_SERVER_H

#include <stddef.h>
#include <stdio.h>

#include "omnigraph.h"
#include "server/auth.h"
#include "server/authz.h"

#define OG_SERVER_BODY_LIMIT (1u << 20)       /* JSON request bodies */
#define OG_SERVER_LOAD_BODY_LIMIT (32u << 20) /* /load, /load/ndjson, /ingest */

typedef struct og_server og_server;

typedef struct og_server_opts {
    const char *bind;           /* "HOST:PORT" (IPv4 or "localhost"); NULL = "127.0.0.1:8080" */
    unsigned threads;           /* worker threads (requests running at once); 0 = 8 */
    unsigned timeout_s;         /* idle connection timeout; 0 = 30 */
    unsigned max_connections;   /* open connections; 0 = 1024 */
    unsigned max_per_address;   /* open connections from one client address; 0 = 512 */
    unsigned header_timeout_s;  /* a request head complete, a body's next KiB, within; 0 = 10 */
    unsigned max_queued;        /* complete requests waiting for a worker; 0 = 512 (503 beyond) */
    size_t body_limit;          /* 0 = OG_SERVER_BODY_LIMIT */
    size_t load_body_limit;     /* 0 = OG_SERVER_LOAD_BODY_LIMIT */
    og_tokenset *tokens;          /* taken over by the server (may be NULL) */
    int unauthenticated;        /* --unauthenticated */
    int allow_public_unauthenticated; /* --unauthenticated on a non-loopback address */
    const og_authz *policy;     /* NULL: no policy file (the runtime state decides) */
    unsigned export_slots;      /* concurrent export streams; 0 = 8 */
    FILE *log;                  /* audit log (one JSON line per request); NULL = stderr */
    int cluster;                /* serving an applied cluster: schema apply is 409 (use cluster apply) */
    unsigned per_actor_inflight; /* admission: concurrent writes per actor; 0 = 16 (429 beyond) */
    const char *const *allowed_hosts; /* --allowed-host: more names (or name:port) the server answers
                                       * to; the strings must outlive the server */
    size_t nallowed_hosts;
    int64_t max_memory;         /* bytes all concurrent read queries may hold together; 0 = half the
                                 * machine's memory, -1 = unbounded (docs/server.md "Memory") */
    og_budget budget;           /* every served graph's default query budgets (og_db_set_budget; 0 fields inherit) */
    const char *graph_dir;      /* --graph-dir: a local directory under which POST /graphs creates graphs (and
                                 * DELETE /graphs/{id} removes them); NULL = graphs are only those given at boot */
    const char *mcp_agent_branch; /* --mcp-agent-branch: the MCP default agent-branch rule (og_mcp_opts.agent_branch;
                                   * "{actor}" = the caller); NULL = MCP writes must name their branch */
} og_server_opts;

/* Classifies the runtime state (auth.h); errors name the remedy on stderr. */
og_status og_server_new(og_server **out, const og_server_opts *opts);
/* Serves graph `id` (^[a-zA-Z0-9-]{1,64}$, not a reserved word) at `uri` (a directory or
 * s3://...).  OG_ERR_INVALID (id), OG_ERR_ALREADY_EXISTS (id taken), og_db_open's errors. */
og_status og_server_add_graph(og_server *s, const char *id, const char *uri);
/* The open og_db of served graph `id` (NULL when unknown): for type-checking its stored
 * queries before serving them. */
og_db *og_server_graph_db(og_server *s, const char *id);
/* Publishes graph `id`'s stored queries (the set is taken over; freed with the server):
 * listed at GET /graphs/{id}/queries, invoked at POST /graphs/{id}/queries/{name}, and MCP
 * tools at /graphs/{id}/mcp.  OG_ERR_NOT_FOUND for an unknown id (the set is freed). */
struct og_stored_set;
og_status og_server_set_queries(og_server *s, const char *id, struct og_stored_set *set);
/* Stops serving graph `id` (quarantine at boot: it is absent from /graphs and its routes 404). */
void og_server_remove_graph(og_server *s, const char *id);
/* Binds and starts serving; `addr` receives "host:port" (the real port when 0 was asked). */
og_status og_server_start(og_server *s, char *addr, size_t addr_len);
/* Graceful stop: no new connections; waits up to `grace_s` seconds for in-flight requests. */
void og_server_stop(og_server *s, unsigned grace_s);
void og_server_free(og_server *s);

/* The OpenAPI 3.1 document of the routes this server answers (JSON text; free()). */
char *og_server_openapi(int auth_enabled);

#endif
