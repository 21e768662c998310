/*
 * arrow_col.c — one result column (a row range of an og_vector) as an Arrow array.
 *
 * Why a copy and not a borrow: og_vector's strings and lists carry 64-bit offsets that may
 * start past 0 (a slice), while Arrow's Utf8 and List carry 32-bit offsets from 0, and a record
 * batch starts its validity bitmap at its own first row.  Copying once into Arrow's exact
 * layout lets the IPC writer and the C Data Interface hand the buffers out as they are.
 *
 * Type mapping (docs/query-language.md "Arrow output"): I32/I64/U32/U64 -> Int(32|64,
 * signed?), F32/F64 -> FloatingPoint, Bool -> Bool, Date -> Date32 (days), DateTime ->
 * Timestamp(ms, "UTC"), String and enums and node ids -> Utf8, Blob -> Binary, [T] ->
 * List<T>, Vector(n) -> FixedSizeList<n, Float32>, an untyped null -> Null.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/arrow.h"
#include "util/error.h"

void og_arrow_col_free(og_arrow_col *c)
{
    if (!c) return;
    for (int i = 0; i < 3; i++) og_buf_free(&c->bufs[i]);
    if (c->child) {
        og_arrow_col_free(c->child);
        free(c->child);
    }
    memset(c, 0, sizeof *c);
}

/* The validity bitmap of rows [row0, row0 + n) into bufs[0] (left empty when none is null). */
static og_status copy_validity(og_arrow_col *c, const og_vector *v, size_t row0, size_t n)
{
    size_t nulls = 0;
    if (v->validity)
        for (size_t i = 0; i < n; i++) nulls += !og_bit_get(v->validity, row0 + i);
    c->null_count = (int64_t)nulls;
    if (!nulls) return OG_OK;
    og_buf *b = &c->bufs[0];
    if (og_buf_append_zeros(b, (n + 7) / 8)) return OG_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        if (og_bit_get(v->validity, row0 + i)) b->data[i >> 3] |= (uint8_t)(1u << (i & 7));
    return OG_OK;
}

/* 32-bit offsets of rows [row0, row0 + n) rebased to 0, into b; lo and hi get the 64-bit range. */
static og_status copy_offsets(og_buf *b, const int64_t *off, size_t row0, size_t n, int64_t *lo, int64_t *hi)
{
    if (!n) { /* an empty batch or list: no offsets to read (an empty vector may have none) */
        *lo = *hi = 0;
        return og_buf_append_u32le(b, 0);
    }
    *lo = off[row0];
    *hi = off[row0 + n];
    if (*hi - *lo > INT32_MAX)
        return og_err(OG_ERR_LIMIT, "a batch of %zu rows holds %lld bytes or items, past Arrow's 32-bit offsets", n,
                      (long long)(*hi - *lo));
    if (og_buf_reserve(b, (n + 1) * 4)) return OG_ERR_NOMEM;
    for (size_t i = 0; i <= n; i++) og_buf_append_u32le(b, (uint32_t)(off[row0 + i] - *lo));
    return OG_OK;
}

static void set_int(og_arrow_col *c, int bits, int is_signed, const char *fmt)
{
    c->type = OG_ARROW_INT;
    c->bit_width = bits;
    c->is_signed = is_signed;
    snprintf(c->format, sizeof c->format, "%s", fmt);
}

/* Fills c's type description from an og_type; 0, or -1 for a type Arrow output has no
 * mapping for (none today; kept so a new og_type fails loudly). */
static int describe(og_arrow_col *c, og_type t)
{
    c->nbufs = 2;
    switch (t.id) {
    case OG_T_NULL: c->type = OG_ARROW_NULL, c->nbufs = 0, snprintf(c->format, sizeof c->format, "n"); break;
    case OG_T_BOOL: c->type = OG_ARROW_BOOL, snprintf(c->format, sizeof c->format, "b"); break;
    case OG_T_I32: set_int(c, 32, 1, "i"); break;
    case OG_T_I64: set_int(c, 64, 1, "l"); break;
    case OG_T_U32: set_int(c, 32, 0, "I"); break;
    case OG_T_U64: set_int(c, 64, 0, "L"); break;
    case OG_T_F32: c->type = OG_ARROW_FLOAT, c->precision = 1, snprintf(c->format, sizeof c->format, "f"); break;
    case OG_T_F64: c->type = OG_ARROW_FLOAT, c->precision = 2, snprintf(c->format, sizeof c->format, "g"); break;
    case OG_T_DATE32: c->type = OG_ARROW_DATE, c->date_unit = 0, snprintf(c->format, sizeof c->format, "tdD"); break;
    case OG_T_DATE64: c->type = OG_ARROW_TIMESTAMP, snprintf(c->format, sizeof c->format, "tsm:UTC"); break;
    case OG_T_STRING: c->type = OG_ARROW_UTF8, c->nbufs = 3, snprintf(c->format, sizeof c->format, "u"); break;
    case OG_T_BLOB: c->type = OG_ARROW_BINARY, c->nbufs = 3, snprintf(c->format, sizeof c->format, "z"); break;
    case OG_T_LIST: c->type = OG_ARROW_LIST, snprintf(c->format, sizeof c->format, "+l"); break;
    case OG_T_VECTOR:
        c->type = OG_ARROW_FIXED_SIZE_LIST, c->nbufs = 1, c->list_size = (int)t.dim;
        snprintf(c->format, sizeof c->format, "+w:%u", t.dim);
        break;
    default: return -1;
    }
    return 0;
}

static og_status convert(og_arrow_col *c, const og_vector *v, size_t row0, size_t n);

static og_status make_child(og_arrow_col *c, og_type t)
{
    c->child = calloc(1, sizeof *c->child);
    if (!c->child) return og_err(OG_ERR_NOMEM, "out of memory");
    if (describe(c->child, t)) return og_err(OG_ERR_UNSUPPORTED, "no Arrow type for a list of this element type");
    return OG_OK;
}

static og_status convert(og_arrow_col *c, const og_vector *v, size_t row0, size_t n)
{
    c->length = (int64_t)n;
    if (c->type == OG_ARROW_NULL) {
        c->null_count = (int64_t)n;
        return OG_OK;
    }
    if (copy_validity(c, v, row0, n)) return og_err(OG_ERR_NOMEM, "out of memory");
    og_buf *vals = &c->bufs[1];
    size_t w = og_type_width(v->type);
    int64_t lo, hi;
    og_status st;
    switch (v->type.id) {
    case OG_T_BOOL:
        if (og_buf_append_zeros(vals, (n + 7) / 8)) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
            if (og_bit_get(v->values, row0 + i)) vals->data[i >> 3] |= (uint8_t)(1u << (i & 7));
        return OG_OK;
    case OG_T_STRING:
    case OG_T_BLOB:
        if ((st = copy_offsets(vals, v->offsets, row0, n, &lo, &hi))) return st;
        if (hi > lo && og_buf_append(&c->bufs[2], (const uint8_t *)v->values + lo, (size_t)(hi - lo)))
            return og_err(OG_ERR_NOMEM, "out of memory");
        return OG_OK;
    case OG_T_LIST:
        if ((st = copy_offsets(vals, v->offsets, row0, n, &lo, &hi))) return st;
        if ((st = make_child(c, (og_type){v->type.elem, OG_T_NULL, 0}))) return st;
        c->child->nullable = 1;
        return hi > lo ? convert(c->child, v->child, (size_t)lo, (size_t)(hi - lo)) : OG_OK;
    case OG_T_VECTOR: /* null rows are zero-filled floats: the child has no nulls */
        if ((st = make_child(c, (og_type){OG_T_F32, OG_T_NULL, 0}))) return st;
        c->child->length = (int64_t)n * v->type.dim;
        if (n && og_buf_append(&c->child->bufs[1], (const uint8_t *)v->values + row0 * w, n * w))
            return og_err(OG_ERR_NOMEM, "out of memory");
        return OG_OK;
    default:
        if (n && og_buf_append(vals, (const uint8_t *)v->values + row0 * w, n * w))
            return og_err(OG_ERR_NOMEM, "out of memory");
        return OG_OK;
    }
}

og_status og_arrow_col_from_rows(og_arrow_col *out, const og_rows *r, size_t col, size_t row0, size_t n)
{
    memset(out, 0, sizeof *out);
    const og_vector *v = &r->res.cols[col];
    const og_qtype *qt = &r->res.types[col];
    if (describe(out, v->type))
        return og_err(OG_ERR_UNSUPPORTED, "column '%s' has no Arrow type", r->res.names[col]);
    out->nullable = qt->nullable || out->type == OG_ARROW_NULL;
    out->is_json = qt->node_type >= 0 && qt->is_object && v->type.id == OG_T_STRING;
    og_status st = convert(out, v, row0, n);
    if (st) og_arrow_col_free(out);
    return st;
}
