/*
 * db.h — the og_db handle behind the public API (private to src/api/): one engine handle.
 */
#ifndef OG_API_DB_H
#define OG_API_DB_H

#include <jansson.h>

#include "engine/engine.h"
#include "omnigraph.h"

struct og_db {
    og_engine *e;
    char uri[1024];                 /* as opened: names the graph's embedding cache */
    struct og_api_embed_state *emb; /* query-time embedder and cache, made on first use (api_embed.c) */
};

/* Frees db->emb (api_embed.c). */
void og_api_embed_state_free(struct og_api_embed_state *s);

/* The per-type table list of a read's snapshot, as the snapshot JSON shows it:
 * [{"type","kind","table","version","rows"}], nodes then edges in catalog order. */
json_t *og_api_tables_json(og_read *r);

#endif
