/*
 * write_locks.c — the in-process write locks of one served graph (server_int.h): one mutex
 * per branch being written, created on first use and dropped when its last holder leaves.
 *
 * Why per branch and not one per graph: the store arbitrates every write (a publish is a
 * put_if_absent of the branch's next log entry, docs/graph-authority.md §2), so a lock here
 * is never needed for correctness — it only keeps writers of one process from racing each
 * other into lost publishes and retries.  Two writers can only lose to each other when they
 * publish to the same branch, so that is all a lock covers: a fleet of agents, each writing
 * its own branch, runs in parallel end to end, and merges into one target wait only for
 * each other (docs/server.md "Concurrent writes").  A caller that cannot name its branch
 * (the MCP tools' hook) takes the whole graph: it waits for every branch writer and they for
 * it.  The graph-wide rwlock prefers writers, so such a caller is not starved.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

typedef struct branch_lock {
    struct branch_lock *next;
    pthread_mutex_t mu;
    unsigned refs; /* holders and waiters, under og_write_locks.mu */
    char name[];
} branch_lock;

struct og_write_locks {
    pthread_rwlock_t all; /* branch writers share it; a whole-graph writer holds it alone */
    pthread_mutex_t mu;   /* guards the list */
    branch_lock *list;    /* the branches held or waited for: few at once, so a list */
};

og_write_locks *og_write_locks_new(void)
{
    og_write_locks *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&l->all, &a);
    pthread_rwlockattr_destroy(&a);
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

void og_write_locks_free(og_write_locks *l)
{
    if (!l) return;
    /* nothing is held when a graph is released: its last request has ended */
    pthread_rwlock_destroy(&l->all);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

/* The entry for `branch`, created when absent, with one more reference; NULL when out of
 * memory (the caller then takes the whole graph). */
static branch_lock *entry_take(og_write_locks *l, const char *branch)
{
    pthread_mutex_lock(&l->mu);
    branch_lock *b = l->list;
    while (b && strcmp(b->name, branch)) b = b->next;
    if (!b) {
        size_t n = strlen(branch) + 1;
        b = malloc(sizeof *b + n);
        if (b) {
            memcpy(b->name, branch, n);
            pthread_mutex_init(&b->mu, NULL);
            b->refs = 0;
            b->next = l->list;
            l->list = b;
        }
    }
    if (b) b->refs++;
    pthread_mutex_unlock(&l->mu);
    return b;
}

static void entry_drop(og_write_locks *l, branch_lock *b)
{
    pthread_mutex_lock(&l->mu);
    if (--b->refs == 0) {
        branch_lock **p = &l->list;
        while (*p != b) p = &(*p)->next;
        *p = b->next;
        pthread_mutex_destroy(&b->mu);
        free(b);
    }
    pthread_mutex_unlock(&l->mu);
}

void og_write_lock(og_write_locks *l, const char *branch, og_write_hold *h)
{
    h->l = l;
    h->b = NULL;
    if (branch) {
        pthread_rwlock_rdlock(&l->all);
        h->b = entry_take(l, branch);
        if (h->b) {
            pthread_mutex_lock(&((branch_lock *)h->b)->mu);
            return;
        }
        pthread_rwlock_unlock(&l->all); /* no memory for an entry: the whole graph instead */
    }
    pthread_rwlock_wrlock(&l->all);
}

void og_write_unlock(og_write_hold *h)
{
    branch_lock *b = h->b;
    if (b) {
        pthread_mutex_unlock(&b->mu);
        entry_drop(h->l, b);
    }
    pthread_rwlock_unlock(&h->l->all);
    h->b = NULL;
}
