/*
 * test_buf_vector.c — og_buf growth and little-endian helpers; og_vector builders for every
 * type, lazy validity, row equality.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/vector.h"

static void buf_appends_little_endian_and_pads(void **state)
{
    (void)state;
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_buf_append_u32le(&b, 0x11223344u), OG_OK);
    assert_int_equal(og_buf_append_u64le(&b, 0x0102030405060708ull), OG_OK);
    assert_int_equal(b.len, 12);
    assert_int_equal(b.data[0], 0x44);
    assert_int_equal(og_load_u64le(b.data + 4), 0x0102030405060708ull);
    assert_int_equal(og_buf_pad_to(&b, 64), OG_OK);
    assert_int_equal(b.len, 64);
    assert_int_equal(og_buf_printf(&b, "%d-%s", 7, "x"), OG_OK);
    assert_int_equal(b.len, 67);
    assert_string_equal(og_buf_cstr(&b) + 64, "7-x");
    og_buf_free(&b);
}

/* A failed growth is remembered until reset, so a writer that does not check every append
 * can still tell that some append is missing. */
static void buf_remembers_a_failed_growth(void **state)
{
    (void)state;
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_buf_append_str(&b, "ab"), OG_OK);
    assert_false(b.failed);
    assert_int_equal(og_buf_reserve(&b, SIZE_MAX - 1), OG_ERR_NOMEM);
    assert_true(b.failed);
    assert_int_equal(og_buf_append_str(&b, "c"), OG_OK); /* a later small append succeeds... */
    assert_true(b.failed);                                /* ...and the loss stays visible */
    assert_int_equal(b.len, 3);
    og_buf_reset(&b);
    assert_false(b.failed);
    og_buf_free(&b);
}

static void vector_validity_appears_only_with_a_null(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(og_vector_init(&v, (og_type){OG_T_I64, 0, 0}), OG_OK);
    for (int i = 0; i < 100; i++) assert_int_equal(og_vector_append_i64(&v, i * 3), OG_OK);
    assert_null(v.validity);
    assert_int_equal(og_vector_append_null(&v), OG_OK);
    assert_non_null(v.validity);
    assert_false(og_vector_is_null(&v, 99));
    assert_true(og_vector_is_null(&v, 100));
    assert_int_equal(og_vector_get_i64(&v, 99), 297);
    assert_int_equal(v.null_count, 1);
    og_vector_free(&v);
}

static void vector_i32_rejects_out_of_range(void **state)
{
    (void)state;
    og_vector v;
    og_vector_init(&v, (og_type){OG_T_I32, 0, 0});
    assert_int_equal(og_vector_append_i64(&v, (int64_t)1 << 40), OG_ERR_INVALID);
    assert_int_equal(v.len, 0);
    og_vector_free(&v);
}

static void vector_strings_lists_and_equality(void **state)
{
    (void)state;
    og_vector s, l;
    og_vector_init(&s, (og_type){OG_T_STRING, 0, 0});
    og_vector_append_bytes(&s, "alpha", 5);
    og_vector_append_null(&s);
    og_vector_append_bytes(&s, "", 0);
    og_vector_append_bytes(&s, "alpha", 5);
    size_t n;
    const uint8_t *p = og_vector_get_bytes(&s, 0, &n);
    assert_int_equal(n, 5);
    assert_memory_equal(p, "alpha", 5);
    assert_true(og_vector_is_null(&s, 1));
    og_vector_get_bytes(&s, 2, &n);
    assert_int_equal(n, 0);
    assert_true(og_vector_row_eq(&s, 0, &s, 3));
    assert_false(og_vector_row_eq(&s, 0, &s, 1));

    og_vector_init(&l, (og_type){OG_T_LIST, OG_T_I64, 0});
    og_vector_append_i64(l.child, 1);
    og_vector_append_i64(l.child, 2);
    og_vector_append_list_end(&l);
    og_vector_append_list_end(&l); /* empty list */
    og_vector_append_null(&l);
    size_t b, e;
    og_vector_get_list(&l, 0, &b, &e);
    assert_int_equal(e - b, 2);
    og_vector_get_list(&l, 1, &b, &e);
    assert_int_equal(e - b, 0);
    assert_true(og_vector_is_null(&l, 2));
    assert_false(og_vector_row_eq(&l, 0, &l, 1));
    og_vector_free(&s);
    og_vector_free(&l);
}

static void errors_carry_a_message_and_a_name(void **state)
{
    (void)state;
    assert_int_equal(og_err(OG_ERR_NOT_FOUND, "commit %s", "X"), OG_ERR_NOT_FOUND);
    og_err_wrap(OG_ERR_NOT_FOUND, "open");
    assert_string_equal(og_error_message(), "open: commit X");
    assert_string_equal(og_status_name(OG_ERR_PRECONDITION_FAILED), "precondition_failed");
    assert_string_equal(og_status_name((og_status)999), "unknown");
}

static void vector_gather_and_compare_order_rows(void **state)
{
    (void)state;
    og_vector s, g;
    og_vector_init(&s, (og_type){OG_T_STRING, 0, 0});
    og_vector_append_bytes(&s, "b", 1);
    og_vector_append_bytes(&s, "ab", 2);
    og_vector_append_null(&s);
    og_vector_append_bytes(&s, "a", 1);
    uint32_t idx[] = {3, UINT32_MAX, 0, 1, 2};
    assert_int_equal(og_vector_gather(&g, &s, idx, 5), OG_OK);
    assert_int_equal(g.len, 5);
    assert_true(og_vector_is_null(&g, 1));
    assert_true(og_vector_is_null(&g, 4));
    assert_true(og_vector_row_cmp(&g, 0, &g, 3) < 0); /* "a" < "ab" */
    assert_true(og_vector_row_cmp(&g, 3, &g, 2) < 0); /* "ab" < "b" */
    assert_int_equal(og_vector_row_cmp(&g, 0, &s, 3), 0);

    og_vector f;
    og_vector_init(&f, (og_type){OG_T_F64, 0, 0});
    og_vector_append_f64(&f, NAN);
    og_vector_append_f64(&f, -1e300);
    og_vector_append_f64(&f, 2.5);
    assert_true(og_vector_row_cmp(&f, 1, &f, 2) < 0);
    assert_true(og_vector_row_cmp(&f, 0, &f, 2) > 0); /* NaN after numbers */
    og_vector_free(&s);
    og_vector_free(&g);
    og_vector_free(&f);
}

/* og_vector_reserve (a load's next batch, engine/plan.c): an empty vector gets room for the
 * rows and string bytes asked for, so appends up to there keep their buffers; the rows read
 * back as without it; a vector with rows is left as it is. */
static void vector_reserve_makes_room_without_changing_rows(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(og_vector_init(&v, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    assert_int_equal(og_vector_reserve(&v, 100, 1000), OG_OK);
    const void *vals = v.values;
    const int64_t *offs = v.offsets;
    char text[10] = "abcdefghi";
    for (size_t i = 0; i < 100; i++) assert_int_equal(og_vector_append_bytes(&v, text, i % 10), OG_OK);
    assert_ptr_equal(v.values, vals);
    assert_ptr_equal(v.offsets, offs);
    for (size_t i = 0; i < 100; i++) {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(&v, i, &n);
        assert_int_equal(n, i % 10);
        if (n) assert_memory_equal(p, text, n);
    }
    assert_int_equal(og_vector_append_bytes(&v, text, 9), OG_OK); /* past the room: grows */
    assert_int_equal(v.len, 101);
    size_t cap = v.cap_rows;
    assert_int_equal(og_vector_reserve(&v, 10000, 0), OG_OK); /* not empty: nothing */
    assert_int_equal(v.cap_rows, cap);
    og_vector_free(&v);

    assert_int_equal(og_vector_init(&v, (og_type){OG_T_I64, 0, 0}), OG_OK);
    assert_int_equal(og_vector_reserve(&v, 50, 0), OG_OK);
    vals = v.values;
    for (int64_t i = 0; i < 50; i++) assert_int_equal(og_vector_append_i64(&v, i * 3), OG_OK);
    assert_ptr_equal(v.values, vals);
    for (size_t i = 0; i < 50; i++) assert_int_equal(og_vector_get_i64(&v, i), (int64_t)i * 3);
    assert_int_equal(og_vector_append_null(&v), OG_OK);
    assert_true(og_vector_is_null(&v, 50));
    assert_false(og_vector_is_null(&v, 49));
    og_vector_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buf_appends_little_endian_and_pads),
        cmocka_unit_test(buf_remembers_a_failed_growth),
        cmocka_unit_test(vector_validity_appears_only_with_a_null),
        cmocka_unit_test(vector_i32_rejects_out_of_range),
        cmocka_unit_test(vector_strings_lists_and_equality),
        cmocka_unit_test(errors_carry_a_message_and_a_name),
        cmocka_unit_test(vector_gather_and_compare_order_rows),
        cmocka_unit_test(vector_reserve_makes_room_without_changing_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
