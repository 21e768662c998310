/*
 * search_ann.h — approximate candidates for a `nearest` ordering from the per-data-file
 * vector indexes (index/ann.h; docs/search.md "Vector index").
 *
 * The rule (never a post-filtered global top-k): the index is used only when the ordering
 * (a `nearest` order key, or the nearest arm of an `rrf`) ranks EVERY live row of the type
 * that has a vector — i.e. the match block filtered nothing
 * out — and the query has a limit.  Then each indexed data file contributes its k + (deleted
 * rows of the file) nearest rows, deleted ones dropped; every file no index covers contributes
 * all its live rows (an exact scan).  The caller computes exact distances over the union and
 * keeps the k nearest, so distances are always exact; only membership is approximate.
 * Anything else (a filter, a traversal that reaches a subset, no limit, forced exact search)
 * is an exact pre-filtered search.
 *
 * Forcing exact search: og_search_set_exact(1) for the calling thread (og_read_opts.exact,
 * `omnigraph query --exact`), or OG_ANN=off in the environment for the process.
 */
#ifndef OG_ENGINE_SEARCH_ANN_H
#define OG_ENGINE_SEARCH_ANN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/exec.h"
#include "omnigraph.h"

/* Per thread: 1 = searches on this thread never use a vector index until reset. */
void og_search_set_exact(int on);
/* 1 when the calling thread's searches must be exact (og_search_set_exact or OG_ANN=off). */
int og_search_exact(void);

/* The search beam of a `nearest` over a vector index when a query sets none: the graph keeps the
 * OG_SEARCH_DEFAULT_EF closest points it has seen of each data file (raised to k + deleted
 * rows).  Chosen by measurement (docs/benchmarks.md "Search defaults"): recall@10 >= 0.95 at
 * 100,000 clustered 64-d vectors in one data file (ef 128: 0.96-0.98). */
#define OG_SEARCH_DEFAULT_EF 200
/* Per thread: the search beam of later nearest searches (0 = OG_SEARCH_DEFAULT_EF), until reset. */
void og_search_set_ef(uint32_t ef);
/* The beam in force on the calling thread. */
size_t og_search_ef(void);

/* When vector index files cover at least one data file of node type `type`'s property
 * `prop_id`: sets in `cand` (bits over the type's `nrows` view rows, zeroed by the caller)
 * the candidate rows for the k nearest to q (dim floats) and *used = 1.  *used = 0 (cand
 * untouched) when no usable index file exists: the caller searches exactly.  A damaged or
 * mismatched file only makes its data file scanned exactly.  Errors: the source's, NOMEM. */
og_status og_search_ann_candidates(const og_exec_source *src, size_t type, uint64_t prop_id, const float *q,
                                   uint32_t dim, size_t k, size_t nrows, uint8_t *cand, int *used);

/* Test hook: how many nearest orderings of this process took candidates from index files. */
uint64_t og_search_ann_uses(void);

#endif
