/*
 * test_search.c — golden tests of the search functions (engine/search.h, docs/search.md) on a
 * seven-document corpus whose analysed terms are listed below (checked with
 * `omnigraph analyze`):
 *
 *   d1 "The quick brown fox jumps over the lazy dog"  quick brown fox jump over lazi dog  (7)
 *   d2 "A quick brown dog"                            quick brown dog                     (3)
 *   d3 "Foxes are quick and clever"                   fox quick clever                    (3)
 *   d4 "The state of the art in graph databases"      state art graph databas             (4)
 *   d5 "State art graph"                              state art graph                     (3)
 *   d6 "databases of graphs and graph databases"      databas graph graph databas         (4)
 *   d7 null body
 * vectors (squared L2 from the origin): d1 [0,0,0] 0, d2 [1,0,0] 1, d3 [0,2,0] 4, d4 [3,0,0] 9,
 * d5 none, d6 [0,0,1] 1, d7 [5,5,5] 75.  Tags: d1, d2 animal; d4 graph; d6 graph, db.
 *
 * BM25 expectations are computed here from the formula over hand-written tf / dl tables (not
 * through the analyzer), per commit, so deleted and updated rows must leave the statistics.
 *
 * The whole group runs three times with the same expectations (docs/indexes.md: results never
 * depend on index coverage): without index files (OG_INDEX=off), with every data file indexed
 * (`index build` after the load and after every mutation), and with PARTIAL coverage (the
 * first load's data file indexed, a second load's and the mutations' files not).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "engine/index_build.h"
#include "engine/mutate.h"
#include "engine/tableview.h"
#include "fixture.h"
#include "graph/graph.h"

static const char *SCHEMA =
    "node Doc { slug: String @key  body: String? @index  year: I32  emb: Vector(3)? }\n"
    "node Tag { name: String @key }\n"
    "edge Tagged: Doc -> Tag\n";

static const char *DATA =
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d1\",\"body\":\"The quick brown fox jumps over the lazy dog\",\"year\":2020,\"emb\":[0,0,0]}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d2\",\"body\":\"A quick brown dog\",\"year\":2021,\"emb\":[1,0,0]}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d3\",\"body\":\"Foxes are quick and clever\",\"year\":2022,\"emb\":[0,2,0]}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d4\",\"body\":\"The state of the art in graph databases\",\"year\":2023,\"emb\":[3,0,0]}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d5\",\"body\":\"State art graph\",\"year\":2024}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d6\",\"body\":\"databases of graphs and graph databases\",\"year\":2024,\"emb\":[0,0,1]}}\n"
    "{\"type\":\"Doc\",\"data\":{\"slug\":\"d7\",\"year\":2019,\"emb\":[5,5,5]}}\n"
    "{\"type\":\"Tag\",\"data\":{\"name\":\"animal\"}}\n"
    "{\"type\":\"Tag\",\"data\":{\"name\":\"graph\"}}\n"
    "{\"type\":\"Tag\",\"data\":{\"name\":\"db\"}}\n"
    "{\"edge\":\"Tagged\",\"from\":\"d1\",\"to\":\"animal\"}\n"
    "{\"edge\":\"Tagged\",\"from\":\"d2\",\"to\":\"animal\"}\n"
    "{\"edge\":\"Tagged\",\"from\":\"d4\",\"to\":\"graph\"}\n"
    "{\"edge\":\"Tagged\",\"from\":\"d6\",\"to\":\"graph\"}\n"
    "{\"edge\":\"Tagged\",\"from\":\"d6\",\"to\":\"db\"}\n";

static const char *QUERIES =
    "query s($q: String) { match { $d: Doc  search($d.body, $q) } return { $d.slug } order { $d.slug } }\n"
    "query fz($q: String, $k: I64) { match { $d: Doc  fuzzy($d.body, $q, $k) } return { $d.slug } order { $d.slug } }\n"
    "query fzd($q: String) { match { $d: Doc  fuzzy($d.body, $q) } return { $d.slug } order { $d.slug } }\n"
    "query ph($q: String) { match { $d: Doc  match_text($d.body, $q) } return { $d.slug } order { $d.slug } }\n"
    "query two($a: String, $b: String) { match { $d: Doc  search($d.body, $a)  search($d.body, $b) } return { $d.slug } order { $d.slug } }\n"
    "query proj($q: String) { match { $d: Doc } return { $d.slug, search($d.body, $q) as hit, bm25($d.body, $q) as s } order { $d.slug } }\n"
    "query rank($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) desc } }\n"
    "query rank_lim($q: String) { match { $d: Doc } return { $d.slug } order { bm25($d.body, $q) } limit 2 }\n"
    "query rank_tagged($q: String) { match { $t: Tag { name: \"graph\" }  $d tagged $t } return { $d.slug } order { bm25($d.body, $q) } }\n"
    "query near($v: Vector(3), $y: I32) { match { $d: Doc  $d.year >= $y } return { $d.slug, nearest($d.emb, $v) as dist } order { nearest($d.emb, $v) } limit 2 }\n"
    "query near_lit() { match { $d: Doc } return { $d.slug } order { nearest($d.emb, [0, 0.0, 0]) } limit 3 }\n"
    "query near2($v: Vector(3)) { match { $d: Doc } return { $d.slug, $d.year } order { nearest($d.emb, $v), $d.year desc } limit 3 }\n"
    "query near_text($t: String) { match { $d: Doc } return { $d.slug } order { nearest($d.emb, $t) } limit 3 }\n"
    "query fuse3($v: Vector(3), $q: String) { match { $d: Doc } return { $d.slug, rrf(nearest($d.emb, $v), bm25($d.body, $q)) as r } order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 3 }\n"
    "query fuse4($v: Vector(3), $q: String) { match { $d: Doc } return { $d.slug } order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 4 }\n"
    "query fuse4r($v: Vector(3), $q: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.body, $q), nearest($d.emb, $v)) } limit 4 }\n"
    "query fusek($v: Vector(3), $q: String, $k: I64) { match { $d: Doc } return { $d.slug } order { rrf(nearest($d.emb, $v), bm25($d.body, $q), $k) } limit 2 }\n"
    "query alias($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as score } order { score desc } limit 2 }\n"
    "query dists($v: Vector(3)) { match { $d: Doc  $d.year >= 2019 } return { $d.slug, nearest($d.emb, $v) as dist } order { $d.slug } }\n"
    "query nodog() { match { $d: Doc  not { $d tagged $t  search($d.body, \"dog\") } } return { $d.slug } order { $d.slug } }\n"
    "query fanout($v: Vector(3), $q: String) { match { $d: Doc  $d tagged $t } return { $d.slug, $t.name } order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 3 }\n";

static const char *MUTS =
    "query set_body($slug: String, $body: String) { update Doc set { body: $body } where slug = $slug }\n"
    "query del_doc($slug: String) { delete Doc where slug = $slug }\n";

static fixture *F;

enum { MODE_NOINDEX, MODE_INDEXED, MODE_PARTIAL };
static int MODE;

/* `omnigraph index build` of main (fts of Doc.body); returns the files it covered. */
static long reindex(const char *branch)
{
    og_index_run_opts o = {branch, "fts", "Doc.body", 1};
    json_t *rep;
    if (og_engine_index_run(F->e, &o, &rep) != OG_OK) {
        fprintf(stderr, "index build: %s\n", og_error_message());
        return -1;
    }
    long n = (long)json_integer_value(json_object_get(rep, "covered"));
    json_decref(rep);
    return n;
}

static int setup(void **state)
{
    (void)state;
    og_tableview_set_index_mode(MODE == MODE_NOINDEX ? 0 : 2);
    F = fixture_new(SCHEMA, QUERIES);
    if (!F) return -1;
    og_write_result w;
    if (MODE == MODE_PARTIAL) {
        /* d1..d4 in one data file, indexed; the rest in a second, not */
        const char *cut = strstr(DATA, "{\"type\":\"Doc\",\"data\":{\"slug\":\"d5\"");
        char *first = strndup(DATA, (size_t)(cut - DATA));
        og_status st = first ? fixture_load(F, first, OG_LOAD_OVERWRITE, &w) : OG_ERR_NOMEM;
        free(first);
        if (st == OG_OK && reindex(NULL) != 1) st = OG_ERR_INTERNAL;
        if (st == OG_OK) st = fixture_load(F, cut, OG_LOAD_APPEND, &w);
        if (st != OG_OK) {
            fprintf(stderr, "load: %s\n", og_error_message());
            return -1;
        }
        return 0;
    }
    if (fixture_load(F, DATA, OG_LOAD_OVERWRITE, &w) != OG_OK) {
        fprintf(stderr, "load: %s\n", og_error_message());
        return -1;
    }
    if (MODE == MODE_INDEXED && reindex(NULL) < 1) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_free(F);
    og_tableview_set_index_mode(2);
    return 0;
}

static void expect_at(const char *branch, const char *commit, const char *name, const char *params, const char *want)
{
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_result r;
    og_status st = og_engine_query(F->e, branch, commit, "q.gq", QUERIES, strlen(QUERIES), name, pj, &r, NULL);
    json_decref(pj);
    if (st) fail_msg("%s %s: %s", name, params ? params : "", og_error_message());
    char got[2048];
    fixture_render(&r, got, sizeof got);
    og_result_free(&r);
    if (strcmp(got, want)) fail_msg("%s %s: got '%s' want '%s'", name, params ? params : "", got, want);
}
#define EXPECT(name, params, want) expect_at(NULL, NULL, (name), (params), (want))

static og_status query_status(const char *name, const char *params)
{
    (void)fixture_query; /* the fixture's helper; this file renders through expect_at */
    json_t *pj = params ? json_loads(params, 0, NULL) : NULL;
    og_result r;
    og_status st = og_engine_query(F->e, NULL, NULL, "q.gq", QUERIES, strlen(QUERIES), name, pj, &r, NULL);
    json_decref(pj);
    if (st == OG_OK) og_result_free(&r);
    return st;
}

/* ---- independent BM25 ------------------------------------------------------------------------ */

/* score of one document: terms t with (df, tf) over N documents of average length avgdl */
static double bm25_ref(double N, double avgdl, const double *df, const double *tf, size_t nterms, double dl)
{
    double s = 0;
    for (size_t i = 0; i < nterms; i++) {
        if (tf[i] == 0) continue;
        double idf = log(1 + (N - df[i] + 0.5) / (df[i] + 0.5));
        s += idf * tf[i] * 2.2 / (tf[i] + 1.2 * (0.25 + 0.75 * dl / avgdl));
    }
    return s;
}

static void fmt(char *out, size_t cap, const char *slug, double v)
{
    snprintf(out, cap, "%s|%g", slug, v);
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void search_needs_every_term(void **state)
{
    (void)state;
    EXPECT("s", "{\"q\": \"quick fox\"}", "d1;d3");
    EXPECT("s", "{\"q\": \"DOGS\"}", "d1;d2");                     /* case folded and stemmed */
    EXPECT("s", "{\"q\": \"graph database\"}", "d4;d6");
    EXPECT("s", "{\"q\": \"graph unicorn\"}", "");                 /* a term no row has */
    EXPECT("s", "{\"q\": \"the\"}", "");                           /* only stop words: no terms */
    EXPECT("s", "{\"q\": \"\"}", "");
    EXPECT("s", "{\"q\": \"The Foxes!\"}", "d1;d3");
    EXPECT("two", "{\"a\": \"quick\", \"b\": \"dog\"}", "d1;d2");  /* two filters are AND-ed */
}

static void fuzzy_edits(void **state)
{
    (void)state;
    EXPECT("fz", "{\"q\": \"grip\", \"k\": 0}", "");
    EXPECT("fz", "{\"q\": \"grip\", \"k\": 1}", "");
    EXPECT("fz", "{\"q\": \"grip\", \"k\": 2}", "d4;d5;d6");      /* grip -> graph: 2 edits */
    EXPECT("fz", "{\"q\": \"foz\", \"k\": 0}", "");
    EXPECT("fz", "{\"q\": \"foz\", \"k\": 1}", "d1;d3");          /* fox */
    EXPECT("fz", "{\"q\": \"foz\", \"k\": 2}", "d1;d2;d3");       /* + dog */
    EXPECT("fzd", "{\"q\": \"foz\"}", "d1;d2;d3");                /* default 2 */
    EXPECT("fz", "{\"q\": \"foxes\", \"k\": 0}", "d1;d3");        /* on stems: foxes -> fox */
    EXPECT("fz", "{\"q\": \"foz dug\", \"k\": 1}", "d1");         /* every term: fox and dog */
    assert_int_equal(query_status("fz", "{\"q\": \"foz\", \"k\": -1}"), OG_ERR_INVALID);
}

static void phrases(void **state)
{
    (void)state;
    EXPECT("ph", "{\"q\": \"quick brown\"}", "d1;d2");
    EXPECT("ph", "{\"q\": \"brown quick\"}", "");                 /* order matters */
    EXPECT("ph", "{\"q\": \"quick fox\"}", "");                   /* adjacency matters */
    EXPECT("ph", "{\"q\": \"state of the art\"}", "d4");          /* stop words inside must be there */
    EXPECT("ph", "{\"q\": \"state art\"}", "d5");
    EXPECT("ph", "{\"q\": \"Graph Databases\"}", "d4;d6");
    EXPECT("ph", "{\"q\": \"the lazy dogs\"}", "d1");
    EXPECT("ph", "{\"q\": \"the\"}", "d1;d4");                    /* a phrase of one stop word */
    EXPECT("ph", "{\"q\": \"...\"}", "");
}

static void bm25_matches_the_formula(void **state)
{
    (void)state;
    /* "graph database": N 6, avgdl 24/6 = 4, df(graph) 3, df(databas) 2 */
    double df[2] = {3, 2};
    double t4[2] = {1, 1}, t5[2] = {1, 0}, t6[2] = {2, 2};
    double s4 = bm25_ref(6, 4, df, t4, 2, 4), s5 = bm25_ref(6, 4, df, t5, 2, 3), s6 = bm25_ref(6, 4, df, t6, 2, 4);
    char want[512], a[64], b[64], c[64];
    fmt(a, sizeof a, "d6", s6);
    fmt(b, sizeof b, "d4", s4);
    fmt(c, sizeof c, "d5", s5);
    snprintf(want, sizeof want, "%s;%s;%s", a, b, c);
    EXPECT("rank", "{\"q\": \"graph database\"}", want);
    EXPECT("rank_lim", "{\"q\": \"graph database\"}", "d6;d4");
    /* projected without ordering: 0 for rows without a query term, null for a null body */
    snprintf(want, sizeof want, "d1|false|0;d2|false|0;d3|false|0;d4|true|%g;d5|false|%g;d6|true|%g;d7|false|null", s4,
             s5, s6);
    EXPECT("proj", "{\"q\": \"graph database\"}", want);
    /* a repeated query term counts once; stop words count nothing */
    EXPECT("rank_lim", "{\"q\": \"the graph graph of database\"}", "d6;d4");
    EXPECT("rank", "{\"q\": \"unicorn\"}", "");
    /* ranking a traversal-introduced variable ranks what the traversal reached (d4, d6) */
    EXPECT("rank_tagged", "{\"q\": \"graph database\"}", "d6;d4");
    EXPECT("rank_tagged", "{\"q\": \"quick\"}", "");
    /* an alias of a bm25 score as the order key is the bm25 ordering; d2 and d3 tie (tf 1,
     * dl 3): id order */
    double dq[1] = {3}, tq[1] = {1};
    double sq = bm25_ref(6, 4, dq, tq, 1, 3);
    snprintf(want, sizeof want, "d2|%g;d3|%g", sq, sq);
    EXPECT("alias", "{\"q\": \"quick\"}", want);
    /* text predicates inside a negation */
    EXPECT("nodog", NULL, "d3;d4;d5;d6;d7");
}

static void nearest_prefilters(void **state)
{
    (void)state;
    const char *v0 = "\"v\": [0, 0, 0]";
    char p[128];
    snprintf(p, sizeof p, "{%s, \"y\": 0}", v0);
    EXPECT("near", p, "d1|0;d2|1");                     /* d2 and d6 tie at 1: id order */
    snprintf(p, sizeof p, "{%s, \"y\": 2022}", v0);
    EXPECT("near", p, "d6|1;d3|4");                     /* the filter first, then the top 2 */
    snprintf(p, sizeof p, "{%s, \"y\": 2024}", v0);
    EXPECT("near", p, "d6|1");                          /* fewer than the limit (d5 has no vector) */
    snprintf(p, sizeof p, "{%s, \"y\": 3000}", v0);
    EXPECT("near", p, "");                              /* none */
    EXPECT("near", "{\"v\": [3, 0, 0.5], \"y\": 0}", "d4|0.25;d2|4.25");
    EXPECT("near_lit", NULL, "d1;d2;d6");
    /* a projected distance without a nearest ordering: every row, null without a vector */
    EXPECT("dists", "{\"v\": [1, 0, 0]}", "d1|1;d2|0;d3|5;d4|4;d5|null;d6|2;d7|66");
    /* later order keys sort rows of equal distance */
    EXPECT("near2", "{\"v\": [0, 0, 0]}", "d1|2020;d6|2024;d2|2021");
    /* a String query needs an embedding provider: a clear typed error */
    assert_int_equal(query_status("near_text", "{\"t\": \"graphs\"}"), OG_ERR_UNSUPPORTED);
    assert_non_null(strstr(og_error_message(), "embedding"));
}

static void rrf_fusion(void **state)
{
    (void)state;
    const char *p = "{\"v\": [0, 0, 0], \"q\": \"graph database\"}";
    /* nearest arm (k = limit 3): d1 0, d2 1, d6 2; bm25 arm: d6 0, d4 1, d5 2 */
    char want[256];
    snprintf(want, sizeof want, "d6|%g;d1|%g;d2|%g", 1.0 / 63 + 1.0 / 61, 1.0 / 61, 1.0 / 62);
    EXPECT("fuse3", p, want);
    /* limit 4: d2 (nearest rank 1) and d4 (bm25 rank 1) tie at 1/62: the primary arm's first */
    EXPECT("fuse4", p, "d6;d1;d2;d4");
    EXPECT("fuse4r", p, "d6;d1;d4;d2");
    /* k = 1, limit 2: nearest arm d1 0, d2 1; bm25 arm d6 0, d4 1, d5 2.  d1 and d6 tie at 1/2:
     * d1 is in the primary arm */
    EXPECT("fusek", "{\"v\": [0, 0, 0], \"q\": \"graph database\", \"k\": 1}", "d1;d6");
    assert_int_equal(query_status("fusek", "{\"v\": [0, 0, 0], \"q\": \"graph database\", \"k\": 0}"), OG_ERR_INVALID);
    /* fan-out: every row of a winner, sharing its rank; then cut to the limit */
    EXPECT("fanout", p, "d6|db;d6|graph;d1|animal");
}

static og_status mutate(const char *branch, const char *name, const char *params, og_write_result *w)
{
    json_t *pj = json_loads(params, 0, NULL);
    og_mutate_opts mo = {branch, NULL};
    og_status st = og_engine_mutate(F->e, "m.gq", MUTS, strlen(MUTS), name, pj, &mo, w, NULL);
    json_decref(pj);
    if (st == OG_OK && MODE == MODE_INDEXED && reindex(branch) < 1) st = OG_ERR_INTERNAL;
    return st;
}

/* Statistics follow the snapshot: an update and a delete change them; old commits and
 * other branches keep theirs. */
static void statistics_cover_exactly_the_live_rows(void **state)
{
    (void)state;
    og_ref_entry h;
    assert_int_equal(og_graph_head_entry(og_engine_graph(F->e), "main", &h), OG_OK);
    char c1[OG_ULID_LEN + 1], c2[OG_ULID_LEN + 1], c3[OG_ULID_LEN + 1];
    snprintf(c1, sizeof c1, "%s", h.commit);
    assert_int_equal(og_branch_create(og_engine_graph(F->e), "side", NULL, c1, NULL, NULL), OG_OK);
    og_write_result w;
    assert_int_equal(mutate(NULL, "set_body", "{\"slug\": \"d5\", \"body\": \"graph graph graph\"}", &w), OG_OK);
    snprintf(c2, sizeof c2, "%s", w.commit);
    assert_int_equal(mutate(NULL, "del_doc", "{\"slug\": \"d6\"}", &w), OG_OK);
    snprintf(c3, sizeof c3, "%s", w.commit);
    assert_int_equal(mutate("side", "del_doc", "{\"slug\": \"d4\"}", &w), OG_OK);

    const char *q = "{\"q\": \"graph database\"}";
    char want[512];
    /* c1: as loaded */
    double df1[2] = {3, 2}, a[2] = {1, 1}, b[2] = {1, 0}, c[2] = {2, 2};
    snprintf(want, sizeof want, "d6|%g;d4|%g;d5|%g", bm25_ref(6, 4, df1, c, 2, 4), bm25_ref(6, 4, df1, a, 2, 4),
             bm25_ref(6, 4, df1, b, 2, 3));
    expect_at(NULL, c1, "rank", q, want);
    /* c2: d5 is "graph graph graph" (tf 3, dl 3); N, df and avgdl unchanged */
    double b2[2] = {3, 0};
    snprintf(want, sizeof want, "d6|%g;d4|%g;d5|%g", bm25_ref(6, 4, df1, c, 2, 4), bm25_ref(6, 4, df1, a, 2, 4),
             bm25_ref(6, 4, df1, b2, 2, 3));
    expect_at(NULL, c2, "rank", q, want);
    /* c3 (= main): d6 deleted: N 5, dl total 20, df(graph) 2, df(databas) 1 */
    double df3[2] = {2, 1};
    double s4 = bm25_ref(5, 4, df3, a, 2, 4), s5 = bm25_ref(5, 4, df3, b2, 2, 3);
    if (s5 > s4) snprintf(want, sizeof want, "d5|%g;d4|%g", s5, s4);
    else snprintf(want, sizeof want, "d4|%g;d5|%g", s4, s5);
    expect_at(NULL, c3, "rank", q, want);
    expect_at("main", NULL, "rank", q, want);
    expect_at(NULL, c3, "s", "{\"q\": \"databases\"}", "d4");
    expect_at(NULL, c1, "s", "{\"q\": \"databases\"}", "d4;d6");
    /* the side branch: c1 minus d4: N 5, dl total 20, df(graph) 2, df(databas) 1 */
    snprintf(want, sizeof want, "d6|%g;d5|%g", bm25_ref(5, 4, df3, c, 2, 4), bm25_ref(5, 4, df3, b, 2, 3));
    expect_at("side", NULL, "rank", q, want);
    /* nearest and rrf at the old commit see the old rows */
    expect_at(NULL, c1, "fuse3", "{\"v\": [0, 0, 0], \"q\": \"graph database\"}", "d6|0.0322665;d1|0.0163934;d2|0.016129");
    expect_at(NULL, NULL, "near", "{\"v\": [0, 0, 0], \"y\": 2022}", "d3|4;d4|9");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(search_needs_every_term),
        cmocka_unit_test(fuzzy_edits),
        cmocka_unit_test(phrases),
        cmocka_unit_test(bm25_matches_the_formula),
        cmocka_unit_test(nearest_prefilters),
        cmocka_unit_test(rrf_fusion),
        cmocka_unit_test(statistics_cover_exactly_the_live_rows), /* last: it writes */
    };
    int failed = 0;
    const char *names[] = {"search without index files", "search with every data file indexed",
                           "search with partial index coverage"};
    for (MODE = MODE_NOINDEX; MODE <= MODE_PARTIAL; MODE++)
        failed += cmocka_run_group_tests_name(names[MODE], tests, setup, teardown);
    return failed;
}
