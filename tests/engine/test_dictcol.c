/*
 * test_dictcol.c — the dictionary-coded String column (engine/dictcol.h) holds exactly the
 * column it coded, and the kernels that read it (colscan.h ranges and grouping, sort keys)
 * give the plain column's answers: nulls, the empty string, long values sharing prefixes,
 * one-byte and two-byte codes, a column appended in many uneven batches (the pages of a
 * scan), constants the dictionary does not hold, null constants, row lists, the limit on
 * distinct values, and a column coded in two parts (a two-threaded load) equal to it coded in one.
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

/* Appends rows [from, to) of src to b in uneven batches. */
static og_status append_range(og_dictcol_builder *b, const og_vector *src, size_t from, size_t to)
{
    og_status st = OG_OK;
    for (size_t at = from; at < to && st == OG_OK;) {
        size_t n = 1 + next() % 3000;
        if (n > to - at) n = to - at;
        uint32_t *idx = malloc(n * sizeof *idx);
        for (size_t k = 0; k < n; k++) idx[k] = (uint32_t)(at + k);
        og_vector part;
        assert_int_equal(og_vector_gather(&part, src, idx, n), OG_OK);
        st = og_dictcol_append(b, &part);
        og_vector_free(&part);
        free(idx);
        at += n;
    }
    return st;
}

/* A column coded in two parts (og_dictcol_begin_part / og_dictcol_join: what a two-threaded
 * load does) is the column coded in one: the same dictionary, width, codes and nulls — with
 * few values, past 256 in the first part, the second, or only their union, nulls in one part
 * only, and split points near either end; past OG_DICTCOL_MAX the join refuses as one
 * builder would.  Every side is freed at any point without leaks (ASan). */
static void two_parts_code_as_one(void **state)
{
    (void)state;
    /* {rows, pool, nulls: 0 none, 1 everywhere, 2 only in the second part} */
    static const size_t cases[][3] = {{20000, 8, 1}, {20000, 200, 0}, {30000, 600, 1}, {3000, 300, 2},
                                      {9000, 257, 1}, {5000, 5000, 0}, {2, 2, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        size_t n = cases[c][0], pool = cases[c][1];
        og_vector src;
        make_col(&src, n, pool);
        og_dictcol *one;
        assert_int_equal(og_dictcol_from_vector(&src, &one), OG_OK);
        size_t splits[] = {1, n / 2, n - 1, 1 + next() % (n - 1)};
        for (size_t s = 0; s < 4; s++) {
            size_t at = splits[s];
            og_vector col;
            if (cases[c][2] == 2) { /* nulls only past the split */
                assert_int_equal(og_vector_init(&col, (og_type){OG_T_STRING, 0, 0}), OG_OK);
                for (size_t i = 0; i < n; i++) {
                    if (og_vector_is_null(&src, i) && i < at)
                        assert_int_equal(og_vector_append_bytes(&col, "x", 1), OG_OK);
                    else
                        assert_int_equal(og_vector_append_from(&col, &src, i), OG_OK);
                }
            } else {
                assert_int_equal(og_vector_init(&col, (og_type){OG_T_STRING, 0, 0}), OG_OK);
                for (size_t i = 0; i < n; i++) assert_int_equal(og_vector_append_from(&col, &src, i), OG_OK);
            }
            og_dictcol *want;
            assert_int_equal(og_dictcol_from_vector(&col, &want), OG_OK);
            og_dictcol_builder *b, *p;
            assert_int_equal(og_dictcol_begin(&b, n), OG_OK);
            assert_int_equal(og_dictcol_begin_part(&p, b, at), OG_OK);
            /* the second part first: the sides' order does not matter */
            assert_int_equal(append_range(p, &col, at, n), OG_OK);
            assert_int_equal(append_range(b, &col, 0, at), OG_OK);
            assert_int_equal(og_dictcol_join(b, p), OG_OK);
            og_dictcol *got;
            assert_int_equal(og_dictcol_finish(b, &got), OG_OK);
            check_holds(&col, got);
            assert_int_equal(got->width, want->width);
            assert_int_equal(got->null_count, want->null_count);
            assert_int_equal(got->dict.len, want->dict.len);
            assert_int_equal(got->validity != NULL, want->validity != NULL);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(og_dictcol_is_null(got, i), og_dictcol_is_null(want, i));
                if (!og_dictcol_is_null(got, i)) assert_int_equal(og_dictcol_code(got, i), og_dictcol_code(want, i));
            }
            og_dictcol_free(got);
            og_dictcol_free(want);
            /* abandoned halfway, from either side */
            assert_int_equal(og_dictcol_begin(&b, n), OG_OK);
            assert_int_equal(og_dictcol_begin_part(&p, b, at), OG_OK);
            assert_int_equal(append_range(b, &col, 0, at), OG_OK);
            if (s % 2) {
                og_dictcol_builder_free(p);
                og_dictcol_builder_free(b);
            } else {
                og_dictcol_builder_free(b);
                og_dictcol_builder_free(p);
            }
            og_vector_free(&col);
        }
        og_dictcol_free(one);
        og_vector_free(&src);
    }
    /* refused: a part of a builder already appended to, a split outside its rows, a join of a
     * side that did not code all its rows */
    og_vector v;
    make_col(&v, 100, 5);
    og_dictcol_builder *b, *p;
    assert_int_equal(og_dictcol_begin(&b, 100), OG_OK);
    assert_int_equal(og_dictcol_begin_part(&p, b, 0), OG_ERR_INTERNAL);
    assert_int_equal(og_dictcol_begin_part(&p, b, 100), OG_ERR_INTERNAL);
    assert_int_equal(og_dictcol_begin_part(&p, b, 40), OG_OK);
    assert_int_equal(append_range(b, &v, 0, 39), OG_OK);
    assert_int_equal(append_range(p, &v, 40, 100), OG_OK);
    assert_int_equal(og_dictcol_join(b, p), OG_ERR_INTERNAL); /* (frees p) */
    og_dictcol_builder_free(b);
    assert_int_equal(og_dictcol_begin(&b, 100), OG_OK);
    assert_int_equal(append_range(b, &v, 0, 10), OG_OK);
    assert_int_equal(og_dictcol_begin_part(&p, b, 40), OG_ERR_INTERNAL);
    og_dictcol_builder_free(b);
    og_vector_free(&v);
    /* a part gets no more rows than it holds */
    make_col(&v, 100, 5);
    assert_int_equal(og_dictcol_begin(&b, 100), OG_OK);
    assert_int_equal(og_dictcol_begin_part(&p, b, 40), OG_OK);
    assert_int_equal(og_dictcol_append(p, &v), OG_ERR_INTERNAL);
    assert_int_equal(og_dictcol_append(b, &v), OG_ERR_INTERNAL);
    og_dictcol_builder_free(p);
    og_dictcol_builder_free(b);
    og_vector_free(&v);
    /* the union past OG_DICTCOL_MAX: each side holds fewer, the join refuses */
    assert_int_equal(og_vector_init(&v, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    char buf[32];
    for (size_t i = 0; i <= OG_DICTCOL_MAX; i++)
        assert_int_equal(og_vector_append_bytes(&v, buf, (size_t)sprintf(buf, "key-%zu", i)), OG_OK);
    assert_int_equal(og_dictcol_begin(&b, v.len), OG_OK);
    assert_int_equal(og_dictcol_begin_part(&p, b, v.len / 2), OG_OK);
    assert_int_equal(append_range(b, &v, 0, v.len / 2), OG_OK);
    assert_int_equal(append_range(p, &v, v.len / 2, v.len), OG_OK);
    assert_int_equal(og_dictcol_join(b, p), OG_ERR_LIMIT);
    og_dictcol_builder_free(b);
    og_vector_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_byte_codes),
        cmocka_unit_test(two_byte_codes),
        cmocka_unit_test(no_nulls_and_all_nulls),
        cmocka_unit_test(the_limit),
        cmocka_unit_test(two_parts_code_as_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
