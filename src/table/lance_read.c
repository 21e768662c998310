/*
 * lance_read.c — opening a Lance 2.0 data file (og_lance_reader, lance_file.h): the footer,
 * both offset tables, the FileDescriptor, every column's metadata and every page's encoding.
 *
 * Opening does all the structural checking: each page's ArrayEncoding tree is parsed and
 * matched against the few shapes we decode (docs/lance-format.md), and flattened into an
 * rpage "plan" — which buffers hold the validity, values, end offsets, bytes or dictionary,
 * each one resolved to a bounds-checked span of the file and checked to be large enough for
 * the page's row count.  Decoding (lance_decode.c) then only has to check the *contents* of
 * offset buffers.  Nothing here reads past `size`: every position and length is checked with
 * overflow-safe arithmetic before it is used.
 *
 * Two ways in: og_lance_reader_open over the whole file's bytes (the metadata window is the
 * file), or og_lance_reader_open_source over a range source, which fetches the footer, then
 * the metadata it points to, into a window of the file's tail; page buffers outside the
 * window become "remote" spans that lance_decode.c pins per read.
 */
#include "table/lance_read_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/pb.h"

#define MAX_ENC_DEPTH 12

static int span_ok(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

/* [off, off+len) lies inside the metadata window (always true for a whole-file reader). */
static int in_win(const og_lance_reader *r, uint64_t off, uint64_t len)
{
    return off >= r->win_off && span_ok(off - r->win_off, len, r->win_len);
}

/* ------------------------------------------------------------------------------------------ */
/* encoding trees (transient)                                                                  */
/* ------------------------------------------------------------------------------------------ */

enum { E_FLAT = 1, E_NONULL, E_SOMENULL, E_ALLNULL, E_FSL, E_LIST, E_BINARY, E_DICT };

typedef struct enode {
    int kind;
    uint64_t bits;            /* FLAT */
    og_lance_span buf;        /* FLAT: the resolved buffer */
    uint64_t dim;             /* FSL */
    uint64_t adj, num_items;  /* LIST, BINARY (adj) */
    uint64_t dict_n;          /* DICT */
    struct enode *a, *b;
} enode;

typedef struct penv {
    const og_lance_reader *r;
    const og_lance_span *page_bufs;
    size_t npage_bufs;
    const og_lance_span *col_bufs;
    size_t ncol_bufs;
    size_t col, page;
} penv;

static void enode_free(enode *n)
{
    if (!n) return;
    enode_free(n->a);
    enode_free(n->b);
    free(n);
}

static og_status bad(const penv *e, const char *what)
{
    return og_err(OG_ERR_CORRUPT, "lance file: column %zu page %zu: %s", e->col, e->page, what);
}

static const char *encoding_name(uint32_t f)
{
    static const char *names[] = {"?", "flat", "nullable", "fixed_size_list", "list", "struct",
                                  "binary", "dictionary", "fsst", "packed_struct", "bitpacked",
                                  "fixed_size_binary", "bitpacked_for_non_neg", "constant"};
    return f < sizeof names / sizeof names[0] ? names[f] : "unknown";
}

static og_status parse_ae(const penv *e, const uint8_t *p, size_t n, int depth, enode **out);

/* Parses `field` (a sub-message ArrayEncoding) found inside msg; NULL when absent. */
static og_status parse_child(const penv *e, const uint8_t *msg, size_t n, uint32_t field, int depth,
                             enode **out)
{
    *out = NULL;
    og_pb_reader rd = og_pb_reader_init(msg, n);
    og_pb_field f;
    int rc;
    const uint8_t *cp = NULL;
    size_t cn = 0;
    int found = 0;
    while ((rc = og_pb_next(&rd, &f)) == 1)
        if (f.field == field && f.wire == OG_PB_LEN) cp = f.data, cn = f.len, found = 1;
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    if (!found) return OG_OK;
    return parse_ae(e, cp, cn, depth + 1, out);
}

static og_status parse_buffer(const penv *e, const uint8_t *p, size_t n, og_lance_span *out)
{
    uint64_t index = 0, type = 0;
    og_pb_reader rd = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    while ((rc = og_pb_next(&rd, &f)) == 1) {
        if (f.wire != OG_PB_VARINT) continue;
        if (f.field == 1) index = f.u;
        if (f.field == 2) type = f.u;
    }
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    const og_lance_span *set;
    size_t count;
    switch (type) {
    case 0: set = e->page_bufs, count = e->npage_bufs; break;
    case 1: set = e->col_bufs, count = e->ncol_bufs; break;
    case 2: set = e->r->gbufs, count = e->r->ngbufs; break;
    default: return bad(e, "buffer of an unknown buffer type");
    }
    if (index >= count)
        return og_err(OG_ERR_CORRUPT, "lance file: column %zu page %zu: buffer index %llu out of range (%zu buffers)",
                      e->col, e->page, (unsigned long long)index, count);
    *out = set[index];
    return OG_OK;
}

static og_status parse_flat(const penv *e, const uint8_t *p, size_t n, enode *node)
{
    og_pb_reader rd = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    int have_buf = 0;
    og_status st = OG_OK;
    while (st == OG_OK && (rc = og_pb_next(&rd, &f)) == 1) {
        if (f.field == 1 && f.wire == OG_PB_VARINT) node->bits = f.u;
        else if (f.field == 2 && f.wire == OG_PB_LEN) st = parse_buffer(e, f.data, f.len, &node->buf), have_buf = 1;
        else if (f.field == 3) st = bad(e, "compressed flat buffers are not supported");
    }
    if (st) return st;
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    static const uint8_t none[1] = {0};
    if (!have_buf) st = parse_buffer(e, none, 0, &node->buf); /* default: page buffer 0 */
    return st;
}

/* Reads the varint fields 1..3 of a small message into v[1..3]. */
static og_status read_varints(const penv *e, const uint8_t *p, size_t n, uint64_t v[4])
{
    og_pb_reader rd = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    while ((rc = og_pb_next(&rd, &f)) == 1)
        if (f.wire == OG_PB_VARINT && f.field <= 3) v[f.field] = f.u;
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    return OG_OK;
}

static og_status parse_ae(const penv *e, const uint8_t *p, size_t n, int depth, enode **out)
{
    *out = NULL;
    if (depth > MAX_ENC_DEPTH) return bad(e, "encoding nested too deeply");
    og_pb_reader rd = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc = og_pb_next(&rd, &f);
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    if (rc == 0) return bad(e, "empty array encoding");
    if (f.wire != OG_PB_LEN) return bad(e, "array encoding is not a message");
    enode *node = calloc(1, sizeof *node);
    if (!node) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    uint64_t v[4] = {0, 0, 0, 0};
    switch (f.field) {
    case 1:
        node->kind = E_FLAT;
        st = parse_flat(e, f.data, f.len, node);
        break;
    case 2: { /* Nullable: no_nulls = 1 {values = 1}, some_nulls = 2 {validity = 1, values = 2}, all_nulls = 3 */
        og_pb_reader nr = og_pb_reader_init(f.data, f.len);
        og_pb_field g;
        int grc = og_pb_next(&nr, &g);
        if (grc < 0) st = og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
        else if (grc == 0 || g.wire != OG_PB_LEN) st = bad(e, "empty nullable encoding");
        else if (g.field == 1) {
            node->kind = E_NONULL;
            st = parse_child(e, g.data, g.len, 1, depth, &node->a);
        } else if (g.field == 2) {
            node->kind = E_SOMENULL;
            st = parse_child(e, g.data, g.len, 1, depth, &node->a);
            if (st == OG_OK) st = parse_child(e, g.data, g.len, 2, depth, &node->b);
            if (st == OG_OK && (!node->a || !node->b)) st = bad(e, "some_nulls without validity or values");
        } else if (g.field == 3) {
            node->kind = E_ALLNULL;
        } else {
            st = bad(e, "unknown nullability");
        }
        if (st == OG_OK && node->kind == E_NONULL && !node->a) st = bad(e, "no_nulls without values");
        break;
    }
    case 3: /* FixedSizeList: dimension = 1, items = 2 (has_validity = 3 is informative) */
        node->kind = E_FSL;
        st = read_varints(e, f.data, f.len, v);
        node->dim = v[1];
        if (st == OG_OK) st = parse_child(e, f.data, f.len, 2, depth, &node->a);
        if (st == OG_OK && !node->a) st = bad(e, "fixed_size_list without items");
        break;
    case 4: /* List: offsets = 1, null_offset_adjustment = 2, num_items = 3 */
        node->kind = E_LIST;
        st = read_varints(e, f.data, f.len, v);
        node->adj = v[2];
        node->num_items = v[3];
        if (st == OG_OK) st = parse_child(e, f.data, f.len, 1, depth, &node->a);
        if (st == OG_OK && !node->a) st = bad(e, "list without offsets");
        break;
    case 6: /* Binary: indices = 1, bytes = 2, null_adjustment = 3 */
        node->kind = E_BINARY;
        st = read_varints(e, f.data, f.len, v);
        node->adj = v[3];
        if (st == OG_OK) st = parse_child(e, f.data, f.len, 1, depth, &node->a);
        if (st == OG_OK) st = parse_child(e, f.data, f.len, 2, depth, &node->b);
        if (st == OG_OK && (!node->a || !node->b)) st = bad(e, "binary without indices or bytes");
        break;
    case 7: /* Dictionary: indices = 1, items = 2, num_dictionary_items = 3 */
        node->kind = E_DICT;
        st = read_varints(e, f.data, f.len, v);
        node->dict_n = v[3];
        if (st == OG_OK) st = parse_child(e, f.data, f.len, 1, depth, &node->a);
        if (st == OG_OK) st = parse_child(e, f.data, f.len, 2, depth, &node->b);
        if (st == OG_OK && (!node->a || !node->b)) st = bad(e, "dictionary without indices or items");
        break;
    default:
        st = og_err(OG_ERR_CORRUPT, "lance file: column %zu page %zu: unsupported encoding \"%s\" (ArrayEncoding field %u)",
                    e->col, e->page, encoding_name(f.field), f.field);
    }
    if (st) {
        enode_free(node);
        return st;
    }
    *out = node;
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* plans: matching the tree against the shapes we decode                                      */
/* ------------------------------------------------------------------------------------------ */

/* Bytes needed by `rows` values of `bits` bits; 0 and sets *ovf on overflow. */
static uint64_t need_bytes(uint64_t rows, uint64_t bits, int *ovf)
{
    if (bits && rows > UINT64_MAX / bits) {
        *ovf = 1;
        return 0;
    }
    uint64_t b = rows * bits;
    return b / 8 + ((b & 7) != 0);
}

/* A flat leaf of exactly `bits` bits (one of `alt` if non-zero) holding `rows` values. */
static og_status want_flat(const penv *e, const enode *n, uint64_t bits, uint64_t alt, uint64_t rows,
                           og_lance_span *out, unsigned *got_bits)
{
    if (!n || n->kind != E_FLAT) return bad(e, "expected a flat buffer");
    if (n->bits != bits && (!alt || n->bits != alt))
        return og_err(OG_ERR_CORRUPT, "lance file: column %zu page %zu: flat buffer of %llu bits per value, expected %llu",
                      e->col, e->page, (unsigned long long)n->bits, (unsigned long long)bits);
    int ovf = 0;
    uint64_t need = need_bytes(rows, n->bits, &ovf);
    if (ovf || n->buf.len < need)
        return og_err(OG_ERR_CORRUPT, "lance file: column %zu page %zu: buffer of %llu bytes too small for %llu values",
                      e->col, e->page, (unsigned long long)n->buf.len, (unsigned long long)rows);
    *out = n->buf;
    if (got_bits) *got_bits = (unsigned)n->bits;
    return OG_OK;
}

/* Strips a no_nulls wrapper. */
static const enode *unwrap_nonull(const enode *n) { return n && n->kind == E_NONULL ? n->a : n; }

/* binary(indices, bytes, adj) for `rows` rows into the offsets/bytes fields of pg */
static og_status plan_binary(const penv *e, const enode *n, uint64_t rows, og_lance_span *offs,
                             unsigned *obits, uint64_t *adj, og_lance_span *bytes)
{
    if (n->kind != E_BINARY) return bad(e, "expected a binary encoding");
    OG_TRY(want_flat(e, unwrap_nonull(n->a), 64, 32, rows, offs, obits));
    const enode *b = unwrap_nonull(n->b);
    if (!b || b->kind != E_FLAT || b->bits != 8) return bad(e, "binary bytes are not a flat 8-bit buffer");
    *bytes = b->buf;
    *adj = n->adj;
    return OG_OK;
}

static og_status plan_page(const penv *e, og_type t, const enode *root, og_lance_page *pg)
{
    uint64_t rows = pg->rows;
    const enode *n = root;
    if (n->kind == E_ALLNULL) {
        pg->form = OG_LPF_ALLNULL;
        return OG_OK;
    }
    if (n->kind == E_NONULL) {
        n = n->a;
    } else if (n->kind == E_SOMENULL) {
        OG_TRY(want_flat(e, n->a, 1, 0, rows, &pg->validity, NULL));
        pg->has_validity = 1;
        n = n->b;
    }
    switch (t.id) {
    case OG_T_BOOL: case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: case OG_T_F32:
    case OG_T_F64: case OG_T_DATE32: case OG_T_DATE64: {
        uint64_t bits = t.id == OG_T_BOOL ? 1 : 8 * og_type_width(t);
        pg->form = OG_LPF_FIXED;
        return want_flat(e, n, bits, 0, rows, &pg->values, NULL);
    }
    case OG_T_VECTOR: {
        if (!n || n->kind != E_FSL) return bad(e, "expected a fixed_size_list encoding");
        if (n->dim != t.dim) return bad(e, "fixed_size_list dimension differs from the schema");
        const enode *items = n->a;
        if (items->kind == E_ALLNULL) return bad(e, "fixed_size_list items all null");
        if (items->kind == E_SOMENULL) items = items->b; /* item validity: null rows are zero */
        else items = unwrap_nonull(items);
        pg->form = OG_LPF_FIXED;
        if (rows > UINT64_MAX / t.dim) return bad(e, "row count overflows");
        return want_flat(e, items, 32, 0, rows * t.dim, &pg->values, NULL);
    }
    case OG_T_STRING: case OG_T_BLOB:
        if (n && n->kind == E_DICT) {
            pg->form = OG_LPF_DICT;
            const enode *ix = n->a;
            if (ix->kind == E_SOMENULL) {
                if (pg->has_validity) return bad(e, "dictionary with two validity bitmaps");
                OG_TRY(want_flat(e, ix->a, 1, 0, rows, &pg->validity, NULL));
                pg->has_validity = 1;
                ix = ix->b;
            } else {
                ix = unwrap_nonull(ix);
            }
            if (!ix || ix->kind != E_FLAT || (ix->bits != 8 && ix->bits != 16 && ix->bits != 32))
                return bad(e, "dictionary indices are not flat 8/16/32-bit");
            OG_TRY(want_flat(e, ix, ix->bits, 0, rows, &pg->idx, &pg->ibits));
            if (n->dict_n > UINT32_MAX) return bad(e, "dictionary too large");
            pg->dict_n = n->dict_n;
            const enode *items = unwrap_nonull(n->b);
            if (!items) return bad(e, "dictionary without items");
            return plan_binary(e, items, pg->dict_n, &pg->offs, &pg->obits, &pg->adj, &pg->bytes);
        }
        if (!n) return bad(e, "missing values");
        pg->form = OG_LPF_BINARY;
        return plan_binary(e, n, rows, &pg->offs, &pg->obits, &pg->adj, &pg->bytes);
    case OG_T_LIST:
        if (!n || n->kind != E_LIST) return bad(e, "expected a list encoding");
        pg->form = OG_LPF_LIST;
        pg->adj = n->adj;
        pg->num_items = n->num_items;
        return want_flat(e, unwrap_nonull(n->a), 64, 32, rows, &pg->offs, &pg->obits);
    default:
        return bad(e, "column of an unsupported type");
    }
}

/* ------------------------------------------------------------------------------------------ */
/* column metadata                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* Appends the values of a (packed or not) repeated uint field to *v. */
static og_status push_uints(const og_pb_field *f, uint64_t **v, size_t *n)
{
    uint64_t *x;
    size_t k;
    OG_TRY(og_pb_unpack_uints(f, &x, &k));
    if (k) {
        uint64_t *nv = realloc(*v, (*n + k) * sizeof *nv);
        if (!nv) {
            free(x);
            return og_err(OG_ERR_NOMEM, "out of memory");
        }
        memcpy(nv + *n, x, k * sizeof *nv);
        *v = nv;
        *n += k;
    }
    free(x);
    return OG_OK;
}

/* Resolves parallel offset/size lists into spans of the file. */
static og_status make_spans(const og_lance_reader *r, const uint64_t *offs, size_t no, const uint64_t *sizes,
                            size_t ns, og_lance_span **out, size_t *n, const char *what, size_t col)
{
    *out = NULL;
    *n = 0;
    if (no != ns) return og_err(OG_ERR_CORRUPT, "lance file: column %zu: %s: %zu offsets but %zu sizes", col, what, no, ns);
    if (!no) return OG_OK;
    og_lance_span *s = calloc(no, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < no; i++) {
        if (!span_ok(offs[i], sizes[i], r->size)) {
            free(s);
            return og_err(OG_ERR_CORRUPT, "lance file: column %zu: %s %zu at %llu+%llu lies past the end of the file (%zu bytes)",
                          col, what, i, (unsigned long long)offs[i], (unsigned long long)sizes[i], r->size);
        }
        s[i].len = sizes[i];
        s[i].off = offs[i];
        if (in_win(r, offs[i], sizes[i])) s[i].p = r->win + (offs[i] - r->win_off);
        else s[i].remote = 1; /* a range source's page buffer: pinned by each read */
    }
    *out = s;
    *n = no;
    return OG_OK;
}

/* Digs the ArrayEncoding bytes out of Page.encoding: Encoding.direct = 2 {encoding = 1: Any
 * {type_url = 1, value = 2}}. */
static og_status page_encoding_bytes(const penv *e, const uint8_t *p, size_t n, const uint8_t **out, size_t *outn)
{
    og_pb_reader rd = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    const uint8_t *dir = NULL;
    size_t dn = 0;
    while ((rc = og_pb_next(&rd, &f)) == 1) {
        if (f.field == 1) return bad(e, "deferred page encodings are not supported");
        if (f.field == 2 && f.wire == OG_PB_LEN) dir = f.data, dn = f.len;
    }
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    if (!dir) return bad(e, "page without an encoding");
    const uint8_t *any = NULL;
    size_t an = 0;
    rd = og_pb_reader_init(dir, dn);
    while ((rc = og_pb_next(&rd, &f)) == 1)
        if (f.field == 1 && f.wire == OG_PB_LEN) any = f.data, an = f.len;
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    if (!any) return bad(e, "direct encoding without a value");
    const uint8_t *url = NULL, *val = NULL;
    size_t un = 0, vn = 0;
    rd = og_pb_reader_init(any, an);
    while ((rc = og_pb_next(&rd, &f)) == 1) {
        if (f.field == 1 && f.wire == OG_PB_LEN) url = f.data, un = f.len;
        if (f.field == 2 && f.wire == OG_PB_LEN) val = f.data, vn = f.len;
    }
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", e->col, e->page);
    static const char want[] = "lance.encodings.ArrayEncoding";
    if (!url || un < sizeof want - 1 || memcmp(url + un - (sizeof want - 1), want, sizeof want - 1))
        return bad(e, "page encoding is not a lance.encodings.ArrayEncoding");
    *out = val ? val : (const uint8_t *)"";
    *outn = vn;
    return OG_OK;
}

static og_status parse_page(og_lance_reader *r, og_lance_column *c, size_t ci, size_t pi, const uint8_t *p, size_t n)
{
    uint64_t *offs = NULL, *sizes = NULL, length = 0;
    size_t no = 0, ns = 0;
    const uint8_t *encp = NULL;
    size_t encn = 0;
    og_pb_reader rd = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    og_status st = OG_OK;
    penv e = {r, NULL, 0, c->col_bufs, c->ncol_bufs, ci, pi};
    while (st == OG_OK && (rc = og_pb_next(&rd, &f)) == 1) {
        if (f.field == 1) st = push_uints(&f, &offs, &no);
        else if (f.field == 2) st = push_uints(&f, &sizes, &ns);
        else if (f.field == 3 && f.wire == OG_PB_VARINT) length = f.u;
        else if (f.field == 4 && f.wire == OG_PB_LEN) encp = f.data, encn = f.len;
    }
    if (st == OG_OK && rc < 0) st = og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu page %zu", ci, pi);
    og_lance_span *bufs = NULL;
    size_t nbufs = 0;
    if (st == OG_OK) st = make_spans(r, offs, no, sizes, ns, &bufs, &nbufs, "page buffer", ci);
    free(offs);
    free(sizes);
    e.page_bufs = bufs;
    e.npage_bufs = nbufs;
    og_lance_page *pg = &c->pages[pi];
    memset(pg, 0, sizeof *pg);
    pg->rows = length;
    if (st == OG_OK && length > UINT32_MAX) st = bad(&e, "page longer than 2^32-1 rows");
    if (st == OG_OK && !encp) st = bad(&e, "page without an encoding");
    const uint8_t *aep = NULL;
    size_t aen = 0;
    if (st == OG_OK) st = page_encoding_bytes(&e, encp, encn, &aep, &aen);
    enode *root = NULL;
    if (st == OG_OK) st = parse_ae(&e, aep, aen, 0, &root);
    if (st == OG_OK) st = plan_page(&e, c->type, root, pg);
    enode_free(root);
    free(bufs);
    return st;
}

static og_status parse_column(og_lance_reader *r, size_t ci, const uint8_t *p, size_t n)
{
    og_lance_column *c = &r->cols[ci];
    og_pb_reader rd = og_pb_reader_init(p, n);
    og_pb_field f;
    int rc;
    og_status st = OG_OK;
    uint64_t *offs = NULL, *sizes = NULL;
    size_t no = 0, ns = 0, npages = 0;
    /* pass 1: column buffers (fields 3, 4) and the page count */
    while (st == OG_OK && (rc = og_pb_next(&rd, &f)) == 1) {
        if (f.field == 2 && f.wire == OG_PB_LEN) npages++;
        else if (f.field == 3) st = push_uints(&f, &offs, &no);
        else if (f.field == 4) st = push_uints(&f, &sizes, &ns);
    }
    if (st == OG_OK && rc < 0) st = og_err_wrap(OG_ERR_CORRUPT, "lance file: column %zu metadata", ci);
    if (st == OG_OK) st = make_spans(r, offs, no, sizes, ns, &c->col_bufs, &c->ncol_bufs, "column buffer", ci);
    free(offs);
    free(sizes);
    if (st) return st;
    if (npages) {
        c->pages = calloc(npages, sizeof *c->pages);
        if (!c->pages) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    /* pass 2: pages */
    rd = og_pb_reader_init(p, n);
    size_t pi = 0;
    uint64_t row = 0, item = 0;
    while (st == OG_OK && og_pb_next(&rd, &f) == 1) {
        if (f.field != 2 || f.wire != OG_PB_LEN) continue;
        st = parse_page(r, c, ci, pi, f.data, f.len);
        if (st) break;
        og_lance_page *pg = &c->pages[pi];
        pg->row_start = row;
        pg->item_start = item;
        if (row + pg->rows < row) st = og_err(OG_ERR_CORRUPT, "lance file: column %zu: row count overflows", ci);
        row += pg->rows;
        if (pg->form == OG_LPF_LIST) {
            if (item + pg->num_items < item) st = og_err(OG_ERR_CORRUPT, "lance file: column %zu: item count overflows", ci);
            item += pg->num_items;
        }
        pi++;
        c->npages = pi;
    }
    c->total_rows = row;
    c->total_items = item;
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* open                                                                                        */
/* ------------------------------------------------------------------------------------------ */

static og_status parse_descriptor(og_lance_reader *r, const og_lance_span *gb)
{
    og_pb_reader rd = og_pb_reader_init(gb->p, (size_t)gb->len);
    og_pb_field f;
    int rc;
    og_status st = OG_OK;
    int have_schema = 0;
    while (st == OG_OK && (rc = og_pb_next(&rd, &f)) == 1) {
        if (f.field == 1 && f.wire == OG_PB_LEN) {
            st = og_lance_schema_decode_fields(&r->schema, f.data, f.len, 1);
            have_schema = 1;
        } else if (f.field == 2 && f.wire == OG_PB_VARINT) {
            r->num_rows = f.u;
        }
    }
    if (st) return og_err_wrap(st, "lance file: file descriptor");
    if (rc < 0) return og_err_wrap(OG_ERR_CORRUPT, "lance file: file descriptor");
    if (!have_schema) return og_err(OG_ERR_CORRUPT, "lance file: file descriptor has no schema");
    return OG_OK;
}

/* Bytes at file position `off` of the window (the caller checked in_win). */
static const uint8_t *at(const og_lance_reader *r, uint64_t off) { return r->win + (off - r->win_off); }

static og_status reader_open(og_lance_reader *r)
{
    size_t size = r->size;
    if (size < OG_LANCE_FOOTER_SIZE)
        return og_err(OG_ERR_CORRUPT, "lance file: %zu bytes is too short for a footer", size);
    if (!in_win(r, size - OG_LANCE_FOOTER_SIZE, OG_LANCE_FOOTER_SIZE))
        return og_err(OG_ERR_CORRUPT, "lance file: the footer is outside the fetched window");
    const uint8_t *ft = at(r, size - OG_LANCE_FOOTER_SIZE);
    if (memcmp(ft + 36, "LANC", 4) != 0) return og_err(OG_ERR_CORRUPT, "lance file: bad magic (not a Lance file)");
    r->major = og_load_u16le(ft + 32);
    r->minor = og_load_u16le(ft + 34);
    if (r->major != OG_LANCE_FILE_MAJOR || r->minor != OG_LANCE_FILE_MINOR)
        return og_err(OG_ERR_UNSUPPORTED_VERSION, "lance file: footer version %u.%u, only 0.3 (file format 2.0) is supported",
                      r->major, r->minor);
    uint64_t cmo = og_load_u64le(ft + 8), gbo = og_load_u64le(ft + 16);
    uint32_t ngb = og_load_u32le(ft + 24), ncols = og_load_u32le(ft + 28);
    uint64_t body = size - OG_LANCE_FOOTER_SIZE;
    if (!span_ok(cmo, 16ull * ncols, body))
        return og_err(OG_ERR_CORRUPT, "lance file: column metadata offset table (%u columns at %llu) lies outside the file",
                      ncols, (unsigned long long)cmo);
    if (!span_ok(gbo, 16ull * ngb, body))
        return og_err(OG_ERR_CORRUPT, "lance file: global buffer offset table (%u buffers at %llu) lies outside the file",
                      ngb, (unsigned long long)gbo);
    if (ngb == 0) return og_err(OG_ERR_CORRUPT, "lance file: no global buffers (the file descriptor is missing)");
    if (!in_win(r, cmo, 16ull * ncols) || !in_win(r, gbo, 16ull * ngb))
        return og_err(OG_ERR_CORRUPT, "lance file: offset tables outside the fetched metadata window");
    r->gbufs = calloc(ngb, sizeof *r->gbufs);
    if (!r->gbufs) return og_err(OG_ERR_NOMEM, "out of memory");
    r->ngbufs = ngb;
    for (uint32_t i = 0; i < ngb; i++) {
        uint64_t pos = og_load_u64le(at(r, gbo + 16ull * i)), len = og_load_u64le(at(r, gbo + 16ull * i + 8));
        if (!span_ok(pos, len, body))
            return og_err(OG_ERR_CORRUPT, "lance file: global buffer %u at %llu+%llu lies outside the file", i,
                          (unsigned long long)pos, (unsigned long long)len);
        if (!in_win(r, pos, len))
            return og_err(OG_ERR_CORRUPT, "lance file: global buffer %u outside the fetched metadata window", i);
        r->gbufs[i].p = at(r, pos);
        r->gbufs[i].len = len;
        r->gbufs[i].off = pos;
    }
    OG_TRY(parse_descriptor(r, &r->gbufs[0]));
    og_status st = og_lance_schema_validate(&r->schema);
    if (st) return og_err_wrap(st, "lance file");
    if (ncols != og_lance_schema_num_columns(&r->schema))
        return og_err(OG_ERR_CORRUPT, "lance file: %u columns for a schema of %zu fields", ncols, r->schema.count);
    if (ncols) {
        r->cols = calloc(ncols, sizeof *r->cols);
        if (!r->cols) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    r->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) {
        const og_lance_field *fl = &r->schema.fields[i];
        if (fl->parent_id != -1) {
            long p = og_lance_schema_find_id(&r->schema, fl->parent_id);
            if (p < 0 || (size_t)p + 1 != i)
                return og_err(OG_ERR_CORRUPT, "lance file: child field %s does not follow its list", fl->name);
            st = og_lance_parse_logical_type(fl->logical_type, &r->cols[i].type);
        } else {
            st = og_lance_schema_field_type(&r->schema, i, &r->cols[i].type);
        }
        if (st) return og_err_wrap(st, "lance file");
    }
    for (size_t i = 0; i < ncols; i++) {
        uint64_t pos = og_load_u64le(at(r, cmo + 16 * i)), len = og_load_u64le(at(r, cmo + 16 * i + 8));
        if (!span_ok(pos, len, body))
            return og_err(OG_ERR_CORRUPT, "lance file: metadata of column %zu at %llu+%llu lies outside the file", i,
                          (unsigned long long)pos, (unsigned long long)len);
        if (!in_win(r, pos, len))
            return og_err(OG_ERR_CORRUPT, "lance file: metadata of column %zu outside the fetched metadata window", i);
        OG_TRY(parse_column(r, i, at(r, pos), (size_t)len));
    }
    /* row counts: every top-level column has num_rows rows, a list child has its items */
    for (size_t i = 0; i < ncols; i++) {
        const og_lance_field *fl = &r->schema.fields[i];
        uint64_t want = fl->parent_id == -1 ? r->num_rows : r->cols[i - 1].total_items;
        if (r->cols[i].total_rows != want)
            return og_err(OG_ERR_CORRUPT, "lance file: column %zu (%s) has %llu rows, expected %llu", i, fl->name,
                          (unsigned long long)r->cols[i].total_rows, (unsigned long long)want);
    }
    return OG_OK;
}

og_status og_lance_reader_open(og_lance_reader **out, const uint8_t *data, size_t size)
{
    *out = NULL;
    og_lance_reader *r = calloc(1, sizeof *r);
    if (!r) return og_err(OG_ERR_NOMEM, "out of memory");
    r->win = data;
    r->win_off = 0;
    r->win_len = size;
    r->size = size;
    og_status st = data || size == 0 ? reader_open(r) : og_err(OG_ERR_INVALID, "lance file: NULL data");
    if (st) {
        og_lance_reader_free(r);
        return st;
    }
    *out = r;
    return OG_OK;
}

void og_lance_reader_free(og_lance_reader *r)
{
    if (!r) return;
    for (size_t i = 0; r->cols && i < r->ncols; i++) {
        free(r->cols[i].pages);
        free(r->cols[i].col_bufs);
    }
    free(r->cols);
    free(r->gbufs);
    og_lance_schema_free(&r->schema);
    if (r->sourced && r->win_pin) r->src.release(r->src.ctx, r->win_pin);
    free(r);
}

size_t og_lance_reader_bytes(const og_lance_reader *r)
{
    size_t b = sizeof *r + r->ngbufs * sizeof *r->gbufs + r->ncols * sizeof *r->cols;
    for (size_t i = 0; i < r->ncols; i++)
        b += r->cols[i].npages * sizeof *r->cols[i].pages + r->cols[i].ncol_bufs * sizeof *r->cols[i].col_bufs;
    return b + r->schema.count * (sizeof *r->schema.fields + 64); /* the schema's fields, names included (an estimate) */
}

/* ------------------------------------------------------------------------------------------ */
/* open over a range source                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Makes the window [off, size) (replacing the current one). */
static og_status fetch_window(og_lance_reader *r, uint64_t off)
{
    uint64_t len = r->size - off;
    if (len > OG_LANCE_MAX_DECODE_BYTES)
        return og_err(OG_ERR_LIMIT, "lance file: %llu bytes of metadata is more than we read",
                      (unsigned long long)len);
    const uint8_t *d = NULL;
    void *pin = NULL;
    og_status st = r->src.read(r->src.ctx, off, len, &d, &pin);
    if (st) return og_err_wrap(st, "lance file: reading bytes %llu+%llu", (unsigned long long)off,
                               (unsigned long long)len);
    if (r->win_pin) r->src.release(r->src.ctx, r->win_pin);
    r->win = d;
    r->win_off = off;
    r->win_len = len;
    r->win_pin = pin;
    return OG_OK;
}

/* The lowest position in the file the metadata needs, from the footer and offset tables in
 * the current window (*lo unchanged when something needed is not in the window yet). */
static og_status metadata_start(og_lance_reader *r, uint64_t *lo, int *complete)
{
    uint64_t size = r->size, body = size - OG_LANCE_FOOTER_SIZE;
    const uint8_t *ft = at(r, body);
    if (memcmp(ft + 36, "LANC", 4) != 0) return og_err(OG_ERR_CORRUPT, "lance file: bad magic (not a Lance file)");
    uint64_t cmo = og_load_u64le(ft + 8), gbo = og_load_u64le(ft + 16);
    uint32_t ngb = og_load_u32le(ft + 24), ncols = og_load_u32le(ft + 28);
    if (!span_ok(cmo, 16ull * ncols, body) || !span_ok(gbo, 16ull * ngb, body))
        return og_err(OG_ERR_CORRUPT, "lance file: offset tables lie outside the file");
    uint64_t m = cmo < gbo ? cmo : gbo;
    *complete = 0;
    if (!in_win(r, cmo, 16ull * ncols) || !in_win(r, gbo, 16ull * ngb)) {
        *lo = m;
        return OG_OK;
    }
    for (uint32_t i = 0; i < ncols + ngb; i++) {
        const uint8_t *e = i < ncols ? at(r, cmo + 16ull * i) : at(r, gbo + 16ull * (i - ncols));
        uint64_t pos = og_load_u64le(e), len = og_load_u64le(e + 8);
        if (!span_ok(pos, len, body))
            return og_err(OG_ERR_CORRUPT, "lance file: a metadata buffer at %llu+%llu lies outside the file",
                          (unsigned long long)pos, (unsigned long long)len);
        if (len && pos < m) m = pos;
    }
    *lo = m;
    *complete = 1;
    return OG_OK;
}

og_status og_lance_reader_open_source(og_lance_reader **out, const og_lance_source *src)
{
    *out = NULL;
    if (!src || !src->read || !src->release) return og_err(OG_ERR_INVALID, "lance file: incomplete range source");
    if (src->size > SIZE_MAX) return og_err(OG_ERR_LIMIT, "lance file: too large for this platform");
    og_lance_reader *r = calloc(1, sizeof *r);
    if (!r) return og_err(OG_ERR_NOMEM, "out of memory");
    r->src = *src;
    r->sourced = 1;
    r->size = (size_t)src->size;
    og_status st = OG_OK;
    if (r->size < OG_LANCE_FOOTER_SIZE)
        st = og_err(OG_ERR_CORRUPT, "lance file: %zu bytes is too short for a footer", r->size);
    uint64_t tail = src->tail_bytes ? src->tail_bytes : 65536;
    if (tail < OG_LANCE_FOOTER_SIZE) tail = OG_LANCE_FOOTER_SIZE;
    if (tail > r->size) tail = r->size;
    if (st == OG_OK) st = fetch_window(r, r->size - tail);
    /* at most two more reads: the offset tables, then what they point to */
    for (int round = 0; st == OG_OK && round < 3; round++) {
        uint64_t lo = r->win_off;
        int complete = 0;
        st = metadata_start(r, &lo, &complete);
        if (st == OG_OK && lo < r->win_off) st = fetch_window(r, lo);
        else if (st == OG_OK && complete) break;
    }
    if (st == OG_OK) st = reader_open(r);
    if (st) {
        og_lance_reader_free(r);
        return st;
    }
    *out = r;
    return OG_OK;
}

uint64_t og_lance_reader_num_rows(const og_lance_reader *r) { return r->num_rows; }
const og_lance_schema *og_lance_reader_schema(const og_lance_reader *r) { return &r->schema; }

void og_lance_reader_version(const og_lance_reader *r, uint16_t *major, uint16_t *minor)
{
    if (major) *major = r->major;
    if (minor) *minor = r->minor;
}

size_t og_lance_reader_num_columns(const og_lance_reader *r) { return r->ncols; }

long og_lance_reader_column_of_field(const og_lance_reader *r, int32_t field_id)
{
    long i = og_lance_schema_find_id(&r->schema, field_id);
    return i < 0 ? -1 : og_lance_schema_column_index(&r->schema, (size_t)i);
}

size_t og_lance_reader_num_pages(const og_lance_reader *r, size_t column)
{
    return column < r->ncols ? r->cols[column].npages : 0;
}

og_status og_lance_reader_page_info(const og_lance_reader *r, size_t column, size_t page, uint64_t *row_start,
                                    uint64_t *rows)
{
    if (column >= r->ncols || page >= r->cols[column].npages)
        return og_err(OG_ERR_INVALID, "lance file: column %zu page %zu out of range", column, page);
    if (row_start) *row_start = r->cols[column].pages[page].row_start;
    if (rows) *rows = r->cols[column].pages[page].rows;
    return OG_OK;
}
