/*
 * test_schema_hard_drop.c — `schema apply --allow-data-loss` through the public API, checked
 * against the stored tables: a hard property drop rewrites every data file without the column,
 * deletes the table's older versions and their files (exact counts in the receipt, the store
 * holding exactly what the new version names), keeps every current row, and makes reads of
 * the earlier commits that need that table fail with the typed "reclaimed by a hard drop"
 * error (query, export, commit changes) while unaffected tables stay readable; a hard type drop
 * (node type with its edge type) deletes both table directories; a soft drop keeps history;
 * loads, mutations and a second hard drop after the first still read every row.
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
#include <jansson.h>

#include "omnigraph.h"
#include "store/store.h"
#include "table/table.h"

#include "api_rows.h"

typedef struct ctx {
    char dir[64], uri[96], data[96];
    og_db *db;
    og_store *st;
    char c_load1[32], c_load2[32], c_mutate[32]; /* commits before any drop */
} ctx;

static const char *V1 = "node Person { name: String @key  age: I32?  nick: String? }\n"
                        "node Pet { name: String @key  kind: enum(cat, dog)? }\n"
                        "edge Knows: Person -> Person\n"
                        "edge Owns: Person -> Pet\n";
/* V1 without Person.nick */
static const char *NO_NICK = "node Person { name: String @key  age: I32? }\n"
                             "node Pet { name: String @key  kind: enum(cat, dog)? }\n"
                             "edge Knows: Person -> Person\n"
                             "edge Owns: Person -> Pet\n";
/* V1 without Pet (and so without Owns) */
static const char *NO_PET = "node Person { name: String @key  age: I32?  nick: String? }\n"
                            "edge Knows: Person -> Person\n";

static const char *MUTATIONS = "query set_age($n: String, $a: I32) { update Person set { age: $a } where name = $n }\n";

static void load(ctx *c, const char *ndjson, og_load_mode mode, char commit[32])
{
    FILE *f = fopen(c->data, "w");
    assert_non_null(f);
    fputs(ndjson, f);
    fclose(f);
    og_load_opts lo = {.mode = mode};
    og_receipt r;
    assert_int_equal(og_db_load(&r, c->db, c->data, &lo), OG_OK);
    assert_int_equal(r.published, 1);
    if (commit) snprintf(commit, 32, "%s", r.commit);
}

static void set_age(ctx *c, const char *name, int age, char commit[32])
{
    char params[128];
    snprintf(params, sizeof params, "{\"n\":\"%s\",\"a\":%d}", name, age);
    og_receipt r;
    assert_int_equal(og_db_mutate(&r, c->db, MUTATIONS, strlen(MUTATIONS), "set_age", params, NULL, NULL), OG_OK);
    assert_int_equal(r.published, 1);
    if (commit) snprintf(commit, 32, "%s", r.commit);
}

/* Person: Ada, Alan (load 1, with Pet Rex and two edges), Grace (load 2), Alan's age updated
 * (a deletion file and a new fragment).  Person's table is then at version 4 with three
 * fragments, two data files holding nick. */
static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-harddrop-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    snprintf(c->data, sizeof c->data, "%s/d.jsonl", c->dir);
    if (og_db_init(&c->db, c->uri, "v1.pg", V1, strlen(V1), NULL)) return -1;
    if (og_store_open(&c->st, c->uri)) return -1;
    load(c,
         "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36,\"nick\":\"countess\"}}\n"
         "{\"type\":\"Person\",\"data\":{\"name\":\"Alan\",\"age\":41}}\n"
         "{\"type\":\"Pet\",\"data\":{\"name\":\"Rex\",\"kind\":\"dog\"}}\n"
         "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Alan\"}\n"
         "{\"edge\":\"Owns\",\"from\":\"Ada\",\"to\":\"Rex\"}\n",
         OG_LOAD_OVERWRITE, c->c_load1);
    load(c, "{\"type\":\"Person\",\"data\":{\"name\":\"Grace\",\"age\":45,\"nick\":\"amazing\"}}\n", OG_LOAD_APPEND,
         c->c_load2);
    set_age(c, "Alan", 42, c->c_mutate);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    og_store_close(c->st);
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

static og_status apply(ctx *c, const char *pg, int hard, og_receipt *r)
{
    og_db_schema_apply_opts o = {NULL, NULL, hard, 0};
    return og_db_schema_apply_ex(r, NULL, c->db, "next.pg", pg, strlen(pg), &o);
}

/* The table directory and version of `type` at the head (0 when the head has no such type). */
static uint64_t head_table(ctx *c, const char *type, char dir[64])
{
    char *snap;
    assert_int_equal(og_db_snapshot(&snap, c->db, NULL), OG_OK);
    json_t *j = json_loads(snap, 0, NULL);
    og_free(snap);
    assert_non_null(j);
    uint64_t v = 0;
    json_t *tables = json_object_get(j, "tables");
    for (size_t i = 0; i < json_array_size(tables); i++) {
        json_t *t = json_array_get(tables, i);
        if (strcmp(json_string_value(json_object_get(t, "type")), type)) continue;
        snprintf(dir, 64, "%s", json_string_value(json_object_get(t, "table")));
        v = (uint64_t)json_integer_value(json_object_get(t, "version"));
    }
    json_decref(j);
    return v;
}

static size_t count_keys(ctx *c, const char *dir, const char *sub)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, "tables/%s/%s", dir, sub);
    og_keylist kl;
    assert_int_equal(og_store_list(c->st, prefix, NULL, 0, &kl), OG_OK);
    size_t n = kl.count;
    og_keylist_free(&kl);
    return n;
}

static size_t count_versions(ctx *c, const char *dir, uint64_t *only)
{
    og_table *t;
    assert_int_equal(og_table_open(&t, c->st, dir), OG_OK);
    uint64_t *vs;
    size_t n;
    assert_int_equal(og_table_list_versions(t, &vs, &n), OG_OK);
    if (only && n) *only = vs[0];
    free(vs);
    og_table_close(t);
    return n;
}

/* Fragments / data files / deletion files of version v; fails when a data file holds a field
 * the version's schema lacks or the schema has a field named `gone`. */
static void expect_clean_version(ctx *c, const char *dir, uint64_t v, const char *gone, size_t *files, size_t *dels)
{
    og_table *t;
    assert_int_equal(og_table_open(&t, c->st, dir), OG_OK);
    og_manifest m;
    assert_int_equal(og_table_load(t, v, &m), OG_OK);
    for (size_t i = 0; i < m.schema.count; i++) assert_string_not_equal(m.schema.fields[i].name, gone);
    *files = *dels = 0;
    for (size_t i = 0; i < m.nfragments; i++) {
        const og_fragment *f = &m.fragments[i];
        *dels += f->deletion.present ? 1 : 0;
        for (size_t k = 0; k < f->nfiles; k++, (*files)++)
            for (size_t q = 0; q < f->files[k].nfields; q++)
                assert_true(og_lance_schema_find_id(&m.schema, f->files[k].fields[q]) >= 0);
    }
    og_manifest_free(&m);
    og_table_close(t);
}

static void expect_reclaimed(og_status st, const char *commit, const char *type)
{
    assert_int_equal(st, OG_ERR_NOT_FOUND);
    const char *msg = og_error_message();
    assert_non_null(strstr(msg, "reclaimed by a hard drop"));
    assert_non_null(strstr(msg, "--allow-data-loss"));
    if (commit) assert_non_null(strstr(msg, commit));
    if (type) assert_non_null(strstr(msg, type));
}

static const char *PEOPLE = "query q() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }";

static void hard_property_drop_rewrites_and_reclaims(void **state)
{
    ctx *c = *state;
    char dir[64], got[512];
    assert_int_equal(head_table(c, "Person", dir), 4);
    assert_int_equal(count_versions(c, dir, NULL), 4);
    /* v2: one file (Ada, Alan); v3: + Grace's file; v4: Alan deleted in fragment 0 and re-added */
    assert_int_equal(count_keys(c, dir, "data/"), 3);
    assert_int_equal(count_keys(c, dir, "_deletions/"), 1);
    char pet_dir[64];
    uint64_t pet_v = head_table(c, "Pet", pet_dir);
    size_t pet_versions = count_versions(c, pet_dir, NULL);

    og_receipt r;
    assert_int_equal(apply(c, NO_NICK, 1, &r), OG_OK);
    assert_int_equal(r.published, 1);
    assert_int_equal(r.reclaim_status, OG_OK);
    assert_string_equal(r.reclaim_error, "");
    assert_int_equal(r.reclaimed_tables, 1);
    assert_int_equal(r.reclaimed_versions, 4);
    assert_int_equal(r.reclaimed_files, 4); /* the three data files and the deletion file */
    assert_true(r.reclaimed_bytes > 0);

    /* the table holds exactly its new version, whose files no longer carry the column */
    uint64_t v = head_table(c, "Person", dir), only = 0;
    assert_int_equal(v, 5);
    assert_int_equal(count_versions(c, dir, &only), 1);
    assert_int_equal(only, 5);
    size_t files, dels;
    expect_clean_version(c, dir, v, "nick", &files, &dels);
    assert_int_equal(files, 3); /* every fragment rewritten (each held nick) */
    assert_int_equal(dels, 0);  /* the rewrite applied the deletion */
    assert_int_equal(count_keys(c, dir, "data/"), 3);
    assert_int_equal(count_keys(c, dir, "_deletions/"), 0);
    /* tables without a dropped column are untouched */
    assert_int_equal(head_table(c, "Pet", pet_dir), pet_v);
    assert_int_equal(count_versions(c, pet_dir, NULL), pet_versions);

    /* every current row, with the remaining properties; edges still join */
    assert_int_equal(rows(c, PEOPLE, NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada|36;Alan|42;Grace|45");
    assert_int_equal(rows(c, "query q() { match { $p: Person } return { $p.nick } }", NULL, got, sizeof got), OG_ERR_TYPE);
    assert_int_equal(rows(c, "query q() { match { $a: Person $a knows $b } return { $a.name, $b.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada|Alan");

    /* earlier commits: Person is reclaimed (typed error naming commit and type), Pet is not */
    expect_reclaimed(rows(c, PEOPLE, c->c_load2, got, sizeof got), c->c_load2, "Person");
    expect_reclaimed(rows(c, PEOPLE, c->c_mutate, got, sizeof got), c->c_mutate, "Person");
    assert_int_equal(rows(c, "query q() { match { $p: Pet } return { $p.name } }", c->c_load2, got, sizeof got), OG_OK);
    assert_string_equal(got, "Rex");
    FILE *devnull = fopen("/dev/null", "w");
    og_read_opts at = {NULL, c->c_load1};
    expect_reclaimed(og_db_export(c->db, devnull, &at, NULL, 0), c->c_load1, "Person");
    fclose(devnull);
    char *json = NULL;
    expect_reclaimed(og_db_commit_changes(&json, c->db, c->c_mutate, NULL), c->c_mutate, "Person");
    og_free(json);

    /* GC kept what the head names: later writes build on it and every row reads back */
    load(c, "{\"type\":\"Person\",\"data\":{\"name\":\"Linus\",\"age\":28}}\n", OG_LOAD_APPEND, NULL);
    set_age(c, "Ada", 37, NULL);
    assert_int_equal(rows(c, PEOPLE, NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada|37;Alan|42;Grace|45;Linus|28");
    /* a second hard drop on top of them */
    const char *no_age = "node Person { name: String @key }\n"
                         "node Pet { name: String @key  kind: enum(cat, dog)? }\n"
                         "edge Knows: Person -> Person\nedge Owns: Person -> Pet\n";
    char before[32];
    snprintf(before, sizeof before, "%s", r.commit);
    assert_int_equal(apply(c, no_age, 1, &r), OG_OK);
    assert_int_equal(r.reclaim_status, OG_OK);
    assert_int_equal(r.reclaimed_tables, 1);
    assert_int_equal(r.reclaimed_versions, 3); /* 5 (the first drop), 6 (load), 7 (mutate) */
    v = head_table(c, "Person", dir);
    assert_int_equal(count_versions(c, dir, &only), 1);
    assert_int_equal(only, v);
    expect_clean_version(c, dir, v, "age", &files, &dels);
    assert_int_equal(dels, 0);
    assert_int_equal(count_keys(c, dir, "data/"), files);
    assert_int_equal(rows(c, "query q() { match { $p: Person } return { $p.name } order { $p.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada;Alan;Grace;Linus");
    expect_reclaimed(rows(c, PEOPLE, before, got, sizeof got), before, "Person");

    /* a column only a newer fragment holds: the hard drop rewrites that fragment alone, and the
     * GC keeps the untouched fragments' files, which the new version shares with the old ones */
    const char *with_email = "node Person { name: String @key  email: String? }\n"
                             "node Pet { name: String @key  kind: enum(cat, dog)? }\n"
                             "edge Knows: Person -> Person\nedge Owns: Person -> Pet\n";
    assert_int_equal(apply(c, with_email, 0, &r), OG_OK);
    load(c, "{\"type\":\"Person\",\"data\":{\"name\":\"Mary\",\"email\":\"m@x\"}}\n", OG_LOAD_APPEND, NULL);
    size_t data_before = count_keys(c, dir, "data/");
    assert_int_equal(apply(c, no_age, 1, &r), OG_OK);
    assert_int_equal(r.reclaim_status, OG_OK);
    assert_int_equal(r.reclaimed_versions, 3); /* the second drop's version, the email add, the load */
    assert_int_equal(r.reclaimed_files, 1);    /* Mary's fragment, rewritten; the rest is shared */
    assert_int_equal(count_keys(c, dir, "data/"), data_before);
    v = head_table(c, "Person", dir);
    expect_clean_version(c, dir, v, "email", &files, &dels);
    assert_int_equal(count_keys(c, dir, "data/"), files);
    assert_int_equal(rows(c, "query q() { match { $p: Person } return { $p.name } order { $p.name } }", NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada;Alan;Grace;Linus;Mary");
}

static void hard_type_drop_removes_the_tables(void **state)
{
    ctx *c = *state;
    char pet[64], owns[64], person[64], got[256];
    assert_true(head_table(c, "Pet", pet) > 0);
    assert_true(head_table(c, "Owns", owns) > 0);
    uint64_t pv = head_table(c, "Person", person);
    assert_true(count_keys(c, pet, "") > 0);
    assert_true(count_keys(c, owns, "") > 0);
    og_receipt r;
    assert_int_equal(apply(c, NO_PET, 1, &r), OG_OK);
    assert_int_equal(r.published, 1);
    assert_int_equal(r.reclaim_status, OG_OK);
    assert_int_equal(r.reclaimed_tables, 2);
    assert_int_equal(r.reclaimed_versions, 4); /* Pet 1, 2 and Owns 1, 2 */
    assert_int_equal(r.reclaimed_files, 2);    /* one data file each */
    assert_int_equal(count_keys(c, pet, ""), 0);
    assert_int_equal(count_keys(c, owns, ""), 0);
    /* Person was not dropped from: same version, history kept */
    assert_int_equal(head_table(c, "Person", person), pv);
    assert_int_equal(count_versions(c, person, NULL), 4);

    assert_int_equal(rows(c, PEOPLE, NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "Ada|36;Alan|42;Grace|45");
    assert_int_equal(rows(c, "query q() { match { $p: Pet } return { $p.name } }", NULL, got, sizeof got), OG_ERR_TYPE);
    expect_reclaimed(rows(c, "query q() { match { $p: Pet } return { $p.name } }", c->c_load1, got, sizeof got),
                     c->c_load1, "Pet");
    expect_reclaimed(rows(c, "query q() { match { $a: Person $a owns $p } return { $p.name } }", c->c_load1, got, sizeof got),
                     c->c_load1, NULL);
    /* the earlier commit's untouched tables still read */
    assert_int_equal(rows(c, "query q() { match { $p: Person { name: \"Ada\" } } return { $p.nick } }", c->c_load1, got, sizeof got), OG_OK);
    assert_string_equal(got, "countess");
}

static void soft_drops_keep_history(void **state)
{
    ctx *c = *state;
    char dir[64], got[256];
    head_table(c, "Person", dir);
    size_t data_before = count_keys(c, dir, "data/");
    og_receipt r;
    assert_int_equal(apply(c, NO_NICK, 0, &r), OG_OK);
    assert_int_equal(r.published, 1);
    assert_int_equal(r.reclaimed_tables + r.reclaimed_versions + r.reclaimed_files + r.reclaimed_bytes, 0);
    assert_int_equal(count_versions(c, dir, NULL), 5);
    assert_int_equal(count_keys(c, dir, "data/"), data_before); /* nothing rewritten */
    assert_int_equal(rows(c, "query q() { match { $p: Person { name: \"Ada\" } } return { $p.nick } }", c->c_mutate, got, sizeof got), OG_OK);
    assert_string_equal(got, "countess");
    /* a soft type drop keeps the table directory and its reads at earlier commits */
    char pet[64];
    head_table(c, "Pet", pet);
    size_t pet_keys = count_keys(c, pet, "");
    const char *bare = "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n";
    assert_int_equal(apply(c, bare, 0, &r), OG_OK);
    assert_int_equal(r.reclaimed_tables, 0);
    assert_int_equal(count_keys(c, pet, ""), pet_keys);
    assert_int_equal(rows(c, "query q() { match { $p: Pet } return { $p.name } }", c->c_load1, got, sizeof got), OG_OK);
    assert_string_equal(got, "Rex");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(hard_property_drop_rewrites_and_reclaims, setup, teardown),
        cmocka_unit_test_setup_teardown(hard_type_drop_removes_the_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(soft_drops_keep_history, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
