/*
 * test_client.c — the embedding client against a loopback provider (provider_server.h):
 * request shapes and headers per provider, batching by count and bytes, bounded concurrency,
 * retries honouring Retry-After, timeouts and the deadline, malformed answers, wrong
 * dimensions, zero vectors, typed error kinds, and a key that must never appear in a message.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "embed/embed.h"
#include "embed/embed_internal.h"
#include "provider_server.h"

#define KEY "sk-test-SECRET-0123456789abcdef"

static ps_server srv;

static int64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static og_embed_config cfg_for(og_embed_provider p)
{
    og_embed_config c;
    og_embed_config_defaults(&c, p);
    snprintf(c.base_url, sizeof c.base_url, "%s%s", srv.base, p == OG_EMBED_GEMINI ? "/v1beta" : "/v1");
    snprintf(c.api_key, sizeof c.api_key, "%s", KEY);
    c.base_url_overridden = 1;
    c.timeout_ms = 5000;
    c.deadline_ms = 20000;
    c.backoff_ms = 1;
    return c;
}

/* Embeds texts with c; returns the status and leaves vectors in out. */
static og_status run(const og_embed_config *c, const char *const *texts, size_t n, uint32_t dim, og_embed_role role,
                     float *out, og_embed_stats *stats)
{
    og_embedder *e;
    og_status st = og_embedder_open(&e, c);
    if (st != OG_OK) return st;
    size_t lens[64];
    for (size_t i = 0; i < n; i++) lens[i] = strlen(texts[i]);
    st = og_embedder_embed(e, texts, lens, n, dim, role, out);
    if (stats) og_embedder_stats(e, stats);
    og_embedder_close(e);
    return st;
}

static void assert_mock_vec(const char *t, uint32_t dim, const float *v)
{
    float want[64];
    og_embed_mock_vector(t, strlen(t), dim, want);
    double norm = 0;
    for (uint32_t i = 0; i < dim; i++) {
        assert_true(fabsf(want[i] - v[i]) < 1e-5f);
        norm += (double)v[i] * v[i];
    }
    assert_true(fabs(norm - 1.0) < 1e-5);
}

static void assert_no_key(void) { assert_null(strstr(og_error_message(), KEY)); }

static int setup(void **state)
{
    (void)state;
    ps_reset(&srv);
    return 0;
}

static void openai_compatible_request_shape(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI_COMPATIBLE);
    snprintf(c.model, sizeof c.model, "nomic-embed-text");
    const char *t[] = {"alpha", "beta \"quoted\" ünï", "gamma"};
    float out[3 * 8];
    og_embed_stats s;
    assert_int_equal(run(&c, t, 3, 8, OG_EMBED_QUERY, out, &s), OG_OK);
    assert_int_equal(srv.nreq, 1);
    assert_int_equal(s.requests, 1);
    assert_string_equal(srv.reqs[0].path, "POST /v1/embeddings");
    assert_string_equal(srv.reqs[0].auth, "Bearer " KEY);
    assert_string_equal(srv.reqs[0].goog, "");
    assert_string_equal(srv.reqs[0].ctype, "application/json");
    json_t *b = json_loads(srv.reqs[0].body, 0, NULL);
    assert_non_null(b);
    assert_string_equal(json_string_value(json_object_get(b, "model")), "nomic-embed-text");
    assert_int_equal(json_integer_value(json_object_get(b, "dimensions")), 8);
    assert_int_equal(json_array_size(json_object_get(b, "input")), 3);
    assert_string_equal(json_string_value(json_array_get(json_object_get(b, "input"), 1)), t[1]);
    json_decref(b);
    for (int i = 0; i < 3; i++) assert_mock_vec(t[i], 8, out + i * 8); /* reordered answer, normalised */
}

static void openai_compatible_without_key_on_custom_endpoint(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI_COMPATIBLE);
    c.api_key[0] = 0;
    const char *t[] = {"local"};
    float out[4];
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_OK);
    assert_string_equal(srv.reqs[0].auth, "");
    /* the default (OpenRouter) endpoint, or openai / gemini, need a key: no request is sent */
    ps_reset(&srv);
    c.base_url_overridden = 0;
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_AUTH);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_AUTH);
    assert_non_null(strstr(og_error_message(), "OPENROUTER_API_KEY"));
    c = cfg_for(OG_EMBED_GEMINI);
    c.api_key[0] = 0;
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_AUTH);
    assert_non_null(strstr(og_error_message(), "GEMINI_API_KEY"));
    assert_int_equal(srv.nreq, 0);
}

static void gemini_single_and_batch_shapes(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_GEMINI);
    const char *t[] = {"one query"};
    float out[3 * 6];
    assert_int_equal(run(&c, t, 1, 6, OG_EMBED_QUERY, out, NULL), OG_OK);
    assert_string_equal(srv.reqs[0].path, "POST /v1beta/models/gemini-embedding-2:embedContent");
    assert_string_equal(srv.reqs[0].goog, KEY);
    assert_string_equal(srv.reqs[0].auth, "");
    json_t *b = json_loads(srv.reqs[0].body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(b, "taskType")), "RETRIEVAL_QUERY");
    assert_int_equal(json_integer_value(json_object_get(b, "outputDimensionality")), 6);
    json_decref(b);
    assert_mock_vec(t[0], 6, out);

    const char *d[] = {"doc a", "doc b", "doc c"};
    assert_int_equal(run(&c, d, 3, 6, OG_EMBED_DOCUMENT, out, NULL), OG_OK);
    assert_string_equal(srv.reqs[1].path, "POST /v1beta/models/gemini-embedding-2:batchEmbedContents");
    b = json_loads(srv.reqs[1].body, 0, NULL);
    json_t *r = json_object_get(b, "requests");
    assert_int_equal(json_array_size(r), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 2), "taskType")), "RETRIEVAL_DOCUMENT");
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 2), "model")), "models/gemini-embedding-2");
    json_decref(b);
    for (int i = 0; i < 3; i++) assert_mock_vec(d[i], 6, out + i * 6);
}

static void batches_bounded_by_count_and_bytes(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    c.batch_inputs = 3;
    const char *t[10] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"};
    float out[10 * 4];
    og_embed_stats s;
    assert_int_equal(run(&c, t, 10, 4, OG_EMBED_DOCUMENT, out, &s), OG_OK);
    assert_int_equal(srv.nreq, 4);
    assert_int_equal(s.embedded, 10);
    for (int i = 0; i < 10; i++) assert_mock_vec(t[i], 4, out + i * 4);
    ps_reset(&srv);
    c.batch_inputs = 64;
    c.batch_bytes = 5; /* "t0t1" fits, a third does not */
    assert_int_equal(run(&c, t, 10, 4, OG_EMBED_DOCUMENT, out, NULL), OG_OK);
    assert_int_equal(srv.nreq, 5);
    for (int i = 0; i < srv.nreq; i++) {
        json_t *b = json_loads(srv.reqs[i].body, 0, NULL);
        assert_int_equal(json_array_size(json_object_get(b, "input")), 2);
        json_decref(b);
    }
}

static void concurrency_is_bounded_and_used(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    c.batch_inputs = 1;
    c.concurrency = 3;
    srv.delay_ms = 150;
    const char *t[9] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
    float out[9 * 4];
    int64_t t0 = ms_now();
    assert_int_equal(run(&c, t, 9, 4, OG_EMBED_DOCUMENT, out, NULL), OG_OK);
    int64_t el = ms_now() - t0;
    assert_int_equal(srv.nreq, 9);
    assert_true(srv.max_inflight <= 3);
    assert_true(srv.max_inflight >= 2);
    assert_true(el < 9 * 150); /* not one at a time */
    for (int i = 0; i < 9; i++) assert_mock_vec(t[i], 4, out + i * 4);
}

static void retries_429_honouring_retry_after(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    srv.fail_next = 1;
    srv.fail_status = 429;
    snprintf(srv.retry_after, sizeof srv.retry_after, "1");
    const char *t[] = {"x"};
    float out[4];
    og_embed_stats s;
    int64_t t0 = ms_now();
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, &s), OG_OK);
    assert_true(ms_now() - t0 >= 950); /* backoff is 1 ms: only Retry-After explains the wait */
    assert_int_equal(s.requests, 2);
    assert_int_equal(s.retries, 1);
    assert_mock_vec("x", 4, out);
}

/* Retry-After as an HTTP date (RFC 9110 allows both forms): the client waits until then. */
static void retry_after_as_http_date(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    srv.fail_next = 1;
    srv.fail_status = 503;
    time_t at = time(NULL) + 2;
    struct tm g;
    gmtime_r(&at, &g);
    strftime(srv.retry_after, sizeof srv.retry_after, "%a, %d %b %Y %H:%M:%S GMT", &g);
    const char *t[] = {"dated"};
    float out[4];
    og_embed_stats s;
    int64_t t0 = ms_now();
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, &s), OG_OK);
    int64_t waited = ms_now() - t0;
    assert_true(waited >= 900);  /* whole seconds: at least one of the two remains */
    assert_true(waited < 4000);
    assert_int_equal(s.requests, 2);
    assert_int_equal(s.retries, 1);
    assert_mock_vec("dated", 4, out);
}

static void retries_5xx_then_give_up_typed(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    c.retry_attempts = 3;
    srv.fail_next = 2;
    srv.fail_status = 503;
    const char *t[] = {"x"};
    float out[4];
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_OK);
    assert_int_equal(srv.nreq, 3);

    ps_reset(&srv);
    srv.fail_next = 10;
    srv.fail_status = 500;
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_IO);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_SERVER);
    assert_int_equal(srv.nreq, 3);
    assert_non_null(strstr(og_error_message(), "after 3 attempts"));
    assert_non_null(strstr(og_error_message(), "try again later"));

    ps_reset(&srv);
    srv.fail_next = 10;
    srv.fail_status = 429;
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_THROTTLED);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_QUOTA);

    /* a Retry-After beyond the deadline: fail now instead of sleeping past it */
    ps_reset(&srv);
    srv.fail_next = 10;
    srv.fail_status = 429;
    snprintf(srv.retry_after, sizeof srv.retry_after, "30");
    c.deadline_ms = 2000;
    int64_t t0 = ms_now();
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_THROTTLED);
    assert_true(ms_now() - t0 < 1500);
    assert_non_null(strstr(og_error_message(), "would pass the deadline"));
    assert_int_equal(srv.nreq, 1);
}

static void client_errors_are_not_retried(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    srv.fail_next = 10;
    srv.fail_status = 400;
    const char *t[] = {"x"};
    float out[4];
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_INVALID);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_REQUEST);
    assert_int_equal(srv.nreq, 1);
}

static void timeouts_and_deadline(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    c.timeout_ms = 100;
    c.retry_attempts = 2;
    srv.delay_ms = 2000; /* far beyond both limits, so the bounds below hold on a loaded machine */
    const char *t[] = {"slow"};
    float out[4];
    int64_t t0 = ms_now();
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_IO);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_TIMEOUT);
    assert_true(ms_now() - t0 < 1500); /* two 100 ms attempts, not two 2 s answers */
    assert_non_null(strstr(og_error_message(), "OMNIGRAPH_EMBED_TIMEOUT_MS"));

    c.timeout_ms = 5000;
    c.retry_attempts = 4;
    c.deadline_ms = 250;
    t0 = ms_now();
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_LIMIT);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_DEADLINE);
    assert_true(ms_now() - t0 < 1500); /* the 250 ms deadline, not the 2 s answer */
    assert_no_key();
    usleep(2100 * 1000); /* let the server's slow handlers finish before the next test */
}

static void malformed_wrong_dimension_zero_vectors(void **state)
{
    (void)state;
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    const char *t[] = {"a", "b"};
    float out[2 * 4];
    srv.mode = PS_MALFORMED;
    assert_int_equal(run(&c, t, 2, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_CORRUPT);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_BAD_RESPONSE);
    assert_int_equal(srv.nreq, 1); /* not retried */
    srv.mode = PS_SHORT;
    assert_int_equal(run(&c, t, 2, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_CORRUPT);
    assert_non_null(strstr(og_error_message(), "1 embeddings for 2 inputs"));
    srv.mode = PS_WRONG_DIM;
    assert_int_equal(run(&c, t, 2, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_TYPE);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_DIMENSION);
    assert_non_null(strstr(og_error_message(), "Vector(4)"));
    srv.mode = PS_ZERO;
    assert_int_equal(run(&c, t, 2, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_CORRUPT);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_BAD_VECTOR);
    assert_non_null(strstr(og_error_message(), "all zero"));
    srv.mode = PS_HUGE; /* 1e39 is a finite JSON number but infinite as float32 */
    assert_int_equal(run(&c, t, 2, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_CORRUPT);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_BAD_VECTOR);
    assert_non_null(strstr(og_error_message(), "non-finite"));
    c = cfg_for(OG_EMBED_GEMINI);
    srv.mode = PS_WRONG_DIM;
    assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_TYPE);
}

static void key_never_in_messages(void **state)
{
    (void)state;
    const og_embed_provider ps[] = {OG_EMBED_OPENAI, OG_EMBED_GEMINI};
    for (int k = 0; k < 2; k++) {
        og_embed_config c = cfg_for(ps[k]);
        const char *t[] = {"a"};
        float out[4];
        ps_reset(&srv);
        srv.mode = PS_ECHO_KEY_401;
        assert_int_equal(run(&c, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_AUTH);
        assert_int_equal(og_embed_last_error(), OG_EMBED_E_AUTH);
        assert_int_equal(srv.nreq, 1);
        assert_non_null(strstr(og_error_message(), "Incorrect API key provided: [redacted]"));
        assert_no_key();
        /* connection refused after retries: the message names the URL, never the key */
        og_embed_config d = c;
        snprintf(d.base_url, sizeof d.base_url, "http://127.0.0.1:1/v1");
        d.retry_attempts = 2;
        assert_int_equal(run(&d, t, 1, 4, OG_EMBED_QUERY, out, NULL), OG_ERR_IO);
        assert_int_equal(og_embed_last_error(), OG_EMBED_E_TRANSPORT);
        assert_no_key();
    }
    /* a key that is cut by the excerpt's length limit leaves no long prefix behind */
    og_embed_config c = cfg_for(OG_EMBED_OPENAI);
    char s[64];
    snprintf(s, sizeof s, "abc sk-test-SECRET-01234");
    og_embed_redact(&c, s, sizeof s);
    assert_null(strstr(s, "sk-test-SECRET"));
}

static void mock_is_deterministic_offline_and_unit(void **state)
{
    (void)state;
    og_embed_config c;
    og_embed_config_defaults(&c, OG_EMBED_MOCK);
    const char *t[] = {"same", "same", "other"};
    float out[3 * 16];
    og_embed_stats s;
    assert_int_equal(run(&c, t, 3, 16, OG_EMBED_QUERY, out, &s), OG_OK);
    assert_int_equal(s.requests, 0);
    assert_memory_equal(out, out + 16, 16 * sizeof(float));
    assert_memory_not_equal(out, out + 32, 16 * sizeof(float));
    assert_mock_vec("other", 16, out + 32);
    assert_int_equal(srv.nreq, 0);
}

static void normalize_rejects_nan_inf_zero(void **state)
{
    (void)state;
    float v[3] = {3, 4, 0};
    assert_int_equal(og_embed_normalize(v, 3, "v"), OG_OK);
    assert_true(fabsf(v[0] - 0.6f) < 1e-6f && fabsf(v[1] - 0.8f) < 1e-6f);
    float z[3] = {0, 0, 0};
    assert_int_equal(og_embed_normalize(z, 3, "v"), OG_ERR_CORRUPT);
    float n[2] = {NAN, 1};
    assert_int_equal(og_embed_normalize(n, 2, "v"), OG_ERR_CORRUPT);
    float i[2] = {1, INFINITY};
    assert_int_equal(og_embed_normalize(i, 2, "v"), OG_ERR_CORRUPT);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_BAD_VECTOR);
}

static void cache_answers_repeats_and_survives_reopen(void **state)
{
    (void)state;
    char dir[] = "/tmp/og_embed_cache_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/sub/q.cache", dir);
    og_embed_cache *cache;
    assert_int_equal(og_embed_cache_open(&cache, path), OG_OK);
    og_embed_config c = cfg_for(OG_EMBED_OPENAI_COMPATIBLE);
    og_embedder *e;
    assert_int_equal(og_embedder_open(&e, &c), OG_OK);
    og_embedder_set_cache(e, cache);
    const char *t[] = {"reliable vector database", "graph"};
    size_t l[] = {strlen(t[0]), strlen(t[1])};
    float a[8], b[8];
    assert_int_equal(og_embedder_embed(e, t, l, 2, 4, OG_EMBED_QUERY, a), OG_OK);
    assert_int_equal(og_embedder_embed(e, t, l, 2, 4, OG_EMBED_QUERY, b), OG_OK);
    og_embed_stats s;
    og_embedder_stats(e, &s);
    assert_int_equal(s.requests, 1);
    assert_int_equal(s.cache_hits, 2);
    assert_memory_equal(a, b, sizeof a);
    /* another dimension or model is another key */
    float w[6];
    assert_int_equal(og_embedder_embed(e, t, l, 1, 6, OG_EMBED_QUERY, w), OG_OK);
    og_embedder_stats(e, &s);
    assert_int_equal(s.requests, 2);
    og_embedder_close(e);
    og_embed_cache_close(cache);

    /* a torn tail (crash mid-append) is dropped; the good records remain */
    FILE *f = fopen(path, "ab");
    fwrite("OGEC\x01\x02", 1, 6, f);
    fclose(f);
    assert_int_equal(og_embed_cache_open(&cache, path), OG_OK);
    assert_int_equal(og_embed_cache_count(cache), 3);
    float g[4];
    assert_true(og_embed_cache_get(cache, &c, OG_EMBED_QUERY, t[1], l[1], 4, g));
    assert_memory_equal(g, a + 4, sizeof g);
    og_embed_config other = c;
    other.provider = OG_EMBED_OPENAI; /* same model and text, another provider: another key */
    assert_false(og_embed_cache_get(cache, &other, OG_EMBED_QUERY, t[1], l[1], 4, g));
    assert_false(og_embed_cache_get(cache, &c, OG_EMBED_QUERY, t[1], l[1], 6, g)); /* dimension */
    assert_false(og_embed_cache_get(cache, &c, OG_EMBED_QUERY, "graph ", 6, 4, g)); /* text, byte for byte */
    snprintf(c.model, sizeof c.model, "another-model");
    assert_false(og_embed_cache_get(cache, &c, OG_EMBED_QUERY, t[1], l[1], 4, g));
    og_embed_cache_close(cache);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void config_from_env(void **state)
{
    (void)state;
    const char *vars[] = {"OMNIGRAPH_EMBED_PROVIDER", "OMNIGRAPH_EMBED_BASE_URL", "OMNIGRAPH_EMBED_MODEL",
                          "OPENROUTER_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OMNIGRAPH_EMBED_DEADLINE_MS",
                          "OMNIGRAPH_EMBED_TIMEOUT_MS", "OMNIGRAPH_EMBED_RETRY_ATTEMPTS", "OMNIGRAPH_EMBED_RETRY_BACKOFF_MS",
                          "OMNIGRAPH_EMBEDDINGS_MOCK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
    og_embed_config c;
    assert_int_equal(og_embed_config_from_env(&c), OG_OK);
    assert_int_equal(c.provider, OG_EMBED_OPENAI_COMPATIBLE);
    assert_string_equal(c.base_url, "https://openrouter.ai/api/v1");
    assert_string_equal(c.model, "openai/text-embedding-3-large");
    assert_int_equal(c.deadline_ms, 60000);
    assert_int_equal(c.timeout_ms, 30000);
    assert_int_equal(c.retry_attempts, 4);
    assert_int_equal(c.backoff_ms, 200);
    setenv("OMNIGRAPH_EMBED_PROVIDER", "gemini", 1);
    setenv("GEMINI_API_KEY", "g-key", 1);
    setenv("OMNIGRAPH_EMBED_BASE_URL", "http://127.0.0.1:9/v1beta/", 1);
    setenv("OMNIGRAPH_EMBED_DEADLINE_MS", "0", 1);
    assert_int_equal(og_embed_config_from_env(&c), OG_OK);
    assert_int_equal(c.provider, OG_EMBED_GEMINI);
    assert_string_equal(c.model, "gemini-embedding-2");
    assert_string_equal(c.api_key, "g-key");
    assert_string_equal(c.base_url, "http://127.0.0.1:9/v1beta");
    assert_int_equal(c.deadline_ms, 0);
    setenv("OMNIGRAPH_EMBEDDINGS_MOCK", "1", 1);
    assert_int_equal(og_embed_config_from_env(&c), OG_OK);
    assert_int_equal(c.provider, OG_EMBED_MOCK);
    assert_true(c.mock_forced);
    unsetenv("OMNIGRAPH_EMBEDDINGS_MOCK");
    setenv("OMNIGRAPH_EMBED_TIMEOUT_MS", "soon", 1);
    assert_int_equal(og_embed_config_from_env(&c), OG_ERR_INVALID);
    assert_int_equal(og_embed_last_error(), OG_EMBED_E_CONFIG);
    unsetenv("OMNIGRAPH_EMBED_TIMEOUT_MS");
    setenv("OMNIGRAPH_EMBED_PROVIDER", "cohere", 1);
    assert_int_equal(og_embed_config_from_env(&c), OG_ERR_INVALID);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

int main(void)
{
    if (ps_start(&srv)) {
        fprintf(stderr, "cannot start the loopback provider\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(openai_compatible_request_shape, setup),
        cmocka_unit_test_setup(openai_compatible_without_key_on_custom_endpoint, setup),
        cmocka_unit_test_setup(gemini_single_and_batch_shapes, setup),
        cmocka_unit_test_setup(batches_bounded_by_count_and_bytes, setup),
        cmocka_unit_test_setup(concurrency_is_bounded_and_used, setup),
        cmocka_unit_test_setup(retries_429_honouring_retry_after, setup),
        cmocka_unit_test_setup(retry_after_as_http_date, setup),
        cmocka_unit_test_setup(retries_5xx_then_give_up_typed, setup),
        cmocka_unit_test_setup(client_errors_are_not_retried, setup),
        cmocka_unit_test_setup(timeouts_and_deadline, setup),
        cmocka_unit_test_setup(malformed_wrong_dimension_zero_vectors, setup),
        cmocka_unit_test_setup(key_never_in_messages, setup),
        cmocka_unit_test_setup(mock_is_deterministic_offline_and_unit, setup),
        cmocka_unit_test(normalize_rejects_nan_inf_zero),
        cmocka_unit_test_setup(cache_answers_repeats_and_survives_reopen, setup),
        cmocka_unit_test(config_from_env),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ps_stop(&srv);
    return rc;
}
