/*
 * test_cli_changes_u64.c — the CLI's change views print a U64 above 2^63-1 as a bare number
 * (docs/query-language.md "Values in JSON"): `changes --from --to --json`, `commit changes
 * --json` (one block of the feed) and `changes poll --json` re-read the API's change text and
 * print `18446744073709551615`, not a string and not a failure; `--format csv` prints the digits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli_run.h"

static char before[32], after[32];

/* The commit `back` steps below the head of main (26 chars). */
static void commit_at(int back, char id[32])
{
    char out[4096];
    id[0] = '\0';
    if (run(out, sizeof out, "%s commit list --quiet --limit %d %s/g 2>/dev/null", bin, back + 1, dir)) return;
    const char *line = out;
    for (int i = 0; i < back && line; i++) line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    if (!line || strlen(line) < 26) return;
    memcpy(id, line, 26);
    id[26] = '\0';
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-cli-u64-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    write_file("s.pg", "node Meter { name: String @key  reading: U64? }\n");
    write_file("d.jsonl", "{\"type\":\"Meter\",\"data\":{\"name\":\"m\",\"reading\":1}}\n");
    write_file("m.gq", "query set($r: U64) { update Meter set { reading: $r } where name = \"m\" }\n");
    if (run(NULL, 0,
            "%s init --quiet --schema %s/s.pg %s/g >/dev/null && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g "
            ">/dev/null && %s mutate --quiet --query %s/m.gq set --params '{\"r\":\"18446744073709551615\"}' %s/g >/dev/null",
            bin, dir, dir, bin, dir, dir, bin, dir, dir) != 0)
        return -1;
    commit_at(0, after);
    commit_at(1, before);
    return after[0] && before[0] ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void expect_bare(const char *out)
{
    if (!strstr(out, "\"reading\": 18446744073709551615") && !strstr(out, "\"reading\":18446744073709551615"))
        fail_msg("no bare U64 in: %s", out);
    assert_null(strstr(out, "\"18446744073709551615\""));
}

static void changes_json_prints_the_u64_bare(void **state)
{
    (void)state;
    char out[16384];
    assert_int_equal(run(out, sizeof out, "%s changes --from %s --to %s --json %s/g", bin, before, after, dir), 0);
    expect_bare(out);
    assert_non_null(strstr(out, "\"reading\": 1\n"));
}

static void commit_changes_json_prints_the_u64_bare(void **state)
{
    (void)state;
    char out[16384];
    assert_int_equal(run(out, sizeof out, "%s commit changes %s --json %s/g", bin, after, dir), 0);
    expect_bare(out);
    assert_int_equal(run(out, sizeof out, "%s commit changes %s %s/g", bin, after, dir), 0); /* text: the row line */
    assert_non_null(strstr(out, "update Meter m"));
}

static void changes_poll_json_prints_the_u64_bare(void **state)
{
    (void)state;
    char out[16384];
    assert_int_equal(run(out, sizeof out, "%s changes poll --start beginning --json %s/g", bin, dir), 0);
    expect_bare(out);
}

static void changes_csv_prints_the_digits(void **state)
{
    (void)state;
    char out[16384];
    assert_int_equal(run(out, sizeof out, "%s changes --from %s --to %s --format csv %s/g", bin, before, after, dir), 0);
    assert_non_null(strstr(out, "\"\"reading\"\":18446744073709551615"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(changes_json_prints_the_u64_bare),
        cmocka_unit_test(commit_changes_json_prints_the_u64_bare),
        cmocka_unit_test(changes_poll_json_prints_the_u64_bare),
        cmocka_unit_test(changes_csv_prints_the_digits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
