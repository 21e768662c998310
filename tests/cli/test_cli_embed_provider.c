/*
 * test_cli_embed_provider.c — `omnigraph embed` and text queries as a user runs them, against
 * the loopback provider of tests/embed/provider_server.h (in this process; the CLI runs as a
 * child and talks to it over 127.0.0.1):
 *   - the API key never appears in anything the CLI prints (stdout and stderr of successful and
 *     failing runs, with --progress and --json) nor in any file it leaves (graph, cache, TMPDIR);
 *   - a failed run (quota part-way, --if-commit) leaves the graph's files byte-for-byte as they
 *     were and no temporary file behind, and says which typed error it was;
 *   - a run killed with SIGKILL mid-way publishes nothing and leaves no temporary file, and the
 *     rerun asks the provider only for the texts whose answers had not yet landed;
 *   - a slow provider still gets progress lines on stderr while a chunk is in flight.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"
#include "../embed/provider_server.h"

#define KEY "sk-cli-SECRET-5f3a9e1c77d04b2a"

static ps_server srv;
static char env[1024]; /* the provider's environment for a command line */

static void set_env(const char *extra)
{
    snprintf(env, sizeof env,
             "OMNIGRAPH_HOME=%s/home TMPDIR=%s/tmp OMNIGRAPH_EMBED_PROVIDER=openai-compatible "
             "OMNIGRAPH_EMBED_BASE_URL=%s/v1 OPENROUTER_API_KEY=" KEY " OMNIGRAPH_EMBED_RETRY_BACKOFF_MS=1 %s",
             dir, dir, srv.base, extra ? extra : "");
}

/* A graph of six documents without vectors in dir/g. */
static int setup(void **state)
{
    (void)state;
    if (cli_scratch_new("/tmp/og-cli-embedp-XXXXXX")) return -1;
    ps_reset(&srv);
    write_file("s.pg", "node Doc { slug: String @key  body: String?  vec: Vector(4)? @embed(\"body\") }\n");
    write_file("d.jsonl", "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"graph databases\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"vector search\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"body\":\"columnar storage\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"d\",\"body\":\"time travel\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"e\",\"body\":\"branch and merge\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"f\",\"body\":\"typed schemas\"}}\n");
    if (run(NULL, 0, "mkdir -p %s/tmp %s/home && %s init --quiet --schema %s/s.pg %s/g && "
                     "%s load --quiet --mode overwrite --data %s/d.jsonl %s/g",
            dir, dir, bin, dir, dir, bin, dir, dir))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

/* Every file of the graph with its checksum, sorted: equal strings = nothing changed on disk. */
static void graph_fingerprint(char *out, size_t cap)
{
    assert_int_equal(run(out, cap, "cd %s/g && find . -type f -exec md5sum {} + | sort", dir), 0);
    assert_true(strlen(out) > 0);
}

static void assert_tmp_empty(void)
{
    char out[1024];
    assert_int_equal(run(out, sizeof out, "ls -A %s/tmp", dir), 0);
    assert_string_equal(out, "");
}

static void assert_no_vectors(void)
{
    char out[8192];
    assert_int_equal(run(out, sizeof out, "%s export %s/g", bin, dir), 0);
    assert_null(strstr(out, "\"vec\":["));
}

static void key_never_in_any_output_or_file(void **state)
{
    (void)state;
    static char all[1 << 16], out[8192];
    all[0] = 0;
#define KEEP(rc_want, ...)                                                                                                 \
    do {                                                                                                               \
        assert_int_equal(run(out, sizeof out, __VA_ARGS__), rc_want);                                                  \
        strncat(all, out, sizeof all - strlen(all) - 1);                                                               \
    } while (0)
    /* the provider refuses the key and quotes it back: an `auth` error, the key redacted */
    set_env("OMNIGRAPH_EMBED_RETRY_ATTEMPTS=2");
    srv.mode = PS_ECHO_KEY_401;
    KEEP(1, "%s %s embed --progress --json %s/g 2>&1", env, bin, dir);
    assert_non_null(strstr(out, "omnigraph embed: auth: "));
    assert_non_null(strstr(out, "[redacted]"));
    /* ... and the same for a text query */
    KEEP(1, "%s %s query --store %s/g -e 'query q($t: String) { match { $d: Doc } return { $d.slug } "
            "order { nearest($d.vec, $t) } limit 2 }' --params '{\"t\": \"vector search\"}' 2>&1",
         env, bin, dir);
    assert_non_null(strstr(out, "[redacted]"));
    /* 5xx until the attempts run out, a per-request timeout, a refused connection: `io` */
    srv.mode = PS_OK;
    srv.fail_next = 100;
    srv.fail_status = 500;
    KEEP(1, "%s %s embed --json %s/g 2>&1", env, bin, dir);
    assert_non_null(strstr(out, "omnigraph embed: io: "));
    assert_non_null(strstr(out, "after 2 attempts"));
    ps_reset(&srv);
    srv.delay_ms = 600;
    set_env("OMNIGRAPH_EMBED_RETRY_ATTEMPTS=1 OMNIGRAPH_EMBED_TIMEOUT_MS=100");
    KEEP(1, "%s %s embed %s/g 2>&1", env, bin, dir);
    assert_non_null(strstr(out, "OMNIGRAPH_EMBED_TIMEOUT_MS"));
    set_env("OMNIGRAPH_EMBED_RETRY_ATTEMPTS=1 OMNIGRAPH_EMBED_BASE_URL=http://127.0.0.1:1/v1");
    KEEP(1, "%s %s embed %s/g 2>&1", env, bin, dir);
    assert_non_null(strstr(out, "omnigraph embed: io: "));
    usleep(700 * 1000); /* the slow handler of the timed-out request finishes */
    /* a successful run with every output on, then a text query that uses the cache */
    ps_reset(&srv);
    set_env(NULL);
    KEEP(0, "%s %s embed --progress --json %s/g 2>&1", env, bin, dir);
    assert_non_null(strstr(out, "\"embedded_records\": 6"));
    assert_string_equal(srv.reqs[0].auth, "Bearer " KEY); /* the key did go where it belongs */
    KEEP(0, "%s %s query --store %s/g -e 'query q($t: String) { match { $d: Doc } return { $d.slug } "
            "order { nearest($d.vec, $t) } limit 1 }' --params '{\"t\": \"vector search\"}' 2>&1",
         env, bin, dir);
    assert_non_null(strstr(out, "b"));
#undef KEEP
    assert_null(strstr(all, KEY));
    assert_null(strstr(all, "SECRET"));
    /* nor in any file: the graph (commits, manifests), the embedding cache, temporary files */
    assert_int_equal(run(out, sizeof out, "grep -rl SECRET %s/g %s/home %s/tmp", dir, dir, dir), 1);
    assert_string_equal(out, "");
    assert_tmp_empty();
}

static void failed_runs_change_nothing_and_leave_no_files(void **state)
{
    (void)state;
    char before[8192], after[8192], out[8192];
    graph_fingerprint(before, sizeof before);
    /* quota part-way: two answers land, then 429 until the (single) attempt is spent */
    set_env("OMNIGRAPH_EMBED_BATCH_INPUTS=1 OMNIGRAPH_EMBED_CONCURRENCY=1 OMNIGRAPH_EMBED_RETRY_ATTEMPTS=1");
    srv.ok_left = 2;
    assert_int_equal(run(out, sizeof out, "%s %s embed --json %s/g 2>&1", env, bin, dir), 1);
    assert_non_null(strstr(out, "omnigraph embed: throttled: "));
    assert_null(strstr(out, "\"embedded_records\"")); /* no summary for a run that failed */
    graph_fingerprint(after, sizeof after);
    assert_string_equal(before, after);
    assert_tmp_empty();
    assert_no_vectors();
    /* --if-commit on a head that is not the branch's: exit 4, nothing written */
    ps_reset(&srv);
    assert_int_equal(run(out, sizeof out, "%s %s embed --if-commit 01ZZZZZZZZZZZZZZZZZZZZZZZZ %s/g 2>&1", env, bin, dir),
                     4);
    assert_non_null(strstr(out, "omnigraph embed: precondition_failed: "));
    assert_int_equal(srv.nreq, 0);
    /* a --select that names no embedding target: a usage error before any request */
    assert_int_equal(run(out, sizeof out, "%s %s embed --select Nope:slug=a %s/g 2>&1", env, bin, dir), 1);
    assert_non_null(strstr(out, "omnigraph embed: invalid: "));
    assert_int_equal(srv.nreq, 0);
    graph_fingerprint(after, sizeof after);
    assert_string_equal(before, after);
    assert_tmp_empty();
    /* the rerun embeds only the four texts still missing */
    set_env("OMNIGRAPH_EMBED_BATCH_INPUTS=1 OMNIGRAPH_EMBED_CONCURRENCY=1");
    assert_int_equal(run(out, sizeof out, "%s %s embed --json %s/g", env, bin, dir), 0);
    assert_int_equal(srv.nreq, 4);
    assert_non_null(strstr(out, "\"cache_hits\": 2"));
    assert_non_null(strstr(out, "\"embedded_records\": 6"));
    assert_tmp_empty();
}

static int64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void killed_mid_run_then_resumed(void **state)
{
    (void)state;
    char before[8192], after[8192], out[8192];
    graph_fingerprint(before, sizeof before);
    srv.delay_ms = 300;
    char home[128], tmp[128], base[128], g[128];
    snprintf(home, sizeof home, "%s/home", dir);
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    snprintf(base, sizeof base, "%s/v1", srv.base);
    snprintf(g, sizeof g, "%s/g", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("OMNIGRAPH_HOME", home, 1);
        setenv("TMPDIR", tmp, 1);
        setenv("OMNIGRAPH_EMBED_PROVIDER", "openai-compatible", 1);
        setenv("OMNIGRAPH_EMBED_BASE_URL", base, 1);
        setenv("OPENROUTER_API_KEY", KEY, 1);
        setenv("OMNIGRAPH_EMBED_BATCH_INPUTS", "1", 1);
        setenv("OMNIGRAPH_EMBED_CONCURRENCY", "1", 1);
        execl(bin, "omnigraph", "embed", "--quiet", g, (char *)NULL);
        _exit(127);
    }
    /* the third request arrives only after the second answer landed (one at a time) */
    int64_t t0 = ms_now();
    for (;;) {
        pthread_mutex_lock(&srv.mu);
        int n = srv.nreq;
        pthread_mutex_unlock(&srv.mu);
        if (n >= 3) break;
        assert_true(ms_now() - t0 < 20000);
        usleep(5000);
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    usleep(400 * 1000); /* the in-flight handler finishes */
    graph_fingerprint(after, sizeof after);
    assert_string_equal(before, after); /* nothing was published */
    assert_no_vectors();
    assert_tmp_empty(); /* the run's temporary file had no name to leave behind */
    ps_reset(&srv);
    set_env(NULL);
    assert_int_equal(run(out, sizeof out, "%s %s embed --json %s/g", env, bin, dir), 0);
    assert_int_equal(srv.nreq, 1); /* one batch for the four texts whose answers never landed */
    assert_non_null(strstr(out, "\"cache_hits\": 2"));
    assert_non_null(strstr(out, "\"embedded_records\": 6"));
    json_t *b = json_loads(srv.reqs[0].body, 0, NULL);
    assert_int_equal(json_array_size(json_object_get(b, "input")), 4);
    json_decref(b);
    assert_int_equal(run(out, sizeof out, "%s export %s/g | grep -c '\"vec\":\\['", bin, dir), 0);
    assert_string_equal(out, "6\n");
}

static void slow_provider_shows_progress(void **state)
{
    (void)state;
    char out[8192];
    srv.delay_ms = 700;
    set_env("OMNIGRAPH_EMBED_BATCH_INPUTS=1 OMNIGRAPH_EMBED_CONCURRENCY=1");
    assert_int_equal(run(out, sizeof out, "%s %s embed --quiet --progress %s/g 2>&1 >/dev/null", env, bin, dir), 0);
    /* ~4.2 s in one chunk: lines at ~2 s and ~4 s while requests are in flight, then the last */
    assert_non_null(strstr(out, " texts of the current chunk)\n"));
    assert_non_null(strstr(out, "omnigraph embed: 6 records read, 6 selected, 6 embedded, 0 cleaned\n"));
}

int main(void)
{
    if (ps_start(&srv)) {
        fprintf(stderr, "cannot start the loopback provider\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(key_never_in_any_output_or_file, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_runs_change_nothing_and_leave_no_files, setup, teardown),
        cmocka_unit_test_setup_teardown(killed_mid_run_then_resumed, setup, teardown),
        cmocka_unit_test_setup_teardown(slow_provider_shows_progress, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ps_stop(&srv);
    return rc;
}
