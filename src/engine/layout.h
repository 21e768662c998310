/*
 * layout.h — how a catalog type is laid out as a Lance table (reference-storage.md §1.3).
 *
 * Node table: `id` (String, not null, the unenforced primary key), then one column per
 * property.  Edge table: `id`, `src`, `dst` (Strings, not null: node ids), then the edge's
 * properties.  A type with a property named `id` (`src`, `dst`) spells that system column
 * `__id` (`__src`, `__dst`) instead.  Column names are the property names (so Lance tools show readable tables), but
 * identity is the Lance field id, derived from the stable property id:
 *     id -> 0, src -> 1, dst -> 2, property p -> 2*p.id + 8, a list property's item -> 2*p.id + 9
 * so a rename changes a field's name only, and a dropped-then-re-added property (a new stable
 * id) never reuses a field id.
 */
#ifndef OG_ENGINE_LAYOUT_H
#define OG_ENGINE_LAYOUT_H

#include <stdint.h>

#include "compiler/catalog.h"
#include "omnigraph.h"
#include "table/lance_schema.h"

#define OG_FIELD_ID 0
#define OG_FIELD_SRC 1
#define OG_FIELD_DST 2

/* The Lance field id of a property (OG_ERR_LIMIT when the stable id is too large). */
og_status og_layout_field_id(uint64_t prop_id, int32_t *field_id);

/* The Lance schema of a node or edge type (out must be OG_LANCE_SCHEMA_INIT). */
og_status og_layout_schema(const og_cat_type *t, og_lance_schema *out);

#endif
