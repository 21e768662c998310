/*
 * fuzz_analyzer.c — libFuzzer target for the text analyzer (text/analyzer.h), which reads
 * every stored text and every query string: any bytes (invalid UTF-8, NULs, huge words,
 * combining marks) must analyze to OG_OK with strictly increasing positions below the word
 * count and non-empty NUL-terminated terms; the edit distance of the first two terms must be
 * symmetric.  Seeds: tests/fuzz/corpus/fuzz_analyzer/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/analyzer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static og_analyzer *a;
    if (!a && og_analyzer_new(&a, NULL) != OG_OK) abort();
    og_text_tokens t = OG_TEXT_TOKENS_INIT;
    if (og_analyze(a, (const char *)data, size, &t) != OG_OK) abort();
    for (size_t i = 0; i < t.n; i++) {
        if (i && t.v[i].pos <= t.v[i - 1].pos) abort();
        if (t.v[i].pos >= t.nwords) abort();
        const char *term = og_text_term(&t, i);
        if (term[t.v[i].len] != '\0' || t.v[i].len == 0) abort();
    }
    if (t.n >= 2) {
        const char *x = og_text_term(&t, 0), *y = og_text_term(&t, 1);
        uint32_t d1 = og_text_edit_distance(x, t.v[0].len, y, t.v[1].len, 3);
        uint32_t d2 = og_text_edit_distance(y, t.v[1].len, x, t.v[0].len, 3);
        if (d1 != d2) abort();
    }
    og_text_tokens_free(&t);
    return 0;
}
