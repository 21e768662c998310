/*
 * mutate.c — mutation execution over a write plan.  See mutate.h.
 *
 * Every statement reads the NEW image built by the statements before it (committed rows not
 * removed, plus current staged rows), which gives read-your-writes: an update matches rows on
 * their updated values, an insert after a delete sees the delete.  A changed row is staged as
 * a whole new row (the old committed row removed, or the old staged row superseded), so every
 * row that reaches the table layer is complete.
 */
#include "engine/mutate.h"

#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "engine/layout.h"
#include "engine/plan.h"
#include "util/budget.h"
#include "util/error.h"
#include "util/id.h"

typedef struct mut_ctx {
    og_engine *e;
    const char *file, *gq;
    size_t len;
    const char *name;
    const json_t *params;
    og_mutate_stats stats;
} mut_ctx;

/* Appends src[0] to dst converting between compatible types without loss; OG_ERR_CONSTRAINT
 * naming `what` when the value does not fit. */
static og_status append_coerced(og_vector *dst, const og_vector *src, const char *what)
{
    if (og_vector_is_null(src, 0)) return og_vector_append_null(dst);
    og_type_id d = dst->type.id, s = src->type.id;
    if (og_type_eq(dst->type, src->type) || (d == OG_T_STRING && s == OG_T_STRING))
        return og_vector_append_from(dst, src, 0);
    og_status st;
    switch (d) {
    case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: {
        if (s == OG_T_F32 || s == OG_T_F64) {
            double x = og_vector_get_f64(src, 0);
            if (x != (double)(int64_t)x) return og_err(OG_ERR_CONSTRAINT, "%s: %g is not an integer", what, x);
            st = (d == OG_T_U32 || d == OG_T_U64) ? (x < 0 ? OG_ERR_INVALID : og_vector_append_u64(dst, (uint64_t)x))
                                                  : og_vector_append_i64(dst, (int64_t)x);
        } else if (s == OG_T_U32 || s == OG_T_U64) {
            uint64_t u = og_vector_get_u64(src, 0);
            st = (d == OG_T_U32 || d == OG_T_U64) ? og_vector_append_u64(dst, u)
                 : u > INT64_MAX                  ? OG_ERR_INVALID
                                                  : og_vector_append_i64(dst, (int64_t)u);
        } else if (s == OG_T_I32 || s == OG_T_I64) {
            int64_t i = og_vector_get_i64(src, 0);
            st = (d == OG_T_U32 || d == OG_T_U64) ? (i < 0 ? OG_ERR_INVALID : og_vector_append_u64(dst, (uint64_t)i))
                                                  : og_vector_append_i64(dst, i);
        } else {
            break;
        }
        if (st == OG_ERR_INVALID) return og_err(OG_ERR_CONSTRAINT, "%s: value out of range for the property", what);
        return st;
    }
    case OG_T_F32: case OG_T_F64:
        if (s == OG_T_I32 || s == OG_T_I64) return og_vector_append_f64(dst, (double)og_vector_get_i64(src, 0));
        if (s == OG_T_U32 || s == OG_T_U64) return og_vector_append_f64(dst, (double)og_vector_get_u64(src, 0));
        if (s == OG_T_F32 || s == OG_T_F64) return og_vector_append_f64(dst, og_vector_get_f64(src, 0));
        break;
    case OG_T_BLOB:
        if (s == OG_T_STRING) {
            size_t n;
            const uint8_t *p = og_vector_get_bytes(src, 0, &n);
            json_t *j = json_stringn((const char *)p, n);
            if (!j) return og_err(OG_ERR_NOMEM, "out of memory");
            st = og_jsonval_append(dst, j, 1, OG_JSONVAL_LOAD, what);
            json_decref(j);
            return st;
        }
        break;
    case OG_T_VECTOR:
        if (s == OG_T_LIST) { /* a numeric list literal or param */
            size_t b, e;
            og_vector_get_list(src, 0, &b, &e);
            if (e - b != dst->type.dim)
                return og_err(OG_ERR_CONSTRAINT, "%s: vector has %zu values, Vector(%u) needs %u", what, e - b, dst->type.dim, dst->type.dim);
            float *f = malloc((e - b + 1) * sizeof *f);
            if (!f) return og_err(OG_ERR_NOMEM, "out of memory");
            for (size_t k = b; k < e; k++)
                f[k - b] = src->child->type.id == OG_T_F64 || src->child->type.id == OG_T_F32
                               ? (float)og_vector_get_f64(src->child, k)
                               : (float)og_vector_get_i64(src->child, k);
            st = og_vector_append_floats(dst, f, e - b);
            free(f);
            return st;
        }
        break;
    case OG_T_LIST:
        if (s == OG_T_LIST) {
            size_t b, e;
            og_vector_get_list(src, 0, &b, &e);
            for (size_t k = b; k < e; k++) {
                og_vector one;
                OG_TRY(og_vector_gather(&one, src->child, (uint32_t[]){(uint32_t)k}, 1));
                st = append_coerced(dst->child, &one, what);
                og_vector_free(&one);
                if (st) return st;
            }
            return og_vector_append_list_end(dst);
        }
        break;
    default: break;
    }
    char a[32], b[32];
    return og_err(OG_ERR_CONSTRAINT, "%s: a %s value cannot be stored in a %s property", what,
                  og_type_name(src->type, a, sizeof a), og_type_name(dst->type, b, sizeof b));
}

/* 1 when `where prop = value` can be answered by an id lookup: `@id = "..."`, or the single
 * String @key of a node type (a keyed node's id IS its key value, og_key_id; the key can
 * neither be updated nor added to a type with rows).  Node tables only: their key maps are
 * persisted (docs/indexes.md), an edge table's would be built from its whole id column. */
static int key_probe_applies(const og_plan_table *pt, int prop, og_cmp_op op, const og_vector *value)
{
    if (pt->is_edge || op != OG_CMP_EQ || value->len != 1 || value->type.id != OG_T_STRING || og_vector_is_null(value, 0))
        return 0;
    if (prop == OG_QPROP_ID) return 1;
    const og_cat_type *t = pt->t;
    return prop >= 0 && t->nkey == 1 && (int)t->key_props[0] == prop && t->props[prop].type.id == OG_T_STRING;
}

/* Sets in csel the committed row of pt whose field fid equals value (key_probe_applies): the
 * row the id lookup finds, kept only when its stored value compares equal too, so a row is
 * selected exactly when the comparison holds. */
static og_status key_probe(og_plan_table *pt, int prop, int32_t fid, const og_vector *value, uint8_t *csel)
{
    size_t n;
    const char *id = (const char *)og_vector_get_bytes(value, 0, &n);
    uint32_t row;
    og_status st = og_tableview_lookup_id(pt->view, id, n, &row);
    OG_TRY(st);
    if (row == OG_TABLEVIEW_NO_ROW) return OG_OK;
    if (prop != OG_QPROP_ID) {
        og_vector got;
        st = og_plan_committed_values(pt, fid, &row, 1, &got);
        /* the stored table lacks the field: null, no match */
        if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(pt->view, fid)) {
            og_error_clear();
            return OG_OK;
        }
        OG_TRY(st);
        uint8_t one = 0xff;
        st = og_filter_compare(&got, OG_CMP_EQ, value, &one, 1);
        og_vector_free(&got);
        OG_TRY(st);
        if (!(one & 1)) return OG_OK;
    }
    csel[row >> 3] |= (uint8_t)(1u << (row & 7));
    return OG_OK;
}

/* Sets in sel the rows 0..n of col that are null (want_null) or not null. */
static void null_rows(const og_vector *col, size_t n, int want_null, uint8_t *sel)
{
    for (size_t i = 0; i < n; i++)
        if ((!col || og_vector_is_null(col, i)) == want_null) sel[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* The new-image rows of pt matching `where`: committed rows into csel (bitmap over view
 * rows), staged rows into ssel (bitmap over staged rows).  nulls = 1 / 2: instead of the
 * comparison, the rows where the property is null / not null (value unused). */
static og_status match_rows_ex(og_plan *p, og_plan_table *pt, const og_ir_mutation *m, const og_vector *value,
                               int nulls, uint8_t **csel, uint8_t **ssel)
{
    *csel = *ssel = NULL;
    OG_TRY(og_plan_table_view(p, pt));
    size_t nc = pt->overwrite ? 0 : og_tableview_rows(pt->view), ns = pt->nstaged;
    int32_t fid;
    size_t scol;
    int prop = m->where.prop;
    if (prop == OG_QPROP_FROM) fid = OG_FIELD_SRC, scol = 1;
    else if (prop == OG_QPROP_TO) fid = OG_FIELD_DST, scol = 2;
    else if (prop == OG_QPROP_ID) fid = OG_FIELD_ID, scol = 0;
    else {
        OG_TRY(og_layout_field_id(pt->t->props[prop].id, &fid));
        scol = og_plan_prop_col(pt, (size_t)prop);
    }
    og_cmp_op op = OG_CMP_EQ;
    switch (m->where_op) {
    case OG_IR_EQ: op = OG_CMP_EQ; break;
    case OG_IR_NE: op = OG_CMP_NE; break;
    case OG_IR_LT: op = OG_CMP_LT; break;
    case OG_IR_LE: op = OG_CMP_LE; break;
    case OG_IR_GT: op = OG_CMP_GT; break;
    case OG_IR_GE: op = OG_CMP_GE; break;
    case OG_IR_LIST_CONTAINS: case OG_IR_STR_CONTAINS: op = OG_CMP_CONTAINS; break;
    case OG_IR_STARTS_WITH: op = OG_CMP_STARTS_WITH; break;
    }
    *csel = calloc((nc + 7) / 8 + 1, 1);
    *ssel = calloc((ns + 7) / 8 + 1, 1);
    if (!*csel || !*ssel) return og_err(OG_ERR_NOMEM, "out of memory");
    if (nulls) {
        const og_vector *col = NULL;
        og_status st = nc ? og_tableview_column(pt->view, fid, &col) : OG_OK;
        if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(pt->view, fid))
            og_error_clear(), col = NULL; /* stored table lacks it: all null */
        else if (st) return st;
        null_rows(col, nc, nulls == 1, *csel);
        null_rows(&pt->cols[scol], ns, nulls == 1, *ssel);
        return OG_OK;
    }
    if (nc && !m->where_swapped && key_probe_applies(pt, prop, op, value)) {
        OG_TRY(key_probe(pt, prop, fid, value, *csel)); /* a point lookup, not the whole column */
    } else if (nc) {
        memset(*csel, 0xff, (nc + 7) / 8);
        const og_vector *col;
        og_status st = og_tableview_column(pt->view, fid, &col);
        if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(pt->view, fid))
            og_error_clear(), memset(*csel, 0, (nc + 7) / 8); /* stored table lacks it: all null */
        else if (st) return st;
        else if (m->where_swapped) OG_TRY(og_filter_compare(value, op, col, *csel, nc));
        else OG_TRY(og_filter_compare(col, op, value, *csel, nc));
    }
    if (ns) {
        memset(*ssel, 0xff, (ns + 7) / 8);
        if (m->where_swapped) OG_TRY(og_filter_compare(value, op, &pt->cols[scol], *ssel, ns));
        else OG_TRY(og_filter_compare(&pt->cols[scol], op, value, *ssel, ns));
    }
    return OG_OK;
}

static og_status match_rows(og_plan *p, og_plan_table *pt, const og_ir_mutation *m, const og_vector *value,
                            uint8_t **csel, uint8_t **ssel)
{
    return match_rows_ex(p, pt, m, value, 0, csel, ssel);
}

static og_ir_cmp negate_cmp(og_ir_cmp op)
{
    switch (op) {
    case OG_IR_EQ: return OG_IR_NE;
    case OG_IR_NE: return OG_IR_EQ;
    case OG_IR_LT: return OG_IR_GE;
    case OG_IR_LE: return OG_IR_GT;
    case OG_IR_GT: return OG_IR_LE;
    case OG_IR_GE: return OG_IR_LT;
    default: return op;
    }
}

/* A compound `where` (og_ir_mcond), three-valued: *ct / *st receive the committed / staged
 * rows where it is true, *cf / *sf where it is false (a comparison with a null is neither).
 * Leaves reuse match_rows: `prop op v` is true where it matches and false where the negated
 * comparison does (both drop nulls). */
static og_status match_cond(og_plan *p, og_plan_table *pt, const og_ir_query *ir, const og_ir_mcond *c,
                            const og_vector *params, uint8_t **ct, uint8_t **cf, uint8_t **st_, uint8_t **sf)
{
    *ct = *cf = *st_ = *sf = NULL;
    og_status st = OG_OK;
    if (c->kind == OG_QMC_ISNULL) { /* never unknown */
        og_ir_mutation tm;
        memset(&tm, 0, sizeof tm);
        tm.where = c->leaf;
        st = match_rows_ex(p, pt, &tm, NULL, c->negated ? 2 : 1, ct, st_);
        if (st == OG_OK) st = match_rows_ex(p, pt, &tm, NULL, c->negated ? 1 : 2, cf, sf);
        return st;
    }
    if (c->kind == OG_QMC_CMP && c->op > OG_IR_GE) {
        /* contains / starts_with / in: false where the property is not null, the value is not
         * null and the test fails (no negated operator to run instead) */
        og_ir_mutation tm;
        memset(&tm, 0, sizeof tm);
        tm.where = c->leaf;
        tm.where_op = c->op;
        tm.where_swapped = c->swapped;
        og_vector v;
        OG_TRY(og_exec_const(ir, c->leaf.value, params, p->now_ms, &v));
        int vnull = v.len == 0 || og_vector_is_null(&v, 0);
        st = match_rows(p, pt, &tm, &v, ct, st_);
        if (st == OG_OK) st = match_rows_ex(p, pt, &tm, NULL, 2, cf, sf);
        og_vector_free(&v);
        if (st) return st;
        size_t nc = pt->overwrite ? 0 : og_tableview_rows(pt->view), ns = pt->nstaged;
        for (size_t i = 0; i < (nc + 7) / 8; i++) (*cf)[i] = vnull ? 0 : (uint8_t)((*cf)[i] & ~(*ct)[i]);
        for (size_t i = 0; i < (ns + 7) / 8; i++) (*sf)[i] = vnull ? 0 : (uint8_t)((*sf)[i] & ~(*st_)[i]);
        return OG_OK;
    }
    if (c->kind == OG_QMC_CMP || c->kind == OG_QMC_BARE) {
        og_ir_mutation tm;
        memset(&tm, 0, sizeof tm);
        tm.where = c->leaf;
        og_vector v;
        if (c->kind == OG_QMC_BARE) {
            OG_TRY(og_vector_init(&v, (og_type){OG_T_BOOL, OG_T_NULL, 0}));
            st = og_vector_append_bool(&v, 1);
            tm.where_op = OG_IR_EQ;
        } else {
            st = og_exec_const(ir, c->leaf.value, params, p->now_ms, &v);
            if (st) return st;
            tm.where_op = c->op;
        }
        if (st == OG_OK) st = match_rows(p, pt, &tm, &v, ct, st_);
        if (st == OG_OK) {
            if (c->kind == OG_QMC_BARE) {
                og_vector_free(&v);
                OG_TRY(og_vector_init(&v, (og_type){OG_T_BOOL, OG_T_NULL, 0}));
                st = og_vector_append_bool(&v, 0);
            } else {
                tm.where_op = negate_cmp(c->op);
            }
            if (st == OG_OK) st = match_rows(p, pt, &tm, &v, cf, sf);
        }
        og_vector_free(&v);
        return st;
    }
    if (c->kind == OG_QMC_NOT) return match_cond(p, pt, ir, c->a, params, cf, ct, sf, st_);
    uint8_t *bt = NULL, *bf = NULL, *bst = NULL, *bsf = NULL;
    st = match_cond(p, pt, ir, c->a, params, ct, cf, st_, sf);
    if (st == OG_OK) st = match_cond(p, pt, ir, c->b, params, &bt, &bf, &bst, &bsf);
    if (st == OG_OK) {
        size_t nc = pt->overwrite ? 0 : og_tableview_rows(pt->view), ns = pt->nstaged;
        size_t cb = (nc + 7) / 8, sb = (ns + 7) / 8;
        int and = c->kind == OG_QMC_AND;
        for (size_t i = 0; i < cb; i++) {
            (*ct)[i] = and ? (*ct)[i] & bt[i] : (*ct)[i] | bt[i];
            (*cf)[i] = and ? (*cf)[i] | bf[i] : (*cf)[i] & bf[i];
        }
        for (size_t i = 0; i < sb; i++) {
            (*st_)[i] = and ? (*st_)[i] & bst[i] : (*st_)[i] | bst[i];
            (*sf)[i] = and ? (*sf)[i] | bsf[i] : (*sf)[i] & bsf[i];
        }
    }
    free(bt);
    free(bf);
    free(bst);
    free(bsf);
    return st;
}

static int bit(const uint8_t *b, size_t i) { return (b[i >> 3] >> (i & 7)) & 1; }

/* Is committed row r of pt still in the new image? */
static int committed_live(const og_plan_table *pt, size_t r)
{
    return !pt->overwrite && !(pt->removed && bit(pt->removed, r));
}

static int staged_live(const og_plan_table *pt, size_t r) { return !(pt->superseded && bit(pt->superseded, r)); }

/* Stages a copy of an existing row (committed row `crow` or staged row `srow`, one is -1)
 * with `assigns` applied.  The copy keeps the id (and src/dst). */
static og_status stage_copy(og_plan *p, og_plan_table *pt, long crow, long srow, const og_ir_mutation *m,
                            const og_vector *vals, uint32_t *row)
{
    const og_cat_type *t = pt->t;
    size_t base = pt->is_edge ? 3 : 1;
    /* Build a 1-row source per column, then use the generic staging path. */
    og_vector *src = calloc(pt->ncols, sizeof *src);
    if (!src) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    for (size_t c = 0; c < pt->ncols && st == OG_OK; c++) {
        const og_vector *from;
        uint32_t at;
        if (srow >= 0) {
            from = &pt->cols[c];
            at = (uint32_t)srow;
        } else {
            int32_t fid = c == 0 ? OG_FIELD_ID : c == 1 && pt->is_edge ? OG_FIELD_SRC : c == 2 && pt->is_edge ? OG_FIELD_DST : -1;
            if (fid < 0) st = og_layout_field_id(t->props[c - base].id, &fid);
            if (st) break;
            /* the one row, not the whole column */
            at = (uint32_t)crow;
            st = og_plan_committed_values(pt, fid, &at, 1, &src[c]);
            if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(pt->view, fid)) { /* missing stored column: null */
                og_error_clear();
                st = og_vector_init(&src[c], pt->cols[c].type);
                if (st == OG_OK) st = og_vector_append_null(&src[c]);
            }
            continue;
        }
        st = og_vector_gather(&src[c], from, &at, 1);
    }
    for (size_t a = 0; a < m->nassigns && st == OG_OK; a++) {
        const og_ir_assign *as = &m->assigns[a];
        if (as->prop < 0) continue;
        size_t c = og_plan_prop_col(pt, (size_t)as->prop);
        og_vector_free(&src[c]);
        st = og_vector_init(&src[c], pt->cols[c].type);
        char what[160];
        snprintf(what, sizeof what, "%s.%s", t->name, t->props[as->prop].name);
        if (st == OG_OK) st = append_coerced(&src[c], &vals[a], what);
    }
    long prev;
    if (st == OG_OK) st = og_plan_stage_vectors(p, pt, src, row, &prev);
    for (size_t c = 0; c < pt->ncols; c++) og_vector_free(&src[c]);
    free(src);
    return st;
}

typedef struct cascade_ctx {
    og_plan *p;
    og_plan_table *pt;
    mut_ctx *c;
} cascade_ctx;

/* Removes one committed edge at a deleted endpoint (once: an edge between two deleted nodes
 * is reported twice). */
static og_status cascade_edge(void *ud, uint32_t edge, int is_dst, const char *id, size_t len)
{
    (void)is_dst, (void)id, (void)len;
    cascade_ctx *cc = ud;
    if (!committed_live(cc->pt, edge)) return OG_OK;
    OG_TRY(og_plan_remove_committed(cc->p, cc->pt, edge));
    cc->c->stats.affected_edges++;
    cc->c->stats.deleted++;
    return OG_OK;
}

/* Removes every edge touching the deleted node ids (cascade).  Committed edges are found
 * through og_plan_incident_edges (the base topology when one is at hand). */
static og_status cascade(og_plan *p, size_t node, og_strmap *deleted, mut_ctx *c)
{
    for (size_t ei = 0; ei < p->cat->nedges; ei++) {
        const og_cat_type *et = &p->cat->edges[ei];
        if (et->from_node != node && et->to_node != node) continue;
        og_plan_table *pt = &p->edges[ei];
        OG_TRY(og_plan_table_view(p, pt));
        cascade_ctx cc = {p, pt, c};
        OG_TRY(og_plan_incident_edges(p, pt, et->from_node == node ? deleted : NULL, et->to_node == node ? deleted : NULL,
                                      cascade_edge, &cc));
        for (size_t r = 0; r < pt->nstaged; r++) {
            if (!staged_live(pt, r)) continue;
            size_t ns, nd;
            const uint8_t *s = og_vector_get_bytes(&pt->cols[1], r, &ns), *d = og_vector_get_bytes(&pt->cols[2], r, &nd);
            if ((et->from_node == node && og_strmap_get(deleted, s, ns, NULL)) ||
                (et->to_node == node && og_strmap_get(deleted, d, nd, NULL))) {
                og_plan_supersede(pt, (uint32_t)r);
                pt->touched = 1;
                c->stats.affected_edges++;
                c->stats.deleted++;
            }
        }
    }
    return OG_OK;
}

/* The mutation's budgets (util/budget.h) once per staged row: the clock (read every 64th
 * call) and, every 4,096 rows, what the plan holds. */
static og_status budget_step(const og_plan *p, size_t r)
{
    OG_TRY(og_budget_check());
    return (r & 4095) == 4095 ? og_budget_track(og_plan_mem_bytes(p)) : OG_OK;
}

static og_status run_statement(og_plan *p, const og_ir_query *ir, const og_ir_mutation *m, const og_vector *params,
                               mut_ctx *c)
{
    og_plan_table *pt = m->is_edge ? &p->edges[m->type] : &p->nodes[m->type];
    const og_cat_type *t = pt->t;
    OG_TRY(og_plan_table_view(p, pt));
    OG_TRY(og_plan_table_cols(pt));
    og_vector *vals = calloc(m->nassigns + 1, sizeof *vals);
    if (!vals) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    size_t nvals = 0;
    for (; nvals < m->nassigns && st == OG_OK; nvals++)
        st = og_exec_const(ir, m->assigns[nvals].value, params, p->now_ms, &vals[nvals]);
    /* a null for a non-nullable property is refused before anything is matched */
    for (size_t a = 0; st == OG_OK && m->kind == OG_QM_UPDATE && a < nvals; a++) {
        int pi = m->assigns[a].prop;
        if (pi >= 0 && !t->props[pi].nullable && (vals[a].len == 0 || og_vector_is_null(&vals[a], 0)))
            st = og_err(OG_ERR_CONSTRAINT, "%s.%s is not nullable; it cannot be set to null", t->name,
                        t->props[pi].name);
    }
    og_vector where;
    int have_where = 0;
    if (st == OG_OK && m->kind != OG_QM_INSERT && !m->cond) {
        st = og_exec_const(ir, m->where.value, params, p->now_ms, &where);
        have_where = st == OG_OK;
    }
    if (st == OG_OK && m->kind == OG_QM_INSERT) {
        /* a fresh row: nulls, then the assignments */
        og_vector *src = calloc(pt->ncols, sizeof *src);
        int have_from = 0, have_to = 0;
        if (!src) st = og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t col = 0; col < pt->ncols && st == OG_OK; col++) st = og_vector_init(&src[col], pt->cols[col].type);
        for (size_t a = 0; a < m->nassigns && st == OG_OK; a++) {
            const og_ir_assign *as = &m->assigns[a];
            if (as->prop == OG_QPROP_FROM || as->prop == OG_QPROP_TO) {
                if (og_vector_is_null(&vals[a], 0) || vals[a].type.id != OG_T_STRING) {
                    st = og_err(OG_ERR_CONSTRAINT, "%s: '%s' must be a node id string", t->name, as->name);
                    break;
                }
                size_t n;
                const uint8_t *s = og_vector_get_bytes(&vals[a], 0, &n);
                og_vector *dst = &src[as->prop == OG_QPROP_FROM ? 1 : 2];
                og_vector_free(dst);
                og_vector_init(dst, (og_type){OG_T_STRING, OG_T_NULL, 0});
                st = og_vector_append_bytes(dst, s, n);
                if (as->prop == OG_QPROP_FROM) have_from = 1;
                else have_to = 1;
                continue;
            }
            char what[160];
            snprintf(what, sizeof what, "%s.%s", t->name, t->props[as->prop].name);
            st = append_coerced(&src[og_plan_prop_col(pt, (size_t)as->prop)], &vals[a], what);
        }
        for (size_t i = 0; i < t->nprops && st == OG_OK; i++) {
            og_vector *v = &src[og_plan_prop_col(pt, i)];
            if (v->len == 0) st = t->props[i].nullable ? og_vector_append_null(v)
                                                       : og_err(OG_ERR_CONSTRAINT, "%s.%s is required but missing", t->name, t->props[i].name);
        }
        if (st == OG_OK && pt->is_edge && (!have_from || !have_to)) st = og_err(OG_ERR_CONSTRAINT, "%s: an edge needs from and to", t->name);
        if (st == OG_OK) {
            /* id: the key's canonical id (upsert) or a new ULID (src[0] left empty) */
            uint32_t row;
            long prev;
            st = og_plan_stage_vectors(p, pt, src, &row, &prev);
            if (st == OG_OK) {
                size_t idlen;
                const char *id = og_plan_staged_id(pt, row, &idlen);
                long crow = pt->last_generated ? -1 : og_plan_committed_find(p, pt, id, idlen);
                if (m->strict && (prev >= 0 || crow >= 0)) /* a strict insert never replaces */
                    st = og_err(OG_ERR_ALREADY_EXISTS,
                                "key_conflict: %s '%.*s' already exists (insert strict refuses an existing key; "
                                "a plain insert upserts it)", t->name, (int)idlen, id);
                if (st == OG_OK && prev >= 0) og_plan_supersede(pt, (uint32_t)prev);
                if (st == OG_OK && crow >= 0) st = og_plan_remove_committed(p, pt, (uint32_t)crow);
                if (prev >= 0 || crow >= 0) c->stats.updated++;
                else c->stats.inserted++;
                if (pt->is_edge) c->stats.affected_edges++;
                else c->stats.affected_nodes++;
            }
        }
        for (size_t col = 0; src && col < pt->ncols; col++) og_vector_free(&src[col]);
        free(src);
    } else if (st == OG_OK) {
        uint8_t *csel = NULL, *ssel = NULL;
        size_t nc0 = pt->overwrite ? 0 : og_tableview_rows(pt->view), ns0 = pt->nstaged;
        if (m->cond) {
            uint8_t *cf = NULL, *sf = NULL;
            st = match_cond(p, pt, ir, m->cond, params, &csel, &cf, &ssel, &sf);
            free(cf);
            free(sf);
        } else {
            st = match_rows(p, pt, m, &where, &csel, &ssel);
        }
        og_strmap deleted;
        og_strmap_init(&deleted);
        for (size_t a = 0; m->kind == OG_QM_UPDATE && a < m->nassigns && st == OG_OK; a++)
            if (m->assigns[a].is_key)
                st = og_err(OG_ERR_CONSTRAINT, "cannot update key property %s.%s; delete and re-insert the node", t->name,
                            m->assigns[a].name);
        for (size_t r = 0; r < nc0 && st == OG_OK; r++) {
            if (!bit(csel, r) || !committed_live(pt, r)) continue;
            if ((st = budget_step(p, r)) != OG_OK) break;
            if (m->kind == OG_QM_DELETE) {
                og_vector cid; /* this row's id (point reads until many rows were read) */
                uint32_t at = (uint32_t)r;
                st = og_plan_committed_values(pt, OG_FIELD_ID, &at, 1, &cid);
                if (st == OG_OK) {
                    size_t n;
                    const uint8_t *id = og_vector_get_bytes(&cid, 0, &n);
                    st = og_strmap_insert(&deleted, id, n, 0, NULL, NULL);
                    og_vector_free(&cid);
                }
                if (st == OG_OK) st = og_plan_remove_committed(p, pt, (uint32_t)r);
            } else {
                uint32_t row;
                st = stage_copy(p, pt, (long)r, -1, m, vals, &row);
                if (st == OG_OK) st = og_plan_remove_committed(p, pt, (uint32_t)r);
            }
            if (m->kind == OG_QM_DELETE) c->stats.deleted++;
            else c->stats.updated++;
            if (pt->is_edge) c->stats.affected_edges++;
            else c->stats.affected_nodes++;
        }
        for (size_t r = 0; r < ns0 && st == OG_OK; r++) {
            if (!bit(ssel, r) || !staged_live(pt, r)) continue;
            if ((st = budget_step(p, r)) != OG_OK) break;
            if (m->kind == OG_QM_DELETE) {
                size_t n;
                const char *id = og_plan_staged_id(pt, (uint32_t)r, &n);
                st = og_strmap_insert(&deleted, id, n, 0, NULL, NULL);
                og_plan_supersede(pt, (uint32_t)r);
                pt->touched = 1;
            } else {
                uint32_t row;
                st = stage_copy(p, pt, -1, (long)r, m, vals, &row);
                og_plan_supersede(pt, (uint32_t)r);
            }
            if (m->kind == OG_QM_DELETE) c->stats.deleted++;
            else c->stats.updated++;
            if (pt->is_edge) c->stats.affected_edges++;
            else c->stats.affected_nodes++;
        }
        if (st == OG_OK && m->kind == OG_QM_DELETE && !pt->is_edge && og_strmap_count(&deleted))
            st = cascade(p, pt->index, &deleted, c);
        og_strmap_free(&deleted);
        free(csel);
        free(ssel);
    }
    if (have_where) og_vector_free(&where);
    for (size_t i = 0; i < nvals; i++) og_vector_free(&vals[i]);
    free(vals);
    return st;
}

static og_status mutate_attempt(void *vctx, og_graph *g, const og_snapshot *base, og_commit_draft *draft, int attempt)
{
    (void)g;
    (void)attempt;
    mut_ctx *c = vctx;
    memset(&c->stats, 0, sizeof c->stats);
    og_read *r = NULL;
    og_compiled *comp = NULL;
    og_vector *pv = NULL;
    og_plan plan;
    memset(&plan, 0, sizeof plan);
    og_status st = og_read_begin_at(&r, c->e, base);
    if (st == OG_OK) st = og_compile(&comp, og_read_catalog(r), c->file, c->gq, c->len, c->name);
    const og_ir_query *ir = comp ? og_compiled_ir(comp) : NULL;
    if (st == OG_OK && !ir->is_mutation)
        st = og_err(OG_ERR_INVALID, "query '%s' is a read query; run it with query", ir->name);
    if (st == OG_OK) st = og_exec_bind_params(ir, c->params, &pv);
    if (st == OG_OK) st = og_plan_init(&plan, r, NULL);
    for (size_t i = 0; st == OG_OK && i < ir->nmutations; i++) st = run_statement(&plan, ir, &ir->mutations[i], pv, c);
    if (st == OG_OK) st = og_budget_track(og_plan_mem_bytes(&plan));
    if (st == OG_OK) st = og_plan_lookup_status(&plan); /* "no such key" may be a failed read */
    if (st == OG_OK && c->stats.affected_nodes + c->stats.affected_edges == 0) {
        og_draft_set_noop(draft);
    } else if (st == OG_OK) {
        st = og_plan_validate(&plan);
        size_t ntables;
        if (st == OG_OK) st = og_plan_write(&plan, draft, &ntables);
        if (st == OG_OK) st = og_draft_set_operation(draft, OG_OP_MUTATE, NULL);
        if (st == OG_OK) st = og_draft_set_stat(draft, "affected_nodes", (int64_t)c->stats.affected_nodes);
        if (st == OG_OK) st = og_draft_set_stat(draft, "affected_edges", (int64_t)c->stats.affected_edges);
    }
    if (pv) {
        for (size_t i = 0; i < ir->nparams; i++) og_vector_free(&pv[i]);
        free(pv);
    }
    og_plan_free(&plan);
    og_compiled_free(comp);
    og_read_end(r);
    return st;
}

og_status og_engine_mutate(og_engine *e, const char *file, const char *gq, size_t len, const char *name,
                           const json_t *params, const og_mutate_opts *opts, og_write_result *out,
                           og_mutate_stats *stats)
{
    mut_ctx c = {e, file, gq, len, name, params, {0}};
    og_write_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.branch = opts && opts->branch ? opts->branch : "main";
    wo.actor = og_engine_actor(e);
    wo.actor_via = og_engine_actor_via(e);
    wo.message = og_engine_message();
    wo.expected_head = opts ? opts->expected_head : NULL;
    og_status st = og_graph_write(og_engine_graph(e), &wo, mutate_attempt, &c, out);
    if (stats) *stats = c.stats;
    return st;
}
