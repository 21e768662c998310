/*
 * test_cli_formats.c — `--format json|jsonl|csv|table` is never silently ignored (issue 16):
 * every verb (and subcommand) × every format either prints that format or is a usage error
 * (exit 2) naming the verb and the formats it has.  The verb list is read from the binary's
 * own `--help`, so a new verb without a row here fails the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <jansson.h>

#include "cli_run.h"

enum { J = 1, L = 2, C = 4, T = 8, ALL = J | L | C | T, REPORT = J | T };

/* One invocation: `%F` in it becomes the format's name (so writes that cannot repeat get a
 * fresh name per format); EX is the examples directory.  `rc` is the exit status expected
 * when the format is accepted; `label` is the verb as the refusal names it. */
typedef struct fcase {
    const char *label;
    const char *args;
    unsigned accepted;
    int rc;
} fcase;

#define Q "-e 'query q() { match { $b: Book } return { $b.name, $b.year } order { $b.name } limit 2 }'"
#define M "-e 'query m() { delete Member where card = \"no-such-card\" }'"
static const fcase cases[] = {
    {"query", "query g " Q, ALL, 0},
    {"query", "read g " Q, ALL, 0},
    {"mutate", "mutate g " M, ALL, 0},
    {"mutate", "change g " M, ALL, 0},
    {"load", "load --data EX/library/seed.jsonl --mode overwrite g", ALL, 0},
    {"snapshot", "snapshot g", ALL, 0},
    {"export", "export g", L, 0},
    {"schema check", "schema check EX/library/schema.pg", REPORT, 0},
    {"schema plan", "schema plan --schema EX/library/schema.pg g", REPORT, 0},
    {"schema plan", "schema plan --schema EX/library/schema.pg --from EX/library/schema.pg", REPORT, 0},
    {"schema apply", "schema apply --schema EX/library/schema.pg g", REPORT, 0},
    {"schema show", "schema show g", 0, 0},
    {"schema get", "schema get g", 0, 0},
    {"branch create", "branch create b-%F g", REPORT, 0},
    {"branch list", "branch list g", ALL, 0},
    {"branch merge", "branch merge b-json --into main g", REPORT, 0},
    {"branch delete", "branch delete b-%F g", REPORT, 0},
    {"commit list", "commit list g", ALL, 0},
    {"commit show", "commit show main g", ALL, 0},
    {"commit changes", "commit changes main g", ALL, 0},
    {"changes", "changes --from main~1 --to main g", ALL, 0},
    {"changes poll", "changes poll --start beginning g", ALL, 0},
    {"changes baseline", "changes baseline --out base-%F.jsonl g", REPORT, 0},
    {"blob get", "blob get node Book 9780000000011 cover g", 0, 0},
    {"blob stat", "blob stat node Book 9780000000011 cover g", REPORT, 0},
    {"version", "version", REPORT, 0},
    {"analyze", "analyze the quick foxes", ALL, 0},
    {"lint", "lint --schema EX/library/schema.pg --query EX/library/queries.gq", REPORT, 0},
    {"init", "init --schema EX/library/schema.pg g-%F", REPORT, 0},
    {"index status", "index status g", ALL, 0},
    {"index build", "index build g", ALL, 0},
    {"optimize", "optimize g", REPORT, 0},
    {"cleanup", "cleanup g", REPORT, 0},
    {"embed", "embed --clean --store g", REPORT, 0},
    {"cluster validate", "cluster validate --config cl", REPORT, 0},
    {"cluster import", "cluster import --config cl-%F", REPORT, 0},
    {"cluster plan", "cluster plan --config cl", REPORT, 0},
    {"cluster apply", "cluster apply --config cl", REPORT, 0},
    {"cluster status", "cluster status --config cl", REPORT, 0},
    {"cluster force-unlock", "cluster force-unlock no-such-lock --config cl", REPORT, 1},
    {"queries list", "queries list --cluster cl", ALL, 0},
    {"queries validate", "queries validate --cluster cl", REPORT, 0},
    {"queries run", "queries run adults --params '{\"min\": 30}' --cluster cl", ALL, 0},
    {"policy validate", "policy validate EX/policy/graph.policy.yaml", REPORT, 0},
    {"policy test", "policy test EX/policy/graph.policy.yaml EX/policy/graph.policy.tests.yaml", REPORT, 0},
    {"policy explain", "policy explain EX/policy/graph.policy.yaml --actor alice --action read", REPORT, 0},
    {"policy compile", "policy compile EX/policy/graph.policy.yaml", 0, 0},
    {"mcp", "mcp --store g", 0, 0},
    {"test", "test EX/library", 0, 0},
    /* operator config (docs/cli.md "Remote mode and operator config"); nothing here reaches a server */
    {"alias", "alias no-such-alias", ALL, 2},
    {"alias", "alias list", REPORT, 0},
    {"graphs", "graphs list --server http://127.0.0.1:1", REPORT, 1},
    {"profile", "profile list", REPORT, 0},
    {"profile", "profile show no-such-profile", REPORT, 1},
    {"login", "login no-such-server --token t", 0, 0},
    {"logout", "logout no-such-server", 0, 0},
    {"shell", "shell g -c 'query q() { match { $b: Book } return { $b.name, $b.year } order { $b.name } limit 2 }'", J | C | T, 0},
};

static const char *const fmt_names[] = {"json", "jsonl", "csv", "table"};

static void expand(char *out, size_t cap, const char *args, const char *fmt);

static int setup(void **state)
{
    (void)state;
    if (cli_scratch_new("/tmp/og-cli-fmt-XXXXXX")) return -1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/home", dir); /* the operator config of this test only (alias, profile) */
    setenv("OMNIGRAPH_HOME", cmd, 1);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && B='%s' && E='%s/examples' && $B init --schema $E/library/schema.pg g --quiet >/dev/null"
             " && $B load --data $E/library/seed.jsonl --mode overwrite g --quiet >/dev/null"
             " && printf 'cover bytes' > cover.bin"
             " && cp -r $E/cluster cl && cp -r $E/cluster cl-json && cp -r $E/cluster cl-table"
             " && $B cluster import --config cl >/dev/null && $B cluster apply --config cl >/dev/null 2>&1",
             dir, bin, OG_SOURCE_DIR);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

/* args with %F -> fmt and EX -> the examples directory. */
static void expand(char *out, size_t cap, const char *args, const char *fmt)
{
    size_t n = 0;
    for (const char *p = args; *p && n + 1 < cap; p++) {
        const char *rep = NULL;
        size_t skip = 0;
        if (p[0] == '%' && p[1] == 'F') rep = fmt, skip = 1;
        else if (!strncmp(p, "EX/", 3)) rep = OG_SOURCE_DIR "/examples/", skip = 2;
        if (rep) {
            n += (size_t)snprintf(out + n, cap - n, "%s", rep);
            p += skip;
        } else {
            out[n++] = *p;
        }
    }
    out[n < cap ? n : cap - 1] = '\0';
}

static void check_output(const fcase *c, int f, const char *out)
{
    json_error_t e;
    if (f == 0) {
        json_t *j = json_loads(out, 0, &e);
        if (!j) print_error("%s --format json: not one JSON document (%s): %.300s\n", c->args, e.text, out);
        assert_non_null(j);
        json_decref(j);
    } else if (f == 1) {
        int lines = 0;
        for (const char *l = out; *l;) {
            size_t n = strcspn(l, "\n");
            json_t *j = json_loadb(l, n, 0, &e);
            if (!j) print_error("%s --format jsonl: line %d is not JSON: %.*s\n", c->args, lines + 1, (int)n, l);
            assert_non_null(j);
            json_decref(j);
            lines++;
            l += n + (l[n] == '\n');
        }
        assert_true(lines >= 1);
    } else if (f == 2) {
        const char *eol = strchr(out, '\n');
        assert_non_null(eol);
        assert_true(eol > out && eol[-1] == '\r'); /* RFC 4180 line ends */
    } else {
        assert_true(out[0] != '\0');
        json_t *j = json_loads(out, 0, &e);
        if (j) print_error("%s --format table printed JSON: %.200s\n", c->args, out);
        assert_null(j);
    }
}

static void every_verb_and_format_is_printed_or_refused(void **state)
{
    (void)state;
    static char out[1 << 20];
    char args[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const fcase *c = &cases[i];
        for (int f = 0; f < 4; f++) {
            expand(args, sizeof args, c->args, fmt_names[f]);
            int accepted = (c->accepted >> f) & 1;
            /* stdout only when accepted; stderr too when it must be a refusal */
            int rc = run(out, sizeof out, "cd '%s' && %s %s --format %s %s </dev/null", dir, bin, args, fmt_names[f],
                         accepted ? "2>/dev/null" : "2>&1 >/dev/null");
            if (!accepted) {
                if (rc != 2 || !strstr(out, c->label) || !strstr(out, "--format"))
                    print_error("%s --format %s: rc %d, expected a usage error naming '%s': %s\n", args, fmt_names[f],
                                rc, c->label, out);
                assert_int_equal(rc, 2);
                assert_non_null(strstr(out, c->label));
                continue;
            }
            if (rc != c->rc) print_error("%s --format %s: rc %d, expected %d\n", args, fmt_names[f], rc, c->rc);
            assert_int_equal(rc, c->rc);
            if (c->rc == 0) check_output(c, f, out);
        }
        /* an unknown format is a usage error that names the verb and what it prints */
        expand(args, sizeof args, c->args, "yaml");
        int rc = run(out, sizeof out, "cd '%s' && %s %s --format yaml 2>&1 >/dev/null </dev/null", dir, bin, args);
        if (rc != 2) print_error("%s --format yaml: rc %d: %s\n", args, rc, out);
        assert_int_equal(rc, 2);
    }
}

/* `--json --format table` contradict each other; --format given twice is a usage error. */
static void contradictions_are_usage_errors(void **state)
{
    (void)state;
    char out[4096];
    assert_int_equal(run(out, sizeof out, "cd '%s' && %s cluster status --config cl --json --format table 2>&1", dir, bin), 2);
    assert_non_null(strstr(out, "contradict"));
    assert_int_equal(run(out, sizeof out, "cd '%s' && %s optimize g --format json --format table 2>&1", dir, bin), 2);
    assert_non_null(strstr(out, "given twice"));
    assert_int_equal(run(out, sizeof out, "cd '%s' && %s version --format 2>&1", dir, bin), 2);
    assert_non_null(strstr(out, "needs a value"));
    /* --format=json is --format json */
    assert_int_equal(run(out, sizeof out, "%s version --format=json", bin), 0);
    assert_non_null(strstr(out, "\"storage_version\""));
    /* flags that used to be ignored: policy validate/test --json, schema show --json */
    assert_int_equal(run(out, sizeof out, "%s policy compile %s/examples/policy/graph.policy.yaml --json 2>&1", bin,
                         OG_SOURCE_DIR), 2);
    assert_int_equal(run(out, sizeof out, "cd '%s' && %s schema show g --json 2>&1", dir, bin), 2);
}

/* --quiet (docs/cli.md): no target echo and no summary line of a write, on stdout or stderr;
 * what the user asked for (rows, --json / --format output, a dry run's report, errors) stays. */
static void quiet_drops_chatter_and_keeps_data(void **state)
{
    (void)state;
    static char out[65536], loud[65536];
    static const char *const writes[] = {
        "init --schema EX/library/schema.pg q",
        "load --data EX/library/seed.jsonl --mode overwrite q",
        "mutate q -e 'query m() { update Member set { name: \"Q\" } where card = \"C-001\" }'",
        "branch create qb q",
        "branch merge qb q",
        "branch delete qb q",
        "schema apply --schema EX/library/schema.pg q",
        "optimize q",
        "index build q",
        "cleanup --confirm q",
    };
    char args[1024];
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
        expand(args, sizeof args, writes[i], "");
        int rc = run(out, sizeof out, "cd '%s' && %s %s --quiet 2>&1", dir, bin, args);
        if (rc != 0 || out[0]) print_error("%s --quiet: rc %d, printed: %s\n", args, rc, out);
        assert_int_equal(rc, 0);
        assert_string_equal(out, "");
    }
    /* asked-for output stays: --json of a write, a read's rows, a dry run's report */
    expand(args, sizeof args, "load --data EX/library/seed.jsonl --mode overwrite q --json --quiet", "");
    assert_int_equal(run(out, sizeof out, "cd '%s' && %s %s 2>/dev/null", dir, bin, args), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_decref(j);
    const char *reads[] = {"query q " Q " --format csv", "commit list q", "snapshot q", "export q", "cleanup q",
                           "index status q", "branch list q"};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        assert_int_equal(run(loud, sizeof loud, "cd '%s' && %s %s 2>/dev/null", dir, bin, reads[i]), 0);
        assert_int_equal(run(out, sizeof out, "cd '%s' && %s %s --quiet 2>&1", dir, bin, reads[i]), 0);
        assert_true(loud[0] != '\0');
        if (strcmp(out, loud)) print_error("%s: --quiet changed a read's output\n", reads[i]);
        assert_string_equal(out, loud);
    }
    /* errors are never quiet */
    assert_int_equal(run(out, sizeof out, "cd '%s' && %s load --data nope.jsonl --mode merge q --quiet 2>&1", dir, bin), 1);
    assert_non_null(strstr(out, "nope.jsonl"));
}

/* Every verb of `omnigraph --help` has a row in the table above. */
static void every_verb_has_a_row(void **state)
{
    (void)state;
    static char help[16384];
    assert_int_equal(run(help, sizeof help, "%s --help", bin), 0);
    int verbs = 0;
    for (char *l = strstr(help, "\ncommands:\n"); l && (l = strchr(l + 1, '\n'));) {
        if (strncmp(l, "\n  ", 3) || l[3] == '(') continue;
        char verb[32];
        if (sscanf(l + 3, "%31s", verb) != 1) continue;
        int found = 0;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !found; i++)
            found = !strncmp(cases[i].args, verb, strlen(verb)) && cases[i].args[strlen(verb)] == ' ';
        if (!found && strcmp(verb, "version")) print_error("verb '%s' has no row in cases[]\n", verb);
        assert_true(found || !strcmp(verb, "version"));
        verbs++;
    }
    assert_true(verbs >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_verb_has_a_row),
        cmocka_unit_test(every_verb_and_format_is_printed_or_refused),
        cmocka_unit_test(contradictions_are_usage_errors),
        cmocka_unit_test(quiet_drops_chatter_and_keeps_data),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
