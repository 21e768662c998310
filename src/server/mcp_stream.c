/*
 * mcp_stream.c — the MCP endpoint's notifications, delivered live (docs/mcp.md "Protocol"),
 * and the log level each actor set outside a session (a session keeps its own:
 * mcp_session.c).
 *
 * Why a thread per streamed call: the daemon runs handlers on a fixed pool of worker threads
 * (epoll, internal polling), and a handler's response can only start once the handler has
 * returned.  A tools/call that may report progress or log messages (the client accepts
 * text/event-stream and sent a progressToken, or its actor set a log level) therefore runs on
 * a thread of its own, its notifications queued as SSE events; the worker waits for the first
 * event or the end.  A call that ended without one (refused, unknown tool, no token after all)
 * is answered plainly with its own status, as inline.  Otherwise the worker answers 200
 * text/event-stream with a chunked response whose reader hands on the queued events, waiting
 * on a condition variable for the next one: the worker is busy for as long as the call runs,
 * exactly as when it runs the call itself (no busy-wait, no suspend/resume), and the events
 * reach the client as they happen.  The call's thread touches the request (authorization and
 * its audit lines, the admission slot) only while the worker does not: the worker only reads
 * the queue until the request completes, and on_completed joins the thread before the request
 * is freed — also when the client went away mid-stream.
 *
 * Why the level lives here: MCP's logging/setLevel belongs to a session, and this transport
 * is stateless for a client that keeps no session (the official SDK without its session id
 * sends setLevel and the tool call as unrelated POSTs), so outside a session the server
 * remembers the level per (graph, authenticated actor) — a bounded table, the least recently
 * used entry forgotten first (it then has no level: no log notifications).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"
#include "server/server_int.h"

/* ---- the log level of each (graph, actor) ------------------------------------------------- */

og_mcp_log_level og_mcp_level_get(og_server *s, const char *graph, const char *actor)
{
    og_mcp_log_level lv = OG_MCP_LOG_OFF;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nmcp_levels; i++) {
        og_mcp_level *e = &s->mcp_levels[i];
        if (!strcmp(e->graph, graph) && !strcmp(e->actor, actor ? actor : "")) {
            e->used = ++s->mcp_level_clock;
            lv = e->level;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return lv;
}

void og_mcp_level_put(og_server *s, const char *graph, const char *actor, og_mcp_log_level lv)
{
    if (actor && strlen(actor) >= sizeof s->mcp_levels[0].actor) return; /* not remembered: no level */
    pthread_mutex_lock(&s->mu);
    og_mcp_level *e = NULL, *oldest = NULL;
    for (size_t i = 0; i < s->nmcp_levels && !e; i++) {
        og_mcp_level *x = &s->mcp_levels[i];
        if (!strcmp(x->graph, graph) && !strcmp(x->actor, actor ? actor : "")) e = x;
        else if (!oldest || x->used < oldest->used) oldest = x;
    }
    if (!e && s->nmcp_levels < OG_MCP_LEVELS_MAX) e = &s->mcp_levels[s->nmcp_levels++];
    if (!e) e = oldest; /* full: the least recently used entry is forgotten */
    snprintf(e->graph, sizeof e->graph, "%s", graph);
    snprintf(e->actor, sizeof e->actor, "%s", actor ? actor : "");
    e->level = lv;
    e->used = ++s->mcp_level_clock;
    pthread_mutex_unlock(&s->mu);
}

void og_mcp_level_save(og_req *r, og_mcp_log_level lv)
{
    if (r->mcp_session[0]) og_mcp_session_set_level(r->s, r->mcp_session, lv);
    else og_mcp_level_put(r->s, r->g->id, r->actor, lv);
}

/* ---- a streamed call ------------------------------------------------------------------------ */

typedef struct og_mcp_job {
    og_req *r;
    og_mcp *m;
    og_mcp_log_level level0; /* the level the call started with */
    og_mcp_http_request hr;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu: */
    og_buf q;     /* SSE bytes not yet handed to the daemon, from q_off */
    size_t q_off;
    int events;   /* any notification was queued: the answer is a stream */
    int done;     /* og_mcp_http returned */
    int failed;   /* out of memory while queueing */
    unsigned status;
    char *out;    /* the answer when it is not a stream (og_free) */
    og_status st;
} og_mcp_job;

static void job_push(void *ctx, const char *json)
{
    og_mcp_job *j = ctx;
    char *ev = og_mcp_sse_event(json);
    pthread_mutex_lock(&j->mu);
    if (!ev || og_buf_append(&j->q, ev, strlen(ev)) != OG_OK) j->failed = 1;
    j->events = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    free(ev);
}

static void *job_run(void *p)
{
    og_mcp_job *j = p;
    og_req *r = j->r;
    unsigned status = 500;
    char *out = NULL;
    og_set_thread_actor_via(r->actor, r->actor ? "token" : "unauthenticated");
    og_set_thread_cancel(r->mcp_run.id ? &r->mcp_run.cancel : NULL); /* notifications/cancelled */
    og_status st = og_mcp_http(j->m, &j->hr, &status, &out);
    og_mcp_running_end(r);
    og_set_thread_actor(NULL);
    if (st == OG_OK && og_mcp_log_level_get(j->m) != j->level0) og_mcp_level_save(r, og_mcp_log_level_get(j->m));
    int sse = og_mcp_http_sse(j->m);
    /* the write's work is over once its answer exists: its slot is free before the client
     * can read the answer (as http.c's queue() does for inline answers) */
    og_req_admit_release(r);
    pthread_mutex_lock(&j->mu);
    j->st = st;
    j->status = status;
    if (sse && out) {
        if (og_buf_append(&j->q, out, strlen(out)) != OG_OK) j->failed = 1;
        og_free(out);
    } else {
        j->out = out;
    }
    j->done = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static void job_free(og_mcp_job *j)
{
    og_mcp_free(j->m);
    og_buf_free(&j->q);
    og_free(j->out);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* The stream's reader, on the daemon's worker: the next queued bytes, waiting for them. */
static ssize_t job_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    og_mcp_job *j = cls;
    pthread_mutex_lock(&j->mu);
    while (j->q_off == j->q.len && !j->done) pthread_cond_wait(&j->cv, &j->mu);
    ssize_t n;
    if (j->q_off == j->q.len) {
        n = MHD_CONTENT_READER_END_OF_STREAM;
        if (j->failed || j->st != OG_OK) n = MHD_CONTENT_READER_END_WITH_ERROR;
    } else {
        size_t k = j->q.len - j->q_off;
        if (k > max) k = max;
        memcpy(buf, j->q.data + j->q_off, k);
        j->q_off += k;
        if (j->q_off == j->q.len) j->q.len = j->q_off = 0;
        n = (ssize_t)k;
    }
    pthread_mutex_unlock(&j->mu);
    return n;
}

int og_mcp_live(og_req *r, const og_mcp_opts *opts, const og_mcp_http_request *hr, struct MHD_Response **resp,
                unsigned *status, char **out, og_status *st)
{
    *resp = NULL;
    og_mcp_job *j = calloc(1, sizeof *j);
    if (!j) return 0;
    j->r = r;
    j->hr = *hr;
    j->level0 = opts->log_level;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    og_mcp_opts mo = *opts;
    mo.notify = job_push;
    mo.notify_ctx = j;
    if (og_mcp_new(&j->m, &mo) != OG_OK || pthread_create(&j->thread, NULL, job_run, j) != 0) {
        job_free(j);
        return 0;
    }
    pthread_mutex_lock(&j->mu);
    while (!j->events && !j->done) pthread_cond_wait(&j->cv, &j->mu);
    int stream = j->events;
    pthread_mutex_unlock(&j->mu);
    if (!stream) { /* ended without a notification: a plain answer, with its own status */
        pthread_join(j->thread, NULL);
        *status = j->status;
        *out = j->out;
        *st = j->st;
        j->out = NULL;
        job_free(j);
        return 1;
    }
    *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, job_read, j, NULL);
    if (!*resp) { /* cannot stream: wait for the end and answer 500 */
        pthread_join(j->thread, NULL);
        job_free(j);
        *status = 500;
        *out = NULL;
        *st = OG_ERR_NOMEM;
        return 1;
    }
    MHD_add_response_header(*resp, "Content-Type", "text/event-stream");
    MHD_add_response_header(*resp, "Cache-Control", "no-cache");
    r->mcp_job = j; /* joined and freed when the request completes (og_mcp_live_end) */
    r->status = 200;
    return 1;
}

void og_mcp_live_end(og_req *r)
{
    og_mcp_job *j = r->mcp_job;
    if (!j) return;
    pthread_join(j->thread, NULL);
    r->mcp_job = NULL;
    job_free(j);
}
