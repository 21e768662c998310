/*
 * schema_internal.h — private seams between the schema-language files (schema_parse.c,
 * catalog.c, schema.c, schema_json.c, migrate.c).  Not for other modules.
 */
#ifndef OG_COMPILER_SCHEMA_INTERNAL_H
#define OG_COMPILER_SCHEMA_INTERNAL_H

#include <stddef.h>

#include "compiler/catalog.h"
#include "compiler/lexer.h"

/* Sentinel in og_cat_constraint.col_props before names are resolved. */
#define OG_COL_UNRESOLVED (-9)

/* Parses src into a *draft* catalog (cat zeroed by the caller): every type with its
 * properties in source order, every annotation (known ones included) in og_cat_prop.annots /
 * og_cat_type.annots, body constraints in cons[] (col_props unresolved), edge @card.
 * Returns OG_OK, or OG_ERR_PARSE after adding the (first) syntax error to diags, or NOMEM.
 * The draft must be freed with og_catalog_free either way. */
og_status og_schema_parse(og_catalog *cat, const og_source *src, og_diags *diags);

/* Turns a draft into a checked catalog in place: validates annotations and constraints,
 * expands interfaces, resolves endpoints and constraint columns, derives index intents, key
 * order, compiles regexes.  Every error found is added to diags (positions from src);
 * returns OG_ERR_TYPE when there was at least one.  Ids are NOT assigned here. */
og_status og_catalog_check(og_catalog *cat, const og_source *src, og_diags *diags);

/* Assigns canonical fresh identities (catalog.h, "Identity") starting at first_id, for
 * every type/property whose id is 0 and every node/edge whose incarnation is 0; sets
 * cat->next_id.  Types/properties that already carry ids keep them. */
og_status og_catalog_assign_ids(og_catalog *cat, uint64_t first_id);

/* Orders key_props by stable property id (after ids are known). */
void og_catalog_order_keys(og_catalog *cat);

/* Compiles the regex of a CHECK constraint (c->pattern); on failure writes a message into
 * msg and returns OG_ERR_TYPE. */
og_status og_check_compile(og_cat_constraint *c, char *msg, size_t cap);

/* Small helpers shared by the schema files. */
char *og_sdup(const char *s);
char *og_sndup(const char *s, size_t n);
/* Grows *arr (elements of size elem) so that index n is writable; zero-fills new space. */
og_status og_grow(void **arr, size_t *cap, size_t n, size_t elem);

void og_annotation_clear(og_annotation *a);
void og_cat_prop_clear(og_cat_prop *p);
void og_cat_constraint_clear(og_cat_constraint *c);
void og_cat_type_clear(og_cat_type *t);
og_status og_annotation_copy(og_annotation *dst, const og_annotation *src);
og_status og_cat_prop_copy(og_cat_prop *dst, const og_cat_prop *src);

/* First annotation named `name` in the list (NULL when none). */
const og_annotation *og_annot_find(const og_annotation *a, size_t n, const char *name);
/* Positional value of an annotation (first positional arg's text) or NULL. */
const char *og_annot_value(const og_annotation *a);

/* Same type (storage type, nullability, enum set). */
int og_cat_prop_same_type(const og_cat_prop *a, const og_cat_prop *b);

#endif
