/*
 * test_visit_set.c — engine/visit_set.h against a brute-force model: random traversals (runs
 * of adds over universes below, at and far above the dense threshold, from a handful of nodes
 * to more than 1/64 of the universe, so the hash set doubles and turns into a bitmap mid-run)
 * on ONE reused set, the way a pooled og_reach reuses it.  Every add's "fresh" answer and
 * every membership must equal the model's, and after og_visit_set_end the set must be empty
 * for the next run: a leftover member would make a later BFS skip a node, a wrong answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/visit_set.h"

static uint64_t rng;
static uint32_t below(uint32_t n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return n ? (uint32_t)((rng >> 33) % n) : 0;
}

/* One run of `adds` random adds (with repeats) over [0, universe), checked against a byte map;
 * `extra` (a node added but not listed, like a BFS source found through a self-loop) goes
 * through the end's extra argument. */
static void one_run(og_visit_set *s, uint32_t universe, size_t adds, int with_extra)
{
    uint8_t *model = calloc(universe, 1);
    uint32_t *listed = malloc((adds + 1) * sizeof *listed);
    assert_non_null(model);
    assert_non_null(listed);
    size_t nl = 0;
    assert_int_equal(og_visit_set_begin(s, universe), OG_OK);
    uint32_t extra = UINT32_MAX;
    if (with_extra) {
        extra = below(universe);
        int fresh;
        assert_int_equal(og_visit_set_add(s, extra, &fresh), OG_OK);
        assert_int_equal(fresh, 1);
        model[extra] = 1;
    }
    for (size_t i = 0; i < adds; i++) {
        /* half the adds revisit a node already seen, as a BFS over a skewed graph does */
        uint32_t x = nl && below(2) ? listed[below((uint32_t)nl)] : below(universe);
        if (x == extra) continue;
        int fresh;
        assert_int_equal(og_visit_set_add(s, x, &fresh), OG_OK);
        assert_int_equal(fresh, !model[x]);
        if (fresh) listed[nl++] = x; /* a BFS enqueues each node once */
        model[x] = 1;
        if (!(i & 63)) { /* spot-check membership of a random node */
            uint32_t y = below(universe);
            assert_int_equal(og_visit_set_has(s, y), model[y]);
        }
    }
    for (uint32_t x = 0; x < universe; x += 1 + (universe > 100000 ? 997 : 0))
        assert_int_equal(og_visit_set_has(s, x), model[x]);
    og_visit_set_end(s, listed, nl, extra);
    /* empty again: every node of the run, and a sample of the rest */
    for (size_t i = 0; i < nl; i++) assert_int_equal(og_visit_set_has(s, listed[i]), 0);
    if (with_extra) assert_int_equal(og_visit_set_has(s, extra), 0);
    free(model);
    free(listed);
}

static void agrees_with_a_model_and_is_empty_after_each_run(void **state)
{
    (void)state;
    static const uint32_t universes[] = {1, 7, 1000, 65536, 65537, 200000, 1500000};
    og_visit_set s;
    og_visit_set_init(&s);
    for (unsigned seed = 1; seed <= 3; seed++) {
        rng = seed;
        for (size_t u = 0; u < sizeof universes / sizeof universes[0]; u++) {
            uint32_t n = universes[u];
            /* small runs (a hash set), then one past 1/64 of the universe (a bitmap), then
             * small again on the same set: the bitmap must have been emptied bit by bit */
            one_run(&s, n, 1 + below(300), (int)(seed & 1));
            one_run(&s, n, n / 32 + 10, 0);
            one_run(&s, n, 1 + below(50), 1);
        }
    }
    og_visit_set_free(&s);
}

/* A set that grew big once keeps its slots; a small run after it must still clear only what
 * it touched and leave nothing behind (the sweep of each listed node's probe run). */
static void a_small_run_after_a_big_one_leaves_nothing_behind(void **state)
{
    (void)state;
    og_visit_set s;
    og_visit_set_init(&s);
    rng = 42;
    uint32_t n = 4u << 20; /* 4M nodes: 20,000 adds stay a hash set (< 1/64) */
    one_run(&s, n, 20000, 0);
    for (int i = 0; i < 40; i++) one_run(&s, n, 1 + below(40), i & 1);
    og_visit_set_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agrees_with_a_model_and_is_empty_after_each_run),
        cmocka_unit_test(a_small_run_after_a_big_one_leaves_nothing_behind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
