/*
 * cluster.c — the cluster verbs (cluster.h): validate, plan, apply, status, import,
 * force-unlock, and the applied view a server or agent surface opens.
 *
 * plan and apply share one diff (compute_changes): desired digests (config.c) against the
 * newest ledger revision (ledger.c).  apply recomputes it under the lock, so a stale preview is
 * never executed, runs the changes in dependency order (graph creates, schema updates, then
 * the catalog: queries checked against the graph's schema as it now is, policies,
 * providers), and publishes one new ledger revision with compare-and-swap.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster/cluster.h"
#include "cluster/internal.h"
#include "cluster/stored.h"
#include "util/error.h"
#include "util/id.h"

static og_status finish(char **out, json_t *report)
{
    *out = json_dumps(report, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(report);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

/* OG_ERR_INVALID carrying the first error diagnostic's message. */
static og_status diag_status(const json_t *diags)
{
    size_t i;
    json_t *d;
    json_array_foreach((json_t *)diags, i, d) {
        if (!strcmp(json_string_value(json_object_get(d, "severity")), "error"))
            return og_err(OG_ERR_INVALID, "%s: %s: %s", json_string_value(json_object_get(d, "code")),
                          json_string_value(json_object_get(d, "path")), json_string_value(json_object_get(d, "message")));
    }
    return OG_OK;
}

static json_t *digests_of(json_t *resources)
{
    json_t *o = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(resources, k, v) json_object_set(o, k, json_object_get(v, "digest"));
    return o;
}

og_status og_cluster_validate(char **out, const char *dir)
{
    json_t *diags = json_array(), *desired = NULL;
    og_cluster_load_desired(&desired, diags, dir);
    json_t *r = json_object();
    json_object_set_new(r, "ok", json_boolean(!og_diag_errors(diags)));
    json_object_set_new(r, "config_dir", json_string(desired ? json_string_value(json_object_get(desired, "config_dir")) : dir));
    if (desired) json_object_set_new(r, "resources", digests_of(json_object_get(desired, "resources")));
    json_object_set(r, "diagnostics", diags);
    og_status st = diag_status(diags);
    json_decref(diags);
    json_decref(desired);
    og_status fs = finish(out, r);
    return st != OG_OK ? st : fs;
}

/* ---- the diff ------------------------------------------------------------------------------ */

static const char *addr_graph(const char *addr, char *buf, size_t cap)
{
    /* schema.<g>, query.<g>.<n>, graph.<g> -> g */
    const char *p = strchr(addr, '.');
    if (!p) return NULL;
    p++;
    const char *e = !strncmp(addr, "query.", 6) ? strchr(p, '.') : NULL;
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n >= cap) n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
    return buf;
}

/* The catalog key of a stored query's or policy's payload (query.<g>.<n>, policy.<n>) at
 * `digest`; 0 for any other resource address. */
static int addr_catalog_key(const char *addr, const char *digest, char *key, size_t cap)
{
    char gb[256];
    if (!strncmp(addr, "query.", 6)) {
        const char *g = addr_graph(addr, gb, sizeof gb);
        og_catalog_key(key, cap, "query", g, addr + 6 + strlen(g) + 1, digest);
    } else if (!strncmp(addr, "policy.", 7)) {
        og_catalog_key(key, cap, "policy", NULL, addr + 7, digest);
    } else {
        return 0;
    }
    return 1;
}

static int root_exists(const char *uri)
{
    og_db *db = NULL;
    if (og_cluster_db_open(&db, uri, NULL) != OG_OK) return 0;
    og_db_close(db);
    return 1;
}

/* What the diff consults beyond desired and applied state: the approval artifacts (NULL: none),
 * the graphs a recovery sidecar blocks (NULL: none), where stale approvals are reported, and
 * where the approval gates are listed (both may be NULL). */
typedef struct diff_ctx {
    json_t *approvals, *pending, *diags, *approvals_required;
    int hard_drops; /* --allow-data-loss: the preview's drops are hard, as the apply will run them */
} diff_ctx;

static json_t *compute_changes(json_t *desired, json_t *state, json_t *observations, diff_ctx *ctx)
{
    diff_ctx none = {0};
    if (!ctx) ctx = &none;
    json_t *want = json_object_get(desired, "resources");
    json_t *have = json_object_get(json_object_get(state, "applied_revision"), "resources");
    json_t *all = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(want, k, v) json_object_set_new(all, k, json_true());
    json_object_foreach(have, k, v) json_object_set_new(all, k, json_true());
    /* graph deletes, and which of them an approval bound to exactly this change authorises
     * (one gate per graph: its schema and queries ride along) */
    json_t *graph_deletes = json_object();
    const char *config_digest = json_string_value(json_object_get(desired, "config_digest"));
    json_object_foreach(have, k, v) {
        if (strncmp(k, "graph.", 6) || json_object_get(want, k)) continue;
        int stale = 0;
        const char *aid = ctx->approvals ? og_approval_match(ctx->approvals, k, config_digest,
                                                             json_string_value(json_object_get(v, "digest")), NULL, &stale)
                                         : NULL;
        if (stale && ctx->diags)
            og_diag_add(ctx->diags, "warning", "approval_stale", k,
                        "an approval artifact exists but its bound digests no longer match the plan; re-run `cluster approve`");
        json_object_set_new(graph_deletes, k + 6, aid ? json_string(aid) : json_null());
    }
    const char *root = json_string_value(json_object_get(desired, "storage_root"));
    json_t *changes = json_array();
    json_t *blocked_graphs = json_object();
    /* keys of a jansson object are not ordered: walk them sorted */
    size_t n = json_object_size(all), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    json_object_foreach(all, k, v) keys[i++] = k;
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
            const char *t = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = t;
        }
    /* order: graph, schema, then the rest (dependency order for apply) */
    static const char *const order[] = {"graph.", "schema.", "provider.", "query.", "policy.", NULL};
    for (const char *const *o = order; *o; o++) {
        for (i = 0; i < n; i++) {
            const char *addr = keys[i];
            if (strncmp(addr, *o, strlen(*o))) continue;
            json_t *w = json_object_get(want, addr), *h = json_object_get(have, addr);
            const char *after = json_string_value(json_object_get(w, "digest"));
            const char *before = json_string_value(json_object_get(h, "digest"));
            const char *op = NULL;
            int binding_change = 0;
            if (after && !before) op = "create";
            else if (!after && before) op = "delete";
            else if (strcmp(after, before)) op = "update";
            else if (!strncmp(addr, "policy.", 7) && !json_equal(json_object_get(w, "applies_to"), json_object_get(h, "applies_to")))
                op = "update", binding_change = 1;
            char gb[256];
            const char *g = addr_graph(addr, gb, sizeof gb);
            char uri[4096];
            if (g) og_cluster_graph_root(uri, sizeof uri, root, g);
            int exists = g ? root_exists(uri) : 0;
            if (!strncmp(addr, "graph.", 6) && observations) {
                json_t *ob = json_object();
                json_object_set_new(ob, "graph_uri", json_string(uri));
                json_object_set_new(ob, "exists", json_boolean(exists));
                json_object_set_new(observations, addr, ob);
                /* a recorded graph whose root vanished is re-created (convergence) */
                if (!op && after && !exists) op = "create";
            }
            if (!op) continue;
            int deleting_graph = g && json_object_get(graph_deletes, g) != NULL;
            int pending = g && ctx->pending && json_object_get(ctx->pending, g) != NULL;
            const char *approval = deleting_graph ? json_string_value(json_object_get(graph_deletes, g)) : NULL;
            int rides = deleting_graph && approval && !pending;
            if (ctx->approvals_required && !strcmp(op, "delete") &&
                (!strncmp(addr, "graph.", 6) || (!strncmp(addr, "schema.", 7) && !deleting_graph)))
                json_array_append_new(ctx->approvals_required,
                                      json_pack("{ss ss sb}", "resource", addr, "reason",
                                                "delete may remove deployed graph or schema definition", "satisfied",
                                                !strncmp(addr, "graph.", 6) && approval != NULL));
            json_t *c = json_object();
            json_object_set_new(c, "resource", json_string(addr));
            json_object_set_new(c, "operation", json_string(op));
            if (before) json_object_set_new(c, "before_digest", json_string(before));
            if (after) json_object_set_new(c, "after_digest", json_string(after));
            if (binding_change) json_object_set_new(c, "binding_change", json_true());
            const char *disp = "applied", *reason = NULL;
            char rbuf[1024];
            if (!strncmp(addr, "graph.", 6)) {
                if (!strcmp(op, "delete")) {
                    if (pending) disp = "blocked", reason = "cluster_recovery_pending";
                    else if (rides) json_object_set_new(c, "approval_id", json_string(approval));
                    else disp = "blocked", reason = "approval_required";
                } else if (!strcmp(op, "create") && pending) {
                    disp = "blocked", reason = "cluster_recovery_pending";
                } else if (!strcmp(op, "update")) {
                    disp = "derived";
                }
            } else if (!strncmp(addr, "schema.", 7)) {
                if (!strcmp(op, "delete")) {
                    if (!deleting_graph) disp = "deferred", reason = "apply_unsupported_kind";
                    else if (!rides) disp = "blocked", reason = pending ? "cluster_recovery_pending" : "approval_required";
                } else if (pending) {
                    disp = "blocked", reason = "cluster_recovery_pending";
                } else if (exists) {
                    /* a real migration preview from the live graph */
                    og_db *db = NULL;
                    char *plan = NULL;
                    json_t *gd = json_object_get(json_object_get(desired, "graphs"), g);
                    const char *text = json_string_value(json_object_get(gd, "schema_text"));
                    if (og_cluster_db_open(&db, uri, NULL) == OG_OK &&
                        og_db_schema_plan(&plan, db, NULL, json_string_value(json_object_get(gd, "schema_path")), text,
                                          strlen(text), 1) == OG_OK) {
                        json_t *m = json_loads(plan, 0, NULL);
                        if (m) {
                            json_object_set_new(c, "migration", m);
                            size_t di;
                            json_t *ds;
                            json_array_foreach(json_object_get(m, "steps"), di, ds)
                                if (ctx->hard_drops && json_is_string(json_object_get(ds, "mode")))
                                    json_object_set_new(ds, "mode", json_string("hard"));
                            if (!json_is_true(json_object_get(m, "supported"))) {
                                disp = "blocked";
                                json_t *steps = json_object_get(m, "steps");
                                size_t si;
                                json_t *s;
                                snprintf(rbuf, sizeof rbuf, "schema_apply_failed: unsupported migration");
                                json_array_foreach(steps, si, s) {
                                    const char *why = json_string_value(json_object_get(s, "reason"));
                                    if (why) {
                                        snprintf(rbuf, sizeof rbuf, "schema_apply_failed: unsupported migration: %s", why);
                                        break;
                                    }
                                }
                                reason = rbuf;
                            }
                        }
                    } else {
                        snprintf(rbuf, sizeof rbuf, "schema_preview_unavailable: %s", og_error_message());
                        reason = rbuf;
                    }
                    og_free(plan);
                    og_db_close(db);
                }
                if (!strcmp(disp, "blocked")) json_object_set_new(blocked_graphs, g, json_string(reason));
            } else if (!strncmp(addr, "query.", 6) && !strcmp(op, "delete")) {
                if (deleting_graph && !rides) disp = "blocked", reason = pending ? "cluster_recovery_pending" : "approval_required";
            } else if (!strncmp(addr, "query.", 6)) {
                json_t *bg = json_object_get(blocked_graphs, g);
                if (pending) {
                    disp = "blocked", reason = "cluster_recovery_pending";
                } else if (bg) {
                    disp = "blocked";
                    snprintf(rbuf, sizeof rbuf, "blocked by schema.%s: %s", g, json_string_value(bg));
                    reason = rbuf;
                }
            }
            json_object_set_new(c, "disposition", json_string(disp));
            if (reason) json_object_set_new(c, "reason", json_string(reason));
            json_array_append_new(changes, c);
        }
    }
    free(keys);
    json_decref(all);
    json_decref(blocked_graphs);
    json_decref(graph_deletes);
    return changes;
}

typedef struct session {
    json_t *diags, *desired, *state, *report;
    og_store *store;
    long long revision;
    char lock_id[32];
    int locked;
} session;

static void session_end(session *s)
{
    if (s->locked) og_lock_release(s->store, s->lock_id);
    og_store_close(s->store);
    json_decref(s->diags);
    json_decref(s->desired);
    json_decref(s->state);
}

/* Loads + validates the config, opens the storage root, optionally takes the lock, reads the
 * ledger.  On failure the report (s->report) says why. */
static og_status session_begin(session *s, const char *dir, const char *operation, int lock)
{
    memset(s, 0, sizeof *s);
    s->diags = json_array();
    s->report = json_object();
    og_cluster_load_desired(&s->desired, s->diags, dir);
    json_object_set_new(s->report, "ok", json_false());
    json_object_set_new(s->report, "config_dir", json_string(s->desired ? json_string_value(json_object_get(s->desired, "config_dir")) : dir));
    if (!s->desired || og_diag_errors(s->diags)) {
        json_object_set(s->report, "diagnostics", s->diags);
        return diag_status(s->diags) ? OG_ERR_INVALID : OG_ERR_INVALID;
    }
    const char *root = json_string_value(json_object_get(s->desired, "storage_root"));
    json_object_set_new(s->report, "storage_root", json_string(root));
    og_status st = og_store_open(&s->store, root);
    if (st != OG_OK) return og_err_wrap(st, "cluster storage root %s", root);
    if (lock && json_is_true(json_object_get(s->desired, "state_lock"))) {
        json_t *holder = NULL;
        st = og_lock_acquire(s->store, operation, s->lock_id, &holder);
        if (st != OG_OK) {
            json_t *obs = json_object();
            json_object_set_new(obs, "locked", json_true());
            if (holder) json_object_set_new(obs, "lock", holder);
            json_object_set_new(s->report, "state_observations", obs);
            json_object_set_new(s->report, "error", json_string(og_error_message()));
            return st;
        }
        s->locked = 1;
    }
    st = og_ledger_read(s->store, &s->state, &s->revision);
    if (st != OG_OK) return og_err_wrap(st, "cluster ledger");
    return OG_OK;
}

static og_status session_fail(char **out, session *s, og_status st)
{
    if (!json_object_get(s->report, "error")) json_object_set_new(s->report, "error", json_string(og_error_message()));
    if (!json_object_get(s->report, "diagnostics")) json_object_set(s->report, "diagnostics", s->diags);
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", og_error_message());
    session_end(s);
    finish(out, s->report);
    return og_err(st, "%s", msg);
}

og_status og_cluster_plan(char **out, const char *dir, const og_cluster_opts *opts)
{
    session s;
    og_status st = session_begin(&s, dir, "plan", 1);
    if (st != OG_OK) return session_fail(out, &s, st);
    json_t *obs = json_object();
    json_object_set_new(obs, "state_present", json_boolean(s.state != NULL));
    json_object_set_new(obs, "lock_acquired", json_boolean(s.locked));
    if (s.locked) json_object_set_new(obs, "acquired_lock_id", json_string(s.lock_id));
    json_t *gobs = json_object();
    og_sidecars_warn_pending(s.store, s.diags);
    diff_ctx dc = {.approvals = og_approvals_list(s.store, s.state, s.diags), .diags = s.diags,
                   .approvals_required = json_array(), .hard_drops = opts && opts->allow_data_loss};
    json_t *changes = compute_changes(s.desired, s.state, gobs, &dc);
    json_decref(dc.approvals);
    json_object_set_new(s.report, "approvals_required", dc.approvals_required);
    json_object_set_new(obs, "graphs", gobs);
    json_object_set_new(s.report, "ok", json_true());
    json_object_set_new(s.report, "state_revision", json_integer(s.revision));
    json_object_set(s.report, "desired_revision", json_object_get(s.desired, "config_digest"));
    json_object_set_new(s.report, "resource_digests", digests_of(json_object_get(s.desired, "resources")));
    json_object_set_new(s.report, "state_observations", obs);
    json_object_set_new(s.report, "changes", changes);
    if (!s.state)
        og_diag_add(s.diags, "warning", "state_missing", "__cluster/state",
                    "no applied state yet: every resource is planned as a create; run `omnigraph cluster import` before apply");
    json_object_set(s.report, "diagnostics", s.diags);
    session_end(&s);
    return finish(out, s.report);
}

static json_t *state_resource(json_t *desired, const char *addr)
{
    json_t *w = json_object_get(json_object_get(desired, "resources"), addr);
    json_t *r = json_object();
    json_object_set(r, "digest", json_object_get(w, "digest"));
    if (json_object_get(w, "applies_to")) json_object_set(r, "applies_to", json_object_get(w, "applies_to"));
    if (json_object_get(w, "path")) json_object_set(r, "file", json_object_get(w, "path"));
    if (json_object_get(w, "embedding_provider")) json_object_set(r, "embedding_provider", json_object_get(w, "embedding_provider"));
    if (json_object_get(w, "embedding_profile")) json_object_set(r, "embedding_profile", json_object_get(w, "embedding_profile"));
    return r;
}

static void set_status(json_t *statuses, const char *addr, const char *status, const char *message)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(status));
    json_object_set_new(o, "conditions", json_array());
    if (message) json_object_set_new(o, "message", json_string(message));
    json_object_set_new(statuses, addr, o);
}

static json_t *new_state(json_t *old)
{
    json_t *s = old ? json_deep_copy(old) : json_object();
    json_object_set_new(s, "version", json_integer(1));
    if (!json_object_get(s, "applied_revision")) json_object_set_new(s, "applied_revision", json_object());
    json_t *ar = json_object_get(s, "applied_revision");
    if (!json_object_get(ar, "resources")) json_object_set_new(ar, "resources", json_object());
    static const char *const maps[] = {"resource_statuses", "approval_records", "recovery_records", "observations", NULL};
    for (const char *const *m = maps; *m; m++)
        if (!json_object_get(s, *m)) json_object_set_new(s, *m, json_object());
    return s;
}

og_status og_cluster_apply(char **out, const char *dir, const og_cluster_opts *opts)
{
    og_cluster_opts dflt = {0};
    if (!opts) opts = &dflt;
    session s;
    og_status st = session_begin(&s, dir, "apply", 1);
    if (st != OG_OK) return session_fail(out, &s, st);
    if (!s.state) {
        st = og_err(OG_ERR_NOT_FOUND, "state_missing: the cluster has no applied state; run `omnigraph cluster import` first");
        return session_fail(out, &s, st);
    }
    json_t *next = new_state(s.state);
    /* first the survivors of an interrupted run: roll forward what completed, block what cannot
     * be verified; the outcome rides this run's ledger revision */
    og_sweep sw;
    og_cluster_sweep(s.store, next, s.desired, s.diags, &sw);
    diff_ctx dc = {.approvals = og_approvals_list(s.store, next, s.diags), .pending = sw.pending_graphs, .diags = s.diags,
                   .hard_drops = opts && opts->allow_data_loss};
    json_t *changes = compute_changes(s.desired, next, NULL, &dc);
    json_decref(dc.approvals);
    json_t *res = json_object_get(json_object_get(next, "applied_revision"), "resources");
    json_t *statuses = json_object_get(next, "resource_statuses");
    json_t *graphs = json_object_get(s.desired, "graphs");
    const char *root = json_string_value(json_object_get(s.desired, "storage_root"));
    og_open_opts oo = {.actor = opts->actor, .actor_via = "cluster"}; /* the operator's writes */
    json_t *failed_graphs = json_object();
    json_t *op_sidecars = json_array();  /* sidecars of steps that succeeded: go once recorded */
    json_t *deletes = json_array();      /* approved graph deletes: executed last */
    json_t *consumed = json_array();     /* approval ids this run consumes */
    size_t applied = 0, deferred = 0, refused = 0;
    char first_refusal[1024] = "";
    size_t i;
    json_t *c;
    json_t *del_graphs = json_object(); /* graphs whose approved delete runs in this apply */
    json_array_foreach(changes, i, c) {
        const char *addr = json_string_value(json_object_get(c, "resource"));
        if (!strncmp(addr, "graph.", 6) && !strcmp(json_string_value(json_object_get(c, "operation")), "delete") &&
            !strcmp(json_string_value(json_object_get(c, "disposition")), "applied"))
            json_object_set_new(del_graphs, addr + 6, json_true());
    }
    json_array_foreach(changes, i, c) {
        const char *addr = json_string_value(json_object_get(c, "resource"));
        const char *op = json_string_value(json_object_get(c, "operation"));
        const char *disp = json_string_value(json_object_get(c, "disposition"));
        char gb[256], uri[4096];
        const char *g = addr_graph(addr, gb, sizeof gb);
        if (g) og_cluster_graph_root(uri, sizeof uri, root, g);
        json_t *gd = g ? json_object_get(graphs, g) : NULL;
        char msg[1024] = "";
        const char *outcome = "applied";
        if (!strcmp(disp, "deferred") || !strcmp(disp, "derived")) {
            if (!strcmp(disp, "derived")) json_object_set_new(res, addr, state_resource(s.desired, addr));
            else deferred++;
            json_object_set_new(c, "result", json_string(disp));
            continue;
        }
        const char *why = json_string_value(json_object_get(c, "reason"));
        if (!strcmp(disp, "blocked") && why && !strcmp(why, "approval_required")) {
            /* waiting on a human decision: not a failure of this run */
            deferred++;
            json_object_set_new(c, "result", json_string("blocked"));
            og_cluster_set_status(statuses, addr, "blocked", "approval_required",
                                  "delete needs an approval: run `omnigraph cluster approve` for its graph");
            continue;
        }
        if (!strcmp(disp, "applied") && !strcmp(op, "delete") &&
            g && json_object_get(del_graphs, g) &&
            (!strncmp(addr, "graph.", 6) || !strncmp(addr, "schema.", 7) || !strncmp(addr, "query.", 6))) {
            /* an approved graph delete (and its subtree riding it): after everything else */
            if (!strncmp(addr, "graph.", 6)) json_array_append(deletes, c);
            continue;
        }
        if (!strcmp(disp, "blocked")) {
            outcome = "blocked";
            snprintf(msg, sizeof msg, "%s", why);
        } else if (!strncmp(addr, "graph.", 6)) {
            const char *text = json_string_value(json_object_get(gd, "schema_text"));
            og_db *db = NULL;
            char sckey[256];
            st = og_sidecar_write(s.store, "graph_create", g, uri, json_string_value(json_object_get(gd, "schema_digest")),
                                  opts->actor, NULL, s.revision, sckey, sizeof sckey);
            if (st == OG_OK) {
                st = og_db_init(&db, uri, json_string_value(json_object_get(gd, "schema_path")), text, strlen(text), &oo);
                if (st == OG_OK) {
                    json_array_append_new(op_sidecars, json_string(sckey)); /* goes once recorded */
                } else if (!og_cluster_root_present(uri)) {
                    /* nothing moved: the intent is void */
                    char keep[1024];
                    snprintf(keep, sizeof keep, "%s", og_error_message());
                    (void)og_store_delete(s.store, sckey);
                    og_err(st, "%s", keep);
                } /* else a partial root: the sidecar stays for the next sweep to classify */
            }
            if (st == OG_OK) {
                char saddr[300];
                snprintf(saddr, sizeof saddr, "schema.%s", g);
                json_object_set_new(res, addr, state_resource(s.desired, addr));
                json_object_set_new(res, saddr, state_resource(s.desired, saddr));
                set_status(statuses, saddr, "applied", NULL);
                og_db_close(db);
            } else {
                outcome = "error";
                snprintf(msg, sizeof msg, "graph_create_failed: %s", og_error_message());
                json_object_set_new(failed_graphs, g, json_string(msg));
            }
        } else if (!strncmp(addr, "schema.", 7)) {
            if (!strcmp(op, "create") && json_object_get(res, addr)) {
                /* done with the graph's creation above */
                json_object_set_new(c, "result", json_string("applied"));
                applied++;
                continue;
            }
            if (json_object_get(failed_graphs, g)) {
                outcome = "blocked";
                snprintf(msg, sizeof msg, "blocked by graph.%s: %s", g, json_string_value(json_object_get(failed_graphs, g)));
            } else {
                og_db *db = NULL;
                const char *text = json_string_value(json_object_get(gd, "schema_text"));
                st = og_cluster_db_open(&db, uri, &oo);
                og_receipt r;
                memset(&r, 0, sizeof r);
                og_db_schema_apply_opts so = {.allow_data_loss = opts->allow_data_loss, .json = 1};
                char sckey[256] = "";
                if (st == OG_OK)
                    st = og_sidecar_write(s.store, "schema_apply", g, uri, json_string_value(json_object_get(gd, "schema_digest")),
                                          opts->actor, NULL, s.revision, sckey, sizeof sckey);
                if (st == OG_OK)
                    st = og_db_schema_apply_ex(&r, NULL, db, json_string_value(json_object_get(gd, "schema_path")), text,
                                               strlen(text), &so);
                if (sckey[0]) {
                    /* a refused migration moved nothing (the live schema is still the recorded
                     * one): its intent is void; otherwise the sidecar stays until the ledger
                     * records the step */
                    char *live = NULL, ld[65] = "";
                    const char *before = json_string_value(json_object_get(c, "before_digest"));
                    if (st != OG_OK) {
                        char keep[1024];
                        snprintf(keep, sizeof keep, "%s", og_error_message());
                        if (og_db_schema_source(&live, db, NULL) == OG_OK) og_cluster_digest(ld, live, strlen(live));
                        og_free(live);
                        /* else the sidecar stays: something moved and the next sweep classifies it */
                        if (before && !strcmp(ld, before)) (void)og_store_delete(s.store, sckey);
                        og_err(st, "%s", keep);
                    } else {
                        json_array_append_new(op_sidecars, json_string(sckey));
                    }
                }
                og_db_close(db);
                if (st == OG_OK) {
                    json_object_set_new(res, addr, state_resource(s.desired, addr));
                    if (r.published) json_object_set_new(c, "graph_commit_id", json_string(r.commit));
                } else {
                    outcome = "error";
                    snprintf(msg, sizeof msg, "schema_apply_failed: %s", og_error_message());
                    json_object_set_new(failed_graphs, g, json_string(msg));
                }
            }
        } else if (!strncmp(addr, "query.", 6)) {
            if (!strcmp(op, "delete")) {
                json_object_del(res, addr);
                json_object_del(statuses, addr);
                json_object_set_new(c, "result", json_string("applied"));
                applied++;
                continue;
            }
            const char *name = addr + 6 + strlen(g) + 1;
            json_t *q = json_object_get(json_object_get(gd, "queries"), name);
            const char *file = json_string_value(json_object_get(q, "file"));
            json_t *text = json_object_get(json_object_get(gd, "files"), file);
            og_db *db = NULL;
            char *schema = NULL;
            if (json_object_get(failed_graphs, g)) {
                outcome = "blocked";
                snprintf(msg, sizeof msg, "blocked by %s", json_string_value(json_object_get(failed_graphs, g)));
            } else if ((st = og_cluster_db_open(&db, uri, NULL)) != OG_OK || (st = og_db_schema_source(&schema, db, NULL)) != OG_OK) {
                outcome = "blocked";
                snprintf(msg, sizeof msg, "graph_unavailable: %s", og_error_message());
            } else {
                /* the query must type-check against the graph's schema as it is now */
                og_stored_set *set = NULL;
                const char *names[2] = {name, NULL};
                st = og_stored_set_new(&set);
                if (st == OG_OK)
                    st = og_stored_set_add(set, file, json_string_value(text), json_string_length(text), names, schema,
                                           strlen(schema));
                og_stored_set_free(set);
                if (st != OG_OK) {
                    outcome = "blocked";
                    snprintf(msg, sizeof msg, "query_typecheck_error: %s", og_error_message());
                } else {
                    char key[1024];
                    og_catalog_key(key, sizeof key, "query", g, name, json_string_value(json_object_get(q, "digest")));
                    st = og_store_put_if_absent(s.store, key, json_string_value(text), json_string_length(text));
                    if (st != OG_OK && st != OG_ERR_ALREADY_EXISTS) {
                        outcome = "error";
                        snprintf(msg, sizeof msg, "catalog_write_failed: %s", og_error_message());
                    } else {
                        json_object_set_new(res, addr, state_resource(s.desired, addr));
                    }
                }
            }
            og_free(schema);
            og_db_close(db);
        } else if (!strncmp(addr, "policy.", 7)) {
            if (!strcmp(op, "delete")) {
                json_object_del(res, addr);
                json_object_del(statuses, addr);
                json_object_set_new(c, "result", json_string("applied"));
                applied++;
                continue;
            }
            const char *name = addr + 7;
            json_t *p = json_object_get(json_object_get(s.desired, "policies"), name);
            json_t *text = json_object_get(p, "text");
            char key[1024];
            og_catalog_key(key, sizeof key, "policy", NULL, name, json_string_value(json_object_get(p, "digest")));
            st = og_store_put_if_absent(s.store, key, json_string_value(text), json_string_length(text));
            if (st != OG_OK && st != OG_ERR_ALREADY_EXISTS) {
                outcome = "error";
                snprintf(msg, sizeof msg, "catalog_write_failed: %s", og_error_message());
            } else {
                json_object_set_new(res, addr, state_resource(s.desired, addr));
            }
        } else {
            /* providers: recorded (their secrets are resolved only when a server boots) */
            if (!strcmp(op, "delete")) json_object_del(res, addr);
            else json_object_set_new(res, addr, state_resource(s.desired, addr));
        }
        json_object_set_new(c, "result", json_string(outcome));
        if (!strcmp(outcome, "applied")) {
            applied++;
            set_status(statuses, addr, "applied", NULL);
        } else {
            refused++;
            json_object_set_new(c, "reason", json_string(msg));
            /* the sweep owns the statuses of a graph it blocked (drifted/error, with why) */
            if (strcmp(msg, "cluster_recovery_pending")) set_status(statuses, addr, outcome, msg);
            if (!first_refusal[0]) snprintf(first_refusal, sizeof first_refusal, "%s: %s", addr, msg);
        }
    }
    /* approved graph deletes, last: the irreversible step runs only after everything else of
     * this run, and not at all after a graph-moving failure */
    json_t *done = json_object(); /* graph id -> result of its delete */
    json_array_foreach(deletes, i, c) {
        const char *addr = json_string_value(json_object_get(c, "resource"));
        const char *g = addr + 6;
        const char *aid = json_string_value(json_object_get(c, "approval_id"));
        char uri[4096], msg[1024] = "", sckey[256];
        og_cluster_graph_root(uri, sizeof uri, root, g);
        if (json_object_size(failed_graphs)) {
            snprintf(msg, sizeof msg, "graph_delete_skipped: skipped after an earlier graph-moving operation failed in this run");
        } else if ((st = og_sidecar_write(s.store, "graph_delete", g, uri, "", opts->actor, aid, s.revision, sckey,
                                          sizeof sckey)) != OG_OK) {
            snprintf(msg, sizeof msg, "%s", og_error_message());
        } else {
            /* a partial delete keeps its sidecar for the next sweep (graph_delete_incomplete) */
            if ((st = og_cluster_remove_root(uri)) != OG_OK) snprintf(msg, sizeof msg, "graph_delete_failed: %s", og_error_message());
            else json_array_append_new(op_sidecars, json_string(sckey));
        }
        if (msg[0]) {
            json_object_set_new(failed_graphs, g, json_string(msg));
            json_object_set_new(done, g, json_string(msg));
            continue;
        }
        og_cluster_tombstone(next, g, aid, opts->actor);
        if (aid) {
            og_cluster_record_approval_consumed(next, aid, "apply");
            json_array_append_new(consumed, json_string(aid));
        }
        json_object_set_new(done, g, json_string("applied"));
    }
    /* the results of the deletes and of the subtrees riding them */
    json_array_foreach(changes, i, c) {
        const char *addr = json_string_value(json_object_get(c, "resource"));
        char gb[256];
        const char *g = addr_graph(addr, gb, sizeof gb);
        json_t *r = g ? json_object_get(done, g) : NULL;
        if (!r || json_object_get(c, "result") || strcmp(json_string_value(json_object_get(c, "operation")), "delete") ||
            !(!strncmp(addr, "graph.", 6) || !strncmp(addr, "schema.", 7) || !strncmp(addr, "query.", 6)))
            continue;
        const char *m = json_string_value(r);
        if (!strcmp(m, "applied")) {
            json_object_set_new(c, "result", json_string("applied"));
            applied++;
        } else {
            json_object_set_new(c, "result", json_string(!strncmp(addr, "graph.", 6) ? "error" : "blocked"));
            json_object_set_new(c, "reason", json_string(m));
            if (!strncmp(addr, "graph.", 6)) og_cluster_set_status(statuses, addr, "error", NULL, m);
            refused++;
            if (!first_refusal[0]) snprintf(first_refusal, sizeof first_refusal, "%s: %s", addr, m);
        }
    }
    json_decref(done);
    json_decref(deletes);
    json_decref(del_graphs);
    json_decref(failed_graphs);
    json_object_set(json_object_get(next, "applied_revision"), "config_digest", json_object_get(s.desired, "config_digest"));
    int written = 0;
    og_status pub = OG_OK;
    if (!json_equal(next, s.state)) {
        pub = og_ledger_publish(s.store, next, s.revision);
        written = pub == OG_OK;
    }
    if (pub == OG_OK) {
        /* recorded: the sidecars of this run and the sweep's retired ones go, the approvals
         * consumed are marked on their artifacts */
        og_cluster_delete_keys(s.store, op_sidecars);
        og_cluster_delete_keys(s.store, sw.completed);
        og_approvals_mark_consumed(s.store, consumed, "apply");
        og_approvals_mark_consumed(s.store, sw.consumed_approvals, "recovery");
    }
    json_decref(op_sidecars);
    json_decref(consumed);
    og_sweep_free(&sw);
    if (og_diag_errors(s.diags) && !refused) {
        refused++;
        snprintf(first_refusal, sizeof first_refusal, "%s", "a recovery sidecar needs repair (see diagnostics)");
    }
    json_object_set_new(s.report, "ok", json_boolean(pub == OG_OK && !refused));
    if (opts->actor) json_object_set_new(s.report, "actor", json_string(opts->actor));
    json_object_set_new(s.report, "state_revision", json_integer(written ? s.revision + 1 : s.revision));
    json_object_set_new(s.report, "changes", changes);
    json_object_set_new(s.report, "applied_count", json_integer((json_int_t)applied));
    json_object_set_new(s.report, "deferred_count", json_integer((json_int_t)deferred));
    json_object_set_new(s.report, "refused_count", json_integer((json_int_t)refused));
    json_object_set_new(s.report, "converged", json_boolean(pub == OG_OK && !refused && !deferred));
    json_object_set_new(s.report, "state_written", json_boolean(written));
    json_object_set(s.report, "resource_statuses", statuses);
    json_object_set(s.report, "diagnostics", s.diags);
    json_decref(next);
    if (pub != OG_OK) return session_fail(out, &s, pub);
    session_end(&s);
    og_status fs = finish(out, s.report);
    if (refused) return og_err(OG_ERR_INVALID, "apply refused %zu change(s); first: %s", refused, first_refusal);
    return fs;
}

og_status og_cluster_import(char **out, const char *dir, const og_cluster_opts *opts)
{
    (void)opts;
    session s;
    og_status st = session_begin(&s, dir, "import", 1);
    if (st != OG_OK) return session_fail(out, &s, st);
    if (s.state) {
        st = og_err(OG_ERR_ALREADY_EXISTS, "the cluster already has applied state (revision %lld); use plan and apply", s.revision);
        return session_fail(out, &s, st);
    }
    json_t *next = new_state(NULL);
    og_sweep sw;
    og_cluster_sweep(s.store, next, s.desired, s.diags, &sw);
    json_t *res = json_object_get(json_object_get(next, "applied_revision"), "resources");
    json_t *obs = json_object_get(next, "observations");
    json_t *statuses = json_object_get(next, "resource_statuses");
    const char *root = json_string_value(json_object_get(s.desired, "storage_root"));
    const char *g;
    json_t *gd;
    json_object_foreach(json_object_get(s.desired, "graphs"), g, gd) {
        char uri[4096], addr[300], saddr[300];
        og_cluster_graph_root(uri, sizeof uri, root, g);
        snprintf(addr, sizeof addr, "graph.%s", g);
        snprintf(saddr, sizeof saddr, "schema.%s", g);
        og_db *db = NULL;
        char *schema = NULL;
        json_t *o = json_object();
        json_object_set_new(o, "graph_uri", json_string(uri));
        char at[25];
        og_format_time_ms(og_now_ms(), at);
        json_object_set_new(o, "observed_at", json_string(at));
        if (og_cluster_db_open(&db, uri, NULL) == OG_OK && og_db_schema_source(&schema, db, NULL) == OG_OK) {
            char digest[65];
            og_cluster_digest(digest, schema, strlen(schema));
            json_object_set_new(res, addr, state_resource(s.desired, addr));
            json_object_set_new(res, saddr, json_pack("{ss}", "digest", digest));
            int match = !strcmp(digest, json_string_value(json_object_get(gd, "schema_digest")));
            json_object_set_new(o, "exists", json_true());
            json_object_set_new(o, "schema_digest", json_string(digest));
            json_object_set_new(o, "schema_matches_desired", json_boolean(match));
            set_status(statuses, addr, "applied", NULL);
            set_status(statuses, saddr, match ? "applied" : "drifted", match ? NULL : "live schema differs from the declared schema");
        } else {
            json_object_set_new(o, "exists", json_false());
        }
        og_free(schema);
        og_db_close(db);
        json_object_set_new(obs, addr, o);
    }
    json_object_set(json_object_get(next, "applied_revision"), "config_digest", json_object_get(s.desired, "config_digest"));
    st = og_ledger_publish(s.store, next, 0);
    if (st != OG_OK) {
        json_decref(next);
        og_sweep_free(&sw);
        return session_fail(out, &s, st);
    }
    og_cluster_delete_keys(s.store, sw.completed);
    og_approvals_mark_consumed(s.store, sw.consumed_approvals, "recovery");
    og_sweep_free(&sw);
    json_object_set_new(s.report, "ok", json_true());
    json_object_set_new(s.report, "state_revision", json_integer(1));
    json_object_set_new(s.report, "state_written", json_true());
    json_object_set(s.report, "observations", obs);
    json_object_set(s.report, "diagnostics", s.diags);
    json_decref(next);
    session_end(&s);
    return finish(out, s.report);
}

og_status og_cluster_refresh(char **out, const char *dir, const og_cluster_opts *opts)
{
    (void)opts;
    session s;
    og_status st = session_begin(&s, dir, "refresh", 1);
    if (st != OG_OK) return session_fail(out, &s, st);
    if (!s.state) {
        st = og_err(OG_ERR_NOT_FOUND,
                    "state_missing: refresh requires an existing state.json; run `cluster import` to bootstrap state");
        return session_fail(out, &s, st);
    }
    json_t *next = new_state(s.state);
    og_sweep sw;
    og_cluster_sweep(s.store, next, s.desired, s.diags, &sw);
    json_t *res = json_object_get(json_object_get(next, "applied_revision"), "resources");
    json_t *statuses = json_object_get(next, "resource_statuses");
    json_t *obs = json_object_get(next, "observations");
    /* the catalog first: a drifted blob loses its digest, so the next plan republishes it */
    const char *addr;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(res, tmp, addr, v) {
        char key[1024];
        const char *digest = json_string_value(json_object_get(v, "digest"));
        if (!addr_catalog_key(addr, digest, key, sizeof key)) continue;
        og_bytes b = {0};
        og_status gs = og_store_get(s.store, key, &b);
        char d2[65] = "";
        if (gs == OG_OK) og_cluster_digest(d2, b.data, b.len);
        og_bytes_free(&b);
        if (gs == OG_ERR_NOT_FOUND) {
            og_diag_add(s.diags, "warning", "catalog_payload_missing", addr,
                        "catalog payload blob is missing; re-run `cluster apply` to republish");
            og_cluster_set_status(statuses, addr, "drifted", "payload_missing",
                                  "catalog payload blob is missing; re-run `cluster apply` to republish");
            json_object_del(res, addr);
        } else if (gs != OG_OK) {
            og_diag_add(s.diags, "error", "catalog_payload_read_error", addr, "%s", og_error_message());
            og_cluster_set_status(statuses, addr, "error", "payload_read_error", og_error_message());
        } else if (strcmp(d2, digest)) {
            og_diag_add(s.diags, "warning", "catalog_payload_mismatch", addr,
                        "catalog payload blob does not match the recorded digest (actual sha256:%s); re-run "
                        "`cluster apply` to republish",
                        d2);
            og_cluster_set_status(statuses, addr, "drifted", "payload_mismatch",
                                  "catalog payload blob does not match the recorded digest; re-run `cluster apply` to "
                                  "republish");
            json_object_del(res, addr);
        }
    }
    /* then every declared graph, read-only, on branch main */
    const char *root = json_string_value(json_object_get(s.desired, "storage_root"));
    size_t errors = 0;
    const char *g;
    json_t *gd;
    json_object_foreach(json_object_get(s.desired, "graphs"), g, gd) {
        char uri[4096], gaddr[300], saddr[300], at[25];
        og_cluster_graph_root(uri, sizeof uri, root, g);
        snprintf(gaddr, sizeof gaddr, "graph.%s", g);
        snprintf(saddr, sizeof saddr, "schema.%s", g);
        og_format_time_ms(og_now_ms(), at);
        const char *want = json_string_value(json_object_get(gd, "schema_digest"));
        json_t *o = json_object();
        json_object_set_new(o, "graph_uri", json_string(uri));
        json_object_set_new(o, "observed_at", json_string(at));
        json_object_set_new(o, "desired_schema_digest", json_string(want));
        if (!og_cluster_root_present(uri)) {
            json_object_del(res, gaddr);
            json_object_del(res, saddr);
            json_object_set_new(o, "exists", json_false());
            json_object_set_new(o, "schema_matches_desired", json_false());
            json_object_set_new(o, "error", json_string("derived graph root is missing"));
            og_cluster_set_status(statuses, gaddr, "drifted", "graph_missing", "derived graph root is missing");
            og_cluster_set_status(statuses, saddr, "drifted", "graph_missing", "derived graph root is missing");
            json_object_set_new(obs, gaddr, o);
            continue;
        }
        og_db *db = NULL;
        char *schema = NULL;
        og_status os = og_cluster_db_open(&db, uri, NULL);
        if (os == OG_OK) os = og_db_schema_source(&schema, db, NULL);
        json_object_set_new(o, "exists", json_true());
        if (os == OG_OK) {
            char live[65];
            og_cluster_digest(live, schema, strlen(schema));
            int match = !strcmp(live, want);
            json_object_set_new(res, saddr, json_pack("{ss}", "digest", live));
            if (!json_object_get(res, gaddr)) json_object_set_new(res, gaddr, state_resource(s.desired, gaddr));
            json_object_set_new(o, "schema_digest", json_string(live));
            json_object_set_new(o, "schema_matches_desired", json_boolean(match));
            if (match) {
                og_cluster_set_status(statuses, gaddr, "applied", NULL, NULL);
                og_cluster_set_status(statuses, saddr, "applied", NULL, NULL);
            } else {
                og_cluster_set_status(statuses, gaddr, "drifted", "schema_mismatch", "live schema digest differs from desired schema digest");
                og_cluster_set_status(statuses, saddr, "drifted", "schema_mismatch", "live schema digest differs from desired schema digest");
            }
        } else {
            errors++;
            json_object_set_new(o, "error", json_string(og_error_message()));
            og_cluster_set_status(statuses, gaddr, "error", "graph_observation_error", og_error_message());
            og_cluster_set_status(statuses, saddr, "error", "graph_observation_error", og_error_message());
        }
        og_free(schema);
        og_db_close(db);
        json_object_set_new(obs, gaddr, o);
    }
    if (errors) og_diag_add(s.diags, "error", "graph_observation_error", "graphs", "%zu graph observation(s) failed", errors);
    /* refresh always records what it observed */
    st = og_ledger_publish(s.store, next, s.revision);
    if (st == OG_OK) {
        og_cluster_delete_keys(s.store, sw.completed);
        og_approvals_mark_consumed(s.store, sw.consumed_approvals, "recovery");
    }
    og_sweep_free(&sw);
    if (st != OG_OK) {
        json_decref(next);
        return session_fail(out, &s, st);
    }
    json_object_set_new(s.report, "ok", json_boolean(!og_diag_errors(s.diags)));
    json_object_set_new(s.report, "operation", json_string("refresh"));
    json_object_set_new(s.report, "state_revision", json_integer(s.revision + 1));
    json_object_set_new(s.report, "state_written", json_true());
    json_object_set_new(s.report, "resource_digests", digests_of(res));
    json_object_set(s.report, "resource_statuses", statuses);
    json_object_set(s.report, "observations", obs);
    json_object_set(s.report, "diagnostics", s.diags);
    json_decref(next);
    session_end(&s);
    og_status fs = finish(out, s.report);
    if (og_diag_errors(s.diags)) return diag_status(s.diags);
    return fs;
}

og_status og_cluster_approve(char **out, const char *dir, const char *resource, const og_cluster_opts *opts)
{
    if (!opts || !opts->actor || !*opts->actor)
        return og_err(OG_ERR_INVALID, "`cluster approve` requires an approver: pass --as <ACTOR> — an approval without "
                                      "an approver is meaningless");
    session s;
    og_status st = session_begin(&s, dir, "approve", 1);
    if (st != OG_OK) return session_fail(out, &s, st);
    if (!s.state) {
        st = og_err(OG_ERR_NOT_FOUND, "state_missing: approve requires an existing state.json; run `cluster import` first");
        return session_fail(out, &s, st);
    }
    diff_ctx dc = {.approvals_required = json_array()};
    json_t *changes = compute_changes(s.desired, s.state, NULL, &dc);
    json_t *change = NULL, *gate = NULL;
    size_t i;
    json_t *c;
    json_array_foreach(dc.approvals_required, i, c)
        if (!strcmp(json_string_value(json_object_get(c, "resource")), resource ? resource : "")) gate = c;
    json_array_foreach(changes, i, c)
        if (gate && !strcmp(json_string_value(json_object_get(c, "resource")), resource)) change = c;
    if (!change) {
        og_diag_add(s.diags, "error", "approval_not_required", resource ? resource : "",
                    "no pending change for this resource requires approval (check `cluster plan`)");
        json_decref(changes);
        json_decref(dc.approvals_required);
        st = og_err(OG_ERR_INVALID, "approval_not_required: %s: no pending change for this resource requires approval "
                                    "(check `cluster plan`)", resource ? resource : "");
        return session_fail(out, &s, st);
    }
    char id[OG_ULID_LEN + 1], at[25];
    st = og_ulid_new(id);
    og_format_time_ms(og_now_ms(), at);
    json_t *a = json_object();
    json_object_set_new(a, "schema_version", json_integer(1));
    json_object_set_new(a, "approval_id", json_string(id));
    json_object_set_new(a, "resource", json_string(resource));
    json_object_set(a, "operation", json_object_get(change, "operation"));
    json_object_set(a, "reason", json_object_get(gate, "reason"));
    json_object_set(a, "bound_config_digest", json_object_get(s.desired, "config_digest"));
    json_t *bd = json_object_get(change, "before_digest"), *ad = json_object_get(change, "after_digest");
    json_object_set_new(a, "bound_before_digest", bd ? json_incref(bd) : json_null());
    json_object_set_new(a, "bound_after_digest", ad ? json_incref(ad) : json_null());
    json_object_set_new(a, "approved_by", json_string(opts->actor));
    json_object_set_new(a, "created_at", json_string(at));
    json_object_set_new(a, "consumed_at", json_null());
    json_object_set_new(a, "consumed_by_operation", json_null());
    if (st == OG_OK) st = og_approval_write(s.store, a, 1);
    if (st != OG_OK) {
        json_decref(a);
        json_decref(changes);
        json_decref(dc.approvals_required);
        return session_fail(out, &s, st);
    }
    json_object_set_new(s.report, "ok", json_true());
    json_object_set_new(s.report, "approval_id", json_string(id));
    json_object_set_new(s.report, "resource", json_string(resource));
    json_object_set(s.report, "operation", json_object_get(change, "operation"));
    json_object_set_new(s.report, "approved_by", json_string(opts->actor));
    json_object_set(s.report, "diagnostics", s.diags);
    json_decref(a);
    json_decref(changes);
    json_decref(dc.approvals_required);
    session_end(&s);
    return finish(out, s.report);
}

og_status og_cluster_status(char **out, const char *dir)
{
    session s;
    og_status st = session_begin(&s, dir, "status", 0);
    if (st != OG_OK) return session_fail(out, &s, st);
    og_sidecars_warn_pending(s.store, s.diags);
    json_t *r = s.report;
    json_t *lock = og_lock_read(s.store);
    json_object_set_new(r, "locked", json_boolean(lock != NULL));
    if (lock) json_object_set_new(r, "lock", lock);
    json_object_set_new(r, "state_present", json_boolean(s.state != NULL));
    json_object_set_new(r, "state_revision", json_integer(s.revision));
    json_t *conds = json_array();
    json_t *graphs = json_object();
    if (s.state) {
        json_t *res = json_object_get(json_object_get(s.state, "applied_revision"), "resources");
        json_object_set(r, "applied_revision", json_object_get(s.state, "applied_revision"));
        json_object_set(r, "resource_statuses", json_object_get(s.state, "resource_statuses"));
        const char *addr;
        json_t *v;
        json_object_foreach(res, addr, v) {
            char key[1024];
            const char *digest = json_string_value(json_object_get(v, "digest"));
            if (!strncmp(addr, "graph.", 6)) {
                const char *g = addr + 6;
                char uri[4096];
                og_cluster_graph_root(uri, sizeof uri, json_string_value(json_object_get(s.desired, "storage_root")), g);
                og_db *db = NULL;
                char *schema = NULL;
                json_t *o = json_object();
                json_object_set_new(o, "graph_uri", json_string(uri));
                char saddr[300];
                snprintf(saddr, sizeof saddr, "schema.%s", g);
                const char *want = json_string_value(json_object_get(json_object_get(res, saddr), "digest"));
                if (og_cluster_db_open(&db, uri, NULL) == OG_OK && og_db_schema_source(&schema, db, NULL) == OG_OK) {
                    char d2[65];
                    og_cluster_digest(d2, schema, strlen(schema));
                    json_object_set_new(o, "exists", json_true());
                    int drift = !want || strcmp(want, d2);
                    json_object_set_new(o, "status", json_string(drift ? "drifted" : "applied"));
                    if (drift) json_object_set_new(o, "message", json_string("the live schema differs from the applied schema"));
                } else {
                    json_object_set_new(o, "exists", json_false());
                    json_object_set_new(o, "status", json_string("drifted"));
                    json_object_set_new(o, "message", json_string("derived graph root is missing"));
                }
                og_free(schema);
                og_db_close(db);
                json_object_set_new(graphs, g, o);
                continue;
            }
            if (!addr_catalog_key(addr, digest, key, sizeof key)) continue;
            og_bytes b = {0};
            og_status gs = og_store_get(s.store, key, &b);
            const char *cond = NULL;
            if (gs == OG_ERR_NOT_FOUND) cond = "catalog_payload_missing";
            else if (gs != OG_OK) cond = "catalog_payload_read_error";
            else {
                char d2[65];
                og_cluster_digest(d2, b.data, b.len);
                if (strcmp(d2, digest)) cond = "catalog_payload_mismatch";
            }
            og_bytes_free(&b);
            if (cond) json_array_append_new(conds, json_pack("{ss ss ss}", "resource", addr, "code", cond, "key", key));
        }
    }
    json_object_set_new(r, "graphs", graphs);
    json_object_set_new(r, "ok", json_boolean(json_array_size(conds) == 0));
    json_object_set_new(r, "catalog_conditions", conds);
    json_object_set(r, "diagnostics", s.diags);
    session_end(&s);
    return finish(out, r);
}

og_status og_cluster_force_unlock(char **out, const char *dir, const char *lock_id)
{
    session s;
    og_status st = session_begin(&s, dir, "force-unlock", 0);
    if (st != OG_OK) return session_fail(out, &s, st);
    json_t *lock = og_lock_read(s.store);
    const char *hid = json_string_value(json_object_get(lock, "lock_id"));
    if (!lock) st = og_err(OG_ERR_NOT_FOUND, "the cluster is not locked");
    else if (!lock_id || strcmp(hid ? hid : "", lock_id))
        st = og_err(OG_ERR_PRECONDITION_FAILED, "lock id mismatch: the held lock is %s, not %s", hid ? hid : "?",
                    lock_id ? lock_id : "");
    else st = og_store_delete(s.store, OG_CLUSTER_LOCK);
    if (st != OG_OK) {
        json_decref(lock);
        return session_fail(out, &s, st);
    }
    json_object_set_new(s.report, "ok", json_true());
    json_object_set_new(s.report, "removed_lock", lock);
    session_end(&s);
    return finish(out, s.report);
}
