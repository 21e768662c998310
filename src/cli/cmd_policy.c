/*
 * cmd_policy.c — `omnigraph policy validate|test|explain|compile`: offline tooling over a YAML
 * policy bundle (docs/policy.md).  Like `lint`, it reads files only and links the policy
 * layer directly (src/policy/policy.h); it never opens a graph.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "policy/policy.h"

static const char *policy_help =
    "usage: omnigraph policy validate|test|explain|compile BUNDLE.yaml [options]\n"
    "\n"
    "Offline tools for YAML policy bundles (docs/policy.md):\n"
    "  validate BUNDLE [--json]              check the bundle; print its actor count\n"
    "  test BUNDLE TESTS | --tests TESTS [--json]\n"
    "                                        run the declarative cases of a tests file\n"
    "  explain BUNDLE --actor A --action X [--branch B] [--target-branch T] [--query Q]\n"
    "          [--branch-creator C] [--target-branch-creator C] [--json]\n"
    "                                        decide one request and show the matched rule\n"
    "  compile BUNDLE [--entities]           print the Cedar policies the bundle compiles to\n"
    "                                        (--entities: its Cedar entities as JSON instead)\n"
    "  compile --schema                      print the Cedar schema\n"
    "Common options:\n"
    "  --server      the bundle is a server (cluster-scoped) bundle: only graph_list\n"
    "  --graph ID    the graph the bundle is bound to (Cedar resource Graph::\"ID\"; default\n"
    "                \"default\")\n"
    "  --json        validate, test and explain: print the result as JSON (= --format json;\n"
    "                --format table is the default text)\n"
    "Exit 0 on success, 1 when the bundle or tests file is invalid or a test case fails, 2 on\n"
    "a usage error.\n";

typedef struct policy_args {
    const char *sub;
    const char *files[2];
    size_t nfiles;
    const char *tests, *actor, *action, *branch, *target, *graph, *query, *branch_creator, *target_creator;
    int server, json, schema, entities;
} policy_args;

static int parse_args(int argc, char **argv, policy_args *a)
{
    memset(a, 0, sizeof *a);
    a->graph = "default";
    if (argc < 2) return og_cli_usage("policy", "missing subcommand (validate, test, explain or compile)");
    a->sub = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        const char **slot = NULL;
        if (!strcmp(s, "--server")) a->server = 1;
        else if (!strcmp(s, "--json")) a->json = 1;
        else if (!strcmp(s, "--schema")) a->schema = 1;
        else if (!strcmp(s, "--entities")) a->entities = 1;
        else if (!strcmp(s, "--tests")) slot = &a->tests;
        else if (!strcmp(s, "--actor")) slot = &a->actor;
        else if (!strcmp(s, "--action")) slot = &a->action;
        else if (!strcmp(s, "--branch")) slot = &a->branch;
        else if (!strcmp(s, "--target-branch")) slot = &a->target;
        else if (!strcmp(s, "--graph")) slot = &a->graph;
        else if (!strcmp(s, "--query")) slot = &a->query;
        else if (!strcmp(s, "--branch-creator")) slot = &a->branch_creator;
        else if (!strcmp(s, "--target-branch-creator")) slot = &a->target_creator;
        else if (s[0] == '-' && s[1]) return og_cli_usage("policy", "unknown option '%s'", s);
        else if (a->nfiles < 2) a->files[a->nfiles++] = s;
        else return og_cli_usage("policy", "unexpected argument '%s'", s);
        if (slot) {
            if (i + 1 >= argc) return og_cli_usage("policy", "%s needs a value", s);
            *slot = argv[++i];
        }
    }
    if (!a->nfiles && !(a->schema && !strcmp(a->sub, "compile")))
        return og_cli_usage("policy", "missing the bundle file");
    if (!a->graph[0]) return og_cli_usage("policy", "--graph must not be empty");
    return OG_EXIT_OK;
}

static og_policy *load_bundle(const policy_args *a)
{
    og_policy *p = NULL;
    if (og_policy_load(a->files[0], a->server ? OG_POLICY_KIND_SERVER : OG_POLICY_KIND_GRAPH, &p) != OG_OK) {
        fprintf(stderr, "omnigraph policy: %s\n", og_error_message());
        return NULL;
    }
    return p;
}

/* A JSON string literal of s (static buffer; one use per printf). */
static const char *quoted(const char *s)
{
    static char buf[4096];
    json_t *j = json_string(s);
    char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    snprintf(buf, sizeof buf, "%s", d ? d : "null");
    free(d);
    json_decref(j);
    return buf;
}

static int cmd_validate(const policy_args *a)
{
    if (a->nfiles != 1) return og_cli_usage("policy", "validate takes one bundle file");
    og_policy *p = load_bundle(a);
    if (!p) return OG_EXIT_FAIL;
    if (a->json)
        printf("{\"ok\": true, \"file\": %s, \"actors\": %zu}\n", quoted(a->files[0]), og_policy_actor_count(p));
    else
        printf("policy valid: %s [%zu actors]\n", a->files[0], og_policy_actor_count(p));
    og_policy_free(p);
    return OG_EXIT_OK;
}

static int cmd_test(const policy_args *a)
{
    const char *tests = a->tests ? a->tests : (a->nfiles == 2 ? a->files[1] : NULL);
    if (!tests || (a->tests && a->nfiles == 2)) return og_cli_usage("policy", "test takes BUNDLE and one TESTS file");
    og_policy *p = load_bundle(a);
    if (!p) return OG_EXIT_FAIL;
    og_policy_tests *t = NULL;
    if (og_policy_tests_load(tests, &t) != OG_OK) {
        fprintf(stderr, "omnigraph policy: %s\n", og_error_message());
        og_policy_free(p);
        return OG_EXIT_FAIL;
    }
    size_t failed = 0;
    char *report = NULL;
    int rc = OG_EXIT_FAIL;
    if (og_policy_tests_run(p, t, a->graph, &failed, &report) != OG_OK) {
        fprintf(stderr, "omnigraph policy: %s\n", og_error_message());
    } else if (a->json) { /* {"ok","cases","failed","report":[lines]} */
        json_t *o = json_object(), *lines = json_array();
        for (const char *l = report ? report : ""; *l;) {
            size_t n = strcspn(l, "\n");
            json_array_append_new(lines, json_stringn(l, n));
            l += n + (l[n] == '\n');
        }
        json_object_set_new(o, "ok", json_boolean(!failed));
        json_object_set_new(o, "cases", json_integer((json_int_t)og_policy_tests_count(t)));
        json_object_set_new(o, "failed", json_integer((json_int_t)failed));
        json_object_set_new(o, "report", lines);
        char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) puts(s);
        free(s);
        json_decref(o);
        rc = failed ? OG_EXIT_FAIL : OG_EXIT_OK;
    } else if (fputs(report, stdout), failed) {
        printf("policy tests failed: %zu of %zu cases\n", failed, og_policy_tests_count(t));
    } else {
        printf("policy tests passed: %zu cases\n", og_policy_tests_count(t));
        rc = OG_EXIT_OK;
    }
    free(report);
    og_policy_tests_free(t);
    og_policy_free(p);
    return rc;
}

static int cmd_explain(const policy_args *a)
{
    if (a->nfiles != 1) return og_cli_usage("policy", "explain takes one bundle file");
    if (!a->actor || !a->action) return og_cli_usage("policy", "explain needs --actor and --action");
    og_policy_request req = {.actor = a->actor, .graph_id = a->graph, .branch = a->branch, .target_branch = a->target,
                             .query = a->query, .branch_creator = a->branch_creator,
                             .target_branch_creator = a->target_creator};
    if (og_policy_action_parse(a->action, &req.action) != OG_OK)
        return og_cli_usage("policy", "%s (expected read, export, change, schema_apply, branch_create, branch_delete, "
                                      "branch_merge, admin, invoke_query or graph_list)", og_error_message());
    og_policy *p = load_bundle(a);
    if (!p) return OG_EXIT_FAIL;
    og_policy_decision d;
    if (og_policy_decide(p, &req, &d) != OG_OK) {
        fprintf(stderr, "omnigraph policy: %s\n", og_error_message());
        og_policy_free(p);
        return OG_EXIT_FAIL;
    }
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "decision", json_string(d.allowed ? "allow" : "deny"));
        json_object_set_new(o, "actor", json_string(a->actor));
        json_object_set_new(o, "action", json_string(og_policy_action_name(req.action)));
        json_object_set_new(o, "graph", json_string(a->graph));
        json_object_set_new(o, "branch", a->branch ? json_string(a->branch) : json_null());
        json_object_set_new(o, "target_branch", a->target ? json_string(a->target) : json_null());
        json_object_set_new(o, "query", a->query ? json_string(a->query) : json_null());
        json_object_set_new(o, "matched_rule", d.matched_rule_id ? json_string(d.matched_rule_id) : json_null());
        json_object_set_new(o, "unknown_actor", json_boolean(d.unknown_actor));
        json_object_set_new(o, "masked_as_not_found", json_boolean(d.mask_as_not_found));
        json_object_set_new(o, "message", json_string(d.message));
        char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) puts(s);
        free(s);
        json_decref(o);
    } else {
        printf("decision: %s\n", d.allowed ? "allow" : "deny");
        printf("actor: %s\n", a->actor);
        printf("action: %s\n", og_policy_action_name(req.action));
        if (a->branch) printf("branch: %s\n", a->branch);
        if (a->target) printf("target_branch: %s\n", a->target);
        if (a->query) printf("query: %s\n", a->query);
        if (d.matched_rule_id) printf("matched_rule: %s\n", d.matched_rule_id);
        if (d.mask_as_not_found) printf("http: reported as 404 (a denied invoke_query looks like an unknown query)\n");
        printf("message: %s\n", d.message);
    }
    og_policy_free(p);
    return OG_EXIT_OK;
}

static int cmd_compile(const policy_args *a)
{
    if (a->json) return og_cli_usage("policy compile", "takes no --json: it prints Cedar text (--entities: Cedar's JSON)");
    if (a->schema) {
        fputs(og_policy_cedar_schema(), stdout);
        return OG_EXIT_OK;
    }
    if (a->nfiles != 1) return og_cli_usage("policy", "compile takes one bundle file");
    og_policy *p = load_bundle(a);
    if (!p) return OG_EXIT_FAIL;
    char *text = NULL;
    int rc = OG_EXIT_OK;
    og_status st = a->entities ? og_policy_cedar_entities(p, a->graph, &text, NULL)
                               : og_policy_cedar(p, a->graph, &text, NULL);
    if (st != OG_OK) {
        fprintf(stderr, "omnigraph policy: %s\n", og_error_message());
        rc = OG_EXIT_FAIL;
    } else {
        fputs(text, stdout);
    }
    free(text);
    og_policy_free(p);
    return rc;
}

int og_cmd_policy(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(policy_help, stdout);
        return OG_EXIT_OK;
    }
    policy_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != OG_EXIT_OK) return rc;
    if (!strcmp(a.sub, "validate")) return cmd_validate(&a);
    if (!strcmp(a.sub, "test")) return cmd_test(&a);
    if (!strcmp(a.sub, "explain")) return cmd_explain(&a);
    if (!strcmp(a.sub, "compile")) return cmd_compile(&a);
    return og_cli_usage("policy", "unknown subcommand '%s' (expected validate, test, explain or compile)", a.sub);
}
