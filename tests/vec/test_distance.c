/*
 * test_distance.c — vec/distance.h: every kernel the CPU has agrees with a double-precision
 * reference on every dimension 1..70 and a few large ones, including unaligned inputs;
 * og_vec_l2sq_rows picks the right rows; og_vec_l2sq_kernel is the kernel in use; forcing an
 * unknown kernel changes nothing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vec/distance.h"

static double ref_l2sq(const float *a, const float *b, size_t dim)
{
    double s = 0;
    for (size_t i = 0; i < dim; i++) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return s;
}

static float rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(*s >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
}

static void kernel_matches_reference(const char *name)
{
    if (!og_vec_force_kernel(name)) {
        printf("SKIP: this CPU has no %s\n", name);
        return;
    }
    assert_string_equal(og_vec_kernel(), name);
    uint64_t seed = 42;
    static float buf[2 * 1100];
    size_t dims[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 70, 128, 768, 1024};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        size_t dim = dims[t];
        for (size_t off = 0; off < 3; off++) { /* unaligned starts */
            float *a = buf + off, *b = buf + 1100 + off;
            for (size_t i = 0; i < dim; i++) a[i] = rnd(&seed), b[i] = rnd(&seed);
            double want = ref_l2sq(a, b, dim);
            float got = og_vec_l2sq(a, b, dim);
            if (fabs(got - want) > 1e-5 * (want + 1))
                fail_msg("%s dim %zu: got %.9g want %.9g", name, dim, (double)got, want);
            /* the resolved kernel (what the HNSW build calls) is the one in use, bit for bit */
            assert_true(og_vec_l2sq_kernel()(a, b, dim) == got);
            assert_true(og_vec_l2sq(a, a, dim) == 0.0f);
        }
    }
}

static void every_kernel(void **state)
{
    (void)state;
    kernel_matches_reference("scalar");
    kernel_matches_reference("avx2");
    kernel_matches_reference("avx512");
    assert_int_equal(og_vec_force_kernel("sse9"), 0);
}

static void rows(void **state)
{
    (void)state;
    float base[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 3, 4, 0};
    float q[3] = {0, 0, 0};
    uint32_t r[3] = {3, 0, 2};
    float out[3];
    og_vec_l2sq_rows(q, base, 3, r, 3, out);
    assert_true(out[0] == 25.0f && out[1] == 0.0f && out[2] == 4.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernel),
        cmocka_unit_test(rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
