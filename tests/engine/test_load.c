/*
 * test_load.c — init + load + query end to end on a real graph in a temporary directory:
 * the three load modes (E15), constraint violations that publish nothing (E14), one commit
 * per load, time travel to the commit before a load, and line numbers in load errors.
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

#include "engine/export.h"
#include "fixture.h"

static const char *F1 =
    "node Person { name: String @key  age: I32?  @range(age, 0..200) }\n"
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
    "{\"edge\": \"WorksAt\", \"from\": \"Alice\", \"to\": \"Acme\"}\n"
    "{\"edge\": \"WorksAt\", \"from\": \"Bob\", \"to\": \"Globex\"}\n";

static const char *QUERIES =
    "query people() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n"
    "query friends($n: String) { match { $p: Person { name: $n } $p knows $f } return { $f.name } order { $f.name } }\n"
    "query jobs() { match { $p: Person $p worksAt $c } return { $p.name, $c.name } order { $p.name } }\n"
    "query companies() { match { $c: Company } return { $c.name } order { $c.name } }\n";

static int setup(void **state)
{
    fixture *f = fixture_new(F1, QUERIES);
    assert_non_null(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

#define load_text fixture_load
#define EXPECT EXPECT_ROWS

static og_status query(fixture *f, const char *name, const char *params, const char *commit, char *out, size_t cap)
{
    return fixture_query(f, name, params, commit, out, cap);
}

static void a_fresh_graph_is_empty_and_the_seed_loads_in_one_commit(void **state)
{
    fixture *f = *state;
    EXPECT(f, "people", NULL, "");
    og_write_result res;
    assert_int_equal(load_text(f, SEED, OG_LOAD_OVERWRITE, &res), OG_OK);
    assert_int_equal(res.published, 1);
    EXPECT(f, "people", NULL, "Alice|30;Bob|25;Charlie|35;Diana|28");
    EXPECT(f, "friends", "{\"n\":\"Alice\"}", "Bob;Charlie");
    EXPECT(f, "jobs", NULL, "Alice|Acme;Bob|Globex");
}

static void merge_upserts_and_append_refuses_existing_ids(void **state)
{
    fixture *f = *state;
    og_write_result first;
    assert_int_equal(load_text(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Alice\",\"age\":30}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\",\"age\":25}}\n",
                               OG_LOAD_OVERWRITE, &first),
                     OG_OK);
    assert_int_equal(load_text(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Alice\",\"age\":31}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"Charlie\",\"age\":35}}\n",
                               OG_LOAD_MERGE, NULL),
                     OG_OK);
    EXPECT(f, "people", NULL, "Alice|31;Bob|25;Charlie|35");
    assert_int_equal(load_text(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Alice\",\"age\":99}}\n", OG_LOAD_APPEND, NULL),
                     OG_ERR_ALREADY_EXISTS);
    assert_non_null(strstr(og_error_message(), "key_conflict"));
    EXPECT(f, "people", NULL, "Alice|31;Bob|25;Charlie|35");
    assert_int_equal(load_text(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Eve\"}}\n", OG_LOAD_APPEND, NULL), OG_OK);
    EXPECT(f, "people", NULL, "Alice|31;Bob|25;Charlie|35;Eve|null");
    /* time travel: the first commit still shows its own rows */
    char got[256];
    assert_int_equal(query(f, "people", NULL, first.commit, got, sizeof got), OG_OK);
    assert_string_equal(got, "Alice|30;Bob|25");
}

/* Edges without an id get generated ids that enter the id map lazily (plan.c): an explicit id
 * that follows them is still found — a repeat supersedes in merge mode and is a duplicate
 * otherwise, naming the earlier line. */
static void explicit_edge_ids_after_generated_ones_keep_their_duplicate_rules(void **state)
{
    fixture *f = *state;
    static const char *PEOPLE =
        "{\"type\": \"Person\", \"data\": {\"name\": \"Alice\"}}\n"
        "{\"type\": \"Person\", \"data\": {\"name\": \"Bob\"}}\n"
        "{\"type\": \"Person\", \"data\": {\"name\": \"Charlie\"}}\n"
        "{\"type\": \"Person\", \"data\": {\"name\": \"Diana\"}}\n";
    char text[2048];
    snprintf(text, sizeof text, "%s"
             "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Bob\"}\n"
             "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Charlie\", \"data\": {\"id\": \"e1\"}}\n"
             "{\"edge\": \"Knows\", \"from\": \"Bob\", \"to\": \"Diana\"}\n"
             "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Diana\", \"data\": {\"id\": \"e1\"}}\n",
             PEOPLE);
    assert_int_equal(load_text(f, text, OG_LOAD_OVERWRITE, NULL), OG_ERR_CONSTRAINT);
    assert_non_null(strstr(og_error_message(), "duplicate Knows id 'e1' (also on line 6)"));
    EXPECT(f, "people", NULL, "");
    assert_int_equal(load_text(f, text, OG_LOAD_MERGE, NULL), OG_OK);
    EXPECT(f, "friends", "{\"n\":\"Alice\"}", "Bob;Diana");
    EXPECT(f, "friends", "{\"n\":\"Bob\"}", "Diana");
}

static void overwrite_replaces_only_the_types_in_the_file(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    assert_int_equal(load_text(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Zara\",\"age\":40}}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"Zara\",\"to\":\"Zara\"}\n"
                                  "{\"edge\":\"WorksAt\",\"from\":\"Zara\",\"to\":\"Acme\"}\n",
                               OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    EXPECT(f, "people", NULL, "Zara|40");
    EXPECT(f, "companies", NULL, "Acme;Globex");
    EXPECT(f, "friends", "{\"n\":\"Zara\"}", "Zara");
}

static void violations_fail_loudly_and_publish_nothing(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    static const struct {
        const char *data;
        og_load_mode mode;
        og_status code;
        const char *needle;
    } cases[] = {
        {"{\"type\":\"Person\",\"data\":{\"name\":\"Old\",\"age\":250}}\n", OG_LOAD_MERGE, OG_ERR_CONSTRAINT, "@range violation on Person.age"},
        {"{\"type\":\"Person\",\"data\":{\"name\":\"X\"}}\n{\"type\":\"Person\",\"data\":{\"name\":\"X\"}}\n", OG_LOAD_MERGE, OG_ERR_CONSTRAINT, "appears twice"},
        {"{\"edge\":\"Knows\",\"from\":\"Alice\",\"to\":\"Ghost\"}\n", OG_LOAD_APPEND, OG_ERR_CONSTRAINT, "dst 'Ghost' not found in Person"},
        {"{\"type\":\"Person\",\"data\":{\"name\":\"Alice\"}}\n", OG_LOAD_OVERWRITE, OG_ERR_CONSTRAINT, "orphan"},
        {"{\"edge\":\"WorksAt\",\"from\":\"Alice\",\"to\":\"Globex\"}\n", OG_LOAD_APPEND, OG_ERR_CONSTRAINT, "@card violation on edge WorksAt: source 'Alice' has 2 edges (max 1)"},
        {"{\"type\":\"Person\",\"data\":{\"name\":\"Y\",\"nick\":\"y\"}}\n", OG_LOAD_MERGE, OG_ERR_INVALID, "has no property \"nick\""},
        {"{\"type\":\"Person\",\"data\":{\"name\":\"Y\",\"age\":\"old\"}}\n", OG_LOAD_MERGE, OG_ERR_INVALID, "Person.age"},
        {"{\"type\":\"Robot\",\"data\":{}}\n", OG_LOAD_MERGE, OG_ERR_INVALID, "unknown node type 'Robot'"},
        /* a typo names what was meant (compiler/suggest.h) */
        {"{\"type\":\"Persn\",\"data\":{\"name\":\"Q\"}}\n", OG_LOAD_MERGE, OG_ERR_INVALID,
         "unknown node type 'Persn'; did you mean `Person`?"},
        {"{\"type\":\"Person\",\"data\":{\"nmae\":\"Q\"}}\n", OG_LOAD_MERGE, OG_ERR_INVALID,
         "has no property \"nmae\"; did you mean `name`?"},
        {"{\"edge\":\"Knowz\",\"from\":\"Alice\",\"to\":\"Bob\"}\n", OG_LOAD_APPEND, OG_ERR_INVALID,
         "unknown edge type 'Knowz'; did you mean `Knows`?"},
        {"{\"type\":\"Person\",\"data\":{\"age\":3}}\n", OG_LOAD_MERGE, OG_ERR_CONSTRAINT, "Person.name is required"},
        {"\n\n{\"type\":\"Person\",\"data\":{\"name\":\"Z\",\"_rowid\":1}}\n", OG_LOAD_MERGE, OG_ERR_INVALID, ":3: Person: \"_rowid\" is a reserved field"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_status st = load_text(f, cases[i].data, cases[i].mode, NULL);
        if (st != cases[i].code) fail_msg("case %zu: status %s (%s)", i, og_status_name(st), og_error_message());
        if (!strstr(og_error_message(), cases[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, og_error_message(), cases[i].needle);
        EXPECT(f, "people", NULL, "Alice|30;Bob|25;Charlie|35;Diana|28");
        EXPECT(f, "jobs", NULL, "Alice|Acme;Bob|Globex");
    }
}

static void edge_types_resolve_case_insensitively(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    assert_int_equal(load_text(f, "{\"edge\":\"knows\",\"from\":\"Diana\",\"to\":\"Alice\"}\n", OG_LOAD_APPEND, NULL), OG_OK);
    EXPECT(f, "friends", "{\"n\":\"Diana\"}", "Alice");
}

/* Keyed edges and the top-level "id" of the load envelope (issue 21). */
static const char *KEYED =
    "node P { name: String @key }\n"
    "edge Knows: P -> P @key(@src, @dst) { since: I32? }\n"
    "edge Met: P -> P\n";
static const char *KEYED_Q = "query knows() { match { $a: P  $a knows $b } return { $a.name, $b.name } }\n"
                             "query n() { match { $a: P  $a $k: knows $b } return { $a.name, $b.name, $k.since } }\n";

static void keyed_edges_load_idempotently_and_ids_ride_at_the_top(void **state)
{
    (void)state;
    fixture *f = fixture_new(KEYED, KEYED_Q);
    assert_non_null(f);
    const char *data = "{\"type\":\"P\",\"id\":\"ann\",\"data\":{\"name\":\"ann\"}}\n"
                       "{\"type\":\"P\",\"data\":{\"name\":\"bo\"}}\n"
                       "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"bo\",\"data\":{\"since\":1}}\n"
                       "{\"edge\":\"Met\",\"id\":\"m-1\",\"from\":\"ann\",\"to\":\"bo\"}\n";
    og_write_result w;
    assert_int_equal(load_text(f, data, OG_LOAD_MERGE, &w), OG_OK);
    assert_int_equal(load_text(f, data, OG_LOAD_MERGE, &w), OG_OK); /* the same file again: no new edge */
    EXPECT_ROWS(f, "n", NULL, "ann|bo|1");
    /* export writes the ids at the top level: the given one and the derived one */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_int_equal(og_engine_export(f->e, NULL, NULL, NULL, 0, mem), OG_OK);
    fclose(mem);
    assert_non_null(strstr(text, "{\"edge\":\"Met\",\"id\":\"m-1\",\"from\":\"ann\",\"to\":\"bo\",\"data\":{}}"));
    assert_non_null(strstr(text, "{\"edge\":\"Knows\",\"id\":\"[\\\"ann\\\",\\\"bo\\\"]\",\"from\":\"ann\",\"to\":\"bo\""));
    assert_non_null(strstr(text, "{\"type\":\"P\",\"id\":\"ann\",\"data\":{\"name\":\"ann\"}}"));
    free(text);
    /* append is a strict insert: the keyed edge is already there */
    assert_int_equal(load_text(f, "{\"edge\":\"Knows\",\"from\":\"ann\",\"to\":\"bo\"}\n", OG_LOAD_APPEND, &w),
                     OG_ERR_ALREADY_EXISTS);
    /* a given id must be the derived one */
    assert_int_equal(load_text(f, "{\"edge\":\"Knows\",\"id\":\"k\",\"from\":\"bo\",\"to\":\"ann\"}\n", OG_LOAD_MERGE, &w),
                     OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "is not the keyed edge's id [\"bo\",\"ann\"]"));
    assert_int_equal(load_text(f, "{\"edge\":\"Knows\",\"id\":\"[\\\"bo\\\",\\\"ann\\\"]\",\"from\":\"bo\",\"to\":\"ann\"}\n",
                               OG_LOAD_MERGE, &w),
                     OG_OK);
    EXPECT_ROWS(f, "n", NULL, "ann|bo|1;bo|ann|null");
    /* the id given twice, or not a string */
    assert_int_equal(load_text(f, "{\"type\":\"P\",\"id\":\"cy\",\"data\":{\"name\":\"cy\",\"id\":\"cy\"}}\n", OG_LOAD_MERGE, &w),
                     OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "the id is given twice"));
    assert_int_equal(load_text(f, "{\"edge\":\"Met\",\"id\":7,\"from\":\"ann\",\"to\":\"bo\"}\n", OG_LOAD_MERGE, &w),
                     OG_ERR_PARSE);
    EXPECT_ROWS(f, "n", NULL, "ann|bo|1;bo|ann|null");
    fixture_free(f);
}

/* User properties named id, src and dst: data.id / data.src / data.dst are those properties,
 * the top-level "id", "from" and "to" the system fields; export writes both and loads back. */
static const char *USERIDS = "node Doc { id: String @key  title: String? }\n"
                             "node Note { id: I64?  text: String }\n"
                             "edge Link: Doc -> Doc { src: String?  dst: String?  id: I32? }\n"
                             "edge Plain: Doc -> Doc\n";
static const char *USERIDS_Q =
    "query notes() { match { $n: Note } return { $n.@id, $n.id, $n.text } order { $n.text } }\n"
    "query links() { match { $a: Doc  $a $l: link $b } return { $l.@id, $l.@src, $l.@dst, $l.src, $l.dst, $l.id } }\n"
    "query docs() { match { $d: Doc } return { $d.@id, $d.id } order { $d.id } }\n";

static char *export_text(fixture *f)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    assert_int_equal(og_engine_export(f->e, NULL, NULL, NULL, 0, mem), OG_OK);
    fclose(mem);
    return text;
}

static void user_id_src_dst_properties_load_query_and_round_trip_through_export(void **state)
{
    (void)state;
    fixture *f = fixture_new(USERIDS, USERIDS_Q);
    assert_non_null(f);
    const char *data = "{\"type\":\"Doc\",\"data\":{\"id\":\"a1\",\"title\":\"t\"}}\n"
                       "{\"type\":\"Doc\",\"data\":{\"id\":\"b2\"}}\n"
                       "{\"type\":\"Note\",\"id\":\"n1\",\"data\":{\"id\":7,\"text\":\"x\"}}\n"
                       "{\"edge\":\"Link\",\"id\":\"l1\",\"from\":\"a1\",\"to\":\"b2\",\"data\":{\"src\":\"s\",\"dst\":\"d\",\"id\":5}}\n";
    og_write_result w;
    assert_int_equal(load_text(f, data, OG_LOAD_OVERWRITE, &w), OG_OK);
    EXPECT_ROWS(f, "notes", NULL, "n1|7|x");
    EXPECT_ROWS(f, "links", NULL, "l1|a1|b2|s|d|5");
    EXPECT_ROWS(f, "docs", NULL, "a1|a1;b2|b2");
    /* data.src on an edge without such a property is refused, naming the line's from/to */
    assert_int_equal(load_text(f, "{\"edge\":\"Plain\",\"from\":\"a1\",\"to\":\"b2\",\"data\":{\"src\":\"a1\"}}\n",
                               OG_LOAD_MERGE, &w),
                     OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "an edge's endpoints are the line's \"from\"/\"to\""));
    /* export: system id at the top level, the user's id inside data */
    char *text = export_text(f);
    assert_non_null(strstr(text, "{\"type\":\"Note\",\"id\":\"n1\",\"data\":{\"id\":7,\"text\":\"x\"}}"));
    assert_non_null(strstr(text, "{\"edge\":\"Link\",\"id\":\"l1\",\"from\":\"a1\",\"to\":\"b2\",\"data\":{\"src\":\"s\",\"dst\":\"d\",\"id\":5}}"));
    /* ... and loads back into a fresh graph unchanged */
    fixture *g = fixture_new(USERIDS, USERIDS_Q);
    assert_non_null(g);
    assert_int_equal(load_text(g, text, OG_LOAD_OVERWRITE, &w), OG_OK);
    char *again = export_text(g);
    assert_string_equal(text, again);
    EXPECT_ROWS(g, "notes", NULL, "n1|7|x");
    EXPECT_ROWS(g, "links", NULL, "l1|a1|b2|s|d|5");
    free(again);
    free(text);
    fixture_free(g);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_fresh_graph_is_empty_and_the_seed_loads_in_one_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_upserts_and_append_refuses_existing_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(overwrite_replaces_only_the_types_in_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(explicit_edge_ids_after_generated_ones_keep_their_duplicate_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(violations_fail_loudly_and_publish_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(edge_types_resolve_case_insensitively, setup, teardown),
        cmocka_unit_test(keyed_edges_load_idempotently_and_ids_ride_at_the_top),
        cmocka_unit_test(user_id_src_dst_properties_load_query_and_round_trip_through_export),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
