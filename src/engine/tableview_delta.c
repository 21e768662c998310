/*
 * tableview_delta.c — a missing topology built from an older persisted one plus what changed
 * since (tableview.h og_tableview_delta_topologies), identical to a full build.
 *
 * Why.  A topology is valid for one (edge, source, destination) version triple, so every
 * commit that touches one of the three tables needs a new one, and a full build reads the
 * whole src/dst columns and looks up 2 x E endpoints (1.7 s of CPU and ~430 MB at 5M edges) —
 * paid by the first traversal after a one-row delete.  Most commits leave most fragments as
 * they were, and a fragment that is still there holds the same rows.
 *
 * How.  Rows are dense live-row numbers: fragments in manifest order, live rows by offset.  A
 * fragment of the older version that the new one still names (same id, same data files, same
 * physical rows) holds the same rows at the same offsets, so a row live in both versions
 * moves to the fragment's new start plus its rank among the live rows under the new deletion
 * file.  Hence:
 *   - node rows (per node table): old -> new by position, or "moved" when the row is deleted
 *     now or its fragment is gone (compacted, dropped);
 *   - edge rows: old -> new by position, or gone;
 *   - every old pair, read back out of the old CSR, of an edge that is still there is mapped
 *     through the node maps;
 *   - the rest is "read": an edge at a moved endpoint (an update re-inserts the node under the
 *     same id in a new fragment), an edge the old topology skipped (an endpoint then absent),
 *     and every live edge of a fragment the old version lacks (appended, or a compaction's
 *     output).  Their src/dst ids are read (one og_table_take per fragment) and looked up in
 *     the new node views (og_tableview_find_id: the first live row, as the full build's id
 *     map).
 * The pairs then go through og_topology_build in new edge-row order, as a full build's do.
 *
 * What it assumes: a node table version has at most one live row per id (the engine's key
 * invariant: an update deletes the old row, an insert of a live id is refused), so a kept
 * live row is the row its id resolves to whatever the fragment order (a compaction's output
 * takes the place of its first input, so new fragments are not only at the end).  Nothing is
 * assumed about how the base's versions relate to the new ones (an ancestor, another branch):
 * fragments are matched by id and data files only.
 *
 * Bounds.  The reads are bounded (DELTA_MAX_READS, and half the edges past DELTA_READS_FLOOR);
 * beyond that — a big append, `optimize` rewriting everything — a full build is as cheap.
 * Everything is derived (INVARIANTS.md 7): a base file that is damaged, foreign or of other
 * row counts, a version that is gone, a failed read or counts that disagree make the caller
 * build in full; every value read out of the mapped file is bounds-checked first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tableview_internal.h"
#include "index/csr.h"
#include "util/error.h"

#define DELTA_MAX_READS 262144 /* edges whose endpoints are looked up; above, a full build */
#define DELTA_READS_FLOOR 1024 /* up to this many reads, a delta even when they are most edges */
#define DELTA_MAX_BASES 2      /* persisted topologies tried, newest first (each opens 3 versions) */
#define PENDING (UINT32_MAX - 1) /* an edge's endpoints not known yet (live rows stay below) */

static _Atomic size_t delta_builds;
size_t og_tableview_delta_topologies(void) { return atomic_load(&delta_builds); }

/* An error that only means "not usable as a base": the caller builds in full. */
static og_status unusable(const char *why, const og_tableview *v)
{
    return og_err(OG_ERR_CORRUPT, "delta topology: %s (table %s version %llu)", why, og_tableview_dir(v),
                  (unsigned long long)og_tableview_version(v));
}

/* 1 when a and b hold the same rows: same id, data files and physical rows. */
static int same_fragment(const og_fragment *a, const og_fragment *b)
{
    if (a->id != b->id || a->physical_rows != b->physical_rows || a->nfiles != b->nfiles) return 0;
    for (size_t k = 0; k < a->nfiles; k++)
        if (!a->files[k].path || !b->files[k].path || strcmp(a->files[k].path, b->files[k].path) != 0) return 0;
    return 1;
}

typedef struct frag_ix {
    uint64_t id;
    size_t i;
} frag_ix;

static int cmp_frag_ix(const void *a, const void *b)
{
    uint64_t x = ((const frag_ix *)a)->id, y = ((const frag_ix *)b)->id;
    return x < y ? -1 : x > y;
}

og_status og_tv_match_fragments(const og_manifest *old, const og_manifest *cur, size_t *match)
{
    frag_ix *ix = malloc((cur->nfragments ? cur->nfragments : 1) * sizeof *ix);
    if (!ix) return og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    for (size_t j = 0; j < cur->nfragments; j++) ix[j] = (frag_ix){cur->fragments[j].id, j};
    qsort(ix, cur->nfragments, sizeof *ix, cmp_frag_ix);
    for (size_t i = 0; i < old->nfragments; i++) {
        frag_ix key = {old->fragments[i].id, 0};
        const frag_ix *hit = cur->nfragments ? bsearch(&key, ix, cur->nfragments, sizeof *ix, cmp_frag_ix) : NULL;
        match[i] = hit && same_fragment(&old->fragments[i], &cur->fragments[hit->i]) ? hit->i : SIZE_MAX;
    }
    free(ix);
    return OG_OK;
}

og_status og_tv_deleted_offsets(og_tableview *v, size_t fi, uint32_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!v->m.fragments[fi].deletion.present) return OG_OK;
    const roaring_bitmap_t *del;
    OG_TRY(og_tv_frag_deletions(v, fi, &del));
    uint64_t card = roaring_bitmap_get_cardinality(del);
    if (!card) return OG_OK;
    uint32_t *d = malloc((size_t)card * sizeof *d);
    if (!d) return og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    roaring_bitmap_to_uint32_array(del, d);
    *out = d;
    *n = (size_t)card;
    return OG_OK;
}

/* map[r] for every row r of old: its row in cur, or OG_ROW_NONE when it is not live there in
 * the same fragment (deleted, or its fragment is gone).  *kept = rows mapped.  Free *out. */
static og_status remap_rows(og_tableview *old, og_tableview *cur, uint32_t **out, size_t *kept)
{
    *out = NULL;
    *kept = 0;
    size_t nf = old->m.nfragments;
    size_t *match = malloc((nf ? nf : 1) * sizeof *match);
    uint32_t *map = malloc((old->nrows ? old->nrows : 1) * sizeof *map);
    og_status st = match && map ? og_tv_match_fragments(&old->m, &cur->m, match)
                                : og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    for (size_t i = 0; st == OG_OK && i < nf; i++) {
        size_t r0 = old->frag_start[i], n_old = old->frag_start[i + 1] - r0, j = match[i];
        if (!n_old) continue;
        if (j == SIZE_MAX) {
            for (size_t k = 0; k < n_old; k++) map[r0 + k] = OG_ROW_NONE;
            continue;
        }
        size_t c0 = cur->frag_start[j], n_cur = cur->frag_start[j + 1] - c0;
        uint64_t phys = old->m.fragments[i].physical_rows;
        uint32_t *dold = NULL, *dcur = NULL;
        size_t nold = 0, ncur = 0;
        st = og_tv_deleted_offsets(old, i, &dold, &nold);
        if (st == OG_OK) st = og_tv_deleted_offsets(cur, j, &dcur, &ncur);
        /* one pass over the offsets, both deletion lists ascending */
        size_t a = 0, b = 0, k_old = 0, k_cur = 0;
        for (uint64_t off = 0; st == OG_OK && off < phys; off++) {
            int live_old = !(a < nold && dold[a] == off), live_cur = !(b < ncur && dcur[b] == off);
            a += !live_old, b += !live_cur;
            if (live_old) {
                if (k_old == n_old || (live_cur && k_cur == n_cur)) break;
                map[r0 + k_old++] = live_cur ? (uint32_t)(c0 + k_cur) : OG_ROW_NONE;
                *kept += live_cur;
            }
            k_cur += live_cur;
        }
        free(dold);
        free(dcur);
        if (st == OG_OK && (k_old != n_old || k_cur != n_cur))
            st = unusable("a fragment's deletion file disagrees with its deleted-row count", old);
    }
    free(match);
    if (st != OG_OK) {
        free(map);
        return st;
    }
    *out = map;
    return OG_OK;
}

/* An edge still there whose old pair has an endpoint that moved: its new row and old pair. */
typedef struct moved_edge {
    uint32_t e, s, d;
} moved_edge;

typedef struct moved_list {
    moved_edge *v;
    size_t n, cap;
} moved_list;

/* The old pairs out of the base's CSR: each edge still there gets its new edge row and its
 * endpoints through smap / dmap; one at a moved endpoint goes to *moved (at most `max`: *over
 * past it); one the base skipped stays PENDING.  0 when the arrays are inconsistent (a damaged
 * file) or out of memory. */
static int walk_base(const og_csr_arrays *a, const uint32_t *emap, const uint32_t *smap, const uint32_t *dmap,
                     uint32_t *src_row, uint32_t *dst_row, moved_list *moved, size_t max, int *over)
{
    uint8_t *seen = calloc((size_t)(a->edge_rows / 8 + 1), 1);
    if (!seen) return 0;
    int ok = 1;
    for (uint64_t sr = 0; ok && !*over && sr < a->n_src; sr++) {
        uint64_t lo = a->off[0][sr], hi = a->off[0][sr + 1];
        if (lo > hi || hi > a->n_edges) { /* bounds first, then read */
            ok = 0;
            break;
        }
        for (uint64_t k = lo; k < hi; k++) {
            uint32_t e = a->edge[0][k], d = a->nbr[0][k];
            if (e >= a->edge_rows || d >= a->n_dst || (seen[e >> 3] >> (e & 7) & 1)) {
                ok = 0;
                break;
            }
            seen[e >> 3] |= (uint8_t)(1u << (e & 7));
            uint32_t nr = emap[e];
            if (nr == OG_ROW_NONE) continue; /* the edge is gone */
            uint32_t s = smap[sr], t = dmap[d];
            if (s != OG_ROW_NONE && t != OG_ROW_NONE) {
                src_row[nr] = s, dst_row[nr] = t;
                continue;
            }
            if (moved->n == max) {
                *over = 1;
                break;
            }
            if (moved->n == moved->cap) {
                size_t nc = moved->cap ? 2 * moved->cap : 256;
                moved_edge *g = realloc(moved->v, nc * sizeof *g);
                if (!g) {
                    ok = 0;
                    break;
                }
                moved->v = g, moved->cap = nc;
            }
            moved->v[moved->n++] = (moved_edge){nr, (uint32_t)sr, d};
        }
    }
    free(seen);
    return ok;
}

/* Takes of up to this many rows between two wanted ones share one og_table_take (a take reads
 * the range between its first and last offset): scattered rows cost a few pages each, dense
 * ones (a new fragment) one pass. */
#define TAKE_GAP 256

og_status og_tv_read_rows(og_tableview *v, const char *const *names, size_t nf, const uint32_t *rows, size_t n,
                          og_tv_rows_fn use, void *ctx)
{
    int32_t fids[2];
    for (size_t c = 0; c < nf; c++) {
        long idx = og_tv_sys_field_index(&v->m.schema, names[c]);
        if (idx < 0) return og_err(OG_ERR_INVALID, "table %s has no %s field", og_tableview_dir(v), names[c]);
        fids[c] = v->m.schema.fields[idx].id;
    }
    uint32_t *offs = malloc((n ? n : 1) * sizeof *offs);
    if (!offs) return og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    og_status st = OG_OK;
    for (size_t i = 0; st == OG_OK && i < n;) {
        size_t fi = og_tv_frag_of_row(v, rows[i]), j = i;
        const og_fragment *f = &v->m.fragments[fi];
        while (j < n && rows[j] < v->frag_start[fi + 1]) j++;
        uint32_t *del = NULL;
        size_t nd = 0;
        st = og_tv_deleted_offsets(v, fi, &del, &nd);
        /* the q-th live offset is q + p, p the deleted offsets at or before it */
        for (size_t k = i, p = 0; st == OG_OK && k < j; k++) {
            uint64_t q = rows[k] - v->frag_start[fi];
            while (p < nd && del[p] <= q + p) p++;
            if (q + p >= f->physical_rows) st = unusable("a fragment's deletion file disagrees with its rows", v);
            else offs[k] = (uint32_t)(q + p);
        }
        free(del);
        for (size_t a = i; st == OG_OK && a < j;) {
            size_t b = a + 1;
            while (b < j && offs[b] - offs[b - 1] <= TAKE_GAP) b++;
            og_vector cols[2];
            st = og_table_take(v->table, &v->m, f->id, offs + a, b - a, fids, nf, cols);
            if (st != OG_OK) break;
            for (size_t c = 0; c < nf && st == OG_OK; c++)
                if (cols[c].len != b - a || cols[c].type.id != OG_T_STRING)
                    st = og_err(OG_ERR_CORRUPT, "table %s: fragment %llu's %s disagrees with its rows",
                                og_tableview_dir(v), (unsigned long long)f->id, names[c]);
            if (st == OG_OK) st = use(ctx, rows + a, b - a, cols);
            for (size_t c = 0; c < nf; c++) og_vector_free(&cols[c]);
            a = b;
        }
        i = j;
    }
    free(offs);
    return st;
}

og_status og_tv_lookup_id(og_tableview *nodes, const og_vector *ids, size_t i, uint32_t *row)
{
    *row = OG_ROW_NONE;
    if (og_vector_is_null(ids, i)) return OG_OK;
    size_t len;
    const char *id = (const char *)og_vector_get_bytes(ids, i, &len);
    og_status st = og_tableview_lookup_id(nodes, id, len, row);
    if (st == OG_OK && *row == OG_TABLEVIEW_NO_ROW) *row = OG_ROW_NONE;
    return st;
}

typedef struct edge_ctx {
    og_tableview *src, *dst;
    uint32_t *src_row, *dst_row;
} edge_ctx;

static og_status use_edges(void *ctx, const uint32_t *rows, size_t k, const og_vector *cols)
{
    edge_ctx *c = ctx;
    og_status st = OG_OK;
    for (size_t i = 0; i < k && st == OG_OK; i++) {
        st = og_tv_lookup_id(c->src, &cols[0], i, &c->src_row[rows[i]]);
        if (st == OG_OK) st = og_tv_lookup_id(c->dst, &cols[1], i, &c->dst_row[rows[i]]);
    }
    return st;
}

typedef struct node_ctx {
    og_tableview *cur;
    uint32_t *map;
} node_ctx;

static og_status use_nodes(void *ctx, const uint32_t *rows, size_t k, const og_vector *cols)
{
    node_ctx *c = ctx;
    og_status st = OG_OK;
    for (size_t i = 0; i < k && st == OG_OK; i++) st = og_tv_lookup_id(c->cur, &cols[0], i, &c->map[rows[i]]);
    return st;
}

/* The rows of old (ascending) that moved and that an edge of `moved` still names (the source
 * side when !is_dst, the destination side else; both when both is set), each once. */
static og_status wanted_rows(const moved_list *moved, const uint32_t *map, size_t nrows, int is_dst, int both,
                             uint32_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    uint8_t *want = calloc(nrows / 8 + 1, 1);
    if (!want) return og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    size_t count = 0;
    for (size_t i = 0; i < moved->n; i++)
        for (int side = 0; side < 2; side++) {
            if (!both && side != is_dst) continue;
            uint32_t r = side ? moved->v[i].d : moved->v[i].s;
            if (map[r] != OG_ROW_NONE || (want[r >> 3] >> (r & 7) & 1)) continue;
            want[r >> 3] |= (uint8_t)(1u << (r & 7));
            count++;
        }
    uint32_t *rows = malloc((count ? count : 1) * sizeof *rows);
    if (!rows) {
        free(want);
        return og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    }
    size_t k = 0;
    for (size_t r = 0; r < nrows && k < count; r++)
        if (want[r >> 3] >> (r & 7) & 1) rows[k++] = (uint32_t)r;
    free(want);
    *out = rows;
    *n = count;
    return OG_OK;
}

/* Resolves the moved rows of old that edges still name: their ids, read in old, looked up in
 * cur (the row an update re-inserted, or none) — written into map.  *reads += their count. */
static og_status resolve_moved(og_tableview *old, og_tableview *cur, uint32_t *map, const moved_list *moved, int is_dst,
                               int both, size_t *reads)
{
    uint32_t *rows;
    size_t n;
    OG_TRY(wanted_rows(moved, map, old->nrows, is_dst, both, &rows, &n));
    *reads += n;
    static const char *const id[] = {"id"};
    node_ctx c = {cur, map};
    og_status st = n ? og_tv_read_rows(old, id, 1, rows, n, use_nodes, &c) : OG_OK;
    free(rows);
    return st;
}

/* Resolves every PENDING edge (in a fragment the base lacks, or skipped by it) by its ids. */
static og_status read_pending(og_tableview *edges, og_tableview *src, og_tableview *dst, uint32_t *src_row,
                              uint32_t *dst_row, size_t pending)
{
    uint32_t *rows = malloc((pending ? pending : 1) * sizeof *rows);
    if (!rows) return og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    size_t k = 0;
    for (size_t r = 0; r < edges->nrows && k < pending; r++)
        if (src_row[r] == PENDING) rows[k++] = (uint32_t)r;
    static const char *const ends[] = {"src", "dst"};
    edge_ctx c = {src, dst, src_row, dst_row};
    og_status st = og_tv_read_rows(edges, ends, 2, rows, k, use_edges, &c);
    free(rows);
    return st;
}

int og_tv_same_view(og_tableview *a, og_tableview *b)
{
    return a == b || (a->store == b->store && a->m.version == b->m.version &&
                      strcmp(og_tableview_dir(a), og_tableview_dir(b)) == 0);
}

/* Tries the persisted topology `key` of versions (ev, sv, dv) as the base.  *out stays NULL
 * (OG_OK) when it is not worth it (*too_far: more reads than the bound); an error when it is
 * not usable. */
static og_status try_base(og_tableview *edges, og_tableview *src, og_tableview *dst, const char *key, uint64_t ev,
                          uint64_t sv, uint64_t dv, og_topology **out, int *too_far)
{
    *out = NULL;
    *too_far = 0;
    og_tableview *e0 = NULL, *s0 = NULL, *d0 = NULL;
    og_csr *c = NULL;
    og_csr_arrays a;
    uint32_t *emap = NULL, *smap = NULL, *dmap = NULL, *src_row = NULL, *dst_row = NULL;
    moved_list moved = {NULL, 0, 0};
    size_t n = edges->nrows, kept = 0, skept = 0, reads = 0, pending = 0;
    int same_nodes = og_tv_same_view(src, dst) && sv == dv;
    og_status st = og_tableview_open(&e0, edges->table, ev);
    if (st == OG_OK) st = og_tableview_open(&s0, src->table, sv);
    if (st == OG_OK) {
        if (same_nodes) d0 = og_tableview_retain(s0);
        else st = og_tableview_open(&d0, dst->table, dv);
    }
    if (st == OG_OK) st = og_csr_open(&c, edges->store, key, &a);
    if (st == OG_OK && (a.n_src != s0->nrows || a.n_dst != d0->nrows || a.edge_rows != e0->nrows))
        st = unusable("the base file's row counts are not its versions'", e0);
    /* the edges in fragments the base lacks are read: too many, and a full build is as cheap */
    if (st == OG_OK) st = remap_rows(e0, edges, &emap, &kept);
    if (st == OG_OK && n - kept > DELTA_MAX_READS) *too_far = 1;
    if (st == OG_OK && !*too_far) st = remap_rows(s0, src, &smap, &skept);
    if (st == OG_OK && !*too_far) {
        if (same_nodes) dmap = smap;
        else st = remap_rows(d0, dst, &dmap, &skept);
    }
    if (st == OG_OK && !*too_far) {
        src_row = malloc((n ? n : 1) * sizeof *src_row);
        dst_row = malloc((n ? n : 1) * sizeof *dst_row);
        if (!src_row || !dst_row) st = og_err(OG_ERR_NOMEM, "delta topology: out of memory");
    }
    if (st == OG_OK && !*too_far) {
        for (size_t r = 0; r < n; r++) src_row[r] = dst_row[r] = PENDING;
        if (!walk_base(&a, emap, smap, dmap, src_row, dst_row, &moved, DELTA_MAX_READS, too_far))
            st = unusable("a damaged base file", e0);
    }
    og_csr_free(c); /* the old pairs are all out */
    c = NULL;
    /* the moved endpoints that edges still name: one id read and lookup per node */
    if (st == OG_OK && !*too_far && moved.n) {
        st = resolve_moved(s0, src, smap, &moved, 0, same_nodes, &reads);
        if (st == OG_OK && !same_nodes) st = resolve_moved(d0, dst, dmap, &moved, 1, 0, &reads);
        for (size_t i = 0; st == OG_OK && i < moved.n; i++)
            src_row[moved.v[i].e] = smap[moved.v[i].s], dst_row[moved.v[i].e] = dmap[moved.v[i].d];
    }
    if (st == OG_OK && !*too_far) {
        for (size_t r = 0; r < n; r++) pending += src_row[r] == PENDING;
        reads += pending;
        if (reads > DELTA_MAX_READS || (reads > DELTA_READS_FLOOR && reads > n / 2)) *too_far = 1;
    }
    if (st == OG_OK && !*too_far && pending) st = read_pending(edges, src, dst, src_row, dst_row, pending);
    if (st == OG_OK && !*too_far)
        st = og_topology_build(out, (uint32_t)src->nrows, (uint32_t)dst->nrows, src_row, dst_row, n, NULL);
    free(moved.v);
    if (dmap != smap) free(dmap);
    free(smap);
    free(emap);
    free(src_row);
    free(dst_row);
    og_tableview_release(e0);
    og_tableview_release(s0);
    og_tableview_release(d0);
    return st;
}

og_status og_tv_delta_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, og_topology **out)
{
    *out = NULL;
    uint64_t(*cs)[3];
    size_t nc;
    og_tv_older_topologies(edges, src, dst, &cs, &nc);
    og_status st = OG_OK;
    int tries = 0;
    for (size_t k = 0; k < nc && tries < DELTA_MAX_BASES && !*out; k++) {
        uint64_t ev = cs[k][0], sv = cs[k][1], dv = cs[k][2];
        /* the views' own triple is the file the caller missed or could not use */
        if (ev == edges->m.version && sv == src->m.version && dv == dst->m.version) continue;
        tries++;
        char key[512];
        if (og_csr_store_key(key, sizeof key, og_tableview_dir(edges), ev, og_tableview_dir(src), sv,
                             og_tableview_dir(dst), dv) != OG_OK) {
            og_error_clear();
            continue;
        }
        int too_far = 0;
        st = try_base(edges, src, dst, key, ev, sv, dv, out, &too_far);
        if (st == OG_OK && *out) atomic_fetch_add(&delta_builds, 1);
        if (st == OG_ERR_NOMEM || too_far) break; /* an older base would have more to read */
        og_error_clear();
        st = OG_OK;
    }
    free(cs);
    return st;
}
