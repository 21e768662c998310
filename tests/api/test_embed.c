/*
 * test_embed.c — embeddings through the public API: og_db_embed fills @embed vectors of a
 * graph branch as one commit (mock provider: the stored vector is the mock vector of the
 * source text), a rerun changes nothing, re-embedding after a source change updates exactly
 * the changed rows, --if-commit and the recorded-model check refuse without writing, a quota
 * failure part-way publishes nothing and the rerun asks only for what was missing (loopback
 * provider + the cache), and og_embed_file's offline pipeline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "omnigraph.h"
#include "../embed/provider_server.h"

typedef struct ctx {
    char dir[64], uri[96];
    og_db *db;
} ctx;

static const char *SCHEMA = "node Doc { slug: String @key  body: String?  vec: Vector(4)? @embed(\"body\") }\n"
                            "node Tag { name: String @key }\n";

static ps_server srv;

static og_status nearest_slug(og_db *db, const char *text, char *slug, double *dist);

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup_with(void **state, const char *schema)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-embed-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    if (og_db_init(&c->db, c->uri, "s.pg", schema, strlen(schema), NULL)) return -1;
    char data[128], home[128];
    snprintf(data, sizeof data, "%s/d.jsonl", c->dir);
    snprintf(home, sizeof home, "%s/home", c->dir);
    setenv("OMNIGRAPH_HOME", home, 1);
    setenv("OMNIGRAPH_EMBED_PROVIDER", "mock", 1);
    unsetenv("OMNIGRAPH_EMBED_MODEL");
    unsetenv("OMNIGRAPH_EMBED_BASE_URL");
    unsetenv("OMNIGRAPH_EMBEDDINGS_MOCK");
    write_file(data, "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"graph databases\"}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"vector search\"}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"body\":\"columnar storage\"}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\"d\"}}\n"
                     "{\"type\":\"Tag\",\"data\":{\"name\":\"t\"}}\n");
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt r;
    if (og_db_load(&r, c->db, data, &lo)) return -1;
    *state = c;
    return 0;
}

static int setup(void **state) { return setup_with(state, SCHEMA); }

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    int rc = system(cmd);
    free(c);
    return rc == 0 ? 0 : -1;
}

/* slug -> the stored vector (a new reference) of Doc rows, via export. */
static json_t *doc_vectors(og_db *db)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    const char *types[] = {"Doc"};
    assert_int_equal(og_db_export(db, f, NULL, types, 1), OG_OK);
    fclose(f);
    json_t *m = json_object();
    for (char *p = buf; *p;) {
        char *nl = strchr(p, '\n');
        json_t *r = json_loadb(p, nl ? (size_t)(nl - p) : strlen(p), 0, NULL);
        json_t *d = json_object_get(r, "data");
        json_t *v = json_object_get(d, "vec");
        json_object_set(m, json_string_value(json_object_get(d, "slug")), v ? v : json_null());
        json_decref(r);
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(buf);
    return m;
}

static void assert_mock(json_t *vec, const char *text)
{
    float want[4];
    og_embed_mock_vector(text, strlen(text), 4, want);
    assert_int_equal(json_array_size(vec), 4);
    /* a provider's vector is normalised here, so allow float rounding */
    for (int i = 0; i < 4; i++) assert_true(fabs(json_number_value(json_array_get(vec, i)) - want[i]) < 1e-6);
}

static void fill_missing_publishes_one_commit_of_mock_vectors(void **state)
{
    ctx *c = *state;
    og_db_embed_opts o = {0};
    og_receipt r;
    char *sum;
    assert_int_equal(og_db_embed(&sum, &r, c->db, &o), OG_OK);
    assert_true(r.published);
    json_t *s = json_loads(sum, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(s, "records")), 4);
    assert_int_equal(json_integer_value(json_object_get(s, "selected_records")), 4);
    assert_int_equal(json_integer_value(json_object_get(s, "embedded_records")), 3);
    assert_int_equal(json_integer_value(json_object_get(s, "cleaned_records")), 0);
    assert_int_equal(json_integer_value(json_object_get(s, "dimension")), 4);
    assert_string_equal(json_string_value(json_object_get(s, "mode")), "fill_missing");
    assert_string_equal(json_string_value(json_object_get(s, "model")), "mock");
    assert_string_equal(json_string_value(json_object_get(s, "commit")), r.commit);
    json_decref(s);
    og_free(sum);
    json_t *v = doc_vectors(c->db);
    assert_mock(json_object_get(v, "a"), "graph databases");
    assert_mock(json_object_get(v, "c"), "columnar storage");
    assert_true(json_is_null(json_object_get(v, "d")));
    json_decref(v);
    /* the history has exactly one more commit, and a rerun publishes nothing */
    char *hist;
    assert_int_equal(og_db_commit_list(&hist, c->db, NULL, 0), OG_OK);
    json_t *h = json_loads(hist, 0, NULL);
    assert_int_equal(json_array_size(json_object_get(h, "commits")), 3); /* genesis, load, embed */
    json_decref(h);
    og_free(hist);
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK);
    assert_false(r.published);
}

static void reembed_after_source_change_updates_exactly_that_row(void **state)
{
    ctx *c = *state;
    og_db_embed_opts o = {0};
    og_receipt r1, m, r2;
    assert_int_equal(og_db_embed(NULL, &r1, c->db, &o), OG_OK);
    const char *q = "query fix($s: String, $b: String) { update Doc set { body: $b } where slug = $s }";
    assert_int_equal(og_db_mutate(&m, c->db, q, strlen(q), NULL, "{\"s\":\"b\",\"b\":\"nearest neighbours\"}", NULL, NULL),
                     OG_OK);
    o.mode = OG_DB_EMBED_REEMBED_ALL;
    assert_int_equal(og_db_embed(NULL, &r2, c->db, &o), OG_OK);
    assert_true(r2.published);
    og_changes_opts co = {.from = m.commit, .to = r2.commit};
    char *ch;
    assert_int_equal(og_db_changes(&ch, c->db, &co), OG_OK);
    json_t *j = json_loads(ch, 0, NULL);
    json_t *list = json_object_get(j, "changes");
    assert_int_equal(json_array_size(list), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "id")), "b");
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "op")), "update");
    json_decref(j);
    og_free(ch);
    json_t *v = doc_vectors(c->db);
    assert_mock(json_object_get(v, "b"), "nearest neighbours");
    assert_mock(json_object_get(v, "a"), "graph databases");
    json_decref(v);
    /* --clean with a selector removes one vector */
    const char *sel[] = {"Doc:slug=a"};
    og_db_embed_opts cl = {.mode = OG_DB_EMBED_CLEAN, .selects = sel, .nselects = 1};
    og_receipt r3;
    char *sum;
    assert_int_equal(og_db_embed(&sum, &r3, c->db, &cl), OG_OK);
    assert_non_null(strstr(sum, "\"cleaned_records\": 1"));
    og_free(sum);
    v = doc_vectors(c->db);
    assert_true(json_is_null(json_object_get(v, "a")));
    assert_false(json_is_null(json_object_get(v, "b")));
    json_decref(v);
}

static void refusals_publish_nothing(void **state)
{
    ctx *c = *state;
    og_receipt r;
    og_db_embed_opts o = {.expected_head = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_ERR_PRECONDITION_FAILED);
    const char *bad[] = {"Tag:name=t"};
    og_db_embed_opts s = {.selects = bad, .nselects = 1};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &s), OG_ERR_INVALID);
    json_t *v = doc_vectors(c->db);
    assert_true(json_is_null(json_object_get(v, "a")));
    json_decref(v);
}

static int setup_model(void **state)
{
    return setup_with(state, "node Doc { slug: String @key  body: String?  vec: Vector(4)? @embed(body, model=\"m-1\") }\n"
                             "node Tag { name: String @key }\n");
}

static void recorded_model_must_match_the_embedder(void **state)
{
    ctx *c = *state;
    og_receipt r;
    og_db_embed_opts o = {0};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_ERR_TYPE);
    assert_non_null(strstr(og_error_message(), "m-1"));
    setenv("OMNIGRAPH_EMBED_MODEL", "m-1", 1);
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK);
    assert_true(r.published);
    unsetenv("OMNIGRAPH_EMBED_MODEL");
}

/* schema apply refuses to change an @embed's model or source (the stored vectors came from the
 * old one), names the property, and publishes nothing; the embed and the text query that
 * follow still see the recorded model. */
static void schema_apply_refuses_embed_changes(void **state)
{
    ctx *c = *state;
    setenv("OMNIGRAPH_EMBED_MODEL", "m-1", 1);
    og_receipt r;
    og_db_embed_opts o = {0};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK);
    char *hist;
    assert_int_equal(og_db_commit_list(&hist, c->db, NULL, 0), OG_OK);
    const char *changes[] = {
        "node Doc { slug: String @key  body: String?  vec: Vector(4)? @embed(body, model=\"m-2\") }\n"
        "node Tag { name: String @key }\n",
        "node Doc { slug: String @key  body: String?  vec: Vector(4)? @embed(slug, model=\"m-1\") }\n"
        "node Tag { name: String @key }\n",
    };
    for (int i = 0; i < 2; i++) {
        og_receipt ar;
        char *plan = NULL;
        assert_int_equal(og_db_schema_apply(&ar, &plan, c->db, NULL, "s.pg", changes[i], strlen(changes[i]), 0, 0),
                         OG_ERR_UNSUPPORTED);
        assert_non_null(strstr(og_error_message(), "changing @embed source or model for 'Doc.vec'"));
        assert_false(ar.published);
        og_free(plan);
    }
    char *hist2;
    assert_int_equal(og_db_commit_list(&hist2, c->db, NULL, 0), OG_OK);
    assert_string_equal(hist, hist2); /* no commit */
    og_free(hist);
    og_free(hist2);
    char slug[32];
    double d;
    assert_int_equal(nearest_slug(c->db, "vector search", slug, &d), OG_OK); /* model m-1 still matches */
    assert_string_equal(slug, "b");
    unsetenv("OMNIGRAPH_EMBED_MODEL");
}

/* The JSON summary has the reference's keys (reference-surfaces.md section 6) with their types,
 * in both inputs, plus OmniGraph-C's additive ones. */
static void summary_has_the_reference_keys(void **state)
{
    ctx *c = *state;
    const char *keys[] = {"input", "output", "records", "selected_records", "embedded_records", "cleaned_records",
                          "mode", "dimension", "model"};
    og_db_embed_opts o = {0};
    og_receipt r;
    char *sum;
    assert_int_equal(og_db_embed(&sum, &r, c->db, &o), OG_OK);
    json_t *s = json_loads(sum, 0, NULL);
    for (size_t i = 0; i < 9; i++) assert_non_null(json_object_get(s, keys[i]));
    assert_string_equal(json_string_value(json_object_get(s, "input")), c->uri);
    assert_true(json_is_null(json_object_get(s, "output"))); /* a graph has no output file */
    assert_true(json_is_integer(json_object_get(s, "records")) && json_is_integer(json_object_get(s, "dimension")));
    json_decref(s);
    og_free(sum);
    /* --clean builds no embedder in the reference and reports model "" */
    og_db_embed_opts cl = {.mode = OG_DB_EMBED_CLEAN};
    assert_int_equal(og_db_embed(&sum, &r, c->db, &cl), OG_OK);
    s = json_loads(sum, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(s, "model")), "");
    assert_string_equal(json_string_value(json_object_get(s, "mode")), "clean");
    assert_int_equal(json_integer_value(json_object_get(s, "cleaned_records")), 3);
    json_decref(s);
    og_free(sum);
    /* the default mode with a selector re-embeds the selected records: "reembed_selected" */
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK);
    const char *sel[] = {"slug=b"};
    og_db_embed_opts rs = {.selects = sel, .nselects = 1};
    assert_int_equal(og_db_embed(&sum, &r, c->db, &rs), OG_OK);
    s = json_loads(sum, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(s, "mode")), "reembed_selected");
    assert_int_equal(json_integer_value(json_object_get(s, "selected_records")), 1);
    assert_int_equal(json_integer_value(json_object_get(s, "embedded_records")), 1);
    assert_false(r.published); /* the same text, the same vector: no row changed */
    json_decref(s);
    og_free(sum);
}

static void quota_failure_part_way_then_resume(void **state)
{
    ctx *c = *state;
    if (ps_start(&srv)) fail_msg("cannot start the loopback provider");
    char base[96];
    snprintf(base, sizeof base, "%s/v1", srv.base);
    setenv("OMNIGRAPH_EMBED_PROVIDER", "openai-compatible", 1);
    setenv("OMNIGRAPH_EMBED_BASE_URL", base, 1);
    setenv("OMNIGRAPH_EMBED_BATCH_INPUTS", "1", 1);
    setenv("OMNIGRAPH_EMBED_CONCURRENCY", "1", 1);
    setenv("OMNIGRAPH_EMBED_RETRY_ATTEMPTS", "1", 1);
    setenv("OPENROUTER_API_KEY", "sk-resume-SECRET-42", 1);
    srv.ok_left = 2;
    og_receipt r;
    og_db_embed_opts o = {0};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_ERR_THROTTLED);
    assert_null(strstr(og_error_message(), "sk-resume-SECRET-42"));
    assert_false(r.published);
    json_t *v = doc_vectors(c->db);
    assert_true(json_is_null(json_object_get(v, "a"))); /* nothing published */
    json_decref(v);
    assert_int_equal(srv.nreq, 3);
    ps_reset(&srv);
    char *sum;
    assert_int_equal(og_db_embed(&sum, &r, c->db, &o), OG_OK);
    assert_true(r.published);
    assert_int_equal(srv.nreq, 1); /* only the text that was still missing */
    json_t *s = json_loads(sum, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(s, "cache_hits")), 2);
    assert_int_equal(json_integer_value(json_object_get(s, "embedded_records")), 3);
    assert_string_equal(json_string_value(json_object_get(s, "provider")), "openai-compatible");
    json_decref(s);
    og_free(sum);
    v = doc_vectors(c->db);
    assert_mock(json_object_get(v, "a"), "graph databases"); /* the server sends 3x; stored normalised */
    assert_mock(json_object_get(v, "b"), "vector search");
    assert_mock(json_object_get(v, "c"), "columnar storage");
    json_decref(v);
    const char *vars[] = {"OMNIGRAPH_EMBED_BASE_URL", "OMNIGRAPH_EMBED_BATCH_INPUTS", "OMNIGRAPH_EMBED_CONCURRENCY",
                          "OMNIGRAPH_EMBED_RETRY_ATTEMPTS", "OPENROUTER_API_KEY"};
    for (size_t i = 0; i < 5; i++) unsetenv(vars[i]);
    setenv("OMNIGRAPH_EMBED_PROVIDER", "mock", 1);
    ps_stop(&srv);
}

/* The slug of the first row of `nearest(text)`, and its distance. */
static og_status nearest_slug(og_db *db, const char *text, char *slug, double *dist)
{
    const char *q = "query q($t: String) { match { $d: Doc } return { $d.slug, nearest($d.vec, $t) as dist } "
                    "order { nearest($d.vec, $t) } limit 3 }";
    char params[256];
    snprintf(params, sizeof params, "{\"t\": \"%s\"}", text);
    og_rows *r;
    og_status st = og_db_query(&r, db, q, strlen(q), NULL, params, NULL);
    if (st != OG_OK) return st;
    assert_true(og_rows_count(r) >= 1);
    size_t len;
    const char *s = og_rows_string(r, 0, 0, &len);
    snprintf(slug, 32, "%.*s", (int)len, s);
    *dist = og_rows_float(r, 0, 1);
    og_rows_free(r);
    return OG_OK;
}

static void nearest_with_text_finds_what_the_mock_embedded(void **state)
{
    ctx *c = *state;
    og_receipt r;
    og_db_embed_opts o = {0};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK);
    char slug[32];
    double d;
    assert_int_equal(nearest_slug(c->db, "vector search", slug, &d), OG_OK);
    assert_string_equal(slug, "b");
    assert_true(d < 1e-9);
    assert_int_equal(nearest_slug(c->db, "columnar storage", slug, &d), OG_OK);
    assert_string_equal(slug, "c");
    /* a literal string works the same way */
    const char *q = "query q() { match { $d: Doc } return { $d.slug } order { nearest($d.vec, \"graph databases\") } limit 1 }";
    og_rows *rows;
    assert_int_equal(og_db_query(&rows, c->db, q, strlen(q), NULL, NULL, NULL), OG_OK);
    size_t len;
    assert_memory_equal(og_rows_string(rows, 0, 0, &len), "a", 1);
    og_rows_free(rows);
    /* change b's source, re-embed: the text query follows the new text */
    const char *m = "query fix($s: String, $b: String) { update Doc set { body: $b } where slug = $s }";
    og_receipt mr;
    assert_int_equal(og_db_mutate(&mr, c->db, m, strlen(m), NULL, "{\"s\":\"b\",\"b\":\"nearest neighbours\"}", NULL, NULL),
                     OG_OK);
    o.mode = OG_DB_EMBED_REEMBED_ALL;
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK);
    assert_int_equal(nearest_slug(c->db, "nearest neighbours", slug, &d), OG_OK);
    assert_string_equal(slug, "b");
    assert_true(d < 1e-9);
}

static void text_query_model_check(void **state)
{
    ctx *c = *state;
    setenv("OMNIGRAPH_EMBED_MODEL", "m-1", 1);
    og_receipt r;
    og_db_embed_opts o = {0};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK);
    char slug[32];
    double d;
    assert_int_equal(nearest_slug(c->db, "vector search", slug, &d), OG_OK); /* resolved: mock, model m-1 */
    assert_string_equal(slug, "b");
    unsetenv("OMNIGRAPH_EMBED_MODEL");
    og_db *other;
    assert_int_equal(og_db_open(&other, c->uri, NULL), OG_OK); /* a fresh handle resolves again: model mock */
    assert_int_equal(nearest_slug(other, "vector search", slug, &d), OG_ERR_TYPE);
    assert_non_null(strstr(og_error_message(), "m-1"));
    og_db_close(other);
}

static void repeated_query_text_costs_no_request(void **state)
{
    ctx *c = *state;
    og_receipt r;
    og_db_embed_opts o = {0};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK); /* mock vectors in the graph */
    if (ps_start(&srv)) fail_msg("cannot start the loopback provider");
    char base[96];
    snprintf(base, sizeof base, "%s/v1", srv.base);
    setenv("OMNIGRAPH_EMBED_PROVIDER", "openai-compatible", 1);
    setenv("OMNIGRAPH_EMBED_BASE_URL", base, 1);
    og_db *db;
    assert_int_equal(og_db_open(&db, c->uri, NULL), OG_OK);
    char slug[32];
    double d;
    assert_int_equal(nearest_slug(db, "vector search", slug, &d), OG_OK);
    assert_string_equal(slug, "b"); /* the server's vectors are the mock's, scaled */
    assert_int_equal(srv.nreq, 1);
    json_t *b = json_loads(srv.reqs[0].body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(b, "dimensions")), 4);
    json_decref(b);
    assert_int_equal(nearest_slug(db, "vector search", slug, &d), OG_OK);
    assert_int_equal(srv.nreq, 1);
    og_db_close(db);
    /* another handle (another process) finds it in the graph's cache file */
    assert_int_equal(og_db_open(&db, c->uri, NULL), OG_OK);
    assert_int_equal(nearest_slug(db, "vector search", slug, &d), OG_OK);
    assert_int_equal(srv.nreq, 1);
    og_db_close(db);
    unsetenv("OMNIGRAPH_EMBED_BASE_URL");
    setenv("OMNIGRAPH_EMBED_PROVIDER", "mock", 1);
    ps_stop(&srv);
}

/* A provider set on the handle (what a cluster's providers.embedding profile becomes: kind,
 * base_url, model, api_key) keeps the environment's limits — the reference's profile has no
 * timeout or retry fields. */
static void provider_profile_keeps_the_environments_limits(void **state)
{
    ctx *c = *state;
    og_receipt r;
    og_db_embed_opts o = {0};
    assert_int_equal(og_db_embed(NULL, &r, c->db, &o), OG_OK); /* mock vectors in the graph */
    if (ps_start(&srv)) fail_msg("cannot start the loopback provider");
    char base[96];
    snprintf(base, sizeof base, "%s/v1", srv.base);
    setenv("OMNIGRAPH_EMBED_RETRY_ATTEMPTS", "1", 1);
    setenv("OMNIGRAPH_EMBED_RETRY_BACKOFF_MS", "1", 1);
    og_db_embed_provider p = {.kind = "openai-compatible", .base_url = base, .api_key = "sk-profile"};
    og_db *db;
    assert_int_equal(og_db_open(&db, c->uri, NULL), OG_OK);
    assert_int_equal(og_db_set_embed_provider(db, &p), OG_OK);
    srv.fail_next = 1;
    srv.fail_status = 503;
    char slug[32];
    double d;
    assert_int_equal(nearest_slug(db, "vector search", slug, &d), OG_ERR_IO); /* one attempt, no retry */
    assert_int_equal(srv.nreq, 1);
    setenv("OMNIGRAPH_EMBED_RETRY_ATTEMPTS", "2", 1);
    assert_int_equal(og_db_set_embed_provider(db, &p), OG_OK);
    srv.fail_next = 1;
    assert_int_equal(nearest_slug(db, "vector search", slug, &d), OG_OK); /* retried once */
    assert_string_equal(slug, "b");
    assert_int_equal(srv.nreq, 3);
    assert_string_equal(srv.reqs[2].auth, "Bearer sk-profile");
    og_db_close(db);
    unsetenv("OMNIGRAPH_EMBED_RETRY_ATTEMPTS");
    unsetenv("OMNIGRAPH_EMBED_RETRY_BACKOFF_MS");
    ps_stop(&srv);
}

static void file_pipeline(void **state)
{
    ctx *c = *state;
    char in[128], out[128], spec[128], bad[128];
    snprintf(in, sizeof in, "%s/raw.jsonl", c->dir);
    snprintf(out, sizeof out, "%s/embedded.jsonl", c->dir);
    snprintf(spec, sizeof spec, "%s/spec.json", c->dir);
    snprintf(bad, sizeof bad, "%s/bad.json", c->dir);
    write_file(in, "{\"type\":\"Document\",\"data\":{\"slug\":\"x\",\"body\":\"hello\"}}\n");
    write_file(spec, "{\"dimension\":4,\"types\":{\"Document\":{\"target\":\"embedding\",\"fields\":[\"body\"]}}}");
    write_file(bad, "{\"dimension\":4,\"types\":{\"Document\":{\"target\":\"embedding\",\"fields\":[\"a\",\"b\"]}}}");
    og_db_embed_opts o = {0};
    assert_int_equal(og_embed_file(NULL, in, out, bad, &o), OG_ERR_INVALID);
    assert_int_equal(access(out, F_OK), -1); /* a refused run leaves no output */
    /* a run that fails part-way (a non-string source on line 2) leaves neither the output nor
     * its temporary file */
    char mixed[128], ls[256], listing[512];
    snprintf(mixed, sizeof mixed, "%s/mixed.jsonl", c->dir);
    write_file(mixed, "{\"type\":\"Document\",\"data\":{\"body\":\"ok\"}}\n"
                      "{\"type\":\"Document\",\"data\":{\"body\":42}}\n");
    assert_int_equal(og_embed_file(NULL, mixed, out, spec, &o), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "mixed.jsonl:2: Document.body"));
    assert_int_equal(access(out, F_OK), -1);
    snprintf(ls, sizeof ls, "ls %s | grep -c tmp", c->dir);
    FILE *p = popen(ls, "r");
    size_t got = fread(listing, 1, sizeof listing - 1, p);
    listing[got] = 0;
    pclose(p);
    assert_string_equal(listing, "0\n");
    char *sum;
    assert_int_equal(og_embed_file(&sum, in, out, spec, &o), OG_OK);
    json_t *s = json_loads(sum, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(s, "input")), in);
    assert_string_equal(json_string_value(json_object_get(s, "output")), out);
    assert_int_equal(json_integer_value(json_object_get(s, "embedded_records")), 1);
    json_decref(s);
    og_free(sum);
    json_error_t je;
    json_t *r = json_load_file(out, 0, &je);
    assert_non_null(r);
    json_t *vec = json_object_get(json_object_get(r, "data"), "embedding");
    float want[4];
    og_embed_mock_vector("hello", 5, 4, want);
    for (int i = 0; i < 4; i++) assert_true((float)json_number_value(json_array_get(vec, i)) == want[i]);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fill_missing_publishes_one_commit_of_mock_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(reembed_after_source_change_updates_exactly_that_row, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals_publish_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(recorded_model_must_match_the_embedder, setup_model, teardown),
        cmocka_unit_test_setup_teardown(schema_apply_refuses_embed_changes, setup_model, teardown),
        cmocka_unit_test_setup_teardown(summary_has_the_reference_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(quota_failure_part_way_then_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(file_pipeline, setup, teardown),
        cmocka_unit_test_setup_teardown(nearest_with_text_finds_what_the_mock_embedded, setup, teardown),
        cmocka_unit_test_setup_teardown(text_query_model_check, setup_model, teardown),
        cmocka_unit_test_setup_teardown(repeated_query_text_costs_no_request, setup, teardown),
        cmocka_unit_test_setup_teardown(provider_profile_keeps_the_environments_limits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
