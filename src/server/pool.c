/*
 * pool.c — the server's worker pool (pool.h): a fixed set of threads running complete
 * requests taken from one bounded queue.
 *
 * Why a pool apart from the connection threads: a connection costs a socket and a little
 * memory, a running request costs a thread and possibly gigabytes.  Keeping them apart lets
 * hundreds of mostly-waiting clients stay connected (the libmicrohttpd threads only read
 * heads and bodies and write answers) while the number of requests that run at once stays
 * the worker count; the queue is bounded, so an overload is answered 503 with Retry-After
 * instead of growing a backlog nobody will wait for.
 */
#include <pthread.h>
#include <stdlib.h>

#include "server/pool.h"

struct og_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*run)(void *item);
    void **q;            /* ring of queue_max items */
    unsigned head, len, reserved, queue_max;
    unsigned nthreads, busy;
    int stop;
    pthread_t *th;
};

static void *worker(void *arg)
{
    og_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        /* a reservation taken before the stop is still to be pushed: wait for it, or its
         * request would stay suspended with no worker to run it */
        while (!p->len && !(p->stop && !p->reserved)) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->len) break; /* stopping, and nothing left or promised */
        void *item = p->q[p->head];
        p->head = (p->head + 1) % p->queue_max;
        p->len--;
        p->busy++;
        pthread_mutex_unlock(&p->mu);
        p->run(item);
        pthread_mutex_lock(&p->mu);
        p->busy--;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

og_pool *og_pool_new(unsigned workers, unsigned queue_max, void (*run)(void *item))
{
    og_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->q = calloc(queue_max ? queue_max : 1, sizeof *p->q);
    p->th = calloc(workers, sizeof *p->th);
    if (!p->q || !p->th) {
        free(p->q);
        free(p->th);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->run = run;
    p->queue_max = queue_max ? queue_max : 1;
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&p->th[i], NULL, worker, p)) break;
        p->nthreads++;
    }
    if (!p->nthreads) {
        og_pool_free(p);
        return NULL;
    }
    return p;
}

int og_pool_reserve(og_pool *p)
{
    pthread_mutex_lock(&p->mu);
    /* a request waits only while every worker is busy: the queue holds what they have not
     * taken yet, reservations the ones about to be pushed */
    int ok = !p->stop && p->len + p->reserved < p->queue_max;
    if (ok) p->reserved++;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

void og_pool_push(og_pool *p, void *item)
{
    pthread_mutex_lock(&p->mu);
    p->reserved--;
    p->q[(p->head + p->len) % p->queue_max] = item;
    p->len++;
    /* all of them: when stopping, the ones idle may now leave (reserved reached 0) */
    if (p->stop) pthread_cond_broadcast(&p->cv);
    else pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void og_pool_stats(og_pool *p, unsigned *busy, unsigned *queued)
{
    pthread_mutex_lock(&p->mu);
    *busy = p->busy;
    *queued = p->len;
    pthread_mutex_unlock(&p->mu);
}

void og_pool_stop(og_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    int joined = p->stop == 2;
    if (!joined) p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (joined) return;
    for (unsigned i = 0; i < p->nthreads; i++) pthread_join(p->th[i], NULL);
    pthread_mutex_lock(&p->mu);
    p->stop = 2;
    pthread_mutex_unlock(&p->mu);
}

void og_pool_free(og_pool *p)
{
    if (!p) return;
    og_pool_stop(p);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->q);
    free(p->th);
    free(p);
}
