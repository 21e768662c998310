/*
 * schema.h — the front door of the schema language (.pg): parse + check + build a catalog,
 * serialise the accepted schema IR to/from its JSON object (STORAGE.md §4), summaries.
 *
 * Typical use (a brand-new graph):
 *     og_catalog *cat = NULL;  og_diags d = OG_DIAGS_INIT;
 *     if (og_schema_compile(&cat, "schema.pg", text, len, &d) != OG_OK) { print d ...; }
 *     ... use cat ...; og_catalog_free(cat); og_diags_free(&d);
 *
 * Migrations (accepted catalog x desired text -> plan + new catalog) are in migrate.h.
 */
#ifndef OG_COMPILER_SCHEMA_H
#define OG_COMPILER_SCHEMA_H

#include <stddef.h>

#include "compiler/catalog.h"
#include "compiler/lexer.h"
#include "omnigraph.h"
#include "util/buf.h"

/* Parses and checks `text` (file is a display name, may be NULL) and builds a catalog with
 * fresh canonical identities (ids from 1; @rename_from hints are inert and reported as
 * warnings).  On success *out owns a new catalog (free with og_catalog_free) and `diags`
 * may hold warnings.  On failure *out is NULL, every error found is in `diags` (at least one),
 * and the status is OG_ERR_PARSE (syntax) or OG_ERR_TYPE (semantic).  OG_ERR_NOMEM possible.
 * diags may be NULL (then only the first error's message is left in og_error_message()).
 * The catalog keeps a copy of the text in cat->source. */
og_status og_schema_compile(og_catalog **out, const char *file, const char *text, size_t len,
                            og_diags *diags);

/* Short human summary: "N interfaces, N node types, N edge types, N properties, N constraints
 * (K key, U unique, I index, R range, C check), index intents: B btree, F inverted, V vector"
 * followed by one line per type.  See docs/schema-language.md. */
og_status og_schema_summary(og_buf *out, const og_catalog *cat);
/* The same counts as a JSON object (compact). */
og_status og_schema_summary_json(og_buf *out, const og_catalog *cat);

/* Counts used by the summaries (exposed for tests). */
typedef struct og_schema_counts {
    size_t interfaces, nodes, edges;
    size_t properties;        /* node + edge properties (interface properties not counted) */
    size_t constraints;       /* all node + edge constraints, incl. desugared ones */
    size_t keys, uniques, indexes, ranges, checks;
    size_t btree, inverted, vector; /* property index intents (og_cat_prop.index) */
    size_t embeds;
} og_schema_counts;
void og_schema_count(og_schema_counts *out, const og_catalog *cat);

/* ---- JSON schema object (schema_json.c) -------------------------------------------------- */

/* Serialises the catalog (the accepted schema IR) to its canonical JSON bytes: compact,
 * keys in a fixed order, deterministic; og_catalog_from_json(og_catalog_to_json(c)) ->
 * og_catalog_to_json gives identical bytes. */
og_status og_catalog_to_json(og_buf *out, const og_catalog *cat);
/* Parses a schema object.  OG_ERR_CORRUPT when it is not a valid schema IR (message says
 * what); regexes are recompiled.  *out owns the result. */
og_status og_catalog_from_json(og_catalog **out, const char *json, size_t len);

#endif
