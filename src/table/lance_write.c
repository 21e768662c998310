/*
 * lance_write.c — the Lance 2.0 data-file writer (og_lance_writer, lance_file.h).
 *
 * Each physical column keeps one open page: its rows accumulate in little buffers (values,
 * a validity bitmap, u64 end offsets for strings and lists) until the page reaches the
 * column's row limit or its byte limit; then the page's buffers are appended to the file
 * image (each 64-byte aligned) and its `ColumnMetadata.Page` message is kept for the end.
 * Columns page independently, so their page boundaries differ; a list's child column is
 * paged by items.  og_lance_writer_finish closes every page and appends the FileDescriptor
 * (global buffer 0), the column metadata, both offset tables and the footer.
 *
 * Page encodings follow LANCE.md's table exactly (docs/lance-format.md): fixed-width values
 * and vectors use the Nullable wrapper (no_nulls / some_nulls / all_nulls); strings, blobs and
 * lists never do — a null row is an end offset raised by the null adjustment.
 */
#include "table/lance_file.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/pb.h"

typedef enum { K_FIXED, K_BOOL, K_BINARY, K_LIST, K_FSL } col_kind;

typedef struct wcol {
    col_kind kind;
    size_t width;        /* FIXED/FSL: bytes per row */
    unsigned bits;       /* FIXED/FSL item: bits per value */
    uint32_t dim;        /* FSL */
    int nullable;
    size_t max_rows;
    /* the open page */
    size_t rows, nulls;
    og_buf values;       /* FIXED/FSL bytes, BOOL bits, BINARY bytes */
    og_buf validity;     /* one bit per row (always kept; written only when there are nulls) */
    og_buf ends;         /* BINARY/LIST: u64 end offset per row, null adjustment not yet applied */
    uint64_t cur_end;    /* BINARY: bytes so far in the page; LIST: items so far */
    /* closed pages */
    og_buf pages;        /* ColumnMetadata.pages (field 2) messages, back to back */
    size_t npages;
} wcol;

struct og_lance_writer {
    og_lance_schema schema;
    og_type *types;      /* per field: the og_type of the column (LIST: the list; child: elem) */
    wcol *cols;          /* one per field */
    size_t ncols;
    size_t max_bytes;
    og_buf file;
    uint64_t rows;
    int failed, finished;
};

static const char ARRAY_URL[] = "/lance.encodings.ArrayEncoding";
static const char COLUMN_URL[] = "/lance.encodings.ColumnEncoding";

/* ------------------------------------------------------------------------------------------ */
/* encoding messages                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Appends field `field` holding the bytes of `inner` to `out`, then frees `inner`. */
static og_status put_sub(og_buf *out, uint32_t field, og_buf *inner)
{
    og_status st = og_pb_put_msg(out, field, inner);
    og_buf_free(inner);
    return st;
}

/* ArrayEncoding.flat { bits_per_value, buffer { buffer_index } } — the Buffer message is
 * always present (LanceDB panics without it). */
static og_status ae_flat(og_buf *out, unsigned bits, unsigned index)
{
    og_buf buf = OG_BUF_INIT, fl = OG_BUF_INIT;
    og_status st = OG_OK;
    if (index) st = og_pb_put_uint(&buf, 1, index);
    if (st == OG_OK) st = og_pb_put_uint(&fl, 1, bits);
    if (st == OG_OK) st = put_sub(&fl, 2, &buf);
    if (st == OG_OK) st = put_sub(out, 1, &fl);
    og_buf_free(&buf);
    og_buf_free(&fl);
    return st;
}

/* ArrayEncoding.nullable { no_nulls { values } } ; consumes x */
static og_status ae_nonull(og_buf *out, og_buf *x)
{
    og_buf nn = OG_BUF_INIT, nl = OG_BUF_INIT;
    og_status st = put_sub(&nn, 1, x);
    if (st == OG_OK) st = put_sub(&nl, 1, &nn);
    if (st == OG_OK) st = put_sub(out, 2, &nl);
    og_buf_free(&nn);
    og_buf_free(&nl);
    return st;
}

/* ArrayEncoding.nullable { some_nulls { validity, values } } ; consumes v and x */
static og_status ae_somenull(og_buf *out, og_buf *v, og_buf *x)
{
    og_buf sn = OG_BUF_INIT, nl = OG_BUF_INIT;
    og_status st = put_sub(&sn, 1, v);
    if (st == OG_OK) st = put_sub(&sn, 2, x);
    if (st == OG_OK) st = put_sub(&nl, 2, &sn);
    if (st == OG_OK) st = put_sub(out, 2, &nl);
    og_buf_free(v);
    og_buf_free(x);
    og_buf_free(&sn);
    og_buf_free(&nl);
    return st;
}

static og_status ae_allnull(og_buf *out)
{
    og_buf nl = OG_BUF_INIT;
    og_status st = og_pb_put_bytes(&nl, 3, "", 0);
    if (st == OG_OK) st = put_sub(out, 2, &nl);
    og_buf_free(&nl);
    return st;
}

/* ArrayEncoding.fixed_size_list { dimension, items } ; consumes x */
static og_status ae_fsl(og_buf *out, uint32_t dim, og_buf *x)
{
    og_buf m = OG_BUF_INIT;
    og_status st = og_pb_put_uint(&m, 1, dim);
    if (st == OG_OK) st = put_sub(&m, 2, x);
    if (st == OG_OK) st = put_sub(out, 3, &m);
    og_buf_free(x);
    og_buf_free(&m);
    return st;
}

/* ArrayEncoding.list { offsets, null_offset_adjustment, num_items } ; consumes x */
static og_status ae_list(og_buf *out, og_buf *x, uint64_t adj, uint64_t n)
{
    og_buf m = OG_BUF_INIT;
    og_status st = put_sub(&m, 1, x);
    if (st == OG_OK) st = og_pb_put_uint(&m, 2, adj);
    if (st == OG_OK && n) st = og_pb_put_uint(&m, 3, n);
    if (st == OG_OK) st = put_sub(out, 4, &m);
    og_buf_free(x);
    og_buf_free(&m);
    return st;
}

/* ArrayEncoding.binary { indices, bytes, null_adjustment } ; consumes i and x */
static og_status ae_binary(og_buf *out, og_buf *i, og_buf *x, uint64_t adj)
{
    og_buf m = OG_BUF_INIT;
    og_status st = put_sub(&m, 1, i);
    if (st == OG_OK) st = put_sub(&m, 2, x);
    if (st == OG_OK) st = og_pb_put_uint(&m, 3, adj);
    if (st == OG_OK) st = put_sub(out, 6, &m);
    og_buf_free(i);
    og_buf_free(x);
    og_buf_free(&m);
    return st;
}

/* lance.file.v2.Encoding { direct { encoding: Any { type_url, value } } } */
static og_status put_direct(og_buf *out, uint32_t field, const char *url, const og_buf *value)
{
    og_buf any = OG_BUF_INIT, dir = OG_BUF_INIT, enc = OG_BUF_INIT;
    og_status st = og_pb_put_str(&any, 1, url);
    if (st == OG_OK) st = og_pb_put_bytes(&any, 2, value->data, value->len);
    if (st == OG_OK) st = put_sub(&dir, 1, &any);
    if (st == OG_OK) st = put_sub(&enc, 2, &dir);
    if (st == OG_OK) st = put_sub(out, field, &enc);
    og_buf_free(&any);
    og_buf_free(&dir);
    og_buf_free(&enc);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* bits                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Writes n bits at bit position `pos` of b (grown and zero-extended as needed): bit k is bit
 * src_off + k of src, or 1 when src is NULL. */
static og_status put_bits(og_buf *b, size_t pos, const uint8_t *src, size_t src_off, size_t n)
{
    size_t need = (pos + n + 7) / 8;
    if (need > b->len) OG_TRY(og_buf_append_zeros(b, need - b->len));
    if (!src) {
        for (size_t k = 0; k < n; k++) b->data[(pos + k) >> 3] |= (uint8_t)(1u << ((pos + k) & 7));
        return OG_OK;
    }
    if (((pos | src_off) & 7) == 0) {
        memcpy(b->data + pos / 8, src + src_off / 8, n / 8);
        for (size_t k = n & ~(size_t)7; k < n; k++)
            if (og_bit_get(src, src_off + k)) b->data[(pos + k) >> 3] |= (uint8_t)(1u << ((pos + k) & 7));
        return OG_OK;
    }
    for (size_t k = 0; k < n; k++)
        if (og_bit_get(src, src_off + k)) b->data[(pos + k) >> 3] |= (uint8_t)(1u << ((pos + k) & 7));
    return OG_OK;
}

static size_t count_nulls(const uint8_t *validity, size_t off, size_t n)
{
    if (!validity) return 0;
    size_t c = 0;
    for (size_t k = 0; k < n; k++) c += !og_bit_get(validity, off + k);
    return c;
}

/* ------------------------------------------------------------------------------------------ */
/* pages                                                                                       */
/* ------------------------------------------------------------------------------------------ */

static void page_reset(wcol *c)
{
    c->rows = c->nulls = 0;
    c->cur_end = 0;
    og_buf_reset(&c->values);
    og_buf_reset(&c->validity);
    og_buf_reset(&c->ends);
}

/* Appends one page buffer to the file at a 64-byte boundary. */
static og_status put_page_buffer(og_lance_writer *w, const void *p, size_t n, uint64_t *off, uint64_t *size)
{
    OG_TRY(og_buf_pad_to(&w->file, OG_LANCE_ALIGN));
    *off = w->file.len;
    *size = n;
    return og_buf_append(&w->file, p, n);
}

/* Rewrites the pending ends in place with the null adjustment applied to null rows. */
static void adjust_ends(wcol *c, uint64_t adj)
{
    for (size_t i = 0; i < c->rows; i++) {
        if (og_bit_get(c->validity.data, i)) continue;
        uint64_t e = og_load_u64le(c->ends.data + 8 * i) + adj;
        for (int k = 0; k < 8; k++) c->ends.data[8 * i + k] = (uint8_t)(e >> (8 * k));
    }
}

/* Closes the open page of column c (also when it has no rows: a zero-length all-null page). */
static og_status emit_page(og_lance_writer *w, wcol *c)
{
    og_buf enc = OG_BUF_INIT, a = OG_BUF_INIT, b = OG_BUF_INIT, x = OG_BUF_INIT;
    uint64_t offs[3], sizes[3];
    size_t nbuf = 0;
    og_status st = OG_OK;
    int has_nulls = c->nulls > 0;

    if (c->rows == 0 || (c->nulls == c->rows && c->kind != K_LIST)) {
        st = ae_allnull(&enc);
    } else {
        switch (c->kind) {
        case K_FIXED:
        case K_BOOL:
        case K_FSL: {
            unsigned bits = c->kind == K_BOOL ? 1 : c->bits;
            size_t vlen = c->kind == K_BOOL ? (c->rows + 7) / 8 : c->values.len;
            if (c->kind == K_BOOL && c->values.len < vlen)
                st = og_buf_append_zeros(&c->values, vlen - c->values.len);
            if (st == OG_OK && has_nulls)
                st = put_page_buffer(w, c->validity.data, (c->rows + 7) / 8, &offs[nbuf], &sizes[nbuf]), nbuf++;
            if (st == OG_OK)
                st = put_page_buffer(w, c->values.data, vlen, &offs[nbuf], &sizes[nbuf]), nbuf++;
            unsigned vi = has_nulls ? 1 : 0;
            /* core = flat(bits, vi), or for a vector fsl(dim, nonull(flat(32, vi))) */
            if (st == OG_OK) st = ae_flat(&a, bits, vi);
            if (st == OG_OK && c->kind == K_FSL) {
                st = ae_nonull(&x, &a);
                if (st == OG_OK) st = ae_fsl(&a, c->dim, &x);
            }
            if (st == OG_OK && has_nulls) {
                st = ae_flat(&b, 1, 0);
                if (st == OG_OK) st = ae_somenull(&enc, &b, &a);
            } else if (st == OG_OK) {
                st = ae_nonull(&enc, &a);
            }
            break;
        }
        case K_BINARY: {
            uint64_t adj = c->cur_end + 1;
            adjust_ends(c, adj);
            st = put_page_buffer(w, c->ends.data, c->ends.len, &offs[0], &sizes[0]);
            if (st == OG_OK) st = put_page_buffer(w, c->values.data, c->values.len, &offs[1], &sizes[1]);
            nbuf = 2;
            if (st == OG_OK) st = ae_flat(&a, 64, 0);
            if (st == OG_OK) st = ae_nonull(&x, &a);
            if (st == OG_OK) st = ae_flat(&b, 8, 1);
            if (st == OG_OK) st = ae_binary(&enc, &x, &b, adj);
            break;
        }
        case K_LIST: {
            uint64_t adj = c->cur_end + 1;
            adjust_ends(c, adj);
            st = put_page_buffer(w, c->ends.data, c->ends.len, &offs[0], &sizes[0]);
            nbuf = 1;
            if (st == OG_OK) st = ae_flat(&a, 64, 0);
            if (st == OG_OK) st = ae_nonull(&x, &a);
            if (st == OG_OK) st = ae_list(&enc, &x, adj, c->cur_end);
            break;
        }
        }
    }

    /* ColumnMetadata.Page { buffer_offsets = 1, buffer_sizes = 2, length = 3, encoding = 4 } */
    og_buf page = OG_BUF_INIT;
    if (st == OG_OK && nbuf) st = og_pb_put_packed_uint(&page, 1, offs, nbuf);
    if (st == OG_OK && nbuf) st = og_pb_put_packed_uint(&page, 2, sizes, nbuf);
    if (st == OG_OK && c->rows) st = og_pb_put_uint(&page, 3, c->rows);
    if (st == OG_OK) st = put_direct(&page, 4, ARRAY_URL, &enc);
    if (st == OG_OK) st = put_sub(&c->pages, 2, &page);
    if (st == OG_OK) c->npages++;
    og_buf_free(&page);
    og_buf_free(&enc);
    og_buf_free(&a);
    og_buf_free(&b);
    og_buf_free(&x);
    page_reset(c);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* appending rows                                                                              */
/* ------------------------------------------------------------------------------------------ */

static int page_full(const og_lance_writer *w, const wcol *c)
{
    return c->rows >= c->max_rows || c->values.len >= w->max_bytes || c->ends.len >= w->max_bytes;
}

static og_status append_rows(og_lance_writer *w, size_t ci, const og_vector *v, size_t start, size_t n);

static og_status append_fixed(og_lance_writer *w, wcol *c, const og_vector *v, size_t start, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k = n - i;
        if (k > c->max_rows - c->rows) k = c->max_rows - c->rows;
        if (c->kind != K_BOOL) {
            size_t room = c->values.len < w->max_bytes ? (w->max_bytes - c->values.len + c->width - 1) / c->width : 1;
            if (room == 0) room = 1;
            if (k > room) k = room;
        }
        size_t row = start + i;
        size_t nn = count_nulls(v->validity, row, k);
        if (c->kind == K_BOOL) {
            OG_TRY(put_bits(&c->values, c->rows, v->values, row, k));
            if (nn) /* null slots are written as 0 */
                for (size_t q = 0; q < k; q++)
                    if (og_vector_is_null(v, row + q))
                        c->values.data[(c->rows + q) >> 3] &= (uint8_t)~(1u << ((c->rows + q) & 7));
        } else {
            size_t at = c->values.len;
            OG_TRY(og_buf_append(&c->values, (const uint8_t *)v->values + row * c->width, k * c->width));
            if (nn)
                for (size_t q = 0; q < k; q++)
                    if (og_vector_is_null(v, row + q)) memset(c->values.data + at + q * c->width, 0, c->width);
        }
        OG_TRY(put_bits(&c->validity, c->rows, v->validity, row, k));
        c->rows += k;
        c->nulls += nn;
        i += k;
        if (page_full(w, c)) OG_TRY(emit_page(w, c));
    }
    return OG_OK;
}

static og_status push_end(wcol *c, int valid)
{
    OG_TRY(og_buf_append_u64le(&c->ends, c->cur_end));
    if (valid) OG_TRY(put_bits(&c->validity, c->rows, NULL, 0, 1));
    else {
        size_t need = (c->rows + 8) / 8;
        if (need > c->validity.len) OG_TRY(og_buf_append_zeros(&c->validity, need - c->validity.len));
        c->nulls++;
    }
    c->rows++;
    return OG_OK;
}

/* Appends rows [i, i + k) of a string/blob vector, none of them null, to the open page in one
 * go, as k rows one at a time would: the rows up to the first after which the page is full
 * (page_full, then closed), or all k; *done receives how many.  The end offsets were appended one
 * og_buf call per row before (~3 % of a bulk load's CPU). */
static og_status append_binary_run(og_lance_writer *w, wcol *c, const og_vector *v, size_t i, size_t k, size_t *done)
{
    if (k > c->max_rows - c->rows) k = c->max_rows - c->rows;
    if (c->ends.len < w->max_bytes) {
        size_t room = (w->max_bytes - c->ends.len + 7) / 8; /* rows until the ends reach the limit */
        if (k > room) k = room;
    } else {
        k = 1;
    }
    if (k == 0) k = 1;
    const int64_t *off = v->offsets;
    int64_t b0 = off[i];
    size_t m = 0;
    size_t vlen = c->values.len;
    while (m < k) {
        int64_t b = off[i + m], e = off[i + m + 1];
        if (b < 0 || e < b) break;
        m++;
        if (vlen + (size_t)(e - b0) >= w->max_bytes) break; /* this row fills the page */
    }
    if (m) {
        size_t bytes = (size_t)(off[i + m] - b0);
        if (bytes) OG_TRY(og_buf_append(&c->values, (const uint8_t *)v->values + b0, bytes));
        OG_TRY(og_buf_reserve(&c->ends, 8 * m));
        uint8_t *q = c->ends.data + c->ends.len;
        for (size_t r = 0; r < m; r++, q += 8) {
            uint64_t end = c->cur_end + (uint64_t)(off[i + r + 1] - b0);
            for (int t = 0; t < 8; t++) q[t] = (uint8_t)(end >> (8 * t)); /* little-endian */
        }
        c->ends.len += 8 * m;
        c->cur_end += (uint64_t)bytes;
        OG_TRY(put_bits(&c->validity, c->rows, NULL, 0, m));
        c->rows += m;
        if (page_full(w, c)) OG_TRY(emit_page(w, c));
    }
    if (m < k && (off[i + m] < 0 || off[i + m + 1] < off[i + m]))
        return og_err(OG_ERR_INVALID, "string/blob offsets are not monotonic at row %zu", i + m);
    *done = m;
    return OG_OK;
}

static og_status append_binary(og_lance_writer *w, wcol *c, const og_vector *v, size_t start, size_t n)
{
    if (!v->validity || count_nulls(v->validity, start, n) == 0) {
        for (size_t i = start; i < start + n;) {
            size_t m = 0;
            OG_TRY(append_binary_run(w, c, v, i, start + n - i, &m));
            i += m;
        }
        return OG_OK;
    }
    for (size_t i = start; i < start + n; i++) {
        int valid = !og_vector_is_null(v, i);
        if (valid) {
            int64_t b = v->offsets[i], e = v->offsets[i + 1];
            if (b < 0 || e < b) return og_err(OG_ERR_INVALID, "string/blob offsets are not monotonic at row %zu", i);
            if (e > b) OG_TRY(og_buf_append(&c->values, (const uint8_t *)v->values + b, (size_t)(e - b)));
            c->cur_end += (uint64_t)(e - b);
        }
        OG_TRY(push_end(c, valid));
        if (page_full(w, c)) OG_TRY(emit_page(w, c));
    }
    return OG_OK;
}

static og_status append_list(og_lance_writer *w, size_t ci, const og_vector *v, size_t start, size_t n)
{
    wcol *c = &w->cols[ci];
    const og_vector *child = v->child;
    if (!child) return og_err(OG_ERR_INVALID, "list vector without a child");
    size_t run_b = 0, run_e = 0; /* pending contiguous item range */
    for (size_t i = start; i < start + n; i++) {
        int valid = !og_vector_is_null(v, i);
        if (valid) {
            int64_t b = v->offsets[i], e = v->offsets[i + 1];
            if (b < 0 || e < b || (uint64_t)e > child->len)
                return og_err(OG_ERR_INVALID, "list offsets out of range at row %zu", i);
            if (run_e != (size_t)b || run_b == run_e) {
                if (run_e > run_b) OG_TRY(append_rows(w, ci + 1, child, run_b, run_e - run_b));
                run_b = (size_t)b;
            }
            run_e = (size_t)e;
            c->cur_end += (uint64_t)(e - b);
        }
        OG_TRY(push_end(c, valid));
        if (page_full(w, c)) OG_TRY(emit_page(w, c));
    }
    if (run_e > run_b) OG_TRY(append_rows(w, ci + 1, child, run_b, run_e - run_b));
    return OG_OK;
}

/* Appends rows [start, start+n) of v to physical column ci (and, for a list, its items to
 * column ci + 1). */
static og_status append_rows(og_lance_writer *w, size_t ci, const og_vector *v, size_t start, size_t n)
{
    wcol *c = &w->cols[ci];
    if (!og_type_eq(v->type, w->types[ci])) {
        char a[48], b[48];
        return og_err(OG_ERR_INVALID, "column %s: vector of type %s given for a %s field",
                      w->schema.fields[ci].name, og_type_name(v->type, a, sizeof a),
                      og_type_name(w->types[ci], b, sizeof b));
    }
    if (!c->nullable && count_nulls(v->validity, start, n))
        return og_err(OG_ERR_INVALID, "column %s is not nullable but the batch has nulls",
                      w->schema.fields[ci].name);
    if (n && !v->values && (c->kind == K_FIXED || c->kind == K_BOOL || c->kind == K_FSL))
        return og_err(OG_ERR_INVALID, "column %s: vector has no values", w->schema.fields[ci].name);
    if (n && !v->offsets && (c->kind == K_BINARY || c->kind == K_LIST))
        return og_err(OG_ERR_INVALID, "column %s: vector has no offsets", w->schema.fields[ci].name);
    switch (c->kind) {
    case K_FIXED: case K_BOOL: case K_FSL: return append_fixed(w, c, v, start, n);
    case K_BINARY: return append_binary(w, c, v, start, n);
    case K_LIST: return append_list(w, ci, v, start, n);
    }
    return og_err(OG_ERR_INTERNAL, "bad column kind");
}

/* ------------------------------------------------------------------------------------------ */
/* public                                                                                      */
/* ------------------------------------------------------------------------------------------ */

og_status og_lance_writer_new(og_lance_writer **out, const og_lance_schema *schema,
                              const og_lance_writer_opts *opts)
{
    *out = NULL;
    og_status st = og_lance_schema_validate(schema);
    if (st) return og_err_wrap(OG_ERR_INVALID, "lance writer");
    og_lance_writer *w = calloc(1, sizeof *w);
    if (!w) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t max_rows = opts && opts->max_page_rows ? opts->max_page_rows : OG_LANCE_DEFAULT_PAGE_ROWS;
    w->max_bytes = opts && opts->max_page_bytes ? opts->max_page_bytes : OG_LANCE_DEFAULT_PAGE_BYTES;
    st = og_lance_schema_copy(&w->schema, schema);
    w->ncols = schema->count;
    if (st == OG_OK && w->ncols) {
        w->cols = calloc(w->ncols, sizeof *w->cols);
        w->types = calloc(w->ncols, sizeof *w->types);
        if (!w->cols || !w->types) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; st == OG_OK && i < w->ncols; i++) {
        const og_lance_field *f = &schema->fields[i];
        og_type t;
        if (f->parent_id != -1) {
            long p = og_lance_schema_find_id(schema, f->parent_id);
            if (p < 0 || (size_t)p + 1 != i) {
                st = og_err(OG_ERR_INVALID, "lance writer: child field %s must directly follow its list", f->name);
                break;
            }
            st = og_lance_parse_logical_type(f->logical_type, &t);
        } else {
            st = og_lance_schema_field_type(schema, i, &t);
        }
        if (st) {
            st = og_err_wrap(OG_ERR_INVALID, "lance writer");
            break;
        }
        wcol *c = &w->cols[i];
        w->types[i] = t;
        c->nullable = f->nullable;
        c->max_rows = max_rows;
        switch (t.id) {
        case OG_T_BOOL: c->kind = K_BOOL; break;
        case OG_T_STRING: case OG_T_BLOB: c->kind = K_BINARY; break;
        case OG_T_LIST: c->kind = K_LIST; break;
        case OG_T_VECTOR: c->kind = K_FSL; c->dim = t.dim; c->bits = 32; c->width = og_type_width(t); break;
        default: c->kind = K_FIXED; c->width = og_type_width(t); c->bits = (unsigned)(8 * c->width); break;
        }
    }
    if (st) {
        og_lance_writer_free(w);
        return st;
    }
    *out = w;
    return OG_OK;
}

og_status og_lance_writer_set_column_page_rows(og_lance_writer *w, size_t column, size_t max_rows)
{
    if (column >= w->ncols || max_rows == 0)
        return og_err(OG_ERR_INVALID, "lance writer: column %zu / page rows %zu out of range", column, max_rows);
    w->cols[column].max_rows = max_rows;
    return OG_OK;
}

og_status og_lance_writer_write(og_lance_writer *w, const og_vector *cols, size_t ncols)
{
    if (w->failed || w->finished) return og_err(OG_ERR_INVALID, "lance writer: write after failure or finish");
    size_t ntop = og_lance_schema_num_top(&w->schema);
    if (ncols != ntop)
        return og_err(OG_ERR_INVALID, "lance writer: %zu vectors given for %zu top-level fields", ncols, ntop);
    size_t n = ncols ? cols[0].len : 0;
    for (size_t k = 0; k < ncols; k++)
        if (cols[k].len != n)
            return og_err(OG_ERR_INVALID, "lance writer: vectors of a batch differ in length (%zu, %zu)", n, cols[k].len);
    for (size_t k = 0; k < ncols; k++) {
        size_t ci = (size_t)og_lance_schema_top(&w->schema, k);
        og_status st = append_rows(w, ci, &cols[k], 0, n);
        if (st) {
            w->failed = 1;
            return st;
        }
    }
    w->rows += n;
    return OG_OK;
}

uint64_t og_lance_writer_num_rows(const og_lance_writer *w) { return w->rows; }

og_status og_lance_writer_finish(og_lance_writer *w, og_buf *out)
{
    if (w->failed || w->finished) return og_err(OG_ERR_INVALID, "lance writer: finish after failure or finish");
    if (out->len || out->data) return og_err(OG_ERR_INVALID, "lance writer: the output buffer must be empty");
    og_status st = OG_OK;
    w->finished = 1;
    for (size_t i = 0; st == OG_OK && i < w->ncols; i++)
        if (w->cols[i].rows || w->cols[i].npages == 0) st = emit_page(w, &w->cols[i]);

    /* global buffer 0: FileDescriptor { schema = 1: Schema { fields = 1 }, length = 2 } */
    og_buf schema = OG_BUF_INIT, desc = OG_BUF_INIT, cenc = OG_BUF_INIT, empty = OG_BUF_INIT;
    if (st == OG_OK) st = og_lance_schema_encode_fields(&w->schema, 1, &schema);
    if (st == OG_OK) st = put_sub(&desc, 1, &schema);
    if (st == OG_OK && w->rows) st = og_pb_put_uint(&desc, 2, w->rows);
    if (st == OG_OK) st = og_buf_pad_to(&w->file, OG_LANCE_ALIGN);
    uint64_t gb_pos = w->file.len, gb_len = desc.len;
    if (st == OG_OK) st = og_buf_append(&w->file, desc.data, desc.len);
    if (st == OG_OK) st = og_buf_pad_to(&w->file, OG_LANCE_ALIGN);

    /* ColumnEncoding { values = 1: Empty }, the same for every column */
    og_buf ce = OG_BUF_INIT;
    if (st == OG_OK) st = og_pb_put_bytes(&ce, 1, "", 0);
    if (st == OG_OK) st = put_direct(&cenc, 1, COLUMN_URL, &ce);
    og_buf_free(&ce);

    uint64_t *cm = w->ncols ? calloc(2 * w->ncols, sizeof *cm) : NULL;
    if (st == OG_OK && w->ncols && !cm) st = og_err(OG_ERR_NOMEM, "out of memory");
    uint64_t cm_start = w->file.len;
    for (size_t i = 0; st == OG_OK && i < w->ncols; i++) {
        cm[2 * i] = w->file.len;
        st = og_buf_append(&w->file, cenc.data, cenc.len);
        if (st == OG_OK) st = og_buf_append(&w->file, w->cols[i].pages.data, w->cols[i].pages.len);
        cm[2 * i + 1] = w->file.len - cm[2 * i];
    }
    uint64_t cmo = w->file.len;
    for (size_t i = 0; st == OG_OK && i < 2 * w->ncols; i++) st = og_buf_append_u64le(&w->file, cm[i]);
    uint64_t gbo = w->file.len;
    if (st == OG_OK) st = og_buf_append_u64le(&w->file, gb_pos);
    if (st == OG_OK) st = og_buf_append_u64le(&w->file, gb_len);
    /* footer */
    if (st == OG_OK) st = og_buf_append_u64le(&w->file, cm_start);
    if (st == OG_OK) st = og_buf_append_u64le(&w->file, cmo);
    if (st == OG_OK) st = og_buf_append_u64le(&w->file, gbo);
    if (st == OG_OK) st = og_buf_append_u32le(&w->file, 1);
    if (st == OG_OK) st = og_buf_append_u32le(&w->file, (uint32_t)w->ncols);
    if (st == OG_OK) st = og_buf_append_u16le(&w->file, OG_LANCE_FILE_MAJOR);
    if (st == OG_OK) st = og_buf_append_u16le(&w->file, OG_LANCE_FILE_MINOR);
    if (st == OG_OK) st = og_buf_append(&w->file, "LANC", 4);
    free(cm);
    og_buf_free(&schema);
    og_buf_free(&desc);
    og_buf_free(&cenc);
    og_buf_free(&empty);
    if (st) {
        w->failed = 1;
        return st;
    }
    *out = w->file;
    memset(&w->file, 0, sizeof w->file);
    return OG_OK;
}

void og_lance_writer_free(og_lance_writer *w)
{
    if (!w) return;
    for (size_t i = 0; w->cols && i < w->ncols; i++) {
        og_buf_free(&w->cols[i].values);
        og_buf_free(&w->cols[i].validity);
        og_buf_free(&w->cols[i].ends);
        og_buf_free(&w->cols[i].pages);
    }
    free(w->cols);
    free(w->types);
    og_lance_schema_free(&w->schema);
    og_buf_free(&w->file);
    free(w);
}
