/*
 * strmap.h — a hash map from byte strings to uint32 values (the engine's id -> row maps).
 *
 * Open addressing with linear probing over a power-of-two slot array; the load factor stays at
 * or below 1/2 (the slot array doubles before an insert would pass it).  Keys are arbitrary
 * bytes (NUL allowed, length given) and are copied into one arena the map owns, so callers
 * may free or reuse their key buffers right after an insert.
 *
 * There is no iteration in hash order: og_strmap_entry enumerates entries in insertion order,
 * which is a pure function of the inserts (no hash-map order can leak into a result).
 *
 * Memory: an og_strmap owns its slots, entries and key arena; og_strmap_free releases them.
 * Not thread-safe for writers: build it on one thread, then share it read-only (lookups do
 * not modify the map).
 */
#ifndef OG_UTIL_STRMAP_H
#define OG_UTIL_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef struct og_strmap_entry_ {
    uint64_t key_off; /* into the arena */
    uint32_t key_len;
    uint32_t value;
} og_strmap_entry_;

typedef struct og_strmap {
    uint64_t *slots;          /* 0 = empty, else hash tag << 32 | (entry index + 1) */
    size_t nslots;            /* power of two (0 before the first insert) */
    og_strmap_entry_ *entries;/* insertion order */
    size_t count, cap;
    uint8_t *arena;           /* key bytes, back to back */
    size_t arena_len, arena_cap;
    /* Keys kept by the caller (og_strmap_init_column): value v's key is bytes [offsets[v],
     * offsets[v + 1]) of a string column; no entries, no arena, slot = tag | (value + 1). */
    void *const *col_bytes;
    int64_t *const *col_offsets;
} og_strmap;

#define OG_STRMAP_INIT {NULL, 0, NULL, 0, 0, NULL, 0, 0, NULL, NULL}

/* The largest number of keys a map holds (a slot stores entry index + 1 in 32 bits). */
#define OG_STRMAP_MAX_KEYS ((size_t)1 << 30)

/* An empty map (no allocation). */
void og_strmap_init(og_strmap *m);

/* An empty map over the keys of a string column the caller keeps (an og_vector's values and
 * offsets, read through these pointers at each call, so the column may grow): value v's key is
 * row v's string, and the map holds only its slots (8 bytes each, load factor at most 3/4) —
 * no copy of the keys and no entries (a load's staged node ids: docs/load.md "The memory
 * bound").  The caller's contract: inserts come in row order, value = the next row (every row
 * is inserted, a repeated key keeping its first row), each after the row is in the column,
 * and a row's bytes never change.  og_strmap_entry is not available; the rest is the same.
 * An insert out of row order is OG_ERR_INTERNAL. */
void og_strmap_init_column(og_strmap *m, void *const *bytes, int64_t *const *offsets);
void og_strmap_free(og_strmap *m);

/* Sizes the map for at least `n` keys holding `key_bytes` bytes in all, so that many inserts
 * neither rehash nor grow the arena.  OG_ERR_NOMEM, OG_ERR_LIMIT when n is past
 * OG_STRMAP_MAX_KEYS. */
og_status og_strmap_reserve(og_strmap *m, size_t n, size_t key_bytes);

/* Inserts key[0..len) -> value unless the key is present.  *stored (may be NULL) receives the
 * value the map now holds for the key (the existing one when it was present), *inserted (may
 * be NULL) 1 when this call added it, 0 when it was already there.  On error the map is
 * unchanged.  OG_ERR_NOMEM, OG_ERR_LIMIT (the map already holds OG_STRMAP_MAX_KEYS keys, or the
 * key is 4 GiB or longer). */
og_status og_strmap_insert(og_strmap *m, const void *key, size_t len, uint32_t value, uint32_t *stored,
                           int *inserted);

/* 1 and *value (may be NULL) when key[0..len) is present, else 0. */
int og_strmap_get(const og_strmap *m, const void *key, size_t len, uint32_t *value);

/* Looks up n keys laid out like a string column (key i = bytes[offsets[i] .. offsets[i+1]),
 * the Arrow/og_vector layout): values[i] = the key's value, or `absent` when it is not in
 * the map.  The same answers as n og_strmap_get calls, but the probes' cache misses overlap
 * (on a map bigger than the cache they, not the hashing, are a lookup's cost). */
void og_strmap_get_many(const og_strmap *m, const uint8_t *bytes, const int64_t *offsets, size_t n, uint32_t absent,
                        uint32_t *values);

size_t og_strmap_count(const og_strmap *m);

/* The i-th inserted entry (i < count): key bytes (borrowed from the arena, valid until the
 * next insert or free), length and value. */
void og_strmap_entry(const og_strmap *m, size_t i, const uint8_t **key, size_t *len, uint32_t *value);

/* Heap bytes the map holds (slots, entries and arena capacity): for cache accounting. */
size_t og_strmap_bytes(const og_strmap *m);

#endif
