/*
 * topology.c — CSR/CSC adjacency and BFS reachability.  See topology.h.
 *
 * Build is two counting passes (degrees, then prefix sums and a stable scatter), O(V + E).
 * Reachability reuses one stamp array per og_reach: a node is "visited" when its stamp equals
 * the current generation, so a new source costs nothing to reset.
 */
#include "engine/topology.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

struct og_topology {
    uint32_t n_src, n_dst;
    size_t n_edges; /* live edges in the index */
    uint64_t *off[2];      /* [OUT] n_src+1, [IN] n_dst+1 */
    uint32_t *nbr[2];      /* neighbour rows */
    uint32_t *edge[2];     /* edge rows */
    void (*release)(void *); /* non-NULL: the arrays are borrowed (a mapped file) */
    void *hold;
    /* Reusable BFS scratch (og_topology_reach_get/put): the visit stamps of a million nodes
     * are 4 MB, which a query should not allocate and fault in again each time. */
    pthread_mutex_t pool_lock;
    og_reach *pool[4];
    size_t npool;
};

static void pool_init(og_topology *t) { pthread_mutex_init(&t->pool_lock, NULL); }

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
    if (r) r->len = 0;
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
    og_status st = build_side(t, OG_DIR_OUT, n_src_nodes, src_row, dst_row, n_edges, live);
    if (st == OG_OK) st = build_side(t, OG_DIR_IN, n_dst_nodes, dst_row, src_row, n_edges, live);
    if (st != OG_OK) {
        og_topology_free(t);
        return st;
    }
    *out = t;
    return OG_OK;
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
    for (int s = 0; s < 2; s++) {
        off[s] = t->off[s];
        nbr[s] = t->nbr[s];
        edge[s] = t->edge[s];
    }
}

void og_topology_free(og_topology *t)
{
    if (!t) return;
    pool_free(t);
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

void og_topology_edges(const og_topology *t, og_dir dir, uint32_t node, const uint32_t **neighbours,
                       const uint32_t **edges, size_t *n)
{
    int s = dir == OG_DIR_IN ? 1 : 0;
    uint32_t limit = s ? t->n_dst : t->n_src;
    if (node >= limit) {
        *neighbours = NULL;
        *edges = NULL;
        *n = 0;
        return;
    }
    uint64_t b = t->off[s][node], e = t->off[s][node + 1];
    if (e > t->n_edges) e = t->n_edges; /* (a damaged index file) */
    if (b > e) b = e;
    *neighbours = t->nbr[s] + b;
    *edges = t->edge[s] + b;
    *n = (size_t)(e - b);
}

void og_reach_init(og_reach *r) { memset(r, 0, sizeof *r); }

void og_reach_free(og_reach *r)
{
    free(r->node);
    free(r->depth);
    free(r->stamp);
    free(r->queue);
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

/* Prepares the stamp array for `n` nodes and starts a new generation. */
static og_status reach_begin(og_reach *r, size_t n)
{
    if (r->stamp_n < n) {
        /* calloc, not realloc + memset: fresh zero pages are only faulted in where a traversal
         * stamps (and og_topology_reach_get keeps the array for the next query) */
        uint32_t *s = calloc(n, sizeof *s);
        if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
        if (r->stamp_n) memcpy(s, r->stamp, r->stamp_n * sizeof *s);
        free(r->stamp);
        r->stamp = s;
        r->stamp_n = n;
    }
    if (r->queue_cap < n) {
        uint32_t *q = realloc(r->queue, n * sizeof *q);
        if (!q) return og_err(OG_ERR_NOMEM, "out of memory");
        r->queue = q;
        r->queue_cap = n;
    }
    if (++r->stamp_gen == 0) { /* wrapped: clear and restart */
        memset(r->stamp, 0, r->stamp_n * sizeof *r->stamp);
        r->stamp_gen = 1;
    }
    r->len = 0;
    return OG_OK;
}

/* Visits the neighbours of `v` on side s at depth d; returns how many were enqueued. */
static og_status visit_side(const og_topology *t, int s, uint32_t v, uint32_t src, uint32_t d, uint32_t min_hops,
                            og_reach *r, size_t *tail)
{
    uint64_t b = t->off[s][v], e = t->off[s][v + 1];
    if (e > t->n_edges) e = t->n_edges; /* (a damaged index file) */
    for (uint64_t k = b; k < e; k++) {
        uint32_t w = t->nbr[s][k];
        if (w >= r->stamp_n) continue; /* a damaged index file: never index outside the stamps */
        if (w == src) {
            /* the source is pre-visited: only a direct self-loop emits it */
            if (d == 1 && v == src && r->stamp[w] != r->stamp_gen && min_hops <= 1) {
                /* mark with a distinct value so a second self-loop edge does not repeat it */
                OG_TRY(reach_push(r, w, 1));
                r->stamp[w] = r->stamp_gen;
            }
            continue;
        }
        if (r->stamp[w] == r->stamp_gen) continue;
        r->stamp[w] = r->stamp_gen;
        if (d >= min_hops) OG_TRY(reach_push(r, w, d));
        r->queue[(*tail)++] = w;
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
    size_t n_nodes = t->n_src > t->n_dst ? t->n_src : t->n_dst;
    OG_TRY(reach_begin(r, n_nodes ? n_nodes : 1));
    if (src >= n_from) return OG_OK;
    /* The source is not stamped: the self-loop rule above needs to see it once. Any other
     * route back to it is refused by the w == src test. */
    size_t head = 0, tail = 0;
    r->queue[tail++] = src;
    uint32_t depth = 0;
    while (head < tail && depth < max_hops) {
        size_t level_end = tail;
        depth++;
        for (; head < level_end; head++) {
            uint32_t v = r->queue[head];
            if (dir == OG_DIR_OUT || dir == OG_DIR_BOTH) OG_TRY(visit_side(t, 0, v, src, depth, min_hops, r, &tail));
            if (dir == OG_DIR_IN || dir == OG_DIR_BOTH) OG_TRY(visit_side(t, 1, v, src, depth, min_hops, r, &tail));
        }
    }
    return OG_OK;
}
