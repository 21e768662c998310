/*
 * arrow_ipc.c — the Arrow IPC stream format (columnar format spec, "Serialization and
 * Interprocess Communication"): a Schema message, RecordBatch messages, an end-of-stream marker.
 *
 * Why hand-written: Debian 12 packages neither Arrow's C++/GLib libraries nor nanoarrow, and a
 * writer needs only a small part of the format — little-endian, uncompressed, no dictionaries.
 * Each message's metadata is a FlatBuffers table tree (Message.fbs, Schema.fbs); the builder
 * below writes it front to back: a table first, then what it points at, patching each
 * forward offset once its target has a position (FlatBuffers' offsets are unsigned and point
 * forward, its vtable offsets are signed and may point back).  Every scalar sits at an
 * address aligned to its size from the start of the buffer, as FlatBuffers verifiers check.
 * Tested against Apache Arrow's own reader (tests/arrow/, npm `apache-arrow`) and fuzzed
 * (tests/fuzz/fuzz_arrow_ipc.c).
 */
#include <stdlib.h>
#include <string.h>

#include "api/arrow.h"
#include "util/budget.h"
#include "util/error.h"

/* ---- a forward FlatBuffers builder ---------------------------------------------------------- */

enum { FB_NONE = 0, FB_U8, FB_I16, FB_I32, FB_I64, FB_OFF };

typedef struct fb_field {
    int kind;
    uint64_t v; /* the scalar (two's complement for signed) */
} fb_field;

static size_t fb_size(int kind)
{
    static const size_t sz[] = {0, 1, 2, 4, 8, 4};
    return sz[kind];
}

static void fb_pad(og_buf *b, size_t align)
{
    while (b->len % align) og_buf_append_byte(b, 0);
}

/* Points the uoffset at `slot` to `target` (which lies after it). */
static void fb_patch(og_buf *b, size_t slot, size_t target)
{
    if (b->failed || slot + 4 > b->len) return;
    uint32_t d = (uint32_t)(target - slot);
    for (int i = 0; i < 4; i++) b->data[slot + i] = (uint8_t)(d >> (8 * i));
}

/* Writes a table of fields f[0..n) (field id = index; FB_NONE = absent, read as its default)
 * preceded by its vtable.  Returns the table's position; slots[i] receives the position of
 * each FB_OFF field's offset, for fb_patch. */
static size_t fb_table(og_buf *b, const fb_field *f, size_t n, size_t *slots)
{
    size_t vt_len = 4 + 2 * n;
    fb_pad(b, 2);
    if ((b->len + vt_len) % 4) og_buf_append_u16le(b, 0); /* so that the table is 4-aligned */
    size_t vt = b->len, table = vt + vt_len;
    /* field positions: largest first, each aligned (absolutely) to its size */
    size_t pos[16] = {0}, end = table + 4;
    for (size_t size = 8; size >= 1; size /= 2)
        for (size_t i = 0; i < n; i++)
            if (f[i].kind && fb_size(f[i].kind) == size) {
                end = (end + size - 1) / size * size;
                pos[i] = end;
                end += size;
            }
    og_buf_append_u16le(b, (uint16_t)vt_len);
    og_buf_append_u16le(b, (uint16_t)(end - table));
    for (size_t i = 0; i < n; i++) og_buf_append_u16le(b, (uint16_t)(f[i].kind ? pos[i] - table : 0));
    og_buf_append_u32le(b, (uint32_t)(table - vt)); /* soffset: the vtable lies before */
    og_buf_append_zeros(b, end - table - 4);
    if (b->failed) return table;
    for (size_t i = 0; i < n; i++) {
        if (!f[i].kind) continue;
        for (size_t k = 0; k < fb_size(f[i].kind); k++) b->data[pos[i] + k] = (uint8_t)(f[i].v >> (8 * k));
        if (slots && f[i].kind == FB_OFF) slots[i] = pos[i];
    }
    return table;
}

static size_t fb_string(og_buf *b, const char *s)
{
    size_t n = strlen(s);
    fb_pad(b, 4);
    size_t at = b->len;
    og_buf_append_u32le(b, (uint32_t)n);
    og_buf_append(b, s, n + 1); /* with its NUL, as FlatBuffers strings end */
    return at;
}

/* A vector of `count` offsets; returns its position, the slots follow at +4, +8, ... */
static size_t fb_vec_offsets(og_buf *b, size_t count)
{
    fb_pad(b, 4);
    size_t at = b->len;
    og_buf_append_u32le(b, (uint32_t)count);
    og_buf_append_zeros(b, 4 * count);
    return at;
}

/* A vector of 16-byte structs of two int64 each (FieldNode, Buffer), 8-aligned elements. */
static size_t fb_vec_pairs(og_buf *b, const int64_t *pairs, size_t count)
{
    fb_pad(b, 8);
    og_buf_append_u32le(b, 0); /* padding, so that the elements after the length are 8-aligned */
    size_t at = b->len;
    og_buf_append_u32le(b, (uint32_t)count);
    for (size_t i = 0; i < 2 * count; i++) og_buf_append_u64le(b, (uint64_t)pairs[i]);
    return at;
}

/* ---- the schema ----------------------------------------------------------------------------- */

static size_t write_type(og_buf *b, const og_arrow_col *c)
{
    fb_field f[2] = {{0, 0}, {0, 0}};
    size_t slots[2] = {0, 0}, n = 0;
    switch (c->type) {
    case OG_ARROW_INT: f[0] = (fb_field){FB_I32, (uint64_t)c->bit_width}, f[1] = (fb_field){FB_U8, (uint64_t)c->is_signed}, n = 2; break;
    case OG_ARROW_FLOAT: f[0] = (fb_field){FB_I16, (uint64_t)c->precision}, n = 1; break;
    case OG_ARROW_DATE: f[0] = (fb_field){FB_I16, (uint64_t)c->date_unit}, n = 1; break;
    case OG_ARROW_TIMESTAMP: f[0] = (fb_field){FB_I16, 1 /* MILLISECOND */}, f[1] = (fb_field){FB_OFF, 0}, n = 2; break;
    case OG_ARROW_FIXED_SIZE_LIST: f[0] = (fb_field){FB_I32, (uint64_t)c->list_size}, n = 1; break;
    default: break; /* Null, Utf8, Binary, Bool, List: empty tables */
    }
    size_t t = fb_table(b, f, n, slots);
    if (c->type == OG_ARROW_TIMESTAMP) fb_patch(b, slots[1], fb_string(b, "UTC"));
    return t;
}

static size_t write_field(og_buf *b, const og_arrow_col *c, const char *name)
{
    /* Field: name, nullable, type_type, type, dictionary, children, custom_metadata */
    fb_field f[7] = {{FB_OFF, 0}, {FB_U8, (uint64_t)c->nullable}, {FB_U8, (uint64_t)c->type}, {FB_OFF, 0}, {0, 0},
                     {FB_OFF, 0}, {c->is_json ? FB_OFF : 0, 0}};
    size_t slots[7] = {0};
    size_t t = fb_table(b, f, 7, slots);
    fb_patch(b, slots[0], fb_string(b, name));
    fb_patch(b, slots[3], write_type(b, c));
    size_t kids = fb_vec_offsets(b, c->child ? 1 : 0);
    fb_patch(b, slots[5], kids);
    if (c->child) fb_patch(b, kids + 4, write_field(b, c->child, "item"));
    if (c->is_json) { /* the canonical extension type for JSON text */
        size_t md = fb_vec_offsets(b, 2);
        fb_patch(b, slots[6], md);
        static const char *const kv[2][2] = {{"ARROW:extension:name", "arrow.json"}, {"ARROW:extension:metadata", ""}};
        for (int i = 0; i < 2; i++) {
            fb_field e[2] = {{FB_OFF, 0}, {FB_OFF, 0}};
            size_t es[2];
            fb_patch(b, md + 4 + 4 * (size_t)i, fb_table(b, e, 2, es));
            fb_patch(b, es[0], fb_string(b, kv[i][0]));
            fb_patch(b, es[1], fb_string(b, kv[i][1]));
        }
    }
    return t;
}

/* A Message table (version V5, header union of type `htype`) at the start of b; returns the
 * slot of the header offset. */
static size_t write_message(og_buf *b, int htype, int64_t body_len)
{
    og_buf_append_u32le(b, 0); /* the root offset, patched below */
    fb_field f[4] = {{FB_I16, 4 /* V5 */}, {FB_U8, (uint64_t)htype}, {FB_OFF, 0}, {FB_I64, (uint64_t)body_len}};
    size_t slots[4];
    fb_patch(b, 0, fb_table(b, f, 4, slots));
    return slots[2];
}

/* ---- the stream ----------------------------------------------------------------------------- */

/* The encapsulated message: continuation marker, metadata length, metadata padded to 8, body. */
static void put_message(og_buf *out, og_buf *meta, const og_buf *body)
{
    fb_pad(meta, 8);
    og_buf_append_u32le(out, 0xFFFFFFFFu);
    og_buf_append_u32le(out, (uint32_t)meta->len);
    og_buf_append(out, meta->data, meta->len);
    if (body && body->len) og_buf_append(out, body->data, body->len);
}

static og_status write_schema(og_buf *out, const og_rows *r, const og_arrow_col *cols)
{
    og_buf m = OG_BUF_INIT;
    size_t hslot = write_message(&m, 1 /* Schema */, 0);
    fb_field f[2] = {{0, 0} /* endianness: Little, the default */, {FB_OFF, 0}};
    size_t slots[2];
    fb_patch(&m, hslot, fb_table(&m, f, 2, slots));
    size_t vec = fb_vec_offsets(&m, r->res.ncols);
    fb_patch(&m, slots[1], vec);
    for (size_t c = 0; c < r->res.ncols; c++) fb_patch(&m, vec + 4 + 4 * c, write_field(&m, &cols[c], r->res.names[c]));
    put_message(out, &m, NULL);
    int failed = m.failed;
    og_buf_free(&m);
    return failed ? og_err(OG_ERR_NOMEM, "out of memory") : OG_OK;
}

typedef struct batch {
    og_buf body;
    int64_t *nodes, *bufs; /* pairs */
    size_t nnodes, nbufs, cap_nodes, cap_bufs;
} batch;

static int push_pair(int64_t **v, size_t *n, size_t *cap, int64_t a, int64_t b)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        int64_t *p = realloc(*v, nc * 2 * sizeof *p);
        if (!p) return -1;
        *v = p, *cap = nc;
    }
    (*v)[2 * *n] = a, (*v)[2 * *n + 1] = b;
    (*n)++;
    return 0;
}

/* A column's field nodes and buffers, depth first, as the record batch lists them. */
static int add_column(batch *bt, const og_arrow_col *c)
{
    if (push_pair(&bt->nodes, &bt->nnodes, &bt->cap_nodes, c->length, c->null_count)) return -1;
    for (int i = 0; i < c->nbufs; i++) {
        const og_buf *src = &c->bufs[i];
        size_t at = bt->body.len;
        if (src->len) og_buf_append(&bt->body, src->data, src->len);
        fb_pad(&bt->body, 8);
        if (push_pair(&bt->bufs, &bt->nbufs, &bt->cap_bufs, (int64_t)at, (int64_t)src->len)) return -1;
    }
    return c->child ? add_column(bt, c->child) : 0;
}

static og_status write_batch(og_buf *out, const og_arrow_col *cols, size_t ncols, size_t nrows)
{
    batch bt = {OG_BUF_INIT, NULL, NULL, 0, 0, 0, 0};
    og_buf m = OG_BUF_INIT;
    int bad = 0;
    for (size_t c = 0; c < ncols && !bad; c++) bad = add_column(&bt, &cols[c]);
    if (!bad && !bt.body.failed) {
        size_t hslot = write_message(&m, 3 /* RecordBatch */, (int64_t)bt.body.len);
        /* RecordBatch: length, nodes, buffers */
        fb_field f[3] = {{FB_I64, (uint64_t)nrows}, {FB_OFF, 0}, {FB_OFF, 0}};
        size_t slots[3];
        fb_patch(&m, hslot, fb_table(&m, f, 3, slots));
        fb_patch(&m, slots[1], fb_vec_pairs(&m, bt.nodes, bt.nnodes));
        fb_patch(&m, slots[2], fb_vec_pairs(&m, bt.bufs, bt.nbufs));
        put_message(out, &m, &bt.body);
    }
    bad = bad || bt.body.failed || m.failed;
    og_buf_free(&m);
    og_buf_free(&bt.body);
    free(bt.nodes);
    free(bt.bufs);
    return bad ? og_err(OG_ERR_NOMEM, "out of memory") : OG_OK;
}

static void free_cols(og_arrow_col *cols, size_t n)
{
    for (size_t c = 0; cols && c < n; c++) og_arrow_col_free(&cols[c]);
    free(cols);
}

/* Converts rows [row0, row0 + n) of every column; NULL on error (og_err set). */
static og_arrow_col *convert_range(const og_rows *r, size_t row0, size_t n, og_status *st)
{
    og_arrow_col *cols = calloc(r->res.ncols ? r->res.ncols : 1, sizeof *cols);
    if (!cols) {
        *st = og_err(OG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t c = 0; c < r->res.ncols; c++)
        if ((*st = og_arrow_col_from_rows(&cols[c], r, c, row0, n))) {
            free_cols(cols, c);
            return NULL;
        }
    *st = OG_OK;
    return cols;
}

og_status og_rows_render_arrow(og_buf *b, const og_rows *r)
{
    size_t start = b->len, nrows = r->res.nrows;
    og_status st;
    /* the schema from the first batch (or an empty one): types do not depend on the rows */
    size_t first = nrows < OG_ARROW_BATCH_ROWS ? nrows : OG_ARROW_BATCH_ROWS;
    og_arrow_col *cols = convert_range(r, 0, first, &st);
    if (!cols) return st;
    st = write_schema(b, r, cols);
    for (size_t row0 = 0; st == OG_OK;) {
        size_t n = nrows - row0 < OG_ARROW_BATCH_ROWS ? nrows - row0 : OG_ARROW_BATCH_ROWS;
        if (n || nrows == 0) st = write_batch(b, cols, r->res.ncols, n); /* an empty result: one empty batch */
        free_cols(cols, r->res.ncols);
        cols = NULL;
        row0 += n;
        if (st || row0 >= nrows) break;
        if ((st = og_budget_check())) break; /* a batch at a time (og_rows_render_in_budget) */
        n = nrows - row0 < OG_ARROW_BATCH_ROWS ? nrows - row0 : OG_ARROW_BATCH_ROWS;
        if (!(cols = convert_range(r, row0, n, &st))) break;
    }
    free_cols(cols, r->res.ncols);
    if (st == OG_OK) { /* end of stream: a continuation marker and a zero length */
        og_buf_append_u32le(b, 0xFFFFFFFFu);
        og_buf_append_u32le(b, 0);
        if (b->failed) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (st) b->len = start;
    return st;
}
