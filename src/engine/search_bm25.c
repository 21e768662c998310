/*
 * search_bm25.c — bm25 scores of a text rank: the plan, the streams over postings, top-k
 * sinks (search_internal.h; the search functions are in search.c).
 *
 * Why streaming: a common query term (a word in most documents) has a posting per row, and a
 * fresh process pays for every page it touches.  So the scores are never gathered into
 * per-term hit arrays or a row -> score map: each segment's postings of the query terms are
 * merged by document (they ascend) and each row's score is formed as it streams past, term by
 * term in query order (so every sum is the same whatever the segments are).  A top-k ordering
 * streams twice (the k-th highest score, then the rows reaching it) and keeps only those rows;
 * everything else keeps all the matched rows, ascending, with their scores.
 *
 * Why MaxScore (bm25_stream_pruned): a term's score in a document is below idf * (k1 + 1), so
 * once a threshold θ is known (the k-th score so far, then the k-th score itself) the terms
 * with the smallest bounds whose bounds sum below θ ("non-essential", a word in most
 * documents) cannot lift a row to θ on their own: only the other terms' postings choose the
 * candidate rows, and a non-essential term's postings are advanced to a candidate only while
 * the candidate's partial score plus the bounds left can still reach θ.  A row kept is scored
 * exactly as the exhaustive stream scores it (its terms summed in query order), so the rows,
 * scores and tie order are unchanged (tests/engine/test_search_bm25_topk.c compares both).
 * With MaxScore a top-k streams once: the rows reaching the threshold of their time are kept
 * and cut at the final k-th score (the two-pass stream above is the exhaustive reference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/search_internal.h"
#include "index/fts.h"
#include "util/error.h"

/* The plan of a bm25 rank: the distinct non-stop query terms' dict entries per segment
 * (rs->bent[g * nq + j], -1 = absent) and their idf over the live rows (df counted through
 * the deletion vectors where a segment has some, else read from the dict). */
static og_status bm25_plan(og_search *s, int rank, rstate *rs)
{
    const og_ir_rank *r = &s->ir->ranks[rank];
    tcol *c;
    OG_TRY(og_srch_get_tcol(s, r->var, r->prop_id, &c));
    rs->n = c->n;
    rs->tc = c;
    og_vector qv;
    const char *q = NULL;
    size_t qlen = 0;
    int null = 0;
    OG_TRY(og_srch_query_string(s, r->query, &qv, &q, &qlen, &null));
    og_status st = null ? OG_OK : og_srch_analyze_query(s, q, qlen);
    og_vector_free(&qv);
    if (st) return st;
    size_t *ids = NULL, nq = 0;
    if (!null) OG_TRY(og_srch_query_terms(s, &ids, &nq));
    rs->bq = nq;
    rs->bent = malloc((c->nsegs && nq ? c->nsegs * nq : 1) * sizeof *rs->bent);
    rs->bidf = calloc(nq ? nq : 1, sizeof *rs->bidf);
    if (!rs->bent || !rs->bidf) st = og_err(OG_ERR_NOMEM, "out of memory");
    double N = (double)c->ndocs;
    for (size_t j = 0; j < nq && st == OG_OK; j++) {
        uint64_t df = 0;
        for (size_t g = 0; g < c->nsegs && st == OG_OK; g++) {
            const seg *sg = &c->segs[g];
            long e = og_srch_find_tok(s, sg->fts, ids[j], 0);
            rs->bent[g * nq + j] = e;
            if (e < 0) continue;
            if (!(sg->fr && !sg->hold && sg->fr->addrs)) { /* every posting is a live row */
                const char *t;
                size_t tl;
                int stop;
                uint32_t d;
                og_fts_term(sg->fts, (size_t)e, &t, &tl, &stop, &d);
                df += d;
                continue;
            }
            og_fts_iter it;
            og_fts_iter_init(&it, sg->fts, (size_t)e, 0);
            int rr;
            while ((rr = og_fts_iter_next(&it)) == 1) df += og_srch_seg_row(sg, it.doc) != NO_ROW;
            if (rr < 0) st = (og_status)-rr;
            og_fts_iter_free(&it);
        }
        if (df) rs->bidf[j] = log(1.0 + (N - (double)df + 0.5) / ((double)df + 0.5));
    }
    free(ids);
    if (st == OG_OK) rs->planned = 1;
    return st;
}

typedef void (*bm25_emit_fn)(void *ud, uint32_t row, double score);

/* One term's score in a document (the one expression both streams use). */
static inline double bm25_term(double idf, uint32_t tf, double norm)
{
    return idf * (double)tf * (OG_BM25_K1 + 1.0) / ((double)tf + norm);
}

/* Streams (row, score) of every live row sharing a planned term: segment by segment, rows
 * ascending within a segment. */
static og_status bm25_stream(const rstate *rs, bm25_emit_fn emit, void *ud)
{
    const tcol *c = rs->tc;
    size_t nq = rs->bq;
    if (!nq) return OG_OK;
    og_fts_iter *it = calloc(nq, sizeof *it);
    uint8_t *live = calloc(nq, 1);
    og_status st = it && live ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t g = 0; g < c->nsegs && st == OG_OK; g++) {
        const seg *sg = &c->segs[g];
        for (size_t j = 0; j < nq && st == OG_OK; j++) {
            long e = rs->bent[g * nq + j];
            live[j] = 0;
            if (e < 0) continue;
            og_fts_iter_init(&it[j], sg->fts, (size_t)e, 0);
            int rr = og_fts_iter_next(&it[j]);
            if (rr < 0) st = (og_status)-rr;
            live[j] = rr == 1;
        }
        while (st == OG_OK) {
            uint32_t d = UINT32_MAX;
            for (size_t j = 0; j < nq; j++)
                if (live[j] && it[j].doc < d) d = it[j].doc;
            if (d == UINT32_MAX) break; /* docs are below rows < 2^32 - 1 */
            double dl = (double)og_fts_doc_len(sg->fts, d), sc = 0;
            double norm = OG_BM25_K1 * (1.0 - OG_BM25_B + OG_BM25_B * dl / c->avgdl);
            for (size_t j = 0; j < nq && st == OG_OK; j++) {
                if (!live[j] || it[j].doc != d) continue;
                sc += bm25_term(rs->bidf[j], it[j].tf, norm);
                int rr = og_fts_iter_next(&it[j]);
                if (rr < 0) st = (og_status)-rr;
                live[j] = rr == 1;
            }
            uint32_t row = og_srch_seg_row(sg, d);
            if (st == OG_OK && row != NO_ROW) emit(ud, row, sc);
        }
    }
    for (size_t j = 0; it && j < nq; j++) og_fts_iter_free(&it[j]);
    free(it);
    free(live);
    return st;
}

static _Thread_local int t_bm25_exhaustive;

void og_search_set_bm25_exhaustive(int on) { t_bm25_exhaustive = on != 0; }

/* x (a sum of bounds or of a partial score and bounds) is certainly below theta: the margin
 * covers the rounding of sums taken in another order than the exact score's. */
static int below(double x, double theta) { return x * (1.0 + 1e-9) < theta; }

/* Like bm25_stream, but only the rows that can score at least *theta (re-read after every
 * emit: a top-k raises it) are emitted, by MaxScore (see above).  Every row emitted has
 * bm25_stream's score; every row skipped scores below *theta. */
static og_status bm25_stream_pruned(const rstate *rs, bm25_emit_fn emit, void *ud, const double *theta)
{
    const tcol *c = rs->tc;
    size_t nq = rs->bq;
    if (!nq) return OG_OK;
    og_fts_iter *it = calloc(nq, sizeof *it);
    uint8_t *live = calloc(nq, 1), *init = calloc(nq, 1);
    size_t *ord = calloc(nq, sizeof *ord);
    double *ub = calloc(nq, sizeof *ub), *pre = calloc(nq, sizeof *pre), *con = calloc(nq, sizeof *con);
    og_status st = it && live && init && ord && ub && pre && con ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t g = 0; g < c->nsegs && st == OG_OK; g++) {
        const seg *sg = &c->segs[g];
        size_t m = 0;
        for (size_t j = 0; j < nq && st == OG_OK; j++) {
            long e = rs->bent[g * nq + j];
            live[j] = 0;
            if (e < 0) continue;
            if (init[j]) og_fts_iter_free(&it[j]);
            og_fts_iter_init(&it[j], sg->fts, (size_t)e, 0);
            init[j] = 1;
            int rr = og_fts_iter_next(&it[j]);
            if (rr < 0) st = (og_status)-rr;
            live[j] = rr == 1;
            ub[j] = rs->bidf[j] * (OG_BM25_K1 + 1.0);
            size_t i = m++; /* ord: the present terms by bound, ascending (few terms) */
            for (; i && ub[ord[i - 1]] > ub[j]; i--) ord[i] = ord[i - 1];
            ord[i] = j;
        }
        for (size_t i = 0; i < m; i++) pre[i] = (i ? pre[i - 1] : 0) + ub[ord[i]];
        size_t p = 0; /* ord[0..p) are non-essential: their bounds sum below theta */
        while (st == OG_OK) {
            while (p < m && below(pre[p], *theta)) p++;
            uint32_t d = UINT32_MAX;
            for (size_t i = p; i < m; i++)
                if (live[ord[i]] && it[ord[i]].doc < d) d = it[ord[i]].doc;
            if (d == UINT32_MAX) break; /* docs are below rows < 2^32 - 1 */
            uint32_t row = og_srch_seg_row(sg, d);
            double dl = (double)og_fts_doc_len(sg->fts, d), part = 0;
            double norm = OG_BM25_K1 * (1.0 - OG_BM25_B + OG_BM25_B * dl / c->avgdl);
            for (size_t i = p; i < m && st == OG_OK; i++) {
                size_t j = ord[i];
                if (!live[j] || it[j].doc != d) continue;
                if (row != NO_ROW) part += con[j] = bm25_term(rs->bidf[j], it[j].tf, norm);
                int rr = og_fts_iter_next(&it[j]);
                if (rr < 0) st = (og_status)-rr;
                live[j] = rr == 1;
            }
            int keep = row != NO_ROW && st == OG_OK;
            for (size_t i = p; keep && i-- > 0;) { /* non-essential terms, largest bound first */
                if (below(part + pre[i], *theta)) {
                    keep = 0;
                    break;
                }
                size_t j = ord[i];
                int rr = 1;
                while (live[j] && it[j].doc < d && (rr = og_fts_iter_next(&it[j])) == 1) {}
                if (rr < 0) st = (og_status)-rr, keep = 0;
                if (rr != 1) live[j] = 0;
                if (live[j] && it[j].doc == d) part += con[j] = bm25_term(rs->bidf[j], it[j].tf, norm);
            }
            if (keep && !below(part, *theta)) {
                double sc = 0; /* query order, as bm25_stream sums */
                for (size_t j = 0; j < nq; j++) sc += con[j];
                emit(ud, row, sc);
            }
            memset(con, 0, nq * sizeof *con);
        }
    }
    for (size_t j = 0; init && j < nq; j++)
        if (init[j]) og_fts_iter_free(&it[j]);
    free(it);
    free(live);
    free(init);
    free(ord);
    free(ub);
    free(pre);
    free(con);
    return st;
}

/* Collects streamed rows (those scoring at least `cut`) into growing arrays. */
typedef struct bm25_sink {
    uint32_t *rows;
    double *score;
    size_t n, cap;
    double cut;
    int unsorted, nomem;
} bm25_sink;

static void sink_emit(void *ud, uint32_t row, double score)
{
    bm25_sink *k = ud;
    if (k->nomem || score < k->cut) return;
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 64;
        uint32_t *r = realloc(k->rows, nc * sizeof *r);
        if (r) k->rows = r;
        double *sc = r ? realloc(k->score, nc * sizeof *sc) : NULL;
        if (sc) k->score = sc;
        if (!sc) {
            k->nomem = 1;
            return;
        }
        k->cap = nc;
    }
    if (k->n && k->rows[k->n - 1] > row) k->unsorted = 1;
    k->rows[k->n] = row;
    k->score[k->n++] = score;
}

typedef struct rowscore {
    uint32_t row;
    double score;
} rowscore;

static int rowscore_cmp(const void *pa, const void *pb)
{
    const rowscore *a = pa, *b = pb;
    return (a->row > b->row) - (a->row < b->row);
}

/* The sink's rows as rs's matched rows, ascending. */
static og_status sink_take(bm25_sink *k, rstate *rs)
{
    if (k->nomem) return og_err(OG_ERR_NOMEM, "out of memory");
    if (k->unsorted) { /* a memory segment's rows interleave with the files' */
        rowscore *v = malloc(k->n * sizeof *v);
        if (!v) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < k->n; i++) v[i] = (rowscore){k->rows[i], k->score[i]};
        qsort(v, k->n, sizeof *v, rowscore_cmp);
        for (size_t i = 0; i < k->n; i++) k->rows[i] = v[i].row, k->score[i] = v[i].score;
        free(v);
    }
    rs->mrows = k->rows;
    rs->mscore = k->score;
    rs->nm = k->n;
    k->rows = NULL;
    k->score = NULL;
    return OG_OK;
}

/* The k highest scores seen, as a min-heap of at most k. */
typedef struct bm25_heap {
    double *v;
    size_t n, k;
    double theta; /* v[0] once full (a row must beat it), else -inf */
} bm25_heap;

static void heap_emit(void *ud, uint32_t row, double score)
{
    (void)row;
    bm25_heap *h = ud;
    size_t i;
    if (h->n < h->k) {
        for (i = h->n++; i && h->v[(i - 1) / 2] > score; i = (i - 1) / 2) h->v[i] = h->v[(i - 1) / 2];
        h->v[i] = score;
        if (h->n == h->k) h->theta = h->v[0];
        return;
    }
    if (score <= h->v[0]) return;
    for (i = 0;;) { /* replace the minimum and sift down */
        size_t a = 2 * i + 1, b = a + 1, m = i;
        double mv = score;
        if (a < h->n && h->v[a] < mv) m = a, mv = h->v[a];
        if (b < h->n && h->v[b] < mv) m = b, mv = h->v[b];
        if (m == i) break;
        h->v[i] = h->v[m];
        i = m;
    }
    h->v[i] = score;
    h->theta = h->v[0];
}

/* A MaxScore top-k's one pass: the heap, and the rows reaching its threshold of their time. */
typedef struct bm25_top {
    bm25_heap *h;
    bm25_sink *k;
    const double *theta; /* &h->theta, or &none while the heap can hold every row */
    double none;
} bm25_top;

static void top_emit(void *ud, uint32_t row, double score)
{
    bm25_top *t = ud;
    if (score >= *t->theta) sink_emit(t->k, row, score);
    heap_emit(t->h, row, score);
}

/* Keeps the sink's rows scoring at least its cut (in order). */
static void sink_cut(bm25_sink *k)
{
    size_t w = 0;
    for (size_t i = 0; i < k->n; i++)
        if (k->score[i] >= k->cut) k->rows[w] = k->rows[i], k->score[w++] = k->score[i];
    k->n = w;
}

/* Drops the rank's scores and plan (a damaged file, or partial scores being completed). */
void og_srch_bm25_reset(rstate *rs)
{
    free(rs->mrows);
    free(rs->mscore);
    free(rs->bent);
    free(rs->bidf);
    rs->mrows = NULL;
    rs->mscore = NULL;
    rs->bent = NULL;
    rs->bidf = NULL;
    rs->nm = rs->bq = 0;
    rs->planned = rs->partial = 0;
}

/* The matched rows with their scores (k = 0: all of them), or the rows scoring at least the
 * k-th highest score (rs->partial).  A damaged index file found on the way: answered from the
 * rows instead. */
og_status og_srch_bm25_run(og_search *s, int rank, rstate *rs, uint64_t k)
{
    og_status st = OG_OK;
    for (int attempt = 0;; attempt++) {
        free(rs->mrows);
        free(rs->mscore);
        rs->mrows = NULL;
        rs->mscore = NULL;
        rs->nm = 0;
        rs->partial = 0;
        if (!rs->planned) st = bm25_plan(s, rank, rs);
        bm25_sink sink = {0};
        sink.cut = -INFINITY;
        if (st == OG_OK && k) {
            bm25_heap h = {NULL, 0, (size_t)k, -INFINITY};
            size_t bound = 0; /* at most the summed postings' rows are scored */
            for (size_t i = 0; i < rs->tc->nsegs * rs->bq; i++)
                if (rs->bent[i] >= 0) {
                    const char *t;
                    size_t tl;
                    int stop;
                    uint32_t df;
                    og_fts_term(rs->tc->segs[i / rs->bq].fts, (size_t)rs->bent[i], &t, &tl, &stop, &df);
                    bound += df;
                }
            if (h.k > bound) h.k = bound;
            h.v = malloc((h.k ? h.k : 1) * sizeof *h.v);
            if (!h.v) st = og_err(OG_ERR_NOMEM, "out of memory");
            /* MaxScore: one pass keeps every row reaching the threshold of its time (no later
             * row can lower it, so the rows reaching the final k-th score are among them) */
            bm25_top tp = {&h, &sink, h.k == k ? &h.theta : &tp.none, -INFINITY};
            if (st == OG_OK)
                st = t_bm25_exhaustive ? bm25_stream(rs, heap_emit, &h)
                                       : bm25_stream_pruned(rs, top_emit, &tp, tp.theta);
            if (st == OG_OK && h.n == k) sink.cut = h.v[0]; /* else fewer than k rows: all */
            free(h.v);
            rs->partial = 1;
            if (!t_bm25_exhaustive) sink_cut(&sink);
        }
        if (st == OG_OK && (t_bm25_exhaustive || !rs->partial)) st = bm25_stream(rs, sink_emit, &sink);
        if (st == OG_OK) st = sink_take(&sink, rs);
        free(sink.rows);
        free(sink.score);
        if (st != OG_ERR_CORRUPT || attempt || !rs->tc || !rs->tc->files) return st;
        tcol *c;
        og_srch_bm25_reset(rs);
        st = og_srch_get_tcol(s, s->ir->ranks[rank].var, s->ir->ranks[rank].prop_id, &c);
        if (st == OG_OK) st = og_srch_tcol_fallback(s, c);
        if (st) return st;
    }
}

/* Row r's score when rs's matched rows hold it (binary search), or NULL. */
const double *og_srch_bm25_find(const rstate *rs, uint32_t r)
{
    size_t a = 0, b = rs->nm;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (rs->mrows[m] < r) a = m + 1;
        else b = m;
    }
    return a < rs->nm && rs->mrows[a] == r ? &rs->mscore[a] : NULL;
}

/* The query vector of a nearest rank into rs->q (dim floats). */
