/*
 * api_blob.c — og_db_blob_get (include/omnigraph.h): the bytes of one Blob cell at a read's
 * snapshot, found by the entity's id.  The server's /blob route serves it with ranges and
 * ETags; the query language cannot return Blob values (T24), so this is their read path.
 */
#include <stdlib.h>
#include <string.h>

#include "api/db.h"
#include "engine/engine.h"
#include "engine/layout.h"
#include "util/error.h"

og_status og_db_blob_get(char **out, size_t *len, char commit_out[32], og_db *db, const og_read_opts *at, int is_edge,
                         const char *type, const char *id, const char *property)
{
    *out = NULL;
    *len = 0;
    if (!type || !id || !property) return og_err(OG_ERR_INVALID, "blob: type, id and property are required");
    og_read *r;
    OG_TRY(og_read_begin(&r, db->e, at ? at->branch : NULL, at ? at->commit : NULL));
    const og_catalog *cat = og_read_catalog(r);
    const og_cat_type *t = is_edge ? og_catalog_edge(cat, type) : og_catalog_node(cat, type);
    og_status st = OG_OK;
    const og_cat_prop *p = t ? og_cat_type_prop(t, property, NULL) : NULL;
    if (!t)
        st = og_err(OG_ERR_INVALID, "blob: unknown %s type '%s'", is_edge ? "edge" : "node", type);
    else if (!p)
        st = og_err(OG_ERR_INVALID, "blob: type '%s' has no property '%s'", type, property);
    else if (p->type.id != OG_T_BLOB)
        st = og_err(OG_ERR_INVALID, "blob: property '%s' of '%s' is not a Blob", property, type);
    og_tableview *v = NULL;
    if (!st) st = is_edge ? og_read_edge_view(r, (size_t)(t - cat->edges), &v) : og_read_node_view(r, (size_t)(t - cat->nodes), &v);
    const og_vector *ids = NULL, *col = NULL;
    int32_t fid = 0;
    if (!st) st = og_tableview_column(v, OG_FIELD_ID, &ids);
    if (!st) st = og_layout_field_id(p->id, &fid);
    if (!st) {
        st = og_tableview_column(v, fid, &col);
        if (st == OG_ERR_NOT_FOUND && !og_tableview_has_field(v, fid))
            og_error_clear(), col = NULL, st = OG_OK; /* never written: null everywhere */
    }
    size_t row = (size_t)-1, n = st ? 0 : og_tableview_rows(v), idlen = strlen(id);
    for (size_t i = 0; i < n; i++) {
        size_t k;
        const uint8_t *b = og_vector_get_bytes(ids, i, &k);
        if (k == idlen && !memcmp(b, id, k)) {
            row = i;
            break;
        }
    }
    if (!st && row == (size_t)-1)
        st = og_err(OG_ERR_NOT_FOUND,
                    "blob: no %s of type '%s' has id '%s' (%s; %zu %s of that type at this snapshot)",
                    is_edge ? "edge" : "node", type, id,
                    is_edge ? "an edge's id is its @key value or the id it was loaded with"
                            : "a node's id is its @key value",
                    n, is_edge ? "edge(s)" : "node(s)");
    if (!st && (!col || og_vector_is_null(col, row)))
        st = og_err(OG_ERR_NOT_FOUND, "blob: property '%s' of %s '%s' is null", property, type, id);
    if (!st) {
        size_t k;
        const uint8_t *b = og_vector_get_bytes(col, row, &k);
        *out = malloc(k ? k : 1);
        if (!*out) st = og_err(OG_ERR_NOMEM, "out of memory");
        else {
            memcpy(*out, b, k);
            *len = k;
        }
    }
    if (!st && commit_out) snprintf(commit_out, 32, "%s", og_snapshot_commit_id(og_read_snapshot(r)));
    og_read_end(r);
    return st;
}
