/*
 * db.h — the og_db handle behind the public API (private to src/api/): one engine handle.
 */
#ifndef OG_API_DB_H
#define OG_API_DB_H

#include "engine/engine.h"
#include "omnigraph.h"

struct og_db {
    og_engine *e;
};

#endif
