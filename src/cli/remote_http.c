/*
 * remote_http.c — one HTTP request from the CLI to omnigraph-server (remote.h).
 *
 * Why a file of its own: the served verbs need only "send this, give me the status and the
 * body", and keeping libcurl behind this one function keeps it out of every local verb —
 * libcurl is loaded on the first request (util/curl_dl.h), never at start.  The bearer token
 * goes into one header and nowhere else: no error message, echo or log line carries it.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/remote.h"
#include "util/curl_dl.h"

typedef struct sink_ctx {
    CURL *h;
    og_buf *body;
    FILE *sink;
    int failed;
} sink_ctx;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    sink_ctx *c = arg;
    size_t len = size * n;
    long status = 0;
    if (c->sink) curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
    if (c->sink && status == 200) { /* stream a success straight out (export) */
        if (fwrite(p, 1, len, c->sink) != len) c->failed = 1;
        return c->failed ? 0 : len;
    }
    if (c->body->len + len > (size_t)64 << 20) return 0; /* an answer past 64 MiB is not one of ours */
    return og_buf_append(c->body, p, len) == OG_OK ? len : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    og_buf *h = arg;
    size_t len = size * n;
    if (h->len + len > 65536) return len; /* keep the first 64 KiB: ours are a few lines */
    og_buf_append(h, p, len);
    return len;
}

void og_http_resp_free(og_http_resp *resp)
{
    og_buf_free(&resp->body);
    og_buf_free(&resp->headers);
}

int og_http_header(const og_http_resp *resp, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *line = (const char *)resp->headers.data; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (!strncasecmp(line, name, n) && line[n] == ':') {
            const char *v = line + n + 1;
            while (*v == ' ') v++;
            size_t len = nl ? (size_t)(nl - v) : strlen(v);
            while (len && (v[len - 1] == '\r' || v[len - 1] == ' ')) len--;
            if (len >= cap) len = cap - 1;
            memcpy(out, v, len);
            out[len] = 0;
            return 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

void og_http_escape(og_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
            ch == '.' || ch == '~')
            og_buf_append_byte(b, ch);
        else
            og_buf_printf(b, "%%%c%c", hex[ch >> 4], hex[ch & 15]);
    }
}

int og_http_request(const og_remote *r, const char *method, const char *path, const char *ctype, const char *body,
                    const char *upload, void *sink, og_http_resp *resp)
{
    memset(resp, 0, sizeof *resp);
    if (og_curl_load() != OG_OK) {
        snprintf(resp->error, sizeof resp->error, "%s", og_error_message());
        return -1;
    }
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(resp->error, sizeof resp->error, "cannot start an HTTP client");
        return -1;
    }
    og_buf url = OG_BUF_INIT;
    og_buf_printf(&url, "%s%s", r->url, path);
    struct curl_slist *hdrs = NULL;
    char auth[4200];
    if (r->token && *r->token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", r->token);
        hdrs = curl_slist_append(hdrs, auth);
        memset(auth, 0, sizeof auth); /* the copy in the list is libcurl's */
    }
    char ct[128];
    if (ctype) {
        snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
        hdrs = curl_slist_append(hdrs, ct);
    }
    if (r->header) hdrs = curl_slist_append(hdrs, r->header);
    hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
    FILE *in = NULL;
    sink_ctx ctx = {h, &resp->body, sink, 0};
    curl_easy_setopt(h, CURLOPT_URL, og_buf_cstr(&url));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ctx);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &resp->headers);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* a token is sent only to the server it names */
    curl_easy_setopt(h, CURLOPT_USERAGENT, "omnigraph-cli");
    if (upload) {
        struct stat st;
        in = fopen(upload, "rb");
        if (!in || fstat(fileno(in), &st) != 0) {
            snprintf(resp->error, sizeof resp->error, "cannot read %s", upload);
            if (in) fclose(in);
            curl_slist_free_all(hdrs);
            curl_easy_cleanup(h);
            og_buf_free(&url);
            return -1;
        }
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_READDATA, in);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)st.st_size);
    } else if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    }
    if (!strcmp(method, "HEAD")) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "GET") && strcmp(method, "POST")) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    else if (!strcmp(method, "POST") && !body && !upload) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
    }
    CURLcode rc = curl_easy_perform(h);
    int out = 0;
    if (rc != CURLE_OK && !(ctx.failed && rc == CURLE_WRITE_ERROR)) {
        /* libcurl's reason names the host and port, never the headers */
        snprintf(resp->error, sizeof resp->error, "cannot reach %s: %s", r->url, curl_easy_strerror(rc));
        out = -1;
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
        if (ctx.failed) {
            snprintf(resp->error, sizeof resp->error, "cannot write the answer to stdout");
            resp->status = 0;
            out = -1;
        }
    }
    og_buf_cstr(&resp->body);
    og_buf_cstr(&resp->headers);
    if (in) fclose(in);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    og_buf_free(&url);
    return out;
}
