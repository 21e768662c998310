/*
 * test_table.c — versioned Lance tables through table.h on a local store: version chains of
 * append / delete / overwrite / compact read back exactly at every version, fragment ids and
 * cumulative deletion files, a lost manifest put_if_absent taking the next number (also with
 * six processes racing on one base), stable field ids and an added nullable column reading as
 * null for old fragments, projection, take, range scans (a part of the fragments), typed
 * errors, the manifest cache, and the fault points (a crash after a data file leaves no
 * version; after the manifest put it exists).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "table/range_cache.h"
#include "table/table.h"
#include "util/error.h"
#include "util/fault.h"

typedef struct fx {
    char dir[64];
    og_store *st;
    og_table *t;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/og-table-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    if (og_store_open(&f->st, f->dir) != OG_OK) return -1;
    if (og_table_open(&f->t, f->st, "t1.lance") != OG_OK) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    og_table_close(f->t);
    og_store_close(f->st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->dir);
    free(f);
    return 0;
}

static const og_type T_STR = {OG_T_STRING, OG_T_NULL, 0};
static const og_type T_I64 = {OG_T_I64, OG_T_NULL, 0};
static const og_type T_F64 = {OG_T_F64, OG_T_NULL, 0};

/* id String (pk, field 0), n I64 (field 1), s String nullable (field 2) */
static void base_schema(og_lance_schema *s)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    assert_int_equal(og_lance_schema_add_column(s, "id", T_STR, 0, -1, 0, 1), OG_OK);
    assert_int_equal(og_lance_schema_add_column(s, "n", T_I64, 1, -1, 1, 0), OG_OK);
    assert_int_equal(og_lance_schema_add_column(s, "s", T_STR, 2, -1, 1, 0), OG_OK);
}

/* Rows k = start .. start+count-1: id "r<k>", n = k*10, s = null when k % 4 == 3. */
static void make_cols(og_vector *c, int start, int count)
{
    assert_int_equal(og_vector_init(&c[0], T_STR), OG_OK);
    assert_int_equal(og_vector_init(&c[1], T_I64), OG_OK);
    assert_int_equal(og_vector_init(&c[2], T_STR), OG_OK);
    for (int k = start; k < start + count; k++) {
        char b[32];
        int n = snprintf(b, sizeof b, "r%d", k);
        assert_int_equal(og_vector_append_bytes(&c[0], b, (size_t)n), OG_OK);
        assert_int_equal(og_vector_append_i64(&c[1], k * 10), OG_OK);
        if (k % 4 == 3) {
            assert_int_equal(og_vector_append_null(&c[2]), OG_OK);
        } else {
            n = snprintf(b, sizeof b, "s%d", k);
            assert_int_equal(og_vector_append_bytes(&c[2], b, (size_t)n), OG_OK);
        }
    }
}

static void free_cols(og_vector *c, size_t n)
{
    for (size_t i = 0; i < n; i++) og_vector_free(&c[i]);
}

static void append_rows(og_table_txn *x, int start, int count, uint64_t *frag)
{
    og_vector c[3];
    make_cols(c, start, count);
    assert_int_equal(og_table_txn_append(x, c, 3, frag), OG_OK);
    free_cols(c, 3);
}

/* One row rendered as text: "frag:offset id n s" with "-" for null. */
static void render(const og_table_batch *b, size_t r, char *out, size_t cap)
{
    /* (a scan with no_row_addrs: a batch without deleted rows is first_offset, first_offset + 1, ...) */
    uint64_t addr = b->row_addrs ? b->row_addrs[r] : OG_ROW_ADDR(b->fragment_id, b->first_offset + r);
    size_t at = (size_t)snprintf(out, cap, "%u:%u", OG_ROW_ADDR_FRAG(addr), OG_ROW_ADDR_OFFSET(addr));
    for (size_t c = 0; c < b->ncols && at < cap; c++) {
        const og_vector *v = &b->cols[c];
        if (og_vector_is_null(v, r)) {
            at += (size_t)snprintf(out + at, cap - at, " -");
        } else if (v->type.id == OG_T_STRING) {
            size_t n;
            const uint8_t *p = og_vector_get_bytes(v, r, &n);
            at += (size_t)snprintf(out + at, cap - at, " %.*s", (int)n, (const char *)p);
        } else if (v->type.id == OG_T_F64) {
            at += (size_t)snprintf(out + at, cap - at, " %g", og_vector_get_f64(v, r));
        } else {
            at += (size_t)snprintf(out + at, cap - at, " %lld", (long long)og_vector_get_i64(v, r));
        }
    }
}

/* Every row of scan s in one string, rows separated by ';'; frees s and m. */
static char *drain(og_table_scan *s, og_manifest *m)
{
    og_buf out = OG_BUF_INIT;
    og_table_batch b;
    for (;;) {
        og_status st = og_table_scan_next(s, &b);
        if (st != OG_OK) fail_msg("scan: %s", og_error_message());
        if (!b.nrows) break;
        for (size_t r = 0; r < b.nrows; r++) {
            char row[256];
            render(&b, r, row, sizeof row);
            og_buf_printf(&out, "%s%s", out.len ? ";" : "", row);
        }
    }
    og_table_scan_free(s);
    og_manifest_free(m);
    og_buf_append_byte(&out, 0);
    return (char *)out.data;
}

/* Scans a version into one string, rows separated by ';'. */
static char *dump(og_table *t, uint64_t version, const int32_t *ids, size_t nids)
{
    og_manifest m;
    assert_int_equal(og_table_load(t, version, &m), OG_OK);
    og_table_scan_opts o = {ids, nids, NULL, 0, 3, 0}; /* small batches: batches cross deletions */
    og_table_scan *s;
    assert_int_equal(og_table_scan_open(&s, t, &m, &o), OG_OK);
    return drain(s, &m);
}

/* dump() of only the fragments at manifest indexes [from, to) (og_table_scan_open_range). */
static char *dump_range(og_table *t, uint64_t version, size_t from, size_t to)
{
    og_manifest m;
    assert_int_equal(og_table_load(t, version, &m), OG_OK);
    og_table_scan_opts o = {NULL, 0, NULL, 0, 3, 0};
    og_table_scan *s;
    assert_int_equal(og_table_scan_open_range(&s, t, &m, &o, from, to), OG_OK);
    return drain(s, &m);
}

static void expect_dump(og_table *t, uint64_t version, const char *want)
{
    char *got = dump(t, version, NULL, 0);
    assert_string_equal(got, want);
    free(got);
}

static const char *V1 = "0:0 r0 0 s0;0:1 r1 10 s1;0:2 r2 20 s2;0:3 r3 30 -;0:4 r4 40 s4;"
                        "1:0 r5 50 s5;1:1 r6 60 s6;1:2 r7 70 -";

static void version_chain(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v, frag;

    /* v1: two fragments in one version */
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 5, &frag);
    assert_int_equal(frag, 0);
    append_rows(x, 5, 3, &frag);
    assert_int_equal(frag, 1);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 1);
    og_table_txn_free(x);
    expect_dump(f->t, 1, V1);

    /* v2: one more fragment */
    assert_int_equal(og_table_txn_begin(&x, f->t, 1, NULL), OG_OK);
    append_rows(x, 8, 2, &frag);
    assert_int_equal(frag, 2);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 2);
    og_table_txn_free(x);

    /* v3: deletions in two fragments (one of them twice, also re-deleting a row) */
    assert_int_equal(og_table_txn_begin(&x, f->t, 2, NULL), OG_OK);
    uint32_t d0[] = {1, 3}, d0b[] = {3, 4}, d2[] = {0};
    assert_int_equal(og_table_txn_delete(x, 0, d0, 2), OG_OK);
    assert_int_equal(og_table_txn_delete(x, 0, d0b, 2), OG_OK);
    assert_int_equal(og_table_txn_delete(x, 2, d2, 1), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 3);
    og_table_txn_free(x);

    /* v4: a further delete in fragment 0 (cumulative file: 4 rows) */
    assert_int_equal(og_table_txn_begin(&x, f->t, 3, NULL), OG_OK);
    uint32_t d0c[] = {0};
    assert_int_equal(og_table_txn_delete(x, 0, d0c, 1), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 4);
    og_table_txn_free(x);

    og_manifest m;
    assert_int_equal(og_table_load(f->t, 4, &m), OG_OK);
    assert_int_equal(m.nfragments, 3);
    assert_int_equal(m.fragments[0].deletion.present, 1);
    assert_int_equal(m.fragments[0].deletion.kind, OG_DELETION_BITMAP);
    assert_int_equal(m.fragments[0].deletion.num_deleted_rows, 4);
    assert_int_equal(m.fragments[0].deletion.read_version, 3);
    assert_int_equal(m.fragments[1].deletion.present, 0);
    assert_int_equal(m.fragments[2].deletion.num_deleted_rows, 1);
    assert_int_equal(m.fragments[2].deletion.read_version, 2); /* unchanged since v3 */
    assert_int_equal(m.reader_flags, 1);
    assert_int_equal(m.writer_flags, 1);
    assert_int_equal(m.max_fragment_id, 2);
    assert_string_equal(m.format_name, "lance");
    assert_string_equal(m.format_version, "2.0");
    assert_int_equal(og_manifest_live_rows(&m), 10 - 5);
    og_manifest_free(&m);

    /* v5: compact fragments 0 and 1 (live rows only, order kept) */
    assert_int_equal(og_table_txn_begin(&x, f->t, 4, NULL), OG_OK);
    uint64_t which[] = {1, 0};
    assert_int_equal(og_table_txn_compact(x, which, 2, &frag), OG_OK);
    assert_int_equal(frag, 3);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 5);
    og_table_txn_free(x);
    assert_int_equal(og_table_load(f->t, 5, &m), OG_OK);
    assert_int_equal(m.nfragments, 2);
    assert_int_equal(m.fragments[0].id, 3);
    assert_int_equal(m.fragments[0].physical_rows, 4);
    assert_int_equal(m.fragments[0].deletion.present, 0);
    assert_int_equal(m.fragments[1].id, 2);
    assert_int_equal(m.max_fragment_id, 3);
    assert_int_equal(m.reader_flags, 1); /* fragment 2 still has its file */
    og_manifest_free(&m);

    /* v6: overwrite */
    assert_int_equal(og_table_txn_begin(&x, f->t, 5, NULL), OG_OK);
    assert_int_equal(og_table_txn_overwrite(x), OG_OK);
    append_rows(x, 100, 2, &frag);
    assert_int_equal(frag, 4); /* ids are never reused */
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 6);
    og_table_txn_free(x);
    assert_int_equal(og_table_load(f->t, 6, &m), OG_OK);
    assert_int_equal(m.reader_flags, 0);
    og_manifest_free(&m);

    /* every version still reads exactly its own rows */
    expect_dump(f->t, 1, V1);
    expect_dump(f->t, 2, "0:0 r0 0 s0;0:1 r1 10 s1;0:2 r2 20 s2;0:3 r3 30 -;0:4 r4 40 s4;"
                         "1:0 r5 50 s5;1:1 r6 60 s6;1:2 r7 70 -;2:0 r8 80 s8;2:1 r9 90 s9");
    expect_dump(f->t, 3, "0:0 r0 0 s0;0:2 r2 20 s2;1:0 r5 50 s5;1:1 r6 60 s6;1:2 r7 70 -;2:1 r9 90 s9");
    expect_dump(f->t, 4, "0:2 r2 20 s2;1:0 r5 50 s5;1:1 r6 60 s6;1:2 r7 70 -;2:1 r9 90 s9");
    expect_dump(f->t, 5, "3:0 r2 20 s2;3:1 r5 50 s5;3:2 r6 60 s6;3:3 r7 70 -;2:1 r9 90 s9");
    expect_dump(f->t, 6, "4:0 r100 1000 s100;4:1 r101 1010 s101");

    /* projection, in the caller's order */
    int32_t proj[] = {2, 0};
    char *got = dump(f->t, 4, proj, 2);
    assert_string_equal(got, "0:2 s2 r2;1:0 s5 r5;1:1 s6 r6;1:2 - r7;2:1 s9 r9");
    free(got);

    uint64_t latest, *vs;
    size_t nv;
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 6);
    assert_int_equal(og_table_list_versions(f->t, &vs, &nv), OG_OK);
    assert_int_equal(nv, 6);
    for (size_t i = 0; i < nv; i++) assert_int_equal(vs[i], i + 1);
    free(vs);
    og_lance_schema_free(&s);
}

static void take_rows(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 20, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    og_manifest m;
    assert_int_equal(og_table_load(f->t, v, &m), OG_OK);
    uint32_t offs[] = {2, 3, 17};
    int32_t ids[] = {1, 2};
    og_vector out[2];
    assert_int_equal(og_table_take(f->t, &m, 0, offs, 3, ids, 2, out), OG_OK);
    assert_int_equal(out[0].len, 3);
    assert_int_equal(og_vector_get_i64(&out[0], 2), 170);
    assert_true(og_vector_is_null(&out[1], 1));
    size_t n;
    const uint8_t *p = og_vector_get_bytes(&out[1], 0, &n);
    assert_int_equal(n, 2);
    assert_memory_equal(p, "s2", 2);
    free_cols(out, 2);
    uint32_t bad[] = {20};
    assert_int_equal(og_table_take(f->t, &m, 0, bad, 1, ids, 2, out), OG_ERR_INVALID);
    assert_int_equal(og_table_take(f->t, &m, 9, offs, 1, ids, 2, out), OG_ERR_NOT_FOUND);
    og_manifest_free(&m);
    og_lance_schema_free(&s);
}

/* Another writer took version 2 first: our commit from base 1 gets 3, and 2 stays theirs. */
static void commit_collision_takes_next(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 3, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 1);
    og_table_txn_free(x);

    /* the other writer: version 2 = version 1's manifest renumbered */
    og_manifest m;
    assert_int_equal(og_table_load(f->t, 1, &m), OG_OK);
    m.version = 2;
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_manifest_file_encode(&m, &b), OG_OK);
    char rel[64], key[256];
    assert_int_equal(og_manifest_path(rel, sizeof rel, 2), OG_OK);
    snprintf(key, sizeof key, "tables/t1.lance/%s", rel);
    assert_int_equal(og_store_put_if_absent(f->st, key, b.data, b.len), OG_OK);
    og_buf_free(&b);
    og_manifest_free(&m);

    assert_int_equal(og_table_txn_begin(&x, f->t, 1, NULL), OG_OK);
    append_rows(x, 3, 1, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 3);
    og_table_txn_free(x);
    expect_dump(f->t, 2, "0:0 r0 0 s0;0:1 r1 10 s1;0:2 r2 20 s2");
    expect_dump(f->t, 3, "0:0 r0 0 s0;0:1 r1 10 s1;0:2 r2 20 s2;1:0 r3 30 -");

    /* a writer far behind (versions 4..12 taken) still finds a free number */
    assert_int_equal(og_table_load(f->t, 1, &m), OG_OK);
    for (uint64_t k = 4; k <= 12; k++) {
        m.version = k;
        assert_int_equal(og_manifest_file_encode(&m, &b), OG_OK);
        assert_int_equal(og_manifest_path(rel, sizeof rel, k), OG_OK);
        snprintf(key, sizeof key, "tables/t1.lance/%s", rel);
        assert_int_equal(og_store_put_if_absent(f->st, key, b.data, b.len), OG_OK);
        og_buf_reset(&b);
    }
    og_buf_free(&b);
    og_manifest_free(&m);
    assert_int_equal(og_table_txn_begin(&x, f->t, 3, NULL), OG_OK);
    append_rows(x, 4, 1, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 13);
    og_table_txn_free(x);
    og_lance_schema_free(&s);
}

static void stable_field_ids_and_added_column(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 2, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);

    /* v2: add a nullable F64 column with a new id (manifest-only) */
    og_lance_schema s2;
    assert_int_equal(og_lance_schema_copy(&s2, &s), OG_OK);
    assert_int_equal(og_lance_schema_add_column(&s2, "score", T_F64, 5, -1, 1, 0), OG_OK);
    assert_int_equal(og_table_txn_begin(&x, f->t, 1, &s2), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(v, 2);
    og_table_txn_free(x);
    og_manifest m;
    assert_int_equal(og_table_load(f->t, 2, &m), OG_OK);
    assert_int_equal(m.schema.count, 4);
    for (size_t i = 0; i < 3; i++) assert_int_equal(m.schema.fields[i].id, s.fields[i].id);
    assert_int_equal(m.schema.fields[3].id, 5);
    assert_int_equal(m.fragments[0].nfiles, 1); /* no data rewritten */
    og_manifest_free(&m);
    expect_dump(f->t, 2, "0:0 r0 0 s0 -;0:1 r1 10 s1 -");

    /* v3: a new fragment holds the column */
    assert_int_equal(og_table_txn_begin(&x, f->t, 2, NULL), OG_OK);
    og_vector c[4];
    make_cols(c, 2, 2);
    assert_int_equal(og_vector_init(&c[3], T_F64), OG_OK);
    assert_int_equal(og_vector_append_f64(&c[3], 1.5), OG_OK);
    assert_int_equal(og_vector_append_null(&c[3]), OG_OK);
    assert_int_equal(og_table_txn_append(x, c, 3, NULL), OG_ERR_INVALID); /* column count */
    assert_int_equal(og_table_txn_append(x, c, 4, NULL), OG_OK);
    free_cols(c, 4);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    expect_dump(f->t, 3, "0:0 r0 0 s0 -;0:1 r1 10 s1 -;1:0 r2 20 s2 1.5;1:1 r3 30 - -");
    expect_dump(f->t, 1, "0:0 r0 0 s0;0:1 r1 10 s1");

    /* unstable changes are refused */
    og_lance_schema bad = OG_LANCE_SCHEMA_INIT;
    assert_int_equal(og_lance_schema_add_column(&bad, "id", T_STR, 0, -1, 0, 1), OG_OK);
    assert_int_equal(og_lance_schema_add_column(&bad, "n", T_STR, 1, -1, 1, 0), OG_OK); /* type change */
    assert_int_equal(og_table_txn_begin(&x, f->t, 3, &bad), OG_ERR_INVALID);
    og_lance_schema_free(&bad);
    assert_int_equal(og_lance_schema_copy(&bad, &s2), OG_OK);
    assert_int_equal(og_lance_schema_add_column(&bad, "req", T_I64, 6, -1, 0, 0), OG_OK); /* non-null */
    assert_int_equal(og_table_txn_begin(&x, f->t, 3, &bad), OG_ERR_INVALID);
    og_lance_schema_free(&bad);
    /* dropping "s" (id 2) is fine; re-adding a column under id 2 while files hold it is not */
    og_lance_schema drop = OG_LANCE_SCHEMA_INIT;
    assert_int_equal(og_lance_schema_add_column(&drop, "id", T_STR, 0, -1, 0, 1), OG_OK);
    assert_int_equal(og_lance_schema_add_column(&drop, "n", T_I64, 1, -1, 1, 0), OG_OK);
    assert_int_equal(og_table_txn_begin(&x, f->t, 3, &drop), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    expect_dump(f->t, v, "0:0 r0 0;0:1 r1 10;1:0 r2 20;1:1 r3 30");
    assert_int_equal(og_lance_schema_add_column(&drop, "s2", T_F64, 2, -1, 1, 0), OG_OK);
    assert_int_equal(og_table_txn_begin(&x, f->t, v, &drop), OG_ERR_INVALID);
    og_lance_schema_free(&drop);
    og_lance_schema_free(&s2);
    og_lance_schema_free(&s);
}

/* A scan of a range of the manifest's fragments (one side of a two-threaded column load)
 * reads exactly their live rows, in order; the ranges of a split, one after the other, read
 * the whole scan's rows; a range outside the manifest, or with a fragment list, is refused. */
/* og_table_scan_opts.no_row_addrs: batches without deleted rows leave row_addrs NULL and
 * give their first offset; the rows read are the same as with addresses. */
/* A version of fragments of sizes[0..n) rows (rows numbered on across them), then one more
 * with row 1 of the first fragment deleted; returns that last version. */
static uint64_t fragments_then_a_deletion(fx *f, og_lance_schema *s, const int *sizes, size_t n)
{
    og_table_txn *x;
    uint64_t v1, v2;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, s), OG_OK);
    for (size_t i = 0, at = 0; i < n; at += (size_t)sizes[i++]) append_rows(x, (int)at, sizes[i], NULL);
    assert_int_equal(og_table_txn_commit(x, &v1), OG_OK);
    og_table_txn_free(x);
    assert_int_equal(og_table_txn_begin(&x, f->t, v1, NULL), OG_OK);
    uint32_t d[] = {1};
    assert_int_equal(og_table_txn_delete(x, 1, d, 1), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v2), OG_OK);
    og_table_txn_free(x);
    return v2;
}

static void a_scan_may_skip_row_addresses(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    static const int sizes[] = {5, 3};
    uint64_t v2 = fragments_then_a_deletion(f, &s, sizes, 2);
    char *all = dump(f->t, v2, NULL, 0);
    og_manifest m;
    assert_int_equal(og_table_load(f->t, v2, &m), OG_OK);
    og_table_scan_opts o = {NULL, 0, NULL, 0, 2, 1};
    og_table_scan *sc;
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, &o), OG_OK);
    og_buf out = OG_BUF_INIT;
    og_table_batch b;
    size_t without = 0, with = 0;
    for (;;) {
        assert_int_equal(og_table_scan_next(sc, &b), OG_OK);
        if (!b.nrows) break;
        if (b.row_addrs) with++;
        else without++;
        for (size_t r = 0; r < b.nrows; r++) {
            char row[256];
            render(&b, r, row, sizeof row);
            og_buf_printf(&out, "%s%s", out.len ? ";" : "", row);
        }
    }
    og_table_scan_free(sc);
    og_manifest_free(&m);
    og_buf_append_byte(&out, 0);
    assert_string_equal((char *)out.data, all);
    assert_int_equal(without, 4); /* fragment 0's three batches, fragment 1's last */
    assert_int_equal(with, 1);    /* fragment 1's batch with the deleted row lists its rows */
    og_buf_free(&out);
    free(all);
    og_lance_schema_free(&s);
}

static void a_range_scan_reads_only_its_fragments(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    static const int sizes[] = {5, 3, 4};
    uint64_t v2 = fragments_then_a_deletion(f, &s, sizes, 3);
    char *all = dump(f->t, v2, NULL, 0);
    for (size_t k = 0; k <= 3; k++) { /* split at every fragment boundary */
        char *a = dump_range(f->t, v2, 0, k), *b = dump_range(f->t, v2, k, 3);
        char joined[4096];
        snprintf(joined, sizeof joined, "%s%s%s", a, *a && *b ? ";" : "", b);
        assert_string_equal(joined, all);
        free(a);
        free(b);
    }
    char *mid = dump_range(f->t, v2, 1, 2);
    assert_string_equal(mid, "1:0 r5 50 s5;1:2 r7 70 -");
    free(mid);
    free(all);
    og_manifest m;
    assert_int_equal(og_table_load(f->t, v2, &m), OG_OK);
    og_table_scan *sc = NULL;
    assert_int_equal(og_table_scan_open_range(&sc, f->t, &m, NULL, 2, 1), OG_ERR_INVALID);
    assert_int_equal(og_table_scan_open_range(&sc, f->t, &m, NULL, 0, 4), OG_ERR_INVALID);
    uint64_t one = m.fragments[0].id;
    og_table_scan_opts o = {NULL, 0, &one, 1, 0, 0};
    assert_int_equal(og_table_scan_open_range(&sc, f->t, &m, &o, 0, 1), OG_ERR_INVALID);
    assert_null(sc);
    /* named fragments: each once, in manifest order, whatever order and repeats they are
     * named in; a fragment the version lacks is OG_ERR_NOT_FOUND */
    uint64_t named[] = {m.fragments[2].id, m.fragments[0].id, m.fragments[2].id, m.fragments[2].id};
    og_table_scan_opts no = {NULL, 0, named, 4, 0, 0};
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, &no), OG_OK);
    og_manifest mc;
    assert_int_equal(og_manifest_copy(&mc, &m), OG_OK);
    char *picked = drain(sc, &mc);
    assert_string_equal(picked, "0:0 r0 0 s0;0:1 r1 10 s1;0:2 r2 20 s2;0:3 r3 30 -;0:4 r4 40 s4;"
                                "2:0 r8 80 s8;2:1 r9 90 s9;2:2 r10 100 s10;2:3 r11 110 -");
    free(picked);
    uint64_t absent[] = {m.fragments[1].id, 99};
    og_table_scan_opts na = {NULL, 0, absent, 2, 0, 0};
    sc = NULL;
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, &na), OG_ERR_NOT_FOUND);
    assert_null(sc);
    og_error_clear();
    /* og_manifest_find_fragment finds every fragment in any order of the list */
    for (size_t i = 0; i < 3; i++) assert_int_equal(og_manifest_find_fragment(&m, m.fragments[i].id), (long)i);
    og_fragment t0 = m.fragments[0];
    m.fragments[0] = m.fragments[2], m.fragments[2] = t0; /* (ids now descending at the ends) */
    for (size_t i = 0; i < 3; i++) assert_int_equal(og_manifest_find_fragment(&m, m.fragments[i].id), (long)i);
    assert_int_equal(og_manifest_find_fragment(&m, 99), -1);
    m.fragments[2] = m.fragments[0], m.fragments[0] = t0;
    og_manifest_free(&m);
    og_lance_schema_free(&s);
}

static void errors_are_typed(void **state)
{
    fx *f = *state;
    og_manifest m;
    og_table_txn *x;
    assert_int_equal(og_table_load(f->t, 1, &m), OG_ERR_NOT_FOUND);
    assert_int_equal(og_table_txn_begin(&x, f->t, 1, NULL), OG_ERR_NOT_FOUND);
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, NULL), OG_ERR_INVALID);
    uint64_t latest = 99;
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 0);

    og_lance_schema s;
    base_schema(&s);
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 3, NULL);
    uint32_t past[] = {3};
    assert_int_equal(og_table_txn_delete(x, 0, past, 1), OG_ERR_INVALID);
    assert_int_equal(og_table_txn_delete(x, 5, past, 1), OG_ERR_NOT_FOUND);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v), OG_ERR_INVALID); /* only once */
    og_table_txn_free(x);

    /* a corrupt manifest in the store */
    char rel[64], key[256];
    assert_int_equal(og_manifest_path(rel, sizeof rel, 2), OG_OK);
    snprintf(key, sizeof key, "tables/t1.lance/%s", rel);
    assert_int_equal(og_store_put(f->st, key, "garbage, not a manifest", 23), OG_OK);
    assert_int_equal(og_table_load(f->t, 2, &m), OG_ERR_CORRUPT);
    assert_int_equal(og_table_txn_begin(&x, f->t, 2, NULL), OG_ERR_CORRUPT);
    /* a missing data file is a typed not_found at scan time (reclaimed by cleanup, or removed) */
    assert_int_equal(og_table_load(f->t, 1, &m), OG_OK);
    char dkey[256];
    snprintf(dkey, sizeof dkey, "tables/t1.lance/data/%s", m.fragments[0].files[0].path);
    assert_int_equal(og_store_delete(f->st, dkey), OG_OK);
    /* the writer kept its data file in the range cache (OG_TABLE_RANGE_READS): read as a fresh
     * process would, from an empty cache */
    og_range_config rc;
    og_range_config_get(&rc);
    assert_int_equal(og_range_configure(&rc), OG_OK);
    og_table_scan *sc;
    og_table_batch b;
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, NULL), OG_OK);
    assert_int_equal(og_table_scan_next(sc, &b), OG_ERR_NOT_FOUND);
    og_table_scan_free(sc);
    int32_t nope[] = {42};
    og_table_scan_opts o = {nope, 1, NULL, 0, 0, 0};
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, &o), OG_ERR_NOT_FOUND);
    og_manifest_free(&m);
    og_table *t2;
    assert_int_equal(og_table_open(&t2, f->st, "../x"), OG_ERR_INVALID);
    assert_int_equal(og_table_open(&t2, f->st, ""), OG_ERR_INVALID);
    og_lance_schema_free(&s);
}

static void bad_deletion_files_are_corrupt(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 5, NULL);
    uint32_t d[] = {1};
    assert_int_equal(og_table_txn_delete(x, 0, d, 1), OG_OK);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    og_manifest m;
    assert_int_equal(og_table_load(f->t, v, &m), OG_OK);
    char rel[128], key[256];
    const og_deletion_info *di = &m.fragments[0].deletion;
    assert_int_equal(og_deletion_path(rel, sizeof rel, 0, di->read_version, di->id, di->kind), OG_OK);
    snprintf(key, sizeof key, "tables/t1.lance/%s", rel);
    /* a row past the fragment's 5 rows */
    roaring_bitmap_t *bm = roaring_bitmap_create();
    roaring_bitmap_add(bm, 1000);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_deletion_encode_bitmap(bm, &b), OG_OK);
    roaring_bitmap_free(bm);
    assert_int_equal(og_store_put(f->st, key, b.data, b.len), OG_OK);
    og_buf_free(&b);
    og_table_scan *sc;
    og_table_batch batch;
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, NULL), OG_OK);
    assert_int_equal(og_table_scan_next(sc, &batch), OG_ERR_CORRUPT);
    og_table_scan_free(sc);
    /* garbage */
    assert_int_equal(og_store_put(f->st, key, "nope", 4), OG_OK);
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, NULL), OG_OK);
    assert_int_equal(og_table_scan_next(sc, &batch), OG_ERR_CORRUPT);
    og_table_scan_free(sc);
    /* missing: not_found (reclaimed by cleanup, or removed) */
    assert_int_equal(og_store_delete(f->st, key), OG_OK);
    assert_int_equal(og_table_scan_open(&sc, f->t, &m, NULL), OG_OK);
    assert_int_equal(og_table_scan_next(sc, &batch), OG_ERR_NOT_FOUND);
    og_table_scan_free(sc);
    og_manifest_free(&m);
    og_lance_schema_free(&s);
}

/* Runs one commit in a child process with OG_FAULT set; returns the child's exit code. */
static int commit_with_fault(fx *f, const char *point)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("OG_FAULT", point, 1);
        og_lance_schema s;
        base_schema(&s);
        og_table_txn *x;
        uint64_t v;
        uint64_t base = 0;
        og_table_latest_version(f->t, &base);
        if (og_table_txn_begin(&x, f->t, base, base ? NULL : &s) != OG_OK) _exit(2);
        append_rows(x, 0, 2, NULL);
        if (base) {
            uint32_t d[] = {0};
            og_table_txn_delete(x, 0, d, 1);
        }
        if (og_table_txn_commit(x, &v) != OG_OK) _exit(3);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void fault_points(void **state)
{
    fx *f = *state;
    uint64_t latest;
    assert_int_equal(commit_with_fault(f, "table.after_data_file"), OG_FAULT_EXIT_CODE);
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 0); /* a data file, but no version */
    assert_int_equal(commit_with_fault(f, "table.after_manifest"), OG_FAULT_EXIT_CODE);
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 1); /* the manifest was durable before the crash */
    expect_dump(f->t, 1, "0:0 r0 0 s0;0:1 r1 10 s1");
    assert_int_equal(commit_with_fault(f, "table.after_deletion_file"), OG_FAULT_EXIT_CODE);
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 1);
    assert_int_equal(commit_with_fault(f, "none"), 0);
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 2);
    expect_dump(f->t, 2, "0:1 r1 10 s1;1:0 r0 0 s0;1:1 r1 10 s1");
}

/* Several processes commit on the same base at once: each gets its own version number (not
 * necessarily dense: a writer that keeps losing jumps a random distance past the numbers
 * taken, so the gaps a lost race leaves are allowed — a commit names its versions). */
static void racing_writers_get_distinct_versions(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 1, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    enum { N = 6 };
    int fds[N][2];
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        assert_int_equal(pipe(fds[i]), 0);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            og_table_txn *y;
            uint64_t got = 0;
            if (og_table_txn_begin(&y, f->t, 1, NULL) != OG_OK) _exit(2);
            append_rows(y, 100 + i, 1, NULL);
            if (og_table_txn_commit(y, &got) != OG_OK) _exit(3);
            if (write(fds[i][1], &got, sizeof got) != sizeof got) _exit(4);
            _exit(0);
        }
        close(fds[i][1]);
    }
    int seen[N + 2 + 32 * N] = {0};
    for (int i = 0; i < N; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        uint64_t got = 0;
        assert_int_equal(read(fds[i][0], &got, sizeof got), sizeof got);
        close(fds[i][0]);
        assert_true(got >= 2 && got < N + 2 + 32 * N);
        assert_int_equal(seen[got], 0);
        seen[got] = 1;
        /* each version is base 1 plus that writer's own row */
        char want[64];
        snprintf(want, sizeof want, "0:0 r0 0 s0;1:0 r%d %d s%d", 100 + i, (100 + i) * 10, 100 + i);
        if ((100 + i) % 4 == 3) snprintf(want, sizeof want, "0:0 r0 0 s0;1:0 r%d %d -", 100 + i, (100 + i) * 10);
        expect_dump(f->t, got, want);
    }
    og_lance_schema_free(&s);
}

/* A writer whose base is far behind the newest version takes the first number past the
 * versions that exist (found by probing, not by listing), and many such writers stay dense:
 * no number runs away however many of them commit on the same old base. */
static void behind_writers_take_the_next_free_number(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v = 0;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 1, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    assert_int_equal(v, 1);
    for (int i = 0; i < 40; i++) { /* versions 2..41 on top of each other */
        assert_int_equal(og_table_txn_begin(&x, f->t, v, NULL), OG_OK);
        append_rows(x, 10 + i, 1, NULL);
        assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
        og_table_txn_free(x);
    }
    assert_int_equal(v, 41);
    for (int i = 0; i < 30; i++) { /* 30 writers on base 1: 42, 43, ... in order */
        uint64_t got = 0;
        assert_int_equal(og_table_txn_begin(&x, f->t, 1, NULL), OG_OK);
        append_rows(x, 100 + i, 1, NULL);
        assert_int_equal(og_table_txn_commit(x, &got), OG_OK);
        og_table_txn_free(x);
        assert_int_equal(got, 42 + (uint64_t)i);
        char want[64];
        snprintf(want, sizeof want, "0:0 r0 0 s0;1:0 r%d %d s%d", 100 + i, (100 + i) * 10, 100 + i);
        if ((100 + i) % 4 == 3) snprintf(want, sizeof want, "0:0 r0 0 s0;1:0 r%d %d -", 100 + i, (100 + i) * 10);
        expect_dump(f->t, got, want);
    }
    uint64_t latest;
    assert_int_equal(og_table_latest_version(f->t, &latest), OG_OK);
    assert_int_equal(latest, 71);
    og_lance_schema_free(&s);
}

static void manifest_cache(void **state)
{
    fx *f = *state;
    og_cache *c;
    assert_int_equal(og_cache_new(&c, 1 << 20), OG_OK);
    og_table_set_cache(f->t, c);
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 4, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    og_manifest a, b;
    assert_int_equal(og_table_load(f->t, v, &a), OG_OK);
    assert_int_equal(og_table_load(f->t, v, &b), OG_OK);
    og_cache_stats cs;
    og_cache_get_stats(c, &cs);
    /* the writer cached the manifest it wrote: no read back, both loads hit it.  The one miss
     * is the writer's reservation looking up the table's version-number hint ("vn:"), which
     * it then holds, so noting the published version at commit is a hit */
    assert_int_equal(cs.misses, 1);
    assert_int_equal(cs.hits, 3);
    assert_int_equal(a.nfragments, 1);
    assert_int_equal(b.fragments[0].physical_rows, 4);
    og_manifest_free(&a); /* copies: freeing one leaves the other and the cache intact */
    expect_dump(f->t, v, "0:0 r0 0 s0;0:1 r1 10 s1;0:2 r2 20 s2;0:3 r3 30 -");
    og_manifest_free(&b);
    assert_int_equal(og_table_load(f->t, v + 1, &a), OG_ERR_NOT_FOUND); /* misses are not cached */
    og_table_set_cache(f->t, NULL);
    og_cache_free(c);
    og_lance_schema_free(&s);
}

/* A point read of a local file keeps its opened reader in the table's cache (an "f:" entry): the
 * next take of the same file is a cache hit and opens nothing; a scan keeps its readers to
 * itself; a cache that retains nothing gives the same answers (table_scan.c open_file). */
static void take_keeps_the_opened_file_in_the_cache(void **state)
{
    fx *f = *state;
    og_lance_schema s;
    base_schema(&s);
    og_table_txn *x;
    uint64_t v;
    assert_int_equal(og_table_txn_begin(&x, f->t, 0, &s), OG_OK);
    append_rows(x, 0, 20, NULL);
    assert_int_equal(og_table_txn_commit(x, &v), OG_OK);
    og_table_txn_free(x);
    og_manifest m;
    assert_int_equal(og_table_load(f->t, v, &m), OG_OK);
    for (size_t bound = 1 << 20;; bound = 0) {
        og_cache *c;
        assert_int_equal(og_cache_new(&c, bound), OG_OK);
        og_table_set_cache(f->t, c);
        og_cache_stats a, b;
        og_cache_get_stats(c, &a);
        char *scanned = dump(f->t, v, NULL, 0); /* a scan: no "f:" entry */
        og_cache_get_stats(c, &b);
        free(scanned);
        size_t entries = b.entries;
        uint32_t offs[] = {4, 11};
        int32_t ids[] = {1, 2};
        for (int round = 0; round < 3; round++) {
            og_vector out[2];
            og_cache_get_stats(c, &a);
            assert_int_equal(og_table_take(f->t, &m, 0, offs, 2, ids, 2, out), OG_OK);
            og_cache_get_stats(c, &b);
            assert_int_equal(og_vector_get_i64(&out[0], 1), 110);
            size_t n;
            const uint8_t *p = og_vector_get_bytes(&out[1], 0, &n);
            assert_int_equal(n, 2);
            assert_memory_equal(p, "s4", 2);
            free_cols(out, 2);
            if (!bound) {
                assert_int_equal(b.entries, 0);
            } else if (og_range_use(f->st)) {
                /* read over ranges (S3, OG_TABLE_RANGE_READS=1): only a local file's mapped
                 * reader is kept, so no "f:" entry */
                assert_int_equal(b.entries, entries);
            } else if (round == 0) {
                assert_int_equal(b.entries, entries + 1); /* the opened file */
                assert_int_equal(b.inserts, a.inserts + 1);
            } else {
                assert_int_equal(b.entries, entries + 1);
                assert_int_equal(b.inserts, a.inserts);
                assert_true(b.hits > a.hits);
            }
        }
        og_table_set_cache(f->t, NULL);
        og_cache_free(c);
        if (!bound) break;
    }
    og_manifest_free(&m);
    og_lance_schema_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(version_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(take_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(commit_collision_takes_next, setup, teardown),
        cmocka_unit_test_setup_teardown(stable_field_ids_and_added_column, setup, teardown),
        cmocka_unit_test_setup_teardown(errors_are_typed, setup, teardown),
        cmocka_unit_test_setup_teardown(a_range_scan_reads_only_its_fragments, setup, teardown),
        cmocka_unit_test_setup_teardown(a_scan_may_skip_row_addresses, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_deletion_files_are_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(fault_points, setup, teardown),
        cmocka_unit_test_setup_teardown(manifest_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(take_keeps_the_opened_file_in_the_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(racing_writers_get_distinct_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(behind_writers_take_the_next_free_number, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
