/*
 * cleanup.h — reclaiming history (STORAGE.md §9, issue 17, docs/maintenance.md).
 *
 * A commit is RETAINED when it is the head of a live branch, or reachable from one (through
 * every parent link) and kept by the retention policy, or younger than the grace period, or
 * named by a branch log entry younger than the grace period.  Retention: with neither knob,
 * every commit reachable from a live head; `keep_commits` N keeps the commits fewer than N
 * parent links from a head; `older_than_ms` D keeps those created within D; with both, a
 * commit is kept when either keeps it.  The walk stops at a commit no rule keeps.
 *
 * Everything else, once older than the grace period, is garbage: commit objects, branch log
 * entries (a prefix of each log, never its newest entry), table versions (manifests numbered
 * below the oldest retained version of their table; the ones above stay so that no number is
 * ever reused, but their files go), data and deletion files no live version names (orphans of
 * failed writes included), and derived files under _index/ whose data file or version triple
 * is not live.  Deletion order and the crash argument: docs/maintenance.md.
 */
#ifndef OG_ENGINE_CLEANUP_H
#define OG_ENGINE_CLEANUP_H

#include <stdint.h>

#include "engine/engine.h"

#define OG_CLEANUP_GRACE_MS (60LL * 60 * 1000) /* one hour: > OG_GRAPH_MAX_PLAN_MS */

typedef struct og_cleanup_opts {
    int64_t keep_commits;   /* <= 0: not set */
    int64_t older_than_ms;  /* < 0: not set */
    int64_t grace_ms;       /* < 0: OG_CLEANUP_GRACE_MS (or $OG_CLEANUP_GRACE) */
    int confirm;            /* 0: dry run (report only) */
    int64_t now_ms;         /* 0: the clock (tests pass a fixed instant) */
} og_cleanup_opts;

typedef struct og_cleanup_report {
    int dry_run;
    uint64_t commits_retained;
    uint64_t commits_removed, commits_bytes;
    uint64_t log_entries_removed, log_entries_bytes;
    uint64_t versions_removed, versions_bytes; /* manifests */
    uint64_t versions_emptied;                 /* manifests kept, their files reclaimed */
    uint64_t files_removed, files_bytes;       /* data + deletion files of unretained versions */
    uint64_t orphans_removed, orphans_bytes;   /* data + deletion files no manifest names */
    uint64_t index_removed, index_bytes;       /* derived files under _index/ */
    uint64_t young_kept;                       /* objects left alone for the grace period */
    uint64_t tables;                           /* tables looked at */
} og_cleanup_report;

/* Errors: OG_ERR_INVALID (options), OG_ERR_CONFLICT (a branch head moved onto a commit this
 * run had planned to remove: nothing of the commit phase was deleted; run it again),
 * OG_ERR_CORRUPT (an object that does not decode: nothing deleted past that point), store
 * errors.  *out counts what was (or, dry, would be) removed, also on error. */
og_status og_engine_cleanup(og_engine *e, const og_cleanup_opts *opts, og_cleanup_report *out);

#endif
