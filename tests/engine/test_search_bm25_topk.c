/*
 * test_search_bm25_topk.c — a bm25 top-k by MaxScore (engine/search.c bm25_stream_pruned,
 * docs/search.md) returns exactly what scoring every posting returns
 * (og_search_set_bm25_exhaustive): the same rows, scores (to the bit) and tie order.  Many
 * random corpora (a Zipf-like vocabulary with a word in ~95% of the documents, so that term is
 * non-essential, short vocabularies so scores tie, null bodies, deleted and updated rows),
 * random queries of one to five words (repeats, stop words, absent words) and k in
 * {1, 3, 10, 100}; each corpus without index files, with every data file indexed and with
 * partial coverage (the index-off twin gives the same answers too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "engine/index_build.h"
#include "engine/mutate.h"
#include "engine/search.h"
#include "engine/tableview.h"
#include "fixture.h"

static const char *SCHEMA = "node Doc { slug: String @key  body: String? @index }\n";

static const char *MUTS =
    "query set_body($slug: String, $body: String) { update Doc set { body: $body } where slug = $slug }\n"
    "query del_doc($slug: String) { delete Doc where slug = $slug }\n";

static const char *QUERIES =
    "query top1($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 1 }\n"
    "query top3($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 3 }\n"
    "query top10($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 10 }\n"
    "query top100($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 100 }\n";

static const char *TOPS[] = {"top1", "top3", "top10", "top100"};

static const char *WORDS[] = {"common", "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
                              "theta", "iota", "kappa", "lambda", "the", "rare"};
#define NWORDS (sizeof WORDS / sizeof *WORDS)

static uint64_t rng;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void add(char **buf, size_t *len, size_t *cap, const char *fmtstr, ...)
{
    va_list ap;
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

/* A word: "common" in ~95% of bodies (added separately), the rest skewed to the first few. */
static const char *word(unsigned vocab)
{
    unsigned w = 1 + rnd(1 + rnd(vocab));
    return WORDS[w < NWORDS ? w : NWORDS - 1];
}

static char *make_docs(size_t from, size_t to, unsigned vocab)
{
    size_t len = 0, cap = 4096;
    char *b = malloc(cap);
    assert_non_null(b);
    b[0] = '\0';
    for (size_t i = from; i < to; i++) {
        add(&b, &len, &cap, "{\"type\":\"Doc\",\"data\":{\"slug\":\"d%04zu\"", i);
        if (rnd(12)) {
            unsigned nw = 1 + rnd(rnd(2) ? 3 : 9);
            add(&b, &len, &cap, ",\"body\":\"%s", rnd(20) ? "common" : word(vocab));
            for (unsigned w = 0; w < nw; w++) add(&b, &len, &cap, " %s", rnd(5) ? word(vocab) : "common");
            add(&b, &len, &cap, "\"");
        }
        add(&b, &len, &cap, "}}\n");
    }
    return b;
}

static fixture *F;

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

enum { MODE_NOINDEX, MODE_INDEXED, MODE_PARTIAL };

static void build(int mode, uint64_t seed, size_t ndocs, unsigned vocab)
{
    og_tableview_set_index_mode(mode == MODE_NOINDEX ? 0 : 2);
    rng = seed;
    F = fixture_new(SCHEMA, QUERIES);
    assert_non_null(F);
    og_write_result w;
    char *first = make_docs(0, ndocs * 2 / 3, vocab), *second = make_docs(ndocs * 2 / 3, ndocs, vocab);
    og_status st = fixture_load(F, first, OG_LOAD_OVERWRITE, &w);
    if (st == OG_OK && mode == MODE_PARTIAL) reindex();
    if (st == OG_OK) st = fixture_load(F, second, OG_LOAD_APPEND, &w);
    free(first);
    free(second);
    if (st != OG_OK) fail_msg("load: %s", og_error_message());
    for (unsigned i = 0, n = rnd(12); i < n; i++) {
        char p[160];
        snprintf(p, sizeof p, "{\"slug\": \"d%04u\"}", rnd((unsigned)ndocs));
        mutate("del_doc", p);
        snprintf(p, sizeof p, "{\"slug\": \"d%04u\", \"body\": \"common %s %s\"}", rnd((unsigned)ndocs), word(vocab),
                 word(vocab));
        mutate("set_body", p);
    }
    if (mode == MODE_INDEXED) reindex();
}

/* The query's rows as "slug|score;..." with scores to the bit (%a). */
static size_t run(const char *name, const char *q, char *text, size_t cap)
{
    (void)fixture_query; /* the fixture's helper; this file runs queries itself */
    char params[256];
    snprintf(params, sizeof params, "{\"q\": \"%s\"}", q);
    json_t *pj = json_loads(params, 0, NULL);
    og_result r;
    og_status st = og_engine_query(F->e, NULL, NULL, "q.gq", QUERIES, strlen(QUERIES), name, pj, &r, NULL);
    json_decref(pj);
    if (st) fail_msg("%s %s: %s", name, params, og_error_message());
    size_t w = 0;
    text[0] = '\0';
    for (size_t i = 0; i < r.nrows && w < cap; i++) {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(&r.cols[0], i, &n);
        double s = og_vector_is_null(&r.cols[1], i) ? NAN : og_vector_get_f64(&r.cols[1], i);
        w += (size_t)snprintf(text + w, cap - w, "%s%.*s|%a", i ? ";" : "", (int)n, (const char *)p, s);
    }
    size_t n = r.nrows;
    og_result_free(&r);
    return n;
}

static void maxscore_equals_exhaustive(void **state)
{
    (void)state;
    static char tp[65536], te[65536], ti[8][4][65536];
    size_t compared = 0, full = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t ndocs = 60 + (size_t)(seed * 97 % 400);
        unsigned vocab = 2 + (unsigned)(seed * 5 % 12);
        char qs[8][96];
        for (int mode = MODE_NOINDEX; mode <= MODE_PARTIAL; mode++) {
            build(mode, 0x9e3779b97f4a7c15ull * seed, ndocs, vocab);
            rng = 0x2545f4914f6cdd1dull + seed; /* the same queries in every mode */
            for (int qi = 0; qi < 8; qi++) {
                size_t len = 0;
                qs[qi][0] = '\0';
                for (unsigned w = 0, nw = 1 + rnd(5); w < nw; w++)
                    len += (size_t)snprintf(qs[qi] + len, sizeof qs[qi] - len, "%s%s", w ? " " : "",
                                            rnd(3) ? word(vocab) : (rnd(2) ? "common" : "absentword"));
                for (int t = 0; t < 4; t++) {
                    og_search_set_bm25_exhaustive(0);
                    size_t n = run(TOPS[t], qs[qi], tp, sizeof tp);
                    og_search_set_bm25_exhaustive(1);
                    run(TOPS[t], qs[qi], te, sizeof te);
                    og_search_set_bm25_exhaustive(0);
                    if (strcmp(tp, te))
                        fail_msg("seed %llu mode %d %s '%s': MaxScore '%s'\nexhaustive '%s'", (unsigned long long)seed,
                                 mode, TOPS[t], qs[qi], tp, te);
                    /* the index-off twin: the same answers with and without index files */
                    if (mode == MODE_NOINDEX) memcpy(ti[qi][t], tp, sizeof tp);
                    else if (strcmp(ti[qi][t], tp))
                        fail_msg("seed %llu mode %d %s '%s': indexed '%s'\nindex-off '%s'", (unsigned long long)seed,
                                 mode, TOPS[t], qs[qi], tp, ti[qi][t]);
                    compared++;
                    full += n == (size_t[]){1, 3, 10, 100}[t];
                }
            }
            fixture_free(F);
            F = NULL;
        }
    }
    og_tableview_set_index_mode(2);
    assert_true(full > compared / 2); /* most queries fill their k (the threshold prunes) */
    printf("bm25 MaxScore vs exhaustive: %zu top-k queries equal (%zu with k rows)\n", compared, full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maxscore_equals_exhaustive),
    };
    return cmocka_run_group_tests_name("bm25 top-k", tests, NULL, NULL);
}
