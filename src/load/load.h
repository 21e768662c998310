/*
 * load.h — `load`: one NDJSON file becomes one graph commit (reference-language.md §6).
 *
 * Modes (required, no default): overwrite replaces every node/edge type present in the file
 * with exactly the file's rows; append is a strict insert (an existing id is a key conflict);
 * merge is an upsert by id.  Everything is validated against the base snapshot plus the file
 * before anything is published; a failed load publishes nothing.
 *
 * Streaming (docs/load.md): the file is read one line at a time and each type's staged rows
 * are flushed to unreachable data files of that type's table txn every OG_LOAD_FLUSH_ROWS
 * rows (default 65,536) or OG_LOAD_FLUSH_BYTES bytes (default 64 MiB) — environment knobs for
 * tests and tuning — so memory is bounded by the ids and constraint-key values of the file
 * plus one batch per type, not by the file.  With opts->progress a line goes to stderr every
 * 100,000 records: records, bytes read / file size, flushed batches.
 */
#ifndef OG_LOAD_LOAD_H
#define OG_LOAD_LOAD_H

#include "engine/engine.h"

/* og_load_mode, og_load_opts, og_load_mode_parse and og_load_mode_name are the public API's
 * (omnigraph.h); they are implemented in load.c. */


typedef struct og_load_index_job og_load_index_job;

typedef struct og_load_stats {
    uint64_t records, inserted, updated;
    int embed_touched; /* a record of a node type with an @embed property was staged */
} og_load_stats;

/* Loads the NDJSON file at `path` (read again from the start on each publish attempt).
 * out (may be NULL) receives the published commit. */
og_status og_engine_load(og_engine *e, const char *path, const og_load_opts *opts, og_write_result *out,
                         og_load_stats *stats);
/* Loads CSV files (load/csv_load.h; `delim` 0 = ',') as one commit, exactly like an NDJSON
 * file holding their rows in order: messages name "file:line[:column]". */
og_status og_engine_load_csv(og_engine *e, const og_load_csv_file *files, size_t nfiles, char delim,
                             const og_load_opts *opts, og_write_result *out, og_load_stats *stats);

/* The same, but the graph indexes a published load writes (docs/load.md "Graph indexes") run
 * on a thread left in *job (NULL when nothing runs), so the caller's own after-publish work
 * (og_db_load's text indexes) overlaps them; the caller must og_engine_load_indexes_join it.
 * og_engine_load / og_engine_load_csv write them before they return. */
og_status og_engine_load_deferred(og_engine *e, const char *path, const og_load_opts *opts, og_write_result *out,
                                  og_load_stats *stats, og_load_index_job **job);
og_status og_engine_load_csv_deferred(og_engine *e, const og_load_csv_file *files, size_t nfiles, char delim,
                                      const og_load_opts *opts, og_write_result *out, og_load_stats *stats,
                                      og_load_index_job **job);
/* Waits for a deferred index job and frees it (NULL: nothing). */
void og_engine_load_indexes_join(og_load_index_job *j);

#endif
