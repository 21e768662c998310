/*
 * test_cli_firsthour.c — what a new user meets first (issue 16): `omnigraph version` and its
 * spellings, `omnigraph help VERB`, and the CLI's answers to the mistakes a new user makes.
 * Every case checks the exit code, the message and that the graph (or the disk) is unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli_run.h"

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-cli16-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void version_spellings_print_release_storage_and_build(void **state)
{
    (void)state;
    char a[4096], b[4096], c[4096];
    assert_int_equal(run(a, sizeof a, "%s version", bin), 0);
    assert_int_equal(run(b, sizeof b, "%s --version", bin), 0);
    assert_int_equal(run(c, sizeof c, "%s -v", bin), 0);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    assert_true(strncmp(a, "omnigraph 0.", 12) == 0);
    assert_non_null(strstr(a, "\nstorage format: omnigraph storage version 1,"));
    assert_non_null(strstr(a, "\nbuild: commit "));
    assert_int_equal(run(a, sizeof a, "%s version --json", bin), 0);
    assert_non_null(strstr(a, "\"storage_version\":1"));
    assert_int_equal(run(NULL, 0, "%s version --bogus 2>/dev/null", bin), 2);
}

static void help_verb_is_the_verbs_help(void **state)
{
    (void)state;
    char a[8192], b[8192];
    assert_int_equal(run(a, sizeof a, "%s help load", bin), 0);
    assert_int_equal(run(b, sizeof b, "%s load --help", bin), 0);
    assert_string_equal(a, b);
    assert_true(strncmp(a, "usage: omnigraph load", 21) == 0);
    assert_int_equal(run(a, sizeof a, "%s help branch merge", bin), 0);
    assert_non_null(strstr(a, "omnigraph branch merge"));
    assert_int_equal(run(a, sizeof a, "%s help nosuchverb 2>&1", bin), 2);
    assert_non_null(strstr(a, "unknown command 'nosuchverb'"));
    assert_int_equal(run(a, sizeof a, "%s help", bin), 0);
    assert_non_null(strstr(a, "omnigraph help <command>"));
}

/* A read (or a write) on a mistyped path fails with not_found and creates nothing. */
static void a_mistyped_path_creates_nothing(void **state)
{
    (void)state;
    char out[8192], missing[256];
    struct stat sb;
    snprintf(missing, sizeof missing, "%s/typo/graph", dir);
    static const char *verbs[] = {
        "query --store %s -e 'query q() { match { $p: P } return { $p } }'",
        "snapshot %s", "export %s", "commit list %s", "branch list %s", "schema show %s",
        "changes --from a --to b %s", "load --data /dev/null --mode append %s",
        "mutate --store %s -e 'query m() { delete P where a = 1 }'",
    };
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, verbs[i], missing);
        assert_int_equal(run(out, sizeof out, "%s %s --quiet 2>&1", bin, cmd), 1);
        assert_non_null(strstr(out, "no OmniGraph graph at"));
        char typo[256];
        snprintf(typo, sizeof typo, "%s/typo", dir);
        assert_int_not_equal(stat(typo, &sb), 0);
    }
    write_file("unused.txt", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_spellings_print_release_storage_and_build),
        cmocka_unit_test(help_verb_is_the_verbs_help),
        cmocka_unit_test(a_mistyped_path_creates_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
