/*
 * load.h — `load`: one NDJSON file becomes one graph commit (reference-language.md §6).
 *
 * Modes (required, no default): overwrite replaces every node/edge type present in the file
 * with exactly the file's rows; append is a strict insert (an existing id is a key conflict);
 * merge is an upsert by id.  Everything is validated against the base snapshot plus the file
 * before any byte is written; a failed load publishes nothing.
 */
#ifndef OG_ENGINE_LOAD_H
#define OG_ENGINE_LOAD_H

#include "engine/engine.h"

/* og_load_mode and og_load_opts are the public API's (omnigraph.h). */

/* "overwrite" / "append" / "merge" -> mode; OG_ERR_INVALID otherwise. */
og_status og_load_mode_parse(const char *s, og_load_mode *out);
const char *og_load_mode_name(og_load_mode m);


typedef struct og_load_stats {
    uint64_t records, inserted, updated;
} og_load_stats;

/* Loads the NDJSON file at `path` (read again from the start on each publish attempt).
 * out (may be NULL) receives the published commit. */
og_status og_engine_load(og_engine *e, const char *path, const og_load_opts *opts, og_write_result *out,
                         og_load_stats *stats);

#endif
