/*
 * test_bindings.c — the relational core over row-number tables: expand (multi-hop distinct
 * destinations; edge binding gives one row per parallel edge), cycle closing, cross product
 * order, selection, and the anti-join mask (E3/E7 shapes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/bindings.h"

/* People a(0) b(1) c(2) d(3) e(4); knows: a->b, c->d, d->e, plus a parallel a->b. */
static og_topology *people(void)
{
    uint32_t src[] = {0, 2, 3, 0}, dst[] = {1, 3, 4, 1};
    og_topology *t;
    assert_int_equal(og_topology_build(&t, 5, 5, src, dst, 4, NULL), OG_OK);
    return t;
}

static void expand_emits_distinct_destinations_but_every_parallel_edge_when_bound(void **state)
{
    (void)state;
    og_topology *t = people();
    uint32_t all[] = {0, 1, 2, 3, 4};
    og_bindings in, out;
    og_bindings_from_rows(&in, all, 5);
    assert_int_equal(og_expand(&out, &in, 0, t, OG_DIR_OUT, 1, 1, 0), OG_OK);
    assert_int_equal(out.n_rows, 3); /* a->b once, c->d, d->e */
    og_bindings_free(&out);
    assert_int_equal(og_expand(&out, &in, 0, t, OG_DIR_OUT, 1, 1, 1), OG_OK);
    assert_int_equal(out.n_rows, 4); /* both parallel a->b edges */
    assert_int_equal(out.n_cols, 3);
    assert_int_equal(out.cols[2][0], 0); /* edge rows 0 and 3 for a */
    assert_int_equal(out.cols[2][1], 3);
    og_bindings_free(&out);
    assert_int_equal(og_expand(&out, &in, 0, t, OG_DIR_OUT, 1, 2, 1), OG_ERR_INVALID);
    og_bindings_free(&in);
    og_topology_free(t);
}

static void anti_join_keeps_rows_without_a_two_hop_match(void **state)
{
    (void)state;
    /* match { $p: Person  not { $p knows{2,2} $x } } -> a, b, d, e */
    og_topology *t = people();
    uint32_t all[] = {0, 1, 2, 3, 4};
    og_bindings outer;
    og_bindings_from_rows(&outer, all, 5);
    /* inner pipeline: origin column = outer row number */
    uint32_t origin[] = {0, 1, 2, 3, 4};
    og_bindings inner_in, inner;
    og_bindings_from_rows(&inner_in, origin, 5);
    assert_int_equal(og_expand(&inner, &inner_in, 0, t, OG_DIR_OUT, 2, 2, 0), OG_OK);
    uint8_t keep = 0x1f;
    og_antijoin_mask(&inner, 0, &keep, 5);
    og_bindings_select(&outer, &keep);
    assert_int_equal(outer.n_rows, 4);
    uint32_t want[] = {0, 1, 3, 4};
    assert_memory_equal(outer.cols[0], want, sizeof want);
    og_bindings_free(&outer);
    og_bindings_free(&inner_in);
    og_bindings_free(&inner);
    og_topology_free(t);
}

static void cycle_closing_keeps_only_connected_pairs(void **state)
{
    (void)state;
    og_topology *t = people();
    og_bindings b;
    og_bindings_init(&b, 2);
    uint32_t r1[] = {0, 1}, r2[] = {0, 2}, r3[] = {2, 4};
    og_bindings_push(&b, r1);
    og_bindings_push(&b, r2);
    og_bindings_push(&b, r3);
    assert_int_equal(og_expand_filter(&b, 0, 1, t, OG_DIR_OUT, 1, 2), OG_OK);
    assert_int_equal(b.n_rows, 2); /* a->b (1 hop), c->e (2 hops) */
    assert_int_equal(b.cols[1][1], 4);
    og_bindings_free(&b);
    og_topology_free(t);
}

static void cross_product_is_left_major(void **state)
{
    (void)state;
    uint32_t x[] = {7, 8}, y[] = {1, 2, 3};
    og_bindings a, b, out;
    og_bindings_from_rows(&a, x, 2);
    og_bindings_from_rows(&b, y, 3);
    assert_int_equal(og_bindings_cross(&out, &a, &b), OG_OK);
    assert_int_equal(out.n_rows, 6);
    uint32_t c0[] = {7, 7, 7, 8, 8, 8}, c1[] = {1, 2, 3, 1, 2, 3};
    assert_memory_equal(out.cols[0], c0, sizeof c0);
    assert_memory_equal(out.cols[1], c1, sizeof c1);
    og_bindings_free(&a);
    og_bindings_free(&b);
    og_bindings_free(&out);
}

/* Rows from a bitmap come out in row order; bits past n are ignored; none set: no rows. */
static void rows_from_bits_and_select_keep_row_order(void **state)
{
    (void)state;
    uint64_t bits[3] = {0x8000000000000005ull, 0, ~0ull}; /* rows 0, 2, 63, then 128..129 of n=130 */
    og_bindings b;
    assert_int_equal(og_bindings_from_bits(&b, bits, 130), OG_OK);
    uint32_t want[] = {0, 2, 63, 128, 129};
    assert_int_equal(b.n_rows, 5);
    assert_memory_equal(b.cols[0], want, sizeof want);
    /* select over one column: a byte of zeros skipped, a kept prefix left in place */
    uint8_t sel[1] = {0x1b}; /* rows 0, 1, 3, 4 */
    og_bindings_select(&b, sel);
    uint32_t kept[] = {0, 2, 128, 129};
    assert_int_equal(b.n_rows, 4);
    assert_memory_equal(b.cols[0], kept, sizeof kept);
    og_bindings_free(&b);
    uint64_t none[1] = {0};
    assert_int_equal(og_bindings_from_bits(&b, none, 40), OG_OK);
    assert_int_equal(b.n_rows, 0);
    og_bindings_free(&b);
    /* a long selection: every third row of 1000 */
    uint32_t rows[1000];
    for (uint32_t i = 0; i < 1000; i++) rows[i] = i;
    assert_int_equal(og_bindings_from_rows(&b, rows, 1000), OG_OK);
    uint8_t third[125];
    memset(third, 0, sizeof third);
    for (size_t i = 0; i < 1000; i += 3) third[i / 8] |= (uint8_t)(1u << (i % 8));
    memset(third + 40, 0, 10); /* rows 320..399 dropped */
    og_bindings_select(&b, third);
    size_t k = 0;
    for (uint32_t i = 0; i < 1000; i += 3)
        if (i < 320 || i >= 400) assert_int_equal(b.cols[0][k++], i);
    assert_int_equal(b.n_rows, k);
    og_bindings_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(expand_emits_distinct_destinations_but_every_parallel_edge_when_bound),
        cmocka_unit_test(anti_join_keeps_rows_without_a_two_hop_match),
        cmocka_unit_test(cycle_closing_keeps_only_connected_pairs),
        cmocka_unit_test(cross_product_is_left_major),
        cmocka_unit_test(rows_from_bits_and_select_keep_row_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
