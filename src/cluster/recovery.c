/*
 * recovery.c — what makes a cluster apply safe to interrupt and graph deletion safe to ask for:
 * recovery sidecars, the recovery sweep, approval artifacts, tombstones and the removal of a
 * graph root.
 *
 * Why sidecars: a graph-moving step (create, schema apply, delete) changes a graph root before
 * the ledger records it.  A crash in between leaves the two disagreeing.  So each step first
 * writes __cluster/recoveries/<operation_id>.json naming the graph and what it intends; the
 * sidecar is deleted only after the ledger revision recording the step is published.  The next
 * state-mutating command (apply, refresh, import) classifies every survivor by observing the
 * graph — roll forward when the step completed, retire the intent when nothing moved, refuse
 * to guess otherwise (the graph's work is then blocked until repaired).  Never a roll back.
 *
 * Why approvals: deleting a graph is irreversible, so apply does it only under an approval
 * artifact (__cluster/approvals/<id>.json) bound to the exact configuration digest and the
 * change's digests; any movement after approving makes it stale.  A consumed artifact is
 * rewritten with consumed_at, never deleted, and summarised in the ledger's approval_records.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/internal.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/id.h"

static void now_text(char out[25]) { og_format_time_ms(og_now_ms(), out); }

void og_cluster_set_status(json_t *statuses, const char *addr, const char *status, const char *condition,
                           const char *message)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(status));
    json_t *conds = json_array();
    if (condition) json_array_append_new(conds, json_string(condition));
    json_object_set_new(o, "conditions", conds);
    if (message) json_object_set_new(o, "message", json_string(message));
    json_object_set_new(statuses, addr, o);
}

/* ---- JSON objects under a prefix ------------------------------------------------------------- */

/* [{key, value}] of every *.json object under prefix that parses as a JSON object; the others
 * are reported as `bad_code` errors. */
static json_t *list_objects(og_store *st, const char *prefix, json_t *diags, const char *bad_code)
{
    json_t *out = json_array();
    og_keylist kl = {0};
    if (og_store_list(st, prefix, NULL, 0, &kl) != OG_OK) {
        og_diag_add(diags, "error", bad_code, prefix, "cannot list %s: %s", prefix, og_error_message());
        return out;
    }
    for (size_t i = 0; i < kl.count; i++) {
        size_t n = strlen(kl.keys[i]);
        if (n < 5 || strcmp(kl.keys[i] + n - 5, ".json")) continue;
        og_bytes b = {0};
        json_t *j = NULL;
        if (og_store_get(st, kl.keys[i], &b) == OG_OK) j = json_loadb((const char *)b.data, b.len, 0, NULL);
        og_bytes_free(&b);
        if (!json_is_object(j)) {
            json_decref(j);
            og_diag_add(diags, "error", bad_code, kl.keys[i], "%s is not a valid JSON object", kl.keys[i]);
            continue;
        }
        json_array_append_new(out, json_pack("{ss so}", "key", kl.keys[i], "value", j));
    }
    og_keylist_free(&kl);
    return out;
}

static og_status put_json(og_store *st, const char *key, json_t *v, int if_absent)
{
    char *text = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!text) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status s = if_absent ? og_store_put_if_absent(st, key, text, strlen(text)) : og_store_put(st, key, text, strlen(text));
    free(text);
    return s;
}

/* ---- sidecars -------------------------------------------------------------------------------- */

og_status og_sidecar_write(og_store *st, const char *kind, const char *graph_id, const char *graph_uri,
                           const char *desired_schema_digest, const char *actor, const char *approval_id,
                           long long state_revision_base, char *key_out, size_t key_cap)
{
    char id[OG_ULID_LEN + 1], at[25];
    OG_TRY(og_ulid_new(id));
    now_text(at);
    json_t *j = json_object();
    json_object_set_new(j, "schema_version", json_integer(1));
    json_object_set_new(j, "operation_id", json_string(id));
    json_object_set_new(j, "started_at", json_string(at));
    json_object_set_new(j, "actor", actor ? json_string(actor) : json_null());
    json_object_set_new(j, "kind", json_string(kind));
    json_object_set_new(j, "graph_id", json_string(graph_id));
    json_object_set_new(j, "graph_uri", json_string(graph_uri));
    json_object_set_new(j, "desired_schema_digest", json_string(desired_schema_digest ? desired_schema_digest : ""));
    json_object_set_new(j, "state_revision_base", json_integer(state_revision_base));
    json_object_set_new(j, "approval_id", approval_id ? json_string(approval_id) : json_null());
    snprintf(key_out, key_cap, OG_CLUSTER_RECOVERIES "%s.json", id);
    og_status s = put_json(st, key_out, j, 1);
    json_decref(j);
    if (s != OG_OK) return og_err_wrap(s, "recovery_sidecar_write_error: cannot write %s", key_out);
    return OG_OK;
}

void og_sidecars_warn_pending(og_store *st, json_t *diags)
{
    json_t *all = list_objects(st, OG_CLUSTER_RECOVERIES, diags, "invalid_recovery_sidecar");
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e)
        og_diag_add(diags, "warning", "cluster_recovery_pending", json_string_value(json_object_get(e, "key")),
                    "a recovery sidecar from an interrupted apply is pending; the next state-mutating command will "
                    "classify it");
    json_decref(all);
}

static void roll_forward_schema(json_t *state, json_t *desired, const char *g, const char *live_digest)
{
    json_t *res = json_object_get(json_object_get(state, "applied_revision"), "resources");
    json_t *statuses = json_object_get(state, "resource_statuses");
    char gaddr[300], saddr[300];
    snprintf(gaddr, sizeof gaddr, "graph.%s", g);
    snprintf(saddr, sizeof saddr, "schema.%s", g);
    json_object_set_new(res, saddr, json_pack("{ss}", "digest", live_digest));
    if (!json_object_get(res, gaddr)) {
        json_t *w = json_object_get(json_object_get(desired, "resources"), gaddr);
        if (w) {
            json_t *r = json_pack("{sO}", "digest", json_object_get(w, "digest"));
            if (json_object_get(w, "embedding_provider"))
                json_object_set(r, "embedding_provider", json_object_get(w, "embedding_provider"));
            json_object_set_new(res, gaddr, r);
        } else {
            char seed[300], d[65];
            snprintf(seed, sizeof seed, "graph:%s", g);
            og_cluster_digest(d, seed, strlen(seed));
            json_object_set_new(res, gaddr, json_pack("{ss}", "digest", d));
        }
    }
    og_cluster_set_status(statuses, gaddr, "applied", NULL, NULL);
    og_cluster_set_status(statuses, saddr, "applied", NULL, NULL);
}

static void record_recovery(json_t *state, json_t *sc, const char *kind)
{
    char at[25];
    now_text(at);
    json_t *rec = json_object_get(state, "recovery_records");
    json_object_set_new(rec, json_string_value(json_object_get(sc, "operation_id")),
                        json_pack("{ss sO ss ss sO}", "kind", kind, "graph_id", json_object_get(sc, "graph_id"), "outcome",
                                  "rolled_forward", "recovered_at", at, "actor",
                                  json_object_get(sc, "actor") ? json_object_get(sc, "actor") : json_null()));
}

static void mark_pending(json_t *state, const char *g, const char *status, const char *cond, const char *msg)
{
    json_t *statuses = json_object_get(state, "resource_statuses");
    char gaddr[300], saddr[300];
    snprintf(gaddr, sizeof gaddr, "graph.%s", g);
    snprintf(saddr, sizeof saddr, "schema.%s", g);
    og_cluster_set_status(statuses, gaddr, status, cond, msg);
    og_cluster_set_status(statuses, saddr, status, cond, msg);
}

/* The live schema digest of a root: 1 and *digest when it opens, 0 (and msg) when it does not. */
static int live_digest(const char *uri, char digest[65], char *msg, size_t cap)
{
    og_db *db = NULL;
    char *schema = NULL;
    og_status s = og_cluster_db_open(&db, uri, NULL);
    if (s == OG_OK) s = og_db_schema_source(&schema, db, NULL);
    if (s == OG_OK) og_cluster_digest(digest, schema, strlen(schema));
    else snprintf(msg, cap, "%s", og_error_message());
    og_free(schema);
    og_db_close(db);
    return s == OG_OK;
}

static int root_present(const char *uri)
{
    if (!strstr(uri, "://") || !strncmp(uri, "file://", 7)) {
        struct stat sb;
        return stat(strncmp(uri, "file://", 7) ? uri : uri + 7, &sb) == 0;
    }
    og_db *db = NULL;
    if (og_cluster_db_open(&db, uri, NULL) == OG_OK) {
        og_db_close(db);
        return 1;
    }
    /* an S3 root that does not open may still hold objects (a partial root) */
    og_store *st = NULL;
    if (og_store_open(&st, uri) != OG_OK) return 0;
    og_keylist kl = {0};
    int any = og_store_list(st, "", NULL, 1, &kl) == OG_OK && kl.count > 0;
    og_keylist_free(&kl);
    og_store_close(st);
    return any;
}

int og_cluster_root_present(const char *uri) { return root_present(uri); }

void og_cluster_tombstone(json_t *state, const char *g, const char *approval_id, const char *actor)
{
    json_t *res = json_object_get(json_object_get(state, "applied_revision"), "resources");
    json_t *statuses = json_object_get(state, "resource_statuses");
    char gaddr[300], saddr[300], qprefix[300];
    snprintf(gaddr, sizeof gaddr, "graph.%s", g);
    snprintf(saddr, sizeof saddr, "schema.%s", g);
    snprintf(qprefix, sizeof qprefix, "query.%s.", g);
    json_t *maps[2] = {res, statuses};
    for (int m = 0; m < 2; m++) {
        json_object_del(maps[m], gaddr);
        json_object_del(maps[m], saddr);
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(maps[m], tmp, k, v) if (!strncmp(k, qprefix, strlen(qprefix))) json_object_del(maps[m], k);
    }
    char at[25];
    now_text(at);
    json_object_set_new(json_object_get(state, "observations"), gaddr,
                        json_pack("{ss ss so so}", "kind", "tombstone", "deleted_at", at, "approval_id",
                                  approval_id ? json_string(approval_id) : json_null(), "actor",
                                  actor ? json_string(actor) : json_null()));
}

void og_cluster_record_approval_consumed(json_t *state, const char *approval_id, const char *operation)
{
    char at[25];
    now_text(at);
    json_object_set_new(json_object_get(state, "approval_records"), approval_id,
                        json_pack("{ss ss}", "consumed_at", at, "consumed_by_operation", operation));
}

void og_cluster_sweep(og_store *st, json_t *state, json_t *desired, json_t *diags, og_sweep *out)
{
    out->completed = json_array();
    out->pending_graphs = json_object();
    out->consumed_approvals = json_array();
    json_t *all = list_objects(st, OG_CLUSTER_RECOVERIES, diags, "invalid_recovery_sidecar");
    json_t *res = json_object_get(json_object_get(state, "applied_revision"), "resources");
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) {
        const char *key = json_string_value(json_object_get(e, "key"));
        json_t *sc = json_object_get(e, "value");
        const char *kind = json_string_value(json_object_get(sc, "kind"));
        const char *g = json_string_value(json_object_get(sc, "graph_id"));
        const char *uri = json_string_value(json_object_get(sc, "graph_uri"));
        const char *want = json_string_value(json_object_get(sc, "desired_schema_digest"));
        if (!kind || !g || !uri || !want || !json_is_string(json_object_get(sc, "operation_id")) ||
            (strcmp(kind, "graph_create") && strcmp(kind, "schema_apply") && strcmp(kind, "graph_delete"))) {
            og_diag_add(diags, "error", "invalid_recovery_sidecar", key,
                        "recovery sidecar %s is not a valid graph_create, schema_apply or graph_delete record", key);
            continue;
        }
        char gaddr[300], saddr[300], live[65], msg[1024] = "";
        snprintf(gaddr, sizeof gaddr, "graph.%s", g);
        snprintf(saddr, sizeof saddr, "schema.%s", g);
        const char *recorded = json_string_value(json_object_get(json_object_get(res, saddr), "digest"));
        if (!strcmp(kind, "graph_delete")) {
            if (root_present(uri)) {
                og_diag_add(diags, "warning", "graph_delete_incomplete", gaddr,
                            "a previous graph delete did not complete; it will be re-proposed by plan and can be "
                            "retried under its approval");
            } else if (json_object_get(res, gaddr)) {
                const char *aid = json_string_value(json_object_get(sc, "approval_id"));
                og_cluster_tombstone(state, g, aid, json_string_value(json_object_get(sc, "actor")));
                record_recovery(state, sc, "graph_delete");
                if (aid) {
                    og_cluster_record_approval_consumed(state, aid, json_string_value(json_object_get(sc, "operation_id")));
                    json_array_append_new(out->consumed_approvals, json_string(aid));
                }
                og_diag_add(diags, "warning", "cluster_recovery_rolled_forward", gaddr,
                            "an interrupted graph delete had completed on disk; cluster state was rolled forward to match");
            }
            json_array_append_new(out->completed, json_string(key));
            continue;
        }
        int create = !strcmp(kind, "graph_create");
        if (create && !root_present(uri)) {
            /* nothing moved: the intent is retired and the plan re-proposes the create */
            json_array_append_new(out->completed, json_string(key));
            continue;
        }
        if (!live_digest(uri, live, msg, sizeof msg)) {
            if (create) {
                const char *m = "graph root exists but cannot be opened; remove the graph root and re-run `cluster apply`";
                mark_pending(state, g, "error", "graph_create_incomplete", m);
                og_diag_add(diags, "error", "graph_create_incomplete", gaddr,
                            "graph root '%s' exists but cannot be opened (%s); remove the graph root and re-run "
                            "`cluster apply`",
                            uri, msg);
            } else {
                og_diag_add(diags, "warning", "cluster_recovery_pending", gaddr,
                            "an interrupted schema apply cannot be verified (graph '%s' did not open: %s); graph-moving "
                            "work is blocked until repaired",
                            uri, msg);
            }
            json_object_set_new(out->pending_graphs, g, json_true());
            continue;
        }
        if (recorded && !strcmp(recorded, live)) {
            /* the ledger already agrees with the graph: stale intent */
            json_array_append_new(out->completed, json_string(key));
        } else if (!strcmp(live, want)) {
            roll_forward_schema(state, desired, g, live);
            record_recovery(state, sc, kind);
            og_diag_add(diags, "warning", "cluster_recovery_rolled_forward", gaddr,
                        "an interrupted %s had completed on the graph; cluster state was rolled forward to match",
                        create ? "graph create" : "schema apply");
            json_array_append_new(out->completed, json_string(key));
        } else {
            mark_pending(state, g, "drifted", "actual_applied_state_pending",
                         "graph state does not match the interrupted operation; run `cluster refresh` and re-plan");
            og_diag_add(diags, "warning", "cluster_recovery_pending", gaddr,
                        "an interrupted %s left unexpected graph state; graph-moving work is blocked until repaired",
                        create ? "graph create" : "schema apply");
            json_object_set_new(out->pending_graphs, g, json_true());
        }
    }
    json_decref(all);
}

void og_sweep_free(og_sweep *s)
{
    json_decref(s->completed);
    json_decref(s->pending_graphs);
    json_decref(s->consumed_approvals);
    memset(s, 0, sizeof *s);
}

void og_cluster_delete_keys(og_store *st, json_t *keys)
{
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k) (void)og_store_delete(st, json_string_value(k));
}

/* ---- approvals ------------------------------------------------------------------------------- */

json_t *og_approvals_list(og_store *st, json_t *state, json_t *diags)
{
    json_t *all = list_objects(st, OG_CLUSTER_APPROVALS, diags, "invalid_approval_artifact");
    json_t *out = json_array();
    json_t *records = json_object_get(state, "approval_records");
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) {
        json_t *a = json_object_get(e, "value");
        const char *id = json_string_value(json_object_get(a, "approval_id"));
        if (!id || !json_is_string(json_object_get(a, "resource")) || !json_is_string(json_object_get(a, "bound_config_digest"))) {
            og_diag_add(diags, "error", "invalid_approval_artifact", json_string_value(json_object_get(e, "key")),
                        "approval artifact is missing approval_id, resource or bound_config_digest");
            continue;
        }
        if (json_integer_value(json_object_get(a, "schema_version")) != 1) {
            og_diag_add(diags, "error", "unsupported_approval_version", json_string_value(json_object_get(e, "key")),
                        "unsupported approval artifact schema_version; this build reads version 1");
            continue;
        }
        /* consumed: on the artifact, or in the ledger (the artifact rewrite may have been lost) */
        int consumed = json_is_string(json_object_get(a, "consumed_at")) || json_object_get(records, id);
        json_object_set_new(a, "_consumed", json_boolean(consumed));
        json_array_append(out, a);
    }
    json_decref(all);
    return out;
}

static int same_opt(json_t *a, const char *b)
{
    const char *s = json_string_value(a);
    if (!s || !b) return !s && !b;
    return !strcmp(s, b);
}

const char *og_approval_match(json_t *approvals, const char *resource, const char *config_digest, const char *before,
                              const char *after, int *stale)
{
    *stale = 0;
    size_t i;
    json_t *a;
    int candidates = 0;
    json_array_foreach(approvals, i, a) {
        if (json_is_true(json_object_get(a, "_consumed"))) continue;
        if (strcmp(json_string_value(json_object_get(a, "resource")), resource)) continue;
        candidates++;
        if (!strcmp(json_string_value(json_object_get(a, "bound_config_digest")), config_digest) &&
            same_opt(json_object_get(a, "bound_before_digest"), before) && same_opt(json_object_get(a, "bound_after_digest"), after))
            return json_string_value(json_object_get(a, "approval_id"));
    }
    *stale = candidates > 0;
    return NULL;
}

og_status og_approval_write(og_store *st, json_t *artifact, int create)
{
    char key[256];
    snprintf(key, sizeof key, OG_CLUSTER_APPROVALS "%s.json", json_string_value(json_object_get(artifact, "approval_id")));
    json_t *copy = json_deep_copy(artifact);
    json_object_del(copy, "_consumed");
    og_status s = put_json(st, key, copy, create);
    json_decref(copy);
    if (s != OG_OK) return og_err_wrap(s, "approval_write_error: cannot write %s", key);
    return OG_OK;
}

void og_approvals_mark_consumed(og_store *st, json_t *ids, const char *operation)
{
    if (!json_array_size(ids)) return;
    json_t *sink = json_array();
    json_t *all = list_objects(st, OG_CLUSTER_APPROVALS, sink, "invalid_approval_artifact");
    size_t i, k;
    json_t *e, *id;
    json_array_foreach(all, i, e) {
        json_t *a = json_object_get(e, "value");
        json_array_foreach(ids, k, id) {
            if (!json_is_string(json_object_get(a, "approval_id")) ||
                strcmp(json_string_value(json_object_get(a, "approval_id")), json_string_value(id)) ||
                json_is_string(json_object_get(a, "consumed_at")))
                continue;
            char at[25];
            now_text(at);
            json_object_set_new(a, "consumed_at", json_string(at));
            json_object_set_new(a, "consumed_by_operation", json_string(operation));
            (void)og_approval_write(st, a, 0);
        }
    }
    json_decref(all);
    json_decref(sink);
}

/* ---- removing a graph root ------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP && og_fault_error("cluster.remove_root")) { /* tests: fail half way */
        errno = EIO;
        return -1;
    }
    return remove(path) ? -1 : 0;
}

og_status og_cluster_remove_root(const char *uri)
{
    if (!strstr(uri, "://") || !strncmp(uri, "file://", 7)) {
        const char *path = strncmp(uri, "file://", 7) ? uri : uri + 7;
        struct stat sb;
        if (stat(path, &sb) != 0) return OG_OK; /* already gone: removal is idempotent */
        if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
            return og_err_errno(errno, "could not remove graph root '%s'", uri);
        return OG_OK;
    }
    og_store *st = NULL;
    og_status s = og_store_open(&st, uri);
    if (s != OG_OK) return og_err_wrap(s, "could not remove graph root '%s'", uri);
    og_keylist kl = {0};
    s = og_store_list(st, "", NULL, 0, &kl);
    for (size_t i = 0; s == OG_OK && i < kl.count; i++) {
        s = og_store_delete(st, kl.keys[i]);
        if (s == OG_ERR_NOT_FOUND) s = OG_OK;
    }
    og_keylist_free(&kl);
    og_store_close(st);
    if (s != OG_OK) return og_err_wrap(s, "could not remove graph root '%s'", uri);
    return OG_OK;
}
