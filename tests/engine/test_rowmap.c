/*
 * test_rowmap.c — engine/rowmap.h against a brute-force model: random older versions
 * (fragments of random sizes), newer versions that keep some fragments in a shuffled or kept
 * order, drop others, delete random rows of the kept ones and add new fragments in between;
 * og_rowmap_fwd and og_rowmap_back must agree with the row-by-row arrays for every row, and
 * the identity / monotone / counts answers with the model's.  Plus the refusals of a
 * malformed build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/rowmap.h"

static uint64_t rng;
static uint32_t below(uint32_t n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return n ? (uint32_t)((rng >> 33) % n) : 0;
}

#define MAXF 12
#define NONE UINT32_MAX

/* One random case: checks every row both ways. */
static void one_case(unsigned seed)
{
    rng = seed * 0x9E3779B97F4A7C15ULL + 7;
    uint32_t nf = 1 + below(MAXF), n_old[MAXF], start[MAXF + 1];
    start[0] = 0;
    for (uint32_t i = 0; i < nf; i++) n_old[i] = below(4) ? below(40) : 0, start[i + 1] = start[i] + n_old[i];
    uint32_t total_old = start[nf];
    /* the newer layout: kept fragments (some shuffled), new ones in between */
    int kept[MAXF], order[MAXF], no = 0;
    for (uint32_t i = 0; i < nf; i++) kept[i] = below(5) != 0;
    for (uint32_t i = 0; i < nf; i++)
        if (kept[i]) order[no++] = (int)i;
    int shuffle = below(3) == 0;
    for (int i = no - 1; shuffle && i > 0; i--) {
        int j = (int)below((uint32_t)i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    uint8_t *gone = calloc(total_old + 1, 1);
    uint32_t *fwd = malloc((total_old + 1) * sizeof *fwd);
    uint32_t new_start[MAXF], cur = 0;
    for (int k = 0; k < no; k++) {
        cur += below(3) == 0 ? below(10) : 0; /* a new fragment before it */
        int i = order[k];
        new_start[i] = cur;
        for (uint32_t q = 0; q < n_old[i]; q++) {
            gone[start[i] + q] = below(6) == 0;
            fwd[start[i] + q] = gone[start[i] + q] ? NONE : cur++;
        }
    }
    uint32_t total_new = cur + below(10); /* and some appended at the end */
    uint32_t *back = malloc((total_new + 1) * sizeof *back);
    for (uint32_t r = 0; r < total_new; r++) back[r] = NONE;
    size_t ngone_all = 0, nkept = 0;
    for (uint32_t i = 0; i < nf; i++)
        for (uint32_t q = 0; q < n_old[i]; q++) {
            uint32_t r = start[i] + q;
            if (!kept[i]) fwd[r] = NONE;
            if (fwd[r] == NONE) ngone_all++;
            else back[fwd[r]] = r, nkept++;
        }

    og_rowmap *m;
    assert_int_equal(og_rowmap_new(&m, total_old, total_new), OG_OK);
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t g[64], ng = 0;
        for (uint32_t q = 0; kept[i] && q < n_old[i]; q++)
            if (gone[start[i] + q]) g[ng++] = q;
        assert_int_equal(og_rowmap_add(m, start[i], n_old[i], kept[i] ? new_start[i] : NONE, g, ng), OG_OK);
    }
    assert_int_equal(og_rowmap_finish(m), OG_OK);
    for (uint32_t r = 0; r <= total_old; r++) {
        uint32_t want = r < total_old ? fwd[r] : NONE;
        if (og_rowmap_fwd(m, r) != want) fail_msg("seed %u: fwd(%u) = %u, want %u", seed, r, og_rowmap_fwd(m, r), want);
    }
    for (uint32_t r = 0; r <= total_new; r++) {
        uint32_t want = r < total_new ? back[r] : NONE;
        if (og_rowmap_back(m, r) != want) fail_msg("seed %u: back(%u) = %u, want %u", seed, r, og_rowmap_back(m, r), want);
    }
    assert_int_equal(og_rowmap_gone_count(m), ngone_all);
    assert_int_equal(og_rowmap_kept_count(m), nkept);
    int identity = 1, monotone = 1;
    uint32_t last = 0;
    for (uint32_t r = 0; r < total_old; r++) {
        identity = identity && fwd[r] == r;
        if (fwd[r] != NONE) {
            if (last && fwd[r] < last) monotone = 0;
            last = fwd[r] + 1;
        }
    }
    assert_int_equal(og_rowmap_is_identity(m), identity);
    if (og_rowmap_is_monotone(m) != monotone) fail_msg("seed %u: monotone %d, the rows say %d", seed, og_rowmap_is_monotone(m), monotone);
    og_rowmap_free(m);
    free(gone);
    free(fwd);
    free(back);
}

static void random_maps_agree_with_the_row_by_row_model(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 3000; seed++) one_case(seed);
}

static void an_untouched_table_is_the_identity(void **state)
{
    (void)state;
    og_rowmap *m;
    assert_int_equal(og_rowmap_new(&m, 10, 12), OG_OK); /* two rows appended */
    assert_int_equal(og_rowmap_add(m, 0, 4, 0, NULL, 0), OG_OK);
    assert_int_equal(og_rowmap_add(m, 4, 6, 4, NULL, 0), OG_OK);
    assert_int_equal(og_rowmap_finish(m), OG_OK);
    assert_true(og_rowmap_is_identity(m));
    assert_int_equal(og_rowmap_fwd(m, 9), 9);
    assert_int_equal(og_rowmap_back(m, 9), 9);
    assert_int_equal(og_rowmap_back(m, 10), NONE); /* appended: new */
    og_rowmap_free(m);
}

static void malformed_builds_are_refused(void **state)
{
    (void)state;
    og_rowmap *m;
    uint32_t bad[] = {3, 1};
    assert_int_equal(og_rowmap_new(&m, 10, 10), OG_OK);
    assert_int_equal(og_rowmap_add(m, 1, 4, 0, NULL, 0), OG_ERR_INVALID);   /* does not start at 0 */
    assert_int_equal(og_rowmap_add(m, 0, 4, 0, bad, 2), OG_ERR_INVALID);    /* ranks out of order */
    assert_int_equal(og_rowmap_add(m, 0, 11, 0, NULL, 0), OG_ERR_INVALID);  /* past the rows */
    assert_int_equal(og_rowmap_add(m, 0, 5, 0, NULL, 0), OG_OK);
    assert_int_equal(og_rowmap_finish(m), OG_ERR_INVALID); /* covers 5 of 10 */
    og_rowmap_free(m);
    assert_int_equal(og_rowmap_new(&m, 10, 10), OG_OK);
    assert_int_equal(og_rowmap_add(m, 0, 5, 0, NULL, 0), OG_OK);
    assert_int_equal(og_rowmap_add(m, 5, 5, 3, NULL, 0), OG_OK); /* overlaps the first */
    assert_int_equal(og_rowmap_finish(m), OG_ERR_INVALID);
    og_rowmap_free(m);
    assert_int_equal(og_rowmap_new(&m, 10, 8), OG_OK);
    assert_int_equal(og_rowmap_add(m, 0, 10, 0, NULL, 0), OG_OK); /* reaches past 8 rows */
    assert_int_equal(og_rowmap_finish(m), OG_ERR_INVALID);
    og_rowmap_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_maps_agree_with_the_row_by_row_model),
        cmocka_unit_test(an_untouched_table_is_the_identity),
        cmocka_unit_test(malformed_builds_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
