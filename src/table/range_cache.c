/*
 * range_cache.c — the process-wide cache of fetched byte ranges and its prefetch pool
 * (range_cache.h).
 *
 * State: one og_cache (util/cache.h) of fetched ranges keyed "<store uri>|<key>@<off>+<len>",
 * a list of ranges in flight (so a range is fetched once however many readers want it), a
 * bounded queue of prefetch jobs and up to N detached worker threads.  One mutex `mu` guards
 * everything but the og_cache (which has its own lock; we may call it with `mu` held, never
 * the other way round) and the counters (atomics).  A fetch itself runs without `mu`.
 */
#include "table/range_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cache.h"
#include "util/error.h"

#define QUEUE_MAX 64
#define WORKERS_MAX 16

typedef struct inflight {
    char *ck;
    struct inflight *next;
} inflight;

typedef struct job {
    void *owner;
    og_store *st;
    char *key;
    uint64_t off, len;
    struct job *next;
} job;

typedef struct running {
    void *owner;
    struct running *next;
} running;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;  /* a fetch finished / a job ended */
static pthread_cond_t qcv = PTHREAD_COND_INITIALIZER; /* a job was queued */
static og_cache *cache;
static og_range_config cfg;
static inflight *flights;
static job *qhead, *qtail;
static size_t qlen;
static running *runs;
static unsigned nworkers;
static int forking; /* a fork is being prepared: workers take no new job */

static atomic_uint_fast64_t n_gets, n_bytes, n_hits, n_misses, n_waits, n_prefetches, n_dropped, n_heads;

static unsigned long long env_u64(const char *name, unsigned long long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return *end ? dflt : x;
}

/* A fork must not copy a worker in the middle of a fetch: it may hold the allocator's or the
 * store's locks, and the child would wait on them forever.  So the prepare handler lets the
 * running jobs finish and keeps the workers from starting new ones until the fork is done. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&mu);
    forking = 1;
    while (runs) pthread_cond_wait(&cv, &mu);
}
static void atfork_parent(void)
{
    forking = 0;
    pthread_cond_broadcast(&qcv);
    pthread_mutex_unlock(&mu);
}
static void atfork_child(void)
{
    /* No workers survive a fork; a worker may have held the cache's lock, so start afresh
     * (the old cache and any queued jobs are abandoned, not freed). */
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&cv, NULL);
    pthread_cond_init(&qcv, NULL);
    nworkers = 0;
    forking = 0;
    flights = NULL;
    qhead = qtail = NULL;
    qlen = 0;
    runs = NULL;
    if (og_cache_new(&cache, cfg.cache_bytes) != OG_OK) cache = NULL;
}

static void init_once(void)
{
    cfg.cache_bytes = (size_t)env_u64("OG_RANGE_CACHE_BYTES", 64ull << 20);
    cfg.prefetch_threads = (unsigned)env_u64("OG_RANGE_PREFETCH_THREADS", 8);
    if (cfg.prefetch_threads > WORKERS_MAX) cfg.prefetch_threads = WORKERS_MAX;
    cfg.readahead = (unsigned)env_u64("OG_RANGE_READAHEAD", 8);
    cfg.tail_bytes = env_u64("OG_RANGE_TAIL_BYTES", 65536);
    cfg.force = env_u64("OG_TABLE_RANGE_READS", 0) != 0;
    if (og_cache_new(&cache, cfg.cache_bytes) != OG_OK) cache = NULL;
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

void og_range_config_get(og_range_config *out)
{
    pthread_once(&once, init_once);
    pthread_mutex_lock(&mu);
    *out = cfg;
    pthread_mutex_unlock(&mu);
}

og_status og_range_configure(const og_range_config *c)
{
    pthread_once(&once, init_once);
    og_cache *nc;
    OG_TRY(og_cache_new(&nc, c->cache_bytes));
    pthread_mutex_lock(&mu);
    while (qlen || runs || flights) pthread_cond_wait(&cv, &mu);
    og_cache *old = cache;
    cache = nc;
    cfg = *c;
    if (cfg.prefetch_threads > WORKERS_MAX) cfg.prefetch_threads = WORKERS_MAX;
    pthread_mutex_unlock(&mu);
    og_cache_free(old);
    return OG_OK;
}

void og_range_stats_get(og_range_stats *o)
{
    o->gets = atomic_load(&n_gets);
    o->bytes_fetched = atomic_load(&n_bytes);
    o->hits = atomic_load(&n_hits);
    o->misses = atomic_load(&n_misses);
    o->waits = atomic_load(&n_waits);
    o->prefetches = atomic_load(&n_prefetches);
    o->dropped = atomic_load(&n_dropped);
    o->heads = atomic_load(&n_heads);
}

void og_range_stats_reset(void)
{
    atomic_store(&n_gets, 0);
    atomic_store(&n_bytes, 0);
    atomic_store(&n_hits, 0);
    atomic_store(&n_misses, 0);
    atomic_store(&n_waits, 0);
    atomic_store(&n_prefetches, 0);
    atomic_store(&n_dropped, 0);
    atomic_store(&n_heads, 0);
}

int og_range_use(const og_store *st)
{
    pthread_once(&once, init_once);
    return !og_store_is_local(st) || cfg.force;
}

/* ---- fetching -------------------------------------------------------------------------- */

static void bytes_free(void *v)
{
    og_bytes *b = v;
    og_bytes_free(b);
    free(b);
}

static char *cache_key(og_store *st, const char *key, uint64_t off, uint64_t len)
{
    const char *uri = og_store_uri(st);
    size_t n = strlen(uri) + strlen(key) + 48;
    char *ck = malloc(n);
    if (ck) snprintf(ck, n, "%s|%s@%llu+%llu", uri, key, (unsigned long long)off, (unsigned long long)len);
    return ck;
}

static int in_flight(const char *ck)
{
    for (inflight *f = flights; f; f = f->next)
        if (strcmp(f->ck, ck) == 0) return 1;
    return 0;
}

/* The held cache entry of a range, fetching it when nobody has.  `prefetch` = called from the
 * pool: *out may be NULL on return when the range is cached or in flight already. */
static og_status get_entry(og_store *st, const char *key, uint64_t off, uint64_t len, int prefetch,
                           og_cache_entry **out)
{
    *out = NULL;
    char *ck = cache_key(st, key, off, len);
    if (!ck) return og_err(OG_ERR_NOMEM, "out of memory");
    pthread_mutex_lock(&mu);
    og_cache *c = cache;
    int waited = 0;
    for (;;) {
        og_cache_entry *e = c ? og_cache_get(c, ck) : NULL;
        if (e) {
            pthread_mutex_unlock(&mu);
            free(ck);
            if (prefetch) {
                og_cache_entry_release(e);
                atomic_fetch_add(&n_dropped, 1);
            } else {
                atomic_fetch_add(&n_hits, 1);
                *out = e;
            }
            return OG_OK;
        }
        if (!in_flight(ck) || waited) break;
        if (prefetch) {
            pthread_mutex_unlock(&mu);
            free(ck);
            atomic_fetch_add(&n_dropped, 1);
            return OG_OK;
        }
        atomic_fetch_add(&n_waits, 1);
        while (in_flight(ck)) pthread_cond_wait(&cv, &mu);
        waited = 1; /* once: if it is still not cached (too big, failed), fetch it ourselves */
    }
    inflight *me = malloc(sizeof *me);
    if (!me) {
        pthread_mutex_unlock(&mu);
        free(ck);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    me->ck = ck;
    me->next = flights;
    flights = me;
    pthread_mutex_unlock(&mu);

    if (prefetch) atomic_fetch_add(&n_prefetches, 1);
    else atomic_fetch_add(&n_misses, 1);
    og_bytes *b = calloc(1, sizeof *b);
    og_status s = b ? og_store_get_range(st, key, off, len, b) : og_err(OG_ERR_NOMEM, "out of memory");
    atomic_fetch_add(&n_gets, 1);
    if (s == OG_OK) atomic_fetch_add(&n_bytes, b->len);
    if (s == OG_OK && b->len != len)
        s = og_err(OG_ERR_CORRUPT, "%s: bytes %llu+%llu asked, the object ends after %zu of them", key,
                   (unsigned long long)off, (unsigned long long)len, b->len);
    og_cache_entry *e = NULL;
    if (s == OG_OK) {
        if (c) {
            s = og_cache_put(c, ck, b, len, bytes_free, &e);
        } else {
            bytes_free(b);
            s = og_err(OG_ERR_NOMEM, "range cache: out of memory");
        }
        b = NULL;
    }
    if (b) bytes_free(b);

    pthread_mutex_lock(&mu);
    for (inflight **pp = &flights; *pp; pp = &(*pp)->next)
        if (*pp == me) {
            *pp = me->next;
            break;
        }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    free(me->ck);
    free(me);
    if (s != OG_OK) return s;
    if (prefetch) og_cache_entry_release(e);
    else *out = e;
    return OG_OK;
}

og_status og_range_read(og_store *st, const char *key, uint64_t off, uint64_t len, const uint8_t **data,
                        void **pin)
{
    pthread_once(&once, init_once);
    *data = NULL;
    *pin = NULL;
    og_cache_entry *e;
    OG_TRY(get_entry(st, key, off, len, 0, &e));
    og_bytes *b = og_cache_entry_value(e);
    static const uint8_t empty[1] = {0};
    *data = b->data ? b->data : empty;
    *pin = e;
    return OG_OK;
}

void og_range_release(void *pin) { og_cache_entry_release(pin); }

void og_range_seed(og_store *st, const char *key, const void *data, size_t len)
{
    pthread_once(&once, init_once);
    if (!og_range_use(st) || !len) return;
    pthread_mutex_lock(&mu);
    uint64_t tail = cfg.tail_bytes ? cfg.tail_bytes : 65536;
    og_cache *c = cache;
    pthread_mutex_unlock(&mu);
    if (tail < OG_LANCE_FOOTER_SIZE) tail = OG_LANCE_FOOTER_SIZE;
    if (tail > len) tail = len;
    if (!c) return;
    char *ck = cache_key(st, key, len - tail, tail);
    og_bytes *b = ck ? calloc(1, sizeof *b) : NULL;
    if (b) b->data = malloc(tail);
    if (!b || !b->data) {
        if (b) free(b);
        free(ck);
        return;
    }
    memcpy(b->data, (const uint8_t *)data + (len - tail), tail);
    b->len = tail;
    og_cache_entry *e;
    if (og_cache_put(c, ck, b, tail, bytes_free, &e) == OG_OK) og_cache_entry_release(e);
    og_error_clear();
    free(ck);
}

/* ---- the prefetch pool ----------------------------------------------------------------- */

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!qhead || forking) pthread_cond_wait(&qcv, &mu);
        job *j = qhead;
        qhead = j->next;
        if (!qhead) qtail = NULL;
        qlen--;
        running r = {j->owner, runs};
        runs = &r;
        pthread_mutex_unlock(&mu);
        og_cache_entry *e;
        if (get_entry(j->st, j->key, j->off, j->len, 1, &e) != OG_OK) og_error_clear();
        pthread_mutex_lock(&mu);
        for (running **pp = &runs; *pp; pp = &(*pp)->next)
            if (*pp == &r) {
                *pp = r.next;
                break;
            }
        free(j->key);
        free(j);
        pthread_cond_broadcast(&cv);
    }
    return NULL;
}

void og_range_prefetch(void *owner, og_store *st, const char *key, uint64_t off, uint64_t len)
{
    pthread_once(&once, init_once);
    pthread_mutex_lock(&mu);
    if (!cfg.prefetch_threads || qlen >= QUEUE_MAX) {
        if (cfg.prefetch_threads) atomic_fetch_add(&n_dropped, 1);
        pthread_mutex_unlock(&mu);
        return;
    }
    while (nworkers < cfg.prefetch_threads) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0) break;
        pthread_detach(t);
        nworkers++;
    }
    job *j = calloc(1, sizeof *j);
    if (j) j->key = strdup(key);
    if (!j || !j->key || !nworkers) {
        if (j) free(j->key);
        free(j);
        pthread_mutex_unlock(&mu);
        return;
    }
    j->owner = owner;
    j->st = st;
    j->off = off;
    j->len = len;
    if (qtail) qtail->next = j;
    else qhead = j;
    qtail = j;
    qlen++;
    pthread_cond_signal(&qcv);
    pthread_mutex_unlock(&mu);
}

void og_range_cancel(void *owner)
{
    pthread_once(&once, init_once);
    pthread_mutex_lock(&mu);
    job **pp = &qhead;
    qtail = NULL;
    while (*pp) {
        job *j = *pp;
        if (j->owner == owner) {
            *pp = j->next;
            qlen--;
            free(j->key);
            free(j);
        } else {
            qtail = j;
            pp = &j->next;
        }
    }
    for (;;) {
        int busy = 0;
        for (running *r = runs; r; r = r->next) busy |= r->owner == owner;
        if (!busy) break;
        pthread_cond_wait(&cv, &mu);
    }
    pthread_cond_broadcast(&cv); /* og_range_configure may wait for an empty queue */
    pthread_mutex_unlock(&mu);
}

/* ---- one object as a lance range source ------------------------------------------------ */

struct og_range_file {
    og_store *st;
    char *key;
    uint64_t size;
};

og_status og_range_file_open(og_range_file **out, og_store *st, const char *key, uint64_t size)
{
    pthread_once(&once, init_once);
    *out = NULL;
    if (!size) {
        atomic_fetch_add(&n_heads, 1);
        OG_TRY(og_store_head(st, key, &size));
    }
    og_range_file *f = calloc(1, sizeof *f);
    if (!f || !(f->key = strdup(key))) {
        free(f);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    f->st = st;
    f->size = size;
    *out = f;
    return OG_OK;
}

static og_status src_read(void *ctx, uint64_t off, uint64_t len, const uint8_t **data, void **pin)
{
    og_range_file *f = ctx;
    return og_range_read(f->st, f->key, off, len, data, pin);
}

static void src_release(void *ctx, void *pin)
{
    (void)ctx;
    og_range_release(pin);
}

static void src_prefetch(void *ctx, uint64_t off, uint64_t len)
{
    og_range_file *f = ctx;
    og_range_prefetch(f, f->st, f->key, off, len);
}

void og_range_file_source(og_range_file *f, og_lance_source *src)
{
    og_range_config c;
    og_range_config_get(&c);
    memset(src, 0, sizeof *src);
    src->size = f->size;
    src->tail_bytes = c.tail_bytes;
    src->readahead = c.prefetch_threads ? c.readahead : 0;
    src->ctx = f;
    src->read = src_read;
    src->release = src_release;
    src->prefetch = src_prefetch;
}

void og_range_file_close(og_range_file *f)
{
    if (!f) return;
    og_range_cancel(f);
    free(f->key);
    free(f);
}
