/*
 * audit.c — the audit lines of omnigraph-server, written cheaply.  Why not jansson: building
 * a json_t per line, dumping it and writing it through a locked FILE cost about a fifth of a
 * key lookup's server time.  Here each line is formatted straight into the request's buffer
 * (strings escaped as JSON, invalid UTF-8 replaced by U+FFFD) and every line of one request
 * — its policy decisions, then the request line — is handed, when the request completes, to
 * one writer thread in one copy: the writer empties the shared buffer with one write(2) per
 * batch, so a busy server pays a memcpy per request instead of a system call, and the lines
 * of a request stay together.  After a batch the writer naps 2 ms, then sleeps until the next
 * line signals it: a line reaches the log within about 2 ms; when the buffer is full (the sink is slower
 * than the requests), the request writes its lines itself: nothing is dropped.  Stopping the
 * server drains the buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>

#include "server/server_int.h"
#include "util/utf8.h"

static int grow(og_audit *a, size_t extra)
{
    if (a->oom) return 0;
    if (a->len + extra <= a->cap) return 1;
    size_t cap = a->cap ? a->cap : 512;
    while (cap < a->len + extra) cap *= 2;
    char *p = realloc(a->p, cap);
    if (!p) {
        a->oom = 1;
        return 0;
    }
    a->p = p;
    a->cap = cap;
    return 1;
}

static void put(og_audit *a, const char *s, size_t n)
{
    if (!grow(a, n)) return;
    memcpy(a->p + a->len, s, n);
    a->len += n;
}

static void put_json_string(og_audit *a, const char *v)
{
    const unsigned char *s = (const unsigned char *)v;
    size_t n = strlen(v);
    if (!grow(a, n + 2)) return;
    a->p[a->len++] = '"';
    for (size_t i = 0; i < n;) {
        size_t run = i;
        while (run < n && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\') run++;
        if (run > i) {
            put(a, v + i, run - i);
            i = run;
            continue;
        }
        unsigned c = s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            put(a, esc, 2);
            i++;
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(a, esc, 6);
            i++;
        } else {
            size_t k = og_utf8_seq_len(s + i, n - i);
            if (k) put(a, v + i, k);
            else put(a, "\\ufffd", 6);
            i += k ? k : 1;
        }
    }
    put(a, "\"", 1);
}

void og_audit_begin(og_audit *a, const char *event)
{
    /* the wall-clock second is formatted once per second per thread */
    static _Thread_local time_t last_sec = -1;
    static _Thread_local char prefix[24];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec != last_sec) {
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        strftime(prefix, sizeof prefix, "%Y-%m-%dT%H:%M:%S", &tm);
        last_sec = ts.tv_sec;
    }
    char head[96];
    int n = snprintf(head, sizeof head, "{\"ts\":\"%s.%03ldZ\",\"event\":", prefix, ts.tv_nsec / 1000000);
    put(a, head, (size_t)n);
    put_json_string(a, event);
}

void og_audit_str(og_audit *a, const char *key, const char *v)
{
    put(a, ",\"", 2);
    put(a, key, strlen(key));
    put(a, "\":", 2);
    if (v) put_json_string(a, v);
    else put(a, "null", 4);
}

void og_audit_raw(og_audit *a, const char *key, const char *json)
{
    put(a, ",\"", 2);
    put(a, key, strlen(key));
    put(a, "\":", 2);
    put(a, json, strlen(json));
}

void og_audit_end(og_audit *a) { put(a, "}\n", 2); }

static void sink_write(og_server *s, const char *p, size_t n)
{
    int fd = fileno(s->log);
    if (fd < 0) {
        pthread_mutex_lock(&s->log_mu);
        fwrite(p, 1, n, s->log);
        fflush(s->log);
        pthread_mutex_unlock(&s->log_mu);
        return;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, p + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* the audit sink is gone: nothing else to do with the lines */
        off += (size_t)w;
    }
}

/* How long the writer naps between batches before it sleeps until signalled: a busy server
 * wakes it at most every 2 ms, an idle one never. */
#define OG_AUDIT_NAP_NS 2000000L
/* Bytes of audit lines waiting for the writer before requests write their own. */
#define OG_AUDIT_BUFFER ((size_t)1 << 20)

static void *writer_main(void *arg)
{
    og_server *s = arg;
    char *mine = NULL;
    size_t mine_cap = 0;
    pthread_mutex_lock(&s->audit_mu);
    for (;;) {
        if (!s->audit_len && !s->audit_stop) {
            /* a short nap first: lines arriving meanwhile wait for it without waking anyone */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += OG_AUDIT_NAP_NS;
            if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&s->audit_cv, &s->audit_mu, &until);
        }
        while (!s->audit_len && !s->audit_stop) {
            /* nothing came during the nap: sleep until the next line signals */
            s->audit_idle = 1;
            pthread_cond_wait(&s->audit_cv, &s->audit_mu);
            s->audit_idle = 0;
        }
        if (!s->audit_len) break; /* stopping, and everything is written */
        /* swap buffers, write outside the lock */
        char *full = s->audit_buf;
        size_t n = s->audit_len, cap = s->audit_cap;
        s->audit_buf = mine;
        s->audit_cap = mine_cap;
        s->audit_len = 0;
        pthread_mutex_unlock(&s->audit_mu);
        sink_write(s, full, n);
        mine = full;
        mine_cap = cap;
        pthread_mutex_lock(&s->audit_mu);
    }
    pthread_mutex_unlock(&s->audit_mu);
    free(mine);
    return NULL;
}

void og_audit_start(og_server *s)
{
    pthread_mutex_init(&s->audit_mu, NULL);
    pthread_cond_init(&s->audit_cv, NULL);
    s->audit_inited = 1;
    if (pthread_create(&s->audit_thread, NULL, writer_main, s) == 0) s->audit_running = 1;
}

void og_audit_stop(og_server *s)
{
    if (!s->audit_inited) return;
    if (s->audit_running) {
        pthread_mutex_lock(&s->audit_mu);
        s->audit_stop = 1;
        pthread_cond_signal(&s->audit_cv);
        pthread_mutex_unlock(&s->audit_mu);
        pthread_join(s->audit_thread, NULL);
        s->audit_running = 0;
    }
    free(s->audit_buf);
    s->audit_buf = NULL;
    s->audit_len = s->audit_cap = 0;
    pthread_mutex_destroy(&s->audit_mu);
    pthread_cond_destroy(&s->audit_cv);
    s->audit_inited = 0;
}

void og_audit_flush(og_server *s, og_audit *a)
{
    if (a->oom || !a->len) {
        a->len = 0;
        return;
    }
    int queued = 0;
    if (s->audit_running) {
        pthread_mutex_lock(&s->audit_mu);
        size_t need = s->audit_len + a->len;
        if (need <= OG_AUDIT_BUFFER && !s->audit_stop) {
            if (need > s->audit_cap) {
                size_t cap = s->audit_cap ? s->audit_cap : 64 * 1024;
                while (cap < need) cap *= 2;
                char *p = realloc(s->audit_buf, cap);
                if (p) {
                    s->audit_buf = p;
                    s->audit_cap = cap;
                }
            }
            if (need <= s->audit_cap) {
                memcpy(s->audit_buf + s->audit_len, a->p, a->len);
                s->audit_len = need;
                queued = 1;
                if (s->audit_idle) pthread_cond_signal(&s->audit_cv);
            }
        }
        pthread_mutex_unlock(&s->audit_mu);
    }
    if (!queued) sink_write(s, a->p, a->len);
    a->len = 0;
}

void og_audit_free(og_audit *a)
{
    free(a->p);
    memset(a, 0, sizeof *a);
}
