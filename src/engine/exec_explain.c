/*
 * exec_explain.c — `query --explain` (og_exec_explain): the read executor's plan as steps
 * in run order with their estimates, and, when run, the rows each operator produced.
 *
 * Why its own file: explain replays the executor's decisions (filter placement, key
 * lookups, which filters a join fuses or hashes on) through the same functions the executor
 * uses (exec_internal.h), so the plan it prints is the one that runs; the estimates and the
 * printing are its own and nothing else reads them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/degree_count.h"
#include "engine/exec_internal.h"
#include "engine/topology.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/jsonout.h"

/* ---- explain ---------------------------------------------------------------------------------
 *
 * Estimates are deliberately simple and stated in docs/query-language.md: a scan yields its
 * table's live rows (1 or 0 on a key lookup), each pushed predicate keeps 1/10 of them (an
 * equality) or 1/3 (anything else); a traversal multiplies by the average degree of its edge
 * type in its direction for each hop (capped at the destination's rows); a filter keeps 1/10
 * or 1/3; an anti-join keeps half; an optional join keeps at least its input (its inner estimate when larger). */

static double pred_keep(const og_ir_pred *p) { return p->kind == OG_IRP_CMP && p->op == OG_IR_EQ ? 0.1 : 1.0 / 3; }

static double preds_keep(const og_ir_pred *p, size_t n)
{
    double k = 1;
    for (size_t i = 0; i < n; i++) k *= pred_keep(&p[i]);
    return k;
}

static og_status add_step(exec *x, const xstep *s)
{
    if (x->nsteps == x->steps_cap) {
        size_t cap = x->steps_cap ? 2 * x->steps_cap : 16;
        xstep *n = realloc(x->steps, cap * sizeof *n);
        if (!n) return og_err(OG_ERR_NOMEM, "out of memory");
        x->steps = n;
        x->steps_cap = cap;
    }
    x->steps[x->nsteps++] = *s;
    return OG_OK;
}

static og_status plan_steps(exec *x, const og_ir_op *ops, size_t nops, unsigned char *bound, int started, double in,
                            int depth, const char *prefix, double *out)
{
    size_t *order = malloc((nops ? nops : 1) * sizeof *order);
    if (!order) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = og_xr_schedule_ops(x->ir, ops, nops, bound, order); /* bound: as after the pipeline */
    unsigned char *inner_bound = malloc(x->ir->nvars ? x->ir->nvars : 1);
    unsigned char *now_bound = calloc(x->ir->nvars ? x->ir->nvars : 1, 1);
    if (st == OG_OK && (!inner_bound || !now_bound)) st = og_err(OG_ERR_NOMEM, "out of memory");
    /* replay the binding order for the anti-joins' inner pipelines */
    if (st == OG_OK)
        for (size_t v = 0; v < x->ir->nvars; v++) now_bound[v] = bound[v];
    for (size_t i = 0; st == OG_OK && i < nops; i++)
        if ((ops[i].kind == OG_IR_SCAN || ops[i].kind == OG_IR_PATH) && ops[i].var >= 0) now_bound[ops[i].var] = 0;
        else if (ops[i].kind == OG_IR_EXPAND) {
            if (ops[i].dst >= 0 && !ops[i].closing) now_bound[ops[i].dst] = 0;
            if (ops[i].edge_var >= 0) now_bound[ops[i].edge_var] = 0;
        }
    int fuse_open = 0; /* the previous steps are a cross join and filters fused into it */
    const og_ir_op *hash_filter = NULL; /* that join's hash key (og_xr_hash_join), if any */
    unsigned char *vars = malloc(x->ir->nvars ? x->ir->nvars : 1);
    if (st == OG_OK && !vars) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < nops && st == OG_OK; k++) {
        const og_ir_op *op = &ops[order[k]];
        xstep s;
        memset(&s, 0, sizeof s);
        if (op->kind == OG_IR_FILTER && fuse_open && og_xr_filter_ready(x->ir, op, bound, vars)) {
            s.fused = 1;
            s.hash = op == hash_filter;
        } else {
            fuse_open = op->kind == OG_IR_SCAN && started && og_exec_place_filters;
            hash_filter = NULL;
            if (fuse_open && og_exec_hash_join) { /* the filters this join fuses, as run_ops gathers them */
                const og_ir_op *fs[64];
                size_t nf = 0;
                while (nf < 64 && k + 1 + nf < nops && ops[order[k + 1 + nf]].kind == OG_IR_FILTER &&
                       og_xr_filter_ready(x->ir, &ops[order[k + 1 + nf]], bound, vars))
                    fs[nf] = &ops[order[k + 1 + nf]], nf++;
                int scan_left;
                int kf = og_xr_hash_key_filter(x->ir, op->var, fs, nf, &scan_left);
                if (kf >= 0) hash_filter = fs[kf];
            }
        }
        s.op = op;
        s.depth = depth;
        s.written = order[k] + 1;
        snprintf(s.label, sizeof s.label, "%s%zu", prefix, k + 1);
        double est = in;
        switch (op->kind) {
        case OG_IR_SCAN: {
            size_t n;
            int hit = 0;
            uint32_t row = 0;
            st = x->src->node_rows(x->src->ud, (size_t)op->node_type, &n);
            if (st == OG_OK) st = og_xr_key_lookup(x, op, &hit, &row);
            double one = hit ? (row == UINT32_MAX ? 0 : 1) : (double)n * preds_keep(op->preds, op->npreds);
            s.key_lookup = hit;
            s.cross = started;
            s.hash = started && hash_filter != NULL;
            est = started ? in * one * (s.hash ? pred_keep(&hash_filter->pred) : 1) : one;
            started = 1;
            break;
        }
        case OG_IR_EXPAND: {
            const og_topology *t;
            st = x->src->edge_topology(x->src->ud, (size_t)op->edge_type, &t);
            if (st) break;
            uint32_t ns, nd;
            const uint64_t *off[2];
            const uint32_t *nbr[2], *edg[2];
            og_topology_arrays(t, &ns, &nd, off, nbr, edg);
            double e = (double)og_topology_edge_count(t);
            double from = op->dir == OG_QDIR_OUT ? ns : op->dir == OG_QDIR_IN ? nd : (double)ns + nd;
            double to = op->dir == OG_QDIR_OUT ? nd : op->dir == OG_QDIR_IN ? ns : (double)ns + nd;
            double deg = from > 0 ? (op->dir == OG_QDIR_BOTH ? 2 * e : e) / from : 0, reach = 0, level = 1;
            for (uint32_t h = 1; h <= op->max_hops && h <= 64; h++) {
                level *= deg;
                if (h >= op->min_hops) reach += level;
            }
            if (op->edge_var < 0 && reach > to) reach = to;
            if (op->closing) reach = to > 0 ? (reach < to ? reach / to : 1) : 0;
            est = in * reach * preds_keep(op->preds, op->npreds) * preds_keep(op->edge_preds, op->nedge_preds);
            break;
        }
        case OG_IR_FILTER: est = s.hash ? in : in * pred_keep(&op->pred); break; /* a hash key: counted in the join */
        case OG_IR_ANTIJOIN: est = in * 0.5; break;
        case OG_IR_PATH: est = in * 0.5 * preds_keep(op->preds, op->npreds); break; /* connected or not */
        }
        if (st) break;
        s.est = est;
        st = add_step(x, &s);
        if (st == OG_OK && op->kind == OG_IR_ANTIJOIN) {
            char pre[24];
            snprintf(pre, sizeof pre, "%s%zu.", prefix, k + 1);
            memcpy(inner_bound, now_bound, x->ir->nvars ? x->ir->nvars : 1);
            double inner_est;
            size_t at = x->nsteps - 1;
            st = plan_steps(x, op->inner, op->ninner, inner_bound, 1, in, depth + 1, pre, &inner_est);
            if (st == OG_OK && op->sub == OG_QSUB_OPTIONAL) /* every outer row stays: at least `in` */
                est = x->steps[at].est = inner_est > in ? inner_est : in;
        }
        og_xr_mark_bound(op, now_bound);
        in = est;
    }
    free(order);
    free(inner_bound);
    free(now_bound);
    free(vars);
    *out = in;
    return st;
}

static void put_est(og_buf *b, double e)
{
    if (e >= 1e15) og_buf_printf(b, "%.3g", e);
    else if (e >= 10 || e == 0) og_buf_printf(b, "%.0f", e);
    else og_buf_printf(b, "%.2g", e);
}

/* 1 when op is one of the trailing hops a count folds (degree_count.h). */
static int counted_hop(const og_ir_query *ir, const og_ir_op *op)
{
    size_t k = og_degree_count_ops(ir);
    for (size_t i = ir->nops - (k <= 8 ? k : 0); i < ir->nops; i++)
        if (&ir->ops[i] == op) return 1;
    return 0;
}

static og_status put_step(og_buf *b, const og_ir_query *ir, const xstep *s, int run)
{
    static const char *const dirs[] = {"out", "in", "both"};
    const og_ir_op *op = s->op;
    const og_catalog *cat = ir->cat;
    for (int i = 0; i < s->depth; i++) og_buf_append_str(b, "  ");
    og_buf_printf(b, "%s. ", s->label);
    switch (op->kind) {
    case OG_IR_SCAN:
        og_buf_printf(b, "scan $%s: %s  access=%s%s", ir->vars[op->var].name, cat->nodes[op->node_type].name,
                      s->key_lookup ? "key_lookup" : "full_scan", s->hash ? "  join=hash" : s->cross ? "  join=cross" : "");
        break;
    case OG_IR_EXPAND: {
        const og_cat_type *et = &cat->edges[op->edge_type];
        og_buf_printf(b, "expand $%s -[", ir->vars[op->src].name);
        if (op->edge_var >= 0) og_buf_printf(b, "$%s: ", ir->vars[op->edge_var].name);
        og_buf_printf(b, "%s %s %u..%u]-> ", et->name, dirs[op->dir], (unsigned)op->min_hops, (unsigned)op->max_hops);
        if (op->dst >= 0) og_buf_printf(b, "$%s", ir->vars[op->dst].name);
        else og_buf_append_str(b, "$_");
        og_buf_printf(b, ": %s  traversal=%s", cat->nodes[op->node_type].name,
                      op->closing ? "reach_check" : op->edge_var >= 0 ? "edge_rows"
                      : counted_hop(ir, op) ? "degree_count" : "csr");
        break;
    }
    case OG_IR_FILTER:
        og_buf_append_str(b, "filter ");
        OG_TRY(og_ir_dump_pred(b, ir, &op->pred));
        break;
    case OG_IR_ANTIJOIN:
        og_buf_append_str(b, op->sub == OG_QSUB_EXISTS ? "semi_join exists {...} on"
                             : op->sub == OG_QSUB_COUNT ? (op->sub_arg ? "count_join aggregate {...} on" : "count_join count {...} on")
                             : op->sub == OG_QSUB_OPTIONAL ? "left_join optional {...} on" : "anti_join not {...} on");
        for (size_t k = 0; k < op->nouter; k++) og_buf_printf(b, "%s$%s", k ? ", " : " ", ir->vars[op->outer_vars[k]].name);
        if (!op->nouter) og_buf_append_str(b, " (no shared variable)");
        break;
    case OG_IR_PATH:
        og_buf_printf(b, "shortest $%s = $%s -[%s %s %u..%u]-> $%s: %s  traversal=bfs_from_destination", ir->vars[op->var].name,
                      ir->vars[op->src].name, cat->edges[op->edge_type].name, dirs[op->dir], (unsigned)op->min_hops,
                      (unsigned)op->max_hops, ir->vars[op->dst].name, cat->nodes[op->node_type].name);
        break;
    }
    og_buf_append_str(b, "  est=");
    put_est(b, s->est);
    if (run) {
        if (s->ran) og_buf_printf(b, "  rows=%llu", (unsigned long long)s->rows);
        else og_buf_append_str(b, "  rows=-");
    }
    /* where a filter runs, when that is not where it was written */
    if (op->kind == OG_IR_FILTER) {
        const char *dot = strrchr(s->label, '.');
        size_t pos = (size_t)strtoul(dot ? dot + 1 : s->label, NULL, 10);
        if (pos != s->written) og_buf_printf(b, "  placed_from=%zu", s->written);
        if (s->fused) og_buf_append_str(b, s->hash ? "  hash_key" : "  during_join");
    }
    og_buf_append_byte(b, '\n');
    const og_ir_pred *pp[2] = {op->kind == OG_IR_FILTER ? NULL : op->preds, op->edge_preds};
    size_t pn[2] = {op->kind == OG_IR_FILTER ? 0 : op->npreds, op->kind == OG_IR_EXPAND ? op->nedge_preds : 0};
    for (int g = 0; g < 2; g++)
        for (size_t i = 0; i < pn[g]; i++) {
            for (int d = 0; d < s->depth; d++) og_buf_append_str(b, "  ");
            og_buf_append_str(b, g ? "     edge pushed: " : "     pushed: ");
            OG_TRY(og_ir_dump_pred(b, ir, &pp[g][i]));
            og_buf_append_byte(b, '\n');
        }
    return OG_OK;
}

og_status og_exec_explain(const og_ir_query *ir, const og_exec_source *src, const og_vector *params, int64_t now_ms,
                          int run, og_buf *out, og_result *res)
{
    if (res) memset(res, 0, sizeof *res);
    if (ir->is_mutation) return og_err(OG_ERR_INVALID, "query '%s' is a mutation; explain reads only", ir->name);
    exec x = {ir, src, params, now_ms, NULL, 0, 0, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL};
    unsigned char *bound = calloc(ir->nvars ? ir->nvars : 1, 1);
    if (!bound) return og_err(OG_ERR_NOMEM, "out of memory");
    double est = 0;
    og_status st = plan_steps(&x, ir->ops, ir->nops, bound, 0, 1, 0, "", &est);
    free(bound);
    og_result r;
    memset(&r, 0, sizeof r);
    if (st == OG_OK && run) st = og_xr_run(&x, &r);
    if (st == OG_OK) {
        og_buf_printf(out, "query %s: %zu step%s, filters placed %s\n", ir->name ? ir->name : "query", x.nsteps,
                      x.nsteps == 1 ? "" : "s", og_exec_place_filters ? "early" : "as written");
        for (size_t i = 0; i < x.nsteps && st == OG_OK; i++) st = put_step(out, ir, &x.steps[i], run);
    }
    if (st == OG_OK) {
        og_buf_append_str(out, "pipeline: est=");
        put_est(out, est);
        if (run)
            og_buf_printf(out, "  rows_through=%llu  rows_peak=%llu  result_rows=%zu", (unsigned long long)r.rows_through,
                          (unsigned long long)r.rows_peak, r.nrows);
        st = og_buf_append_byte(out, '\n');
    }
    free(x.steps);
    if (st == OG_OK && res) *res = r;
    else og_result_free(&r);
    return st;
}
