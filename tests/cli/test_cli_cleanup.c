/*
 * test_cli_cleanup.c — `omnigraph cleanup`: bad flags are usage errors (exit 2) that change
 * nothing; the default is a dry run whose --json report names objects and bytes per kind and
 * leaves every file in place; --confirm then removes exactly that, the head answers the same
 * and a reclaimed commit is a typed not_found naming cleanup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli_run.h"

static long json_num(const char *s, const char *kind, const char *field)
{
    const char *k = strstr(s, kind);
    assert_non_null(k);
    const char *f = strstr(k, field);
    assert_non_null(f);
    return strtol(f + strlen(field), NULL, 10);
}

static void cleanup_dry_run_then_confirm(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-cleanup-cli-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(bin, sizeof bin, "OG_AUTO_OPTIMIZE_FRAGMENTS=0 %s/omnigraph", OG_BINARY_DIR);
    char out[8192], before[16384], after[16384], first[32] = "";
    write_file("s.pg", "node P { name: String @key  n: I32? }\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g", bin, dir, dir), 0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(run(out, sizeof out, "%s mutate --quiet --json --store %s/g -e 'query i() { insert P { name: \"p%d\", n: %d } }'",
                             bin, dir, i, i),
                         0);
        if (i == 0) {
            const char *h = strstr(out, "\"graph_commit_id\": \"");
            assert_non_null(h);
            memcpy(first, h + 20, 26);
        }
    }
    assert_int_equal(run(NULL, 0, "%s optimize --quiet %s/g", bin, dir), 0);
    /* usage errors: exit 2, nothing touched */
    assert_int_equal(run(NULL, 0, "%s cleanup --quiet --keep-commits 0 %s/g 2>/dev/null", bin, dir), 2);
    assert_int_equal(run(NULL, 0, "%s cleanup --quiet --older-than 3x %s/g 2>/dev/null", bin, dir), 2);
    assert_int_equal(run(NULL, 0, "%s cleanup --quiet --grace soon %s/g 2>/dev/null", bin, dir), 2);
    assert_int_equal(run(NULL, 0, "%s cleanup --quiet --branch main %s/g 2>/dev/null", bin, dir), 2);
    assert_int_equal(run(before, sizeof before, "cd %s/g && find . -type f | sort", dir), 0);
    /* default grace: everything is young, nothing to remove */
    assert_int_equal(run(out, sizeof out, "%s cleanup --quiet --keep-commits 1 --json %s/g", bin, dir), 0);
    assert_int_equal(json_num(out, "\"total\"", "\"objects\": "), 0);
    /* dry run (the default) with no grace: a report, no change */
    assert_int_equal(run(out, sizeof out, "%s cleanup --quiet --keep-commits 1 --grace 0s --json %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"dry_run\": true"));
    long commits = json_num(out, "\"commits\"", "\"objects\": ");
    long versions = json_num(out, "\"table_versions\"", "\"objects\": ");
    long files = json_num(out, "\"data_files\"", "\"objects\": ");
    long total = json_num(out, "\"total\"", "\"objects\": ");
    assert_int_equal(commits, 7); /* genesis + 6 inserts; the optimize commit is the head */
    assert_true(versions > 0 && files > 0 && total >= commits + versions + files);
    assert_int_equal(run(after, sizeof after, "cd %s/g && find . -type f | sort", dir), 0);
    assert_string_equal(before, after);
    /* the text form says it is a dry run */
    assert_int_equal(run(out, sizeof out, "%s cleanup --quiet --keep-commits 1 --grace 0s %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "dry run"));
    assert_non_null(strstr(out, "would remove"));
    /* --confirm removes what the dry run reported */
    assert_int_equal(run(out, sizeof out, "%s cleanup --quiet --keep-commits 1 --grace 0s --confirm --json %s/g", bin, dir),
                     0);
    assert_non_null(strstr(out, "\"dry_run\": false"));
    assert_int_equal(json_num(out, "\"total\"", "\"objects\": "), total);
    assert_int_equal(run(out, sizeof out, "%s query --quiet --store %s/g --format csv -e 'query q() { match { $p: P } return { count($p) as c } }'",
                         bin, dir),
                     0);
    assert_non_null(strstr(out, "6"));
    assert_int_equal(run(out, sizeof out, "%s query --quiet --store %s/g --at %s -e 'query q() { match { $p: P } return { $p.name } }' 2>&1",
                         bin, dir, first),
                     1);
    assert_non_null(strstr(out, "reclaimed by cleanup"));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cleanup_dry_run_then_confirm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
