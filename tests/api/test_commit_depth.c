/*
 * test_commit_depth.c — a commit's first-parent depth (graph_manifest_version), which receipts,
 * snapshots and `commit show|list` report, is the same whichever handle asks and in whatever
 * order: the handle that wrote the commits (its remembered depths), a fresh handle asked newest
 * first, a fresh handle asked oldest first, commits on a branch forked from an old commit, and
 * `commit list` beside `commit show`.  And a handle that has remembered its commits' depths
 * answers later ones without reading the history again (one commit read per new commit).
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

#define NMUT 12

typedef struct ctx {
    char dir[64], uri[96];
    og_db *db;
    char commits[NMUT + 1][32]; /* [0] = init's commit */
} ctx;

static const char *SCHEMA = "node Person { name: String @key }\n";
static const char *ADD = "query add($n: String) { insert Person { name: $n } }\n";

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-depth-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    if (og_db_init(&c->db, c->uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
    free(c);
    return 0;
}

static long depth_of(og_db *db, const char *commit)
{
    char *out = NULL;
    assert_int_equal(og_db_commit_show(&out, db, commit), OG_OK);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    long d = (long)json_integer_value(json_object_get(j, "depth"));
    json_decref(j);
    og_free(out);
    return d;
}

static void add(ctx *c, const char *name, const char *branch, char commit[32])
{
    og_receipt r;
    char params[64];
    snprintf(params, sizeof params, "{\"n\": \"%s\"}", name);
    assert_int_equal(og_db_mutate(&r, c->db, ADD, strlen(ADD), "add", params, branch, NULL), OG_OK);
    assert_true(r.published);
    memcpy(commit, r.commit, 32);
}

static void write_history(ctx *c)
{
    char *out = NULL;
    assert_int_equal(og_db_commit_list(&out, c->db, "main", 0), OG_OK);
    json_t *j = json_loads(out, 0, NULL);
    og_free(out);
    json_t *cs = json_object_get(j, "commits");
    assert_int_equal(json_array_size(cs), 1);
    snprintf(c->commits[0], 32, "%s", json_string_value(json_object_get(json_array_get(cs, 0), "id")));
    json_decref(j);
    for (int i = 1; i <= NMUT; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        add(c, name, "main", c->commits[i]);
    }
}

static void depths_agree_across_handles_and_orders(void **state)
{
    ctx *c = *state;
    write_history(c);
    /* the writing handle: newest first (its memo), then every one */
    for (int i = NMUT; i >= 0; i--) assert_int_equal(depth_of(c->db, c->commits[i]), i + 1);
    /* a fresh handle, oldest first: each walk is the full one, or stops at a remembered parent */
    og_db *b;
    assert_int_equal(og_db_open(&b, c->uri, NULL), OG_OK);
    for (int i = 0; i <= NMUT; i++) assert_int_equal(depth_of(b, c->commits[i]), i + 1);
    og_db_close(b);
    /* a fresh handle, a middle commit first, then the head, then older ones */
    assert_int_equal(og_db_open(&b, c->uri, NULL), OG_OK);
    assert_int_equal(depth_of(b, c->commits[5]), 6);
    assert_int_equal(depth_of(b, c->commits[NMUT]), NMUT + 1);
    assert_int_equal(depth_of(b, c->commits[2]), 3);
    og_db_close(b);
}

static void a_branch_from_an_old_commit_counts_from_there(void **state)
{
    ctx *c = *state;
    write_history(c);
    char head[32], b1[32], b2[32];
    assert_int_equal(og_db_branch_create(c->db, "dev", NULL, c->commits[3], head), OG_OK);
    add(c, "d1", "dev", b1);
    add(c, "d2", "dev", b2);
    assert_int_equal(depth_of(c->db, b1), 5);
    assert_int_equal(depth_of(c->db, b2), 6);
    og_db *f;
    assert_int_equal(og_db_open(&f, c->uri, NULL), OG_OK);
    assert_int_equal(depth_of(f, b2), 6);
    assert_int_equal(depth_of(f, c->commits[NMUT]), NMUT + 1);
    og_db_close(f);
}

static void commit_list_depths_match_commit_show(void **state)
{
    ctx *c = *state;
    write_history(c);
    og_db *f;
    assert_int_equal(og_db_open(&f, c->uri, NULL), OG_OK);
    for (size_t limit = 1; limit <= NMUT + 2; limit += 4) {
        char *out = NULL;
        assert_int_equal(og_db_commit_list(&out, f, "main", limit), OG_OK);
        json_t *j = json_loads(out, 0, NULL);
        og_free(out);
        json_t *cs = json_object_get(j, "commits");
        assert_int_equal(json_array_size(cs), limit < NMUT + 1 ? limit : NMUT + 1);
        for (size_t i = 0; i < json_array_size(cs); i++) {
            json_t *e = json_array_get(cs, i);
            const char *id = json_string_value(json_object_get(e, "id"));
            assert_int_equal(json_integer_value(json_object_get(e, "depth")), NMUT + 1 - (long)i);
            assert_int_equal(depth_of(c->db, id), NMUT + 1 - (long)i);
        }
        json_decref(j);
    }
    og_db_close(f);
}

/* Once a handle knows the head's depth, a later commit's is found by reading that commit only.
 * The handle's commit cache is kept to nothing (cache_bytes 1), so every commit read goes to
 * the store; removing the older commit objects then changes nothing for it, while a fresh
 * handle's walk stops at the gap (as after cleanup) and reports a smaller depth. */
static void a_remembered_depth_is_not_walked_again(void **state)
{
    ctx *c = *state;
    write_history(c);
    og_db *a;
    og_open_opts o = {.cache_bytes = 1};
    assert_int_equal(og_db_open(&a, c->uri, &o), OG_OK);
    assert_int_equal(depth_of(a, c->commits[NMUT]), NMUT + 1);
    char path[256];
    for (int i = 1; i < NMUT; i++) {
        snprintf(path, sizeof path, "%s/_graph/commits/%s.json", c->uri, c->commits[i]);
        assert_int_equal(unlink(path), 0);
    }
    og_receipt r;
    assert_int_equal(og_db_mutate(&r, a, ADD, strlen(ADD), "add", "{\"n\": \"later\"}", "main", NULL), OG_OK);
    assert_int_equal(depth_of(a, r.commit), NMUT + 2);
    og_db_close(a);
    og_db *f;
    assert_int_equal(og_db_open(&f, c->uri, NULL), OG_OK);
    assert_int_equal(depth_of(f, r.commit), 2); /* the new commit and the head before it */
    og_db_close(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(depths_agree_across_handles_and_orders, setup, teardown),
        cmocka_unit_test_setup_teardown(a_branch_from_an_old_commit_counts_from_there, setup, teardown),
        cmocka_unit_test_setup_teardown(commit_list_depths_match_commit_show, setup, teardown),
        cmocka_unit_test_setup_teardown(a_remembered_depth_is_not_walked_again, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
