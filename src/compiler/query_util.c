/*
 * query_util.c — small shared pieces of the .gq front end: the AST arena, type and operator
 * names, and the date / datetime literal parsers (also used by the engine to bind Date and
 * DateTime parameters, spec §5).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/query_ast.h"

/* ---- arena ------------------------------------------------------------------------------- */

struct og_qarena_chunk {
    og_qarena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

#define OG_QARENA_CHUNK 16384

void *og_qarena_alloc(og_qarena *a, size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    if (n == 0) n = 16;
    og_qarena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > OG_QARENA_CHUNK ? n : OG_QARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *og_qarena_strndup(og_qarena *a, const char *s, size_t n)
{
    char *p = og_qarena_alloc(a, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void og_qarena_free(og_qarena *a)
{
    og_qarena_chunk *c = a->head;
    while (c) {
        og_qarena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
}

void og_query_file_free(og_query_file *f)
{
    if (!f) return;
    og_qarena arena = f->arena; /* f itself lives in the arena */
    og_qarena_free(&arena);
}

const og_query *og_query_find(const og_query_file *f, const char *name)
{
    if (!f || !name) return NULL;
    for (size_t i = 0; i < f->nqueries; i++)
        if (strcmp(f->queries[i].name, name) == 0) return &f->queries[i];
    return NULL;
}

long og_query_find_index(const og_query_file *f, const char *name)
{
    const og_query *q = og_query_find(f, name);
    return q ? (long)(q - f->queries) : -1;
}

/* ---- structural equality ------------------------------------------------------------- */

static int lit_equal(const og_qlit *a, const og_qlit *b)
{
    if (a->kind != b->kind || a->i != b->i || a->b != b->b || a->nitems != b->nitems) return 0;
    if (a->kind == OG_QLIT_FLOAT && a->f != b->f) return 0;
    if (a->kind == OG_QLIT_STRING && (a->slen != b->slen || memcmp(a->s, b->s, a->slen))) return 0;
    for (size_t i = 0; i < a->nitems; i++)
        if (!lit_equal(&a->items[i], &b->items[i])) return 0;
    return 1;
}

int og_qexpr_equal(const og_qexpr *a, const og_qexpr *b)
{
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return 0;
    if ((a->var || b->var) && (!a->var || !b->var || strcmp(a->var, b->var))) return 0;
    if ((a->name || b->name) && (!a->name || !b->name || strcmp(a->name, b->name))) return 0;
    if (a->kind == OG_QE_LIT && !lit_equal(&a->lit, &b->lit)) return 0;
    if (a->kind == OG_QE_AGG && (a->agg != b->agg || a->distinct != b->distinct)) return 0;
    if ((a->kind == OG_QE_CMP || a->kind == OG_QE_ARITH) && a->op != b->op) return 0;
    if (a->kind == OG_QE_ISNULL && a->negated != b->negated) return 0;
    return og_qexpr_equal(a->a, b->a) && og_qexpr_equal(a->b, b->b) && og_qexpr_equal(a->c, b->c);
}

/* ---- names ------------------------------------------------------------------------------- */

const char *og_qtype_name(const og_qtype *t, char *buf, size_t cap)
{
    if (!cap) return buf;
    const char *q = t->nullable ? "?" : "";
    if (t->node_type >= 0)
        snprintf(buf, cap, t->is_object ? "node object" : "node id");
    else if (t->t.id == OG_T_LIST)
        snprintf(buf, cap, "[%s]%s", og_scalar_type_name(t->t.elem), q);
    else if (t->t.id == OG_T_VECTOR)
        snprintf(buf, cap, "Vector(%u)%s", (unsigned)t->t.dim, q);
    else
        snprintf(buf, cap, "%s%s%s", t->is_enum ? "enum " : "", og_scalar_type_name(t->t.id), q);
    return buf;
}

const char *og_query_column_name(const og_qprojection *p, char *buf, size_t cap)
{
    const og_qexpr *e = p->expr;
    if (p->alias) {
        snprintf(buf, cap, "%s", p->alias);
        return buf;
    }
    while (e->kind == OG_QE_AGG) e = e->a; /* an aggregate is named after its argument */
    switch (e->kind) {
    case OG_QE_PROP: snprintf(buf, cap, "%s.%s", e->var, e->name); break;
    case OG_QE_VAR: snprintf(buf, cap, "%s", e->var); break;
    case OG_QE_LIT: snprintf(buf, cap, "literal"); break;
    case OG_QE_NOW: snprintf(buf, cap, "now"); break;
    case OG_QE_ALIAS: snprintf(buf, cap, "%s", e->name); break;
    /* a projected score is named as the reference names it: the ranked variable's `_distance`
     * (nearest) or `_score` (bm25) */
    case OG_QE_NEAREST: snprintf(buf, cap, "%s._distance", e->var); break;
    case OG_QE_SEARCH: snprintf(buf, cap, "search"); break;
    case OG_QE_FUZZY: snprintf(buf, cap, "fuzzy"); break;
    case OG_QE_MATCH_TEXT: snprintf(buf, cap, "match_text"); break;
    case OG_QE_BM25:
        if (e->a && e->a->kind == OG_QE_PROP) snprintf(buf, cap, "%s._score", e->a->var);
        else snprintf(buf, cap, "bm25");
        break;
    case OG_QE_RRF: snprintf(buf, cap, "rrf"); break;
    case OG_QE_FUNC: snprintf(buf, cap, "%s", e->name); break;
    case OG_QE_ARITH: snprintf(buf, cap, "expression"); break;
    default: snprintf(buf, cap, "condition"); break;
    }
    return buf;
}

static const char *const fn_names[OG_QF__COUNT] = {"lower", "upper", "trim", "length", "substring",
                                                   "concat", "coalesce", "abs", "round", "floor",
                                                   "ceil", "year", "month", "day", "size",
                                                   "nodes"};

const char *og_qfn_name(og_qfn f) { return (unsigned)f < OG_QF__COUNT ? fn_names[f] : "?"; }

int og_qfn_find(const char *name)
{
    for (int i = 0; name && i < OG_QF__COUNT; i++)
        if (strcmp(fn_names[i], name) == 0) return i;
    return -1;
}

const char *og_qagg_name(og_qagg a)
{
    static const char *const n[] = {"count", "sum", "avg", "min", "max", "collect"};
    return (unsigned)a < 6 ? n[a] : "?";
}

const char *og_qop_name(og_qop op)
{
    static const char *const n[] = {"=", "!=", "<", "<=", ">", ">=", "contains", "starts_with", "in"};
    return (unsigned)op < 9 ? n[op] : "?";
}

/* ---- dates ------------------------------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, size_t n, size_t at, size_t count, unsigned *out)
{
    if (at + count > n) return -1;
    unsigned v = 0;
    for (size_t i = 0; i < count; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (unsigned)(c - '0');
    }
    *out = v;
    return 0;
}

static int leap(unsigned y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Parses YYYY-MM-DD at s[0..]; returns days via *days; -1 when malformed. */
static int parse_ymd(const char *s, size_t n, int64_t *days)
{
    unsigned y, m, d;
    if (digits(s, n, 0, 4, &y) || n < 10 || s[4] != '-' || digits(s, n, 5, 2, &m) ||
        s[7] != '-' || digits(s, n, 8, 2, &d))
        return -1;
    static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1) return -1;
    unsigned lim = mdays[m - 1] + (m == 2 && leap(y));
    if (d > lim) return -1;
    *days = days_from_civil(y, m, d);
    return 0;
}

int og_query_parse_date(const char *s, size_t n, int32_t *days)
{
    int64_t d;
    if (n != 10 || parse_ymd(s, n, &d)) return -1;
    *days = (int32_t)d;
    return 0;
}

int og_query_parse_datetime(const char *s, size_t n, int64_t *ms)
{
    int64_t d;
    if (parse_ymd(s, n, &d)) return -1;
    if (n == 10) {
        *ms = d * 86400000;
        return 0;
    }
    if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return -1;
    unsigned hh, mm, ss = 0, frac_ms = 0;
    size_t p = 11;
    if (digits(s, n, p, 2, &hh) || p + 2 >= n || s[p + 2] != ':' || digits(s, n, p + 3, 2, &mm))
        return -1;
    p += 5;
    if (p < n && s[p] == ':') {
        if (digits(s, n, p + 1, 2, &ss)) return -1;
        p += 3;
        if (p < n && s[p] == '.') {
            p++;
            size_t nd = 0;
            while (p < n && s[p] >= '0' && s[p] <= '9') {
                if (nd < 3) frac_ms = frac_ms * 10 + (unsigned)(s[p] - '0');
                nd++;
                p++;
            }
            if (nd == 0) return -1;
            for (size_t k = nd; k < 3; k++) frac_ms *= 10;
        }
    }
    if (hh > 23 || mm > 59 || ss > 60) return -1;
    int64_t offset_min = 0;
    if (p < n) {
        if ((s[p] == 'Z' || s[p] == 'z') && p + 1 == n) {
            p++;
        } else if (s[p] == '+' || s[p] == '-') {
            unsigned oh, om = 0;
            int sign = s[p] == '-' ? -1 : 1;
            if (digits(s, n, p + 1, 2, &oh)) return -1;
            p += 3;
            if (p < n) {
                if (s[p] == ':') p++;
                if (digits(s, n, p, 2, &om)) return -1;
                p += 2;
            }
            if (oh > 23 || om > 59) return -1;
            offset_min = sign * (int64_t)(oh * 60 + om);
        } else {
            return -1;
        }
    }
    if (p != n) return -1;
    int64_t secs = d * 86400 + (int64_t)hh * 3600 + (int64_t)mm * 60 + ss - offset_min * 60;
    *ms = secs * 1000 + frac_ms;
    return 0;
}
