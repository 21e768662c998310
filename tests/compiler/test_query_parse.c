/*
 * test_query_parse.c — the .gq parser (query_parse.c): one test per grammar construct of
 * reference-language.md §2 (declarations, params, annotations, bindings, traversals, bounds,
 * edge bindings, filters, negation, projections, aggregates, orderings, limit, literals,
 * search calls, mutations, several queries per file), the PEG disambiguation facts, and the
 * syntax errors with their positions; nesting limits so no input can exhaust the stack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/query_ast.h"

typedef struct parsed {
    og_source src;
    og_query_file *f;
} parsed;

static parsed *P(const char *text)
{
    parsed *p = calloc(1, sizeof *p);
    assert_int_equal(og_source_init(&p->src, "t.gq", text, strlen(text)), OG_OK);
    og_diag err;
    memset(&err, 0, sizeof err);
    og_status st = og_query_parse(&p->f, &p->src, &err);
    if (st != OG_OK) fprintf(stderr, "unexpected parse error: %s\n", err.message);
    assert_int_equal(st, OG_OK);
    og_diag_free(&err);
    return p;
}

static void done(parsed *p)
{
    og_query_file_free(p->f);
    og_source_free(&p->src);
    free(p);
}

/* Expects a parse error whose message contains `needle`; returns its 1-based column. */
static uint32_t E(const char *text, const char *needle)
{
    og_source src;
    og_source_init(&src, "t.gq", text, strlen(text));
    og_query_file *f = NULL;
    og_diag err;
    memset(&err, 0, sizeof err);
    og_status st = og_query_parse(&f, &src, &err);
    if (st != OG_ERR_PARSE) fprintf(stderr, "expected a parse error for: %s\n", text);
    assert_int_equal(st, OG_ERR_PARSE);
    assert_null(f);
    if (!strstr(err.message, needle)) fprintf(stderr, "message '%s' lacks '%s'\n", err.message, needle);
    assert_non_null(strstr(err.message, needle));
    uint32_t col = err.col;
    og_diag_free(&err);
    og_source_free(&src);
    return col;
}

static const og_query *Q0(parsed *p) { return &p->f->queries[0]; }

static void decl_params_and_annotations(void **state)
{
    (void)state;
    parsed *p = P("query top($g: String, $since: Date?, $n: I64, $tags: [String], $v: Vector(3)?, $t: DateTime)\n"
                  "  @description(\"Top \\\"books\\\"\") @instruction(\"use it\")\n"
                  "{ match { $b: Book } return { $b.title } }");
    const og_query *q = Q0(p);
    assert_string_equal(q->name, "top");
    assert_int_equal(q->nparams, 6);
    assert_string_equal(q->params[0].name, "g");
    assert_int_equal(q->params[0].type.t.id, OG_T_STRING);
    assert_int_equal(q->params[1].type.t.id, OG_T_DATE32);
    assert_true(q->params[1].type.nullable);
    assert_int_equal(q->params[3].type.t.id, OG_T_LIST);
    assert_int_equal(q->params[3].type.t.elem, OG_T_STRING);
    assert_int_equal(q->params[4].type.t.id, OG_T_VECTOR);
    assert_int_equal(q->params[4].type.t.dim, 3);
    assert_true(q->params[4].type.nullable);
    assert_int_equal(q->params[5].type.t.id, OG_T_DATE64);
    assert_string_equal(q->description, "Top \"books\"");
    assert_string_equal(q->instruction, "use it");
    done(p);
}

static void binding_with_prop_matches(void **state)
{
    (void)state;
    parsed *p = P("query q($y: I32) { match { $b: Book { genre: \"essay\", year: $y, seen: now(), } } return { $b } }");
    const og_qclause *c = &Q0(p)->clauses[0];
    assert_int_equal(c->kind, OG_QC_BINDING);
    assert_string_equal(c->var, "b");
    assert_string_equal(c->type_name, "Book");
    assert_int_equal(c->nmatches, 3);
    assert_int_equal(c->matches[0].value.kind, OG_QV_LIT);
    assert_string_equal(c->matches[0].value.lit.s, "essay");
    assert_int_equal(c->matches[1].value.kind, OG_QV_VAR);
    assert_string_equal(c->matches[1].value.var, "y");
    assert_int_equal(c->matches[2].value.kind, OG_QV_NOW);
    done(p);
}

static void traversals_bounds_undirected_edge_binding(void **state)
{
    (void)state;
    parsed *p = P("query q() { match { $a: A  $a wrote $b  $c cites{1,3} $b  $b <similarTo> $o\n"
                  "  $a $w:wrote $b2  $a $_:wrote $_  $b knows{2,} $z } return { $a } }");
    const og_query *q = Q0(p);
    assert_int_equal(q->nclauses, 7);
    const og_qclause *t = &q->clauses[1];
    assert_int_equal(t->kind, OG_QC_TRAVERSAL);
    assert_string_equal(t->src, "a");
    assert_string_equal(t->edge_word, "wrote");
    assert_string_equal(t->dst, "b");
    assert_int_equal(t->min_hops, 1);
    assert_int_equal(t->max_hops, 1);
    assert_false(t->has_bounds);
    t = &q->clauses[2];
    assert_true(t->has_bounds);
    assert_int_equal(t->min_hops, 1);
    assert_int_equal(t->max_hops, 3);
    assert_true(q->clauses[3].undirected);
    assert_string_equal(q->clauses[3].edge_word, "similarTo");
    assert_string_equal(q->clauses[4].edge_var, "w");
    assert_string_equal(q->clauses[5].edge_var, "_");
    assert_string_equal(q->clauses[5].dst, "_");
    assert_false(q->clauses[6].has_max);
    assert_int_equal(q->clauses[6].min_hops, 2);
    done(p);
}

static void filters_every_operator(void **state)
{
    (void)state;
    static const og_qop ops[] = {OG_QOP_EQ, OG_QOP_NE, OG_QOP_LT, OG_QOP_LE, OG_QOP_GT, OG_QOP_GE,
                                 OG_QOP_CONTAINS, OG_QOP_STARTS_WITH};
    parsed *p = P("query q() { match { $a: A  $a.x = 1  $a.x != 2  $a.x < 3  $a.x <= 4  $a.x > 5\n"
                  "  $a.x >= 6  $a.tags contains \"t\"  $a.s starts_with \"p\" } return { $a } }");
    const og_query *q = Q0(p);
    assert_int_equal(q->nclauses, 9);
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(q->clauses[i + 1].kind, OG_QC_FILTER);
        assert_int_equal(q->clauses[i + 1].op, ops[i]);
        assert_int_equal(q->clauses[i + 1].left->kind, OG_QE_PROP);
    }
    done(p);
}

/* PEG fact: clause alternatives are tried negation, binding, traversal, filter. */
static void contains_between_variables_is_a_traversal(void **state)
{
    (void)state;
    parsed *p = P("query q() { match { $a: A  $a contains $b  $a.tags contains $b  \"lit\" contains $a.p\n"
                  "  $a starts_with $c  $x contains \"lit\" } return { $a } }");
    const og_query *q = Q0(p);
    assert_int_equal(q->clauses[1].kind, OG_QC_TRAVERSAL);
    assert_string_equal(q->clauses[1].edge_word, "contains");
    assert_int_equal(q->clauses[2].kind, OG_QC_FILTER);
    assert_int_equal(q->clauses[3].kind, OG_QC_FILTER);
    assert_int_equal(q->clauses[3].left->kind, OG_QE_LIT);
    assert_int_equal(q->clauses[4].kind, OG_QC_TRAVERSAL);
    assert_int_equal(q->clauses[5].kind, OG_QC_FILTER);
    assert_int_equal(q->clauses[5].left->kind, OG_QE_VAR);
    done(p);
}

static void less_than_vs_undirected(void **state)
{
    (void)state;
    parsed *p = P("query q() { match { $a: A  $a < $b  $a <knows> $b } return { $a } }");
    assert_int_equal(Q0(p)->clauses[1].kind, OG_QC_FILTER);
    assert_int_equal(Q0(p)->clauses[1].op, OG_QOP_LT);
    assert_int_equal(Q0(p)->clauses[2].kind, OG_QC_TRAVERSAL);
    done(p);
}

static void negation_nested(void **state)
{
    (void)state;
    parsed *p = P("query q() { match { $p: P  not { $p worksAt $c  not { $c.name = \"Acme\" } } } return { $p } }");
    const og_qclause *n = &Q0(p)->clauses[1];
    assert_int_equal(n->kind, OG_QC_NEGATION);
    assert_int_equal(n->ninner, 2);
    assert_int_equal(n->inner[1].kind, OG_QC_NEGATION);
    assert_int_equal(n->inner[1].inner[0].kind, OG_QC_FILTER);
    done(p);
}

static void not_is_not_an_edge_word(void **state)
{
    (void)state;
    E("query q() { match { $a: A  $a not $b } return { $a } }", "expected");
}

static void text_search_clauses(void **state)
{
    (void)state;
    parsed *p = P("query q($q: String) { match { $d: D  search($d.t, $q)  fuzzy($d.t, $q, 1)  fuzzy($d.t, $q)\n"
                  "  match_text($d.b, \"x\")  search($d.t, $q) = false } return { $d } }");
    const og_query *q = Q0(p);
    assert_int_equal(q->clauses[1].kind, OG_QC_TEXT);
    assert_int_equal(q->clauses[1].left->kind, OG_QE_SEARCH);
    assert_int_equal(q->clauses[2].left->kind, OG_QE_FUZZY);
    assert_non_null(q->clauses[2].left->c);
    assert_null(q->clauses[3].left->c);
    assert_int_equal(q->clauses[4].left->kind, OG_QE_MATCH_TEXT);
    assert_int_equal(q->clauses[5].kind, OG_QC_FILTER);
    done(p);
}

static void projections_aliases_optional_commas(void **state)
{
    (void)state;
    parsed *p = P("query q($k: I64) { match { $p: P } return { $p.name as n, $p\n $k now() 1 2.5 \"s\" true\n"
                  " count($p) as c sum($p.a) avg($p.a) min($p.a) max($p.a), } }");
    const og_query *q = Q0(p);
    assert_int_equal(q->nprojections, 13);
    assert_string_equal(q->projections[0].alias, "n");
    assert_int_equal(q->projections[1].expr->kind, OG_QE_VAR);
    assert_int_equal(q->projections[3].expr->kind, OG_QE_NOW);
    assert_int_equal(q->projections[4].expr->lit.kind, OG_QLIT_INT);
    assert_int_equal(q->projections[5].expr->lit.kind, OG_QLIT_FLOAT);
    assert_int_equal(q->projections[7].expr->lit.kind, OG_QLIT_BOOL);
    assert_int_equal(q->projections[8].expr->kind, OG_QE_AGG);
    assert_int_equal(q->projections[8].expr->agg, OG_QAGG_COUNT);
    assert_string_equal(q->projections[8].alias, "c");
    assert_int_equal(q->projections[12].expr->agg, OG_QAGG_MAX);
    done(p);
}

static void orderings_and_limit(void **state)
{
    (void)state;
    parsed *p = P("query q($v: Vector(2), $s: String) { match { $p: P } return { $p.a as x } order { $p.a desc, x, $p.b asc } limit 7 }"
                  "query r($v: Vector(2), $s: String) { match { $p: P } return { $p.a } order { nearest($p.e, $v) } limit 3 }"
                  "query s($v: Vector(2), $s: String) { match { $p: P } return { $p.a } order { rrf(nearest($p.e, $v), bm25($p.t, $s), 10) } limit 3 }"
                  "query t($v: Vector(2), $s: String) { match { $p: P } return { $p.a } order { bm25($p.t, $s) desc } }");
    const og_query *q = &p->f->queries[0];
    assert_int_equal(p->f->nqueries, 4);
    assert_int_equal(q->norderings, 3);
    assert_true(q->orderings[0].desc);
    assert_int_equal(q->orderings[1].expr->kind, OG_QE_ALIAS);
    assert_false(q->orderings[1].desc);
    assert_false(q->orderings[2].desc);
    assert_true(q->has_limit);
    assert_int_equal(q->limit, 7);
    assert_int_equal(p->f->queries[1].orderings[0].expr->kind, OG_QE_NEAREST);
    const og_qexpr *r = p->f->queries[2].orderings[0].expr;
    assert_int_equal(r->kind, OG_QE_RRF);
    assert_int_equal(r->a->kind, OG_QE_NEAREST);
    assert_int_equal(r->b->kind, OG_QE_BM25);
    assert_int_equal(r->c->lit.i, 10);
    assert_true(p->f->queries[3].orderings[0].desc);
    assert_false(p->f->queries[3].has_limit);
    done(p);
}

/* PEG fact: a leading nearest(...) ordering is consumed first, so a direction is an error. */
static void nearest_ordering_takes_no_direction(void **state)
{
    (void)state;
    E("query q($v: Vector(2)) { match { $p: P } return { $p.a } order { nearest($p.e, $v) desc } limit 3 }",
      "expected ',' or '}', found 'desc'");
}

static void literals(void **state)
{
    (void)state;
    parsed *p = P("query q() { match { $p: P  $p.d = date(\"2024-05-01\")  $p.t = datetime(\"2024-05-01T10:00:00Z\")\n"
                  "  $p.l contains [1, 2.5]  $p.e contains []  $p.s = \"a\\n\\t\\\\\\\"\" } return { $p } }");
    const og_query *q = Q0(p);
    const og_qlit *d = &q->clauses[1].right->lit;
    assert_int_equal(d->kind, OG_QLIT_DATE);
    assert_int_equal(d->i, 19844);
    const og_qlit *t = &q->clauses[2].right->lit;
    assert_int_equal(t->kind, OG_QLIT_DATETIME);
    assert_int_equal(t->i, 1714557600000LL);
    const og_qlit *l = &q->clauses[3].right->lit;
    assert_int_equal(l->kind, OG_QLIT_LIST);
    assert_int_equal(l->nitems, 2);
    assert_int_equal(l->items[1].kind, OG_QLIT_FLOAT);
    assert_int_equal(q->clauses[4].right->lit.nitems, 0);
    assert_string_equal(q->clauses[5].right->lit.s, "a\n\t\\\"");
    done(p);
}

static void date_parsing(void **state)
{
    (void)state;
    int32_t d;
    int64_t ms;
    assert_int_equal(og_query_parse_date("1970-01-01", 10, &d), 0);
    assert_int_equal(d, 0);
    assert_int_equal(og_query_parse_date("2000-02-29", 10, &d), 0);
    assert_int_equal(d, 11016);
    assert_int_equal(og_query_parse_date("1969-12-31", 10, &d), 0);
    assert_int_equal(d, -1);
    assert_int_equal(og_query_parse_date("2023-02-29", 10, &d), -1);
    assert_int_equal(og_query_parse_date("2023-13-01", 10, &d), -1);
    assert_int_equal(og_query_parse_date("2023-1-01", 9, &d), -1);
    assert_int_equal(og_query_parse_datetime("2024-05-01T10:00:00.5Z", 22, &ms), 0);
    assert_int_equal(ms, 1714557600500LL);
    assert_int_equal(og_query_parse_datetime("2024-05-01 12:00:00+02:00", 25, &ms), 0);
    assert_int_equal(ms, 1714557600000LL);
    assert_int_equal(og_query_parse_datetime("2024-05-01", 10, &ms), 0);
    assert_int_equal(og_query_parse_datetime("2024-05-01T25:00:00Z", 20, &ms), -1);
    assert_int_equal(og_query_parse_datetime("2024-05-01T10:00:00Zx", 21, &ms), -1);
}

static void mutations(void **state)
{
    (void)state;
    parsed *p = P("query add($i: String, $t: String) {\n"
                  "  insert Book { isbn: $i, title: $t genre: \"essay\" }\n"
                  "  insert Wrote { from: $i, to: $t, at: now() }\n"
                  "  update Book set { title: $t } where isbn = $i\n"
                  "}\n"
                  "query drop($y: I32) { delete Book where year < $y }");
    const og_query *q = Q0(p);
    assert_true(q->is_mutation);
    assert_int_equal(q->nmutations, 3);
    assert_int_equal(q->mutations[0].kind, OG_QM_INSERT);
    assert_string_equal(q->mutations[0].type_name, "Book");
    assert_int_equal(q->mutations[0].nassigns, 3);
    assert_int_equal(q->mutations[1].assigns[2].value.kind, OG_QV_NOW);
    assert_int_equal(q->mutations[2].kind, OG_QM_UPDATE);
    assert_string_equal(q->mutations[2].where.prop, "isbn");
    assert_int_equal(q->mutations[2].where_op, OG_QOP_EQ);
    const og_query *d = &p->f->queries[1];
    assert_int_equal(d->mutations[0].kind, OG_QM_DELETE);
    assert_int_equal(d->mutations[0].where_op, OG_QOP_LT);
    assert_non_null(og_query_find(p->f, "drop"));
    assert_null(og_query_find(p->f, "nope"));
    done(p);
}

static void several_queries_first_wins(void **state)
{
    (void)state;
    parsed *p = P("// c\nquery a() { match { $p: P } return { $p } } /* c */ query a() { match { $q: Q } return { $q } }");
    assert_int_equal(p->f->nqueries, 2);
    assert_ptr_equal(og_query_find(p->f, "a"), &p->f->queries[0]);
    assert_int_equal(og_query_find_index(p->f, "a"), 0);
    assert_int_equal(og_query_find_index(p->f, "b"), -1);
    done(p);
    p = P("  // only comments\n");
    assert_int_equal(p->f->nqueries, 0);
    done(p);
}

static void keywords_as_identifiers(void **state)
{
    (void)state;
    /* ident positions accept keyword spellings: properties, aliases, edge words */
    parsed *p = P("query q() { match { $p: P { type: 1, from: 2 }  $p match $x  $p.order = 3 } return { $p.limit as count, $x.as } }");
    const og_query *q = Q0(p);
    assert_string_equal(q->clauses[0].matches[0].prop, "type");
    assert_string_equal(q->clauses[1].edge_word, "match");
    assert_string_equal(q->projections[0].alias, "count");
    done(p);
}

static void syntax_errors(void **state)
{
    (void)state;
    /* `$d: Doc { }` is accepted (no property filter; the reference's hybrid-search guide writes
     * it), a lone property name is not */
    parsed *ok = P("query q() { match { $d: Doc { } } return { $d } }");
    assert_int_equal(Q0(ok)->clauses[0].nmatches, 0);
    done(ok);
    assert_int_equal(E("query q() { match { $d: Doc { slug } } return { $d } }", "expected ':'"), 36);
    E("query q() { match { $p: P } return { } }", "expected expression");
    E("query q() { match { } return { $p } }", "expected");
    E("query q() { insert T { } }", "expected property name");
    E("query q() { match { $p: P } return { $p } insert T { a: 1 } }", "expected");
    E("query q() { delete T where a is nul }", "expected 'null'");
    E("query q() { delete T where a in }", "expected");
    E("query q() @description(\"a\") @description(\"b\") { match { $p: P } return { $p } }", "duplicate @description");
    E("query q() @instruction(\"a\") @instruction(\"b\") { match { $p: P } return { $p } }", "duplicate @instruction");
    E("query q() @version(\"a\") { match { $p: P } return { $p } }", "unsupported query annotation");
    E("query q() { match { $p: P  $p.a = \"\\q\" } return { $p } }", "unsupported escape sequence");
    E("query q() { match { $p: P  $p.a = 99999999999999999999 } return { $p } }", "invalid integer");
    E("query q() { match { $p: P } return { $p } limit 99999999999999999999999 }", "invalid limit");
    E("query q() { match { $p: P  $p k{99999999999,2} $x } return { $p } }", "invalid traversal min bound");
    E("query q() { match { $p: P  $p.d = date(\"2024-02-30\") } return { $p } }", "invalid Date literal");
    E("query q() { match { $p: P  $p.d = datetime(\"yesterday\") } return { $p } }", "invalid DateTime literal");
    E("query q($x: Person) { match { $p: P } return { $p } }", "unknown parameter type `Person`");
    E("query q($x: Vector(0)) { match { $p: P } return { $p } }", "Vector dimension");
    E("query q($x: [Vector(3)]) { match { $p: P } return { $p } }", "expected list item type");
    E("query q($x: [Blob]) { match { $p: P } return { $p } }", "[Blob]");
    E("query q() { match { $p: P } return { rrf($p.a, $p.b) } limit 2 }", "rrf() rank expression");
    E("query q($s: String) { match { $p: P  search($p.a) } return { $p } }", "expected ','");
    E("query q($s: String) { match { $p: P  search($p.a, $s, 1) } return { $p } }", "expected ')'");
    E("query q($s: String) { match { $p: P  fuzzy($p.a, $s, 1, 2) } return { $p } }", "expected ')'");
    E("query q() { match { $p: person } return { $p } }", "expected type name");
    E("query Q() { match { $p: P } return { $p } }", "expected query name");
    E("query q() { match { $p: P } return { $p } } query", "expected query name");
    E("# comment\n", "unexpected character");
    E("query q() { match { $p: P  $p.x == 1 } return { $p } }", "expected");
    E("query q() { match { $p: P  $p.x = - } return { $p } }", "expected"); /* `-1` is a literal now */
    E("query q() { match { $p: P { x: -1 } } return { $p } }", "expected");  /* not in an inline match */
    E("query q() { match { $p: P } return { $p } order { } }", "expected expression");
    E("query q() { match { $p: P } return { $p } order { $p.a, } }", "expected expression");
    E("query q() { match { $p: P  $p.l contains [$x] } return { $p } }", "expected literal");
    E("select * from t", "expected 'query'");
}

static void nesting_limit_is_an_error_not_a_crash(void **state)
{
    (void)state;
    char buf[4096];
    /* nested list literal */
    size_t n = (size_t)snprintf(buf, sizeof buf, "query q() { match { $p: P  $p.a contains ");
    for (int i = 0; i < 200; i++) buf[n++] = '[';
    buf[n] = 0;
    E(buf, "nesting deeper than");
    /* nested negation */
    n = (size_t)snprintf(buf, sizeof buf, "query q() { match { $p: P ");
    for (int i = 0; i < 100; i++) n += (size_t)snprintf(buf + n, sizeof buf - n, "not { ");
    E(buf, "nesting deeper than");
    /* nested calls */
    n = (size_t)snprintf(buf, sizeof buf, "query q() { match { $p: P } return { ");
    for (int i = 0; i < 100; i++) n += (size_t)snprintf(buf + n, sizeof buf - n, "count(");
    E(buf, "nesting deeper than");
}

static void size_limits_are_errors(void **state)
{
    (void)state;
    size_t cap = 200000, n;
    char *buf = malloc(cap);
    n = (size_t)snprintf(buf, cap, "query q(");
    for (int i = 0; i < 5000; i++) n += (size_t)snprintf(buf + n, cap - n, "%s$p%d: I32", i ? ",\n" : "", i);
    snprintf(buf + n, cap - n, ") { match { $p: P } return { $p } }");
    E(buf, "too many items in one list");
    n = (size_t)snprintf(buf, cap, "query q() { match { $p: P ");
    for (int b = 0; b < 2; b++) {
        n += (size_t)snprintf(buf + n, cap - n, "not { ");
        for (int i = 0; i < 2500; i++) n += (size_t)snprintf(buf + n, cap - n, "$p.a = %d\n", i);
        n += (size_t)snprintf(buf + n, cap - n, "} ");
    }
    snprintf(buf + n, cap - n, "} return { $p } }");
    E(buf, "more than 4096 match clauses");
    free(buf);
}

static void spans_cover_nodes(void **state)
{
    (void)state;
    const char *text = "query q() { match { $p: Person { name: \"x\" } } return { $p.name as n } }";
    parsed *p = P(text);
    const og_query *q = Q0(p);
    const og_qclause *c = &q->clauses[0];
    assert_int_equal(c->span.start, strstr(text, "$p:") - text);
    assert_int_equal(c->span.end, strstr(text, "} }") - text + 1);
    assert_int_equal(c->type_span.start, strstr(text, "Person") - text);
    const og_qprojection *pr = &q->projections[0];
    assert_int_equal(pr->expr->span.start, strstr(text, "$p.name") - text);
    assert_int_equal(pr->expr->span.end, strstr(text, " as") - text);
    assert_int_equal(q->span.start, 0);
    assert_int_equal(q->span.end, strlen(text));
    done(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decl_params_and_annotations),
        cmocka_unit_test(binding_with_prop_matches),
        cmocka_unit_test(traversals_bounds_undirected_edge_binding),
        cmocka_unit_test(filters_every_operator),
        cmocka_unit_test(contains_between_variables_is_a_traversal),
        cmocka_unit_test(less_than_vs_undirected),
        cmocka_unit_test(negation_nested),
        cmocka_unit_test(not_is_not_an_edge_word),
        cmocka_unit_test(text_search_clauses),
        cmocka_unit_test(projections_aliases_optional_commas),
        cmocka_unit_test(orderings_and_limit),
        cmocka_unit_test(nearest_ordering_takes_no_direction),
        cmocka_unit_test(literals),
        cmocka_unit_test(date_parsing),
        cmocka_unit_test(mutations),
        cmocka_unit_test(several_queries_first_wins),
        cmocka_unit_test(keywords_as_identifiers),
        cmocka_unit_test(syntax_errors),
        cmocka_unit_test(nesting_limit_is_an_error_not_a_crash),
        cmocka_unit_test(size_limits_are_errors),
        cmocka_unit_test(spans_cover_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
