/*
 * test_server_guard.c — what every request passes before a handler (src/server/guard.c,
 * docs/server.md "Host and Origin", "Request framing"): DNS-rebinding protection on every
 * route in --unauthenticated mode (a foreign Host commits nothing; "127.0.0.1.attacker.example"
 * and "Origin: http://127.1.2.3.evil.com" are names, not loopback addresses; the wrong port is
 * refused; --allowed-host adds a name), and strict framing (two different Content-Lengths,
 * Content-Length with Transfer-Encoding, no Host on HTTP/1.1, a NUL in a bearer token or a
 * query parameter, two Authorization headers: 400 and the connection closed; a declared
 * length past the limit: 413 at once).  The pure functions are checked directly too.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/guard.h"
#include "server_client.h"
#include "raw_http.h"

static char dir[64], graph[128], logpath[128];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-srvguard-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    curl_global_init(CURL_GLOBAL_ALL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

/* ---- the pure functions ---- */

static void test_authority_parsing_is_exact(void **state)
{
    (void)state;
    char h[256];
    int port;
    assert_true(og_guard_authority("LocalHost:8080", 14, h, sizeof h, &port));
    assert_string_equal(h, "localhost");
    assert_int_equal(port, 8080);
    assert_true(og_guard_authority("[::1]:80", 8, h, sizeof h, &port));
    assert_string_equal(h, "[::1]");
    assert_true(og_guard_authority("example.org", 11, h, sizeof h, &port));
    assert_int_equal(port, -1);
    assert_false(og_guard_authority("a:", 2, h, sizeof h, &port));
    assert_false(og_guard_authority("a:99999", 7, h, sizeof h, &port));
    assert_false(og_guard_authority("a:08080", 7, h, sizeof h, &port)); /* found by fuzz_server_head */
    assert_false(og_guard_authority("a b:1", 5, h, sizeof h, &port));
    assert_false(og_guard_authority("a..b", 4, h, sizeof h, &port));
    assert_false(og_guard_authority("[::1", 4, h, sizeof h, &port));
    assert_false(og_guard_authority("[zz]:1", 6, h, sizeof h, &port));
    assert_false(og_guard_authority("u@h:1", 5, h, sizeof h, &port));
    assert_true(og_guard_ip_literal("127.0.0.1"));
    assert_true(og_guard_ip_literal("[::1]"));
    assert_false(og_guard_ip_literal("127.0.0.1.attacker.example"));
    assert_false(og_guard_ip_literal("127.0.0"));
    assert_false(og_guard_ip_literal("127.0.0.01"));
    assert_false(og_guard_ip_literal("127.0.0.256"));

    og_host_allow lo = {"127.0.0.1", 8080, NULL, 0};
    assert_true(og_guard_host_allowed(&lo, "127.0.0.1:8080"));
    assert_true(og_guard_host_allowed(&lo, "localhost:8080"));
    assert_true(og_guard_host_allowed(&lo, "[::1]:8080"));
    assert_false(og_guard_host_allowed(&lo, "127.0.0.1:8081")); /* another port: another server */
    assert_false(og_guard_host_allowed(&lo, "127.0.0.1"));      /* port 80 */
    assert_false(og_guard_host_allowed(&lo, "127.0.0.1.attacker.example:8080"));
    assert_false(og_guard_host_allowed(&lo, "127.1.2.3:8080"));
    assert_false(og_guard_host_allowed(&lo, "attacker.example:8080"));
    assert_false(og_guard_host_allowed(&lo, ""));
    assert_true(og_guard_origin_allowed(&lo, "http://localhost:6274")); /* a local tool's page (MCP Inspector) */
    assert_true(og_guard_origin_allowed(&lo, "http://127.0.0.1:8080"));
    assert_false(og_guard_origin_allowed(&lo, "http://127.1.2.3.evil.com"));
    assert_false(og_guard_origin_allowed(&lo, "http://localhost.evil.com"));
    assert_false(og_guard_origin_allowed(&lo, "null"));
    assert_false(og_guard_origin_allowed(&lo, "file://localhost"));
    assert_false(og_guard_origin_allowed(&lo, "http://localhost:8080/path"));

    og_host_allow any = {"0.0.0.0", 8080, NULL, 0};
    assert_true(og_guard_host_allowed(&any, "10.1.2.3:8080"));  /* an address cannot be re-pointed */
    assert_true(og_guard_host_allowed(&any, "[fe80::1]:8080"));
    assert_false(og_guard_host_allowed(&any, "evil.example:8080"));
    assert_false(og_guard_origin_allowed(&any, "http://10.1.2.3"));  /* a page from some address */
    const char *extra[] = {"graph.example.org", "proxy.example.org:443"};
    og_host_allow named = {"10.0.0.5", 8080, extra, 2};
    assert_true(og_guard_host_allowed(&named, "10.0.0.5:8080"));
    assert_true(og_guard_host_allowed(&named, "Graph.Example.org:8080"));
    assert_false(og_guard_host_allowed(&named, "graph.example.org:9090"));
    assert_true(og_guard_host_allowed(&named, "proxy.example.org:443"));
    assert_false(og_guard_host_allowed(&named, "proxy.example.org:8080"));
    assert_true(og_guard_origin_allowed(&named, "https://proxy.example.org"));
    assert_false(og_guard_origin_allowed(&named, "http://proxy.example.org"));
    assert_false(og_guard_host_allowed(&named, "localhost:8080")); /* not bound to loopback */
}

static void test_frame_check(void **state)
{
    (void)state;
#define H(k, v) {k, sizeof k - 1, v, sizeof v - 1}
    og_hdr ok[] = {H("Host", "x"), H("Content-Length", "5"), H("Authorization", "Bearer t")};
    assert_null(og_guard_frame(1, ok, 3));
    og_hdr same_cl[] = {H("Host", "x"), H("Content-Length", "5"), H("content-length", "5")};
    assert_null(og_guard_frame(1, same_cl, 3));
    og_hdr two_cl[] = {H("Host", "x"), H("Content-Length", "5"), H("Content-Length", "6")};
    assert_string_equal(og_guard_frame(1, two_cl, 3), "two different Content-Length headers");
    og_hdr cl_te[] = {H("Host", "x"), H("Content-Length", "5"), H("Transfer-Encoding", "chunked")};
    assert_string_equal(og_guard_frame(1, cl_te, 3), "Content-Length and Transfer-Encoding together");
    og_hdr te_gzip[] = {H("Host", "x"), H("Transfer-Encoding", "gzip, chunked")};
    assert_non_null(og_guard_frame(1, te_gzip, 2));
    og_hdr neg[] = {H("Host", "x"), H("Content-Length", "-1")};
    assert_non_null(og_guard_frame(1, neg, 2));
    og_hdr nohost[] = {H("Accept", "*/*")};
    assert_string_equal(og_guard_frame(1, nohost, 1), "HTTP/1.1 request without a Host header");
    assert_null(og_guard_frame(0, nohost, 1)); /* HTTP/1.0 has no Host requirement */
    og_hdr nul[] = {H("Host", "x"), {"Authorization", 13, "Bearer a\0b", 10}};
    assert_string_equal(og_guard_frame(1, nul, 2), "a header value holds a control character");
    og_hdr two_auth[] = {H("Host", "x"), H("Authorization", "Bearer a"), H("Authorization", "Bearer b")};
    assert_string_equal(og_guard_frame(1, two_auth, 3), "more than one Authorization header");
    og_hdr two_host[] = {H("Host", "x"), H("Host", "y")};
    assert_non_null(og_guard_frame(1, two_host, 2));
#undef H
}

/* ---- over the wire ---- */

static int person_count(const srv *s)
{
    http_resp r = post_json(s, NULL, "/graphs/g1/query", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}");
    int n = r.status == 200 ? (int)json_array_size(json_object_get(r.json, "rows")) : -1;
    http_free(&r);
    return n;
}

/* A raw request with the given Host (and extra header lines, "\r\n"-terminated). */
static int with_host(const srv *s, const char *method, const char *path, const char *host, const char *extra,
                     const char *body, char *out, size_t cap)
{
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     method, path, host, extra ? extra : "", body ? strlen(body) : 0, body ? body : "");
    return raw_request(s, req, (size_t)n, out, cap, 5000);
}

static void test_rebinding_refused_on_every_route(void **state)
{
    (void)state;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    const char *port = raw_port(&s);
    char evil[128], evil2[128], ok[128];
    snprintf(evil, sizeof evil, "attacker.example:%s", port);
    snprintf(evil2, sizeof evil2, "127.0.0.1.attacker.example:%s", port);
    const char *mut = "{\"query\":\"query q() { insert Person { name: \\\"Mallory\\\" } }\"}";
    char out[8192];
    /* the finding: a web page under a rebound name committed on main */
    assert_int_equal(with_host(&s, "POST", "/graphs/g1/mutate", evil, NULL, mut, out, sizeof out), 403);
    assert_non_null(strstr(out, "\"code\":\"forbidden\""));
    assert_non_null(strstr(out, "DNS-rebinding"));
    assert_int_equal(with_host(&s, "POST", "/graphs/g1/mutate", evil2, NULL, mut, out, sizeof out), 403);
    assert_int_equal(with_host(&s, "GET", "/graphs", evil, NULL, NULL, out, sizeof out), 403);
    assert_int_equal(with_host(&s, "GET", "/healthz", evil, NULL, NULL, out, sizeof out), 403);
    assert_int_equal(with_host(&s, "GET", "/graphs/g1/branches", evil, NULL, NULL, out, sizeof out), 403);
    assert_int_equal(with_host(&s, "POST", "/graphs/g1/mcp", evil2, NULL, "{}", out, sizeof out), 403);
    assert_int_equal(person_count(&s), 2); /* nothing was written */
    /* a loopback name with the right port is the server; the wrong port is not */
    const char *names[] = {"localhost", "127.0.0.1", "[::1]", "LOCALHOST"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(ok, sizeof ok, "%s:%s", names[i], port);
        assert_int_equal(with_host(&s, "GET", "/graphs/g1/branches", ok, NULL, NULL, out, sizeof out), 200);
    }
    snprintf(ok, sizeof ok, "127.0.0.1:%d", atoi(port) == 65535 ? 1 : atoi(port) + 1);
    assert_int_equal(with_host(&s, "GET", "/graphs/g1/branches", ok, NULL, NULL, out, sizeof out), 403);
    /* a browser Origin: a loopback page passes, a name that merely starts with 127. does not */
    snprintf(ok, sizeof ok, "127.0.0.1:%s", port);
    assert_int_equal(with_host(&s, "POST", "/graphs/g1/mutate", ok, "Origin: http://127.1.2.3.evil.com\r\n", mut, out,
                               sizeof out), 403);
    assert_int_equal(with_host(&s, "POST", "/graphs/g1/mutate", ok, "Origin: null\r\n", mut, out, sizeof out), 403);
    assert_int_equal(person_count(&s), 2);
    assert_int_equal(with_host(&s, "GET", "/graphs/g1/branches", ok, "Origin: http://localhost:6274\r\n", NULL, out,
                               sizeof out), 200);
    /* no server path in a body: a bad NDJSON load names its line in "request body", not the
     * server's spool file; every answer carries a request id */
    const char *nd[] = {"Content-Type: application/x-ndjson", NULL};
    const char *bad_nd = "{\"type\":\"Person\",\"data\":{\"name\":\"Zed\"}}\n{\"type\":\"Nope\",\"data\":{}}\n";
    http_resp lr = http(&s, "POST", "/graphs/g1/load/ndjson", nd, bad_nd, strlen(bad_nd));
    assert_int_equal(lr.status, 400);
    assert_non_null(strstr(jstr(lr.json, "error"), "request body:2:"));
    assert_null(strstr(lr.body, "omnigraph-load-"));
    assert_null(strstr(lr.body, dir));
    assert_non_null(strstr(lr.headers, "X-Request-Id: "));
    http_free(&lr);
    assert_int_equal(srv_stop(&s), 0);

    /* --allowed-host adds a name (a reverse proxy's); a malformed one stops the boot */
    const char *named[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--allowed-host",
                           "graph.example.org", NULL};
    assert_int_equal(srv_start(&s, logpath, named), 0);
    snprintf(ok, sizeof ok, "graph.example.org:%s", raw_port(&s));
    assert_int_equal(with_host(&s, "GET", "/graphs/g1/branches", ok, NULL, NULL, out, sizeof out), 200);
    snprintf(evil, sizeof evil, "other.example.org:%s", raw_port(&s));
    assert_int_equal(with_host(&s, "GET", "/graphs/g1/branches", evil, NULL, NULL, out, sizeof out), 403);
    assert_int_equal(srv_stop(&s), 0);
    const char *bad[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", "--allowed-host",
                         "http://x/", NULL};
    assert_true(srv_start_fails(logpath, bad));
}

/* A raw request (whole text given) → status; also checks the connection was closed. */
static int framed(const srv *s, const char *req, size_t len, int *closed)
{
    char out[8192];
    int fd = raw_connect(s);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, req, len), (ssize_t)len);
    uint64_t t0 = raw_now_ms();
    raw_read_all(fd, out, sizeof out, 5000);
    *closed = raw_now_ms() - t0 < 4000; /* the server closed it (no keep-alive wait) */
    close(fd);
    int status = -1;
    if (sscanf(out, "HTTP/1.%*d %d", &status) != 1) return -1;
    if (getenv("OG_TEST_VERBOSE")) fprintf(stderr, "%s\n", out);
    return status;
}

#define FRAMED(s, lit, closed) framed(s, lit, sizeof lit - 1, closed)

static void test_strict_framing(void **state)
{
    (void)state;
    setenv("OMNIGRAPH_SERVER_BEARER_TOKEN", "sekret", 1);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", NULL};
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    /* the token is gone from the server's environment once read: only its digest is kept */
    char envpath[64], envbuf[65536];
    snprintf(envpath, sizeof envpath, "/proc/%d/environ", (int)s.pid);
    FILE *ef = fopen(envpath, "rb");
    assert_non_null(ef);
    size_t elen = fread(envbuf, 1, sizeof envbuf, ef);
    fclose(ef);
    assert_true(elen > 0);
    assert_null(memmem(envbuf, elen, "sekret", 6));
    char req[1024], host[64];
    snprintf(host, sizeof host, "127.0.0.1:%s", raw_port(&s));
    int closed, n;
    /* the well-formed request passes */
    n = snprintf(req, sizeof req, "GET /graphs/g1/branches HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sekret\r\n\r\n",
                 host);
    assert_int_equal(framed(&s, req, (size_t)n, &closed), 200);
    /* two different lengths: which one a proxy used is unknowable */
    n = snprintf(req, sizeof req,
                 "POST /graphs/g1/query HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sekret\r\nContent-Type: "
                 "application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
                 host);
    assert_int_equal(framed(&s, req, (size_t)n, &closed), 400);
    assert_true(closed);
    n = snprintf(req, sizeof req,
                 "POST /graphs/g1/query HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sekret\r\nContent-Type: "
                 "application/json\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                 host);
    assert_int_equal(framed(&s, req, (size_t)n, &closed), 400);
    assert_true(closed);
    /* no Host on HTTP/1.1 */
    assert_int_equal(FRAMED(&s, "GET /healthz HTTP/1.1\r\nAccept: */*\r\n\r\n", &closed), 400);
    assert_int_equal(FRAMED(&s, "GET /healthz HTTP/1.0\r\n\r\n", &closed), 200);
    /* a NUL inside the bearer token: refused, not cut to "sekret" */
    n = snprintf(req, sizeof req, "GET /graphs/g1/branches HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sekret", host);
    memcpy(req + n, "\0junk\r\n\r\n", 9);
    assert_int_equal(framed(&s, req, (size_t)n + 9, &closed), 400);
    /* two Authorization headers */
    n = snprintf(req, sizeof req,
                 "GET /graphs/g1/branches HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sekret\r\nAuthorization: "
                 "Bearer other\r\n\r\n",
                 host);
    assert_int_equal(framed(&s, req, (size_t)n, &closed), 400);
    /* %00 in a query parameter */
    n = snprintf(req, sizeof req,
                 "GET /graphs/g1/commits?branch=main%%00x HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sekret\r\n\r\n",
                 host);
    assert_int_equal(framed(&s, req, (size_t)n, &closed), 400);
    /* a declared length past the limit: 413 at once, not a silent close after the idle timeout */
    n = snprintf(req, sizeof req,
                 "POST /graphs/g1/query HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer sekret\r\nContent-Type: "
                 "application/json\r\nContent-Length: 1073741824\r\n\r\n{\"query\":",
                 host);
    uint64_t t0 = raw_now_ms();
    char out[8192];
    int fd = raw_connect(&s);
    assert_int_equal(write(fd, req, (size_t)n), n);
    raw_read_all(fd, out, sizeof out, 10000);
    close(fd);
    assert_true(raw_now_ms() - t0 < 3000);
    assert_int_equal(atoi(out + 9), 413);
    assert_non_null(strstr(out, "request_body_bytes"));
    assert_int_equal(srv_stop(&s), 0);
}

/* `--version`; a taken port says so (never "Failed to bind to port 0") and is not shared. */
static void test_boot_messages(void **state)
{
    (void)state;
    char cmd[1200], line[256] = "";
    snprintf(cmd, sizeof cmd, "%s/omnigraph-server --version", getenv("OG_BINARY_DIR") ? getenv("OG_BINARY_DIR") : OG_BINARY_DIR);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    assert_int_equal(pclose(p), 0);
    assert_string_equal(line, "omnigraph-server " OG_VERSION_STRING "\n");

    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    char bind[80], log2[160];
    snprintf(bind, sizeof bind, "127.0.0.1:%s", raw_port(&s));
    snprintf(log2, sizeof log2, "%s/second.log", dir);
    const char *again[] = {"--graph", graph, "--bind", bind, "--unauthenticated", NULL};
    assert_true(srv_start_fails(log2, again));
    FILE *f = fopen(log2, "r");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "the port is already in use"));
    assert_int_equal(srv_stop(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_authority_parsing_is_exact),
        cmocka_unit_test(test_frame_check),
        cmocka_unit_test(test_rebinding_refused_on_every_route),
        cmocka_unit_test(test_strict_framing),
        cmocka_unit_test(test_boot_messages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
