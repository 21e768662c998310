/*
 * rows_text.c — the text formats of a result, CSV and the aligned table, laid out from a grid
 * of cells whatever holds them: og_rows in process (rows.c), or a query result a server
 * answered (og_read_output_render, for the CLI's and the shell's --server mode).
 *
 * Why one layout: a remote client must print byte for byte what the embedded one prints
 * (tests/cli/remote-parity.sh), and two copies of the widths, cuts and quoting drift apart.
 * Only reading a cell differs between the two sources; the grid asks its source for each
 * cell's text and kind.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "api/rows.h"
#include "util/budget.h"
#include "util/buf.h"
#include "util/error.h"

static void csv_field(og_buf *out, const char *s, size_t n)
{
    int quote = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') quote = 1;
    if (!quote) {
        og_buf_append(out, s, n);
        return;
    }
    og_buf_append_byte(out, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') og_buf_append_byte(out, '"');
        og_buf_append_byte(out, (uint8_t)s[i]);
    }
    og_buf_append_byte(out, '"');
}

/* Display width of UTF-8 text in terminal columns (East Asian wide = 2, combining marks and
 * zero-width = 0, utf8proc's tables); bytes that are not UTF-8 count 1 each. */
static size_t text_width(const uint8_t *s, size_t n)
{
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

static size_t name_width(const char *s) { return text_width((const uint8_t *)s, strlen(s)); }

/* Cuts b to at most `max` columns (on a character boundary), ending in "...".  Returns 1 when
 * it cut. */
static int truncate_width(og_buf *b, size_t max)
{
    if (text_width(b->data, b->len) <= max) return 0;
    size_t w = 0, i = 0;
    while (i < b->len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(b->data + i, (utf8proc_ssize_t)(b->len - i), &cp);
        size_t cw = k <= 0 ? 1 : (utf8proc_charwidth(cp) > 0 ? (size_t)utf8proc_charwidth(cp) : 0);
        if (w + cw > max - 3) break;
        w += cw;
        i += k <= 0 ? 1 : (size_t)k;
    }
    b->len = i;
    og_buf_append_str(b, "...");
    return 1;
}

static void pad(og_buf *out, size_t n)
{
    while (n--) og_buf_append_byte(out, ' ');
}

/* CSV (RFC 4180, CRLF): a null cell is an empty field, an empty string "". */
static og_status render_csv(og_buf *out, const og_text_grid *g)
{
    for (size_t c = 0; c < g->ncols; c++) {
        if (c) og_buf_append_byte(out, ',');
        const char *name = g->name(g->ctx, c);
        csv_field(out, name, strlen(name));
    }
    og_buf_append_str(out, "\r\n");
    og_buf cell = OG_BUF_INIT;
    og_status st = OG_OK;
    for (size_t i = 0; i < g->nrows; i++) {
        if ((st = og_budget_check())) break;
        for (size_t c = 0; c < g->ncols; c++) {
            if (c) og_buf_append_byte(out, ',');
            og_buf_reset(&cell);
            og_text_cell kind = g->cell(g->ctx, i, c, &cell);
            if (!cell.len && kind != OG_TEXT_NULL)
                og_buf_append_str(out, "\"\""); /* an empty string; a null is an empty field */
            else
                csv_field(out, cell.data ? (const char *)cell.data : "", cell.len);
        }
        og_buf_append_str(out, "\r\n");
    }
    og_buf_free(&cell);
    return st;
}

/* An aligned table. A null cell is empty; an empty string is shown as "" (so neither can be
 * mistaken for the other, nor for the text "null"). */
static og_status render_table(og_buf *out, const og_text_grid *g, int wide)
{
    size_t cut = 0;
    size_t nc = g->ncols, nr = g->nrows;
    size_t *w = calloc(nc ? nc : 1, sizeof *w);
    size_t *cw = calloc(nc * nr + 1, sizeof *cw);
    og_buf *cells = calloc(nc * nr + 1, sizeof *cells);
    if (!w || !cells || !cw) {
        free(w), free(cells), free(cw);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t c = 0; c < nc; c++) w[c] = name_width(g->name(g->ctx, c));
    og_status st = OG_OK;
    for (size_t i = 0; i < nr && st == OG_OK; i++)
        for (size_t c = 0; c < nc && (c || (st = og_budget_check()) == OG_OK); c++) {
            og_buf *b = &cells[i * nc + c];
            og_text_cell kind = g->cell(g->ctx, i, c, b);
            if (b->len == 0 && kind == OG_TEXT_STRING) og_buf_append_str(b, "\"\"");
            for (size_t k = 0; k < b->len; k++)
                if (b->data[k] == '\n' || b->data[k] == '\t' || b->data[k] == '\r') b->data[k] = ' ';
            if (!wide) cut += (size_t)truncate_width(b, 60); /* keep tables readable */
            cw[i * nc + c] = text_width(b->data, b->len);
            if (cw[i * nc + c] > w[c]) w[c] = cw[i * nc + c];
        }
    if (st == OG_OK) {
        for (size_t c = 0; c < nc; c++) {
            const char *name = g->name(g->ctx, c);
            if (c) og_buf_append_str(out, "  ");
            og_buf_append_str(out, name);
            if (c + 1 < nc) pad(out, w[c] - name_width(name));
        }
        og_buf_append_byte(out, '\n');
        for (size_t c = 0; c < nc; c++) {
            if (c) og_buf_append_str(out, "  ");
            for (size_t k = 0; k < w[c]; k++) og_buf_append_byte(out, '-');
        }
        og_buf_append_byte(out, '\n');
        for (size_t i = 0; i < nr; i++) {
            for (size_t c = 0; c < nc; c++) {
                og_buf *b = &cells[i * nc + c];
                if (c) og_buf_append_str(out, "  ");
                if (b->len) og_buf_append(out, b->data, b->len);
                if (c + 1 < nc) pad(out, w[c] - cw[i * nc + c]);
            }
            og_buf_append_byte(out, '\n');
        }
        og_buf_printf(out, "(%zu row%s", nr, nr == 1 ? "" : "s");
        if (cut) /* say so: a cut value must never pass for the value */
            og_buf_printf(out, "; %zu cell%s cut at 60 columns, shown ending in \"...\": --wide shows them whole", cut,
                          cut == 1 ? "" : "s");
        og_buf_append_str(out, ")\n");
    }
    for (size_t k = 0; k < nc * nr; k++) og_buf_free(&cells[k]);
    free(cells);
    free(cw);
    free(w);
    return st;
}

og_status og_text_take(og_buf *b, og_status st, char **out, size_t *len)
{
    if (st) {
        og_buf_free(b);
        return st;
    }
    og_buf_cstr(b);
    if (len) *len = b->len;
    *out = (char *)og_buf_take(b).data;
    if (!*out) *out = strdup("");
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

og_status og_text_grid_render(og_buf *out, const og_text_grid *g, og_format fmt)
{
    if (fmt == OG_FORMAT_CSV) return render_csv(out, g);
    return render_table(out, g, fmt == OG_FORMAT_TABLE_WIDE);
}

/* ---- a served result ------------------------------------------------------------------------ */

typedef struct served {
    json_t *cols, *rows;
} served;

static const char *served_name(const void *ctx, size_t c)
{
    const char *s = json_string_value(json_array_get(((const served *)ctx)->cols, c));
    return s ? s : "";
}

/* A cell as the embedded renderer prints it: a string raw, anything else compact JSON (a U64
 * above 2^63-1 its digits), a null cell (its key left out of the row) nothing.  A key present
 * with the value null is a NaN or an infinity, which the embedded text spells as its JSON:
 * "null". */
static og_text_cell served_cell(const void *ctx, size_t row, size_t col, og_buf *out)
{
    const served *s = ctx;
    json_t *v = json_object_get(json_array_get(s->rows, row), served_name(ctx, col));
    if (!v) return OG_TEXT_NULL;
    if (og_json_digits(v)) {
        og_buf_append_str(out, og_json_digits(v));
        return OG_TEXT_OTHER;
    }
    if (json_is_string(v)) {
        og_buf_append(out, json_string_value(v), json_string_length(v));
        return OG_TEXT_STRING;
    }
    char *t = og_json_text(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (t) og_buf_append_str(out, t);
    og_free(t);
    return OG_TEXT_OTHER;
}

static og_status append_json_line(og_buf *b, const json_t *j, size_t flags)
{
    char *s = og_json_text(j, flags);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory rendering a served result");
    og_buf_printf(b, "%s\n", s);
    og_free(s);
    return OG_OK;
}

og_status og_read_output_render(char **out, size_t *len, const struct json_t *j, og_format fmt)
{
    *out = NULL;
    if (len) *len = 0;
    json_t *cols = json_object_get(j, "columns"), *rows = json_object_get(j, "rows");
    if (!json_is_array(cols) || !json_is_array(rows))
        return og_err(OG_ERR_INVALID, "a served query result has \"columns\" and \"rows\" arrays");
    if (fmt == OG_FORMAT_ARROW)
        return og_err(OG_ERR_INVALID, "a served result is rendered as text; ask the server for Arrow instead");
    og_buf b = OG_BUF_INIT;
    og_status st = OG_OK;
    if (fmt == OG_FORMAT_JSON) {
        st = append_json_line(&b, j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    } else if (fmt == OG_FORMAT_JSONL) {
        json_t *m = json_pack("{s:O?,s:O?,s:O?,s:O,s:O?}", "query_name", json_object_get(j, "query_name"), "target",
                              json_object_get(j, "target"), "row_count", json_object_get(j, "row_count"), "columns",
                              cols, "graph_commit_id", json_object_get(j, "graph_commit_id"));
        st = m ? append_json_line(&b, m, JSON_COMPACT | JSON_PRESERVE_ORDER) : og_err(OG_ERR_NOMEM, "out of memory");
        json_decref(m);
        for (size_t i = 0; i < json_array_size(rows) && st == OG_OK; i++)
            st = append_json_line(&b, json_array_get(rows, i), JSON_COMPACT | JSON_PRESERVE_ORDER);
    } else {
        served s = {cols, rows};
        og_text_grid g = {json_array_size(cols), json_array_size(rows), served_name, served_cell, &s};
        st = og_text_grid_render(&b, &g, fmt);
    }
    if (st == OG_OK && b.failed) st = og_err(OG_ERR_NOMEM, "out of memory rendering a served result");
    return og_text_take(&b, st, out, len);
}
