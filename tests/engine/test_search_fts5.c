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
 *
 * top10_equals_fts5 (needs libsqlite3 at build time: OG_HAVE_SQLITE3) pins the TOP-10 RANKING
 * against FTS5 configured to be comparable (bench/search/fts5_peer.h): our stop words dropped
 * before its Porter stemmer ('porter ogstop unicode61') and BM25 with our idf form over its own
 * statistics (lucene_bm25), ties broken by slug on both sides.  On a generated corpus of
 * nouns the two stemmers agree on, mixed with stop words, every 1-3 word query must give the
 * same ten documents in the same order with the same scores (1e-9).  When WordNet is installed
 * (Debian wordnet-base), the same holds for 20,000 real glosses with FTS5 indexing our
 * analyzer's terms ('oganalyzer'), and the agreement of STOCK FTS5 is printed.
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

#ifdef OG_HAVE_SQLITE3
#include <sqlite3.h>

#include "../../bench/search/fts5_peer.h"
#include "util/buf.h"

#define TOPN 10

typedef struct top10 {
    char slug[TOPN][32];
    double score[TOPN];
    size_t n;
} top10;

static const char *TOPQ = "query top($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } "
                          "order { bm25($d.body, $q), $d.slug } limit 10 }\n";

static void ours_top(fixture *f, const char *q, top10 *out)
{
    json_t *pj = json_pack("{s:s}", "q", q);
    og_result r;
    assert_int_equal(og_engine_query(f->e, NULL, NULL, "q.gq", TOPQ, strlen(TOPQ), "top", pj, &r, NULL), OG_OK);
    json_decref(pj);
    out->n = 0;
    for (size_t i = 0; i < r.nrows && i < TOPN; i++) {
        size_t n;
        const uint8_t *sl = og_vector_get_bytes(&r.cols[0], i, &n);
        snprintf(out->slug[out->n], sizeof out->slug[0], "%.*s", (int)n, (const char *)sl);
        out->score[out->n++] = og_vector_get_f64(&r.cols[1], i);
    }
    og_result_free(&r);
}

static void fts5_top(sqlite3_stmt *st, const char *q, top10 *out)
{
    char m[512] = "", tmp[256];
    snprintf(tmp, sizeof tmp, "%s", q);
    for (char *save, *w = strtok_r(tmp, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        size_t l = strlen(m);
        snprintf(m + l, sizeof m - l, "%s\"%s\"", l ? " OR " : "", w);
    }
    sqlite3_bind_text(st, 1, m, -1, SQLITE_TRANSIENT);
    out->n = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && out->n < TOPN) {
        snprintf(out->slug[out->n], sizeof out->slug[0], "%s", (const char *)sqlite3_column_text(st, 0));
        out->score[out->n++] = sqlite3_column_double(st, 1);
    }
    assert_true(rc == SQLITE_ROW || rc == SQLITE_DONE);
    sqlite3_reset(st);
}

/* 1 when a and b list the same slugs in the same order (with scores equal to 1e-9 when
 * `scores`, and then printing the first difference). */
static int same_top(const char *q, const top10 *a, const top10 *b, int scores)
{
    if (a->n != b->n) {
        if (scores) printf("query '%s': %zu rows here, %zu in FTS5\n", q, a->n, b->n);
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->slug[i], b->slug[i]) ||
            (scores && fabs(a->score[i] - b->score[i]) > 1e-9 * fabs(a->score[i]))) {
            if (scores)
                printf("query '%s' rank %zu: %s %.17g here, %s %.17g in FTS5\n", q, i, a->slug[i], a->score[i],
                       b->slug[i], b->score[i]);
            return 0;
        }
    }
    return 1;
}

static sqlite3 *peer_db(const char *tokenizer)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(og_fts5_peer_register(db), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE t USING fts5(slug UNINDEXED, body, tokenize='%s'); BEGIN;",
             tokenizer);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    return db;
}

static void peer_add(sqlite3 *db, sqlite3_stmt **ins, const char *slug, const char *body)
{
    if (!*ins) assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1, ?2)", -1, ins, NULL), SQLITE_OK);
    sqlite3_bind_text(*ins, 1, slug, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(*ins, 2, body, -1, SQLITE_TRANSIENT);
    assert_int_equal(sqlite3_step(*ins), SQLITE_DONE);
    sqlite3_reset(*ins);
}

static sqlite3_stmt *peer_select(sqlite3 *db, int lucene)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    const char *sql = lucene ? "SELECT slug, lucene_bm25(t, 1) AS s FROM t WHERE t MATCH ?1 ORDER BY s DESC, slug LIMIT 10"
                             : "SELECT slug, -bm25(t) FROM t WHERE t MATCH ?1 ORDER BY bm25(t), slug LIMIT 10";
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    return st;
}

static const char *STOPS[] = {"the", "of", "and", "with", "this", "in", "a", "to", "is", "was"};
#define NSTOPS (sizeof STOPS / sizeof STOPS[0])

static void top10_equals_fts5(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    sqlite3 *db = peer_db("porter ogstop unicode61");
    sqlite3_stmt *ins = NULL;
    enum { DOCS = 600 };
    uint64_t seed = 11;
    double wsum = 0;
    for (size_t i = 0; i < NWORDS; i++) wsum += 1.0 / (double)(i + 1);
    og_buf nd = OG_BUF_INIT;
    for (size_t d = 0; d < DOCS; d++) {
        char body[512], slug[16];
        size_t len = 2 + rnd(&seed) % 30, w = 0;
        for (size_t k = 0; k < len; k++) {
            const char *word;
            if (rnd(&seed) % 4 == 0) {
                word = STOPS[rnd(&seed) % NSTOPS];
            } else {
                double x = (double)(rnd(&seed) % 1000000) / 1e6 * wsum, acc = 0;
                size_t i = 0;
                while (i + 1 < NWORDS && (acc += 1.0 / (double)(i + 1)) < x) i++;
                word = WORDS[i];
            }
            w += (size_t)snprintf(body + w, sizeof body - w, "%s%s", k ? (rnd(&seed) % 5 ? " " : ", ") : "", word);
        }
        snprintf(slug, sizeof slug, "d%04zu", d);
        peer_add(db, &ins, slug, body);
        char line[700];
        int n = snprintf(line, sizeof line, "{\"type\":\"Doc\",\"data\":{\"slug\":\"%s\",\"body\":\"%s\"}}\n", slug,
                         body);
        assert_int_equal(og_buf_append(&nd, line, (size_t)n), OG_OK);
    }
    sqlite3_finalize(ins);
    assert_int_equal(og_buf_append(&nd, "", 1), OG_OK);
    og_write_result w;
    assert_int_equal(fixture_load(f, (const char *)nd.data, OG_LOAD_OVERWRITE, &w), OG_OK);
    og_buf_free(&nd);
    sqlite3_stmt *sel = peer_select(db, 1);
    size_t checked = 0, nonempty = 0;
    for (size_t qi = 0; qi < 200; qi++) {
        /* distinct words: FTS5 counts a repeated query term twice, we once (docs/search.md) */
        char q[128] = "";
        const char *picked[3];
        size_t nw = qi < NWORDS ? 1 : 1 + qi % 3, np = 0;
        while (np < nw) {
            const char *word = qi < NWORDS ? WORDS[qi] : rnd(&seed) % 5 == 0 ? STOPS[rnd(&seed) % NSTOPS]
                                                                              : WORDS[rnd(&seed) % NWORDS];
            int dup = 0;
            for (size_t k = 0; k < np; k++) dup |= !strcmp(picked[k], word);
            if (dup) continue;
            size_t l = strlen(q);
            snprintf(q + l, sizeof q - l, "%s%s", np ? " " : "", word);
            picked[np++] = word;
        }
        top10 a, b;
        ours_top(f, q, &a);
        fts5_top(sel, q, &b);
        if (!same_top(q, &a, &b, 1)) fail_msg("top 10 of '%s' differs from FTS5's (porter ogstop + lucene_bm25)", q);
        checked++;
        nonempty += a.n > 0;
    }
    printf("%zu queries (%zu with results): the same top 10 as FTS5\n", checked, nonempty);
    assert_true(nonempty > 150);
    sqlite3_finalize(sel);
    sqlite3_close(db);
    fixture_free(f);
}

/* WordNet 3.0 noun glosses, "words: gloss" per synset, as bench/search/corpus.py writes them. */
static void top10_equals_fts5_wordnet(void **state)
{
    (void)state;
    FILE *in = fopen("/usr/share/wordnet/data.noun", "r");
    if (!in) {
        printf("SKIP: top-10 ranking on WordNet: /usr/share/wordnet/data.noun is missing (apt-get install wordnet-base)\n");
        return;
    }
    enum { DOCS = 20000 };
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    sqlite3 *db = peer_db("oganalyzer"), *stock = peer_db("porter unicode61");
    sqlite3_stmt *ins = NULL, *ins2 = NULL;
    og_buf nd = OG_BUF_INIT;
    char line[8192], body[8192];
    char(*samples)[32] = calloc(DOCS, 32);
    assert_non_null(samples);
    size_t nd_docs = 0;
    while (nd_docs < DOCS && fgets(line, sizeof line, in)) {
        if (line[0] == ' ') continue; /* licence header */
        char *bar = strstr(line, " | ");
        if (!bar) continue;
        *bar = 0;
        char *gloss = bar + 3;
        gloss[strcspn(gloss, "\n")] = 0;
        size_t gl = strlen(gloss);
        while (gl && gloss[gl - 1] == ' ') gloss[--gl] = 0;
        char *save, *off = strtok_r(line, " ", &save);
        strtok_r(NULL, " ", &save); /* lex_filenum */
        strtok_r(NULL, " ", &save); /* ss_type */
        char *cnt = strtok_r(NULL, " ", &save);
        if (!off || !cnt) continue;
        size_t nw = strtoul(cnt, NULL, 16), bl = 0;
        for (size_t i = 0; i < nw; i++) {
            char *word = strtok_r(NULL, " ", &save);
            strtok_r(NULL, " ", &save); /* lex_id */
            if (!word) break;
            for (char *c = word; *c; c++)
                if (*c == '_') *c = ' ';
            bl += (size_t)snprintf(body + bl, sizeof body - bl, "%s%s", i ? ", " : "", word);
        }
        bl += (size_t)snprintf(body + bl, sizeof body - bl, ": %s", gloss);
        if (bl >= sizeof body - 1) continue;
        char slug[32];
        snprintf(slug, sizeof slug, "noun-%s", off);
        peer_add(db, &ins, slug, body);
        peer_add(stock, &ins2, slug, body);
        json_t *j = json_pack("{s:s,s:{s:s,s:s}}", "type", "Doc", "data", "slug", slug, "body", body);
        char *js = json_dumps(j, JSON_COMPACT);
        assert_non_null(js);
        assert_int_equal(og_buf_append(&nd, js, strlen(js)), OG_OK);
        assert_int_equal(og_buf_append(&nd, "\n", 1), OG_OK);
        free(js);
        json_decref(j);
        /* a sample word of 4+ letters for the queries */
        size_t wl = 0;
        samples[nd_docs][0] = 0;
        const char *c0 = gloss + (nd_docs * 7) % (gl ? gl : 1);
        while (c0 > gloss && c0[-1] >= 'a' && c0[-1] <= 'z') c0--; /* from the start of a word */
        for (const char *c = c0; *c && wl < 31; c++) {
            if (*c >= 'a' && *c <= 'z') samples[nd_docs][wl++] = *c;
            else if (wl >= 4) break;
            else wl = 0;
        }
        samples[nd_docs][wl < 4 ? 0 : wl] = 0;
        nd_docs++;
    }
    fclose(in);
    sqlite3_finalize(ins);
    sqlite3_finalize(ins2);
    assert_int_equal(og_buf_append(&nd, "", 1), OG_OK);
    og_write_result w;
    assert_int_equal(fixture_load(f, (const char *)nd.data, OG_LOAD_OVERWRITE, &w), OG_OK);
    og_buf_free(&nd);
    sqlite3_stmt *sel = peer_select(db, 1), *sel2 = peer_select(stock, 0);
    uint64_t seed = 5;
    size_t checked = 0, stock_same = 0;
    for (size_t qi = 0; checked < 100 && qi < 1000; qi++) {
        const char *w1 = samples[rnd(&seed) % nd_docs], *w2 = samples[rnd(&seed) % nd_docs];
        if (!w1[0] || !w2[0]) continue;
        char q[80];
        if (qi % 2) snprintf(q, sizeof q, "%s %s", w1, w2);
        else snprintf(q, sizeof q, "%s", w1);
        if (ogp_repeats_term(q)) continue; /* counted twice by FTS5, once here (fts5_peer.h) */
        top10 a, b, c;
        ours_top(f, q, &a);
        fts5_top(sel, q, &b);
        fts5_top(sel2, q, &c);
        if (!same_top(q, &a, &b, 1)) fail_msg("top 10 of '%s' differs from FTS5's (oganalyzer + lucene_bm25)", q);
        stock_same += same_top(q, &a, &c, 0);
        checked++;
    }
    printf("WordNet, %zu noun glosses: %zu queries, all with FTS5's top 10 (oganalyzer + lucene_bm25); stock FTS5 "
           "(porter unicode61 + bm25) gives the same top 10 for %zu\n",
           nd_docs, checked, stock_same);
    assert_int_equal(checked, 100);
    free(samples);
    sqlite3_finalize(sel);
    sqlite3_finalize(sel2);
    sqlite3_close(db);
    sqlite3_close(stock);
    fixture_free(f);
}
#else
static void top10_equals_fts5(void **state)
{
    (void)state;
    printf("SKIP: top-10 ranking against FTS5: built without libsqlite3 (apt-get install libsqlite3-dev)\n");
}
static void top10_equals_fts5_wordnet(void **state) { top10_equals_fts5(state); }
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bm25_agrees_with_fts5),
        cmocka_unit_test(top10_equals_fts5),
        cmocka_unit_test(top10_equals_fts5_wordnet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
