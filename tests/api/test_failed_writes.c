/*
 * test_failed_writes.c — a failed load or mutation deletes what it wrote before returning its
 * error (issue 16; docs/maintenance.md "Failed writes"): the store's key set after the failure
 * is exactly the key set before it.  Cases: a bad row after many good ones (the load has
 * flushed fragments by then), an edge to a missing node (found after the flushes), an
 * injected I/O error after all effects were written (OG_FAULT_ERROR=graph.after_effects) for
 * a load and for a mutation; then a good write still works and adds only its own files.
 * And a key lookup that fails to read (OG_FAULT_ERROR=tableview.keys) is an error, never
 * "no such key": an insert, update, delete or merge-load of an existing key then fails with
 * OG_ERR_IO and changes nothing (docs/invariants.md #13).
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
#include "store/store.h"

typedef struct ctx {
    char dir[64], uri[96], data[96];
    og_db *db;
    og_store *st;
} ctx;

static const char *SCHEMA = "node P { name: String @key  n: I32? }\nedge K: P -> P\n";

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-failw-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    snprintf(c->data, sizeof c->data, "%s/in.jsonl", c->dir);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "0", 1);
    setenv("OG_LOAD_FLUSH_ROWS", "1000", 1);
    if (og_db_init(&c->db, c->uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    if (og_store_open(&c->st, c->uri) != OG_OK) return -1;
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
    if (system(cmd) != 0) fprintf(stderr, "rm failed\n");
    free(c);
    unsetenv("OG_LOAD_FLUSH_ROWS");
    unsetenv("OG_FAULT_ERROR");
    return 0;
}

static char *keyset(ctx *c)
{
    og_keylist kl;
    assert_int_equal(og_store_list(c->st, "", NULL, 0, &kl), OG_OK);
    size_t n = 1;
    for (size_t i = 0; i < kl.count; i++) n += strlen(kl.keys[i]) + 1;
    char *s = malloc(n), *p = s;
    for (size_t i = 0; i < kl.count; i++) p += sprintf(p, "%s\n", kl.keys[i]);
    *p = '\0';
    og_keylist_free(&kl);
    return s;
}

/* n good node records, then `tail` (may be NULL). */
static void write_data(ctx *c, int first, int n, const char *tail)
{
    FILE *f = fopen(c->data, "w");
    assert_non_null(f);
    for (int i = first; i < first + n; i++) fprintf(f, "{\"type\":\"P\",\"data\":{\"name\":\"p%d\",\"n\":%d}}\n", i, i);
    if (tail) fputs(tail, f);
    fclose(f);
}

static og_status load(ctx *c)
{
    og_load_opts o;
    memset(&o, 0, sizeof o);
    o.mode = OG_LOAD_MERGE;
    og_receipt r;
    return og_db_load(&r, c->db, c->data, &o);
}

static void a_failed_load_leaves_the_key_set_as_it_was(void **state)
{
    ctx *c = *state;
    write_data(c, 0, 50, NULL);
    assert_int_equal(load(c), OG_OK);
    char *before = keyset(c);
    /* a bad row after 20,000 good ones: 20 fragments were flushed before it is read */
    write_data(c, 100, 20000, "{\"type\":\"P\",\"data\":{\"name\":\"bad\",\"n\":\"x\"}}\n");
    assert_int_equal(load(c), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "in.jsonl:20001"));
    char *after = keyset(c);
    assert_string_equal(before, after);
    free(after);
    /* an edge to a node that does not exist: found after every flush */
    write_data(c, 100, 5000, "{\"edge\":\"K\",\"from\":\"p100\",\"to\":\"nobody\"}\n");
    assert_int_not_equal(load(c), OG_OK);
    after = keyset(c);
    assert_string_equal(before, after);
    free(after);
    /* an injected I/O error once every effect is written */
    setenv("OG_FAULT_ERROR", "graph.after_effects", 1);
    write_data(c, 100, 3000, NULL);
    assert_int_equal(load(c), OG_ERR_IO);
    assert_non_null(strstr(og_error_message(), "injected"));
    after = keyset(c);
    assert_string_equal(before, after);
    free(after);
    /* the same for a mutation */
    const char *m = "query add($n: String) { insert P { name: $n, n: 1 } }";
    og_receipt r;
    assert_int_equal(og_db_mutate(&r, c->db, m, strlen(m), NULL, "{\"n\":\"z\"}", NULL, NULL), OG_ERR_IO);
    after = keyset(c);
    assert_string_equal(before, after);
    free(after);
    unsetenv("OG_FAULT_ERROR");
    /* a good load afterwards works */
    write_data(c, 100, 10, NULL);
    assert_int_equal(load(c), OG_OK);
    og_rows *rows;
    const char *q = "query q() { match { $p: P } return { count($p) as n } }";
    assert_int_equal(og_db_query(&rows, c->db, q, strlen(q), NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_rows_int(rows, 0, 0), 60);
    og_rows_free(rows);
    free(before);
}

static og_status mutate(ctx *c, const char *m, const char *params)
{
    og_receipt r;
    return og_db_mutate(&r, c->db, m, strlen(m), NULL, params, NULL, NULL);
}

static int64_t query_int(ctx *c, const char *q)
{
    og_rows *rows;
    assert_int_equal(og_db_query(&rows, c->db, q, strlen(q), NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_rows_count(rows), 1);
    int64_t v = og_rows_int(rows, 0, 0);
    og_rows_free(rows);
    return v;
}

static void a_failed_key_lookup_is_an_error_not_absence(void **state)
{
    ctx *c = *state;
    write_data(c, 0, 50, NULL);
    assert_int_equal(load(c), OG_OK);
    char *before = keyset(c);
    /* a fresh handle: its views have read no key map yet */
    og_db_close(c->db);
    assert_int_equal(og_db_open(&c->db, c->uri, NULL), OG_OK);
    setenv("OG_FAULT_ERROR", "tableview.keys", 1);
    /* each of these would be wrong if the failed read meant "absent": an insert of p3 as a
     * second row, an update or delete that matches nothing and succeeds, a merge-load that
     * adds p3 again */
    assert_int_equal(mutate(c, "query a() { insert P { name: \"p3\", n: 99 } }", NULL), OG_ERR_IO);
    assert_non_null(strstr(og_error_message(), "injected"));
    assert_int_equal(mutate(c, "query u() { update P set { n: 7 } where name = \"p3\" }", NULL), OG_ERR_IO);
    assert_int_equal(mutate(c, "query d() { delete P where name = \"p3\" }", NULL), OG_ERR_IO);
    write_data(c, 3, 1, NULL);
    assert_int_equal(load(c), OG_ERR_IO);
    char *after = keyset(c);
    assert_string_equal(before, after);
    free(after);
    unsetenv("OG_FAULT_ERROR");
    assert_int_equal(query_int(c, "query q() { match { $p: P } return { count($p) as n } }"), 50);
    assert_int_equal(query_int(c, "query q() { match { $p: P { name: \"p3\" } } return { $p.n } }"), 3);
    free(before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_failed_load_leaves_the_key_set_as_it_was, setup, teardown),
        cmocka_unit_test_setup_teardown(a_failed_key_lookup_is_an_error_not_absence, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
