/*
 * jsontok.h — a strict JSON parser into a flat token array (no DOM, no per-value malloc).
 *
 * `load` parses millions of small objects whose values are read once and dropped; a DOM
 * (jansson) spends most of that time allocating and freeing nodes.  og_json_parse instead
 * appends one og_jtok per value to a reusable array and decodes strings IN PLACE in the
 * caller's buffer (an escape never decodes longer than it is written), NUL-terminating each.
 *
 * It accepts what jansson's json_loadb(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY) accepts
 * (tests/fuzz/fuzz_json.c checks this differentially), save one jansson 2.14 slip it does
 * not copy: jansson skips a single raw NUL right after a number or literal ("1\0"), which
 * RFC 8259 forbids and this parser rejects.  The grammar: RFC 8259, whitespace =
 * space/tab/CR/LF, valid UTF-8 only (no overlongs, surrogates or code points past U+10FFFF),
 * no raw control characters in strings, no \u0000, surrogate escapes only as proper pairs,
 * no duplicate object keys at any depth, integers within int64 (no fraction or exponent) —
 * one extension: a non-negative integer up to 2^64-1 that int64 cannot hold is OG_J_UINT
 * where jansson says "too big integer", so a U64 column loads its whole range —,
 * reals that do not overflow a double, nesting depth at most OG_JSON_MAX_DEPTH (counted like
 * jansson: a scalar is a level too), nothing but whitespace after the value.  A scalar is a
 * valid top-level value; callers that need an object check the root's kind.
 *
 * Layout: a value is a run of `span` tokens — itself, then its children in order.  An
 * array's children are its elements; an object's are key (an OG_J_STRING token), value,
 * key, value, ...  og_jtok_next() skips a whole value.  Tokens are valid until the doc is
 * reset, grown by another parse, or freed; string pointers until the buffer is.
 */
#ifndef OG_UTIL_JSONTOK_H
#define OG_UTIL_JSONTOK_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

#define OG_JSON_MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

typedef enum og_jkind {
    OG_J_NULL = 0,
    OG_J_FALSE,
    OG_J_TRUE,
    OG_J_INT,
    OG_J_REAL,
    OG_J_STRING,
    OG_J_ARRAY,
    OG_J_OBJECT,
    OG_J_UINT  /* an integer in (2^63-1, 2^64-1]: v.u (jansson cannot read these at all) */
} og_jkind;

typedef struct og_jtok {
    uint8_t kind;   /* og_jkind */
    uint32_t span;  /* tokens in this value, itself included */
    uint32_t len;   /* string: decoded bytes; array: elements; object: members */
    union {
        const char *s; /* string: decoded, NUL-terminated, in the parsed buffer */
        int64_t i;
        uint64_t u;
        double d;
    } v;
} og_jtok;

typedef struct og_jdoc {
    og_jtok *tok;
    size_t n, cap;
} og_jdoc;

#define OG_JDOC_INIT {NULL, 0, 0}

void og_jdoc_init(og_jdoc *d);
void og_jdoc_free(og_jdoc *d);
/* Forgets every token (keeps the capacity). */
void og_jdoc_reset(og_jdoc *d);

/* Parses buf[0..len) as one JSON value, appending its tokens to d; *root receives the index
 * of its first token.  buf is modified (strings decoded in place).  On failure d is as it
 * was, the return is OG_ERR_PARSE (or OG_ERR_NOMEM) and `msg` (cap bytes, may be NULL)
 * holds "column C: what" with C the 1-based byte column of the problem. */
og_status og_json_parse(og_jdoc *d, char *buf, size_t len, size_t *root, char *msg, size_t cap);

static inline const og_jtok *og_jtok_next(const og_jtok *t) { return t + t->span; }

/* The value of member `key` of object obj, or NULL (keys are unique: the first match is
 * the only one).  Linear in the members: meant for the small objects of a record. */
const og_jtok *og_jobj_get(const og_jtok *obj, const char *key);

/* A JSON-kind phrase for messages: "an object", "a string", ... */
const char *og_jkind_name(og_jkind k);

#endif
