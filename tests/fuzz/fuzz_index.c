/*
 * fuzz_index.c — libFuzzer target for the persisted index decoders (src/index/): the first
 * byte modulo 3 picks the keymap (0), CSR (1) or scalar (2) decoder, the rest is the file.  A
 * keymap (one file's or a run map) that opens is probed with keys cut from its own bytes and a few fixed ones; a CSR
 * file that parses has every offset and neighbour array read end to end; a scalar file that
 * passes og_scalar_check is looked up with open, closed, half-open, point and inverted ranges
 * of both key families (numbers and strings, bounds cut from its own bytes), every offset
 * returned checked against the row count.  Any input must give OG_OK or a typed
 * error; ASan/UBSan report the rest.  Seeds: tests/fuzz/corpus/fuzz_index/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/csr.h"
#include "index/keymap.h"
#include "index/scalar.h"
#include "util/buf.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *ud, uint32_t off)
{
    *(uint64_t *)ud += off;
    return 0;
}

static int count_run(void *ud, uint32_t ord, uint32_t off)
{
    *(uint64_t *)ud += off + ord;
    return 0;
}

typedef struct scal {
    uint64_t rows, sum;
} scal;

static void scal_cb(void *ud, uint32_t off)
{
    scal *s = ud;
    if (off >= s->rows) __builtin_trap(); /* a checked file must only name its own rows */
    s->sum += off;
}

static void fuzz_scalar(const uint8_t *p, size_t len, volatile uint64_t *sink)
{
    uint64_t rows = len >= 24 ? og_load_u64le(p + 16) : 0;
    if (og_scalar_check(p, len, rows) != OG_OK) {
        og_error_clear();
        return;
    }
    scal acc = {rows, 0};
    og_scalar_kind kind = og_scalar_file_kind(p);
    static const long double nums[] = {-1e300L, -2, -0.5L, 0, 1, 3, 1e18L, 1e300L};
    for (int string = 0; string < 2; string++)
        for (int shape = 0; shape < 6; shape++)
            for (size_t i = 0; i < 8; i++) {
                og_scalar_range r = {0};
                r.has_lo = shape != 1 && shape != 4;
                r.has_hi = shape != 2 && shape != 4;
                r.lo_incl = shape != 3;
                r.hi_incl = shape != 5;
                r.lo_num = nums[i];
                r.hi_num = shape == 0 ? nums[i] : nums[(i + 3) % 8];
                size_t o1 = (i * 13) % len, o2 = (i * 29) % len;
                r.lo_str = p + o1, r.lo_len = (len - o1) < 6 ? len - o1 : 6 - i % 3;
                r.hi_str = shape == 0 ? r.lo_str : p + o2;
                r.hi_len = shape == 0 ? r.lo_len : ((len - o2) < 5 ? len - o2 : 5);
                og_status st = og_scalar_lookup(p, len, string, &r, scal_cb, &acc);
                if (st == OG_ERR_INVALID && (kind == OG_SCALAR_STRING) == string) __builtin_trap();
                og_error_clear();
            }
    *sink += acc.sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    /* files are mapped (page-aligned) or malloc'd: give the decoders an aligned copy */
    uint8_t *p = malloc(size);
    if (!p) return 0;
    memcpy(p, data + 1, size - 1);
    size_t len = size - 1;
    volatile uint64_t sink = 0;
    if (data[0] % 3 == 2) {
        fuzz_scalar(p, len, &sink);
    } else if (data[0] % 3 == 1) {
        og_csr_arrays a;
        if (og_csr_parse(p, len, &a) == OG_OK) {
            for (int s = 0; s < 2; s++) {
                uint64_t n = s ? a.n_dst : a.n_src;
                for (uint64_t i = 0; i <= n; i++) sink += a.off[s][i];
                for (uint64_t i = 0; i < a.n_edges; i++) sink += a.nbr[s][i] + a.edge[s][i];
            }
        }
    } else {
        og_keymap *k;
        if (og_keymap_open_bytes(&k, p, len, NULL, NULL) == OG_OK) {
            uint64_t acc = 0;
            static const char *fixed[] = {"", "a", "k1", "node-1"};
            int run = og_keymap_is_run(k);
            for (size_t i = 0; i < 4; i++)
                (void)(run ? og_keymap_find_run(k, fixed[i], strlen(fixed[i]), count_run, &acc)
                           : og_keymap_find(k, fixed[i], strlen(fixed[i]), count, &acc));
            for (size_t off = 0; off + 4 <= len && off < 4096; off += 7)
                (void)(run ? og_keymap_find_run(k, p + off, 1 + off % 4, count_run, &acc)
                           : og_keymap_find(k, p + off, 1 + off % 4, count, &acc));
            sink += acc;
            og_keymap_free(k);
        }
        og_error_clear();
    }
    (void)sink;
    free(p);
    return 0;
}
