/*
 * test_cli_commitref.c — commit references (issue 16): wherever a commit is accepted
 * (`--at` of query/snapshot/export, `changes --from/--to`, `commit show`, `branch create
 * --at`) a unique id prefix, a branch name and BRANCH~N work; an ambiguous prefix is a typed
 * error listing the candidates, an unknown one and ~N beyond the root are not_found.
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

/* main's first-parent history, newest first: ids[0] = head, ids[n-1] = genesis. */
static char ids[8][32];
static size_t nids;

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-cli-ref-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    write_file("s.pg", "node Person { name: String @key  age: I32? }\n");
    write_file("d.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n");
    write_file("m.gq", "query add($n: String) { insert Person { name: $n } }\n"
                       "query names() { match { $p: Person } return { $p.name } order { $p.name } }\n");
    if (run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g >/dev/null && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g >/dev/null",
            bin, dir, dir, bin, dir, dir) != 0)
        return -1;
    if (run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"Bob\"}' --store %s/g >/dev/null", bin, dir, dir) != 0)
        return -1;
    char out[8192];
    if (run(out, sizeof out, "%s commit list --quiet %s/g", bin, dir) != 0) return -1;
    nids = 0;
    for (char *line = out; *line && nids < 8; nids++) {
        memcpy(ids[nids], line, 26);
        ids[nids][26] = '\0';
        char *nl = strchr(line, '\n');
        if (!nl) { nids++; break; }
        line = nl + 1;
    }
    return nids == 3 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The "commit" of `snapshot --json --at REF`, "" when it fails. */
static void snapshot_at(const char *ref, char id[32])
{
    char out[8192];
    id[0] = '\0';
    if (run(out, sizeof out, "%s snapshot --quiet --json --at '%s' %s/g 2>/dev/null", bin, ref, dir)) return;
    const char *p = strstr(out, "\"commit\": \"");
    if (!p) return;
    memcpy(id, p + 11, 26);
    id[26] = '\0';
}

static void a_unique_prefix_and_lower_case_resolve_to_the_commit(void **state)
{
    (void)state;
    char got[32], pre[32], out[8192];
    snprintf(pre, sizeof pre, "%.20s", ids[1]);
    snapshot_at(pre, got);
    assert_string_equal(got, ids[1]);
    for (char *p = pre; *p; p++) *p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
    snapshot_at(pre, got);
    assert_string_equal(got, ids[1]);
    /* commit show and changes take the same spellings */
    assert_int_equal(run(out, sizeof out, "%s commit show --quiet --json %.20s %s/g", bin, ids[0], dir), 0);
    assert_non_null(strstr(out, ids[0]));
    assert_int_equal(run(out, sizeof out, "%s changes --quiet --from %.20s --to main %s/g", bin, ids[2], dir), 0);
    assert_non_null(strstr(out, "2 inserted"));
    /* branch create --at a prefix starts the branch at that commit */
    assert_int_equal(run(NULL, 0, "%s branch create --quiet --at %.20s old %s/g", bin, ids[2], dir), 0);
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --limit 1 --branch old %s/g", bin, dir), 0);
    assert_non_null(strstr(out, ids[2]));
}

/* The short form: an id's last 8 (to 16) characters, its random part — commits written seconds
 * apart share their first ten (the time), never these in practice. */
static void the_short_form_is_the_last_eight_characters(void **state)
{
    (void)state;
    char got[32], ref[40], out[8192], err[4096];
    snprintf(ref, sizeof ref, "%s", ids[1] + 18);
    snapshot_at(ref, got);
    assert_string_equal(got, ids[1]);
    for (char *p = ref; *p; p++) *p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
    snapshot_at(ref, got);
    assert_string_equal(got, ids[1]);
    snprintf(ref, sizeof ref, "%s~1", ids[0] + 18); /* with ~N */
    snapshot_at(ref, got);
    assert_string_equal(got, ids[1]);
    snprintf(ref, sizeof ref, "%s", ids[2] + 12); /* 14 characters */
    snapshot_at(ref, got);
    assert_string_equal(got, ids[2]);
    assert_int_equal(run(out, sizeof out, "%s commit show --quiet --json %s %s/g", bin, ids[0] + 18, dir), 0);
    assert_non_null(strstr(out, ids[0]));
    /* 7 characters are no short form; an 8-character tail of no commit is not_found */
    snprintf(ref, sizeof ref, "%s", ids[1] + 19);
    assert_int_equal(run(err, sizeof err, "%s snapshot --quiet --at %s %s/g 2>&1 >/dev/null", bin, ref, dir), 1);
    if (!strstr(err, "not_found")) fail_msg("a 7-character tail resolved: %s", err);
    snprintf(ref, sizeof ref, "%s", ids[1] + 18);
    ref[0] = ref[0] == 'Z' ? 'Y' : 'Z';
    for (size_t i = 0; i < nids; i++)
        if (!strcmp(ids[i] + 18, ref)) return; /* cannot happen with random ids */
    assert_int_equal(run(err, sizeof err, "%s snapshot --quiet --at %s %s/g 2>&1 >/dev/null", bin, ref, dir), 1);
    if (!strstr(err, "not_found")) fail_msg("no not_found in: %s", err);
}

static void an_ambiguous_prefix_lists_the_candidates_and_an_unknown_one_is_not_found(void **state)
{
    (void)state;
    size_t lcp = 0;
    while (lcp < 26 && ids[0][lcp] == ids[1][lcp] && ids[1][lcp] == ids[2][lcp]) lcp++;
    if (lcp < 4) {
        printf("SKIP: the three commits share only %zu leading characters (created minutes apart)\n", lcp);
        return;
    }
    char err[8192];
    assert_int_equal(run(err, sizeof err, "%s snapshot --quiet --at %.*s %s/g 2>&1 >/dev/null", bin, (int)lcp, ids[0], dir), 1);
    if (!strstr(err, "invalid") || !strstr(err, "ambiguous")) fail_msg("no typed ambiguity error in: %s", err);
    for (size_t i = 0; i < nids; i++)
        if (!strstr(err, ids[i])) fail_msg("candidate %s not listed in: %s", ids[i], err);
    /* unknown prefix and unknown full id: not_found (change a character of the random part) */
    char bad[32];
    snprintf(bad, sizeof bad, "%s", ids[0]);
    bad[20] = bad[20] == 'Z' ? 'Y' : 'Z';
    for (size_t i = 0; i < nids; i++)
        if (!strncmp(bad, ids[i], 24)) return; /* cannot happen with random ids */
    assert_int_equal(run(err, sizeof err, "%s snapshot --quiet --at %.24s %s/g 2>&1 >/dev/null", bin, bad, dir), 1);
    if (!strstr(err, "not_found")) fail_msg("no not_found in: %s", err);
    assert_int_equal(run(err, sizeof err, "%s commit show --quiet %s %s/g 2>&1 >/dev/null", bin, bad, dir), 1);
    if (!strstr(err, "not_found")) fail_msg("no not_found in: %s", err);
    assert_int_equal(run(err, sizeof err, "%s query --quiet --store %s/g --query %s/m.gq names --at nosuchbranch 2>&1 >/dev/null", bin, dir, dir), 1);
    if (!strstr(err, "not_found")) fail_msg("no not_found in: %s", err);
}

static void a_branch_name_and_tilde_walk_first_parents(void **state)
{
    (void)state;
    char got[32], err[4096];
    snapshot_at("main", got);
    assert_string_equal(got, ids[0]);
    snapshot_at("main~1", got);
    assert_string_equal(got, ids[1]);
    snapshot_at("main~", got);
    assert_string_equal(got, ids[1]);
    snapshot_at("main~2", got);
    assert_string_equal(got, ids[2]);
    snapshot_at("main~0", got);
    assert_string_equal(got, ids[0]);
    char ref[64];
    snprintf(ref, sizeof ref, "%.20s~1", ids[0]);
    snapshot_at(ref, got);
    assert_string_equal(got, ids[1]);
    /* beyond the root: typed not_found */
    assert_int_equal(run(err, sizeof err, "%s snapshot --quiet --at main~3 %s/g 2>&1 >/dev/null", bin, dir), 1);
    if (!strstr(err, "not_found") || !strstr(err, "beyond the root")) fail_msg("no not_found in: %s", err);
    assert_int_equal(run(err, sizeof err, "%s snapshot --quiet --at main~x %s/g 2>&1 >/dev/null", bin, dir), 1);
    if (!strstr(err, "invalid")) fail_msg("no invalid in: %s", err);
    /* a branch's own commits: side~1 is main's head */
    assert_int_equal(run(NULL, 0, "%s branch create --quiet side %s/g", bin, dir), 0);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --query %s/m.gq add --params '{\"n\":\"Sid\"}' --branch side --store %s/g >/dev/null",
                         bin, dir, dir), 0);
    snapshot_at("side~1", got);
    assert_string_equal(got, ids[0]);
    assert_int_equal(run(NULL, 0, "%s branch create --quiet --at side~1 side2 %s/g", bin, dir), 0);
    char out[4096];
    assert_int_equal(run(out, sizeof out, "%s commit list --quiet --limit 1 --branch side2 %s/g", bin, dir), 0);
    assert_non_null(strstr(out, ids[0]));
}

static void time_travel_with_a_prefix_returns_the_rows_of_the_full_id(void **state)
{
    (void)state;
    static char a[16384], b[16384];
    assert_int_equal(run(a, sizeof a, "%s query --quiet --store %s/g --query %s/m.gq names --format jsonl --at %s", bin, dir, dir, ids[1]), 0);
    assert_int_equal(run(b, sizeof b, "%s query --quiet --store %s/g --query %s/m.gq names --format jsonl --at %.20s", bin, dir, dir, ids[1]), 0);
    assert_non_null(strstr(a, "Ada"));
    assert_null(strstr(a, "Bob"));
    /* the header names the target as given; the commit read and the rows are the same */
    char want[64];
    snprintf(want, sizeof want, "\"graph_commit_id\":\"%s\"", ids[1]);
    assert_non_null(strstr(b, want));
    assert_non_null(strchr(a, '\n'));
    assert_non_null(strchr(b, '\n'));
    assert_string_equal(strchr(a, '\n'), strchr(b, '\n'));
    assert_int_equal(run(b, sizeof b, "%s query --quiet --store %s/g --query %s/m.gq names --format jsonl --at main~1", bin, dir, dir), 0);
    assert_non_null(strstr(b, want));
    assert_string_equal(strchr(a, '\n'), strchr(b, '\n'));
    assert_int_equal(run(a, sizeof a, "%s export --quiet --at %s %s/g", bin, ids[1], dir), 0);
    assert_int_equal(run(b, sizeof b, "%s export --quiet --at %.20s %s/g", bin, ids[1], dir), 0);
    assert_string_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_unique_prefix_and_lower_case_resolve_to_the_commit),
        cmocka_unit_test(an_ambiguous_prefix_lists_the_candidates_and_an_unknown_one_is_not_found),
        cmocka_unit_test(the_short_form_is_the_last_eight_characters),
        cmocka_unit_test(a_branch_name_and_tilde_walk_first_parents),
        cmocka_unit_test(time_travel_with_a_prefix_returns_the_rows_of_the_full_id),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
