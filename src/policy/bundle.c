/*
 * bundle.c — reading a YAML policy bundle: the shape (fields, types, action and scope names),
 * then every validation rule of reference-surfaces.md §4 in the reference's order and wording,
 * then the compiled form og_policy_decide() evaluates (sorted groups, actors with a group
 * bitmap, sorted protected branches, rules in file order).
 */
#include <stdlib.h>
#include <string.h>

#include "policy/policy_internal.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/ident.h"

static const char *const action_names[OG_POLICY_ACTION_COUNT] = {
    "read", "export", "change", "schema_apply", "branch_create", "branch_delete",
    "branch_merge", "admin", "invoke_query", "graph_list",
};

const char *og_policy_action_name(og_policy_action a)
{
    return (unsigned)a < OG_POLICY_ACTION_COUNT ? action_names[a] : "?";
}

og_status og_policy_action_parse(const char *name, og_policy_action *out)
{
    for (int i = 0; i < OG_POLICY_ACTION_COUNT; i++)
        if (!strcmp(name, action_names[i])) {
            *out = (og_policy_action)i;
            return OG_OK;
        }
    return og_err(OG_ERR_INVALID, "unknown policy action '%s'", name);
}

int og_policy_action_is_server(og_policy_action a) { return a == OG_POLICY_GRAPH_LIST; }

static int uses_branch_scope(og_policy_action a)
{
    return a == OG_POLICY_READ || a == OG_POLICY_EXPORT || a == OG_POLICY_CHANGE;
}

static int uses_target_branch_scope(og_policy_action a)
{
    return a == OG_POLICY_BRANCH_CREATE || a == OG_POLICY_SCHEMA_APPLY || a == OG_POLICY_BRANCH_DELETE ||
           a == OG_POLICY_BRANCH_MERGE;
}

/* ---- the bundle as written, before validation ---- */
typedef struct raw_group {
    const char *name;
    size_t line;
    const char **members;
    size_t *member_lines;
    size_t nmembers;
} raw_group;

typedef struct raw_rule {
    const char *id;
    size_t line;
    const char *group;
    og_policy_action actions[64];
    size_t nactions;          /* as written (may repeat) */
    int branch_scope, target_scope;
    int deny;                 /* written as `deny:` instead of `allow:` */
    int has_queries;          /* `queries:` given (then nqueries may still be 0: refused) */
    const char **queries;
    size_t nqueries;
} raw_rule;

typedef struct raw_bundle {
    long version;
    size_t version_line;
    raw_group *groups;
    size_t ngroups;
    const char **prot;
    size_t *prot_lines;
    size_t nprot;
    raw_rule *rules;
    size_t nrules;
} raw_bundle;

static void raw_free(raw_bundle *r)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        free(r->groups[i].members);
        free(r->groups[i].member_lines);
    }
    free(r->groups);
    free(r->prot);
    free(r->prot_lines);
    for (size_t i = 0; i < r->nrules; i++) free(r->rules[i].queries);
    free(r->rules);
}

static int cmp_group(const void *a, const void *b)
{
    return strcmp(((const raw_group *)a)->name, ((const raw_group *)b)->name);
}

static og_status parse_scope(pol_yaml *y, yaml_node_t *n, const char *field, int *out)
{
    if (!n || pol_is_null(n)) {
        *out = POL_SCOPE_NONE;
        return OG_OK;
    }
    const char *s;
    OG_TRY(pol_scalar(y, n, field, &s));
    if (!strcmp(s, "any")) *out = POL_SCOPE_ANY;
    else if (!strcmp(s, "protected")) *out = POL_SCOPE_PROTECTED;
    else if (!strcmp(s, "unprotected")) *out = POL_SCOPE_UNPROTECTED;
    else if (!strcmp(s, "owned")) *out = POL_SCOPE_OWNED;
    else if (!strcmp(s, "actor_namespace")) *out = POL_SCOPE_ACTOR_NAMESPACE;
    else
        return pol_fail(y, OG_ERR_PARSE, pol_line(n),
                        "unknown %s '%s' (expected any, protected, unprotected, owned or actor_namespace)", field, s);
    return OG_OK;
}

static const char *const top_keys[] = {"version", "groups", "protected_branches", "rules", NULL};
static const char *const rule_keys[] = {"id", "allow", "deny", NULL};
static const char *const allow_keys[] = {"actors", "actions", "branch_scope", "target_branch_scope", "queries", NULL};
static const char *const actor_keys[] = {"group", NULL};

static og_status parse_rule(pol_yaml *y, yaml_node_t *n, raw_rule *r)
{
    memset(r, 0, sizeof *r);
    r->line = pol_line(n);
    if (n->type != YAML_MAPPING_NODE)
        return pol_fail(y, OG_ERR_PARSE, r->line, "each rule must be a mapping with 'id' and 'allow'");
    OG_TRY(pol_check_keys(y, n, "a rule", rule_keys));
    yaml_node_t *id = pol_get(y, n, "id"), *allow = pol_get(y, n, "allow"), *deny = pol_get(y, n, "deny");
    if (!id) return pol_fail(y, OG_ERR_PARSE, r->line, "missing field 'id' in a rule");
    if (allow && deny) return pol_fail(y, OG_ERR_PARSE, r->line, "a rule has either 'allow' or 'deny', not both");
    if (!allow && !deny) return pol_fail(y, OG_ERR_PARSE, r->line, "missing field 'allow' in a rule");
    OG_TRY(pol_scalar(y, id, "a rule's 'id'", &r->id));
    /* `deny:` (an OmniGraph-C extension) has the shape of `allow:` and compiles to a forbid */
    r->deny = deny != NULL;
    const char *body = deny ? "'deny'" : "'allow'";
    if (deny) allow = deny;
    if (allow->type != YAML_MAPPING_NODE)
        return pol_fail(y, OG_ERR_PARSE, pol_line(allow), "%s must be a mapping", body);
    OG_TRY(pol_check_keys(y, allow, body, allow_keys));
    yaml_node_t *actors = pol_get(y, allow, "actors"), *actions = pol_get(y, allow, "actions");
    if (!actors) return pol_fail(y, OG_ERR_PARSE, pol_line(allow), "missing field 'actors' in %s", body);
    if (!actions) return pol_fail(y, OG_ERR_PARSE, pol_line(allow), "missing field 'actions' in %s", body);
    if (actors->type != YAML_MAPPING_NODE)
        return pol_fail(y, OG_ERR_PARSE, pol_line(actors), "'actors' must be a mapping { group: NAME }");
    OG_TRY(pol_check_keys(y, actors, "'actors'", actor_keys));
    yaml_node_t *group = pol_get(y, actors, "group");
    if (!group) return pol_fail(y, OG_ERR_PARSE, pol_line(actors), "missing field 'group' in 'actors'");
    OG_TRY(pol_scalar(y, group, "'group'", &r->group));
    if (actions->type != YAML_SEQUENCE_NODE)
        return pol_fail(y, OG_ERR_PARSE, pol_line(actions), "'actions' must be a list of action names");
    for (yaml_node_item_t *it = actions->data.sequence.items.start; it < actions->data.sequence.items.top; it++) {
        yaml_node_t *a = pol_yaml_node(y, *it);
        const char *s;
        OG_TRY(pol_scalar(y, a, "an action", &s));
        og_policy_action act = (og_policy_action)0; /* gcc -O2 cannot see that parse sets it */
        if (og_policy_action_parse(s, &act) != OG_OK)
            return pol_fail(y, OG_ERR_PARSE, pol_line(a), "unknown policy action '%s'", s);
        if (r->nactions == sizeof r->actions / sizeof r->actions[0])
            return pol_fail(y, OG_ERR_PARSE, pol_line(a), "too many actions in one rule");
        r->actions[r->nactions++] = act;
    }
    OG_TRY(parse_scope(y, pol_get(y, allow, "branch_scope"), "branch_scope", &r->branch_scope));
    OG_TRY(parse_scope(y, pol_get(y, allow, "target_branch_scope"), "target_branch_scope", &r->target_scope));
    yaml_node_t *qs = pol_get(y, allow, "queries");
    if (qs && !pol_is_null(qs)) {
        if (qs->type != YAML_SEQUENCE_NODE)
            return pol_fail(y, OG_ERR_PARSE, pol_line(qs), "'queries' must be a list of stored query names");
        size_t nq = (size_t)(qs->data.sequence.items.top - qs->data.sequence.items.start);
        r->has_queries = 1;
        r->queries = calloc(nq ? nq : 1, sizeof *r->queries);
        if (!r->queries) return og_err(OG_ERR_NOMEM, "out of memory");
        for (yaml_node_item_t *it = qs->data.sequence.items.start; it < qs->data.sequence.items.top; it++)
            OG_TRY(pol_scalar(y, pol_yaml_node(y, *it), "a stored query name", &r->queries[r->nqueries++]));
    } else if (qs) {
        r->has_queries = 1; /* `queries:` with nothing: refused by validate() */
    }
    return OG_OK;
}

static og_status parse_raw(pol_yaml *y, raw_bundle *r)
{
    yaml_node_t *root = pol_yaml_root(y);
    if (root->type != YAML_MAPPING_NODE)
        return pol_fail(y, OG_ERR_PARSE, pol_line(root), "a policy bundle must be a YAML mapping");
    OG_TRY(pol_check_keys(y, root, "the policy bundle", top_keys));

    yaml_node_t *v = pol_get(y, root, "version");
    if (!v) return pol_fail(y, OG_ERR_PARSE, pol_line(root), "missing field 'version'");
    r->version_line = pol_line(v);
    {
        const char *s = v->type == YAML_SCALAR_NODE && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                            ? (const char *)v->data.scalar.value : NULL;
        size_t len = s ? strlen(s) : 0;
        int ok = s && len > 0 && len <= 9 && strspn(s, "0123456789") == len;
        if (!ok) return pol_fail(y, OG_ERR_PARSE, pol_line(v), "'version' must be a non-negative integer");
        r->version = strtol(s, NULL, 10);
    }

    yaml_node_t *g = pol_get(y, root, "groups");
    if (g && !pol_is_null(g)) {
        if (g->type != YAML_MAPPING_NODE)
            return pol_fail(y, OG_ERR_PARSE, pol_line(g), "'groups' must be a mapping of group name to a list of actor ids");
        size_t n = (size_t)(g->data.mapping.pairs.top - g->data.mapping.pairs.start);
        r->groups = calloc(n ? n : 1, sizeof *r->groups);
        if (!r->groups) return og_err(OG_ERR_NOMEM, "out of memory");
        for (yaml_node_pair_t *p = g->data.mapping.pairs.start; p < g->data.mapping.pairs.top; p++) {
            yaml_node_t *k = pol_yaml_node(y, p->key), *m = pol_yaml_node(y, p->value);
            raw_group *rg = &r->groups[r->ngroups++];
            OG_TRY(pol_scalar(y, k, "a group name", &rg->name));
            rg->line = pol_line(k);
            if (m->type != YAML_SEQUENCE_NODE)
                return pol_fail(y, OG_ERR_PARSE, pol_line(m), "group '%s' must be a list of actor ids", rg->name);
            size_t nm = (size_t)(m->data.sequence.items.top - m->data.sequence.items.start);
            rg->members = calloc(nm ? nm : 1, sizeof *rg->members);
            rg->member_lines = calloc(nm ? nm : 1, sizeof *rg->member_lines);
            if (!rg->members || !rg->member_lines) return og_err(OG_ERR_NOMEM, "out of memory");
            for (yaml_node_item_t *it = m->data.sequence.items.start; it < m->data.sequence.items.top; it++) {
                yaml_node_t *a = pol_yaml_node(y, *it);
                OG_TRY(pol_scalar(y, a, "an actor id", &rg->members[rg->nmembers]));
                rg->member_lines[rg->nmembers++] = pol_line(a);
            }
        }
        /* Group names are a map's keys: sorted (the reference iterates them in order), distinct. */
        qsort(r->groups, r->ngroups, sizeof *r->groups, cmp_group);
        for (size_t i = 1; i < r->ngroups; i++)
            if (!strcmp(r->groups[i].name, r->groups[i - 1].name)) {
                size_t line = r->groups[i].line > r->groups[i - 1].line ? r->groups[i].line : r->groups[i - 1].line;
                return pol_fail(y, OG_ERR_PARSE, line, "duplicate group '%s'", r->groups[i].name);
            }
    }

    yaml_node_t *pb = pol_get(y, root, "protected_branches");
    if (pb && !pol_is_null(pb)) {
        if (pb->type != YAML_SEQUENCE_NODE)
            return pol_fail(y, OG_ERR_PARSE, pol_line(pb), "'protected_branches' must be a list of branch names");
        size_t n = (size_t)(pb->data.sequence.items.top - pb->data.sequence.items.start);
        r->prot = calloc(n ? n : 1, sizeof *r->prot);
        r->prot_lines = calloc(n ? n : 1, sizeof *r->prot_lines);
        if (!r->prot || !r->prot_lines) return og_err(OG_ERR_NOMEM, "out of memory");
        for (yaml_node_item_t *it = pb->data.sequence.items.start; it < pb->data.sequence.items.top; it++) {
            yaml_node_t *b = pol_yaml_node(y, *it);
            OG_TRY(pol_scalar(y, b, "a protected branch name", &r->prot[r->nprot]));
            r->prot_lines[r->nprot++] = pol_line(b);
        }
    }

    yaml_node_t *rules = pol_get(y, root, "rules");
    if (rules && !pol_is_null(rules)) {
        if (rules->type != YAML_SEQUENCE_NODE)
            return pol_fail(y, OG_ERR_PARSE, pol_line(rules), "'rules' must be a list of rules");
        size_t n = (size_t)(rules->data.sequence.items.top - rules->data.sequence.items.start);
        r->rules = calloc(n ? n : 1, sizeof *r->rules);
        if (!r->rules) return og_err(OG_ERR_NOMEM, "out of memory");
        for (yaml_node_item_t *it = rules->data.sequence.items.start; it < rules->data.sequence.items.top; it++)
            OG_TRY(parse_rule(y, pol_yaml_node(y, *it), &r->rules[r->nrules++]));
    }
    return OG_OK;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static og_status validate(pol_yaml *y, const raw_bundle *r, og_policy_kind kind)
{
    if (r->version != 1) return pol_fail(y, OG_ERR_INVALID, r->version_line, "policy version must be 1");
    for (size_t i = 0; i < r->ngroups; i++) {
        const raw_group *g = &r->groups[i];
        if (pol_blank(g->name)) return pol_fail(y, OG_ERR_INVALID, g->line, "policy group names must not be blank");
        if (!g->nmembers) return pol_fail(y, OG_ERR_INVALID, g->line, "policy group '%s' must not be empty", g->name);
        for (size_t j = 0; j < g->nmembers; j++)
            if (pol_blank(g->members[j]))
                return pol_fail(y, OG_ERR_INVALID, g->member_lines[j], "policy group '%s' contains a blank actor id",
                                g->name);
    }
    for (size_t i = 0; i < r->nprot; i++)
        if (pol_blank(r->prot[i]))
            return pol_fail(y, OG_ERR_INVALID, r->prot_lines[i], "protected branch names must not be blank");

    const char **ids = calloc(r->nrules ? r->nrules : 1, sizeof *ids);
    if (!ids) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    for (size_t i = 0; i < r->nrules && st == OG_OK; i++) {
        const raw_rule *rule = &r->rules[i];
        const char *id = rule->id;
        size_t line = rule->line;
        if (pol_blank(id)) {
            st = pol_fail(y, OG_ERR_INVALID, line, "policy rule ids must not be blank");
            break;
        }
        /* Duplicate ids: a linear scan over the earlier ones (bundles hold tens of rules; the
         * fuzzer's bound keeps the worst case small). */
        for (size_t j = 0; j < i; j++)
            if (!strcmp(ids[j], id)) {
                st = pol_fail(y, OG_ERR_INVALID, line, "duplicate policy rule id '%s'", id);
                break;
            }
        if (st != OG_OK) break;
        ids[i] = id;
        if (pol_blank(rule->group)) {
            st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' must reference a non-blank group", id);
            break;
        }
        raw_group key = {.name = rule->group};
        if (!r->ngroups || !bsearch(&key, r->groups, r->ngroups, sizeof key, cmp_group)) {
            st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' references unknown group '%s'", id, rule->group);
            break;
        }
        if (!rule->nactions) {
            st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' must include at least one action", id);
            break;
        }
        if (rule->branch_scope != POL_SCOPE_NONE && rule->target_scope != POL_SCOPE_NONE) {
            st = pol_fail(y, OG_ERR_INVALID, line,
                          "policy rule '%s' may specify branch_scope or target_branch_scope, not both", id);
            break;
        }
        for (size_t a = 0; a < rule->nactions && st == OG_OK; a++)
            if (rule->branch_scope != POL_SCOPE_NONE && !uses_branch_scope(rule->actions[a]))
                st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' uses branch_scope with unsupported action '%s'",
                              id, action_names[rule->actions[a]]);
        for (size_t a = 0; a < rule->nactions && st == OG_OK; a++)
            if (rule->target_scope != POL_SCOPE_NONE && !uses_target_branch_scope(rule->actions[a]))
                st = pol_fail(y, OG_ERR_INVALID, line,
                              "policy rule '%s' uses target_branch_scope with unsupported action '%s'", id,
                              action_names[rule->actions[a]]);
        if (st != OG_OK) break;
        int server = 0, graph = 0;
        for (size_t a = 0; a < rule->nactions; a++) {
            if (og_policy_action_is_server(rule->actions[a])) server = 1;
            else graph = 1;
        }
        if (server && graph) {
            st = pol_fail(y, OG_ERR_INVALID, line,
                          "policy rule '%s' mixes the server-scoped action `graph_list` with per-graph actions; "
                          "split into separate rules", id);
            break;
        }
        if (server && (rule->branch_scope != POL_SCOPE_NONE || rule->target_scope != POL_SCOPE_NONE)) {
            st = pol_fail(y, OG_ERR_INVALID, line,
                          "policy rule '%s' uses branch_scope/target_branch_scope with a server-scoped action; "
                          "server-scoped actions have no branch context", id);
            break;
        }
        /* `queries:` (an OmniGraph-C extension) names individual stored queries: on invoke_query
         * it picks the callable ones; on read and change it makes a grant that holds only while
         * one of those stored queries runs, so an actor can be given "these stored queries and
         * nothing else" (no ad-hoc query names a stored query).  Other actions never run as part
         * of a stored query, so a list there could never match: refused. */
        for (size_t a = 0; a < rule->nactions && st == OG_OK && rule->has_queries; a++)
            if (rule->actions[a] != OG_POLICY_INVOKE_QUERY && rule->actions[a] != OG_POLICY_READ &&
                rule->actions[a] != OG_POLICY_CHANGE)
                st = pol_fail(y, OG_ERR_INVALID, line,
                              "policy rule '%s' uses queries with action '%s'; queries applies only to invoke_query, "
                              "read and change", id, action_names[rule->actions[a]]);
        if (st == OG_OK && rule->has_queries && !rule->nqueries)
            st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' must list at least one query", id);
        for (size_t q = 0; q < rule->nqueries && st == OG_OK; q++) {
            if (pol_blank(rule->queries[q])) {
                st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' lists a blank query name", id);
                break;
            }
            for (size_t k = 0; k < q; k++)
                if (!strcmp(rule->queries[q], rule->queries[k])) {
                    st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' lists query '%s' more than once", id,
                                  rule->queries[q]);
                    break;
                }
        }
        if (st != OG_OK) break;
        /* Not in the reference's list, but its compiler fails on it (two Cedar policies with the
         * id "<rule>:<action>"): say so plainly. */
        for (size_t a = 0; a < rule->nactions && st == OG_OK; a++)
            for (size_t b = 0; b < a; b++)
                if (rule->actions[a] == rule->actions[b]) {
                    st = pol_fail(y, OG_ERR_INVALID, line, "policy rule '%s' lists action '%s' more than once", id,
                                  action_names[rule->actions[a]]);
                    break;
                }
    }
    free(ids);
    if (st != OG_OK) return st;

    /* The bundle's kind (§4: a graph bundle may not contain graph_list, a server bundle only it). */
    for (size_t i = 0; i < r->nrules; i++)
        for (size_t a = 0; a < r->rules[i].nactions; a++) {
            og_policy_action act = r->rules[i].actions[a];
            int server = og_policy_action_is_server(act);
            if (server != (kind == OG_POLICY_KIND_SERVER))
                return pol_fail(y, OG_ERR_INVALID, r->rules[i].line,
                                "policy rule '%s' uses %s action '%s' in a %s policy file; move it to a %s",
                                r->rules[i].id, server ? "server-scoped" : "per-graph", action_names[act],
                                kind == OG_POLICY_KIND_SERVER ? "Server" : "Graph",
                                server ? "server policy file" : "per-graph policy file");
        }
    return OG_OK;
}

void og_policy_free(og_policy *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->ngroups; i++) free(p->groups[i]);
    free(p->groups);
    for (size_t i = 0; i < p->nactors; i++) {
        free(p->actors[i].id);
        free(p->actors[i].groups);
    }
    free(p->actors);
    for (size_t i = 0; i < p->nprotected; i++) {
        free(p->protected_branches[i]);
        if (p->protected_skeletons) free(p->protected_skeletons[i]);
    }
    free(p->protected_branches);
    free(p->protected_skeletons);
    for (size_t i = 0; i < p->nrules; i++) {
        free(p->rules[i].id);
        free(p->rules[i].group);
        for (size_t q = 0; q < p->rules[i].nqueries; q++) free(p->rules[i].queries[q]);
        free(p->rules[i].queries);
    }
    free(p->rules);
    free(p);
}

typedef struct member_ref {
    const char *actor;
    size_t group;
} member_ref;

static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const member_ref *)a)->actor, ((const member_ref *)b)->actor);
}

static og_status build(const raw_bundle *r, og_policy_kind kind, og_policy **out)
{
    og_policy *p = calloc(1, sizeof *p);
    if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
    p->kind = kind;
    size_t nmembers = 0;
    for (size_t i = 0; i < r->ngroups; i++) nmembers += r->groups[i].nmembers;
    member_ref *refs = calloc(nmembers ? nmembers : 1, sizeof *refs);
    p->groups = calloc(r->ngroups ? r->ngroups : 1, sizeof *p->groups);
    p->actors = calloc(nmembers ? nmembers : 1, sizeof *p->actors);
    p->protected_branches = calloc(r->nprot ? r->nprot : 1, sizeof *p->protected_branches);
    p->rules = calloc(r->nrules ? r->nrules : 1, sizeof *p->rules);
    if (!refs || !p->groups || !p->actors || !p->protected_branches || !p->rules) goto oom;

    size_t k = 0;
    for (size_t i = 0; i < r->ngroups; i++) {
        if (!(p->groups[i] = pol_strdup(r->groups[i].name))) goto oom;
        p->ngroups++;
        for (size_t j = 0; j < r->groups[i].nmembers; j++) refs[k++] = (member_ref){r->groups[i].members[j], i};
    }
    qsort(refs, nmembers, sizeof *refs, cmp_member);
    size_t bitmap = (r->ngroups + 7) / 8;
    for (size_t i = 0; i < nmembers; i++) {
        if (!p->nactors || strcmp(p->actors[p->nactors - 1].id, refs[i].actor)) {
            pol_actor *a = &p->actors[p->nactors];
            a->id = pol_strdup(refs[i].actor);
            a->groups = calloc(bitmap ? bitmap : 1, 1);
            if (!a->id || !a->groups) {
                free(a->id);
                free(a->groups);
                goto oom;
            }
            p->nactors++;
        }
        p->actors[p->nactors - 1].groups[refs[i].group / 8] |= (uint8_t)(1u << (refs[i].group % 8));
    }

    for (size_t i = 0; i < r->nprot; i++) {
        if (!(p->protected_branches[p->nprotected] = pol_strdup(r->prot[i]))) goto oom;
        p->nprotected++;
    }
    qsort(p->protected_branches, p->nprotected, sizeof *p->protected_branches, cmp_str);
    size_t w = 0;
    for (size_t i = 0; i < p->nprotected; i++) {
        if (w && !strcmp(p->protected_branches[w - 1], p->protected_branches[i])) free(p->protected_branches[i]);
        else p->protected_branches[w++] = p->protected_branches[i];
    }
    p->nprotected = w;
    /* `Main`, `mаin` (Cyrillic а) or `main` + U+200B must be as protected as `main`: matching
     * compares confusable skeletons too (eval.c), computed here once per protected name. */
    if (!(p->protected_skeletons = calloc(w ? w : 1, sizeof *p->protected_skeletons))) goto oom;
    for (size_t i = 0; i < w; i++) {
        char sk[OG_IDENT_SKELETON_MAX];
        if (og_ident_skeleton(p->protected_branches[i], sk, sizeof sk) != OG_OK) {
            og_error_clear(); /* no skeleton: exact matching only */
            continue;
        }
        if (!(p->protected_skeletons[i] = pol_strdup(sk))) goto oom;
    }

    for (size_t i = 0; i < r->nrules; i++) {
        const raw_rule *rr = &r->rules[i];
        pol_rule *rule = &p->rules[i];
        rule->id = pol_strdup(rr->id);
        rule->group = pol_strdup(rr->group);
        p->nrules++;
        if (!rule->id || !rule->group) goto oom;
        rule->line = rr->line;
        raw_group key = {.name = rr->group};
        const raw_group *g = bsearch(&key, r->groups, r->ngroups, sizeof key, cmp_group);
        rule->group_idx = (size_t)(g - r->groups);
        for (size_t a = 0; a < rr->nactions; a++) {
            rule->actions |= 1u << rr->actions[a];
            rule->order[rule->naction++] = rr->actions[a];
        }
        rule->branch_scope = rr->branch_scope;
        rule->target_scope = rr->target_scope;
        rule->deny = rr->deny;
        if (rule->branch_scope == POL_SCOPE_OWNED || rule->target_scope == POL_SCOPE_OWNED) p->has_owner_rules = 1;
        if (rr->nqueries) {
            if (!(rule->queries = calloc(rr->nqueries, sizeof *rule->queries))) goto oom;
            for (size_t q = 0; q < rr->nqueries; q++) {
                if (!(rule->queries[q] = pol_strdup(rr->queries[q]))) goto oom;
                rule->nqueries++;
            }
            p->has_query_rules = 1;
        }
    }
    free(refs);
    *out = p;
    return OG_OK;
oom:
    free(refs);
    og_policy_free(p);
    return og_err(OG_ERR_NOMEM, "out of memory");
}

og_status og_policy_parse(const char *src, size_t len, const char *name, og_policy_kind kind, og_policy **out)
{
    *out = NULL;
    if (!name) name = "<policy>";
    if (kind != OG_POLICY_KIND_GRAPH && kind != OG_POLICY_KIND_SERVER)
        return og_err(OG_ERR_INVALID, "unknown policy bundle kind %d", (int)kind);
    pol_yaml y;
    OG_TRY(pol_yaml_load(&y, src, len, name));
    raw_bundle r = {0};
    og_status st = parse_raw(&y, &r);
    if (st == OG_OK) st = validate(&y, &r, kind);
    if (st == OG_OK) st = build(&r, kind, out);
    raw_free(&r);
    pol_yaml_free(&y);
    return st;
}

og_status og_policy_load(const char *path, og_policy_kind kind, og_policy **out)
{
    *out = NULL;
    og_buf b = OG_BUF_INIT;
    og_status st = og_buf_read_file(&b, path);
    if (st != OG_OK) {
        og_buf_free(&b);
        return st;
    }
    st = og_policy_parse(b.len ? (const char *)b.data : "", b.len, path, kind, out);
    og_buf_free(&b);
    return st;
}

og_policy_kind og_policy_get_kind(const og_policy *p) { return p->kind; }

size_t og_policy_actor_count(const og_policy *p) { return p->nactors; }

int og_policy_has_query_rules(const og_policy *p) { return p && p->has_query_rules; }

int og_policy_has_owner_rules(const og_policy *p) { return p && p->has_owner_rules; }
