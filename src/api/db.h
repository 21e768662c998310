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

#endif
