/*
 * test_tableview.c — table views over real Lance tables in a temporary local store: a view
 * sees exactly its version's live rows (later deletes and appends leave it alone), whole
 * columns equal what was written across fragments, batches and deletions, find_id hits and
 * misses, a field added later reads as null for old fragments, edge topologies match the
 * expected adjacency and skip dangling edges, concurrent lazy loads agree, the cache shares
 * one view per version, a column loaded on two threads equals one loaded on one, and key maps
 * opened as probes reach them answer as the in-memory id map does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include <unistd.h>

#include "engine/dictcol.h"
#include "engine/tableview.h"
#include "store/store.h"
#include "util/error.h"
#include "../store/store_fixture.h"

#define OK(expr)                                                                       \
    do {                                                                               \
        og_status ok_st_ = (expr);                                                     \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message()); \
    } while (0)

static const uint64_t *addrs_of(og_tableview *v)
{
    const uint64_t *a = NULL;
    assert_int_equal(og_tableview_addrs(v, &a), OG_OK);
    return a;
}

static const og_type T_STR = {OG_T_STRING, OG_T_NULL, 0};
static const og_type T_I64 = {OG_T_I64, OG_T_NULL, 0};
static const og_type T_LSTR = {OG_T_LIST, OG_T_STRING, 0};

typedef fixture fx; /* a fresh local store (tests/store/store_fixture.h) */

static int setup(void **state) { return store_fixture_open(state, "/tmp/og-tableview-XXXXXX"); }

static og_table *open_table(fx *f, const char *dir)
{
    og_table *t = NULL;
    OK(og_table_open(&t, f->st, dir));
    return t;
}

/* ---------------------------------------------------------------------------------------- */
/* A "rows" table: id (0), n I64 (1), s String (2), tags [String] (3, child 4), all but id    */
/* nullable.  Row k: id "r<k>"; n = 10k, null when k % 5 == 2; s = "s<k>", null when          */
/* k % 4 == 3; tags null when k % 3 == 0, [] when k % 3 == 1, ["t<k>", "u"] when k % 3 == 2.   */
/* ---------------------------------------------------------------------------------------- */

static void rows_schema(og_lance_schema *s)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    OK(og_lance_schema_add_column(s, "id", T_STR, 0, -1, 0, 1));
    OK(og_lance_schema_add_column(s, "n", T_I64, 1, -1, 1, 0));
    OK(og_lance_schema_add_column(s, "s", T_STR, 2, -1, 1, 0));
    OK(og_lance_schema_add_column(s, "tags", T_LSTR, 3, 4, 1, 0));
}

/* Empty columns of the rows schema: id, n, s, tags. */
static void rows_columns(og_vector c[4])
{
    OK(og_vector_init(&c[0], T_STR));
    OK(og_vector_init(&c[1], T_I64));
    OK(og_vector_init(&c[2], T_STR));
    OK(og_vector_init(&c[3], T_LSTR));
}

static void append_rows(og_table_txn *x, int start, int count, uint64_t *frag)
{
    og_vector c[4];
    rows_columns(c);
    for (int k = start; k < start + count; k++) {
        char b[32];
        int n = snprintf(b, sizeof b, "r%d", k);
        OK(og_vector_append_bytes(&c[0], b, (size_t)n));
        if (k % 5 == 2) OK(og_vector_append_null(&c[1]));
        else OK(og_vector_append_i64(&c[1], (int64_t)k * 10));
        if (k % 4 == 3) {
            OK(og_vector_append_null(&c[2]));
        } else {
            n = snprintf(b, sizeof b, "s%d", k);
            OK(og_vector_append_bytes(&c[2], b, (size_t)n));
        }
        if (k % 3 == 0) {
            OK(og_vector_append_null(&c[3]));
        } else {
            if (k % 3 == 2) {
                n = snprintf(b, sizeof b, "t%d", k);
                OK(og_vector_append_bytes(c[3].child, b, (size_t)n));
                OK(og_vector_append_bytes(c[3].child, "u", 1));
            }
            OK(og_vector_append_list_end(&c[3]));
        }
    }
    OK(og_table_txn_append(x, c, 4, frag));
    for (int i = 0; i < 4; i++) og_vector_free(&c[i]);
}

static int str_is(const og_vector *v, size_t i, const char *want)
{
    size_t n;
    const uint8_t *p = og_vector_get_bytes(v, i, &n);
    return n == strlen(want) && memcmp(p, want, n) == 0;
}

/* Checks view row r against model row k. */
static void check_row(og_tableview *v, size_t r, int k)
{
    const og_vector *id, *n, *s, *tags;
    OK(og_tableview_column(v, 0, &id));
    OK(og_tableview_column(v, 1, &n));
    OK(og_tableview_column(v, 2, &s));
    OK(og_tableview_column(v, 3, &tags));
    char b[32];
    snprintf(b, sizeof b, "r%d", k);
    if (og_vector_is_null(id, r) || !str_is(id, r, b)) fail_msg("row %zu: id is not %s", r, b);
    if (k % 5 == 2) {
        assert_true(og_vector_is_null(n, r));
    } else {
        assert_false(og_vector_is_null(n, r));
        assert_int_equal(og_vector_get_i64(n, r), (int64_t)k * 10);
    }
    if (k % 4 == 3) {
        assert_true(og_vector_is_null(s, r));
    } else {
        snprintf(b, sizeof b, "s%d", k);
        assert_false(og_vector_is_null(s, r));
        assert_true(str_is(s, r, b));
    }
    if (k % 3 == 0) {
        assert_true(og_vector_is_null(tags, r));
        return;
    }
    assert_false(og_vector_is_null(tags, r));
    size_t lb, le;
    og_vector_get_list(tags, r, &lb, &le);
    if (k % 3 == 1) {
        assert_int_equal(le - lb, 0);
    } else {
        assert_int_equal(le - lb, 2);
        snprintf(b, sizeof b, "t%d", k);
        assert_true(str_is(tags->child, lb, b));
        assert_true(str_is(tags->child, lb + 1, "u"));
    }
}

/* Writes a version of table t on `base` (0 = create with the rows schema). */
static og_table_txn *begin(og_table *t, uint64_t base)
{
    og_table_txn *x = NULL;
    og_lance_schema s;
    rows_schema(&s);
    OK(og_table_txn_begin(&x, t, base, base ? NULL : &s));
    og_lance_schema_free(&s);
    return x;
}

static uint64_t commit(og_table_txn *x)
{
    uint64_t v = 0;
    OK(og_table_txn_commit(x, &v));
    og_table_txn_free(x);
    return v;
}

static void a_view_sees_exactly_its_versions_live_rows(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "rows");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 5, NULL);
    append_rows(x, 5, 3, NULL);
    uint64_t v1 = commit(x);

    og_tableview *view1;
    OK(og_tableview_open(&view1, t, v1));
    assert_int_equal(og_tableview_version(view1), v1);
    assert_string_equal(og_tableview_dir(view1), "rows");

    /* v2: delete rows 1 and 3 of fragment 0 and row 0 of fragment 1, append 2 rows */
    x = begin(t, v1);
    uint32_t d0[] = {1, 3}, d1[] = {0};
    OK(og_table_txn_delete(x, 0, d0, 2));
    OK(og_table_txn_delete(x, 1, d1, 1));
    append_rows(x, 8, 2, NULL);
    uint64_t v2 = commit(x);
    og_tableview *view2;
    OK(og_tableview_open(&view2, t, v2));
    og_table_close(t); /* views keep their own handles */

    /* The old view, loaded only now, still shows v1. */
    assert_int_equal(og_tableview_rows(view1), 8);
    const uint64_t *a1 = addrs_of(view1);
    for (size_t r = 0; r < 8; r++) {
        assert_int_equal(a1[r], r < 5 ? OG_ROW_ADDR(0, r) : OG_ROW_ADDR(1, r - 5));
        check_row(view1, r, (int)r);
    }
    int want2[] = {0, 2, 4, 6, 7, 8, 9};
    uint64_t addr2[] = {OG_ROW_ADDR(0, 0), OG_ROW_ADDR(0, 2), OG_ROW_ADDR(0, 4), OG_ROW_ADDR(1, 1),
                        OG_ROW_ADDR(1, 2), OG_ROW_ADDR(2, 0), OG_ROW_ADDR(2, 1)};
    assert_int_equal(og_tableview_rows(view2), 7);
    const uint64_t *a2 = addrs_of(view2);
    for (size_t r = 0; r < 7; r++) {
        assert_int_equal(a2[r], addr2[r]);
        check_row(view2, r, want2[r]);
    }
    og_tableview_release(view1);
    og_tableview_release(view2);
}

static void rows_follow_manifest_fragment_order_after_a_compaction(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "compacted");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 3, NULL); /* fragment 0 */
    append_rows(x, 3, 3, NULL); /* fragment 1 */
    uint64_t v1 = commit(x);
    x = begin(t, v1);
    uint32_t d[] = {1};
    OK(og_table_txn_delete(x, 0, d, 1));
    uint64_t frag = 0, which[] = {0};
    OK(og_table_txn_compact(x, which, 1, &frag)); /* fragment 2 takes fragment 0's place */
    assert_int_equal(frag, 2);
    uint64_t v2 = commit(x);
    og_tableview *v;
    OK(og_tableview_open(&v, t, v2));
    int want[] = {0, 2, 3, 4, 5};
    uint64_t addr[] = {OG_ROW_ADDR(2, 0), OG_ROW_ADDR(2, 1), OG_ROW_ADDR(1, 0), OG_ROW_ADDR(1, 1), OG_ROW_ADDR(1, 2)};
    assert_int_equal(og_tableview_rows(v), 5);
    for (size_t r = 0; r < 5; r++) {
        assert_int_equal(addrs_of(v)[r], addr[r]);
        check_row(v, r, want[r]);
    }
    og_tableview_release(v);
    og_table_close(t);
}

static void columns_equal_what_was_written_across_fragments_batches_and_deletions(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "big");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 10, NULL);     /* fragment 0 */
    append_rows(x, 10, 9000, NULL);  /* fragment 1: more than one 4096-row scan batch */
    append_rows(x, 9010, 7, NULL);   /* fragment 2 */
    uint64_t v1 = commit(x);
    x = begin(t, v1);
    uint32_t d0[] = {0, 9};                      /* both ends of fragment 0 */
    uint32_t d1[] = {0, 4095, 4096, 4097, 8999}; /* around the batch boundary and the end */
    uint32_t d2[] = {0, 1, 2, 3, 4, 5, 6};       /* all of fragment 2 */
    OK(og_table_txn_delete(x, 0, d0, 2));
    OK(og_table_txn_delete(x, 1, d1, 5));
    OK(og_table_txn_delete(x, 2, d2, 7));
    append_rows(x, 20000, 3, NULL); /* fragment 3 */
    uint64_t v2 = commit(x);

    og_tableview *v;
    OK(og_tableview_open(&v, t, v2));
    size_t want_rows = 8 + (9000 - 5) + 0 + 3;
    assert_int_equal(og_tableview_rows(v), want_rows);
    size_t before = og_tableview_bytes(v);
    const og_vector *col;
    OK(og_tableview_column(v, 2, &col));
    assert_int_equal(col->len, want_rows);
    assert_true(og_tableview_bytes(v) > before);
    assert_true(og_tableview_estimate_bytes(v) >= before);

    size_t r = 0;
    for (int k = 0; k < 20003; k++) {
        if (k >= 9017 && k < 20000) continue;
        if (k == 0 || k == 9) continue;
        if (k >= 10 && k < 9010) {
            int off = k - 10;
            if (off == 0 || off == 4095 || off == 4096 || off == 4097 || off == 8999) continue;
        }
        if (k >= 9010 && k < 9017) continue;
        check_row(v, r, k);
        r++;
    }
    assert_int_equal(r, want_rows);

    /* A second call hands back the same vector. */
    const og_vector *again;
    OK(og_tableview_column(v, 2, &again));
    assert_ptr_equal(again, col);

    /* Unknown and child field ids are typed errors. */
    assert_int_equal(og_tableview_column(v, 77, &col), OG_ERR_NOT_FOUND);
    assert_int_equal(og_tableview_column(v, 4, &col), OG_ERR_INVALID);
    int32_t fid = -1;
    OK(og_tableview_field_id(v, "tags", &fid));
    assert_int_equal(fid, 3);
    assert_int_equal(og_tableview_field_id(v, "nope", &fid), OG_ERR_NOT_FOUND);
    og_tableview_release(v);
    og_table_close(t);
}

/* Without deletions a whole column is checked against the view's numbering from the manifest
 * alone (the row addresses are never listed for it) and its buffers are allocated at their
 * final size: fixed-width and offsets exactly, string bytes trimmed to what they hold. */
static void a_column_without_deletions_is_sized_exactly_and_needs_no_row_addresses(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "nodel");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 10, NULL);    /* fragment 0 */
    append_rows(x, 10, 9000, NULL); /* fragment 1: several scan batches */
    append_rows(x, 9010, 7, NULL);  /* fragment 2 */
    uint64_t v1 = commit(x);
    og_tableview *v;
    OK(og_tableview_open(&v, t, v1));
    size_t rows = og_tableview_rows(v);
    assert_int_equal(rows, 9017);
    for (size_t r = 0; r < rows; r++) check_row(v, r, (int)r);
    const og_vector *n, *s;
    OK(og_tableview_column(v, 1, &n));
    OK(og_tableview_column(v, 2, &s));
    assert_int_equal(n->len, rows);
    assert_int_equal(n->cap_rows, rows);
    assert_int_equal(n->null_count, (rows + 2) / 5); /* k % 5 == 2 */
    assert_int_equal(s->cap_rows, rows);
    assert_int_equal(s->cap_bytes, (size_t)s->offsets[rows]);
    assert_int_equal(s->null_count, (rows + 1) / 4); /* k % 4 == 3 */
    size_t before = og_tableview_bytes(v);
    (void)addrs_of(v); /* listed only now: the view grows by them */
    assert_int_equal(og_tableview_bytes(v) - before, rows * sizeof(uint64_t));
    og_tableview_release(v);
    og_table_close(t);
}

/* Point gathers read rows from the data files until the rows they fetched reach 1/256 of the
 * view's rows (at least 16); only then is the column loaded whole, so a process looking up a
 * few keys of a big table never holds its columns (tableview.c og_tableview_gather;
 * docs/benchmarks.md "Scaling").  Answers are the same on both paths. */
static void point_gathers_load_a_column_only_after_a_share_of_its_rows(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "points");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 9000, NULL);
    append_rows(x, 9000, 17, NULL);
    uint64_t v1 = commit(x);
    og_tableview *v;
    OK(og_tableview_open(&v, t, v1));
    size_t load_at = 9017 / 256; /* 35 */
    size_t before = og_tableview_bytes(v);
    for (size_t k = 0; k <= load_at; k++) {
        uint32_t row = (uint32_t)(k * 257 % 9017);
        og_vector got;
        OK(og_tableview_gather(v, 1, &row, 1, &got));
        assert_int_equal(got.len, 1);
        if (row % 5 == 2) assert_true(og_vector_is_null(&got, 0));
        else assert_int_equal(og_vector_get_i64(&got, 0), (int64_t)row * 10);
        og_vector_free(&got);
        if (k < load_at) assert_int_equal(og_tableview_bytes(v), before); /* read from the file */
        else assert_true(og_tableview_bytes(v) >= before + 9017 * sizeof(int64_t)); /* loaded */
    }
    /* a batch counts its rows: 40 rows at once, then the next gather loads the column */
    uint32_t rows[40];
    for (size_t k = 0; k < 40; k++) rows[k] = (uint32_t)(9016 - k * 200);
    og_vector got;
    before = og_tableview_bytes(v);
    OK(og_tableview_gather(v, 2, rows, 40, &got));
    assert_int_equal(og_tableview_bytes(v), before);
    for (size_t k = 0; k < 40; k++) {
        char want[16];
        snprintf(want, sizeof want, "s%u", rows[k]);
        if (rows[k] % 4 == 3) assert_true(og_vector_is_null(&got, k));
        else assert_true(str_is(&got, k, want));
    }
    og_vector_free(&got);
    OK(og_tableview_gather(v, 2, rows, 1, &got));
    assert_true(str_is(&got, 0, "s9016"));
    og_vector_free(&got);
    assert_true(og_tableview_bytes(v) > before + 9017);
    og_tableview_release(v);
    og_table_close(t);
}

static void find_id_hits_live_rows_and_misses_deleted_and_unknown_ids(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "ids");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 4, NULL);
    append_rows(x, 4, 4, NULL);
    uint64_t v1 = commit(x);
    x = begin(t, v1);
    uint32_t d[] = {1};
    OK(og_table_txn_delete(x, 1, d, 1)); /* r5 */
    uint64_t v2 = commit(x);

    og_tableview *v;
    OK(og_tableview_open(&v, t, v2));
    uint32_t row = 99;
    OK(og_tableview_find_id(v, "r0", 2, &row));
    assert_int_equal(row, 0);
    OK(og_tableview_find_id(v, "r6", 2, &row));
    assert_int_equal(row, 5);
    OK(og_tableview_find_id(v, "r7x", 2, &row)); /* the length counts, not the NUL */
    assert_int_equal(row, 6);
    assert_int_equal(og_tableview_find_id(v, "r5", 2, &row), OG_ERR_NOT_FOUND);
    assert_int_equal(og_tableview_find_id(v, "r8", 2, &row), OG_ERR_NOT_FOUND);
    assert_int_equal(og_tableview_find_id(v, "", 0, &row), OG_ERR_NOT_FOUND);

    og_tableview *old;
    OK(og_tableview_open(&old, t, v1));
    OK(og_tableview_find_id(old, "r5", 2, &row));
    assert_int_equal(row, 5);
    og_tableview_release(old);
    og_tableview_release(v);
    og_table_close(t);
}

/* A view whose data files are gone (its version reclaimed by cleanup while a reader holds the
 * view): a column read and an id lookup fail (OG_ERR_NOT_FOUND) — never a column of nulls, never
 * "no such row" — and og_tableview_has_field still tells the field the version has from one it
 * lacks, which is what callers null on (docs/invariants.md). */
static void a_view_whose_data_files_are_gone_fails_its_reads(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "gone");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 4, NULL);
    uint64_t v1 = commit(x);
    og_tableview *v;
    OK(og_tableview_open(&v, t, v1));
    uint32_t row = 99;
    OK(og_tableview_lookup_id(v, "r9", 2, &row)); /* a miss is no error */
    assert_int_equal(row, OG_TABLEVIEW_NO_ROW);
    og_tableview_release(v);

    og_keylist kl;
    OK(og_store_list(f->st, "", NULL, 0, &kl));
    size_t gone = 0;
    for (size_t i = 0; i < kl.count; i++)
        if (strstr(kl.keys[i], "gone") && strstr(kl.keys[i], "/data/") && strstr(kl.keys[i], ".lance"))
        {
            OK(og_store_delete(f->st, kl.keys[i]));
            gone++;
        }
    og_keylist_free(&kl);
    assert_true(gone > 0);

    OK(og_tableview_open(&v, t, v1));
    assert_true(og_tableview_has_field(v, 2));
    assert_false(og_tableview_has_field(v, 999));
    const og_vector *col = NULL;
    assert_int_equal(og_tableview_column(v, 2, &col), OG_ERR_NOT_FOUND);
    assert_null(col);
    uint32_t rows[] = {0, 2};
    og_vector got;
    assert_int_equal(og_tableview_gather(v, 2, rows, 2, &got), OG_ERR_NOT_FOUND);
    row = 99;
    og_status st = og_tableview_lookup_id(v, "r1", 2, &row);
    if (st == OG_OK) assert_int_equal(row, 1); /* (from a key map that survived) */
    else assert_int_equal(st, OG_ERR_NOT_FOUND);
    og_tableview_release(v);
    og_table_close(t);
}

static void a_field_added_later_reads_as_null_for_old_fragments(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "evolve");
    og_table_txn *x = NULL;
    og_lance_schema s = OG_LANCE_SCHEMA_INIT;
    OK(og_lance_schema_add_column(&s, "id", T_STR, 0, -1, 0, 1));
    OK(og_table_txn_begin(&x, t, 0, &s));
    og_vector c[2];
    OK(og_vector_init(&c[0], T_STR));
    OK(og_vector_append_bytes(&c[0], "a", 1));
    OK(og_vector_append_bytes(&c[0], "b", 1));
    OK(og_table_txn_append(x, c, 1, NULL));
    og_vector_free(&c[0]);
    uint64_t v1 = commit(x);

    OK(og_lance_schema_add_column(&s, "age", T_I64, 5, -1, 1, 0));
    OK(og_table_txn_begin(&x, t, v1, NULL));
    OK(og_table_txn_set_schema(x, &s));
    OK(og_vector_init(&c[0], T_STR));
    OK(og_vector_init(&c[1], T_I64));
    OK(og_vector_append_bytes(&c[0], "c", 1));
    OK(og_vector_append_i64(&c[1], 41));
    OK(og_vector_append_bytes(&c[0], "d", 1));
    OK(og_vector_append_null(&c[1]));
    OK(og_table_txn_append(x, c, 2, NULL));
    og_vector_free(&c[0]);
    og_vector_free(&c[1]);
    uint64_t v2 = commit(x);
    og_lance_schema_free(&s);

    og_tableview *view;
    OK(og_tableview_open(&view, t, v2));
    const og_vector *age;
    OK(og_tableview_column(view, 5, &age));
    assert_int_equal(age->len, 4);
    assert_true(og_vector_is_null(age, 0));
    assert_true(og_vector_is_null(age, 1));
    assert_false(og_vector_is_null(age, 2));
    assert_int_equal(og_vector_get_i64(age, 2), 41);
    assert_true(og_vector_is_null(age, 3));
    assert_int_equal(age->null_count, 3);
    og_tableview_release(view);

    /* The old version has no such field. */
    OK(og_tableview_open(&view, t, v1));
    assert_int_equal(og_tableview_column(view, 5, &age), OG_ERR_NOT_FOUND);
    og_tableview_release(view);
    og_table_close(t);
}

/* ---------------------------------------------------------------------------------------- */
/* Topology                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static uint64_t write_strings(og_table *t, uint64_t base, const char *const *cols[], size_t ncols, size_t n)
{
    og_table_txn *x = NULL;
    if (!base) {
        static const char *names[] = {"id", "src", "dst"};
        og_lance_schema s = OG_LANCE_SCHEMA_INIT;
        for (size_t i = 0; i < ncols; i++)
            OK(og_lance_schema_add_column(&s, names[i], T_STR, (int32_t)i, -1, 0, i == 0));
        OK(og_table_txn_begin(&x, t, 0, &s));
        og_lance_schema_free(&s);
    } else {
        OK(og_table_txn_begin(&x, t, base, NULL));
    }
    og_vector v[3];
    for (size_t i = 0; i < ncols; i++) {
        OK(og_vector_init(&v[i], T_STR));
        for (size_t r = 0; r < n; r++) OK(og_vector_append_bytes(&v[i], cols[i][r], strlen(cols[i][r])));
    }
    OK(og_table_txn_append(x, v, ncols, NULL));
    for (size_t i = 0; i < ncols; i++) og_vector_free(&v[i]);
    return commit(x);
}

/* "nbr/edge nbr/edge ..." of one node in one direction. */
static const char *adj(const og_topology *t, og_dir dir, uint32_t node)
{
    static char out[128];
    const uint32_t *nb, *ed;
    size_t n;
    assert_int_equal(og_topology_edges(t, dir, node, NULL, &nb, &ed, &n), OG_OK);
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(out + at, sizeof out - at, "%s%u/%u", i ? " " : "", nb[i], ed[i]);
    return out;
}

static void topology_matches_the_adjacency_and_skips_dangling_edges(void **state)
{
    fx *f = *state;
    og_table *person = open_table(f, "node/Person");
    og_table *knows = open_table(f, "edge/Knows");
    const char *pid[] = {"a", "b", "c", "d"};
    const char *const *pcols[] = {pid};
    uint64_t pv1 = write_strings(person, 0, pcols, 1, 4);
    /* rows:           0      1      2      3      4           5 */
    const char *eid[] = {"e0", "e1", "e2", "e3", "e4", "e5"};
    const char *src[] = {"a", "a", "b", "c", "ghost", "d"};
    const char *dst[] = {"b", "c", "c", "a", "a", "nobody"};
    const char *const *ecols[] = {eid, src, dst};
    uint64_t kv1 = write_strings(knows, 0, ecols, 3, 6);

    og_tableview *pview, *kview;
    OK(og_tableview_open(&pview, person, pv1));
    OK(og_tableview_open(&kview, knows, kv1));
    const og_topology *topo;
    OK(og_tableview_topology(kview, pview, pview, &topo));
    assert_int_equal(og_topology_edge_count(topo), 4);
    assert_string_equal(adj(topo, OG_DIR_OUT, 0), "1/0 2/1");
    assert_string_equal(adj(topo, OG_DIR_OUT, 1), "2/2");
    assert_string_equal(adj(topo, OG_DIR_OUT, 2), "0/3");
    assert_string_equal(adj(topo, OG_DIR_OUT, 3), "");
    assert_string_equal(adj(topo, OG_DIR_IN, 0), "2/3");
    assert_string_equal(adj(topo, OG_DIR_IN, 2), "0/1 1/2");

    const og_topology *again;
    OK(og_tableview_topology(kview, pview, pview, &again));
    assert_ptr_equal(again, topo);

    /* A later Person version without "b" (and a new "ghost"): its own topology, in which
     * the edges at b are gone and ghost's edge appears; the first one is unchanged. */
    og_table_txn *x;
    OK(og_table_txn_begin(&x, person, pv1, NULL));
    uint32_t del_b[] = {1};
    OK(og_table_txn_delete(x, 0, del_b, 1));
    uint64_t pv2 = commit(x);
    const char *pid2[] = {"ghost"};
    const char *const *pcols2[] = {pid2};
    uint64_t pv3 = write_strings(person, pv2, pcols2, 1, 1);
    og_tableview *pview3;
    OK(og_tableview_open(&pview3, person, pv3));
    assert_int_equal(og_tableview_rows(pview3), 4); /* a c d ghost */
    const og_topology *topo3;
    OK(og_tableview_topology(kview, pview3, pview3, &topo3));
    assert_ptr_not_equal(topo3, topo);
    assert_int_equal(og_topology_edge_count(topo3), 3); /* a->c, c->a, ghost->a */
    assert_string_equal(adj(topo3, OG_DIR_OUT, 0), "1/1");
    assert_string_equal(adj(topo3, OG_DIR_IN, 0), "1/3 3/4");
    assert_string_equal(adj(topo, OG_DIR_OUT, 0), "1/0 2/1");
    const og_topology *first;
    OK(og_tableview_topology(kview, pview, pview, &first));
    assert_ptr_equal(first, topo);

    /* Misuse is a typed error, not a crash. */
    assert_int_equal(og_tableview_topology(kview, kview, pview, &again), OG_ERR_INVALID);
    assert_int_equal(og_tableview_topology(pview, pview3, pview3, &again), OG_ERR_INVALID); /* no src/dst */

    og_tableview_release(pview3);
    og_tableview_release(pview);
    og_tableview_release(kview);
    og_table_close(person);
    og_table_close(knows);
}

static void an_edge_table_with_no_rows_has_an_empty_topology(void **state)
{
    fx *f = *state;
    og_table *person = open_table(f, "P");
    og_table *knows = open_table(f, "K");
    const char *pid[] = {"a"};
    const char *const *pcols[] = {pid};
    uint64_t pv = write_strings(person, 0, pcols, 1, 1);
    const char *e[] = {"e"}, *s[] = {"a"}, *d[] = {"a"};
    const char *const *ecols[] = {e, s, d};
    uint64_t kv = write_strings(knows, 0, ecols, 3, 1);
    og_table_txn *x;
    OK(og_table_txn_begin(&x, knows, kv, NULL));
    uint32_t del[] = {0};
    OK(og_table_txn_delete(x, 0, del, 1));
    kv = commit(x);
    og_tableview *pview, *kview;
    OK(og_tableview_open(&pview, person, pv));
    OK(og_tableview_open(&kview, knows, kv));
    assert_int_equal(og_tableview_rows(kview), 0);
    assert_null(addrs_of(kview));
    const og_topology *topo;
    OK(og_tableview_topology(kview, pview, pview, &topo));
    assert_int_equal(og_topology_edge_count(topo), 0);
    assert_string_equal(adj(topo, OG_DIR_OUT, 0), "");
    og_tableview_release(pview);
    og_tableview_release(kview);
    og_table_close(person);
    og_table_close(knows);
}

/* ---------------------------------------------------------------------------------------- */
/* Concurrency and the cache                                                                  */
/* ---------------------------------------------------------------------------------------- */

typedef struct race_arg {
    og_tableview *v;
    const og_vector *col;
    uint32_t row;
    og_status st;
} race_arg;

static void *race_main(void *p)
{
    race_arg *a = p;
    a->st = og_tableview_column(a->v, 1, &a->col);
    if (a->st == OG_OK) a->st = og_tableview_find_id(a->v, "r123", 4, &a->row);
    return NULL;
}

static void concurrent_first_uses_share_one_column_and_map(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "race");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 3000, NULL);
    uint64_t v1 = commit(x);
    og_tableview *v;
    OK(og_tableview_open(&v, t, v1));
    pthread_t th[4];
    race_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (race_arg){v, NULL, 0, OG_ERR_INTERNAL};
        assert_int_equal(pthread_create(&th[i], NULL, race_main, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(a[i].st, OG_OK);
        assert_ptr_equal(a[i].col, a[0].col);
        assert_int_equal(a[i].row, 123);
    }
    assert_int_equal(a[0].col->len, 3000);
    og_tableview_release(v);
    og_table_close(t);
}

static void the_cache_shares_one_view_per_version(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "cached");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 5, NULL);
    uint64_t v1 = commit(x);
    x = begin(t, v1);
    append_rows(x, 5, 5, NULL);
    uint64_t v2 = commit(x);

    og_cache *cache;
    OK(og_cache_new(&cache, 1 << 20));
    og_tableview *a, *b, *c;
    OK(og_tableview_get(cache, t, v1, &a));
    OK(og_tableview_get(cache, t, v1, &b));
    OK(og_tableview_get(cache, t, v2, &c));
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, c);
    assert_int_equal(og_tableview_rows(a), 5);
    assert_int_equal(og_tableview_rows(c), 10);
    og_cache_stats stats;
    og_cache_get_stats(cache, &stats);
    assert_int_equal(stats.entries, 2);
    assert_int_equal(stats.hits, 1);
    assert_true(stats.bytes >= og_tableview_bytes(a) + og_tableview_bytes(c));
    og_cache_entry *e = og_cache_get(cache, "v:cached@1");
    assert_non_null(e);
    assert_ptr_equal(og_cache_entry_value(e), a);
    og_cache_entry_release(e);

    /* A missing version is a typed error and caches nothing. */
    og_tableview *none = NULL;
    assert_int_equal(og_tableview_get(cache, t, 99, &none), OG_ERR_NOT_FOUND);
    assert_null(none);

    /* Views outlive the cache that handed them out. */
    og_tableview_release(b);
    og_cache_free(cache);
    const og_vector *ids;
    OK(og_tableview_column(a, 0, &ids));
    assert_true(str_is(ids, 4, "r4"));
    og_tableview_release(a);
    og_tableview_release(c);

    /* A cache too small to retain anything still returns working views. */
    OK(og_cache_new(&cache, 16));
    OK(og_tableview_get(cache, t, v2, &a));
    OK(og_tableview_get(cache, t, v2, &b));
    assert_ptr_not_equal(a, b);
    assert_int_equal(og_tableview_rows(b), 10);
    og_tableview_release(a);
    og_tableview_release(b);
    og_cache_free(cache);

    /* No cache at all is an uncached open. */
    OK(og_tableview_get(NULL, t, v1, &a));
    assert_int_equal(og_tableview_rows(a), 5);
    og_tableview_release(a);
    og_table_close(t);
}

/* The cache charges a view what it holds, not its worst-case estimate (which counts every
 * column and map it could derive): a view whose estimate passes the bound but which holds
 * little is retained, and a hit recharges what it derived since — evicting it when that passes
 * the bound (docs/benchmarks.md "Scaling": an edge view never retained at 2M nodes). */
static void the_cache_charges_what_a_view_holds_and_recharges_on_a_hit(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "charged");
    og_table_txn *x = begin(t, 0);
    append_rows(x, 0, 4000, NULL);
    uint64_t v1 = commit(x);

    og_tableview *probe;
    OK(og_tableview_open(&probe, t, v1));
    size_t base = og_tableview_bytes(probe), est = og_tableview_estimate_bytes(probe);
    og_tableview_release(probe);
    assert_true(est > 4 * base); /* the columns it could derive dwarf what it holds */

    og_cache *cache;
    OK(og_cache_new(&cache, base + 4096)); /* room for the bare view, not for its estimate */
    og_tableview *a, *b;
    OK(og_tableview_get(cache, t, v1, &a));
    OK(og_tableview_get(cache, t, v1, &b));
    assert_ptr_equal(a, b); /* retained: the second get is a hit */
    og_cache_stats st;
    og_cache_get_stats(cache, &st);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.hits, 1);
    og_tableview_release(b);

    /* Deriving a column grows the view past the bound: the next hit recharges and evicts it,
     * and the holder's view keeps working. */
    const og_vector *ids;
    OK(og_tableview_column(a, 0, &ids));
    assert_true(og_tableview_bytes(a) > base + 4096);
    OK(og_tableview_get(cache, t, v1, &b));
    assert_ptr_equal(a, b);
    og_cache_get_stats(cache, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.evictions, 1);
    assert_true(st.bytes <= st.max_bytes);
    assert_true(str_is(ids, 3999, "r3999"));
    og_tableview_release(b);
    og_tableview *c;
    OK(og_tableview_get(cache, t, v1, &c)); /* a fresh view, charged its bare size again */
    assert_ptr_not_equal(a, c);
    og_cache_get_stats(cache, &st);
    assert_int_equal(st.entries, 1);
    og_tableview_release(c);
    og_tableview_release(a);
    og_cache_free(cache);
    og_table_close(t);
}

/* ---------------------------------------------------------------------------------------- */
/* Two-sided column loads and lazily opened key maps                                         */
/* ---------------------------------------------------------------------------------------- */

static uint64_t rs = 0x2545f4914f6cdd1dULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* Appends `count` rows of the rows schema from id `start`: n random (1 in 7 null, or never
 * when !nulls), s one of `pool` values (1 in 5 null, or never), tags null. */
static void append_random(og_table_txn *x, int start, int count, size_t pool, int nulls)
{
    og_vector c[4];
    rows_columns(c);
    for (int k = start; k < start + count; k++) {
        char b[32];
        int n = snprintf(b, sizeof b, "r%d", k);
        OK(og_vector_append_bytes(&c[0], b, (size_t)n));
        uint64_t r = rnd();
        if (nulls && r % 7 == 0) OK(og_vector_append_null(&c[1]));
        else OK(og_vector_append_i64(&c[1], (int64_t)(r >> 20) - ((int64_t)1 << 40)));
        if (nulls && (r >> 8) % 5 == 0) {
            OK(og_vector_append_null(&c[2]));
        } else {
            n = snprintf(b, sizeof b, "v%llu", (unsigned long long)((r >> 12) % pool));
            OK(og_vector_append_bytes(&c[2], b, (size_t)n));
        }
        OK(og_vector_append_null(&c[3]));
    }
    OK(og_table_txn_append(x, c, 4, NULL));
    for (int i = 0; i < 4; i++) og_vector_free(&c[i]);
}

static void same_vector(const og_vector *a, const og_vector *b)
{
    assert_int_equal(a->len, b->len);
    assert_int_equal(a->null_count, b->null_count);
    for (size_t i = 0; i < a->len; i++) {
        assert_int_equal(og_vector_is_null(a, i), og_vector_is_null(b, i));
        if (!og_vector_is_null(a, i) && !og_vector_row_eq(a, i, b, i)) fail_msg("row %zu differs", i);
    }
}

/* A whole column loaded on two threads (each side half of the fragments, into the one
 * column) equals the one loaded on one: an I64 column and a coded String column, over many
 * fragments of uneven sizes with deletions (whole fragments too), with nulls on either side
 * only or none, few distinct values or more than 256 (a side widens its codes). */
static void a_two_sided_column_load_equals_the_one_sided_one(void **state)
{
    fx *f = *state;
    int threads = og_tableview_load_threads;
    size_t split_rows = og_tableview_load_split_rows;
    static const size_t pools[] = {6, 300, 2000};
    for (int c = 0; c < 6; c++) {
        char name[32];
        snprintf(name, sizeof name, "split%d", c);
        og_table *t = open_table(f, name);
        og_table_txn *x = begin(t, 0);
        int nfrag = 2 + (int)(rnd() % 11), at = 0, sizes[16];
        for (int fr = 0; fr < nfrag; fr++) {
            int cnt = 1 + (int)(rnd() % (fr % 3 == 0 ? 5000 : 700));
            append_random(x, at, cnt, pools[c % 3], c < 3 || fr >= nfrag / 2);
            sizes[fr] = cnt;
            at += cnt;
        }
        uint64_t ver = commit(x);
        x = begin(t, ver);
        for (int fr = 0; fr < nfrag; fr++) { /* deletions in about half of the fragments */
            uint32_t rows = (uint32_t)sizes[fr];
            if (rnd() % 2 && fr != 1) continue;
            uint32_t d[64];
            size_t nd = 0;
            if (fr == 1) /* the whole fragment */
                for (uint32_t r = 0; r < rows && nd < 64; r++) d[nd++] = r;
            else
                for (uint32_t r = (uint32_t)(rnd() % rows); r < rows && nd < 64; r += 1 + (uint32_t)(rnd() % 97)) d[nd++] = r;
            OK(og_table_txn_delete(x, (uint64_t)fr, d, nd));
        }
        ver = commit(x);

        og_tableview *one, *two;
        og_tableview_load_threads = 1;
        OK(og_tableview_open(&one, t, ver));
        const og_vector *n1, *n2;
        const og_dictcol *d1, *d2;
        OK(og_tableview_column(one, 1, &n1));
        OK(og_tableview_dict(one, 2, &d1));
        og_tableview_load_threads = 2;
        og_tableview_load_split_rows = 0;
        size_t splits = og_tableview_split_loads();
        OK(og_tableview_open(&two, t, ver));
        OK(og_tableview_column(two, 1, &n2));
        OK(og_tableview_dict(two, 2, &d2));
        assert_int_equal(og_tableview_split_loads() - splits, 2); /* both columns were split */
        og_tableview_load_split_rows = split_rows;
        og_tableview_load_threads = threads;
        same_vector(n1, n2);
        assert_true(n1->null_count > 0 || c >= 3);
        assert_non_null(d1);
        assert_non_null(d2);
        assert_int_equal(d1->len, d2->len);
        assert_int_equal(d1->null_count, d2->null_count);
        assert_int_equal(d1->width, d2->width);
        same_vector(&d1->dict, &d2->dict);
        for (size_t i = 0; i < d1->len; i++) {
            assert_int_equal(og_dictcol_is_null(d1, i), og_dictcol_is_null(d2, i));
            if (!og_dictcol_is_null(d1, i)) assert_int_equal(og_dictcol_code(d1, i), og_dictcol_code(d2, i));
        }
        og_tableview_release(one);
        og_tableview_release(two);
        og_table_close(t);
    }
}

/* The sorted list of key map files under the store (at most 16). */
static size_t keymap_files(fx *f, char files[16][512])
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "find '%s/_index' -name keymap.v1 2>/dev/null | sort", f->dir);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    while (p && n < 16 && fgets(files[n], 512, p)) {
        files[n][strcspn(files[n], "\n")] = '\0';
        n++;
    }
    if (p) pclose(p);
    return n;
}

/* Looks up every id r0..r<n+5> (live, deleted, re-added, absent) in v: the rows, in order. */
static void lookup_all(og_tableview *v, int n, uint32_t *rows)
{
    for (int k = 0; k < n + 5; k++) {
        char b[32];
        int len = snprintf(b, sizeof b, "r%d", k);
        OK(og_tableview_lookup_id(v, b, (size_t)len, &rows[k]));
    }
}

/* Key maps open when a probe first reaches their fragment: a lookup of a key in the first
 * fragment opens one map; every lookup gives the in-memory id map's answer (deleted rows
 * skipped for a later live one, absent ids), with one map file truncated and another missing
 * (those fragments' maps are built in memory), before and after every map is opened; a
 * reader in mode 2 writes back the maps it had to build, and only those. */
static void lazily_opened_key_maps_answer_as_the_id_map_does(void **state)
{
    fx *f = *state;
    og_table *t = open_table(f, "lazy");
    og_table_txn *x = begin(t, 0);
    int at = 0;
    for (int fr = 0; fr < 6; fr++) {
        int cnt = 50 + fr * 40;
        append_random(x, at, cnt, 10, 1);
        at += cnt;
    }
    uint64_t ver = commit(x);
    x = begin(t, ver);
    uint32_t d1[] = {0, 3, 7}, d4[] = {1, 2};
    OK(og_table_txn_delete(x, 1, d1, 3)); /* r50 r53 r57 */
    OK(og_table_txn_delete(x, 4, d4, 2));
    append_random(x, 53, 1, 10, 1); /* r53 again, live in a 7th fragment */
    ver = commit(x);
    int n = at;
    uint32_t want[1024], got[1024];

    int mode = og_tableview_index_mode();
    og_tableview_set_index_mode(0); /* the answers without key maps */
    og_tableview *v;
    OK(og_tableview_open(&v, t, ver));
    lookup_all(v, n, want);
    og_tableview_release(v);
    assert_int_equal(want[50], OG_TABLEVIEW_NO_ROW);
    assert_int_equal(want[53], (uint32_t)(n - 3 - 2)); /* the last live row */
    assert_int_equal(want[n + 1], OG_TABLEVIEW_NO_ROW);

    og_tableview_set_index_mode(2); /* every map written */
    OK(og_tableview_open(&v, t, ver));
    OK(og_tableview_prepare_keys(v, 1));
    og_tableview_release(v);
    char files[16][512];
    assert_int_equal(keymap_files(f, files), 7);

    og_tableview_set_index_mode(1); /* read them, write nothing */
    OK(og_tableview_open(&v, t, ver));
    int fds = og_store_open_fds();
    uint32_t row;
    OK(og_tableview_lookup_id(v, "r1", 2, &row));
    assert_int_equal(row, 1);
    assert_int_equal(og_store_open_fds(), fds + 1); /* the first fragment's map only */
    lookup_all(v, n, got);
    assert_memory_equal(got, want, (size_t)(n + 5) * sizeof *want);
    assert_int_equal(og_store_open_fds(), fds + 7);
    og_tableview_release(v);
    assert_int_equal(og_store_open_fds(), fds);

    /* a truncated map and a missing one: built in memory, the same answers */
    assert_int_equal(truncate(files[2], 100), 0);
    assert_int_equal(remove(files[4]), 0);
    OK(og_tableview_open(&v, t, ver));
    lookup_all(v, n, got);
    assert_memory_equal(got, want, (size_t)(n + 5) * sizeof *want);
    OK(og_tableview_prepare_keys(v, 0)); /* (all open already) */
    lookup_all(v, n, got);
    assert_memory_equal(got, want, (size_t)(n + 5) * sizeof *want);
    og_tableview_release(v);
    assert_int_equal(keymap_files(f, files), 6); /* read-only: nothing written */

    /* mode 2: a reader writes the maps it built (the missing one; the truncated file stays,
     * put_if_absent never replaces), then answers alike from them */
    og_tableview_set_index_mode(2);
    OK(og_tableview_open(&v, t, ver));
    og_tableview_save_keys(v);
    assert_int_equal(keymap_files(f, files), 6); /* nothing built yet */
    lookup_all(v, n, got);
    og_tableview_save_keys(v);
    assert_int_equal(keymap_files(f, files), 7);
    og_tableview_release(v);
    OK(og_tableview_open(&v, t, ver));
    lookup_all(v, n, got);
    assert_memory_equal(got, want, (size_t)(n + 5) * sizeof *want);
    og_tableview_release(v);
    og_tableview_set_index_mode(mode);
    og_table_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_view_sees_exactly_its_versions_live_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(a_view_whose_data_files_are_gone_fails_its_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(rows_follow_manifest_fragment_order_after_a_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(columns_equal_what_was_written_across_fragments_batches_and_deletions, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_column_without_deletions_is_sized_exactly_and_needs_no_row_addresses, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(point_gathers_load_a_column_only_after_a_share_of_its_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(find_id_hits_live_rows_and_misses_deleted_and_unknown_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(a_field_added_later_reads_as_null_for_old_fragments, setup, teardown),
        cmocka_unit_test_setup_teardown(topology_matches_the_adjacency_and_skips_dangling_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(an_edge_table_with_no_rows_has_an_empty_topology, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_first_uses_share_one_column_and_map, setup, teardown),
        cmocka_unit_test_setup_teardown(the_cache_shares_one_view_per_version, setup, teardown),
        cmocka_unit_test_setup_teardown(the_cache_charges_what_a_view_holds_and_recharges_on_a_hit, setup, teardown),
        cmocka_unit_test_setup_teardown(a_two_sided_column_load_equals_the_one_sided_one, setup, teardown),
        cmocka_unit_test_setup_teardown(lazily_opened_key_maps_answer_as_the_id_map_does, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
