/*
 * test_server_ui.c — OmniGraph Studio's files at /ui/ (src/server/ui.c, docs/studio.md), on a
 * server that requires tokens: the files need none; every answer carries the strict
 * Content-Security-Policy; /ui redirects to /ui/; an ETag revalidates to 304; an unknown file
 * is a JSON 404, another method a 405 naming GET and HEAD; a foreign Host is refused as on
 * every route; the API beside it still wants its token.  A build without the studio's npm
 * packages has an empty table: then /ui/ is the 404 that says how to get it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/ui_assets.h"
#include "server_client.h"

static char dir[64], graph[128], logpath[128];
static srv s;

#define CSP                                                                                                      \
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "            \
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* The value of response header `name` (exact case as sent), copied; "" when absent. */
static const char *header(const http_resp *r, const char *name, char *out, size_t cap)
{
    out[0] = 0;
    const char *p = r->headers;
    size_t n = strlen(name);
    while (p && *p) {
        const char *e = strstr(p, "\r\n");
        if (!e) break;
        if ((size_t)(e - p) > n + 1 && !strncasecmp(p, name, n) && p[n] == ':') {
            const char *v = p + n + 1;
            while (*v == ' ') v++;
            snprintf(out, cap, "%.*s", (int)(e - v), v);
            return out;
        }
        p = e + 2;
    }
    return out;
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-srvui-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    curl_global_init(CURL_GLOBAL_ALL);
    setenv("OMNIGRAPH_SERVER_BEARER_TOKEN", "sekret", 1);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", NULL};
    int rc = srv_start(&s, logpath, args);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    srv_stop(&s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

static void test_index_needs_no_token_and_carries_the_csp(void **state)
{
    (void)state;
    char v[512];
    http_resp r = get(&s, NULL, "/ui/");
    if (!og_ui_nassets) { /* built without web/node_modules */
        assert_int_equal(r.status, 404);
        assert_non_null(strstr(jstr(r.json, "error"), "scripts/install-deps.sh"));
        http_free(&r);
        skip();
    }
    assert_int_equal(r.status, 200);
    assert_string_equal(header(&r, "Content-Type", v, sizeof v), "text/html; charset=utf-8");
    assert_string_equal(header(&r, "Content-Security-Policy", v, sizeof v), CSP);
    assert_string_equal(header(&r, "X-Content-Type-Options", v, sizeof v), "nosniff");
    assert_string_equal(header(&r, "X-Frame-Options", v, sizeof v), "DENY");
    assert_string_equal(header(&r, "Cache-Control", v, sizeof v), "no-cache");
    assert_non_null(strstr(r.body, "<title>OmniGraph Studio</title>"));
    /* the page loads its script from this origin only: no http(s):// URL in it */
    assert_non_null(strstr(r.body, "src=\"app.js\""));
    assert_null(strstr(r.body, "http://"));
    assert_null(strstr(r.body, "https://"));
    http_free(&r);

    r = get(&s, NULL, "/ui/app.js");
    assert_int_equal(r.status, 200);
    assert_string_equal(header(&r, "Content-Type", v, sizeof v), "text/javascript; charset=utf-8");
    assert_true(r.len > 100000); /* the bundle: CodeMirror, cytoscape and the app */
    assert_string_equal(header(&r, "Content-Security-Policy", v, sizeof v), CSP);
    http_free(&r);
    /* the API beside it still wants the token */
    r = get(&s, NULL, "/graphs/g1/branches");
    assert_int_equal(r.status, 401);
    http_free(&r);
}

static void test_etag_revalidates_to_304(void **state)
{
    (void)state;
    if (!og_ui_nassets) skip();
    char etag[128], hdr[160], v[64];
    http_resp r = get(&s, NULL, "/ui/app.css");
    assert_int_equal(r.status, 200);
    header(&r, "ETag", etag, sizeof etag);
    assert_true(etag[0] == '"' && strlen(etag) == 34);
    http_free(&r);
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
    const char *h[] = {hdr, NULL};
    r = http(&s, "GET", "/ui/app.css", h, NULL, 0);
    assert_int_equal(r.status, 304);
    assert_int_equal(r.len, 0);
    http_free(&r);
    const char *stale[] = {"If-None-Match: \"0000\"", NULL};
    r = http(&s, "GET", "/ui/app.css", stale, NULL, 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(header(&r, "Content-Type", v, sizeof v), "text/css; charset=utf-8");
    http_free(&r);
}

static void test_redirect_unknown_file_and_methods(void **state)
{
    (void)state;
    if (!og_ui_nassets) skip();
    char v[128];
    http_resp r = get(&s, NULL, "/ui");
    assert_int_equal(r.status, 308);
    assert_string_equal(header(&r, "Location", v, sizeof v), "/ui/");
    http_free(&r);
    r = get(&s, NULL, "/ui/nope.js");
    assert_int_equal(r.status, 404);
    assert_string_equal(jstr(r.json, "code"), "not_found");
    http_free(&r);
    r = get(&s, NULL, "/ui/../graphs");
    assert_true(r.status == 404 || r.status == 401); /* never a file outside the table */
    http_free(&r);
    r = http(&s, "POST", "/ui/", NULL, "x", 1);
    assert_int_equal(r.status, 405);
    assert_string_equal(header(&r, "Allow", v, sizeof v), "GET, HEAD");
    http_free(&r);
    r = http(&s, "HEAD", "/ui/", NULL, NULL, 0);
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* /uix is not the studio */
    r = get(&s, NULL, "/uix");
    assert_int_equal(r.status, 404);
    assert_string_equal(jstr(r.json, "error"), "no route for this path");
    http_free(&r);
}

static void test_foreign_host_is_refused(void **state)
{
    (void)state;
    const char *h[] = {"Host: attacker.example", NULL};
    http_resp r = http(&s, "GET", "/ui/", h, NULL, 0);
    assert_int_equal(r.status, 403);
    http_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_needs_no_token_and_carries_the_csp),
        cmocka_unit_test(test_etag_revalidates_to_304),
        cmocka_unit_test(test_redirect_unknown_file_and_methods),
        cmocka_unit_test(test_foreign_host_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
