/*
 * export_csv.c — one type of a snapshot as CSV in the shape `load --csv` reads back
 * (load/csv_load.h, docs/load.md "CSV"), so export --format csv → load --csv round-trips.
 *
 * Columns: an unkeyed node's id as `:ID` (a keyed node's id is its key, which is a property
 * column); an edge's `:ID`, `from`, `to`; then every property in schema order.  Cells: null is
 * an empty cell, the empty string a quoted "" (load tells them apart), strings / enums / dates /
 * blobs ("base64:…") as their text, numbers and Bool as their JSON spelling, lists and vectors
 * as a JSON array in the cell — the encodings of the NDJSON export (og_export_value_json).  A
 * cell is quoted when it holds the delimiter, a quote, CR or LF (RFC 4180).
 */
#include "engine/export.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/layout.h"
#include "util/error.h"
#include "util/jsonout.h"

static int put_cell(FILE *out, const char *s, size_t n, char delim, int force_quote)
{
    int q = force_quote;
    for (size_t i = 0; i < n && !q; i++)
        if (s[i] == delim || s[i] == '"' || s[i] == '\r' || s[i] == '\n') q = 1;
    if (!q) return fwrite(s, 1, n, out) == n ? 0 : -1;
    if (fputc('"', out) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' && fputc('"', out) < 0) return -1;
        if (fputc(s[i], out) < 0) return -1;
    }
    return fputc('"', out) < 0 ? -1 : 0;
}

/* Cell i of column v (NULL: a property not stored, null everywhere). */
static og_status put_value(FILE *out, const og_vector *v, size_t i, char delim)
{
    if (!v || og_vector_is_null(v, i)) return OG_OK;
    json_t *j = og_export_value_json(v, i);
    if (!j) return og_err(OG_ERR_NOMEM, "out of memory");
    int rc;
    if (json_is_string(j)) {
        rc = put_cell(out, json_string_value(j), json_string_length(j), delim, json_string_length(j) == 0);
    } else {
        char *t = og_json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        rc = t ? put_cell(out, t, strlen(t), delim, 0) : -2;
        free(t);
    }
    json_decref(j);
    if (rc == -2) return og_err(OG_ERR_NOMEM, "out of memory");
    return rc ? og_err(OG_ERR_IO, "export: write failed") : OG_OK;
}

og_status og_engine_export_csv(og_engine *e, const char *branch, const char *commit, const char *type, char delim,
                               FILE *out)
{
    if (!delim) delim = ',';
    og_read *r;
    OG_TRY(og_read_begin(&r, e, branch, commit));
    const og_catalog *cat = og_read_catalog(r);
    const og_cat_type *t = og_catalog_node(cat, type);
    int is_edge = !t;
    if (!t) t = og_catalog_edge_ci(cat, type, strlen(type));
    og_status st = t ? OG_OK : og_err(OG_ERR_NOT_FOUND, "export: the schema has no type '%s'", type);
    og_tableview *v = NULL;
    const og_vector *id = NULL, *src = NULL, *dst = NULL, **props = NULL;
    if (st == OG_OK) st = is_edge ? og_read_edge_view(r, (size_t)(t - cat->edges), &v) : og_read_node_view(r, (size_t)(t - cat->nodes), &v);
    if (st == OG_OK) st = og_tableview_column(v, OG_FIELD_ID, &id);
    if (st == OG_OK && is_edge) st = og_tableview_column(v, OG_FIELD_SRC, &src);
    if (st == OG_OK && is_edge) st = og_tableview_column(v, OG_FIELD_DST, &dst);
    if (st == OG_OK && !(props = calloc(t->nprops ? t->nprops : 1, sizeof *props))) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t p = 0; st == OG_OK && p < t->nprops; p++) {
        int32_t fid;
        st = og_layout_field_id(t->props[p].id, &fid);
        if (st == OG_OK) st = og_tableview_column(v, fid, &props[p]);
        if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(v, fid)) og_error_clear(), st = OG_OK, props[p] = NULL;
    }
    /* the header */
    int with_id = is_edge || (st == OG_OK && t->nkey == 0);
    int bad = 0;
    if (st == OG_OK) {
        size_t k = 0;
        if (with_id) bad |= fprintf(out, ":ID") < 0, k++;
        if (is_edge) bad |= fprintf(out, "%cfrom%cto", delim, delim) < 0, k += 2;
        for (size_t p = 0; p < t->nprops; p++) {
            if (k++) bad |= fputc(delim, out) < 0;
            bad |= put_cell(out, t->props[p].name, strlen(t->props[p].name), delim, 0) < 0;
        }
        bad |= fputc('\n', out) < 0;
        if (bad) st = og_err(OG_ERR_IO, "export: write failed");
    }
    size_t n = st == OG_OK ? og_tableview_rows(v) : 0;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        size_t k = 0;
        if (with_id) st = put_value(out, id, i, delim), k++;
        if (st == OG_OK && is_edge) {
            if (fputc(delim, out) < 0) st = og_err(OG_ERR_IO, "export: write failed");
            if (st == OG_OK) st = put_value(out, src, i, delim);
            if (st == OG_OK && fputc(delim, out) < 0) st = og_err(OG_ERR_IO, "export: write failed");
            if (st == OG_OK) st = put_value(out, dst, i, delim);
            k += 2;
        }
        for (size_t p = 0; p < t->nprops && st == OG_OK; p++) {
            if (k++ && fputc(delim, out) < 0) st = og_err(OG_ERR_IO, "export: write failed");
            if (st == OG_OK) st = put_value(out, props[p], i, delim);
        }
        if (st == OG_OK && fputc('\n', out) < 0) st = og_err(OG_ERR_IO, "export: write failed");
    }
    if (st == OG_OK && fflush(out) != 0) st = og_err(OG_ERR_IO, "export: write failed");
    free(props);
    og_read_end(r);
    return st;
}
