/*
 * hash.h — the 64-bit hash the engine's hash tables share (grouping keys, dictionary-coded
 * columns, joins): a finaliser good enough that a table indexed by its low bits needs no
 * prime size, and a byte-string hash built on it.  One definition, so that two structures
 * that meet (a coded column's values and a grouping's keys) can never disagree on it.
 */
#ifndef OG_UTIL_HASH_H
#define OG_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The MurmurHash3 64-bit finaliser: every input bit flips every output bit with p ~ 1/2. */
static inline uint64_t og_hash_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* p[0..n): eight bytes at a time through the finaliser, the length folded in first. */
static inline uint64_t og_hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = og_hash_mix64(h ^ w);
        p += 8, n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    return og_hash_mix64(h ^ w);
}

#endif
