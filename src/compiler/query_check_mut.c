/*
 * query_check_mut.c — the type checker of .gq mutations (reference-language.md §4): target
 * resolution (node vs edge namespace), assignments and where predicates against property
 * types (T3/T7/T10/T11/T13/T14/T16), required properties of inserts (T12, with the @embed
 * exception), and the constructive-vs-destructive rule (INVARIANTS.md 4: a query either
 * inserts/updates or deletes — the reference rejects the mix before any I/O; we reject it at
 * check time).
 */
#include <string.h>

#include "compiler/query_check_int.h"
#include "compiler/suggest.h"

static int check_value(og_chk *c, og_qvalue *v, const og_cat_prop *p, const char *prop)
{
    og_qtype want = og_qt_prop(p);
    char a[64], b[64];
    if (v->kind == OG_QV_NOW) {
        if (og_qt_is_list(&want) || want.t.id != OG_T_DATE64)
            return og_chk_fail(c, v->span, "T7", "cannot assign/compare DateTime with %s for property `%s`",
                               og_qt_name(&want, a, sizeof a), prop);
        return 1;
    }
    if (v->kind == OG_QV_LIT) return og_chk_lit_against(c, &v->lit, p, prop);
    int pa = og_chk_param(c, v->var);
    char vh[160];
    if (pa < 0)
        return og_chk_fail(c, v->span, "T14", "mutation variable `$%s` must be a declared query parameter%s",
                           v->var, og_chk_name_hint(c, v->var, 0, 1, vh, sizeof vh));
    v->param = pa;
    const og_qtype *got = &c->q->params[pa].type;
    int ok = og_qt_compatible(got, &want) ||
             (want.t.id == OG_T_BLOB && got->t.id == OG_T_STRING); /* URI / base64 assignment */
    if (!ok)
        return og_chk_fail(c, v->span, "T7", "cannot assign/compare %s with %s for property `%s`",
                           og_qt_name(got, b, sizeof b), og_qt_name(&want, a, sizeof a), prop);
    return 1;
}

static og_cat_prop endpoint_prop(const char *name)
{
    og_cat_prop p;
    memset(&p, 0, sizeof p);
    p.name = (char *)name;
    p.type.id = OG_T_STRING;
    return p;
}

static int no_duplicates(og_chk *c, const og_qmutation *m)
{
    for (size_t i = 0; i < m->nassigns; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->assigns[i].prop, m->assigns[j].prop) == 0)
                return og_chk_fail(c, m->assigns[i].prop_span, "T13",
                                   "duplicate assignment for property `%s`", m->assigns[i].prop);
    return 1;
}

/* `{prop: expression}`: computed once from parameters, literals and now() (a mutation has no
 * bound variables, so any other `$x` is T6), of a type the property takes (T7). */
static const og_qexpr *undeclared_var(og_chk *c, const og_qexpr *e)
{
    if (!e) return NULL;
    if ((e->kind == OG_QE_VAR || e->kind == OG_QE_PROP) && og_chk_param(c, e->var) < 0) return e;
    const og_qexpr *u = undeclared_var(c, e->a);
    if (!u) u = undeclared_var(c, e->b);
    return u ? u : undeclared_var(c, e->c);
}

static int check_assign_expr(og_chk *c, og_qassign *a, const og_cat_prop *p)
{
    char x[64], y[64];
    const og_qexpr *u = undeclared_var(c, a->expr);
    char vh[160];
    if (u)
        return og_chk_fail(c, u->span, "T14", "mutation variable `$%s` must be a declared query parameter%s", u->var,
                           og_chk_name_hint(c, u->var, 0, 1, vh, sizeof vh));
    if (!og_chk_resolve(c, a->expr, 0)) return 0;
    og_qtype want = og_qt_prop(p), *got = &a->expr->type;
    if (a->expr->is_agg) return og_chk_fail(c, a->expr->span, "T7", "an assignment cannot hold an aggregate");
    int numeric = og_qt_is_numeric(want.t.id) && og_qt_is_numeric(got->t.id) && got->node_type < 0;
    if (!numeric && !og_qt_compatible(got, &want))
        return og_chk_fail(c, a->expr->span, "T7", "cannot assign %s to property `%s` of type %s",
                           og_qt_name(got, x, sizeof x), a->prop, og_qt_name(&want, y, sizeof y));
    return 1;
}

/* "; did you mean `X`?" naming the nearest node type, else the nearest edge type. */
static const char *type_hint(const og_catalog *cat, const char *name, char *buf, size_t cap)
{
    const char *best = og_suggest_node(cat, name);
    return og_suggest_hint(best ? best : og_suggest_edge(cat, name), buf, cap);
}

static int check_assign(og_chk *c, const og_cat_type *t, og_qassign *a)
{
    char hint[96];
    size_t pi;
    const og_cat_prop *p = og_cat_type_prop(t, a->prop, &pi);
    if (!p)
        return og_chk_fail(c, a->prop_span, "T11", "type `%s` has no property `%s`%s", t->name, a->prop,
                               og_suggest_hint(og_suggest_prop(t, a->prop), hint, sizeof hint));
    a->prop_index = (int)pi;
    if (a->expr) return check_assign_expr(c, a, p);
    return check_value(c, &a->value, p, a->prop);
}

/* The property a where leaf reads (*out; endpoints and @id as String properties). */
static int where_prop(og_chk *c, const og_cat_type *t, og_qassign *w, int edge, og_cat_prop *out)
{
    char hint[96];
    if (edge && (strcmp(w->prop, "from") == 0 || strcmp(w->prop, "to") == 0 || strcmp(w->prop, "@src") == 0 ||
                 strcmp(w->prop, "@dst") == 0)) {
        *out = endpoint_prop(w->prop);
        w->prop_index = w->prop[0] == 'f' || w->prop[1] == 's' ? OG_QPROP_FROM : OG_QPROP_TO;
        return 1;
    }
    if (strcmp(w->prop, "@id") == 0) {
        *out = endpoint_prop(w->prop);
        w->prop_index = OG_QPROP_ID;
        return 1;
    }
    if (w->prop[0] == '@')
        return og_chk_fail(c, w->prop_span, "T11", "unknown meta field `%s` in a where predicate; %s", w->prop,
                           edge ? "an edge has @id, @src and @dst" : "a node has @id");
    size_t pi;
    const og_cat_prop *p = og_cat_type_prop(t, w->prop, &pi);
    if (!p)
        return og_chk_fail(c, w->prop_span, "T11", "type `%s` has no property `%s`%s", t->name, w->prop,
                               og_suggest_hint(og_suggest_prop(t, w->prop), hint, sizeof hint));
    if (p->type.id == OG_T_BLOB)
        return og_chk_fail(c, w->prop_span, "T11", "blob property `%s` cannot be used in WHERE predicates",
                           w->prop);
    w->prop_index = (int)pi;
    *out = *p;
    return 1;
}

/* `false = false` on a type with a property `false`: either side may be the Bool literal or the
 * property, so the reference refuses it; so do we, on either side (T7).  1 when refused. */
static int bool_word_ambiguous(og_chk *c, const og_cat_type *t, const og_qassign *leaf)
{
    const char *word = !strcmp(leaf->prop, "true") || !strcmp(leaf->prop, "false") ? leaf->prop : NULL;
    og_qspan sp = leaf->prop_span;
    if (!word && leaf->value.kind == OG_QV_LIT && leaf->value.lit.kind == OG_QLIT_BOOL) {
        word = leaf->value.lit.b ? "true" : "false";
        sp = leaf->value.span;
    }
    size_t pi;
    if (!word || !og_cat_type_prop(t, word, &pi)) return 0;
    og_chk_fail(c, sp, "T7", "`%s` is ambiguous: it is both a Bool literal and a property of `%s`; rename the property "
                "to compare it", word, t->name);
    return 1;
}

static int check_where(og_chk *c, const og_cat_type *t, og_qmutation *m, int edge)
{
    og_cat_prop p;
    if (bool_word_ambiguous(c, t, &m->where)) return 0;
    return where_prop(c, t, &m->where, edge, &p) && check_value(c, &m->where.value, &p, m->where.prop);
}

/* `prop contains v`, `prop starts_with v`, `prop in list` in a where: the match filter's
 * operand rules (T7), the value checked against the element / String / list type. */
static int check_where_op(og_chk *c, og_qmcond *x, const og_cat_prop *p)
{
    og_cat_prop want = *p;
    want.nullable = 0;
    og_type_id id = p->type.id;
    switch (x->op) {
    case OG_QOP_CONTAINS:
        if (id == OG_T_LIST) {
            want.type = (og_type){p->type.elem, OG_T_NULL, 0};
        } else if (id != OG_T_STRING) {
            return og_chk_fail(c, x->leaf.prop_span, "T7",
                               "contains requires a list property (membership) or a String property (substring), "
                               "`%s` is neither", x->leaf.prop);
        }
        break;
    case OG_QOP_STARTS_WITH:
        if (id != OG_T_STRING)
            return og_chk_fail(c, x->leaf.prop_span, "T7", "starts_with requires a String property, `%s` is not",
                               x->leaf.prop);
        break;
    case OG_QOP_IN:
        if (id == OG_T_LIST || id == OG_T_VECTOR)
            return og_chk_fail(c, x->leaf.prop_span, "T7", "`in` needs a scalar property on the left, `%s` is not",
                               x->leaf.prop);
        want.type = (og_type){OG_T_LIST, id, 0};
        break;
    default:
        break;
    }
    return check_value(c, &x->leaf.value, &want, x->leaf.prop);
}

/* A compound `where`: every leaf as a plain where; a bare leaf must name a Bool property. */
static int check_mcond(og_chk *c, const og_cat_type *t, og_qmcond *x, int edge)
{
    char hint[96];
    switch (x->kind) {
    case OG_QMC_AND: case OG_QMC_OR:
        return check_mcond(c, t, x->a, edge) && check_mcond(c, t, x->b, edge);
    case OG_QMC_NOT:
        return check_mcond(c, t, x->a, edge);
    case OG_QMC_BARE: {
        size_t pi;
        const og_cat_prop *p = og_cat_type_prop(t, x->leaf.prop, &pi);
        if (p && (!strcmp(x->leaf.prop, "true") || !strcmp(x->leaf.prop, "false")))
            return og_chk_fail(c, x->leaf.prop_span, "T7",
                               "`%s` is ambiguous: it is both a Bool literal and a property of `%s`; rename the "
                               "property to test it", x->leaf.prop, t->name);
        if (!p)
            return og_chk_fail(c, x->leaf.prop_span, "T11", "type `%s` has no property `%s`%s", t->name, x->leaf.prop,
                               og_suggest_hint(og_suggest_prop(t, x->leaf.prop), hint, sizeof hint));
        if (p->type.id != OG_T_BOOL)
            return og_chk_fail(c, x->leaf.prop_span, "T7",
                               "a bare property in a where predicate must be Bool, `%s` is not", x->leaf.prop);
        x->leaf.prop_index = (int)pi;
        return 1;
    }
    case OG_QMC_ISNULL: {
        og_cat_prop p;
        return where_prop(c, t, &x->leaf, edge, &p);
    }
    case OG_QMC_CMP: {
        og_cat_prop p;
        if (bool_word_ambiguous(c, t, &x->leaf)) return 0;
        return where_prop(c, t, &x->leaf, edge, &p) && check_where_op(c, x, &p);
    }
    }
    return 0;
}

static int check_where_any(og_chk *c, const og_cat_type *t, og_qmutation *m, int edge)
{
    return m->cond ? check_mcond(c, t, m->cond, edge) : check_where(c, t, m, edge);
}

static int assigned(const og_qmutation *m, const char *name)
{
    for (size_t i = 0; i < m->nassigns; i++)
        if (strcmp(m->assigns[i].prop, name) == 0) return 1;
    return 0;
}

static int check_insert(og_chk *c, og_qmutation *m)
{
    char hint[96];
    const og_catalog *cat = c->cat;
    if (m->nassigns == 0)
        return og_chk_fail(c, m->span, "T10", "insert mutation requires at least one assignment");
    if (!no_duplicates(c, m)) return 0;
    const og_cat_type *t = og_catalog_node(cat, m->type_name);
    if (t) {
        m->is_edge = 0;
        m->type_index = (int)(t - cat->nodes);
        for (size_t i = 0; i < m->nassigns; i++)
            if (!check_assign(c, t, &m->assigns[i])) return 0;
        for (size_t i = 0; i < t->nprops; i++) {
            const og_cat_prop *p = &t->props[i];
            if (p->nullable || assigned(m, p->name)) continue;
            if (p->embed_source) {
                if (assigned(m, p->embed_source)) continue;
                return og_chk_fail(c, m->type_span, "T12",
                                   "insert for `%s` must provide non-nullable property `%s` or @embed source `%s`",
                                   t->name, p->name, p->embed_source);
            }
            return og_chk_fail(c, m->type_span, "T12", "insert for `%s` must provide non-nullable property `%s`",
                               t->name, p->name);
        }
        return 1;
    }
    t = og_catalog_edge(cat, m->type_name);
    if (!t) return og_chk_fail(c, m->type_span, "T10", "unknown node/edge type `%s`%s", m->type_name,
                               type_hint(cat, m->type_name, hint, sizeof hint));
    m->is_edge = 1;
    m->type_index = (int)(t - cat->edges);
    int has_from = 0, has_to = 0;
    for (size_t i = 0; i < m->nassigns; i++) {
        og_qassign *a = &m->assigns[i];
        if (strcmp(a->prop, "from") == 0 || strcmp(a->prop, "to") == 0) {
            og_cat_prop ep = endpoint_prop(a->prop);
            int from = a->prop[0] == 'f';
            has_from |= from;
            has_to |= !from;
            a->prop_index = from ? OG_QPROP_FROM : OG_QPROP_TO;
            if (a->expr ? !check_assign_expr(c, a, &ep) : !check_value(c, &a->value, &ep, a->prop)) return 0;
        } else if (!check_assign(c, t, a)) {
            return 0;
        }
    }
    if (!has_from)
        return og_chk_fail(c, m->type_span, "T12", "insert for `%s` must provide required endpoint `from`",
                           t->name);
    if (!has_to)
        return og_chk_fail(c, m->type_span, "T12", "insert for `%s` must provide required endpoint `to`",
                           t->name);
    for (size_t i = 0; i < t->nprops; i++)
        if (!t->props[i].nullable && !assigned(m, t->props[i].name))
            return og_chk_fail(c, m->type_span, "T12", "insert for `%s` must provide non-nullable property `%s`",
                               t->name, t->props[i].name);
    return 1;
}

static int check_update(og_chk *c, og_qmutation *m)
{
    char hint[96];
    const og_catalog *cat = c->cat;
    const og_cat_type *t = og_catalog_node(cat, m->type_name);
    if (!t) {
        if (og_catalog_edge(cat, m->type_name))
            return og_chk_fail(c, m->type_span, "T16", "update mutation for edge type `%s` is not supported",
                               m->type_name);
        return og_chk_fail(c, m->type_span, "T10", "unknown node/edge type `%s`%s", m->type_name,
                               type_hint(cat, m->type_name, hint, sizeof hint));
    }
    m->is_edge = 0;
    m->type_index = (int)(t - cat->nodes);
    if (m->nassigns == 0)
        return og_chk_fail(c, m->span, "T10", "update mutation requires at least one assignment");
    if (!no_duplicates(c, m)) return 0;
    for (size_t i = 0; i < m->nassigns; i++)
        if (!check_assign(c, t, &m->assigns[i])) return 0;
    return check_where_any(c, t, m, 0);
}

static int check_delete(og_chk *c, og_qmutation *m)
{
    char hint[96];
    const og_catalog *cat = c->cat;
    const og_cat_type *t = og_catalog_node(cat, m->type_name);
    if (t) {
        m->is_edge = 0;
        m->type_index = (int)(t - cat->nodes);
        return check_where_any(c, t, m, 0);
    }
    t = og_catalog_edge(cat, m->type_name);
    if (!t) return og_chk_fail(c, m->type_span, "T10", "unknown node/edge type `%s`%s", m->type_name,
                               type_hint(cat, m->type_name, hint, sizeof hint));
    m->is_edge = 1;
    m->type_index = (int)(t - cat->edges);
    return check_where_any(c, t, m, 1);
}

int og_chk_mutations(og_chk *c)
{
    og_query *q = c->q;
    int constructive = 0, destructive = 0;
    for (size_t i = 0; i < q->nmutations; i++) {
        og_qmutation *m = &q->mutations[i];
        int ok = m->kind == OG_QM_INSERT ? check_insert(c, m)
                 : m->kind == OG_QM_UPDATE ? check_update(c, m)
                                           : check_delete(c, m);
        if (!ok) return 0;
        if (m->kind == OG_QM_DELETE) destructive = 1;
        else constructive = 1;
    }
    if (constructive && destructive)
        return og_chk_fail(c, q->name_span, NULL,
                           "mutation '%s' mixes inserts/updates and deletes; split into separate "
                           "mutations: (1) inserts and updates, then (2) deletes", q->name);
    return 1;
}
