/*
 * batch_ring.c — worker threads that read, in turn, and parse, in parallel, the batches one
 * consumer takes in order.  See batch_ring.h; one mutex and one condition variable guard the
 * turn, the consumer's position and each slot's "ready" flag (a handful of waits per batch of
 * ~1,000 records, so contention is not the cost).
 */
#include "load/batch_ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define RING_MAX 16

typedef struct ring_worker {
    og_batch_ring *r;
    void *state;
    size_t first; /* the first batch number it makes */
    pthread_t thread;
} ring_worker;

struct og_batch_ring {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    og_batch_ring_ops ops;
    void *ctx;
    ring_worker workers[RING_MAX];
    size_t nworkers, nstarted;
    void *slots[RING_MAX];
    size_t slot_seq[RING_MAX]; /* which batch a ready slot holds */
    int ready[RING_MAX];       /* parsed, not yet released by the consumer */
    size_t nslots;
    size_t head;      /* the batch number the consumer takes next */
    size_t read_turn; /* the batch number whose input is read next */
    int ended;        /* a batch ended the input: none after it is read */
    int stop;
    int holding;      /* the consumer holds batch `head` */
};

static void *worker_main(void *arg)
{
    ring_worker *w = arg;
    og_batch_ring *r = w->r;
    for (size_t seq = w->first;; seq += r->nworkers) {
        size_t slot = seq % r->nslots;
        void *b = r->slots[slot];
        pthread_mutex_lock(&r->mu);
        while (!r->stop && !r->ended && (seq >= r->head + r->nslots || r->read_turn != seq))
            pthread_cond_wait(&r->cv, &r->mu);
        int quit = r->stop || r->ended;
        pthread_mutex_unlock(&r->mu);
        if (quit) return NULL;
        r->ops.clear(r->ctx, w->state, b); /* what this worker made for batch seq - nslots */
        int ended = r->ops.read(r->ctx, w->state, b);
        pthread_mutex_lock(&r->mu);
        r->read_turn++;
        if (ended) r->ended = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        ended = r->ops.parse(r->ctx, w->state, b, ended);
        pthread_mutex_lock(&r->mu);
        r->slot_seq[slot] = seq;
        r->ready[slot] = 1;
        if (ended) r->ended = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (ended) return NULL;
    }
}

void og_batch_ring_free(og_batch_ring *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    for (size_t i = 0; i < r->nstarted; i++) pthread_join(r->workers[i].thread, NULL);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

og_status og_batch_ring_start(og_batch_ring **out, const og_batch_ring_ops *ops, void *ctx, void *const *workers,
                              size_t nworkers, void *const *batches, size_t nslots)
{
    *out = NULL;
    if (!nworkers || nworkers > RING_MAX || nslots > RING_MAX || nslots % nworkers)
        return og_err(OG_ERR_INTERNAL, "batch ring: %zu workers over %zu slots", nworkers, nslots);
    og_batch_ring *r = calloc(1, sizeof *r);
    if (!r) return og_err(OG_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->ops = *ops;
    r->ctx = ctx;
    r->nworkers = nworkers;
    r->nslots = nslots;
    memcpy(r->slots, batches, nslots * sizeof *batches);
    for (size_t i = 0; i < nworkers; i++) {
        ring_worker *w = &r->workers[i];
        w->r = r;
        w->state = workers[i];
        w->first = i;
        int rc = pthread_create(&w->thread, NULL, worker_main, w);
        if (rc) {
            og_batch_ring_free(r);
            return og_err_errno(rc, "cannot start a parser thread");
        }
        r->nstarted++;
    }
    *out = r;
    return OG_OK;
}

void *og_batch_ring_take(og_batch_ring *r)
{
    size_t slot = r->head % r->nslots;
    if (!r->holding) {
        pthread_mutex_lock(&r->mu);
        while (!(r->ready[slot] && r->slot_seq[slot] == r->head)) pthread_cond_wait(&r->cv, &r->mu);
        pthread_mutex_unlock(&r->mu);
        r->holding = 1;
    }
    return r->slots[slot];
}

void *og_batch_ring_held(const og_batch_ring *r) { return r->holding ? r->slots[r->head % r->nslots] : NULL; }

void og_batch_ring_release(og_batch_ring *r)
{
    pthread_mutex_lock(&r->mu);
    r->ready[r->head % r->nslots] = 0;
    r->head++;
    r->holding = 0;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}
