/*
 * test_cli_output.c — what the CLI prints (issues 16 and 18): `--format json|jsonl|csv|table`
 * on every verb that prints records (CSV quoting, nulls vs empty strings, usage errors); the
 * reference's `--json` shapes of snapshot and write results; the change feed verbs
 * `changes poll` (cursors, paging, filters, gaps) and `changes baseline` (a durable file and
 * the resume cursor); `blob get|stat` (ranges, --out, errors).  Each case checks the exit
 * code, the output or message, and that reads leave the graph unchanged.
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
    return cli_scratch_new("/tmp/og-cliout-XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

/* A graph with a quoted, comma-holding value, a null and an empty string, then one mutation. */
static void make_graph(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s/g", dir);
    assert_int_equal(system(cmd), 0);
    write_file("s.pg", "node Person { name: String @key  nick: String?  age: I32? }\nedge Knows: Person -> Person\n");
    write_file("d.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"nick\":\"a, \\\"the\\\" first\",\"age\":36}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\",\"nick\":\"\"}}\n"
                          "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Bob\"}\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g >/dev/null && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g >/dev/null",
                         bin, dir, dir, bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g -e 'query m() { update Person set { age: 37 } where name = \"Ada\" }' >/dev/null", bin, dir), 0);
}

static void head_of(char head[27])
{
    char out[4096];
    assert_int_equal(run(out, sizeof out, "%s commit list --limit 1 %s/g", bin, dir), 0);
    memcpy(head, out, 26);
    head[26] = 0;
}

static void every_record_verb_takes_format(void **state)
{
    (void)state;
    char out[16384], head[27], before[27];
    make_graph();
    head_of(before);
    /* commit list: csv header, CRLF, a null message is an empty field */
    assert_int_equal(run(out, sizeof out, "%s commit list --format csv %s/g", bin, dir), 0);
    assert_true(!strncmp(out, "id,created_at_utc,kind,actor,actor_via,message\r\n", 48));
    assert_non_null(strstr(out, ",mutate,omnigraph,local,\r\n")); /* a local write: actor_via local */
    assert_int_equal(run(out, sizeof out, "%s commit list --format table %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "(3 rows)\n"));
    assert_int_equal(run(out, sizeof out, "%s commit list --format jsonl --limit 1 %s/g", bin, dir), 0);
    assert_true(!strncmp(out, "{\"branch\":\"main\",\"head\":\"", 25));
    assert_non_null(strstr(out, "}\n{\"id\":\""));
    /* commit show: one record per table; branch list */
    assert_int_equal(run(out, sizeof out, "%s commit show main --format csv %s/g", bin, dir), 0);
    assert_true(!strncmp(out, "type,kind,table,version,rows\r\nPerson,node,", 42));
    assert_int_equal(run(out, sizeof out, "%s branch list --format csv %s/g", bin, dir), 0);
    head_of(head);
    char want[128];
    snprintf(want, sizeof want, "name,head,message\r\nmain,%s,\r\n", head);
    assert_string_equal(out, want);
    /* snapshot */
    assert_int_equal(run(out, sizeof out, "%s snapshot --format table %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "type    kind  table"));
    assert_non_null(strstr(out, "(2 rows)\n"));
    /* changes: csv quotes a JSON image holding quotes and commas */
    assert_int_equal(run(out, sizeof out, "%s changes --from main~1 --to main --format csv %s/g", bin, dir), 0);
    assert_true(!strncmp(out, "kind,type,id,op,before,after\r\nnode,Person,Ada,update,\"{\"\"id\"\":\"\"Ada\"\",", 70));
    assert_int_equal(run(out, sizeof out, "%s commit changes main --format table %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "node  Person  Ada  update\n(1 row)\n"));
    assert_int_equal(run(out, sizeof out, "%s changes --from main~1 --to main --format jsonl %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\n{\"kind\":\"node\",\"type\":\"Person\",\"id\":\"Ada\",\"op\":\"update\","));
    /* query: a null vs an empty string (csv), unchanged */
    assert_int_equal(run(out, sizeof out, "%s query %s/g -e 'query q() { match { $p: Person } return { $p.nick, $p.age } order { $p.name } }' --format csv", bin, dir), 0);
    assert_string_equal(out, "p.nick,p.age\r\n\"a, \"\"the\"\" first\",37\r\n\"\",\r\n");
    /* the same rows as JSON: Bob's null age has no key (columns still names it), his empty
     * nick stays "" (the reference's rows) */
    assert_int_equal(run(out, sizeof out, "%s query %s/g -e 'query q() { match { $p: Person } return { $p.nick, $p.age } order { $p.name } }' --format jsonl", bin, dir), 0);
    assert_non_null(strstr(out, "\"columns\":[\"p.nick\",\"p.age\"]"));
    assert_non_null(strstr(out, "\n{\"p.nick\":\"\"}\n"));
    /* export is a load format: jsonl, or csv of one type */
    assert_int_equal(run(out, sizeof out, "%s export --format jsonl %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "{\"type\":\"Person\""));
    assert_int_equal(run(out, sizeof out, "%s export --format table %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "export writes the load format"));
    assert_int_equal(run(out, sizeof out, "%s export --format csv %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "--format csv writes one type"));
    /* bad and contradictory formats are usage errors */
    assert_int_equal(run(out, sizeof out, "%s commit list --format xml %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "--format must be json, jsonl, csv or table (got 'xml')"));
    assert_int_equal(run(out, sizeof out, "%s branch list --json --format csv %s/g 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "--json and --format csv contradict each other"));
    assert_int_equal(run(out, sizeof out, "%s query %s/g --json --format table -e 'query q() { match { $p: Person } return { $p.name } }' 2>&1", bin, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s branch create --format csv x %s/g 2>&1", bin, dir), 2);
    head_of(head);
    assert_string_equal(head, before); /* reads and refusals changed nothing */
    /* a write's result as one record */
    assert_int_equal(run(out, sizeof out, "%s mutate --quiet --store %s/g --format csv -e 'query bump() { update Person set { age: 38 } where name = \"Ada\" }'", bin, dir), 0);
    assert_true(!strncmp(out, "commit.graph_commit_id,branch,query_name,affected_nodes,affected_edges\r\n", 72));
    assert_non_null(strstr(out, ",main,bump,1,0\r\n"));
}

static void json_shapes_are_the_references(void **state)
{
    (void)state;
    char out[16384];
    make_graph();
    /* snapshot: the reference's SnapshotOutput beside ours */
    assert_int_equal(run(out, sizeof out, "%s snapshot --json %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"graph_branch\": \"main\""));
    assert_non_null(strstr(out, "\"internal_schema_version\": 1"));
    assert_non_null(strstr(out, "\"entity_kind\": \"node\",\n      \"type_name\": \"Person\",\n      \"dataset_path\": \""));
    assert_non_null(strstr(out, "\"entity_count\": 2"));
    /* load: GraphBatchLoadOutput + CommitOutput */
    write_file("e.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Cy\"}}\n{\"edge\":\"Knows\",\"from\":\"Cy\",\"to\":\"Ada\"}\n");
    assert_int_equal(run(out, sizeof out, "%s load --quiet --json --as carol --data %s/e.jsonl --mode merge --branch dev --from main %s/g", bin, dir, dir), 0);
    assert_non_null(strstr(out, "\"branch\": \"dev\",\n  \"base_branch\": \"main\",\n  \"branch_created\": true,\n  \"mode\": \"merge\","));
    assert_non_null(strstr(out, "\"nodes\": [\n    {\n      \"name\": \"Person\",\n      \"entities_loaded\": 1\n    }\n  ]"));
    assert_non_null(strstr(out, "\"total_entities\": 2,\n  \"embedding_generation\": null,\n  \"actor_id\": \"carol\",\n  \"commit\": {\n    \"graph_commit_id\": \""));
    /* graph_manifest_version is the commit's first-parent depth: init, load, mutate, this load */
    assert_non_null(strstr(out, "\"graph_branch\": \"dev\",\n    \"graph_manifest_version\": 4,\n    \"parent_commit_id\": \""));
    {
        char more[16384];
        assert_int_equal(run(more, sizeof more, "%s snapshot --json --branch dev %s/g", bin, dir), 0);
        assert_non_null(strstr(more, "\"graph_manifest_version\": 4,"));
        assert_int_equal(run(more, sizeof more, "%s commit show dev~1 --json %s/g", bin, dir), 0);
        assert_non_null(strstr(more, "\"graph_manifest_version\": 3,"));
        assert_int_equal(run(more, sizeof more, "%s commit list --limit 2 --branch dev --json %s/g", bin, dir), 0);
        char *first = strstr(more, "\"graph_manifest_version\": 4,");
        assert_non_null(first);
        assert_non_null(strstr(first, "\"graph_manifest_version\": 3,"));
    }
    assert_non_null(strstr(out, "\"merged_parent_commit_id\": null,\n    \"actor_id\": \"carol\",\n    \"actor_via\": \"local\",\n    \"created_at\": 1"));
    /* mutate: ChangeOutput; nothing matched → commit null */
    assert_int_equal(run(out, sizeof out, "%s change --quiet --json --store %s/g -e 'query none() { update Person set { age: 1 } where name = \"Zed\" }'", bin, dir), 0);
    assert_non_null(strstr(out, "\"query_name\": \"none\",\n  \"branch\": \"main\",\n  \"affected_nodes\": 0,\n  \"affected_edges\": 0,\n  \"inserted\": 0,\n  \"updated\": 0,\n  \"deleted\": 0,\n  \"actor_id\": null,\n  \"commit\": null"));
    /* branch merge: BranchMergeOutput members */
    assert_int_equal(run(out, sizeof out, "%s branch merge --quiet --json --as carol dev %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"outcome\": \"fast_forward\",\n  \"source\": \"dev\",\n  \"target\": \"main\",\n  \"actor_id\": \"carol\""));
    /* --as is for writes */
    assert_int_equal(run(out, sizeof out, "%s commit list --as bob %s/g 2>&1", bin, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s changes poll --as bob %s/g 2>&1", bin, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s blob stat node Person Ada nick --as bob %s/g 2>&1", bin, dir), 2);
}

static void the_change_feed_polls_with_cursors(void **state)
{
    (void)state;
    char out[32768], cursor[64], head[27];
    make_graph();
    /* now: nothing replayed, a cursor at the head */
    assert_int_equal(run(out, sizeof out, "%s changes poll %s/g", bin, dir), 0);
    head_of(head);
    assert_non_null(strstr(out, "(no new commits)\n"));
    snprintf(cursor, sizeof cursor, "v1c%s", head);
    assert_non_null(strstr(out, cursor));
    assert_non_null(strstr(out, "caught_up: true"));
    /* a write, then the cursor delivers exactly it */
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g -e 'query a() { insert Person { name: \"Cy\" } }' >/dev/null", bin, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s changes poll --cursor %s --json %s/g", bin, cursor, dir), 0);
    assert_non_null(strstr(out, "\"id\": \"Cy\""));
    assert_null(strstr(out, "\"id\": \"Ada\""));
    assert_non_null(strstr(out, "\"caught_up\": true"));
    /* beginning, one change per page: every page consumed, blocks joined, same as one page */
    char all[32768];
    assert_int_equal(run(all, sizeof all, "%s changes poll --start beginning --json %s/g", bin, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s changes poll --start beginning --limit 1 --json %s/g", bin, dir), 0);
    assert_string_equal(out, all);
    assert_non_null(strstr(all, "\"endpoints\": {\n"));
    /* filters: edges only */
    assert_int_equal(run(out, sizeof out, "%s changes poll --start beginning --kind edge --format csv %s/g 2>/dev/null", bin, dir), 0);
    assert_non_null(strstr(out, "graph_commit_id,kind,type,id,op\r\n"));
    assert_non_null(strstr(out, ",edge,Knows,"));
    assert_null(strstr(out, ",node,"));
    assert_int_equal(run(out, sizeof out, "%s changes poll --start after:main~1 --format jsonl %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"op\":\"insert\""));
    assert_non_null(strstr(out, "\n{\"cursor\":\"v1c"));
    /* bad cursors and starts */
    assert_int_equal(run(out, sizeof out, "%s changes poll --cursor nonsense %s/g 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "change cursor rejected:"));
    assert_int_equal(run(out, sizeof out, "%s changes poll --cursor v1c01M8YF9XA6XPJBREA14ZXKSVD6 %s/g 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "change_feed_gap"));
    assert_int_equal(run(out, sizeof out, "%s changes poll --start yesterday %s/g 2>&1", bin, dir), 1);
    assert_int_equal(run(out, sizeof out, "%s changes poll --start now --cursor %s %s/g 2>&1", bin, cursor, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s changes poll --limit 0 %s/g 2>&1", bin, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s changes poll --kind vertex %s/g 2>&1", bin, dir), 2);
}

static void a_baseline_is_durable_then_resumes_the_feed(void **state)
{
    (void)state;
    char out[16384], head[27], path[256];
    make_graph();
    head_of(head);
    snprintf(path, sizeof path, "%s/base.jsonl", dir);
    assert_int_equal(run(out, sizeof out, "%s changes baseline --out %s --json %s/g", bin, path, dir), 0);
    char want[256];
    snprintf(want, sizeof want, "{\n  \"snapshot_commit_id\": \"%s\",\n  \"resume_cursor\": \"v1c%s\"\n}\n", head, head);
    assert_string_equal(out, want);
    assert_int_equal(run(out, sizeof out, "wc -l < %s", path), 0);
    assert_int_equal(atoi(out), 3);
    /* nodes only */
    assert_int_equal(run(out, sizeof out, "%s changes baseline --out %s --kind node %s/g", bin, path, dir), 0);
    assert_non_null(strstr(out, "resume_cursor: v1c"));
    assert_int_equal(run(out, sizeof out, "grep -c Knows %s", path), 1);
    /* a failure leaves the existing file untouched, and no temporary behind */
    assert_int_equal(run(out, sizeof out, "%s changes baseline --out %s --type Nope %s/g 2>&1", bin, path, dir), 1);
    assert_non_null(strstr(out, "no node or edge type 'Nope'"));
    assert_int_equal(run(out, sizeof out, "wc -l < %s", path), 0);
    assert_int_equal(atoi(out), 2);
    assert_int_equal(run(out, sizeof out, "ls %s | grep -c tmp", dir), 1);
    assert_int_equal(run(out, sizeof out, "%s changes baseline %s/g 2>&1", bin, dir), 2);
    /* the cursor resumes the feed after the snapshot */
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g -e 'query a() { insert Person { name: \"Cy\" } }' >/dev/null", bin, dir), 0);
    snprintf(want, sizeof want, "%s changes poll --cursor v1c%s %%s/g", bin, head);
    assert_int_equal(run(out, sizeof out, want, dir), 0);
    assert_non_null(strstr(out, "  insert Person Cy\n"));
}

static void blobs_read_whole_or_by_range(void **state)
{
    (void)state;
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s/b", dir);
    assert_int_equal(system(cmd), 0);
    write_file("b.pg", "node Doc { name: String @key  body: Blob? }\n");
    write_file("b.jsonl", "{\"type\":\"Doc\",\"data\":{\"name\":\"a\",\"body\":\"base64:SGVsbG8gd29ybGQ=\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"name\":\"e\",\"body\":\"base64:\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"name\":\"n\"}}\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/b.pg %s/b >/dev/null && %s load --quiet --data %s/b.jsonl --mode overwrite %s/b >/dev/null",
                         bin, dir, dir, bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc a body --store %s/b", bin, dir), 0);
    assert_string_equal(out, "Hello world");
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc a body --offset 6 %s/b", bin, dir), 0);
    assert_string_equal(out, "world");
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc a body --offset 2 --length 3 %s/b", bin, dir), 0);
    assert_string_equal(out, "llo");
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc a body --length 99 %s/b", bin, dir), 0);
    assert_string_equal(out, "Hello world");
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc e body %s/b", bin, dir), 0);
    assert_string_equal(out, "");
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc a body --offset 11 %s/b 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "range not satisfiable"));
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc a body --length 0 %s/b 2>&1", bin, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s blob get vertex Doc a body %s/b 2>&1", bin, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc n body %s/b 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "not_found"));
    assert_int_equal(run(out, sizeof out, "%s blob get node Doc a name %s/b 2>&1", bin, dir), 1);
    /* --out: the bytes; a failure leaves the file as it was */
    assert_int_equal(run(NULL, 0, "%s blob get node Doc a body --offset 6 --out %s/w.bin %s/b", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "cat %s/w.bin", dir), 0);
    assert_string_equal(out, "world");
    assert_int_equal(run(NULL, 0, "%s blob get node Doc a body --offset 60 --out %s/w.bin %s/b 2>/dev/null", bin, dir, dir), 1);
    assert_int_equal(run(out, sizeof out, "cat %s/w.bin", dir), 0);
    assert_string_equal(out, "world");
    /* stat */
    assert_int_equal(run(out, sizeof out, "%s blob stat node Doc a body --json --branch main %s/b", bin, dir), 0);
    assert_non_null(strstr(out, "\"selector\": {\n    \"entity\": \"node\",\n    \"type\": \"Doc\",\n    \"id\": \"a\",\n    \"property\": \"body\"\n  },\n  \"kind\": \"managed\",\n  \"size\": 11,\n"));
    assert_non_null(strstr(out, "\"etag\": \"\\\"64ec88ca00b268e5ba1a35678a1b5316d212f4f366b2477232534a8aeca37f3c\\\"\""));
    assert_non_null(strstr(out, "\"target\": {\n    \"branch\": \"main\",\n    \"resolved_snapshot\": \""));
    assert_int_equal(run(out, sizeof out, "%s blob stat node Doc e body %s/b", bin, dir), 0);
    assert_non_null(strstr(out, "size: 0\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_record_verb_takes_format),
        cmocka_unit_test(json_shapes_are_the_references),
        cmocka_unit_test(the_change_feed_polls_with_cursors),
        cmocka_unit_test(a_baseline_is_durable_then_resumes_the_feed),
        cmocka_unit_test(blobs_read_whole_or_by_range),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
