/*
 * test_queries.c — query semantics over a real stored graph (reference-examples.md E5 undirected,
 * E6 edge bindings, E9 ordering contract, E10 literal filters and coercion, E19 nulls, bare
 * `$v` projection).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"

static const char *F1 =
    "node Person { name: String @key  age: I32? }\n"
    "node Company { name: String @key }\n"
    "edge Knows: Person -> Person { since: Date?  label: String? }\n"
    "edge WorksAt: Person -> Company\n";

static const char *F1_SEED =
    "{\"type\": \"Person\", \"data\": {\"name\": \"Alice\", \"age\": 30}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Bob\", \"age\": 25}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Charlie\", \"age\": 35}}\n"
    "{\"type\": \"Person\", \"data\": {\"name\": \"Diana\", \"age\": 28}}\n"
    "{\"type\": \"Company\", \"data\": {\"name\": \"Acme\"}}\n"
    "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Bob\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Alice\", \"to\": \"Charlie\"}\n"
    "{\"edge\": \"Knows\", \"from\": \"Bob\", \"to\": \"Diana\"}\n"
    "{\"edge\": \"WorksAt\", \"from\": \"Alice\", \"to\": \"Acme\"}\n";

static const char *F1_Q =
    "query connected($name: String) { match { $p: Person { name: $name }  $p <knows> $f } return { $f.name } order { $f.name } }\n"
    "query reach_both($name: String) { match { $p: Person { name: $name }  $p <knows>{1,2} $f } return { $f.name } order { $f.name } }\n"
    "query isolated() { match { $p: Person  not { $p <knows> $x } } return { $p.name } }\n"
    "query no_outgoing() { match { $p: Person  not { $p knows $x } } return { $p.name } order { $p.name } }\n"
    "query recent_friends($name: String) { match { $p: Person { name: $name }  $p $w:knows $f  $w.since >= date(\"2023-01-01\") } return { $f.name, $w.since } }\n"
    "query all_friend_edges($name: String) { match { $p: Person { name: $name }  $p $w:knows $f } return { $f.name, $w.since } order { $f.name } }\n"
    "query counts($name: String) { match { $p: Person { name: $name }  $p $w:knows $f } return { $f.name, count($w.since) as n } order { $f.name } }\n"
    "query no_future_friend() { match { $p: Person  not { $p $w:knows $f  $w.since >= date(\"2030-01-01\") } } return { $p.name } order { $p.name } }\n"
    "query labels() { match { $p: Person { name: \"Alice\" }  $p $w:knows $f  $f.name = \"Bob\" } return { $w.label } order { $p.age asc } }\n"
    "query by_age_desc() { match { $p: Person } return { $p.name } order { $p.age desc } }\n"
    "query by_age_asc() { match { $p: Person } return { $p.name } order { $p.age asc } }\n"
    "query by_age_name() { match { $p: Person } return { $p.name } order { $p.age desc, $p.name asc } }\n"
    "query bare() { match { $p: Person { name: \"Bob\" } } return { $p } }\n"
    "query older() { match { $p: Person  $p.age > 30 } return { $p.name, $p.age } order { $p.age desc } }\n"
    "query all_ages() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n";

static void undirected_traversals_union_both_directions(void **state)
{
    (void)state;
    fixture *f = fixture_new(F1, F1_Q);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, F1_SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    EXPECT_ROWS(f, "connected", "{\"name\":\"Bob\"}", "Alice;Diana");
    assert_int_equal(fixture_load(f, "{\"edge\":\"Knows\",\"from\":\"Diana\",\"to\":\"Bob\"}\n", OG_LOAD_MERGE, NULL), OG_OK);
    EXPECT_ROWS(f, "connected", "{\"name\":\"Bob\"}", "Alice;Diana"); /* a pair in both directions appears once */
    EXPECT_ROWS(f, "reach_both", "{\"name\":\"Charlie\"}", "Alice;Bob");
    EXPECT_ROWS(f, "isolated", NULL, "");
    EXPECT_ROWS(f, "no_outgoing", NULL, "Charlie");
    fixture_free(f);
}

static void edge_bindings_give_one_row_per_edge(void **state)
{
    (void)state;
    fixture *f = fixture_new(F1, F1_Q);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, F1_SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    assert_int_equal(fixture_load(f, "{\"edge\":\"Knows\",\"from\":\"Alice\",\"to\":\"Bob\",\"data\":{\"since\":\"2020-05-01\"}}\n"
                                     "{\"edge\":\"Knows\",\"from\":\"Alice\",\"to\":\"Diana\",\"data\":{\"since\":\"2024-11-30\"}}\n",
                                  OG_LOAD_MERGE, NULL),
                     OG_OK);
    EXPECT_ROWS(f, "recent_friends", "{\"name\":\"Alice\"}", "Diana|20057");
    /* Bob twice (parallel edges), ties on f.name broken by edge id: the undated edge loaded
     * first has the smaller ULID */
    EXPECT_ROWS(f, "all_friend_edges", "{\"name\":\"Alice\"}", "Bob|null;Bob|18383;Charlie|null;Diana|20057");
    EXPECT_ROWS(f, "all_friend_edges", "{\"name\":\"Nobody\"}", "");
    EXPECT_ROWS(f, "counts", "{\"name\":\"Alice\"}", "Bob|1;Charlie|0;Diana|1");
    EXPECT_ROWS(f, "no_future_friend", NULL, "Alice;Bob;Charlie;Diana");
    fixture_free(f);
}

static void parallel_edge_ties_break_by_edge_id(void **state)
{
    (void)state;
    fixture *f = fixture_new(F1, F1_Q);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Alice\",\"age\":30}}\n"
                                     "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\",\"age\":25}}\n"
                                     "{\"edge\":\"Knows\",\"from\":\"Alice\",\"to\":\"Bob\",\"data\":{\"id\":\"edge-b\",\"label\":\"loaded-first\"}}\n",
                                  OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    assert_int_equal(fixture_load(f, "{\"edge\":\"Knows\",\"from\":\"Alice\",\"to\":\"Bob\",\"data\":{\"id\":\"edge-a\",\"label\":\"id-first\"}}\n",
                                  OG_LOAD_MERGE, NULL),
                     OG_OK);
    EXPECT_ROWS(f, "labels", NULL, "id-first;loaded-first");
    fixture_free(f);
}

static void ordering_is_total_and_places_nulls(void **state)
{
    (void)state;
    fixture *f = fixture_new(F1, F1_Q);
    assert_non_null(f);
    assert_int_equal(fixture_load(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\",\"age\":30}}\n"
                                     "{\"type\":\"Person\",\"data\":{\"name\":\"Alice\",\"age\":30}}\n"
                                     "{\"type\":\"Person\",\"data\":{\"name\":\"Charlie\",\"age\":25}}\n",
                                  OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    EXPECT_ROWS(f, "by_age_name", NULL, "Alice;Bob;Charlie");
    EXPECT_ROWS(f, "by_age_asc", NULL, "Charlie;Alice;Bob"); /* the 30-tie breaks by id, not load order */
    assert_int_equal(fixture_load(f, "{\"type\":\"Person\",\"data\":{\"name\":\"Alice\",\"age\":30}}\n"
                                     "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\"}}\n"
                                     "{\"type\":\"Person\",\"data\":{\"name\":\"Charlie\",\"age\":25}}\n",
                                  OG_LOAD_OVERWRITE, NULL),
                     OG_OK);
    EXPECT_ROWS(f, "by_age_asc", NULL, "Bob;Charlie;Alice");
    EXPECT_ROWS(f, "by_age_desc", NULL, "Alice;Charlie;Bob");
    /* E19: nulls never pass a filter and project as null */
    EXPECT_ROWS(f, "older", NULL, "");
    EXPECT_ROWS(f, "all_ages", NULL, "Alice|30;Bob|null;Charlie|25");
    EXPECT_ROWS(f, "bare", NULL, "{\"@id\":\"Bob\",\"name\":\"Bob\"}"); /* a bare node variable: its object */
    fixture_free(f);
}

static const char *E10 =
    "node Metric { name: String @key  label: String? @index  score: F64?  ratio: F32?  count: I32?\n"
    "              active: Bool?  born: Date?  seen: DateTime? }\n"
    "node Tag { tname: String @key }\n"
    "edge Tagged: Metric -> Tag\n";

static const char *E10_SEED =
    "{\"type\":\"Metric\",\"data\":{\"name\":\"m1\",\"label\":\"alpha one\",\"score\":2.5,\"ratio\":0.5,\"count\":1,\"active\":true,\"born\":\"2024-06-01\",\"seen\":\"2024-06-01T12:00:00Z\"}}\n"
    "{\"type\":\"Metric\",\"data\":{\"name\":\"m2\",\"label\":\"alps\",\"score\":1.0,\"ratio\":0.25,\"count\":2,\"active\":false,\"born\":\"2023-01-01\",\"seen\":\"2023-01-01T00:00:00Z\"}}\n"
    "{\"type\":\"Metric\",\"data\":{\"name\":\"m3\",\"label\":\"beta ray\",\"score\":3.0,\"ratio\":0.75,\"count\":3,\"active\":true,\"born\":\"2025-01-01\",\"seen\":\"2025-01-01T00:00:00Z\"}}\n"
    "{\"type\":\"Metric\",\"data\":{\"name\":\"m4\",\"score\":0.5,\"ratio\":0.1,\"count\":4,\"active\":false,\"born\":\"2022-12-31\",\"seen\":\"2022-01-01T00:00:00Z\"}}\n"
    "{\"type\":\"Tag\",\"data\":{\"tname\":\"alpine\"}}\n"
    "{\"type\":\"Tag\",\"data\":{\"tname\":\"basalt\"}}\n"
    "{\"edge\":\"Tagged\",\"from\":\"m1\",\"to\":\"alpine\"}\n"
    "{\"edge\":\"Tagged\",\"from\":\"m1\",\"to\":\"basalt\"}\n"
    "{\"edge\":\"Tagged\",\"from\":\"m3\",\"to\":\"basalt\"}\n";

static void literal_filters_coerce_without_truncating(void **state)
{
    (void)state;
    static const struct {
        const char *body, *want;
    } cases[] = {
        {"$m: Metric  $m.score > 1.5", "m1;m3"},
        {"$m: Metric  $m.ratio <= 0.25", "m2;m4"},
        {"$m: Metric { score: 3.0 }", "m3"},
        {"$m: Metric { count: 2 }", "m2"},
        {"$m: Metric { ratio: 0.25 }", "m2"},
        {"$m: Metric  $m.count >= 3", "m3;m4"},
        {"$m: Metric { count: 2.7 }", ""},
        {"$m: Metric  $m.active = true", "m1;m3"},
        {"$m: Metric { active: true }", "m1;m3"},
        {"$m: Metric  $m.active != true", "m2;m4"},
        {"$m: Metric  $m.born >= date(\"2024-01-01\")", "m1;m3"},
        {"$m: Metric  $m.seen < datetime(\"2024-01-01T00:00:00Z\")", "m2;m4"},
        {"$m: Metric { born: date(\"2024-06-01\") }", "m1"},
        {"$m: Metric { seen: datetime(\"2024-06-01T12:00:00Z\") }", "m1"},
        {"$m: Metric  $m.label starts_with \"alp\"", "m1;m2"},
        {"$m: Metric  $m.label contains \"ta r\"", "m3"},
        {"$m: Metric  $m.label contains \"a\"", "m1;m2;m3"},
        {"$m: Metric  $m.name starts_with \"m\"", "m1;m2;m3;m4"},
        {"$m: Metric  \"the alps are tall\" contains $m.label", "m2"},
        {"$m: Metric  $m.label starts_with $m.name", ""},
        {"$m: Metric  not { $m tagged $t  $t.tname contains \"sal\" }", "m2;m4"},
    };
    fixture *f = fixture_new(E10, "");
    assert_non_null(f);
    assert_int_equal(fixture_load(f, E10_SEED, OG_LOAD_OVERWRITE, NULL), OG_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char q[512], got[256];
        snprintf(q, sizeof q, "query q() { match { %s } return { $m.name } order { $m.name } }", cases[i].body);
        f->queries = q;
        if (fixture_query(f, "q", NULL, NULL, got, sizeof got)) fail_msg("%s: %s", cases[i].body, og_error_message());
        if (strcmp(got, cases[i].want)) fail_msg("%s: got '%s' want '%s'", cases[i].body, got, cases[i].want);
    }
    char got[256];
    f->queries = "query q() { match { $a: Metric  $b: Metric  $b.label starts_with $a.label } return { $a.name, $b.name } order { $a.name } }";
    assert_int_equal(fixture_query(f, "q", NULL, NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "m1|m1;m2|m2;m3|m3");
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(undirected_traversals_union_both_directions),
        cmocka_unit_test(edge_bindings_give_one_row_per_edge),
        cmocka_unit_test(parallel_edge_ties_break_by_edge_id),
        cmocka_unit_test(ordering_is_total_and_places_nulls),
        cmocka_unit_test(literal_filters_coerce_without_truncating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
