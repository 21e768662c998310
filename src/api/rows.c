/*
 * rows.c — og_rows accessors and rendering (JSON, JSONL; CSV and the aligned table through
 * rows_text.c).
 *
 * JSON value encoding (docs/query-language.md "Values in JSON", the reference's Arrow JSON
 * writer): a null cell left out of its row object (its key absent); Date "YYYY-MM-DD", DateTime
 * "YYYY-MM-DDTHH:MM:SS[.mmm]" (no zone letter, no zero fraction), integers bare at any width (a
 * U64 above 2^63-1 too), reals shortest with the exponent form from 1e10 and below 1e-5, NaN /
 * ±Infinity null, lists and vectors as arrays (a null item stays null).
 *
 * JSON is written straight into the output buffer (og_rows_render_json_direct, below: every query answer
 * of the CLI, the server and MCP goes through it); the jansson tree it replaced stays as the
 * fallback for what it does not write itself, and as the reference tests/api compares it to.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/arrow.h"
#include "api/rows.h"
#include "engine/jsonval.h"
#include "util/budget.h"
#include "util/buf.h"
#include "util/datetime.h"
#include "util/error.h"
#include "util/jsonout.h"
#include "util/utf8.h"


og_status og_rows_finish(og_rows *r, const char *name)
{
    (void)name;
    r->query_name = strdup(r->res.query ? r->res.query : "query");
    r->type_names = calloc(r->res.ncols ? r->res.ncols : 1, sizeof *r->type_names);
    if (!r->query_name || !r->type_names) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < r->res.ncols; c++) {
        /* the query language's spelling: an enum is a String, a bare node variable its id */
        const og_qtype *t = &r->res.types[c];
        char base[48], buf[64];
        og_type_name(t->node_type >= 0 ? (og_type){OG_T_STRING, OG_T_NULL, 0} : t->t, base, sizeof base);
        if (t->node_type >= 0 && t->is_object) snprintf(base, sizeof base, "Object"); /* `return { $p }` */
        snprintf(buf, sizeof buf, "%s%s", base, t->nullable ? "?" : "");
        r->type_names[c] = strdup(buf);
        if (!r->type_names[c]) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    return OG_OK;
}

void og_rows_free(og_rows *r)
{
    if (!r) return;
    for (size_t c = 0; r->type_names && c < r->res.ncols; c++) free(r->type_names[c]);
    free(r->type_names);
    free(r->query_name);
    og_result_free(&r->res);
    free(r);
}

size_t og_rows_count(const og_rows *r) { return r->res.nrows; }
size_t og_rows_width(const og_rows *r) { return r->res.ncols; }
const char *og_rows_column_name(const og_rows *r, size_t col) { return col < r->res.ncols ? r->res.names[col] : NULL; }
const char *og_rows_column_type(const og_rows *r, size_t col) { return col < r->res.ncols ? r->type_names[col] : NULL; }
const char *og_rows_commit(const og_rows *r) { return r->commit; }
const char *og_rows_query_name(const og_rows *r) { return r->query_name; }

static const og_vector *cell(const og_rows *r, size_t row, size_t col)
{
    if (col >= r->res.ncols || row >= r->res.nrows) return NULL;
    return &r->res.cols[col];
}

int og_rows_is_null(const og_rows *r, size_t row, size_t col)
{
    const og_vector *v = cell(r, row, col);
    return !v || og_vector_is_null(v, row);
}

int64_t og_rows_int(const og_rows *r, size_t row, size_t col)
{
    const og_vector *v = cell(r, row, col);
    if (!v || og_vector_is_null(v, row)) return 0;
    switch (v->type.id) {
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: return og_vector_get_i64(v, row);
    default: return 0;
    }
}

uint64_t og_rows_uint(const og_rows *r, size_t row, size_t col)
{
    const og_vector *v = cell(r, row, col);
    if (!v || og_vector_is_null(v, row) || (v->type.id != OG_T_U32 && v->type.id != OG_T_U64)) return 0;
    return og_vector_get_u64(v, row);
}

double og_rows_float(const og_rows *r, size_t row, size_t col)
{
    const og_vector *v = cell(r, row, col);
    if (!v || og_vector_is_null(v, row) || (v->type.id != OG_T_F32 && v->type.id != OG_T_F64)) return 0;
    return og_vector_get_f64(v, row);
}

int og_rows_bool(const og_rows *r, size_t row, size_t col)
{
    const og_vector *v = cell(r, row, col);
    if (!v || og_vector_is_null(v, row) || v->type.id != OG_T_BOOL) return 0;
    return og_vector_get_bool(v, row);
}

const char *og_rows_string(const og_rows *r, size_t row, size_t col, size_t *len)
{
    const og_vector *v = cell(r, row, col);
    if (len) *len = 0;
    if (!v || og_vector_is_null(v, row) || v->type.id != OG_T_STRING) return NULL;
    size_t n;
    const uint8_t *p = og_vector_get_bytes(v, row, &n);
    if (len) *len = n;
    return (const char *)p;
}

/* ---- values as JSON ------------------------------------------------------------------------ */

/* The one value encoder (engine/jsonval.h); a U64 above 2^63-1 a bare number too. */
static json_t *value_json(const og_vector *v, size_t i) { return og_jsonval_cell(v, i, OG_CELL_BIG_U64); }

/* A cell; a node object column (`return { $p }`) holds the object's JSON text, read back
 * with its numbers whole (a U64 above 2^63-1, which jansson refuses, stays a number), so the
 * object is always an object. */
static json_t *cell_json(const og_rows *r, size_t c, size_t i)
{
    const og_vector *v = &r->res.cols[c];
    if (r->res.types[c].is_object && v->type.id == OG_T_STRING && !og_vector_is_null(v, i)) {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        json_t *o = og_json_load_wide((const char *)p, n);
        if (o) return o;
    }
    return value_json(v, i);
}

/* A row object: a null cell is left out (its key absent), as the reference's rows spell it;
 * `columns` still names every column, and CSV and the table keep the empty cell. */
static json_t *row_json(const og_rows *r, size_t i)
{
    json_t *o = json_object();
    for (size_t c = 0; o && c < r->res.ncols; c++)
        if (!og_vector_is_null(&r->res.cols[c], i)) json_object_set_new(o, r->res.names[c], cell_json(r, c, i));
    return o;
}

static json_t *meta_json(const og_rows *r, const char *target)
{
    json_t *m = json_object();
    json_object_set_new(m, "query_name", json_string(r->query_name));
    json_object_set_new(m, "target", json_string(target ? target : "main"));
    json_object_set_new(m, "row_count", json_integer((json_int_t)r->res.nrows));
    json_t *cols = json_array();
    for (size_t c = 0; c < r->res.ncols; c++) json_array_append_new(cols, json_string(r->res.names[c]));
    json_object_set_new(m, "columns", cols);
    return m;
}

/* Plain text of a cell (CSV and table). */
static void cell_text(const og_vector *v, size_t i, og_buf *out)
{
    if (og_vector_is_null(v, i)) return;
    if (v->type.id == OG_T_STRING || v->type.id == OG_T_BLOB) {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        og_buf_append(out, p, n);
        return;
    }
    json_t *j = value_json(v, i);
    if (og_json_bignum_digits(j)) {
        og_buf_append_str(out, og_json_bignum_digits(j));
    } else if (json_is_string(j)) {
        og_buf_append_str(out, json_string_value(j));
    } else {
        char *s = og_json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        if (s) og_buf_append_str(out, s);
        free(s);
    }
    json_decref(j);
}

static const char *rows_name(const void *ctx, size_t c) { return ((const og_rows *)ctx)->res.names[c]; }

static og_text_cell rows_cell(const void *ctx, size_t row, size_t col, og_buf *out)
{
    const og_vector *v = &((const og_rows *)ctx)->res.cols[col];
    if (og_vector_is_null(v, row)) return OG_TEXT_NULL;
    cell_text(v, row, out);
    return v->type.id == OG_T_STRING ? OG_TEXT_STRING : OG_TEXT_OTHER;
}

/* ---- JSON written directly ------------------------------------------------------------------
 *
 * The bytes og_json_dumps(tree, JSON_INDENT(2) | JSON_PRESERVE_ORDER) prints for the tree of
 * meta_json + row_json, written with no tree: no allocation per value, no hash table per row.
 * Where the tree would behave in a way of its own, og_rows_render_json_direct returns -1 and the caller
 * renders the tree instead: an object column (its JSON text is parsed and re-indented), a
 * column name that is not UTF-8 or appears twice (jansson drops or replaces the member), a
 * string or target that is not UTF-8 (jansson refuses it; the tree loses the member).
 * tests/api/test_rows_json.c compares the two byte for byte. */

#define JSON_LAYOUT (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

static void put_str(og_buf *b, const char *s, size_t n) { og_json_put_string(b, s, n, JSON_LAYOUT); }

static void put_real(og_buf *b, double d)
{
    if (!isfinite(d)) {
        og_buf_append_str(b, "null");
    } else {
        char num[40];
        og_buf_append(b, num, og_json_format_real(d, num));
    }
}

/* One cell as og_jsonval_cell(v, i, OG_CELL_BIG_U64) + og_json_dumps spell it; `depth` is the
 * value's depth in the document (its array items sit one deeper).  -1: not UTF-8. */
static int put_cell(og_buf *b, const og_vector *v, size_t i, int depth)
{
    if (og_vector_is_null(v, i)) {
        og_buf_append_str(b, "null");
        return 0;
    }
    switch (v->type.id) {
    case OG_T_BOOL: og_buf_append_str(b, og_vector_get_bool(v, i) ? "true" : "false"); return 0;
    case OG_T_I32: case OG_T_I64: og_buf_printf(b, "%lld", (long long)og_vector_get_i64(v, i)); return 0;
    case OG_T_U32: case OG_T_U64: og_buf_printf(b, "%llu", (unsigned long long)og_vector_get_u64(v, i)); return 0;
    case OG_T_F32: put_real(b, og_json_f32((float)og_vector_get_f64(v, i))); return 0;
    case OG_T_F64: put_real(b, og_vector_get_f64(v, i)); return 0;
    case OG_T_DATE32: {
        char d[11];
        og_date_format((int32_t)og_vector_get_i64(v, i), d);
        put_str(b, d, strlen(d));
        return 0;
    }
    case OG_T_DATE64: {
        char d[25];
        og_datetime_format_value(og_vector_get_i64(v, i), d);
        put_str(b, d, strlen(d));
        return 0;
    }
    case OG_T_STRING: case OG_T_BLOB: { /* a Blob, in this mode, is its bytes as text */
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        if (!og_utf8_valid(p, n)) return -1;
        put_str(b, (const char *)p, n);
        return 0;
    }
    case OG_T_VECTOR: case OG_T_LIST: {
        size_t k0 = 0, k1 = v->type.dim;
        const float *f = NULL;
        if (v->type.id == OG_T_VECTOR) f = og_vector_get_floats(v, i);
        else og_vector_get_list(v, i, &k0, &k1);
        og_buf_append_byte(b, '[');
        if (k0 == k1) {
            og_buf_append_byte(b, ']');
            return 0;
        }
        for (size_t k = k0; k < k1; k++) {
            if (k > k0) og_buf_append_byte(b, ',');
            og_json_put_indent(b, JSON_LAYOUT, depth + 1, k > k0);
            if (f) put_real(b, og_json_f32(f[k]));
            else if (put_cell(b, v->child, k, depth + 1)) return -1;
        }
        og_json_put_indent(b, JSON_LAYOUT, depth, 0);
        og_buf_append_byte(b, ']');
        return 0;
    }
    default: og_buf_append_str(b, "null"); return 0;
    }
}

int og_rows_render_json_direct(og_buf *b, const og_rows *r, const char *target)
{
    const og_result *res = &r->res;
    const char *tg = target ? target : "main";
    if (!og_utf8_valid((const uint8_t *)r->query_name, strlen(r->query_name)) ||
        !og_utf8_valid((const uint8_t *)tg, strlen(tg)))
        return -1;
    for (size_t c = 0; c < res->ncols; c++) {
        if (res->types[c].is_object || !og_utf8_valid((const uint8_t *)res->names[c], strlen(res->names[c]))) return -1;
        for (size_t d = 0; d < c; d++)
            if (!strcmp(res->names[c], res->names[d])) return -1;
    }
    og_buf_append_str(b, "{\n  \"query_name\": ");
    put_str(b, r->query_name, strlen(r->query_name));
    og_buf_append_str(b, ",\n  \"target\": ");
    put_str(b, tg, strlen(tg));
    og_buf_printf(b, ",\n  \"row_count\": %lld,\n  \"columns\": ", (long long)res->nrows);
    if (!res->ncols) og_buf_append_str(b, "[]");
    for (size_t c = 0; c < res->ncols; c++) {
        og_buf_append_str(b, c ? ",\n    " : "[\n    ");
        put_str(b, res->names[c], strlen(res->names[c]));
        if (c + 1 == res->ncols) og_buf_append_str(b, "\n  ]");
    }
    og_buf_append_str(b, ",\n  \"rows\": ");
    if (!res->nrows) og_buf_append_str(b, "[]");
    for (size_t i = 0; i < res->nrows; i++) {
        if (og_budget_check()) return OG_ROWS_RENDER_STOPPED;
        og_buf_append_str(b, i ? ",\n    " : "[\n    ");
        size_t put = 0; /* cells written: a null cell is left out of its row */
        for (size_t c = 0; c < res->ncols; c++) {
            if (og_vector_is_null(&res->cols[c], i)) continue;
            og_buf_append_str(b, put++ ? ",\n      " : "{\n      ");
            put_str(b, res->names[c], strlen(res->names[c]));
            og_buf_append_str(b, ": ");
            if (put_cell(b, &res->cols[c], i, 3)) return -1;
        }
        og_buf_append_str(b, put ? "\n    }" : "{}");
        if (i + 1 == res->nrows) og_buf_append_str(b, "\n  ]");
    }
    og_buf_append_str(b, ",\n  \"graph_commit_id\": ");
    put_str(b, r->commit, strlen(r->commit));
    og_buf_append_str(b, "\n}\n");
    return 0;
}

/* The JSON document through the jansson tree (the direct writer's fallback, and what tests
 * compare it with). */
og_status og_rows_render_json_tree(og_buf *b, const og_rows *r, const char *target)
{
    json_t *o = meta_json(r, target);
    json_t *rows = json_array();
    for (size_t i = 0; i < r->res.nrows; i++) {
        og_status st = og_budget_check();
        if (st) {
            json_decref(rows);
            json_decref(o);
            return st;
        }
        json_array_append_new(rows, row_json(r, i));
    }
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "graph_commit_id", json_string(r->commit));
    char *s = og_json_dumps(o, JSON_LAYOUT);
    json_decref(o);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = og_buf_append_str(b, s);
    if (st == OG_OK) st = og_buf_append_byte(b, '\n');
    free(s);
    return st;
}

og_status og_rows_render_in_budget(char **out, size_t *len, const og_rows *r, og_format fmt, const char *target)
{
    *out = NULL;
    if (!r) return og_err(OG_ERR_INVALID, "render: no rows");
    og_query_budget qb; /* the query's own deadline, not a fresh one: the budget covers both */
    og_budget_begin(&qb, r->time_ms, 0);
    qb.deadline_ms = r->deadline_ms;
    qb.what = "query (rendering its rows)";
    og_status st = og_budget_check(); /* the first check reads the clock */
    if (st == OG_OK) st = og_rows_render(out, len, r, fmt, target);
    og_budget_end(&qb);
    return st;
}

og_status og_rows_render(char **out, size_t *len, const og_rows *r, og_format fmt, const char *target)
{
    *out = NULL;
    og_buf b = OG_BUF_INIT;
    og_status st = OG_OK;
    if (fmt == OG_FORMAT_JSON) {
        int direct = og_rows_render_json_direct(&b, r, target);
        if (direct == OG_ROWS_RENDER_STOPPED) {
            st = og_budget_check(); /* a tripped budget stays tripped: its error again */
        } else if (direct) {
            og_buf_reset(&b);
            st = og_rows_render_json_tree(&b, r, target);
        } else if (b.failed) { /* the direct writer does not check each append */
            st = og_err(OG_ERR_NOMEM, "out of memory rendering %zu rows", r->res.nrows);
        }
    } else if (fmt == OG_FORMAT_JSONL) {
        json_t *m = meta_json(r, target);
        json_object_set_new(m, "graph_commit_id", json_string(r->commit));
        char *s = og_json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(m);
        if (s) og_buf_printf(&b, "%s\n", s);
        free(s);
        for (size_t i = 0; i < r->res.nrows && st == OG_OK; i++) {
            if ((st = og_budget_check())) break;
            json_t *o = row_json(r, i);
            s = og_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
            json_decref(o);
            if (s) og_buf_printf(&b, "%s\n", s);
            free(s);
        }
    } else if (fmt == OG_FORMAT_ARROW) {
        st = og_rows_render_arrow(&b, r);
    } else { /* CSV, the table */
        og_text_grid g = {r->res.ncols, r->res.nrows, rows_name, rows_cell, r};
        st = og_text_grid_render(&b, &g, fmt);
    }
    return og_text_take(&b, st, out, len);
}
