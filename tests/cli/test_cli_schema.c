/*
 * test_cli_schema.c — the `omnigraph` binary's first verbs, driven as a user would: global
 * --help and version, `schema check` (valid, invalid, --json) and `schema plan` (supported,
 * unsupported, --json), `schema apply --allow-data-loss` reporting what it reclaimed, exit
 * statuses and output.
 */
#include <setjmp.h>
#include <sys/stat.h>
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

/* Runs `omnigraph <args>` with stderr merged into stdout; returns the exit status. */
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
    snprintf(tmpdir, sizeof tmpdir, "/tmp/og-cli-schema-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    write_file("good.pg", "node Person { slug: String @key name: String @index age: I32? }\n"
                          "edge Knows: Person -> Person @card(0..5) { since: Date? }\n");
    write_file("bad.pg", "node Person { slug: String? @key }\nedge Knows: Person -> Nobody\n");
    write_file("new.pg", "node Human @rename_from(\"Person\") { slug: String @key name: String @index age: I32? email: String? }\n"
                         "edge Knows: Human -> Human @card(0..5) { since: Date? }\n");
    write_file("worse.pg", "node Person { slug: String @key name: String @index age: I64? }\n"
                           "edge Knows: Person -> Person @card(0..5) { since: Date? }\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void global_help_and_version(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("--help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: omnigraph <command>"));
    assert_non_null(strstr(out, "schema"));
    assert_int_equal(run("version", out, sizeof out), 0);
    assert_non_null(strstr(out, "omnigraph 0."));
    assert_int_equal(run("", out, sizeof out), 2);
    assert_int_equal(run("frobnicate", out, sizeof out), 2);
    assert_non_null(strstr(out, "unknown command 'frobnicate'"));
}

static void schema_check_valid(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("schema check good.pg", out, sizeof out), 0);
    assert_non_null(strstr(out, "good.pg: ok\n"));
    assert_non_null(strstr(out, "0 interfaces, 1 node types, 1 edge types, 4 properties\n"));
    assert_non_null(strstr(out, "2 constraints (1 key, 0 unique, 1 index, 0 range, 0 check)\n"));
    assert_non_null(strstr(out, "index intents: 0 btree, 2 inverted, 0 vector (0 @embed)\n"));
    assert_non_null(strstr(out, "edge Knows: Person -> Person @card(0..5)"));
}

static void schema_check_invalid(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("schema check bad.pg", out, sizeof out), 1);
    assert_non_null(strstr(out, "bad.pg:1:29: @key property Person.slug cannot be nullable\n  hint: "));
    assert_non_null(strstr(out, "bad.pg:2:6: edge Knows references unknown target type: Nobody\n  hint: "));
    assert_non_null(strstr(out, "bad.pg: 2 errors"));
}

/* The reference's reserved names (docs/schema-language.md): a `_`-prefixed property (the
 * search outputs `_score` / `_distance` included) and `from` / `to` on an edge are refused
 * when a schema is admitted — by `init` too, which then leaves no graph behind. */
static void reserved_names_refused_at_admission(void **state)
{
    (void)state;
    char out[8192], path[600];
    write_file("reserved.pg", "node Doc { slug: String @key _score: F64? }\n"
                              "edge Cites: Doc -> Doc { from: String? _w: I32? }\n");
    assert_int_equal(run("schema check reserved.pg", out, sizeof out), 1);
    assert_non_null(strstr(out, "reserved.pg:1:30: property name '_score' is reserved for system columns (node Doc)"));
    assert_non_null(strstr(out, "reserved.pg:2:26: property name 'from' is reserved on edge types: it names an endpoint (edge Cites)"));
    assert_non_null(strstr(out, "property name '_w' is reserved for system columns (edge Cites)"));
    assert_int_equal(run("init --schema reserved.pg ./resg", out, sizeof out), 1);
    assert_non_null(strstr(out, "property name '_score' is reserved"));
    snprintf(path, sizeof path, "%s/resg", tmpdir);
    struct stat sb;
    assert_true(stat(path, &sb) != 0 || (S_ISDIR(sb.st_mode) && rmdir(path) == 0)); /* nothing written */
    /* `from` / `to` stay ordinary on a node, `id` / `src` / `dst` everywhere */
    write_file("freed.pg", "node Trip { id: String @key from: String to: String }\nedge Leg: Trip -> Trip { src: I32? dst: I32? }\n");
    assert_int_equal(run("schema check freed.pg", out, sizeof out), 0);
}

static void schema_check_json(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("schema check --json good.pg", out, sizeof out), 0);
    assert_non_null(strstr(out, "{\"ok\":true,\"file\":\"good.pg\",\"summary\":{\"interfaces\":0,\"node_types\":1"));
    assert_int_equal(run("schema check bad.pg --json", out, sizeof out), 1);
    assert_non_null(strstr(out, "\"ok\":false"));
    assert_non_null(strstr(out, "\"line\":1,\"column\":29,\"message\":\"@key property Person.slug cannot be nullable\""));
}

static void schema_check_usage_errors(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("schema check", out, sizeof out), 2);
    assert_non_null(strstr(out, "missing <file.pg>"));
    assert_int_equal(run("schema check nope.pg", out, sizeof out), 1);
    assert_non_null(strstr(out, "cannot read nope.pg"));
    assert_int_equal(run("schema check --bogus good.pg", out, sizeof out), 2);
    assert_int_equal(run("schema check --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: omnigraph schema check <file.pg> [--json]"));
    assert_int_equal(run("schema plan --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: omnigraph schema plan --schema <new.pg> --from <old.pg> [--json]"));
    assert_int_equal(run("schema --help", out, sizeof out), 0);
    assert_int_equal(run("schema frob", out, sizeof out), 2);
}

static void schema_plan_supported(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("schema plan --schema new.pg --from good.pg", out, sizeof out), 0);
    assert_non_null(strstr(out, "supported: yes (2 steps)\n"));
    assert_non_null(strstr(out, "1. RenameType node Person -> Human\n"));
    assert_non_null(strstr(out, "2. AddProperty node Human.email: String?\n"));
    assert_int_equal(run("schema plan --schema good.pg --from good.pg", out, sizeof out), 0);
    assert_non_null(strstr(out, "no changes"));
}

static void schema_plan_unsupported_and_json(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run("schema plan --schema worse.pg --from good.pg", out, sizeof out), 1);
    assert_non_null(strstr(out, "UNSUPPORTED [OG-MF-106] changing property type for 'Person.age'"));
    assert_int_equal(run("schema plan --schema worse.pg --from good.pg --json", out, sizeof out), 1);
    assert_non_null(strstr(out, "{\"supported\":false,\"steps\":[{\"kind\":\"unsupported_change\""));
    assert_non_null(strstr(out, "\"code\":\"OG-MF-106\""));
    assert_int_equal(run("schema plan --schema bad.pg --from good.pg", out, sizeof out), 1);
    assert_non_null(strstr(out, "bad.pg:1:29: @key property Person.slug cannot be nullable"));
    assert_int_equal(run("schema plan --schema new.pg", out, sizeof out), 2);
}

/* schema apply against a graph: --allow-data-loss reports what it reclaimed (text and
 * --json), a soft drop reports "reclaimed": null, and the earlier commit's reclaimed data
 * fails to read with not_found (exit 1) naming the hard drop. */
static void schema_apply_hard_drop_reports_reclaimed(void **state)
{
    (void)state;
    char out[8192];
    write_file("h1.pg", "node Person { slug: String @key  age: I32?  nick: String? }\nnode Pet { slug: String @key }\n");
    write_file("h2.pg", "node Person { slug: String @key  age: I32? }\nnode Pet { slug: String @key }\n");
    write_file("h3.pg", "node Person { slug: String @key }\nnode Pet { slug: String @key }\n");
    write_file("h4.pg", "node Person { slug: String @key }\n");
    write_file("h.jsonl", "{\"type\":\"Person\",\"data\":{\"slug\":\"ada\",\"age\":36,\"nick\":\"c\"}}\n"
                          "{\"type\":\"Pet\",\"data\":{\"slug\":\"rex\"}}\n");
    write_file("h.gq", "query people() { match { $p: Person } return { $p.slug } }\n");
    assert_int_equal(run("init --quiet --schema h1.pg hg", out, sizeof out), 0);
    assert_int_equal(run("load --quiet --json --data h.jsonl --mode overwrite hg", out, sizeof out), 0);
    char loaded[32] = "";
    const char *p = strstr(out, "\"graph_commit_id\": \"");
    assert_non_null(p);
    memcpy(loaded, p + strlen("\"graph_commit_id\": \""), 26);
    /* soft: nothing reclaimed, the old commit still reads */
    assert_int_equal(run("schema apply --quiet --json --schema h2.pg hg", out, sizeof out), 0);
    assert_non_null(strstr(out, "\"reclaimed\": null\n}"));
    assert_non_null(strstr(out, "\"applied\": true,"));
    assert_non_null(strstr(out, "\"commit\": {\n    \"graph_commit_id\": \""));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "query --quiet --query h.gq people --at %s --format csv --store hg", loaded);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    /* hard: Person's three versions (init, load, the soft drop) go */
    assert_int_equal(run("schema apply --quiet --json --allow-data-loss --schema h3.pg hg", out, sizeof out), 0);
    assert_non_null(strstr(out, "\"mode\": \"hard\""));
    assert_non_null(strstr(out, "\"reclaimed\": {\n    \"tables\": 1,\n    \"versions\": 3,\n    \"files\": 1,\n    \"bytes\": "));
    assert_non_null(strstr(out, "\"error\": null\n  }\n}"));
    assert_int_equal(run(cmd, out, sizeof out), 1);
    assert_non_null(strstr(out, "not_found"));
    assert_non_null(strstr(out, "reclaimed by a hard drop (schema apply --allow-data-loss)"));
    assert_non_null(strstr(out, loaded));
    /* text output; a type drop removes Pet's table directory */
    assert_int_equal(run("schema apply --allow-data-loss --schema h4.pg hg", out, sizeof out), 0);
    assert_non_null(strstr(out, "DropType node Pet (hard)"));
    assert_non_null(strstr(out, "reclaimed 1 table(s): 2 version(s), 1 file(s), "));
    assert_int_equal(run("query --quiet --query h.gq people --format csv --store hg | tr -d '\\r'", out, sizeof out), 0);
    assert_string_equal(out, "p.slug\nada\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(global_help_and_version),
        cmocka_unit_test(schema_check_valid),
        cmocka_unit_test(schema_check_invalid),
        cmocka_unit_test(reserved_names_refused_at_admission),
        cmocka_unit_test(schema_check_json),
        cmocka_unit_test(schema_check_usage_errors),
        cmocka_unit_test(schema_plan_supported),
        cmocka_unit_test(schema_plan_unsupported_and_json),
        cmocka_unit_test(schema_apply_hard_drop_reports_reclaimed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
