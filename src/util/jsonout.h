/*
 * jsonout.h — JSON text out of a jansson value, with numbers spelled the way the reference
 * spells them (docs/query-language.md "Values in JSON").
 *
 * jansson prints every real with "%.17g", so 0.1 comes out as 0.10000000000000001.  This
 * writer prints a real as the SHORTEST decimal that reads back as the same double (in the
 * reference's layout: positional from 1e-5 up to below 1e10, ".0" on whole numbers, the
 * exponent form "1.0e10" / "1.5e-7" beyond), and it can print an unsigned integer above
 * 2^63-1 as a bare JSON number (og_json_bignum), which jansson cannot hold.  Everything else
 * — layout flags, string escaping, key order — follows json_dumps.
 */
#ifndef OG_UTIL_JSONOUT_H
#define OG_UTIL_JSONOUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Like json_dumps(j, flags) (JSON_COMPACT, JSON_INDENT(n), JSON_SORT_KEYS, JSON_ENCODE_ANY,
 * JSON_ENSURE_ASCII, JSON_ESCAPE_SLASH; JSON_REAL_PRECISION is ignored: reals are always
 * shortest).  Returns malloc'd text, or NULL (out of memory, or a non-container top-level
 * value without JSON_ENCODE_ANY). */
char *og_json_dumps(const json_t *j, size_t flags);

/* The shortest round-trip spelling of a finite double into out (at least 32 bytes); returns
 * the length.  Whole numbers keep a ".0" ("9.0"), like the reference. */
size_t og_json_format_real(double d, char *out);

/* The double whose shortest spelling is the shortest decimal that reads back as the float32
 * f: (double)0.1f is 0.10000000149011612, og_json_f32(0.1f) is 0.1.  Non-finite values pass
 * through. */
double og_json_f32(float f);

/* A JSON number of any size, printed verbatim by og_json_dumps (json_dumps would print it as
 * a string with a marker: do not mix the two).  `digits` is an optional '-' and decimal
 * digits. */
json_t *og_json_bignum(uint64_t u);

/* The digits of a value og_json_bignum made, or NULL for any other value: for writers that
 * print a value as text (a CSV cell) rather than through og_json_dumps. */
const char *og_json_bignum_digits(const json_t *j);

/* Parses text[0..len) as json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)
 * does, except that an integer above 2^63-1 (a U64 a result spells as a bare number, which
 * jansson refuses: "too big integer") is kept as an og_json_bignum.  So a surface that
 * re-wraps a rendered answer prints every number back as it was.  NULL when the text is not
 * JSON (or out of memory). */
json_t *og_json_load_wide(const char *text, size_t len);

/* The pieces of og_json_dumps, for writers that emit JSON without building a jansson tree
 * (api/rows.c) and must match its bytes: a string (n bytes that are valid UTF-8; NULs
 * allowed) escaped as og_json_dumps escapes it under `flags`, and the line break and
 * indentation it puts before an item at `depth` (`space`: between items, for layouts without
 * JSON_INDENT).  Out of memory is left to the buffer (check it at the end). */
void og_json_put_string(og_buf *b, const char *s, size_t n, size_t flags);
void og_json_put_indent(og_buf *b, size_t flags, int depth, int space);

#endif
