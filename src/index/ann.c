/*
 * ann.c — the per-data-file vector index file (ann.h): a checked envelope around an hnswlib
 * graph.  Why an envelope: hnswlib trusts the bytes it loads, so nothing reaches it unless the
 * sizes, the trailer and a checksum over the payload all match what we wrote.
 */
#include "index/ann.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "util/buf.h"
#include "util/error.h"
#include "vec/distance.h"
#include "vec/hnsw.h"

#define ANN_MAGIC "OGANNHNS"
#define ANN_TRAILER "OGANNEND"
#define ANN_FORMAT 2u      /* written; format 1 (no table of upper levels) is still read */
#define ANN_HEADER 64u
#define ANN_UP_ENTRY 16u   /* format 2's table of upper levels: u32 id, u32 level, u64 offset */

/* The lists of one point above level 0: `level` lists of (maxM + 1) u32 each. */
typedef struct og_ann_upper {
    uint32_t id, level;
    const uint8_t *lists;
} og_ann_upper;

struct og_ann {
    og_mapping *map;      /* the mapped file the graph is read in place from (owned), or NULL */
    uint8_t *own;         /* or a heap copy of it (owned) */
    int cached;           /* owned by the cache: og_ann_release */
    size_t refs;          /* cache references (under g_lock) */
    uint64_t last_use;    /* the cache's clock at the last acquire (under g_lock) */
    _Atomic int bad;      /* a search found the graph damaged: never searched again */
    uint8_t header[64];
    uint64_t rows, count;
    uint32_t dim;
    og_vec_l2sq_fn dist;
    /* the graph (hnswlib's serialisation, read in place) */
    const uint8_t *data0; /* level 0: count entries of sdpe bytes (list, vector, label) */
    size_t sdpe, offdata, laboff, maxM, maxM0, links;
    int maxlevel;
    uint32_t ep;
    og_ann_upper *up;     /* format 1: the points with upper levels, by id (walked at open) */
    size_t nup;           /* entries of up, or of uptab */
    const uint8_t *uptab; /* format 2: the same, as the file's table (read in place) */
    const uint8_t *graph; /* the hnswlib serialisation: graph[0..glen) */
    size_t glen, levels;  /* ... whose level table starts at graph + levels */
};

/* A fast 64-bit checksum (not cryptographic: it only has to catch damage). */
static uint64_t checksum(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h ^= og_load_u64le(p + i);
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    for (; i < n; i++) {
        h ^= p[i];
        h *= 0xc4ceb9fe1a85ec53ull;
    }
    return h ^ (h >> 32);
}

static og_status hnsw_status(int rc, const char *what)
{
    switch (rc) {
    case OG_HNSW_OK: return OG_OK;
    case OG_HNSW_NOMEM: return og_err(OG_ERR_NOMEM, "vector index: out of memory (%s)", what);
    case OG_HNSW_IO: return og_err(OG_ERR_IO, "vector index: %s failed", what);
    default: return og_err(OG_ERR_CORRUPT, "vector index: %s failed (invalid data)", what);
    }
}

static og_status parse_graph(og_ann *a, const uint8_t *g, size_t glen, int walk);

/* Format 2's table of upper levels of the graph g[0..glen) over `count` dim-float points,
 * appended to out: one entry (u32 id, u32 level, u64 offset of its lists in g) per point above
 * level 0, by id.  So opening a file reads this table where it is instead of walking the whole
 * level table (one variable-length entry per point: 5 ms of a fresh process's first nearest at
 * 1,000,000 vectors, docs/benchmarks.md "Search defaults"). */
static og_status upper_table(uint32_t dim, size_t count, const uint8_t *g, size_t glen, og_buf *out)
{
    og_ann *a = calloc(1, sizeof *a);
    if (!a) return og_err(OG_ERR_NOMEM, "vector index: out of memory");
    a->dim = dim;
    a->count = count;
    og_status st = parse_graph(a, g, glen, 1);
    for (size_t i = 0; i < a->nup && st == OG_OK; i++) {
        st = og_buf_append_u32le(out, a->up[i].id);
        if (st == OG_OK) st = og_buf_append_u32le(out, a->up[i].level);
        if (st == OG_OK) st = og_buf_append_u64le(out, (uint64_t)(a->up[i].lists - g));
    }
    free(a->up);
    free(a);
    return st;
}

og_status og_ann_encode(const og_vector *vecs, og_buf *out)
{
    if (vecs->type.id != OG_T_VECTOR || vecs->type.dim == 0)
        return og_err(OG_ERR_INVALID, "vector index: the column is not a Vector");
    if (vecs->len >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "vector index: %zu rows", vecs->len);
    uint32_t dim = vecs->type.dim;
    size_t n = vecs->len, m = 0;
    for (size_t i = 0; i < n; i++) m += !og_vector_is_null(vecs, i);
    float *pts = malloc((m ? m : 1) * dim * sizeof *pts);
    uint64_t *labels = malloc((m ? m : 1) * sizeof *labels);
    if (!pts || !labels) {
        free(pts);
        free(labels);
        return og_err(OG_ERR_NOMEM, "vector index: out of memory");
    }
    og_status st = OG_OK;
    m = 0;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        if (og_vector_is_null(vecs, i)) continue;
        const float *v = og_vector_get_floats(vecs, i);
        for (uint32_t d = 0; d < dim; d++)
            if (!isfinite(v[d])) st = og_err(OG_ERR_INVALID, "vector index: row %zu holds a non-finite number", i);
        memcpy(pts + m * dim, v, dim * sizeof *pts);
        labels[m++] = i;
    }
    og_hnsw *h = NULL;
    uint8_t *payload = NULL;
    size_t plen = 0;
    if (st == OG_OK)
        st = hnsw_status(og_hnsw_build(&h, dim, pts, labels, m, OG_HNSW_DEFAULT_M, OG_HNSW_DEFAULT_EF_CONSTRUCTION, 0),
                         "build");
    free(pts);
    free(labels);
    if (st == OG_OK) st = hnsw_status(og_hnsw_save(h, &payload, &plen), "save");
    og_hnsw_free(h);
    og_buf body = OG_BUF_INIT; /* the payload: the graph, then its table of upper levels */
    if (st == OG_OK) st = og_buf_append(&body, payload, plen);
    if (st == OG_OK) st = upper_table(dim, m, payload, plen, &body);
    free(payload);
    if (st == OG_OK) st = og_buf_append(out, ANN_MAGIC, 8);
    if (st == OG_OK) st = og_buf_append_u32le(out, ANN_FORMAT);
    if (st == OG_OK) st = og_buf_append_u32le(out, dim);
    if (st == OG_OK) st = og_buf_append_u64le(out, n);
    if (st == OG_OK) st = og_buf_append_u64le(out, m);
    if (st == OG_OK) st = og_buf_append_u32le(out, OG_HNSW_DEFAULT_M);
    if (st == OG_OK) st = og_buf_append_u32le(out, OG_HNSW_DEFAULT_EF_CONSTRUCTION);
    if (st == OG_OK) st = og_buf_append_u64le(out, body.len);
    if (st == OG_OK) st = og_buf_append_u64le(out, checksum(body.data, body.len));
    if (st == OG_OK) st = og_buf_append_u64le(out, plen); /* the graph's bytes */
    if (st == OG_OK) st = og_buf_append(out, body.data, body.len);
    if (st == OG_OK) st = og_buf_append(out, ANN_TRAILER, 8);
    og_buf_free(&body);
    return st;
}

og_status og_ann_build(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field, og_buf *out)
{
    og_vector v;
    og_status st = og_index_read_column(t, m, f, field, "vector index", &v);
    if (st != OG_OK) return st;
    st = og_ann_encode(&v, out);
    og_vector_free(&v);
    return st;
}

/* ---- reading: a bounds-checked HNSW search over the file's bytes, in place ----------------
 *
 * Why not hnswlib's loader: it copies the whole graph (vectors included: 43 MB for a 65,536-row
 * file of 128-d vectors) into its own memory and needs every byte validated first, so a fresh
 * process paid a full pass over every index file before its first answer (a checksum, the
 * structure check, and two copies).  Here the file's mapping IS the graph: opening reads the
 * fixed header and the small per-point level table; a search touches only the points it visits
 * and checks each neighbour list it reads (count within the list's bound, ids of points that
 * exist and reach that level, labels within the data file).  A damaged graph can therefore
 * give poorer candidates (whose distances the reader recomputes exactly) or OG_ERR_CORRUPT
 * (the reader then scans the file), never an out-of-bounds read.  The whole-file checksum is
 * verified where a file is adopted (og_ann_check, index build / status). */

/* hnswlib's serialisation header (hnswlib 0.6, HierarchicalNSW::saveIndex): host-order PODs. */
#define G_HEADER (6 * 8 + 4 + 4 + 3 * 8 + 8 + 8)
#define G_MAX_LEVEL 64

static int take_sz(const uint8_t *p, size_t len, size_t *at, size_t *v)
{
    if (*at > len || len - *at < sizeof *v) return 0;
    memcpy(v, p + *at, sizeof *v);
    *at += sizeof *v;
    return 1;
}

static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The upper-level lists of point id (level >= 1) into *u: 1, or 0 when it has none (binary
 * search), or -1 when format 2's table names lists its graph does not hold (damage).  Format
 * 2's entries are checked here, when a search reads them, not at open: the offset lies in the
 * level table, the lists fit in the graph, and the size before them is the one the entry says. */
static int upper_of(const og_ann *a, uint32_t id, og_ann_upper *u)
{
    size_t lo = 0, hi = a->nup;
    if (!a->uptab) {
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (a->up[mid].id < id) lo = mid + 1;
            else hi = mid;
        }
        if (lo == a->nup || a->up[lo].id != id) return 0;
        *u = a->up[lo];
        return 1;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ld32(a->uptab + mid * ANN_UP_ENTRY) < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == a->nup || ld32(a->uptab + lo * ANN_UP_ENTRY) != id) return 0;
    const uint8_t *e = a->uptab + lo * ANN_UP_ENTRY;
    uint32_t level = ld32(e + 4);
    uint64_t off = og_load_u64le(e + 8);
    if (level == 0 || level > (uint32_t)a->maxlevel || off < a->levels + 4 || off > a->glen ||
        (a->glen - off) / a->links < level || ld32(a->graph + off - 4) != level * a->links)
        return -1;
    *u = (og_ann_upper){id, level, a->graph + off};
    return 1;
}

/* Parses the graph header of g[0..glen) and, without a table of upper levels (format 1, or
 * `walk`), walks its level table into a->up; everything else is checked when a search reads it. */
static og_status parse_graph(og_ann *a, const uint8_t *g, size_t glen, int walk)
{
    size_t at = 0, off0, maxel, cur, sdpe, laboff, offdata, maxM, maxM0, M, efc;
    int maxlevel;
    uint32_t ep;
    if (!take_sz(g, glen, &at, &off0) || !take_sz(g, glen, &at, &maxel) || !take_sz(g, glen, &at, &cur) ||
        !take_sz(g, glen, &at, &sdpe) || !take_sz(g, glen, &at, &laboff) || !take_sz(g, glen, &at, &offdata) ||
        glen - at < 8)
        return og_err(OG_ERR_CORRUPT, "vector index: the graph header is truncated");
    memcpy(&maxlevel, g + at, 4);
    memcpy(&ep, g + at + 4, 4);
    at += 8;
    if (!take_sz(g, glen, &at, &maxM) || !take_sz(g, glen, &at, &maxM0) || !take_sz(g, glen, &at, &M) ||
        glen - at < 8 + sizeof(size_t))
        return og_err(OG_ERR_CORRUPT, "vector index: the graph header is truncated");
    at += 8; /* mult (a build parameter) */
    if (!take_sz(g, glen, &at, &efc)) return og_err(OG_ERR_CORRUPT, "vector index: the graph header is truncated");
    (void)maxel;
    size_t dbytes = (size_t)a->dim * sizeof(float);
    if (off0 != 0 || M < 2 || M > 4096 || maxM != M || maxM0 != 2 * M || offdata != (maxM0 + 1) * 4 ||
        dbytes > SIZE_MAX / 2 || laboff != offdata + dbytes || sdpe != laboff + sizeof(size_t))
        return og_err(OG_ERR_CORRUPT, "vector index: the graph's layout does not match its dimension");
    if (cur != a->count) return og_err(OG_ERR_CORRUPT, "vector index: %zu points, the header says %llu", cur, (unsigned long long)a->count);
    a->sdpe = sdpe;
    a->offdata = offdata;
    a->laboff = laboff;
    a->maxM = maxM;
    a->maxM0 = maxM0;
    a->links = (maxM + 1) * 4;
    if (cur == 0) {
        if (at != glen) return og_err(OG_ERR_CORRUPT, "vector index: bytes after an empty graph");
        return OG_OK;
    }
    if (cur >= UINT32_MAX || (glen - at) / sdpe < cur || maxlevel < 0 || maxlevel >= G_MAX_LEVEL || ep >= cur)
        return og_err(OG_ERR_CORRUPT, "vector index: the graph's sizes are damaged");
    a->maxlevel = maxlevel;
    a->ep = ep;
    a->data0 = g + at;
    at += cur * sdpe;
    a->graph = g;
    a->glen = glen;
    a->levels = at;
    og_ann_upper e;
    if (!walk) { /* format 2: the table is read in place, entry by entry, as searches need it */
        int has = upper_of(a, ep, &e);
        if (has < 0 || (has ? (int)e.level : 0) != maxlevel)
            return og_err(OG_ERR_CORRUPT, "vector index: the entry point is not at the top level");
        return OG_OK;
    }
    /* the level table: per point a u32 byte size (level x links), then its lists */
    size_t cap = 0;
    for (size_t i = 0; i < cur; i++) {
        if (glen - at < 4) return og_err(OG_ERR_CORRUPT, "vector index: the level table is truncated");
        uint32_t size = ld32(g + at);
        at += 4;
        if (size % a->links != 0 || size / a->links > (size_t)maxlevel || glen - at < size)
            return og_err(OG_ERR_CORRUPT, "vector index: the level table is damaged");
        if (size) {
            if (a->nup == cap) {
                size_t nc = cap ? cap * 2 : 64;
                og_ann_upper *u = realloc(a->up, nc * sizeof *u);
                if (!u) return og_err(OG_ERR_NOMEM, "vector index: out of memory");
                a->up = u;
                cap = nc;
            }
            a->up[a->nup++] = (og_ann_upper){(uint32_t)i, (uint32_t)(size / a->links), g + at};
        }
        at += size;
    }
    if (at != glen) return og_err(OG_ERR_CORRUPT, "vector index: bytes after the level table");
    if ((upper_of(a, ep, &e) ? (int)e.level : 0) != maxlevel)
        return og_err(OG_ERR_CORRUPT, "vector index: the entry point is not at the top level");
    return OG_OK;
}

/* Opens the index in p[0..len): `own` (malloc()ed, or NULL) and `map` (or NULL) keep the bytes
 * alive and pass to the index on success. */
static og_status open_at(og_ann **out, const uint8_t *p, size_t len, uint8_t *own, og_mapping *map)
{
    *out = NULL;
    if (len < ANN_HEADER + 8 || memcmp(p, ANN_MAGIC, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "vector index: not a vector index file (%zu bytes)", len);
    uint32_t format = og_load_u32le(p + 8);
    if (format != 1 && format != ANN_FORMAT) return og_err(OG_ERR_CORRUPT, "vector index: format %u is not supported", format);
    uint32_t dim = og_load_u32le(p + 12);
    uint64_t rows = og_load_u64le(p + 16), count = og_load_u64le(p + 24), plen = og_load_u64le(p + 40);
    uint64_t glen = format == 1 ? plen : og_load_u64le(p + 56);
    if (dim == 0 || dim > (1u << 20) || count > rows || rows >= UINT32_MAX || plen != len - ANN_HEADER - 8 ||
        memcmp(p + len - 8, ANN_TRAILER, 8) != 0 || glen > plen || (plen - glen) % ANN_UP_ENTRY != 0)
        return og_err(OG_ERR_CORRUPT, "vector index: the file is damaged (%zu bytes)", len);
    og_ann *a = calloc(1, sizeof *a);
    if (!a) return og_err(OG_ERR_NOMEM, "vector index: out of memory");
    memcpy(a->header, p, ANN_HEADER);
    a->rows = rows;
    a->count = count;
    a->dim = dim;
    a->dist = og_vec_l2sq_kernel();
    if (format != 1) {
        a->uptab = p + ANN_HEADER + glen;
        a->nup = (size_t)((plen - glen) / ANN_UP_ENTRY);
    }
    og_status st = parse_graph(a, p + ANN_HEADER, (size_t)glen, format == 1);
    if (st != OG_OK) {
        og_ann_free(a);
        return st;
    }
    a->own = own;
    a->map = map;
    *out = a;
    return OG_OK;
}

og_status og_ann_open_bytes(og_ann **out, const uint8_t *p, size_t len)
{
    *out = NULL;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) return og_err(OG_ERR_NOMEM, "vector index: out of memory");
    memcpy(copy, p, len);
    og_status st = open_at(out, copy, len, copy, NULL);
    if (st != OG_OK) free(copy);
    return st;
}

og_status og_ann_open(og_ann **out, og_store *st, const char *key)
{
    *out = NULL;
    og_mapping *m;
    OG_TRY(og_store_map(st, key, &m));
    og_status s = ((uintptr_t)og_mapping_data(m) & 3) == 0
                      ? open_at(out, og_mapping_data(m), og_mapping_size(m), NULL, m)
                      : og_ann_open_bytes(out, og_mapping_data(m), og_mapping_size(m));
    if (s != OG_OK || !(*out)->map) og_mapping_release(m);
    if (s != OG_OK) return og_err_wrap(s, "%s", key);
    return OG_OK;
}

void og_ann_free(og_ann *a)
{
    if (!a) return;
    if (a->cached) {
        og_ann_release(a);
        return;
    }
    free(a->up);
    free(a->own);
    og_mapping_release(a->map);
    free(a);
}

uint64_t og_ann_rows(const og_ann *a) { return a->rows; }
uint64_t og_ann_count(const og_ann *a) { return a->count; }
uint32_t og_ann_dim(const og_ann *a) { return a->dim; }

/* One (distance, point) entry of the search heaps. */
typedef struct {
    float d;
    uint32_t id;
    uint64_t label;
} hent;

/* The search order: distance, then label (the physical row), so that of rows at equal
 * distance the first in the file is the nearer — the tie-break of exact search. */
static int before(const hent *x, const hent *y) { return x->d < y->d || (x->d == y->d && x->label < y->label); }

/* Binary heaps on hent: `max` puts the farthest first (the results), else the nearest (the
 * candidates). */
static int hless(const hent *x, const hent *y, int max) { return max ? before(x, y) : before(y, x); }

static void hpush(hent *h, size_t *n, hent e, int max)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!hless(&h[up], &e, max)) break;
        h[i] = h[up];
        i = up;
    }
    h[i] = e;
}

static hent hpop(hent *h, size_t *n, int max)
{
    hent top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && hless(&h[c], &h[c + 1], max)) c++;
        if (!hless(&last, &h[c], max)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

static uint64_t label_of(const og_ann *a, uint32_t id)
{
    uint64_t l;
    size_t v;
    memcpy(&v, a->data0 + (size_t)id * a->sdpe + a->laboff, sizeof v);
    l = v;
    return l;
}

static const float *vec_of(const og_ann *a, uint32_t id) { return (const float *)(const void *)(a->data0 + (size_t)id * a->sdpe + a->offdata); }

static og_status damaged(og_ann *a)
{
    atomic_store(&a->bad, 1);
    return og_err(OG_ERR_CORRUPT, "vector index: the graph is damaged");
}

/* hnswlib's search, over the mapped graph: a greedy descent through the upper levels, then a
 * beam of width ef at level 0 (HierarchicalNSW::searchKnn / searchBaseLayerST). */
static og_status graph_search(og_ann *a, const float *q, size_t k, size_t ef, uint32_t *offs, float *dists, size_t *n)
{
    size_t dim = a->dim, cnt = (size_t)a->count;
    uint32_t cur = a->ep;
    float curd = a->dist(q, vec_of(a, cur), dim);
    for (int l = a->maxlevel; l >= 1; l--) {
        for (int changed = 1; changed;) {
            changed = 0;
            og_ann_upper u;
            if (upper_of(a, cur, &u) != 1 || (int)u.level < l) return damaged(a);
            const uint8_t *list = u.lists + (size_t)(l - 1) * a->links;
            uint32_t head = ld32(list);
            if ((head >> 16) != 0 || (head & 0xffff) > a->maxM) return damaged(a);
            for (uint32_t j = 0; j < (head & 0xffff); j++) {
                uint32_t nb = ld32(list + 4 + 4 * (size_t)j);
                if (nb >= cnt) return damaged(a);
                float d = a->dist(q, vec_of(a, nb), dim);
                if (d < curd) {
                    curd = d;
                    cur = nb;
                    changed = 1;
                }
            }
        }
    }
    if (ef < k) ef = k;
    uint8_t *seen = calloc((cnt + 7) / 8, 1);
    size_t ccap = ef + a->maxM0 + 1, nc = 0, nt = 0;
    hent *cand = malloc(ccap * sizeof *cand), *top = malloc((ef + 1) * sizeof *top);
    og_status st = OG_OK;
    if (!seen || !cand || !top) {
        st = og_err(OG_ERR_NOMEM, "vector index: out of memory");
        goto out;
    }
    seen[cur >> 3] |= (uint8_t)(1u << (cur & 7));
    hent e0 = {curd, cur, label_of(a, cur)};
    hpush(top, &nt, e0, 1);
    hpush(cand, &nc, e0, 0);
    float bound = curd;
    while (nc > 0) {
        if (cand[0].d > bound) break;
        hent c = hpop(cand, &nc, 0);
        const uint8_t *e = a->data0 + (size_t)c.id * a->sdpe;
        uint32_t head = ld32(e);
        if ((head >> 16) != 0 || (head & 0xffff) > a->maxM0) {
            st = damaged(a);
            goto out;
        }
        for (uint32_t j = 0; j < (head & 0xffff); j++) {
            uint32_t nb = ld32(e + 4 + 4 * (size_t)j);
            if (nb >= cnt) {
                st = damaged(a);
                goto out;
            }
            if (seen[nb >> 3] & (1u << (nb & 7))) continue;
            seen[nb >> 3] |= (uint8_t)(1u << (nb & 7));
            float d = a->dist(q, vec_of(a, nb), dim);
            hent en = {d, nb, 0};
            if (nt < ef || bound >= d) en.label = label_of(a, nb);
            if (nt < ef || before(&en, &top[0])) {
                if (nc == ccap) {
                    hent *g = realloc(cand, 2 * ccap * sizeof *g);
                    if (!g) {
                        st = og_err(OG_ERR_NOMEM, "vector index: out of memory");
                        goto out;
                    }
                    cand = g;
                    ccap *= 2;
                }
                hpush(cand, &nc, en, 0);
                hpush(top, &nt, en, 1);
                if (nt > ef) hpop(top, &nt, 1);
                bound = top[0].d;
            }
        }
    }
    while (nt > k) hpop(top, &nt, 1);
    size_t m = nt;
    for (size_t i = m; i-- > 0;) {
        hent h = hpop(top, &nt, 1);
        uint64_t label = h.label;
        if (label >= a->rows) {
            st = damaged(a);
            goto out;
        }
        offs[i] = (uint32_t)label;
        dists[i] = h.d;
    }
    *n = m;
out:
    free(seen);
    free(cand);
    free(top);
    return st;
}

og_status og_ann_search(og_ann *a, const float *q, size_t k, size_t ef, uint32_t *offs, float *dists, size_t *n)
{
    *n = 0;
    if (k > a->count) k = (size_t)a->count;
    if (k == 0) return OG_OK;
    if (atomic_load(&a->bad)) return og_err(OG_ERR_CORRUPT, "vector index: the graph is damaged");
    size_t got = 0;
    og_status st = graph_search(a, q, k, ef ? ef : OG_ANN_DEFAULT_EF, offs, dists, &got);
    if (st == OG_OK) *n = got;
    return st;
}

og_status og_ann_check(const uint8_t *p, size_t len, uint64_t rows)
{
    if (len < ANN_HEADER + 8 || memcmp(p, ANN_MAGIC, 8) != 0 ||
        (og_load_u32le(p + 8) != 1 && og_load_u32le(p + 8) != ANN_FORMAT) || og_load_u32le(p + 12) == 0 ||
        og_load_u64le(p + 40) != len - ANN_HEADER - 8 || memcmp(p + len - 8, ANN_TRAILER, 8) != 0 ||
        checksum(p + ANN_HEADER, len - ANN_HEADER - 8) != og_load_u64le(p + 48))
        return og_err(OG_ERR_CORRUPT, "vector index: the file is damaged or not a vector index (%zu bytes)", len);
    if (og_load_u64le(p + 16) != rows)
        return og_err(OG_ERR_CORRUPT, "vector index: the file has %llu rows, the data file %llu",
                      (unsigned long long)og_load_u64le(p + 16), (unsigned long long)rows);
    if (og_load_u32le(p + 8) == 1) return OG_OK;
    /* format 2: the table of upper levels is the one the graph's level table gives */
    uint64_t plen = og_load_u64le(p + 40), glen = og_load_u64le(p + 56), count = og_load_u64le(p + 24);
    if (glen > plen || count >= UINT32_MAX || og_load_u32le(p + 12) > (1u << 20))
        return og_err(OG_ERR_CORRUPT, "vector index: the file is damaged (%zu bytes)", len);
    og_buf want = OG_BUF_INIT;
    og_status st = upper_table(og_load_u32le(p + 12), (size_t)count, p + ANN_HEADER, (size_t)glen, &want);
    if (st == OG_OK && (want.len != plen - glen || (want.len && memcmp(want.data, p + ANN_HEADER + glen, want.len) != 0)))
        st = og_err(OG_ERR_CORRUPT, "vector index: the table of upper levels does not match the graph");
    og_buf_free(&want);
    return st; /* parse_graph's OG_ERR_CORRUPT (a damaged graph) or OG_ERR_NOMEM */
}

/* ---- the process-wide cache of opened indexes ----------------------------------------------
 * Everything below, g_clock included, is read and written only under g_lock: searches on one
 * index run concurrently without it (an index is immutable once opened). */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static og_ann *g_cache[OG_ANN_CACHE_ENTRIES];
static uint64_t g_clock; /* under g_lock */

/* The cached index whose header is p[0..ANN_HEADER), with a new reference; NULL. Under g_lock. */
static og_ann *cache_find(const uint8_t *p)
{
    for (size_t i = 0; i < OG_ANN_CACHE_ENTRIES; i++)
        if (g_cache[i] && !memcmp(g_cache[i]->header, p, ANN_HEADER)) {
            g_cache[i]->refs++;
            g_cache[i]->last_use = ++g_clock;
            return g_cache[i];
        }
    return NULL;
}

og_status og_ann_acquire(og_ann **out, og_mapping **file)
{
    *out = NULL;
    const uint8_t *p = og_mapping_data(*file);
    size_t len = og_mapping_size(*file);
    if (len < ANN_HEADER + 8 || memcmp(p + len - 8, ANN_TRAILER, 8) != 0 || og_load_u64le(p + 40) != len - ANN_HEADER - 8)
        return og_err(OG_ERR_CORRUPT, "vector index: not a vector index file (%zu bytes)", len);
    pthread_mutex_lock(&g_lock);
    og_ann *hit = cache_find(p);
    pthread_mutex_unlock(&g_lock);
    if (hit && atomic_load(&hit->bad)) {
        og_ann_release(hit);
        return og_err(OG_ERR_CORRUPT, "vector index: the graph is damaged");
    }
    if (hit) {
        *out = hit;
        return OG_OK;
    }
    og_ann *a;
    if (((uintptr_t)p & 3) == 0) { /* read in place: the index keeps the mapping */
        OG_TRY(open_at(&a, p, len, NULL, *file));
        *file = NULL;
    } else {
        OG_TRY(og_ann_open_bytes(&a, p, len));
    }
    pthread_mutex_lock(&g_lock);
    hit = cache_find(a->header); /* another thread opened it meanwhile */
    if (hit) {
        pthread_mutex_unlock(&g_lock);
        og_ann_free(a);
        *out = hit;
        return OG_OK;
    }
    size_t slot = OG_ANN_CACHE_ENTRIES;
    for (size_t i = 0; i < OG_ANN_CACHE_ENTRIES && slot == OG_ANN_CACHE_ENTRIES; i++)
        if (!g_cache[i]) slot = i;
    if (slot == OG_ANN_CACHE_ENTRIES) /* evict the least recently used unreferenced index */
        for (size_t i = 0; i < OG_ANN_CACHE_ENTRIES; i++)
            if (g_cache[i]->refs == 0 && (slot == OG_ANN_CACHE_ENTRIES || g_cache[i]->last_use < g_cache[slot]->last_use))
                slot = i;
    og_ann *old = NULL;
    if (slot < OG_ANN_CACHE_ENTRIES) {
        old = g_cache[slot];
        if (old) old->cached = 0;
        a->cached = 1;
        a->refs = 1;
        a->last_use = ++g_clock;
        g_cache[slot] = a;
    }
    pthread_mutex_unlock(&g_lock);
    og_ann_free(old);
    *out = a; /* every slot busy: an uncached index (og_ann_release frees it) */
    return OG_OK;
}

void og_ann_release(og_ann *a)
{
    if (!a) return;
    pthread_mutex_lock(&g_lock);
    int cached = a->cached;
    if (cached && a->refs) a->refs--;
    pthread_mutex_unlock(&g_lock);
    if (!cached) og_ann_free(a);
}

void og_ann_cache_clear(void)
{
    pthread_mutex_lock(&g_lock);
    og_ann *drop[OG_ANN_CACHE_ENTRIES];
    size_t n = 0;
    for (size_t i = 0; i < OG_ANN_CACHE_ENTRIES; i++)
        if (g_cache[i] && g_cache[i]->refs == 0) {
            g_cache[i]->cached = 0;
            drop[n++] = g_cache[i];
            g_cache[i] = NULL;
        }
    pthread_mutex_unlock(&g_lock);
    for (size_t i = 0; i < n; i++) og_ann_free(drop[i]);
}
