/*
 * query_parse.c — hand-written recursive-descent parser of the .gq language
 * (reference-language.md §2) over the shared tokenizer (lexer.h).
 *
 * The reference grammar is a PEG; this parser reproduces its observable choices:
 *   - clause alternatives are tried in the order negation, binding, traversal, filter,
 *     text-search (so `$a contains $b` is a traversal over an edge named `contains`);
 *   - an ordering that starts with `nearest(` is a nearest ordering and takes no direction;
 *   - empty `{ }` bodies are errors; commas between projections and assignments are optional.
 * Like a PEG, a syntax error is reported at the furthest token any alternative reached, with
 * the set of things expected there.  Errors that are not about the shape of the input
 * (duplicate annotations, bad escapes, out-of-range numbers, malformed dates) are "hard" and
 * reported where they occur.  Keywords are real words (the tokenizer splits on identifier
 * boundaries); docs/query-language.md lists the few inputs where that differs from the PEG.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compiler/query_ast.h"
#include "compiler/settings.h"
#include "compiler/suggest.h"

#define MAX_EXPECT 8

typedef struct parser {
    const og_tokens *toks;
    size_t pos;
    const og_source *src;
    og_qarena *arena;
    int depth;
    size_t nclauses; /* match clauses of the current query */
    int nomem;
    /* hard error */
    int hard;
    size_t hard_start, hard_end;
    char hard_msg[256];
    /* furthest soft failure */
    size_t far;
    const char *expect[MAX_EXPECT];
    size_t nexpect;
} parser;

static const og_token *tok(parser *p) { return &p->toks->v[p->pos]; }
static const og_token *peek(parser *p, size_t k)
{
    size_t i = p->pos + k;
    if (i >= p->toks->len) i = p->toks->len - 1;
    return &p->toks->v[i];
}
static size_t prev_end(parser *p) { return p->pos ? p->toks->v[p->pos - 1].end : 0; }

static int failed(parser *p) { return p->hard || p->nomem; }

/* Records that `what` was expected at the current token (PEG-style furthest failure). */
static int expect_fail(parser *p, const char *what)
{
    if (p->pos > p->far) {
        p->far = p->pos;
        p->nexpect = 0;
    }
    if (p->pos == p->far) {
        for (size_t i = 0; i < p->nexpect; i++)
            if (strcmp(p->expect[i], what) == 0) return 0;
        if (p->nexpect < MAX_EXPECT) p->expect[p->nexpect++] = what;
    }
    return 0;
}

static int hard_error(parser *p, size_t start, size_t end, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int hard_error(parser *p, size_t start, size_t end, const char *fmt, ...)
{
    if (p->hard) return 0;
    p->hard = 1;
    p->hard_start = start;
    p->hard_end = end;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->hard_msg, sizeof p->hard_msg, fmt, ap);
    va_end(ap);
    return 0;
}

static void *alloc(parser *p, size_t n)
{
    void *r = og_qarena_alloc(p->arena, n);
    if (!r) p->nomem = 1;
    return r;
}

static const char *tok_str(parser *p, const og_token *t)
{
    char *s = og_qarena_strndup(p->arena, t->text, t->text_len);
    if (!s) p->nomem = 1;
    return s ? s : "";
}

static int is_kind(parser *p, og_tok_kind k) { return tok(p)->kind == k; }
static int is_word(parser *p, const char *w)
{
    return tok(p)->kind == OG_TOK_IDENT && og_tok_is(tok(p), w);
}

static int accept(parser *p, og_tok_kind k)
{
    if (tok(p)->kind == k) {
        p->pos++;
        return 1;
    }
    return 0;
}

static int expect_kind(parser *p, og_tok_kind k, const char *what)
{
    if (accept(p, k)) return 1;
    return expect_fail(p, what);
}

static int expect_word(parser *p, const char *w, const char *what)
{
    if (is_word(p, w)) {
        p->pos++;
        return 1;
    }
    return expect_fail(p, what);
}

/* Growable arrays inside the arena (old blocks are simply abandoned); at most `limit` items. */
static void *grow(parser *p, void *old, size_t *cap, size_t len, size_t elem, size_t limit)
{
    if (len >= limit) {
        hard_error(p, tok(p)->start, tok(p)->end, "too many items in one list (limit %zu)", limit);
        return NULL;
    }
    if (len < *cap) return old;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *n = alloc(p, ncap * elem);
    if (!n) return NULL;
    if (old && len) memcpy(n, old, len * elem);
    *cap = ncap;
    return n;
}

#define PUSH_LIMIT(p, arr, len, cap, limit)                                          \
    ((arr) = grow((p), (arr), &(cap), (len), sizeof *(arr), (limit)), (arr) ? &(arr)[(len)++] : NULL)
#define PUSH(p, arr, len, cap) PUSH_LIMIT(p, arr, len, cap, OG_QUERY_MAX_ITEMS)

static int enter(parser *p)
{
    if (++p->depth > OG_QUERY_MAX_DEPTH) {
        hard_error(p, tok(p)->start, tok(p)->end, "nesting deeper than %d levels",
                   OG_QUERY_MAX_DEPTH);
        return 0;
    }
    return 1;
}
static void leave(parser *p) { p->depth--; }

/* ---- literals ------------------------------------------------------------------------------ */

static int parse_literal(parser *p, og_qlit *out);

static int parse_date_call(parser *p, og_qlit *out, int datetime)
{
    size_t start = tok(p)->start;
    p->pos += 2; /* date ( */
    if (!is_kind(p, OG_TOK_STRING)) return expect_fail(p, "string");
    const og_token *s = tok(p);
    p->pos++;
    if (!expect_kind(p, OG_TOK_RPAREN, "')'")) return 0;
    out->kind = datetime ? OG_QLIT_DATETIME : OG_QLIT_DATE;
    out->span = (og_qspan){start, prev_end(p)};
    out->s = og_qarena_strndup(p->arena, s->str, s->str_len);
    out->slen = s->str_len;
    if (!out->s) return p->nomem = 1, 0;
    if (datetime) {
        int64_t ms;
        if (og_query_parse_datetime(s->str, s->str_len, &ms))
            return hard_error(p, s->start, s->end, "invalid DateTime literal '%s'", s->str);
        out->i = ms;
    } else {
        int32_t d;
        if (og_query_parse_date(s->str, s->str_len, &d))
            return hard_error(p, s->start, s->end, "invalid Date literal '%s'", s->str);
        out->i = d;
    }
    return 1;
}

static int parse_literal(parser *p, og_qlit *out)
{
    const og_token *t = tok(p);
    memset(out, 0, sizeof *out);
    out->span = (og_qspan){t->start, t->end};
    switch (t->kind) {
    case OG_TOK_STRING:
        out->kind = OG_QLIT_STRING;
        out->s = og_qarena_strndup(p->arena, t->str, t->str_len);
        if (!out->s) return p->nomem = 1, 0;
        out->slen = t->str_len;
        p->pos++;
        return 1;
    case OG_TOK_INT:
        if (t->overflow || t->u > (uint64_t)INT64_MAX)
            return hard_error(p, t->start, t->end, "invalid integer: %.*s does not fit in I64",
                              (int)t->text_len, t->text);
        out->kind = OG_QLIT_INT;
        out->i = (int64_t)t->u;
        out->f = (double)t->u;
        p->pos++;
        return 1;
    case OG_TOK_FLOAT:
        out->kind = OG_QLIT_FLOAT;
        out->f = t->f;
        p->pos++;
        return 1;
    case OG_TOK_IDENT:
        if (og_tok_is(t, "true") || og_tok_is(t, "false")) {
            out->kind = OG_QLIT_BOOL;
            out->b = og_tok_is(t, "true");
            p->pos++;
            return 1;
        }
        if ((og_tok_is(t, "date") || og_tok_is(t, "datetime")) && peek(p, 1)->kind == OG_TOK_LPAREN)
            return parse_date_call(p, out, og_tok_is(t, "datetime"));
        return expect_fail(p, "literal");
    case OG_TOK_LBRACKET: {
        if (!enter(p)) return 0;
        p->pos++;
        out->kind = OG_QLIT_LIST;
        size_t cap = 0;
        if (!is_kind(p, OG_TOK_RBRACKET)) {
            for (;;) {
                og_qlit *item = PUSH(p, out->items, out->nitems, cap);
                if (!item || !parse_literal(p, item)) return leave(p), 0;
                if (!accept(p, OG_TOK_COMMA)) break;
            }
        }
        leave(p);
        if (!expect_kind(p, OG_TOK_RBRACKET, "']'")) return 0;
        out->span.end = prev_end(p);
        return 1;
    }
    default:
        return expect_fail(p, "literal");
    }
}

/* ---- expressions --------------------------------------------------------------------------- */

static og_qexpr *parse_expr(parser *p);

static og_qexpr *new_expr(parser *p, og_qexpr_kind k, size_t start)
{
    og_qexpr *e = alloc(p, sizeof *e);
    if (!e) return NULL;
    e->kind = k;
    e->span.start = start;
    e->var_index = -1;
    e->param = -1;
    e->prop_index = -1;
    e->type.node_type = -1;
    return e;
}

static int parse_prop_access(parser *p, og_qexpr *e)
{
    const og_token *v = tok(p);
    if (v->kind != OG_TOK_VAR) return expect_fail(p, "variable");
    p->pos++;
    if (!expect_kind(p, OG_TOK_DOT, "'.'")) return 0;
    e->var = tok_str(p, v);
    e->var_span = (og_qspan){v->start, v->end};
    if (is_kind(p, OG_TOK_AT) && peek(p, 1)->kind == OG_TOK_IDENT && peek(p, 1)->start == tok(p)->end) {
        /* a meta field: $v.@id, $v.@type, $v.@src, $v.@dst (checked by the checker) */
        const og_token *w = peek(p, 1);
        char *n = alloc(p, w->text_len + 2);
        if (!n) return 0;
        n[0] = '@';
        memcpy(n + 1, w->text, w->text_len);
        e->name = n;
        p->pos += 2;
        return 1;
    }
    if (!is_kind(p, OG_TOK_IDENT)) return expect_fail(p, "property name");
    e->name = tok_str(p, tok(p));
    p->pos++;
    return 1;
}

static og_qexpr *parse_nearest(parser *p)
{
    og_qexpr *e = new_expr(p, OG_QE_NEAREST, tok(p)->start);
    if (!e) return NULL;
    p->pos += 2; /* nearest ( */
    if (!parse_prop_access(p, e)) return NULL;
    if (!expect_kind(p, OG_TOK_COMMA, "','")) return NULL;
    if (!(e->a = parse_expr(p))) return NULL;
    if (!expect_kind(p, OG_TOK_RPAREN, "')'")) return NULL;
    e->span.end = prev_end(p);
    return e;
}

/* search/fuzzy/match_text/bm25(field, query [, extra]) */
static og_qexpr *parse_call2(parser *p, og_qexpr_kind k, int allow_third)
{
    og_qexpr *e = new_expr(p, k, tok(p)->start);
    if (!e) return NULL;
    p->pos += 2;
    if (!(e->a = parse_expr(p))) return NULL;
    if (!expect_kind(p, OG_TOK_COMMA, "','")) return NULL;
    if (!(e->b = parse_expr(p))) return NULL;
    if (allow_third && accept(p, OG_TOK_COMMA)) {
        if (!(e->c = parse_expr(p))) return NULL;
    }
    if (!expect_kind(p, OG_TOK_RPAREN, allow_third && !e->c ? "',' or ')'" : "')'")) return NULL;
    e->span.end = prev_end(p);
    return e;
}

static og_qexpr *parse_rank(parser *p)
{
    if (is_word(p, "nearest") && peek(p, 1)->kind == OG_TOK_LPAREN) return parse_nearest(p);
    if (is_word(p, "bm25") && peek(p, 1)->kind == OG_TOK_LPAREN)
        return parse_call2(p, OG_QE_BM25, 0);
    hard_error(p, tok(p)->start, tok(p)->end,
               "rrf() rank expression must be nearest(...) or bm25(...)");
    return NULL;
}

static og_qexpr *parse_rrf(parser *p)
{
    og_qexpr *e = new_expr(p, OG_QE_RRF, tok(p)->start);
    if (!e) return NULL;
    p->pos += 2;
    if (!(e->a = parse_rank(p))) return NULL;
    if (!expect_kind(p, OG_TOK_COMMA, "','")) return NULL;
    if (!(e->b = parse_rank(p))) return NULL;
    if (accept(p, OG_TOK_COMMA) && !(e->c = parse_expr(p))) return NULL;
    if (!expect_kind(p, OG_TOK_RPAREN, e->c ? "')'" : "',' or ')'")) return NULL;
    e->span.end = prev_end(p);
    return e;
}

static int agg_word(const og_token *t, og_qagg *out)
{
    static const char *const names[] = {"count", "sum", "avg", "min", "max", "collect"};
    if (t->kind != OG_TOK_IDENT) return 0;
    for (int i = 0; i < 6; i++)
        if (og_tok_is(t, names[i])) {
            *out = (og_qagg)i;
            return 1;
        }
    return 0;
}

static og_qexpr *parse_or(parser *p);
static og_qexpr *parse_operand(parser *p);

/* Most arguments of one function call (concat / coalesce take any number up to this). */
#define OG_QUERY_MAX_FN_ARGS 32

/* name(arg, ...): a scalar function (the checker resolves the name and types the arguments;
 * an unknown name is its error, with a suggestion).  concat / coalesce of more than two
 * arguments nest to the right: concat(a, b, c) is concat(a, concat(b, c)). */
static og_qexpr *parse_func_args(parser *p, const char *name, size_t start, og_qexpr **args, size_t n)
{
    og_qexpr *e = new_expr(p, OG_QE_FUNC, start);
    if (!e) return NULL;
    e->name = name;
    e->nargs = (int)n;
    e->span.end = prev_end(p);
    int variadic = og_qfn_find(name) == OG_QF_CONCAT || og_qfn_find(name) == OG_QF_COALESCE;
    if (variadic && n > 2) {
        e->nargs = 2;
        e->a = args[0];
        return (e->b = parse_func_args(p, name, args[1]->span.start, args + 1, n - 1)) ? e : NULL;
    }
    e->a = n > 0 ? args[0] : NULL;
    e->b = n > 1 ? args[1] : NULL;
    e->c = n > 2 ? args[2] : NULL;
    return e;
}

static og_qexpr *parse_func(parser *p)
{
    const og_token *t = tok(p);
    size_t start = t->start;
    const char *name = tok_str(p, t);
    og_qexpr *args[OG_QUERY_MAX_FN_ARGS];
    size_t n = 0;
    if (!name) return NULL;
    p->pos += 2;
    if (!is_kind(p, OG_TOK_RPAREN)) {
        do {
            if (n == OG_QUERY_MAX_FN_ARGS) {
                hard_error(p, tok(p)->start, tok(p)->end, "more than %d arguments", OG_QUERY_MAX_FN_ARGS);
                return NULL;
            }
            if (!enter(p)) return NULL;
            args[n] = parse_or(p);
            leave(p);
            if (!args[n++]) return NULL;
        } while (accept(p, OG_TOK_COMMA));
    }
    if (!expect_kind(p, OG_TOK_RPAREN, n ? "',' or ')'" : "expression or ')'")) return NULL;
    og_qexpr *e = parse_func_args(p, name, start, args, n);
    if (e) e->span.end = prev_end(p);
    return e;
}

static og_qexpr *parse_expr_inner(parser *p)
{
    const og_token *t = tok(p);
    size_t start = t->start;
    og_qexpr *e;
    int call = peek(p, 1)->kind == OG_TOK_LPAREN;
    og_qagg agg;
    if (t->kind == OG_TOK_IDENT && call) {
        if (og_tok_is(t, "now")) {
            if (!(e = new_expr(p, OG_QE_NOW, start))) return NULL;
            p->pos += 2;
            if (!expect_kind(p, OG_TOK_RPAREN, "')'")) return NULL;
            e->span.end = prev_end(p);
            return e;
        }
        if (og_tok_is(t, "nearest")) return parse_nearest(p);
        if (og_tok_is(t, "search")) return parse_call2(p, OG_QE_SEARCH, 0);
        if (og_tok_is(t, "fuzzy")) return parse_call2(p, OG_QE_FUZZY, 1);
        if (og_tok_is(t, "match_text")) return parse_call2(p, OG_QE_MATCH_TEXT, 0);
        if (og_tok_is(t, "bm25")) return parse_call2(p, OG_QE_BM25, 0);
        if (og_tok_is(t, "rrf")) return parse_rrf(p);
        if (agg_word(t, &agg)) {
            if (!(e = new_expr(p, OG_QE_AGG, start))) return NULL;
            e->agg = agg;
            p->pos += 2;
            /* `count(distinct $x)`; `distinct` stays usable as an alias (`count($p) as distinct`) */
            if (is_word(p, "distinct") && peek(p, 1)->kind != OG_TOK_RPAREN) {
                e->distinct = 1;
                p->pos++;
            }
            if (!(e->a = parse_operand(p))) return NULL; /* a value: `sum($p.age * 2)` */
            if (!expect_kind(p, OG_TOK_RPAREN, "')'")) return NULL;
            e->span.end = prev_end(p);
            return e;
        }
        if (!og_tok_is(t, "date") && !og_tok_is(t, "datetime")) return parse_func(p);
    }
    if (t->kind == OG_TOK_VAR) {
        if (peek(p, 1)->kind == OG_TOK_DOT) {
            if (!(e = new_expr(p, OG_QE_PROP, start))) return NULL;
            if (!parse_prop_access(p, e)) return NULL;
        } else {
            if (!(e = new_expr(p, OG_QE_VAR, start))) return NULL;
            e->var = tok_str(p, t);
            e->var_span = (og_qspan){t->start, t->end};
            p->pos++;
        }
        e->span.end = prev_end(p);
        return e;
    }
    if (t->kind == OG_TOK_STRING || t->kind == OG_TOK_INT || t->kind == OG_TOK_FLOAT ||
        t->kind == OG_TOK_LBRACKET ||
        (t->kind == OG_TOK_IDENT && (og_tok_is(t, "true") || og_tok_is(t, "false") ||
                                     ((og_tok_is(t, "date") || og_tok_is(t, "datetime")) && call)))) {
        if (!(e = new_expr(p, OG_QE_LIT, start))) return NULL;
        if (!parse_literal(p, &e->lit)) return NULL;
        e->span = e->lit.span;
        return e;
    }
    if (t->kind == OG_TOK_IDENT) {
        if (!(e = new_expr(p, OG_QE_ALIAS, start))) return NULL;
        e->name = tok_str(p, t);
        p->pos++;
        e->span.end = prev_end(p);
        return e;
    }
    expect_fail(p, "expression");
    return NULL;
}

static og_qexpr *parse_expr(parser *p)
{
    if (!enter(p)) return NULL;
    og_qexpr *e = parse_expr_inner(p);
    leave(p);
    return failed(p) ? NULL : e;
}

/* ---- match clauses ------------------------------------------------------------------------- */

static int parse_clause(parser *p, og_qclause *c);

static int parse_value(parser *p, og_qvalue *v)
{
    const og_token *t = tok(p);
    memset(v, 0, sizeof *v);
    v->param = -1;
    v->span = (og_qspan){t->start, t->end};
    if (t->kind == OG_TOK_VAR) {
        v->kind = OG_QV_VAR;
        v->var = tok_str(p, t);
        p->pos++;
        return 1;
    }
    if (t->kind == OG_TOK_IDENT && og_tok_is(t, "now") && peek(p, 1)->kind == OG_TOK_LPAREN) {
        v->kind = OG_QV_NOW;
        p->pos += 2;
        if (!expect_kind(p, OG_TOK_RPAREN, "')'")) return 0;
        v->span.end = prev_end(p);
        return 1;
    }
    v->kind = OG_QV_LIT;
    if (!parse_literal(p, &v->lit)) {
        expect_fail(p, "variable");
        expect_fail(p, "now()");
        return 0;
    }
    v->span = v->lit.span;
    return 1;
}

static og_qexpr *parse_or(parser *p);
static int is_cond(const og_qexpr *e);

static int parse_binding(parser *p, og_qclause *c)
{
    const og_token *v = tok(p);
    c->kind = OG_QC_BINDING;
    c->var = tok_str(p, v);
    c->var_span = (og_qspan){v->start, v->end};
    p->pos += 2; /* $v : */
    const og_token *t = tok(p);
    c->type_name = tok_str(p, t);
    c->type_span = (og_qspan){t->start, t->end};
    p->pos++;
    if (accept(p, OG_TOK_LBRACE)) {
        /* `$d: Document { }`: no property filter (REF: the reference's grammar wants one, its
         * hybrid-search guide writes none; docs/search.md) */
        if (accept(p, OG_TOK_RBRACE)) return 1;
        size_t cap = 0;
        for (;;) {
            if (!is_kind(p, OG_TOK_IDENT)) return expect_fail(p, "property name");
            og_qpropmatch *m = PUSH(p, c->matches, c->nmatches, cap);
            if (!m) return 0;
            m->prop = tok_str(p, tok(p));
            m->prop_span = (og_qspan){tok(p)->start, tok(p)->end};
            m->prop_index = -1;
            p->pos++;
            if (!expect_kind(p, OG_TOK_COLON, "':'")) return 0;
            size_t save = p->pos;
            int plain = parse_value(p, &m->value);
            if (failed(p)) return 0;
            if (!plain || (!is_kind(p, OG_TOK_COMMA) && !is_kind(p, OG_TOK_RBRACE))) {
                /* not a plain value: a condition whose value the property must equal */
                p->pos = save;
                og_qexpr *e = parse_or(p);
                if (!e || failed(p)) return 0;
                if (is_cond(e)) {
                    m->expr = e;
                } else { /* re-read as a value for the usual error */
                    p->pos = save;
                    if (!parse_value(p, &m->value)) return 0;
                }
            }
            if (!accept(p, OG_TOK_COMMA)) break;
            if (is_kind(p, OG_TOK_RBRACE)) break; /* trailing comma */
        }
        if (!expect_kind(p, OG_TOK_RBRACE, "',' or '}'")) return 0;
    }
    return 1;
}

/* Speculative: returns 1 and fills c when the tokens form a traversal; 0 otherwise (the
 * caller restores the position).  Hard errors (bounds overflow) still stick. */
static int try_traversal(parser *p, og_qclause *c)
{
    const og_token *s = tok(p);
    c->kind = OG_QC_TRAVERSAL;
    c->src = tok_str(p, s);
    c->src_span = (og_qspan){s->start, s->end};
    p->pos++;
    if (is_kind(p, OG_TOK_VAR) && peek(p, 1)->kind == OG_TOK_COLON) {
        c->edge_var = tok_str(p, tok(p));
        c->edge_var_span = (og_qspan){tok(p)->start, tok(p)->end};
        p->pos += 2;
    }
    if (accept(p, OG_TOK_LT)) {
        c->undirected = 1;
        int quoted = is_kind(p, OG_TOK_STRING);
        if (!quoted && (!is_kind(p, OG_TOK_IDENT) || is_word(p, "not") || is_word(p, "and") || is_word(p, "or") || is_word(p, "is")))
            return expect_fail(p, "edge name");
        c->edge_word = quoted ? og_qarena_strndup(p->arena, tok(p)->str, tok(p)->str_len) : tok_str(p, tok(p));
        if (!c->edge_word) {
            p->nomem = 1;
            return 0;
        }
        c->edge_span = (og_qspan){tok(p)->start, tok(p)->end};
        p->pos++;
        if (!expect_kind(p, OG_TOK_GT, "'>'")) return 0;
    } else if (is_kind(p, OG_TOK_STRING)) { /* `$i "in" $b`: the spelling for an edge a keyword names (reference) */
        c->edge_word = og_qarena_strndup(p->arena, tok(p)->str, tok(p)->str_len);
        if (!c->edge_word) {
            p->nomem = 1;
            return 0;
        }
        c->edge_span = (og_qspan){tok(p)->start, tok(p)->end};
        p->pos++;
    } else {
        if (!is_kind(p, OG_TOK_IDENT) || is_word(p, "not") || is_word(p, "and") || is_word(p, "or") || is_word(p, "is"))
            return expect_fail(p, "edge name");
        c->edge_word = tok_str(p, tok(p));
        c->edge_span = (og_qspan){tok(p)->start, tok(p)->end};
        p->pos++;
    }
    c->min_hops = c->max_hops = 1;
    c->has_max = 1;
    if (is_kind(p, OG_TOK_LBRACE)) {
        p->pos++;
        c->has_bounds = 1;
        const og_token *mn = tok(p);
        if (!expect_kind(p, OG_TOK_INT, "hop count")) return 0;
        if (!expect_kind(p, OG_TOK_COMMA, "','")) return 0;
        if (mn->overflow || mn->u > UINT32_MAX)
            return hard_error(p, mn->start, mn->end, "invalid traversal min bound: %.*s",
                              (int)mn->text_len, mn->text);
        c->min_hops = (uint32_t)mn->u;
        c->has_max = 0;
        if (is_kind(p, OG_TOK_INT)) {
            const og_token *mx = tok(p);
            if (mx->overflow || mx->u > UINT32_MAX)
                return hard_error(p, mx->start, mx->end, "invalid traversal max bound: %.*s",
                                  (int)mx->text_len, mx->text);
            c->max_hops = (uint32_t)mx->u;
            c->has_max = 1;
            p->pos++;
        }
        if (!expect_kind(p, OG_TOK_RBRACE, "'}'")) return 0;
    }
    if (!is_kind(p, OG_TOK_VAR)) return expect_fail(p, "variable");
    c->dst = tok_str(p, tok(p));
    c->dst_span = (og_qspan){tok(p)->start, tok(p)->end};
    p->pos++;
    /* `$x in $p.tags`: a property access on the right makes it a filter, not a traversal */
    if (is_kind(p, OG_TOK_DOT)) return 0;
    return 1;
}

/* `$p: shortest { $a edge{lo,hi} $b }` (an extension, docs/reference.md "Shortest paths"): one
 * traversal inside the braces; the clause keeps its fields and becomes OG_QC_PATH. */
static int parse_path(parser *p, og_qclause *c)
{
    const og_token *v = tok(p);
    const char *var = tok_str(p, v);
    og_qspan var_span = {v->start, v->end};
    p->pos += 4; /* $p : shortest { */
    if (!is_kind(p, OG_TOK_VAR)) return expect_fail(p, "a traversal `$a edge{min,max} $b`");
    size_t save = p->pos;
    if (!try_traversal(p, c)) {
        if (failed(p)) return 0;
        p->pos = save;
        return expect_fail(p, "a traversal `$a edge{min,max} $b`");
    }
    c->kind = OG_QC_PATH;
    c->var = var;
    c->var_span = var_span;
    return expect_kind(p, OG_TOK_RBRACE, "'}' (shortest { } holds one traversal)");
}

static int filter_op(parser *p, og_qop *op)
{
    switch (tok(p)->kind) {
    case OG_TOK_EQ: *op = OG_QOP_EQ; break;
    case OG_TOK_NE: *op = OG_QOP_NE; break;
    case OG_TOK_LT: *op = OG_QOP_LT; break;
    case OG_TOK_LE: *op = OG_QOP_LE; break;
    case OG_TOK_GT: *op = OG_QOP_GT; break;
    case OG_TOK_GE: *op = OG_QOP_GE; break;
    case OG_TOK_IDENT:
        if (is_word(p, "contains")) { *op = OG_QOP_CONTAINS; break; }
        if (is_word(p, "starts_with")) { *op = OG_QOP_STARTS_WITH; break; }
        if (is_word(p, "in")) { *op = OG_QOP_IN; break; }
        return 0;
    default:
        return 0;
    }
    p->pos++;
    return 1;
}

/* Conditions: or_cond := and_cond ("or" and_cond)*; and_cond := not_cond ("and" not_cond)*;
 * not_cond := "not" not_cond | cmp; cmp := operand [op operand | "is" ["not"] "null"];
 * operand := "(" or_cond ")" | expression.  `not {` stays a negation block. */
static og_qexpr *parse_or(parser *p);

static og_qexpr *parse_primary(parser *p)
{
    if (is_kind(p, OG_TOK_LPAREN)) {
        if (!enter(p)) return NULL;
        p->pos++;
        og_qexpr *e = parse_or(p);
        leave(p);
        if (!e || !expect_kind(p, OG_TOK_RPAREN, "')'")) return NULL;
        return e;
    }
    return parse_expr(p);
}

/* Arithmetic (an extension): operand := term (("+" | "-") term)*; term := unary (("*" | "/" |
 * "%") unary)*; unary := "-" unary | primary.  Usual precedence, left associative.  Every
 * operator counts one level against the nesting limit, so no later recursive pass can be made
 * to overflow the stack by a long chain. */
static og_qexpr *parse_unary(parser *p)
{
    if (!is_kind(p, OG_TOK_MINUS)) return parse_primary(p);
    size_t start = tok(p)->start;
    const og_token *n = peek(p, 1);
    if ((n->kind == OG_TOK_INT && !n->overflow && n->u <= (uint64_t)INT64_MAX) || n->kind == OG_TOK_FLOAT) {
        /* a negative number is a literal: `-3`, `-2.5` */
        og_qexpr *e = new_expr(p, OG_QE_LIT, start);
        if (!e) return NULL;
        p->pos++;
        if (!parse_literal(p, &e->lit)) return NULL;
        if (e->lit.kind == OG_QLIT_INT) {
            e->lit.i = -(int64_t)n->u;
            e->lit.f = -(double)n->u;
        } else {
            e->lit.f = -e->lit.f;
        }
        e->lit.span.start = start;
        e->span = e->lit.span;
        return e;
    }
    if (!enter(p)) return NULL;
    p->pos++;
    og_qexpr *e = new_expr(p, OG_QE_ARITH, start);
    if (e) {
        e->op = OG_QA_NEG;
        if (!(e->a = parse_unary(p))) e = NULL;
    }
    leave(p);
    if (e) e->span.end = prev_end(p);
    return e;
}

static int arith_op(parser *p, int additive, og_qarith *op)
{
    og_tok_kind k = tok(p)->kind;
    if (additive && (k == OG_TOK_PLUS || k == OG_TOK_MINUS)) *op = k == OG_TOK_PLUS ? OG_QA_ADD : OG_QA_SUB;
    else if (!additive && (k == OG_TOK_STAR || k == OG_TOK_SLASH || k == OG_TOK_PERCENT))
        *op = k == OG_TOK_STAR ? OG_QA_MUL : k == OG_TOK_SLASH ? OG_QA_DIV : OG_QA_MOD;
    else return 0;
    return 1;
}

static og_qexpr *parse_arith(parser *p, int additive)
{
    size_t start = tok(p)->start;
    og_qexpr *l = additive ? parse_arith(p, 0) : parse_unary(p);
    int entered = 0;
    og_qarith op;
    while (l && arith_op(p, additive, &op)) {
        if (!enter(p)) {
            l = NULL;
            break;
        }
        entered++;
        p->pos++;
        og_qexpr *e = new_expr(p, OG_QE_ARITH, start);
        if (!e || !(e->b = additive ? parse_arith(p, 0) : parse_unary(p))) {
            l = NULL;
            break;
        }
        e->a = l;
        e->op = (int)op;
        e->span.end = prev_end(p);
        l = e;
    }
    while (entered--) leave(p);
    return l;
}

static og_qexpr *parse_operand(parser *p) { return parse_arith(p, 1); }

static og_qexpr *parse_cmp(parser *p)
{
    size_t start = tok(p)->start;
    og_qexpr *l = parse_operand(p);
    if (!l) return NULL;
    og_qop op;
    if (filter_op(p, &op)) {
        og_qexpr *e = new_expr(p, OG_QE_CMP, start);
        if (!e || !(e->b = parse_operand(p))) return NULL;
        e->a = l;
        e->op = (int)op;
        e->span.end = prev_end(p);
        return e;
    }
    if (is_word(p, "is")) {
        p->pos++;
        int neg = 0;
        if (is_word(p, "not")) {
            p->pos++;
            neg = 1;
        }
        if (!is_word(p, "null")) {
            expect_fail(p, "'null'");
            return NULL;
        }
        p->pos++;
        og_qexpr *e = new_expr(p, OG_QE_ISNULL, start);
        if (!e) return NULL;
        e->a = l;
        e->negated = neg;
        e->span.end = prev_end(p);
        return e;
    }
    return l;
}

static og_qexpr *parse_not(parser *p)
{
    if (is_word(p, "not") && peek(p, 1)->kind != OG_TOK_LBRACE) {
        size_t start = tok(p)->start;
        if (!enter(p)) return NULL;
        p->pos++;
        og_qexpr *e = new_expr(p, OG_QE_NOT, start);
        if (e && !(e->a = parse_not(p))) e = NULL;
        leave(p);
        if (e) e->span.end = prev_end(p);
        return e;
    }
    return parse_cmp(p);
}

static og_qexpr *parse_binary(parser *p, const char *word, og_qexpr_kind k, og_qexpr *(*sub)(parser *))
{
    size_t start = tok(p)->start;
    og_qexpr *l = sub(p);
    while (l && is_word(p, word)) {
        p->pos++;
        og_qexpr *e = new_expr(p, k, start);
        if (!e || !enter(p)) return NULL;
        e->a = l;
        e->b = sub(p);
        leave(p);
        if (!e->b) return NULL;
        e->span.end = prev_end(p);
        l = e;
    }
    return l;
}

static og_qexpr *parse_and(parser *p) { return parse_binary(p, "and", OG_QE_AND, parse_not); }
static og_qexpr *parse_or(parser *p) { return parse_binary(p, "or", OG_QE_OR, parse_and); }

static int is_cond(const og_qexpr *e)
{
    return e->kind == OG_QE_CMP || e->kind == OG_QE_AND || e->kind == OG_QE_OR || e->kind == OG_QE_NOT ||
           e->kind == OG_QE_ISNULL;
}

static int parse_filter(parser *p, og_qclause *c)
{
    og_qexpr *e = parse_or(p);
    if (!e || failed(p)) return 0;
    if (e->kind == OG_QE_CMP && !is_cond(e->a) && !is_cond(e->b)) { /* the plain `a op b` filter */
        c->kind = OG_QC_FILTER;
        c->left = e->a;
        c->right = e->b;
        c->op = (og_qop)e->op;
        return 1;
    }
    if (e->kind == OG_QE_SEARCH || e->kind == OG_QE_FUZZY || e->kind == OG_QE_MATCH_TEXT) {
        c->kind = OG_QC_TEXT;
        c->left = e;
        c->op = OG_QOP_EQ;
        return 1;
    }
    if ((e->kind == OG_QE_LIT && e->lit.kind != OG_QLIT_BOOL) || e->kind == OG_QE_ALIAS)
        return expect_fail(p, "comparison operator");
    /* `$a not $b` reads as a misspelt traversal, not as two conditions */
    if (!is_cond(e) && is_word(p, "not") && peek(p, 1)->kind != OG_TOK_LBRACE)
        return expect_fail(p, "comparison operator");
    c->kind = OG_QC_COND; /* compound, `is null`, or a bare Bool property / parameter / literal */
    c->left = e;
    return 1;
}

static int parse_clauses(parser *p, og_qclause **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    do {
        og_qclause *c = PUSH(p, *out, *n, cap);
        if (!c || !parse_clause(p, c)) return 0;
    } while (!is_kind(p, OG_TOK_RBRACE) && !is_kind(p, OG_TOK_EOF));
    return expect_kind(p, OG_TOK_RBRACE, "'}'");
}

/* `agg(…) {`: a correlated aggregate over a block (`sum($d.size) { $p owns $d } > 100`), told
 * apart from an aggregate in a filter by the `{` after its closing parenthesis. */
static int agg_block_at(parser *p)
{
    og_qagg agg;
    if (!agg_word(tok(p), &agg) || agg == OG_QAGG_COLLECT || peek(p, 1)->kind != OG_TOK_LPAREN) return 0;
    size_t depth = 0;
    for (size_t k = 1;; k++) {
        const og_token *t = peek(p, k);
        if (t->kind == OG_TOK_EOF) return 0;
        if (t->kind == OG_TOK_LPAREN) depth++;
        else if (t->kind == OG_TOK_RPAREN && --depth == 0) return peek(p, k + 1)->kind == OG_TOK_LBRACE;
    }
}

static int parse_clause(parser *p, og_qclause *c)
{
    size_t start = tok(p)->start;
    memset(c, 0, sizeof *c);
    if (++p->nclauses > OG_QUERY_MAX_CLAUSES)
        return hard_error(p, tok(p)->start, tok(p)->end, "query has more than %d match clauses",
                          OG_QUERY_MAX_CLAUSES);
    c->type_index = c->var_index = c->src_index = c->dst_index = c->edge_var_index = -1;
    int ok;
    int sub = -1, skip = 2;
    if (is_word(p, "not") && peek(p, 1)->kind == OG_TOK_LBRACE) sub = OG_QSUB_NOT;
    else if (is_word(p, "not") && og_tok_is(peek(p, 1), "exists") && peek(p, 2)->kind == OG_TOK_LBRACE)
        sub = OG_QSUB_NOT, skip = 3;
    else if (is_word(p, "exists") && peek(p, 1)->kind == OG_TOK_LBRACE) sub = OG_QSUB_EXISTS;
    else if (is_word(p, "count") && peek(p, 1)->kind == OG_TOK_LBRACE) sub = OG_QSUB_COUNT;
    else if (is_word(p, "optional") && peek(p, 1)->kind == OG_TOK_LBRACE) sub = OG_QSUB_OPTIONAL;
    else if (agg_block_at(p)) sub = OG_QSUB_COUNT, skip = 0;
    if (sub >= 0) {
        if (!enter(p)) return 0;
        c->kind = OG_QC_NEGATION;
        c->sub = sub;
        c->sub_agg = OG_QAGG_COUNT;
        if (skip == 0) { /* sum(x) { … } op value: the aggregate of x over the block's matches */
            og_qagg agg = OG_QAGG_COUNT;
            agg_word(tok(p), &agg);
            c->sub_agg = (int)agg;
            p->pos += 2;
            if (!(c->sub_arg = parse_or(p)) || !expect_kind(p, OG_TOK_RPAREN, "')'") ||
                !expect_kind(p, OG_TOK_LBRACE, "'{'")) {
                leave(p);
                return 0;
            }
        }
        p->pos += (size_t)skip;
        ok = parse_clauses(p, &c->inner, &c->ninner);
        leave(p);
        if (ok && sub == OG_QSUB_COUNT) { /* count { … } op value */
            if (!filter_op(p, &c->op) || c->op > OG_QOP_GE) {
                expect_fail(p, "comparison operator");
                return 0;
            }
            ok = (c->right = parse_operand(p)) != NULL;
        }
    } else if (is_kind(p, OG_TOK_VAR) && peek(p, 1)->kind == OG_TOK_COLON && og_tok_is(peek(p, 2), "shortest") &&
               peek(p, 3)->kind == OG_TOK_LBRACE) {
        ok = parse_path(p, c);
    } else if (is_kind(p, OG_TOK_VAR) && peek(p, 1)->kind == OG_TOK_COLON &&
               peek(p, 2)->kind == OG_TOK_TYPENAME) {
        ok = parse_binding(p, c);
    } else if (is_kind(p, OG_TOK_VAR) && peek(p, 1)->kind == OG_TOK_COLON) {
        /* `$v:` can only start a binding: the next token must be a type name */
        p->pos += 2;
        ok = expect_fail(p, "type name");
    } else {
        ok = 0;
        if (is_kind(p, OG_TOK_VAR)) {
            size_t save = p->pos;
            ok = try_traversal(p, c);
            if (!ok && !failed(p)) {
                p->pos = save;
                memset(c, 0, sizeof *c);
                c->type_index = c->var_index = c->src_index = c->dst_index = c->edge_var_index = -1;
            }
        }
        if (!ok && !failed(p)) ok = parse_filter(p, c);
    }
    c->span = (og_qspan){start, prev_end(p)};
    return ok && !failed(p);
}

/* ---- return / order / limit ---------------------------------------------------------------- */

static int parse_return(parser *p, og_query *q)
{
    size_t cap = 0;
    if (is_word(p, "distinct") && peek(p, 1)->kind == OG_TOK_LBRACE) {
        q->distinct = 1;
        p->pos++;
    }
    if (!expect_kind(p, OG_TOK_LBRACE, "'{'")) return 0;
    do {
        size_t start = tok(p)->start;
        og_qprojection *pr = PUSH(p, q->projections, q->nprojections, cap);
        if (!pr || !(pr->expr = parse_or(p))) return 0; /* a value or a condition */
        if (is_word(p, "as") && peek(p, 1)->kind == OG_TOK_IDENT) {
            p->pos++;
            pr->alias = tok_str(p, tok(p));
            pr->alias_span = (og_qspan){tok(p)->start, tok(p)->end};
            p->pos++;
        }
        pr->span = (og_qspan){start, prev_end(p)};
        accept(p, OG_TOK_COMMA);
    } while (!is_kind(p, OG_TOK_RBRACE) && !is_kind(p, OG_TOK_EOF));
    return expect_kind(p, OG_TOK_RBRACE, "'}'");
}

static int parse_order(parser *p, og_query *q)
{
    size_t cap = 0;
    if (!expect_kind(p, OG_TOK_LBRACE, "'{'")) return 0;
    for (;;) {
        size_t start = tok(p)->start;
        og_qordering *o = PUSH(p, q->orderings, q->norderings, cap);
        if (!o) return 0;
        if (is_word(p, "nearest") && peek(p, 1)->kind == OG_TOK_LPAREN) {
            if (!(o->expr = parse_nearest(p))) return 0;
        } else {
            if (!(o->expr = parse_or(p))) return 0;
            if (is_word(p, "asc") || is_word(p, "desc")) {
                o->desc = is_word(p, "desc");
                o->has_dir = 1;
                p->pos++;
            } else {
                expect_fail(p, "'asc' or 'desc'");
            }
        }
        o->span = (og_qspan){start, prev_end(p)};
        if (!accept(p, OG_TOK_COMMA)) break;
    }
    return expect_kind(p, OG_TOK_RBRACE, "',' or '}'");
}

/* The value of `limit` / `offset`: an integer literal, or a parameter (`limit $n`) whose
 * value the engine reads when the query runs (an extension: agents store a query with a
 * page size). */
static int parse_count(parser *p, const char *what, uint64_t *value, const char **param, og_qspan *span)
{
    const og_token *t = tok(p);
    *span = (og_qspan){t->start, t->end};
    if (t->kind == OG_TOK_VAR) {
        *param = tok_str(p, t);
        p->pos++;
        return *param != NULL;
    }
    if (!expect_kind(p, OG_TOK_INT, "integer or parameter")) return 0;
    if (t->overflow)
        return hard_error(p, t->start, t->end, "invalid %s: %.*s", what, (int)t->text_len, t->text);
    *value = t->u;
    return 1;
}

static int parse_read_body(parser *p, og_query *q)
{
    p->pos++; /* match */
    if (!expect_kind(p, OG_TOK_LBRACE, "'{'")) return 0;
    if (!parse_clauses(p, &q->clauses, &q->nclauses)) return 0;
    if (!expect_word(p, "return", "'return'")) return 0;
    if (!parse_return(p, q)) return 0;
    if (is_word(p, "order")) {
        p->pos++;
        if (!parse_order(p, q)) return 0;
    } else {
        expect_fail(p, "'order'");
    }
    if (is_word(p, "limit")) {
        p->pos++;
        if (!parse_count(p, "limit", &q->limit, &q->limit_param, &q->limit_span)) return 0;
        q->has_limit = 1;
    } else {
        expect_fail(p, "'limit'");
    }
    if (is_word(p, "offset")) {
        p->pos++;
        if (!parse_count(p, "offset", &q->offset, &q->offset_param, &q->offset_span)) return 0;
        q->has_offset = 1;
    } else {
        expect_fail(p, "'offset'");
    }
    return 1;
}

/* ---- mutations ---------------------------------------------------------------------------- */

/* Does the token after a plain value continue it as an expression (an operator)? */
static int continues_expr(parser *p)
{
    og_tok_kind k = tok(p)->kind;
    if (k == OG_TOK_EQ || k == OG_TOK_NE || k == OG_TOK_LT || k == OG_TOK_LE || k == OG_TOK_GT || k == OG_TOK_GE ||
        k == OG_TOK_PLUS || k == OG_TOK_MINUS || k == OG_TOK_STAR || k == OG_TOK_SLASH || k == OG_TOK_PERCENT)
        return 1;
    return is_word(p, "and") || is_word(p, "or") || is_word(p, "is") || is_word(p, "contains") ||
           is_word(p, "starts_with") || (is_word(p, "in") && peek(p, 1)->kind != OG_TOK_COLON);
}

static int parse_assigns(parser *p, og_qmutation *m)
{
    size_t cap = 0;
    if (!expect_kind(p, OG_TOK_LBRACE, "'{'")) return 0;
    do {
        if (!is_kind(p, OG_TOK_IDENT)) return expect_fail(p, "property name");
        og_qassign *a = PUSH(p, m->assigns, m->nassigns, cap);
        if (!a) return 0;
        a->prop = tok_str(p, tok(p));
        a->prop_span = (og_qspan){tok(p)->start, tok(p)->end};
        a->prop_index = -1;
        p->pos++;
        if (!expect_kind(p, OG_TOK_COLON, "':'")) return 0;
        size_t save = p->pos;
        int plain = parse_value(p, &a->value);
        if (failed(p)) return 0;
        if (!plain || continues_expr(p)) { /* an expression over parameters (reference parity) */
            p->pos = save;
            if (!(a->expr = parse_or(p))) return 0;
        }
        accept(p, OG_TOK_COMMA);
    } while (!is_kind(p, OG_TOK_RBRACE) && !is_kind(p, OG_TOK_EOF));
    return expect_kind(p, OG_TOK_RBRACE, "'}'");
}

static og_qmcond *parse_mwhere_or(parser *p);

static og_qmcond *new_mcond(parser *p, og_qmc_kind k, size_t start)
{
    og_qmcond *c = alloc(p, sizeof *c);
    if (!c) return NULL;
    c->kind = k;
    c->span.start = start;
    c->leaf.prop_index = -1;
    return c;
}

static og_qmcond *parse_mwhere_leaf(parser *p)
{
    size_t start = tok(p)->start;
    if (is_kind(p, OG_TOK_LPAREN)) {
        if (!enter(p)) return NULL;
        p->pos++;
        og_qmcond *c = parse_mwhere_or(p);
        leave(p);
        if (!c || !expect_kind(p, OG_TOK_RPAREN, "')'")) return NULL;
        return c;
    }
    if (is_word(p, "not") && !is_word(p, "and")) {
        if (!enter(p)) return NULL;
        p->pos++;
        og_qmcond *c = new_mcond(p, OG_QMC_NOT, start);
        if (c && !(c->a = parse_mwhere_leaf(p))) c = NULL;
        leave(p);
        if (c) c->span.end = prev_end(p);
        return c;
    }
    og_qmcond *c = new_mcond(p, OG_QMC_CMP, start);
    if (!c) return NULL;
    if (is_kind(p, OG_TOK_AT) && peek(p, 1)->kind == OG_TOK_IDENT && peek(p, 1)->start == tok(p)->end) {
        /* a meta field: @id, @src, @dst */
        const og_token *w = peek(p, 1);
        char *n = alloc(p, w->text_len + 2);
        if (!n) return NULL;
        n[0] = '@';
        memcpy(n + 1, w->text, w->text_len);
        c->leaf.prop = n;
        c->leaf.prop_span = (og_qspan){tok(p)->start, w->end};
        p->pos += 2;
    } else if (!is_kind(p, OG_TOK_IDENT)) {
        expect_fail(p, "property name");
        return NULL;
    } else {
        c->leaf.prop = tok_str(p, tok(p));
        c->leaf.prop_span = (og_qspan){tok(p)->start, tok(p)->end};
        p->pos++;
    }
    if (is_word(p, "is")) { /* prop is [not] null */
        p->pos++;
        if (is_word(p, "not")) {
            p->pos++;
            c->negated = 1;
        }
        if (!expect_word(p, "null", "'null'")) return NULL;
        c->kind = OG_QMC_ISNULL;
    } else if (filter_op(p, &c->op)) { /* = != < <= > >= contains starts_with in */
        if (!parse_value(p, &c->leaf.value)) return NULL;
    } else {
        c->kind = OG_QMC_BARE; /* a Bool property on its own */
    }
    c->span.end = prev_end(p);
    return c;
}

static og_qmcond *parse_mwhere_bin(parser *p, const char *word, og_qmc_kind k, og_qmcond *(*sub)(parser *))
{
    size_t start = tok(p)->start;
    og_qmcond *l = sub(p);
    while (l && is_word(p, word)) {
        p->pos++;
        og_qmcond *c = new_mcond(p, k, start);
        if (!c || !enter(p)) return NULL;
        c->a = l;
        c->b = sub(p);
        leave(p);
        if (!c->b) return NULL;
        c->span.end = prev_end(p);
        l = c;
    }
    return l;
}

static og_qmcond *parse_mwhere_and(parser *p) { return parse_mwhere_bin(p, "and", OG_QMC_AND, parse_mwhere_leaf); }
static og_qmcond *parse_mwhere_or(parser *p) { return parse_mwhere_bin(p, "or", OG_QMC_OR, parse_mwhere_and); }

static int parse_where(parser *p, og_qmutation *m)
{
    if (!expect_word(p, "where", "'where'")) return 0;
    og_qmcond *c = parse_mwhere_or(p);
    if (!c || failed(p)) return 0;
    if (c->kind == OG_QMC_CMP && c->op <= OG_QOP_GE) { /* the plain `prop op value` */
        m->where = c->leaf;
        m->where_op = c->op;
        return 1;
    }
    m->cond = c;
    return 1;
}

static int parse_mutation(parser *p, og_qmutation *m)
{
    size_t start = tok(p)->start;
    memset(m, 0, sizeof *m);
    m->type_index = -1;
    if (is_word(p, "insert")) m->kind = OG_QM_INSERT;
    else if (is_word(p, "update")) m->kind = OG_QM_UPDATE;
    else m->kind = OG_QM_DELETE;
    p->pos++;
    /* `insert strict T {...}`: a strict insert (an existing key is refused, docs/reference.md);
     * `strict` cannot be a type name (those start upper case) */
    if (m->kind == OG_QM_INSERT && is_word(p, "strict")) {
        m->strict = 1;
        p->pos++;
    }
    if (!is_kind(p, OG_TOK_TYPENAME)) return expect_fail(p, "type name");
    m->type_name = tok_str(p, tok(p));
    m->type_span = (og_qspan){tok(p)->start, tok(p)->end};
    p->pos++;
    int ok;
    if (m->kind == OG_QM_INSERT) {
        ok = parse_assigns(p, m);
    } else if (m->kind == OG_QM_UPDATE) {
        ok = expect_word(p, "set", "'set'") && parse_assigns(p, m) && parse_where(p, m);
    } else {
        ok = parse_where(p, m);
    }
    m->span = (og_qspan){start, prev_end(p)};
    return ok;
}

static int is_mutation_word(parser *p)
{
    return is_word(p, "insert") || is_word(p, "update") || is_word(p, "delete");
}

/* ---- declarations --------------------------------------------------------------------------- */

static const struct {
    const char *name;
    og_type_id id;
} base_types[] = {
    {"String", OG_T_STRING}, {"Blob", OG_T_BLOB},     {"Bool", OG_T_BOOL},
    {"I32", OG_T_I32},       {"I64", OG_T_I64},       {"U32", OG_T_U32},
    {"U64", OG_T_U64},       {"F32", OG_T_F32},       {"F64", OG_T_F64},
    {"DateTime", OG_T_DATE64}, {"Date", OG_T_DATE32},
};

static int base_type(const og_token *t, og_type_id *id)
{
    if (t->kind != OG_TOK_TYPENAME) return 0;
    for (size_t i = 0; i < sizeof base_types / sizeof base_types[0]; i++)
        if (og_tok_is(t, base_types[i].name)) {
            *id = base_types[i].id;
            return 1;
        }
    return 0;
}

static int parse_param(parser *p, og_qparam *pa)
{
    const og_token *v = tok(p);
    if (v->kind != OG_TOK_VAR) return expect_fail(p, "parameter");
    pa->name = tok_str(p, v);
    pa->span.start = v->start;
    p->pos++;
    if (!expect_kind(p, OG_TOK_COLON, "':'")) return 0;
    pa->type.node_type = -1;
    og_type_id id;
    const og_token *t = tok(p);
    if (accept(p, OG_TOK_LBRACKET)) {
        if (!base_type(tok(p), &id)) return expect_fail(p, "list item type");
        if (id == OG_T_BLOB)
            return hard_error(p, tok(p)->start, tok(p)->end, "[Blob] is not a supported parameter type");
        p->pos++;
        if (!expect_kind(p, OG_TOK_RBRACKET, "']'")) return 0;
        pa->type.t.id = OG_T_LIST;
        pa->type.t.elem = id;
    } else if (t->kind == OG_TOK_TYPENAME && og_tok_is(t, "Vector")) {
        p->pos++;
        if (!expect_kind(p, OG_TOK_LPAREN, "'('")) return 0;
        const og_token *d = tok(p);
        if (!expect_kind(p, OG_TOK_INT, "dimension")) return 0;
        if (d->overflow || d->u < 1 || d->u > OG_QUERY_MAX_VECTOR_DIM)
            return hard_error(p, d->start, d->end,
                              "Vector dimension must be between 1 and %u", OG_QUERY_MAX_VECTOR_DIM);
        if (!expect_kind(p, OG_TOK_RPAREN, "')'")) return 0;
        pa->type.t.id = OG_T_VECTOR;
        pa->type.t.dim = (uint32_t)d->u;
    } else if (base_type(t, &id)) {
        p->pos++;
        pa->type.t.id = id;
    } else if (t->kind == OG_TOK_TYPENAME) {
        return hard_error(p, t->start, t->end, "unknown parameter type `%.*s` for `$%s`",
                          (int)t->text_len, t->text, pa->name);
    } else {
        return expect_fail(p, "parameter type");
    }
    if (accept(p, OG_TOK_QUESTION)) pa->type.nullable = 1;
    pa->span.end = prev_end(p);
    return 1;
}

/* @mcp(expose: true|false, tool_name: "name"): how a stored query is presented to agents
 * (docs/mcp.md).  Metadata only: the checker and the engine ignore it. */
static int parse_mcp_annotation(parser *p, og_query *q)
{
    const og_token *at = tok(p);
    if (q->mcp_seen)
        return hard_error(p, at->start, peek(p, 1)->end, "query `%s` cannot include duplicate @mcp annotations", q->name);
    q->mcp_seen = 1;
    p->pos += 2;
    if (!expect_kind(p, OG_TOK_LPAREN, "'('")) return 0;
    while (!is_kind(p, OG_TOK_RPAREN)) {
        const og_token *k = tok(p);
        if (!is_kind(p, OG_TOK_IDENT) || !(og_tok_is(k, "expose") || og_tok_is(k, "tool_name")))
            return hard_error(p, k->start, k->end, "unsupported @mcp argument: expected `expose` or `tool_name`");
        int expose = og_tok_is(k, "expose");
        p->pos++;
        if (!expect_kind(p, OG_TOK_COLON, "':'")) return 0;
        const og_token *v = tok(p);
        if (expose) {
            if (!(v->kind == OG_TOK_IDENT && (og_tok_is(v, "true") || og_tok_is(v, "false"))))
                return hard_error(p, v->start, v->end, "@mcp expose must be true or false");
            q->mcp_hidden = og_tok_is(v, "false");
            p->pos++;
        } else {
            if (!expect_kind(p, OG_TOK_STRING, "string")) return 0;
            q->mcp_tool_name = og_qarena_strndup(p->arena, v->str, v->str_len);
            if (!q->mcp_tool_name) return p->nomem = 1, 0;
        }
        if (!accept(p, OG_TOK_COMMA)) break;
    }
    return expect_kind(p, OG_TOK_RPAREN, "')'");
}

static int parse_query_decl(parser *p, og_query *q)
{
    size_t start = tok(p)->start;
    p->nclauses = 0;
    p->pos++; /* query */
    if (!is_kind(p, OG_TOK_IDENT)) return expect_fail(p, "query name");
    q->name = tok_str(p, tok(p));
    q->name_span = (og_qspan){tok(p)->start, tok(p)->end};
    p->pos++;
    if (!expect_kind(p, OG_TOK_LPAREN, "'('")) return 0;
    size_t cap = 0;
    if (!is_kind(p, OG_TOK_RPAREN)) {
        if (!is_kind(p, OG_TOK_VAR)) expect_fail(p, "')'");
        do {
            og_qparam *pa = PUSH(p, q->params, q->nparams, cap);
            if (!pa || !parse_param(p, pa)) return 0;
        } while (accept(p, OG_TOK_COMMA));
    }
    if (!expect_kind(p, OG_TOK_RPAREN, "',' or ')'")) return 0;
    while (is_kind(p, OG_TOK_AT)) {
        const og_token *at = tok(p), *w = peek(p, 1);
        int desc = w->kind == OG_TOK_IDENT && og_tok_is(w, "description");
        int instr = w->kind == OG_TOK_IDENT && og_tok_is(w, "instruction");
        if (w->kind == OG_TOK_IDENT && og_tok_is(w, "mcp")) {
            if (!parse_mcp_annotation(p, q)) return 0;
            continue;
        }
        if (!desc && !instr)
            return hard_error(p, at->start, w->end, "unsupported query annotation: @%.*s",
                              (int)w->text_len, w->text);
        p->pos += 2;
        if (!expect_kind(p, OG_TOK_LPAREN, "'('")) return 0;
        const og_token *s = tok(p);
        if (!expect_kind(p, OG_TOK_STRING, "string")) return 0;
        if (!expect_kind(p, OG_TOK_RPAREN, "')'")) return 0;
        const char **slot = desc ? &q->description : &q->instruction;
        if (*slot)
            return hard_error(p, at->start, prev_end(p),
                              "query `%s` cannot include duplicate @%s annotations", q->name,
                              desc ? "description" : "instruction");
        *slot = og_qarena_strndup(p->arena, s->str, s->str_len);
        if (!*slot) return p->nomem = 1, 0;
    }
    if (!expect_kind(p, OG_TOK_LBRACE, "'{'")) return 0;
    if (is_word(p, "match")) {
        if (!parse_read_body(p, q)) return 0;
    } else if (is_mutation_word(p)) {
        q->is_mutation = 1;
        cap = 0;
        do {
            og_qmutation *m = PUSH(p, q->mutations, q->nmutations, cap);
            if (!m || !parse_mutation(p, m)) return 0;
        } while (is_mutation_word(p));
        expect_fail(p, "'insert', 'update' or 'delete'");
    } else {
        expect_fail(p, "'match'");
        expect_fail(p, "'insert', 'update' or 'delete'");
        return 0;
    }
    if (!expect_kind(p, OG_TOK_RBRACE, "'}'")) return 0;
    q->span = (og_qspan){start, prev_end(p)};
    return 1;
}

/* A type name where a traversal wanted its edge (`$o Owns $p`, `$a <Knows> $b`,
 * `$a Knows{1,2} $b`): edge words start lowercase and match the schema's edge
 * case-insensitively, so the hint is the traversal spelling of that word (suggest.h), which
 * names the same edge.  The parser has no catalog: an edge that does not exist is then the
 * checker's T4, with its own suggestion.  "" when the failure is anything else. */
static void edge_case_hint(parser *p, const og_token *t, char *buf, size_t cap)
{
    buf[0] = 0;
    int wanted = 0;
    for (size_t i = 0; i < p->nexpect; i++) wanted |= !strcmp(p->expect[i], "edge name");
    size_t at = (size_t)(t - p->toks->v);
    og_tok_kind next = at + 1 < p->toks->len ? p->toks->v[at + 1].kind : OG_TOK_EOF;
    if (!wanted || t->kind != OG_TOK_TYPENAME || t->text_len > 64 ||
        (next != OG_TOK_VAR && next != OG_TOK_LBRACE && next != OG_TOK_GT))
        return;
    char name[65], word[65];
    memcpy(name, t->text, t->text_len);
    name[t->text_len] = 0;
    og_suggest_edge_word(name, word, sizeof word);
    snprintf(buf, cap,
             ": an edge name in a traversal starts with a lowercase letter (edges match case-insensitively); "
             "did you mean `%s`?", word);
}

static og_status report(parser *p, og_diag *err)
{
    og_diag local;
    og_diag *d = err ? err : &local;
    memset(&local, 0, sizeof local);
    og_status st;
    if (p->nomem) {
        st = OG_ERR_NOMEM;
        if (err) memset(err, 0, sizeof *err), err->code = OG_ERR_NOMEM;
        return st;
    }
    if (p->hard) {
        st = og_diag_set(d, OG_ERR_PARSE, p->src, p->hard_start, p->hard_end, NULL, "%s",
                         p->hard_msg);
    } else {
        const og_token *t = &p->toks->v[p->far < p->toks->len ? p->far : p->toks->len - 1];
        char found[64], exp[256];
        og_tok_describe(t, found, sizeof found);
        exp[0] = 0;
        for (size_t i = 0; i < p->nexpect; i++) {
            size_t l = strlen(exp);
            snprintf(exp + l, sizeof exp - l, "%s%s",
                     i == 0 ? "" : (i + 1 == p->nexpect ? " or " : ", "), p->expect[i]);
        }
        char hint[160];
        edge_case_hint(p, t, hint, sizeof hint);
        st = og_diag_set(d, OG_ERR_PARSE, p->src, t->start, t->end, NULL,
                         "expected %s, found %s%s", p->nexpect ? exp : "input", found, hint);
    }
    if (d == &local) og_diag_free(&local);
    return st;
}

/* Settings lines at the head of a file (the reference's `set NAME = VALUE;`, `reset NAME;`,
 * `reset all;`), each name and value checked against compiler/settings.h.  `show` is refused:
 * OmniGraph-C answers no settings rows. */
static int parse_settings(parser *p, og_query_file *f)
{
    size_t cap = 0;
    char msg[512];
    while (is_word(p, "set") || is_word(p, "reset") || is_word(p, "show")) {
        const og_token *kw = tok(p);
        if (is_word(p, "show"))
            return hard_error(p, kw->start, kw->end,
                              "`show` is not supported; docs/query-language.md lists the session settings");
        int reset = is_word(p, "reset");
        p->pos++;
        const og_token *nt = tok(p);
        if (nt->kind != OG_TOK_IDENT) return expect_fail(p, "setting name");
        p->pos++;
        og_qsetting *s = PUSH(p, f->settings, f->nsettings, cap);
        if (!s) return 0;
        s->name = tok_str(p, nt);
        s->value = NULL;
        s->span.start = kw->start;
        if (reset) {
            if (!og_tok_is(nt, "all") && !og_setting_check(nt->text, nt->text_len, NULL, 0, 0, 0, msg, sizeof msg))
                return hard_error(p, nt->start, nt->end, "%s", msg);
        } else {
            if (!expect_kind(p, OG_TOK_EQ, "'='")) return 0;
            const og_token *vt = tok(p);
            if (vt->kind != OG_TOK_IDENT && vt->kind != OG_TOK_INT && vt->kind != OG_TOK_STRING)
                return expect_fail(p, "setting value");
            p->pos++;
            int str = vt->kind == OG_TOK_STRING;
            const char *v = str ? vt->str : vt->text;
            size_t vlen = str ? vt->str_len : vt->text_len;
            if (!og_setting_check(nt->text, nt->text_len, v, vlen, str, vt->kind == OG_TOK_INT, msg, sizeof msg)) {
                int bad_name = !og_setting_check(nt->text, nt->text_len, NULL, 0, 0, 0, msg, sizeof msg);
                return hard_error(p, bad_name ? nt->start : vt->start, bad_name ? nt->end : vt->end, "%s", msg);
            }
            s->value = og_qarena_strndup(p->arena, v, vlen);
            if (!s->value) {
                p->nomem = 1;
                return 0;
            }
        }
        if (!expect_kind(p, OG_TOK_SEMI, "';'")) return 0;
        s->span.end = prev_end(p);
    }
    if (f->nsettings && is_kind(p, OG_TOK_EOF))
        return hard_error(p, f->settings[0].span.start, f->settings[0].span.end,
                          "a file of only settings lines carries no statement");
    return 1;
}

og_status og_query_parse(og_query_file **out, const og_source *src, og_diag *err)
{
    *out = NULL;
    og_tokens toks = {0};
    og_status st = og_lex(&toks, src, err);
    if (st != OG_OK) return st;

    og_qarena arena = {0};
    og_query_file *f = og_qarena_alloc(&arena, sizeof *f);
    if (!f) {
        og_tokens_free(&toks);
        return OG_ERR_NOMEM;
    }
    parser p = {.toks = &toks, .src = src, .arena = &arena};
    size_t cap = 0;
    int ok = parse_settings(&p, f);
    while (ok && !is_kind(&p, OG_TOK_EOF)) {
        if (!is_word(&p, "query")) {
            expect_fail(&p, "'query'");
            ok = 0;
            break;
        }
        og_query *q = PUSH_LIMIT(&p, f->queries, f->nqueries, cap, SIZE_MAX / sizeof(og_query));
        if (!q) {
            ok = 0;
            break;
        }
        memset(q, 0, sizeof *q);
        if (!parse_query_decl(&p, q) || failed(&p)) {
            ok = 0;
            break;
        }
    }
    if (!ok || failed(&p)) {
        st = report(&p, err);
        og_tokens_free(&toks);
        og_qarena_free(&arena);
        return st;
    }
    og_tokens_free(&toks);
    f->arena = arena;
    *out = f;
    return OG_OK;
}
