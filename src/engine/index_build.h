/*
 * index_build.h — the reconciler of persisted property indexes (index/index.h,
 * docs/indexes.md): for the head of a branch, every node property with an index intent, every
 * registered index kind that applies to it, every data file of its table version — report
 * whether the data file's index file exists and is whole, and (build) write the missing ones.
 *
 * Off the write path: it reads a snapshot and writes only index files (put_if_absent), never a
 * commit, so a load or mutation running at the same time neither waits nor conflicts; a
 * commit published meanwhile simply leaves its new data files for the next run.  A damaged
 * index file is deleted and rebuilt.  A crash leaves every file absent or whole (fault point
 * `index.build.after_file` after each file).
 */
#ifndef OG_ENGINE_INDEX_BUILD_H
#define OG_ENGINE_INDEX_BUILD_H

#include <jansson.h>

#include "engine/engine.h"

typedef struct og_index_run_opts {
    const char *branch;   /* NULL = "main" */
    const char *kind;     /* an index kind name ("fts", ...); NULL = every kind */
    const char *property; /* "prop" or "Type.prop"; NULL = every indexed property */
    int build;            /* 0: status only; 1: also build what is missing */
} og_index_run_opts;

/* Runs the reconciler and returns its report (owned):
 *   {"branch","commit","files","covered","built",
 *    "indexes":[{"type","property","kind","table","version","files","covered","built",
 *                "null_files"}]}
 * files = data files holding the property, covered = those with a whole index file after the
 * run, built = files written by this run, null_files = fragments written before the property
 * existed (all null, nothing to index).  Errors: OG_ERR_INVALID (an unknown kind),
 * OG_ERR_NOT_FOUND (branch; a property filter that names no indexed property), the table and
 * store layers' errors. */
og_status og_engine_index_run(og_engine *e, const og_index_run_opts *o, json_t **report);

/* Indexes follow the data (docs/indexes.md "Automatic indexing"): called by the writer right
 * after a load or mutation published (never before: the commit is visible whatever happens
 * here).  `rows_written` = node rows the write inserted or updated, `compacted` = the write's
 * automatic compaction published.  When either makes new data files worth indexing (rows_written
 * >= the threshold, or a compaction), every `fts` / `vector` property whose data files without
 * an index file hold at least og_engine_auto_index_rows() rows gets them built.  Unlike `index
 * build`, an existing file counts as covered without a checksum pass (that would read every
 * index file of the table after every load); `index build` still finds and replaces damage.  A write below
 * the threshold costs nothing here (not one store request).  *built = files written.  Errors as
 * og_engine_index_run; the caller reports them and never fails the write. */
#define OG_AUTO_INDEX_ROWS ((uint64_t)1000)
og_status og_engine_index_auto(og_engine *e, const char *branch, uint64_t rows_written, int compacted,
                               uint64_t *built);
/* The threshold in force: OG_AUTO_INDEX_ROWS, or $OG_AUTO_INDEX_ROWS (0 = never). */
uint64_t og_engine_auto_index_rows(void);

#endif
