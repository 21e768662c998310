/*
 * test_server_shutdown.c — graceful stop: SIGTERM while a request is in flight (an export
 * stream read slowly by its client) lets that request finish completely, refuses new
 * connections, and the process exits 0.  SIGINT behaves the same on an idle server.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], graph[128], logpath[128];

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvstop-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

typedef struct slow {
    size_t bytes, lines;
    int calls;
    pid_t pid;
    int signalled;
} slow;

/* Reads the stream slowly; after the first block, the server gets SIGTERM. */
static size_t slow_sink(char *p, size_t sz, size_t n, void *arg)
{
    slow *s = arg;
    s->bytes += sz * n;
    for (size_t i = 0; i < sz * n; i++) s->lines += p[i] == '\n';
    if (!s->signalled) {
        kill(s->pid, SIGTERM);
        s->signalled = 1;
    }
    usleep(2000);
    return sz * n;
}

static void test_sigterm_finishes_in_flight(void **state)
{
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    /* ~3 MiB of notes: many 64 KiB blocks */
    size_t n = 1500, cap = n * 2200, len = 0;
    char *nd = malloc(cap), pad[2001];
    memset(pad, 'y', 2000);
    pad[2000] = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(nd + len, cap - len, "{\"type\":\"Note\",\"data\":{\"title\":\"s-%zu\",\"body\":\"%s\"}}\n", i, pad);
    const char *h[] = {"Content-Type: application/x-ndjson", NULL};
    http_resp r = http(&s, "POST", "/graphs/g1/load/ndjson?mode=append", h, nd, len);
    assert_int_equal(r.status, 200);
    http_free(&r);
    free(nd);

    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof url, "http://%s/graphs/g1/export", s.addr);
    struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"type_names\":[\"Note\"]}");
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 16384L);
    slow sl = {0, 0, 0, s.pid, 0};
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, slow_sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sl);
    CURLcode rc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    assert_int_equal(rc, CURLE_OK); /* the chunked stream ended properly */
    assert_int_equal(code, 200);
    assert_true(sl.signalled);
    assert_int_equal(sl.lines, n); /* every record, though SIGTERM came after the first block */
    /* the process exits 0 once the stream is done, and accepts nothing new */
    int status = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(waitpid(s.pid, &status, 0), s.pid);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "server exited %.2f s after the stream ended\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    s.pid = 0;
    http_resp after = get(&s, NULL, "/healthz");
    assert_true(after.status < 0); /* connection refused */
    http_free(&after);
}

static void test_sigint_idle(void **state)
{
    srv s;
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&s, logpath, args), 0);
    http_resp r = get(&s, NULL, "/healthz");
    assert_int_equal(r.status, 200);
    http_free(&r);
    kill(s.pid, SIGINT);
    int status = 0;
    assert_int_equal(waitpid(s.pid, &status, 0), s.pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigterm_finishes_in_flight),
        cmocka_unit_test(test_sigint_idle),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
