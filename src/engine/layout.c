/*
 * layout.c — catalog type → Lance table schema.  See layout.h for the field-id rule.
 */
#include "engine/layout.h"

#include "util/error.h"

og_status og_layout_field_id(uint64_t prop_id, int32_t *field_id)
{
    if (prop_id > (uint64_t)(INT32_MAX - 9) / 2)
        return og_err(OG_ERR_LIMIT, "property id %llu is too large for a Lance field id", (unsigned long long)prop_id);
    *field_id = (int32_t)(2 * prop_id + 8);
    return OG_OK;
}

/* The system column's name: `id`/`src`/`dst`, or `__id`/`__src`/`__dst` when the type has a
 * user property of that name (readers find system columns by field id, never by name). */
static const char *sys_name(const og_cat_type *t, const char *bare, const char *spelled)
{
    return og_cat_type_prop(t, bare, NULL) ? spelled : bare;
}

og_status og_layout_schema(const og_cat_type *t, og_lance_schema *out)
{
    const og_type str = {OG_T_STRING, OG_T_NULL, 0};
    og_status st = og_lance_schema_add_column(out, sys_name(t, "id", "__id"), str, OG_FIELD_ID, 0, 0, 1);
    if (st == OG_OK && t->kind == OG_KIND_EDGE) {
        st = og_lance_schema_add_column(out, sys_name(t, "src", "__src"), str, OG_FIELD_SRC, 0, 0, 0);
        if (st == OG_OK) st = og_lance_schema_add_column(out, sys_name(t, "dst", "__dst"), str, OG_FIELD_DST, 0, 0, 0);
    }
    for (size_t i = 0; i < t->nprops && st == OG_OK; i++) {
        const og_cat_prop *p = &t->props[i];
        int32_t fid = 0;
        st = og_layout_field_id(p->id, &fid);
        if (st == OG_OK) st = og_lance_schema_add_column(out, p->name, p->type, fid, fid + 1, p->nullable, 0);
    }
    if (st != OG_OK) {
        og_lance_schema_free(out);
        return og_err_wrap(st, "laying out type %s", t->name);
    }
    return OG_OK;
}
