/*
 * test_cluster_apply.c — the cluster lifecycle on a local directory: import, plan, apply
 * round trips (idempotent), drift (files edited after apply), schema migrations (supported,
 * refused), stored queries refused at apply when they no longer type-check against the
 * graph's live schema, the ledger's compare-and-swap, the lock and force-unlock, concurrent
 * applies, and the applied view a server serves.
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

static char dir[64];

static const char *SCHEMA = "node Person {\n    name: String @key\n    age: I32?\n}\nedge Knows: Person -> Person\n";
static const char *QUERIES =
    "query friends($name: String) {\n    match { $p: Person { name: $name }  $p knows $f }\n    return { $f.name }\n}\n"
    "query add_person($name: String, $age: I32?) {\n    insert Person { name: $name, age: $age }\n}\n";
static const char *POLICY = "version: 1\ngroups:\n  team: [alice]\nrules:\n  - id: r\n    allow: { actors: { group: team }, actions: [read] }\n";
static const char *YAML =
    "version: 1\nstate: { lock: %s }\ngraphs:\n  people:\n    schema: people.pg\n    queries: queries/\n"
    "policies:\n  team: { file: team.policy.yaml, applies_to: [people] }\n";

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void fresh(const char *lock)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/queries'", dir, dir);
    assert_int_equal(system(cmd), 0);
    char y[1024];
    snprintf(y, sizeof y, YAML, lock);
    put("cluster.yaml", y);
    put("people.pg", SCHEMA);
    put("queries/people.gq", QUERIES);
    put("team.policy.yaml", POLICY);
}

/* Runs a verb, returns its parsed report; *st receives the status. */
static json_t *verb(og_status (*fn)(char **, const char *, const og_cluster_opts *), og_status *st)
{
    char *out = NULL;
    og_cluster_opts o = {.actor = "tester"};
    *st = fn(&out, dir, &o);
    json_t *r = out ? json_loads(out, 0, NULL) : NULL;
    og_free(out);
    assert_non_null(r);
    return r;
}

static json_t *change_of(json_t *r, const char *addr)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "changes"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "resource")), addr)) return c;
    return NULL;
}

static const char *cstr(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static void import_and_apply(void)
{
    og_status st;
    json_t *r = verb(og_cluster_import, &st);
    assert_int_equal(st, OG_OK);
    json_decref(r);
    r = verb(og_cluster_apply, &st);
    if (st != OG_OK) fprintf(stderr, "%s\n", json_dumps(r, JSON_INDENT(2)));
    assert_int_equal(st, OG_OK);
    json_decref(r);
}

static void graph_uri(char *out, size_t cap) { snprintf(out, cap, "%s/graphs/people.omni", dir); }

static void test_round_trip(void **state)
{
    (void)state;
    fresh("true");
    og_status st;
    /* plan before anything: every resource is a create, nothing written */
    json_t *r = verb(og_cluster_plan, &st);
    assert_int_equal(st, OG_OK);
    assert_int_equal(json_array_size(json_object_get(r, "changes")), 5);
    assert_string_equal(cstr(change_of(r, "graph.people"), "operation"), "create");
    json_decref(r);
    char key[512];
    snprintf(key, sizeof key, "%s/__cluster/lock.json", dir);
    assert_int_not_equal(access(key, F_OK), 0); /* plan released its lock */
    /* apply needs a ledger */
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_ERR_NOT_FOUND);
    assert_non_null(strstr(cstr(r, "error"), "state_missing"));
    json_decref(r);
    snprintf(key, sizeof key, "%s/graphs", dir);
    assert_int_not_equal(access(key, F_OK), 0); /* nothing created */

    r = verb(og_cluster_import, &st);
    assert_int_equal(st, OG_OK);
    json_decref(r);
    r = verb(og_cluster_import, &st);
    assert_int_equal(st, OG_ERR_ALREADY_EXISTS);
    json_decref(r);

    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_true(json_is_true(json_object_get(r, "state_written")));
    assert_int_equal(json_integer_value(json_object_get(r, "state_revision")), 2);
    assert_int_equal(json_integer_value(json_object_get(r, "applied_count")), 5);
    assert_true(json_is_true(json_object_get(r, "converged")));
    char qd[65];
    snprintf(qd, sizeof qd, "%s", cstr(change_of(r, "query.people.friends"), "after_digest"));
    snprintf(key, sizeof key, "%s/__cluster/resources/query/people/friends/%s.gq", dir, qd);
    assert_int_equal(access(key, R_OK), 0);
    json_decref(r);
    snprintf(key, sizeof key, "%s/__cluster/state.json", dir);
    assert_int_equal(access(key, R_OK), 0);

    /* converged: plan shows nothing, apply writes nothing */
    r = verb(og_cluster_plan, &st);
    assert_int_equal(json_array_size(json_object_get(r, "changes")), 0);
    json_decref(r);
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_false(json_is_true(json_object_get(r, "state_written")));
    assert_int_equal(json_integer_value(json_object_get(r, "state_revision")), 2);
    json_decref(r);

    /* status verifies the catalog */
    char *out = NULL;
    assert_int_equal(og_cluster_status(&out, dir), OG_OK);
    r = json_loads(out, 0, NULL);
    og_free(out);
    assert_true(json_is_true(json_object_get(r, "ok")));
    assert_string_equal(cstr(json_object_get(json_object_get(r, "graphs"), "people"), "status"), "applied");
    json_decref(r);

    /* the applied view: graphs, stored queries, the bound policy */
    og_cluster *c = NULL;
    assert_int_equal(og_cluster_open(&c, dir), OG_OK);
    assert_int_equal(og_cluster_graph_count(c), 1);
    assert_string_equal(og_cluster_graph_id(c, 0), "people");
    og_db *db = NULL;
    assert_int_equal(og_db_open(&db, og_cluster_graph_uri(c, "people"), NULL), OG_OK);
    og_stored_set *set = NULL;
    assert_int_equal(og_cluster_stored_queries(&set, c, "people", db), OG_OK);
    assert_int_equal(og_stored_set_count(set), 2);
    assert_non_null(og_stored_set_find(set, "add_person"));
    assert_string_equal(og_cluster_policy_text(c, "people"), POLICY);
    assert_null(og_cluster_policy_text(c, "cluster"));
    og_stored_set_free(set);
    og_db_close(db);
    og_cluster_close(c);

    /* a tampered catalog blob is refused by the view and reported by status */
    FILE *f = fopen(key, "r"); /* (state.json, just to prove reads work) */
    assert_non_null(f);
    fclose(f);
    snprintf(key, sizeof key, "%s/__cluster/resources/query/people/friends/%s.gq", dir, qd);
    f = fopen(key, "a");
    fputs("// tampered\n", f);
    fclose(f);
    assert_int_equal(og_cluster_open(&c, dir), OG_ERR_CORRUPT);
    assert_non_null(strstr(og_error_message(), "catalog_payload_digest_mismatch"));
    assert_int_equal(og_cluster_status(&out, dir), OG_OK);
    assert_non_null(strstr(out, "catalog_payload_mismatch"));
    og_free(out);
}

static void test_drift_and_migration(void **state)
{
    (void)state;
    fresh("true");
    import_and_apply();
    og_status st;
    /* edit the .gq after apply: both of its queries are updates (the digest is the file's) */
    put("queries/people.gq", "// edited\n");
    char q[1024];
    snprintf(q, sizeof q, "// edited\n%s", QUERIES);
    put("queries/people.gq", q);
    json_t *r = verb(og_cluster_plan, &st);
    assert_int_equal(json_array_size(json_object_get(r, "changes")), 2);
    assert_string_equal(cstr(change_of(r, "query.people.friends"), "operation"), "update");
    assert_string_equal(cstr(change_of(r, "query.people.add_person"), "operation"), "update");
    json_decref(r);
    /* a supported schema change: plan previews the real migration, apply runs it */
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n    email: String?\n}\nedge Knows: Person -> Person\n");
    r = verb(og_cluster_plan, &st);
    json_t *c = change_of(r, "schema.people");
    assert_non_null(c);
    assert_string_equal(cstr(c, "disposition"), "applied");
    json_t *m = json_object_get(c, "migration");
    assert_true(json_is_true(json_object_get(m, "supported")));
    assert_string_equal(cstr(json_array_get(json_object_get(m, "steps"), 0), "kind"), "add_property");
    json_decref(r);
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_int_equal(json_integer_value(json_object_get(r, "state_revision")), 3);
    json_decref(r);
    char uri[256];
    graph_uri(uri, sizeof uri);
    og_db *db = NULL;
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    char *schema = NULL;
    assert_int_equal(og_db_schema_source(&schema, db, NULL), OG_OK);
    assert_non_null(strstr(schema, "email"));
    og_free(schema);

    /* out-of-band drift on the live graph: status reports it */
    const char *oob = "node Person {\n    name: String @key\n    age: I32?\n    email: String?\n    nick: String?\n}\nedge Knows: Person -> Person\n";
    og_receipt rc;
    assert_int_equal(og_db_schema_apply(&rc, NULL, db, NULL, "oob.pg", oob, strlen(oob), 0, 0), OG_OK);
    og_db_close(db);
    char *out = NULL;
    assert_int_equal(og_cluster_status(&out, dir), OG_OK);
    r = json_loads(out, 0, NULL);
    og_free(out);
    assert_string_equal(cstr(json_object_get(json_object_get(r, "graphs"), "people"), "status"), "drifted");
    json_decref(r);
}

static void test_refusals(void **state)
{
    (void)state;
    fresh("true");
    import_and_apply();
    og_status st;
    /* an unsupported migration (a property's type changes) is blocked with the engine's reason,
     * and the query that needs it is blocked too; nothing of either is recorded */
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n    nick: String?\n}\nedge Knows: Person -> Person\n");
    json_t *r0 = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    json_decref(r0);
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n    nick: I32?\n}\nedge Knows: Person -> Person\n");
    char q[2048];
    snprintf(q, sizeof q, "%squery by_age($a: I32) {\n    match { $p: Person { nick: $a } }\n    return { $p.name }\n}\n", QUERIES);
    put("queries/people.gq", q);
    json_t *r = verb(og_cluster_plan, &st);
    json_t *c = change_of(r, "schema.people");
    assert_string_equal(cstr(c, "disposition"), "blocked");
    assert_non_null(strstr(cstr(c, "reason"), "schema_apply_failed: unsupported migration"));
    assert_string_equal(cstr(change_of(r, "query.people.by_age"), "disposition"), "blocked");
    json_decref(r);
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "apply refused"));
    c = change_of(r, "query.people.by_age");
    assert_string_equal(cstr(c, "result"), "blocked");
    assert_non_null(strstr(cstr(c, "reason"), "blocked by schema.people"));
    assert_string_equal(cstr(json_object_get(json_object_get(r, "resource_statuses"), "schema.people"), "status"), "blocked");
    json_decref(r);
    og_cluster *cl = NULL;
    assert_int_equal(og_cluster_open(&cl, dir), OG_OK);
    char uri[256];
    graph_uri(uri, sizeof uri);
    og_db *db = NULL;
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    og_stored_set *set = NULL;
    assert_int_equal(og_cluster_stored_queries(&set, cl, "people", db), OG_OK);
    assert_null(og_stored_set_find(set, "by_age")); /* never served */
    og_stored_set_free(set);
    og_cluster_close(cl);

    /* a stored query that no longer type-checks against the LIVE schema (changed out of band)
     * is refused at apply with the reason */
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n    nick: String?\n}\nedge Knows: Person -> Person\n");
    const char *oob = "node Person {\n    name: String @key\n}\nedge Knows: Person -> Person\n";
    og_receipt rc;
    assert_int_equal(og_db_schema_apply(&rc, NULL, db, NULL, "oob.pg", oob, strlen(oob), 0, 0), OG_OK);
    og_db_close(db);
    snprintf(q, sizeof q, "%squery ages() {\n    match { $p: Person }\n    return { $p.name, $p.age }\n}\n", QUERIES);
    put("queries/people.gq", q);
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_ERR_INVALID);
    c = change_of(r, "query.people.ages");
    assert_string_equal(cstr(c, "result"), "blocked");
    assert_non_null(strstr(cstr(c, "reason"), "query_typecheck_error: query `ages` does not type-check against the schema"));
    json_decref(r);
    /* and the served view refuses the graph whose applied queries broke */
    assert_int_equal(og_cluster_open(&cl, dir), OG_OK);
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    assert_int_equal(og_cluster_stored_queries(&set, cl, "people", db), OG_ERR_TYPE);
    assert_non_null(strstr(og_error_message(), "graph 'people'"));
    og_db_close(db);
    og_cluster_close(cl);
}

static void test_ledger_cas(void **state)
{
    (void)state;
    fresh("true");
    import_and_apply();
    og_store *st = NULL;
    assert_int_equal(og_store_open(&st, dir), OG_OK);
    json_t *s = NULL;
    long long rev = 0;
    assert_int_equal(og_ledger_read(st, &s, &rev), OG_OK);
    assert_int_equal(rev, 2);
    json_t *a = json_deep_copy(s), *b = json_deep_copy(s);
    /* two writers both read revision 2: exactly one publishes 3 */
    assert_int_equal(og_ledger_publish(st, a, rev), OG_OK);
    assert_int_equal(og_ledger_publish(st, b, rev), OG_ERR_CONFLICT);
    assert_non_null(strstr(og_error_message(), "changed concurrently"));
    json_t *now = NULL;
    assert_int_equal(og_ledger_read(st, &now, &rev), OG_OK);
    assert_int_equal(rev, 3);
    json_decref(now);
    json_decref(a);
    json_decref(b);
    json_decref(s);
    og_store_close(st);
}

static void test_lock_and_force_unlock(void **state)
{
    (void)state;
    fresh("true");
    import_and_apply();
    og_store *st = NULL;
    assert_int_equal(og_store_open(&st, dir), OG_OK);
    char id[32];
    json_t *holder = NULL;
    assert_int_equal(og_lock_acquire(st, "apply", id, &holder), OG_OK);
    og_status s;
    json_t *r = verb(og_cluster_apply, &s);
    assert_int_equal(s, OG_ERR_CONFLICT);
    assert_non_null(strstr(og_error_message(), "state_locked"));
    assert_non_null(strstr(og_error_message(), id));
    json_decref(r);
    r = verb(og_cluster_plan, &s);
    assert_int_equal(s, OG_ERR_CONFLICT);
    json_decref(r);
    char *out = NULL;
    assert_int_equal(og_cluster_status(&out, dir), OG_OK); /* status never takes the lock */
    assert_non_null(strstr(out, id));
    og_free(out);
    assert_int_equal(og_cluster_force_unlock(&out, dir, "01NOTTHEID"), OG_ERR_PRECONDITION_FAILED);
    og_free(out);
    assert_int_equal(og_cluster_force_unlock(&out, dir, id), OG_OK);
    og_free(out);
    assert_int_equal(og_cluster_force_unlock(&out, dir, id), OG_ERR_NOT_FOUND);
    og_free(out);
    r = verb(og_cluster_apply, &s);
    assert_int_equal(s, OG_OK);
    json_decref(r);
    og_store_close(st);
}

static size_t count_tables(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls '%s/graphs/people.omni/tables' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    if (fscanf(p, "%zu", &n) != 1) n = 0;
    pclose(p);
    return n;
}

/* Dropping a type: soft by default (its table stays for the commits that name it), hard with
 * allow_data_loss (reclaimed) — and plan and apply report the mode the apply runs. */
static void test_drop_soft_and_hard(void **state)
{
    (void)state;
    const char *with_pet = "node Person {\n    name: String @key\n    age: I32?\n}\nedge Knows: Person -> Person\n"
                           "node Pet {\n    name: String @key\n}\n";
    for (int hard = 0; hard < 2; hard++) {
        fresh("true");
        put("people.pg", with_pet);
        import_and_apply();
        char uri[256];
        graph_uri(uri, sizeof uri);
        og_db *db = NULL;
        assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
        const char *ins = "query add() { insert Pet { name: \"Rex\" } }";
        og_receipt rc;
        assert_int_equal(og_db_mutate(&rc, db, ins, strlen(ins), NULL, NULL, NULL, NULL), OG_OK);
        og_db_close(db);
        size_t before = count_tables();
        put("people.pg", SCHEMA);
        og_cluster_opts o = {.actor = "tester", .allow_data_loss = hard};
        const char *mode = hard ? "hard" : "soft";
        char *out = NULL;
        assert_int_equal(og_cluster_plan(&out, dir, &o), OG_OK);
        json_t *r = json_loads(out, 0, NULL);
        og_free(out);
        json_t *step = json_array_get(json_object_get(json_object_get(change_of(r, "schema.people"), "migration"), "steps"), 0);
        assert_string_equal(cstr(step, "kind"), "drop_type");
        assert_string_equal(cstr(step, "mode"), mode);
        json_decref(r);
        assert_int_equal(og_cluster_apply(&out, dir, &o), OG_OK);
        r = json_loads(out, 0, NULL);
        og_free(out);
        step = json_array_get(json_object_get(json_object_get(change_of(r, "schema.people"), "migration"), "steps"), 0);
        assert_string_equal(cstr(step, "mode"), mode);
        assert_string_equal(cstr(change_of(r, "schema.people"), "result"), "applied");
        json_decref(r);
        assert_int_equal(count_tables(), hard ? before - 1 : before);
    }
}

typedef struct racer {
    og_status st;
    int written;
    long long revision;
} racer;

static void *race_apply(void *arg)
{
    racer *r = arg;
    char *out = NULL;
    og_cluster_opts o = {0};
    r->st = og_cluster_apply(&out, dir, &o);
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    r->written = json_is_true(json_object_get(j, "state_written"));
    r->revision = json_integer_value(json_object_get(j, "state_revision"));
    json_decref(j);
    og_free(out);
    return NULL;
}

static void test_concurrent_apply(void **state)
{
    (void)state;
    /* with and without the lock: two applies of one change never both record it */
    const char *locks[] = {"true", "false"};
    for (int l = 0; l < 2; l++) {
        for (int round = 0; round < 3; round++) {
            fresh(locks[l]);
            import_and_apply();
            char q[1024];
            snprintf(q, sizeof q, "// round %d\n%s", round, QUERIES);
            put("queries/people.gq", q);
            racer a = {0}, b = {0};
            pthread_t ta, tb;
            pthread_create(&ta, NULL, race_apply, &a);
            pthread_create(&tb, NULL, race_apply, &b);
            pthread_join(ta, NULL);
            pthread_join(tb, NULL);
            assert_true(a.written + b.written == 1);
            racer *loser = a.written ? &b : &a;
            /* the loser either found the lock, lost the CAS, or ran after and found nothing to do */
            assert_true(loser->st == OG_ERR_CONFLICT || (loser->st == OG_OK && !loser->written));
            og_store *st = NULL;
            json_t *s = NULL;
            long long rev;
            assert_int_equal(og_store_open(&st, dir), OG_OK);
            assert_int_equal(og_ledger_read(st, &s, &rev), OG_OK);
            assert_int_equal(rev, 3);
            json_decref(s);
            og_store_close(st);
        }
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/og-cluster-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),          cmocka_unit_test(test_drift_and_migration),
        cmocka_unit_test(test_refusals),            cmocka_unit_test(test_ledger_cas),
        cmocka_unit_test(test_lock_and_force_unlock), cmocka_unit_test(test_concurrent_apply),
        cmocka_unit_test(test_drop_soft_and_hard),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 && !rc) rc = 1;
    return rc;
}
