/*
 * test_filter.c — filter kernels: null never matches (even for !=), exact mixed-numeric
 * comparison (no truncating coercion), string substring / prefix, list membership, broadcast
 * of a one-row literal, and refusal of incomparable types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/filter.h"

static og_vector lit_i64(int64_t x)
{
    og_vector v;
    og_vector_init(&v, (og_type){OG_T_I64, 0, 0});
    og_vector_append_i64(&v, x);
    return v;
}

static og_vector lit_f64(double x)
{
    og_vector v;
    og_vector_init(&v, (og_type){OG_T_F64, 0, 0});
    og_vector_append_f64(&v, x);
    return v;
}

static og_vector lit_str(const char *s)
{
    og_vector v;
    og_vector_init(&v, (og_type){OG_T_STRING, 0, 0});
    og_vector_append_bytes(&v, s, strlen(s));
    return v;
}

static unsigned run(const og_vector *a, og_cmp_op op, const og_vector *b, size_t n)
{
    uint8_t sel[8];
    memset(sel, 0xff, sizeof sel);
    assert_int_equal(og_filter_compare(a, op, b, sel, n), OG_OK);
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) bits |= (unsigned)og_bit_get(sel, i) << i;
    return bits;
}

static void nulls_never_match_even_for_not_equal(void **state)
{
    (void)state;
    og_vector col;
    og_vector_init(&col, (og_type){OG_T_I32, 0, 0});
    og_vector_append_i64(&col, 1);
    og_vector_append_null(&col);
    og_vector_append_i64(&col, 3);
    og_vector one = lit_i64(1);
    assert_int_equal(run(&col, OG_CMP_EQ, &one, 3), 0x1);
    assert_int_equal(run(&col, OG_CMP_NE, &one, 3), 0x4);
    og_vector nul;
    og_vector_init(&nul, (og_type){OG_T_I64, 0, 0});
    og_vector_append_null(&nul);
    assert_int_equal(run(&col, OG_CMP_NE, &nul, 3), 0); /* comparing with a null param matches nothing */
    og_vector_free(&col);
    og_vector_free(&one);
    og_vector_free(&nul);
}

static void mixed_numbers_compare_exactly(void **state)
{
    (void)state;
    og_vector col;
    og_vector_init(&col, (og_type){OG_T_I32, 0, 0});
    og_vector_append_i64(&col, 2);
    og_vector_append_i64(&col, 3);
    og_vector f = lit_f64(2.7);
    assert_int_equal(run(&col, OG_CMP_EQ, &f, 2), 0);   /* 2.7 does not truncate to 2 */
    assert_int_equal(run(&col, OG_CMP_GT, &f, 2), 0x2);
    og_vector u;
    og_vector_init(&u, (og_type){OG_T_U64, 0, 0});
    og_vector_append_u64(&u, UINT64_MAX);
    og_vector m1 = lit_i64(-1);
    assert_int_equal(run(&u, OG_CMP_GT, &m1, 1), 0x1);  /* no signed/unsigned wrap */
    og_vector big;
    og_vector_init(&big, (og_type){OG_T_I64, 0, 0});
    og_vector_append_i64(&big, (int64_t)9007199254740993LL); /* 2^53 + 1 */
    og_vector fb = lit_f64(9007199254740992.0);
    assert_int_equal(run(&big, OG_CMP_EQ, &fb, 1), 0);  /* exact, not via double */
    og_vector_free(&col);
    og_vector_free(&f);
    og_vector_free(&u);
    og_vector_free(&m1);
    og_vector_free(&big);
    og_vector_free(&fb);
}

static void strings_contain_and_start_with_case_sensitively(void **state)
{
    (void)state;
    og_vector col;
    og_vector_init(&col, (og_type){OG_T_STRING, 0, 0});
    og_vector_append_bytes(&col, "Alice", 5);
    og_vector_append_bytes(&col, "alicia", 6);
    og_vector_append_bytes(&col, "100%_x", 6);
    og_vector li = lit_str("li"), al = lit_str("Al"), pct = lit_str("%_");
    assert_int_equal(run(&col, OG_CMP_CONTAINS, &li, 3), 0x3);
    assert_int_equal(run(&col, OG_CMP_STARTS_WITH, &al, 3), 0x1);
    assert_int_equal(run(&col, OG_CMP_CONTAINS, &pct, 3), 0x4); /* _ and % are literal */
    og_vector b = lit_str("alicia");
    assert_int_equal(run(&col, OG_CMP_LT, &b, 3), 0x5);         /* "Alice" and "100%_x" sort before */
    og_vector_free(&col);
    og_vector_free(&li);
    og_vector_free(&al);
    og_vector_free(&pct);
    og_vector_free(&b);
}

static void list_contains_is_membership(void **state)
{
    (void)state;
    og_vector tags;
    og_vector_init(&tags, (og_type){OG_T_LIST, OG_T_STRING, 0});
    og_vector_append_bytes(tags.child, "sci", 3);
    og_vector_append_bytes(tags.child, "fi", 2);
    og_vector_append_list_end(&tags);
    og_vector_append_bytes(tags.child, "science", 7);
    og_vector_append_list_end(&tags);
    og_vector_append_null(&tags);
    og_vector_append_list_end(&tags); /* empty */
    og_vector sci = lit_str("sci");
    assert_int_equal(run(&tags, OG_CMP_CONTAINS, &sci, 4), 0x1);
    og_vector_free(&tags);
    og_vector_free(&sci);
}

static void incomparable_types_are_an_internal_error(void **state)
{
    (void)state;
    og_vector s = lit_str("2020-01-01");
    og_vector d;
    og_vector_init(&d, (og_type){OG_T_DATE32, 0, 0});
    og_vector_append_i64(&d, 18262);
    uint8_t sel = 1;
    assert_int_equal(og_filter_compare(&d, OG_CMP_EQ, &s, &sel, 1), OG_ERR_INTERNAL);
    og_vector_free(&s);
    og_vector_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nulls_never_match_even_for_not_equal),
        cmocka_unit_test(mixed_numbers_compare_exactly),
        cmocka_unit_test(strings_contain_and_start_with_case_sensitively),
        cmocka_unit_test(list_contains_is_membership),
        cmocka_unit_test(incomparable_types_are_an_internal_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
