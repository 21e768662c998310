/*
 * db.h — the og_db handle behind the public API (private to src/api/): one engine handle.
 */
#ifndef OG_API_DB_H
#define OG_API_DB_H

#include <jansson.h>
#include <pthread.h>

#include "engine/engine.h"
#include "omnigraph.h"

/* Remembered first-parent depths of commits (commit_depth.c). */
typedef struct og_api_depth_memo {
    pthread_mutex_t mu;
    struct depth_slot *slots; /* NULL until first use */
    size_t n;
} og_api_depth_memo;

struct og_db {
    og_engine *e;
    char uri[1024];                 /* as opened: names the graph's embedding cache */
    struct og_api_embed_state *emb; /* query-time embedder and cache, made on first use (api_embed.c) */
    og_budget budget;               /* og_db_set_budget (api_budget.c); zeros = the defaults */
    og_budget write_budget;         /* og_db_set_write_budget: mutations and loads */
    const volatile int *cancel;     /* og_db_set_cancel: nonzero stops the running call */
    og_api_depth_memo depth;        /* og_api_commit_depth */
};

/* The cache bound to open a handle with: `requested` when nonzero, else $OMNIGRAPH_CACHE_SIZE
 * (512M, 2G, bytes), else 0 (the graph layer's default, 64 MiB) — cache_size.c. */
size_t og_api_cache_bytes(size_t requested);
/* A size as an operator writes it: bytes, or with a K/M/G/T suffix (binary; "512M", "2GiB",
 * "64kb").  1 and *out set when `s` is one, 0 when it is not (or is 0, or overflows). */
int og_api_size_parse(const char *s, uint64_t *out);

void og_api_depth_memo_init(og_api_depth_memo *m);
void og_api_depth_memo_free(og_api_depth_memo *m);
/* The first-parent depth of `commit`: 1 for the genesis commit, its first parent's + 1 (over the
 * history cleanup has kept when first computed); the reference's graph_manifest_version.  Each
 * commit's depth is walked once per handle (commit_depth.c). */
og_status og_api_commit_depth(og_db *db, const char *commit, size_t *depth);

/* Begins the calling thread's query budget for a read on db (api_budget.c): the per-call one
 * (og_db_query_budget), else the handle's, else the environment's, else the defaults. */
struct og_query_budget;
void og_api_budget_begin(og_db *db, struct og_query_budget *qb);
/* The same for a write (a mutation or a load: `what`): og_db_mutate_budget / og_db_load_budget,
 * else og_db_set_write_budget, else $OG_WRITE_TIMEOUT_MS / $OG_WRITE_MAX_MEMORY, else
 * OG_WRITE_DEFAULT_*. */
void og_api_write_budget_begin(og_db *db, struct og_query_budget *qb, const char *what);

/* The query-time embedding state of a graph opened at `uri` (api_embed.c): made before the
 * engine (it is the engine's embed_ud), its provider resolved from the environment on first
 * use.  NULL when out of memory.  Freed after the engine closes. */
struct og_api_embed_state *og_api_embed_state_new(const char *uri);
void og_api_embed_state_free(struct og_api_embed_state *s);

/* The per-type table list of a read's snapshot, as the snapshot JSON shows it:
 * [{"type","kind","table","version","rows"}], nodes then edges in catalog order. */
json_t *og_api_tables_json(og_read *r);

/* The embedding of `nearest($v.p, "text")` query text (api_embed.c; ud = the state): the
 * configured provider through the graph's embedding cache, role QUERY.  `model` (may be NULL)
 * is the model @embed recorded: the provider must resolve to it (else OG_ERR_TYPE). */
og_status og_api_embed_text(void *ud, const char *model, const char *text, size_t len, uint32_t dim, float *out);

/* og_db_resolve_commit for an optional reference (commitref.c): *out = NULL when ref is
 * NULL, else buf holding the resolved id. */
og_status og_api_resolve_opt(og_db *db, const char *ref, char buf[27], const char **out);

#endif
