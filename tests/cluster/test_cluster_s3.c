/*
 * test_cluster_s3.c — the cluster lifecycle with `storage:` on the store named by
 * OG_TEST_STORE_URI (tests/store/run-s3-tests.sh points it at s3://<bucket>/<prefix>): import,
 * apply (graph created at <storage>/graphs/people.omni, catalog and ledger on the store), the
 * lock across the store, status, and the applied view serving a stored query; and a graph
 * deleted by approval (`cluster approve`) with its root on the store; two applies racing on
 * the store (one records the change).  Without
 * OG_TEST_STORE_URI it prints SKIP (the local-directory lifecycle is test_cluster_apply).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <pthread.h>
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

/* Every key under `prefix` of the store at `uri`. */
static size_t count_keys(const char *uri, const char *prefix)
{
    og_store *s = NULL;
    assert_int_equal(og_store_open(&s, uri), OG_OK);
    og_keylist kl = {0};
    assert_int_equal(og_store_list(s, prefix, NULL, 0, &kl), OG_OK);
    size_t n = kl.count;
    og_keylist_free(&kl);
    og_store_close(s);
    return n;
}

static json_t *change_of(json_t *r, const char *addr)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "changes"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "resource")), addr)) return c;
    return NULL;
}

static json_t *run(og_status (*fn)(char **, const char *, const og_cluster_opts *), og_status expect)
{
    char *out = NULL;
    og_cluster_opts o = {.actor = "s3-tester"};
    og_status st = fn(&out, dir, &o);
    if (st != expect) fprintf(stderr, "%s\n%s\n", og_error_message(), out ? out : "");
    assert_int_equal(st, expect);
    json_t *r = out ? json_loads(out, 0, NULL) : NULL;
    og_free(out);
    return r;
}

/* Deleting a graph by approval with the storage root on the store: the delete waits for
 * `cluster approve`, the approval artifact lives on the store, and the approved apply
 * removes every key of the graph's root there (and nothing of its sibling), tombstones the
 * ledger on the store and consumes the approval. */
static void test_delete_by_approval_on_store(void **state)
{
    (void)state;
    const char *base = getenv("OG_TEST_STORE_URI");
    if (!base || !*base) {
        printf("SKIP: OG_TEST_STORE_URI is not set (tests/store/run-s3-tests.sh runs this against S3)\n");
        return;
    }
    char id[OG_ULID_LEN + 1];
    assert_int_equal(og_ulid_new(id), OG_OK);
    snprintf(storage, sizeof storage, "%s/cluster-del-%s", base, id);
    char yaml[2048];
    const char *graphs = "graphs:\n  people:\n    schema: people.pg\n    queries: [q.gq]\n";
    snprintf(yaml, sizeof yaml, "version: 1\nstorage: %s\n%s  scratch:\n    schema: people.pg\n    queries: [q.gq]\n",
             storage, graphs);
    put("cluster.yaml", yaml);
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n}\n");
    put("q.gq", "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n}\n");
    json_decref(run(og_cluster_import, OG_OK));
    json_decref(run(og_cluster_apply, OG_OK));
    assert_true(count_keys(storage, "graphs/scratch.omni/") > 0);
    size_t people_keys = count_keys(storage, "graphs/people.omni/");
    assert_true(people_keys > 0);

    /* scratch leaves the config: the delete is blocked until approved, nothing removed */
    snprintf(yaml, sizeof yaml, "version: 1\nstorage: %s\n%s", storage, graphs);
    put("cluster.yaml", yaml);
    json_t *r = run(og_cluster_apply, OG_OK);
    assert_true(json_is_false(json_object_get(r, "converged")));
    assert_string_equal(json_string_value(json_object_get(change_of(r, "graph.scratch"), "result")), "blocked");
    json_decref(r);
    assert_true(count_keys(storage, "graphs/scratch.omni/") > 0);

    char *out = NULL;
    og_cluster_opts o = {.actor = "andrew"};
    assert_int_equal(og_cluster_approve(&out, dir, "graph.scratch", &o), OG_OK);
    r = json_loads(out, 0, NULL);
    og_free(out);
    char aid[64], key[128];
    snprintf(aid, sizeof aid, "%s", json_string_value(json_object_get(r, "approval_id")));
    json_decref(r);
    snprintf(key, sizeof key, "__cluster/approvals/%s.json", aid);
    assert_int_equal(count_keys(storage, key), 1); /* the artifact is on the store */

    r = run(og_cluster_apply, OG_OK);
    assert_true(json_is_true(json_object_get(r, "converged")));
    assert_string_equal(json_string_value(json_object_get(change_of(r, "graph.scratch"), "result")), "applied");
    json_decref(r);
    assert_int_equal(count_keys(storage, "graphs/scratch.omni/"), 0);
    assert_int_equal(count_keys(storage, "graphs/people.omni/"), people_keys);

    og_store *s = NULL;
    assert_int_equal(og_store_open(&s, storage), OG_OK);
    json_t *ledger = NULL;
    long long rev = 0;
    assert_int_equal(og_ledger_read(s, &ledger, &rev), OG_OK);
    json_t *res = json_object_get(json_object_get(ledger, "applied_revision"), "resources");
    assert_null(json_object_get(res, "graph.scratch"));
    assert_non_null(json_object_get(res, "graph.people"));
    json_t *tomb = json_object_get(json_object_get(ledger, "observations"), "graph.scratch");
    assert_string_equal(json_string_value(json_object_get(tomb, "kind")), "tombstone");
    assert_string_equal(json_string_value(json_object_get(tomb, "approval_id")), aid);
    json_decref(ledger);
    og_bytes b = {0};
    assert_int_equal(og_store_get(s, key, &b), OG_OK);
    json_t *art = json_loadb((const char *)b.data, b.len, 0, NULL);
    og_bytes_free(&b);
    assert_true(json_is_string(json_object_get(art, "consumed_at")));
    json_decref(art);
    og_store_close(s);

    /* converged: nothing left to do; the remaining graph still serves */
    r = run(og_cluster_plan, OG_OK);
    assert_int_equal(json_array_size(json_object_get(r, "changes")), 0);
    json_decref(r);
    og_db *db = NULL;
    og_cluster *c = NULL;
    assert_int_equal(og_cluster_open(&c, storage), OG_OK);
    assert_int_equal(og_db_open(&db, og_cluster_graph_uri(c, "people"), NULL), OG_OK);
    og_db_close(db);
    og_cluster_close(c);
}

typedef struct racer {
    og_status st;
    int written;
} racer;

static void *race_apply(void *arg)
{
    racer *r = arg;
    char *out = NULL;
    og_cluster_opts o = {.actor = "racer"};
    r->st = og_cluster_apply(&out, dir, &o);
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    r->written = json_is_true(json_object_get(j, "state_written"));
    json_decref(j);
    og_free(out);
    return NULL;
}

/* Two applies of one change racing on the store, with the lock and without it (then only the
 * ledger's compare-and-swap on the store separates them): exactly one records it. */
static void test_concurrent_apply_on_store(void **state)
{
    (void)state;
    const char *base = getenv("OG_TEST_STORE_URI");
    if (!base || !*base) {
        printf("SKIP: OG_TEST_STORE_URI is not set (tests/store/run-s3-tests.sh runs this against S3)\n");
        return;
    }
    const char *locks[] = {"true", "false"};
    for (int l = 0; l < 2; l++) {
        char id[OG_ULID_LEN + 1];
        assert_int_equal(og_ulid_new(id), OG_OK);
        snprintf(storage, sizeof storage, "%s/cluster-race-%s", base, id);
        char yaml[2048];
        snprintf(yaml, sizeof yaml,
                 "version: 1\nstorage: %s\nstate: { lock: %s }\ngraphs:\n  people:\n    schema: people.pg\n"
                 "    queries: [q.gq]\n",
                 storage, locks[l]);
        put("cluster.yaml", yaml);
        put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n}\n");
        put("q.gq", "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n}\n");
        json_decref(run(og_cluster_import, OG_OK));
        json_decref(run(og_cluster_apply, OG_OK));
        put("q.gq", "query adults($min: I32) {\n    match { $p: Person  $p.age > $min }\n    return { $p.name }\n}\n");
        racer a = {0}, b = {0};
        pthread_t ta, tb;
        assert_int_equal(pthread_create(&ta, NULL, race_apply, &a), 0);
        assert_int_equal(pthread_create(&tb, NULL, race_apply, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        assert_int_equal(a.written + b.written, 1);
        racer *loser = a.written ? &b : &a;
        assert_true(loser->st == OG_ERR_CONFLICT || (loser->st == OG_OK && !loser->written));
        og_store *s = NULL;
        json_t *ledger = NULL;
        long long rev = 0;
        assert_int_equal(og_store_open(&s, storage), OG_OK);
        assert_int_equal(og_ledger_read(s, &ledger, &rev), OG_OK);
        assert_int_equal(rev, 3);
        json_decref(ledger);
        og_store_close(s);
        json_t *r = run(og_cluster_plan, OG_OK);
        assert_int_equal(json_array_size(json_object_get(r, "changes")), 0);
        json_decref(r);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/og-cluster-s3-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lifecycle_on_store), cmocka_unit_test(test_delete_by_approval_on_store),
                                       cmocka_unit_test(test_concurrent_apply_on_store)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 && !rc) rc = 1;
    return rc;
}
