/*
 * mcp_policy.c — an og_mcp_authorize_fn backed by a graph's policy bundle (policy/policy.h),
 * so a surface that knows the caller (the HTTP server's bearer token, `omnigraph mcp --as A
 * --policy`) shows each actor exactly the tools it may call.
 *
 * Why listing needs more than one question: tools/list has no branch, and a tool is shown when
 * the actor may call it on *some* branch.  Branch scopes in a bundle are only "any",
 * "protected" (the bundle's protected_branches) or "unprotected", so asking for each protected
 * branch and for one name that is protected nowhere covers every way a rule can match.
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
    char **protected_branches;
    size_t nprotected;
};

/* The bundle's protected_branches, read with a tiny scan of the YAML (the policy engine keeps
 * them private): a flow list `protected_branches: [a, b]` or a block list of `- a` lines. */
static void scan_protected(og_mcp_policy *p, const char *text, size_t len)
{
    const char *k = strstr(text, "protected_branches:");
    if (!k || (size_t)(k - text) >= len) return;
    const char *s = k + strlen("protected_branches:");
    while (*s == ' ' || *s == '\t') s++;
    char buf[4096];
    size_t n = 0;
    if (*s == '[') {
        s++;
        while (*s && *s != ']' && n < sizeof buf - 1) buf[n++] = *s++;
    } else {
        /* block list */
        while (*s && n < sizeof buf - 1) {
            while (*s == '\n' || *s == ' ' || *s == '\t') s++;
            if (*s != '-') break;
            s++;
            while (*s && *s != '\n' && n < sizeof buf - 2) buf[n++] = *s++;
            buf[n++] = ',';
        }
    }
    buf[n] = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ' || *t == '"' || *t == '\'') t++;
        size_t l = strlen(t);
        while (l && (t[l - 1] == ' ' || t[l - 1] == '"' || t[l - 1] == '\'' || t[l - 1] == '\r')) t[--l] = 0;
        if (!l) continue;
        char **np = realloc(p->protected_branches, (p->nprotected + 1) * sizeof *np);
        if (!np) return;
        p->protected_branches = np;
        p->protected_branches[p->nprotected++] = strdup(t);
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
    scan_protected(p, bundle, len);
    *out = p;
    return OG_OK;
}

void og_mcp_policy_free(og_mcp_policy *p)
{
    if (!p) return;
    og_policy_free(p->policy);
    for (size_t i = 0; i < p->nprotected; i++) free(p->protected_branches[i]);
    free(p->protected_branches);
    free(p->graph_id);
    free(p);
}

static int decide(og_mcp_policy *p, const char *actor, og_policy_action a, const char *branch, const char *target,
                  char *why, size_t cap)
{
    og_policy_request rq = {.actor = actor, .action = a, .graph_id = p->graph_id, .branch = branch, .target_branch = target};
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
    (void)query;
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
    if (!listing || (branch && target)) return decide(p, actor, a, branch, target, why, cap) ? OG_MCP_ALLOW
                                                                                          : masked ? OG_MCP_MASK : OG_MCP_DENY;
    /* listing: allowed on some branch?  Try every protected branch and one unprotected name in
     * the free slot(s). */
    size_t n = p->nprotected + 2;
    for (size_t i = 0; i < n; i++) {
        const char *probe = i < p->nprotected ? p->protected_branches[i] : i == p->nprotected ? "main" : UNPROTECTED_PROBE;
        const char *b = branch, *t = target;
        int scoped_branch = a == OG_POLICY_READ || a == OG_POLICY_EXPORT || a == OG_POLICY_CHANGE ||
                            a == OG_POLICY_BRANCH_CREATE || a == OG_POLICY_BRANCH_MERGE;
        int scoped_target = a == OG_POLICY_SCHEMA_APPLY || a == OG_POLICY_BRANCH_DELETE || a == OG_POLICY_BRANCH_CREATE ||
                            a == OG_POLICY_BRANCH_MERGE;
        if (!b && scoped_branch) b = probe;
        if (!t && scoped_target) t = probe;
        if (decide(p, actor, a, b, t, why, cap)) return OG_MCP_ALLOW;
        /* two-scope actions: also the unprotected target from a protected source and back */
        if (a == OG_POLICY_BRANCH_CREATE || a == OG_POLICY_BRANCH_MERGE) {
            if (!branch && decide(p, actor, a, probe, UNPROTECTED_PROBE, why, cap)) return OG_MCP_ALLOW;
            if (!target && decide(p, actor, a, UNPROTECTED_PROBE, probe, why, cap)) return OG_MCP_ALLOW;
        }
    }
    return masked ? OG_MCP_MASK : OG_MCP_DENY;
}
