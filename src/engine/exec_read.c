/*
 * exec_read.c — the read-query executor: IR pipeline → bindings → projection, aggregation,
 * ordering, limit.  See exec.h for the model.
 *
 * Variables map to columns of the current og_bindings (var_col[var], -1 while unbound).  An
 * anti-join runs its inner pipeline over a copy of the outer bindings extended with an
 * "origin" column holding each row's outer row number, then drops the outer rows that
 * produced a match (og_antijoin_mask): one vectorized pass, not one inner query per row.
 *
 * This file holds values, filter placement, the operators and the driver (og_xr_run); the
 * hash join is in exec_join.c, projection / aggregation / order in exec_project.c, explain in
 * exec_explain.c, and what they share in exec_internal.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "engine/aggregate.h"
#include "engine/bindings.h"
#include "engine/colscan.h"
#include "engine/dictcol.h"
#include "engine/degree_count.h"
#include "engine/exec.h"
#include "engine/exec_internal.h"
#include "engine/export.h"
#include "engine/filter.h"
#include "engine/jsonval.h"
#include "engine/scalar.h"
#include "engine/scan_index.h"
#include "engine/search.h"
#include "engine/shortest.h"
#include "engine/sort.h"
#include "util/budget.h"
#include "util/error.h"
#include "util/jsonout.h"

int og_exec_place_filters = 1;
int og_exec_hash_join = 1;
int og_exec_typed = 1;

void og_result_free(og_result *r)
{
    if (!r) return;
    for (size_t c = 0; c < r->ncols; c++) {
        if (r->names) free(r->names[c]);
        if (r->cols) og_vector_free(&r->cols[c]);
    }
    free(r->names);
    free(r->query);
    free(r->types);
    free(r->cols);
    memset(r, 0, sizeof *r);
}

/* ---- values ------------------------------------------------------------------------------ */

static og_type lit_type(const og_qlit *l)
{
    switch (l->kind) {
    case OG_QLIT_STRING: return (og_type){OG_T_STRING, 0, 0};
    case OG_QLIT_INT: return (og_type){OG_T_I64, 0, 0};
    case OG_QLIT_FLOAT: return (og_type){OG_T_F64, 0, 0};
    case OG_QLIT_BOOL: return (og_type){OG_T_BOOL, 0, 0};
    case OG_QLIT_DATE: return (og_type){OG_T_DATE32, 0, 0};
    case OG_QLIT_DATETIME: return (og_type){OG_T_DATE64, 0, 0};
    case OG_QLIT_LIST: {
        og_type_id e = l->nitems ? lit_type(&l->items[0]).id : OG_T_STRING;
        return (og_type){OG_T_LIST, e, 0};
    }
    }
    return (og_type){OG_T_NULL, 0, 0};
}

static og_status lit_append(og_vector *v, const og_qlit *l)
{
    switch (l->kind) {
    case OG_QLIT_STRING: return og_vector_append_bytes(v, l->s, l->slen);
    case OG_QLIT_INT: case OG_QLIT_DATE: case OG_QLIT_DATETIME: return og_vector_append_i64(v, l->i);
    case OG_QLIT_FLOAT: return og_vector_append_f64(v, l->f);
    case OG_QLIT_BOOL: return og_vector_append_bool(v, l->b);
    case OG_QLIT_LIST:
        for (size_t k = 0; k < l->nitems; k++) {
            const og_qlit *it = &l->items[k];
            og_status st;
            /* items of a numeric list may mix ints and floats; store in the list's type */
            if (v->child->type.id == OG_T_F64 && it->kind == OG_QLIT_INT)
                st = og_vector_append_f64(v->child, (double)it->i);
            else if (v->child->type.id == OG_T_I64 && it->kind == OG_QLIT_FLOAT)
                return og_err(OG_ERR_UNSUPPORTED, "a list literal mixing integers and floats must start with a float");
            else
                st = lit_append(v->child, it);
            if (st) return st;
        }
        return og_vector_append_list_end(v);
    }
    return og_err(OG_ERR_INTERNAL, "unknown literal kind");
}

/* A value for every row of p (or one row to broadcast).  *out is always an owned vector. */

static og_status column_of_var(exec *x, int var, uint64_t prop_id, const og_vector **col)
{
    const og_ir_var *v = &x->ir->vars[var];
    if (v->is_edge) return x->src->edge_column(x->src->ud, (size_t)v->type, prop_id, col);
    return x->src->node_column(x->src->ud, (size_t)v->type, prop_id, col);
}

/* The coded column (dictcol.h) of var's property when the source has one (a String property
 * with few distinct values), else *d = NULL; *rows as og_xr_var_rows. */
og_status og_xr_var_dict(exec *x, const pipe *p, int var, uint64_t prop_id, const og_dictcol **d,
                         const uint32_t **rows)
{
    *d = NULL;
    *rows = NULL;
    if (!og_exec_typed || !x->src->column_dict || prop_id == OG_PROP_ID_COLUMN || prop_id == OG_PROP_SRC_COLUMN ||
        prop_id == OG_PROP_DST_COLUMN)
        return OG_OK;
    const og_ir_var *iv = &x->ir->vars[var];
    OG_TRY(x->src->column_dict(x->src->ud, iv->is_edge, (size_t)iv->type, prop_id, d));
    if (*d) {
        int identity = p->identity_col >= 0 && p->var_col[var] == p->identity_col && (*d)->len == p->b.n_rows;
        *rows = identity ? NULL : p->b.cols[p->var_col[var]];
    }
    return OG_OK;
}

og_status og_xr_gather_var(exec *x, const pipe *p, int var, uint64_t prop_id, og_vector *out)
{
    if (var < 0 || (size_t)var >= x->ir->nvars || p->var_col[var] < 0)
        return og_err(OG_ERR_INTERNAL, "variable %d is not bound here", var);
    const og_ir_var *iv = &x->ir->vars[var];
    if (x->src->gather && p->b.n_rows <= OG_EXEC_POINT_GATHER_MAX) {
        og_status st = x->src->gather(x->src->ud, iv->is_edge, (size_t)iv->type, prop_id, p->b.cols[p->var_col[var]],
                                      p->b.n_rows, out);
        if (st != OG_ERR_UNSUPPORTED) return st;
        og_error_clear();
    }
    const og_dictcol *d;
    const uint32_t *drows;
    OG_TRY(og_xr_var_dict(x, p, var, prop_id, &d, &drows));
    if (d) return og_dictcol_gather(out, d, drows, p->b.n_rows);
    const og_vector *col;
    OG_TRY(column_of_var(x, var, prop_id, &col));
    if (p->identity_col >= 0 && p->var_col[var] == p->identity_col && col->len == p->b.n_rows) {
        *out = *col; /* every row of the table in order: borrow the column, copy nothing */
        out->flags &= ~OG_VEC_OWNED;
        return OG_OK;
    }
    return og_vector_gather(out, col, p->b.cols[p->var_col[var]], p->b.n_rows);
}

static og_status eval_cond(exec *x, const pipe *p, const og_ir_pred *pr, uint8_t *t, uint8_t *f);

/* A condition as a value: Bool per row, null where it is unknown. */
static og_status eval_pred_value(exec *x, const pipe *p, const og_ir_pred *pr, og_vector *out)
{
    size_t n = p->b.n_rows, bytes = (n + 7) / 8;
    OG_TRY(og_vector_init(out, (og_type){OG_T_BOOL, OG_T_NULL, 0}));
    uint8_t *t = malloc(bytes + 1), *f = malloc(bytes + 1);
    og_status st = t && f ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && n) st = eval_cond(x, p, pr, t, f);
    for (size_t i = 0; st == OG_OK && i < n; i++) {
        if (og_bit_get(t, i)) st = og_vector_append_bool(out, 1);
        else if (og_bit_get(f, i)) st = og_vector_append_bool(out, 0);
        else st = og_vector_append_null(out);
    }
    free(t);
    free(f);
    if (st) og_vector_free(out);
    return st;
}

/* `return { $p }`: per row the JSON text of {"@id": id, property: value, ...} without Blob and
 * Vector properties; null properties are left out. */
static og_status eval_object(exec *x, const pipe *p, int var, og_vector *out)
{
    const og_ir_var *iv = &x->ir->vars[var];
    const og_cat_type *t = iv->is_edge ? &x->ir->cat->edges[iv->type] : &x->ir->cat->nodes[iv->type];
    size_t n = p->b.n_rows, np = t->nprops + 1;
    og_vector *cols = calloc(np, sizeof *cols);
    const char **names = calloc(np, sizeof *names);
    size_t nc = 0;
    og_status st = cols && names ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        st = og_xr_gather_var(x, p, var, OG_PROP_ID_COLUMN, &cols[0]);
        if (st == OG_OK) names[nc++] = "@id";
    }
    for (size_t i = 0; i < t->nprops && st == OG_OK; i++) {
        const og_cat_prop *cp = &t->props[i];
        if (cp->type.id == OG_T_BLOB || cp->type.id == OG_T_VECTOR) continue;
        st = og_xr_gather_var(x, p, var, cp->id, &cols[nc]);
        if (st == OG_OK) names[nc++] = cp->name;
    }
    int inited = 0;
    if (st == OG_OK) st = og_vector_init(out, (og_type){OG_T_STRING, OG_T_NULL, 0});
    inited = st == OG_OK;
    const uint32_t *rows = p->b.cols[p->var_col[var]];
    for (size_t r = 0; r < n && st == OG_OK; r++) {
        if (rows[r] == UINT32_MAX) { /* a variable `optional { }` left unbound */
            st = og_vector_append_null(out);
            continue;
        }
        json_t *o = json_object();
        for (size_t c = 0; o && c < nc; c++) {
            size_t k = cols[c].len == 1 ? 0 : r;
            if (cols[c].len == 0 || og_vector_is_null(&cols[c], k)) continue;
            /* spelled as the same value is as a column (engine/jsonval.h): integers bare at
             * any width, a U64 above 2^63-1 included (the renderer reads it back whole) */
            json_object_set_new(o, names[c], og_jsonval_cell(&cols[c], k, OG_CELL_BIG_U64));
        }
        /* reals in their shortest round-trip spelling, as in every other column (F32 4.1, not 4.0999999999999996) */
        char *text = o ? og_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        st = text ? og_vector_append_bytes(out, text, strlen(text)) : og_err(OG_ERR_NOMEM, "out of memory");
        free(text);
    }
    for (size_t c = 0; c < nc; c++) og_vector_free(&cols[c]);
    free(cols);
    free(names);
    if (st && inited) og_vector_free(out);
    return st;
}

/* Arithmetic and scalar functions (engine/scalar.h) over their evaluated arguments. */
static og_status eval_computed(exec *x, const pipe *p, const og_ir_expr *e, og_vector *out)
{
    const og_ir_expr *src[3] = {e->arg, e->arg2, e->arg3};
    og_vector v[3];
    const og_vector *args[3];
    int n = 0;
    og_status st = OG_OK;
    for (int i = 0; i < 3 && st == OG_OK; i++) {
        if (!src[i]) continue;
        st = og_xr_eval(x, p, src[i], &v[n]);
        if (st == OG_OK) args[n] = &v[n], n++;
    }
    if (st == OG_OK && e->kind == OG_IRX_ARITH)
        st = og_scalar_arith(e->arith, args[0], n > 1 ? args[1] : NULL, e->type.t, out);
    else if (st == OG_OK)
        st = og_scalar_func(e->fn, args, n, e->type.t, out);
    for (int i = 0; i < n; i++) og_vector_free(&v[i]);
    return st;
}

/* length($p) (hops, I64) or nodes($p) (the nodes' ids, source first) of a shortest path. */
static og_status eval_path(exec *x, const pipe *p, const og_ir_expr *e, og_vector *out)
{
    const og_ir_var *iv = e->var >= 0 && (size_t)e->var < x->ir->nvars ? &x->ir->vars[e->var] : NULL;
    if (!iv || !iv->is_path || p->var_col[e->var] < 0 || !x->paths)
        return og_err(OG_ERR_INTERNAL, "a path function over an unbound path");
    const uint32_t *ids = p->b.cols[p->var_col[e->var]];
    const og_paths *ps = x->paths;
    const og_vector *idcol = NULL;
    if (e->fn == OG_QF_NODES) OG_TRY(x->src->node_column(x->src->ud, (size_t)iv->type, OG_PROP_ID_COLUMN, &idcol));
    OG_TRY(og_vector_init(out, e->type.t));
    og_status st = OG_OK;
    for (size_t r = 0; r < p->b.n_rows && st == OG_OK; r++) {
        if (ids[r] >= ps->n) { /* null: a path `optional { }` did not bind */
            st = og_vector_append_null(out);
            continue;
        }
        size_t a = ps->off[ids[r]], z = ps->off[ids[r] + 1];
        if (e->fn == OG_QF_LENGTH) {
            st = og_vector_append_i64(out, (int64_t)(z - a) - 1);
            continue;
        }
        for (size_t k = a; k < z && st == OG_OK; k++) st = og_vector_append_from(out->child, idcol, ps->nodes[k]);
        if (st == OG_OK) st = og_vector_append_list_end(out);
    }
    if (st) og_vector_free(out);
    return st;
}

og_status og_xr_eval(exec *x, const pipe *p, const og_ir_expr *e, og_vector *out)
{
    switch (e->kind) {
    case OG_IRX_PROP: return og_xr_gather_var(x, p, e->var, e->prop_id, out);
    case OG_IRX_ID: return og_xr_gather_var(x, p, e->var, OG_PROP_ID_COLUMN, out);
    case OG_IRX_LIT: {
        OG_TRY(og_vector_init(out, lit_type(&e->lit)));
        og_status st = lit_append(out, &e->lit);
        if (st) og_vector_free(out);
        return st;
    }
    case OG_IRX_NOW:
        OG_TRY(og_vector_init(out, (og_type){OG_T_DATE64, 0, 0}));
        return og_vector_append_i64(out, x->now_ms);
    case OG_IRX_PARAM: {
        const og_vector *pv = &x->params[e->param];
        const og_ir_param *decl = &x->ir->params[e->param];
        if (pv->len == 0 && !decl->type.nullable)
            return og_err(OG_ERR_INVALID, "parameter '%s' not provided", decl->name);
        uint32_t zero = pv->len ? 0 : UINT32_MAX;
        return og_vector_gather(out, pv, &zero, 1);
    }
    case OG_IRX_SCORE: case OG_IRX_TEXT: {
        int var = e->kind == OG_IRX_SCORE ? x->ir->ranks[e->rank].var : e->text->var;
        if (!x->search || var < 0 || p->var_col[var] < 0)
            return og_err(OG_ERR_INTERNAL, "a search function over an unbound variable");
        const uint32_t *rows = p->b.cols[p->var_col[var]];
        if (e->kind == OG_IRX_SCORE) return og_search_score(x->search, e->rank, rows, p->b.n_rows, out);
        return og_search_text_eval(x->search, e->text, rows, p->b.n_rows, out);
    }
    case OG_IRX_PRED: return eval_pred_value(x, p, e->pred, out);
    case OG_IRX_OBJECT: return eval_object(x, p, e->var, out);
    case OG_IRX_META:
        return og_xr_gather_var(x, p, e->var, e->meta == OG_IR_META_SRC ? OG_PROP_SRC_COLUMN : OG_PROP_DST_COLUMN, out);
    case OG_IRX_ARITH: case OG_IRX_FUNC: return eval_computed(x, p, e, out);
    case OG_IRX_PATH: return eval_path(x, p, e, out);
    case OG_IRX_AGG: case OG_IRX_COLUMN:
        return og_err(OG_ERR_INTERNAL, "aggregate or column reference evaluated outside projection");
    }
    return og_err(OG_ERR_INTERNAL, "unknown expression kind %d", (int)e->kind);
}

static og_cmp_op cmp_op(og_ir_cmp c);
og_cmp_op og_xr_cmp_op(og_ir_cmp c) { return cmp_op(c); }

static og_cmp_op cmp_op(og_ir_cmp c)
{
    switch (c) {
    case OG_IR_EQ: return OG_CMP_EQ;
    case OG_IR_NE: return OG_CMP_NE;
    case OG_IR_LT: return OG_CMP_LT;
    case OG_IR_LE: return OG_CMP_LE;
    case OG_IR_GT: return OG_CMP_GT;
    case OG_IR_GE: return OG_CMP_GE;
    case OG_IR_LIST_CONTAINS: case OG_IR_STR_CONTAINS: return OG_CMP_CONTAINS;
    case OG_IR_STARTS_WITH: return OG_CMP_STARTS_WITH;
    }
    return OG_CMP_EQ;
}

static og_status apply_pred(exec *x, const pipe *p, const og_ir_pred *pr, uint8_t *sel);

static void bit_put(uint8_t *b, size_t i, int v)
{
    if (v) b[i >> 3] |= (uint8_t)(1u << (i & 7));
    else b[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* Three-valued evaluation of a condition over the rows of p: t = the rows where it is true,
 * f = the rows where it is false (a row in neither is unknown: a null was compared). */
static og_status eval_cond(exec *x, const pipe *p, const og_ir_pred *pr, uint8_t *t, uint8_t *f)
{
    size_t n = p->b.n_rows, bytes = (n + 7) / 8;
    switch (pr->kind) {
    case OG_IRP_AND: case OG_IRP_OR: case OG_IRP_IFF: {
        uint8_t *t2 = malloc(bytes + 1), *f2 = malloc(bytes + 1);
        og_status st = t2 && f2 ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
        if (st == OG_OK) st = eval_cond(x, p, pr->a, t, f);
        if (st == OG_OK) st = eval_cond(x, p, pr->b, t2, f2);
        for (size_t i = 0; st == OG_OK && i < bytes; i++) {
            uint8_t ta = t[i], fa = f[i], tb = t2[i], fb = f2[i];
            if (pr->kind == OG_IRP_AND) t[i] = ta & tb, f[i] = fa | fb;
            else if (pr->kind == OG_IRP_OR) t[i] = ta | tb, f[i] = fa & fb;
            else {
                uint8_t same = (uint8_t)((ta & tb) | (fa & fb)), diff = (uint8_t)((ta & fb) | (fa & tb));
                t[i] = pr->negated ? diff : same;
                f[i] = pr->negated ? same : diff;
            }
        }
        free(t2);
        free(f2);
        return st;
    }
    case OG_IRP_NOT:
        return eval_cond(x, p, pr->a, f, t);
    case OG_IRP_TEST: case OG_IRP_ISNULL: {
        og_vector v;
        OG_TRY(og_xr_eval(x, p, pr->l, &v));
        og_status st = OG_OK;
        if (pr->kind == OG_IRP_TEST && v.type.id != OG_T_BOOL && v.type.id != OG_T_NULL)
            st = og_err(OG_ERR_INTERNAL, "a bare condition is not a Bool value");
        for (size_t i = 0; st == OG_OK && i < n; i++) {
            size_t k = v.len == 1 ? 0 : i;
            int isnull = v.len == 0 || og_vector_is_null(&v, k);
            if (pr->kind == OG_IRP_ISNULL) {
                int r = pr->negated ? !isnull : isnull;
                bit_put(t, i, r);
                bit_put(f, i, !r);
            } else {
                int val = !isnull && og_bit_get((const uint8_t *)v.values, k);
                bit_put(t, i, !isnull && val);
                bit_put(f, i, !isnull && !val);
            }
        }
        og_vector_free(&v);
        return st;
    }
    case OG_IRP_CMP: {
        memset(t, 0xff, bytes);
        memset(f, 0, bytes);
        if (!pr->l || !pr->r) {
            memset(t, 0, bytes);
            return OG_OK;
        }
        og_vector l, r;
        OG_TRY(og_xr_eval(x, p, pr->l, &l));
        og_status st = og_xr_eval(x, p, pr->r, &r);
        if (st == OG_OK) {
            if (n) st = og_filter_compare(&l, cmp_op(pr->op), &r, t, n);
            for (size_t i = 0; st == OG_OK && i < n; i++) {
                int ln = l.len == 0 || og_vector_is_null(&l, l.len == 1 ? 0 : i);
                int rn = r.len == 0 || og_vector_is_null(&r, r.len == 1 ? 0 : i);
                bit_put(f, i, !ln && !rn && !og_bit_get(t, i));
            }
            og_vector_free(&r);
        }
        og_vector_free(&l);
        return st;
    }
    case OG_IRP_TEXT: {
        memset(t, 0xff, bytes);
        og_status st = apply_pred(x, p, pr, t);
        for (size_t i = 0; st == OG_OK && i < n; i++) bit_put(f, i, !og_bit_get(t, i));
        return st;
    }
    }
    return og_err(OG_ERR_INTERNAL, "unknown predicate kind %d", (int)pr->kind);
}

/* Clears in sel the rows of p that fail pred. */
static og_status apply_pred(exec *x, const pipe *p, const og_ir_pred *pr, uint8_t *sel)
{
    size_t n = p->b.n_rows;
    if (pr->kind != OG_IRP_CMP && pr->kind != OG_IRP_TEXT) {
        size_t bytes = (n + 7) / 8;
        uint8_t *t = malloc(bytes + 1), *f = malloc(bytes + 1);
        og_status st = t && f ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
        if (st == OG_OK && n) st = eval_cond(x, p, pr, t, f);
        for (size_t i = 0; st == OG_OK && i < bytes; i++) sel[i] &= t[i];
        free(t);
        free(f);
        return st;
    }
    if (pr->kind == OG_IRP_TEXT) {
        if (!x->search || p->var_col[pr->text.var] < 0)
            return og_err(OG_ERR_INTERNAL, "a text predicate over an unbound variable");
        return og_search_text_filter(x->search, &pr->text, p->b.cols[p->var_col[pr->text.var]], n, sel);
    }
    if (!pr->l || !pr->r) { /* a comparison with NULL matches nothing */
        memset(sel, 0, (n + 7) / 8);
        return OG_OK;
    }
    og_vector l, r;
    OG_TRY(og_xr_eval(x, p, pr->l, &l));
    og_status st = og_xr_eval(x, p, pr->r, &r);
    if (st == OG_OK) {
        if (n) st = og_filter_compare(&l, cmp_op(pr->op), &r, sel, n);
        og_vector_free(&r);
    }
    og_vector_free(&l);
    return st;
}

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "og_xr_filter_rows shares its selection between 64-bit words (colscan.h) and bytes: little-endian only"
#endif

/* The rows of the column of `var`.`prop` as colscan.h wants them: *col the whole column,
 * *rows the binding's row list or NULL when binding row i is column row i. */
og_status og_xr_var_rows(exec *x, const pipe *p, int var, uint64_t prop_id, const og_vector **col,
                         const uint32_t **rows)
{
    OG_TRY(column_of_var(x, var, prop_id, col));
    int identity = p->identity_col >= 0 && p->var_col[var] == p->identity_col && (*col)->len == p->b.n_rows;
    *rows = identity ? NULL : p->b.cols[p->var_col[var]];
    return OG_OK;
}

/* Appends to tmp the ranges of condition pr when all of it is a conjunction of comparisons
 * the typed kernels take (colscan.h): a bound variable's numeric or date property against a
 * literal or a parameter.  *ok = 0 when some part is not. */
static og_status pred_ranges(exec *x, const pipe *p, const og_ir_pred *pr, og_colrange *tmp, size_t *nt, size_t cap,
                             int *ok)
{
    if (pr->kind == OG_IRP_AND) {
        OG_TRY(pred_ranges(x, p, pr->a, tmp, nt, cap, ok));
        return *ok ? pred_ranges(x, p, pr->b, tmp, nt, cap, ok) : OG_OK;
    }
    *ok = 0;
    if (*nt == cap || pr->kind != OG_IRP_CMP || !pr->l || !pr->r || pr->op > OG_IR_GE) return OG_OK;
    int k_left = pr->l->kind != OG_IRX_PROP;
    const og_ir_expr *prop = k_left ? pr->r : pr->l, *k = k_left ? pr->l : pr->r;
    if (prop->kind != OG_IRX_PROP || (k->kind != OG_IRX_LIT && k->kind != OG_IRX_PARAM)) return OG_OK;
    if (prop->var < 0 || (size_t)prop->var >= x->ir->nvars || p->var_col[prop->var] < 0) return OG_OK;
    if (x->ir->vars[prop->var].optional) return OG_OK; /* null rows: the generic path reads them */
    const og_vector *col = NULL;
    const og_dictcol *d;
    const uint32_t *rows;
    OG_TRY(og_xr_var_dict(x, p, prop->var, prop->prop_id, &d, &rows));
    if (!d) OG_TRY(og_xr_var_rows(x, p, prop->var, prop->prop_id, &col, &rows));
    og_vector kv;
    OG_TRY(og_xr_eval(x, p, k, &kv));
    *ok = d ? og_colrange_prepare_dict(&tmp[*nt], d, rows, cmp_op(pr->op), &kv, k_left)
            : og_colrange_prepare(&tmp[*nt], col, rows, cmp_op(pr->op), &kv, k_left);
    og_vector_free(&kv);
    if (!*ok) return OG_OK;
    if (d) {
        (*nt)++;
        return OG_OK;
    }
    const og_ir_var *iv = &x->ir->vars[prop->var];
    if (!rows && !iv->is_edge && x->src->node_zones && col->len > OG_COLZONE_ROWS) { /* whole column: zones */
        const og_colzones *z = NULL;
        OG_TRY(x->src->node_zones(x->src->ud, (size_t)iv->type, prop->prop_id, &z));
        if (z && z->nzones == (col->len + OG_COLZONE_ROWS - 1) / OG_COLZONE_ROWS) tmp[*nt].zones = z;
    }
    (*nt)++;
    return OG_OK;
}

/* The predicates of preds the typed kernels take, over more rows than point gathers serve, as
 * ranges in rs (*nr of them; those over one column fused); handled[i] marks them. */
static og_status typed_ranges(exec *x, const pipe *p, const og_ir_pred *preds, size_t npreds, og_colrange *rs,
                              size_t *nr, unsigned char *handled)
{
    *nr = 0;
    if (!og_exec_typed || p->b.n_rows <= OG_EXEC_POINT_GATHER_MAX) return OG_OK;
    og_colrange tmp[16];
    for (size_t i = 0; i < npreds; i++) {
        size_t nt = 0;
        int ok = 1;
        OG_TRY(pred_ranges(x, p, &preds[i], tmp, &nt, sizeof tmp / sizeof tmp[0], &ok));
        if (!ok) continue;
        handled[i] = 1;
        for (size_t t = 0; t < nt; t++) {
            size_t j = 0;
            while (j < *nr && !og_colrange_merge(&rs[j], &tmp[t])) j++;
            if (j == *nr) rs[(*nr)++] = tmp[t];
        }
    }
    return OG_OK;
}

/* Keeps the rows of p satisfying every predicate: the typed ones in one pass over their
 * columns (colscan.h), then the others on the rows still selected. */
og_status og_xr_filter_rows(exec *x, pipe *p, const og_ir_pred *preds, size_t npreds)
{
    if (!npreds || !p->b.n_rows) return OG_OK;
    size_t words = (p->b.n_rows + 63) / 64;
    uint64_t *sel = malloc(words * sizeof *sel);
    og_colrange *rs = malloc(npreds * 16 * sizeof *rs);
    unsigned char *handled = calloc(npreds, 1);
    og_status st = sel && rs && handled ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    size_t nr = 0;
    if (st == OG_OK) {
        memset(sel, 0xff, words * sizeof *sel);
        st = typed_ranges(x, p, preds, npreds, rs, &nr, handled);
    }
    if (st == OG_OK && nr) og_colscan_filter(rs, nr, p->b.n_rows, sel);
    for (size_t i = 0; i < npreds && st == OG_OK; i++)
        if (!handled[i]) st = apply_pred(x, p, &preds[i], (uint8_t *)sel);
    if (st == OG_OK) og_bindings_select(&p->b, (const uint8_t *)sel);
    free(sel);
    free(rs);
    free(handled);
    return st;
}

/* ---- filter placement ---------------------------------------------------------------------
 *
 * The compiler pushes a one-variable predicate into the operator that binds the variable and
 * writes every other filter after all the scans and traversals of its block.  A filter over
 * two bindings can run as soon as both exist: a traversal after it then starts from the rows
 * that survived instead of from every pair (a filter only drops rows, expansion is per row,
 * and results are totally ordered at the end, so the answer is the same).  og_xr_schedule_ops
 * orders a pipeline so: each FILTER right after the operator that binds the last variable it
 * reads.  A filter over a search score or an aggregate stays where it was written. */

void og_xr_expr_vars(const og_ir_expr *e, unsigned char *vars, int *opaque)
{
    if (!e) return;
    switch (e->kind) {
    case OG_IRX_PROP: case OG_IRX_ID: case OG_IRX_PATH:
        if (e->var >= 0) vars[e->var] = 1;
        break;
    case OG_IRX_PARAM: case OG_IRX_LIT: case OG_IRX_NOW: break;
    case OG_IRX_TEXT:
        if (e->text && e->text->var >= 0) vars[e->text->var] = 1;
        break;
    case OG_IRX_ARITH: case OG_IRX_FUNC:
        og_xr_expr_vars(e->arg, vars, opaque);
        og_xr_expr_vars(e->arg2, vars, opaque);
        og_xr_expr_vars(e->arg3, vars, opaque);
        break;
    default: *opaque = 1; break;
    }
}

static void pred_vars(const og_ir_pred *p, unsigned char *vars, int *opaque)
{
    if (!p) return;
    switch (p->kind) {
    case OG_IRP_CMP:
        og_xr_expr_vars(p->l, vars, opaque);
        og_xr_expr_vars(p->r, vars, opaque);
        break;
    case OG_IRP_TEXT:
        if (p->text.var >= 0) vars[p->text.var] = 1;
        break;
    case OG_IRP_AND: case OG_IRP_OR: case OG_IRP_IFF:
        pred_vars(p->a, vars, opaque);
        pred_vars(p->b, vars, opaque);
        break;
    case OG_IRP_NOT: pred_vars(p->a, vars, opaque); break;
    case OG_IRP_TEST: case OG_IRP_ISNULL: og_xr_expr_vars(p->l, vars, opaque); break;
    }
}

/* 1 when filter op may run with the variables in `bound`. */
int og_xr_filter_ready(const og_ir_query *ir, const og_ir_op *op, const unsigned char *bound, unsigned char *vars)
{
    int opaque = 0;
    memset(vars, 0, ir->nvars ? ir->nvars : 1);
    pred_vars(&op->pred, vars, &opaque);
    if (opaque) return 0;
    for (size_t v = 0; v < ir->nvars; v++)
        if (vars[v] && !bound[v]) return 0;
    return 1;
}

void og_xr_mark_bound(const og_ir_op *op, unsigned char *bound)
{
    if ((op->kind == OG_IR_SCAN || op->kind == OG_IR_PATH) && op->var >= 0) bound[op->var] = 1;
    if (op->kind == OG_IR_ANTIJOIN && op->sub == OG_QSUB_OPTIONAL)
        for (size_t k = 0; k < op->nopt; k++) bound[op->opt_vars[k]] = 1;
    if (op->kind == OG_IR_EXPAND) {
        if (op->dst >= 0) bound[op->dst] = 1;
        if (op->edge_var >= 0) bound[op->edge_var] = 1;
    }
}

/* order[0..nops) = the run order of ops, given the variables bound before the pipeline
 * (bound is updated to those bound after it). */
og_status og_xr_schedule_ops(const og_ir_query *ir, const og_ir_op *ops, size_t nops, unsigned char *bound,
                             size_t *order)
{
    unsigned char *placed = calloc(nops ? nops : 1, 1), *vars = malloc(ir->nvars ? ir->nvars : 1);
    if (!placed || !vars) {
        free(placed);
        free(vars);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < nops; i++) {
        if (placed[i]) continue;
        order[k++] = i;
        placed[i] = 1;
        og_xr_mark_bound(&ops[i], bound);
        if (!og_exec_place_filters || (ops[i].kind != OG_IR_SCAN && ops[i].kind != OG_IR_EXPAND && ops[i].kind != OG_IR_PATH))
            continue;
        for (size_t j = i + 1; j < nops; j++)
            if (!placed[j] && ops[j].kind == OG_IR_FILTER && og_xr_filter_ready(ir, &ops[j], bound, vars)) {
                order[k++] = j;
                placed[j] = 1;
            }
    }
    free(placed);
    free(vars);
    return OG_OK;
}

static xstep *step_of(exec *x, const og_ir_op *op)
{
    for (size_t i = 0; x->steps && i < x->nsteps; i++)
        if (x->steps[i].op == op) return &x->steps[i];
    return NULL;
}

/* ---- operators --------------------------------------------------------------------------- */

static og_status run_ops(exec *x, pipe *p, const og_ir_op *ops, size_t nops);

/* When one of the scan's predicates is `key = constant` on a node type with a single @key,
 * the canonical id of the constant (catalog.h) names the one row it can match: *hit is set
 * and *row is that row or UINT32_MAX (no such node).  Anything else leaves *hit 0.  *used
 * (may be NULL) receives the index of that predicate: the row found satisfies it by
 * construction (a node's id is derived from its key, and key properties never change:
 * mutate.h), so the scan need not evaluate it again — which would read the whole key column
 * into memory once a process has run a few lookups (og_tableview_gather). */
static og_status key_lookup_ex(exec *x, const og_ir_op *op, int *hit, uint32_t *row, size_t *used);
og_status og_xr_key_lookup(exec *x, const og_ir_op *op, int *hit, uint32_t *row)
{
    return key_lookup_ex(x, op, hit, row, NULL);
}

static og_status key_lookup_ex(exec *x, const og_ir_op *op, int *hit, uint32_t *row, size_t *used)
{
    *hit = 0;
    if (used) *used = SIZE_MAX;
    if (!x->src->node_find_id) return OG_OK;
    for (size_t i = 0; i < op->npreds; i++) { /* `$v.@id = constant`: the id itself */
        const og_ir_pred *pr = &op->preds[i];
        if (pr->kind != OG_IRP_CMP || pr->op != OG_IR_EQ || !pr->l || !pr->r) continue;
        const og_ir_expr *id = pr->l->kind == OG_IRX_ID ? pr->l : pr->r, *val = id == pr->l ? pr->r : pr->l;
        if (id->kind != OG_IRX_ID || id->var != op->var || (val->kind != OG_IRX_LIT && val->kind != OG_IRX_PARAM))
            continue;
        og_vector v;
        OG_TRY(og_exec_const(x->ir, val, x->params, x->now_ms, &v));
        og_status st = OG_OK;
        if (v.len == 1 && !og_vector_is_null(&v, 0) && v.type.id == OG_T_STRING) {
            size_t len;
            const char *s = (const char *)og_vector_get_bytes(&v, 0, &len);
            st = x->src->node_find_id(x->src->ud, (size_t)op->node_type, s, len, row);
            if (st == OG_OK) *hit = 1;
            if (st == OG_OK && used) *used = i;
        }
        og_vector_free(&v);
        if (st || *hit) return st;
    }
    const og_cat_type *t = &x->ir->cat->nodes[op->node_type];
    if (t->nkey != 1) return OG_OK;
    const og_cat_prop *kp = &t->props[t->key_props[0]];
    for (size_t i = 0; i < op->npreds; i++) {
        const og_ir_pred *pr = &op->preds[i];
        if (pr->kind != OG_IRP_CMP || pr->op != OG_IR_EQ || !pr->l || !pr->r) continue;
        const og_ir_expr *prop = pr->l, *val = pr->r;
        if (prop->kind != OG_IRX_PROP) prop = pr->r, val = pr->l;
        if (prop->kind != OG_IRX_PROP || prop->var != op->var || prop->prop_id != kp->id) continue;
        if (val->kind != OG_IRX_LIT && val->kind != OG_IRX_PARAM) continue;
        og_vector v;
        OG_TRY(og_exec_const(x->ir, val, x->params, x->now_ms, &v));
        og_key_value kv;
        memset(&kv, 0, sizeof kv);
        int usable = v.len == 1 && !og_vector_is_null(&v, 0);
        og_type_id vt = v.type.id, pt = kp->type.id;
        if (usable && vt == OG_T_STRING && pt == OG_T_STRING) {
            kv.s = (const char *)og_vector_get_bytes(&v, 0, &kv.len);
        } else if (usable && (vt == OG_T_I32 || vt == OG_T_I64) && (pt == OG_T_I32 || pt == OG_T_I64)) {
            kv.i = og_vector_get_i64(&v, 0);
        } else if (usable && vt == pt && (vt == OG_T_DATE32 || vt == OG_T_DATE64)) {
            kv.i = og_vector_get_i64(&v, 0);
        } else {
            usable = 0; /* other pairings (coercions) go through the scan */
        }
        og_status st = OG_OK;
        if (usable) {
            og_buf id = OG_BUF_INIT;
            st = og_key_id(&id, t, &kv, 1);
            if (st == OG_OK) {
                st = x->src->node_find_id(x->src->ud, (size_t)op->node_type, og_buf_cstr(&id), id.len, row);
                if (st == OG_OK) *hit = 1;
                if (st == OG_OK && used) *used = i;
            }
            og_buf_free(&id);
        }
        og_vector_free(&v);
        if (st || *hit) return st;
    }
    return OG_OK;
}

/* The cross join of p's rows with a separate component's scan s (one column: op->var), with
 * filters that become ready there applied while the pairs are formed, a block of left rows
 * at a time: the pairs a filter drops are never all held at once.  *pairs receives how many
 * pairs were formed. */
static og_status cross_filtered(exec *x, pipe *p, const og_ir_op *op, const og_bindings *s,
                                const og_ir_op *const *filters, size_t nf, uint64_t *pairs)
{
    size_t ncols = p->b.n_cols + 1;
    og_bindings joined;
    OG_TRY(og_bindings_init(&joined, ncols));
    *pairs = 0;
    size_t blk = s->n_rows ? 65536 / s->n_rows : p->b.n_rows;
    if (blk == 0) blk = 1;
    pipe part = {0};
    part.identity_col = -1;
    part.started = 1;
    part.var_col = malloc((x->ir->nvars ? x->ir->nvars : 1) * sizeof *part.var_col);
    uint32_t **view = malloc((p->b.n_cols ? p->b.n_cols : 1) * sizeof *view);
    uint32_t *rowv = malloc(ncols * sizeof *rowv);
    og_status st = part.var_col && view && rowv ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        memcpy(part.var_col, p->var_col, x->ir->nvars * sizeof *part.var_col);
        part.var_col[op->var] = (int)(ncols - 1);
    }
    for (size_t a0 = 0; st == OG_OK && a0 < p->b.n_rows; a0 += blk) {
        size_t n = p->b.n_rows - a0 < blk ? p->b.n_rows - a0 : blk;
        for (size_t c = 0; c < p->b.n_cols; c++) view[c] = p->b.cols[c] + a0;
        og_bindings left = {p->b.n_cols, n, n, view};
        st = og_bindings_cross(&part.b, &left, s);
        if (st) break;
        *pairs += part.b.n_rows;
        for (size_t f = 0; f < nf && st == OG_OK; f++) st = og_xr_filter_rows(x, &part, &filters[f]->pred, 1);
        for (size_t r = 0; r < part.b.n_rows && st == OG_OK; r++) {
            for (size_t c = 0; c < ncols; c++) rowv[c] = part.b.cols[c][r];
            st = og_bindings_push(&joined, rowv);
        }
        og_bindings_free(&part.b);
    }
    free(part.var_col);
    free(view);
    free(rowv);
    if (st == OG_OK) {
        og_bindings_free(&p->b);
        p->b = joined;
        p->var_col[op->var] = (int)(p->b.n_cols - 1);
    } else {
        og_bindings_free(&joined);
    }
    return st;
}


static og_status op_scan_ex(exec *x, pipe *p, const og_ir_op *op, const og_ir_op *const *filters, size_t nf,
                            uint64_t *pairs);

/* A plain scan of all n rows whose every predicate the typed kernels take: the kept rows
 * straight from one pass over the columns into *out (*done = 1), without binding all n rows
 * first.  *done = 0: not this shape, nothing done. */
static og_status scan_typed(exec *x, const og_ir_op *op, size_t n, og_bindings *out, int *done)
{
    *done = 0;
    if (!og_exec_typed || !op->npreds || n <= OG_EXEC_POINT_GATHER_MAX || op->var < 0) return OG_OK;
    pipe t = {0};
    uint32_t *none = NULL;
    t.b = (og_bindings){1, n, n, &none}; /* binding row i = table row i (identity_col) */
    t.identity_col = 0;
    t.var_col = malloc((x->ir->nvars ? x->ir->nvars : 1) * sizeof *t.var_col);
    og_colrange *rs = malloc(op->npreds * 16 * sizeof *rs);
    unsigned char *handled = calloc(op->npreds, 1);
    uint64_t *sel = malloc(((n + 63) / 64) * sizeof *sel);
    og_status st = t.var_col && rs && handled && sel ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    size_t nr = 0;
    if (st == OG_OK) {
        for (size_t v = 0; v < x->ir->nvars; v++) t.var_col[v] = -1;
        t.var_col[op->var] = 0;
        st = typed_ranges(x, &t, op->preds, op->npreds, rs, &nr, handled);
    }
    int all = st == OG_OK;
    for (size_t i = 0; all && i < op->npreds; i++) all = handled[i];
    for (size_t i = 0; all && i < nr; i++) all = !rs[i].rows && og_colrange_len(&rs[i]) == n;
    if (all) {
        memset(sel, 0xff, ((n + 63) / 64) * sizeof *sel);
        og_colscan_filter(rs, nr, n, sel);
        st = og_bindings_from_bits(out, sel, n);
        *done = st == OG_OK;
    }
    free(t.var_col);
    free(rs);
    free(handled);
    free(sel);
    return st;
}

static og_status op_scan(exec *x, pipe *p, const og_ir_op *op)
{
    uint64_t pairs;
    return op_scan_ex(x, p, op, NULL, 0, &pairs);
}

/* A ranking by `kind` of op's own variable, with a limit, whose match block is op's bare scan
 * (one op, no predicates, no aggregate): the search layer can name its candidate rows. */
static int bare_scan_ranked_by(const exec *x, const og_ir_op *op, int kind)
{
    const og_ir_query *ir = x->ir;
    return ir->rank_order >= 0 && !ir->aggregate && x->window && ir->nops == 1 && !op->npreds &&
           (int)ir->ranks[ir->rank_order].kind == kind && ir->ranks[ir->rank_order].var == op->var;
}

/* A scan; when it joins a separate component, the nf filters (ready once op->var is bound)
 * are applied during the join (cross_filtered).  *pairs: rows formed before those filters. */
static og_status op_scan_ex(exec *x, pipe *p, const og_ir_op *op, const og_ir_op *const *filters, size_t nf,
                            uint64_t *pairs)
{
    size_t n;
    OG_TRY(x->src->node_rows(x->src->ud, (size_t)op->node_type, &n));
    *pairs = 0;
    int hit;
    uint32_t one;
    size_t key_pred;
    OG_TRY(key_lookup_ex(x, op, &hit, &one, &key_pred));
    xstep *xs = step_of(x, op);
    if (xs) {
        xs->key_lookup = hit;
        xs->cross = p->started;
    }
    pipe s = {0};
    og_status st = OG_OK;
    uint32_t *cand = NULL; /* rows named by scalar or vector index files (scan_index.h, search.h) */
    size_t ncand = 0;
    int indexed = 0, prefiltered = 0;
    if (!hit) {
        OG_TRY(og_scan_index_candidates(x->ir, x->src, x->params, x->now_ms, op, n, &cand, &ncand, &indexed));
        /* nearest / rrf with a limit over the bare scan: bind only the rows the search layer
         * names (vector index candidates; the first `limit` fused entities) */
        if (!indexed && bare_scan_ranked_by(x, op, OG_IR_RANK_NEAREST))
            OG_TRY(og_search_nearest_candidates(x->search, x->ir->rank_order, x->window, &cand, &ncand, &indexed));
        if (!indexed && bare_scan_ranked_by(x, op, OG_IR_RANK_RRF))
            OG_TRY(og_search_rrf_candidates(x->search, x->ir->rank_order, x->window, &cand, &ncand, &indexed));
    }
    if (hit) {
        st = og_bindings_from_rows(&s.b, &one, one == UINT32_MAX ? 0 : 1);
        s.identity_col = -1;
    } else if (indexed) {
        st = og_bindings_from_rows(&s.b, cand, ncand);
        free(cand);
        s.identity_col = -1;
    } else if (x->ir->rank_order >= 0 && !x->ir->aggregate && x->ir->ranks[x->ir->rank_order].kind == OG_IR_RANK_BM25 &&
               x->ir->ranks[x->ir->rank_order].var == op->var) {
        /* a bm25 ordering keeps only rows sharing a query term: bind just those (search.h); with
         * a limit over the bare scan (one result row per candidate), just those that can make
         * the first `limit` rows */
        const uint32_t *rows;
        size_t m;
        if (x->window && x->ir->nops == 1 && !op->npreds) {
            uint32_t *top = NULL;
            st = og_search_candidates_top(x->search, x->ir->rank_order, x->window, &top, &m);
            if (st == OG_OK) st = og_bindings_from_rows(&s.b, top, m);
            free(top);
        } else {
            st = og_search_candidates(x->search, x->ir->rank_order, &rows, &m);
            if (st == OG_OK) st = og_bindings_from_rows(&s.b, rows, m);
        }
        s.identity_col = -1;
    } else if ((st = scan_typed(x, op, n, &s.b, &prefiltered)) != OG_OK || prefiltered) {
        s.identity_col = -1; /* only the rows its predicates keep, straight from the columns */
    } else {
        uint32_t *rows = malloc((n ? n : 1) * sizeof *rows);
        if (!rows) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)i;
        st = og_bindings_from_rows(&s.b, rows, n);
        free(rows);
        s.identity_col = 0;
    }
    if (st) return st;
    s.var_col = calloc(x->ir->nvars ? x->ir->nvars : 1, sizeof *s.var_col);
    if (!s.var_col) {
        og_bindings_free(&s.b);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t v = 0; v < x->ir->nvars; v++) s.var_col[v] = -1;
    s.var_col[op->var] = 0;
    if (!prefiltered && hit && key_pred < op->npreds) { /* every predicate but the key's (key_lookup_ex) */
        og_ir_pred *rest = op->npreds > 1 ? malloc((op->npreds - 1) * sizeof *rest) : NULL;
        if (op->npreds > 1 && !rest) st = og_err(OG_ERR_NOMEM, "out of memory");
        size_t nrest = 0;
        for (size_t i = 0; rest && i < op->npreds; i++)
            if (i != key_pred) rest[nrest++] = op->preds[i];
        if (st == OG_OK) st = og_xr_filter_rows(x, &s, rest, nrest);
        free(rest);
    } else if (!prefiltered) {
        st = og_xr_filter_rows(x, &s, op->preds, op->npreds);
    }
    if (st == OG_OK) {
        if (!p->started) {
            og_bindings_free(&p->b);
            p->b = s.b;
            s.b = (og_bindings){0};
            for (size_t v = 0; v < x->ir->nvars; v++) p->var_col[v] = -1;
            p->var_col[op->var] = 0;
            p->started = 1;
            *pairs = p->b.n_rows;
        } else { /* a separate component: a hash join on an equality, else the cross join */
            int used = 0;
            if (og_exec_hash_join) st = og_xr_hash_join(x, p, op, &s, filters, nf, pairs, &used);
            if (st == OG_OK && !used) st = cross_filtered(x, p, op, &s.b, filters, nf, pairs);
            if (xs) xs->hash = used;
            nf = 0;
        }
    }
    og_bindings_free(&s.b);
    free(s.var_col);
    return st;
}

static og_dir topo_dir(og_qdir d) { return d == OG_QDIR_OUT ? OG_DIR_OUT : d == OG_QDIR_IN ? OG_DIR_IN : OG_DIR_BOTH; }

static og_status op_expand(exec *x, pipe *p, const og_ir_op *op)
{
    if (p->var_col[op->src] < 0) return og_err(OG_ERR_INTERNAL, "expand from an unbound variable");
    const og_cat_type *et = &x->ir->cat->edges[op->edge_type];
    uint32_t lo = op->min_hops, hi = op->max_hops;
    if (et->from_node != et->to_node) {
        if (lo > 1) { /* a cross-type edge cannot be walked twice */
            p->b.n_rows = 0;
            if (op->dst >= 0 && !op->closing) {
                og_bindings empty;
                OG_TRY(og_bindings_init(&empty, p->b.n_cols + 1 + (op->edge_var >= 0)));
                og_bindings_free(&p->b);
                p->b = empty;
                p->var_col[op->dst] = (int)(p->b.n_cols - 1 - (op->edge_var >= 0));
                if (op->edge_var >= 0) p->var_col[op->edge_var] = (int)(p->b.n_cols - 1);
            }
            return OG_OK;
        }
        hi = 1;
    }
    const og_topology *t;
    OG_TRY(x->src->edge_topology(x->src->ud, (size_t)op->edge_type, &t));
    og_dir dir = topo_dir(op->dir);
    int with_edge = op->edge_var >= 0;
    if (op->closing && !with_edge) {
        OG_TRY(og_expand_filter(&p->b, (size_t)p->var_col[op->src], (size_t)p->var_col[op->dst], t, dir, lo, hi));
        return og_xr_filter_rows(x, p, op->preds, op->npreds);
    }
    og_bindings out;
    OG_TRY(og_expand(&out, &p->b, (size_t)p->var_col[op->src], t, dir, lo, hi, with_edge));
    og_bindings_free(&p->b);
    p->b = out;
    int new_dst = (int)(p->b.n_cols - 1 - with_edge);
    if (with_edge) p->var_col[op->edge_var] = (int)(p->b.n_cols - 1);
    if (op->closing) {
        /* keep rows whose reached node is the existing binding */
        int old = p->var_col[op->dst];
        size_t w = 0;
        for (size_t r = 0; r < p->b.n_rows; r++) {
            if (p->b.cols[old][r] != p->b.cols[new_dst][r]) continue;
            for (size_t c = 0; c < p->b.n_cols; c++) p->b.cols[c][w] = p->b.cols[c][r];
            w++;
        }
        p->b.n_rows = w;
    } else if (op->dst >= 0) {
        p->var_col[op->dst] = new_dst;
    }
    OG_TRY(og_xr_filter_rows(x, p, op->preds, op->npreds));
    return og_xr_filter_rows(x, p, op->edge_preds, op->nedge_preds);
}

/* `$p: shortest { $a e{lo,hi} $b }`: the path of each row (engine/shortest.h) as a new column. */
static og_status op_path(exec *x, pipe *p, const og_ir_op *op)
{
    if (p->var_col[op->src] < 0 || p->var_col[op->dst] < 0 || !x->paths)
        return og_err(OG_ERR_INTERNAL, "shortest path between unbound variables");
    const og_topology *t;
    const og_vector *ids;
    OG_TRY(x->src->edge_topology(x->src->ud, (size_t)op->edge_type, &t));
    OG_TRY(x->src->node_column(x->src->ud, (size_t)op->node_type, OG_PROP_ID_COLUMN, &ids));
    OG_TRY(og_shortest_paths(&p->b, (size_t)p->var_col[op->src], (size_t)p->var_col[op->dst], t, topo_dir(op->dir),
                             op->min_hops, op->max_hops, ids, x->paths));
    p->var_col[op->var] = (int)p->b.n_cols - 1;
    return og_xr_filter_rows(x, p, op->preds, op->npreds);
}

/* count { … } op n: keeps the outer rows whose number of inner rows (by their origin column)
 * compares as op with n; a null n keeps none. */
static og_status count_mask(exec *x, const og_ir_op *op, const og_bindings *in, size_t origin, uint8_t *keep,
                            size_t n_outer)
{
    og_vector v;
    OG_TRY(og_exec_const(x->ir, op->count_value, x->params, x->now_ms, &v));
    int null = v.len == 0 || og_vector_is_null(&v, 0);
    int64_t want = null ? 0 : v.type.id == OG_T_U32 || v.type.id == OG_T_U64 ? (int64_t)(og_vector_get_u64(&v, 0) > INT64_MAX ? INT64_MAX : og_vector_get_u64(&v, 0)) : og_vector_get_i64(&v, 0);
    og_vector_free(&v);
    uint64_t *cnt = calloc(n_outer ? n_outer : 1, sizeof *cnt);
    if (!cnt) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < in->n_rows; i++) cnt[in->cols[origin][i]]++;
    for (size_t r = 0; r < n_outer; r++) {
        int64_t c = (int64_t)cnt[r];
        int ok = !null;
        switch (op->count_op) {
        case OG_IR_EQ: ok &= c == want; break;
        case OG_IR_NE: ok &= c != want; break;
        case OG_IR_LT: ok &= c < want; break;
        case OG_IR_LE: ok &= c <= want; break;
        case OG_IR_GT: ok &= c > want; break;
        case OG_IR_GE: ok &= c >= want; break;
        default: ok = 0; break;
        }
        if (!ok) keep[r >> 3] &= (uint8_t)~(1u << (r & 7));
    }
    free(cnt);
    return OG_OK;
}


/* agg(x) { … } op v: keeps the outer rows whose aggregate of x over their inner rows compares
 * as op with v (no inner row: sum / avg / min / max are null, and a null keeps nothing). */
static og_status agg_mask(exec *x, const og_ir_op *op, pipe *in, size_t origin, uint8_t *keep, size_t n_outer)
{
    og_vector arg, agg, want;
    OG_TRY(og_xr_eval(x, in, op->sub_arg, &arg));
    og_status st = og_xr_broadcast(&arg, in->b.n_rows);
    if (st == OG_OK)
        st = og_aggregate(og_xr_agg_fn((og_qagg)op->sub_agg), &arg, in->b.cols[origin], in->b.n_rows, n_outer, &agg);
    og_vector_free(&arg);
    if (st) return st;
    st = og_exec_const(x->ir, op->count_value, x->params, x->now_ms, &want);
    if (st == OG_OK) {
        st = og_filter_compare(&agg, cmp_op(op->count_op), &want, keep, n_outer);
        og_vector_free(&want);
    }
    og_vector_free(&agg);
    return st;
}

/* optional { … }: p becomes the inner rows (outer columns, the origin column, the block's
 * columns) in outer-row order, with each outer row the block did not match kept once, its
 * block columns null (UINT32_MAX: every gather reads a null there). */
static og_status optional_join(exec *x, pipe *p, pipe *in, size_t origin, size_t n_outer)
{
    size_t n = in->b.n_rows, ncols = in->b.n_cols;
    uint32_t *start = calloc(n_outer + 1, sizeof *start), *perm = malloc((n ? n : 1) * sizeof *perm);
    uint32_t *rowv = malloc((ncols ? ncols : 1) * sizeof *rowv);
    og_bindings out;
    og_status st = start && perm && rowv ? og_bindings_init(&out, ncols) : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        const uint32_t *org = in->b.cols[origin];
        for (size_t i = 0; i < n; i++) start[org[i] + 1]++;
        for (size_t r = 0; r < n_outer; r++) start[r + 1] += start[r];
        for (size_t i = 0; i < n; i++) perm[start[org[i]]++] = (uint32_t)i; /* start[r] ends at r's end */
        for (size_t r = 0, k = 0; r < n_outer && st == OG_OK; r++) {
            if (k == start[r]) { /* no match: the outer row, the block's columns null */
                for (size_t c = 0; c < ncols; c++) rowv[c] = c < origin ? p->b.cols[c][r] : UINT32_MAX;
                rowv[origin] = (uint32_t)r;
                st = og_bindings_push(&out, rowv);
            }
            for (; k < start[r] && st == OG_OK; k++) {
                for (size_t c = 0; c < ncols; c++) rowv[c] = in->b.cols[c][perm[k]];
                st = og_bindings_push(&out, rowv);
            }
        }
        if (st == OG_OK) {
            og_bindings_free(&p->b);
            p->b = out;
            memcpy(p->var_col, in->var_col, x->ir->nvars * sizeof *p->var_col);
            p->identity_col = -1;
        } else {
            og_bindings_free(&out);
        }
    }
    free(start);
    free(perm);
    free(rowv);
    return st;
}

static og_status op_antijoin(exec *x, pipe *p, const og_ir_op *op)
{
    size_t n_outer = p->b.n_rows;
    if (!n_outer) return OG_OK;
    pipe in = {0};
    og_status st = og_bindings_init(&in.b, p->b.n_cols + 1);
    if (st) return st;
    in.var_col = malloc((x->ir->nvars ? x->ir->nvars : 1) * sizeof *in.var_col);
    if (!in.var_col) {
        og_bindings_free(&in.b);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    memcpy(in.var_col, p->var_col, x->ir->nvars * sizeof *in.var_col);
    in.started = 1;
    in.identity_col = -1;
    uint32_t *rowv = malloc((p->b.n_cols + 1) * sizeof *rowv);
    if (!rowv) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t r = 0; r < n_outer && st == OG_OK; r++) {
        for (size_t c = 0; c < p->b.n_cols; c++) rowv[c] = p->b.cols[c][r];
        rowv[p->b.n_cols] = (uint32_t)r;
        st = og_bindings_push(&in.b, rowv);
    }
    free(rowv);
    size_t origin = p->b.n_cols; /* operators only append columns, so it stays put */
    if (st == OG_OK) st = run_ops(x, &in, op->inner, op->ninner);
    if (st == OG_OK && op->sub == OG_QSUB_OPTIONAL) {
        st = optional_join(x, p, &in, origin, n_outer);
    } else if (st == OG_OK) {
        size_t bytes = (n_outer + 7) / 8;
        uint8_t *keep = malloc(bytes);
        if (!keep) {
            st = og_err(OG_ERR_NOMEM, "out of memory");
        } else {
            memset(keep, 0xff, bytes);
            if (op->sub == OG_QSUB_COUNT && op->sub_arg) st = agg_mask(x, op, &in, origin, keep, n_outer);
            else if (op->sub == OG_QSUB_COUNT) st = count_mask(x, op, &in.b, origin, keep, n_outer);
            else og_antijoin_mask(&in.b, origin, keep, n_outer);
            if (op->sub == OG_QSUB_EXISTS) /* a semi-join keeps what the anti-join drops */
                for (size_t i = 0; i < bytes; i++) keep[i] = (uint8_t)~keep[i];
            if (st == OG_OK) og_bindings_select(&p->b, keep);
            free(keep);
        }
    }
    og_bindings_free(&in.b);
    free(in.var_col);
    return st;
}

static og_status run_ops(exec *x, pipe *p, const og_ir_op *ops, size_t nops)
{
    size_t *order = malloc((nops ? nops : 1) * sizeof *order);
    unsigned char *bound = malloc(x->ir->nvars ? x->ir->nvars : 1);
    og_status st = order && bound ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        for (size_t v = 0; v < x->ir->nvars; v++) bound[v] = p->var_col[v] >= 0;
        st = og_xr_schedule_ops(x->ir, ops, nops, bound, order);
    }
    for (size_t k = 0; k < nops && st == OG_OK; k++) {
        const og_ir_op *op = &ops[order[k]];
        if ((st = og_budget_check()) != OG_OK) break; /* the query's time budget (util/budget.h) */
        if (op->kind == OG_IR_SCAN && p->started && og_exec_place_filters) {
            /* a cross join: the filters scheduled right after it are ready there (placed, or
             * written after every binder of the block); apply them while the pairs are formed.
             * `bound` is the state after the whole pipeline, so og_xr_filter_ready only rules out a
             * filter over a score or an aggregate here. */
            const og_ir_op *fs[64];
            size_t nf = 0;
            unsigned char *vars = malloc(x->ir->nvars ? x->ir->nvars : 1);
            if (!vars) {
                st = og_err(OG_ERR_NOMEM, "out of memory");
                break;
            }
            while (nf < 64 && k + 1 + nf < nops && ops[order[k + 1 + nf]].kind == OG_IR_FILTER &&
                   og_xr_filter_ready(x->ir, &ops[order[k + 1 + nf]], bound, vars))
                fs[nf] = &ops[order[k + 1 + nf]], nf++;
            free(vars);
            uint64_t pairs = 0;
            st = op_scan_ex(x, p, op, fs, nf, &pairs);
            if (st) break;
            /* counted as if run one after the other: the join formed `pairs` rows, each filter
             * kept the final ones (the rows a fused filter dropped are never held) */
            x->rows_through += pairs;
            xstep *xs = step_of(x, op);
            int hashed = xs && xs->hash;
            if (xs) xs->rows = pairs, xs->ran = 1;
            for (size_t f = 0; f < nf; f++) {
                x->rows_through += p->b.n_rows;
                if ((xs = step_of(x, fs[f]))) xs->rows = p->b.n_rows, xs->ran = 1, xs->hash &= hashed;
            }
            if (p->b.n_rows > x->rows_peak) x->rows_peak = p->b.n_rows;
            k += nf;
            continue;
        }
        switch (op->kind) {
        case OG_IR_SCAN: st = op_scan(x, p, op); break;
        case OG_IR_EXPAND: st = op_expand(x, p, op); break;
        case OG_IR_FILTER: st = og_xr_filter_rows(x, p, &op->pred, 1); break;
        case OG_IR_ANTIJOIN: st = op_antijoin(x, p, op); break;
        case OG_IR_PATH: st = op_path(x, p, op); break;
        }
        if (st == OG_OK) {
            x->rows_through += p->b.n_rows;
            if (p->b.n_rows > x->rows_peak) x->rows_peak = p->b.n_rows;
            xstep *xs = step_of(x, op);
            if (xs) {
                xs->rows = p->b.n_rows;
                xs->ran = 1;
            }
        }
    }
    free(order);
    free(bound);
    return st;
}

/* ---- the driver -------------------------------------------------------------------------- */

/* Rough bytes of a computed column, charged to the query's memory budget (util/budget.h). */
static uint64_t budget_bytes(const og_vector *v)
{
    size_t w = og_type_width(v->type);
    uint64_t b = (uint64_t)v->len * (w ? w : 8);
    if (v->offsets && v->len) b += (uint64_t)v->offsets[v->len];
    return b;
}

/* The counted last hop (degree_count.h): each row's weight, the rows it would expand to; rows
 * of weight 0 are dropped (they would make no row).  *out: p->b.n_rows weights (owned). */
static og_status weigh_rows(exec *x, pipe *p, const og_ir_op *ops, size_t k, uint64_t **out)
{
    *out = NULL;
    const og_ir_op *op = &ops[0];
    if (p->var_col[op->src] < 0) return og_err(OG_ERR_INTERNAL, "a counted hop from an unbound variable");
    const og_topology *t[8];
    og_dir dir[8];
    if (k > 8) return og_err(OG_ERR_INTERNAL, "too many counted hops");
    for (size_t i = 0; i < k; i++) {
        OG_TRY(x->src->edge_topology(x->src->ud, (size_t)ops[i].edge_type, &t[i]));
        dir[i] = topo_dir(ops[i].dir);
    }
    size_t n = p->b.n_rows;
    uint64_t *w = malloc((n ? n : 1) * sizeof *w);
    uint8_t *sel = calloc((n + 7) / 8 + 1, 1);
    og_status st = w && sel ? og_budget_charge((uint64_t)n * sizeof *w) : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) st = og_degree_weights(&p->b, (size_t)p->var_col[op->src], t, dir, k, w);
    uint64_t total = 0;
    size_t kept = 0;
    for (size_t r = 0; r < n && st == OG_OK; r++) {
        if (!w[r]) continue;
        total += w[r];
        sel[r >> 3] |= (uint8_t)(1u << (r & 7));
        w[kept++] = w[r];
    }
    if (st == OG_OK) og_bindings_select(&p->b, sel);
    free(sel);
    if (st) {
        free(w);
        return st;
    }
    x->rows_through += p->b.n_rows;
    xstep *xs = step_of(x, &ops[k - 1]); /* the last counted hop: the rows it stands for */
    if (xs) xs->rows = total, xs->ran = 1;
    *out = w;
    return OG_OK;
}

/* The value of integer parameter `param` as a row count for `limit` / `offset`. */
static og_status count_param(const exec *x, int param, const char *what, uint64_t *out)
{
    const og_ir_param *decl = &x->ir->params[param];
    const og_vector *v = &x->params[param];
    if (v->len == 0 || og_vector_is_null(v, 0))
        return og_err(OG_ERR_INVALID, "parameter '%s' not provided (the query's %s)", decl->name, what);
    if (v->type.id == OG_T_U32 || v->type.id == OG_T_U64) {
        *out = og_vector_get_u64(v, 0);
        return OG_OK;
    }
    int64_t n = og_vector_get_i64(v, 0);
    if (n < 0) return og_err(OG_ERR_INVALID, "parameter '%s' is negative: %s must be 0 or more", decl->name, what);
    *out = (uint64_t)n;
    return OG_OK;
}

/* Resolves the page of x->ir into x (see exec). */
static og_status resolve_page(exec *x)
{
    const og_ir_query *ir = x->ir;
    uint64_t limit = ir->limit, offset = ir->has_offset ? ir->offset : 0;
    if (ir->has_limit && ir->limit_param >= 0) OG_TRY(count_param(x, ir->limit_param, "limit", &limit));
    if (ir->has_offset && ir->offset_param >= 0) OG_TRY(count_param(x, ir->offset_param, "offset", &offset));
    x->has_limit = ir->has_limit;
    x->limit = limit;
    x->offset = offset;
    /* no table holds more than 2^32 rows: a larger window is the same as none */
    x->window = ir->has_limit && limit <= UINT32_MAX && offset <= UINT32_MAX - limit ? limit + offset : 0;
    /* `limit 0` keeps no row; its window (offset rows) would also read as "all" when 0 */
    return OG_OK;
}

og_status og_exec_read(const og_ir_query *ir, const og_exec_source *src, const og_vector *params, int64_t now_ms,
                       og_result *out)
{
    exec x = {ir, src, params, now_ms, NULL, 0, 0, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL};
    return og_xr_run(&x, out);
}

og_status og_xr_run(exec *xp, og_result *out)
{
    exec x = *xp;
    const og_ir_query *ir = x.ir;
    const og_exec_source *src = x.src;
    const og_vector *params = x.params;
    int64_t now_ms = x.now_ms;
    memset(out, 0, sizeof *out);
    if (ir->is_mutation) return og_err(OG_ERR_INVALID, "query '%s' is a mutation; run it with mutate", ir->name);
    OG_TRY(resolve_page(&x));
    og_paths paths;
    memset(&paths, 0, sizeof paths);
    x.paths = &paths;
    pipe p = {0};
    p.identity_col = -1;
    og_status st = og_search_new(&x.search, ir, src, params, now_ms);
    if (st) return st;
    st = og_bindings_init(&p.b, 0);
    if (st) {
        og_search_free(x.search);
        return st;
    }
    p.var_col = malloc((ir->nvars ? ir->nvars : 1) * sizeof *p.var_col);
    if (!p.var_col) {
        og_bindings_free(&p.b);
        og_search_free(x.search);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t v = 0; v < ir->nvars; v++) p.var_col[v] = -1;
    size_t counted = og_degree_count_ops(ir); /* trailing hops only counted: not run */
    if (counted > 8) counted = 0;
    /* a scan + filter + aggregate the source would rather stream: one fused pass (exec_stream.c) */
    og_vector *streamed = NULL;
    size_t streamed_rows = 0;
    int did_stream = 0;
    if (ir->aggregate && !counted && og_exec_stream) {
        streamed = calloc(ir->ncolumns ? ir->ncolumns : 1, sizeof *streamed);
        st = streamed ? og_xr_stream_aggregate(&x, streamed, &streamed_rows, &did_stream)
                      : og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (st == OG_OK && !did_stream) st = run_ops(&x, &p, ir->ops, ir->nops - counted);
    uint64_t *weights = NULL;
    if (st == OG_OK && counted) st = weigh_rows(&x, &p, &ir->ops[ir->nops - counted], counted, &weights);
    x.weights = weights;
    if (st == OG_OK && !p.started) p.b.n_rows = 1; /* no match clause: one empty binding */
    /* a search ordering drops the rows it does not rank and gives the first sort key */
    og_vector rank_vals = {0};
    og_sort_key rank_key = {&rank_vals, 0}, *rank_keyp = NULL;
    if (st == OG_OK && ir->rank_order >= 0 && !ir->aggregate) {
        int rv = ir->ranks[ir->rank_order].var;
        if (rv < 0 || p.var_col[rv] < 0) st = og_err(OG_ERR_INTERNAL, "a search ordering over an unbound variable");
        else st = og_search_order(x.search, ir->rank_order, &p.b, (size_t)p.var_col[rv], x.window,
                                  &rank_vals, &rank_key.descending);
        if (st == OG_OK) rank_keyp = &rank_key;
    } else if (st == OG_OK && ir->rank_order >= 0) {
        /* aggregated: the ranking keeps the rows it ranks and does not order the groups.  A
         * nearest ranking is a top-k, so the aggregates see its window — the first `limit`
         * rows by distance (the reference: count($d) under `nearest(...) limit 2` is 2); bm25
         * and rrf keep every row they rank (bm25: every matching row, not a top-k). */
        int rv = ir->ranks[ir->rank_order].var;
        int nearest = ir->ranks[ir->rank_order].kind == OG_IR_RANK_NEAREST && x.has_limit;
        uint64_t window = nearest ? x.limit : 0;
        og_sort_key wk = {&rank_vals, 0};
        if (rv < 0 || p.var_col[rv] < 0) st = og_err(OG_ERR_INTERNAL, "a search ordering over an unbound variable");
        else st = og_search_order(x.search, ir->rank_order, &p.b, (size_t)p.var_col[rv], window, &rank_vals, &wk.descending);
        if (st == OG_OK && nearest) st = og_xr_keep_rank_window(&x, &p, &wk, window);
        if (st == OG_OK) og_vector_free(&rank_vals);
    }

    out->ncols = ir->ncolumns;
    out->names = calloc(ir->ncolumns ? ir->ncolumns : 1, sizeof *out->names);
    out->types = calloc(ir->ncolumns ? ir->ncolumns : 1, sizeof *out->types);
    og_vector *cols = calloc(ir->ncolumns ? ir->ncolumns : 1, sizeof *cols);
    if (st == OG_OK && (!out->names || !out->types || !cols)) st = og_err(OG_ERR_NOMEM, "out of memory");
    size_t nrows = 0;
    if (st == OG_OK) {
        if (did_stream) {
            memcpy(cols, streamed, ir->ncolumns * sizeof *cols);
            nrows = streamed_rows;
            did_stream = 0; /* (cols owns them now) */
        } else if (ir->aggregate) {
            st = og_xr_project_aggregate(&x, &p, cols, &nrows);
        } else {
            nrows = p.b.n_rows;
            for (size_t c = 0; c < ir->ncolumns && st == OG_OK; c++) {
                st = og_xr_eval(&x, &p, ir->columns[c].expr, &cols[c]);
                if (st == OG_OK) st = og_xr_broadcast(&cols[c], nrows);
                if (st == OG_OK) st = og_budget_charge(budget_bytes(&cols[c]));
            }
        }
    }
    uint32_t *perm = NULL;
    if (st == OG_OK) {
        perm = malloc((nrows ? nrows : 1) * sizeof *perm);
        if (!perm) st = og_err(OG_ERR_NOMEM, "out of memory");
        else st = og_budget_charge((uint64_t)nrows * sizeof *perm);
    }
    if (st == OG_OK) st = og_xr_order_rows(&x, &p, cols, nrows, ir->aggregate, rank_keyp, perm);
    size_t skip = x.offset < nrows ? (size_t)x.offset : nrows, keep = nrows - skip;
    if (x.has_limit && x.limit < keep) keep = (size_t)x.limit;
    out->cols = calloc(ir->ncolumns ? ir->ncolumns : 1, sizeof *out->cols);
    if (st == OG_OK && !out->cols) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < ir->ncolumns && st == OG_OK; c++) {
        st = og_vector_gather(&out->cols[c], &cols[c], perm + skip, keep);
        out->types[c] = ir->columns[c].type;
        out->names[c] = strdup(ir->columns[c].name);
        if (st == OG_OK && !out->names[c]) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    out->nrows = keep;
    out->rows_through = x.rows_through;
    out->rows_peak = x.rows_peak;
    xp->rows_through = x.rows_through;
    xp->rows_peak = x.rows_peak;
    if (st == OG_OK) {
        out->query = strdup(ir->name ? ir->name : "query");
        if (!out->query) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (cols)
        for (size_t c = 0; c < ir->ncolumns; c++) og_vector_free(&cols[c]);
    free(cols);
    if (did_stream) /* (not handed on: a later failure) */
        for (size_t c = 0; c < ir->ncolumns; c++) og_vector_free(&streamed[c]);
    free(streamed);
    free(perm);
    if (rank_keyp) og_vector_free(&rank_vals);
    og_bindings_free(&p.b);
    free(p.var_col);
    og_search_free(x.search);
    og_paths_free(&paths);
    free(weights);
    if (st != OG_OK) og_result_free(out);
    return st;
}

og_status og_exec_const(const og_ir_query *ir, const og_ir_expr *e, const og_vector *params, int64_t now_ms,
                        og_vector *out)
{
    /* a constant expression (parameters, literals, now(); the checker admits no variable):
     * evaluated over one row that binds nothing */
    exec x = {ir, NULL, params, now_ms, NULL, 0, 0, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL};
    pipe none = {0};
    none.identity_col = -1;
    none.b.n_rows = 1;
    return og_xr_eval(&x, &none, e, out);
}

og_status og_exec_bind_params(const og_ir_query *ir, const json_t *params, og_vector **out)
{
    *out = NULL;
    if (params && !json_is_object(params)) return og_err(OG_ERR_INVALID, "parameters must be a JSON object");
    /* A parameter the query does not declare is a mistake (a typo, the wrong query), not noise. */
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)params, key, val) {
        size_t k = 0;
        while (k < ir->nparams && strcmp(ir->params[k].name, key) != 0) k++;
        if (k < ir->nparams) continue;
        char decl[512] = "";
        size_t n = 0;
        for (size_t p = 0; p < ir->nparams && n < sizeof decl; p++)
            n += (size_t)snprintf(decl + n, sizeof decl - n, "%s$%s", p ? ", " : "", ir->params[p].name);
        return og_err(OG_ERR_INVALID, "unknown parameter '%s': query '%s' declares %s", key, ir->name ? ir->name : "?",
                      ir->nparams ? decl : "no parameters");
    }
    og_vector *v = calloc(ir->nparams ? ir->nparams : 1, sizeof *v);
    if (!v) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    size_t i;
    for (i = 0; i < ir->nparams && st == OG_OK; i++) {
        const og_ir_param *decl = &ir->params[i];
        st = og_vector_init(&v[i], decl->type.t);
        if (st) break;
        const json_t *j = params ? json_object_get(params, decl->name) : NULL;
        if (!j) continue; /* missing: fails when evaluated unless nullable */
        char what[160];
        snprintf(what, sizeof what, "parameter '%s'", decl->name);
        st = og_jsonval_append(&v[i], j, decl->type.nullable, OG_JSONVAL_PARAM, what);
    }
    if (st != OG_OK) {
        for (size_t k = 0; k < ir->nparams; k++) og_vector_free(&v[k]);
        free(v);
        return st;
    }
    *out = v;
    return OG_OK;
}
