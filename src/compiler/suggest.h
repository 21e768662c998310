/*
 * suggest.h — "did you mean": the nearest known name to a mistyped one (docs/errors.md).
 *
 * One place for the typo rule the compiler's messages share: an unknown node or edge type, a
 * property a type lacks, an unknown function or annotation names the closest candidate when
 * it is close enough to be a slip of the keyboard.  The query checker and the schema checker
 * call it where they report the unknown name, so the CLI, the server and MCP — which all show
 * the compiler's message — get the same suggestion.
 */
#ifndef OG_COMPILER_SUGGEST_H
#define OG_COMPILER_SUGGEST_H

#include <stddef.h>

#include "compiler/catalog.h"
#include "util/typo.h" /* og_typo_distance, og_typo_nearest: the rule itself */

/* The nearest node type / edge type / property of t (NULL when none is close). */
const char *og_suggest_node(const og_catalog *cat, const char *word);
const char *og_suggest_edge(const og_catalog *cat, const char *word);
const char *og_suggest_prop(const og_cat_type *t, const char *word);

/* "; did you mean `X`?" for a suggestion (or "" for NULL), into buf; returns buf. */
const char *og_suggest_hint(const char *best, char *buf, size_t cap);

#endif
