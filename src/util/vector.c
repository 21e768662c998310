/*
 * vector.c — og_vector builders and row accessors.  See vector.h for the layout.
 *
 * Builders grow rows and bytes geometrically.  The validity bitmap is allocated lazily, on the
 * first null, and back-filled with 1s for the rows before it, so an all-valid vector never
 * carries one.
 */
#include "util/vector.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

size_t og_type_width(og_type t)
{
    switch (t.id) {
    case OG_T_I32: case OG_T_U32: case OG_T_F32: case OG_T_DATE32: return 4;
    case OG_T_I64: case OG_T_U64: case OG_T_F64: case OG_T_DATE64: return 8;
    case OG_T_VECTOR: return 4u * t.dim;
    default: return 0;
    }
}

const char *og_scalar_type_name(og_type_id id)
{
    switch (id) {
    case OG_T_NULL: return "Null";
    case OG_T_BOOL: return "Bool";
    case OG_T_I32: return "I32";
    case OG_T_I64: return "I64";
    case OG_T_U32: return "U32";
    case OG_T_U64: return "U64";
    case OG_T_F32: return "F32";
    case OG_T_F64: return "F64";
    case OG_T_DATE32: return "Date";
    case OG_T_DATE64: return "DateTime";
    case OG_T_STRING: return "String";
    case OG_T_BLOB: return "Blob";
    default: return "?";
    }
}

const char *og_type_name(og_type t, char *buf, size_t cap)
{
    if (t.id == OG_T_VECTOR)
        snprintf(buf, cap, "Vector(%u)", t.dim);
    else if (t.id == OG_T_LIST)
        snprintf(buf, cap, "[%s]", og_scalar_type_name(t.elem));
    else
        snprintf(buf, cap, "%s", og_scalar_type_name(t.id));
    return buf;
}

int og_type_eq(og_type a, og_type b)
{
    if (a.id != b.id) return 0;
    if (a.id == OG_T_VECTOR) return a.dim == b.dim;
    if (a.id == OG_T_LIST) return a.elem == b.elem;
    return 1;
}

static int is_varwidth(og_type_id id) { return id == OG_T_STRING || id == OG_T_BLOB || id == OG_T_LIST; }

og_status og_vector_init(og_vector *v, og_type type)
{
    memset(v, 0, sizeof *v);
    v->type = type;
    v->flags = OG_VEC_OWNED;
    if (is_varwidth(type.id)) {
        v->offsets = calloc(1, sizeof(int64_t));
        if (!v->offsets) return og_err(OG_ERR_NOMEM, "out of memory");
        v->cap_rows = 0;
    }
    if (type.id == OG_T_LIST) {
        v->child = malloc(sizeof *v->child);
        if (!v->child) return og_err(OG_ERR_NOMEM, "out of memory");
        og_status st = og_vector_init(v->child, (og_type){type.elem, OG_T_NULL, 0});
        if (st) return st;
    }
    return OG_OK;
}

void og_vector_free(og_vector *v)
{
    if (!v) return;
    if (v->flags & OG_VEC_OWNED) {
        free(v->validity);
        free(v->values);
        free(v->offsets);
    }
    if (v->child && (v->flags & OG_VEC_OWNED)) { /* a borrowed vector borrows its child too */
        og_vector_free(v->child);
        free(v->child);
    }
    memset(v, 0, sizeof *v);
}

og_status og_vector_reserve(og_vector *v, size_t rows, size_t bytes)
{
    if (!(v->flags & OG_VEC_OWNED) || v->len || v->validity || rows <= v->cap_rows) return OG_OK;
    if (v->type.id == OG_T_STRING || v->type.id == OG_T_BLOB) {
        int64_t *o = realloc(v->offsets, (rows + 1) * sizeof(int64_t));
        if (!o) return og_err(OG_ERR_NOMEM, "out of memory");
        v->offsets = o;
        v->cap_rows = rows;
        if (bytes > v->cap_bytes) {
            uint8_t *q = realloc(v->values, bytes);
            if (!q) return og_err(OG_ERR_NOMEM, "out of memory");
            v->values = q;
            v->cap_bytes = bytes;
        }
    } else if (v->type.id != OG_T_BOOL && v->type.id != OG_T_LIST && og_type_width(v->type)) {
        size_t w = og_type_width(v->type);
        uint8_t *p = realloc(v->values, rows * w);
        if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
        memset(p, 0, rows * w); /* as grow_rows leaves new rows */
        v->values = p;
        v->cap_rows = rows;
    }
    return OG_OK;
}

/* Makes room for one more row: validity (if present), values/offsets. */
static og_status grow_rows(og_vector *v)
{
    assert(v->flags & OG_VEC_OWNED);
    if (v->len < v->cap_rows) return OG_OK;
    size_t ncap = v->cap_rows ? v->cap_rows * 2 : 16;
    if (v->validity) {
        uint8_t *p = realloc(v->validity, (ncap + 7) / 8);
        if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
        memset(p + (v->cap_rows + 7) / 8, 0, (ncap + 7) / 8 - (v->cap_rows + 7) / 8);
        v->validity = p;
    }
    if (is_varwidth(v->type.id)) {
        int64_t *o = realloc(v->offsets, (ncap + 1) * sizeof(int64_t));
        if (!o) return og_err(OG_ERR_NOMEM, "out of memory");
        v->offsets = o;
    } else {
        size_t w = og_type_width(v->type);
        size_t bytes = v->type.id == OG_T_BOOL ? (ncap + 7) / 8 : ncap * w;
        size_t old = v->type.id == OG_T_BOOL ? (v->cap_rows + 7) / 8 : v->cap_rows * w;
        if (bytes) {
            uint8_t *p = realloc(v->values, bytes);
            if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
            memset(p + old, 0, bytes - old);
            v->values = p;
        }
    }
    v->cap_rows = ncap;
    return OG_OK;
}

static void set_valid(og_vector *v, size_t i, int valid)
{
    if (!v->validity) return;
    if (valid)
        v->validity[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
        v->validity[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* Finishes a row append: marks validity, closes the offset. */
static void row_done(og_vector *v, int valid)
{
    set_valid(v, v->len, valid);
    v->len++;
}

og_status og_vector_append_null(og_vector *v)
{
    OG_TRY(grow_rows(v));
    if (!v->validity) {
        size_t bytes = (v->cap_rows + 7) / 8;
        v->validity = malloc(bytes);
        if (!v->validity) return og_err(OG_ERR_NOMEM, "out of memory");
        memset(v->validity, 0xff, bytes);
    }
    if (is_varwidth(v->type.id)) v->offsets[v->len + 1] = v->offsets[v->len];
    /* fixed-width slots were zero-filled by grow_rows */
    if (v->type.id == OG_T_BOOL) {
        ((uint8_t *)v->values)[v->len >> 3] &= (uint8_t)~(1u << (v->len & 7));
    } else if (!is_varwidth(v->type.id)) {
        size_t w = og_type_width(v->type);
        if (w) memset((uint8_t *)v->values + v->len * w, 0, w); /* an untyped null has no values buffer */
    }
    v->null_count++;
    row_done(v, 0);
    return OG_OK;
}

og_status og_vector_append_bool(og_vector *v, int b)
{
    assert(v->type.id == OG_T_BOOL);
    OG_TRY(grow_rows(v));
    uint8_t *p = v->values;
    if (b)
        p[v->len >> 3] |= (uint8_t)(1u << (v->len & 7));
    else
        p[v->len >> 3] &= (uint8_t)~(1u << (v->len & 7));
    row_done(v, 1);
    return OG_OK;
}

og_status og_vector_append_i64(og_vector *v, int64_t x)
{
    OG_TRY(grow_rows(v));
    switch (v->type.id) {
    case OG_T_I32: case OG_T_DATE32:
        if (x < INT32_MIN || x > INT32_MAX) return og_err(OG_ERR_INVALID, "value %lld out of range for a 32-bit column", (long long)x);
        ((int32_t *)v->values)[v->len] = (int32_t)x;
        break;
    case OG_T_I64: case OG_T_DATE64:
        ((int64_t *)v->values)[v->len] = x;
        break;
    default:
        return og_err(OG_ERR_INTERNAL, "append_i64 on a non-signed vector");
    }
    row_done(v, 1);
    return OG_OK;
}

og_status og_vector_append_u64(og_vector *v, uint64_t x)
{
    OG_TRY(grow_rows(v));
    switch (v->type.id) {
    case OG_T_U32:
        if (x > UINT32_MAX) return og_err(OG_ERR_INVALID, "value %llu out of range for U32", (unsigned long long)x);
        ((uint32_t *)v->values)[v->len] = (uint32_t)x;
        break;
    case OG_T_U64:
        ((uint64_t *)v->values)[v->len] = x;
        break;
    default:
        return og_err(OG_ERR_INTERNAL, "append_u64 on a non-unsigned vector");
    }
    row_done(v, 1);
    return OG_OK;
}

og_status og_vector_append_f64(og_vector *v, double x)
{
    OG_TRY(grow_rows(v));
    if (v->type.id == OG_T_F32)
        ((float *)v->values)[v->len] = (float)x;
    else if (v->type.id == OG_T_F64)
        ((double *)v->values)[v->len] = x;
    else
        return og_err(OG_ERR_INTERNAL, "append_f64 on a non-float vector");
    row_done(v, 1);
    return OG_OK;
}

og_status og_vector_append_bytes(og_vector *v, const void *p, size_t n)
{
    if (v->type.id != OG_T_STRING && v->type.id != OG_T_BLOB)
        return og_err(OG_ERR_INTERNAL, "append_bytes on a non-binary vector");
    OG_TRY(grow_rows(v));
    size_t used = (size_t)v->offsets[v->len];
    if (n > v->cap_bytes - used) {
        size_t ncap = v->cap_bytes ? v->cap_bytes : 64;
        while (ncap - used < n) ncap *= 2;
        uint8_t *q = realloc(v->values, ncap);
        if (!q) return og_err(OG_ERR_NOMEM, "out of memory");
        v->values = q;
        v->cap_bytes = ncap;
    }
    if (n) memcpy((uint8_t *)v->values + used, p, n);
    v->offsets[v->len + 1] = (int64_t)(used + n);
    row_done(v, 1);
    return OG_OK;
}

og_status og_vector_append_floats(og_vector *v, const float *p, size_t n)
{
    if (v->type.id != OG_T_VECTOR) return og_err(OG_ERR_INTERNAL, "append_floats on a non-vector column");
    if (n != v->type.dim) return og_err(OG_ERR_INVALID, "vector has %zu values, the column needs %u", n, v->type.dim);
    OG_TRY(grow_rows(v));
    memcpy((float *)v->values + v->len * v->type.dim, p, n * sizeof(float));
    row_done(v, 1);
    return OG_OK;
}

og_status og_vector_append_list_end(og_vector *v)
{
    if (v->type.id != OG_T_LIST) return og_err(OG_ERR_INTERNAL, "append_list_end on a non-list column");
    OG_TRY(grow_rows(v));
    v->offsets[v->len + 1] = (int64_t)v->child->len;
    row_done(v, 1);
    return OG_OK;
}

int64_t og_vector_get_i64(const og_vector *v, size_t i)
{
    assert(i < v->len);
    if (v->type.id == OG_T_I32 || v->type.id == OG_T_DATE32) return ((const int32_t *)v->values)[i];
    return ((const int64_t *)v->values)[i];
}

uint64_t og_vector_get_u64(const og_vector *v, size_t i)
{
    assert(i < v->len);
    if (v->type.id == OG_T_U32) return ((const uint32_t *)v->values)[i];
    return ((const uint64_t *)v->values)[i];
}

double og_vector_get_f64(const og_vector *v, size_t i)
{
    assert(i < v->len);
    if (v->type.id == OG_T_F32) return ((const float *)v->values)[i];
    return ((const double *)v->values)[i];
}

int og_vector_get_bool(const og_vector *v, size_t i)
{
    assert(i < v->len);
    return og_bit_get(v->values, i);
}

const uint8_t *og_vector_get_bytes(const og_vector *v, size_t i, size_t *len)
{
    assert(i < v->len);
    *len = (size_t)(v->offsets[i + 1] - v->offsets[i]);
    if (!v->values) return (const uint8_t *)""; /* only empty strings so far: no byte buffer */
    return (const uint8_t *)v->values + v->offsets[i];
}

const float *og_vector_get_floats(const og_vector *v, size_t i)
{
    assert(i < v->len);
    return (const float *)v->values + i * v->type.dim;
}

void og_vector_get_list(const og_vector *v, size_t i, size_t *begin, size_t *end)
{
    assert(i < v->len);
    *begin = (size_t)v->offsets[i];
    *end = (size_t)v->offsets[i + 1];
}

int og_vector_row_eq(const og_vector *a, size_t i, const og_vector *b, size_t j)
{
    int na = og_vector_is_null(a, i), nb = og_vector_is_null(b, j);
    if (na || nb) return na && nb;
    switch (a->type.id) {
    case OG_T_BOOL: return og_vector_get_bool(a, i) == og_vector_get_bool(b, j);
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64:
        return og_vector_get_i64(a, i) == og_vector_get_i64(b, j);
    case OG_T_U32: case OG_T_U64: return og_vector_get_u64(a, i) == og_vector_get_u64(b, j);
    case OG_T_F32: case OG_T_F64: {
        double x = og_vector_get_f64(a, i), y = og_vector_get_f64(b, j);
        return x == y || (isnan(x) && isnan(y));
    }
    case OG_T_STRING: case OG_T_BLOB: {
        size_t la, lb;
        const uint8_t *pa = og_vector_get_bytes(a, i, &la), *pb = og_vector_get_bytes(b, j, &lb);
        return la == lb && (la == 0 || memcmp(pa, pb, la) == 0);
    }
    case OG_T_VECTOR:
        return memcmp(og_vector_get_floats(a, i), og_vector_get_floats(b, j), 4u * a->type.dim) == 0;
    case OG_T_LIST: {
        size_t ab, ae, bb, be;
        og_vector_get_list(a, i, &ab, &ae);
        og_vector_get_list(b, j, &bb, &be);
        if (ae - ab != be - bb) return 0;
        for (size_t k = 0; k < ae - ab; k++)
            if (!og_vector_row_eq(a->child, ab + k, b->child, bb + k)) return 0;
        return 1;
    }
    default: return 0;
    }
}

static int cmp_num(double x, double y)
{
    int nx = isnan(x), ny = isnan(y);
    if (nx || ny) return nx - ny;
    return (x > y) - (x < y);
}

int og_vector_row_cmp(const og_vector *a, size_t i, const og_vector *b, size_t j)
{
    switch (a->type.id) {
    case OG_T_BOOL: return og_vector_get_bool(a, i) - og_vector_get_bool(b, j);
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: {
        int64_t x = og_vector_get_i64(a, i), y = og_vector_get_i64(b, j);
        return (x > y) - (x < y);
    }
    case OG_T_U32: case OG_T_U64: {
        uint64_t x = og_vector_get_u64(a, i), y = og_vector_get_u64(b, j);
        return (x > y) - (x < y);
    }
    case OG_T_F32: case OG_T_F64: return cmp_num(og_vector_get_f64(a, i), og_vector_get_f64(b, j));
    case OG_T_STRING: case OG_T_BLOB: {
        size_t la, lb;
        const uint8_t *pa = og_vector_get_bytes(a, i, &la), *pb = og_vector_get_bytes(b, j, &lb);
        size_t m = la < lb ? la : lb;
        int c = m ? memcmp(pa, pb, m) : 0;
        if (c) return c;
        return (la > lb) - (la < lb);
    }
    case OG_T_VECTOR: {
        const float *x = og_vector_get_floats(a, i), *y = og_vector_get_floats(b, j);
        for (uint32_t k = 0; k < a->type.dim; k++) {
            int c = cmp_num(x[k], y[k]);
            if (c) return c;
        }
        return 0;
    }
    case OG_T_LIST: {
        size_t ab, ae, bb, be;
        og_vector_get_list(a, i, &ab, &ae);
        og_vector_get_list(b, j, &bb, &be);
        for (size_t k = 0; ab + k < ae && bb + k < be; k++) {
            int na = og_vector_is_null(a->child, ab + k), nb = og_vector_is_null(b->child, bb + k);
            if (na || nb) {
                if (na != nb) return na ? -1 : 1;
                continue;
            }
            int c = og_vector_row_cmp(a->child, ab + k, b->child, bb + k);
            if (c) return c;
        }
        return ((ae - ab) > (be - bb)) - ((ae - ab) < (be - bb));
    }
    default: return 0;
    }
}

og_status og_vector_append_from(og_vector *dst, const og_vector *src, size_t i)
{
    if (og_vector_is_null(src, i)) return og_vector_append_null(dst);
    switch (src->type.id) {
    case OG_T_BOOL: return og_vector_append_bool(dst, og_vector_get_bool(src, i));
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64:
        return og_vector_append_i64(dst, og_vector_get_i64(src, i));
    case OG_T_U32: case OG_T_U64: return og_vector_append_u64(dst, og_vector_get_u64(src, i));
    case OG_T_F32: case OG_T_F64: return og_vector_append_f64(dst, og_vector_get_f64(src, i));
    case OG_T_STRING: case OG_T_BLOB: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(src, i, &n);
        return og_vector_append_bytes(dst, p, n);
    }
    case OG_T_VECTOR: return og_vector_append_floats(dst, og_vector_get_floats(src, i), src->type.dim);
    case OG_T_LIST: {
        size_t b, e;
        og_vector_get_list(src, i, &b, &e);
        for (size_t k = b; k < e; k++) OG_TRY(og_vector_append_from(dst->child, src->child, k));
        return og_vector_append_list_end(dst);
    }
    default: return og_err(OG_ERR_INTERNAL, "append_from: unsupported type %d", (int)src->type.id);
    }
}

og_status og_vector_gather(og_vector *out, const og_vector *src, const uint32_t *idx, size_t n)
{
    OG_TRY(og_vector_init(out, src->type));
    for (size_t k = 0; k < n; k++) {
        og_status st = idx[k] == UINT32_MAX ? og_vector_append_null(out) : og_vector_append_from(out, src, idx[k]);
        if (st != OG_OK) {
            og_vector_free(out);
            return st;
        }
    }
    return OG_OK;
}
