/*
 * sort.h — ORDER BY over columnar keys (reference-language.md §3.4).
 *
 * Keys are og_vectors of equal length, each ascending or descending.  Nulls sort first
 * ascending and last descending.  The sort is stable, so callers append the deterministic
 * tie-break keys (every bound entity's id, ascending) as further keys and get a total order;
 * hash-map iteration order can never leak into results.
 */
#ifndef OG_ENGINE_SORT_H
#define OG_ENGINE_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/vector.h"

typedef struct og_sort_key {
    const og_vector *values;
    int descending;
} og_sort_key;

/* Fills perm[0..n) with the row order (a permutation of 0..n-1).  `limit` > 0 asks only for
 * the first `limit` positions to be correct (the rest are unspecified); 0 = sort all. */
og_status og_sort_rows(const og_sort_key *keys, size_t n_keys, size_t n, size_t limit, uint32_t *perm);

#endif
