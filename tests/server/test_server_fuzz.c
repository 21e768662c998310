/*
 * test_server_fuzz.c — a bounded random client against a real server process: malformed and
 * random request lines, headers and bodies, mutated from valid requests, over raw sockets.
 * Every answer must be a typed status below 500 (or a closed connection for bytes that are
 * not HTTP), the server must stay up and answer /healthz, and its memory must stay flat.
 * Seeded (OG_FUZZ_SEED) and bounded (OG_SERVER_FUZZ_REQUESTS, default 1000).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], graph[128], logpath[128];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvfuzz-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    const char *seed = getenv("OG_FUZZ_SEED");
    if (seed) rng = strtoull(seed, NULL, 10) | 1;
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

static const char *methods[] = {"GET", "POST", "DELETE", "PUT", "HEAD", "PATCH", "OPTIONS", "G\x01T", "", "POST POST"};
static const char *paths[] = {"/healthz", "/graphs", "/openapi.json", "/graphs/g1/snapshot", "/graphs/g1/query",
                              "/graphs/g1/mutate", "/graphs/g1/mutate/if-graph-commit", "/graphs/g1/load/ndjson",
                              "/graphs/g1/load", "/graphs/g1/export", "/graphs/g1/branches", "/graphs/g1/branches/merge",
                              "/graphs/g1/branches/x", "/graphs/g1/commits", "/graphs/g1/commits/abc",
                              "/graphs/g1/schema", "/graphs/g1/schema/plan", "/graphs/%zz/query", "/graphs//query",
                              "/graphs/g1/../g1/query", "*", "/graphs/g1/snapshot?branch=%00", "/a/b/c/d/e/f/g/h/i/j",
                              "/graphs/g1/lint", "/graphs/g1/diff?from=main~1&to=main", "/graphs/g1/diff?from=%ff&to="};
static const char *bodies[] = {"{}", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}",
                               "{\"query\":1}", "{\"query\":\"query q( {\"}", "[1,2", "\xff\xfe\x00",
                               "{\"type\":\"Person\",\"data\":{\"name\":\"F\"}}\n", "{\"name\":\"\"}",
                               "{\"source\":\"nope\"}", "{\"schema_source\":\"node {\"}", "{\"type_names\":[1]}"};
static const char *ctypes[] = {"application/json", "application/x-ndjson", "text/plain", "", "application/json; x=\"",
                               "APPLICATION/JSON"};

static char host_hdr[64]; /* the server's address: the Host a request must name to reach a route */

/* Builds one request: valid bones, then random damage. */
static size_t build(char *buf, size_t cap)
{
    const char *m = methods[rnd() % 10 < 8 ? rnd() % 3 : rnd() % (sizeof methods / sizeof *methods)];
    const char *p = paths[rnd() % (sizeof paths / sizeof *paths)];
    const char *b = bodies[rnd() % (sizeof bodies / sizeof *bodies)];
    size_t blen = strlen(b);
    if (b[0] == '\xff') blen = 3;
    int n = snprintf(buf, cap, "%s %s HTTP/1.%d\r\nHost: %s\r\nContent-Type: %s\r\n", m, p, rnd() % 4 ? 1 : 0, host_hdr,
                     ctypes[rnd() % (sizeof ctypes / sizeof *ctypes)]);
    size_t len = (size_t)n;
    switch (rnd() % 6) {
    case 0: /* a body shorter than announced: the server waits for it until its timeout (rare: slow) */
        len += (size_t)snprintf(buf + len, cap - len, "Content-Length: %zu\r\n", blen + (rnd() % 10 == 0));
        break;
    case 1: len += (size_t)snprintf(buf + len, cap - len, "Content-Length: -%u\r\n", rnd() % 10); break;
    case 2: len += (size_t)snprintf(buf + len, cap - len, "Authorization: Bearer %08x\r\n", rnd()); break;
    case 3: len += (size_t)snprintf(buf + len, cap - len, "Omnigraph-If-Graph-Commit: W/\"%u\"\r\n", rnd()); break;
    default: len += (size_t)snprintf(buf + len, cap - len, "Content-Length: %zu\r\n", blen); break;
    }
    if (rnd() % 8 == 0) { /* a long header */
        size_t k = 100 + rnd() % 20000;
        len += (size_t)snprintf(buf + len, cap - len, "X-Long: ");
        for (size_t i = 0; i < k && len < cap - 256; i++) buf[len++] = (char)('a' + rnd() % 26);
        len += (size_t)snprintf(buf + len, cap - len, "\r\n");
    }
    len += (size_t)snprintf(buf + len, cap - len, "Connection: close\r\n\r\n");
    if (len + blen < cap) {
        memcpy(buf + len, b, blen);
        len += blen;
    }
    /* random byte damage */
    unsigned flips = rnd() % 4 == 0 ? 1 + rnd() % 6 : 0;
    for (unsigned i = 0; i < flips && len; i++) buf[rnd() % len] = (char)(rnd() & 0xff);
    return len;
}

/* Sends one request; returns the status, 0 when the connection closed without one. */
static int send_one(const srv *s, const char *req, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    char host[64];
    snprintf(host, sizeof host, "%s", s->addr);
    char *colon = strrchr(host, ':');
    *colon = 0;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    inet_pton(AF_INET, host, &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ssize_t w = send(fd, req, len, MSG_NOSIGNAL);
    (void)w;
    shutdown(fd, SHUT_WR);
    char resp[64] = {0};
    size_t got = 0;
    struct pollfd pfd = {fd, POLLIN, 0};
    while (got < sizeof resp - 1 && poll(&pfd, 1, 4000) > 0) {
        ssize_t r = recv(fd, resp + got, sizeof resp - 1 - got, 0);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got < 12 || strncmp(resp, "HTTP/1.", 7)) return 0;
    return atoi(resp + 9);
}

static long rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

static void test_random_requests(void **state)
{
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--timeout", "1", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    snprintf(host_hdr, sizeof host_hdr, "%s", s.addr);
    const char *env = getenv("OG_SERVER_FUZZ_REQUESTS");
    int total = env ? atoi(env) : 1000;
    char *buf = malloc(64 * 1024);
    int by_class[6] = {0};
    long rss_warm = 0;
    for (int i = 0; i < total; i++) {
        size_t len = build(buf, 64 * 1024);
        int st = send_one(&s, buf, len);
        /* 505 is libmicrohttpd's answer to a damaged HTTP version: typed, not a failure */
        if (st == 505) st = 400;
        if (st >= 500) {
            fwrite(buf, 1, len > 400 ? 400 : len, stderr);
            fprintf(stderr, "\n-> %d\n", st);
        }
        if (st >= 500) free(buf);
        assert_true(st < 500);
        by_class[st / 100]++;
        if (i == total / 4) rss_warm = rss_kb(s.pid);
        assert_true(srv_alive(&s));
    }
    free(buf);
    long rss_end = rss_kb(s.pid);
    fprintf(stderr, "statuses: closed %d, 2xx %d, 4xx %d; RSS after warm-up %ld KiB, at end %ld KiB\n", by_class[0],
            by_class[2], by_class[4], rss_warm, rss_end);
    assert_true(by_class[4] > total / 4);
    /* memory flat: no growth proportional to the requests after warm-up */
    assert_true(rss_end < rss_warm + 32 * 1024);
    http_resp r = get(&s, NULL, "/healthz");
    assert_int_equal(r.status, 200);
    http_free(&r);
    assert_int_equal(srv_stop(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_requests),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
