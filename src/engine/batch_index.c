/*
 * batch_index.c — builds the key map and text indexes of a load's flushed node batches on one
 * thread beside the load (batch_index.h, docs/load.md "Indexes of flushed batches").
 *
 * One worker and a short queue: the batches come from the loading side one at a time, each
 * task is independent, and a queue that grew without bound would hold the batches' columns
 * the flush just let go.  Each task's writes go to a journal of their own, which the builder's
 * owner settles: adopted into its thread's journal (a write attempt that fails then deletes
 * them with its data files), discarded (the attempt did not publish), or kept.
 */
#define _GNU_SOURCE /* gettid */
#include "engine/batch_index.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "index/fts.h"
#include "index/keymap.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fault.h"

/* The builder thread's nice value (its own: Linux sets it per thread). */
#define BUILDER_NICE 10

/* Tasks waiting at most; one more is dropped (its files are left to the build after the
 * publish).  Two keep the worker busy while a third batch is staged. */
#define QUEUE_MAX 2

typedef struct node {
    og_batch_index_task t;
    og_store_journal journal; /* what building it wrote */
    struct node *next;
} node;

struct og_batch_index {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a task queued, or stop */
    pthread_cond_t idle; /* the queue emptied and the worker waits */
    node *head, *tail;   /* queued */
    size_t queued;
    node *done;          /* built, journals not yet adopted */
    int busy;            /* the worker holds a task */
    int started, stop;
    pthread_t th;
    size_t written, dropped;
};

static void task_free(og_batch_index_task *t)
{
    og_vector_free(&t->ids);
    for (size_t i = 0; i < t->ntexts; i++) og_vector_free(&t->texts[i]);
    t->ntexts = 0;
}

/* Writes one index file; 1 when this call created it.  Failures are dropped: derived state. */
static int put_file(og_store *st, const char *key, const og_buf *b)
{
    og_status s = og_store_put_if_absent(st, key, b->data, b->len);
    og_error_clear();
    return s == OG_OK;
}

static size_t build(og_batch_index_task *t)
{
    size_t n = 0;
    if (og_fault_error("load.batch_index")) { /* tests: a build that fails writes nothing */
        og_error_clear();
        task_free(t);
        return 0;
    }
    if (t->keymap_key[0]) {
        og_buf b = OG_BUF_INIT;
        if (og_keymap_encode(&t->ids, &b) == OG_OK) n += put_file(t->store, t->keymap_key, &b);
        og_error_clear();
        og_buf_free(&b);
    }
    og_vector_free(&t->ids);
    if (t->ntexts) {
        og_analyzer *an = NULL;
        if (og_analyzer_new(&an, NULL) == OG_OK) {
            for (size_t i = 0; i < t->ntexts; i++) {
                og_buf b = OG_BUF_INIT;
                if (og_fts_encode_vector(an, &t->texts[i], &b) == OG_OK) n += put_file(t->store, t->fts_keys[i], &b);
                og_error_clear();
                og_buf_free(&b);
                og_vector_free(&t->texts[i]);
            }
        }
        og_error_clear();
        og_analyzer_free(an);
    }
    task_free(t);
    return n;
}

static void *worker(void *arg)
{
    og_batch_index *b = arg;
    /* Mostly the cores the load leaves idle: its staging is the critical path, and time taken
     * from it cost more than the index stage saved (docs/load.md).  Nice 10, not SCHED_IDLE:
     * an idle-class thread can starve for seconds on a machine busy with other work, and the
     * load waits for it once its publish is decided; at nice 10 it still gets ~10 % of a core. */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), BUILDER_NICE);
    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!b->head && !b->stop) {
            pthread_cond_broadcast(&b->idle);
            pthread_cond_wait(&b->wake, &b->lock);
        }
        if (!b->head) break;
        node *x = b->head;
        b->head = x->next;
        if (!b->head) b->tail = NULL;
        b->queued--;
        b->busy = 1;
        pthread_mutex_unlock(&b->lock);
        og_store_journal_begin(&x->journal, x->t.store, NULL);
        size_t n = build(&x->t);
        og_store_journal_end(&x->journal);
        pthread_mutex_lock(&b->lock);
        b->written += n;
        x->next = b->done;
        b->done = x;
        b->busy = 0;
    }
    pthread_cond_broadcast(&b->idle);
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

og_batch_index *og_batch_index_new(void)
{
    og_batch_index *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->wake, NULL);
    pthread_cond_init(&b->idle, NULL);
    return b;
}

int og_batch_index_add(og_batch_index *b, og_batch_index_task *t)
{
    node *x = b ? malloc(sizeof *x) : NULL;
    if (!x) {
        task_free(t);
        return 0;
    }
    pthread_mutex_lock(&b->lock);
    if (b->queued >= QUEUE_MAX || b->stop) {
        b->dropped++;
        pthread_mutex_unlock(&b->lock);
        free(x);
        task_free(t);
        return 0;
    }
    if (!b->started) {
        if (pthread_create(&b->th, NULL, worker, b) != 0) { /* no thread: nothing beside the load */
            b->dropped++;
            pthread_mutex_unlock(&b->lock);
            free(x);
            task_free(t);
            return 0;
        }
        b->started = 1;
    }
    x->t = *t;
    memset(t, 0, sizeof *t); /* moved */
    x->next = NULL;
    if (b->tail)
        b->tail->next = x;
    else
        b->head = x;
    b->tail = x;
    b->queued++;
    pthread_cond_signal(&b->wake);
    pthread_mutex_unlock(&b->lock);
    return 1;
}

/* What settle does with the journals of the tasks built. */
enum { ADOPT, DISCARD, KEEP };

static void settle(og_batch_index *b, int how)
{
    if (!b) return;
    pthread_mutex_lock(&b->lock);
    while (b->started && (b->head || b->busy)) pthread_cond_wait(&b->idle, &b->lock);
    node *d = b->done;
    b->done = NULL;
    pthread_mutex_unlock(&b->lock);
    while (d) {
        node *next = d->next;
        if (how == ADOPT)
            og_store_journal_adopt(&d->journal);
        else if (how == DISCARD)
            og_store_journal_discard(&d->journal);
        else
            og_store_journal_free(&d->journal);
        free(d);
        d = next;
    }
    if (how == DISCARD) og_error_clear(); /* a failed delete leaves garbage, never an error */
}

void og_batch_index_join(og_batch_index *b) { settle(b, ADOPT); }
void og_batch_index_discard(og_batch_index *b) { settle(b, DISCARD); }

void og_batch_index_free(og_batch_index *b)
{
    if (!b) return;
    settle(b, KEEP);
    pthread_mutex_lock(&b->lock);
    b->stop = 1;
    pthread_cond_broadcast(&b->wake);
    pthread_mutex_unlock(&b->lock);
    if (b->started) pthread_join(b->th, NULL);
    settle(b, KEEP); /* nothing can be left, but its list is freed either way */
    pthread_cond_destroy(&b->wake);
    pthread_cond_destroy(&b->idle);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

size_t og_batch_index_written(const og_batch_index *b) { return b ? b->written : 0; }
size_t og_batch_index_dropped(const og_batch_index *b) { return b ? b->dropped : 0; }
