/*
 * proposal.h — where merge proposals live in a graph's store (docs/versioning.md "Merge
 * proposals"): one append-only log per proposal, `_graph/proposals/<id>/<seq>.json`, whose
 * entries are JSON event records (opened, merged, closed).
 *
 * Why a log of its own and not commits: a proposal is review metadata about two branches,
 * not graph content, so it must not move a branch head or appear in a branch's history; but
 * it must survive restarts and be the same for every process serving the graph, so it lives
 * in the store, not in a server's memory.  Each entry is created with put-if-absent at the
 * next seq, exactly like a branch log entry: of two reviewers racing to approve and to close,
 * exactly one gets seq 2 and the other sees the proposal already decided.  Entries are
 * immutable (invariant 5); cleanup never lists this prefix.  This file knows only key names;
 * what an event means is the API's (src/api/api_proposals.c).
 */
#ifndef OG_GRAPH_PROPOSAL_H
#define OG_GRAPH_PROPOSAL_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

/* Appends event `seq` (1 = the opening one) of proposal `id` (a ULID).  OG_ERR_ALREADY_EXISTS
 * when another writer took that seq first (re-read and decide again). */
og_status og_proposal_append(og_graph *g, const char *id, uint64_t seq, const char *json, size_t len);

/* The events of proposal `id` in seq order: texts[i] (NUL-terminated, malloc'd) for seq i+1.
 * *n = 0 when it has none (an unknown id).  Free with og_proposal_texts_free. */
og_status og_proposal_events(og_graph *g, const char *id, char ***texts, size_t *n);

/* The ids of every proposal (ULIDs, so oldest first), malloc'd.  Free with og_proposal_texts_free. */
og_status og_proposal_ids(og_graph *g, char ***ids, size_t *n);

void og_proposal_texts_free(char **texts, size_t n);

#endif
