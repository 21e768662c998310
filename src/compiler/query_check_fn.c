/*
 * query_check_fn.c — typing of the values computed per row (an extension of the reference
 * language, docs/reference.md "Expressions"): arithmetic `+ - * / %` and unary minus, and the
 * scalar functions (lower, upper, trim, length, substring, concat, coalesce, abs, round,
 * floor, ceil, year, month, day).  Split from query_check.c, which resolves everything else
 * and calls in here for OG_QE_ARITH and OG_QE_FUNC.
 *
 * Every argument type is settled here, at compile time, so the engine's kernels
 * (engine/scalar.c) never meet a value they were not written for:
 *   T44  an arithmetic operand that is not a number;
 *   T45  an unknown function (with the nearest known name), a wrong number of arguments, or
 *        an argument of the wrong type.
 * Numeric promotion: integers compute in I64, anything with a float in F64.  Division and
 * remainder are nullable (a zero divisor gives null).
 */
#include <stdio.h>
#include <string.h>

#include "compiler/query_check_int.h"
#include "compiler/suggest.h"

static int is_num(const og_qtype *t) { return t->node_type < 0 && og_qt_is_numeric(t->t.id); }
static int is_float(const og_qtype *t) { return t->t.id == OG_T_F32 || t->t.id == OG_T_F64; }
static int is_int(const og_qtype *t) { return is_num(t) && !is_float(t); }
static int is_str(const og_qtype *t) { return t->node_type < 0 && t->t.id == OG_T_STRING; }
static int is_date(const og_qtype *t)
{
    return t->node_type < 0 && (t->t.id == OG_T_DATE32 || t->t.id == OG_T_DATE64);
}

static const char *arith_word(int op)
{
    static const char *const w[] = {"+", "-", "*", "/", "%", "-"};
    return op >= 0 && op <= OG_QA_NEG ? w[op] : "?";
}

int og_chk_arith(og_chk *c, og_qexpr *e, int in_agg)
{
    char a[64], b[64];
    if (!og_chk_resolve(c, e->a, in_agg)) return 0;
    if (e->op == OG_QA_NEG) {
        if (!is_num(&e->a->type))
            return og_chk_fail(c, e->span, "T44", "unary `-` needs a number, got %s",
                               og_qt_name(&e->a->type, a, sizeof a));
        e->type = og_qt_scalar(is_float(&e->a->type) ? OG_T_F64 : OG_T_I64);
        e->type.nullable = e->a->type.nullable;
        e->is_agg = e->a->is_agg;
        return 1;
    }
    if (!og_chk_resolve(c, e->b, in_agg)) return 0;
    const og_qtype *l = &e->a->type, *r = &e->b->type;
    if (!is_num(l) || !is_num(r))
        return og_chk_fail(c, e->span, "T44", "`%s` needs numbers, got %s and %s%s", arith_word(e->op),
                           og_qt_name(l, a, sizeof a), og_qt_name(r, b, sizeof b),
                           e->op == OG_QA_ADD && (is_str(l) || is_str(r)) ? "; join strings with concat(a, b)" : "");
    e->type = og_qt_scalar(is_float(l) || is_float(r) ? OG_T_F64 : OG_T_I64);
    e->type.nullable = l->nullable || r->nullable || e->op == OG_QA_DIV || e->op == OG_QA_MOD;
    e->is_agg = e->a->is_agg || e->b->is_agg;
    return 1;
}

/* Edit distance of two short names (a suggestion for an unknown function; suggest.h). */
static size_t name_distance(const char *x, const char *y) { return og_typo_distance(x, y); }

static int unknown_function(og_chk *c, og_qexpr *e)
{
    static const char *const others[] = {"count", "sum", "avg", "min", "max", "now", "date", "datetime",
                                         "nearest", "search", "fuzzy", "match_text", "bm25", "rrf"};
    const char *best = NULL;
    size_t bd = 3; /* suggest within two edits */
    for (int i = 0; i < OG_QF__COUNT; i++) {
        size_t d = name_distance(e->name, og_qfn_name((og_qfn)i));
        if (d < bd) bd = d, best = og_qfn_name((og_qfn)i);
    }
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        size_t d = name_distance(e->name, others[i]);
        if (d < bd) bd = d, best = others[i];
    }
    if (best)
        return og_chk_fail(c, e->span, "T45", "unknown function `%s`; did you mean `%s`?", e->name, best);
    return og_chk_fail(c, e->span, "T45", "unknown function `%s`", e->name);
}

static int bad_arg(og_chk *c, og_qexpr *e, const og_qexpr *arg, const char *want)
{
    char a[64];
    return og_chk_fail(c, arg->span, "T45", "%s() needs %s, got %s", e->name, want,
                       og_qt_name(&arg->type, a, sizeof a));
}

/* coalesce(a, b): one type for both (numbers promote; otherwise the same type). */
static int coalesce_type(og_chk *c, og_qexpr *e)
{
    const og_qtype *l = &e->a->type, *r = &e->b->type;
    char a[64], b[64];
    if (is_num(l) && is_num(r)) {
        e->type = og_qt_scalar(l->t.id == r->t.id ? l->t.id : is_float(l) || is_float(r) ? OG_T_F64 : OG_T_I64);
    } else if (l->node_type < 0 && r->node_type < 0 && og_type_eq(l->t, r->t) && l->t.id != OG_T_BLOB) {
        e->type = *l;
        e->type.is_enum = l->is_enum && r->is_enum;
    } else {
        return og_chk_fail(c, e->span, "T45", "coalesce() needs arguments of one type, got %s and %s",
                           og_qt_name(l, a, sizeof a), og_qt_name(r, b, sizeof b));
    }
    e->type.nullable = l->nullable && r->nullable;
    return 1;
}

int og_chk_func(og_chk *c, og_qexpr *e, int in_agg)
{
    int fn = og_qfn_find(e->name);
    if (fn < 0) return unknown_function(c, e);
    e->fn = fn;
    int lo = 1, hi = 1;
    if (fn == OG_QF_SUBSTRING) lo = 2, hi = 3;
    if (fn == OG_QF_CONCAT || fn == OG_QF_COALESCE) lo = 1, hi = 2; /* more nest in b (parser) */
    if (e->nargs < lo || e->nargs > hi) {
        if (fn == OG_QF_SUBSTRING)
            return og_chk_fail(c, e->span, "T45", "substring() takes 2 or 3 arguments (string, start, length), got %d",
                               e->nargs);
        if (hi == 1) return og_chk_fail(c, e->span, "T45", "%s() takes 1 argument, got %d", e->name, e->nargs);
        return og_chk_fail(c, e->span, "T45", "%s() needs at least one argument", e->name);
    }
    if ((fn == OG_QF_LENGTH || fn == OG_QF_NODES) && e->a->kind == OG_QE_VAR && og_chk_param(c, e->a->var) < 0) {
        /* length($p) / nodes($p) of a `shortest { }` path (an extension) */
        int vi = og_chk_path_var(c, e->a->var);
        if (vi >= 0) {
            e->a->var_index = e->var_index = vi;
            e->a->is_param = 0;
            e->is_agg = 0;
            if (fn == OG_QF_LENGTH) {
                e->type = og_qt_scalar(OG_T_I64);
            } else { /* the node ids, source first: [String] */
                e->type = og_qt_scalar(OG_T_LIST);
                e->type.t.elem = OG_T_STRING;
            }
            e->type.nullable = c->q->vars[vi].optional;
            return 1;
        }
    }
    if (fn == OG_QF_NODES) {
        char a[64];
        if (!og_chk_resolve(c, e->a, in_agg)) return 0;
        return og_chk_fail(c, e->a->span, "T45", "nodes() needs a path bound by `$p: shortest { … }`, got %s",
                           og_qt_name(&e->a->type, a, sizeof a));
    }
    og_qexpr *args[3] = {e->a, e->b, e->c};
    int nullable = 0, agg = 0;
    for (int i = 0; i < e->nargs; i++) {
        if (!og_chk_resolve(c, args[i], in_agg)) return 0;
        if (args[i]->type.node_type < 0 && args[i]->type.t.id == OG_T_BLOB)
            return og_chk_fail(c, args[i]->span, "T24",
                               "Blob expression is not available as a .gq read value; Blob values require a "
                               "dedicated API");
        nullable |= args[i]->type.nullable;
        agg |= args[i]->is_agg;
    }
    e->is_agg = agg;
    const og_qtype *t = &e->a->type;
    switch ((og_qfn)fn) {
    case OG_QF_LOWER: case OG_QF_UPPER: case OG_QF_TRIM:
        if (!is_str(t)) return bad_arg(c, e, e->a, "a String");
        e->type = og_qt_scalar(OG_T_STRING);
        break;
    case OG_QF_LENGTH:
        if (!is_str(t) && !(t->node_type < 0 && og_qt_is_list(t))) return bad_arg(c, e, e->a, "a String or a list");
        e->type = og_qt_scalar(OG_T_I64);
        break;
    case OG_QF_SIZE:
        if (!(t->node_type < 0 && og_qt_is_list(t))) return bad_arg(c, e, e->a, "a list");
        e->type = og_qt_scalar(OG_T_I64);
        break;
    case OG_QF_SUBSTRING:
        if (!is_str(t)) return bad_arg(c, e, e->a, "a String");
        if (!is_int(&e->b->type)) return bad_arg(c, e, e->b, "an integer start");
        if (e->c && !is_int(&e->c->type)) return bad_arg(c, e, e->c, "an integer length");
        e->type = og_qt_scalar(OG_T_STRING);
        break;
    case OG_QF_CONCAT:
        for (int i = 0; i < e->nargs; i++)
            if (!is_str(&args[i]->type)) return bad_arg(c, e, args[i], "Strings");
        e->type = og_qt_scalar(OG_T_STRING);
        e->type.nullable = 0; /* a null argument is skipped */
        return 1;
    case OG_QF_COALESCE:
        if (e->nargs == 1) {
            e->type = *t;
            return 1;
        }
        return coalesce_type(c, e);
    case OG_QF_ABS: case OG_QF_ROUND: case OG_QF_FLOOR: case OG_QF_CEIL:
        if (!is_num(t)) return bad_arg(c, e, e->a, "a number");
        e->type = og_qt_scalar(is_float(t) ? OG_T_F64 : OG_T_I64);
        break;
    case OG_QF_YEAR: case OG_QF_MONTH: case OG_QF_DAY:
        if (!is_date(t)) return bad_arg(c, e, e->a, "a Date or DateTime");
        e->type = og_qt_scalar(OG_T_I64);
        break;
    case OG_QF_NODES: case OG_QF__COUNT:
        return 0;
    }
    e->type.nullable = nullable;
    return 1;
}
