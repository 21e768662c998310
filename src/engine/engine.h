/*
 * engine.h — the embedded graph database: one handle over one graph root (ARCHITECTURE.md
 * §3).  It joins the compiler (catalogs, IR), the graph authority (snapshots, the write
 * protocol) and the tables (views, staged writes).  The public API (include/omnigraph.h) is
 * a thin wrapper over this header; nothing here knows about JSON wire shapes or HTTP.
 *
 * Reads resolve ONE snapshot (a branch head or a commit id) at their start and use it for
 * their whole life (INVARIANTS.md 3).  Writes go through og_graph_write, the one door.
 *
 * Errors: og_status with og_error_message(); compile errors are OG_ERR_PARSE / OG_ERR_TYPE
 * with "file:line:col: message" text (and a hint line when the compiler gave one).
 */
#ifndef OG_ENGINE_ENGINE_H
#define OG_ENGINE_ENGINE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/catalog.h"
#include "engine/exec.h"
#include "engine/tableview.h"
#include "graph/graph.h"
#include "omnigraph.h"
#include "store/store.h"

typedef struct og_engine og_engine;

typedef struct og_engine_opts {
    const char *actor;   /* recorded on commits; NULL = "omnigraph" */
    size_t cache_bytes;  /* bound of the handle's cache; 0 = default */
    /* Optional: the embedding of a query string for `nearest($v.p, "text")`, dim floats into
     * out.  NULL = no provider: such queries fail with OG_ERR_UNSUPPORTED. */
    og_status (*embed)(void *ud, const char *model, const char *text, size_t len, uint32_t dim, float *out);
    void *embed_ud;
    const char *actor_via; /* how `actor` was established (og_commit.actor_via); NULL = "local" */
} og_engine_opts;

/* Creates a graph at `uri` from schema text (`file` names it in errors): an empty table per
 * node and edge type, the schema object, the genesis commit and branch main.
 * Errors: compile errors; OG_ERR_ALREADY_EXISTS when a graph is there. */
og_status og_engine_init(og_engine **out, const char *uri, const char *file, const char *schema, size_t len,
                         const og_engine_opts *opts);
og_status og_engine_open(og_engine **out, const char *uri, const og_engine_opts *opts);
void og_engine_close(og_engine *e);

og_graph *og_engine_graph(og_engine *e);
og_store *og_engine_store(og_engine *e);
/* The actor a write records: the calling thread's (og_engine_set_thread_actor), else the
 * handle's. */
const char *og_engine_actor(const og_engine *e);
/* Sets (NULL: clears) the calling thread's actor for writes through any handle. */
og_status og_engine_set_thread_actor(const char *actor);
/* The same with its provenance (og_commit.actor_via: "token", "unauthenticated", ...); actor
 * may be NULL with a via (the handle's actor, established this way).  NULL, NULL clears. */
og_status og_engine_set_thread_actor_via(const char *actor, const char *via);
/* The provenance a write records: the calling thread's when it set one, else the handle's. */
const char *og_engine_actor_via(const og_engine *e);
/* The message the calling thread's next writes record on their commits (NULL: none); set,
 * like the actor, by the surface serving the request (CLI -m, a server write's "message"). */
og_status og_engine_set_thread_message(const char *message);
const char *og_engine_message(void);

/* ---- reads ------------------------------------------------------------------------------- */

/* One read: a snapshot, its catalog and the table views it has opened.  `commit` non-NULL
 * reads that commit (time travel), else the head of `branch` (NULL = "main"). */
typedef struct og_read og_read;
og_status og_read_begin(og_read **out, og_engine *e, const char *branch, const char *commit);
/* A read over a snapshot the caller holds (a writer's captured base); borrows it. */
og_status og_read_begin_at(og_read **out, og_engine *e, const og_snapshot *snap);
void og_read_end(og_read *r);
const og_snapshot *og_read_snapshot(const og_read *r);
const og_catalog *og_read_catalog(const og_read *r);
/* The executor's view of this read's tables. */
void og_read_source(og_read *r, og_exec_source *out);
/* The table view of node type `node` / edge type `edge` (borrowed, valid until og_read_end). */
og_status og_read_node_view(og_read *r, size_t node, og_tableview **out);
og_status og_read_edge_view(og_read *r, size_t edge, og_tableview **out);

/* A compiled query: the IR (owns its arena) plus the parsed file it came from. */
typedef struct og_compiled og_compiled;
/* Compiles query `name` (NULL = the file's only query) of `gq` against the read's catalog. */
og_status og_compile(og_compiled **out, const og_catalog *cat, const char *file, const char *gq, size_t len,
                     const char *name);
const og_ir_query *og_compiled_ir(const og_compiled *c);
void og_compiled_free(og_compiled *c);

/* Runs a read query; `params` may be NULL.  `out` must be freed with og_result_free. */
og_status og_engine_query(og_engine *e, const char *branch, const char *commit, const char *file, const char *gq,
                          size_t len, const char *name, const json_t *params, og_result *out,
                          char commit_id_out[OG_ULID_LEN + 1]);

/* The plan of a read query as text (og_exec_explain), appended to `out`; `run` executes the
 * query too and adds the actual rows of every step.  Errors as og_engine_query. */
og_status og_engine_query_explain(og_engine *e, const char *branch, const char *commit, const char *file, const char *gq,
                                  size_t len, const char *name, const json_t *params, int run, og_buf *out,
                                  char commit_id_out[OG_ULID_LEN + 1]);

#endif
