/*
 * cmd_lint.c — `omnigraph lint --schema <file.pg> --query <file.gq> [--json] [--explain]`:
 * type-checks every query of a .gq file offline against a schema file (compiler/lint.h) and
 * prints, per query, its name, parameters, result columns with types and read/write sets.
 * Exit 1 when any query (or the file) has an error.  The JSON shape follows the reference
 * (`status, schema_source, query_path, queries_processed, errors, warnings, infos, results[],
 * findings[]`) with an added `params` list per result; see docs/query-language.md.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compiler/lint.h"
#include "compiler/schema.h"

static const char *lint_help =
    "usage: omnigraph lint --schema <file.pg> --query <file.gq> [--json] [--explain]\n"
    "\n"
    "Type-checks every query in the .gq file against the schema, offline.  Prints each\n"
    "query's parameters, result columns (with value kinds) and the node/edge types it reads\n"
    "and writes, then warnings (L201: a nullable property no update query sets; mutations\n"
    "without parameters).  Exit 0 when every query is valid, 1 otherwise.\n"
    "  --json      print the report as one JSON object\n"
    "  --explain   also print each valid query's typed IR (EXPLAIN-style)\n";

static json_t *access_json(const og_ir_access *a, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(a[i].is_edge ? "edge" : "node"));
        json_object_set_new(o, "type_name", json_string(a[i].name));
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *query_json(const og_lint_query *q, int explain)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(q->name));
    json_object_set_new(o, "kind", json_string(q->is_mutation ? "mutation" : "read"));
    json_object_set_new(o, "status", json_string(q->ok ? "ok" : "error"));
    if (q->nwarnings) {
        json_t *w = json_array();
        for (size_t i = 0; i < q->nwarnings; i++) json_array_append_new(w, json_string(q->warnings[i]));
        json_object_set_new(o, "warnings", w);
    }
    if (!q->ok) {
        json_object_set_new(o, "error", json_string(q->error));
        if (q->code[0]) json_object_set_new(o, "code", json_string(q->code));
        json_object_set_new(o, "line", json_integer(q->diag.line));
        json_object_set_new(o, "column", json_integer(q->diag.col));
        return o;
    }
    const og_ir_query *ir = q->ir;
    json_t *params = json_array();
    char tb[64];
    for (size_t i = 0; i < ir->nparams; i++) {
        json_t *p = json_object();
        og_qtype t = ir->params[i].type;
        t.nullable = 0;
        json_object_set_new(p, "name", json_string(ir->params[i].name));
        json_object_set_new(p, "type", json_string(og_lint_type_name(&t, tb, sizeof tb)));
        json_object_set_new(p, "nullable", json_boolean(ir->params[i].type.nullable));
        json_array_append_new(params, p);
    }
    json_object_set_new(o, "params", params);
    json_t *op = json_object();
    json_t *result = json_array();
    for (size_t i = 0; i < q->ncolumns; i++) {
        const og_lint_column *c = &q->columns[i];
        json_t *f = json_object();
        json_object_set_new(f, "name", json_string(c->name));
        json_object_set_new(f, "kind", json_string(c->kind));
        if (c->item_kind) json_object_set_new(f, "item_kind", json_string(c->item_kind));
        if (c->vector_dim) json_object_set_new(f, "vector_dim", json_integer(c->vector_dim));
        json_object_set_new(f, "nullable", json_boolean(c->nullable));
        json_array_append_new(result, f);
    }
    json_object_set_new(op, "result", result);
    json_object_set_new(op, "reads", access_json(ir->reads, ir->nreads));
    json_object_set_new(op, "writes", access_json(ir->writes, ir->nwrites));
    json_object_set_new(o, "operation", op);
    if (explain) {
        og_buf b = OG_BUF_INIT;
        if (og_ir_dump(&b, ir) == OG_OK) json_object_set_new(o, "explain", json_string(og_buf_cstr(&b)));
        og_buf_free(&b);
    }
    return o;
}

static json_t *report_json(const og_lint_report *r, const char *schema_path, const char *query_path,
                           int explain)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(r->ok ? "ok" : "error"));
    json_t *src = json_object();
    json_object_set_new(src, "kind", json_string("file"));
    json_object_set_new(src, "path", json_string(schema_path));
    json_object_set_new(o, "schema_source", src);
    json_object_set_new(o, "query_path", json_string(query_path));
    json_object_set_new(o, "queries_processed", json_integer((json_int_t)r->queries_processed));
    json_object_set_new(o, "errors", json_integer((json_int_t)r->errors));
    json_object_set_new(o, "warnings", json_integer((json_int_t)r->warnings));
    json_object_set_new(o, "infos", json_integer((json_int_t)r->infos));
    json_t *results = json_array();
    for (size_t i = 0; i < r->nqueries; i++) json_array_append_new(results, query_json(&r->queries[i], explain));
    json_object_set_new(o, "results", results);
    json_t *findings = json_array();
    for (size_t i = 0; i < r->nfindings; i++) {
        const og_lint_finding *f = &r->findings[i];
        json_t *j = json_object();
        json_object_set_new(j, "severity", json_string(f->warning ? "warning" : "error"));
        json_object_set_new(j, "code", json_string(f->code));
        json_object_set_new(j, "message", json_string(f->message));
        if (f->type_name) json_object_set_new(j, "type_name", json_string(f->type_name));
        if (f->property) json_object_set_new(j, "property", json_string(f->property));
        if (f->nquery_names) {
            json_t *qn = json_array();
            for (size_t k = 0; k < f->nquery_names; k++) json_array_append_new(qn, json_string(f->query_names[k]));
            json_object_set_new(j, "query_names", qn);
        }
        if (f->diag.line) {
            json_object_set_new(j, "line", json_integer(f->diag.line));
            json_object_set_new(j, "column", json_integer(f->diag.col));
        }
        json_array_append_new(findings, j);
    }
    json_object_set_new(o, "findings", findings);
    return o;
}

int og_cmd_lint(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(lint_help, stdout);
        return OG_EXIT_OK;
    }
    const char *schema_path = NULL, *query_path = NULL;
    int json = 0, explain = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--schema") && i + 1 < argc) schema_path = argv[++i];
        else if (!strcmp(argv[i], "--query") && i + 1 < argc) query_path = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--explain")) explain = 1;
        else if (argv[i][0] != '-')
            return og_cli_usage("lint", "graph-backed lint (%s) is not available offline; pass --schema <file.pg>",
                                argv[i]);
        else return og_cli_usage("lint", "unknown or incomplete option '%s'", argv[i]);
    }
    if (!query_path) return og_cli_usage("lint", "--query <file.gq> is required");
    if (!schema_path) return og_cli_usage("lint", "--schema <file.pg> is required (offline lint)");

    og_buf sbuf = OG_BUF_INIT, qbuf = OG_BUF_INIT;
    if (og_cli_read_file(schema_path, &sbuf) != OG_OK || og_cli_read_file(query_path, &qbuf) != OG_OK) {
        og_buf_free(&sbuf);
        og_buf_free(&qbuf);
        return OG_EXIT_FAIL;
    }
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    if (og_schema_compile(&cat, schema_path, (const char *)sbuf.data, sbuf.len, &d) != OG_OK) {
        og_buf b = OG_BUF_INIT;
        for (size_t i = 0; i < d.len; i++) og_diag_format(&b, &d.v[i]);
        fprintf(stderr, "omnigraph lint: invalid schema %s\n", schema_path);
        if (b.len) fwrite(b.data, 1, b.len, stderr);
        og_buf_free(&b);
        og_diags_free(&d);
        og_buf_free(&sbuf);
        og_buf_free(&qbuf);
        return OG_EXIT_FAIL;
    }
    og_diags_free(&d);
    og_lint_report r;
    int rc = OG_EXIT_FAIL;
    if (og_lint_run(&r, cat, query_path, (const char *)qbuf.data, qbuf.len) != OG_OK) {
        fprintf(stderr, "omnigraph lint: out of memory\n");
    } else {
        if (json) {
            json_t *j = report_json(&r, schema_path, query_path, explain);
            char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            if (s) printf("%s\n", s);
            free(s);
            json_decref(j);
        } else {
            og_buf b = OG_BUF_INIT;
            og_lint_render_text(&b, &r);
            for (size_t i = 0; explain && i < r.nqueries; i++)
                if (r.queries[i].ok) og_ir_dump(&b, r.queries[i].ir);
            og_cli_out(&b);
            og_buf_free(&b);
        }
        rc = r.ok ? OG_EXIT_OK : OG_EXIT_FAIL;
    }
    og_lint_report_free(&r);
    og_catalog_free(cat);
    og_buf_free(&sbuf);
    og_buf_free(&qbuf);
    return rc;
}
