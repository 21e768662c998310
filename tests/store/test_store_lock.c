/*
 * test_store_lock.c — the store's advisory cross-process lock (store.h og_store_lock), which
 * the graph layer takes per branch so that writers in different processes queue instead of
 * losing publishes to each other (docs/graph-authority.md §2): a held lock keeps another
 * process (and another handle of this one) waiting, a bounded wait ends in a typed conflict,
 * release (or the holder's death) lets the next one in, different names do not exclude each
 * other, the lock file is never listed as an object, a store read as S3 cannot lock, and bad
 * names are refused.
 */
#include <setjmp.h>
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

#include "store/store.h"
#include "store/store_count.h"
#include "util/error.h"

#include "store_fixture.h"

static int setup(void **state) { return store_fixture_open(state, "/tmp/og-store-lock-XXXXXX"); }

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void held_lock_excludes_other_handles_until_released(void **state)
{
    fixture *f = *state;
    og_store *other;
    assert_int_equal(og_store_open(&other, f->dir), OG_OK);
    int a = -1, b = -1;
    assert_int_equal(og_store_lock(f->st, "b.main", 0, &a), OG_OK);
    assert_true(a >= 0);
    double t0 = now_ms();
    assert_int_equal(og_store_lock(other, "b.main", 50, &b), OG_ERR_CONFLICT);
    assert_true(now_ms() - t0 >= 45); /* it waited its bound, no longer needed */
    assert_int_equal(b, -1);
    assert_non_null(strstr(og_error_message(), "b.main"));
    assert_int_equal(og_store_lock(other, "b.dev", 0, &b), OG_OK); /* another name: free */
    og_store_unlock(b);
    og_store_unlock(a);
    assert_int_equal(og_store_lock(other, "b.main", 0, &b), OG_OK);
    og_store_unlock(b);
    og_store_close(other);
}

/* A child takes the lock and holds it 150 ms: the parent's wait ends when the child lets go
 * (here by dying, which is how a SIGKILLed holder releases it too). */
static void another_process_holding_it_makes_us_wait(void **state)
{
    fixture *f = *state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        og_store *st;
        int fd;
        if (og_store_open(&st, f->dir) != OG_OK || og_store_lock(st, "b.main", 0, &fd) != OG_OK) _exit(2);
        if (write(p[1], "x", 1) != 1) _exit(3);
        usleep(150 * 1000);
        _exit(0); /* no unlock: the process's end releases it */
    }
    char c;
    assert_int_equal(read(p[0], &c, 1), 1);
    double t0 = now_ms();
    int fd = -1;
    assert_int_equal(og_store_lock(f->st, "b.main", 5000, &fd), OG_OK);
    double waited = now_ms() - t0;
    assert_true(waited >= 100 && waited < 4000);
    og_store_unlock(fd);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(p[0]);
    close(p[1]);
}

static void lock_file_is_not_an_object(void **state)
{
    fixture *f = *state;
    int fd;
    assert_int_equal(og_store_lock(f->st, "b.agent%2F1", 0, &fd), OG_OK);
    og_store_unlock(fd);
    assert_int_equal(og_store_put(f->st, "x", "1", 1), OG_OK);
    og_keylist l;
    assert_int_equal(og_store_list(f->st, "", NULL, 0, &l), OG_OK);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.keys[0], "x");
    og_keylist_free(&l);
}

static void remote_store_cannot_lock_and_bad_names_are_refused(void **state)
{
    fixture *f = *state;
    int fd = 7;
    assert_int_equal(og_store_lock(f->st, "", 0, &fd), OG_ERR_INVALID);
    assert_int_equal(fd, -1);
    assert_int_equal(og_store_lock(f->st, "a/b", 0, &fd), OG_ERR_INVALID);
    char longname[260];
    memset(longname, 'a', 246);
    longname[246] = '\0';
    assert_int_equal(og_store_lock(f->st, longname, 0, &fd), OG_ERR_INVALID);
    longname[245] = '\0';
    assert_int_equal(og_store_lock(f->st, longname, 0, &fd), OG_OK); /* the longest allowed */
    og_store_unlock(fd);
    assert_int_equal(og_store_count_install(f->st, 0, 1), OG_OK); /* read as S3 */
    assert_int_equal(og_store_lock(f->st, "b.main", 0, &fd), OG_ERR_UNSUPPORTED);
    assert_int_equal(fd, -1);
    og_store_counts c;
    og_store_count_get(f->st, &c);
    assert_int_equal(c.total, 0); /* never a request */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(held_lock_excludes_other_handles_until_released, setup, teardown),
        cmocka_unit_test_setup_teardown(another_process_holding_it_makes_us_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(lock_file_is_not_an_object, setup, teardown),
        cmocka_unit_test_setup_teardown(remote_store_cannot_lock_and_bad_names_are_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
