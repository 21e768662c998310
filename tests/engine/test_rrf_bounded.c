/*
 * test_rrf_bounded.c — bounded rrf fusion equals full fusion (engine/search.c rrf_fuse,
 * docs/search.md "Fusion: rrf", the depth rule).  On generated documents with many ties (a
 * vocabulary of eight words, vectors on a small integer grid), null bodies and vectors, fan-out
 * tag edges, deleted rows and updated rows, every rrf query shape (nearest + bm25 both ways,
 * bm25 + bm25, nearest + nearest; unfiltered, filtered, through a traversal) at several limits
 * and k returns the same rows and scores bounded as with the full fusion
 * (og_search_set_rrf_full), and, where each entity gives one row, the same entities and scores
 * as RRF computed here from the two arms run as separate queries (the reference's rule: each
 * arm's entities by first appearance).  The whole group runs without index files, with every
 * data file indexed (full-text and vector) and with partial coverage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <time.h>

#include "engine/index_build.h"
#include "engine/mutate.h"
#include "engine/search.h"
#include "engine/search_ann.h"
#include "engine/tableview.h"
#include "fixture.h"

static const char *SCHEMA =
    "node Doc { slug: String @key  body: String? @index  year: I32  emb: Vector(2)? @index }\n"
    "node Tag { name: String @key }\n"
    "edge Tagged: Doc -> Tag\n";

static const char *MUTS =
    "query set_body($slug: String, $body: String) { update Doc set { body: $body } where slug = $slug }\n"
    "query del_doc($slug: String) { delete Doc where slug = $slug }\n";

#define NDOCS 360
#define NTAGS 5

static const char *WORDS[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"};

/* Arms: the rrf expression of each shape (with $k) and its two arms alone. */
typedef struct shape {
    const char *name;
    const char *match; /* the match block's body */
    const char *a1, *a2;
    int fanout;        /* rows per entity may be several */
} shape;

static const shape SHAPES[] = {
    {"u_nb", "$d: Doc", "nearest($d.emb, $v)", "bm25($d.body, $q)", 0},
    {"u_bn", "$d: Doc", "bm25($d.body, $q)", "nearest($d.emb, $v)", 0},
    {"u_bb", "$d: Doc", "bm25($d.body, $q)", "bm25($d.body, $q2)", 0},
    {"u_nn", "$d: Doc", "nearest($d.emb, $v)", "nearest($d.emb, $v2)", 0},
    {"f_nb", "$d: Doc  $d.year >= $y", "nearest($d.emb, $v)", "bm25($d.body, $q)", 0},
    {"f_bb", "$d: Doc  $d.year >= $y", "bm25($d.body, $q2)", "bm25($d.body, $q)", 0},
    {"t_nb", "$d: Doc  $d tagged $t", "nearest($d.emb, $v)", "bm25($d.body, $q)", 1},
    {"t_bb", "$d: Doc  $d tagged $t  $d.year >= $y", "bm25($d.body, $q)", "bm25($d.body, $q2)", 1},
};
#define NSHAPES (sizeof SHAPES / sizeof *SHAPES)
static const int LIMITS[] = {1, 3, 17, 1000};
#define NLIMITS (sizeof LIMITS / sizeof *LIMITS)

static char *QUERIES;
static fixture *F;
enum { MODE_NOINDEX, MODE_INDEXED, MODE_PARTIAL };
static int MODE;

static void add(char **buf, size_t *len, size_t *cap, const char *fmtstr, ...)
{
    va_list ap;
    if (!*buf) {
        *cap = 4096;
        *buf = malloc(*cap);
        assert_non_null(*buf);
        **buf = '\0';
    }
    for (;;) {
        va_start(ap, fmtstr);
        int n = vsnprintf(*buf + *len, *cap - *len, fmtstr, ap);
        va_end(ap);
        if ((size_t)n < *cap - *len) {
            *len += (size_t)n;
            return;
        }
        *cap = *cap * 2 + (size_t)n;
        *buf = realloc(*buf, *cap);
        assert_non_null(*buf);
    }
}

/* For each shape: fuse_<shape>_<limit> (rows: slug[, tag], rrf score), arm1_<shape> and
 * arm2_<shape> (slug, score; the arm's own ordering; nearest arms with the limit). */
static char *make_queries(void)
{
    char *b = NULL;
    size_t len = 0, cap = 0;
    const char *params = "$v: Vector(2), $v2: Vector(2), $q: String, $q2: String, $y: I32, $k: I64";
    for (size_t s = 0; s < NSHAPES; s++) {
        const shape *sh = &SHAPES[s];
        for (size_t l = 0; l < NLIMITS; l++)
            add(&b, &len, &cap,
                "query fuse_%s_%d(%s) { match { %s } return { $d.slug%s, rrf(%s, %s, $k) as r } "
                "order { rrf(%s, %s, $k) } limit %d }\n",
                sh->name, LIMITS[l], params, sh->match, sh->fanout ? ", $t.name" : "", sh->a1, sh->a2, sh->a1, sh->a2,
                LIMITS[l]);
        for (int a = 1; a <= 2; a++) {
            const char *arm = a == 1 ? sh->a1 : sh->a2;
            int near = !strncmp(arm, "nearest", 7);
            for (size_t l = 0; l < (near ? NLIMITS : 1); l++) {
                add(&b, &len, &cap, "query arm%d_%s", a, sh->name);
                if (near) add(&b, &len, &cap, "_%d", LIMITS[l]);
                add(&b, &len, &cap, "(%s) { match { %s } return { $d.slug, %s as s } order { %s } ", params, sh->match,
                    arm, arm);
                if (near) add(&b, &len, &cap, "limit %d ", LIMITS[l]);
                add(&b, &len, &cap, "}\n");
            }
        }
    }
    return b;
}

/* ---- data --------------------------------------------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static char *make_docs(size_t from, size_t to, int tags)
{
    char *b = NULL;
    size_t len = 0, cap = 0;
    add(&b, &len, &cap, "%s", "");
    if (tags) {
        for (int t = 0; t < NTAGS; t++) add(&b, &len, &cap, "{\"type\":\"Tag\",\"data\":{\"name\":\"t%d\"}}\n", t);
        /* depth_rule_is_tight's documents */
        for (int i = 0; i < 3; i++)
            add(&b, &len, &cap,
                "{\"type\":\"Doc\",\"data\":{\"slug\":\"x%d\",\"year\":2000,\"body\":\"kappa\"}}\n"
                "{\"type\":\"Doc\",\"data\":{\"slug\":\"y%d\",\"year\":2000,\"body\":\"lambda\"}}\n",
                i, i);
        add(&b, &len, &cap, "{\"type\":\"Doc\",\"data\":{\"slug\":\"z\",\"year\":2000,\"body\":\"kappa lambda\"}}\n");
    }
    for (size_t i = from; i < to; i++) {
        add(&b, &len, &cap, "{\"type\":\"Doc\",\"data\":{\"slug\":\"d%03zu\",\"year\":%u", i, 2000 + rnd(10));
        if (rnd(10)) {
            unsigned nw = 1 + rnd(4);
            add(&b, &len, &cap, ",\"body\":\"");
            for (unsigned w = 0; w < nw; w++) add(&b, &len, &cap, "%s%s", w ? " " : "", WORDS[rnd(rnd(2) ? 3 : 8)]);
            add(&b, &len, &cap, "\"");
        }
        if (rnd(8)) add(&b, &len, &cap, ",\"emb\":[%u,%u]", rnd(4), rnd(4));
        add(&b, &len, &cap, "}}\n");
    }
    for (size_t i = from; i < to; i++)
        for (unsigned e = rnd(3), t0 = rnd(NTAGS); e > 0; e--)
            add(&b, &len, &cap, "{\"edge\":\"Tagged\",\"from\":\"d%03zu\",\"to\":\"t%u\"}\n", i, (t0 + e) % NTAGS);
    return b;
}

static void reindex(void)
{
    og_index_run_opts o = {NULL, NULL, NULL, 1};
    json_t *rep;
    if (og_engine_index_run(F->e, &o, &rep) != OG_OK) fail_msg("index build: %s", og_error_message());
    json_decref(rep);
}

static void mutate(const char *name, const char *params)
{
    json_t *pj = json_loads(params, 0, NULL);
    og_mutate_opts mo = {NULL, NULL};
    og_write_result w;
    og_status st = og_engine_mutate(F->e, "m.gq", MUTS, strlen(MUTS), name, pj, &mo, &w, NULL);
    json_decref(pj);
    if (st) fail_msg("%s %s: %s", name, params, og_error_message());
}

static int setup(void **state)
{
    (void)state;
    og_tableview_set_index_mode(MODE == MODE_NOINDEX ? 0 : 2);
    rng = 0x2545f4914f6cdd1dull;
    if (!QUERIES) QUERIES = make_queries();
    F = fixture_new(SCHEMA, QUERIES);
    if (!F) return -1;
    og_write_result w;
    char *first = make_docs(0, NDOCS * 2 / 3, 1), *second = make_docs(NDOCS * 2 / 3, NDOCS, 0);
    og_status st = fixture_load(F, first, OG_LOAD_OVERWRITE, &w);
    if (st == OG_OK && MODE == MODE_PARTIAL) reindex();
    if (st == OG_OK) st = fixture_load(F, second, OG_LOAD_APPEND, &w);
    free(first);
    free(second);
    if (st != OG_OK) {
        fprintf(stderr, "load: %s\n", og_error_message());
        return -1;
    }
    /* deleted rows, and updated rows (their new versions in new data files) */
    for (int i = 0; i < 24; i++) {
        char p[96];
        snprintf(p, sizeof p, "{\"slug\": \"d%03u\"}", rnd(NDOCS));
        mutate("del_doc", p);
        snprintf(p, sizeof p, "{\"slug\": \"d%03u\", \"body\": \"%s %s\"}", rnd(NDOCS), WORDS[rnd(8)], WORDS[rnd(3)]);
        mutate("set_body", p);
    }
    if (MODE == MODE_INDEXED) reindex();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_free(F);
    og_tableview_set_index_mode(2);
    og_search_set_rrf_full(0);
    og_search_set_exact(0);
    return 0;
}

/* ---- running --------------------------------------------------------------------------------- */

/* Rows of one query: the string columns joined by '|' and the last (score) column. */
typedef struct rows {
    size_t n;
    char key[1200][24];
    double score[1200];
} rows;

static void run(const char *name, const char *params, rows *out, char *text, size_t cap)
{
    (void)fixture_query; /* the fixture's helper; this file runs queries itself */
    json_t *pj = json_loads(params, 0, NULL);
    og_result r;
    og_status st = og_engine_query(F->e, NULL, NULL, "q.gq", QUERIES, strlen(QUERIES), name, pj, &r, NULL);
    json_decref(pj);
    if (st) fail_msg("%s %s: %s", name, params, og_error_message());
    assert_true(r.nrows <= 1200);
    size_t w = 0;
    if (text) text[0] = '\0';
    out->n = r.nrows;
    for (size_t i = 0; i < r.nrows; i++) {
        out->key[i][0] = '\0';
        for (size_t c = 0; c + 1 < r.ncols; c++) {
            size_t n;
            const uint8_t *p = og_vector_get_bytes(&r.cols[c], i, &n);
            size_t k = strlen(out->key[i]);
            snprintf(out->key[i] + k, sizeof out->key[i] - k, "%s%.*s", c ? "|" : "", (int)n, (const char *)p);
        }
        const og_vector *sv = &r.cols[r.ncols - 1];
        out->score[i] = og_vector_is_null(sv, i) ? NAN : og_vector_get_f64(sv, i);
        if (text && w < cap)
            w += (size_t)snprintf(text + w, cap - w, "%s%s|%.17g", i ? ";" : "", out->key[i], out->score[i]);
    }
    og_result_free(&r);
}

/* RRF from the arms' own orderings: entities by first appearance, score Σ 1/(k + rank + 1),
 * ties by the primary arm's rank, then the secondary's; the first `limit`. */
static void oracle(const rows *a1, const rows *a2, int64_t k, int limit, rows *out)
{
    static rows all;
    all.n = 0;
    size_t r1[1200], r2[1200];
    for (int a = 0; a < 2; a++) {
        const rows *arm = a ? a2 : a1;
        size_t rank = 0;
        for (size_t i = 0; i < arm->n; i++) {
            size_t j, first = 1;
            for (j = 0; j < i; j++)
                if (!strcmp(arm->key[j], arm->key[i])) first = 0;
            if (!first) continue;
            for (j = 0; j < all.n && strcmp(all.key[j], arm->key[i]); j++) {}
            if (j == all.n) {
                snprintf(all.key[j], sizeof all.key[j], "%s", arm->key[i]);
                r1[j] = r2[j] = SIZE_MAX;
                all.n++;
            }
            if (a) r2[j] = rank++;
            else r1[j] = rank++;
        }
    }
    for (size_t j = 0; j < all.n; j++)
        all.score[j] = (r1[j] != SIZE_MAX ? 1.0 / ((double)k + (double)r1[j] + 1.0) : 0) +
                       (r2[j] != SIZE_MAX ? 1.0 / ((double)k + (double)r2[j] + 1.0) : 0);
    /* selection sort by the fused order (small) */
    for (size_t i = 0; i < all.n; i++) {
        size_t best = i;
        for (size_t j = i + 1; j < all.n; j++) {
            double sj = all.score[j], sb = all.score[best];
            if (sj > sb || (sj == sb && (r1[j] < r1[best] || (r1[j] == r1[best] && r2[j] < r2[best])))) best = j;
        }
        char kt[24];
        double st = all.score[i];
        size_t t1 = r1[i], t2 = r2[i];
        memcpy(kt, all.key[i], sizeof kt), memcpy(all.key[i], all.key[best], sizeof kt), memcpy(all.key[best], kt, sizeof kt);
        all.score[i] = all.score[best], all.score[best] = st;
        r1[i] = r1[best], r1[best] = t1;
        r2[i] = r2[best], r2[best] = t2;
    }
    out->n = all.n < (size_t)limit ? all.n : (size_t)limit;
    for (size_t i = 0; i < out->n; i++) {
        memcpy(out->key[i], all.key[i], sizeof out->key[i]);
        out->score[i] = all.score[i];
    }
}

static const char *QS[] = {"alpha", "alpha beta", "gamma zeta theta", "nothing here"};
static const char *VS[] = {"[0, 0]", "[1.5, 2]"};

static void bounded_equals_full(void **state)
{
    (void)state;
    static rows b, f, a1, a2, o;
    static char tb[65536], tf[65536];
    size_t compared = 0, oracled = 0, nonempty = 0;
    double t_bounded = 0, t_full = 0;
    for (size_t s = 0; s < NSHAPES; s++) {
        const shape *sh = &SHAPES[s];
        for (size_t qi = 0; qi < sizeof QS / sizeof *QS; qi++)
            for (size_t vi = 0; vi < sizeof VS / sizeof *VS; vi++)
                for (int64_t k = 1; k <= 60; k += 59) {
                    char p[256];
                    snprintf(p, sizeof p,
                             "{\"v\": %s, \"v2\": %s, \"q\": \"%s\", \"q2\": \"%s\", \"y\": %d, \"k\": %lld}", VS[vi],
                             VS[(vi + 1) % 2], QS[qi], QS[(qi + 1) % 4], 2003 + (int)qi, (long long)k);
                    for (size_t l = 0; l < NLIMITS; l++) {
                        char name[64];
                        snprintf(name, sizeof name, "fuse_%s_%d", sh->name, LIMITS[l]);
                        clock_t c0 = clock();
                        og_search_set_rrf_full(0);
                        run(name, p, &b, tb, sizeof tb);
                        clock_t c1 = clock();
                        og_search_set_rrf_full(1);
                        run(name, p, &f, tf, sizeof tf);
                        og_search_set_rrf_full(0);
                        t_bounded += (double)(c1 - c0), t_full += (double)(clock() - c1);
                        if (strcmp(tb, tf)) fail_msg("%s %s: bounded '%s'\nfull '%s'", name, p, tb, tf);
                        compared++;
                        nonempty += b.n > 0;
                        if (sh->fanout) continue;
                        /* the reference's rule over the two arms run alone */
                        snprintf(name, sizeof name, "arm1_%s", sh->name);
                        if (!strncmp(sh->a1, "nearest", 7)) snprintf(name + strlen(name), 16, "_%d", LIMITS[l]);
                        run(name, p, &a1, NULL, 0);
                        snprintf(name, sizeof name, "arm2_%s", sh->name);
                        if (!strncmp(sh->a2, "nearest", 7)) snprintf(name + strlen(name), 16, "_%d", LIMITS[l]);
                        run(name, p, &a2, NULL, 0);
                        oracle(&a1, &a2, k, LIMITS[l], &o);
                        if (o.n != b.n) fail_msg("fuse_%s_%d %s: %zu rows, the arms give %zu", sh->name, LIMITS[l], p, b.n, o.n);
                        for (size_t i = 0; i < o.n; i++)
                            if (strcmp(o.key[i], b.key[i]) || fabs(o.score[i] - b.score[i]) > 1e-15)
                                fail_msg("fuse_%s_%d %s: row %zu '%s' %.17g, the arms give '%s' %.17g\n%s", sh->name,
                                         LIMITS[l], p, i, b.key[i], b.score[i], o.key[i], o.score[i], tb);
                        oracled++;
                    }
                }
    }
    assert_true(nonempty > compared / 2);
    printf("rrf bounded vs full: %zu queries equal (%zu also against the arms run alone); cpu %.0f ms bounded, "
           "%.0f ms full\n",
           compared, oracled, t_bounded * 1e3 / CLOCKS_PER_SEC, t_full * 1e3 / CLOCKS_PER_SEC);
}

/* The depth rule of two bm25 arms (k + 2L) is needed: "kappa" ranks x0 x1 x2 then z (longer
 * body), "lambda" y0 y1 y2 then z.  With k = 1 and limit 3, z (rank 3 in both arms) scores
 * 2/5 and is third, after x0 and y0 (1/2) and before the rank-1 entities (1/3); a depth of
 * k + L - 1 = 3 would miss it. */
static void depth_rule_is_tight(void **state)
{
    (void)state;
    static rows b, f;
    static char tb[4096], tf[4096];
    const char *p = "{\"v\": [0, 0], \"v2\": [0, 0], \"q\": \"kappa\", \"q2\": \"lambda\", \"y\": 2000, \"k\": 1}";
    run("fuse_u_bb_3", p, &b, tb, sizeof tb);
    og_search_set_rrf_full(1);
    run("fuse_u_bb_3", p, &f, tf, sizeof tf);
    og_search_set_rrf_full(0);
    assert_string_equal(tb, tf);
    assert_int_equal(b.n, 3);
    assert_string_equal(b.key[2], "z");
    assert_true(b.score[0] == 0.5 && b.score[1] == 0.5 && b.score[2] == 0.4);
    assert_true(b.key[0][0] == 'x' && b.key[1][0] == 'y');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(depth_rule_is_tight),
        cmocka_unit_test(bounded_equals_full),
    };
    int failed = 0;
    const char *names[] = {"rrf without index files", "rrf with every data file indexed", "rrf with partial index coverage"};
    for (MODE = MODE_NOINDEX; MODE <= MODE_PARTIAL; MODE++)
        failed += cmocka_run_group_tests_name(names[MODE], tests, setup, teardown);
    free(QUERIES);
    return failed;
}
