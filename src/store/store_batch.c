/*
 * store_batch.c — og_store_put_many (store.h): independent writes of one operation issued
 * together, so that on an object store they cost one round trip instead of one each.
 *
 * Why threads and not an asynchronous adapter interface: every adapter's put is a blocking
 * call (a file write and fsync locally, one HTTP request on S3), the writes of one operation
 * are few (a data file, a deletion file, a commit object), and a thread per write keeps the
 * adapters unchanged.  Thread-local state does not cross: the calling thread journals the
 * keys (before the writes for puts, after success for put_if_absent, as store.c does; the
 * writes themselves go straight to the adapter) and re-raises the first failure's message, which the worker copied out of its own thread.
 */
#include "store/store_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

typedef struct put_job {
    og_store *st;
    og_store_put_op *op;
    char msg[512];
} put_job;

static void run_one(put_job *j)
{
    og_store_put_op *op = j->op;
    /* Straight to the adapter (keys were checked): the public calls would journal a write
     * made on the caller's thread a second time. */
    const void *data = op->data ? op->data : "";
    op->status = op->if_absent ? j->st->ops->put_if_absent(j->st, op->key, data, op->len)
                               : j->st->ops->put(j->st, op->key, data, op->len);
    j->msg[0] = '\0';
    if (op->status != OG_OK) snprintf(j->msg, sizeof j->msg, "%s", og_error_message());
}

static void *run_thread(void *arg)
{
    run_one(arg);
    return NULL;
}

/* Runs ops[0..n) (n <= OG_STORE_PUT_MANY_MAX) at once: threads for all but the first, which
 * the caller runs; a thread that cannot be started runs on the caller too. */
static void run_group(og_store *st, og_store_put_op *ops, size_t n, put_job *jobs)
{
    pthread_t tids[OG_STORE_PUT_MANY_MAX];
    int started[OG_STORE_PUT_MANY_MAX] = {0};
    for (size_t i = 0; i < n; i++) jobs[i] = (put_job){st, &ops[i], ""};
    for (size_t i = 1; i < n; i++) started[i] = pthread_create(&tids[i], NULL, run_thread, &jobs[i]) == 0;
    run_one(&jobs[0]);
    for (size_t i = 1; i < n; i++) {
        if (started[i]) pthread_join(tids[i], NULL);
        else run_one(&jobs[i]);
    }
}

og_status og_store_put_many(og_store *st, og_store_put_op *ops, size_t n)
{
    if (!st) return og_err(OG_ERR_INVALID, "put_many: no store");
    if (n && !ops) return og_err(OG_ERR_INVALID, "put_many: no operations");
    for (size_t i = 0; i < n; i++) {
        ops[i].status = og_store_key_check(ops[i].key);
        if (ops[i].status != OG_OK) return ops[i].status;
        if (!ops[i].data && ops[i].len)
            return og_err(OG_ERR_INVALID, "put_many \"%s\": NULL data with length %zu", ops[i].key, ops[i].len);
    }
    if (n == 1) {
        ops[0].status = ops[0].if_absent ? og_store_put_if_absent(st, ops[0].key, ops[0].data, ops[0].len)
                                         : og_store_put(st, ops[0].key, ops[0].data, ops[0].len);
        return ops[0].status;
    }
    for (size_t i = 0; i < n; i++)
        if (!ops[i].if_absent) og_store_i_journal_note(st, ops[i].key); /* before: it may land half-way */
    put_job jobs[OG_STORE_PUT_MANY_MAX];
    og_status first = OG_OK;
    char msg[512] = "";
    for (size_t at = 0; at < n; at += OG_STORE_PUT_MANY_MAX) {
        size_t k = n - at < OG_STORE_PUT_MANY_MAX ? n - at : OG_STORE_PUT_MANY_MAX;
        run_group(st, ops + at, k, jobs);
        for (size_t i = 0; i < k; i++) {
            if (ops[at + i].if_absent && ops[at + i].status == OG_OK) og_store_i_journal_note(st, ops[at + i].key);
            if (ops[at + i].status != OG_OK && first == OG_OK) {
                first = ops[at + i].status;
                snprintf(msg, sizeof msg, "%s", jobs[i].msg);
            }
        }
    }
    if (first != OG_OK) return og_err(first, "%s", msg);
    return OG_OK;
}
