/*
 * test_cli_merge.c — `omnigraph branch merge` conflicts and strategies as a user meets them
 * (issue 16): each conflict named once with the type, the key and the differing property with
 * both sides' values; `--json` carries them as data; `--strategy ours|theirs` and
 * `--strategy KIND=SIDE` settle row conflicts; bad strategies are usage errors.  Every refusal
 * checks the exit code, the message and that main's head did not move.
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
    return cli_scratch_new("/tmp/og-climerge-XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

static void mutate(const char *branch, const char *text)
{
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --branch %s -e '%s' >/dev/null", bin, dir, branch, text), 0);
}

/* A graph whose branch `dev` and `main` conflict three ways on Project rows. */
static void make_conflict(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s/g", dir);
    assert_int_equal(system(cmd), 0);
    write_file("s.pg", "node Project { slug: String @key  title: String  status: enum(active, paused, done) }\n");
    write_file("d.jsonl", "{\"type\":\"Project\",\"data\":{\"slug\":\"engine\",\"title\":\"E\",\"status\":\"active\"}}\n"
                          "{\"type\":\"Project\",\"data\":{\"slug\":\"old\",\"title\":\"O\",\"status\":\"active\"}}\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g >/dev/null && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g >/dev/null && %s branch create --quiet dev %s/g >/dev/null",
                         bin, dir, dir, bin, dir, dir, bin, dir), 0);
    mutate("dev", "query p() { update Project set { status: \"paused\" } where slug = \"engine\" }");
    mutate("main", "query p() { update Project set { status: \"done\" } where slug = \"engine\" }");
    mutate("dev", "query p() { delete Project where slug = \"old\" }");
    mutate("main", "query p() { update Project set { title: \"O2\" } where slug = \"old\" }");
    mutate("dev", "query p() { insert Project { slug: \"new\", title: \"N1\", status: \"active\" } }");
    mutate("main", "query p() { insert Project { slug: \"new\", title: \"N2\", status: \"active\" } }");
}

static void head_of(char head[27])
{
    char out[4096];
    assert_int_equal(run(out, sizeof out, "%s commit list --limit 1 %s/g", bin, dir), 0);
    memcpy(head, out, 26);
    head[26] = 0;
}

static void rows(char *out, size_t cap)
{
    assert_int_equal(run(out, cap, "%s query %s/g -e 'query q() { match { $p: Project } return { $p.slug, $p.title, $p.status } order { $p.slug } }' --format csv",
                         bin, dir), 0);
}

static void conflicts_are_named_once_with_the_differing_property(void **state)
{
    (void)state;
    char out[8192], before[27], after[27];
    make_conflict();
    head_of(before);
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet dev %s/g 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "merge of dev into main: 3 conflicts:\n"));
    assert_non_null(strstr(out, "\n  divergent_update: Project 'engine' was changed differently on dev and main: "
                                "status: \"paused\" on dev, \"done\" on main (was \"active\")\n"));
    assert_non_null(strstr(out, "\n  delete_vs_update: Project 'old' was deleted on dev and updated on main: title: \"O\" -> \"O2\"\n"));
    assert_non_null(strstr(out, "\n  divergent_insert: Project 'new' was inserted on both dev and main with different values: "
                                "title: \"N1\" on dev, \"N2\" on main\n"));
    const char *first = strstr(out, "Project 'engine'");
    assert_null(strstr(first + 1, "Project 'engine'")); /* once */
    assert_non_null(strstr(out, "hint: "));
    assert_non_null(strstr(out, "--strategy theirs (take dev)"));
    head_of(after);
    assert_string_equal(before, after);
    /* --json: the conflicts as data on stdout */
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json dev %s/g 2>/dev/null", bin, dir), 1);
    assert_non_null(strstr(out, "\"kind\": \"divergent_update\""));
    assert_non_null(strstr(out, "\"entity_kind\": \"node\""));
    assert_non_null(strstr(out, "\"property\": \"status\",\n          \"base\": \"active\",\n          \"source\": \"paused\",\n"
                                "          \"target\": \"done\""));
    head_of(after);
    assert_string_equal(before, after);
}

static void strategies_settle_row_conflicts(void **state)
{
    (void)state;
    char out[8192], before[27], after[27];
    /* per kind, with a plain default for the rest */
    make_conflict();
    assert_int_equal(run(out, sizeof out, "%s branch merge dev --strategy theirs -X delete_vs_update=ours %s/g 2>/dev/null", bin, dir), 0);
    assert_non_null(strstr(out, "merged: merged dev into main as commit "));
    assert_non_null(strstr(out, "\n  settled divergent_update (theirs): Project 'engine' "));
    assert_non_null(strstr(out, "\n  settled delete_vs_update (ours): Project 'old' "));
    assert_non_null(strstr(out, "\n  settled divergent_insert (theirs): Project 'new' "));
    rows(out, sizeof out);
    assert_string_equal(out, "p.slug,p.title,p.status\r\nengine,E,paused\r\nnew,N1,active\r\nold,O2,active\r\n");
    /* ours everywhere: main unchanged in content, one merge commit; --json lists them */
    make_conflict();
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json dev --strategy ours %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"resolution\": \"ours\""));
    assert_non_null(strstr(out, "\"actor_id\""));
    assert_null(strstr(out, "\"branch_deleted\"")); /* only when --delete-branch was asked */
    rows(out, sizeof out);
    assert_string_equal(out, "p.slug,p.title,p.status\r\nengine,E,done\r\nnew,N2,active\r\nold,O2,active\r\n");
    /* theirs on delete_vs_update only: the others still fail, nothing published */
    make_conflict();
    head_of(before);
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet dev -X delete_vs_update=theirs %s/g 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "2 conflicts"));
    assert_null(strstr(out, "delete_vs_update:"));
    head_of(after);
    assert_string_equal(before, after);
    /* usage errors */
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet dev --strategy mine %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "--strategy must be ours, theirs or KIND=ours|theirs"));
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet dev --strategy orphan_edge=ours %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "not a conflict kind a side can settle"));
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet dev --strategy ours -X theirs %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "contradicts"));
    head_of(after);
    assert_string_equal(before, after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conflicts_are_named_once_with_the_differing_property),
        cmocka_unit_test(strategies_settle_row_conflicts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
