/*
 * history.h — walks of the commit DAG (reference-storage.md §2, STORAGE.md §7): the
 * first-parent history of a branch or commit, newest first, and the merge base of two
 * commits.  Commits are immutable, so every walk reads through the graph handle's object
 * cache; nothing here writes.
 *
 * Merge base: the common ancestor (through every parent link, a commit being its own
 * ancestor) with the smallest summed distance from the two commits; ties go to the later
 * commit (created_at, then id).  Distances are shortest-path lengths in parent links.
 *
 * Errors: OG_ERR_NOT_FOUND (a commit that was never written or was reclaimed),
 * OG_ERR_INVALID (not a commit id), OG_ERR_CORRUPT, OG_ERR_NOMEM, store errors.
 */
#ifndef OG_ENGINE_HISTORY_H
#define OG_ENGINE_HISTORY_H

#include <stddef.h>

#include "graph/graph.h"

typedef struct og_commit_id {
    char id[OG_ULID_LEN + 1];
} og_commit_id;

/* The first-parent chain from commit `start` (included), newest first, at most `limit`
 * commits (0 = all).  *out is malloc'd (free it); *n its length (>= 1). */
og_status og_history_first_parent(og_graph *g, const char *start, size_t limit, og_commit_id **out, size_t *n);
/* The same, stopping before the first commit for which stop(ud, id) is 1 (that commit is not
 * read or listed, and *n may be 0).  The chain also ends where cleanup reclaimed a parent. */
og_status og_history_first_parent_until(og_graph *g, const char *start, size_t limit,
                                        int (*stop)(void *ud, const char *id), void *ud, og_commit_id **out,
                                        size_t *n);

/* The merge base of commits a and b.  *found = 0 when they share no ancestor (two unrelated
 * histories; cannot happen inside one graph, whose every commit descends from genesis). */
og_status og_history_merge_base(og_graph *g, const char *a, const char *b, char out[OG_ULID_LEN + 1], int *found);

/* `--from BASE` of the write verbs: creates `branch` from the head of branch `from` when
 * `branch` has no live head (never existed, or its newest entry is a delete: a new
 * incarnation).  A live branch is left alone — also when a concurrent writer created it
 * between the look and the create (that create's ALREADY_EXISTS is success).  Writes no
 * commit.  Errors: OG_ERR_NOT_FOUND (from), OG_ERR_INVALID (names), store errors. */
og_status og_history_fork_missing(og_graph *g, const char *branch, const char *from, const char *actor);

/* 1 in *yes when commit `anc` is an ancestor of (or equal to) commit `desc`. */
og_status og_history_is_ancestor(og_graph *g, const char *anc, const char *desc, int *yes);

#endif
