/*
 * cache.c — the bounded LRU cache of immutable objects behind cache.h.
 *
 * One mutex guards the hash table (chained, power-of-two buckets, FNV-1a) and the LRU list
 * (most recent at the head).  Entry reference counts are atomic so a reader can release an
 * entry without the lock: the cache's own reference is dropped only under the lock (eviction,
 * removal, free), and a reader can only gain a reference under the lock while the cache still
 * holds one, so the count never climbs back from zero.
 */
#include "util/cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* Bookkeeping charged per entry on top of the declared value size and the key. */
#define OG_CACHE_OVERHEAD 96

struct og_cache_entry {
    atomic_size_t refs;
    void *value;
    og_cache_free_fn free_fn;
    size_t charge;
    uint64_t hash;
    int in_cache;
    og_cache_entry *chain;            /* next in bucket */
    og_cache_entry *lru_prev, *lru_next;
    char key[];
};

struct og_cache {
    pthread_mutex_t lock;
    og_cache_entry **buckets;
    size_t nbuckets; /* power of two */
    size_t count;
    size_t bytes, max_bytes;
    og_cache_entry *lru_head, *lru_tail;
    uint64_t hits, misses, inserts, evictions;
};

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static void entry_destroy(og_cache_entry *e)
{
    if (e->free_fn && e->value) e->free_fn(e->value);
    free(e);
}

og_status og_cache_new(og_cache **out, size_t max_bytes)
{
    *out = NULL;
    og_cache *c = calloc(1, sizeof *c);
    if (!c) return og_err(OG_ERR_NOMEM, "cache: out of memory");
    c->nbuckets = 64;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (!c->buckets) {
        free(c);
        return og_err(OG_ERR_NOMEM, "cache: out of memory");
    }
    c->max_bytes = max_bytes;
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return OG_OK;
}

static void lru_unlink(og_cache *c, og_cache_entry *e)
{
    if (e->lru_prev) e->lru_prev->lru_next = e->lru_next;
    else c->lru_head = e->lru_next;
    if (e->lru_next) e->lru_next->lru_prev = e->lru_prev;
    else c->lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(og_cache *c, og_cache_entry *e)
{
    e->lru_prev = NULL;
    e->lru_next = c->lru_head;
    if (c->lru_head) c->lru_head->lru_prev = e;
    c->lru_head = e;
    if (!c->lru_tail) c->lru_tail = e;
}

static og_cache_entry **bucket_slot(og_cache *c, const char *key, uint64_t h)
{
    og_cache_entry **p = &c->buckets[h & (c->nbuckets - 1)];
    while (*p && !((*p)->hash == h && strcmp((*p)->key, key) == 0)) p = &(*p)->chain;
    return p;
}

/* Unhooks e from the table and the LRU list; the caller drops the cache's reference. */
static void detach_locked(og_cache *c, og_cache_entry *e)
{
    og_cache_entry **p = bucket_slot(c, e->key, e->hash);
    if (*p == e) *p = e->chain;
    e->chain = NULL;
    lru_unlink(c, e);
    c->count--;
    c->bytes -= e->charge;
    e->in_cache = 0;
}

static void grow_locked(og_cache *c)
{
    size_t n = c->nbuckets * 2;
    og_cache_entry **nb = calloc(n, sizeof *nb);
    if (!nb) return; /* a longer chain is slower, not wrong */
    for (size_t i = 0; i < c->nbuckets; i++) {
        og_cache_entry *e = c->buckets[i];
        while (e) {
            og_cache_entry *next = e->chain;
            e->chain = nb[e->hash & (n - 1)];
            nb[e->hash & (n - 1)] = e;
            e = next;
        }
    }
    free(c->buckets);
    c->buckets = nb;
    c->nbuckets = n;
}

void og_cache_free(og_cache *c)
{
    if (!c) return;
    og_cache_entry *e = c->lru_head;
    while (e) {
        og_cache_entry *next = e->lru_next;
        e->in_cache = 0;
        og_cache_entry_release(e);
        e = next;
    }
    free(c->buckets);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

og_cache_entry *og_cache_get(og_cache *c, const char *key)
{
    uint64_t h = key_hash(key);
    pthread_mutex_lock(&c->lock);
    og_cache_entry *e = *bucket_slot(c, key, h);
    if (e) {
        atomic_fetch_add(&e->refs, 1);
        lru_unlink(c, e);
        lru_push_front(c, e);
        c->hits++;
    } else {
        c->misses++;
    }
    pthread_mutex_unlock(&c->lock);
    return e;
}

/* Evicts from the LRU tail while over the bound; returns the victims chained (free them
 * outside the lock). */
static og_cache_entry *trim_locked(og_cache *c)
{
    og_cache_entry *victims = NULL;
    while (c->bytes > c->max_bytes && c->lru_tail) {
        og_cache_entry *v = c->lru_tail;
        detach_locked(c, v);
        c->evictions++;
        v->chain = victims;
        victims = v;
    }
    return victims;
}

/* Drops the cache's hold on each evicted entry (outside the lock: a value's free may be slow). */
static void release_chain(og_cache_entry *victims)
{
    while (victims) {
        og_cache_entry *next = victims->chain;
        victims->chain = NULL;
        og_cache_entry_release(victims);
        victims = next;
    }
}

og_status og_cache_put(og_cache *c, const char *key, void *value, size_t bytes, og_cache_free_fn free_fn,
                       og_cache_entry **out)
{
    *out = NULL;
    size_t klen = strlen(key);
    og_cache_entry *e = malloc(sizeof *e + klen + 1);
    if (!e) {
        if (free_fn && value) free_fn(value);
        return og_err(OG_ERR_NOMEM, "cache: out of memory inserting %s", key);
    }
    memcpy(e->key, key, klen + 1);
    atomic_init(&e->refs, 1); /* the caller's hold */
    e->value = value;
    e->free_fn = free_fn;
    e->charge = bytes + klen + OG_CACHE_OVERHEAD;
    e->hash = key_hash(key);
    e->in_cache = 0;
    e->chain = e->lru_prev = e->lru_next = NULL;

    og_cache_entry *victims = NULL;
    pthread_mutex_lock(&c->lock);
    og_cache_entry **slot = bucket_slot(c, key, e->hash);
    if (*slot) {
        og_cache_entry *old = *slot;
        atomic_fetch_add(&old->refs, 1);
        lru_unlink(c, old);
        lru_push_front(c, old);
        pthread_mutex_unlock(&c->lock);
        entry_destroy(e);
        *out = old;
        return OG_OK;
    }
    c->inserts++;
    if (e->charge <= c->max_bytes) {
        atomic_fetch_add(&e->refs, 1); /* the cache's hold */
        e->in_cache = 1;
        e->chain = *slot;
        *slot = e;
        lru_push_front(c, e);
        c->count++;
        c->bytes += e->charge;
        victims = trim_locked(c);
        if (c->count > c->nbuckets) grow_locked(c);
    }
    pthread_mutex_unlock(&c->lock);
    release_chain(victims);
    *out = e;
    return OG_OK;
}

void og_cache_entry_recharge(og_cache *c, og_cache_entry *e, size_t bytes)
{
    if (!c || !e) return;
    og_cache_entry *victims = NULL;
    pthread_mutex_lock(&c->lock);
    size_t charge = bytes + strlen(e->key) + OG_CACHE_OVERHEAD;
    if (e->in_cache && charge != e->charge) {
        c->bytes = c->bytes - e->charge + charge;
        e->charge = charge;
        victims = trim_locked(c); /* may be e itself: its holders keep the value */
    } else if (!e->in_cache) {
        e->charge = charge;
    }
    pthread_mutex_unlock(&c->lock);
    release_chain(victims);
}

size_t og_cache_entry_charge(const og_cache_entry *e) { return e ? e->charge : 0; }

void *og_cache_entry_value(const og_cache_entry *e) { return e ? e->value : NULL; }

og_cache_entry *og_cache_entry_retain(og_cache_entry *e)
{
    if (e) atomic_fetch_add(&e->refs, 1);
    return e;
}

void og_cache_entry_release(og_cache_entry *e)
{
    if (!e) return;
    if (atomic_fetch_sub(&e->refs, 1) == 1) entry_destroy(e);
}

int og_cache_remove(og_cache *c, const char *key)
{
    uint64_t h = key_hash(key);
    pthread_mutex_lock(&c->lock);
    og_cache_entry *e = *bucket_slot(c, key, h);
    if (e) detach_locked(c, e);
    pthread_mutex_unlock(&c->lock);
    if (e) og_cache_entry_release(e);
    return e != NULL;
}

void og_cache_get_stats(og_cache *c, og_cache_stats *out)
{
    pthread_mutex_lock(&c->lock);
    out->hits = c->hits;
    out->misses = c->misses;
    out->inserts = c->inserts;
    out->evictions = c->evictions;
    out->entries = c->count;
    out->bytes = c->bytes;
    out->max_bytes = c->max_bytes;
    pthread_mutex_unlock(&c->lock);
}
