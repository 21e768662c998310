/*
 * test_changes_u64.c — a U64 above 2^63-1 in a change image is a bare JSON number, as result
 * columns spell it (docs/query-language.md "Values in JSON"; the reference writes integers bare
 * on every route, change images included): og_db_changes, og_db_commit_feed, og_db_changes_poll
 * and a merge proposal's review diff all write `18446744073709551615`, not a string, and
 * og_json_read reads it back whole.  The CLI's and the server's change views are pinned by
 * tests/cli/test_cli_changes_u64.c and tests/server/test_server_changes.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "omnigraph.h"

static char dir[64], uri[96], before[32], after[32];
static og_db *db;

static const char *SCHEMA = "node Meter { name: String @key  reading: U64? }\n";

static void mutate(const char *q, const char *params, const char *branch)
{
    og_receipt r;
    memset(&r, 0, sizeof r);
    if (og_db_mutate(&r, db, q, strlen(q), NULL, params, branch, NULL) != OG_OK) fail_msg("%s: %s", q, og_error_message());
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-chg-u64-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(uri, sizeof uri, "%s/g", dir);
    if (og_db_init(&db, uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    mutate("query m() { insert Meter { name: \"m\", reading: 1 } }", NULL, "main");
    if (og_db_resolve_commit(db, "main", before, sizeof before) != OG_OK) return -1;
    mutate("query m($r: U64) { update Meter set { reading: $r } where name = \"m\" }", "{\"r\":\"18446744073709551615\"}",
           "main");
    return og_db_resolve_commit(db, "main", after, sizeof after) == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* text holds `"reading": 18446744073709551615` (compact or indented) and no quoted spelling,
 * and reads back (og_json_read) with that number's digits. */
static void bare_in(char *text)
{
    assert_non_null(text);
    if (!strstr(text, "\"reading\": 18446744073709551615") && !strstr(text, "\"reading\":18446744073709551615"))
        fail_msg("no bare U64 in: %s", text);
    assert_null(strstr(text, "\"18446744073709551615\""));
    json_t *j = og_json_read(text, strlen(text));
    assert_non_null(j);
    char *again = og_json_text(j, JSON_COMPACT);
    assert_non_null(strstr(again, "\"reading\":18446744073709551615"));
    og_free(again);
    json_decref(j);
    og_free(text);
}

static void changes_between_commits_write_the_u64_bare(void **state)
{
    (void)state;
    og_changes_opts o = {before, after, NULL, 0, 0};
    char *text = NULL;
    assert_int_equal(og_db_changes(&text, db, &o), OG_OK);
    assert_non_null(strstr(text, "\"reading\": 1\n")); /* the before image */
    bare_in(text);
}

static void the_feed_of_one_commit_and_a_poll_write_it_bare(void **state)
{
    (void)state;
    og_changes_poll_opts o;
    memset(&o, 0, sizeof o);
    char *text = NULL;
    assert_int_equal(og_db_commit_feed(&text, db, after, &o), OG_OK);
    bare_in(text);
    o.start = "beginning";
    assert_int_equal(og_db_changes_poll(&text, db, &o), OG_OK);
    bare_in(text);
}

static void a_proposal_review_diff_writes_it_bare(void **state)
{
    (void)state;
    assert_int_equal(og_db_branch_create(db, "side", NULL, NULL, NULL), OG_OK);
    mutate("query m($r: U64) { insert Meter { name: \"n\", reading: $r } }", "{\"r\":\"18446744073709551614\"}", "side");
    char *text = NULL;
    assert_int_equal(og_db_proposal_create(&text, db, "side", NULL, "n", NULL), OG_OK);
    json_t *p = json_loads(text, 0, NULL);
    og_free(text);
    char id[64];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(p, "id")));
    json_decref(p);
    assert_int_equal(og_db_proposal_review(&text, db, id), OG_OK);
    assert_non_null(strstr(text, "\"reading\": 18446744073709551614"));
    assert_null(strstr(text, "\"18446744073709551614\""));
    og_free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(changes_between_commits_write_the_u64_bare),
        cmocka_unit_test(the_feed_of_one_commit_and_a_poll_write_it_bare),
        cmocka_unit_test(a_proposal_review_diff_writes_it_bare),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
