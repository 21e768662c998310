/*
 * test_server_store_outage.c — the object store stops and comes back under a served fleet.
 * Two omnigraph-server replicas serve one graph; six agents, each on its own branch, insert
 * one-row notes and merge their branch into main now and then.  Once every agent has written,
 * the store goes down; once the agents have seen it, it comes back.  What must hold
 * (issue 30, docs/storage.md "When the store is down"):
 *   - every request is answered 200 or, while the store is down (or the outage caught it in
 *     flight), 503 with code too_many_requests, `Retry-After` and Omnigraph-Error-Class
 *     "unavailable" — never a 500, never a hang;
 *   - the replicas recover without a restart: both are the same processes afterwards, and
 *     every agent's writes are acknowledged again;
 *   - nothing acknowledged is lost: after a final merge of every branch, each acknowledged
 *     note is in main exactly once, read through either replica; an unacknowledged one (its
 *     answer lost with the store) at most once, on the branch and in main alike;
 *   - nothing half-published is visible: a fresh embedded handle exports every branch (every
 *     head names a commit whose manifests and data files all exist) and reads main's history.
 *
 * The store: a local graph behind the counting adapter in "remote" mode (2 ms a request, as
 * S3 reads it), taken down and up with its OG_STORE_DOWN_FILE (src/store/store_count.h) —
 * the ctest.  Or, with OG_TEST_STORE_URI=s3://… and OG_TEST_STORE_DOWN_CMD /
 * OG_TEST_STORE_UP_CMD (tests/store/run-s3-tests.sh: kill radosgw, start it again), the real
 * S3 test store, stopped for real.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

#define NAG 6
#define MAXW 400

static char dir[64], uri[256], graphspec[320], logpath[128], downfile[128];
static const char *down_cmd, *up_cmd; /* the S3 run's */

enum { PH_BEFORE, PH_DOWN, PH_UP, PH_DONE };
static volatile int phase;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int unavailable_seen; /* 503s answered while down */
static char bad_answer[1024]; /* the first wrong answer an agent thread met (cmocka fails only in the main thread) */

static void note_bad(const char *fmt, ...)
{
    pthread_mutex_lock(&mu);
    if (!bad_answer[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(bad_answer, sizeof bad_answer, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&mu);
}

typedef struct agent {
    const srv *s;
    int id, n;
    long status[MAXW];
    int ph_start[MAXW], ph_end[MAXW];
    int acked_after; /* writes acknowledged that began after the store came back */
    int acked_before;
    int merges_ok;
} agent;

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-outage-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    snprintf(downfile, sizeof downfile, "%s/store-down", dir);
    const char *test_uri = getenv("OG_TEST_STORE_URI");
    if (test_uri && !strncmp(test_uri, "s3://", 5)) {
        down_cmd = getenv("OG_TEST_STORE_DOWN_CMD");
        up_cmd = getenv("OG_TEST_STORE_UP_CMD");
        if (!down_cmd || !up_cmd || !*down_cmd || !*up_cmd) {
            printf("SKIP: OG_TEST_STORE_URI is S3 but OG_TEST_STORE_DOWN_CMD/UP_CMD are not set\n");
            exit(77);
        }
        snprintf(uri, sizeof uri, "%s/outage-%ld", test_uri, (long)getpid());
        og_db *db;
        if (og_db_init(&db, uri, "test.pg", TEST_SCHEMA, strlen(TEST_SCHEMA), NULL)) return -1;
        og_db_close(db);
        setenv("OG_S3_MAX_ATTEMPTS", "3", 1); /* a down store is reported in well under a second */
        setenv("OG_S3_RETRY_BASE_MS", "50", 1);
    } else {
        snprintf(uri, sizeof uri, "%s/g", dir);
        if (make_graph(dir, "g")) return -1;
        /* the replicas' stores read as S3 (2 ms a request) and go down with the file */
        setenv("OG_STORE_COUNT", "2,remote", 1);
        setenv("OG_STORE_DOWN_FILE", downfile, 1);
    }
    snprintf(graphspec, sizeof graphspec, "g=%s", uri);
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

static void store_down(void)
{
    if (down_cmd) {
        assert_int_equal(system(down_cmd), 0);
    } else {
        FILE *f = fopen(downfile, "w");
        assert_non_null(f);
        fclose(f);
    }
}

static void store_up(void)
{
    if (up_cmd) assert_int_equal(system(up_cmd), 0);
    else assert_int_equal(unlink(downfile), 0);
}

/* A header's value in r ("" when absent). */
static void header(const http_resp *r, const char *name, char *out, size_t cap)
{
    out[0] = 0;
    size_t nl = strlen(name);
    for (const char *p = r->headers; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
        if (!strncasecmp(p, name, nl) && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ') v++;
            size_t n = strcspn(v, "\r\n");
            snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), v);
            return;
        }
    }
}

/* A 503 must be the typed "store unavailable" answer; anything but 200/503 (and a merge's 409:
 * main moved under it too often) fails the test. */
static void check_answer(const http_resp *r, const char *what, int merge)
{
    if (r->status == 200 || (merge && r->status == 409)) return;
    if (r->status != 503) {
        note_bad("%s: HTTP %ld (want 200 or a typed 503): %s", what, r->status, r->body);
        return;
    }
    char ra[32], cls[32];
    header(r, "Retry-After", ra, sizeof ra);
    header(r, "Omnigraph-Error-Class", cls, sizeof cls);
    if (!ra[0] || strcmp(cls, "unavailable") || !jstr(r->json, "code") || strcmp(jstr(r->json, "code"), "too_many_requests"))
        note_bad("%s: a 503 that is not the typed store-unavailable answer (Retry-After '%s', class '%s'): %s", what, ra,
                 cls, r->body);
    pthread_mutex_lock(&mu);
    unavailable_seen++;
    pthread_mutex_unlock(&mu);
}

static http_resp merge(const srv *s, int id)
{
    char body[128];
    snprintf(body, sizeof body, "{\"source\":\"ag%d\",\"target\":\"main\"}", id);
    return post_json(s, NULL, "/graphs/g/branches/merge", body);
}

static void *agent_loop(void *arg)
{
    agent *a = arg;
    char body[512], what[64];
    snprintf(body, sizeof body, "{\"name\":\"ag%d\",\"from\":\"main\"}", a->id);
    http_resp r = post_json(a->s, NULL, "/graphs/g/branches", body);
    if (r.status != 200) {
        note_bad("branch create ag%d: %ld %s", a->id, r.status, r.body);
        http_free(&r);
        return NULL;
    }
    http_free(&r);
    while (phase != PH_DONE && a->n < MAXW) {
        int i = a->n;
        a->ph_start[i] = phase;
        snprintf(body, sizeof body,
                 "{\"query\":\"query a($n: String) { insert Note { title: $n } }\",\"params\":{\"n\":\"a%d-%d\"},"
                 "\"branch\":\"ag%d\"}",
                 a->id, i, a->id);
        r = post_json(a->s, NULL, "/graphs/g/mutate", body);
        a->ph_end[i] = phase;
        snprintf(what, sizeof what, "agent %d write %d", a->id, i);
        check_answer(&r, what, 0);
        a->status[i] = r.status;
        if (r.status == 200 && a->ph_start[i] == PH_UP) a->acked_after++;
        if (r.status == 200 && a->ph_start[i] == PH_BEFORE) a->acked_before++;
        http_free(&r);
        a->n++;
        if (i % 4 == 3) { /* now and then into main, as an agent finishing a task */
            r = merge(a->s, a->id);
            snprintf(what, sizeof what, "agent %d merge after write %d", a->id, i);
            check_answer(&r, what, 1);
            http_free(&r);
        }
        usleep(5000);
    }
    return NULL;
}

static int all(agent *ag, int after, int want)
{
    for (int k = 0; k < NAG; k++)
        if ((after ? ag[k].acked_after : ag[k].acked_before) < want) return 0;
    return 1;
}

static int wait_for(agent *ag, int after, int want, int max_ms)
{
    for (int t = 0; t < max_ms; t += 10) {
        if (all(ag, after, want)) return 1;
        usleep(10000);
    }
    return 0;
}

/* Every Note title on `branch` as "|t1|t2|…|", read through s. */
static char *titles(const srv *s, const char *branch)
{
    char body[256];
    snprintf(body, sizeof body, "{\"query\":\"query q() { match { $n: Note } return { $n.title } }\",\"branch\":\"%s\"}",
             branch);
    http_resp r = post_json(s, NULL, "/graphs/g/query", body);
    if (r.status != 200) fail_msg("read %s: %ld %s", branch, r.status, r.body);
    size_t cap = 16 + r.len, len = 1, i;
    char *out = malloc(cap);
    strcpy(out, "|");
    json_t *row;
    json_array_foreach(json_object_get(r.json, "rows"), i, row)
    {
        len += (size_t)snprintf(out + len, cap - len, "%s|", jstr(row, "n.title"));
    }
    http_free(&r);
    return out;
}

static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}

/* Each acknowledged note of `a` exactly once in `t`, each unacknowledged one at most once. */
static void check_notes(const agent *a, const char *t, const char *where)
{
    for (int i = 0; i < a->n; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "|a%d-%d|", a->id, i);
        int n = occurrences(t, needle);
        if (a->status[i] == 200 && n != 1)
            fail_msg("%s: acknowledged note a%d-%d is there %d times", where, a->id, i, n);
        if (n > 1) fail_msg("%s: note a%d-%d is there %d times", where, a->id, i, n);
    }
}

static size_t export_lines(og_db *db, const char *branch)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    og_read_opts at = {branch, NULL};
    og_status st = og_db_export(db, f, &at, NULL, 0);
    fclose(f);
    if (st != OG_OK) fail_msg("export of %s through a fresh handle: %s", branch, og_error_message());
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += buf[i] == '\n';
    free(buf);
    return lines;
}

static void test_store_down_and_back(void **state)
{
    (void)state;
    srv a, b;
    const char *args[] = {"--graph", graphspec, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_int_equal(srv_start(&a, logpath, args), 0);
    assert_int_equal(srv_start(&b, logpath, args), 0);
    pid_t pa = a.pid, pb = b.pid;
    static agent ag[NAG];
    pthread_t th[NAG];
    phase = PH_BEFORE;
    for (int k = 0; k < NAG; k++) {
        memset(&ag[k], 0, sizeof ag[k]);
        ag[k].s = k % 2 ? &b : &a;
        ag[k].id = k;
        pthread_create(&th[k], NULL, agent_loop, &ag[k]);
    }
    int ok = wait_for(ag, 0, 2, 60000);
    if (ok) {
        store_down();
        phase = PH_DOWN;
        /* until the agents have met the outage (a few 503s), at least 400 ms */
        for (int t = 0; t < 20000; t += 10) {
            pthread_mutex_lock(&mu);
            int seen = unavailable_seen;
            pthread_mutex_unlock(&mu);
            if (seen >= NAG && t >= 400) break;
            usleep(10000);
        }
        store_up();
        phase = PH_UP;
        ok = wait_for(ag, 1, 2, 60000) ? 2 : 1;
    }
    phase = PH_DONE;
    for (int k = 0; k < NAG; k++) pthread_join(th[k], NULL);
    if (bad_answer[0]) fail_msg("%s", bad_answer);
    if (ok == 0) fail_msg("the agents did not get two writes each acknowledged before the outage");
    if (ok == 1) fail_msg("after the store came back, not every agent got two writes acknowledged: no recovery");
    int total = 0, acked = 0, refused = 0;
    for (int k = 0; k < NAG; k++)
        for (int i = 0; i < ag[k].n; i++) {
            total++;
            acked += ag[k].status[i] == 200;
            refused += ag[k].status[i] == 503;
        }
    fprintf(stderr, "%d writes: %d acknowledged, %d answered 503 (%d 503s in all, merges included)\n", total, acked,
            refused, unavailable_seen);
    assert_true(refused > 0); /* the outage was met */
    /* the same two processes served throughout: recovery without a restart */
    assert_true(srv_alive(&a) && srv_alive(&b));
    assert_int_equal(a.pid, pa);
    assert_int_equal(b.pid, pb);

    /* every branch into main once more, the store up: each merge must succeed */
    for (int k = 0; k < NAG; k++) {
        http_resp r = {0};
        for (int attempt = 0; attempt < 10; attempt++) {
            http_free(&r);
            r = merge(k % 2 ? &b : &a, k);
            if (r.status != 409) break;
        }
        if (r.status != 200) fail_msg("final merge of ag%d: %ld %s", k, r.status, r.body);
        http_free(&r);
    }
    const srv *readers[2] = {&a, &b};
    for (int s = 0; s < 2; s++) {
        char *main_t = titles(readers[s], "main");
        for (int k = 0; k < NAG; k++) {
            char bname[16], where[64];
            snprintf(bname, sizeof bname, "ag%d", k);
            char *bt = titles(readers[s], bname);
            snprintf(where, sizeof where, "branch %s via replica %d", bname, s);
            check_notes(&ag[k], bt, where);
            snprintf(where, sizeof where, "main via replica %d", s);
            check_notes(&ag[k], main_t, where);
            /* main holds exactly what the branch holds (the final merge took all of it) */
            for (int i = 0; i < ag[k].n; i++) {
                char needle[64];
                snprintf(needle, sizeof needle, "|a%d-%d|", k, i);
                assert_int_equal(occurrences(main_t, needle), occurrences(bt, needle));
            }
            free(bt);
        }
        free(main_t);
    }
    assert_int_equal(srv_stop(&a), 0);
    assert_int_equal(srv_stop(&b), 0);

    /* a fresh process's view: every head whole (export reads every table at every head) */
    unsetenv("OG_STORE_COUNT");
    unsetenv("OG_STORE_DOWN_FILE");
    og_db *db = NULL;
    if (og_db_open(&db, uri, NULL) != OG_OK) fail_msg("open: %s", og_error_message());
    size_t main_lines = export_lines(db, "main");
    for (int k = 0; k < NAG; k++) {
        char bname[16];
        snprintf(bname, sizeof bname, "ag%d", k);
        export_lines(db, bname);
    }
    char *commits = NULL;
    if (og_db_commit_list(&commits, db, "main", 0) != OG_OK) fail_msg("commit list: %s", og_error_message());
    og_free(commits);
    og_db_close(db);
    fprintf(stderr, "main: %zu records after the outage\n", main_lines);
    assert_true(main_lines >= (size_t)acked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_down_and_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
