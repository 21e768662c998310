/*
 * exec_stream.c — a scan + filter + aggregate of one node type read batch by batch (issue 36).
 *
 * The usual path of `match { $n: T  $n.x >= $lo ... } return { $n.k, count($n), avg($n.x) }`
 * loads each column it reads whole (kept on the table view for the next query), binds every
 * row the filter keeps, then aggregates those rows: at 10M rows the query process held the
 * 8-byte column (76 MiB) and the kept rows' list, and the warm query read the column twice
 * from memory (docs/benchmarks.md "Scaling").  When the source would rather not hold the
 * columns (og_exec_source.node_stream_plan: they are not loaded and would take more of the
 * cache than a whole load may), this path streams them instead: per batch of 16K rows
 * (tableview.h og_tableview_stream; two threads over two halves of the fragments), the
 * predicates' ranges clear the rows they reject in a bitmap (colscan.h og_colscan_filter),
 * and the rows kept are added to per-group accumulators (og_colstream) — one pass, one batch
 * in memory, nothing kept afterwards but the group key's coded column (1 byte a row).
 *
 * Shapes taken: one SCAN of a node variable (the query's only operator), every predicate a
 * comparison of one of its numeric or date properties with a literal or parameter, every
 * result column a group key (at most one, a String property the source codes: dictcol.h) or
 * an aggregate og_colstream takes over its numeric properties or its rows.  Anything else,
 * explain, and og_exec_stream = 0 take the usual path.  The answers are the same: the same
 * kernels and accumulators (float sums added in row order, on one thread).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/colscan.h"
#include "engine/exec_internal.h"
#include "util/budget.h"
#include "util/error.h"

int og_exec_stream = 1;

/* The streamed properties and what reads them. */
#define MAXP 16

typedef struct stream_plan {
    uint64_t props[MAXP];
    og_type types[MAXP];
    og_vector tmpl[MAXP]; /* an empty vector of each type: the ranges' column until a batch's */
    size_t nprops;
    og_colrange rs[MAXP * 2];
    size_t rs_prop[MAXP * 2]; /* which property each range reads */
    size_t nr;
    og_agg_fn fns[MAXP];
    og_type arg_types[MAXP]; /* OG_T_NULL: count(rows) */
    long arg_prop[MAXP];     /* -1: count(rows) */
    size_t naggs;
    long key_col;            /* result column of the group key, -1 none */
    uint64_t key_prop;
    const og_dictcol *key;
} stream_plan;

/* One part's state (a thread's). */
typedef struct stream_part {
    const stream_plan *pl;
    og_colstream *acc;
    uint64_t *sel;
    uint32_t *rows;
    size_t cap;
    uint64_t kept;
} stream_part;

/* The index of prop in pl->props, added when new (-1: too many). */
static long prop_slot(stream_plan *pl, uint64_t prop)
{
    for (size_t i = 0; i < pl->nprops; i++)
        if (pl->props[i] == prop) return (long)i;
    if (pl->nprops == MAXP) return -1;
    pl->props[pl->nprops] = prop;
    return (long)pl->nprops++;
}

/* A property of scan variable var (not a system column). */
static int var_prop(const og_ir_expr *e, int var)
{
    return e && e->kind == OG_IRX_PROP && e->var == var && e->prop_id != OG_PROP_ID_COLUMN;
}

/* count($v) over the scan's own variable: a count of rows. */
static int counts_rows(const og_ir_expr *e, int var)
{
    return e->agg == OG_QAGG_COUNT && !e->distinct && (!e->arg || (e->arg->kind == OG_IRX_ID && e->arg->var == var));
}

/* Fills pl from the query's shape (the properties only; types come from the source).  0: not
 * a streamable shape. */
static int plan_shape(const exec *x, stream_plan *pl)
{
    const og_ir_query *ir = x->ir;
    if (ir->nops != 1 || ir->ops[0].kind != OG_IR_SCAN || ir->rank_order >= 0 || !ir->ncolumns) return 0;
    const og_ir_op *op = &ir->ops[0];
    int var = op->var;
    if (var < 0 || (size_t)var >= ir->nvars || ir->vars[var].is_edge || ir->vars[var].optional || ir->vars[var].is_path)
        return 0;
    for (size_t i = 0; i < op->npreds; i++) {
        const og_ir_pred *pr = &op->preds[i];
        if (pr->kind != OG_IRP_CMP || !pr->l || !pr->r || pr->op > OG_IR_GE) return 0;
        int k_left = !var_prop(pr->l, var);
        const og_ir_expr *prop = k_left ? pr->r : pr->l, *k = k_left ? pr->l : pr->r;
        if (!var_prop(prop, var) || (k->kind != OG_IRX_LIT && k->kind != OG_IRX_PARAM)) return 0;
        if (prop_slot(pl, prop->prop_id) < 0) return 0;
    }
    pl->key_col = -1;
    for (size_t c = 0; c < ir->ncolumns; c++) {
        const og_ir_expr *e = ir->columns[c].expr;
        if (ir->columns[c].group_key) {
            if (pl->key_col >= 0 || !var_prop(e, var)) return 0;
            pl->key_col = (long)c;
            pl->key_prop = e->prop_id;
            continue;
        }
        if (e->kind != OG_IRX_AGG || e->distinct || e->agg == OG_QAGG_COLLECT || pl->naggs == MAXP) return 0;
        pl->fns[pl->naggs] = og_xr_agg_fn(e->agg);
        if (counts_rows(e, var)) {
            pl->arg_prop[pl->naggs++] = -1;
            continue;
        }
        long s = var_prop(e->arg, var) ? prop_slot(pl, e->arg->prop_id) : -1;
        if (s < 0) return 0;
        pl->arg_prop[pl->naggs++] = s;
    }
    return 1;
}

/* The ranges of the predicates (their constants evaluated), fused per property.  0: a pairing
 * of types the kernels do not take. */
static og_status plan_ranges(exec *x, stream_plan *pl, int *ok)
{
    const og_ir_op *op = &x->ir->ops[0];
    pipe none = {0};
    *ok = 1;
    for (size_t i = 0; i < op->npreds && *ok; i++) {
        const og_ir_pred *pr = &op->preds[i];
        int k_left = !var_prop(pr->l, op->var);
        const og_ir_expr *prop = k_left ? pr->r : pr->l, *k = k_left ? pr->l : pr->r;
        size_t s = (size_t)prop_slot(pl, prop->prop_id);
        og_vector kv;
        OG_TRY(og_xr_eval(x, &none, k, &kv));
        og_colrange r;
        *ok = og_colrange_prepare(&r, &pl->tmpl[s], NULL, og_xr_cmp_op(pr->op), &kv, k_left);
        og_vector_free(&kv);
        if (!*ok) break;
        size_t j = 0;
        while (j < pl->nr && !og_colrange_merge(&pl->rs[j], &r)) j++;
        if (j < pl->nr) continue;
        *ok = pl->nr < sizeof pl->rs / sizeof pl->rs[0]; /* (more ranges than that: the usual path) */
        if (*ok) pl->rs[pl->nr] = r, pl->rs_prop[pl->nr++] = s;
    }
    return OG_OK;
}

/* The rows of a batch every range keeps, into sp->rows (batch offsets, ascending); their count. */
static size_t kept_rows(stream_part *sp, size_t n, const og_vector *cols)
{
    const stream_plan *pl = sp->pl;
    const og_colrange *r0 = &pl->rs[0];
    const og_vector *c0 = pl->nr == 1 ? &cols[pl->rs_prop[0]] : NULL;
    size_t k = 0;
    if (c0 && !c0->validity && !r0->negate && !r0->empty && r0->lo <= r0->hi &&
        (c0->type.id == OG_T_I64 || c0->type.id == OG_T_DATE64)) {
        /* one range over a column without nulls (the common case): the list in one
         * branch-free pass, without the bitmap */
        const int64_t *v = c0->values;
        uint64_t lo = (uint64_t)r0->lo, span = (uint64_t)r0->hi - lo;
        for (size_t i = 0; i < n; i++) {
            sp->rows[k] = (uint32_t)i;
            k += (uint64_t)v[i] - lo <= span;
        }
        return k;
    }
    size_t words = (n + 63) / 64;
    memset(sp->sel, 0xff, words * sizeof *sp->sel);
    if (pl->nr) {
        og_colrange rs[MAXP * 2];
        for (size_t i = 0; i < pl->nr; i++) {
            rs[i] = pl->rs[i];
            rs[i].col = &cols[pl->rs_prop[i]];
        }
        og_colscan_filter(rs, pl->nr, n, sp->sel);
    }
    for (size_t w = 0; w < words; w++) {
        uint64_t b = sp->sel[w];
        if (w == words - 1 && n % 64) b &= (1ull << (n % 64)) - 1;
        while (b) {
            sp->rows[k++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
            b &= b - 1;
        }
    }
    return k;
}

static og_status use_batch(void *ctx, int part, size_t row0, size_t n, const og_vector *cols)
{
    stream_part *sp = &((stream_part *)ctx)[part];
    const stream_plan *pl = sp->pl;
    if (n > sp->cap) {
        uint64_t *sel = realloc(sp->sel, ((n + 63) / 64) * sizeof *sel);
        if (sel) sp->sel = sel;
        uint32_t *rows = sel ? realloc(sp->rows, n * sizeof *rows) : NULL;
        if (!rows) return og_err(OG_ERR_NOMEM, "out of memory aggregating");
        sp->rows = rows;
        sp->cap = n;
    }
    size_t k = kept_rows(sp, n, cols);
    const og_vector *args[MAXP];
    for (size_t a = 0; a < pl->naggs; a++) args[a] = pl->arg_prop[a] < 0 ? NULL : &cols[pl->arg_prop[a]];
    sp->kept += k;
    return og_colstream_add(sp->acc, row0, sp->rows, k, args);
}

/* Checks the types of the plan (after the source gave them); 0: not taken. */
static og_status plan_types(exec *x, stream_plan *pl, int *ok)
{
    size_t node = (size_t)x->ir->vars[x->ir->ops[0].var].type;
    *ok = 1;
    for (size_t a = 0; a < pl->naggs && *ok; a++) {
        pl->arg_types[a] = pl->arg_prop[a] < 0 ? (og_type){OG_T_NULL, 0, 0} : pl->types[pl->arg_prop[a]];
        og_type_id t = pl->arg_types[a].id;
        *ok = pl->arg_prop[a] < 0 || (t != OG_T_STRING && og_colscan_agg_ok(pl->fns[a], t));
    }
    if (*ok && pl->key_col >= 0) {
        if (!x->src->column_dict) {
            *ok = 0;
            return OG_OK;
        }
        OG_TRY(x->src->column_dict(x->src->ud, 0, node, pl->key_prop, &pl->key));
        *ok = pl->key != NULL;
    }
    return OG_OK;
}

static void plan_free(stream_plan *pl)
{
    for (size_t i = 0; i < pl->nprops; i++) og_vector_free(&pl->tmpl[i]);
}

og_status og_xr_stream_aggregate(exec *x, og_vector *cols, size_t *nrows, int *done)
{
    *done = 0;
    const og_exec_source *src = x->src;
    if (!og_exec_stream || !og_exec_typed || x->steps || x->weights || !x->ir->aggregate || !src->node_stream ||
        !src->node_stream_plan)
        return OG_OK;
    stream_plan pl;
    memset(&pl, 0, sizeof pl);
    if (!plan_shape(x, &pl) || !pl.nprops) return OG_OK; /* (nothing to read: the usual path is cheap) */
    const og_ir_query *ir = x->ir;
    size_t node = (size_t)ir->vars[ir->ops[0].var].type, n;
    OG_TRY(src->node_rows(src->ud, node, &n));
    if (n <= OG_EXEC_POINT_GATHER_MAX) return OG_OK;
    int yes = 0, ok = 1;
    OG_TRY(src->node_stream_plan(src->ud, node, pl.props, pl.nprops, pl.types, &yes));
    if (!yes) return OG_OK;
    og_status st = OG_OK;
    for (size_t i = 0; i < pl.nprops && st == OG_OK; i++) {
        st = og_vector_init(&pl.tmpl[i], pl.types[i]);
        if (st != OG_OK) pl.nprops = i; /* (the ones to free) */
    }
    if (st == OG_OK) st = plan_types(x, &pl, &ok);
    if (st == OG_OK && ok) st = plan_ranges(x, &pl, &ok);
    if (st != OG_OK || !ok) {
        plan_free(&pl);
        return st;
    }
    /* a float sum depends on the order of its additions: one thread, rows in order */
    int parts = og_colscan_threads > 1 ? 2 : 1;
    for (size_t a = 0; a < pl.naggs; a++)
        if ((pl.fns[a] == OG_AGG_SUM || pl.fns[a] == OG_AGG_AVG) &&
            (pl.arg_types[a].id == OG_T_F32 || pl.arg_types[a].id == OG_T_F64))
            parts = 1;
    stream_part sp[2];
    memset(sp, 0, sizeof sp);
    for (int p = 0; p < parts && st == OG_OK; p++) {
        sp[p].pl = &pl;
        st = og_colstream_new(&sp[p].acc, pl.key, pl.fns, pl.arg_types, pl.naggs);
    }
    if (st == OG_OK) st = og_budget_check();
    if (st == OG_OK) st = src->node_stream(src->ud, node, pl.props, pl.nprops, parts, use_batch, sp);
    int fallback = st == OG_ERR_UNSUPPORTED;
    if (fallback) {
        og_error_clear();
        st = OG_OK;
    }
    og_vector *outs = NULL, keyv;
    size_t ng = 0;
    if (st == OG_OK && !fallback) {
        if (parts == 2) og_colstream_merge(sp[0].acc, sp[1].acc);
        outs = calloc(pl.naggs ? pl.naggs : 1, sizeof *outs);
        st = outs ? og_colstream_finish(sp[0].acc, outs, &keyv, &ng) : og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (st == OG_OK && !fallback) {
        for (size_t c = 0, k = 0; c < ir->ncolumns; c++) cols[c] = (long)c == pl.key_col ? keyv : outs[k++];
        *nrows = ng;
        *done = 1;
        uint64_t kept = sp[0].kept + sp[1].kept; /* the rows the scan would have bound */
        x->rows_through += kept;
        if (kept > x->rows_peak) x->rows_peak = kept;
    }
    free(outs);
    for (int p = 0; p < 2; p++) {
        og_colstream_free(sp[p].acc);
        free(sp[p].sel);
        free(sp[p].rows);
    }
    plan_free(&pl);
    return st;
}
