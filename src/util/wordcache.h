/*
 * wordcache.h — a bounded cache of runs of 32-bit words under 64-bit keys, for readers that
 * copy the few parts of a large file they touch with pread instead of faulting its mapping
 * (a topology's adjacency lists, a key map's buckets: docs/engine.md "Memory").
 *
 * Open addressing over the keys, the runs back to back in one arena addressed by word index
 * (so a run may name another word of the arena and stay valid when the arena grows).  Slots
 * plus arena never pass `bound` bytes: past it og_wordcache_reserve fails and sets `full`,
 * and the caller reads its mapping instead until it clears the cache.  Not thread-safe.
 */
#ifndef OG_UTIL_WORDCACHE_H
#define OG_UTIL_WORDCACHE_H

#include <stddef.h>
#include <stdint.h>

struct og_wordcache_slot;

typedef struct og_wordcache {
    struct og_wordcache_slot *slot;
    size_t slots, used;
    uint32_t *arena;  /* the runs; callers fill arena[len ..] after og_wordcache_reserve */
    size_t len, cap;  /* words in use, words allocated */
    size_t bound;     /* bytes of slots + arena at most */
    int full;         /* a reserve failed: read elsewhere until og_wordcache_clear */
} og_wordcache;

/* An empty cache of at most `bound` bytes (zeroed memory is an empty cache of bound 0). */
void og_wordcache_init(og_wordcache *c, size_t bound);
/* Forgets every run (and `full`), keeping the memory. */
void og_wordcache_clear(og_wordcache *c);
void og_wordcache_free(og_wordcache *c);
/* The run stored under key (key < UINT64_MAX) and the n its writer gave, or NULL. */
const uint32_t *og_wordcache_find(const og_wordcache *c, uint64_t key, uint32_t *n);
/* Room for `words` more words at arena[len], and a slot for one more key: 1, or 0 (and
 * `full` set) past the bound or out of memory. */
int og_wordcache_reserve(og_wordcache *c, size_t words);
/* Records the run of `words` words at arena[len] (filled after a reserve) under key, with n. */
void og_wordcache_add(og_wordcache *c, uint64_t key, size_t words, uint32_t n);

/* pread of exactly len bytes at off (EINTR retried): 1, or 0 on an error or a short file. */
int og_pread_full(int fd, void *dst, size_t len, uint64_t off);

#endif
