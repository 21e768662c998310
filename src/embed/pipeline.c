/*
 * pipeline.c — the record transform behind `omnigraph embed`: NDJSON records in, the same
 * records out with their vectors filled, replaced or removed (reference-surfaces.md §6).
 *
 * Records stream through in chunks (CHUNK lines): a chunk's texts go to the embedder in one
 * call per target — so batching and concurrency work across records — and the chunk is written
 * before the next is read, so memory follows the chunk, not the file.  The source value is
 * embedded exactly as stored: no type name, label or template is added and nothing is
 * trimmed, so a query text equal to a stored value embeds the same input.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"
#include "util/buf.h"
#include "util/error.h"

#define CHUNK 512

const char *og_embed_mode_name(og_embed_mode m)
{
    return m == OG_EMBED_MODE_REEMBED_ALL        ? "reembed_all"
           : m == OG_EMBED_MODE_REEMBED_SELECTED ? "reembed_selected"
           : m == OG_EMBED_MODE_CLEAN            ? "clean"
                                                 : "fill_missing";
}

og_embed_mode og_embed_mode_effective(og_embed_mode m, const og_embed_filter *f)
{
    return m == OG_EMBED_MODE_FILL_MISSING && f && f->nselects ? OG_EMBED_MODE_REEMBED_SELECTED : m;
}

/* A selector "Type:field=value" or "field=value", split and trimmed as the reference does
 * (the value is everything after the first '=').  0 on success. */
typedef struct selector {
    const char *type, *field, *value;
    size_t tl, fl, vl;
} selector;

static int space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static void trim(const char **s, size_t *n)
{
    while (*n && space(**s)) (*s)++, (*n)--;
    while (*n && space((*s)[*n - 1])) (*n)--;
}

static int parse_selector(const char *s, selector *out)
{
    const char *eq = strchr(s, '=');
    if (!eq) return -1;
    const char *c = memchr(s, ':', (size_t)(eq - s));
    out->type = c ? s : "";
    out->tl = c ? (size_t)(c - s) : 0;
    out->field = c ? c + 1 : s;
    out->fl = (size_t)(eq - out->field);
    out->value = eq + 1;
    out->vl = strlen(eq + 1);
    trim(&out->type, &out->tl);
    trim(&out->field, &out->fl);
    trim(&out->value, &out->vl);
    return out->fl ? 0 : -1;
}

static int put_name(char *dst, size_t cap, const char *s)
{
    if (!s || !*s || strlen(s) >= cap) return -1;
    strcpy(dst, s);
    return 0;
}

og_status og_embed_spec_parse(og_embed_target **out, size_t *n, const char *json, size_t len)
{
    *out = NULL;
    *n = 0;
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return og_err(OG_ERR_INVALID, "embedding spec: line %d: %s", je.line, je.text);
    og_status st = OG_OK;
    json_t *dim = json_object_get(root, "dimension"), *types = json_object_get(root, "types");
    if (!json_is_object(root) || !json_is_integer(dim) || json_integer_value(dim) < 1 ||
        json_integer_value(dim) > 65536 || !json_is_object(types) || !json_object_size(types)) {
        json_decref(root);
        return og_err(OG_ERR_INVALID, "embedding spec: expected {\"dimension\": N, \"types\": {\"Type\": {\"target\": "
                                      "\"vector_prop\", \"fields\": [\"source_prop\"]}}}");
    }
    og_embed_target *t = calloc(json_object_size(types), sizeof *t);
    if (!t) {
        json_decref(root);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    const char *name;
    json_t *v;
    size_t k = 0;
    json_object_foreach(types, name, v)
    {
        json_t *tg = json_object_get(v, "target"), *fields = json_object_get(v, "fields");
        if (!json_is_object(v) || !json_is_string(tg) || !json_is_array(fields)) {
            st = og_err(OG_ERR_INVALID, "embedding spec: type %s needs \"target\" and \"fields\"", name);
            break;
        }
        if (json_array_size(fields) != 1 || !json_is_string(json_array_get(fields, 0))) {
            st = og_err(OG_ERR_INVALID,
                        "embedding spec: type %s must list exactly one source field (the property its @embed names), "
                        "got %zu",
                        name, json_array_size(fields));
            break;
        }
        if (put_name(t[k].type, sizeof t[k].type, name) || put_name(t[k].target, sizeof t[k].target, json_string_value(tg)) ||
            put_name(t[k].source, sizeof t[k].source, json_string_value(json_array_get(fields, 0)))) {
            st = og_err(OG_ERR_INVALID, "embedding spec: type %s has an empty or over-long name", name);
            break;
        }
        t[k].dim = (uint32_t)json_integer_value(dim);
        k++;
    }
    json_decref(root);
    if (st != OG_OK) {
        free(t);
        return st;
    }
    *out = t;
    *n = k;
    return OG_OK;
}

static int has_target_type(const og_embed_target *t, size_t nt, const char *type, size_t tl)
{
    for (size_t i = 0; i < nt; i++)
        if (strlen(t[i].type) == tl && !strncmp(t[i].type, type, tl)) return 1;
    return 0;
}

og_status og_embed_filter_check(const og_embed_filter *f, const og_embed_target *t, size_t nt)
{
    if (!f) return OG_OK;
    for (size_t i = 0; i < f->ntypes; i++)
        if (!has_target_type(t, nt, f->types[i], strlen(f->types[i])))
            return og_err(OG_ERR_INVALID, "--type %s: no embedding target for that type", f->types[i]);
    for (size_t i = 0; i < f->nselects; i++) {
        selector q;
        if (parse_selector(f->selects[i], &q))
            return og_err(OG_ERR_INVALID, "--select %s: expected Type:field=value or field=value", f->selects[i]);
        if (q.tl && !has_target_type(t, nt, q.type, q.tl))
            return og_err(OG_ERR_INVALID, "--select %s: no embedding target for type %.*s", f->selects[i], (int)q.tl,
                          q.type);
    }
    return OG_OK;
}

og_status og_embed_check_model(const og_embed_target *t, const og_embed_config *c)
{
    if (!t->model[0] || !strcmp(t->model, c->model)) return OG_OK;
    return og_err(OG_ERR_TYPE,
                  "%s.%s records @embed model \"%s\" but the configured embedder resolves to %s model \"%s\"; set "
                  "OMNIGRAPH_EMBED_MODEL (and the provider) to the recorded model: vectors of different models are not "
                  "comparable",
                  t->type, t->target, t->model, og_embed_provider_name(c->provider), c->model);
}

/* A property value as a selector compares it (the reference's rendering): a string trimmed,
 * a number or boolean as written, null as "", a list as its non-empty items joined by ", ". */
static void render(json_t *v, og_buf *b)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        while (n && space(*s)) s++, n--;
        while (n && space(s[n - 1])) n--;
        og_buf_append(b, s, n);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        int first = 1;
        json_array_foreach(v, i, x)
        {
            size_t before = b->len;
            if (!first) og_buf_append_str(b, ", ");
            size_t mark = b->len;
            render(x, b);
            if (b->len == mark) b->len = before; /* empty items are left out */
            else first = 0;
        }
    } else if (v && !json_is_null(v)) {
        char *txt = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (txt) og_buf_append_str(b, txt);
        free(txt);
    }
}

/* 1 when the record of `type` passes --type and, when selectors are given, matches one of them. */
static int selected(const og_embed_filter *f, const char *type, json_t *data)
{
    if (!f) return 1;
    if (f->ntypes) {
        int hit = 0;
        for (size_t i = 0; i < f->ntypes && !hit; i++) hit = !strcmp(f->types[i], type);
        if (!hit) return 0;
    }
    for (size_t i = 0; i < f->nselects; i++) {
        selector q;
        if (parse_selector(f->selects[i], &q)) continue;
        if (q.tl && (strlen(type) != q.tl || strncmp(q.type, type, q.tl))) continue;
        char field[256];
        if (q.fl >= sizeof field) continue;
        memcpy(field, q.field, q.fl);
        field[q.fl] = 0;
        json_t *v = json_is_object(data) ? json_object_get(data, field) : NULL;
        if (!v) continue;
        og_buf b = OG_BUF_INIT;
        render(v, &b);
        int m = b.len == q.vl && (!q.vl || !memcmp(b.data, q.value, q.vl));
        og_buf_free(&b);
        if (m) return 1;
    }
    return f->nselects == 0;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' && s[i] != '\f' && s[i] != '\v') return 0;
    return 1;
}

/* 1 when the stored vector already holds exactly v (as float32): re-embedding an unchanged
 * source then rewrites nothing, so a --reembed-all run changes only the rows that differ. */
static int same_vector(const json_t *old, const float *v, uint32_t dim)
{
    if (!json_is_array(old) || json_array_size(old) != dim) return 0;
    for (uint32_t d = 0; d < dim; d++) {
        const json_t *x = json_array_get(old, d);
        if (!json_is_number(x) || (float)json_number_value(x) != v[d]) return 0;
    }
    return 1;
}

typedef struct rec {
    json_t *j;      /* NULL: a blank line */
    size_t line;
    int changed;
} rec;

typedef struct want {
    size_t rec;     /* chunk index */
    const char *text;
    size_t len;
} want;

static og_status flush_chunk(og_embedder *e, const og_embed_target *t, size_t nt, og_embed_mode mode,
                             const og_embed_filter *f, rec *rs, size_t nr, const char *in_name, FILE *out,
                             int only_changed, og_embed_summary *sum)
{
    og_status st = OG_OK;
    want *w = malloc((nr ? nr : 1) * sizeof *w);
    if (!w) return og_err(OG_ERR_NOMEM, "out of memory");
    unsigned char *sel = calloc(nr ? nr : 1, 1);
    if (!sel) {
        free(w);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < nr; k++) {
        json_t *ty = rs[k].j ? json_object_get(rs[k].j, "type") : NULL;
        if (!json_is_string(ty)) continue;
        json_t *data = json_object_get(rs[k].j, "data");
        /* counted as the reference counts: every node record the filter passes */
        if (selected(f, json_string_value(ty), data)) {
            sel[k] = 1;
            sum->selected++;
        }
    }
    for (size_t i = 0; st == OG_OK && i < nt; i++) {
        size_t nw = 0;
        for (size_t k = 0; st == OG_OK && k < nr; k++) {
            if (!sel[k] || strcmp(json_string_value(json_object_get(rs[k].j, "type")), t[i].type)) continue;
            json_t *data = json_object_get(rs[k].j, "data");
            if (!json_is_object(data)) {
                if (data && !json_is_null(data)) {
                    st = og_err(OG_ERR_PARSE, "%s:%zu: \"data\" must be an object", in_name, rs[k].line);
                    break;
                }
                data = json_object();
                json_object_set_new(rs[k].j, "data", data);
            }
            json_t *vec = json_object_get(data, t[i].target), *src = json_object_get(data, t[i].source);
            int has = vec && !json_is_null(vec);
            if (src && !json_is_null(src) && !json_is_string(src)) {
                st = og_err(OG_ERR_INVALID, "%s:%zu: %s.%s is the source of %s and must be a string", in_name, rs[k].line,
                            t[i].type, t[i].source, t[i].target);
                break;
            }
            const char *txt = json_is_string(src) ? json_string_value(src) : NULL;
            size_t tl = txt ? json_string_length(src) : 0;
            int text = txt && !blank(txt, tl);
            int replace = mode == OG_EMBED_MODE_REEMBED_ALL || mode == OG_EMBED_MODE_REEMBED_SELECTED;
            if (mode == OG_EMBED_MODE_CLEAN || (replace && !text)) {
                if (has) {
                    json_object_del(data, t[i].target);
                    rs[k].changed = 1;
                    sum->cleaned++;
                }
            } else if (text && (replace || !has)) {
                w[nw].rec = k;
                w[nw].text = txt;
                w[nw].len = tl;
                nw++;
            }
        }
        if (st != OG_OK || !nw) continue;
        const char **tx = malloc(nw * sizeof *tx);
        size_t *tl = malloc(nw * sizeof *tl);
        float *v = malloc(nw * (size_t)t[i].dim * sizeof *v);
        if (!tx || !tl || !v) st = og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t q = 0; st == OG_OK && q < nw; q++) {
            tx[q] = w[q].text;
            tl[q] = w[q].len;
        }
        if (st == OG_OK) st = og_embedder_embed(e, tx, tl, nw, t[i].dim, OG_EMBED_DOCUMENT, v);
        if (st != OG_OK) og_err_wrap(st, "%s: embedding %s.%s", in_name, t[i].type, t[i].target);
        for (size_t q = 0; st == OG_OK && q < nw; q++) {
            json_t *data = json_object_get(rs[w[q].rec].j, "data");
            sum->embedded++;
            if (same_vector(json_object_get(data, t[i].target), v + q * t[i].dim, t[i].dim)) continue;
            json_t *arr = json_array();
            for (uint32_t d = 0; arr && d < t[i].dim; d++) json_array_append_new(arr, json_real(v[q * t[i].dim + d]));
            if (!arr || json_object_set_new(data, t[i].target, arr)) st = og_err(OG_ERR_NOMEM, "out of memory");
            rs[w[q].rec].changed = 1;
        }
        free(tx);
        free(tl);
        free(v);
    }
    for (size_t k = 0; st == OG_OK && k < nr; k++) {
        if (!rs[k].j || (only_changed && !rs[k].changed)) continue;
        char *s = json_dumps(rs[k].j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!s) {
            st = og_err(OG_ERR_NOMEM, "out of memory");
            break;
        }
        if (fputs(s, out) == EOF || fputc('\n', out) == EOF) st = og_err(OG_ERR_IO, "cannot write the embedded records");
        free(s);
    }
    free(sel);
    free(w);
    return st;
}

og_status og_embed_run(og_embedder *e, const og_embed_target *t, size_t nt, og_embed_mode mode, const og_embed_filter *f,
                       FILE *in, const char *in_name, FILE *out, int only_changed, og_embed_summary *sum,
                       og_embed_run_progress_fn progress, void *progress_ctx)
{
    memset(sum, 0, sizeof *sum);
    OG_TRY(og_embed_filter_check(f, t, nt));
    mode = og_embed_mode_effective(mode, f);
    rec *rs = calloc(CHUNK, sizeof *rs);
    if (!rs) return og_err(OG_ERR_NOMEM, "out of memory");
    char *line = NULL;
    size_t cap = 0, nr = 0, lineno = 0;
    ssize_t got;
    og_status st = OG_OK;
    while (st == OG_OK) {
        got = getline(&line, &cap, in);
        if (got >= 0) {
            lineno++;
            size_t l = (size_t)got;
            while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) l--;
            if (blank(line, l)) continue;
            json_error_t je;
            json_t *j = json_loadb(line, l, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
            if (!j || !json_is_object(j)) {
                json_decref(j);
                st = og_err(OG_ERR_PARSE, "%s:%zu: %s", in_name, lineno, j ? "a record must be a JSON object" : je.text);
                break;
            }
            rs[nr].j = j;
            rs[nr].line = lineno;
            rs[nr].changed = 0;
            nr++;
            sum->records++;
        }
        if (nr == CHUNK || (got < 0 && nr)) {
            st = flush_chunk(e, t, nt, mode, f, rs, nr, in_name, out, only_changed, sum);
            for (size_t k = 0; k < nr; k++) json_decref(rs[k].j);
            nr = 0;
            if (st == OG_OK && progress) progress(progress_ctx, sum);
        }
        if (got < 0) break;
    }
    for (size_t k = 0; k < nr; k++) json_decref(rs[k].j);
    if (st == OG_OK && ferror(in)) st = og_err(OG_ERR_IO, "%s: read error", in_name);
    free(line);
    free(rs);
    return st;
}
