/*
 * s3_sigv4.c — AWS Signature Version 4 (header form) for the S3 adapter.
 *
 * Canonical request = method \n canonical URI \n canonical query \n canonical headers \n
 * signed header names \n payload hash; string to sign = "AWS4-HMAC-SHA256" \n date-time \n
 * scope \n hex SHA-256(canonical request); signature = hex HMAC(signing key, string to sign).
 * HMAC-SHA256 and SHA-256 come from OpenSSL.  Everything is deterministic given the inputs,
 * which is what lets the tests check the published AWS examples.
 */
#include "store/s3_sigv4.h"

#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static const char hexdig[] = "0123456789abcdef";

static void to_hex(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hexdig[p[i] >> 4];
        out[2 * i + 1] = hexdig[p[i] & 15];
    }
    out[2 * n] = '\0';
}

void og_sigv4_sha256_hex(const void *data, size_t len, char out[65])
{
    uint8_t md[SHA256_DIGEST_LENGTH];
    SHA256(data ? data : (const void *)"", len, md);
    to_hex(md, sizeof md, out);
}

static og_status hmac(const uint8_t *key, size_t klen, const char *msg, size_t mlen, uint8_t out[32])
{
    unsigned int olen = 0;
    if (!HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, mlen, out, &olen) || olen != 32)
        return og_err(OG_ERR_INTERNAL, "sigv4: HMAC-SHA256 failed");
    return OG_OK;
}

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~';
}

og_status og_sigv4_uri_encode(og_buf *out, const char *s, int keep_slash)
{
    static const char up[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (unreserved(*p) || (keep_slash && *p == '/')) {
            OG_TRY(og_buf_append_byte(out, *p));
        } else {
            char esc[3] = {'%', up[*p >> 4], up[*p & 15]};
            OG_TRY(og_buf_append(out, esc, 3));
        }
    }
    return OG_OK;
}

typedef struct enc_param {
    char *name;
    char *value;
} enc_param;

static int param_cmp(const void *a, const void *b)
{
    const enc_param *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static char *encode_dup(const char *s, og_status *st)
{
    og_buf b = OG_BUF_INIT;
    *st = og_sigv4_uri_encode(&b, s ? s : "", 0);
    if (*st == OG_OK) *st = og_buf_append_byte(&b, 0);
    if (*st != OG_OK) {
        og_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

og_status og_sigv4_query(og_buf *out, const og_sigv4_param *params, size_t n)
{
    if (n == 0) return og_buf_append_str(out, "");
    enc_param *e = calloc(n, sizeof *e);
    if (!e) return og_err(OG_ERR_NOMEM, "sigv4: out of memory");
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        e[i].name = encode_dup(params[i].name, &st);
        if (st == OG_OK) e[i].value = encode_dup(params[i].value, &st);
    }
    if (st == OG_OK) {
        qsort(e, n, sizeof *e, param_cmp);
        for (size_t i = 0; i < n && st == OG_OK; i++)
            st = og_buf_printf(out, "%s%s=%s", i ? "&" : "", e[i].name, e[i].value);
    }
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].value);
    }
    free(e);
    return st;
}

og_status og_sigv4_signing_key(const char *secret, const char *date, const char *region,
                               const char *service, uint8_t key[32])
{
    size_t sl = strlen(secret);
    uint8_t *k0 = malloc(sl + 4);
    if (!k0) return og_err(OG_ERR_NOMEM, "sigv4: out of memory");
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, secret, sl);
    uint8_t a[32], b[32];
    og_status st = hmac(k0, sl + 4, date, strlen(date), a);
    if (st == OG_OK) st = hmac(a, 32, region, strlen(region), b);
    if (st == OG_OK) st = hmac(b, 32, service, strlen(service), a);
    if (st == OG_OK) st = hmac(a, 32, "aws4_request", 12, key);
    memset(k0, 0, sl + 4);
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    free(k0);
    return st;
}

typedef struct canon_header {
    char *name;  /* lower-cased */
    char *value; /* trimmed, spaces collapsed */
} canon_header;

static int header_cmp(const void *a, const void *b)
{
    return strcmp(((const canon_header *)a)->name, ((const canon_header *)b)->name);
}

static char *lower_dup(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    for (size_t i = 0; i <= n; i++) d[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] + 32) : s[i];
    return d;
}

static char *trim_dup(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    size_t o = 0;
    int space = 0;
    for (const char *p = s; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            space = 1;
            continue;
        }
        if (space && o > 0) d[o++] = ' ';
        space = 0;
        d[o++] = *p;
    }
    d[o] = '\0';
    return d;
}

/* Appends "name:value\n" lines (duplicate names joined with ',') to canon and
 * "name;name" to signed_names. */
static og_status canonical_headers(const og_sigv4_header *h, size_t n, og_buf *canon,
                                   og_buf *signed_names)
{
    if (n == 0) return og_err(OG_ERR_INVALID, "sigv4: no headers to sign");
    canon_header *c = calloc(n, sizeof *c);
    if (!c) return og_err(OG_ERR_NOMEM, "sigv4: out of memory");
    og_status st = OG_OK;
    for (size_t i = 0; i < n; i++) {
        c[i].name = lower_dup(h[i].name);
        c[i].value = trim_dup(h[i].value ? h[i].value : "");
        if (!c[i].name || !c[i].value) st = og_err(OG_ERR_NOMEM, "sigv4: out of memory");
    }
    if (st == OG_OK) {
        /* a stable sort keeps duplicates in the order given, as AWS requires */
        for (size_t i = 1; i < n; i++) {
            canon_header t = c[i];
            size_t j = i;
            while (j > 0 && header_cmp(&c[j - 1], &t) > 0) {
                c[j] = c[j - 1];
                j--;
            }
            c[j] = t;
        }
        for (size_t i = 0; i < n && st == OG_OK; i++) {
            int dup = i > 0 && strcmp(c[i - 1].name, c[i].name) == 0;
            if (dup) {
                canon->len--; /* drop the previous '\n' */
                st = og_buf_printf(canon, ",%s\n", c[i].value);
            } else {
                st = og_buf_printf(canon, "%s:%s\n", c[i].name, c[i].value);
                if (st == OG_OK) st = og_buf_printf(signed_names, "%s%s", i ? ";" : "", c[i].name);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(c[i].name);
        free(c[i].value);
    }
    free(c);
    return st;
}

og_status og_sigv4_sign(const og_sigv4_request *r, const char *access_key, const char *secret,
                        og_buf *authorization, og_buf *canonical_out, og_buf *sts_out)
{
    if (!r || !r->method || !r->canonical_uri || !r->payload_hash || !r->amz_date || !r->region ||
        !r->service || !access_key || !secret)
        return og_err(OG_ERR_INVALID, "sigv4: incomplete request");
    if (strlen(r->amz_date) != 16 || r->amz_date[8] != 'T' || r->amz_date[15] != 'Z')
        return og_err(OG_ERR_INVALID, "sigv4: bad x-amz-date \"%s\"", r->amz_date);
    char date[9];
    memcpy(date, r->amz_date, 8);
    date[8] = '\0';

    og_buf canon = OG_BUF_INIT, names = OG_BUF_INIT, sts = OG_BUF_INIT;
    og_status st = og_buf_printf(&canon, "%s\n%s\n%s\n", r->method, r->canonical_uri,
                                 r->canonical_query ? r->canonical_query : "");
    if (st == OG_OK) st = canonical_headers(r->headers, r->nheaders, &canon, &names);
    if (st == OG_OK) st = og_buf_printf(&canon, "\n%s\n%s", og_buf_cstr(&names), r->payload_hash);
    char creq_hash[65];
    if (st == OG_OK) {
        og_sigv4_sha256_hex(canon.data, canon.len, creq_hash);
        st = og_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", r->amz_date, date,
                           r->region, r->service, creq_hash);
    }
    uint8_t key[32], sig[32];
    char sig_hex[65];
    if (st == OG_OK) st = og_sigv4_signing_key(secret, date, r->region, r->service, key);
    if (st == OG_OK) st = hmac(key, 32, (const char *)sts.data, sts.len, sig);
    memset(key, 0, sizeof key);
    if (st == OG_OK) {
        to_hex(sig, 32, sig_hex);
        st = og_buf_printf(authorization,
                           "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request,SignedHeaders=%s,Signature=%s",
                           access_key, date, r->region, r->service, og_buf_cstr(&names), sig_hex);
    }
    if (st == OG_OK && canonical_out) st = og_buf_append(canonical_out, canon.data, canon.len);
    if (st == OG_OK && sts_out) st = og_buf_append(sts_out, sts.data, sts.len);
    og_buf_free(&canon);
    og_buf_free(&names);
    og_buf_free(&sts);
    return st;
}
