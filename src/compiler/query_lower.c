/*
 * query_lower.c — lowers a checked .gq query (query_check.c) into the typed IR of ir.h.
 *
 * Read queries, per match block (the top level or one `not { }`):
 *   1. variables connected by traversals form components; a component that touches a
 *      variable bound outside the block needs no scan; otherwise its first-declared binding
 *      becomes a SCAN and later bindings of the component are deferred: their inline
 *      matches become predicates of the EXPAND that introduces the variable;
 *   2. traversals are expanded from whichever endpoint is bound, repeatedly (reverse when only
 *      the destination is bound; `closing` when both are) — after each root scan, so one
 *      component is finished before the next is cross-joined;
 *   3. predicates that mention one variable of the block are pushed into the operator that
 *      binds it (SCAN preds, EXPAND dst_preds / edge_preds); the rest become FILTERs;
 *   4. negations become ANTIJOINs with their own inner pipelines.
 * Then projection columns (with the reference's default names), aggregation, ranks (search
 * orderings and projected scores share one rank entry), order keys and limit; the read and
 * write sets; and for mutations, statements with resolved property ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ir.h"
#include "compiler/query_check.h"

typedef struct low {
    og_ir_query *ir;
    const og_catalog *cat;
    const og_query *q;
    og_qarena *a;
    int nomem;
    const og_qexpr **rank_src; /* AST of each rank (for sharing) */
    size_t rank_cap;
} low;

static void *lalloc(low *L, size_t n)
{
    void *p = og_qarena_alloc(L->a, n);
    if (!p) L->nomem = 1;
    return p;
}

static const char *lstr(low *L, const char *s)
{
    if (!s) return NULL;
    char *d = og_qarena_strndup(L->a, s, strlen(s));
    if (!d) L->nomem = 1;
    return d;
}

/* Arena vector push: returns a zeroed slot. */
static void *vpush(low *L, void **arr, size_t *len, size_t *cap, size_t elem)
{
    if (*len == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        void *n = lalloc(L, nc * elem);
        if (!n) return NULL;
        if (*len) memcpy(n, *arr, *len * elem);
        *arr = n;
        *cap = nc;
    }
    void *slot = (char *)*arr + (*len)++ * elem;
    memset(slot, 0, elem);
    return slot;
}

static const og_cat_type *var_cat_type(low *L, int vi)
{
    const og_ir_var *v = &L->ir->vars[vi];
    return v->is_edge ? &L->cat->edges[v->type] : &L->cat->nodes[v->type];
}

/* ---- values -------------------------------------------------------------------------------- */

static int copy_lit(low *L, og_qlit *dst, const og_qlit *src)
{
    *dst = *src;
    if (src->s) {
        char *s = og_qarena_strndup(L->a, src->s, src->slen);
        if (!s) return L->nomem = 1, 0;
        dst->s = s;
    }
    if (src->nitems) {
        dst->items = lalloc(L, src->nitems * sizeof *dst->items);
        if (!dst->items) return 0;
        for (size_t i = 0; i < src->nitems; i++)
            if (!copy_lit(L, &dst->items[i], &src->items[i])) return 0;
    }
    return 1;
}

static og_qtype lit_type(const og_qlit *l)
{
    og_qtype t;
    memset(&t, 0, sizeof t);
    t.node_type = -1;
    switch (l->kind) {
    case OG_QLIT_STRING: t.t.id = OG_T_STRING; break;
    case OG_QLIT_INT: t.t.id = OG_T_I64; break;
    case OG_QLIT_FLOAT: t.t.id = OG_T_F64; break;
    case OG_QLIT_BOOL: t.t.id = OG_T_BOOL; break;
    case OG_QLIT_DATE: t.t.id = OG_T_DATE32; break;
    case OG_QLIT_DATETIME: t.t.id = OG_T_DATE64; break;
    case OG_QLIT_LIST:
        t.t.id = OG_T_LIST;
        t.t.elem = l->nitems ? lit_type(&l->items[0]).t.id : OG_T_STRING;
        break;
    }
    return t;
}

static og_ir_expr *new_x(low *L, og_ir_expr_kind k)
{
    og_ir_expr *x = lalloc(L, sizeof *x);
    if (!x) return NULL;
    x->kind = k;
    x->var = x->prop = x->param = x->rank = x->column = -1;
    x->type.node_type = -1;
    return x;
}

static og_ir_expr *lower_value(low *L, const og_qvalue *v)
{
    og_ir_expr *x;
    if (v->kind == OG_QV_NOW) {
        if ((x = new_x(L, OG_IRX_NOW))) x->type.t.id = OG_T_DATE64;
    } else if (v->kind == OG_QV_VAR) {
        if ((x = new_x(L, OG_IRX_PARAM))) {
            x->param = v->param;
            x->type = L->q->params[v->param].type;
        }
    } else if ((x = new_x(L, OG_IRX_LIT))) {
        if (!copy_lit(L, &x->lit, &v->lit)) return NULL;
        x->type = lit_type(&v->lit);
    }
    return x;
}

static og_ir_expr *lower_expr(low *L, const og_qexpr *e);

static int find_rank(low *L, const og_qexpr *e);
static int pred_from_cond(low *L, og_ir_pred *p, const og_qexpr *e);

static int text_from(low *L, og_ir_text *t, const og_qexpr *e)
{
    t->mode = e->kind == OG_QE_FUZZY ? OG_IR_TEXT_FUZZY
              : e->kind == OG_QE_MATCH_TEXT ? OG_IR_TEXT_MATCH
                                             : OG_IR_TEXT_SEARCH;
    t->var = e->a->var_index;
    t->prop = e->a->prop_index;
    t->prop_id = var_cat_type(L, t->var)->props[t->prop].id;
    if (!(t->query = lower_expr(L, e->b))) return 0;
    if (e->c && !(t->max_edits = lower_expr(L, e->c))) return 0;
    return 1;
}

static og_ir_expr *lower_expr(low *L, const og_qexpr *e)
{
    og_ir_expr *x = NULL;
    switch (e->kind) {
    case OG_QE_NOW:
        x = new_x(L, OG_IRX_NOW);
        break;
    case OG_QE_PROP:
        if (e->prop_index == OG_QMETA_ID) {
            if ((x = new_x(L, OG_IRX_ID))) x->var = e->var_index;
        } else if (e->prop_index == OG_QMETA_TYPE) { /* the binding's type is static */
            if ((x = new_x(L, OG_IRX_LIT))) {
                x->lit.kind = OG_QLIT_STRING;
                x->lit.s = lstr(L, var_cat_type(L, e->var_index)->name);
                x->lit.slen = x->lit.s ? strlen(x->lit.s) : 0;
                if (!x->lit.s) return NULL;
            }
        } else if (e->prop_index == OG_QMETA_SRC || e->prop_index == OG_QMETA_DST) {
            if ((x = new_x(L, OG_IRX_META))) {
                x->var = e->var_index;
                x->meta = e->prop_index == OG_QMETA_SRC ? OG_IR_META_SRC : OG_IR_META_DST;
            }
        } else if ((x = new_x(L, OG_IRX_PROP))) {
            x->var = e->var_index;
            x->prop = e->prop_index;
            x->prop_id = var_cat_type(L, e->var_index)->props[e->prop_index].id;
        }
        break;
    case OG_QE_VAR:
        if (e->is_param) {
            if ((x = new_x(L, OG_IRX_PARAM))) x->param = e->param;
        } else if ((x = new_x(L, e->is_object ? OG_IRX_OBJECT : OG_IRX_ID))) {
            x->var = e->var_index;
        }
        break;
    case OG_QE_LIT:
        if ((x = new_x(L, OG_IRX_LIT)) && !copy_lit(L, &x->lit, &e->lit)) return NULL;
        break;
    case OG_QE_ALIAS:
        if ((x = new_x(L, OG_IRX_COLUMN)))
            for (size_t i = L->q->nprojections; i-- > 0;)
                if (L->q->projections[i].alias && strcmp(L->q->projections[i].alias, e->name) == 0) {
                    x->column = (int)i;
                    break;
                }
        break;
    case OG_QE_AGG:
        if ((x = new_x(L, OG_IRX_AGG))) {
            x->agg = e->agg;
            x->distinct = e->distinct;
            if (!(x->arg = lower_expr(L, e->a))) return NULL;
        }
        break;
    case OG_QE_NEAREST:
    case OG_QE_BM25:
    case OG_QE_RRF:
        if ((x = new_x(L, OG_IRX_SCORE)) && (x->rank = find_rank(L, e)) < 0) return NULL;
        break;
    case OG_QE_SEARCH:
    case OG_QE_FUZZY:
    case OG_QE_MATCH_TEXT:
        if ((x = new_x(L, OG_IRX_TEXT))) {
            if (!(x->text = lalloc(L, sizeof *x->text)) || !text_from(L, x->text, e)) return NULL;
        }
        break;
    case OG_QE_ARITH:
        if ((x = new_x(L, OG_IRX_ARITH))) {
            x->arith = (og_qarith)e->op;
            if (!(x->arg = lower_expr(L, e->a))) return NULL;
            if (e->b && !(x->arg2 = lower_expr(L, e->b))) return NULL;
        }
        break;
    case OG_QE_FUNC:
        if ((e->fn == OG_QF_LENGTH || e->fn == OG_QF_NODES) && e->var_index >= 0 &&
            L->q->vars[e->var_index].is_path) { /* length($p) / nodes($p) of a shortest path */
            if ((x = new_x(L, OG_IRX_PATH))) {
                x->fn = (og_qfn)e->fn;
                x->var = e->var_index;
            }
        } else if ((x = new_x(L, OG_IRX_FUNC))) {
            x->fn = (og_qfn)e->fn;
            x->nargs = e->nargs;
            if (e->a && !(x->arg = lower_expr(L, e->a))) return NULL;
            if (e->b && !(x->arg2 = lower_expr(L, e->b))) return NULL;
            if (e->c && !(x->arg3 = lower_expr(L, e->c))) return NULL;
        }
        break;
    case OG_QE_CMP: case OG_QE_AND: case OG_QE_OR: case OG_QE_NOT: case OG_QE_ISNULL:
        /* a condition as a value: true, false or (unknown) null */
        if ((x = new_x(L, OG_IRX_PRED))) {
            if (!(x->pred = lalloc(L, sizeof *x->pred)) || !pred_from_cond(L, x->pred, e)) return NULL;
        }
        break;
    }
    if (x) x->type = e->type;
    return x;
}

/* The rank for a nearest/bm25/rrf expression (structurally equal ones share a rank). */
static int find_rank(low *L, const og_qexpr *e)
{
    og_ir_query *ir = L->ir;
    for (size_t i = 0; i < ir->nranks; i++)
        if (og_qexpr_equal(L->rank_src[i], e)) return (int)i;
    int a1 = -1, a2 = -1;
    if (e->kind == OG_QE_RRF && ((a1 = find_rank(L, e->a)) < 0 || (a2 = find_rank(L, e->b)) < 0))
        return -1;
    size_t cap = L->rank_cap, n = ir->nranks;
    og_ir_rank *r = vpush(L, (void **)&ir->ranks, &ir->nranks, &L->rank_cap, sizeof *r);
    if (!r) return -1;
    if (L->rank_cap != cap) {
        const og_qexpr **ns = lalloc(L, L->rank_cap * sizeof *ns);
        if (!ns) return -1;
        if (n) memcpy(ns, L->rank_src, n * sizeof *ns);
        L->rank_src = ns;
    }
    L->rank_src[n] = e;
    r->arm1 = a1;
    r->arm2 = a2;
    if (e->kind == OG_QE_NEAREST) {
        r->kind = OG_IR_RANK_NEAREST;
        r->var = e->var_index;
        r->prop = e->prop_index;
        r->query_is_text = e->a->type.t.id == OG_T_STRING;
        og_ir_expr *q = lower_expr(L, e->a);
        if (!q) return -1;
        r = &ir->ranks[n];
        r->query = q;
    } else if (e->kind == OG_QE_BM25) {
        r->kind = OG_IR_RANK_BM25;
        r->var = e->a->var_index;
        r->prop = e->a->prop_index;
        og_ir_expr *q = lower_expr(L, e->b);
        if (!q) return -1;
        r = &ir->ranks[n];
        r->query = q;
    } else {
        r->kind = OG_IR_RANK_RRF;
        r->var = ir->ranks[a1].var;
        r->prop = -1;
        og_ir_expr *k;
        if (e->c) {
            k = lower_expr(L, e->c);
        } else if ((k = new_x(L, OG_IRX_LIT))) {
            k->lit.kind = OG_QLIT_INT;
            k->lit.i = 60;
            k->lit.f = 60;
            k->type.t.id = OG_T_I64;
        }
        if (!k) return -1;
        r = &ir->ranks[n];
        r->k = k;
    }
    if (r->prop >= 0) r->prop_id = var_cat_type(L, r->var)->props[r->prop].id;
    return (int)n;
}

/* ---- predicates ------------------------------------------------------------------------------ */

static og_ir_cmp cmp_of(og_qop op, const og_qtype *left)
{
    switch (op) {
    case OG_QOP_EQ: return OG_IR_EQ;
    case OG_QOP_NE: return OG_IR_NE;
    case OG_QOP_LT: return OG_IR_LT;
    case OG_QOP_LE: return OG_IR_LE;
    case OG_QOP_GT: return OG_IR_GT;
    case OG_QOP_GE: return OG_IR_GE;
    case OG_QOP_CONTAINS: return left->t.id == OG_T_LIST ? OG_IR_LIST_CONTAINS : OG_IR_STR_CONTAINS;
    case OG_QOP_STARTS_WITH: return OG_IR_STARTS_WITH;
    case OG_QOP_IN: return OG_IR_LIST_CONTAINS; /* operands swapped by lower_cmp */
    }
    return OG_IR_EQ;
}

static int is_text_call(const og_qexpr *e)
{
    return e->kind == OG_QE_SEARCH || e->kind == OG_QE_FUZZY || e->kind == OG_QE_MATCH_TEXT;
}

static int is_true(const og_qexpr *e)
{
    return e->kind == OG_QE_LIT && e->lit.kind == OG_QLIT_BOOL && e->lit.b;
}

/* `l op r` as a comparison; `l in r` is r's membership / substring test of l. */
static int lower_cmp(low *L, og_ir_pred *p, og_qop op, const og_qexpr *l, const og_qexpr *r)
{
    p->kind = OG_IRP_CMP;
    if (op == OG_QOP_IN) {
        p->op = r->type.t.id == OG_T_LIST ? OG_IR_LIST_CONTAINS : OG_IR_STR_CONTAINS;
        return (p->l = lower_expr(L, r)) && (p->r = lower_expr(L, l));
    }
    p->op = cmp_of(op, &l->type);
    return (p->l = lower_expr(L, l)) && (p->r = lower_expr(L, r));
}

static int pred_from_clause(low *L, og_ir_pred *p, const og_qclause *c)
{
    const og_qexpr *text = NULL;
    if (c->kind == OG_QC_COND) return pred_from_cond(L, p, c->left);
    if (c->kind == OG_QC_TEXT) text = c->left;
    else if (c->op == OG_QOP_EQ && is_text_call(c->left) && is_true(c->right)) text = c->left;
    else if (c->op == OG_QOP_EQ && is_text_call(c->right) && is_true(c->left)) text = c->right;
    if (text) {
        p->kind = OG_IRP_TEXT;
        return text_from(L, &p->text, text);
    }
    return lower_cmp(L, p, c->op, c->left, c->right);
}

static int is_cond_expr(const og_qexpr *e)
{
    return e->kind == OG_QE_CMP || e->kind == OG_QE_AND || e->kind == OG_QE_OR || e->kind == OG_QE_NOT ||
           e->kind == OG_QE_ISNULL;
}

/* An OG_QC_COND tree as a predicate tree. */
static int pred_from_cond(low *L, og_ir_pred *p, const og_qexpr *e)
{
    memset(p, 0, sizeof *p);
    switch (e->kind) {
    case OG_QE_AND: case OG_QE_OR:
        p->kind = e->kind == OG_QE_AND ? OG_IRP_AND : OG_IRP_OR;
        if (!(p->a = lalloc(L, sizeof *p->a)) || !(p->b = lalloc(L, sizeof *p->b))) return 0;
        return pred_from_cond(L, p->a, e->a) && pred_from_cond(L, p->b, e->b);
    case OG_QE_NOT:
        p->kind = OG_IRP_NOT;
        if (!(p->a = lalloc(L, sizeof *p->a))) return 0;
        return pred_from_cond(L, p->a, e->a);
    case OG_QE_ISNULL:
        p->kind = OG_IRP_ISNULL;
        p->negated = e->negated;
        return (p->l = lower_expr(L, e->a)) != NULL;
    case OG_QE_CMP:
        if (is_cond_expr(e->a) || is_cond_expr(e->b)) {
            og_ir_pred *x = lalloc(L, sizeof *x), *y = lalloc(L, sizeof *y);
            if (!x || !y) return 0;
            if (is_cond_expr(e->a) ? !pred_from_cond(L, x, e->a) : !(x->kind = OG_IRP_TEST, x->l = lower_expr(L, e->a)))
                return 0;
            if (is_cond_expr(e->b) ? !pred_from_cond(L, y, e->b) : !(y->kind = OG_IRP_TEST, y->l = lower_expr(L, e->b)))
                return 0;
            p->kind = OG_IRP_IFF;
            p->negated = e->op == OG_QOP_NE;
            p->a = x;
            p->b = y;
            return 1;
        }
        return lower_cmp(L, p, (og_qop)e->op, e->a, e->b);
    default:
        if (is_text_call(e)) {
            p->kind = OG_IRP_TEXT;
            return text_from(L, &p->text, e);
        }
        p->kind = OG_IRP_TEST;
        return (p->l = lower_expr(L, e)) != NULL;
    }
}

/* Variables an expression / predicate mentions, as a small set. */
typedef struct varset {
    int v[8];
    size_t n;
    int many;
} varset;

static void vs_add(varset *s, int v)
{
    if (v < 0) return;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == v) return;
    if (s->n < 8) s->v[s->n++] = v;
    else s->many = 1;
}

static void pred_vars(const og_ir_query *ir, const og_ir_pred *p, varset *s);

static void expr_vars(const og_ir_query *ir, const og_ir_expr *x, varset *s)
{
    if (!x) return;
    if (x->kind == OG_IRX_PROP || x->kind == OG_IRX_ID || x->kind == OG_IRX_META || x->kind == OG_IRX_OBJECT ||
        x->kind == OG_IRX_PATH)
        vs_add(s, x->var);
    if (x->kind == OG_IRX_PRED) pred_vars(ir, x->pred, s);
    if (x->kind == OG_IRX_TEXT) {
        vs_add(s, x->text->var);
        expr_vars(ir, x->text->query, s);
        expr_vars(ir, x->text->max_edits, s);
    }
    if (x->kind == OG_IRX_SCORE) vs_add(s, ir->ranks[x->rank].var);
    expr_vars(ir, x->arg, s);
    expr_vars(ir, x->arg2, s);
    expr_vars(ir, x->arg3, s);
}

static void pred_vars(const og_ir_query *ir, const og_ir_pred *p, varset *s)
{
    if (p->kind == OG_IRP_TEXT) {
        vs_add(s, p->text.var);
        expr_vars(ir, p->text.query, s);
        expr_vars(ir, p->text.max_edits, s);
    } else if (p->kind == OG_IRP_AND || p->kind == OG_IRP_OR || p->kind == OG_IRP_NOT || p->kind == OG_IRP_IFF) {
        pred_vars(ir, p->a, s);
        if (p->b) pred_vars(ir, p->b, s);
    } else {
        expr_vars(ir, p->l, s);
        expr_vars(ir, p->r, s);
    }
}

/* ---- pipelines -------------------------------------------------------------------------------- */

typedef struct opvec {
    og_ir_op *v;
    size_t n, cap;
} opvec;

typedef struct scope {
    low *L;
    const og_qclause *cl;
    size_t n;
    unsigned char *bound; /* per variable */
    int *binder;          /* per variable: op index in this block that binds it, or -1 */
    int *parent;          /* union-find over variables */
    unsigned char *rooted;
    unsigned char *done;  /* per clause: traversal expanded */
    opvec ops;
    og_ir_pred **pend;    /* per variable: deferred binding predicates */
    size_t *npend;
} scope;

static int uf_find(scope *s, int v)
{
    while (s->parent[v] != v) v = s->parent[v];
    return v;
}

/* Appends to an arena array whose capacity is implicit (4, then powers of two). */
static int push_pred(scope *s, og_ir_pred **arr, size_t *n, const og_ir_pred *p)
{
    size_t cap = 0;
    if (*n) {
        cap = 4;
        while (cap < *n) cap *= 2;
    }
    og_ir_pred *slot = vpush(s->L, (void **)arr, n, &cap, sizeof *slot);
    if (!slot) return 0;
    *slot = *p;
    return 1;
}

static int binding_preds(scope *s, const og_qclause *b)
{
    low *L = s->L;
    const og_cat_type *t = &L->cat->nodes[b->type_index];
    for (size_t i = 0; i < b->nmatches; i++) {
        const og_qpropmatch *m = &b->matches[i];
        const og_cat_prop *pr = &t->props[m->prop_index];
        og_ir_pred p;
        memset(&p, 0, sizeof p);
        p.kind = OG_IRP_CMP;
        p.op = pr->type.id == OG_T_LIST ? OG_IR_LIST_CONTAINS : OG_IR_EQ;
        if (!(p.l = new_x(L, OG_IRX_PROP))) return 0;
        p.l->var = b->var_index;
        p.l->prop = m->prop_index;
        p.l->prop_id = pr->id;
        p.l->type.t = pr->type;
        p.l->type.nullable = pr->nullable;
        p.l->type.is_enum = pr->is_enum;
        if (m->expr) { /* {flag: cond}: flag = cond, unknown (no match) when either is null */
            og_ir_pred *x = lalloc(L, sizeof *x), *y = lalloc(L, sizeof *y);
            if (!x || !y) return 0;
            x->kind = OG_IRP_TEST;
            x->l = p.l;
            if (!pred_from_cond(L, y, m->expr)) return 0;
            memset(&p, 0, sizeof p);
            p.kind = OG_IRP_IFF;
            p.a = x;
            p.b = y;
        } else if (!(p.r = lower_value(L, &m->value))) {
            return 0;
        }
        int v = b->var_index;
        if (!push_pred(s, &s->pend[v], &s->npend[v], &p)) return 0;
    }
    return 1;
}

static og_ir_op *new_op(scope *s, og_ir_op_kind k)
{
    og_ir_op *op = vpush(s->L, (void **)&s->ops.v, &s->ops.n, &s->ops.cap, sizeof *op);
    if (!op) return NULL;
    op->kind = k;
    op->var = op->src = op->dst = op->edge_var = op->node_type = op->edge_type = -1;
    return op;
}

static int expand_ready(scope *s)
{
    low *L = s->L;
    int progress = 1;
    while (progress) {
        progress = 0;
        for (size_t i = 0; i < s->n; i++) {
            const og_qclause *c = &s->cl[i];
            if (c->kind != OG_QC_TRAVERSAL || s->done[i]) continue;
            int sv = c->src_index, dv = c->dst_index;
            int sb = sv >= 0 && s->bound[sv], db = dv >= 0 && s->bound[dv];
            if (!sb && !db) continue;
            const og_cat_type *e = &L->cat->edges[c->type_index];
            og_ir_op *op = new_op(s, OG_IR_EXPAND);
            if (!op) return 0;
            int opi = (int)s->ops.n - 1;
            op->edge_type = c->type_index;
            op->min_hops = c->min_hops;
            /* cross-type edges cannot chain: the reference clamps max to one hop */
            op->max_hops = e->from_node != e->to_node && c->max_hops > 1 ? 1 : c->max_hops;
            op->edge_var = c->edge_var_index;
            if (sb) {
                op->src = sv;
                op->dst = dv;
                op->dir = c->dir;
                op->closing = db;
            } else {
                op->src = dv;
                op->dst = sv;
                op->dir = c->dir == OG_QDIR_OUT ? OG_QDIR_IN : c->dir == OG_QDIR_IN ? OG_QDIR_OUT : OG_QDIR_BOTH;
            }
            op->node_type = (int)(op->dir == OG_QDIR_IN ? e->from_node : e->to_node);
            if (op->dst >= 0 && !op->closing) {
                s->bound[op->dst] = 1;
                s->binder[op->dst] = opi;
            }
            if (op->edge_var >= 0) {
                s->bound[op->edge_var] = 1;
                s->binder[op->edge_var] = opi;
            }
            s->done[i] = 1;
            progress = 1;
        }
    }
    return 1;
}

/* Attaches a one-variable predicate to the operator binding that variable in this block, or
 * appends a FILTER. */
static int place_pred(scope *s, const og_ir_pred *p)
{
    varset vs = {{0}, 0, 0};
    pred_vars(s->L->ir, p, &vs);
    if (vs.n == 1 && !vs.many && s->binder[vs.v[0]] >= 0) {
        og_ir_op *op = &s->ops.v[s->binder[vs.v[0]]];
        if (op->kind == OG_IR_EXPAND && op->edge_var == vs.v[0])
            return push_pred(s, &op->edge_preds, &op->nedge_preds, p);
        return push_pred(s, &op->preds, &op->npreds, p);
    }
    og_ir_op *f = new_op(s, OG_IR_FILTER);
    if (!f) return 0;
    f->pred = *p;
    return 1;
}

static void clause_refs(const og_qclause *cl, size_t n, unsigned char *refs);

static void qexpr_refs(const og_qexpr *e, unsigned char *refs)
{
    if (!e) return;
    if ((e->kind == OG_QE_PROP || e->kind == OG_QE_NEAREST || (e->kind == OG_QE_VAR && !e->is_param)) &&
        e->var_index >= 0)
        refs[e->var_index] = 1;
    qexpr_refs(e->a, refs);
    qexpr_refs(e->b, refs);
    qexpr_refs(e->c, refs);
}

static void clause_refs(const og_qclause *cl, size_t n, unsigned char *refs)
{
    for (size_t i = 0; i < n; i++) {
        const og_qclause *c = &cl[i];
        switch (c->kind) {
        case OG_QC_BINDING: refs[c->var_index] = 1; break;
        case OG_QC_TRAVERSAL:
            if (c->src_index >= 0) refs[c->src_index] = 1;
            if (c->dst_index >= 0) refs[c->dst_index] = 1;
            break;
        case OG_QC_PATH:
            refs[c->var_index] = refs[c->src_index] = refs[c->dst_index] = 1;
            break;
        case OG_QC_FILTER:
        case OG_QC_TEXT:
        case OG_QC_COND:
            qexpr_refs(c->left, refs);
            qexpr_refs(c->right, refs);
            break;
        case OG_QC_NEGATION: clause_refs(c->inner, c->ninner, refs); break;
        }
    }
}

static int lower_scope(low *L, const og_qclause *cl, size_t n, const unsigned char *outer,
                       og_ir_op **out, size_t *nout);

/* The variables an optional block binds: those of its own clauses (and of optional blocks
 * nested in it) not bound before it; not those local to a `not { }` inside. */
static void optional_binds(const og_qclause *cl, size_t n, const unsigned char *bound, unsigned char *refs)
{
    for (size_t i = 0; i < n; i++) {
        const og_qclause *c = &cl[i];
        int vs[4] = {-1, -1, -1, -1};
        if (c->kind == OG_QC_BINDING) vs[0] = c->var_index;
        if (c->kind == OG_QC_TRAVERSAL) vs[1] = c->src_index, vs[2] = c->dst_index, vs[3] = c->edge_var_index;
        if (c->kind == OG_QC_PATH) vs[1] = c->var_index;
        if (c->kind == OG_QC_NEGATION && c->sub == OG_QSUB_OPTIONAL) optional_binds(c->inner, c->ninner, bound, refs);
        for (int k = 0; k < 4; k++)
            if (vs[k] >= 0 && !bound[vs[k]]) refs[vs[k]] = 1;
    }
}

/* `optional { … }`: a left outer join of the block's pipeline (an OG_IR_ANTIJOIN op with sub
 * OPTIONAL) that binds the block's variables for the rest of the scope. */
static int lower_optional(scope *s, const og_qclause *c, unsigned char *refs)
{
    low *L = s->L;
    size_t nv = L->ir->nvars ? L->ir->nvars : 1;
    og_ir_op *inner = NULL;
    size_t ninner = 0;
    if (!lower_scope(L, c->inner, c->ninner, s->bound, &inner, &ninner)) return 0;
    og_ir_op *op = new_op(s, OG_IR_ANTIJOIN);
    if (!op) return 0;
    op->inner = inner;
    op->ninner = ninner;
    op->sub = OG_QSUB_OPTIONAL;
    memset(refs, 0, nv);
    clause_refs(c->inner, c->ninner, refs);
    size_t cnt = 0;
    for (size_t v = 0; v < nv; v++) cnt += refs[v] && s->bound[v];
    if (cnt && !(op->outer_vars = lalloc(L, cnt * sizeof *op->outer_vars))) return 0;
    for (size_t v = 0; v < nv; v++)
        if (refs[v] && s->bound[v]) op->outer_vars[op->nouter++] = (int)v;
    memset(refs, 0, nv);
    optional_binds(c->inner, c->ninner, s->bound, refs);
    cnt = 0;
    for (size_t v = 0; v < nv; v++) cnt += refs[v];
    if (cnt && !(op->opt_vars = lalloc(L, cnt * sizeof *op->opt_vars))) return 0;
    for (size_t v = 0; v < nv; v++)
        if (refs[v]) op->opt_vars[op->nopt++] = (int)v, s->bound[v] = 1;
    return 1;
}

static int lower_scope(low *L, const og_qclause *cl, size_t n, const unsigned char *outer,
                       og_ir_op **out, size_t *nout)
{
    size_t nv = L->ir->nvars ? L->ir->nvars : 1;
    scope s;
    memset(&s, 0, sizeof s);
    s.L = L;
    s.cl = cl;
    s.n = n;
    s.bound = calloc(nv, 1);
    s.binder = malloc(nv * sizeof *s.binder);
    s.parent = malloc(nv * sizeof *s.parent);
    s.rooted = calloc(nv, 1);
    s.done = calloc(n ? n : 1, 1);
    s.pend = calloc(nv, sizeof *s.pend);
    s.npend = calloc(nv, sizeof *s.npend);
    unsigned char *refs = calloc(nv, 1);
    int ok = s.bound && s.binder && s.parent && s.rooted && s.done && s.pend && s.npend && refs;
    if (!ok) L->nomem = 1;
    for (size_t v = 0; ok && v < nv; v++) {
        s.binder[v] = -1;
        s.parent[v] = (int)v;
        s.bound[v] = outer ? outer[v] : 0;
    }
    for (size_t i = 0; ok && i < n; i++)
        if (cl[i].kind == OG_QC_TRAVERSAL && cl[i].src_index >= 0 && cl[i].dst_index >= 0) {
            int a = uf_find(&s, cl[i].src_index), b = uf_find(&s, cl[i].dst_index);
            s.parent[a] = b;
        }
    for (size_t v = 0; ok && v < nv; v++)
        if (s.bound[v]) s.rooted[uf_find(&s, (int)v)] = 1;
    if (ok) ok = expand_ready(&s);
    for (size_t i = 0; ok && i < n; i++) {
        const og_qclause *c = &cl[i];
        if (c->kind != OG_QC_BINDING) continue;
        int v = c->var_index;
        if (!(ok = binding_preds(&s, c))) break;
        if (s.bound[v] || s.rooted[uf_find(&s, v)]) continue;
        s.rooted[uf_find(&s, v)] = 1;
        og_ir_op *op = new_op(&s, OG_IR_SCAN);
        if (!(ok = op != NULL)) break;
        op->var = v;
        op->node_type = c->type_index;
        s.bound[v] = 1;
        s.binder[v] = (int)s.ops.n - 1;
        ok = expand_ready(&s);
    }
    for (size_t i = 0; ok && i < n; i++)
        if (cl[i].kind == OG_QC_TRAVERSAL && !s.done[i]) ok = 0; /* the checker rejects this */
    /* shortest paths once every node of the block is bound (the checker bound both ends before) */
    for (size_t i = 0; ok && i < n; i++) {
        const og_qclause *c = &cl[i];
        if (c->kind != OG_QC_PATH) continue;
        og_ir_op *op = new_op(&s, OG_IR_PATH);
        if (!(ok = op != NULL)) break;
        op->var = c->var_index;
        op->src = c->src_index;
        op->dst = c->dst_index;
        op->edge_type = c->type_index;
        op->node_type = (int)L->cat->edges[c->type_index].from_node;
        op->dir = c->dir;
        op->min_hops = c->min_hops;
        op->max_hops = c->max_hops;
        s.bound[op->var] = 1;
        s.binder[op->var] = (int)s.ops.n - 1;
    }
    for (size_t v = 0; ok && v < nv; v++)
        for (size_t k = 0; ok && k < s.npend[v]; k++) ok = place_pred(&s, &s.pend[v][k]);
    /* optional blocks before the filters: a filter over a variable one binds runs after it, on
     * the rows where it may be null (written outside the block, it is no part of the join) */
    for (size_t i = 0; ok && i < n; i++)
        if (cl[i].kind == OG_QC_NEGATION && cl[i].sub == OG_QSUB_OPTIONAL) ok = lower_optional(&s, &cl[i], refs);
    for (size_t i = 0; ok && i < n; i++) {
        if (cl[i].kind != OG_QC_FILTER && cl[i].kind != OG_QC_TEXT && cl[i].kind != OG_QC_COND) continue;
        og_ir_pred p;
        memset(&p, 0, sizeof p);
        ok = pred_from_clause(L, &p, &cl[i]) && place_pred(&s, &p);
    }
    for (size_t i = 0; ok && i < n; i++) {
        if (cl[i].kind != OG_QC_NEGATION || cl[i].sub == OG_QSUB_OPTIONAL) continue;
        og_ir_op *inner = NULL;
        size_t ninner = 0;
        if (!(ok = lower_scope(L, cl[i].inner, cl[i].ninner, s.bound, &inner, &ninner))) break;
        memset(refs, 0, nv);
        clause_refs(cl[i].inner, cl[i].ninner, refs);
        og_ir_op *aj = new_op(&s, OG_IR_ANTIJOIN);
        if (!(ok = aj != NULL)) break;
        aj->inner = inner;
        aj->ninner = ninner;
        aj->sub = cl[i].sub;
        if (cl[i].sub == OG_QSUB_COUNT) {
            og_qtype none;
            memset(&none, 0, sizeof none);
            aj->count_op = cmp_of(cl[i].op, &none);
            if (!(ok = (aj->count_value = lower_expr(L, cl[i].right)) != NULL)) break;
            if (cl[i].sub_arg) { /* sum(x) { … } op v: x per inner row, aggregated per outer row */
                aj->sub_agg = cl[i].sub_arg->agg;
                if (!(ok = (aj->sub_arg = lower_expr(L, cl[i].sub_arg->a)) != NULL)) break;
            }
        }
        size_t cnt = 0;
        for (size_t v = 0; v < nv; v++) cnt += refs[v] && s.bound[v];
        if (cnt && !(aj->outer_vars = lalloc(L, cnt * sizeof *aj->outer_vars))) {
            ok = 0;
            break;
        }
        for (size_t v = 0; v < nv; v++)
            if (refs[v] && s.bound[v]) aj->outer_vars[aj->nouter++] = (int)v;
    }
    *out = s.ops.v;
    *nout = s.ops.n;
    free(s.bound);
    free(s.binder);
    free(s.parent);
    free(s.rooted);
    free(s.done);
    free(s.pend);
    free(s.npend);
    free(refs);
    return ok && !L->nomem;
}

/* ---- columns, access sets, mutations ---------------------------------------------------------- */

static int add_access(low *L, og_ir_access **arr, size_t *n, int is_edge, int type)
{
    for (size_t i = 0; i < *n; i++)
        if ((*arr)[i].is_edge == is_edge && (*arr)[i].type == type) return 1;
    size_t cap = 0;
    if (*n) {
        cap = 4;
        while (cap < *n) cap *= 2;
    }
    og_ir_access *a = vpush(L, (void **)arr, n, &cap, sizeof *a);
    if (!a) return 0;
    a->is_edge = is_edge;
    a->type = type;
    a->name = is_edge ? L->cat->edges[type].name : L->cat->nodes[type].name;
    return 1;
}

static int access_cmp(const void *x, const void *y)
{
    const og_ir_access *a = x, *b = y;
    if (a->is_edge != b->is_edge) return a->is_edge - b->is_edge;
    return strcmp(a->name, b->name);
}

static int read_access(low *L, const og_qclause *cl, size_t n)
{
    og_ir_query *ir = L->ir;
    for (size_t i = 0; i < n; i++) {
        const og_qclause *c = &cl[i];
        if (c->kind == OG_QC_BINDING && !add_access(L, &ir->reads, &ir->nreads, 0, c->type_index)) return 0;
        if (c->kind == OG_QC_TRAVERSAL || c->kind == OG_QC_PATH) {
            const og_cat_type *e = &L->cat->edges[c->type_index];
            if (!add_access(L, &ir->reads, &ir->nreads, 1, c->type_index) ||
                !add_access(L, &ir->reads, &ir->nreads, 0, (int)e->from_node) ||
                !add_access(L, &ir->reads, &ir->nreads, 0, (int)e->to_node))
                return 0;
        }
        if (c->kind == OG_QC_NEGATION && !read_access(L, c->inner, c->ninner)) return 0;
    }
    return 1;
}

static int lower_assign(low *L, og_ir_assign *dst, const og_qassign *a, const og_cat_type *t)
{
    dst->name = lstr(L, a->prop);
    dst->prop = a->prop_index;
    if (a->prop_index >= 0) {
        dst->prop_id = t->props[a->prop_index].id;
        dst->is_key = t->props[a->prop_index].is_key;
    }
    if (a->expr) return (dst->value = lower_expr(L, a->expr)) != NULL;
    return (dst->value = lower_value(L, &a->value)) != NULL;
}

static og_ir_mcond *lower_mcond(low *L, const og_qmcond *c, const og_cat_type *t)
{
    og_ir_mcond *x = lalloc(L, sizeof *x);
    if (!x) return NULL;
    x->kind = c->kind;
    switch (c->kind) {
    case OG_QMC_AND: case OG_QMC_OR:
        if (!(x->a = lower_mcond(L, c->a, t)) || !(x->b = lower_mcond(L, c->b, t))) return NULL;
        return x;
    case OG_QMC_NOT:
        return (x->a = lower_mcond(L, c->a, t)) ? x : NULL;
    case OG_QMC_BARE:
        x->leaf.name = lstr(L, c->leaf.prop);
        x->leaf.prop = c->leaf.prop_index;
        x->leaf.prop_id = t->props[c->leaf.prop_index].id;
        return x;
    case OG_QMC_ISNULL:
        x->negated = c->negated;
        x->leaf.name = lstr(L, c->leaf.prop);
        x->leaf.prop = c->leaf.prop_index;
        if (c->leaf.prop_index >= 0) x->leaf.prop_id = t->props[c->leaf.prop_index].id;
        return x->leaf.name ? x : NULL;
    case OG_QMC_CMP: {
        og_qtype left;
        memset(&left, 0, sizeof left);
        if (c->leaf.prop_index >= 0) left.t = t->props[c->leaf.prop_index].type;
        x->op = cmp_of(c->op, &left);
        x->swapped = c->op == OG_QOP_IN; /* prop in list: the list contains the property's value */
        return lower_assign(L, &x->leaf, &c->leaf, t) ? x : NULL;
    }
    }
    return NULL;
}

static int lower_mutations(low *L)
{
    og_ir_query *ir = L->ir;
    const og_query *q = L->q;
    ir->mutations = lalloc(L, (q->nmutations ? q->nmutations : 1) * sizeof *ir->mutations);
    if (!ir->mutations) return 0;
    for (size_t i = 0; i < q->nmutations; i++) {
        const og_qmutation *m = &q->mutations[i];
        og_ir_mutation *im = &ir->mutations[ir->nmutations++];
        const og_cat_type *t = m->is_edge ? &L->cat->edges[m->type_index] : &L->cat->nodes[m->type_index];
        im->kind = m->kind;
        im->strict = m->strict;
        im->is_edge = m->is_edge;
        im->type = m->type_index;
        im->type_id = t->id;
        if (m->nassigns && !(im->assigns = lalloc(L, m->nassigns * sizeof *im->assigns))) return 0;
        for (size_t k = 0; k < m->nassigns; k++)
            if (!lower_assign(L, &im->assigns[im->nassigns++], &m->assigns[k], t)) return 0;
        if (m->kind != OG_QM_INSERT) {
            og_qtype dummy;
            memset(&dummy, 0, sizeof dummy);
            if (m->cond) {
                if (!(im->cond = lower_mcond(L, m->cond, t))) return 0;
            } else {
                im->where_op = cmp_of(m->where_op, &dummy);
                if (!lower_assign(L, &im->where, &m->where, t)) return 0;
            }
        }
        if (!add_access(L, &ir->reads, &ir->nreads, m->is_edge, m->type_index) ||
            !add_access(L, &ir->writes, &ir->nwrites, m->is_edge, m->type_index))
            return 0;
        if (m->is_edge && m->kind == OG_QM_INSERT &&
            (!add_access(L, &ir->reads, &ir->nreads, 0, (int)t->from_node) ||
             !add_access(L, &ir->reads, &ir->nreads, 0, (int)t->to_node)))
            return 0;
        if (!m->is_edge && m->kind == OG_QM_DELETE)
            for (size_t e = 0; e < L->cat->nedges; e++) {
                const og_cat_type *et = &L->cat->edges[e];
                if ((int)et->from_node != m->type_index && (int)et->to_node != m->type_index) continue;
                if (!add_access(L, &ir->reads, &ir->nreads, 1, (int)e) ||
                    !add_access(L, &ir->writes, &ir->nwrites, 1, (int)e))
                    return 0;
            }
    }
    return 1;
}

static int is_rank_expr(const og_qexpr *e)
{
    return e->kind == OG_QE_NEAREST || e->kind == OG_QE_BM25 || e->kind == OG_QE_RRF;
}

static int lower_read(low *L)
{
    og_ir_query *ir = L->ir;
    const og_query *q = L->q;
    if (!lower_scope(L, q->clauses, q->nclauses, NULL, &ir->ops, &ir->nops)) return 0;
    ir->columns = lalloc(L, (q->nprojections ? q->nprojections : 1) * sizeof *ir->columns);
    if (!ir->columns) return 0;
    for (size_t i = 0; i < q->nprojections; i++) ir->aggregate |= q->projections[i].expr->is_agg;
    /* `return distinct`: every column is a group key (the rows are grouped on all of them) */
    ir->distinct = q->distinct;
    ir->aggregate |= q->distinct;
    for (size_t i = 0; i < q->nprojections; i++) {
        const og_qprojection *p = &q->projections[i];
        og_ir_column *col = &ir->columns[ir->ncolumns++];
        char nb[256];
        col->name = lstr(L, og_query_column_name(p, nb, sizeof nb));
        col->type = p->expr->type;
        col->group_key = ir->aggregate && !p->expr->is_agg;
        if (!col->name || !(col->expr = lower_expr(L, p->expr))) return 0;
    }
    ir->rank_order = -1;
    if (q->norderings) {
        const og_qexpr *first = q->orderings[0].expr;
        if (first->kind == OG_QE_ALIAS)
            for (size_t i = q->nprojections; i-- > 0;)
                if (q->projections[i].alias && strcmp(q->projections[i].alias, first->name) == 0) {
                    if (is_rank_expr(q->projections[i].expr)) first = q->projections[i].expr;
                    break;
                }
        size_t from = 0; /* a search ordering first: the later keys are secondary sort keys */
        if (is_rank_expr(first)) {
            if ((ir->rank_order = find_rank(L, first)) < 0) return 0;
            from = 1;
        }
        if (from < q->norderings) {
            ir->orders = lalloc(L, q->norderings * sizeof *ir->orders);
            if (!ir->orders) return 0;
            for (size_t i = from; i < q->norderings; i++) {
                og_ir_order *o = &ir->orders[ir->norders++];
                o->desc = q->orderings[i].desc;
                const og_qexpr *k = q->orderings[i].expr;
                long col = -1; /* an aggregate (or group key) written again orders by its column */
                for (size_t c = 0; ir->aggregate && c < q->nprojections && col < 0; c++)
                    if (og_qexpr_equal(q->projections[c].expr, k)) col = (long)c;
                if (col >= 0) {
                    if (!(o->key = new_x(L, OG_IRX_COLUMN))) return 0;
                    o->key->column = (int)col;
                    o->key->type = q->projections[col].expr->type;
                } else if (!(o->key = lower_expr(L, k))) {
                    return 0;
                }
            }
        }
    }
    ir->has_limit = q->has_limit;
    ir->limit = q->limit;
    ir->limit_param = q->has_limit ? q->limit_param_index : -1;
    ir->has_offset = q->has_offset;
    ir->offset = q->offset;
    ir->offset_param = q->has_offset ? q->offset_param_index : -1;
    return read_access(L, q->clauses, q->nclauses);
}

og_status og_query_lower(og_ir_query **out, const og_query_file *f, size_t qi,
                         const og_catalog *cat)
{
    *out = NULL;
    if (!f || qi >= f->nqueries || !cat || !f->queries[qi].checked) return OG_ERR_INTERNAL;
    const og_query *q = &f->queries[qi];
    og_qarena arena = {0};
    og_ir_query *ir = og_qarena_alloc(&arena, sizeof *ir);
    if (!ir) return OG_ERR_NOMEM;
    low L = {.ir = ir, .cat = cat, .q = q, .a = &arena};
    ir->cat = cat;
    ir->rank_order = -1;
    ir->limit_param = ir->offset_param = -1;
    ir->name = lstr(&L, q->name);
    ir->description = lstr(&L, q->description);
    ir->instruction = lstr(&L, q->instruction);
    ir->mcp_hidden = q->mcp_hidden;
    ir->mcp_tool_name = lstr(&L, q->mcp_tool_name);
    ir->is_mutation = q->is_mutation;
    if (q->nparams && (ir->params = lalloc(&L, q->nparams * sizeof *ir->params)))
        for (size_t i = 0; i < q->nparams; i++) {
            ir->params[ir->nparams].name = lstr(&L, q->params[i].name);
            ir->params[ir->nparams++].type = q->params[i].type;
        }
    if (q->nvars && (ir->vars = lalloc(&L, q->nvars * sizeof *ir->vars)))
        for (size_t i = 0; i < q->nvars; i++) {
            og_ir_var *v = &ir->vars[ir->nvars++];
            v->name = lstr(&L, q->vars[i].name);
            v->is_edge = q->vars[i].is_edge;
            v->type = q->vars[i].type_index;
            v->depth = q->vars[i].depth;
            v->optional = q->vars[i].optional;
            v->is_path = q->vars[i].is_path;
        }
    int ok = !L.nomem && (q->is_mutation ? lower_mutations(&L) : lower_read(&L));
    if (ok && !L.nomem) {
        if (ir->nreads) qsort(ir->reads, ir->nreads, sizeof *ir->reads, access_cmp);
        if (ir->nwrites) qsort(ir->writes, ir->nwrites, sizeof *ir->writes, access_cmp);
    }
    if (!ok || L.nomem) {
        og_qarena_free(&arena);
        return L.nomem ? OG_ERR_NOMEM : OG_ERR_INTERNAL;
    }
    ir->arena = arena;
    *out = ir;
    return OG_OK;
}

og_status og_query_compile(og_ir_query **out, og_query_file *f, size_t qi,
                           const og_catalog *cat, const og_source *src, og_diag *err)
{
    *out = NULL;
    og_status st = og_query_check(f, qi, cat, src, err);
    if (st != OG_OK) return st;
    return og_query_lower(out, f, qi, cat);
}

void og_ir_free(og_ir_query *ir)
{
    if (!ir) return;
    og_qarena arena = ir->arena;
    og_qarena_free(&arena);
}
