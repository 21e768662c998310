/*
 * aggregate.h — implicit GROUP BY and the five aggregates (reference-language.md §3.3).
 *
 * Grouping numbers groups in first-appearance order, so the output order of groups is a
 * function of the input order only (never of a hash table's layout).  Null keys form a group.
 *
 * Aggregates: count(x) counts non-null rows; sum and avg take numbers and give F64 (null for a
 * group without a non-null input); min and max take numbers or strings and keep the input type.
 * With no group keys there is exactly one group, even over zero rows (count 0, others null).
 */
#ifndef OG_ENGINE_AGGREGATE_H
#define OG_ENGINE_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/vector.h"

typedef enum og_agg_fn { OG_AGG_COUNT, OG_AGG_SUM, OG_AGG_AVG, OG_AGG_MIN, OG_AGG_MAX } og_agg_fn;

/* Assigns group_of_row[i] for each of n rows.  *first_row (malloc'd, *n_groups entries) is the
 * first row of each group, to gather the key columns from.  n_keys == 0 gives one group. */
og_status og_group_rows(const og_vector *const *keys, size_t n_keys, size_t n, uint32_t *group_of_row,
                        size_t *n_groups, uint32_t **first_row);

/* out (initialised here) = fn(input) per group.  For OG_AGG_COUNT, input may be NULL to count
 * rows. */
og_status og_aggregate(og_agg_fn fn, const og_vector *input, const uint32_t *group_of_row, size_t n, size_t n_groups,
                       og_vector *out);

/* The result type of fn over an input type, or OG_ERR_TYPE when fn does not accept it. */
og_status og_aggregate_type(og_agg_fn fn, og_type in, og_type *out);

/* A 64-bit hash of row i (equal rows hash equal; nulls hash alike). */
uint64_t og_vector_row_hash(const og_vector *v, size_t i, uint64_t seed);

#endif
