/*
 * test_scalar.c — the per-data-file scalar index (index/scalar.h): for integer, float and
 * string columns with nulls (and NaN), every range lookup returns exactly the rows a scan's
 * comparison keeps (floats: at least those), and damaged files are OG_ERR_CORRUPT.  Two builds
 * on two threads of one process at once each write exactly their single-threaded file.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "index/scalar.h"
#include "util/error.h"

#define OK(expr)                                                                                   \
    do {                                                                                           \
        og_status ok_st_ = (expr);                                                                 \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message());   \
    } while (0)

#define N 500

typedef struct got {
    uint8_t hit[N];
    size_t n;
} got;

static void collect(void *ud, uint32_t off)
{
    got *g = ud;
    assert_true(off < N);
    g->hit[off]++;
    g->n++;
}

/* lo/hi inclusive flags; has_* 0 = open. */
static void check_num(const og_buf *b, const double *vals, const uint8_t *null, int has_lo, double lo, int lo_incl,
                      int has_hi, double hi, int hi_incl, int exact)
{
    og_scalar_range r = {has_lo, lo_incl, has_hi, hi_incl, lo, hi, NULL, NULL, 0, 0};
    got g;
    memset(&g, 0, sizeof g);
    OK(og_scalar_lookup(b->data, b->len, 0, &r, collect, &g));
    for (size_t i = 0; i < N; i++) {
        int want = !null[i] && !isnan(vals[i]) && (!has_lo || (lo_incl ? vals[i] >= lo : vals[i] > lo)) &&
                   (!has_hi || (hi_incl ? vals[i] <= hi : vals[i] < hi));
        assert_true(g.hit[i] <= 1);
        if (want) assert_int_equal(g.hit[i], 1);
        else if (exact) assert_int_equal(g.hit[i], 0);
    }
}

static void integer_ranges(void **state)
{
    (void)state;
    og_vector v;
    double vals[N];
    uint8_t null[N];
    OK(og_vector_init(&v, (og_type){OG_T_I64, OG_T_NULL, 0}));
    for (size_t i = 0; i < N; i++) {
        null[i] = i % 11 == 0;
        vals[i] = (double)((int64_t)((i * 7919) % 97) - 40);
        if (null[i]) OK(og_vector_append_null(&v));
        else OK(og_vector_append_i64(&v, (int64_t)vals[i]));
    }
    og_buf b = OG_BUF_INIT;
    OK(og_scalar_encode(&v, &b));
    OK(og_scalar_check(b.data, b.len, N));
    assert_int_equal(og_scalar_file_kind(b.data), OG_SCALAR_INT);
    for (int x = -45; x <= 60; x += 3) {
        check_num(&b, vals, null, 1, x, 1, 1, x, 1, 1);      /* = x */
        check_num(&b, vals, null, 0, 0, 0, 1, x, 0, 1);      /* < x */
        check_num(&b, vals, null, 0, 0, 0, 1, x, 1, 1);      /* <= x */
        check_num(&b, vals, null, 1, x, 0, 0, 0, 0, 1);      /* > x */
        check_num(&b, vals, null, 1, x + 0.5, 1, 0, 0, 0, 1); /* >= x.5 */
        check_num(&b, vals, null, 1, x, 1, 1, x + 10, 0, 1);
    }
    check_num(&b, vals, null, 0, 0, 0, 0, 0, 0, 1); /* everything non-null */
    /* damage */
    assert_int_equal(og_scalar_check(b.data, b.len - 1, N), OG_ERR_CORRUPT);
    assert_int_equal(og_scalar_check(b.data, b.len, N + 1), OG_ERR_CORRUPT);
    b.data[24] ^= 1;
    assert_int_equal(og_scalar_check(b.data, b.len, N), OG_ERR_CORRUPT);
    b.data[24] ^= 1;
    og_scalar_range sr = {1, 1, 0, 0, 0, 0, (const uint8_t *)"a", NULL, 1, 0};
    got g;
    assert_int_equal(og_scalar_lookup(b.data, b.len, 1, &sr, collect, &g), OG_ERR_INVALID);
    og_buf_free(&b);
    og_vector_free(&v);
}

static void float_ranges(void **state)
{
    (void)state;
    og_vector v;
    double vals[N];
    uint8_t null[N];
    OK(og_vector_init(&v, (og_type){OG_T_F64, OG_T_NULL, 0}));
    for (size_t i = 0; i < N; i++) {
        null[i] = i % 13 == 0;
        vals[i] = i % 17 == 0 ? NAN : ((double)((i * 31) % 101) - 50) / 4.0;
        if (null[i]) OK(og_vector_append_null(&v));
        else OK(og_vector_append_f64(&v, vals[i]));
    }
    og_buf b = OG_BUF_INIT;
    OK(og_scalar_encode(&v, &b));
    OK(og_scalar_check(b.data, b.len, N));
    for (double x = -13; x <= 13; x += 0.75) {
        check_num(&b, vals, null, 1, x, 1, 1, x, 1, 0);
        check_num(&b, vals, null, 0, 0, 0, 1, x, 0, 0);
        check_num(&b, vals, null, 1, x, 0, 0, 0, 0, 0);
    }
    check_num(&b, vals, null, 1, NAN, 1, 0, 0, 0, 1); /* NaN: nothing */
    og_buf_free(&b);
    og_vector_free(&v);
}

static void string_ranges(void **state)
{
    (void)state;
    static const char *words[] = {"", "a", "ab", "abc", "b", "ba", "z", "\xc3\xa9t\xc3\xa9", "ab"};
    size_t nw = sizeof words / sizeof *words;
    og_vector v;
    OK(og_vector_init(&v, (og_type){OG_T_STRING, OG_T_NULL, 0}));
    for (size_t i = 0; i < N; i++) {
        if (i % 9 == 4) OK(og_vector_append_null(&v));
        else OK(og_vector_append_bytes(&v, words[i % nw], strlen(words[i % nw])));
    }
    og_buf b = OG_BUF_INIT;
    OK(og_scalar_encode(&v, &b));
    OK(og_scalar_check(b.data, b.len, N));
    for (size_t w = 0; w < nw; w++) {
        const char *x = words[w];
        og_scalar_range eq = {1, 1, 1, 1, 0, 0, (const uint8_t *)x, (const uint8_t *)x, strlen(x), strlen(x)};
        og_scalar_range lt = {0, 0, 1, 0, 0, 0, NULL, (const uint8_t *)x, 0, strlen(x)};
        got ge, gl;
        memset(&ge, 0, sizeof ge);
        memset(&gl, 0, sizeof gl);
        OK(og_scalar_lookup(b.data, b.len, 1, &eq, collect, &ge));
        OK(og_scalar_lookup(b.data, b.len, 1, &lt, collect, &gl));
        for (size_t i = 0; i < N; i++) {
            if (i % 9 == 4) {
                assert_int_equal(ge.hit[i] + gl.hit[i], 0);
                continue;
            }
            const char *s = words[i % nw];
            size_t sl = strlen(s), xl = strlen(x), m = sl < xl ? sl : xl;
            int c = m ? memcmp(s, x, m) : 0;
            if (!c) c = (sl > xl) - (sl < xl);
            assert_int_equal(ge.hit[i], c == 0);
            assert_int_equal(gl.hit[i], c < 0);
        }
    }
    og_buf_free(&b);
    og_vector_free(&v);
    /* not indexable */
    OK(og_vector_init(&v, (og_type){OG_T_BLOB, OG_T_NULL, 0}));
    assert_int_equal(og_scalar_encode(&v, &b), OG_ERR_INVALID);
    og_vector_free(&v);
    og_buf_free(&b);
}

/* Bool keys: false 0 < true 1 (the engine's order); an entry naming a row beyond the file's
 * row count is refused at lookup. */
static void bool_keys(void **state)
{
    (void)state;
    og_vector v;
    double vals[N];
    uint8_t null[N];
    OK(og_vector_init(&v, (og_type){OG_T_BOOL, OG_T_NULL, 0}));
    for (size_t i = 0; i < N; i++) {
        null[i] = i % 4 == 0;
        vals[i] = i % 3 == 0;
        if (null[i]) OK(og_vector_append_null(&v));
        else OK(og_vector_append_bool(&v, i % 3 == 0));
    }
    og_buf b = OG_BUF_INIT;
    OK(og_scalar_encode(&v, &b));
    OK(og_scalar_check(b.data, b.len, N));
    assert_int_equal(og_scalar_file_kind(b.data), OG_SCALAR_INT);
    check_num(&b, vals, null, 1, 1, 1, 1, 1, 1, 1); /* = true */
    check_num(&b, vals, null, 1, 0, 1, 1, 0, 1, 1); /* = false */
    check_num(&b, vals, null, 0, 0, 0, 1, 1, 0, 1); /* < true */
    check_num(&b, vals, null, 0, 0, 0, 0, 0, 0, 1); /* not null */
    /* the first entry's row offset (header 48 + key 8) beyond the rows */
    b.data[48 + 8] = 0xff, b.data[48 + 9] = 0xff;
    OK(og_scalar_check(b.data, b.len, N)); /* sizes still fine */
    og_scalar_range all = {0};
    got g;
    memset(&g, 0, sizeof g);
    assert_int_equal(og_scalar_lookup(b.data, b.len, 0, &all, collect, &g), OG_ERR_CORRUPT);
    og_buf_free(&b);
    og_vector_free(&v);
}

/* ---- two builds at once ------------------------------------------------------------------- */

#define CN 20000
#define CROUNDS 25

typedef struct job {
    const og_vector *col;
    const og_buf *want; /* the single-threaded encoding */
    int bad;            /* rounds whose file differed or failed */
} job;

static void *encode_rounds(void *arg)
{
    job *j = arg;
    for (int r = 0; r < CROUNDS; r++) {
        og_buf b = OG_BUF_INIT;
        if (og_scalar_encode(j->col, &b) != OG_OK || b.len != j->want->len || memcmp(b.data, j->want->data, b.len))
            j->bad++;
        og_buf_free(&b);
    }
    return NULL;
}

typedef struct seq {
    const og_vector *col;
    size_t n;
    int ordered;
    size_t prev;
} seq;

static void in_order(void *ud, uint32_t off)
{
    seq *q = ud;
    if (q->n) {
        size_t al, bl;
        const uint8_t *a = og_vector_get_bytes(q->col, q->prev, &al), *b = og_vector_get_bytes(q->col, off, &bl);
        size_t m = al < bl ? al : bl;
        int c = m ? memcmp(a, b, m) : 0;
        if (!c) c = (al > bl) - (al < bl);
        if (c > 0 || (c == 0 && q->prev > off)) q->ordered = 0;
    }
    q->prev = off;
    q->n++;
}

/* Two string columns (different keys, so a comparator reading the other build's bytes would
 * sort wrongly or fault) encoded CROUNDS times each on two threads at once: every file equals
 * the single-threaded one, which itself lists every non-null row in (key, row) order. */
static void concurrent_builds(void **state)
{
    (void)state;
    og_vector col[2];
    og_buf want[2] = {OG_BUF_INIT, OG_BUF_INIT};
    uint64_t x = 88172645463325252ull;
    for (int c = 0; c < 2; c++) {
        OK(og_vector_init(&col[c], (og_type){OG_T_STRING, OG_T_NULL, 0}));
        for (size_t i = 0; i < CN; i++) {
            char w[24];
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int len = 1 + (int)(x % 12);
            for (int k = 0; k < len; k++) w[k] = (char)((c ? 'a' : 'A') + (x >> (8 + 2 * k)) % 20);
            if (i % 11 == 3) OK(og_vector_append_null(&col[c]));
            else OK(og_vector_append_bytes(&col[c], w, (size_t)len));
        }
        OK(og_scalar_encode(&col[c], &want[c]));
        OK(og_scalar_check(want[c].data, want[c].len, CN));
        seq q = {&col[c], 0, 1, 0};
        og_scalar_range all = {0};
        OK(og_scalar_lookup(want[c].data, want[c].len, 1, &all, in_order, &q));
        assert_int_equal(q.n, CN - (CN + 7) / 11);
        assert_true(q.ordered);
    }
    job j[2] = {{&col[0], &want[0], 0}, {&col[1], &want[1], 0}};
    pthread_t t[2];
    for (int c = 0; c < 2; c++) assert_int_equal(pthread_create(&t[c], NULL, encode_rounds, &j[c]), 0);
    for (int c = 0; c < 2; c++) assert_int_equal(pthread_join(t[c], NULL), 0);
    assert_int_equal(j[0].bad, 0);
    assert_int_equal(j[1].bad, 0);
    for (int c = 0; c < 2; c++) {
        og_buf_free(&want[c]);
        og_vector_free(&col[c]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integer_ranges),
        cmocka_unit_test(float_ranges),
        cmocka_unit_test(string_ranges),
        cmocka_unit_test(bool_keys),
        cmocka_unit_test(concurrent_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
