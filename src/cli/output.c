/*
 * output.c — the record formats of the CLI's non-query verbs (see output.h), so that every
 * verb that prints records offers the same `--format json|jsonl|csv|table` as `query`.
 */
#include "cli/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "cli/cli.h"

int og_cli_format_parse(const char *verb, const char *value, int json, og_cli_format *out)
{
    *out = json ? OG_CLI_JSON : OG_CLI_TEXT;
    if (!value) return 0;
    og_cli_format f;
    if (!strcmp(value, "json")) f = OG_CLI_JSON;
    else if (!strcmp(value, "jsonl")) f = OG_CLI_JSONL;
    else if (!strcmp(value, "csv")) f = OG_CLI_CSV;
    else if (!strcmp(value, "table")) f = OG_CLI_TABLE;
    else return og_cli_usage(verb, "--format must be json, jsonl, csv or table (got '%s')", value);
    if (json && f != OG_CLI_JSON) return og_cli_usage(verb, "--json and --format %s contradict each other", value);
    *out = f;
    return 0;
}

/* The member `path` of record r: the member of that exact name, else for "a.b" member b of
 * object member a; NULL when absent.  A column "label=path" reads path. */
static json_t *member(json_t *r, const char *path)
{
    const char *eq = strchr(path, '=');
    if (eq) path = eq + 1;
    json_t *v = json_object_get(r, path);
    const char *dot = strchr(path, '.');
    if (v || !dot) return v;
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(dot - path), path);
    json_t *o = json_object_get(r, head);
    return json_is_object(o) ? member(o, dot + 1) : NULL;
}

/* A cell's text into a malloc'd string: NULL for null / absent, "" for an empty string, the
 * string itself, else compact JSON. */
static char *cell(json_t *v)
{
    if (!v || json_is_null(v)) return NULL;
    if (og_json_digits(v)) return strdup(og_json_digits(v)); /* a U64 above 2^63-1 (og_json_read) */
    if (json_is_string(v)) return strdup(json_string_value(v));
    return og_json_text(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER); /* shortest reals */
}

/* A column's header: its label ("label=path"), else its name. */
static char *label(const char *col)
{
    const char *eq = strchr(col, '=');
    return eq ? strndup(col, (size_t)(eq - col)) : strdup(col);
}

static void csv_field(const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"') putchar('"');
        putchar(*s);
    }
    putchar('"');
}

/* Display width in terminal columns (utf8proc's tables; a byte that is not UTF-8 counts 1). */
size_t og_cli_text_width(const void *text, size_t n)
{
    const utf8proc_uint8_t *s = text;
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) {
            w++, i++;
            continue;
        }
        int cw = utf8proc_charwidth(cp);
        w += cw > 0 ? (size_t)cw : 0;
        i += (size_t)k;
    }
    return w;
}

static size_t width(const char *s) { return og_cli_text_width(s, strlen(s)); }

static void pad(size_t n)
{
    while (n--) putchar(' ');
}

static void print_compact(json_t *v)
{
    char *s = og_json_text(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    if (s) printf("%s\n", s);
    og_free(s);
}

void og_cli_print_records(int f, json_t *doc, const char *rows_key, const char *const *cols, size_t ncols)
{
    if (f == OG_CLI_JSON) {
        char *s = og_json_text(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) printf("%s\n", s);
        og_free(s);
        return;
    }
    json_t *rows = rows_key ? json_object_get(doc, rows_key) : NULL, *one = NULL;
    if (!rows_key) {
        one = json_array();
        json_array_append(one, doc);
        rows = one;
    }
    size_t n = json_array_size(rows);
    if (f == OG_CLI_JSONL) {
        if (rows_key) {
            json_t *meta = json_copy(doc);
            json_object_del(meta, rows_key);
            if (json_object_size(meta)) print_compact(meta);
            json_decref(meta);
        }
        for (size_t i = 0; i < n; i++) print_compact(json_array_get(rows, i));
    } else if (f == OG_CLI_CSV) {
        for (size_t c = 0; c < ncols; c++) {
            if (c) putchar(',');
            char *h = label(cols[c]);
            csv_field(h);
            free(h);
        }
        fputs("\r\n", stdout);
        for (size_t i = 0; i < n; i++) {
            for (size_t c = 0; c < ncols; c++) {
                if (c) putchar(',');
                char *t = cell(member(json_array_get(rows, i), cols[c]));
                if (t && !*t) fputs("\"\"", stdout);
                else if (t) csv_field(t);
                free(t);
            }
            fputs("\r\n", stdout);
        }
    } else { /* table */
        char **cells = calloc(n * ncols + 1, sizeof *cells);
        size_t *w = calloc(ncols + 1, sizeof *w);
        if (!cells || !w) {
            free(cells), free(w);
            json_decref(one);
            return;
        }
        char **heads = calloc(ncols + 1, sizeof *heads);
        for (size_t c = 0; c < ncols; c++) {
            heads[c] = label(cols[c]);
            w[c] = width(heads[c]);
        }
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < ncols; c++) {
                char *t = cell(member(json_array_get(rows, i), cols[c]));
                if (t && !*t) {
                    free(t);
                    t = strdup("\"\"");
                }
                for (char *p = t; p && *p; p++)
                    if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
                cells[i * ncols + c] = t;
                size_t cw = t ? width(t) : 0;
                if (cw > w[c]) w[c] = cw;
            }
        for (size_t c = 0; c < ncols; c++) {
            fputs(c ? "  " : "", stdout);
            fputs(heads[c], stdout);
            if (c + 1 < ncols) pad(w[c] - width(heads[c]));
        }
        for (size_t c = 0; c < ncols; c++) free(heads[c]);
        free(heads);
        putchar('\n');
        for (size_t c = 0; c < ncols; c++) {
            fputs(c ? "  " : "", stdout);
            for (size_t k = 0; k < w[c]; k++) putchar('-');
        }
        putchar('\n');
        for (size_t i = 0; i < n; i++) {
            for (size_t c = 0; c < ncols; c++) {
                const char *t = cells[i * ncols + c];
                fputs(c ? "  " : "", stdout);
                if (t) fputs(t, stdout);
                if (c + 1 < ncols) pad(w[c] - (t ? width(t) : 0));
            }
            putchar('\n');
        }
        printf("(%zu row%s)\n", n, n == 1 ? "" : "s");
        for (size_t k = 0; k < n * ncols; k++) free(cells[k]);
        free(cells);
        free(w);
    }
    json_decref(one);
}

/* ---- the --format gate ---------------------------------------------------------------------- */

enum { F_JSON = 1u << OG_CLI_JSON, F_JSONL = 1u << OG_CLI_JSONL, F_CSV = 1u << OG_CLI_CSV, F_TABLE = 1u << OG_CLI_TABLE };
#define F_ALL (F_JSON | F_JSONL | F_CSV | F_TABLE)
#define F_REPORT (F_JSON | F_TABLE)

/* What each verb prints.  `sub` NULL matches any subcommand not listed before it.  `native`:
 * the verb parses --format itself (else the gate rewrites it, see output.h).  `why` explains
 * a verb that takes no --format. */
typedef struct format_rule {
    const char *verb, *sub;
    unsigned accepted;
    int native;
    const char *why;
} format_rule;

static const format_rule rules[] = {
    {"query", NULL, F_ALL, 1, NULL},
    {"read", NULL, F_ALL, 1, NULL},
    {"mutate", NULL, F_ALL, 1, NULL},
    {"change", NULL, F_ALL, 1, NULL},
    {"load", NULL, F_ALL, 1, NULL},
    {"snapshot", NULL, F_ALL, 1, NULL},
    {"export", NULL, F_JSONL, 1, NULL},
    {"branch", "list", F_ALL, 1, NULL},
    {"branch", NULL, F_REPORT, 0, NULL},
    {"commit", NULL, F_ALL, 1, NULL},
    {"changes", "baseline", F_REPORT, 0, NULL},
    {"changes", NULL, F_ALL, 1, NULL},
    {"queries", "validate", F_REPORT, 0, NULL},
    {"queries", NULL, F_ALL, 1, NULL},
    {"blob", "get", 0, 0, "it writes the property's raw bytes"},
    {"blob", NULL, F_REPORT, 0, NULL},
    {"policy", "compile", 0, 0, "it prints Cedar text (or, with --entities, Cedar's own JSON)"},
    {"policy", NULL, F_REPORT, 0, NULL},
    {"schema", "show", 0, 0, "it prints the schema source"},
    {"schema", "get", 0, 0, "it prints the schema source"},
    {"schema", NULL, F_REPORT, 0, NULL},
    {"mcp", NULL, 0, 0, "it speaks JSON-RPC on stdin/stdout"},
    {"analyze", NULL, F_ALL, 1, NULL},
    {"index", NULL, F_ALL, 1, NULL},
    {"test", NULL, 0, 0, "it prints one line per test file and a summary"},
    {"alias", "list", F_REPORT, 0, NULL},
    {"alias", NULL, F_ALL, 1, NULL}, /* a stored query's rows, as `query` */
    {"login", NULL, 0, 0, "it stores a token and prints nothing on stdout"},
    {"logout", NULL, 0, 0, "it removes a token and prints nothing on stdout"},
    {"shell", NULL, F_JSON | F_CSV | F_TABLE, 1, NULL}, /* how its rows print (docs/shell.md) */
    {NULL, NULL, F_REPORT, 0, NULL}, /* cleanup, cluster, embed, graphs, init, lint, optimize, profile, version */
};

static const char *names(unsigned m)
{
    switch (m) {
    case F_ALL: return "json, jsonl, csv or table";
    case F_REPORT: return "json or table";
    case F_JSONL: return "jsonl";
    default: return "nothing";
    }
}

int og_cli_format_gate(int *argc, char **argv)
{
    if (*argc < 2) return 0;
    const char *verb = argv[1], *sub = *argc > 2 && argv[2][0] != '-' ? argv[2] : NULL;
    const format_rule *r = rules;
    for (; r->verb; r++)
        if (!strcmp(r->verb, verb) && (!r->sub || (sub && !strcmp(r->sub, sub)))) break;
    if (r->native) return 0;
    static const char *const with_subs[] = {"blob", "branch", "changes", "cluster", "commit",
                                             "index", "policy", "queries", "schema"};
    int has_subs = 0;
    for (size_t k = 0; k < sizeof with_subs / sizeof with_subs[0]; k++) has_subs |= !strcmp(verb, with_subs[k]);
    char label[96];
    snprintf(label, sizeof label, "%s%s%s", verb, has_subs && sub ? " " : "", has_subs && sub ? sub : "");
    int at = -1, json_at = -1;
    const char *value = NULL;
    for (int i = 2; i < *argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 0; /* help wins */
        if (!strcmp(argv[i], "--json")) json_at = i;
        const char *v = NULL;
        if (!strcmp(argv[i], "--format")) v = i + 1 < *argc ? argv[i + 1] : "";
        else if (!strncmp(argv[i], "--format=", 9)) v = argv[i] + 9;
        else continue;
        if (at >= 0) return og_cli_usage(label, "--format given twice");
        at = i;
        value = v;
        if (!strcmp(argv[i], "--format")) i++;
    }
    if (at < 0) return 0;
    if (!*value) return og_cli_usage(label, "--format needs a value: %s", names(r->accepted));
    og_cli_format f;
    if (!strcmp(value, "json")) f = OG_CLI_JSON;
    else if (!strcmp(value, "jsonl")) f = OG_CLI_JSONL;
    else if (!strcmp(value, "csv")) f = OG_CLI_CSV;
    else if (!strcmp(value, "table")) f = OG_CLI_TABLE;
    else if (!r->accepted) return og_cli_usage(label, "takes no --format: %s", r->why);
    else return og_cli_usage(label, "--format must be %s (got '%s')", names(r->accepted), value);
    if (!r->accepted) return og_cli_usage(label, "takes no --format: %s", r->why);
    if (!(r->accepted & (1u << f)))
        return og_cli_usage(label, "--format %s is not available: %s prints %s", value, label, names(r->accepted));
    if (f == OG_CLI_TABLE && json_at >= 0) return og_cli_usage(label, "--json and --format table contradict each other");
    /* rewrite: json -> --json (once); table -> nothing (the verb's own report) */
    int drop = !strcmp(argv[at], "--format") ? 2 : 1;
    if (f == OG_CLI_JSON && json_at < 0) {
        argv[at] = "--json";
        drop--;
        at++;
    }
    if (drop) {
        memmove(argv + at, argv + at + drop, (size_t)(*argc - at - drop + 1) * sizeof *argv);
        *argc -= drop;
    }
    return 0;
}
