/*
 * query_check.h — the .gq type checker (reference-language.md §3–§4, error codes §9).
 *
 * og_query_check() validates one parsed query against a catalog and fills the "resolved"
 * fields of its AST (variables, property indices, value types, traversal directions).  It
 * stops at the first error, like the reference.  The error is an og_diag with code
 * OG_ERR_TYPE whose message starts with the reference's code, e.g.
 *     "T5: variable `$c` has type `Company`, which is not an endpoint of edge `Knows: ...`"
 * (a few errors the reference reports without a code have none).  og_query_diag_code()
 * extracts the code ("T5", or "" when none).
 */
#ifndef OG_COMPILER_QUERY_CHECK_H
#define OG_COMPILER_QUERY_CHECK_H

#include "compiler/catalog.h"
#include "compiler/lexer.h"
#include "compiler/query_ast.h"
#include "omnigraph.h"

/* Checks query `qi` of f.  OG_OK, OG_ERR_TYPE (err filled; err may be NULL) or NOMEM.
 * Checking again (e.g. against another catalog) starts from scratch. */
og_status og_query_check(og_query_file *f, size_t qi, const og_catalog *cat,
                         const og_source *src, og_diag *err);

/* The "Tn" prefix of a type-error message copied into buf ("" when there is none). */
const char *og_query_diag_code(const og_diag *d, char *buf, size_t cap);

#endif
