/*
 * search.c — the search functions over the snapshot's live rows (search.h).
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
#define _GNU_SOURCE /* qsort_r */
#include "engine/search.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/search_ann.h"
#include "engine/topology.h"
#include "index/fts.h"
#include "index/index.h"
#include "text/analyzer.h"
#include "util/cache.h"
#include "util/error.h"
#include "vec/distance.h"

#define NO_ROW UINT32_MAX

/* One inverted-index segment: a persisted file of one fragment (docs = physical rows), the
 * cached in-memory index of one fragment's live rows (docs = its live rows in order), or the
 * in-memory index of the rows neither covers (docs = positions in `rows`). */
typedef struct seg {
    og_fts *fts;
    const og_index_frag *fr; /* file or cached segment */
    uint32_t *rows;          /* memory segment: doc -> view row */
    og_cache_entry *hold;    /* cached segment: the entry holding its bytes */
} seg;

typedef struct tcol {
    size_t type;
    uint64_t prop_id;
    size_t n;              /* view rows */
    og_index_frags frags;
    seg *segs;
    size_t nsegs;
    int files;             /* some segment is a persisted file */
    int *frag_seg;         /* per fragment: its segment, -1 = the memory segment, -2 = no data */
    int mem_seg;           /* the memory segment, -1 = none */
    uint64_t ndocs;        /* rows with a non-null value */
    double avgdl;
    struct tcol *next;
} tcol;

typedef struct tmatch {
    const og_ir_text *t;
    uint8_t *bits;         /* over the column's rows */
    struct tmatch *next;
} tmatch;

/* One entity an rrf ordering keeps: its fused position and score. */
typedef struct fused {
    uint32_t row;
    uint32_t pos;
    double score;
} fused;

typedef struct rstate {
    int ready;             /* rrf: fused */
    size_t n;              /* rows of the ranked variable's type */
    fused *fused;          /* rrf: the kept entities, sorted by row */
    size_t nfused;
    /* bm25: the rows sharing a query term (ascending) and their scores (found by binary
     * search); every other row scores 0, or null where its text is null.  `partial`: only the
     * rows a top-k ordering can keep (og_search_candidates_top), not yet `ready`. */
    const tcol *tc;
    uint32_t *mrows;
    double *mscore;
    size_t nm;
    int partial;
    int planned;           /* bq, bent, bidf hold the plan (bm25_plan) */
    size_t bq;
    long *bent;
    double *bidf;
    /* nearest */
    const og_vector *vecs; /* the whole column, or NULL while the rank is sparse: only the rows
                            * filled so far were read (by point gathers), see rank_ready_sparse */
    uint8_t *vnull;        /* sparse: the filled rows without a vector */
    const og_exec_source *src;
    size_t type;
    uint64_t prop;
    float *q;
    uint32_t dim;
    float *dist;
    uint8_t *have;         /* dist computed */
    int kind_nearest;      /* a nearest rank, ready */
    int bound;             /* the scan bound only index candidates (og_search_nearest_candidates),
                            * or rrf: only the fused entities (og_search_rrf_candidates) */
} rstate;

struct og_search {
    const og_ir_query *ir;
    const og_exec_source *src;
    const og_vector *params;
    int64_t now_ms;
    og_analyzer *an;
    og_text_tokens toks;
    tcol *cols;
    tmatch *matches;
    rstate *ranks;
};

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

static void bm25_reset(rstate *rs);

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
        bm25_reset(&s->ranks[r]);
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

static uint32_t seg_row(const seg *g, uint32_t doc)
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
static int row_null(const tcol *c, uint32_t row)
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

static og_status get_tcol(og_search *s, int var, uint64_t prop_id, tcol **out)
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
static og_status tcol_fallback(og_search *s, tcol *c)
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
static og_status query_string(og_search *s, const og_ir_expr *e, og_vector *v, const char **q, size_t *len, int *null)
{
    OG_TRY(og_exec_const(s->ir, e, s->params, s->now_ms, v));
    *null = v->len == 0 || og_vector_is_null(v, 0);
    if (*null) return OG_OK;
    if (v->type.id != OG_T_STRING) return og_err(OG_ERR_INTERNAL, "a text query that is not a String");
    *q = (const char *)og_vector_get_bytes(v, 0, len);
    return OG_OK;
}

static og_status const_int(og_search *s, const og_ir_expr *e, const char *what, int64_t *out)
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
static og_status analyze_query(og_search *s, const char *q, size_t len)
{
    OG_TRY(analyzer(s));
    return og_analyze(s->an, q, len, &s->toks);
}


/* Distinct non-stop query tokens of s->toks, as indexes into it. */
static og_status query_terms(og_search *s, size_t **idx, size_t *n)
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

static long find_tok(const og_search *s, const og_fts *f, size_t k, int stop)
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
            e[j] = find_tok(s, sg->fts, q[j], 0);
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
            uint32_t r = seg_row(sg, cand.doc[k]);
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
            uint32_t r = seg_row(sg, (uint32_t)d);
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
        for (size_t k = 0; k < nq && !absent; k++) absent = find_tok(s, sg->fts, k, s->toks.v[k].stop) < 0;
        if (absent) continue;
        for (size_t k = 0; k < nq && st == OG_OK; k++)
            st = plist_read(sg->fts, find_tok(s, sg->fts, k, s->toks.v[k].stop), 1, &pl[k]);
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
            uint32_t r = seg_row(sg, d);
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
    OG_TRY(query_terms(s, &q, &nq));
    og_status st = match_all_terms(s, c, q, nq, bits);
    free(q);
    return st;
}

static og_status get_match(og_search *s, const og_ir_text *t, const tcol **colp, const uint8_t **out)
{
    tcol *c;
    OG_TRY(get_tcol(s, t->var, t->prop_id, &c));
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
    OG_TRY(query_string(s, t->query, &qv, &q, &qlen, &null));
    og_status st = OG_OK;
    int64_t k = 2;
    if (t->mode == OG_IR_TEXT_FUZZY && t->max_edits) {
        st = const_int(s, t->max_edits, "fuzzy max edits", &k);
        if (st == OG_OK && k < 0) st = og_err(OG_ERR_INVALID, "fuzzy max edits must be >= 0, got %lld", (long long)k);
    }
    if (st == OG_OK && !null) st = analyze_query(s, q, qlen);
    og_vector_free(&qv);
    if (st || null) return st;
    st = compute_match(s, c, t, k, m->bits);
    if (st == OG_ERR_CORRUPT && c->files) { /* a damaged index file: answer from the rows */
        memset(m->bits, 0, (c->n + 7) / 8 + 1);
        st = tcol_fallback(s, c);
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

/* ---- scores ------------------------------------------------------------------------------------ */

/* ---- bm25 ------------------------------------------------------------------------------------ */

/* Why streaming: a common query term (a word in most documents) has a posting per row, and a
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

/* The plan of a bm25 rank: the distinct non-stop query terms' dict entries per segment
 * (rs->bent[g * nq + j], -1 = absent) and their idf over the live rows (df counted through
 * the deletion vectors where a segment has some, else read from the dict). */
static og_status bm25_plan(og_search *s, int rank, rstate *rs)
{
    const og_ir_rank *r = &s->ir->ranks[rank];
    tcol *c;
    OG_TRY(get_tcol(s, r->var, r->prop_id, &c));
    rs->n = c->n;
    rs->tc = c;
    og_vector qv;
    const char *q = NULL;
    size_t qlen = 0;
    int null = 0;
    OG_TRY(query_string(s, r->query, &qv, &q, &qlen, &null));
    og_status st = null ? OG_OK : analyze_query(s, q, qlen);
    og_vector_free(&qv);
    if (st) return st;
    size_t *ids = NULL, nq = 0;
    if (!null) OG_TRY(query_terms(s, &ids, &nq));
    rs->bq = nq;
    rs->bent = malloc((c->nsegs && nq ? c->nsegs * nq : 1) * sizeof *rs->bent);
    rs->bidf = calloc(nq ? nq : 1, sizeof *rs->bidf);
    if (!rs->bent || !rs->bidf) st = og_err(OG_ERR_NOMEM, "out of memory");
    double N = (double)c->ndocs;
    for (size_t j = 0; j < nq && st == OG_OK; j++) {
        uint64_t df = 0;
        for (size_t g = 0; g < c->nsegs && st == OG_OK; g++) {
            const seg *sg = &c->segs[g];
            long e = find_tok(s, sg->fts, ids[j], 0);
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
            while ((rr = og_fts_iter_next(&it)) == 1) df += seg_row(sg, it.doc) != NO_ROW;
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
            uint32_t row = seg_row(sg, d);
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
            uint32_t row = seg_row(sg, d);
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
static void bm25_reset(rstate *rs)
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
static og_status bm25_run(og_search *s, int rank, rstate *rs, uint64_t k)
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
        bm25_reset(rs);
        st = get_tcol(s, s->ir->ranks[rank].var, s->ir->ranks[rank].prop_id, &c);
        if (st == OG_OK) st = tcol_fallback(s, c);
        if (st) return st;
    }
}

/* Row r's score when rs's matched rows hold it (binary search), or NULL. */
static const double *bm25_find(const rstate *rs, uint32_t r)
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
static og_status nearest_query(og_search *s, const og_ir_rank *r, rstate *rs)
{
    const og_ir_expr *e = r->query;
    uint32_t dim = rs->dim;
    rs->q = malloc((dim ? dim : 1) * sizeof *rs->q);
    if (!rs->q) return og_err(OG_ERR_NOMEM, "out of memory");
    if (e->kind == OG_IRX_LIT && e->lit.kind == OG_QLIT_LIST) {
        if (e->lit.nitems != dim)
            return og_err(OG_ERR_INVALID, "nearest: the query has %zu numbers, the property is Vector(%u)",
                          e->lit.nitems, dim);
        for (size_t i = 0; i < dim; i++) {
            const og_qlit *it = &e->lit.items[i];
            rs->q[i] = it->kind == OG_QLIT_INT ? (float)it->i : (float)it->f;
        }
        return OG_OK;
    }
    og_vector v;
    OG_TRY(og_exec_const(s->ir, e, s->params, s->now_ms, &v));
    og_status st = OG_OK;
    if (v.len == 0 || og_vector_is_null(&v, 0)) {
        st = og_err(OG_ERR_INVALID, "nearest: the query vector is null");
    } else if (v.type.id == OG_T_STRING) {
        size_t len;
        const char *text = (const char *)og_vector_get_bytes(&v, 0, &len);
        if (!s->src->embed_text)
            st = og_err(OG_ERR_UNSUPPORTED, "nearest with a String query needs an embedding provider, and this "
                                            "build has none; pass a Vector(%u) instead", dim);
        else {
            size_t type = (size_t)s->ir->vars[r->var].type;
            const og_cat_prop *p = og_cat_type_prop_by_id(&s->ir->cat->nodes[type], r->prop_id, NULL);
            st = s->src->embed_text(s->src->ud, p ? p->embed_model : NULL, text, len, dim, rs->q);
        }
    } else if (v.type.id == OG_T_VECTOR) {
        if (v.type.dim != dim)
            st = og_err(OG_ERR_INVALID, "nearest: the query is Vector(%u), the property is Vector(%u)", v.type.dim, dim);
        else
            memcpy(rs->q, og_vector_get_floats(&v, 0), dim * sizeof *rs->q);
    } else if (v.type.id == OG_T_LIST) {
        size_t b, en;
        og_vector_get_list(&v, 0, &b, &en);
        if (en - b != dim)
            st = og_err(OG_ERR_INVALID, "nearest: the query has %zu numbers, the property is Vector(%u)", en - b, dim);
        for (size_t i = 0; i < dim && st == OG_OK; i++) {
            const og_vector *ch = v.child;
            if (og_vector_is_null(ch, b + i)) st = og_err(OG_ERR_INVALID, "nearest: the query vector holds a null");
            else if (ch->type.id == OG_T_F64 || ch->type.id == OG_T_F32) rs->q[i] = (float)og_vector_get_f64(ch, b + i);
            else rs->q[i] = (float)og_vector_get_i64(ch, b + i);
        }
    } else {
        st = og_err(OG_ERR_INTERNAL, "nearest: an unexpected query type");
    }
    og_vector_free(&v);
    if (st == OG_OK)
        for (uint32_t i = 0; i < dim; i++)
            if (!isfinite(rs->q[i])) st = og_err(OG_ERR_INVALID, "nearest: the query vector holds a non-finite number");
    return st;
}

/* A sparse nearest rank gets its whole column (the distances filled so far stay valid). */
static og_status rank_dense(rstate *rs)
{
    const og_vector *v;
    OG_TRY(rs->src->node_column(rs->src->ud, rs->type, rs->prop, &v));
    if (v->type.id != OG_T_VECTOR || v->type.dim != rs->dim || v->len != rs->n)
        return og_err(OG_ERR_INTERNAL, "nearest: the column disagrees with its rows");
    rs->vecs = v;
    return OG_OK;
}

/* 1 when row r (filled, when the rank is sparse) has no vector. */
static int vec_null(const rstate *rs, uint32_t r) { return rs->vecs ? og_vector_is_null(rs->vecs, r) : og_bit_get(rs->vnull, r); }

static og_status rank_ready(og_search *s, int rank)
{
    rstate *rs = &s->ranks[rank];
    if (rs->ready && rs->kind_nearest && !rs->vecs) return rank_dense(rs);
    if (rs->ready) return OG_OK;
    const og_ir_rank *r = &s->ir->ranks[rank];
    if (r->kind == OG_IR_RANK_BM25) {
        OG_TRY(bm25_run(s, rank, rs, 0));
    } else if (r->kind == OG_IR_RANK_NEAREST) {
        size_t type = (size_t)s->ir->vars[r->var].type;
        OG_TRY(s->src->node_column(s->src->ud, type, r->prop_id, &rs->vecs));
        if (rs->vecs->type.id != OG_T_VECTOR) return og_err(OG_ERR_INTERNAL, "nearest on a column that is not a Vector");
        rs->dim = rs->vecs->type.dim;
        rs->n = rs->vecs->len;
        OG_TRY(nearest_query(s, r, rs));
        rs->dist = malloc((rs->n ? rs->n : 1) * sizeof *rs->dist);
        rs->have = calloc((rs->n + 7) / 8 + 1, 1);
        if (!rs->dist || !rs->have) return og_err(OG_ERR_NOMEM, "out of memory");
        rs->src = s->src;
        rs->type = type;
        rs->prop = r->prop_id;
        rs->kind_nearest = 1;
    } else {
        return og_err(OG_ERR_INTERNAL, "an rrf score is only known under its ordering");
    }
    rs->ready = 1;
    return OG_OK;
}

/* rank_ready for a nearest rank whose rows will come from a vector index: without reading
 * the column.  Why: the column of 1M x 128 floats is 512 MB, and a fresh process's first
 * indexed query only needs the vectors of its ~k candidates per data file, which
 * nearest_fill then reads by point gathers (og_exec_source.gather).  Anything needing more
 * rows makes the rank dense (rank_dense). */
static og_status rank_ready_sparse(og_search *s, int rank)
{
    rstate *rs = &s->ranks[rank];
    const og_ir_rank *r = &s->ir->ranks[rank];
    if (rs->ready || r->kind != OG_IR_RANK_NEAREST || !s->src->gather || !s->src->node_rows) return rank_ready(s, rank);
    size_t type = (size_t)s->ir->vars[r->var].type;
    const og_cat_prop *p = og_cat_type_prop_by_id(&s->ir->cat->nodes[type], r->prop_id, NULL);
    if (!p || p->type.id != OG_T_VECTOR || p->type.dim == 0) return rank_ready(s, rank);
    size_t n;
    OG_TRY(s->src->node_rows(s->src->ud, type, &n));
    rs->dim = p->type.dim;
    rs->n = n;
    OG_TRY(nearest_query(s, r, rs));
    rs->dist = malloc((rs->n ? rs->n : 1) * sizeof *rs->dist);
    rs->have = calloc((rs->n + 7) / 8 + 1, 1);
    rs->vnull = calloc((rs->n + 7) / 8 + 1, 1);
    if (!rs->dist || !rs->have || !rs->vnull) return og_err(OG_ERR_NOMEM, "out of memory");
    rs->src = s->src;
    rs->type = type;
    rs->prop = r->prop_id;
    rs->kind_nearest = 1;
    rs->vecs = NULL;
    rs->ready = 1;
    return OG_OK;
}

og_status og_search_candidates(og_search *s, int rank, const uint32_t **rows, size_t *n)
{
    if (s->ir->ranks[rank].kind != OG_IR_RANK_BM25)
        return og_err(OG_ERR_INTERNAL, "candidate rows of a rank that is not bm25");
    OG_TRY(rank_ready(s, rank));
    *rows = s->ranks[rank].mrows;
    *n = s->ranks[rank].nm;
    return OG_OK;
}

static double kth_smallest(double *v, size_t n, size_t k);

og_status og_search_candidates_top(og_search *s, int rank, uint64_t k, uint32_t **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (s->ir->ranks[rank].kind != OG_IR_RANK_BM25)
        return og_err(OG_ERR_INTERNAL, "candidate rows of a rank that is not bm25");
    rstate *rs = &s->ranks[rank];
    if (!rs->ready) OG_TRY(bm25_run(s, rank, rs, k)); /* only the rows reaching the k-th score */
    const uint32_t *all = rs->mrows;
    size_t m = rs->nm;
    double cut = -INFINITY;
    if (rs->ready && k > 0 && k < m) { /* the k-th highest score, by selection over the negated scores */
        double *neg = malloc(m * sizeof *neg);
        if (!neg) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < m; i++) neg[i] = -rs->mscore[i];
        cut = -kth_smallest(neg, m, (size_t)k - 1);
        free(neg);
    }
    uint32_t *out = malloc((m ? m : 1) * sizeof *out);
    if (!out) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t w = 0;
    for (size_t i = 0; i < m; i++)
        if (k == 0 || rs->mscore[i] >= cut) out[w++] = all[i];
    *rows = out;
    *n = w;
    return OG_OK;
}

/* Computes the distances of the given rows not computed yet. */
static og_status nearest_fill(rstate *rs, const uint32_t *rows, size_t n)
{
    uint32_t *todo = calloc(n ? n : 1, sizeof *todo);
    float *d = calloc(n ? n : 1, sizeof *d);
    if (!todo || !d) {
        free(todo);
        free(d);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rows[i];
        if (r == OG_ROW_NONE || r >= rs->n || og_bit_get(rs->have, r) || (rs->vecs && og_vector_is_null(rs->vecs, r))) continue;
        rs->have[r >> 3] |= (uint8_t)(1u << (r & 7)); /* a row repeated in `rows` is computed once */
        todo[m++] = r;
    }
    og_status st = OG_OK;
    if (!rs->vecs) { /* sparse: read just these rows' vectors */
        og_vector g;
        st = m == 0 ? OG_ERR_NOT_FOUND : rs->src->gather(rs->src->ud, 0, rs->type, rs->prop, todo, m, &g);
        if (st == OG_OK) {
            if (g.len != m || g.type.id != OG_T_VECTOR || g.type.dim != rs->dim)
                st = og_err(OG_ERR_INTERNAL, "nearest: a gather disagrees with the column");
            for (size_t k = 0; k < m && st == OG_OK; k++) {
                if (og_vector_is_null(&g, k)) rs->vnull[todo[k] >> 3] |= (uint8_t)(1u << (todo[k] & 7));
                else rs->dist[todo[k]] = og_vec_l2sq(rs->q, og_vector_get_floats(&g, k), rs->dim);
            }
            og_vector_free(&g);
        } else if (st == OG_ERR_NOT_FOUND && m == 0) {
            st = OG_OK; /* nothing to read */
        } else if (st == OG_ERR_UNSUPPORTED) { /* the column instead */
            og_error_clear();
            st = rank_dense(rs);
            for (size_t k = 0; k < m; k++) rs->have[todo[k] >> 3] &= (uint8_t)~(1u << (todo[k] & 7));
            if (st == OG_OK) {
                free(todo);
                free(d);
                return nearest_fill(rs, rows, n);
            }
        }
        if (st != OG_OK) /* these rows have no distance: never let them look computed */
            for (size_t k = 0; k < m; k++) rs->have[todo[k] >> 3] &= (uint8_t)~(1u << (todo[k] & 7));
        free(todo);
        free(d);
        return st;
    }
    og_vec_l2sq_rows(rs->q, (const float *)rs->vecs->values, rs->dim, todo, m, d);
    for (size_t k = 0; k < m; k++) rs->dist[todo[k]] = d[k];
    free(todo);
    free(d);
    return OG_OK;
}

static const fused *fused_of(const rstate *rs, uint32_t row);

/* The score of row r (NAN = none); nearest distances must have been filled for r. */
static double score_of(const rstate *rs, const og_ir_rank *r, uint32_t row)
{
    if (row == OG_ROW_NONE || row >= rs->n) return NAN;
    if (r->kind == OG_IR_RANK_NEAREST) return vec_null(rs, row) ? NAN : (double)rs->dist[row];
    if (r->kind == OG_IR_RANK_BM25) {
        const double *v = bm25_find(rs, row);
        if (v) return *v;
        return row_null(rs->tc, row) ? NAN : 0.0;
    }
    const fused *f = fused_of(rs, row);
    return f ? f->score : NAN;
}

/* 1 when rs holds the partial (top-k) scores and they cover every row of rows[0..n) (the rows
 * og_search_candidates_top bound); else 0, and the next rank_ready computes them all. */
static int bm25_partial_covers(rstate *rs, const uint32_t *rows, size_t n)
{
    if (!rs->partial || rs->ready) return 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i] != OG_ROW_NONE && rows[i] < rs->n && !bm25_find(rs, rows[i])) {
            rs->partial = 0;
            return 0;
        }
    return 1;
}

og_status og_search_score(og_search *s, int rank, const uint32_t *rows, size_t n, og_vector *out)
{
    const og_ir_rank *r = &s->ir->ranks[rank];
    rstate *rs = &s->ranks[rank];
    if (r->kind == OG_IR_RANK_RRF && !rs->ready)
        return og_err(OG_ERR_UNSUPPORTED, "an rrf(...) score is only available when rrf(...) orders the result");
    if (r->kind != OG_IR_RANK_RRF && !(rs->ready && rs->bound) && !bm25_partial_covers(rs, rows, n))
        OG_TRY(rank_ready(s, rank));
    if (r->kind == OG_IR_RANK_NEAREST) OG_TRY(nearest_fill(rs, rows, n));
    OG_TRY(og_vector_init(out, (og_type){OG_T_F64, 0, 0}));
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        double v = score_of(rs, r, rows[i]);
        st = isnan(v) ? og_vector_append_null(out) : og_vector_append_f64(out, v);
    }
    if (st) og_vector_free(out);
    return st;
}

/* ---- orderings --------------------------------------------------------------------------------- */

typedef struct ent {
    uint32_t row;
    double score;
    size_t r1, r2;   /* rrf: rank in each arm, SIZE_MAX when absent */
} ent;

/* A sort's context, passed to qsort_r: the ranked type's id column (the last tie-break) and
 * the arm's direction.  Nothing is shared between concurrent queries of one process. */
typedef struct ordctx {
    const og_vector *ids;
    int desc;
} ordctx;

static int id_cmp(const ordctx *cx, uint32_t a, uint32_t b)
{
    return og_vector_row_cmp(cx->ids, a, cx->ids, b);
}

/* Arm order: by score (ascending, or descending when cx->desc), then by entity id ascending. */
static int arm_cmp(const ent *a, const ent *b, const ordctx *cx)
{
    if (a->score != b->score) return (a->score < b->score) == !cx->desc ? -1 : 1;
    return id_cmp(cx, a->row, b->row);
}

static int ent_score_cmp(const void *pa, const void *pb, void *cx)
{
    return arm_cmp(pa, pb, cx);
}

/* Fused order: score descending, then the primary arm's rank, then the secondary arm's. */
static int ent_fused_cmp(const void *pa, const void *pb, void *cx)
{
    const ent *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->r1 != b->r1) return a->r1 < b->r1 ? -1 : 1;
    if (a->r2 != b->r2) return a->r2 < b->r2 ? -1 : 1;
    return id_cmp(cx, a->row, b->row);
}

static int ent_row_cmp(const void *pa, const void *pb)
{
    uint32_t x = ((const ent *)pa)->row, y = ((const ent *)pb)->row;
    return (x > y) - (x < y);
}

static int fused_row_cmp(const void *pa, const void *pb)
{
    uint32_t x = ((const fused *)pa)->row, y = ((const fused *)pb)->row;
    return (x > y) - (x < y);
}

static _Thread_local int t_rrf_full;

void og_search_set_rrf_full(int on) { t_rrf_full = on != 0; }

static og_status nearest_index(og_search *s, int rank, const uint32_t *col, size_t n, uint64_t limit, uint8_t **cand);

/* One arm of an rrf over a universe of entities: e[0..ntop) are its first entities in arm
 * order (ranks 0..ntop-1); e[ntop..m) every other entity it ranks, unordered (ranks ntop..,
 * known only by counting: see arm_tail_ranks).  Only a bm25 arm cut at a depth has such a
 * tail; a nearest arm ranks its first `limit` entities and no others. */
typedef struct armrank {
    ent *e;
    size_t ntop, m;
    ordctx cx;
} armrank;

/* Moves the first d entries of e[0..m) in arm order to e[0..d), sorted; returns min(d, m).
 * Selection (the d-th best score), then a sort of the entries at least as good as it. */
static og_status arm_select(ent *e, size_t m, size_t d, ordctx *cx, size_t *ntop)
{
    if (d >= m) {
        qsort_r(e, m, sizeof *e, ent_score_cmp, cx);
        *ntop = m;
        return OG_OK;
    }
    *ntop = d;
    if (d == 0) return OG_OK;
    double *key = malloc(m * sizeof *key);
    if (!key) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < m; i++) key[i] = cx->desc ? -e[i].score : e[i].score;
    double cut = kth_smallest(key, m, d - 1);
    free(key);
    size_t lt = 0, le;
    for (size_t i = 0; i < m; i++) {
        double k = cx->desc ? -e[i].score : e[i].score;
        if (k < cut) {
            ent t = e[i];
            e[i] = e[lt], e[lt++] = t;
        }
    }
    le = lt;
    for (size_t i = lt; i < m; i++) {
        double k = cx->desc ? -e[i].score : e[i].score;
        if (k == cut) {
            ent t = e[i];
            e[i] = e[le], e[le++] = t;
        }
    }
    qsort_r(e, le, sizeof *e, ent_score_cmp, cx); /* le >= d: ties at the cut break by id */
    return OG_OK;
}

/* The entities arm `arm` ranks among urows[0..nu) (ascending rows; NULL = every row of the
 * type), cut to its first `depth` (SIZE_MAX = none) in ar.  A nearest arm ranks the first
 * `limit` (0 = all) and no others, through the vector index when the universe holds every row
 * with a vector (nearest_index); a bm25 arm ranks every entity sharing a query term. */
static og_status arm_collect(og_search *s, int arm, const uint32_t *urows, size_t nu, uint64_t limit, size_t depth,
                             const og_vector *ids, armrank *ar)
{
    const og_ir_rank *r = &s->ir->ranks[arm];
    rstate *rs = &s->ranks[arm];
    memset(ar, 0, sizeof *ar);
    OG_TRY(rank_ready(s, arm));
    ar->cx = (ordctx){ids, r->kind != OG_IR_RANK_NEAREST};
    og_status st = OG_OK;
    size_t m = 0;
    if (r->kind == OG_IR_RANK_BM25) {
        size_t cap = urows ? nu : rs->nm;
        ar->e = malloc((cap ? cap : 1) * sizeof *ar->e);
        if (!ar->e) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < cap; i++) {
            uint32_t row = urows ? urows[i] : rs->mrows[i];
            double v = urows ? score_of(rs, r, row) : rs->mscore[i];
            if (v > 0) ar->e[m++] = (ent){row, v, 0, 0};
        }
        depth = depth < m ? depth : m;
    } else {
        /* the rows whose distance counts: the universe, or the index's candidates in it */
        uint8_t *cand = NULL;
        size_t cap = urows ? nu : rs->n;
        uint32_t *rows = malloc((cap ? cap : 1) * sizeof *rows);
        ar->e = malloc((cap ? cap : 1) * sizeof *ar->e);
        if (!rows || !ar->e) st = og_err(OG_ERR_NOMEM, "out of memory");
        if (st == OG_OK) st = nearest_index(s, arm, urows, urows ? nu : rs->n, limit, &cand);
        size_t nr = 0;
        for (size_t i = 0; i < cap && st == OG_OK; i++) {
            uint32_t row = urows ? urows[i] : (uint32_t)i;
            if (!cand || (row < rs->n && og_bit_get(cand, row))) rows[nr++] = row;
        }
        if (st == OG_OK) st = nearest_fill(rs, rows, nr);
        for (size_t i = 0; i < nr && st == OG_OK; i++) {
            double v = score_of(rs, r, rows[i]);
            if (!isnan(v)) ar->e[m++] = (ent){rows[i], v, 0, 0};
        }
        free(cand);
        free(rows);
        if (st) {
            free(ar->e);
            ar->e = NULL;
            return st;
        }
        depth = limit && limit < m ? (size_t)limit : m; /* k = the query's limit */
    }
    st = arm_select(ar->e, m, depth, &ar->cx, &ar->ntop);
    ar->m = r->kind == OG_IR_RANK_NEAREST ? ar->ntop : m;
    if (st) {
        free(ar->e);
        ar->e = NULL;
    }
    return st;
}

/* The exact ranks in ar of the candidates c[0..nc) (sorted by row) that lie in its tail: ntop
 * plus the number of tail entries before each in arm order (one pass over the tail, a binary
 * search among the sorted targets per entry). */
static og_status arm_tail_ranks(armrank *ar, ent *c, size_t nc, int first)
{
    size_t nt = ar->m - ar->ntop;
    if (!nt || !nc) return OG_OK;
    ent *tail = ar->e + ar->ntop;
    ent *t = malloc((nc < nt ? nc : nt) * sizeof *t);
    if (!t) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t T = 0;
    for (size_t i = 0; i < nt; i++) {
        ent key = {tail[i].row, 0, 0, 0};
        ent *hit = bsearch(&key, c, nc, sizeof *c, ent_row_cmp);
        if (hit && (first ? hit->r1 : hit->r2) == SIZE_MAX)
            t[T++] = (ent){tail[i].row, tail[i].score, (size_t)(hit - c), 0};
    }
    size_t *before = T ? calloc(T + 1, sizeof *before) : NULL;
    if (T && !before) {
        free(t);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (T) {
        qsort_r(t, T, sizeof *t, ent_score_cmp, &ar->cx);
        for (size_t i = 0; i < nt; i++) { /* the first target tail[i] comes before */
            size_t lo = 0, hi = T;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (arm_cmp(&tail[i], &t[mid], &ar->cx) < 0) hi = mid;
                else lo = mid + 1;
            }
            before[lo]++;
        }
        size_t run = ar->ntop;
        for (size_t j = 0; j < T; j++) {
            run += before[j];
            if (first) c[t[j].r1].r1 = run;
            else c[t[j].r1].r2 = run;
        }
    }
    free(before);
    free(t);
    return OG_OK;
}

/* Fuses ranks[rank] over urows[0..nu) (ascending rows; NULL = every row of the type) into
 * rs->fused (sorted by row; each entity's fused position and score).  With a limit L (and not
 * the test hook og_search_set_rrf_full), only the first L fused entities are kept, and each
 * bm25 arm is ranked to a depth only (docs/search.md "Fusion: rrf", the depth rule):
 *   - next to a nearest arm (which ranks at most L entities): depth L.  An entity outside both
 *     the bm25 arm's first L and the nearest arm scores at most 1/(k+L+1), below each of the
 *     bm25 arm's first L (at least 1/(k+L)).
 *   - next to another bm25 arm: depth k + 2L.  An entity beyond it in both arms scores at most
 *     2/(k+D+1) = 2/(2k+2L+1) < 1/(k+L).
 * Every candidate's rank in each arm is exact (arm_tail_ranks), so the kept entities, their
 * scores and their order are those of the full fusion. */
static og_status rrf_fuse(og_search *s, int rank, const uint32_t *urows, size_t nu, uint64_t limit, int64_t k,
                          const og_vector *ids)
{
    const og_ir_rank *r = &s->ir->ranks[rank];
    rstate *rs = &s->ranks[rank];
    OG_TRY(s->src->node_rows(s->src->ud, (size_t)s->ir->vars[r->var].type, &rs->n));
    int full = t_rrf_full || limit == 0;
    int near1 = s->ir->ranks[r->arm1].kind == OG_IR_RANK_NEAREST, near2 = s->ir->ranks[r->arm2].kind == OG_IR_RANK_NEAREST;
    size_t d1 = SIZE_MAX, d2 = SIZE_MAX;
    if (!full) {
        uint64_t two = (uint64_t)limit * 2, deep = (uint64_t)k + two;
        if (limit > SIZE_MAX / 4 || (uint64_t)k > SIZE_MAX / 2) deep = SIZE_MAX;
        d1 = near2 ? (size_t)limit : (size_t)deep;
        d2 = near1 ? (size_t)limit : (size_t)deep;
    }
    armrank a1, a2;
    memset(&a2, 0, sizeof a2);
    OG_TRY(arm_collect(s, r->arm1, urows, nu, limit, d1, ids, &a1));
    og_status st = arm_collect(s, r->arm2, urows, nu, limit, d2, ids, &a2);
    /* the candidates: every entity among either arm's first entries */
    size_t nc = 0, cap = a1.ntop + a2.ntop;
    ent *c = st == OG_OK ? malloc((cap ? cap : 1) * sizeof *c) : NULL;
    if (st == OG_OK && !c) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) {
        for (size_t i = 0; i < a1.ntop; i++) c[nc++] = (ent){a1.e[i].row, 0, i, SIZE_MAX};
        for (size_t i = 0; i < a2.ntop; i++) c[nc++] = (ent){a2.e[i].row, 0, SIZE_MAX, i};
        qsort(c, nc, sizeof *c, ent_row_cmp);
        size_t w = 0;
        for (size_t i = 0; i < nc; i++) {
            if (w && c[w - 1].row == c[i].row) {
                if (c[i].r1 != SIZE_MAX) c[w - 1].r1 = c[i].r1;
                if (c[i].r2 != SIZE_MAX) c[w - 1].r2 = c[i].r2;
                continue;
            }
            c[w++] = c[i];
        }
        nc = w;
        st = arm_tail_ranks(&a1, c, nc, 1);
    }
    if (st == OG_OK) st = arm_tail_ranks(&a2, c, nc, 0);
    free(a1.e);
    free(a2.e);
    if (st == OG_OK) {
        for (size_t i = 0; i < nc; i++)
            c[i].score = (c[i].r1 != SIZE_MAX ? 1.0 / ((double)k + (double)c[i].r1 + 1.0) : 0) +
                         (c[i].r2 != SIZE_MAX ? 1.0 / ((double)k + (double)c[i].r2 + 1.0) : 0);
        ordctx cx = {ids, 0};
        qsort_r(c, nc, sizeof *c, ent_fused_cmp, &cx);
        if (!full && nc > limit) nc = (size_t)limit;
        free(rs->fused);
        rs->fused = malloc((nc ? nc : 1) * sizeof *rs->fused);
        if (!rs->fused) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (st == OG_OK) {
        for (size_t i = 0; i < nc; i++) rs->fused[i] = (fused){c[i].row, (uint32_t)i, c[i].score};
        qsort(rs->fused, nc, sizeof *rs->fused, fused_row_cmp);
        rs->nfused = nc;
        rs->ready = 1;
    }
    free(c);
    return st;
}

static const fused *fused_of(const rstate *rs, uint32_t row)
{
    fused key = {row, 0, 0};
    return rs->nfused ? bsearch(&key, rs->fused, rs->nfused, sizeof key, fused_row_cmp) : NULL;
}

static og_status rrf_k(og_search *s, const og_ir_rank *r, int64_t *k)
{
    OG_TRY(const_int(s, r->k, "rrf k", k));
    if (*k <= 0) return og_err(OG_ERR_INVALID, "rrf k must be greater than 0, got %lld", (long long)*k);
    return OG_OK;
}

og_status og_search_rrf_candidates(og_search *s, int rank, uint64_t limit, uint32_t **rows, size_t *n, int *used)
{
    *rows = NULL;
    *n = 0;
    *used = 0;
    const og_ir_rank *r = &s->ir->ranks[rank];
    rstate *rs = &s->ranks[rank];
    if (r->kind != OG_IR_RANK_RRF || !limit || t_rrf_full) return OG_OK;
    int64_t k;
    OG_TRY(rrf_k(s, r, &k));
    const og_vector *ids;
    OG_TRY(s->src->node_column(s->src->ud, (size_t)s->ir->vars[r->var].type, OG_PROP_ID_COLUMN, &ids));
    OG_TRY(rrf_fuse(s, rank, NULL, 0, limit, k, ids));
    uint32_t *out = malloc((rs->nfused ? rs->nfused : 1) * sizeof *out);
    if (!out) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < rs->nfused; i++) out[i] = rs->fused[i].row;
    *rows = out;
    *n = rs->nfused;
    *used = 1;
    rs->bound = 1; /* the binding is the fused result: og_search_order keys it */
    return OG_OK;
}

static og_status order_rrf(og_search *s, int rank, const uint32_t *col, size_t n, uint64_t limit, uint8_t *keep,
                           og_vector *key)
{
    const og_ir_rank *r = &s->ir->ranks[rank];
    rstate *rs = &s->ranks[rank];
    og_status st = OG_OK;
    if (!rs->bound) {
        int64_t k;
        OG_TRY(rrf_k(s, r, &k));
        size_t type = (size_t)s->ir->vars[r->var].type, ntype;
        const og_vector *ids;
        OG_TRY(s->src->node_rows(s->src->ud, type, &ntype));
        OG_TRY(s->src->node_column(s->src->ud, type, OG_PROP_ID_COLUMN, &ids));
        /* the universe: the distinct entities of the final rows, ascending */
        uint8_t *seen = calloc((ntype + 7) / 8 + 1, 1);
        uint32_t *u = malloc((n < ntype ? n : ntype ? ntype : 1) * sizeof *u + sizeof *u);
        if (!seen || !u) st = og_err(OG_ERR_NOMEM, "out of memory");
        size_t nu = 0;
        for (size_t i = 0; i < n && st == OG_OK; i++)
            if (col[i] != OG_ROW_NONE && col[i] < ntype) seen[col[i] >> 3] |= (uint8_t)(1u << (col[i] & 7));
        for (size_t i = 0; i < ntype && st == OG_OK; i += 8)
            if (seen[i >> 3])
                for (size_t j = i; j < i + 8 && j < ntype; j++)
                    if (og_bit_get(seen, j)) u[nu++] = (uint32_t)j;
        free(seen);
        if (st == OG_OK) st = rrf_fuse(s, rank, u, nu, limit, k, ids);
        free(u);
    }
    /* every row of a kept entity, keyed by its entity's fused position */
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        const fused *f = col[i] == OG_ROW_NONE ? NULL : fused_of(rs, col[i]);
        if (!f) {
            keep[i >> 3] &= (uint8_t)~(1u << (i & 7));
            continue;
        }
        st = og_vector_append_i64(key, f->pos);
    }
    return st;
}

/* 1 when col[0..n) is 0, 1, ..., m - 1 (n == m). */
static int is_identity(const uint32_t *col, size_t n, size_t m)
{
    if (n != m) return 0;
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) bad |= col[i] ^ (uint32_t)i;
    return bad == 0;
}

/* A nearest ordering with a limit over EVERY live row of its type that has a vector (the
 * match block filtered nothing out) may take its candidates from vector index files
 * (search_ann.h); *cand (owned, NULL = exact search) then marks the rows that stay.  col NULL:
 * the plain scan of the type (every row once). */
static og_status nearest_index(og_search *s, int rank, const uint32_t *col, size_t n, uint64_t limit, uint8_t **cand)
{
    *cand = NULL;
    const og_ir_rank *r = &s->ir->ranks[rank];
    rstate *rs = &s->ranks[rank];
    if (!limit || !s->src->node_index || og_search_exact() || rs->n == 0 || rs->bound) return OG_OK;
    size_t bytes = (rs->n + 7) / 8 + 1;
    uint8_t *seen = calloc(bytes, 1);
    if (!seen) return og_err(OG_ERR_NOMEM, "out of memory");
    if (col && !is_identity(col, n, rs->n)) { /* else: every row once, the plain scan of the type */
        for (size_t i = 0; i < n; i++)
            if (col[i] != OG_ROW_NONE && col[i] < rs->n) seen[col[i] >> 3] |= (uint8_t)(1u << (col[i] & 7));
        for (size_t i = 0; i < rs->n; i++)
            if (!og_bit_get(seen, i) && !og_vector_is_null(rs->vecs, i)) { /* a filtered binding: exact */
                free(seen);
                return OG_OK;
            }
        memset(seen, 0, bytes);
    }
    int used = 0;
    og_status st = og_search_ann_candidates(s->src, (size_t)s->ir->vars[r->var].type, r->prop_id, rs->q, rs->dim,
                                            (size_t)limit, rs->n, seen, &used);
    if (st == OG_OK && used) *cand = seen;
    else free(seen);
    return st;
}

/* nearest_fill over the rows of col[0..n) that cand (NULL = all) marks. */
static og_status nearest_fill_some(rstate *rs, const uint32_t *col, size_t n, const uint8_t *cand)
{
    if (!cand) return nearest_fill(rs, col, n);
    if (is_identity(col, n, rs->n)) col = NULL; /* the candidates are the rows to fill */
    uint32_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t m = 0;
    if (!col) {
        for (size_t i = 0; i < n; i += 8)
            if (cand[i >> 3])
                for (size_t j = i; j < i + 8 && j < n; j++)
                    if (og_bit_get(cand, j)) rows[m++] = (uint32_t)j;
    } else {
        for (size_t i = 0; i < n; i++)
            if (col[i] != OG_ROW_NONE && col[i] < rs->n && og_bit_get(cand, col[i])) rows[m++] = col[i];
    }
    og_status st = nearest_fill(rs, rows, m);
    free(rows);
    return st;
}

/* The k-th smallest (0-based) of v[0..n), k < n, no NaN (three-way quickselect; v reordered). */
static double kth_smallest(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the answer is in v[lo, hi) */
    while (hi - lo > 1) {
        double p = v[lo + (hi - lo) / 2], t;
        size_t lt = lo, i = lo, gt = hi; /* [lo, lt) < p, [lt, i) == p, [gt, hi) > p */
        while (i < gt) {
            if (v[i] < p) {
                t = v[lt], v[lt] = v[i], v[i] = t;
                lt++, i++;
            } else if (v[i] > p) {
                gt--;
                t = v[i], v[i] = v[gt], v[gt] = t;
            } else {
                i++;
            }
        }
        if (k < lt) hi = lt;
        else if (k >= gt) lo = gt;
        else return p;
    }
    return v[lo];
}

/* *cut = the distance of the k-th nearest row of col (rows outside cand excluded), or
 * INFINITY when fewer rows have one. */
static og_status nearest_cut(rstate *rs, const og_ir_rank *r, const uint32_t *col, size_t n, const uint8_t *cand,
                             size_t k, double *cut)
{
    *cut = INFINITY;
    double *d = malloc(n * sizeof *d);
    if (!d) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (cand && (col[i] == OG_ROW_NONE || col[i] >= rs->n || !og_bit_get(cand, col[i]))) continue;
        double v = score_of(rs, r, col[i]);
        if (!isnan(v)) d[m++] = v;
    }
    if (m > k) *cut = kth_smallest(d, m, k - 1);
    free(d);
    return OG_OK;
}

/* og_search_order's keep bits and key for the plain scan (binding row i = entity row i, n
 * rows) when an index named the candidates: rows outside cand, null vectors and rows farther
 * than the limit-th nearest candidate leave; the others keep their exact distance as key. */
static og_status nearest_identity_keep(rstate *rs, const uint8_t *cand, size_t n, size_t limit, uint8_t *keep,
                                       og_vector *key)
{
    memset(keep, 0, (n + 7) / 8 + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i += 8)
        if (cand[i >> 3])
            for (size_t j = i; j < i + 8 && j < n; j++) m += og_bit_get(cand, j) && !vec_null(rs, (uint32_t)j);
    double *d = malloc((m ? m : 1) * sizeof *d);
    if (!d) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i += 8)
        if (cand[i >> 3])
            for (size_t j = i; j < i + 8 && j < n; j++)
                if (og_bit_get(cand, j) && !vec_null(rs, (uint32_t)j)) d[k++] = rs->dist[j];
    double cut = limit && m > limit ? kth_smallest(d, m, limit - 1) : INFINITY;
    free(d);
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i += 8)
        if (cand[i >> 3])
            for (size_t j = i; j < i + 8 && j < n && st == OG_OK; j++) {
                if (!og_bit_get(cand, j) || vec_null(rs, (uint32_t)j) || !(rs->dist[j] <= cut)) continue;
                keep[j >> 3] |= (uint8_t)(1u << (j & 7));
                st = og_vector_append_f64(key, (double)rs->dist[j]);
            }
    return st;
}

og_status og_search_nearest_candidates(og_search *s, int rank, uint64_t limit, uint32_t **rows, size_t *n, int *used)
{
    *rows = NULL;
    *n = 0;
    *used = 0;
    const og_ir_rank *r = &s->ir->ranks[rank];
    if (r->kind != OG_IR_RANK_NEAREST || !limit || !s->src->node_index || og_search_exact()) return OG_OK;
    OG_TRY(rank_ready_sparse(s, rank));
    rstate *rs = &s->ranks[rank];
    if (rs->n == 0) return OG_OK;
    uint8_t *bits = calloc((rs->n + 7) / 8 + 1, 1);
    if (!bits) return og_err(OG_ERR_NOMEM, "out of memory");
    int got = 0;
    og_status st = og_search_ann_candidates(s->src, (size_t)s->ir->vars[r->var].type, r->prop_id, rs->q, rs->dim,
                                            (size_t)limit, rs->n, bits, &got);
    size_t m = 0;
    for (size_t i = 0; st == OG_OK && got && i < rs->n; i += 8)
        if (bits[i >> 3])
            for (size_t j = i; j < i + 8 && j < rs->n; j++) m += og_bit_get(bits, j);
    uint32_t *out = st == OG_OK && got ? malloc((m ? m : 1) * sizeof *out) : NULL;
    if (st == OG_OK && got && !out) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (out) {
        m = 0;
        for (size_t i = 0; i < rs->n; i += 8)
            if (bits[i >> 3])
                for (size_t j = i; j < i + 8 && j < rs->n; j++)
                    if (og_bit_get(bits, j)) out[m++] = (uint32_t)j;
        *rows = out;
        *n = m;
        *used = 1;
        rs->bound = 1; /* the binding is the candidate set: rank it exactly */
    }
    free(bits);
    return st;
}

og_status og_search_order(og_search *s, int rank, og_bindings *b, size_t var_col, uint64_t limit, og_vector *key,
                          int *desc)
{
    const og_ir_rank *r = &s->ir->ranks[rank];
    rstate *rs = &s->ranks[rank];
    size_t n = b->n_rows;
    const uint32_t *col = b->cols[var_col];
    uint8_t *keep = malloc((n + 7) / 8 + 1);
    if (!keep) return og_err(OG_ERR_NOMEM, "out of memory");
    memset(keep, 0xff, (n + 7) / 8 + 1);
    og_status st = og_vector_init(key, (og_type){r->kind == OG_IR_RANK_RRF ? OG_T_I64 : OG_T_F64, 0, 0});
    if (st) {
        free(keep);
        return st;
    }
    *desc = r->kind == OG_IR_RANK_BM25;
    if (r->kind == OG_IR_RANK_RRF) {
        st = order_rrf(s, rank, col, n, limit, keep, key);
    } else {
        st = (rs->ready && rs->bound) || (r->kind == OG_IR_RANK_BM25 && bm25_partial_covers(rs, col, n))
                 ? OG_OK
                 : rank_ready(s, rank); /* bound: maybe sparse, see rank_ready_sparse */
        uint8_t *cand = NULL; /* nearest through a vector index: the rows it may keep */
        if (st == OG_OK && r->kind == OG_IR_RANK_NEAREST) st = nearest_index(s, rank, col, n, limit, &cand);
        if (st == OG_OK && r->kind == OG_IR_RANK_NEAREST) st = nearest_fill_some(rs, col, n, cand);
        /* nearest with a limit: rows farther than the limit-th nearest row can never be
         * returned, so they leave now (ties kept: later keys sort them), before projection */
        double cut = INFINITY;
        if (st == OG_OK && cand && is_identity(col, n, rs->n)) {
            /* the indexed plain scan: only candidate rows can stay; visit just those */
            st = nearest_identity_keep(rs, cand, n, (size_t)limit, keep, key);
            n = 0; /* done: skip the general loop */
        } else if (st == OG_OK && r->kind == OG_IR_RANK_NEAREST && limit && n > limit)
            st = nearest_cut(rs, r, col, n, cand, (size_t)limit, &cut);
        for (size_t i = 0; i < n && st == OG_OK; i++) {
            double v = cand && (col[i] == OG_ROW_NONE || col[i] >= rs->n || !og_bit_get(cand, col[i])) ? NAN
                                                                                                       : score_of(rs, r, col[i]);
            if (v > cut) v = NAN;
            if (isnan(v) || (r->kind == OG_IR_RANK_BM25 && !(v > 0))) {
                keep[i >> 3] &= (uint8_t)~(1u << (i & 7));
                continue;
            }
            st = og_vector_append_f64(key, v);
        }
        free(cand);
    }
    if (st == OG_OK) og_bindings_select(b, keep);
    free(keep);
    if (st) og_vector_free(key);
    return st;
}
