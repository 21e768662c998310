/*
 * test_store_watch.c — the local store's change watch (store.h og_store_watch): the count
 * stays put while nothing changes (reads included) and moves for every change another process
 * makes under a watched directory — a create-exclusive, a put, a delete, the directory going
 * away — seen by the first call after that process finished; a forked child never drains
 * the parent's events; bad prefixes and missing directories are typed errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/store.h"
#include "util/error.h"

#include "store_fixture.h"

static int setup(void **state) { return store_fixture_open(state, "/tmp/og-store-watch-XXXXXX"); }

enum { PUT_IF_ABSENT, PUT, DELETE };

/* Watches `prefix`, or skips the test on a file system the watch does not trust. */
#define WATCH(f, prefix)                                                                      \
    do {                                                                                      \
        og_status ws_ = og_store_watch((f)->st, prefix);                                      \
        if (ws_ == OG_ERR_UNSUPPORTED) {                                                      \
            printf("SKIP: %s cannot be watched here: %s\n", (f)->dir, og_error_message());   \
            skip();                                                                           \
        }                                                                                     \
        assert_int_equal(ws_, OG_OK);                                                         \
    } while (0)

/* Runs one store operation in another process (its own store handle) and waits for it. */
static void in_child(const fixture *f, int op, const char *key)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        og_store *st;
        if (og_store_open(&st, f->dir) != OG_OK) _exit(2);
        og_status s = op == PUT_IF_ABSENT ? og_store_put_if_absent(st, key, "x", 1)
                      : op == PUT         ? og_store_put(st, key, "y", 1)
                                          : og_store_delete(st, key);
        /* the child's own count: it must not take the parent's events with it */
        (void)og_store_change_count(st);
        og_store_close(st);
        _exit(s == OG_OK ? 0 : 1);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

static void bad_prefixes_are_typed_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_watch(f->st, "a"), OG_ERR_INVALID); /* not a directory */
    assert_int_equal(og_store_watch(f->st, ""), OG_ERR_INVALID);
    assert_int_equal(og_store_watch(f->st, "/a/"), OG_ERR_INVALID);
    assert_int_equal(og_store_watch(f->st, "missing/"), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_watch(NULL, "a/"), OG_ERR_INVALID);
    assert_int_equal(og_store_change_count(NULL), 0);
}

static void reads_do_not_move_the_count(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "a/x", "1", 1), OG_OK);
    WATCH(f, "a/");
    uint64_t c = og_store_change_count(f->st);
    assert_true(c != 0);
    og_bytes b = {0};
    assert_int_equal(og_store_get(f->st, "a/x", &b), OG_OK);
    og_bytes_free(&b);
    uint64_t size;
    assert_int_equal(og_store_head(f->st, "a/x", &size), OG_OK);
    assert_int_equal(og_store_head(f->st, "a/nope", &size), OG_ERR_NOT_FOUND);
    og_keylist kl = {0};
    assert_int_equal(og_store_list(f->st, "a/", NULL, 0, &kl), OG_OK);
    og_keylist_free(&kl);
    og_mapping *m;
    assert_int_equal(og_store_map(f->st, "a/x", &m), OG_OK);
    og_mapping_release(m);
    assert_int_equal(og_store_watch(f->st, "a/"), OG_OK); /* watching again changes nothing */
    assert_int_equal(og_store_change_count(f->st), c);
    assert_int_equal(og_store_change_count(f->st), c);
}

static void other_processes_changes_move_it(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "a/x", "1", 1), OG_OK);
    assert_int_equal(og_store_put(f->st, "a/w", "1", 1), OG_OK);
    WATCH(f, "a/");
    const struct {
        int op;
        const char *key;
    } steps[] = {{PUT_IF_ABSENT, "a/y"}, {PUT, "a/x"}, {DELETE, "a/y"}, {PUT_IF_ABSENT, "a/z"}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        uint64_t c = og_store_change_count(f->st);
        in_child(f, steps[i].op, steps[i].key);
        uint64_t after = og_store_change_count(f->st);
        assert_true(after != c);
        assert_int_equal(og_store_change_count(f->st), after); /* and then it stays */
    }
    /* a change made in this process moves it too */
    uint64_t c = og_store_change_count(f->st);
    assert_int_equal(og_store_put_if_absent(f->st, "a/v", "1", 1), OG_OK);
    assert_true(og_store_change_count(f->st) != c);
}

static void directory_removed_then_watched_again(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "d/x", "1", 1), OG_OK);
    WATCH(f, "d/");
    uint64_t c = og_store_change_count(f->st);
    in_child(f, DELETE, "d/x"); /* the last object: the directory goes with it */
    assert_true(og_store_change_count(f->st) != c);
    assert_int_equal(og_store_watch(f->st, "d/"), OG_ERR_NOT_FOUND);
    og_error_clear();
    /* a new directory of the same name is a new watch: its changes move the count again */
    assert_int_equal(og_store_put(f->st, "d/y", "1", 1), OG_OK);
    assert_int_equal(og_store_watch(f->st, "d/"), OG_OK);
    c = og_store_change_count(f->st);
    assert_int_equal(og_store_change_count(f->st), c);
    in_child(f, PUT_IF_ABSENT, "d/z");
    assert_true(og_store_change_count(f->st) != c);
}

static void many_events_are_drained(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_put(f->st, "m/0", "1", 1), OG_OK);
    WATCH(f, "m/");
    uint64_t c = og_store_change_count(f->st);
    char key[32];
    for (int i = 1; i <= 300; i++) { /* more events than one read of the queue holds */
        snprintf(key, sizeof key, "m/%d", i);
        assert_int_equal(og_store_put_if_absent(f->st, key, "1", 1), OG_OK);
    }
    uint64_t after = og_store_change_count(f->st);
    assert_true(after != c);
    assert_int_equal(og_store_change_count(f->st), after); /* all drained: it stays */
}

int main(void)
{
#ifndef __linux__
    printf("SKIP: the change watch needs Linux inotify\n");
    return 0;
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(bad_prefixes_are_typed_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(reads_do_not_move_the_count, setup, teardown),
        cmocka_unit_test_setup_teardown(other_processes_changes_move_it, setup, teardown),
        cmocka_unit_test_setup_teardown(directory_removed_then_watched_again, setup, teardown),
        cmocka_unit_test_setup_teardown(many_events_are_drained, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
