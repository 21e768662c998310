/*
 * test_changes.c — row-level changes (reference-storage.md §6): an insert → update → delete
 * chain read at every commit (time travel) and diffed commit by commit (after / before+after /
 * before images), diffs across several commits (an insert later deleted is no change),
 * filters by type and op, edges with endpoints, the genesis refusal, and the cost rule:
 * fragments present in both versions with the same deletion file are skipped unread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/changes.h"
#include "engine/history.h"
#include "engine/mutate.h"
#include "fixture.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32? }\n"
    "edge Knows: Person -> Person { since: Date? }\n";

static const char *READS =
    "query people() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n";

static const char *MUTS =
    "query add_person($name: String, $age: I32) { insert Person { name: $name, age: $age } }\n"
    "query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }\n"
    "query del_person($name: String) { delete Person where name = $name }\n"
    "query add_knows($from: String, $to: String) { insert Knows { from: $from, to: $to } }\n";

static int setup(void **state)
{
    fixture *f = fixture_new(SCHEMA, READS);
    assert_non_null(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

static void mut(fixture *f, const char *name, const char *params, char commit[OG_ULID_LEN + 1])
{
    json_t *pj = json_loads(params, 0, NULL);
    og_write_result res;
    og_status st = og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), name, pj, NULL, &res, NULL);
    json_decref(pj);
    if (st) fail_msg("%s: %s", name, og_error_message());
    if (commit) snprintf(commit, OG_ULID_LEN + 1, "%s", res.commit);
}

static void load(fixture *f, const char *text, og_load_mode mode, char commit[OG_ULID_LEN + 1])
{
    og_write_result res;
    if (fixture_load(f, text, mode, &res)) fail_msg("load: %s", og_error_message());
    snprintf(commit, OG_ULID_LEN + 1, "%s", res.commit);
}

static int64_t age_of(const og_table_delta *d, const og_row_set *rs, uint32_t row)
{
    (void)d;
    return og_vector_get_i64(&rs->cols[2], row); /* id, name, age */
}

static void expect_rows_at(fixture *f, const char *commit, const char *want)
{
    char got[512];
    if (fixture_query(f, "people", NULL, commit, got, sizeof got)) fail_msg("at %s: %s", commit, og_error_message());
    assert_string_equal(got, want);
}

static void insert_update_delete_chain(void **state)
{
    fixture *f = *state;
    char c1[OG_ULID_LEN + 1], c2[OG_ULID_LEN + 1], c3[OG_ULID_LEN + 1], c0[OG_ULID_LEN + 1];
    load(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\",\"age\":5}}\n", OG_LOAD_OVERWRITE, c0);
    mut(f, "add_person", "{\"name\":\"Ann\",\"age\":30}", c1);
    mut(f, "set_age", "{\"name\":\"Ann\",\"age\":31}", c2);
    mut(f, "del_person", "{\"name\":\"Ann\"}", c3);
    /* time travel: each commit reads as it was */
    expect_rows_at(f, c0, "Bob|5");
    expect_rows_at(f, c1, "Ann|30;Bob|5");
    expect_rows_at(f, c2, "Ann|31;Bob|5");
    expect_rows_at(f, c3, "Bob|5");

    og_changeset cs;
    assert_int_equal(og_changes_commit(f->e, c1, NULL, &cs), OG_OK);
    assert_int_equal(cs.ntables, 1);
    assert_int_equal(cs.tables[0].nchanges, 1);
    og_change *ch = &cs.tables[0].changes[0];
    assert_int_equal(ch->op, OG_CHANGE_INSERT);
    assert_int_equal(ch->before, OG_CHANGE_NO_ROW);
    assert_int_equal(age_of(&cs.tables[0], &cs.tables[0].after, ch->after), 30);
    assert_string_equal(cs.from, c0);
    og_changeset_free(&cs);

    assert_int_equal(og_changes_commit(f->e, c2, NULL, &cs), OG_OK);
    assert_int_equal(cs.updated, 1);
    ch = &cs.tables[0].changes[0];
    assert_int_equal(ch->op, OG_CHANGE_UPDATE);
    assert_memory_equal(ch->id, "Ann", 3);
    assert_int_equal(age_of(&cs.tables[0], &cs.tables[0].before, ch->before), 30);
    assert_int_equal(age_of(&cs.tables[0], &cs.tables[0].after, ch->after), 31);
    og_changeset_free(&cs);

    assert_int_equal(og_changes_commit(f->e, c3, NULL, &cs), OG_OK);
    assert_int_equal(cs.deleted, 1);
    ch = &cs.tables[0].changes[0];
    assert_int_equal(ch->op, OG_CHANGE_DELETE);
    assert_int_equal(ch->after, OG_CHANGE_NO_ROW);
    assert_int_equal(age_of(&cs.tables[0], &cs.tables[0].before, ch->before), 31);
    og_changeset_free(&cs);

    /* across commits: c1 -> c3 deletes Ann; c0 -> c3 is no change at all */
    assert_int_equal(og_changes_between(f->e, c1, c3, NULL, &cs), OG_OK);
    assert_int_equal(cs.deleted, 1);
    assert_int_equal(cs.inserted + cs.updated, 0);
    og_changeset_free(&cs);
    assert_int_equal(og_changes_between(f->e, c0, c3, NULL, &cs), OG_OK);
    assert_int_equal(cs.ntables, 0);
    og_changeset_free(&cs);
    /* and backwards c3 -> c2 re-inserts it */
    assert_int_equal(og_changes_between(f->e, c3, c2, NULL, &cs), OG_OK);
    assert_int_equal(cs.inserted, 1);
    og_changeset_free(&cs);
}

static void filters_and_edges(void **state)
{
    fixture *f = *state;
    char c0[OG_ULID_LEN + 1], c1[OG_ULID_LEN + 1];
    load(f,
         "{\"type\":\"Person\",\"data\":{\"name\":\"A\",\"age\":1}}\n"
         "{\"type\":\"Person\",\"data\":{\"name\":\"B\",\"age\":2}}\n"
         "{\"type\":\"Person\",\"data\":{\"name\":\"C\",\"age\":3}}\n",
         OG_LOAD_OVERWRITE, c0);
    load(f,
         "{\"type\":\"Person\",\"data\":{\"name\":\"A\",\"age\":10}}\n"
         "{\"type\":\"Person\",\"data\":{\"name\":\"D\",\"age\":4}}\n"
         "{\"edge\":\"Knows\",\"from\":\"A\",\"to\":\"D\",\"data\":{\"since\":\"2020-01-02\"}}\n",
         OG_LOAD_MERGE, c1);
    og_changeset cs;
    assert_int_equal(og_changes_between(f->e, c0, c1, NULL, &cs), OG_OK);
    assert_int_equal(cs.ntables, 2);
    assert_int_equal(cs.inserted, 2); /* D and the edge */
    assert_int_equal(cs.updated, 1);  /* A */
    /* nodes before edges, ids ascending */
    assert_false(cs.tables[0].is_edge);
    assert_memory_equal(cs.tables[0].changes[0].id, "A", 1);
    assert_memory_equal(cs.tables[0].changes[1].id, "D", 1);
    const og_table_delta *e = &cs.tables[1];
    assert_true(e->is_edge);
    size_t n;
    const uint8_t *src = og_vector_get_bytes(&e->after.cols[1], e->changes[0].after, &n);
    assert_memory_equal(src, "A", 1);
    const uint8_t *dst = og_vector_get_bytes(&e->after.cols[2], e->changes[0].after, &n);
    assert_memory_equal(dst, "D", 1);
    og_changeset_free(&cs);

    const char *types[] = {"knows"}; /* edges match case-insensitively */
    og_change_filter ft = {types, 1, 0};
    assert_int_equal(og_changes_between(f->e, c0, c1, &ft, &cs), OG_OK);
    assert_int_equal(cs.ntables, 1);
    assert_true(cs.tables[0].is_edge);
    og_changeset_free(&cs);

    og_change_filter fo = {NULL, 0, 1u << OG_CHANGE_UPDATE};
    assert_int_equal(og_changes_between(f->e, c0, c1, &fo, &cs), OG_OK);
    assert_int_equal(cs.updated, 1);
    assert_int_equal(cs.inserted, 0);
    og_changeset_free(&cs);

    const char *bad[] = {"Nope"};
    og_change_filter fb = {bad, 1, 0};
    assert_int_equal(og_changes_between(f->e, c0, c1, &fb, &cs), OG_ERR_NOT_FOUND);
}

static void genesis_has_no_parent(void **state)
{
    fixture *f = *state;
    og_ref_entry head;
    assert_int_equal(og_graph_head_entry(og_engine_graph(f->e), "main", &head), OG_OK);
    og_changeset cs;
    assert_int_equal(og_changes_commit(f->e, head.commit, NULL, &cs), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "commit_has_no_parent"));
    assert_int_equal(og_changes_commit(f->e, "01M8VVQ35TCWPYWAZP6F0KDEYQ", NULL, &cs), OG_ERR_NOT_FOUND);
}

/* Unchanged fragments are skipped unread: ten appended fragments, one row updated. */
static void cost_follows_the_changed_fragments(void **state)
{
    fixture *f = *state;
    char c[OG_ULID_LEN + 1], c_upd[OG_ULID_LEN + 1];
    for (int i = 0; i < 10; i++) {
        char text[1024];
        size_t w = 0;
        for (int k = 0; k < 20; k++)
            w += (size_t)snprintf(text + w, sizeof text - w, "{\"type\":\"Person\",\"data\":{\"name\":\"p%d_%d\",\"age\":%d}}\n",
                                  i, k, k);
        load(f, text, OG_LOAD_APPEND, c);
    }
    mut(f, "set_age", "{\"name\":\"p3_7\",\"age\":99}", c_upd);
    og_changeset cs;
    assert_int_equal(og_changes_commit(f->e, c_upd, NULL, &cs), OG_OK);
    assert_int_equal(cs.updated, 1);
    assert_int_equal(cs.inserted + cs.deleted, 0);
    assert_int_equal(cs.fragments_skipped, 9);  /* untouched appends */
    assert_int_equal(cs.fragments_read, 2);     /* the one with the new deletion, the new one */
    assert_int_equal(cs.rows_read, 2);          /* the old image and the new one */
    og_changeset_free(&cs);
    /* the whole history: everything is an insert */
    og_commit_id *ids;
    size_t n;
    assert_int_equal(og_history_first_parent(og_engine_graph(f->e), c_upd, 0, &ids, &n), OG_OK);
    assert_int_equal(n, 12);
    assert_int_equal(og_changes_between(f->e, ids[n - 1].id, c_upd, NULL, &cs), OG_OK);
    assert_int_equal(cs.inserted, 200);
    og_changeset_free(&cs);
    free(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(insert_update_delete_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(filters_and_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(genesis_has_no_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(cost_follows_the_changed_fragments, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
