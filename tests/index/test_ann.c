/*
 * test_ann.c — the per-data-file vector index (index/ann.h over vec/hnsw.h): labels are the
 * physical offsets of non-null rows, recall@10 on clustered data is at least 0.95 at the
 * default beam, the file round-trips through a store, and truncated, flipped or foreign
 * bytes are OG_ERR_CORRUPT before they reach hnswlib; an hnswlib payload that passes the
 * envelope's checksum but is damaged inside (neighbour ids, counts, levels, sizes, vectors) is
 * refused by og_hnsw_load (vec/hnsw.h) instead of crashing a later search.
 * The in-place reader (ann.c) answers exactly what hnswlib answers on the same graph; damage
 * its open cannot see (neighbour ids, vectors) makes a search OG_ERR_CORRUPT — and the index
 * refused from then on — or is caught by og_ann_check's checksum; searches and the cache run
 * from several threads at once.  Format 2's table of upper levels (read in place at open,
 * instead of walking the graph's level table) equals the walk (og_ann_check), a damaged entry
 * is refused where it is read, and a format-1 file (no table) still answers the same.
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
#include <unistd.h>
#include <cmocka.h>

#include "index/ann.h"
#include "store/store_impl.h"
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

/* n clustered vectors (their floats in *raw, the column in *v) encoded into *b and opened. */
static og_ann *built(size_t n, float **raw, og_vector *v, og_buf *b)
{
    *raw = malloc(n * DIM * sizeof **raw);
    assert_non_null(*raw);
    clustered(v, n, *raw);
    *b = (og_buf)OG_BUF_INIT;
    OK(og_ann_encode(v, b));
    og_ann *a;
    OK(og_ann_open_bytes(&a, b->data, b->len));
    return a;
}

static void recall_and_labels(void **state)
{
    (void)state;
    size_t n = 3000;
    float *raw;
    og_vector v;
    og_buf b;
    og_ann *a = built(n, &raw, &v, &b);
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
    static const char foreign[] = "OGKEYMAP-and-some-more-bytes-that-are-not-an-index-at-all-xxxxxxxxxxxxxx";
    assert_int_equal(og_ann_open_bytes(&a, (const uint8_t *)foreign, sizeof foreign - 1), OG_ERR_CORRUPT);
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

/* Where level 0 of the hnswlib payload starts in an encoded file, and its entry size. */
#define FILE_HEADER 64
#define GRAPH_HEADER 96
#define ENTRY (4 * (2 * 16 + 1) + 4 * DIM + 8) /* M = 16: list, vector, label */
/* The graph's bytes (format 2: the payload is the graph, then the table of upper levels). */
static size_t graph_len(const og_buf *b) { return (size_t)og_load_u64le(b->data + 56); }

static void same_answers_as_hnswlib(void **state)
{
    (void)state;
    size_t n = 3000;
    float *raw;
    og_vector v;
    og_buf b;
    og_ann *a = built(n, &raw, &v, &b);
    og_hnsw *h;
    assert_int_equal(og_hnsw_load(&h, DIM, b.data + FILE_HEADER, graph_len(&b)), OG_HNSW_OK);
    size_t same = 0, total = 0;
    for (int qi = 0; qi < 60; qi++) {
        float q[DIM];
        size_t base = (size_t)(urand() * n);
        for (int d = 0; d < DIM; d++) q[d] = raw[base * DIM + d] + nrand() * 0.5f;
        size_t ef = qi % 3 == 0 ? 0 : qi % 3 == 1 ? 16 : 100, k = qi % 2 ? 10 : 25;
        uint32_t offs[25];
        float ds[25], hd[25];
        uint64_t hl[25];
        size_t got, hgot;
        OK(og_ann_search(a, q, k, ef, offs, ds, &got));
        assert_int_equal(og_hnsw_search(h, q, k, ef ? ef : OG_ANN_DEFAULT_EF, hl, hd, &hgot), OG_HNSW_OK);
        assert_int_equal(got, hgot);
        int eq = 1;
        for (size_t i = 0; i < got; i++) eq &= offs[i] == hl[i] && ds[i] == hd[i];
        same += (size_t)eq;
        total++;
    }
    /* the same algorithm on the same graph: only exact distance ties could order differently */
    if (same + 1 < total) fail_msg("%zu of %zu searches differ from hnswlib's", total - same, total);
    og_hnsw_free(h);
    og_ann_free(a);
    og_buf_free(&b);
    og_vector_free(&v);
    free(raw);
}

static void damage_inside_the_graph(void **state)
{
    (void)state;
    size_t n = 2000;
    float *raw = malloc(n * DIM * sizeof *raw);
    og_vector v;
    clustered(&v, n, raw);
    og_buf b = OG_BUF_INIT;
    OK(og_ann_encode(&v, &b));
    size_t count = n - (n + 3) / 7;
    uint8_t *level0 = b.data + FILE_HEADER + GRAPH_HEADER;
    og_ann *a;
    uint32_t offs[10];
    float ds[10];
    size_t got;
    /* a vector byte: the structure is intact, so it opens and searches; the checksum sees it */
    level0[5 * ENTRY + 4 * (2 * 16 + 1) + 2] ^= 0x10;
    OK(og_ann_open_bytes(&a, b.data, b.len));
    OK(og_ann_search(a, raw, 10, 0, offs, ds, &got));
    assert_int_equal(got, 10);
    og_ann_free(a);
    assert_int_equal(og_ann_check(b.data, b.len, n), OG_ERR_CORRUPT);
    level0[5 * ENTRY + 4 * (2 * 16 + 1) + 2] ^= 0x10;
    OK(og_ann_check(b.data, b.len, n));
    /* the level table: a size that is not a whole number of lists.  Opening reads the table of
     * upper levels, not this walk, so og_ann_check finds it */
    uint8_t *levels = level0 + count * ENTRY;
    uint32_t keep;
    memcpy(&keep, levels, 4);
    uint32_t bad = 7;
    memcpy(levels, &bad, 4);
    assert_int_equal(og_ann_check(b.data, b.len, n), OG_ERR_CORRUPT);
    memcpy(levels, &keep, 4);
    /* every level-0 list names a point that does not exist: the search says so, and the index
     * is refused from then on */
    for (size_t i = 0; i < count; i++) {
        uint32_t head, nb = 0x7fffffffu;
        memcpy(&head, level0 + i * ENTRY, 4);
        if (head & 0xffff) memcpy(level0 + i * ENTRY + 4, &nb, 4);
    }
    OK(og_ann_open_bytes(&a, b.data, b.len));
    assert_int_equal(og_ann_search(a, raw, 10, 0, offs, ds, &got), OG_ERR_CORRUPT);
    assert_int_equal(got, 0);
    assert_int_equal(og_ann_search(a, raw + DIM, 10, 0, offs, ds, &got), OG_ERR_CORRUPT);
    og_ann_free(a);
    /* a list count beyond its bound */
    og_buf_free(&b);
    OK(og_ann_encode(&v, &b));
    level0 = b.data + FILE_HEADER + GRAPH_HEADER;
    for (size_t i = 0; i < count; i++) {
        uint32_t head = 33; /* maxM0 = 32 */
        memcpy(level0 + i * ENTRY, &head, 4);
    }
    OK(og_ann_open_bytes(&a, b.data, b.len));
    assert_int_equal(og_ann_search(a, raw, 10, 0, offs, ds, &got), OG_ERR_CORRUPT);
    og_ann_free(a);
    og_buf_free(&b);
    og_vector_free(&v);
    free(raw);
}

/* Format 2's table of upper levels (u32 id, u32 level, u64 offset; after the graph): it is the
 * graph's own (og_ann_check walks the level table and compares), an entry that points outside
 * the level table or at lists of another size is refused where it is read (the entry point's
 * at open, the others when a search descends through them), and a format-1 file — the same
 * graph without the table — opens by walking and gives the same answers. */
static void table_of_upper_levels(void **state)
{
    (void)state;
    size_t n = 3000;
    float *raw;
    og_vector v;
    og_buf b;
    og_ann *a = built(n, &raw, &v, &b);
    assert_int_equal(og_load_u32le(b.data + 8), 2);
    size_t glen = graph_len(&b), plen = (size_t)og_load_u64le(b.data + 40), count = n - (n + 3) / 7;
    assert_true(glen < plen && (plen - glen) % 16 == 0);
    size_t nup = (plen - glen) / 16;
    assert_true(nup > 0 && nup < count / 4); /* about 1 in M points has upper levels */
    OK(og_ann_check(b.data, b.len, n));
    uint8_t *tab = b.data + FILE_HEADER + glen;
    /* ids ascending, offsets inside the graph after level 0 */
    for (size_t i = 0; i < nup; i++) {
        if (i) assert_true(og_load_u32le(tab + i * 16) > og_load_u32le(tab + (i - 1) * 16));
        assert_true(og_load_u32le(tab + i * 16 + 4) >= 1);
        assert_true(og_load_u64le(tab + i * 16 + 8) > GRAPH_HEADER + count * ENTRY);
        assert_true(og_load_u64le(tab + i * 16 + 8) < glen);
    }
    /* the answers of the format-1 twin: drop the table, format 1, payload = graph, field 0 */
    og_buf one = OG_BUF_INIT;
    OK(og_buf_append(&one, b.data, FILE_HEADER + glen));
    OK(og_buf_append(&one, b.data + b.len - 8, 8));
    uint32_t f1 = 1;
    uint64_t g64 = glen, zero = 0;
    memcpy(one.data + 8, &f1, 4);
    memcpy(one.data + 40, &g64, 8);
    memcpy(one.data + 56, &zero, 8);
    og_ann *a1;
    OK(og_ann_open_bytes(&a1, one.data, one.len));
    for (int qi = 0; qi < 30; qi++) {
        float q[DIM];
        for (int d = 0; d < DIM; d++) q[d] = raw[(size_t)qi * 61 * DIM + d] + nrand() * 0.5f;
        uint32_t o2[10], o1[10];
        float d2[10], d1[10];
        size_t g2, g1;
        OK(og_ann_search(a, q, 10, 0, o2, d2, &g2));
        OK(og_ann_search(a1, q, 10, 0, o1, d1, &g1));
        assert_int_equal(g2, 10);
        assert_int_equal(g1, g2);
        assert_memory_equal(o1, o2, sizeof o1);
    }
    og_ann_free(a1);
    og_buf_free(&one);
    og_ann_free(a);
    /* the entry point's entry (the last id at the top level) damaged: refused at open */
    uint32_t top = 0;
    for (size_t i = 0; i < nup; i++)
        if (og_load_u32le(tab + i * 16 + 4) > top) top = og_load_u32le(tab + i * 16 + 4);
    size_t ep = nup;
    uint32_t ep_id = og_load_u32le(b.data + FILE_HEADER + 52);
    for (size_t i = 0; i < nup; i++)
        if (og_load_u32le(tab + i * 16) == ep_id) ep = i;
    assert_true(ep < nup);
    assert_int_equal(og_load_u32le(tab + ep * 16 + 4), top);
    uint8_t keep[16];
    memcpy(keep, tab + ep * 16, 16);
    uint64_t far = glen + 4;
    memcpy(tab + ep * 16 + 8, &far, 8); /* past the graph */
    assert_int_equal(og_ann_open_bytes(&a, b.data, b.len), OG_ERR_CORRUPT);
    assert_null(a);
    uint64_t early = GRAPH_HEADER; /* inside level 0, not the level table */
    memcpy(tab + ep * 16 + 8, &early, 8);
    assert_int_equal(og_ann_open_bytes(&a, b.data, b.len), OG_ERR_CORRUPT);
    uint32_t lower = top - 1 ? top - 1 : 2; /* a level its lists' size does not have */
    memcpy(tab + ep * 16 + 4, &lower, 4);
    memcpy(tab + ep * 16 + 8, keep + 8, 8);
    assert_int_equal(og_ann_open_bytes(&a, b.data, b.len), OG_ERR_CORRUPT);
    assert_int_equal(og_ann_check(b.data, b.len, n), OG_ERR_CORRUPT); /* (its checksum, first) */
    memcpy(tab + ep * 16, keep, 16);
    /* every other entry points at the entry point's lists: opens (the entry point is right),
     * and a search descending through any of them is refused, from then on */
    for (size_t i = 0; i < nup; i++)
        if (i != ep) memcpy(tab + i * 16 + 8, keep + 8, 8);
    OK(og_ann_open_bytes(&a, b.data, b.len));
    int refused = 0;
    for (int qi = 0; qi < 30 && !refused; qi++) {
        uint32_t o[10];
        float d[10];
        size_t g;
        og_status st = og_ann_search(a, raw + (size_t)qi * 97 * DIM, 10, 0, o, d, &g);
        assert_true(st == OG_OK || st == OG_ERR_CORRUPT);
        refused = st == OG_ERR_CORRUPT;
    }
    assert_true(refused);
    og_ann_free(a);
    assert_int_equal(og_ann_check(b.data, b.len, n), OG_ERR_CORRUPT);
    og_buf_free(&b);
    og_vector_free(&v);
    free(raw);
}

/* Several threads search one index at once, and acquire / release it through the cache while
 * another thread empties the cache: every answer equals the single-threaded one. */
typedef struct {
    const og_buf *file;
    const float *qs;
    const uint32_t *want;
    int clear;
    int errors;
} worker;

#define TQ 20

static void *search_worker(void *arg)
{
    worker *w = arg;
    for (int round = 0; round < 15; round++) {
        og_bytes copy = {malloc(w->file->len), w->file->len};
        if (!copy.data) {
            w->errors++;
            return NULL;
        }
        memcpy(copy.data, w->file->data, w->file->len);
        og_mapping *m = NULL;
        if (og_mapping_from_bytes(&copy, &m) != OG_OK) {
            free(copy.data);
            w->errors++;
            return NULL;
        }
        og_ann *a = NULL;
        if (og_ann_acquire(&a, &m) != OG_OK) w->errors++;
        for (int j = 0; a && j < TQ; j++) {
            uint32_t offs[10];
            float ds[10];
            size_t got;
            if (og_ann_search(a, w->qs + (size_t)j * DIM, 10, 0, offs, ds, &got) != OG_OK || got != 10 ||
                memcmp(offs, w->want + (size_t)j * 10, sizeof offs) != 0)
                w->errors++;
        }
        og_ann_release(a);
        og_mapping_release(m); /* NULL when the index took it over */
        if (w->clear) og_ann_cache_clear();
    }
    return NULL;
}

static void concurrent_searches(void **state)
{
    (void)state;
    size_t n = 2000;
    float *raw;
    og_vector v;
    og_buf b;
    og_ann *a = built(n, &raw, &v, &b);
    float qs[TQ * DIM];
    uint32_t want[TQ * 10];
    for (int j = 0; j < TQ; j++) {
        for (int d = 0; d < DIM; d++) qs[j * DIM + d] = raw[(size_t)j * 37 * DIM + d] + nrand() * 0.3f;
        float ds[10];
        size_t got;
        OK(og_ann_search(a, qs + j * DIM, 10, 0, want + j * 10, ds, &got));
        assert_int_equal(got, 10);
    }
    og_ann_free(a);
    pthread_t th[4];
    worker w[4];
    for (int t = 0; t < 4; t++) {
        w[t] = (worker){&b, qs, want, t == 3, 0};
        assert_int_equal(pthread_create(&th[t], NULL, search_worker, &w[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(w[t].errors, 0);
    }
    og_ann_cache_clear();
    og_buf_free(&b);
    og_vector_free(&v);
    free(raw);
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
        cmocka_unit_test(same_answers_as_hnswlib),
        cmocka_unit_test(damage_inside_the_graph),
        cmocka_unit_test(table_of_upper_levels),
        cmocka_unit_test(concurrent_searches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
