/*
 * test_cli_branch_delete.c — `branch delete --if-commit`: deletes only while the branch head
 * is the given commit; a moved head exits 4 (precondition_failed) and the branch survives.
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

static void delete_if_commit_guards_the_head(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-bdel-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    char out[4096], old[32] = "", cur[32] = "";
    write_file("s.pg", "node P { name: String @key }\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s branch create --quiet --json side %s/g", bin, dir), 0);
    const char *h = strstr(out, "\"head\": \"");
    assert_non_null(h);
    memcpy(old, h + 9, 26);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --branch side -e 'query i() { insert P { name: \"a\" } }'", bin, dir), 0);
    /* the head moved: refused with exit 4, the branch is still there */
    assert_int_equal(run(NULL, 0, "%s branch delete --quiet side --if-commit %s %s/g 2>/dev/null", bin, old, dir), 4);
    assert_int_equal(run(out, sizeof out, "%s branch list %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "side"));
    assert_int_equal(run(out, sizeof out, "%s commit list --branch side --limit 1 --json %s/g", bin, dir), 0);
    h = strstr(out, "\"id\": \"");
    assert_non_null(h);
    memcpy(cur, h + 7, 26);
    assert_int_equal(run(NULL, 0, "%s branch delete --quiet side --if-commit %s %s/g", bin, cur, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s branch list %s/g", bin, dir), 0);
    assert_null(strstr(out, "side"));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(delete_if_commit_guards_the_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
