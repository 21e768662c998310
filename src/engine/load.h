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

typedef enum og_load_mode { OG_LOAD_OVERWRITE = 1, OG_LOAD_APPEND, OG_LOAD_MERGE } og_load_mode;

/* "overwrite" / "append" / "merge" -> mode; OG_ERR_INVALID otherwise. */
og_status og_load_mode_parse(const char *s, og_load_mode *out);
const char *og_load_mode_name(og_load_mode m);

typedef struct og_load_opts {
    og_load_mode mode;
    const char *branch;        /* NULL = "main" */
    const char *from;          /* fork `branch` from this branch first when it does not exist */
    const char *expected_head; /* --if-commit: the head must be this commit */
    int progress;              /* report progress on stderr every 100,000 records */
} og_load_opts;

typedef struct og_load_stats {
    uint64_t records, inserted, updated;
} og_load_stats;

/* Loads the NDJSON file at `path` (read again from the start on each publish attempt).
 * out (may be NULL) receives the published commit. */
og_status og_engine_load(og_engine *e, const char *path, const og_load_opts *opts, og_write_result *out,
                         og_load_stats *stats);

#endif
