/*
 * test_cli_graph.c — the graph verbs of the `omnigraph` binary: init/load/query/mutate exit
 * codes and outputs, --if-commit losing with exit code 4, time travel with --at, and a
 * lossless export -> load round trip of examples/library and, when ../shared/data is
 * present, of the cookbook graph.
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

#include "cli_run.h"
#include "../og_test_data.h"

static int setup(void **state)
{
    (void)state;
    return cli_scratch_new("/tmp/og-cli-XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

static void init_load_query_mutate_and_exit_codes(void **state)
{
    (void)state;
    char out[65536];
    write_file("s.pg", "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n");
    write_file("d.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"Grace\",\"age\":45}}\n"
                          "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Grace\"}\n");
    write_file("q.gq", "query friends($n: String) { match { $p: Person { name: $n } $p knows $f } return { $f.name, $f.age } }\n"
                       "query older($a: I32) { match { $p: Person $p.age > $a } return { $p.name } order { $p.name } }\n"
                       "query bump($n: String) { update Person set { age: 50 } where name = $n }\n");
    assert_int_equal(run(NULL, 0, "%s init --schema %s/s.pg %s/g 2>/dev/null", bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "%s init --schema %s/s.pg %s/g 2>/dev/null", bin, dir, dir), 1); /* already there */
    assert_int_equal(run(NULL, 0, "%s load --data %s/d.jsonl %s/g 2>/dev/null", bin, dir, dir), 2);  /* no --mode */
    assert_int_equal(run(out, sizeof out, "%s load --quiet --json --data %s/d.jsonl --mode overwrite %s/g", bin, dir, dir), 0);
    char commit1[32] = "";
    const char *c = strstr(out, "\"graph_commit_id\": \"");
    assert_non_null(c);
    memcpy(commit1, c + 20, 26);

    assert_int_equal(run(out, sizeof out, "%s query --store %s/g --query %s/q.gq friends --params '{\"n\":\"Ada\"}' --format csv", bin, dir, dir), 0);
    assert_string_equal(out, "f.name,f.age\r\nGrace,45\r\n");
    assert_int_equal(run(out, sizeof out, "%s query --store %s/g -e 'query q() { match { $p: Person } return { count($p) as n } }' --format jsonl", bin, dir), 0);
    assert_non_null(strstr(out, "{\"n\":2}"));
    /* a compile error: exit 1 with the T-code on stderr */
    assert_int_equal(run(out, sizeof out, "%s query --store %s/g -e 'query q() { match { $p: Robot } return { $p.name } }' 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "T1"));

    /* --if-commit against the current head works, against an old one exits 4 */
    assert_int_equal(run(out, sizeof out, "%s mutate --store %s/g --query %s/q.gq bump --params '{\"n\":\"Ada\"}' --if-commit %s --json", bin, dir, dir, commit1), 0);
    assert_non_null(strstr(out, "\"affected_nodes\": 1"));
    assert_int_equal(run(NULL, 0, "%s mutate --store %s/g --query %s/q.gq bump --params '{\"n\":\"Grace\"}' --if-commit %s 2>/dev/null", bin, dir, dir, commit1), 4);
    /* no match: exit 0, nothing published */
    assert_int_equal(run(out, sizeof out, "%s mutate --store %s/g --query %s/q.gq bump --params '{\"n\":\"Nobody\"}' --json", bin, dir, dir), 0);
    assert_non_null(strstr(out, "\"commit\": null"));

    assert_int_equal(run(out, sizeof out, "%s query --store %s/g --query %s/q.gq older --params '{\"a\":40}' --format csv", bin, dir, dir), 0);
    assert_string_equal(out, "p.name\r\nAda\r\nGrace\r\n");
    assert_int_equal(run(out, sizeof out, "%s query --store %s/g --at %s --query %s/q.gq older --params '{\"a\":40}' --format csv", bin, dir, commit1, dir), 0);
    assert_string_equal(out, "p.name\r\nGrace\r\n");
    assert_int_equal(run(out, sizeof out, "%s schema show %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "node Person"));

    /* write budgets (docs/maintenance.md "Budgets of mutations and loads"): over budget = exit 1, `limit`, nothing
     * published; a malformed value is a usage error */
    assert_int_equal(run(out, sizeof out, "%s load --data %s/d.jsonl --mode merge --max-memory 100 %s/g 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "load stopped: memory budget of 100 bytes"));
    assert_int_equal(run(out, sizeof out, "%s mutate --store %s/g --query %s/q.gq bump --params '{\"n\":\"Grace\"}' --max-memory 10 2>&1", bin, dir, dir), 1);
    assert_non_null(strstr(out, "mutation stopped: memory budget of 10 bytes"));
    assert_int_equal(run(NULL, 0, "%s load --data %s/d.jsonl --mode merge --timeout soon %s/g 2>/dev/null", bin, dir, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s query --store %s/g --query %s/q.gq older --params '{\"a\":40}' --format csv", bin, dir, dir), 0);
    assert_string_equal(out, "p.name\r\nAda\r\nGrace\r\n"); /* the graph answers as before */
    assert_int_equal(run(NULL, 0, "%s mutate --store %s/g --query %s/q.gq bump --params '{\"n\":\"Grace\"}' --timeout 1m --max-memory 1G", bin, dir, dir), 0);
}

/* Export -> load -> export is byte-stable and keeps every record of the seed. */
static void round_trip(const char *src, const char *tag)
{
    char a[1 << 16], b[1 << 16];
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/schema.pg %s/%s1 && %s load --quiet --data %s/seed.jsonl --mode overwrite %s/%s1",
                         bin, src, dir, tag, bin, src, dir, tag), 0);
    assert_int_equal(run(NULL, 0, "%s export %s/%s1 > %s/%s-e1.jsonl", bin, dir, tag, dir, tag), 0);
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/schema.pg %s/%s2 && %s load --quiet --data %s/%s-e1.jsonl --mode overwrite %s/%s2",
                         bin, src, dir, tag, bin, dir, tag, dir, tag), 0);
    assert_int_equal(run(NULL, 0, "%s export %s/%s2 > %s/%s-e2.jsonl", bin, dir, tag, dir, tag), 0);
    assert_int_equal(run(a, sizeof a, "wc -l < %s/%s-e1.jsonl; wc -l < %s/seed.jsonl", dir, tag, src), 0);
    int n1 = 0, n0 = 0;
    sscanf(a, "%d %d", &n1, &n0);
    assert_true(n1 > 0);
    assert_int_equal(n1, n0);
    assert_int_equal(run(b, sizeof b, "cmp %s/%s-e1.jsonl %s/%s-e2.jsonl && echo same", dir, tag, dir, tag), 0);
    assert_string_equal(b, "same\n");
}

static void export_then_load_reproduces_the_example_graph(void **state)
{
    (void)state;
    round_trip(OG_SOURCE_DIR "/examples/library", "lib");
}

#define COOKBOOK OG_SHARED_DIR "/data/cookbook-industry-intel"
static int have_cookbook;

static void export_then_load_reproduces_the_cookbook_graph(void **state)
{
    (void)state;
    if (!have_cookbook) return; /* main printed the SKIP line */
    round_trip(COOKBOOK, "c");
}

int main(void)
{
    have_cookbook = og_test_have_data("cli_test_cli_graph (cookbook round trip)", COOKBOOK);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_load_query_mutate_and_exit_codes),
        cmocka_unit_test(export_then_load_reproduces_the_example_graph),
        cmocka_unit_test(export_then_load_reproduces_the_cookbook_graph),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
