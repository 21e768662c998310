/*
 * exec_project.c — the read executor's last stages (exec_read.c runs the pipeline): the
 * result columns of the bound rows, or their groups and aggregates; the order of the result
 * rows; the window a nearest ordering leaves an aggregate.
 *
 * Why its own file: these stages read the pipeline's bindings only through values
 * (og_xr_eval, og_xr_gather_var) and the typed column kernels (colscan.h), and the driver
 * calls each once; they are where a result's shape and order are decided, which is what a
 * reader of this file is looking for.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/aggregate.h"
#include "engine/colscan.h"
#include "engine/dictcol.h"
#include "engine/exec_internal.h"
#include "engine/sort.h"
#include "util/error.h"

/* ---- projection, aggregation, order, limit ------------------------------------------------ */

/* Broadcasts a 1-row constant to n rows (in place). */
og_status og_xr_broadcast(og_vector *v, size_t n)
{
    if (v->len == n) return OG_OK;
    uint32_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!idx) return og_err(OG_ERR_NOMEM, "out of memory");
    og_vector g;
    og_status st = og_vector_gather(&g, v, idx, n);
    free(idx);
    if (st) return st;
    og_vector_free(v);
    *v = g;
    return OG_OK;
}

og_agg_fn og_xr_agg_fn(og_qagg a)
{
    switch (a) {
    case OG_QAGG_COUNT: return OG_AGG_COUNT;
    case OG_QAGG_SUM: return OG_AGG_SUM;
    case OG_QAGG_AVG: return OG_AGG_AVG;
    case OG_QAGG_MIN: return OG_AGG_MIN;
    default: return OG_AGG_MAX;
    }
}

/* Bare `count($v)` counts rows; any other argument counts its non-null values. */
/* count($v) counts rows, except over a variable `optional { }` binds (its null rows are not counted) */
static int counts_rows(const og_ir_query *ir, const og_ir_expr *e)
{
    return e->agg == OG_QAGG_COUNT && !e->distinct &&
           (!e->arg || (e->arg->kind == OG_IRX_ID && (e->arg->var < 0 || !ir->vars[e->arg->var].optional)));
}

/* collect(arg) per group: the non-null values in input row order (a function of the query and
 * the snapshot, as every order before the final sort is), as a list of list_type. */
static og_status collect_values(const og_vector *arg, const uint32_t *group, size_t n, size_t ngroups, og_type list_type,
                                og_vector *out)
{
    uint32_t *count = calloc(ngroups + 1, sizeof *count), *start = calloc(ngroups + 1, sizeof *start);
    uint32_t *rows = malloc((n ? n : 1) * sizeof *rows);
    og_status st = count && start && rows ? og_vector_init(out, list_type) : og_err(OG_ERR_NOMEM, "out of memory");
    int inited = st == OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++)
        if (!og_vector_is_null(arg, arg->len == 1 ? 0 : i)) count[group[i]]++;
    for (size_t g = 1; g <= ngroups && st == OG_OK; g++) start[g] = start[g - 1] + count[g - 1];
    for (size_t i = 0; i < n && st == OG_OK; i++) /* a counting sort of the rows by group */
        if (!og_vector_is_null(arg, arg->len == 1 ? 0 : i)) rows[start[group[i]]++] = (uint32_t)i;
    for (size_t g = 0, k = 0; g < ngroups && st == OG_OK; g++) {
        for (uint32_t j = 0; j < count[g] && st == OG_OK; j++, k++)
            st = og_vector_append_from(out->child, arg, arg->len == 1 ? 0 : rows[k]);
        if (st == OG_OK) st = og_vector_append_list_end(out);
    }
    free(count);
    free(start);
    free(rows);
    if (st && inited) og_vector_free(out);
    return st;
}

/* count(distinct arg) per group: the distinct (group, value) pairs whose value is not null.
 * out is an I64 vector of ngroups counts. */
static og_status count_distinct(const og_vector *arg, const uint32_t *group, size_t n, size_t ngroups, og_vector *out)
{
    og_vector gv;
    OG_TRY(og_vector_init(&gv, (og_type){OG_T_I64, 0, 0}));
    uint32_t *pair = malloc((n ? n : 1) * sizeof *pair), *first = NULL;
    int64_t *cnt = calloc(ngroups ? ngroups : 1, sizeof *cnt);
    size_t npairs = 0;
    og_status st = pair && cnt ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n && st == OG_OK; i++) st = og_vector_append_i64(&gv, group[i]);
    const og_vector *keys[2] = {&gv, arg};
    if (st == OG_OK) st = og_group_rows(keys, 2, n, pair, &npairs, &first);
    for (size_t k = 0; k < npairs && st == OG_OK; k++)
        if (!og_vector_is_null(arg, first[k])) cnt[group[first[k]]]++;
    if (st == OG_OK) st = og_vector_init(out, (og_type){OG_T_I64, 0, 0});
    for (size_t g = 0; g < ngroups && st == OG_OK; g++) st = og_vector_append_i64(out, cnt[g]);
    og_vector_free(&gv);
    free(pair);
    free(first);
    free(cnt);
    return st;
}

/* og_xr_project_aggregate straight off the columns (colscan.h) when every group key (at most one)
 * is a String, integer or date property and every aggregate counts rows or reads a numeric
 * property of a bound variable, over more rows than point gathers serve.  *done = 0: not
 * this shape, nothing computed. */
static og_status typed_aggregate(exec *x, const pipe *p, og_vector *cols, size_t *nrows, int *done)
{
    const og_ir_query *ir = x->ir;
    size_t n = p->b.n_rows;
    *done = 0;
    if (!og_exec_typed || n <= OG_EXEC_POINT_GATHER_MAX || !ir->ncolumns) return OG_OK;
    og_colref key = {NULL, NULL, NULL};
    og_colagg *aggs = calloc(ir->ncolumns, sizeof *aggs);
    if (!aggs) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t na = 0, key_col = 0;
    og_status st = OG_OK;
    int fits = 1;
    for (size_t c = 0; c < ir->ncolumns && fits && st == OG_OK; c++) {
        const og_ir_expr *e = ir->columns[c].expr;
        const og_ir_expr *prop = ir->columns[c].group_key ? e : e->kind == OG_IRX_AGG && !counts_rows(ir, e) ? e->arg : NULL;
        og_colref ref = {NULL, NULL, NULL};
        if (ir->columns[c].group_key || prop) {
            fits = prop && prop->kind == OG_IRX_PROP && prop->var >= 0 && (size_t)prop->var < ir->nvars &&
                   p->var_col[prop->var] >= 0 && !ir->vars[prop->var].optional;
            if (fits) st = og_xr_var_dict(x, p, prop->var, prop->prop_id, &ref.dict, &ref.rows);
            if (fits && st == OG_OK && !ref.dict) st = og_xr_var_rows(x, p, prop->var, prop->prop_id, &ref.col, &ref.rows);
        }
        if (!fits || st) break;
        og_type_id rt = ref.dict ? OG_T_STRING : ref.col ? ref.col->type.id : OG_T_NULL;
        if (ir->columns[c].group_key) {
            fits = !key.col && !key.dict && og_colscan_key_ok(rt);
            key = ref, key_col = c;
        } else if (e->kind != OG_IRX_AGG || e->distinct || e->agg == OG_QAGG_COLLECT) {
            fits = 0;
        } else {
            og_agg_fn fn = og_xr_agg_fn(e->agg);
            fits = (!ref.col && !ref.dict) || og_colscan_agg_ok(fn, rt);
            aggs[na++] = (og_colagg){fn, ref};
        }
    }
    if (st || !fits) {
        free(aggs);
        return st;
    }
    og_vector *outs = calloc(na ? na : 1, sizeof *outs), keyv;
    size_t ng = 0;
    st = outs ? og_colscan_aggregate(&key, aggs, na, n, outs, &keyv, &ng) : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        for (size_t c = 0, k = 0; c < ir->ncolumns; c++) cols[c] = c == key_col && (key.col || key.dict) ? keyv : outs[k++];
        *nrows = ng;
        *done = 1;
    }
    free(outs);
    free(aggs);
    return st;
}

/* count(...) per group when each row stands for x->weights[row] rows (degree_count.h). */
static og_status weighted_count(const exec *x, const uint32_t *group, size_t n, size_t ngroups, og_vector *out)
{
    uint64_t *cnt = calloc(ngroups ? ngroups : 1, sizeof *cnt);
    if (!cnt) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t r = 0; r < n; r++) cnt[group[r]] += x->weights[r];
    og_status st = og_vector_init(out, (og_type){OG_T_I64, OG_T_NULL, 0});
    for (size_t g = 0; g < ngroups && st == OG_OK; g++)
        st = cnt[g] > INT64_MAX ? og_err(OG_ERR_LIMIT, "count overflows I64") : og_vector_append_i64(out, (int64_t)cnt[g]);
    if (st && out->type.id == OG_T_I64) og_vector_free(out);
    free(cnt);
    return st;
}

og_status og_xr_project_aggregate(exec *x, const pipe *p, og_vector *cols, size_t *nrows)
{
    int done = 0;
    if (!x->weights) OG_TRY(typed_aggregate(x, p, cols, nrows, &done));
    if (done) return OG_OK;
    const og_ir_query *ir = x->ir;
    size_t n = p->b.n_rows, nkeys = 0;
    og_vector *keyv = calloc(ir->ncolumns ? ir->ncolumns : 1, sizeof *keyv);
    const og_vector **keyp = calloc(ir->ncolumns ? ir->ncolumns : 1, sizeof *keyp);
    uint32_t *group = malloc((n ? n : 1) * sizeof *group), *first = NULL;
    og_status st = keyv && keyp && group ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < ir->ncolumns && st == OG_OK; c++) {
        if (!ir->columns[c].group_key) continue;
        st = og_xr_eval(x, p, ir->columns[c].expr, &keyv[nkeys]);
        if (st == OG_OK) st = og_xr_broadcast(&keyv[nkeys], n);
        if (st == OG_OK) keyp[nkeys] = &keyv[nkeys], nkeys++;
    }
    size_t ngroups = 0;
    if (st == OG_OK) st = og_group_rows(keyp, nkeys, n, group, &ngroups, &first);
    size_t k = 0;
    for (size_t c = 0; c < ir->ncolumns && st == OG_OK; c++) {
        const og_ir_column *col = &ir->columns[c];
        if (col->group_key) {
            st = og_vector_gather(&cols[c], &keyv[k++], first, ngroups);
            continue;
        }
        if (col->expr->kind != OG_IRX_AGG) {
            st = og_err(OG_ERR_INTERNAL, "column %s is neither a group key nor an aggregate", col->name);
            break;
        }
        og_vector arg;
        int have_arg = !counts_rows(ir, col->expr);
        if (have_arg) {
            st = og_xr_eval(x, p, col->expr->arg, &arg);
            if (st == OG_OK) st = og_xr_broadcast(&arg, n);
            if (st) break;
        }
        if (col->expr->agg == OG_QAGG_COLLECT) st = collect_values(&arg, group, n, ngroups, col->type.t, &cols[c]);
        else if (col->expr->distinct) st = count_distinct(&arg, group, n, ngroups, &cols[c]);
        else if (x->weights && !have_arg) st = weighted_count(x, group, n, ngroups, &cols[c]);
        else st = og_aggregate(og_xr_agg_fn(col->expr->agg), have_arg ? &arg : NULL, group, n, ngroups, &cols[c]);
        if (have_arg) og_vector_free(&arg);
    }
    /* with group keys, zero input rows make zero groups (og_group_rows gave none) */
    *nrows = ngroups;
    for (size_t i = 0; i < nkeys; i++) og_vector_free(&keyv[i]);
    free(keyv);
    free(keyp);
    free(group);
    free(first);
    return st;
}

/* An ORDER key's values: a coded String property (dictcol.h) as its codes, which order as
 * the values do (nulls kept), without a string per row; anything else evaluated. */
static og_status sort_key_eval(exec *x, const pipe *p, const og_ir_expr *e, og_vector *out)
{
    if (e->kind == OG_IRX_PROP && e->var >= 0 && (size_t)e->var < x->ir->nvars && p->var_col[e->var] >= 0 &&
        p->b.n_rows > OG_EXEC_POINT_GATHER_MAX) {
        const og_dictcol *d;
        const uint32_t *rows;
        OG_TRY(og_xr_var_dict(x, p, e->var, e->prop_id, &d, &rows));
        if (d) return og_dictcol_gather_codes(out, d, rows, p->b.n_rows);
    }
    return og_xr_eval(x, p, e, out);
}

static int cmp_var_names(const void *a, const void *b, void *ud)
{
    const og_ir_query *ir = ud;
    return strcmp(ir->vars[*(const int *)a].name, ir->vars[*(const int *)b].name);
}

/* Sort keys: the search ordering's key (rank_key, when not NULL), the ORDER keys, then the id
 * of every bound top-level variable by name. */
og_status og_xr_order_rows(exec *x, const pipe *p, const og_vector *cols, size_t nrows, int aggregate,
                           const og_sort_key *rank_key, uint32_t *perm)
{
    const og_ir_query *ir = x->ir;
    size_t maxk = 1 + ir->norders + ir->nvars + ir->ncolumns;
    og_sort_key *keys = calloc(maxk ? maxk : 1, sizeof *keys);
    og_vector *owned = calloc(maxk ? maxk : 1, sizeof *owned);
    int *vars = malloc((ir->nvars ? ir->nvars : 1) * sizeof *vars);
    size_t nk = 0, nowned = 0, nv = 0;
    og_status st = keys && owned && vars ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && rank_key) keys[nk++] = *rank_key;
    for (size_t i = 0; i < ir->norders && st == OG_OK; i++) {
        const og_ir_expr *e = ir->orders[i].key;
        if (e->kind == OG_IRX_COLUMN) {
            keys[nk++] = (og_sort_key){&cols[e->column], ir->orders[i].desc};
            continue;
        }
        if (aggregate) { /* a group key written again as an expression: order by its column */
            long col = -1;
            for (size_t c = 0; c < ir->ncolumns && col < 0; c++) {
                const og_ir_expr *ce = ir->columns[c].expr;
                if (ir->columns[c].group_key && ce->kind == e->kind && ce->var == e->var &&
                    (e->kind != OG_IRX_PROP || ce->prop_id == e->prop_id))
                    col = (long)c;
            }
            if (col < 0) {
                st = og_err(OG_ERR_INVALID, "an aggregate query can only order by its result columns");
                break;
            }
            keys[nk++] = (og_sort_key){&cols[col], ir->orders[i].desc};
            continue;
        }
        st = sort_key_eval(x, p, e, &owned[nowned]);
        if (st == OG_OK) st = og_xr_broadcast(&owned[nowned], nrows);
        if (st == OG_OK) keys[nk++] = (og_sort_key){&owned[nowned++], ir->orders[i].desc};
    }
    if (st == OG_OK && !aggregate) {
        for (size_t v = 0; v < ir->nvars; v++)
            if (ir->vars[v].depth == 0 && !ir->vars[v].is_path && p->var_col[v] >= 0) vars[nv++] = (int)v;
        /* insertion sort by name: few variables */
        for (size_t i = 1; i < nv; i++)
            for (size_t j = i; j > 0 && cmp_var_names(&vars[j - 1], &vars[j], (void *)ir) > 0; j--) {
                int t = vars[j];
                vars[j] = vars[j - 1];
                vars[j - 1] = t;
            }
        for (size_t i = 0; i < nv && st == OG_OK; i++) {
            st = og_xr_gather_var(x, p, vars[i], OG_PROP_ID_COLUMN, &owned[nowned]);
            if (st == OG_OK) keys[nk++] = (og_sort_key){&owned[nowned++], 0};
        }
    } else if (st == OG_OK) {
        for (size_t c = 0; c < ir->ncolumns; c++) keys[nk++] = (og_sort_key){&cols[c], 0};
    }
    if (st == OG_OK) st = og_sort_rows(keys, nk, nrows, (size_t)x->window, perm);
    for (size_t i = 0; i < nowned; i++) og_vector_free(&owned[i]);
    free(owned);
    free(keys);
    free(vars);
    return st;
}

/* Keeps the first `window` rows of p by the search key `rank` then the ids of the bound
 * top-level variables by name (the order a plain read of the same match returns them in):
 * the rows an aggregate sees under a nearest ordering.  Row order is preserved. */
og_status og_xr_keep_rank_window(exec *x, pipe *p, const og_sort_key *rank, uint64_t window)
{
    const og_ir_query *ir = x->ir;
    size_t n = p->b.n_rows;
    if (window >= n) return OG_OK;
    og_sort_key *keys = calloc(ir->nvars + 1, sizeof *keys);
    og_vector *ids = calloc(ir->nvars ? ir->nvars : 1, sizeof *ids);
    int *vars = malloc((ir->nvars ? ir->nvars : 1) * sizeof *vars);
    uint32_t *perm = malloc((n ? n : 1) * sizeof *perm);
    uint8_t *sel = calloc(n / 8 + 1, 1); /* a bit per row (og_bindings_select) */
    size_t nk = 0, nv = 0, nids = 0;
    og_status st = keys && ids && vars && perm && sel ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) keys[nk++] = *rank;
    for (size_t v = 0; st == OG_OK && v < ir->nvars; v++)
        if (ir->vars[v].depth == 0 && p->var_col[v] >= 0) vars[nv++] = (int)v;
    for (size_t i = 1; i < nv; i++) /* by name, as og_xr_order_rows breaks ties */
        for (size_t j = i; j > 0 && cmp_var_names(&vars[j - 1], &vars[j], (void *)ir) > 0; j--) {
            int t = vars[j];
            vars[j] = vars[j - 1];
            vars[j - 1] = t;
        }
    for (size_t i = 0; i < nv && st == OG_OK; i++) {
        st = og_xr_gather_var(x, p, vars[i], OG_PROP_ID_COLUMN, &ids[nids]);
        if (st == OG_OK) keys[nk++] = (og_sort_key){&ids[nids++], 0};
    }
    if (st == OG_OK) st = og_sort_rows(keys, nk, n, (size_t)window, perm);
    if (st == OG_OK) {
        for (uint64_t i = 0; i < window; i++) sel[perm[i] >> 3] |= (uint8_t)(1u << (perm[i] & 7));
        og_bindings_select(&p->b, sel);
    }
    for (size_t i = 0; i < nids; i++) og_vector_free(&ids[i]);
    free(ids);
    free(keys);
    free(vars);
    free(perm);
    free(sel);
    return st;
}
