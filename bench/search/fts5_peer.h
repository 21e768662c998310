/*
 * fts5_peer.h — SQLite FTS5 configured to be comparable with OmniGraph-C's bm25, for the
 * ranking comparison of the search benchmark (bench_search.c --compare) and the ctest that
 * pins it (tests/engine/test_search_fts5.c).  Header-only (static functions): both link
 * libsqlite3 and the OmniGraph libraries.
 *
 * Why: stock FTS5 differs from our bm25 in three documented ways (docs/search.md "BM25"):
 * no stop words, the Porter stemmer (ours: Snowball English) with its own word splitting,
 * and the idf ln((N - df + 0.5) / (df + 0.5)) (ours: Lucene's ln(1 + ...)).  Each can be
 * switched off here, one at a time, so every ranking difference can be attributed:
 *
 *   tokenizer "ogstop PARENT ARGS..."  PARENT's tokens minus our English stop words (use as
 *                                      'porter ogstop unicode61': stop words are dropped
 *                                      before stemming, and count in no document length);
 *   tokenizer "oganalyzer [LANG]"      our analyzer (text/analyzer.h) itself: its non-stop
 *                                      terms, so FTS5 indexes exactly our terms; LANG (a
 *                                      libstemmer algorithm, e.g. "porter") swaps only the
 *                                      stemmer, to tell stemming from word splitting;
 *   function  lucene_bm25(tbl, col)    BM25 (k1 1.2, b 0.75) over FTS5's own statistics
 *                                      (N = xRowCount, avgdl = column total / N, df counted
 *                                      with xQueryPhrase, tf from the phrase instances, dl =
 *                                      xColumnSize of column `col`) with the Lucene idf; the
 *                                      score is positive, higher is better.
 *
 * og_fts5_peer_register(db) installs all three on a connection.  One difference stays: FTS5
 * scores every phrase of 'a OR b', so a query whose words share a stem ("crossing cross")
 * counts it twice there and once here; ogp_repeats_term tells such queries apart.
 */
#ifndef OG_BENCH_FTS5_PEER_H
#define OG_BENCH_FTS5_PEER_H

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "text/analyzer.h"

/* ---- ogstop: a parent tokenizer minus the stop words ---- */

typedef struct ogp_stop {
    fts5_tokenizer parent;
    Fts5Tokenizer *ptok;
} ogp_stop;

typedef struct ogp_stop_ctx {
    void *ctx;
    int (*tok)(void *, int, const char *, int, int, int);
} ogp_stop_ctx;

static fts5_api *ogp_fts5_api(sqlite3 *db)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK) return NULL;
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(st);
    sqlite3_finalize(st);
    return api;
}

static int ogp_stop_create(void *ud, const char **arg, int narg, Fts5Tokenizer **out)
{
    fts5_api *api = ud;
    const char *pname = narg > 0 ? arg[0] : "unicode61";
    void *pud = NULL;
    ogp_stop *s = sqlite3_malloc(sizeof *s);
    if (!s) return SQLITE_NOMEM;
    memset(s, 0, sizeof *s);
    int rc = api->xFindTokenizer(api, pname, &pud, &s->parent);
    if (rc == SQLITE_OK) rc = s->parent.xCreate(pud, narg > 0 ? arg + 1 : NULL, narg > 0 ? narg - 1 : 0, &s->ptok);
    if (rc != SQLITE_OK) {
        sqlite3_free(s);
        return rc;
    }
    *out = (Fts5Tokenizer *)s;
    return SQLITE_OK;
}

static void ogp_stop_delete(Fts5Tokenizer *t)
{
    ogp_stop *s = (ogp_stop *)t;
    s->parent.xDelete(s->ptok);
    sqlite3_free(s);
}

static int ogp_stop_cb(void *ud, int flags, const char *tok, int len, int start, int end)
{
    ogp_stop_ctx *c = ud;
    if (og_text_is_stop_word(tok, (size_t)len)) return SQLITE_OK;
    return c->tok(c->ctx, flags, tok, len, start, end);
}

static int ogp_stop_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int len,
                             int (*tok)(void *, int, const char *, int, int, int))
{
    ogp_stop *s = (ogp_stop *)t;
    ogp_stop_ctx c = {ctx, tok};
    return s->parent.xTokenize(s->ptok, &c, flags, text, len, ogp_stop_cb);
}

/* ---- oganalyzer: our analyzer's non-stop terms ---- */

typedef struct ogp_an {
    og_analyzer *an;
    og_text_tokens toks;
} ogp_an;

static int ogp_an_create(void *ud, const char **arg, int narg, Fts5Tokenizer **out)
{
    (void)ud;
    ogp_an *a = sqlite3_malloc(sizeof *a);
    if (!a) return SQLITE_NOMEM;
    memset(a, 0, sizeof *a);
    og_analyzer_opts o = {narg > 0 ? arg[0] : NULL, 0, 0};
    if (og_analyzer_new(&a->an, &o) != OG_OK) {
        sqlite3_free(a);
        return SQLITE_ERROR;
    }
    *out = (Fts5Tokenizer *)a;
    return SQLITE_OK;
}

static void ogp_an_delete(Fts5Tokenizer *t)
{
    ogp_an *a = (ogp_an *)t;
    og_text_tokens_free(&a->toks);
    og_analyzer_free(a->an);
    sqlite3_free(a);
}

static int ogp_an_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int len,
                           int (*tok)(void *, int, const char *, int, int, int))
{
    (void)flags;
    ogp_an *a = (ogp_an *)t;
    if (og_analyze(a->an, text ? text : "", text ? (size_t)len : 0, &a->toks) != OG_OK) return SQLITE_NOMEM;
    for (size_t i = 0; i < a->toks.n; i++) {
        if (a->toks.v[i].stop) continue;
        int rc = tok(ctx, 0, og_text_term(&a->toks, i), (int)a->toks.v[i].len, 0, len);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

/* ---- lucene_bm25(tbl, col) ---- */

typedef struct ogp_bm25 {
    int nphrase;
    double avgdl;
    double *idf;
    double *tf;
} ogp_bm25;

static int ogp_count_cb(const Fts5ExtensionApi *api, Fts5Context *ctx, void *ud)
{
    (void)api, (void)ctx;
    (*(sqlite3_int64 *)ud)++;
    return SQLITE_OK;
}

static void ogp_lucene_bm25(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *pc, int nv,
                            sqlite3_value **av)
{
    int col = nv > 0 ? sqlite3_value_int(av[0]) : 0;
    ogp_bm25 *d = api->xGetAuxdata(ctx, 0);
    if (!d) {
        sqlite3_int64 n = 0, total = 0;
        int np = api->xPhraseCount(ctx);
        if (api->xRowCount(ctx, &n) != SQLITE_OK || api->xColumnTotalSize(ctx, col, &total) != SQLITE_OK) {
            sqlite3_result_error(pc, "lucene_bm25: no statistics", -1);
            return;
        }
        d = sqlite3_malloc((int)(sizeof *d + 2 * (size_t)(np ? np : 1) * sizeof(double)));
        if (!d) {
            sqlite3_result_error_nomem(pc);
            return;
        }
        d->nphrase = np;
        d->idf = (double *)(d + 1);
        d->tf = d->idf + (np ? np : 1);
        d->avgdl = n ? (double)total / (double)n : 0;
        for (int i = 0; i < np; i++) {
            sqlite3_int64 df = 0;
            api->xQueryPhrase(ctx, i, &df, ogp_count_cb);
            d->idf[i] = log(1 + ((double)n - (double)df + 0.5) / ((double)df + 0.5));
        }
        if (api->xSetAuxdata(ctx, d, sqlite3_free) != SQLITE_OK) {
            sqlite3_result_error_nomem(pc);
            return;
        }
    }
    for (int i = 0; i < d->nphrase; i++) d->tf[i] = 0;
    int ninst = 0, dl = 0;
    api->xInstCount(ctx, &ninst);
    for (int k = 0; k < ninst; k++) {
        int ph, c, off;
        if (api->xInst(ctx, k, &ph, &c, &off) == SQLITE_OK && c == col) d->tf[ph] += 1;
    }
    api->xColumnSize(ctx, col, &dl);
    const double k1 = 1.2, b = 0.75;
    double score = 0;
    for (int i = 0; i < d->nphrase; i++)
        if (d->tf[i] > 0)
            score += d->idf[i] * d->tf[i] * (k1 + 1) / (d->tf[i] + k1 * (1 - b + b * (double)dl / d->avgdl));
    sqlite3_result_double(pc, score);
}

/* 1 when two non-stop terms of query q are the same term after analysis. */
static int ogp_repeats_term(const char *q)
{
    og_analyzer *an;
    og_text_tokens t = OG_TEXT_TOKENS_INIT;
    int rep = 0;
    if (og_analyzer_new(&an, NULL) != OG_OK) return 0;
    if (og_analyze(an, q, strlen(q), &t) == OG_OK)
        for (size_t i = 0; i < t.n && !rep; i++)
            for (size_t k = i + 1; k < t.n && !rep; k++)
                rep = !t.v[i].stop && !t.v[k].stop && !strcmp(og_text_term(&t, i), og_text_term(&t, k));
    og_text_tokens_free(&t);
    og_analyzer_free(an);
    return rep;
}

/* SQLITE_OK, or the error of the registration that failed. */
static int og_fts5_peer_register(sqlite3 *db)
{
    fts5_api *api = ogp_fts5_api(db);
    if (!api) return SQLITE_ERROR;
    fts5_tokenizer stop = {ogp_stop_create, ogp_stop_delete, ogp_stop_tokenize};
    fts5_tokenizer an = {ogp_an_create, ogp_an_delete, ogp_an_tokenize};
    int rc = api->xCreateTokenizer(api, "ogstop", api, &stop, NULL);
    if (rc == SQLITE_OK) rc = api->xCreateTokenizer(api, "oganalyzer", NULL, &an, NULL);
    if (rc == SQLITE_OK) rc = api->xCreateFunction(api, "lucene_bm25", NULL, ogp_lucene_bm25, NULL);
    return rc;
}

#endif
