/*
 * test_jsonval.c — strict JSON → typed values for params and load data: decimal-string ints,
 * range checks, non-finite and wrong-length vectors, dates in both modes, base64 blobs, null
 * only where nullable, null list items refused, and errors leaving the output untouched —
 * each through both sources (a jansson value and a jsontok token), which must agree.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/jsonval.h"
#include "util/error.h"
#include "util/jsonout.h"

/* Converts `text` through both sources — a jansson value (params) and a jsontok token
 * (load) — and requires the same status, message and values from each: every case below
 * pins both paths. */
static og_status conv(og_type t, const char *text, int nullable, og_jsonval_mode mode, og_vector *out)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
    assert_non_null(j);
    og_vector_init(out, t);
    og_status st = og_jsonval_append(out, j, nullable, mode, "p");
    json_decref(j);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", st ? og_error_message() : "");

    og_jdoc doc = OG_JDOC_INIT;
    char *buf = strdup(text);
    size_t root;
    assert_int_equal(og_json_parse(&doc, buf, strlen(buf), &root, NULL, 0), OG_OK);
    og_vector tv;
    og_vector_init(&tv, t);
    og_status tst = og_jsonval_append_tok(&tv, &doc.tok[root], nullable, mode, "p");
    if (tst != st) fail_msg("%s: jansson path %s, token path %s", text, og_status_name(st), og_status_name(tst));
    if (st) assert_string_equal(og_error_message(), msg);
    assert_int_equal(tv.len, out->len);
    for (size_t i = 0; i < tv.len; i++) assert_true(og_vector_row_eq(&tv, i, out, i));
    og_vector_free(&tv);
    og_jdoc_free(&doc);
    free(buf);
    if (st) og_err(st, "%s", msg); /* the caller checks the first path's message */
    return st;
}

#define T(id) ((og_type){(id), OG_T_NULL, 0})

static void integers_accept_numbers_and_decimal_strings_in_range(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(conv(T(OG_T_I64), "\"-9007199254740993\"", 0, OG_JSONVAL_PARAM, &v), OG_OK);
    assert_true(og_vector_get_i64(&v, 0) == -9007199254740993LL);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_U64), "\"18446744073709551615\"", 0, OG_JSONVAL_PARAM, &v), OG_OK);
    assert_true(og_vector_get_u64(&v, 0) == UINT64_MAX);
    og_vector_free(&v);
    const struct { og_type_id t; const char *j; } bad[] = {
        {OG_T_I32, "2147483648"}, {OG_T_U32, "-1"}, {OG_T_U64, "\"-1\""}, {OG_T_I64, "\"12x\""},
        {OG_T_I64, "1.5"}, {OG_T_I64, "\"\""}, {OG_T_I64, "true"}, {OG_T_I64, "\"99999999999999999999\""},
        /* a quoted number within +-(2^53-1) is a string, not a number (docs/reference.md) */
        {OG_T_I32, "\"30\""}, {OG_T_I64, "\"9007199254740991\""}, {OG_T_U32, "\"7\""}, {OG_T_F64, "\"3.7\""},
        {OG_T_STRING, "30"}, {OG_T_STRING, "true"}, {OG_T_BOOL, "\"true\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(conv(T(bad[i].t), bad[i].j, 0, OG_JSONVAL_PARAM, &v), OG_ERR_INVALID);
        assert_int_equal(v.len, 0);
        og_vector_free(&v);
    }
}

static void wrong_json_types_are_refused_with_a_hint(void **state)
{
    (void)state;
    og_vector v;
    const struct { og_type_id t; const char *j; const char *msg; } cases[] = {
        {OG_T_I32, "\"30\"", "p: expected I32, got a string (\"30\"); write the number without quotes"},
        {OG_T_I32, "\"abc\"", "p: expected I32, got a string (\"abc\"); write an integer as a JSON number"},
        {OG_T_F64, "\"3.7\"", "p: expected F64, got a string; write the number without quotes"},
        {OG_T_STRING, "42", "p: expected String, got an integer; write the value in quotes"},
        {OG_T_DATE32, "19000", "p: expected Date, got an integer; write the date as a string, \"YYYY-MM-DD\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int mode = 0; mode < 2; mode++) {
            assert_int_equal(conv(T(cases[i].t), cases[i].j, 0, (og_jsonval_mode)mode, &v), OG_ERR_INVALID);
            assert_string_equal(og_error_message(), cases[i].msg);
            assert_int_equal(v.len, 0);
            og_vector_free(&v);
        }
    }
}

static void nulls_only_where_nullable(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(conv(T(OG_T_STRING), "null", 0, OG_JSONVAL_PARAM, &v), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "null is not allowed"));
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_STRING), "null", 1, OG_JSONVAL_PARAM, &v), OG_OK);
    assert_true(og_vector_is_null(&v, 0));
    og_vector_free(&v);
}

static void dates_are_strings_in_params_and_load_alike(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(conv(T(OG_T_DATE32), "\"1970-01-11\"", 0, OG_JSONVAL_PARAM, &v), OG_OK);
    assert_int_equal(og_vector_get_i64(&v, 0), 10);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_DATE32), "10", 0, OG_JSONVAL_PARAM, &v), OG_ERR_INVALID);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_DATE32), "10", 0, OG_JSONVAL_LOAD, &v), OG_ERR_INVALID);
    assert_string_equal(og_error_message(), "p: expected Date, got an integer; write the date as a string, \"YYYY-MM-DD\"");
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_DATE64), "1796223845123", 0, OG_JSONVAL_LOAD, &v), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "RFC 3339 string"));
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_DATE64), "\"2026-12-02T15:04:05.123Z\"", 0, OG_JSONVAL_PARAM, &v), OG_OK);
    assert_true(og_vector_get_i64(&v, 0) == 1796223845123LL);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_DATE64), "\"yesterday\"", 0, OG_JSONVAL_LOAD, &v), OG_ERR_INVALID);
    og_vector_free(&v);
}

static void vectors_need_exactly_n_finite_numbers(void **state)
{
    (void)state;
    og_vector v;
    og_type vt = {OG_T_VECTOR, OG_T_NULL, 3};
    assert_int_equal(conv(vt, "[1, 0.5, -2]", 0, OG_JSONVAL_LOAD, &v), OG_OK);
    assert_true(og_vector_get_floats(&v, 0)[1] == 0.5f);
    og_vector_free(&v);
    assert_int_equal(conv(vt, "[1, 2]", 0, OG_JSONVAL_LOAD, &v), OG_ERR_INVALID);
    og_vector_free(&v);
    assert_int_equal(conv(vt, "[1, \"2\", 3]", 0, OG_JSONVAL_LOAD, &v), OG_ERR_INVALID);
    og_vector_free(&v);
    assert_int_equal(conv(vt, "[1, 2, 1e39]", 0, OG_JSONVAL_LOAD, &v), OG_ERR_INVALID);
    og_vector_free(&v);
}

static void lists_refuse_null_items_and_leave_output_untouched(void **state)
{
    (void)state;
    og_vector v;
    og_type lt = {OG_T_LIST, OG_T_STRING, 0};
    assert_int_equal(conv(lt, "[\"a\", \"b\"]", 0, OG_JSONVAL_LOAD, &v), OG_OK);
    size_t b, e;
    og_vector_get_list(&v, 0, &b, &e);
    assert_int_equal(e - b, 2);
    json_t *bad = json_loads("[\"c\", null]", 0, NULL);
    assert_int_equal(og_jsonval_append(&v, bad, 0, OG_JSONVAL_LOAD, "tags"), OG_ERR_INVALID);
    assert_int_equal(v.len, 1);
    assert_int_equal(v.child->len, 2);
    json_decref(bad);
    og_vector_free(&v);
}

static void blobs_decode_base64_and_refuse_external_uris(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(conv(T(OG_T_BLOB), "\"base64:aGVsbG8=\"", 0, OG_JSONVAL_LOAD, &v), OG_OK);
    size_t n;
    const uint8_t *p = og_vector_get_bytes(&v, 0, &n);
    assert_int_equal(n, 5);
    assert_memory_equal(p, "hello", 5);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_BLOB), "\"base64:\"", 0, OG_JSONVAL_LOAD, &v), OG_OK);
    og_vector_get_bytes(&v, 0, &n);
    assert_int_equal(n, 0);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_BLOB), "\"s3://bucket/x\"", 0, OG_JSONVAL_LOAD, &v), OG_ERR_UNSUPPORTED);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_BLOB), "\"base64:a$==\"", 0, OG_JSONVAL_LOAD, &v), OG_ERR_INVALID);
    og_vector_free(&v);
}

/* Load-mode only (jansson cannot read these): a U64 above 2^63-1 as a JSON number. */
static og_status conv_tok(og_type t, const char *text, og_vector *out)
{
    og_jdoc doc = OG_JDOC_INIT;
    char *buf = strdup(text);
    size_t root;
    assert_int_equal(og_json_parse(&doc, buf, strlen(buf), &root, NULL, 0), OG_OK);
    og_vector_init(out, t);
    og_status st = og_jsonval_append_tok(out, &doc.tok[root], 0, OG_JSONVAL_LOAD, "p");
    og_jdoc_free(&doc);
    free(buf);
    return st;
}

static void u64_numbers_above_i64_load(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(conv_tok(T(OG_T_U64), "18446744073709551615", &v), OG_OK);
    assert_true(og_vector_get_u64(&v, 0) == UINT64_MAX);
    og_vector_free(&v);
    assert_int_equal(conv_tok(T(OG_T_U64), "9223372036854775808", &v), OG_OK);
    assert_true(og_vector_get_u64(&v, 0) == UINT64_C(9223372036854775808));
    og_vector_free(&v);
    assert_int_equal(conv_tok(T(OG_T_I64), "9223372036854775808", &v), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "out of range for I64"));
    assert_int_equal(v.len, 0);
    og_vector_free(&v);
    assert_int_equal(conv_tok(T(OG_T_F64), "18446744073709551615", &v), OG_OK);
    og_vector_free(&v);
}

/* The one value encoder, printed by og_json_dumps: exact text. */
static char *cell_text(const og_vector *v, size_t i, unsigned flags)
{
    json_t *a = json_array();
    json_array_append_new(a, og_jsonval_cell(v, i, flags));
    char *s = og_json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

static void expect_cell(const og_vector *v, size_t i, unsigned flags, const char *want)
{
    char *s = cell_text(v, i, flags);
    assert_non_null(s);
    if (strcmp(s, want)) fail_msg("cell %zu: got %s, want %s", i, s, want);
    free(s);
}

static void cells_spell_values_like_the_reference(void **state)
{
    (void)state;
    og_vector f32, f64, u64, i64, dt;
    og_vector_init(&f32, T(OG_T_F32));
    og_vector_append_f64(&f32, 0.1);
    og_vector_append_f64(&f32, 3.4028234663852886e38);
    og_vector_append_f64(&f32, 100);
    og_vector_append_f64(&f32, 1e-7);
    expect_cell(&f32, 0, 0, "[0.1]");
    expect_cell(&f32, 1, 0, "[3.4028235e38]");
    expect_cell(&f32, 2, 0, "[100.0]");
    expect_cell(&f32, 3, 0, "[1.0e-7]");
    og_vector_init(&f64, T(OG_T_F64));
    og_vector_append_f64(&f64, 0.1);
    og_vector_append_f64(&f64, 0.1 + 0.2);
    og_vector_append_f64(&f64, 1e21);
    og_vector_append_f64(&f64, -0.0);
    og_vector_append_f64(&f64, 123456.789);
    og_vector_append_f64(&f64, 0.00001);
    og_vector_append_f64(&f64, 1e10);
    og_vector_append_f64(&f64, 9999999999.5);
    og_vector_append_f64(&f64, NAN);
    og_vector_append_f64(&f64, -INFINITY);
    expect_cell(&f64, 0, 0, "[0.1]");
    expect_cell(&f64, 1, 0, "[0.30000000000000004]");
    expect_cell(&f64, 2, 0, "[1.0e21]");
    expect_cell(&f64, 3, 0, "[-0.0]");
    expect_cell(&f64, 4, 0, "[123456.789]");
    expect_cell(&f64, 5, 0, "[0.00001]");
    expect_cell(&f64, 6, 0, "[1.0e10]"); /* the reference's threshold: exponent form from 1e10 */
    expect_cell(&f64, 7, 0, "[9999999999.5]");
    expect_cell(&f64, 8, 0, "[null]"); /* non-finite: null, as the reference's writer */
    expect_cell(&f64, 9, 0, "[null]");
    og_vector_init(&u64, T(OG_T_U64));
    og_vector_append_u64(&u64, UINT64_MAX);
    og_vector_append_u64(&u64, UINT64_C(9007199254740992));
    /* integers bare at any width (the reference); without OG_CELL_BIG_U64 a U64 above
     * 2^63-1 is a decimal string, for readers with signed 64-bit integers */
    expect_cell(&u64, 0, OG_CELL_BIG_U64, "[18446744073709551615]");
    expect_cell(&u64, 0, 0, "[\"18446744073709551615\"]");
    expect_cell(&u64, 1, OG_CELL_BIG_U64, "[9007199254740992]");
    expect_cell(&u64, 1, 0, "[9007199254740992]");
    og_vector_init(&i64, T(OG_T_I64));
    og_vector_append_i64(&i64, -9007199254740991LL);
    og_vector_append_i64(&i64, -9007199254740992LL);
    expect_cell(&i64, 0, OG_CELL_BIG_U64, "[-9007199254740991]");
    expect_cell(&i64, 1, OG_CELL_BIG_U64, "[-9007199254740992]");
    expect_cell(&i64, 1, 0, "[-9007199254740992]");
    og_vector_init(&dt, T(OG_T_DATE64));
    og_vector_append_i64(&dt, 1700000000001LL);
    og_vector_append_i64(&dt, -1);
    og_vector_append_i64(&dt, 1704067200000LL);
    /* no zone letter, no fraction when the milliseconds are zero (the reference) */
    expect_cell(&dt, 0, 0, "[\"2023-11-14T22:13:20.001\"]");
    expect_cell(&dt, 1, 0, "[\"1969-12-31T23:59:59.999\"]");
    expect_cell(&dt, 2, 0, "[\"2024-01-01T00:00:00\"]");
    og_vector_free(&f32);
    og_vector_free(&f64);
    og_vector_free(&u64);
    og_vector_free(&i64);
    og_vector_free(&dt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers_accept_numbers_and_decimal_strings_in_range),
        cmocka_unit_test(wrong_json_types_are_refused_with_a_hint),
        cmocka_unit_test(nulls_only_where_nullable),
        cmocka_unit_test(dates_are_strings_in_params_and_load_alike),
        cmocka_unit_test(vectors_need_exactly_n_finite_numbers),
        cmocka_unit_test(lists_refuse_null_items_and_leave_output_untouched),
        cmocka_unit_test(blobs_decode_base64_and_refuse_external_uris),
        cmocka_unit_test(u64_numbers_above_i64_load),
        cmocka_unit_test(cells_spell_values_like_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
