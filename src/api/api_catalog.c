/*
 * api_catalog.c — the schema catalog of a snapshot as a JSON document (og_db_catalog).
 *
 * Why: surfaces that help a person write queries (the completion of `omnigraph shell`, a
 * studio's editor) need the names a query may use — node, edge and interface types, their
 * properties and types, edge endpoints — without linking the compiler or parsing `.pg` text
 * themselves.  The shape is small and stable: docs/c-api.md "Catalog".
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/db.h"
#include "compiler/catalog.h"
#include "engine/engine.h"
#include "util/error.h"

static json_t *props_json(const og_cat_type *t)
{
    json_t *a = json_array();
    for (size_t i = 0; i < t->nprops; i++) {
        const og_cat_prop *p = &t->props[i];
        char tb[256];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(p->name));
        json_object_set_new(o, "type", json_string(og_cat_prop_type_name(p, tb, sizeof tb)));
        json_object_set_new(o, "nullable", json_boolean(p->nullable));
        json_object_set_new(o, "key", json_boolean(p->is_key));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *types_json(const og_cat_type *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const og_cat_type *t = &v[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(t->name));
        if (t->kind == OG_KIND_EDGE) {
            json_object_set_new(o, "from", json_string(t->from));
            json_object_set_new(o, "to", json_string(t->to));
        }
        if (t->kind == OG_KIND_NODE) {
            json_t *im = json_array();
            for (size_t k = 0; k < t->nimplements; k++) json_array_append_new(im, json_string(t->implements[k]));
            json_object_set_new(o, "implements", im);
        }
        json_object_set_new(o, "properties", props_json(t));
        json_array_append_new(a, o);
    }
    return a;
}

og_status og_db_catalog(char **out, og_db *db, const og_read_opts *at)
{
    *out = NULL;
    og_read *r;
    char cbuf[27];
    const char *commit;
    OG_TRY(og_api_resolve_opt(db, at ? at->commit : NULL, cbuf, &commit));
    OG_TRY(og_read_begin(&r, db->e, at ? at->branch : NULL, commit));
    const og_catalog *cat = og_read_catalog(r);
    json_t *o = json_object();
    json_object_set_new(o, "interfaces", types_json(cat->interfaces, cat->ninterfaces));
    json_object_set_new(o, "nodes", types_json(cat->nodes, cat->nnodes));
    json_object_set_new(o, "edges", types_json(cat->edges, cat->nedges));
    og_read_end(r);
    *out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}
