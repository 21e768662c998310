/*
 * embed.h — the embedding layer: text in, L2-normalised float32 vectors out.
 *
 * One provider-neutral configuration (provider, model, base URL, key, deadlines) serves both
 * query-time embedding of `nearest($v.p, "text")` and the offline `omnigraph embed` pipeline,
 * so query vectors and document vectors come from one model (reference-surfaces.md §6).
 *
 * This layer sits beside api/: it is the only code that speaks to an embedding service, and
 * it is called by api/ and the CLI, never by engine/ or compiler/ (invariant 11).  It owns:
 *   - config.c    the configuration from the environment and its defaults;
 *   - client.c    batching (bounded by count and bytes), bounded concurrency (libcurl multi,
 *                 one thread), retries with back-off honouring Retry-After, per-request
 *                 timeout and overall deadline, typed errors;
 *   - wire.c      each provider's request body, headers and response shape;
 *   - vec.c       validation (finite, non-zero, exact dimension) and L2 normalisation, and the
 *                 deterministic mock provider;
 *   - cache.c     an append-only file cache keyed by (provider, model, dimension, role, text);
 *   - pipeline.c  the NDJSON record transform behind `omnigraph embed`.
 *
 * API keys never appear in a message, a log line or a URL; a response body quoted in an error
 * has any occurrence of the key replaced by "[redacted]".
 */
#ifndef OG_EMBED_EMBED_H
#define OG_EMBED_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef enum og_embed_provider {
    OG_EMBED_OPENAI_COMPATIBLE = 0, /* POST {base}/embeddings, bearer key; default OpenRouter */
    OG_EMBED_OPENAI,                /* the same wire format against api.openai.com */
    OG_EMBED_GEMINI,                /* POST {base}/models/{model}:embedContent, x-goog-api-key */
    OG_EMBED_MOCK                   /* deterministic hash vectors: offline, no key, NOT semantic */
} og_embed_provider;

/* The retrieval role; only Gemini sees it (RETRIEVAL_QUERY / RETRIEVAL_DOCUMENT). */
typedef enum og_embed_role { OG_EMBED_QUERY = 0, OG_EMBED_DOCUMENT = 1 } og_embed_role;

/* Why an embedding call failed (og_embed_last_error()).  Each maps to one og_status. */
typedef enum og_embed_errkind {
    OG_EMBED_E_NONE = 0,
    OG_EMBED_E_CONFIG,       /* OG_ERR_INVALID: unknown provider, bad number, bad URL */
    OG_EMBED_E_AUTH,         /* OG_ERR_AUTH: no key where one is needed, 401 / 403 */
    OG_EMBED_E_QUOTA,        /* OG_ERR_THROTTLED: 429 after the retries */
    OG_EMBED_E_REQUEST,      /* OG_ERR_INVALID: another 4xx (the request itself is wrong) */
    OG_EMBED_E_SERVER,       /* OG_ERR_IO: 5xx after the retries */
    OG_EMBED_E_TRANSPORT,    /* OG_ERR_IO: connection failures after the retries */
    OG_EMBED_E_TIMEOUT,      /* OG_ERR_IO: the per-request timeout, after the retries */
    OG_EMBED_E_DEADLINE,     /* OG_ERR_LIMIT: the overall deadline passed */
    OG_EMBED_E_BAD_RESPONSE, /* OG_ERR_CORRUPT: the body is not the provider's shape */
    OG_EMBED_E_DIMENSION,    /* OG_ERR_TYPE: a vector of another length than Vector(N) */
    OG_EMBED_E_BAD_VECTOR    /* OG_ERR_CORRUPT: NaN, Inf or an all-zero vector */
} og_embed_errkind;

typedef struct og_embed_config {
    og_embed_provider provider;
    char model[256];
    char base_url[1024];      /* no trailing slash */
    char api_key[1024];       /* secret: "" = none */
    int base_url_overridden;  /* a custom endpoint: a missing key is allowed (local servers) */
    int mock_forced;          /* OMNIGRAPH_EMBEDDINGS_MOCK was truthy */
    long timeout_ms;          /* per request (OMNIGRAPH_EMBED_TIMEOUT_MS, 30000) */
    long deadline_ms;         /* the whole call (OMNIGRAPH_EMBED_DEADLINE_MS, 60000; 0 = none) */
    int retry_attempts;       /* attempts per request, >= 1 (OMNIGRAPH_EMBED_RETRY_ATTEMPTS, 4) */
    long backoff_ms;          /* first back-off, doubled each retry (…_RETRY_BACKOFF_MS, 200) */
    size_t batch_inputs;      /* inputs per request (OMNIGRAPH_EMBED_BATCH_INPUTS, 64) */
    size_t batch_bytes;       /* text bytes per request (OMNIGRAPH_EMBED_BATCH_BYTES, 262144) */
    int concurrency;          /* requests in flight (OMNIGRAPH_EMBED_CONCURRENCY, 4) */
} og_embed_config;

const char *og_embed_provider_name(og_embed_provider p);
/* "openai-compatible" | "openai" | "gemini" | "mock" -> *out; OG_ERR_INVALID otherwise. */
og_status og_embed_provider_parse(const char *s, og_embed_provider *out);
const char *og_embed_errkind_name(og_embed_errkind k); /* "auth", "quota", ... */

/* The defaults of provider p (base URL, model, limits); no key. */
void og_embed_config_defaults(og_embed_config *c, og_embed_provider p);
/* Reads the OMNIGRAPH_EMBED_* variables (and the provider's key variable) over the defaults.
 * A missing key is not an error here: it is reported by the first call that needs the network.
 * OG_ERR_INVALID (kind CONFIG) for an unknown provider or a malformed number. */
og_status og_embed_config_from_env(og_embed_config *c);

/* The kind of the calling thread's last embedding failure. */
og_embed_errkind og_embed_last_error(void);

typedef struct og_embedder og_embedder;
typedef struct og_embed_cache og_embed_cache;

/* Progress of a long call: `done` of `total` inputs have vectors. */
typedef void (*og_embed_progress_fn)(void *ctx, size_t done, size_t total);

/* An embedder over a copy of c.  OG_ERR_IO when libcurl cannot start. */
og_status og_embedder_open(og_embedder **out, const og_embed_config *c);
void og_embedder_close(og_embedder *e);
const og_embed_config *og_embedder_config(const og_embedder *e);
/* Optional: a cache consulted before any request and filled after (not owned). */
void og_embedder_set_cache(og_embedder *e, og_embed_cache *cache);
void og_embedder_set_progress(og_embedder *e, og_embed_progress_fn fn, void *ctx);

/* Embeds n texts (texts[i] of lens[i] bytes, UTF-8) as vectors of exactly `dim` floats into
 * out[i * dim ...], each finite, non-zero and L2-normalised.  All or nothing: on an error out is
 * unspecified and the kind is in og_embed_last_error().  Texts found in the cache cost no
 * request.  A single embedder must not be used from two threads at once. */
og_status og_embedder_embed(og_embedder *e, const char *const *texts, const size_t *lens, size_t n, uint32_t dim,
                            og_embed_role role, float *out);

typedef struct og_embed_stats {
    uint64_t requests;   /* HTTP requests sent (retries included) */
    uint64_t retries;    /* of which retries */
    uint64_t embedded;   /* inputs embedded by the provider */
    uint64_t cache_hits; /* inputs answered by the cache */
} og_embed_stats;
void og_embedder_stats(const og_embedder *e, og_embed_stats *out);

/* ---- vectors (vec.c) ---- */

/* Checks v (finite, not all zero) and scales it to unit L2 norm.  OG_ERR_CORRUPT (kind
 * BAD_VECTOR) naming `what` otherwise. */
og_status og_embed_normalize(float *v, uint32_t dim, const char *what);
/* The mock provider's vector of a text: FNV-1a seeds xorshift64, then normalised.  Equal texts
 * give equal vectors; nothing else about it is meaningful. */
void og_embed_mock_vector(const char *text, size_t len, uint32_t dim, float *out);

/* ---- cache (cache.c) ---- */

/* Opens (creating it and its directory) an append-only cache file.  A torn last record (a
 * crash mid-append) is dropped.  OG_ERR_IO on failure. */
og_status og_embed_cache_open(og_embed_cache **out, const char *path);
void og_embed_cache_close(og_embed_cache *c);
/* The cache file of a graph (or of an output file): $OMNIGRAPH_EMBED_CACHE_DIR, else
 * $OMNIGRAPH_HOME/embed-cache, else ~/.omnigraph/embed-cache, then "<sha256(id)[0..16]>.cache".
 * OG_ERR_INVALID when no directory can be named. */
og_status og_embed_cache_path(char *out, size_t cap, const char *id);
/* 1 and the vector in out when (provider, model, dim, role, text) is cached, else 0. */
int og_embed_cache_get(og_embed_cache *c, const og_embed_config *cfg, og_embed_role role, const char *text, size_t len,
                       uint32_t dim, float *out);
og_status og_embed_cache_put(og_embed_cache *c, const og_embed_config *cfg, og_embed_role role, const char *text,
                             size_t len, uint32_t dim, const float *v);
size_t og_embed_cache_count(const og_embed_cache *c);

/* ---- the record pipeline (pipeline.c) behind `omnigraph embed` ---- */

#include <stdio.h>

/* One vector property to fill: node type, Vector(dim) property, the String property whose
 * value it embeds, and the model @embed recorded ("" when none). */
typedef struct og_embed_target {
    char type[256];
    char target[256];
    char source[256];
    uint32_t dim;
    char model[256];
} og_embed_target;

typedef enum og_embed_mode {
    OG_EMBED_MODE_FILL_MISSING = 0, /* embed selected records that have no vector */
    OG_EMBED_MODE_REEMBED_ALL,      /* replace the vectors of selected records */
    OG_EMBED_MODE_CLEAN,            /* remove the vectors of selected records */
    OG_EMBED_MODE_REEMBED_SELECTED  /* the default mode with --select: replace the selected ones */
} og_embed_mode;

/* "fill_missing", "reembed_all", "clean", "reembed_selected" */
const char *og_embed_mode_name(og_embed_mode m);

/* Which records are processed: types (none = every target type) and "Type:field=value"
 * selectors (when any is given, a record must match one of them). */
typedef struct og_embed_filter {
    const char *const *types;
    size_t ntypes;
    const char *const *selects;
    size_t nselects;
} og_embed_filter;

typedef struct og_embed_summary {
    uint64_t records;  /* records read */
    uint64_t selected; /* of which selected by the targets and the filter */
    uint64_t embedded; /* vectors written */
    uint64_t cleaned;  /* vectors removed */
} og_embed_summary;

/* Progress after each chunk of records. */
typedef void (*og_embed_run_progress_fn)(void *ctx, const og_embed_summary *so_far);

/* The reference's spec file: {"dimension":N,"types":{"T":{"target":"p","fields":["src"]}}}
 * (exactly one field).  *out is malloc'ed (free()).  OG_ERR_INVALID naming what is wrong. */
og_status og_embed_spec_parse(og_embed_target **out, size_t *n, const char *json, size_t len);
/* OG_ERR_INVALID when a selector is neither "Type:field=value" nor "field=value" (the latter
 * matches records of every type), or names a type without a target, or a --type names a type
 * without a target.  A selector compares the property's value as the reference renders it: a
 * string trimmed, a number or boolean as written, a list's items joined by ", ". */
og_status og_embed_filter_check(const og_embed_filter *f, const og_embed_target *t, size_t nt);
/* The mode a run applies: as the reference, the default mode with selectors re-embeds the
 * selected records (OG_EMBED_MODE_REEMBED_SELECTED, reported "reembed_selected"). */
og_embed_mode og_embed_mode_effective(og_embed_mode m, const og_embed_filter *f);
/* When t records a model, the embedder must resolve to exactly it: OG_ERR_TYPE otherwise. */
og_status og_embed_check_model(const og_embed_target *t, const og_embed_config *c);

/* Reads load-format NDJSON records from `in` ({"type":T,"data":{…}}; edges and other types
 * pass through), applies `mode` to the selected ones and writes the records to `out` — all of
 * them, or with only_changed the node records whose vectors changed.  Source values are
 * embedded exactly as stored (role DOCUMENT); an absent, null or blank source gets no vector;
 * a non-string source is refused.  Errors: OG_ERR_PARSE ("<in_name>:<line>: …"),
 * OG_ERR_INVALID, the embedder's errors.  `out` may hold a prefix of the output on error. */
og_status og_embed_run(og_embedder *e, const og_embed_target *t, size_t nt, og_embed_mode mode, const og_embed_filter *f,
                       FILE *in, const char *in_name, FILE *out, int only_changed, og_embed_summary *sum,
                       og_embed_run_progress_fn progress, void *progress_ctx);

#endif
