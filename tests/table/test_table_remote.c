/*
 * test_table_remote.c — tables read through ranged reads (range_cache.h) instead of mmap: on
 * the store at $OG_TEST_STORE_URI when set (run-s3-tests.sh points it at the S3 test store;
 * this test adds a unique prefix), else on a fresh local directory with range reads forced
 * (OG_TABLE_RANGE_READS semantics through og_range_configure).
 *
 *   - every column type (nulls, empty strings and lists, multi-page fragments) round-trips
 *     across three versions (append, delete, append), each version reading back exactly what
 *     it held, by scans of several batch sizes and by take;
 *   - a two-column scan of a wide table fetches far fewer bytes than the data file holds
 *     (the counters of og_range_stats), a second scan is answered from the cache, and a
 *     tiny cache bound still reads correctly (it just fetches again);
 *   - a data file that is gone is OG_ERR_CORRUPT, not a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "table/range_cache.h"
#include "table/table.h"
#include "util/error.h"

/* ---- the store under test -------------------------------------------------------------- */

typedef struct fx {
    char uri[512];
    char local[64]; /* mkdtemp dir, "" on a remote store */
    og_store *st;
    og_range_config saved;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    const char *base = getenv("OG_TEST_STORE_URI");
    if (base && *base) {
        snprintf(f->uri, sizeof f->uri, "%s%stable-remote-%ld-%ld", base, base[strlen(base) - 1] == '/' ? "" : "/",
                 (long)getpid(), (long)time(NULL));
    } else {
        strcpy(f->local, "/tmp/og-table-remote-XXXXXX");
        if (!mkdtemp(f->local)) return -1;
        snprintf(f->uri, sizeof f->uri, "%s", f->local);
    }
    if (og_store_open(&f->st, f->uri) != OG_OK) {
        fprintf(stderr, "store %s: %s\n", f->uri, og_error_message());
        return -1;
    }
    og_range_config_get(&f->saved);
    og_range_config c = f->saved;
    c.force = 1;
    if (og_range_configure(&c) != OG_OK) return -1;
    print_message("store: %s (%s)\n", f->uri, og_store_is_local(f->st) ? "local, range reads forced" : "remote");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    og_keylist kl = {0};
    if (og_store_list(f->st, "", NULL, 0, &kl) == OG_OK) {
        for (size_t i = 0; i < kl.count; i++) og_store_delete(f->st, kl.keys[i]);
        og_keylist_free(&kl);
    }
    og_store_close(f->st);
    if (f->local[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->local);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->local);
    }
    og_range_configure(&f->saved);
    free(f);
    return 0;
}

/* ---- every type, three versions -------------------------------------------------------- */

enum { NCOLS = 14, ROWS_A = 9000, ROWS_B = 400, ROWS_C = 300 };

static const og_type types[NCOLS] = {
    {OG_T_STRING, OG_T_NULL, 0}, {OG_T_I32, OG_T_NULL, 0},    {OG_T_I64, OG_T_NULL, 0},
    {OG_T_U32, OG_T_NULL, 0},    {OG_T_U64, OG_T_NULL, 0},    {OG_T_F32, OG_T_NULL, 0},
    {OG_T_F64, OG_T_NULL, 0},    {OG_T_BOOL, OG_T_NULL, 0},   {OG_T_DATE32, OG_T_NULL, 0},
    {OG_T_DATE64, OG_T_NULL, 0}, {OG_T_BLOB, OG_T_NULL, 0},   {OG_T_VECTOR, OG_T_NULL, 3},
    {OG_T_LIST, OG_T_STRING, 0}, {OG_T_LIST, OG_T_I64, 0},
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

static uint64_t hash(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    k ^= k >> 29;
    k *= 0xbf58476d1ce4e5b9ull;
    return k ^ (k >> 32);
}

static void put(og_vector *v, int c, uint64_t k)
{
    uint64_t r = hash(k * 101 + (uint64_t)c);
    if (c && r % 6 == 0) {
        assert_int_equal(og_vector_append_null(v), OG_OK);
        return;
    }
    char b[32];
    switch (types[c].id) {
    case OG_T_STRING: {
        int n = snprintf(b, sizeof b, "row-%llu", (unsigned long long)k);
        assert_int_equal(og_vector_append_bytes(v, b, (size_t)n), OG_OK);
        break;
    }
    case OG_T_BLOB: assert_int_equal(og_vector_append_bytes(v, &r, r % 8), OG_OK); break;
    case OG_T_I32: case OG_T_DATE32: assert_int_equal(og_vector_append_i64(v, (int32_t)r), OG_OK); break;
    case OG_T_I64: case OG_T_DATE64: assert_int_equal(og_vector_append_i64(v, (int64_t)r), OG_OK); break;
    case OG_T_U32: assert_int_equal(og_vector_append_u64(v, (uint32_t)r), OG_OK); break;
    case OG_T_U64: assert_int_equal(og_vector_append_u64(v, r), OG_OK); break;
    case OG_T_F32: assert_int_equal(og_vector_append_f64(v, (float)(r % 4096) / 4.0f), OG_OK); break;
    case OG_T_F64: assert_int_equal(og_vector_append_f64(v, (double)r / 7.0), OG_OK); break;
    case OG_T_BOOL: assert_int_equal(og_vector_append_bool(v, (int)(r >> 9) & 1), OG_OK); break;
    case OG_T_VECTOR: {
        float x[3] = {(float)(r & 0xff), (float)((r >> 8) & 0xff), -1.0f};
        assert_int_equal(og_vector_append_floats(v, x, 3), OG_OK);
        break;
    }
    case OG_T_LIST:
        for (uint64_t i = 0; i < r % 4; i++) {
            if ((r >> (i + 3)) % 5 == 0) assert_int_equal(og_vector_append_null(v->child), OG_OK);
            else if (types[c].elem == OG_T_STRING) assert_int_equal(og_vector_append_bytes(v->child, "abcd", i), OG_OK);
            else assert_int_equal(og_vector_append_i64(v->child, (int64_t)(r >> i)), OG_OK);
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
        for (uint64_t k = start; k < start + n; k++) put(&cols[c], c, k);
    }
}

static void free_cols(og_vector *cols)
{
    for (int c = 0; c < NCOLS; c++) og_vector_free(&cols[c]);
}

static int deleted(uint64_t row) { return row % 4 == 3 || (row >= 8000 && row < 8500); }

/* The expected rows of a version: fragments 0 (A rows), 1 (B rows), 2 (C rows), in order. */
typedef struct expect {
    og_vector frag[3][NCOLS];
    size_t rows[3];
} expect;

static size_t check(og_table *t, uint64_t version, const expect *e, int nfrags, int with_deletes, size_t batch)
{
    og_manifest m;
    assert_int_equal(og_table_load(t, version, &m), OG_OK);
    assert_int_equal(m.nfragments, (size_t)nfrags);
    og_table_scan_opts o = {NULL, 0, NULL, 0, batch, 0};
    og_table_scan *s;
    assert_int_equal(og_table_scan_open(&s, t, &m, &o), OG_OK);
    size_t seen = 0;
    int fi = 0;
    uint64_t next = 0;
    for (;;) {
        og_table_batch b;
        og_status st = og_table_scan_next(s, &b);
        if (st != OG_OK) fail_msg("scan v%llu: %s", (unsigned long long)version, og_error_message());
        if (!b.nrows) break;
        for (size_t r = 0; r < b.nrows; r++, seen++) {
            for (;;) {
                if (fi == 0 && with_deletes) while (next < e->rows[0] && deleted(next)) next++;
                if (next < e->rows[fi]) break;
                fi++;
                next = 0;
                assert_true(fi < nfrags);
            }
            assert_int_equal(b.fragment_id, (uint64_t)fi);
            assert_int_equal(OG_ROW_ADDR_OFFSET(b.row_addrs[r]), next);
            for (int c = 0; c < NCOLS; c++)
                if (!og_vector_row_eq(&b.cols[c], r, &e->frag[fi][c], (size_t)next))
                    fail_msg("v%llu fragment %d row %llu column %d differs", (unsigned long long)version, fi,
                             (unsigned long long)next, c);
            next++;
        }
    }
    og_table_scan_free(s);
    og_manifest_free(&m);
    return seen;
}

static void every_type_over_versions(void **state)
{
    fx *f = *state;
    og_table *t;
    assert_int_equal(og_table_open(&t, f->st, "types.lance"), OG_OK);
    og_lance_schema s;
    schema(&s);
    expect *e = calloc(1, sizeof *e);
    e->rows[0] = ROWS_A, e->rows[1] = ROWS_B, e->rows[2] = ROWS_C;
    build(e->frag[0], 0, ROWS_A);
    build(e->frag[1], ROWS_A, ROWS_B);
    build(e->frag[2], ROWS_A + ROWS_B, ROWS_C);

    og_table_txn *x;
    uint64_t v1, v2, v3;
    assert_int_equal(og_table_txn_begin(&x, t, 0, &s), OG_OK);
    assert_int_equal(og_table_txn_append(x, e->frag[0], NCOLS, NULL), OG_OK);
    assert_int_equal(og_table_txn_append(x, e->frag[1], NCOLS, NULL), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v1), OG_OK);
    og_table_txn_free(x);
    uint32_t *del = malloc(ROWS_A * sizeof *del);
    size_t nd = 0;
    for (uint32_t r = 0; r < ROWS_A; r++)
        if (deleted(r)) del[nd++] = r;
    assert_int_equal(og_table_txn_begin(&x, t, v1, NULL), OG_OK);
    assert_int_equal(og_table_txn_delete(x, 0, del, nd), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v2), OG_OK);
    og_table_txn_free(x);
    free(del);
    assert_int_equal(og_table_txn_begin(&x, t, v2, NULL), OG_OK);
    assert_int_equal(og_table_txn_append(x, e->frag[2], NCOLS, NULL), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v3), OG_OK);
    og_table_txn_free(x);

    size_t batches[] = {1000, 4096, 9000};
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(check(t, v1, e, 2, 0, batches[k]), ROWS_A + ROWS_B);
        assert_int_equal(check(t, v2, e, 2, 1, batches[k]), ROWS_A - nd + ROWS_B);
        assert_int_equal(check(t, v3, e, 3, 1, batches[k]), ROWS_A - nd + ROWS_B + ROWS_C);
    }

    /* take: scattered rows of fragment 0 across its pages, two projected fields */
    og_manifest m;
    assert_int_equal(og_table_load(t, v3, &m), OG_OK);
    uint32_t offs[] = {0, 7, 4100, 8191, 8192, 8999};
    int32_t fids[] = {0, 12}; /* c0 and the list of strings c12 (field id 12, its item 13) */
    og_vector out[2];
    assert_int_equal(og_table_take(t, &m, 0, offs, 6, fids, 2, out), OG_OK);
    for (size_t k = 0; k < 6; k++) {
        assert_true(og_vector_row_eq(&out[0], k, &e->frag[0][0], offs[k]));
        assert_true(og_vector_row_eq(&out[1], k, &e->frag[0][12], offs[k]));
    }
    og_vector_free(&out[0]);
    og_vector_free(&out[1]);
    og_manifest_free(&m);

    for (int k = 0; k < 3; k++) free_cols(e->frag[k]);
    free(e);
    og_lance_schema_free(&s);
    og_table_close(t);
}

/* ---- projection fetches little; the cache answers repeats ------------------------------ */

enum { WIDE_COLS = 16, WIDE_ROWS = 60000 };

static void wide_table(og_store *st, og_table **out, uint64_t *version, uint64_t *file_bytes)
{
    og_table *t;
    assert_int_equal(og_table_open(&t, st, "wide.lance"), OG_OK);
    og_lance_schema s = OG_LANCE_SCHEMA_INIT;
    og_vector cols[WIDE_COLS];
    for (int c = 0; c < WIDE_COLS; c++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", c);
        og_type ty = {OG_T_I64, OG_T_NULL, 0};
        assert_int_equal(og_lance_schema_add_column(&s, name, ty, c, -1, 0, c == 0), OG_OK);
        assert_int_equal(og_vector_init(&cols[c], ty), OG_OK);
        for (int64_t r = 0; r < WIDE_ROWS; r++) assert_int_equal(og_vector_append_i64(&cols[c], r * 1000 + c), OG_OK);
    }
    og_table_txn *x;
    assert_int_equal(og_table_txn_begin(&x, t, 0, &s), OG_OK);
    assert_int_equal(og_table_txn_append(x, cols, WIDE_COLS, NULL), OG_OK);
    assert_int_equal(og_table_txn_commit(x, version), OG_OK);
    og_table_txn_free(x);
    for (int c = 0; c < WIDE_COLS; c++) og_vector_free(&cols[c]);
    og_lance_schema_free(&s);
    og_manifest m;
    assert_int_equal(og_table_load(t, *version, &m), OG_OK);
    assert_int_equal(m.nfragments, 1);
    assert_int_equal(m.fragments[0].nfiles, 1);
    *file_bytes = m.fragments[0].files[0].size_bytes;
    assert_true(*file_bytes > (uint64_t)WIDE_ROWS * WIDE_COLS * 8);
    og_manifest_free(&m);
    *out = t;
}

static void scan_two(og_table *t, uint64_t version)
{
    og_manifest m;
    assert_int_equal(og_table_load(t, version, &m), OG_OK);
    int32_t fids[] = {3, 11};
    og_table_scan_opts o = {fids, 2, NULL, 0, 0, 0};
    og_table_scan *s;
    assert_int_equal(og_table_scan_open(&s, t, &m, &o), OG_OK);
    int64_t row = 0;
    for (;;) {
        og_table_batch b;
        assert_int_equal(og_table_scan_next(s, &b), OG_OK);
        if (!b.nrows) break;
        for (size_t r = 0; r < b.nrows; r++, row++) {
            assert_int_equal(og_vector_get_i64(&b.cols[0], r), row * 1000 + 3);
            assert_int_equal(og_vector_get_i64(&b.cols[1], r), row * 1000 + 11);
        }
    }
    assert_int_equal(row, WIDE_ROWS);
    og_table_scan_free(s);
    og_manifest_free(&m);
}

static void projection_fetches_few_bytes(void **state)
{
    fx *f = *state;
    og_table *t;
    uint64_t v, file_bytes;
    wide_table(f->st, &t, &v, &file_bytes);
    og_range_config c = f->saved;
    c.force = 1;
    assert_int_equal(og_range_configure(&c), OG_OK); /* a cold, empty cache */

    og_range_stats a, b;
    og_range_stats_reset();
    scan_two(t, v);
    og_range_stats_get(&a);
    print_message("cold 2-of-%d-column scan: %llu GETs, %llu bytes fetched of a %llu-byte file "
                  "(%llu prefetched, %llu waits)\n",
                  WIDE_COLS, (unsigned long long)a.gets, (unsigned long long)a.bytes_fetched,
                  (unsigned long long)file_bytes, (unsigned long long)a.prefetches, (unsigned long long)a.waits);
    assert_true(a.gets > 0);
    assert_true(a.heads == 0); /* the manifest carries the file size */
    /* 2 of 16 equal columns plus the metadata tail: far less than the file */
    assert_true(a.bytes_fetched < file_bytes / 4);
    assert_true(a.bytes_fetched >= (uint64_t)WIDE_ROWS * 2 * 8);

    og_range_stats_reset();
    scan_two(t, v);
    og_range_stats_get(&b);
    print_message("warm scan: %llu GETs, %llu hits\n", (unsigned long long)b.gets, (unsigned long long)b.hits);
    assert_int_equal(b.gets, 0);
    assert_true(b.hits > 0);

    /* a cache far smaller than the pages read: still correct, it fetches again */
    c.cache_bytes = 32 * 1024;
    c.prefetch_threads = 0;
    assert_int_equal(og_range_configure(&c), OG_OK);
    og_range_stats_reset();
    scan_two(t, v);
    scan_two(t, v);
    og_range_stats_get(&b);
    print_message("32 KiB cache, two scans: %llu GETs\n", (unsigned long long)b.gets);
    assert_true(b.gets >= 2 * a.gets - 4);

    /* prefetch on and a small cache: concurrency between pool and reader stays correct */
    c.cache_bytes = 256 * 1024;
    c.prefetch_threads = 4;
    c.readahead = 8;
    assert_int_equal(og_range_configure(&c), OG_OK);
    scan_two(t, v);
    og_table_close(t);
}

static void missing_data_file_is_not_found(void **state)
{
    fx *f = *state;
    og_table *t;
    uint64_t v, file_bytes;
    wide_table(f->st, &t, &v, &file_bytes);
    og_range_config c = f->saved;
    c.force = 1;
    assert_int_equal(og_range_configure(&c), OG_OK);
    og_manifest m;
    assert_int_equal(og_table_load(t, v, &m), OG_OK);
    char key[1024];
    snprintf(key, sizeof key, "tables/wide.lance/data/%s", m.fragments[0].files[0].path);
    assert_int_equal(og_store_delete(f->st, key), OG_OK);
    og_table_scan *s;
    assert_int_equal(og_table_scan_open(&s, t, &m, NULL), OG_OK);
    og_table_batch b;
    assert_int_equal(og_table_scan_next(s, &b), OG_ERR_NOT_FOUND);
    og_table_scan_free(s);
    og_manifest_free(&m);
    og_table_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_type_over_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(projection_fetches_few_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_data_file_is_not_found, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
