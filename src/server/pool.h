/*
 * pool.h — a fixed pool of worker threads over one bounded queue (pool.c): the server runs
 * complete requests on it, apart from the threads that hold connections.
 */
#ifndef OG_SERVER_POOL_H
#define OG_SERVER_POOL_H

typedef struct og_pool og_pool;

/* Starts `workers` threads that call run(item) for each pushed item; at most queue_max items
 * wait.  NULL when no thread could be started. */
og_pool *og_pool_new(unsigned workers, unsigned queue_max, void (*run)(void *item));
/* Takes a place in the queue: 1, or 0 when it is full (or the pool stops) — then answer 503.
 * A reservation is always followed by exactly one og_pool_push. */
int og_pool_reserve(og_pool *p);
void og_pool_push(og_pool *p, void *item);
/* Workers running an item, and items waiting. */
void og_pool_stats(og_pool *p, unsigned *busy, unsigned *queued);
/* Refuses new reservations, runs every queued or reserved item, then joins the threads.  The
 * pool stays valid (reserve answers 0) until og_pool_free, so connection threads that still
 * hold it are safe; called once, from one thread. */
void og_pool_stop(og_pool *p);
/* og_pool_stop if not yet stopped, then frees the pool. */
void og_pool_free(og_pool *p);

#endif
