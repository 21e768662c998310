/*
 * sort.c — stable multi-key row sort (merge sort over a row permutation).  See sort.h.
 *
 * Merge sort rather than qsort: it is stable (ties keep input order, which makes the
 * tie-break keys meaningful) and its comparison count is bounded at n log n.
 */
#include "engine/sort.h"

#include <stdlib.h>
#include <string.h>

#include "util/budget.h"
#include "util/error.h"

typedef struct sort_ctx {
    const og_sort_key *keys;
    size_t n_keys;
    og_status *st; /* a tripped query budget stops the sort */
} sort_ctx;

static int cmp_rows(const sort_ctx *c, uint32_t x, uint32_t y)
{
    for (size_t k = 0; k < c->n_keys; k++) {
        const og_vector *v = c->keys[k].values;
        int nx = og_vector_is_null(v, x), ny = og_vector_is_null(v, y);
        int r;
        if (nx || ny)
            r = nx == ny ? 0 : (nx ? -1 : 1); /* nulls first ascending ... */
        else
            r = og_vector_row_cmp(v, x, v, y);
        if (c->keys[k].descending) r = -r; /* ... and so last descending */
        if (r) return r;
    }
    return 0;
}

static void merge_sort(const sort_ctx *c, uint32_t *a, uint32_t *tmp, size_t n)
{
    if (n < 2 || *c->st) return;
    if (n >= 4096 && (*c->st = og_budget_check()) != OG_OK) return;
    if (n <= 16) { /* insertion sort: stable */
        for (size_t i = 1; i < n; i++) {
            uint32_t x = a[i];
            size_t j = i;
            while (j > 0 && cmp_rows(c, a[j - 1], x) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    merge_sort(c, a, tmp, h);
    merge_sort(c, a + h, tmp, n - h);
    if (cmp_rows(c, a[h - 1], a[h]) <= 0) return;
    memcpy(tmp, a, h * sizeof *a);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) a[k++] = cmp_rows(c, a[j], tmp[i]) < 0 ? a[j++] : tmp[i++];
    while (i < h) a[k++] = tmp[i++];
}

og_status og_sort_rows(const og_sort_key *keys, size_t n_keys, size_t n, size_t limit, uint32_t *perm)
{
    (void)limit; /* a top-k heap is a later optimisation; a full sort satisfies the contract */
    if (n > UINT32_MAX) return og_err(OG_ERR_LIMIT, "cannot sort %zu rows (at most 2^32-1)", n);
    for (size_t k = 0; k < n_keys; k++)
        if (keys[k].values->len != n)
            return og_err(OG_ERR_INTERNAL, "sort key %zu has %zu rows, expected %zu", k, keys[k].values->len, n);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    uint32_t *tmp = malloc((n / 2 + 1) * sizeof *tmp);
    if (!tmp) return og_err(OG_ERR_NOMEM, "out of memory sorting %zu rows", n);
    uint64_t tmp_bytes = (uint64_t)(n / 2 + 1) * sizeof *tmp;
    og_status st = og_budget_charge(tmp_bytes);
    sort_ctx c = {keys, n_keys, &st};
    merge_sort(&c, perm, tmp, n);
    og_budget_release(tmp_bytes);
    free(tmp);
    return st;
}
