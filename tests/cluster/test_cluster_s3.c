/*
 * test_cluster_s3.c — the cluster lifecycle with `storage:` on the store named by
 * OG_TEST_STORE_URI (tests/store/run-s3-tests.sh points it at s3://<bucket>/<prefix>): import,
 * apply (graph created at <storage>/graphs/people.omni, catalog and ledger on the store), the
 * lock across the store, status, and the applied view serving a stored query.  Without
 * OG_TEST_STORE_URI it prints SKIP (the local-directory lifecycle is test_cluster_apply).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "cluster/stored.h"
#include "util/id.h"

static char dir[64];
static char storage[1024];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_lifecycle_on_store(void **state)
{
    (void)state;
    const char *base = getenv("OG_TEST_STORE_URI");
    if (!base || !*base) {
        printf("SKIP: OG_TEST_STORE_URI is not set (tests/store/run-s3-tests.sh runs this against S3)\n");
        return;
    }
    char id[OG_ULID_LEN + 1];
    assert_int_equal(og_ulid_new(id), OG_OK);
    snprintf(storage, sizeof storage, "%s/cluster-%s", base, id);
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "version: 1\nstorage: %s\ngraphs:\n  people:\n    schema: people.pg\n    queries: [q.gq]\n"
             "policies:\n  team: { file: team.policy.yaml, applies_to: [people] }\n",
             storage);
    put("cluster.yaml", yaml);
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n}\n");
    put("q.gq", "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n}\n"
                "query add($name: String, $age: I32) {\n    insert Person { name: $name, age: $age }\n}\n");
    put("team.policy.yaml", "version: 1\ngroups:\n  team: [alice]\nrules:\n  - id: r\n    allow: { actors: { group: team }, actions: [read] }\n");
    char *out = NULL;
    og_cluster_opts o = {.actor = "s3-tester"};
    assert_int_equal(og_cluster_import(&out, dir, &o), OG_OK);
    og_free(out);
    og_status st = og_cluster_apply(&out, dir, &o);
    if (st != OG_OK) fprintf(stderr, "%s\n", out);
    assert_int_equal(st, OG_OK);
    assert_non_null(strstr(out, "\"state_revision\": 2"));
    og_free(out);
    /* nothing of the state lives in the config directory */
    char probe[256];
    snprintf(probe, sizeof probe, "%s/__cluster", dir);
    assert_int_not_equal(access(probe, F_OK), 0);

    /* the lock is on the store: a held lock refuses apply until force-unlock */
    og_store *s = NULL;
    assert_int_equal(og_store_open(&s, storage), OG_OK);
    char lid[32];
    json_t *holder = NULL;
    assert_int_equal(og_lock_acquire(s, "apply", lid, &holder), OG_OK);
    assert_int_equal(og_cluster_apply(&out, dir, &o), OG_ERR_CONFLICT);
    og_free(out);
    assert_int_equal(og_cluster_force_unlock(&out, dir, lid), OG_OK);
    og_free(out);
    /* the ledger CAS on the store */
    json_t *ledger = NULL;
    long long rev = 0;
    assert_int_equal(og_ledger_read(s, &ledger, &rev), OG_OK);
    assert_int_equal(rev, 2);
    json_t *copy = json_deep_copy(ledger);
    assert_int_equal(og_ledger_publish(s, ledger, rev), OG_OK);
    assert_int_equal(og_ledger_publish(s, copy, rev), OG_ERR_CONFLICT);
    json_decref(copy);
    json_decref(ledger);
    og_store_close(s);

    assert_int_equal(og_cluster_status(&out, dir), OG_OK);
    assert_non_null(strstr(out, "\"catalog_conditions\": []"));
    og_free(out);

    /* serve: open the applied view from the storage root itself, run the stored queries */
    og_cluster *c = NULL;
    assert_int_equal(og_cluster_open(&c, storage), OG_OK);
    og_db *db = NULL;
    assert_int_equal(og_db_open(&db, og_cluster_graph_uri(c, "people"), NULL), OG_OK);
    og_stored_set *set = NULL;
    assert_int_equal(og_cluster_stored_queries(&set, c, "people", db), OG_OK);
    og_stored_invoke_opts io = {.params_json = "{\"name\":\"Ada\",\"age\":36}", .expect_mutation = -1};
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "add"), &io), OG_OK);
    og_free(out);
    io.params_json = "{\"min\":30}";
    assert_int_equal(og_stored_invoke(&out, db, og_stored_set_find(set, "adults"), &io), OG_OK);
    assert_non_null(strstr(out, "Ada"));
    og_free(out);
    og_stored_set_free(set);
    og_db_close(db);
    og_cluster_close(c);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/og-cluster-s3-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lifecycle_on_store)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 && !rc) rc = 1;
    return rc;
}
