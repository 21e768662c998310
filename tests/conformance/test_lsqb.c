/*
 * test_lsqb.c — LSQB conformance: the LDBC social network example of the Labelled Subgraph
 * Query Benchmark (../shared/data/lsqb-example) converted by tools/lsqb_to_ndjson.py, loaded
 * into the schema tests/conformance/lsqb.pg through the public C API, and the LSQB queries
 * q1–q9 (tests/conformance/lsqb.gq) counted against expected-counts.txt.
 *
 * Every query has two forms (lsqb.gq): plain traversals, and `_edges` with every Cypher
 * relationship bound to an edge variable (one row per relationship, like Cypher's count).
 * q7 needs OPTIONAL MATCH, which the query language does not have; it is asserted as the sum of
 * four disjoint queries (docs/conformance.md), and its one-query form is a skipped case.
 * The last test doubles every KNOWS relationship (adds the reversed edge) and checks that the
 * `_edges` forms then count each relationship like Cypher (×2 per KNOWS in the pattern) while
 * the plain forms keep set semantics.
 *
 * Needs python3 (standard library only) on PATH for the converter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lsqb_common.h"

typedef struct lsqb {
    char dir[64];        /* temporary directory: converted data and graphs */
    char ndjson[128];    /* the converter's output */
    char *schema;        /* tests/conformance/lsqb.pg */
    char *queries;       /* tests/conformance/lsqb.gq */
    int64_t expected[10]; /* expected[n] = count of qn from expected-counts.txt, -1 = absent */
    uint64_t csv_records; /* data lines over all CSV files */
    og_db *db;           /* the converted graph, loaded once */
} lsqb;

static lsqb *L;

/* Data lines (non-blank, after the header) of every CSV file of data/: each becomes one record. */
static uint64_t count_csv_records(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cat '%s'/data/*.csv", lsqb_dir());
    FILE *p = popen(cmd, "r");
    uint64_t lines = 0, headers = 0;
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p)) {
        if (strstr(buf, ":ID(") || strstr(buf, "_ID(")) headers++;
        else if (buf[0] != '\n' && buf[0] != '\r') lines++;
    }
    if (p) pclose(p);
    return headers ? lines : 0;
}

static int convert(const char *out, const char *log)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 '%s/tools/lsqb_to_ndjson.py' '%s/data' '%s' 2>'%s'", OG_SOURCE_DIR,
             lsqb_dir(), out, log);
    return system(cmd);
}

static og_status open_loaded(og_db **db, const char *name)
{
    char uri[160];
    snprintf(uri, sizeof uri, "%s/%s", L->dir, name);
    og_status st = og_db_init(db, uri, "lsqb.pg", L->schema, strlen(L->schema), NULL);
    if (st) return st;
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt r;
    st = og_db_load(&r, *db, L->ndjson, &lo);
    if (st == OG_OK && r.records != L->csv_records) {
        fprintf(stderr, "loaded %llu records, the CSV files hold %llu\n", (unsigned long long)r.records,
                (unsigned long long)L->csv_records);
        return OG_ERR_INTERNAL;
    }
    return st;
}

static int setup(void **state)
{
    (void)state;
    L = calloc(1, sizeof *L);
    if (!L) return -1;
    strcpy(L->dir, "/tmp/og-lsqb-XXXXXX");
    if (!mkdtemp(L->dir)) return -1;
    snprintf(L->ndjson, sizeof L->ndjson, "%s/lsqb.jsonl", L->dir);
    L->schema = lsqb_slurp(OG_SOURCE_DIR "/tests/conformance/lsqb.pg");
    L->queries = lsqb_slurp(OG_SOURCE_DIR "/tests/conformance/lsqb.gq");
    if (!L->schema || !L->queries || lsqb_read_expected(L->expected)) return -1;
    L->csv_records = count_csv_records();
    char log[128];
    snprintf(log, sizeof log, "%s/convert.log", L->dir);
    if (convert(L->ndjson, log) != 0) {
        char *msg = lsqb_slurp(log);
        fprintf(stderr, "tools/lsqb_to_ndjson.py failed: %s\n", msg ? msg : "(no output)");
        free(msg);
        return -1;
    }
    og_status st = open_loaded(&L->db, "graph");
    if (st) {
        fprintf(stderr, "lsqb graph: %s: %s\n", og_status_name(st), og_error_message());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!L) return 0;
    if (L->db) og_db_close(L->db);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", L->dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", L->dir);
    free(L->schema);
    free(L->queries);
    free(L);
    L = NULL;
    return 0;
}

static int64_t count_of(og_db *db, const char *name) { return lsqb_count_of(db, L->queries, name); }

static int64_t q7_count(og_db *db)
{
    return count_of(db, "q7_liked_replied") + count_of(db, "q7_liked_unreplied") +
           count_of(db, "q7_unliked_replied") + count_of(db, "q7_unliked_unreplied");
}

/* Both forms of qn equal expected-counts.txt. */
static void expect_lsqb(int n)
{
    assert_true(L->expected[n] >= 0);
    char plain[16], edges[24];
    snprintf(plain, sizeof plain, "q%d", n);
    snprintf(edges, sizeof edges, "q%d_edges", n);
    int64_t got = count_of(L->db, plain);
    if (got != L->expected[n]) fail_msg("%s: count %lld, expected-counts.txt says %lld", plain, (long long)got,
                                        (long long)L->expected[n]);
    got = count_of(L->db, edges);
    if (got != L->expected[n]) fail_msg("%s: count %lld, expected-counts.txt says %lld", edges, (long long)got,
                                        (long long)L->expected[n]);
}

static void converter_maps_every_csv_record_and_finds_no_multigraph_edges(void **state)
{
    (void)state;
    assert_true(L->csv_records > 0); /* open_loaded() compared it with the load receipt */
    char log[128];
    snprintf(log, sizeof log, "%s/convert.log", L->dir);
    char *text = lsqb_slurp(log);
    assert_non_null(text);
    /* set semantics and Cypher's per-relationship counting agree on a graph without parallel,
     * reversed-duplicate or self-loop edges; the converter reports all three */
    if (!strstr(text, "parallel-reversed-or-self-loop-edges 0\n")) fail_msg("converter: %s", text);
    free(text);
}

static void lsqb_q1_long_path_count_matches(void **state)
{
    (void)state;
    expect_lsqb(1);
}

static void lsqb_q2_knows_plus_reply_cycle_count_matches(void **state)
{
    (void)state;
    expect_lsqb(2);
}

static void lsqb_q3_same_country_triangle_count_matches(void **state)
{
    (void)state;
    expect_lsqb(3);
}

static void lsqb_q4_message_star_count_matches(void **state)
{
    (void)state;
    expect_lsqb(4);
}

static void lsqb_q5_reply_with_other_tag_count_matches(void **state)
{
    (void)state;
    expect_lsqb(5);
}

static void lsqb_q6_two_hop_interest_count_matches(void **state)
{
    (void)state;
    expect_lsqb(6);
}

static void lsqb_q7_optional_match_as_sum_of_disjoint_cases_matches(void **state)
{
    (void)state;
    assert_true(L->expected[7] >= 0);
    int64_t got = q7_count(L->db);
    if (got != L->expected[7]) fail_msg("q7 (sum of 4 cases): %lld, expected-counts.txt says %lld", (long long)got,
                                        (long long)L->expected[7]);
}

static void lsqb_q7_as_one_query_is_inexpressible(void **state)
{
    (void)state;
    /* q7 is two OPTIONAL MATCHes: per message, tags × creators × max(1, likers) × max(1, replies).
     * The language has no OPTIONAL (left-outer) match, no OR and no arithmetic, so no single
     * query returns that count; the test above adds four disjoint queries instead. */
    printf("skipped: q7 needs OPTIONAL MATCH (no left-outer match, OR or arithmetic in .gq)\n");
    skip();
}

static void lsqb_q8_negated_tag_count_matches(void **state)
{
    (void)state;
    expect_lsqb(8);
}

static void lsqb_q9_negated_knows_count_matches(void **state)
{
    (void)state;
    expect_lsqb(9);
}

/* Adds, for every KNOWS edge a -> b, a second relationship b -> a.  Cypher's undirected
 * (p)-[:KNOWS]-(q) then matches two relationships per adjacent pair, so each match of a query
 * with k KNOWS relationships (all between distinct pairs, see docs/conformance.md) becomes 2^k
 * matches; the plain forms, which count distinct neighbours, do not change. */
static void edge_bound_forms_count_each_relationship_like_cypher(void **state)
{
    (void)state;
    og_db *db = NULL;
    og_status st = open_loaded(&db, "graph-doubled");
    if (st) fail_msg("load: %s: %s", og_status_name(st), og_error_message());

    int64_t before[10], before_q7 = q7_count(db);
    char name[24];
    for (int n = 1; n <= 9; n++) {
        if (n == 7) continue;
        snprintf(name, sizeof name, "q%d", n);
        before[n] = count_of(db, name);
    }

    const char *pairs_q = "query pairs() { match { $a: Person  $a knows $b } return { $a.ldbc_id, $b.ldbc_id } }";
    og_rows *rows = NULL;
    st = og_db_query(&rows, db, pairs_q, strlen(pairs_q), NULL, NULL, NULL);
    if (st) fail_msg("pairs: %s: %s", og_status_name(st), og_error_message());
    assert_true(og_rows_count(rows) > 0);
    char path[160];
    snprintf(path, sizeof path, "%s/reversed-knows.jsonl", L->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < og_rows_count(rows); i++)
        fprintf(f, "{\"edge\":\"Knows\",\"from\":\"%lld\",\"to\":\"%lld\"}\n", (long long)og_rows_int(rows, i, 1),
                (long long)og_rows_int(rows, i, 0));
    assert_int_equal(fclose(f), 0);
    og_rows_free(rows);
    og_load_opts lo = {.mode = OG_LOAD_MERGE};
    og_receipt r;
    st = og_db_load(&r, db, path, &lo);
    if (st) fail_msg("reversed knows: %s: %s", og_status_name(st), og_error_message());

    static const int knows_rels[10] = {0, 0, 1, 3, 0, 0, 2, 0, 0, 2}; /* KNOWS relationships in qn */
    for (int n = 1; n <= 9; n++) {
        if (n == 7) continue;
        snprintf(name, sizeof name, "q%d", n);
        int64_t plain = count_of(db, name);
        if (plain != before[n]) fail_msg("%s changed from %lld to %lld", name, (long long)before[n], (long long)plain);
        snprintf(name, sizeof name, "q%d_edges", n);
        int64_t want = before[n] << knows_rels[n], got = count_of(db, name);
        if (got != want) fail_msg("%s: %lld, want %lld", name, (long long)got, (long long)want);
    }
    assert_true(q7_count(db) == before_q7); /* no KNOWS in q7 */
    og_db_close(db);
}

int main(void)
{
    if (!og_test_have_data("conformance_test_lsqb", lsqb_dir())) return OG_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(converter_maps_every_csv_record_and_finds_no_multigraph_edges),
        cmocka_unit_test(lsqb_q1_long_path_count_matches),
        cmocka_unit_test(lsqb_q2_knows_plus_reply_cycle_count_matches),
        cmocka_unit_test(lsqb_q3_same_country_triangle_count_matches),
        cmocka_unit_test(lsqb_q4_message_star_count_matches),
        cmocka_unit_test(lsqb_q5_reply_with_other_tag_count_matches),
        cmocka_unit_test(lsqb_q6_two_hop_interest_count_matches),
        cmocka_unit_test(lsqb_q7_optional_match_as_sum_of_disjoint_cases_matches),
        cmocka_unit_test(lsqb_q7_as_one_query_is_inexpressible),
        cmocka_unit_test(lsqb_q8_negated_tag_count_matches),
        cmocka_unit_test(lsqb_q9_negated_knows_count_matches),
        cmocka_unit_test(edge_bound_forms_count_each_relationship_like_cypher),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
