/*
 * csv_load.c — CSV rows as load records.  See csv_load.h.
 *
 * Why records and not a loader of its own: staging, constraints, merge/append semantics,
 * streaming flushes and the commit are the NDJSON load's (load.c, plan.c); converting a row
 * into the same `data` token object keeps one set of rules for both formats.  The cell is
 * converted here by the declared type (so a bad cell is reported at its line:column), into a
 * token that jsonval.c then accepts as it would the same value in NDJSON.
 *
 * A header is resolved into a per-type column map once for a file of one type, and lazily
 * per type met for a file with a :LABEL / :TYPE column (a handful of types at most).
 */
#include "load/csv_load.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/plan.h"
#include "load/batch_ring.h"
#include "util/csv.h"
#include "util/error.h"
#include "util/jsontok.h"

enum { COL_PROP, COL_ID, COL_START, COL_END, COL_LABEL, COL_TYPE, COL_IGNORE };

typedef struct csv_col {
    int role;
    char *name;      /* the part before ':' ("" when absent) */
    char *group;     /* ID/START_ID/END_ID (Group), or NULL */
    char *suffix;    /* a type suffix, or NULL */
    uint32_t col;    /* header column, for messages */
} csv_col;

/* What column c means for type t: a property index, the record id, an endpoint, or nothing. */
enum { MAP_NONE = -1, MAP_RECORD_ID = -2, MAP_FROM = -3, MAP_TO = -4 };

typedef struct csv_map {
    const og_cat_type *t;
    int is_edge;
    int *target;     /* per column */
} csv_map;

/* The column maps one converting thread has resolved ([0] is the fixed type's when the file
 * names one; a file with :LABEL / :TYPE adds one per type as rows name them). */
typedef struct csv_conv {
    csv_map *maps;
    size_t nmaps;
} csv_conv;

struct csv_async;
static void async_free(og_csv_source *s);
static void conv_free(csv_conv *cv)
{
    for (size_t i = 0; i < cv->nmaps; i++) free(cv->maps[i].target);
    free(cv->maps);
    cv->maps = NULL;
    cv->nmaps = 0;
}

struct og_csv_source {
    FILE *f;
    og_csv_reader *rd;
    const og_catalog *cat;
    char *path;
    uint32_t file_index;
    csv_col *cols;
    size_t ncols;
    int type_col;            /* index of the :LABEL / :TYPE column, or -1 */
    csv_conv conv;           /* the loading thread's (a sequential read) */
    const og_cat_type *fixed;
    int fixed_edge;
    char delim;
    og_jdoc doc;
    struct csv_async *async; /* NULL = sequential (og_csv_source_start) */
};

static og_status errat(const og_csv_source *s, og_status code, uint64_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static og_status errat(const og_csv_source *s, og_status code, uint64_t line, uint32_t col, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return og_err(code, "%s:%llu:%u: %s", s->path, (unsigned long long)line, col, what);
}

void og_csv_source_free(og_csv_source *s)
{
    if (!s) return;
    async_free(s);
    for (size_t i = 0; i < s->ncols; i++) {
        free(s->cols[i].name);
        free(s->cols[i].group);
        free(s->cols[i].suffix);
    }
    free(s->cols);
    conv_free(&s->conv);
    og_jdoc_free(&s->doc);
    og_csv_reader_free(s->rd);
    if (s->f) fclose(s->f);
    free(s->path);
    free(s);
}


/* ---- the header --------------------------------------------------------------------------- */

/* "name:ROLE(Group)" / "name:type" / "name" -> c.  The role words are neo4j-admin's. */
static og_status parse_header_cell(og_csv_source *s, const og_csv_field *fl, csv_col *c)
{
    memset(c, 0, sizeof *c);
    c->col = fl->col;
    const char *h = fl->s, *colon = strrchr(h, ':');
    size_t nlen = colon ? (size_t)(colon - h) : strlen(h);
    c->name = strndup(h, nlen);
    if (!c->name) return og_err(OG_ERR_NOMEM, "out of memory");
    if (!colon) {
        if (!nlen) return errat(s, OG_ERR_PARSE, fl->line, fl->col, "an empty column name in the header");
        return OG_OK;
    }
    const char *suf = colon + 1, *paren = strchr(suf, '(');
    size_t slen = paren ? (size_t)(paren - suf) : strlen(suf);
    if (paren) {
        size_t plen = strlen(paren);
        if (plen < 3 || paren[plen - 1] != ')')
            return errat(s, OG_ERR_PARSE, fl->line, fl->col, "column '%s': write the id group as ':ID(Group)'", h);
        c->group = strndup(paren + 1, plen - 2);
        if (!c->group) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    static const struct { const char *w; int role; } roles[] = {
        {"ID", COL_ID}, {"START_ID", COL_START}, {"END_ID", COL_END}, {"LABEL", COL_LABEL}, {"TYPE", COL_TYPE},
        {"IGNORE", COL_IGNORE},
    };
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (strlen(roles[i].w) == slen && !strncasecmp(suf, roles[i].w, slen)) {
            c->role = roles[i].role;
            if (c->group && c->role != COL_ID && c->role != COL_START && c->role != COL_END)
                return errat(s, OG_ERR_PARSE, fl->line, fl->col, "column '%s': only :ID, :START_ID and :END_ID take a group", h);
            return OG_OK;
        }
    if (c->group) return errat(s, OG_ERR_PARSE, fl->line, fl->col, "column '%s': only :ID, :START_ID and :END_ID take a group", h);
    if (!nlen) return errat(s, OG_ERR_PARSE, fl->line, fl->col, "column '%s' has a type but no name", h);
    c->role = COL_PROP;
    c->suffix = strdup(suf);
    return c->suffix ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

/* The schema spelling of p's type without the trailing '?'. */
static const char *schema_spelling(const og_cat_prop *p, char *buf, size_t cap)
{
    og_cat_prop_type_name(p, buf, cap);
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '?') buf[n - 1] = '\0';
    return buf;
}

/* 1 when scalar type id suits neo4j type word w[0..n). -1 when w is not a neo4j word. */
static int neo4j_scalar_ok(const char *w, size_t n, og_type_id id, int is_enum)
{
#define W(x) (n == sizeof(x) - 1 && !strncasecmp(w, x, n))
    int is_int = id == OG_T_I32 || id == OG_T_I64 || id == OG_T_U32 || id == OG_T_U64;
    if (W("int") || W("long") || W("short") || W("byte")) return is_int;
    if (W("float") || W("double")) return id == OG_T_F32 || id == OG_T_F64;
    if (W("boolean")) return id == OG_T_BOOL;
    if (W("string") || W("char")) return id == OG_T_STRING || (is_enum && id == OG_T_STRING);
    if (W("date")) return id == OG_T_DATE32;
    if (W("datetime") || W("localdatetime")) return id == OG_T_DATE64;
    return -1;
#undef W
}

static og_status check_suffix(const og_csv_source *s, const csv_col *c, const og_cat_type *t, const og_cat_prop *p)
{
    char sp[256];
    schema_spelling(p, sp, sizeof sp);
    if (!strcmp(c->suffix, sp)) return OG_OK;
    const char *w = c->suffix;
    size_t n = strlen(w);
    int list = n > 2 && !strcmp(w + n - 2, "[]");
    if (list) n -= 2;
    int ok;
    if (list)
        ok = p->type.id == OG_T_LIST ? neo4j_scalar_ok(w, n, p->type.elem, 0) : p->type.id == OG_T_VECTOR
                                                                                   ? neo4j_scalar_ok(w, n, OG_T_F32, 0)
                                                                                   : (neo4j_scalar_ok(w, n, OG_T_NULL, 0) < 0 ? -1 : 0);
    else
        ok = neo4j_scalar_ok(w, n, p->type.id, p->is_enum);
    if (ok == 1) return OG_OK;
    if (ok < 0)
        return errat(s, OG_ERR_INVALID, 1, c->col,
                     "column '%s:%s': unknown column type '%s' (neo4j's int, long, short, byte, float, double, boolean, "
                     "string, char, date, datetime, localdatetime, with [] for a list, or the schema's spelling '%s')",
                     c->name, c->suffix, c->suffix, sp);
    return errat(s, OG_ERR_INVALID, 1, c->col, "column '%s:%s' says %s, but %s.%s is %s in the schema", c->name, c->suffix,
                 c->suffix, t->name, p->name, sp);
}

/* A short list of t's property names for messages. */
static const char *prop_list(const og_cat_type *t, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->nprops && o + 4 < cap; i++) {
        int k = snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", t->props[i].name);
        if (k < 0 || (size_t)k >= cap - o) {
            snprintf(buf + (cap > 5 ? cap - 5 : 0), 5, "...");
            break;
        }
        o += (size_t)k;
    }
    if (!t->nprops) snprintf(buf, cap, "none");
    return buf;
}

/* Resolves the columns for type t into m.  `mixed`: the file mixes types, so a property of
 * another type is not an error here (a non-empty cell of it is, per row). */
static og_status map_build(const og_csv_source *s, const og_cat_type *t, int is_edge, int mixed, csv_map *m)
{
    m->t = t;
    m->is_edge = is_edge;
    m->target = malloc((s->ncols ? s->ncols : 1) * sizeof *m->target);
    if (!m->target) return og_err(OG_ERR_NOMEM, "out of memory");
    int have_from = 0, have_to = 0;
    for (size_t i = 0; i < s->ncols; i++) {
        const csv_col *c = &s->cols[i];
        m->target[i] = MAP_NONE;
        switch (c->role) {
        case COL_IGNORE: case COL_LABEL: case COL_TYPE: break;
        case COL_ID:
            if (is_edge) { /* an edge's own id (export writes it) */
                if (c->group && strcmp(c->group, t->name))
                    return errat(s, OG_ERR_INVALID, 1, c->col, "column ':ID(%s)' is loaded as %s: the id group must be the edge type",
                                 c->group, t->name);
                m->target[i] = MAP_RECORD_ID;
                break;
            }
            if (c->group && strcmp(c->group, t->name))
                return errat(s, OG_ERR_INVALID, 1, c->col, "column ':ID(%s)' is loaded as %s: the id group must be the node type",
                             c->group, t->name);
            if (t->nkey > 1)
                return errat(s, OG_ERR_INVALID, 1, c->col, "%s has a composite @key: give its properties as columns instead of :ID",
                             t->name);
            m->target[i] = t->nkey ? (int)t->key_props[0] : MAP_RECORD_ID;
            break;
        case COL_START: case COL_END: {
            if (!is_edge) {
                if (mixed) break;
                return errat(s, OG_ERR_INVALID, 1, c->col, "%s is a node type: :START_ID / :END_ID columns belong to edge files", t->name);
            }
            const char *want = c->role == COL_START ? t->from : t->to;
            if (c->group && strcmp(c->group, want))
                return errat(s, OG_ERR_INVALID, 1, c->col, "column ':%s(%s)': edge %s goes %s -> %s, so the group must be %s",
                             c->role == COL_START ? "START_ID" : "END_ID", c->group, t->name, t->from, t->to, want);
            m->target[i] = c->role == COL_START ? MAP_FROM : MAP_TO;
            break;
        }
        case COL_PROP: {
            size_t pi;
            const og_cat_prop *p = og_cat_type_prop(t, c->name, &pi);
            if (!p && is_edge && !c->suffix && (!strcmp(c->name, "from") || !strcmp(c->name, "to"))) {
                m->target[i] = !strcmp(c->name, "from") ? MAP_FROM : MAP_TO;
                break;
            }
            if (!p && !c->suffix && !strcmp(c->name, "id")) {
                m->target[i] = MAP_RECORD_ID;
                break;
            }
            if (!p) {
                if (mixed) break;
                char pl[300];
                return errat(s, OG_ERR_INVALID, 1, c->col, "%s has no property '%s' (properties: %s%s)", t->name, c->name,
                             prop_list(t, pl, sizeof pl), is_edge ? "; endpoints: from, to" : "");
            }
            if (c->suffix) OG_TRY(check_suffix(s, c, t, p));
            m->target[i] = (int)pi;
            break;
        }
        }
        if (m->target[i] == MAP_FROM) have_from++;
        if (m->target[i] == MAP_TO) have_to++;
        for (size_t j = 0; j < i && m->target[i] != MAP_NONE; j++)
            if (m->target[j] == m->target[i])
                return errat(s, OG_ERR_INVALID, 1, c->col, "columns %u and %u both fill the same %s of %s", s->cols[j].col, c->col,
                             m->target[i] >= 0 ? "property" : m->target[i] == MAP_RECORD_ID ? "id" : "endpoint", t->name);
    }
    if (is_edge && (!have_from || !have_to))
        return errat(s, OG_ERR_INVALID, 1, 1, "edge %s needs both endpoint columns: from and to (or :START_ID and :END_ID)",
                     t->name);
    return OG_OK;
}

static og_status resolve_type(const og_csv_source *s, const char *name, int want_edge, const og_cat_type **t, int *is_edge)
{
    const og_cat_type *n = want_edge != 1 ? og_catalog_node(s->cat, name) : NULL;
    const og_cat_type *e = want_edge != 0 && !n ? og_catalog_edge_ci(s->cat, name, strlen(name)) : NULL;
    *t = n ? n : e;
    *is_edge = !n;
    return *t ? OG_OK : OG_ERR_NOT_FOUND;
}

static og_status conv_init(const og_csv_source *s, csv_conv *cv);

og_status og_csv_source_open(og_csv_source **out, const og_catalog *cat, const char *type, const char *path,
                             char delim, uint32_t file_index)
{
    *out = NULL;
    og_csv_source *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
    s->cat = cat;
    s->file_index = file_index;
    s->type_col = -1;
    s->delim = delim;
    og_jdoc_init(&s->doc);
    s->path = strdup(path);
    og_status st = s->path ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && !(s->f = fopen(path, "rb"))) st = og_err_errno(errno, "cannot open %s", path);
    if (st == OG_OK) st = og_csv_reader_new(&s->rd, s->f, path, delim);
    og_csv_field *hf = NULL;
    size_t hn = 0;
    if (st == OG_OK) {
        int k = og_csv_next(s->rd, &hf, &hn, &st);
        if (k == 0) st = og_err(OG_ERR_PARSE, "%s: the file is empty: a CSV file starts with a header row naming its columns", path);
    }
    if (st == OG_OK && !(s->cols = calloc(hn, sizeof *s->cols))) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == OG_OK && i < hn; i++) {
        st = parse_header_cell(s, &hf[i], &s->cols[i]);
        s->ncols = i + 1;
        if (st == OG_OK && (s->cols[i].role == COL_LABEL || s->cols[i].role == COL_TYPE)) {
            if (s->type_col >= 0)
                st = errat(s, OG_ERR_INVALID, 1, hf[i].col, "a second :LABEL / :TYPE column (the first is column %u)",
                           s->cols[s->type_col].col);
            s->type_col = (int)i;
        }
    }
    if (st == OG_OK && type) {
        int is_edge;
        if (resolve_type(s, type, -1, &s->fixed, &is_edge) != OG_OK)
            st = og_err(OG_ERR_INVALID, "%s: unknown node or edge type '%s'", path, type);
        s->fixed_edge = is_edge;
        if (st == OG_OK) st = conv_init(s, &s->conv);
    } else if (st == OG_OK && s->type_col < 0) {
        st = og_err(OG_ERR_INVALID, "%s: the file names no type: load it as TYPE=FILE, or give it a :LABEL (nodes) or :TYPE "
                                    "(edges) column",
                    path);
    }
    if (st) {
        og_csv_source_free(s);
        return st;
    }
    *out = s;
    return OG_OK;
}

/* ---- rows --------------------------------------------------------------------------------- */

static og_status push(og_jdoc *d, og_jkind kind, og_jtok **out)
{
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 64;
        og_jtok *t = realloc(d->tok, ncap * sizeof *t);
        if (!t) return og_err(OG_ERR_NOMEM, "out of memory");
        d->tok = t;
        d->cap = ncap;
    }
    og_jtok *t = &d->tok[d->n++];
    memset(t, 0, sizeof *t);
    t->kind = (uint8_t)kind;
    t->span = 1;
    *out = t;
    return OG_OK;
}

/* Strict decimal integer: -?[0-9]+, nothing else (no spaces, no '+'). */
static int parse_int(const char *s, int64_t *iv, uint64_t *uv, int *is_u)
{
    const char *p = s + (*s == '-');
    if (!*p) return 0;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return 0;
    errno = 0;
    char *end;
    if (*s == '-') {
        *iv = strtoll(s, &end, 10);
        *is_u = 0;
        return errno == 0 && !*end;
    }
    *uv = strtoull(s, &end, 10);
    if (errno || *end) return 0;
    *is_u = *uv > (uint64_t)INT64_MAX;
    *iv = (int64_t)*uv;
    return 1;
}

/* A JSON-number-like real: no spaces, hex, inf or nan. */
static int parse_real(const char *s, double *d)
{
    if (!*s) return 0;
    for (const char *q = s; *q; q++)
        if (!((*q >= '0' && *q <= '9') || *q == '-' || *q == '+' || *q == '.' || *q == 'e' || *q == 'E')) return 0;
    errno = 0;
    char *end;
    *d = strtod(s, &end);
    return !*end && errno != ERANGE && isfinite(*d);
}

/* Appends the token(s) of cell f for property p to doc. */
static og_status convert_cell(const og_csv_source *s, og_jdoc *doc, const og_cat_type *t, const og_cat_prop *p,
                              og_csv_field *f)
{
    og_jtok *tok;
    char tn[128];
    switch (p->type.id) {
    case OG_T_STRING: case OG_T_BLOB: case OG_T_DATE32: case OG_T_DATE64:
        OG_TRY(push(doc, OG_J_STRING, &tok));
        tok->v.s = f->s;
        tok->len = (uint32_t)f->len;
        return OG_OK;
    case OG_T_BOOL:
        if (!strcasecmp(f->s, "true") || !strcasecmp(f->s, "false")) {
            OG_TRY(push(doc, (f->s[0] | 0x20) == 't' ? OG_J_TRUE : OG_J_FALSE, &tok));
            return OG_OK;
        }
        return errat(s, OG_ERR_INVALID, f->line, f->col, "%s.%s: expected Bool, got \"%s\" (write true or false)", t->name,
                     p->name, f->s);
    case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: {
        int64_t iv = 0;
        uint64_t uv = 0;
        int is_u = 0;
        if (!parse_int(f->s, &iv, &uv, &is_u)) {
            double d;
            return errat(s, OG_ERR_INVALID, f->line, f->col, "%s.%s: expected %s, got \"%s\"%s", t->name, p->name,
                         schema_spelling(p, tn, sizeof tn), f->s,
                         parse_real(f->s, &d) ? " (a fraction or exponent: write an integer)" : " (not a decimal integer)");
        }
        OG_TRY(push(doc, is_u ? OG_J_UINT : OG_J_INT, &tok));
        if (is_u) tok->v.u = uv;
        else tok->v.i = iv;
        return OG_OK;
    }
    case OG_T_F32: case OG_T_F64: {
        double d;
        if (!parse_real(f->s, &d))
            return errat(s, OG_ERR_INVALID, f->line, f->col, "%s.%s: expected %s, got \"%s\" (a finite decimal number)", t->name,
                         p->name, schema_spelling(p, tn, sizeof tn), f->s);
        OG_TRY(push(doc, OG_J_REAL, &tok));
        tok->v.d = d;
        return OG_OK;
    }
    case OG_T_LIST: case OG_T_VECTOR: {
        char jmsg[200];
        size_t root, before = doc->n;
        og_status st = og_json_parse(doc, f->s, f->len, &root, jmsg, sizeof jmsg);
        if (st == OG_ERR_NOMEM) return og_err(OG_ERR_NOMEM, "out of memory");
        if (st != OG_OK || doc->tok[root].kind != OG_J_ARRAY) {
            doc->n = before;
            return errat(s, OG_ERR_INVALID, f->line, f->col, "%s.%s: expected %s as a JSON array in the cell (e.g. %s)%s%s",
                         t->name, p->name, schema_spelling(p, tn, sizeof tn),
                         p->type.id == OG_T_VECTOR || p->type.elem != OG_T_STRING ? "[1, 2]" : "[\"a\", \"b\"]",
                         st != OG_OK ? ": invalid JSON at " : "", st != OG_OK ? jmsg : "");
        }
        return OG_OK;
    }
    default: return errat(s, OG_ERR_INVALID, f->line, f->col, "%s.%s: a column of this type cannot be loaded from CSV", t->name, p->name);
    }
}

/* A converting thread's maps, starting with the fixed type's (checked when the file opened). */
static og_status conv_init(const og_csv_source *s, csv_conv *cv)
{
    if (!s->fixed) return OG_OK;
    if (!(cv->maps = calloc(1, sizeof *cv->maps))) return og_err(OG_ERR_NOMEM, "out of memory");
    cv->nmaps = 1;
    return map_build(s, s->fixed, s->fixed_edge, 0, &cv->maps[0]);
}

static og_status row_map(const og_csv_source *s, csv_conv *cv, og_csv_field *fs, const csv_map **out)
{
    if (s->type_col < 0) {
        *out = &cv->maps[0];
        return OG_OK;
    }
    og_csv_field *tf = &fs[s->type_col];
    int want_edge = s->cols[s->type_col].role == COL_TYPE;
    if (!tf->len)
        return errat(s, OG_ERR_INVALID, tf->line, tf->col, "the %s cell is empty", want_edge ? ":TYPE" : ":LABEL");
    if (s->fixed) {
        if (!strcmp(tf->s, s->fixed->name)) {
            *out = &cv->maps[0];
            return OG_OK;
        }
        return errat(s, OG_ERR_INVALID, tf->line, tf->col, "the row is a '%s', but the file is loaded as %s", tf->s, s->fixed->name);
    }
    for (size_t i = 0; i < cv->nmaps; i++)
        if (!strcmp(cv->maps[i].t->name, tf->s)) {
            *out = &cv->maps[i];
            return OG_OK;
        }
    const og_cat_type *t;
    int is_edge;
    if (resolve_type(s, tf->s, want_edge, &t, &is_edge) != OG_OK || strcmp(t->name, tf->s))
        return errat(s, OG_ERR_INVALID, tf->line, tf->col, "unknown %s type '%s'%s", want_edge ? "edge" : "node", tf->s,
                     strchr(tf->s, ';') ? " (a row has exactly one label)" : "");
    csv_map *m = realloc(cv->maps, (cv->nmaps + 1) * sizeof *m);
    if (!m) return og_err(OG_ERR_NOMEM, "out of memory");
    cv->maps = m;
    memset(&m[cv->nmaps], 0, sizeof *m);
    og_status st = map_build(s, t, is_edge, 1, &m[cv->nmaps]);
    cv->nmaps++; /* freed with the others even when it failed */
    OG_TRY(st);
    *out = &m[cv->nmaps - 1];
    return OG_OK;
}

/* Turns the n fields of the row starting at `line` into *rec, its `data` object appended to
 * doc at token index *root (rec->data points there until doc grows).  The record's strings
 * point into the fields' bytes. */
static og_status row_to_record(const og_csv_source *s, csv_conv *cv, og_jdoc *doc, og_csv_field *fs, size_t n,
                               uint64_t line, og_ndjson_record *rec, size_t *root)
{
    if (n != s->ncols)
        return errat(s, OG_ERR_PARSE, line, n > s->ncols ? fs[s->ncols].col : 1, "the row has %zu fields, the header %zu", n,
                     s->ncols);
    const csv_map *m = NULL;
    OG_TRY(row_map(s, cv, fs, &m));
    memset(rec, 0, sizeof *rec);
    rec->kind = m->is_edge ? OG_NDJSON_EDGE : OG_NDJSON_NODE;
    rec->line = og_plan_line_encode(s->file_index, line);
    rec->type = m->t->name;
    *root = doc->n;
    og_jtok *obj;
    OG_TRY(push(doc, OG_J_OBJECT, &obj));
    uint32_t members = 0;
    for (size_t i = 0; i < n; i++) {
        og_csv_field *f = &fs[i];
        int tg = m->target[i];
        if (tg == MAP_NONE) {
            if (s->type_col >= 0 && (int)i != s->type_col && f->len && s->cols[i].role != COL_IGNORE)
                return errat(s, OG_ERR_INVALID, f->line, f->col, "column '%s' is not part of %s, but the cell is not empty",
                             s->cols[i].name, m->t->name);
            continue;
        }
        if (tg < 0) { /* an id or an endpoint: a non-empty string */
            if (!f->len)
                return errat(s, OG_ERR_INVALID, f->line, f->col, "%s: the %s is empty", m->t->name,
                             tg == MAP_RECORD_ID ? "id" : tg == MAP_FROM ? "from endpoint" : "to endpoint");
            if (tg == MAP_RECORD_ID) rec->id = f->s;
            else if (tg == MAP_FROM) rec->from = f->s, rec->from_len = f->len;
            else rec->to = f->s, rec->to_len = f->len;
            continue;
        }
        const og_cat_prop *p = &m->t->props[tg];
        if (!f->len && !(f->quoted && p->type.id == OG_T_STRING)) continue; /* null */
        og_jtok *key;
        OG_TRY(push(doc, OG_J_STRING, &key));
        key->v.s = p->name;
        key->len = (uint32_t)strlen(p->name);
        OG_TRY(convert_cell(s, doc, m->t, p, f));
        members++;
    }
    doc->tok[*root].span = (uint32_t)(doc->n - *root);
    doc->tok[*root].len = members;
    rec->data = &doc->tok[*root];
    return OG_OK;
}

/* The sequential read: one record at a time on the caller's thread. */
static int next_sequential(og_csv_source *s, og_ndjson_record *rec, og_status *err)
{
    og_csv_field *fs;
    size_t n, root;
    int k = og_csv_next(s->rd, &fs, &n, err);
    if (k <= 0) return k;
    og_jdoc_reset(&s->doc);
    *err = row_to_record(s, &s->conv, &s->doc, fs, n, og_csv_record_line(s->rd), rec, &root);
    return *err ? -1 : 1;
}

/* ---- parsing on worker threads ------------------------------------------------------------ */
/*
 * load/batch_ring.h's scheme, as load/ndjson.c uses it: batch number k (the whole records of
 * about batch_bytes of input) is made by worker k % CSV_WORKERS in ring slot k % CSV_RING.
 * The workers take turns at reading: the worker whose turn it is reads the next block of the
 * file after the bytes the previous batch left over (a record cut by the block's end), keeps
 * the prefix of whole records (og_csv_split: up to the last line feed outside quotes) and
 * leaves the rest to the next batch, with the line number the next batch starts at.  Then it
 * parses and converts its records in parallel with the other worker (a memory reader that
 * starts at the batch's first line, so every position in a message is the file's), while the
 * loading thread takes the records batch by batch in file order.  A batch's fields are copied
 * into its own buffer (decoded bytes never outgrow the input they came from, so the buffer
 * is sized once and never moves), and its tokens into its own document.  A failure ends the
 * input: its batch carries the records before it, then the error, so the caller sees exactly
 * the records and the first error of a sequential read (tests/engine/test_csv_load.c runs
 * both ways).  A record longer than the limit allows is given whole to the reader at most
 * 3 × the limit + 64 bytes into it (decoded bytes and field ends are at least a third of the
 * input), which refuses it there as the sequential read does.
 */

#define CSV_WORKERS 2
#define CSV_RING 4 /* a multiple of CSV_WORKERS */
#define CSV_BATCH_BYTES ((size_t)64 << 10)

typedef struct csv_item {
    og_ndjson_record rec;   /* rec.data is fixed up when the batch's tokens stop moving */
    size_t data_tok;
    uint64_t bytes;         /* input bytes consumed through this record */
} csv_item;

typedef struct csv_batch {
    csv_item *items;
    size_t n, cap;
    char *raw;              /* whole records of the input */
    size_t raw_len, raw_cap;
    char *dec;              /* the records' decoded fields */
    size_t dec_len, dec_cap;
    uint64_t first_line;    /* of raw[0] */
    uint64_t base_bytes;    /* input offset of raw[0] */
    og_jdoc doc;
    int done;
    og_status err;
    char *errmsg;
} csv_batch;

typedef struct csv_worker {
    og_csv_reader *rd;      /* the memory reader of its batches */
    csv_conv conv;
} csv_worker;

struct csv_async {
    og_batch_ring *ring;    /* load/batch_ring.h: CSV_WORKERS threads over CSV_RING batches */
    csv_worker workers[CSV_WORKERS];
    csv_batch *batches[CSV_RING];
    size_t pos;             /* next item of the batch the caller holds */
    uint64_t consumed;
    /* the read state, used by the worker holding the read turn */
    char *carry;            /* the start of a record the last block cut */
    size_t carry_len, carry_cap;
    uint64_t next_line, next_bytes;
    int eof;
    size_t batch_bytes, max_raw;
};

void og_csv_source_set_max_record(og_csv_source *s, size_t max) { og_csv_reader_set_max_record(s->rd, max); }

uint64_t og_csv_source_bytes(const og_csv_source *s)
{
    return s->async ? s->async->consumed : og_csv_bytes_read(s->rd);
}

static void cbatch_clear(csv_batch *b)
{
    og_jdoc_reset(&b->doc);
    free(b->errmsg);
    b->errmsg = NULL;
    b->n = b->raw_len = b->dec_len = 0;
    b->done = 0;
    b->err = OG_OK;
}

static void cbatch_fail(csv_batch *b, og_status st)
{
    b->done = 1;
    if (b->err) return; /* the first failure wins */
    b->err = st;
    b->errmsg = strdup(og_error_message());
    if (!b->errmsg) b->err = OG_ERR_NOMEM;
}

static int grow(char **p, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < need) c *= 2;
    char *q = realloc(*p, c);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Fills b->raw with the next whole records (the worker holds the read turn). */
static void cbatch_read(og_csv_source *s, csv_batch *b)
{
    struct csv_async *a = s->async;
    if (grow(&b->raw, &b->raw_cap, a->carry_len + a->batch_bytes)) {
        cbatch_fail(b, og_err(OG_ERR_NOMEM, "out of memory"));
        return;
    }
    if (a->carry_len) memcpy(b->raw, a->carry, a->carry_len);
    b->raw_len = a->carry_len;
    a->carry_len = 0;
    size_t want = a->batch_bytes, split = 0;
    uint64_t lines = 0;
    for (;;) {
        if (!a->eof) {
            if (grow(&b->raw, &b->raw_cap, b->raw_len + want)) {
                cbatch_fail(b, og_err(OG_ERR_NOMEM, "out of memory"));
                return;
            }
            size_t got = fread(b->raw + b->raw_len, 1, want, s->f);
            b->raw_len += got;
            if (got < want) {
                if (ferror(s->f)) {
                    cbatch_fail(b, og_err_errno(errno ? errno : EIO, "%s: read failed", s->path));
                    return;
                }
                a->eof = 1;
            }
        }
        if (a->eof || b->raw_len > a->max_raw) { /* the rest, or a record too long to split */
            split = b->raw_len;
            b->done = 1;
            break;
        }
        split = og_csv_split(b->raw, b->raw_len, &lines);
        if (split) break;
        want *= 2; /* one record longer than the block: read on */
    }
    size_t rest = b->raw_len - split;
    if (rest) {
        if (grow(&a->carry, &a->carry_cap, rest)) {
            cbatch_fail(b, og_err(OG_ERR_NOMEM, "out of memory"));
            return;
        }
        memcpy(a->carry, b->raw + split, rest);
        a->carry_len = rest;
    }
    b->raw_len = split;
    b->first_line = a->next_line;
    b->base_bytes = a->next_bytes;
    a->next_line += lines;
    a->next_bytes += split;
}

/* Parses and converts the batch's records; a failure keeps the records before it. */
static void cbatch_parse(og_csv_source *s, csv_worker *w, csv_batch *b)
{
    og_csv_reader_reset_mem(w->rd, b->raw, b->raw_len, b->first_line);
    if (grow(&b->dec, &b->dec_cap, b->raw_len + 1)) {
        cbatch_fail(b, og_err(OG_ERR_NOMEM, "out of memory"));
        return;
    }
    for (;;) {
        og_csv_field *fs;
        size_t n;
        og_status st = OG_OK;
        int k = og_csv_next(w->rd, &fs, &n, &st);
        if (k < 0) cbatch_fail(b, st);
        if (k <= 0) break;
        if (b->n == b->cap) {
            size_t cap = b->cap ? b->cap * 2 : 1024;
            csv_item *it = realloc(b->items, cap * sizeof *it);
            if (!it) {
                cbatch_fail(b, og_err(OG_ERR_NOMEM, "out of memory"));
                break;
            }
            b->items = it;
            b->cap = cap;
        }
        /* the fields are back to back in the reader's buffer: move them into the batch's */
        const char *from = fs[0].s;
        size_t span = (size_t)(fs[n - 1].s + fs[n - 1].len + 1 - from);
        if (b->dec_len + span > b->dec_cap) {
            cbatch_fail(b, og_err(OG_ERR_INTERNAL, "csv: decoded fields outgrew their input"));
            break;
        }
        char *to = b->dec + b->dec_len;
        memcpy(to, from, span);
        for (size_t i = 0; i < n; i++) fs[i].s = to + (fs[i].s - from);
        b->dec_len += span;
        csv_item *it = &b->items[b->n];
        size_t root;
        st = row_to_record(s, &w->conv, &b->doc, fs, n, og_csv_record_line(w->rd), &it->rec, &root);
        if (st) {
            cbatch_fail(b, st);
            break;
        }
        it->data_tok = root;
        it->bytes = b->base_bytes + og_csv_bytes_read(w->rd);
        b->n++;
    }
    for (size_t i = 0; i < b->n; i++) b->items[i].rec.data = &b->doc.tok[b->items[i].data_tok];
}

static void ring_clear(void *ctx, void *worker, void *batch)
{
    (void)ctx, (void)worker;
    cbatch_clear(batch);
}

static int ring_read(void *ctx, void *worker, void *batch)
{
    (void)worker;
    csv_batch *b = batch;
    cbatch_read(ctx, b);
    return b->done;
}

static int ring_parse(void *ctx, void *worker, void *batch, int ended)
{
    (void)ended;
    csv_batch *b = batch;
    if (b->err == OG_OK) cbatch_parse(ctx, worker, b); /* not after a failed read */
    return b->done;
}

static void async_free(og_csv_source *s)
{
    struct csv_async *a = s->async;
    if (!a) return;
    og_batch_ring_free(a->ring); /* stops and joins the workers */
    for (int i = 0; i < CSV_WORKERS; i++) {
        og_csv_reader_free(a->workers[i].rd);
        conv_free(&a->workers[i].conv);
    }
    for (int i = 0; i < CSV_RING; i++) {
        csv_batch *b = a->batches[i];
        if (!b) continue;
        cbatch_clear(b);
        og_jdoc_free(&b->doc);
        free(b->items);
        free(b->raw);
        free(b->dec);
        free(b);
    }
    free(a->carry);
    free(a);
    s->async = NULL;
}

og_status og_csv_source_start(og_csv_source *s, size_t batch_bytes)
{
    if (s->async) return og_err(OG_ERR_INVALID, "csv: background parsing is already started");
    struct csv_async *a = calloc(1, sizeof *a);
    if (!a) return og_err(OG_ERR_NOMEM, "out of memory");
    s->async = a;
    a->batch_bytes = batch_bytes ? batch_bytes : CSV_BATCH_BYTES;
    size_t maxrec = og_csv_reader_max_record(s->rd);
    a->max_raw = maxrec > (SIZE_MAX - 64) / 3 ? SIZE_MAX : 3 * maxrec + 64;
    /* the header was read by s->rd: the rest of its buffer starts the first batch */
    const char *rest;
    size_t nrest;
    og_csv_reader_rest(s->rd, &rest, &nrest, &a->next_line);
    a->next_bytes = og_csv_bytes_read(s->rd);
    og_status st = OG_OK;
    if (nrest && grow(&a->carry, &a->carry_cap, nrest)) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && nrest) {
        memcpy(a->carry, rest, nrest);
        a->carry_len = nrest;
    }
    for (int i = 0; st == OG_OK && i < CSV_RING; i++)
        if (!(a->batches[i] = calloc(1, sizeof *a->batches[i]))) st = og_err(OG_ERR_NOMEM, "out of memory");
    void *workers[CSV_WORKERS];
    for (int i = 0; st == OG_OK && i < CSV_WORKERS; i++) {
        csv_worker *w = &a->workers[i];
        workers[i] = w;
        st = og_csv_reader_new_mem(&w->rd, "", 0, s->path, s->delim, 1);
        if (st == OG_OK) og_csv_reader_set_max_record(w->rd, maxrec);
        if (st == OG_OK) st = conv_init(s, &w->conv);
    }
    static const og_batch_ring_ops ops = {ring_clear, ring_read, ring_parse};
    if (st == OG_OK) st = og_batch_ring_start(&a->ring, &ops, s, workers, CSV_WORKERS, (void *const *)a->batches, CSV_RING);
    if (st) async_free(s);
    return st;
}

static int next_async(og_csv_source *s, og_ndjson_record *rec, og_status *err)
{
    struct csv_async *a = s->async;
    *err = OG_OK;
    for (;;) {
        csv_batch *b = og_batch_ring_take(a->ring);
        if (a->pos < b->n) {
            csv_item *it = &b->items[a->pos++];
            *rec = it->rec;
            a->consumed = it->bytes;
            return 1;
        }
        if (b->done) { /* stays held: every later call answers the same */
            if (b->err) *err = og_err(b->err, "%s", b->errmsg ? b->errmsg : "csv: read failed");
            else a->consumed = b->base_bytes + b->raw_len; /* empty lines after the last record too */
            return b->err ? -1 : 0;
        }
        og_batch_ring_release(a->ring);
        a->pos = 0;
    }
}

int og_csv_source_next(og_csv_source *s, og_ndjson_record *rec, og_status *err)
{
    return s->async ? next_async(s, rec, err) : next_sequential(s, rec, err);
}

const og_ndjson_record *og_csv_source_peek(const og_csv_source *s, size_t k)
{
    const struct csv_async *a = s->async;
    const csv_batch *b = a ? og_batch_ring_held(a->ring) : NULL;
    return b && a->pos + k < b->n ? &b->items[a->pos + k].rec : NULL;
}

void og_csv_source_skip(og_csv_source *s, size_t k)
{
    struct csv_async *a = s->async;
    const csv_batch *b = a ? og_batch_ring_held(a->ring) : NULL;
    if (!k || !b) return;
    a->pos += k;
    a->consumed = b->items[a->pos - 1].bytes;
}
