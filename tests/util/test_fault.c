/*
 * test_fault.c — the OG_FAULT list syntax (util/fault.h), which every crash test relies on:
 * a plain name exits at the first pass of the point, "name#N" at the N-th pass (counted per
 * name, other points not counted), a malformed count never fires, and OG_FAULT_ERROR ignores
 * counted entries.  Each case runs in a child that reports each pass on a pipe before it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fault.h"

/* Passes point "a" five times (and "b" between them) in a child with OG_FAULT = list; returns
 * the pass of "a" the child died at (0: it never did) and its exit code in *code. */
static int died_at(const char *list, int *code)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        setenv("OG_FAULT", list, 1);
        for (char i = 1; i <= 5; i++) {
            og_fault_point("b");
            if (write(fds[1], &i, 1) != 1) _exit(2);
            og_fault_point("a");
        }
        _exit(0);
    }
    close(fds[1]);
    char last = 0, c;
    while (read(fds[0], &c, 1) == 1) last = c;
    close(fds[0]);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    *code = WEXITSTATUS(ws);
    return *code == OG_FAULT_EXIT_CODE ? last : 0;
}

static void counted_entries_fire_at_their_pass(void **state)
{
    (void)state;
    int code;
    assert_int_equal(died_at("a", &code), 1);
    assert_int_equal(died_at("a#1", &code), 1);
    assert_int_equal(died_at("a#3", &code), 3);
    assert_int_equal(died_at("x,a#5", &code), 5);
    assert_int_equal(died_at("a#6", &code), 0); /* never reached */
    assert_int_equal(code, 0);
    assert_int_equal(died_at("a#0,a#x,a#,ab#1", &code), 0); /* malformed, or another name */
    assert_int_equal(code, 0);
    assert_int_equal(died_at("b#4", &code), 4 - 1); /* "b" dies before the 4th report */
}

static void error_injection_ignores_counts(void **state)
{
    (void)state;
    setenv("OG_FAULT_ERROR", "p#1,q", 1);
    assert_false(og_fault_error("p"));
    assert_true(og_fault_error("q"));
    unsetenv("OG_FAULT_ERROR");
    assert_false(og_fault_error("q"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counted_entries_fire_at_their_pass),
        cmocka_unit_test(error_injection_ignores_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
