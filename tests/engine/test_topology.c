/*
 * test_topology.c — CSR/CSC build and the reference's multi-hop BFS rule: shortest depth,
 * visited once, source re-emitted only by a direct self-loop, undirected dedup, deleted edges
 * and missing endpoints skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/degree_count.h"
#include "engine/topology.h"
#include "index/csr.h"
#include "../store/store_fixture.h"

/* Collects reach results as a sorted string of node letters ("BCD"). */
static const char *reach_str(const og_topology *t, og_dir dir, uint32_t src, uint32_t lo, uint32_t hi)
{
    static char out[64];
    og_reach r;
    og_reach_init(&r);
    assert_int_equal(og_topology_reach(t, dir, src, lo, hi, &r), OG_OK);
    char tmp[64];
    size_t n = 0;
    for (size_t i = 0; i < r.len; i++) tmp[n++] = (char)('A' + r.node[i]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (tmp[j] < tmp[i]) {
                char c = tmp[i];
                tmp[i] = tmp[j];
                tmp[j] = c;
            }
    tmp[n] = '\0';
    og_reach_free(&r);
    strcpy(out, tmp);
    return out;
}

static void chain_hop_bounds_follow_shortest_depth(void **state)
{
    (void)state;
    /* A->B->C->D */
    uint32_t src[] = {0, 1, 2}, dst[] = {1, 2, 3};
    og_topology *t;
    assert_int_equal(og_topology_build(&t, 4, 4, src, dst, 3, NULL), OG_OK);
    assert_string_equal(reach_str(t, OG_DIR_OUT, 0, 1, 3), "BCD");
    assert_string_equal(reach_str(t, OG_DIR_OUT, 0, 2, 3), "CD");
    assert_string_equal(reach_str(t, OG_DIR_OUT, 0, 2, 2), "C");
    assert_string_equal(reach_str(t, OG_DIR_IN, 3, 1, 2), "BC");
    assert_string_equal(reach_str(t, OG_DIR_OUT, 3, 1, 3), "");
    og_topology_free(t);
}

static void a_node_reached_twice_is_emitted_once_at_its_shortest_depth(void **state)
{
    (void)state;
    /* A->B, A->C, B->C, C->D, and a parallel A->B */
    uint32_t src[] = {0, 0, 1, 2, 0}, dst[] = {1, 2, 2, 3, 1};
    og_topology *t;
    assert_int_equal(og_topology_build(&t, 4, 4, src, dst, 5, NULL), OG_OK);
    og_reach r;
    og_reach_init(&r);
    assert_int_equal(og_topology_reach(t, OG_DIR_OUT, 0, 1, 3, &r), OG_OK);
    assert_int_equal(r.len, 3);
    for (size_t i = 0; i < r.len; i++) {
        if (r.node[i] == 2) assert_int_equal(r.depth[i], 1); /* C at depth 1, not 2 */
        if (r.node[i] == 3) assert_int_equal(r.depth[i], 2);
    }
    /* {2,2}: only D (C's shortest depth is 1) */
    assert_string_equal(reach_str(t, OG_DIR_OUT, 0, 2, 2), "D");
    og_reach_free(&r);
    og_topology_free(t);
}

static void the_source_returns_only_through_a_direct_self_loop(void **state)
{
    (void)state;
    /* cycle A->B->A; and a self-loop C->C (twice) */
    uint32_t src[] = {0, 1, 2, 2}, dst[] = {1, 0, 2, 2};
    og_topology *t;
    assert_int_equal(og_topology_build(&t, 3, 3, src, dst, 4, NULL), OG_OK);
    assert_string_equal(reach_str(t, OG_DIR_OUT, 0, 1, 3), "B");
    assert_string_equal(reach_str(t, OG_DIR_OUT, 2, 1, 3), "C");
    assert_string_equal(reach_str(t, OG_DIR_OUT, 2, 2, 3), "");
    assert_string_equal(reach_str(t, OG_DIR_BOTH, 2, 1, 1), "C");
    og_topology_free(t);
}

static void undirected_unions_both_directions_without_duplicates(void **state)
{
    (void)state;
    /* Alice(0)->Bob(1), Bob(1)->Diana(3), Diana(3)->Bob(1), Charlie(2)->Alice(0) */
    uint32_t src[] = {0, 1, 3, 2}, dst[] = {1, 3, 1, 0};
    og_topology *t;
    assert_int_equal(og_topology_build(&t, 4, 4, src, dst, 4, NULL), OG_OK);
    og_reach r;
    og_reach_init(&r);
    assert_int_equal(og_topology_reach(t, OG_DIR_BOTH, 1, 1, 1, &r), OG_OK);
    assert_int_equal(r.len, 2); /* Alice, Diana once each */
    og_reach_free(&r);
    assert_string_equal(reach_str(t, OG_DIR_BOTH, 2, 1, 2), "AB");
    assert_string_equal(reach_str(t, OG_DIR_OUT, 1, 1, 1), "D");
    og_topology_free(t);
}

static void keep_arrays(void *hold) { (void)hold; } /* the test's static arrays stay */

/* og_topology_simple: a list without repeats (a self-loop is one entry) is simple; a pair
 * linked twice makes both directions not simple; a deleted duplicate does not count; a
 * wrapped list naming a node outside the range is not simple; the answer is kept. */
static void simple_means_no_node_lists_a_neighbour_twice(void **state)
{
    (void)state;
    og_topology *t;
    uint32_t s1[] = {0, 0, 2, 1, 1}, d1[] = {1, 2, 1, 1, 0}; /* A->B A->C C->B B->B B->A */
    assert_int_equal(og_topology_build(&t, 3, 3, s1, d1, 5, NULL), OG_OK);
    assert_int_equal(og_topology_simple(t, OG_DIR_OUT), 1);
    assert_int_equal(og_topology_simple(t, OG_DIR_IN), 1);
    assert_int_equal(og_topology_simple(t, OG_DIR_OUT), 1); /* asked again: kept */
    assert_int_equal(og_topology_simple(t, OG_DIR_BOTH), 0);
    og_topology_free(t);
    uint32_t s2[] = {0, 1, 0}, d2[] = {1, 2, 1}; /* A->B twice */
    assert_int_equal(og_topology_build(&t, 3, 3, s2, d2, 3, NULL), OG_OK);
    assert_int_equal(og_topology_simple(t, OG_DIR_OUT), 0);
    assert_int_equal(og_topology_simple(t, OG_DIR_IN), 0);
    og_topology_free(t);
    uint8_t live = 0x03; /* the second A->B deleted */
    assert_int_equal(og_topology_build(&t, 3, 3, s2, d2, 3, &live), OG_OK);
    assert_int_equal(og_topology_simple(t, OG_DIR_OUT), 1);
    og_topology_free(t);
    /* a mapped file's arrays: node A lists row 7 of 3 nodes */
    static const uint64_t off_out[] = {0, 2, 2, 2}, off_in[] = {0, 0, 1, 1};
    static const uint32_t nbr_out[] = {1, 7}, nbr_in[] = {0, 0}, edg[] = {0, 1};
    const uint64_t *off[2] = {off_out, off_in};
    const uint32_t *nbr[2] = {nbr_out, nbr_in}, *edge[2] = {edg, edg};
    assert_int_equal(og_topology_wrap(&t, 3, 3, 2, off, nbr, edge, keep_arrays, NULL), OG_OK);
    assert_int_equal(og_topology_simple(t, OG_DIR_OUT), 0);
    og_topology_free(t);
}

/* A count from a few start nodes never decides og_topology_simple (one pass over every list:
 * at 5M nodes it made a one-hop count's first call read the whole topology); one from many
 * rows does, and the weights are the same either way. */
static void few_rows_never_decide_simplicity(void **state)
{
    (void)state;
    enum { N = 1000 };
    static uint32_t src[2 * N], dst[2 * N];
    for (uint32_t i = 0; i < N; i++) src[2 * i] = src[2 * i + 1] = i, dst[2 * i] = (i + 1) % N, dst[2 * i + 1] = (i + 7) % N;
    og_topology *t;
    assert_int_equal(og_topology_build(&t, N, N, src, dst, 2 * N, NULL), OG_OK);
    const og_topology *ts[2] = {t, t};
    og_dir dirs[2] = {OG_DIR_OUT, OG_DIR_OUT};
    static uint32_t rows[N];
    uint32_t *cols[1] = {rows};
    static uint64_t w[N];
    for (uint32_t i = 0; i < N; i++) rows[i] = (i * 37) % N;
    og_bindings few = {1, 3, 3, cols};
    assert_int_equal(og_degree_weights(&few, 0, ts, dirs, 2, w), OG_OK);
    for (int i = 0; i < 3; i++) assert_int_equal(w[i], 4); /* 2 distinct neighbours of 2 each */
    assert_int_equal(og_topology_simple_known(t, OG_DIR_OUT), 0);
    og_bindings many = {1, N, N, cols};
    assert_int_equal(og_degree_weights(&many, 0, ts, dirs, 2, w), OG_OK);
    for (int i = 0; i < N; i++) assert_int_equal(w[i], 4);
    assert_int_equal(og_topology_simple_known(t, OG_DIR_OUT), 1);
    og_topology_free(t);
}

static void deleted_edges_and_missing_endpoints_are_skipped(void **state)
{
    (void)state;
    uint32_t src[] = {0, 0, OG_ROW_NONE, 1}, dst[] = {1, 2, 0, 2};
    uint8_t live = 0x0d; /* edges 0, 2, 3 live; edge 1 (A->C) deleted */
    og_topology *t;
    assert_int_equal(og_topology_build(&t, 3, 3, src, dst, 4, &live), OG_OK);
    assert_int_equal(og_topology_edge_count(t), 2);
    assert_string_equal(reach_str(t, OG_DIR_OUT, 0, 1, 1), "B");
    const uint32_t *nb, *ed;
    size_t n;
    assert_int_equal(og_topology_edges(t, OG_DIR_IN, 2, NULL, &nb, &ed, &n), OG_OK);
    assert_int_equal(n, 1);
    assert_int_equal(nb[0], 1);
    assert_int_equal(ed[0], 3);
    og_topology_free(t);
}

static void invalid_bounds_and_asymmetric_undirected_are_refused(void **state)
{
    (void)state;
    uint32_t src[] = {0}, dst[] = {0};
    og_topology *t;
    assert_int_equal(og_topology_build(&t, 1, 2, src, dst, 1, NULL), OG_OK);
    og_reach r;
    og_reach_init(&r);
    assert_int_equal(og_topology_reach(t, OG_DIR_OUT, 0, 0, 1, &r), OG_ERR_INVALID);
    assert_int_equal(og_topology_reach(t, OG_DIR_OUT, 0, 3, 2, &r), OG_ERR_INVALID);
    assert_int_equal(og_topology_reach(t, OG_DIR_BOTH, 0, 1, 1, &r), OG_ERR_INVALID);
    og_reach_free(&r);
    og_topology_free(t);
    uint32_t bad_dst[] = {5};
    assert_int_equal(og_topology_build(&t, 1, 2, src, bad_dst, 1, NULL), OG_ERR_INTERNAL);
}

/* og_topology_put_rows writes, section by section, exactly the file og_csr_encode gives for
 * og_topology_build's topology of the same rows: edges keep edge-row order within a node,
 * rows naming no node (OG_ROW_NONE) are left out, nodes without edges, no edges at all, and
 * a table big enough for the two-thread scatter (SIDES_APART_EDGES) with random endpoints. */
static void put_rows_writes_the_file_the_built_topology_encodes_to(void **state)
{
    (void)state;
    void *fx = NULL;
    assert_int_equal(store_fixture_open(&fx, "/tmp/og-topo-put-XXXXXX"), 0);
    og_store *st = ((fixture *)fx)->st;
    static const struct { uint32_t ns, nd; size_t ne; } cases[] = {{5, 4, 0}, {1, 1, 3}, {7, 9, 40}, {1000, 300, 5000},
                                                                    {200000, 150000, (size_t)1 << 21}};
    srand(3);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t ne = cases[c].ne;
        uint32_t *src = malloc((ne ? ne : 1) * sizeof *src), *dst = malloc((ne ? ne : 1) * sizeof *dst);
        assert_non_null(src);
        assert_non_null(dst);
        for (size_t i = 0; i < ne; i++) {
            /* sources mostly ascending (a bulk file's order), destinations at random */
            src[i] = (uint32_t)((uint64_t)i * cases[c].ns / (ne ? ne : 1));
            if (rand() % 5 == 0) src[i] = (uint32_t)rand() % cases[c].ns;
            dst[i] = (uint32_t)rand() % cases[c].nd;
            if (rand() % 97 == 0) (rand() % 2 ? src : dst)[i] = OG_ROW_NONE;
        }
        og_topology *t;
        assert_int_equal(og_topology_build(&t, cases[c].ns, cases[c].nd, src, dst, ne, NULL), OG_OK);
        og_csr_arrays a;
        uint32_t ns, nd;
        og_topology_arrays(t, &ns, &nd, a.off, a.nbr, a.edge);
        a.n_src = ns, a.n_dst = nd, a.n_edges = og_topology_edge_count(t), a.edge_rows = ne;
        og_buf want = OG_BUF_INIT;
        assert_int_equal(og_csr_encode(&a, &want), OG_OK);
        char key[64];
        snprintf(key, sizeof key, "topo/%zu.csr", c);
        assert_int_equal(og_topology_put_rows(st, key, cases[c].ns, cases[c].nd, src, dst, ne), OG_OK);
        og_bytes got = {NULL, 0};
        assert_int_equal(og_store_get(st, key, &got), OG_OK);
        assert_int_equal(got.len, want.len);
        if (memcmp(got.data, want.data, want.len) != 0) fail_msg("case %zu: the files differ", c);
        /* a second writer loses to the file already there */
        assert_int_equal(og_topology_put_rows(st, key, cases[c].ns, cases[c].nd, src, dst, ne), OG_ERR_ALREADY_EXISTS);
        og_bytes_free(&got);
        og_buf_free(&want);
        og_topology_free(t);
        free(src);
        free(dst);
    }
    /* a row naming a node past the table is refused, and nothing is written */
    uint32_t s1[2] = {0, 3}, d1[2] = {0, 0};
    assert_int_equal(og_topology_put_rows(st, "topo/bad.csr", 3, 3, s1, d1, 2), OG_ERR_INTERNAL);
    og_bytes none = {NULL, 0};
    assert_int_equal(og_store_get(st, "topo/bad.csr", &none), OG_ERR_NOT_FOUND);
    teardown(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_hop_bounds_follow_shortest_depth),
        cmocka_unit_test(a_node_reached_twice_is_emitted_once_at_its_shortest_depth),
        cmocka_unit_test(the_source_returns_only_through_a_direct_self_loop),
        cmocka_unit_test(undirected_unions_both_directions_without_duplicates),
        cmocka_unit_test(deleted_edges_and_missing_endpoints_are_skipped),
        cmocka_unit_test(simple_means_no_node_lists_a_neighbour_twice),
        cmocka_unit_test(few_rows_never_decide_simplicity),
        cmocka_unit_test(invalid_bounds_and_asymmetric_undirected_are_refused),
        cmocka_unit_test(put_rows_writes_the_file_the_built_topology_encodes_to),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
