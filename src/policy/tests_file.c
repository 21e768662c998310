/*
 * tests_file.c — declarative policy tests (`omnigraph policy test`): a YAML list of requests
 * with the decision each must get, so a bundle change that widens or narrows access fails
 * review instead of reaching production.  Format (§4, docs/policy.md):
 *     version: 1
 *     cases:
 *       - {id: reader-main, actor: act-a, action: read, branch: main, expect: allow}
 */
#include <stdlib.h>
#include <string.h>

#include "policy/policy_internal.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct pol_case {
    char *id;
    char *actor;
    og_policy_action action;
    char *branch;           /* NULL = absent */
    char *target_branch;
    char *query;            /* invoke_query: the stored query (NULL = absent) */
    char *branch_creator;   /* who created branch / target_branch (`owned` scopes) */
    char *target_branch_creator;
    int expect_allow;
} pol_case;

struct og_policy_tests {
    pol_case *cases;
    size_t ncases;
};

void og_policy_tests_free(og_policy_tests *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->ncases; i++) {
        free(t->cases[i].id);
        free(t->cases[i].actor);
        free(t->cases[i].branch);
        free(t->cases[i].target_branch);
        free(t->cases[i].query);
        free(t->cases[i].branch_creator);
        free(t->cases[i].target_branch_creator);
    }
    free(t->cases);
    free(t);
}

size_t og_policy_tests_count(const og_policy_tests *t) { return t->ncases; }

static const char *const top_keys[] = {"version", "cases", NULL};
static const char *const case_keys[] = {"id", "actor", "action", "branch", "target_branch", "query",
                                         "branch_creator", "target_branch_creator", "expect", NULL};

static og_status opt_string(pol_yaml *y, yaml_node_t *n, const char *what, char **out)
{
    *out = NULL;
    if (!n || pol_is_null(n)) return OG_OK;
    const char *s;
    OG_TRY(pol_scalar(y, n, what, &s));
    if (!(*out = pol_strdup(s))) return og_err(OG_ERR_NOMEM, "out of memory");
    return OG_OK;
}

static og_status parse_case(pol_yaml *y, yaml_node_t *n, pol_case *c)
{
    size_t line = pol_line(n);
    if (n->type != YAML_MAPPING_NODE) return pol_fail(y, OG_ERR_PARSE, line, "each case must be a mapping");
    OG_TRY(pol_check_keys(y, n, "a test case", case_keys));
    static const char *const required[] = {"id", "actor", "action", "expect"};
    for (size_t i = 0; i < 4; i++)
        if (!pol_get(y, n, required[i]))
            return pol_fail(y, OG_ERR_PARSE, line, "missing field '%s' in a test case", required[i]);
    const char *s;
    yaml_node_t *v = pol_get(y, n, "id");
    OG_TRY(pol_scalar(y, v, "a case's 'id'", &s));
    if (!(c->id = pol_strdup(s))) return og_err(OG_ERR_NOMEM, "out of memory");
    v = pol_get(y, n, "actor");
    OG_TRY(pol_scalar(y, v, "a case's 'actor'", &s));
    if (!(c->actor = pol_strdup(s))) return og_err(OG_ERR_NOMEM, "out of memory");
    v = pol_get(y, n, "action");
    OG_TRY(pol_scalar(y, v, "a case's 'action'", &s));
    if (og_policy_action_parse(s, &c->action) != OG_OK)
        return pol_fail(y, OG_ERR_PARSE, pol_line(v), "unknown policy action '%s'", s);
    v = pol_get(y, n, "expect");
    OG_TRY(pol_scalar(y, v, "a case's 'expect'", &s));
    if (!strcmp(s, "allow")) c->expect_allow = 1;
    else if (!strcmp(s, "deny")) c->expect_allow = 0;
    else return pol_fail(y, OG_ERR_PARSE, pol_line(v), "unknown expectation '%s' (expected allow or deny)", s);
    OG_TRY(opt_string(y, pol_get(y, n, "branch"), "'branch'", &c->branch));
    OG_TRY(opt_string(y, pol_get(y, n, "target_branch"), "'target_branch'", &c->target_branch));
    OG_TRY(opt_string(y, pol_get(y, n, "query"), "'query'", &c->query));
    OG_TRY(opt_string(y, pol_get(y, n, "branch_creator"), "'branch_creator'", &c->branch_creator));
    OG_TRY(opt_string(y, pol_get(y, n, "target_branch_creator"), "'target_branch_creator'", &c->target_branch_creator));
    return OG_OK;
}

og_status og_policy_tests_parse(const char *src, size_t len, const char *name, og_policy_tests **out)
{
    *out = NULL;
    if (!name) name = "<tests>";
    pol_yaml y;
    OG_TRY(pol_yaml_load(&y, src, len, name));
    og_policy_tests *t = calloc(1, sizeof *t);
    og_status st = t ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    yaml_node_t *root = pol_yaml_root(&y);
    if (st == OG_OK && root->type != YAML_MAPPING_NODE)
        st = pol_fail(&y, OG_ERR_PARSE, pol_line(root), "a policy tests file must be a YAML mapping");
    if (st == OG_OK) st = pol_check_keys(&y, root, "the policy tests file", top_keys);
    yaml_node_t *v = st == OG_OK ? pol_get(&y, root, "version") : NULL;
    if (st == OG_OK && !v) st = pol_fail(&y, OG_ERR_PARSE, pol_line(root), "missing field 'version'");
    if (st == OG_OK) {
        const char *s = v->type == YAML_SCALAR_NODE && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                            ? (const char *)v->data.scalar.value : NULL;
        if (!s || !*s || strlen(s) > 9 || strspn(s, "0123456789") != strlen(s))
            st = pol_fail(&y, OG_ERR_PARSE, pol_line(v), "'version' must be a non-negative integer");
        else if (strtol(s, NULL, 10) != 1)
            st = pol_fail(&y, OG_ERR_INVALID, pol_line(v), "policy test version must be 1");
    }
    yaml_node_t *cases = st == OG_OK ? pol_get(&y, root, "cases") : NULL;
    if (st == OG_OK && cases && !pol_is_null(cases)) {
        if (cases->type != YAML_SEQUENCE_NODE) {
            st = pol_fail(&y, OG_ERR_PARSE, pol_line(cases), "'cases' must be a list of test cases");
        } else {
            size_t n = (size_t)(cases->data.sequence.items.top - cases->data.sequence.items.start);
            t->cases = calloc(n ? n : 1, sizeof *t->cases);
            if (!t->cases) st = og_err(OG_ERR_NOMEM, "out of memory");
            for (yaml_node_item_t *it = cases->data.sequence.items.start;
                 st == OG_OK && it < cases->data.sequence.items.top; it++) {
                yaml_node_t *cn = pol_yaml_node(&y, *it);
                pol_case *c = &t->cases[t->ncases++];
                st = parse_case(&y, cn, c);
                if (st != OG_OK) break;
                if (pol_blank(c->id)) {
                    st = pol_fail(&y, OG_ERR_INVALID, pol_line(cn), "policy test case ids must not be blank");
                    break;
                }
                for (size_t j = 0; j + 1 < t->ncases; j++)
                    if (!strcmp(t->cases[j].id, c->id)) {
                        st = pol_fail(&y, OG_ERR_INVALID, pol_line(cn), "duplicate policy test case id '%s'", c->id);
                        break;
                    }
                if (st == OG_OK && pol_blank(c->actor))
                    st = pol_fail(&y, OG_ERR_INVALID, pol_line(cn), "policy test case '%s' must not use a blank actor",
                                  c->id);
            }
        }
    }
    pol_yaml_free(&y);
    if (st != OG_OK) {
        og_policy_tests_free(t);
        return st;
    }
    *out = t;
    return OG_OK;
}

og_status og_policy_tests_load(const char *path, og_policy_tests **out)
{
    *out = NULL;
    og_buf b = OG_BUF_INIT;
    og_status st = og_buf_read_file(&b, path);
    if (st == OG_OK) st = og_policy_tests_parse(b.len ? (const char *)b.data : "", b.len, path, out);
    og_buf_free(&b);
    return st;
}

og_status og_policy_tests_run(const og_policy *p, const og_policy_tests *t, const char *graph_id, size_t *failed,
                              char **report)
{
    *failed = 0;
    *report = NULL;
    og_buf b = OG_BUF_INIT;
    og_status st = OG_OK;
    for (size_t i = 0; i < t->ncases && st == OG_OK; i++) {
        const pol_case *c = &t->cases[i];
        og_policy_request req = {.actor = c->actor, .action = c->action, .graph_id = graph_id,
                                 .branch = c->branch, .target_branch = c->target_branch, .query = c->query,
                                 .branch_creator = c->branch_creator,
                                 .target_branch_creator = c->target_branch_creator};
        og_policy_decision d;
        st = og_policy_decide(p, &req, &d);
        if (st != OG_OK) break;
        if (d.allowed == c->expect_allow) {
            st = og_buf_printf(&b, "ok   %s: %s%s%s\n", c->id, d.allowed ? "allow" : "deny",
                               d.matched_rule_id ? " by rule " : "", d.matched_rule_id ? d.matched_rule_id : "");
        } else {
            (*failed)++;
            st = og_buf_printf(&b, "FAIL %s: expected %s but got %s (%s)\n", c->id, c->expect_allow ? "allow" : "deny",
                               d.allowed ? "allow" : "deny", d.message);
        }
    }
    if (st == OG_OK) st = og_buf_append_byte(&b, '\0');
    if (st != OG_OK) {
        og_buf_free(&b);
        return st;
    }
    *report = (char *)b.data;
    return OG_OK;
}
