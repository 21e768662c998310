/*
 * test_schema.c — the schema language's constructs (reference-language.md §1): every type,
 * constraint and annotation form, interface expansion, index intents, canonical identities,
 * the canonical key id, the JSON schema object round trip, and the cookbook schema.
 * (Error cases are in test_schema_errors.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/catalog.h"
#include "compiler/schema.h"
#include "../og_test_data.h"

static og_catalog *compile_ok(const char *text)
{
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&cat, "t.pg", text, strlen(text), &d);
    if (st != OG_OK) {
        og_buf b = OG_BUF_INIT;
        for (size_t i = 0; i < d.len; i++) og_diag_format(&b, &d.v[i]);
        fprintf(stderr, "unexpected errors:\n%s", og_buf_cstr(&b));
        og_buf_free(&b);
    }
    assert_int_equal(st, OG_OK);
    assert_non_null(cat);
    og_diags_free(&d);
    return cat;
}

static const char *spec_example =
    "interface Titled { title: String @index }\n"
    "node Author { handle: String @key  born: Date?  bio: String? }\n"
    "node Book implements Titled {\n"
    "    isbn: String @key\n"
    "    year: I32?\n"
    "    tags: [String]?\n"
    "    genre: enum(fiction, essay, poetry)\n"
    "    blurb: String?\n"
    "    vec: Vector(8)? @embed(\"blurb\") @index\n"
    "    cover: Blob?\n"
    "    @range(year, 1450..2100)\n"
    "    @check(isbn, \"^[0-9-]{10,17}$\")\n"
    "}\n"
    "edge Wrote: Author -> Book @card(0..) { role: String? }\n"
    "edge Cites: Book -> Book @card(0..50) { @unique(src, dst) }\n"
    "edge SimilarTo: Book -> Book                       // no body\n";

static void spec_example_builds_the_catalog(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(spec_example);
    assert_int_equal(cat->ninterfaces, 1);
    assert_int_equal(cat->nnodes, 2);
    assert_int_equal(cat->nedges, 3);
    const og_cat_type *book = og_catalog_node(cat, "Book");
    assert_non_null(book);
    assert_int_equal(book->nprops, 8); /* 7 own + title from Titled */
    assert_string_equal(book->props[7].name, "title");
    assert_string_equal(book->props[7].interface, "Titled");
    assert_int_equal(book->props[7].index, OG_INDEX_INVERTED);
    assert_true(og_cat_type_implements(book, "Titled"));
    assert_false(og_cat_type_implements(book, "Other"));
    const og_cat_prop *genre = og_cat_type_prop(book, "genre", NULL);
    assert_true(genre->is_enum);
    assert_int_equal(genre->n_enum, 3);
    assert_string_equal(genre->enum_values[0], "essay");
    assert_string_equal(genre->enum_values[1], "fiction");
    assert_string_equal(genre->enum_values[2], "poetry");
    assert_true(og_cat_prop_enum_has(genre, "poetry", 6));
    assert_false(og_cat_prop_enum_has(genre, "poem", 4));
    const og_cat_prop *vec = og_cat_type_prop(book, "vec", NULL);
    assert_int_equal(vec->type.id, OG_T_VECTOR);
    assert_int_equal(vec->type.dim, 8);
    assert_true(vec->nullable);
    assert_string_equal(vec->embed_source, "blurb");
    assert_null(vec->embed_model);
    assert_int_equal(vec->index, OG_INDEX_VECTOR);
    assert_int_equal(vec->n_annots, 0); /* known annotations become fields */
    const og_cat_prop *tags = og_cat_type_prop(book, "tags", NULL);
    assert_int_equal(tags->type.id, OG_T_LIST);
    assert_int_equal(tags->type.elem, OG_T_STRING);
    assert_int_equal(og_cat_type_prop(book, "cover", NULL)->type.id, OG_T_BLOB);
    assert_int_equal(book->nkey, 1);
    assert_string_equal(book->props[book->key_props[0]].name, "isbn");
    assert_true(og_cat_type_prop(book, "isbn", NULL)->is_key);
    /* constraints: range, check (body), then desugared key(isbn), index(vec), index(title) */
    const og_cat_constraint *range = NULL, *check = NULL;
    for (size_t i = 0; i < book->ncons; i++) {
        if (book->cons[i].kind == OG_CONS_RANGE) range = &book->cons[i];
        if (book->cons[i].kind == OG_CONS_CHECK) check = &book->cons[i];
    }
    assert_int_equal(book->ncons, 5);
    assert_non_null(range);
    assert_true(range->min.present && range->max.present);
    assert_int_equal(range->min.i, 1450);
    assert_int_equal(range->max.i, 2100);
    assert_false(range->min.is_float);
    assert_string_equal(book->props[range->col_props[0]].name, "year");
    assert_non_null(check);
    assert_int_equal(og_check_match(check, "978-3-16-148410-0", 17), 1);
    assert_int_equal(og_check_match(check, "abc", 3), 0);
    assert_non_null(og_cat_type_key(book));
    const og_cat_type *wrote = og_catalog_edge(cat, "Wrote");
    assert_string_equal(cat->nodes[wrote->from_node].name, "Author");
    assert_string_equal(cat->nodes[wrote->to_node].name, "Book");
    assert_int_equal(wrote->card_min, 0);
    assert_int_equal(wrote->card_max, OG_CARD_UNBOUNDED);
    const og_cat_type *cites = og_catalog_edge(cat, "Cites");
    assert_int_equal(cites->card_max, 50);
    assert_int_equal(cites->ncons, 1);
    assert_int_equal(cites->cons[0].kind, OG_CONS_UNIQUE);
    assert_int_equal(cites->cons[0].col_props[0], OG_COL_SRC);
    assert_int_equal(cites->cons[0].col_props[1], OG_COL_DST);
    const og_cat_type *sim = og_catalog_edge(cat, "SimilarTo");
    assert_int_equal(sim->nprops, 0);
    assert_false(sim->card_written);
    assert_int_equal(sim->card_max, OG_CARD_UNBOUNDED);
    size_t at[4];
    assert_int_equal(og_catalog_edges_at(cat, (size_t)(book - cat->nodes), 0, at, 4), 2);
    assert_int_equal(og_catalog_edges_at(cat, (size_t)(book - cat->nodes), 1, at, 4), 3);
    assert_non_null(cat->source);
    og_catalog_free(cat);
}

static void every_type_maps_to_a_storage_type(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "node T { a: String b: Bool c: I32 d: I64 e: U32 f: U64 g: F32 h: F64 i: Date j: DateTime k: Blob\n"
        " l: Vector(3) m: [I64] n: [String]? o: enum(x)? p: I32? q: Vector(2147483647) r: [Date] s: [Bool] }");
    const og_cat_type *t = og_catalog_node(cat, "T");
    og_type_id want[] = {OG_T_STRING, OG_T_BOOL, OG_T_I32, OG_T_I64, OG_T_U32, OG_T_U64, OG_T_F32, OG_T_F64, OG_T_DATE32,
                         OG_T_DATE64, OG_T_BLOB, OG_T_VECTOR, OG_T_LIST, OG_T_LIST, OG_T_STRING, OG_T_I32, OG_T_VECTOR,
                         OG_T_LIST, OG_T_LIST};
    assert_int_equal(t->nprops, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < t->nprops; i++) assert_int_equal(t->props[i].type.id, want[i]);
    assert_int_equal(t->props[12].type.elem, OG_T_I64);
    assert_false(t->props[12].nullable);
    assert_true(t->props[13].nullable);
    assert_true(t->props[14].is_enum && t->props[14].nullable);
    assert_int_equal(t->props[16].type.dim, 2147483647u);
    char buf[64];
    assert_string_equal(og_cat_prop_type_name(&t->props[13], buf, sizeof buf), "[String]?");
    assert_string_equal(og_cat_prop_type_name(&t->props[14], buf, sizeof buf), "enum(x)?");
    assert_string_equal(og_cat_prop_type_name(&t->props[11], buf, sizeof buf), "Vector(3)");
    assert_string_equal(og_cat_prop_type_name(&t->props[9], buf, sizeof buf), "DateTime");
    og_catalog_free(cat);
}

static void enum_values_are_unquoted_words(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok("node T { e: enum(data-eng, video_channel, 3d, Big, -x, a-1-b) }");
    const og_cat_prop *e = &og_catalog_node(cat, "T")->props[0];
    assert_int_equal(e->n_enum, 6);
    /* sorted by byte order */
    assert_string_equal(e->enum_values[0], "-x");
    assert_string_equal(e->enum_values[1], "3d");
    assert_string_equal(e->enum_values[2], "Big");
    assert_string_equal(e->enum_values[3], "a-1-b");
    assert_string_equal(e->enum_values[4], "data-eng");
    assert_string_equal(e->enum_values[5], "video_channel");
    og_catalog_free(cat);
}

static void constraints_in_body_and_property_form(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "node P {\n"
        "  @key(last, first)\n"
        "  first: String\n"
        "  last: String\n"
        "  email: String? @unique\n"
        "  age: I32? @index\n"
        "  score: F64?\n"
        "  code: String?\n"
        "  @unique(first, email)\n"
        "  @index(last, age)\n"
        "  @range(age, 0..)\n"
        "  @range(score, -1.5..2)\n"
        "  @range(age, ..200)\n"
        "  @check(code, \"[A-Z]+\")\n"
        "}\n"
        "edge Knows: P -> P { since: Date? @index weight: F32? @unique @index(src) @unique(src, since) }\n");
    const og_cat_type *p = og_catalog_node(cat, "P");
    assert_int_equal(p->ncons, 9);
    assert_int_equal(p->cons[0].kind, OG_CONS_KEY);
    assert_int_equal(p->cons[0].ncols, 2);
    assert_string_equal(p->cons[0].cols[0], "last"); /* as written */
    assert_int_equal(p->nkey, 2);
    /* key order = stable property id = alphabetical at creation: first < last */
    assert_string_equal(p->props[p->key_props[0]].name, "first");
    assert_string_equal(p->props[p->key_props[1]].name, "last");
    const og_cat_constraint *r1 = &p->cons[3], *r2 = &p->cons[4], *r3 = &p->cons[5];
    assert_int_equal(r1->kind, OG_CONS_RANGE);
    assert_true(r1->min.present);
    assert_false(r1->max.present);
    assert_true(r2->min.is_float);
    assert_true(r2->min.f == -1.5);
    assert_string_equal(r2->min.text, "-1.5");
    assert_int_equal(r2->max.i, 2);
    assert_false(r3->min.present);
    assert_int_equal(r3->max.i, 200);
    assert_int_equal(p->cons[6].kind, OG_CONS_CHECK);
    assert_int_equal(og_check_match(&p->cons[6], "xxABxx", 6), 1); /* unanchored */
    assert_true(p->cons[7].from_property); /* email @unique */
    assert_int_equal(p->cons[7].kind, OG_CONS_UNIQUE);
    assert_int_equal(og_cat_type_prop(p, "age", NULL)->index, OG_INDEX_BTREE);
    assert_int_equal(og_cat_type_prop(p, "last", NULL)->index, OG_INDEX_NONE); /* composite key/index: no single intent */
    assert_int_equal(og_cat_type_prop(p, "email", NULL)->index, OG_INDEX_NONE); /* unique is not an index intent */
    const og_cat_type *k = og_catalog_edge(cat, "Knows");
    assert_int_equal(k->ncons, 4);
    assert_int_equal(og_cat_type_prop(k, "since", NULL)->index, OG_INDEX_BTREE);
    og_catalog_free(cat);
}

static void index_intents_per_property_type(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "node T { s: String @index e: enum(a, b) @index b: Bool @index i: I64 @index u: U32 @index f: F32 @index\n"
        " d: Date @index t: DateTime @index v: Vector(4) @index l: [String] k: String @key }");
    const og_cat_type *t = og_catalog_node(cat, "T");
    og_index_kind want[] = {OG_INDEX_INVERTED, OG_INDEX_BTREE, OG_INDEX_BTREE, OG_INDEX_BTREE, OG_INDEX_BTREE, OG_INDEX_BTREE,
                            OG_INDEX_BTREE, OG_INDEX_BTREE, OG_INDEX_VECTOR, OG_INDEX_NONE, OG_INDEX_INVERTED};
    for (size_t i = 0; i < t->nprops; i++) assert_int_equal(t->props[i].index, want[i]);
    assert_string_equal(og_index_kind_name(OG_INDEX_INVERTED), "inverted");
    og_catalog_free(cat);
}

static void known_annotations_become_fields(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "node Doc @description(\"a document\") @instruction(\"cite it\") {\n"
        "  body: String @description(\"text\")\n"
        "  v: Vector(2) @embed(body, model = \"m-1\")\n"
        "}\n"
        "edge Links: Doc -> Doc @card(1..3) @description(\"links\")\n");
    const og_cat_type *d = og_catalog_node(cat, "Doc");
    assert_string_equal(d->description, "a document");
    assert_string_equal(d->instruction, "cite it");
    assert_int_equal(d->n_annots, 0);
    const og_cat_prop *body = &d->props[0];
    assert_string_equal(body->description, "text");
    assert_int_equal(body->n_annots, 0);
    assert_string_equal(d->props[1].embed_source, "body");
    assert_string_equal(d->props[1].embed_model, "m-1");
    const og_cat_type *l = og_catalog_edge(cat, "Links");
    assert_int_equal(l->card_min, 1);
    assert_int_equal(l->card_max, 3);
    assert_string_equal(l->description, "links");
    assert_int_equal(l->n_annots, 0);
    og_catalog_free(cat);
}

static void rename_from_is_inert_at_creation_with_a_warning(void **state)
{
    (void)state;
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    const char *t = "node New @rename_from(\"Old\") { x: I32 @rename_from(\"y\") }";
    assert_int_equal(og_schema_compile(&cat, "t.pg", t, strlen(t), &d), OG_OK);
    assert_string_equal(cat->nodes[0].rename_from, "Old");
    assert_string_equal(cat->nodes[0].props[0].rename_from, "y");
    assert_int_equal(d.len, 2);
    assert_true(d.v[0].warning && d.v[1].warning);
    assert_non_null(strstr(d.v[0].message, "inert"));
    assert_non_null(strstr(d.v[1].message, "property New.x is inert"));
    assert_int_equal(og_diags_errors(&d), 0);
    og_diags_free(&d);
    og_catalog_free(cat);
}

/* `id`, `src` and `dst` are ordinary property names; in a constraint `@src` is the endpoint and
 * a bare `src` the property when the edge has one (the endpoint otherwise), through JSON too. */
static void id_src_dst_are_property_names_and_at_src_stays_the_endpoint(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok("node D { id: String @key }\n"
                                 "edge R: D -> D @key(@src, @dst) { src: String?  id: I32?  @unique(src, @dst) }\n"
                                 "edge S: D -> D { w: I32?  @unique(src, dst) }\n");
    const og_cat_type *r = og_catalog_edge(cat, "R"), *s = og_catalog_edge(cat, "S");
    assert_non_null(r);
    assert_non_null(s);
    int seen_key = 0, seen_unique = 0;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < r->ncons; i++) {
            const og_cat_constraint *c = &r->cons[i];
            if (c->kind == OG_CONS_KEY) {
                seen_key = 1;
                assert_int_equal(c->col_props[0], OG_COL_SRC);
                assert_int_equal(c->col_props[1], OG_COL_DST);
                assert_string_equal(c->cols[0], "@src"); /* spelled with @: R has a property src */
                assert_string_equal(c->cols[1], "dst");
            } else if (c->kind == OG_CONS_UNIQUE) {
                seen_unique = 1;
                assert_true(c->col_props[0] >= 0);
                assert_string_equal(r->props[c->col_props[0]].name, "src");
                assert_int_equal(c->col_props[1], OG_COL_DST);
            }
        }
        for (size_t i = 0; i < s->ncons; i++)
            if (s->cons[i].kind == OG_CONS_UNIQUE) {
                assert_int_equal(s->cons[i].col_props[0], OG_COL_SRC);
                assert_int_equal(s->cons[i].col_props[1], OG_COL_DST);
                assert_string_equal(s->cons[i].cols[0], "src"); /* as catalogs always spelled it */
            }
        if (round) break;
        /* the same after a JSON round trip */
        og_buf b = OG_BUF_INIT;
        assert_int_equal(og_catalog_to_json(&b, cat), OG_OK);
        og_catalog_free(cat);
        cat = NULL;
        assert_int_equal(og_catalog_from_json(&cat, og_buf_cstr(&b), b.len), OG_OK);
        og_buf_free(&b);
        r = og_catalog_edge(cat, "R");
        s = og_catalog_edge(cat, "S");
    }
    assert_true(seen_key && seen_unique);
    og_catalog_free(cat);
}

static void comments_order_and_namespaces(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "/* block\n comment */ edge Same: A -> B // edges may precede their endpoints\n"
        "node B { /* inside */ x: I32 // trailing\n }\n"
        "node A {}\n"
        "node Same { y: I32 }\n" /* node and edge namespaces are separate */
        "interface I {}\n");
    assert_non_null(og_catalog_node(cat, "Same"));
    assert_non_null(og_catalog_edge(cat, "Same"));
    assert_null(og_catalog_edge(cat, "same"));
    assert_non_null(og_catalog_edge_ci(cat, "same", 4));
    assert_non_null(og_catalog_edge_ci(cat, "SAME", 4));
    assert_null(og_catalog_edge_ci(cat, "sam", 3));
    assert_null(og_catalog_node(cat, "I")); /* interfaces are not node types */
    assert_non_null(og_catalog_interface(cat, "I"));
    og_catalog_free(cat);
}

static void interface_properties_carry_their_constraints(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "interface Keyed { slug: String @key }\n"
        "interface Named { name: String @index  slug: String }\n"
        "node A implements Keyed, Named { extra: I32? }\n"
        "node B implements Named { name: String @unique }\n");
    const og_cat_type *a = og_catalog_node(cat, "A");
    assert_int_equal(a->nprops, 3);
    assert_int_equal(a->nkey, 1);
    assert_string_equal(a->props[a->key_props[0]].name, "slug");
    assert_string_equal(og_cat_type_prop(a, "slug", NULL)->interface, "Keyed");
    assert_string_equal(og_cat_type_prop(a, "name", NULL)->interface, "Named");
    const og_cat_type *b = og_catalog_node(cat, "B");
    /* B declares name itself (same type): not injected, so B has no @index on name */
    assert_null(og_cat_type_prop(b, "name", NULL)->interface);
    assert_int_equal(og_cat_type_prop(b, "name", NULL)->index, OG_INDEX_NONE);
    assert_int_equal(b->ncons, 1);
    og_catalog_free(cat);
}

static void identities_are_canonical(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "edge E: B -> A { w: I32? }\n"
        "node B { z: I32 a: I32 }\n"
        "node A { y: I32 }\n"
        "interface Z { q: I32 }\n");
    /* types in (kind, name) order: interface Z, node A, node B, edge E */
    assert_int_equal(og_catalog_interface(cat, "Z")->id, 1);
    const og_cat_type *a = og_catalog_node(cat, "A"), *b = og_catalog_node(cat, "B"), *e = og_catalog_edge(cat, "E");
    assert_int_equal(a->id, 2);
    assert_int_equal(b->id, 3);
    assert_int_equal(e->id, 4);
    /* properties in (owner id, name) order: Z.q, A.y, B.a, B.z, E.w */
    assert_int_equal(og_catalog_interface(cat, "Z")->props[0].id, 5);
    assert_int_equal(a->props[0].id, 6);
    assert_int_equal(og_cat_type_prop(b, "a", NULL)->id, 7);
    assert_int_equal(og_cat_type_prop(b, "z", NULL)->id, 8);
    assert_int_equal(e->props[0].id, 9);
    /* incarnations in type-id order */
    assert_int_equal(a->incarnation, 10);
    assert_int_equal(b->incarnation, 11);
    assert_int_equal(e->incarnation, 12);
    assert_int_equal(cat->next_id, 13);
    char dir[64];
    assert_string_equal(og_cat_type_table_dir(b, dir, sizeof dir), "node_3_11.lance");
    assert_ptr_equal(og_catalog_type_by_id(cat, 4), e);
    size_t ix = 9;
    assert_ptr_equal(og_cat_type_prop_by_id(b, 8, &ix), og_cat_type_prop(b, "z", NULL));
    assert_int_equal(ix, 0);
    assert_null(og_cat_type_prop_by_id(b, 6, NULL));
    assert_null(og_catalog_type_by_id(cat, 99));
    og_catalog_free(cat);
}

static void key_id(const og_cat_type *t, const og_key_value *v, size_t n, const char *want)
{
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_key_id(&b, t, v, n), OG_OK);
    assert_string_equal(og_buf_cstr(&b), want);
    og_buf_free(&b);
}

static void canonical_key_ids(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok(
        "node Book { @key(title, author) title: String author: String }\n"
        "node S { s: String @key }\n"
        "node I { i: I64 @key }\n"
        "node U { u: U64 @key }\n"
        "node F { f: F64 @key }\n"
        "node G { g: F32 @key }\n"
        "node B { b: Bool @key }\n"
        "node D { d: Date @key }\n"
        "node T { t: DateTime @key }\n"
        "node M { z: I32 a: Bool q: String @key(z, a, q) }\n");
    const og_cat_type *book = og_catalog_node(cat, "Book");
    /* stable ids: author < title (alphabetical at creation), so author comes first */
    assert_string_equal(book->props[book->key_props[0]].name, "author");
    og_key_value v2[2] = {{.s = "le guin", .len = 7}, {.s = "Lathe", .len = 5}};
    key_id(book, v2, 2, "[\"le guin\",\"Lathe\"]");
    og_key_value q[2] = {{.s = "a\"b\\c\n", .len = 6}, {.s = "x", .len = 1}};
    key_id(book, q, 2, "[\"a\\\"b\\\\c\\n\",\"x\"]");
    og_key_value s = {.s = "hello \"w\"", .len = 9};
    key_id(og_catalog_node(cat, "S"), &s, 1, "hello \"w\""); /* single keys are verbatim */
    og_key_value i = {.i = -42};
    key_id(og_catalog_node(cat, "I"), &i, 1, "-42");
    og_key_value u = {.u = UINT64_MAX};
    key_id(og_catalog_node(cat, "U"), &u, 1, "18446744073709551615");
    struct { double f; const char *want; } fs[] = {{1.0, "1"},       {0.1, "0.1"},     {-0.0, "0"},
                                                    {1e21, "1000000000000000000000"},    {1.5e-7, "0.00000015"},
                                                    {-2.5, "-2.5"},  {123.456, "123.456"}, {5e-324, NULL}};
    for (size_t k = 0; fs[k].want; k++) {
        og_key_value f = {.f = fs[k].f};
        key_id(og_catalog_node(cat, "F"), &f, 1, fs[k].want);
    }
    og_key_value g = {.f = (double)0.1f};
    key_id(og_catalog_node(cat, "G"), &g, 1, "0.1"); /* shortest form at F32 precision */
    og_key_value b = {.b = 1};
    key_id(og_catalog_node(cat, "B"), &b, 1, "true");
    og_key_value d = {.i = 19844};
    key_id(og_catalog_node(cat, "D"), &d, 1, "19844");
    og_key_value t = {.i = 1714557600000};
    key_id(og_catalog_node(cat, "T"), &t, 1, "1714557600000");
    const og_cat_type *m = og_catalog_node(cat, "M");
    /* ids: z, a, q allocated alphabetically: a < q < z */
    og_key_value mv[3] = {{.b = 0}, {.s = "k", .len = 1}, {.i = 7}};
    key_id(m, mv, 3, "[\"false\",\"k\",\"7\"]");
    og_buf e = OG_BUF_INIT;
    og_key_value nan = {.f = 0.0 / 0.0};
    assert_int_equal(og_key_id(&e, og_catalog_node(cat, "F"), &nan, 1), OG_ERR_CONSTRAINT);
    assert_int_equal(og_key_id(&e, m, mv, 2), OG_ERR_INVALID);
    og_buf_free(&e);
    og_catalog_free(cat);
}

static void round_trip(const char *text)
{
    og_catalog *cat = compile_ok(text);
    og_buf a = OG_BUF_INIT, b = OG_BUF_INIT;
    assert_int_equal(og_catalog_to_json(&a, cat), OG_OK);
    og_catalog *back = NULL;
    assert_int_equal(og_catalog_from_json(&back, (const char *)a.data, a.len), OG_OK);
    assert_int_equal(og_catalog_to_json(&b, back), OG_OK);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    /* the loaded catalog is usable: lookups, key order, regexes */
    for (size_t i = 0; i < cat->nnodes; i++) {
        const og_cat_type *x = &cat->nodes[i], *y = og_catalog_node(back, x->name);
        assert_non_null(y);
        assert_int_equal(x->nkey, y->nkey);
        for (size_t k = 0; k < x->nkey; k++) assert_int_equal(x->key_props[k], y->key_props[k]);
        for (size_t c = 0; c < x->ncons; c++)
            if (x->cons[c].kind == OG_CONS_CHECK) assert_non_null(y->cons[c].regex);
    }
    for (size_t i = 0; i < cat->nedges; i++) {
        assert_int_equal(cat->edges[i].from_node, back->edges[i].from_node);
        assert_int_equal(cat->edges[i].to_node, back->edges[i].to_node);
    }
    og_catalog_free(back);
    og_catalog_free(cat);
    og_buf_free(&a);
    og_buf_free(&b);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

#define COOKBOOK OG_SHARED_DIR "/data/cookbook-industry-intel"
static int have_cookbook;

static void json_round_trip_is_byte_stable(void **state)
{
    (void)state;
    round_trip(spec_example);
    round_trip("node Doc @description(\"a \\\"doc\\\"\\n\") { body: String @description(\"z\") v: Vector(2)? @embed(body, model = \"m\")\n"
               " e: enum(b, a)? @index n: F64? @range(n, -1.5..) @check(body, \"^\\\\w+$\") }\n"
               "edge L: Doc -> Doc @card(1..) @instruction(\"i\") { w: I32? @index @unique(src, w) }\n");
    char *lib = read_file(OG_SOURCE_DIR "/examples/library/schema.pg");
    round_trip(lib);
    free(lib);
    if (!have_cookbook) return; /* main printed the SKIP line */
    char *cook = read_file(COOKBOOK "/schema.pg");
    round_trip(cook);
    free(cook);
}

static void json_rejects_malformed_objects(void **state)
{
    (void)state;
    og_catalog *c = NULL;
    const char *bad[] = {
        "",
        "[]",
        "{\"format\":\"other\"}",
        "{\"format\":\"omnigraph-schema-ir\",\"ir_version\":1,\"domain\":null,\"next_id\":1,\"interfaces\":[],\"nodes\":[{}],\"edges\":[],\"source\":null}",
        ("{\"format\":\"omnigraph-schema-ir\",\"ir_version\":1,\"domain\":null,\"next_id\":2,\"interfaces\":[],\"nodes\":[{\"name\":\"A\",\"type_id\":5,"
        "\"table_incarnation_id\":1,\"implements\":[],\"key\":[],\"annotations\":[],\"properties\":[],\"constraints\":[]}],\"edges\":[],\"source\":null}"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(og_catalog_from_json(&c, bad[i], strlen(bad[i])), OG_ERR_CORRUPT);
        assert_null(c);
    }
    const char *v2 = "{\"format\":\"omnigraph-schema-ir\",\"ir_version\":2}";
    assert_int_equal(og_catalog_from_json(&c, v2, strlen(v2)), OG_ERR_UNSUPPORTED_VERSION);
}

static void cookbook_schema_checks_clean(void **state)
{
    (void)state;
    if (!have_cookbook) return; /* main printed the SKIP line */
    char *cook = read_file(COOKBOOK "/schema.pg");
    og_catalog *cat = compile_ok(cook);
    free(cook);
    og_schema_counts c;
    og_schema_count(&c, cat);
    /* hand-counted from the file */
    assert_int_equal(c.interfaces, 0);
    assert_int_equal(c.nodes, 10);
    assert_int_equal(c.edges, 23);
    /* Signal 8, Element 18, Pattern 8, Insight 7, KnowHow 10, Company 7, SourceEntity 5,
     * Expert 2, InformationArtifact 7, Chunk 4; no edge properties */
    assert_int_equal(c.properties, 76);
    assert_int_equal(c.keys, 9);         /* every node but Chunk: slug @key */
    assert_int_equal(c.uniques, 2);      /* InformationArtifact.link, PartOfArtifact @unique(src) */
    assert_int_equal(c.indexes, 16);     /* property-level @index */
    assert_int_equal(c.ranges, 0);
    assert_int_equal(c.checks, 0);
    assert_int_equal(c.constraints, 27);
    assert_int_equal(c.btree, 5);        /* 3 stagingTimestamp (DateTime) + 2 kind (enum) */
    assert_int_equal(c.inverted, 19);    /* 9 slug keys + 9 name + Signal.brief */
    assert_int_equal(c.vector, 1);       /* Chunk.embedding */
    assert_int_equal(c.embeds, 1);
    const og_cat_type *e = og_catalog_edge(cat, "PartOfArtifact");
    assert_int_equal(e->card_min, 1);
    assert_int_equal(e->card_max, 1);
    assert_int_equal(og_catalog_edge(cat, "PublishedBySource")->card_max, 1);
    const og_cat_prop *dom = og_cat_type_prop(og_catalog_node(cat, "Signal"), "domain", NULL);
    assert_int_equal(dom->n_enum, 8);
    assert_true(og_cat_prop_enum_has(dom, "data-eng", 8));
    assert_true(dom->nullable);
    og_buf s = OG_BUF_INIT;
    assert_int_equal(og_schema_summary(&s, cat), OG_OK);
    assert_non_null(strstr(og_buf_cstr(&s), "0 interfaces, 10 node types, 23 edge types, 76 properties\n"
                                            "27 constraints (9 key, 2 unique, 16 index, 0 range, 0 check)\n"
                                            "index intents: 5 btree, 19 inverted, 1 vector (1 @embed)\n"));
    og_buf_reset(&s);
    assert_int_equal(og_schema_summary_json(&s, cat), OG_OK);
    assert_non_null(strstr(og_buf_cstr(&s), "\"properties\":76"));
    og_buf_free(&s);
    og_catalog_free(cat);
}

static void empty_schema_is_valid(void **state)
{
    (void)state;
    og_catalog *cat = compile_ok("  // nothing here\n");
    assert_int_equal(cat->nnodes + cat->nedges + cat->ninterfaces, 0);
    assert_int_equal(cat->next_id, 1);
    og_catalog_free(cat);
}

int main(void)
{
    have_cookbook = og_test_have_data("compiler_test_schema (cookbook schema)", COOKBOOK);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spec_example_builds_the_catalog),
        cmocka_unit_test(every_type_maps_to_a_storage_type),
        cmocka_unit_test(enum_values_are_unquoted_words),
        cmocka_unit_test(constraints_in_body_and_property_form),
        cmocka_unit_test(index_intents_per_property_type),
        cmocka_unit_test(known_annotations_become_fields),
        cmocka_unit_test(rename_from_is_inert_at_creation_with_a_warning),
        cmocka_unit_test(comments_order_and_namespaces),
        cmocka_unit_test(id_src_dst_are_property_names_and_at_src_stays_the_endpoint),
        cmocka_unit_test(interface_properties_carry_their_constraints),
        cmocka_unit_test(identities_are_canonical),
        cmocka_unit_test(canonical_key_ids),
        cmocka_unit_test(json_round_trip_is_byte_stable),
        cmocka_unit_test(json_rejects_malformed_objects),
        cmocka_unit_test(cookbook_schema_checks_clean),
        cmocka_unit_test(empty_schema_is_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
