/*
 * test_topology_delta.c — a topology built as a delta from an older persisted one
 * (src/engine/tableview_delta.c) has exactly the arrays a full build of the same versions has,
 * whatever happened in between.  A seeded random walk of commits — one-row inserts, upserts
 * (the node re-inserted: its surviving edges must follow it), updates, node deletes with their
 * cascades, edge deletes, bulk loads in merge mode, small and full compactions, branch merges
 * — checks after every commit, for every edge type of the head (and of the merged branch),
 * that a missing topology is built as a delta (og_tableview_delta_topologies: the test fails
 * if the delta silently never runs) and that its CSR and CSC equal a full build's
 * (OG_INDEX=off on fresh views).  Then the bound (a rewrite of most edges builds in full) and
 * damaged base files (truncated, an edge entry out of range, another version's file): full
 * builds with the same arrays.
 *
 * Since readers compose a missing topology from an older file instead (tableview_compose.c),
 * the walk checks both: after each commit a reader's topology — composed — against a full
 * build node by node (entries in order, reaches), and every third commit the head's own file
 * as optimize writes it — a delta — against a full build's arrays, so composing spans one to
 * three commits.
 *
 * OG_TOPO_DELTA_SEED and OG_TOPO_DELTA_STEPS choose the walk; a failure names the seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <time.h>

#include "compiler/catalog.h"
#include "engine/merge.h"
#include "engine/mutate.h"
#include "engine/optimize.h"
#include "engine/tableview.h"
#include "fixture.h"
#include "graph/graph.h"
#include "index/csr.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32? }\n"
    "node City { name: String @key }\n"
    "edge Knows: Person -> Person\n"
    "edge LivesIn: Person -> City\n";

static const char *READS =
    "query knows() { match { $a: Person $a knows $b } return { $a.name, $b.name } order { $a.name, $b.name } }\n"
    "query fans() { match { $b: Person $a knows $b } return { $b.name, $a.name } order { $b.name, $a.name } }\n"
    "query lives() { match { $c: City $p livesIn $c } return { $c.name, $p.name } order { $c.name, $p.name } }\n";

static const char *MUTS =
    "query add_person($name: String, $age: I32) { insert Person { name: $name, age: $age } }\n"
    "query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }\n"
    "query del_person($name: String) { delete Person where name = $name }\n"
    "query add_knows($from: String, $to: String) { insert Knows { from: $from, to: $to } }\n"
    "query del_knows($from: String, $to: String) { delete Knows where from = $from and to = $to }\n"
    "query del_knows_from($from: String) { delete Knows where from = $from }\n"
    "query add_city($name: String) { insert City { name: $name } }\n"
    "query del_city($name: String) { delete City where name = $name }\n"
    "query lives($p: String, $c: String) { insert LivesIn { from: $p, to: $c } }\n";

#define MAX_PEOPLE 4096
#define MAX_CITIES 64

typedef struct walk {
    fixture *f;
    unsigned long long seed;
    int step;
    uint64_t rng;
    uint8_t person[MAX_PEOPLE]; /* alive on main */
    size_t next_person;
    uint8_t city[MAX_CITIES];
    size_t next_city;
    size_t deltas, composed, built, mapped; /* over the walk */
} walk;

static walk *W; /* for failure messages */

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            char m_[512];                                                                                    \
            snprintf(m_, sizeof m_, __VA_ARGS__);                                                            \
            fail_msg("OG_TOPO_DELTA_SEED=%llu step %d: %s (%s)", W ? W->seed : 0ULL, W ? W->step : -1, m_,      \
                     og_error_message());                                                                    \
        }                                                                                                    \
    } while (0)

static uint64_t rnd(walk *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static size_t below(walk *w, size_t n) { return n ? (size_t)(rnd(w) % n) : 0; }

/* A random live person (main), or SIZE_MAX. */
static size_t some_person(walk *w)
{
    size_t alive = 0;
    for (size_t i = 0; i < w->next_person; i++) alive += w->person[i];
    if (!alive) return SIZE_MAX;
    size_t k = below(w, alive);
    for (size_t i = 0; i < w->next_person; i++)
        if (w->person[i] && k-- == 0) return i;
    return SIZE_MAX;
}

static size_t some_city(walk *w)
{
    size_t alive = 0;
    for (size_t i = 0; i < w->next_city; i++) alive += w->city[i];
    if (!alive) return SIZE_MAX;
    size_t k = below(w, alive);
    for (size_t i = 0; i < w->next_city; i++)
        if (w->city[i] && k-- == 0) return i;
    return SIZE_MAX;
}

static og_status mut_on(walk *w, const char *branch, const char *name, const char *fmt, ...)
{
    char params[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(params, sizeof params, fmt, ap);
    va_end(ap);
    json_t *pj = json_loads(params, 0, NULL);
    og_write_result res;
    og_mutate_opts o = {branch, NULL};
    og_status st = og_engine_mutate(w->f->e, "m.gq", MUTS, strlen(MUTS), name, pj, &o, &res, NULL);
    json_decref(pj);
    CHECK(st == OG_OK, "%s %s on %s", name, params, branch ? branch : "main");
    return st;
}

/* ---- the check ------------------------------------------------------------------------------- */

static void same_arrays(const og_topology *a, const og_topology *b, const char *what)
{
    uint32_t ns[2], nd[2];
    const uint64_t *off[2][2];
    const uint32_t *nbr[2][2], *edge[2][2];
    og_topology_arrays(a, &ns[0], &nd[0], off[0], nbr[0], edge[0]);
    og_topology_arrays(b, &ns[1], &nd[1], off[1], nbr[1], edge[1]);
    size_t m = og_topology_edge_count(a);
    CHECK(ns[0] == ns[1] && nd[0] == nd[1], "%s: %u x %u nodes, a full build %u x %u", what, ns[0], nd[0], ns[1], nd[1]);
    CHECK(m == og_topology_edge_count(b), "%s: %zu edges, a full build %zu", what, m, og_topology_edge_count(b));
    for (int s = 0; s < 2; s++) {
        size_t nn = (size_t)(s ? nd[0] : ns[0]) + 1;
        CHECK(!memcmp(off[0][s], off[1][s], nn * sizeof(uint64_t)), "%s: %s offsets differ", what, s ? "CSC" : "CSR");
        CHECK(!m || !memcmp(nbr[0][s], nbr[1][s], m * sizeof(uint32_t)), "%s: %s neighbours differ", what,
              s ? "CSC" : "CSR");
        CHECK(!m || !memcmp(edge[0][s], edge[1][s], m * sizeof(uint32_t)), "%s: %s edges differ", what,
              s ? "CSC" : "CSR");
    }
}

/* The store key of the topology of (ev, fv, tv). */
static void topo_key(og_tableview *ev, og_tableview *fv, og_tableview *tv, char *key, size_t cap)
{
    assert_int_equal(og_csr_store_key(key, cap, og_tableview_dir(ev), og_tableview_version(ev), og_tableview_dir(fv),
                                      og_tableview_version(fv), og_tableview_dir(tv), og_tableview_version(tv)),
                     OG_OK);
}

static int file_exists(walk *w, const char *key)
{
    char p[1024];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", w->f->uri, key);
    return stat(p, &sb) == 0;
}

/* Every node's entries (both directions, in order), the edge count and the 3-hop reaches
 * from every node (both directions) of `got` equal the full build's: what a traversal can
 * observe of a topology, composed or not. */
static void same_lists(const og_topology *got, const og_topology *full, const char *what)
{
    uint32_t ns[2], nd[2];
    const uint64_t *off[2];
    const uint32_t *nbr[2], *edge[2];
    og_topology_arrays(got, &ns[0], &nd[0], off, nbr, edge);
    og_topology_arrays(full, &ns[1], &nd[1], off, nbr, edge);
    CHECK(ns[0] == ns[1] && nd[0] == nd[1], "%s: %u x %u nodes, a full build %u x %u", what, ns[0], nd[0], ns[1], nd[1]);
    CHECK(og_topology_edge_count(got) == og_topology_edge_count(full), "%s: %zu edges, a full build %zu", what,
          og_topology_edge_count(got), og_topology_edge_count(full));
    og_reach *sa = og_topology_reach_get(got), *sb = og_topology_reach_get(full);
    assert_non_null(sa);
    assert_non_null(sb);
    for (int s = 0; s < 2; s++)
        for (uint32_t v = 0; v < (s ? nd[0] : ns[0]) + 1; v++) { /* (one past the end: empty) */
            const uint32_t *na, *ea, *nb, *eb;
            size_t ka, kb;
            og_dir d = s ? OG_DIR_IN : OG_DIR_OUT;
            CHECK(og_topology_edges(got, d, v, sa, &na, &ea, &ka) == OG_OK, "%s: entries", what);
            CHECK(og_topology_edges(full, d, v, sb, &nb, &eb, &kb) == OG_OK, "%s: entries", what);
            CHECK(ka == kb, "%s: node %u has %zu %s entries, a full build %zu", what, v, ka, s ? "in" : "out", kb);
            for (size_t i = 0; i < ka; i++)
                CHECK(na[i] == nb[i] && ea[i] == eb[i], "%s: node %u %s entry %zu is (%u, edge %u), a full build (%u, %u)",
                      what, v, s ? "in" : "out", i, na[i], ea[i], nb[i], eb[i]);
        }
    /* reaches read entries without edge rows where they can (topology.c composed_neighbours) */
    for (int s = 0; s < 2; s++)
        for (uint32_t v = 0; v < (s ? nd[0] : ns[0]); v++) {
            og_dir d = s ? OG_DIR_IN : OG_DIR_OUT;
            CHECK(og_topology_reach(got, d, v, 1, 3, sa) == OG_OK, "%s: reach", what);
            CHECK(og_topology_reach(full, d, v, 1, 3, sb) == OG_OK, "%s: reach", what);
            CHECK(sa->len == sb->len, "%s: %zu nodes within 3 hops of %u, a full build %zu", what, sa->len, v, sb->len);
            for (size_t i = 0; i < sa->len; i++)
                CHECK(sa->node[i] == sb->node[i] && sa->depth[i] == sb->depth[i], "%s: reach of %u differs at %zu", what,
                      v, i);
        }
    og_topology_reach_put(got, sa);
    og_topology_reach_put(full, sb);
}

/* Fresh views of the same versions (no topology cached on them). */
static void fresh_views(og_tableview *ev, og_tableview *fv, og_tableview *tv, og_tableview **e2, og_tableview **f2,
                        og_tableview **t2)
{
    assert_int_equal(og_tableview_open(e2, og_tableview_table(ev), og_tableview_version(ev)), OG_OK);
    assert_int_equal(og_tableview_open(f2, og_tableview_table(fv), og_tableview_version(fv)), OG_OK);
    *t2 = NULL;
    if (fv != tv) assert_int_equal(og_tableview_open(t2, og_tableview_table(tv), og_tableview_version(tv)), OG_OK);
}

/* The topology a full build makes of the same versions, on fresh views, equals `got`: array
 * by array when `got` has arrays, entry by entry in any case. */
static void full_build_equals(og_tableview *ev, og_tableview *fv, og_tableview *tv, const og_topology *got,
                              const char *what)
{
    og_tableview *e2, *f2, *t2;
    fresh_views(ev, fv, tv, &e2, &f2, &t2);
    og_tableview_set_index_mode(0);
    const og_topology *full;
    size_t before = og_tableview_delta_topologies(), composed = og_tableview_composed_topologies();
    og_status st = og_tableview_topology(e2, f2, t2 ? t2 : f2, &full);
    og_tableview_set_index_mode(2);
    CHECK(st == OG_OK, "%s: full build", what);
    CHECK(og_tableview_delta_topologies() == before, "%s: OG_INDEX=off built a delta", what);
    CHECK(og_tableview_composed_topologies() == composed, "%s: OG_INDEX=off composed", what);
    if (!og_topology_is_composed(got)) same_arrays(got, full, what);
    same_lists(got, full, what);
    og_tableview_release(e2);
    og_tableview_release(f2);
    og_tableview_release(t2);
}

typedef enum expect { EXPECT_DELTA, EXPECT_FULL, EXPECT_ANY } expect;

/* For every edge type of the head of `branch`:
 *   - a reader's topology (mapped when persisted; else, when `ex` is EXPECT_DELTA, composed
 *     from an older file or built as a delta; when EXPECT_FULL built in full) equals a full
 *     build — and a composed one writes no file;
 *   - when `materialize` (as optimize does, on fresh views): the version triple's own file is
 *     written, built as a delta (EXPECT_DELTA) or in full, with a full build's arrays.
 * `only` (not NULL) limits `ex` to that edge type. */
static void check_branch_only(walk *w, const char *branch, expect ex, const char *only, int materialize)
{
    og_read *r;
    CHECK(og_read_begin(&r, w->f->e, branch, NULL) == OG_OK, "read %s", branch);
    const og_catalog *cat = og_read_catalog(r);
    for (size_t k = 0; k < cat->nedges; k++) {
        const og_cat_type *et = &cat->edges[k];
        og_tableview *ev, *fv, *tv;
        CHECK(og_read_edge_view(r, k, &ev) == OG_OK, "edge view");
        CHECK(og_read_node_view(r, et->from_node, &fv) == OG_OK, "node view");
        CHECK(og_read_node_view(r, et->to_node, &tv) == OG_OK, "node view");
        char key[512], what[600];
        expect want = only && strcmp(only, et->name) ? EXPECT_ANY : ex;
        topo_key(ev, fv, tv, key, sizeof key);
        snprintf(what, sizeof what, "%s on %s (%s)", et->name, branch, key);
        int had = file_exists(w, key);
        /* fresh views: a topology cached on the shared ones (a merge's reader, an OG_INDEX=off
         * pass) would hide what a new process does */
        og_tableview *re, *rf, *rt;
        fresh_views(ev, fv, tv, &re, &rf, &rt);
        size_t d0 = og_tableview_delta_topologies(), c0 = og_tableview_composed_topologies();
        const og_topology *t;
        CHECK(og_tableview_topology_ex(re, rf, rt ? rt : rf, OG_TOPO_PERSIST, &t) == OG_OK, "%s: topology", what);
        size_t deltas = og_tableview_delta_topologies() - d0, composed = og_tableview_composed_topologies() - c0;
        if (had) {
            CHECK(deltas == 0 && composed == 0, "%s: persisted, yet built", what);
            w->mapped++;
        } else {
            CHECK(want != EXPECT_DELTA || deltas + composed == 1, "%s: built in full, a composed or delta expected", what);
            CHECK(want != EXPECT_FULL || deltas + composed == 0, "%s: not built in full", what);
            CHECK(composed == (size_t)og_topology_is_composed(t), "%s: the counter disagrees", what);
            if (composed) w->composed++;
            else if (deltas) w->deltas++;
            else w->built++;
            CHECK(!composed || !file_exists(w, key), "%s: a composed topology wrote a file", what);
            CHECK(composed || file_exists(w, key), "%s: a built topology was not persisted", what);
        }
        full_build_equals(ev, fv, tv, t, what);
        og_tableview_release(re);
        og_tableview_release(rf);
        og_tableview_release(rt);
        if (materialize && !file_exists(w, key)) {
            og_tableview *e2, *f2, *t2;
            fresh_views(ev, fv, tv, &e2, &f2, &t2);
            const og_topology *m;
            d0 = og_tableview_delta_topologies(), c0 = og_tableview_composed_topologies();
            CHECK(og_tableview_topology_ex(e2, f2, t2 ? t2 : f2, OG_TOPO_MATERIALIZE, &m) == OG_OK, "%s: own file", what);
            deltas = og_tableview_delta_topologies() - d0;
            CHECK(og_tableview_composed_topologies() == c0, "%s: materialized by composing", what);
            CHECK(want != EXPECT_DELTA || deltas == 1, "%s: materialized in full, a delta expected", what);
            CHECK(want != EXPECT_FULL || deltas == 0, "%s: materialized as a delta, a full build expected", what);
            CHECK(file_exists(w, key), "%s: materialized, not persisted", what);
            w->deltas += deltas;
            full_build_equals(ev, fv, tv, m, what);
            og_tableview_release(e2);
            og_tableview_release(f2);
            og_tableview_release(t2);
        }
    }
    og_read_end(r);
}

/* Every third step writes the head's own files, so composing spans one to three commits. */
static void check_branch(walk *w, const char *branch, expect ex)
{
    check_branch_only(w, branch, ex, NULL, w->step < 0 || w->step % 3 == 2);
}

/* The traversal answers of main, through the query path (topologies cached, mapped or built
 * as the mode says) on a fresh handle. */
static void traversals(walk *w, char *out, size_t cap)
{
    static const char *qs[] = {"knows", "fans", "lives"};
    og_engine_close(w->f->e);
    CHECK(og_engine_open(&w->f->e, w->f->uri, NULL) == OG_OK, "reopen");
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        n += (size_t)snprintf(out + n, cap - n, "%s=", qs[i]);
        CHECK(fixture_query(w->f, qs[i], NULL, NULL, out + n, cap - n) == OG_OK, "query %s", qs[i]);
        n += strlen(out + n);
        n += (size_t)snprintf(out + n, cap - n, "\n");
    }
}

/* The same answers with the index files (persisted, delta-built) and without any. */
static void same_answers(walk *w)
{
    static char with[1 << 16], without[1 << 16];
    traversals(w, with, sizeof with);
    og_tableview_set_index_mode(0);
    traversals(w, without, sizeof without);
    og_tableview_set_index_mode(2);
    CHECK(!strcmp(with, without), "answers differ with the index files:\n%.300s\nwithout:\n%.300s", with, without);
}

/* ---- the walk -------------------------------------------------------------------------------- */

static void load_text(walk *w, const char *text, og_load_mode mode)
{
    og_write_result res;
    og_status st = fixture_load(w->f, text, mode, &res);
    CHECK(st == OG_OK, "load (mode %d):\n%s", (int)mode, text);
}

/* A merge-mode load: some live people re-inserted (upserts: new rows, same ids), some new
 * ones, edges among them — one commit touching all three tables. */
static void bulk_merge(walk *w)
{
    char text[8192];
    size_t n = 0;
    size_t up[3];
    for (int i = 0, k = 1 + (int)below(w, 3); i < k; i++) {
        size_t p = some_person(w);
        for (int j = 0; j < i && p != SIZE_MAX; j++)
            if (up[j] == p) p = SIZE_MAX; /* one row per id in a load */
        up[i] = p;
        if (p != SIZE_MAX)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "{\"type\": \"Person\", \"data\": {\"name\": \"p%zu\", \"age\": %d}}\n", p,
                                  (int)below(w, 90));
    }
    for (int i = 0, k = (int)below(w, 4); i < k && w->next_person < MAX_PEOPLE; i++) {
        size_t p = w->next_person++;
        w->person[p] = 1;
        n += (size_t)snprintf(text + n, sizeof text - n, "{\"type\": \"Person\", \"data\": {\"name\": \"p%zu\"}}\n", p);
    }
    for (int i = 0, k = (int)below(w, 6); i < k; i++) {
        size_t a = some_person(w), b = some_person(w), c = some_city(w);
        if (a == SIZE_MAX) break;
        if (below(w, 3) || c == SIZE_MAX)
            n += (size_t)snprintf(text + n, sizeof text - n, "{\"edge\": \"Knows\", \"from\": \"p%zu\", \"to\": \"p%zu\"}\n",
                                  a, b);
        else
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "{\"edge\": \"LivesIn\", \"from\": \"p%zu\", \"to\": \"c%zu\"}\n", a, c);
    }
    if (n) load_text(w, text, OG_LOAD_MERGE);
}

static void compact(walk *w, uint64_t target_rows)
{
    og_optimize_opts o;
    memset(&o, 0, sizeof o);
    o.target_rows = target_rows;
    og_optimize_report rep;
    CHECK(og_engine_optimize(w->f->e, &o, &rep) == OG_OK, "optimize (target %llu)", (unsigned long long)target_rows);
}

/* A branch with a few adds and updates, main with a few adds meanwhile, then merged into main
 * (adds never conflict: fresh names; only the branch updates).  Its head is checked too. */
static void branch_merge(walk *w)
{
    char name[32];
    snprintf(name, sizeof name, "b%d", w->step);
    CHECK(og_branch_create(og_engine_graph(w->f->e), name, "main", NULL, NULL, NULL) == OG_OK, "branch %s", name);
    size_t added[8], nadded = 0;
    for (int i = 0, k = 1 + (int)below(w, 3); i < k; i++) {
        size_t a = some_person(w);
        switch (below(w, 3)) {
        case 0:
            if (w->next_person < MAX_PEOPLE && nadded < 8) {
                size_t p = w->next_person++;
                mut_on(w, name, "add_person", "{\"name\":\"p%zu\",\"age\":%d}", p, (int)below(w, 90));
                added[nadded++] = p;
                if (a != SIZE_MAX) mut_on(w, name, "add_knows", "{\"from\":\"p%zu\",\"to\":\"p%zu\"}", p, a);
            }
            break;
        case 1:
            if (a != SIZE_MAX) mut_on(w, name, "set_age", "{\"name\":\"p%zu\",\"age\":%d}", a, (int)below(w, 90));
            break;
        default:
            if (a != SIZE_MAX) mut_on(w, name, "add_knows", "{\"from\":\"p%zu\",\"to\":\"p%zu\"}", a, some_person(w));
        }
    }
    check_branch(w, name, EXPECT_DELTA);
    if (below(w, 2) && w->next_person < MAX_PEOPLE) {
        size_t p = w->next_person++;
        mut_on(w, NULL, "add_person", "{\"name\":\"p%zu\",\"age\":1}", p);
        w->person[p] = 1;
    }
    og_merge_opts o;
    memset(&o, 0, sizeof o);
    o.source = name;
    o.target = "main";
    og_merge_result res;
    og_status st = og_engine_merge(w->f->e, &o, &res);
    og_merge_result_free(&res);
    CHECK(st == OG_OK, "merge %s", name);
    for (size_t i = 0; i < nadded; i++) w->person[added[i]] = 1;
}

/* One random commit (or a few, for a merge) on main. */
static void random_step(walk *w)
{
    size_t a = some_person(w), b = some_person(w), c = some_city(w);
    switch (below(w, 14)) {
    case 0:
    case 1:
        if (w->next_person < MAX_PEOPLE) {
            size_t p = w->next_person++;
            mut_on(w, NULL, "add_person", "{\"name\":\"p%zu\",\"age\":%d}", p, (int)below(w, 90));
            w->person[p] = 1;
        }
        break;
    case 2:
        if (a != SIZE_MAX) mut_on(w, NULL, "add_knows", "{\"from\":\"p%zu\",\"to\":\"p%zu\"}", a, b);
        break;
    case 3: /* a node delete: a deletion vector, the cascade deletes its edges */
        if (a != SIZE_MAX) {
            mut_on(w, NULL, "del_person", "{\"name\":\"p%zu\"}", a);
            w->person[a] = 0;
        }
        break;
    case 4:
        if (a != SIZE_MAX && below(w, 2)) mut_on(w, NULL, "del_knows", "{\"from\":\"p%zu\",\"to\":\"p%zu\"}", a, b);
        else if (a != SIZE_MAX) mut_on(w, NULL, "del_knows_from", "{\"from\":\"p%zu\"}", a);
        break;
    case 5: /* an update: the row deleted and re-inserted, its edges follow it */
        if (a != SIZE_MAX) mut_on(w, NULL, "set_age", "{\"name\":\"p%zu\",\"age\":%d}", a, (int)below(w, 90));
        break;
    case 6: /* an insert of a live key replaces the node (its edges stay) */
        if (a != SIZE_MAX) mut_on(w, NULL, "add_person", "{\"name\":\"p%zu\",\"age\":%d}", a, (int)below(w, 90));
        break;
    case 7:
        bulk_merge(w);
        break;
    case 8:
        if (a != SIZE_MAX && c != SIZE_MAX) mut_on(w, NULL, "lives", "{\"p\":\"p%zu\",\"c\":\"c%zu\"}", a, c);
        break;
    case 9:
        if (below(w, 2) && w->next_city < MAX_CITIES) {
            size_t k = w->next_city++;
            mut_on(w, NULL, "add_city", "{\"name\":\"c%zu\"}", k);
            w->city[k] = 1;
        } else if (c != SIZE_MAX) {
            mut_on(w, NULL, "del_city", "{\"name\":\"c%zu\"}", c);
            w->city[c] = 0;
        }
        break;
    case 10:
    case 11: /* a small compaction: the small tail fragments and the ones with deletions */
        compact(w, 8 + below(w, 24));
        break;
    case 12:
        if (below(w, 3) == 0) compact(w, 0); /* everything into one fragment per table */
        else bulk_merge(w);
        break;
    default:
        branch_merge(w);
    }
}

static void seed_graph(walk *w, size_t people, size_t cities, size_t knows)
{
    size_t cap = 128 * (people + cities + 2 * knows) + 1024, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t i = 0; i < people; i++) {
        n += (size_t)snprintf(text + n, cap - n, "{\"type\": \"Person\", \"data\": {\"name\": \"p%zu\", \"age\": %zu}}\n",
                              i, i % 90);
        w->person[w->next_person++] = 1;
    }
    for (size_t i = 0; i < cities; i++) {
        n += (size_t)snprintf(text + n, cap - n, "{\"type\": \"City\", \"data\": {\"name\": \"c%zu\"}}\n", i);
        w->city[w->next_city++] = 1;
    }
    for (size_t i = 0; i < knows; i++)
        n += (size_t)snprintf(text + n, cap - n, "{\"edge\": \"Knows\", \"from\": \"p%zu\", \"to\": \"p%zu\"}\n",
                              below(w, people), below(w, people));
    for (size_t i = 0; i < people; i++)
        if (below(w, 4))
            n += (size_t)snprintf(text + n, cap - n, "{\"edge\": \"LivesIn\", \"from\": \"p%zu\", \"to\": \"c%zu\"}\n", i,
                                  below(w, cities));
    load_text(w, text, OG_LOAD_OVERWRITE);
    free(text);
}

static walk *walk_new(unsigned long long seed)
{
    walk *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->seed = seed;
    w->rng = seed * 0x9E3779B97F4A7C15ULL + 1;
    w->step = -1;
    w->f = fixture_new(SCHEMA, READS);
    assert_non_null(w->f);
    W = w;
    return w;
}

static void walk_free(walk *w)
{
    fixture_free(w->f);
    W = NULL;
    free(w);
}

static unsigned long long env_ull(const char *name, unsigned long long dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtoull(s, NULL, 10) : dflt;
}

static void random_commits_build_deltas_equal_to_full_builds(void **state)
{
    (void)state;
    og_tableview_set_index_mode(2);
    unsigned long long seed = env_ull("OG_TOPO_DELTA_SEED", (unsigned long long)time(NULL));
    int steps = (int)env_ull("OG_TOPO_DELTA_STEPS", 60);
    printf("OG_TOPO_DELTA_SEED=%llu OG_TOPO_DELTA_STEPS=%d\n", seed, steps);
    fflush(stdout);
    walk *w = walk_new(seed);
    seed_graph(w, 40, 5, 120);
    check_branch(w, "main", EXPECT_FULL); /* no base yet */
    for (w->step = 0; w->step < steps; w->step++) {
        random_step(w);
        check_branch(w, "main", EXPECT_DELTA);
        if (w->step % 10 == 9) same_answers(w);
    }
    same_answers(w);
    printf("topologies: %zu composed, %zu deltas, %zu full builds, %zu mapped\n", w->composed, w->deltas, w->built,
           w->mapped);
    assert_true(w->composed >= (size_t)steps / 2); /* two edge types, a reader's check per step */
    assert_true(w->deltas >= (size_t)steps / 4);   /* materialized every third step */
    walk_free(w);
}

/* A few fixed seeds, so the CI run covers more than the clock's. */
static void fixed_seeds(void **state)
{
    (void)state;
    static const unsigned long long seeds[] = {1, 42, 20261204};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        walk *w = walk_new(seeds[s]);
        seed_graph(w, 30, 4, 80);
        check_branch(w, "main", EXPECT_FULL);
        for (w->step = 0; w->step < 25; w->step++) {
            random_step(w);
            check_branch(w, "main", EXPECT_DELTA);
        }
        same_answers(w);
        walk_free(w);
    }
}

/* A rewrite of most edges (a full optimize after a delete) is over the bound: a full build. */
static void rewriting_most_edges_builds_in_full(void **state)
{
    (void)state;
    og_tableview_set_index_mode(2);
    walk *w = walk_new(7);
    seed_graph(w, 300, 4, 1500);
    check_branch(w, "main", EXPECT_FULL);
    w->step = 0;
    mut_on(w, NULL, "del_person", "{\"name\":\"p3\"}");
    check_branch(w, "main", EXPECT_DELTA); /* a one-row delete: a delta */
    w->step = 1;
    compact(w, 0); /* Knows' only fragment has a deletion file: rewritten whole */
    check_branch_only(w, "main", EXPECT_FULL, "Knows", 0); /* (LivesIn: 225 edges, under the floor) */
    walk_free(w);
}

/* A one-row write on a graph whose topologies are persisted: the next reader composes each
 * topology it touches from the persisted one — no column of a whole table read, nothing
 * written — and the answers are a full build's; a second commit composes from the same base. */
static void a_small_write_is_composed_without_whole_reads_or_files(void **state)
{
    (void)state;
    og_tableview_set_index_mode(2);
    walk *w = walk_new(3);
    seed_graph(w, 200, 5, 800);
    check_branch_only(w, "main", EXPECT_FULL, NULL, 1); /* the head's topologies persisted */
    static const char *const writes[][2] = {
        {"set_age", "{\"name\":\"p7\",\"age\":3}"},      /* the node re-inserted: its edges follow */
        {"del_person", "{\"name\":\"p9\"}"},               /* a cascade */
        {"add_knows", "{\"from\":\"p1\",\"to\":\"p2\"}"}, /* an appended edge */
    };
    for (w->step = 0; w->step < 3; w->step++) {
        mut_on(w, NULL, writes[w->step][0], "%s", writes[w->step][1]);
        og_engine_close(w->f->e);
        CHECK(og_engine_open(&w->f->e, w->f->uri, NULL) == OG_OK, "reopen");
        og_read *r;
        CHECK(og_read_begin(&r, w->f->e, "main", NULL) == OG_OK, "read");
        const og_catalog *cat = og_read_catalog(r);
        const og_cat_type *et = og_catalog_edge(cat, "Knows");
        og_tableview *ev, *fv, *tv;
        CHECK(og_read_edge_view(r, (size_t)(et - cat->edges), &ev) == OG_OK, "edge view");
        CHECK(og_read_node_view(r, et->from_node, &fv) == OG_OK, "node view");
        CHECK(og_read_node_view(r, et->to_node, &tv) == OG_OK, "node view");
        char key[512];
        topo_key(ev, fv, tv, key, sizeof key);
        CHECK(og_tableview_prepare_keys(fv, 1) == OG_OK, "key maps"); /* (a new fragment's, as a lookup writes it) */
        size_t whole = og_tableview_whole_reads(), c0 = og_tableview_composed_topologies();
        const og_topology *t;
        CHECK(og_tableview_topology_ex(ev, fv, tv, OG_TOPO_PERSIST, &t) == OG_OK, "topology");
        CHECK(og_tableview_composed_topologies() - c0 == 1 && og_topology_is_composed(t), "the reader did not compose");
        CHECK(og_tableview_whole_reads() == whole, "composing read %zu whole columns or tables",
              og_tableview_whole_reads() - whole);
        CHECK(!file_exists(w, key), "composing wrote %s", key);
        full_build_equals(ev, fv, tv, t, writes[w->step][0]);
        og_read_end(r);
    }
    same_answers(w);
    walk_free(w);
}

/* Overwrites `len` bytes at `at` of the base file (or truncates it to `at` when bytes is NULL). */
static void damage(walk *w, const char *key, long at, const void *bytes, size_t len)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", w->f->uri, key);
    if (!bytes) {
        assert_int_equal(truncate(p, at), 0);
        return;
    }
    FILE *fp = fopen(p, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, at, SEEK_SET), 0);
    assert_int_equal(fwrite(bytes, 1, len, fp), len);
    fclose(fp);
}

/* The key of the Knows topology of main's head. */
static void knows_key(walk *w, char *key, size_t cap, uint64_t counts[3])
{
    og_read *r;
    assert_int_equal(og_read_begin(&r, w->f->e, "main", NULL), OG_OK);
    const og_catalog *cat = og_read_catalog(r);
    const og_cat_type *et = og_catalog_edge(cat, "Knows");
    assert_non_null(et);
    og_tableview *ev, *fv, *tv;
    assert_int_equal(og_read_edge_view(r, (size_t)(et - cat->edges), &ev), OG_OK);
    assert_int_equal(og_read_node_view(r, et->from_node, &fv), OG_OK);
    assert_int_equal(og_read_node_view(r, et->to_node, &tv), OG_OK);
    topo_key(ev, fv, tv, key, cap);
    counts[0] = og_tableview_rows(fv), counts[1] = og_tableview_rows(tv), counts[2] = og_tableview_rows(ev);
    og_read_end(r);
}

/* A damaged base is never trusted: the next topology is built in full, with the same arrays
 * (each damage on a graph of its own, so no older intact base exists). */
static void a_damaged_base_gets_a_full_build(void **state)
{
    (void)state;
    og_tableview_set_index_mode(2);
    for (int kind = 0; kind < 4; kind++) {
        walk *w = walk_new(11 + (unsigned long long)kind);
        seed_graph(w, 40, 3, 120);
        w->step = kind;
        check_branch(w, "main", EXPECT_FULL); /* the base, persisted */
        char key[512];
        uint64_t n[3];
        knows_key(w, key, sizeof key, n);
        /* header 64 bytes, off_out, off_in, nbr_out, edge_out (sections 8-byte aligned) */
        long nbr_out = 64 + 8 * (long)(n[0] + 1) + 8 * (long)(n[1] + 1);
        uint32_t bad = UINT32_MAX;
        if (kind == 0) damage(w, key, 100, NULL, 0); /* truncated */
        if (kind == 1) damage(w, key, nbr_out, &bad, sizeof bad); /* a neighbour out of range */
        if (kind == 2) { /* a well-formed file of other counts */
            uint64_t off[2] = {0, 0};
            og_csr_arrays a = {1, 1, 0, 0, {off, off}, {NULL, NULL}, {NULL, NULL}};
            og_buf b = OG_BUF_INIT;
            assert_int_equal(og_csr_encode(&a, &b), OG_OK);
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", w->f->uri, key);
            FILE *fp = fopen(p, "wb");
            assert_non_null(fp);
            assert_int_equal(fwrite(b.data, 1, b.len, fp), b.len);
            fclose(fp);
            og_buf_free(&b);
        }
        if (kind == 3) damage(w, key, 8, "\x07", 1); /* another format number */
        /* a one-row update on top: Knows must be built in full, LivesIn (intact) as a delta */
        mut_on(w, NULL, "set_age", "{\"name\":\"p%d\",\"age\":5}", kind + 1);
        og_read *r;
        assert_int_equal(og_read_begin(&r, w->f->e, "main", NULL), OG_OK);
        const og_catalog *cat = og_read_catalog(r);
        for (size_t k = 0; k < cat->nedges; k++) {
            const og_cat_type *et = &cat->edges[k];
            og_tableview *ev, *fv, *tv;
            assert_int_equal(og_read_edge_view(r, k, &ev), OG_OK);
            assert_int_equal(og_read_node_view(r, et->from_node, &fv), OG_OK);
            assert_int_equal(og_read_node_view(r, et->to_node, &tv), OG_OK);
            size_t before = og_tableview_delta_topologies();
            const og_topology *t;
            /* (what optimize does: a reader composes from the base, which it trusts as it
             * trusts a mapped file — a damaged neighbour entry is skipped, never followed) */
            assert_int_equal(og_tableview_topology_ex(ev, fv, tv, OG_TOPO_MATERIALIZE, &t), OG_OK);
            int knows = !strcmp(et->name, "Knows");
            CHECK(og_tableview_delta_topologies() - before == (size_t)!knows, "%s after damage %d", et->name, kind);
            full_build_equals(ev, fv, tv, t, et->name);
        }
        og_read_end(r);
        walk_free(w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_commits_build_deltas_equal_to_full_builds),
        cmocka_unit_test(fixed_seeds),
        cmocka_unit_test(rewriting_most_edges_builds_in_full),
        cmocka_unit_test(a_damaged_base_gets_a_full_build),
        cmocka_unit_test(a_small_write_is_composed_without_whole_reads_or_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
