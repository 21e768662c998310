/*
 * api_lint.c — og_db_lint: a .gq text checked against the schema of a graph's branch or
 * commit, as diagnostics with positions.  Editors (the studio's "Query" editor, through
 * POST /graphs/{id}/lint, docs/server.md) underline what the compiler would refuse while the
 * text is typed; the CLI's offline `omnigraph lint` reads the same report (compiler/lint.h)
 * from a schema file instead of a graph.  Nothing runs and nothing is read but the catalog.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/db.h"
#include "compiler/lint.h"
#include "engine/engine.h"
#include "util/error.h"

/* A message may quote the text, and a C caller's text need not be UTF-8: such a message is
 * replaced rather than dropped, so every diagnostic keeps its shape. */
static json_t *text_json(const char *s)
{
    json_t *j = json_string(s ? s : "");
    return j ? j : json_string("(the message quotes text that is not UTF-8)");
}

/* One diagnostic: severity, code, message, the query it belongs to (NULL: the file), and its
 * position — 1-based line and column (code points) and the byte span [start, end). */
static json_t *diag_json(const og_source *src, int warning, const char *code, const char *message,
                         const char *query, size_t start, size_t end)
{
    if (end < start) end = start;
    if (start > src->len) start = src->len;
    if (end > src->len) end = src->len;
    uint32_t line = 1, col = 1, eline = 1, ecol = 1;
    og_source_pos(src, start, &line, &col);
    og_source_pos(src, end, &eline, &ecol);
    json_t *d = json_object();
    json_object_set_new(d, "severity", json_string(warning ? "warning" : "error"));
    json_object_set_new(d, "code", json_string(code ? code : ""));
    json_object_set_new(d, "message", text_json(message));
    json_object_set_new(d, "query", query ? json_string(query) : json_null());
    json_object_set_new(d, "line", json_integer(line));
    json_object_set_new(d, "column", json_integer(col));
    json_object_set_new(d, "end_line", json_integer(eline));
    json_object_set_new(d, "end_column", json_integer(ecol));
    json_object_set_new(d, "start", json_integer((json_int_t)start));
    json_object_set_new(d, "end", json_integer((json_int_t)end));
    return d;
}

/* The report as the lint document of og_db_lint (include/omnigraph.h). */
static json_t *report_json(const og_lint_report *r)
{
    json_t *o = json_object(), *queries = json_array(), *diags = json_array();
    json_object_set_new(o, "ok", json_boolean(r->ok));
    json_object_set_new(o, "errors", json_integer((json_int_t)r->errors));
    json_object_set_new(o, "warnings", json_integer((json_int_t)r->warnings));
    for (size_t i = 0; i < r->nfindings; i++) { /* Q000 comes alone; L201 has no position */
        const og_lint_finding *f = &r->findings[i];
        size_t start = f->diag.line ? f->diag.start : 0, end = f->diag.line ? f->diag.end : 0;
        json_t *d = diag_json(&r->src, f->warning, f->code, f->message, NULL, start, end);
        if (!f->diag.line) { /* a file-level finding: no place in the text */
            json_object_set_new(d, "line", json_null());
            json_object_set_new(d, "column", json_null());
            json_object_set_new(d, "end_line", json_null());
            json_object_set_new(d, "end_column", json_null());
            json_object_set_new(d, "start", json_null());
            json_object_set_new(d, "end", json_null());
        }
        if (f->diag.hint) json_object_set_new(d, "hint", text_json(f->diag.hint));
        json_array_append_new(diags, d);
    }
    for (size_t i = 0; i < r->nqueries; i++) {
        const og_lint_query *q = &r->queries[i];
        const og_query *ast = r->file ? &r->file->queries[i] : NULL;
        json_array_append_new(queries, json_pack("{s:s,s:s,s:b}", "name", q->name, "kind",
                                                 q->is_mutation ? "mutation" : "read", "ok", q->ok));
        if (!q->ok) {
            json_t *d = diag_json(&r->src, 0, q->code, q->diag.message ? q->diag.message : q->error, q->name,
                                  q->diag.start, q->diag.end);
            if (q->diag.hint) json_object_set_new(d, "hint", text_json(q->diag.hint));
            json_array_append_new(diags, d);
        }
        /* a query's warnings are about the query as a whole: they point at its name */
        for (size_t k = 0; k < q->nwarnings; k++)
            json_array_append_new(diags, diag_json(&r->src, 1, "", q->warnings[k], q->name,
                                                   ast ? ast->name_span.start : 0, ast ? ast->name_span.end : 0));
    }
    json_object_set_new(o, "queries", queries);
    json_object_set_new(o, "diagnostics", diags);
    return o;
}

og_status og_db_lint(char **out, og_db *db, const char *source, size_t len, const og_read_opts *at)
{
    *out = NULL;
    if (!source) return og_err(OG_ERR_INVALID, "the query text is missing");
    char cbuf[27];
    const char *commit;
    OG_TRY(og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit));
    og_read *rd;
    OG_TRY(og_read_begin(&rd, db->e, at ? at->branch : NULL, commit));
    og_lint_report rep;
    og_status st = og_lint_run(&rep, og_read_catalog(rd), "<query>", source, len);
    if (st == OG_OK) {
        json_t *j = report_json(&rep);
        *out = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!*out) st = og_err(OG_ERR_NOMEM, "out of memory");
    } else {
        st = og_err(st, "out of memory");
    }
    og_lint_report_free(&rep);
    og_read_end(rd);
    return st;
}
