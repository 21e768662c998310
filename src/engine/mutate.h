/*
 * mutate.h — `.gq` mutations (reference-language.md §4): insert (keyed upsert, unkeyed strict),
 * update (read-your-writes within the query), delete with edge cascade; all statements of a
 * query stage into one plan, are validated once, and publish one commit (INVARIANTS.md 4).
 */
#ifndef OG_ENGINE_MUTATE_H
#define OG_ENGINE_MUTATE_H

#include "engine/engine.h"

typedef struct og_mutate_opts {
    const char *branch;        /* NULL = "main" */
    const char *expected_head; /* --if-commit: OG_ERR_PRECONDITION_FAILED when the head differs */
} og_mutate_opts;

typedef struct og_mutate_stats {
    uint64_t affected_nodes, affected_edges;
    /* the same rows by what happened to them: inserted (a new id), updated (an `update`, or an
     * `insert` whose key existed: an upsert), deleted (also edges removed by a cascade) */
    uint64_t inserted, updated, deleted;
} og_mutate_stats;

/* Runs mutation `name` (NULL = the only query) of `gq` with JSON params.  When nothing
 * matched, no commit is published (out->published == 0). */
og_status og_engine_mutate(og_engine *e, const char *file, const char *gq, size_t len, const char *name,
                           const json_t *params, const og_mutate_opts *opts, og_write_result *out,
                           og_mutate_stats *stats);

#endif
