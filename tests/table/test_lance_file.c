/*
 * test_lance_file.c — the Lance 2.0 data-file writer and reader (table/lance_file.h) on files
 * our own writer produces: round trips of every type with and without nulls, all-null pages,
 * paging (several pages, different boundaries per column, list children paged by items),
 * empty strings / lists, null lists and items, vectors with null rows, projection, batches
 * across page boundaries, zero-copy reads, the exact page encodings LANCE.md prescribes, and
 * the schema codec.  Hand-built and damaged files are in test_lance_file_reject.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "table/lance_file.h"
#include "table/lance_read_impl.h"
#include "table/lance_schema.h"
#include "util/error.h"
#include "util/vector.h"

#define OK(x) assert_int_equal((x), OG_OK)

static og_type T(og_type_id id) { return (og_type){id, OG_T_NULL, 0}; }
static og_type TLIST(og_type_id e) { return (og_type){OG_T_LIST, e, 0}; }
static og_type TVEC(uint32_t d) { return (og_type){OG_T_VECTOR, OG_T_NULL, d}; }

/* null pattern: 0 none, 1 every row, k > 1 rows with i % k == 1 */
static int null_at(size_t i, int mode)
{
    if (mode == 0) return 0;
    if (mode == 1) return 1;
    return (int)(i % (size_t)mode) == 1;
}

/* Appends one deterministic scalar value of type `id` for row i. */
static void append_scalar(og_vector *v, og_type_id id, size_t i)
{
    char s[32];
    switch (id) {
    case OG_T_BOOL: OK(og_vector_append_bool(v, i % 3 == 0)); break;
    case OG_T_I32: OK(og_vector_append_i64(v, -(int64_t)i * 3 + 7)); break;
    case OG_T_I64: OK(og_vector_append_i64(v, (int64_t)i * 7 - 100 - ((int64_t)1 << 40))); break;
    case OG_T_U32: OK(og_vector_append_u64(v, 4000000000u + i)); break;
    case OG_T_U64: OK(og_vector_append_u64(v, ((uint64_t)1 << 63) + i)); break;
    case OG_T_F32: OK(og_vector_append_f64(v, (double)i * 0.5 - 2)); break;
    case OG_T_F64: OK(og_vector_append_f64(v, (double)i * 1.25 - 3)); break;
    case OG_T_DATE32: OK(og_vector_append_i64(v, -1000 + (int64_t)i)); break;
    case OG_T_DATE64: OK(og_vector_append_i64(v, (int64_t)i * 86400000 - 1000000000000LL)); break;
    case OG_T_STRING:
        if (i % 5 == 0) OK(og_vector_append_bytes(v, "", 0));
        else {
            int n = snprintf(s, sizeof s, "str-%zu-%s", i, i % 2 ? "odd" : "e");
            OK(og_vector_append_bytes(v, s, (size_t)n));
        }
        break;
    case OG_T_BLOB: {
        uint8_t b[8] = {0, (uint8_t)i, 0xff, (uint8_t)(i >> 8), 0, 1, 2, 3};
        OK(og_vector_append_bytes(v, b, i % 8));
        break;
    }
    default: fail_msg("bad scalar type");
    }
}

/* A vector of n rows of type t with null pattern `mode` (for lists: also null items at
 * position 1 of every list when mode != 0, and empty lists every 4th row). */
static void make_col(og_vector *v, og_type t, size_t n, int mode)
{
    OK(og_vector_init(v, t));
    for (size_t i = 0; i < n; i++) {
        if (null_at(i, mode)) {
            OK(og_vector_append_null(v));
            continue;
        }
        if (t.id == OG_T_VECTOR) {
            float f[16];
            for (uint32_t k = 0; k < t.dim; k++) f[k] = (float)i * (k % 2 ? -1.0f : 0.5f) + (float)k;
            OK(og_vector_append_floats(v, f, t.dim));
        } else if (t.id == OG_T_LIST) {
            size_t len = i % 4;
            for (size_t k = 0; k < len; k++) {
                if (mode && k == 1) OK(og_vector_append_null(v->child));
                else append_scalar(v->child, t.elem, i * 10 + k);
            }
            OK(og_vector_append_list_end(v));
        } else {
            append_scalar(v, t.id, i);
        }
    }
}

static void assert_col_eq(const og_vector *want, size_t wstart, const og_vector *got, size_t n)
{
    assert_int_equal(got->len, n);
    assert_true(og_type_eq(want->type, got->type));
    size_t nulls = 0;
    for (size_t i = 0; i < n; i++) {
        if (!og_vector_row_eq(want, wstart + i, got, i)) {
            char tn[32];
            fail_msg("row %zu of a %s column differs", wstart + i, og_type_name(want->type, tn, sizeof tn));
        }
        nulls += og_vector_is_null(got, i);
    }
    assert_int_equal(got->null_count, nulls);
}

/* A schema of one column per type in `types` (ids 10*i+1, list children 10*i+2). */
static void make_schema(og_lance_schema *s, const og_type *types, size_t n, int nullable)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "c%zu", i);
        OK(og_lance_schema_add_column(s, name, types[i], (int32_t)(10 * i + 1), (int32_t)(10 * i + 2), nullable, 0));
    }
}

/* Writes cols (in batches of `batch` rows) with page limit `page_rows` into *file. */
static void write_file(og_buf *file, const og_lance_schema *s, const og_vector *cols, size_t ncols, size_t page_rows,
                       size_t batch)
{
    og_lance_writer_opts o = {page_rows, 0};
    og_lance_writer *w;
    OK(og_lance_writer_new(&w, s, &o));
    size_t n = cols[0].len;
    if (batch == 0 || batch >= n) {
        OK(og_lance_writer_write(w, cols, ncols));
    } else {
        /* slices: a borrowed view of rows [a, a+k) of each column, fixed-width only */
        for (size_t a = 0; a < n; a += batch) {
            size_t k = n - a < batch ? n - a : batch;
            og_vector sl[16];
            for (size_t c = 0; c < ncols; c++) {
                size_t w8 = og_type_width(cols[c].type);
                assert_true(w8 > 0 && !cols[c].validity);
                sl[c] = cols[c];
                sl[c].flags = 0;
                sl[c].len = k;
                sl[c].values = (uint8_t *)cols[c].values + a * w8;
            }
            OK(og_lance_writer_write(w, sl, ncols));
        }
    }
    assert_int_equal(og_lance_writer_num_rows(w), n);
    *file = (og_buf)OG_BUF_INIT;
    OK(og_lance_writer_finish(w, file));
    og_lance_writer_free(w);
}

static const og_type all_types[] = {
    {OG_T_I32, 0, 0},    {OG_T_I64, 0, 0},    {OG_T_U32, 0, 0},    {OG_T_U64, 0, 0},
    {OG_T_F32, 0, 0},    {OG_T_F64, 0, 0},    {OG_T_BOOL, 0, 0},   {OG_T_DATE32, 0, 0},
    {OG_T_DATE64, 0, 0}, {OG_T_STRING, 0, 0}, {OG_T_BLOB, 0, 0},   {OG_T_VECTOR, 0, 4},
    {OG_T_LIST, OG_T_I64, 0}, {OG_T_LIST, OG_T_STRING, 0}, {OG_T_LIST, OG_T_BOOL, 0},
};
#define NTYPES (sizeof all_types / sizeof all_types[0])

/* Round trip of every type with null pattern `mode`, `rows` rows, `page_rows` per page. */
static void round_trip_all(int mode, size_t rows, size_t page_rows)
{
    og_lance_schema s;
    make_schema(&s, all_types, NTYPES, 1);
    og_vector cols[NTYPES];
    for (size_t i = 0; i < NTYPES; i++) make_col(&cols[i], all_types[i], rows, mode);
    og_buf file;
    write_file(&file, &s, cols, NTYPES, page_rows, 0);
    assert_memory_equal(file.data + file.len - 4, "LANC", 4);

    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    assert_int_equal(og_lance_reader_num_rows(r), rows);
    assert_int_equal(og_lance_reader_schema(r)->count, s.count);
    for (size_t i = 0; i < NTYPES; i++) {
        og_vector got;
        OK(og_lance_reader_read(r, (int32_t)(10 * i + 1), 0, rows, &got));
        assert_col_eq(&cols[i], 0, &got, rows);
        og_vector_free(&got);
        /* and a range in the middle */
        if (rows > 10) {
            OK(og_lance_reader_read_top(r, i, 3, rows - 7, &got));
            assert_col_eq(&cols[i], 3, &got, rows - 7);
            og_vector_free(&got);
        }
    }
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t i = 0; i < NTYPES; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
}

static void every_type_round_trips_without_nulls(void **state)
{
    (void)state;
    round_trip_all(0, 50, 0);
}

static void every_type_round_trips_with_nulls(void **state)
{
    (void)state;
    round_trip_all(3, 50, 0);
}

static void every_type_round_trips_over_many_pages(void **state)
{
    (void)state;
    round_trip_all(4, 203, 16);
    round_trip_all(0, 203, 7);
}

static void all_null_columns_round_trip_as_all_null_pages(void **state)
{
    (void)state;
    round_trip_all(1, 20, 8);
    /* the pages of a non-list column are all_nulls without buffers; list pages stay list */
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), T(OG_T_STRING), TVEC(2), TLIST(OG_T_I32)};
    make_schema(&s, ts, 4, 1);
    og_vector cols[4];
    for (size_t i = 0; i < 4; i++) make_col(&cols[i], ts[i], 12, 1);
    og_buf file;
    write_file(&file, &s, cols, 4, 5, 0);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    for (size_t c = 0; c < 3; c++) {
        assert_int_equal(og_lance_reader_num_pages(r, c), 3);
        for (size_t p = 0; p < 3; p++) assert_int_equal(r->cols[c].pages[p].form, OG_LPF_ALLNULL);
    }
    assert_int_equal(r->cols[3].pages[0].form, OG_LPF_LIST);
    /* the list child has no items at all: one zero-length all-null page */
    assert_int_equal(og_lance_reader_num_pages(r, 4), 1);
    assert_int_equal(r->cols[4].pages[0].rows, 0);
    assert_int_equal(r->cols[4].pages[0].form, OG_LPF_ALLNULL);
    og_vector got;
    OK(og_lance_reader_read(r, 31, 0, 12, &got));
    assert_int_equal(got.null_count, 12);
    assert_int_equal(got.child->len, 0);
    og_vector_free(&got);
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t i = 0; i < 4; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
}

static void mixed_null_forms_in_one_column(void **state)
{
    (void)state;
    /* pages of 4: rows 0-3 valid, 4-7 null, 8-11 some null */
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I32), T(OG_T_STRING)};
    make_schema(&s, ts, 2, 1);
    og_vector cols[2];
    for (size_t c = 0; c < 2; c++) {
        OK(og_vector_init(&cols[c], ts[c]));
        for (size_t i = 0; i < 12; i++) {
            if ((i >= 4 && i < 8) || i == 9) OK(og_vector_append_null(&cols[c]));
            else append_scalar(&cols[c], ts[c].id, i);
        }
    }
    og_buf file;
    write_file(&file, &s, cols, 2, 4, 0);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    assert_int_equal(og_lance_reader_num_pages(r, 0), 3);
    assert_int_equal(r->cols[0].pages[0].form, OG_LPF_FIXED);
    assert_false(r->cols[0].pages[0].has_validity);
    assert_int_equal(r->cols[0].pages[1].form, OG_LPF_ALLNULL);
    assert_true(r->cols[0].pages[2].has_validity);
    assert_int_equal(r->cols[1].pages[1].form, OG_LPF_ALLNULL);
    assert_int_equal(r->cols[1].pages[2].form, OG_LPF_BINARY);
    assert_false(r->cols[1].pages[2].has_validity); /* strings: offset trick, no bitmap */
    for (size_t c = 0; c < 2; c++) {
        og_vector got;
        OK(og_lance_reader_read_top(r, c, 0, 12, &got));
        assert_col_eq(&cols[c], 0, &got, 12);
        assert_int_equal(got.null_count, 5);
        og_vector_free(&got);
    }
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t c = 0; c < 2; c++) og_vector_free(&cols[c]);
    og_lance_schema_free(&s);
}

static void columns_break_pages_at_different_rows(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), T(OG_T_STRING), TLIST(OG_T_I64), T(OG_T_F32)};
    make_schema(&s, ts, 4, 1);
    og_vector cols[4];
    for (size_t i = 0; i < 4; i++) make_col(&cols[i], ts[i], 13, i == 1 ? 3 : 0);
    og_lance_writer *w;
    OK(og_lance_writer_new(&w, &s, NULL));
    OK(og_lance_writer_set_column_page_rows(w, 0, 5));  /* 5/5/3 */
    OK(og_lance_writer_set_column_page_rows(w, 1, 7));  /* 7/6 */
    OK(og_lance_writer_set_column_page_rows(w, 2, 4));  /* 4/4/4/1 rows */
    OK(og_lance_writer_set_column_page_rows(w, 3, 3));  /* list items: 3 per page */
    assert_int_equal(og_lance_writer_set_column_page_rows(w, 9, 3), OG_ERR_INVALID);
    OK(og_lance_writer_write(w, cols, 4));
    og_buf file = OG_BUF_INIT;
    OK(og_lance_writer_finish(w, &file));
    og_lance_writer_free(w);

    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    uint64_t st, n;
    assert_int_equal(og_lance_reader_num_pages(r, 0), 3);
    OK(og_lance_reader_page_info(r, 0, 2, &st, &n));
    assert_int_equal(st, 10);
    assert_int_equal(n, 3);
    assert_int_equal(og_lance_reader_num_pages(r, 1), 2);
    OK(og_lance_reader_page_info(r, 1, 1, &st, &n));
    assert_int_equal(st, 7);
    assert_int_equal(og_lance_reader_num_pages(r, 2), 4);
    /* list items: rows have i % 4 items -> 0+1+2+3+0+1+2+3+0+1+2+3+0 = 18 items -> 6 pages of 3 */
    assert_int_equal(r->cols[3].total_rows, 18);
    assert_int_equal(og_lance_reader_num_pages(r, 3), 6);
    assert_int_equal(og_lance_reader_num_pages(r, 4), 1);
    assert_int_equal(og_lance_reader_page_info(r, 4, 1, &st, &n), OG_ERR_INVALID);
    /* list offsets restart per page: page 1 (rows 4..7) references 6 items */
    assert_int_equal(r->cols[2].pages[1].num_items, 6);
    assert_int_equal(r->cols[2].pages[1].item_start, 6);
    for (uint64_t a = 0; a < 13; a++)
        for (uint64_t k = 0; a + k <= 13; k += 3)
            for (size_t c = 0; c < 4; c++) {
                og_vector got;
                OK(og_lance_reader_read_top(r, c, a, k, &got));
                assert_col_eq(&cols[c], (size_t)a, &got, (size_t)k);
                og_vector_free(&got);
            }
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t i = 0; i < 4; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
}

static void byte_limit_closes_pages(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), T(OG_T_STRING)};
    make_schema(&s, ts, 2, 0);
    og_vector cols[2];
    for (size_t i = 0; i < 2; i++) make_col(&cols[i], ts[i], 1000, 0);
    og_lance_writer_opts o = {0, 800}; /* 100 int64 per page */
    og_lance_writer *w;
    OK(og_lance_writer_new(&w, &s, &o));
    OK(og_lance_writer_write(w, cols, 2));
    og_buf file = OG_BUF_INIT;
    OK(og_lance_writer_finish(w, &file));
    og_lance_writer_free(w);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    assert_int_equal(og_lance_reader_num_pages(r, 0), 10);
    /* strings: a page closes once its offsets or its bytes reach 800 bytes */
    assert_true(og_lance_reader_num_pages(r, 1) >= 10);
    for (size_t p = 0; p < og_lance_reader_num_pages(r, 1); p++) {
        assert_true(r->cols[1].pages[p].offs.len <= 800);
        assert_true(r->cols[1].pages[p].bytes.len < 800 + 16);
    }
    for (size_t c = 0; c < 2; c++) {
        og_vector got;
        OK(og_lance_reader_read_top(r, c, 0, 1000, &got));
        assert_col_eq(&cols[c], 0, &got, 1000);
        og_vector_free(&got);
    }
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t i = 0; i < 2; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
}

static void empty_strings_lists_and_null_items_round_trip(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_STRING), TLIST(OG_T_STRING), TLIST(OG_T_I32)};
    make_schema(&s, ts, 3, 1);
    og_vector cols[3];
    for (size_t c = 0; c < 3; c++) OK(og_vector_init(&cols[c], ts[c]));
    /* strings: only empty strings and nulls */
    for (size_t i = 0; i < 9; i++) {
        if (i % 4 == 2) OK(og_vector_append_null(&cols[0]));
        else OK(og_vector_append_bytes(&cols[0], "", 0));
    }
    /* lists: [], null, [null], ["", "x"], [], [null, null], null, ["y"], [] */
    for (size_t c = 1; c < 3; c++) {
        og_vector *v = &cols[c], *ch = v->child;
        og_type_id e = ts[c].elem;
        OK(og_vector_append_list_end(v));
        OK(og_vector_append_null(v));
        OK(og_vector_append_null(ch));
        OK(og_vector_append_list_end(v));
        append_scalar(ch, e, 0);
        append_scalar(ch, e, 1);
        OK(og_vector_append_list_end(v));
        OK(og_vector_append_list_end(v));
        OK(og_vector_append_null(ch));
        OK(og_vector_append_null(ch));
        OK(og_vector_append_list_end(v));
        OK(og_vector_append_null(v));
        append_scalar(ch, e, 7);
        OK(og_vector_append_list_end(v));
        OK(og_vector_append_list_end(v));
    }
    og_buf file;
    write_file(&file, &s, cols, 3, 4, 0);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    for (size_t c = 0; c < 3; c++) {
        og_vector got;
        OK(og_lance_reader_read_top(r, c, 0, 9, &got));
        assert_col_eq(&cols[c], 0, &got, 9);
        if (c == 0) assert_int_equal(got.null_count, 2);
        else {
            assert_int_equal(got.null_count, 2);
            assert_int_equal(got.child->len, 6);
            assert_int_equal(got.child->null_count, 3);
            size_t b, e;
            og_vector_get_list(&got, 0, &b, &e);
            assert_int_equal(e - b, 0);
            assert_false(og_vector_is_null(&got, 0));
        }
        og_vector_free(&got);
    }
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t c = 0; c < 3; c++) og_vector_free(&cols[c]);
    og_lance_schema_free(&s);
}

static void vectors_with_null_rows_round_trip(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {TVEC(3), TVEC(128)};
    make_schema(&s, ts, 2, 1);
    og_vector cols[2];
    make_col(&cols[0], ts[0], 40, 3);
    OK(og_vector_init(&cols[1], ts[1]));
    for (size_t i = 0; i < 40; i++) {
        float f[128];
        for (int k = 0; k < 128; k++) f[k] = (float)(i * 128 + (size_t)k);
        if (i % 7 == 3) OK(og_vector_append_null(&cols[1]));
        else OK(og_vector_append_floats(&cols[1], f, 128));
    }
    og_buf file;
    write_file(&file, &s, cols, 2, 16, 0);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    for (size_t c = 0; c < 2; c++) {
        og_vector got;
        OK(og_lance_reader_read_top(r, c, 0, 40, &got));
        assert_col_eq(&cols[c], 0, &got, 40);
        assert_true(got.null_count > 0);
        /* null rows read as zeros */
        for (size_t i = 0; i < 40; i++)
            if (og_vector_is_null(&got, i)) assert_true(og_vector_get_floats(&got, i)[0] == 0.0f);
        og_vector_free(&got);
    }
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t c = 0; c < 2; c++) og_vector_free(&cols[c]);
    og_lance_schema_free(&s);
}

static void scan_projects_and_batches_across_pages(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), T(OG_T_STRING), TLIST(OG_T_I64), T(OG_T_BOOL)};
    make_schema(&s, ts, 4, 1);
    og_vector cols[4];
    for (size_t i = 0; i < 4; i++) make_col(&cols[i], ts[i], 101, 5);
    og_buf file;
    write_file(&file, &s, cols, 4, 10, 0);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    /* projection: bool then list, batches of 7 (crossing every page boundary of 10) */
    int32_t ids[] = {31, 21};
    og_lance_scan *sc;
    OK(og_lance_scan_open(&sc, r, ids, 2, 7));
    assert_int_equal(og_lance_scan_num_cols(sc), 2);
    uint64_t seen = 0, start;
    size_t n, batches = 0;
    const og_vector *bc;
    for (;;) {
        OK(og_lance_scan_next(sc, &bc, &start, &n));
        if (n == 0) break;
        assert_int_equal(start, seen);
        assert_true(og_type_eq(bc[0].type, T(OG_T_BOOL)));
        assert_col_eq(&cols[3], (size_t)start, &bc[0], n);
        assert_col_eq(&cols[2], (size_t)start, &bc[1], n);
        seen += n;
        batches++;
    }
    assert_int_equal(seen, 101);
    assert_int_equal(batches, 15);
    og_lance_scan_free(sc);
    /* every column, default batch */
    OK(og_lance_scan_open(&sc, r, NULL, 0, 0));
    assert_int_equal(og_lance_scan_num_cols(sc), 4);
    OK(og_lance_scan_next(sc, &bc, &start, &n));
    assert_int_equal(n, 101);
    for (size_t c = 0; c < 4; c++) assert_col_eq(&cols[c], 0, &bc[c], 101);
    OK(og_lance_scan_next(sc, &bc, &start, &n));
    assert_int_equal(n, 0);
    og_lance_scan_free(sc);
    /* a child id or an unknown id is not a projection */
    int32_t bad_ids[] = {22};
    assert_int_equal(og_lance_scan_open(&sc, r, bad_ids, 1, 0), OG_ERR_NOT_FOUND);
    bad_ids[0] = 77;
    assert_int_equal(og_lance_scan_open(&sc, r, bad_ids, 1, 0), OG_ERR_NOT_FOUND);
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t i = 0; i < 4; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
}

static void fixed_width_reads_within_a_page_are_zero_copy(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), T(OG_T_F32), TVEC(3), T(OG_T_I32)};
    make_schema(&s, ts, 4, 1);
    og_vector cols[4];
    for (size_t i = 0; i < 4; i++) make_col(&cols[i], ts[i], 100, i == 3 ? 4 : 0);
    og_buf file;
    write_file(&file, &s, cols, 4, 50, 0);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    const uint8_t *lo = file.data, *hi = file.data + file.len;
    for (size_t c = 0; c < 4; c++) {
        og_vector got;
        OK(og_lance_reader_read_top(r, c, 8, 40, &got));
        assert_false(got.flags & OG_VEC_OWNED);
        assert_true((const uint8_t *)got.values >= lo && (const uint8_t *)got.values < hi);
        if (c == 3) assert_true(got.validity >= lo && got.validity < hi);
        assert_col_eq(&cols[c], 8, &got, 40);
        og_vector_free(&got);
        /* across the page boundary at 50: a copy */
        OK(og_lance_reader_read_top(r, c, 45, 10, &got));
        assert_true(got.flags & OG_VEC_OWNED);
        assert_col_eq(&cols[c], 45, &got, 10);
        og_vector_free(&got);
    }
    /* the page buffers are 64-byte aligned */
    for (size_t c = 0; c < 4; c++)
        for (size_t p = 0; p < r->cols[c].npages; p++)
            assert_int_equal((size_t)(r->cols[c].pages[p].values.p - file.data) % 64, 0);
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t i = 0; i < 4; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
}

static void batches_written_separately_read_back_whole(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), T(OG_T_F64)};
    make_schema(&s, ts, 2, 0);
    og_vector cols[2];
    for (size_t i = 0; i < 2; i++) make_col(&cols[i], ts[i], 1000, 0);
    og_buf file;
    write_file(&file, &s, cols, 2, 64, 33); /* 31 batches of 33 into pages of 64 */
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    assert_int_equal(og_lance_reader_num_pages(r, 0), 16);
    for (size_t c = 0; c < 2; c++) {
        og_vector got;
        OK(og_lance_reader_read_top(r, c, 0, 1000, &got));
        assert_col_eq(&cols[c], 0, &got, 1000);
        og_vector_free(&got);
    }
    og_lance_reader_free(r);
    og_buf_free(&file);
    for (size_t i = 0; i < 2; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
}

static void writer_rejects_misuse(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), T(OG_T_STRING)};
    make_schema(&s, ts, 2, 0);
    og_lance_writer *w;
    OK(og_lance_writer_new(&w, &s, NULL));
    og_vector cols[2];
    make_col(&cols[0], ts[0], 5, 0);
    make_col(&cols[1], ts[1], 5, 3); /* nulls in a non-nullable column */
    assert_int_equal(og_lance_writer_write(w, cols, 1), OG_ERR_INVALID);
    assert_int_equal(og_lance_writer_write(w, cols, 2), OG_ERR_INVALID);
    og_lance_writer_free(w);
    /* wrong type */
    OK(og_lance_writer_new(&w, &s, NULL));
    og_vector swapped[2] = {cols[1], cols[0]};
    assert_int_equal(og_lance_writer_write(w, swapped, 2), OG_ERR_INVALID);
    og_lance_writer_free(w);
    /* different lengths */
    OK(og_lance_writer_new(&w, &s, NULL));
    og_vector_free(&cols[1]);
    make_col(&cols[1], ts[1], 4, 0);
    assert_int_equal(og_lance_writer_write(w, cols, 2), OG_ERR_INVALID);
    og_lance_writer_free(w);
    /* non-empty output buffer */
    OK(og_lance_writer_new(&w, &s, NULL));
    og_buf out = OG_BUF_INIT;
    OK(og_buf_append(&out, "x", 1));
    assert_int_equal(og_lance_writer_finish(w, &out), OG_ERR_INVALID);
    og_lance_writer_free(w);
    og_buf_free(&out);
    for (size_t i = 0; i < 2; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
    /* a schema whose type we cannot write */
    og_lance_schema bad = OG_LANCE_SCHEMA_INIT;
    og_lance_field f = {0};
    f.name = "x";
    f.parent_id = -1;
    f.logical_type = "struct";
    OK(og_lance_schema_add_field(&bad, &f));
    assert_int_equal(og_lance_writer_new(&w, &bad, NULL), OG_ERR_INVALID);
    og_lance_schema_free(&bad);
}

static void empty_file_has_no_rows(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_I64), TLIST(OG_T_STRING)};
    make_schema(&s, ts, 2, 1);
    og_lance_writer *w;
    OK(og_lance_writer_new(&w, &s, NULL));
    og_buf file = OG_BUF_INIT;
    OK(og_lance_writer_finish(w, &file));
    og_lance_writer_free(w);
    og_lance_reader *r;
    OK(og_lance_reader_open(&r, file.data, file.len));
    assert_int_equal(og_lance_reader_num_rows(r), 0);
    og_vector got;
    OK(og_lance_reader_read(r, 11, 0, 0, &got));
    assert_int_equal(got.len, 0);
    assert_int_equal(got.child->len, 0);
    og_vector_free(&got);
    assert_int_equal(og_lance_reader_read(r, 1, 0, 1, &got), OG_ERR_INVALID);
    assert_int_equal(og_lance_reader_read(r, 12, 0, 0, &got), OG_ERR_NOT_FOUND); /* child id */
    assert_int_equal(og_lance_reader_read(r, 99, 0, 0, &got), OG_ERR_NOT_FOUND);
    og_lance_reader_free(r);
    og_buf_free(&file);
    og_lance_schema_free(&s);
}

static void schema_fields_round_trip_through_protobuf(void **state)
{
    (void)state;
    og_lance_schema s = OG_LANCE_SCHEMA_INIT;
    OK(og_lance_schema_add_column(&s, "id", T(OG_T_STRING), 0, 0, 1, 1));
    OK(og_lance_schema_add_column(&s, "tags", TLIST(OG_T_STRING), 17, 40, 1, 0));
    OK(og_lance_schema_add_column(&s, "emb", TVEC(128), 41, 0, 1, 0));
    OK(og_lance_schema_add_column(&s, "when", T(OG_T_DATE64), 99, 0, 0, 0));
    assert_int_equal(s.count, 5);
    assert_string_equal(s.fields[0].logical_type, "string");
    assert_int_equal(s.fields[0].nullable, 0); /* a key is never nullable */
    assert_int_equal(s.fields[0].encoding, OG_LANCE_ENC_VAR_BINARY);
    assert_string_equal((const char *)og_lance_field_metadata(&s.fields[0], OG_LANCE_PK_METADATA_KEY, NULL), "true");
    assert_string_equal(s.fields[2].name, "item");
    assert_int_equal(s.fields[2].parent_id, 17);
    assert_string_equal(s.fields[3].logical_type, "fixed_size_list:float:128");
    assert_string_equal(s.fields[4].logical_type, "date64:ms");
    OK(og_lance_schema_validate(&s));
    assert_int_equal(og_lance_schema_find_id(&s, 40), 2);
    assert_int_equal(og_lance_schema_find_name(&s, "emb"), 3);
    assert_int_equal(og_lance_schema_find_name(&s, "item"), -1);
    assert_int_equal(og_lance_schema_child(&s, 1), 2);
    assert_int_equal(og_lance_schema_num_top(&s), 4);
    assert_int_equal(og_lance_schema_top(&s, 2), 3);
    og_type t;
    OK(og_lance_schema_field_type(&s, 1, &t));
    assert_true(og_type_eq(t, TLIST(OG_T_STRING)));
    OK(og_lance_schema_field_type(&s, 3, &t));
    assert_int_equal(t.dim, 128);

    og_buf b = OG_BUF_INIT;
    OK(og_lance_schema_encode_fields(&s, 1, &b));
    og_lance_schema d = OG_LANCE_SCHEMA_INIT;
    OK(og_lance_schema_decode_fields(&d, b.data, b.len, 1));
    assert_int_equal(d.count, s.count);
    for (size_t i = 0; i < s.count; i++) {
        assert_string_equal(d.fields[i].name, s.fields[i].name);
        assert_string_equal(d.fields[i].logical_type, s.fields[i].logical_type);
        assert_int_equal(d.fields[i].id, s.fields[i].id);
        assert_int_equal(d.fields[i].parent_id, s.fields[i].parent_id);
        assert_int_equal(d.fields[i].nullable, s.fields[i].nullable);
        assert_int_equal(d.fields[i].encoding, s.fields[i].encoding);
        assert_int_equal(d.fields[i].unenforced_primary_key, s.fields[i].unenforced_primary_key);
        assert_int_equal(d.fields[i].metadata_count, s.fields[i].metadata_count);
    }
    /* parent_id -1 is a 10-byte varint: the encoded top-level field contains it */
    static const uint8_t minus1[] = {0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    int found = 0;
    for (size_t i = 0; i + sizeof minus1 <= b.len; i++) found |= !memcmp(b.data + i, minus1, sizeof minus1);
    assert_true(found);
    /* select: emb and tags (with its child), in schema order */
    og_lance_schema sel;
    int32_t ids[] = {41, 17};
    OK(og_lance_schema_select(&sel, &s, ids, 2));
    assert_int_equal(sel.count, 3);
    assert_string_equal(sel.fields[0].name, "tags");
    assert_string_equal(sel.fields[1].name, "item");
    og_lance_schema_free(&sel);
    ids[0] = 40;
    assert_int_equal(og_lance_schema_select(&sel, &s, ids, 1), OG_ERR_INVALID);
    ids[0] = 5;
    assert_int_equal(og_lance_schema_select(&sel, &s, ids, 1), OG_ERR_NOT_FOUND);
    /* validate catches a duplicate id and a list without a child */
    og_lance_schema bad;
    OK(og_lance_schema_copy(&bad, &s));
    bad.fields[4].id = 41;
    assert_int_equal(og_lance_schema_validate(&bad), OG_ERR_CORRUPT);
    bad.fields[4].id = 99;
    bad.fields[2].parent_id = 99;
    assert_int_equal(og_lance_schema_validate(&bad), OG_ERR_CORRUPT);
    og_lance_schema_free(&bad);
    /* parse: aliases and rejects */
    OK(og_lance_parse_logical_type("large_string", &t));
    assert_int_equal(t.id, OG_T_STRING);
    assert_int_equal(og_lance_parse_logical_type("fixed_size_list:float:", &t), OG_ERR_UNSUPPORTED);
    assert_int_equal(og_lance_parse_logical_type("timestamp:ns", &t), OG_ERR_UNSUPPORTED);
    og_buf_free(&b);
    og_lance_schema_free(&d);
    og_lance_schema_free(&s);
}

/* OG_LANCE_WRITE_SEEDS=dir writes small valid files for the fuzzer's seed corpus. */
static void seed_files_for_the_fuzzer(void **state)
{
    (void)state;
    const char *dir = getenv("OG_LANCE_WRITE_SEEDS");
    if (!dir) skip();
    static const struct {
        const char *name;
        og_type t[4];
        size_t n, rows, page;
        int mode;
    } seeds[] = {
        {"ints_strings", {{OG_T_I64, 0, 0}, {OG_T_STRING, 0, 0}}, 2, 12, 5, 3},
        {"lists_bools", {{OG_T_LIST, OG_T_I32, 0}, {OG_T_BOOL, 0, 0}}, 2, 10, 4, 3},
        {"vector_dates", {{OG_T_VECTOR, 0, 2}, {OG_T_DATE32, 0, 0}, {OG_T_F64, 0, 0}}, 3, 9, 4, 4},
        {"allnull_blob", {{OG_T_BLOB, 0, 0}, {OG_T_U32, 0, 0}}, 2, 6, 0, 1},
    };
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        og_lance_schema s;
        make_schema(&s, seeds[k].t, seeds[k].n, 1);
        og_vector cols[4];
        for (size_t i = 0; i < seeds[k].n; i++) make_col(&cols[i], seeds[k].t[i], seeds[k].rows, seeds[k].mode);
        og_buf file;
        write_file(&file, &s, cols, seeds[k].n, seeds[k].page, 0);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.lance", dir, seeds[k].name);
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(file.data, 1, file.len, fp), file.len);
        fclose(fp);
        og_buf_free(&file);
        for (size_t i = 0; i < seeds[k].n; i++) og_vector_free(&cols[i]);
        og_lance_schema_free(&s);
    }
}

/* Rows [a, a + k) of string column `src` as a vector of their own. */
static void string_slice(og_vector *dst, const og_vector *src, size_t a, size_t k)
{
    OK(og_vector_init(dst, src->type));
    for (size_t i = a; i < a + k; i++) {
        if (og_vector_is_null(src, i)) {
            OK(og_vector_append_null(dst));
        } else {
            size_t n;
            const uint8_t *p = og_vector_get_bytes(src, i, &n);
            OK(og_vector_append_bytes(dst, p, n));
        }
    }
}

/* Writes string column `col` in calls of `batch` rows (0: one call) into *file. */
static void write_strings(og_buf *file, const og_lance_schema *s, const og_vector *col, og_lance_writer_opts o, size_t batch)
{
    og_lance_writer *w;
    OK(og_lance_writer_new(&w, s, &o));
    if (!batch) {
        OK(og_lance_writer_write(w, col, 1));
    } else {
        for (size_t a = 0; a < col->len; a += batch) {
            og_vector sl;
            string_slice(&sl, col, a, col->len - a < batch ? col->len - a : batch);
            OK(og_lance_writer_write(w, &sl, 1));
            og_vector_free(&sl);
        }
    }
    *file = (og_buf)OG_BUF_INIT;
    OK(og_lance_writer_finish(w, file));
    og_lance_writer_free(w);
}

/* A string column without nulls is appended a run of rows at a time (lance_write.c
 * append_binary_run: the values in one copy, the end offsets in one pass); a column with a
 * null row by row.  Either way the file is byte for byte the one written one row per call,
 * whatever the page limits (rows, bytes) and however the rows are split across calls —
 * empty strings, long ones, nulls included. */
static void string_runs_write_the_file_row_by_row_writes(void **state)
{
    (void)state;
    og_lance_schema s;
    og_type ts[] = {T(OG_T_STRING)};
    make_schema(&s, ts, 1, 1);
    const og_lance_writer_opts opts[] = {{0, 0}, {50, 0}, {0, 256}, {7, 100}, {0, 64}, {1000, 8}};
    for (int nulls = 0; nulls < 2; nulls++) {
        og_vector col;
        OK(og_vector_init(&col, ts[0]));
        char text[200];
        for (size_t i = 0; i < 3000; i++) {
            size_t n = (i * 7) % 23 == 0 ? 0 : (i % 97 == 5 ? 150 : (i * 7) % 23);
            for (size_t j = 0; j < n; j++) text[j] = (char)('a' + (i + j) % 26);
            if (nulls && i % 11 == 3) OK(og_vector_append_null(&col));
            else OK(og_vector_append_bytes(&col, text, n));
        }
        for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
            og_buf one, whole, chunks;
            write_strings(&one, &s, &col, opts[o], 1);
            write_strings(&whole, &s, &col, opts[o], 0);
            write_strings(&chunks, &s, &col, opts[o], 37);
            assert_int_equal(whole.len, one.len);
            assert_memory_equal(whole.data, one.data, one.len);
            assert_int_equal(chunks.len, one.len);
            assert_memory_equal(chunks.data, one.data, one.len);
            og_lance_reader *r;
            OK(og_lance_reader_open(&r, whole.data, whole.len));
            og_vector got;
            OK(og_lance_reader_read_top(r, 0, 0, col.len, &got));
            assert_col_eq(&col, 0, &got, col.len);
            og_vector_free(&got);
            og_lance_reader_free(r);
            og_buf_free(&one);
            og_buf_free(&whole);
            og_buf_free(&chunks);
        }
        og_vector_free(&col);
    }
    og_lance_schema_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_round_trips_without_nulls),
        cmocka_unit_test(every_type_round_trips_with_nulls),
        cmocka_unit_test(every_type_round_trips_over_many_pages),
        cmocka_unit_test(all_null_columns_round_trip_as_all_null_pages),
        cmocka_unit_test(mixed_null_forms_in_one_column),
        cmocka_unit_test(columns_break_pages_at_different_rows),
        cmocka_unit_test(byte_limit_closes_pages),
        cmocka_unit_test(string_runs_write_the_file_row_by_row_writes),
        cmocka_unit_test(empty_strings_lists_and_null_items_round_trip),
        cmocka_unit_test(vectors_with_null_rows_round_trip),
        cmocka_unit_test(scan_projects_and_batches_across_pages),
        cmocka_unit_test(fixed_width_reads_within_a_page_are_zero_copy),
        cmocka_unit_test(batches_written_separately_read_back_whole),
        cmocka_unit_test(writer_rejects_misuse),
        cmocka_unit_test(empty_file_has_no_rows),
        cmocka_unit_test(schema_fields_round_trip_through_protobuf),
        cmocka_unit_test(seed_files_for_the_fuzzer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
