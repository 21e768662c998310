/*
 * test_server_admission.c — per-actor admission on writes (reference-surfaces.md §2.7): with
 * OMNIGRAPH_PER_ACTOR_INFLIGHT_MAX=1, a write held open (an NDJSON load whose body is still
 * arriving: it is decided and admitted before its body is read) makes the actor's next write
 * a 429 `too_many_requests` with `Retry-After`, while reads pass; the slot is released when
 * the held write completes.  MCP writes (POST /graphs/{id}/mcp tools/call of a writing tool)
 * share the same budget: refused with HTTP 429, Retry-After and a JSON-RPC error.
 *
 * A write's slot is free by the time its answer reaches the client (a client that read its
 * write's answer never sees its next write refused by it), and two slow NDJSON uploads at
 * once are both admitted and both complete under a limit of 2, while under a limit of 1 the
 * second gets the documented 429 and the first completes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "server_client.h"

static char dir[64], graph[128], logpath[128];
static srv S;

static const char *inflight_max = "1";

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvadm-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    setenv("OMNIGRAPH_PER_ACTOR_INFLIGHT_MAX", inflight_max, 1);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    int rc = srv_start(&S, logpath, args);
    unsetenv("OMNIGRAPH_PER_ACTOR_INFLIGHT_MAX");
    return rc;
}

static int teardown(void **state)
{
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

static int connect_to(const srv *s)
{
    char host[64];
    snprintf(host, sizeof host, "%s", s->addr);
    char *colon = strrchr(host, ':');
    *colon = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, host, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) return -1;
    return fd;
}

static const char *MUTATE = "{\"query\":\"query q() { insert Person { name: \\\"Held\\\" } }\"}";

static void test_write_over_budget_is_429(void **state)
{
    const char *rec = "{\"type\":\"Person\",\"data\":{\"name\":\"Slow\",\"age\":1}}\n";
    char head[512];
    snprintf(head, sizeof head,
             "POST /graphs/g1/load/ndjson HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-ndjson\r\n"
             "Content-Length: %zu\r\n\r\n",
             S.addr, strlen(rec));
    int fd = connect_to(&S);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    /* the held load is admitted once its headers are processed; poll until the next write is refused */
    http_resp r = {0};
    int refused = 0;
    for (int i = 0; i < 50 && !refused; i++) {
        usleep(100 * 1000);
        r = post_json(&S, NULL, "/graphs/g1/mutate", MUTATE);
        refused = r.status == 429;
        if (!refused) http_free(&r);
    }
    assert_true(refused);
    assert_string_equal(jstr(r.json, "code"), "too_many_requests");
    assert_non_null(json_object_get(r.json, "merge_conflicts"));
    assert_non_null(strstr(r.headers, "Retry-After: 60"));
    http_free(&r);
    /* branch writes share the budget; reads are not gated */
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"b1\"}");
    assert_int_equal(r.status, 429);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/query", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* the held load completes; its slot is released */
    assert_int_equal(write(fd, rec, strlen(rec)), (ssize_t)strlen(rec));
    char buf[4096];
    ssize_t n = 0, k;
    while (n < (ssize_t)sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0) {
        n += k;
        buf[n] = 0;
        if (strstr(buf, "\"commit\"")) break;
    }
    buf[n > 0 ? n : 0] = 0;
    close(fd);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    int ok = 0;
    for (int i = 0; i < 50 && !ok; i++) {
        r = post_json(&S, NULL, "/graphs/g1/mutate", "{\"query\":\"query q() { insert Person { name: \\\"After\\\" } }\"}");
        ok = r.status == 200;
        http_free(&r);
        if (!ok) usleep(100 * 1000);
    }
    assert_true(ok);
}

static http_resp mcp_call(const char *tool, const char *args)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
             tool, args);
    const char *h[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream", NULL};
    return http(&S, "POST", "/graphs/g1/mcp", h, body, strlen(body));
}

static void test_mcp_writes_share_the_budget(void **state)
{
    const char *rec = "{\"type\":\"Person\",\"data\":{\"name\":\"Slow2\",\"age\":2}}\n";
    char head[512];
    snprintf(head, sizeof head,
             "POST /graphs/g1/load/ndjson HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-ndjson\r\n"
             "Content-Length: %zu\r\n\r\n",
             S.addr, strlen(rec));
    const char *mut = "{\"query\":\"query q() { insert Person { name: \\\"ViaMcp\\\" } }\",\"branch\":\"main\"}";
    /* Hold a load open until it owns the actor's one slot (an HTTP write is then refused, as
     * test_write_over_budget_is_429 shows; a write racing the load's admission may win the
     * slot instead, and the load is then refused at once: start another one). */
    int held = 0, fd = -1;
    for (int i = 0; i < 50 && !held; i++) {
        if (fd < 0) {
            fd = connect_to(&S);
            assert_true(fd >= 0);
            assert_int_equal(write(fd, head, strlen(head)), (ssize_t)strlen(head));
        }
        usleep(100 * 1000);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 0) > 0) { /* the load already has its answer: it lost the race */
            close(fd);
            fd = -1;
            continue;
        }
        http_resp h = post_json(&S, NULL, "/graphs/g1/mutate", MUTATE);
        held = h.status == 429;
        http_free(&h);
    }
    assert_true(held);
    /* ... so an MCP write is refused the same way */
    http_resp r = mcp_call("graph_mutate", mut);
    assert_int_equal(r.status, 429);
    assert_non_null(strstr(r.headers, "Retry-After: 60"));
    json_t *e = json_object_get(r.json, "error");
    assert_int_equal(json_integer_value(json_object_get(e, "code")), -32029);
    assert_string_equal(jstr(e, "message"),
                        "too_many_requests: too many concurrent writes for actor 'anonymous' (limit 1); retry later");
    assert_int_equal(json_integer_value(json_object_get(r.json, "id")), 7);
    http_free(&r);
    /* every writing tool shares it; reads do not */
    r = mcp_call("branch_create", "{\"name\":\"mcp-held\"}");
    assert_int_equal(r.status, 429);
    http_free(&r);
    r = mcp_call("graph_load", "{\"data\":\"{\\\"type\\\":\\\"Person\\\",\\\"data\\\":{\\\"name\\\":\\\"L\\\"}}\",\"branch\":\"main\"}");
    assert_int_equal(r.status, 429);
    http_free(&r);
    r = mcp_call("graph_query", "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\"}");
    assert_int_equal(r.status, 200);
    assert_false(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
    http_free(&r);
    /* the branch was not created by the refused call */
    r = get(&S, NULL, "/graphs/g1/branches");
    assert_null(strstr(r.body, "mcp-held"));
    http_free(&r);
    /* the held load completes; MCP writes pass again */
    assert_int_equal(write(fd, rec, strlen(rec)), (ssize_t)strlen(rec));
    char buf[4096];
    ssize_t n = 0, k;
    while (n < (ssize_t)sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0) {
        n += k;
        buf[n] = 0;
        if (strstr(buf, "\"commit\"")) break;
    }
    close(fd);
    int ok = 0;
    for (int i = 0; i < 50 && !ok; i++) {
        r = mcp_call("graph_mutate", mut);
        ok = r.status == 200 && !json_is_true(json_object_get(json_object_get(r.json, "result"), "isError"));
        http_free(&r);
        if (!ok) usleep(100 * 1000);
    }
    assert_true(ok);
}

/* The whole answer on fd (headers, then Content-Length bytes of body) into buf. */
static void read_answer(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (;;) {
        char *end = strstr(buf, "\r\n\r\n");
        const char *cl = strstr(buf, "Content-Length: ");
        if (end && cl && n >= (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10)) return;
        if (n + 1 >= cap) return;
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k <= 0) return;
        n += (size_t)k;
        buf[n] = 0;
    }
}

static int start_load(const char *rec, int chunked)
{
    char head[512];
    if (chunked)
        snprintf(head, sizeof head,
                 "POST /graphs/g1/load/ndjson HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-ndjson\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n",
                 S.addr);
    else
        snprintf(head, sizeof head,
                 "POST /graphs/g1/load/ndjson HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-ndjson\r\n"
                 "Content-Length: %zu\r\n\r\n",
                 S.addr, strlen(rec));
    int fd = connect_to(&S);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    return fd;
}

/* Sends bytes [from, to) of rec (as one chunk when chunked; the last piece ends the body). */
static void send_piece(int fd, const char *rec, size_t from, size_t to, int chunked)
{
    char buf[512];
    int n = chunked ? snprintf(buf, sizeof buf, "%zx\r\n%.*s\r\n%s", to - from, (int)(to - from), rec + from,
                               rec[to] ? "" : "0\r\n\r\n")
                    : snprintf(buf, sizeof buf, "%.*s", (int)(to - from), rec + from);
    assert_int_equal(write(fd, buf, (size_t)n), (ssize_t)n);
}

static long people_named(const char *name)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"query\":\"query q($n: String) { match { $p: Person { name: $n } } return { $p.name } }\","
             "\"params\":{\"n\":\"%s\"}}",
             name);
    http_resp r = post_json(&S, NULL, "/graphs/g1/query", body);
    assert_int_equal(r.status, 200);
    long n = (long)json_integer_value(json_object_get(r.json, "row_count"));
    http_free(&r);
    return n;
}

/* Limit 1: a write whose answer the client has read no longer holds the slot, so the next
 * write (a held load) is admitted, every time.  (Before the fix the slot was freed only in
 * libmicrohttpd's completion callback, which can run after the client already has the
 * answer: the load then got 429 in some rounds.) */
static void test_answered_write_frees_its_slot(void **state)
{
    char buf[4096], rec[128];
    for (int i = 0; i < 30; i++) {
        snprintf(rec, sizeof rec, "{\"type\":\"Person\",\"data\":{\"name\":\"Next-%d\",\"age\":3}}\n", i);
        http_resp r = post_json(&S, NULL, "/graphs/g1/mutate", MUTATE);
        assert_int_equal(r.status, 200);
        http_free(&r);
        int fd = start_load(rec, i % 2);
        usleep(20 * 1000);
        send_piece(fd, rec, 0, strlen(rec), i % 2);
        read_answer(fd, buf, sizeof buf);
        close(fd);
        if (!strstr(buf, "HTTP/1.1 200")) fail_msg("round %d: the load after an answered write got: %.80s", i, buf);
    }
    for (int i = 0; i < 30; i++) {
        snprintf(rec, sizeof rec, "Next-%d", i);
        assert_int_equal(people_named(rec), 1);
    }
}

/* Two slow uploads at once, their bodies arriving in pieces, interleaved. */
static void two_slow_uploads(const char *a_name, const char *b_name, char *a_out, char *b_out, size_t cap)
{
    char ra[128], rb[128];
    snprintf(ra, sizeof ra, "{\"type\":\"Person\",\"data\":{\"name\":\"%s\",\"age\":4}}\n", a_name);
    snprintf(rb, sizeof rb, "{\"type\":\"Person\",\"data\":{\"name\":\"%s\",\"age\":5}}\n", b_name);
    int a = start_load(ra, 0);
    usleep(50 * 1000); /* a is first */
    int b = start_load(rb, 1);
    size_t la = strlen(ra), lb = strlen(rb);
    for (size_t k = 0; k < 4; k++) {
        usleep(50 * 1000);
        send_piece(a, ra, la * k / 4, la * (k + 1) / 4, 0);
        send_piece(b, rb, lb * k / 4, lb * (k + 1) / 4, 1);
    }
    read_answer(a, a_out, cap);
    read_answer(b, b_out, cap);
    close(a);
    close(b);
}

static void test_two_slow_uploads_both_admitted(void **state)
{
    char a[4096], b[4096];
    two_slow_uploads("SlowA", "SlowB", a, b, sizeof a);
    if (!strstr(a, "HTTP/1.1 200")) fail_msg("first upload: %.80s", a);
    if (!strstr(b, "HTTP/1.1 200")) fail_msg("second upload: %.80s", b);
    assert_int_equal(people_named("SlowA"), 1);
    assert_int_equal(people_named("SlowB"), 1);
}

static void test_two_slow_uploads_second_is_429(void **state)
{
    char a[4096], b[4096];
    two_slow_uploads("OnlyA", "OnlyB", a, b, sizeof a);
    /* the first admitted holds the one slot until it completes: the other is refused (which
     * one comes first is the server's to decide, on a busy machine) */
    int a_won = strstr(a, "HTTP/1.1 200") != NULL;
    const char *won = a_won ? a : b, *lost = a_won ? b : a;
    if (!strstr(won, "HTTP/1.1 200")) fail_msg("neither upload was admitted: %.80s / %.80s", a, b);
    if (!strstr(lost, "HTTP/1.1 429")) fail_msg("the other upload: %.80s", lost);
    assert_non_null(strstr(lost, "Retry-After: 60"));
    assert_non_null(strstr(lost, "too_many_requests"));
    assert_int_equal(people_named("OnlyA"), a_won);
    assert_int_equal(people_named("OnlyB"), !a_won);
}

static int setup_limit2(void **state)
{
    inflight_max = "2";
    int rc = setup(state);
    inflight_max = "1";
    return rc;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_over_budget_is_429, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mcp_writes_share_the_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answered_write_frees_its_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_slow_uploads_both_admitted, setup_limit2, teardown),
        cmocka_unit_test_setup_teardown(test_two_slow_uploads_second_is_429, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
