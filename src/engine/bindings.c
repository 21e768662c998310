/*
 * bindings.c — row-number tables and the expand / join operators over them.  See bindings.h.
 */
#include "engine/bindings.h"

#include <stdlib.h>
#include <string.h>

#include "util/budget.h"
#include "util/error.h"

og_status og_bindings_init(og_bindings *b, size_t n_cols)
{
    memset(b, 0, sizeof *b);
    b->n_cols = n_cols;
    if (n_cols) {
        b->cols = calloc(n_cols, sizeof *b->cols);
        if (!b->cols) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    return OG_OK;
}

void og_bindings_free(og_bindings *b)
{
    og_budget_release((uint64_t)b->cap_rows * b->n_cols * sizeof(uint32_t)); /* query budget (budget.h) */
    for (size_t c = 0; c < b->n_cols; c++) free(b->cols[c]);
    free(b->cols);
    memset(b, 0, sizeof *b);
}

static og_status reserve(og_bindings *b, size_t rows)
{
    if (rows <= b->cap_rows) return OG_OK;
    if (rows >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "intermediate result over 2^32 rows");
    size_t ncap = b->cap_rows ? b->cap_rows : 64;
    while (ncap < rows) ncap *= 2;
    for (size_t c = 0; c < b->n_cols; c++) {
        uint32_t *p = realloc(b->cols[c], ncap * sizeof *p);
        if (!p) return og_err(OG_ERR_NOMEM, "out of memory growing an intermediate result to %zu rows", ncap);
        b->cols[c] = p;
    }
    uint64_t grown = (uint64_t)(ncap - b->cap_rows) * b->n_cols * sizeof(uint32_t);
    b->cap_rows = ncap;
    return og_budget_charge(grown); /* the running query's memory budget (budget.h) */
}

og_status og_bindings_from_rows(og_bindings *b, const uint32_t *rows, size_t n)
{
    OG_TRY(og_bindings_init(b, 1));
    og_status st = reserve(b, n ? n : 1);
    if (st) {
        og_bindings_free(b);
        return st;
    }
    if (n) memcpy(b->cols[0], rows, n * sizeof *rows);
    b->n_rows = n;
    return OG_OK;
}

og_status og_bindings_from_bits(og_bindings *b, const uint64_t *bits, size_t n)
{
    size_t words = (n + 63) / 64, cnt = 0;
    uint64_t tail = n % 64 ? (1ull << (n % 64)) - 1 : ~0ull;
    for (size_t w = 0; w < words; w++) cnt += (size_t)__builtin_popcountll(w + 1 == words ? bits[w] & tail : bits[w]);
    OG_TRY(og_bindings_init(b, 1));
    og_status st = reserve(b, cnt ? cnt : 1);
    if (st) {
        og_bindings_free(b);
        return st;
    }
    uint32_t *c = b->cols[0];
    size_t k = 0;
    for (size_t w = 0; w < words; w++) {
        uint64_t m = w + 1 == words ? bits[w] & tail : bits[w];
        while (m) {
            c[k++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
            m &= m - 1;
        }
    }
    b->n_rows = cnt;
    return OG_OK;
}

og_status og_bindings_push(og_bindings *b, const uint32_t *values)
{
    OG_TRY(reserve(b, b->n_rows + 1));
    for (size_t c = 0; c < b->n_cols; c++) b->cols[c][b->n_rows] = values[c];
    b->n_rows++;
    return OG_OK;
}

void og_bindings_select(og_bindings *b, const uint8_t *sel)
{
    size_t n = b->n_rows, r = 0;
    while (r + 8 <= n && sel[r >> 3] == 0xff) r += 8; /* a kept prefix stays where it is */
    size_t w = r;
    if (b->n_cols == 1) { /* one column (a scan): branch-free, a byte of rows at a time */
        uint32_t *c = b->cols[0];
        for (; r < n; r++) {
            if (!(r & 7) && !sel[r >> 3] && r + 8 <= n) {
                r += 7;
                continue;
            }
            c[w] = c[r];
            w += (sel[r >> 3] >> (r & 7)) & 1;
        }
        b->n_rows = w;
        return;
    }
    for (; r < n; r++) {
        if (!((sel[r >> 3] >> (r & 7)) & 1)) continue;
        if (w != r)
            for (size_t c = 0; c < b->n_cols; c++) b->cols[c][w] = b->cols[c][r];
        w++;
    }
    b->n_rows = w;
}

og_status og_bindings_cross(og_bindings *out, const og_bindings *a, const og_bindings *b)
{
    OG_TRY(og_bindings_init(out, a->n_cols + b->n_cols));
    size_t total = a->n_rows * b->n_rows;
    if (b->n_rows && total / b->n_rows != a->n_rows) {
        og_bindings_free(out);
        return og_err(OG_ERR_LIMIT, "cross product of %zu x %zu rows is too large", a->n_rows, b->n_rows);
    }
    og_status st = reserve(out, total ? total : 1);
    if (st) {
        og_bindings_free(out);
        return st;
    }
    size_t r = 0;
    for (size_t i = 0; i < a->n_rows; i++)
        for (size_t j = 0; j < b->n_rows; j++, r++) {
            for (size_t c = 0; c < a->n_cols; c++) out->cols[c][r] = a->cols[c][i];
            for (size_t c = 0; c < b->n_cols; c++) out->cols[a->n_cols + c][r] = b->cols[c][j];
        }
    out->n_rows = total;
    return OG_OK;
}

/* Appends input row `r` of `in` extended with the given extra values. */
static og_status push_extended(og_bindings *out, const og_bindings *in, size_t r, uint32_t v1, uint32_t v2)
{
    OG_TRY(reserve(out, out->n_rows + 1));
    size_t w = out->n_rows;
    for (size_t c = 0; c < in->n_cols; c++) out->cols[c][w] = in->cols[c][r];
    out->cols[in->n_cols][w] = v1;
    if (out->n_cols > in->n_cols + 1) out->cols[in->n_cols + 1][w] = v2;
    out->n_rows++;
    return OG_OK;
}

og_status og_expand(og_bindings *out, const og_bindings *in, size_t src_col, const og_topology *t, og_dir dir,
                    uint32_t min_hops, uint32_t max_hops, int with_edge)
{
    if (src_col >= in->n_cols) return og_err(OG_ERR_INTERNAL, "expand from column %zu of %zu", src_col, in->n_cols);
    if (with_edge && (min_hops != 1 || max_hops != 1))
        return og_err(OG_ERR_INVALID, "an edge binding needs a single-hop traversal");
    OG_TRY(og_bindings_init(out, in->n_cols + (with_edge ? 2 : 1)));
    og_status st = OG_OK;
    if (with_edge) {
        og_reach *scratch = og_topology_reach_get(t); /* a composed topology's merged entries */
        if (!scratch) st = og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t r = 0; r < in->n_rows && st == OG_OK; r++) {
            uint32_t v = in->cols[src_col][r];
            if (v == OG_ROW_NONE) continue;
            if (!(r & 255) && (st = og_budget_check()) != OG_OK) break;
            for (int side = 0; side < 2 && st == OG_OK; side++) {
                og_dir d = side == 0 ? OG_DIR_OUT : OG_DIR_IN;
                if (dir != OG_DIR_BOTH && d != dir) continue;
                const uint32_t *nb, *ed;
                size_t n;
                st = og_topology_edges(t, d, v, scratch, &nb, &ed, &n);
                for (size_t k = 0; k < n && st == OG_OK; k++) {
                    /* undirected: a self-loop edge is seen from both sides; emit it once */
                    if (dir == OG_DIR_BOTH && side == 1 && nb[k] == v) continue;
                    st = push_extended(out, in, r, nb[k], ed[k]);
                }
            }
        }
        og_topology_reach_put(t, scratch);
    } else {
        og_reach *reach = og_topology_reach_get(t);
        if (!reach) st = og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t r = 0; r < in->n_rows && st == OG_OK; r++) {
            uint32_t v = in->cols[src_col][r];
            if (v == OG_ROW_NONE) continue;
            if ((st = og_budget_check()) != OG_OK) break; /* a reach can be a whole graph */
            st = og_topology_reach(t, dir, v, min_hops, max_hops, reach);
            for (size_t k = 0; k < reach->len && st == OG_OK; k++) st = push_extended(out, in, r, reach->node[k], 0);
        }
        og_topology_reach_put(t, reach);
    }
    if (st != OG_OK) og_bindings_free(out);
    return st;
}

og_status og_expand_filter(og_bindings *b, size_t src_col, size_t dst_col, const og_topology *t, og_dir dir,
                           uint32_t min_hops, uint32_t max_hops)
{
    if (src_col >= b->n_cols || dst_col >= b->n_cols) return og_err(OG_ERR_INTERNAL, "expand_filter: bad column");
    size_t bytes = (b->n_rows + 7) / 8;
    uint8_t *sel = calloc(bytes ? bytes : 1, 1);
    if (!sel) return og_err(OG_ERR_NOMEM, "out of memory");
    og_reach *reach = og_topology_reach_get(t);
    og_status st = reach ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t r = 0; r < b->n_rows && st == OG_OK; r++) {
        uint32_t s = b->cols[src_col][r], d = b->cols[dst_col][r];
        if (s == OG_ROW_NONE || d == OG_ROW_NONE) continue;
        st = og_topology_reach(t, dir, s, min_hops, max_hops, reach);
        for (size_t k = 0; k < reach->len; k++)
            if (reach->node[k] == d) {
                sel[r >> 3] |= (uint8_t)(1u << (r & 7));
                break;
            }
    }
    og_topology_reach_put(t, reach);
    if (st == OG_OK) og_bindings_select(b, sel);
    free(sel);
    return st;
}

void og_antijoin_mask(const og_bindings *inner, size_t origin_col, uint8_t *keep, size_t n_outer)
{
    for (size_t r = 0; r < inner->n_rows; r++) {
        uint32_t o = inner->cols[origin_col][r];
        if (o < n_outer) keep[o >> 3] &= (uint8_t)~(1u << (o & 7));
    }
}
