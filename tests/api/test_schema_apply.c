/*
 * test_schema_apply.c — schema evolution on a live graph through the public API: add a
 * nullable property (old rows read null), rename through @rename_from (data and ids kept),
 * add a type, soft drops (hidden now, still readable at older commits), refusals that
 * publish nothing (unsupported steps, other branches), and the no-op plan.
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

#include "omnigraph.h"

#include "api_rows.h"

typedef struct ctx {
    char dir[64], data[96];
    og_db *db;
} ctx;

static const char *V1 = "node Person { name: String @key  age: I32?  nick: String? }\n"
                        "node Pet { name: String @key  kind: enum(cat, dog)? }\n"
                        "edge Knows: Person -> Person\n";

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-apply-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    char uri[96];
    snprintf(uri, sizeof uri, "%s/g", c->dir);
    snprintf(c->data, sizeof c->data, "%s/d.jsonl", c->dir);
    if (og_db_init(&c->db, uri, "v1.pg", V1, strlen(V1), NULL)) return -1;
    FILE *f = fopen(c->data, "w");
    fputs("{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36,\"nick\":\"countess\"}}\n"
          "{\"type\":\"Person\",\"data\":{\"name\":\"Alan\",\"age\":41}}\n"
          "{\"type\":\"Pet\",\"data\":{\"name\":\"Rex\"}}\n"
          "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Alan\"}\n", f);
    fclose(f);
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt r;
    if (og_db_load(&r, c->db, c->data, &lo)) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    int rc = system(cmd);
    free(c);
    return rc == 0 ? 0 : -1;
}

/* Runs one read query and renders rows as "a|b;c|d" (api_rows.h). */
static og_status rows(ctx *c, const char *gq, const char *commit, char *out, size_t cap)
{
    return api_rows_render(c->db, gq, commit, out, cap);
}

static og_status apply(ctx *c, const char *pg, og_receipt *r)
{
    return og_db_schema_apply(r, NULL, c->db, NULL, "next.pg", pg, strlen(pg), 0, 0);
}

static void adding_and_renaming_keeps_the_data(void **state)
{
    ctx *c = *state;
    const char *v2 = "node Person { name: String @key  years: I32? @rename_from(\"age\")  nick: String?  email: String? }\n"
                     "node Pet { name: String @key  kind: enum(cat, dog)? }\n"
                     "node City { name: String @key }\n"
                     "edge Knows: Person -> Person\n";
    char *plan;
    assert_int_equal(og_db_schema_plan(&plan, c->db, NULL, "v2.pg", v2, strlen(v2), 1), OG_OK);
    assert_non_null(strstr(plan, "\"supported\":true"));
    assert_non_null(strstr(plan, "rename_property"));
    og_free(plan);
    og_receipt r;
    assert_int_equal(apply(c, v2, &r), OG_OK);
    assert_int_equal(r.published, 1);
    char got[256];
    assert_int_equal(rows(c, "query q() { match { $p: Person } return { $p.name, $p.years, $p.email } order { $p.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada|36|null;Alan|41|null");
    /* the old name is gone from the new schema, and edges survived */
    assert_int_equal(rows(c, "query q() { match { $p: Person } return { $p.age } }", NULL, got, sizeof got), OG_ERR_TYPE);
    assert_int_equal(rows(c, "query q() { match { $a: Person $a knows $b } return { $a.name, $b.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada|Alan");
    /* the new type takes data, the new property too */
    FILE *f = fopen(c->data, "w");
    fputs("{\"type\":\"City\",\"data\":{\"name\":\"Paris\"}}\n"
          "{\"type\":\"Person\",\"data\":{\"name\":\"Grace\",\"years\":45,\"email\":\"g@navy\"}}\n", f);
    fclose(f);
    og_load_opts lo = {.mode = OG_LOAD_APPEND};
    assert_int_equal(og_db_load(&r, c->db, c->data, &lo), OG_OK);
    assert_int_equal(rows(c, "query q() { match { $p: Person { name: \"Grace\" } } return { $p.years, $p.email } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "45|g@navy");
    /* re-applying the same schema is a no-op */
    assert_int_equal(apply(c, v2, &r), OG_OK);
    assert_int_equal(r.published, 0);
}

static void soft_drops_hide_now_and_keep_history(void **state)
{
    ctx *c = *state;
    char *snap;
    assert_int_equal(og_db_snapshot(&snap, c->db, NULL), OG_OK);
    char before[32] = "";
    const char *p = strstr(snap, "\"commit\": \"");
    memcpy(before, p + 11, 26);
    og_free(snap);
    const char *v2 = "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n";
    og_receipt r;
    assert_int_equal(apply(c, v2, &r), OG_OK);
    char got[256];
    assert_int_equal(rows(c, "query q() { match { $p: Person } return { $p.nick } }", NULL, got, sizeof got), OG_ERR_TYPE);
    assert_int_equal(rows(c, "query q() { match { $p: Pet } return { $p.name } }", NULL, got, sizeof got), OG_ERR_TYPE);
    /* time travel reads the old schema and data */
    assert_int_equal(rows(c, "query q() { match { $p: Person { name: \"Ada\" } } return { $p.nick } }", before, got, sizeof got), OG_OK);
    assert_string_equal(got, "countess");
    assert_int_equal(rows(c, "query q() { match { $p: Pet } return { $p.name } }", before, got, sizeof got), OG_OK);
    assert_string_equal(got, "Rex");
}

static void refusals_publish_nothing(void **state)
{
    ctx *c = *state;
    char *snap0, *snap1;
    assert_int_equal(og_db_snapshot(&snap0, c->db, NULL), OG_OK);
    og_receipt r;
    const char *required = "node Person { name: String @key  age: I32?  nick: String?  born: Date }\n"
                           "node Pet { name: String @key  kind: enum(cat, dog)? }\nedge Knows: Person -> Person\n";
    assert_int_equal(apply(c, required, &r), OG_ERR_UNSUPPORTED);
    assert_non_null(strstr(og_error_message(), "OG-MF-103"));
    const char *retype = "node Person { name: String @key  age: I64?  nick: String? }\n"
                         "node Pet { name: String @key  kind: enum(cat, dog)? }\nedge Knows: Person -> Person\n";
    assert_int_equal(apply(c, retype, &r), OG_ERR_UNSUPPORTED);
    assert_non_null(strstr(og_error_message(), "OG-MF-106"));
    assert_int_equal(apply(c, "node Person {", &r), OG_ERR_PARSE);
    assert_int_equal(og_db_snapshot(&snap1, c->db, NULL), OG_OK);
    assert_string_equal(snap0, snap1);
    og_free(snap1);
    og_free(snap0);
}

static void type_renames_enum_extensions_and_indexes_keep_the_data(void **state)
{
    ctx *c = *state;
    const char *v2 = "node Person { name: String @key  age: I32? @index  nick: String? }\n"
                     "node Animal @rename_from(\"Pet\") { name: String @key  kind: enum(cat, dog, fish)? }\n"
                     "edge Knows: Person -> Person\n";
    og_receipt r;
    assert_int_equal(apply(c, v2, &r), OG_OK);
    assert_int_equal(r.published, 1);
    char got[256];
    assert_int_equal(rows(c, "query q() { match { $a: Animal } return { $a.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Rex");
    assert_int_equal(rows(c, "query q() { match { $a: Pet } return { $a.name } }", NULL, got, sizeof got), OG_ERR_TYPE);
    /* the extended enum accepts the new value */
    FILE *f = fopen(c->data, "w");
    fputs("{\"type\":\"Animal\",\"data\":{\"name\":\"Nemo\",\"kind\":\"fish\"}}\n", f);
    fclose(f);
    og_load_opts lo = {.mode = OG_LOAD_APPEND};
    assert_int_equal(og_db_load(&r, c->db, c->data, &lo), OG_OK);
    assert_int_equal(rows(c, "query q() { match { $a: Animal { kind: \"fish\" } } return { $a.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Nemo");
    assert_int_equal(rows(c, "query q() { match { $p: Person  $p.age > 40 } return { $p.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Alan");
}

static void apply_is_refused_while_other_branches_exist(void **state)
{
    ctx *c = *state;
    char head[32];
    assert_int_equal(og_db_branch_create(c->db, "side", "main", NULL, head), OG_OK);
    const char *v2 = "node Person { name: String @key  age: I32?  nick: String?  email: String? }\n"
                     "node Pet { name: String @key  kind: enum(cat, dog)? }\nedge Knows: Person -> Person\n";
    og_receipt r;
    assert_int_equal(apply(c, v2, &r), OG_ERR_UNSUPPORTED);
    assert_non_null(strstr(og_error_message(), "side"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(adding_and_renaming_keeps_the_data, setup, teardown),
        cmocka_unit_test_setup_teardown(soft_drops_hide_now_and_keep_history, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals_publish_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(type_renames_enum_extensions_and_indexes_keep_the_data, setup, teardown),
        cmocka_unit_test_setup_teardown(apply_is_refused_while_other_branches_exist, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
