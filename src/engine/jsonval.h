/*
 * jsonval.h — JSON values → typed column values, for query parameters
 * (reference-language.md §5) and NDJSON load data (§6.1).
 *
 * Strict in both modes: no silent null, no truncation, no lossy coercion.
 *   ints   JSON integer, or a decimal string; range-checked for the column's width
 *   floats JSON number (integer or real), finite
 *   Bool   true / false
 *   String JSON string (also enum values; membership is the validator's job)
 *   Date   "YYYY-MM-DD"; in load mode also an integer count of days
 *   DateTime RFC 3339 string; in load mode also integer epoch milliseconds
 *   Blob   "base64:<payload>" (decoded); any other string is an external URI, refused here
 *   Vector(N) array of exactly N finite numbers
 *   [T]    array of non-null T
 *   null   only where the column is nullable
 */
#ifndef OG_ENGINE_JSONVAL_H
#define OG_ENGINE_JSONVAL_H

#include <jansson.h>

#include "omnigraph.h"
#include "util/jsontok.h"
#include "util/vector.h"

typedef enum og_jsonval_mode { OG_JSONVAL_PARAM = 0, OG_JSONVAL_LOAD = 1 } og_jsonval_mode;

/* Appends the value of `j` to `out` (whose type is the target type).  `what` names the value in
 * error messages ("parameter 'since'", "Person.age").  Errors: OG_ERR_INVALID (type) — out is
 * unchanged on error. */
og_status og_jsonval_append(og_vector *out, const json_t *j, int nullable, og_jsonval_mode mode, const char *what);
/* The same conversion for a value of a token-array document (util/jsontok.h; NULL = absent,
 * like a NULL json_t): the load path, which never builds a DOM. */
og_status og_jsonval_append_tok(og_vector *out, const og_jtok *t, int nullable, og_jsonval_mode mode, const char *what);

#endif
