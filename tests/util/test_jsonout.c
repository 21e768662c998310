/*
 * test_jsonout.c — og_json_dumps writes what json_dumps writes (layout, escapes, key order)
 * except reals, which are the shortest decimal that reads back as the same double, laid out
 * as the reference lays them out; bignums print bare.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/jsonout.h"

static void expect_real(double d, const char *want)
{
    char b[40];
    og_json_format_real(d, b);
    if (strcmp(b, want)) fail_msg("%.17g: got %s, want %s", d, b, want);
    assert_true(strtod(b, NULL) == d);
}

static void reals_are_shortest_round_trip(void **state)
{
    (void)state;
    expect_real(0.1, "0.1");
    expect_real(1.0 / 3, "0.3333333333333333");
    expect_real(9.0, "9.0");
    expect_real(-1.5, "-1.5");
    /* the reference's thresholds (its Arrow JSON writer): positional from 1e-5 up to below
     * 1e10, then d.ddde±x with at least one digit after the point */
    expect_real(1e16, "1.0e16");
    expect_real(1e10, "1.0e10");
    expect_real(-1e10, "-1.0e10");
    expect_real(9999999999.0, "9999999999.0");
    expect_real(1e9, "1000000000.0");
    expect_real(12345678901.5, "1.23456789015e10");
    expect_real(1e20, "1.0e20");
    expect_real(1234567890123456.0, "1.234567890123456e15");
    expect_real(1e-5, "0.00001");
    expect_real(1.5e-5, "0.000015");
    expect_real(1e-6, "1.0e-6");
    expect_real(1e-7, "1.0e-7");
    expect_real(9.9e-6, "9.9e-6");
    expect_real(5e-324, "5.0e-324");
    expect_real(1.7976931348623157e308, "1.7976931348623157e308");
    expect_real(2.5e-7, "2.5e-7");
    expect_real(123.456, "123.456");
    expect_real(-0.0, "-0.0");
    expect_real(9007199254740993.0, "9.007199254740992e15");
}

static void f32_values_take_their_float32_spelling(void **state)
{
    (void)state;
    char b[40];
    og_json_format_real(og_json_f32(0.1f), b);
    assert_string_equal(b, "0.1");
    og_json_format_real(og_json_f32(16777217.0f), b); /* rounds to 16777216 as a float */
    assert_string_equal(b, "16777216.0");
    og_json_format_real(og_json_f32(1e10f), b); /* the F64 thresholds */
    assert_string_equal(b, "1.0e10");
    og_json_format_real(og_json_f32(1.17549435e-38f), b);
    assert_string_equal(b, "1.1754944e-38");
    assert_true((float)og_json_f32(0.7f) == 0.7f);
}

/* og_json_load_wide reads what json_loads reads, and also a U64 above 2^63-1, which it
 * keeps as a bignum that prints back bare; a duplicate key or a bad text is NULL. */
static void wide_load_keeps_big_unsigned_integers(void **state)
{
    (void)state;
    const char *t = "{\"u\":18446744073709551615,\"i\":-9223372036854775808,\"r\":1.0e10,\"s\":\"a\\u00e9b\","
                    "\"l\":[9223372036854775808,null,true,{}]}";
    json_t *j = og_json_load_wide(t, strlen(t));
    assert_non_null(j);
    assert_string_equal(og_json_bignum_digits(json_object_get(j, "u")), "18446744073709551615");
    assert_null(og_json_bignum_digits(json_object_get(j, "i")));
    assert_true(json_integer_value(json_object_get(j, "i")) == INT64_MIN);
    assert_int_equal(json_string_length(json_object_get(j, "s")), 4);
    char *out = og_json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(out, "{\"u\":18446744073709551615,\"i\":-9223372036854775808,\"r\":1.0e10,\"s\":\"a\xc3\xa9" "b\","
                             "\"l\":[9223372036854775808,null,true,{}]}");
    free(out);
    json_decref(j);
    assert_null(og_json_load_wide("{\"a\":1,\"a\":2}", 13));
    assert_null(og_json_load_wide("[1,", 3));
    assert_null(og_json_load_wide("18446744073709551616", 20)); /* past 2^64-1 */
}

/* Without reals the text is byte-for-byte json_dumps's, for each layout. */
static void layout_matches_json_dumps(void **state)
{
    (void)state;
    json_t *j = json_loads("{\"a\":[1,2,{\"x\":null,\"y\":true}],\"b\":{},\"c\":[],\"d\":\"q\\\"\\\\/\\n\\u0001\\u00e9\\ud83d\\ude00\","
                           "\"e\":-5,\"f\":false}",
                           0, NULL);
    assert_non_null(j);
    const size_t flags[] = {0, JSON_COMPACT, JSON_INDENT(2), JSON_INDENT(2) | JSON_SORT_KEYS, JSON_COMPACT | JSON_ENSURE_ASCII,
                            JSON_ESCAPE_SLASH, JSON_INDENT(4) | JSON_COMPACT};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        char *a = json_dumps(j, flags[i]), *b = og_json_dumps(j, flags[i]);
        assert_non_null(b);
        if (strcmp(a, b)) fail_msg("flags %zx:\n%s\n%s", flags[i], a, b);
        free(a);
        free(b);
    }
    json_decref(j);
    json_t *s = json_string("x");
    assert_null(og_json_dumps(s, 0));
    char *t = og_json_dumps(s, JSON_ENCODE_ANY);
    assert_string_equal(t, "\"x\"");
    free(t);
    json_decref(s);
}

static void bignums_and_reals_in_documents(void **state)
{
    (void)state;
    json_t *o = json_object();
    json_object_set_new(o, "u", og_json_bignum(UINT64_MAX));
    json_object_set_new(o, "r", json_real(0.1));
    json_object_set_new(o, "l", json_pack("[f,f]", 2.0, 1e300));
    char *t = og_json_dumps(o, JSON_COMPACT);
    assert_string_equal(t, "{\"u\":18446744073709551615,\"r\":0.1,\"l\":[2.0,1.0e300]}");
    free(t);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reals_are_shortest_round_trip),
        cmocka_unit_test(f32_values_take_their_float32_spelling),
        cmocka_unit_test(wide_load_keeps_big_unsigned_integers),
        cmocka_unit_test(layout_matches_json_dumps),
        cmocka_unit_test(bignums_and_reals_in_documents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
