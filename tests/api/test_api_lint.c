/*
 * test_api_lint.c — og_db_lint through the public API: a text checked against the schema of
 * the state it names (a property added by a schema change is known at the head, unknown at
 * the commit before it; a branch that does not exist is NOT_FOUND), and a text that is not
 * UTF-8 still gives a well-formed report.
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
#include <jansson.h>

#include "omnigraph.h"

static const char *V1 = "node Person { name: String @key  age: I32? }\n";
static const char *V2 = "node Person { name: String @key  age: I32?  nick: String? }\n";
static const char *Q = "query q() { match { $p: Person } return { $p.nick } }";

typedef struct ctx {
    char dir[64];
    og_db *db;
    char before[32];
} ctx;

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-apilint-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    char uri[96];
    snprintf(uri, sizeof uri, "%s/g", c->dir);
    if (og_db_init(&c->db, uri, "v1.pg", V1, strlen(V1), NULL)) return -1;
    if (og_db_resolve_commit(c->db, "main", c->before, sizeof c->before)) return -1;
    og_receipt rc;
    char *plan = NULL;
    if (og_db_schema_apply(&rc, &plan, c->db, NULL, "v2.pg", V2, strlen(V2), 0, 0)) return -1;
    og_free(plan);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    int rc = system(cmd);
    free(c);
    return rc == 0 ? 0 : -1;
}

static json_t *lint(ctx *c, const char *text, const og_read_opts *at, og_status *st)
{
    char *out = NULL;
    *st = og_db_lint(&out, c->db, text, strlen(text), at);
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    og_free(out);
    return j;
}

static void test_lint_follows_the_schema_of_the_state(void **state)
{
    ctx *c = *state;
    og_status st;
    json_t *j = lint(c, Q, NULL, &st); /* the head of main: nick exists */
    assert_int_equal(st, OG_OK);
    assert_true(json_is_true(json_object_get(j, "ok")));
    assert_int_equal(json_array_size(json_object_get(j, "diagnostics")), 0);
    json_decref(j);

    og_read_opts at = {NULL, c->before}; /* the commit before the schema change: it does not */
    j = lint(c, Q, &at, &st);
    assert_int_equal(st, OG_OK);
    assert_true(json_is_false(json_object_get(j, "ok")));
    json_t *d = json_array_get(json_object_get(j, "diagnostics"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "code")), "T6");
    assert_int_equal(json_integer_value(json_object_get(d, "start")), strstr(Q, "$p.nick") - Q);
    json_decref(j);

    og_read_opts nob = {"no-such-branch", NULL};
    j = lint(c, Q, &nob, &st);
    assert_int_equal(st, OG_ERR_NOT_FOUND);
    assert_null(j);
}

static void test_lint_text_not_utf8(void **state)
{
    ctx *c = *state;
    og_status st;
    /* a lone 0xFF inside an identifier position: a parse error whose report stays valid JSON */
    json_t *j = lint(c, "query q() { match { $p: Person\xff } return { $p.name } }", NULL, &st);
    assert_int_equal(st, OG_OK);
    assert_non_null(j);
    assert_true(json_is_false(json_object_get(j, "ok")));
    json_t *d = json_array_get(json_object_get(j, "diagnostics"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "code")), "Q000");
    assert_non_null(json_string_value(json_object_get(d, "message")));
    assert_int_equal(json_integer_value(json_object_get(d, "line")), 1);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lint_follows_the_schema_of_the_state),
        cmocka_unit_test(test_lint_text_not_utf8),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
