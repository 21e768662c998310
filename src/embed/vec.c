/*
 * vec.c — what every vector passes before anyone stores or searches it: finite components,
 * not all zero, scaled to unit L2 norm (so L2 and cosine order agree, reference-language.md
 * §3.5); and the mock provider, which hashes text to a vector.
 *
 * The mock is for tests and demos only: equal texts give equal vectors and different texts
 * unrelated ones.  It has no notion of meaning.
 */
#include <math.h>
#include <string.h>

#include "embed/embed_internal.h"

og_status og_embed_normalize(float *v, uint32_t dim, const char *what)
{
    double ss = 0;
    for (uint32_t i = 0; i < dim; i++) {
        if (!isfinite(v[i]))
            return og_embed_fail(OG_EMBED_E_BAD_VECTOR, "%s has a non-finite component at %u", what, i);
        ss += (double)v[i] * (double)v[i];
    }
    if (!(ss > 0) || !isfinite(ss)) return og_embed_fail(OG_EMBED_E_BAD_VECTOR, "%s is all zero", what);
    double inv = 1.0 / sqrt(ss);
    for (uint32_t i = 0; i < dim; i++) v[i] = (float)(v[i] * inv);
    return OG_OK;
}

void og_embed_mock_vector(const char *text, size_t len, uint32_t dim, float *out)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)text[i];
        h *= 0x100000001b3ULL;
    }
    uint64_t x = h ? h : 0x9e3779b97f4a7c15ULL;
    double ss = 0;
    for (uint32_t i = 0; i < dim; i++) {
        x ^= x << 13; /* xorshift64 */
        x ^= x >> 7;
        x ^= x << 17;
        double u = (double)(x >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
        out[i] = (float)(u * 2.0 - 1.0);
        ss += (double)out[i] * out[i];
    }
    if (!(ss > 0)) { /* astronomically unlikely; keep the contract anyway */
        out[0] = 1.0f;
        ss = 1;
    }
    double inv = 1.0 / sqrt(ss);
    for (uint32_t i = 0; i < dim; i++) out[i] = (float)(out[i] * inv);
}
