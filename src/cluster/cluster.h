/*
 * cluster.h — cluster as code (reference-surfaces.md §5): a directory holding cluster.yaml,
 * `.pg` schemas, `.gq` stored queries and policy bundles is the desired state of a set of
 * graphs; a ledger in the cluster's storage root records what was applied.
 *
 * Layout of the storage root (the config directory, or `storage:` of cluster.yaml):
 *   __cluster/state/<revision>.json   the ledger, one immutable object per revision, created
 *                                     with og_store_put_if_absent: the compare-and-swap that
 *                                     makes exactly one of two concurrent applies win
 *   __cluster/state.json              a copy of the newest revision, for people and tools
 *   __cluster/lock.json               the operation lock (put-if-absent; force-unlock by id)
 *   __cluster/resources/query/<g>/<name>/<sha256>.gq     content-addressed catalog
 *   __cluster/resources/policy/<name>/<sha256>.yaml
 *   __cluster/recoveries/<operation_id>.json         recovery sidecars of graph-moving steps
 *   __cluster/approvals/<approval_id>.json           approvals of graph deletes (never deleted)
 *   graphs/<id>.omni                  the derived graph roots
 *
 * Every verb returns its report as JSON text (free with og_free); the CLI prints it.
 * Configuration problems are diagnostics {code, severity, path, message} inside the report,
 * not errors: the verb then returns OG_ERR_INVALID with the first error's message.
 *
 * The layer uses the public API (include/omnigraph.h) for graphs, the compiler to type-check
 * stored queries offline, and the store for the ledger.
 */
#ifndef OG_CLUSTER_CLUSTER_H
#define OG_CLUSTER_CLUSTER_H

#include <stddef.h>

#include "omnigraph.h"

typedef struct og_cluster_opts {
    const char *actor;    /* recorded on graph commits apply writes; NULL = "omnigraph" */
    int allow_data_loss;  /* apply: schema drops are hard (reclaimed), not soft */
    int json;             /* unused by the library (the CLI's rendering choice) */
} og_cluster_opts;

/* Checks the configuration in `dir`: {"ok","config_dir","diagnostics":[...],
 * "resources":{addr:digest}}.  OG_OK when no diagnostic is an error, else OG_ERR_INVALID
 * (the report is still returned). */
og_status og_cluster_validate(char **out, const char *dir);

/* Validation, then the diff of desired digests against the applied ledger (missing = empty):
 * {"ok","config_dir","storage_root","state_revision","desired_revision","resource_digests",
 * "changes":[{resource, operation, before_digest?, after_digest?, disposition, reason?,
 * migration?}],"state_observations","diagnostics"}.  Takes and releases the lock; never writes
 * the ledger.  OG_ERR_CONFLICT when the lock is held (report names it). */
og_status og_cluster_plan(char **out, const char *dir, const og_cluster_opts *opts);

/* Executes the plan under the lock: graph creates, schema updates (unsupported migrations are
 * refused with the engine's reason), stored queries that type-check against the graph's
 * schema after that step, policy bundles, bindings; then publishes the next ledger revision
 * with compare-and-swap.  Errors: OG_ERR_NOT_FOUND (state_missing: run import first),
 * OG_ERR_CONFLICT (lock held, or another apply published first: nothing recorded),
 * OG_ERR_INVALID (configuration or a refused change; the report lists them).  Re-running a
 * converged apply writes nothing ("state_written": false). */
og_status og_cluster_apply(char **out, const char *dir, const og_cluster_opts *opts);

/* Read-only view of the ledger plus verification of every catalog blob, and the lock. */
og_status og_cluster_status(char **out, const char *dir);

/* Creates the first ledger revision from observation of the declared graph roots (existing
 * graphs are recorded with their live schema digests).  OG_ERR_ALREADY_EXISTS when a ledger
 * exists. */
og_status og_cluster_import(char **out, const char *dir, const og_cluster_opts *opts);

/* Re-observes the applied state (reference: `cluster refresh`): runs the recovery sweep, checks
 * every catalog blob (a missing or mismatched one is `drifted` and loses its digest, so the next
 * plan republishes it; an unreadable one is `error`), opens every declared graph read-only
 * (a missing root loses its graph/schema digests — the next plan re-creates it; a live schema
 * other than the declared one is `drifted`, and the next plan migrates it back) and always
 * publishes the next ledger revision.  OG_ERR_NOT_FOUND (state_missing) without a ledger;
 * OG_ERR_INVALID when an observation failed (still recorded). */
og_status og_cluster_refresh(char **out, const char *dir, const og_cluster_opts *opts);

/* Records a digest-bound approval (opts->actor is the approver, required) for a gated change —
 * a graph delete, which apply then executes last (root removed, subtree tombstoned, approval
 * consumed).  The artifact __cluster/approvals/<id>.json binds the configuration digest and the
 * change's digests: any later movement makes it stale (warning approval_stale).  Errors:
 * OG_ERR_INVALID (no approver; approval_not_required: no pending change of `resource` needs
 * one), OG_ERR_NOT_FOUND (state_missing). */
og_status og_cluster_approve(char **out, const char *dir, const char *resource, const og_cluster_opts *opts);

/* Removes the lock when its id is exactly `lock_id`.  OG_ERR_NOT_FOUND (no lock),
 * OG_ERR_PRECONDITION_FAILED (another id). */
og_status og_cluster_force_unlock(char **out, const char *dir, const char *lock_id);

/* ---- the applied view (what a server or an agent surface serves) --------------------------- */

typedef struct og_cluster og_cluster;

/* Opens the applied state of a cluster: `where` is a config directory (its cluster.yaml's
 * storage root is used) or a storage root (a directory or s3:// URI holding __cluster/).
 * Errors: OG_ERR_NOT_FOUND (cluster_state_missing), OG_ERR_CORRUPT (catalog blob digest
 * mismatch), OG_ERR_IO. */
og_status og_cluster_open(og_cluster **out, const char *where);
void og_cluster_close(og_cluster *c);

size_t og_cluster_graph_count(const og_cluster *c);
const char *og_cluster_graph_id(const og_cluster *c, size_t i);
/* The graph's storage root URI, or NULL for an unknown id. */
const char *og_cluster_graph_uri(const og_cluster *c, const char *graph_id);
/* The graph's applied stored queries, parsed and type-checked against the schema of `db`
 * (the graph opened at og_cluster_graph_uri): *out is a new set (og_stored_set_free).  A query
 * that no longer type-checks is an error (OG_ERR_TYPE naming it): the graph is not served
 * broken.  A graph with a pending recovery sidecar is OG_ERR_PRECONDITION_FAILED
 * (cluster_recovery_pending: served only after a sweep classifies the interrupted operation). */
struct og_stored_set;
og_status og_cluster_stored_queries(struct og_stored_set **out, const og_cluster *c, const char *graph_id, og_db *db);
/* The policy bundle text bound to the graph (NULL when none; "cluster" for the server). */
const char *og_cluster_policy_text(const og_cluster *c, const char *graph_id);

/* The applied embedding provider of a graph (`embedding_provider:` -> providers.embedding.<name>),
 * with its `api_key: ${VAR}` resolved from the environment now (reference: secrets are resolved
 * when a server boots, never at validate/plan/apply).  *bound = 0 (and OG_OK) when the graph
 * names none.  The strings point into the og_cluster, except api_key, which is written to
 * key_buf.  OG_ERR_INVALID "graph 'g': embedding provider 'p' needs the environment variable
 * VAR (api_key: ${VAR}), which is not set" (or empty); OG_ERR_CORRUPT when the ledger names a
 * provider it does not record. */
og_status og_cluster_embedding_provider(const og_cluster *c, const char *graph_id, og_db_embed_provider *out,
                                        char *key_buf, size_t key_cap, int *bound);

#endif
