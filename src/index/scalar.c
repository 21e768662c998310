/*
 * scalar.c — the per-data-file sorted-key index (scalar.h).  Why a sorted array and not a
 * B-tree: the file is immutable and mapped, so binary search over fixed 16-byte entries is the
 * whole B-tree (a few page touches per lookup) with nothing to rebalance.
 */
#include "index/scalar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "util/buf.h"
#include "util/error.h"

#define SC_MAGIC "OGSCALAR"
#define SC_TRAILER "OGSCLEND"
#define SC_FORMAT 1u
#define SC_HEADER 48u
#define SC_ENTRY 16u

static int64_t rdi64(const uint8_t *p) { int64_t v; memcpy(&v, p, 8); return v; }
static double rdf64(const uint8_t *p) { double v; memcpy(&v, p, 8); return v; }

og_scalar_kind og_scalar_kind_of(og_type t)
{
    switch (t.id) {
    case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: case OG_T_DATE32: case OG_T_DATE64:
    case OG_T_BOOL: /* false 0 < true 1, the engine's order */
        return OG_SCALAR_INT;
    case OG_T_F32: case OG_T_F64: return OG_SCALAR_FLOAT;
    case OG_T_STRING: return OG_SCALAR_STRING;
    default: return OG_SCALAR_NONE;
    }
}

/* A sort entry.  A string entry carries its own key bytes (`str`, set once the blob stops
 * growing), so the comparators need no shared state: two builds may sort at the same time on
 * two threads of one process. */
typedef struct ent {
    union { int64_t i; double f; struct { uint32_t pos, len; } s; } k;
    uint32_t off;
    const uint8_t *str;
} ent;

static int cmp_int(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->k.i != y->k.i) return x->k.i < y->k.i ? -1 : 1;
    return (x->off > y->off) - (x->off < y->off);
}
static int cmp_float(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->k.f != y->k.f) return x->k.f < y->k.f ? -1 : 1;
    return (x->off > y->off) - (x->off < y->off);
}
static int bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    size_t m = al < bl ? al : bl;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return (al > bl) - (al < bl);
}
static int cmp_str(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    int c = bytes_cmp(x->str, x->k.s.len, y->str, y->k.s.len);
    if (c) return c;
    return (x->off > y->off) - (x->off < y->off);
}

og_status og_scalar_encode(const og_vector *col, og_buf *out)
{
    og_scalar_kind kind = og_scalar_kind_of(col->type);
    if (kind == OG_SCALAR_NONE) return og_err(OG_ERR_INVALID, "scalar index: the column's type is not indexable");
    if (col->len >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "scalar index: %zu rows", col->len);
    size_t n = col->len, m = 0;
    ent *e = malloc((n ? n : 1) * sizeof *e);
    if (!e) return og_err(OG_ERR_NOMEM, "scalar index: out of memory");
    og_buf blob = OG_BUF_INIT;
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        if (og_vector_is_null(col, i)) continue;
        ent x;
        memset(&x, 0, sizeof x);
        x.off = (uint32_t)i;
        if (kind == OG_SCALAR_INT) {
            if (col->type.id == OG_T_BOOL) {
                x.k.i = og_vector_get_bool(col, i) != 0;
            } else if (col->type.id == OG_T_U32 || col->type.id == OG_T_U64) {
                uint64_t u = og_vector_get_u64(col, i);
                if (u > (uint64_t)INT64_MAX) {
                    st = og_err(OG_ERR_LIMIT, "scalar index: an unsigned value above 2^63 - 1");
                    break;
                }
                x.k.i = (int64_t)u;
            } else {
                x.k.i = og_vector_get_i64(col, i);
            }
        } else if (kind == OG_SCALAR_FLOAT) {
            x.k.f = og_vector_get_f64(col, i);
            if (isnan(x.k.f)) continue; /* never matches a comparison */
        } else {
            size_t len;
            const uint8_t *b = og_vector_get_bytes(col, i, &len);
            if (blob.len + len >= UINT32_MAX) {
                st = og_err(OG_ERR_LIMIT, "scalar index: more than 4 GiB of strings");
                break;
            }
            x.k.s.pos = (uint32_t)blob.len;
            x.k.s.len = (uint32_t)len;
            st = og_buf_append(&blob, b, len);
        }
        e[m++] = x;
    }
    if (st == OG_OK) {
        if (kind == OG_SCALAR_STRING)
            for (size_t i = 0; i < m; i++) e[i].str = blob.data ? blob.data + e[i].k.s.pos : (const uint8_t *)"";
        qsort(e, m, sizeof *e, kind == OG_SCALAR_INT ? cmp_int : kind == OG_SCALAR_FLOAT ? cmp_float : cmp_str);
        st = og_buf_reserve(out, SC_HEADER + m * SC_ENTRY + blob.len + 8);
    }
    if (st == OG_OK) {
        og_buf_append(out, SC_MAGIC, 8);
        og_buf_append_u32le(out, SC_FORMAT);
        og_buf_append_u32le(out, (uint32_t)kind);
        og_buf_append_u64le(out, n);
        og_buf_append_u64le(out, m);
        og_buf_append_u64le(out, blob.len);
        og_buf_append_u64le(out, 0);
        for (size_t i = 0; i < m; i++) {
            uint8_t b[SC_ENTRY];
            memset(b, 0, sizeof b);
            if (kind == OG_SCALAR_STRING) {
                memcpy(b, &e[i].k.s.pos, 4);
                memcpy(b + 4, &e[i].k.s.len, 4);
            } else {
                memcpy(b, &e[i].k, 8);
            }
            memcpy(b + 8, &e[i].off, 4);
            og_buf_append(out, b, sizeof b);
        }
        if (blob.len) og_buf_append(out, blob.data, blob.len);
        st = og_buf_append(out, SC_TRAILER, 8);
    }
    og_buf_free(&blob);
    free(e);
    return st;
}

og_status og_scalar_build(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field, og_buf *out)
{
    og_vector v;
    og_status st = og_index_read_column(t, m, f, field, "scalar index", &v);
    if (st != OG_OK) return st;
    st = og_scalar_encode(&v, out);
    og_vector_free(&v);
    return st;
}

og_status og_scalar_check(const uint8_t *p, size_t len, uint64_t rows)
{
    if (len < SC_HEADER + 8 || memcmp(p, SC_MAGIC, 8) != 0 || og_load_u32le(p + 8) != SC_FORMAT)
        return og_err(OG_ERR_CORRUPT, "scalar index: not a scalar index file (%zu bytes)", len);
    uint32_t kind = og_load_u32le(p + 12);
    uint64_t r = og_load_u64le(p + 16), count = og_load_u64le(p + 24), blob = og_load_u64le(p + 32);
    if (kind < OG_SCALAR_INT || kind > OG_SCALAR_STRING || count > r || r >= UINT32_MAX || blob >= UINT32_MAX ||
        SC_HEADER + count * SC_ENTRY + blob + 8 != len || memcmp(p + len - 8, SC_TRAILER, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "scalar index: sizes in the header do not match the file (%zu bytes)", len);
    if (r != rows)
        return og_err(OG_ERR_CORRUPT, "scalar index: the file has %llu rows, the data file %llu", (unsigned long long)r,
                      (unsigned long long)rows);
    return OG_OK;
}

og_scalar_kind og_scalar_file_kind(const uint8_t *p) { return (og_scalar_kind)og_load_u32le(p + 12); }

typedef struct file {
    const uint8_t *ents, *blob;
    size_t count, blob_len;
    og_scalar_kind kind;
    int bad;
} file;

/* Entry i's key compared with a numeric bound: <0, 0, >0. */
static int cmp_num_at(const file *f, size_t i, long double b)
{
    long double k = f->kind == OG_SCALAR_INT ? (long double)rdi64(f->ents + i * SC_ENTRY)
                                             : (long double)rdf64(f->ents + i * SC_ENTRY);
    return (k > b) - (k < b);
}
static int cmp_str_at(file *f, size_t i, const uint8_t *b, size_t bl)
{
    const uint8_t *e = f->ents + i * SC_ENTRY;
    uint32_t pos = og_load_u32le(e), len = og_load_u32le(e + 4);
    if ((uint64_t)pos + len > f->blob_len) {
        f->bad = 1;
        return 0;
    }
    return bytes_cmp(f->blob + pos, len, b, bl);
}

/* The first entry whose key is > b (after = 1) or >= b (after = 0). */
static size_t bound(file *f, int string, long double num, const uint8_t *s, size_t sl, int after)
{
    size_t lo = 0, hi = f->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = string ? cmp_str_at(f, mid, s, sl) : cmp_num_at(f, mid, num);
        if (c < 0 || (after && c == 0)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

og_status og_scalar_lookup(const uint8_t *p, size_t len, int string_range, const og_scalar_range *r,
                           void (*cb)(void *ud, uint32_t offset), void *ud)
{
    file f = {p + SC_HEADER, p + SC_HEADER + og_load_u64le(p + 24) * SC_ENTRY, (size_t)og_load_u64le(p + 24), (size_t)og_load_u64le(p + 32),
              og_scalar_file_kind(p), 0};
    if ((f.kind == OG_SCALAR_STRING) != (string_range != 0))
        return og_err(OG_ERR_INVALID, "scalar index: a %s range on a %s index", string_range ? "string" : "numeric",
                      f.kind == OG_SCALAR_STRING ? "string" : "numeric");
    long double lo = r->lo_num, hi = r->hi_num;
    int lo_incl = r->lo_incl, hi_incl = r->hi_incl;
    if (f.kind == OG_SCALAR_FLOAT) { /* widen by one ulp of double, inclusive: a superset */
        if (r->has_lo) lo = (long double)nextafter((double)lo, -INFINITY), lo_incl = 1;
        if (r->has_hi) hi = (long double)nextafter((double)hi, INFINITY), hi_incl = 1;
    }
    if ((r->has_lo && isnan(lo)) || (r->has_hi && isnan(hi))) return OG_OK; /* NaN matches nothing */
    size_t from = r->has_lo ? bound(&f, string_range, lo, r->lo_str, r->lo_len, !lo_incl) : 0;
    size_t to = r->has_hi ? bound(&f, string_range, hi, r->hi_str, r->hi_len, hi_incl) : f.count;
    if (f.bad) return og_err(OG_ERR_CORRUPT, "scalar index: a key outside the file");
    uint64_t rows = og_load_u64le(p + 16);
    for (size_t i = from; i < to; i++) {
        uint32_t off = og_load_u32le(f.ents + i * SC_ENTRY + 8);
        if (off >= rows) return og_err(OG_ERR_CORRUPT, "scalar index: an entry names row %u of %llu", off,
                                       (unsigned long long)rows);
        cb(ud, off);
    }
    return OG_OK;
}
