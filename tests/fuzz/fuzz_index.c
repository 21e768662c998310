/*
 * fuzz_index.c — libFuzzer target for the persisted index decoders (src/index/): the first
 * byte picks the keymap or the CSR decoder, the rest is the file.  A keymap that opens is
 * probed with keys cut from its own bytes and a few fixed ones; a CSR file that parses has
 * every offset and neighbour array read end to end.  Any input must give OG_OK or a typed
 * error; ASan/UBSan report the rest.  Seeds: tests/fuzz/corpus/fuzz_index/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/csr.h"
#include "index/keymap.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *ud, uint32_t off)
{
    *(uint64_t *)ud += off;
    return 0;
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
    if (data[0] & 1) {
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
            for (size_t i = 0; i < 4; i++) (void)og_keymap_find(k, fixed[i], strlen(fixed[i]), count, &acc);
            for (size_t off = 0; off + 4 <= len && off < 4096; off += 7)
                (void)og_keymap_find(k, p + off, 1 + off % 4, count, &acc);
            sink += acc;
            og_keymap_free(k);
        }
        og_error_clear();
    }
    (void)sink;
    free(p);
    return 0;
}
