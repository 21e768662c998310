/*
 * test_jsonval.c — strict JSON → typed values for params and load data: decimal-string ints,
 * range checks, non-finite and wrong-length vectors, dates in both modes, base64 blobs, null
 * only where nullable, null list items refused, and errors leaving the output untouched —
 * each through both sources (a jansson value and a jsontok token), which must agree.
 */
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
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(conv(T(bad[i].t), bad[i].j, 0, OG_JSONVAL_PARAM, &v), OG_ERR_INVALID);
        assert_int_equal(v.len, 0);
        og_vector_free(&v);
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

static void dates_are_strings_for_params_and_also_integers_for_load(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(conv(T(OG_T_DATE32), "\"1970-01-11\"", 0, OG_JSONVAL_PARAM, &v), OG_OK);
    assert_int_equal(og_vector_get_i64(&v, 0), 10);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_DATE32), "10", 0, OG_JSONVAL_PARAM, &v), OG_ERR_INVALID);
    og_vector_free(&v);
    assert_int_equal(conv(T(OG_T_DATE32), "10", 0, OG_JSONVAL_LOAD, &v), OG_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers_accept_numbers_and_decimal_strings_in_range),
        cmocka_unit_test(nulls_only_where_nullable),
        cmocka_unit_test(dates_are_strings_for_params_and_also_integers_for_load),
        cmocka_unit_test(vectors_need_exactly_n_finite_numbers),
        cmocka_unit_test(lists_refuse_null_items_and_leave_output_untouched),
        cmocka_unit_test(blobs_decode_base64_and_refuse_external_uris),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
