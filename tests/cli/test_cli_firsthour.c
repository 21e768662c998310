/*
 * test_cli_firsthour.c — what a new user meets first (issue 16): `omnigraph version` and its
 * spellings, `omnigraph help VERB`, and the CLI's answers to the mistakes a new user makes.
 * Every case checks the exit code, the message and that the graph (or the disk) is unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli_run.h"

static int setup(void **state)
{
    (void)state;
    return cli_scratch_new("/tmp/og-cli16-XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

static void version_spellings_print_release_storage_and_build(void **state)
{
    (void)state;
    char a[4096], b[4096], c[4096];
    assert_int_equal(run(a, sizeof a, "%s version", bin), 0);
    assert_int_equal(run(b, sizeof b, "%s --version", bin), 0);
    assert_int_equal(run(c, sizeof c, "%s -v", bin), 0);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    assert_true(strncmp(a, "omnigraph 0.", 12) == 0);
    assert_non_null(strstr(a, "\nstorage format: omnigraph storage version 1,"));
    assert_non_null(strstr(a, "\nbuild: commit "));
    assert_int_equal(run(a, sizeof a, "%s version --json", bin), 0);
    assert_non_null(strstr(a, "\"storage_version\":1"));
    assert_int_equal(run(NULL, 0, "%s version --bogus 2>/dev/null", bin), 2);
}

static void help_verb_is_the_verbs_help(void **state)
{
    (void)state;
    char a[8192], b[8192];
    assert_int_equal(run(a, sizeof a, "%s help load", bin), 0);
    assert_int_equal(run(b, sizeof b, "%s load --help", bin), 0);
    assert_string_equal(a, b);
    assert_true(strncmp(a, "usage: omnigraph load", 21) == 0);
    assert_int_equal(run(a, sizeof a, "%s help branch merge", bin), 0);
    assert_non_null(strstr(a, "omnigraph branch merge"));
    assert_int_equal(run(a, sizeof a, "%s help nosuchverb 2>&1", bin), 2);
    assert_non_null(strstr(a, "unknown command 'nosuchverb'"));
    assert_int_equal(run(a, sizeof a, "%s help", bin), 0);
    assert_non_null(strstr(a, "omnigraph help <command>"));
    assert_int_equal(run(a, sizeof a, "%s help help", bin), 0);
    assert_true(strncmp(a, "usage: omnigraph help [COMMAND [SUBCOMMAND]]\n", 45) == 0);
    assert_int_equal(run(a, sizeof a, "%s help help extra 2>&1", bin), 2);
    assert_int_equal(run(a, sizeof a, "%s help read", bin), 0); /* the aliases' help is their verb's */
    assert_int_equal(run(b, sizeof b, "%s help query", bin), 0);
    assert_string_equal(a, b);
    assert_int_equal(run(a, sizeof a, "%s help change", bin), 0);
    assert_true(strncmp(a, "usage: omnigraph mutate", 23) == 0);
}

static void make_graph(void);

/* A flag before the subcommand works as after it (`branch --format csv list`). */
static void flags_before_the_subcommand_work_as_after_it(void **state)
{
    (void)state;
    char a[8192], b[8192];
    make_graph();
    static const char *pairs[][2] = {
        {"branch --format csv list %s/g", "branch list --format csv %s/g"},
        {"branch --json list %s/g", "branch list --json %s/g"},
        {"commit --limit 1 --format csv list %s/g", "commit list --limit 1 --format csv %s/g"},
        {"schema --json check %s/s.pg", "schema check --json %s/s.pg"},
        {"index --format csv status %s/g", "index status --format csv %s/g"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char c0[512], c1[512];
        snprintf(c0, sizeof c0, pairs[i][0], dir);
        snprintf(c1, sizeof c1, pairs[i][1], dir);
        assert_int_equal(run(a, sizeof a, "%s %s 2>&1", bin, c0), 0);
        assert_int_equal(run(b, sizeof b, "%s %s 2>&1", bin, c1), 0);
        if (strcmp(a, b)) fprintf(stderr, "%s\n---\n%s\n", a, b);
        assert_string_equal(a, b);
    }
    /* a write, and the format gate's errors, name the subcommand found after the flags */
    assert_int_equal(run(a, sizeof a, "%s branch --quiet create dev %s/g 2>&1", bin, dir), 0);
    assert_string_equal(a, "");
    assert_int_equal(run(a, sizeof a, "%s branch --format csv merge dev %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(a, "omnigraph branch merge: --format csv is not available"));
    assert_int_equal(run(a, sizeof a, "%s branch --quiet frobnicate %s/g 2>&1", bin, dir), 2);
}

/* A read (or a write) on a mistyped path fails with not_found and creates nothing. */
static void a_mistyped_path_creates_nothing(void **state)
{
    (void)state;
    char out[8192], missing[256];
    struct stat sb;
    snprintf(missing, sizeof missing, "%s/typo/graph", dir);
    static const char *verbs[] = {
        "query --store %s -e 'query q() { match { $p: P } return { $p } }'",
        "snapshot %s", "export %s", "commit list %s", "branch list %s", "schema show %s",
        "changes --from a --to b %s", "load --data /dev/null --mode append %s",
        "mutate --store %s -e 'query m() { delete P where a = 1 }'",
    };
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, verbs[i], missing);
        assert_int_equal(run(out, sizeof out, "%s %s --quiet 2>&1", bin, cmd), 1);
        assert_non_null(strstr(out, "no OmniGraph graph at"));
        char typo[256];
        snprintf(typo, sizeof typo, "%s/typo", dir);
        assert_int_not_equal(stat(typo, &sb), 0);
    }
}

/* A small graph at dir/g: two people, one edge. */
static void make_graph(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s/g", dir);
    assert_int_equal(system(cmd), 0);
    write_file("s.pg", "node Person { name: String @key  age: I32?  born: Date? }\nedge Knows: Person -> Person\n");
    write_file("d.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36,\"born\":\"1815-12-10\"}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"Grace\",\"age\":45}}\n"
                          "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Grace\"}\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g >/dev/null && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g",
                         bin, dir, dir, bin, dir, dir), 0);
}

/* The head commit of main, into head[27]. */
static void head_of(char head[27])
{
    char out[4096];
    assert_int_equal(run(out, sizeof out, "%s commit list --limit 1 %s/g", bin, dir), 0);
    memcpy(head, out, 26);
    head[26] = 0;
}

static void an_empty_ndjson_file_publishes_nothing(void **state)
{
    (void)state;
    char out[4096], before[27], after[27];
    make_graph();
    head_of(before);
    write_file("empty.jsonl", "\n\n");
    static const char *modes[] = {"append", "merge", "overwrite"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(run(out, sizeof out, "%s load --data %s/empty.jsonl --mode %s %s/g 2>/dev/null", bin, dir, modes[i], dir), 0);
        assert_string_equal(out, "no changes (nothing published)\n");
    }
    assert_int_equal(run(out, sizeof out, "%s load --quiet --json --data %s/empty.jsonl --mode merge %s/g", bin, dir, dir), 0);
    assert_non_null(strstr(out, "\"commit\": null"));
    head_of(after);
    assert_string_equal(before, after);
    /* the overwrite did not empty the graph */
    assert_int_equal(run(out, sizeof out, "%s query %s/g -e 'query q() { match { $p: Person } return { count($p) as n } }' --format csv", bin, dir), 0);
    assert_string_equal(out, "n\r\n2\r\n");
}

static void repeated_and_conflicting_flags_are_usage_errors(void **state)
{
    (void)state;
    char out[4096], before[27], after[27];
    make_graph();
    head_of(before);
    const char *q = "'query q() { match { $p: Person } return { $p.name } }'";
    struct { const char *fmt; const char *msg; } cases[] = {
        {"%s query --store %s/g -e %s -e %s 2>&1", "--query-string given twice"},
        {"%s query --store %s/g -e %s --branch main --at main 2>&1 #%s", "--branch and --at"},
        {"%s query --store %s/g --store x -e %s 2>&1 #%s", "--store given twice"},
        {"%s query --store %s/g -e %s NAME other/root 2>&1 #%s", "two graph roots"},
        {"%s query --store %s/g ./g -e %s 2>&1 #%s", "two graph roots given: --store"},
        {"%s mutate --store %s/g s3://b/g -e %s 2>&1 #%s", "two graph roots given: --store"},
        {"%s snapshot --store %s/g other/root 2>&1 #%s%s", "two graph roots"},
        {"%s load --data a --data b --mode append %s/g 2>&1 #%s%s", "--data given twice"},
        {"%s mutate --store %s/g -e %s --params '{}' --params '{}' 2>&1 #%s", "--params given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(run(out, sizeof out, cases[i].fmt, bin, dir, q, q), 2);
        if (!strstr(out, cases[i].msg)) fprintf(stderr, "case %zu: %s\n", i, out);
        assert_non_null(strstr(out, cases[i].msg));
    }
    head_of(after);
    assert_string_equal(before, after);
}

static void a_positional_root_works_for_query_and_mutate(void **state)
{
    (void)state;
    char out[4096];
    make_graph();
    write_file("q.gq", "query names() { match { $p: Person } return { $p.name } order { $p.name } }\n"
                       "query older($a: I32) { match { $p: Person  $p.age > $a } return { $p.name } }\n"
                       "query bump($n: String) { update Person set { age: 50 } where name = $n }\n");
    assert_int_equal(run(out, sizeof out, "%s query %s/g --query %s/q.gq names --format csv", bin, dir, dir), 0);
    assert_string_equal(out, "p.name\r\nAda\r\nGrace\r\n");
    assert_int_equal(run(out, sizeof out, "%s query --query %s/q.gq older %s/g --params '{\"a\":40}' --format csv", bin, dir, dir), 0);
    assert_string_equal(out, "p.name\r\nGrace\r\n");
    assert_int_equal(run(out, sizeof out, "%s mutate --query %s/q.gq bump %s/g --params '{\"n\":\"Ada\"}' 2>/dev/null", bin, dir, dir), 0);
    assert_non_null(strstr(out, "affected 1 nodes"));
    /* a bare word is a query name, not a root: no graph given */
    assert_int_equal(run(out, sizeof out, "env -u OMNIGRAPH_STORE %s query --query %s/q.gq names 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "no graph given"));
    assert_non_null(strstr(out, "'names' is not an existing directory, so it was read as the query NAME"));
    /* nothing was created for the word */
    struct stat st;
    assert_int_not_equal(stat("names", &st), 0);
    /* a positional ROOT wins over $OMNIGRAPH_STORE, as on every other verb; a NAME does not */
    assert_int_equal(run(out, sizeof out, "OMNIGRAPH_STORE=%s/nope %s query -e 'query n() { match { $p: Person } return "
                         "{ $p.name } order { $p.name } }' %s/g --format csv", dir, bin, dir), 0);
    assert_string_equal(out, "p.name\r\nAda\r\nGrace\r\n");
    assert_int_equal(run(out, sizeof out, "OMNIGRAPH_STORE=%s/g %s query --query %s/q.gq names --format csv", dir, bin, dir), 0);
    assert_string_equal(out, "p.name\r\nAda\r\nGrace\r\n");
    /* the other verbs that take --store take a positional ROOT too (embed, mcp among them) */
    write_file("init.jsonrpc", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n");
    assert_int_equal(run(out, sizeof out, "%s mcp %s/g < %s/init.jsonrpc", bin, dir, dir), 0);
    assert_non_null(strstr(out, "\"id\":1"));
    assert_int_equal(run(out, sizeof out, "%s mcp --store %s/g %s/g < /dev/null 2>&1", bin, dir, dir), 2);
    assert_non_null(strstr(out, "two graphs given"));
    assert_int_equal(run(out, sizeof out, "%s mcp --store %s/g --store %s/g < /dev/null 2>&1", bin, dir, dir), 2);
    assert_non_null(strstr(out, "--store given twice"));
    static const char *verbs[] = {"snapshot", "export", "commit list", "branch list", "schema show", "index status",
                                  "changes poll", "optimize --quiet", "cleanup --quiet"};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        char a[8192], b[8192];
        int ra = run(a, sizeof a, "OMNIGRAPH_EMBED_PROVIDER=mock %s %s %s/g 2>&1", bin, verbs[i], dir);
        int rb = run(b, sizeof b, "OMNIGRAPH_EMBED_PROVIDER=mock %s %s --store %s/g 2>&1", bin, verbs[i], dir);
        if (ra || rb) fprintf(stderr, "%s: %d %d\n%s\n%s\n", verbs[i], ra, rb, a, b);
        assert_int_equal(ra, 0);
        assert_int_equal(rb, 0);
    }
    /* embed opens the graph either way (this schema has nothing to embed: the same answer) */
    char e1[4096], e2[4096];
    assert_int_equal(run(e1, sizeof e1, "OMNIGRAPH_EMBED_PROVIDER=mock %s embed --quiet %s/g 2>&1", bin, dir), 1);
    assert_int_equal(run(e2, sizeof e2, "OMNIGRAPH_EMBED_PROVIDER=mock %s embed --quiet --store %s/g 2>&1", bin, dir), 1);
    assert_string_equal(e1, e2);
    assert_non_null(strstr(e1, "declares no @embed property"));
}

static void unknown_parameters_and_query_names_are_errors_that_list_the_choices(void **state)
{
    (void)state;
    char out[4096];
    make_graph();
    write_file("q.gq", "query names() { match { $p: Person } return { $p.name } }\n"
                       "query older($a: I32) { match { $p: Person  $p.age > $a } return { $p.name } }\n");
    assert_int_equal(run(out, sizeof out, "%s query %s/g --query %s/q.gq older --params '{\"a\":1,\"b\":2}' 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "unknown parameter 'b': query 'older' declares $a"));
    assert_int_equal(run(out, sizeof out, "%s query %s/g --query %s/q.gq 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "q.gq holds 2 queries; name the one to run: names, older"));
    assert_int_equal(run(out, sizeof out, "%s query %s/g --query %s/q.gq nope 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "q.gq has no query named 'nope'; it has: names, older"));
}

static void errors_name_the_file_and_give_hints(void **state)
{
    (void)state;
    char out[4096], before[27], after[27];
    make_graph();
    head_of(before);
    write_file("bad.gq", "query q() {\n  match { $p: Person  $p.name = 'Ada' }\n  return { $p.name } }\n");
    assert_int_equal(run(out, sizeof out, "%s query %s/g --query %s/bad.gq 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "bad.gq:2:33: unexpected character"));
    assert_non_null(strstr(out, "hint: strings are written in double quotes"));
    write_file("date.gq", "query q() {\n  match { $p: Person  $p.born < \"1900-01-01\" }\n  return { $p.name } }\n");
    assert_int_equal(run(out, sizeof out, "%s query %s/g --query %s/date.gq 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "date.gq:2:"));
    assert_non_null(strstr(out, "write the date as date(\"2024-01-31\")"));
    /* the same hint for a date in an inline match, and one line per error (no blank line) */
    write_file("date2.gq", "query q() {\n  match { $p: Person { born: \"1815-12-10\" } }\n  return { $p.name } }\n");
    assert_int_equal(run(out, sizeof out, "%s query %s/g --query %s/date2.gq 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "date2.gq:2:30: T3: property `born` has type Date but got String; write the date as "
                                "date(\"2024-01-31\")\n"));
    assert_null(strstr(out, "\n\n"));
    write_file("bom.jsonl", "\xef\xbb\xbf{\"type\":\"Person\",\"data\":{\"name\":\"Bo\"}}\n");
    assert_int_equal(run(out, sizeof out, "%s load --quiet --data %s/bom.jsonl --mode merge %s/g 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "bom.jsonl:1:"));
    assert_non_null(strstr(out, "byte order mark"));
    write_file("cut.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Cy\"}}\n{\"type\":\"Person\",\"data\":{\"na");
    assert_int_equal(run(out, sizeof out, "%s load --quiet --data %s/cut.jsonl --mode merge %s/g 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "cut.jsonl:2:"));
    assert_non_null(strstr(out, "truncated"));
    write_file("num.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Di\",\"age\":36.5}}\n");
    assert_int_equal(run(out, sizeof out, "%s load --quiet --data %s/num.jsonl --mode merge %s/g 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "expected I32, got a number with a fraction"));
    head_of(after);
    assert_string_equal(before, after);
}

/* Failed loads and mutations delete what they wrote before they report the error: the graph
 * directory holds exactly the files it held before, and the head has not moved. */
static void failed_writes_leave_no_files_behind(void **state)
{
    (void)state;
    char out[4096], before[27], after[27], files0[64], files1[64];
    make_graph();
    head_of(before);
    assert_int_equal(run(files0, sizeof files0, "find %s/g -type f | sort | md5sum", dir), 0);
    /* 3000 good lines (the load writes data files as it goes), then a bad one */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "for i in $(seq 1 3000); do printf '{\"type\":\"Person\",\"data\":{\"name\":\"p%%d\",\"age\":%%d}}\\n' $i $i; done > %s/big.jsonl"
             " && printf '{\"type\":\"Person\",\"data\":{\"name\":\"bad\",\"age\":\"old\"}}\\n' >> %s/big.jsonl", dir, dir);
    assert_int_equal(system(cmd), 0);
    static const char *modes[] = {"merge", "append", "overwrite"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(run(out, sizeof out, "OG_LOAD_FLUSH_ROWS=500 %s load --quiet --data %s/big.jsonl --mode %s %s/g 2>&1", bin, dir,
                             modes[i], dir), 1);
        assert_non_null(strstr(out, "big.jsonl:3001:"));
    }
    /* a mutation refused by a constraint, and one stopped by its budget */
    assert_int_equal(run(out, sizeof out, "%s mutate --quiet %s/g -e 'query m() { insert Knows { from: \"Ada\", to: \"Nobody\" } }' 2>&1",
                         bin, dir), 1);
    assert_int_equal(run(out, sizeof out, "%s load --quiet --timeout 1ms --data %s/big.jsonl --mode merge %s/g 2>&1", bin, dir, dir), 1);
    assert_int_equal(run(files1, sizeof files1, "find %s/g -type f | sort | md5sum", dir), 0);
    assert_string_equal(files0, files1);
    head_of(after);
    assert_string_equal(before, after);
}

static void data_dash_reads_stdin(void **state)
{
    (void)state;
    char out[4096];
    make_graph();
    write_file("eve.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Eve\"}}\n");
    write_file("noname.jsonl", "{\"type\":\"Person\",\"data\":{}}\n");
    assert_int_equal(run(out, sizeof out, "%s load --data - --mode append %s/g < %s/eve.jsonl 2>/dev/null", bin, dir, dir), 0);
    assert_non_null(strstr(out, "loaded 1 records"));
    assert_int_equal(run(out, sizeof out, "%s load --quiet --data - --mode append %s/g < %s/noname.jsonl 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "<stdin>:1:"));
}

static void schema_plan_exits_1_when_unsupported(void **state)
{
    (void)state;
    char out[8192];
    make_graph();
    write_file("s2.pg", "node Person { name: String @key  age: I32?  born: Date?  phone: String }\nedge Knows: Person -> Person\n");
    assert_int_equal(run(out, sizeof out, "%s schema plan --schema %s/s2.pg %s/g", bin, dir, dir), 1);
    assert_non_null(strstr(out, "supported: no"));
    assert_int_equal(run(out, sizeof out, "%s schema plan --schema %s/s2.pg --json %s/g", bin, dir, dir), 1);
    assert_non_null(strstr(out, "\"supported\":false"));
    assert_int_equal(run(out, sizeof out, "%s schema plan --schema %s/s2.pg --from %s/s.pg", bin, dir, dir), 1);
    assert_int_equal(run(out, sizeof out, "%s schema plan --schema %s/s.pg %s/g", bin, dir, dir), 0);
}

static void reference_spellings(void **state)
{
    (void)state;
    char a[8192], b[8192];
    make_graph();
    const char *q = "-e 'query q() { match { $p: Person } return { $p.name } order { $p.name } }' --format csv";
    assert_int_equal(run(a, sizeof a, "%s query %s/g %s", bin, dir, q), 0);
    assert_int_equal(run(b, sizeof b, "%s read %s/g %s", bin, dir, q), 0);
    assert_string_equal(a, b);
    assert_int_equal(run(a, sizeof a, "%s change %s/g -e 'query m() { update Person set { age: 1 } where name = \"Ada\" }' 2>/dev/null", bin, dir), 0);
    assert_non_null(strstr(a, "affected 1 nodes"));
    assert_int_equal(run(a, sizeof a, "%s schema show %s/g", bin, dir), 0);
    assert_int_equal(run(b, sizeof b, "%s schema get %s/g", bin, dir), 0);
    assert_string_equal(a, b);
    char head[27];
    head_of(head);
    assert_int_equal(run(a, sizeof a, "%s snapshot --snapshot %s %s/g", bin, head, dir), 0);
    assert_non_null(strstr(a, head));
    /* --as is for writes */
    assert_int_equal(run(a, sizeof a, "%s query --as bob %s/g %s 2>&1", bin, dir, q), 2);
    assert_non_null(strstr(a, "--as names the actor of a write"));
    assert_int_equal(run(a, sizeof a, "%s snapshot --as bob %s/g 2>&1", bin, dir), 2);
    assert_int_equal(run(a, sizeof a, "%s export --as bob %s/g 2>&1", bin, dir), 2);
    static const char *reads[] = {"commit list", "commit show main", "branch list", "schema show", "index status",
                                  "changes poll", "changes --from main~1 --to main", "blob stat node Person Ada name",
                                  "read -e 'query q() { match { $p: Person } return { $p.name } }'"};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        assert_int_equal(run(a, sizeof a, "%s %s --as bob %s/g 2>&1", bin, reads[i], dir), 2);
        assert_non_null(strstr(a, "--as names the actor of a write; a read records none"));
    }
}

/* Table columns line up by display width (wide CJK, combining marks); a null is an empty
 * cell, distinct from the text "null" and from an empty string (""). */
static void tables_align_by_display_width_and_show_nulls_distinctly(void **state)
{
    (void)state;
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s/w", dir);
    assert_int_equal(system(cmd), 0);
    write_file("w.pg", "node P { name: String @key  nick: String?  n: I32? }\n");
    write_file("w.jsonl", "{\"type\":\"P\",\"data\":{\"name\":\"a\",\"nick\":\"null\",\"n\":1}}\n"
                          "{\"type\":\"P\",\"data\":{\"name\":\"b\xe7\x94\xb0\xe4\xb8\xad\",\"nick\":\"\",\"n\":2}}\n"
                          "{\"type\":\"P\",\"data\":{\"name\":\"ce\xcc\x81\",\"n\":3}}\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/w.pg %s/w >/dev/null && %s load --quiet --data %s/w.jsonl --mode overwrite %s/w >/dev/null",
                         bin, dir, dir, bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s query %s/w -e 'query q() { match { $p: P } return { $p.name, $p.nick, $p.n } order { $p.n } }' --format table", bin, dir), 0);
    assert_string_equal(out, "p.name  p.nick  p.n\n"
                             "------  ------  ---\n"
                             "a       null    1\n"
                             "b\xe7\x94\xb0\xe4\xb8\xad   \"\"      2\n"
                             "ce\xcc\x81              3\n"
                             "(3 rows)\n");
    /* csv: null is an empty field, the empty string a quoted one */
    assert_int_equal(run(out, sizeof out, "%s query %s/w -e 'query q() { match { $p: P } return { $p.nick } order { $p.n } }' --format csv", bin, dir), 0);
    assert_string_equal(out, "p.nick\r\nnull\r\n\"\"\r\n\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_spellings_print_release_storage_and_build),
        cmocka_unit_test(help_verb_is_the_verbs_help),
        cmocka_unit_test(flags_before_the_subcommand_work_as_after_it),
        cmocka_unit_test(a_mistyped_path_creates_nothing),
        cmocka_unit_test(an_empty_ndjson_file_publishes_nothing),
        cmocka_unit_test(repeated_and_conflicting_flags_are_usage_errors),
        cmocka_unit_test(a_positional_root_works_for_query_and_mutate),
        cmocka_unit_test(unknown_parameters_and_query_names_are_errors_that_list_the_choices),
        cmocka_unit_test(errors_name_the_file_and_give_hints),
        cmocka_unit_test(failed_writes_leave_no_files_behind),
        cmocka_unit_test(data_dash_reads_stdin),
        cmocka_unit_test(schema_plan_exits_1_when_unsupported),
        cmocka_unit_test(reference_spellings),
        cmocka_unit_test(tables_align_by_display_width_and_show_nulls_distinctly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
