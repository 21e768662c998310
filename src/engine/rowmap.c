/*
 * rowmap.c — older-version row -> newer-version row, piecewise.  See rowmap.h.
 *
 * Forward: the piece holding `old` (binary search over old starts), then its rank less the
 * gone ranks before it (binary search).  Back: the kept piece holding `cur` (binary search
 * over new starts, kept pieces only), then the q-th surviving rank: q plus the gone ranks g_m
 * with g_m - m <= q (g ascending, so g_m - m never decreases: a binary search again).
 */
#define _GNU_SOURCE /* qsort_r */
#include "engine/rowmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define NONE UINT32_MAX

typedef struct piece {
    uint32_t old_start, old_n, new_start; /* new_start NONE: gone */
    uint32_t *gone;                       /* ascending ranks, owned */
    uint32_t ngone;
} piece;

struct og_rowmap {
    uint32_t n_old, n_new;
    piece *p;
    size_t np, cap;
    uint32_t *by_new; /* indices of kept pieces that hold rows, by new start */
    size_t nkept_pieces;
    size_t gone_rows, kept_rows;
    int identity, monotone, finished;
};

og_status og_rowmap_new(og_rowmap **out, uint32_t n_old, uint32_t n_new)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return og_err(OG_ERR_NOMEM, "row map: out of memory");
    (*out)->n_old = n_old;
    (*out)->n_new = n_new;
    return OG_OK;
}

void og_rowmap_free(og_rowmap *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->np; i++) free(m->p[i].gone);
    free(m->p);
    free(m->by_new);
    free(m);
}

og_status og_rowmap_add(og_rowmap *m, uint32_t old_start, uint32_t old_n, uint32_t new_start, const uint32_t *gone,
                        uint32_t ngone)
{
    uint32_t expect = m->np ? m->p[m->np - 1].old_start + m->p[m->np - 1].old_n : 0;
    if (m->finished || old_start != expect || old_n > m->n_old - old_start || ngone > old_n)
        return og_err(OG_ERR_INVALID, "row map: piece at %u of %u rows does not follow row %u", old_start, old_n,
                      expect);
    for (uint32_t k = 0; k < ngone; k++)
        if (gone[k] >= old_n || (k && gone[k] <= gone[k - 1]))
            return og_err(OG_ERR_INVALID, "row map: gone rank %u out of order", gone[k]);
    if (m->np == m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 16;
        piece *g = realloc(m->p, nc * sizeof *g);
        if (!g) return og_err(OG_ERR_NOMEM, "row map: out of memory");
        m->p = g, m->cap = nc;
    }
    piece pc = {old_start, old_n, new_start, NULL, new_start == NONE ? 0 : ngone};
    if (pc.ngone) {
        if (!(pc.gone = malloc(ngone * sizeof *pc.gone))) return og_err(OG_ERR_NOMEM, "row map: out of memory");
        memcpy(pc.gone, gone, ngone * sizeof *pc.gone);
    }
    m->p[m->np++] = pc;
    return OG_OK;
}

static const piece *by_new_piece(const og_rowmap *m, size_t k) { return &m->p[m->by_new[k]]; }

static int cmp_new_start(const void *a, const void *b, void *ctx)
{
    const og_rowmap *m = ctx;
    uint32_t x = m->p[*(const uint32_t *)a].new_start, y = m->p[*(const uint32_t *)b].new_start;
    return x < y ? -1 : x > y;
}

og_status og_rowmap_finish(og_rowmap *m)
{
    uint32_t end = m->np ? m->p[m->np - 1].old_start + m->p[m->np - 1].old_n : 0;
    if (end != m->n_old) return og_err(OG_ERR_INVALID, "row map: pieces cover %u of %u rows", end, m->n_old);
    m->by_new = malloc((m->np ? m->np : 1) * sizeof *m->by_new);
    if (!m->by_new) return og_err(OG_ERR_NOMEM, "row map: out of memory");
    m->identity = m->monotone = 1;
    uint32_t last_new = 0;
    for (size_t i = 0; i < m->np; i++) {
        const piece *pc = &m->p[i];
        if (pc->new_start == NONE) {
            m->gone_rows += pc->old_n;
            m->identity = m->identity && pc->old_n == 0;
            continue;
        }
        uint32_t live = pc->old_n - pc->ngone;
        if (pc->new_start > m->n_new || live > m->n_new - pc->new_start)
            return og_err(OG_ERR_INVALID, "row map: a piece reaches past the %u newer rows", m->n_new);
        m->gone_rows += pc->ngone;
        m->kept_rows += live;
        if (pc->old_n) m->identity = m->identity && pc->ngone == 0 && pc->new_start == pc->old_start;
        if (!live) continue; /* holds no row: never looked up by its new start */
        if (m->nkept_pieces && pc->new_start < last_new) m->monotone = 0;
        last_new = pc->new_start;
        m->by_new[m->nkept_pieces++] = (uint32_t)i;
    }
    qsort_r(m->by_new, m->nkept_pieces, sizeof *m->by_new, cmp_new_start, m);
    for (size_t k = 1; k < m->nkept_pieces; k++) {
        const piece *a = by_new_piece(m, k - 1), *b = by_new_piece(m, k);
        if (a->new_start + (a->old_n - a->ngone) > b->new_start)
            return og_err(OG_ERR_INVALID, "row map: kept pieces overlap at newer row %u", b->new_start);
    }
    m->finished = 1;
    return OG_OK;
}

uint32_t og_rowmap_fwd(const og_rowmap *m, uint32_t old)
{
    if (old >= m->n_old) return NONE;
    if (m->identity) return old;
    size_t lo = 0, hi = m->np; /* the last piece starting at or before old */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->p[mid].old_start <= old) lo = mid;
        else hi = mid;
    }
    /* empty pieces share a start: step to the one that holds it */
    while (lo < m->np && old - m->p[lo].old_start >= m->p[lo].old_n) lo++;
    if (lo == m->np) return NONE;
    const piece *pc = &m->p[lo];
    if (pc->new_start == NONE) return NONE;
    uint32_t q = old - pc->old_start;
    size_t a = 0, b = pc->ngone; /* gone ranks below q */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (pc->gone[mid] < q) a = mid + 1;
        else b = mid;
    }
    if (a < pc->ngone && pc->gone[a] == q) return NONE;
    return pc->new_start + q - (uint32_t)a;
}

uint32_t og_rowmap_back(const og_rowmap *m, uint32_t cur)
{
    if (cur >= m->n_new) return NONE;
    if (m->identity) return cur < m->n_old ? cur : NONE;
    size_t lo = 0, hi = m->nkept_pieces; /* the last kept piece starting at or before cur */
    if (!hi || by_new_piece(m, 0)->new_start > cur) return NONE;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_new_piece(m, mid)->new_start <= cur) lo = mid;
        else hi = mid;
    }
    const piece *pc = by_new_piece(m, lo);
    uint32_t q = cur - pc->new_start;
    if (q >= pc->old_n - pc->ngone) return NONE; /* between kept pieces: a new row */
    size_t a = 0, b = pc->ngone; /* the first m with gone[m] - m > q */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (pc->gone[mid] - (uint32_t)mid <= q) a = mid + 1;
        else b = mid;
    }
    return pc->old_start + q + (uint32_t)a;
}

int og_rowmap_is_identity(const og_rowmap *m) { return m->identity; }
int og_rowmap_is_monotone(const og_rowmap *m) { return m->monotone; }
size_t og_rowmap_gone_count(const og_rowmap *m) { return m->gone_rows; }
size_t og_rowmap_kept_count(const og_rowmap *m) { return m->kept_rows; }

og_status og_rowmap_each_gone(const og_rowmap *m, og_status (*fn)(void *ctx, uint32_t old), void *ctx)
{
    for (size_t i = 0; i < m->np; i++) {
        const piece *pc = &m->p[i];
        if (pc->new_start == NONE) {
            for (uint32_t q = 0; q < pc->old_n; q++) OG_TRY(fn(ctx, pc->old_start + q));
        } else {
            for (uint32_t k = 0; k < pc->ngone; k++) OG_TRY(fn(ctx, pc->old_start + pc->gone[k]));
        }
    }
    return OG_OK;
}
