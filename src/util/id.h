/*
 * id.h — unique names: ULIDs (commit ids; sortable by creation time) and UUIDv4 strings
 * (data-file names), both from the kernel's random source; plus wall-clock helpers.
 */
#ifndef OG_UTIL_ID_H
#define OG_UTIL_ID_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

#define OG_ULID_LEN 26 /* characters, Crockford base32 */
#define OG_UUID_LEN 36 /* 8-4-4-4-12 lower-case hex */

/* Writes a NUL-terminated ULID into out[OG_ULID_LEN + 1]. Monotonic within a process: two
 * ULIDs made in the same millisecond still sort in creation order. */
og_status og_ulid_new(char out[OG_ULID_LEN + 1]);
/* n ULIDs at once, in creation order, as n calls of og_ulid_new would make them within one
 * millisecond (one clock read and one lock: a load's generated edge ids). */
og_status og_ulid_new_n(char (*out)[OG_ULID_LEN + 1], size_t n);
/* 1 if s is 26 Crockford base32 characters (upper case). */
int og_ulid_valid(const char *s);

og_status og_uuid_new(char out[OG_UUID_LEN + 1]);

/* Fills `n` bytes from the kernel's CSPRNG. */
og_status og_random_bytes(void *p, size_t n);

/* Milliseconds since the Unix epoch (wall clock). */
int64_t og_now_ms(void);
/* RFC 3339 UTC with milliseconds, "2026-12-02T15:04:05.123Z", into out[25]. */
void og_format_time_ms(int64_t ms, char out[25]);

#endif
