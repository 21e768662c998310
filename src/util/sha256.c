/*
 * sha256.c — SHA-256 over OpenSSL's EVP interface (see sha256.h).  One-shot EVP_Digest keeps
 * this stateless and thread-safe.
 */
#include "util/sha256.h"

#include <openssl/evp.h>

#include "util/error.h"

og_status og_sha256(const void *data, size_t len, uint8_t out[OG_SHA256_LEN])
{
    unsigned int n = 0;
    if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != OG_SHA256_LEN)
        return og_err(OG_ERR_INTERNAL, "sha256: OpenSSL EVP_Digest failed");
    return OG_OK;
}

og_status og_sha256_hex(const void *data, size_t len, char out[OG_SHA256_HEX_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t d[OG_SHA256_LEN];
    OG_TRY(og_sha256(data, len, d));
    for (size_t i = 0; i < OG_SHA256_LEN; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[OG_SHA256_HEX_LEN] = '\0';
    return OG_OK;
}

int og_sha256_hex_valid(const char *s)
{
    for (size_t i = 0; i < OG_SHA256_HEX_LEN; i++) {
        char ch = s[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return 0;
    }
    return s[OG_SHA256_HEX_LEN] == '\0';
}
