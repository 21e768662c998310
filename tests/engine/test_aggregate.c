/*
 * test_aggregate.c — implicit grouping in first-appearance order, null keys as a group, the
 * five aggregates' null rules and result types, and the zero-row global group.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/aggregate.h"

static void groups_follow_first_appearance_and_nulls_group_together(void **state)
{
    (void)state;
    og_vector k;
    og_vector_init(&k, (og_type){OG_T_STRING, 0, 0});
    const char *vals[] = {"x", "y", NULL, "x", NULL, "z", "y"};
    for (int i = 0; i < 7; i++) vals[i] ? og_vector_append_bytes(&k, vals[i], 1) : og_vector_append_null(&k);
    const og_vector *keys[] = {&k};
    uint32_t g[7], *first;
    size_t ng;
    assert_int_equal(og_group_rows(keys, 1, 7, g, &ng, &first), OG_OK);
    assert_int_equal(ng, 4);
    uint32_t want[] = {0, 1, 2, 0, 2, 3, 1};
    assert_memory_equal(g, want, sizeof want);
    uint32_t wfirst[] = {0, 1, 2, 5};
    assert_memory_equal(first, wfirst, sizeof wfirst);
    free(first);
    og_vector_free(&k);
}

static void aggregates_skip_nulls_and_type_their_results(void **state)
{
    (void)state;
    og_vector x;
    og_vector_init(&x, (og_type){OG_T_I32, 0, 0});
    og_vector_append_i64(&x, 4);
    og_vector_append_null(&x);
    og_vector_append_i64(&x, 8);
    og_vector_append_null(&x); /* group 1 has only nulls */
    uint32_t g[] = {0, 0, 0, 1};
    og_vector out;
    assert_int_equal(og_aggregate(OG_AGG_COUNT, &x, g, 4, 2, &out), OG_OK);
    assert_int_equal(og_vector_get_i64(&out, 0), 2);
    assert_int_equal(og_vector_get_i64(&out, 1), 0);
    og_vector_free(&out);
    assert_int_equal(og_aggregate(OG_AGG_COUNT, NULL, g, 4, 2, &out), OG_OK);
    assert_int_equal(og_vector_get_i64(&out, 0), 3);
    og_vector_free(&out);
    assert_int_equal(og_aggregate(OG_AGG_AVG, &x, g, 4, 2, &out), OG_OK);
    assert_int_equal(out.type.id, OG_T_F64);
    assert_true(og_vector_get_f64(&out, 0) == 6.0);
    assert_true(og_vector_is_null(&out, 1));
    og_vector_free(&out);
    assert_int_equal(og_aggregate(OG_AGG_MAX, &x, g, 4, 2, &out), OG_OK);
    assert_int_equal(out.type.id, OG_T_I32);
    assert_int_equal(og_vector_get_i64(&out, 0), 8);
    assert_true(og_vector_is_null(&out, 1));
    og_vector_free(&out);
    og_vector_free(&x);
}

static void min_max_of_strings_and_type_errors(void **state)
{
    (void)state;
    og_vector s;
    og_vector_init(&s, (og_type){OG_T_STRING, 0, 0});
    og_vector_append_bytes(&s, "pear", 4);
    og_vector_append_bytes(&s, "apple", 5);
    og_vector_append_bytes(&s, "zoo", 3);
    uint32_t g[] = {0, 0, 0};
    og_vector out;
    assert_int_equal(og_aggregate(OG_AGG_MIN, &s, g, 3, 1, &out), OG_OK);
    size_t n;
    const uint8_t *p = og_vector_get_bytes(&out, 0, &n);
    assert_int_equal(n, 5);
    assert_memory_equal(p, "apple", 5);
    og_vector_free(&out);
    assert_int_equal(og_aggregate(OG_AGG_SUM, &s, g, 3, 1, &out), OG_ERR_TYPE);
    og_type t;
    assert_int_equal(og_aggregate_type(OG_AGG_MIN, (og_type){OG_T_BOOL, 0, 0}, &t), OG_OK); /* false < true */
    assert_int_equal(og_aggregate_type(OG_AGG_MIN, (og_type){OG_T_VECTOR, 0, 2}, &t), OG_ERR_TYPE);
    og_vector_free(&s);
}

static void zero_rows_without_keys_give_one_global_group(void **state)
{
    (void)state;
    uint32_t *first;
    size_t ng;
    assert_int_equal(og_group_rows(NULL, 0, 0, NULL, &ng, &first), OG_OK);
    assert_int_equal(ng, 1);
    og_vector x, out;
    og_vector_init(&x, (og_type){OG_T_F64, 0, 0});
    assert_int_equal(og_aggregate(OG_AGG_COUNT, &x, NULL, 0, 1, &out), OG_OK);
    assert_int_equal(og_vector_get_i64(&out, 0), 0);
    og_vector_free(&out);
    assert_int_equal(og_aggregate(OG_AGG_SUM, &x, NULL, 0, 1, &out), OG_OK);
    assert_true(og_vector_is_null(&out, 0));
    og_vector_free(&out);
    og_vector_free(&x);
    free(first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_follow_first_appearance_and_nulls_group_together),
        cmocka_unit_test(aggregates_skip_nulls_and_type_their_results),
        cmocka_unit_test(min_max_of_strings_and_type_errors),
        cmocka_unit_test(zero_rows_without_keys_give_one_global_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
