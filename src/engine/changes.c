/*
 * changes.c — row-level diffs of table versions and of commits.  See changes.h.
 *
 * Per table: both manifests are loaded (through the graph handle's cache), fragments are
 * paired by fragment id, and only fragments that differ are read — whole live fragments with
 * one restricted scan, liveness differences (a new deletion file) with og_table_take of just
 * those offsets.  Candidate rows go into two row sets (before / after) in layout order; ids are
 * paired with an og_strmap and the resulting changes are sorted by id.
 */
#include "engine/changes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/layout.h"
#include "table/table.h"
#include "util/error.h"
#include "util/strmap.h"

const char *og_change_op_name(og_change_op op)
{
    switch (op) {
    case OG_CHANGE_INSERT: return "insert";
    case OG_CHANGE_UPDATE: return "update";
    case OG_CHANGE_DELETE: return "delete";
    }
    return "unknown";
}

/* ---- row sets ------------------------------------------------------------------------------ */

static void rowset_free(og_row_set *rs)
{
    for (size_t c = 0; rs->cols && c < rs->ncols; c++) og_vector_free(&rs->cols[c]);
    free(rs->cols);
    free(rs->addrs);
    memset(rs, 0, sizeof *rs);
}

static og_status rowset_init(og_row_set *rs, const og_cat_type *t, int is_edge)
{
    size_t base = is_edge ? 3 : 1;
    rs->ncols = base + t->nprops;
    rs->nrows = 0;
    rs->cols = calloc(rs->ncols, sizeof *rs->cols);
    if (!rs->cols) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t c = 0; c < base; c++) OG_TRY(og_vector_init(&rs->cols[c], (og_type){OG_T_STRING, OG_T_NULL, 0}));
    for (size_t i = 0; i < t->nprops; i++) OG_TRY(og_vector_init(&rs->cols[base + i], t->props[i].type));
    return OG_OK;
}

void og_table_delta_free(og_table_delta *d)
{
    if (!d) return;
    rowset_free(&d->before);
    rowset_free(&d->after);
    free(d->changes);
    memset(d, 0, sizeof *d);
}

/* One side of a table diff: its table handle, manifest and the layout columns it stores. */
typedef struct side {
    og_table *tb;
    og_manifest m;
    int loaded;
    int32_t *fids;   /* layout field ids (ncols) */
    int *present;    /* the field is in this version's schema */
    int32_t *proj;   /* the present field ids, in layout order */
    size_t nproj;
} side;

static void side_free(side *s)
{
    if (s->loaded) og_manifest_free(&s->m);
    og_table_close(s->tb);
    free(s->fids);
    free(s->present);
    free(s->proj);
}

static og_status side_open(side *s, og_graph *g, const char *dir, const og_table_ref *ref, const og_cat_type *t,
                           size_t ncols, int is_edge)
{
    memset(s, 0, sizeof *s);
    s->fids = calloc(ncols, sizeof *s->fids);
    s->present = calloc(ncols, sizeof *s->present);
    s->proj = calloc(ncols, sizeof *s->proj);
    if (!s->fids || !s->present || !s->proj) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t base = is_edge ? 3 : 1;
    for (size_t c = 0; c < ncols; c++) {
        if (c < base) s->fids[c] = (int32_t)c; /* OG_FIELD_ID, _SRC, _DST */
        else OG_TRY(og_layout_field_id(t->props[c - base].id, &s->fids[c]));
    }
    if (!ref) return OG_OK;
    OG_TRY(og_table_open(&s->tb, og_graph_store(g), dir));
    og_table_set_cache(s->tb, og_graph_cache(g));
    og_status st = og_table_load(s->tb, ref->version, &s->m);
    if (st != OG_OK) return og_err_wrap(og_tableview_missing_error(st, s->tb, ref->version), "type %s", t->name);
    s->loaded = 1;
    for (size_t c = 0; c < ncols; c++) {
        s->present[c] = og_lance_schema_find_id(&s->m.schema, s->fids[c]) >= 0;
        if (s->present[c]) s->proj[s->nproj++] = s->fids[c];
    }
    return OG_OK;
}

/* Appends row r of the projected columns `cols` (the side's present fields), stored at row
 * address `addr` of the side's version, to rs. */
static og_status append_row(og_row_set *rs, const side *s, const og_vector *cols, size_t r, uint64_t addr)
{
    if (rs->nrows == rs->addrs_cap) {
        size_t cap = rs->addrs_cap ? rs->addrs_cap * 2 : 64;
        uint64_t *a = realloc(rs->addrs, cap * sizeof *a);
        if (!a) return og_err(OG_ERR_NOMEM, "out of memory");
        rs->addrs = a;
        rs->addrs_cap = cap;
    }
    rs->addrs[rs->nrows] = addr;
    size_t k = 0;
    for (size_t c = 0; c < rs->ncols; c++) {
        if (!s->present[c]) {
            OG_TRY(og_vector_append_null(&rs->cols[c]));
            continue;
        }
        const og_vector *v = &cols[k++];
        if (!og_type_eq(v->type, rs->cols[c].type))
            return og_err(OG_ERR_CORRUPT, "table %s: column %d has an unexpected type", og_table_dir(s->tb), s->fids[c]);
        OG_TRY(og_vector_append_from(&rs->cols[c], v, r));
    }
    rs->nrows++;
    return OG_OK;
}

/* Every live row of fragment f of side s into rs. */
static og_status read_fragment(side *s, const og_fragment *f, og_row_set *rs, uint64_t *rows_read)
{
    og_table_scan_opts o;
    memset(&o, 0, sizeof o);
    o.field_ids = s->proj;
    o.nfields = s->nproj;
    o.fragment_ids = &f->id;
    o.nfragments = 1;
    og_table_scan *sc;
    OG_TRY(og_table_scan_open(&sc, s->tb, &s->m, &o));
    og_status st;
    og_table_batch b;
    while ((st = og_table_scan_next(sc, &b)) == OG_OK && b.nrows) {
        for (size_t r = 0; r < b.nrows && st == OG_OK; r++) st = append_row(rs, s, b.cols, r, b.row_addrs[r]);
        *rows_read += b.nrows;
        if (st) break;
    }
    og_table_scan_free(sc);
    return st;
}

/* Rows `offsets[0..n)` (ascending) of fragment f of side s into rs. */
static og_status read_offsets(side *s, const og_fragment *f, const uint32_t *offsets, size_t n, og_row_set *rs,
                              uint64_t *rows_read)
{
    if (!n) return OG_OK;
    og_vector *cols = calloc(s->nproj ? s->nproj : 1, sizeof *cols);
    if (!cols) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = og_table_take(s->tb, &s->m, f->id, offsets, n, s->proj, s->nproj, cols);
    for (size_t r = 0; r < n && st == OG_OK; r++) st = append_row(rs, s, cols, r, f->id << 32 | offsets[r]);
    *rows_read += n;
    for (size_t c = 0; c < s->nproj; c++) og_vector_free(&cols[c]);
    free(cols);
    return st;
}

static int same_files(const og_fragment *a, const og_fragment *b)
{
    if (a->nfiles != b->nfiles || a->physical_rows != b->physical_rows) return 0;
    for (size_t i = 0; i < a->nfiles; i++)
        if (strcmp(a->files[i].path, b->files[i].path)) return 0;
    return 1;
}

static int same_deletion(const og_deletion_info *a, const og_deletion_info *b)
{
    if (a->present != b->present) return 0;
    if (!a->present) return 1;
    return a->kind == b->kind && a->read_version == b->read_version && a->id == b->id &&
           a->num_deleted_rows == b->num_deleted_rows;
}

/* Offsets deleted in `later` but not in `earlier` (ascending; *out malloc'd). */
static og_status newly_deleted(const roaring_bitmap_t *earlier, const roaring_bitmap_t *later, uint32_t **out,
                               size_t *n)
{
    roaring_bitmap_t *d = roaring_bitmap_andnot(later, earlier);
    if (!d) return og_err(OG_ERR_NOMEM, "out of memory");
    *n = (size_t)roaring_bitmap_get_cardinality(d);
    *out = malloc((*n ? *n : 1) * sizeof **out);
    if (!*out) {
        roaring_bitmap_free(d);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    roaring_bitmap_to_uint32_array(d, *out);
    roaring_bitmap_free(d);
    return OG_OK;
}

/* A fragment in both versions with the same data files and different deletion files: rows
 * live before and deleted after are before-candidates, and the reverse after-candidates. */
static og_status diff_deletions(side *a, const og_fragment *fa, side *b, const og_fragment *fb, og_table_delta *d)
{
    roaring_bitmap_t *da = NULL, *db = NULL;
    uint32_t *gone = NULL, *back = NULL;
    size_t ngone = 0, nback = 0;
    og_status st = og_table_fragment_deletions(a->tb, fa, &da);
    if (st == OG_OK) st = og_table_fragment_deletions(b->tb, fb, &db);
    if (st == OG_OK) st = newly_deleted(da, db, &gone, &ngone);
    if (st == OG_OK) st = newly_deleted(db, da, &back, &nback);
    if (st == OG_OK) st = read_offsets(a, fa, gone, ngone, &d->before, &d->rows_read);
    if (st == OG_OK) st = read_offsets(b, fb, back, nback, &d->after, &d->rows_read);
    if (da) roaring_bitmap_free(da);
    if (db) roaring_bitmap_free(db);
    free(gone);
    free(back);
    return st;
}

static int change_cmp(const void *x, const void *y)
{
    const og_change *a = x, *b = y;
    size_t n = a->idlen < b->idlen ? a->idlen : b->idlen;
    int c = memcmp(a->id, b->id, n);
    if (c) return c;
    if (a->idlen != b->idlen) return a->idlen < b->idlen ? -1 : 1;
    return (int)a->op - (int)b->op;
}

static int rows_equal(const og_row_set *a, size_t i, const og_row_set *b, size_t j)
{
    for (size_t c = 0; c < a->ncols; c++)
        if (!og_vector_row_eq(&a->cols[c], i, &b->cols[c], j)) return 0;
    return 1;
}

/* Pairs the candidate rows by id into d->changes. */
static og_status pair_rows(og_table_delta *d)
{
    size_t cap = d->before.nrows + d->after.nrows;
    d->changes = malloc((cap ? cap : 1) * sizeof *d->changes);
    uint8_t *matched = calloc(d->before.nrows ? d->before.nrows : 1, 1);
    og_strmap ids;
    og_strmap_init(&ids);
    og_status st = d->changes && matched ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < d->before.nrows && st == OG_OK; i++) {
        size_t n;
        const uint8_t *id = og_vector_get_bytes(&d->before.cols[0], i, &n);
        st = og_strmap_insert(&ids, id, n, (uint32_t)i, NULL, NULL);
    }
    for (size_t j = 0; j < d->after.nrows && st == OG_OK; j++) {
        size_t n;
        const uint8_t *id = og_vector_get_bytes(&d->after.cols[0], j, &n);
        uint32_t i;
        og_change ch = {OG_CHANGE_INSERT, OG_CHANGE_NO_ROW, (uint32_t)j, id, n};
        if (og_strmap_get(&ids, id, n, &i)) {
            matched[i] = 1;
            if (rows_equal(&d->before, i, &d->after, j)) continue; /* moved, not changed */
            ch.op = OG_CHANGE_UPDATE;
            ch.before = i;
        }
        d->changes[d->nchanges++] = ch;
    }
    for (size_t i = 0; i < d->before.nrows && st == OG_OK; i++) {
        if (matched[i]) continue;
        size_t n;
        const uint8_t *id = og_vector_get_bytes(&d->before.cols[0], i, &n);
        og_change ch = {OG_CHANGE_DELETE, (uint32_t)i, OG_CHANGE_NO_ROW, id, n};
        d->changes[d->nchanges++] = ch;
    }
    if (st == OG_OK && d->nchanges > 1) qsort(d->changes, d->nchanges, sizeof *d->changes, change_cmp);
    og_strmap_free(&ids);
    free(matched);
    return st;
}

og_status og_table_delta_compute(og_graph *g, const og_cat_type *t, int is_edge, size_t index, const char *dir,
                                 const og_table_ref *from, const og_table_ref *to, og_table_delta *out)
{
    memset(out, 0, sizeof *out);
    out->t = t;
    out->is_edge = is_edge;
    out->index = index;
    OG_TRY(rowset_init(&out->before, t, is_edge));
    OG_TRY(rowset_init(&out->after, t, is_edge));
    if ((!from && !to) || (from && to && from->version == to->version)) return OG_OK;
    side a, b;
    og_status st = side_open(&a, g, dir, from, t, out->before.ncols, is_edge);
    if (st == OG_OK) st = side_open(&b, g, dir, to, t, out->after.ncols, is_edge);
    else memset(&b, 0, sizeof b);
    size_t na = a.loaded ? a.m.nfragments : 0, nb = b.loaded ? b.m.nfragments : 0;
    for (size_t i = 0; i < na && st == OG_OK; i++) {
        const og_fragment *fa = &a.m.fragments[i];
        long j = b.loaded ? og_manifest_find_fragment(&b.m, fa->id) : -1;
        const og_fragment *fb = j >= 0 ? &b.m.fragments[j] : NULL;
        if (fb && same_files(fa, fb) && same_deletion(&fa->deletion, &fb->deletion)) {
            out->fragments_skipped++;
            continue;
        }
        out->fragments_read++;
        if (fb && same_files(fa, fb)) {
            st = diff_deletions(&a, fa, &b, fb, out);
        } else {
            st = read_fragment(&a, fa, &out->before, &out->rows_read);
            if (st == OG_OK && fb) st = read_fragment(&b, fb, &out->after, &out->rows_read);
        }
    }
    for (size_t j = 0; j < nb && st == OG_OK; j++) {
        const og_fragment *fb = &b.m.fragments[j];
        if (a.loaded && og_manifest_find_fragment(&a.m, fb->id) >= 0) continue; /* handled above */
        out->fragments_read++;
        st = read_fragment(&b, fb, &out->after, &out->rows_read);
    }
    if (st == OG_OK) st = pair_rows(out);
    side_free(&a);
    side_free(&b);
    if (st) og_table_delta_free(out);
    return st;
}

const og_change *og_table_delta_find(const og_table_delta *d, const void *id, size_t len)
{
    size_t lo = 0, hi = d->nchanges;
    og_change key = {OG_CHANGE_INSERT, 0, 0, id, len};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        og_change probe = d->changes[mid];
        probe.op = OG_CHANGE_INSERT; /* compare ids only */
        int c = change_cmp(&probe, &key);
        if (c == 0) return &d->changes[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ---- change sets ---------------------------------------------------------------------------- */

void og_changeset_free(og_changeset *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->ntables; i++) og_table_delta_free(&c->tables[i]);
    free(c->tables);
    og_read_end(c->read);
    memset(c, 0, sizeof *c);
}

static int type_wanted(const og_cat_type *t, int is_edge, const og_change_filter *f)
{
    if (!f || !f->types || !f->ntypes) return 1;
    for (size_t i = 0; i < f->ntypes; i++)
        if (is_edge ? !strcasecmp(f->types[i], t->name) : !strcmp(f->types[i], t->name)) return 1;
    return 0;
}

static void filter_ops(og_table_delta *d, unsigned ops)
{
    if (!ops) return;
    size_t k = 0;
    for (size_t i = 0; i < d->nchanges; i++)
        if (ops & (1u << d->changes[i].op)) d->changes[k++] = d->changes[i];
    d->nchanges = k;
}

og_status og_changes_between(og_engine *e, const char *from, const char *to, const og_change_filter *f,
                             og_changeset *out)
{
    memset(out, 0, sizeof *out);
    if (!from || !to) return og_err(OG_ERR_INVALID, "changes: both commits are required");
    og_graph *g = og_engine_graph(e);
    const og_commit *cf;
    og_cache_entry *hold;
    OG_TRY(og_graph_commit_get(g, from, &cf, &hold));
    og_status st = og_read_begin(&out->read, e, NULL, to);
    if (st) {
        og_cache_entry_release(hold);
        return st;
    }
    snprintf(out->from, sizeof out->from, "%s", cf->id);
    snprintf(out->to, sizeof out->to, "%s", og_snapshot_commit_id(og_read_snapshot(out->read)));
    const og_snapshot *snap = og_read_snapshot(out->read);
    const og_catalog *cat = og_read_catalog(out->read);
    if (strcmp(cf->schema, og_snapshot_schema_id(snap)))
        st = og_err(OG_ERR_UNSUPPORTED, "change_schema_boundary: commits %s and %s have different schemas", cf->id,
                    out->to);
    for (size_t i = 0; f && f->types && i < f->ntypes && st == OG_OK; i++)
        if (!og_catalog_node(cat, f->types[i]) && !og_catalog_edge_ci(cat, f->types[i], strlen(f->types[i])))
            st = og_err(OG_ERR_NOT_FOUND, "changes: no node or edge type '%s'", f->types[i]);
    size_t ntypes = cat->nnodes + cat->nedges;
    out->tables = calloc(ntypes ? ntypes : 1, sizeof *out->tables);
    if (!out->tables && st == OG_OK) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (int pass = 0; pass < 2 && st == OG_OK; pass++) {
        size_t n = pass ? cat->nedges : cat->nnodes;
        for (size_t i = 0; i < n && st == OG_OK; i++) {
            const og_cat_type *t = pass ? &cat->edges[i] : &cat->nodes[i];
            if (!type_wanted(t, pass, f)) continue;
            char dir[64];
            og_cat_type_table_dir(t, dir, sizeof dir);
            const og_table_ref *ra = og_commit_table(cf, dir), *rb = og_snapshot_table(snap, dir);
            if ((!ra && !rb) || (ra && rb && ra->version == rb->version)) continue;
            og_table_delta *d = &out->tables[out->ntables];
            st = og_table_delta_compute(g, t, pass, i, dir, ra, rb, d);
            if (st == OG_ERR_NOT_FOUND) st = og_err_wrap(st, "changes from commit %s to %s", out->from, out->to);
            if (st) break;
            filter_ops(d, f ? f->ops : 0);
            out->fragments_read += d->fragments_read;
            out->fragments_skipped += d->fragments_skipped;
            out->rows_read += d->rows_read;
            if (!d->nchanges) {
                og_table_delta_free(d);
                continue;
            }
            for (size_t k = 0; k < d->nchanges; k++) {
                if (d->changes[k].op == OG_CHANGE_INSERT) out->inserted++;
                else if (d->changes[k].op == OG_CHANGE_UPDATE) out->updated++;
                else out->deleted++;
            }
            out->ntables++;
        }
    }
    og_cache_entry_release(hold);
    if (st) og_changeset_free(out);
    return st;
}

og_status og_changes_commit(og_engine *e, const char *id, const og_change_filter *f, og_changeset *out)
{
    memset(out, 0, sizeof *out);
    if (!id) return og_err(OG_ERR_INVALID, "commit changes: a commit id is required");
    const og_commit *c;
    og_cache_entry *hold;
    OG_TRY(og_graph_commit_get(og_engine_graph(e), id, &c, &hold));
    char parent[OG_ULID_LEN + 1], self[OG_ULID_LEN + 1];
    int has_parent = c->nparents > 0;
    snprintf(parent, sizeof parent, "%s", has_parent ? c->parents[0] : "");
    snprintf(self, sizeof self, "%s", c->id);
    og_cache_entry_release(hold);
    if (!has_parent) return og_err(OG_ERR_INVALID, "commit_has_no_parent: commit %s is the genesis commit", self);
    return og_changes_between(e, parent, self, f, out);
}
