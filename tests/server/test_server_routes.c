/*
 * test_server_routes.c — every route of omnigraph-server against a real server process
 * (Open mode: --unauthenticated on 127.0.0.1): the success shapes of reference-surfaces.md
 * §2.3, and the error statuses and bodies of §2.4 (unknown graph and route, bad graph id,
 * method, query parameter, JSON body, media type 415, body limit 413, CAS 412, conflicts);
 * a branch's message through POST/GET /branches across a restart; a read paged by max_rows /
 * offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64];
static srv S;

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srv-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    char graph[128], log[128];
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(log, sizeof log, "%s/server.log", dir);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    return srv_start(&S, log, args);
}

static int teardown(void **state)
{
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

static void expect_error(http_resp *r, long status, const char *code)
{
    if (r->status != status) fprintf(stderr, "expected %ld, got %ld: %s\n", status, r->status, r->body ? r->body : "");
    assert_int_equal(r->status, status);
    assert_non_null(r->json);
    assert_true(json_is_string(json_object_get(r->json, "error")));
    assert_true(json_is_array(json_object_get(r->json, "merge_conflicts")));
    if (code)
        assert_string_equal(jstr(r->json, "code"), code);
    else
        assert_null(json_object_get(r->json, "code"));
    http_free(r);
}

static void test_flat_routes(void **state)
{
    http_resp r = get(&S, NULL, "/healthz");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "status"), "ok");
    assert_true(json_is_integer(json_object_get(r.json, "internal_schema_version")));
    http_free(&r);
    r = get(&S, NULL, "/openapi.json");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "openapi"), "3.1.0");
    http_free(&r);
    /* graph_list in Open mode: allowed (every graph's routes are open anyway) */
    r = get(&S, NULL, "/graphs");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "graphs")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "graphs"), 0), "graph_id"), "g1");
    http_free(&r);
    r = get(&S, NULL, "/query");
    expect_error(&r, 404, "not_found");
    r = get(&S, NULL, "/graphs/nope/snapshot");
    assert_int_equal(r.status, 404);
    assert_string_equal(jstr(r.json, "error"), "graph 'nope' not found");
    http_free(&r);
    r = get(&S, NULL, "/graphs/bad_id/snapshot");
    expect_error(&r, 400, "bad_request");
    r = get(&S, NULL, "/graphs/healthz/snapshot");
    expect_error(&r, 400, "bad_request");
    r = http(&S, "PUT", "/graphs/g1/snapshot", NULL, NULL, 0);
    expect_error(&r, 405, "method_not_allowed");
    r = get(&S, NULL, "/graphs/g1/snapshot?bogus=1");
    expect_error(&r, 400, "bad_request");
}

static void test_snapshot_schema_branches_commits(void **state)
{
    http_resp r = get(&S, NULL, "/graphs/g1/snapshot");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "graph_branch"), "main");
    json_t *ds = json_object_get(r.json, "datasets");
    assert_int_equal(json_array_size(ds), 3);
    size_t i;
    json_t *d;
    json_int_t people = -1;
    json_array_foreach(ds, i, d)
    {
        assert_non_null(jstr(d, "entity_kind"));
        assert_non_null(jstr(d, "dataset_path"));
        assert_true(json_is_integer(json_object_get(d, "published_dataset_version")));
        if (!strcmp(jstr(d, "type_name"), "Person")) people = json_integer_value(json_object_get(d, "entity_count"));
    }
    assert_int_equal(people, 2);
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/snapshot?branch=nope");
    expect_error(&r, 404, "not_found");

    r = get(&S, NULL, "/graphs/g1/schema");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(jstr(r.json, "schema_source"), "node Person"));
    http_free(&r);

    r = get(&S, NULL, "/graphs/g1/commits");
    assert_int_equal(r.status, 200);
    json_t *cs = json_object_get(r.json, "commits");
    assert_int_equal(json_array_size(cs), 2);
    json_t *c0 = json_array_get(cs, 0);
    char head[64];
    snprintf(head, sizeof head, "%s", jstr(c0, "graph_commit_id"));
    assert_true(json_integer_value(json_object_get(c0, "created_at")) > 1600000000000000LL);
    assert_non_null(jstr(c0, "parent_commit_id"));
    /* graph_manifest_version: the first-parent depth (genesis 1), the same on every route */
    assert_int_equal(json_integer_value(json_object_get(c0, "graph_manifest_version")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(cs, 1), "graph_manifest_version")), 1);
    http_free(&r);
    char path[256];
    snprintf(path, sizeof path, "/graphs/g1/commits/%s", head);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "graph_commit_id"), head);
    assert_int_equal(json_integer_value(json_object_get(r.json, "graph_manifest_version")), 2);
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/snapshot");
    assert_int_equal(json_integer_value(json_object_get(r.json, "graph_manifest_version")), 2);
    http_free(&r);
    /* ... and the CLI says the same of the same commit */
    const char *cli[] = {"commit show %s --json %s/g", "commit list --limit 1 --json %s%s/g", "snapshot --json %s%s/g"};
    for (size_t k = 0; k < 3; k++) {
        char cmd[512], args[256], out[65536];
        snprintf(args, sizeof args, cli[k], k == 0 ? head : "", dir);
        snprintf(cmd, sizeof cmd, "%s/omnigraph %s", OG_BINARY_DIR, args);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        assert_int_equal(pclose(p), 0);
        json_t *j = json_loads(out, 0, NULL);
        assert_non_null(j);
        json_t *c = k == 1 ? json_array_get(json_object_get(j, "commits"), 0) : j;
        assert_int_equal(json_integer_value(json_object_get(c, "graph_manifest_version")), 2);
        json_decref(j);
    }
    r = get(&S, NULL, "/graphs/g1/commits/01ZZZZZZZZZZZZZZZZZZZZZZZZ");
    expect_error(&r, 404, "not_found");

    /* branches: create, list, create again (409), merge, delete */
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"feature\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "from"), "main");
    assert_string_equal(jstr(r.json, "name"), "feature");
    assert_non_null(jstr(r.json, "uri"));
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"feature\"}");
    expect_error(&r, 409, "conflict");
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"from\":\"main\"}");
    expect_error(&r, 400, "bad_request");
    r = get(&S, NULL, "/graphs/g1/branches");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "branches")), 2);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/mutate",
                  "{\"query\":\"query add($n: String) { insert Person { name: $n, age: 7 } }\","
                  "\"params\":{\"n\":\"Grace\"},\"branch\":\"feature\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/branches/merge", "{\"source\":\"feature\",\"delete_branch\":true}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "outcome"), "fast_forward");
    assert_string_equal(jstr(r.json, "target"), "main");
    assert_true(json_is_true(json_object_get(r.json, "branch_deleted")));
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/g1/branches/feature", NULL, NULL, 0);
    expect_error(&r, 404, "not_found");
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"tmp\"}");
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/g1/branches/tmp", NULL, NULL, 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "name"), "tmp");
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/g1/branches/main", NULL, NULL, 0);
    expect_error(&r, 400, "bad_request");
    /* branch names with '/': deletable, sent as segments or with %2F */
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"team/a\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"team/b/c\"}");
    assert_int_equal(r.status, 200);
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/g1/branches/team/a", NULL, NULL, 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "name"), "team/a");
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/g1/branches/team%2Fb%2Fc", NULL, NULL, 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "name"), "team/b/c");
    http_free(&r);
    r = http(&S, "DELETE", "/graphs/g1/branches/team/a", NULL, NULL, 0);
    expect_error(&r, 404, "not_found");
}

static void test_query_mutate_cas(void **state)
{
    http_resp r = post_json(&S, NULL, "/graphs/g1/query",
                            "{\"query\":\"query q($n: String) { match { $p: Person { name: $n } } return { $p.age } }\","
                            "\"params\":{\"n\":\"Ada\"}}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "query_name"), "q");
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    assert_string_equal(jstr(json_object_get(r.json, "target"), "branch"), "main");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(r.json, "rows"), 0), "p.age")),
                     36);
    char head[64];
    snprintf(head, sizeof head, "%s", jstr(r.json, "graph_commit_id"));
    http_free(&r);
    /* errors: bad JSON, missing field, wrong type, mutation on /query, parse error, both branch and snapshot */
    r = post_json(&S, NULL, "/graphs/g1/query", "{not json");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/query", "{\"name\":\"q\"}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/query", "{\"query\":42}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/query", "{\"query\":\"query d() { delete Person where name = \\\"Ada\\\" }\"}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/query", "{\"query\":\"query q( {\"}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/query",
                  "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\",\"branch\":\"main\",\"snapshot\":\"x\"}");
    expect_error(&r, 400, "bad_request");
    const char *h_text[] = {"Content-Type: text/plain", NULL};
    r = http(&S, "POST", "/graphs/g1/query", h_text, "{}", 2);
    expect_error(&r, 415, "bad_request");
    /* time travel through snapshot */
    char body[512];
    snprintf(body, sizeof body,
             "{\"query\":\"query q() { match { $p: Person } return { $p.name } }\",\"snapshot\":\"%s\"}", head);
    r = post_json(&S, NULL, "/graphs/g1/query", body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "target"), "snapshot"), head);
    http_free(&r);

    /* mutate: shape */
    r = post_json(&S, NULL, "/graphs/g1/mutate",
                  "{\"query\":\"query add($n: String) { insert Person { name: $n, age: 1 } }\",\"params\":{\"n\":\"Linus\"}}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "query_name"), "add");
    assert_string_equal(jstr(r.json, "branch"), "main");
    assert_int_equal(json_integer_value(json_object_get(r.json, "affected_nodes")), 1);
    json_t *commit = json_object_get(r.json, "commit");
    assert_non_null(jstr(commit, "graph_commit_id"));
    assert_string_equal(jstr(commit, "parent_commit_id"), head);
    char newhead[64];
    snprintf(newhead, sizeof newhead, "%s", jstr(commit, "graph_commit_id"));
    http_free(&r);
    /* a mutation matching nothing: commit null */
    r = post_json(&S, NULL, "/graphs/g1/mutate", "{\"query\":\"query d() { delete Person where name = \\\"Nobody\\\" }\"}");
    assert_int_equal(r.status, 200);
    assert_true(json_is_null(json_object_get(r.json, "commit")));
    http_free(&r);

    /* CAS: the header is refused on the ordinary route, required on the conditional one */
    char cas[128];
    snprintf(cas, sizeof cas, "Omnigraph-If-Graph-Commit: %s", head);
    const char *h_cas_old[] = {"Content-Type: application/json", cas, NULL};
    const char *upd = "{\"query\":\"query u() { update Person set { age: 37 } where name = \\\"Ada\\\" }\"}";
    r = http(&S, "POST", "/graphs/g1/mutate", h_cas_old, upd, strlen(upd));
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/mutate/if-graph-commit", upd);
    expect_error(&r, 400, "bad_request");
    const char *h_star[] = {"Content-Type: application/json", "Omnigraph-If-Graph-Commit: *", NULL};
    r = http(&S, "POST", "/graphs/g1/mutate/if-graph-commit", h_star, upd, strlen(upd));
    expect_error(&r, 400, "bad_request");
    r = http(&S, "POST", "/graphs/g1/mutate/if-graph-commit", h_cas_old, upd, strlen(upd));
    assert_int_equal(r.status, 412);
    assert_null(json_object_get(r.json, "code"));
    json_t *pf = json_object_get(r.json, "precondition_failure");
    assert_string_equal(jstr(pf, "expected"), head);
    assert_string_equal(jstr(pf, "actual"), newhead);
    http_free(&r);
    snprintf(cas, sizeof cas, "Omnigraph-If-Graph-Commit: %s", newhead);
    const char *h_cas_new[] = {"Content-Type: application/json", cas, NULL};
    r = http(&S, "POST", "/graphs/g1/mutate/if-graph-commit", h_cas_new, upd, strlen(upd));
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "affected_nodes")), 1);
    http_free(&r);
    /* deprecated alias: Deprecation header */
    r = post_json(&S, NULL, "/graphs/g1/change",
                  "{\"query_source\":\"query u() { update Person set { age: 38 } where name = \\\"Ada\\\" }\"}");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "Deprecation: true"));
    http_free(&r);
}

static void test_load_export(void **state)
{
    const char *nd = "{\"type\":\"Person\",\"data\":{\"name\":\"Edsger\",\"age\":72}}\n"
                     "{\"edge\":\"Knows\",\"from\":\"Edsger\",\"to\":\"Ada\"}\n";
    const char *h_nd[] = {"Content-Type: application/x-ndjson", NULL};
    http_resp r = http(&S, "POST", "/graphs/g1/load/ndjson?mode=merge", h_nd, nd, strlen(nd));
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "branch"), "main");
    assert_string_equal(jstr(r.json, "mode"), "merge");
    assert_false(json_is_true(json_object_get(r.json, "branch_created")));
    assert_int_equal(json_integer_value(json_object_get(r.json, "total_entities")), 2);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "nodes"), 0), "name"), "Person");
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "edges"), 0), "name"), "Knows");
    assert_null(json_object_get(r.json, "uri"));
    assert_non_null(jstr(json_object_get(r.json, "commit"), "graph_commit_id"));
    http_free(&r);
    /* 415 before anything; a malformed batch changes nothing; a missing branch without from */
    const char *h_json[] = {"Content-Type: application/json", NULL};
    r = http(&S, "POST", "/graphs/g1/load/ndjson", h_json, nd, strlen(nd));
    expect_error(&r, 415, "bad_request");
    const char *h_nd_params[] = {"Content-Type: Application/X-NDJSON; charset=utf-8", NULL};
    r = http(&S, "POST", "/graphs/g1/load/ndjson?mode=append", h_nd_params, "{\"type\":\"Nope\",\"data\":{}}\n", 27);
    expect_error(&r, 400, "bad_request");
    r = http(&S, "POST", "/graphs/g1/load/ndjson?mode=append", h_nd, nd, 54);
    expect_error(&r, 409, "conflict"); /* Edsger exists: strict insert */
    r = http(&S, "POST", "/graphs/g1/load/ndjson?branch=side", h_nd, nd, strlen(nd));
    expect_error(&r, 404, "not_found");
    r = http(&S, "POST", "/graphs/g1/load/ndjson?mode=sideways", h_nd, nd, strlen(nd));
    expect_error(&r, 400, "bad_request");
    /* with from: the branch is forked first */
    r = http(&S, "POST", "/graphs/g1/load/ndjson?branch=side&from=main", h_nd, nd, strlen(nd));
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "branch_created")));
    assert_string_equal(jstr(r.json, "base_branch"), "main");
    http_free(&r);
    /* JSON load */
    r = post_json(&S, NULL, "/graphs/g1/load",
                  "{\"data\":\"{\\\"type\\\":\\\"Note\\\",\\\"data\\\":{\\\"title\\\":\\\"hello\\\"}}\\n\",\"mode\":\"append\"}");
    assert_int_equal(r.status, 200);
    assert_non_null(jstr(r.json, "uri"));
    assert_int_equal(json_integer_value(json_object_get(r.json, "total_entities")), 1);
    http_free(&r);

    /* export: NDJSON stream in the load envelope */
    r = post_json(&S, NULL, "/graphs/g1/export", "{\"type_names\":[\"Person\"]}");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "application/x-ndjson"));
    size_t lines = 0;
    for (size_t i = 0; i < r.len; i++) lines += r.body[i] == '\n';
    assert_true(lines >= 4);
    assert_non_null(strstr(r.body, "\"Edsger\""));
    assert_null(strstr(r.body, "\"edge\""));
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/export", "{\"type_names\":[\"Nope\"]}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/export", "{\"branch\":\"main\",\"extra\":1}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/export", "{\"branch\":\"nope\"}");
    expect_error(&r, 404, "not_found");
}

/* POST /load/csv: one text/csv file of a named type as one commit (docs/server.md), counted
 * under its kind; a bad cell is a 400 naming line and column, with nothing loaded. */
static void test_load_csv(void **state)
{
    (void)state;
    const char *h_csv[] = {"Content-Type: text/csv", NULL};
    const char *people = "name,age\r\nGrace,85\r\n\"Hopper, Jr\",3\r\n";
    http_resp r = http(&S, "POST", "/graphs/g1/load/csv?type=Person&mode=merge", h_csv, people, strlen(people));
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "total_entities")), 2);
    json_t *n0 = json_array_get(json_object_get(r.json, "nodes"), 0);
    assert_string_equal(jstr(n0, "name"), "Person");
    assert_int_equal(json_integer_value(json_object_get(n0, "entities_loaded")), 2);
    assert_int_equal(json_array_size(json_object_get(r.json, "edges")), 0);
    assert_non_null(jstr(json_object_get(r.json, "commit"), "graph_commit_id"));
    http_free(&r);
    const char *knows = "from|to\nGrace|Ada\n";
    r = http(&S, "POST", "/graphs/g1/load/csv?type=Knows&delimiter=%7C", h_csv, knows, strlen(knows));
    assert_int_equal(r.status, 200);
    json_t *e0 = json_array_get(json_object_get(r.json, "edges"), 0);
    assert_string_equal(jstr(e0, "name"), "Knows");
    assert_int_equal(json_integer_value(json_object_get(e0, "entities_loaded")), 1);
    assert_int_equal(json_array_size(json_object_get(r.json, "nodes")), 0);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/query",
                  "{\"query\":\"query q() { match { $p: Person { name: \\\"Hopper, Jr\\\" } } return { $p.age } }\"}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(r.json, "rows"), 0), "p.age")), 3);
    http_free(&r);
    /* a number cell that is not one: 400 naming line 3, nothing loaded */
    const char *bad = "name,age\nLin,1\nMo,old\n";
    r = http(&S, "POST", "/graphs/g1/load/csv?type=Person", h_csv, bad, strlen(bad));
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/query", "{\"query\":\"query q() { match { $p: Person { name: \\\"Lin\\\" } } return { $p.age } }\"}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "rows")), 0);
    http_free(&r);
    const char *h_nd[] = {"Content-Type: application/x-ndjson", NULL};
    r = http(&S, "POST", "/graphs/g1/load/csv?type=Person", h_nd, people, strlen(people));
    expect_error(&r, 415, "bad_request");
    r = http(&S, "POST", "/graphs/g1/load/csv?type=Person&delimiter=ab", h_csv, people, strlen(people));
    expect_error(&r, 400, "bad_request");
}

static void test_limits(void **state)
{
    /* 1 MiB JSON limit */
    size_t n = (1u << 20) + 100;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = 0;
    http_resp r = post_json(&S, NULL, "/graphs/g1/query", big);
    assert_int_equal(r.status, 413);
    assert_string_equal(jstr(json_object_get(r.json, "resource_limit"), "resource"), "request_body_bytes");
    http_free(&r);
    free(big);
    /* 32 MiB load limit, refused from Content-Length before the body is read */
    n = (32u << 20) + 1;
    big = malloc(n);
    memset(big, '\n', n);
    const char *h_nd[] = {"Content-Type: application/x-ndjson", NULL};
    r = http(&S, "POST", "/graphs/g1/load/ndjson", h_nd, big, n);
    assert_int_equal(r.status, 413);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r.json, "resource_limit"), "limit")), 32 << 20);
    assert_string_equal(jstr(json_object_get(r.json, "resource_limit"), "resource"), "graph_batch_request_bytes");
    http_free(&r);
    /* the same body sent chunked (no Content-Length): refused while spooling */
    const char *h_chunked[] = {"Content-Type: application/x-ndjson", "Transfer-Encoding: chunked", NULL};
    r = http(&S, "POST", "/graphs/g1/load/ndjson", h_chunked, big, n);
    assert_int_equal(r.status, 413);
    http_free(&r);
    free(big);
    /* the server is still up */
    r = get(&S, NULL, "/healthz");
    assert_int_equal(r.status, 200);
    http_free(&r);
}

static void test_schema_plan_apply(void **state)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"schema_source\":\"%s\"}",
             "node Person { name: String @key  age: I32?  email: String? }\\n"
             "node Note { title: String  body: String? }\\nedge Knows: Person -> Person\\n");
    http_resp r = post_json(&S, NULL, "/graphs/g1/schema/plan", body);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "supported")));
    assert_int_equal(json_integer_value(json_object_get(r.json, "step_count")), 1);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/schema/plan", "{\"schema_source\":\"node {\"}");
    expect_error(&r, 400, "bad_request");
    /* apply refuses while other branches exist (the "side" branch of test_load_export) */
    r = http(&S, "DELETE", "/graphs/g1/branches/side", NULL, NULL, 0);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/schema/apply", body);
    if (r.status != 200) fprintf(stderr, "%s\n", r.body);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "applied")));
    assert_int_equal(json_integer_value(json_object_get(r.json, "step_count")), 1);
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/schema");
    assert_non_null(strstr(jstr(r.json, "schema_source"), "email"));
    http_free(&r);
}

/* The message given at creation is listed in `details` (beside the reference's names), from
 * the graph's storage: a restarted server lists it too.  A refused create leaves nothing. */
static void test_branch_messages(void **state)
{
    http_resp r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"why\",\"message\":\"fix Ada's age\"}");
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(r.json, "message"), "fix Ada's age");
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"bad1\",\"message\":42}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"bad2\",\"message\":\"a\\u0001b\"}");
    expect_error(&r, 400, "bad_request");
    r = post_json(&S, NULL, "/graphs/g1/branches", "{\"name\":\"why\",\"message\":\"again\"}");
    expect_error(&r, 409, "conflict");
    for (int round = 0; round < 2; round++) {
        r = get(&S, NULL, "/graphs/g1/branches");
        assert_int_equal(r.status, 200);
        json_t *names = json_object_get(r.json, "branches"), *details = json_object_get(r.json, "details");
        assert_int_equal(json_array_size(details), json_array_size(names));
        int seen = 0;
        for (size_t i = 0; i < json_array_size(details); i++) {
            json_t *d = json_array_get(details, i);
            assert_string_equal(jstr(d, "name"), json_string_value(json_array_get(names, i)));
            assert_string_not_equal(jstr(d, "name"), "bad1");
            assert_string_not_equal(jstr(d, "name"), "bad2");
            if (!strcmp(jstr(d, "name"), "why")) {
                assert_string_equal(jstr(d, "message"), "fix Ada's age");
                seen = 1;
            } else if (!strcmp(jstr(d, "name"), "main")) {
                assert_true(json_is_null(json_object_get(d, "message")));
            }
        }
        assert_true(seen);
        http_free(&r);
        if (round == 0) { /* restart: the message is in the graph, not in the process */
            assert_int_equal(srv_stop(&S), 0);
            char graph[128], log[128];
            snprintf(graph, sizeof graph, "g1=%s/g", dir);
            snprintf(log, sizeof log, "%s/server.log", dir);
            const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
            assert_int_equal(srv_start(&S, log, args), 0);
        }
    }
    r = http(&S, "DELETE", "/graphs/g1/branches/why", NULL, NULL, 0);
    assert_int_equal(r.status, 200);
    http_free(&r);
}

/* POST /query with max_rows / offset: one page of the rows, with the total and where the next
 * page starts; without them every row (the reference's shape, no page fields). */
static void test_paged_read(void **state)
{
    const char *q = "\"query\":\"query q() { match { $p: Person } return { $p.name } order { $p.name } }\"";
    char body[512], first[64], second[64];
    snprintf(body, sizeof body, "{%s}", q);
    http_resp r = post_json(&S, NULL, "/graphs/g1/query", body); /* unpaged: every row, no page fields */
    assert_int_equal(r.status, 200);
    json_int_t n = json_integer_value(json_object_get(r.json, "row_count"));
    assert_true(n >= 2);
    assert_null(json_object_get(r.json, "total_rows"));
    snprintf(first, sizeof first, "%s", jstr(json_array_get(json_object_get(r.json, "rows"), 0), "p.name"));
    snprintf(second, sizeof second, "%s", jstr(json_array_get(json_object_get(r.json, "rows"), 1), "p.name"));
    http_free(&r);

    snprintf(body, sizeof body, "{%s,\"max_rows\":1}", q);
    r = post_json(&S, NULL, "/graphs/g1/query", body);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    assert_int_equal(json_integer_value(json_object_get(r.json, "total_rows")), n);
    assert_true(json_is_true(json_object_get(r.json, "truncated")));
    assert_int_equal(json_integer_value(json_object_get(r.json, "next_offset")), 1);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "rows"), 0), "p.name"), first);
    assert_string_equal(jstr(json_object_get(r.json, "target"), "branch"), "main");
    http_free(&r);
    snprintf(body, sizeof body, "{%s,\"max_rows\":1,\"offset\":1}", q);
    r = post_json(&S, NULL, "/graphs/g1/query", body);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_array_get(json_object_get(r.json, "rows"), 0), "p.name"), second);
    assert_int_equal(json_is_true(json_object_get(r.json, "truncated")), n > 2);
    http_free(&r);
    snprintf(body, sizeof body, "{%s,\"offset\":%lld}", q, (long long)n - 1); /* the last page */
    r = post_json(&S, NULL, "/graphs/g1/query", body);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    assert_false(json_is_true(json_object_get(r.json, "truncated")));
    assert_null(json_object_get(r.json, "next_offset"));
    http_free(&r);
    snprintf(body, sizeof body, "{%s,\"offset\":%lld}", q, (long long)n + 5);
    r = post_json(&S, NULL, "/graphs/g1/query", body);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 0);
    assert_int_equal(json_integer_value(json_object_get(r.json, "total_rows")), n);
    http_free(&r);
    /* Arrow: the page's counts ride in headers beside the stream */
    snprintf(body, sizeof body, "{%s,\"max_rows\":1}", q);
    const char *h_arrow[] = {"Content-Type: application/json", "Accept: application/vnd.apache.arrow.stream", NULL};
    r = http(&S, "POST", "/graphs/g1/query", h_arrow, body, strlen(body));
    assert_int_equal(r.status, 200);
    char want[64];
    snprintf(want, sizeof want, "Omnigraph-Total-Rows: %lld", (long long)n);
    assert_non_null(strstr(r.headers, want));
    assert_non_null(strstr(r.headers, "Omnigraph-Next-Offset: 1"));
    http_free(&r);
    const char *bad[] = {"\"max_rows\":0", "\"max_rows\":-1", "\"max_rows\":\"5\"", "\"offset\":1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(body, sizeof body, "{%s,%s}", q, bad[i]);
        r = post_json(&S, NULL, "/graphs/g1/query", body);
        expect_error(&r, 400, "bad_request");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_routes),
        cmocka_unit_test(test_snapshot_schema_branches_commits),
        cmocka_unit_test(test_query_mutate_cas),
        cmocka_unit_test(test_load_export),
        cmocka_unit_test(test_load_csv),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_schema_plan_apply),
        cmocka_unit_test(test_branch_messages),
        cmocka_unit_test(test_paged_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
