/*
 * mcp_policy.c — an og_mcp_authorize_fn backed by a graph's policy bundle (policy/policy.h),
 * so a surface that knows the caller (the HTTP server's bearer token, `omnigraph mcp --as A
 * --policy`) shows each actor exactly the tools it may call.
 *
 * Why listing needs more than one question: tools/list has no branch, and a tool is shown when
 * the actor may call it on *some* branch.  Branch scopes in a bundle are only "any",
 * "protected" (the bundle's protected_branches, og_policy_protected_at) or "unprotected", so
 * asking for one protected branch and for one name that is protected nowhere covers every way
 * a rule can match — and, for the `owned` and `actor_namespace` scopes, one name in the
 * actor's namespace that the actor created.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"
#include "policy/policy.h"
#include "util/error.h"

/* A branch name no bundle lists as protected (names cannot contain ':' or spaces in a bundle
 * we wrote; the decision only compares names). */
#define UNPROTECTED_PROBE "mcp list probe: unprotected"

struct og_mcp_policy {
    og_policy *policy;
    char *graph_id;
    og_db *db; /* branch creators for `owned` scopes; NULL = none known */
};

void og_mcp_policy_set_db(og_mcp_policy *p, og_db *db)
{
    if (p) p->db = db;
}

/* Who created `branch` ("" when unknown or on any failure: then it is not owned). */
static void creator_of(og_mcp_policy *p, const char *branch, char *out, size_t cap)
{
    out[0] = 0;
    if (!branch || !p->db) return;
    if (og_db_branch_creator(p->db, branch, out, cap) != OG_OK) {
        out[0] = 0;
        og_error_clear();
    }
}

og_status og_mcp_policy_new(og_mcp_policy **out, const char *bundle, size_t len, const char *name, const char *graph_id)
{
    *out = NULL;
    og_mcp_policy *p = calloc(1, sizeof *p);
    if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = og_policy_parse(bundle, len, name ? name : "policy.yaml", OG_POLICY_KIND_GRAPH, &p->policy);
    if (st != OG_OK) {
        free(p);
        return st;
    }
    p->graph_id = strdup(graph_id ? graph_id : "");
    *out = p;
    return OG_OK;
}

void og_mcp_policy_free(og_mcp_policy *p)
{
    if (!p) return;
    og_policy_free(p->policy);
    free(p->graph_id);
    free(p);
}

/* One decision; bc / tc are the creators of branch / target (NULL: look them up when the
 * bundle has `owned` scopes). */
static int decide(og_mcp_policy *p, const char *actor, og_policy_action a, const char *branch, const char *target,
                  const char *bc, const char *tc, const char *query, char *why, size_t cap)
{
    og_policy_request rq = {.actor = actor, .action = a, .graph_id = p->graph_id, .branch = branch, .target_branch = target,
                            .query = query, .branch_creator = bc, .target_branch_creator = tc};
    char bbuf[OG_MCP_ACTOR_MAX], tbuf[OG_MCP_ACTOR_MAX];
    if (og_policy_has_owner_rules(p->policy)) {
        if (!bc) creator_of(p, branch, bbuf, sizeof bbuf), rq.branch_creator = bbuf;
        if (!tc) creator_of(p, target, tbuf, sizeof tbuf), rq.target_branch_creator = tbuf;
    }
    og_policy_decision d;
    if (og_policy_decide(p->policy, &rq, &d) != OG_OK) {
        snprintf(why, cap, "internal policy error: %s", og_error_message());
        return 0;
    }
    if (!d.allowed) snprintf(why, cap, "%s", d.message);
    return d.allowed;
}

og_mcp_verdict og_mcp_policy_authorize(void *ctx, const char *actor, const char *action, const char *branch,
                                       const char *target, const char *query, int listing, char *why, size_t cap)
{
    og_mcp_policy *p = ctx;
    og_policy_action a;
    if (og_policy_action_parse(action, &a) != OG_OK) {
        snprintf(why, cap, "unknown action '%s'", action);
        return OG_MCP_DENY;
    }
    int masked = a == OG_POLICY_INVOKE_QUERY;
    if (!actor) {
        snprintf(why, cap, "no actor: a policy is installed, so anonymous calls are denied");
        return masked ? OG_MCP_MASK : OG_MCP_DENY;
    }
    if (!listing || (branch && target))
        return decide(p, actor, a, branch, target, NULL, NULL, query, why, cap) ? OG_MCP_ALLOW
               : masked                                                           ? OG_MCP_MASK
                                                                                  : OG_MCP_DENY;
    /* listing: allowed on some branch?  A scope only tells protected from unprotected names,
     * so one protected name (when the bundle has any) and one unprotected name cover every way
     * a rule can match, for the branch and the target alike. */
    char own[OG_MCP_ACTOR_MAX + 32];
    snprintf(own, sizeof own, "%s/mcp list probe", actor);
    const char *probes[3], *creators[3];
    size_t n = 0;
    if (og_policy_protected_at(p->policy, 0)) creators[n] = "", probes[n++] = og_policy_protected_at(p->policy, 0);
    if (!og_policy_is_protected(p->policy, UNPROTECTED_PROBE)) creators[n] = "", probes[n++] = UNPROTECTED_PROBE;
    creators[n] = actor, probes[n++] = own; /* a branch of the actor's own: `owned`, `actor_namespace` */
    int scoped_branch = a == OG_POLICY_READ || a == OG_POLICY_EXPORT || a == OG_POLICY_CHANGE ||
                        a == OG_POLICY_BRANCH_CREATE || a == OG_POLICY_BRANCH_MERGE;
    int scoped_target = a == OG_POLICY_SCHEMA_APPLY || a == OG_POLICY_BRANCH_DELETE || a == OG_POLICY_BRANCH_CREATE ||
                        a == OG_POLICY_BRANCH_MERGE;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            const char *b = branch ? branch : scoped_branch ? probes[i] : NULL;
            const char *t = target ? target : scoped_target ? probes[k] : NULL;
            const char *bc = branch ? NULL : creators[i], *tc = target ? NULL : creators[k];
            if (decide(p, actor, a, b, t, bc, tc, query, why, cap)) return OG_MCP_ALLOW;
        }
    return masked ? OG_MCP_MASK : OG_MCP_DENY;
}
