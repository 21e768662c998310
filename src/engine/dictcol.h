/*
 * dictcol.h — a dictionary-coded String column: one small code per row plus the distinct
 * values (issue 36, docs/engine.md "Memory").
 *
 * Why: a whole String column in the og_vector layout costs 8 bytes of offset per row plus the
 * bytes; an enum column (or any String column with few distinct values) holds the same few
 * strings millions of times.  Coded, it costs 1 byte a row (2 past 256 distinct values) and
 * one copy of each value, and the kernels that filter, group, order and count it work on the
 * codes without materializing a string per row (colscan.h; exec_read.c filters, exec_project.c
 * groups, orders and counts).
 *
 * The dictionary is sorted ascending in og_vector_row_cmp's order of strings (bytewise, then
 * shorter first), so code order is value order: a comparison with a constant is a range of
 * codes, and ordering by the codes orders by the values.  Null rows are kept in a validity
 * bitmap laid out as og_vector's (their code is 0 and means nothing).
 *
 * A column is built from the scan's batches (og_dictcol_append) and gives up — OG_ERR_LIMIT,
 * nothing kept — as soon as it meets its OG_DICTCOL_MAX + 1st distinct value: the caller
 * then loads the plain column.
 */
#ifndef OG_ENGINE_DICTCOL_H
#define OG_ENGINE_DICTCOL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/filter.h"
#include "omnigraph.h"
#include "util/vector.h"

/* The most distinct values a coded column holds (codes fit 2 bytes). */
#define OG_DICTCOL_MAX 65536

typedef struct og_dictcol {
    size_t len, null_count;
    uint8_t *validity; /* NULL when no row is null; else ceil(len/8) bytes, bit i = row i present */
    unsigned width;    /* bytes per code: 1 (at most 256 values) or 2 */
    void *codes;       /* len codes (uint8_t or uint16_t) */
    og_vector dict;    /* the distinct non-null values, STRING, ascending, no nulls */
} og_dictcol;

static inline uint32_t og_dictcol_code(const og_dictcol *d, size_t i)
{
    return d->width == 1 ? ((const uint8_t *)d->codes)[i] : ((const uint16_t *)d->codes)[i];
}

/* Builds a column of about `rows` rows from STRING batches. */
typedef struct og_dictcol_builder og_dictcol_builder;
og_status og_dictcol_begin(og_dictcol_builder **out, size_t rows);
/* Appends every row of src (a STRING vector).  OG_ERR_LIMIT when the column passes
 * OG_DICTCOL_MAX distinct values (free the builder then), OG_ERR_NOMEM. */
og_status og_dictcol_append(og_dictcol_builder *b, const og_vector *src);
/* Sorts the dictionary, renumbers the codes and hands out the column; frees b in any case. */
og_status og_dictcol_finish(og_dictcol_builder *b, og_dictcol **out);
void og_dictcol_builder_free(og_dictcol_builder *b);

/* Building on two threads: splits fresh builder b (nothing appended yet) at row `at` of the
 * rows it was begun for — b then codes rows [0, at), the new part *out rows [at, rows) — each
 * appended to on its own thread, both writing their 1-byte codes into b's one array (no
 * second copy of the codes; a side past 256 values widens into an array of its own).  After
 * both have coded every row of their side, og_dictcol_join(b, part) adds the part's values to
 * b and renumbers its rows into b's codes (frees the part in any case); b is then as if it
 * had been appended every row in order: og_dictcol_finish gives the same column.
 * og_dictcol_builder_free frees either side at any point.  OG_ERR_INTERNAL when b is not
 * fresh or `at` is not inside its rows; the join's OG_ERR_LIMIT as og_dictcol_append's. */
og_status og_dictcol_begin_part(og_dictcol_builder **out, og_dictcol_builder *b, size_t at);
og_status og_dictcol_join(og_dictcol_builder *b, og_dictcol_builder *part);

/* A whole STRING vector coded at once (tests; OG_ERR_LIMIT as og_dictcol_append). */
og_status og_dictcol_from_vector(const og_vector *src, og_dictcol **out);

void og_dictcol_free(og_dictcol *d);
/* The heap the column holds. */
size_t og_dictcol_bytes(const og_dictcol *d);

static inline int og_dictcol_is_null(const og_dictcol *d, size_t i)
{
    return d->validity && !((d->validity[i >> 3] >> (i & 7)) & 1);
}

/* out (an owned STRING vector) = the values of rows idx[0..n) (UINT32_MAX = a null row);
 * idx NULL = rows 0..n-1. */
og_status og_dictcol_gather(og_vector *out, const og_dictcol *d, const uint32_t *idx, size_t n);

/* out (an owned U32 vector, nulls where the rows are null) = the codes of rows idx[0..n)
 * (idx NULL = rows 0..n-1): a sort key that orders as the values do. */
og_status og_dictcol_gather_codes(og_vector *out, const og_dictcol *d, const uint32_t *idx, size_t n);

/* The codes whose values v satisfy `v op k` (k[0..klen), op one of EQ NE LT LE GT GE) as the
 * inclusive range [*lo, *hi] (empty when *lo > *hi); for NE the codes outside it match. */
void og_dictcol_range(const og_dictcol *d, og_cmp_op op, const uint8_t *k, size_t klen, int64_t *lo, int64_t *hi);

#endif
