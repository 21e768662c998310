/*
 * search_rank.c — the orderings of a search: nearest distances (exact, or the candidates
 * of a vector index), scores handed to projections, and rrf fusion of two ranks
 * (search_internal.h; text matching is in search.c, bm25 scoring in search_bm25.c).
 */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/search_ann.h"
#include "engine/search_internal.h"
#include "util/error.h"
#include "vec/distance.h"

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
        OG_TRY(og_srch_bm25_run(s, rank, rs, 0));
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
    if (!rs->ready) OG_TRY(og_srch_bm25_run(s, rank, rs, k)); /* only the rows reaching the k-th score */
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
        const double *v = og_srch_bm25_find(rs, row);
        if (v) return *v;
        return og_srch_row_null(rs->tc, row) ? NAN : 0.0;
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
        if (rows[i] != OG_ROW_NONE && rows[i] < rs->n && !og_srch_bm25_find(rs, rows[i])) {
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
    OG_TRY(og_srch_const_int(s, r->k, "rrf k", k));
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
