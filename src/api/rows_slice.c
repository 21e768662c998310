/*
 * rows_slice.c — keeping one page of a computed result (og_rows_slice, include/omnigraph.h).
 *
 * Why here and not in the engine: paging of this kind is a surface's bound on what it sends
 * (an agent's context, a response size), applied after the query ran to completion under its
 * own budget; the query's `limit`/`offset` are the language's paging and live in the IR.
 * Cutting before rendering keeps the cost of rendering and transfer proportional to the page.
 */
#include <stdint.h>
#include <stdlib.h>

#include "api/rows.h"

size_t og_rows_slice(og_rows *r, size_t offset, size_t limit)
{
    og_result *res = &r->res;
    size_t n = res->nrows;
    size_t from = offset < n ? offset : n;
    size_t keep = n - from < limit ? n - from : limit;
    if (from == 0 && keep == n) return n;
    uint32_t *idx = malloc((keep ? keep : 1) * sizeof *idx);
    if (!idx) return n; /* out of memory: keep everything, the caller's byte cap still holds */
    for (size_t i = 0; i < keep; i++) idx[i] = (uint32_t)(from + i);
    og_vector *cols = calloc(res->ncols ? res->ncols : 1, sizeof *cols);
    size_t done = 0;
    for (; cols && done < res->ncols; done++)
        if (og_vector_gather(&cols[done], &res->cols[done], idx, keep) != OG_OK) break;
    free(idx);
    if (!cols || done < res->ncols) {
        for (size_t c = 0; cols && c < done; c++) og_vector_free(&cols[c]);
        free(cols);
        return n;
    }
    for (size_t c = 0; c < res->ncols; c++) og_vector_free(&res->cols[c]);
    free(res->cols);
    res->cols = cols;
    res->nrows = keep;
    return keep;
}
