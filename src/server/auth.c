/*
 * auth.c — token digests and the startup classifier (auth.h).  SHA-256 and the
 * constant-time comparison are OpenSSL's (EVP_Digest, CRYPTO_memcmp).
 */
#include "server/auth.h"

#include <ctype.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGEST_LEN 32

typedef struct token_entry {
    unsigned char digest[DIGEST_LEN];
    char *actor;
} token_entry;

struct og_tokenset {
    token_entry *v;
    size_t n, cap;
};

static og_status fail(og_status st, const char *msg)
{
    /* The public API has no way to set the thread's message from a surface; the server
     * reports its own startup errors through the message it prints. */
    fprintf(stderr, "omnigraph-server: %s\n", msg);
    return st;
}

og_status og_tokenset_new(og_tokenset **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? OG_OK : OG_ERR_NOMEM;
}

void og_tokenset_free(og_tokenset *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) free(t->v[i].actor);
    OPENSSL_cleanse(t->v, t->cap * sizeof *t->v);
    free(t->v);
    free(t);
}

static void sha256(const void *p, size_t n, unsigned char out[DIGEST_LEN])
{
    unsigned int len = DIGEST_LEN;
    if (!EVP_Digest(p, n, out, &len, EVP_sha256(), NULL)) memset(out, 0, DIGEST_LEN);
}

/* [s, s+n) without surrounding white space. */
static const char *trim(const char *s, size_t *n)
{
    size_t len = strlen(s);
    while (len && isspace((unsigned char)*s)) s++, len--;
    while (len && isspace((unsigned char)s[len - 1])) len--;
    *n = len;
    return s;
}

og_status og_tokenset_add(og_tokenset *t, const char *actor, const char *token)
{
    size_t an, tn;
    const char *a = trim(actor ? actor : "", &an), *k = trim(token ? token : "", &tn);
    if (!an) return fail(OG_ERR_INVALID, "bearer tokens: blank actor id");
    if (!tn) return fail(OG_ERR_INVALID, "bearer tokens: blank token value");
    unsigned char d[DIGEST_LEN];
    sha256(k, tn, d);
    for (size_t i = 0; i < t->n; i++) {
        if (strlen(t->v[i].actor) == an && !memcmp(t->v[i].actor, a, an))
            return fail(OG_ERR_INVALID, "bearer tokens: duplicate actor id");
        if (!CRYPTO_memcmp(t->v[i].digest, d, DIGEST_LEN))
            return fail(OG_ERR_INVALID, "bearer tokens: two actors share one token value");
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        token_entry *v = realloc(t->v, cap * sizeof *v);
        if (!v) return OG_ERR_NOMEM;
        t->v = v;
        t->cap = cap;
    }
    char *copy = strndup(a, an);
    if (!copy) return OG_ERR_NOMEM;
    memcpy(t->v[t->n].digest, d, DIGEST_LEN);
    t->v[t->n++].actor = copy;
    OPENSSL_cleanse(d, sizeof d);
    return OG_OK;
}

og_status og_tokenset_add_json(og_tokenset *t, const char *json, const char *what)
{
    json_error_t e;
    json_t *o = json_loads(json, JSON_REJECT_DUPLICATES, &e);
    char msg[256];
    if (!o || !json_is_object(o)) {
        json_decref(o);
        snprintf(msg, sizeof msg, "%s: not a JSON object {\"actor\": \"token\"} (duplicate keys are refused)", what);
        return fail(OG_ERR_INVALID, msg);
    }
    const char *actor;
    json_t *v;
    og_status st = OG_OK;
    json_object_foreach(o, actor, v) {
        if (!json_is_string(v)) {
            snprintf(msg, sizeof msg, "%s: the token of actor '%.64s' is not a string", what, actor);
            st = fail(OG_ERR_INVALID, msg);
            break;
        }
        if ((st = og_tokenset_add(t, actor, json_string_value(v)))) break;
    }
    json_decref(o);
    return st;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 4096) {
            if (cap > (1u << 20)) break; /* a token file is small */
            char *b = realloc(buf, cap = cap ? cap * 2 : 8192);
            if (!b) break;
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (!r) break;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static og_status tokens_from_env(og_tokenset *t);

/* Overwrites a variable's value where it lives (the process's initial environment block is
 * what /proc/PID/environ shows, and unsetenv alone leaves it there), then removes it: after
 * reading, only the digests remain. */
static void env_scrub(const char *name)
{
    char *v = getenv(name);
    if (v) OPENSSL_cleanse(v, strlen(v));
    unsetenv(name);
}

og_status og_tokenset_from_env(og_tokenset *t)
{
    og_status st = tokens_from_env(t);
    env_scrub("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    env_scrub("OMNIGRAPH_SERVER_BEARER_TOKEN");
    return st;
}

static og_status tokens_from_env(og_tokenset *t)
{
    const char *aws = getenv("OMNIGRAPH_SERVER_BEARER_TOKENS_AWS_SECRET");
    if (aws && *aws)
        return fail(OG_ERR_UNSUPPORTED, "OMNIGRAPH_SERVER_BEARER_TOKENS_AWS_SECRET is set, but this build has no "
                                        "AWS Secrets Manager client; use OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    const char *file = getenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    const char *json = getenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    og_status st = OG_OK;
    if (file && *file) {
        char *text = read_file(file);
        if (!text) return fail(OG_ERR_IO, "OMNIGRAPH_SERVER_BEARER_TOKENS_FILE: cannot read the file");
        st = og_tokenset_add_json(t, text, "OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
        OPENSSL_cleanse(text, strlen(text));
        free(text);
    } else if (json && *json) {
        st = og_tokenset_add_json(t, json, "OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    }
    if (st) return st;
    const char *one = getenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    if (one && *one) st = og_tokenset_add(t, "default", one);
    return st;
}

size_t og_tokenset_count(const og_tokenset *t) { return t ? t->n : 0; }

const char *og_tokenset_match(const og_tokenset *t, const char *presented, size_t len)
{
    if (!t || !t->n) return NULL;
    unsigned char d[DIGEST_LEN];
    sha256(presented, len, d);
    /* Every digest is compared; the first match is remembered without leaving the loop. */
    size_t found = t->n;
    for (size_t i = 0; i < t->n; i++) {
        int eq = CRYPTO_memcmp(t->v[i].digest, d, DIGEST_LEN) == 0;
        size_t take = (size_t)0 - (size_t)(eq & (found == t->n));
        found = (found & ~take) | (i & take);
    }
    OPENSSL_cleanse(d, sizeof d);
    return found < t->n ? t->v[found].actor : NULL;
}

og_status og_auth_classify(size_t ntokens, int has_policy, int unauthenticated, og_auth_mode *out)
{
    if (has_policy && !ntokens)
        return fail(OG_ERR_INVALID, "a policy is configured but no bearer tokens: set OMNIGRAPH_SERVER_BEARER_TOKEN, "
                                    "OMNIGRAPH_SERVER_BEARER_TOKENS_JSON or OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    if (has_policy) {
        *out = OG_AUTH_POLICY;
        return OG_OK;
    }
    if (ntokens) {
        *out = OG_AUTH_DEFAULT_DENY;
        return OG_OK;
    }
    if (!unauthenticated)
        return fail(OG_ERR_INVALID, "no bearer tokens and no policy: refusing to start; configure tokens "
                                    "(OMNIGRAPH_SERVER_BEARER_TOKEN...) or pass --unauthenticated on a trusted network");
    *out = OG_AUTH_OPEN;
    return OG_OK;
}

const char *og_auth_mode_name(og_auth_mode m)
{
    switch (m) {
    case OG_AUTH_OPEN: return "open";
    case OG_AUTH_DEFAULT_DENY: return "default_deny";
    case OG_AUTH_POLICY: return "policy";
    }
    return "?";
}
