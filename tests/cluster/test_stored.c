/*
 * test_stored.c — stored queries (cluster/stored.h): the catalog listing shape, the JSON
 * Schema derived from each parameter type, parameter checking (errors name the parameter),
 * invocation of reads and mutations exactly like the ad-hoc lane, and refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/stored.h"

static char dir[64];
static const char *SCHEMA =
    "node Person {\n    name: String @key\n    age: I32?\n    big: I64?\n    score: F64?\n    ok: Bool?\n"
    "    born: Date?\n    seen: DateTime?\n    tags: [String]?\n    emb: Vector(3)?\n}\nedge Knows: Person -> Person\n";
static const char *QUERIES =
    "query everything($s: String, $i: I32, $b: I64, $f: F64, $o: Bool, $d: Date, $t: DateTime, $l: [String], $v: Vector(3), $n: I32?) "
    "@description(\"All the kinds.\") @instruction(\"Only for tests.\") {\n"
    "    match { $p: Person { name: $s } }\n    return { $p.name }\n}\n"
    "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n    return { $p.name, $p.age }\n    order { $p.name asc }\n}\n"
    "query add($name: String, $age: I32?) {\n    insert Person { name: $name, age: $age }\n}\n";

static og_db *db;
static og_stored_set *set;

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/og-stored-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char root[128];
    snprintf(root, sizeof root, "%s/g", dir);
    if (og_db_init(&db, root, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    if (og_stored_set_new(&set) != OG_OK) return -1;
    return og_stored_set_add(set, "q.gq", QUERIES, strlen(QUERIES), NULL, SCHEMA, strlen(SCHEMA)) == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_stored_set_free(set);
    og_db_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_list_shape(void **state)
{
    (void)state;
    assert_int_equal(og_stored_set_count(set), 3);
    assert_string_equal(og_stored_set_at(set, 0)->name, "add"); /* sorted */
    char *out = NULL;
    assert_int_equal(og_stored_set_list_json(&out, set), OG_OK);
    json_t *j = json_loads(out, 0, NULL);
    og_free(out);
    json_t *q = json_array_get(json_object_get(j, "queries"), 2);
    assert_string_equal(json_string_value(json_object_get(q, "name")), "everything");
    assert_string_equal(json_string_value(json_object_get(q, "tool_name")), "everything");
    assert_string_equal(json_string_value(json_object_get(q, "description")), "All the kinds.");
    assert_string_equal(json_string_value(json_object_get(q, "instruction")), "Only for tests.");
    assert_true(json_is_false(json_object_get(q, "mutation")));
    const char *kinds[] = {"string", "int", "bigint", "float", "bool", "date", "datetime", "list", "vector", "int"};
    json_t *ps = json_object_get(q, "params");
    assert_int_equal(json_array_size(ps), 10);
    for (size_t i = 0; i < 10; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(ps, i), "kind")), kinds[i]);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ps, 7), "item_kind")), "string");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ps, 8), "vector_dim")), 3);
    assert_true(json_is_true(json_object_get(json_array_get(ps, 9), "nullable")));
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "queries"), 0), "mutation")));
    json_decref(j);
}

static void test_params_schema(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(og_stored_query_params_schema(&out, og_stored_set_find(set, "everything")), OG_OK);
    json_t *j = json_loads(out, 0, NULL);
    og_free(out);
    json_t *p = json_object_get(j, "properties");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "s"), "type")), "string");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "i"), "type")), "integer");
    assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(p, "b"), "type"), 1)), "string");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "f"), "type")), "number");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "o"), "type")), "boolean");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "d"), "format")), "date");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "t"), "format")), "date-time");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(p, "l"), "items"), "type")), "string");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "v"), "maxItems")), 3);
    json_t *n = json_object_get(json_object_get(p, "n"), "type");
    assert_string_equal(json_string_value(json_array_get(n, 1)), "null");
    assert_int_equal(json_array_size(json_object_get(j, "required")), 9); /* all but the nullable $n */
    assert_true(json_is_false(json_object_get(j, "additionalProperties")));
    json_decref(j);
}

static void expect_param_error(const char *name, const char *params, const char *message)
{
    og_status st = og_stored_check_params(og_stored_set_find(set, name), params);
    assert_int_equal(st, OG_ERR_INVALID);
    if (strcmp(og_error_message(), message)) fprintf(stderr, "got: %s\n", og_error_message());
    assert_string_equal(og_error_message(), message);
}

static void test_param_errors(void **state)
{
    (void)state;
    expect_param_error("adults", "{}", "param `$min`: missing required parameter of type I32");
    expect_param_error("adults", "{\"min\":\"30\"}", "param `$min`: expected I32 (int), got a string");
    expect_param_error("adults", "{\"min\":30,\"max\":1}", "param `$max`: query `adults` declares no such parameter");
    expect_param_error("adults", "[1]", "params must be a JSON object");
    expect_param_error("adults", "{\"min\":", "params are not valid JSON: unexpected token near end of file");
    expect_param_error("everything",
                       "{\"s\":\"a\",\"i\":1,\"b\":\"9007199254740993\",\"f\":1,\"o\":true,\"d\":\"2020-01-01\",\"t\":\"2020-01-01T00:00:00Z\","
                       "\"l\":[\"x\",2],\"v\":[1,2,3]}",
                       "param `$l`: item 1: expected string, got an integer");
    expect_param_error("everything",
                       "{\"s\":\"a\",\"i\":1,\"b\":1,\"f\":1,\"o\":true,\"d\":\"2020-01-01\",\"t\":\"2020-01-01T00:00:00Z\","
                       "\"l\":[],\"v\":[1,2]}",
                       "param `$v`: expected 3 numbers for Vector(3), got 2");
    assert_int_equal(og_stored_check_params(og_stored_set_find(set, "add"), "{\"name\":\"x\",\"age\":null}"), OG_OK);
}

static void test_invoke(void **state)
{
    (void)state;
    char *out = NULL;
    og_stored_invoke_opts o = {.params_json = "{\"name\":\"Ada\",\"age\":36}", .expect_mutation = 1, .actor = "alice"};
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "add"), &o), OG_OK);
    json_t *j = json_loads(out, 0, NULL);
    og_free(out);
    assert_string_equal(json_string_value(json_object_get(j, "query_name")), "add");
    assert_string_equal(json_string_value(json_object_get(j, "branch")), "main");
    assert_int_equal(json_integer_value(json_object_get(j, "affected_nodes")), 1);
    assert_string_equal(json_string_value(json_object_get(j, "actor_id")), "alice");
    const char *cid = json_string_value(json_object_get(json_object_get(j, "commit"), "graph_commit_id"));
    assert_non_null(cid);
    assert_int_equal(strlen(cid), 26);
    json_decref(j);

    og_stored_invoke_opts r = {.params_json = "{\"min\":30}", .expect_mutation = 0};
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "adults"), &r), OG_OK);
    j = json_loads(out, 0, NULL);
    og_free(out);
    assert_int_equal(json_integer_value(json_object_get(j, "row_count")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "rows"), 0), "p.name")), "Ada");
    json_decref(j);

    /* refusals: kind mismatch, snapshot on a mutation, the engine's own errors pass through */
    r.expect_mutation = 1;
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "adults"), &r), OG_ERR_INVALID);
    assert_string_equal(og_error_message(), "query `adults` is a read, but expect_mutation is true");
    o.snapshot = "01ABC";
    o.expect_mutation = -1;
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "add"), &o), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "a snapshot cannot be written"));
    o.snapshot = NULL;
    o.branch = "nope";
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "add"), &o), OG_ERR_NOT_FOUND);
    o.branch = NULL;
    o.params_json = "{\"name\":\"Bo\",\"age\":\"old\"}";
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "add"), &o), OG_ERR_INVALID);
    assert_string_equal(og_error_message(), "param `$age`: expected I32 (int), got a string");
}

static void test_add_refusals(void **state)
{
    (void)state;
    og_stored_set *s = NULL;
    assert_int_equal(og_stored_set_new(&s), OG_OK);
    const char *bad = "query q() {\n    match { $c: Company }\n    return { $c.name }\n}\n";
    assert_int_equal(og_stored_set_add(s, "bad.gq", bad, strlen(bad), NULL, SCHEMA, strlen(SCHEMA)), OG_ERR_TYPE);
    assert_non_null(strstr(og_error_message(), "query `q` does not type-check against the schema: type error: T1"));
    const char *names[] = {"nope", NULL};
    assert_int_equal(og_stored_set_add(s, "q.gq", QUERIES, strlen(QUERIES), names, SCHEMA, strlen(SCHEMA)), OG_ERR_NOT_FOUND);
    assert_int_equal(og_stored_set_add(s, "p.gq", "query (", 7, NULL, SCHEMA, strlen(SCHEMA)), OG_ERR_PARSE);
    assert_int_equal(og_stored_set_count(s), 0); /* nothing added on any error */
    assert_int_equal(og_stored_set_add(s, "q.gq", QUERIES, strlen(QUERIES), NULL, SCHEMA, strlen(SCHEMA)), OG_OK);
    assert_int_equal(og_stored_set_add(s, "q2.gq", QUERIES, strlen(QUERIES), NULL, SCHEMA, strlen(SCHEMA)), OG_ERR_ALREADY_EXISTS);
    assert_int_equal(og_stored_set_count(s), 3);
    og_stored_set_free(s);
}

static void test_mcp_annotation(void **state)
{
    (void)state;
    const char *src =
        "query a() @mcp(tool_name: \"people_all\") @description(\"d\") {\n    match { $p: Person }\n    return { $p.name }\n}\n"
        "query b() @mcp(expose: false) {\n    match { $p: Person }\n    return { $p.name }\n}\n";
    og_stored_set *s = NULL;
    assert_int_equal(og_stored_set_new(&s), OG_OK);
    assert_int_equal(og_stored_set_add(s, "m.gq", src, strlen(src), NULL, SCHEMA, strlen(SCHEMA)), OG_OK);
    assert_string_equal(og_stored_set_find(s, "a")->tool_name, "people_all");
    assert_true(og_stored_set_find(s, "a")->mcp_expose);
    assert_false(og_stored_set_find(s, "b")->mcp_expose);
    assert_ptr_equal(og_stored_set_find_tool(s, "people_all"), og_stored_set_find(s, "a"));
    assert_null(og_stored_set_find_tool(s, "a"));
    assert_null(og_stored_set_find_tool(s, "b")); /* hidden from agents, still invocable by name */
    og_stored_set_free(s);
    /* refusals: a duplicate tool name, an invalid one, a bad argument */
    const char *dup = "query a() @mcp(tool_name: \"x\") {\n    match { $p: Person }\n    return { $p.name }\n}\n"
                      "query b() @mcp(tool_name: \"x\") {\n    match { $p: Person }\n    return { $p.name }\n}\n";
    assert_int_equal(og_stored_set_new(&s), OG_OK);
    assert_int_equal(og_stored_set_add(s, "d.gq", dup, strlen(dup), NULL, SCHEMA, strlen(SCHEMA)), OG_ERR_ALREADY_EXISTS);
    assert_string_equal(og_error_message(), "duplicate MCP tool name `x` (queries `a` and `b`)");
    const char *bad = "query a() @mcp(tool_name: \"no spaces\") {\n    match { $p: Person }\n    return { $p.name }\n}\n";
    assert_int_equal(og_stored_set_add(s, "b.gq", bad, strlen(bad), NULL, SCHEMA, strlen(SCHEMA)), OG_ERR_INVALID);
    const char *arg = "query a() @mcp(visible: true) {\n    match { $p: Person }\n    return { $p.name }\n}\n";
    assert_int_equal(og_stored_set_add(s, "c.gq", arg, strlen(arg), NULL, SCHEMA, strlen(SCHEMA)), OG_ERR_PARSE);
    assert_non_null(strstr(og_error_message(), "unsupported @mcp argument"));
    assert_int_equal(og_stored_set_count(s), 0);
    og_stored_set_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_shape), cmocka_unit_test(test_params_schema), cmocka_unit_test(test_param_errors),
        cmocka_unit_test(test_invoke),     cmocka_unit_test(test_add_refusals), cmocka_unit_test(test_mcp_annotation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
