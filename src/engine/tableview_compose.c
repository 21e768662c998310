/*
 * tableview_compose.c — the topology of a new version triple composed from an older persisted
 * one, without rebuilding or writing anything (topology.h og_topology_compose).
 *
 * Why.  A topology file is valid for one (edge, source, destination) version triple, so after
 * any commit that touches one of the three tables the first traversal of a process needed a
 * new one: a delta build (tableview_delta.c) still reads the old 96 MB file back, renumbers
 * 5M pairs, builds and writes a whole new file — ~1–2 s of CPU at 5M edges for a one-row
 * write, paid by whichever process traverses first.  Composition costs what changed: the
 * older file stays mapped as it is, and rows are translated on the fly through row maps
 * (rowmap.h) built from deletion lists.
 *
 * What the patch holds (in the new numbering), besides what the base gives translated:
 *   - every live edge of an edge fragment the base lacks (appended, or a compaction's output),
 *     its src/dst ids read and looked up in the new node views, as a full build maps them;
 *   - every live edge at a node row that is gone from the base (deleted — its edges were then
 *     deleted too, normally —, re-inserted by an update or an upsert, or compacted away),
 *     found through the base's adjacency of that row, its endpoint resolved by its id once
 *     per node.
 * A base entry whose edge or neighbour is gone is dropped when read; one at a moved neighbour
 * comes back through the patch.
 *
 * When it declines (the caller then builds a delta or in full, and persists it): no persisted
 * base; a base that left out edges (an endpoint then absent: finding which ones could come
 * back means reading all of it); a fragment both versions hold whose new deletion file lacks
 * a row the old one had (rows never come back in one table's history, but a base from
 * another branch may differ); edge fragments reordered (entries must stay in edge-row order);
 * or more rows to resolve than COMPOSE_MAX_CHANGES or a quarter of the edges (past
 * COMPOSE_FLOOR) — then a persisted delta is worth its one-off cost, and the next process
 * maps it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tableview_internal.h"
#include "index/csr.h"
#include "util/error.h"

#define COMPOSE_MAX_CHANGES 16384 /* gone node rows + moved and appended edges resolved */
#define COMPOSE_FLOOR 1024        /* below this many, compose whatever share of the edges it is */
#define NONE OG_ROW_NONE

static _Atomic size_t composed;
size_t og_tableview_composed_topologies(void) { return atomic_load(&composed); }

/* Declines: the caller builds instead.  Not an error anyone sees. */
static og_status decline(const char *why, const og_tableview *v)
{
    return og_err(OG_ERR_CORRUPT, "composed topology: %s (table %s version %llu)", why, og_tableview_dir(v),
                  (unsigned long long)og_tableview_version(v));
}

/* The row map from old to cur: one piece per old fragment, kept at its new start less the
 * rows deleted since, or gone. */
static og_status rowmap_between(og_tableview *old, og_tableview *cur, og_rowmap **out)
{
    *out = NULL;
    size_t nf = old->m.nfragments;
    size_t *match = malloc((nf ? nf : 1) * sizeof *match);
    if (!match) return og_err(OG_ERR_NOMEM, "composed topology: out of memory");
    og_rowmap *m = NULL;
    og_status st = og_tv_match_fragments(&old->m, &cur->m, match);
    if (st == OG_OK) st = og_rowmap_new(&m, (uint32_t)old->nrows, (uint32_t)cur->nrows);
    uint32_t *gone = NULL;
    for (size_t i = 0; st == OG_OK && i < nf; i++) {
        uint32_t r0 = (uint32_t)old->frag_start[i], n_old = (uint32_t)(old->frag_start[i + 1] - r0);
        size_t j = match[i];
        if (j == SIZE_MAX) {
            st = og_rowmap_add(m, r0, n_old, NONE, NULL, 0);
            continue;
        }
        uint32_t *dold = NULL, *dcur = NULL;
        size_t nold = 0, ncur = 0, ngone = 0, a = 0;
        st = og_tv_deleted_offsets(old, i, &dold, &nold);
        if (st == OG_OK) st = og_tv_deleted_offsets(cur, j, &dcur, &ncur);
        if (st == OG_OK && ncur && !(gone = realloc(gone, ncur * sizeof *gone)))
            st = og_err(OG_ERR_NOMEM, "composed topology: out of memory");
        /* each offset deleted now: deleted before too (skip), or gone at its old rank */
        for (size_t b = 0; st == OG_OK && b < ncur; b++) {
            while (a < nold && dold[a] < dcur[b]) a++;
            if (a < nold && dold[a] == dcur[b]) continue;
            gone[ngone++] = dcur[b] - (uint32_t)a; /* its rank among the old live rows */
        }
        uint32_t n_cur = (uint32_t)(cur->frag_start[j + 1] - cur->frag_start[j]);
        if (st == OG_OK && (ncur - ngone != nold || n_old - ngone != n_cur))
            st = decline("a row deleted before is live again", cur);
        if (st == OG_OK) st = og_rowmap_add(m, r0, n_old, (uint32_t)cur->frag_start[j], gone, (uint32_t)ngone);
        free(dold);
        free(dcur);
    }
    free(gone);
    free(match);
    if (st == OG_OK) st = og_rowmap_finish(m);
    if (st != OG_OK) {
        og_rowmap_free(m);
        return st;
    }
    *out = m;
    return OG_OK;
}

/* A live edge of the base at a gone node row: its new edge row, its old endpoints. */
typedef struct moved {
    uint32_t e, s, d;
} moved;

typedef struct gather {
    const og_topology *base;
    const og_rowmap *emap;
    og_dir dir;
    moved *v;
    size_t n, cap, max;
    uint32_t *gone; /* base edge rows gone with a gone endpoint (repeats when both are) */
    size_t ngone, gone_cap;
    og_reach scratch;
} gather;

/* og_rowmap_each_gone: the live edges at gone row `old` on the gather's side. */
static og_status gather_at(void *ctx, uint32_t old)
{
    gather *g = ctx;
    const uint32_t *nb, *ed;
    size_t k;
    OG_TRY(og_topology_edges(g->base, g->dir, old, &g->scratch, &nb, &ed, &k));
    for (size_t i = 0; i < k; i++) {
        uint32_t e = og_rowmap_fwd(g->emap, ed[i]);
        if (e == NONE) { /* deleted with its node: a cascade */
            if (g->ngone == g->gone_cap) {
                size_t nc = g->gone_cap ? 2 * g->gone_cap : 64;
                uint32_t *x = realloc(g->gone, nc * sizeof *x);
                if (!x) return og_err(OG_ERR_NOMEM, "composed topology: out of memory");
                g->gone = x, g->gone_cap = nc;
            }
            g->gone[g->ngone++] = ed[i];
            continue;
        }
        if (g->n == g->max) return OG_ERR_LIMIT; /* (no message: the caller declines) */
        if (g->n == g->cap) {
            size_t nc = g->cap ? 2 * g->cap : 64;
            moved *x = realloc(g->v, nc * sizeof *x);
            if (!x) return og_err(OG_ERR_NOMEM, "composed topology: out of memory");
            g->v = x, g->cap = nc;
        }
        g->v[g->n++] = g->dir == OG_DIR_OUT ? (moved){e, old, nb[i]} : (moved){e, nb[i], old};
    }
    return OG_OK;
}

static int cmp_moved(const void *a, const void *b)
{
    uint32_t x = ((const moved *)a)->e, y = ((const moved *)b)->e;
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Old node rows (ascending, distinct) and their rows in the new version, found by id. */
typedef struct resolved {
    uint32_t *old, *cur;
    size_t n, at;
    og_tableview *nodes;
} resolved;

static og_status use_ids(void *ctx, const uint32_t *rows, size_t k, const og_vector *cols)
{
    (void)rows;
    resolved *r = ctx;
    for (size_t i = 0; i < k; i++) OG_TRY(og_tv_lookup_id(r->nodes, &cols[0], i, &r->cur[r->at++]));
    return OG_OK;
}

/* The new row of old row `old` of a node table: through the map when kept, else by its id. */
static uint32_t node_row(const og_rowmap *map, const resolved *r, uint32_t old)
{
    uint32_t cur = og_rowmap_fwd(map, old);
    if (cur != NONE) return cur;
    const uint32_t *hit = r->n ? bsearch(&old, r->old, r->n, sizeof old, cmp_u32) : NULL;
    return hit ? r->cur[hit - r->old] : NONE;
}

/* Resolves the gone rows of `old` (node view) that moved edges name on one side (both sides
 * when both), by their ids in cur. */
static og_status resolve(og_tableview *old, og_tableview *cur, const og_rowmap *map, const moved *mv, size_t nm,
                         int side, int both, resolved *r)
{
    memset(r, 0, sizeof *r);
    r->nodes = cur;
    r->old = malloc((2 * nm + 1) * sizeof *r->old);
    if (!r->old) return og_err(OG_ERR_NOMEM, "composed topology: out of memory");
    for (size_t i = 0; i < nm; i++)
        for (int s = 0; s < 2; s++) {
            if (!both && s != side) continue;
            uint32_t row = s ? mv[i].d : mv[i].s;
            if (og_rowmap_fwd(map, row) == NONE) r->old[r->n++] = row;
        }
    qsort(r->old, r->n, sizeof *r->old, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (!k || r->old[k - 1] != r->old[i]) r->old[k++] = r->old[i];
    r->n = k;
    if (!(r->cur = malloc((k ? k : 1) * sizeof *r->cur)))
        return og_err(OG_ERR_NOMEM, "composed topology: out of memory");
    static const char *const id[] = {"id"};
    OG_TRY(k ? og_tv_read_rows(old, id, 1, r->old, k, use_ids, r) : OG_OK);
    return r->at == k ? OG_OK : decline("ids read disagree with the rows asked", old);
}

/* The patch being built: (src, dst, edge) rows in the new numbering. */
typedef struct patch {
    uint32_t *s, *d, *e;
    size_t n, cap;
    og_tableview *src, *dst;
} patch;

static og_status patch_push(patch *p, uint32_t s, uint32_t d, uint32_t e)
{
    if (s == NONE || d == NONE) return OG_OK; /* an endpoint without a live row: skipped, as a build does */
    if (p->n == p->cap) {
        size_t nc = p->cap ? 2 * p->cap : 64;
        uint32_t *a = realloc(p->s, nc * sizeof *a);
        if (a) p->s = a;
        uint32_t *b = a ? realloc(p->d, nc * sizeof *b) : NULL;
        if (b) p->d = b;
        uint32_t *c = b ? realloc(p->e, nc * sizeof *c) : NULL;
        if (!c) return og_err(OG_ERR_NOMEM, "composed topology: out of memory");
        p->e = c, p->cap = nc;
    }
    p->s[p->n] = s, p->d[p->n] = d, p->e[p->n++] = e;
    return OG_OK;
}

static og_status use_new_edges(void *ctx, const uint32_t *rows, size_t k, const og_vector *cols)
{
    patch *p = ctx;
    for (size_t i = 0; i < k; i++) {
        uint32_t s, d;
        OG_TRY(og_tv_lookup_id(p->src, &cols[0], i, &s));
        OG_TRY(og_tv_lookup_id(p->dst, &cols[1], i, &d));
        OG_TRY(patch_push(p, s, d, rows[i]));
    }
    return OG_OK;
}

/* The live rows of edges in fragments the base lacks (ascending), at most `max` (*over). */
static og_status new_edge_rows(og_tableview *e0, og_tableview *edges, uint32_t **out, size_t *n, size_t max, int *over)
{
    *out = NULL;
    *n = 0;
    size_t nf = e0->m.nfragments, nc = edges->m.nfragments;
    size_t *match = malloc((nf ? nf : 1) * sizeof *match);
    uint8_t *held = calloc(nc ? nc : 1, 1);
    og_status st = match && held ? og_tv_match_fragments(&e0->m, &edges->m, match)
                                 : og_err(OG_ERR_NOMEM, "composed topology: out of memory");
    for (size_t i = 0; st == OG_OK && i < nf; i++)
        if (match[i] != SIZE_MAX) held[match[i]] = 1;
    size_t count = 0;
    for (size_t j = 0; st == OG_OK && j < nc; j++)
        if (!held[j]) count += edges->frag_start[j + 1] - edges->frag_start[j];
    if (st == OG_OK && count > max) *over = 1;
    uint32_t *rows = NULL;
    if (st == OG_OK && !*over && !(rows = malloc((count ? count : 1) * sizeof *rows)))
        st = og_err(OG_ERR_NOMEM, "composed topology: out of memory");
    size_t k = 0;
    for (size_t j = 0; st == OG_OK && !*over && j < nc; j++)
        if (!held[j])
            for (size_t r = edges->frag_start[j]; r < edges->frag_start[j + 1]; r++) rows[k++] = (uint32_t)r;
    free(match);
    free(held);
    if (st != OG_OK || *over) {
        free(rows);
        return st;
    }
    *out = rows;
    *n = k;
    return OG_OK;
}

/* Composes from the persisted topology of (ev, sv, dv); *out NULL when it declines. */
static og_status try_compose(og_tableview *edges, og_tableview *src, og_tableview *dst, uint64_t ev, uint64_t sv,
                             uint64_t dv, og_topology **out)
{
    *out = NULL;
    og_tableview *e0 = NULL, *s0 = NULL, *d0 = NULL;
    og_topology *base = NULL;
    og_rowmap *emap = NULL, *smap = NULL, *dmap = NULL;
    gather g = {0};
    og_reach_init(&g.scratch);
    resolved rs = {0}, rd = {0};
    patch p = {.src = src, .dst = dst};
    uint32_t *fresh = NULL;
    size_t nfresh = 0;
    int over = 0, same_nodes = og_tv_same_view(src, dst) && sv == dv;
    og_status st = og_tableview_open(&e0, edges->table, ev);
    if (st == OG_OK) st = og_tableview_open(&s0, src->table, sv);
    if (st == OG_OK) {
        if (same_nodes) d0 = og_tableview_retain(s0);
        else st = og_tableview_open(&d0, dst->table, dv);
    }
    if (st == OG_OK && !(base = og_tv_open_topology(e0, s0, d0, 1))) st = decline("no usable base file", e0);
    if (st == OG_OK && og_topology_edge_count(base) != e0->nrows) st = decline("the base left edges out", e0);
    if (st == OG_OK) st = rowmap_between(e0, edges, &emap);
    if (st == OG_OK && !og_rowmap_is_monotone(emap)) st = decline("edge fragments were reordered", edges);
    if (st == OG_OK) st = rowmap_between(s0, src, &smap);
    if (st == OG_OK) {
        if (same_nodes) dmap = smap;
        else st = rowmap_between(d0, dst, &dmap);
    }
    /* past a quarter of the edges, the base says little: a persisted build pays for itself */
    size_t budget = edges->nrows / 4 > COMPOSE_FLOOR ? edges->nrows / 4 : COMPOSE_FLOOR;
    if (budget > COMPOSE_MAX_CHANGES) budget = COMPOSE_MAX_CHANGES;
    if (st == OG_OK) {
        size_t gone = og_rowmap_gone_count(smap) + (same_nodes ? 0 : og_rowmap_gone_count(dmap));
        if (gone > budget) over = 1;
        else budget -= gone;
    }
    /* the live edges at gone node rows, each once */
    g.base = base, g.emap = emap, g.max = budget;
    if (st == OG_OK && !over) {
        g.dir = OG_DIR_OUT;
        st = og_rowmap_each_gone(smap, gather_at, &g);
        g.dir = OG_DIR_IN;
        if (st == OG_OK) st = og_rowmap_each_gone(dmap, gather_at, &g);
        if (st == OG_ERR_LIMIT) over = 1, st = OG_OK;
    }
    size_t nmoved = 0, ngone_edges = 0;
    if (st == OG_OK && !over && g.ngone) { /* distinct cascaded edges: all of the gone ones? */
        qsort(g.gone, g.ngone, sizeof *g.gone, cmp_u32);
        for (size_t i = 0; i < g.ngone; i++) ngone_edges += !i || g.gone[i] != g.gone[i - 1];
    }
    if (st == OG_OK && !over) {
        if (g.n) qsort(g.v, g.n, sizeof *g.v, cmp_moved);
        for (size_t i = 0; i < g.n; i++)
            if (!nmoved || g.v[nmoved - 1].e != g.v[i].e) g.v[nmoved++] = g.v[i];
        budget -= nmoved;
        st = new_edge_rows(e0, edges, &fresh, &nfresh, budget, &over);
    }
    if (st == OG_OK && !over) st = resolve(s0, src, smap, g.v, nmoved, 0, same_nodes, &rs);
    if (st == OG_OK && !over && !same_nodes) st = resolve(d0, dst, dmap, g.v, nmoved, 1, 0, &rd);
    for (size_t i = 0; st == OG_OK && !over && i < nmoved; i++)
        st = patch_push(&p, node_row(smap, &rs, g.v[i].s), node_row(dmap, same_nodes ? &rs : &rd, g.v[i].d), g.v[i].e);
    static const char *const ends[] = {"src", "dst"};
    if (st == OG_OK && !over && nfresh) st = og_tv_read_rows(edges, ends, 2, fresh, nfresh, use_new_edges, &p);
    if (st == OG_OK && !over) {
        size_t n_edges = og_rowmap_kept_count(emap) - nmoved + p.n;
        int follow = ngone_edges == og_rowmap_gone_count(emap);
        st = og_topology_compose(out, base, smap, dmap, emap, follow, (uint32_t)src->nrows, (uint32_t)dst->nrows,
                                 n_edges, p.s, p.d, p.e, p.n);
        base = NULL, smap = dmap = emap = NULL; /* taken */
    }
    if (st == OG_OK && over) st = decline("too much changed since the base", edges);
    og_reach_free(&g.scratch);
    free(g.v);
    free(g.gone);
    free(rs.old), free(rs.cur), free(rd.old), free(rd.cur);
    free(p.s), free(p.d), free(p.e);
    free(fresh);
    og_topology_free(base);
    if (dmap != smap) og_rowmap_free(dmap);
    og_rowmap_free(smap);
    og_rowmap_free(emap);
    og_tableview_release(e0);
    og_tableview_release(s0);
    og_tableview_release(d0);
    return st;
}

og_status og_tv_compose_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, og_topology **out)
{
    *out = NULL;
    uint64_t(*cs)[3];
    size_t nc;
    og_tv_older_topologies(edges, src, dst, &cs, &nc);
    og_status st = OG_OK;
    for (size_t k = 0; k < nc; k++) {
        /* the views' own triple is the file the caller missed or could not use */
        if (cs[k][0] == edges->m.version && cs[k][1] == src->m.version && cs[k][2] == dst->m.version) continue;
        st = try_compose(edges, src, dst, cs[k][0], cs[k][1], cs[k][2], out);
        if (st == OG_OK && *out) atomic_fetch_add(&composed, 1);
        break; /* the newest base only: an older one has more to compose */
    }
    free(cs);
    return st;
}
