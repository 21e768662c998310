/*
 * test_cli_csv.c — `omnigraph load --csv TYPE=FILE … [--delimiter C]` and
 * `omnigraph export --format csv --type T` through the binary: several files as one commit,
 * a pipe delimiter, the result document, a typed error with file:line:column that publishes
 * nothing, the usage errors of the flags, and export → load round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"

static const char *SCHEMA = "node Person { name: String @key  age: I32? }\n"
                            "node City { code: I64 @key  label: String? }\n"
                            "edge LivesIn: Person -> City\n";

static int setup(void **state)
{
    (void)state;
    if (cli_scratch_new("/tmp/og-clicsv-XXXXXX")) return -1;
    write_file("s.pg", SCHEMA);
    write_file("people.csv", "name,age\nAlice,30\n\"Smith, Bob\",\n");
    write_file("cities.csv", "code:ID(City)|label\n7|Rome\n");
    write_file("lives.csv", ":START_ID(Person)|:END_ID(City)\nAlice|7\n");
    char out[512];
    return run(out, sizeof out, "cd %s && %s init --schema s.pg g 2>&1", dir, bin) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

static void load_csv_files_as_one_commit_then_export_them(void **state)
{
    (void)state;
    char out[8192];
    /* '|' files and a ',' file cannot share one --delimiter: two loads */
    assert_int_equal(run(out, sizeof out, "cd %s && %s load --csv Person=people.csv --mode overwrite --json --quiet g 2>&1", dir, bin), 0);
    assert_non_null(strstr(out, "\"total_entities\": 2"));
    /* per type, under its kind (a quoted field with a comma is one row) */
    assert_non_null(strstr(out, "\"nodes\": [\n    {\n      \"name\": \"Person\",\n      \"entities_loaded\": 2\n    }\n  ]"));
    assert_non_null(strstr(out, "\"edges\": []"));
    char before[64], after[64];
    assert_int_equal(run(before, sizeof before, "cd %s && %s commit list --format jsonl --quiet g | wc -l", dir, bin), 0);
    assert_int_equal(run(out, sizeof out,
                         "cd %s && %s load --csv City=cities.csv --csv LivesIn=lives.csv --delimiter '|' --mode merge --quiet g 2>&1",
                         dir, bin),
                     0);
    assert_int_equal(run(after, sizeof after, "cd %s && %s commit list --format jsonl --quiet g | wc -l", dir, bin), 0);
    assert_int_equal(atoi(after), atoi(before) + 1); /* two files, one commit */
    assert_int_equal(run(out, sizeof out,
                         "cd %s && %s load --csv City=cities.csv --csv LivesIn=lives.csv --delimiter '|' --mode merge --json --quiet g 2>&1",
                         dir, bin),
                     0);
    assert_non_null(strstr(out, "\"name\": \"City\",\n      \"entities_loaded\": 1"));
    assert_non_null(strstr(out, "\"edges\": [\n    {\n      \"name\": \"LivesIn\",\n      \"entities_loaded\": 1"));
    assert_int_equal(run(out, sizeof out,
                         "cd %s && %s query --quiet -e 'query q() { match { $p: Person $p livesIn $c } return { $p.name, $c.label } }' "
                         "--format csv g 2>&1",
                         dir, bin),
                     0);
    assert_string_equal(out, "p.name,c.label\r\nAlice,Rome\r\n");
    assert_int_equal(run(out, sizeof out, "cd %s && %s export --format csv --type Person --quiet g", dir, bin), 0);
    assert_string_equal(out, "name,age\nAlice,30\n\"Smith, Bob\",\n");
    /* export -> load into a second graph -> the same export */
    assert_int_equal(run(out, sizeof out,
                         "cd %s && %s export --format csv --type Person --quiet g > p2.csv && %s init --schema s.pg g2 >/dev/null && "
                         "%s load --csv Person=p2.csv --mode overwrite --quiet g2 && %s export --format csv --type Person --quiet g2",
                         dir, bin, bin, bin, bin),
                     0);
    assert_string_equal(out, "name,age\nAlice,30\n\"Smith, Bob\",\n");
}

static void a_bad_cell_names_file_line_column_and_publishes_nothing(void **state)
{
    (void)state;
    char out[4096];
    write_file("bad.csv", "name,age\nCarol,41\nDan,forty\n");
    int rc = run(out, sizeof out, "cd %s && %s load --csv Person=people.csv --csv Person=bad.csv --mode merge --quiet g 2>&1", dir, bin);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "omnigraph load: invalid: bad.csv:3:5: Person.age: expected I32, got \"forty\" (not a decimal integer)"));
    assert_int_equal(run(out, sizeof out, "cd %s && %s query --quiet -e 'query q() { match { $p: Person { name: \"Carol\" } } return { $p.name } }' "
                                          "--format csv g 2>&1",
                         dir, bin),
                     0);
    assert_string_equal(out, "p.name\r\n"); /* Carol (line 2 of bad.csv) was not loaded */
}

static void flag_usage_errors(void **state)
{
    (void)state;
    char out[4096];
    assert_int_equal(run(out, sizeof out, "cd %s && %s load --csv Person=people.csv --data x.jsonl --mode merge g 2>&1", dir, bin), 2);
    assert_non_null(strstr(out, "give --data FILE or --csv TYPE=FILE, not both"));
    assert_int_equal(run(out, sizeof out, "cd %s && %s load --csv Person=people.csv --delimiter ab --mode merge g 2>&1", dir, bin), 2);
    assert_non_null(strstr(out, "--delimiter takes one character"));
    assert_int_equal(run(out, sizeof out, "cd %s && %s load --data people.csv --delimiter '|' --mode merge g 2>&1", dir, bin), 2);
    assert_non_null(strstr(out, "--delimiter applies to --csv files"));
    assert_int_equal(run(out, sizeof out, "cd %s && %s export --format csv g 2>&1", dir, bin), 2);
    assert_non_null(strstr(out, "--format csv writes one type: give exactly one --type T"));
    assert_int_equal(run(out, sizeof out, "cd %s && %s load --csv people.csv --mode merge --quiet g 2>&1", dir, bin), 1);
    assert_non_null(strstr(out, "people.csv: the file names no type: load it as TYPE=FILE"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_csv_files_as_one_commit_then_export_them),
        cmocka_unit_test(a_bad_cell_names_file_line_column_and_publishes_nothing),
        cmocka_unit_test(flag_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
