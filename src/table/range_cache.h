/*
 * range_cache.h — ranged reads of immutable objects through a bounded, process-wide LRU cache
 * of fetched byte ranges, with a small prefetch pool.  The table layer reads data files on a
 * non-local store (S3) this way instead of og_store_map, which would copy the whole object
 * (docs/tables.md "Reading tables on an object store").
 *
 * A range is fetched with og_store_get_range and cached under (store URI, object key, offset,
 * length); objects are immutable (data files are uniquely named), so a cached range never goes
 * stale.  The cache is a util/cache.h cache (thread-safe, refcounted): a pin handed out stays
 * valid after eviction until it is released.  Two readers asking for the same missing range
 * at once fetch it once (the second waits for the first).  og_range_prefetch queues a fetch
 * for a pool of worker threads (started on first use) and returns at once; a queue that is
 * full drops the hint.
 *
 * Knobs, read from the environment on first use (og_range_configure overrides them):
 *   OG_RANGE_CACHE_BYTES       cache bound in bytes (default 64 MiB; 0 = cache nothing)
 *   OG_RANGE_PREFETCH_THREADS  prefetch workers (default 8; 0 = no prefetch)
 *   OG_RANGE_READAHEAD         pages per column a scan hints ahead (default 8)
 *   OG_RANGE_TAIL_BYTES        first read at a file's end, for its footer + metadata (64 KiB)
 *   OG_TABLE_RANGE_READS=1     use range reads on local stores too (tests, benchmarks)
 *
 * Fork safety: a child process starts with an empty cache and no workers (pthread_atfork).
 */
#ifndef OG_TABLE_RANGE_CACHE_H
#define OG_TABLE_RANGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "store/store.h"
#include "table/lance_file.h"

typedef struct og_range_config {
    size_t cache_bytes;
    unsigned prefetch_threads;
    unsigned readahead;
    uint64_t tail_bytes;
    int force;        /* 1: range reads on local stores too */
} og_range_config;

/* Counters since start (or the last reset), over every store. */
typedef struct og_range_stats {
    uint64_t gets;          /* ranged GETs sent to a store (reads + prefetches) */
    uint64_t bytes_fetched; /* bytes those GETs returned */
    uint64_t hits, misses;  /* reads answered from the cache / not */
    uint64_t waits;         /* reads that waited for the same range's fetch in flight */
    uint64_t prefetches;    /* prefetch fetches run by the pool */
    uint64_t dropped;       /* prefetch hints dropped (queue full, or already cached) */
    uint64_t heads;         /* size lookups (HEAD) for files whose manifest lacks the size */
} og_range_stats;

void og_range_config_get(og_range_config *out);
/* Replaces the configuration; the cache is replaced by an empty one with the new bound
 * (pins handed out before stay valid).  Waits for queued prefetches to drain. */
og_status og_range_configure(const og_range_config *c);

void og_range_stats_get(og_range_stats *out);
void og_range_stats_reset(void);

/* 1 when tables on `st` should be read through ranges (not local, or forced). */
int og_range_use(const og_store *st);

/* Bytes [off, off+len) of `key` (exactly len bytes: a shorter object is OG_ERR_CORRUPT).
 * *data is valid until og_range_release(*pin). */
og_status og_range_read(og_store *st, const char *key, uint64_t off, uint64_t len, const uint8_t **data,
                        void **pin);
void og_range_release(void *pin);

/* A data file this process has just written: caches its tail window — the first read a
 * reader makes (og_range_file_source's tail_bytes), which for a small file is all of it — so
 * reading it back costs no request.  Nothing happens when tables on `st` are not read
 * through ranges. */
void og_range_seed(og_store *st, const char *key, const void *data, size_t len);

/* Queues a fetch of the range into the cache on behalf of `owner` (any pointer; the store
 * and the owner must stay alive until og_range_cancel(owner) returns). */
void og_range_prefetch(void *owner, og_store *st, const char *key, uint64_t off, uint64_t len);
/* Drops owner's queued hints and waits for its running ones. */
void og_range_cancel(void *owner);

/* One object as an og_lance_source (lance_file.h).  og_range_file_close cancels its
 * prefetches; close it after the reader that uses it. */
typedef struct og_range_file og_range_file;
og_status og_range_file_open(og_range_file **out, og_store *st, const char *key, uint64_t size);
void og_range_file_source(og_range_file *f, og_lance_source *src);
void og_range_file_close(og_range_file *f);

#endif
