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

/* The range `prop OP value` selects, when the index can serve it: 1, else 0. */
static int make_range(og_type pt, og_ir_cmp op, const og_vector *v, og_scalar_range *r, int *string)
{
    memset(r, 0, sizeof *r);
    if (v->len != 1 || og_vector_is_null(v, 0)) return 0;
    og_type_id vt = v->type.id;
    og_scalar_kind k = og_scalar_kind_of(pt);
    long double x = 0;
    const uint8_t *s = NULL;
    size_t sl = 0;
    if (k == OG_SCALAR_STRING) {
        if (vt != OG_T_STRING) return 0;
        s = og_vector_get_bytes(v, 0, &sl);
        *string = 1;
    } else if (k == OG_SCALAR_INT || k == OG_SCALAR_FLOAT) {
        int date = pt.id == OG_T_DATE32 || pt.id == OG_T_DATE64;
        if (date ? vt != pt.id : !is_num(vt)) return 0; /* other pairings are the scan's business */
        if (vt == OG_T_U32 || vt == OG_T_U64) x = (long double)og_vector_get_u64(v, 0);
        else if (vt == OG_T_F32 || vt == OG_T_F64) x = (long double)og_vector_get_f64(v, 0);
        else x = (long double)og_vector_get_i64(v, 0);
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

typedef struct mark {
    const og_index_frag *f;
    uint8_t *bits;
} mark;

static void mark_offset(void *ud, uint32_t off)
{
    mark *m = ud;
    uint32_t row = og_index_frag_row(m->f, off);
    if (row != UINT32_MAX) m->bits[row >> 3] |= (uint8_t)(1u << (row & 7));
}

og_status og_scan_index_candidates(const og_ir_query *ir, const og_exec_source *src, const og_vector *params,
                                   int64_t now_ms, const og_ir_op *op, size_t nrows, uint32_t **rows, size_t *n,
                                   int *used)
{
    *rows = NULL;
    *n = 0;
    *used = 0;
    if (!src->node_index || nrows == 0) return OG_OK;
    const og_cat_type *t = &ir->cat->nodes[op->node_type];
    for (size_t i = 0; i < op->npreds; i++) {
        const og_ir_pred *pr = &op->preds[i];
        if (pr->kind != OG_IRP_CMP || pr->op > OG_IR_GE || pr->op == OG_IR_NE || !pr->l || !pr->r) continue;
        const og_ir_expr *prop = pr->l, *val = pr->r;
        og_ir_cmp cmp = pr->op;
        if (prop->kind != OG_IRX_PROP) prop = pr->r, val = pr->l, cmp = flip(cmp);
        if (prop->kind != OG_IRX_PROP || prop->var != op->var || prop->prop_id == 0) continue;
        if (val->kind != OG_IRX_LIT && val->kind != OG_IRX_PARAM) continue;
        const og_cat_prop *cp = NULL;
        for (size_t k = 0; k < t->nprops; k++)
            if (t->props[k].id == prop->prop_id) cp = &t->props[k];
        if (!cp || og_scalar_kind_of(cp->type) == OG_SCALAR_NONE) continue;
        og_vector v;
        OG_TRY(og_exec_const(ir, val, params, now_ms, &v));
        og_scalar_range r;
        int string = 0;
        int ok = make_range(cp->type, cmp, &v, &r, &string);
        og_index_frags fr = {0};
        og_status st = OG_OK;
        if (ok) st = src->node_index(src->ud, (size_t)op->node_type, prop->prop_id, og_index_def_scalar.name, &fr);
        size_t files = 0;
        for (size_t f = 0; f < fr.n; f++) files += fr.v[f].file != NULL;
        if (st != OG_OK || !ok || files == 0) {
            og_index_frags_free(&fr);
            og_vector_free(&v);
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
            if (g->no_data) continue; /* every row null: no comparison matches */
            og_status fs = OG_ERR_NOT_FOUND;
            if (g->file) {
                const uint8_t *p = og_mapping_data(g->file);
                size_t len = og_mapping_size(g->file);
                fs = og_scalar_check(p, len, g->physical_rows);
                if (fs == OG_OK && (og_scalar_file_kind(p) == OG_SCALAR_STRING) != string) fs = OG_ERR_CORRUPT;
                mark m = {g, bits};
                if (fs == OG_OK) fs = og_scalar_lookup(p, len, string, &r, mark_offset, &m);
                og_error_clear();
            }
            if (fs != OG_OK) /* no usable file: the data file is scanned */
                for (size_t k = g->view_start; k < g->view_start + g->live_rows; k++) bits[k >> 3] |= (uint8_t)(1u << (k & 7));
        }
        og_index_frags_free(&fr);
        og_vector_free(&v);
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
