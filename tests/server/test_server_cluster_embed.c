/*
 * test_server_cluster_embed.c — `providers.embedding` of cluster.yaml served: the applied
 * ledger records each profile and each graph's binding; `omnigraph-server --cluster` resolves
 * the profile's `${KEY}` at boot (a missing one stops the boot with the exact reason) and uses
 * it for `nearest($v.p, "text")` on that graph only (a graph without a binding keeps the
 * environment's provider).  All offline: the bound provider is `mock`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "cluster/cluster.h"
#include "server_client.h"

static char dir[64], cdir[128], logpath[128];
static srv S;

static const char *SCHEMA = "node Doc { slug: String @key  body: String?  vec: Vector(8)? @embed(\"body\") }\n";
static const char *DATA = "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"vector search\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"columnar storage\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"body\":\"graph databases\"}}\n";

static void clear_env(void)
{
    static const char *const vars[] = {"OMNIGRAPH_SERVER_BEARER_TOKEN", "OMNIGRAPH_SERVER_BEARER_TOKENS_FILE",
                                       "OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", "OMNIGRAPH_CLUSTER",
                                       "OMNIGRAPH_EMBED_PROVIDER", "OMNIGRAPH_EMBEDDINGS_MOCK", "OMNIGRAPH_EMBED_BASE_URL",
                                       "OMNIGRAPH_EMBED_MODEL", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                                       "OG_TEST_EMBED_KEY", NULL};
    for (const char *const *v = vars; *v; v++) unsetenv(*v);
}

static int write_file(const char *d, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* A cluster at `d` with `yaml`, imported and applied. */
static int make_cluster(const char *d, const char *yaml)
{
    if (mkdir(d, 0755) || write_file(d, "cluster.yaml", yaml) || write_file(d, "docs.pg", SCHEMA)) return -1;
    char *out = NULL;
    og_cluster_opts o = {.actor = "setup"};
    og_status ist = og_cluster_import(&out, d, &o);
    if (ist) fprintf(stderr, "import: %s\n%s\n", og_error_message(), out ? out : "");
    og_free(out);
    out = NULL;
    if (ist) return -1;
    og_status st = og_cluster_apply(&out, d, &o);
    if (st) fprintf(stderr, "apply: %s\n%s\n", og_error_message(), out ? out : "");
    og_free(out);
    return st ? -1 : 0;
}

/* Loads DATA into graph `g` and fills its vectors with the mock provider (set on the handle,
 * not through the environment). */
static int seed_graph(const char *d, const char *g)
{
    char uri[256], data[256];
    snprintf(uri, sizeof uri, "%s/graphs/%s.omni", d, g);
    snprintf(data, sizeof data, "%s/%s.jsonl", dir, g);
    if (write_file(dir, strrchr(data, '/') + 1, DATA)) return -1;
    og_db *db;
    if (og_db_open(&db, uri, NULL)) return -1;
    og_load_opts lo = {.mode = OG_LOAD_MERGE};
    og_receipt r;
    og_status st = og_db_load(&r, db, data, &lo);
    og_db_embed_provider mock = {.kind = "mock"};
    if (!st) st = og_db_set_embed_provider(db, &mock);
    og_db_embed_opts eo = {0};
    if (!st) st = og_db_embed(NULL, &r, db, &eo);
    og_db_close(db);
    return st ? -1 : 0;
}

static const char *YAML = "version: 1\n"
                          "providers:\n"
                          "  embedding:\n"
                          "    local: { kind: mock }\n"
                          "graphs:\n"
                          "  docs:\n"
                          "    schema: docs.pg\n"
                          "    embedding_provider: local\n"
                          "  plain:\n"
                          "    schema: docs.pg\n";

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-srvemb-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(cdir, sizeof cdir, "%s/cluster", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    clear_env();
    if (make_cluster(cdir, YAML) || seed_graph(cdir, "docs") || seed_graph(cdir, "plain")) return -1;
    const char *args[] = {"--cluster", cdir, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    return srv_start(&S, logpath, args);
}

static int teardown(void **state)
{
    (void)state;
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

static void test_ledger_records_the_binding(void **state)
{
    (void)state;
    og_cluster *c = NULL;
    assert_int_equal(og_cluster_open(&c, cdir), OG_OK);
    og_db_embed_provider ep;
    char key[64];
    int bound = 0;
    assert_int_equal(og_cluster_embedding_provider(c, "docs", &ep, key, sizeof key, &bound), OG_OK);
    assert_true(bound);
    assert_string_equal(ep.kind, "mock");
    assert_null(ep.api_key);
    assert_int_equal(og_cluster_embedding_provider(c, "plain", &ep, key, sizeof key, &bound), OG_OK);
    assert_false(bound);
    og_cluster_close(c);
}

static http_resp nearest(const char *graph, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "/graphs/%s/query", graph);
    json_t *req = json_pack("{s:s,s:{s:s}}", "query",
                            "query q($t: String) { match { $d: Doc } return { $d.slug } order { nearest($d.vec, $t) } "
                            "limit 1 }",
                            "params", "t", text);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    http_resp r = post_json(&S, NULL, path, body);
    free(body);
    return r;
}

static void test_text_nearest_uses_the_graphs_provider(void **state)
{
    (void)state;
    const char *texts[][2] = {{"columnar storage", "b"}, {"vector search", "a"}, {"graph databases", "c"}};
    for (size_t i = 0; i < 3; i++) {
        http_resp r = nearest("docs", texts[i][0]);
        if (r.status != 200) fprintf(stderr, "%s\n", r.body);
        assert_int_equal(r.status, 200);
        assert_string_equal(jstr(json_array_get(json_object_get(r.json, "rows"), 0), "d.slug"), texts[i][1]);
        http_free(&r);
    }
    /* a graph with no embedding_provider keeps the environment's (here: openai-compatible, no key) */
    http_resp r = nearest("plain", "columnar storage");
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(jstr(r.json, "error"), "needs an API key"));
    http_free(&r);
}

/* A real provider's `${KEY}` is resolved when the server boots: unset, the boot stops with
 * the reason; set, the server starts (no request is made until a text query). */
static void test_boot_resolves_the_key(void **state)
{
    (void)state;
    char d2[160], log2[160];
    snprintf(d2, sizeof d2, "%s/keyed", dir);
    snprintf(log2, sizeof log2, "%s/keyed.log", dir);
    assert_int_equal(make_cluster(d2, "version: 1\n"
                                      "providers:\n"
                                      "  embedding:\n"
                                      "    remote:\n"
                                      "      kind: openai\n"
                                      "      model: text-embedding-3-small\n"
                                      "      api_key: ${OG_TEST_EMBED_KEY}\n"
                                      "graphs:\n"
                                      "  docs:\n"
                                      "    schema: docs.pg\n"
                                      "    embedding_provider: remote\n"),
                     0);
    const char *args[] = {"--cluster", d2, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    assert_true(srv_start_fails(log2, args));
    FILE *f = fopen(log2, "rb");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "omnigraph-server: --cluster: graph 'docs': embedding provider 'remote' needs the "
                                 "environment variable OG_TEST_EMBED_KEY (api_key: ${OG_TEST_EMBED_KEY}), which is not "
                                 "set\n"));
    assert_null(strstr(text, "OMNIGRAPH_LISTEN_ADDR"));
    setenv("OG_TEST_EMBED_KEY", "sk-test-never-printed", 1);
    srv s2;
    assert_int_equal(srv_start(&s2, log2, args), 0);
    assert_int_equal(srv_stop(&s2), 0);
    unsetenv("OG_TEST_EMBED_KEY");
    f = fopen(log2, "rb");
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "embedding provider openai"));
    assert_null(strstr(text, "sk-test-never-printed"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ledger_records_the_binding),
        cmocka_unit_test(test_text_nearest_uses_the_graphs_provider),
        cmocka_unit_test(test_boot_resolves_the_key),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
