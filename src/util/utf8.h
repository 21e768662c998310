/*
 * utf8.h — UTF-8 validation and encoding, the one copy every layer uses (the lexer's source
 * check, graph names, the JSON parser, the S3 XML decoder).
 *
 * Valid means RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF), nothing past
 * U+10FFFF.
 */
#ifndef OG_UTIL_UTF8_H
#define OG_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the valid UTF-8 sequence at s[0..n) (n >= 1), or 0 when it is not one. */
size_t og_utf8_seq_len(const unsigned char *s, size_t n);

/* 1 when s[0..n) is entirely valid UTF-8. */
int og_utf8_valid(const unsigned char *s, size_t n);

/* Writes code point cp (<= U+10FFFF) as UTF-8 into out; returns its length (1..4). */
size_t og_utf8_encode(uint32_t cp, unsigned char out[4]);

#endif
