/*
 * test_schema_errors.c — every schema error of reference-language.md §1 and §9 ("Schema"),
 * each in its own test: the expected message, its line and column, and that a hint is given.
 * Also: several errors are reported together; the parser stops cleanly on syntax errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/schema.h"

/* Compiles text, expects failure with a diagnostic containing msg at line:col (col 0 = any). */
static void expect_error(const char *text, const char *msg, uint32_t line, uint32_t col)
{
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&cat, "bad.pg", text, strlen(text), &d);
    assert_true(st == OG_ERR_PARSE || st == OG_ERR_TYPE);
    assert_null(cat);
    int found = 0;
    for (size_t i = 0; i < d.len && !found; i++) {
        if (d.v[i].warning || !strstr(d.v[i].message, msg)) continue;
        if (d.v[i].line != line || (col && d.v[i].col != col)) {
            fprintf(stderr, "'%s' at %u:%u, expected %u:%u\n", d.v[i].message, d.v[i].line, d.v[i].col, line, col);
            continue;
        }
        assert_non_null(d.v[i].hint);
        assert_true(strlen(d.v[i].hint) > 0);
        assert_string_equal(d.v[i].file, "bad.pg");
        found = 1;
    }
    if (!found) {
        og_buf b = OG_BUF_INIT;
        for (size_t i = 0; i < d.len; i++) og_diag_format(&b, &d.v[i]);
        fprintf(stderr, "expected \"%s\" at %u:%u, got:\n%s", msg, line, col, og_buf_cstr(&b));
        og_buf_free(&b);
    }
    assert_true(found);
    /* the first error is also the thread's message, formatted file:line:col: message */
    assert_non_null(strstr(og_error_message(), "bad.pg:"));
    og_diags_free(&d);
}

#define ERR(name, text, msg, line, col) \
    static void name(void **s)          \
    {                                   \
        (void)s;                        \
        expect_error(text, msg, line, col); \
    }

/* ---- interfaces -------------------------------------------------------------------------- */
ERR(unknown_interface, "node A implements Nope { x: I32 }", "node A implements unknown interface 'Nope'", 1, 6)
ERR(implements_a_node_type, "node B { y: I32 }\nnode A implements B { x: I32 }", "node A implements unknown interface 'B'", 2, 6)
ERR(interface_type_conflict, "interface I { t: String }\nnode A implements I { t: I32 }",
    "node A property 't' has type I32 but interface I declares it as String", 2, 23)
ERR(interface_nullability_conflict, "interface I { t: String }\nnode A implements I { t: String? }",
    "node A property 't' has type String? but interface I declares it as String", 2, 23)
ERR(interface_enum_set_conflict, "interface I { e: enum(a, b) }\nnode A implements I { e: enum(a, c) }",
    "has type enum(a, c) but interface I declares it as enum(a, b)", 2, 23)
ERR(two_interfaces_disagree, "interface I { t: String }\ninterface J { t: [String] }\nnode A implements I, J { x: I32 }",
    "node A property 't' has type String but interface J declares it as [String]", 3, 6)
/* an unknown annotation is an error (a typo would otherwise change nothing silently) */
ERR(unknown_property_annotation, "node A { k: String @kye }", "unknown annotation @kye on property A.k", 1, 20)
ERR(unknown_type_annotation, "node A @frobnicate { k: String }", "unknown annotation @frobnicate on node A", 1, 8)
ERR(unknown_edge_annotation, "node A { k: String }\nedge E: A -> A @descripton(\"x\")", "unknown annotation @descripton on edge E", 2, 16)

/* The hint of an unknown annotation: the nearest known one, or the list of them. */
static void unknown_annotation_hint_says_did_you_mean(void **s)
{
    (void)s;
    const struct { const char *text, *hint; } cases[] = {
        {"node A { k: String @kye }", "did you mean @key?"},
        {"node A { k: String @uniqe }", "did you mean @unique?"},
        {"node A @descripton(\"x\") { k: String }", "did you mean @description?"},
        {"node A { k: String @frobnicate }", "annotations are @key, @unique, @index, @range, @check, @card, @embed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_catalog *cat = NULL;
        og_diags d = OG_DIAGS_INIT;
        assert_int_equal(og_schema_compile(&cat, "bad.pg", cases[i].text, strlen(cases[i].text), &d), OG_ERR_TYPE);
        assert_null(cat);
        assert_int_equal(d.len, 1);
        assert_non_null(strstr(d.v[0].hint, cases[i].hint));
        og_diags_free(&d);
    }
}

ERR(interface_takes_no_annotations, "interface I @description(\"x\") { t: String }", "interfaces take no annotations", 1, 13)
ERR(interface_takes_no_body_constraints, "interface I { t: String @unique(t) }", "interfaces take no body constraints", 1, 25)
ERR(duplicate_interface, "interface I { a: I32 }\ninterface I { b: I32 }", "duplicate interface: I", 2, 11)

/* ---- @key --------------------------------------------------------------------------------- */
ERR(key_on_edge_body, "node A { x: I32 }\nedge E: A -> A { w: I32 @key(w) }", "an edge key must include both @src and @dst (edge E)", 2, 25)
ERR(edge_key_without_dst, "node A { x: I32 }\nedge E: A -> A @key(@src)", "an edge key must include both @src and @dst (edge E)", 2, 16)
ERR(edge_key_nullable_prop, "node A { x: I32 }\nedge E: A -> A { w: I32? @key(@src, @dst, w) }", "@key property E.w cannot be nullable", 2, 26)
ERR(edge_key_twice, "node A { x: I32 }\nedge E: A -> A @key(@src, @dst) { @key(@dst, @src) }", "edge type E has multiple @key constraints; only one is supported", 2, 35)
ERR(key_on_edge_property, "node A { x: I32 }\nedge E: A -> A { w: I32 @key }", "@key is not supported on edge properties (edge E.w)", 2, 25)
ERR(key_nullable, "node A { x: String? @key }", "@key property A.x cannot be nullable", 1, 21)
ERR(key_list, "node A { x: [String] @key }", "@key is not supported on list property A.x", 1, 22)
ERR(key_vector, "node A { v: Vector(3) @key }", "@key is not supported on vector property A.v", 1, 23)
ERR(key_blob, "node A { b: Blob @key }", "@key is not supported on blob property A.b", 1, 18)
ERR(key_body_on_nullable, "node A { x: I32?\n @key(x) }", "@key property A.x cannot be nullable", 2, 2)
ERR(key_body_on_vector, "node A { v: Vector(3)\n @key(v) }", "@key is not supported on vector property A.v", 2, 2)
ERR(key_twice_on_a_node, "node A { x: I32 @key\n y: I32 @key }", "node type A has multiple @key constraints; only one is supported", 2, 9)
ERR(key_twice_on_a_property, "node A { x: I32 @key @key }", "property A.x declares @key multiple times", 1, 22)
ERR(key_with_a_value, "node A { x: String @key(\"x\") }", "expected property name in @key constraint", 1, 25)
ERR(key_unknown_property, "node A { x: I32 @key(y) }", "@key on A references unknown property 'y'", 1, 17)
ERR(key_as_node_annotation, "node A @key { x: I32 }", "@key is only supported on node properties or as body constraint (node A)", 1, 8)
ERR(key_body_before_body, "node A @key(x) { x: I32 }", "@key is only supported on node properties or as body constraint (node A)", 1, 8)

/* ---- @unique / @index ----------------------------------------------------------------------- */
ERR(unique_with_a_value, "node A { x: String @unique(\"x\") }", "expected property name in @unique constraint", 1, 28)
ERR(index_with_a_value, "node A { x: String\n @index(1) }", "expected property name in @index constraint", 2, 9)
ERR(unique_unknown_property, "node A { x: I32\n @unique(x, y) }", "@unique on A references unknown property 'y'", 2, 2)
ERR(index_unknown_property, "node A { x: I32\n @index(z) }", "@index on A references unknown property 'z'", 2, 2)
ERR(unique_on_blob, "node A { b: Blob @unique }", "@unique is not supported on blob property A.b", 1, 18)
ERR(unique_body_on_blob, "node A { b: Blob\n @unique(b) }", "@unique is not supported on blob property A.b", 2, 2)
ERR(index_on_blob, "node A { b: Blob @index }", "@index is not supported on blob property A.b", 1, 18)
ERR(unique_on_vector, "node A { v: Vector(2) @unique }", "@unique is not supported on vector property A.v", 1, 23)
ERR(index_on_list, "node A { l: [I32] @index }", "@index is not supported on list property A.l", 1, 19)
ERR(unique_as_node_annotation, "node A @unique { x: I32 }", "@unique is only supported on node properties or as body constraint", 1, 8)
ERR(index_as_edge_annotation, "node A { x: I32 }\nedge E: A -> A @index", "@index is not supported on edges (edge E)", 2, 16)
ERR(unique_as_edge_annotation_with_args, "node A { x: I32 }\nedge E: A -> A @unique(src)",
    "@unique is not supported as an edge-level annotation (edge E)", 2, 16)
ERR(edge_unique_unknown_column, "node A { x: I32 }\nedge E: A -> A { @unique(src, nope) }", "@unique on E references unknown property 'nope'", 2, 18)
ERR(index_twice_on_a_property, "node A { x: I32 @index @index }", "property A.x declares @index multiple times", 1, 24)

/* ---- @range / @check ---------------------------------------------------------------------- */
ERR(range_on_string, "node A { s: String\n @range(s, 1..2) }", "@range on A.s requires a numeric type, got String", 2, 2)
ERR(range_on_date, "node A { d: Date\n @range(d, 1..2) }", "@range on A.d requires a numeric type, got Date", 2, 2)
ERR(range_on_edge, "node A { x: I32 }\nedge E: A -> A { w: I32 @range(w, 0..1) }", "@range constraint is not supported on edges (edge E)", 2, 25)
ERR(range_unknown_property, "node A { x: I32 @range(y, 0..1) }", "@range on A references unknown property 'y'", 1, 17)
ERR(range_without_bounds, "node A { x: I32 @range(x) }", "@range requires property name and bounds", 1, 25)
ERR(range_with_a_string, "node A { x: I32 @range(x, \"1\") }", "expected range bounds (min..max) in @range constraint", 1, 27)
ERR(range_without_property, "node A { x: I32 @range(1..2, x) }", "expected property name in @range constraint", 1, 24)
ERR(range_dotdot_alone, "node A { x: I32 @range(x, ..) }", "expected an upper bound after '..'", 1, 29)
ERR(check_on_int, "node A { n: I32 @check(n, \"x\") }", "@check on A.n requires String type, got I32", 1, 17)
ERR(check_on_edge, "node A { x: I32 }\nedge E: A -> A { s: String @check(s, \"x\") }", "@check constraint is not supported on edges (edge E)", 2, 28)
ERR(check_unknown_property, "node A { s: String @check(t, \"x\") }", "@check on A references unknown property 't'", 1, 20)
ERR(check_without_pattern, "node A { s: String @check(s) }", "@check requires property name and pattern", 1, 28)
ERR(check_pattern_not_a_string, "node A { s: String @check(s, x) }", "expected string argument in @check constraint", 1, 30)
ERR(check_invalid_regex, "node A { s: String @check(s, \"(ab\") }", "@check on A.s has an invalid pattern", 1, 20)

/* ---- @card ------------------------------------------------------------------------------- */
ERR(card_min_exceeds_max, "node A { x: I32 }\nedge E: A -> A @card(3..1)", "cardinality min (3) exceeds max (1)", 2, 22)
ERR(card_not_first, "node A { x: I32 }\nedge E: A -> A @description(\"d\") @card(0..1)", "@card is only allowed right after an edge's endpoints", 2, 35)
ERR(card_on_node, "node A @card(0..1) { x: I32 }", "@card is only allowed right after an edge's endpoints", 1, 9)
ERR(card_malformed, "node A { x: I32 }\nedge E: A -> A @card(1)", "expected '..'", 2, 23)
ERR(card_without_bounds, "node A { x: I32 }\nedge E: A -> A @card", "@card needs bounds", 2, 17)
ERR(card_too_big, "node A { x: I32 }\nedge E: A -> A @card(0..4294967296)", "invalid cardinality max", 2, 25)

/* ---- @embed -------------------------------------------------------------------------------- */
ERR(embed_not_vector, "node A { t: String  e: String @embed(t) }", "@embed is only supported on vector properties (A.e)", 1, 31)
ERR(embed_missing_source, "node A { v: Vector(3) @embed }", "@embed on A.v requires a source property name", 1, 23)
ERR(embed_empty_source, "node A { v: Vector(3) @embed(\" \") }", "@embed on A.v requires a non-empty source property name", 1, 23)
ERR(embed_unknown_source, "node A { v: Vector(3) @embed(nope) }", "@embed on A.v references unknown source property nope", 1, 23)
ERR(embed_non_string_source, "node A { n: I32 v: Vector(3) @embed(n) }", "@embed source property A.n must be String", 1, 30)
ERR(embed_list_source, "node A { n: [String] v: Vector(3) @embed(n) }", "@embed source property A.n must be String", 1, 35)
ERR(embed_unknown_kwarg, "node A { t: String v: Vector(3) @embed(\"t\", dim = 3) }", "has unknown argument 'dim=' (only 'model' is supported)", 1, 33)
ERR(embed_on_edge, "node A { x: I32 }\nedge E: A -> A { t: String v: Vector(3) @embed(t) }", "@embed is not supported on edge properties (edge E.v)", 2, 41)
ERR(embed_twice, "node A { t: String v: Vector(3) @embed(t) @embed(t) }", "property A.v declares @embed multiple times", 1, 43)
ERR(embed_as_node_annotation, "node A @embed(\"t\") { t: String }", "@embed is only supported on node properties or as body constraint", 1, 8)

/* ---- types --------------------------------------------------------------------------------- */
ERR(list_of_blob, "node A { b: [Blob] }", "list of Blob is not supported", 1, 10)
ERR(list_of_vector, "node A { b: [Vector(3)] }", "list elements must be base scalar types", 1, 14)
ERR(list_of_enum, "node A { b: [enum(a)] }", "list elements must be base scalar types", 1, 14)
ERR(nullable_list_items, "node A { b: [String?] }", "expected ']'", 1, 20)
ERR(vector_zero, "node A { v: Vector(0) }", "Vector dimension must be greater than zero", 1, 20)
ERR(vector_too_big, "node A { v: Vector(2147483648) }", "Vector dimension 2147483648 exceeds maximum supported 2147483647", 1, 20)
ERR(vector_way_too_big, "node A { v: Vector(99999999999999999999) }", "invalid Vector dimension", 1, 20)
ERR(vector_no_dimension, "node A { v: Vector }", "expected '('", 1, 20)
ERR(empty_enum, "node A { e: enum() }", "enum type must include at least one value", 1, 18)
ERR(duplicate_enum_values, "node A { e: enum(a, b, a) }", "enum type cannot include duplicate values ('a' in A.e)", 1, 10)
ERR(quoted_enum_value, "node A { e: enum(\"a\") }", "expected an enum value, found a string", 1, 18)
ERR(unknown_type, "node A { x: Str }", "unknown type 'Str'", 1, 13)
ERR(lowercase_type, "node A { x: string }", "expected a type", 1, 13)

/* ---- names ---------------------------------------------------------------------------------- */
ERR(reserved_rowid, "node A { _rowid: I64 }", "property name '_rowid' is reserved for system columns", 1, 10)
ERR(reserved_rowaddr, "node A { _rowaddr: I64 }", "property name '_rowaddr' is reserved", 1, 10)
ERR(reserved_rowoffset, "node A { _rowoffset: I64 }", "property name '_rowoffset' is reserved", 1, 10)
ERR(reserved_created_at, "node A { _row_created_at_version: I64 }", "property name '_row_created_at_version' is reserved", 1, 10)
ERR(reserved_updated_at, "node A { ok: I32 }\nedge E: A -> A { _row_last_updated_at_version: I64 }",
    "property name '_row_last_updated_at_version' is reserved", 2, 18)
ERR(reserved_in_interface, "interface I { _rowid: I64 }", "property name '_rowid' is reserved", 1, 15)
ERR(at_src_on_a_node, "node A { x: I32  @unique(@src) }", "@unique on A cannot name @src", 1, 18)
ERR(reserved_double_underscore, "node A { __id: String @key }", "property name '__id' is reserved", 1, 10)
/* the reference's whole `_` namespace, the search outputs included, and an edge's endpoint names */
ERR(reserved_underscore_prefix, "node A { _x: String }", "property name '_x' is reserved for system columns (node A)", 1, 10)
ERR(reserved_score, "node A { _score: F64 }", "property name '_score' is reserved", 1, 10)
ERR(reserved_distance, "node A { ok: I32 }\nedge E: A -> A { _distance: F64 }", "property name '_distance' is reserved", 2, 18)
ERR(reserved_edge_from, "node A { ok: I32 }\nedge E: A -> A { from: String }",
    "property name 'from' is reserved on edge types: it names an endpoint (edge E)", 2, 18)
ERR(reserved_edge_to, "node A { ok: I32 }\nedge E: A -> A { to: String? }", "property name 'to' is reserved on edge types", 2, 18)
ERR(duplicate_node, "node A { x: I32 }\nnode A { y: I32 }", "duplicate node type: A", 2, 6)
ERR(duplicate_edge, "node A { x: I32 }\nedge E: A -> A\nedge E: A -> A", "duplicate edge type: E", 3, 6)
ERR(duplicate_property, "node A { x: I32\n  x: String }", "duplicate property 'x' in node A", 2, 3)
ERR(duplicate_edge_property, "node A { x: I32 }\nedge E: A -> A { w: I32 w: I32 }", "duplicate property 'w' in edge E", 2, 25)
ERR(edge_unknown_source, "node A { x: I32 }\nedge E: Nope -> A", "edge E references unknown source type: Nope", 2, 6)
ERR(edge_unknown_target, "node A { x: I32 }\nedge E: A -> Nope", "edge E references unknown target type: Nope", 2, 6)
ERR(edge_endpoint_is_an_interface, "interface I { x: I32 }\nnode A { x: I32 }\nedge E: A -> I", "edge E references unknown target type: I", 3, 6)
ERR(edge_names_collide_case_insensitively, "node A { x: I32 }\nedge Knows: A -> A\nedge KNOWS: A -> A",
    "edge name collision after case folding: 'KNOWS' conflicts with 'Knows'", 3, 6)
ERR(lowercase_type_name, "node person { x: I32 }", "expected a type name", 1, 6)
ERR(uppercase_property_name, "node A { Name: String }", "expected a property name", 1, 10)

/* ---- annotations ------------------------------------------------------------------------- */
ERR(rename_from_empty, "node A @rename_from(\"\") { x: I32 }", "@rename_from on node A requires exactly one non-empty positional value", 1, 8)
ERR(rename_from_bare, "node A { x: I32 @rename_from }", "@rename_from on property A.x requires exactly one non-empty positional value", 1, 17)
ERR(rename_from_no_args, "node A { x: I32 @rename_from() }", "expected a literal or identifier", 1, 30)
ERR(rename_from_twice, "node A @rename_from(\"B\") @rename_from(\"C\") { x: I32 }", "node A declares @rename_from multiple times", 1, 26)
ERR(rename_from_kwargs, "node A { x: I32 }\nedge E: A -> A @rename_from(\"F\", why = \"x\")", "@rename_from on edge E does not accept keyword arguments", 2, 16)
ERR(rename_from_on_interface_property, "interface I { x: I32 @rename_from(\"\") }", "@rename_from on property I.x requires exactly one non-empty positional value", 1, 22)
ERR(description_empty, "node A @description(\"  \") { x: I32 }", "@description on node A requires a non-empty value", 1, 8)
ERR(description_twice, "node A { x: I32 @description(\"a\") @description(\"b\") }", "property A.x declares @description multiple times", 1, 35)
ERR(instruction_twice, "node A { x: I32 }\nedge E: A -> A @instruction(\"a\") @instruction(\"b\")", "edge E declares @instruction multiple times", 2, 34)
ERR(instruction_on_property, "node A { x: I32 @instruction(\"do\") }", "@instruction is only supported on node and edge types (property A.x)", 1, 17)
ERR(kwarg_before_positional, "node A @meta(a = 1) { x: I32 }", "expected a positional argument before keyword arguments", 1, 14)
ERR(annotation_uppercase_name, "node A @Meta { x: I32 }", "expected an annotation name after '@'", 1, 9)

/* ---- syntax ----------------------------------------------------------------------------------- */
ERR(hash_comment, "# not a comment\nnode A { x: I32 }", "unexpected character '#'", 1, 1)
ERR(bad_escape, "node A @description(\"a\\qb\") { x: I32 }", "unsupported escape sequence '\\q'", 1, 23)
ERR(missing_colon, "node A { x I32 }", "expected ':'", 1, 12)
ERR(missing_brace, "node A { x: I32 ", "expected a property, a body constraint or '}', found end of input", 1, 17)
ERR(unknown_declaration, "table A { x: I32 }", "expected 'interface', 'node' or 'edge'", 1, 1)
ERR(edge_missing_arrow, "node A { x: I32 }\nedge E: A A", "expected '->'", 2, 11)
ERR(stray_annotation_in_body, "node A {\n @foo x: I32 }", "unexpected annotation in a declaration body", 2, 2)
ERR(unterminated_comment, "node A { x: I32 } /* never closed", "unterminated block comment", 1, 19)
ERR(semicolon_separator, "node A { x: I32; y: I32 }", "expected a property, a body constraint or '}', found ';'", 1, 16)

static void several_errors_are_reported_together(void **state)
{
    (void)state;
    const char *t = "node A implements Nope { x: String? @key  b: [Blob] }\n"
                    "edge E: A -> Missing\n"
                    "node A { y: I32 }\n";
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    assert_int_equal(og_schema_compile(&cat, "bad.pg", t, strlen(t), &d), OG_ERR_TYPE);
    assert_true(og_diags_errors(&d) >= 5);
    const char *want[] = {"duplicate node type: A", "unknown interface 'Nope'", "cannot be nullable", "list of Blob",
                          "unknown target type: Missing"};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int found = 0;
        for (size_t i = 0; i < d.len; i++)
            if (strstr(d.v[i].message, want[w])) found = 1;
        assert_true(found);
    }
    og_buf b = OG_BUF_INIT;
    og_diag_format(&b, &d.v[0]);
    /* sorted by position */
    assert_non_null(strstr(og_buf_cstr(&b), "bad.pg:1:6: node A implements unknown interface 'Nope'\n  hint: "));
    for (size_t i = 1; i < d.len; i++) assert_true(d.v[i - 1].start <= d.v[i].start);
    og_buf_free(&b);
    og_diags_free(&d);
}

static void parse_errors_are_prefixed(void **state)
{
    (void)state;
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    const char *t = "node A {";
    assert_int_equal(og_schema_compile(&cat, NULL, t, strlen(t), &d), OG_ERR_PARSE);
    assert_int_equal(d.len, 1);
    assert_non_null(strstr(d.v[0].message, "parse error: "));
    assert_string_equal(d.v[0].file, "<input>");
    assert_int_equal(d.v[0].start, 8);
    og_diags_free(&d);
    /* diags may be NULL: the message is still left for og_error_message() */
    assert_int_equal(og_schema_compile(&cat, "x.pg", t, strlen(t), NULL), OG_ERR_PARSE);
    assert_non_null(strstr(og_error_message(), "x.pg:1:9: parse error"));
}

static void nul_bytes_and_garbage_do_not_crash(void **state)
{
    (void)state;
    const char t[] = "node A { x: I32 }\0node B";
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    assert_int_equal(og_schema_compile(&cat, "g.pg", t, sizeof t - 1, &d), OG_ERR_PARSE);
    og_diags_free(&d);
    const char *junk[] = {"@", "node", "node A", "node A {", "edge", "edge E:", "edge E: A ->", "node A { x: enum(",
                          "node A { x: enum(a", "node A { x: Vector(", "node A { @range(x, 1..", "node A { @check(",
                          "node A @d(", "node A @d(x,", "node A @d(x, k =", "interface", "\"", "{}}}", "node A { x: [",
                          "node A { x: I32 @range(x, -", "edge E: A -> B @card(", "edge E: A -> B @card(1.."};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        assert_int_not_equal(og_schema_compile(&cat, "j.pg", junk[i], strlen(junk[i]), &d), OG_OK);
        assert_null(cat);
        assert_true(og_diags_errors(&d) >= 1);
        og_diags_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_interface), cmocka_unit_test(implements_a_node_type),
        cmocka_unit_test(interface_type_conflict), cmocka_unit_test(interface_nullability_conflict),
        cmocka_unit_test(interface_enum_set_conflict), cmocka_unit_test(two_interfaces_disagree),
        cmocka_unit_test(unknown_property_annotation), cmocka_unit_test(unknown_type_annotation),
        cmocka_unit_test(unknown_edge_annotation), cmocka_unit_test(unknown_annotation_hint_says_did_you_mean),
        cmocka_unit_test(interface_takes_no_annotations), cmocka_unit_test(interface_takes_no_body_constraints),
        cmocka_unit_test(duplicate_interface),
        cmocka_unit_test(key_on_edge_body), cmocka_unit_test(edge_key_without_dst), cmocka_unit_test(edge_key_nullable_prop),
        cmocka_unit_test(edge_key_twice), cmocka_unit_test(key_on_edge_property), cmocka_unit_test(key_nullable),
        cmocka_unit_test(key_list), cmocka_unit_test(key_vector), cmocka_unit_test(key_blob),
        cmocka_unit_test(key_body_on_nullable), cmocka_unit_test(key_body_on_vector),
        cmocka_unit_test(key_twice_on_a_node), cmocka_unit_test(key_twice_on_a_property),
        cmocka_unit_test(key_with_a_value), cmocka_unit_test(key_unknown_property),
        cmocka_unit_test(key_as_node_annotation), cmocka_unit_test(key_body_before_body),
        cmocka_unit_test(unique_with_a_value), cmocka_unit_test(index_with_a_value),
        cmocka_unit_test(unique_unknown_property), cmocka_unit_test(index_unknown_property),
        cmocka_unit_test(unique_on_blob), cmocka_unit_test(unique_body_on_blob), cmocka_unit_test(index_on_blob),
        cmocka_unit_test(unique_on_vector), cmocka_unit_test(index_on_list), cmocka_unit_test(unique_as_node_annotation),
        cmocka_unit_test(index_as_edge_annotation), cmocka_unit_test(unique_as_edge_annotation_with_args),
        cmocka_unit_test(edge_unique_unknown_column), cmocka_unit_test(index_twice_on_a_property),
        cmocka_unit_test(range_on_string), cmocka_unit_test(range_on_date), cmocka_unit_test(range_on_edge),
        cmocka_unit_test(range_unknown_property), cmocka_unit_test(range_without_bounds),
        cmocka_unit_test(range_with_a_string), cmocka_unit_test(range_without_property),
        cmocka_unit_test(range_dotdot_alone), cmocka_unit_test(check_on_int), cmocka_unit_test(check_on_edge),
        cmocka_unit_test(check_unknown_property), cmocka_unit_test(check_without_pattern),
        cmocka_unit_test(check_pattern_not_a_string), cmocka_unit_test(check_invalid_regex),
        cmocka_unit_test(card_min_exceeds_max), cmocka_unit_test(card_not_first), cmocka_unit_test(card_on_node),
        cmocka_unit_test(card_malformed), cmocka_unit_test(card_without_bounds), cmocka_unit_test(card_too_big),
        cmocka_unit_test(embed_not_vector), cmocka_unit_test(embed_missing_source), cmocka_unit_test(embed_empty_source),
        cmocka_unit_test(embed_unknown_source), cmocka_unit_test(embed_non_string_source),
        cmocka_unit_test(embed_list_source), cmocka_unit_test(embed_unknown_kwarg), cmocka_unit_test(embed_on_edge),
        cmocka_unit_test(embed_twice), cmocka_unit_test(embed_as_node_annotation),
        cmocka_unit_test(list_of_blob), cmocka_unit_test(list_of_vector), cmocka_unit_test(list_of_enum),
        cmocka_unit_test(nullable_list_items), cmocka_unit_test(vector_zero), cmocka_unit_test(vector_too_big),
        cmocka_unit_test(vector_way_too_big), cmocka_unit_test(vector_no_dimension), cmocka_unit_test(empty_enum),
        cmocka_unit_test(duplicate_enum_values), cmocka_unit_test(quoted_enum_value), cmocka_unit_test(unknown_type),
        cmocka_unit_test(lowercase_type),
        cmocka_unit_test(reserved_rowid), cmocka_unit_test(reserved_rowaddr), cmocka_unit_test(reserved_rowoffset),
        cmocka_unit_test(reserved_created_at), cmocka_unit_test(reserved_updated_at),
        cmocka_unit_test(reserved_in_interface), cmocka_unit_test(reserved_double_underscore), cmocka_unit_test(at_src_on_a_node),
        cmocka_unit_test(reserved_underscore_prefix), cmocka_unit_test(reserved_score), cmocka_unit_test(reserved_distance),
        cmocka_unit_test(reserved_edge_from), cmocka_unit_test(reserved_edge_to),
        cmocka_unit_test(duplicate_node), cmocka_unit_test(duplicate_edge),
        cmocka_unit_test(duplicate_property), cmocka_unit_test(duplicate_edge_property),
        cmocka_unit_test(edge_unknown_source), cmocka_unit_test(edge_unknown_target),
        cmocka_unit_test(edge_endpoint_is_an_interface), cmocka_unit_test(edge_names_collide_case_insensitively),
        cmocka_unit_test(lowercase_type_name), cmocka_unit_test(uppercase_property_name),
        cmocka_unit_test(rename_from_empty), cmocka_unit_test(rename_from_bare), cmocka_unit_test(rename_from_no_args),
        cmocka_unit_test(rename_from_twice), cmocka_unit_test(rename_from_kwargs),
        cmocka_unit_test(rename_from_on_interface_property), cmocka_unit_test(description_empty),
        cmocka_unit_test(description_twice), cmocka_unit_test(instruction_twice),
        cmocka_unit_test(instruction_on_property), cmocka_unit_test(kwarg_before_positional),
        cmocka_unit_test(annotation_uppercase_name),
        cmocka_unit_test(hash_comment), cmocka_unit_test(bad_escape), cmocka_unit_test(missing_colon),
        cmocka_unit_test(missing_brace), cmocka_unit_test(unknown_declaration), cmocka_unit_test(edge_missing_arrow),
        cmocka_unit_test(stray_annotation_in_body), cmocka_unit_test(unterminated_comment),
        cmocka_unit_test(semicolon_separator),
        cmocka_unit_test(several_errors_are_reported_together), cmocka_unit_test(parse_errors_are_prefixed),
        cmocka_unit_test(nul_bytes_and_garbage_do_not_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
