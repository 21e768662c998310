/*
 * vector.h — og_vector, the one columnar value layout (Arrow-compatible) that table/ decodes
 * into and every engine operator consumes (ARCHITECTURE.md §5, STYLE.md "DuckDB").
 *
 * Layout per logical type (`len` rows):
 *   validity  NULL when every row is valid; else ceil(len/8) bytes, bit i (LSB first) = row i
 *             present.  Applies to every type, lists included.
 *   BOOL      values: bit-packed like validity.
 *   I32 U32 F32 DATE32             values: 4 bytes per row (little-endian, host order).
 *   I64 U64 F64 DATE64             values: 8 bytes per row.  DATE32 = days since 1970-01-01,
 *                                  DATE64 = milliseconds since the epoch (the schema's DateTime).
 *   STRING BLOB   offsets: len+1 int64 (offsets[0] may be non-zero for a slice);
 *                 values: the bytes.  A null row has offsets[i+1] == offsets[i].
 *   VECTOR        fixed-size list of float32: values = len * dim floats (null rows zero-filled).
 *   LIST          offsets: len+1 int64 into `child`, whose type is type.elem (a scalar type).
 *
 * Ownership: a vector either owns its buffers (OG_VEC_OWNED: og_vector_free releases them,
 * the list child included) or borrows them — and its child — from something that outlives it
 * (a memory-mapped page, a cached column): a shallow struct copy with OG_VEC_OWNED cleared is
 * a valid borrow, and og_vector_free of it releases nothing.  Builders always produce owned
 * vectors.
 */
#ifndef OG_UTIL_VECTOR_H
#define OG_UTIL_VECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef enum og_type_id {
    OG_T_NULL = 0, /* the type of an untyped null literal; never stored */
    OG_T_BOOL,
    OG_T_I32,
    OG_T_I64,
    OG_T_U32,
    OG_T_U64,
    OG_T_F32,
    OG_T_F64,
    OG_T_DATE32,
    OG_T_DATE64,
    OG_T_STRING,
    OG_T_BLOB,
    OG_T_VECTOR,
    OG_T_LIST
} og_type_id;

typedef struct og_type {
    og_type_id id;
    og_type_id elem; /* LIST: the element type (a scalar type) */
    uint32_t dim;    /* VECTOR: the dimension */
} og_type;

#define OG_VEC_OWNED 1u

typedef struct og_vector {
    og_type type;
    size_t len;
    size_t null_count;
    uint8_t *validity;
    void *values;
    int64_t *offsets;
    struct og_vector *child; /* LIST only */
    unsigned flags;
    /* builder capacity (owned vectors only) */
    size_t cap_rows, cap_bytes;
} og_vector;

/* Bytes per value of a fixed-width type (0 for BOOL, STRING, BLOB, LIST; 4*dim for VECTOR). */
size_t og_type_width(og_type t);
/* "Bool", "I64", "Date", "DateTime", "String", "Blob", "Null" for a scalar type id; "?" for any
 * other id (VECTOR and LIST need og_type_name). */
const char *og_scalar_type_name(og_type_id id);
/* "I64", "String", "Vector(3)", "[String]" — the schema language's spelling. */
const char *og_type_name(og_type t, char *buf, size_t cap);
int og_type_eq(og_type a, og_type b);

/* An empty owned vector of `type`, ready for appends. */
og_status og_vector_init(og_vector *v, og_type type);
void og_vector_free(og_vector *v);
/* Makes room in an empty owned vector for `rows` rows and, for String / Blob, `bytes` value
 * bytes, so appends up to there do not reallocate (a no-op for other types, or when not
 * empty). */
og_status og_vector_reserve(og_vector *v, size_t rows, size_t bytes);

static inline int og_vector_is_null(const og_vector *v, size_t i)
{
    return v->validity && !((v->validity[i >> 3] >> (i & 7)) & 1);
}
static inline int og_bit_get(const uint8_t *bits, size_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

/* Appenders (owned vectors; the type must match; every one may return OG_ERR_NOMEM). */
og_status og_vector_append_null(og_vector *v);
og_status og_vector_append_bool(og_vector *v, int b);
og_status og_vector_append_i64(og_vector *v, int64_t x);   /* I32 I64 DATE32 DATE64 (range-checked) */
og_status og_vector_append_u64(og_vector *v, uint64_t x);  /* U32 U64 (range-checked) */
og_status og_vector_append_f64(og_vector *v, double x);    /* F32 F64 */
og_status og_vector_append_bytes(og_vector *v, const void *p, size_t n); /* STRING BLOB */
og_status og_vector_append_floats(og_vector *v, const float *p, size_t n); /* VECTOR: n == dim */
/* LIST: appends one list row whose items were already appended to v->child since the last
 * list row (i.e. it closes the row at the child's current length). */
og_status og_vector_append_list_end(og_vector *v);

/* Readers of a single row (no bounds or null checks beyond assert). */
int64_t og_vector_get_i64(const og_vector *v, size_t i);   /* I32 I64 DATE32 DATE64 */
uint64_t og_vector_get_u64(const og_vector *v, size_t i);  /* U32 U64 */
double og_vector_get_f64(const og_vector *v, size_t i);    /* F32 F64 */
int og_vector_get_bool(const og_vector *v, size_t i);
const uint8_t *og_vector_get_bytes(const og_vector *v, size_t i, size_t *len); /* STRING BLOB */
const float *og_vector_get_floats(const og_vector *v, size_t i);               /* VECTOR */
/* LIST: [*begin, *end) indexes into v->child. */
void og_vector_get_list(const og_vector *v, size_t i, size_t *begin, size_t *end);

/* 1 when row i of a equals row j of b (same type; nulls compare equal to nulls). */
int og_vector_row_eq(const og_vector *a, size_t i, const og_vector *b, size_t j);

/* Total order of two non-null rows of the same type: <0, 0, >0.  Numbers by value (NaN after
 * every other float), strings and blobs bytewise, bools false < true, lists and vectors
 * element-wise then by length.  Null handling is the caller's (ORDER BY puts nulls first
 * ascending). */
int og_vector_row_cmp(const og_vector *a, size_t i, const og_vector *b, size_t j);

/* out = src[idx[0]], src[idx[1]], ... (owned copy); idx[k] == UINT32_MAX gives a null row. */
og_status og_vector_gather(og_vector *out, const og_vector *src, const uint32_t *idx, size_t n);

/* Appends row i of src to dst (same type). */
og_status og_vector_append_from(og_vector *dst, const og_vector *src, size_t i);

#endif
