/*
 * shortest.c — the PATH operator: shortest paths between two bound nodes (shortest.h).
 *
 * Why backwards: the path must be deterministic when several walks are equally short, and the
 * rule users can predict is "smallest node ids first, from the source".  Choosing greedily from
 * the source needs, at every step, the distance of each neighbour *to the destination* — one
 * breadth-first search from the destination over the reversed edges gives all of them (the
 * topology's own visited-once BFS, bounded by the hop limit), and then each source's walk is a
 * loop over its neighbours, hop by hop.  Rows are grouped by destination so one search serves
 * every source bound to the same destination (an all-pairs match asks each destination once).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/shortest.h"
#include "util/budget.h"
#include "util/error.h"

void og_paths_free(og_paths *p)
{
    free(p->nodes);
    free(p->off);
    memset(p, 0, sizeof *p);
}

static og_status push_node(og_paths *p, uint32_t v)
{
    if (p->nnodes == p->nodes_cap) {
        size_t cap = p->nodes_cap ? p->nodes_cap * 2 : 64;
        uint32_t *n = realloc(p->nodes, cap * sizeof *n);
        if (!n) return og_err(OG_ERR_NOMEM, "out of memory");
        p->nodes = n;
        p->nodes_cap = cap;
    }
    p->nodes[p->nnodes++] = v;
    return OG_OK;
}

/* Closes the path begun at nodes[off[n]] (its nodes pushed since); *id = its number. */
static og_status close_path(og_paths *p, uint32_t *id)
{
    if (p->n + 2 > p->off_cap) {
        size_t cap = p->off_cap ? p->off_cap * 2 : 64;
        size_t *n = realloc(p->off, cap * sizeof *n);
        if (!n) return og_err(OG_ERR_NOMEM, "out of memory");
        p->off = n;
        p->off_cap = cap;
    }
    if (p->n == 0) p->off[0] = 0;
    if (p->n >= UINT32_MAX - 1) return og_err(OG_ERR_LIMIT, "too many paths");
    p->off[p->n + 1] = p->nnodes;
    *id = (uint32_t)p->n++;
    return OG_OK;
}

typedef struct node_depth {
    uint32_t node, depth;
} node_depth;

static int cmp_node(const void *a, const void *b)
{
    uint32_t x = ((const node_depth *)a)->node, y = ((const node_depth *)b)->node;
    return x < y ? -1 : x > y;
}

typedef struct row_dst {
    uint32_t dst, row;
} row_dst;

static int cmp_dst(const void *a, const void *b)
{
    const row_dst *x = a, *y = b;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The distance of node v to the destination (from the sorted map), or UINT32_MAX. */
static uint32_t depth_of(const node_depth *map, size_t n, uint32_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (map[mid].node < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && map[lo].node == v ? map[lo].depth : UINT32_MAX;
}

static int id_less(const og_vector *ids, uint32_t a, uint32_t b)
{
    if (!ids || a >= ids->len || b >= ids->len) return a < b;
    int c = og_vector_row_cmp(ids, a, ids, b);
    return c < 0 || (c == 0 && a < b);
}

/* The walk from a (at distance da of dst, per map) to dst, pushed onto store. */
static og_status walk(const og_topology *t, og_dir dir, og_reach *scratch, const node_depth *map, size_t nmap,
                      uint32_t a, uint32_t da, uint32_t dst, const og_vector *ids, og_paths *store, uint32_t *id)
{
    OG_TRY(push_node(store, a));
    uint32_t cur = a;
    for (uint32_t rem = da; rem-- > 0;) {
        uint32_t best = OG_ROW_NONE;
        for (int side = 0; side < 2; side++) {
            og_dir d = side == 0 ? OG_DIR_OUT : OG_DIR_IN;
            if (dir != OG_DIR_BOTH && d != dir) continue;
            const uint32_t *nb, *ed;
            size_t k;
            OG_TRY(og_topology_edges(t, d, cur, scratch, &nb, &ed, &k));
            for (size_t j = 0; j < k; j++) {
                uint32_t w = nb[j];
                int on = rem == 0 ? w == dst : depth_of(map, nmap, w) == rem;
                if (on && (best == OG_ROW_NONE || id_less(ids, w, best))) best = w;
            }
        }
        if (best == OG_ROW_NONE) return og_err(OG_ERR_INTERNAL, "shortest path: no step at distance %u", rem);
        OG_TRY(push_node(store, best));
        cur = best;
    }
    return close_path(store, id);
}

og_status og_shortest_paths(og_bindings *b, size_t src_col, size_t dst_col, const og_topology *t, og_dir dir,
                            uint32_t lo, uint32_t hi, const og_vector *ids, og_paths *store)
{
    if (src_col >= b->n_cols || dst_col >= b->n_cols || lo < 1 || hi < lo)
        return og_err(OG_ERR_INTERNAL, "shortest paths: bad columns or bounds");
    size_t n = b->n_rows;
    row_dst *ord = malloc((n ? n : 1) * sizeof *ord);
    uint32_t *res = malloc((n ? n : 1) * sizeof *res);
    node_depth *map = NULL;
    size_t map_cap = 0;
    og_reach *reach = og_topology_reach_get(t), *scratch = og_topology_reach_get(t);
    og_bindings out;
    int out_init = 0;
    og_status st = ord && res && reach && scratch ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    og_dir back = dir == OG_DIR_OUT ? OG_DIR_IN : dir == OG_DIR_IN ? OG_DIR_OUT : OG_DIR_BOTH;
    for (size_t r = 0; r < n && st == OG_OK; r++) {
        ord[r] = (row_dst){b->cols[dst_col][r], (uint32_t)r};
        res[r] = OG_ROW_NONE;
    }
    if (st == OG_OK) qsort(ord, n, sizeof *ord, cmp_dst);
    for (size_t i = 0; i < n && st == OG_OK;) {
        uint32_t dst = ord[i].dst;
        size_t end = i;
        while (end < n && ord[end].dst == dst) end++;
        if (dst == OG_ROW_NONE) break; /* sorted last */
        if ((st = og_budget_check()) != OG_OK) break; /* a search can be a whole graph */
        st = og_topology_reach(t, back, dst, 1, hi, reach);
        if (st == OG_OK && reach->len > map_cap) {
            node_depth *m = realloc(map, reach->len * sizeof *m);
            if (!m) st = og_err(OG_ERR_NOMEM, "out of memory");
            else map = m, map_cap = reach->len;
        }
        size_t nmap = st == OG_OK ? reach->len : 0;
        for (size_t k = 0; k < nmap; k++) map[k] = (node_depth){reach->node[k], reach->depth[k]};
        if (st == OG_OK && nmap) qsort(map, nmap, sizeof *map, cmp_node);
        for (size_t j = i; j < end && st == OG_OK; j++) {
            uint32_t a = b->cols[src_col][ord[j].row];
            if (a == OG_ROW_NONE) continue;
            uint32_t da = depth_of(map, nmap, a);
            if (da == UINT32_MAX || da < lo) continue;
            st = walk(t, dir, scratch, map, nmap, a, da, dst, ids, store, &res[ord[j].row]);
        }
        i = end;
    }
    if (st == OG_OK) {
        st = og_bindings_init(&out, b->n_cols + 1);
        out_init = st == OG_OK;
    }
    uint32_t *vals = malloc((b->n_cols + 1) * sizeof *vals);
    if (st == OG_OK && !vals) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t r = 0; r < n && st == OG_OK; r++) {
        if (res[r] == OG_ROW_NONE) continue;
        for (size_t c = 0; c < b->n_cols; c++) vals[c] = b->cols[c][r];
        vals[b->n_cols] = res[r];
        st = og_bindings_push(&out, vals);
    }
    free(vals);
    if (st == OG_OK) {
        og_bindings_free(b);
        *b = out;
    } else if (out_init) {
        og_bindings_free(&out);
    }
    if (reach) og_topology_reach_put(t, reach);
    if (scratch) og_topology_reach_put(t, scratch);
    free(map);
    free(ord);
    free(res);
    return st;
}
