/*
 * plan_validate.c — the checks of a plan's new images once every row is staged (plan.h
 * og_plan_validate): edge referential integrity (the staged edges' endpoints looked up in the
 * staged node ids, split over two threads for big loads; committed edges kept when an endpoint
 * type lost rows), @unique over staged and committed rows, @card out-degrees; and the
 * committed-edge lookups a mutation's cascade and a load's checks share.  Split from plan.c
 * along that seam: staging and writing never call into it except through plan.h.
 */
#include "engine/plan.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/layout.h"
#include "engine/plan_internal.h"
#include "util/error.h"

/* ---- validation ---------------------------------------------------------------------------- */

/* 1 when node id[0..len) of plan table pt is in its new image. */
static int in_new_image(og_plan *p, og_plan_table *pt, const char *id, size_t len)
{
    if (og_plan_staged_find(pt, id, len) >= 0) return 1;
    return og_plan_committed_find(p, pt, id, len) >= 0;
}

static int committed_kept(const og_plan_table *pt, size_t row)
{
    if (pt->overwrite) return 0;
    return !(pt->removed && ((pt->removed[row >> 3] >> (row & 7)) & 1));
}

/* One range of staged edges to check for dangling endpoints (run on its own thread when the
 * range is large: every lookup is read-only once the endpoint views are open). */
typedef struct ri_range {
    og_plan *p;
    og_plan_table *et, *from, *to;
    size_t r0, r1;
    size_t bad;  /* the first failing row, or r1 */
    int bad_dst; /* it was the dst (else the src) */
    int uncaptured; /* an endpoint was not a staged row: et->end_rows cannot be used */
} ri_range;

#define RI_CHUNK 1024

/* Compacted endpoints [r0, r0 + n) of side `side` into out: og_plan_table.ends (moved into
 * end_rows when the topology is captured in memory), or the spill files. */
static void ends_get(og_plan *p, const og_plan_table *et, int side, size_t r0, size_t n, uint32_t *out)
{
    if (et->ends_spilled) (void)og_plan_i_ends(p, et, side, r0, n, out);
    else memcpy(out, (et->ends[side] ? et->ends[side] : et->end_rows[side]) + r0, n * sizeof *out);
}

/* The node id at side `side` (0 src, 1 dst) of staged edge row r. */
static const char *endpoint_id(og_plan *p, const og_plan_table *et, int side, size_t r, size_t *n)
{
    if (r < et->nends) {
        uint32_t v;
        ends_get(p, et, side, r, 1, &v);
        if (v & OG_PLAN_END_UNRESOLVED) return (const char *)og_vector_get_bytes(&et->unres[side], v & ~OG_PLAN_END_UNRESOLVED, n);
        const og_plan_table *node = &p->nodes[side ? et->t->to_node : et->t->from_node];
        return og_plan_staged_id(node, v, n);
    }
    return (const char *)og_vector_get_bytes(&et->cols[1 + side], og_plan_i_col_row(et, 1 + (size_t)side, r), n);
}

/* 1 when the node id at side `side` of staged edge row r is in pt's new image; `first` is
 * the id's staged_ids answer (OG_PLAN_NOT_STAGED: not staged).  in_new_image with the map lookup
 * done beforehand. */
static int endpoint_exists(og_plan *p, og_plan_table *pt, uint32_t first, const og_plan_table *et, int side, size_t r)
{
    if (first != OG_PLAN_NOT_STAGED && !og_plan_i_superseded(pt, og_plan_i_latest(pt, first))) return 1;
    size_t n;
    const char *id = endpoint_id(p, et, side, r, &n);
    if (pt->ids_indexed < pt->nstaged) return in_new_image(p, pt, id, n); /* not all indexed */
    return og_plan_committed_find(p, pt, id, n) >= 0;
}

/* staged_ids answers for compacted rows [c0, c0 + n) of side `side`: the one found at the
 * flush, or for an id not staged then, a lookup now (and then the rows cannot be captured
 * as they stand: *uncaptured). */
static void compact_firsts(og_plan *p, const og_plan_table *et, const og_plan_table *node, int side, size_t c0, size_t n,
                           uint32_t *out, int *uncaptured)
{
    ends_get(p, et, side, c0, n, out);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = out[i];
        if (!(v & OG_PLAN_END_UNRESOLVED)) {
            out[i] = v;
            continue;
        }
        size_t len;
        const uint8_t *id = og_vector_get_bytes(&et->unres[side], v & ~OG_PLAN_END_UNRESOLVED, &len);
        if (!og_strmap_get(&node->staged_ids, id, len, &out[i])) out[i] = OG_PLAN_NOT_STAGED;
        *uncaptured = 1;
    }
}

static void *ri_range_scan(void *arg)
{
    ri_range *g = arg;
    og_plan_table *et = g->et;
    const og_vector *srcs = &et->cols[1], *dsts = &et->cols[2];
    uint32_t sfirst[RI_CHUNK], dfirst[RI_CHUNK];
    g->bad = g->r1;
    for (size_t c0 = g->r0, n; c0 < g->r1; c0 += n) {
        n = g->r1 - c0 < RI_CHUNK ? g->r1 - c0 : RI_CHUNK;
        if (c0 < et->nends && c0 + n > et->nends) n = et->nends - c0; /* a chunk is all compacted or none */
        if (c0 < et->nends) {
            compact_firsts(g->p, et, g->from, 0, c0, n, sfirst, &g->uncaptured);
            compact_firsts(g->p, et, g->to, 1, c0, n, dfirst, &g->uncaptured);
        } else {
            size_t o = og_plan_i_col_row(et, 1, c0);
            og_strmap_get_many(&g->from->staged_ids, srcs->values, srcs->offsets + o, n, OG_PLAN_NOT_STAGED, sfirst);
            og_strmap_get_many(&g->to->staged_ids, dsts->values, dsts->offsets + o, n, OG_PLAN_NOT_STAGED, dfirst);
        }
        if (et->end_rows[0] || et->end_rows_in_files) { /* the topology's endpoint rows (og_plan.capture_topology) */
            if (c0 >= et->nends && et->end_rows_in_files) { /* compacted rows are in the files already */
                if (!og_plan_i_end_rows_put(g->p, et, 0, c0, n, sfirst) || !og_plan_i_end_rows_put(g->p, et, 1, c0, n, dfirst))
                    g->uncaptured = 1;
            } else if (c0 >= et->nends) { /* compacted rows are in place already (end_rows is ends) */
                memcpy(et->end_rows[0] + c0, sfirst, n * sizeof *sfirst);
                memcpy(et->end_rows[1] + c0, dfirst, n * sizeof *dfirst);
            }
            for (size_t i = 0; i < n; i++) g->uncaptured |= sfirst[i] == OG_PLAN_NOT_STAGED || dfirst[i] == OG_PLAN_NOT_STAGED;
        }
        for (size_t i = 0; i < n; i++) {
            size_t r = c0 + i;
            if (og_plan_i_superseded(et, r)) continue;
            if (!endpoint_exists(g->p, g->from, sfirst[i], et, 0, r)) {
                g->bad = r, g->bad_dst = 0;
                return NULL;
            }
            if (!endpoint_exists(g->p, g->to, dfirst[i], et, 1, r)) {
                g->bad = r, g->bad_dst = 1;
                return NULL;
            }
        }
    }
    return NULL;
}

#define RI_THREADS 2
#define RI_PARALLEL_MIN_ROWS 65536

/* Scans the staged edges of et, split over RI_THREADS threads when there are many; *out gets
 * the first failing row over all ranges (the one a serial scan would report). */
static void ri_scan_staged(og_plan *p, og_plan_table *et, og_plan_table *from, og_plan_table *to, ri_range *out)
{
    ri_range g[RI_THREADS];
    size_t ng = 1;
    if (!et->nstaged) { /* no columns to read (et->cols may not exist) */
        *out = (ri_range){p, et, from, to, 0, 0, 0, 0, 0};
        return;
    }
    /* Open the endpoint views first: og_plan_table_view is the one lookup step that writes. */
    int views_open = (from->overwrite || og_plan_table_view(p, from) == OG_OK) &&
                     (to->overwrite || og_plan_table_view(p, to) == OG_OK);
    if (views_open && et->nstaged >= RI_PARALLEL_MIN_ROWS) ng = RI_THREADS;
    pthread_t th[RI_THREADS];
    int started[RI_THREADS] = {0};
    for (size_t i = 0; i < ng; i++) {
        g[i] = (ri_range){p, et, from, to, et->nstaged * i / ng, et->nstaged * (i + 1) / ng, 0, 0, 0};
        if (i > 0) started[i] = pthread_create(&th[i], NULL, ri_range_scan, &g[i]) == 0;
    }
    ri_range_scan(&g[0]);
    for (size_t i = 1; i < ng; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            ri_range_scan(&g[i]); /* no thread to be had: scan it here */
    }
    *out = g[ng - 1];
    for (size_t i = 0; i < ng; i++) out->uncaptured |= g[i].uncaptured;
    for (size_t i = 0; i < ng; i++)
        if (g[i].bad < g[i].r1) {
            *out = g[i];
            break;
        }
}

int og_plan_staged_is_image(og_plan *p, og_plan_table *pt)
{
    if (!pt->touched || pt->nsuperseded || pt->nstaged > UINT32_MAX) return 0;
    if (pt->overwrite) return 1;
    if (og_plan_table_view(p, pt) != OG_OK) { /* then no fast path */
        og_error_clear();
        return 0;
    }
    return og_tableview_rows(pt->view) == 0;
}

/* ---- committed edges at given endpoints ------------------------------------------------- */

/* Past this many rows a whole column is loaded instead of reading rows one by one. */
#define POINT_VALUES_MAX 64

og_status og_plan_committed_values(og_plan_table *pt, int32_t field_id, const uint32_t *rows, size_t n, og_vector *out)
{
    if (n <= POINT_VALUES_MAX) return og_tableview_gather(pt->view, field_id, rows, n, out);
    const og_vector *col;
    OG_TRY(og_tableview_column(pt->view, field_id, &col));
    return og_vector_gather(out, col, rows, n);
}

og_status og_plan_incident_edges(og_plan *p, og_plan_table *et, const og_strmap *srcs, const og_strmap *dsts,
                                 og_plan_edge_fn fn, void *ud)
{
    if (et->overwrite || ((!srcs || !og_strmap_count(srcs)) && (!dsts || !og_strmap_count(dsts)))) return OG_OK;
    const og_cat_type *t = et->t;
    og_plan_table *from = &p->nodes[t->from_node], *to = &p->nodes[t->to_node];
    OG_TRY(og_plan_table_view(p, et));
    if (og_tableview_rows(et->view) == 0) return OG_OK; /* no committed edge: none is incident */
    OG_TRY(og_plan_table_view(p, from));
    OG_TRY(og_plan_table_view(p, to));
    const og_topology *topo = NULL;
    if (og_tableview_topology_at_hand(et->view, from->view, to->view, &topo) != OG_OK) {
        og_error_clear(); /* derived: the scan below decides */
        topo = NULL;
    }
    /* A topology leaves out edges with an endpoint it could not find; only one that holds every
     * edge of the version answers for all of them. */
    if (topo && og_topology_edge_count(topo) == og_tableview_rows(et->view)) {
        og_reach scratch; /* a composed topology's merged entries */
        og_reach_init(&scratch);
        og_status st = OG_OK;
        for (int side = 0; side < 2 && st == OG_OK; side++) {
            const og_strmap *ids = side ? dsts : srcs;
            og_tableview *nodes = side ? to->view : from->view;
            for (size_t i = 0; ids && i < og_strmap_count(ids) && st == OG_OK; i++) {
                const uint8_t *id;
                size_t len;
                uint32_t unused, row;
                og_strmap_entry(ids, i, &id, &len, &unused);
                st = og_tableview_lookup_id(nodes, (const char *)id, len, &row);
                if (st == OG_OK && row == OG_TABLEVIEW_NO_ROW) { /* not in the base: no committed edge names it */
                    continue;
                }
                const uint32_t *nbr, *edges;
                size_t n = 0;
                if (st == OG_OK)
                    st = og_topology_edges(topo, side ? OG_DIR_IN : OG_DIR_OUT, row, &scratch, &nbr, &edges, &n);
                for (size_t k = 0; k < n && st == OG_OK; k++) st = fn(ud, edges[k], side, (const char *)id, len);
            }
        }
        og_reach_free(&scratch);
        return st;
    }
    /* an older version triple's topology plus the fragments appended since */
    og_incidence *inc = NULL;
    if (og_tableview_incidence(et->view, from->view, to->view, &inc) != OG_OK) {
        og_error_clear(); /* derived: the scan below decides */
        inc = NULL;
    }
    if (inc) {
        /* every answer first (a failure of this derived path falls back to the scan before fn
         * saw anything), then fn */
        typedef struct hit { uint32_t edge, id; int side; } hit;
        hit *hits = NULL;
        size_t nh = 0, cap = 0;
        og_status st = OG_OK;
        for (int side = 0; side < 2 && st == OG_OK; side++) {
            const og_strmap *ids = side ? dsts : srcs;
            for (size_t i = 0; ids && i < og_strmap_count(ids) && st == OG_OK; i++) {
                const uint8_t *id;
                size_t len, n;
                uint32_t unused, *rows;
                og_strmap_entry(ids, i, &id, &len, &unused);
                st = og_incidence_find(inc, side, (const char *)id, len, &rows, &n);
                if (st == OG_OK && nh + n > cap) {
                    size_t ncap = (nh + n) * 2;
                    hit *g = realloc(hits, ncap * sizeof *g);
                    if (!g) st = og_err(OG_ERR_NOMEM, "out of memory");
                    else hits = g, cap = ncap;
                }
                for (size_t k = 0; k < n && st == OG_OK; k++) hits[nh++] = (hit){rows[k], (uint32_t)i, side};
                free(rows);
            }
        }
        og_incidence_free(inc);
        if (st == OG_OK) {
            for (size_t k = 0; k < nh && st == OG_OK; k++) {
                const uint8_t *id;
                size_t len;
                uint32_t unused;
                og_strmap_entry(hits[k].side ? dsts : srcs, hits[k].id, &id, &len, &unused);
                st = fn(ud, hits[k].edge, hits[k].side, (const char *)id, len);
            }
            free(hits);
            return st;
        }
        free(hits);
        if (st == OG_ERR_NOMEM) return st;
        og_error_clear(); /* derived: the scan below decides */
    }
    /* no topology at hand: one pass over the endpoint columns (one id, the common case, is
     * compared directly instead of hashed) */
    const og_vector *cols[2] = {NULL, NULL};
    const og_strmap *maps[2] = {srcs, dsts};
    const uint8_t *one[2] = {NULL, NULL};
    size_t one_len[2] = {0, 0};
    for (int side = 0; side < 2; side++) {
        if (!maps[side] || !og_strmap_count(maps[side])) continue;
        OG_TRY(og_tableview_column(et->view, side ? OG_FIELD_DST : OG_FIELD_SRC, &cols[side]));
        uint32_t unused;
        if (og_strmap_count(maps[side]) == 1) og_strmap_entry(maps[side], 0, &one[side], &one_len[side], &unused);
    }
    for (size_t r = 0; r < og_tableview_rows(et->view); r++)
        for (int side = 0; side < 2; side++) {
            const og_vector *col = cols[side];
            if (!col || og_vector_is_null(col, r)) continue;
            size_t n;
            const char *id = (const char *)og_vector_get_bytes(col, r, &n);
            int hit = one[side] ? n == one_len[side] && !memcmp(id, one[side], n) : og_strmap_get(maps[side], id, n, NULL);
            if (hit) OG_TRY(fn(ud, (uint32_t)r, side, id, n));
        }
    return OG_OK;
}

/* The ids of node table nt's removed committed rows that are not in its new image (a delete,
 * not an update's or upsert's replacement) into lost.  Reads the ids of the removed rows only. */
static og_status lost_ids(og_plan *p, og_plan_table *nt, og_strmap *lost)
{
    if (!nt->nremoved) return OG_OK;
    OG_TRY(og_plan_table_view(p, nt));
    size_t n = og_tableview_rows(nt->view);
    uint32_t *rows = malloc(nt->nremoved * sizeof *rows);
    if (!rows) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t b = 0; b < (n + 7) / 8 && k < nt->nremoved; b++) {
        if (!nt->removed[b]) continue;
        for (size_t r = b * 8; r < n && r < b * 8 + 8; r++)
            if ((nt->removed[r >> 3] >> (r & 7)) & 1) rows[k++] = (uint32_t)r;
    }
    og_vector ids;
    og_status st = og_plan_committed_values(nt, OG_FIELD_ID, rows, k, &ids);
    free(rows);
    if (st != OG_OK) return st;
    for (size_t i = 0; i < ids.len && st == OG_OK; i++) {
        if (og_vector_is_null(&ids, i)) continue;
        size_t len;
        const char *id = (const char *)og_vector_get_bytes(&ids, i, &len);
        if (og_plan_staged_find(nt, id, len) < 0) st = og_strmap_insert(lost, id, len, 0, NULL, NULL);
    }
    og_vector_free(&ids);
    return st;
}

typedef struct orphan_ctx {
    og_plan_table *et, *from, *to;
} orphan_ctx;

/* A kept committed edge at a lost endpoint is an orphan. */
static og_status orphan_edge(void *ud, uint32_t edge, int is_dst, const char *id, size_t len)
{
    orphan_ctx *c = ud;
    if (!committed_kept(c->et, edge)) return OG_OK;
    return og_err(OG_ERR_CONSTRAINT, "%s: an existing edge's %s '%.*s' would no longer exist in %s (orphan edge)",
                  c->et->t->name, is_dst ? "dst" : "src", (int)len, id, (is_dst ? c->to : c->from)->t->name);
}

/* Edge referential integrity for staged edges and (when an endpoint type lost rows) kept
 * committed edges. */
static og_status check_edges_ri(og_plan *p, og_plan_table *et)
{
    char w[300];
    const og_cat_type *t = et->t;
    og_plan_table *from = &p->nodes[t->from_node], *to = &p->nodes[t->to_node];
    if (p->capture_topology && et->nstaged && og_plan_staged_is_image(p, et) && og_plan_staged_is_image(p, from) &&
        og_plan_staged_is_image(p, to)) {
        /* best effort: without memory for them the topology is left to the first reader;
         * compacted endpoints are the rows' answers already: they become end_rows' start —
         * spilled ones in their files, where the scan adds the rest (og_plan_table
         * .end_rows_in_files) */
        if (et->ends_spilled) {
            og_status sp = og_plan_i_ends_spill_all(et);
            if (sp != OG_OK) return sp;
            et->end_rows_in_files = 1;
        }
        for (int k = 0; k < 2 && !et->end_rows_in_files; k++) {
            uint32_t *e = et->ends[k] ? realloc(et->ends[k], et->nstaged * sizeof(uint32_t)) : malloc(et->nstaged * sizeof(uint32_t));
            if (!e) break;
            if (et->ends[k]) et->ends[k] = NULL;
            et->end_rows[k] = e;
        }
        if (!et->end_rows_in_files && (!et->end_rows[0] || !et->end_rows[1])) { /* keep what the scan needs, capture nothing */
            for (int k = 0; k < 2; k++) {
                if (et->nends && !et->ends[k]) et->ends[k] = et->end_rows[k];
                else free(et->end_rows[k]);
                et->end_rows[k] = NULL;
            }
        }
    }
    ri_range bad;
    ri_scan_staged(p, et, from, to, &bad);
    og_status ri = OG_OK;
    if (bad.bad < bad.r1) {
        size_t r = bad.bad, n;
        const char *s = endpoint_id(p, et, bad.bad_dst, r, &n);
        ri = og_err(OG_ERR_CONSTRAINT, "%s%s: %s '%.*s' not found in %s", og_plan_i_where(p, og_plan_line(et, r), w, sizeof w), t->name,
                    bad.bad_dst ? "dst" : "src", (int)n, s, (bad.bad_dst ? to : from)->t->name);
    }
    if (bad.uncaptured || bad.bad < bad.r1) {
        free(et->end_rows[0]);
        free(et->end_rows[1]);
        et->end_rows[0] = et->end_rows[1] = NULL;
        et->end_rows_in_files = 0;
    }
    OG_TRY(ri);
    int endpoints_lost = from->overwrite || from->nremoved || to->overwrite || to->nremoved;
    if (!endpoints_lost || et->overwrite) return OG_OK;
    if (!from->overwrite && !to->overwrite) {
        /* Rows were removed, not whole tables: only kept edges at an id the new image lost can
         * dangle (the base has no dangling edge), so look those up instead of every edge —
         * none at all when every removed row was restaged (an update, an upsert). */
        og_strmap lf, lt;
        og_strmap_init(&lf);
        og_strmap_init(&lt);
        og_status st = lost_ids(p, from, &lf);
        if (st == OG_OK && to != from) st = lost_ids(p, to, &lt);
        orphan_ctx oc = {et, from, to};
        if (st == OG_OK) st = og_plan_incident_edges(p, et, &lf, to != from ? &lt : &lf, orphan_edge, &oc);
        og_strmap_free(&lf);
        og_strmap_free(&lt);
        return st;
    }
    OG_TRY(og_plan_table_view(p, et));
    const og_vector *src, *dst;
    OG_TRY(og_tableview_column(et->view, OG_FIELD_SRC, &src));
    OG_TRY(og_tableview_column(et->view, OG_FIELD_DST, &dst));
    for (size_t r = 0; r < og_tableview_rows(et->view); r++) {
        if (!committed_kept(et, r)) continue;
        size_t n, m;
        const char *s = (const char *)og_vector_get_bytes(src, r, &n);
        const char *d = (const char *)og_vector_get_bytes(dst, r, &m);
        if (!in_new_image(p, from, s, n))
            return og_err(OG_ERR_CONSTRAINT, "%s: an existing edge's src '%.*s' would no longer exist in %s (orphan edge)",
                          t->name, (int)n, s, from->t->name);
        if (!in_new_image(p, to, d, m))
            return og_err(OG_ERR_CONSTRAINT, "%s: an existing edge's dst '%.*s' would no longer exist in %s (orphan edge)",
                          t->name, (int)m, d, to->t->name);
    }
    return OG_OK;
}

/* Appends the tuple key of a row for a @unique constraint; returns 0 when a member is null. */
static int unique_tuple(og_buf *b, const og_vector *const *cols, size_t ncols, size_t row)
{
    og_buf_reset(b);
    for (size_t c = 0; c < ncols; c++) {
        if (og_vector_is_null(cols[c], row)) return 0;
        char val[256];
        og_plan_i_render_value(cols[c], row, val, sizeof val);
        og_buf_printf(b, "%zu:%s\x1f", strlen(val), val);
        if (cols[c]->type.id == OG_T_STRING) { /* exact bytes, not the 200-char rendering */
            size_t n;
            const uint8_t *s = og_vector_get_bytes(cols[c], row, &n);
            og_buf_append(b, s, n);
            og_buf_append_byte(b, 0x1e);
        }
    }
    return 1;
}

static og_status staged_or_view_col(og_plan *p, og_plan_table *pt, int colref, int staged, const og_vector **out)
{
    size_t ci = colref == OG_COL_ID ? 0 : colref == OG_COL_SRC ? 1 : colref == OG_COL_DST ? 2 : og_plan_prop_col(pt, (size_t)colref);
    if (staged) {
        *out = &pt->cols[ci];
        return OG_OK;
    }
    int32_t fid;
    if (colref == OG_COL_ID) fid = OG_FIELD_ID;
    else if (colref == OG_COL_SRC) fid = OG_FIELD_SRC;
    else if (colref == OG_COL_DST) fid = OG_FIELD_DST;
    else OG_TRY(og_layout_field_id(pt->t->props[colref].id, &fid));
    *out = NULL;
    if (!og_tableview_has_field(pt->view, fid)) return OG_OK; /* the stored table lacks it: all null */
    return og_tableview_column(pt->view, fid, out);
}

/* A cheap stand-in for a cell's value in a @unique tuple, used to skip committed rows whose
 * first member matches no staged tuple before rendering their whole tuple (the rendering and a
 * map of every committed row were ~90 % of a one-row insert at 1M rows).  Equal renderings
 * imply equal probes for these types; 0 when the type has none (every row is then rendered). */
static int unique_probe(const og_vector *v, size_t row, uint8_t tmp[8], const void **key, size_t *len)
{
    switch (v->type.id) {
    case OG_T_STRING: *key = og_vector_get_bytes(v, row, len); return 1;
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: {
        int64_t x = og_vector_get_i64(v, row);
        memcpy(tmp, &x, 8);
        break;
    }
    case OG_T_U32: case OG_T_U64: {
        uint64_t x = og_vector_get_u64(v, row);
        memcpy(tmp, &x, 8);
        break;
    }
    default: return 0;
    }
    *key = tmp;
    *len = 8;
    return 1;
}

static int probe_class(og_type_id t)
{
    switch (t) {
    case OG_T_STRING: return 1;
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: return 2;
    case OG_T_U32: case OG_T_U64: return 3;
    default: return 0;
    }
}

/* The ids of a @unique clash: prev (a committed row, or ncommitted + a staged row) and staged
 * row r, as the error names them. */
static og_status unique_error(og_plan *p, og_plan_table *pt, const og_cat_constraint *k, const og_vector *const *scols,
                              size_t ncommitted, uint32_t prev, size_t r)
{
    char val[256], w[300];
    og_plan_i_render_value(scols[0], r, val, sizeof val);
    const og_vector *idc_prev;
    size_t ln, lm;
    const char *id_prev;
    if (prev >= ncommitted) {
        idc_prev = &pt->cols[0];
        id_prev = (const char *)og_vector_get_bytes(idc_prev, prev - ncommitted, &ln);
    } else {
        OG_TRY(og_tableview_column(pt->view, OG_FIELD_ID, &idc_prev));
        id_prev = (const char *)og_vector_get_bytes(idc_prev, prev, &ln);
    }
    const char *id_me = (const char *)og_vector_get_bytes(&pt->cols[0], r, &lm);
    og_buf names = OG_BUF_INIT;
    for (size_t c = 0; c < k->ncols; c++) og_buf_printf(&names, "%s%s", c ? ", " : "", k->cols[c]);
    og_status st = og_err(OG_ERR_CONSTRAINT, "%s@unique violation on %s.%s%s%s: value '%s' held by '%.*s' and '%.*s'",
                          og_plan_i_where(p, og_plan_line(pt, r), w, sizeof w), pt->t->name, k->ncols > 1 ? "(" : "",
                          og_buf_cstr(&names), k->ncols > 1 ? ")" : "", val, (int)ln, id_prev, (int)lm, id_me);
    og_buf_free(&names);
    return st;
}

/* @unique over the new image: the first staged row (in staging order) whose tuple is held by a
 * kept committed row or by an earlier staged row is the error, naming the committed holder
 * first when there is one.  Only staged tuples can clash (committed rows were checked when
 * they were written), so the committed rows are probed against a map of the staged tuples
 * instead of all entering one map: the cost of a one-row write is a scan of the constrained
 * columns, not a hash map of the whole table. */
static og_status check_unique(og_plan *p, og_plan_table *pt, const og_cat_constraint *k)
{
    const og_vector *scols[8], *ccols[8];
    if (k->ncols > 8) return og_err(OG_ERR_UNSUPPORTED, "@unique over more than 8 columns");
    if (pt->nstaged == 0) return OG_OK;
    OG_TRY(og_plan_table_view(p, pt));
    int committed_missing = 0;
    for (size_t c = 0; c < k->ncols; c++) {
        OG_TRY(staged_or_view_col(p, pt, k->col_props[c], 1, &scols[c]));
        OG_TRY(staged_or_view_col(p, pt, k->col_props[c], 0, &ccols[c]));
        if (!ccols[c]) committed_missing = 1; /* the stored table lacks it: all null */
    }
    size_t ncommitted = og_tableview_rows(pt->view), ns = pt->nstaged;
    og_strmap tuples, probes;
    og_strmap_init(&tuples);
    og_strmap_init(&probes);
    og_buf b = OG_BUF_INIT;
    /* first[r]: the first staged row with r's tuple (UINT32_MAX: r is skipped); holder[f]: the
     * first kept committed row holding staged row f's tuple */
    uint32_t *first = malloc(ns * sizeof *first), *holder = malloc(ns * sizeof *holder);
    og_status st = first && holder ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory checking @unique");
    int probing = !committed_missing && probe_class(scols[0]->type.id) != 0 &&
                  probe_class(scols[0]->type.id) == probe_class(ccols[0]->type.id);
    size_t nlive = 0;
    for (size_t r = 0; r < ns && st == OG_OK; r++) {
        first[r] = holder[r] = UINT32_MAX;
        if (og_plan_i_superseded(pt, r) || !unique_tuple(&b, scols, k->ncols, r)) continue;
        uint32_t prev;
        int inserted;
        st = og_strmap_insert(&tuples, b.data, b.len, (uint32_t)r, &prev, &inserted);
        first[r] = inserted ? (uint32_t)r : prev;
        nlive++;
        uint8_t tmp[8];
        const void *key;
        size_t len;
        if (st == OG_OK && probing && unique_probe(scols[0], r, tmp, &key, &len))
            st = og_strmap_insert(&probes, key, len, 0, &prev, &inserted);
    }
    for (size_t r = 0; r < ncommitted && st == OG_OK && nlive && !committed_missing; r++) {
        if (!committed_kept(pt, r) || og_vector_is_null(ccols[0], r)) continue;
        if (probing) {
            uint8_t tmp[8];
            const void *key;
            size_t len;
            uint32_t unused;
            unique_probe(ccols[0], r, tmp, &key, &len);
            if (!og_strmap_get(&probes, key, len, &unused)) continue;
        }
        uint32_t f;
        if (!unique_tuple(&b, ccols, k->ncols, r) || !og_strmap_get(&tuples, b.data, b.len, &f)) continue;
        if (holder[f] == UINT32_MAX) holder[f] = (uint32_t)r;
    }
    for (size_t r = 0; r < ns && st == OG_OK; r++) {
        if (first[r] == UINT32_MAX) continue;
        if (holder[first[r]] != UINT32_MAX) st = unique_error(p, pt, k, scols, ncommitted, holder[first[r]], r);
        else if (first[r] != r) st = unique_error(p, pt, k, scols, ncommitted, (uint32_t)ncommitted + first[r], r);
    }
    free(first);
    free(holder);
    og_buf_free(&b);
    og_strmap_free(&tuples);
    og_strmap_free(&probes);
    return st;
}

typedef struct card_ctx {
    og_plan_table *et;
    const og_strmap *deg;
    uint32_t *counts;
} card_ctx;

/* Counts one committed edge of an affected source, when the new image keeps it. */
static og_status card_count(void *ud, uint32_t edge, int is_dst, const char *id, size_t len)
{
    (void)is_dst;
    card_ctx *c = ud;
    uint32_t slot;
    if (committed_kept(c->et, edge) && og_strmap_get(c->deg, id, len, &slot)) c->counts[slot]++;
    return OG_OK;
}

/* @card: out-degree of every affected source within [min, max].  Affected: the sources of
 * staged edges and of removed committed ones.  Their committed out-edges are found through
 * og_plan_incident_edges (the base topology when at hand), so a one-edge write reads the
 * adjacency of one source, not the edge table. */
static og_status check_card(og_plan *p, og_plan_table *et)
{
    const og_cat_type *t = et->t;
    if (!t->card_written || (t->card_min == 0 && t->card_max == OG_CARD_UNBOUNDED)) return OG_OK;
    OG_TRY(og_plan_table_view(p, et));
    og_plan_table *from = &p->nodes[t->from_node];
    og_status st = OG_OK;
    /* affected sources, each with a count slot (its insertion index) */
    og_strmap affected;
    og_strmap_init(&affected);
    for (size_t r = 0; r < et->nstaged && st == OG_OK; r++) {
        size_t n;
        const char *s = (const char *)og_vector_get_bytes(&et->cols[1], r, &n);
        st = og_strmap_insert(&affected, s, n, (uint32_t)og_strmap_count(&affected), NULL, NULL);
    }
    size_t nc = og_tableview_rows(et->view);
    if (st == OG_OK && (et->overwrite || et->nremoved)) {
        /* the removed committed edges (every one under an overwrite) */
        size_t nrem = et->overwrite ? nc : et->nremoved, k = 0;
        uint32_t *rows = malloc((nrem ? nrem : 1) * sizeof *rows);
        if (!rows) st = og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t b = 0; st == OG_OK && b < (nc + 7) / 8 && k < nrem; b++) {
            if (!et->overwrite && !et->removed[b]) continue;
            for (size_t r = b * 8; r < nc && r < b * 8 + 8; r++)
                if (!committed_kept(et, r)) rows[k++] = (uint32_t)r;
        }
        og_vector srcs;
        memset(&srcs, 0, sizeof srcs);
        if (st == OG_OK && k) {
            st = og_plan_committed_values(et, OG_FIELD_SRC, rows, k, &srcs);
            for (size_t i = 0; st == OG_OK && i < srcs.len; i++) {
                size_t n;
                const char *s = (const char *)og_vector_get_bytes(&srcs, i, &n);
                st = og_strmap_insert(&affected, s, n, (uint32_t)og_strmap_count(&affected), NULL, NULL);
            }
            og_vector_free(&srcs);
        }
        free(rows);
    }
    size_t na = og_strmap_count(&affected);
    uint32_t *counts = calloc(na ? na : 1, sizeof *counts);
    if (st == OG_OK && !counts) st = og_err(OG_ERR_NOMEM, "out of memory");
    /* the new image's out-degree of affected sources: kept committed edges, live staged ones */
    card_ctx cc = {et, &affected, counts};
    if (st == OG_OK && na) st = og_plan_incident_edges(p, et, &affected, NULL, card_count, &cc);
    for (size_t r = 0; st == OG_OK && r < et->nstaged; r++) {
        if (og_plan_i_superseded(et, r)) continue;
        size_t len;
        uint32_t slot;
        const char *s = (const char *)og_vector_get_bytes(&et->cols[1], r, &len);
        if (og_strmap_get(&affected, s, len, &slot)) counts[slot]++;
    }
    for (size_t i = 0; i < na && st == OG_OK; i++) {
        const uint8_t *s;
        size_t len;
        uint32_t slot;
        og_strmap_entry(&affected, i, &s, &len, &slot);
        if (!in_new_image(p, from, (const char *)s, len)) continue; /* a deleted source */
        uint32_t c = counts[slot];
        if (c < t->card_min)
            st = og_err(OG_ERR_CONSTRAINT, "@card violation on edge %s: source '%.*s' has %u edges (min %u)", t->name,
                        (int)len, (const char *)s, c, t->card_min);
        else if (t->card_max != OG_CARD_UNBOUNDED && c > t->card_max)
            st = og_err(OG_ERR_CONSTRAINT, "@card violation on edge %s: source '%.*s' has %u edges (max %u)", t->name,
                        (int)len, (const char *)s, c, t->card_max);
    }
    og_strmap_free(&affected);
    free(counts);
    return st;
}

static og_status validate(og_plan *p)
{
    OG_TRY(og_plan_i_join(p)); /* its endpoint lookups read the ids indexed below */
    for (size_t i = 0; i < p->cat->nnodes; i++) OG_TRY(og_plan_index_ids(&p->nodes[i]));
    for (size_t i = 0; i < p->cat->nnodes; i++) {
        og_plan_table *pt = &p->nodes[i];
        if (!pt->nstaged) continue;
        for (size_t c = 0; c < pt->t->ncons; c++)
            if (pt->t->cons[c].kind == OG_CONS_UNIQUE) OG_TRY(check_unique(p, pt, &pt->t->cons[c]));
    }
    for (size_t i = 0; i < p->cat->nedges; i++) {
        og_plan_table *et = &p->edges[i];
        const og_cat_type *t = et->t;
        int endpoint_touched = p->nodes[t->from_node].touched || p->nodes[t->to_node].touched;
        if (!et->touched && !endpoint_touched) continue;
        OG_TRY(check_edges_ri(p, et));
        if (et->nstaged)
            for (size_t c = 0; c < t->ncons; c++)
                if (t->cons[c].kind == OG_CONS_UNIQUE) OG_TRY(check_unique(p, et, &t->cons[c]));
        if (et->touched) OG_TRY(check_card(p, et));
    }
    return OG_OK;
}

og_status og_plan_validate(og_plan *p)
{
    OG_TRY(og_plan_lookup_status(p));
    og_status st = validate(p);
    /* A failed read outranks what was concluded from it (a "dangling" endpoint, a missing key). */
    og_status failed = og_plan_lookup_status(p);
    return failed ? failed : st;
}

