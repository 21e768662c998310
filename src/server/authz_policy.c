/*
 * authz_policy.c — the server's decision interface (authz.h) over the policy engine
 * (src/policy/policy.h): a graph bundle for the per-graph actions, a server bundle for
 * graph_list (reference-surfaces.md §3–4).  A question no bundle governs is denied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "server/authz.h"

typedef struct bundles {
    const og_policy *graph, *server;
    /* cluster serving: one bundle per graph id (per_graph set; graph unused) */
    int per_graph;
    size_t n;
    const char *const *ids;
    const og_policy *const *graphs;
} bundles;

static og_status decide(void *ctx, const og_authz_request *q, og_authz_decision *out)
{
    const bundles *b = ctx;
    static const og_policy_action map[] = {
        [OG_ACTION_READ] = OG_POLICY_READ,
        [OG_ACTION_EXPORT] = OG_POLICY_EXPORT,
        [OG_ACTION_CHANGE] = OG_POLICY_CHANGE,
        [OG_ACTION_SCHEMA_APPLY] = OG_POLICY_SCHEMA_APPLY,
        [OG_ACTION_BRANCH_CREATE] = OG_POLICY_BRANCH_CREATE,
        [OG_ACTION_BRANCH_DELETE] = OG_POLICY_BRANCH_DELETE,
        [OG_ACTION_BRANCH_MERGE] = OG_POLICY_BRANCH_MERGE,
        [OG_ACTION_ADMIN] = OG_POLICY_ADMIN,
        [OG_ACTION_INVOKE_QUERY] = OG_POLICY_INVOKE_QUERY,
        [OG_ACTION_GRAPH_LIST] = OG_POLICY_GRAPH_LIST,
    };
    memset(out, 0, sizeof *out);
    if ((unsigned)q->action >= sizeof map / sizeof *map) return OG_ERR_INVALID;
    const og_policy *p = q->action == OG_ACTION_GRAPH_LIST ? b->server : b->graph;
    og_policy_request pr = {q->actor ? q->actor : "", map[q->action], q->graph, q->branch, q->target_branch,
                            q->query, q->branch_creator, q->target_branch_creator};
    og_policy_decision d;
    if (b->per_graph && q->action != OG_ACTION_GRAPH_LIST) {
        p = NULL;
        for (size_t i = 0; q->graph && i < b->n; i++)
            if (!strcmp(b->ids[i], q->graph)) p = b->graphs[i];
        if (!p) { /* no bundle bound to this graph: tokens allow read only */
            og_status st = og_policy_decide_unbound(1, &pr, &d);
            if (st) return st;
            out->allowed = d.allowed;
            out->mask_as_not_found = d.mask_as_not_found;
            snprintf(out->message, sizeof out->message, "%s", d.message);
            return OG_OK;
        }
    }
    if (!p) {
        snprintf(out->message, sizeof out->message, "no policy governs action '%s' for actor '%s'",
                 og_action_name(q->action), q->actor ? q->actor : "");
        return OG_OK;
    }
    og_status st = og_policy_decide(p, &pr, &d);
    if (st) return st;
    out->allowed = d.allowed;
    out->mask_as_not_found = d.mask_as_not_found;
    snprintf(out->matched_rule, sizeof out->matched_rule, "%s", d.matched_rule_id ? d.matched_rule_id : "");
    snprintf(out->message, sizeof out->message, "%s", d.message);
    return OG_OK;
}

static const og_policy *graph_bundle(const bundles *b, const char *graph)
{
    if (!b->per_graph) return b->graph;
    for (size_t i = 0; graph && i < b->n; i++)
        if (!strcmp(b->ids[i], graph)) return b->graphs[i];
    return NULL;
}

static const char *protected_branch(void *ctx, const char *graph, size_t i)
{
    return og_policy_protected_at(graph_bundle(ctx, graph), i);
}

static int query_rules(void *ctx, const char *graph)
{
    return og_policy_has_query_rules(graph_bundle(ctx, graph));
}

static int owner_rules(void *ctx, const char *graph)
{
    return og_policy_has_owner_rules(graph_bundle(ctx, graph));
}

og_status og_authz_from_policy(og_authz **out, const og_policy *graph_bundle, const og_policy *server_bundle)
{
    *out = NULL;
    og_authz *a = calloc(1, sizeof *a);
    bundles *b = calloc(1, sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return OG_ERR_NOMEM;
    }
    b->graph = graph_bundle;
    b->server = server_bundle;
    a->decide = decide;
    a->protected_branch = protected_branch;
    a->query_rules = query_rules;
    a->owner_rules = owner_rules;
    a->ctx = b;
    *out = a;
    return OG_OK;
}

og_status og_authz_from_graph_policies(og_authz **out, size_t n, const char *const *graph_ids,
                                       const og_policy *const *graph_bundles, const og_policy *server_bundle)
{
    og_status st = og_authz_from_policy(out, NULL, server_bundle);
    if (st) return st;
    bundles *b = (*out)->ctx;
    b->per_graph = 1;
    b->n = n;
    b->ids = graph_ids;
    b->graphs = graph_bundles;
    return OG_OK;
}

void og_authz_free(og_authz *a)
{
    if (!a) return;
    free(a->ctx);
    free(a);
}
