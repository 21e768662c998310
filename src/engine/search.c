/*
 * search.c — the search functions over the snapshot's live rows (search.h): text columns and
 * text matching here, bm25 scores in search_bm25.c, nearest and rrf orderings in search_rank.c
 * (their shared state: search_internal.h).
 *
 * Why segments: the text of a (node type, property) is read as a list of inverted-index
 * segments (index/fts.h).  A fragment whose data file has a whole persisted index file
 * (`omnigraph index build`, docs/indexes.md) is read from that mapped file; the rows of every
 * other fragment are analysed here and encoded into ONE in-memory segment by the same encoder.
 * Every predicate, score and ordering is then answered from postings the same way whatever the
 * coverage, and BM25 statistics (N, df, avgdl) are recomputed per query over the LIVE rows
 * (deletion vectors applied through the fragments' row addresses), so results never depend on
 * which files exist.  A persisted file found damaged while reading is dropped and its rows are
 * analysed instead.
 *
 * Why a cache: a fragment without an index file is analysed here, and analysis is the whole
 * cost of a query over uncovered data (seconds at 100k documents).  A fragment's live rows of
 * a property never change (data and deletion files are immutable), so the in-memory segment
 * of each such fragment is encoded once per process and kept in a bounded LRU cache keyed by
 * the fragment's identity (og_index_frag.ident; OG_TEXT_CACHE_MB, default 256; 0 = off).
 * Later queries, at any version naming the same fragment with the same deletions, read it
 * like an index file.  Fragments without an identity share one memory segment, as before.
 *
 * State per execution:
 *   tcol   one text column per (node type, property): its segments, N and avgdl.  Nothing
 *          of size "rows" (beyond the rows it must analyse itself): a query over covered data
 *          touches the postings of its terms, not every row.
 *   tmatch one match bitmap over a column's rows per text expression (search / fuzzy /
 *          match_text), computed on first use.
 *   rstate per rank: bm25 scores over all rows, nearest distances computed for the rows asked
 *          about, or the fused rrf scores of the last ordering.
 */
#include "engine/search.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/search_internal.h"
#include "index/fts.h"
#include "index/index.h"
#include "text/analyzer.h"
#include "util/cache.h"
#include "util/error.h"

og_status og_search_new(og_search **out, const og_ir_query *ir, const og_exec_source *src, const og_vector *params,
                        int64_t now_ms)
{
    *out = NULL;
    og_search *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
    s->ranks = calloc(ir->nranks ? ir->nranks : 1, sizeof *s->ranks);
    if (!s->ranks) {
        free(s);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    s->ir = ir;
    s->src = src;
    s->params = params;
    s->now_ms = now_ms;
    *out = s;
    return OG_OK;
}


static void tcol_clear(tcol *c)
{
    for (size_t i = 0; i < c->nsegs; i++) {
        og_fts_free(c->segs[i].fts);
        free(c->segs[i].rows);
        og_cache_entry_release(c->segs[i].hold);
    }
    free(c->segs);
    c->segs = NULL;
    c->nsegs = 0;
    og_index_frags_free(&c->frags);
    free(c->frag_seg);
    c->frag_seg = NULL;
    c->mem_seg = -1;
    c->ndocs = 0;
    c->avgdl = 0;
    c->files = 0;
}

void og_search_free(og_search *s)
{
    if (!s) return;
    for (tcol *c = s->cols, *nx; c; c = nx) {
        nx = c->next;
        tcol_clear(c);
        free(c);
    }
    for (tmatch *m = s->matches, *nx; m; m = nx) {
        nx = m->next;
        free(m->bits);
        free(m);
    }
    for (size_t r = 0; r < s->ir->nranks; r++) {
        free(s->ranks[r].fused);
        free(s->ranks[r].q);
        free(s->ranks[r].dist);
        free(s->ranks[r].have);
        free(s->ranks[r].vnull);
        og_srch_bm25_reset(&s->ranks[r]);
    }
    free(s->ranks);
    og_text_tokens_free(&s->toks);
    og_analyzer_free(s->an);
    free(s);
}

static og_status analyzer(og_search *s)
{
    if (!s->an) OG_TRY(og_analyzer_new(&s->an, NULL));
    return OG_OK;
}

/* ---- text columns as segments ---------------------------------------------------------------- */

static void set_bit(uint8_t *bits, uint32_t r) { bits[r >> 3] |= (uint8_t)(1u << (r & 7)); }

uint32_t og_srch_seg_row(const seg *g, uint32_t doc)
{
    if (g->hold) return (uint32_t)(g->fr->view_start + doc);
    return g->fr ? og_index_frag_row(g->fr, doc) : g->rows[doc];
}

typedef struct memdocs {
    const og_vector *col;
    const uint32_t *rows;
} memdocs;

static int mem_doc(void *ud, size_t i, const char **p, size_t *len)
{
    const memdocs *m = ud;
    uint32_t r = m->rows[i];
    if (og_vector_is_null(m->col, r)) return 0;
    *p = (const char *)og_vector_get_bytes(m->col, r, len);
    return 1;
}

static og_status add_seg(tcol *c, seg g)
{
    seg *n = realloc(c->segs, (c->nsegs + 1) * sizeof *n);
    if (!n) return og_err(OG_ERR_NOMEM, "out of memory");
    c->segs = n;
    c->segs[c->nsegs++] = g;
    return OG_OK;
}

/* ---- the per-process cache of analysed fragments ---- */

typedef struct textblob {
    uint8_t *p;
    size_t len;
} textblob;

static og_cache *g_text_cache;
static pthread_once_t g_text_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t g_text_hits;

uint64_t og_search_text_cache_hits(void) { return g_text_hits; }

static void text_cache_init(void)
{
    size_t mb = 256;
    const char *e = getenv("OG_TEXT_CACHE_MB");
    if (e && *e) mb = (size_t)strtoull(e, NULL, 10);
    if (mb && og_cache_new(&g_text_cache, mb << 20) != OG_OK) g_text_cache = NULL;
    og_error_clear();
}

static void textblob_free(void *v)
{
    textblob *b = v;
    if (b) free(b->p);
    free(b);
}

/* The segment of fragment fr's live rows from the cache, analysing and caching them on a
 * miss; *done = 0 (nothing added) when the cache is off or fr has no identity. */
static og_status cached_seg(og_search *s, tcol *c, const og_index_frag *fr, uint64_t *total, int *done)
{
    *done = 0;
    pthread_once(&g_text_once, text_cache_init);
    if (!g_text_cache || !fr->ident || fr->live_rows >= UINT32_MAX) return OG_OK;
    size_t kl = strlen(fr->ident) + 3;
    char *key = malloc(kl);
    if (!key) return og_err(OG_ERR_NOMEM, "out of memory");
    snprintf(key, kl, "t:%s", fr->ident);
    og_cache_entry *e = og_cache_get(g_text_cache, key);
    og_status st = OG_OK;
    if (e) g_text_hits++;
    if (!e) {
        const og_vector *col = NULL;
        uint32_t *rows = malloc((fr->live_rows ? fr->live_rows : 1) * sizeof *rows);
        og_buf b = OG_BUF_INIT;
        if (!rows) st = og_err(OG_ERR_NOMEM, "out of memory");
        if (st == OG_OK) st = s->src->node_column(s->src->ud, c->type, c->prop_id, &col);
        if (st == OG_OK && (col->type.id != OG_T_STRING || col->len != c->n))
            st = og_err(OG_ERR_INTERNAL, "a text search on a column that is not a String");
        if (st == OG_OK) {
            for (size_t k = 0; k < fr->live_rows; k++) rows[k] = (uint32_t)(fr->view_start + k);
            memdocs md = {col, rows};
            st = og_fts_encode(s->an, fr->live_rows, mem_doc, &md, &b);
        }
        free(rows);
        textblob *tb = st == OG_OK ? malloc(sizeof *tb) : NULL;
        if (st == OG_OK && !tb) st = og_err(OG_ERR_NOMEM, "out of memory");
        if (st == OG_OK) {
            tb->p = b.data, tb->len = b.len;
            b.data = NULL;
            st = og_cache_put(g_text_cache, key, tb, tb->len + sizeof *tb, textblob_free, &e);
        }
        og_buf_free(&b);
    }
    free(key);
    if (st) return st;
    const textblob *tb = og_cache_entry_value(e);
    og_fts *f = NULL;
    st = og_fts_open_bytes(&f, tb->p, tb->len, NULL, NULL);
    if (st == OG_OK && og_fts_rows(f) != fr->live_rows)
        st = og_err(OG_ERR_INTERNAL, "a cached text segment does not match its fragment");
    if (st == OG_OK) st = add_seg(c, (seg){f, fr, NULL, e});
    if (st) {
        og_fts_free(f);
        og_cache_entry_release(e);
        return st;
    }
    c->ndocs += og_fts_nonnull(f);
    *total += og_fts_total_len(f);
    *done = 1;
    return OG_OK;
}

/* Reads the column: persisted segments where `use_files` and a whole file exists, one memory
 * segment for the other rows; then N and avgdl over the live rows.  With no deletions a
 * segment's counts come from its header, so opening a covered column costs no pass over the
 * rows. */
static og_status build_tcol(og_search *s, tcol *c, int use_files)
{
    OG_TRY(analyzer(s));
    OG_TRY(s->src->node_rows(s->src->ud, c->type, &c->n));
    if (c->n >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "a text search over more than 2^32 rows");
    uint64_t total = 0;
    if (use_files && s->src->node_index)
        OG_TRY(s->src->node_index(s->src->ud, c->type, c->prop_id, og_index_def_fts.name, &c->frags));
    c->frag_seg = malloc((c->frags.n ? c->frags.n : 1) * sizeof *c->frag_seg);
    if (!c->frag_seg) return og_err(OG_ERR_NOMEM, "out of memory");
    c->mem_seg = -1;
    og_status st = OG_OK;
    size_t nmem = c->frags.n ? 0 : c->n; /* rows analysed here */
    for (size_t i = 0; i < c->frags.n && st == OG_OK; i++) {
        og_index_frag *fr = &c->frags.v[i];
        c->frag_seg[i] = -1;
        int whole = fr->no_data; /* all null: nothing to analyse */
        if (!whole && fr->file) {
            og_fts *f = NULL;
            if (og_fts_open_bytes(&f, og_mapping_data(fr->file), og_mapping_size(fr->file), NULL, NULL) == OG_OK &&
                og_fts_rows(f) == fr->physical_rows) {
                st = add_seg(c, (seg){f, fr, NULL, NULL});
                if (st) og_fts_free(f);
                whole = st == OG_OK;
                if (whole) c->frag_seg[i] = (int)c->nsegs - 1;
                c->files = 1;
                if (whole && !fr->addrs) {
                    c->ndocs += og_fts_nonnull(f);
                    total += og_fts_total_len(f);
                }
                for (size_t k = 0; whole && fr->addrs && k < fr->live_rows; k++) {
                    uint32_t dl = og_fts_doc_len(f, (uint32_t)fr->addrs[k]);
                    if (dl != OG_FTS_NULL_LEN) c->ndocs++, total += dl;
                }
            } else {
                og_fts_free(f);
            }
            og_error_clear();
        }
        if (!whole && st == OG_OK && fr->live_rows) {
            st = cached_seg(s, c, fr, &total, &whole);
            if (whole) c->frag_seg[i] = (int)c->nsegs - 1;
        }
        if (!whole) nmem += fr->live_rows;
        else c->frag_seg[i] = fr->no_data ? -2 : c->frag_seg[i];
    }
    if (st == OG_OK && nmem) {
        uint32_t *rows = malloc(nmem * sizeof *rows);
        const og_vector *col = NULL;
        if (!rows) st = og_err(OG_ERR_NOMEM, "out of memory");
        if (st == OG_OK) st = s->src->node_column(s->src->ud, c->type, c->prop_id, &col);
        if (st == OG_OK && (col->type.id != OG_T_STRING || col->len != c->n))
            st = og_err(OG_ERR_INTERNAL, "a text search on a column that is not a String");
        og_buf b = OG_BUF_INIT;
        og_fts *f = NULL;
        if (st == OG_OK) {
            size_t m = 0;
            if (!c->frags.n)
                for (size_t r = 0; r < c->n; r++) rows[m++] = (uint32_t)r;
            for (size_t i = 0; i < c->frags.n; i++)
                if (c->frag_seg[i] == -1)
                    for (size_t k = 0; k < c->frags.v[i].live_rows; k++)
                        rows[m++] = (uint32_t)(c->frags.v[i].view_start + k);
            memdocs md = {col, rows};
            st = og_fts_encode(s->an, nmem, mem_doc, &md, &b);
        }
        if (st == OG_OK) st = og_fts_open_bytes(&f, b.data, b.len, b.data, NULL);
        if (st == OG_OK) {
            b.data = NULL; /* owned by f */
            c->ndocs += og_fts_nonnull(f);
            total += og_fts_total_len(f);
            st = add_seg(c, (seg){f, NULL, rows, NULL});
            if (st) og_fts_free(f);
            else rows = NULL, c->mem_seg = (int)c->nsegs - 1;
        }
        og_buf_free(&b);
        free(rows);
    }
    if (st) return st;
    c->avgdl = c->ndocs ? (double)total / (double)c->ndocs : 0;
    return OG_OK;
}

/* 1 when view row `row` holds a null text: found through its fragment's segment (the memory
 * segment's rows ascend: a binary search). */
int og_srch_row_null(const tcol *c, uint32_t row)
{
    size_t lo = 0, hi = c->frags.n;
    while (lo < hi) { /* the last fragment starting at or before row */
        size_t mid = lo + (hi - lo) / 2;
        if (c->frags.v[mid].view_start <= row) lo = mid + 1;
        else hi = mid;
    }
    /* fragments without live rows share a start: step back to the one holding row */
    while (lo > 0 && row >= c->frags.v[lo - 1].view_start + c->frags.v[lo - 1].live_rows) lo--;
    if (lo > 0) {
        const og_index_frag *fr = &c->frags.v[lo - 1];
        int g = c->frag_seg[lo - 1];
        if (g == -2) return 1;
        if (g >= 0 && row < fr->view_start + fr->live_rows) {
            size_t k = row - fr->view_start;
            uint32_t off = fr->addrs && !c->segs[g].hold ? (uint32_t)fr->addrs[k] : (uint32_t)k;
            return og_fts_doc_len(c->segs[g].fts, off) == OG_FTS_NULL_LEN;
        }
    }
    if (c->mem_seg < 0) return 1;
    const seg *m = &c->segs[c->mem_seg];
    size_t a = 0, b = (size_t)og_fts_rows(m->fts);
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (m->rows[mid] < row) a = mid + 1;
        else b = mid;
    }
    if (a >= og_fts_rows(m->fts) || m->rows[a] != row) return 1;
    return og_fts_doc_len(m->fts, a) == OG_FTS_NULL_LEN;
}

og_status og_srch_get_tcol(og_search *s, int var, uint64_t prop_id, tcol **out)
{
    size_t type = (size_t)s->ir->vars[var].type;
    for (tcol *c = s->cols; c; c = c->next)
        if (c->type == type && c->prop_id == prop_id) {
            *out = c;
            return OG_OK;
        }
    tcol *c = calloc(1, sizeof *c);
    if (!c) return og_err(OG_ERR_NOMEM, "out of memory");
    c->type = type;
    c->prop_id = prop_id;
    c->next = s->cols;
    s->cols = c; /* freed with the search even when the build fails */
    OG_TRY(build_tcol(s, c, 1));
    *out = c;
    return OG_OK;
}

/* A persisted segment turned out damaged: read every row from the column instead. */
og_status og_srch_tcol_fallback(og_search *s, tcol *c)
{
    tcol_clear(c);
    og_error_clear();
    return build_tcol(s, c, 0);
}

/* ---- postings ------------------------------------------------------------------------------- */

/* The postings of one dict entry of a segment, decoded (positions when asked). */
typedef struct plist {
    uint32_t *doc, *tf;
    uint32_t *pstart;  /* with positions: n + 1 offsets into pos */
    uint32_t *pos;
    size_t n, cap, npos, pcap;
} plist;

static void plist_free(plist *p)
{
    free(p->doc);
    free(p->tf);
    free(p->pstart);
    free(p->pos);
    memset(p, 0, sizeof *p);
}

static og_status plist_read(const og_fts *f, long entry, int want_pos, plist *out)
{
    memset(out, 0, sizeof *out);
    og_fts_iter it;
    og_fts_iter_init(&it, f, (size_t)entry, want_pos);
    og_status st = OG_OK;
    int r;
    while ((r = og_fts_iter_next(&it)) == 1) {
        if (out->n + 1 >= out->cap) {
            size_t nc = out->cap ? out->cap * 2 : 64;
            uint32_t *a = realloc(out->doc, nc * sizeof *a);
            if (a) out->doc = a;
            uint32_t *b = a ? realloc(out->tf, nc * sizeof *b) : NULL;
            if (b) out->tf = b;
            uint32_t *c = b && want_pos ? realloc(out->pstart, (nc + 1) * sizeof *c) : NULL;
            if (c) out->pstart = c;
            if (!b || (want_pos && !c)) {
                st = og_err(OG_ERR_NOMEM, "out of memory");
                break;
            }
            out->cap = nc;
        }
        out->doc[out->n] = it.doc;
        out->tf[out->n] = it.tf;
        if (want_pos) {
            if (out->npos + it.tf > out->pcap) {
                size_t nc = out->pcap ? out->pcap * 2 : 256;
                while (nc < out->npos + it.tf) nc *= 2;
                uint32_t *p = realloc(out->pos, nc * sizeof *p);
                if (!p) {
                    st = og_err(OG_ERR_NOMEM, "out of memory");
                    break;
                }
                out->pos = p;
                out->pcap = nc;
            }
            out->pstart[out->n] = (uint32_t)out->npos;
            memcpy(out->pos + out->npos, it.pos, it.tf * sizeof *it.pos);
            out->npos += it.tf;
        }
        out->n++;
    }
    if (st == OG_OK && r < 0) st = (og_status)-r;
    if (st == OG_OK && want_pos && out->pstart) out->pstart[out->n] = (uint32_t)out->npos;
    og_fts_iter_free(&it);
    if (st) plist_free(out);
    return st;
}

/* ---- query values ---------------------------------------------------------------------------- */

/* The query string of a text function: *null set for a null value. */
og_status og_srch_query_string(og_search *s, const og_ir_expr *e, og_vector *v, const char **q, size_t *len, int *null)
{
    OG_TRY(og_exec_const(s->ir, e, s->params, s->now_ms, v));
    *null = v->len == 0 || og_vector_is_null(v, 0);
    if (*null) return OG_OK;
    if (v->type.id != OG_T_STRING) return og_err(OG_ERR_INTERNAL, "a text query that is not a String");
    *q = (const char *)og_vector_get_bytes(v, 0, len);
    return OG_OK;
}

og_status og_srch_const_int(og_search *s, const og_ir_expr *e, const char *what, int64_t *out)
{
    og_vector v;
    OG_TRY(og_exec_const(s->ir, e, s->params, s->now_ms, &v));
    og_status st = OG_OK;
    if (v.len == 0 || og_vector_is_null(&v, 0))
        st = og_err(OG_ERR_INVALID, "%s is null", what);
    else if (v.type.id != OG_T_I64 && v.type.id != OG_T_I32)
        st = og_err(OG_ERR_INVALID, "%s must be an integer", what);
    else
        *out = og_vector_get_i64(&v, 0);
    og_vector_free(&v);
    return st;
}

/* Analyzes a query; the tokens are left in s->toks. */
og_status og_srch_analyze_query(og_search *s, const char *q, size_t len)
{
    OG_TRY(analyzer(s));
    return og_analyze(s->an, q, len, &s->toks);
}


/* Distinct non-stop query tokens of s->toks, as indexes into it. */
og_status og_srch_query_terms(og_search *s, size_t **idx, size_t *n)
{
    *idx = malloc((s->toks.n ? s->toks.n : 1) * sizeof **idx);
    if (!*idx) return og_err(OG_ERR_NOMEM, "out of memory");
    *n = 0;
    for (size_t k = 0; k < s->toks.n; k++) {
        if (s->toks.v[k].stop) continue;
        int dup = 0;
        for (size_t j = 0; j < *n && !dup; j++) {
            size_t o = (*idx)[j];
            dup = s->toks.v[o].len == s->toks.v[k].len &&
                  !memcmp(og_text_term(&s->toks, o), og_text_term(&s->toks, k), s->toks.v[k].len);
        }
        if (!dup) (*idx)[(*n)++] = k;
    }
    return OG_OK;
}

long og_srch_find_tok(const og_search *s, const og_fts *f, size_t k, int stop)
{
    return og_fts_find(f, og_text_term(&s->toks, k), s->toks.v[k].len, stop);
}

/* ---- text matches ------------------------------------------------------------------------------ */

/* search: rows holding every query term (as a non-stop term). */
static og_status match_all_terms(og_search *s, const tcol *c, const size_t *q, size_t nq, uint8_t *bits)
{
    if (!nq) return OG_OK;
    long *e = malloc(nq * sizeof *e);
    if (!e) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = OG_OK;
    for (size_t g = 0; g < c->nsegs && st == OG_OK; g++) {
        const seg *sg = &c->segs[g];
        size_t j0 = 0;
        uint32_t best = UINT32_MAX;
        int absent = 0;
        for (size_t j = 0; j < nq && !absent; j++) {
            e[j] = og_srch_find_tok(s, sg->fts, q[j], 0);
            if (e[j] < 0) {
                absent = 1;
                break;
            }
            const char *t;
            size_t tl;
            int stop;
            uint32_t df;
            og_fts_term(sg->fts, (size_t)e[j], &t, &tl, &stop, &df);
            if (df < best) best = df, j0 = j;
        }
        if (absent) continue;
        plist cand;
        st = plist_read(sg->fts, e[j0], 0, &cand);
        for (size_t j = 0; j < nq && st == OG_OK && cand.n; j++) {
            if (j == j0) continue;
            og_fts_iter it;
            og_fts_iter_init(&it, sg->fts, (size_t)e[j], 0);
            size_t k = 0, m = 0;
            int rr = 0;
            while (k < cand.n && (rr = og_fts_iter_next(&it)) == 1) {
                while (k < cand.n && cand.doc[k] < it.doc) k++;
                if (k < cand.n && cand.doc[k] == it.doc) cand.doc[m++] = cand.doc[k++];
            }
            if (rr < 0) st = (og_status)-rr;
            cand.n = m;
            og_fts_iter_free(&it);
        }
        for (size_t k = 0; k < cand.n && st == OG_OK; k++) {
            uint32_t r = og_srch_seg_row(sg, cand.doc[k]);
            if (r != NO_ROW) set_bit(bits, r);
        }
        plist_free(&cand);
    }
    free(e);
    return st;
}

/* fuzzy: every query term within k edits of some non-stop term of the row. */
static og_status match_fuzzy(og_search *s, const tcol *c, int64_t k, uint8_t *bits)
{
    size_t nq = 0;
    for (size_t t = 0; t < s->toks.n; t++) nq += !s->toks.v[t].stop;
    if (!nq) return OG_OK;
    if (nq > 64) return og_err(OG_ERR_LIMIT, "fuzzy accepts at most 64 query terms, got %zu", nq);
    uint32_t maxk = k > OG_TEXT_MAX_WORD ? OG_TEXT_MAX_WORD : (uint32_t)k;
    uint64_t want = nq == 64 ? ~0ull : (1ull << nq) - 1;
    og_status st = OG_OK;
    for (size_t g = 0; g < c->nsegs && st == OG_OK; g++) {
        const seg *sg = &c->segs[g];
        size_t nv = og_fts_terms(sg->fts), rows = (size_t)og_fts_rows(sg->fts);
        if (!nv || !rows) continue;
        uint64_t *mask = calloc(rows, sizeof *mask);
        if (!mask) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t v = 0; v < nv && st == OG_OK; v++) {
            const char *term;
            size_t tl;
            int stop;
            og_fts_term(sg->fts, v, &term, &tl, &stop, NULL);
            if (stop) continue;
            uint64_t near = 0;
            size_t j = 0;
            for (size_t t = 0; t < s->toks.n; t++) {
                if (s->toks.v[t].stop) continue;
                if (og_text_edit_distance(og_text_term(&s->toks, t), s->toks.v[t].len, term, tl, maxk) <= maxk)
                    near |= 1ull << j;
                j++;
            }
            if (!near) continue;
            og_fts_iter it;
            og_fts_iter_init(&it, sg->fts, v, 0);
            int rr;
            while ((rr = og_fts_iter_next(&it)) == 1) mask[it.doc] |= near;
            if (rr < 0) st = (og_status)-rr;
            og_fts_iter_free(&it);
        }
        for (size_t d = 0; d < rows && st == OG_OK; d++) {
            if ((mask[d] & want) != want) continue;
            uint32_t r = og_srch_seg_row(sg, (uint32_t)d);
            if (r != NO_ROW) set_bit(bits, r);
        }
        free(mask);
    }
    return st;
}

/* Index of doc d in p->doc (ascending), or -1. */
static long plist_find(const plist *p, uint32_t d)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->doc[mid] < d) lo = mid + 1;
        else hi = mid;
    }
    return lo < p->n && p->doc[lo] == d ? (long)lo : -1;
}

static int has_pos(const plist *p, long i, uint32_t want)
{
    size_t lo = p->pstart[i], hi = p->pstart[i + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->pos[mid] < want) lo = mid + 1;
        else hi = mid;
    }
    return lo < p->pstart[i + 1] && p->pos[lo] == want;
}

/* Phrase: every query token (stop words included) at its relative position. */
static og_status match_phrase(og_search *s, const tcol *c, uint8_t *bits)
{
    size_t nq = s->toks.n;
    if (!nq) return OG_OK;
    plist *pl = calloc(nq, sizeof *pl);
    long *at = malloc(nq * sizeof *at);
    if (!pl || !at) {
        free(pl);
        free(at);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    og_status st = OG_OK;
    for (size_t g = 0; g < c->nsegs && st == OG_OK; g++) {
        const seg *sg = &c->segs[g];
        int absent = 0;
        for (size_t k = 0; k < nq && !absent; k++) absent = og_srch_find_tok(s, sg->fts, k, s->toks.v[k].stop) < 0;
        if (absent) continue;
        for (size_t k = 0; k < nq && st == OG_OK; k++)
            st = plist_read(sg->fts, og_srch_find_tok(s, sg->fts, k, s->toks.v[k].stop), 1, &pl[k]);
        for (size_t i = 0; i < pl[0].n && st == OG_OK && pl[0].pstart; i++) {
            uint32_t d = pl[0].doc[i];
            int ok = 1;
            at[0] = (long)i;
            for (size_t k = 1; k < nq && ok; k++) ok = (at[k] = plist_find(&pl[k], d)) >= 0;
            int found = 0;
            for (uint32_t p = pl[0].pstart[i]; ok && p < pl[0].pstart[i + 1] && !found; p++) {
                uint32_t p0 = pl[0].pos[p];
                found = 1;
                for (size_t k = 1; k < nq && found; k++)
                    found = has_pos(&pl[k], at[k], p0 + (s->toks.v[k].pos - s->toks.v[0].pos));
            }
            if (!found) continue;
            uint32_t r = og_srch_seg_row(sg, d);
            if (r != NO_ROW) set_bit(bits, r);
        }
        for (size_t k = 0; k < nq; k++) plist_free(&pl[k]);
    }
    free(pl);
    free(at);
    return st;
}

static og_status compute_match(og_search *s, const tcol *c, const og_ir_text *t, int64_t k, uint8_t *bits)
{
    if (t->mode == OG_IR_TEXT_FUZZY) return match_fuzzy(s, c, k, bits);
    if (t->mode == OG_IR_TEXT_MATCH) return match_phrase(s, c, bits);
    size_t *q, nq;
    OG_TRY(og_srch_query_terms(s, &q, &nq));
    og_status st = match_all_terms(s, c, q, nq, bits);
    free(q);
    return st;
}

static og_status get_match(og_search *s, const og_ir_text *t, const tcol **colp, const uint8_t **out)
{
    tcol *c;
    OG_TRY(og_srch_get_tcol(s, t->var, t->prop_id, &c));
    *colp = c;
    for (tmatch *m = s->matches; m; m = m->next)
        if (m->t == t) {
            *out = m->bits;
            return OG_OK;
        }
    tmatch *m = calloc(1, sizeof *m);
    if (!m) return og_err(OG_ERR_NOMEM, "out of memory");
    m->t = t;
    m->next = s->matches;
    s->matches = m;
    m->bits = calloc((c->n + 7) / 8 + 1, 1);
    if (!m->bits) return og_err(OG_ERR_NOMEM, "out of memory");
    og_vector qv;
    const char *q = NULL;
    size_t qlen = 0;
    int null = 0;
    OG_TRY(og_srch_query_string(s, t->query, &qv, &q, &qlen, &null));
    og_status st = OG_OK;
    int64_t k = 2;
    if (t->mode == OG_IR_TEXT_FUZZY && t->max_edits) {
        st = og_srch_const_int(s, t->max_edits, "fuzzy max edits", &k);
        if (st == OG_OK && k < 0) st = og_err(OG_ERR_INVALID, "fuzzy max edits must be >= 0, got %lld", (long long)k);
    }
    if (st == OG_OK && !null) st = og_srch_analyze_query(s, q, qlen);
    og_vector_free(&qv);
    if (st || null) return st;
    st = compute_match(s, c, t, k, m->bits);
    if (st == OG_ERR_CORRUPT && c->files) { /* a damaged index file: answer from the rows */
        memset(m->bits, 0, (c->n + 7) / 8 + 1);
        st = og_srch_tcol_fallback(s, c);
        if (st == OG_OK) st = compute_match(s, c, t, k, m->bits);
    }
    if (st == OG_OK) *out = m->bits;
    return st;
}

og_status og_search_text_filter(og_search *s, const og_ir_text *t, const uint32_t *rows, size_t n, uint8_t *sel)
{
    const tcol *c;
    const uint8_t *bits;
    OG_TRY(get_match(s, t, &c, &bits));
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rows[i];
        if (r == OG_ROW_NONE || r >= c->n || !og_bit_get(bits, r)) sel[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
    return OG_OK;
}

og_status og_search_text_eval(og_search *s, const og_ir_text *t, const uint32_t *rows, size_t n, og_vector *out)
{
    const tcol *c;
    const uint8_t *bits;
    OG_TRY(get_match(s, t, &c, &bits));
    OG_TRY(og_vector_init(out, (og_type){OG_T_BOOL, 0, 0}));
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        uint32_t r = rows[i];
        st = og_vector_append_bool(out, r != OG_ROW_NONE && r < c->n && og_bit_get(bits, r));
    }
    if (st) og_vector_free(out);
    return st;
}
