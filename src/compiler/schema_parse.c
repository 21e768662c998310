/*
 * schema_parse.c — recursive-descent parser of the .pg schema language (reference-language.md
 * §1.1) over the shared token stream (lexer.h).  It produces a *draft* catalog: declarations
 * with their properties, raw annotations and body constraints, in source order.  Semantic
 * checks (interfaces, endpoints, constraint placement, identities) live in catalog.c.
 *
 * Every loop consumes a token or stops, and every error path returns, so the parser cannot
 * loop or read past the end-of-input token on any input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/schema_internal.h"
#include "util/error.h"

typedef struct parser {
    const og_source *src;
    og_tokens toks;
    size_t i;
    og_diags *diags;
    og_catalog *cat;
    size_t cap_if, cap_node, cap_edge;
} parser;

static const og_token *peek(const parser *p) { return &p->toks.v[p->i]; }
static const og_token *peek_at(const parser *p, size_t k)
{
    size_t j = p->i + k;
    if (j >= p->toks.len) j = p->toks.len - 1;
    return &p->toks.v[j];
}
static const og_token *advance(parser *p)
{
    const og_token *t = &p->toks.v[p->i];
    if (t->kind != OG_TOK_EOF) p->i++;
    return t;
}

static og_status perr_at(parser *p, const og_token *t, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static og_status perr_at(parser *p, const og_token *t, const char *hint, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!hint) hint = "the grammar is in docs/schema-language.md (declarations: interface, node, edge)";
    og_status st = og_diags_add(p->diags, OG_ERR_PARSE, p->src, t->start, t->end, hint,
                                "parse error: %s", msg);
    return st == OG_ERR_NOMEM ? st : OG_ERR_PARSE;
}

/* "expected X, found Y" at the current token. */
static og_status expected(parser *p, const char *what, const char *hint)
{
    char d[96];
    return perr_at(p, peek(p), hint, "expected %s, found %s", what, og_tok_describe(peek(p), d, sizeof d));
}

static og_status expect(parser *p, og_tok_kind k, const char *hint)
{
    if (peek(p)->kind != k) return expected(p, og_tok_kind_name(k), hint);
    advance(p);
    return OG_OK;
}

static char *tok_dup(const og_token *t) { return og_sndup(t->text, t->text_len); }

/* ---- annotations ------------------------------------------------------------------------ */

static int is_constraint_name(const og_token *t)
{
    return og_tok_is(t, "key") || og_tok_is(t, "unique") || og_tok_is(t, "index") ||
           og_tok_is(t, "range") || og_tok_is(t, "check");
}

/* At '@': 1 when this is a body constraint (`@key(` ...), which ends an annotation list. */
static int at_body_constraint(const parser *p)
{
    return peek(p)->kind == OG_TOK_AT && peek_at(p, 1)->kind == OG_TOK_IDENT &&
           is_constraint_name(peek_at(p, 1)) && peek_at(p, 2)->kind == OG_TOK_LPAREN;
}

static og_status parse_literal(parser *p, og_annot_arg *arg, int allow_ident)
{
    const og_token *t = peek(p);
    switch (t->kind) {
    case OG_TOK_STRING: arg->kind = OG_LIT_STRING; arg->text = og_sndup(t->str, t->str_len); break;
    case OG_TOK_INT: arg->kind = OG_LIT_INT; arg->text = tok_dup(t); break;
    case OG_TOK_FLOAT: arg->kind = OG_LIT_FLOAT; arg->text = tok_dup(t); break;
    case OG_TOK_IDENT:
        if (og_tok_is(t, "true") || og_tok_is(t, "false")) arg->kind = OG_LIT_BOOL;
        else if (allow_ident) arg->kind = OG_LIT_IDENT;
        else return expected(p, "a literal (string, number, true or false)", "keyword arguments take a literal: model = \"name\"");
        arg->text = tok_dup(t);
        break;
    default:
        return expected(p, allow_ident ? "a literal or identifier" : "a literal (string, number, true or false)",
                        "annotation arguments are a string, number, true/false or identifier: @name(\"value\")");
    }
    if (!arg->text) return og_err(OG_ERR_NOMEM, "out of memory");
    advance(p);
    return OG_OK;
}

/* annotation = "@" ident [ "(" aarg { "," ident "=" literal } ")" ] */
static og_status parse_annotation(parser *p, og_annotation *a)
{
    a->off = peek(p)->start;
    advance(p); /* '@' */
    const og_token *name = peek(p);
    if (name->kind != OG_TOK_IDENT)
        return expected(p, "an annotation name after '@'", "annotation names are lower-case identifiers, e.g. @description(\"...\")");
    if (og_tok_is(name, "card") && peek_at(p, 1)->kind != OG_TOK_LPAREN)
        return perr_at(p, name, "write @card(min..max), e.g. @card(0..1) or @card(1..)", "@card needs bounds");
    if (og_tok_is(name, "card"))
        return perr_at(p, name, "write `edge E: A -> B @card(0..1)` with @card first",
                       "@card is only allowed right after an edge's endpoints");
    a->name = tok_dup(name);
    if (!a->name) return og_err(OG_ERR_NOMEM, "out of memory");
    advance(p);
    if (peek(p)->kind != OG_TOK_LPAREN) return OG_OK;
    a->has_parens = 1;
    advance(p);
    size_t cap = 0;
    OG_TRY(og_grow((void **)&a->args, &cap, 0, sizeof *a->args));
    if (peek(p)->kind == OG_TOK_IDENT && peek_at(p, 1)->kind == OG_TOK_EQ)
        return perr_at(p, peek(p), "write @name(value, key = literal)",
                       "expected a positional argument before keyword arguments");
    OG_TRY(parse_literal(p, &a->args[0], 1));
    a->nargs = 1;
    while (peek(p)->kind == OG_TOK_COMMA) {
        advance(p);
        if (peek(p)->kind != OG_TOK_IDENT || peek_at(p, 1)->kind != OG_TOK_EQ)
            return expected(p, "a keyword argument `name = literal`",
                            "only the first annotation argument is positional");
        OG_TRY(og_grow((void **)&a->args, &cap, a->nargs, sizeof *a->args));
        og_annot_arg *arg = &a->args[a->nargs++];
        arg->key = tok_dup(peek(p));
        if (!arg->key) return og_err(OG_ERR_NOMEM, "out of memory");
        advance(p);
        advance(p); /* '=' */
        OG_TRY(parse_literal(p, arg, 0));
    }
    return expect(p, OG_TOK_RPAREN, NULL);
}

static og_status parse_annotations(parser *p, og_annotation **arr, size_t *n)
{
    size_t cap = *n;
    while (peek(p)->kind == OG_TOK_AT && !at_body_constraint(p)) {
        OG_TRY(og_grow((void **)arr, &cap, *n, sizeof **arr));
        og_annotation *a = &(*arr)[(*n)++];
        OG_TRY(parse_annotation(p, a));
    }
    return OG_OK;
}

/* ---- types ------------------------------------------------------------------------------ */

static int base_type(const og_token *t, og_type *out)
{
    static const struct { const char *name; og_type_id id; } base[] = {
        {"String", OG_T_STRING}, {"Blob", OG_T_BLOB},   {"Bool", OG_T_BOOL},
        {"I32", OG_T_I32},       {"I64", OG_T_I64},     {"U32", OG_T_U32},
        {"U64", OG_T_U64},       {"F32", OG_T_F32},     {"F64", OG_T_F64},
        {"DateTime", OG_T_DATE64}, {"Date", OG_T_DATE32},
    };
    if (t->kind != OG_TOK_TYPENAME) return 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (og_tok_is(t, base[i].name)) {
            out->id = base[i].id;
            out->elem = OG_T_NULL;
            out->dim = 0;
            return 1;
        }
    return 0;
}

#define OG_BASE_TYPES_HINT "types: String Bool I32 I64 U32 U64 F32 F64 Date DateTime Blob Vector(N) [T] enum(..), with ? for nullable"

static int enum_piece(const og_token *t)
{
    return t->kind == OG_TOK_IDENT || t->kind == OG_TOK_TYPENAME || t->kind == OG_TOK_INT ||
           t->kind == OG_TOK_MINUS;
}

static og_status parse_enum(parser *p, og_cat_prop *prop)
{
    advance(p); /* enum */
    OG_TRY(expect(p, OG_TOK_LPAREN, "write enum(a, b, c)"));
    size_t cap = 0;
    for (;;) {
        const og_token *t = peek(p);
        if (!enum_piece(t)) {
            if (t->kind == OG_TOK_RPAREN && prop->n_enum == 0)
                return perr_at(p, t, "list the allowed values: enum(a, b)", "enum type must include at least one value");
            if (t->kind == OG_TOK_STRING)
                return perr_at(p, t, "enum values are unquoted: enum(a, b-c, d_1)", "expected an enum value, found a string");
            return expected(p, "an enum value ([A-Za-z0-9_-]+)", "enum values are unquoted: enum(a, b-c, d_1)");
        }
        size_t start = t->start, end = t->end;
        advance(p);
        while (enum_piece(peek(p)) && peek(p)->start == end) {
            end = peek(p)->end;
            advance(p);
        }
        OG_TRY(og_grow((void **)&prop->enum_values, &cap, prop->n_enum, sizeof *prop->enum_values));
        prop->enum_values[prop->n_enum] = og_sndup(p->src->text + start, end - start);
        if (!prop->enum_values[prop->n_enum]) return og_err(OG_ERR_NOMEM, "out of memory");
        prop->n_enum++;
        if (peek(p)->kind == OG_TOK_COMMA) {
            advance(p);
            continue;
        }
        return expect(p, OG_TOK_RPAREN, "separate enum values with ','");
    }
}

/* type_ref = core_type [ "?" ] */
static og_status parse_type(parser *p, og_cat_prop *prop)
{
    const og_token *t = peek(p);
    og_type ty = {OG_T_NULL, OG_T_NULL, 0};
    if (t->kind == OG_TOK_LBRACKET) {
        advance(p);
        const og_token *e = peek(p);
        og_type et;
        if (!base_type(e, &et)) {
            if (og_tok_is(e, "Vector") || og_tok_is(e, "enum"))
                return perr_at(p, e, "list elements are base scalars: [String], [I64], ...",
                               "list elements must be base scalar types, found %s",
                               og_tok_is(e, "Vector") ? "Vector" : "enum");
            return expected(p, "a base scalar type inside [ ]", OG_BASE_TYPES_HINT);
        }
        advance(p);
        OG_TRY(expect(p, OG_TOK_RBRACKET, "lists hold one base scalar type: [String]"));
        ty.id = OG_T_LIST;
        ty.elem = et.id;
    } else if (og_tok_is(t, "enum") && peek_at(p, 1)->kind == OG_TOK_LPAREN) {
        OG_TRY(parse_enum(p, prop));
        ty.id = OG_T_STRING;
        prop->is_enum = 1;
    } else if (og_tok_is(t, "Vector")) {
        advance(p);
        OG_TRY(expect(p, OG_TOK_LPAREN, "write Vector(N), e.g. Vector(768)"));
        const og_token *d = peek(p);
        if (d->kind != OG_TOK_INT) return expected(p, "a dimension (unsigned integer)", "write Vector(N), e.g. Vector(768)");
        if (d->overflow || d->u > UINT32_MAX)
            return perr_at(p, d, "the dimension must be between 1 and 2147483647", "invalid Vector dimension: %.*s",
                           (int)(d->text_len > 40 ? 40 : d->text_len), d->text);
        if (d->u == 0)
            return perr_at(p, d, "the dimension must be between 1 and 2147483647", "Vector dimension must be greater than zero");
        if (d->u > 2147483647u)
            return perr_at(p, d, "the dimension must be between 1 and 2147483647",
                           "Vector dimension %llu exceeds maximum supported 2147483647", (unsigned long long)d->u);
        ty.id = OG_T_VECTOR;
        ty.dim = (uint32_t)d->u;
        advance(p);
        OG_TRY(expect(p, OG_TOK_RPAREN, NULL));
    } else if (base_type(t, &ty)) {
        advance(p);
    } else if (t->kind == OG_TOK_TYPENAME) {
        return perr_at(p, t, OG_BASE_TYPES_HINT, "unknown type '%.*s'", (int)(t->text_len > 60 ? 60 : t->text_len), t->text);
    } else {
        return expected(p, "a type", OG_BASE_TYPES_HINT);
    }
    prop->type = ty;
    if (peek(p)->kind == OG_TOK_QUESTION) {
        prop->nullable = 1;
        advance(p);
    }
    return OG_OK;
}

/* prop = ident ":" type_ref { annotation } */
static og_status parse_prop(parser *p, og_cat_type *t, size_t *cap)
{
    OG_TRY(og_grow((void **)&t->props, cap, t->nprops, sizeof *t->props));
    og_cat_prop *prop = &t->props[t->nprops++];
    const og_token *name = peek(p);
    prop->name = tok_dup(name);
    if (!prop->name) return og_err(OG_ERR_NOMEM, "out of memory");
    prop->off = name->start;
    prop->line = name->line;
    prop->col = name->col;
    advance(p);
    OG_TRY(expect(p, OG_TOK_COLON, "declare a property as `name: Type`"));
    OG_TRY(parse_type(p, prop));
    return parse_annotations(p, &prop->annots, &prop->n_annots);
}

/* ---- body constraints ------------------------------------------------------------------- */

static og_status parse_snum(parser *p, og_range_bound *b)
{
    size_t start = peek(p)->start;
    int neg = 0;
    if (peek(p)->kind == OG_TOK_MINUS && (peek_at(p, 1)->kind == OG_TOK_INT || peek_at(p, 1)->kind == OG_TOK_FLOAT) &&
        peek_at(p, 1)->start == peek(p)->end) {
        neg = 1;
        advance(p);
    }
    const og_token *t = peek(p);
    if (t->kind != OG_TOK_INT && t->kind != OG_TOK_FLOAT) return expected(p, "a number", "write bounds as lo..hi, lo.. or ..hi");
    b->present = 1;
    b->is_float = t->kind == OG_TOK_FLOAT;
    b->f = neg ? -t->f : t->f;
    if (!b->is_float) {
        /* an integer that does not fit i64 is kept as a float (like the reference's fallback) */
        if (t->overflow || t->u > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
            b->is_float = 1;
        } else if (neg) {
            b->i = t->u == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)t->u;
        } else {
            b->i = (int64_t)t->u;
        }
    }
    b->text = og_sndup(p->src->text + start, t->end - start);
    if (!b->text) return og_err(OG_ERR_NOMEM, "out of memory");
    advance(p);
    return OG_OK;
}

static int at_snum(const parser *p)
{
    og_tok_kind k = peek(p)->kind;
    return k == OG_TOK_INT || k == OG_TOK_FLOAT ||
           (k == OG_TOK_MINUS && (peek_at(p, 1)->kind == OG_TOK_INT || peek_at(p, 1)->kind == OG_TOK_FLOAT));
}

/* One constraint argument.  Names go to c->cols; a range to c->min/max; a string to
 * c->pattern.  kind_seen tells the caller what it was (0 ident, 1 range, 2 string, 3 other). */
static og_status parse_carg(parser *p, og_cat_constraint *c, size_t *ccap, int *kind_seen, size_t *argoff)
{
    const og_token *t = peek(p);
    *argoff = t->start;
    if (t->kind == OG_TOK_DOTDOT || (at_snum(p) && (peek_at(p, 1)->kind == OG_TOK_DOTDOT ||
                                                    peek_at(p, 2)->kind == OG_TOK_DOTDOT))) {
        /* range_bound = SNUM ".." [SNUM] | ".." SNUM */
        if (c->min.present || c->max.present)
            return perr_at(p, t, "write one range: @range(prop, lo..hi)", "@range takes a single bounds argument");
        if (t->kind != OG_TOK_DOTDOT) OG_TRY(parse_snum(p, &c->min));
        if (peek(p)->kind != OG_TOK_DOTDOT) return expected(p, "'..'", NULL);
        int had_min = c->min.present;
        advance(p);
        if (at_snum(p)) OG_TRY(parse_snum(p, &c->max));
        else if (!had_min) return expected(p, "an upper bound after '..'", "write bounds as lo..hi, lo.. or ..hi");
        *kind_seen = 1;
        return OG_OK;
    }
    if (t->kind == OG_TOK_AT && (og_tok_is(peek_at(p, 1), "src") || og_tok_is(peek_at(p, 1), "dst"))) {
        /* @src / @dst: an edge's endpoint columns, as in @key(@src, @dst) (also written src, dst
         * when the edge has no property of that name; the checker resolves and normalizes) */
        OG_TRY(og_grow((void **)&c->cols, ccap, c->ncols, sizeof *c->cols));
        c->cols[c->ncols] = og_sdup(og_tok_is(peek_at(p, 1), "src") ? "@src" : "@dst");
        if (!c->cols[c->ncols]) return og_err(OG_ERR_NOMEM, "out of memory");
        c->ncols++;
        advance(p);
        advance(p);
        *kind_seen = 0;
        return OG_OK;
    }
    if (t->kind == OG_TOK_IDENT && !og_tok_is(t, "true") && !og_tok_is(t, "false")) {
        OG_TRY(og_grow((void **)&c->cols, ccap, c->ncols, sizeof *c->cols));
        c->cols[c->ncols] = tok_dup(t);
        if (!c->cols[c->ncols]) return og_err(OG_ERR_NOMEM, "out of memory");
        c->ncols++;
        advance(p);
        *kind_seen = 0;
        return OG_OK;
    }
    if (t->kind == OG_TOK_STRING) {
        if (!c->pattern) {
            c->pattern = og_sndup(t->str, t->str_len);
            if (!c->pattern) return og_err(OG_ERR_NOMEM, "out of memory");
        }
        advance(p);
        *kind_seen = 2;
        return OG_OK;
    }
    if (t->kind == OG_TOK_INT || t->kind == OG_TOK_FLOAT || og_tok_is(t, "true") || og_tok_is(t, "false")) {
        advance(p);
        *kind_seen = 3;
        return OG_OK;
    }
    return expected(p, "a constraint argument (property name, literal or range)", NULL);
}

/* body_constraint = "@" name "(" carg { "," carg } ")" */
static og_status parse_body_constraint(parser *p, og_cat_type *t, size_t *cap)
{
    const og_token *at = peek(p);
    advance(p);
    const og_token *nm = peek(p);
    OG_TRY(og_grow((void **)&t->cons, cap, t->ncons, sizeof *t->cons));
    og_cat_constraint *c = &t->cons[t->ncons++];
    c->off = at->start;
    c->line = at->line;
    c->col = at->col;
    if (og_tok_is(nm, "key")) c->kind = OG_CONS_KEY;
    else if (og_tok_is(nm, "unique")) c->kind = OG_CONS_UNIQUE;
    else if (og_tok_is(nm, "index")) c->kind = OG_CONS_INDEX;
    else if (og_tok_is(nm, "range")) c->kind = OG_CONS_RANGE;
    else c->kind = OG_CONS_CHECK;
    const char *cname = og_cons_kind_name(c->kind);
    advance(p);
    advance(p); /* '(' */
    size_t ccap = 0;
    int kinds[64];
    size_t offs[64];
    size_t nargs = 0;
    for (;;) {
        int k = 0;
        size_t off = 0;
        OG_TRY(parse_carg(p, c, &ccap, &k, &off));
        if (nargs == 64)
            return perr_at(p, peek(p), "a constraint names at most 64 columns", "too many arguments in @%s constraint", cname);
        kinds[nargs] = k;
        offs[nargs] = off;
        nargs++;
        if (peek(p)->kind == OG_TOK_COMMA) {
            advance(p);
            continue;
        }
        break;
    }
    const og_token *close = peek(p);
    OG_TRY(expect(p, OG_TOK_RPAREN, NULL));
    og_token fake = *at;
    switch (c->kind) {
    case OG_CONS_KEY:
    case OG_CONS_UNIQUE:
    case OG_CONS_INDEX:
        for (size_t i = 0; i < nargs && i < 64; i++)
            if (kinds[i] != 0) {
                fake.start = offs[i];
                fake.end = offs[i] + 1;
                return perr_at(p, &fake, "name properties: @unique(a, b)",
                               "expected property name in @%s constraint (it does not accept a value)", cname);
            }
        break;
    case OG_CONS_RANGE:
        if (nargs < 2 || c->ncols < 1 || (nargs < 64 && (kinds[0] != 0 || kinds[1] != 1)) || nargs > 2) {
            fake.start = close->start;
            if (nargs >= 1 && kinds[0] != 0) fake.start = offs[0];
            else if (nargs >= 2 && nargs <= 64) fake.start = offs[1];
            fake.end = fake.start + 1;
            return perr_at(p, &fake, "write @range(prop, lo..hi) with lo.., ..hi or lo..hi",
                           nargs < 2 ? "@range requires property name and bounds: @range(prop, min..max)"
                                     : (kinds[0] != 0 ? "expected property name in @range constraint"
                                                      : "expected range bounds (min..max) in @range constraint"));
        }
        break;
    case OG_CONS_CHECK:
        if (nargs < 2 || nargs > 2 || kinds[0] != 0 || kinds[1] != 2) {
            fake.start = nargs >= 1 && kinds[0] != 0 ? offs[0] : (nargs >= 2 ? offs[1] : close->start);
            fake.end = fake.start + 1;
            return perr_at(p, &fake, "write @check(prop, \"regex\")",
                           nargs < 2 ? "@check requires property name and pattern: @check(prop, \"regex\")"
                                     : (kinds[0] != 0 ? "expected property name in @check constraint"
                                                      : "expected string argument in @check constraint"));
        }
        break;
    }
    return OG_OK;
}

/* "{" { prop | body_constraint } "}" (interfaces: props only) */
static og_status parse_body(parser *p, og_cat_type *t, int allow_constraints)
{
    OG_TRY(expect(p, OG_TOK_LBRACE, NULL));
    size_t pcap = 0, ccap = t->ncons; /* an edge's header @key may already be there */
    for (;;) {
        const og_token *tk = peek(p);
        if (tk->kind == OG_TOK_RBRACE) {
            advance(p);
            return OG_OK;
        }
        if (tk->kind == OG_TOK_IDENT) {
            OG_TRY(parse_prop(p, t, &pcap));
        } else if (tk->kind == OG_TOK_AT && at_body_constraint(p)) {
            if (!allow_constraints)
                return perr_at(p, tk, "put constraints on the nodes that implement the interface",
                               "interfaces take no body constraints (interface %s)", t->name);
            OG_TRY(parse_body_constraint(p, t, &ccap));
        } else if (tk->kind == OG_TOK_AT) {
            return perr_at(p, tk, "annotations follow a property's type (`name: String @index`); body constraints are @key/@unique/@index/@range/@check(...)",
                           "unexpected annotation in a declaration body");
        } else if (tk->kind == OG_TOK_TYPENAME) {
            return perr_at(p, tk, "property names start with a lower-case letter or '_'",
                           "expected a property name, found %.*s", (int)(tk->text_len > 60 ? 60 : tk->text_len), tk->text);
        } else {
            return expected(p, "a property, a body constraint or '}'",
                            "a body holds `name: Type` properties and @key/@unique/@index/@range/@check(...), closed by '}'");
        }
    }
}

/* ---- declarations ----------------------------------------------------------------------- */

static og_status new_type(parser *p, og_type_kind kind, og_cat_type **out)
{
    og_cat_type **arr;
    size_t *n, *cap;
    switch (kind) {
    case OG_KIND_INTERFACE: arr = &p->cat->interfaces; n = &p->cat->ninterfaces; cap = &p->cap_if; break;
    case OG_KIND_NODE: arr = &p->cat->nodes; n = &p->cat->nnodes; cap = &p->cap_node; break;
    default: arr = &p->cat->edges; n = &p->cat->nedges; cap = &p->cap_edge; break;
    }
    OG_TRY(og_grow((void **)arr, cap, *n, sizeof **arr));
    og_cat_type *t = &(*arr)[(*n)++];
    t->kind = kind;
    t->card_max = OG_CARD_UNBOUNDED;
    const og_token *name = peek(p);
    if (name->kind != OG_TOK_TYPENAME)
        return expected(p, "a type name", "type names start with an upper-case letter: node Person { ... }");
    t->name = tok_dup(name);
    if (!t->name) return og_err(OG_ERR_NOMEM, "out of memory");
    t->off = name->start;
    t->line = name->line;
    t->col = name->col;
    advance(p);
    *out = t;
    return OG_OK;
}

static og_status parse_card(parser *p, og_cat_type *t)
{
    advance(p); /* @ */
    advance(p); /* card */
    OG_TRY(expect(p, OG_TOK_LPAREN, "write @card(min..max), e.g. @card(0..1) or @card(1..)"));
    const og_token *mn = peek(p);
    if (mn->kind != OG_TOK_INT) return expected(p, "an unsigned integer minimum", "write @card(min..max), e.g. @card(0..1) or @card(1..)");
    if (mn->overflow || mn->u > UINT32_MAX)
        return perr_at(p, mn, "cardinality bounds are 32-bit unsigned integers", "invalid cardinality min: %.*s",
                       (int)(mn->text_len > 40 ? 40 : mn->text_len), mn->text);
    t->card_min = (uint32_t)mn->u;
    advance(p);
    OG_TRY(expect(p, OG_TOK_DOTDOT, "write @card(min..max), e.g. @card(0..1) or @card(1..)"));
    const og_token *mx = peek(p);
    if (mx->kind == OG_TOK_INT) {
        if (mx->overflow || mx->u >= UINT32_MAX)
            return perr_at(p, mx, "cardinality bounds are 32-bit unsigned integers", "invalid cardinality max: %.*s",
                           (int)(mx->text_len > 40 ? 40 : mx->text_len), mx->text);
        t->card_max = (uint32_t)mx->u;
        if (t->card_min > t->card_max)
            return perr_at(p, mn, "the minimum must not exceed the maximum", "cardinality min (%u) exceeds max (%u)",
                           t->card_min, t->card_max);
        advance(p);
    }
    t->card_written = 1;
    return expect(p, OG_TOK_RPAREN, NULL);
}

static og_status parse_interface(parser *p)
{
    advance(p);
    og_cat_type *t;
    OG_TRY(new_type(p, OG_KIND_INTERFACE, &t));
    if (peek(p)->kind == OG_TOK_AT)
        return perr_at(p, peek(p), "annotate the interface's properties instead",
                       "interfaces take no annotations (interface %s)", t->name);
    return parse_body(p, t, 0);
}

static og_status parse_node(parser *p)
{
    advance(p);
    og_cat_type *t;
    OG_TRY(new_type(p, OG_KIND_NODE, &t));
    OG_TRY(parse_annotations(p, &t->annots, &t->n_annots));
    if (og_tok_is(peek(p), "implements")) {
        advance(p);
        size_t cap = 0;
        for (;;) {
            const og_token *nm = peek(p);
            if (nm->kind != OG_TOK_TYPENAME) return expected(p, "an interface name", "write `node X implements A, B { ... }`");
            OG_TRY(og_grow((void **)&t->implements, &cap, t->nimplements, sizeof *t->implements));
            t->implements[t->nimplements] = tok_dup(nm);
            if (!t->implements[t->nimplements]) return og_err(OG_ERR_NOMEM, "out of memory");
            t->nimplements++;
            advance(p);
            if (peek(p)->kind != OG_TOK_COMMA) break;
            advance(p);
        }
    }
    if (peek(p)->kind == OG_TOK_AT && at_body_constraint(p))
        return perr_at(p, peek(p), "move it inside the node body, or onto the property",
                       "@%.*s is only supported on node properties or as body constraint (node %s)",
                       (int)peek_at(p, 1)->text_len, peek_at(p, 1)->text, t->name);
    return parse_body(p, t, 1);
}

static og_status parse_edge(parser *p)
{
    advance(p);
    og_cat_type *t;
    OG_TRY(new_type(p, OG_KIND_EDGE, &t));
    OG_TRY(expect(p, OG_TOK_COLON, "write `edge Name: From -> To`"));
    const og_token *from = peek(p);
    if (from->kind != OG_TOK_TYPENAME) return expected(p, "the source node type", "write `edge Name: From -> To`");
    t->from = tok_dup(from);
    advance(p);
    OG_TRY(expect(p, OG_TOK_ARROW, "write `edge Name: From -> To`"));
    const og_token *to = peek(p);
    if (to->kind != OG_TOK_TYPENAME) return expected(p, "the target node type", "write `edge Name: From -> To`");
    t->to = tok_dup(to);
    advance(p);
    if (!t->from || !t->to) return og_err(OG_ERR_NOMEM, "out of memory");
    if (peek(p)->kind == OG_TOK_AT && og_tok_is(peek_at(p, 1), "card") && peek_at(p, 2)->kind == OG_TOK_LPAREN)
        OG_TRY(parse_card(p, t));
    OG_TRY(parse_annotations(p, &t->annots, &t->n_annots));
    /* `edge E: A -> B @key(@src, @dst) { ... }`: the key may also be written on the header */
    size_t hcap = t->ncons;
    while (peek(p)->kind == OG_TOK_AT && og_tok_is(peek_at(p, 1), "key") && peek_at(p, 2)->kind == OG_TOK_LPAREN) {
        OG_TRY(parse_body_constraint(p, t, &hcap));
        OG_TRY(parse_annotations(p, &t->annots, &t->n_annots));
    }
    if (peek(p)->kind == OG_TOK_AT && at_body_constraint(p))
        return perr_at(p, peek(p), "put it inside the edge body: edge E: A -> B { @unique(src, dst) }",
                       "@%.*s is not supported as an edge-level annotation (edge %s)",
                       (int)peek_at(p, 1)->text_len, peek_at(p, 1)->text, t->name);
    if (peek(p)->kind == OG_TOK_LBRACE) return parse_body(p, t, 1);
    return OG_OK;
}

og_status og_schema_parse(og_catalog *cat, const og_source *src, og_diags *diags)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.src = src;
    p.diags = diags;
    p.cat = cat;
    og_diag lexerr;
    og_status st = og_lex(&p.toks, src, &lexerr);
    if (st != OG_OK) {
        if (st == OG_ERR_PARSE) {
            /* prefix like the parser's own errors */
            char *m = lexerr.message;
            size_t n = strlen(m) + 16;
            char *nm = malloc(n);
            if (nm) {
                snprintf(nm, n, "parse error: %s", m);
                free(m);
                lexerr.message = nm;
            }
            og_status pst = og_diags_push(diags, &lexerr);
            if (pst != OG_OK) return pst;
        }
        return st;
    }
    while (st == OG_OK && peek(&p)->kind != OG_TOK_EOF) {
        const og_token *t = peek(&p);
        if (og_tok_is(t, "interface")) st = parse_interface(&p);
        else if (og_tok_is(t, "node")) st = parse_node(&p);
        else if (og_tok_is(t, "edge")) st = parse_edge(&p);
        else st = expected(&p, "'interface', 'node' or 'edge'", "a schema is a list of interface, node and edge declarations");
    }
    og_tokens_free(&p.toks);
    return st;
}
