/*
 * test_search_fts5.c — bm25 against an independent engine: SQLite FTS5 (the Debian `sqlite3`
 * command line; SKIP when it is absent) on a generated 300-document corpus.
 *
 * The corpus uses 24 plain nouns, no stop words, so both engines see the same terms and the
 * same document lengths (FTS5: porter + unicode61; ours: Snowball English).  FTS5's bm25()
 * uses k1 = 1.2, b = 0.75 like ours but the idf ln((N - df + 0.5) / (df + 0.5)) where we use
 * Lucene's ln(1 + (N - df + 0.5) / (df + 0.5)), and returns the negated score.  So for a
 * one-term query every document's score differs by the same factor:
 *     ours / -fts5 = idf_lucene(df) / idf_fts5(df)
 * which this test checks for every matching document (and thereby the same ranking), for
 * every query term that occurs in fewer than half the documents (FTS5 clamps a negative idf).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "fixture.h"

static const char *WORDS[] = {"graph", "node", "edge", "table", "vector", "score", "fox",  "dog",
                              "cat",   "bird", "tree", "rock",  "sun",    "moon",  "star", "road",
                              "city",  "lake", "ship", "wind",  "fire",   "snow",  "gold", "salt"};
#define NWORDS (sizeof WORDS / sizeof WORDS[0])
#define NDOCS 300

static const char *SCHEMA = "node Doc { slug: String @key  body: String }\n";
static const char *QUERIES =
    "query rank($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } }\n";

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

typedef struct hit {
    char slug[16];
    double score;
} hit;

static int have_sqlite3(void)
{
    return system("command -v sqlite3 >/dev/null 2>&1") == 0 &&
           system("echo \"CREATE VIRTUAL TABLE t USING fts5(x);\" | sqlite3 :memory: >/dev/null 2>&1") == 0;
}

static void bm25_agrees_with_fts5(void **state)
{
    (void)state;
    if (!have_sqlite3()) {
        printf("SKIP: no sqlite3 command with FTS5 (apt-get install sqlite3)\n");
        return;
    }
    (void)fixture_query; /* unused helper of fixture.h */
    (void)fixture_render;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    /* the corpus: Zipf-like word choice (word i with weight 1/(i+1)), 3..30 words a document */
    static char docs[NDOCS][400];
    uint64_t seed = 7;
    double wsum = 0;
    for (size_t i = 0; i < NWORDS; i++) wsum += 1.0 / (double)(i + 1);
    size_t cap = NDOCS * 420 + 1024;
    char *nd = malloc(cap), *sql = malloc(cap + 4096);
    assert_non_null(nd);
    assert_non_null(sql);
    size_t nl = 0, sl = 0;
    sl += (size_t)snprintf(sql + sl, cap + 4096 - sl,
                           "CREATE VIRTUAL TABLE t USING fts5(slug UNINDEXED, body, tokenize='porter unicode61');\n");
    for (size_t d = 0; d < NDOCS; d++) {
        size_t len = 3 + rnd(&seed) % 28, w = 0;
        for (size_t k = 0; k < len; k++) {
            double x = (double)(rnd(&seed) % 1000000) / 1e6 * wsum, acc = 0;
            size_t i = 0;
            while (i + 1 < NWORDS && (acc += 1.0 / (double)(i + 1)) < x) i++;
            w += (size_t)snprintf(docs[d] + w, sizeof docs[d] - w, "%s%s", k ? " " : "", WORDS[i]);
        }
        nl += (size_t)snprintf(nd + nl, cap - nl, "{\"type\":\"Doc\",\"data\":{\"slug\":\"d%03zu\",\"body\":\"%s\"}}\n", d,
                               docs[d]);
        sl += (size_t)snprintf(sql + sl, cap + 4096 - sl, "INSERT INTO t VALUES('d%03zu', '%s');\n", d, docs[d]);
    }
    og_write_result w;
    assert_int_equal(fixture_load(f, nd, OG_LOAD_OVERWRITE, &w), OG_OK);
    size_t checked = 0;
    for (size_t qi = 0; qi < NWORDS; qi++) {
        /* df: the documents holding the word */
        size_t df = 0;
        for (size_t d = 0; d < NDOCS; d++) {
            char pad[420];
            snprintf(pad, sizeof pad, " %s ", docs[d]);
            char needle[32];
            snprintf(needle, sizeof needle, " %s ", WORDS[qi]);
            df += strstr(pad, needle) != NULL;
        }
        if (df == 0 || 2 * df >= NDOCS) continue;
        /* FTS5's scores */
        char path[128];
        snprintf(path, sizeof path, "%s/q.sql", f->dir);
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        fputs(sql, fp);
        fprintf(fp, ".mode list\nSELECT slug, printf('%%.17g', bm25(t)) FROM t WHERE t MATCH '%s' ORDER BY bm25(t), slug;\n",
                WORDS[qi]);
        fclose(fp);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "sqlite3 :memory: < '%s'", path);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        hit *fts = calloc(NDOCS, sizeof *fts);
        size_t nf = 0;
        char line[256];
        while (fgets(line, sizeof line, p) && nf < NDOCS)
            if (sscanf(line, "%15[^|]|%lf", fts[nf].slug, &fts[nf].score) == 2) nf++;
        assert_int_equal(pclose(p), 0);
        assert_int_equal(nf, df);
        /* ours */
        char params[64];
        snprintf(params, sizeof params, "{\"q\": \"%s\"}", WORDS[qi]);
        json_t *pj = json_loads(params, 0, NULL);
        og_result r;
        assert_int_equal(og_engine_query(f->e, NULL, NULL, "q.gq", QUERIES, strlen(QUERIES), "rank", pj, &r, NULL), OG_OK);
        json_decref(pj);
        assert_int_equal(r.nrows, df);
        double N = NDOCS, want = log(1 + (N - (double)df + 0.5) / ((double)df + 0.5)) /
                                 log((N - (double)df + 0.5) / ((double)df + 0.5));
        for (size_t i = 0; i < r.nrows; i++) {
            size_t n;
            const uint8_t *s = og_vector_get_bytes(&r.cols[0], i, &n);
            double ours = og_vector_get_f64(&r.cols[1], i);
            /* the same rank: equal scores may list in either engine's tie order */
            double theirs = NAN;
            for (size_t k = 0; k < nf; k++)
                if (strlen(fts[k].slug) == n && !memcmp(fts[k].slug, s, n)) theirs = fts[k].score;
            if (isnan(theirs)) fail_msg("%s: %.*s is not an FTS5 match", WORDS[qi], (int)n, (const char *)s);
            if (fabs(ours / -theirs - want) > 1e-9 * want)
                fail_msg("%s: %.*s ours %.17g fts5 %.17g ratio %.17g want %.17g", WORDS[qi], (int)n, (const char *)s, ours,
                         theirs, ours / -theirs, want);
            if (fabs(-fts[i].score * want - ours) > 1e-9 * ours)
                fail_msg("%s: rank %zu is %.*s (%.17g) here but scores %.17g in FTS5", WORDS[qi], i, (int)n,
                         (const char *)s, ours, -fts[i].score * want);
            checked++;
        }
        og_result_free(&r);
        free(fts);
    }
    printf("checked %zu (query, document) scores against FTS5\n", checked);
    assert_true(checked > 100);
    free(nd);
    free(sql);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bm25_agrees_with_fts5),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
