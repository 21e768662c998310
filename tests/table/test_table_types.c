/*
 * test_table_types.c — every column type through the table layer: a table with I32, I64, U32,
 * U64, F32, F64, Bool, Date, DateTime, String, Blob, Vector(N) and lists (nulls everywhere,
 * empty strings and lists, null list items), fragments that span several pages, deletions,
 * then a compaction; every live row read back by scans of several batch sizes equals the row
 * that was written (og_vector_row_eq), and the compacted version equals the one before it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "table/table.h"
#include "util/error.h"

enum { NCOLS = 15, ROWS_A = 9000, ROWS_B = 700 };

static const og_type types[NCOLS] = {
    {OG_T_STRING, OG_T_NULL, 0}, {OG_T_I32, OG_T_NULL, 0}, {OG_T_I64, OG_T_NULL, 0},
    {OG_T_U32, OG_T_NULL, 0},    {OG_T_U64, OG_T_NULL, 0}, {OG_T_F32, OG_T_NULL, 0},
    {OG_T_F64, OG_T_NULL, 0},    {OG_T_BOOL, OG_T_NULL, 0}, {OG_T_DATE32, OG_T_NULL, 0},
    {OG_T_DATE64, OG_T_NULL, 0}, {OG_T_STRING, OG_T_NULL, 0}, {OG_T_BLOB, OG_T_NULL, 0},
    {OG_T_VECTOR, OG_T_NULL, 5}, {OG_T_LIST, OG_T_STRING, 0}, {OG_T_LIST, OG_T_F64, 0},
};

static void schema(og_lance_schema *s)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    int32_t id = 0;
    for (int c = 0; c < NCOLS; c++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", c);
        int32_t child = types[c].id == OG_T_LIST ? id + 1 : -1;
        assert_int_equal(og_lance_schema_add_column(s, name, types[c], id, child, c != 0, c == 0), OG_OK);
        id += child >= 0 ? 2 : 1;
    }
}

static uint64_t mix(uint64_t k)
{
    k = (k ^ (k >> 33)) * 0xff51afd7ed558ccdull;
    k = (k ^ (k >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

static void value(og_vector *v, int c, uint64_t k)
{
    uint64_t r = mix(k * 37 + (uint64_t)c);
    if (c && (r % 5 == 0 || (c == 3 && k >= 100 && k < 300))) {
        assert_int_equal(og_vector_append_null(v), OG_OK);
        return;
    }
    char b[32];
    int n;
    switch (types[c].id) {
    case OG_T_STRING:
        if (c == 0) {
            n = snprintf(b, sizeof b, "key-%llu", (unsigned long long)k);
        } else {
            n = (int)(r % 9); /* empty strings too */
            memcpy(b, "abcdefghi", (size_t)n);
        }
        assert_int_equal(og_vector_append_bytes(v, b, (size_t)n), OG_OK);
        break;
    case OG_T_BLOB: assert_int_equal(og_vector_append_bytes(v, &r, r % 9), OG_OK); break;
    case OG_T_I32: case OG_T_DATE32: assert_int_equal(og_vector_append_i64(v, (int32_t)r), OG_OK); break;
    case OG_T_I64: case OG_T_DATE64: assert_int_equal(og_vector_append_i64(v, (int64_t)r), OG_OK); break;
    case OG_T_U32: assert_int_equal(og_vector_append_u64(v, (uint32_t)r), OG_OK); break;
    case OG_T_U64: assert_int_equal(og_vector_append_u64(v, r), OG_OK); break;
    case OG_T_F32: assert_int_equal(og_vector_append_f64(v, (float)(r % 1000) / 8.0f), OG_OK); break;
    case OG_T_F64: assert_int_equal(og_vector_append_f64(v, (double)r / 3.0), OG_OK); break;
    case OG_T_BOOL: assert_int_equal(og_vector_append_bool(v, (int)(r >> 7) & 1), OG_OK); break;
    case OG_T_VECTOR: {
        float f[5];
        for (int i = 0; i < 5; i++) f[i] = (float)((r >> (8 * i)) & 0xff);
        assert_int_equal(og_vector_append_floats(v, f, 5), OG_OK);
        break;
    }
    case OG_T_LIST:
        for (uint64_t i = 0; i < r % 4; i++) {
            if ((r >> i) % 7 == 0) {
                assert_int_equal(og_vector_append_null(v->child), OG_OK);
            } else if (types[c].elem == OG_T_STRING) {
                assert_int_equal(og_vector_append_bytes(v->child, "item", (size_t)(i + 1)), OG_OK);
            } else {
                assert_int_equal(og_vector_append_f64(v->child, (double)i * 1.5), OG_OK);
            }
        }
        assert_int_equal(og_vector_append_list_end(v), OG_OK);
        break;
    default: fail();
    }
}

static void build(og_vector *cols, uint64_t start, uint64_t n)
{
    for (int c = 0; c < NCOLS; c++) {
        assert_int_equal(og_vector_init(&cols[c], types[c]), OG_OK);
        for (uint64_t k = start; k < start + n; k++) value(&cols[c], c, k);
    }
}

typedef struct expect {
    og_vector a[NCOLS], b[NCOLS]; /* fragment 0's and fragment 1's rows as written */
} expect;

static int deleted_a(uint64_t r) { return r % 3 == 1 || (r >= 8100 && r < 8300); }

/* Scans `version` and checks every row against what was written; returns the rows seen. */
static size_t check_version(og_table *t, uint64_t version, const expect *e, int compacted, size_t batch)
{
    og_manifest m;
    assert_int_equal(og_table_load(t, version, &m), OG_OK);
    og_table_scan_opts o = {NULL, 0, NULL, 0, batch, 0};
    og_table_scan *s;
    assert_int_equal(og_table_scan_open(&s, t, &m, &o), OG_OK);
    og_table_batch b;
    size_t seen = 0;
    /* the live rows in order: fragment 0 minus deletions, then fragment 1 */
    uint64_t next_a = 0, next_b = 0;
    for (;;) {
        og_status st = og_table_scan_next(s, &b);
        if (st != OG_OK) fail_msg("%s", og_error_message());
        if (!b.nrows) break;
        assert_int_equal(b.ncols, NCOLS);
        for (size_t r = 0; r < b.nrows; r++, seen++) {
            const og_vector *src;
            uint64_t row;
            while (next_a < ROWS_A && deleted_a(next_a)) next_a++;
            if (next_a < ROWS_A) {
                src = e->a;
                row = next_a++;
            } else {
                src = e->b;
                row = next_b++;
            }
            if (!compacted) {
                assert_int_equal(OG_ROW_ADDR_OFFSET(b.row_addrs[r]), row);
            }
            for (int c = 0; c < NCOLS; c++)
                if (!og_vector_row_eq(&b.cols[c], r, &src[c], (size_t)row))
                    fail_msg("version %llu row %llu column %d differs", (unsigned long long)version,
                             (unsigned long long)row, c);
        }
    }
    og_table_scan_free(s);
    og_manifest_free(&m);
    return seen;
}

static void every_type_round_trips(void **state)
{
    (void)state;
    char dir[] = "/tmp/og-table-types-XXXXXX";
    assert_non_null(mkdtemp(dir));
    og_store *st;
    og_table *t;
    assert_int_equal(og_store_open(&st, dir), OG_OK);
    assert_int_equal(og_table_open(&t, st, "types.lance"), OG_OK);
    og_lance_schema s;
    schema(&s);
    expect *e = calloc(1, sizeof *e);
    build(e->a, 0, ROWS_A);
    build(e->b, ROWS_A, ROWS_B);

    og_table_txn *x;
    uint64_t v1, v2, v3;
    assert_int_equal(og_table_txn_begin(&x, t, 0, &s), OG_OK);
    assert_int_equal(og_table_txn_append(x, e->a, NCOLS, NULL), OG_OK);
    assert_int_equal(og_table_txn_append(x, e->b, NCOLS, NULL), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v1), OG_OK);
    og_table_txn_free(x);

    uint32_t *del = malloc(ROWS_A * sizeof *del);
    size_t nd = 0;
    for (uint32_t r = 0; r < ROWS_A; r++)
        if (deleted_a(r)) del[nd++] = r;
    assert_int_equal(og_table_txn_begin(&x, t, v1, NULL), OG_OK);
    assert_int_equal(og_table_txn_delete(x, 0, del, nd), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v2), OG_OK);
    og_table_txn_free(x);
    free(del);

    assert_int_equal(og_table_txn_begin(&x, t, v2, NULL), OG_OK);
    uint64_t both[] = {0, 1}, nid;
    assert_int_equal(og_table_txn_compact(x, both, 2, &nid), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v3), OG_OK);
    og_table_txn_free(x);

    size_t live = ROWS_A - nd + ROWS_B;
    for (size_t batch = 1000; batch <= 8192; batch *= 8) {
        assert_int_equal(check_version(t, v2, e, 0, batch), live);
        assert_int_equal(check_version(t, v3, e, 1, batch), live);
    }
    og_manifest m;
    assert_int_equal(og_table_load(t, v3, &m), OG_OK);
    assert_int_equal(m.nfragments, 1);
    assert_int_equal(m.fragments[0].id, nid);
    assert_int_equal(m.fragments[0].physical_rows, live);
    assert_int_equal(m.reader_flags, 0);
    og_manifest_free(&m);

    for (int c = 0; c < NCOLS; c++) {
        og_vector_free(&e->a[c]);
        og_vector_free(&e->b[c]);
    }
    free(e);
    og_lance_schema_free(&s);
    og_table_close(t);
    og_store_close(st);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
