/*
 * store_count.c — the counting adapter (store_count.h).  Installing it moves the wrapped
 * store's ops and state into a private inner handle and points the public handle at the
 * counting ops, so every layer that already holds the handle is counted without knowing.
 * Each op notes the request (kind, key, depth) under one mutex, optionally sleeps the
 * injected latency, forwards to the inner handle through the public functions, and records
 * its depth as completed.  The depth rule and why it measures the critical path are in
 * store_count.h.  The same wrapper injects an object-store outage (OG_STORE_DOWN_FILE), so
 * the fault tests can stop and restart "the store" under a running server.
 */
#include "store/store_count.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store_impl.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct count_store {
    og_store *inner;
    uint32_t latency_ms;
    char *down_path;     /* OG_STORE_DOWN_FILE: while it exists the store is "down" */
    pthread_mutex_t mu;
    og_store_counts c;
    uint64_t done_depth; /* the largest depth of a completed request */
    og_buf log;
    int nolog;           /* installed from OG_STORE_COUNT: counts only, reported at close */
} count_store;

static const og_store_ops count_ops;

static count_store *C(og_store *st) { return st && st->ops == &count_ops ? (count_store *)st->impl : NULL; }

static const char *const kind_names[OG_STORE_REQ_KINDS] = {"GET",          "GET_RANGE", "HEAD",  "PUT",
                                                           "PUT_IF_ABSENT", "LIST",     "DELETE"};

const char *og_store_req_name(og_store_req kind)
{
    return (unsigned)kind < OG_STORE_REQ_KINDS ? kind_names[kind] : "?";
}

/* Notes a request starting; returns its depth. */
static uint64_t req_begin(count_store *cs, og_store_req kind, const char *key)
{
    pthread_mutex_lock(&cs->mu);
    uint64_t depth = cs->done_depth + 1;
    cs->c.n[kind]++;
    cs->c.total++;
    if (!cs->nolog) og_buf_printf(&cs->log, "%llu %s %s\n", (unsigned long long)depth, kind_names[kind], key);
    pthread_mutex_unlock(&cs->mu);
    if (cs->latency_ms) {
        struct timespec ts = {(time_t)(cs->latency_ms / 1000), (long)(cs->latency_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    return depth;
}

static void req_end(count_store *cs, uint64_t depth)
{
    pthread_mutex_lock(&cs->mu);
    if (depth > cs->done_depth) cs->done_depth = depth;
    if (depth > cs->c.rounds) cs->c.rounds = depth;
    pthread_mutex_unlock(&cs->mu);
}

/* The injected outage (OG_STORE_DOWN_FILE, store_count.h): is the store down right now? */
static int is_down(const count_store *cs) { return cs->down_path && access(cs->down_path, F_OK) == 0; }

static og_status down_err(const count_store *cs, const char *key, const char *when)
{
    return og_err(OG_ERR_UNAVAILABLE, "store \"%s\" is unavailable (%s: %s exists): \"%s\"", cs->inner->uri, when,
                  cs->down_path, key);
}

/* A request to a store that is down fails without reaching it; one the outage caught in
 * flight took effect (a write stands) but its answer is lost: `undo` frees what a read got. */
#define COUNTED_UNDO(kind, key, call, undo)                                     \
    do {                                                                        \
        count_store *cs_ = C(st);                                               \
        uint64_t d_ = req_begin(cs_, (kind), (key));                            \
        og_status s_;                                                           \
        if (is_down(cs_)) {                                                     \
            s_ = down_err(cs_, (key), "down");                                  \
        } else {                                                                \
            s_ = (call);                                                        \
            if (is_down(cs_)) {                                                 \
                if (s_ == OG_OK) undo;                                          \
                s_ = down_err(cs_, (key), "went down with the request in flight"); \
            }                                                                   \
        }                                                                       \
        req_end(cs_, d_);                                                       \
        return s_;                                                              \
    } while (0)
#define COUNTED(kind, key, call) COUNTED_UNDO(kind, key, call, (void)0)

static og_status c_get(og_store *st, const char *key, og_bytes *out)
{
    COUNTED_UNDO(OG_STORE_REQ_GET, key, og_store_get(C(st)->inner, key, out), og_bytes_free(out));
}

static og_status c_get_range(og_store *st, const char *key, uint64_t off, uint64_t len, og_bytes *out)
{
    COUNTED_UNDO(OG_STORE_REQ_GET_RANGE, key, og_store_get_range(C(st)->inner, key, off, len, out), og_bytes_free(out));
}

static og_status c_head(og_store *st, const char *key, uint64_t *size_out)
{
    COUNTED(OG_STORE_REQ_HEAD, key, og_store_head(C(st)->inner, key, size_out));
}

static og_status c_stat(og_store *st, const char *key, uint64_t *size_out, int64_t *mtime_ms)
{
    COUNTED(OG_STORE_REQ_HEAD, key, og_store_stat(C(st)->inner, key, size_out, mtime_ms));
}

/* The inner calls go straight to the inner adapter's ops: the public og_store_put would note
 * the key in the calling thread's write journal a second time (store.c already did). */
static og_status c_put(og_store *st, const char *key, const void *data, size_t len)
{
    og_store *in = C(st)->inner;
    COUNTED(OG_STORE_REQ_PUT, key, in->ops->put(in, key, data, len));
}

#ifdef OG_STORE_PUT_UNSYNCED
static og_status c_put_unsynced(og_store *st, const char *key, const void *data, size_t len)
{
    og_store *in = C(st)->inner;
    COUNTED(OG_STORE_REQ_PUT, key, in->ops->put_unsynced ? in->ops->put_unsynced(in, key, data, len)
                                                        : in->ops->put(in, key, data, len));
}
#endif

static og_status c_put_if_absent(og_store *st, const char *key, const void *data, size_t len)
{
    og_store *in = C(st)->inner;
    COUNTED(OG_STORE_REQ_PUT_IF_ABSENT, key, in->ops->put_if_absent(in, key, data, len));
}

static og_status c_list(og_store *st, const char *prefix, const char *start_after, size_t limit, og_keylist *out)
{
    COUNTED_UNDO(OG_STORE_REQ_LIST, prefix, og_store_list(C(st)->inner, prefix, start_after, limit, out),
                 og_keylist_free(out));
}

static og_status c_delete(og_store *st, const char *key)
{
    COUNTED(OG_STORE_REQ_DELETE, key, og_store_delete(C(st)->inner, key));
}

static og_status c_map(og_store *st, const char *key, og_mapping **out)
{
    COUNTED_UNDO(OG_STORE_REQ_GET, key, og_store_map(C(st)->inner, key, out), (og_mapping_release(*out), *out = NULL));
}

/* A "remote" store cannot watch, as S3 cannot: the layers above then probe as they would there. */
static og_status c_watch(og_store *st, const char *prefix)
{
    if (!st->is_local && C(st)->inner->is_local)
        return og_err(OG_ERR_UNSUPPORTED, "store \"%s\" counts as remote: no change watch", st->uri);
    return og_store_watch(C(st)->inner, prefix);
}

#ifdef OG_STORE_LOCK
/* A "remote" store cannot lock, as S3 cannot: writers then race and retry as they would there. */
static og_status c_lock(og_store *st, const char *name, int64_t wait_ms, int *fd)
{
    if (!st->is_local && C(st)->inner->is_local)
        return og_err(OG_ERR_UNSUPPORTED, "store \"%s\" counts as remote: no lock", st->uri);
    return og_store_lock(C(st)->inner, name, wait_ms, fd);
}
#endif

static uint64_t c_change_count(og_store *st) { return og_store_change_count(C(st)->inner); }

/* OG_STORE_COUNT_OUT: one line per counted store at its close, for benchmarks of whole
 * processes (bench/fleet): "<uri> total=N GET=N ... rounds=N". */
static void report(count_store *cs)
{
    const char *path = getenv("OG_STORE_COUNT_OUT");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (!f) return;
    fprintf(f, "%s total=%llu", cs->inner->uri, (unsigned long long)cs->c.total);
    for (int i = 0; i < OG_STORE_REQ_KINDS; i++) fprintf(f, " %s=%llu", kind_names[i], (unsigned long long)cs->c.n[i]);
    fprintf(f, " rounds=%llu\n", (unsigned long long)cs->c.rounds);
    fclose(f);
}

static void c_close(og_store *st)
{
    count_store *cs = C(st);
    if (cs->nolog) report(cs);
    og_store_close(cs->inner);
    free(cs->down_path);
    pthread_mutex_destroy(&cs->mu);
    og_buf_free(&cs->log);
    free(cs);
}

static const og_store_ops count_ops = {
    .name = "counting",
    .get = c_get,
    .get_range = c_get_range,
    .head = c_head,
    .stat = c_stat,
    .put = c_put,
    .put_if_absent = c_put_if_absent,
#ifdef OG_STORE_PUT_UNSYNCED
    .put_unsynced = c_put_unsynced,
#endif
    .list = c_list,
    .delete = c_delete,
    .map = c_map,
    .watch = c_watch,
    .change_count = c_change_count,
#ifdef OG_STORE_LOCK
    .lock = c_lock,
#endif
    .close = c_close,
};

static struct {
    int on, remote;
    uint32_t latency_ms;
} on_open;

void og_store_count_on_open(int on, uint32_t latency_ms, int remote)
{
    on_open.on = on;
    on_open.latency_ms = latency_ms;
    on_open.remote = remote;
}

og_status og_store_i_count_opened(og_store *st)
{
    if (on_open.on) return og_store_count_install(st, on_open.latency_ms, on_open.remote);
    /* OG_STORE_COUNT="<latency ms>[,remote]": every store the process opens counts (and
     * sleeps that long per request), for benchmarks of a whole server; the counts go to
     * OG_STORE_COUNT_OUT when the store closes. */
    const char *env = getenv("OG_STORE_COUNT");
    if (!env || !*env) return OG_OK;
    char *end = NULL;
    unsigned long ms = strtoul(env, &end, 10);
    int remote = end && strcmp(end, ",remote") == 0;
    OG_TRY(og_store_count_install(st, (uint32_t)ms, remote));
    C(st)->nolog = 1;
    return OG_OK;
}

og_status og_store_count_install(og_store *st, uint32_t latency_ms, int remote)
{
    if (!st) return og_err(OG_ERR_INVALID, "og_store_count_install: NULL store");
    count_store *cs = C(st);
    if (cs) {
        cs->latency_ms = latency_ms;
        st->is_local = remote ? 0 : cs->inner->is_local;
        return OG_OK;
    }
    cs = calloc(1, sizeof *cs);
    og_store *inner = calloc(1, sizeof *inner);
    char *uri = strdup(st->uri);
    if (!cs || !inner || !uri) {
        free(cs);
        free(inner);
        free(uri);
        return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", st->uri);
    }
    *inner = *st;
    inner->uri = uri;
    cs->inner = inner;
    cs->latency_ms = latency_ms;
    const char *down = getenv("OG_STORE_DOWN_FILE");
    if (down && *down && !(cs->down_path = strdup(down))) {
        free(cs);
        free(inner);
        free(uri);
        return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", st->uri);
    }
    pthread_mutex_init(&cs->mu, NULL);
    st->ops = &count_ops;
    st->impl = cs;
    if (remote) st->is_local = 0;
    return OG_OK;
}

void og_store_count_reset(og_store *st)
{
    count_store *cs = C(st);
    if (!cs) return;
    pthread_mutex_lock(&cs->mu);
    memset(&cs->c, 0, sizeof cs->c);
    cs->done_depth = 0;
    og_buf_reset(&cs->log);
    pthread_mutex_unlock(&cs->mu);
}

void og_store_count_get(og_store *st, og_store_counts *out)
{
    memset(out, 0, sizeof *out);
    count_store *cs = C(st);
    if (!cs) return;
    pthread_mutex_lock(&cs->mu);
    *out = cs->c;
    pthread_mutex_unlock(&cs->mu);
}

char *og_store_count_log(og_store *st)
{
    count_store *cs = C(st);
    if (!cs) return NULL;
    pthread_mutex_lock(&cs->mu);
    char *s = strdup(og_buf_cstr(&cs->log));
    pthread_mutex_unlock(&cs->mu);
    return s;
}
