/*
 * degree_count.c — the count-only last hop (degree_count.h): recognising the shape in the IR
 * and weighing the rows before it.
 */
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

const og_ir_op *og_degree_count_op(const og_ir_query *ir)
{
    if (!og_exec_count_degrees || !ir || ir->is_mutation || !ir->aggregate || ir->distinct || ir->nranks ||
        ir->rank_order >= 0 || ir->nops < 2)
        return NULL;
    const og_ir_op *op = &ir->ops[ir->nops - 1];
    if (op->kind != OG_IR_EXPAND || op->min_hops != 1 || op->max_hops != 1 || op->edge_var >= 0 || op->closing ||
        op->npreds || op->nedge_preds || op->dir == OG_QDIR_BOTH)
        return NULL;
    int d = op->dst;
    int counted = 0;
    for (size_t c = 0; c < ir->ncolumns; c++) {
        const og_ir_column *col = &ir->columns[c];
        if (col->group_key) {
            if (d >= 0 && expr_reads(col->expr, d)) return NULL;
        } else if (counts_rows(ir, col->expr)) {
            counted = 1;
        } else {
            return NULL;
        }
    }
    for (size_t i = 0; i < ir->norders; i++)
        if (d >= 0 && expr_reads(ir->orders[i].key, d)) return NULL;
    return counted ? op : NULL;
}

og_status og_degree_weights(const og_bindings *b, size_t col, const og_topology *t, og_dir dir, uint64_t *w)
{
    if (col >= b->n_cols) return og_err(OG_ERR_INTERNAL, "degree count from column %zu of %zu", col, b->n_cols);
    og_reach *reach = og_topology_reach_get(t);
    if (!reach) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    for (size_t r = 0; r < b->n_rows && st == OG_OK; r++) {
        uint32_t v = b->cols[col][r];
        w[r] = 0;
        if (v == OG_ROW_NONE) continue;
        if (!(r & 4095) && (st = og_budget_check()) != OG_OK) break;
        st = og_topology_reach(t, dir, v, 1, 1, reach);
        if (st == OG_OK) w[r] = reach->len;
    }
    og_topology_reach_put(t, reach);
    return st;
}
