/*
 * fuzz_embed_wire.c — libFuzzer target for what the embed layer decodes from outside: provider
 * response bodies (openai-compatible / gemini single and batch shapes), error bodies (the
 * excerpt and key redaction), and `omnigraph embed` spec files.  The first byte picks the
 * decoder and the number of inputs; the rest is the body.  A success must leave unit-norm
 * finite vectors; an error excerpt must never contain the key.  Seeds:
 * tests/fuzz/corpus/fuzz_embed_wire/.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    uint8_t sel = data[0];
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    og_embed_config c;
    og_embed_config_defaults(&c, (sel & 1) ? OG_EMBED_GEMINI : OG_EMBED_OPENAI_COMPATIBLE);
    snprintf(c.api_key, sizeof c.api_key, "sk-fuzz-key");
    switch ((sel >> 1) % 3) {
    case 0: {
        size_t n = 1 + ((sel >> 3) & 3);
        uint32_t dim = 1 + ((sel >> 5) & 7);
        float v[4 * 8];
        if (og_embed_wire_parse(&c, body, len, n, dim, v) == OG_OK) {
            for (size_t i = 0; i < n; i++) {
                double ss = 0;
                for (uint32_t k = 0; k < dim; k++) {
                    if (!isfinite(v[i * dim + k])) abort();
                    ss += (double)v[i * dim + k] * v[i * dim + k];
                }
                if (fabs(ss - 1.0) > 1e-3) abort();
            }
        }
        break;
    }
    case 1: {
        char ex[400];
        og_embed_wire_error_excerpt(&c, body, len, ex, sizeof ex);
        if (strstr(ex, "sk-fuzz-key") || strlen(ex) >= sizeof ex) abort();
        break;
    }
    default: {
        og_embed_target *t = NULL;
        size_t n = 0;
        if (og_embed_spec_parse(&t, &n, body, len) == OG_OK) {
            for (size_t i = 0; i < n; i++)
                if (!t[i].dim || !t[i].type[0] || !t[i].target[0] || !t[i].source[0]) abort();
            free(t);
        }
        break;
    }
    }
    return 0;
}
