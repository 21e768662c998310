/*
 * test_cli_cluster.c — the `omnigraph cluster`, `queries` and `mcp` verbs as a user runs them
 * on examples/cluster (copied to a scratch directory): exit codes, the human and JSON output,
 * a stored query by name, and one MCP exchange over stdio.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"

static char out[1 << 16];

static void test_cluster_verbs(void **state)
{
    (void)state;
    assert_int_equal(run(NULL, 0, "cp -r %s/examples/cluster %s/c", OG_SOURCE_DIR, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s cluster validate --config %s/c", bin, dir), 0);
    assert_string_equal(out, "ok: 7 resources\n");
    assert_int_equal(run(out, sizeof out, "%s cluster apply --config %s/c 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "state_missing"));
    assert_int_equal(run(out, sizeof out, "%s cluster import --config %s/c", bin, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s cluster plan --config %s/c", bin, dir), 0);
    assert_non_null(strstr(out, "+ graph.people"));
    assert_non_null(strstr(out, "+ query.people.adults"));
    assert_int_equal(run(out, sizeof out, "%s cluster apply --config %s/c --as alice", bin, dir), 0);
    assert_non_null(strstr(out, "applied 7 change(s); state revision 2"));
    assert_int_equal(run(out, sizeof out, "%s cluster plan --config %s/c", bin, dir), 0);
    assert_string_equal(out, "no changes: the applied state matches the configuration\n");
    assert_int_equal(run(out, sizeof out, "%s cluster status --config %s/c --json", bin, dir), 0);
    assert_non_null(strstr(out, "\"catalog_conditions\": []"));
    assert_int_equal(run(out, sizeof out, "%s cluster force-unlock NOPE --config %s/c 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "not_found: the cluster is not locked"));

    /* refresh re-observes; approve refuses a change that needs none, and needs --as */
    assert_int_equal(run(out, sizeof out, "%s cluster refresh --config %s/c", bin, dir), 0);
    assert_string_equal(out, "refreshed: state revision 3\n");
    assert_int_equal(run(out, sizeof out, "%s cluster approve graph.people --config %s/c 2>&1", bin, dir), 1);
    assert_string_equal(out, "omnigraph cluster approve: invalid: `cluster approve` requires an approver: pass --as "
                             "<ACTOR> — an approval without an approver is meaningless\n");
    assert_int_equal(run(out, sizeof out, "%s cluster approve graph.people --as bob --config %s/c 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "approval_not_required: graph.people: no pending change for this resource requires "
                                "approval (check `cluster plan`)"));
    assert_int_equal(run(out, sizeof out, "%s cluster approve --config %s/c 2>&1", bin, dir), 2);

    /* an invalid config: exit 1, the diagnostic on stderr */
    assert_int_equal(run(NULL, 0, "echo 'pipelines: {}' >> %s/c/cluster.yaml", dir), 0);
    assert_int_equal(run(out, sizeof out, "%s cluster validate --config %s/c 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "error future_phase_field pipelines: `pipelines` is reserved for a later cluster-control phase"));
    assert_int_equal(run(out, sizeof out, "%s cluster frobnicate --config %s/c 2>&1", bin, dir), 2);
}

static void test_queries_and_mcp(void **state)
{
    (void)state;
    assert_int_equal(run(NULL, 0, "%s load --quiet --data %s/c/seed.ndjson --mode merge %s/c/graphs/people.omni", bin, dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s queries list --cluster %s/c", bin, dir), 0);
    assert_non_null(strstr(out, "adults (read) ($min: I32)  -- People at least $min years old.\n"));
    assert_non_null(strstr(out, "add_person (mutation) ($name: String, $age: I32?)"));
    assert_int_equal(run(out, sizeof out, "%s queries validate --cluster %s/c", bin, dir), 0);
    assert_string_equal(out, "ok: 4 stored queries of graph 'people' type-check against its schema\n");
    assert_int_equal(run(out, sizeof out, "%s queries run adults --params '{\"min\":40}' --cluster %s/c", bin, dir), 0);
    assert_non_null(strstr(out, "\"row_count\": 1"));
    assert_non_null(strstr(out, "Grace"));
    /* --format: a read's rows by its columns; the catalog as records */
    assert_int_equal(run(out, sizeof out, "%s queries run adults --params '{\"min\":40}' --format csv --cluster %s/c", bin, dir), 0);
    assert_non_null(strstr(out, "\r\nGrace"));
    assert_int_equal(run(out, sizeof out, "%s queries list --format table --cluster %s/c", bin, dir), 0);
    assert_non_null(strstr(out, "name "));
    assert_non_null(strstr(out, "(4 rows)\n"));
    assert_int_equal(run(out, sizeof out, "%s queries list --format yaml --cluster %s/c 2>&1", bin, dir), 2);
    assert_int_equal(run(out, sizeof out, "%s queries run adults --params '{}' --cluster %s/c 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "param `$min`: missing required parameter of type I32"));
    assert_int_equal(run(out, sizeof out, "%s queries run nope --cluster %s/c 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "stored query 'nope' not found"));

    /* one MCP exchange over stdio: initialize, a notification (no answer), a stored query */
    write_file("mcp.in",
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
               "\n"
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"friends\",\"arguments\":{\"params\":{\"name\":\"Ada\"}}}}\n");
    assert_int_equal(run(out, sizeof out, "%s mcp --cluster %s/c --as alice < %s/mcp.in", bin, dir, dir), 0);
    char *second = strchr(out, '\n');
    assert_non_null(second);
    assert_non_null(strstr(out, "\"protocolVersion\":\"2025-06-18\""));
    assert_non_null(strstr(second + 1, "\"id\":2"));
    assert_non_null(strstr(second + 1, "Grace"));
    assert_null(strchr(strchr(second + 1, '\n') + 1, '{')); /* exactly two responses */
    assert_int_equal(run(out, sizeof out, "%s mcp --cluster %s/c --policy < /dev/null 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "--policy needs --as ACTOR"));
    /* issue 37 item 10: the graph's bound bundle governs `mcp --cluster` by default */
    assert_int_equal(run(out, sizeof out, "%s mcp --cluster %s/c < /dev/null 2>&1", bin, dir), 2);
    assert_non_null(strstr(out, "a policy bundle is bound to graph 'people': give --as ACTOR"));
    write_file("mcp2.in",
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_mutate\",\"arguments\":"
               "{\"query\":\"query m() { insert Person { name: \\\"Mal\\\" } }\",\"branch\":\"main\"}}}\n");
    assert_int_equal(run(out, sizeof out, "%s mcp --cluster %s/c --as mallory < %s/mcp2.in", bin, dir, dir), 0);
    assert_non_null(strstr(out, "forbidden: policy denied action 'change' for unknown actor 'mallory'"));
    assert_int_equal(run(out, sizeof out, "%s mcp --cluster %s/c --as alice < %s/mcp2.in", bin, dir, dir), 0);
    assert_non_null(strstr(out, "forbidden: policy denied action 'change' on branch 'main' for actor 'alice'"));
    /* the operator may opt out, and its commit says how its actor was established: locally */
    assert_int_equal(run(out, sizeof out, "%s mcp --cluster %s/c --as op --no-policy < %s/mcp2.in 2>/dev/null", bin, dir, dir), 0);
    assert_null(strstr(out, "forbidden"));
    assert_int_equal(run(out, sizeof out, "%s commit list --limit 1 %s/c/graphs/people.omni", bin, dir), 0);
    assert_non_null(strstr(out, " op via local"));
}

/* `queries run --cluster` embeds query text with the graph's applied embedding profile, not with
 * the environment's provider (which here points at a closed port and would fail). */
static void test_run_uses_cluster_profile(void **state)
{
    (void)state;
    assert_int_equal(run(NULL, 0, "mkdir -p %s/e/queries", dir), 0);
    write_file("e/docs.pg", "node Doc {\n    slug: String @key\n    body: String\n"
                            "    embedding: Vector(8)? @embed(\"body\")\n}\n");
    write_file("e/queries/q.gq", "query related($q: String) {\n    match { $d: Doc }\n    return { $d.slug }\n"
                                 "    order { nearest($d.embedding, $q) }\n    limit 1\n}\n");
    write_file("e/cluster.yaml", "version: 1\nproviders:\n  embedding:\n    offline: { kind: mock }\n"
                                 "graphs:\n  docs:\n    schema: docs.pg\n    queries: queries/\n"
                                 "    embedding_provider: offline\n");
    write_file("e/seed.ndjson", "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"alpha text\"}}\n"
                                "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"beta text\"}}\n"
                                "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"body\":\"gamma text\"}}\n");
    assert_int_equal(run(NULL, 0, "%s cluster import --config %s/e && %s cluster apply --config %s/e", bin, dir, bin, dir), 0);
    assert_int_equal(run(NULL, 0, "%s load --quiet --data %s/e/seed.ndjson --mode merge %s/e/graphs/docs.omni", bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "OMNIGRAPH_EMBED_PROVIDER=mock %s embed --store %s/e/graphs/docs.omni >/dev/null 2>&1", bin, dir), 0);
    const char *env = "OMNIGRAPH_EMBED_PROVIDER=openai-compatible OMNIGRAPH_EMBED_BASE_URL=http://127.0.0.1:9/v1 "
                      "OPENROUTER_API_KEY=k OMNIGRAPH_EMBED_RETRY_ATTEMPTS=1";
    assert_int_equal(run(out, sizeof out, "%s %s queries run related --params '{\"q\":\"beta text\"}' --format csv --cluster %s/e 2>&1",
                         env, bin, dir), 0);
    assert_string_equal(out, "d.slug\r\nb\r\n");
    /* a profile whose key variable is unset: the run fails naming it, before any query */
    write_file("e/cluster.yaml", "version: 1\nproviders:\n  embedding:\n    real:\n      kind: openai-compatible\n"
                                 "      api_key: ${OG_TEST_UNSET_EMBED_KEY}\n"
                                 "graphs:\n  docs:\n    schema: docs.pg\n    queries: queries/\n"
                                 "    embedding_provider: real\n");
    assert_int_equal(run(NULL, 0, "%s cluster apply --config %s/e", bin, dir), 0);
    assert_int_equal(run(out, sizeof out, "unset OG_TEST_UNSET_EMBED_KEY; %s queries run related --params '{\"q\":\"x\"}' --cluster %s/e 2>&1",
                         bin, dir), 1);
    assert_string_equal(out, "omnigraph queries run: invalid: graph 'docs': embedding provider 'real' needs the environment "
                             "variable OG_TEST_UNSET_EMBED_KEY (api_key: ${OG_TEST_UNSET_EMBED_KEY}), which is not set\n");
    /* list needs no provider */
    assert_int_equal(run(NULL, 0, "unset OG_TEST_UNSET_EMBED_KEY; %s queries list --cluster %s/e", bin, dir), 0);
}

/* --quiet (as on the graph verbs) hides a write's success line and a stored mutation's result,
 * never a report; flags work before the subcommand; a repeated flag is a usage error. */
static void test_quiet_and_flag_order(void **state)
{
    (void)state;
    assert_int_equal(run(NULL, 0, "cp -r %s/examples/cluster %s/q", OG_SOURCE_DIR, dir), 0);
    assert_int_equal(run(out, sizeof out, "%s cluster --quiet validate --config %s/q", bin, dir), 0);
    assert_string_equal(out, "ok: 7 resources\n"); /* a report: printed */
    assert_int_equal(run(out, sizeof out, "%s cluster import --quiet --config %s/q", bin, dir), 0);
    assert_string_equal(out, "");
    assert_int_equal(run(out, sizeof out, "%s cluster --config %s/q --quiet apply --as alice", bin, dir), 0);
    assert_string_equal(out, "");
    assert_int_equal(run(out, sizeof out, "%s cluster refresh --quiet --config %s/q", bin, dir), 0);
    assert_string_equal(out, "");
    assert_int_equal(run(out, sizeof out, "%s cluster status --quiet --config %s/q", bin, dir), 0);
    assert_non_null(strstr(out, "state revision 3"));
    assert_int_equal(run(out, sizeof out, "%s cluster plan --config %s/q --config %s/q 2>&1", bin, dir, dir), 2);
    assert_non_null(strstr(out, "--config given twice"));
    assert_int_equal(run(out, sizeof out, "%s queries run add_person --quiet --params '{\"name\":\"Quinn\",\"age\":50}' --cluster %s/q 2>&1",
                         bin, dir), 0);
    assert_string_equal(out, "");
    assert_int_equal(run(out, sizeof out, "%s queries --quiet run add_person --json --params '{\"name\":\"Rae\"}' --cluster %s/q",
                         bin, dir), 0);
    assert_non_null(strstr(out, "\"affected_nodes\":1"));
    assert_int_equal(run(out, sizeof out, "%s queries --cluster %s/q --format csv list", bin, dir), 0);
    assert_non_null(strstr(out, "name,mutation,mcp_expose,tool_name\r\n"));
    assert_int_equal(run(out, sizeof out, "%s queries run adults --quiet --params '{\"min\":0}' --format csv --cluster %s/q", bin, dir), 0);
    assert_non_null(strstr(out, "Quinn")); /* a read's rows are what was asked for */
    assert_int_equal(run(out, sizeof out, "%s queries list --cluster %s/q --cluster %s/q 2>&1", bin, dir, dir), 2);
    assert_non_null(strstr(out, "--cluster given twice"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/og-cli-cluster-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cluster_verbs), cmocka_unit_test(test_queries_and_mcp),
                                       cmocka_unit_test(test_run_uses_cluster_profile),
                                       cmocka_unit_test(test_quiet_and_flag_order)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 && !rc) rc = 1;
    return rc;
}
