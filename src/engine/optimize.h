/*
 * optimize.h — compaction as a graph commit (STORAGE.md §9, issue 17): small fragments are
 * merged and deletion vectors materialised into new data files, published as ONE `optimize`
 * commit through og_graph_write (the one door).  Same rows, same ids, same answers: only the
 * physical layout changes (INVARIANTS.md 7).
 *
 * Policy, per table of the branch head: walk the fragments in manifest order; a fragment is a
 * candidate when it holds fewer than `target_rows` physical rows or has a deletion file.
 * Consecutive candidates are grouped while the group's live rows stay within target_rows; a
 * group of two or more fragments, or a single fragment with deletions, becomes one new
 * fragment at the place of its first (row order kept).  A table without such a group is left
 * as it is; when no table changes nothing is published (so a second run is a no-op).  A lost
 * publish re-plans from the new head (the protocol re-runs the whole attempt).
 *
 * Automatic compaction (og_engine_auto_optimize): after a write is published, a table of the
 * new head with more than `OG_AUTO_OPTIMIZE_FRAGMENTS` (default 16; 0 = never) SMALL fragments
 * (under OG_AUTO_OPTIMIZE_SMALL_ROWS = 65,536 rows, a load's flush size) triggers one TIERED
 * optimize of that branch: per table over the threshold, only the newest run of small
 * fragments is merged — from the newest fragment back, while each older fragment holds at
 * most OG_AUTO_OPTIMIZE_FACTOR (4) times the live rows gathered so far (at least two
 * fragments) and the group stays within 65,536 rows.  Fragment sizes so fall geometrically
 * from old to new, like the digits of a counter: the fragments a read opens stay at most the
 * threshold (+1 before the trigger), and a row is rewritten about log(rows) times in all —
 * the cost of a one-row commit does not grow with the history (merging every small fragment
 * each time rewrote the whole accumulated tail: O(rows) per trigger).  A bulk load's full
 * fragments are never rewritten by it.  It runs after the write's own commit is visible and
 * never fails that write.
 */
#ifndef OG_ENGINE_OPTIMIZE_H
#define OG_ENGINE_OPTIMIZE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define OG_OPTIMIZE_TARGET_ROWS ((uint64_t)1 << 20)
/* The default target of a node table with a Vector property: its data files (one ANN graph
 * each) stay at a load's flush size, where the default search beam keeps recall (optimize.c). */
#define OG_OPTIMIZE_VECTOR_TARGET_ROWS ((uint64_t)65536)
#define OG_AUTO_OPTIMIZE_FRAGMENTS 16
#define OG_AUTO_OPTIMIZE_SMALL_ROWS ((uint64_t)65536)
#define OG_AUTO_OPTIMIZE_FACTOR 4

typedef struct og_optimize_opts {
    const char *branch;       /* NULL = "main" */
    uint64_t target_rows;     /* 0 = OG_OPTIMIZE_TARGET_ROWS (OG_OPTIMIZE_VECTOR_TARGET_ROWS for a
                               * node table with a Vector property) */
    const char *expected_head;/* may be NULL */
    size_t tiered;            /* > 0: only tables with more than this many fragments under
                               * target_rows, and only their newest run (the automatic policy) */
    /* Test-only: called after an attempt has planned and written its new data files and
     * manifests, before it publishes (a test publishes a concurrent write there to force the
     * lost publish and re-plan). */
    void (*attempt_hook)(int attempt, void *arg);
    void *attempt_hook_arg;
} og_optimize_opts;

typedef struct og_optimize_report {
    int published;                /* 0: nothing to do */
    char commit[OG_ULID_LEN + 1]; /* the optimize commit */
    int attempts;
    size_t tables;                /* tables given a new version */
    size_t fragments_before, fragments_after; /* over those tables */
    size_t groups;                /* new fragments written */
    uint64_t rows_rewritten;      /* live rows copied into new files */
    uint64_t deleted_rows_dropped;/* deleted rows no longer stored */
} og_optimize_report;

/* Optimizes the head of a branch.  Errors: OG_ERR_NOT_FOUND (branch), the write protocol's
 * (OG_ERR_CONFLICT after its retry bound, OG_ERR_PRECONDITION_FAILED), the table layer's. */
og_status og_engine_optimize(og_engine *e, const og_optimize_opts *opts, og_optimize_report *out);

/* The automatic policy above, for `branch` after a published write.  Returns what it did
 * (report->published 0 when under the threshold); errors are for the caller to log, never to
 * fail the write with.  `commit` (may be NULL = the branch head, re-read) is the commit the
 * write published: the decision is taken on it, which costs no store request (it is cached),
 * and a compaction it starts captures the head afresh anyway. */
og_status og_engine_auto_optimize(og_engine *e, const char *branch, const char *commit, og_optimize_report *out);

/* The threshold in force (OG_AUTO_OPTIMIZE_FRAGMENTS or $OG_AUTO_OPTIMIZE_FRAGMENTS). */
size_t og_engine_auto_optimize_threshold(void);

#endif
