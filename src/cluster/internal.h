/*
 * internal.h — what the files of the cluster layer share: the YAML loader, diagnostics, the
 * desired configuration (config.c) and the ledger / lock / catalog of the storage root
 * (ledger.c).  Not a contract for other layers (cluster.h and stored.h are).
 *
 * The desired configuration is a jansson object, built once by og_cluster_load_desired:
 *   {"config_dir", "storage_root", "state_lock": bool, "config_digest",
 *    "resources": {addr: {"kind", "digest", "path"?, "applies_to"?}},
 *    "graphs": {id: {"schema_path", "schema_text", "schema_digest",
 *                    "queries": {name: {"file", "digest"}}, "files": {file: text}}},
 *    "policies": {name: {"file", "text", "digest", "applies_to": [...]}}}
 */
#ifndef OG_CLUSTER_INTERNAL_H
#define OG_CLUSTER_INTERNAL_H

#include <jansson.h>
#include <stdarg.h>

#include "omnigraph.h"
#include "store/store.h"

/* ---- yaml.c ---- */
/* Parses one YAML document into *out.  Problems become diagnostics in `diags` (codes
 * invalid_cluster_yaml, duplicate_key); then OG_ERR_PARSE and *out NULL. */
og_status og_yaml_load(json_t **out, json_t *diags, const char *text, size_t len, const char *what);
void og_diag_add(json_t *diags, const char *severity, const char *code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int og_diag_errors(const json_t *diags);

/* ---- config.c ---- */
/* Loads and validates the configuration of `dir`.  Always fills diags; *desired is NULL when
 * the file could not be read as a cluster configuration at all. */
void og_cluster_load_desired(json_t **desired, json_t *diags, const char *dir);
/* sha256 hex of bytes. */
void og_cluster_digest(char out[65], const void *p, size_t n);

/* ---- ledger.c ---- */
#define OG_CLUSTER_STATE_PREFIX "__cluster/state/"
#define OG_CLUSTER_STATE_COPY "__cluster/state.json"
#define OG_CLUSTER_LOCK "__cluster/lock.json"

/* Reads the newest ledger revision: *state NULL (and *revision 0) when there is none. */
og_status og_ledger_read(og_store *st, json_t **state, long long *revision);
/* Publishes `state` as revision expected+1 (put-if-absent): OG_ERR_CONFLICT when another
 * writer published that revision first.  Sets "state_revision" in state. */
og_status og_ledger_publish(og_store *st, json_t *state, long long expected);
/* Takes the lock (lock_id_out receives its id): OG_ERR_CONFLICT naming the holder. */
og_status og_lock_acquire(og_store *st, const char *operation, char lock_id_out[32], json_t **holder);
void og_lock_release(og_store *st, const char *lock_id);
/* The lock's JSON, or NULL when none. */
json_t *og_lock_read(og_store *st);
/* Catalog blob keys. */
void og_catalog_key(char *out, size_t cap, const char *kind, const char *graph, const char *name, const char *digest);
/* og_db_open that never creates anything (a missing local root is OG_ERR_NOT_FOUND). */
og_status og_cluster_db_open(og_db **out, const char *uri, const og_open_opts *opts);
/* The graph root URI of `id` under the storage root. */
void og_cluster_graph_root(char *out, size_t cap, const char *storage_root, const char *id);

/* ---- recovery.c: sidecars, the recovery sweep, approvals, tombstones ---- */
#define OG_CLUSTER_RECOVERIES "__cluster/recoveries/"
#define OG_CLUSTER_APPROVALS "__cluster/approvals/"

/* resource_statuses[addr] = {status, conditions: [condition?], message?} */
void og_cluster_set_status(json_t *statuses, const char *addr, const char *status, const char *condition,
                           const char *message);
/* Writes a recovery sidecar (kind graph_create | schema_apply | graph_delete) before a
 * graph-moving step; key_out receives its key (delete it once the ledger records the step). */
og_status og_sidecar_write(og_store *st, const char *kind, const char *graph_id, const char *graph_uri,
                           const char *desired_schema_digest, const char *actor, const char *approval_id,
                           long long state_revision_base, char *key_out, size_t key_cap);
/* Read-only commands: one cluster_recovery_pending warning per sidecar. */
void og_sidecars_warn_pending(og_store *st, json_t *diags);
typedef struct og_sweep {
    json_t *completed;          /* sidecar keys to delete once the next ledger revision is published */
    json_t *pending_graphs;     /* {graph_id: true}: graph-moving work blocked (cluster_recovery_pending) */
    json_t *consumed_approvals; /* approval ids a rolled-forward delete consumed */
} og_sweep;
/* Classifies every sidecar against the live graphs, mutating `state` (roll forward, statuses,
 * recovery_records).  `desired` may be NULL. */
void og_cluster_sweep(og_store *st, json_t *state, json_t *desired, json_t *diags, og_sweep *out);
void og_sweep_free(og_sweep *s);
void og_cluster_delete_keys(og_store *st, json_t *keys);
/* Removes graph.<g>, schema.<g> and query.<g>.* from the ledger, leaving a tombstone observation. */
void og_cluster_tombstone(json_t *state, const char *g, const char *approval_id, const char *actor);
void og_cluster_record_approval_consumed(json_t *state, const char *approval_id, const char *operation);
/* Valid approval artifacts (each with "_consumed": bool, from the artifact or the ledger). */
json_t *og_approvals_list(og_store *st, json_t *state, json_t *diags);
/* The id of an unconsumed approval for exactly this change, or NULL (*stale = 1 when one
 * exists for the resource but its bound digests no longer match). */
const char *og_approval_match(json_t *approvals, const char *resource, const char *config_digest, const char *before,
                              const char *after, int *stale);
/* create: put-if-absent (a new artifact); else overwrite (consumption). */
og_status og_approval_write(og_store *st, json_t *artifact, int create);
void og_approvals_mark_consumed(og_store *st, json_t *ids, const char *operation);
/* Removes a graph root recursively (a local directory tree, or every object under an S3
 * prefix); an absent root is OG_OK. */
og_status og_cluster_remove_root(const char *uri);
/* 1 when anything exists at the root (even a partial root that does not open). */
int og_cluster_root_present(const char *uri);

#endif
