/*
 * ann.c — the per-data-file vector index file (ann.h): a checked envelope around an hnswlib
 * graph.  Why an envelope: hnswlib trusts the bytes it loads, so nothing reaches it unless the
 * sizes, the trailer and a checksum over the payload all match what we wrote.
 */
#include "index/ann.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "util/buf.h"
#include "util/error.h"
#include "vec/hnsw.h"

#define ANN_MAGIC "OGANNHNS"
#define ANN_TRAILER "OGANNEND"
#define ANN_FORMAT 1u
#define ANN_HEADER 64u

struct og_ann {
    og_hnsw *h;
    pthread_mutex_t lock; /* one search at a time */
    int cached;           /* owned by the cache: og_ann_release */
    size_t refs;          /* cache references (under g_lock) */
    uint64_t last_use;
    uint8_t header[64];
    uint64_t rows, count;
    uint32_t dim;
    uint64_t *labels;  /* scratch for one search */
    size_t cap;
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
    if (st == OG_OK) st = og_buf_append(out, ANN_MAGIC, 8);
    if (st == OG_OK) st = og_buf_append_u32le(out, ANN_FORMAT);
    if (st == OG_OK) st = og_buf_append_u32le(out, dim);
    if (st == OG_OK) st = og_buf_append_u64le(out, n);
    if (st == OG_OK) st = og_buf_append_u64le(out, m);
    if (st == OG_OK) st = og_buf_append_u32le(out, OG_HNSW_DEFAULT_M);
    if (st == OG_OK) st = og_buf_append_u32le(out, OG_HNSW_DEFAULT_EF_CONSTRUCTION);
    if (st == OG_OK) st = og_buf_append_u64le(out, plen);
    if (st == OG_OK) st = og_buf_append_u64le(out, checksum(payload, plen));
    if (st == OG_OK) st = og_buf_append_u64le(out, 0);
    if (st == OG_OK) st = og_buf_append(out, payload, plen);
    if (st == OG_OK) st = og_buf_append(out, ANN_TRAILER, 8);
    free(payload);
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

og_status og_ann_open_bytes(og_ann **out, const uint8_t *p, size_t len)
{
    *out = NULL;
    if (len < ANN_HEADER + 8 || memcmp(p, ANN_MAGIC, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "vector index: not a vector index file (%zu bytes)", len);
    if (og_load_u32le(p + 8) != ANN_FORMAT) return og_err(OG_ERR_CORRUPT, "vector index: format %u is not supported", og_load_u32le(p + 8));
    uint32_t dim = og_load_u32le(p + 12);
    uint64_t rows = og_load_u64le(p + 16), count = og_load_u64le(p + 24), plen = og_load_u64le(p + 40), sum = og_load_u64le(p + 48);
    if (dim == 0 || count > rows || rows >= UINT32_MAX || plen != len - ANN_HEADER - 8 ||
        memcmp(p + len - 8, ANN_TRAILER, 8) != 0 || checksum(p + ANN_HEADER, (size_t)plen) != sum)
        return og_err(OG_ERR_CORRUPT, "vector index: the file is damaged (%zu bytes)", len);
    og_ann *a = calloc(1, sizeof *a);
    if (!a) return og_err(OG_ERR_NOMEM, "vector index: out of memory");
    pthread_mutex_init(&a->lock, NULL);
    memcpy(a->header, p, ANN_HEADER);
    og_status st = hnsw_status(og_hnsw_load(&a->h, dim, p + ANN_HEADER, (size_t)plen), "load");
    if (st == OG_OK && og_hnsw_count(a->h) != count)
        st = og_err(OG_ERR_CORRUPT, "vector index: %zu points, the header says %llu", og_hnsw_count(a->h),
                    (unsigned long long)count);
    if (st != OG_OK) {
        og_ann_free(a);
        return st;
    }
    a->rows = rows;
    a->count = count;
    a->dim = dim;
    *out = a;
    return OG_OK;
}

og_status og_ann_open(og_ann **out, og_store *st, const char *key)
{
    *out = NULL;
    og_mapping *m;
    OG_TRY(og_store_map(st, key, &m));
    og_status s = og_ann_open_bytes(out, og_mapping_data(m), og_mapping_size(m));
    og_mapping_release(m);
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
    pthread_mutex_destroy(&a->lock);
    og_hnsw_free(a->h);
    free(a->labels);
    free(a);
}

uint64_t og_ann_rows(const og_ann *a) { return a->rows; }
uint64_t og_ann_count(const og_ann *a) { return a->count; }
uint32_t og_ann_dim(const og_ann *a) { return a->dim; }

static og_status search_locked(og_ann *a, const float *q, size_t k, size_t ef, uint32_t *offs, float *dists, size_t *n)
{
    if (a->cap < k) {
        uint64_t *l = realloc(a->labels, k * sizeof *l);
        if (!l) return og_err(OG_ERR_NOMEM, "vector index: out of memory");
        a->labels = l;
        a->cap = k;
    }
    size_t got = 0;
    og_status st = hnsw_status(og_hnsw_search(a->h, q, k, ef ? ef : OG_ANN_DEFAULT_EF, a->labels, dists, &got), "search");
    for (size_t i = 0; i < got && st == OG_OK; i++) {
        if (a->labels[i] >= a->rows) st = og_err(OG_ERR_CORRUPT, "vector index: a label beyond the file's rows");
        else offs[i] = (uint32_t)a->labels[i];
    }
    if (st == OG_OK) *n = got;
    return st;
}

og_status og_ann_search(og_ann *a, const float *q, size_t k, size_t ef, uint32_t *offs, float *dists, size_t *n)
{
    *n = 0;
    if (k > a->count) k = (size_t)a->count;
    if (k == 0) return OG_OK;
    pthread_mutex_lock(&a->lock);
    og_status st = search_locked(a, q, k, ef, offs, dists, n);
    pthread_mutex_unlock(&a->lock);
    return st;
}

og_status og_ann_check(const uint8_t *p, size_t len, uint64_t rows)
{
    if (len < ANN_HEADER + 8 || memcmp(p, ANN_MAGIC, 8) != 0 || og_load_u32le(p + 8) != ANN_FORMAT || og_load_u32le(p + 12) == 0 ||
        og_load_u64le(p + 40) != len - ANN_HEADER - 8 || memcmp(p + len - 8, ANN_TRAILER, 8) != 0 ||
        checksum(p + ANN_HEADER, len - ANN_HEADER - 8) != og_load_u64le(p + 48))
        return og_err(OG_ERR_CORRUPT, "vector index: the file is damaged or not a vector index (%zu bytes)", len);
    if (og_load_u64le(p + 16) != rows)
        return og_err(OG_ERR_CORRUPT, "vector index: the file has %llu rows, the data file %llu",
                      (unsigned long long)og_load_u64le(p + 16), (unsigned long long)rows);
    return OG_OK;
}

/* ---- the process-wide cache of loaded indexes ------------------------------------------------ */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static og_ann *g_cache[OG_ANN_CACHE_ENTRIES];
static uint64_t g_clock;

og_status og_ann_acquire(og_ann **out, const uint8_t *p, size_t len)
{
    *out = NULL;
    if (len < ANN_HEADER + 8 || memcmp(p + len - 8, ANN_TRAILER, 8) != 0 || og_load_u64le(p + 40) != len - ANN_HEADER - 8)
        return og_err(OG_ERR_CORRUPT, "vector index: not a vector index file (%zu bytes)", len);
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < OG_ANN_CACHE_ENTRIES; i++)
        if (g_cache[i] && !memcmp(g_cache[i]->header, p, ANN_HEADER)) {
            g_cache[i]->refs++;
            g_cache[i]->last_use = ++g_clock;
            *out = g_cache[i];
            pthread_mutex_unlock(&g_lock);
            return OG_OK;
        }
    pthread_mutex_unlock(&g_lock);
    og_ann *a;
    OG_TRY(og_ann_open_bytes(&a, p, len));
    pthread_mutex_lock(&g_lock);
    size_t slot = OG_ANN_CACHE_ENTRIES;
    for (size_t i = 0; i < OG_ANN_CACHE_ENTRIES; i++) {
        if (g_cache[i] && !memcmp(g_cache[i]->header, p, ANN_HEADER)) { /* another thread loaded it meanwhile */
            g_cache[i]->refs++;
            *out = g_cache[i];
            pthread_mutex_unlock(&g_lock);
            og_ann_free(a);
            return OG_OK;
        }
        if (!g_cache[i]) slot = slot == OG_ANN_CACHE_ENTRIES ? i : slot;
    }
    if (slot == OG_ANN_CACHE_ENTRIES) /* evict the least recently used unreferenced index */
        for (size_t i = 0; i < OG_ANN_CACHE_ENTRIES; i++)
            if (g_cache[i]->refs == 0 && (slot == OG_ANN_CACHE_ENTRIES || g_cache[i]->last_use < g_cache[slot]->last_use))
                slot = i;
    if (slot < OG_ANN_CACHE_ENTRIES) {
        og_ann *old = g_cache[slot];
        if (old) {
            old->cached = 0;
            og_ann_free(old);
        }
        a->cached = 1;
        a->refs = 1;
        a->last_use = ++g_clock;
        g_cache[slot] = a;
    }
    pthread_mutex_unlock(&g_lock);
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
