/*
 * test_cli_analyze.c — `omnigraph analyze`: text and JSON output, options, usage errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

/* Runs `omnigraph <args>` with stderr merged into stdout; returns the exit status. */
static int run(const char *args, char *out, size_t cap)
{
    const char *bin = getenv("OG_BINARY_DIR");
    if (!bin) bin = OG_BINARY_DIR;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/omnigraph' %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void prints_terms(void **state)
{
    (void)state;
    char out[4096];
    assert_int_equal(run("analyze 'The Running' dogs", out, sizeof out), 0);
    assert_string_equal(out, "0\tthe\tstop\n1\trun\n2\tdog\n");
    assert_int_equal(run("analyze --json --no-stem \"Don't Panic\"", out, sizeof out), 0);
    assert_string_equal(out, "{\"tokens\":[{\"term\":\"don't\",\"position\":0,\"stop\":false},"
                             "{\"term\":\"panic\",\"position\":1,\"stop\":false}],\"words\":2}\n");
    assert_int_equal(run("analyze --no-stop the end", out, sizeof out), 0);
    assert_string_equal(out, "0\tthe\n1\tend\n");
}

static void usage_errors(void **state)
{
    (void)state;
    char out[4096];
    assert_int_equal(run("analyze", out, sizeof out), 2);
    assert_int_equal(run("analyze --bogus x", out, sizeof out), 2);
    assert_int_equal(run("analyze --language", out, sizeof out), 2);
    assert_int_equal(run("analyze --language klingon words", out, sizeof out), 1);
    assert_non_null(strstr(out, "klingon"));
    assert_int_equal(run("analyze --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: omnigraph analyze"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prints_terms),
        cmocka_unit_test(usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
