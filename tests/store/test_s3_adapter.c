/*
 * test_s3_adapter.c — the S3 adapter's own behaviour, beyond the shared contract:
 *   - against a scripted in-process S3 stand-in on 127.0.0.1 (always runs): retries with
 *     back-off on 5xx / SlowDown / timeouts and their bounds, typed errors (auth, throttled,
 *     io, not_found), put_if_absent when its response is lost (resolved by reading the key
 *     back, never by a blind retry), 409 as a loss, ListObjectsV2 paging with continuation
 *     tokens and XML-escaped keys, the signed headers on the wire, configuration errors at
 *     open, and that the secret never shows up in a message;
 *   - against the real store when $OG_TEST_STORE_URI is an s3:// URI (run-s3-tests.sh): a
 *     wrong secret is OG_ERR_AUTH at open, a missing bucket OG_ERR_NOT_FOUND, and keys with
 *     characters that need URL and XML escaping round-trip through put, get and list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/s3_sigv4.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/id.h"

#define SECRET "fake-secret-never-in-messages"

/* ---- the stand-in server ------------------------------------------------------------- */

/* F_HANG: never answer on that connection (the client must time out and retry elsewhere) */
enum fault_kind { F_STATUS, F_APPLY_STATUS, F_APPLY_DROP, F_DROP, F_HANG };
typedef struct fault {
    const char *method; /* applies to the next request with this method */
    int kind;
    int status;
    const char *body;
} fault;

#define MAX_OBJ 64
#define MAX_FAULTS 16
#define MAX_CONN 8

typedef struct fake {
    int lfd;
    int port;
    pthread_t th;
    volatile int stop;
    pthread_mutex_t mu;
    char *keys[MAX_OBJ];
    og_buf vals[MAX_OBJ];
    int nobj;
    fault faults[MAX_FAULTS];
    int nfaults;
    int page_cap;  /* max keys per list page */
    int nrequests; /* requests seen */
    int naccepts;  /* connections accepted */
    char last_method[8];
    char last_target[1024];
    char last_headers[4096];
} fake;

static fake F;

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void url_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
}

/* Query parameter `name` of target (decoded) into out; 0 when absent. */
static int query_param(const char *target, const char *name, char *out, size_t cap)
{
    const char *q = strchr(target, '?');
    if (!q) return 0;
    size_t nl = strlen(name);
    for (const char *p = q + 1; *p;) {
        const char *amp = strchr(p, '&');
        size_t l = amp ? (size_t)(amp - p) : strlen(p);
        if (l > nl && p[nl] == '=' && memcmp(p, name, nl) == 0) {
            url_decode(p + nl + 1, l - nl - 1, out, cap);
            return 1;
        }
        p += l + (amp ? 1 : 0);
    }
    return 0;
}

static int find_obj(const char *key)
{
    for (int i = 0; i < F.nobj; i++)
        if (strcmp(F.keys[i], key) == 0) return i;
    return -1;
}

static void put_obj(const char *key, const void *data, size_t len)
{
    int i = find_obj(key);
    if (i < 0) {
        if (F.nobj == MAX_OBJ) return;
        i = F.nobj++;
        F.keys[i] = strdup(key);
        F.vals[i] = (og_buf)OG_BUF_INIT;
    }
    og_buf_reset(&F.vals[i]);
    og_buf_append(&F.vals[i], data, len);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void xml_escape(og_buf *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': og_buf_append_str(o, "&amp;"); break;
        case '<': og_buf_append_str(o, "&lt;"); break;
        case '>': og_buf_append_str(o, "&gt;"); break;
        case '"': og_buf_append_str(o, "&quot;"); break;
        case '\'': og_buf_append_str(o, "&#39;"); break;
        case '=': og_buf_append_str(o, "&#x3D;"); break;
        default: og_buf_append_byte(o, (uint8_t)*s);
        }
    }
}

static void send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0) return;
        c += w;
        n -= (size_t)w;
    }
}

static void respond(int fd, int status, const char *extra_headers, const void *body, size_t len, int head)
{
    char h[512];
    int n = snprintf(h, sizeof h, "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%s\r\n", status, len,
                     extra_headers ? extra_headers : "");
    send_all(fd, h, (size_t)n);
    if (!head && len) send_all(fd, body, len);
}

static void list_objects(int fd, const char *prefix_in, const char *target)
{
    char prefix[512] = "", sa[512] = "", tok[512] = "", mk[32] = "";
    query_param(target, "prefix", prefix, sizeof prefix);
    query_param(target, "start-after", sa, sizeof sa);
    int have_tok = query_param(target, "continuation-token", tok, sizeof tok);
    query_param(target, "max-keys", mk, sizeof mk);
    (void)prefix_in;
    int maxk = mk[0] ? atoi(mk) : 1000;
    if (F.page_cap && maxk > F.page_cap) maxk = F.page_cap;
    char *sorted[MAX_OBJ];
    for (int i = 0; i < F.nobj; i++) sorted[i] = F.keys[i];
    qsort(sorted, (size_t)F.nobj, sizeof sorted[0], cmp_str);
    const char *after = sa;
    char tokkey[512] = "";
    if (have_tok) { /* our tokens are "c=&" + the last key returned */
        if (strncmp(tok, "c=&", 3) != 0) {
            const char *e = "<Error><Code>InvalidArgument</Code></Error>";
            respond(fd, 400, NULL, e, strlen(e), 0);
            return;
        }
        snprintf(tokkey, sizeof tokkey, "%s", tok + 3);
        after = tokkey;
    }
    og_buf x = OG_BUF_INIT;
    og_buf_append_str(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3/\">"
                          "<Name>b</Name><Prefix>");
    xml_escape(&x, prefix);
    og_buf_append_str(&x, "</Prefix><KeyCount>0</KeyCount>");
    int n = 0, truncated = 0;
    const char *lastk = NULL;
    for (int i = 0; i < F.nobj; i++) {
        if (strncmp(sorted[i], prefix, strlen(prefix)) != 0) continue;
        if (after[0] && strcmp(sorted[i], after) <= 0) continue;
        if (n == maxk) {
            truncated = 1;
            break;
        }
        og_buf_append_str(&x, "<Contents><Key>");
        xml_escape(&x, sorted[i]);
        og_buf_printf(&x, "</Key><Size>%zu</Size></Contents>", F.vals[find_obj(sorted[i])].len);
        lastk = sorted[i];
        n++;
    }
    og_buf_printf(&x, "<IsTruncated>%s</IsTruncated>", truncated ? "true" : "false");
    if (truncated) {
        og_buf_append_str(&x, "<NextContinuationToken>");
        xml_escape(&x, "c=&");
        xml_escape(&x, lastk);
        og_buf_append_str(&x, "</NextContinuationToken>");
    }
    og_buf_append_str(&x, "</ListBucketResult>");
    respond(fd, 200, NULL, x.data, x.len, 0);
    og_buf_free(&x);
}

/* Serves one complete request on fd; returns 0 to close the connection, -1 to leave it
 * hanging (unanswered), 1 to keep it. */
static int serve(int fd, const char *req, size_t hlen, const uint8_t *body, size_t blen)
{
    char method[8] = "", target[1024] = "";
    sscanf(req, "%7s %1023s", method, target);
    pthread_mutex_lock(&F.mu);
    F.nrequests++;
    snprintf(F.last_method, sizeof F.last_method, "%s", method);
    snprintf(F.last_target, sizeof F.last_target, "%s", target);
    snprintf(F.last_headers, sizeof F.last_headers, "%.*s", (int)hlen, req);
    fault fl = {0};
    int have_fault = 0;
    for (int i = 0; i < F.nfaults; i++) {
        if (strcmp(F.faults[i].method, method) == 0) {
            fl = F.faults[i];
            memmove(&F.faults[i], &F.faults[i + 1], (size_t)(F.nfaults - i - 1) * sizeof fl);
            F.nfaults--;
            have_fault = 1;
            break;
        }
    }
    /* path: "/bucket[/key]" */
    char path[1024];
    const char *qm = strchr(target, '?');
    url_decode(target, qm ? (size_t)(qm - target) : strlen(target), path, sizeof path);
    const char *key;
    if (strstr(F.last_headers, "\nhost: fakebucket.")) /* virtual-host style: the path is the key */
        key = path[0] == '/' && path[1] ? path + 1 : NULL;
    else if ((key = strchr(path + 1, '/')) != NULL)
        key++;
    int keep = 1, head = strcmp(method, "HEAD") == 0;
    if (have_fault && fl.kind == F_HANG) {
        pthread_mutex_unlock(&F.mu);
        return -1;
    }
    if (have_fault && (fl.kind == F_STATUS || fl.kind == F_DROP)) {
        if (fl.kind == F_DROP) keep = 0;
        else respond(fd, fl.status, NULL, fl.body ? fl.body : "", fl.body ? strlen(fl.body) : 0, head);
        pthread_mutex_unlock(&F.mu);
        return keep;
    }
    int status = 200;
    og_buf out = OG_BUF_INIT;
    char extra[128] = "";
    if (!key) {
        if (strcmp(method, "GET") == 0) {
            list_objects(fd, NULL, target);
            pthread_mutex_unlock(&F.mu);
            return 1;
        }
        status = 405;
    } else if (strcmp(method, "PUT") == 0) {
        int inm = strstr(F.last_headers, "\nif-none-match: *") != NULL;
        if (inm && find_obj(key) >= 0) status = 412;
        else put_obj(key, body, blen);
    } else if (strcmp(method, "GET") == 0 || head) {
        int i = find_obj(key);
        if (i < 0) {
            status = 404;
            if (!head) og_buf_append_str(&out, "<Error><Code>NoSuchKey</Code><Message>nope</Message></Error>");
        } else {
            const og_buf *v = &F.vals[i];
            const char *rg = strstr(F.last_headers, "\nrange: bytes=");
            if (rg) {
                unsigned long long a = 0, b = 0;
                sscanf(rg + 14, "%llu-%llu", &a, &b);
                if (a >= v->len) {
                    status = 416;
                } else {
                    if (b >= v->len) b = v->len - 1;
                    status = 206;
                    og_buf_append(&out, v->data + a, (size_t)(b - a + 1));
                }
            } else {
                og_buf_append(&out, v->data, v->len);
            }
        }
    } else if (strcmp(method, "DELETE") == 0) {
        int i = find_obj(key);
        if (i >= 0) {
            free(F.keys[i]);
            og_buf_free(&F.vals[i]);
            F.keys[i] = F.keys[F.nobj - 1];
            F.vals[i] = F.vals[F.nobj - 1];
            F.nobj--;
        }
        status = 204;
    }
    if (have_fault && fl.kind == F_APPLY_DROP) {
        keep = 0;
    } else if (have_fault && fl.kind == F_APPLY_STATUS) {
        respond(fd, fl.status, NULL, fl.body ? fl.body : "", fl.body ? strlen(fl.body) : 0, head);
    } else {
        respond(fd, status, extra, out.data, out.len, head);
    }
    og_buf_free(&out);
    pthread_mutex_unlock(&F.mu);
    return keep;
}

typedef struct conn {
    int fd;
    og_buf in;
    int hung; /* never answered again; input is discarded until the client closes */
} conn;

static void *fake_main(void *arg)
{
    (void)arg;
    conn c[MAX_CONN];
    int nc = 0;
    while (!F.stop) {
        struct pollfd p[MAX_CONN + 1];
        p[0] = (struct pollfd){F.lfd, POLLIN, 0};
        for (int i = 0; i < nc; i++) p[i + 1] = (struct pollfd){c[i].fd, POLLIN, 0};
        if (poll(p, (nfds_t)nc + 1, 50) <= 0) continue;
        if ((p[0].revents & POLLIN) && nc < MAX_CONN) {
            int fd = accept(F.lfd, NULL, NULL);
            if (fd >= 0) {
                c[nc++] = (conn){fd, OG_BUF_INIT, 0};
                pthread_mutex_lock(&F.mu);
                F.naccepts++;
                pthread_mutex_unlock(&F.mu);
            }
        }
        for (int i = nc - 1; i >= 0; i--) {
            if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char tmp[65536];
            ssize_t r = recv(c[i].fd, tmp, sizeof tmp, 0);
            int keep = r > 0;
            if (keep && !c[i].hung) og_buf_append(&c[i].in, tmp, (size_t)r);
            while (keep && !c[i].hung) { /* serve every complete request buffered */
                const char *s = og_buf_cstr(&c[i].in);
                const char *e = strstr(s, "\r\n\r\n");
                if (!e) break;
                size_t hlen = (size_t)(e - s) + 4;
                /* header names lower-cased for easy matching */
                for (size_t k = 0; k < hlen; k++)
                    if (k > 0 && c[i].in.data[k - 1] == '\n') {
                        for (size_t m = k; m < hlen && c[i].in.data[m] != ':'; m++)
                            if (c[i].in.data[m] >= 'A' && c[i].in.data[m] <= 'Z') c[i].in.data[m] += 32;
                    }
                const char *cl = strstr(s, "\ncontent-length: ");
                size_t blen = (cl && cl < e) ? (size_t)strtoul(cl + 17, NULL, 10) : 0;
                if (c[i].in.len < hlen + blen) break;
                keep = serve(c[i].fd, s, hlen, c[i].in.data + hlen, blen);
                if (keep < 0) c[i].hung = 1;
                memmove(c[i].in.data, c[i].in.data + hlen + blen, c[i].in.len - hlen - blen);
                c[i].in.len -= hlen + blen;
            }
            if (!keep) {
                close(c[i].fd);
                og_buf_free(&c[i].in);
                c[i] = c[--nc];
            }
        }
    }
    for (int i = 0; i < nc; i++) {
        close(c[i].fd);
        og_buf_free(&c[i].in);
    }
    return NULL;
}

static void add_fault(const char *method, int kind, int status, const char *body)
{
    pthread_mutex_lock(&F.mu);
    F.faults[F.nfaults++] = (fault){method, kind, status, body};
    pthread_mutex_unlock(&F.mu);
}

static void add_hang(const char *method)
{
    pthread_mutex_lock(&F.mu);
    F.faults[F.nfaults++] = (fault){method, F_HANG, 0, NULL};
    pthread_mutex_unlock(&F.mu);
}

static int requests(void)
{
    pthread_mutex_lock(&F.mu);
    int n = F.nrequests;
    pthread_mutex_unlock(&F.mu);
    return n;
}

static char saved_env[6][512];
static int saved_set[6];
static const char *const env_names[6] = {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                         "AWS_REGION", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"};

static void env_save(void)
{
    for (int i = 0; i < 6; i++) {
        const char *v = getenv(env_names[i]);
        saved_set[i] = v != NULL;
        snprintf(saved_env[i], sizeof saved_env[i], "%s", v ? v : "");
    }
}

static void env_restore(void)
{
    for (int i = 0; i < 6; i++) {
        if (saved_set[i]) setenv(env_names[i], saved_env[i], 1);
        else unsetenv(env_names[i]);
    }
    unsetenv("OG_S3_MAX_ATTEMPTS");
    unsetenv("OG_S3_RETRY_BASE_MS");
    unsetenv("OG_S3_TIMEOUT_MS");
    unsetenv("OG_S3_ADDRESSING");
}

static void env_fake(void)
{
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", F.port);
    setenv("AWS_ENDPOINT_URL", ep, 1);
    unsetenv("AWS_ENDPOINT_URL_S3");
    setenv("AWS_ACCESS_KEY_ID", "FAKEKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
    setenv("AWS_REGION", "test-region-1", 1);
    unsetenv("AWS_SESSION_TOKEN");
    setenv("OG_S3_MAX_ATTEMPTS", "3", 1);
    setenv("OG_S3_RETRY_BASE_MS", "1", 1);
    setenv("OG_S3_TIMEOUT_MS", "5000", 1);
}

static int fake_setup(void **state)
{
    memset(&F, 0, sizeof F);
    pthread_mutex_init(&F.mu, NULL);
    F.lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (F.lfd < 0) return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(F.lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(F.lfd, 16) != 0) return -1;
    socklen_t al = sizeof a;
    getsockname(F.lfd, (struct sockaddr *)&a, &al);
    F.port = ntohs(a.sin_port);
    if (pthread_create(&F.th, NULL, fake_main, NULL) != 0) return -1;
    env_save();
    env_fake();
    og_store *st = NULL;
    if (og_store_open(&st, "s3://fakebucket/root") != OG_OK) {
        fprintf(stderr, "open: %s\n", og_error_message());
        return -1;
    }
    *state = st;
    return 0;
}

static int fake_teardown(void **state)
{
    og_store_close(*state);
    F.stop = 1;
    pthread_join(F.th, NULL);
    close(F.lfd);
    for (int i = 0; i < F.nobj; i++) {
        free(F.keys[i]);
        og_buf_free(&F.vals[i]);
    }
    pthread_mutex_destroy(&F.mu);
    env_restore();
    return 0;
}

static void assert_no_secret(void) { assert_null(strstr(og_error_message(), SECRET)); }

/* ---- tests against the stand-in ------------------------------------------------------ */

static void requests_are_signed_path_style_with_the_body_hash(void **state)
{
    og_store *st = *state;
    assert_string_equal(og_store_uri(st), "s3://fakebucket/root");
    assert_int_equal(og_store_is_local(st), 0);
    assert_int_equal(og_store_put(st, "a b/c+d", "hello", 5), OG_OK);
    assert_string_equal(F.last_method, "PUT");
    assert_string_equal(F.last_target, "/fakebucket/root/a%20b/c%2Bd");
    char hash[65], want[128];
    og_sigv4_sha256_hex("hello", 5, hash);
    snprintf(want, sizeof want, "\nx-amz-content-sha256: %s\r\n", hash);
    assert_non_null(strstr(F.last_headers, want));
    assert_non_null(strstr(F.last_headers, "\nauthorization: AWS4-HMAC-SHA256 Credential=FAKEKEY/"));
    assert_non_null(strstr(F.last_headers, "/test-region-1/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,"));
    assert_null(strstr(F.last_headers, SECRET));
    assert_null(strstr(F.last_headers, "if-none-match"));
    assert_int_equal(og_store_put_if_absent(st, "x", "1", 1), OG_OK);
    assert_non_null(strstr(F.last_headers, "\nif-none-match: *\r\n"));
    assert_non_null(strstr(F.last_headers, "SignedHeaders=host;if-none-match;x-amz-content-sha256;x-amz-date,"));
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(st, "a b/c+d", &b), OG_OK);
    assert_int_equal(b.len, 5);
    assert_memory_equal(b.data, "hello", 5);
    og_bytes_free(&b);
    assert_non_null(strstr(F.last_headers, "\nx-amz-content-sha256: " OG_SIGV4_EMPTY_SHA256 "\r\n"));
}

static void a_session_token_is_sent_and_signed(void **state)
{
    (void)state;
    setenv("AWS_SESSION_TOKEN", "tok/with+chars==", 1);
    og_store *st = NULL;
    og_status s = og_store_open(&st, "s3://fakebucket");
    unsetenv("AWS_SESSION_TOKEN");
    if (s != OG_OK) fail_msg("open: %s", og_error_message());
    assert_int_equal(og_store_put(st, "t", "v", 1), OG_OK);
    assert_non_null(strstr(F.last_headers, "\nx-amz-security-token: tok/with+chars==\r\n"));
    assert_non_null(strstr(F.last_headers, "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"));
    og_store_close(st);
}

static void sequential_requests_reuse_one_connection(void **state)
{
    og_store *st = *state;
    int before = F.naccepts;
    for (int i = 0; i < 20; i++) assert_int_equal(og_store_put(st, "k", "v", 1), OG_OK);
    uint64_t sz;
    for (int i = 0; i < 20; i++) assert_int_equal(og_store_head(st, "k", &sz), OG_OK);
    pthread_mutex_lock(&F.mu);
    int accepts = F.naccepts - before;
    pthread_mutex_unlock(&F.mu);
    assert_true(accepts <= 1);
}

static void virtual_host_addressing_puts_the_bucket_in_the_host(void **state)
{
    (void)state;
    char ep[64];
    snprintf(ep, sizeof ep, "http://localhost:%d", F.port); /* libcurl resolves *.localhost locally */
    setenv("AWS_ENDPOINT_URL", ep, 1);
    setenv("OG_S3_ADDRESSING", "virtual", 1);
    og_store *st = NULL;
    og_status s = og_store_open(&st, "s3://fakebucket/vroot");
    unsetenv("OG_S3_ADDRESSING");
    env_fake();
    if (s != OG_OK) fail_msg("open: %s", og_error_message());
    assert_int_equal(og_store_put(st, "a/b", "vv", 2), OG_OK);
    assert_string_equal(F.last_target, "/vroot/a/b");
    char host[64];
    snprintf(host, sizeof host, "\nhost: fakebucket.localhost:%d\r\n", F.port);
    assert_non_null(strstr(F.last_headers, host));
    og_keylist l;
    assert_int_equal(og_store_list(st, "a/", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.keys[0], "a/b");
    og_keylist_free(&l);
    og_store_close(st);
}

static void ranges_past_the_end_are_empty_and_missing_keys_not_found(void **state)
{
    og_store *st = *state;
    assert_int_equal(og_store_put(st, "r", "0123456789", 10), OG_OK);
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get_range(st, "r", 2, 3, &b), OG_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "234", 3);
    assert_non_null(strstr(F.last_headers, "\nrange: bytes=2-4\r\n"));
    og_bytes_free(&b);
    assert_int_equal(og_store_get_range(st, "r", 8, 100, &b), OG_OK);
    assert_int_equal(b.len, 2);
    og_bytes_free(&b);
    assert_int_equal(og_store_get_range(st, "r", 10, 5, &b), OG_OK); /* 416 */
    assert_int_equal(b.len, 0);
    assert_int_equal(og_store_get_range(st, "r", UINT64_MAX - 1, UINT64_MAX, &b), OG_OK);
    assert_int_equal(b.len, 0);
    assert_int_equal(og_store_get_range(st, "nope", 0, 0, &b), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_get_range(st, "nope", 0, 4, &b), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "nope"));
    uint64_t sz = 0;
    assert_int_equal(og_store_head(st, "r", &sz), OG_OK);
    assert_int_equal(sz, 10);
    int before = requests();
    assert_int_equal(og_store_delete(st, "nope"), OG_ERR_NOT_FOUND); /* HEAD first: no DELETE sent */
    assert_int_equal(requests(), before + 1);
    assert_int_equal(og_store_delete(st, "r"), OG_OK);
    assert_int_equal(og_store_head(st, "r", &sz), OG_ERR_NOT_FOUND);
}

static void list_pages_with_tokens_and_unescapes_keys(void **state)
{
    og_store *st = *state;
    const char *keys[] = {"l/a&b", "l/a<b>", "l/c'd\"e", "l/f=g", "l/h i", "l/j%k", "l/\xc3\xa9", "m/other"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_int_equal(og_store_put(st, keys[i], "v", 1), OG_OK);
    F.page_cap = 2; /* forces four pages for the seven l/ keys */
    og_keylist l;
    assert_int_equal(og_store_list(st, "l/", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 7);
    const char *want[] = {"l/a&b", "l/a<b>", "l/c'd\"e", "l/f=g", "l/h i", "l/j%k", "l/\xc3\xa9"};
    for (size_t i = 0; i < 7; i++) assert_string_equal(l.keys[i], want[i]);
    og_keylist_free(&l);
    assert_int_equal(og_store_list(st, "l/", "l/c'd\"e", 3, &l), OG_OK);
    assert_int_equal(l.count, 3);
    assert_string_equal(l.keys[0], "l/f=g");
    assert_string_equal(l.keys[2], "l/j%k");
    og_keylist_free(&l);
    assert_int_equal(og_store_list(st, "", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 8);
    og_keylist_free(&l);
}

static void transient_errors_are_retried_within_the_bound(void **state)
{
    og_store *st = *state;
    assert_int_equal(og_store_put(st, "t", "abc", 3), OG_OK);
    const char *slow = "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
    add_fault("GET", F_STATUS, 503, slow);
    add_fault("GET", F_STATUS, 500, "<Error><Code>InternalError</Code></Error>");
    int before = requests();
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(st, "t", &b), OG_OK);
    assert_int_equal(requests(), before + 3);
    og_bytes_free(&b);

    for (int i = 0; i < 3; i++) add_fault("GET", F_STATUS, 503, slow);
    before = requests();
    assert_int_equal(og_store_get(st, "t", &b), OG_ERR_THROTTLED);
    assert_int_equal(requests(), before + 3); /* OG_S3_MAX_ATTEMPTS=3, then it stops */
    assert_non_null(strstr(og_error_message(), "SlowDown"));
    add_fault("GET", F_STATUS, 429, "");
    add_fault("GET", F_STATUS, 429, "");
    add_fault("GET", F_STATUS, 429, "");
    assert_int_equal(og_store_get(st, "t", &b), OG_ERR_THROTTLED);

    for (int i = 0; i < 3; i++) add_fault("PUT", F_STATUS, 500, "<Error><Code>InternalError</Code></Error>");
    assert_int_equal(og_store_put(st, "u", "x", 1), OG_ERR_UNAVAILABLE); /* 5xx throughout: down */
    assert_non_null(strstr(og_error_message(), "\"u\""));

    add_fault("HEAD", F_DROP, 0, NULL);
    uint64_t sz = 0;
    assert_int_equal(og_store_head(st, "t", &sz), OG_OK); /* a dropped connection is retried */
    assert_int_equal(sz, 3);

    /* an unanswered request: a timeout, then a retry on a fresh connection */
    setenv("OG_S3_TIMEOUT_MS", "300", 1);
    og_store *quick = NULL;
    assert_int_equal(og_store_open(&quick, "s3://fakebucket/root"), OG_OK);
    env_fake();
    add_hang("GET");
    assert_int_equal(og_store_get(quick, "t", &b), OG_OK);
    assert_int_equal(b.len, 3);
    og_bytes_free(&b);
    add_hang("PUT"); /* put_if_absent: the hung PUT is an unknown outcome, resolved by reading */
    assert_int_equal(og_store_put_if_absent(quick, "hung", "h", 1), OG_OK);
    og_store_close(quick);
}

static void auth_errors_are_typed_and_not_retried(void **state)
{
    og_store *st = *state;
    add_fault("GET", F_STATUS, 403,
              "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not "
              "match</Message></Error>");
    int before = requests();
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(st, "t", &b), OG_ERR_AUTH);
    assert_int_equal(requests(), before + 1);
    assert_non_null(strstr(og_error_message(), "SignatureDoesNotMatch"));
    assert_no_secret();
    add_fault("PUT", F_STATUS, 403, "<Error><Code>AccessDenied</Code></Error>");
    assert_int_equal(og_store_put_if_absent(st, "p", "x", 1), OG_ERR_AUTH);
    assert_no_secret();
}

static void put_if_absent_with_a_lost_response_reads_the_key_back(void **state)
{
    og_store *st = *state;
    /* applied, but the answer is a 500: reading back finds our bytes, so we won */
    add_fault("PUT", F_APPLY_STATUS, 500, "<Error><Code>InternalError</Code></Error>");
    int before = requests();
    assert_int_equal(og_store_put_if_absent(st, "c1", "mine", 4), OG_OK);
    assert_int_equal(requests(), before + 2); /* PUT, then GET — no second PUT */
    assert_string_equal(F.last_method, "GET");

    /* applied, then the connection drops before any answer */
    add_fault("PUT", F_APPLY_DROP, 0, NULL);
    assert_int_equal(og_store_put_if_absent(st, "c2", "mine", 4), OG_OK);

    /* not applied, connection dropped: the read-back finds nothing and the conditional PUT is
     * sent again */
    add_fault("PUT", F_DROP, 0, NULL);
    before = requests();
    assert_int_equal(og_store_put_if_absent(st, "c3", "mine", 4), OG_OK);
    assert_int_equal(requests(), before + 3); /* PUT (lost), GET (404), PUT */

    /* someone else holds the key and our PUT's answer is lost: a loss, not a blind retry */
    assert_int_equal(og_store_put(st, "c4", "theirs", 6), OG_OK);
    add_fault("PUT", F_STATUS, 503, "");
    assert_int_equal(og_store_put_if_absent(st, "c4", "mine", 4), OG_ERR_ALREADY_EXISTS);

    /* the first answer is lost and the read-back fails; the key then holds our bytes (as if
     * the first attempt had landed late): the next attempt sees 412 and the read-back says ours */
    assert_int_equal(og_store_put(st, "c5", "mine", 4), OG_OK);
    add_fault("PUT", F_DROP, 0, NULL);
    add_fault("GET", F_STATUS, 500, ""); /* the read-back fails too (all its attempts) */
    add_fault("GET", F_STATUS, 500, "");
    add_fault("GET", F_STATUS, 500, "");
    assert_int_equal(og_store_put_if_absent(st, "c5", "mine", 4), OG_OK);

    /* outcomes never resolved: typed IO naming the key, bounded */
    for (int i = 0; i < 3; i++) add_fault("PUT", F_STATUS, 500, "");
    before = requests();
    assert_int_equal(og_store_put_if_absent(st, "c6", "mine", 4), OG_ERR_UNAVAILABLE);
    assert_non_null(strstr(og_error_message(), "c6"));
    assert_true(requests() - before <= 6);

    /* plain outcomes */
    assert_int_equal(og_store_put_if_absent(st, "c1", "again", 5), OG_ERR_ALREADY_EXISTS);
    assert_non_null(strstr(og_error_message(), "c1"));
    add_fault("PUT", F_STATUS, 409, "<Error><Code>ConditionalRequestConflict</Code></Error>");
    assert_int_equal(og_store_put_if_absent(st, "c7", "mine", 4), OG_ERR_ALREADY_EXISTS);
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(st, "c1", &b), OG_OK);
    assert_memory_equal(b.data, "mine", 4);
    og_bytes_free(&b);
}

static void open_reports_configuration_errors_clearly(void **state)
{
    (void)state;
    og_store *st = NULL;
    unsetenv("AWS_ENDPOINT_URL");
    assert_int_equal(og_store_open(&st, "s3://fakebucket"), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "AWS_ENDPOINT_URL"));
    env_fake();
    unsetenv("AWS_SECRET_ACCESS_KEY");
    assert_int_equal(og_store_open(&st, "s3://fakebucket"), OG_ERR_AUTH);
    assert_non_null(strstr(og_error_message(), "AWS_SECRET_ACCESS_KEY"));
    env_fake();
    setenv("AWS_ENDPOINT_URL", "ftp://127.0.0.1:1", 1);
    assert_int_equal(og_store_open(&st, "s3://fakebucket"), OG_ERR_INVALID);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1/some/path", 1);
    assert_int_equal(og_store_open(&st, "s3://fakebucket"), OG_ERR_INVALID);
    env_fake();
    assert_int_equal(og_store_open(&st, "s3://x"), OG_ERR_INVALID);
    assert_int_equal(og_store_open(&st, "s3://bad*bucket/p"), OG_ERR_INVALID);
    assert_int_equal(og_store_open(&st, "s3://fakebucket/a//b"), OG_ERR_INVALID);
    assert_int_equal(og_store_open(&st, "s3://fakebucket/../b"), OG_ERR_INVALID);
    assert_null(st);
    add_fault("GET", F_STATUS, 404, "<Error><Code>NoSuchBucket</Code></Error>");
    assert_int_equal(og_store_open(&st, "s3://fakebucket"), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "fakebucket"));
    add_fault("GET", F_STATUS, 403, "<Error><Code>InvalidAccessKeyId</Code></Error>");
    assert_int_equal(og_store_open(&st, "s3://fakebucket"), OG_ERR_AUTH);
    assert_no_secret();
    assert_int_equal(og_store_open(&st, "s3://fakebucket/p/q/"), OG_OK);
    assert_string_equal(og_store_uri(st), "s3://fakebucket/p/q");
    og_store_close(st);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1); /* nothing listens there */
    setenv("OG_S3_MAX_ATTEMPTS", "2", 1);
    assert_int_equal(og_store_open(&st, "s3://fakebucket"), OG_ERR_UNAVAILABLE);
    assert_no_secret();
    env_fake();
}

/* ---- tests against the real store (OG_TEST_STORE_URI=s3://…) -------------------------- */

static int real_uri(char *out, size_t cap)
{
    const char *u = getenv("OG_TEST_STORE_URI");
    if (!u || strncmp(u, "s3://", 5) != 0) return 0;
    snprintf(out, cap, "%s", u);
    return 1;
}

static void real_store_rejects_a_wrong_secret_and_a_missing_bucket(void **state)
{
    (void)state;
    char uri[512];
    if (!real_uri(uri, sizeof uri)) skip();
    env_save();
    og_store *st = NULL;
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
    assert_int_equal(og_store_open(&st, uri), OG_ERR_AUTH);
    assert_no_secret();
    env_restore();
    assert_int_equal(og_store_open(&st, "s3://og-no-such-bucket-here/x"), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "og-no-such-bucket-here"));
    env_restore();
}

static void real_store_round_trips_keys_that_need_escaping(void **state)
{
    (void)state;
    char uri[512];
    if (!real_uri(uri, sizeof uri)) skip();
    og_store *st = NULL;
    setenv("OG_S3_LIST_PAGE", "3", 1); /* the listing below then takes four pages */
    assert_int_equal(og_store_open(&st, uri), OG_OK);
    unsetenv("OG_S3_LIST_PAGE");
    char u[OG_UUID_LEN + 1], ns[64];
    assert_int_equal(og_uuid_new(u), OG_OK);
    snprintf(ns, sizeof ns, "esc-%s/", u);
    const char *names[] = {"a b", "a&b", "a+b", "a<b>", "a=b?c", "a%20b", "q\"'", "\xc3\xa9t\xc3\xa9", "~tilde",
                           "semi;colon", "hash#x"};
    size_t n = sizeof names / sizeof names[0];
    char key[128];
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s%s", ns, names[i]);
        assert_int_equal(og_store_put_if_absent(st, key, names[i], strlen(names[i])), OG_OK);
        og_bytes b = {NULL, 0};
        assert_int_equal(og_store_get(st, key, &b), OG_OK);
        assert_int_equal(b.len, strlen(names[i]));
        assert_memory_equal(b.data, names[i], b.len);
        og_bytes_free(&b);
    }
    og_keylist l;
    assert_int_equal(og_store_list(st, ns, NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, n);
    for (size_t i = 0; i < l.count; i++) {
        int found = 0;
        for (size_t j = 0; j < n; j++) {
            snprintf(key, sizeof key, "%s%s", ns, names[j]);
            if (strcmp(key, l.keys[i]) == 0) found = 1;
        }
        if (!found) fail_msg("unexpected listed key \"%s\"", l.keys[i]);
        if (i > 0) assert_true(strcmp(l.keys[i - 1], l.keys[i]) < 0);
    }
    for (size_t i = 0; i < l.count; i++) assert_int_equal(og_store_delete(st, l.keys[i]), OG_OK);
    og_keylist_free(&l);
    og_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(requests_are_signed_path_style_with_the_body_hash, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(a_session_token_is_sent_and_signed, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(sequential_requests_reuse_one_connection, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(virtual_host_addressing_puts_the_bucket_in_the_host, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(ranges_past_the_end_are_empty_and_missing_keys_not_found, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(list_pages_with_tokens_and_unescapes_keys, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(transient_errors_are_retried_within_the_bound, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(auth_errors_are_typed_and_not_retried, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(put_if_absent_with_a_lost_response_reads_the_key_back, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(open_reports_configuration_errors_clearly, fake_setup, fake_teardown),
        cmocka_unit_test(real_store_rejects_a_wrong_secret_and_a_missing_bucket),
        cmocka_unit_test(real_store_round_trips_keys_that_need_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
