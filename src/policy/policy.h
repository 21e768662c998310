/*
 * policy.h — the policy engine's contract: YAML policy bundles, their Cedar compilation, and
 * authorization decisions (reference-surfaces.md §4, docs/policy.md).
 *
 * Why a layer of its own: the server (HTTP boundary), the engine's `_as` writers and the
 * offline CLI (`omnigraph policy ...`) must reach the same decision from the same bundle, so
 * the decision lives in one small library that depends only on util and libyaml.
 *
 * A loaded og_policy is immutable: og_policy_decide() allocates nothing and may be called from
 * any number of threads at once.  The decision is exactly what Cedar decides for the text
 * og_policy_cedar() prints (the differential test tests/policy/ checks this against
 * @cedar-policy/cedar-wasm); the C evaluator here never calls Cedar.
 */
#ifndef OG_POLICY_POLICY_H
#define OG_POLICY_POLICY_H

#include <stddef.h>

#include "omnigraph.h"

typedef struct og_policy og_policy;

/* The actions of §4.  Names (og_policy_action_name) are the YAML / Cedar spellings. */
typedef enum og_policy_action {
    OG_POLICY_READ = 0,          /* "read": query, snapshot, list branches and commits */
    OG_POLICY_EXPORT,            /* "export" */
    OG_POLICY_CHANGE,            /* "change": mutate, load */
    OG_POLICY_SCHEMA_APPLY,      /* "schema_apply" */
    OG_POLICY_BRANCH_CREATE,     /* "branch_create" */
    OG_POLICY_BRANCH_DELETE,     /* "branch_delete" */
    OG_POLICY_BRANCH_MERGE,      /* "branch_merge" */
    OG_POLICY_ADMIN,             /* "admin": reserved, no call site */
    OG_POLICY_INVOKE_QUERY,      /* "invoke_query": stored queries; a deny is masked as 404 */
    OG_POLICY_GRAPH_LIST,        /* "graph_list": server-scoped (resource Server::"root") */
    OG_POLICY_ACTION_COUNT
} og_policy_action;

/* Which resource a bundle governs; checked at load (§4: a graph bundle may not contain
 * graph_list, a server bundle may contain only graph_list). */
typedef enum og_policy_kind {
    OG_POLICY_KIND_GRAPH = 0,    /* bound to graph ids: resource Graph::"<graph_id>" */
    OG_POLICY_KIND_SERVER = 1    /* bound to `cluster`: resource Server::"root" */
} og_policy_kind;

/* "read" -> OG_POLICY_READ ...; OG_ERR_INVALID "unknown policy action 'x'" otherwise. */
og_status og_policy_action_parse(const char *name, og_policy_action *out);
const char *og_policy_action_name(og_policy_action a);
/* 1 for graph_list (resource Server::"root"), 0 for the per-graph actions. */
int og_policy_action_is_server(og_policy_action a);

/* Loads, validates and compiles a bundle file.  Errors (message "<path>:<line>: <what>"):
 * OG_ERR_IO (unreadable), OG_ERR_PARSE (not YAML, or a value of the wrong shape, an unknown
 * field, an unknown action), OG_ERR_INVALID (a §4 validation rule, e.g. "policy rule 'r'
 * references unknown group 'g'").  Nothing is returned on error.  Free with og_policy_free. */
og_status og_policy_load(const char *path, og_policy_kind kind, og_policy **out);
/* The same from memory; `name` stands for the path in messages. */
og_status og_policy_parse(const char *src, size_t len, const char *name, og_policy_kind kind,
                          og_policy **out);
void og_policy_free(og_policy *p);

og_policy_kind og_policy_get_kind(const og_policy *p);
/* 1 when branch (non-NULL) is one of the bundle's protected_branches or confusable with one
 * (the same UTS #39 skeleton after NFKC case folding, util/ident.h: `Main`, `mаin`, `ｍａｉｎ`,
 * `main` + U+200B all count as `main`) — the Cedar context's branch_is_protected /
 * target_branch_is_protected.  A name that cannot be compared (not UTF-8) counts as
 * protected. */
int og_policy_is_protected(const og_policy *p, const char *branch);
/* The i-th protected branch name (sorted), or NULL past the end: for surfaces that must ask
 * "allowed on some branch?" (MCP tools/list), one protected name stands for all of them. */
const char *og_policy_protected_at(const og_policy *p, size_t i);
/* 1 when some rule names individual stored queries (`queries:`), so "may this actor invoke
 * stored queries?" depends on the query (surfaces then list only the invocable ones). */
int og_policy_has_query_rules(const og_policy *p);
/* 1 when some rule has an `owned` scope, so a surface must fill the request's branch_creator /
 * target_branch_creator (a look-up in the graph it can skip otherwise). */
int og_policy_has_owner_rules(const og_policy *p);
/* 1 when `branch` is in the namespace of `actor`: its first '/'-separated segment is exactly
 * the actor id (`agent-7/fix-names` for `agent-7`) — the Cedar context's
 * branch_namespace == principal.  An actor id containing '/' has no namespace. */
int og_policy_in_actor_namespace(const char *actor, const char *branch);
/* Distinct actor ids over all groups (`policy validate` prints it). */
size_t og_policy_actor_count(const og_policy *p);

/* One authorization question.  The actor comes from the matched bearer token (never from the
 * client).  Request scopes (§4): read/export/change -> branch; schema_apply/branch_delete ->
 * target_branch; branch_create -> branch = from, target_branch = new; branch_merge -> branch =
 * source, target_branch = target; invoke_query/graph_list/admin -> neither.  NULL = absent. */
typedef struct og_policy_request {
    const char *actor;
    og_policy_action action;
    const char *graph_id;       /* the graph of the route; unused for graph_list; may be NULL */
    const char *branch;
    const char *target_branch;
    /* The stored query being called (the Cedar context's has_query / query): on invoke_query,
     * and on the read or change a stored query's call is then decided on.  Matched by rules
     * with `queries:` (an OmniGraph-C extension); NULL = absent, as for every ad-hoc request
     * (then only rules without `queries:` apply, so a per-query read grant never allows an
     * ad-hoc query). */
    const char *query;
    /* Who created `branch` / `target_branch` (the actor of the branch's create entry,
     * og_db_branch_creator), for the `owned` scope; NULL or "" = unknown (never owned).  A
     * surface fills them when og_policy_has_owner_rules(); they are the Cedar context's
     * branch_creator / target_branch_creator. */
    const char *branch_creator;
    const char *target_branch_creator;
} og_policy_request;

#define OG_POLICY_MESSAGE_MAX 512

typedef struct og_policy_decision {
    int allowed;                /* 1 allow, 0 deny */
    int unknown_actor;          /* denied because the actor is in no group */
    int mask_as_not_found;      /* a deny the HTTP surface must report as 404 (invoke_query) */
    int forbidden;              /* denied by a matching `deny` rule (matched_rule_id names it) */
    /* Smallest matching rule id (Cedar policy ids "<rule_id>:<action>" map back to it): of the
     * matching `deny` rules when one matched (Cedar's forbid wins; allowed is then 0), else of
     * the matching `allow` rules; NULL when no rule matched.  Points into the og_policy: valid
     * until og_policy_free. */
    const char *matched_rule_id;
    /* "policy allowed action 'read' for actor 'a'" / "policy denied action 'change' on branch
     * 'main' for actor 'a'" / "policy denied action 'read' for unknown actor 'x'" (truncated to
     * fit, never unterminated). */
    char message[OG_POLICY_MESSAGE_MAX];
} og_policy_decision;

/* Decides one request.  OG_OK with *out filled for every allow or deny; OG_ERR_INVALID only
 * for a malformed request (NULL actor, action out of range) — the server maps that to 500
 * ("internal policy error").  Thread-safe, allocation-free. */
og_status og_policy_decide(const og_policy *p, const og_policy_request *req, og_policy_decision *out);

/* The decision where no bundle governs the resource (the server's runtime states, §3):
 * a server-scoped action (graph_list) is always denied — the registry stays closed until a
 * cluster bundle allows it, even with --unauthenticated; otherwise an authenticated request
 * (tokens configured: default-deny mode, or a graph without a bundle) may only `read`; an
 * unauthenticated one (open mode) is allowed.  req->actor may be NULL when unauthenticated.
 * matched_rule_id is always NULL; mask_as_not_found is set for a denied invoke_query. */
og_status og_policy_decide_unbound(int authenticated, const og_policy_request *req, og_policy_decision *out);

/* The Cedar text the bundle compiles to for `graph_id` (ignored for server bundles): one
 * `@id("<rule_id>:<action>") permit(...)` per (rule, action), in rule order.  *out is
 * malloc'd, NUL-terminated; free() it. */
og_status og_policy_cedar(const og_policy *p, const char *graph_id, char **out, size_t *len);
/* The Cedar entities of the bundle as Cedar's JSON entity format: every group, every actor
 * (parents: its groups), Graph::"<graph_id>" and Server::"root" — with og_policy_cedar() and
 * og_policy_cedar_schema(), enough for any Cedar tool to reproduce a decision.  *out is
 * malloc'd, NUL-terminated; free() it. */
og_status og_policy_cedar_entities(const og_policy *p, const char *graph_id, char **out, size_t *len);
/* The Cedar schema (namespace Omnigraph) the compiled policies are written against. */
const char *og_policy_cedar_schema(void);

/* ---- policy tests files (`omnigraph policy test`, docs/policy.md) ----
 * version: 1
 * cases: [{id, actor, action, branch?, target_branch?, expect: allow|deny}]  (ids unique) */
typedef struct og_policy_tests og_policy_tests;
og_status og_policy_tests_load(const char *path, og_policy_tests **out);
og_status og_policy_tests_parse(const char *src, size_t len, const char *name, og_policy_tests **out);
void og_policy_tests_free(og_policy_tests *t);
size_t og_policy_tests_count(const og_policy_tests *t);
/* Runs every case against p for `graph_id`.  *failed = number of mismatches; *report (malloc'd,
 * free()) holds one line per case: "ok <id>" or "FAIL <id>: expected allow but got deny (...)". */
og_status og_policy_tests_run(const og_policy *p, const og_policy_tests *t, const char *graph_id,
                              size_t *failed, char **report);

#endif
