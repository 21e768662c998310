/*
 * test_mutate.c — mutations end to end (reference-examples.md E8, E14, E18): keyed insert is
 * an upsert, edge inserts, one commit per multi-statement query, read-your-writes across
 * statements, delete cascades to edges, zero matches publish nothing, key updates and
 * constraint violations are refused with nothing published, --if-commit preconditions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/mutate.h"
#include "fixture.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32?  role: enum(admin, guest, member)?  email: String?\n"
    "              @range(age, 0..120)  @unique(email) }\n"
    "node Company { name: String @key }\n"
    "edge Knows: Person -> Person { since: Date? }\n"
    "edge WorksAt: Person -> Company @card(0..1)\n";

static const char *SEED =
    "{\"type\": \"Person\", \"data\": {\"name\": \"Alice\", \"age\": 30}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Bob\", \"age\": 25}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Charlie\", \"age\": 35}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Diana\", \"age\": 28}}\n"
    "{\"type\": \"Company\", \"data\": {\"name\": \"Acme\"}}\n"
    "{\"type\": \"Company\", \"data\": {\"name\": \"Globex\"}}\n"
    "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Bob\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Charlie\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Bob\", \"to\": \"Diana\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Diana\", \"to\": \"Alice\"}\n"
    "{\"edge\": \"WorksAt\", \"from\": \"Alice\", \"to\": \"Acme\"}\n"
    "{\"edge\": \"WorksAt\", \"from\": \"Bob\", \"to\": \"Globex\"}\n";

static const char *READS =
    "query people() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n"
    "query friends($n: String) { match { $p: Person { name: $n } $p knows $f } return { $f.name } order { $f.name } }\n"
    "query knows_all() { match { $a: Person $a knows $b } return { $a.name, $b.name } order { $a.name, $b.name } }\n"
    "query jobs() { match { $p: Person $p worksAt $c } return { $p.name, $c.name } order { $p.name } }\n";

static const char *MUTS =
    "query insert_person($name: String, $age: I32) { insert Person { name: $name, age: $age } }\n"
    "query add_friend($from: String, $to: String) { insert Knows { from: $from, to: $to } }\n"
    "query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }\n"
    "query set_role($name: String, $role: String) { update Person set { role: $role } where name = $name }\n"
    "query set_email($name: String, $email: String) { update Person set { email: $email } where name = $name }\n"
    "query remove_person($name: String) { delete Person where name = $name }\n"
    "query remove_friendship($from: String) { delete Knows where from = $from }\n"
    "query insert_person_and_friend($name: String, $age: I32, $friend: String) {\n"
    "    insert Person { name: $name, age: $age }\n"
    "    insert Knows { from: $name, to: $friend } }\n"
    "query rename_person($old_name: String, $new_name: String) { update Person set { name: $new_name } where name = $old_name }\n"
    "query chained($first_name: String, $first_new_age: I32, $second_threshold: I32, $second_new_age: I32) {\n"
    "    update Person set { age: $first_new_age } where name = $first_name\n"
    "    update Person set { age: $second_new_age } where age > $second_threshold }\n"
    "query hire($p: String, $c: String) { insert WorksAt { from: $p, to: $c } }\n"
    "query swap_emails() {\n"
    "    update Person set { email: \"temp\" } where name = \"Alice\"\n"
    "    update Person set { email: \"final\" } where name = \"Alice\"\n"
    "    insert Person { name: \"Carol\", email: \"temp\" } }\n";

static int setup(void **state)
{
    fixture *f = fixture_new(SCHEMA, READS);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

static og_status mut(fixture *f, const char *name, const char *params, og_mutate_stats *s, og_write_result *res)
{
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_write_result local;
    og_status st = og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), name, pj, NULL, res ? res : &local, s);
    json_decref(pj);
    return st;
}

static void inserts_upsert_keyed_nodes_and_add_edges(void **state)
{
    fixture *f = *state;
    og_mutate_stats s;
    assert_int_equal(mut(f, "insert_person", "{\"name\":\"Eve\",\"age\":22}", &s, NULL), OG_OK);
    assert_int_equal(s.affected_nodes, 1);
    assert_int_equal(s.affected_edges, 0);
    assert_int_equal(mut(f, "add_friend", "{\"from\":\"Eve\",\"to\":\"Alice\"}", &s, NULL), OG_OK);
    assert_int_equal(s.affected_edges, 1);
    EXPECT_ROWS(f, "friends", "{\"n\":\"Eve\"}", "Alice");
    assert_int_equal(mut(f, "insert_person", "{\"name\":\"Alice\",\"age\":99}", &s, NULL), OG_OK);
    EXPECT_ROWS(f, "people", NULL, "Alice|99;Bob|25;Charlie|35;Diana|28;Eve|22");
    /* the upsert replaced the row, not the edges */
    EXPECT_ROWS(f, "friends", "{\"n\":\"Alice\"}", "Bob;Charlie");
}

static void a_multi_statement_mutation_is_one_commit(void **state)
{
    fixture *f = *state;
    og_mutate_stats s;
    og_write_result res;
    assert_int_equal(mut(f, "insert_person_and_friend", "{\"name\":\"Eve\",\"age\":22,\"friend\":\"Alice\"}", &s, &res), OG_OK);
    assert_int_equal(s.affected_nodes, 1);
    assert_int_equal(s.affected_edges, 1);
    assert_int_equal(res.published, 1);
    EXPECT_ROWS(f, "friends", "{\"n\":\"Eve\"}", "Alice");
    /* the commit before it has neither */
    const og_commit *c;
    og_cache_entry *hold;
    assert_int_equal(og_graph_commit_get(og_engine_graph(f->e), res.commit, &c, &hold), OG_OK);
    char got[256];
    assert_int_equal(fixture_query(f, "people", NULL, c->parents[0], got, sizeof got), OG_OK);
    assert_string_equal(got, "Alice|30;Bob|25;Charlie|35;Diana|28");
    og_cache_entry_release(hold);
}

static void updates_read_their_own_writes(void **state)
{
    fixture *f = *state;
    og_mutate_stats s;
    assert_int_equal(mut(f, "chained", "{\"first_name\":\"Alice\",\"first_new_age\":99,\"second_threshold\":50,\"second_new_age\":10}", &s, NULL), OG_OK);
    EXPECT_ROWS(f, "people", NULL, "Alice|10;Bob|25;Charlie|35;Diana|28");
    assert_int_equal(mut(f, "swap_emails", NULL, &s, NULL), OG_OK); /* final image is unique */
}

static void delete_cascades_to_every_incident_edge(void **state)
{
    fixture *f = *state;
    og_mutate_stats s;
    assert_int_equal(mut(f, "remove_person", "{\"name\":\"Alice\"}", &s, NULL), OG_OK);
    assert_int_equal(s.affected_nodes, 1);
    assert_int_equal(s.affected_edges, 4); /* Alice->Bob, Alice->Charlie, Diana->Alice, WorksAt Alice */
    EXPECT_ROWS(f, "knows_all", NULL, "Bob|Diana");
    EXPECT_ROWS(f, "jobs", NULL, "Bob|Globex");
    assert_int_equal(mut(f, "remove_friendship", "{\"from\":\"Bob\"}", &s, NULL), OG_OK);
    assert_int_equal(s.affected_nodes, 0);
    assert_int_equal(s.affected_edges, 1);
    EXPECT_ROWS(f, "knows_all", NULL, "");
}

static void zero_matches_publish_nothing(void **state)
{
    fixture *f = *state;
    og_mutate_stats s;
    og_write_result res;
    assert_int_equal(mut(f, "set_age", "{\"name\":\"Nobody\",\"age\":99}", &s, &res), OG_OK);
    assert_int_equal(s.affected_nodes + s.affected_edges, 0);
    assert_int_equal(res.published, 0);
    assert_int_equal(mut(f, "remove_person", "{\"name\":\"Nobody\"}", &s, &res), OG_OK);
    assert_int_equal(res.published, 0);
}

static void refusals_leave_the_graph_unchanged(void **state)
{
    fixture *f = *state;
    og_mutate_stats s;
    static const struct {
        const char *name, *params;
        og_status code;
        const char *needle;
    } cases[] = {
        {"rename_person", "{\"old_name\":\"Alice\",\"new_name\":\"Alicia\"}", OG_ERR_CONSTRAINT, "cannot update key property Person.name"},
        {"set_age", "{\"name\":\"Alice\",\"age\":250}", OG_ERR_CONSTRAINT, "@range violation on Person.age"},
        {"set_role", "{\"name\":\"Alice\",\"role\":\"superadmin\"}", OG_ERR_CONSTRAINT, "invalid enum value 'superadmin' for Person.role"},
        {"add_friend", "{\"from\":\"Alice\",\"to\":\"Ghost\"}", OG_ERR_CONSTRAINT, "dst 'Ghost' not found in Person"},
        {"hire", "{\"p\":\"Alice\",\"c\":\"Globex\"}", OG_ERR_CONSTRAINT, "@card violation on edge WorksAt: source 'Alice'"},
        {"set_age", "{\"name\":\"Alice\"}", OG_ERR_INVALID, "parameter 'age' not provided"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_status st = mut(f, cases[i].name, cases[i].params, &s, NULL);
        if (st != cases[i].code) fail_msg("case %zu: %s (%s)", i, og_status_name(st), og_error_message());
        if (!strstr(og_error_message(), cases[i].needle)) fail_msg("case %zu: '%s'", i, og_error_message());
        EXPECT_ROWS(f, "people", NULL, "Alice|30;Bob|25;Charlie|35;Diana|28");
        EXPECT_ROWS(f, "jobs", NULL, "Alice|Acme;Bob|Globex");
    }
    /* @unique across separate mutations */
    assert_int_equal(mut(f, "set_email", "{\"name\":\"Bob\",\"email\":\"dup@x\"}", &s, NULL), OG_OK);
    assert_int_equal(mut(f, "set_email", "{\"name\":\"Carol\",\"email\":\"dup@x\"}", &s, NULL), OG_OK); /* no Carol: 0 rows */
    assert_int_equal(mut(f, "set_email", "{\"name\":\"Diana\",\"email\":\"dup@x\"}", &s, NULL), OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "@unique violation on Person.email"));
}

static void if_commit_guards_the_head(void **state)
{
    fixture *f = *state;
    og_write_result a;
    assert_int_equal(mut(f, "set_age", "{\"name\":\"Alice\",\"age\":31}", NULL, &a), OG_OK);
    og_mutate_opts o = {NULL, "01ARZ3NDEKTSV4RRFFQ69G5FAV"};
    json_t *pj = json_loads("{\"name\":\"Alice\",\"age\":40}", 0, NULL);
    og_write_result r;
    assert_int_equal(og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), "set_age", pj, &o, &r, NULL), OG_ERR_PRECONDITION_FAILED);
    o.expected_head = a.commit;
    assert_int_equal(og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), "set_age", pj, &o, &r, NULL), OG_OK);
    json_decref(pj);
    EXPECT_ROWS(f, "people", NULL, "Alice|40;Bob|25;Charlie|35;Diana|28");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(inserts_upsert_keyed_nodes_and_add_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(a_multi_statement_mutation_is_one_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(updates_read_their_own_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(delete_cascades_to_every_incident_edge, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_matches_publish_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals_leave_the_graph_unchanged, setup, teardown),
        cmocka_unit_test_setup_teardown(if_commit_guards_the_head, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
