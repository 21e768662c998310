/*
 * conn.c — deadlines on connections that are slow to say what they want (slowloris).
 *
 * libmicrohttpd's own timeout is an idle timeout: every byte resets it, so a client sending
 * one header byte every 10 s holds its connection (and, with enough of them, every
 * connection slot) forever.  So each connection carries a deadline of its own:
 *  - from accept, its request head must be complete within --header-timeout seconds;
 *  - a body must keep coming: each OG_CONN_MIN_CHUNK bytes (or its end) within
 *    --header-timeout seconds of the last such mark;
 *  - after an answer, the next request's head must be complete within the idle timeout
 *    (keep-alive);
 *  - while a request runs or its answer is sent there is none (the idle timeout and the
 *    query budgets govern those).
 * A reaper thread shuts down (shutdown(2), never close: the socket stays libmicrohttpd's)
 * every connection past its deadline; libmicrohttpd then sees the end of the stream and
 * closes it.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "server/server_int.h"

static uint64_t now_ms(void) { return og_now_us() / 1000u; }

struct og_conn {
    og_conn *prev, *next;
    int fd;
    uint64_t deadline_ms; /* 0: none */
    uint64_t chunk;       /* body bytes since the deadline was last moved */
    int reaped;
};

static void *reaper(void *arg)
{
    og_server *s = arg;
    pthread_mutex_lock(&s->conn_mu);
    while (!s->conn_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->conn_cv, &s->conn_mu, &until);
        uint64_t now = now_ms();
        for (og_conn *c = s->conns; c; c = c->next)
            if (c->deadline_ms && now > c->deadline_ms && !c->reaped) {
                shutdown(c->fd, SHUT_RDWR);
                c->reaped = 1;
                s->conns_reaped++;
            }
    }
    pthread_mutex_unlock(&s->conn_mu);
    return NULL;
}

int og_conn_start(og_server *s)
{
    pthread_mutex_init(&s->conn_mu, NULL);
    pthread_cond_init(&s->conn_cv, NULL);
    s->conn_inited = 1;
    if (pthread_create(&s->conn_reaper, NULL, reaper, s)) return -1;
    s->conn_running = 1;
    return 0;
}

void og_conn_stop(og_server *s)
{
    if (!s->conn_inited) return;
    if (s->conn_running) {
        pthread_mutex_lock(&s->conn_mu);
        s->conn_stop = 1;
        pthread_cond_signal(&s->conn_cv);
        pthread_mutex_unlock(&s->conn_mu);
        pthread_join(s->conn_reaper, NULL);
        s->conn_running = 0;
    }
    /* every connection has been closed by now (MHD_stop_daemon) */
    pthread_mutex_destroy(&s->conn_mu);
    pthread_cond_destroy(&s->conn_cv);
    s->conn_inited = 0;
}

void og_conn_notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode code)
{
    og_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        og_conn *k = calloc(1, sizeof *k);
        *ctx = k;
        if (!k) return; /* no deadline for this one: the idle timeout still applies */
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        k->fd = ci ? ci->connect_fd : -1;
        if (k->fd < 0) {
            free(k);
            *ctx = NULL;
            return;
        }
        pthread_mutex_lock(&s->conn_mu);
        k->deadline_ms = now_ms() + (uint64_t)s->o.header_timeout_s * 1000u;
        k->next = s->conns;
        if (s->conns) s->conns->prev = k;
        s->conns = k;
        s->nconns++;
        pthread_mutex_unlock(&s->conn_mu);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        og_conn *k = *ctx;
        *ctx = NULL;
        if (!k) return;
        pthread_mutex_lock(&s->conn_mu);
        if (k->prev) k->prev->next = k->next;
        else s->conns = k->next;
        if (k->next) k->next->prev = k->prev;
        s->nconns--;
        pthread_mutex_unlock(&s->conn_mu);
        free(k);
    }
}

og_conn *og_conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void og_conn_deadline(og_server *s, og_conn *k, unsigned seconds)
{
    if (!k) return;
    pthread_mutex_lock(&s->conn_mu);
    k->deadline_ms = seconds ? now_ms() + (uint64_t)seconds * 1000u : 0;
    k->chunk = 0;
    pthread_mutex_unlock(&s->conn_mu);
}

void og_conn_body(og_server *s, og_conn *k, size_t n)
{
    if (!k) return;
    pthread_mutex_lock(&s->conn_mu);
    k->chunk += n;
    if (k->chunk >= OG_CONN_MIN_CHUNK) {
        k->chunk = 0;
        k->deadline_ms = now_ms() + (uint64_t)s->o.header_timeout_s * 1000u;
    }
    pthread_mutex_unlock(&s->conn_mu);
}
