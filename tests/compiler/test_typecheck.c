/*
 * test_typecheck.c — the .gq type checker (query_check.c, query_check_mut.c): for every
 * reference error code T1–T24 at least one query that must fail with exactly that code and
 * one close variant that must pass; the uncoded errors (§9) and the C port's extra rules
 * (docs/query-language.md).  Each table row is its own cmocka test, named after the row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/ir.h"
#include "compiler/query_check.h"
#include "compiler/schema.h"

static const char *SCHEMA =
    "interface Titled { title: String }\n"
    "node Person { name: String @key  age: I32?  nick: String?  tags: [String]?  born: Date?\n"
    "              seen: DateTime?  photo: Blob?  role: enum(admin, guest)?  score: F64? }\n"
    "node Company { name: String @key }\n"
    "node Doc implements Titled { slug: String @key  body: String  embedding: Vector(4)  status: String? }\n"
    "node Chunk { text: String  vec: Vector(4) @embed(text) }\n"
    "edge Knows: Person -> Person { since: Date? }\n"
    "edge WorksAt: Person -> Company\n"
    "edge Cites: Doc -> Doc\n"
    "edge Wrote: Person -> Doc { role: String  note: String? }\n";

typedef struct tcase {
    const char *name;
    const char *expect; /* "" ok, "Tn" code, "-" uncoded type error, "P" parse error */
    const char *gq;
} tcase;

#define M(body) "query q() { match { " body " } "
static const tcase cases[] = {
    /* T1 unknown node type */
    {"t1_unknown_type", "T1", "query q() { match { $p: Persn } return { $p.name } }"},
    {"t1_interface_is_not_queryable", "T1", "query q() { match { $d: Titled } return { $d.title } }"},
    {"t1_ok", "", "query q() { match { $p: Person } return { $p.name } }"},
    /* T2 unknown inline property */
    {"t2_unknown_prop_match", "T2", M("$p: Person { nam: \"x\" }") "return { $p.name } }"},
    {"t2_ok", "", M("$p: Person { name: \"x\", age: 3, }") "return { $p.name } }"},
    /* T3 inline match typing */
    {"t3_type_mismatch", "T3", M("$p: Person { age: \"x\" }") "return { $p.name } }"},
    {"t3_enum_literal_not_in_set", "T3", M("$p: Person { role: \"boss\" }") "return { $p.name } }"},
    {"t3_list_equality", "T3", M("$p: Person { tags: [\"a\"] }") "return { $p.name } }"},
    {"t3_blob_prop_match", "T3", "query q($b: String) { match { $p: Person { photo: $b } } return { $p.name } }"},
    {"t3_vector_literal_length", "T3", M("$d: Doc { embedding: [1, 2] }") "return { $d.slug } }"},
    {"t3_ok_membership_enum_vector", "", M("$p: Person { tags: \"a\", role: \"guest\" } $d: Doc { embedding: [1, 2.5, 3, 4] }") "return { $p.name, $d.slug } }"},
    {"t3_ok_numeric_coercion", "", M("$p: Person { age: 2.5, score: 3 }") "return { $p.name } }"},
    /* T4 unknown edge */
    {"t4_unknown_edge", "T4", M("$p: Person  $p knowz $f") "return { $p.name } }"},
    {"t4_ok_case_insensitive", "", M("$p: Person  $p kNOWS $f  $p worksat $c") "return { $f.name, $c.name } }"},
    /* T5 endpoint mismatch */
    {"t5_src_not_endpoint", "T5", M("$c: Company  $c knows $f") "return { $c.name } }"},
    {"t5_dst_wrong_type", "T5", M("$p: Person  $d: Doc  $p worksAt $d") "return { $p.name } }"},
    {"t5_ok_reverse_direction", "", M("$c: Company  $p worksAt $c") "return { $p.name } }"},
    /* T6 unbound / unknown property */
    {"t6_unknown_property", "T6", M("$p: Person") "return { $p.nope } }"},
    {"t6_unbound_variable", "T6", M("$p: Person") "return { $q.name } }"},
    {"t6_edge_unknown_property", "T6", M("$p: Person  $p $w:knows $f") "return { $w.nope } }"},
    {"t6_traversal_without_binding", "T6", M("$a knows $b") "return { $a.name } }"},
    {"t6_negation_var_not_visible_outside", "T6", M("$p: Person  not { $p knows $x }") "return { $x.name } }"},
    {"t6_undeclared_match_param", "T6", M("$p: Person { name: $who }") "return { $p.name } }"},
    {"t6_unknown_alias_in_order", "T6", M("$p: Person") "return { $p.name } order { bogus } }"},
    {"t6_ok_later_binding", "", M("$p worksAt $c  $c: Company { name: \"Acme\" }") "return { $p.name } }"},
    /* T7 filter typing */
    {"t7_compare_mismatch", "T7", M("$p: Person  $p.age > \"x\"") "return { $p.name } }"},
    {"t7_list_comparison", "T7", M("$p: Person  $p.tags = \"x\"") "return { $p.name } }"},
    {"t7_vector_comparison", "T7", "query q($v: Vector(4)) { match { $d: Doc  $d.embedding = $v } return { $d.slug } }"},
    {"t7_string_vs_date", "T7", M("$p: Person  $p.born > \"2020-01-01\"") "return { $p.name } }"},
    {"t7_contains_on_int", "T7", M("$p: Person  $p.age contains 3") "return { $p.name } }"},
    {"t7_membership_type", "T7", M("$p: Person  $p.tags contains 3") "return { $p.name } }"},
    {"t7_starts_with_non_string", "T7", M("$p: Person  $p.name starts_with 3") "return { $p.name } }"},
    {"t7_blob_param_filter", "T7", "query q($b: Blob) { match { $p: Person  $p.name = $b } return { $p.name } }"},
    {"t7_now_on_date", "T7", M("$p: Person { born: now() }") "return { $p.name } }"},
    {"t7_param_type_mismatch", "T7", "query q($x: Bool) { match { $p: Person { age: $x } } return { $p.name } }"},
    {"t7_node_operand", "T7", M("$p: Person  $f: Person  $p = $f") "return { $p.name } }"},
    {"t7_ok_filters", "", "query q($t: String, $d: Date) { match { $p: Person  $p.tags contains $t  $p.name contains \"a\"  \"abc\" contains $p.name  $p.nick starts_with $p.name  $p.born >= $d  $p.seen < now()  $p.age != 3.5 } return { $p.name } }"},
    /* T8 aggregate argument types */
    {"t8_sum_string", "T8", M("$p: Person") "return { sum($p.name) } }"},
    {"min_bool_ok", "", "query q($b: Bool) { match { $p: Person } return { min($b) } }"},
    {"t8_min_list", "T8", "query q($b: [I32]) { match { $p: Person } return { min($b) } }"},
    {"t8_max_bare_node", "T8", "query q() { match { $p: Person } return { max($p) } }"},
    {"t25_duplicate_column", "T25", "query q() { match { $p: Person } return { $p.name, $p.name } }"},
    {"t25_aggregate_named_like_key", "T25", "query q() { match { $p: Person } return { $p.name, count($p.name) } }"},
    {"in_list_ok", "", "query q() { match { $p: Person  $p.name in [\"a\", \"b\"] } return { $p.name } }"},
    {"t7_in_wrong_element", "T7", "query q() { match { $p: Person  $p.name in [1, 2] } return { $p.name } }"},
    {"meta_id_ok", "", "query q() { match { $p: Person  $p.@id = \"x\" } return { $p.@id, $p.@type } }"},
    {"t6_node_src", "T6", "query q() { match { $p: Person } return { $p.@src } }"},
    {"condition_value_ok", "", "query q($m: I32) { match { $p: Person } return { $p.age > $m as old } order { old desc } }"},
    {"t8_nested_aggregate", "T8", M("$p: Person") "return { count(count($p)) } }"},
    {"t8_ok", "", M("$p: Person") "return { sum($p.age) as s, avg($p.score) as a, min($p.name) as lo, max($p.age) as hi, count($p.nick) as n } }"},
    /* T9 grouping and negation scoping */
    {"t9_non_groupable_projection", "T9", M("$p: Person") "return { $p.name, count($p), \"x\" } }"},
    {"t9_negation_without_outer_var", "T9", M("$p: Person  not { $x: Person }") "return { $p.name } }"},
    {"t9_order_key_not_projected", "T9", M("$p: Person  $p knows $f") "return { $p.name, count($f) as n } order { $p.age } }"},
    {"t9_aggregate_order_in_plain_query", "T9", M("$p: Person") "return { $p.name } order { count($p) } }"},
    {"t9_ok_group_by", "", M("$p: Person  $p knows $f") "return { $p.name, $p, count($f) as n } order { n desc, $p.name } limit 3 }"},
    {"t9_ok_negation", "", M("$p: Person  not { $p worksAt $c  not { $c.name = \"Acme\" } }") "return { $p.name } }"},
    /* T10 unknown mutation type / no assignments */
    {"t10_unknown_insert_type", "T10", "query q($n: String) { insert Persn { name: $n } }"},
    {"t10_unknown_delete_type", "T10", "query q($n: String) { delete Persn where name = $n }"},
    {"t10_ok", "", "query q($n: String) { insert Company { name: $n } }"},
    /* T11 unknown mutation property / Blob in where */
    {"t11_unknown_property", "T11", "query q($n: String) { update Person set { nam: $n } where name = $n }"},
    {"t11_unknown_where_property", "T11", "query q($n: String) { delete Person where nam = $n }"},
    {"t11_blob_where", "T11", "query q($n: String) { delete Person where photo = $n }"},
    {"t11_ok_edge_where", "", "query q($n: String) { delete Knows where from = $n }"},
    /* T12 required properties */
    {"t12_missing_key", "T12", "query q($a: I32) { insert Person { age: $a } }"},
    {"t12_edge_missing_to", "T12", "query q($a: String) { insert Knows { from: $a } }"},
    {"t12_edge_missing_required_prop", "T12", "query q($a: String, $b: String) { insert Wrote { from: $a, to: $b } }"},
    {"t12_embed_source_assigned", "", "query q($t: String) { insert Chunk { text: $t } }"},
    {"t12_ok_edge", "", "query q($a: String, $b: String) { insert Wrote { from: $a, to: $b, role: \"author\" } }"},
    /* T13 duplicate assignment */
    {"t13_duplicate", "T13", "query q($n: String) { insert Person { name: $n, name: $n } }"},
    {"t13_ok", "", "query q($n: String, $a: I32) { insert Person { name: $n age: $a } }"},
    /* T14 undeclared mutation variable */
    {"t14_undeclared", "T14", "query q($n: String) { insert Person { name: $who } }"},
    {"t14_ok_now_and_literal", "", "query q($n: String) { insert Person { name: $n, seen: now(), age: 3 } }"},
    /* T15 hop bounds and nearest */
    {"t15_unbounded", "T15", M("$p: Person  $p knows{1,} $f") "return { $f.name } }"},
    {"t15_min_zero", "T15", M("$p: Person  $p knows{0,2} $f") "return { $f.name } }"},
    {"t15_max_below_min", "T15", M("$p: Person  $p knows{3,2} $f") "return { $f.name } }"},
    {"t15_nearest_dimension_literal", "T15", M("$d: Doc") "return { $d.slug } order { nearest($d.embedding, [1.0, 2.0]) } limit 3 }"},
    {"t15_nearest_dimension_param", "T15", "query q($v: Vector(3)) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $v) } limit 3 }"},
    {"t15_nearest_not_vector", "T15", "query q($s: String) { match { $d: Doc } return { $d.slug } order { nearest($d.body, $s) } limit 3 }"},
    {"t15_nearest_query_type", "T15", M("$d: Doc") "return { $d.slug } order { nearest($d.embedding, 3) } limit 3 }"},
    {"t15_ok_bounds_and_nearest", "", "query q($s: String) { match { $a: Doc  $a cites{1,3} $b } return { $b.slug } order { nearest($b.embedding, $s) } limit 3 }"},
    /* T16 update on an edge */
    {"t16_update_edge", "T16", "query q($a: String) { update Knows set { since: $a } where from = $a }"},
    {"t16_ok_update_node", "", "query q($n: String, $a: I32) { update Person set { age: $a } where name = $n }"},
    /* T17 nearest without limit */
    {"t17_nearest_no_limit", "T17", "query q($v: Vector(4)) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $v) } }"},
    {"t17_ok_with_limit", "", "query q($v: Vector(4)) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $v) } limit 1 }"},
    /* T18 search ordering not first.  Alias ordering next to nearest is accepted (the
     * reference's hybrid-search guide orders by `nearest(...) as score`). */
    {"t18_alias_with_nearest_ok", "", "query q($v: Vector(4)) { match { $d: Doc } return { $d.slug as s } order { nearest($d.embedding, $v), s } limit 3 }"},
    {"t18_nearest_alias_score_ok", "", "query q($v: Vector(4)) { match { $d: Doc } return { $d.slug, nearest($d.embedding, $v) as score } order { score desc } limit 10 }"},
    {"t18_rrf_alias_score_ok", "", "query q($v: Vector(4), $s: String) { match { $d: Doc } return { $d.slug, rrf(nearest($d.embedding, $v), bm25($d.body, $s)) as score } order { score desc } limit 10 }"},
    {"t18_search_ordering_second", "T18", "query q($s: String) { match { $d: Doc } return { $d.slug } order { $d.slug, bm25($d.body, $s) } limit 3 }"},
    {"t18_ok_alias_alone", "", M("$d: Doc") "return { $d.slug as s } order { s desc } }"},
    /* T19 search / fuzzy arguments */
    {"t19_fuzzy_edits_string", "T19", "query q($s: String) { match { $p: Person  fuzzy($p.name, $s, \"two\") } return { $p.name } }"},
    {"t19_search_field_int", "T19", "query q($s: String) { match { $p: Person  search($p.age, $s) } return { $p.name } }"},
    {"t19_search_query_int", "T19", M("$p: Person  search($p.name, 3)") "return { $p.name } }"},
    {"t19_ok", "", "query q($s: String, $k: I32) { match { $p: Person  search($p.name, $s)  fuzzy($p.nick, \"ab\", $k)  fuzzy($p.name, $s) } return { $p.name } }"},
    /* T20 match_text / bm25 arguments */
    {"t20_bm25_query_int", "T20", M("$p: Person") "return { $p.name } order { bm25($p.name, 5) } }"},
    {"t20_match_text_field", "T20", "query q($s: String) { match { $p: Person  match_text($p.tags, $s) } return { $p.name } }"},
    {"t20_ok", "", "query q($s: String) { match { $d: Doc  match_text($d.body, $s) } return { $d.slug } order { bm25($d.body, $s) } }"},
    /* T21 rrf */
    {"t21_rrf_no_limit", "T21", "query q($s: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.title, $s), bm25($d.body, $s)) } }"},
    {"t21_rrf_k_zero", "T21", "query q($s: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.title, $s), bm25($d.body, $s), 0) } limit 3 }"},
    {"t21_rrf_k_float", "T21", "query q($s: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.title, $s), bm25($d.body, $s), 1.5) } limit 3 }"},
    {"t21_rrf_projection_without_ordering", "T21", "query q($s: String) { match { $d: Doc } return { rrf(bm25($d.title, $s), bm25($d.body, $s)) as r } limit 3 }"},
    {"t21_rrf_alias_no_limit", "T21", "query q($s: String) { match { $d: Doc } return { rrf(bm25($d.title, $s), bm25($d.body, $s)) as r } order { r } }"},
    {"t21_rrf_in_filter", "T21", "query q($s: String) { match { $d: Doc  rrf(bm25($d.title, $s), bm25($d.body, $s)) > 0.5 } return { $d.slug } limit 3 }"},
    {"t21_rrf_inside_aggregate", "T21", "query q($s: String) { match { $d: Doc } return { max(rrf(bm25($d.title, $s), bm25($d.body, $s))) as m } limit 3 }"},
    {"t21_ok", "", "query q($s: String, $v: Vector(4), $k: I64) { match { $d: Doc } return { $d.slug, rrf(nearest($d.embedding, $v), bm25($d.body, $s), $k) as r } order { rrf(nearest($d.embedding, $v), bm25($d.body, $s), $k) } limit 3 }"},
    /* T22 undirected asymmetric */
    {"t22_undirected_asymmetric", "T22", M("$p: Person  $p <worksAt> $c") "return { $p.name } }"},
    {"t22_ok_undirected_symmetric", "", M("$p: Person  $p <knows>{1,2} $f  not { $p <knows> $x }") "return { $f.name } }"},
    /* T23 edge bindings */
    {"t23_edge_binding_with_bounds", "T23", M("$p: Person  $p $w:knows{1,2} $f") "return { $p.name } }"},
    {"t23_bare_edge", "T23", M("$p: Person  $p $w:knows $f") "return { $w } }"},
    {"t23_reuse_endpoint_name", "T23", M("$p: Person  $p $p:knows $f") "return { $f.name } }"},
    {"t23_reuse_bound_name", "T23", M("$p: Person  $f: Person  $p $f:knows $g") "return { $g.name } }"},
    {"t23_edge_as_endpoint", "T23", M("$p: Person  $p $w:knows $f  $w knows $g") "return { $f.name } }"},
    {"t23_search_on_edge", "T23", "query q($s: String) { match { $p: Person  $p $w:wrote $d  search($w.note, $s) } return { $p.name } }"},
    {"t23_rebind_edge_as_node", "T23", M("$p: Person  $p $w:knows $f  $w: Person") "return { $p.name } }"},
    {"t23_ok", "", M("$p: Person  $p $w:knows $f  $w.since >= date(\"2023-01-01\")  $p $_:knows{1,1} $g") "return { $f.name, $w.since } order { $w.since desc } }"},
    /* T24 Blob read values */
    {"t24_blob_projection", "T24", M("$p: Person") "return { $p.photo } }"},
    {"t24_blob_param_projection", "T24", "query q($b: Blob) { match { $p: Person } return { $b } }"},
    {"t24_blob_filter", "T24", "query q($s: String) { match { $p: Person  $p.photo = $s } return { $p.name } }"},
    {"t24_ok_blob_assignment", "", "query q($n: String, $b: String) { insert Person { name: $n, photo: $b } }"},
    /* T42 limit / offset parameters (an extension) */
    {"t42_limit_param_undeclared", "T42", M("$p: Person") "return { $p.name } limit $n }"},
    {"t42_limit_param_string", "T42", "query q($n: String) { match { $p: Person } return { $p.name } limit $n }"},
    {"t42_limit_param_optional", "T42", "query q($n: I64?) { match { $p: Person } return { $p.name } limit $n }"},
    {"t42_offset_param_float", "T42", "query q($m: F64) { match { $p: Person } return { $p.name } limit 3 offset $m }"},
    {"t42_ok", "", "query q($n: I32, $m: U64) { match { $p: Person } return { $p.name } order { $p.name } limit $n offset $m }"},
    {"t42_ok_offset_alone", "", M("$p: Person") "return { $p.name } order { $p.name } offset 2 }"},
    {"parse_negative_offset", "P", M("$p: Person") "return { $p.name } limit 2 offset -1 }"},
    /* T43 distinct, T44 arithmetic, T45 functions (extensions) */
    {"t43_avg_distinct", "T43", M("$p: Person") "return { avg(distinct $p.age) } }"},
    {"t43_distinct_score", "T43", "query q($s: String) { match { $d: Doc } return distinct { bm25($d.body, $s) } }"},
    {"t43_distinct_order_unprojected", "T43", M("$p: Person") "return distinct { $p.nick } order { $p.age } }"},
    {"t43_ok", "", M("$p: Person") "return distinct { $p.nick as k, count(distinct $p) as n } order { k } }"},
    {"t44_string_plus", "T44", M("$p: Person") "return { $p.name + $p.nick } }"},
    {"t44_date_minus", "T44", M("$p: Person") "return { $p.born - 1 } }"},
    {"t44_neg_string", "T44", M("$p: Person  -$p.name = 1") "return { $p.name } }"},
    {"t44_ok", "", M("$p: Person  $p.age * 2 % 7 >= -3") "return { $p.age / 2.5 as x } order { -$p.age } }"},
    {"t45_unknown", "T45", M("$p: Person") "return { uper($p.name) } }"},
    {"t45_arity", "T45", M("$p: Person") "return { lower($p.name, $p.nick) } }"},
    {"t45_substring_start", "T45", M("$p: Person") "return { substring($p.name, \"1\") } }"},
    {"t45_year_of_string", "T45", M("$p: Person") "return { year($p.name) } }"},
    {"t45_coalesce_mixed", "T45", M("$p: Person") "return { coalesce($p.age, $p.name) } }"},
    {"t45_concat_number", "T45", M("$p: Person") "return { concat($p.name, $p.age) } }"},
    {"t45_ok", "", M("$p: Person  length($p.name) > 2  year($p.born) = 1990") "return { coalesce($p.age, 0) as a, round(abs($p.age * 1.5)) as r } }"},
    /* uncoded errors */
    {"uncoded_rebind_other_type", "-", M("$p: Person  $p: Company") "return { $p.name } }"},
    {"uncoded_reserved_param", "-", "query q($__nanograph_now: DateTime) { match { $p: Person } return { $p.name } }"},
    {"uncoded_nested_list_literal", "-", M("$p: Person  $p.tags contains [[\"a\"]]") "return { $p.name } }"},
    {"uncoded_mixed_list_literal", "-", M("$p: Person  $p.tags contains [\"a\", 1]") "return { $p.name } }"},
    {"uncoded_duplicate_param", "-", "query q($a: String, $a: I32) { match { $p: Person } return { $p.name } }"},
    {"uncoded_mixed_mutation", "-", "query q($n: String) { insert Person { name: $n } delete Person where name = $n }"},
    {"uncoded_match_without_binding", "-", "query q($a: String) { match { $a = \"x\" } return { $a } }"},
    {"ok_rebind_same_type", "", M("$p: Person  $p: Person { name: \"a\" }") "return { $p.name } }"},
    {"ok_multi_update_read_your_writes", "", "query q($n: String, $a: I32, $t: I32, $b: I32) { update Person set { age: $a } where name = $n  update Person set { age: $b } where age > $t }"},
    {"ok_param_shadows_variable_name", "", "query q($p: String) { match { $p: Person { name: $p } } return { $p.name, $p } }"},
    /* parse errors the checker never sees */
    {"parse_nearest_with_direction", "P", "query q($v: Vector(4)) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $v) desc } limit 3 }"},
    {"ok_contains_in_mutation_where", "", "query q() { delete Person where name contains \"x\" or tags contains \"y\" }"},
    {"t7_in_list_property_mutation_where", "T7", "query q() { delete Person where tags in [\"y\"] }"},
    {"ok_is_null_in_mutation_where", "", "query q($n: [String]) { delete Person where age is null and name in $n }"},
    {"parse_empty_binding_braces_ok", "", M("$d: Doc { }") "return { $d.slug } }"},
    {"parse_rrf_non_rank_argument", "P", "query q($s: String) { match { $d: Doc } return { $d.slug } order { rrf($d.slug, bm25($d.body, $s)) } limit 2 }"},
};

static og_catalog *g_cat;

static int setup(void **state)
{
    (void)state;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&g_cat, "t.pg", SCHEMA, strlen(SCHEMA), &d);
    for (size_t i = 0; i < d.len; i++) fprintf(stderr, "schema: %s\n", d.v[i].message);
    og_diags_free(&d);
    return st == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_catalog_free(g_cat);
    return 0;
}

static void run_case(void **state)
{
    const tcase *tc = *state;
    og_source src;
    assert_int_equal(og_source_init(&src, tc->name, tc->gq, strlen(tc->gq)), OG_OK);
    og_query_file *f = NULL;
    og_diag err;
    memset(&err, 0, sizeof err);
    og_status st = og_query_parse(&f, &src, &err);
    if (strcmp(tc->expect, "P") == 0) {
        if (st != OG_ERR_PARSE) fprintf(stderr, "%s: expected a parse error\n", tc->name);
        assert_int_equal(st, OG_ERR_PARSE);
        assert_non_null(err.message);
        og_diag_free(&err);
        og_source_free(&src);
        return;
    }
    if (st != OG_OK) fprintf(stderr, "%s: parse: %s\n", tc->name, err.message);
    assert_int_equal(st, OG_OK);
    assert_int_equal(f->nqueries, 1);
    og_ir_query *ir = NULL;
    st = og_query_compile(&ir, f, 0, g_cat, &src, &err);
    char code[8];
    og_query_diag_code(&err, code, sizeof code);
    if (tc->expect[0] == 0) {
        if (st != OG_OK) fprintf(stderr, "%s: unexpected error: %s\n", tc->name, err.message);
        assert_int_equal(st, OG_OK);
        assert_non_null(ir);
    } else {
        if (st != OG_ERR_TYPE) fprintf(stderr, "%s: expected %s, got success\n", tc->name, tc->expect);
        assert_int_equal(st, OG_ERR_TYPE);
        const char *want = strcmp(tc->expect, "-") == 0 ? "" : tc->expect;
        if (strcmp(code, want) != 0)
            fprintf(stderr, "%s: expected %s, got: %s\n", tc->name, tc->expect, err.message);
        assert_string_equal(code, want);
        assert_true(err.end >= err.start);
        assert_true(err.line >= 1);
    }
    og_ir_free(ir);
    og_diag_free(&err);
    og_query_file_free(f);
    og_source_free(&src);
}

/* Every T-code appears in the table with both a failing and a passing case. */
static void every_code_is_covered(void **state)
{
    (void)state;
    for (int code = 1; code <= 24; code++) {
        char want[8], prefix[8];
        snprintf(want, sizeof want, "T%d", code);
        snprintf(prefix, sizeof prefix, "t%d_", code);
        int neg = 0, pos = 0;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (strcmp(cases[i].expect, want) == 0) neg++;
            if (strncmp(cases[i].name, prefix, strlen(prefix)) == 0 && cases[i].expect[0] == 0) pos++;
        }
        if (!neg || !pos) fprintf(stderr, "%s: %d failing, %d passing cases\n", want, neg, pos);
        assert_true(neg > 0 && pos > 0);
    }
}

/* The message names the offending thing and the span points at it. */
static void error_carries_span_and_message(void **state)
{
    (void)state;
    const char *gq = "query q() {\n  match { $c: Company\n          $c knows $f }\n  return { $c.name } }";
    og_source src;
    og_source_init(&src, "x.gq", gq, strlen(gq));
    og_query_file *f = NULL;
    og_diag err;
    memset(&err, 0, sizeof err);
    assert_int_equal(og_query_parse(&f, &src, &err), OG_OK);
    assert_int_equal(og_query_check(f, 0, g_cat, &src, &err), OG_ERR_TYPE);
    assert_non_null(strstr(err.message, "T5: variable `$c` has type `Company`"));
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 11);
    assert_int_equal(err.end - err.start, 2);
    og_diag_free(&err);
    /* checking again is idempotent */
    assert_int_equal(og_query_check(f, 0, g_cat, &src, NULL), OG_ERR_TYPE);
    og_query_file_free(f);
    og_source_free(&src);
}

int main(void)
{
    size_t n = sizeof cases / sizeof cases[0];
    struct CMUnitTest *tests = calloc(n + 2, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        tests[i].name = cases[i].name;
        tests[i].test_func = run_case;
        tests[i].initial_state = (void *)&cases[i];
    }
    tests[n] = (struct CMUnitTest)cmocka_unit_test(every_code_is_covered);
    tests[n + 1] = (struct CMUnitTest)cmocka_unit_test(error_carries_span_and_message);
    int rc = _cmocka_run_group_tests("typecheck", tests, n + 2, setup, teardown);
    free(tests);
    return rc;
}
