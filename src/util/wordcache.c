/*
 * wordcache.c — the bounded pread cache of runs of words (wordcache.h).  One structure for
 * the topology's lists and the key map's buckets, which had each grown a copy of it.
 */
#include "util/wordcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct og_wordcache_slot {
    uint64_t key_plus1; /* 0: empty */
    uint32_t pos, n;    /* the run at arena[pos]; the writer's n */
};

static size_t home(uint64_t k, size_t slots) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 32) & (slots - 1); }

void og_wordcache_init(og_wordcache *c, size_t bound)
{
    memset(c, 0, sizeof *c);
    c->bound = bound;
}

void og_wordcache_clear(og_wordcache *c)
{
    if (c->slot) memset(c->slot, 0, c->slots * sizeof *c->slot);
    c->used = c->len = 0;
    c->full = 0;
}

void og_wordcache_free(og_wordcache *c)
{
    free(c->slot);
    free(c->arena);
    size_t bound = c->bound;
    og_wordcache_init(c, bound);
}

const uint32_t *og_wordcache_find(const og_wordcache *c, uint64_t key, uint32_t *n)
{
    if (!c->slots) return NULL;
    uint64_t k = key + 1;
    for (size_t h = home(k, c->slots); c->slot[h].key_plus1; h = (h + 1) & (c->slots - 1))
        if (c->slot[h].key_plus1 == k) {
            *n = c->slot[h].n;
            return c->arena + c->slot[h].pos;
        }
    return NULL;
}

int og_wordcache_reserve(og_wordcache *c, size_t words)
{
    size_t slots = c->slots ? c->slots : 64, cap = c->cap ? c->cap : 1024;
    while ((c->used + 1) * 2 > slots) slots *= 2;
    while (c->len + words > cap) cap *= 2;
    if (slots * sizeof(struct og_wordcache_slot) + cap * sizeof(uint32_t) > c->bound) goto full;
    if (cap != c->cap) {
        uint32_t *a = realloc(c->arena, cap * sizeof *a);
        if (!a) goto full;
        c->arena = a, c->cap = cap;
    }
    if (slots != c->slots) {
        struct og_wordcache_slot *ns = calloc(slots, sizeof *ns);
        if (!ns) goto full;
        for (size_t i = 0; i < c->slots; i++) {
            if (!c->slot[i].key_plus1) continue;
            size_t h = home(c->slot[i].key_plus1, slots);
            while (ns[h].key_plus1) h = (h + 1) & (slots - 1);
            ns[h] = c->slot[i];
        }
        free(c->slot);
        c->slot = ns, c->slots = slots;
    }
    return 1;
full:
    c->full = 1;
    return 0;
}

void og_wordcache_add(og_wordcache *c, uint64_t key, size_t words, uint32_t n)
{
    uint64_t k = key + 1;
    size_t h = home(k, c->slots);
    while (c->slot[h].key_plus1) h = (h + 1) & (c->slots - 1);
    c->slot[h] = (struct og_wordcache_slot){k, (uint32_t)c->len, n};
    c->used++;
    c->len += words;
}

int og_pread_full(int fd, void *dst, size_t len, uint64_t off)
{
    uint8_t *p = dst;
    while (len) {
        ssize_t got = pread(fd, p, len, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        p += got, off += (uint64_t)got, len -= (size_t)got;
    }
    return 1;
}
