/*
 * provider_server.h — a loopback embedding service for the embed tests (libmicrohttpd, one
 * thread per connection, 127.0.0.1 on an ephemeral port).
 *
 * It speaks the OpenAI-compatible and the Gemini wire formats, records every request (path,
 * auth headers, body) and can be told to misbehave: fail the next k requests with a status
 * (and a Retry-After), answer slowly, answer malformed JSON, a wrong dimension or a zero
 * vector, a component too large for float32 (infinite once stored), or echo the caller's key
 * in an error body.  Its vectors are 3x the mock provider's
 * (so a test sees that the client normalises), one per input text.
 */
#ifndef OG_TEST_PROVIDER_SERVER_H
#define OG_TEST_PROVIDER_SERVER_H

#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embed/embed.h"

#define PS_MAX_REQ 256

typedef enum ps_mode { PS_OK = 0, PS_MALFORMED, PS_WRONG_DIM, PS_ZERO, PS_SHORT, PS_ECHO_KEY_401, PS_HUGE } ps_mode;

typedef struct ps_req {
    char path[512];
    char auth[512];   /* Authorization */
    char goog[512];   /* x-goog-api-key */
    char ctype[128];
    char *body;
} ps_req;

typedef struct ps_server {
    struct MHD_Daemon *d;
    int port;
    char base[64];
    pthread_mutex_t mu;
    ps_req reqs[PS_MAX_REQ];
    int nreq;
    /* behaviour */
    int fail_next;          /* the next k requests answer fail_status */
    int fail_status;
    char retry_after[64];   /* "" = no header */
    int delay_ms;           /* every request */
    int ok_left;            /* >= 0: this many more requests succeed, then every one fails 429 */
    ps_mode mode;
    int inflight, max_inflight;
} ps_server;

typedef struct ps_conn {
    char *body;
    size_t len;
} ps_conn;

static void ps_vec(const char *t, size_t n, uint32_t dim, json_t *arr, int zero)
{
    float *v = malloc(dim * sizeof *v);
    og_embed_mock_vector(t, n, dim, v);
    for (uint32_t i = 0; i < dim; i++)
        json_array_append_new(arr, json_real(zero == 2 && i == 0 ? 1e39 : zero == 1 ? 0.0 : 3.0 * v[i]));
    free(v);
}

static enum MHD_Result ps_reply(struct MHD_Connection *c, int status, const char *body, const char *retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (retry_after && *retry_after) MHD_add_response_header(r, "Retry-After", retry_after);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static char *ps_answer(ps_server *s, const char *url, const char *body, size_t len, const char *key)
{
    json_t *in = json_loadb(body, len, 0, NULL);
    if (!in) return strdup("{\"error\":{\"message\":\"bad json\"}}");
    json_t *out = NULL;
    const char *gem = strstr(url, ":embedContent") ? "one" : strstr(url, ":batchEmbedContents") ? "batch" : NULL;
    if (!gem) {
        uint32_t dim = (uint32_t)json_integer_value(json_object_get(in, "dimensions"));
        if (s->mode == PS_WRONG_DIM) dim += 1;
        json_t *data = json_array();
        json_t *inputs = json_object_get(in, "input");
        size_t n = json_array_size(inputs);
        if (s->mode == PS_SHORT && n) n--;
        for (size_t i = n; i-- > 0;) { /* reversed order: the client must honour "index" */
            json_t *e = json_array();
            json_t *t = json_array_get(inputs, i);
            ps_vec(json_string_value(t), json_string_length(t), dim, e, s->mode == PS_ZERO ? 1 : s->mode == PS_HUGE ? 2 : 0);
            json_array_append_new(data, json_pack("{s:s, s:I, s:o}", "object", "embedding", "index", (json_int_t)i,
                                                  "embedding", e));
        }
        out = json_pack("{s:s, s:o, s:s}", "object", "list", "data", data, "model", "test");
    } else if (!strcmp(gem, "one")) {
        uint32_t dim = (uint32_t)json_integer_value(json_object_get(in, "outputDimensionality"));
        if (s->mode == PS_WRONG_DIM) dim += 1;
        json_t *t = json_object_get(json_array_get(json_object_get(json_object_get(in, "content"), "parts"), 0), "text");
        json_t *e = json_array();
        ps_vec(json_string_value(t), json_string_length(t), dim, e, s->mode == PS_ZERO ? 1 : s->mode == PS_HUGE ? 2 : 0);
        out = json_pack("{s:{s:o}}", "embedding", "values", e);
    } else {
        json_t *reqs = json_object_get(in, "requests"), *embs = json_array();
        for (size_t i = 0; i < json_array_size(reqs); i++) {
            json_t *q = json_array_get(reqs, i);
            uint32_t dim = (uint32_t)json_integer_value(json_object_get(q, "outputDimensionality"));
            json_t *t = json_object_get(json_array_get(json_object_get(json_object_get(q, "content"), "parts"), 0), "text");
            json_t *e = json_array();
            ps_vec(json_string_value(t), json_string_length(t), dim, e, s->mode == PS_ZERO ? 1 : s->mode == PS_HUGE ? 2 : 0);
            json_array_append_new(embs, json_pack("{s:o}", "values", e));
        }
        out = json_pack("{s:o}", "embeddings", embs);
    }
    (void)key;
    char *txt = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    json_decref(in);
    return txt;
}

static enum MHD_Result ps_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_len, void **con_cls)
{
    ps_server *s = cls;
    (void)version;
    ps_conn *pc = *con_cls;
    if (!pc) {
        pc = calloc(1, sizeof *pc);
        *con_cls = pc;
        return MHD_YES;
    }
    if (*upload_len) {
        pc->body = realloc(pc->body, pc->len + *upload_len + 1);
        memcpy(pc->body + pc->len, upload, *upload_len);
        pc->len += *upload_len;
        pc->body[pc->len] = 0;
        *upload_len = 0;
        return MHD_YES;
    }
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *goog = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-goog-api-key");
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    pthread_mutex_lock(&s->mu);
    if (s->nreq < PS_MAX_REQ) {
        ps_req *r = &s->reqs[s->nreq++];
        snprintf(r->path, sizeof r->path, "%s %s", method, url);
        snprintf(r->auth, sizeof r->auth, "%s", auth ? auth : "");
        snprintf(r->goog, sizeof r->goog, "%s", goog ? goog : "");
        snprintf(r->ctype, sizeof r->ctype, "%s", ct ? ct : "");
        r->body = pc->body ? strdup(pc->body) : strdup("");
    }
    int fail = 0, status = 0, delay = s->delay_ms;
    char ra[64];
    snprintf(ra, sizeof ra, "%s", s->retry_after);
    if (s->fail_next > 0) {
        s->fail_next--;
        fail = 1;
        status = s->fail_status;
    } else if (s->ok_left == 0) {
        fail = 1;
        status = 429;
    } else if (s->ok_left > 0) {
        s->ok_left--;
    }
    ps_mode mode = s->mode;
    if (++s->inflight > s->max_inflight) s->max_inflight = s->inflight;
    pthread_mutex_unlock(&s->mu);
    if (delay) usleep((useconds_t)delay * 1000);
    enum MHD_Result ret;
    const char *key = auth && !strncmp(auth, "Bearer ", 7) ? auth + 7 : goog ? goog : "";
    if (fail) {
        ret = ps_reply(c, status, "{\"error\":{\"message\":\"try again later\",\"code\":\"busy\"}}", ra);
    } else if (mode == PS_ECHO_KEY_401) {
        char b[1024];
        snprintf(b, sizeof b, "{\"error\":{\"message\":\"Incorrect API key provided: %s\"}}", key);
        ret = ps_reply(c, 401, b, NULL);
    } else if (mode == PS_MALFORMED) {
        ret = ps_reply(c, 200, "{\"data\": [ {\"embedding\": [1, 2", NULL);
    } else {
        char *a = ps_answer(s, url, pc->body ? pc->body : "", pc->len, key);
        ret = ps_reply(c, 200, a, NULL);
        free(a);
    }
    pthread_mutex_lock(&s->mu);
    s->inflight--;
    pthread_mutex_unlock(&s->mu);
    return ret;
}

static void ps_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)c, (void)t;
    ps_conn *pc = *con_cls;
    if (pc) {
        free(pc->body);
        free(pc);
    }
    *con_cls = NULL;
}

/* Starts a server on 127.0.0.1:<ephemeral>; s->base is "http://127.0.0.1:<port>". 0 on success. */
static int ps_start(ps_server *s)
{
    memset(s, 0, sizeof *s);
    s->ok_left = -1;
    pthread_mutex_init(&s->mu, NULL);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = 0;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, ps_handler, s,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, ps_completed, s,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    if (!s->d) return -1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    snprintf(s->base, sizeof s->base, "http://127.0.0.1:%d", s->port);
    return s->port ? 0 : -1;
}

static void ps_reset(ps_server *s)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nreq; i++) free(s->reqs[i].body);
    s->nreq = 0;
    s->fail_next = s->fail_status = s->delay_ms = 0;
    s->retry_after[0] = 0;
    s->mode = PS_OK;
    s->max_inflight = 0;
    s->ok_left = -1;
    pthread_mutex_unlock(&s->mu);
}

static void ps_stop(ps_server *s)
{
    if (s->d) MHD_stop_daemon(s->d);
    ps_reset(s);
    pthread_mutex_destroy(&s->mu);
}

#endif
