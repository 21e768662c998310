/*
 * test_server_openapi.c — /openapi.json against the routes actually served: the document is
 * valid OpenAPI 3.1 for a real validator (@seriousme/openapi-schema-validator, pinned in
 * tests/server/openapi/package-lock.json), every documented (method, path) reaches a handler
 * (never the router's 404 / 405), and paths it does not document — the reference's routes
 * this build does not serve, and junk — get the router's 404.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64], graph[128], logpath[128];
static srv S;

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvapi-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    return srv_start(&S, logpath, args);
}

static int teardown(void **state)
{
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

static int router_refused(http_resp *r)
{
    if (r->status == 405) return 1;
    return r->status == 404 && r->json && jstr(r->json, "error") &&
           !strcmp(jstr(r->json, "error"), "no route for this path");
}

static void test_valid_openapi_31(void **state)
{
    http_resp r = get(&S, NULL, "/openapi.json");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "openapi"), "3.1.0");
    /* auth is off: no security schemes */
    assert_null(json_object_get(json_object_get(r.json, "components"), "securitySchemes"));
    char path[160];
    snprintf(path, sizeof path, "%s/openapi.json", dir);
    FILE *f = fopen(path, "w");
    fwrite(r.body, 1, r.len, f);
    fclose(f);
    http_free(&r);
    char mods[1200];
    snprintf(mods, sizeof mods, "%s/tests/server/openapi/node_modules/@seriousme/openapi-schema-validator",
             OG_SOURCE_DIR);
    if (access(mods, R_OK) != 0 || system("node --version > /dev/null 2>&1") != 0) {
        printf("SKIP: the OpenAPI validator is not installed (scripts/install-deps.sh runs npm ci in "
               "tests/server/openapi)\n");
        return;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node '%s/tests/server/openapi/validate.mjs' '%s'", OG_SOURCE_DIR, path);
    assert_int_equal(system(cmd), 0);
}

static void fill(char *out, size_t cap, const char *tmpl)
{
    size_t n = 0;
    for (const char *p = tmpl; *p && n + 1 < cap;) {
        if (*p == '{') {
            const char *e = strchr(p, '}');
            const char *v = !strncmp(p, "{graph_id}", 10) ? "g1" : !strncmp(p, "{branch}", 8) ? "no-such-branch"
                            : !strncmp(p, "{name}", 6)   ? "no_such_query"
                                                         : "X";
            n += (size_t)snprintf(out + n, cap - n, "%s", v);
            p = e + 1;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = 0;
}

static void test_documented_routes_are_served(void **state)
{
    http_resp doc = get(&S, NULL, "/openapi.json");
    json_t *paths = json_object_get(doc.json, "paths");
    const char *tmpl;
    json_t *item;
    size_t ops = 0;
    json_object_foreach(paths, tmpl, item)
    {
        const char *method;
        json_t *op;
        json_object_foreach(item, method, op)
        {
            char path[512], m[16];
            fill(path, sizeof path, tmpl);
            snprintf(m, sizeof m, "%s", method);
            for (char *c = m; *c; c++) *c = (char)(*c - 32 * (*c >= 'a' && *c <= 'z'));
            /* invalid bodies on purpose: the handler answers, nothing is written */
            const char *h[] = {"Content-Type: application/json", NULL};
            http_resp r = http(&S, m, path, h, strcmp(m, "GET") && strcmp(m, "DELETE") ? "{\"x\":" : NULL,
                               strcmp(m, "GET") && strcmp(m, "DELETE") ? 5 : 0);
            if (router_refused(&r)) fprintf(stderr, "documented but not routed: %s %s\n", m, path);
            assert_false(router_refused(&r));
            http_free(&r);
            ops++;
        }
    }
    http_free(&doc);
    assert_true(ops >= 20);
    /* the discovery route is served but not self-listed */
    http_resp r = get(&S, NULL, "/openapi.json");
    assert_int_equal(r.status, 200);
    http_free(&r);
}

static void test_undocumented_paths_are_not_routed(void **state)
{
    http_resp doc = get(&S, NULL, "/openapi.json");
    json_t *paths = json_object_get(doc.json, "paths");
    static const char *candidates[] = {"/graphs/{graph_id}/queries/{name}/extra", "/graphs/{graph_id}/mcp/x",
                                       "/graphs/{graph_id}/blobs",
                                       "/query", "/graphs/{graph_id}/optimize", "/policies",
                                       "/graphs/{graph_id}/snapshot/extra"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        assert_null(json_object_get(paths, candidates[i]));
        char path[512];
        fill(path, sizeof path, candidates[i]);
        http_resp r = get(&S, NULL, path);
        if (!router_refused(&r)) fprintf(stderr, "routed but not documented: %s -> %ld\n", path, r.status);
        assert_true(router_refused(&r));
        http_free(&r);
        r = post_json(&S, NULL, path, "{}");
        assert_true(router_refused(&r));
        http_free(&r);
    }
    http_free(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_openapi_31),
        cmocka_unit_test(test_documented_routes_are_served),
        cmocka_unit_test(test_undocumented_paths_are_not_routed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
