/*
 * export.c — NDJSON export of a snapshot.  See export.h.
 *
 * Value encodings are the ones load accepts: Date "YYYY-MM-DD", DateTime RFC 3339 with
 * milliseconds, Blob "base64:<payload>", U64 above 2^63-1 as a decimal string, vectors and
 * lists as arrays.  Null properties are left out (load reads a missing nullable as null).
 */
#include "engine/export.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/layout.h"
#include "util/datetime.h"
#include "util/error.h"

json_t *og_export_value_json(const og_vector *v, size_t i)
{
    if (og_vector_is_null(v, i)) return json_null();
    switch (v->type.id) {
    case OG_T_BOOL: return json_boolean(og_vector_get_bool(v, i));
    case OG_T_I32: case OG_T_I64: return json_integer(og_vector_get_i64(v, i));
    case OG_T_U32: case OG_T_U64: {
        uint64_t u = og_vector_get_u64(v, i);
        if (u <= INT64_MAX) return json_integer((json_int_t)u);
        char b[24];
        snprintf(b, sizeof b, "%llu", (unsigned long long)u);
        return json_string(b);
    }
    case OG_T_F32: case OG_T_F64: return json_real(og_vector_get_f64(v, i));
    case OG_T_DATE32: {
        char b[11];
        og_date_format((int32_t)og_vector_get_i64(v, i), b);
        return json_string(b);
    }
    case OG_T_DATE64: {
        char b[25];
        og_datetime_format(og_vector_get_i64(v, i), b);
        return json_string(b);
    }
    case OG_T_STRING: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        return json_stringn((const char *)p, n);
    }
    case OG_T_BLOB: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, i, &n);
        char *b = malloc(7 + 4 * ((n + 2) / 3) + 1);
        if (!b) return NULL;
        memcpy(b, "base64:", 7);
        int k = n ? EVP_EncodeBlock((unsigned char *)b + 7, p, (int)n) : 0;
        b[7 + k] = '\0';
        json_t *j = json_string(b);
        free(b);
        return j;
    }
    case OG_T_VECTOR: {
        json_t *a = json_array();
        const float *f = og_vector_get_floats(v, i);
        for (uint32_t k = 0; a && k < v->type.dim; k++) json_array_append_new(a, json_real(f[k]));
        return a;
    }
    case OG_T_LIST: {
        json_t *a = json_array();
        size_t b, e;
        og_vector_get_list(v, i, &b, &e);
        for (size_t k = b; a && k < e; k++)
            json_array_append_new(a, og_export_value_json(v->child, k));
        return a;
    }
    default: return json_null();
    }
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
        if (st == OG_ERR_NOT_FOUND) st = OG_OK, props[p] = NULL; /* not stored: null everywhere */
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
        if (t->kind == OG_KIND_EDGE) {
            json_object_set_new(o, "from", og_export_value_json(src, i));
            json_object_set_new(o, "to", og_export_value_json(dst, i));
        }
        json_object_set_new(data, "id", og_export_value_json(id, i));
        for (size_t p = 0; p < t->nprops; p++)
            if (props[p] && !og_vector_is_null(props[p], i))
                json_object_set_new(data, t->props[p].name, og_export_value_json(props[p], i));
        json_object_set_new(o, "data", data);
        char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
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
