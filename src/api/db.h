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
};

/* The per-type table list of a read's snapshot, as the snapshot JSON shows it:
 * [{"type","kind","table","version","rows"}], nodes then edges in catalog order. */
json_t *og_api_tables_json(og_read *r);

/* The embedding provider of `nearest($v.p, "text")` queries (embed.c): the text's vector as
 * dim floats into out.  This build has no provider yet: always OG_ERR_UNSUPPORTED, naming
 * the way out (pass a vector).  The seam for a real provider (docs/search.md). */
og_status og_api_embed_text(void *ud, const char *text, size_t len, uint32_t dim, float *out);

#endif
