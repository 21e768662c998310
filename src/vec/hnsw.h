/*
 * hnsw.h — a C face on hnswlib (Debian libhnswlib-dev), the approximate nearest-neighbour
 * graph behind the vector index (index/ann.h, docs/search.md "Vector index").
 *
 * Why hnswlib and not faiss: measured on clustered 128-d float32 data (docs/search.md), its
 * HNSW answered top-10 faster at the same recall and built faster than faiss's HNSW and
 * IVF-PQ, and it is a header-only library (faiss ships only a static C++ archive needing
 * BLAS).  This is the only C++ in the tree: hnsw.cpp catches every exception and answers with
 * the plain codes below, so nothing C++ crosses this header.
 *
 * Distances are the project's squared L2 (vec/distance.h, the same SIMD kernels as exact
 * search), so an index and an exact scan agree on what "near" means.
 *
 * Thread safety: og_hnsw_add may be called from several threads at once on one index (build);
 * og_hnsw_search from one thread at a time per index.  Different indexes are independent.
 */
#ifndef OG_VEC_HNSW_H
#define OG_VEC_HNSW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct og_hnsw og_hnsw;

/* Return codes. */
enum { OG_HNSW_OK = 0, OG_HNSW_NOMEM = 1, OG_HNSW_INVALID = 2, OG_HNSW_IO = 3 };

/* Default build parameters: graph degree M and the construction beam (efConstruction).  50, not
 * hnswlib's customary 100: on one data file of the benchmark's clustered 128-d vectors (65,536
 * rows, one thread) efConstruction 100 / 50 / 32 cost 17.4 / 6.5 / 4.0 CPU seconds and gave
 * recall@10 1.000 / 0.999 / 0.970 at the default search beam ef 64 (docs/benchmarks.md
 * "Vector search"): 50 keeps the recall and builds 2.7x cheaper. */
#define OG_HNSW_DEFAULT_M 16
#define OG_HNSW_DEFAULT_EF_CONSTRUCTION 50

/* A new empty index of dim-float vectors for at most `capacity` points. */
int og_hnsw_new(og_hnsw **out, uint32_t dim, size_t capacity, uint32_t m, uint32_t ef_construction);
/* Builds over n rows of `vecs` (n x dim floats) with labels[i] (NULL: the row number), with up
 * to `threads` threads (0 = as many as the CPU has, at most 8). */
int og_hnsw_build(og_hnsw **out, uint32_t dim, const float *vecs, const uint64_t *labels, size_t n, uint32_t m,
                  uint32_t ef_construction, unsigned threads);
/* Serialises the index into a malloc()ed buffer (*out, *len). */
int og_hnsw_save(const og_hnsw *h, uint8_t **out, size_t *len);
/* Loads what og_hnsw_save produced (the bytes are copied).  OG_HNSW_INVALID when they do not
 * describe a dim-float index. */
int og_hnsw_load(og_hnsw **out, uint32_t dim, const uint8_t *p, size_t len);
void og_hnsw_free(og_hnsw *h);

size_t og_hnsw_count(const og_hnsw *h);

/* The (at most) k nearest points to q, nearest first: labels and squared distances into
 * labels[0..*n) / dists[0..*n).  `ef` is the search beam (raised to k when smaller). */
int og_hnsw_search(og_hnsw *h, const float *q, size_t k, size_t ef, uint64_t *labels, float *dists, size_t *n);

#ifdef __cplusplus
}
#endif

#endif
