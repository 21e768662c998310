/*
 * query_check.c — the type checker of .gq read queries (reference-language.md §3, codes of
 * §9): variable scoping (negation blocks hide their variables), traversal direction
 * inference from bound variables, hop-bound rules, filter operand typing, search-function
 * argument rules, aggregate grouping and the ordering/limit rules of the search orderings.
 * It annotates the AST in place for the lowering pass (query_lower.c).  Mutations are checked
 * in query_check_mut.c.  First error wins, as in the reference; rules the reference leaves to
 * run time (or gets wrong) and that this port rejects early are marked "C port" and listed in
 * docs/query-language.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/query_check_int.h"
#include "compiler/suggest.h"

/* ---- errors ------------------------------------------------------------------------------- */

int og_chk_fail(og_chk *c, og_qspan sp, const char *code, const char *fmt, ...)
{
    if (c->st != OG_OK) return 0;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    og_diag local;
    memset(&local, 0, sizeof local);
    og_diag *d = c->err ? c->err : &local;
    og_status st = og_diag_set(d, OG_ERR_TYPE, c->src, sp.start, sp.end, NULL, "%s%s%s",
                               code ? code : "", code ? ": " : "", msg);
    c->st = st == OG_OK ? OG_ERR_TYPE : st;
    if (d == &local) og_diag_free(&local);
    return 0;
}

int og_chk_nomem(og_chk *c)
{
    if (c->st == OG_OK) c->st = OG_ERR_NOMEM;
    return 0;
}

const char *og_query_diag_code(const og_diag *d, char *buf, size_t cap)
{
    if (!cap) return buf;
    buf[0] = 0;
    const char *m = d ? d->message : NULL;
    if (!m || m[0] != 'T') return buf;
    size_t i = 1;
    while (m[i] >= '0' && m[i] <= '9') i++;
    if (i == 1 || m[i] != ':' || i >= cap) return buf;
    memcpy(buf, m, i);
    buf[i] = 0;
    return buf;
}

/* ---- types -------------------------------------------------------------------------------- */

og_qtype og_qt_scalar(og_type_id id)
{
    og_qtype t;
    memset(&t, 0, sizeof t);
    t.t.id = id;
    t.node_type = -1;
    return t;
}

og_qtype og_qt_prop(const og_cat_prop *p)
{
    og_qtype t = og_qt_scalar(p->type.id);
    t.t = p->type;
    t.nullable = p->nullable;
    t.is_enum = p->is_enum;
    return t;
}

int og_qt_is_numeric(og_type_id id)
{
    return id == OG_T_I32 || id == OG_T_I64 || id == OG_T_U32 || id == OG_T_U64 ||
           id == OG_T_F32 || id == OG_T_F64;
}

static int is_integer(og_type_id id)
{
    return id == OG_T_I32 || id == OG_T_I64 || id == OG_T_U32 || id == OG_T_U64;
}

int og_qt_is_list(const og_qtype *t) { return t->t.id == OG_T_LIST; }

static int scalar_compat(og_type_id a, og_type_id b)
{
    return a == b || (og_qt_is_numeric(a) && og_qt_is_numeric(b));
}

int og_qt_compatible(const og_qtype *a, const og_qtype *b)
{
    if (a->node_type >= 0 || b->node_type >= 0) return 0;
    if (og_qt_is_list(a) != og_qt_is_list(b)) return 0;
    if (og_qt_is_list(a)) return scalar_compat(a->t.elem, b->t.elem);
    if (a->t.id == OG_T_VECTOR || b->t.id == OG_T_VECTOR)
        return a->t.id == b->t.id && a->t.dim == b->t.dim;
    return scalar_compat(a->t.id, b->t.id);
}

const char *og_qt_name(const og_qtype *t, char *buf, size_t cap)
{
    if (t->node_type >= 0) {
        snprintf(buf, cap, "node");
        return buf;
    }
    og_qtype u = *t;
    u.nullable = 0;
    return og_qtype_name(&u, buf, cap);
}

static int is_string_scalar(const og_qtype *t)
{
    return t->node_type < 0 && t->t.id == OG_T_STRING;
}

int og_chk_lit_type(og_chk *c, const og_qlit *lit, og_qtype *out)
{
    switch (lit->kind) {
    case OG_QLIT_STRING: *out = og_qt_scalar(OG_T_STRING); return 1;
    case OG_QLIT_INT: *out = og_qt_scalar(OG_T_I64); return 1;
    case OG_QLIT_FLOAT: *out = og_qt_scalar(OG_T_F64); return 1;
    case OG_QLIT_BOOL: *out = og_qt_scalar(OG_T_BOOL); return 1;
    case OG_QLIT_DATE: *out = og_qt_scalar(OG_T_DATE32); return 1;
    case OG_QLIT_DATETIME: *out = og_qt_scalar(OG_T_DATE64); return 1;
    case OG_QLIT_LIST: break;
    }
    *out = og_qt_scalar(OG_T_LIST);
    out->t.elem = OG_T_STRING;
    if (lit->nitems == 0) return 1;
    og_qtype first, it;
    if (lit->items[0].kind == OG_QLIT_LIST)
        return og_chk_fail(c, lit->items[0].span, NULL, "nested list literals are not supported");
    og_chk_lit_type(c, &lit->items[0], &first);
    for (size_t i = 1; i < lit->nitems; i++) {
        if (lit->items[i].kind == OG_QLIT_LIST)
            return og_chk_fail(c, lit->items[i].span, NULL,
                               "nested list literals are not supported");
        og_chk_lit_type(c, &lit->items[i], &it);
        if (!og_qt_compatible(&first, &it))
            return og_chk_fail(c, lit->items[i].span, NULL,
                               "list literal elements must share a compatible scalar type");
    }
    out->t.elem = first.t.id;
    return 1;
}

static int numeric_list_len(const og_qlit *lit, size_t *n)
{
    if (lit->kind != OG_QLIT_LIST || lit->nitems == 0) return 0;
    for (size_t i = 0; i < lit->nitems; i++)
        if (lit->items[i].kind != OG_QLIT_INT && lit->items[i].kind != OG_QLIT_FLOAT) return 0;
    *n = lit->nitems;
    return 1;
}

static int enum_check(og_chk *c, const og_qlit *lit, const og_cat_prop *p, const char *prop)
{
    char allowed[256];
    allowed[0] = 0;
    for (size_t i = 0; i < p->n_enum; i++) {
        size_t l = strlen(allowed);
        snprintf(allowed + l, sizeof allowed - l, "%s%s", i ? ", " : "", p->enum_values[i]);
    }
    if (lit->kind == OG_QLIT_STRING && !og_cat_prop_enum_has(p, lit->s, lit->slen))
        return og_chk_fail(c, lit->span, "T3", "property `%s` expects one of [%s], got '%s'",
                           prop, allowed, lit->s);
    if (lit->kind == OG_QLIT_LIST)
        for (size_t i = 0; i < lit->nitems; i++)
            if (!enum_check(c, &lit->items[i], p, prop)) return 0;
    return 1;
}

int og_chk_lit_against(og_chk *c, const og_qlit *lit, const og_cat_prop *p, const char *prop)
{
    og_qtype want = og_qt_prop(p);
    char a[64], b[64];
    size_t n;
    if (want.t.id == OG_T_VECTOR && numeric_list_len(lit, &n)) {
        if (n == want.t.dim) return 1;
        return og_chk_fail(c, lit->span, "T3",
                           "property `%s` has type Vector(%u) but got vector literal with %zu elements",
                           prop, (unsigned)want.t.dim, n);
    }
    og_qtype got;
    if (!og_chk_lit_type(c, lit, &got)) return 0;
    if (!og_qt_compatible(&got, &want)) /* a date written as a string: say how to write it */
        return og_chk_fail(c, lit->span, "T3", "property `%s` has type %s but got %s%s", prop,
                           og_qt_name(&want, a, sizeof a), og_qt_name(&got, b, sizeof b),
                           lit->kind != OG_QLIT_STRING ? ""
                           : want.t.id == OG_T_DATE32  ? "; write the date as date(\"2024-01-31\")"
                           : want.t.id == OG_T_DATE64  ? "; write the time as datetime(\"2024-01-31T12:00:00Z\")"
                                                       : "");
    if (p->is_enum) return enum_check(c, lit, p, prop);
    return 1;
}

int og_chk_param(const og_chk *c, const char *name)
{
    for (size_t i = 0; i < c->q->nparams; i++)
        if (strcmp(c->q->params[i].name, name) == 0) return (int)i;
    return -1;
}

/* ---- variables ----------------------------------------------------------------------------- */

static int lookup(og_chk *c, const char *name)
{
    for (size_t i = c->nvisible; i-- > 0;)
        if (strcmp(c->q->vars[c->visible[i]].name, name) == 0) return c->visible[i];
    return -1;
}

const char *og_chk_name_hint(og_chk *c, const char *name, int vars, int params, char *buf, size_t cap)
{
    const char *names[256], *best[3];
    size_t n = 0;
    for (size_t i = 0; vars && i < c->nvisible && n < 256; i++) names[n++] = c->q->vars[c->visible[i]].name;
    for (size_t i = 0; params && i < c->q->nparams && n < 256; i++) names[n++] = c->q->params[i].name;
    return og_suggest_var_hint(best, og_suggest_names(name, names, n, best, 3), buf, cap);
}

/* A variable bound by an earlier `optional { }` may be null: it cannot anchor a traversal, be
 * re-bound or be ranked (T46); filters, projections and aggregates read it as null. */
static int optional_refused(og_chk *c, int vi, og_qspan sp, const char *use)
{
    if (vi < 0 || !c->q->vars[vi].optional) return 0;
    og_chk_fail(c, sp, "T46", "variable `$%s` is bound inside `optional { }` and may be null; it cannot %s "
                "outside that block", c->q->vars[vi].name, use);
    return 1;
}

int og_chk_path_var(og_chk *c, const char *name)
{
    int vi = lookup(c, name);
    return vi >= 0 && c->q->vars[vi].is_path ? vi : -1;
}

/* A `shortest { }` path variable is read only through length($p) / nodes($p) (T47). */
static int path_refused(og_chk *c, int vi, og_qspan sp)
{
    if (vi < 0 || !c->q->vars[vi].is_path) return 0;
    const char *n = c->q->vars[vi].name;
    og_chk_fail(c, sp, "T47", "`$%s` is a path; read it with length($%s) or nodes($%s)", n, n, n);
    return 1;
}

static int new_var(og_chk *c, const char *name, int is_edge, int type)
{
    og_query *q = c->q;
    if (q->nvars == q->vars_cap) {
        size_t ncap = q->vars_cap ? q->vars_cap * 2 : 8;
        og_qvar *n = og_qarena_alloc(&c->f->arena, ncap * sizeof *n);
        if (!n) return og_chk_nomem(c), -1;
        if (q->nvars) memcpy(n, q->vars, q->nvars * sizeof *n);
        q->vars = n;
        q->vars_cap = ncap;
    }
    if (c->nvisible == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 8;
        int *n = realloc(c->visible, ncap * sizeof *n);
        if (!n) return og_chk_nomem(c), -1;
        c->visible = n;
        c->cap = ncap;
    }
    og_qvar *v = &q->vars[q->nvars];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->is_edge = is_edge;
    v->type_index = type;
    v->depth = c->depth;
    c->visible[c->nvisible++] = (int)q->nvars;
    return (int)q->nvars++;
}

static const og_cat_type *var_type(og_chk *c, int vi)
{
    const og_qvar *v = &c->q->vars[vi];
    return v->is_edge ? &c->cat->edges[v->type_index] : &c->cat->nodes[v->type_index];
}

/* ---- expressions --------------------------------------------------------------------------- */

static int resolve(og_chk *c, og_qexpr *e, int in_agg);
static int check_cond(og_chk *c, og_qexpr *e, const og_qclause *cl);

static int is_lit_or_param(og_chk *c, const og_qexpr *e)
{
    return e->kind == OG_QE_LIT || (e->kind == OG_QE_VAR && og_chk_param(c, e->var) >= 0);
}

static int resolve_prop(og_chk *c, og_qexpr *e)
{
    int vi = lookup(c, e->var);
    char vh[160];
    if (vi < 0)
        return og_chk_fail(c, e->var_span, "T6", "variable `$%s` is not bound%s", e->var,
                           og_chk_name_hint(c, e->var, 1, 0, vh, sizeof vh));
    if (path_refused(c, vi, e->span)) return 0;
    const og_cat_type *t = var_type(c, vi);
    if (e->name[0] == '@') { /* a meta field: never a user property */
        int is_edge = c->q->vars[vi].is_edge, m = 0;
        if (!strcmp(e->name, "@id")) m = OG_QMETA_ID;
        else if (!strcmp(e->name, "@type")) m = OG_QMETA_TYPE;
        else if (is_edge && !strcmp(e->name, "@src")) m = OG_QMETA_SRC;
        else if (is_edge && !strcmp(e->name, "@dst")) m = OG_QMETA_DST;
        if (!m)
            return og_chk_fail(c, e->span, "T6", "unknown meta field `%s` on %s binding `$%s`; %s", e->name,
                               is_edge ? "edge" : "node", e->var,
                               is_edge ? "an edge has @id, @type, @src and @dst" : "a node has @id and @type");
        e->var_index = vi;
        e->prop_index = m;
        e->type = og_qt_scalar(OG_T_STRING);
        e->type.nullable = c->q->vars[vi].optional;
        return 1;
    }
    size_t pi;
    const og_cat_prop *p = og_cat_type_prop(t, e->name, &pi);
    if (!p) {
        if (!strcmp(e->name, "id") || (c->q->vars[vi].is_edge && (!strcmp(e->name, "src") || !strcmp(e->name, "dst"))))
            return og_chk_fail(c, e->span, "T6", "%s `%s` has no property `%s`; its system field is `$%s.@%s`",
                               c->q->vars[vi].is_edge ? "edge" : "type", t->name, e->name, e->var, e->name);
        char hint[96];
        return og_chk_fail(c, e->span, "T6", "%s `%s` has no property `%s`%s",
                           c->q->vars[vi].is_edge ? "edge" : "type", t->name, e->name,
                           og_suggest_hint(og_suggest_prop(t, e->name), hint, sizeof hint));
    }
    if (p->type.id == OG_T_BLOB)
        return og_chk_fail(c, e->span, "T24",
                           "Blob property `$%s.%s` is not available as a .gq read value; Blob "
                           "values require a dedicated API", e->var, e->name);
    e->var_index = vi;
    e->prop_index = (int)pi;
    e->type = og_qt_prop(p);
    e->type.nullable |= c->q->vars[vi].optional;
    return 1;
}

static int resolve_nearest(og_chk *c, og_qexpr *e)
{
    int vi = lookup(c, e->var);
    if (path_refused(c, vi, e->span)) return 0;
    if (vi >= 0 && c->q->vars[vi].is_edge)
        return og_chk_fail(c, e->var_span, "T23",
                           "nearest cannot target edge binding `$%s`; vector search runs on node "
                           "properties", e->var);
    char vh[160];
    if (vi < 0)
        return og_chk_fail(c, e->var_span, "T15", "variable `$%s` is not bound%s", e->var,
                           og_chk_name_hint(c, e->var, 1, 0, vh, sizeof vh));
    if (optional_refused(c, vi, e->var_span, "be ranked")) return 0;
    const og_cat_type *t = var_type(c, vi);
    size_t pi;
    const og_cat_prop *p = og_cat_type_prop(t, e->name, &pi);
    char hint[96];
    if (!p)
        return og_chk_fail(c, e->span, "T15", "type `%s` has no property `%s`%s", t->name, e->name,
                           og_suggest_hint(og_suggest_prop(t, e->name), hint, sizeof hint));
    char a[64], b[64];
    og_qtype pt = og_qt_prop(p);
    if (p->type.id != OG_T_VECTOR)
        return og_chk_fail(c, e->span, "T15", "nearest requires a Vector property, got %s.%s: %s",
                           t->name, e->name, og_qt_name(&pt, a, sizeof a));
    e->var_index = vi;
    e->prop_index = (int)pi;
    og_qexpr *qe = e->a;
    size_t n;
    if (qe->kind == OG_QE_LIT && numeric_list_len(&qe->lit, &n)) {
        if (n != p->type.dim)
            return og_chk_fail(c, qe->span, "T15",
                               "nearest vector dimension mismatch: property is Vector(%u), query "
                               "literal has %zu elements", (unsigned)p->type.dim, n);
        qe->type = og_qt_scalar(OG_T_VECTOR);
        qe->type.t.dim = p->type.dim;
    } else {
        if (!resolve(c, qe, 0)) return 0;
        if (qe->type.node_type < 0 && qe->type.t.id == OG_T_VECTOR) {
            if (qe->type.t.dim != p->type.dim)
                return og_chk_fail(c, qe->span, "T15",
                                   "nearest vector dimension mismatch: property is Vector(%u), "
                                   "query is Vector(%u)", (unsigned)p->type.dim,
                                   (unsigned)qe->type.t.dim);
        } else if (!is_string_scalar(&qe->type)) {
            return og_chk_fail(c, qe->span, "T15", "nearest query must be Vector(%u) or String, got %s",
                               (unsigned)p->type.dim, og_qt_name(&qe->type, b, sizeof b));
        }
    }
    if (!is_lit_or_param(c, qe)) /* C port: the reference fails at run time */
        return og_chk_fail(c, qe->span, "T15", "nearest query must be a literal or a parameter");
    e->type = og_qt_scalar(OG_T_F64);
    return 1;
}

/* search / fuzzy / match_text / bm25 */
static int resolve_text(og_chk *c, og_qexpr *e, const char *fn, const char *code)
{
    og_qexpr *f = e->a, *q = e->b;
    char a[64];
    if (f->kind == OG_QE_PROP) {
        int vi = lookup(c, f->var);
        if (vi >= 0 && c->q->vars[vi].is_edge)
            return og_chk_fail(c, f->span, "T23",
                               "%s cannot target edge property `$%s.%s`; text/rank search runs on "
                               "node properties — edge properties support comparison filters and "
                               "projection", fn, f->var, f->name);
    }
    if (!resolve(c, f, 0)) return 0;
    if (f->kind == OG_QE_PROP && optional_refused(c, f->var_index, f->var_span, "be searched")) return 0;
    if (!is_string_scalar(&f->type))
        return og_chk_fail(c, f->span, code, "%s field must be String, got %s", fn,
                           og_qt_name(&f->type, a, sizeof a));
    if (f->kind != OG_QE_PROP || f->prop_index < 0)
        return og_chk_fail(c, f->span, code, "%s field must be a String property of a node variable",
                           fn);
    if (!resolve(c, q, 0)) return 0;
    if (!is_string_scalar(&q->type))
        return og_chk_fail(c, q->span, code, "%s query must be String, got %s", fn,
                           og_qt_name(&q->type, a, sizeof a));
    if (!is_lit_or_param(c, q))
        return og_chk_fail(c, q->span, code, "%s query must be a literal or a parameter", fn);
    if (e->c) {
        if (!resolve(c, e->c, 0)) return 0;
        if (e->c->type.node_type >= 0 || !is_integer(e->c->type.t.id))
            return og_chk_fail(c, e->c->span, "T19", "fuzzy max_edits must be an integer scalar, got %s",
                               og_qt_name(&e->c->type, a, sizeof a));
        if (!is_lit_or_param(c, e->c))
            return og_chk_fail(c, e->c->span, "T19", "fuzzy max_edits must be a literal or a parameter");
    }
    e->type = og_qt_scalar(e->kind == OG_QE_BM25 ? OG_T_F64 : OG_T_BOOL);
    return 1;
}

static int rank_var(const og_qexpr *e)
{
    return e->kind == OG_QE_NEAREST ? e->var_index : e->a->var_index;
}

static int resolve_rrf(og_chk *c, og_qexpr *e)
{
    if (e != c->rrf_ok) /* C port: fusion needs the ranking context of an ordering */
        return og_chk_fail(c, e->span, "T21",
                           "rrf(...) can only be an order key or a projected score");
    if (!resolve(c, e->a, 0) || !resolve(c, e->b, 0)) return 0;
    if (rank_var(e->a) != rank_var(e->b)) /* C port: fusion ranks one variable's entities */
        return og_chk_fail(c, e->span, "T21", "rrf arms must rank the same variable");
    if (e->c) {
        char a[64];
        if (!resolve(c, e->c, 0)) return 0;
        if (e->c->type.node_type >= 0 || !is_integer(e->c->type.t.id))
            return og_chk_fail(c, e->c->span, "T21", "rrf k must be an integer scalar, got %s",
                               og_qt_name(&e->c->type, a, sizeof a));
        if (e->c->kind == OG_QE_LIT && e->c->lit.i <= 0)
            return og_chk_fail(c, e->c->span, "T21", "rrf k must be greater than 0");
        if (!is_lit_or_param(c, e->c))
            return og_chk_fail(c, e->c->span, "T21", "rrf k must be a literal or a parameter");
    }
    e->type = og_qt_scalar(OG_T_F64);
    return 1;
}

static int resolve_agg(og_chk *c, og_qexpr *e, int in_agg)
{
    char a[64];
    if (in_agg) return og_chk_fail(c, e->span, "T8", "aggregates cannot be nested");
    if (e->distinct && e->agg != OG_QAGG_COUNT)
        return og_chk_fail(c, e->span, "T43", "`distinct` is taken by count only, not by %s", og_qagg_name(e->agg));
    og_qexpr *x = e->a;
    if (!resolve(c, x, 1)) return 0;
    if (x->type.node_type < 0 && x->type.t.id == OG_T_BLOB)
        return og_chk_fail(c, x->span, "T24",
                           "Blob expression is not available as a .gq read value; Blob values "
                           "require a dedicated API");
    int numeric = x->type.node_type < 0 && og_qt_is_numeric(x->type.t.id);
    if (e->agg != OG_QAGG_COUNT && x->type.node_type >= 0)
        return og_chk_fail(c, e->span, "T8", "%s takes a property, not the bare node binding `$%s`; "
                           "count($%s) counts rows", og_qagg_name(e->agg), x->var, x->var);
    if ((e->agg == OG_QAGG_SUM || e->agg == OG_QAGG_AVG) && !numeric)
        return og_chk_fail(c, e->span, "T8", "%s requires numeric type, got %s", og_qagg_name(e->agg),
                           og_qt_name(&x->type, a, sizeof a));
    og_type_id xt = x->type.t.id;
    int orderable = numeric || xt == OG_T_STRING || xt == OG_T_BOOL || xt == OG_T_DATE32 || xt == OG_T_DATE64;
    if ((e->agg == OG_QAGG_MIN || e->agg == OG_QAGG_MAX) && !orderable)
        return og_chk_fail(c, e->span, "T8", "%s requires a numeric, String, Bool, Date or DateTime value, got %s",
                           og_qagg_name(e->agg), og_qt_name(&x->type, a, sizeof a));
    if (e->agg == OG_QAGG_COLLECT) { /* a list of the scalar values (no lists of lists, nodes or vectors) */
        if (x->type.node_type >= 0 || og_qt_is_list(&x->type) || xt == OG_T_VECTOR)
            return og_chk_fail(c, e->span, "T8", "collect takes a scalar value, got %s", og_qt_name(&x->type, a, sizeof a));
        e->type = og_qt_scalar(OG_T_LIST);
        e->type.t.elem = xt;
        e->type.is_enum = x->type.is_enum;
        e->is_agg = 1;
        return 1; /* never null: an empty group gives [] */
    }
    if (e->agg == OG_QAGG_COUNT) e->type = og_qt_scalar(OG_T_I64);
    else if (e->agg == OG_QAGG_SUM || e->agg == OG_QAGG_AVG) e->type = og_qt_scalar(OG_T_F64);
    else e->type = x->type;
    e->type.nullable = 1;
    e->is_agg = 1;
    return 1;
}

static int resolve(og_chk *c, og_qexpr *e, int in_agg)
{
    int vi, pi;
    e->type = og_qt_scalar(OG_T_NULL);
    e->is_agg = 0;
    switch (e->kind) {
    case OG_QE_NOW:
        e->type = og_qt_scalar(OG_T_DATE64);
        return 1;
    case OG_QE_PROP:
        return resolve_prop(c, e);
    case OG_QE_VAR:
        if ((pi = og_chk_param(c, e->var)) >= 0) {
            e->is_param = 1;
            e->param = pi;
            e->type = c->q->params[pi].type;
            return 1;
        }
        e->is_param = 0;
        if ((vi = lookup(c, e->var)) < 0) {
            char vh[160];
            return og_chk_fail(c, e->span, "T6", "variable `$%s` is not bound%s", e->var,
                               og_chk_name_hint(c, e->var, 1, 1, vh, sizeof vh));
        }
        if (c->q->vars[vi].is_edge)
            return og_chk_fail(c, e->span, "T23",
                               "edge binding `$%s` cannot be used bare; access one of its "
                               "properties (`$%s.prop`)", e->var, e->var);
        if (c->q->vars[vi].is_path)
            return og_chk_fail(c, e->span, "T47", "path `$%s` is read with length($%s) or nodes($%s)", e->var,
                               e->var, e->var);
        e->var_index = vi;
        e->type = og_qt_scalar(OG_T_STRING);
        e->type.node_type = c->q->vars[vi].type_index;
        e->type.nullable = c->q->vars[vi].optional;
        return 1;
    case OG_QE_LIT:
        return og_chk_lit_type(c, &e->lit, &e->type);
    case OG_QE_ALIAS:
        if (!c->in_order) /* C port: the reference accepts and fails at run time */
            return og_chk_fail(c, e->span, "T6",
                               "`%s` is not defined here; aliases can only be referenced in order",
                               e->name);
        for (size_t i = c->q->nprojections; i-- > 0;) {
            const og_qprojection *p = &c->q->projections[i];
            if (p->alias && strcmp(p->alias, e->name) == 0) {
                e->type = p->expr->type;
                return 1;
            }
        }
        return og_chk_fail(c, e->span, "T6", "unknown alias `%s`", e->name);
    case OG_QE_AGG:
        return resolve_agg(c, e, in_agg);
    case OG_QE_NEAREST:
        return resolve_nearest(c, e);
    case OG_QE_SEARCH:
        return resolve_text(c, e, "search", "T19");
    case OG_QE_FUZZY:
        return resolve_text(c, e, "fuzzy", "T19");
    case OG_QE_MATCH_TEXT:
        return resolve_text(c, e, "match_text", "T20");
    case OG_QE_BM25:
        return resolve_text(c, e, "bm25", "T20");
    case OG_QE_RRF:
        return resolve_rrf(c, e);
    case OG_QE_ARITH:
        return og_chk_arith(c, e, in_agg);
    case OG_QE_FUNC:
        return og_chk_func(c, e, in_agg);
    case OG_QE_CMP: case OG_QE_AND: case OG_QE_OR: case OG_QE_NOT: case OG_QE_ISNULL: {
        /* a condition as a value (a projection, an order key): a nullable Bool, null when unknown */
        if (in_agg) return og_chk_fail(c, e->span, "T8", "an aggregate takes a value, not a condition");
        og_qclause tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.kind = OG_QC_COND;
        tmp.span = e->span;
        return check_cond(c, e, &tmp);
    }
    }
    return 0;
}

int og_chk_resolve(og_chk *c, og_qexpr *e, int in_agg) { return resolve(c, e, in_agg); }

/* ---- clauses ------------------------------------------------------------------------------- */

static int check_filter(og_chk *c, og_qclause *cl)
{
    og_qexpr *le = cl->left, *re = cl->right;
    if (!resolve(c, le, 0) || !resolve(c, re, 0)) return 0;
    const og_qtype *l = &le->type, *r = &re->type;
    char a[64], b[64];
    if (le->is_agg || re->is_agg)
        return og_chk_fail(c, cl->span, "T7", "aggregates are not allowed in match filters");
    if (l->node_type >= 0 || r->node_type >= 0)
        return og_chk_fail(c, cl->span, "T7", "filter comparisons require scalar operands, got %s and %s",
                           og_qt_name(l, a, sizeof a), og_qt_name(r, b, sizeof b));
    if (l->t.id == OG_T_BLOB || r->t.id == OG_T_BLOB ||
        (og_qt_is_list(l) && l->t.elem == OG_T_BLOB) || (og_qt_is_list(r) && r->t.elem == OG_T_BLOB))
        return og_chk_fail(c, cl->span, "T7", "blob comparisons in filters are not supported");
    if (cl->op == OG_QOP_IN) { /* a in b: membership in a list, or a substring of a String */
        if (og_qt_is_list(l))
            return og_chk_fail(c, le->span, "T7", "`in` needs a scalar on the left, got %s",
                               og_qt_name(l, a, sizeof a));
        if (!og_qt_is_list(r)) {
            if (is_string_scalar(r) && is_string_scalar(l)) return 1;
            return og_chk_fail(c, re->span, "T7",
                               "`in` needs a list (membership) or, for a String, a String (substring) on "
                               "the right, got %s in %s", og_qt_name(l, a, sizeof a), og_qt_name(r, b, sizeof b));
        }
        if (l->t.id == OG_T_VECTOR)
            return og_chk_fail(c, le->span, "T7", "vector membership filters are not supported");
        og_qtype member = og_qt_scalar(r->t.elem);
        int empty = re->kind == OG_QE_LIT && re->lit.kind == OG_QLIT_LIST && re->lit.nitems == 0;
        if (!empty && !og_qt_compatible(&member, l))
            return og_chk_fail(c, cl->span, "T7", "cannot test membership of %s in %s",
                               og_qt_name(l, a, sizeof a), og_qt_name(r, b, sizeof b));
        return 1;
    }
    if (cl->op == OG_QOP_CONTAINS) {
        if (!og_qt_is_list(l) && l->t.id == OG_T_STRING) {
            if (!is_string_scalar(r))
                return og_chk_fail(c, re->span, "T7",
                                   "string contains requires a String right operand, got %s",
                                   og_qt_name(r, b, sizeof b));
            return 1;
        }
        if (!og_qt_is_list(l))
            return og_chk_fail(c, le->span, "T7",
                               "contains requires a list property (membership) or a String property "
                               "(substring) on the left, got %s", og_qt_name(l, a, sizeof a));
        if (og_qt_is_list(r))
            return og_chk_fail(c, re->span, "T7", "contains requires a scalar right operand");
        if (r->t.id == OG_T_VECTOR)
            return og_chk_fail(c, re->span, "T7", "vector membership filters are not supported");
        og_qtype member = og_qt_scalar(l->t.elem);
        if (!og_qt_compatible(&member, r))
            return og_chk_fail(c, cl->span, "T7", "cannot test membership of %s in %s",
                               og_qt_name(r, b, sizeof b), og_qt_name(l, a, sizeof a));
        return 1;
    }
    if (cl->op == OG_QOP_STARTS_WITH) {
        if (!is_string_scalar(l))
            return og_chk_fail(c, le->span, "T7", "starts_with requires a String property on the left, got %s",
                               og_qt_name(l, a, sizeof a));
        if (!is_string_scalar(r))
            return og_chk_fail(c, re->span, "T7", "starts_with requires a String right operand, got %s",
                               og_qt_name(r, b, sizeof b));
        return 1;
    }
    if (og_qt_is_list(l) || og_qt_is_list(r))
        return og_chk_fail(c, cl->span, "T7",
                           "list comparisons in filters are not supported; use `contains` for list membership");
    if (l->t.id == OG_T_VECTOR || r->t.id == OG_T_VECTOR)
        return og_chk_fail(c, cl->span, "T7", "vector comparisons in filters are not supported");
    if (!og_qt_compatible(l, r)) {
        /* the usual cause: a date written as a string literal */
        int ld = l->t.id == OG_T_DATE32 || l->t.id == OG_T_DATE64, rd = r->t.id == OG_T_DATE32 || r->t.id == OG_T_DATE64;
        const char *hint = (ld && is_string_scalar(r)) || (rd && is_string_scalar(l))
                               ? ((ld ? l : r)->t.id == OG_T_DATE32 ? "; write the date as date(\"2024-01-31\")"
                                                                    : "; write the time as datetime(\"2024-01-31T12:00:00Z\")")
                               : "";
        return og_chk_fail(c, cl->span, "T7", "cannot compare %s with %s%s", og_qt_name(l, a, sizeof a),
                           og_qt_name(r, b, sizeof b), hint);
    }
    return 1;
}

static int is_bool_scalar(const og_qexpr *e)
{
    return e->type.node_type < 0 && e->type.t.id == OG_T_BOOL;
}

/* A compound condition (OG_QC_COND): and / or / not over comparisons, `is [not] null` tests
 * and bare Bool values.  Comparisons follow the plain filter's rules (check_filter). */
static int check_cond(og_chk *c, og_qexpr *e, const og_qclause *cl)
{
    char a[64], b[64];
    switch (e->kind) {
    case OG_QE_AND: case OG_QE_OR: {
        const char *w = e->kind == OG_QE_AND ? "and" : "or";
        if (!check_cond(c, e->a, cl) || !check_cond(c, e->b, cl)) return 0;
        if (!is_bool_scalar(e->a) || !is_bool_scalar(e->b))
            return og_chk_fail(c, e->span, "T41", "`%s` needs Bool operands, got %s and %s", w,
                               og_qt_name(&e->a->type, a, sizeof a), og_qt_name(&e->b->type, b, sizeof b));
        break;
    }
    case OG_QE_NOT:
        if (!check_cond(c, e->a, cl)) return 0;
        if (!is_bool_scalar(e->a))
            return og_chk_fail(c, e->span, "T41", "`not` needs a Bool operand, got %s",
                               og_qt_name(&e->a->type, a, sizeof a));
        break;
    case OG_QE_ISNULL:
        if (!resolve(c, e->a, 0)) return 0;
        if (e->a->is_agg) return og_chk_fail(c, e->span, "T7", "aggregates are not allowed in match filters");
        if (e->a->type.node_type >= 0)
            return og_chk_fail(c, e->span, "T7", "`is null` needs a property or parameter, got a bare variable");
        break;
    case OG_QE_CMP: {
        og_qclause tmp = *cl;
        tmp.kind = OG_QC_FILTER;
        tmp.left = e->a;
        tmp.right = e->b;
        tmp.op = (og_qop)e->op;
        tmp.span = e->span;
        int sub_a = e->a->kind == OG_QE_CMP || e->a->kind == OG_QE_AND || e->a->kind == OG_QE_OR ||
                    e->a->kind == OG_QE_NOT || e->a->kind == OG_QE_ISNULL;
        int sub_b = e->b->kind == OG_QE_CMP || e->b->kind == OG_QE_AND || e->b->kind == OG_QE_OR ||
                    e->b->kind == OG_QE_NOT || e->b->kind == OG_QE_ISNULL;
        if (sub_a || sub_b) { /* a comparison of conditions: Bool = Bool, Bool != Bool */
            if ((sub_a && !check_cond(c, e->a, cl)) || (!sub_a && !resolve(c, e->a, 0))) return 0;
            if ((sub_b && !check_cond(c, e->b, cl)) || (!sub_b && !resolve(c, e->b, 0))) return 0;
            if (!is_bool_scalar(e->a) || !is_bool_scalar(e->b) || (e->op != OG_QOP_EQ && e->op != OG_QOP_NE))
                return og_chk_fail(c, e->span, "T7", "conditions compare only with = or != against Bool, got %s %s %s",
                                   og_qt_name(&e->a->type, a, sizeof a), og_qop_name((og_qop)e->op),
                                   og_qt_name(&e->b->type, b, sizeof b));
        } else if (!check_filter(c, &tmp)) {
            return 0;
        }
        break;
    }
    default:
        if (!resolve(c, e, 0)) return 0;
        if (e->is_agg) return og_chk_fail(c, e->span, "T7", "aggregates are not allowed in match filters");
        return 1; /* the operator above (or check_cond_top) requires Bool */
    }
    e->type = og_qt_scalar(OG_T_BOOL);
    e->type.nullable = 1;
    return 1;
}

static int check_cond_top(og_chk *c, og_qexpr *e, const og_qclause *cl)
{
    char a[64];
    if (!check_cond(c, e, cl)) return 0;
    if (!is_bool_scalar(e))
        return og_chk_fail(c, e->span, "T7", "a bare filter must be a Bool property or parameter, got %s",
                           og_qt_name(&e->type, a, sizeof a));
    return 1;
}

/* Does a checked expression read a bound variable (not a parameter)? */
static int refs_binding(const og_qexpr *e)
{
    if (!e) return 0;
    if (e->kind == OG_QE_PROP || e->kind == OG_QE_NEAREST || (e->kind == OG_QE_VAR && !e->is_param)) return 1;
    return refs_binding(e->a) || refs_binding(e->b) || refs_binding(e->c);
}

/* Inline `{prop: value}` of a binding (list props: membership). */
static int check_prop_match(og_chk *c, const og_cat_type *t, og_qpropmatch *m)
{
    size_t pi;
    char a[64], b[64];
    const og_cat_prop *p = og_cat_type_prop(t, m->prop, &pi);
    char hint[96];
    if (!p)
        return og_chk_fail(c, m->prop_span, "T2", "type `%s` has no property `%s`%s", t->name, m->prop,
                           og_suggest_hint(og_suggest_prop(t, m->prop), hint, sizeof hint));
    if (p->type.id == OG_T_BLOB)
        return og_chk_fail(c, m->prop_span, "T3", "blob property `%s.%s` cannot be used in match patterns",
                           t->name, m->prop);
    m->prop_index = (int)pi;
    og_qtype want = og_qt_prop(p);
    int list = og_qt_is_list(&want);
    if (m->expr) { /* {flag: <condition>}: the Bool property equals the condition's value */
        og_qclause tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.kind = OG_QC_COND;
        tmp.span = m->expr->span;
        if (!check_cond(c, m->expr, &tmp)) return 0;
        if (list || want.t.id != OG_T_BOOL)
            return og_chk_fail(c, m->expr->span, "T3", "property `%s` has type %s; only a Bool property can "
                               "match a condition", m->prop, og_qt_name(&want, a, sizeof a));
        if (refs_binding(m->expr))
            return og_chk_fail(c, m->expr->span, "T7", "a condition in `{%s: ...}` can use parameters, literals "
                               "and now() only; compare with other bindings in a match filter", m->prop);
        return 1;
    }
    og_qtype member = og_qt_scalar(list ? want.t.elem : want.t.id);
    og_qvalue *v = &m->value;
    if (v->kind == OG_QV_NOW) {
        if (list || want.t.id != OG_T_DATE64)
            return og_chk_fail(c, v->span, "T7", "cannot assign/compare DateTime with %s for property `%s`",
                               og_qt_name(&want, a, sizeof a), m->prop);
        return 1;
    }
    if (v->kind == OG_QV_LIT) {
        if (!list) return og_chk_lit_against(c, &v->lit, p, m->prop);
        og_qtype got;
        if (!og_chk_lit_type(c, &v->lit, &got)) return 0;
        if (og_qt_is_list(&got))
            return og_chk_fail(c, v->span, "T3",
                               "list equality is not supported for property `%s`; use a scalar value "
                               "to match list membership", m->prop);
        if (!og_qt_compatible(&got, &member))
            return og_chk_fail(c, v->span, "T3", "property `%s` has type %s but membership match got %s",
                               m->prop, og_qt_name(&want, a, sizeof a), og_qt_name(&got, b, sizeof b));
        return 1;
    }
    int pa = og_chk_param(c, v->var);
    char vh[160];
    if (pa < 0) /* C port: the reference accepts an undeclared name and fails at run time */
        return og_chk_fail(c, v->span, "T6", "`$%s` is not a declared parameter%s", v->var,
                           og_chk_name_hint(c, v->var, 0, 1, vh, sizeof vh));
    v->param = pa;
    const og_qtype *got = &c->q->params[pa].type;
    if (list) {
        if (og_qt_is_list(got))
            return og_chk_fail(c, v->span, "T7",
                               "list equality is not supported for property `%s`; use a scalar "
                               "parameter for membership matching", m->prop);
        if (!og_qt_compatible(got, &member))
            return og_chk_fail(c, v->span, "T7", "cannot compare %s membership against %s for property `%s`",
                               og_qt_name(got, b, sizeof b), og_qt_name(&want, a, sizeof a), m->prop);
        return 1;
    }
    if (!og_qt_compatible(got, &want))
        return og_chk_fail(c, v->span, "T7", "cannot assign/compare %s with %s for property `%s`",
                           og_qt_name(got, b, sizeof b), og_qt_name(&want, a, sizeof a), m->prop);
    return 1;
}

static int check_binding(og_chk *c, og_qclause *cl)
{
    const og_cat_type *t = og_catalog_node(c->cat, cl->type_name);
    if (!t) {
        if (og_catalog_interface(c->cat, cl->type_name))
            return og_chk_fail(c, cl->type_span, "T1",
                               "unknown node type `%s` (it is an interface; interfaces are not queryable)",
                               cl->type_name);
        char hint[96];
        return og_chk_fail(c, cl->type_span, "T1", "unknown node type `%s`%s", cl->type_name,
                           og_suggest_hint(og_suggest_node(c->cat, cl->type_name), hint, sizeof hint));
    }
    int ti = (int)(t - c->cat->nodes);
    cl->type_index = ti;
    for (size_t i = 0; i < cl->nmatches; i++)
        if (!check_prop_match(c, t, &cl->matches[i])) return 0;
    int vi = lookup(c, cl->var);
    if (optional_refused(c, vi, cl->var_span, "be bound again") || path_refused(c, vi, cl->var_span)) return 0;
    if (vi >= 0) {
        og_qvar *v = &c->q->vars[vi];
        if (v->is_edge)
            return og_chk_fail(c, cl->var_span, "T23",
                               "variable `$%s` is bound to edge type `%s` and cannot be rebound as node type `%s`",
                               cl->var, c->cat->edges[v->type_index].name, cl->type_name);
        if (v->type_index != ti)
            return og_chk_fail(c, cl->var_span, NULL,
                               "variable `$%s` already bound to type `%s`, cannot rebind to `%s`",
                               cl->var, c->cat->nodes[v->type_index].name, cl->type_name);
    } else if ((vi = new_var(c, cl->var, 0, ti)) < 0) {
        return 0;
    }
    cl->var_index = vi;
    return 1;
}

/* Binds (or checks) a traversal endpoint; returns the variable index, -1 for `$_`, -2 on error. */
static int bind_endpoint(og_chk *c, const char *name, og_qspan sp, size_t node, const og_cat_type *e)
{
    if (strcmp(name, "_") == 0) return -1;
    int vi = lookup(c, name);
    if (vi < 0) {
        vi = new_var(c, name, 0, (int)node);
        return vi < 0 ? -2 : vi;
    }
    const og_qvar *v = &c->q->vars[vi];
    if (path_refused(c, vi, sp)) return -2;
    if (v->is_edge) {
        og_chk_fail(c, sp, "T23", "edge binding `$%s` cannot be used as a traversal endpoint; "
                    "traversal endpoints must be node bindings", name);
        return -2;
    }
    if ((size_t)v->type_index != node) {
        og_chk_fail(c, sp, "T5", "variable `$%s` has type `%s` but edge `%s` expects `%s`", name,
                    c->cat->nodes[v->type_index].name, e->name, c->cat->nodes[node].name);
        return -2;
    }
    return vi;
}

static int check_traversal(og_chk *c, og_qclause *cl)
{
    const og_catalog *cat = c->cat;
    const og_cat_type *e = og_catalog_edge_ci(cat, cl->edge_word, strlen(cl->edge_word));
    if (!e) { /* the suggestion as a traversal writes it (`knows` for `Knows`) */
        char hint[96], word[96];
        const char *near = og_suggest_edge(cat, cl->edge_word);
        if (near) near = og_suggest_edge_word(near, word, sizeof word);
        return og_chk_fail(c, cl->edge_span, "T4", "unknown edge type `%s`%s", cl->edge_word,
                           og_suggest_hint(near, hint, sizeof hint));
    }
    cl->type_index = (int)(e - cat->edges);
    if (cl->min_hops == 0)
        return og_chk_fail(c, cl->span, "T15", "traversal min hop bound must be >= 1");
    if (!cl->has_max)
        return og_chk_fail(c, cl->span, "T15",
                           "unbounded traversal is disabled; use bounded traversal {min,max}");
    if (cl->max_hops < cl->min_hops)
        return og_chk_fail(c, cl->span, "T15", "invalid traversal bounds {%u,%u}; max must be >= min",
                           (unsigned)cl->min_hops, (unsigned)cl->max_hops);
    if (cl->undirected && e->from_node != e->to_node)
        return og_chk_fail(c, cl->edge_span, "T22",
                           "undirected traversal `<%s>` requires a same-endpoint-type edge, but `%s: %s -> %s` "
                           "is asymmetric; use the directional form", e->name, e->name, e->from, e->to);
    if (cl->edge_var && (cl->min_hops != 1 || cl->max_hops != 1))
        return og_chk_fail(c, cl->edge_var_span, "T23",
                           "edge binding `$%s` cannot be combined with traversal bounds; a multi-hop "
                           "traversal matches a path of edges, not one edge", cl->edge_var);
    cl->edge_var_index = -1;
    if (cl->edge_var && strcmp(cl->edge_var, "_") != 0) {
        if (strcmp(cl->edge_var, cl->src) == 0 || strcmp(cl->edge_var, cl->dst) == 0)
            return og_chk_fail(c, cl->edge_var_span, "T23",
                               "edge binding `$%s` cannot reuse a traversal endpoint name; edge bindings "
                               "and node endpoints need distinct names", cl->edge_var);
        if (lookup(c, cl->edge_var) >= 0)
            return og_chk_fail(c, cl->edge_var_span, "T23",
                               "variable `$%s` is already bound; an edge binding needs a fresh name",
                               cl->edge_var);
        if ((cl->edge_var_index = new_var(c, cl->edge_var, 1, cl->type_index)) < 0) return 0;
    }
    int s = strcmp(cl->src, "_") ? lookup(c, cl->src) : -1;
    int d = strcmp(cl->dst, "_") ? lookup(c, cl->dst) : -1;
    if (optional_refused(c, s, cl->src_span, "start or end a traversal") ||
        optional_refused(c, d, cl->dst_span, "start or end a traversal"))
        return 0;
    og_qdir dir = OG_QDIR_OUT;
    int si, di;
    if (s >= 0 || d >= 0) {
        int from_src = s >= 0;
        int vi = from_src ? s : d;
        const char *name = from_src ? cl->src : cl->dst;
        og_qspan sp = from_src ? cl->src_span : cl->dst_span;
        const og_qvar *v = &c->q->vars[vi];
        if (v->is_edge)
            return og_chk_fail(c, sp, "T23", "edge binding `$%s` cannot be used as a traversal "
                               "endpoint; traversal endpoints must be node bindings", name);
        size_t ty = (size_t)v->type_index;
        size_t mine = from_src ? e->from_node : e->to_node, other = from_src ? e->to_node : e->from_node;
        if (ty == mine) dir = OG_QDIR_OUT;
        else if (ty == other) dir = OG_QDIR_IN;
        else
            return og_chk_fail(c, sp, "T5",
                               "variable `$%s` has type `%s`, which is not an endpoint of edge `%s: %s -> %s`",
                               name, cat->nodes[ty].name, e->name, e->from, e->to);
        size_t src_t = dir == OG_QDIR_OUT ? e->from_node : e->to_node;
        size_t dst_t = dir == OG_QDIR_OUT ? e->to_node : e->from_node;
        if ((si = bind_endpoint(c, cl->src, cl->src_span, src_t, e)) == -2) return 0;
        if ((di = bind_endpoint(c, cl->dst, cl->dst_span, dst_t, e)) == -2) return 0;
    } else {
        if ((si = bind_endpoint(c, cl->src, cl->src_span, e->from_node, e)) == -2) return 0;
        if ((di = bind_endpoint(c, cl->dst, cl->dst_span, e->to_node, e)) == -2) return 0;
    }
    cl->src_index = si;
    cl->dst_index = di;
    cl->dir = cl->undirected ? OG_QDIR_BOTH : dir;
    return 1;
}

/* `$p: shortest { $a edge{lo,hi} $b }` (an extension): both endpoints bound by earlier clauses,
 * an edge whose endpoints have one type (a path's nodes are of one type), no edge binding;
 * $p is a fresh path variable read only through length($p) and nodes($p) (T47). */
static int check_path(og_chk *c, og_qclause *cl)
{
    const og_catalog *cat = c->cat;
    if (cl->edge_var)
        return og_chk_fail(c, cl->edge_var_span, "T47", "shortest { } binds a path, not an edge; drop `$%s:` "
                           "and read the path with length($%s) or nodes($%s)", cl->edge_var, cl->var, cl->var);
    if (lookup(c, cl->var) >= 0 || og_chk_param(c, cl->var) >= 0)
        return og_chk_fail(c, cl->var_span, "T47", "variable `$%s` is already bound; a path needs a fresh name",
                           cl->var);
    const char *ends[2] = {cl->src, cl->dst};
    og_qspan spans[2] = {cl->src_span, cl->dst_span};
    for (int k = 0; k < 2; k++) {
        if (strcmp(ends[k], "_") == 0 || lookup(c, ends[k]) < 0)
            return og_chk_fail(c, spans[k], "T47", "shortest { } runs between two bound nodes; bind `$%s` "
                               "before it (`$%s: Type { key: ... }`)", ends[k], ends[k]);
    }
    const og_cat_type *e = og_catalog_edge_ci(cat, cl->edge_word, strlen(cl->edge_word));
    if (e && e->from_node != e->to_node)
        return og_chk_fail(c, cl->edge_span, "T47", "shortest { } walks an edge between nodes of one type; "
                           "`%s: %s -> %s` joins two types (match the single edge `$%s %s $%s` instead)",
                           e->name, e->from, e->to, cl->src, cl->edge_word, cl->dst);
    /* the endpoints, the edge name, the bounds (T4, T5, T15, T22, T23, T46) as for a traversal */
    size_t nvars = c->q->nvars;
    if (!check_traversal(c, cl)) return 0;
    if (c->q->nvars != nvars) return og_chk_fail(c, cl->span, "T47", "shortest { } binds no node"); /* unreachable */
    int vi = new_var(c, cl->var, 0, (int)e->from_node);
    if (vi < 0) return 0;
    c->q->vars[vi].is_path = 1;
    cl->var_index = vi;
    return 1;
}

static int check_clauses(og_chk *c, og_qclause *cl, size_t n);

static int expr_refs_any(const og_qexpr *e, const int *vars, size_t n)
{
    if (!e) return 0;
    if ((e->kind == OG_QE_PROP || e->kind == OG_QE_VAR || e->kind == OG_QE_NEAREST) && e->var_index >= 0)
        for (size_t i = 0; i < n; i++)
            if (vars[i] == e->var_index) return 1;
    return expr_refs_any(e->a, vars, n) || expr_refs_any(e->b, vars, n) || expr_refs_any(e->c, vars, n);
}

static int in_set(int v, const int *vars, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (vars[i] == v) return 1;
    return 0;
}

/* C port: every traversal must be connected (through traversals of the same block) to a
 * variable bound by a `$v: Type` clause of the block or visible from outside it; the
 * reference silently never executes such a traversal. */
static int check_reach(og_chk *c, og_qclause *cl, size_t n, const int *outer, size_t nouter)
{
    size_t nv = c->q->nvars;
    int *parent = malloc((nv + 1) * sizeof *parent);
    unsigned char *anch = calloc(nv + 1, 1);
    if (!parent || !anch) {
        free(parent);
        free(anch);
        return og_chk_nomem(c);
    }
    for (size_t i = 0; i < nv; i++) parent[i] = (int)i;
    for (size_t i = 0; i < n; i++) {
        if (cl[i].kind != OG_QC_TRAVERSAL || cl[i].src_index < 0 || cl[i].dst_index < 0) continue;
        int a = cl[i].src_index, b = cl[i].dst_index;
        while (parent[a] != a) a = parent[a];
        while (parent[b] != b) b = parent[b];
        parent[a] = b;
    }
    for (size_t i = 0; i < nouter; i++) {
        int r = outer[i];
        while (parent[r] != r) r = parent[r];
        anch[r] = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (cl[i].kind != OG_QC_BINDING) continue;
        int r = cl[i].var_index;
        while (parent[r] != r) r = parent[r];
        anch[r] = 1;
    }
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        if (cl[i].kind != OG_QC_TRAVERSAL) continue;
        int v = cl[i].src_index >= 0 ? cl[i].src_index : cl[i].dst_index;
        int r = v;
        if (r >= 0)
            while (parent[r] != r) r = parent[r];
        if (r < 0 || !anch[r])
            ok = og_chk_fail(c, cl[i].span, "T6",
                             "traversal `$%s %s $%s` is not connected to any bound variable; bind one "
                             "endpoint with a `$v: Type` clause", cl[i].src, cl[i].edge_word, cl[i].dst);
    }
    free(parent);
    free(anch);
    return ok;
}

/* The `sum(x)` of `sum(x) { … } op v`: checked as that aggregate (T8 rules) with the block's
 * variables visible; sub_arg becomes the aggregate, typed as its value. */
static int check_sub_arg(og_chk *c, og_qclause *cl)
{
    og_qexpr *e = og_qarena_alloc(&c->f->arena, sizeof *e);
    if (!e) return og_chk_nomem(c);
    memset(e, 0, sizeof *e);
    e->kind = OG_QE_AGG;
    e->span = cl->sub_arg->span;
    e->agg = (og_qagg)cl->sub_agg;
    e->a = cl->sub_arg;
    e->var_index = -1;
    cl->sub_arg = e;
    return resolve_agg(c, e, 0);
}

static int check_negation(og_chk *c, og_qclause *cl)
{
    size_t nouter = c->nvisible;
    int *outer = malloc((nouter + 1) * sizeof *outer);
    if (!outer) return og_chk_nomem(c);
    if (nouter) memcpy(outer, c->visible, nouter * sizeof *outer); /* visible may be NULL */
    int optional = cl->sub == OG_QSUB_OPTIONAL;
    c->depth += !optional; /* an optional block's variables are the query's own, maybe null */
    int ok = check_clauses(c, cl->inner, cl->ninner);
    c->depth -= !optional;
    if (ok) {
        int has_outer = 0;
        for (size_t i = 0; i < cl->ninner && !has_outer; i++) {
            const og_qclause *x = &cl->inner[i];
            if (x->kind == OG_QC_TRAVERSAL || x->kind == OG_QC_PATH)
                has_outer = in_set(x->src_index, outer, nouter) || in_set(x->dst_index, outer, nouter);
            else if (x->kind == OG_QC_FILTER || x->kind == OG_QC_TEXT || x->kind == OG_QC_COND)
                has_outer = expr_refs_any(x->left, outer, nouter) || expr_refs_any(x->right, outer, nouter);
            else if (x->kind == OG_QC_BINDING)
                has_outer = in_set(x->var_index, outer, nouter);
        }
        if (!has_outer)
            ok = og_chk_fail(c, cl->span, "T9", "%s block must reference at least one outer-bound variable",
                             optional ? "optional" : "negation");
    }
    if (ok) ok = check_reach(c, cl->inner, cl->ninner, outer, nouter);
    if (optional) { /* its new variables stay visible, null where the block found no match */
        for (size_t i = nouter; i < c->nvisible; i++) c->q->vars[c->visible[i]].optional = 1;
    } else {
        if (ok && cl->sub_arg) ok = check_sub_arg(c, cl); /* resolved while the block's variables are visible */
        c->nvisible = nouter; /* inner variables stay local */
    }
    if (ok && cl->sub == OG_QSUB_COUNT && cl->sub_arg) {
        /* agg(x) { … } op v: v of a type the aggregate's value compares with, from parameters / literals */
        char a[64], b[64];
        ok = resolve(c, cl->right, 0);
        int numeric = og_qt_is_numeric(cl->sub_arg->type.t.id) && og_qt_is_numeric(cl->right->type.t.id);
        if (ok && (cl->right->type.node_type >= 0 || cl->right->is_agg ||
                   (!numeric && !og_qt_compatible(&cl->right->type, &cl->sub_arg->type))))
            ok = og_chk_fail(c, cl->right->span, "T7", "%s(…) { … } compares with %s, got %s",
                             og_qagg_name((og_qagg)cl->sub_agg), og_qt_name(&cl->sub_arg->type, a, sizeof a),
                             og_qt_name(&cl->right->type, b, sizeof b));
        if (ok && refs_binding(cl->right))
            ok = og_chk_fail(c, cl->right->span, "T7",
                             "%s(…) { … } compares with parameters and literals only, not with bound values",
                             og_qagg_name((og_qagg)cl->sub_agg));
    } else if (ok && cl->sub == OG_QSUB_COUNT) { /* count { … } op n: n an integer from parameters / literals */
        char a[64];
        ok = resolve(c, cl->right, 0);
        if (ok && (cl->right->type.node_type >= 0 || !is_integer(cl->right->type.t.id) || cl->right->is_agg))
            ok = og_chk_fail(c, cl->right->span, "T7", "count { … } compares with an integer, got %s",
                             og_qt_name(&cl->right->type, a, sizeof a));
        if (ok && refs_binding(cl->right))
            ok = og_chk_fail(c, cl->right->span, "T7",
                             "count { … } compares with parameters and literals only, not with bound values");
    }
    free(outer);
    return ok;
}

static int check_clauses(og_chk *c, og_qclause *cl, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        og_qclause *x = &cl[i];
        int ok = 1;
        switch (x->kind) {
        case OG_QC_BINDING: ok = check_binding(c, x); break;
        case OG_QC_TRAVERSAL: ok = check_traversal(c, x); break;
        case OG_QC_FILTER: ok = check_filter(c, x); break;
        case OG_QC_TEXT: ok = resolve(c, x->left, 0); break;
        case OG_QC_NEGATION: ok = check_negation(c, x); break;
        case OG_QC_COND: ok = check_cond_top(c, x->left, x); break;
        case OG_QC_PATH: ok = check_path(c, x); break;
        }
        if (!ok) return 0;
    }
    return 1;
}

/* ---- return / order ------------------------------------------------------------------------ */

/* The expression an order key stands for (an alias is replaced by its projection). */
static const og_qexpr *order_target(const og_query *q, const og_qexpr *e)
{
    if (e->kind != OG_QE_ALIAS) return e;
    for (size_t i = q->nprojections; i-- > 0;)
        if (q->projections[i].alias && strcmp(q->projections[i].alias, e->name) == 0)
            return q->projections[i].expr;
    return e;
}

static int is_rank(const og_qexpr *e)
{
    return e->kind == OG_QE_NEAREST || e->kind == OG_QE_BM25 || e->kind == OG_QE_RRF;
}

/* `limit $n` / `offset $m` (an extension): a declared, non-null integer parameter (T42). */
static int check_count_param(og_chk *c, const char *what, const char *name, og_qspan sp, int *index)
{
    char a[64];
    *index = -1;
    if (!name) return 1;
    int pi = og_chk_param(c, name);
    char vh[160];
    if (pi < 0)
        return og_chk_fail(c, sp, "T42", "%s `$%s` is not a declared parameter%s", what, name,
                           og_chk_name_hint(c, name, 0, 1, vh, sizeof vh));
    const og_qtype *t = &c->q->params[pi].type;
    if (t->node_type >= 0 || !is_integer(t->t.id) || t->nullable)
        return og_chk_fail(c, sp, "T42", "%s `$%s` must be a non-optional integer parameter, got %s", what, name,
                           og_qt_name(t, a, sizeof a));
    *index = pi;
    return 1;
}

static int check_read(og_chk *c)
{
    og_query *q = c->q;
    if (!check_clauses(c, q->clauses, q->nclauses)) return 0;
    if (q->nvars == 0) /* C port: a read needs rows to start from */
        return og_chk_fail(c, q->clauses[0].span, NULL, "match must bind at least one node variable");
    if (!check_reach(c, q->clauses, q->nclauses, NULL, 0)) return 0;
    int has_agg = 0;
    for (size_t i = 0; i < q->nprojections; i++) {
        og_qexpr *e = q->projections[i].expr;
        c->rrf_ok = e;
        if (!resolve(c, e, 0)) return 0;
        if (q->distinct && is_rank(e))
            return og_chk_fail(c, e->span, "T43", "`return distinct` cannot project a search score");
        if (e->kind == OG_QE_VAR && !e->is_param && e->type.node_type >= 0) /* `return { $p }` */
            e->is_object = e->type.is_object = 1;
        if (e->type.node_type < 0 && e->type.t.id == OG_T_BLOB)
            return og_chk_fail(c, e->span, "T24",
                               "Blob %s is not available as a .gq read value; Blob values require a "
                               "dedicated API", e->kind == OG_QE_VAR ? "parameter" : "expression");
        has_agg |= e->is_agg;
    }
    for (size_t i = 0; i < q->nprojections; i++) { /* T25: one name per result column */
        char ni[256], nj[256];
        og_query_column_name(&q->projections[i], ni, sizeof ni);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(og_query_column_name(&q->projections[j], nj, sizeof nj), ni))
                return og_chk_fail(c, q->projections[i].span, "T25",
                                   "duplicate result column `%s`; give one of the projections its own alias (`as name`)",
                                   ni);
    }
    c->in_order = 1;
    for (size_t i = 0; i < q->norderings; i++) {
        og_qexpr *e = q->orderings[i].expr;
        c->rrf_ok = e;
        if (!resolve(c, e, 0)) return 0;
        if (e->type.node_type < 0 && e->type.t.id == OG_T_BLOB)
            return og_chk_fail(c, e->span, "T24",
                               "Blob %s is not available as a .gq read value; Blob values require a "
                               "dedicated API", e->kind == OG_QE_ALIAS ? "alias" : "parameter");
    }
    c->in_order = 0;
    c->rrf_ok = NULL;
    int has_rrf = 0, has_nearest = 0, has_alias = 0;
    for (size_t i = 0; i < q->norderings; i++) {
        const og_qexpr *t = order_target(q, q->orderings[i].expr);
        has_rrf |= t->kind == OG_QE_RRF;
        has_nearest |= t->kind == OG_QE_NEAREST;
        has_alias |= q->orderings[i].expr->kind == OG_QE_ALIAS;
    }
    og_qspan osp = q->norderings ? q->orderings[0].span : q->span;
    if (!check_count_param(c, "limit", q->has_limit ? q->limit_param : NULL, q->limit_span, &q->limit_param_index) ||
        !check_count_param(c, "offset", q->has_offset ? q->offset_param : NULL, q->offset_span,
                           &q->offset_param_index))
        return 0;
    if (has_rrf && !q->has_limit)
        return og_chk_fail(c, osp, "T21", "rrf ordering requires a limit clause");
    if (has_nearest && !q->has_limit)
        return og_chk_fail(c, osp, "T17", "nearest ordering requires a limit clause");
    /* T18 (reference phase 1: alias ordering next to nearest) is not enforced: an alias of a
     * search function orders exactly as the function itself (`nearest(...) as score ... order
     * { score desc }`, the reference's hybrid-search guide); docs/search.md. */
    (void)has_alias;
    if (has_agg)
        for (size_t i = 0; i < q->nprojections; i++) {
            const og_qexpr *e = q->projections[i].expr;
            if (!e->is_agg && e->kind != OG_QE_PROP && e->kind != OG_QE_VAR && e->kind != OG_QE_ARITH &&
                e->kind != OG_QE_FUNC) /* computed keys (an extension): `lower($p.city)` */
                return og_chk_fail(c, e->span, "T9",
                                   "non-aggregate expressions in an aggregate query must be property "
                                   "accesses, variables or computed values");
            if (e->is_agg && e->kind != OG_QE_AGG)
                return og_chk_fail(c, e->span, "T9", "an aggregate must be the whole projection");
        }
    /* C port: rules the reference leaves to run time. */
    for (size_t i = 0; i < q->norderings; i++) {
        const og_qordering *o = &q->orderings[i];
        const og_qexpr *t = order_target(q, o->expr);
        if (i > 0 && is_rank(t))
            return og_chk_fail(c, o->span, "T18",
                               "a search ordering (nearest, bm25, rrf) must be the first order key");
        if (q->distinct && !has_agg) {
            /* the rows are deduplicated before they are ordered: only their columns remain */
            int found = o->expr->kind == OG_QE_ALIAS && !is_rank(t);
            for (size_t j = 0; j < q->nprojections && !found; j++)
                found = og_qexpr_equal(q->projections[j].expr, o->expr);
            if (!found)
                return og_chk_fail(c, o->span, "T43",
                                   "an order key of `return distinct` must be a projected column or alias");
            continue;
        }
        if (has_agg) {
            /* a leading search ordering restricts the rows the aggregates see (bm25: the
             * matching ones) and does not order the groups */
            if (is_rank(t)) continue;
            if (o->expr->kind == OG_QE_ALIAS) continue;
            int found = 0; /* a group key or an aggregate written again */
            for (size_t j = 0; j < q->nprojections && !found; j++)
                found = og_qexpr_equal(q->projections[j].expr, o->expr);
            if (!found)
                return og_chk_fail(c, o->span, "T9",
                                   "an order key of an aggregate query must be a projected column or alias");
        } else if (o->expr->is_agg) {
            return og_chk_fail(c, o->span, "T9", "aggregate order key in a query without aggregation");
        }
    }
    for (size_t i = 0; i < q->nprojections; i++) {
        const og_qexpr *e = q->projections[i].expr;
        if (e->kind != OG_QE_RRF) continue;
        const og_qexpr *first = q->norderings ? order_target(q, q->orderings[0].expr) : NULL;
        if (!first || first->kind != OG_QE_RRF || !og_qexpr_equal(first, e))
            return og_chk_fail(c, e->span, "T21",
                               "an rrf(...) score can only be projected when the same rrf(...) is the "
                               "first ordering");
    }
    return 1;
}

/* ---- entry --------------------------------------------------------------------------------- */

og_status og_query_check(og_query_file *f, size_t qi, const og_catalog *cat,
                         const og_source *src, og_diag *err)
{
    if (!f || qi >= f->nqueries || !cat) return OG_ERR_INVALID;
    og_query *q = &f->queries[qi];
    og_chk c = {.cat = cat, .f = f, .q = q, .src = src, .err = err};
    q->checked = 0;
    q->nvars = 0;
    for (size_t i = 0; i < q->nparams; i++) {
        if (strcmp(q->params[i].name, "__nanograph_now") == 0) {
            og_chk_fail(&c, q->params[i].span, NULL,
                        "parameter name `$__nanograph_now` is reserved for runtime timestamp injection");
            break;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(q->params[i].name, q->params[j].name) == 0) {
                og_chk_fail(&c, q->params[i].span, NULL, "duplicate parameter `$%s`", q->params[i].name);
                break;
            }
    }
    if (c.st == OG_OK) {
        if (q->is_mutation) og_chk_mutations(&c);
        else check_read(&c);
    }
    free(c.visible);
    if (c.st == OG_OK) q->checked = 1;
    return c.st;
}
