/*
 * test_time_travel.c — any retained commit can be read with every query feature (issue 7,
 * "Time travel"): an insert → update → delete chain (c1 load inserts people and edges, c2
 * updates an age, c3 deletes a person with its edge cascade), then, after the whole chain,
 * every commit (genesis included) is read again with type scans, inline parameter filters,
 * comparison filters, one-hop traversals with edge properties, variable-length and undirected
 * traversals, negation, aggregates, ordering with limit, export and the snapshot's row counts.
 * Each read must report the commit it read, a branch created at an old commit reads the same
 * as the commit, and an unknown commit is not_found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/export.h"
#include "engine/mutate.h"
#include "fixture.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32? }\n"
    "edge Knows: Person -> Person { since: Date? }\n";

static const char *READS =
    "query all() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n"
    "query by_name($n: String) { match { $p: Person { name: $n } } return { $p.age } }\n"
    "query older() { match { $p: Person  $p.age > 30 } return { $p.name } order { $p.name } }\n"
    "query friends() { match { $a: Person  $a $w:knows $b } return { $a.name, $b.name, $w.since } order { $a.name } }\n"
    "query reach() { match { $p: Person { name: \"Ada\" }  $p knows{1,2} $f } return { $f.name } order { $f.name } }\n"
    "query around() { match { $p: Person { name: \"Cy\" }  $p <knows> $f } return { $f.name } order { $f.name } }\n"
    "query lonely() { match { $p: Person  not { $p <knows> $x } } return { $p.name } order { $p.name } }\n"
    "query stats() { match { $p: Person } return { count($p) as n, sum($p.age) as s, min($p.age) as lo, max($p.age) as hi } }\n"
    "query top() { match { $p: Person  $p.age > 0 } return { $p.name } order { $p.age desc } limit 1 }\n";

static const char *MUTS =
    "query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }\n"
    "query del_person($name: String) { delete Person where name = $name }\n";

#define NQ 9
static const char *QNAMES[NQ] = {"all", "by_name", "older", "friends", "reach", "around", "lonely", "stats", "top"};
static const char *QPARAMS[NQ] = {NULL, "{\"n\": \"Bob\"}", NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/* Expected renderings per commit (c0 genesis .. c3); dates are days since 1970 (2020-01-01 = 18262). */
static const char *WANT[4][NQ] = {
    /* c0: the empty graph */
    {"", "", "", "", "", "", "", "0|null|null|null", ""},
    /* c1: inserted Ada 36, Bob 25, Cy 41, Dee; Ada->Bob since 2020-01-01, Bob->Cy */
    {"Ada|36;Bob|25;Cy|41;Dee|null", "25", "Ada;Cy", "Ada|Bob|18262;Bob|Cy|null", "Bob;Cy", "Bob", "Dee",
     "4|102|25|41", "Cy"},
    /* c2: Bob's age 25 -> 50 */
    {"Ada|36;Bob|50;Cy|41;Dee|null", "50", "Ada;Bob;Cy", "Ada|Bob|18262;Bob|Cy|null", "Bob;Cy", "Bob", "Dee",
     "4|127|36|50", "Bob"},
    /* c3: Cy deleted, and with it the edge Bob->Cy */
    {"Ada|36;Bob|50;Dee|null", "50", "Ada;Bob", "Ada|Bob|18262", "Bob", "", "Dee", "3|86|36|50", "Bob"},
};
static const uint64_t NODES[4] = {0, 4, 4, 3}, EDGES[4] = {0, 2, 2, 1};

/* Reads every query at `commit` (or at the head of `branch` when commit is NULL) and compares
 * with row `want`; the result must name `expect_commit`. */
static void read_all(fixture *f, const char *branch, const char *commit, const char *expect_commit, int want)
{
    for (int q = 0; q < NQ; q++) {
        json_t *pj = QPARAMS[q] ? json_loads(QPARAMS[q], 0, NULL) : NULL;
        og_result r;
        char got_commit[OG_ULID_LEN + 1] = "";
        og_status st = og_engine_query(f->e, branch, commit, "q.gq", READS, strlen(READS), QNAMES[q], pj, &r, got_commit);
        json_decref(pj);
        if (st) fail_msg("c%d %s: %s", want, QNAMES[q], og_error_message());
        char got[1024];
        fixture_render(&r, got, sizeof got);
        og_result_free(&r);
        if (strcmp(got, WANT[want][q])) fail_msg("c%d %s: got '%s' want '%s'", want, QNAMES[q], got, WANT[want][q]);
        assert_string_equal(got_commit, expect_commit);
    }
}

/* Exports at `commit` and counts node and edge lines. */
static void export_counts(fixture *f, const char *commit, uint64_t *nodes, uint64_t *edges)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    if (og_engine_export(f->e, NULL, commit, NULL, 0, fp) != OG_OK) fail_msg("export: %s", og_error_message());
    rewind(fp);
    char line[4096];
    *nodes = *edges = 0;
    while (fgets(line, sizeof line, fp)) {
        if (!strncmp(line, "{\"type\"", 7)) (*nodes)++;
        else if (!strncmp(line, "{\"edge\"", 7)) (*edges)++;
        else fail_msg("export line: %s", line);
    }
    fclose(fp);
}

static og_status mutate(fixture *f, const char *name, const char *params, og_write_result *w)
{
    json_t *pj = json_loads(params, 0, NULL);
    og_mutate_opts mo = {NULL, NULL};
    og_status st = og_engine_mutate(f->e, "m.gq", MUTS, strlen(MUTS), name, pj, &mo, w, NULL);
    json_decref(pj);
    return st;
}

static void every_commit_of_an_insert_update_delete_chain_reads_with_every_query_feature(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, READS);
    assert_non_null(f);
    char c[4][OG_ULID_LEN + 1];
    og_ref_entry h;
    assert_int_equal(og_graph_head_entry(og_engine_graph(f->e), "main", &h), OG_OK);
    snprintf(c[0], sizeof c[0], "%s", h.commit);
    og_write_result w;
    memset(&w, 0, sizeof w);
    assert_int_equal(fixture_load(f,
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\",\"age\":25}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"Cy\",\"age\":41}}\n"
                                  "{\"type\":\"Person\",\"data\":{\"name\":\"Dee\"}}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Bob\",\"data\":{\"since\":\"2020-01-01\"}}\n"
                                  "{\"edge\":\"Knows\",\"from\":\"Bob\",\"to\":\"Cy\"}\n",
                                  OG_LOAD_APPEND, &w),
                     OG_OK);
    snprintf(c[1], sizeof c[1], "%s", w.commit);
    assert_int_equal(mutate(f, "set_age", "{\"name\": \"Bob\", \"age\": 50}", &w), OG_OK);
    assert_true(w.published);
    snprintf(c[2], sizeof c[2], "%s", w.commit);
    assert_int_equal(mutate(f, "del_person", "{\"name\": \"Cy\"}", &w), OG_OK);
    assert_true(w.published);
    snprintf(c[3], sizeof c[3], "%s", w.commit);

    /* after the whole chain, every commit reads as it was, newest and oldest in either order */
    for (int i = 3; i >= 0; i--) read_all(f, NULL, c[i], c[i], i);
    for (int i = 0; i < 4; i++) read_all(f, NULL, c[i], c[i], i);
    read_all(f, "main", NULL, c[3], 3); /* the head is the last commit */

    /* export and the snapshot's row counts at each commit */
    for (int i = 0; i < 4; i++) {
        uint64_t n, e;
        export_counts(f, c[i], &n, &e);
        assert_int_equal(n, NODES[i]);
        assert_int_equal(e, EDGES[i]);
        og_read *r;
        assert_int_equal(og_read_begin(&r, f->e, NULL, c[i]), OG_OK);
        const og_catalog *cat = og_read_catalog(r);
        char dir[64];
        og_cat_type_table_dir(&cat->nodes[0], dir, sizeof dir);
        const og_table_ref *ref = og_snapshot_table(og_read_snapshot(r), dir);
        assert_int_equal(ref ? ref->rows : 0, NODES[i]);
        og_read_end(r);
    }

    /* a branch created at an old commit reads exactly that commit, and stays there while main moves */
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "then", NULL, c[1], NULL, NULL), OG_OK);
    read_all(f, "then", NULL, c[1], 1);
    assert_int_equal(mutate(f, "set_age", "{\"name\": \"Ada\", \"age\": 99}", &w), OG_OK);
    read_all(f, "then", NULL, c[1], 1);
    read_all(f, NULL, c[3], c[3], 3);

    /* an unknown commit is not_found; a malformed id is refused */
    og_result r;
    assert_int_equal(og_engine_query(f->e, NULL, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "q.gq", READS, strlen(READS), "all", NULL,
                                     &r, NULL),
                     OG_ERR_NOT_FOUND);
    assert_int_not_equal(og_engine_query(f->e, NULL, "not-a-commit", "q.gq", READS, strlen(READS), "all", NULL, &r, NULL),
                         OG_OK);
    fixture_free(f);
}

int main(void)
{
    (void)fixture_query; /* fixture.h helper this file does not need */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_commit_of_an_insert_update_delete_chain_reads_with_every_query_feature),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
