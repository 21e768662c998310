/*
 * test_cli_policy.c — `omnigraph policy validate|test|explain|compile` end to end: outputs,
 * exit statuses (0 ok, 1 invalid input or failing case, 2 usage) and the messages a user sees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char tmpdir[256];

/* Runs `omnigraph <args>` in tmpdir with stderr merged into stdout; returns the exit status. */
static int run(const char *args, char *out, size_t cap)
{
    const char *bin = getenv("OG_BINARY_DIR");
    if (!bin) bin = OG_BINARY_DIR;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && '%s/omnigraph' %s 2>&1", tmpdir, bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/og-cli-policy-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    write_file("p.yaml", "version: 1\n"
                         "groups:\n  team: [act-a, act-b]\n  admins: [act-root]\n"
                         "protected_branches: [main]\n"
                         "rules:\n"
                         "  - id: team-read\n    allow: {actors: {group: team}, actions: [read], branch_scope: any}\n"
                         "  - id: team-write\n    allow: {actors: {group: team}, actions: [change], branch_scope: unprotected}\n"
                         "  - id: admins-merge\n    allow: {actors: {group: admins}, actions: [branch_merge],"
                         " target_branch_scope: protected}\n"
                         "  - id: team-invoke\n    allow: {actors: {group: team}, actions: [invoke_query]}\n");
    write_file("t.yaml", "version: 1\ncases:\n"
                         "  - {id: a-reads, actor: act-a, action: read, branch: main, expect: allow}\n"
                         "  - {id: a-no-main, actor: act-a, action: change, branch: main, expect: deny}\n"
                         "  - {id: root-merges, actor: act-root, action: branch_merge, branch: f, target_branch: main,"
                         " expect: allow}\n");
    write_file("bad-t.yaml", "version: 1\ncases:\n"
                             "  - {id: a-writes-main, actor: act-a, action: change, branch: main, expect: allow}\n");
    write_file("bad.yaml", "version: 1\ngroups: {team: [a]}\nrules:\n"
                           "  - {id: r, allow: {actors: {group: ops}, actions: [read]}}\n");
    write_file("server.yaml", "version: 1\ngroups: {admins: [act-root]}\nrules:\n"
                              "  - {id: list, allow: {actors: {group: admins}, actions: [graph_list]}}\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd);
}

static void validate_reports_actors_and_errors(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("policy validate p.yaml", out, sizeof out), 0);
    assert_string_equal(out, "policy valid: p.yaml [3 actors]\n");
    assert_int_equal(run("policy validate bad.yaml", out, sizeof out), 1);
    assert_string_equal(out, "omnigraph policy: bad.yaml:4: policy rule 'r' references unknown group 'ops'\n");
    assert_int_equal(run("policy validate missing.yaml", out, sizeof out), 1);
    assert_non_null(strstr(out, "cannot read missing.yaml"));
    assert_int_equal(run("policy validate server.yaml", out, sizeof out), 1);
    assert_non_null(strstr(out, "in a Graph policy file; move it to a server policy file"));
    assert_int_equal(run("policy validate server.yaml --server", out, sizeof out), 0);
    assert_string_equal(out, "policy valid: server.yaml [1 actors]\n");
}

static void test_runs_cases(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("policy test p.yaml t.yaml", out, sizeof out), 0);
    assert_string_equal(out, "ok   a-reads: allow by rule team-read\n"
                             "ok   a-no-main: deny\n"
                             "ok   root-merges: allow by rule admins-merge\n"
                             "policy tests passed: 3 cases\n");
    assert_int_equal(run("policy test p.yaml --tests t.yaml", out, sizeof out), 0);
    assert_int_equal(run("policy test p.yaml bad-t.yaml", out, sizeof out), 1);
    assert_string_equal(out, "FAIL a-writes-main: expected allow but got deny (policy denied action 'change' on branch "
                             "'main' for actor 'act-a')\n"
                             "policy tests failed: 1 of 1 cases\n");
    assert_int_equal(run("policy test p.yaml", out, sizeof out), 2);
}

static void explain_shows_the_decision(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("policy explain p.yaml --actor act-root --action branch_merge --branch f --target-branch main",
                         out, sizeof out), 0);
    assert_string_equal(out, "decision: allow\nactor: act-root\naction: branch_merge\nbranch: f\ntarget_branch: main\n"
                             "matched_rule: admins-merge\n"
                             "message: policy allowed action 'branch_merge' for actor 'act-root'\n");
    assert_int_equal(run("policy explain p.yaml --actor act-root --action invoke_query", out, sizeof out), 0);
    assert_non_null(strstr(out, "decision: deny\n"));
    assert_non_null(strstr(out, "http: reported as 404"));
    assert_int_equal(run("policy explain p.yaml --actor nobody --action read --branch main --json", out, sizeof out), 0);
    assert_non_null(strstr(out, "\"decision\": \"deny\""));
    assert_non_null(strstr(out, "\"unknown_actor\": true"));
    assert_non_null(strstr(out, "\"matched_rule\": null"));
    assert_int_equal(run("policy explain p.yaml --actor a --action fly", out, sizeof out), 2);
    assert_non_null(strstr(out, "unknown policy action 'fly'"));
    assert_int_equal(run("policy explain p.yaml --action read", out, sizeof out), 2);
    /* --query: per-query and deny rules (the OmniGraph-C extension), on the example cluster's bundle */
    assert_int_equal(run("policy explain " OG_SOURCE_DIR "/examples/cluster/policies/team.policy.yaml --actor ivy "
                         "--action invoke_query --query add_person",
                         out, sizeof out), 0);
    assert_string_equal(out, "decision: deny\nactor: ivy\naction: invoke_query\nquery: add_person\n"
                             "matched_rule: interns-no-stored-writes\n"
                             "http: reported as 404 (a denied invoke_query looks like an unknown query)\n"
                             "message: policy denied action 'invoke_query' on query 'add_person' for actor 'ivy' "
                             "(denied by rule 'interns-no-stored-writes')\n");
    assert_int_equal(run("policy explain " OG_SOURCE_DIR "/examples/cluster/policies/team.policy.yaml --actor gus "
                         "--action invoke_query --query friends --json",
                         out, sizeof out), 0);
    assert_non_null(strstr(out, "\"decision\": \"allow\""));
    assert_non_null(strstr(out, "\"query\": \"friends\""));
    assert_non_null(strstr(out, "\"matched_rule\": \"guests-friends\""));
}

static void compile_prints_cedar(void **state)
{
    (void)state;
    char out[16384];
    assert_int_equal(run("policy compile p.yaml --graph knowledge", out, sizeof out), 0);
    assert_non_null(strstr(out, "@id(\"team-write:change\")\npermit (\n    principal in Omnigraph::Group::\"team\",\n"
                                "    action == Omnigraph::Action::\"change\",\n"
                                "    resource == Omnigraph::Graph::\"knowledge\"\n)\n"
                                "when { context.has_branch && context.branch_is_protected == false };\n"));
    assert_int_equal(run("policy compile p.yaml --entities --graph knowledge", out, sizeof out), 0);
    assert_non_null(strstr(out, "{\"uid\": {\"type\": \"Omnigraph::Actor\", \"id\": \"act-root\"}, \"attrs\": {}, "
                                "\"parents\": [{\"type\": \"Omnigraph::Group\", \"id\": \"admins\"}]}"));
    assert_non_null(strstr(out, "{\"uid\": {\"type\": \"Omnigraph::Graph\", \"id\": \"knowledge\"}"));
    assert_int_equal(run("policy compile --schema", out, sizeof out), 0);
    assert_non_null(strstr(out, "namespace Omnigraph {"));
    assert_int_equal(run("policy frobnicate p.yaml", out, sizeof out), 2);
    assert_int_equal(run("policy", out, sizeof out), 2);
    assert_int_equal(run("policy --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: omnigraph policy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validate_reports_actors_and_errors),
        cmocka_unit_test(test_runs_cases),
        cmocka_unit_test(explain_shows_the_decision),
        cmocka_unit_test(compile_prints_cedar),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
