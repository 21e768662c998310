/*
 * search_internal.h — the state search.c, search_bm25.c and search_rank.c share: one
 * execution's text columns, match bitmaps and rank states (search.h is the contract
 * the executor sees; nothing outside these three files includes this header).
 */
#ifndef OG_ENGINE_SEARCH_INTERNAL_H
#define OG_ENGINE_SEARCH_INTERNAL_H

#include "engine/search.h"
#include "index/fts.h"
#include "index/index.h"
#include "text/analyzer.h"
#include "util/cache.h"

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

/* search.c: text columns and query text. */
uint32_t og_srch_seg_row(const seg *g, uint32_t doc); /* a segment doc's view row, or NO_ROW */
int og_srch_row_null(const tcol *c, uint32_t row);
og_status og_srch_get_tcol(og_search *s, int var, uint64_t prop_id, tcol **out);
og_status og_srch_tcol_fallback(og_search *s, tcol *c);
og_status og_srch_query_string(og_search *s, const og_ir_expr *e, og_vector *v, const char **q, size_t *len, int *null);
og_status og_srch_const_int(og_search *s, const og_ir_expr *e, const char *what, int64_t *out);
og_status og_srch_analyze_query(og_search *s, const char *q, size_t len);
og_status og_srch_query_terms(og_search *s, size_t **idx, size_t *n);
long og_srch_find_tok(const og_search *s, const og_fts *f, size_t k, int stop);

/* search_bm25.c: a bm25 rank's scores. */
void og_srch_bm25_reset(rstate *rs);
og_status og_srch_bm25_run(og_search *s, int rank, rstate *rs, uint64_t k);
const double *og_srch_bm25_find(const rstate *rs, uint32_t r);

#endif
