/*
 * test_query_ir.c — lowering to the typed IR (query_lower.c, ir.h) and its EXPLAIN dump
 * (ir.c): scans with pushed-down predicates, deferred bindings, reverse and closing
 * expands, undirected and multi-hop expands, edge bindings, cross joins, anti-joins
 * (nested, with inner bindings), aggregates, orderings (property, alias, nearest, bm25,
 * rrf), projected scores, limits, mutations with resolved property ids, read/write sets,
 * and the REF choices of docs/query-language.md (bare $v = id, now() in reads, ranking a
 * traversal-introduced variable).
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
    "node Person { name: String @key  age: I32?  nick: String?  tags: [String]?  born: Date?\n"
    "              seen: DateTime? }\n"
    "node Company { name: String @key }\n"
    "node Doc { slug: String @key  title: String @index  body: String  embedding: Vector(4)  status: String? }\n"
    "edge Knows: Person -> Person { since: Date? }\n"
    "edge WorksAt: Person -> Company\n"
    "edge Cites: Doc -> Doc\n"
    "edge Wrote: Person -> Doc { role: String }\n";

static og_catalog *g_cat;

static int setup(void **state)
{
    (void)state;
    return og_schema_compile(&g_cat, "t.pg", SCHEMA, strlen(SCHEMA), NULL) == OG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_catalog_free(g_cat);
    return 0;
}

typedef struct compiled {
    og_source src;
    og_query_file *f;
    og_ir_query *ir;
    char *dump;
} compiled;

static compiled *C(const char *gq)
{
    compiled *c = calloc(1, sizeof *c);
    og_source_init(&c->src, "t.gq", gq, strlen(gq));
    og_diag err;
    memset(&err, 0, sizeof err);
    og_status st = og_query_parse(&c->f, &c->src, &err);
    if (st == OG_OK) st = og_query_compile(&c->ir, c->f, 0, g_cat, &c->src, &err);
    if (st != OG_OK) fprintf(stderr, "compile: %s\n", err.message);
    assert_int_equal(st, OG_OK);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_ir_dump(&b, c->ir), OG_OK);
    c->dump = strdup(og_buf_cstr(&b));
    og_buf_free(&b);
    return c;
}

static void done(compiled *c)
{
    og_ir_free(c->ir);
    og_query_file_free(c->f);
    og_source_free(&c->src);
    free(c->dump);
    free(c);
}

static void expect_dump(const char *gq, const char *want)
{
    compiled *c = C(gq);
    if (strcmp(c->dump, want) != 0) fprintf(stderr, "got:\n%s\nwant:\n%s\n", c->dump, want);
    assert_string_equal(c->dump, want);
    done(c);
}

static void scan_with_pushed_down_predicates(void **state)
{
    (void)state;
    expect_dump("query q($name: String) { match { $p: Person { name: $name, tags: \"x\" }  $p.age > 30  search($p.nick, $name) } return { $p.name, $p.age } order { $p.age desc } limit 2 }",
                "query q($name: String)\n"
                "  scan $p: Person [$p.name = $name, $p.tags contains[list] \"x\", $p.age > 30, search($p.nick, $name)]\n"
                "  return p.name = $p.name: String, p.age = $p.age: I32?\n"
                "  order $p.age desc\n"
                "  limit 2\n"
                "  reads: node Person\n"
                "  writes: -\n");
}

static void deferred_binding_filters_go_into_the_expand(void **state)
{
    (void)state;
    expect_dump("query q($n: String, $m: String) { match { $p: Person { name: $n }  $p knows $mid  $mid: Person { name: $m }  $mid knows $fof  $fof.age > 3  $mid.name != $fof.name } return { $fof.name } }",
                "query q($n: String, $m: String)\n"
                "  scan $p: Person [$p.name = $n]\n"
                "  expand $p -[Knows out 1..1]-> $mid: Person [$mid.name = $m]\n"
                "  expand $mid -[Knows out 1..1]-> $fof: Person [$fof.age > 3]\n"
                "  filter $mid.name != $fof.name\n"
                "  return fof.name = $fof.name: String\n"
                "  reads: node Person, edge Knows\n"
                "  writes: -\n");
}

static void reverse_expand_when_destination_is_bound(void **state)
{
    (void)state;
    expect_dump("query q($c: String) { match { $co: Company { name: $c }  $p worksAt $co } return { $p.name } }",
                "query q($c: String)\n"
                "  scan $co: Company [$co.name = $c]\n"
                "  expand $co -[WorksAt in 1..1]-> $p: Person\n"
                "  return p.name = $p.name: String\n"
                "  reads: node Company, node Person, edge WorksAt\n"
                "  writes: -\n");
    /* a binding declared after the traversal still constrains it */
    expect_dump("query q() { match { $p: Person  $p worksAt $c  $c: Company { name: \"Acme\" } } return { $p.name } }",
                "query q()\n"
                "  scan $p: Person\n"
                "  expand $p -[WorksAt out 1..1]-> $c: Company [$c.name = \"Acme\"]\n"
                "  return p.name = $p.name: String\n"
                "  reads: node Company, node Person, edge WorksAt\n"
                "  writes: -\n");
}

static void cycle_closing_and_cross_join(void **state)
{
    (void)state;
    expect_dump("query q() { match { $a: Person  $b: Person  $a knows $b  $b knows $a } return { $a.name } }",
                "query q()\n"
                "  scan $a: Person\n"
                "  expand $a -[Knows out 1..1]-> $b: Person\n"
                "  expand $b -[Knows out 1..1]-> =$a: Person\n"
                "  return a.name = $a.name: String\n"
                "  reads: node Person, edge Knows\n"
                "  writes: -\n");
    expect_dump("query q() { match { $a: Person  $c: Company  $a.nick starts_with $c.name } return { $a.name, $c.name } }",
                "query q()\n"
                "  scan $a: Person\n"
                "  scan $c: Company\n"
                "  filter $a.nick starts_with $c.name\n"
                "  return a.name = $a.name: String, c.name = $c.name: String\n"
                "  reads: node Company, node Person\n"
                "  writes: -\n");
}

static void hops_undirected_and_edge_binding(void **state)
{
    (void)state;
    expect_dump("query q() { match { $a: Doc  $a cites{2,3} $b  $b <cites> $c } return { $c.slug } }",
                "query q()\n"
                "  scan $a: Doc\n"
                "  expand $a -[Cites out 2..3]-> $b: Doc\n"
                "  expand $b -[Cites both 1..1]-> $c: Doc\n"
                "  return c.slug = $c.slug: String\n"
                "  reads: node Doc, edge Cites\n"
                "  writes: -\n");
    expect_dump("query q() { match { $p: Person  $p worksAt{1,3} $c  $p wrote{2,2} $d } return { $c.name } }",
                "query q()\n"
                "  scan $p: Person\n"
                "  expand $p -[WorksAt out 1..1]-> $c: Company\n"
                "  expand $p -[Wrote out 2..1]-> $d: Doc\n"
                "  return c.name = $c.name: String\n"
                "  reads: node Company, node Doc, node Person, edge WorksAt, edge Wrote\n"
                "  writes: -\n");
    expect_dump("query q($n: String) { match { $p: Person { name: $n }  $p $w:knows $f  $w.since >= date(\"2023-01-01\") } return { $f.name, $w.since } }",
                "query q($n: String)\n"
                "  scan $p: Person [$p.name = $n]\n"
                "  expand $p -[$w: Knows out 1..1]-> $f: Person edge[$w.since >= date(\"2023-01-01\")]\n"
                "  return f.name = $f.name: String, w.since = $w.since: Date?\n"
                "  reads: node Person, edge Knows\n"
                "  writes: -\n");
}

static void antijoins(void **state)
{
    (void)state;
    expect_dump("query q() { match { $p: Person  not { $p worksAt $c  not { $c.name = \"Acme\" } }  not { $p worksAt $d  $d: Company { name: \"B\" } }  not { $_ knows $p } } return { $p.name } }",
                "query q()\n"
                "  scan $p: Person\n"
                "  antijoin ($p)\n"
                "    expand $p -[WorksAt out 1..1]-> $c: Company\n"
                "    antijoin ($c)\n"
                "      filter $c.name = \"Acme\"\n"
                "  antijoin ($p)\n"
                "    expand $p -[WorksAt out 1..1]-> $d: Company [$d.name = \"B\"]\n"
                "  antijoin ($p)\n"
                "    expand $p -[Knows in 1..1]-> $_: Person\n"
                "  return p.name = $p.name: String\n"
                "  reads: node Company, node Person, edge Knows, edge WorksAt\n"
                "  writes: -\n");
}

static void aggregate_with_alias_ordering(void **state)
{
    (void)state;
    expect_dump("query q() { match { $p: Person  $p knows $f } return { $p.name count($f) as friends  avg($f.age) as a  min($f.name) } order { friends desc } limit 20 }",
                "query q()\n"
                "  scan $p: Person\n"
                "  expand $p -[Knows out 1..1]-> $f: Person\n"
                "  aggregate key p.name = $p.name: String, friends = count(id($f)): I64?, a = avg($f.age): F64?, f.name = min($f.name): String?\n"
                "  order column(friends) desc\n"
                "  limit 20\n"
                "  reads: node Person, edge Knows\n"
                "  writes: -\n");
}

static void search_orderings_and_projected_scores(void **state)
{
    (void)state;
    expect_dump("query q($v: Vector(4)) { match { $d: Doc { status: \"hit\" } } return { $d.slug, nearest($d.embedding, $v) as dist } order { nearest($d.embedding, $v) } limit 3 }",
                "query q($v: Vector(4))\n"
                "  scan $d: Doc [$d.status = \"hit\"]\n"
                "  return d.slug = $d.slug: String, dist = score#0:nearest($d.embedding, $v): F64\n"
                "  order by rank#0 nearest($d.embedding, $v)\n"
                "  limit 3\n"
                "  reads: node Doc\n"
                "  writes: -\n");
    expect_dump("query q($s: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $s) as score } order { score } limit 2 }",
                "query q($s: String)\n"
                "  scan $d: Doc\n"
                "  return d.slug = $d.slug: String, score = score#0:bm25($d.body, $s): F64\n"
                "  order by rank#0 bm25($d.body, $s)\n"
                "  limit 2\n"
                "  reads: node Doc\n"
                "  writes: -\n");
    /* REF choice: a traversal-introduced variable can be ranked (the final candidate set) */
    expect_dump("query q($s: String, $v: Vector(4)) { match { $p: Person  $p wrote $d } return { $d.slug, rrf(nearest($d.embedding, $v), bm25($d.body, $s)) as r } order { rrf(nearest($d.embedding, $v), bm25($d.body, $s)) } limit 5 }",
                "query q($s: String, $v: Vector(4))\n"
                "  scan $p: Person\n"
                "  expand $p -[Wrote out 1..1]-> $d: Doc\n"
                "  return d.slug = $d.slug: String, r = score#2:rrf(nearest($d.embedding, $v), bm25($d.body, $s), k=60): F64\n"
                "  order by rank#2 rrf(nearest($d.embedding, $v), bm25($d.body, $s), k=60)\n"
                "  limit 5\n"
                "  reads: node Doc, node Person, edge Wrote\n"
                "  writes: -\n");
}

static void ranks_are_typed_ir_nodes(void **state)
{
    (void)state;
    compiled *c = C("query q($s: String, $v: Vector(4)) { match { $d: Doc } return { $d.slug } order { rrf(nearest($d.embedding, $v), nearest($d.embedding, \"text\"), 5) } limit 3 }");
    og_ir_query *ir = c->ir;
    assert_int_equal(ir->nranks, 3);
    assert_int_equal(ir->rank_order, 2);
    const og_ir_rank *r = &ir->ranks[2];
    assert_int_equal(r->kind, OG_IR_RANK_RRF);
    assert_int_equal(r->k->lit.i, 5);
    assert_int_equal(ir->ranks[r->arm1].kind, OG_IR_RANK_NEAREST);
    assert_false(ir->ranks[r->arm1].query_is_text);
    assert_true(ir->ranks[r->arm2].query_is_text);
    const og_cat_type *doc = og_catalog_node(g_cat, "Doc");
    assert_int_equal(ir->ranks[r->arm1].prop_id, og_cat_type_prop(doc, "embedding", NULL)->id);
    assert_int_equal(ir->norders, 0);
    done(c);
}

/* Bare $v projects the node object (column "v"); now() works in reads. */
static void bare_variable_and_now_in_reads(void **state)
{
    (void)state;
    compiled *c = C("query q($k: I64) { match { $p: Person  $p.seen < now() } return { $p, now() as t, $k, 1, $p.born } order { $p.age desc, $p.name } }");
    assert_non_null(strstr(c->dump, "return p = object($p): Object, t = now(): DateTime, k = $k: I64, literal = 1: I64, p.born = $p.born: Date?\n"));
    assert_non_null(strstr(c->dump, "[$p.seen < now()]"));
    assert_non_null(strstr(c->dump, "order $p.age desc, $p.name asc\n"));
    assert_int_equal(c->ir->columns[0].expr->kind, OG_IRX_OBJECT);
    assert_int_equal(c->ir->columns[1].expr->kind, OG_IRX_NOW);
    done(c);
}

static void contains_overload_is_resolved(void **state)
{
    (void)state;
    compiled *c = C("query q() { match { $p: Person  $p.tags contains \"a\"  $p.name contains \"b\"  \"abc\" contains $p.nick } return { $p.name } }");
    const og_ir_op *scan = &c->ir->ops[0];
    assert_int_equal(scan->kind, OG_IR_SCAN);
    assert_int_equal(scan->npreds, 3);
    assert_int_equal(scan->preds[0].op, OG_IR_LIST_CONTAINS);
    assert_int_equal(scan->preds[1].op, OG_IR_STR_CONTAINS);
    assert_int_equal(scan->preds[2].op, OG_IR_STR_CONTAINS);
    done(c);
}

static void mutations_with_property_ids(void **state)
{
    (void)state;
    const og_cat_type *person = og_catalog_node(g_cat, "Person");
    compiled *c = C("query q($n: String, $a: I32) { insert Person { name: $n, age: $a } insert Knows { from: $n, to: \"Bob\", since: date(\"2020-01-01\") } update Person set { nick: $n, seen: now() } where name = $n }");
    og_ir_query *ir = c->ir;
    assert_true(ir->is_mutation);
    assert_int_equal(ir->nmutations, 3);
    const og_ir_mutation *m = &ir->mutations[0];
    assert_int_equal(m->kind, OG_QM_INSERT);
    assert_false(m->is_edge);
    assert_int_equal(m->type_id, person->id);
    assert_int_equal(m->assigns[0].prop_id, og_cat_type_prop(person, "name", NULL)->id);
    assert_true(m->assigns[0].is_key);
    assert_int_equal(m->assigns[1].value->kind, OG_IRX_PARAM);
    m = &ir->mutations[1];
    assert_true(m->is_edge);
    assert_int_equal(m->assigns[0].prop, OG_QPROP_FROM);
    assert_int_equal(m->assigns[1].prop, OG_QPROP_TO);
    assert_int_equal(m->assigns[1].value->kind, OG_IRX_LIT);
    m = &ir->mutations[2];
    assert_int_equal(m->kind, OG_QM_UPDATE);
    assert_int_equal(m->assigns[1].value->kind, OG_IRX_NOW);
    assert_int_equal(m->where_op, OG_IR_EQ);
    assert_true(m->where.is_key);
    assert_non_null(strstr(c->dump, "mutation q($n: String, $a: I32)\n  insert node Person {name#"));
    assert_non_null(strstr(c->dump, "  insert edge Knows {from = $n, to = \"Bob\", since#"));
    assert_non_null(strstr(c->dump, "  reads: node Person, edge Knows\n  writes: node Person, edge Knows\n"));
    done(c);
}

static void node_delete_writes_incident_edges(void **state)
{
    (void)state;
    const og_cat_type *person = og_catalog_node(g_cat, "Person");
    char want[512];
    snprintf(want, sizeof want,
             "mutation q($n: String)\n"
             "  delete node Person where name#%llu(key) = $n\n"
             "  reads: node Person, edge Knows, edge WorksAt, edge Wrote\n"
             "  writes: node Person, edge Knows, edge WorksAt, edge Wrote\n",
             (unsigned long long)og_cat_type_prop(person, "name", NULL)->id);
    expect_dump("query q($n: String) { delete Person where name = $n }", want);
}

static void edge_delete_on_endpoint(void **state)
{
    (void)state;
    expect_dump("query q($n: String) { delete Knows where from = $n }",
                "mutation q($n: String)\n"
                "  delete edge Knows where from = $n\n"
                "  reads: edge Knows\n"
                "  writes: edge Knows\n");
}

/* `a in b` lowers to b's membership test of a; meta fields; conditions as values; objects. */
static void in_meta_fields_and_condition_values(void **state)
{
    (void)state;
    compiled *c = C("query q($n: [String], $m: I32) { match { $p: Person  $p.name in $n  \"x\" in $p.tags"
                    "  $p $w:wrote $d  $w.@src = $p.@id } return { $p.age > $m as old, $p.@type, $w.@dst, $d } }");
    assert_non_null(strstr(c->dump, "$n contains[list] $p.name"));
    assert_non_null(strstr(c->dump, "$p.tags contains[list] \"x\""));
    assert_non_null(strstr(c->dump, "$w.@src = id($p)"));
    assert_non_null(strstr(c->dump, "old = bool($p.age > $m): Bool?"));
    assert_non_null(strstr(c->dump, "p.@type = \"Person\": String"));
    assert_non_null(strstr(c->dump, "w.@dst = $w.@dst: String"));
    assert_non_null(strstr(c->dump, "d = object($d): Object"));
    assert_int_equal(c->ir->columns[0].expr->kind, OG_IRX_PRED);
    assert_int_equal(c->ir->columns[2].expr->kind, OG_IRX_META);
    assert_int_equal(c->ir->columns[3].expr->kind, OG_IRX_OBJECT);
    done(c);
}

static void limit_and_offset_literals_and_parameters(void **state)
{
    (void)state;
    expect_dump("query q() { match { $p: Person } return { $p.name } order { $p.name } limit 2 offset 4 }",
                "query q()\n"
                "  scan $p: Person\n"
                "  return p.name = $p.name: String\n"
                "  order $p.name asc\n"
                "  limit 2\n"
                "  offset 4\n"
                "  reads: node Person\n"
                "  writes: -\n");
    expect_dump("query q($n: I64, $m: U32) { match { $p: Person } return { $p.name } order { $p.name } limit $n offset $m }",
                "query q($n: I64, $m: U32)\n"
                "  scan $p: Person\n"
                "  return p.name = $p.name: String\n"
                "  order $p.name asc\n"
                "  limit $n\n"
                "  offset $m\n"
                "  reads: node Person\n"
                "  writes: -\n");
}

static void arithmetic_functions_and_distinct(void **state)
{
    (void)state;
    expect_dump("query q() { match { $p: Person  $p.age * 2 + 1 > 30 } return distinct { upper($p.name) as u, coalesce($p.nick, \"x\", $p.name) as n } order { u } }",
                "query q()\n"
                "  scan $p: Person [(($p.age * 2) + 1) > 30]\n"
                "  aggregate distinct key u = upper($p.name): String, key n = coalesce($p.nick, coalesce(\"x\", $p.name)): String\n"
                "  order column(u) asc\n"
                "  reads: node Person\n"
                "  writes: -\n");
    expect_dump("query q() { match { $p: Person } return { count(distinct $p.nick) as n, sum(-$p.age % 3) as s } }",
                "query q()\n"
                "  scan $p: Person\n"
                "  aggregate n = count(distinct $p.nick): I64?, s = sum(((-$p.age) % 3)): F64?\n"
                "  reads: node Person\n"
                "  writes: -\n");
}

static void exists_and_count_subpatterns(void **state)
{
    (void)state;
    expect_dump("query q($n: I64) { match { $p: Person  exists { $p worksAt $c }  count { $p knows $f } >= $n } return { $p.name } }",
                "query q($n: I64)\n"
                "  scan $p: Person\n"
                "  semijoin ($p)\n"
                "    expand $p -[WorksAt out 1..1]-> $c: Company\n"
                "  countjoin ($p) count >= $n\n"
                "    expand $p -[Knows out 1..1]-> $f: Person\n"
                "  return p.name = $p.name: String\n"
                "  reads: node Company, node Person, edge Knows, edge WorksAt\n"
                "  writes: -\n");
}

static void optional_and_aggregate_subpatterns(void **state)
{
    (void)state;
    /* a filter over the optional variable written after the block stays a filter after it */
    expect_dump("query q() { match { $p: Person  optional { $p $w:worksAt $c  $c.name = \"acme\" }  $c.name is null "
                "sum($f.age * 2) { $p knows $f } > 3 } return { $p.name, $c } }",
                "query q()\n"
                "  scan $p: Person\n"
                "  optional ($p) binds $w $c\n"
                "    expand $p -[$w: WorksAt out 1..1]-> $c: Company [$c.name = \"acme\"]\n"
                "  filter $c.name is null\n"
                "  countjoin ($p) sum(($f.age * 2)) > 3\n"
                "    expand $p -[Knows out 1..1]-> $f: Person\n"
                "  return p.name = $p.name: String, c = object($c): Object\n"
                "  reads: node Company, node Person, edge Knows, edge WorksAt\n"
                "  writes: -\n");
    /* an unaliased score column is named as the reference names it */
    expect_dump("query q() { match { $d: Doc } return { $d.slug, bm25($d.body, \"graph\") } "
                "order { bm25($d.body, \"graph\") desc } limit 2 }",
                "query q()\n"
                "  scan $d: Doc\n"
                "  return d.slug = $d.slug: String, d._score = score#0:bm25($d.body, \"graph\"): F64\n"
                "  order by rank#0 bm25($d.body, \"graph\")\n"
                "  limit 2\n"
                "  reads: node Doc\n"
                "  writes: -\n");
}

/* `$p: shortest { … }`: a PATH op after every scan, binding $p; a filter over length($p) alone
 * is pushed into it; nodes($p) is a [String] column */
static void shortest_paths(void **state)
{
    (void)state;
    expect_dump("query q() { match { $a: Person  $b: Person { name: \"x\" }  $p: shortest { $a <knows>{1,4} $b }  "
                "length($p) > 1 } return { nodes($p) as path, length($p) } order { length($p) desc } }",
                "query q()\n"
                "  scan $a: Person\n"
                "  scan $b: Person [$b.name = \"x\"]\n"
                "  shortest $p = $a -[Knows both 1..4]-> $b: Person [length($p) > 1]\n"
                "  return path = nodes($p): [String], length = length($p): I64\n"
                "  order length($p) desc\n"
                "  reads: node Person, edge Knows\n"
                "  writes: -\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shortest_paths),
        cmocka_unit_test(scan_with_pushed_down_predicates),
        cmocka_unit_test(limit_and_offset_literals_and_parameters),
        cmocka_unit_test(arithmetic_functions_and_distinct),
        cmocka_unit_test(exists_and_count_subpatterns),
        cmocka_unit_test(optional_and_aggregate_subpatterns),
        cmocka_unit_test(deferred_binding_filters_go_into_the_expand),
        cmocka_unit_test(reverse_expand_when_destination_is_bound),
        cmocka_unit_test(cycle_closing_and_cross_join),
        cmocka_unit_test(hops_undirected_and_edge_binding),
        cmocka_unit_test(antijoins),
        cmocka_unit_test(aggregate_with_alias_ordering),
        cmocka_unit_test(search_orderings_and_projected_scores),
        cmocka_unit_test(ranks_are_typed_ir_nodes),
        cmocka_unit_test(bare_variable_and_now_in_reads),
        cmocka_unit_test(contains_overload_is_resolved),
        cmocka_unit_test(in_meta_fields_and_condition_values),
        cmocka_unit_test(mutations_with_property_ids),
        cmocka_unit_test(node_delete_writes_incident_edges),
        cmocka_unit_test(edge_delete_on_endpoint),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
