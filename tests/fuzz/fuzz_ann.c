/*
 * fuzz_ann.c — libFuzzer target for the vector (HNSW) index file decoder (index/ann.h over
 * vec/hnsw.h): the input is a whole `vector-<field>.v1` file.
 *   1. The file as it is: og_ann_check (the checksum) and og_ann_open_bytes, which checks the
 *      structure but not the checksum and reads the graph in place, so mutated graphs reach
 *      its bounds-checked search directly; a file that opens is searched.
 *   2. Its payload handed straight to og_hnsw_load with the header's dimension, bypassing the
 *      envelope's checksum (which random mutations almost never satisfy): so the validation
 *      in front of hnswlib's loader sees damaged graphs — counts, sizes, levels, neighbour
 *      ids — and a graph it accepts is searched.
 * Any input must give OK or a typed error; ASan/UBSan and libFuzzer's malloc limit report the
 * rest (a crash, an out-of-bounds read, a huge allocation).
 * Seeds: tests/fuzz/corpus/fuzz_ann/ (real index files written by `omnigraph index build`).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/ann.h"
#include "util/buf.h"
#include "util/error.h"
#include "vec/hnsw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DIM 64

static void queries(uint32_t dim, float q[3][MAX_DIM], const uint8_t *p, size_t size)
{
    for (uint32_t d = 0; d < dim; d++) {
        q[0][d] = 0;
        q[1][d] = 1.0f + (float)d;
        q[2][d] = size ? (float)p[(d * 7) % size] / 16.0f : 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *p = malloc(size ? size : 1); /* an aligned copy, as a mapped file is */
    if (!p) return 0;
    memcpy(p, data, size);
    volatile uint64_t sink = 0;
    float q[3][MAX_DIM];
    uint32_t offs[16];
    float dists[16];
    size_t n;
    /* 1. the envelope */
    uint64_t rows = size >= 24 ? og_load_u64le(p + 16) : 0;
    sink += (uint64_t)og_ann_check(p, size, rows);
    og_ann *a = NULL;
    if (og_ann_open_bytes(&a, p, size) == OG_OK) {
        uint32_t dim = og_ann_dim(a);
        if (dim <= MAX_DIM) {
            queries(dim, q, p, size);
            for (int i = 0; i < 3; i++)
                if (og_ann_search(a, q[i], 1 + (size_t)i * 7, (size_t)i * 16, offs, dists, &n) == OG_OK)
                    for (size_t k = 0; k < n; k++) sink += offs[k];
        }
        og_ann_free(a);
    }
    og_error_clear();
    /* 2. the hnswlib payload behind the envelope (64-byte header, 8-byte trailer; format 2:
     * the graph is the payload's first u64 at 56 bytes, a table of upper levels follows) */
    if (size >= 72) {
        uint32_t dim = og_load_u32le(p + 12);
        uint64_t glen = og_load_u32le(p + 8) == 2 ? og_load_u64le(p + 56) : size - 72;
        if (dim >= 1 && dim <= MAX_DIM && glen <= size - 72) {
            og_hnsw *h = NULL;
            if (og_hnsw_load(&h, dim, p + 64, (size_t)glen) == OG_HNSW_OK) {
                uint64_t labels[16];
                queries(dim, q, p, size);
                sink += og_hnsw_count(h);
                for (int i = 0; i < 3; i++)
                    if (og_hnsw_search(h, q[i], 1 + (size_t)i * 7, (size_t)i * 16, labels, dists, &n) == OG_HNSW_OK)
                        for (size_t k = 0; k < n; k++) sink += labels[k];
                og_hnsw_free(h);
            }
        }
    }
    (void)sink;
    free(p);
    return 0;
}
