/*
 * test_colscan.c — the typed column kernels (engine/colscan.h) give exactly the generic
 * kernels' answers (og_filter_compare; og_group_rows + og_aggregate): every comparison
 * operator, both operand orders, integer / float / date columns with nulls against integer,
 * float, NaN, out-of-range and null constants, through a row list and without, on one thread
 * and two; grouping by String (short and long, with nulls) and integer keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/colscan.h"

static uint64_t rng = 0x1234567u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A column of n rows of type t, about 1 in 9 null, values in [-50, 50) (floats with halves,
 * a few NaN and -0). */
static void make_col(og_vector *v, og_type_id t, size_t n)
{
    assert_int_equal(og_vector_init(v, (og_type){t, 0, 0}), OG_OK);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        int64_t x = (int64_t)(r % 100) - 50;
        if (r % 9 == 0) {
            assert_int_equal(og_vector_append_null(v), OG_OK);
        } else if (t == OG_T_F64 || t == OG_T_F32) {
            double d = (double)x / 2;
            if (r % 31 == 0) d = NAN;
            if (r % 37 == 0) d = -0.0;
            assert_int_equal(og_vector_append_f64(v, d), OG_OK);
        } else if (t == OG_T_U32) {
            assert_int_equal(og_vector_append_u64(v, (uint64_t)(x + 50)), OG_OK);
        } else {
            assert_int_equal(og_vector_append_i64(v, x), OG_OK);
        }
    }
}

static void one_i64(og_vector *k, og_type_id t, int64_t x)
{
    assert_int_equal(og_vector_init(k, (og_type){t, 0, 0}), OG_OK);
    assert_int_equal(og_vector_append_i64(k, x), OG_OK);
}

static void one_f64(og_vector *k, double x)
{
    assert_int_equal(og_vector_init(k, (og_type){OG_T_F64, 0, 0}), OG_OK);
    assert_int_equal(og_vector_append_f64(k, x), OG_OK);
}

/* The generic kernel's bits for `col op k` (k_left: `k op col`) over the binding rows. */
static void reference_bits(const og_vector *col, const uint32_t *rows, size_t n, og_cmp_op op, const og_vector *k,
                           int k_left, uint8_t *sel)
{
    og_vector g;
    if (rows) {
        assert_int_equal(og_vector_gather(&g, col, rows, n), OG_OK);
    } else {
        g = *col;
        g.flags &= ~OG_VEC_OWNED;
    }
    memset(sel, 0xff, (n + 7) / 8);
    og_status st = k_left ? og_filter_compare(k, op, &g, sel, n) : og_filter_compare(&g, op, k, sel, n);
    assert_int_equal(st, OG_OK);
    og_vector_free(&g);
}

/* Checks the typed kernel against the generic one for every operator and both orders. */
static void check_all_ops(const og_vector *col, const uint32_t *rows, size_t n, const og_vector *k)
{
    size_t words = (n + 63) / 64;
    uint64_t *sel = malloc(words * 8);
    uint8_t *want = malloc(words * 8);
    for (int op = OG_CMP_EQ; op <= OG_CMP_GE; op++) {
        for (int k_left = 0; k_left < 2; k_left++) {
            og_colrange r;
            int handled = og_colrange_prepare(&r, col, rows, (og_cmp_op)op, k, k_left);
            /* the one refusal here: a float column against an integer beyond 2^53 */
            int inexact = (col->type.id == OG_T_F64 || col->type.id == OG_T_F32) && k->type.id == OG_T_I64 &&
                          !og_vector_is_null(k, 0) && llabs(og_vector_get_i64(k, 0) / 2) > (1ll << 52);
            assert_int_equal(handled, !inexact);
            if (!handled) continue;
            memset(sel, 0xff, words * 8);
            og_colscan_filter(&r, 1, n, sel);
            reference_bits(col, rows, n, (og_cmp_op)op, k, k_left, want);
            for (size_t i = 0; i < n; i++) {
                int got = (int)((sel[i / 64] >> (i % 64)) & 1), exp = (want[i / 8] >> (i % 8)) & 1;
                if (got != exp)
                    fail_msg("type %d k type %d k %g op %d k_left %d row %zu (col row %u): typed %d, generic %d", (int)col->type.id, (int)k->type.id, k->len && !og_vector_is_null(k, 0) ? (k->type.id == OG_T_F64 ? og_vector_get_f64(k, 0) : (double)og_vector_get_i64(k, 0)) : -999.0, op, k_left, i,
                             rows ? rows[i] : (unsigned)i, got, exp);
            }
        }
    }
    free(sel);
    free(want);
}

static void ranges_match_the_generic_comparison(void **state)
{
    (void)state;
    const size_t n = 3000;
    uint32_t *rows = malloc(n * sizeof *rows);
    for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)((i * 7919) % n); /* a permutation */
    og_type_id types[] = {OG_T_I64, OG_T_I32, OG_T_U32, OG_T_F64, OG_T_F32};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        og_vector col;
        make_col(&col, types[t], n);
        og_vector ks[12];
        size_t nk = 0;
        one_i64(&ks[nk++], OG_T_I64, 7);
        one_i64(&ks[nk++], OG_T_I64, -50);
        one_i64(&ks[nk++], OG_T_I64, INT64_MAX);
        one_i64(&ks[nk++], OG_T_I64, INT64_MIN);
        one_i64(&ks[nk++], OG_T_I32, 0);
        one_f64(&ks[nk++], 2.5);
        one_f64(&ks[nk++], -3.0);
        one_f64(&ks[nk++], 0.0);
        one_f64(&ks[nk++], NAN);
        one_f64(&ks[nk++], 1e300);
        one_f64(&ks[nk++], -INFINITY);
        assert_int_equal(og_vector_init(&ks[nk], (og_type){OG_T_I64, 0, 0}), OG_OK);
        assert_int_equal(og_vector_append_null(&ks[nk++]), OG_OK); /* a null constant */
        for (size_t k = 0; k < nk; k++) {
            check_all_ops(&col, NULL, n, &ks[k]);
            check_all_ops(&col, rows, n, &ks[k]);
            og_vector_free(&ks[k]);
        }
        og_vector_free(&col);
    }
    /* dates against the same date type */
    og_vector d, k;
    make_col(&d, OG_T_DATE32, n);
    one_i64(&k, OG_T_DATE32, -3);
    check_all_ops(&d, rows, n, &k);
    check_all_ops(&d, NULL, n, &k);
    og_vector_free(&k);
    og_vector_free(&d);
    free(rows);
}

static void unhandled_pairings_are_refused(void **state)
{
    (void)state;
    og_vector s, i, d, k, big;
    og_colrange r;
    assert_int_equal(og_vector_init(&s, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    assert_int_equal(og_vector_append_bytes(&s, "a", 1), OG_OK);
    make_col(&i, OG_T_I64, 10);
    make_col(&d, OG_T_DATE32, 10);
    make_col(&big, OG_T_F64, 10);
    one_i64(&k, OG_T_I64, 1);
    assert_int_equal(og_colrange_prepare(&r, &s, NULL, OG_CMP_EQ, &s, 0), 0);           /* strings */
    assert_int_equal(og_colrange_prepare(&r, &i, NULL, OG_CMP_CONTAINS, &k, 0), 0);     /* contains */
    assert_int_equal(og_colrange_prepare(&r, &d, NULL, OG_CMP_LT, &k, 0), 0);           /* date vs number */
    assert_int_equal(og_colrange_prepare(&r, &i, NULL, OG_CMP_LT, &s, 0), 0);           /* number vs string */
    og_vector_free(&k);
    one_i64(&k, OG_T_I64, (1ll << 53) + 1); /* not exact as a double */
    assert_int_equal(og_colrange_prepare(&r, &big, NULL, OG_CMP_LT, &k, 0), 0);
    og_vector_free(&k);
    assert_int_equal(og_vector_init(&k, (og_type){OG_T_U64, 0, 0}), OG_OK);
    assert_int_equal(og_vector_append_u64(&k, UINT64_MAX), OG_OK);
    assert_int_equal(og_colrange_prepare(&r, &i, NULL, OG_CMP_LT, &k, 0), 0);
    og_vector_free(&k);
    og_vector_free(&s), og_vector_free(&i), og_vector_free(&d), og_vector_free(&big);
}

static void a_conjunction_fuses_into_one_range(void **state)
{
    (void)state;
    const size_t n = 500;
    og_vector col, lo, hi;
    make_col(&col, OG_T_I64, n);
    one_i64(&lo, OG_T_I64, -10);
    one_f64(&hi, 20.5);
    og_colrange a, b;
    assert_int_equal(og_colrange_prepare(&a, &col, NULL, OG_CMP_GE, &lo, 0), 1);
    assert_int_equal(og_colrange_prepare(&b, &col, NULL, OG_CMP_LT, &hi, 0), 1);
    assert_int_equal(og_colrange_merge(&a, &b), 1);
    assert_true(a.lo == -10 && a.hi == 20);
    uint64_t sel[8];
    memset(sel, 0xff, sizeof sel);
    og_colscan_filter(&a, 1, n, sel);
    for (size_t i = 0; i < n; i++) {
        int want = !og_vector_is_null(&col, i) && og_vector_get_i64(&col, i) >= -10 && og_vector_get_i64(&col, i) <= 20;
        assert_int_equal((int)((sel[i / 64] >> (i % 64)) & 1), want);
    }
    /* `!=` does not fuse; an empty range selects nothing */
    assert_int_equal(og_colrange_prepare(&b, &col, NULL, OG_CMP_NE, &lo, 0), 1);
    assert_int_equal(og_colrange_merge(&a, &b), 0);
    assert_int_equal(og_colrange_prepare(&a, &col, NULL, OG_CMP_GT, &hi, 0), 1);
    assert_int_equal(og_colrange_prepare(&b, &col, NULL, OG_CMP_LT, &lo, 0), 1);
    assert_int_equal(og_colrange_merge(&a, &b), 1);
    memset(sel, 0xff, sizeof sel);
    og_colscan_filter(&a, 1, n, sel);
    for (size_t w = 0; w < 8; w++) assert_true(sel[w] == 0);
    og_vector_free(&col), og_vector_free(&lo), og_vector_free(&hi);
}

/* The filter over more rows than OG_COLSCAN_PAR_MIN gives the same bits on 1 and 2 threads. */
static void two_threads_give_the_same_bits(void **state)
{
    (void)state;
    const size_t n = OG_COLSCAN_PAR_MIN * 2 + 77;
    og_vector col, k;
    make_col(&col, OG_T_I64, n);
    one_i64(&k, OG_T_I64, 3);
    og_colrange r;
    assert_int_equal(og_colrange_prepare(&r, &col, NULL, OG_CMP_LE, &k, 0), 1);
    size_t words = (n + 63) / 64;
    uint64_t *a = malloc(words * 8), *b = malloc(words * 8);
    memset(a, 0xff, words * 8);
    memset(b, 0xff, words * 8);
    og_colscan_threads = 1;
    og_colscan_filter(&r, 1, n, a);
    og_colscan_threads = 2;
    og_colscan_filter(&r, 1, n, b);
    assert_memory_equal(a, b, words * 8);
    free(a), free(b);
    og_vector_free(&col), og_vector_free(&k);
}

/* Zone maps skip only zones that cannot match: the same bits with and without them, and
 * rows skipped for a narrow range over a sorted column; all-null zones, NaN and `!=`. */
static void zone_maps_skip_only_what_cannot_match(void **state)
{
    (void)state;
    const size_t n = OG_COLZONE_ROWS * 60 + 123; /* over OG_COLSCAN_PAR_MIN: two threads split it */
    og_vector iv, fv;
    assert_int_equal(og_vector_init(&iv, (og_type){OG_T_I64, 0, 0}), OG_OK);
    assert_int_equal(og_vector_init(&fv, (og_type){OG_T_F64, 0, 0}), OG_OK);
    for (size_t i = 0; i < n; i++) {
        int zone_null = i / OG_COLZONE_ROWS == 3; /* one zone of nulls only */
        assert_int_equal(zone_null || i % 17 == 0 ? og_vector_append_null(&iv) : og_vector_append_i64(&iv, (int64_t)i),
                         OG_OK);
        double d = i % 1001 == 0 ? NAN : (double)i / 2;
        assert_int_equal(zone_null ? og_vector_append_null(&fv) : og_vector_append_f64(&fv, d), OG_OK);
    }
    og_colzones *zi, *zf;
    assert_int_equal(og_colzones_build(&iv, &zi), OG_OK);
    assert_int_equal(og_colzones_build(&fv, &zf), OG_OK);
    assert_non_null(zi);
    assert_int_equal(zi->nzones, 61);
    assert_int_equal(zi->any[3], 0);
    assert_true(zi->imin[0] == 1 && zi->imax[60] == (int64_t)n - 1);
    struct {
        const og_vector *col;
        const og_colzones *z;
        og_cmp_op op;
        double k;
        int skips; /* zones must skip something */
    } cases[] = {
        {&iv, NULL, OG_CMP_GE, 20000, 1}, {&iv, NULL, OG_CMP_LT, 5000, 1},  {&iv, NULL, OG_CMP_EQ, 4100, 1},
        {&iv, NULL, OG_CMP_NE, 4100, 0},  {&iv, NULL, OG_CMP_GT, -1, 1},    {&fv, NULL, OG_CMP_LE, 3000.25, 1},
        {&fv, NULL, OG_CMP_EQ, NAN, 1},   {&fv, NULL, OG_CMP_NE, NAN, 0},   {&fv, NULL, OG_CMP_GE, 0, 1},
    };
    size_t words = (n + 63) / 64;
    uint64_t *a = malloc(words * 8), *b = malloc(words * 8);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        og_vector k;
        one_f64(&k, cases[c].k);
        og_colrange r;
        assert_int_equal(og_colrange_prepare(&r, cases[c].col, NULL, cases[c].op, &k, 0), 1);
        memset(a, 0xff, words * 8);
        memset(b, 0xff, words * 8);
        assert_int_equal(og_colscan_filter(&r, 1, n, a), 0);
        r.zones = cases[c].col == &iv ? zi : zf;
        for (int threads = 1; threads <= 2; threads++) {
            og_colscan_threads = threads;
            memset(b, 0xff, words * 8);
            size_t skipped = og_colscan_filter(&r, 1, n, b);
            assert_memory_equal(a, b, words * 8);
            if (cases[c].skips) assert_true(skipped >= OG_COLZONE_ROWS);
            else assert_int_equal(skipped, 0);
        }
        og_vector_free(&k);
    }
    free(a), free(b);
    og_colzones *none;
    og_vector s;
    assert_int_equal(og_vector_init(&s, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    assert_int_equal(og_colzones_build(&s, &none), OG_OK); /* no zones for Strings */
    assert_null(none);
    og_vector_free(&s);
    og_colzones_free(zi), og_colzones_free(zf);
    og_vector_free(&iv), og_vector_free(&fv);
}

/* ---- aggregation -------------------------------------------------------------------------- */

static void string_key(og_vector *v, size_t n, int long_names)
{
    static const char *shorts[] = {"alpha", "beta", "", "gamma", "d\0x"};
    static const char *longs[] = {"category-one", "category-two", "category-three", "cat"};
    assert_int_equal(og_vector_init(v, (og_type){OG_T_STRING, 0, 0}), OG_OK);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        if (r % 11 == 0) {
            assert_int_equal(og_vector_append_null(v), OG_OK);
            continue;
        }
        const char *s = long_names ? longs[r % 4] : shorts[r % 5];
        size_t len = !long_names && r % 5 == 4 ? 3 : strlen(s);
        assert_int_equal(og_vector_append_bytes(v, s, len), OG_OK);
    }
}

/* The typed aggregation of (key, args) equals og_group_rows + og_aggregate over the gathered
 * rows, group for group (matched by key). */
static void check_aggregate(const og_vector *key, const og_vector *arg, const uint32_t *rows, size_t n)
{
    og_agg_fn fns[] = {OG_AGG_COUNT, OG_AGG_COUNT, OG_AGG_SUM, OG_AGG_AVG, OG_AGG_MIN, OG_AGG_MAX};
    const size_t na = sizeof fns / sizeof fns[0];
    og_colagg aggs[6];
    for (size_t a = 0; a < na; a++) aggs[a] = (og_colagg){fns[a], {a == 0 ? NULL : arg, rows, NULL}};
    og_colref kref = {key, rows, NULL};
    og_vector outs[6], kout;
    size_t ng = 0;
    assert_int_equal(og_colscan_aggregate(&kref, aggs, na, n, outs, &kout, &ng), OG_OK);
    /* the reference */
    og_vector gk, ga;
    assert_int_equal(og_vector_gather(&gk, key, rows, n), OG_OK);
    assert_int_equal(og_vector_gather(&ga, arg, rows, n), OG_OK);
    const og_vector *keys[] = {&gk};
    uint32_t *gid = malloc((n ? n : 1) * sizeof *gid), *first;
    size_t rng_groups;
    assert_int_equal(og_group_rows(keys, 1, n, gid, &rng_groups, &first), OG_OK);
    assert_int_equal(rng_groups, ng);
    og_vector refk;
    assert_int_equal(og_vector_gather(&refk, &gk, first, rng_groups), OG_OK);
    for (size_t a = 0; a < na; a++) {
        og_vector ref;
        assert_int_equal(og_aggregate(fns[a], a == 0 ? NULL : &ga, gid, n, rng_groups, &ref), OG_OK);
        assert_true(og_type_eq(ref.type, outs[a].type));
        for (size_t g = 0; g < ng; g++) {
            size_t h = 0; /* the reference group with g's key */
            while (h < rng_groups && !og_vector_row_eq(&kout, g, &refk, h)) h++;
            assert_true(h < rng_groups);
            int rn = og_vector_is_null(&ref, h), on = og_vector_is_null(&outs[a], g);
            assert_int_equal(rn, on);
            if (rn) continue;
            if (ref.type.id == OG_T_F64 && fns[a] != OG_AGG_MIN && fns[a] != OG_AGG_MAX) {
                double x = og_vector_get_f64(&ref, h), y = og_vector_get_f64(&outs[a], g);
                assert_true((isnan(x) && isnan(y)) || x == y);
            } else {
                assert_true(og_vector_row_eq(&ref, h, &outs[a], g));
            }
        }
        og_vector_free(&ref);
    }
    for (size_t a = 0; a < na; a++) og_vector_free(&outs[a]);
    og_vector_free(&kout), og_vector_free(&refk), og_vector_free(&gk), og_vector_free(&ga);
    free(gid), free(first);
}

static void grouped_aggregates_match_the_generic_ones(void **state)
{
    (void)state;
    const size_t n = 4000;
    uint32_t *rows = malloc(n * sizeof *rows), *ident = malloc(n * sizeof *ident);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        ident[i] = (uint32_t)i;
        if (next() % 3) rows[m++] = (uint32_t)i; /* a selection, in row order */
    }
    og_type_id args[] = {OG_T_I64, OG_T_I32, OG_T_F64, OG_T_F32};
    for (int long_names = 0; long_names < 2; long_names++) {
        og_vector key;
        string_key(&key, n, long_names);
        for (size_t t = 0; t < sizeof args / sizeof args[0]; t++) {
            og_vector arg;
            make_col(&arg, args[t], n);
            check_aggregate(&key, &arg, rows, m);
            check_aggregate(&key, &arg, ident, n);
            check_aggregate(&key, &arg, rows, 0); /* no rows, no groups */
            og_vector_free(&arg);
        }
        og_vector_free(&key);
    }
    og_vector ikey, arg;
    make_col(&ikey, OG_T_I32, n); /* an integer key with nulls */
    make_col(&arg, OG_T_I64, n);
    check_aggregate(&ikey, &arg, rows, m);
    og_vector_free(&ikey), og_vector_free(&arg);
    free(rows), free(ident);
}

static void one_group_without_a_key_and_two_threads(void **state)
{
    (void)state;
    const size_t n = OG_COLSCAN_PAR_MIN + 1000;
    og_vector arg, key;
    make_col(&arg, OG_T_I64, n);
    string_key(&key, n, 0);
    og_colagg aggs[] = {{OG_AGG_COUNT, {NULL, NULL, NULL}}, {OG_AGG_MAX, {&arg, NULL, NULL}}, {OG_AGG_AVG, {&arg, NULL, NULL}}};
    og_colref none = {NULL, NULL, NULL}, kref = {&key, NULL, NULL};
    og_vector o1[3], o2[3], k1, k2;
    size_t g1, g2;
    og_colscan_threads = 1;
    assert_int_equal(og_colscan_aggregate(&none, aggs, 3, n, o1, NULL, &g1), OG_OK);
    assert_int_equal(g1, 1);
    assert_int_equal(og_vector_get_i64(&o1[0], 0), (int64_t)n);
    og_colscan_threads = 2;
    assert_int_equal(og_colscan_aggregate(&none, aggs, 3, n, o2, NULL, &g2), OG_OK);
    for (size_t a = 0; a < 3; a++) {
        assert_true(og_vector_row_eq(&o1[a], 0, &o2[a], 0));
        og_vector_free(&o1[a]), og_vector_free(&o2[a]);
    }
    /* zero rows without a key: one group, count 0, the others null */
    assert_int_equal(og_colscan_aggregate(&none, aggs, 3, 0, o1, NULL, &g1), OG_OK);
    assert_int_equal(g1, 1);
    assert_int_equal(og_vector_get_i64(&o1[0], 0), 0);
    assert_true(og_vector_is_null(&o1[1], 0) && og_vector_is_null(&o1[2], 0));
    for (size_t a = 0; a < 3; a++) og_vector_free(&o1[a]);
    /* grouped, split over two threads: the same groups and values as one thread */
    og_colscan_threads = 1;
    assert_int_equal(og_colscan_aggregate(&kref, aggs, 3, n, o1, &k1, &g1), OG_OK);
    og_colscan_threads = 2;
    assert_int_equal(og_colscan_aggregate(&kref, aggs, 3, n, o2, &k2, &g2), OG_OK);
    assert_int_equal(g1, g2);
    for (size_t g = 0; g < g1; g++) {
        assert_true(og_vector_row_eq(&k1, g, &k2, g));
        for (size_t a = 0; a < 3; a++) assert_true(og_vector_row_eq(&o1[a], g, &o2[a], g));
    }
    for (size_t a = 0; a < 3; a++) og_vector_free(&o1[a]), og_vector_free(&o2[a]);
    og_vector_free(&k1), og_vector_free(&k2), og_vector_free(&arg), og_vector_free(&key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_match_the_generic_comparison),
        cmocka_unit_test(unhandled_pairings_are_refused),
        cmocka_unit_test(a_conjunction_fuses_into_one_range),
        cmocka_unit_test(two_threads_give_the_same_bits),
        cmocka_unit_test(zone_maps_skip_only_what_cannot_match),
        cmocka_unit_test(grouped_aggregates_match_the_generic_ones),
        cmocka_unit_test(one_group_without_a_key_and_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
