/*
 * test_store_race.c — the store's compare-and-swap under real concurrency, and crash safety
 * of put / put_if_absent.
 *
 *   - 8 forked processes (and, separately, 8 threads sharing one handle) released together
 *     race put_if_absent on one key: exactly one wins, the rest get OG_ERR_ALREADY_EXISTS,
 *     and the key holds the winner's bytes, whole; a reader polling meanwhile never sees a
 *     partial object.  Repeated on 20 keys.
 *   - A child killed by an OG_FAULT crash point in the middle of put / put_if_absent leaves
 *     the key absent (or, for an overwrite, unchanged), unlisted, and reusable.
 *
 * Uses $OG_TEST_STORE_URI when set, else a fresh mkdtemp directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <dirent.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/store.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/id.h"

#define RACERS 8
#define ROUNDS 20
#define BODY 65536 /* big enough that a torn write would show */

enum { EXIT_WON = 0, EXIT_LOST = 1, EXIT_ERROR = 2 };

typedef struct fixture {
    char dir[64];
    char uri[1024];
    char ns[128];
    int local;
    og_store *st;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    const char *uri = getenv("OG_TEST_STORE_URI");
    if (uri && *uri) {
        snprintf(f->uri, sizeof f->uri, "%s", uri);
    } else {
        strcpy(f->dir, "/tmp/og-store-race-XXXXXX");
        if (!mkdtemp(f->dir)) return -1;
        snprintf(f->uri, sizeof f->uri, "%s", f->dir);
    }
    if (og_store_open(&f->st, f->uri) != OG_OK) {
        fprintf(stderr, "open %s: %s\n", f->uri, og_error_message());
        return -1;
    }
    f->local = og_store_is_local(f->st);
    char u[OG_UUID_LEN + 1];
    if (og_uuid_new(u) != OG_OK) return -1;
    snprintf(f->ns, sizeof f->ns, "race-%s/", u);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    og_keylist l;
    if (og_store_list(f->st, f->ns, NULL, 0, &l) == OG_OK) {
        for (size_t i = 0; i < l.count; i++) og_store_delete(f->st, l.keys[i]);
        og_keylist_free(&l);
    }
    og_store_close(f->st);
    if (f->dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
        if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", f->dir);
    }
    free(f);
    return 0;
}

/* Racer i's body: a header naming it, then a byte pattern only it uses. */
static void fill_body(uint8_t *b, int round, int i)
{
    for (size_t k = 0; k < BODY; k++) b[k] = (uint8_t)(i * 31 + (int)(k % 97) + round);
    snprintf((char *)b, 32, "racer %d round %d", i, round);
}

/* ---- processes ---------------------------------------------------------------------------- */

/* In the child: open our own handle, wait for the start signal, race, report by exit code. */
static void racer_child(const fixture *f, const char *key, int round, int i, int start_fd)
{
    og_store *st;
    if (og_store_open(&st, f->uri) != OG_OK) _exit(EXIT_ERROR);
    static uint8_t body[BODY];
    fill_body(body, round, i);
    char c;
    ssize_t r;
    do {
        r = read(start_fd, &c, 1); /* returns 0 (EOF) when the parent closes the write end */
    } while (r < 0 && errno == EINTR);
    og_status s = og_store_put_if_absent(st, key, body, BODY);
    og_store_close(st);
    if (s == OG_OK) _exit(EXIT_WON);
    if (s == OG_ERR_ALREADY_EXISTS) _exit(EXIT_LOST);
    fprintf(stderr, "racer %d: %s\n", i, og_error_message());
    _exit(EXIT_ERROR);
}

/* A reader racing the writers: polls the key until it appears and checks that the first
 * bytes it ever sees are one racer's whole body (never a prefix, never a mix). */
static void reader_child(const fixture *f, const char *key, int round, int start_fd)
{
    og_store *st;
    if (og_store_open(&st, f->uri) != OG_OK) _exit(EXIT_ERROR);
    static uint8_t want[BODY];
    char c;
    ssize_t r;
    do {
        r = read(start_fd, &c, 1);
    } while (r < 0 && errno == EINTR);
    int64_t deadline = og_now_ms() + 5000;
    for (;;) {
        og_bytes b = {NULL, 0};
        og_status s = og_store_get(st, key, &b);
        if (s == OG_OK) {
            int i = -1;
            if (b.len == BODY && sscanf((const char *)b.data, "racer %d", &i) == 1 && i >= 0 &&
                i < RACERS) {
                fill_body(want, round, i);
                if (memcmp(b.data, want, BODY) == 0) _exit(EXIT_WON);
            }
            fprintf(stderr, "reader: saw a partial object (%zu bytes)\n", b.len);
            _exit(EXIT_ERROR);
        }
        if (s != OG_ERR_NOT_FOUND || og_now_ms() > deadline) _exit(EXIT_ERROR);
    }
}

static void processes_race_put_if_absent_and_exactly_one_wins_whole(void **state)
{
    fixture *f = *state;
    uint8_t *want = malloc(BODY);
    assert_non_null(want);
    for (int round = 0; round < ROUNDS; round++) {
        char key[256];
        snprintf(key, sizeof key, "%srefs/main/%020d.json", f->ns, round);
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid_t pids[RACERS];
        for (int i = 0; i < RACERS; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                close(p[1]);
                racer_child(f, key, round, i, p[0]);
            }
        }
        pid_t reader = fork();
        assert_true(reader >= 0);
        if (reader == 0) {
            close(p[1]);
            reader_child(f, key, round, p[0]);
        }
        close(p[0]);
        close(p[1]); /* go */
        int won = 0, lost = 0, winner = -1;
        for (int i = 0; i < RACERS; i++) {
            int ws;
            assert_int_equal(waitpid(pids[i], &ws, 0), pids[i]);
            assert_true(WIFEXITED(ws));
            int code = WEXITSTATUS(ws);
            if (code == EXIT_WON) {
                won++;
                winner = i;
            } else if (code == EXIT_LOST) {
                lost++;
            } else {
                fail_msg("round %d: racer %d failed (exit %d)", round, i, code);
            }
        }
        int rs;
        assert_int_equal(waitpid(reader, &rs, 0), reader);
        if (!WIFEXITED(rs) || WEXITSTATUS(rs) != EXIT_WON) fail_msg("round %d: the reader failed", round);
        if (won != 1) fail_msg("round %d: %d winners", round, won);
        assert_int_equal(lost, RACERS - 1);
        og_bytes b = {NULL, 0};
        assert_int_equal(og_store_get(f->st, key, &b), OG_OK);
        assert_int_equal(b.len, BODY);
        fill_body(want, round, winner);
        if (memcmp(b.data, want, BODY) != 0) fail_msg("round %d: content is not racer %d's", round, winner);
        og_bytes_free(&b);
    }
    free(want);
    /* Exactly the ROUNDS keys exist, no temp objects. */
    og_keylist l;
    assert_int_equal(og_store_list(f->st, f->ns, NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, ROUNDS);
    og_keylist_free(&l);
}

/* ---- threads on one handle ---------------------------------------------------------------- */

typedef struct thread_arg {
    og_store *st;
    const char *key;
    int round, i;
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    int *go;
    og_status result;
    uint8_t body[BODY];
} thread_arg;

static void *racer_thread(void *p)
{
    thread_arg *a = p;
    fill_body(a->body, a->round, a->i);
    pthread_mutex_lock(a->mu);
    while (!*a->go) pthread_cond_wait(a->cv, a->mu);
    pthread_mutex_unlock(a->mu);
    a->result = og_store_put_if_absent(a->st, a->key, a->body, BODY);
    return NULL;
}

static void threads_sharing_a_handle_race_put_if_absent_and_exactly_one_wins(void **state)
{
    fixture *f = *state;
    thread_arg *args = calloc(RACERS, sizeof *args);
    assert_non_null(args);
    for (int round = 0; round < 5; round++) {
        char key[256];
        snprintf(key, sizeof key, "%sthreads/%d", f->ns, round);
        pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
        int go = 0;
        pthread_t th[RACERS];
        for (int i = 0; i < RACERS; i++) {
            args[i].st = f->st;
            args[i].key = key;
            args[i].round = round;
            args[i].i = i;
            args[i].mu = &mu;
            args[i].cv = &cv;
            args[i].go = &go;
            assert_int_equal(pthread_create(&th[i], NULL, racer_thread, &args[i]), 0);
        }
        pthread_mutex_lock(&mu);
        go = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        int won = 0, winner = -1;
        for (int i = 0; i < RACERS; i++) {
            assert_int_equal(pthread_join(th[i], NULL), 0);
            if (args[i].result == OG_OK) {
                won++;
                winner = i;
            } else {
                assert_int_equal(args[i].result, OG_ERR_ALREADY_EXISTS);
            }
        }
        assert_int_equal(won, 1);
        og_bytes b = {NULL, 0};
        assert_int_equal(og_store_get(f->st, key, &b), OG_OK);
        assert_int_equal(b.len, BODY);
        assert_memory_equal(b.data, args[winner].body, BODY);
        og_bytes_free(&b);
    }
    free(args);
}

/* ---- crashes ------------------------------------------------------------------------------ */

/* Runs put (cas = 0) or put_if_absent (cas = 1) of `key` in a child with OG_FAULT=point and
 * checks that it died at the crash point. */
static void crash_during_put(const fixture *f, const char *key, int cas, const char *point)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        og_store *st;
        if (og_store_open(&st, f->uri) != OG_OK) _exit(EXIT_ERROR);
        if (setenv("OG_FAULT", point, 1) != 0) _exit(EXIT_ERROR);
        static uint8_t body[BODY];
        memset(body, 'C', sizeof body);
        og_status s = cas ? og_store_put_if_absent(st, key, body, BODY)
                          : og_store_put(st, key, body, BODY);
        (void)s;
        _exit(EXIT_WON); /* reaching here means the crash point was never passed */
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws) != OG_FAULT_EXIT_CODE)
        fail_msg("%s with OG_FAULT=%s: child exited %d, not at the crash point", cas ? "put_if_absent" : "put",
                 point, WEXITSTATUS(ws));
}

static int listed(const fixture *f, const char *key)
{
    og_keylist l;
    assert_int_equal(og_store_list(f->st, f->ns, NULL, 0, &l), OG_OK);
    int found = 0;
    for (size_t i = 0; i < l.count; i++) {
        if (strcmp(l.keys[i], key) == 0) found = 1;
        if (strstr(l.keys[i], ".tmp-")) fail_msg("list shows temp object %s", l.keys[i]);
    }
    og_keylist_free(&l);
    return found;
}

/* Local stores only: the crash really left a temp file beside the key (so hiding it is what
 * the list check above exercised). */
static void assert_temp_left_behind(const fixture *f, const char *key)
{
    if (!f->local) return;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", og_store_uri(f->st), key);
    *strrchr(dir, '/') = '\0';
    DIR *d = opendir(dir);
    assert_non_null(d);
    int temps = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, ".tmp-", 5) == 0) temps++;
    closedir(d);
    assert_true(temps >= 1);
}

static void assert_body(const fixture *f, const char *key, const void *want, size_t n)
{
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(f->st, key, &b), OG_OK);
    assert_int_equal(b.len, n);
    assert_memory_equal(b.data, want, n);
    og_bytes_free(&b);
}

static void interrupted_put_leaves_the_key_absent_and_reusable(void **state)
{
    fixture *f = *state;
    const char *points[] = {"store.put.after_write", "store.put.before_publish"};
    for (int pi = 0; pi < 2; pi++) {
        char key[256];
        snprintf(key, sizeof key, "%sdata/put-%d.lance", f->ns, pi);
        crash_during_put(f, key, 0, points[pi]);
        og_bytes b = {NULL, 0};
        assert_int_equal(og_store_get(f->st, key, &b), OG_ERR_NOT_FOUND);
        uint64_t sz;
        assert_int_equal(og_store_head(f->st, key, &sz), OG_ERR_NOT_FOUND);
        assert_false(listed(f, key));
        assert_temp_left_behind(f, key);
        assert_int_equal(og_store_put(f->st, key, "fresh", 5), OG_OK);
        assert_body(f, key, "fresh", 5);
        assert_true(listed(f, key));
    }
}

static void interrupted_overwriting_put_leaves_the_old_content(void **state)
{
    fixture *f = *state;
    const char *points[] = {"store.put.after_write", "store.put.before_publish"};
    for (int pi = 0; pi < 2; pi++) {
        char key[256];
        snprintf(key, sizeof key, "%sdata/over-%d", f->ns, pi);
        assert_int_equal(og_store_put(f->st, key, "old", 3), OG_OK);
        crash_during_put(f, key, 0, points[pi]);
        assert_body(f, key, "old", 3);
        assert_true(listed(f, key));
    }
}

static void interrupted_put_if_absent_leaves_the_key_absent_so_a_later_one_wins(void **state)
{
    fixture *f = *state;
    const char *points[] = {"store.put.after_write", "store.put.before_publish"};
    for (int pi = 0; pi < 2; pi++) {
        char key[256];
        snprintf(key, sizeof key, "%srefs/main/%020d.json", f->ns, pi);
        crash_during_put(f, key, 1, points[pi]);
        og_bytes b = {NULL, 0};
        assert_int_equal(og_store_get(f->st, key, &b), OG_ERR_NOT_FOUND);
        assert_false(listed(f, key));
        assert_temp_left_behind(f, key);
        assert_int_equal(og_store_put_if_absent(f->st, key, "later", 5), OG_OK);
        assert_body(f, key, "later", 5);
        assert_int_equal(og_store_put_if_absent(f->st, key, "third", 5), OG_ERR_ALREADY_EXISTS);
        assert_body(f, key, "later", 5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(processes_race_put_if_absent_and_exactly_one_wins_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_sharing_a_handle_race_put_if_absent_and_exactly_one_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(interrupted_put_leaves_the_key_absent_and_reusable, setup, teardown),
        cmocka_unit_test_setup_teardown(interrupted_overwriting_put_leaves_the_old_content, setup, teardown),
        cmocka_unit_test_setup_teardown(interrupted_put_if_absent_leaves_the_key_absent_so_a_later_one_wins, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
