/*
 * test_server_changes.c — the change routes against a real server process: one commit's
 * changes (shape, paging with page_token, kind / type / op filters, the genesis refusal 409,
 * the page ceiling 413), and the branch feed (start=now|beginning|after:, durable cursors,
 * bounded pages followed to the terminal cursor, mutually exclusive selectors, malformed
 * cursors 400, a cursor outside the branch's history 410); a U64 above 2^63-1 in a change
 * image is a bare number on all three change routes (GET /commits/{id}/changes, /diff, /changes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"

static char dir[64];
static srv S;

static char u64_before[32], u64_after[32];

/* dir/u: a Meter whose U64 reading goes from 1 to 18446744073709551615 in its last commit. */
static int make_u64_graph(void)
{
    static const char *schema = "node Meter { name: String @key  reading: U64? }\n";
    static const char *ins = "query m() { insert Meter { name: \"m\", reading: 1 } }";
    static const char *upd = "query m($r: U64) { update Meter set { reading: $r } where name = \"m\" }";
    char uri[128];
    snprintf(uri, sizeof uri, "%s/u", dir);
    og_db *db;
    if (og_db_init(&db, uri, "u.pg", schema, strlen(schema), NULL)) return -1;
    og_receipt r;
    og_status st = og_db_mutate(&r, db, ins, strlen(ins), NULL, NULL, NULL, NULL);
    if (!st) st = og_db_resolve_commit(db, "main", u64_before, sizeof u64_before);
    if (!st) st = og_db_mutate(&r, db, upd, strlen(upd), NULL, "{\"r\":\"18446744073709551615\"}", NULL, NULL);
    if (!st) st = og_db_resolve_commit(db, "main", u64_after, sizeof u64_after);
    og_db_close(db);
    return st ? -1 : 0;
}

static int setup(void **state)
{
    strcpy(dir, "/tmp/og-srvchg-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g") || make_u64_graph()) return -1;
    char graph[128], graph2[128], log[128];
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(graph2, sizeof graph2, "g2=%s/u", dir);
    snprintf(log, sizeof log, "%s/server.log", dir);
    const char *args[] = {"--graph", graph, "--graph", graph2, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
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

static void head_and_genesis(char head[64], char genesis[64])
{
    http_resp r = get(&S, NULL, "/graphs/g1/commits");
    json_t *cs = json_object_get(r.json, "commits");
    snprintf(head, 64, "%s", jstr(json_array_get(cs, 0), "graph_commit_id"));
    snprintf(genesis, 64, "%s", jstr(json_array_get(cs, json_array_size(cs) - 1), "graph_commit_id"));
    http_free(&r);
}

static void test_commit_changes(void **state)
{
    char head[64], genesis[64], path[256];
    head_and_genesis(head, genesis); /* head = the seed load: 2 people, 1 edge */
    snprintf(path, sizeof path, "/graphs/g1/commits/%s/changes", head);
    http_resp r = get(&S, NULL, path);
    assert_int_equal(r.status, 200);
    json_t *cause = json_object_get(r.json, "cause");
    assert_string_equal(jstr(cause, "graph_commit_id"), head);
    assert_string_equal(jstr(cause, "parent_commit_id"), genesis);
    assert_true(json_integer_value(json_object_get(cause, "authored_at")) > 0);
    json_t *ch = json_object_get(r.json, "changes");
    assert_int_equal(json_array_size(ch), 3);
    json_t *c0 = json_array_get(ch, 0);
    assert_string_equal(jstr(c0, "op"), "insert");
    assert_string_equal(jstr(json_object_get(c0, "type"), "name"), "Person");
    assert_non_null(json_object_get(json_object_get(c0, "after"), "properties"));
    json_t *edge = json_array_get(ch, 2);
    assert_string_equal(jstr(edge, "kind"), "edge");
    assert_string_equal(jstr(json_object_get(json_object_get(edge, "after"), "endpoints"), "from"), "Ada");
    assert_true(json_is_null(json_object_get(r.json, "next_page_token")));
    http_free(&r);
    /* paging: 2 + 1 */
    char p2[320];
    snprintf(p2, sizeof p2, "%s?limit=2", path);
    r = get(&S, NULL, p2);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 2);
    char tok[64];
    snprintf(tok, sizeof tok, "%s", jstr(r.json, "next_page_token"));
    http_free(&r);
    snprintf(p2, sizeof p2, "%s?limit=2&page_token=%s", path, tok);
    r = get(&S, NULL, p2);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 1);
    assert_true(json_is_null(json_object_get(r.json, "next_page_token")));
    http_free(&r);
    /* filters */
    snprintf(p2, sizeof p2, "%s?kind=edge", path);
    r = get(&S, NULL, p2);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 1);
    http_free(&r);
    snprintf(p2, sizeof p2, "%s?op=delete", path);
    r = get(&S, NULL, p2);
    assert_int_equal(json_array_size(json_object_get(r.json, "changes")), 0);
    http_free(&r);
    snprintf(p2, sizeof p2, "%s?kind=vertex", path);
    r = get(&S, NULL, p2);
    assert_int_equal(r.status, 400);
    http_free(&r);
    snprintf(p2, sizeof p2, "%s?limit=9000", path);
    r = get(&S, NULL, p2);
    assert_int_equal(r.status, 413);
    http_free(&r);
    snprintf(p2, sizeof p2, "%s?page_token=zzz", path);
    r = get(&S, NULL, p2);
    assert_int_equal(r.status, 400);
    http_free(&r);
    /* genesis: no parent to diff against */
    snprintf(p2, sizeof p2, "/graphs/g1/commits/%s/changes", genesis);
    r = get(&S, NULL, p2);
    assert_int_equal(r.status, 409);
    assert_string_equal(jstr(json_object_get(r.json, "change_diff_refusal"), "reason"), "parentless_commit");
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/commits/01ZZZZZZZZZZZZZZZZZZZZZZZZ/changes");
    assert_int_equal(r.status, 404);
    http_free(&r);
}

static void insert(const char *name)
{
    char body[256];
    snprintf(body, sizeof body, "{\"query\":\"query a() { insert Person { name: \\\"%s\\\" } }\"}", name);
    http_resp r = post_json(&S, NULL, "/graphs/g1/mutate", body);
    assert_int_equal(r.status, 200);
    http_free(&r);
}

static void test_feed(void **state)
{
    http_resp r = get(&S, NULL, "/graphs/g1/changes");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "blocks")), 0);
    assert_true(json_is_true(json_object_get(r.json, "caught_up")));
    char cursor[96];
    snprintf(cursor, sizeof cursor, "%s", jstr(r.json, "cursor"));
    http_free(&r);
    insert("F1");
    insert("F2");
    char path[256];
    snprintf(path, sizeof path, "/graphs/g1/changes?cursor=%s", cursor);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 200);
    json_t *blocks = json_object_get(r.json, "blocks");
    assert_int_equal(json_array_size(blocks), 2);
    json_t *b0 = json_array_get(blocks, 0); /* oldest first */
    json_t *first = json_array_get(json_object_get(b0, "changes"), 0);
    assert_string_equal(jstr(json_object_get(json_object_get(first, "after"), "properties"), "name"), "F1");
    assert_string_equal(jstr(json_object_get(b0, "cause"), "authored_branch"), "main");
    snprintf(cursor, sizeof cursor, "%s", jstr(r.json, "cursor"));
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/changes?cursor=%s", cursor);
    r = get(&S, NULL, path);
    assert_int_equal(json_array_size(json_object_get(r.json, "blocks")), 0);
    http_free(&r);
    /* from the beginning, one change per page, followed to the terminal cursor */
    size_t total = 0, pages = 0;
    snprintf(path, sizeof path, "/graphs/g1/changes?start=beginning&limit=1");
    for (;;) {
        r = get(&S, NULL, path);
        assert_int_equal(r.status, 200);
        size_t i;
        json_t *b;
        json_array_foreach(json_object_get(r.json, "blocks"), i, b) total += json_array_size(json_object_get(b, "changes"));
        pages++;
        const char *next = jstr(r.json, "next_page_token");
        if (!next) {
            assert_non_null(jstr(r.json, "cursor"));
            http_free(&r);
            break;
        }
        snprintf(path, sizeof path, "/graphs/g1/changes?limit=1&page_token=%s", next);
        http_free(&r);
        assert_true(pages < 50);
    }
    assert_int_equal(total, 5); /* seed: 2 people + 1 edge; F1; F2 */
    /* errors */
    r = get(&S, NULL, "/graphs/g1/changes?cursor=nonsense");
    assert_int_equal(r.status, 400);
    assert_int_equal(strncmp(jstr(r.json, "error"), "change cursor rejected:", 23), 0);
    http_free(&r);
    snprintf(path, sizeof path, "/graphs/g1/changes?cursor=%s&start=now", cursor);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/changes?start=after:01ZZZZZZZZZZZZZZZZZZZZZZZZ");
    assert_int_equal(r.status, 410);
    assert_null(json_object_get(r.json, "code"));
    assert_non_null(json_object_get(r.json, "change_feed_gap"));
    http_free(&r);
    r = get(&S, NULL, "/graphs/g1/changes?start=later");
    assert_int_equal(r.status, 400);
    http_free(&r);
}

static void test_baseline(void **state)
{
    http_resp r = post_json(&S, NULL, "/graphs/g1/changes/baseline", "{\"kind\":[\"node\"],\"type\":[\"Person\"]}");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "application/x-ndjson"));
    /* the people, then the terminal line */
    size_t lines = 0;
    for (size_t i = 0; i < r.len; i++) lines += r.body[i] == '\n';
    char *last = r.body + r.len - 1;
    *last = 0;
    char *nl = strrchr(r.body, '\n');
    json_t *tail = json_loads(nl ? nl + 1 : r.body, 0, NULL);
    json_t *b = json_object_get(tail, "baseline");
    assert_non_null(b);
    char head[64], genesis[64];
    head_and_genesis(head, genesis);
    assert_string_equal(jstr(b, "snapshot_commit_id"), head);
    assert_null(strstr(r.body, "\"edge\""));
    assert_true(lines >= 5); /* Ada, Alan, F1, F2 and the baseline line */
    /* the resume cursor polls from the snapshot: nothing new yet, then the next write */
    char path[256];
    snprintf(path, sizeof path, "/graphs/g1/changes?cursor=%s", jstr(b, "resume_cursor"));
    json_decref(tail);
    http_free(&r);
    r = get(&S, NULL, path);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "blocks")), 0);
    http_free(&r);
    insert("F3");
    r = get(&S, NULL, path);
    assert_int_equal(json_array_size(json_object_get(r.json, "blocks")), 1);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/changes/baseline", "{\"kind\":[\"vertex\"]}");
    assert_int_equal(r.status, 400);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/changes/baseline", "{\"kind\":[\"edge\"],\"type\":[\"Person\"]}");
    assert_int_equal(r.status, 200); /* nothing selected: only the terminal line */
    assert_int_equal(strncmp(r.body, "{\"baseline\"", 11), 0);
    http_free(&r);
}

/* A U64 above 2^63-1 in a change image is a bare number on every change route, as in rows. */
static void test_u64_bare(void **state)
{
    char path[256];
    const char *routes[3];
    char p1[256], p2[256], p3[256];
    snprintf(p1, sizeof p1, "/graphs/g2/commits/%s/changes", u64_after);
    snprintf(p2, sizeof p2, "/graphs/g2/diff?from=%s&to=%s", u64_before, u64_after);
    snprintf(p3, sizeof p3, "/graphs/g2/changes?start=beginning");
    routes[0] = p1, routes[1] = p2, routes[2] = p3;
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s", routes[i]);
        http_resp r = get(&S, NULL, path);
        assert_int_equal(r.status, 200);
        if (!r.body || !strstr(r.body, "\"reading\":18446744073709551615")) fail_msg("%s: no bare U64 in %s", path, r.body);
        assert_null(strstr(r.body, "\"18446744073709551615\""));
        http_free(&r);
    }
}

/* A U64 parameter above 2^63-1 sent as a bare number (as the rows spell it, and as a
 * client such as the studio sends it back) is accepted on the mutation and query routes and
 * reaches the value unrounded; jansson alone refuses it ("too big integer"). */
static void test_u64_param_bare(void **state)
{
    (void)state;
    http_resp r = post_json(&S, NULL, "/graphs/g2/mutate",
                            "{\"query\":\"query m($r: U64) { update Meter set { reading: $r } where name = \\\"m\\\" }\","
                            "\"params\":{\"r\":18446744073709551614}}");
    if (r.status != 200 || json_integer_value(json_object_get(r.json, "affected_nodes")) != 1)
        fail_msg("mutate: %ld %s", r.status, r.body);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g2/query",
                  "{\"query\":\"query q($r: U64) { match { $m: Meter { reading: $r } } return { $m.name, $m.reading } }\","
                  "\"params\":{\"r\":18446744073709551614}}");
    /* (the client's jansson cannot read this body: its text is checked) */
    if (r.status != 200 || !r.body || !strstr(r.body, "\"row_count\": 1,")) fail_msg("query: %ld %s", r.status, r.body);
    if (!strstr(r.body, "18446744073709551614")) fail_msg("no bare U64 in %s", r.body);
    http_free(&r);
    /* past 2^64-1 it is still refused, with jansson's words */
    r = post_json(&S, NULL, "/graphs/g2/query",
                  "{\"query\":\"query q($r: U64) { match { $m: Meter { reading: $r } } return { $m.name } }\","
                  "\"params\":{\"r\":18446744073709551616}}");
    assert_int_equal(r.status, 400);
    http_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_changes),
        cmocka_unit_test(test_feed),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_u64_bare),
        cmocka_unit_test(test_u64_param_bare),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
