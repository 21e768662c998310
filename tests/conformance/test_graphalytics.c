/*
 * test_graphalytics.c — LDBC Graphalytics conformance: the example graphs of
 * ../shared/data/graphalytics-example (example-directed, example-undirected) loaded into
 * tests/conformance/graphalytics.pg through the public C API, and breadth-first search
 * computed with multi-hop queries:
 *
 *   depth d (d >= 1) = the vertices `$s link{d,d} $v` returns (`<link>` for the undirected
 *   graph) — the BFS rule of reference-language.md §3.2 emits a vertex only at its shortest
 *   distance, so each vertex appears at exactly one depth;
 *
 * compared with the benchmark's expected output (<graph>-BFS, "vertex depth"; an unreachable
 * vertex carries 9223372036854775807, INT64_MAX).  The <graph>-input files are the graphs'
 * adjacency lists ("vertex neighbour..."); they are checked against one-hop queries.  Also:
 * the unreachable set by an anti-join, `{1,d}` reach counts, backward BFS (destination bound)
 * against forward distances, and WCC labels (<graph>-WCC) over the undirected view `<link>`.
 *
 * The BFS source vertices are the benchmark's parameters graph.example-directed.bfs.source-vertex
 * = 1 and graph.example-undirected.bfs.source-vertex = 2 (its example configuration, not shipped
 * with the data); the expected files must give them depth 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "../og_test_data.h"
#include "omnigraph.h"

#define GA_DIR OG_SHARED_DIR "/data/graphalytics-example"
#define UNREACHABLE INT64_MAX

typedef struct ga_graph {
    const char *name;   /* file stem in GA_DIR */
    int64_t source;     /* BFS source vertex (the benchmark's parameter) */
    int undirected;
    /* filled by setup */
    og_db *db;
    size_t nv;
    int64_t *vertices;  /* in .v order */
    size_t ne;
} ga_graph;

static ga_graph GRAPHS[] = {
    {"example-directed", 1, 0, NULL, 0, NULL, 0},
    {"example-undirected", 2, 1, NULL, 0, NULL, 0},
};

static char TMP[64];
static char *SCHEMA;

static char *slurp(const char *path)
{
    og_buf b = OG_BUF_INIT;
    if (og_buf_read_file(&b, path) != OG_OK) return NULL;
    return (char *)og_buf_take(&b).data;
}

static int parse_i64(const char *s, char **end, int64_t *out)
{
    errno = 0;
    long long v = strtoll(s, end, 10);
    if (errno || *end == s) return -1;
    *out = (int64_t)v;
    return 0;
}

static ssize_t vertex_index(const ga_graph *g, int64_t vid)
{
    for (size_t i = 0; i < g->nv; i++)
        if (g->vertices[i] == vid) return (ssize_t)i;
    return -1;
}

/* Converts <name>.v and <name>.e into NDJSON at `out`; fills g->vertices / nv / ne. */
static int convert(ga_graph *g, const char *out)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.v", GA_DIR, g->name);
    char *v = slurp(path);
    snprintf(path, sizeof path, "%s/%s.e", GA_DIR, g->name);
    char *e = slurp(path);
    FILE *f = fopen(out, "w");
    int rc = (!v || !e || !f) ? -1 : 0;
    char *save = NULL;
    for (char *line = rc ? NULL : strtok_r(v, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        int64_t vid;
        char *end;
        if (parse_i64(line, &end, &vid) || *end) {
            fprintf(stderr, "%s.v: bad line '%s'\n", g->name, line);
            rc = -1;
            break;
        }
        int64_t *nv = realloc(g->vertices, (g->nv + 1) * sizeof *nv);
        if (!nv) {
            rc = -1;
            break;
        }
        g->vertices = nv;
        g->vertices[g->nv++] = vid;
        fprintf(f, "{\"type\":\"Vertex\",\"data\":{\"vid\":%lld}}\n", (long long)vid);
    }
    for (char *line = rc ? NULL : strtok_r(e, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        int64_t a = 0, b = 0;
        char *end, *wend;
        if (parse_i64(line, &end, &a) || parse_i64(end, &end, &b)) {
            rc = -1;
            break;
        }
        while (*end == ' ' || *end == '\t') end++;
        double w = strtod(end, &wend);
        if (wend == end || *wend) {
            fprintf(stderr, "%s.e: bad line '%s'\n", g->name, line);
            rc = -1;
            break;
        }
        fprintf(f, "{\"edge\":\"Link\",\"from\":\"%lld\",\"to\":\"%lld\",\"data\":{\"weight\":%.17g}}\n", (long long)a,
                (long long)b, w);
        g->ne++;
    }
    if (f && fclose(f) != 0) rc = -1;
    free(v);
    free(e);
    return rc;
}

static int setup(void **state)
{
    (void)state;
    strcpy(TMP, "/tmp/og-graphalytics-XXXXXX");
    if (!mkdtemp(TMP)) return -1;
    SCHEMA = slurp(OG_SOURCE_DIR "/tests/conformance/graphalytics.pg");
    if (!SCHEMA) return -1;
    for (size_t i = 0; i < sizeof GRAPHS / sizeof GRAPHS[0]; i++) {
        ga_graph *g = &GRAPHS[i];
        char data[256], uri[256];
        snprintf(data, sizeof data, "%s/%s.jsonl", TMP, g->name);
        snprintf(uri, sizeof uri, "%s/%s", TMP, g->name);
        if (convert(g, data)) return -1;
        og_receipt r;
        og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
        og_status st = og_db_init(&g->db, uri, "graphalytics.pg", SCHEMA, strlen(SCHEMA), NULL);
        if (st == OG_OK) st = og_db_load(&r, g->db, data, &lo);
        if (st) {
            fprintf(stderr, "%s: %s: %s\n", g->name, og_status_name(st), og_error_message());
            return -1;
        }
        if (r.records != g->nv + g->ne) {
            fprintf(stderr, "%s: loaded %llu records of %zu\n", g->name, (unsigned long long)r.records, g->nv + g->ne);
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof GRAPHS / sizeof GRAPHS[0]; i++) {
        if (GRAPHS[i].db) og_db_close(GRAPHS[i].db);
        free(GRAPHS[i].vertices);
    }
    free(SCHEMA);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", TMP);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", TMP);
    return 0;
}

/* Runs the one query of `gq` with $src = g->source; returns its rows (caller frees). */
static og_rows *run(const ga_graph *g, const char *gq)
{
    char params[64];
    snprintf(params, sizeof params, "{\"src\":%lld}", (long long)g->source);
    og_rows *rows = NULL;
    og_status st = og_db_query(&rows, g->db, gq, strlen(gq), NULL, params, NULL);
    if (st) fail_msg("%s: %s: %s\nquery: %s", g->name, og_status_name(st), og_error_message(), gq);
    return rows;
}

static const char *edge_word(const ga_graph *g)
{
    return g->undirected ? "<link>" : "link";
}

/* The benchmark's expected output for `algo`: out[i] = value of g->vertices[i]. */
static void read_expected(const ga_graph *g, const char *algo, int64_t *out)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s-%s", GA_DIR, g->name, algo);
    char *text = slurp(path);
    assert_non_null(text);
    int *seen = calloc(g->nv, sizeof *seen);
    assert_non_null(seen);
    size_t lines = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        int64_t vid = 0, val = 0;
        char *end;
        if (parse_i64(line, &end, &vid) || parse_i64(end, &end, &val) || *end) fail_msg("%s: bad line '%s'", path, line);
        ssize_t i = vertex_index(g, vid);
        if (i < 0) fail_msg("%s: vertex %lld is not in %s.v", path, (long long)vid, g->name);
        if (seen[i]++) fail_msg("%s: vertex %lld twice", path, (long long)vid);
        out[i] = val;
        lines++;
    }
    assert_int_equal(lines, g->nv);
    free(seen);
    free(text);
}

/* BFS depths by one {d,d} query per depth; vertices not returned at any depth are UNREACHABLE. */
static void bfs_by_queries(const ga_graph *g, int64_t *depth)
{
    for (size_t i = 0; i < g->nv; i++) depth[i] = UNREACHABLE;
    ssize_t s = vertex_index(g, g->source);
    assert_true(s >= 0);
    depth[s] = 0;
    /* a shortest path visits each vertex once: depths run to nv - 1 at most */
    for (unsigned d = 1; d < g->nv; d++) {
        char gq[256];
        snprintf(gq, sizeof gq,
                 "query depth($src: I64) { match { $s: Vertex { vid: $src }  $s %s{%u,%u} $v } return { $v.vid } }",
                 edge_word(g), d, d);
        og_rows *rows = run(g, gq);
        for (size_t r = 0; r < og_rows_count(rows); r++) {
            int64_t vid = og_rows_int(rows, r, 0);
            ssize_t i = vertex_index(g, vid);
            if (i < 0) fail_msg("%s: depth %u returned unknown vertex %lld", g->name, d, (long long)vid);
            if (depth[i] != UNREACHABLE)
                fail_msg("%s: vertex %lld returned at depth %u, already at depth %lld", g->name, (long long)vid, d,
                         (long long)depth[i]);
            depth[i] = d;
        }
        og_rows_free(rows);
    }
}

static void bfs_depths_match_expected_output(void **state)
{
    const ga_graph *g = *state;
    int64_t *want = calloc(g->nv, sizeof *want), *got = calloc(g->nv, sizeof *got);
    assert_true(want && got);
    read_expected(g, "BFS", want);
    ssize_t s = vertex_index(g, g->source);
    assert_true(s >= 0);
    assert_int_equal(want[s], 0); /* the expected output agrees on the source */
    bfs_by_queries(g, got);
    for (size_t i = 0; i < g->nv; i++)
        if (got[i] != want[i])
            fail_msg("%s: vertex %lld at depth %lld, %s-BFS says %lld", g->name, (long long)g->vertices[i],
                     (long long)got[i], g->name, (long long)want[i]);
    free(want);
    free(got);
}

/* `not { $s link{1,nv-1} $v }` selects exactly the vertices the expected output marks
 * unreachable (the cross join of $s and $v, then an anti-join with a multi-hop inner pattern). */
static void unreachable_vertices_are_those_with_max_depth(void **state)
{
    const ga_graph *g = *state;
    int64_t *want = calloc(g->nv, sizeof *want);
    assert_non_null(want);
    read_expected(g, "BFS", want);
    char gq[320];
    snprintf(gq, sizeof gq,
             "query unreached($src: I64) { match { $s: Vertex { vid: $src }  $v: Vertex  not { $s %s{1,%zu} $v }"
             "  $v.vid != $src } return { $v.vid } order { $v.vid } }",
             edge_word(g), g->nv - 1);
    og_rows *rows = run(g, gq);
    size_t expected_n = 0;
    for (size_t i = 0; i < g->nv; i++) expected_n += want[i] == UNREACHABLE;
    assert_int_equal(og_rows_count(rows), expected_n);
    for (size_t r = 0; r < og_rows_count(rows); r++) {
        ssize_t i = vertex_index(g, og_rows_int(rows, r, 0));
        assert_true(i >= 0);
        if (want[i] != UNREACHABLE)
            fail_msg("%s: vertex %lld reported unreachable, expected depth %lld", g->name,
                     (long long)g->vertices[i], (long long)want[i]);
    }
    og_rows_free(rows);
    free(want);
}

/* `{1,d}` returns each vertex once, at its shortest depth: count = vertices of depth 1..d. */
static void bounded_reach_counts_match_expected_depths(void **state)
{
    const ga_graph *g = *state;
    int64_t *want = calloc(g->nv, sizeof *want);
    assert_non_null(want);
    read_expected(g, "BFS", want);
    for (unsigned d = 1; d < g->nv; d++) {
        char gq[256];
        snprintf(gq, sizeof gq,
                 "query within($src: I64) { match { $s: Vertex { vid: $src }  $s %s{1,%u} $v } return { count($v) as n } }",
                 edge_word(g), d);
        og_rows *rows = run(g, gq);
        assert_int_equal(og_rows_count(rows), 1);
        int64_t n = 0;
        for (size_t i = 0; i < g->nv; i++) n += want[i] >= 1 && want[i] <= (int64_t)d;
        if (og_rows_int(rows, 0, 0) != n)
            fail_msg("%s: {1,%u} reaches %lld vertices, the expected depths say %lld", g->name, d,
                     (long long)og_rows_int(rows, 0, 0), (long long)n);
        og_rows_free(rows);
    }
    free(want);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* <graph>-input lists every vertex with its (out-)neighbours; one-hop queries return them. */
static void one_hop_neighbours_match_adjacency_input(void **state)
{
    ga_graph *g = *state;
    char path[512];
    snprintf(path, sizeof path, "%s/%s-input", GA_DIR, g->name);
    char *text = slurp(path);
    assert_non_null(text);
    size_t lines = 0;
    char *save = NULL;
    int64_t saved_source = g->source;
    for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        int64_t want[64], vid = 0;
        size_t nw = 0;
        char *p = line, *end;
        if (parse_i64(p, &end, &vid)) fail_msg("%s: bad line '%s'", path, line);
        for (p = end; nw < 64 && parse_i64(p, &end, &want[nw]) == 0; p = end) nw++;
        qsort(want, nw, sizeof want[0], cmp_i64);
        g->source = vid;
        char gq[256];
        snprintf(gq, sizeof gq,
                 "query nbrs($src: I64) { match { $s: Vertex { vid: $src }  $s %s $v } return { $v.vid } order { $v.vid } }",
                 edge_word(g));
        og_rows *rows = run(g, gq);
        if (og_rows_count(rows) != nw)
            fail_msg("%s: vertex %lld has %zu neighbours, %s-input lists %zu", g->name, (long long)vid,
                     og_rows_count(rows), g->name, nw);
        for (size_t r = 0; r < nw; r++) assert_int_equal(og_rows_int(rows, r, 0), want[r]);
        og_rows_free(rows);
        lines++;
    }
    g->source = saved_source;
    assert_int_equal(lines, g->nv);
    free(text);
}

/* Shortest distance from vertex `from` to vertex `to` by forward {d,d} queries (UNREACHABLE if
 * none up to nv - 1). */
static int64_t distance_by_queries(const ga_graph *g, int64_t from, int64_t to)
{
    if (from == to) return 0;
    for (unsigned d = 1; d < g->nv; d++) {
        char gq[256], params[80];
        snprintf(gq, sizeof gq,
                 "query hit($a: I64, $b: I64) { match { $s: Vertex { vid: $a }  $s %s{%u,%u} $v  $v.vid = $b }"
                 " return { count($v) as n } }",
                 edge_word(g), d, d);
        snprintf(params, sizeof params, "{\"a\":%lld,\"b\":%lld}", (long long)from, (long long)to);
        og_rows *rows = NULL;
        og_status st = og_db_query(&rows, g->db, gq, strlen(gq), NULL, params, NULL);
        if (st) fail_msg("%s: %s: %s", g->name, og_status_name(st), og_error_message());
        int64_t n = og_rows_int(rows, 0, 0);
        og_rows_free(rows);
        if (n > 1) fail_msg("%s: %lld reached %lld %lld times at depth %u", g->name, (long long)from, (long long)to,
                            (long long)n, d);
        if (n == 1) return d;
    }
    return UNREACHABLE;
}

/* A traversal whose destination is bound runs the BFS backwards (`$u link{d,d} $s` with $s
 * bound): it returns u exactly when the forward distance from u to the source is d. */
static void reverse_bfs_depths_agree_with_forward_distances(void **state)
{
    const ga_graph *g = *state;
    int64_t *rev = calloc(g->nv, sizeof *rev);
    assert_non_null(rev);
    for (size_t i = 0; i < g->nv; i++) rev[i] = g->vertices[i] == g->source ? 0 : UNREACHABLE;
    for (unsigned d = 1; d < g->nv; d++) {
        char gq[256];
        snprintf(gq, sizeof gq,
                 "query back($src: I64) { match { $s: Vertex { vid: $src }  $u %s{%u,%u} $s } return { $u.vid } }",
                 edge_word(g), d, d);
        og_rows *rows = run(g, gq);
        for (size_t r = 0; r < og_rows_count(rows); r++) {
            ssize_t i = vertex_index(g, og_rows_int(rows, r, 0));
            assert_true(i >= 0);
            if (rev[i] != UNREACHABLE) fail_msg("%s: vertex %lld at two reverse depths", g->name, (long long)g->vertices[i]);
            rev[i] = d;
        }
        og_rows_free(rows);
    }
    for (size_t i = 0; i < g->nv; i++) {
        int64_t fwd = distance_by_queries(g, g->vertices[i], g->source);
        if (fwd != rev[i])
            fail_msg("%s: %lld -> %lld: forward distance %lld, reverse BFS depth %lld", g->name,
                     (long long)g->vertices[i], (long long)g->source, (long long)fwd, (long long)rev[i]);
    }
    free(rev);
}

/* Weakly connected components (Graphalytics WCC: a vertex's label is the smallest vertex id of
 * its component), in two queries over the undirected view `<link>` of either graph: a vertex
 * that reaches no smaller vertex is its component's minimum and labels itself; every other
 * vertex takes the minimum of the smaller vertices it reaches.  Each vertex is in exactly one
 * of the two results. */
static void wcc_labels_match_expected_output(void **state)
{
    const ga_graph *g = *state;
    int64_t *want = calloc(g->nv, sizeof *want), *got = calloc(g->nv, sizeof *got);
    assert_true(want && got);
    read_expected(g, "WCC", want);
    for (size_t i = 0; i < g->nv; i++) got[i] = UNREACHABLE;
    char gq[512];
    snprintf(gq, sizeof gq,
             "query roots() { match { $v: Vertex  not { $v <link>{1,%zu} $w  $w.vid < $v.vid } }"
             " return { $v.vid, $v.vid as label } }\n"
             "query others() { match { $v: Vertex  $v <link>{1,%zu} $w  $w.vid < $v.vid }"
             " return { $v.vid, min($w.vid) as label } }\n",
             g->nv - 1, g->nv - 1);
    static const char *const names[] = {"roots", "others"};
    for (int q = 0; q < 2; q++) {
        og_rows *rows = NULL;
        og_status st = og_db_query(&rows, g->db, gq, strlen(gq), names[q], NULL, NULL);
        if (st) fail_msg("%s %s: %s: %s", g->name, names[q], og_status_name(st), og_error_message());
        assert_int_equal(og_rows_width(rows), 2);
        for (size_t r = 0; r < og_rows_count(rows); r++) {
            ssize_t i = vertex_index(g, og_rows_int(rows, r, 0));
            assert_true(i >= 0);
            if (got[i] != UNREACHABLE) fail_msg("%s: vertex %lld labelled twice", g->name, (long long)g->vertices[i]);
            got[i] = og_rows_int(rows, r, 1);
        }
        og_rows_free(rows);
    }
    for (size_t i = 0; i < g->nv; i++)
        if (got[i] != want[i])
            fail_msg("%s: vertex %lld in component %lld, %s-WCC says %lld", g->name, (long long)g->vertices[i],
                     (long long)got[i], g->name, (long long)want[i]);
    free(want);
    free(got);
}

/* One named test per (graph, behaviour), so the report says which graph failed. */
#define PER_GRAPH(prefix, idx, fn)                                                                     \
    static void prefix##_##fn(void **state)                                                            \
    {                                                                                                  \
        *state = &GRAPHS[idx];                                                                         \
        fn(state);                                                                                     \
    }
PER_GRAPH(directed, 0, one_hop_neighbours_match_adjacency_input)
PER_GRAPH(directed, 0, bfs_depths_match_expected_output)
PER_GRAPH(directed, 0, unreachable_vertices_are_those_with_max_depth)
PER_GRAPH(directed, 0, bounded_reach_counts_match_expected_depths)
PER_GRAPH(directed, 0, wcc_labels_match_expected_output)
PER_GRAPH(directed, 0, reverse_bfs_depths_agree_with_forward_distances)
PER_GRAPH(undirected, 1, one_hop_neighbours_match_adjacency_input)
PER_GRAPH(undirected, 1, bfs_depths_match_expected_output)
PER_GRAPH(undirected, 1, unreachable_vertices_are_those_with_max_depth)
PER_GRAPH(undirected, 1, bounded_reach_counts_match_expected_depths)
PER_GRAPH(undirected, 1, wcc_labels_match_expected_output)
PER_GRAPH(undirected, 1, reverse_bfs_depths_agree_with_forward_distances)

int main(void)
{
    if (!og_test_have_data("conformance_test_graphalytics", GA_DIR)) return OG_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(directed_one_hop_neighbours_match_adjacency_input),
        cmocka_unit_test(directed_bfs_depths_match_expected_output),
        cmocka_unit_test(directed_unreachable_vertices_are_those_with_max_depth),
        cmocka_unit_test(directed_bounded_reach_counts_match_expected_depths),
        cmocka_unit_test(directed_wcc_labels_match_expected_output),
        cmocka_unit_test(directed_reverse_bfs_depths_agree_with_forward_distances),
        cmocka_unit_test(undirected_one_hop_neighbours_match_adjacency_input),
        cmocka_unit_test(undirected_bfs_depths_match_expected_output),
        cmocka_unit_test(undirected_unreachable_vertices_are_those_with_max_depth),
        cmocka_unit_test(undirected_bounded_reach_counts_match_expected_depths),
        cmocka_unit_test(undirected_wcc_labels_match_expected_output),
        cmocka_unit_test(undirected_reverse_bfs_depths_agree_with_forward_distances),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
