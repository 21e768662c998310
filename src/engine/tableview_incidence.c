/*
 * tableview_incidence.c — the committed edges at given nodes for a write whose base has no
 * topology of its own, through an older persisted one (tableview.h og_tableview_incidence).
 *
 * A write that deletes a node needs the committed edges at it (the cascade, the orphan check,
 * @card).  Its base rarely has a topology (every commit makes new versions), but since an
 * older version triple with a persisted topology (the one `optimize` wrote) the edge table
 * usually only deleted rows and appended fragments: the edges of the old fragments are found
 * in that topology — the node's row in the old node version through its key maps — and kept
 * when their fragment is still in the base and the row is not deleted there; the appended
 * fragments (small: automatic compaction merges only them) are read, src and dst only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tableview_internal.h"
#include "util/error.h"

struct og_incidence {
    og_tableview *edges;      /* the base (a reference) */
    og_tableview *e0, *s0, *d0; /* the older versions (references; s0 may be d0) */
    og_topology *topo;        /* theirs, mapped */
    size_t *frag_map;         /* per e0 fragment: its index in edges */
    uint8_t *appended;        /* per edges fragment: not in e0 */
    int loaded;               /* ends[] read */
    og_vector ends[2];        /* src, dst of the appended fragments' rows, in order */
    uint32_t *end_rows;       /* per such row: its edges view row, or OG_ROW_NONE (deleted) */
};

void og_incidence_free(og_incidence *inc)
{
    if (!inc) return;
    og_topology_free(inc->topo);
    og_tableview_release(inc->edges);
    og_tableview_release(inc->e0);
    og_tableview_release(inc->s0);
    og_tableview_release(inc->d0);
    free(inc->frag_map);
    free(inc->appended);
    og_vector_free(&inc->ends[0]);
    og_vector_free(&inc->ends[1]);
    free(inc->end_rows);
    free(inc);
}

/* The view row of offset `off` of fragment fi of v, or OG_ROW_NONE when it is deleted there. */
static og_status row_of_offset(og_tableview *v, size_t fi, uint32_t off, uint32_t *row)
{
    if (!v->m.fragments[fi].deletion.present) {
        *row = (uint32_t)(v->frag_start[fi] + off);
        return OG_OK;
    }
    const roaring_bitmap_t *del;
    OG_TRY(og_tv_frag_deletions(v, fi, &del));
    *row = roaring_bitmap_contains(del, off) ? OG_ROW_NONE
                                             : (uint32_t)(v->frag_start[fi] + off - roaring_bitmap_rank(del, off));
    return OG_OK;
}

/* Tries the persisted topology at key for edges (src, dst): 1 and *out when its edge version's
 * fragments are all still in edges (same data file) and it holds every edge of that version. */
static int incidence_try(og_tableview *edges, og_tableview *src, og_tableview *dst, uint64_t ev, uint64_t sv,
                         uint64_t dv, og_incidence **out)
{
    og_incidence *inc = calloc(1, sizeof *inc);
    if (!inc) return 0;
    inc->edges = og_tableview_retain(edges);
    int ok = og_tableview_open(&inc->e0, edges->table, ev) == OG_OK && og_tableview_open(&inc->s0, src->table, sv) == OG_OK;
    if (ok && (src->table == dst->table || !strcmp(og_tableview_dir(src), og_tableview_dir(dst))) && sv == dv)
        inc->d0 = og_tableview_retain(inc->s0);
    else if (ok)
        ok = og_tableview_open(&inc->d0, dst->table, dv) == OG_OK;
    if (ok) {
        inc->frag_map = malloc((inc->e0->m.nfragments + 1) * sizeof *inc->frag_map);
        inc->appended = malloc(edges->m.nfragments + 1);
        ok = inc->frag_map && inc->appended;
    }
    if (ok) memset(inc->appended, 1, edges->m.nfragments + 1);
    for (size_t i = 0; ok && i < inc->e0->m.nfragments; i++) {
        const og_fragment *fo = &inc->e0->m.fragments[i];
        size_t j = 0;
        while (j < edges->m.nfragments && edges->m.fragments[j].id != fo->id) j++;
        const og_fragment *fc = j < edges->m.nfragments ? &edges->m.fragments[j] : NULL;
        ok = fc && fc->physical_rows == fo->physical_rows && fc->nfiles == fo->nfiles &&
             (!fo->nfiles || !strcmp(fo->files[0].path, fc->files[0].path));
        if (ok) inc->frag_map[i] = j, inc->appended[j] = 0;
    }
    if (ok) inc->topo = og_tv_open_topology(inc->e0, inc->s0, inc->d0, 0);
    ok = ok && inc->topo && og_topology_edge_count(inc->topo) == inc->e0->nrows;
    og_error_clear();
    if (!ok) {
        og_incidence_free(inc);
        return 0;
    }
    *out = inc;
    return 1;
}

og_status og_tableview_incidence(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                 og_incidence **out)
{
    *out = NULL;
    OG_TRY(og_tv_check_topology_views(edges, src_nodes, dst_nodes));
    if (!og_tableview_index_mode()) return OG_OK;
    uint64_t(*cand)[3];
    size_t nc;
    og_tv_older_topologies(edges, src_nodes, dst_nodes, &cand, &nc);
    /* at most a few tries, newest first: each opens three manifests */
    for (size_t k = 0; k < nc && k < 4; k++)
        if (incidence_try(edges, src_nodes, dst_nodes, cand[k][0], cand[k][1], cand[k][2], out)) break;
    free(cand);
    return OG_OK;
}

/* Reads src and dst of the appended fragments' rows once. */
static og_status incidence_load(og_incidence *inc)
{
    if (inc->loaded) return OG_OK;
    og_tableview *v = inc->edges;
    long si = og_tv_sys_field_index(&v->m.schema, "src"), di = og_tv_sys_field_index(&v->m.schema, "dst");
    if (si < 0 || di < 0) return og_err(OG_ERR_INVALID, "table %s has no src/dst fields", og_tableview_dir(v));
    int32_t fids[2] = {v->m.schema.fields[si].id, v->m.schema.fields[di].id};
    size_t total = 0;
    for (size_t j = 0; j < v->m.nfragments; j++)
        if (inc->appended[j]) total += (size_t)v->m.fragments[j].physical_rows;
    inc->end_rows = malloc((total ? total : 1) * sizeof *inc->end_rows);
    if (!inc->end_rows) return og_err(OG_ERR_NOMEM, "table view: out of memory");
    OG_TRY(og_vector_init(&inc->ends[0], (og_type){OG_T_STRING, OG_T_NULL, 0}));
    OG_TRY(og_vector_init(&inc->ends[1], (og_type){OG_T_STRING, OG_T_NULL, 0}));
    size_t k = 0;
    for (size_t j = 0; j < v->m.nfragments; j++) {
        if (!inc->appended[j] || !v->m.fragments[j].physical_rows) continue;
        size_t n = (size_t)v->m.fragments[j].physical_rows;
        uint32_t *offs = malloc(n * sizeof *offs);
        if (!offs) return og_err(OG_ERR_NOMEM, "table view: out of memory");
        for (size_t i = 0; i < n; i++) offs[i] = (uint32_t)i;
        og_vector cols[2];
        og_status st = og_table_take(v->table, &v->m, v->m.fragments[j].id, offs, n, fids, 2, cols);
        free(offs);
        OG_TRY(st);
        for (int c = 0; c < 2 && st == OG_OK; c++) {
            if (cols[c].len != n || cols[c].type.id != OG_T_STRING)
                st = og_err(OG_ERR_CORRUPT, "table %s: endpoints of fragment %llu disagree with its rows",
                            og_tableview_dir(v), (unsigned long long)v->m.fragments[j].id);
            for (size_t i = 0; i < n && st == OG_OK; i++) st = og_vector_append_from(&inc->ends[c], &cols[c], i);
        }
        og_vector_free(&cols[0]);
        og_vector_free(&cols[1]);
        for (size_t i = 0; i < n && st == OG_OK; i++) st = row_of_offset(v, j, (uint32_t)i, &inc->end_rows[k + i]);
        OG_TRY(st);
        k += n;
    }
    inc->loaded = 1;
    return OG_OK;
}

og_status og_incidence_find(og_incidence *inc, int is_dst, const char *id, size_t len, uint32_t **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    size_t cap = 0;
    uint32_t *out = NULL;
    og_status st = OG_OK;
#define PUSH(r)                                                                                         \
    do {                                                                                                \
        if (*n == cap) {                                                                                \
            cap = cap ? cap * 2 : 16;                                                                   \
            uint32_t *g_ = realloc(out, cap * sizeof *g_);                                              \
            if (!g_) {                                                                                  \
                st = og_err(OG_ERR_NOMEM, "table view: out of memory");                                 \
                break;                                                                                  \
            }                                                                                           \
            out = g_;                                                                                   \
        }                                                                                               \
        out[(*n)++] = (r);                                                                              \
    } while (0)
    /* the old fragments' edges, through the old topology */
    uint32_t r0;
    og_status fs = og_tableview_lookup_id(is_dst ? inc->d0 : inc->s0, id, len, &r0);
    if (fs == OG_OK && r0 == OG_TABLEVIEW_NO_ROW) {
        /* not an old node: no old edge */
    } else if (fs != OG_OK) {
        return fs;
    } else {
        const uint32_t *nbr, *edges0;
        size_t k;
        og_reach scratch; /* (inc->topo is a mapped file's: its entries are borrowed) */
        og_reach_init(&scratch);
        st = og_topology_edges(inc->topo, is_dst ? OG_DIR_IN : OG_DIR_OUT, r0, &scratch, &nbr, &edges0, &k);
        uint64_t *addr = st == OG_OK ? malloc((k ? k : 1) * sizeof *addr) : NULL;
        if (!addr) {
            og_reach_free(&scratch);
            return st != OG_OK ? st : og_err(OG_ERR_NOMEM, "table view: out of memory");
        }
        st = og_tableview_row_addrs(inc->e0, edges0, k, addr);
        for (size_t i = 0; i < k && st == OG_OK; i++) {
            size_t fi0 = og_tv_frag_of_row(inc->e0, edges0[i]);
            uint32_t row;
            st = row_of_offset(inc->edges, inc->frag_map[fi0], OG_ROW_ADDR_OFFSET(addr[i]), &row);
            if (st == OG_OK && row != OG_ROW_NONE) PUSH(row);
        }
        free(addr);
        og_reach_free(&scratch);
    }
    /* the appended fragments' edges */
    if (st == OG_OK) st = incidence_load(inc);
    const og_vector *ends = &inc->ends[is_dst ? 1 : 0];
    for (size_t i = 0; st == OG_OK && i < ends->len; i++) {
        if (inc->end_rows[i] == OG_ROW_NONE || og_vector_is_null(ends, i)) continue;
        size_t m;
        const uint8_t *e = og_vector_get_bytes(ends, i, &m);
        if (m == len && !memcmp(e, id, len)) PUSH(inc->end_rows[i]);
    }
#undef PUSH
    if (st != OG_OK) {
        free(out);
        *n = 0;
        return st;
    }
    *rows = out;
    return OG_OK;
}
