/*
 * degree_count.c — the count-only trailing hops (degree_count.h): recognising the shape in the
 * IR, and weighing each row before them by the number of rows they would make of it.
 *
 * A row's weight over one hop is its node's number of distinct neighbours (the visited-once
 * rule of a one-hop expansion: parallel edges count once, a self-loop once).  Over a chain of
 * hops it is the sum, over those distinct neighbours, of their weight over the rest — a node's
 * weight at each level is remembered (a node-sized array per level, only when many rows ask),
 * so a 2-path count over N nodes and E edges reads each adjacency list about once.  Over a
 * simple topology (no node lists a neighbour twice: og_topology_simple, decided once per
 * topology) a list is its distinct neighbours as stored, so nothing is deduplicated and the last
 * hop's weight is a node's degree, read from the offsets alone.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/degree_count.h"
#include "util/budget.h"
#include "util/error.h"

int og_exec_count_degrees = 1;

static int pred_reads(const og_ir_pred *p, int var);

static int expr_reads(const og_ir_expr *e, int var)
{
    if (!e) return 0;
    switch (e->kind) {
    case OG_IRX_PROP: case OG_IRX_ID: case OG_IRX_OBJECT: case OG_IRX_META: case OG_IRX_PATH:
        if (e->var == var) return 1;
        break;
    case OG_IRX_TEXT:
        if (e->text && (e->text->var == var || expr_reads(e->text->query, var) || expr_reads(e->text->max_edits, var)))
            return 1;
        break;
    case OG_IRX_PRED:
        if (pred_reads(e->pred, var)) return 1;
        break;
    case OG_IRX_SCORE: return 1; /* a rank reads its variable: never weigh (ranks are excluded anyway) */
    default: break;
    }
    return expr_reads(e->arg, var) || expr_reads(e->arg2, var) || expr_reads(e->arg3, var);
}

static int pred_reads(const og_ir_pred *p, int var)
{
    if (!p) return 0;
    if (p->kind == OG_IRP_TEXT) return p->text.var == var;
    return expr_reads(p->l, var) || expr_reads(p->r, var) || pred_reads(p->a, var) || pred_reads(p->b, var);
}

/* count(x) that counts rows: no distinct, no argument or a non-optional variable's id. */
static int counts_rows(const og_ir_query *ir, const og_ir_expr *e)
{
    return e->kind == OG_IRX_AGG && e->agg == OG_QAGG_COUNT && !e->distinct &&
           (!e->arg || (e->arg->kind == OG_IRX_ID && (e->arg->var < 0 || !ir->vars[e->arg->var].optional)));
}

/* A one-hop expansion binding a node nothing but row counts reads (group keys, order keys). */
static int plain_hop(const og_ir_query *ir, const og_ir_op *op)
{
    if (op->kind != OG_IR_EXPAND || op->min_hops != 1 || op->max_hops != 1 || op->edge_var >= 0 || op->closing ||
        op->npreds || op->nedge_preds || op->dir == OG_QDIR_BOTH)
        return 0;
    int d = op->dst;
    if (d < 0) return 1;
    for (size_t c = 0; c < ir->ncolumns; c++)
        if (ir->columns[c].group_key && expr_reads(ir->columns[c].expr, d)) return 0;
    for (size_t i = 0; i < ir->norders; i++)
        if (expr_reads(ir->orders[i].key, d)) return 0;
    return 1;
}

size_t og_degree_count_ops(const og_ir_query *ir)
{
    if (!og_exec_count_degrees || !ir || ir->is_mutation || !ir->aggregate || ir->distinct || ir->nranks ||
        ir->rank_order >= 0 || ir->nops < 2)
        return 0;
    int counted = 0;
    for (size_t c = 0; c < ir->ncolumns; c++) {
        if (ir->columns[c].group_key) continue;
        if (!counts_rows(ir, ir->columns[c].expr)) return 0;
        counted = 1;
    }
    if (!counted || !plain_hop(ir, &ir->ops[ir->nops - 1])) return 0;
    size_t k = 1;
    /* fold the hop before too when it binds exactly the next folded hop's start, and no later
     * folded hop starts from it */
    while (k + 1 < ir->nops) {
        const og_ir_op *op = &ir->ops[ir->nops - k - 1];
        if (!plain_hop(ir, op) || op->dst < 0 || op->dst != ir->ops[ir->nops - k].src) break;
        int reused = 0;
        for (size_t j = ir->nops - k + 1; j < ir->nops; j++) reused |= ir->ops[j].src == op->dst;
        if (reused) break;
        k++;
    }
    return k;
}

const og_ir_op *og_degree_count_op(const og_ir_query *ir)
{
    size_t k = og_degree_count_ops(ir);
    return k ? &ir->ops[ir->nops - 1] : NULL;
}

typedef struct level {
    const og_topology *t;
    og_dir dir;
    uint32_t limit;   /* neighbours at or past it are outside the node range: skipped */
    og_reach *scratch; /* a composed topology's entries of one node (og_topology_edges) */
    uint64_t *memo;   /* NULL, or per node its weight from this level on (UINT64_MAX unknown) */
    uint32_t nodes;   /* memo entries */
    uint32_t *buf;    /* the distinct neighbours of the node at hand */
    size_t buf_cap;
    const uint64_t *off; /* a built topology's arrays in this direction (NULL when composed) */
    const uint32_t *nbr;
    uint32_t n_from;  /* off has n_from + 1 entries */
    uint64_t n_edges; /* nbr has n_edges entries */
    int simple;       /* og_topology_simple: a node's list is its distinct neighbours as stored */
} level;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct in-range neighbours of v at level l (*n of them) in *out: the topology's own
 * list when it is simple (nothing read but the offsets), else l->buf. */
static og_status distinct_neighbours(level *l, uint32_t v, const uint32_t **out, size_t *n)
{
    const uint32_t *nb, *ed;
    size_t k;
    if (l->off) { /* a built topology: read its arrays in place (the hot path of a whole-graph count) */
        if (v >= l->n_from) {
            *n = 0;
            return OG_OK;
        }
        uint64_t b = l->off[v], e = l->off[v + 1];
        if (e > l->n_edges) e = l->n_edges; /* (a damaged index file, as plain_edges clamps) */
        if (b > e) b = e;
        nb = l->nbr + b;
        k = (size_t)(e - b);
        if (l->simple) {
            *out = nb;
            *n = k;
            return OG_OK;
        }
    } else {
        OG_TRY(og_topology_edges(l->t, l->dir, v, l->scratch, &nb, &ed, &k));
    }
    if (k > l->buf_cap) {
        uint32_t *b = realloc(l->buf, k * sizeof *b);
        if (!b) return og_err(OG_ERR_NOMEM, "out of memory");
        l->buf = b;
        l->buf_cap = k;
    }
    size_t m = 0;
    if (k <= 16) { /* the usual degree: a quadratic check beats sorting */
        for (size_t j = 0; j < k; j++) {
            if (nb[j] >= l->limit) continue;
            size_t i = 0;
            while (i < m && l->buf[i] != nb[j]) i++;
            if (i == m) l->buf[m++] = nb[j];
        }
    } else {
        for (size_t j = 0; j < k; j++)
            if (nb[j] < l->limit) l->buf[m++] = nb[j];
        qsort(l->buf, m, sizeof *l->buf, cmp_u32);
        size_t w = 0;
        for (size_t j = 0; j < m; j++)
            if (!w || l->buf[w - 1] != l->buf[j]) l->buf[w++] = l->buf[j];
        m = w;
    }
    *out = l->buf;
    *n = m;
    return OG_OK;
}

/* The rows the hops lv[i..n) make of node v. */
static og_status weight(level *lv, size_t i, size_t n, uint32_t v, uint64_t *out)
{
    level *l = &lv[i];
    if (l->memo && v < l->nodes && l->memo[v] != UINT64_MAX) {
        *out = l->memo[v];
        return OG_OK;
    }
    size_t m = 0;
    const uint32_t *nb;
    OG_TRY(distinct_neighbours(l, v, &nb, &m));
    uint64_t w = 0;
    if (i + 1 == n) {
        w = m;
    } else if (i + 2 == n && lv[i + 1].simple) {
        /* the last hop over a simple topology: each neighbour's weight is its degree */
        const uint64_t *off = lv[i + 1].off;
        uint32_t nf = lv[i + 1].n_from;
        for (size_t j = 0; j < m; j++)
            if (nb[j] < nf) w += off[nb[j] + 1] - off[nb[j]];
    } else {
        /* each level has its own buffer and recurses only into the next level */
        for (size_t j = 0; j < m; j++) {
            uint64_t x;
            OG_TRY(weight(lv, i + 1, n, nb[j], &x));
            w += x;
        }
    }
    if (l->memo && v < l->nodes) l->memo[v] = w;
    *out = w;
    return OG_OK;
}

og_status og_degree_weights(const og_bindings *b, size_t col, const og_topology *const *t, const og_dir *dir,
                            size_t nhops, uint64_t *w)
{
    if (col >= b->n_cols || nhops == 0) return og_err(OG_ERR_INTERNAL, "degree count: bad column or hops");
    level *lv = calloc(nhops, sizeof *lv);
    if (!lv) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    /* remembering a node's weight pays when many rows ask (a whole-graph count) */
    int memo = b->n_rows >= 256;
    for (size_t i = 0; i < nhops && st == OG_OK; i++) {
        uint32_t ns, nd;
        const uint64_t *off[2];
        const uint32_t *nbr[2], *edg[2];
        og_topology_arrays(t[i], &ns, &nd, off, nbr, edg);
        lv[i].t = t[i];
        lv[i].dir = dir[i];
        lv[i].limit = dir[i] == OG_DIR_IN ? ns : nd;
        lv[i].nodes = dir[i] == OG_DIR_IN ? nd : ns;
        int s = dir[i] == OG_DIR_IN;
        size_t ne = og_topology_edge_count(t[i]);
        /* a built topology: its arrays in place, offsets clamped — unless it reads lists by
         * pread and few rows ask (og_topology_edges then reads them without faulting the
         * mapping: docs/engine.md "Memory") */
        if (off[s] && nbr[s] && (memo || !og_topology_reads_by_pread(t[i]))) {
            og_topology_bulk_read(t[i]);
            lv[i].off = off[s];
            lv[i].nbr = nbr[s];
            lv[i].n_from = lv[i].nodes;
            lv[i].n_edges = ne;
            /* deciding reads every list once: worth it when the rows ask for a good share
             * of the nodes (a whole-graph count), not for a count from a few start nodes */
            lv[i].simple = (uint64_t)b->n_rows * 64 >= lv[i].nodes ? og_topology_simple(t[i], dir[i])
                                                                      : og_topology_simple_known(t[i], dir[i]);
        }
        lv[i].scratch = og_topology_reach_get(t[i]);
        if (!lv[i].scratch) st = og_err(OG_ERR_NOMEM, "out of memory");
        /* level 0 is asked once per row; the last one over a simple topology reads a degree */
        if (st == OG_OK && memo && i > 0 && lv[i].nodes && !(i + 1 == nhops && lv[i].simple)) {
            st = og_budget_charge((uint64_t)lv[i].nodes * sizeof *lv[i].memo);
            if (st == OG_OK && !(lv[i].memo = malloc((size_t)lv[i].nodes * sizeof *lv[i].memo)))
                st = og_err(OG_ERR_NOMEM, "out of memory");
            if (st == OG_OK) memset(lv[i].memo, 0xff, (size_t)lv[i].nodes * sizeof *lv[i].memo);
        }
    }
    for (size_t r = 0; r < b->n_rows && st == OG_OK; r++) {
        uint32_t v = b->cols[col][r];
        w[r] = 0;
        if (v == OG_ROW_NONE) continue;
        if (!(r & 4095) && (st = og_budget_check()) != OG_OK) break;
        st = weight(lv, 0, nhops, v, &w[r]);
    }
    for (size_t i = 0; i < nhops; i++) {
        if (lv[i].scratch) og_topology_reach_put(lv[i].t, lv[i].scratch);
        free(lv[i].memo);
        free(lv[i].buf);
    }
    free(lv);
    return st;
}
