/*
 * test_dictcol.c — the dictionary-coded String column (engine/dictcol.h) holds exactly the
 * column it coded, and the kernels that read it (colscan.h ranges and grouping, sort keys)
 * give the plain column's answers: nulls, the empty string, long values sharing prefixes,
 * one-byte and two-byte codes, a column appended in many uneven batches (the pages of a
 * scan), constants the dictionary does not hold, null constants, row lists, and the limit on
 * distinct values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/colscan.h"
#include "engine/dictcol.h"
#include "engine/filter.h"
#include "engine/sort.h"

static uint64_t rng = 0x9e3779b9u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The k-th value of a pool of `pool` values: short, empty, long with shared prefixes. */
static size_t value(size_t k, char *buf)
{
    switch (k % 4) {
    case 0: return (size_t)sprintf(buf, "v%zu", k);
    case 1: return (size_t)sprintf(buf, "a-long-shared-prefix-%zu", k);
    case 2: return (size_t)sprintf(buf, "a-long-shared-prefix-%zu-and-more", k / 2);
    default: return k == 3 ? 0 : (size_t)sprintf(buf, "%c", (int)('A' + k % 50)); /* "" once */
    }
}

/* n rows drawn from `pool` values, about 1 in 9 null. */
static void make_col(og_vector *v, size_t n, size_t pool)
{
    assert_int_equal(og_vector_init(v, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        if (r % 9 == 0) {
            assert_int_equal(og_vector_append_null(v), OG_OK);
            continue;
        }
        size_t len = value((size_t)(r >> 8) % pool, buf);
        assert_int_equal(og_vector_append_bytes(v, buf, len), OG_OK);
    }
}

/* Codes src in uneven batches, as a scan's pages arrive. */
static og_dictcol *code_in_batches(const og_vector *src)
{
    og_dictcol_builder *b;
    assert_int_equal(og_dictcol_begin(&b, src->len / 3), OG_OK); /* an estimate that is too low */
    for (size_t at = 0; at < src->len;) {
        size_t n = 1 + next() % 5000;
        if (n > src->len - at) n = src->len - at;
        uint32_t *idx = malloc(n * sizeof *idx);
        for (size_t k = 0; k < n; k++) idx[k] = (uint32_t)(at + k);
        og_vector part;
        assert_int_equal(og_vector_gather(&part, src, idx, n), OG_OK);
        assert_int_equal(og_dictcol_append(b, &part), OG_OK);
        og_vector_free(&part);
        free(idx);
        at += n;
    }
    og_dictcol *d;
    assert_int_equal(og_dictcol_finish(b, &d), OG_OK);
    return d;
}

static void check_holds(const og_vector *src, const og_dictcol *d)
{
    assert_int_equal(d->len, src->len);
    assert_int_equal(d->null_count, src->null_count);
    for (size_t v = 1; v < d->dict.len; v++) /* strictly ascending */
        assert_true(og_vector_row_cmp(&d->dict, v - 1, &d->dict, v) < 0);
    og_vector all;
    assert_int_equal(og_dictcol_gather(&all, d, NULL, d->len), OG_OK);
    for (size_t i = 0; i < src->len; i++) assert_true(og_vector_row_eq(&all, i, src, i));
    og_vector_free(&all);
}

/* Every operator, both orders, constants in and out of the dictionary and null, with a row
 * list and without: og_colscan_filter over the codes == og_filter_compare over the strings. */
static void check_filters(const og_vector *src, const og_dictcol *d, size_t pool)
{
    size_t n = src->len, words = (n + 63) / 64;
    uint32_t *rows = malloc(n * sizeof *rows);
    for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)(next() % n);
    og_vector byrows;
    assert_int_equal(og_vector_gather(&byrows, src, rows, n), OG_OK);
    uint64_t *got = malloc(words * 8), *want = malloc(words * 8);
    char buf[64];
    for (size_t c = 0; c < 12; c++) {
        og_vector k;
        if (c == 11) {
            assert_int_equal(og_vector_init(&k, (og_type){OG_T_STRING, 0, 0}), OG_OK);
            assert_int_equal(og_vector_append_null(&k), OG_OK);
        } else {
            /* pool values, then ones between and beyond them ("v" < "v0", "zzz" past all) */
            static const char *const extra[] = {"", "v", "a-long-shared-prefix-", "zzz", "A-", "v00"};
            size_t len = c < 5 ? value(next() % pool, buf) : (size_t)sprintf(buf, "%s", extra[c - 5]);
            assert_int_equal(og_vector_init(&k, (og_type){OG_T_STRING, 0, 0}), OG_OK);
            assert_int_equal(og_vector_append_bytes(&k, buf, len), OG_OK);
        }
        for (og_cmp_op op = OG_CMP_EQ; op <= OG_CMP_GE; op++) {
            for (int k_left = 0; k_left <= 1; k_left++) {
                for (int with_rows = 0; with_rows <= 1; with_rows++) {
                    og_colrange r;
                    assert_int_equal(og_colrange_prepare_dict(&r, d, with_rows ? rows : NULL, op, &k, k_left), 1);
                    assert_int_equal(og_colrange_len(&r), n);
                    memset(got, 0xff, words * 8);
                    og_colscan_filter(&r, 1, n, got);
                    memset(want, 0xff, words * 8);
                    const og_vector *col = with_rows ? &byrows : src;
                    assert_int_equal(k_left ? og_filter_compare(&k, op, col, (uint8_t *)want, n)
                                            : og_filter_compare(col, op, &k, (uint8_t *)want, n),
                                     OG_OK);
                    for (size_t i = 0; i < n; i++)
                        if (((got[i / 64] >> (i % 64)) & 1) != ((want[i / 64] >> (i % 64)) & 1))
                            fail_msg("constant %zu op %d k_left %d rows %d: row %zu differs", c, (int)op, k_left,
                                     with_rows, i);
                }
            }
        }
        og_vector_free(&k);
    }
    free(got);
    free(want);
    og_vector_free(&byrows);
    free(rows);
}

/* Grouping by the codes gives the groups (and counts) grouping by the strings gives. */
static void check_groups(const og_vector *src, const og_dictcol *d)
{
    size_t n = src->len;
    og_colref pk = {src, NULL, NULL}, dk = {NULL, NULL, d};
    og_colagg cnt = {OG_AGG_COUNT, {NULL, NULL, NULL}};
    og_colagg cntv = {OG_AGG_COUNT, {NULL, NULL, d}}, cntp = {OG_AGG_COUNT, {src, NULL, NULL}};
    og_colagg pa[2] = {cnt, cntp}, da[2] = {cnt, cntv};
    og_vector pout[2], dout[2], pkey, dkey;
    size_t png, dng;
    assert_int_equal(og_colscan_aggregate(&pk, pa, 2, n, pout, &pkey, &png), OG_OK);
    assert_int_equal(og_colscan_aggregate(&dk, da, 2, n, dout, &dkey, &dng), OG_OK);
    assert_int_equal(png, dng);
    for (size_t g = 0; g < dng; g++) {
        size_t h = 0;
        while (h < png && !og_vector_row_eq(&pkey, h, &dkey, g)) h++;
        assert_true(h < png);
        assert_int_equal(og_vector_get_i64(&pout[0], h), og_vector_get_i64(&dout[0], g));
        assert_int_equal(og_vector_get_i64(&pout[1], h), og_vector_get_i64(&dout[1], g));
    }
    for (int i = 0; i < 2; i++) og_vector_free(&pout[i]), og_vector_free(&dout[i]);
    og_vector_free(&pkey);
    og_vector_free(&dkey);
}

/* The codes as a sort key order the rows as the strings do (nulls first / last alike). */
static void check_order(const og_vector *src, const og_dictcol *d)
{
    size_t n = src->len;
    og_vector codes;
    assert_int_equal(og_dictcol_gather_codes(&codes, d, NULL, n), OG_OK);
    uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (int desc = 0; desc <= 1; desc++) {
        og_sort_key ks = {src, desc}, kc = {&codes, desc};
        assert_int_equal(og_sort_rows(&ks, 1, n, 0, a), OG_OK);
        assert_int_equal(og_sort_rows(&kc, 1, n, 0, b), OG_OK);
        assert_memory_equal(a, b, n * sizeof *a); /* stable: identical permutations */
    }
    free(a);
    free(b);
    og_vector_free(&codes);
}

static void run(size_t n, size_t pool, unsigned width)
{
    og_vector src;
    make_col(&src, n, pool);
    og_dictcol *d = code_in_batches(&src);
    assert_int_equal(d->width, width);
    check_holds(&src, d);
    check_filters(&src, d, pool);
    check_groups(&src, d);
    check_order(&src, d);
    og_dictcol_free(d);
    og_vector_free(&src);
}

static void one_byte_codes(void **state)
{
    (void)state;
    run(30000, 8, 1);
}

static void two_byte_codes(void **state)
{
    (void)state;
    run(20000, 3000, 2);
}

static void no_nulls_and_all_nulls(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(og_vector_init(&v, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    for (int i = 0; i < 1000; i++) assert_int_equal(og_vector_append_bytes(&v, i % 2 ? "x" : "y", 1), OG_OK);
    og_dictcol *d;
    assert_int_equal(og_dictcol_from_vector(&v, &d), OG_OK);
    assert_null(d->validity);
    assert_int_equal(d->dict.len, 2);
    check_holds(&v, d);
    check_order(&v, d);
    og_dictcol_free(d);
    og_vector_free(&v);
    assert_int_equal(og_vector_init(&v, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    for (int i = 0; i < 100; i++) assert_int_equal(og_vector_append_null(&v), OG_OK);
    assert_int_equal(og_dictcol_from_vector(&v, &d), OG_OK);
    assert_int_equal(d->dict.len, 0);
    check_holds(&v, d);
    check_groups(&v, d);
    og_dictcol_free(d);
    og_vector_free(&v);
}

/* OG_DICTCOL_MAX distinct values are coded; one more gives OG_ERR_LIMIT, and nothing leaks. */
static void the_limit(void **state)
{
    (void)state;
    og_vector v;
    assert_int_equal(og_vector_init(&v, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    char buf[32];
    for (size_t i = 0; i < OG_DICTCOL_MAX; i++)
        assert_int_equal(og_vector_append_bytes(&v, buf, (size_t)sprintf(buf, "key-%zu", i)), OG_OK);
    og_dictcol *d;
    assert_int_equal(og_dictcol_from_vector(&v, &d), OG_OK);
    assert_int_equal(d->width, 2);
    assert_int_equal(d->dict.len, OG_DICTCOL_MAX);
    check_holds(&v, d);
    og_dictcol_free(d);
    assert_int_equal(og_vector_append_bytes(&v, "one-more", 8), OG_OK);
    assert_int_equal(og_dictcol_from_vector(&v, &d), OG_ERR_LIMIT);
    og_vector_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_byte_codes),
        cmocka_unit_test(two_byte_codes),
        cmocka_unit_test(no_nulls_and_all_nulls),
        cmocka_unit_test(the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
