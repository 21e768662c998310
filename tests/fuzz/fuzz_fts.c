/*
 * fuzz_fts.c — libFuzzer target for the full-text index decoder (index/fts.h): the input is
 * the file.  A file that opens has every document length read, a few fixed terms and terms
 * cut from its own bytes looked up, and every entry's postings iterated with positions.  Any
 * input must give OG_OK or a typed error; ASan/UBSan report the rest.
 * Seeds: tests/fuzz/corpus/fuzz_fts/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/fts.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* files are mapped (page-aligned) or malloc'd: give the decoder an aligned copy */
    uint8_t *p = malloc(size ? size : 1);
    if (!p) return 0;
    memcpy(p, data, size);
    volatile uint64_t sink = 0;
    og_fts *f;
    if (og_fts_open_bytes(&f, p, size, NULL, NULL) == OG_OK) {
        for (uint64_t i = 0; i < og_fts_rows(f) && i < 100000; i++) sink += og_fts_doc_len(f, (size_t)i);
        static const char *fixed[] = {"", "a", "the", "dog"};
        for (int s = 0; s < 2; s++)
            for (size_t i = 0; i < 4; i++) sink += (uint64_t)og_fts_find(f, fixed[i], strlen(fixed[i]), s);
        /* a term cut from the input: 1..5 bytes, all inside it */
        for (size_t off = 0; off + 5 <= size && off < 2048; off += 13)
            sink += (uint64_t)og_fts_find(f, (const char *)p + off, 1 + off % 5, (int)(off & 1));
        for (size_t i = 0; i < og_fts_terms(f) && i < 4096; i++) {
            const char *t;
            size_t tl;
            int stop;
            uint32_t df;
            og_fts_term(f, i, &t, &tl, &stop, &df);
            for (size_t k = 0; k < tl; k++) sink += (uint8_t)t[k];
            og_fts_iter it;
            og_fts_iter_init(&it, f, i, (int)(i & 1));
            int r;
            while ((r = og_fts_iter_next(&it)) == 1) sink += it.doc + it.tf;
            og_fts_iter_free(&it);
        }
        og_fts_free(f);
    }
    og_error_clear();
    (void)sink;
    free(p);
    return 0;
}
