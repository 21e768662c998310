/*
 * test_proposals.c — merge proposals (include/omnigraph.h "Merge proposals", issue 38): one is
 * opened on a branch by its agent, reviewed (the diff from the merge base, what the merge would
 * do — published nothing), approved by another actor (the merge, recorded with its commit) and
 * survives reopening the graph; a conflicting one shows its conflicts and stays open when
 * approving fails; a closed one cannot be approved; decisions race to one winner; bad input is
 * refused typed.  Also the dry-run merge the review relies on: it decides and publishes nothing,
 * and a branch's message (what it is for) given at creation, listed after reopening.
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

static char dir[64], uri[96];
static og_db *db;

static const char *SCHEMA = "node Person { name: String @key  age: I32? }\n";

static void mutate(const char *q, const char *branch)
{
    og_receipt r;
    memset(&r, 0, sizeof r);
    og_status st = og_db_mutate(&r, db, q, strlen(q), NULL, NULL, branch, NULL);
    if (st != OG_OK) fail_msg("%s: %s", q, og_error_message());
}

/* The call's document, parsed (and *text freed), after checking its status.  *text is read
 * through a pointer: passed by value it was evaluated before the call that fills it wherever
 * the compiler evaluates arguments right to left (gcc -O2: every document read as NULL). */
static json_t *doc(og_status want, og_status st, char **text)
{
    if (st != want) fail_msg("want %s, got %s: %s", og_status_name(want), og_status_name(st), og_error_message());
    json_t *j = *text ? json_loads(*text, 0, NULL) : NULL;
    og_free(*text);
    *text = NULL;
    return j;
}

static const char *jstr(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static char *head_of(const char *branch)
{
    static char h[32];
    assert_int_equal(og_db_resolve_commit(db, branch, h, sizeof h), OG_OK);
    return h;
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-proposals-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(uri, sizeof uri, "%s/g", dir);
    if (og_db_init(&db, uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    og_set_thread_actor("lead");
    mutate("query m() { insert Person { name: \"Ada\", age: 36 } }", "main");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    og_set_thread_actor(NULL);
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_open_review_approve_survives_reopen(void **state)
{
    (void)state;
    og_set_thread_actor("agent-a");
    assert_int_equal(og_db_branch_create(db, "agent-a/grace", NULL, NULL, NULL), OG_OK);
    mutate("query m() { insert Person { name: \"Grace\", age: 45 } }", "agent-a/grace");
    char *text = NULL;
    json_t *p = doc(OG_OK, og_db_proposal_create(&text, db, "agent-a/grace", NULL, "Add Grace", "a new person"), &text);
    char id[64];
    snprintf(id, sizeof id, "%s", jstr(p, "id"));
    assert_int_equal(strlen(id), 26);
    assert_string_equal(jstr(p, "state"), "open");
    assert_string_equal(jstr(p, "target"), "main");
    assert_string_equal(jstr(p, "created_by"), "agent-a");
    assert_string_equal(jstr(p, "source_head"), head_of("agent-a/grace"));
    json_decref(p);

    /* the review: one inserted row against the merge base; the merge would fast-forward; nothing moved */
    char main_before[32];
    snprintf(main_before, sizeof main_before, "%s", head_of("main"));
    json_t *rv = doc(OG_OK, og_db_proposal_review(&text, db, id), &text);
    assert_int_equal(json_array_size(json_object_get(json_object_get(rv, "diff"), "changes")), 1);
    assert_string_equal(jstr(json_object_get(rv, "merge"), "outcome"), "fast_forward");
    assert_true(json_is_true(json_object_get(json_object_get(rv, "merge"), "dry_run")));
    assert_int_equal(json_array_size(json_object_get(rv, "conflicts")), 0);
    json_decref(rv);
    assert_string_equal(head_of("main"), main_before);

    /* reopen the graph: the proposal is still there, open, in the list */
    og_db_close(db);
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    json_t *l = doc(OG_OK, og_db_proposal_list(&text, db, "open"), &text);
    assert_int_equal(json_array_size(json_object_get(l, "proposals")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(l, "proposals"), 0), "id"), id);
    json_decref(l);

    /* the lead approves: merged, recorded with the merge commit, main moved */
    og_set_thread_actor("lead");
    json_t *a = doc(OG_OK, og_db_proposal_approve(&text, db, id, NULL, NULL), &text);
    json_t *ap = json_object_get(a, "proposal");
    assert_string_equal(jstr(ap, "state"), "merged");
    assert_string_equal(jstr(ap, "updated_by"), "lead");
    assert_string_equal(jstr(ap, "merge_commit"), head_of("main"));
    assert_string_equal(jstr(json_object_get(a, "merge"), "outcome"), "fast_forward");
    json_decref(a);
    /* decided once: approving or closing again is refused, typed */
    text = NULL;
    assert_int_equal(og_db_proposal_approve(&text, db, id, NULL, NULL), OG_ERR_PRECONDITION_FAILED);
    og_free(text);
    assert_int_equal(og_db_proposal_close(&text, db, id, "late"), OG_ERR_PRECONDITION_FAILED);
    json_t *g = doc(OG_OK, og_db_proposal_get(&text, db, id), &text);
    assert_int_equal(json_array_size(json_object_get(g, "events")), 2);
    json_decref(g);
    l = doc(OG_OK, og_db_proposal_list(&text, db, "open"), &text);
    assert_int_equal(json_array_size(json_object_get(l, "proposals")), 0);
    json_decref(l);
}

static void test_conflicts_shown_and_close(void **state)
{
    (void)state;
    og_set_thread_actor("agent-b");
    assert_int_equal(og_db_branch_create(db, "agent-b/age", NULL, NULL, NULL), OG_OK);
    mutate("query m() { update Person set { age: 40 } where name = \"Ada\" }", "agent-b/age");
    og_set_thread_actor("lead");
    mutate("query m() { update Person set { age: 41 } where name = \"Ada\" }", "main");
    char *text = NULL;
    json_t *p = doc(OG_OK, og_db_proposal_create(&text, db, "agent-b/age", "main", "Ada is 40", NULL), &text);
    char id[64];
    snprintf(id, sizeof id, "%s", jstr(p, "id"));
    json_decref(p);
    json_t *rv = doc(OG_OK, og_db_proposal_review(&text, db, id), &text);
    assert_true(json_is_null(json_object_get(rv, "merge")));
    json_t *c0 = json_array_get(json_object_get(rv, "conflicts"), 0);
    assert_string_equal(jstr(c0, "kind"), "divergent_update");
    assert_string_equal(jstr(c0, "id"), "Ada");
    json_decref(rv);
    /* approving fails with the conflicts and leaves it open */
    json_t *cf = doc(OG_ERR_CONFLICT, og_db_proposal_approve(&text, db, id, NULL, NULL), &text);
    assert_int_equal(json_array_size(json_object_get(cf, "conflicts")), 1);
    json_decref(cf);
    json_t *g = doc(OG_OK, og_db_proposal_get(&text, db, id), &text);
    assert_string_equal(jstr(g, "state"), "open");
    json_decref(g);
    /* closed with a reason, it cannot be approved */
    json_t *cl = doc(OG_OK, og_db_proposal_close(&text, db, id, "main moved on"), &text);
    assert_string_equal(jstr(cl, "state"), "closed");
    assert_string_equal(jstr(cl, "close_reason"), "main moved on");
    json_decref(cl);
    text = NULL;
    assert_int_equal(og_db_proposal_approve(&text, db, id, NULL, NULL), OG_ERR_PRECONDITION_FAILED);
    og_free(text);
    /* newest first, every state */
    json_t *l = doc(OG_OK, og_db_proposal_list(&text, db, NULL), &text);
    assert_int_equal(json_array_size(json_object_get(l, "proposals")), 2);
    assert_string_equal(jstr(json_array_get(json_object_get(l, "proposals"), 0), "id"), id);
    json_decref(l);
}

static void test_bad_input_is_typed(void **state)
{
    (void)state;
    char *text = NULL;
    assert_int_equal(og_db_proposal_create(&text, db, "nope", NULL, "t", NULL), OG_ERR_NOT_FOUND);
    assert_int_equal(og_db_proposal_create(&text, db, "main", "main", "t", NULL), OG_ERR_INVALID);
    assert_int_equal(og_db_proposal_create(&text, db, "agent-a/grace", NULL, "", NULL), OG_ERR_INVALID);
    assert_int_equal(og_db_proposal_get(&text, db, "not-an-id"), OG_ERR_NOT_FOUND);
    assert_int_equal(og_db_proposal_get(&text, db, "01ARZ3NDEKTSV4RRFFQ69G5FAV"), OG_ERR_NOT_FOUND);
    assert_int_equal(og_db_proposal_list(&text, db, "pending"), OG_ERR_INVALID);
    assert_int_equal(og_db_proposal_close(&text, db, "../../x", NULL), OG_ERR_NOT_FOUND);
    assert_null(text);
}

/* A dry-run merge decides and publishes nothing (no commit, the target head unchanged). */
static void test_dry_run_merge_publishes_nothing(void **state)
{
    (void)state;
    og_set_thread_actor("agent-c");
    assert_int_equal(og_db_branch_create(db, "agent-c/x", NULL, NULL, NULL), OG_OK);
    mutate("query m() { insert Person { name: \"Cy\" } }", "agent-c/x");
    og_set_thread_actor("lead");
    mutate("query m() { insert Person { name: \"Dee\" } }", "main"); /* a three-way merge, not a fast-forward */
    char before[32];
    snprintf(before, sizeof before, "%s", head_of("main"));
    char *text = NULL;
    og_db_merge_opts mo = {.source = "agent-c/x", .delete_branch = 1};
    json_t *m = doc(OG_OK, og_db_branch_merge_dry_run(&text, db, &mo, NULL), &text);
    assert_string_equal(jstr(m, "outcome"), "merged");
    assert_int_equal(json_integer_value(json_object_get(m, "inserted")), 1);
    assert_true(json_is_null(json_object_get(m, "commit")));
    assert_true(json_is_false(json_object_get(m, "branch_deleted")));
    json_decref(m);
    assert_string_equal(head_of("main"), before);
    assert_int_equal(og_db_resolve_commit(db, "agent-c/x", before, sizeof before), OG_OK); /* still there */
}

/* og_db_branch_create_ex: the message is listed by og_db_branch_list, also by a handle opened
 * afterwards; a bad message or options version refuses the create and leaves no branch. */
static void test_branch_message_listed_after_reopen(void **state)
{
    (void)state;
    char head[32];
    og_db_branch_create_opts o = {OG_DB_BRANCH_CREATE_OPTS_VERSION, "main", NULL, "add Grace's age"};
    assert_int_equal(og_db_branch_create_ex(head, db, "agent-a/ages", &o), OG_OK);
    assert_string_equal(head, head_of("main"));
    assert_int_equal(og_db_branch_create_ex(NULL, db, "agent-a/plain", NULL), OG_OK); /* NULL: from main, no message */
    og_db_branch_create_opts bad = o;
    bad.version = 99;
    assert_int_equal(og_db_branch_create_ex(NULL, db, "agent-a/v99", &bad), OG_ERR_INVALID);
    bad = o;
    char big[1100];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    bad.message = big;
    assert_int_equal(og_db_branch_create_ex(NULL, db, "agent-a/big", &bad), OG_ERR_INVALID);
    og_db_close(db);
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    char *text;
    json_t *l = doc(OG_OK, og_db_branch_list(&text, db), &text), *b;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(l, "branches"), i, b)
    {
        const char *name = jstr(b, "name");
        assert_string_not_equal(name, "agent-a/v99");
        assert_string_not_equal(name, "agent-a/big");
        if (!strcmp(name, "agent-a/ages")) {
            assert_string_equal(jstr(b, "message"), "add Grace's age");
            assert_string_equal(jstr(b, "created_by"), "lead");
            seen++;
        } else {
            assert_true(json_is_null(json_object_get(b, "message")));
            seen += !strcmp(name, "agent-a/plain");
        }
    }
    assert_int_equal(seen, 2);
    json_decref(l);
    assert_int_equal(og_db_branch_delete(db, "agent-a/ages"), OG_OK);
    assert_int_equal(og_db_branch_delete(db, "agent-a/plain"), OG_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_review_approve_survives_reopen),
        cmocka_unit_test(test_conflicts_shown_and_close),
        cmocka_unit_test(test_bad_input_is_typed),
        cmocka_unit_test(test_dry_run_merge_publishes_nothing),
        cmocka_unit_test(test_branch_message_listed_after_reopen),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
