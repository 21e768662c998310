/*
 * test_arrow.c — query results as Arrow (docs/query-language.md "Arrow output"):
 *  - og_rows_to_arrow: the C Data Interface tree — the struct's formats, names, nullability,
 *    lengths, null counts and every buffer's bytes for each type (ints of each width and
 *    sign, floats, bools, dates, datetimes, strings, blobs, lists, vectors, untyped nulls,
 *    JSON objects); release frees it all, a child moved out outlives its parent;
 *  - og_rows_render(OG_FORMAT_ARROW): a well-framed IPC stream (tests/api/arrow_walk.h) for an
 *    empty result, a small one and one past a record batch, and offsets rebased for a slice.
 * Apache Arrow's own reader checks the IPC bytes value by value in
 * tests/interop/arrow_output.test.mjs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/arrow.h"
#include "api/rows.h"
#include "arrow_walk.h"

static og_rows *rows_new(size_t ncols)
{
    og_rows *r = calloc(1, sizeof *r);
    r->res.query = strdup("q");
    r->res.ncols = ncols;
    r->res.names = calloc(ncols + 1, sizeof *r->res.names);
    r->res.types = calloc(ncols + 1, sizeof *r->res.types);
    r->res.cols = calloc(ncols + 1, sizeof *r->res.cols);
    return r;
}

static og_vector *col(og_rows *r, size_t c, const char *name, og_type t, int nullable)
{
    r->res.names[c] = strdup(name);
    r->res.types[c] = (og_qtype){t, nullable, 0, -1, 0};
    assert_int_equal(og_vector_init(&r->res.cols[c], t), OG_OK);
    return &r->res.cols[c];
}

#define T(id) ((og_type){id, OG_T_NULL, 0})

/* Three rows of every type; row 1 null wherever the column is nullable. */
static og_rows *all_types(void)
{
    og_rows *r = rows_new(14);
    og_vector *v;
    v = col(r, 0, "i32", T(OG_T_I32), 1);
    og_vector_append_i64(v, INT32_MIN), og_vector_append_null(v), og_vector_append_i64(v, 7);
    v = col(r, 1, "i64", T(OG_T_I64), 0);
    og_vector_append_i64(v, INT64_MIN), og_vector_append_i64(v, 0), og_vector_append_i64(v, INT64_MAX);
    v = col(r, 2, "u32", T(OG_T_U32), 1);
    og_vector_append_u64(v, UINT32_MAX), og_vector_append_null(v), og_vector_append_u64(v, 1);
    v = col(r, 3, "u64", T(OG_T_U64), 1);
    og_vector_append_u64(v, UINT64_MAX), og_vector_append_null(v), og_vector_append_u64(v, 2);
    v = col(r, 4, "f32", T(OG_T_F32), 1);
    og_vector_append_f64(v, 1.5), og_vector_append_null(v), og_vector_append_f64(v, -0.25);
    v = col(r, 5, "f64", T(OG_T_F64), 1);
    og_vector_append_f64(v, 1e300), og_vector_append_null(v), og_vector_append_f64(v, -2);
    v = col(r, 6, "ok", T(OG_T_BOOL), 1);
    og_vector_append_bool(v, 1), og_vector_append_null(v), og_vector_append_bool(v, 0);
    v = col(r, 7, "day", T(OG_T_DATE32), 1);
    og_vector_append_i64(v, 19782), og_vector_append_null(v), og_vector_append_i64(v, -1);
    v = col(r, 8, "at", T(OG_T_DATE64), 1);
    og_vector_append_i64(v, 1709210096789LL), og_vector_append_null(v), og_vector_append_i64(v, 0);
    v = col(r, 9, "name", T(OG_T_STRING), 1);
    og_vector_append_bytes(v, "ab", 2), og_vector_append_null(v), og_vector_append_bytes(v, "y\xc3\xa9", 3);
    v = col(r, 10, "raw", T(OG_T_BLOB), 1);
    og_vector_append_bytes(v, "\x00\xff", 2), og_vector_append_null(v), og_vector_append_bytes(v, "", 0);
    v = col(r, 11, "tags", ((og_type){OG_T_LIST, OG_T_STRING, 0}), 1);
    og_vector_append_bytes(v->child, "x", 1), og_vector_append_bytes(v->child, "yz", 2), og_vector_append_list_end(v);
    og_vector_append_null(v);
    og_vector_append_list_end(v); /* [] */
    v = col(r, 12, "emb", ((og_type){OG_T_VECTOR, OG_T_NULL, 2}), 1);
    const float f0[2] = {0.5f, -1}, f2[2] = {2, 3};
    og_vector_append_floats(v, f0, 2), og_vector_append_null(v), og_vector_append_floats(v, f2, 2);
    v = col(r, 13, "nothing", T(OG_T_NULL), 1);
    v->len = 3, v->null_count = 3; /* an untyped null column: rows and no buffers */
    r->res.nrows = 3;
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    return r;
}

static void expect_bytes(const void *got, const void *want, size_t n) { assert_memory_equal(got, want, n); }

static void test_c_data_every_type(void **state)
{
    (void)state;
    og_rows *r = all_types();
    struct ArrowSchema s;
    struct ArrowArray a;
    assert_int_equal(og_rows_to_arrow(r, &s, &a), OG_OK);
    og_rows_free(r); /* the export owns copies */

    assert_string_equal(s.format, "+s");
    assert_int_equal(s.n_children, 14);
    assert_int_equal(a.length, 3);
    assert_int_equal(a.n_children, 14);
    assert_int_equal(a.n_buffers, 1);
    assert_null(a.buffers[0]);
    static const char *const formats[] = {"i", "l", "I", "L", "f", "g", "b", "tdD", "tsm:UTC", "u", "z", "+l", "+w:2", "n"};
    static const char *const names[] = {"i32", "i64", "u32", "u64", "f32", "f64", "ok", "day", "at", "name", "raw", "tags",
                                        "emb", "nothing"};
    for (int c = 0; c < 14; c++) {
        assert_string_equal(s.children[c]->format, formats[c]);
        assert_string_equal(s.children[c]->name, names[c]);
        assert_int_equal(s.children[c]->flags, c == 1 ? 0 : ARROW_FLAG_NULLABLE);
        assert_int_equal(a.children[c]->length, 3);
        assert_int_equal(a.children[c]->offset, 0);
        assert_int_equal(a.children[c]->null_count, c == 1 ? 0 : c == 13 ? 3 : 1);
        if (c != 1 && c != 13) assert_int_equal(*(const uint8_t *)a.children[c]->buffers[0], 0x5); /* rows 0, 2 */
    }
    assert_null(a.children[1]->buffers[0]); /* no nulls: no bitmap */
    const int32_t i32[3] = {INT32_MIN, 0, 7};
    expect_bytes(a.children[0]->buffers[1], i32, 4); /* a null row's value is unspecified */
    expect_bytes((const int32_t *)a.children[0]->buffers[1] + 2, i32 + 2, 4);
    const int64_t i64[3] = {INT64_MIN, 0, INT64_MAX};
    expect_bytes(a.children[1]->buffers[1], i64, sizeof i64);
    assert_int_equal(((const uint32_t *)a.children[2]->buffers[1])[0], UINT32_MAX);
    assert_true(((const uint64_t *)a.children[3]->buffers[1])[0] == UINT64_MAX);
    assert_true(((const float *)a.children[4]->buffers[1])[2] == -0.25f);
    assert_true(((const double *)a.children[5]->buffers[1])[0] == 1e300);
    assert_int_equal(*(const uint8_t *)a.children[6]->buffers[1] & 0x5, 0x1); /* true, -, false */
    assert_int_equal(((const int32_t *)a.children[7]->buffers[1])[0], 19782);
    assert_int_equal(((const int32_t *)a.children[7]->buffers[1])[2], -1);
    assert_int_equal(((const int64_t *)a.children[8]->buffers[1])[0], 1709210096789LL);
    /* strings: 32-bit offsets from 0, the null row empty */
    const int32_t soff[4] = {0, 2, 2, 5};
    assert_int_equal(a.children[9]->n_buffers, 3);
    expect_bytes(a.children[9]->buffers[1], soff, sizeof soff);
    expect_bytes(a.children[9]->buffers[2], "aby\xc3\xa9", 5);
    const int32_t boff[4] = {0, 2, 2, 2};
    expect_bytes(a.children[10]->buffers[1], boff, sizeof boff);
    expect_bytes(a.children[10]->buffers[2], "\x00\xff", 2);
    /* list<utf8>: offsets, then a child "item" */
    const int32_t loff[4] = {0, 2, 2, 2};
    assert_int_equal(a.children[11]->n_buffers, 2);
    expect_bytes(a.children[11]->buffers[1], loff, sizeof loff);
    assert_int_equal(s.children[11]->n_children, 1);
    assert_string_equal(s.children[11]->children[0]->format, "u");
    assert_string_equal(s.children[11]->children[0]->name, "item");
    assert_int_equal(a.children[11]->children[0]->length, 2);
    expect_bytes(a.children[11]->children[0]->buffers[2], "xyz", 3);
    /* fixed-size list<float32, 2>: validity only, then the child's floats (nulls zero-filled) */
    assert_int_equal(a.children[12]->n_buffers, 1);
    assert_string_equal(s.children[12]->children[0]->format, "f");
    assert_int_equal(a.children[12]->children[0]->length, 6);
    const float fl[6] = {0.5f, -1, 0, 0, 2, 3};
    expect_bytes(a.children[12]->children[0]->buffers[1], fl, sizeof fl);
    assert_int_equal(a.children[13]->n_buffers, 0);

    /* a consumer may move a child out, release the rest, then the child */
    struct ArrowArray moved = *a.children[9];
    a.children[9]->release = NULL;
    struct ArrowSchema smoved = *s.children[9];
    s.children[9]->release = NULL;
    a.release(&a);
    s.release(&s);
    assert_null(a.release);
    assert_null(s.release);
    expect_bytes(moved.buffers[2], "aby\xc3\xa9", 5);
    assert_string_equal(smoved.name, "name");
    moved.release(&moved);
    smoved.release(&smoved);
}

static void test_c_data_json_object_and_empty(void **state)
{
    (void)state;
    og_rows *r = rows_new(1);
    og_vector *v = col(r, 0, "p", T(OG_T_STRING), 0);
    r->res.types[0].node_type = 0, r->res.types[0].is_object = 1;
    og_vector_append_bytes(v, "{\"@id\":\"a\"}", 11);
    r->res.nrows = 1;
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    struct ArrowSchema s;
    struct ArrowArray a;
    assert_int_equal(og_rows_to_arrow(r, &s, &a), OG_OK);
    const char *md = s.children[0]->metadata;
    assert_non_null(md);
    int32_t n, klen;
    memcpy(&n, md, 4);
    memcpy(&klen, md + 4, 4);
    assert_int_equal(n, 2);
    assert_int_equal(klen, 20);
    assert_memory_equal(md + 8, "ARROW:extension:name", 20);
    assert_memory_equal(md + 32, "arrow.json", 10);
    a.release(&a);
    s.release(&s);
    og_rows_free(r);

    /* an empty result: the columns, no rows, offsets still one entry */
    r = all_types();
    og_rows_slice(r, 0, 0);
    assert_int_equal(og_rows_to_arrow(r, &s, &a), OG_OK);
    assert_int_equal(a.length, 0);
    assert_int_equal(a.children[9]->length, 0);
    assert_int_equal(((const int32_t *)a.children[9]->buffers[1])[0], 0);
    assert_int_equal(a.children[11]->children[0]->length, 0);
    a.release(&a);
    s.release(&s);
    og_rows_free(r);
    assert_int_equal(og_rows_to_arrow(NULL, &s, &a), OG_ERR_INVALID);
}

static void walk(const og_rows *r, int64_t rows, size_t batches)
{
    char *bytes;
    size_t len;
    assert_int_equal(og_rows_render(&bytes, &len, r, OG_FORMAT_ARROW, "main"), OG_OK);
    arrow_walk w;
    assert_int_equal(arrow_walk_stream((const uint8_t *)bytes, len, &w), 0);
    assert_int_equal(w.rows, rows);
    assert_int_equal(w.batches, batches);
    assert_int_equal(w.ncols, (int64_t)r->res.ncols);
    og_free(bytes);
}

static void test_ipc_stream_framing(void **state)
{
    (void)state;
    og_rows *r = all_types();
    walk(r, 3, 1);
    /* a slice from row 1: strings and lists rebased to offset 0 (the untyped null column
     * dropped first: slicing copies rows, and it has none to copy) */
    og_vector_free(&r->res.cols[13]);
    free(r->res.names[13]);
    free(r->type_names[13]);
    r->res.ncols = 13;
    og_rows_slice(r, 1, 2);
    walk(r, 2, 1);
    struct ArrowSchema s;
    struct ArrowArray a;
    assert_int_equal(og_rows_to_arrow(r, &s, &a), OG_OK);
    const int32_t soff[3] = {0, 0, 3};
    expect_bytes(a.children[9]->buffers[1], soff, sizeof soff);
    expect_bytes(a.children[9]->buffers[2], "y\xc3\xa9", 3);
    a.release(&a);
    s.release(&s);
    og_rows_slice(r, 0, 0);
    walk(r, 0, 1); /* the schema and one empty batch */
    og_rows_free(r);

    /* past one record batch: two batches, every row counted */
    r = rows_new(2);
    og_vector *v = col(r, 0, "n", T(OG_T_I64), 0), *s2 = col(r, 1, "s", T(OG_T_STRING), 1);
    size_t n = OG_ARROW_BATCH_ROWS + 5;
    for (size_t i = 0; i < n; i++) {
        og_vector_append_i64(v, (int64_t)i);
        if (i % 7) og_vector_append_bytes(s2, "abc", i % 4);
        else og_vector_append_null(s2);
    }
    r->res.nrows = n;
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    walk(r, (int64_t)n, 2);
    og_rows_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_data_every_type),
        cmocka_unit_test(test_c_data_json_object_and_empty),
        cmocka_unit_test(test_ipc_stream_framing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
