/*
 * csr.c — encode, name and map the persisted edge adjacency (csr.h).  The arrays are the
 * engine's in-memory topology laid out back to back, so opening one is a mapping plus a few
 * size checks: a first traversal in a new process costs page faults, not a rebuild.
 */
#include "index/csr.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

#define CSR_MAGIC "OGCSR\0\0\0"
#define CSR_TRAILER "OGCSREND"
#define CSR_HEADER 64
#define CSR_FORMAT 1

struct og_csr {
    og_mapping *m;
    int fd; /* og_csr_fd: -1 when the store has no files */
    atomic_int refs; /* the opener's, plus one per running prefault thread */
};

static void csr_unref(og_csr *c)
{
    if (atomic_fetch_sub(&c->refs, 1) == 1) {
        og_mapping_release(c->m);
        if (c->fd >= 0) og_store_close_fd(c->fd);
        free(c);
    }
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static int layout(uint64_t n_src, uint64_t n_dst, uint64_t n_edges, size_t *total)
{
    if (n_src >= UINT32_MAX || n_dst >= UINT32_MAX || n_edges >= UINT32_MAX) return -1;
    *total = CSR_HEADER + (size_t)(n_src + 1 + n_dst + 1) * 8 + pad8((size_t)n_edges * 16) + 8;
    return 0;
}

og_status og_csr_head(const og_csr_arrays *a, uint8_t out[OG_CSR_HEADER_BYTES], size_t *total)
{
    if (layout(a->n_src, a->n_dst, a->n_edges, total) != 0)
        return og_err(OG_ERR_LIMIT, "csr: %llu/%llu nodes, %llu edges are too many", (unsigned long long)a->n_src,
                      (unsigned long long)a->n_dst, (unsigned long long)a->n_edges);
    memset(out, 0, CSR_HEADER);
    memcpy(out, CSR_MAGIC, 8);
    uint32_t fmt = CSR_FORMAT;
    memcpy(out + 8, &fmt, 4);
    uint64_t h[4] = {a->n_src, a->n_dst, a->n_edges, a->edge_rows};
    memcpy(out + 16, h, sizeof h);
    return OG_OK;
}

void og_csr_tail(uint8_t out[OG_CSR_TRAILER_BYTES]) { memcpy(out, CSR_TRAILER, 8); }

og_status og_csr_encode(const og_csr_arrays *a, og_buf *out)
{
    size_t total;
    uint8_t head[CSR_HEADER];
    OG_TRY(og_csr_head(a, head, &total));
    OG_TRY(og_buf_reserve(out, total));
    uint8_t *p = out->data + out->len;
    /* (the arrays fill the rest: zeroing ~100 MB first cost ~10% of a delta build) */
    memcpy(p, head, CSR_HEADER);
    uint8_t *q = p + CSR_HEADER;
    memcpy(q, a->off[0], (size_t)(a->n_src + 1) * 8), q += (a->n_src + 1) * 8;
    memcpy(q, a->off[1], (size_t)(a->n_dst + 1) * 8), q += (a->n_dst + 1) * 8;
    size_t e4 = (size_t)a->n_edges * 4;
    if (e4) {
        memcpy(q, a->nbr[0], e4), q += e4;
        memcpy(q, a->edge[0], e4), q += e4;
        memcpy(q, a->nbr[1], e4), q += e4;
        memcpy(q, a->edge[1], e4), q += e4;
    }
    memset(q, 0, (size_t)(p + total - 8 - q)); /* padding (none today: 16 bytes per edge) */
    memcpy(p + total - 8, CSR_TRAILER, 8);
    out->len += total;
    return OG_OK;
}

og_status og_csr_store_key(char *key, size_t cap, const char *edge_dir, uint64_t ev, const char *src_dir, uint64_t sv,
                           const char *dst_dir, uint64_t dv)
{
    int w = snprintf(key, cap, "_index/%s/topology/%llu-%s-%llu-%s-%llu.csr", edge_dir, (unsigned long long)ev,
                     src_dir, (unsigned long long)sv, dst_dir, (unsigned long long)dv);
    if (w < 0 || (size_t)w >= cap) return og_err(OG_ERR_LIMIT, "csr: store key too long");
    return OG_OK;
}

og_status og_csr_parse(const uint8_t *p, size_t len, og_csr_arrays *a)
{
    memset(a, 0, sizeof *a);
    if (len < CSR_HEADER + 8 || memcmp(p, CSR_MAGIC, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "csr: not a topology file (%zu bytes)", len);
    uint32_t fmt;
    memcpy(&fmt, p + 8, 4);
    if (fmt != CSR_FORMAT) return og_err(OG_ERR_CORRUPT, "csr: format %u is not supported", fmt);
    uint64_t h[4];
    memcpy(h, p + 16, sizeof h);
    size_t total;
    if (layout(h[0], h[1], h[2], &total) != 0 || total != len || h[2] > h[3] || memcmp(p + len - 8, CSR_TRAILER, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "csr: sizes in the header do not match the file (%zu bytes)", len);
    a->n_src = h[0], a->n_dst = h[1], a->n_edges = h[2], a->edge_rows = h[3];
    const uint8_t *q = p + CSR_HEADER;
    a->off[0] = (const uint64_t *)(const void *)q, q += (h[0] + 1) * 8;
    a->off[1] = (const uint64_t *)(const void *)q, q += (h[1] + 1) * 8;
    size_t e4 = (size_t)h[2] * 4;
    a->nbr[0] = (const uint32_t *)(const void *)q, q += e4;
    a->edge[0] = (const uint32_t *)(const void *)q, q += e4;
    a->nbr[1] = (const uint32_t *)(const void *)q, q += e4;
    a->edge[1] = (const uint32_t *)(const void *)q;
    for (int s = 0; s < 2; s++) {
        uint64_t n = s ? h[1] : h[0];
        uint64_t first, last;
        memcpy(&first, &a->off[s][0], 8);
        memcpy(&last, &a->off[s][n], 8);
        if (first != 0 || last != h[2]) {
            memset(a, 0, sizeof *a);
            return og_err(OG_ERR_CORRUPT, "csr: offsets do not cover the edges");
        }
    }
    return OG_OK;
}

og_status og_csr_open(og_csr **out, og_store *st, const char *key, og_csr_arrays *a)
{
    *out = NULL;
    og_mapping *m;
    OG_TRY(og_store_map(st, key, &m));
    og_status s = og_csr_parse(og_mapping_data(m), og_mapping_size(m), a);
    og_csr *c = s == OG_OK ? malloc(sizeof *c) : NULL;
    if (s == OG_OK && !c) s = og_err(OG_ERR_NOMEM, "csr: out of memory");
    if (s != OG_OK) {
        og_mapping_release(m);
        return og_err_wrap(s, "%s", key);
    }
    c->m = m;
    c->fd = -1;
    uint64_t size;
    if (og_store_is_local(st)) { /* a hint: without it lists are read from the mapping */
        if (og_store_open_fd(st, key, &c->fd, &size) != OG_OK) og_error_clear();
        else if (size != og_mapping_size(m)) { /* replaced since: never read another file */
            og_store_close_fd(c->fd);
            c->fd = -1;
        }
    }
    atomic_init(&c->refs, 1);
    *out = c;
    return OG_OK;
}

void og_csr_free(og_csr *c)
{
    if (c) csr_unref(c);
}

/* Prefault threads are joinable and tracked: a fork must not copy one that is exiting (its
 * teardown may hold the allocator's lock, and a child that allocates would wait forever), so
 * the prepare handler joins them all, and each new thread first reaps the finished ones. */
#define PREFAULT_MAX 16
#define PREFAULT_SLICE ((size_t)1 << 20) /* bytes per madvise: the lock is released between them */
typedef struct {
    og_csr *c;
    pthread_t th;
    int used;
    atomic_int done;
} prefault_slot;
static prefault_slot pf[PREFAULT_MAX];
static pthread_mutex_t pf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pf_once = PTHREAD_ONCE_INIT;

static void pf_join_all(void) /* pf_mu held */
{
    for (int i = 0; i < PREFAULT_MAX; i++)
        if (pf[i].used) {
            pthread_join(pf[i].th, NULL);
            pf[i].used = 0;
        }
}
static void pf_prepare(void)
{
    pthread_mutex_lock(&pf_mu);
    pf_join_all();
}
static void pf_release(void) { pthread_mutex_unlock(&pf_mu); }
static void pf_init(void) { pthread_atfork(pf_prepare, pf_release, pf_release); }

/* 1 when every one of PREFAULT_PROBES pages spread over [start, start + total) is in the page
 * cache already (mincore): the file was read recently, and walking its whole range to ask for
 * it again costs CPU for nothing — at 10M nodes that walk (a 1 GB topology) was the growth of
 * a 1-hop's first call (docs/benchmarks.md "Scaling").  A cold file reads ahead as before. */
#define PREFAULT_PROBES 32
static int resident_already(uintptr_t start, size_t total)
{
    size_t pages = (total + 4095) / 4096;
    for (size_t i = 0; i < PREFAULT_PROBES && pages; i++) {
        size_t pg = pages <= PREFAULT_PROBES ? i % pages : (pages - 1) * i / (PREFAULT_PROBES - 1);
        unsigned char in = 0;
        if (mincore((void *)(start + pg * 4096), 4096, &in) != 0 || !(in & 1)) return 0;
    }
    return 1;
}

static void *prefault_main(void *arg)
{
    prefault_slot *slot = arg;
    og_csr *c = slot->c;
    const uint8_t *p = og_mapping_data(c->m);
    size_t len = og_mapping_size(c->m);
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095;
    /* MADV_WILLNEED, not MADV_POPULATE_READ: read the file into the page cache (shared,
     * evictable) without mapping every page into this process.  A traversal then takes minor
     * faults that map 16 cached pages each (fault-around; no madvise turns that off, see
     * src/store/store_local.c map_unaligned) instead of waiting for the disk, and
     * the process's RSS grows only by the pages around those it touches: populating the whole 96 MB
     * topology of the 1M-node bench graph made it two thirds of the bench query process's
     * peak RSS for no measurable warm gain (docs/benchmarks.md "Memory of the query process").
     * In 1 MB slices, so the mapping lock a call holds never stalls the querying thread's own
     * mmap/munmap for long ("Cold start"). */
    size_t total = len + ((uintptr_t)p - start);
    for (size_t off = resident_already(start, total) ? total : 0; off < total; off += PREFAULT_SLICE) {
        size_t n = total - off < PREFAULT_SLICE ? total - off : PREFAULT_SLICE;
        if (madvise((void *)(start + off), n, MADV_WILLNEED) != 0) break; /* a hint: faults as usual */
    }
    csr_unref(c);
    atomic_store(&slot->done, 1);
    return NULL;
}

void og_csr_prefault_async(og_csr *c)
{
    pthread_once(&pf_once, pf_init);
    pthread_mutex_lock(&pf_mu);
    prefault_slot *slot = NULL;
    for (int i = 0; i < PREFAULT_MAX; i++) {
        if (pf[i].used && atomic_load(&pf[i].done)) {
            pthread_join(pf[i].th, NULL);
            pf[i].used = 0;
        }
        if (!pf[i].used && !slot) slot = &pf[i];
    }
    if (slot) { /* none free: pages fault in on use, as without the hint */
        atomic_fetch_add(&c->refs, 1);
        slot->c = c;
        atomic_store(&slot->done, 0);
        if (pthread_create(&slot->th, NULL, prefault_main, slot) == 0) slot->used = 1;
        else csr_unref(c);
    }
    pthread_mutex_unlock(&pf_mu);
}

size_t og_csr_bytes(const og_csr *c) { return og_mapping_size(c->m); }
int og_csr_fd(const og_csr *c) { return c->fd; }
const uint8_t *og_csr_data(const og_csr *c) { return og_mapping_data(c->m); }
