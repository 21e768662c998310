/*
 * filter.c — comparison kernels.  See filter.h.
 *
 * Mixed numeric comparisons are exact: integers compare as 128-bit integers, an integer
 * against a float compares through long double (a 64-bit mantissa on x86-64, so every int64
 * is exact) after ruling out NaN.
 */
#define _GNU_SOURCE /* memmem */
#include "engine/filter.h"

#include <math.h>
#include <string.h>

#include "util/error.h"

static int is_int(og_type_id t) { return t == OG_T_I32 || t == OG_T_I64 || t == OG_T_U32 || t == OG_T_U64; }
static int is_float(og_type_id t) { return t == OG_T_F32 || t == OG_T_F64; }
static int is_signed(og_type_id t) { return t == OG_T_I32 || t == OG_T_I64; }

static __int128 int_at(const og_vector *v, size_t i)
{
    return is_signed(v->type.id) ? (__int128)og_vector_get_i64(v, i) : (__int128)og_vector_get_u64(v, i);
}

static int sign(long double x) { return (x > 0) - (x < 0); }

int og_value_compare(const og_vector *a, size_t i, const og_vector *b, size_t j)
{
    og_type_id ta = a->type.id, tb = b->type.id;
    if (is_int(ta) && is_int(tb)) {
        __int128 x = int_at(a, i), y = int_at(b, j);
        return (x > y) - (x < y);
    }
    if ((is_int(ta) || is_float(ta)) && (is_int(tb) || is_float(tb))) {
        long double x = is_int(ta) ? (long double)int_at(a, i) : (long double)og_vector_get_f64(a, i);
        long double y = is_int(tb) ? (long double)int_at(b, j) : (long double)og_vector_get_f64(b, j);
        if (isnan(x) || isnan(y)) return OG_CMP_INCOMPARABLE;
        return sign(x - y);
    }
    if (ta != tb) return OG_CMP_INCOMPARABLE;
    switch (ta) {
    case OG_T_BOOL: case OG_T_DATE32: case OG_T_DATE64: case OG_T_STRING: case OG_T_BLOB:
        return og_vector_row_cmp(a, i, b, j) < 0 ? -1 : og_vector_row_cmp(a, i, b, j) > 0;
    default: return OG_CMP_INCOMPARABLE;
    }
}

static int bytes_contains(const uint8_t *h, size_t hn, const uint8_t *nd, size_t nn)
{
    if (nn == 0) return 1;
    if (nn > hn) return 0;
    return memmem(h, hn, nd, nn) != NULL;
}

/* One row's verdict: 1 match, 0 no match, -1 incomparable types. */
static int row_matches(const og_vector *a, size_t i, og_cmp_op op, const og_vector *b, size_t j)
{
    if (og_vector_is_null(a, i) || og_vector_is_null(b, j)) return 0;
    switch (op) {
    case OG_CMP_CONTAINS:
        if (a->type.id == OG_T_LIST) {
            size_t lb, le;
            og_vector_get_list(a, i, &lb, &le);
            for (size_t k = lb; k < le; k++) {
                if (og_vector_is_null(a->child, k)) continue;
                int c = og_value_compare(a->child, k, b, j);
                if (c == OG_CMP_INCOMPARABLE) return -1;
                if (c == 0) return 1;
            }
            return 0;
        }
        __attribute__((fallthrough)); /* a string: substring test below */
    case OG_CMP_STARTS_WITH: {
        if (a->type.id != OG_T_STRING || b->type.id != OG_T_STRING) return -1;
        size_t hn, nn;
        const uint8_t *h = og_vector_get_bytes(a, i, &hn), *nd = og_vector_get_bytes(b, j, &nn);
        if (op == OG_CMP_CONTAINS) return bytes_contains(h, hn, nd, nn);
        return nn <= hn && (nn == 0 || memcmp(h, nd, nn) == 0);
    }
    default: break;
    }
    int c = og_value_compare(a, i, b, j);
    if (c == OG_CMP_INCOMPARABLE) {
        /* NaN against a number compares false for every operator but != */
        if ((is_int(a->type.id) || is_float(a->type.id)) && (is_int(b->type.id) || is_float(b->type.id)))
            return op == OG_CMP_NE;
        return -1;
    }
    switch (op) {
    case OG_CMP_EQ: return c == 0;
    case OG_CMP_NE: return c != 0;
    case OG_CMP_LT: return c < 0;
    case OG_CMP_LE: return c <= 0;
    case OG_CMP_GT: return c > 0;
    case OG_CMP_GE: return c >= 0;
    default: return -1;
    }
}

og_status og_filter_compare(const og_vector *a, og_cmp_op op, const og_vector *b, uint8_t *sel, size_t n)
{
    if ((a->len != n && a->len != 1) || (b->len != n && b->len != 1))
        return og_err(OG_ERR_INTERNAL, "filter operands of %zu and %zu rows over %zu rows", a->len, b->len, n);
    for (size_t r = 0; r < n; r++) {
        if (!og_bit_get(sel, r)) continue;
        int m = row_matches(a, a->len == 1 ? 0 : r, op, b, b->len == 1 ? 0 : r);
        if (m < 0) {
            char ta[32], tb[32];
            return og_err(OG_ERR_INTERNAL, "cannot compare %s with %s", og_type_name(a->type, ta, sizeof ta),
                          og_type_name(b->type, tb, sizeof tb));
        }
        if (!m) sel[r >> 3] &= (uint8_t)~(1u << (r & 7));
    }
    return OG_OK;
}
