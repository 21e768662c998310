/*
 * test_ann.c — the per-data-file vector index (index/ann.h over vec/hnsw.h): labels are the
 * physical offsets of non-null rows, recall@10 on clustered data is at least 0.95 at the
 * default beam, the file round-trips through a store, and truncated, flipped or foreign
 * bytes are OG_ERR_CORRUPT before they reach hnswlib; an hnswlib payload that passes the
 * envelope's checksum but is damaged inside (neighbour ids, counts, levels, sizes, vectors) is
 * refused by og_hnsw_load (vec/hnsw.h) instead of crashing a later search.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "index/ann.h"
#include "util/error.h"
#include "vec/hnsw.h"
#include "vec/distance.h"

#define OK(expr)                                                                                   \
    do {                                                                                           \
        og_status ok_st_ = (expr);                                                                 \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message());   \
    } while (0)

#define DIM 16

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static float nrand(void) { return (float)((urand() + urand() + urand() + urand() - 2.0) * 1.7); }

/* n rows in 20 clusters; every 7th row null. */
static void clustered(og_vector *v, size_t n, float *copy)
{
    float cent[20][DIM];
    for (int c = 0; c < 20; c++)
        for (int d = 0; d < DIM; d++) cent[c][d] = nrand() * 3;
    OK(og_vector_init(v, (og_type){OG_T_VECTOR, OG_T_NULL, DIM}));
    for (size_t i = 0; i < n; i++) {
        float x[DIM];
        int c = (int)(urand() * 20);
        for (int d = 0; d < DIM; d++) x[d] = cent[c][d] + nrand();
        memcpy(copy + i * DIM, x, sizeof x);
        if (i % 7 == 3) OK(og_vector_append_null(v));
        else OK(og_vector_append_floats(v, x, DIM));
    }
}

static void recall_and_labels(void **state)
{
    (void)state;
    size_t n = 3000;
    float *raw = malloc(n * DIM * sizeof *raw);
    og_vector v;
    clustered(&v, n, raw);
    og_buf b = OG_BUF_INIT;
    OK(og_ann_encode(&v, &b));
    og_ann *a;
    OK(og_ann_open_bytes(&a, b.data, b.len));
    assert_int_equal(og_ann_rows(a), n);
    assert_int_equal(og_ann_count(a), n - (n + 3) / 7);
    assert_int_equal(og_ann_dim(a), DIM);
    size_t hit = 0, total = 0;
    for (int qi = 0; qi < 50; qi++) {
        float q[DIM];
        size_t base = (size_t)(urand() * n);
        for (int d = 0; d < DIM; d++) q[d] = raw[base * DIM + d] + nrand() * 0.5f;
        /* exact top 10 of the non-null rows */
        uint32_t best[10];
        float bd[10];
        size_t nb = 0;
        for (size_t i = 0; i < n; i++) {
            if (i % 7 == 3) continue;
            float d = og_vec_l2sq(q, raw + i * DIM, DIM);
            size_t j = nb < 10 ? nb++ : 10;
            if (j == 10 && d >= bd[9]) continue;
            if (j == 10) j = 9;
            while (j > 0 && bd[j - 1] > d) {
                bd[j] = bd[j - 1];
                best[j] = best[j - 1];
                j--;
            }
            bd[j] = d;
            best[j] = (uint32_t)i;
        }
        uint32_t offs[10];
        float ds[10];
        size_t got;
        OK(og_ann_search(a, q, 10, 0, offs, ds, &got));
        assert_int_equal(got, 10);
        for (size_t k = 0; k < got; k++) {
            assert_true(offs[k] % 7 != 3);  /* never a null row */
            assert_float_equal(ds[k], og_vec_l2sq(q, raw + (size_t)offs[k] * DIM, DIM), 1e-3);
            if (k) assert_true(ds[k - 1] <= ds[k]);
            for (size_t j = 0; j < 10; j++) hit += offs[k] == best[j];
        }
        total += 10;
    }
    double recall = (double)hit / (double)total;
    if (recall < 0.95) fail_msg("recall@10 %.3f < 0.95", recall);
    /* k above the count: every indexed row */
    uint32_t *all = malloc(n * sizeof *all);
    float *ad = malloc(n * sizeof *ad);
    size_t got;
    OK(og_ann_search(a, raw, n, 0, all, ad, &got));
    assert_true(got <= og_ann_count(a));
    free(all);
    free(ad);
    og_ann_free(a);
    og_buf_free(&b);
    og_vector_free(&v);
    free(raw);
}

static void damaged_files_are_corrupt(void **state)
{
    (void)state;
    float raw[200 * DIM];
    og_vector v;
    clustered(&v, 200, raw);
    og_buf b = OG_BUF_INIT;
    OK(og_ann_encode(&v, &b));
    og_ann *a = NULL;
    /* truncated */
    assert_int_equal(og_ann_open_bytes(&a, b.data, b.len - 1), OG_ERR_CORRUPT);
    assert_int_equal(og_ann_open_bytes(&a, b.data, 10), OG_ERR_CORRUPT);
    /* one payload byte flipped */
    b.data[100] ^= 0x40;
    assert_int_equal(og_ann_open_bytes(&a, b.data, b.len), OG_ERR_CORRUPT);
    b.data[100] ^= 0x40;
    /* the header's count changed */
    b.data[24] ^= 1;
    assert_int_equal(og_ann_open_bytes(&a, b.data, b.len), OG_ERR_CORRUPT);
    b.data[24] ^= 1;
    /* foreign */
    assert_int_equal(og_ann_open_bytes(&a, (const uint8_t *)"OGKEYMAP-and-some-more-bytes-that-are-not-an-index-at-all-xxxxxxxxxxxxxx", 74),
                     OG_ERR_CORRUPT);
    assert_null(a);
    OK(og_ann_open_bytes(&a, b.data, b.len));
    og_ann_free(a);
    og_buf_free(&b);
    og_vector_free(&v);
    /* not a vector column */
    og_vector s;
    OK(og_vector_init(&s, (og_type){OG_T_STRING, OG_T_NULL, 0}));
    assert_int_equal(og_ann_encode(&s, &b), OG_ERR_INVALID);
    og_vector_free(&s);
    og_buf_free(&b);
}

/* hnswlib's serialisation, as vec/hnsw.cpp's validation reads it: a 96-byte header
 * (offsets 0..95: level-0 offset, max elements, count, bytes per element, label offset,
 * data offset, max level (i32), entry point (u32), maxM, maxM0, M, mult, efConstruction),
 * then count elements of (u32 list head, 2M neighbour ids, vector, u64 label), then the
 * upper-level lists. */
static void load_expect(const uint8_t *p, size_t len, int want)
{
    og_hnsw *h = NULL;
    int rc = og_hnsw_load(&h, 4, p, len);
    assert_int_equal(rc, want);
    if (rc == OG_HNSW_OK) {
        float q[4] = {0.5f, 0.5f, 0.5f, 0.5f};
        uint64_t l[10];
        float d[10];
        size_t n;
        assert_int_equal(og_hnsw_search(h, q, 10, 32, l, d, &n), OG_HNSW_OK);
        og_hnsw_free(h);
    } else {
        assert_null(h);
    }
}

static void damaged_graphs_are_refused(void **state)
{
    (void)state;
    enum { N = 300 };
    static float pts[N * 4];
    for (size_t i = 0; i < N * 4; i++) pts[i] = (float)urand();
    og_hnsw *h;
    assert_int_equal(og_hnsw_build(&h, 4, pts, NULL, N, 16, 100, 1), OG_HNSW_OK);
    uint8_t *p;
    size_t len;
    assert_int_equal(og_hnsw_save(h, &p, &len), OG_HNSW_OK);
    og_hnsw_free(h);
    load_expect(p, len, OG_HNSW_OK);
    const size_t sdpe = 4 + 32 * 4 + 16 + 8, data0 = 96;
    uint64_t v;
    memcpy(&v, p + 24, 8);
    assert_int_equal(v, sdpe); /* the layout this test assumes */
    uint8_t *c = malloc(len);
    assert_non_null(c);
#define DAMAGE(stmt)                                                                                   do {                                                                                                   memcpy(c, p, len);                                                                                 stmt;                                                                                              load_expect(c, len, OG_HNSW_INVALID);                                                          } while (0)
    uint32_t big = N + 7, cnt = 200;
    uint64_t huge = (uint64_t)1 << 40;
    DAMAGE(memcpy(c + data0 + 4, &big, 4));                        /* a level-0 neighbour that does not exist */
    DAMAGE(memcpy(c + data0 + 5 * sdpe, &cnt, 4));                 /* a list longer than 2M */
    DAMAGE(c[data0 + 2] = 1);                                       /* a deletion mark */
    DAMAGE(memcpy(c + 16, &huge, 8));                              /* count beyond the payload */
    DAMAGE(memcpy(c + 8, &huge, 8));                               /* capacity: a huge allocation */
    DAMAGE(memcpy(c + 72, &huge, 8));                              /* M */
    DAMAGE(memcpy(c + 52, &big, 4));                               /* entry point */
    DAMAGE(c[48] = 40);                                            /* max level above every point's */
    DAMAGE(memcpy(c + data0 + 3 * sdpe + 4 + 128, &(float){NAN}, 4)); /* a non-finite vector */
    DAMAGE(memcpy(c + 16, &(uint64_t){N - 1}, 8));                 /* sizes no longer add up */
    free(c);
    load_expect(p, len - 1, OG_HNSW_INVALID);                      /* truncated */
    load_expect(p, 50, OG_HNSW_INVALID);
    /* an upper-level neighbour at a level it does not reach / beyond the points */
    size_t at = data0 + N * sdpe;
    int hit = 0;
    for (size_t i = 0; i < N && at + 4 <= len; i++) {
        uint32_t size;
        memcpy(&size, p + at, 4);
        if (size && !hit) {
            uint32_t cnt1;
            memcpy(&cnt1, p + at + 4, 4);
            if (cnt1) {
                c = malloc(len);
                assert_non_null(c);
                DAMAGE(memcpy(c + at + 8, &big, 4));
                free(c);
                hit = 1;
            }
        }
        at += 4 + size;
    }
    assert_true(hit);
#undef DAMAGE
    free(p);
    /* an empty index loads and answers nothing */
    assert_int_equal(og_hnsw_build(&h, 4, pts, NULL, 0, 16, 100, 1), OG_HNSW_OK);
    assert_int_equal(og_hnsw_save(h, &p, &len), OG_HNSW_OK);
    og_hnsw_free(h);
    load_expect(p, len, OG_HNSW_OK);
    assert_int_equal(og_hnsw_load(&h, 4, p, len), OG_HNSW_OK);
    assert_int_equal(og_hnsw_count(h), 0);
    og_hnsw_free(h);
    free(p);
}

static void round_trips_through_a_store(void **state)
{
    (void)state;
    char dir[] = "/tmp/og-test-ann-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char uri[128];
    snprintf(uri, sizeof uri, "file://%s", dir);
    og_store *st;
    OK(og_store_open(&st, uri));
    float raw[300 * DIM];
    og_vector v;
    clustered(&v, 300, raw);
    og_buf b = OG_BUF_INIT;
    OK(og_ann_encode(&v, &b));
    OK(og_store_put_if_absent(st, "_index/t/f/vector-3.hnsw.v1", b.data, b.len));
    assert_int_equal(og_store_put_if_absent(st, "_index/t/f/vector-3.hnsw.v1", b.data, b.len), OG_ERR_ALREADY_EXISTS);
    og_ann *a;
    OK(og_ann_open(&a, st, "_index/t/f/vector-3.hnsw.v1"));
    uint32_t off;
    float d;
    size_t got;
    OK(og_ann_search(a, raw + 5 * DIM, 1, 0, &off, &d, &got));
    assert_int_equal(got, 1);
    assert_int_equal(off, 5);
    og_ann_free(a);
    assert_int_equal(og_ann_open(&a, st, "_index/t/f/missing"), OG_ERR_NOT_FOUND);
    og_store_close(st);
    og_buf_free(&b);
    og_vector_free(&v);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recall_and_labels),
        cmocka_unit_test(damaged_files_are_corrupt),
        cmocka_unit_test(damaged_graphs_are_refused),
        cmocka_unit_test(round_trips_through_a_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
