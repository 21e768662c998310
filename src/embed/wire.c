/*
 * wire.c — each provider's wire format (reference-surfaces.md §6):
 *   openai-compatible, openai   POST {base}/embeddings, "Authorization: Bearer <key>",
 *                               {"model","input":[…],"dimensions":N} -> {"data":[{"index","embedding"}]}
 *   gemini                      POST {base}/models/{model}:embedContent, "x-goog-api-key: <key>",
 *                               {"content":{"parts":[{"text"}]},"taskType","outputDimensionality"}
 *                               -> {"embedding":{"values"}}; several inputs go to
 *                               :batchEmbedContents as {"requests":[…]} -> {"embeddings":[…]}
 * Responses are checked strictly: the count, the indices, the length of every vector (exactly
 * Vector(N): a provider that ignores the requested dimension is a typed error, never a
 * truncation), and then each vector is validated and normalised.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "embed/embed_internal.h"
#include "util/error.h"

static og_status nomem(void) { return og_err(OG_ERR_NOMEM, "embedding: out of memory"); }

static og_status append_model_path(og_buf *url, const char *model)
{
    if (strncmp(model, "models/", 7)) OG_TRY(og_buf_append_str(url, "models/"));
    for (const unsigned char *p = (const unsigned char *)model; *p; p++) {
        int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                    *p == '.' || *p == '_' || *p == '~' || *p == '/';
        if (plain) OG_TRY(og_buf_append_byte(url, *p));
        else OG_TRY(og_buf_printf(url, "%%%02X", *p));
    }
    return OG_OK;
}

static json_t *gemini_item(const char *model, const char *text, size_t len, uint32_t dim, og_embed_role role,
                           int with_model)
{
    json_t *t = json_stringn(text, len);
    if (!t) return NULL;
    json_t *o = json_pack("{s:{s:[{s:o}]}, s:s, s:I}", "content", "parts", "text", t, "taskType",
                          role == OG_EMBED_DOCUMENT ? "RETRIEVAL_DOCUMENT" : "RETRIEVAL_QUERY", "outputDimensionality",
                          (json_int_t)dim);
    if (o && with_model) {
        char m[300];
        snprintf(m, sizeof m, "%s%s", strncmp(model, "models/", 7) ? "models/" : "", model);
        if (json_object_set_new(o, "model", json_string(m))) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static og_status bad_text(size_t i)
{
    return og_embed_fail(OG_EMBED_E_REQUEST, "input %zu is not valid UTF-8 text", i);
}

og_status og_embed_wire_request(const og_embed_config *c, const char *const *texts, const size_t *lens, size_t n,
                                uint32_t dim, og_embed_role role, og_buf *url, og_buf *body)
{
    json_t *root = NULL;
    og_buf_reset(url);
    og_buf_reset(body);
    OG_TRY(og_buf_append_str(url, c->base_url));
    if (c->provider == OG_EMBED_GEMINI) {
        OG_TRY(og_buf_append_byte(url, '/'));
        OG_TRY(append_model_path(url, c->model));
        OG_TRY(og_buf_append_str(url, n == 1 ? ":embedContent" : ":batchEmbedContents"));
        if (n == 1) {
            root = gemini_item(c->model, texts[0], lens[0], dim, role, 0);
            if (!root) return bad_text(0);
        } else {
            json_t *reqs = json_array();
            root = json_pack("{s:o}", "requests", reqs);
            if (!root) return nomem();
            for (size_t i = 0; i < n; i++) {
                json_t *it = gemini_item(c->model, texts[i], lens[i], dim, role, 1);
                if (!it) {
                    json_decref(root);
                    return bad_text(i);
                }
                json_array_append_new(reqs, it);
            }
        }
    } else {
        OG_TRY(og_buf_append_str(url, "/embeddings"));
        json_t *in = json_array();
        root = json_pack("{s:s, s:o, s:I}", "model", c->model, "input", in, "dimensions", (json_int_t)dim);
        if (!root) return nomem();
        for (size_t i = 0; i < n; i++) {
            json_t *t = json_stringn(texts[i], lens[i]);
            if (!t) {
                json_decref(root);
                return bad_text(i);
            }
            json_array_append_new(in, t);
        }
    }
    char *s = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!s) return nomem();
    og_status st = og_buf_append_str(body, s);
    free(s);
    return st;
}

og_status og_embed_wire_auth_header(const og_embed_config *c, char *out, size_t cap)
{
    out[0] = 0;
    const char *var = c->provider == OG_EMBED_GEMINI   ? "GEMINI_API_KEY"
                      : c->provider == OG_EMBED_OPENAI ? "OPENAI_API_KEY"
                                                       : "OPENROUTER_API_KEY (or OPENAI_API_KEY)";
    if (!c->api_key[0]) {
        /* A custom endpoint (a local Ollama, vLLM, llama.cpp or TEI server) may need no key. */
        if (c->provider == OG_EMBED_OPENAI_COMPATIBLE && c->base_url_overridden) return OG_OK;
        return og_embed_fail(OG_EMBED_E_AUTH, "provider %s needs an API key: set %s", og_embed_provider_name(c->provider),
                             var);
    }
    for (const char *p = c->api_key; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return og_embed_fail(OG_EMBED_E_CONFIG, "the API key in %s contains control characters", var);
    if (c->provider == OG_EMBED_GEMINI) snprintf(out, cap, "x-goog-api-key: %s", c->api_key);
    else snprintf(out, cap, "Authorization: Bearer %s", c->api_key);
    return OG_OK;
}

/* One vector: a JSON array of exactly dim numbers, validated and normalised into out. */
static og_status take_vector(const json_t *arr, uint32_t dim, size_t i, float *out)
{
    if (!json_is_array(arr))
        return og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "the response's vector %zu is not an array of numbers", i);
    if (json_array_size(arr) != dim)
        return og_embed_fail(OG_EMBED_E_DIMENSION,
                             "the provider returned a vector of %zu dimensions for input %zu; the property is Vector(%u)",
                             json_array_size(arr), i, dim);
    for (uint32_t k = 0; k < dim; k++) {
        const json_t *x = json_array_get(arr, k);
        if (!json_is_number(x))
            return og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "component %u of vector %zu is not a number", k, i);
        out[k] = (float)json_number_value(x);
    }
    char what[64];
    snprintf(what, sizeof what, "the vector of input %zu", i);
    return og_embed_normalize(out, dim, what);
}

og_status og_embed_wire_parse(const og_embed_config *c, const char *body, size_t len, size_t n, uint32_t dim,
                              float *out)
{
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "the response is not a JSON object");
    }
    og_status st = OG_OK;
    if (c->provider == OG_EMBED_GEMINI && n == 1) {
        json_t *e = json_object_get(root, "embedding");
        if (!json_is_object(e)) st = og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "the response has no \"embedding\" object");
        else st = take_vector(json_object_get(e, "values"), dim, 0, out);
    } else if (c->provider == OG_EMBED_GEMINI) {
        json_t *a = json_object_get(root, "embeddings");
        if (!json_is_array(a) || json_array_size(a) != n)
            st = og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "the response has %zu embeddings for %zu inputs",
                               json_is_array(a) ? json_array_size(a) : 0, n);
        for (size_t i = 0; st == OG_OK && i < n; i++) {
            json_t *e = json_array_get(a, i);
            st = take_vector(json_is_object(e) ? json_object_get(e, "values") : NULL, dim, i, out + i * dim);
        }
    } else {
        json_t *a = json_object_get(root, "data");
        if (!json_is_array(a) || json_array_size(a) != n)
            st = og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "the response has %zu embeddings for %zu inputs",
                               json_is_array(a) ? json_array_size(a) : 0, n);
        unsigned char *seen = st == OG_OK ? calloc(n ? n : 1, 1) : NULL;
        if (st == OG_OK && !seen) st = nomem();
        for (size_t i = 0; st == OG_OK && i < n; i++) {
            json_t *e = json_array_get(a, i);
            if (!json_is_object(e)) {
                st = og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "item %zu of \"data\" is not an object", i);
                break;
            }
            json_t *ix = json_object_get(e, "index");
            size_t at = i;
            if (ix) {
                if (!json_is_integer(ix) || json_integer_value(ix) < 0 || (size_t)json_integer_value(ix) >= n) {
                    st = og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "item %zu of \"data\" has a bad index", i);
                    break;
                }
                at = (size_t)json_integer_value(ix);
            }
            if (seen[at]) {
                st = og_embed_fail(OG_EMBED_E_BAD_RESPONSE, "index %zu appears twice in \"data\"", at);
                break;
            }
            seen[at] = 1;
            st = take_vector(json_object_get(e, "embedding"), dim, at, out + at * dim);
        }
        free(seen);
    }
    json_decref(root);
    return st;
}

void og_embed_redact(const og_embed_config *c, char *s, size_t cap)
{
    size_t kl = strlen(c->api_key);
    if (!kl || !cap) return;
    /* Short keys are redacted too: a test key of a few bytes must not leak either. */
    char tmp[2048];
    size_t o = 0;
    for (const char *p = s; *p && o + 1 < sizeof tmp;) {
        if (!strncmp(p, c->api_key, kl)) {
            const char *r = "[redacted]";
            for (const char *q = r; *q && o + 1 < sizeof tmp; q++) tmp[o++] = *q;
            p += kl;
        } else {
            tmp[o++] = *p++;
        }
    }
    tmp[o] = 0;
    snprintf(s, cap, "%s", tmp);
    /* A key cut by the truncation could leave a prefix long enough to matter: cut it away. */
    size_t sl = strlen(s);
    for (size_t k = kl - 1; k >= 4 && k > 0; k--) {
        if (sl >= k && !strncmp(s + sl - k, c->api_key, k)) {
            s[sl - k] = 0;
            break;
        }
    }
}

void og_embed_wire_error_excerpt(const og_embed_config *c, const char *body, size_t len, char *out, size_t cap)
{
    out[0] = 0;
    if (!cap) return;
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *msg = NULL;
    json_t *r = json_is_array(root) ? json_array_get(root, 0) : root;
    json_t *e = json_is_object(r) ? json_object_get(r, "error") : NULL;
    if (json_is_string(e)) msg = json_string_value(e);
    else if (json_is_object(e) && json_is_string(json_object_get(e, "message")))
        msg = json_string_value(json_object_get(e, "message"));
    else if (json_is_object(r) && json_is_string(json_object_get(r, "message")))
        msg = json_string_value(json_object_get(r, "message"));
    size_t o = 0;
    const char *src = msg ? msg : body;
    size_t sl = msg ? strlen(msg) : len;
    for (size_t i = 0; i < sl && o + 1 < cap && o < 300; i++) {
        unsigned char ch = (unsigned char)src[i];
        out[o++] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
    }
    out[o] = 0;
    json_decref(root);
    og_embed_redact(c, out, cap);
}
