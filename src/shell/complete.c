/*
 * complete.c — the completion candidates of `omnigraph shell` (complete.h).
 *
 * The statement is not parsed: a person completing is in the middle of one, so it is rarely
 * valid.  Variables and their types are found by looking for `$name:` followed by a type word
 * in the text so far, which is how `.gq` binds them (`$p: Person`, `$w:worksOn`).
 */
#include "shell/complete.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "shell/input.h"
#include "shell/shell.h"
#include "util/error.h"

/* The query language's keywords and functions (docs/query-language.md, docs/search.md). */
static const char *const keywords[] = {
    "query", "match", "return", "order", "limit", "insert", "update", "delete", "set", "where",
    "not", "and", "or", "is", "null", "true", "false", "as", "asc", "desc", "in",
    "count", "sum", "avg", "min", "max", "contains", "starts_with", "now", "date", "datetime",
    "search", "fuzzy", "match_text", "bm25", "nearest", "rrf", NULL,
};

static const char *const formats[] = {"table", "json", "csv", NULL};
static const char *const on_off[] = {"on", "off", NULL};

void og_shell_words_add(og_shell_words *w, const char *s, size_t len)
{
    for (size_t i = 0; i < w->n; i++)
        if (strlen(w->v[i]) == len && !memcmp(w->v[i], s, len)) return;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        char **v = realloc(w->v, cap * sizeof *v);
        if (!v) return;
        w->v = v;
        w->cap = cap;
    }
    char *c = malloc(len + 1);
    if (!c) return;
    memcpy(c, s, len);
    c[len] = 0;
    w->v[w->n++] = c;
}

void og_shell_words_free(og_shell_words *w)
{
    for (size_t i = 0; i < w->n; i++) free(w->v[i]);
    free(w->v);
    memset(w, 0, sizeof *w);
}

static void types_free(og_shell_names *n)
{
    for (size_t i = 0; i < n->ntypes; i++) {
        og_shell_type *t = &n->types[i];
        for (size_t k = 0; k < t->nprops; k++) {
            free(t->props[k]);
            free(t->prop_types[k]);
        }
        free(t->props);
        free(t->prop_types);
        free(t->name);
        free(t->from);
        free(t->to);
    }
    free(n->types);
    n->types = NULL;
    n->ntypes = 0;
}

void og_shell_names_free(og_shell_names *n)
{
    types_free(n);
    og_shell_words_free(&n->branches);
    og_shell_words_free(&n->params);
}

static char *dup_or_null(json_t *j) { return json_is_string(j) ? strdup(json_string_value(j)) : NULL; }

og_status og_shell_names_set_catalog(og_shell_names *n, const char *catalog_json)
{
    json_t *doc = json_loads(catalog_json, 0, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return og_err(OG_ERR_CORRUPT, "the catalog is not a JSON object");
    }
    types_free(n);
    static const char *const groups[] = {"nodes", "edges", "interfaces"};
    size_t total = 0;
    for (int g = 0; g < 3; g++) total += json_array_size(json_object_get(doc, groups[g]));
    n->types = calloc(total ? total : 1, sizeof *n->types);
    for (int g = 0; n->types && g < 3; g++) {
        json_t *arr = json_object_get(doc, groups[g]), *t;
        size_t i;
        json_array_foreach(arr, i, t) {
            og_shell_type *ty = &n->types[n->ntypes];
            ty->name = dup_or_null(json_object_get(t, "name"));
            if (!ty->name) continue;
            ty->kind = g;
            ty->from = dup_or_null(json_object_get(t, "from"));
            ty->to = dup_or_null(json_object_get(t, "to"));
            json_t *props = json_object_get(t, "properties"), *p;
            size_t np = json_array_size(props), k;
            ty->props = calloc(np ? np : 1, sizeof *ty->props);
            ty->prop_types = calloc(np ? np : 1, sizeof *ty->prop_types);
            json_array_foreach(props, k, p) {
                if (!ty->props || !ty->prop_types) break;
                char *name = dup_or_null(json_object_get(p, "name"));
                if (!name) continue;
                ty->props[ty->nprops] = name;
                ty->prop_types[ty->nprops++] = dup_or_null(json_object_get(p, "type"));
            }
            n->ntypes++;
        }
    }
    json_decref(doc);
    return n->types ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

og_status og_shell_names_set_branches(og_shell_names *n, const char *branches_json)
{
    json_t *doc = json_loads(branches_json, 0, NULL), *b;
    json_t *arr = json_object_get(doc, "branches");
    if (!json_is_array(arr)) {
        json_decref(doc);
        return og_err(OG_ERR_CORRUPT, "the branch list is not {\"branches\":[...]}");
    }
    og_shell_words_free(&n->branches);
    size_t i;
    json_array_foreach(arr, i, b) {
        const char *name = json_string_value(json_object_get(b, "name"));
        if (name) og_shell_words_add(&n->branches, name, strlen(name));
    }
    json_decref(doc);
    return OG_OK;
}

void og_shell_names_set_params(og_shell_names *n, const char *params_json)
{
    og_shell_words_free(&n->params);
    json_t *doc = params_json && *params_json ? json_loads(params_json, 0, NULL) : NULL;
    const char *k;
    json_t *v;
    json_object_foreach(doc, k, v) og_shell_words_add(&n->params, k, strlen(k));
    json_decref(doc);
}

const og_shell_type *og_shell_names_type(const og_shell_names *n, const char *name, size_t len)
{
    for (size_t i = 0; i < n->ntypes; i++) /* exact first: a node and an edge may differ only in case */
        if (strlen(n->types[i].name) == len && !memcmp(n->types[i].name, name, len)) return &n->types[i];
    for (size_t i = 0; i < n->ntypes; i++)
        if (n->types[i].kind == 1 && strlen(n->types[i].name) == len && !strncasecmp(n->types[i].name, name, len))
            return &n->types[i];
    return NULL;
}

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int has_prefix(const char *s, const char *p, size_t plen) { return strncmp(s, p, plen) == 0; }

static void add_matching(og_shell_words *out, const char *const *list, const char *w, size_t wl)
{
    for (size_t i = 0; list[i]; i++)
        if (has_prefix(list[i], w, wl)) og_shell_words_add(out, list[i], strlen(list[i]));
}

/* An edge's query spelling: its name with the first letter lower case (`WorksOn` -> `worksOn`). */
static void add_edge_word(og_shell_words *out, const char *name, const char *w, size_t wl)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    buf[0] = (char)tolower((unsigned char)buf[0]);
    if (has_prefix(buf, w, wl)) og_shell_words_add(out, buf, strlen(buf));
}

/* The type word bound to `$var` in text (`$var: Type`, `$var:edge`), or NULL. */
static const og_shell_type *var_type(const og_shell_names *n, const char *text, const char *var, size_t vl)
{
    for (const char *p = strchr(text, '$'); p; p = strchr(p + 1, '$')) {
        if (strncmp(p + 1, var, vl) != 0 || ident_char(p[1 + vl])) continue;
        const char *q = p + 1 + vl;
        while (*q == ' ' || *q == '\t') q++;
        if (*q != ':') continue;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '\n') q++;
        size_t tl = 0;
        while (ident_char(q[tl])) tl++;
        const og_shell_type *t = tl ? og_shell_names_type(n, q, tl) : NULL;
        if (t) return t;
    }
    return NULL;
}

static void complete_property(og_shell_words *out, const og_shell_names *n, const char *text, const char *w,
                              size_t wl, const char *dot)
{
    size_t vl = (size_t)(dot - (w + 1)), pl = wl - vl - 2;
    const char *pre = dot + 1;
    const og_shell_type *t = var_type(n, text, w + 1, vl);
    char buf[512];
    for (size_t i = 0; i < n->ntypes; i++) {
        const og_shell_type *ty = &n->types[i];
        if (t && ty != t) continue;
        for (size_t k = 0; k < ty->nprops; k++) {
            if (!has_prefix(ty->props[k], pre, pl)) continue;
            int len = snprintf(buf, sizeof buf, "$%.*s.%s", (int)vl, w + 1, ty->props[k]);
            if (len > 0 && (size_t)len < sizeof buf) og_shell_words_add(out, buf, (size_t)len);
        }
    }
}

/* `at` is where the word being completed sits in text: it is not a variable of its own. */
static void complete_variable(og_shell_words *out, const og_shell_names *n, const char *text, const char *at,
                              const char *w, size_t wl)
{
    for (const char *p = strchr(text, '$'); p; p = strchr(p + 1, '$')) {
        size_t l = 1;
        while (ident_char(p[l])) l++;
        if (p != at && l > 1 && l >= wl && !strncmp(p, w, wl)) og_shell_words_add(out, p, l);
    }
    char buf[300];
    for (size_t i = 0; i < n->params.n; i++) {
        snprintf(buf, sizeof buf, "$%s", n->params.v[i]);
        if (has_prefix(buf, w, wl)) og_shell_words_add(out, buf, strlen(buf));
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void og_shell_complete(og_shell_words *out, const og_shell_names *n, const char *stmt, const char *line, size_t start,
                       size_t end)
{
    const char *w = line + start;
    size_t wl = end - start;
    /* the text so far, for variables: the earlier lines and this one up to the cursor */
    size_t sl = stmt ? strlen(stmt) : 0;
    char *text = malloc(sl + end + 2);
    if (!text) return;
    memcpy(text, stmt ? stmt : "", sl);
    text[sl] = '\n';
    memcpy(text + sl + 1, line, end);
    text[sl + 1 + end] = 0;
    size_t lead = 0;
    while (line[lead] == ' ' || line[lead] == '\t') lead++;
    int first_line = sl == 0 || og_shell_stmt_blank(stmt, sl);
    if (first_line && line[lead] == '.') {
        if (start == lead) { /* the command word */
            for (size_t i = 0; og_shell_dot_name(i); i++)
                if (has_prefix(og_shell_dot_name(i), w, wl)) og_shell_words_add(out, og_shell_dot_name(i), strlen(og_shell_dot_name(i)));
        } else { /* its argument */
            size_t cl = 0;
            while (line[lead + cl] && line[lead + cl] != ' ' && line[lead + cl] != '\t') cl++;
            const char *cmd = line + lead;
            if ((cl == 7 && !strncmp(cmd, ".branch", 7)) || (cl == 3 && !strncmp(cmd, ".at", 3))) {
                for (size_t i = 0; i < n->branches.n; i++)
                    if (has_prefix(n->branches.v[i], w, wl)) og_shell_words_add(out, n->branches.v[i], strlen(n->branches.v[i]));
            } else if (cl == 7 && !strncmp(cmd, ".schema", 7)) {
                for (size_t i = 0; i < n->ntypes; i++)
                    if (has_prefix(n->types[i].name, w, wl)) og_shell_words_add(out, n->types[i].name, strlen(n->types[i].name));
            } else if (cl == 7 && !strncmp(cmd, ".format", 7)) {
                add_matching(out, formats, w, wl);
            } else if (cl == 6 && !strncmp(cmd, ".timer", 6)) {
                add_matching(out, on_off, w, wl);
            }
        }
    } else if (wl && w[0] == '$') {
        const char *dot = memchr(w, '.', wl);
        if (dot) complete_property(out, n, text, w, wl, dot);
        else complete_variable(out, n, text, text + sl + 1 + start, w, wl);
    } else if (wl && isupper((unsigned char)w[0])) {
        for (size_t i = 0; i < n->ntypes; i++)
            if (has_prefix(n->types[i].name, w, wl)) og_shell_words_add(out, n->types[i].name, strlen(n->types[i].name));
    } else {
        add_matching(out, keywords, w, wl);
        for (size_t i = 0; i < n->ntypes; i++)
            if (n->types[i].kind == 1) add_edge_word(out, n->types[i].name, w, wl);
    }
    free(text);
    if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, cmp_str);
}
