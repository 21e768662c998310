/*
 * config.c — the embedding configuration: provider defaults, the OMNIGRAPH_EMBED_* environment
 * (reference-surfaces.md §6), names of providers and error kinds, and the typed-failure helper.
 *
 * Why the key is read here and checked later: an explicit-vector `nearest` needs no
 * credentials, so opening a graph must not fail for want of a key; only the first call that
 * really goes to the network reports it (kind AUTH).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "embed/embed_internal.h"
#include "util/error.h"

static _Thread_local og_embed_errkind last_kind;

og_embed_errkind og_embed_last_error(void) { return last_kind; }
void og_embed_set_kind(og_embed_errkind k) { last_kind = k; }

const char *og_embed_provider_name(og_embed_provider p)
{
    switch (p) {
    case OG_EMBED_OPENAI_COMPATIBLE: return "openai-compatible";
    case OG_EMBED_OPENAI: return "openai";
    case OG_EMBED_GEMINI: return "gemini";
    case OG_EMBED_MOCK: return "mock";
    }
    return "unknown";
}

og_status og_embed_provider_parse(const char *s, og_embed_provider *out)
{
    static const og_embed_provider all[] = {OG_EMBED_OPENAI_COMPATIBLE, OG_EMBED_OPENAI, OG_EMBED_GEMINI,
                                            OG_EMBED_MOCK};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && !strcmp(s, og_embed_provider_name(all[i]))) {
            *out = all[i];
            return OG_OK;
        }
    return og_embed_fail(OG_EMBED_E_CONFIG, "unknown provider '%s' (openai-compatible, openai, gemini or mock)",
                         s ? s : "");
}

const char *og_embed_errkind_name(og_embed_errkind k)
{
    static const char *const names[] = {"none",    "config",    "auth",     "quota",        "request",  "server",
                                        "transport", "timeout", "deadline", "bad_response", "dimension", "bad_vector"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

og_status og_embed_kind_status(og_embed_errkind k)
{
    switch (k) {
    case OG_EMBED_E_NONE: return OG_OK;
    case OG_EMBED_E_CONFIG:
    case OG_EMBED_E_REQUEST: return OG_ERR_INVALID;
    case OG_EMBED_E_AUTH: return OG_ERR_AUTH;
    case OG_EMBED_E_QUOTA: return OG_ERR_THROTTLED;
    case OG_EMBED_E_SERVER:
    case OG_EMBED_E_TRANSPORT:
    case OG_EMBED_E_TIMEOUT: return OG_ERR_IO;
    case OG_EMBED_E_DEADLINE: return OG_ERR_LIMIT;
    case OG_EMBED_E_BAD_RESPONSE:
    case OG_EMBED_E_BAD_VECTOR: return OG_ERR_CORRUPT;
    case OG_EMBED_E_DIMENSION: return OG_ERR_TYPE;
    }
    return OG_ERR_INTERNAL;
}

og_status og_embed_fail(og_embed_errkind k, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    last_kind = k;
    return og_err(og_embed_kind_status(k), "embedding %s error: %s", og_embed_errkind_name(k), msg);
}

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

void og_embed_config_defaults(og_embed_config *c, og_embed_provider p)
{
    memset(c, 0, sizeof *c);
    c->provider = p;
    switch (p) {
    case OG_EMBED_OPENAI_COMPATIBLE:
        copy(c->base_url, sizeof c->base_url, "https://openrouter.ai/api/v1");
        copy(c->model, sizeof c->model, "openai/text-embedding-3-large");
        break;
    case OG_EMBED_OPENAI:
        copy(c->base_url, sizeof c->base_url, "https://api.openai.com/v1");
        copy(c->model, sizeof c->model, "text-embedding-3-large");
        break;
    case OG_EMBED_GEMINI:
        copy(c->base_url, sizeof c->base_url, "https://generativelanguage.googleapis.com/v1beta");
        copy(c->model, sizeof c->model, "gemini-embedding-2");
        break;
    case OG_EMBED_MOCK:
        copy(c->model, sizeof c->model, "mock");
        break;
    }
    c->timeout_ms = 30000;
    c->deadline_ms = 60000;
    c->retry_attempts = 4;
    c->backoff_ms = 200;
    c->batch_inputs = 64;
    c->batch_bytes = 256 * 1024;
    c->concurrency = 4;
}

static int truthy(const char *v)
{
    return v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no") && strcasecmp(v, "off");
}

/* A non-negative integer variable within [min, max]; unset or empty keeps *out. */
static og_status env_long(const char *name, long min, long max, long *out)
{
    const char *v = getenv(name);
    if (!v || !*v) return OG_OK;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < min || x > max)
        return og_embed_fail(OG_EMBED_E_CONFIG, "%s must be an integer in %ld..%ld (got '%s')", name, min, max, v);
    *out = x;
    return OG_OK;
}

og_status og_embed_config_from_env(og_embed_config *c)
{
    og_embed_provider p = OG_EMBED_OPENAI_COMPATIBLE;
    const char *pv = getenv("OMNIGRAPH_EMBED_PROVIDER");
    if (pv && *pv) OG_TRY(og_embed_provider_parse(pv, &p));
    int forced = truthy(getenv("OMNIGRAPH_EMBEDDINGS_MOCK"));
    if (forced) {
        if (p != OG_EMBED_MOCK)
            fprintf(stderr, "omnigraph: warning: OMNIGRAPH_EMBEDDINGS_MOCK is set: using the mock embedding provider "
                            "instead of %s (mock vectors are not semantic)\n",
                    og_embed_provider_name(p));
        p = OG_EMBED_MOCK;
    }
    og_embed_config_defaults(c, p);
    c->mock_forced = forced;
    const char *base = getenv("OMNIGRAPH_EMBED_BASE_URL");
    if (base && *base && p != OG_EMBED_MOCK) {
        if (strlen(base) >= sizeof c->base_url)
            return og_embed_fail(OG_EMBED_E_CONFIG, "OMNIGRAPH_EMBED_BASE_URL is longer than %zu bytes",
                                 sizeof c->base_url - 1);
        if (strncmp(base, "http://", 7) && strncmp(base, "https://", 8))
            return og_embed_fail(OG_EMBED_E_CONFIG, "OMNIGRAPH_EMBED_BASE_URL must start with http:// or https://");
        copy(c->base_url, sizeof c->base_url, base);
        size_t n = strlen(c->base_url);
        while (n > 0 && c->base_url[n - 1] == '/') c->base_url[--n] = 0;
        c->base_url_overridden = 1;
    }
    const char *model = getenv("OMNIGRAPH_EMBED_MODEL");
    if (model && *model) {
        if (strlen(model) >= sizeof c->model)
            return og_embed_fail(OG_EMBED_E_CONFIG, "OMNIGRAPH_EMBED_MODEL is longer than %zu bytes", sizeof c->model - 1);
        copy(c->model, sizeof c->model, model);
    }
    const char *key = NULL;
    if (p == OG_EMBED_OPENAI_COMPATIBLE) {
        key = getenv("OPENROUTER_API_KEY");
        if (!key || !*key) key = getenv("OPENAI_API_KEY");
    } else if (p == OG_EMBED_OPENAI) {
        key = getenv("OPENAI_API_KEY");
    } else if (p == OG_EMBED_GEMINI) {
        key = getenv("GEMINI_API_KEY");
    }
    if (key && *key) {
        if (strlen(key) >= sizeof c->api_key)
            return og_embed_fail(OG_EMBED_E_CONFIG, "the API key is longer than %zu bytes", sizeof c->api_key - 1);
        copy(c->api_key, sizeof c->api_key, key);
    }
    long v;
    v = c->deadline_ms;
    OG_TRY(env_long("OMNIGRAPH_EMBED_DEADLINE_MS", 0, 86400000L, &v));
    c->deadline_ms = v;
    v = c->timeout_ms;
    OG_TRY(env_long("OMNIGRAPH_EMBED_TIMEOUT_MS", 1, 86400000L, &v));
    c->timeout_ms = v;
    v = c->retry_attempts;
    OG_TRY(env_long("OMNIGRAPH_EMBED_RETRY_ATTEMPTS", 1, 100, &v));
    c->retry_attempts = (int)v;
    v = c->backoff_ms;
    OG_TRY(env_long("OMNIGRAPH_EMBED_RETRY_BACKOFF_MS", 0, 600000L, &v));
    c->backoff_ms = v;
    v = (long)c->batch_inputs;
    OG_TRY(env_long("OMNIGRAPH_EMBED_BATCH_INPUTS", 1, 4096, &v));
    c->batch_inputs = (size_t)v;
    v = (long)c->batch_bytes;
    OG_TRY(env_long("OMNIGRAPH_EMBED_BATCH_BYTES", 1, 64L * 1024 * 1024, &v));
    c->batch_bytes = (size_t)v;
    v = c->concurrency;
    OG_TRY(env_long("OMNIGRAPH_EMBED_CONCURRENCY", 1, 64, &v));
    c->concurrency = (int)v;
    return OG_OK;
}
