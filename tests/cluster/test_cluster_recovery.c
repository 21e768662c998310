/*
 * test_cluster_recovery.c — what the reference's control plane does beyond plan/apply: graph
 * deletion behind a digest-bound approval (`cluster approve`), stale approvals, recovery
 * sidecars left by an interrupted apply (each classification of the sweep, with the exact
 * diagnostics) and `cluster refresh` (catalog drift, schema drift, a vanished root).
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
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "cluster/stored.h"
#include "util/error.h"

static char dir[64];

static const char *SCHEMA = "node Person {\n    name: String @key\n    age: I32?\n}\nedge Knows: Person -> Person\n";
static const char *QUERIES = "query adults($min: I32) {\n    match { $p: Person  $p.age >= $min }\n"
                             "    return { $p.name }\n}\n";
static const char *TWO = "version: 1\ngraphs:\n  people:\n    schema: people.pg\n    queries: queries/\n"
                         "  scratch:\n    schema: people.pg\n    queries: queries/\n";
static const char *ONE = "version: 1\ngraphs:\n  people:\n    schema: people.pg\n    queries: queries/\n";

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int exists(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return access(path, F_OK) == 0;
}

static void fresh(const char *yaml)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/queries'", dir, dir);
    assert_int_equal(system(cmd), 0);
    put("cluster.yaml", yaml);
    put("people.pg", SCHEMA);
    put("queries/q.gq", QUERIES);
}

static json_t *verb(og_status (*fn)(char **, const char *, const og_cluster_opts *), og_status *st)
{
    char *out = NULL;
    og_cluster_opts o = {.actor = "andrew"};
    *st = fn(&out, dir, &o);
    json_t *r = out ? json_loads(out, 0, NULL) : NULL;
    og_free(out);
    assert_non_null(r);
    return r;
}

static json_t *approve(const char *res, const char *actor, og_status *st)
{
    char *out = NULL;
    og_cluster_opts o = {.actor = actor};
    *st = og_cluster_approve(&out, dir, res, &o);
    json_t *r = out ? json_loads(out, 0, NULL) : json_object();
    og_free(out);
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

/* The diagnostic with `code`, or NULL. */
static json_t *diag(json_t *r, const char *code)
{
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(r, "diagnostics"), i, d)
        if (!strcmp(cstr(d, "code"), code)) return d;
    return NULL;
}

static json_t *ledger(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/__cluster/state.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    return j;
}

static json_t *resources(json_t *l) { return json_object_get(json_object_get(l, "applied_revision"), "resources"); }

static size_t count_dir(const char *rel)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls '%s/%s' 2>/dev/null | wc -l", dir, rel);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    if (fscanf(p, "%zu", &n) != 1) n = 0;
    pclose(p);
    return n;
}

static void import_apply(void)
{
    og_status st;
    json_decref(verb(og_cluster_import, &st));
    if (st != OG_OK) fprintf(stderr, "import: %s\n", og_error_message());
    assert_int_equal(st, OG_OK);
    json_t *r = verb(og_cluster_apply, &st);
    if (st != OG_OK) fprintf(stderr, "%s\n", og_error_message());
    assert_int_equal(st, OG_OK);
    json_decref(r);
}

static void test_delete_needs_approval(void **state)
{
    (void)state;
    fresh(TWO);
    import_apply();
    assert_true(exists("graphs/scratch.omni"));
    put("cluster.yaml", ONE);
    og_status st;
    /* plan: the delete is gated, its queries wait with it */
    json_t *r = verb(og_cluster_plan, &st);
    assert_int_equal(st, OG_OK);
    json_t *c = change_of(r, "graph.scratch");
    assert_string_equal(cstr(c, "operation"), "delete");
    assert_string_equal(cstr(c, "disposition"), "blocked");
    assert_string_equal(cstr(c, "reason"), "approval_required");
    assert_string_equal(cstr(change_of(r, "query.scratch.adults"), "reason"), "approval_required");
    assert_string_equal(cstr(change_of(r, "schema.scratch"), "reason"), "approval_required");
    json_t *gates = json_object_get(r, "approvals_required");
    assert_int_equal(json_array_size(gates), 1); /* one gate per graph */
    assert_string_equal(cstr(json_array_get(gates, 0), "resource"), "graph.scratch");
    assert_string_equal(cstr(json_array_get(gates, 0), "reason"), "delete may remove deployed graph or schema definition");
    assert_true(json_is_false(json_object_get(json_array_get(gates, 0), "satisfied")));
    json_decref(r);
    /* apply without an approval deletes nothing: not a failure, not converged */
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_true(json_is_false(json_object_get(r, "converged")));
    assert_string_equal(cstr(change_of(r, "graph.scratch"), "result"), "blocked");
    json_decref(r);
    assert_true(exists("graphs/scratch.omni"));
    json_t *l = ledger();
    assert_non_null(json_object_get(resources(l), "graph.scratch"));
    assert_string_equal(cstr(json_object_get(json_object_get(l, "resource_statuses"), "graph.scratch"), "status"), "blocked");
    json_decref(l);

    /* approve: an approver is required; only a gated change can be approved */
    r = approve("graph.scratch", NULL, &st);
    assert_int_equal(st, OG_ERR_INVALID);
    assert_string_equal(og_error_message(), "`cluster approve` requires an approver: pass --as <ACTOR> — an approval "
                                            "without an approver is meaningless");
    json_decref(r);
    r = approve("graph.people", "andrew", &st);
    assert_int_equal(st, OG_ERR_INVALID);
    assert_string_equal(og_error_message(), "approval_not_required: graph.people: no pending change for this resource "
                                            "requires approval (check `cluster plan`)");
    assert_non_null(diag(r, "approval_not_required"));
    json_decref(r);
    assert_int_equal(count_dir("__cluster/approvals"), 0);
    assert_false(exists("__cluster/lock.json"));

    r = approve("graph.scratch", "andrew", &st);
    assert_int_equal(st, OG_OK);
    assert_string_equal(cstr(r, "operation"), "delete");
    assert_string_equal(cstr(r, "approved_by"), "andrew");
    char aid[64], key[128];
    snprintf(aid, sizeof aid, "%s", cstr(r, "approval_id"));
    json_decref(r);
    snprintf(key, sizeof key, "%s/__cluster/approvals/%s.json", dir, aid);
    json_t *art = json_load_file(key, 0, NULL);
    assert_non_null(art);
    assert_string_equal(cstr(art, "resource"), "graph.scratch");
    assert_true(json_is_null(json_object_get(art, "consumed_at")));
    json_decref(art);

    r = verb(og_cluster_plan, &st);
    assert_string_equal(cstr(change_of(r, "graph.scratch"), "disposition"), "applied");
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(r, "approvals_required"), 0), "satisfied")));
    json_decref(r);

    /* apply: the delete runs last, the subtree is tombstoned, the approval consumed */
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_string_equal(cstr(change_of(r, "graph.scratch"), "result"), "applied");
    assert_string_equal(cstr(change_of(r, "query.scratch.adults"), "result"), "applied");
    assert_true(json_is_true(json_object_get(r, "converged")));
    json_decref(r);
    assert_false(exists("graphs/scratch.omni"));
    assert_true(exists("graphs/people.omni"));
    assert_int_equal(count_dir("__cluster/recoveries"), 0);
    l = ledger();
    assert_null(json_object_get(resources(l), "graph.scratch"));
    assert_null(json_object_get(resources(l), "schema.scratch"));
    assert_null(json_object_get(resources(l), "query.scratch.adults"));
    assert_non_null(json_object_get(resources(l), "query.people.adults"));
    json_t *tomb = json_object_get(json_object_get(l, "observations"), "graph.scratch");
    assert_string_equal(cstr(tomb, "kind"), "tombstone");
    assert_string_equal(cstr(tomb, "approval_id"), aid);
    assert_string_equal(cstr(tomb, "actor"), "andrew");
    assert_string_equal(cstr(json_object_get(json_object_get(l, "approval_records"), aid), "consumed_by_operation"), "apply");
    json_decref(l);
    art = json_load_file(key, 0, NULL);
    assert_true(json_is_string(json_object_get(art, "consumed_at"))); /* rewritten, never deleted */
    json_decref(art);
    /* converged: nothing left to do */
    r = verb(og_cluster_plan, &st);
    assert_int_equal(json_array_size(json_object_get(r, "changes")), 0);
    json_decref(r);
}

static void test_stale_approval(void **state)
{
    (void)state;
    fresh(TWO);
    import_apply();
    put("cluster.yaml", ONE);
    og_status st;
    json_decref(approve("graph.scratch", "andrew", &st));
    assert_int_equal(st, OG_OK);
    /* the configuration moves after approving: the approval no longer authorises anything */
    char q[512];
    snprintf(q, sizeof q, "%s// edited\n", QUERIES);
    put("queries/q.gq", q);
    json_t *r = verb(og_cluster_plan, &st);
    assert_string_equal(cstr(change_of(r, "graph.scratch"), "reason"), "approval_required");
    json_t *d = diag(r, "approval_stale");
    assert_non_null(d);
    assert_string_equal(cstr(d, "path"), "graph.scratch");
    assert_string_equal(cstr(d, "message"),
                        "an approval artifact exists but its bound digests no longer match the plan; re-run `cluster approve`");
    json_decref(r);
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    json_decref(r);
    assert_true(exists("graphs/scratch.omni"));
}

/* Writes a sidecar as an interrupted apply would have left it. */
static void sidecar(const char *id, const char *kind, const char *graph, const char *digest, const char *approval)
{
    char path[512], uri[256];
    snprintf(path, sizeof path, "%s/__cluster/recoveries", dir);
    mkdir(path, 0755);
    snprintf(uri, sizeof uri, "%s/graphs/%s.omni", dir, graph);
    json_t *j = json_pack("{si ss ss ss ss ss ss ss so}", "schema_version", 1, "operation_id", id, "started_at",
                          "2026-12-04T00:00:00.000Z", "actor", "andrew", "kind", kind, "graph_id", graph, "graph_uri", uri,
                          "desired_schema_digest", digest, "approval_id", approval ? json_string(approval) : json_null());
    snprintf(path, sizeof path, "%s/__cluster/recoveries/%s.json", dir, id);
    assert_int_equal(json_dump_file(j, path, 0), 0);
    json_decref(j);
}

static void schema_digest(char out[65], const char *text) { og_cluster_digest(out, text, strlen(text)); }

static void init_root(const char *graph, const char *schema)
{
    char uri[256];
    snprintf(uri, sizeof uri, "%s/graphs/%s.omni", dir, graph);
    og_db *db = NULL;
    assert_int_equal(og_db_init(&db, uri, "people.pg", schema, strlen(schema), NULL), OG_OK);
    og_db_close(db);
}

static void test_sidecar_create_rolled_forward(void **state)
{
    (void)state;
    fresh(ONE);
    og_status st;
    json_decref(verb(og_cluster_import, &st));
    /* a crash after the graph was created, before the ledger recorded it */
    char d[65];
    schema_digest(d, SCHEMA);
    sidecar("01OPCREATE", "graph_create", "people", d, NULL);
    init_root("people", SCHEMA);
    /* read-only commands warn and act on nothing */
    json_t *r = verb(og_cluster_plan, &st);
    json_t *w = diag(r, "cluster_recovery_pending");
    assert_non_null(w);
    assert_string_equal(cstr(w, "path"), "__cluster/recoveries/01OPCREATE.json");
    assert_string_equal(cstr(w, "message"), "a recovery sidecar from an interrupted apply is pending; the next "
                                             "state-mutating command will classify it");
    json_decref(r);
    assert_int_equal(count_dir("__cluster/recoveries"), 1);
    /* apply: rolled forward, recorded, the sidecar retired */
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    w = diag(r, "cluster_recovery_rolled_forward");
    assert_non_null(w);
    assert_string_equal(cstr(w, "path"), "graph.people");
    assert_string_equal(cstr(w, "message"),
                        "an interrupted graph create had completed on the graph; cluster state was rolled forward to match");
    assert_null(change_of(r, "graph.people")); /* not created twice */
    json_decref(r);
    assert_int_equal(count_dir("__cluster/recoveries"), 0);
    json_t *l = ledger();
    json_t *rec = json_object_get(json_object_get(l, "recovery_records"), "01OPCREATE");
    assert_string_equal(cstr(rec, "kind"), "graph_create");
    assert_string_equal(cstr(rec, "outcome"), "rolled_forward");
    assert_string_equal(cstr(json_object_get(resources(l), "schema.people"), "digest"), d);
    json_decref(l);
}

static void test_sidecar_nothing_moved(void **state)
{
    (void)state;
    fresh(ONE);
    og_status st;
    json_decref(verb(og_cluster_import, &st));
    char d[65];
    schema_digest(d, SCHEMA);
    sidecar("01OPVOID", "graph_create", "people", d, NULL); /* the init never happened */
    json_t *r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_string_equal(cstr(change_of(r, "graph.people"), "result"), "applied"); /* the create is re-run */
    assert_null(diag(r, "cluster_recovery_rolled_forward"));
    json_decref(r);
    assert_int_equal(count_dir("__cluster/recoveries"), 0);
}

static void test_sidecar_partial_root(void **state)
{
    (void)state;
    fresh(ONE);
    og_status st;
    json_decref(verb(og_cluster_import, &st));
    char d[65], cmd[512];
    schema_digest(d, SCHEMA);
    sidecar("01OPPART", "graph_create", "people", d, NULL);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/graphs/people.omni/junk'", dir);
    assert_int_equal(system(cmd), 0);
    json_t *r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_ERR_INVALID);
    json_t *e = diag(r, "graph_create_incomplete");
    assert_non_null(e);
    assert_string_equal(cstr(e, "severity"), "error");
    char want[1024];
    snprintf(want, sizeof want, "graph root '%s/graphs/people.omni' exists but cannot be opened (", dir);
    assert_memory_equal(cstr(e, "message"), want, strlen(want));
    assert_non_null(strstr(cstr(e, "message"), "); remove the graph root and re-run `cluster apply`"));
    assert_string_equal(cstr(change_of(r, "graph.people"), "reason"), "cluster_recovery_pending");
    json_decref(r);
    assert_int_equal(count_dir("__cluster/recoveries"), 1); /* kept until repaired: nothing auto-deleted */
    assert_true(exists("graphs/people.omni/junk"));
    /* the operator removes the root: the next apply retires the intent and creates the graph */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/graphs/people.omni'", dir);
    assert_int_equal(system(cmd), 0);
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_string_equal(cstr(change_of(r, "graph.people"), "result"), "applied");
    json_decref(r);
    assert_int_equal(count_dir("__cluster/recoveries"), 0);
}

static void test_sidecar_schema_unexpected(void **state)
{
    (void)state;
    fresh(ONE);
    import_apply();
    /* a schema apply was interrupted, and the graph now has neither the recorded nor the
     * intended schema: the sweep refuses to guess */
    sidecar("01OPSCHEMA", "schema_apply", "people", "0000000000000000000000000000000000000000000000000000000000000000", NULL);
    const char *other = "node Person {\n    name: String @key\n    age: I32?\n    nick: String?\n}\nedge Knows: Person -> Person\n";
    char uri[256];
    snprintf(uri, sizeof uri, "%s/graphs/people.omni", dir);
    og_db *db = NULL;
    og_receipt rc;
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    assert_int_equal(og_db_schema_apply(&rc, NULL, db, NULL, "x.pg", other, strlen(other), 0, 0), OG_OK);
    og_db_close(db);
    og_status st;
    /* a schema change declared meanwhile waits: graph-moving work on this graph is blocked */
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n    email: String?\n}\nedge Knows: Person -> Person\n");
    json_t *r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_ERR_INVALID);
    assert_string_equal(cstr(change_of(r, "schema.people"), "reason"), "cluster_recovery_pending");
    json_t *w = diag(r, "cluster_recovery_pending");
    assert_string_equal(cstr(w, "message"),
                        "an interrupted schema apply left unexpected graph state; graph-moving work is blocked until repaired");
    json_decref(r);
    /* not served while the sidecar waits: its stored queries are refused with the reason */
    og_cluster *cl = NULL;
    assert_int_equal(og_cluster_open(&cl, dir), OG_OK);
    og_stored_set *set = NULL;
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    assert_int_equal(og_cluster_stored_queries(&set, cl, "people", db), OG_ERR_PRECONDITION_FAILED);
    assert_string_equal(og_error_message(), "cluster_recovery_pending: graph 'people' has an interrupted cluster operation "
                                            "(__cluster/recoveries/01OPSCHEMA.json); run `omnigraph cluster apply` (or "
                                            "refresh) to classify it, then restart");
    og_db_close(db);
    og_cluster_close(cl);
    json_t *l = ledger();
    json_t *s = json_object_get(json_object_get(l, "resource_statuses"), "schema.people");
    assert_string_equal(cstr(s, "status"), "drifted");
    assert_string_equal(json_string_value(json_array_get(json_object_get(s, "conditions"), 0)), "actual_applied_state_pending");
    json_decref(l);
    assert_int_equal(count_dir("__cluster/recoveries"), 1);
}

static void test_sidecar_delete_rolled_forward(void **state)
{
    (void)state;
    fresh(TWO);
    import_apply();
    put("cluster.yaml", ONE);
    og_status st;
    json_t *r = approve("graph.scratch", "andrew", &st);
    char aid[64];
    snprintf(aid, sizeof aid, "%s", cstr(r, "approval_id"));
    json_decref(r);
    /* a crash after the root was removed, before the ledger recorded the delete */
    sidecar("01OPDELETE", "graph_delete", "scratch", "", aid);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/graphs/scratch.omni'", dir);
    assert_int_equal(system(cmd), 0);
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    json_t *w = diag(r, "cluster_recovery_rolled_forward");
    assert_string_equal(cstr(w, "message"),
                        "an interrupted graph delete had completed on disk; cluster state was rolled forward to match");
    assert_null(change_of(r, "graph.scratch"));
    json_decref(r);
    json_t *l = ledger();
    assert_null(json_object_get(resources(l), "graph.scratch"));
    assert_null(json_object_get(resources(l), "query.scratch.adults"));
    assert_string_equal(cstr(json_object_get(json_object_get(l, "approval_records"), aid), "consumed_by_operation"), "01OPDELETE");
    json_decref(l);
    char key[256];
    snprintf(key, sizeof key, "%s/__cluster/approvals/%s.json", dir, aid);
    json_t *art = json_load_file(key, 0, NULL);
    assert_true(json_is_string(json_object_get(art, "consumed_at")));
    json_decref(art);
    assert_int_equal(count_dir("__cluster/recoveries"), 0);
}

/* A delete that fails half way (the root's files gone, the directory not) is a graph-moving
 * step that did not complete: its sidecar stays after the run's ledger publish, so the next
 * apply classifies it (root still there: graph_delete_incomplete) and runs the approved delete
 * again, which then completes and retires it. */
static void test_failed_delete_keeps_its_sidecar(void **state)
{
    (void)state;
    fresh(TWO);
    import_apply();
    put("cluster.yaml", ONE);
    og_status st;
    json_decref(approve("graph.scratch", "andrew", &st));
    assert_int_equal(st, OG_OK);
    setenv("OG_FAULT_ERROR", "cluster.remove_root", 1);
    json_t *r = verb(og_cluster_apply, &st);
    unsetenv("OG_FAULT_ERROR");
    assert_string_equal(cstr(change_of(r, "graph.scratch"), "result"), "error");
    assert_true(json_is_false(json_object_get(r, "ok")));
    json_decref(r);
    assert_true(exists("graphs/scratch.omni"));
    assert_int_equal(count_dir("__cluster/recoveries"), 1);
    json_t *l = ledger();
    assert_non_null(json_object_get(resources(l), "graph.scratch")); /* not recorded as deleted */
    json_decref(l);
    /* the next apply: classified, the delete runs again and completes */
    r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_OK);
    assert_non_null(diag(r, "graph_delete_incomplete"));
    assert_string_equal(cstr(change_of(r, "graph.scratch"), "result"), "applied");
    json_decref(r);
    assert_false(exists("graphs/scratch.omni"));
    assert_int_equal(count_dir("__cluster/recoveries"), 0);
    l = ledger();
    assert_null(json_object_get(resources(l), "graph.scratch"));
    json_decref(l);
}

static void test_invalid_sidecar(void **state)
{
    (void)state;
    fresh(ONE);
    import_apply();
    char rd[256];
    snprintf(rd, sizeof rd, "%s/__cluster/recoveries", dir);
    mkdir(rd, 0755);
    put("__cluster/recoveries/bad.json", "{\"kind\": \"graph_teleport\"}");
    og_status st;
    json_t *r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_ERR_INVALID);
    json_t *e = diag(r, "invalid_recovery_sidecar");
    assert_string_equal(cstr(e, "message"), "recovery sidecar __cluster/recoveries/bad.json is not a valid graph_create, "
                                             "schema_apply or graph_delete record");
    json_decref(r);
    assert_true(exists("__cluster/recoveries/bad.json"));
}

/* a refused migration moved nothing: its sidecar does not outlive the run */
static void test_refused_migration_leaves_no_sidecar(void **state)
{
    (void)state;
    fresh(ONE);
    import_apply();
    put("people.pg", "node Person {\n    name: String @key\n    age: I32?\n    email: String\n}\nedge Knows: Person -> Person\n");
    og_status st;
    json_t *r = verb(og_cluster_apply, &st);
    assert_int_equal(st, OG_ERR_INVALID);
    json_decref(r);
    assert_int_equal(count_dir("__cluster/recoveries"), 0);
    char *out = NULL;
    assert_int_equal(og_cluster_status(&out, dir), OG_OK);
    r = json_loads(out, 0, NULL);
    og_free(out);
    assert_null(diag(r, "cluster_recovery_pending"));
    json_decref(r);
}

static void test_refresh(void **state)
{
    (void)state;
    fresh(ONE);
    og_status st;
    /* no ledger: refused, nothing written */
    json_t *r = verb(og_cluster_refresh, &st);
    assert_int_equal(st, OG_ERR_NOT_FOUND);
    assert_string_equal(og_error_message(),
                        "state_missing: refresh requires an existing state.json; run `cluster import` to bootstrap state");
    json_decref(r);
    assert_false(exists("__cluster/state"));
    import_apply();
    json_t *l = ledger();
    const char *qd = cstr(json_object_get(resources(l), "query.people.adults"), "digest");
    char blob[512];
    snprintf(blob, sizeof blob, "%s/__cluster/resources/query/people/adults/%s.gq", dir, qd);
    json_decref(l);
    /* a lost catalog blob: drifted, digest dropped, the next apply republishes */
    assert_int_equal(unlink(blob), 0);
    r = verb(og_cluster_refresh, &st);
    assert_int_equal(st, OG_OK);
    assert_string_equal(cstr(diag(r, "catalog_payload_missing"), "message"),
                        "catalog payload blob is missing; re-run `cluster apply` to republish");
    assert_int_equal(json_integer_value(json_object_get(r, "state_revision")), 3);
    json_decref(r);
    l = ledger();
    assert_null(json_object_get(resources(l), "query.people.adults"));
    assert_string_equal(cstr(json_object_get(json_object_get(l, "resource_statuses"), "query.people.adults"), "status"), "drifted");
    json_decref(l);
    r = verb(og_cluster_plan, &st);
    assert_string_equal(cstr(change_of(r, "query.people.adults"), "operation"), "create");
    json_decref(r);
    json_decref(verb(og_cluster_apply, &st));
    assert_int_equal(st, OG_OK);
    assert_int_equal(access(blob, R_OK), 0);

    /* a tampered blob: payload_mismatch */
    FILE *f = fopen(blob, "w");
    fputs("tampered", f);
    fclose(f);
    r = verb(og_cluster_refresh, &st);
    assert_int_equal(st, OG_OK);
    assert_non_null(strstr(cstr(diag(r, "catalog_payload_mismatch"), "message"),
                           "catalog payload blob does not match the recorded digest (actual sha256:"));
    json_decref(r);
    json_decref(verb(og_cluster_apply, &st));

    /* schema drift out of band: recorded, and the next plan migrates it back */
    const char *other = "node Person {\n    name: String @key\n    age: I32?\n    nick: String?\n}\nedge Knows: Person -> Person\n";
    char uri[256];
    snprintf(uri, sizeof uri, "%s/graphs/people.omni", dir);
    og_db *db = NULL;
    og_receipt rc;
    assert_int_equal(og_db_open(&db, uri, NULL), OG_OK);
    assert_int_equal(og_db_schema_apply(&rc, NULL, db, NULL, "x.pg", other, strlen(other), 0, 0), OG_OK);
    og_db_close(db);
    r = verb(og_cluster_refresh, &st);
    assert_int_equal(st, OG_OK);
    json_t *ss = json_object_get(json_object_get(r, "resource_statuses"), "schema.people");
    assert_string_equal(cstr(ss, "status"), "drifted");
    assert_string_equal(cstr(ss, "message"), "live schema digest differs from desired schema digest");
    assert_true(json_is_false(json_object_get(json_object_get(json_object_get(r, "observations"), "graph.people"),
                                              "schema_matches_desired")));
    json_decref(r);
    r = verb(og_cluster_plan, &st);
    assert_string_equal(cstr(change_of(r, "schema.people"), "operation"), "update");
    json_decref(r);
    json_decref(verb(og_cluster_apply, &st));
    assert_int_equal(st, OG_OK);
    r = verb(og_cluster_refresh, &st);
    assert_string_equal(cstr(json_object_get(json_object_get(r, "resource_statuses"), "schema.people"), "status"), "applied");
    json_decref(r);

    /* a vanished root: graph_missing, and the next plan re-creates it */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/graphs/people.omni'", dir);
    assert_int_equal(system(cmd), 0);
    r = verb(og_cluster_refresh, &st);
    assert_int_equal(st, OG_OK);
    json_t *gs = json_object_get(json_object_get(r, "resource_statuses"), "graph.people");
    assert_string_equal(cstr(gs, "status"), "drifted");
    assert_string_equal(json_string_value(json_array_get(json_object_get(gs, "conditions"), 0)), "graph_missing");
    json_decref(r);
    r = verb(og_cluster_plan, &st);
    assert_string_equal(cstr(change_of(r, "graph.people"), "operation"), "create");
    json_decref(r);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/og-clrec-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delete_needs_approval),    cmocka_unit_test(test_stale_approval),
        cmocka_unit_test(test_sidecar_create_rolled_forward), cmocka_unit_test(test_sidecar_nothing_moved),
        cmocka_unit_test(test_sidecar_partial_root),     cmocka_unit_test(test_sidecar_schema_unexpected),
        cmocka_unit_test(test_sidecar_delete_rolled_forward), cmocka_unit_test(test_failed_delete_keeps_its_sidecar),
        cmocka_unit_test(test_invalid_sidecar),
        cmocka_unit_test(test_refused_migration_leaves_no_sidecar), cmocka_unit_test(test_refresh),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 && !rc) rc = 1;
    return rc;
}
