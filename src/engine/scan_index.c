/*
 * scan_index.c — candidate rows of a node scan from scalar index files (scan_index.h).  Why a
 * starting set and not an answer: the scan still evaluates every predicate, so an index only
 * ever prunes rows that could not match, and coverage never changes a result.
 */
#include "engine/scan_index.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "index/scalar.h"
#include "util/error.h"

static _Atomic uint64_t g_uses;

uint64_t og_scan_index_uses(void) { return g_uses; }

static int is_intish(og_type_id t) { return t == OG_T_I32 || t == OG_T_I64 || t == OG_T_U32 || t == OG_T_U64; }
static int is_num(og_type_id t) { return is_intish(t) || t == OG_T_F32 || t == OG_T_F64; }

/* The range `prop OP v[i]` selects, when the index can serve it: 1, else 0. */
static int make_range(og_type pt, og_ir_cmp op, const og_vector *v, size_t i, og_scalar_range *r, int *string)
{
    memset(r, 0, sizeof *r);
    if (i >= v->len || og_vector_is_null(v, i)) return 0;
    og_type_id vt = v->type.id;
    og_scalar_kind k = og_scalar_kind_of(pt);
    long double x = 0;
    const uint8_t *s = NULL;
    size_t sl = 0;
    if (k == OG_SCALAR_STRING) {
        if (vt != OG_T_STRING) return 0;
        s = og_vector_get_bytes(v, i, &sl);
        *string = 1;
    } else if (k == OG_SCALAR_INT && pt.id == OG_T_BOOL) {
        if (vt != OG_T_BOOL) return 0;
        x = og_vector_get_bool(v, i) != 0;
        *string = 0;
    } else if (k == OG_SCALAR_INT || k == OG_SCALAR_FLOAT) {
        int date = pt.id == OG_T_DATE32 || pt.id == OG_T_DATE64;
        if (date ? vt != pt.id : !is_num(vt)) return 0; /* other pairings are the scan's business */
        if (vt == OG_T_U32 || vt == OG_T_U64) x = (long double)og_vector_get_u64(v, i);
        else if (vt == OG_T_F32 || vt == OG_T_F64) x = (long double)og_vector_get_f64(v, i);
        else x = (long double)og_vector_get_i64(v, i);
        *string = 0;
    } else {
        return 0;
    }
    int lo = op == OG_IR_EQ || op == OG_IR_GT || op == OG_IR_GE, hi = op == OG_IR_EQ || op == OG_IR_LT || op == OG_IR_LE;
    if (!lo && !hi) return 0;
    r->has_lo = lo;
    r->has_hi = hi;
    r->lo_incl = op != OG_IR_GT;
    r->hi_incl = op != OG_IR_LT;
    r->lo_num = r->hi_num = x;
    r->lo_str = r->hi_str = s;
    r->lo_len = r->hi_len = sl;
    return 1;
}

static og_ir_cmp flip(og_ir_cmp op)
{
    switch (op) {
    case OG_IR_LT: return OG_IR_GT;
    case OG_IR_LE: return OG_IR_GE;
    case OG_IR_GT: return OG_IR_LT;
    case OG_IR_GE: return OG_IR_LE;
    default: return op;
    }
}

/* What one predicate asks of the index: the rows whose keys lie in any of `r`, or with
 * `complement` every live row NOT named by them (`is null`: the index holds no nulls). */
typedef struct plan {
    og_scalar_range *r;
    size_t n;
    int string, complement;
    og_vector v; /* the constant the ranges point into */
} plan;

static void plan_free(plan *p)
{
    free(p->r);
    og_vector_free(&p->v);
    memset(p, 0, sizeof *p);
}

static og_status plan_add(plan *p, size_t cap)
{
    og_scalar_range *n = realloc(p->r, (cap ? cap : 1) * sizeof *n);
    if (!n) return og_err(OG_ERR_NOMEM, "out of memory");
    p->r = n;
    return OG_OK;
}

/* The property of op->var a predicate constrains, or NULL. */
static const og_cat_prop *scan_prop(const og_ir_query *ir, const og_ir_op *op, const og_ir_expr *e)
{
    if (!e || e->kind != OG_IRX_PROP || e->var != op->var || e->prop_id == 0) return NULL;
    const og_cat_type *t = &ir->cat->nodes[op->node_type];
    for (size_t k = 0; k < t->nprops; k++)
        if (t->props[k].id == e->prop_id) return og_scalar_kind_of(t->props[k].type) != OG_SCALAR_NONE ? &t->props[k] : NULL;
    return NULL;
}

static int is_const(const og_ir_expr *e) { return e && (e->kind == OG_IRX_LIT || e->kind == OG_IRX_PARAM); }

/* The plan of predicate pr over its property (*prop), *ok = 0 when the index cannot serve it:
 *   $v.p OP c (c OP $v.p), OP one of = < <= > >=   one range
 *   $v.p != c                                      the two ranges around c (not floats: NaN != c)
 *   $v.p in [c1, c2, ...] (a list literal or param) one point range per non-null element
 *   $v.p is null                                   the complement of every indexed key
 *   $v.p is not null                               every indexed key (not floats: NaN is not null) */
static og_status make_plan(const og_ir_query *ir, const og_vector *params, int64_t now_ms, const og_ir_op *op,
                           const og_ir_pred *pr, plan *p, uint64_t *prop_id, int *ok)
{
    memset(p, 0, sizeof *p);
    *ok = 0;
    const og_cat_prop *cp;
    if (pr->kind == OG_IRP_ISNULL) {
        if (!(cp = scan_prop(ir, op, pr->l))) return OG_OK;
        if (pr->negated && og_scalar_kind_of(cp->type) == OG_SCALAR_FLOAT) return OG_OK;
        OG_TRY(plan_add(p, 1));
        memset(p->r, 0, sizeof *p->r); /* no bounds: every key */
        p->n = 1;
        p->string = og_scalar_kind_of(cp->type) == OG_SCALAR_STRING;
        p->complement = !pr->negated;
        *prop_id = pr->l->prop_id;
        *ok = 1;
        return OG_OK;
    }
    if (pr->kind != OG_IRP_CMP || !pr->l || !pr->r) return OG_OK;
    if (pr->op == OG_IR_LIST_CONTAINS) { /* `$v.p in list` lowers to list CONTAINS $v.p */
        if (!is_const(pr->l) || !(cp = scan_prop(ir, op, pr->r))) return OG_OK;
        og_status st = og_exec_const(ir, pr->l, params, now_ms, &p->v);
        if (st) return st;
        if (p->v.type.id != OG_T_LIST || p->v.len != 1 || og_vector_is_null(&p->v, 0) || !p->v.child) {
            plan_free(p);
            return OG_OK;
        }
        size_t b, e;
        og_vector_get_list(&p->v, 0, &b, &e);
        if ((st = plan_add(p, e - b)) != OG_OK) {
            plan_free(p);
            return st;
        }
        for (size_t i = b; i < e; i++) {
            if (og_vector_is_null(p->v.child, i)) continue; /* null is never an element match */
            int string = 0;
            if (!make_range(cp->type, OG_IR_EQ, p->v.child, i, &p->r[p->n], &string)) {
                plan_free(p); /* an element the index cannot look up: scan */
                return OG_OK;
            }
            p->string = string;
            p->n++;
        }
        *prop_id = pr->r->prop_id;
        *ok = 1;
        return OG_OK;
    }
    if (pr->op > OG_IR_GE) return OG_OK;
    const og_ir_expr *prop = pr->l, *val = pr->r;
    og_ir_cmp cmp = pr->op;
    if (prop->kind != OG_IRX_PROP) prop = pr->r, val = pr->l, cmp = flip(cmp);
    if (!(cp = scan_prop(ir, op, prop)) || !is_const(val)) return OG_OK;
    if (cmp == OG_IR_NE && og_scalar_kind_of(cp->type) == OG_SCALAR_FLOAT) return OG_OK;
    OG_TRY(og_exec_const(ir, val, params, now_ms, &p->v));
    og_status st = plan_add(p, 2);
    int string = 0;
    if (st == OG_OK && cmp == OG_IR_NE) {
        if (make_range(cp->type, OG_IR_LT, &p->v, 0, &p->r[0], &string) &&
            make_range(cp->type, OG_IR_GT, &p->v, 0, &p->r[1], &string))
            p->n = 2;
    } else if (st == OG_OK && make_range(cp->type, cmp, &p->v, 0, &p->r[0], &string)) {
        p->n = 1;
    }
    if (st || p->n == 0) {
        plan_free(p);
        return st;
    }
    p->string = string;
    *prop_id = prop->prop_id;
    *ok = 1;
    return OG_OK;
}

typedef struct mark {
    const og_index_frag *f;
    uint8_t *bits;
    int clear;
} mark;

static void mark_offset(void *ud, uint32_t off)
{
    mark *m = ud;
    uint32_t row = og_index_frag_row(m->f, off);
    if (row == UINT32_MAX) return;
    if (m->clear) m->bits[row >> 3] &= (uint8_t)~(1u << (row & 7));
    else m->bits[row >> 3] |= (uint8_t)(1u << (row & 7));
}

static void mark_all(uint8_t *bits, const og_index_frag *g)
{
    for (size_t k = g->view_start; k < g->view_start + g->live_rows; k++) bits[k >> 3] |= (uint8_t)(1u << (k & 7));
}

og_status og_scan_index_candidates(const og_ir_query *ir, const og_exec_source *src, const og_vector *params,
                                   int64_t now_ms, const og_ir_op *op, size_t nrows, uint32_t **rows, size_t *n,
                                   int *used)
{
    *rows = NULL;
    *n = 0;
    *used = 0;
    if (!src->node_index || nrows == 0) return OG_OK;
    for (size_t i = 0; i < op->npreds; i++) {
        plan pl;
        uint64_t prop_id = 0;
        int ok = 0;
        OG_TRY(make_plan(ir, params, now_ms, op, &op->preds[i], &pl, &prop_id, &ok));
        if (!ok) continue;
        og_index_frags fr = {0};
        og_status st = src->node_index(src->ud, (size_t)op->node_type, prop_id, og_index_def_scalar.name, &fr);
        size_t files = 0;
        for (size_t f = 0; f < fr.n; f++) files += fr.v[f].file != NULL;
        if (st != OG_OK || files == 0) {
            og_index_frags_free(&fr);
            plan_free(&pl);
            if (st) return st;
            continue;
        }
        uint8_t *bits = calloc((nrows + 7) / 8 + 1, 1);
        if (!bits) st = og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t f = 0; f < fr.n && st == OG_OK; f++) {
            const og_index_frag *g = &fr.v[f];
            if (g->view_start + g->live_rows > nrows) {
                st = og_err(OG_ERR_INTERNAL, "scan: the fragments do not match the view");
                break;
            }
            if (g->no_data) { /* every row null: only `is null` matches */
                if (pl.complement) mark_all(bits, g);
                continue;
            }
            og_status fs = OG_ERR_NOT_FOUND;
            if (g->file) {
                const uint8_t *p = og_mapping_data(g->file);
                size_t len = og_mapping_size(g->file);
                fs = og_scalar_check(p, len, g->physical_rows);
                if (fs == OG_OK && (og_scalar_file_kind(p) == OG_SCALAR_STRING) != pl.string) fs = OG_ERR_CORRUPT;
                mark m = {g, bits, pl.complement};
                if (fs == OG_OK && pl.complement) mark_all(bits, g);
                for (size_t k = 0; fs == OG_OK && k < pl.n; k++) fs = og_scalar_lookup(p, len, pl.string, &pl.r[k], mark_offset, &m);
                og_error_clear();
            }
            if (fs != OG_OK) mark_all(bits, g); /* no usable file: the data file is scanned */
        }
        og_index_frags_free(&fr);
        plan_free(&pl);
        size_t m = 0;
        for (size_t k = 0; st == OG_OK && k < nrows; k++) m += og_bit_get(bits, k);
        uint32_t *out = st == OG_OK ? malloc((m ? m : 1) * sizeof *out) : NULL;
        if (st == OG_OK && !out) st = og_err(OG_ERR_NOMEM, "out of memory");
        if (st == OG_OK) {
            m = 0;
            for (size_t k = 0; k < nrows; k++)
                if (og_bit_get(bits, k)) out[m++] = (uint32_t)k;
            *rows = out;
            *n = m;
            *used = 1;
            g_uses++;
        }
        free(bits);
        return st;
    }
    return OG_OK;
}
