/*
 * client.c — the embedding client: cache look-ups, batching, bounded concurrency, retries,
 * timeouts and the overall deadline, over the provider wire formats of wire.c.
 *
 * Why libcurl's multi interface and no threads: requests in flight are bounded by the
 * configuration (`concurrency`), waiting is I/O, and one thread driving a multi handle keeps
 * the retry schedule, the deadline and the error path in one loop that is easy to reason about.
 *
 * Retry rules (reference-surfaces.md §6): 429, 408, 5xx, timeouts and connection failures are
 * retried up to `retry_attempts` attempts in all, after `backoff_ms` doubled per retry or the
 * server's Retry-After (seconds or an HTTP date) when that is longer; a retry that could only
 * start after the deadline is not attempted.  401/403 (auth), other 4xx and malformed 2xx
 * bodies fail at once.  The first failure that cannot be retried cancels the whole call.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "embed/embed_internal.h"
#include "util/curl_dl.h"
#include "util/error.h"

struct og_embedder {
    og_embed_config cfg;
    CURLM *multi;
    og_embed_cache *cache;
    og_embed_progress_fn progress;
    void *progress_ctx;
    og_embed_stats stats;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

og_status og_embedder_open(og_embedder **out, const og_embed_config *c)
{
    *out = NULL;
    og_embed_set_kind(OG_EMBED_E_NONE);
    if (c->retry_attempts < 1 || c->concurrency < 1 || !c->batch_inputs || !c->batch_bytes || c->timeout_ms < 1)
        return og_embed_fail(OG_EMBED_E_CONFIG, "attempts, concurrency, batch sizes and the timeout must be positive");
    og_embedder *e = calloc(1, sizeof *e);
    if (!e) return og_err(OG_ERR_NOMEM, "embedding: out of memory");
    e->cfg = *c;
    if (c->provider != OG_EMBED_MOCK) {
        if (og_curl_load() != OG_OK) { /* libcurl is mapped only once a provider is used */
            free(e);
            return og_embed_fail(OG_EMBED_E_TRANSPORT, "%s", og_error_message());
        }
        if (!(e->multi = curl_multi_init())) {
            free(e);
            return og_embed_fail(OG_EMBED_E_TRANSPORT, "libcurl could not start");
        }
    }
    *out = e;
    return OG_OK;
}

void og_embedder_close(og_embedder *e)
{
    if (!e) return;
    if (e->multi) curl_multi_cleanup(e->multi);
    memset(e->cfg.api_key, 0, sizeof e->cfg.api_key);
    free(e);
}

const og_embed_config *og_embedder_config(const og_embedder *e) { return &e->cfg; }
void og_embedder_set_cache(og_embedder *e, og_embed_cache *cache) { e->cache = cache; }
void og_embedder_set_progress(og_embedder *e, og_embed_progress_fn fn, void *ctx)
{
    e->progress = fn;
    e->progress_ctx = ctx;
}
void og_embedder_stats(const og_embedder *e, og_embed_stats *out) { *out = e->stats; }

/* ---- one request (a batch) ---- */

typedef struct job {
    size_t first, count; /* a range of the call's cache misses */
    int attempts;        /* sent so far */
    int64_t not_before;  /* monotonic ms */
    int active, done;
    int capped;          /* this attempt's timeout was cut short by the deadline */
    long retry_after_ms; /* -1: none in the last response */
    size_t resp_cap;
    CURL *h;
    struct curl_slist *hdrs;
    og_buf url, body, resp;
    char cerr[CURL_ERROR_SIZE];
} job;

static size_t write_cb(char *p, size_t sz, size_t nm, void *ud)
{
    job *j = ud;
    size_t n = sz * nm;
    if (j->resp.len + n > j->resp_cap) return 0; /* an absurd body: fail the transfer */
    return og_buf_append(&j->resp, p, n) == OG_OK ? n : 0;
}

static size_t header_cb(char *p, size_t sz, size_t nm, void *ud)
{
    job *j = ud;
    size_t n = sz * nm;
    if (n > 12 && !strncasecmp(p, "retry-after:", 12)) {
        char v[128];
        size_t k = n - 12 < sizeof v - 1 ? n - 12 : sizeof v - 1;
        memcpy(v, p + 12, k);
        v[k] = 0;
        char *s = v;
        while (*s == ' ' || *s == '\t') s++;
        char *end = s + strlen(s);
        while (end > s && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) *--end = 0;
        char *num_end;
        double secs = strtod(s, &num_end);
        if (num_end != s && !*num_end && secs >= 0) {
            j->retry_after_ms = (long)(secs * 1000.0 > 3600000.0 ? 3600000.0 : secs * 1000.0);
        } else {
            time_t t = curl_getdate(s, NULL);
            if (t != (time_t)-1) {
                double d = difftime(t, time(NULL));
                j->retry_after_ms = d <= 0 ? 0 : (long)(d > 3600 ? 3600000 : d * 1000);
            }
        }
    }
    return n;
}

typedef struct call {
    og_embedder *e;
    const char *const *texts; /* the misses */
    const size_t *lens;
    uint32_t dim;
    og_embed_role role;
    float *vecs; /* misses x dim */
    int64_t deadline_at; /* 0 = none */
    job *jobs;
    size_t njobs;
    int inflight;
} call;

static og_status job_start(call *c, job *j)
{
    og_embedder *e = c->e;
    int64_t now = now_ms();
    long timeout = e->cfg.timeout_ms;
    j->capped = 0;
    if (c->deadline_at) {
        int64_t left = c->deadline_at - now;
        if (left <= 0)
            return og_embed_fail(OG_EMBED_E_DEADLINE, "the deadline of %ld ms passed (OMNIGRAPH_EMBED_DEADLINE_MS)",
                                 e->cfg.deadline_ms);
        if (left < timeout) {
            timeout = (long)left;
            j->capped = 1;
        }
    }
    if (!j->url.len)
        OG_TRY(og_embed_wire_request(&e->cfg, c->texts + j->first, c->lens + j->first, j->count, c->dim, c->role, &j->url,
                                     &j->body));
    char auth[1200];
    OG_TRY(og_embed_wire_auth_header(&e->cfg, auth, sizeof auth));
    if (!j->h && !(j->h = curl_easy_init())) return og_embed_fail(OG_EMBED_E_TRANSPORT, "libcurl: no easy handle");
    curl_slist_free_all(j->hdrs);
    j->hdrs = NULL;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    if (h) h = curl_slist_append(h, "Accept: application/json");
    if (h && auth[0]) h = curl_slist_append(h, auth);
    memset(auth, 0, sizeof auth);
    if (!h) return og_err(OG_ERR_NOMEM, "embedding: out of memory");
    j->hdrs = h;
    og_buf_reset(&j->resp);
    j->retry_after_ms = -1;
    j->cerr[0] = 0;
    j->resp_cap = 64u * 1024 * 1024 + j->count * (size_t)c->dim * 32;
    CURL *x = j->h;
    curl_easy_reset(x);
    curl_easy_setopt(x, CURLOPT_URL, og_buf_cstr(&j->url));
    curl_easy_setopt(x, CURLOPT_HTTPHEADER, j->hdrs);
    curl_easy_setopt(x, CURLOPT_POST, 1L);
    curl_easy_setopt(x, CURLOPT_POSTFIELDS, (const char *)j->body.data);
    curl_easy_setopt(x, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->body.len);
    curl_easy_setopt(x, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(x, CURLOPT_WRITEDATA, j);
    curl_easy_setopt(x, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(x, CURLOPT_HEADERDATA, j);
    curl_easy_setopt(x, CURLOPT_ERRORBUFFER, j->cerr);
    curl_easy_setopt(x, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(x, CURLOPT_CONNECTTIMEOUT_MS, timeout < 10000 ? timeout : 10000L);
    curl_easy_setopt(x, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(x, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1"); /* local model servers: never via a proxy */
    curl_easy_setopt(x, CURLOPT_USERAGENT, "omnigraph-c/" OG_VERSION_STRING);
    curl_easy_setopt(x, CURLOPT_PRIVATE, j);
    if (curl_multi_add_handle(c->e->multi, x) != CURLM_OK)
        return og_embed_fail(OG_EMBED_E_TRANSPORT, "libcurl refused a request");
    j->active = 1;
    j->attempts++;
    c->inflight++;
    e->stats.requests++;
    if (j->attempts > 1) e->stats.retries++;
    return OG_OK;
}

static void job_detach(call *c, job *j)
{
    if (j->active) {
        curl_multi_remove_handle(c->e->multi, j->h);
        j->active = 0;
        c->inflight--;
    }
}

/* A finished transfer: OG_OK when done or rescheduled; the typed error when the call fails. */
static og_status job_finish(call *c, job *j, CURLcode rc, size_t *done_inputs)
{
    og_embedder *e = c->e;
    job_detach(c, j);
    long code = 0;
    og_embed_errkind kind;
    char why[700];
    int retry;
    if (rc != CURLE_OK) {
        kind = rc == CURLE_OPERATION_TIMEDOUT ? (j->capped ? OG_EMBED_E_DEADLINE : OG_EMBED_E_TIMEOUT)
               : rc == CURLE_WRITE_ERROR      ? OG_EMBED_E_BAD_RESPONSE
                                              : OG_EMBED_E_TRANSPORT;
        retry = kind == OG_EMBED_E_TIMEOUT || kind == OG_EMBED_E_TRANSPORT;
        snprintf(why, sizeof why, "%s%s%s", curl_easy_strerror(rc), j->cerr[0] ? ": " : "", j->cerr);
        if (kind == OG_EMBED_E_TIMEOUT) {
            size_t l = strlen(why);
            snprintf(why + l, sizeof why - l, " (per-request timeout %ld ms, OMNIGRAPH_EMBED_TIMEOUT_MS)",
                     e->cfg.timeout_ms);
        } else if (kind == OG_EMBED_E_DEADLINE) {
            snprintf(why, sizeof why, "the deadline of %ld ms passed (OMNIGRAPH_EMBED_DEADLINE_MS)", e->cfg.deadline_ms);
        }
        og_embed_redact(&e->cfg, why, sizeof why);
    } else {
        curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200 && code < 300) {
            og_status st = og_embed_wire_parse(&e->cfg, (const char *)j->resp.data, j->resp.len, j->count, c->dim,
                                               c->vecs + j->first * c->dim);
            if (st != OG_OK) return og_err_wrap(st, "%s request to %s", og_embed_provider_name(e->cfg.provider),
                                                og_buf_cstr(&j->url));
            j->done = 1;
            e->stats.embedded += j->count;
            /* Cached as each batch lands, so a call that fails later (quota, deadline) still
             * leaves its finished work behind for a rerun. */
            for (size_t k = j->first; e->cache && k < j->first + j->count; k++)
                OG_TRY(og_embed_cache_put(e->cache, &e->cfg, c->role, c->texts[k], c->lens[k], c->dim,
                                          c->vecs + k * c->dim));
            *done_inputs += j->count;
            return OG_OK;
        }
        char ex[400];
        og_embed_wire_error_excerpt(&e->cfg, (const char *)j->resp.data, j->resp.len, ex, sizeof ex);
        kind = code == 401 || code == 403                  ? OG_EMBED_E_AUTH
               : code == 429                               ? OG_EMBED_E_QUOTA
               : code == 408 || (code >= 500 && code < 600) ? OG_EMBED_E_SERVER
                                                           : OG_EMBED_E_REQUEST;
        retry = kind == OG_EMBED_E_QUOTA || kind == OG_EMBED_E_SERVER;
        snprintf(why, sizeof why, "HTTP %ld%s%s", code, ex[0] ? ": " : "", ex);
    }
    int64_t now = now_ms();
    if (retry && j->attempts < e->cfg.retry_attempts) {
        int64_t delay = e->cfg.backoff_ms;
        for (int k = 1; k < j->attempts && delay < 60000; k++) delay *= 2;
        if (j->retry_after_ms >= 0 && j->retry_after_ms > delay) delay = j->retry_after_ms;
        if (!c->deadline_at || now + delay < c->deadline_at) {
            j->not_before = now + delay;
            return OG_OK;
        }
        return og_embed_fail(kind, "%s request to %s: %s; the next retry (in %lld ms) would pass the deadline of %ld ms",
                             og_embed_provider_name(e->cfg.provider), og_buf_cstr(&j->url), why, (long long)delay,
                             e->cfg.deadline_ms);
    }
    if (retry)
        return og_embed_fail(kind, "%s request to %s: %s (after %d attempts)", og_embed_provider_name(e->cfg.provider),
                             og_buf_cstr(&j->url), why, j->attempts);
    return og_embed_fail(kind, "%s request to %s: %s", og_embed_provider_name(e->cfg.provider), og_buf_cstr(&j->url), why);
}

static og_status run_http(call *c, size_t total_misses, size_t hits)
{
    og_embedder *e = c->e;
    size_t done = 0;
    og_status st = OG_OK;
    for (;;) {
        int pending = 0;
        int64_t now = now_ms(), wake = 0;
        for (size_t i = 0; i < c->njobs && st == OG_OK; i++) {
            job *j = &c->jobs[i];
            if (j->done || j->active) continue;
            pending = 1;
            if (j->not_before <= now && c->inflight < e->cfg.concurrency) st = job_start(c, j);
            else if (!wake || j->not_before < wake) wake = j->not_before;
        }
        if (st != OG_OK) break;
        if (!pending && !c->inflight) break;
        if (c->deadline_at && now >= c->deadline_at) {
            st = og_embed_fail(OG_EMBED_E_DEADLINE, "the deadline of %ld ms passed (OMNIGRAPH_EMBED_DEADLINE_MS)",
                               e->cfg.deadline_ms);
            break;
        }
        int running = 0;
        curl_multi_perform(e->multi, &running);
        CURLMsg *m;
        int left;
        while (st == OG_OK && (m = curl_multi_info_read(e->multi, &left))) {
            if (m->msg != CURLMSG_DONE) continue;
            job *j = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&j);
            CURLcode rc = m->data.result;
            size_t before = done;
            st = job_finish(c, j, rc, &done);
            if (st == OG_OK && done != before && e->progress) e->progress(e->progress_ctx, hits + done, hits + total_misses);
        }
        if (st != OG_OK) break;
        int timeout = 100;
        if (wake) {
            int64_t w = wake - now_ms();
            if (w < timeout) timeout = w < 0 ? 0 : (int)w;
        }
        if (c->deadline_at) {
            int64_t w = c->deadline_at - now_ms();
            if (w < timeout) timeout = w < 0 ? 0 : (int)w;
        }
        if (c->inflight) curl_multi_poll(e->multi, NULL, 0, timeout, NULL);
        else if (timeout > 0) {
            struct timespec ts = {timeout / 1000, (long)(timeout % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    for (size_t i = 0; i < c->njobs; i++) job_detach(c, &c->jobs[i]);
    return st;
}

og_status og_embedder_embed(og_embedder *e, const char *const *texts, const size_t *lens, size_t n, uint32_t dim,
                            og_embed_role role, float *out)
{
    og_embed_set_kind(OG_EMBED_E_NONE);
    if (!dim || dim > 65536) return og_embed_fail(OG_EMBED_E_CONFIG, "a vector dimension of %u is out of range", dim);
    if (!n) return OG_OK;
    size_t *miss = malloc(n * sizeof *miss);
    if (!miss) return og_err(OG_ERR_NOMEM, "embedding: out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (e->cache && og_embed_cache_get(e->cache, &e->cfg, role, texts[i], lens[i], dim, out + i * dim))
            e->stats.cache_hits++;
        else miss[m++] = i;
    }
    size_t hits = n - m;
    og_status st = OG_OK;
    if (m && e->cfg.provider == OG_EMBED_MOCK) {
        for (size_t k = 0; k < m; k++) og_embed_mock_vector(texts[miss[k]], lens[miss[k]], dim, out + miss[k] * dim);
        e->stats.embedded += m;
        if (e->progress) e->progress(e->progress_ctx, n, n);
    } else if (m) {
        const char **mt = malloc(m * sizeof *mt);
        size_t *ml = malloc(m * sizeof *ml);
        float *mv = malloc(m * (size_t)dim * sizeof *mv);
        job *jobs = calloc(m, sizeof *jobs);
        if (!mt || !ml || !mv || !jobs) st = og_err(OG_ERR_NOMEM, "embedding: out of memory");
        size_t nj = 0;
        if (st == OG_OK) {
            size_t bytes = 0;
            for (size_t k = 0; k < m; k++) {
                mt[k] = texts[miss[k]];
                ml[k] = lens[miss[k]];
                job *cur = nj ? &jobs[nj - 1] : NULL;
                if (!cur || cur->count >= e->cfg.batch_inputs || bytes + ml[k] > e->cfg.batch_bytes) {
                    cur = &jobs[nj++];
                    cur->first = k;
                    bytes = 0;
                }
                cur->count++;
                bytes += ml[k];
            }
            call c = {e, mt, ml, dim, role, mv, e->cfg.deadline_ms ? now_ms() + e->cfg.deadline_ms : 0, jobs, nj, 0};
            st = run_http(&c, m, hits);
        }
        for (size_t k = 0; st == OG_OK && k < m; k++) memcpy(out + miss[k] * dim, mv + k * dim, dim * sizeof(float));
        for (size_t i = 0; i < nj; i++) {
            if (jobs[i].h) curl_easy_cleanup(jobs[i].h);
            curl_slist_free_all(jobs[i].hdrs);
            og_buf_free(&jobs[i].url);
            og_buf_free(&jobs[i].body);
            og_buf_free(&jobs[i].resp);
        }
        free(jobs);
        free(mv);
        free(ml);
        free(mt);
    }
    for (size_t k = 0; st == OG_OK && e->cache && e->cfg.provider == OG_EMBED_MOCK && k < m; k++) {
        og_status cs = og_embed_cache_put(e->cache, &e->cfg, role, texts[miss[k]], lens[miss[k]], dim, out + miss[k] * dim);
        if (cs != OG_OK) st = cs;
    }
    free(miss);
    return st;
}
