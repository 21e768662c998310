/*
 * origin.h — where a live branch came from: its create entry (who created it, from which
 * commit, when), for branch listings an agent reads to tell its branches from others'
 * (docs/versioning.md "Branches").
 *
 * Why a lookup and not a copy in every log entry: the create entry is already in the
 * branch's log and immutable; the entries of one incarnation are a dense run of seqs ending at
 * the head, so the create entry is found by a binary search over seq (O(log n) entry reads,
 * each cached by key like every log entry), without changing the log format.
 */
#ifndef OG_GRAPH_ORIGIN_H
#define OG_GRAPH_ORIGIN_H

#include "graph/graph.h"

/* The create entry of the incarnation `head` (a live branch's newest entry) belongs to: its
 * actor is the creator, its commit the base, its `at` the creation time.  OG_ERR_NOT_FOUND
 * when it is no longer in the store; OG_ERR_CORRUPT when the log contradicts itself. */
og_status og_branch_origin(og_graph *g, const og_ref_entry *head, og_ref_entry *out);

#endif
