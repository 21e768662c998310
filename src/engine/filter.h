/*
 * filter.h — comparison kernels over columns (reference-language.md §3.2 "Filter", §3.6).
 *
 * A kernel compares column `a` with column `b` row by row (either may have length 1 and is
 * then broadcast, which is how a literal or a parameter is compared) and ANDs the result into a
 * selection bitmap.  Semantics:
 *   - a null on either side never matches (three-valued logic; `!=` drops nulls too);
 *   - numbers of any width and signedness compare by exact value (an I32 column never equals
 *     2.7: coercion never truncates);
 *   - strings compare bytewise; `contains` on a string is a case-sensitive substring test, on a
 *     list it is membership of the scalar right side; `starts_with` is a string prefix test;
 *   - any other pairing of types is an internal error: the type checker rules it out.
 */
#ifndef OG_ENGINE_FILTER_H
#define OG_ENGINE_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/vector.h"

typedef enum og_cmp_op {
    OG_CMP_EQ,
    OG_CMP_NE,
    OG_CMP_LT,
    OG_CMP_LE,
    OG_CMP_GT,
    OG_CMP_GE,
    OG_CMP_CONTAINS,
    OG_CMP_STARTS_WITH
} og_cmp_op;

/* sel: n bits (n = the longer length; the other side must be 1 or the same); rows that do
 * not satisfy `a op b` are cleared, others left as they are. */
og_status og_filter_compare(const og_vector *a, og_cmp_op op, const og_vector *b, uint8_t *sel, size_t n);

/* Compares row i of a with row j of b (both non-null, comparable types): <0, 0, >0, or
 * OG_CMP_INCOMPARABLE when the types cannot be compared. */
#define OG_CMP_INCOMPARABLE 2
int og_value_compare(const og_vector *a, size_t i, const og_vector *b, size_t j);

#endif
