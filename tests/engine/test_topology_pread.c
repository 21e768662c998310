/*
 * test_topology_pread.c — a persisted topology read with pread into a scratch's read cache
 * (og_topology_read_by_pread) answers exactly like the same file read through its mapping:
 * every reach (node and depth, in order) and every node's list, on random graphs with parallel
 * edges and self-loops, warm and cold, past the cache's bound, across topologies sharing one
 * scratch, with a descriptor whose reads fail, and in a count from a few start nodes; and the
 * hook that reads the file ahead fires only once a traversal turns to the mapping.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/degree_count.h"
#include "engine/topology.h"
#include "index/csr.h"
#include "store/store.h"
#include "util/buf.h"

#define OK(x) assert_int_equal((x), OG_OK)

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* One graph persisted in a local store, opened twice: through its mapping, and by pread. */
typedef struct {
    char dir[64];
    og_store *st;
    og_csr *c_map, *c_pread;
    og_topology *mapped, *pread;
} fixture;

static void csr_release(void *hold) { og_csr_free(hold); }

static void make(fixture *f, uint32_t n, size_t n_edges, const char *name)
{
    uint32_t *src = malloc((n_edges ? n_edges : 1) * 4), *dst = malloc((n_edges ? n_edges : 1) * 4);
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < n_edges; i++) {
        src[i] = rnd(n);
        dst[i] = i % 17 == 0 ? src[i] : rnd(n); /* self-loops */
        if (i % 23 == 0 && i) src[i] = src[i - 1], dst[i] = dst[i - 1]; /* parallel edges */
    }
    og_topology *built;
    OK(og_topology_build(&built, n, n, src, dst, n_edges, NULL));
    free(src);
    free(dst);
    og_csr_arrays a = {0};
    uint32_t ns, nd;
    og_topology_arrays(built, &ns, &nd, a.off, a.nbr, a.edge);
    a.n_src = ns, a.n_dst = nd, a.n_edges = og_topology_edge_count(built), a.edge_rows = n_edges;
    og_buf b = {0};
    OK(og_csr_encode(&a, &b));
    og_topology_free(built);
    strcpy(f->dir, "/tmp/og-topo-pread-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    OK(og_store_open(&f->st, f->dir));
    OK(og_store_put(f->st, name, b.data, b.len));
    og_buf_free(&b);
    og_csr_arrays m;
    OK(og_csr_open(&f->c_map, f->st, name, &m));
    OK(og_topology_wrap(&f->mapped, (uint32_t)m.n_src, (uint32_t)m.n_dst, (size_t)m.n_edges, m.off, m.nbr, m.edge,
                        csr_release, f->c_map));
    OK(og_csr_open(&f->c_pread, f->st, name, &m));
    OK(og_topology_wrap(&f->pread, (uint32_t)m.n_src, (uint32_t)m.n_dst, (size_t)m.n_edges, m.off, m.nbr, m.edge,
                        csr_release, f->c_pread));
    og_topology_read_by_pread(f->pread, og_csr_fd(f->c_pread), og_csr_data(f->c_pread));
    assert_int_equal(og_topology_reads_by_pread(f->pread), og_csr_fd(f->c_pread) >= 0);
    assert_false(og_topology_reads_by_pread(f->mapped));
}

static void drop(fixture *f)
{
    og_topology_free(f->mapped);
    og_topology_free(f->pread);
    og_store_close(f->st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void same_reach(const og_topology *a, og_reach *ra, const og_topology *b, og_reach *rb, og_dir dir,
                       uint32_t src, uint32_t lo, uint32_t hi)
{
    OK(og_topology_reach(a, dir, src, lo, hi, ra));
    OK(og_topology_reach(b, dir, src, lo, hi, rb));
    assert_int_equal(ra->len, rb->len);
    for (size_t i = 0; i < ra->len; i++) {
        assert_int_equal(ra->node[i], rb->node[i]);
        assert_int_equal(ra->depth[i], rb->depth[i]);
    }
}

static void same_edges(const og_topology *a, og_reach *ra, const og_topology *b, og_reach *rb, og_dir dir, uint32_t v)
{
    const uint32_t *na, *ea, *nb, *eb;
    size_t ka, kb;
    OK(og_topology_edges(a, dir, v, ra, &na, &ea, &ka));
    OK(og_topology_edges(b, dir, v, rb, &nb, &eb, &kb));
    assert_int_equal(ka, kb);
    if (ka) {
        assert_memory_equal(na, nb, ka * 4);
        assert_memory_equal(ea, eb, ka * 4);
    }
}

static void pread_reach_equals_mapped_reach_on_random_graphs(void **state)
{
    (void)state;
    static const uint32_t sizes[][2] = {{1, 0}, {2, 3}, {40, 120}, {500, 2500}, {3000, 9000}};
    static const uint32_t bounds[][2] = {{1, 1}, {1, 2}, {2, 3}, {1, 4}, {3, 6}};
    for (size_t g = 0; g < sizeof sizes / sizeof sizes[0]; g++) {
        fixture f;
        make(&f, sizes[g][0], sizes[g][1], "t.csr");
        assert_true(og_topology_reads_by_pread(f.pread));
        og_reach *rm = og_topology_reach_get(f.mapped), *rp = og_topology_reach_get(f.pread);
        assert_non_null(rm);
        assert_non_null(rp);
        uint32_t n = sizes[g][0], step = n > 200 ? n / 97 : 1;
        for (int pass = 0; pass < 2; pass++) /* cold, then from the cache */
            for (uint32_t s = 0; s < n + 2; s += step)
                for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++)
                    for (int d = 0; d < 3; d++) same_reach(f.mapped, rm, f.pread, rp, (og_dir)d, s, bounds[k][0], bounds[k][1]);
        if (n > 1) assert_true(rp->rc.used > 0); /* the lists came through the cache */
        assert_int_equal(rm->rc.used, 0);
        for (int pass = 0; pass < 2; pass++)
            for (uint32_t v = 0; v < n + 2; v += step) {
                same_edges(f.mapped, rm, f.pread, rp, OG_DIR_OUT, v);
                same_edges(f.mapped, rm, f.pread, rp, OG_DIR_IN, v);
            }
        og_topology_reach_put(f.mapped, rm);
        og_topology_reach_put(f.pread, rp);
        drop(&f);
    }
}

/* A traversal whose lists pass OG_TOPOLOGY_READ_CACHE reads the rest from the mapping (same
 * answer); the next traversal empties the cache and uses it again. */
static void a_traversal_past_the_cache_bound_reads_the_mapping(void **state)
{
    (void)state;
    fixture f;
    make(&f, 200000, 1000000, "big.csr"); /* ~1M neighbours: 4 MB of lists, past the 1 MiB bound */
    og_reach *rm = og_topology_reach_get(f.mapped), *rp = og_topology_reach_get(f.pread);
    same_reach(f.mapped, rm, f.pread, rp, OG_DIR_BOTH, 7, 1, 30);
    assert_true(rm->len > 150000);
    assert_int_equal(rp->rc.full, 1);
    same_reach(f.mapped, rm, f.pread, rp, OG_DIR_OUT, 11, 1, 2);
    assert_int_equal(rp->rc.full, 0);
    assert_true(rp->rc.used > 0 && rp->rc.used < 100);
    /* a scratch that comes back full from the pool starts empty */
    same_reach(f.mapped, rm, f.pread, rp, OG_DIR_IN, 3, 1, 40);
    assert_int_equal(rp->rc.full, 1);
    og_topology_reach_put(f.pread, rp);
    rp = og_topology_reach_get(f.pread);
    assert_int_equal(rp->rc.full, 0);
    assert_int_equal(rp->rc.used, 0);
    for (uint32_t v = 0; v < 200000; v += 1999) same_edges(f.mapped, rm, f.pread, rp, OG_DIR_OUT, v);
    og_topology_reach_put(f.mapped, rm);
    og_topology_reach_put(f.pread, rp);
    drop(&f);
}

static void count_call(void *ctx) { ++*(int *)ctx; }

/* og_topology_on_bulk: the hook (the file's read-ahead, engine/tableview.c) is told nothing
 * while traversals are answered from the read cache, once when one first goes to the mapping
 * (past the cache's bound), and never again; borrowing the arrays for their sizes does not
 * count, og_topology_bulk_read does. */
static void the_bulk_hook_fires_once_a_traversal_turns_to_the_mapping(void **state)
{
    (void)state;
    fixture f;
    make(&f, 200000, 1000000, "big.csr");
    int calls = 0;
    og_topology_on_bulk(f.pread, count_call, &calls);
    og_reach *rp = og_topology_reach_get(f.pread);
    OK(og_topology_reach(f.pread, OG_DIR_OUT, 11, 1, 2, rp));
    for (uint32_t v = 0; v < 200; v += 7) {
        const uint32_t *n, *e;
        size_t k;
        OK(og_topology_edges(f.pread, OG_DIR_IN, v, rp, &n, &e, &k));
    }
    assert_int_equal(calls, 0);
    OK(og_topology_reach(f.pread, OG_DIR_BOTH, 7, 1, 30, rp)); /* past the 1 MiB cache */
    assert_int_equal(rp->rc.full, 1);
    assert_int_equal(calls, 1);
    OK(og_topology_reach(f.pread, OG_DIR_IN, 3, 1, 40, rp));
    og_csr_arrays a = {0};
    uint32_t ns, nd;
    og_topology_arrays(f.pread, &ns, &nd, a.off, a.nbr, a.edge);
    og_topology_bulk_read(f.pread);
    assert_int_equal(calls, 1);
    og_topology_reach_put(f.pread, rp);
    /* borrowing the arrays for their sizes is not a bulk read; saying so is */
    int mapped_calls = 0;
    og_topology_on_bulk(f.mapped, count_call, &mapped_calls);
    og_topology_arrays(f.mapped, &ns, &nd, a.off, a.nbr, a.edge);
    assert_int_equal(mapped_calls, 0);
    og_topology_bulk_read(f.mapped);
    og_topology_bulk_read(f.mapped);
    assert_int_equal(mapped_calls, 1);
    drop(&f);
}

/* One scratch used with two topologies in turn never answers one from the other's lists. */
static void a_scratch_never_mixes_two_topologies(void **state)
{
    (void)state;
    fixture a, b;
    make(&a, 300, 1200, "a.csr");
    make(&b, 300, 1200, "b.csr"); /* same sizes, other edges */
    og_reach ra, rp;
    og_reach_init(&ra);
    og_reach_init(&rp);
    rp.rc_on = 1; /* as og_topology_reach_get gives it */
    for (int round = 0; round < 3; round++)
        for (uint32_t s = 0; s < 300; s += 7) {
            same_reach(a.mapped, &ra, a.pread, &rp, OG_DIR_OUT, s, 1, 3);
            same_reach(b.mapped, &ra, b.pread, &rp, OG_DIR_OUT, s, 1, 3);
            same_edges(a.mapped, &ra, a.pread, &rp, OG_DIR_IN, s);
            same_edges(b.mapped, &ra, b.pread, &rp, OG_DIR_IN, s);
        }
    og_reach_free(&ra);
    og_reach_free(&rp);
    drop(&a);
    drop(&b);
}

/* A descriptor whose reads fail (here: an empty file) leaves the mapping to answer. */
static void failed_reads_fall_back_to_the_mapping(void **state)
{
    (void)state;
    fixture f;
    make(&f, 400, 2000, "t.csr");
    int null_fd = open("/dev/null", O_RDONLY);
    assert_true(null_fd >= 0);
    og_topology_read_by_pread(f.pread, null_fd, og_csr_data(f.c_pread));
    og_reach *rm = og_topology_reach_get(f.mapped), *rp = og_topology_reach_get(f.pread);
    for (uint32_t s = 0; s < 400; s += 3) same_reach(f.mapped, rm, f.pread, rp, OG_DIR_BOTH, s, 1, 3);
    for (uint32_t v = 0; v < 400; v += 3) same_edges(f.mapped, rm, f.pread, rp, OG_DIR_OUT, v);
    assert_int_equal(rp->rc.used, 0);
    og_topology_reach_put(f.mapped, rm);
    og_topology_reach_put(f.pread, rp);
    og_topology_read_by_pread(f.pread, og_csr_fd(f.c_pread), og_csr_data(f.c_pread));
    drop(&f);
    close(null_fd);
}

/* The count of trailing hops from a few start nodes reads a pread topology's lists through
 * og_topology_edges; from many rows its arrays in place.  The same weights either way. */
static void degree_counts_are_equal_through_the_cache(void **state)
{
    (void)state;
    fixture f;
    make(&f, 2000, 10000, "t.csr");
    enum { R = 2000 };
    static uint32_t rows[R];
    static uint64_t wm[R], wp[R];
    uint32_t *cols[1] = {rows};
    for (uint32_t i = 0; i < R; i++) rows[i] = i % 5 == 0 ? UINT32_MAX : (i * 37) % 2000;
    og_dir dirs[3] = {OG_DIR_OUT, OG_DIR_IN, OG_DIR_OUT};
    for (size_t hops = 1; hops <= 3; hops++)
        for (size_t nrows = 1; nrows <= R; nrows *= 10) {
            og_bindings b = {1, nrows, nrows, cols};
            const og_topology *tm[3] = {f.mapped, f.mapped, f.mapped}, *tp[3] = {f.pread, f.pread, f.pread};
            OK(og_degree_weights(&b, 0, tm, dirs, hops, wm));
            OK(og_degree_weights(&b, 0, tp, dirs, hops, wp));
            assert_memory_equal(wm, wp, nrows * sizeof *wm);
        }
    drop(&f);
}

static void the_local_store_opens_a_descriptor(void **state)
{
    (void)state;
    char dir[] = "/tmp/og-open-fd-XXXXXX";
    assert_non_null(mkdtemp(dir));
    og_store *st;
    OK(og_store_open(&st, dir));
    OK(og_store_put(st, "a/b.bin", "hello", 5));
    int fd;
    uint64_t size;
    OK(og_store_open_fd(st, "a/b.bin", &fd, &size));
    assert_int_equal(size, 5);
    char got[8] = {0};
    assert_int_equal(pread(fd, got, 5, 0), 5);
    assert_string_equal(got, "hello");
    int before = og_store_open_fds();
    og_store_close_fd(fd);
    assert_int_equal(og_store_open_fds(), before - 1);
    assert_int_equal(og_store_open_fd(st, "a/missing.bin", &fd, &size), OG_ERR_NOT_FOUND);
    assert_int_equal(fd, -1);
    assert_int_equal(og_store_open_fds(), before - 1);
    assert_int_equal(og_store_open_fd(st, "../escape", &fd, &size), OG_ERR_INVALID);
    /* the process-wide bound: past it, OG_ERR_LIMIT and no descriptor; a topology opened then
     * reads its mapping (same answers), and closing gives the room back */
    static int fds[OG_STORE_READ_FDS_MAX + 1];
    int n = 0;
    og_status last = OG_OK;
    while (n <= OG_STORE_READ_FDS_MAX && (last = og_store_open_fd(st, "a/b.bin", &fds[n], &size)) == OG_OK) n++;
    assert_int_equal(last, OG_ERR_LIMIT);
    assert_true(n > 0 && n <= OG_STORE_READ_FDS_MAX);
    assert_int_equal(fds[n], -1);
    fixture f;
    make(&f, 300, 1500, "t.csr");
    assert_int_equal(og_csr_fd(f.c_pread), -1);
    og_reach *rm = og_topology_reach_get(f.mapped), *rp = og_topology_reach_get(f.pread);
    for (uint32_t s0 = 0; s0 < 300; s0 += 7) same_reach(f.mapped, rm, f.pread, rp, OG_DIR_OUT, s0, 1, 3);
    og_topology_reach_put(f.mapped, rm);
    og_topology_reach_put(f.pread, rp);
    drop(&f);
    for (int i = 0; i < n; i++) og_store_close_fd(fds[i]);
    OK(og_store_open_fd(st, "a/b.bin", &fd, &size));
    og_store_close_fd(fd);
    og_store_close(st);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pread_reach_equals_mapped_reach_on_random_graphs),
        cmocka_unit_test(a_traversal_past_the_cache_bound_reads_the_mapping),
        cmocka_unit_test(the_bulk_hook_fires_once_a_traversal_turns_to_the_mapping),
        cmocka_unit_test(a_scratch_never_mixes_two_topologies),
        cmocka_unit_test(failed_reads_fall_back_to_the_mapping),
        cmocka_unit_test(degree_counts_are_equal_through_the_cache),
        cmocka_unit_test(the_local_store_opens_a_descriptor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
