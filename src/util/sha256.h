/*
 * sha256.h — SHA-256 content hashes (schema object ids; token hashing), computed without
 * OpenSSL so a process that only verifies a schema never initialises it (sha256.c says why).
 */
#ifndef OG_UTIL_SHA256_H
#define OG_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

#define OG_SHA256_LEN 32
#define OG_SHA256_HEX_LEN 64

/* The digest of data[0..len).  Always OG_OK (kept an og_status for its callers). */
og_status og_sha256(const void *data, size_t len, uint8_t out[OG_SHA256_LEN]);
/* The digest as 64 lower-case hex characters plus NUL. */
og_status og_sha256_hex(const void *data, size_t len, char out[OG_SHA256_HEX_LEN + 1]);
/* 1 if s is exactly 64 lower-case hex characters. */
int og_sha256_hex_valid(const char *s);

#endif
