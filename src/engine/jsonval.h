/*
 * jsonval.h — JSON values → typed column values, for query parameters
 * (reference-language.md §5) and NDJSON load data (§6.1).
 *
 * Strict, and the same in both modes: a JSON value of the declared type, no silent null, no
 * truncation, no lossy coercion (docs/reference.md "Strict input"); a refusal says what to write.
 *   ints   JSON integer, range-checked for the column's width (a U64 takes its whole range as
 *          a number in load: the tokenizer reads it).  The one exception: an I64 / U64 beyond
 *          +-(2^53-1) may also be a decimal string, for JavaScript clients and for a U64
 *          parameter above 2^63-1 (jansson, which reads parameters, cannot hold it)
 *   floats JSON number (integer or real), finite
 *   Bool   true / false
 *   String JSON string (also enum values; membership is the validator's job)
 *   Date   "YYYY-MM-DD"
 *   DateTime RFC 3339 string
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

/* ---- the other direction: one column value as JSON (every output shares this) ------------
 *
 *   The reference's spelling (its Arrow JSON writer; docs/query-language.md "Values in JSON"):
 *   Bool true/false; integers numbers at any width — a U64 above 2^63-1, which jansson cannot
 *   hold, is a bare number with OG_CELL_BIG_U64 (og_json_bignum: print with og_json_dumps)
 *   and a decimal string without it; F64 a number printed shortest by og_json_dumps; F32 the
 *   shortest decimal that reads back as the same float32 (0.1, not 0.10000000149011612),
 *   Vector elements alike; NaN / +-Infinity null; Date "YYYY-MM-DD"; DateTime
 *   "YYYY-MM-DDTHH:MM:SS[.mmm]" (UTC, no zone letter, milliseconds only when not zero);
 *   String a string; Blob "base64:<payload>" with OG_CELL_BLOB_BASE64, else its bytes as a
 *   string; lists arrays; null null.  NULL only when out of memory. */
#define OG_CELL_BLOB_BASE64 2u
#define OG_CELL_BIG_U64 4u
json_t *og_jsonval_cell(const og_vector *v, size_t i, unsigned flags);

#endif
