/*
 * cache.h — a bounded, thread-safe cache of immutable objects keyed by id strings.
 *
 * Everything OmniGraph caches is immutable and named by an id that never changes meaning
 * (commit ULIDs, schema hashes, table manifest keys, data-file UUIDs), so there is no
 * invalidation protocol: an entry is either present or evicted (INVARIANTS.md 15).
 *
 * Memory is bounded by bytes: each entry is charged the size its owner declares plus its key
 * and bookkeeping; when the total passes the bound, least-recently-used entries are evicted.
 * Entries are reference counted: og_cache_get/og_cache_put hand back a held entry, and the
 * value stays alive until the last holder calls og_cache_entry_release, even after eviction
 * or after the cache itself is freed.  A value bigger than the whole bound is still returned
 * (held only by the caller) but never retained.
 *
 * Key conventions (one cache is shared by the layers of one graph handle): a short prefix
 * per kind — "c:" commits, "s:" schemas, "r:" branch-log entries (graph/); "m:" table
 * manifests, "f:" data files (table/).
 */
#ifndef OG_UTIL_CACHE_H
#define OG_UTIL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef struct og_cache og_cache;
typedef struct og_cache_entry og_cache_entry;

/* Frees a cached value when its last holder lets go. */
typedef void (*og_cache_free_fn)(void *value);

typedef struct og_cache_stats {
    uint64_t hits, misses, inserts, evictions;
    size_t entries;
    size_t bytes;     /* charged bytes of the retained entries */
    size_t max_bytes; /* the bound */
} og_cache_stats;

/* A new empty cache holding at most `max_bytes` charged bytes (0 = retain nothing).
 * Free with og_cache_free. */
og_status og_cache_new(og_cache **out, size_t max_bytes);
/* Drops the cache's own references; values still held by readers live on until released. */
void og_cache_free(og_cache *c);

/* The held entry for `key`, or NULL on a miss.  Release with og_cache_entry_release. */
og_cache_entry *og_cache_get(og_cache *c, const char *key);

/* Inserts `value` (charged `bytes`) under `key`, taking ownership of it: on every path,
 * including failure, the value is eventually freed with `free_fn` (which may be NULL).  If
 * the key is already present (a racing loader), the new value is freed and the existing
 * entry is returned, so all holders share one copy.  *out receives a held entry.
 * Errors: OG_ERR_NOMEM (the value has been freed). */
og_status og_cache_put(og_cache *c, const char *key, void *value, size_t bytes, og_cache_free_fn free_fn,
                       og_cache_entry **out);

/* Changes the size charged for a held entry whose value grew or shrank since it was put (a
 * table view that derived a column or a map), evicting least-recently-used entries — possibly
 * e itself, whose holders keep the value — while the total passes the bound.  An entry no
 * longer in the cache only records the new size. */
void og_cache_entry_recharge(og_cache *c, og_cache_entry *e, size_t bytes);
/* What the entry is charged (declared size + key + bookkeeping). */
size_t og_cache_entry_charge(const og_cache_entry *e);
void *og_cache_entry_value(const og_cache_entry *e);
/* Takes one more hold on an entry the caller already holds. */
og_cache_entry *og_cache_entry_retain(og_cache_entry *e);
/* Lets go of a hold (NULL is ignored). */
void og_cache_entry_release(og_cache_entry *e);

/* Removes `key` if present (holders keep their value).  Returns 1 if it was present. */
int og_cache_remove(og_cache *c, const char *key);

void og_cache_get_stats(og_cache *c, og_cache_stats *out);

#endif
