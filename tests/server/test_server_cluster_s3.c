/*
 * test_server_cluster_s3.c — `omnigraph-server --cluster` over a cluster whose ledger, catalog
 * and graph roots live on the store named by OG_TEST_STORE_URI (tests/store/run-s3-tests.sh
 * points it at s3://<bucket>/<prefix>): booted from the config directory and from the storage
 * root URI itself, a stored mutation writes to the S3 graph and a stored read sees it.
 * Without OG_TEST_STORE_URI it prints SKIP (test_server_cluster covers local directories).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cluster/cluster.h"
#include "server_client.h"
#include "util/id.h"

static void put(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void serve_and_check(const char *where, const char *logpath, const char *name, int expect_rows)
{
    const char *args[] = {"--cluster", where, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    srv s;
    assert_int_equal(srv_start(&s, logpath, args), 0);
    char body[160];
    snprintf(body, sizeof body, "{\"params\":{\"name\":\"%s\",\"age\":40}}", name);
    http_resp r = post_json(&s, NULL, "/graphs/people/queries/add", body);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "affected_nodes")), 1);
    http_free(&r);
    r = post_json(&s, NULL, "/graphs/people/queries/adults", "{\"params\":{\"min\":30}}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), expect_rows);
    http_free(&r);
    r = get(&s, NULL, "/graphs/people/queries");
    assert_int_equal(json_array_size(json_object_get(r.json, "queries")), 2);
    http_free(&r);
    assert_int_equal(srv_stop(&s), 0);
}

static void test_cluster_on_store(void **state)
{
    (void)state;
    const char *base = getenv("OG_TEST_STORE_URI");
    if (!base || !*base) {
        printf("SKIP: OG_TEST_STORE_URI is not set (tests/store/run-s3-tests.sh runs this against S3)\n");
        return;
    }
    char dir[64] = "/tmp/og-srvs3-XXXXXX", storage[1024], yaml[2048], logpath[128];
    assert_non_null(mkdtemp(dir));
    snprintf(logpath, sizeof logpath, "%s/server.log", dir);
    char id[OG_ULID_LEN + 1];
    assert_int_equal(og_ulid_new(id), OG_OK);
    snprintf(storage, sizeof storage, "%s/server-cluster-%s", base, id);
    snprintf(yaml, sizeof yaml, "version: 1\nstorage: %s\ngraphs:\n  people:\n    schema: people.pg\n    queries: [q.gq]\n",
             storage);
    put(dir, "cluster.yaml", yaml);
    put(dir, "people.pg", "node Person {\n    name: String @key\n    age: I32?\n}\n");
    put(dir, "q.gq", "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n}\n"
                     "query add($name: String, $age: I32) {\n    insert Person { name: $name, age: $age }\n}\n");
    char *out = NULL;
    og_cluster_opts o = {.actor = "s3-tester"};
    assert_int_equal(og_cluster_import(&out, dir, &o), OG_OK);
    og_free(out);
    assert_int_equal(og_cluster_apply(&out, dir, &o), OG_OK);
    og_free(out);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKEN");
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_FILE");
    serve_and_check(dir, logpath, "Ada", 1);     /* the config directory */
    serve_and_check(storage, logpath, "Alan", 2); /* the storage root itself */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_on_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
