/*
 * test_migrate.c — schema evolution planning (migrate.h): one test per row of the migration
 * matrix in reference-language.md §7, plus identity resolution (@rename_from rules, fresh ids
 * from the high-water mark, drop-then-re-add), empty plans and rendering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/migrate.h"
#include "compiler/schema.h"

typedef struct planned {
    og_catalog *acc;
    og_migration_plan plan;
    og_diags diags;
    og_status st;
} planned;

static void plan(planned *p, const char *old_pg, const char *new_pg)
{
    memset(p, 0, sizeof *p);
    og_diags d = OG_DIAGS_INIT;
    assert_int_equal(og_schema_compile(&p->acc, "old.pg", old_pg, strlen(old_pg), &d), OG_OK);
    og_diags_free(&d);
    p->st = og_migration_plan_build(&p->plan, p->acc, "new.pg", new_pg, strlen(new_pg), &p->diags);
}

static void unplan(planned *p)
{
    og_migration_plan_free(&p->plan);
    og_catalog_free(p->acc);
    og_diags_free(&p->diags);
}

/* The rendered plan (one step per line) for assertions by substring. */
static const char *rendered(planned *p, og_buf *b)
{
    og_buf_reset(b);
    for (size_t i = 0; i < p->plan.nsteps; i++) {
        og_migration_step_render(b, &p->plan.steps[i]);
        og_buf_append_byte(b, '\n');
    }
    return og_buf_cstr(b);
}

static void expect_plan(const char *old_pg, const char *new_pg, int supported, const char *const *lines, size_t nlines)
{
    planned p;
    plan(&p, old_pg, new_pg);
    if (p.st != OG_OK) {
        og_buf b = OG_BUF_INIT;
        for (size_t i = 0; i < p.diags.len; i++) og_diag_format(&b, &p.diags.v[i]);
        fprintf(stderr, "plan failed:\n%s", og_buf_cstr(&b));
        og_buf_free(&b);
    }
    assert_int_equal(p.st, OG_OK);
    og_buf b = OG_BUF_INIT;
    const char *r = rendered(&p, &b);
    int ok = p.plan.supported == supported && p.plan.nsteps == nlines;
    for (size_t i = 0; ok && i < nlines; i++)
        if (!strstr(r, lines[i])) ok = 0;
    if (!ok) fprintf(stderr, "plan (supported=%d, %zu steps):\n%s", p.plan.supported, p.plan.nsteps, r);
    assert_true(ok);
    og_buf_free(&b);
    unplan(&p);
}

#define LINES(...) (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)

static const char *base =
    "interface Named { name: String }\n"
    "node Person implements Named { slug: String @key  age: I32?  kind: enum(a, b)  bio: String? @description(\"about\") }\n"
    "node Org @description(\"orgs\") { slug: String @key }\n"
    "edge WorksAt: Person -> Org @card(0..1) { since: Date? }\n";

/* Row: new node/edge/interface type -> AddType */
static void row_new_types_are_added(void **state)
{
    (void)state;
    char want[2048];
    snprintf(want, sizeof want, "%s%s", base,
             "interface Dated { at: DateTime? }\nnode Team { slug: String @key }\nedge MemberOf: Person -> Team\n");
    expect_plan(base, want, 1, LINES("AddType interface Dated", "AddType node Team", "AddType edge MemberOf"));
}

/* Row: rename type via @rename_from -> RenameType, ids preserved; edges must follow */
static void row_rename_type(void **state)
{
    (void)state;
    const char *want2 =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  age: I32?  kind: enum(a, b)  bio: String? @description(\"about\") }\n"
        "node Company @rename_from(\"Org\") @description(\"orgs\") { slug: String @key }\n"
        "edge EmployedBy: Person -> Company @card(0..1) @rename_from(\"WorksAt\") { since: Date? }\n";
    expect_plan(base, want2, 1, LINES("RenameType node Org -> Company", "RenameType edge WorksAt -> EmployedBy"));
    planned p;
    plan(&p, base, want2);
    const og_cat_type *o = og_catalog_node(p.acc, "Org"), *c = og_catalog_node(p.plan.desired, "Company");
    assert_int_equal(o->id, c->id);
    assert_int_equal(o->incarnation, c->incarnation);
    assert_int_equal(o->props[0].id, c->props[0].id);
    unplan(&p);
    /* an edge still naming the old endpoint makes the desired schema invalid */
    const char *stale =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  age: I32?  kind: enum(a, b)  bio: String? @description(\"about\") }\n"
        "node Company @rename_from(\"Org\") @description(\"orgs\") { slug: String @key }\n"
        "edge WorksAt: Person -> Org @card(0..1) { since: Date? }\n";
    plan(&p, base, stale);
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "unknown target type: Org"));
    unplan(&p);
}

/* Row: new nullable property -> AddProperty */
static void row_add_nullable_property(void **state)
{
    (void)state;
    const char *want =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  age: I32?  kind: enum(a, b)  bio: String? @description(\"about\") tags: [String]? }\n"
        "node Org @description(\"orgs\") { slug: String @key }\n"
        "edge WorksAt: Person -> Org @card(0..1) { since: Date? role: String? }\n";
    expect_plan(base, want, 1, LINES("AddProperty node Person.tags: [String]?", "AddProperty edge WorksAt.role: String?"));
}

/* Row: new required property -> OG-MF-103 */
static void row_add_required_property_is_refused(void **state)
{
    (void)state;
    const char *want =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  age: I32?  kind: enum(a, b)  bio: String? @description(\"about\") score: F64 }\n"
        "node Org @description(\"orgs\") { slug: String @key }\n"
        "edge WorksAt: Person -> Org @card(0..1) { since: Date? }\n";
    expect_plan(base, want, 0, LINES("[OG-MF-103] adding required property 'Person.score' requires a backfill"));
    planned p;
    plan(&p, base, want);
    assert_int_equal(p.plan.steps[0].kind, OG_STEP_UNSUPPORTED);
    assert_string_equal(p.plan.steps[0].code, "OG-MF-103");
    assert_string_equal(p.plan.steps[0].entity, "node:Person.score");
    unplan(&p);
}

/* Row: rename property via @rename_from -> RenameProperty, id preserved */
static void row_rename_property(void **state)
{
    (void)state;
    const char *want =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  years: I32? @rename_from(\"age\")  kind: enum(a, b)  bio: String? @description(\"about\") }\n"
        "node Org @description(\"orgs\") { slug: String @key }\n"
        "edge WorksAt: Person -> Org @card(0..1) { started: Date? @rename_from(\"since\") }\n";
    expect_plan(base, want, 1, LINES("RenameProperty node Person.age -> years", "RenameProperty edge WorksAt.since -> started"));
    planned p;
    plan(&p, base, want);
    assert_int_equal(og_cat_type_prop(og_catalog_node(p.acc, "Person"), "age", NULL)->id,
                     og_cat_type_prop(og_catalog_node(p.plan.desired, "Person"), "years", NULL)->id);
    unplan(&p);
}

/* Row: enum gains values -> ExtendEnum; reorder = no change */
static void row_extend_enum(void **state)
{
    (void)state;
    const char *want =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  age: I32?  kind: enum(c, b, a)  bio: String? @description(\"about\") }\n"
        "node Org @description(\"orgs\") { slug: String @key }\n"
        "edge WorksAt: Person -> Org @card(0..1) { since: Date? }\n";
    expect_plan(base, want, 1, LINES("ExtendEnum node Person.kind +(c)"));
    const char *reorder =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  age: I32?  kind: enum(b, a)  bio: String? @description(\"about\") }\n"
        "node Org @description(\"orgs\") { slug: String @key }\n"
        "edge WorksAt: Person -> Org @card(0..1) { since: Date? }\n";
    planned p;
    plan(&p, base, reorder);
    assert_int_equal(p.st, OG_OK);
    assert_int_equal(p.plan.nsteps, 0);
    assert_true(p.plan.supported);
    unplan(&p);
}

/* Row: any other type change -> OG-MF-106 */
static void row_other_type_changes_are_refused(void **state)
{
    (void)state;
    const char *olds = "node T { slug: String @key a: I32? b: String? c: enum(x, y) d: enum(x, y) e: String f: enum(x)? }\n";
    const char *news = "node T { slug: String @key a: I64? b: String c: enum(x) d: String e: enum(x) f: enum(x, y) }\n";
    expect_plan(olds, news, 0,
                LINES("[OG-MF-106] changing property type for 'T.a' is not supported in schema migration v1 (I32? -> I64?)",
                      "'T.b'", "'T.c'", "'T.d'", "'T.e'", "'T.f'"));
}

/* Row: add @index (property or body) -> AddConstraint(Index) */
static void row_add_index(void **state)
{
    (void)state;
    const char *olds = "node T { slug: String @key a: I32? b: String? }\n";
    const char *news = "node T { slug: String @key a: I32? @index b: String? @index(a, b) }\n";
    expect_plan(olds, news, 1, LINES("AddConstraint(Index) node T @index(a)", "AddConstraint(Index) node T @index(a, b)"));
    /* moving an index between property and body form is not a change */
    const char *moved = "node T { slug: String @key a: I32? b: String? @index(a) @index(b, a) }\n";
    planned p;
    plan(&p, news, moved);
    assert_int_equal(p.st, OG_OK);
    assert_int_equal(p.plan.nsteps, 0);
    unplan(&p);
}

static void index_added_on_an_interface_property_is_planned_on_its_nodes(void **state)
{
    (void)state;
    const char *olds = "interface I { a: String? }\nnode N implements I { x: I32? }\n";
    const char *news = "interface I { a: String? @index }\nnode N implements I { x: I32? }\n";
    expect_plan(olds, news, 1, LINES("AddConstraint(Index) node N @index(a)"));
}

/* Row: add @key/@unique/@range/@check; remove any constraint -> refused */
static void row_other_constraint_changes_are_refused(void **state)
{
    (void)state;
    const char *olds = "node T { a: I32? b: String? c: String? @index }\n";
    const char *news = "node T { a: I32? @unique b: String? c: String? @range(a, 0..9) @check(b, \"x\") }\n";
    expect_plan(olds, news, 0,
                LINES("removing constraints from 'T' is not supported", "adding constraint '@unique(a)' to 'T'",
                      "adding constraint '@range(a, 0..9)' to 'T'", "adding constraint '@check(b, \"x\")' to 'T'"));
    const char *keyed_old = "node K { s: String x: I32? }\n";
    const char *keyed_new = "node K { s: String @key x: I32? }\n";
    expect_plan(keyed_old, keyed_new, 0, LINES("adding constraint '@key(s)' to 'K'"));
}

/* Row: change @card or edge endpoints -> refused */
static void row_card_and_endpoint_changes_are_refused(void **state)
{
    (void)state;
    const char *olds = "node A { x: I32? }\nnode B { y: I32? }\nedge E: A -> B @card(0..1)\nedge F: A -> B\n";
    const char *news = "node A { x: I32? }\nnode B { y: I32? }\nedge E: A -> B @card(0..2)\nedge F: B -> B\n";
    expect_plan(olds, news, 0,
                LINES("changing cardinality on edge 'E' is not supported", "changing edge endpoints on 'F' is not supported"));
}

/* Row: change @description/@instruction -> Update*Metadata */
static void row_metadata_changes(void **state)
{
    (void)state;
    const char *want =
        "interface Named { name: String }\n"
        "node Person @instruction(\"be kind\") implements Named { slug: String @key  age: I32?  kind: enum(a, b)  bio: String? @description(\"about them\") }\n"
        "node Org { slug: String @key }\n"
        "edge WorksAt: Person -> Org @card(0..1) @description(\"employment\") { since: Date? }\n";
    expect_plan(base, want, 1,
                LINES("UpdateTypeMetadata node Person: description=none; instruction=\"be kind\"",
                      "UpdatePropertyMetadata node Person.bio: description=\"about them\"",
                      "UpdateTypeMetadata node Org: description=none", "UpdateTypeMetadata edge WorksAt: description=\"employment\""));
}

/* Row: change other annotations, or @embed source/model -> refused */
static void row_other_annotation_and_embed_changes_are_refused(void **state)
{
    (void)state;
    /* other annotations are schema errors now (docs/reference.md), so only @embed is left to change */
    const char *olds = "node D { t: String u: String v: Vector(2)? @embed(t) w: Vector(2)? @embed(t, model = \"m1\") x: I32? }\n";
    const char *news = "node D { t: String u: String v: Vector(2)? @embed(u) w: Vector(2)? @embed(t, model = \"m2\") x: I32? }\n";
    expect_plan(olds, news, 0,
                LINES("changing @embed source or model for 'D.v'", "changing @embed source or model for 'D.w'"));
}

/* Row: change implements, rename/remove interface, change interface-provenance -> refused */
static void row_interface_changes_are_refused(void **state)
{
    (void)state;
    const char *olds = "interface I { a: String? }\ninterface J { b: String? }\nnode N implements I { x: I32? }\nnode M { a: String? }\n";
    /* interfaces take no annotations, so an interface rename is a remove + add: refused */
    const char *news2 = "interface K { a: String? }\nnode N implements K { x: I32? }\nnode M { a: String? }\n";
    expect_plan(olds, news2, 0,
                LINES("AddType interface K", "removing interface 'I' is not supported", "removing interface 'J' is not supported",
                      "changing implemented interfaces on node 'N'", "changing declaration provenance for 'N.a'"));
    /* declaring an injected property directly changes its provenance */
    const char *news3 = "interface I { a: String? }\ninterface J { b: String? }\nnode N { x: I32? a: String? }\nnode M { a: String? }\n";
    expect_plan(olds, news3, 0, LINES("changing implemented interfaces on node 'N'", "changing declaration provenance for 'N.a'"));
}

/* Row: remove property / node or edge type -> Drop* soft; edges at a removed node must go too */
static void row_drops_are_soft(void **state)
{
    (void)state;
    const char *want =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  kind: enum(a, b)  bio: String? @description(\"about\") }\n";
    expect_plan(base, want, 1, LINES("DropProperty node Person.age (soft)", "DropType node Org (soft)", "DropType edge WorksAt (soft)"));
    planned p;
    plan(&p, base, want);
    for (size_t i = 0; i < p.plan.nsteps; i++) assert_false(p.plan.steps[i].hard);
    unplan(&p);
    const char *dangling =
        "interface Named { name: String }\n"
        "node Person implements Named { slug: String @key  age: I32?  kind: enum(a, b)  bio: String? @description(\"about\") }\n"
        "edge WorksAt: Person -> Org @card(0..1) { since: Date? }\n";
    plan(&p, base, dangling);
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "unknown target type: Org"));
    unplan(&p);
}

/* ---- identity resolution ------------------------------------------------------------------- */

static void rename_hint_naming_nothing_is_an_error(void **state)
{
    (void)state;
    planned p;
    plan(&p, "node A { x: I32? }\n", "node B @rename_from(\"Nope\") { x: I32? }\n");
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "node 'B' declares @rename_from(\"Nope\") but no accepted declaration has that name"));
    assert_int_equal(p.diags.v[0].line, 1);
    assert_int_equal(p.diags.v[0].col, 6);
    assert_non_null(p.diags.v[0].hint);
    unplan(&p);
    plan(&p, "node A { x: I32? }\n", "node A { y: I32? @rename_from(\"z\") }\n");
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "no accepted property with that name exists under the stable owner"));
    unplan(&p);
}

static void cross_kind_and_cross_owner_renames_are_errors(void **state)
{
    (void)state;
    planned p;
    plan(&p, "node A { x: I32? }\nedge E: A -> A\n", "node A { x: I32? }\nnode E2 @rename_from(\"E\") { y: I32? }\n");
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "cannot rename accepted 'E' across declaration kinds"));
    unplan(&p);
    plan(&p, "node A { x: I32? }\nnode B { y: I32? }\n", "node A { x: I32? }\nnode B { z: I32? @rename_from(\"x\") }\n");
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "property moves across stable owners are not supported"));
    unplan(&p);
    plan(&p, "node A { x: I32? }\n", "node A { x: I32? }\nnode C { z: I32? @rename_from(\"x\") }\n");
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "new owner 'node:C' cannot import property identity"));
    unplan(&p);
    plan(&p, "node A { x: I32? }\n", "node A { x: I32? }\nnode B @rename_from(\"A\") { x: I32? }\n");
    assert_int_equal(p.st, OG_ERR_TYPE);
    assert_non_null(strstr(p.diags.v[0].message, "accepted node 'A' is consumed by more than one desired declaration"));
    unplan(&p);
}

static void hint_on_exact_match_is_ignored_with_a_warning(void **state)
{
    (void)state;
    planned p;
    plan(&p, "node A { x: I32? }\n", "node A @rename_from(\"Old\") { x: I32? }\n");
    assert_int_equal(p.st, OG_OK);
    assert_int_equal(p.plan.nsteps, 0);
    assert_int_equal(p.diags.len, 1);
    assert_true(p.diags.v[0].warning);
    assert_non_null(strstr(p.diags.v[0].message, "is ignored"));
    unplan(&p);
}

static void fresh_ids_come_after_the_high_water_mark(void **state)
{
    (void)state;
    planned p;
    plan(&p, "node A { x: I32? }\n", "node A { x: I32? w: I32? }\nnode B { y: I32? }\n");
    assert_int_equal(p.st, OG_OK);
    /* accepted: A=1, A.x=2, inc(A)=3, next 4.  New: type B=4, then props (A.w: owner 1) 5, (B.y) 6, inc(B)=7 */
    const og_catalog *d = p.plan.desired;
    assert_int_equal(og_catalog_node(d, "A")->id, 1);
    assert_int_equal(og_catalog_node(d, "B")->id, 4);
    assert_int_equal(og_cat_type_prop(og_catalog_node(d, "A"), "w", NULL)->id, 5);
    assert_int_equal(og_cat_type_prop(og_catalog_node(d, "B"), "y", NULL)->id, 6);
    assert_int_equal(og_catalog_node(d, "B")->incarnation, 7);
    assert_int_equal(d->next_id, 8);
    unplan(&p);
}

static void dropped_then_readded_gets_a_new_identity(void **state)
{
    (void)state;
    planned p;
    plan(&p, "node A { x: I32? }\nnode B { y: I32? }\n", "node A { x: I32? }\n");
    assert_int_equal(p.st, OG_OK);
    og_catalog *mid = p.plan.desired;
    p.plan.desired = NULL;
    uint64_t old_b = og_catalog_node(p.acc, "B")->id;
    unplan(&p);
    og_migration_plan again;
    og_diags d = OG_DIAGS_INIT;
    const char *t = "node A { x: I32? }\nnode B { y: I32? }\n";
    assert_int_equal(og_migration_plan_build(&again, mid, "n.pg", t, strlen(t), &d), OG_OK);
    const og_cat_type *b = og_catalog_node(again.desired, "B");
    assert_true(b->id != old_b);
    assert_true(b->id >= mid->next_id);
    assert_int_equal(again.steps[0].kind, OG_STEP_ADD_TYPE);
    og_migration_plan_free(&again);
    og_diags_free(&d);
    og_catalog_free(mid);
}

static void identical_schema_is_an_empty_plan(void **state)
{
    (void)state;
    planned p;
    plan(&p, base, base);
    assert_int_equal(p.st, OG_OK);
    assert_int_equal(p.plan.nsteps, 0);
    assert_true(p.plan.supported);
    og_buf b = OG_BUF_INIT;
    og_migration_plan_render(&b, &p.plan);
    assert_non_null(strstr(og_buf_cstr(&b), "no changes"));
    og_buf_reset(&b);
    og_migration_plan_json(&b, &p.plan);
    assert_string_equal(og_buf_cstr(&b), "{\"supported\":true,\"steps\":[]}");
    og_buf_free(&b);
    unplan(&p);
}

static void invalid_desired_schema_fails_with_positions(void **state)
{
    (void)state;
    planned p;
    plan(&p, base, "node A { x: }\n");
    assert_int_equal(p.st, OG_ERR_PARSE);
    assert_string_equal(p.diags.v[0].file, "new.pg");
    assert_int_equal(p.diags.v[0].line, 1);
    assert_int_equal(p.diags.v[0].col, 13);
    assert_null(p.plan.desired);
    unplan(&p);
}

static void plan_json_and_render(void **state)
{
    (void)state;
    planned p;
    plan(&p, "node A { x: I32? }\n", "node A { x: I64? y: String? }\n");
    assert_int_equal(p.st, OG_OK);
    og_buf b = OG_BUF_INIT;
    og_migration_plan_json(&b, &p.plan);
    assert_string_equal(og_buf_cstr(&b),
                        "{\"supported\":false,\"steps\":[{\"kind\":\"unsupported_change\",\"type_kind\":\"node\",\"type_name\":\"A\","
                        "\"property_name\":\"x\",\"entity\":\"node:A.x\",\"reason\":\"changing property type for 'A.x' is not "
                        "supported in schema migration v1 (I32? -> I64?)\",\"code\":\"OG-MF-106\"},{\"kind\":\"add_property\","
                        "\"type_kind\":\"node\",\"type_name\":\"A\",\"property_name\":\"y\",\"detail\":\"String?\"}]}");
    og_buf_reset(&b);
    og_migration_plan_render(&b, &p.plan);
    assert_non_null(strstr(og_buf_cstr(&b), "supported: no (1 of 2 steps unsupported)\n  1. UNSUPPORTED [OG-MF-106]"));
    og_buf_free(&b);
    assert_string_equal(og_step_kind_name(OG_STEP_EXTEND_ENUM), "extend_enum");
    unplan(&p);
}

static void accepted_catalog_from_json_plans_the_same(void **state)
{
    (void)state;
    og_catalog *acc = NULL;
    assert_int_equal(og_schema_compile(&acc, "old.pg", base, strlen(base), NULL), OG_OK);
    og_buf j = OG_BUF_INIT;
    assert_int_equal(og_catalog_to_json(&j, acc), OG_OK);
    og_catalog *loaded = NULL;
    assert_int_equal(og_catalog_from_json(&loaded, (const char *)j.data, j.len), OG_OK);
    og_migration_plan pl;
    og_diags d = OG_DIAGS_INIT;
    assert_int_equal(og_migration_plan_build(&pl, loaded, "new.pg", base, strlen(base), &d), OG_OK);
    assert_int_equal(pl.nsteps, 0);
    /* the desired catalog keeps the accepted identities exactly */
    og_buf j2 = OG_BUF_INIT;
    og_catalog_to_json(&j2, pl.desired);
    assert_string_equal(og_buf_cstr(&j2), og_buf_cstr(&j));
    og_buf_free(&j2);
    og_migration_plan_free(&pl);
    og_diags_free(&d);
    og_catalog_free(loaded);
    og_catalog_free(acc);
    og_buf_free(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_new_types_are_added),
        cmocka_unit_test(row_rename_type),
        cmocka_unit_test(row_add_nullable_property),
        cmocka_unit_test(row_add_required_property_is_refused),
        cmocka_unit_test(row_rename_property),
        cmocka_unit_test(row_extend_enum),
        cmocka_unit_test(row_other_type_changes_are_refused),
        cmocka_unit_test(row_add_index),
        cmocka_unit_test(index_added_on_an_interface_property_is_planned_on_its_nodes),
        cmocka_unit_test(row_other_constraint_changes_are_refused),
        cmocka_unit_test(row_card_and_endpoint_changes_are_refused),
        cmocka_unit_test(row_metadata_changes),
        cmocka_unit_test(row_other_annotation_and_embed_changes_are_refused),
        cmocka_unit_test(row_interface_changes_are_refused),
        cmocka_unit_test(row_drops_are_soft),
        cmocka_unit_test(rename_hint_naming_nothing_is_an_error),
        cmocka_unit_test(cross_kind_and_cross_owner_renames_are_errors),
        cmocka_unit_test(hint_on_exact_match_is_ignored_with_a_warning),
        cmocka_unit_test(fresh_ids_come_after_the_high_water_mark),
        cmocka_unit_test(dropped_then_readded_gets_a_new_identity),
        cmocka_unit_test(identical_schema_is_an_empty_plan),
        cmocka_unit_test(invalid_desired_schema_fails_with_positions),
        cmocka_unit_test(plan_json_and_render),
        cmocka_unit_test(accepted_catalog_from_json_plans_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
