/*
 * test_cli_branch.c — the versioning verbs of the `omnigraph` binary: branch create (--from,
 * --at) / list / delete, commit list (--branch, --limit) / show / changes, changes --from
 * --to with filters, and branch merge (fast_forward, merged, already_up_to_date, conflicts
 * with exit 1 and nothing published, --delete-branch, --if-commit exit 4), all with --json;
 * a branch's -m message, kept with the branch and listed (and refused without a trace).
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

/* The value of "key": "..." after `from` in out (26-char ids). */
static void grab(const char *out, const char *key, char id[32])
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *c = strstr(out, pat);
    if (!c) fail_msg("no %s in: %s", key, out);
    memcpy(id, c + strlen(pat), 26);
    id[26] = '\0';
}

/* Occurrences of `what` in out. */
static int count(const char *out, const char *what)
{
    int n = 0;
    for (const char *p = strstr(out, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-cli-br-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    write_file("s.pg", "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n");
    write_file("d.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"Grace\",\"age\":45}}\n"
                          "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Grace\"}\n");
    write_file("m.gq", "query age($n: String, $a: I32) { update Person set { age: $a } where name = $n }\n"
                       "query add($n: String) { insert Person { name: $n } }\n");
    if (run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g >/dev/null && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g",
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

static void branches_and_history(void **state)
{
    (void)state;
    char out[65536], head[32], first[32];
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --json %s/g", bin, dir), 0);
    grab(out, "head", head);
    assert_non_null(strstr(out, "\"kind\": \"load\""));
    assert_non_null(strstr(out, "\"kind\": \"init\""));
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --limit 1 %s/g", bin, dir), 0);
    assert_non_null(strstr(out, head));
    assert_null(strstr(out, "init"));

    assert_int_equal(run(out, sizeof out, "%s branch create --quiet --json dev %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"name\": \"dev\""));
    assert_non_null(strstr(out, head));
    assert_int_equal(run(NULL, 0, "%s branch create --quiet dev %s/g 2>/dev/null", bin, dir), 1); /* exists */
    assert_int_equal(run(NULL, 0, "%s branch create --quiet main %s/g 2>/dev/null", bin, dir), 1);
    assert_int_equal(run(NULL, 0, "%s branch create --quiet %s/g 2>/dev/null", bin, dir), 2);      /* no name */
    assert_int_equal(run(NULL, 0, "%s branch frobnicate --quiet x %s/g 2>/dev/null", bin, dir), 2);
    /* --at: from the genesis commit */
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet %s/g | tail -1", bin, dir), 0);
    assert_non_null(strstr(out, " init "));
    memcpy(first, out, 26);
    first[26] = '\0';
    assert_int_equal(run(NULL, 0, "%s branch create --quiet --at %s old %s/g", bin, first, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s branch list --quiet --json %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"dev\","));
    assert_non_null(strstr(out, "\"old\""));
    assert_non_null(strstr(out, "\"main\","));
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --branch old %s/g", bin, dir), 0);
    assert_non_null(strstr(out, first));
    assert_null(strstr(out, head));
    assert_int_equal(run(NULL, 0, "%s branch delete --quiet old %s/g", bin, dir), 0);
    assert_int_equal(run(NULL, 0, "%s branch delete --quiet old %s/g 2>/dev/null", bin, dir), 1);
    assert_int_equal(run(NULL, 0, "%s branch delete --quiet main %s/g 2>/dev/null", bin, dir), 1);
    assert_int_equal(run(out, sizeof out, "%s branch list --quiet %s/g", bin, dir), 0);
    assert_null(strstr(out, "old"));

    /* show, changes */
    assert_int_equal(run(out, sizeof out, "%s commit show --quiet --json %s %s/g", bin, head, dir), 0);
    assert_non_null(strstr(out, "\"type\": \"Person\""));
    assert_non_null(strstr(out, "\"rows\": 2"));
    assert_int_equal(run(NULL, 0, "%s commit show --quiet 01M8VVQ35TCWPYWAZP6F0KDEYQ %s/g 2>/dev/null", bin, dir), 1);
    assert_int_equal(run(out, sizeof out, "%s mutate --quiet --json --store %s/g --query %s/m.gq age --params '{\"n\":\"Ada\",\"a\":37}' --branch dev",
                         bin, dir, dir), 0);
    char c2[32];
    grab(out, "graph_commit_id", c2);
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --json %s %s/g", bin, c2, dir), 0);
    assert_non_null(strstr(out, "\"op\": \"update\""));
    assert_non_null(strstr(out, "\"age\": 36"));
    assert_non_null(strstr(out, "\"age\": 37"));
    assert_int_equal(run(out, sizeof out, "%s changes --quiet --from %s --to %s %s/g", bin, first, c2, dir), 0);
    assert_non_null(strstr(out, "3 inserted, 0 updated, 0 deleted"));
    assert_int_equal(run(out, sizeof out, "%s changes --quiet --from %s --to %s --type Knows %s/g", bin, first, c2, dir), 0);
    assert_non_null(strstr(out, "1 inserted"));
    assert_int_equal(run(out, sizeof out, "%s changes --quiet --from %s --to %s --op update %s/g", bin, first, c2, dir), 0);
    assert_non_null(strstr(out, "0 inserted, 0 updated"));
    assert_int_equal(run(NULL, 0, "%s changes --quiet --from %s --to %s --op upsert %s/g 2>/dev/null", bin, first, c2, dir), 2);
    assert_int_equal(run(NULL, 0, "%s changes --quiet --from %s %s/g 2>/dev/null", bin, first, dir), 2);
    assert_int_equal(run(NULL, 0, "%s commit changes --quiet %s %s/g 2>/dev/null", bin, first, dir), 1); /* genesis */

    /* paging, with the tokens of GET …/commits/{id}/changes: the load commit has 3 changes */
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --json --limit 2 %s %s/g", bin, head, dir), 0);
    assert_int_equal(count(out, "\"op\": \"insert\""), 3); /* no token: every page */
    assert_null(strstr(out, "next_page_token"));
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --json --limit 2 --page-token v1o0 %s %s/g", bin, head, dir), 0);
    assert_int_equal(count(out, "\"op\": \"insert\""), 2);
    assert_non_null(strstr(out, "\"next_page_token\": \"v1o2\""));
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --json --limit 2 --page-token v1o2 %s %s/g", bin, head, dir), 0);
    assert_int_equal(count(out, "\"op\": \"insert\""), 1);
    assert_non_null(strstr(out, "\"next_page_token\": null"));
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --json --page-token v1o1 %s %s/g", bin, head, dir), 0);
    assert_int_equal(count(out, "\"op\": \"insert\""), 2); /* default page size: the rest */
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --json --kind edge --limit 1 --page-token v1o0 %s %s/g", bin, head, dir), 0);
    assert_int_equal(count(out, "\"op\": \"insert\""), 1); /* pages of the filtered list */
    assert_non_null(strstr(out, "\"next_page_token\": null"));
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --limit 1 --page-token v1o0 %s %s/g", bin, head, dir), 0);
    assert_non_null(strstr(out, "next page: v1o1"));
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --limit 1 --page-token v1o2 %s %s/g", bin, head, dir), 0);
    assert_non_null(strstr(out, "next page: none (last page)"));
    assert_int_equal(run(NULL, 0, "%s commit changes --quiet --page-token zzz %s %s/g 2>/dev/null", bin, head, dir), 2);
    assert_int_equal(run(NULL, 0, "%s commit changes --quiet --page-token v1o-1 %s %s/g 2>/dev/null", bin, head, dir), 2);
    assert_int_equal(run(NULL, 0, "%s commit changes --quiet --limit 9000 %s %s/g 2>/dev/null", bin, head, dir), 2);
    assert_int_equal(run(NULL, 0, "%s commit changes --quiet --limit 0 %s %s/g 2>/dev/null", bin, head, dir), 2);
}

static void merges(void **state)
{
    (void)state;
    char out[65536], head[32];
    assert_int_equal(run(NULL, 0, "%s branch create --quiet dev %s/g", bin, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json dev %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"outcome\": \"already_up_to_date\""));
    assert_non_null(strstr(out, "\"commit\": null"));
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --query %s/m.gq add --params '{\"n\":\"Bob\"}' --branch dev", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json dev --into main %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"outcome\": \"fast_forward\""));
    /* both sides change: merged; then a conflict */
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --query %s/m.gq age --params '{\"n\":\"Ada\",\"a\":1}' --branch dev", bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --query %s/m.gq age --params '{\"n\":\"Grace\",\"a\":2}'", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json dev %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"outcome\": \"merged\""));
    assert_non_null(strstr(out, "\"updated\": 1"));
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --limit 1 %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "(merge)"));
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --query %s/m.gq age --params '{\"n\":\"Ada\",\"a\":3}' --branch dev", bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --query %s/m.gq age --params '{\"n\":\"Ada\",\"a\":4}'", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --json --limit 1 %s/g", bin, dir), 0);
    grab(out, "head", head);
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json dev %s/g 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "divergent_update"));
    assert_non_null(strstr(out, "Person 'Ada' was changed differently on dev and main: age: 3 on dev, 4 on main"));
    assert_non_null(strstr(out, "\"conflicts\""));
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --json --limit 1 %s/g", bin, dir), 0);
    assert_non_null(strstr(out, head)); /* nothing published */
    /* --if-commit: a stale target head exits 4 */
    assert_int_equal(run(NULL, 0, "%s branch create --quiet feature %s/g", bin, dir), 0);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --query %s/m.gq add --params '{\"n\":\"Eve\"}' --branch feature", bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "%s branch merge --quiet feature --if-commit 01M8VVQ35TCWPYWAZP6F0KDEYQ %s/g 2>/dev/null", bin, dir), 4);
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json feature --if-commit %s --delete-branch %s/g", bin, head, dir), 0);
    assert_non_null(strstr(out, "\"branch_deleted\": true"));
    assert_int_equal(run(out, sizeof out, "%s branch list --quiet %s/g", bin, dir), 0);
    assert_null(strstr(out, "feature"));
    assert_int_equal(run(out, sizeof out, "%s query --quiet --store %s/g -e 'query q() { match { $p: Person } return { $p.name } order { $p.name } }' --format csv", bin, dir), 0);
    assert_string_equal(out, "p.name\r\nAda\r\nBob\r\nEve\r\nGrace\r\n");
}

/* branch create -m: the message is kept with the branch (a new process lists it), shown by
 * --json and --format; a refused message or a refused create leaves nothing. */
static void branch_messages(void **state)
{
    (void)state;
    char out[65536];
    assert_int_equal(run(out, sizeof out, "%s branch create --quiet --json -m 'fix the owners' why %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"message\": \"fix the owners\""));
    assert_int_equal(run(NULL, 0, "%s branch create --quiet plain %s/g", bin, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s branch list --quiet --json %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"why\": \"fix the owners\""));
    assert_non_null(strstr(out, "\"plain\": null"));
    assert_int_equal(run(out, sizeof out, "%s branch list --quiet --format csv %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "name,head,message"));
    assert_non_null(strstr(out, ",fix the owners"));
    /* refused: a control character; an existing name keeps its first message */
    assert_int_equal(run(NULL, 0, "%s branch create --quiet -m \"$(printf 'a\\001b')\" bad %s/g 2>/dev/null", bin, dir), 1);
    assert_int_equal(run(NULL, 0, "%s branch create --quiet -m other why %s/g 2>/dev/null", bin, dir), 1);
    assert_int_equal(run(out, sizeof out, "%s branch list --quiet --json %s/g", bin, dir), 0);
    assert_null(strstr(out, "\"bad\""));
    assert_null(strstr(out, "other"));
    assert_non_null(strstr(out, "\"why\": \"fix the owners\""));
    /* -m goes with create among the branch verbs, not with list */
    assert_int_equal(run(NULL, 0, "%s branch list --quiet -m x %s/g 2>/dev/null", bin, dir), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(branches_and_history, setup, teardown),
        cmocka_unit_test_setup_teardown(merges, setup, teardown),
        cmocka_unit_test_setup_teardown(branch_messages, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
