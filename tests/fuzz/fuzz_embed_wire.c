/*
 * fuzz_embed_wire.c — libFuzzer target for what the embed layer decodes from outside: provider
 * response bodies (openai-compatible / gemini single and batch shapes), error bodies (the
 * excerpt and key redaction), `omnigraph embed` spec files, and the record pipeline with a
 * --select (first line) over NDJSON records (the rest), with the mock provider.  The first
 * byte picks the decoder and the number of inputs; the rest is the body.  A success must
 * leave unit-norm finite vectors; an error excerpt must never contain the key; the pipeline's
 * counts must stay consistent.  Seeds:
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
    switch ((sel >> 1) % 4) {
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
    case 3: {
        const char *nl = memchr(body, '\n', len);
        size_t sl = nl ? (size_t)(nl - body) : len;
        char selb[256];
        if (sl >= sizeof selb) sl = sizeof selb - 1;
        memcpy(selb, body, sl);
        selb[sl] = 0;
        const char *rest = nl ? nl + 1 : body + len;
        size_t rl = len - (size_t)(rest - body);
        static const og_embed_target T[] = {{"Doc", "vec", "body", 3, ""}};
        og_embed_config m;
        og_embed_config_defaults(&m, OG_EMBED_MOCK);
        og_embedder *e;
        if (og_embedder_open(&e, &m) != OG_OK) abort();
        const char *sels[1] = {selb};
        og_embed_filter f = {NULL, 0, sels, selb[0] ? 1 : 0};
        char *ob = NULL;
        size_t ol = 0;
        FILE *in = rl ? fmemopen((void *)rest, rl, "r") : NULL;
        FILE *out = open_memstream(&ob, &ol);
        og_embed_summary s;
        if (in && out) {
            og_status st = og_embed_run(e, T, 1, (og_embed_mode)((sel >> 3) % 3), &f, in, "fuzz", out, (sel >> 5) & 1, &s,
                                        NULL, NULL);
            if (st == OG_OK && (s.selected > s.records || s.embedded + s.cleaned > s.selected)) abort();
        }
        if (in) fclose(in);
        if (out) fclose(out);
        free(ob);
        og_embedder_close(e);
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
