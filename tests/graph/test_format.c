/*
 * test_format.c — the format stamp and init: a missing, unknown, newer or unreadable stamp is
 * refused with the right typed error; init twice is already_exists; an interrupted init (stamp
 * only) is reported by open and finished by a second init; the genesis commit and main's
 * create entry have the documented shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "graph_testutil.h"

static og_status open_with_stamp(const char *stamp, og_graph **g)
{
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    if (stamp) assert_int_equal(og_store_put(st, "_graph/format.json", stamp, strlen(stamp)), OG_OK);
    *g = NULL;
    og_status s = og_graph_open(g, st, NULL);
    og_graph_close(*g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
    return s;
}

static void missing_stamp_is_not_found(void **state)
{
    (void)state;
    og_graph *g;
    assert_int_equal(open_with_stamp(NULL, &g), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "format.json"));
    assert_non_null(strstr(og_error_message(), "init"));
}

static void newer_version_is_refused(void **state)
{
    (void)state;
    og_graph *g;
    assert_int_equal(open_with_stamp("{\"format\":\"omnigraph\",\"storage_version\":2}", &g), OG_ERR_UNSUPPORTED_VERSION);
    assert_non_null(strstr(og_error_message(), "upgrade"));
}

static void unknown_versions_are_refused(void **state)
{
    (void)state;
    og_graph *g;
    assert_int_equal(open_with_stamp("{\"format\":\"omnigraph\",\"storage_version\":0}", &g), OG_ERR_UNSUPPORTED_VERSION);
    assert_int_equal(open_with_stamp("{\"format\":\"omnigraph\",\"storage_version\":\"1\"}", &g),
                     OG_ERR_UNSUPPORTED_VERSION);
    assert_int_equal(open_with_stamp("{\"format\":\"omnigraph\"}", &g), OG_ERR_UNSUPPORTED_VERSION);
    assert_int_equal(open_with_stamp("{\"format\":\"lance\",\"storage_version\":1}", &g), OG_ERR_UNSUPPORTED_VERSION);
}

static void unreadable_stamp_is_corrupt(void **state)
{
    (void)state;
    og_graph *g;
    assert_int_equal(open_with_stamp("not json", &g), OG_ERR_CORRUPT);
    assert_int_equal(open_with_stamp("[1,2]", &g), OG_ERR_CORRUPT);
}

static void init_twice_is_already_exists(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    og_graph *g = tu_init(st);
    og_graph_close(g);
    og_graph_init_opts io = {TEST_SCHEMA, strlen(TEST_SCHEMA), NULL, 0, NULL, NULL};
    assert_int_equal(og_graph_init(&g, st, &io, NULL), OG_ERR_ALREADY_EXISTS);
    assert_null(g);
    g = tu_open(st);
    og_graph_close(g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

static void init_over_newer_stamp_is_refused(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    const char *stamp = "{\"format\":\"omnigraph\",\"storage_version\":9}";
    assert_int_equal(og_store_put(st, "_graph/format.json", stamp, strlen(stamp)), OG_OK);
    og_graph *g;
    og_graph_init_opts io = {TEST_SCHEMA, strlen(TEST_SCHEMA), NULL, 0, NULL, NULL};
    assert_int_equal(og_graph_init(&g, st, &io, NULL), OG_ERR_UNSUPPORTED_VERSION);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

static void interrupted_init_is_reported_and_finished_by_init(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    const char *stamp = "{\"format\":\"omnigraph\",\"storage_version\":1}";
    assert_int_equal(og_store_put(st, "_graph/format.json", stamp, strlen(stamp)), OG_OK);
    og_graph *g;
    assert_int_equal(og_graph_open(&g, st, NULL), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "interrupted"));
    g = tu_init(st);
    og_graph_close(g);
    g = tu_open(st);
    og_graph_close(g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

static void genesis_has_documented_shape(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    og_graph *g = tu_init(st);
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(g, "main", &e), OG_OK);
    assert_int_equal(e.seq, 1);
    assert_int_equal(e.kind, OG_REF_CREATE);
    assert_string_equal(e.branch, "main");
    assert_true(og_ulid_valid(e.incarnation));
    assert_string_equal(e.previous, "");
    og_bytes b = {0};
    assert_int_equal(og_store_get(st, "_graph/refs/main/18446744073709551614.json", &b), OG_OK);
    og_bytes_free(&b);
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_branch(g, "main", &s), OG_OK);
    const og_commit *c = og_snapshot_commit(s);
    assert_int_equal(c->kind, OG_OP_INIT);
    assert_int_equal(c->nparents, 0);
    assert_string_equal(c->actor, "tester");
    assert_string_equal(c->message, "genesis");
    char id[OG_SCHEMA_ID_LEN + 1];
    assert_int_equal(og_sha256_hex(TEST_SCHEMA, strlen(TEST_SCHEMA), id), OG_OK);
    assert_string_equal(og_snapshot_schema_id(s), id);
    assert_int_equal(og_snapshot_schema(s)->len, strlen(TEST_SCHEMA));
    assert_memory_equal(og_snapshot_schema(s)->data, TEST_SCHEMA, strlen(TEST_SCHEMA));
    const og_table_ref *t = og_snapshot_table(s, "t_person");
    assert_non_null(t);
    assert_int_equal(t->version, 1);
    og_snapshot_free(s);
    og_graph_close(g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_stamp_is_not_found),
        cmocka_unit_test(newer_version_is_refused),
        cmocka_unit_test(unknown_versions_are_refused),
        cmocka_unit_test(unreadable_stamp_is_corrupt),
        cmocka_unit_test(init_twice_is_already_exists),
        cmocka_unit_test(init_over_newer_stamp_is_refused),
        cmocka_unit_test(interrupted_init_is_reported_and_finished_by_init),
        cmocka_unit_test(genesis_has_documented_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
