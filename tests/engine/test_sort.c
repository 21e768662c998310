/*
 * test_sort.c — ORDER BY contract: multi-key, descending, nulls first ascending / last
 * descending, stability (so id tie-breaks give a total order), and agreement with a brute-force
 * check on random data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sort.h"

static void nulls_first_ascending_and_last_descending(void **state)
{
    (void)state;
    og_vector v;
    og_vector_init(&v, (og_type){OG_T_I64, 0, 0});
    og_vector_append_i64(&v, 30);
    og_vector_append_null(&v);
    og_vector_append_i64(&v, 10);
    og_vector_append_i64(&v, 20);
    uint32_t perm[4];
    og_sort_key k = {&v, 0};
    assert_int_equal(og_sort_rows(&k, 1, 4, 0, perm), OG_OK);
    uint32_t asc[] = {1, 2, 3, 0};
    assert_memory_equal(perm, asc, sizeof asc);
    k.descending = 1;
    assert_int_equal(og_sort_rows(&k, 1, 4, 0, perm), OG_OK);
    uint32_t desc[] = {0, 3, 2, 1};
    assert_memory_equal(perm, desc, sizeof desc);
    og_vector_free(&v);
}

static void ties_break_by_the_next_key_then_input_order(void **state)
{
    (void)state;
    og_vector age, id;
    og_vector_init(&age, (og_type){OG_T_I32, 0, 0});
    og_vector_init(&id, (og_type){OG_T_STRING, 0, 0});
    const int ages[] = {40, 30, 40, 30, 40};
    const char *ids[] = {"c", "b", "a", "a", "c"};
    for (int i = 0; i < 5; i++) {
        og_vector_append_i64(&age, ages[i]);
        og_vector_append_bytes(&id, ids[i], 1);
    }
    og_sort_key keys[] = {{&age, 1}, {&id, 0}};
    uint32_t perm[5];
    assert_int_equal(og_sort_rows(keys, 2, 5, 0, perm), OG_OK);
    uint32_t want[] = {2, 0, 4, 3, 1}; /* 40a, 40c(row0), 40c(row4: stable), 30a, 30b */
    assert_memory_equal(perm, want, sizeof want);
    og_vector_free(&age);
    og_vector_free(&id);
}

static void random_keys_are_sorted_and_stable(void **state)
{
    (void)state;
    srand(7);
    enum { N = 5000 };
    og_vector a, b;
    og_vector_init(&a, (og_type){OG_T_F64, 0, 0});
    og_vector_init(&b, (og_type){OG_T_STRING, 0, 0});
    for (int i = 0; i < N; i++) {
        if (rand() % 10 == 0)
            og_vector_append_null(&a);
        else
            og_vector_append_f64(&a, (double)(rand() % 50));
        char s[2] = {(char)('a' + rand() % 5), 0};
        og_vector_append_bytes(&b, s, 1);
    }
    og_sort_key keys[] = {{&a, 0}, {&b, 1}};
    uint32_t *perm = malloc(N * sizeof *perm);
    assert_int_equal(og_sort_rows(keys, 2, N, 0, perm), OG_OK);
    char *seen = calloc(N, 1);
    for (int i = 0; i < N; i++) {
        assert_false(seen[perm[i]]);
        seen[perm[i]] = 1;
    }
    for (int i = 1; i < N; i++) {
        uint32_t x = perm[i - 1], y = perm[i];
        int nx = og_vector_is_null(&a, x), ny = og_vector_is_null(&a, y);
        assert_false(!nx && ny); /* nulls first */
        if (nx != ny) continue;
        int c = nx ? 0 : og_vector_row_cmp(&a, x, &a, y);
        assert_true(c <= 0);
        if (c) continue;
        int d = og_vector_row_cmp(&b, x, &b, y);
        assert_true(d >= 0); /* second key descending */
        if (d == 0) assert_true(x < y); /* stable */
    }
    free(seen);
    free(perm);
    og_vector_free(&a);
    og_vector_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nulls_first_ascending_and_last_descending),
        cmocka_unit_test(ties_break_by_the_next_key_then_input_order),
        cmocka_unit_test(random_keys_are_sorted_and_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
