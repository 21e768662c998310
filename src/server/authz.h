/*
 * authz.h — the one decision the server asks per request (reference-surfaces.md §4): may
 * `actor` do `action` on `graph` with this branch / target branch?  The server knows only
 * this interface; a policy engine plugs in behind it.  With no policy file the decision is
 * the runtime state's (auth.h): Open allows every per-graph action, DefaultDeny allows
 * `read` only, and `graph_list` is denied unless a policy allows it.
 */
#ifndef OG_SERVER_AUTHZ_H
#define OG_SERVER_AUTHZ_H

#include "omnigraph.h"
#include "server/auth.h"

typedef enum og_action {
    OG_ACTION_READ = 0,
    OG_ACTION_EXPORT,
    OG_ACTION_CHANGE,
    OG_ACTION_SCHEMA_APPLY,
    OG_ACTION_BRANCH_CREATE,
    OG_ACTION_BRANCH_DELETE,
    OG_ACTION_BRANCH_MERGE,
    OG_ACTION_ADMIN,
    OG_ACTION_INVOKE_QUERY,
    OG_ACTION_GRAPH_LIST,
    OG_ACTION_NONE /* routes that need no decision (/healthz, /openapi.json) */
} og_action;

/* The policy's spelling ("read", "branch_merge", ...). */
const char *og_action_name(og_action a);

typedef struct og_authz_request {
    const char *actor;         /* from the matched token; NULL in Open mode */
    og_action action;
    const char *graph;         /* NULL for server-scoped actions (graph_list) */
    const char *branch;        /* may be NULL */
    const char *target_branch; /* may be NULL */
    const char *query;         /* the stored query called (invoke_query and its read/change); NULL = ad hoc */
    /* who created branch / target_branch (the `owned` scope, docs/policy.md); NULL = unknown.
     * Filled only when the engine's owner_rules() says the graph's bundle needs them. */
    const char *branch_creator;
    const char *target_branch_creator;
} og_authz_request;

typedef struct og_authz_decision {
    int allowed;
    int mask_as_not_found;  /* a deny to report as 404 (invoke_query, §4 anti-probing) */
    char matched_rule[128]; /* the rule that allowed it ("" when none, or not a policy) */
    char message[256];      /* why it was denied */
} og_authz_decision;

/* A policy engine.  decide() returns OG_OK with a decision, or an error (HTTP 500: the
 * policy failed to evaluate).  It must be safe to call from several threads. */
typedef struct og_authz {
    og_status (*decide)(void *ctx, const og_authz_request *req, og_authz_decision *out);
    void *ctx;
    /* Optional: the i-th protected branch of the bundle governing `graph` (NULL past the end),
     * so "allowed on some branch?" (MCP tools/list) can ask one protected name. */
    const char *(*protected_branch)(void *ctx, const char *graph, size_t i);
    /* Optional: 1 when the bundle governing `graph` has per-query rules (`queries:`), so the
     * stored-query list shows each actor only the queries it may invoke. */
    int (*query_rules)(void *ctx, const char *graph);
    /* Optional: 1 when the bundle governing `graph` has `owned` scopes, so the server looks
     * up who created the request's branches before deciding (a read of the branch log it
     * skips otherwise). */
    int (*owner_rules)(void *ctx, const char *graph);
} og_authz;

/* The decision for `req` in runtime state `mode`; `policy` (may be NULL) is consulted only
 * in OG_AUTH_POLICY. */
og_status og_authz_decide(og_auth_mode mode, const og_authz *policy, const og_authz_request *req,
                          og_authz_decision *out);

/* The policy engine of src/policy/ behind this interface: `graph_bundle` (may be NULL)
 * decides every per-graph action on every served graph, `server_bundle` (may be NULL)
 * decides graph_list.  The bundles stay owned by the caller and must outlive the og_authz. */
struct og_policy;
og_status og_authz_from_policy(og_authz **out, const struct og_policy *graph_bundle,
                               const struct og_policy *server_bundle);
/* Cluster serving: each graph has its own bundle (or none).  `graph_ids[i]` is governed by
 * `graph_bundles[i]`; a graph without a bundle falls back to the runtime state's default-deny
 * semantics (authenticated `read` only; a denied invoke_query is masked as not found), as in
 * the reference.  `server_bundle` (may be NULL) decides graph_list.  Ids and bundles stay
 * owned by the caller and must outlive the og_authz. */
og_status og_authz_from_graph_policies(og_authz **out, size_t n, const char *const *graph_ids,
                                       const struct og_policy *const *graph_bundles,
                                       const struct og_policy *server_bundle);
void og_authz_free(og_authz *a);

#endif
