/*
 * distance.c — squared-L2 kernels with runtime dispatch (see distance.h).
 *
 * Why per-function target attributes instead of -mavx2 on the file: the binary must run on any
 * x86-64; only the dispatched kernel may use the wider instructions.
 */
#include "vec/distance.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OG_VEC_X86 1
#include <immintrin.h>
#endif

typedef float (*l2_fn)(const float *, const float *, size_t);

static float l2_scalar(const float *a, const float *b, size_t dim)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= dim; i += 4) {
        float d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1], d2 = a[i + 2] - b[i + 2], d3 = a[i + 3] - b[i + 3];
        s0 += d0 * d0;
        s1 += d1 * d1;
        s2 += d2 * d2;
        s3 += d3 * d3;
    }
    for (; i < dim; i++) {
        float d = a[i] - b[i];
        s0 += d * d;
    }
    return (s0 + s1) + (s2 + s3);
}

#ifdef OG_VEC_X86
__attribute__((target("avx2,fma"))) static float l2_avx2(const float *a, const float *b, size_t dim)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= dim; i += 16) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        acc0 = _mm256_fmadd_ps(d0, d0, acc0);
        acc1 = _mm256_fmadd_ps(d1, d1, acc1);
    }
    for (; i + 8 <= dim; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        acc0 = _mm256_fmadd_ps(d, d, acc0);
    }
    acc0 = _mm256_add_ps(acc0, acc1);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    float r = _mm_cvtss_f32(s);
    for (; i < dim; i++) {
        float d = a[i] - b[i];
        r += d * d;
    }
    return r;
}

__attribute__((target("avx512f"))) static float l2_avx512(const float *a, const float *b, size_t dim)
{
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
        __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
        __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));
        acc0 = _mm512_fmadd_ps(d0, d0, acc0);
        acc1 = _mm512_fmadd_ps(d1, d1, acc1);
    }
    for (; i + 16 <= dim; i += 16) {
        __m512 d = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
        acc0 = _mm512_fmadd_ps(d, d, acc0);
    }
    if (i < dim) { /* the tail through a mask: no reads past the vectors */
        __mmask16 m = (__mmask16)((1u << (dim - i)) - 1);
        __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
        acc1 = _mm512_fmadd_ps(d, d, acc1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}
#endif

typedef struct kernel {
    const char *name;
    l2_fn fn;
    int (*available)(void);
} kernel;

static int always(void) { return 1; }
#ifdef OG_VEC_X86
static int has_avx2(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
static int has_avx512(void) { return __builtin_cpu_supports("avx512f"); }
#endif

static const kernel kernels[] = {
#ifdef OG_VEC_X86
    {"avx512", l2_avx512, has_avx512},
    {"avx2", l2_avx2, has_avx2},
#endif
    {"scalar", l2_scalar, always},
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

static const kernel *active;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void choose(void)
{
#ifdef OG_VEC_X86
    __builtin_cpu_init();
#endif
    const char *want = getenv("OG_VEC_KERNEL");
    for (size_t i = 0; i < NKERNELS && want; i++)
        if (!strcmp(kernels[i].name, want)) active = kernels[i].available() ? &kernels[i] : &kernels[NKERNELS - 1];
    for (size_t i = 0; i < NKERNELS && !active; i++)
        if (kernels[i].available()) active = &kernels[i];
}

static const kernel *get(void)
{
    pthread_once(&once, choose);
    return active;
}

float og_vec_l2sq(const float *a, const float *b, size_t dim) { return get()->fn(a, b, dim); }

og_vec_l2sq_fn og_vec_l2sq_kernel(void) { return get()->fn; }

void og_vec_l2sq_rows(const float *q, const float *base, size_t dim, const uint32_t *rows, size_t n, float *out)
{
    l2_fn fn = get()->fn;
    for (size_t k = 0; k < n; k++) out[k] = fn(q, base + (size_t)rows[k] * dim, dim);
}

const char *og_vec_kernel(void) { return get()->name; }

int og_vec_force_kernel(const char *name)
{
    get();
    for (size_t i = 0; i < NKERNELS; i++)
        if (!strcmp(kernels[i].name, name)) {
            if (!kernels[i].available()) return 0;
            active = &kernels[i];
            return 1;
        }
    return 0;
}
