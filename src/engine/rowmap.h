/*
 * rowmap.h — how the dense row numbers of an older version of a table map to a newer
 * version's, when the newer one kept some of the older fragments and deleted a few rows.
 *
 * Why.  A composed topology (topology.h og_topology_compose) answers traversals of a new
 * version from an older version's persisted adjacency, translating every row on the fly.  The
 * translation must cost what changed, not the table's size: one piece per older fragment
 * (kept at a new start, or gone) with the ascending ranks of its rows deleted since, so
 * building a map reads deletion lists only, and a lookup is two binary searches.
 *
 * Rows are a fragment's live rows in offset order, fragments in manifest order.  A kept
 * piece's new rows are its old ones minus the gone ranks, in the same order (the newer
 * version deleted rows, never revived one).  Rows of the newer version outside every kept
 * piece are new: they map back to nothing.
 */
#ifndef OG_ENGINE_ROWMAP_H
#define OG_ENGINE_ROWMAP_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef struct og_rowmap og_rowmap;

/* An empty map from a version of n_old rows to one of n_new; pieces are added in old order. */
og_status og_rowmap_new(og_rowmap **out, uint32_t n_old, uint32_t n_new);
void og_rowmap_free(og_rowmap *m);

/* Adds the next older fragment: rows [old_start, old_start + old_n), at new_start in the newer
 * version (UINT32_MAX: gone), less `gone` (ascending ranks in [0, old_n), copied).
 * OG_ERR_INVALID when it does not follow the previous piece or a rank is out of order. */
og_status og_rowmap_add(og_rowmap *m, uint32_t old_start, uint32_t old_n, uint32_t new_start, const uint32_t *gone,
                        uint32_t ngone);

/* Ends the build: OG_ERR_INVALID when the pieces do not cover the older rows or the kept ones
 * overlap in the newer numbering or reach past it. */
og_status og_rowmap_finish(og_rowmap *m);

/* The newer row of older row `old`, or UINT32_MAX when it is gone (or out of range). */
uint32_t og_rowmap_fwd(const og_rowmap *m, uint32_t old);
/* The older row of newer row `cur`, or UINT32_MAX when it is new (or out of range). */
uint32_t og_rowmap_back(const og_rowmap *m, uint32_t cur);

/* 1 when every row is kept at its own number (nothing gone, no piece moved). */
int og_rowmap_is_identity(const og_rowmap *m);
/* 1 when kept rows keep their order (kept pieces' new starts ascend in old order). */
int og_rowmap_is_monotone(const og_rowmap *m);
/* How many older rows are gone, and how many are kept. */
size_t og_rowmap_gone_count(const og_rowmap *m);
size_t og_rowmap_kept_count(const og_rowmap *m);
/* Calls fn(ctx, old row) for every gone older row, ascending; stops at a non-OG_OK return. */
og_status og_rowmap_each_gone(const og_rowmap *m, og_status (*fn)(void *ctx, uint32_t old), void *ctx);

#endif
