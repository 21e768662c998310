/*
 * store_s3.c — the S3-compatible object store adapter behind store.h ("s3://bucket/prefix").
 *
 * HTTP through libcurl (a small pool of easy handles, so connections are reused and several
 * threads can issue requests at once), AWS Signature V4 from s3_sigv4.c (every request
 * carries x-amz-content-sha256 with the real SHA-256 of its body), path-style URLs by default.
 * The configuration comes from the environment, as the AWS tools read it:
 *   AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3)   required, e.g. http://127.0.0.1:7480
 *   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY    required
 *   AWS_SESSION_TOKEN                           optional (sent as x-amz-security-token)
 *   AWS_REGION (or AWS_DEFAULT_REGION)          default us-east-1
 *   OG_S3_ADDRESSING=virtual                    bucket.host/key instead of host/bucket/key
 *   OG_S3_MAX_ATTEMPTS (5), OG_S3_RETRY_BASE_MS (100), OG_S3_TIMEOUT_MS (120000),
 *   OG_S3_LIST_PAGE (1000; smaller values make tests exercise continuation tokens)
 * Credentials never appear in a message, a log line or a URL.
 *
 * Mapping onto the contract (STORAGE.md §2):
 *   get / get_range      GET, with "Range: bytes=a-b"; 416 (offset past the end) = empty
 *   head                 HEAD
 *   put                  PUT (single part)
 *   put_if_absent        PUT with "If-None-Match: *": 200 = won, 412 = lost; 409
 *                        ConditionalRequestConflict (AWS, concurrent conditional writes) = lost
 *   list                 ListObjectsV2 (prefix, start-after, max-keys, continuation-token)
 *   delete               HEAD then DELETE: S3 answers 204 for a missing key, the contract
 *                        wants NOT_FOUND
 *   map                  no mmap: store.c makes a heap copy from get()
 * Retries: at most OG_S3_MAX_ATTEMPTS attempts, full-jitter exponential back-off, on transport
 * errors and timeouts, 5xx, 429 and 503 SlowDown.  put_if_absent is never retried blindly:
 * when its outcome is unknown (timeout or 5xx after the body may have been applied) the key
 * is read back; the same bytes mean we won, other bytes mean we lost, no object means the
 * conditional PUT can be sent again (If-None-Match keeps that safe).  When the retries run
 * out with no answer or only 5xx (an outcome still unknown included) the error is
 * OG_ERR_UNAVAILABLE: the store is down, the caller may retry later.
 *
 * Crash points (util/fault.h), the same names as the local adapter's: "store.put.after_write"
 * (a PUT is signed, nothing sent) and "store.put.before_publish" (half of the body is on the
 * wire): the store must then show no object, or the old one, never a torn one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/s3_sigv4.h"
#include "store/store_impl.h"
#include "util/curl_dl.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/utf8.h"

#define S3_POOL_MAX 16
#define S3_LIST_PAGE 1000

typedef struct s3_impl {
    char *scheme_host; /* "http://127.0.0.1:7480" (no trailing '/') */
    char *host;        /* "127.0.0.1:7480": the Host header, signed */
    char *bucket;
    char *root;        /* "" or "prefix/" (every key is root + key) */
    char *region;
    char *access_key;
    char *secret_key;
    char *session_token; /* NULL when unset */
    int virtual_host;
    int loopback; /* the endpoint is this machine: ignore any http_proxy setting */
    int max_attempts;
    long retry_base_ms;
    long timeout_ms;
    long list_page; /* max-keys per ListObjectsV2 request */
    pthread_mutex_t mu;
    CURL *pool[S3_POOL_MAX];
    int npool;
    unsigned rng; /* jitter state, under mu */
} s3_impl;

/* One HTTP exchange. */
typedef struct s3_req {
    const char *method;  /* GET PUT HEAD DELETE */
    const char *objkey;  /* full object key (root included), NULL for the bucket itself */
    const char *query;   /* canonical query string or NULL */
    const uint8_t *body; /* PUT body */
    size_t body_len;
    const char *range;   /* "bytes=a-b" or NULL */
    int if_none_match;   /* send If-None-Match: * */
} s3_req;

typedef struct s3_resp {
    long status;        /* 0 = no HTTP response (transport failure) */
    CURLcode cc;        /* the transport result */
    char cerr[CURL_ERROR_SIZE];
    og_buf body;
    curl_off_t content_length; /* -1 when unknown */
    curl_off_t filetime;       /* Last-Modified of a HEAD, seconds; -1 when unknown */
} s3_resp;

/* ---- small helpers ------------------------------------------------------------------- */

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = env_nonempty(name);
    if (!v) return dflt;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (!end || *end || x < lo || x > hi) return dflt;
    return x;
}

static void resp_reset(s3_resp *r)
{
    r->status = 0;
    r->cc = CURLE_OK;
    r->cerr[0] = '\0';
    og_buf_reset(&r->body);
    r->content_length = -1;
    r->filetime = -1;
}

/* The text of the first <tag>…</tag> in [x, x+n), or NULL; *len gets its length. */
static const char *xml_find(const char *x, size_t n, const char *tag, size_t *len)
{
    size_t tl = strlen(tag);
    const char *end = x + n;
    for (const char *p = x; p + tl + 2 <= end; p++) {
        if (p[0] != '<' || memcmp(p + 1, tag, tl) != 0) continue;
        const char *q = p + 1 + tl;
        if (q < end && *q == '/' && q + 1 < end && q[1] == '>') { /* <tag/> */
            *len = 0;
            return q + 2;
        }
        if (q >= end || (*q != '>' && *q != ' ')) continue;
        while (q < end && *q != '>') q++;
        if (q >= end) return NULL;
        const char *text = q + 1;
        for (const char *c = text; c + tl + 3 <= end; c++) {
            if (c[0] == '<' && c[1] == '/' && memcmp(c + 2, tag, tl) == 0 && c[2 + tl] == '>') {
                *len = (size_t)(c - text);
                return text;
            }
        }
        return NULL;
    }
    return NULL;
}

/* Appends the XML text [s, s+n) with its entity and character references decoded.
 * A malformed reference, or one that decodes to NUL or past U+10FFFF, is OG_ERR_IO. */
static og_status xml_unescape(og_buf *out, const char *s, size_t n)
{
    static const struct { const char *name; char c; } ents[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') {
            OG_TRY(og_buf_append_byte(out, (uint8_t)s[i]));
            continue;
        }
        size_t j = i + 1;
        while (j < n && s[j] != ';' && j - i < 12) j++;
        if (j >= n || s[j] != ';') return og_err(OG_ERR_IO, "s3: malformed XML entity in a response");
        const char *e = s + i + 1;
        size_t el = j - i - 1;
        int done = 0;
        if (el >= 2 && e[0] == '#') {
            unsigned long cp = 0;
            int hex = e[1] == 'x' || e[1] == 'X';
            size_t k = hex ? 2 : 1;
            if (k >= el) return og_err(OG_ERR_IO, "s3: malformed XML character reference");
            for (; k < el; k++) {
                char c = e[k];
                int d = (c >= '0' && c <= '9') ? c - '0'
                        : (hex && c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (hex && c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
                if (d < 0) return og_err(OG_ERR_IO, "s3: malformed XML character reference");
                cp = cp * (hex ? 16 : 10) + (unsigned long)d;
                if (cp > 0x10FFFF) return og_err(OG_ERR_IO, "s3: XML character reference out of range");
            }
            if (cp == 0) return og_err(OG_ERR_IO, "s3: XML character reference to NUL");
            unsigned char u[4];
            OG_TRY(og_buf_append(out, u, og_utf8_encode((uint32_t)cp, u)));
            done = 1;
        } else {
            for (size_t k = 0; k < sizeof ents / sizeof ents[0]; k++) {
                if (strlen(ents[k].name) == el && memcmp(ents[k].name, e, el) == 0) {
                    OG_TRY(og_buf_append_byte(out, (uint8_t)ents[k].c));
                    done = 1;
                    break;
                }
            }
        }
        if (!done) return og_err(OG_ERR_IO, "s3: unknown XML entity in a response");
        i = j;
    }
    return OG_OK;
}

/* "Code: Message" from an S3 error body, bounded, for messages ("" when absent). */
static void error_detail(const s3_resp *r, char *out, size_t cap)
{
    out[0] = '\0';
    if (!r->body.data || r->body.len == 0) return;
    size_t cl = 0, ml = 0;
    const char *code = xml_find((const char *)r->body.data, r->body.len, "Code", &cl);
    const char *msg = xml_find((const char *)r->body.data, r->body.len, "Message", &ml);
    if (!code) return;
    if (cl > 64) cl = 64;
    if (ml > 160) ml = 160;
    if (msg && ml)
        snprintf(out, cap, " %.*s: %.*s", (int)cl, code, (int)ml, msg);
    else
        snprintf(out, cap, " %.*s", (int)cl, code);
}

static int error_code_is(const s3_resp *r, const char *code)
{
    size_t cl = 0;
    const char *c = r->body.data ? xml_find((const char *)r->body.data, r->body.len, "Code", &cl) : NULL;
    return c && cl == strlen(code) && memcmp(c, code, cl) == 0;
}

/* ---- the curl handle pool -------------------------------------------------------------- */

static CURL *pool_take(s3_impl *s)
{
    CURL *h = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->npool > 0) h = s->pool[--s->npool];
    pthread_mutex_unlock(&s->mu);
    if (h) {
        curl_easy_reset(h); /* keeps the live connections */
        return h;
    }
    return curl_easy_init();
}

static void pool_give(s3_impl *s, CURL *h)
{
    pthread_mutex_lock(&s->mu);
    if (s->npool < S3_POOL_MAX) {
        s->pool[s->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (h) curl_easy_cleanup(h);
}

/* A jittered back-off for attempt `n` (1-based): uniform in [base, base * 2^n], capped. */
static void backoff(s3_impl *s, int n)
{
    long cap = s->retry_base_ms << (n < 8 ? n : 8);
    if (cap > 5000) cap = 5000;
    pthread_mutex_lock(&s->mu);
    s->rng = s->rng * 1103515245u + 12345u;
    unsigned r = s->rng >> 8;
    pthread_mutex_unlock(&s->mu);
    long ms = s->retry_base_ms + (cap > s->retry_base_ms ? (long)(r % (unsigned)(cap - s->retry_base_ms + 1)) : 0);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- one signed request ---------------------------------------------------------------- */

typedef struct upload {
    const uint8_t *p;
    size_t left;
    size_t half; /* crash point "store.put.before_publish" fires once this much is sent */
    size_t sent;
} upload;

/* The PUT body.  Deliberately no CURLOPT_SEEKFUNCTION: without one libcurl cannot rewind
 * the body, so it never silently re-sends a PUT on a reused connection that died; it fails
 * with CURLE_SEND_FAIL_REWIND instead, and put_if_absent treats that as an unknown outcome
 * (a silent re-send could turn our own win into a 412 we would read as a loss). */
static size_t read_cb(char *dst, size_t size, size_t nmemb, void *ud)
{
    upload *u = ud;
    size_t n = size * nmemb;
    if (n > u->left) n = u->left;
    if (u->half) { /* hand over the first half on its own, so a crash point can cut the body */
        if (u->sent < u->half && n > u->half - u->sent) n = u->half - u->sent;
        if (u->sent == u->half) og_fault_point("store.put.before_publish");
    }
    u->sent += n;
    if (n) memcpy(dst, u->p, n);
    u->p += n;
    u->left -= n;
    return n;
}

static size_t write_cb(char *src, size_t size, size_t nmemb, void *ud)
{
    og_buf *b = ud;
    size_t n = size * nmemb;
    return og_buf_append(b, src, n) == OG_OK ? n : 0;
}

/* Builds the path ("/bucket/key" or "/key"), encoded exactly as signed. */
static og_status build_path(const s3_impl *s, const s3_req *q, og_buf *path)
{
    OG_TRY(og_buf_append_byte(path, '/'));
    if (!s->virtual_host) {
        OG_TRY(og_sigv4_uri_encode(path, s->bucket, 0));
        if (q->objkey) OG_TRY(og_buf_append_byte(path, '/'));
    }
    if (q->objkey) OG_TRY(og_sigv4_uri_encode(path, q->objkey, 1));
    return OG_OK;
}

/* Sends one attempt.  A failure to build the request is returned; the HTTP outcome (or the
 * transport failure) is left in *r for the caller to judge. */
static og_status send_once(s3_impl *s, const s3_req *q, s3_resp *r)
{
    resp_reset(r);
    og_buf path = OG_BUF_INIT, url = OG_BUF_INIT, auth = OG_BUF_INIT, hbuf = OG_BUF_INIT;
    struct curl_slist *hl = NULL;
    CURL *h = NULL;
    og_status st = build_path(s, q, &path);

    char host[512];
    if (s->virtual_host)
        snprintf(host, sizeof host, "%s.%s", s->bucket, s->host);
    else
        snprintf(host, sizeof host, "%s", s->host);
    char hash[65];
    og_sigv4_sha256_hex(q->body ? q->body : (const uint8_t *)"", q->body_len, hash);
    char amz_date[17];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(amz_date, sizeof amz_date, "%Y%m%dT%H%M%SZ", &tmv);

    og_sigv4_header sh[6];
    size_t nh = 0;
    sh[nh++] = (og_sigv4_header){"host", host};
    sh[nh++] = (og_sigv4_header){"x-amz-content-sha256", hash};
    sh[nh++] = (og_sigv4_header){"x-amz-date", amz_date};
    if (q->range) sh[nh++] = (og_sigv4_header){"range", q->range};
    if (q->if_none_match) sh[nh++] = (og_sigv4_header){"if-none-match", "*"};
    if (s->session_token) sh[nh++] = (og_sigv4_header){"x-amz-security-token", s->session_token};

    if (st == OG_OK) {
        og_sigv4_request sr = {q->method, og_buf_cstr(&path), q->query ? q->query : "", sh, nh,
                               hash, amz_date, s->region, "s3"};
        st = og_sigv4_sign(&sr, s->access_key, s->secret_key, &auth, NULL, NULL);
    }
    if (st == OG_OK) {
        const char *scheme_end = strstr(s->scheme_host, "://");
        size_t sl = scheme_end ? (size_t)(scheme_end - s->scheme_host) + 3 : 0;
        st = og_buf_printf(&url, "%.*s%s%s%s%s", (int)sl, s->scheme_host, host, og_buf_cstr(&path),
                           (q->query && *q->query) ? "?" : "", q->query ? q->query : "");
    }
    for (size_t i = 0; i < nh && st == OG_OK; i++) {
        og_buf_reset(&hbuf);
        st = og_buf_printf(&hbuf, "%s: %s", sh[i].name, sh[i].value);
        if (st == OG_OK) {
            struct curl_slist *n = curl_slist_append(hl, og_buf_cstr(&hbuf));
            if (!n) st = og_err(OG_ERR_NOMEM, "s3: out of memory");
            else hl = n;
        }
    }
    if (st == OG_OK) {
        og_buf_reset(&hbuf);
        st = og_buf_printf(&hbuf, "Authorization: %s", og_buf_cstr(&auth));
        struct curl_slist *n = st == OG_OK ? curl_slist_append(hl, og_buf_cstr(&hbuf)) : NULL;
        struct curl_slist *n2 = n ? curl_slist_append(n, "Expect:") : NULL;
        if (st == OG_OK && !n2) st = og_err(OG_ERR_NOMEM, "s3: out of memory");
        if (n) hl = n;
        if (n2) hl = n2;
    }
    if (st == OG_OK && !(h = pool_take(s))) st = og_err(OG_ERR_NOMEM, "s3: curl_easy_init failed");
    if (st == OG_OK) {
        upload up = {q->body, q->body_len, q->body_len >= 2 ? q->body_len / 2 : 0, 0};
        curl_easy_setopt(h, CURLOPT_URL, og_buf_cstr(&url));
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->cerr);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, s->timeout_ms < 10000 ? s->timeout_ms : 10000L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, s->timeout_ms);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        if (s->loopback) curl_easy_setopt(h, CURLOPT_PROXY, ""); /* never via a proxy */
        if (strcmp(q->method, "PUT") == 0) {
            curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
            curl_easy_setopt(h, CURLOPT_READDATA, &up);
            curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->body_len);
        } else if (strcmp(q->method, "HEAD") == 0) {
            curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
            curl_easy_setopt(h, CURLOPT_FILETIME, 1L);
        } else if (strcmp(q->method, "GET") != 0) {
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, q->method);
        }
        /* crash point: the request is signed and ready, nothing is sent yet */
        if (strcmp(q->method, "PUT") == 0) og_fault_point("store.put.after_write");
        r->cc = curl_easy_perform(h);
        if (r->cc == CURLE_OK) {
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
            curl_off_t cl = -1;
            if (curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK) r->content_length = cl;
            curl_off_t ft = -1;
            if (strcmp(q->method, "HEAD") == 0 && curl_easy_getinfo(h, CURLINFO_FILETIME_T, &ft) == CURLE_OK)
                r->filetime = ft;
        } else if (r->cc == CURLE_WRITE_ERROR && r->body.len == 0 && !r->cerr[0]) {
            snprintf(r->cerr, sizeof r->cerr, "out of memory buffering the response");
        }
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
        curl_easy_setopt(h, CURLOPT_FILETIME, 0L);
        pool_give(s, h);
    }
    curl_slist_free_all(hl);
    /* the Authorization value is not secret (the signature is per request) but wipe it anyway */
    if (auth.data) memset(auth.data, 0, auth.cap);
    og_buf_free(&auth);
    og_buf_free(&hbuf);
    og_buf_free(&path);
    og_buf_free(&url);
    return st;
}

static int retryable(const s3_resp *r)
{
    if (r->status == 0) return 1; /* transport error or timeout */
    return r->status >= 500 || r->status == 429;
}

/* No request was sent at all (so a put_if_absent certainly did not happen). */
static int never_sent(const s3_resp *r)
{
    return r->status == 0 && (r->cc == CURLE_COULDNT_CONNECT || r->cc == CURLE_COULDNT_RESOLVE_HOST ||
                              r->cc == CURLE_URL_MALFORMAT || r->cc == CURLE_UNSUPPORTED_PROTOCOL);
}

/* Sends with bounded retries on transport errors, 5xx and 429. */
static og_status send_retry(s3_impl *s, const s3_req *q, s3_resp *r)
{
    for (int attempt = 1;; attempt++) {
        OG_TRY(send_once(s, q, r));
        if (!retryable(r) || attempt >= s->max_attempts) return OG_OK;
        if (r->cc == CURLE_URL_MALFORMAT || r->cc == CURLE_UNSUPPORTED_PROTOCOL) return OG_OK;
        backoff(s, attempt);
    }
}

/* The typed error for a final, unsuccessful response.  `what` is "get", "put", ...; `key` is
 * the caller's key (or prefix). */
static og_status fail(s3_impl *s, const s3_resp *r, const char *what, const char *key)
{
    char detail[256];
    /* no answer, or only 5xx, through every retry: the store is down (a typed, retryable
     * OG_ERR_UNAVAILABLE, which the server answers 503 + Retry-After), not a broken request */
    if (r->status == 0)
        return og_err(OG_ERR_UNAVAILABLE, "s3 %s \"%s\" in s3://%s/%s: no response after %d attempts: %s", what, key,
                      s->bucket, s->root, s->max_attempts, r->cerr[0] ? r->cerr : curl_easy_strerror(r->cc));
    error_detail(r, detail, sizeof detail);
    og_status code = OG_ERR_IO;
    if (r->status == 401 || r->status == 403) code = OG_ERR_AUTH;
    else if (r->status == 404) code = OG_ERR_NOT_FOUND;
    else if (r->status == 429 || (r->status == 503 && (error_code_is(r, "SlowDown") || r->body.len == 0)))
        code = OG_ERR_THROTTLED;
    else if (r->status == 412) code = OG_ERR_ALREADY_EXISTS;
    else if (r->status >= 500) code = OG_ERR_UNAVAILABLE;
    if (code == OG_ERR_NOT_FOUND && error_code_is(r, "NoSuchBucket"))
        return og_err(code, "s3 %s \"%s\": bucket \"%s\" does not exist", what, key, s->bucket);
    if (code == OG_ERR_NOT_FOUND)
        return og_err(code, "s3 %s \"%s\": not found in s3://%s/%s", what, key, s->bucket, s->root);
    if (code == OG_ERR_THROTTLED || retryable(r))
        return og_err(code, "s3 %s \"%s\": HTTP %ld%s (after %d attempts)", what, key, r->status, detail,
                      s->max_attempts);
    return og_err(code, "s3 %s \"%s\": HTTP %ld%s", what, key, r->status, detail);
}

/* root + key into a fresh buffer. */
static og_status full_key(const s3_impl *s, const char *key, og_buf *out)
{
    OG_TRY(og_buf_append_str(out, s->root));
    OG_TRY(og_buf_append_str(out, key));
    og_buf_cstr(out);
    return out->data ? OG_OK : og_err(OG_ERR_NOMEM, "s3: out of memory");
}

/* ---- the operations --------------------------------------------------------------------- */

static og_status s3_get_impl(og_store *st, const char *key, const char *range, og_bytes *out,
                             long *status_out)
{
    s3_impl *s = st->impl;
    og_buf k = OG_BUF_INIT;
    s3_resp r = {0};
    og_status rc = full_key(s, key, &k);
    s3_req q = {"GET", (const char *)k.data, NULL, NULL, 0, range, 0};
    if (rc == OG_OK) rc = send_retry(s, &q, &r);
    if (rc == OG_OK) {
        *status_out = r.status;
        if (r.status == 200 || r.status == 206) {
            *out = og_buf_take(&r.body);
        } else if (!(range && r.status == 416)) {
            rc = fail(s, &r, range ? "get_range" : "get", key);
        }
    }
    og_buf_free(&r.body);
    og_buf_free(&k);
    return rc;
}

static og_status s3_get(og_store *st, const char *key, og_bytes *out)
{
    long status = 0;
    return s3_get_impl(st, key, NULL, out, &status);
}

static og_status s3_stat(og_store *st, const char *key, uint64_t *size_out, int64_t *mtime_ms)
{
    s3_impl *s = st->impl;
    og_buf k = OG_BUF_INIT;
    s3_resp r = {0};
    og_status rc = full_key(s, key, &k);
    s3_req q = {"HEAD", (const char *)k.data, NULL, NULL, 0, NULL, 0};
    if (rc == OG_OK) rc = send_retry(s, &q, &r);
    if (rc == OG_OK) {
        if (r.status == 200) {
            if (r.content_length < 0)
                rc = og_err(OG_ERR_IO, "s3 head \"%s\": response has no Content-Length", key);
            else
                *size_out = (uint64_t)r.content_length;
            *mtime_ms = r.filetime > 0 ? (int64_t)r.filetime * 1000 : 0;
        } else {
            rc = fail(s, &r, "head", key);
        }
    }
    og_buf_free(&r.body);
    og_buf_free(&k);
    return rc;
}

static og_status s3_head(og_store *st, const char *key, uint64_t *size_out)
{
    int64_t mt;
    return s3_stat(st, key, size_out, &mt);
}

static og_status s3_get_range(og_store *st, const char *key, uint64_t off, uint64_t len, og_bytes *out)
{
    if (len == 0) { /* nothing to read, but a missing key must still be NOT_FOUND */
        uint64_t size;
        return s3_head(st, key, &size);
    }
    char range[64];
    uint64_t last = (len - 1 > UINT64_MAX - off) ? UINT64_MAX : off + len - 1;
    snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off, (unsigned long long)last);
    long status = 0;
    og_bytes b = {NULL, 0};
    OG_TRY(s3_get_impl(st, key, range, &b, &status));
    if (status == 416) { /* the offset is at or past the end: an empty result */
        og_bytes_free(&b);
        out->data = NULL;
        out->len = 0;
        return OG_OK;
    }
    if (status == 200) { /* the server ignored the Range header: cut the range out ourselves */
        size_t start = off < b.len ? (size_t)off : b.len;
        size_t n = (b.len - start < len) ? b.len - start : (size_t)len;
        if (start > 0 && n > 0) memmove(b.data, b.data + start, n);
        b.len = n;
    } else if (b.len > len) {
        b.len = (size_t)len;
    }
    *out = b;
    return OG_OK;
}

static og_status s3_put(og_store *st, const char *key, const void *data, size_t len)
{
    s3_impl *s = st->impl;
    og_buf k = OG_BUF_INIT;
    s3_resp r = {0};
    og_status rc = full_key(s, key, &k);
    s3_req q = {"PUT", (const char *)k.data, NULL, data, len, NULL, 0};
    if (rc == OG_OK) rc = send_retry(s, &q, &r);
    if (rc == OG_OK && (r.status < 200 || r.status > 299)) rc = fail(s, &r, "put", key);
    og_buf_free(&r.body);
    og_buf_free(&k);
    return rc;
}

/* After an unknown outcome: does `key` now hold exactly our bytes?  *verdict: 1 = ours,
 * 0 = someone else's, -1 = no object (the PUT did not happen). */
static og_status read_back(og_store *st, const char *key, const void *data, size_t len, int *verdict)
{
    og_bytes b = {NULL, 0};
    og_status rc = s3_get(st, key, &b);
    if (rc == OG_ERR_NOT_FOUND) {
        *verdict = -1;
        return OG_OK;
    }
    if (rc != OG_OK) return rc;
    *verdict = (b.len == len && (len == 0 || memcmp(b.data, data, len) == 0)) ? 1 : 0;
    og_bytes_free(&b);
    return OG_OK;
}

static og_status s3_put_if_absent(og_store *st, const char *key, const void *data, size_t len)
{
    s3_impl *s = st->impl;
    og_buf k = OG_BUF_INIT;
    s3_resp r = {0};
    og_status rc = full_key(s, key, &k);
    s3_req q = {"PUT", (const char *)k.data, NULL, data, len, NULL, 1};
    int ambiguous = 0; /* an earlier attempt may have been applied */
    for (int attempt = 1; rc == OG_OK; attempt++) {
        rc = send_once(s, &q, &r);
        if (rc != OG_OK) break;
        if (r.status >= 200 && r.status <= 299) break; /* won */
        if (r.status == 412) {
            if (!ambiguous) {
                rc = og_err(OG_ERR_ALREADY_EXISTS, "s3 put_if_absent \"%s\": already exists", key);
                break;
            }
            /* our own earlier attempt may be the object that is there now */
            int verdict = -1;
            rc = read_back(st, key, data, len, &verdict);
            if (rc == OG_OK && verdict != 1)
                rc = og_err(OG_ERR_ALREADY_EXISTS, "s3 put_if_absent \"%s\": already exists", key);
            break;
        }
        if (r.status == 409) { /* AWS: a concurrent conditional write is in progress: a loss */
            rc = og_err(OG_ERR_ALREADY_EXISTS,
                        "s3 put_if_absent \"%s\": lost to a concurrent conditional write (HTTP 409)", key);
            break;
        }
        if (!retryable(&r)) {
            rc = fail(s, &r, "put_if_absent", key);
            break;
        }
        if (!never_sent(&r)) {
            /* the outcome is unknown: resolve it by reading the key back */
            ambiguous = 1;
            int verdict = -2;
            if (attempt < s->max_attempts) backoff(s, attempt);
            og_status rb = read_back(st, key, data, len, &verdict);
            if (rb == OG_OK && verdict == 1) break; /* our PUT was applied: we won */
            if (rb == OG_OK && verdict == 0) {
                rc = og_err(OG_ERR_ALREADY_EXISTS, "s3 put_if_absent \"%s\": already exists", key);
                break;
            }
            if (rb != OG_OK && rb != OG_ERR_IO && rb != OG_ERR_THROTTLED && rb != OG_ERR_UNAVAILABLE) {
                rc = rb;
                break;
            }
            /* verdict -1 (not there: the conditional PUT may be sent again) or read failed */
            if (attempt >= s->max_attempts) {
                rc = og_err(OG_ERR_UNAVAILABLE,
                            "s3 put_if_absent \"%s\": outcome unknown after %d attempts (last: %s)", key,
                            attempt, r.status ? "an HTTP 5xx" : (r.cerr[0] ? r.cerr : curl_easy_strerror(r.cc)));
                break;
            }
            continue;
        }
        if (attempt >= s->max_attempts) {
            rc = fail(s, &r, "put_if_absent", key);
            break;
        }
        backoff(s, attempt);
    }
    og_buf_free(&r.body);
    og_buf_free(&k);
    return rc;
}

/* Parses one ListObjectsV2 page: appends keys (root stripped, filtered by the caller's prefix,
 * strictly increasing after *last), sets *truncated and the next continuation token. */
static og_status parse_list_page(s3_impl *s, const og_buf *xml, const char *fullprefix, size_t limit,
                                 og_keylist *out, og_buf *last, int *truncated, og_buf *token)
{
    const char *x = (const char *)xml->data;
    size_t n = xml->len;
    size_t len = 0;
    const char *t = x ? xml_find(x, n, "IsTruncated", &len) : NULL;
    if (!t) return og_err(OG_ERR_IO, "s3 list: response is not a ListObjectsV2 result");
    *truncated = (len == 4 && memcmp(t, "true", 4) == 0);
    og_buf_reset(token);
    const char *tok = xml_find(x, n, "NextContinuationToken", &len);
    if (tok) OG_TRY(xml_unescape(token, tok, len));
    og_buf_cstr(token);

    og_buf key = OG_BUF_INIT;
    size_t rootlen = strlen(s->root), fpl = strlen(fullprefix);
    const char *p = x, *end = x + n;
    og_status rc = OG_OK;
    while (rc == OG_OK && (limit == 0 || out->count < limit)) {
        size_t cl = 0;
        const char *c = xml_find(p, (size_t)(end - p), "Contents", &cl);
        if (!c) break;
        p = c + cl;
        size_t kl = 0;
        const char *k = xml_find(c, cl, "Key", &kl);
        if (!k) {
            rc = og_err(OG_ERR_IO, "s3 list: a <Contents> entry without <Key>");
            break;
        }
        og_buf_reset(&key);
        rc = xml_unescape(&key, k, kl);
        if (rc != OG_OK) break;
        const char *ks = og_buf_cstr(&key);
        if (!ks) {
            rc = og_err(OG_ERR_NOMEM, "s3 list: out of memory");
            break;
        }
        if (strlen(ks) != key.len) {
            rc = og_err(OG_ERR_IO, "s3 list: a key with a NUL byte");
            break;
        }
        if (key.len < fpl || memcmp(ks, fullprefix, fpl) != 0) continue; /* not ours */
        if (last->len && strcmp(ks, og_buf_cstr(last)) <= 0) {
            rc = og_err(OG_ERR_IO, "s3 list: the store returned keys out of order (\"%s\" after \"%s\")",
                        ks, og_buf_cstr(last));
            break;
        }
        og_buf_reset(last);
        rc = og_buf_append(last, ks, key.len);
        if (rc == OG_OK) rc = og_keylist_push(out, ks + rootlen, key.len - rootlen);
    }
    og_buf_free(&key);
    return rc;
}

static og_status s3_list(og_store *st, const char *prefix, const char *start_after, size_t limit,
                         og_keylist *out)
{
    s3_impl *s = st->impl;
    og_buf fp = OG_BUF_INIT, sa = OG_BUF_INIT, query = OG_BUF_INIT, token = OG_BUF_INIT, last = OG_BUF_INIT,
           prev_token = OG_BUF_INIT;
    s3_resp r = {0};
    og_status rc = full_key(s, prefix, &fp);
    if (rc == OG_OK && start_after) rc = full_key(s, start_after, &sa);
    int truncated = 1, first = 1;
    while (rc == OG_OK && truncated && (limit == 0 || out->count < limit)) {
        char maxkeys[24];
        size_t page = (size_t)s->list_page;
        size_t want = limit ? limit - out->count : page;
        snprintf(maxkeys, sizeof maxkeys, "%zu", want < page ? want : page);
        og_sigv4_param params[5];
        size_t np = 0;
        params[np++] = (og_sigv4_param){"list-type", "2"};
        params[np++] = (og_sigv4_param){"max-keys", maxkeys};
        params[np++] = (og_sigv4_param){"prefix", og_buf_cstr(&fp)};
        if (first && start_after) params[np++] = (og_sigv4_param){"start-after", og_buf_cstr(&sa)};
        if (!first) params[np++] = (og_sigv4_param){"continuation-token", og_buf_cstr(&token)};
        og_buf_reset(&query);
        rc = og_sigv4_query(&query, params, np);
        if (rc != OG_OK) break;
        og_buf_cstr(&query);
        s3_req q = {"GET", NULL, (const char *)query.data, NULL, 0, NULL, 0};
        rc = send_retry(s, &q, &r);
        if (rc != OG_OK) break;
        if (r.status != 200) {
            rc = fail(s, &r, "list", prefix);
            break;
        }
        og_buf_reset(&prev_token);
        if (!first) rc = og_buf_append(&prev_token, token.data, token.len);
        if (rc == OG_OK) rc = parse_list_page(s, &r.body, og_buf_cstr(&fp), limit, out, &last, &truncated, &token);
        if (rc != OG_OK) break;
        if (truncated && (token.len == 0 || (!first && prev_token.len == token.len &&
                                              memcmp(prev_token.data, token.data, token.len) == 0))) {
            rc = og_err(OG_ERR_IO, "s3 list \"%s\": truncated result without a new continuation token", prefix);
            break;
        }
        first = 0;
    }
    og_buf_free(&r.body);
    og_buf_free(&fp);
    og_buf_free(&sa);
    og_buf_free(&query);
    og_buf_free(&token);
    og_buf_free(&prev_token);
    og_buf_free(&last);
    return rc;
}

static og_status s3_delete(og_store *st, const char *key)
{
    s3_impl *s = st->impl;
    uint64_t size;
    OG_TRY(s3_head(st, key, &size)); /* S3 says 204 for a missing key; the contract says NOT_FOUND */
    og_buf k = OG_BUF_INIT;
    s3_resp r = {0};
    og_status rc = full_key(s, key, &k);
    s3_req q = {"DELETE", (const char *)k.data, NULL, NULL, 0, NULL, 0};
    if (rc == OG_OK) rc = send_retry(s, &q, &r);
    if (rc == OG_OK && r.status != 204 && r.status != 200) rc = fail(s, &r, "delete", key);
    og_buf_free(&r.body);
    og_buf_free(&k);
    return rc;
}

static void s3_free(s3_impl *s)
{
    if (!s) return;
    for (int i = 0; i < s->npool; i++) curl_easy_cleanup(s->pool[i]);
    pthread_mutex_destroy(&s->mu);
    free(s->scheme_host);
    free(s->host);
    free(s->bucket);
    free(s->root);
    free(s->region);
    free(s->access_key);
    if (s->secret_key) memset(s->secret_key, 0, strlen(s->secret_key));
    free(s->secret_key);
    if (s->session_token) memset(s->session_token, 0, strlen(s->session_token));
    free(s->session_token);
    free(s);
}

static void s3_close(og_store *st) { s3_free(st->impl); }

static const og_store_ops s3_ops = {
    .name = "s3",
    .get = s3_get,
    .get_range = s3_get_range,
    .head = s3_head,
    .stat = s3_stat,
    .put = s3_put,
    .put_if_absent = s3_put_if_absent,
    .list = s3_list,
    .delete = s3_delete,
    .map = NULL, /* store.c: get() into a heap mapping */
    .close = s3_close,
};

/* ---- open --------------------------------------------------------------------------- */

/* "s3://bucket[/prefix[/]]" → bucket and root ("" or "prefix/"); the normalised URI. */
static og_status parse_uri(const char *uri, s3_impl *s, og_buf *norm)
{
    const char *b = uri + 5;
    const char *slash = strchr(b, '/');
    size_t bl = slash ? (size_t)(slash - b) : strlen(b);
    if (bl < 3 || bl > 63)
        return og_err(OG_ERR_INVALID, "store \"%s\": an S3 bucket name has 3 to 63 characters", uri);
    for (size_t i = 0; i < bl; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
              (c >= 'A' && c <= 'Z')))
            return og_err(OG_ERR_INVALID, "store \"%s\": invalid character in the bucket name", uri);
    }
    s->bucket = dup_n(b, bl);
    const char *pre = slash ? slash + 1 : "";
    size_t pl = strlen(pre);
    while (pl > 0 && pre[pl - 1] == '/') pl--;
    if (!s->bucket) return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    if (pl > 0) {
        char *p = dup_n(pre, pl);
        if (!p) return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
        og_status kc = og_store_key_check(p);
        free(p);
        if (kc != OG_OK) return og_err_wrap(OG_ERR_INVALID, "store \"%s\": bad prefix", uri);
    }
    s->root = malloc(pl + 2);
    if (!s->root) return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    memcpy(s->root, pre, pl);
    if (pl) s->root[pl++] = '/';
    s->root[pl] = '\0';
    OG_TRY(og_buf_printf(norm, "s3://%s%s%.*s", s->bucket, pl ? "/" : "", pl ? (int)(pl - 1) : 0, s->root));
    og_buf_cstr(norm);
    return OG_OK;
}

/* AWS_ENDPOINT_URL → scheme_host and host; only "http(s)://host[:port][/]". */
static og_status parse_endpoint(const char *uri, const char *ep, s3_impl *s)
{
    const char *rest;
    if (strncmp(ep, "http://", 7) == 0) rest = ep + 7;
    else if (strncmp(ep, "https://", 8) == 0) rest = ep + 8;
    else
        return og_err(OG_ERR_INVALID, "store \"%s\": AWS_ENDPOINT_URL must start with http:// or https://", uri);
    size_t hl = strcspn(rest, "/?#");
    if (hl > 255) return og_err(OG_ERR_INVALID, "store \"%s\": AWS_ENDPOINT_URL host is too long", uri);
    if (hl == 0 || strchr(rest, '@'))
        return og_err(OG_ERR_INVALID, "store \"%s\": AWS_ENDPOINT_URL has no host (or has user info)", uri);
    const char *tail = rest + hl;
    if (!(tail[0] == '\0' || (tail[0] == '/' && tail[1] == '\0')))
        return og_err(OG_ERR_INVALID, "store \"%s\": AWS_ENDPOINT_URL must not have a path", uri);
    s->scheme_host = dup_n(ep, (size_t)(tail - ep));
    s->host = dup_n(rest, hl);
    if (!s->scheme_host || !s->host) return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    s->loopback = strncmp(s->host, "127.", 4) == 0 || strncmp(s->host, "localhost", 9) == 0 ||
                  strncmp(s->host, "[::1]", 5) == 0;
    return OG_OK;
}

og_status og_store_s3_open(og_store **out, const char *uri)
{
    *out = NULL;
    if (!uri || strncmp(uri, "s3://", 5) != 0) return og_err(OG_ERR_INVALID, "not an s3:// URI");
    og_status lst = og_curl_load(); /* libcurl is mapped only once an S3 store is opened */
    if (lst != OG_OK) return og_err_wrap(lst, "store \"%s\"", uri);

    const char *ep = env_nonempty("AWS_ENDPOINT_URL_S3");
    if (!ep) ep = env_nonempty("AWS_ENDPOINT_URL");
    const char *ak = env_nonempty("AWS_ACCESS_KEY_ID");
    const char *sk = env_nonempty("AWS_SECRET_ACCESS_KEY");
    const char *tok = env_nonempty("AWS_SESSION_TOKEN");
    const char *region = env_nonempty("AWS_REGION");
    if (!region) region = env_nonempty("AWS_DEFAULT_REGION");
    if (!region) region = "us-east-1";
    if (!ep)
        return og_err(OG_ERR_INVALID,
                      "store \"%s\": AWS_ENDPOINT_URL is not set (e.g. http://127.0.0.1:7480, or "
                      "https://s3.%s.amazonaws.com for AWS)", uri, region);
    if (!ak || !sk)
        return og_err(OG_ERR_AUTH, "store \"%s\": S3 credentials missing: set AWS_ACCESS_KEY_ID and "
                                   "AWS_SECRET_ACCESS_KEY", uri);

    s3_impl *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return og_err(OG_ERR_IO, "store \"%s\": pthread_mutex_init failed", uri);
    }
    og_buf norm = OG_BUF_INIT;
    og_status rc = parse_uri(uri, s, &norm);
    if (rc == OG_OK) rc = parse_endpoint(uri, ep, s);
    if (rc == OG_OK) {
        s->region = strdup(region);
        s->access_key = strdup(ak);
        s->secret_key = strdup(sk);
        s->session_token = tok ? strdup(tok) : NULL;
        if (!s->region || !s->access_key || !s->secret_key || (tok && !s->session_token))
            rc = og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    }
    const char *addr = env_nonempty("OG_S3_ADDRESSING");
    s->virtual_host = addr && strcmp(addr, "virtual") == 0;
    s->max_attempts = (int)env_long("OG_S3_MAX_ATTEMPTS", 5, 1, 100);
    s->retry_base_ms = env_long("OG_S3_RETRY_BASE_MS", 100, 1, 60000);
    s->timeout_ms = env_long("OG_S3_TIMEOUT_MS", 120000, 100, 3600000);
    s->list_page = env_long("OG_S3_LIST_PAGE", S3_LIST_PAGE, 1, S3_LIST_PAGE); /* tests force paging */
    s->rng = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)s;

    /* Check the bucket and the credentials now, so a misconfiguration fails at open with a
     * clear message rather than at the first write. */
    if (rc == OG_OK) {
        og_sigv4_param p[] = {{"list-type", "2"}, {"max-keys", "1"}, {"prefix", s->root}};
        og_buf query = OG_BUF_INIT;
        s3_resp r = {0};
        rc = og_sigv4_query(&query, p, 3);
        if (rc == OG_OK) {
            s3_req q = {"GET", NULL, og_buf_cstr(&query), NULL, 0, NULL, 0};
            rc = send_retry(s, &q, &r);
        }
        if (rc == OG_OK && r.status != 200) {
            rc = fail(s, &r, "open", norm.data ? (const char *)norm.data : uri);
            if (r.status == 404) rc = og_err(OG_ERR_NOT_FOUND, "store \"%s\": bucket \"%s\" does not exist at %s",
                                             uri, s->bucket, s->scheme_host);
        }
        og_buf_free(&query);
        og_buf_free(&r.body);
    }
    if (rc == OG_OK) rc = og_store_new(&s3_ops, (const char *)norm.data, 0, s, out);
    og_buf_free(&norm);
    if (rc != OG_OK) s3_free(s);
    return rc;
}
