/*
 * colscan.h — typed kernels that filter and aggregate straight off whole columns (issue 17).
 *
 * The generic paths (filter.h, aggregate.h) work value by value through og_vector accessors
 * and first copy every value they need (og_vector_gather).  These kernels read the column
 * buffers in place, typed, 64 rows at a time, for the shapes that dominate analytical scans:
 *   - a comparison of a numeric or date column with one constant (`$n.val >= $lo`), prepared
 *     as a range of the column's own type; several of them on one column fuse into one range,
 *     so a conjunction is one pass over the column;
 *   - grouped count / sum / avg / min / max over numeric columns, grouped by at most one
 *     String, integer or date column (a small-domain key such as an enum).
 * Anything else is not handled (the prepare/aggregate calls say so) and the caller keeps its
 * generic path.  The answers are the generic paths' answers exactly: a null never matches,
 * integers compare exactly with floats (an integer column against 2.5 becomes an integer
 * range), NaN matches only `!=`, and integer sums are exact (accumulated in 128 bits).
 *
 * Rows: every column comes with a row list (`rows[i]` is the column row of binding row i) or
 * NULL for "binding row i is column row i" (a scan of the whole table).
 *
 * Threads: over at least OG_COLSCAN_PAR_MIN rows the filter and the integer aggregates split
 * the rows between og_colscan_threads threads (1 = never); results do not depend on it.
 */
#ifndef OG_ENGINE_COLSCAN_H
#define OG_ENGINE_COLSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/aggregate.h"
#include "engine/filter.h"
#include "omnigraph.h"
#include "util/vector.h"

/* Rows below which one thread does all the work. */
#define OG_COLSCAN_PAR_MIN 200000

/* 2 by default; tests and benchmarks set 1 to compare. */
extern int og_colscan_threads;

/* Zone maps: per OG_COLZONE_ROWS rows of a whole column, the least and greatest non-null,
 * non-NaN value (a derived statistic a table view keeps with its column, tableview.h).  A
 * range whose zone cannot hold a matching value skips the zone's rows without reading them. */
#define OG_COLZONE_ROWS 4096
typedef struct og_colzones {
    size_t nzones;
    uint8_t *any;          /* the zone holds a non-null, non-NaN value */
    int64_t *imin, *imax;  /* integer and date columns */
    double *fmin, *fmax;   /* F32 / F64 columns */
} og_colzones;

/* The zones of col (I32, I64, U32, Date, DateTime, F32, F64; *out = NULL for other types). */
og_status og_colzones_build(const og_vector *col, og_colzones **out);
void og_colzones_free(og_colzones *z);

/* `col op constant` as a range of col's values (inclusive bounds).  A row matches when it is
 * not null and its value is inside the range, or — `negate`, from `!=` — outside it. */
struct og_dictcol; /* engine/dictcol.h */

typedef struct og_colrange {
    const og_vector *col;
    const struct og_dictcol *dict; /* set (col NULL): a coded String column, lo/hi codes */
    const uint32_t *rows; /* NULL = row i of the column */
    const og_colzones *zones; /* optional, only with rows NULL: zones of col */
    int negate;
    int empty;            /* no value is inside */
    int64_t lo, hi;       /* integer and date columns */
    double flo, fhi;      /* F32 / F64 columns */
} og_colrange;

/* Prepares `col op k` (k_left = 0) or `k op col` (k_left = 1); k holds one value (a null or
 * an empty k matches nothing).  Returns 1 when the kernels handle the pairing of types,
 * 0 when the caller must use og_filter_compare (strings, bools, lists, unsigned 64-bit, a
 * date against a number, ...). */
int og_colrange_prepare(og_colrange *r, const og_vector *col, const uint32_t *rows, og_cmp_op op, const og_vector *k,
                        int k_left);

/* og_colrange_prepare for a coded String column (dictcol.h) against a String (or null)
 * constant: the comparison becomes a range of codes (the dictionary is sorted).  0 for any
 * other constant type or operator. */
int og_colrange_prepare_dict(og_colrange *r, const struct og_dictcol *d, const uint32_t *rows, og_cmp_op op,
                             const og_vector *k, int k_left);

/* The rows of r's column. */
size_t og_colrange_len(const og_colrange *r);

/* Folds b into a when both are plain ranges over the same column and rows (a conjunction);
 * returns 1 when it did. */
int og_colrange_merge(og_colrange *a, const og_colrange *b);

/* Clears in sel (ceil(n/64) words, row i = bit i%64 of word i/64) the rows failing any of
 * the nr ranges.  Returns how many rows zone maps let it skip unread. */
size_t og_colscan_filter(const og_colrange *rs, size_t nr, size_t n, uint64_t *sel);

/* One input column of the aggregation: rows as og_colrange.rows. */
typedef struct og_colref {
    const og_vector *col;
    const uint32_t *rows;
    const struct og_dictcol *dict; /* instead of col: a coded String column (a key, or count's argument) */
} og_colref;

/* One aggregate: fn over arg (arg.col NULL: count(rows)). */
typedef struct og_colagg {
    og_agg_fn fn;
    og_colref arg;
} og_colagg;

/* 1 when og_colscan_aggregate handles a key column of type t (String, I32, I64, U32, Date,
 * DateTime) and 1 when it handles aggregate fn over a column of type t. */
int og_colscan_key_ok(og_type_id t);
int og_colscan_agg_ok(og_agg_fn fn, og_type_id t);

/* Groups n binding rows by key (key->col and key->dict NULL: one group, even over zero rows;
 * a coded key groups by its codes, one array slot per code, never touching the values) and computes
 * each aggregate per group into outs[0..naggs) (owned vectors, ngroups rows, types as
 * og_aggregate_type).  *key_out receives the key column of the groups (owned) when key->col
 * is set.  The order of the groups is unspecified.  Only for key and aggregate types the _ok
 * functions accept. */
og_status og_colscan_aggregate(const og_colref *key, const og_colagg *aggs, size_t naggs, size_t n, og_vector *outs,
                               og_vector *key_out, size_t *ngroups);

/* Streaming aggregation (issue 36): og_colscan_aggregate's answers over a table read batch by
 * batch (tableview.h og_tableview_stream) instead of from whole loaded columns, so a query
 * over a large table holds one batch, not its columns.  Grouped by a coded String column of
 * the whole table (its codes index an array: one accumulator slot per value, one for nulls)
 * or not grouped (one group, even over zero rows).  Each aggregate is fn over a column of
 * type types[k] (types[k].id == OG_T_NULL: count(rows)), for the functions and types
 * og_colscan_agg_ok accepts.  Float sums depend on the order of additions: add the rows of
 * one stream in table order, and merge a stream of later rows into one of earlier rows. */
typedef struct og_colstream og_colstream;
og_status og_colstream_new(og_colstream **out, const struct og_dictcol *key, const og_agg_fn *fns, const og_type *types,
                           size_t naggs);
/* Adds the binding rows row0 + rows[0..k) (table rows; rows are batch offsets, ascending):
 * args[a] is aggregate a's batch column (NULL for count(rows)), indexed by those offsets. */
og_status og_colstream_add(og_colstream *s, size_t row0, const uint32_t *rows, size_t k, const og_vector *const *args);
/* Folds b (rows after a's) into a. */
void og_colstream_merge(og_colstream *a, const og_colstream *b);
/* As og_colscan_aggregate: outs[0..naggs), the key column of the groups into *key_out when
 * grouped, *ngroups; the groups in code order. */
og_status og_colstream_finish(og_colstream *s, og_vector *outs, og_vector *key_out, size_t *ngroups);
void og_colstream_free(og_colstream *s);

#endif
