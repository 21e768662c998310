/*
 * export.c — NDJSON export of a snapshot.  See export.h.
 *
 * Value encodings are the ones load accepts (og_jsonval_cell): Date "YYYY-MM-DD", DateTime
 * RFC 3339 with milliseconds, Blob "base64:<payload>", integers as JSON numbers (a U64 above
 * 2^63-1 too), floats in their shortest round-trip spelling, vectors and lists as arrays.
 * The id rides at the top level beside "type" / "edge" (the reference's envelope).  Null properties are left out (load reads a missing nullable as null).
 */
#include "engine/export.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/jsonval.h"
#include "engine/layout.h"
#include "util/jsonout.h"
#include "util/datetime.h"
#include "util/error.h"

json_t *og_export_value_json(const og_vector *v, size_t i)
{
    return og_jsonval_cell(v, i, OG_CELL_BLOB_BASE64 | OG_CELL_BIG_U64);
}

static og_status export_type(og_read *r, const og_cat_type *t, size_t index, FILE *out)
{
    og_tableview *v;
    OG_TRY(t->kind == OG_KIND_EDGE ? og_read_edge_view(r, index, &v) : og_read_node_view(r, index, &v));
    size_t n = og_tableview_rows(v);
    if (!n) return OG_OK;
    const og_vector *id, *src = NULL, *dst = NULL;
    OG_TRY(og_tableview_column(v, OG_FIELD_ID, &id));
    if (t->kind == OG_KIND_EDGE) {
        OG_TRY(og_tableview_column(v, OG_FIELD_SRC, &src));
        OG_TRY(og_tableview_column(v, OG_FIELD_DST, &dst));
    }
    const og_vector **props = calloc(t->nprops ? t->nprops : 1, sizeof *props);
    if (!props) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    for (size_t p = 0; p < t->nprops && st == OG_OK; p++) {
        int32_t fid;
        st = og_layout_field_id(t->props[p].id, &fid);
        if (st == OG_OK) st = og_tableview_column(v, fid, &props[p]);
        if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(v, fid))
            og_error_clear(), st = OG_OK, props[p] = NULL; /* not stored: null everywhere */
    }
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        json_t *o = json_object(), *data = json_object();
        if (!o || !data) {
            json_decref(o);
            json_decref(data);
            st = og_err(OG_ERR_NOMEM, "out of memory");
            break;
        }
        json_object_set_new(o, t->kind == OG_KIND_EDGE ? "edge" : "type", json_string(t->name));
        json_object_set_new(o, "id", og_export_value_json(id, i)); /* top-level, as the reference */
        if (t->kind == OG_KIND_EDGE) {
            json_object_set_new(o, "from", og_export_value_json(src, i));
            json_object_set_new(o, "to", og_export_value_json(dst, i));
        }
        for (size_t p = 0; p < t->nprops; p++)
            if (props[p] && !og_vector_is_null(props[p], i))
                json_object_set_new(data, t->props[p].name, og_export_value_json(props[p], i));
        json_object_set_new(o, "data", data);
        char *line = og_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (!line) {
            st = og_err(OG_ERR_NOMEM, "out of memory");
            break;
        }
        if (fputs(line, out) < 0 || fputc('\n', out) < 0) st = og_err(OG_ERR_IO, "export: write failed");
        free(line);
    }
    free(props);
    return st;
}

static int wanted(const og_cat_type *t, const char *const *types, size_t ntypes)
{
    if (!ntypes) return 1;
    for (size_t i = 0; i < ntypes; i++)
        if (t->kind == OG_KIND_EDGE ? !strcasecmp(types[i], t->name) : !strcmp(types[i], t->name)) return 1;
    return 0;
}

og_status og_engine_export(og_engine *e, const char *branch, const char *commit, const char *const *types,
                           size_t ntypes, FILE *out)
{
    og_read *r;
    OG_TRY(og_read_begin(&r, e, branch, commit));
    const og_catalog *cat = og_read_catalog(r);
    og_status st = OG_OK;
    for (size_t i = 0; i < ntypes && st == OG_OK; i++)
        if (!og_catalog_node(cat, types[i]) && !og_catalog_edge_ci(cat, types[i], strlen(types[i])))
            st = og_err(OG_ERR_NOT_FOUND, "export: the schema has no type '%s'", types[i]);
    for (size_t i = 0; i < cat->nnodes && st == OG_OK; i++)
        if (wanted(&cat->nodes[i], types, ntypes)) st = export_type(r, &cat->nodes[i], i, out);
    for (size_t i = 0; i < cat->nedges && st == OG_OK; i++)
        if (wanted(&cat->edges[i], types, ntypes)) st = export_type(r, &cat->edges[i], i, out);
    if (st == OG_OK && fflush(out) != 0) st = og_err(OG_ERR_IO, "export: write failed");
    og_read_end(r);
    return st;
}
