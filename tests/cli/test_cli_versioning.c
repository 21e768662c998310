/*
 * test_cli_versioning.c — write conditions of the `omnigraph` binary (issue 7): `--if-commit C`
 * on every write verb that has a head to pin (load, mutate, branch merge, schema apply) exits 4
 * with `precondition_failed` when the head moved and publishes nothing, and succeeds on the
 * current head; `mutate --from BASE` forks a missing (or deleted) branch first, leaves an
 * existing one alone, and fails with nothing created when BASE does not exist.
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

#include "cli_run.h"

/* The head commit of `branch` (26 chars) via `commit list --limit 1`; "" when it fails. */
static void head(const char *branch, char id[32])
{
    char out[4096];
    id[0] = '\0';
    if (run(out, sizeof out, "%s commit list --quiet --limit 1 --branch %s %s/g 2>/dev/null", bin, branch, dir)) return;
    memcpy(id, out, 26);
    id[26] = '\0';
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-cli-ver-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    write_file("s.pg", "node Person { name: String @key  age: I32? }\n");
    write_file("s2.pg", "node Person { name: String @key  age: I32?  email: String? }\n");
    write_file("d.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n");
    write_file("e.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Eve\"}}\n");
    write_file("m.gq", "query add($n: String) { insert Person { name: $n } }\n"
                       "query names() { match { $p: Person } return { $p.name } order { $p.name } }\n");
    if (run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g >/dev/null && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g >/dev/null",
            bin, dir, dir, bin, dir, dir) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Runs `cmd` (a write with --if-commit STALE appended by the caller) and checks exit 4,
 * precondition_failed on stderr and the head of `branch` unchanged. */
static void expect_precondition(const char *branch, const char *cmd)
{
    char before[32], after[32], err[4096];
    head(branch, before);
    assert_true(before[0]);
    assert_int_equal(run(err, sizeof err, "%s 2>&1 >/dev/null", cmd), 4);
    if (!strstr(err, "precondition_failed")) fail_msg("no precondition_failed in: %s", err);
    head(branch, after);
    assert_string_equal(before, after);
}

static void if_commit_on_every_write_verb_exits_4_and_publishes_nothing_when_the_head_moved(void **state)
{
    (void)state;
    char stale[32], cur[32], cmd[2048], out[8192];
    head("main", stale);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"Bob\"}' --store %s/g", bin, dir, dir), 0);
    head("main", cur);
    assert_string_not_equal(stale, cur);
    assert_int_equal(run(NULL, 0, "%s branch create --quiet side %s/g", bin, dir), 0);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"Sid\"}' --branch side --store %s/g", bin, dir, dir), 0);

    snprintf(cmd, sizeof cmd, "%s load --quiet --data %s/e.jsonl --mode merge --if-commit %s %s/g", bin, dir, stale, dir);
    expect_precondition("main", cmd);
    snprintf(cmd, sizeof cmd, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"Zed\"}' --if-commit %s --store %s/g", bin, dir, stale, dir);
    expect_precondition("main", cmd);
    snprintf(cmd, sizeof cmd, "%s branch merge --quiet side --if-commit %s %s/g", bin, stale, dir);
    expect_precondition("main", cmd);
    /* schema apply needs main alone: drop the side branch first (merged content not needed) */
    assert_int_equal(run(NULL, 0, "%s branch delete --quiet side %s/g", bin, dir), 0);
    snprintf(cmd, sizeof cmd, "%s schema apply --quiet --schema %s/s2.pg --if-commit %s %s/g", bin, dir, stale, dir);
    expect_precondition("main", cmd);
    assert_int_equal(run(out, sizeof out, "%s schema show --quiet %s/g", bin, dir), 0);
    assert_null(strstr(out, "email")); /* nothing applied */

    /* on the current head each verb succeeds */
    assert_int_equal(run(out, sizeof out, "%s schema apply --quiet --json --schema %s/s2.pg --if-commit %s %s/g", bin, dir, cur, dir), 0);
    assert_non_null(strstr(out, "\"commit\": {\n    \"graph_commit_id\": \""));
    assert_int_equal(run(out, sizeof out, "%s schema show --quiet %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "email"));
    head("main", cur);
    assert_int_equal(run(NULL, 0, "%s load --quiet --data %s/e.jsonl --mode merge --if-commit %s %s/g", bin, dir, cur, dir), 0);
    head("main", cur);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"Zed\"}' --if-commit %s --store %s/g", bin, dir, cur, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s query --quiet --query %s/m.gq names --format csv --store %s/g | tr -d '\\r'", bin, dir, dir), 0);
    assert_string_equal(out, "p.name\nAda\nBob\nEve\nZed\n");

    /* a malformed commit id is a usage-level failure, not a precondition */
    assert_int_equal(run(NULL, 0, "%s schema apply --quiet --schema %s/s2.pg --if-commit nope %s/g 2>/dev/null", bin, dir, dir), 1);
    /* --if-commit is refused where it has no meaning */
    assert_int_equal(run(NULL, 0, "%s schema plan --quiet --schema %s/s2.pg --if-commit %s %s/g 2>/dev/null", bin, dir, cur, dir), 2);
    assert_int_equal(run(NULL, 0, "%s query --quiet --query %s/m.gq names --if-commit %s --store %s/g 2>/dev/null", bin, dir, cur, dir), 2);
}

static void mutate_from_forks_a_missing_branch_and_writes_onto_an_existing_one(void **state)
{
    (void)state;
    char main_head[32], feat[32], out[8192];
    head("main", main_head);
    /* feat does not exist: forked from main's head, then the mutation is its first commit */
    assert_int_equal(run(out, sizeof out, "%s mutate --quiet --json --query %s/m.gq add --params '{\"n\":\"F1\"}' --branch feat --from main --store %s/g", bin, dir, dir), 0);
    assert_non_null(strstr(out, "feat"));
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --branch feat --limit 2 %s/g", bin, dir), 0);
    assert_non_null(strstr(out, main_head)); /* the mutation's parent is main's head */
    head("feat", feat);
    /* main is untouched */
    char now[32];
    head("main", now);
    assert_string_equal(now, main_head);
    assert_int_equal(run(out, sizeof out, "%s query --quiet --query %s/m.gq names --format csv --branch feat --store %s/g | tr -d '\\r'", bin, dir, dir), 0);
    assert_non_null(strstr(out, "\nF1\n"));
    assert_int_equal(run(out, sizeof out, "%s query --quiet --query %s/m.gq names --format csv --store %s/g | tr -d '\\r'", bin, dir, dir), 0);
    assert_null(strstr(out, "F1"));

    /* feat exists now: --from is ignored, the write goes on feat's head (no re-fork) */
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"F2\"}' --branch feat --from main --store %s/g", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --branch feat --limit 2 %s/g", bin, dir), 0);
    assert_non_null(strstr(out, feat));
    assert_int_equal(run(out, sizeof out, "%s query --quiet --query %s/m.gq names --format csv --branch feat --store %s/g | tr -d '\\r'", bin, dir, dir), 0);
    assert_non_null(strstr(out, "\nF1\nF2\n"));

    /* a deleted branch is forked again (a new incarnation, from main: F1/F2 are gone) */
    assert_int_equal(run(NULL, 0, "%s branch delete --quiet feat %s/g", bin, dir), 0);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"F3\"}' --branch feat --from main --store %s/g", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s query --quiet --query %s/m.gq names --format csv --branch feat --store %s/g | tr -d '\\r'", bin, dir, dir), 0);
    assert_non_null(strstr(out, "F3"));
    assert_null(strstr(out, "F1"));

    /* a missing BASE: not_found (exit 1), nothing created */
    char err[4096];
    assert_int_equal(run(err, sizeof err, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"G\"}' --branch ghost --from nobase --store %s/g 2>&1 >/dev/null", bin, dir, dir), 1);
    assert_non_null(strstr(err, "not_found"));
    assert_int_equal(run(out, sizeof out, "%s branch list --quiet %s/g", bin, dir), 0);
    assert_null(strstr(out, "ghost"));
    /* without --from a missing branch is not_found, and --from is refused on reads */
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"G\"}' --branch ghost --store %s/g 2>/dev/null", bin, dir, dir), 1);
    assert_int_equal(run(NULL, 0, "%s query --quiet --query %s/m.gq names --from main --store %s/g 2>/dev/null", bin, dir, dir), 2);
    /* --from with --if-commit: the fork happens, then the pin is checked against the new head */
    head("main", now);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"H\"}' --branch hot --from main --if-commit %s --store %s/g", bin, dir, now, dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(if_commit_on_every_write_verb_exits_4_and_publishes_nothing_when_the_head_moved),
        cmocka_unit_test(mutate_from_forks_a_missing_branch_and_writes_onto_an_existing_one),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
