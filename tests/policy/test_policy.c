/*
 * test_policy.c — the policy engine: every validation rule of §4 (one bad bundle each, exact
 * message with file:line), the shape errors, decisions (branch, target-branch and protected
 * semantics, unknown actor, matched rule, 404 masking), the Cedar text, tests files, and the
 * cookbook's real bundles (SKIP when ../shared is absent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "policy/policy.h"
#include "util/error.h"

static og_policy *load_kind(const char *yaml, og_policy_kind kind)
{
    og_policy *p = NULL;
    og_status st = og_policy_parse(yaml, strlen(yaml), "b.yaml", kind, &p);
    if (st != OG_OK) fprintf(stderr, "unexpected: %s\n", og_error_message());
    assert_int_equal(st, OG_OK);
    assert_non_null(p);
    return p;
}

static og_policy *load(const char *yaml) { return load_kind(yaml, OG_POLICY_KIND_GRAPH); }

/* Loading must fail with `code` and exactly `msg`, and return nothing. */
static void expect_error_kind(const char *yaml, og_policy_kind kind, og_status code, const char *msg)
{
    og_policy *p = (og_policy *)0x1;
    og_status st = og_policy_parse(yaml, strlen(yaml), "b.yaml", kind, &p);
    if (st != code || strcmp(og_error_message(), msg))
        fprintf(stderr, "bundle:\n%s\nwant %d \"%s\"\ngot  %d \"%s\"\n", yaml, code, msg, st, og_error_message());
    assert_int_equal(st, code);
    assert_string_equal(og_error_message(), msg);
    assert_null(p);
}

static void expect_error(const char *yaml, og_status code, const char *msg)
{
    expect_error_kind(yaml, OG_POLICY_KIND_GRAPH, code, msg);
}

static const char team_bundle[] =
    "version: 1\n"
    "groups:\n"
    "  team:   [act-andrew, act-bruno]\n"
    "  admins: [act-ragnor]\n"
    "protected_branches: [main]\n"
    "rules:\n"
    "  - id: team-read\n"
    "    allow:\n"
    "      actors: { group: team }\n"
    "      actions: [read]\n"
    "      branch_scope: any\n"
    "  - id: team-write-unprotected\n"
    "    allow: { actors: { group: team }, actions: [change], branch_scope: unprotected }\n"
    "  - id: admins-merge\n"
    "    allow: { actors: { group: admins }, actions: [branch_delete, branch_merge], target_branch_scope: protected }\n";

/* ---- every validation rule (reference wording, our file:line prefix) ---- */

static void rejects_each_validation_rule(void **state)
{
    (void)state;
    expect_error("version: 2\n", OG_ERR_INVALID, "b.yaml:1: policy version must be 1");
    expect_error("version: 1\ngroups:\n  \"  \": [a]\n", OG_ERR_INVALID, "b.yaml:3: policy group names must not be blank");
    expect_error("version: 1\ngroups:\n  team: []\n", OG_ERR_INVALID, "b.yaml:3: policy group 'team' must not be empty");
    expect_error("version: 1\ngroups:\n  team: [a, \" \"]\n", OG_ERR_INVALID,
                 "b.yaml:3: policy group 'team' contains a blank actor id");
    /* Blank is Rust's trim(): Unicode spaces count (U+3000, U+00A0). */
    expect_error("version: 1\ngroups:\n  team: [a, \"\\u3000\\_\"]\n", OG_ERR_INVALID,
                 "b.yaml:3: policy group 'team' contains a blank actor id");
    expect_error("version: 1\nprotected_branches: [main, \"\"]\n", OG_ERR_INVALID,
                 "b.yaml:2: protected branch names must not be blank");
    const char *g = "version: 1\ngroups: {team: [a]}\nrules:\n";
    char buf[1024];
#define RULE(text) (snprintf(buf, sizeof buf, "%s%s", g, text), buf)
    expect_error(RULE("  - {id: \" \", allow: {actors: {group: team}, actions: [read]}}\n"), OG_ERR_INVALID,
                 "b.yaml:4: policy rule ids must not be blank");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [read]}}\n"
                      "  - {id: r, allow: {actors: {group: team}, actions: [export]}}\n"),
                 OG_ERR_INVALID, "b.yaml:5: duplicate policy rule id 'r'");
    expect_error(RULE("  - {id: r, allow: {actors: {group: \"\"}, actions: [read]}}\n"), OG_ERR_INVALID,
                 "b.yaml:4: policy rule 'r' must reference a non-blank group");
    expect_error(RULE("  - {id: r, allow: {actors: {group: ops}, actions: [read]}}\n"), OG_ERR_INVALID,
                 "b.yaml:4: policy rule 'r' references unknown group 'ops'");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: []}}\n"), OG_ERR_INVALID,
                 "b.yaml:4: policy rule 'r' must include at least one action");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [read], branch_scope: any,"
                      " target_branch_scope: any}}\n"),
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' may specify branch_scope or target_branch_scope, not both");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [read, branch_merge], branch_scope: any}}\n"),
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' uses branch_scope with unsupported action 'branch_merge'");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [invoke_query], branch_scope: any}}\n"),
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' uses branch_scope with unsupported action 'invoke_query'");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [admin], target_branch_scope: any}}\n"),
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' uses target_branch_scope with unsupported action 'admin'");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [change], target_branch_scope: protected}}\n"),
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' uses target_branch_scope with unsupported action 'change'");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [graph_list], branch_scope: any}}\n"),
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' uses branch_scope with unsupported action 'graph_list'");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [graph_list, read]}}\n"), OG_ERR_INVALID,
                 "b.yaml:4: policy rule 'r' mixes the server-scoped action `graph_list` with per-graph actions; "
                 "split into separate rules");
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [read, read]}}\n"), OG_ERR_INVALID,
                 "b.yaml:4: policy rule 'r' lists action 'read' more than once");
    /* The bundle's kind. */
    expect_error(RULE("  - {id: r, allow: {actors: {group: team}, actions: [graph_list]}}\n"), OG_ERR_INVALID,
                 "b.yaml:4: policy rule 'r' uses server-scoped action 'graph_list' in a Graph policy file; "
                 "move it to a server policy file");
    expect_error_kind(RULE("  - {id: r, allow: {actors: {group: team}, actions: [read]}}\n"), OG_POLICY_KIND_SERVER,
                      OG_ERR_INVALID,
                      "b.yaml:4: policy rule 'r' uses per-graph action 'read' in a Server policy file; "
                      "move it to a per-graph policy file");
#undef RULE
}

static void rejects_bad_shapes(void **state)
{
    (void)state;
    expect_error("", OG_ERR_PARSE, "b.yaml:1: the file is empty (expected a YAML mapping)");
    expect_error("version: [1\n", OG_ERR_PARSE,
                 "b.yaml:2: invalid YAML: did not find expected ',' or ']' while parsing a flow sequence");
    expect_error("version: 1\n---\nversion: 1\n", OG_ERR_PARSE,
                 "b.yaml:3: more than one YAML document (expected one mapping)");
    expect_error("- 1\n", OG_ERR_PARSE, "b.yaml:1: a policy bundle must be a YAML mapping");
    expect_error("groups: {}\n", OG_ERR_PARSE, "b.yaml:1: missing field 'version'");
    expect_error("version: one\n", OG_ERR_PARSE, "b.yaml:1: 'version' must be a non-negative integer");
    expect_error("version: \"1\"\n", OG_ERR_PARSE, "b.yaml:1: 'version' must be a non-negative integer");
    expect_error("version: 1\nkind: server\n", OG_ERR_PARSE,
                 "b.yaml:2: unknown field 'kind' in the policy bundle (expected one of: version, groups, "
                 "protected_branches, rules); a bundle's kind comes from its binding (applies_to: [cluster]) or "
                 "--server");
    expect_error("version: 1\nversion: 1\n", OG_ERR_PARSE, "b.yaml:2: duplicate field 'version' in the policy bundle");
    expect_error("version: 1\ngroups: [a]\n", OG_ERR_PARSE,
                 "b.yaml:2: 'groups' must be a mapping of group name to a list of actor ids");
    expect_error("version: 1\ngroups: {team: a}\n", OG_ERR_PARSE, "b.yaml:2: group 'team' must be a list of actor ids");
    expect_error("version: 1\ngroups: {team: [[a]]}\n", OG_ERR_PARSE, "b.yaml:2: an actor id must be a string");
    expect_error("version: 1\ngroups: {team: [a], team: [b]}\n", OG_ERR_PARSE, "b.yaml:2: duplicate group 'team'");
    expect_error("version: 1\nprotected_branches: main\n", OG_ERR_PARSE,
                 "b.yaml:2: 'protected_branches' must be a list of branch names");
    expect_error("version: 1\nrules: {}\n", OG_ERR_PARSE, "b.yaml:2: 'rules' must be a list of rules");
    expect_error("version: 1\nrules: [1]\n", OG_ERR_PARSE, "b.yaml:2: each rule must be a mapping with 'id' and 'allow'");
    expect_error("version: 1\nrules:\n  - allow: {}\n", OG_ERR_PARSE, "b.yaml:3: missing field 'id' in a rule");
    expect_error("version: 1\nrules:\n  - id: r\n", OG_ERR_PARSE, "b.yaml:3: missing field 'allow' in a rule");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actions: [read]}}\n", OG_ERR_PARSE,
                 "b.yaml:3: missing field 'actors' in 'allow'");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: {group: g}}}\n", OG_ERR_PARSE,
                 "b.yaml:3: missing field 'actions' in 'allow'");
    expect_error("version: 1\nrules:\n  - {id: r, permit: {}}\n", OG_ERR_PARSE,
                 "b.yaml:3: unknown field 'permit' in a rule (expected one of: id, allow, deny)");
    expect_error("version: 1\nrules:\n  - {id: r, deny: {}}\n", OG_ERR_PARSE, "b.yaml:3: missing field 'actors' in 'deny'");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {}, deny: {}}\n", OG_ERR_PARSE,
                 "b.yaml:3: a rule has either 'allow' or 'deny', not both");
    expect_error("version: 1\nrules:\n  - {id: r, deny: {actors: {group: g}, actions: [read], querys: [a]}}\n",
                 OG_ERR_PARSE,
                 "b.yaml:3: unknown field 'querys' in 'deny' (expected one of: actors, actions, branch_scope, "
                 "target_branch_scope, queries)");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: {group: g}, actions: [invoke_query], queries: q}}\n",
                 OG_ERR_PARSE, "b.yaml:3: 'queries' must be a list of stored query names");
    /* A misspelt scope must not silently widen access. */
    expect_error("version: 1\nrules:\n  - id: r\n    allow:\n      actors: {group: g}\n      actions: [read]\n"
                 "      branch_scpoe: protected\n",
                 OG_ERR_PARSE,
                 "b.yaml:7: unknown field 'branch_scpoe' in 'allow' (expected one of: actors, actions, "
                 "branch_scope, target_branch_scope, queries)");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: {group: g, role: x}, actions: [read]}}\n",
                 OG_ERR_PARSE, "b.yaml:3: unknown field 'role' in 'actors' (expected one of: group)");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: [g], actions: [read]}}\n", OG_ERR_PARSE,
                 "b.yaml:3: 'actors' must be a mapping { group: NAME }");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: {group: g}, actions: read}}\n", OG_ERR_PARSE,
                 "b.yaml:3: 'actions' must be a list of action names");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: {group: g}, actions: [write]}}\n", OG_ERR_PARSE,
                 "b.yaml:3: unknown policy action 'write'");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: {group: g}, actions: [read], branch_scope: all}}\n",
                 OG_ERR_PARSE, "b.yaml:3: unknown branch_scope 'all' (expected any, protected, unprotected, owned or actor_namespace)");
    expect_error("version: 1\nrules:\n  - {id: r, allow: {actors: {group: g}, actions: [schema_apply],"
                 " target_branch_scope: [main]}}\n",
                 OG_ERR_PARSE, "b.yaml:3: target_branch_scope must be a string");
    expect_error("version: 1\nrules:\n  - {id: ~, allow: {actors: {group: g}, actions: [read]}}\n", OG_ERR_PARSE,
                 "b.yaml:3: a rule's 'id' must be a string");
    expect_error("version: 1\nprotected_branches: [\"ma\\0in\"]\n", OG_ERR_PARSE,
                 "b.yaml:2: a protected branch name must not contain a NUL character");
    /* The file form names the path; an unreadable file is an I/O error. */
    og_policy *p = (og_policy *)0x1;
    assert_int_equal(og_policy_load("/nonexistent/policy.yaml", OG_POLICY_KIND_GRAPH, &p), OG_ERR_IO);
    assert_null(p);
    assert_non_null(strstr(og_error_message(), "/nonexistent/policy.yaml"));
}

static void accepts_minimal_and_null_sections(void **state)
{
    (void)state;
    og_policy *p = load("version: 1\n");
    assert_int_equal(og_policy_actor_count(p), 0);
    og_policy_request r = {.actor = "a", .action = OG_POLICY_READ, .branch = "main"};
    og_policy_decision d;
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_false(d.allowed);
    assert_true(d.unknown_actor);
    og_policy_free(p);
    p = load("version: 1\ngroups: ~\nprotected_branches:\nrules: null\n");
    og_policy_free(p);
}

/* ---- decisions ---- */

static void decide(const og_policy *p, const char *actor, og_policy_action a, const char *branch, const char *target,
                   og_policy_decision *d)
{
    og_policy_request r = {.actor = actor, .action = a, .graph_id = "g", .branch = branch, .target_branch = target};
    assert_int_equal(og_policy_decide(p, &r, d), OG_OK);
}

static void decides_branch_scopes(void **state)
{
    (void)state;
    og_policy *p = load(team_bundle);
    assert_int_equal(og_policy_actor_count(p), 3);
    og_policy_decision d;
    decide(p, "act-andrew", OG_POLICY_READ, "main", NULL, &d);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "team-read");
    assert_string_equal(d.message, "policy allowed action 'read' for actor 'act-andrew'");
    decide(p, "act-andrew", OG_POLICY_READ, NULL, NULL, &d); /* `any` holds without a branch */
    assert_true(d.allowed);
    decide(p, "act-bruno", OG_POLICY_CHANGE, "feature", NULL, &d);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "team-write-unprotected");
    decide(p, "act-bruno", OG_POLICY_CHANGE, "main", NULL, &d);
    assert_false(d.allowed);
    assert_null(d.matched_rule_id);
    assert_false(d.unknown_actor);
    assert_false(d.mask_as_not_found);
    assert_string_equal(d.message, "policy denied action 'change' on branch 'main' for actor 'act-bruno'");
    decide(p, "act-bruno", OG_POLICY_CHANGE, NULL, NULL, &d); /* unprotected needs a branch */
    assert_false(d.allowed);
    assert_true(og_policy_is_protected(p, "main"));
    assert_true(og_policy_is_protected(p, "Main")); /* it reads as main (confusable_names_are_protected) */
    assert_false(og_policy_is_protected(p, NULL));
    decide(p, "act-ragnor", OG_POLICY_READ, "main", NULL, &d); /* admins hold no read rule */
    assert_false(d.allowed);
    assert_false(d.unknown_actor);
    og_policy_free(p);
}

static void decides_target_branch_scopes(void **state)
{
    (void)state;
    og_policy *p = load(team_bundle);
    og_policy_decision d;
    decide(p, "act-ragnor", OG_POLICY_BRANCH_MERGE, "feature", "main", &d);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "admins-merge");
    /* The source being protected does not matter; the target does. */
    decide(p, "act-ragnor", OG_POLICY_BRANCH_MERGE, "main", "feature", &d);
    assert_false(d.allowed);
    assert_string_equal(d.message,
                        "policy denied action 'branch_merge' on branch 'main' targeting branch 'feature' for actor "
                        "'act-ragnor'");
    decide(p, "act-ragnor", OG_POLICY_BRANCH_DELETE, NULL, "main", &d);
    assert_true(d.allowed);
    decide(p, "act-ragnor", OG_POLICY_BRANCH_DELETE, NULL, NULL, &d);
    assert_false(d.allowed);
    decide(p, "act-andrew", OG_POLICY_BRANCH_DELETE, NULL, "main", &d);
    assert_false(d.allowed);
    og_policy_free(p);

    p = load("version: 1\ngroups: {dev: [d]}\nprotected_branches: [main, release]\nrules:\n"
             "  - {id: create-any, allow: {actors: {group: dev}, actions: [branch_create], target_branch_scope: unprotected}}\n"
             "  - {id: apply-prot, allow: {actors: {group: dev}, actions: [schema_apply], target_branch_scope: protected}}\n");
    decide(p, "d", OG_POLICY_BRANCH_CREATE, "main", "feature", &d);
    assert_true(d.allowed);
    decide(p, "d", OG_POLICY_BRANCH_CREATE, "main", "release", &d);
    assert_false(d.allowed);
    decide(p, "d", OG_POLICY_SCHEMA_APPLY, NULL, "release", &d);
    assert_true(d.allowed);
    decide(p, "d", OG_POLICY_SCHEMA_APPLY, NULL, "dev", &d);
    assert_false(d.allowed);
    og_policy_free(p);
}

static void unknown_actor_is_denied(void **state)
{
    (void)state;
    og_policy *p = load(team_bundle);
    og_policy_decision d;
    decide(p, "act-mallory", OG_POLICY_READ, "main", NULL, &d);
    assert_false(d.allowed);
    assert_true(d.unknown_actor);
    assert_null(d.matched_rule_id);
    assert_string_equal(d.message, "policy denied action 'read' for unknown actor 'act-mallory'");
    /* Membership is exact: no trimming, no case folding. */
    decide(p, "act-andrew ", OG_POLICY_READ, "main", NULL, &d);
    assert_true(d.unknown_actor);
    decide(p, "ACT-ANDREW", OG_POLICY_READ, "main", NULL, &d);
    assert_true(d.unknown_actor);
    og_policy_request bad = {.actor = NULL, .action = OG_POLICY_READ};
    assert_int_equal(og_policy_decide(p, &bad, &d), OG_ERR_INVALID);
    assert_false(d.allowed);
    bad.actor = "act-andrew";
    bad.action = OG_POLICY_ACTION_COUNT;
    assert_int_equal(og_policy_decide(p, &bad, &d), OG_ERR_INVALID);
    assert_false(d.allowed);
    og_policy_free(p);
}

static void long_names_truncate_the_message(void **state)
{
    (void)state;
    og_policy *p = load(team_bundle);
    char branch[2000];
    memset(branch, 'b', sizeof branch - 1);
    branch[sizeof branch - 1] = '\0';
    og_policy_decision d;
    decide(p, "act-bruno", OG_POLICY_CHANGE, "main", branch, &d);
    assert_false(d.allowed);
    assert_int_equal(strlen(d.message), OG_POLICY_MESSAGE_MAX - 1);
    assert_memory_equal(d.message, "policy denied action 'change' on branch 'main' targeting branch 'bbb", 68);
    assert_string_equal(d.message + OG_POLICY_MESSAGE_MAX - 4, "...");
    /* Exactly full: no truncation mark. */
    char actor[OG_POLICY_MESSAGE_MAX];
    size_t fixed = strlen("policy denied action 'read' for unknown actor ''");
    memset(actor, 'a', OG_POLICY_MESSAGE_MAX - 1 - fixed);
    actor[OG_POLICY_MESSAGE_MAX - 1 - fixed] = '\0';
    decide(p, actor, OG_POLICY_READ, NULL, NULL, &d);
    assert_int_equal(strlen(d.message), OG_POLICY_MESSAGE_MAX - 1);
    assert_int_equal(d.message[OG_POLICY_MESSAGE_MAX - 2], '\'');
    og_policy_free(p);
}

static void matched_rule_is_the_smallest_id(void **state)
{
    (void)state;
    og_policy *p = load("version: 1\ngroups: {a: [x], b: [x]}\nprotected_branches: [main]\nrules:\n"
                        "  - {id: zeta, allow: {actors: {group: a}, actions: [read], branch_scope: any}}\n"
                        "  - {id: Alpha, allow: {actors: {group: b}, actions: [export, read], branch_scope: protected}}\n"
                        "  - {id: beta, allow: {actors: {group: b}, actions: [read]}}\n");
    og_policy_decision d;
    decide(p, "x", OG_POLICY_READ, "main", NULL, &d);
    assert_string_equal(d.matched_rule_id, "Alpha"); /* byte order: upper case first */
    decide(p, "x", OG_POLICY_READ, "dev", NULL, &d);
    assert_string_equal(d.matched_rule_id, "beta");
    og_policy_free(p);
}

static void invoke_query_denial_is_masked(void **state)
{
    (void)state;
    og_policy *p = load("version: 1\ngroups: {readers: [r], others: [o]}\nrules:\n"
                        "  - {id: invoke, allow: {actors: {group: readers}, actions: [invoke_query]}}\n");
    og_policy_decision d;
    decide(p, "r", OG_POLICY_INVOKE_QUERY, NULL, NULL, &d);
    assert_true(d.allowed);
    assert_false(d.mask_as_not_found);
    decide(p, "o", OG_POLICY_INVOKE_QUERY, NULL, NULL, &d);
    assert_false(d.allowed);
    assert_true(d.mask_as_not_found);
    decide(p, "nobody", OG_POLICY_INVOKE_QUERY, NULL, NULL, &d);
    assert_true(d.mask_as_not_found);
    decide(p, "o", OG_POLICY_READ, NULL, NULL, &d);
    assert_false(d.mask_as_not_found);
    og_policy_free(p);
}

/* ---- per-query rules and deny rules (the OmniGraph-C extension) ---- */

static const char query_bundle[] =
    "version: 1\n"
    "groups: {team: [alice, bob], interns: [bob], guests: [gus]}\n"
    "protected_branches: [main]\n"
    "rules:\n"
    "  - {id: team-invoke, allow: {actors: {group: team}, actions: [invoke_query]}}\n"
    "  - {id: interns-no-writes, deny: {actors: {group: interns}, actions: [invoke_query], queries: [add_person, befriend]}}\n"
    "  - {id: guests-friends, allow: {actors: {group: guests}, actions: [invoke_query], queries: [friends]}}\n"
    "  - {id: team-read, allow: {actors: {group: team}, actions: [read, change]}}\n"
    "  - {id: no-main-writes, deny: {actors: {group: interns}, actions: [change], branch_scope: protected}}\n";

static void decide_query(const og_policy *p, const char *actor, const char *query, og_policy_decision *d)
{
    og_policy_request r = {.actor = actor, .action = OG_POLICY_INVOKE_QUERY, .graph_id = "g", .query = query};
    assert_int_equal(og_policy_decide(p, &r, d), OG_OK);
}

static void decides_per_query_and_deny_rules(void **state)
{
    (void)state;
    og_policy *p = load(query_bundle);
    assert_true(og_policy_has_query_rules(p));
    og_policy_decision d;
    decide_query(p, "alice", "add_person", &d); /* a general allow */
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "team-invoke");
    decide_query(p, "bob", "friends", &d);      /* bob is in team and interns: allowed for reads */
    assert_true(d.allowed);
    decide_query(p, "bob", "add_person", &d);   /* ... a deny naming the query wins */
    assert_false(d.allowed);
    assert_true(d.forbidden);
    assert_true(d.mask_as_not_found);
    assert_string_equal(d.matched_rule_id, "interns-no-writes");
    assert_string_equal(d.message, "policy denied action 'invoke_query' on query 'add_person' for actor 'bob' "
                                   "(denied by rule 'interns-no-writes')");
    decide_query(p, "gus", "friends", &d);      /* an allow naming one query */
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "guests-friends");
    decide_query(p, "gus", "adults", &d);       /* ... and no other */
    assert_false(d.allowed);
    assert_false(d.forbidden);
    assert_null(d.matched_rule_id);
    assert_true(d.mask_as_not_found);
    decide_query(p, "gus", NULL, &d);           /* a request naming no query matches no per-query rule */
    assert_false(d.allowed);
    decide_query(p, "gus", "Friends", &d);      /* names compare exactly */
    assert_false(d.allowed);
    decide(p, "bob", OG_POLICY_CHANGE, "feature", NULL, &d); /* deny rules work for every action */
    assert_true(d.allowed);
    decide(p, "bob", OG_POLICY_CHANGE, "main", NULL, &d);
    assert_false(d.allowed);
    assert_false(d.mask_as_not_found);
    assert_string_equal(d.matched_rule_id, "no-main-writes");
    decide(p, "alice", OG_POLICY_CHANGE, "main", NULL, &d);
    assert_true(d.allowed);
    og_policy_free(p);
    p = load(team_bundle);
    assert_false(og_policy_has_query_rules(p));
    og_policy_free(p);
}

static void rejects_bad_query_rules(void **state)
{
    (void)state;
    expect_error("version: 1\ngroups: {g: [a]}\nrules:\n"
                 "  - {id: r, allow: {actors: {group: g}, actions: [invoke_query, export], queries: [q]}}\n",
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' uses queries with action 'export'; queries applies only to "
                                 "invoke_query, read and change");
    expect_error("version: 1\ngroups: {g: [a]}\nrules:\n"
                 "  - {id: r, allow: {actors: {group: g}, actions: [branch_merge], queries: [q]}}\n",
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' uses queries with action 'branch_merge'; queries applies "
                                 "only to invoke_query, read and change");
    expect_error("version: 1\ngroups: {g: [a]}\nrules:\n"
                 "  - {id: r, allow: {actors: {group: g}, actions: [invoke_query], queries: []}}\n",
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' must list at least one query");
    expect_error("version: 1\ngroups: {g: [a]}\nrules:\n"
                 "  - {id: r, deny: {actors: {group: g}, actions: [invoke_query], queries: [q, \" \"]}}\n",
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' lists a blank query name");
    expect_error("version: 1\ngroups: {g: [a]}\nrules:\n"
                 "  - {id: r, deny: {actors: {group: g}, actions: [invoke_query], queries: [q, p, q]}}\n",
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' lists query 'q' more than once");
    expect_error("version: 1\ngroups: {g: [a]}\nrules:\n"
                 "  - {id: r, deny: {actors: {group: h}, actions: [invoke_query], queries: [q]}}\n",
                 OG_ERR_INVALID, "b.yaml:4: policy rule 'r' references unknown group 'h'");
}

/* Issue 37 item 5: "guests may call only `adults`" must hide everything else.  A read (or
 * change) rule with `queries:` holds only while one of those stored queries runs; an ad-hoc
 * query names no stored query, so it matches no such rule. */
static const char stored_only_bundle[] =
    "version: 1\n"
    "groups: {guests: [gus], clerks: [cleo]}\n"
    "protected_branches: [main]\n"
    "rules:\n"
    "  - {id: guests-adults, allow: {actors: {group: guests}, actions: [invoke_query, read], queries: [adults]}}\n"
    "  - {id: clerks-add, allow: {actors: {group: clerks}, actions: [invoke_query, change], queries: [add_person]}}\n"
    "  - {id: clerks-read-feature, allow: {actors: {group: clerks}, actions: [read], branch_scope: unprotected, "
    "queries: [adults]}}\n";

static void decide_lane(const og_policy *p, const char *actor, og_policy_action a, const char *branch, const char *query,
                        og_policy_decision *d)
{
    og_policy_request r = {.actor = actor, .action = a, .graph_id = "g", .branch = branch, .query = query};
    assert_int_equal(og_policy_decide(p, &r, d), OG_OK);
}

static void stored_query_only_grants(void **state)
{
    (void)state;
    og_policy *p = load(stored_only_bundle);
    og_policy_decision d;
    decide_lane(p, "gus", OG_POLICY_INVOKE_QUERY, NULL, "adults", &d);
    assert_true(d.allowed);
    decide_lane(p, "gus", OG_POLICY_READ, "main", "adults", &d); /* the stored read's own read */
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "guests-adults");
    decide_lane(p, "gus", OG_POLICY_READ, "main", NULL, &d);     /* an ad-hoc query: nothing */
    assert_false(d.allowed);
    assert_string_equal(d.message, "policy denied action 'read' on branch 'main' for actor 'gus'");
    decide_lane(p, "gus", OG_POLICY_READ, "main", "secrets", &d); /* another stored query's read */
    assert_false(d.allowed);
    assert_string_equal(d.message, "policy denied action 'read' on query 'secrets' on branch 'main' for actor 'gus'");
    decide_lane(p, "gus", OG_POLICY_INVOKE_QUERY, NULL, "secrets", &d);
    assert_false(d.allowed);
    assert_true(d.mask_as_not_found);
    decide_lane(p, "cleo", OG_POLICY_CHANGE, "main", "add_person", &d); /* a stored mutation only */
    assert_true(d.allowed);
    decide_lane(p, "cleo", OG_POLICY_CHANGE, "main", NULL, &d);         /* not ad-hoc mutations */
    assert_false(d.allowed);
    decide_lane(p, "cleo", OG_POLICY_READ, "feature", "adults", &d);    /* scope and queries together */
    assert_true(d.allowed);
    decide_lane(p, "cleo", OG_POLICY_READ, "main", "adults", &d);
    assert_false(d.allowed);
    char *cedar = NULL;
    assert_int_equal(og_policy_cedar(p, "g", &cedar, NULL), OG_OK);
    assert_non_null(strstr(cedar, "@id(\"clerks-read-feature:read\")\npermit (\n"
                                  "    principal in Omnigraph::Group::\"clerks\",\n"
                                  "    action == Omnigraph::Action::\"read\",\n"
                                  "    resource == Omnigraph::Graph::\"g\"\n)\n"
                                  "when { context.has_branch && context.branch_is_protected == false }\n"
                                  "when { context.has_query && (context.query == \"adults\") };"));
    free(cedar);
    og_policy_free(p);
}

/* Issue 37 item 6: a branch that reads as a protected one is protected. */
static void confusable_names_are_protected(void **state)
{
    (void)state;
    og_policy *p = load("version: 1\ngroups: {team: [a]}\nprotected_branches: [main, release]\nrules:\n"
                        "  - {id: w, allow: {actors: {group: team}, actions: [change], branch_scope: unprotected}}\n");
    const char *same[] = {"main", "Main", "MAIN", "m\xd0\xb0in", "main\xe2\x80\x8b", "\xef\xbd\x8d\xef\xbd\x81\xef\xbd\x89\xef\xbd\x8e",
                          "rnain", "RELEASE", "re1ease", "\xff\xfe"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        if (!og_policy_is_protected(p, same[i])) fail_msg("\"%s\" is not protected", same[i]);
        og_policy_decision d;
        decide_lane(p, "a", OG_POLICY_CHANGE, same[i], NULL, &d);
        assert_false(d.allowed);
    }
    const char *other[] = {"main2", "feature", "maintenance", "releases", "dev"};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        if (og_policy_is_protected(p, other[i])) fail_msg("\"%s\" is protected", other[i]);
        og_policy_decision d;
        decide_lane(p, "a", OG_POLICY_CHANGE, other[i], NULL, &d);
        assert_true(d.allowed);
    }
    og_policy_free(p);
}

static void compiles_query_rules_to_cedar(void **state)
{
    (void)state;
    og_policy *p = load(query_bundle);
    char *text = NULL;
    assert_int_equal(og_policy_cedar(p, "people", &text, NULL), OG_OK);
    const char *want =
        "\n@id(\"interns-no-writes:invoke_query\")\n"
        "forbid (\n"
        "    principal in Omnigraph::Group::\"interns\",\n"
        "    action == Omnigraph::Action::\"invoke_query\",\n"
        "    resource == Omnigraph::Graph::\"people\"\n"
        ")\n"
        "when { context.has_query && (context.query == \"add_person\" || context.query == \"befriend\") };\n";
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "@id(\"guests-friends:invoke_query\")\npermit ("));
    assert_non_null(strstr(text, "when { context.has_query && (context.query == \"friends\") };"));
    assert_non_null(strstr(text, "@id(\"no-main-writes:change\")\nforbid ("));
    free(text);
    og_policy_free(p);
    assert_non_null(strstr(og_policy_cedar_schema(), "has_query: Bool,"));
    assert_non_null(strstr(og_policy_cedar_schema(), "query: String,"));
}

/* Branch ownership (issue 38): `owned` = the request's branch was created by the actor (the
 * creator the surface looked up), `actor_namespace` = it is named `<actor>/...`. */
static void decides_ownership_scopes(void **state)
{
    (void)state;
    og_policy *p = load("version: 1\ngroups: {agents: [agent-a, agent-b, \"team/x\"]}\nrules:\n"
                        "  - {id: create, allow: {actors: {group: agents}, actions: [branch_create],"
                        " target_branch_scope: actor_namespace}}\n"
                        "  - {id: land, allow: {actors: {group: agents}, actions: [branch_delete, branch_merge],"
                        " target_branch_scope: owned}}\n"
                        "  - {id: write, allow: {actors: {group: agents}, actions: [change], branch_scope: owned}}\n");
    assert_true(og_policy_has_owner_rules(p));
    og_policy_decision d;
    og_policy_request r = {.actor = "agent-a", .action = OG_POLICY_BRANCH_DELETE, .target_branch = "agent-b/work",
                           .target_branch_creator = "agent-b"};
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_false(d.allowed);
    assert_string_equal(d.message, "policy denied action 'branch_delete' targeting branch 'agent-b/work' for actor 'agent-a'");
    r.target_branch_creator = "agent-a"; /* the creator decides, not the name */
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "land");
    r.target_branch_creator = NULL; /* unknown creator: nobody owns it */
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_false(d.allowed);
    r.target_branch_creator = "";
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_false(d.allowed);
    r = (og_policy_request){.actor = "agent-b", .action = OG_POLICY_BRANCH_MERGE, .branch = "agent-b/w",
                            .branch_creator = "agent-b", .target_branch = "agent-a/w", .target_branch_creator = "agent-a"};
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_false(d.allowed); /* owning the source is not enough: the target decides */
    r.actor = "agent-a";
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_true(d.allowed);
    r = (og_policy_request){.actor = "agent-a", .action = OG_POLICY_CHANGE, .branch = "x", .branch_creator = "agent-a"};
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_true(d.allowed);
    r.branch_creator = "agent-a "; /* exact ids only */
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_false(d.allowed);
    /* the namespace: the first '/'-separated segment is exactly the actor id */
    r = (og_policy_request){.actor = "agent-a", .action = OG_POLICY_BRANCH_CREATE, .branch = "main",
                            .target_branch = "agent-a/fix"};
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "create");
    const char *const not_mine[] = {"agent-b/fix", "agent-a", "agent-ab/fix", "x/agent-a/fix", "Agent-a/fix"};
    for (size_t i = 0; i < sizeof not_mine / sizeof *not_mine; i++) {
        r.target_branch = not_mine[i];
        assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
        if (d.allowed) fail_msg("%s is not in agent-a's namespace", not_mine[i]);
    }
    r.target_branch = "agent-a/deep/er";
    assert_int_equal(og_policy_decide(p, &r, &d), OG_OK);
    assert_true(d.allowed);
    assert_true(og_policy_in_actor_namespace("agent-a", "agent-a/"));
    assert_false(og_policy_in_actor_namespace("team/x", "team/x/y")); /* an id with '/' has no namespace */
    assert_false(og_policy_in_actor_namespace("", "/y"));
    /* Cedar: the creator and the namespace are entities compared with the principal */
    char *text = NULL;
    assert_int_equal(og_policy_cedar(p, "g", &text, NULL), OG_OK);
    assert_non_null(strstr(text, "@id(\"land:branch_delete\")"));
    assert_non_null(strstr(text, "when { context.has_target_branch && context.target_branch_creator == principal };"));
    assert_non_null(strstr(text, "when { context.has_target_branch && context.target_branch_namespace == principal };"));
    assert_non_null(strstr(text, "when { context.has_branch && context.branch_creator == principal };"));
    free(text);
    assert_non_null(strstr(og_policy_cedar_schema(), "target_branch_creator: Actor,"));
    og_policy_free(p);
    /* a bundle without `owned` needs no creators; a misspelt scope is refused with the choices */
    p = load(team_bundle);
    assert_false(og_policy_has_owner_rules(p));
    og_policy_free(p);
    expect_error("version: 1\ngroups: {a: [x]}\nrules:\n"
                 "  - {id: r, allow: {actors: {group: a}, actions: [change], branch_scope: own}}\n",
                 OG_ERR_PARSE, "b.yaml:4: unknown branch_scope 'own' (expected any, protected, unprotected, owned or actor_namespace)");
}

static void server_bundle_allows_graph_list(void **state)
{
    (void)state;
    og_policy *p = load_kind("version: 1\ngroups: {admins: [act-a]}\nrules:\n"
                             "  - {id: list, allow: {actors: {group: admins}, actions: [graph_list]}}\n",
                             OG_POLICY_KIND_SERVER);
    assert_int_equal(og_policy_get_kind(p), OG_POLICY_KIND_SERVER);
    og_policy_decision d;
    decide(p, "act-a", OG_POLICY_GRAPH_LIST, NULL, NULL, &d);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "list");
    char *text = NULL;
    assert_int_equal(og_policy_cedar(p, NULL, &text, NULL), OG_OK);
    assert_non_null(strstr(text, "resource == Omnigraph::Server::\"root\""));
    free(text);
    og_policy_free(p);
}

static void decides_without_a_bundle(void **state)
{
    (void)state;
    og_policy_decision d;
    og_policy_request r = {.actor = "act-a", .action = OG_POLICY_READ, .graph_id = "g", .branch = "main"};
    /* Tokens configured, no bundle: read only. */
    assert_int_equal(og_policy_decide_unbound(1, &r, &d), OG_OK);
    assert_true(d.allowed);
    assert_null(d.matched_rule_id);
    r.action = OG_POLICY_CHANGE;
    assert_int_equal(og_policy_decide_unbound(1, &r, &d), OG_OK);
    assert_false(d.allowed);
    assert_false(d.mask_as_not_found);
    assert_string_equal(d.message, "policy denied action 'change' for actor 'act-a': no policy bundle governs this "
                                   "graph, so authenticated requests may only read (default deny)");
    r.action = OG_POLICY_INVOKE_QUERY;
    assert_int_equal(og_policy_decide_unbound(1, &r, &d), OG_OK);
    assert_false(d.allowed);
    assert_true(d.mask_as_not_found);
    /* Open mode: everything per-graph, nothing server-scoped. */
    r.actor = NULL;
    r.action = OG_POLICY_BRANCH_DELETE;
    assert_int_equal(og_policy_decide_unbound(0, &r, &d), OG_OK);
    assert_true(d.allowed);
    r.action = OG_POLICY_GRAPH_LIST;
    for (int auth = 0; auth < 2; auth++) {
        r.actor = auth ? "act-a" : NULL;
        assert_int_equal(og_policy_decide_unbound(auth, &r, &d), OG_OK);
        assert_false(d.allowed);
        assert_non_null(strstr(d.message, "server-scoped actions need a cluster policy bundle"));
    }
    r.actor = NULL;
    assert_int_equal(og_policy_decide_unbound(1, &r, &d), OG_ERR_INVALID);
}

static void actions_parse_and_name(void **state)
{
    (void)state;
    for (int i = 0; i < OG_POLICY_ACTION_COUNT; i++) {
        og_policy_action a = OG_POLICY_READ;
        assert_int_equal(og_policy_action_parse(og_policy_action_name((og_policy_action)i), &a), OG_OK);
        assert_int_equal(a, i);
        assert_int_equal(og_policy_action_is_server(a), i == OG_POLICY_GRAPH_LIST);
    }
    og_policy_action a = OG_POLICY_READ;
    assert_int_equal(og_policy_action_parse("Read", &a), OG_ERR_INVALID);
    assert_string_equal(og_error_message(), "unknown policy action 'Read'");
}

/* ---- Cedar text ---- */

static void compiles_to_cedar(void **state)
{
    (void)state;
    og_policy *p = load(team_bundle);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(og_policy_cedar(p, "knowledge", &text, &len), OG_OK);
    assert_int_equal(strlen(text), len);
    const char *want =
        "\n@id(\"team-write-unprotected:change\")\n"
        "permit (\n"
        "    principal in Omnigraph::Group::\"team\",\n"
        "    action == Omnigraph::Action::\"change\",\n"
        "    resource == Omnigraph::Graph::\"knowledge\"\n"
        ")\n"
        "when { context.has_branch && context.branch_is_protected == false };\n";
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "@id(\"team-read:read\")"));
    assert_non_null(strstr(text, "when { true };"));
    assert_non_null(strstr(text, "@id(\"admins-merge:branch_delete\")"));
    assert_non_null(strstr(text, "when { context.has_target_branch && context.target_branch_is_protected };"));
    free(text);
    og_policy_free(p);
    /* Names are escaped as Cedar string literals; a rule without a scope has no `when`. */
    p = load("version: 1\ngroups: {\"q\\\"\\\\\\t\": [a]}\nrules:\n"
             "  - {id: \"r\\n1\", allow: {actors: {group: \"q\\\"\\\\\\t\"}, actions: [admin]}}\n");
    assert_int_equal(og_policy_cedar(p, "g\"1", &text, NULL), OG_OK);
    assert_non_null(strstr(text, "@id(\"r\\n1:admin\")"));
    assert_non_null(strstr(text, "Omnigraph::Group::\"q\\\"\\\\\\t\""));
    assert_non_null(strstr(text, "Omnigraph::Graph::\"g\\\"1\"\n);"));
    free(text);
    assert_int_equal(og_policy_cedar(p, "", &text, NULL), OG_ERR_INVALID);
    og_policy_free(p);
    assert_non_null(strstr(og_policy_cedar_schema(), "namespace Omnigraph"));
}

static void entities_are_cedar_json(void **state)
{
    (void)state;
    og_policy *p = load("version: 1\ngroups: {a: [x, \"q\\\"\"], b: [x]}\n");
    char *text = NULL;
    assert_int_equal(og_policy_cedar_entities(p, "g", &text, NULL), OG_OK);
    json_error_t err;
    json_t *arr = json_loads(text, 0, &err);
    assert_non_null(arr);
    assert_int_equal(json_array_size(arr), 6); /* 2 groups, 2 actors, Graph, Server */
    json_t *x = json_array_get(arr, 3);     /* actors sorted: "q\"" < "x" */
    assert_string_equal(json_string_value(json_object_get(json_object_get(x, "uid"), "id")), "x");
    assert_string_equal(json_string_value(json_object_get(json_object_get(x, "uid"), "type")), "Omnigraph::Actor");
    assert_int_equal(json_array_size(json_object_get(x, "parents")), 2);
    json_t *q = json_array_get(arr, 2);
    assert_string_equal(json_string_value(json_object_get(json_object_get(q, "uid"), "id")), "q\"");
    json_t *g = json_array_get(arr, 4);
    assert_string_equal(json_string_value(json_object_get(json_object_get(g, "uid"), "type")), "Omnigraph::Graph");
    json_decref(arr);
    free(text);
    assert_int_equal(og_policy_cedar_entities(p, "", &text, NULL), OG_ERR_INVALID);
    og_policy_free(p);
}

/* ---- tests files ---- */

static void expect_tests_error(const char *yaml, og_status code, const char *msg)
{
    og_policy_tests *t = (og_policy_tests *)0x1;
    og_status st = og_policy_tests_parse(yaml, strlen(yaml), "t.yaml", &t);
    if (st != code || strcmp(og_error_message(), msg)) fprintf(stderr, "got %d \"%s\"\n", st, og_error_message());
    assert_int_equal(st, code);
    assert_string_equal(og_error_message(), msg);
    assert_null(t);
}

static void runs_tests_files(void **state)
{
    (void)state;
    og_policy *p = load(team_bundle);
    const char *yaml = "version: 1\ncases:\n"
                       "  - {id: read-main, actor: act-andrew, action: read, branch: main, expect: allow}\n"
                       "  - {id: write-main, actor: act-andrew, action: change, branch: main, expect: deny}\n"
                       "  - {id: merge, actor: act-ragnor, action: branch_merge, branch: f, target_branch: main, expect: allow}\n"
                       "  - {id: wrong, actor: nobody, action: read, expect: allow}\n";
    og_policy_tests *t = NULL;
    assert_int_equal(og_policy_tests_parse(yaml, strlen(yaml), "t.yaml", &t), OG_OK);
    assert_int_equal(og_policy_tests_count(t), 4);
    size_t failed = 9;
    char *report = NULL;
    assert_int_equal(og_policy_tests_run(p, t, "g", &failed, &report), OG_OK);
    assert_int_equal(failed, 1);
    assert_string_equal(report, "ok   read-main: allow by rule team-read\n"
                                "ok   write-main: deny\n"
                                "ok   merge: allow by rule admins-merge\n"
                                "FAIL wrong: expected allow but got deny (policy denied action 'read' for unknown "
                                "actor 'nobody')\n");
    free(report);
    og_policy_tests_free(t);
    og_policy_free(p);

    /* `query:` names the stored query of an invoke_query case */
    p = load(query_bundle);
    yaml = "version: 1\ncases:\n"
           "  - {id: intern-add, actor: bob, action: invoke_query, query: add_person, expect: deny}\n"
           "  - {id: guest-friends, actor: gus, action: invoke_query, query: friends, expect: allow}\n";
    assert_int_equal(og_policy_tests_parse(yaml, strlen(yaml), "t.yaml", &t), OG_OK);
    assert_int_equal(og_policy_tests_run(p, t, "g", &failed, &report), OG_OK);
    assert_int_equal(failed, 0);
    assert_string_equal(report, "ok   intern-add: deny by rule interns-no-writes\n"
                                "ok   guest-friends: allow by rule guests-friends\n");
    free(report);
    og_policy_tests_free(t);
    og_policy_free(p);

    expect_tests_error("version: 2\n", OG_ERR_INVALID, "t.yaml:1: policy test version must be 1");
    expect_tests_error("cases: []\n", OG_ERR_PARSE, "t.yaml:1: missing field 'version'");
    expect_tests_error("version: 1\ncases:\n  - {id: a, actor: x, action: read, expect: allow}\n"
                       "  - {id: a, actor: x, action: read, expect: deny}\n",
                       OG_ERR_INVALID, "t.yaml:4: duplicate policy test case id 'a'");
    expect_tests_error("version: 1\ncases:\n  - {id: \" \", actor: x, action: read, expect: allow}\n", OG_ERR_INVALID,
                       "t.yaml:3: policy test case ids must not be blank");
    expect_tests_error("version: 1\ncases:\n  - {id: a, actor: \"\", action: read, expect: allow}\n", OG_ERR_INVALID,
                       "t.yaml:3: policy test case 'a' must not use a blank actor");
    expect_tests_error("version: 1\ncases:\n  - {id: a, actor: x, action: read, expect: maybe}\n", OG_ERR_PARSE,
                       "t.yaml:3: unknown expectation 'maybe' (expected allow or deny)");
    expect_tests_error("version: 1\ncases:\n  - {id: a, actor: x, action: fly, expect: allow}\n", OG_ERR_PARSE,
                       "t.yaml:3: unknown policy action 'fly'");
    expect_tests_error("version: 1\ncases:\n  - {id: a, actor: x, action: read}\n", OG_ERR_PARSE,
                       "t.yaml:3: missing field 'expect' in a test case");
    expect_tests_error("version: 1\ncases:\n  - {id: a, actor: x, action: read, expect: allow, graph: g}\n",
                       OG_ERR_PARSE,
                       "t.yaml:3: unknown field 'graph' in a test case (expected one of: id, actor, action, branch, "
                       "target_branch, query, branch_creator, target_branch_creator, expect)");
}

/* ---- the cookbook's real bundles ---- */

static void cookbook_bundles(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/data/cookbook-industry-intel/policies/intel.policy.yaml", OG_SHARED_DIR);
    if (access(path, R_OK) != 0) {
        printf("SKIP: %s is absent (the shared data set is not beside this clone)\n", path);
        return;
    }
    og_policy *p = NULL;
    assert_int_equal(og_policy_load(path, OG_POLICY_KIND_GRAPH, &p), OG_OK);
    assert_int_equal(og_policy_actor_count(p), 2);
    og_policy_decision d;
    decide(p, "act-reader", OG_POLICY_INVOKE_QUERY, NULL, NULL, &d);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "invoke-stored-queries");
    decide(p, "act-reader", OG_POLICY_CHANGE, "main", NULL, &d);
    assert_false(d.allowed);
    decide(p, "act-analyst", OG_POLICY_CHANGE, "main", NULL, &d);
    assert_true(d.allowed);
    assert_string_equal(d.matched_rule_id, "analyst-writes");
    decide(p, "act-analyst", OG_POLICY_EXPORT, "feature", NULL, &d);
    assert_string_equal(d.matched_rule_id, "read-data");
    decide(p, "act-analyst", OG_POLICY_SCHEMA_APPLY, NULL, "main", &d);
    assert_false(d.allowed);
    og_policy_free(p);
    /* The server bundle carries `kind: server`, a field the reference's loader rejects as
     * unknown (deny_unknown_fields); so do we, with the line. */
    snprintf(path, sizeof path, "%s/data/cookbook-industry-intel/policies/server.policy.yaml", OG_SHARED_DIR);
    assert_int_equal(og_policy_load(path, OG_POLICY_KIND_SERVER, &p), OG_ERR_PARSE);
    assert_non_null(strstr(og_error_message(), "server.policy.yaml:4: unknown field 'kind'"));
}

static void example_bundle_passes_its_tests(void **state)
{
    (void)state;
    og_policy *p = NULL;
    og_policy_tests *t = NULL;
    assert_int_equal(og_policy_load(OG_SOURCE_DIR "/examples/policy/graph.policy.yaml", OG_POLICY_KIND_GRAPH, &p), OG_OK);
    assert_int_equal(og_policy_tests_load(OG_SOURCE_DIR "/examples/policy/graph.policy.tests.yaml", &t), OG_OK);
    size_t failed = 1;
    char *report = NULL;
    assert_int_equal(og_policy_tests_run(p, t, "knowledge", &failed, &report), OG_OK);
    if (failed) fprintf(stderr, "%s", report);
    assert_int_equal(failed, 0);
    assert_true(og_policy_tests_count(t) >= 10);
    free(report);
    og_policy_tests_free(t);
    og_policy_free(p);
    assert_int_equal(og_policy_load(OG_SOURCE_DIR "/examples/policy/server.policy.yaml", OG_POLICY_KIND_SERVER, &p), OG_OK);
    og_policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejects_each_validation_rule),
        cmocka_unit_test(rejects_bad_shapes),
        cmocka_unit_test(accepts_minimal_and_null_sections),
        cmocka_unit_test(decides_branch_scopes),
        cmocka_unit_test(decides_target_branch_scopes),
        cmocka_unit_test(unknown_actor_is_denied),
        cmocka_unit_test(long_names_truncate_the_message),
        cmocka_unit_test(matched_rule_is_the_smallest_id),
        cmocka_unit_test(invoke_query_denial_is_masked),
        cmocka_unit_test(decides_per_query_and_deny_rules),
        cmocka_unit_test(rejects_bad_query_rules),
        cmocka_unit_test(stored_query_only_grants),
        cmocka_unit_test(confusable_names_are_protected),
        cmocka_unit_test(compiles_query_rules_to_cedar),
        cmocka_unit_test(decides_ownership_scopes),
        cmocka_unit_test(server_bundle_allows_graph_list),
        cmocka_unit_test(decides_without_a_bundle),
        cmocka_unit_test(actions_parse_and_name),
        cmocka_unit_test(compiles_to_cedar),
        cmocka_unit_test(entities_are_cedar_json),
        cmocka_unit_test(runs_tests_files),
        cmocka_unit_test(cookbook_bundles),
        cmocka_unit_test(example_bundle_passes_its_tests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
