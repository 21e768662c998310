/*
 * search_ann.c — candidate rows for a `nearest` ordering from vector index files
 * (search_ann.h).  Why candidates and not answers: the executor recomputes every candidate's
 * distance with the exact kernels, so a projected distance never depends on an index and the
 * merge across data files is just "exact top-k over the union".
 */
#include "engine/search_ann.h"

#include <stdlib.h>
#include <string.h>

#include "index/ann.h"
#include "index/index.h"
#include "util/error.h"

static _Thread_local int t_exact;
static _Thread_local uint32_t t_ef; /* 0 = OG_SEARCH_DEFAULT_EF */
static _Atomic uint64_t g_uses;

uint64_t og_search_ann_uses(void) { return g_uses; }

void og_search_set_exact(int on) { t_exact = on != 0; }

void og_search_set_ef(uint32_t ef) { t_ef = ef; }

size_t og_search_ef(void) { return t_ef ? t_ef : OG_SEARCH_DEFAULT_EF; }

int og_search_exact(void)
{
    if (t_exact) return 1;
    const char *e = getenv("OG_ANN");
    return e && !strcmp(e, "off");
}

static void set_range(uint8_t *bits, size_t from, size_t n)
{
    for (size_t i = from; i < from + n; i++) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}

og_status og_search_ann_candidates(const og_exec_source *src, size_t type, uint64_t prop_id, const float *q,
                                   uint32_t dim, size_t k, size_t nrows, uint8_t *cand, int *used)
{
    *used = 0;
    if (!src->node_index || k == 0) return OG_OK;
    og_index_frags fr;
    OG_TRY(src->node_index(src->ud, type, prop_id, og_index_def_vector.name, &fr));
    og_status st = OG_OK;
    size_t nfiles = 0;
    for (size_t i = 0; i < fr.n; i++) nfiles += fr.v[i].file != NULL;
    if (nfiles == 0) goto done;
    uint32_t *offs = NULL;
    float *dists = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < fr.n && st == OG_OK; i++) {
        const og_index_frag *f = &fr.v[i];
        if (f->view_start + f->live_rows > nrows) {
            st = og_err(OG_ERR_INTERNAL, "nearest: the fragments do not match the view");
            break;
        }
        if (f->no_data || f->live_rows == 0) continue; /* all null: nothing to rank */
        og_ann *a = NULL;
        if (f->file) {
            og_status os = og_ann_acquire(&a, &fr.v[i].file); /* may take the mapping over */
            if (os == OG_ERR_NOMEM) {
                st = os;
                break;
            }
            if (os != OG_OK || og_ann_rows(a) != f->physical_rows || og_ann_dim(a) != dim) {
                og_ann_release(a); /* not this file's index: scan the file */
                a = NULL;
            }
            og_error_clear();
        }
        size_t deleted = (size_t)(f->physical_rows - f->live_rows);
        size_t want = k + deleted;
        if (!a || want >= og_ann_count(a) / 2) {
            /* no index, or so many rows wanted that the graph would visit most of the file */
            og_ann_release(a);
            set_range(cand, f->view_start, f->live_rows);
            continue;
        }
        if (want > cap) {
            uint32_t *o = realloc(offs, want * sizeof *o);
            if (o) offs = o;
            float *d = o ? realloc(dists, want * sizeof *d) : NULL;
            if (d) dists = d;
            if (!o || !d) {
                og_ann_release(a);
                st = og_err(OG_ERR_NOMEM, "out of memory");
                break;
            }
            cap = want;
        }
        size_t got = 0;
        st = og_ann_search(a, q, want, og_search_ef(), offs, dists, &got);
        og_ann_release(a);
        if (st == OG_ERR_CORRUPT) { /* a damaged graph: this file is scanned exactly */
            og_error_clear();
            st = OG_OK;
            set_range(cand, f->view_start, f->live_rows);
            continue;
        }
        for (size_t h = 0; h < got && st == OG_OK; h++) {
            uint32_t row = og_index_frag_row(f, offs[h]);
            if (row != UINT32_MAX) cand[row >> 3] |= (uint8_t)(1u << (row & 7)); /* a deleted row is skipped */
        }
    }
    free(offs);
    free(dists);
    if (st == OG_OK) {
        *used = 1;
        g_uses++;
    }
done:
    og_index_frags_free(&fr);
    return st;
}
