/*
 * suggest.h — "did you mean": the nearest known name to a mistyped one (docs/errors.md).
 *
 * One place for the typo rule the compiler's messages share: an unknown node or edge type, a
 * property a type lacks, an unknown function or annotation, an unbound variable or undeclared
 * parameter names the closest candidate when it is close enough to be a slip of the keyboard.
 * The query checker and the schema checker call it where they report the unknown name, so the
 * CLI, the server and MCP — which all show the compiler's message — get the same suggestion.
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

/* How a traversal writes the edge `name` (an edge word starts lowercase and matches the
 * schema's edge case-insensitively): its first letter lowered, or all of it when the name is
 * all capitals (`WorksAt` -> `worksAt`, `OWNS` -> `owns`), into buf; returns buf. */
const char *og_suggest_edge_word(const char *name, char *buf, size_t cap);

/* "; did you mean `X`?" for a suggestion (or "" for NULL), into buf; returns buf. */
const char *og_suggest_hint(const char *best, char *buf, size_t cap);

/* The names nearest to a mistyped variable or parameter name (without `$`) among the n the
 * query has (NULL entries skipped): the typo rule's one, else — for a word of at most three
 * letters, where one edit is already half of it — every name one edit away (`mn`: `m` and
 * `n`), at most `max`, in order, without repeats.  Returns how many went to out. */
size_t og_suggest_names(const char *word, const char *const *names, size_t n, const char **out, size_t max);

/* "; did you mean `$a`?" / "; did you mean `$a` or `$b`?" for those names (or "" for none),
 * into buf; returns buf. */
const char *og_suggest_var_hint(const char *const *best, size_t n, char *buf, size_t cap);

#endif
