/*
 * lance_decode.c — decoding rows of an opened Lance 2.0 file into og_vectors
 * (og_lance_reader_read, og_lance_scan; lance_file.h), over the page plans lance_read.c built.
 *
 * A fixed-width or bool range that lies inside one page is returned zero-copy: the vector
 * points into the page buffers (when the pointer is aligned for the type and, if the page has
 * a validity bitmap, the range starts on a byte of it).  Everything else is copied: strings
 * and lists always (Lance stores end offsets with a null adjustment, og_vector wants Arrow
 * start/end offsets), ranges that cross pages, all-null pages and dictionary pages.
 *
 * A reader over a range source (lance_read.c) has "remote" page buffers: read_col pins the
 * pages a read touches (one source read per page, its remote buffers merged into one range),
 * hints the next pages of the column to the source's prefetch, decodes — always into owned
 * vectors, so nothing points into a pin after the read — and releases the pins.
 *
 * The plans guarantee every buffer is inside the file and large enough for its page's rows;
 * what remains to check here is the content of offset buffers (monotonic, within the bytes or
 * items they index) and dictionary indices.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/lance_read_impl.h"
#include "util/error.h"

static og_status read_col(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, og_vector *out);

/* First page whose rows end after row s. */
static size_t find_page(const og_lance_column *c, uint64_t s)
{
    size_t lo = 0, hi = c->npages;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->pages[mid].row_start + c->pages[mid].rows <= s) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void bit_set(uint8_t *b, size_t i, int v)
{
    if (v) b[i >> 3] |= (uint8_t)(1u << (i & 7));
    else b[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

static void copy_bits(uint8_t *dst, size_t doff, const uint8_t *src, size_t soff, size_t k)
{
    if (((doff | soff) & 7) == 0) {
        memcpy(dst + doff / 8, src + soff / 8, k / 8);
        for (size_t q = k & ~(size_t)7; q < k; q++) bit_set(dst, doff + q, og_bit_get(src, soff + q));
        return;
    }
    for (size_t q = 0; q < k; q++) bit_set(dst, doff + q, og_bit_get(src, soff + q));
}

static size_t count_zero_bits(const uint8_t *b, size_t off, size_t k)
{
    size_t z = 0;
    for (size_t q = 0; q < k; q++) z += !og_bit_get(b, off + q);
    return z;
}

static uint64_t load_off(const og_lance_span *s, unsigned bits, uint64_t i)
{
    return bits == 64 ? og_load_u64le(s->p + 8 * i) : og_load_u32le(s->p + 4 * i);
}

static uint64_t norm_end(uint64_t e, uint64_t adj) { return adj && e >= adj ? e - adj : e; }

static og_status corrupt(og_lance_reader *r, size_t ci, const char *what, uint64_t row)
{
    return og_err(OG_ERR_CORRUPT, "lance file: column %zu (%s): %s at row %llu", ci, r->schema.fields[ci].name, what,
                  (unsigned long long)row);
}

/* Allocates an all-ones validity bitmap of n bits. */
static uint8_t *ones(size_t n)
{
    size_t nb = (n + 7) / 8;
    uint8_t *v = malloc(nb ? nb : 1);
    if (v) memset(v, 0xff, nb ? nb : 1);
    return v;
}

/* Drops the bitmap when nothing is null (vector.h: validity NULL when every row is valid). */
static void finish_validity(og_vector *out)
{
    if (out->null_count == 0 && (out->flags & OG_VEC_OWNED)) {
        free(out->validity);
        out->validity = NULL;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* fixed width, bool, vector                                                                   */
/* ------------------------------------------------------------------------------------------ */

static og_status read_fixed(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, og_vector *out)
{
    og_lance_column *c = &r->cols[ci];
    og_type t = c->type;
    int is_bool = t.id == OG_T_BOOL;
    size_t w = og_type_width(t);
    size_t align = t.id == OG_T_VECTOR ? 4 : w;
    size_t pi = find_page(c, s);
    memset(out, 0, sizeof *out);
    out->type = t;
    out->len = (size_t)n;

    /* zero-copy */
    if (pi < c->npages) {
        const og_lance_page *p = &c->pages[pi];
        uint64_t off = s - p->row_start;
        if (!r->sourced && p->form == OG_LPF_FIXED && s + n <= p->row_start + p->rows && (!p->has_validity || off % 8 == 0) &&
            (!is_bool || off % 8 == 0)) {
            const uint8_t *vp = is_bool ? p->values.p + off / 8 : p->values.p + off * w;
            if (is_bool || ((uintptr_t)vp % align) == 0) {
                out->values = (void *)(uintptr_t)vp;
                if (p->has_validity) {
                    out->null_count = count_zero_bits(p->validity.p, (size_t)off, (size_t)n);
                    if (out->null_count) out->validity = (uint8_t *)(uintptr_t)(p->validity.p + off / 8);
                }
                out->flags = 0;
                return OG_OK;
            }
        }
    }

    /* copy */
    size_t vbytes;
    if (is_bool) vbytes = ((size_t)n + 7) / 8;
    else {
        if (n > SIZE_MAX / w) return og_err(OG_ERR_NOMEM, "lance file: %llu rows do not fit in memory", (unsigned long long)n);
        vbytes = (size_t)n * w;
    }
    out->flags = OG_VEC_OWNED;
    out->values = calloc(vbytes ? vbytes : 1, 1);
    out->validity = ones((size_t)n);
    if (!out->values || !out->validity) {
        og_vector_free(out);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    uint8_t *dst = out->values;
    uint64_t end = s + n;
    for (; pi < c->npages && c->pages[pi].row_start < end; pi++) {
        const og_lance_page *p = &c->pages[pi];
        uint64_t a = (s > p->row_start ? s : p->row_start) - p->row_start;
        uint64_t b = (end < p->row_start + p->rows ? end : p->row_start + p->rows) - p->row_start;
        if (b <= a) continue;
        size_t k = (size_t)(b - a), d = (size_t)(p->row_start + a - s);
        if (p->form == OG_LPF_ALLNULL) {
            for (size_t q = 0; q < k; q++) bit_set(out->validity, d + q, 0);
            out->null_count += k;
            continue;
        }
        if (is_bool) copy_bits(dst, d, p->values.p, (size_t)a, k);
        else memcpy(dst + d * w, p->values.p + a * w, k * w);
        if (p->has_validity) {
            copy_bits(out->validity, d, p->validity.p, (size_t)a, k);
            size_t z = count_zero_bits(p->validity.p, (size_t)a, k);
            out->null_count += z;
            if (z) /* null slots read as zero whatever the file holds */
                for (size_t q = 0; q < k; q++)
                    if (!og_bit_get(p->validity.p, (size_t)a + q)) {
                        if (is_bool) bit_set(dst, d + q, 0);
                        else memset(dst + (d + q) * w, 0, w);
                    }
        }
    }
    finish_validity(out);
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* strings and blobs                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Bytes [*b, *e) of item j of a binary (or dictionary items) end-offset buffer; *null set for a
 * null-adjusted entry. */
static int binary_item(const og_lance_span *offs, unsigned obits, uint64_t adj, const og_lance_span *bytes, uint64_t j,
                       uint64_t *b, uint64_t *e, int *null)
{
    uint64_t base = j == 0 ? 0 : norm_end(load_off(offs, obits, j - 1), adj);
    uint64_t raw = load_off(offs, obits, j);
    *null = adj && raw >= adj;
    uint64_t end = norm_end(raw, adj);
    if (end < base || end > bytes->len) return -1;
    *b = base;
    *e = end;
    return 0;
}

/* Rows [a, b) of a binary page whose end offsets are in order and within the bytes, every
 * null row (validity, or an offset null-adjusted by adj) spanning no bytes — then the rows
 * decode as one run of bytes. */
static int plain_run(const og_lance_page *p, uint64_t a, uint64_t b)
{
    uint64_t prev = a == 0 ? 0 : norm_end(load_off(&p->offs, p->obits, a - 1), p->adj);
    for (uint64_t i = a; i < b; i++) {
        uint64_t raw = load_off(&p->offs, p->obits, i), e = norm_end(raw, p->adj);
        if (e < prev || e > p->bytes.len) return 0;
        int null = (p->adj && raw >= p->adj) || (p->has_validity && !og_bit_get(p->validity.p, (size_t)i));
        if (null && e != prev) return 0;
        prev = e;
    }
    return 1;
}

static og_status read_binary(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, og_vector *out)
{
    og_lance_column *c = &r->cols[ci];
    memset(out, 0, sizeof *out);
    out->type = c->type;
    out->len = (size_t)n;
    out->flags = OG_VEC_OWNED;
    if (n >= SIZE_MAX / sizeof(int64_t)) return og_err(OG_ERR_NOMEM, "lance file: too many rows");
    out->offsets = malloc(((size_t)n + 1) * sizeof(int64_t));
    out->validity = ones((size_t)n);
    og_buf bytes = OG_BUF_INIT;
    if (!out->offsets || !out->validity) {
        og_vector_free(out);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    out->offsets[0] = 0;
    og_status st = OG_OK;
    uint64_t end = s + n;
    for (size_t pi = find_page(c, s); st == OG_OK && pi < c->npages && c->pages[pi].row_start < end; pi++) {
        const og_lance_page *p = &c->pages[pi];
        uint64_t a = (s > p->row_start ? s : p->row_start) - p->row_start;
        uint64_t b = (end < p->row_start + p->rows ? end : p->row_start + p->rows) - p->row_start;
        if (p->form == OG_LPF_BINARY && b > a && !p->has_validity) {
            /* No validity bitmap: the offsets are checked (in order, so all within [base,
             * last], and then none null-adjusted when last is below the adjustment) and
             * shifted in one pass — a whole-column load of a 5M-row enum column spent a fifth
             * of its time in the two passes below.  Otherwise (a null, or offsets out of
             * order) the paths below decode the rows (they rewrite these offsets) or name the
             * damage. */
            uint64_t base = a == 0 ? 0 : load_off(&p->offs, p->obits, a - 1);
            uint64_t last = load_off(&p->offs, p->obits, b - 1);
            if (base <= last && last <= p->bytes.len && (!p->adj || last < p->adj) &&
                last - base <= OG_LANCE_MAX_DECODE_BYTES - bytes.len) {
                /* (unsigned: a damaged offset past the others wraps instead of overflowing;
                 * such rows are rewritten below) */
                uint64_t shift = (uint64_t)bytes.len - base;
                int64_t *dst = out->offsets + (size_t)(p->row_start + a - s) + 1;
                uint64_t prev = base, bad = 0;
                if (p->obits == 64) {
                    for (uint64_t i = a; i < b; i++) {
                        uint64_t e = og_load_u64le(p->offs.p + 8 * i);
                        bad |= e < prev;
                        prev = e;
                        dst[i - a] = (int64_t)(e + shift);
                    }
                } else {
                    for (uint64_t i = a; i < b; i++) {
                        uint64_t e = og_load_u32le(p->offs.p + 4 * i);
                        bad |= e < prev;
                        prev = e;
                        dst[i - a] = (int64_t)(e + shift);
                    }
                }
                if (!bad) {
                    if ((st = og_buf_append(&bytes, p->bytes.p + base, (size_t)(last - base))) != OG_OK) break;
                    continue;
                }
            }
        }
        if (p->form == OG_LPF_BINARY && b > a && plain_run(p, a, b)) {
            /* The rows' bytes are one run, copied at once, and the offsets shifted — not one
             * append per string (a 5M-row enum column took ~60 ms item by item). */
            uint64_t base = a == 0 ? 0 : norm_end(load_off(&p->offs, p->obits, a - 1), p->adj);
            uint64_t last = norm_end(load_off(&p->offs, p->obits, b - 1), p->adj);
            if (last - base > OG_LANCE_MAX_DECODE_BYTES - bytes.len) {
                st = og_err(OG_ERR_LIMIT, "lance file: column %zu: a read would decode more than %llu bytes of strings",
                            ci, (unsigned long long)OG_LANCE_MAX_DECODE_BYTES);
                break;
            }
            if ((st = og_buf_append(&bytes, p->bytes.p + base, (size_t)(last - base))) != OG_OK) break;
            int64_t shift = (int64_t)(bytes.len - (last - base)) - (int64_t)base;
            size_t d0 = (size_t)(p->row_start + a - s);
            for (uint64_t i = a; i < b; i++) {
                uint64_t raw = load_off(&p->offs, p->obits, i);
                out->offsets[d0 + (i - a) + 1] = (int64_t)norm_end(raw, p->adj) + shift;
                if ((p->adj && raw >= p->adj) || (p->has_validity && !og_bit_get(p->validity.p, (size_t)i))) {
                    bit_set(out->validity, d0 + (i - a), 0);
                    out->null_count++;
                }
            }
            continue;
        }
        for (uint64_t i = a; st == OG_OK && i < b; i++) {
            size_t d = (size_t)(p->row_start + i - s);
            int null = 1;
            uint64_t xb = 0, xe = 0;
            const og_lance_span *src = &p->bytes;
            if (p->form == OG_LPF_BINARY) {
                if (binary_item(&p->offs, p->obits, p->adj, &p->bytes, i, &xb, &xe, &null))
                    st = corrupt(r, ci, "string offsets out of order or past the bytes", p->row_start + i);
            } else if (p->form == OG_LPF_DICT) {
                uint64_t k = p->ibits == 8 ? p->idx.p[i]
                           : p->ibits == 16 ? og_load_u16le(p->idx.p + 2 * i) : og_load_u32le(p->idx.p + 4 * i);
                if (k > p->dict_n) st = corrupt(r, ci, "dictionary index past the dictionary", p->row_start + i);
                else if (k > 0 && binary_item(&p->offs, p->obits, p->adj, &p->bytes, k - 1, &xb, &xe, &null))
                    st = corrupt(r, ci, "dictionary item offsets out of order", p->row_start + i);
            }
            if (p->has_validity && !og_bit_get(p->validity.p, (size_t)i)) null = 1;
            if (st == OG_OK && !null && xe - xb > OG_LANCE_MAX_DECODE_BYTES - bytes.len)
                st = og_err(OG_ERR_LIMIT, "lance file: column %zu: a read would decode more than %llu bytes of strings",
                            ci, (unsigned long long)OG_LANCE_MAX_DECODE_BYTES);
            if (st == OG_OK && !null) st = og_buf_append(&bytes, src->p + xb, (size_t)(xe - xb));
            if (null) {
                bit_set(out->validity, d, 0);
                out->null_count++;
            }
            out->offsets[d + 1] = (int64_t)bytes.len;
        }
    }
    if (st) {
        og_buf_free(&bytes);
        og_vector_free(out);
        return st;
    }
    out->values = bytes.data; /* may be NULL when every row is empty or null */
    finish_validity(out);
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* lists                                                                                       */
/* ------------------------------------------------------------------------------------------ */

static og_status read_list(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, og_vector *out)
{
    og_lance_column *c = &r->cols[ci];
    memset(out, 0, sizeof *out);
    out->type = c->type;
    out->len = (size_t)n;
    out->flags = OG_VEC_OWNED;
    if (n >= SIZE_MAX / sizeof(int64_t)) return og_err(OG_ERR_NOMEM, "lance file: too many rows");
    out->offsets = malloc(((size_t)n + 1) * sizeof(int64_t));
    out->validity = ones((size_t)n);
    out->child = calloc(1, sizeof *out->child);
    if (!out->offsets || !out->validity || !out->child) {
        og_vector_free(out);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    out->offsets[0] = 0;
    og_status st = OG_OK;
    uint64_t end = s + n;
    uint64_t item_lo = 0, cursor = 0; /* absolute item positions in the child column */
    int started = 0;
    for (size_t pi = find_page(c, s); st == OG_OK && pi < c->npages && c->pages[pi].row_start < end; pi++) {
        const og_lance_page *p = &c->pages[pi];
        uint64_t a = (s > p->row_start ? s : p->row_start) - p->row_start;
        uint64_t b = (end < p->row_start + p->rows ? end : p->row_start + p->rows) - p->row_start;
        for (uint64_t i = a; st == OG_OK && i < b; i++) {
            size_t d = (size_t)(p->row_start + i - s);
            int null = 1;
            if (p->form == OG_LPF_LIST) {
                uint64_t base = i == 0 ? 0 : norm_end(load_off(&p->offs, p->obits, i - 1), p->adj);
                uint64_t raw = load_off(&p->offs, p->obits, i);
                uint64_t e = norm_end(raw, p->adj);
                null = (p->adj && raw >= p->adj) || (p->has_validity && !og_bit_get(p->validity.p, (size_t)i));
                if (e < base || e > p->num_items) {
                    st = corrupt(r, ci, "list offsets out of order or past the page's items", p->row_start + i);
                    break;
                }
                uint64_t ab = p->item_start + base, ae = p->item_start + e;
                if (!started) item_lo = cursor = ab, started = 1;
                if (ab != cursor || (null && ae != ab)) {
                    st = corrupt(r, ci, "list offsets leave a gap", p->row_start + i);
                    break;
                }
                cursor = ae;
            }
            if (null) {
                bit_set(out->validity, d, 0);
                out->null_count++;
            }
            out->offsets[d + 1] = (int64_t)(cursor - item_lo);
        }
    }
    if (st == OG_OK) st = read_col(r, ci + 1, item_lo, cursor - item_lo, out->child);
    else free(out->child), out->child = NULL;
    if (st) {
        if (out->child) free(out->child), out->child = NULL;
        og_vector_free(out);
        return st;
    }
    finish_validity(out);
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* range sources: pinning pages                                                                */
/* ------------------------------------------------------------------------------------------ */

#define PAGE_SPANS 5

static void page_spans(og_lance_page *p, og_lance_span *sp[PAGE_SPANS])
{
    sp[0] = &p->validity, sp[1] = &p->values, sp[2] = &p->offs, sp[3] = &p->bytes, sp[4] = &p->idx;
}

/* The range covering a page's remote buffers; 0 when it has none. */
static int page_range(og_lance_page *p, uint64_t *off, uint64_t *len)
{
    og_lance_span *sp[PAGE_SPANS];
    page_spans(p, sp);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int k = 0; k < PAGE_SPANS; k++) {
        if (!sp[k]->remote || !sp[k]->len) continue;
        if (sp[k]->off < lo) lo = sp[k]->off;
        if (sp[k]->off + sp[k]->len > hi) hi = sp[k]->off + sp[k]->len;
    }
    if (lo == UINT64_MAX) return 0;
    *off = lo;
    *len = hi - lo;
    return 1;
}

static void unpin_pages(og_lance_reader *r, og_lance_column *c, size_t first, size_t end, void **pins)
{
    static const uint8_t empty[1] = {0};
    for (size_t pi = first; pi < end; pi++) {
        og_lance_span *sp[PAGE_SPANS];
        page_spans(&c->pages[pi], sp);
        for (int k = 0; k < PAGE_SPANS; k++)
            if (sp[k]->remote) sp[k]->p = sp[k]->len ? NULL : empty;
        if (pins[pi - first]) r->src.release(r->src.ctx, pins[pi - first]);
    }
    free(pins);
}

/* Pins pages [*first, *end) of column c that rows [s, s+n) touch; hints the next ones. */
static og_status pin_pages(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, size_t *first, size_t *end,
                           void ***pins_out)
{
    og_lance_column *c = &r->cols[ci];
    size_t a = find_page(c, s), b = a;
    while (b < c->npages && (c->pages[b].row_start < s + n || (n == 0 && b == a))) b++;
    *first = a;
    *end = a;
    *pins_out = NULL;
    void **pins = calloc(b > a ? b - a : 1, sizeof *pins);
    if (!pins) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    size_t pi = a;
    for (; st == OG_OK && pi < b; pi++) {
        og_lance_page *p = &c->pages[pi];
        uint64_t off, len;
        static const uint8_t empty[1] = {0};
        og_lance_span *sp[PAGE_SPANS];
        page_spans(p, sp);
        if (!page_range(p, &off, &len)) {
            for (int k = 0; k < PAGE_SPANS; k++)
                if (sp[k]->remote) sp[k]->p = empty;
            continue;
        }
        const uint8_t *d = NULL;
        st = r->src.read(r->src.ctx, off, len, &d, &pins[pi - a]);
        if (st) {
            st = og_err_wrap(st, "lance file: column %zu page %zu", ci, pi);
            break;
        }
        for (int k = 0; k < PAGE_SPANS; k++)
            if (sp[k]->remote) sp[k]->p = sp[k]->len ? d + (sp[k]->off - off) : empty;
    }
    if (st) {
        unpin_pages(r, c, a, pi, pins);
        return st;
    }
    /* read-ahead: the next pages of this column, each hinted once */
    if (r->src.prefetch && r->src.readahead) {
        size_t from = c->prefetched > b ? c->prefetched : b;
        size_t to = b + r->src.readahead < c->npages ? b + r->src.readahead : c->npages;
        for (size_t q = from; q < to; q++) {
            uint64_t off, len;
            if (page_range(&c->pages[q], &off, &len)) r->src.prefetch(r->src.ctx, off, len);
        }
        if (to > c->prefetched) c->prefetched = to;
    }
    *end = b;
    *pins_out = pins;
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* dispatch                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static og_status read_col_pinned(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, og_vector *out);

static og_status read_col(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, og_vector *out)
{
    if (!r->sourced || ci >= r->ncols) return read_col_pinned(r, ci, s, n, out);
    og_lance_column *c = &r->cols[ci];
    if (s > c->total_rows || n > c->total_rows - s) return read_col_pinned(r, ci, s, n, out); /* the error */
    size_t first, end;
    void **pins;
    OG_TRY(pin_pages(r, ci, s, n, &first, &end, &pins));
    og_status st = read_col_pinned(r, ci, s, n, out);
    unpin_pages(r, c, first, end, pins);
    return st;
}

static og_status read_col_pinned(og_lance_reader *r, size_t ci, uint64_t s, uint64_t n, og_vector *out)
{
    og_lance_column *c = &r->cols[ci];
    if (s > c->total_rows || n > c->total_rows - s)
        return og_err(OG_ERR_CORRUPT, "lance file: column %zu: rows %llu+%llu past its %llu rows", ci,
                      (unsigned long long)s, (unsigned long long)n, (unsigned long long)c->total_rows);
    /* what the output will take at least: values (or offsets) and validity */
    uint64_t per_row = c->type.id == OG_T_STRING || c->type.id == OG_T_BLOB || c->type.id == OG_T_LIST
                           ? sizeof(int64_t) : (uint64_t)og_type_width(c->type);
    if (n > OG_LANCE_MAX_DECODE_BYTES / (per_row + 1))
        return og_err(OG_ERR_LIMIT, "lance file: reading %llu rows of column %zu would decode more than %llu bytes",
                      (unsigned long long)n, ci, (unsigned long long)OG_LANCE_MAX_DECODE_BYTES);
    switch (c->type.id) {
    case OG_T_STRING: case OG_T_BLOB: return read_binary(r, ci, s, n, out);
    case OG_T_LIST:
        if (ci + 1 >= r->ncols) return og_err(OG_ERR_CORRUPT, "lance file: list column %zu has no child column", ci);
        return read_list(r, ci, s, n, out);
    default: return read_fixed(r, ci, s, n, out);
    }
}

og_status og_lance_reader_read(og_lance_reader *r, int32_t field_id, uint64_t row_start, uint64_t row_count,
                               og_vector *out)
{
    memset(out, 0, sizeof *out);
    long i = og_lance_schema_find_id(&r->schema, field_id);
    if (i < 0) return og_err(OG_ERR_NOT_FOUND, "lance file has no field with id %d", field_id);
    if (r->schema.fields[i].parent_id != -1)
        return og_err(OG_ERR_NOT_FOUND, "lance file: field id %d is a list child, read its list", field_id);
    if (row_start > r->num_rows || row_count > r->num_rows - row_start)
        return og_err(OG_ERR_INVALID, "lance file: rows %llu+%llu past the file's %llu rows",
                      (unsigned long long)row_start, (unsigned long long)row_count, (unsigned long long)r->num_rows);
    return read_col(r, (size_t)og_lance_schema_column_index(&r->schema, (size_t)i), row_start, row_count, out);
}

og_status og_lance_reader_read_top(og_lance_reader *r, size_t top_index, uint64_t row_start, uint64_t row_count,
                                   og_vector *out)
{
    memset(out, 0, sizeof *out);
    long i = og_lance_schema_top(&r->schema, top_index);
    if (i < 0) return og_err(OG_ERR_NOT_FOUND, "lance file has no top-level field %zu", top_index);
    return og_lance_reader_read(r, r->schema.fields[i].id, row_start, row_count, out);
}

/* ------------------------------------------------------------------------------------------ */
/* scans                                                                                       */
/* ------------------------------------------------------------------------------------------ */

struct og_lance_scan {
    og_lance_reader *r;
    int32_t *ids;
    size_t n;
    size_t batch;
    uint64_t next;
    og_vector *cols;
};

og_status og_lance_scan_open(og_lance_scan **out, og_lance_reader *r, const int32_t *field_ids, size_t n,
                             size_t batch_rows)
{
    *out = NULL;
    size_t cnt = n ? n : og_lance_schema_num_top(&r->schema);
    og_lance_scan *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
    s->r = r;
    s->n = cnt;
    s->batch = batch_rows ? batch_rows : OG_LANCE_DEFAULT_BATCH_ROWS;
    s->ids = calloc(cnt ? cnt : 1, sizeof *s->ids);
    s->cols = calloc(cnt ? cnt : 1, sizeof *s->cols);
    if (!s->ids || !s->cols) {
        og_lance_scan_free(s);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < cnt; k++) {
        int32_t id = n ? field_ids[k] : r->schema.fields[og_lance_schema_top(&r->schema, k)].id;
        long i = og_lance_schema_find_id(&r->schema, id);
        if (i < 0 || r->schema.fields[i].parent_id != -1) {
            og_lance_scan_free(s);
            return og_err(OG_ERR_NOT_FOUND, "lance scan: the file has no top-level field with id %d", id);
        }
        s->ids[k] = id;
    }
    *out = s;
    return OG_OK;
}

og_status og_lance_scan_next(og_lance_scan *s, const og_vector **cols, uint64_t *row_start, size_t *nrows)
{
    for (size_t k = 0; k < s->n; k++) og_vector_free(&s->cols[k]);
    *cols = s->cols;
    *row_start = s->next;
    *nrows = 0;
    uint64_t total = s->r->num_rows;
    if (s->next >= total) return OG_OK;
    uint64_t k = total - s->next < s->batch ? total - s->next : s->batch;
    for (size_t j = 0; j < s->n; j++) {
        og_status st = og_lance_reader_read(s->r, s->ids[j], s->next, k, &s->cols[j]);
        if (st) {
            for (size_t q = 0; q < j; q++) og_vector_free(&s->cols[q]);
            return st;
        }
    }
    s->next += k;
    *nrows = (size_t)k;
    return OG_OK;
}

size_t og_lance_scan_num_cols(const og_lance_scan *s) { return s->n; }

void og_lance_scan_free(og_lance_scan *s)
{
    if (!s) return;
    for (size_t k = 0; s->cols && k < s->n; k++) og_vector_free(&s->cols[k]);
    free(s->cols);
    free(s->ids);
    free(s);
}
