/*
 * eval.c — og_policy_decide: Cedar's answer for the compiled bundle, computed directly.
 *
 * The compiled policy set (cedar.c) holds only `permit` policies of the form
 *     permit(principal in Group::"g", action == Action::"a", resource == <the resource>)
 *     when { <scope condition> };
 * (and `forbid` of the same form for `deny:` rules; a `queries:` list adds the condition
 * `context.has_query && (context.query == "q1" || ...)`), and the request's resource is
 * always the one the set was compiled for, so Cedar's evaluation reduces to: deny iff some
 * forbid matches (the reasons are the matching forbids), else allow iff some (rule, action)
 * has the actor in its group, names the action, and its condition holds over the request
 * context (the reasons are the matching permits); matched_rule_id is the smallest rule id
 * among the reasons.
 * An actor in no group is denied before evaluation (the reference's "unknown actor").
 */
#include <stdlib.h>
#include <string.h>

#include "policy/policy_internal.h"
#include "util/error.h"
#include "util/ident.h"

static int cmp_actor(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const pol_actor *)elem)->id);
}

static int cmp_branch(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

int og_policy_is_protected(const og_policy *p, const char *branch)
{
    if (!branch || !p->nprotected) return 0;
    if (bsearch(branch, p->protected_branches, p->nprotected, sizeof *p->protected_branches, cmp_branch)) return 1;
    /* a name that reads as a protected one is protected (issue: `Main`, `mаin`, `ｍａｉｎ` next
     * to a protected `main`): compare confusable skeletons (util/ident.h) */
    char sk[OG_IDENT_SKELETON_MAX];
    if (og_ident_skeleton(branch, sk, sizeof sk) != OG_OK) {
        og_error_clear();
        return 1; /* not comparable (not UTF-8, too long): fail closed, as if protected */
    }
    for (size_t i = 0; i < p->nprotected; i++)
        if (p->protected_skeletons[i] && !strcmp(p->protected_skeletons[i], sk)) return 1;
    return 0;
}

const char *og_policy_protected_at(const og_policy *p, size_t i)
{
    return p && i < p->nprotected ? p->protected_branches[i] : NULL;
}

int og_policy_in_actor_namespace(const char *actor, const char *branch)
{
    if (!actor || !branch || !*actor) return 0;
    const char *slash = strchr(branch, '/');
    size_t n = strlen(actor);
    return slash && (size_t)(slash - branch) == n && !memcmp(branch, actor, n);
}

/* What the scopes of one branch (or target branch) of a request see. */
typedef struct scope_facts {
    int has, prot, owned, ns;
} scope_facts;

static scope_facts facts(const og_policy *p, const char *actor, const char *branch, const char *creator)
{
    scope_facts f = {branch != NULL, 0, 0, 0};
    if (!branch) return f;
    f.prot = og_policy_is_protected(p, branch);
    f.owned = creator && *creator && !strcmp(creator, actor);
    f.ns = og_policy_in_actor_namespace(actor, branch);
    return f;
}

/* The `when` condition of one scope (cedar.c writes the same condition as text). */
static int scope_holds(int scope, const scope_facts *f)
{
    switch (scope) {
    case POL_SCOPE_PROTECTED: return f->has && f->prot;
    case POL_SCOPE_UNPROTECTED: return f->has && !f->prot;
    case POL_SCOPE_OWNED: return f->has && f->owned;
    case POL_SCOPE_ACTOR_NAMESPACE: return f->has && f->ns;
    default: return 1; /* none, any */
    }
}

/* The decision message, built by concatenation (printf would cost more than the decision):
 * parts[] are NULL-terminated; the result is truncated with "..." to fit, always terminated. */
static void message(og_policy_decision *d, const char *const *parts)
{
    size_t cap = sizeof d->message, pos = 0;
    for (; *parts; parts++) {
        size_t n = strlen(*parts);
        if (pos + n >= cap) {
            memcpy(d->message + pos, *parts, cap - 1 - pos);
            memcpy(d->message + cap - 4, "...", 4);
            return;
        }
        memcpy(d->message + pos, *parts, n);
        pos += n;
    }
    d->message[pos] = '\0';
}

og_status og_policy_decide(const og_policy *p, const og_policy_request *req, og_policy_decision *out)
{
    out->allowed = out->unknown_actor = out->mask_as_not_found = out->forbidden = 0;
    out->matched_rule_id = NULL;
    if (!p || !req || !req->actor || (unsigned)req->action >= OG_POLICY_ACTION_COUNT) {
        message(out, (const char *const[]){"internal policy error: malformed policy request", NULL});
        return og_err(OG_ERR_INVALID, "internal policy error: malformed policy request");
    }
    const char *action = og_policy_action_name(req->action);
    out->mask_as_not_found = req->action == OG_POLICY_INVOKE_QUERY;
    const pol_actor *actor =
        p->nactors ? bsearch(req->actor, p->actors, p->nactors, sizeof *p->actors, cmp_actor) : NULL;
    if (!actor) {
        out->unknown_actor = 1;
        message(out, (const char *const[]){"policy denied action '", action, "' for unknown actor '", req->actor, "'",
                                           NULL});
        return OG_OK;
    }
    scope_facts bf = facts(p, req->actor, req->branch, req->branch_creator);
    scope_facts tf = facts(p, req->actor, req->target_branch, req->target_branch_creator);
    const char *best = NULL, *forbid = NULL;
    for (size_t i = 0; i < p->nrules; i++) {
        const pol_rule *r = &p->rules[i];
        if (!(r->actions & (1u << req->action))) continue;
        if (!(actor->groups[r->group_idx / 8] & (1u << (r->group_idx % 8)))) continue;
        if (!scope_holds(r->branch_scope, &bf)) continue;
        if (!scope_holds(r->target_scope, &tf)) continue;
        if (r->nqueries) {
            size_t q = 0;
            while (req->query && q < r->nqueries && strcmp(r->queries[q], req->query)) q++;
            if (!req->query || q == r->nqueries) continue;
        }
        const char **slot = r->deny ? &forbid : &best;
        if (!*slot || strcmp(r->id, *slot) < 0) *slot = r->id;
    }
    if (forbid) best = NULL; /* a matching deny wins, as Cedar's forbid */
    if (best) {
        out->allowed = 1;
        out->mask_as_not_found = 0;
        out->matched_rule_id = best;
        message(out, (const char *const[]){"policy allowed action '", action, "' for actor '", req->actor, "'", NULL});
        return OG_OK;
    }
    const char *parts[24];
    size_t k = 0;
    parts[k++] = "policy denied action '";
    parts[k++] = action;
    parts[k++] = "'";
    if (req->query) {
        parts[k++] = " on query '";
        parts[k++] = req->query;
        parts[k++] = "'";
    }
    if (req->branch) {
        parts[k++] = " on branch '";
        parts[k++] = req->branch;
        parts[k++] = "'";
    }
    if (req->target_branch) {
        parts[k++] = " targeting branch '";
        parts[k++] = req->target_branch;
        parts[k++] = "'";
    }
    parts[k++] = " for actor '";
    parts[k++] = req->actor;
    parts[k++] = "'";
    if (forbid) {
        out->forbidden = 1;
        out->matched_rule_id = forbid;
        parts[k++] = " (denied by rule '";
        parts[k++] = forbid;
        parts[k++] = "')";
    }
    parts[k] = NULL;
    message(out, parts);
    return OG_OK;
}

og_status og_policy_decide_unbound(int authenticated, const og_policy_request *req, og_policy_decision *out)
{
    out->allowed = out->unknown_actor = out->mask_as_not_found = 0;
    out->matched_rule_id = NULL;
    if (!req || (unsigned)req->action >= OG_POLICY_ACTION_COUNT || (authenticated && !req->actor)) {
        message(out, (const char *const[]){"internal policy error: malformed policy request", NULL});
        return og_err(OG_ERR_INVALID, "internal policy error: malformed policy request");
    }
    const char *action = og_policy_action_name(req->action);
    if (og_policy_action_is_server(req->action)) {
        message(out, (const char *const[]){"policy denied action '", action,
                                           "': server-scoped actions need a cluster policy bundle that allows "
                                           "them (the graph registry is closed by default, also without "
                                           "authentication)", NULL});
        return OG_OK;
    }
    if (authenticated && req->action != OG_POLICY_READ) {
        out->mask_as_not_found = req->action == OG_POLICY_INVOKE_QUERY;
        message(out, (const char *const[]){"policy denied action '", action, "' for actor '", req->actor,
                                           "': no policy bundle governs this graph, so authenticated requests "
                                           "may only read (default deny)", NULL});
        return OG_OK;
    }
    out->allowed = 1;
    message(out, (const char *const[]){"allowed action '", action,
                                       authenticated ? "' (read is allowed without a policy bundle)"
                                                     : "' (open mode: unauthenticated, no policy bundle)", NULL});
    return OG_OK;
}
