/*
 * distance.h — exact vector distance kernels for `nearest` (docs/search.md "Vectors").
 *
 * The metric is the reference's: L2 as Lance computes it, the SQUARED Euclidean distance
 * sum((a[i] - b[i])^2), accumulated in float32.  Its order is the Euclidean order.
 *
 * Kernels are chosen once per process at first use from what the CPU offers: AVX-512F, else
 * AVX2 + FMA, else a portable scalar loop (x86-64 runtime dispatch; other CPUs get the scalar
 * loop, which compilers auto-vectorise).  Kernels may round differently in the last bits
 * (different summation order); each is exact to float32 accumulation.  OG_VEC_KERNEL=scalar |
 * avx2 | avx512 in the environment forces one (an unavailable one falls back to scalar).
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef OG_VEC_DISTANCE_H
#define OG_VEC_DISTANCE_H

#include <stddef.h>
#include <stdint.h>

/* Squared L2 distance of two dim-float vectors. */
float og_vec_l2sq(const float *a, const float *b, size_t dim);

/* The kernel og_vec_l2sq runs, resolved: for loops that call it millions of times (the HNSW
 * build calls it ~efConstruction x M times per inserted vector), where the per-call dispatch
 * would be a measurable share of a 128-d distance. */
typedef float (*og_vec_l2sq_fn)(const float *a, const float *b, size_t dim);
og_vec_l2sq_fn og_vec_l2sq_kernel(void);

/* out[k] = og_vec_l2sq(q, base + rows[k] * dim, dim) for k < n (rows index `base`, a matrix of
 * dim-float rows). */
void og_vec_l2sq_rows(const float *q, const float *base, size_t dim, const uint32_t *rows, size_t n, float *out);

/* The kernel in use: "avx512", "avx2" or "scalar". */
const char *og_vec_kernel(void);

/* Test hook: forces kernel `name` ("scalar", "avx2", "avx512"); returns 0 when the CPU lacks
 * it (nothing changes), 1 when it is now in use.  Not for concurrent use with searches. */
int og_vec_force_kernel(const char *name);

#endif
