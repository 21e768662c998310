/*
 * topology.c — CSR/CSC adjacency and BFS reachability.  See topology.h.
 *
 * Build is two counting passes (degrees, then prefix sums and a stable scatter), O(V + E).
 * Reachability keeps the visited nodes of one traversal in an og_visit_set (a small hash set,
 * a bitmap past 1/64 of the nodes) emptied through the BFS queue afterwards, so a new source
 * costs what it visits, not the node count (engine/visit_set.h).
 */
#include "engine/topology.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/rowmap.h"
#include "index/csr.h"
#include "util/error.h"
#include "util/hugepage.h"

struct og_topology {
    uint32_t n_src, n_dst;
    size_t n_edges; /* live edges in the index */
    uint64_t *off[2];      /* [OUT] n_src+1, [IN] n_dst+1 */
    uint32_t *nbr[2];      /* neighbour rows */
    uint32_t *edge[2];     /* edge rows */
    void (*release)(void *); /* non-NULL: the arrays are borrowed (a mapped file) */
    void *hold;
    /* Composed (og_topology_compose): off/nbr/edge are NULL; the base's rows are translated
     * through the row maps, and the patch (sorted node rows pnode with their entries from
     * poff) adds what the base cannot say, per side. */
    og_topology *base;
    og_rowmap *map[2]; /* [OUT] source rows, [IN] destination rows (one map when shared) */
    og_rowmap *emap;
    int fast; /* every map is the identity: a node without patch entries reads the base */
    int edges_follow_nodes; /* every gone edge has a gone endpoint: reaches check nodes only */
    uint32_t *pnode[2], *pnbr[2], *pedge[2];
    size_t *poff[2], pn[2];
    /* Reusable BFS scratch (og_topology_reach_get/put): a visited set that went dense is a
     * bitmap of the nodes, which a query should not allocate and fault in again each time. */
    pthread_mutex_t pool_lock;
    og_reach *pool[OG_TOPOLOGY_POOL];
    size_t npool;
    /* og_topology_simple per side, decided on first ask: 0 not yet, 1 simple, 2 not */
    atomic_int simple[2];
    /* og_topology_read_by_pread: lists are read from rfd (file offset = array address - rbase)
     * into a pooled scratch's read cache; serial names this topology in those caches */
    int by_pread, rfd;
    const uint8_t *rbase;
    uint64_t serial;
    /* og_topology_on_bulk: told once, when a reader first goes to the mapping */
    void (*on_bulk)(void *ctx);
    void *on_bulk_ctx;
    atomic_int bulk_told;
};

/* Tells t's on_bulk hook (once) that a reader uses its mapping. */
static void bulk_reader(const og_topology *ct)
{
    og_topology *t = (og_topology *)(uintptr_t)ct; /* (the flag only) */
    /* a plain load first: a traversal over the mapping asks once per list read */
    if (t->on_bulk && !atomic_load_explicit(&t->bulk_told, memory_order_relaxed) && !atomic_exchange(&t->bulk_told, 1))
        t->on_bulk(t->on_bulk_ctx);
}

void og_topology_bulk_read(const og_topology *t) { bulk_reader(t); }

void og_topology_on_bulk(og_topology *t, void (*fn)(void *ctx), void *ctx)
{
    t->on_bulk = fn;
    t->on_bulk_ctx = ctx;
}

static atomic_uint_fast64_t next_serial = 1;

static void pool_init(og_topology *t)
{
    pthread_mutex_init(&t->pool_lock, NULL);
    t->serial = atomic_fetch_add(&next_serial, 1);
}

static void pool_free(og_topology *t)
{
    for (size_t i = 0; i < t->npool; i++) {
        og_reach_free(t->pool[i]);
        free(t->pool[i]);
    }
    pthread_mutex_destroy(&t->pool_lock);
}

og_reach *og_topology_reach_get(const og_topology *ct)
{
    og_topology *t = (og_topology *)(uintptr_t)ct; /* only the pool changes */
    og_reach *r = NULL;
    pthread_mutex_lock(&t->pool_lock);
    if (t->npool) r = t->pool[--t->npool];
    pthread_mutex_unlock(&t->pool_lock);
    if (!r && (r = malloc(sizeof *r)) != NULL) og_reach_init(r);
    if (r) {
        r->len = 0;
        r->rc_on = 1;
        if (r->rc.full) og_wordcache_clear(&r->rc); /* a large read filled it: a new query starts afresh */
    }
    return r;
}

void og_topology_reach_put(const og_topology *ct, og_reach *r)
{
    if (!r) return;
    og_topology *t = (og_topology *)(uintptr_t)ct;
    pthread_mutex_lock(&t->pool_lock);
    if (t->npool < sizeof t->pool / sizeof t->pool[0]) {
        t->pool[t->npool++] = r;
        r = NULL;
    }
    pthread_mutex_unlock(&t->pool_lock);
    if (r) {
        og_reach_free(r);
        free(r);
    }
}

static int edge_live(const uint8_t *live, size_t i) { return !live || ((live[i >> 3] >> (i & 7)) & 1); }

static og_status build_side(og_topology *t, int side, uint32_t n_nodes, const uint32_t *key, const uint32_t *other,
                            size_t n_edges, const uint8_t *live)
{
    uint64_t *off = calloc((size_t)n_nodes + 1, sizeof *off);
    uint32_t *nbr = malloc((t->n_edges ? t->n_edges : 1) * sizeof *nbr);
    uint32_t *edg = malloc((t->n_edges ? t->n_edges : 1) * sizeof *edg);
    if (!off || !nbr || !edg) {
        free(off), free(nbr), free(edg);
        return og_err(OG_ERR_NOMEM, "out of memory building a topology of %zu edges", t->n_edges);
    }
    for (size_t i = 0; i < n_edges; i++)
        if (edge_live(live, i) && key[i] != OG_ROW_NONE && other[i] != OG_ROW_NONE) off[key[i] + 1]++;
    for (uint32_t v = 0; v < n_nodes; v++) off[v + 1] += off[v];
    uint64_t *fill = malloc(((size_t)n_nodes + 1) * sizeof *fill);
    if (!fill) {
        free(off), free(nbr), free(edg);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    memcpy(fill, off, ((size_t)n_nodes + 1) * sizeof *fill);
    for (size_t i = 0; i < n_edges; i++) {
        if (!edge_live(live, i) || key[i] == OG_ROW_NONE || other[i] == OG_ROW_NONE) continue;
        uint64_t at = fill[key[i]]++;
        nbr[at] = other[i];
        edg[at] = (uint32_t)i;
    }
    free(fill);
    t->off[side] = off;
    t->nbr[side] = nbr;
    t->edge[side] = edg;
    return OG_OK;
}

/* Edges from which og_topology_build builds its two sides on two threads. */
#define SIDES_APART_EDGES ((size_t)1 << 20)

typedef struct side_job {
    og_topology *t;
    int side;
    uint32_t n_nodes;
    const uint32_t *key, *other;
    size_t n_edges;
    const uint8_t *live;
    og_status st;
    char msg[256]; /* its failure's message (a thread's last error does not travel) */
} side_job;

static void *side_main(void *arg)
{
    side_job *j = arg;
    j->st = build_side(j->t, j->side, j->n_nodes, j->key, j->other, j->n_edges, j->live);
    if (j->st != OG_OK) {
        snprintf(j->msg, sizeof j->msg, "%s", og_error_message());
        og_error_clear();
    }
    return NULL;
}

og_status og_topology_build(og_topology **out, uint32_t n_src_nodes, uint32_t n_dst_nodes, const uint32_t *src_row,
                            const uint32_t *dst_row, size_t n_edges, const uint8_t *live)
{
    *out = NULL;
    if (n_edges >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "edge table of %zu rows is too large for one topology", n_edges);
    og_topology *t = calloc(1, sizeof *t);
    if (!t) return og_err(OG_ERR_NOMEM, "out of memory");
    t->n_src = n_src_nodes;
    t->n_dst = n_dst_nodes;
    pool_init(t);
    for (size_t i = 0; i < n_edges; i++) {
        if (!edge_live(live, i) || src_row[i] == OG_ROW_NONE || dst_row[i] == OG_ROW_NONE) continue;
        if (src_row[i] >= n_src_nodes || dst_row[i] >= n_dst_nodes) {
            pool_free(t);
            free(t);
            return og_err(OG_ERR_INTERNAL, "edge row %zu names node row %u/%u outside %u/%u nodes", i, src_row[i],
                          dst_row[i], n_src_nodes, n_dst_nodes);
        }
        t->n_edges++;
    }
    side_job oj = {t, OG_DIR_OUT, n_src_nodes, src_row, dst_row, n_edges, live, OG_OK, ""};
    pthread_t th;
    /* the two sides are independent: a big one's out side on a thread of its own (each side's
     * two passes over the edges were most of a 25M-edge load's topology build) */
    int threaded = n_edges >= SIDES_APART_EDGES && pthread_create(&th, NULL, side_main, &oj) == 0;
    if (!threaded) side_main(&oj);
    og_status st = build_side(t, OG_DIR_IN, n_dst_nodes, dst_row, src_row, n_edges, live);
    if (threaded) pthread_join(th, NULL);
    if (st == OG_OK && oj.st != OG_OK) st = og_err(oj.st, "%s", oj.msg);
    if (st != OG_OK) {
        og_topology_free(t);
        return st;
    }
    *out = t;
    return OG_OK;
}

/* og_topology_put_rows' pieces: the header, the two offset arrays, then each side's neighbour
 * and edge sections scattered one at a time into one buffer, then the trailer.  The rows are
 * arrays, or files read ROWS_CHUNK rows at a time (og_topology_put_files). */
#define ROWS_CHUNK 16384

typedef struct csr_stream {
    uint32_t n_node[2];
    const uint32_t *row[2]; /* [0] src, [1] dst; NULL: read from fd */
    int fd[2];
    size_t n_rows, n_edges;
    uint64_t *off[2];       /* the offset sections; once written, narrowed in place to off32 */
    uint32_t *off32[2];
    uint32_t *cur, *buf;
    int stage;
    atomic_int failed;      /* a read of the rows failed (errno in read_errno) */
    int read_errno;
    uint8_t head[OG_CSR_HEADER_BYTES], tail[OG_CSR_TRAILER_BYTES];
} csr_stream;

/* Rows [i0, i0 + n) of side k (n <= ROWS_CHUNK): the array's, or read into buf; NULL when the
 * read failed (s->failed). */
static const uint32_t *rows_get(csr_stream *s, int k, size_t i0, size_t n, uint32_t *buf)
{
    if (s->row[k]) return s->row[k] + i0;
    char *q = (char *)buf;
    size_t len = n * sizeof *buf;
    off_t at = (off_t)(i0 * sizeof *buf);
    while (len) {
        ssize_t r = pread(s->fd[k], q, len, at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (!atomic_exchange(&s->failed, 1)) s->read_errno = r < 0 ? errno : EIO;
            return NULL;
        }
        q += r, len -= (size_t)r, at += r;
    }
    return buf;
}

#define SCATTER_AHEAD 32

/* The part of a section one thread scatters: the edges whose key node is in [lo, hi). */
typedef struct scatter_part {
    csr_stream *s;
    int side, what;
    uint32_t lo, hi;
    uint32_t kbuf[ROWS_CHUNK], obuf[ROWS_CHUNK]; /* rows read from files */
} scatter_part;

static void *scatter_part_run(void *arg)
{
    scatter_part *p = arg;
    csr_stream *s = p->s;
    uint32_t *cur = s->cur, *buf = s->buf;
    for (uint32_t v = p->lo; v < p->hi; v++) cur[v] = s->off32[p->side][v];
    /* SCATTER_AHEAD places found before any is written, each prefetched: a side keyed at random
     * (the destinations) misses the cache on both cur and buf, and those misses then overlap */
    uint32_t at[SCATTER_AHEAD], val[SCATTER_AHEAD];
    for (size_t c0 = 0; c0 < s->n_rows; c0 += ROWS_CHUNK) {
        size_t n = s->n_rows - c0 < ROWS_CHUNK ? s->n_rows - c0 : ROWS_CHUNK;
        const uint32_t *key = rows_get(s, p->side, c0, n, p->kbuf), *other = rows_get(s, !p->side, c0, n, p->obuf);
        if (!key || !other) return NULL;
        size_t i = 0;
        while (i < n) {
            size_t m = 0;
            for (; i < n && m < SCATTER_AHEAD; i++) {
                if (i + SCATTER_AHEAD < n)
                    __builtin_prefetch(&cur[key[i + SCATTER_AHEAD] < p->hi ? key[i + SCATTER_AHEAD] : p->lo], 1);
                uint32_t k = key[i];
                if (k < p->lo || k >= p->hi || other[i] == OG_ROW_NONE) continue; /* (OG_ROW_NONE is >= hi) */
                at[m] = cur[k]++;
                val[m] = p->what ? (uint32_t)(c0 + i) : other[i];
                __builtin_prefetch(&buf[at[m]], 1);
                m++;
            }
            for (size_t j = 0; j < m; j++) buf[at[j]] = val[j];
        }
    }
    return NULL;
}

/* Section `what` (0: neighbours, 1: edge rows) of side `side` into s->buf, as build_side's
 * stable scatter places them: from SIDES_APART_EDGES edges, on two threads, each the lists of
 * half the nodes (a destination side's writes land at random: ~1.7 s a pass at 50M edges on
 * one thread). */
static void stream_scatter(csr_stream *s, int side, int what)
{
    uint32_t n = s->n_node[side];
    scatter_part *a = malloc(2 * sizeof *a);
    if (!a) {
        if (!atomic_exchange(&s->failed, 1)) s->read_errno = ENOMEM;
        return;
    }
    scatter_part *b = a + 1;
    a->s = b->s = s;
    a->side = b->side = side;
    a->what = b->what = what;
    a->lo = 0, a->hi = n;
    pthread_t th;
    int two = s->n_rows >= SIDES_APART_EDGES && n > 1;
    if (two) a->hi = b->lo = n / 2, b->hi = n;
    if (two && pthread_create(&th, NULL, scatter_part_run, b) != 0) two = 0, a->hi = n;
    scatter_part_run(a);
    if (two) pthread_join(th, NULL);
    free(a);
}

/* Once the offset sections are written, the scatters need them as 32-bit cursors only (edges
 * < 2^32): each array is narrowed in place and shrunk to half (80 MB less at 10M nodes). */
static void narrow_offsets(csr_stream *s)
{
    for (int side = 0; side < 2; side++) {
        size_t n = (size_t)s->n_node[side] + 1;
        unsigned char *b = (unsigned char *)s->off[side];
        for (size_t v = 0; v < n; v++) { /* entry v's 4 bytes end before entry v + 1's 8 start */
            uint64_t x;
            memcpy(&x, b + 8 * v, 8);
            uint32_t y = (uint32_t)x;
            memcpy(b + 4 * v, &y, 4);
        }
        uint32_t *o = (uint32_t *)(void *)b;
        s->off[side] = NULL;
        uint32_t *shrunk = realloc(o, n * sizeof *o);
        s->off32[side] = shrunk ? shrunk : o;
    }
}

static og_status stream_fill(void *ctx, const void **data, size_t *len)
{
    csr_stream *s = ctx;
    *data = NULL;
    *len = 0;
    while (!*len && s->stage < 8) {
        int st = s->stage++;
        if (st == 0) *data = s->head, *len = sizeof s->head;
        else if (st <= 2) *data = s->off[st - 1], *len = ((size_t)s->n_node[st - 1] + 1) * sizeof(uint64_t);
        else if (st <= 6) {
            if (st == 3) narrow_offsets(s);
            if (!s->n_edges) continue;
            stream_scatter(s, st >= 5, st == 4 || st == 6);
            *data = s->buf, *len = s->n_edges * sizeof(uint32_t);
        } else {
            *data = s->tail, *len = sizeof s->tail;
        }
    }
    if (atomic_load(&s->failed)) return og_err_errno(s->read_errno, "topology: reading its edges' endpoint rows");
    return OG_OK;
}

static og_status put_stream(og_store *st, const char *key, csr_stream *s, size_t n_edges)
{
    if (n_edges >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "edge table of %zu rows is too large for one topology", n_edges);
    s->n_rows = n_edges;
    uint32_t n_src_nodes = s->n_node[0], n_dst_nodes = s->n_node[1];
    s->off[0] = calloc((size_t)n_src_nodes + 1, sizeof *s->off[0]);
    s->off[1] = calloc((size_t)n_dst_nodes + 1, sizeof *s->off[1]);
    uint32_t most = n_src_nodes > n_dst_nodes ? n_src_nodes : n_dst_nodes;
    s->cur = malloc(((size_t)most + 1) * sizeof *s->cur);
    if (s->cur) og_huge_hint(s->cur, ((size_t)most + 1) * sizeof *s->cur);
    uint32_t *bufs = malloc(2 * ROWS_CHUNK * sizeof *bufs);
    og_status rc = OG_OK;
    if (!s->off[0] || !s->off[1] || !s->cur || !bufs)
        rc = og_err(OG_ERR_NOMEM, "out of memory writing a topology of %zu edges", n_edges);
    for (size_t c0 = 0; rc == OG_OK && c0 < n_edges; c0 += ROWS_CHUNK) {
        size_t n = n_edges - c0 < ROWS_CHUNK ? n_edges - c0 : ROWS_CHUNK;
        const uint32_t *src = rows_get(s, 0, c0, n, bufs), *dst = rows_get(s, 1, c0, n, bufs + ROWS_CHUNK);
        if (!src || !dst) {
            rc = og_err_errno(s->read_errno, "topology: reading its edges' endpoint rows");
            break;
        }
        for (size_t i = 0; i < n; i++) {
            if (src[i] == OG_ROW_NONE || dst[i] == OG_ROW_NONE) continue;
            if (src[i] >= n_src_nodes || dst[i] >= n_dst_nodes) {
                rc = og_err(OG_ERR_INTERNAL, "edge row %zu names node row %u/%u outside %u/%u nodes", c0 + i, src[i], dst[i],
                            n_src_nodes, n_dst_nodes);
                break;
            }
            s->off[0][src[i] + 1]++;
            s->off[1][dst[i] + 1]++;
            s->n_edges++;
        }
    }
    free(bufs);
    for (int side = 0; rc == OG_OK && side < 2; side++)
        for (uint32_t v = 0; v < s->n_node[side]; v++) s->off[side][v + 1] += s->off[side][v];
    if (rc == OG_OK && s->n_edges && !(s->buf = malloc(s->n_edges * sizeof *s->buf)))
        rc = og_err(OG_ERR_NOMEM, "out of memory writing a topology of %zu edges", n_edges);
    if (s->buf) og_huge_hint(s->buf, s->n_edges * sizeof *s->buf); /* written at random */
    size_t total;
    og_csr_arrays a = {.n_src = n_src_nodes, .n_dst = n_dst_nodes, .n_edges = s->n_edges, .edge_rows = n_edges};
    if (rc == OG_OK) rc = og_csr_head(&a, s->head, &total);
    og_csr_tail(s->tail);
    if (rc == OG_OK) rc = og_store_put_if_absent_stream(st, key, stream_fill, s);
    for (int side = 0; side < 2; side++) {
        free(s->off[side]);
        free(s->off32[side]);
    }
    free(s->cur);
    free(s->buf);
    return rc;
}

og_status og_topology_put_rows(og_store *st, const char *key, uint32_t n_src_nodes, uint32_t n_dst_nodes,
                               const uint32_t *src_row, const uint32_t *dst_row, size_t n_edges)
{
    csr_stream s;
    memset(&s, 0, sizeof s);
    s.n_node[0] = n_src_nodes, s.n_node[1] = n_dst_nodes;
    s.row[0] = src_row, s.row[1] = dst_row;
    s.fd[0] = s.fd[1] = -1;
    return put_stream(st, key, &s, n_edges);
}

og_status og_topology_put_files(og_store *st, const char *key, uint32_t n_src_nodes, uint32_t n_dst_nodes, const int fd[2],
                                size_t n_edges)
{
    csr_stream s;
    memset(&s, 0, sizeof s);
    s.n_node[0] = n_src_nodes, s.n_node[1] = n_dst_nodes;
    s.fd[0] = fd[0], s.fd[1] = fd[1];
    return put_stream(st, key, &s, n_edges);
}

og_status og_topology_wrap(og_topology **out, uint32_t n_src_nodes, uint32_t n_dst_nodes, size_t n_edges,
                           const uint64_t *const off[2], const uint32_t *const nbr[2], const uint32_t *const edge[2],
                           void (*release)(void *hold), void *hold)
{
    *out = NULL;
    og_topology *t = calloc(1, sizeof *t);
    if (!t) return og_err(OG_ERR_NOMEM, "out of memory");
    t->n_src = n_src_nodes;
    t->n_dst = n_dst_nodes;
    t->n_edges = n_edges;
    pool_init(t);
    for (int s = 0; s < 2; s++) {
        /* never written through: a wrapped topology is freed by release(), not free() */
        t->off[s] = (uint64_t *)(uintptr_t)off[s];
        t->nbr[s] = (uint32_t *)(uintptr_t)nbr[s];
        t->edge[s] = (uint32_t *)(uintptr_t)edge[s];
    }
    t->release = release;
    t->hold = hold;
    *out = t;
    return OG_OK;
}

void og_topology_arrays(const og_topology *t, uint32_t *n_src, uint32_t *n_dst, const uint64_t *off[2],
                        const uint32_t *nbr[2], const uint32_t *edge[2])
{
    *n_src = t->n_src;
    *n_dst = t->n_dst;
    for (int s = 0; s < 2; s++) { /* (NULL for a composed one) */
        off[s] = t->off[s];
        nbr[s] = t->nbr[s];
        edge[s] = t->edge[s];
    }
}

void og_topology_free(og_topology *t)
{
    if (!t) return;
    pool_free(t);
    if (t->base) {
        og_topology_free(t->base);
        if (t->map[1] != t->map[0]) og_rowmap_free(t->map[1]);
        og_rowmap_free(t->map[0]);
        og_rowmap_free(t->emap);
        for (int s = 0; s < 2; s++) free(t->pnode[s]), free(t->pnbr[s]), free(t->pedge[s]), free(t->poff[s]);
        free(t);
        return;
    }
    if (t->release) {
        t->release(t->hold);
        free(t);
        return;
    }
    for (int s = 0; s < 2; s++) {
        free(t->off[s]);
        free(t->nbr[s]);
        free(t->edge[s]);
    }
    free(t);
}

size_t og_topology_edge_count(const og_topology *t) { return t->n_edges; }

/* One pass over the side's lists with a stamp per neighbour node (the node whose list saw it
 * last): a repeat, a neighbour outside the range or offsets out of order make it not simple. */
static int side_simple(const og_topology *t, int s)
{
    uint32_t n_from = s ? t->n_dst : t->n_src, n_to = s ? t->n_src : t->n_dst;
    const uint64_t *off = t->off[s];
    const uint32_t *nbr = t->nbr[s];
    bulk_reader(t);
    uint32_t *seen = calloc(n_to ? n_to : 1, sizeof *seen);
    if (!seen) return 0;
    int ok = 1;
    for (uint32_t v = 0; v < n_from && ok; v++) {
        uint64_t b = off[v], e = off[v + 1];
        if (e < b || e > t->n_edges) ok = 0;
        for (uint64_t k = b; ok && k < e; k++) {
            uint32_t w = nbr[k];
            if (w >= n_to || seen[w] == v + 1) ok = 0;
            else seen[w] = v + 1;
        }
    }
    free(seen);
    return ok ? 1 : 2;
}

int og_topology_simple(const og_topology *tc, og_dir dir)
{
    og_topology *t = (og_topology *)(uintptr_t)tc; /* the answer is a cache: kept in place */
    if (dir == OG_DIR_BOTH) return 0;
    int s = dir == OG_DIR_IN;
    if (!t->off[s] || !t->nbr[s]) return 0; /* composed: lists are assembled per node */
    int v = atomic_load(&t->simple[s]);
    if (!v) { /* two readers may both decide it: the same answer */
        v = side_simple(t, s);
        if (v == 0) return 0;
        atomic_store(&t->simple[s], v);
    }
    return v == 1;
}

int og_topology_simple_known(const og_topology *t, og_dir dir)
{
    if (dir == OG_DIR_BOTH) return 0;
    return atomic_load(&((og_topology *)(uintptr_t)t)->simple[dir == OG_DIR_IN]) == 1;
}

/* ---- the read cache of a topology read by pread (og_topology_read_by_pread) ---------------- */

void og_topology_read_by_pread(og_topology *t, int fd, const void *base)
{
    if (!t || t->base || fd < 0 || !base) return;
    t->rfd = fd;
    t->rbase = base;
    t->by_pread = 1;
}

int og_topology_reads_by_pread(const og_topology *t) { return t->by_pread || (t->base && t->base->by_pread); }

/* Node `node`'s list on side s (node in range) from r's read cache, read with pread on a miss.
 * 0 when the cache cannot answer (not a pooled scratch, full, a failed read): read the mapping. */
static int cached_edges(const og_topology *t, int s, uint32_t node, int with_edges, og_reach *r,
                        const uint32_t **neighbours, const uint32_t **edges, size_t *n)
{
    if (!r->rc_on) return 0;
    if (r->rc_owner != t->serial) {
        og_wordcache_clear(&r->rc);
        r->rc_owner = t->serial;
    }
    uint64_t key = ((uint64_t)node << 2) | ((uint64_t)s << 1) | (uint64_t)with_edges;
    uint32_t k32;
    const uint32_t *hit = og_wordcache_find(&r->rc, key, &k32);
    if (hit) {
        *neighbours = hit;
        *edges = with_edges ? hit + k32 : NULL;
        *n = k32;
        return 1;
    }
    if (r->rc.full) return 0;
    uint64_t be[2];
    if (!og_pread_full(t->rfd, be, sizeof be, (uint64_t)((const uint8_t *)&t->off[s][node] - t->rbase))) return 0;
    uint64_t b = be[0], e = be[1];
    if (e > t->n_edges) e = t->n_edges; /* (a damaged index file, as below) */
    if (b > e) b = e;
    size_t k = (size_t)(e - b), need = with_edges ? 2 * k : k;
    if (!og_wordcache_reserve(&r->rc, need)) return 0; /* a large traversal: the rest of it reads the mapping */
    uint32_t *list = r->rc.arena + r->rc.len;
    if (k && (!og_pread_full(t->rfd, list, k * 4, (uint64_t)((const uint8_t *)(t->nbr[s] + b) - t->rbase)) ||
              (with_edges && !og_pread_full(t->rfd, list + k, k * 4, (uint64_t)((const uint8_t *)(t->edge[s] + b) - t->rbase)))))
        return 0;
    og_wordcache_add(&r->rc, key, need, (uint32_t)k);
    *neighbours = list;
    *edges = with_edges ? list + k : NULL;
    *n = k;
    return 1;
}

/* The base's entries of node `v` on side s: plain arrays, or r's read cache when t reads by
 * pread (edges wanted only when with_edges; else *edges may be NULL). */
static void plain_edges(const og_topology *t, int s, uint32_t node, og_reach *r, int with_edges,
                        const uint32_t **neighbours, const uint32_t **edges, size_t *n)
{
    uint32_t limit = s ? t->n_dst : t->n_src;
    if (node >= limit) {
        *neighbours = NULL;
        *edges = NULL;
        *n = 0;
        return;
    }
    if (t->by_pread && r && cached_edges(t, s, node, with_edges, r, neighbours, edges, n)) return;
    if (t->on_bulk) bulk_reader(t);
    uint64_t b = t->off[s][node], e = t->off[s][node + 1];
    if (e > t->n_edges) e = t->n_edges; /* (a damaged index file) */
    if (b > e) b = e;
    *neighbours = t->nbr[s] + b;
    *edges = t->edge[s] + b;
    *n = (size_t)(e - b);
}

static og_status grow_scratch(og_reach *r, size_t need)
{
    if (r->adj_cap >= need) return OG_OK;
    size_t nc = r->adj_cap ? r->adj_cap : 64;
    while (nc < need) nc *= 2;
    uint32_t *a = realloc(r->adj, 2 * nc * sizeof *a);
    if (!a) return og_err(OG_ERR_NOMEM, "out of memory");
    r->adj = a, r->adj_cap = nc;
    return OG_OK;
}

/* The patch's entries of node v on side s: [*lo, *hi) (empty when it has none). */
static void patch_range(const og_topology *t, int s, uint32_t v, size_t *lo, size_t *hi)
{
    size_t a = 0, b = t->pn[s];
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (t->pnode[s][mid] < v) a = mid + 1;
        else b = mid;
    }
    *lo = *hi = 0;
    if (a < t->pn[s] && t->pnode[s][a] == v) *lo = t->poff[s][a], *hi = t->poff[s][a + 1];
}

/* A composed topology's entries of node `v` on side s: the base's (when v was a row of it)
 * translated — an entry whose edge or neighbour is gone is dropped — merged by edge row with
 * the patch's.  Borrowed from the base or the patch when one side alone answers, else built
 * in r's scratch. */
static og_status composed_edges(const og_topology *t, int s, uint32_t v, og_reach *r, const uint32_t **nb,
                                const uint32_t **ed, size_t *n)
{
    *nb = *ed = NULL;
    *n = 0;
    if (v >= (s ? t->n_dst : t->n_src)) return OG_OK;
    size_t plo, phi;
    patch_range(t, s, v, &plo, &phi);
    const uint32_t *bnb = NULL, *bed = NULL;
    size_t bn = 0;
    uint32_t old = og_rowmap_back(t->map[s], v);
    if (old != UINT32_MAX) plain_edges(t->base, s, old, r, 1, &bnb, &bed, &bn);
    if (!bn || (t->fast && plo == phi)) {
        if (bn) {
            *nb = bnb, *ed = bed, *n = bn;
        } else {
            *nb = t->pnbr[s] ? t->pnbr[s] + plo : NULL, *ed = t->pedge[s] ? t->pedge[s] + plo : NULL;
            *n = phi - plo;
        }
        return OG_OK;
    }
    if (!r) return og_err(OG_ERR_INTERNAL, "a composed topology read without scratch");
    size_t np = phi - plo;
    OG_TRY(grow_scratch(r, 2 * (bn + np)));
    /* translated base entries at [0, k), the merge after them */
    uint32_t *tnb = r->adj, *ted = r->adj + bn, *onb = r->adj + 2 * bn, *oed = onb + bn + np;
    size_t k = 0;
    const og_rowmap *other = t->map[1 - s];
    for (size_t i = 0; i < bn; i++) {
        uint32_t e = og_rowmap_fwd(t->emap, bed[i]);
        if (e == UINT32_MAX) continue;
        uint32_t w = og_rowmap_fwd(other, bnb[i]);
        if (w == UINT32_MAX) continue; /* a moved neighbour: the patch has the edge */
        tnb[k] = w, ted[k] = e, k++;
    }
    size_t i = 0, j = plo, o = 0;
    while (i < k || j < phi) {
        if (j == phi || (i < k && ted[i] < t->pedge[s][j])) onb[o] = tnb[i], oed[o++] = ted[i++];
        else onb[o] = t->pnbr[s][j], oed[o++] = t->pedge[s][j++];
    }
    *nb = onb, *ed = oed, *n = o;
    return OG_OK;
}

/* composed_edges without the edge rows, for reachability: when every gone edge has a gone
 * endpoint and v has no patch entries, the base's edge rows need not be read at all (they are
 * a second array, and a second cache miss per entry). */
static og_status composed_neighbours(const og_topology *t, int s, uint32_t v, og_reach *r, const uint32_t **nb,
                                     size_t *n)
{
    const uint32_t *ed;
    if (!t->edges_follow_nodes || t->fast || v >= (s ? t->n_dst : t->n_src))
        return composed_edges(t, s, v, r, nb, &ed, n);
    size_t plo, phi;
    patch_range(t, s, v, &plo, &phi);
    if (plo != phi) return composed_edges(t, s, v, r, nb, &ed, n); /* a merge */
    *nb = NULL;
    *n = 0;
    uint32_t old = og_rowmap_back(t->map[s], v);
    if (old == UINT32_MAX) return OG_OK;
    const uint32_t *bnb, *bed;
    size_t bn;
    plain_edges(t->base, s, old, r, 0, &bnb, &bed, &bn);
    const og_rowmap *other = t->map[1 - s];
    if (og_rowmap_is_identity(other)) { /* nothing gone on the other side: nothing to drop */
        *nb = bnb, *n = bn;
        return OG_OK;
    }
    OG_TRY(grow_scratch(r, bn));
    size_t k = 0;
    for (size_t i = 0; i < bn; i++) {
        uint32_t w = og_rowmap_fwd(other, bnb[i]);
        if (w != UINT32_MAX) r->adj[k++] = w;
    }
    *nb = r->adj, *n = k;
    return OG_OK;
}

og_status og_topology_edges(const og_topology *t, og_dir dir, uint32_t node, og_reach *scratch,
                            const uint32_t **neighbours, const uint32_t **edges, size_t *n)
{
    int s = dir == OG_DIR_IN ? 1 : 0;
    if (t->base) return composed_edges(t, s, node, scratch, neighbours, edges, n);
    plain_edges(t, s, node, scratch, 1, neighbours, edges, n);
    return OG_OK;
}

int og_topology_is_composed(const og_topology *t) { return t->base != NULL; }

typedef struct patch_entry {
    uint32_t key, other, edge;
} patch_entry;

static int cmp_patch(const void *a, const void *b)
{
    const patch_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->edge < y->edge ? -1 : x->edge > y->edge;
}

/* One side of the patch: entries keyed by `key`, sorted by (node, edge row). */
static og_status patch_side(og_topology *t, int s, const uint32_t *key, const uint32_t *other, const uint32_t *edge,
                            size_t np)
{
    patch_entry *pe = malloc((np ? np : 1) * sizeof *pe);
    t->pnbr[s] = malloc((np ? np : 1) * sizeof *t->pnbr[s]);
    t->pedge[s] = malloc((np ? np : 1) * sizeof *t->pedge[s]);
    t->pnode[s] = malloc((np ? np : 1) * sizeof *t->pnode[s]);
    t->poff[s] = malloc((np + 1) * sizeof *t->poff[s]);
    if (!pe || !t->pnbr[s] || !t->pedge[s] || !t->pnode[s] || !t->poff[s]) {
        free(pe);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < np; i++) pe[i] = (patch_entry){key[i], other[i], edge[i]};
    qsort(pe, np, sizeof *pe, cmp_patch);
    size_t nn = 0;
    for (size_t i = 0; i < np; i++) {
        if (!nn || t->pnode[s][nn - 1] != pe[i].key) t->poff[s][nn] = i, t->pnode[s][nn++] = pe[i].key;
        t->pnbr[s][i] = pe[i].other;
        t->pedge[s][i] = pe[i].edge;
    }
    t->poff[s][nn] = np;
    t->pn[s] = nn;
    free(pe);
    return OG_OK;
}

og_status og_topology_compose(og_topology **out, og_topology *base, og_rowmap *src_map, og_rowmap *dst_map,
                              og_rowmap *edge_map, int edges_follow_nodes, uint32_t n_src_nodes, uint32_t n_dst_nodes,
                              size_t n_edges, const uint32_t *p_src, const uint32_t *p_dst, const uint32_t *p_edge,
                              size_t n_patch)
{
    *out = NULL;
    og_topology *t = calloc(1, sizeof *t);
    og_status st = t ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == OG_OK && i < n_patch; i++)
        if (p_src[i] >= n_src_nodes || p_dst[i] >= n_dst_nodes)
            st = og_err(OG_ERR_INTERNAL, "patch entry %zu names node row %u/%u outside %u/%u nodes", i, p_src[i],
                        p_dst[i], n_src_nodes, n_dst_nodes);
    if (st == OG_OK && !og_rowmap_is_monotone(edge_map))
        st = og_err(OG_ERR_INTERNAL, "a composed topology needs edge rows in their old order");
    if (st != OG_OK) {
        free(t);
        og_topology_free(base);
        if (dst_map != src_map) og_rowmap_free(dst_map);
        og_rowmap_free(src_map);
        og_rowmap_free(edge_map);
        return st;
    }
    t->n_src = n_src_nodes;
    t->n_dst = n_dst_nodes;
    t->n_edges = n_edges;
    t->base = base;
    t->map[0] = src_map;
    t->map[1] = dst_map;
    t->emap = edge_map;
    t->fast = og_rowmap_is_identity(src_map) && og_rowmap_is_identity(dst_map) && og_rowmap_is_identity(edge_map);
    t->edges_follow_nodes = edges_follow_nodes || og_rowmap_gone_count(edge_map) == 0;
    pool_init(t);
    st = patch_side(t, 0, p_src, p_dst, p_edge, n_patch);
    if (st == OG_OK) st = patch_side(t, 1, p_dst, p_src, p_edge, n_patch);
    if (st != OG_OK) {
        og_topology_free(t);
        return st;
    }
    *out = t;
    return OG_OK;
}

void og_reach_init(og_reach *r)
{
    memset(r, 0, sizeof *r);
    og_wordcache_init(&r->rc, OG_TOPOLOGY_READ_CACHE);
}

void og_reach_free(og_reach *r)
{
    free(r->node);
    free(r->depth);
    og_visit_set_free(&r->visit);
    free(r->queue);
    free(r->adj);
    og_wordcache_free(&r->rc);
    memset(r, 0, sizeof *r);
}

static og_status reach_push(og_reach *r, uint32_t node, uint32_t depth)
{
    if (r->len == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 64;
        uint32_t *a = realloc(r->node, ncap * sizeof *a);
        if (!a) return og_err(OG_ERR_NOMEM, "out of memory");
        r->node = a;
        uint32_t *d = realloc(r->depth, ncap * sizeof *d);
        if (!d) return og_err(OG_ERR_NOMEM, "out of memory");
        r->depth = d;
        r->cap = ncap;
    }
    r->node[r->len] = node;
    r->depth[r->len] = depth;
    r->len++;
    return OG_OK;
}

/* Room for one more queue entry.  Reserved before a node joins the visited set, so every node
 * in the set is in the queue even when memory runs out: og_visit_set_end clears through it. */
static og_status queue_reserve(og_reach *r, size_t tail)
{
    if (tail < r->queue_cap) return OG_OK;
    size_t ncap = r->queue_cap ? r->queue_cap * 2 : 256;
    uint32_t *q = realloc(r->queue, ncap * sizeof *q);
    if (!q) return og_err(OG_ERR_NOMEM, "out of memory");
    r->queue = q;
    r->queue_cap = ncap;
    return OG_OK;
}

/* Visits the neighbours of `v` on side s at depth d, enqueueing the ones first seen. */
static og_status visit_side(const og_topology *t, int s, uint32_t v, uint32_t src, uint32_t d, uint32_t min_hops,
                            og_reach *r, size_t *tail, uint32_t n_nodes, int *src_seen)
{
    const uint32_t *nb, *ed;
    size_t n;
    if (t->base) OG_TRY(composed_neighbours(t, s, v, r, &nb, &n));
    else plain_edges(t, s, v, r, 0, &nb, &ed, &n);
    for (size_t k = 0; k < n; k++) {
        uint32_t w = nb[k];
        if (w >= n_nodes) continue; /* a damaged index file: never index outside the node range */
        int fresh;
        if (w == src) {
            /* the source is pre-visited: only a direct self-loop emits it, once (a second
             * self-loop edge finds it in the set) */
            if (d == 1 && v == src && min_hops <= 1) {
                OG_TRY(og_visit_set_add(&r->visit, w, &fresh));
                *src_seen = 1;
                if (fresh) OG_TRY(reach_push(r, w, 1));
            }
            continue;
        }
        OG_TRY(queue_reserve(r, *tail));
        OG_TRY(og_visit_set_add(&r->visit, w, &fresh));
        if (!fresh) continue;
        r->queue[(*tail)++] = w;
        if (d >= min_hops) OG_TRY(reach_push(r, w, d));
    }
    return OG_OK;
}

og_status og_topology_reach(const og_topology *t, og_dir dir, uint32_t src, uint32_t min_hops, uint32_t max_hops,
                            og_reach *r)
{
    if (min_hops < 1 || max_hops < min_hops)
        return og_err(OG_ERR_INVALID, "hop bounds {%u,%u} are invalid (need 1 <= min <= max)", min_hops, max_hops);
    if (dir == OG_DIR_BOTH && t->n_src != t->n_dst)
        return og_err(OG_ERR_INVALID, "an undirected traversal needs an edge whose endpoints are one node type");
    uint32_t n_from = dir == OG_DIR_IN ? t->n_dst : t->n_src;
    uint32_t n_nodes = t->n_src > t->n_dst ? t->n_src : t->n_dst;
    r->len = 0;
    if (r->rc.full) og_wordcache_clear(&r->rc); /* a large traversal filled it: start afresh */
    if (src >= n_from) return OG_OK;
    OG_TRY(og_visit_set_begin(&r->visit, n_nodes));
    /* The source is not in the set: the self-loop rule above needs to see it once. Any other
     * route back to it is refused by the w == src test. */
    size_t head = 0, tail = 0;
    int src_seen = 0;
    og_status st = queue_reserve(r, tail);
    if (st == OG_OK) r->queue[tail++] = src;
    uint32_t depth = 0;
    while (st == OG_OK && head < tail && depth < max_hops) {
        size_t level_end = tail;
        depth++;
        for (; head < level_end && st == OG_OK; head++) {
            uint32_t v = r->queue[head];
            if (dir == OG_DIR_OUT || dir == OG_DIR_BOTH)
                st = visit_side(t, 0, v, src, depth, min_hops, r, &tail, n_nodes, &src_seen);
            if (st == OG_OK && (dir == OG_DIR_IN || dir == OG_DIR_BOTH))
                st = visit_side(t, 1, v, src, depth, min_hops, r, &tail, n_nodes, &src_seen);
        }
    }
    /* every node added is in the queue (the source only when a self-loop added it) */
    og_visit_set_end(&r->visit, tail ? r->queue + 1 : r->queue, tail ? tail - 1 : 0, src_seen ? src : UINT32_MAX);
    return st;
}
