/*
 * scalar.h — the persisted scalar (sorted-key) index of ONE data file of a node table
 * (docs/indexes.md "Scalar indexes", INVARIANTS.md 7): equality and range lookups on a
 * property, answered as candidate rows the scan then filters as always.
 *
 * Why candidates: the executor applies every predicate to the rows an index returns, so an
 * index only has to return a SUPERSET of the matching rows of its data file; the answer is
 * the scan's by construction.  Lookups are exact for integers and strings and widened by one
 * ulp for floats (comparisons mixing int and float constants stay correct).
 *
 * Key kinds (og_scalar_kind_of): I32, I64, U32, U64 (< 2^63), Date, DateTime, Bool (0 / 1) ->
 * integer keys;
 * F32, F64 -> float keys (NaN rows left out: no comparison matches NaN); String (and enums,
 * stored as strings) -> byte-string keys in memcmp order (the engine's string order).  Nulls
 * are never indexed (no comparison matches null).
 *
 * Store key (index/index.h og_index_file_key): `_index/<table dir>/<data file>/scalar-<field
 * id>.v1`, one per data file, describing its PHYSICAL rows (deleted ones included; the reader
 * applies deletion vectors).
 *
 * File layout (little-endian):
 *   header (48 bytes): "OGSCALAR", u32 format 1, u32 key kind, u64 rows (physical rows of the
 *     file), u64 count (entries), u64 blob bytes, u64 0
 *   entries: count x 16 bytes sorted by (key, offset):
 *     integer: i64 key, u32 offset, u32 0;  float: f64 key, u32 offset, u32 0;
 *     string:  u32 blob position, u32 length, u32 offset, u32 0
 *   blob: the string keys' bytes
 *   trailer: "OGSCLEND"
 * Opening checks sizes and trailer; lookups bounds-check every string they read.
 */
#ifndef OG_INDEX_SCALAR_H
#define OG_INDEX_SCALAR_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "table/manifest.h"
#include "table/table.h"
#include "util/buf.h"
#include "util/vector.h"

typedef enum og_scalar_kind { OG_SCALAR_NONE = 0, OG_SCALAR_INT = 1, OG_SCALAR_FLOAT = 2, OG_SCALAR_STRING = 3 } og_scalar_kind;

/* The key kind of a column of type t (OG_SCALAR_NONE: not indexable). */
og_scalar_kind og_scalar_kind_of(og_type t);

/* Encodes the index of `col` (one entry per physical row of the data file) into out.
 * OG_ERR_INVALID (an unindexable type), OG_ERR_LIMIT (2^32 rows or 4 GiB of strings), NOMEM. */
og_status og_scalar_encode(const og_vector *col, og_buf *out);
/* Reads field `field` of every physical row of fragment f and encodes its index. */
og_status og_scalar_build(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field, og_buf *out);
/* OG_OK when p[0..len) is a whole scalar index of a data file of `rows` rows. */
og_status og_scalar_check(const uint8_t *p, size_t len, uint64_t rows);

/* The index kind "scalar" of index/index.h. */
struct og_index_def;
extern const struct og_index_def og_index_def_scalar;

/* A range of keys: bounds may be absent (has_lo / has_hi 0) or exclusive.  Integer and float
 * bounds are given as long double (any numeric constant); string bounds as bytes. */
typedef struct og_scalar_range {
    int has_lo, lo_incl, has_hi, hi_incl;
    long double lo_num, hi_num;
    const uint8_t *lo_str, *hi_str;
    size_t lo_len, hi_len;
} og_scalar_range;

/* Calls cb(ud, offset) for the physical offset of every indexed row whose key may lie in r
 * (a superset for floats, exact otherwise), in key order.  OG_ERR_CORRUPT when the file is
 * damaged (it was bounds-checked at open: this is a key that points outside the blob, or an
 * entry naming a row beyond the file's row count; cb may have been called for earlier rows);
 * OG_ERR_INVALID when r's kind does not fit the file (a string range on a numeric index). */
og_status og_scalar_lookup(const uint8_t *p, size_t len, int string_range, const og_scalar_range *r,
                           void (*cb)(void *ud, uint32_t offset), void *ud);

/* The key kind a whole file holds (after og_scalar_check). */
og_scalar_kind og_scalar_file_kind(const uint8_t *p);

#endif
