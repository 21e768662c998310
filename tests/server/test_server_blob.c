/*
 * test_server_blob.c — GET / HEAD /graphs/{id}/blob against a real server process
 * (reference-surfaces.md §2.6): the full value with its headers, single byte ranges (a-b,
 * a-, -n; 206), unsatisfiable ranges (416 with the total length in Content-Range), ignored multi / malformed
 * ranges, If-None-Match (304), If-Match (412), If-Range, HEAD, and the selector errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64];
static srv S;
static const char *DOC = "/graphs/b1/blob?entity=node&type=Doc&id=d1&property=data";

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvblob-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char uri[128], data[128];
    snprintf(uri, sizeof uri, "%s/g", dir);
    snprintf(data, sizeof data, "%s/seed.jsonl", dir);
    const char *schema = "node Doc { name: String @key  data: Blob?  note: String? }\n";
    og_db *db;
    if (og_db_init(&db, uri, "b.pg", schema, strlen(schema), NULL)) return -1;
    FILE *f = fopen(data, "w");
    fputs("{\"type\":\"Doc\",\"data\":{\"name\":\"d1\",\"data\":\"base64:aGVsbG8gd29ybGQ=\",\"note\":\"n\"}}\n"
          "{\"type\":\"Doc\",\"data\":{\"name\":\"d2\"}}\n",
          f);
    fclose(f);
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt rc;
    og_status st = og_db_load(&rc, db, data, &lo);
    og_db_close(db);
    if (st) return -1;
    char graph[160], log[128];
    snprintf(graph, sizeof graph, "b1=%s", uri);
    snprintf(log, sizeof log, "%s/server.log", dir);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    return srv_start(&S, log, args);
}

static int teardown(void **state)
{
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

static http_resp get_h(const char *path, const char *h1, const char *h2)
{
    const char *h[] = {h1, h2, NULL};
    return http(&S, "GET", path, h, NULL, 0);
}

/* The value of response header `name` (case-insensitive) into out. */
static int header(const http_resp *r, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *p = r->headers; p && *p;) {
        if (!strncasecmp(p, name, n) && p[n] == ':') {
            p += n + 1;
            while (*p == ' ') p++;
            size_t k = strcspn(p, "\r\n");
            snprintf(out, cap, "%.*s", (int)k, p);
            return 1;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

static void expect_body(http_resp *r, long status, const char *body)
{
    assert_int_equal(r->status, status);
    assert_int_equal(r->len, strlen(body));
    assert_memory_equal(r->body, body, r->len);
    http_free(r);
}

static void test_full_and_ranges(void **state)
{
    http_resp r = get_h(DOC, NULL, NULL);
    char etag[128], v[128];
    assert_int_equal(r.status, 200);
    assert_true(header(&r, "ETag", etag, sizeof etag));
    assert_int_equal(etag[0], '"');
    assert_true(header(&r, "Accept-Ranges", v, sizeof v));
    assert_string_equal(v, "bytes");
    assert_true(header(&r, "Content-Type", v, sizeof v));
    assert_string_equal(v, "application/octet-stream");
    assert_true(header(&r, "Omnigraph-Snapshot-Id", v, sizeof v));
    assert_true(strlen(v) > 20);
    expect_body(&r, 200, "hello world");

    r = get_h(DOC, "Range: bytes=0-4", NULL);
    assert_true(header(&r, "Content-Range", v, sizeof v));
    assert_string_equal(v, "bytes 0-4/11");
    expect_body(&r, 206, "hello");
    r = get_h(DOC, "Range: bytes=-5", NULL);
    expect_body(&r, 206, "world");
    r = get_h(DOC, "Range: bytes=6-", NULL);
    expect_body(&r, 206, "world");
    r = get_h(DOC, "Range: bytes=6-100", NULL);
    expect_body(&r, 206, "world");
    r = get_h(DOC, "Range: bytes=20-", NULL);
    assert_int_equal(r.status, 416);
    assert_true(header(&r, "Content-Range", v, sizeof v));
    assert_string_equal(v, "bytes */11");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r.json, "blob_range"), "length")), 11);
    http_free(&r);
    r = get_h(DOC, "Range: bytes=0-1,4-5", NULL);
    expect_body(&r, 200, "hello world");
    r = get_h(DOC, "Range: bytes=x-y", NULL);
    expect_body(&r, 200, "hello world");

    /* conditionals */
    char h[200];
    snprintf(h, sizeof h, "If-None-Match: %s", etag);
    r = get_h(DOC, h, NULL);
    assert_int_equal(r.status, 304);
    http_free(&r);
    snprintf(h, sizeof h, "If-None-Match: \"other\", W/%s", etag);
    r = get_h(DOC, h, NULL);
    assert_int_equal(r.status, 304);
    http_free(&r);
    r = get_h(DOC, "If-None-Match: \"other\"", NULL);
    expect_body(&r, 200, "hello world");
    r = get_h(DOC, "If-Match: \"other\"", NULL);
    assert_int_equal(r.status, 412);
    assert_string_equal(jstr(r.json, "code"), "conflict");
    http_free(&r);
    snprintf(h, sizeof h, "If-Match: W/%s", etag); /* weak tags never match If-Match */
    r = get_h(DOC, h, NULL);
    assert_int_equal(r.status, 412);
    http_free(&r);
    r = get_h(DOC, "If-Match: *", NULL);
    expect_body(&r, 200, "hello world");
    snprintf(h, sizeof h, "If-Range: %s", etag);
    r = get_h(DOC, h, "Range: bytes=0-4");
    expect_body(&r, 206, "hello");
    r = get_h(DOC, "If-Range: \"stale\"", "Range: bytes=0-4");
    expect_body(&r, 200, "hello world");

    /* HEAD: the headers, no payload, Range ignored */
    const char *hr[] = {"Range: bytes=0-4", NULL};
    r = http(&S, "HEAD", DOC, hr, NULL, 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    assert_true(header(&r, "Content-Length", v, sizeof v));
    assert_string_equal(v, "11");
    assert_true(header(&r, "ETag", v, sizeof v));
    assert_string_equal(v, etag);
    http_free(&r);
}

static void test_selector_errors(void **state)
{
    http_resp r = get_h("/graphs/b1/blob?entity=node&type=Doc&id=nope&property=data", NULL, NULL);
    assert_int_equal(r.status, 404);
    http_free(&r);
    r = get_h("/graphs/b1/blob?entity=node&type=Doc&id=d2&property=data", NULL, NULL); /* null cell */
    assert_int_equal(r.status, 404);
    http_free(&r);
    r = get_h("/graphs/b1/blob?entity=node&type=Doc&id=d1&property=note", NULL, NULL); /* not a Blob */
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = get_h("/graphs/b1/blob?entity=node&type=Nope&id=d1&property=data", NULL, NULL);
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = get_h("/graphs/b1/blob?entity=thing&type=Doc&id=d1&property=data", NULL, NULL);
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = get_h("/graphs/b1/blob?entity=node&type=Doc&id=d1", NULL, NULL);
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = get_h("/graphs/b1/blob?entity=node&type=Doc&id=d1&property=data&branch=nope", NULL, NULL);
    assert_int_equal(r.status, 404);
    http_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_and_ranges),
        cmocka_unit_test(test_selector_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
