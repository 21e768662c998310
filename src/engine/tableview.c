/*
 * tableview.c — immutable views of one table version's live rows, with lazily derived
 * columns, id -> row map and edge topologies, and their per-graph-handle cache (tableview.h).
 *
 * Opening a view reads the manifest and the deletion vectors (nothing else) and lists the
 * row address of every live row; that list is the view's row numbering.  Every later load
 * (a column's projected scan) is checked against it, so all columns of a view agree row for
 * row or the load fails with OG_ERR_CORRUPT.
 *
 * Lazy state is published with double-checked locking: a reader first does an acquire load of
 * the slot; on NULL it takes the view's mutex, re-checks, loads, and publishes with a release
 * store.  Slots only ever go from NULL to a value that lives until the view is freed, so a
 * reader that saw a value may keep using it without the lock.
 */
#include "engine/tableview.h"
#include "engine/colscan.h"
#include "engine/dictcol.h"
#include "engine/tableview_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/csr.h"
#include "index/keymap.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/strmap.h"


/* ------------------------------------------------------------------------------------------ */
/* Memory accounting                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Heap bytes of an owned vector (capacity, not length). */
static size_t vector_bytes(const og_vector *v)
{
    size_t b = sizeof *v;
    size_t rows = v->cap_rows > v->len ? v->cap_rows : v->len;
    if (v->validity) b += (rows + 7) / 8;
    switch (v->type.id) {
    case OG_T_STRING:
    case OG_T_BLOB: b += (rows + 1) * sizeof(int64_t) + v->cap_bytes; break;
    case OG_T_LIST:
        b += (rows + 1) * sizeof(int64_t);
        if (v->child) b += vector_bytes(v->child);
        break;
    case OG_T_BOOL: b += (rows + 7) / 8; break;
    default: b += rows * og_type_width(v->type); break;
    }
    return b;
}

/* Guessed decoded bytes per row of a type, for fragments whose data file size is unknown. */
static size_t type_row_guess(og_type t)
{
    switch (t.id) {
    case OG_T_STRING:
    case OG_T_BLOB: return 8 + 24;
    case OG_T_LIST: return 8 + 4 * 8;
    case OG_T_BOOL: return 1;
    default: return og_type_width(t) ? og_type_width(t) : 8;
    }
}

static size_t sat_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

static size_t sat_mul(size_t a, size_t b) { return b && a > SIZE_MAX / b ? SIZE_MAX : a * b; }

/* The index of system column `name` ("id", "src", "dst"): the field with the layout's field id
 * when it is spelled `name` or `__name` (the spelling beside a user property of that name,
 * engine/layout.c), else the top-level field named `name`; -1 when absent. */
long og_tv_sys_field_index(const og_lance_schema *s, const char *name)
{
    int32_t fid = !strcmp(name, "id") ? 0 : !strcmp(name, "src") ? 1 : 2;
    long idx = og_lance_schema_find_id(s, fid);
    if (idx >= 0 && s->fields[idx].parent_id == -1 && s->fields[idx].name &&
        (!strcmp(s->fields[idx].name, name) || (!strncmp(s->fields[idx].name, "__", 2) && !strcmp(s->fields[idx].name + 2, name))))
        return idx;
    return og_lance_schema_find_name(s, name);
}

/* Per-row overhead of the id map (entry + two slots at load factor 1/2) and of a topology
 * (CSR + CSC: two neighbour and two edge arrays of u32 per edge, plus the endpoint arrays
 * used while building). */
#define IDMAP_ROW_BYTES (sizeof(og_strmap_entry_) + 2 * sizeof(uint64_t))
#define TOPO_ROW_BYTES (6 * sizeof(uint32_t))

static void compute_estimate(og_tableview *v)
{
    size_t est = v->base_bytes;
    /* Columns: the live share of each fragment's data files, which hold every column. */
    for (size_t i = 0; i < v->m.nfragments; i++) {
        const og_fragment *f = &v->m.fragments[i];
        uint64_t live = og_fragment_live_rows(f);
        if (!f->physical_rows || !live) continue;
        uint64_t file_bytes = 0;
        int known = f->nfiles > 0;
        for (size_t k = 0; k < f->nfiles; k++) {
            if (!f->files[k].size_bytes) known = 0;
            file_bytes += f->files[k].size_bytes;
        }
        size_t frag_est;
        if (known) {
            frag_est = (size_t)((double)file_bytes * ((double)live / (double)f->physical_rows));
        } else {
            size_t per_row = 0;
            for (size_t t = 0; t < v->ntop; t++)
                per_row += v->top_type_st[t] == OG_OK ? type_row_guess(v->top_types[t]) : 8;
            frag_est = sat_mul((size_t)live, per_row);
        }
        est = sat_add(est, frag_est);
    }
    if (og_tv_sys_field_index(&v->m.schema, "id") >= 0) est = sat_add(est, sat_mul(v->nrows, IDMAP_ROW_BYTES));
    if (og_tv_sys_field_index(&v->m.schema, "src") >= 0 && og_tv_sys_field_index(&v->m.schema, "dst") >= 0)
        est = sat_add(est, sat_mul(v->nrows, TOPO_ROW_BYTES));
    v->estimate_bytes = est;
}

size_t og_tableview_bytes(const og_tableview *v) { return sat_add(v->base_bytes, atomic_load(&v->derived_bytes)); }

size_t og_tableview_estimate_bytes(const og_tableview *v) { return v->estimate_bytes; }

/* ------------------------------------------------------------------------------------------ */
/* Open / free                                                                                 */
/* ------------------------------------------------------------------------------------------ */

static void view_free(og_tableview *v)
{
    if (!v) return;
    if (v->cols) {
        for (size_t i = 0; i < v->ntop; i++) {
            og_vector *c = atomic_load(&v->cols[i]);
            if (c) {
                og_vector_free(c);
                free(c);
            }
        }
        free((void *)v->cols);
    }
    if (v->zones) {
        for (size_t i = 0; i < v->ntop; i++) og_colzones_free(atomic_load(&v->zones[i]));
        free((void *)v->zones);
    }
    if (v->dicts) {
        for (size_t i = 0; i < v->ntop; i++) og_dictcol_free(atomic_load(&v->dicts[i]));
        free((void *)v->dicts);
    }
    og_keymap *_Atomic *kms = atomic_load(&v->kms);
    if (kms)
        for (size_t i = 0; i < v->m.nfragments; i++) og_keymap_free(atomic_load(&kms[i]));
    free(kms);
    free(v->km_unsaved);
    og_keymap_free(v->krun);
    free(v->krun_view);
    free(v->km_covered);
    free(v->frag_start);
    og_strmap *idm = atomic_load(&v->idmap);
    if (idm) {
        og_strmap_free(idm);
        free(idm);
    }
    for (size_t i = 0; i < v->ntopos; i++) {
        og_topology_free(v->topos[i]->topo);
        free(v->topos[i]->src_dir);
        free(v->topos[i]->dst_dir);
        free(v->topos[i]);
    }
    free(v->topos);
    free((void *)v->points);
    free((void *)v->nodict);
    free(v->top_ids);
    free(v->top_types);
    free(v->top_type_st);
    free(atomic_load(&v->row_addrs));
    if (v->dels) {
        for (size_t i = 0; i < v->m.nfragments; i++) {
            roaring_bitmap_t *d = atomic_load(&v->dels[i]);
            if (d) roaring_bitmap_free(d);
        }
        free((void *)v->dels);
    }
    og_manifest_free(&v->m);
    og_table_close(v->table);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

/* Counts the live rows from the manifest (what LanceDB's countRows trusts too) and where each
 * fragment's rows start; the addresses themselves are listed on first use (list_addrs). */
static og_status count_rows(og_tableview *v)
{
    v->frag_start = malloc((v->m.nfragments + 1) * sizeof *v->frag_start);
    v->dels = calloc(v->m.nfragments + 1, sizeof *v->dels);
    if (!v->frag_start || !v->dels) return og_err(OG_ERR_NOMEM, "table view: out of memory");
    for (size_t i = 0; i < v->m.nfragments; i++) atomic_init(&v->dels[i], NULL);
    uint64_t n = 0;
    for (size_t i = 0; i < v->m.nfragments; i++) {
        const og_fragment *f = &v->m.fragments[i];
        if (f->id > UINT32_MAX)
            return og_err(OG_ERR_CORRUPT, "table %s version %llu: fragment id %llu does not fit a row address",
                          og_table_dir(v->table), (unsigned long long)v->m.version, (unsigned long long)f->id);
        if (f->physical_rows > UINT32_MAX)
            return og_err(OG_ERR_CORRUPT, "table %s: fragment %llu has %llu rows", og_table_dir(v->table),
                          (unsigned long long)f->id, (unsigned long long)f->physical_rows);
        v->frag_start[i] = (size_t)n;
        n += og_fragment_live_rows(f);
        if (f->deletion.present) v->any_deletions = 1;
        if (n >= UINT32_MAX - 1)
            return og_err(OG_ERR_LIMIT, "table %s version %llu: more than %u live rows", og_table_dir(v->table),
                          (unsigned long long)v->m.version, (unsigned)(UINT32_MAX - 1));
    }
    v->frag_start[v->m.nfragments] = (size_t)n;
    v->nrows = (size_t)n;
    return OG_OK;
}

/* Work proportional to a whole table (tableview.h og_tableview_whole_reads): a column
 * loaded, every row address listed, a fragment's keymap or the id map built in memory, a
 * topology built from the columns. */
_Atomic size_t og_tv_whole_reads;
size_t og_tableview_whole_reads(void) { return atomic_load(&og_tv_whole_reads); }

/* Lists the live row addresses of every fragment in manifest order (caller holds the lock). */
static og_status list_addrs(og_tableview *v, uint64_t **out)
{
    *out = NULL;
    atomic_fetch_add(&og_tv_whole_reads, 1);
    uint64_t *addrs = malloc((v->nrows ? v->nrows : 1) * sizeof *addrs);
    if (!addrs) return og_err(OG_ERR_NOMEM, "table view: out of memory");
    size_t n = 0;
    og_status st = OG_OK;
    for (size_t i = 0; st == OG_OK && i < v->m.nfragments; i++) {
        const og_fragment *f = &v->m.fragments[i];
        roaring_bitmap_t *del = NULL;
        if (f->deletion.present) st = og_table_fragment_deletions(v->table, f, &del);
        if (st != OG_OK) break;
        size_t want = v->frag_start[i + 1] - v->frag_start[i];
        size_t got = 0;
        for (uint64_t off = 0; off < f->physical_rows; off++) {
            if (del && roaring_bitmap_contains(del, (uint32_t)off)) continue;
            if (got == want) {
                got++;
                break;
            }
            addrs[n++] = OG_ROW_ADDR(f->id, off);
            got++;
        }
        if (del) roaring_bitmap_free(del); /* (this libroaring does not accept NULL) */
        if (got != want)
            st = og_err(OG_ERR_CORRUPT, "table %s version %llu: fragment %llu's deletion file disagrees with its "
                        "deleted-row count", og_table_dir(v->table), (unsigned long long)v->m.version,
                        (unsigned long long)f->id);
    }
    if (st != OG_OK) {
        free(addrs);
        return st;
    }
    *out = addrs;
    return OG_OK;
}

static og_status get_addrs(og_tableview *v, const uint64_t **out)
{
    uint64_t *a = atomic_load_explicit(&v->row_addrs, memory_order_acquire);
    if (a) {
        *out = a;
        return OG_OK;
    }
    pthread_mutex_lock(&v->lock);
    og_status st = OG_OK;
    a = atomic_load_explicit(&v->row_addrs, memory_order_acquire);
    if (!a) {
        st = list_addrs(v, &a);
        if (st == OG_OK) {
            atomic_fetch_add(&v->derived_bytes, v->nrows * sizeof *a);
            atomic_store_explicit(&v->row_addrs, a, memory_order_release);
        }
    }
    pthread_mutex_unlock(&v->lock);
    *out = a;
    return st;
}

/* The deletion bitmap of fragment fi (which has a deletion file), read once and kept (its
 * size follows the deleted rows, not the fragment): what a point lookup or a point read of a
 * fragment with deletions needs instead of the list of every row address. */
og_status og_tv_frag_deletions(og_tableview *v, size_t fi, const roaring_bitmap_t **out)
{
    roaring_bitmap_t *d = atomic_load_explicit(&v->dels[fi], memory_order_acquire);
    if (!d) {
        pthread_mutex_lock(&v->lock);
        d = atomic_load_explicit(&v->dels[fi], memory_order_acquire);
        og_status st = OG_OK;
        if (!d && (st = og_table_fragment_deletions(v->table, &v->m.fragments[fi], &d)) == OG_OK) {
            if (!d) d = roaring_bitmap_create();
            if (!d) st = og_err(OG_ERR_NOMEM, "table view: out of memory");
            else {
                atomic_fetch_add(&v->derived_bytes, roaring_bitmap_size_in_bytes(d));
                atomic_store_explicit(&v->dels[fi], d, memory_order_release);
            }
        }
        pthread_mutex_unlock(&v->lock);
        OG_TRY(st);
    }
    *out = d;
    return OG_OK;
}

/* The fragment (index) holding view row `row` (< nrows): the last one starting at or before
 * it that has live rows. */
size_t og_tv_frag_of_row(const og_tableview *v, size_t row)
{
    size_t lo = 0, hi = v->m.nfragments;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->frag_start[mid] <= row) lo = mid;
        else hi = mid;
    }
    while (lo + 1 < v->m.nfragments && v->frag_start[lo + 1] <= row) lo++; /* skip empty ones */
    return lo;
}

/* Up to this many rows (or a 64th of the table) are addressed one by one
 * (og_tableview_row_addrs); more list them all. */
#define ROW_ADDRS_POINT_MAX 64

og_status og_tableview_row_addrs(og_tableview *v, const uint32_t *rows, size_t n, uint64_t *out)
{
    for (size_t k = 0; k < n; k++)
        if (rows[k] >= v->nrows)
            return og_err(OG_ERR_INTERNAL, "table %s: row %u of %zu", og_table_dir(v->table), rows[k], v->nrows);
    const uint64_t *all = atomic_load_explicit(&v->row_addrs, memory_order_acquire);
    if (!all && v->any_deletions && n > ROW_ADDRS_POINT_MAX && n > v->nrows / 64) OG_TRY(get_addrs(v, &all));
    if (all) {
        for (size_t k = 0; k < n; k++) out[k] = all[rows[k]];
        return OG_OK;
    }
    /* One by one: the offset of the row's fragment that is its rank among the live rows — the
     * row itself without a deletion file, else found by bisection over the deleted-row ranks
     * (the fragment's deletion bitmap, read once per view). */
    og_status st = OG_OK;
    for (size_t k = 0; k < n && st == OG_OK; k++) {
        size_t fi = og_tv_frag_of_row(v, rows[k]);
        const og_fragment *f = &v->m.fragments[fi];
        uint64_t rank = rows[k] - v->frag_start[fi]; /* the rank-th live row of f (from 0) */
        if (!f->deletion.present) {
            out[k] = OG_ROW_ADDR(f->id, rank);
            continue;
        }
        const roaring_bitmap_t *del;
        if ((st = og_tv_frag_deletions(v, fi, &del)) != OG_OK) break;
        /* the smallest offset with rank + 1 live rows in [0, offset] is that live row */
        uint64_t lo = rank, hi = f->physical_rows ? f->physical_rows - 1 : 0;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (mid + 1 - roaring_bitmap_rank(del, (uint32_t)mid) >= rank + 1) hi = mid;
            else lo = mid + 1;
        }
        if (lo >= f->physical_rows || roaring_bitmap_contains(del, (uint32_t)lo) ||
            lo + 1 - roaring_bitmap_rank(del, (uint32_t)lo) != rank + 1)
            st = og_err(OG_ERR_CORRUPT, "table %s version %llu: fragment %llu's deletion file disagrees with its "
                        "deleted-row count", og_table_dir(v->table), (unsigned long long)v->m.version,
                        (unsigned long long)f->id);
        else
            out[k] = OG_ROW_ADDR(f->id, lo);
    }
    return st;
}

static og_status index_fields(og_tableview *v)
{
    size_t ntop = og_lance_schema_num_top(&v->m.schema);
    v->ntop = ntop;
    if (!ntop) return OG_OK;
    v->top_ids = calloc(ntop, sizeof *v->top_ids);
    v->top_types = calloc(ntop, sizeof *v->top_types);
    v->top_type_st = calloc(ntop, sizeof *v->top_type_st);
    v->cols = calloc(ntop, sizeof *v->cols);
    v->zones = calloc(ntop, sizeof *v->zones);
    v->points = calloc(ntop, sizeof *v->points);
    v->dicts = calloc(ntop, sizeof *v->dicts);
    v->nodict = calloc(ntop, sizeof *v->nodict);
    if (!v->top_ids || !v->top_types || !v->top_type_st || !v->cols || !v->zones || !v->points || !v->dicts ||
        !v->nodict)
        return og_err(OG_ERR_NOMEM, "table view: out of memory");
    for (size_t i = 0; i < ntop; i++) {
        long idx = og_lance_schema_top(&v->m.schema, i);
        if (idx < 0) return og_err(OG_ERR_INTERNAL, "table view: top-level field %zu missing", i);
        v->top_ids[i] = v->m.schema.fields[idx].id;
        /* A type this build cannot map is only an error for whoever reads that column. */
        v->top_type_st[i] = og_lance_schema_field_type(&v->m.schema, (size_t)idx, &v->top_types[i]);
        atomic_init(&v->cols[i], NULL);
        atomic_init(&v->zones[i], NULL);
        atomic_init(&v->points[i], 0);
        atomic_init(&v->dicts[i], NULL);
        atomic_init(&v->nodict[i], 0);
    }
    og_error_clear();
    return OG_OK;
}

og_status og_tableview_open(og_tableview **out, og_table *t, uint64_t version)
{
    *out = NULL;
    if (!t) return og_err(OG_ERR_INVALID, "table view: no table");
    og_tableview *v = calloc(1, sizeof *v);
    if (!v) return og_err(OG_ERR_NOMEM, "table view: out of memory");
    atomic_init(&v->refs, 1);
    atomic_init(&v->idmap, NULL);
    atomic_init(&v->derived_bytes, 0);
    atomic_init(&v->kms, NULL);
    atomic_init(&v->keys_ready, 0);
    atomic_init(&v->keys_saved, 0);
    atomic_init(&v->km_built, 0);
    atomic_init(&v->krun_state, 0);
    atomic_init(&v->krun_saving, 0);
    og_manifest_init(&v->m);
    if (pthread_mutex_init(&v->lock, NULL) != 0) {
        free(v);
        return og_err(OG_ERR_NOMEM, "table view: mutex init failed");
    }
    v->store = og_table_store(t);
    og_status st = og_table_open(&v->table, v->store, og_table_dir(t));
    if (st == OG_OK) og_table_set_cache(v->table, og_table_cache(t)); /* manifests, deletions */
    if (st == OG_OK) st = og_table_load(v->table, version, &v->m);
    if (st == OG_OK) st = index_fields(v);
    if (st == OG_OK) st = count_rows(v);
    if (st != OG_OK) {
        view_free(v);
        return st;
    }
    v->base_bytes = sizeof *v + (v->m.nfragments + 1) * sizeof(size_t) + v->ntop * (2 * sizeof(int32_t) + sizeof(og_type) +
                                                                             sizeof(void *)) +
                    v->m.nfragments * sizeof(og_fragment) + v->m.schema.count * sizeof(og_lance_field);
    compute_estimate(v);
    *out = v;
    return OG_OK;
}

og_tableview *og_tableview_retain(og_tableview *v)
{
    if (v) atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    return v;
}

void og_tableview_release(og_tableview *v)
{
    if (!v) return;
    if (atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1) view_free(v);
}

static void release_cb(void *value) { og_tableview_release(value); }

/* "v:<dir>@<version>" (malloc'd; NULL when out of memory). */
static char *view_key(const char *dir, uint64_t version)
{
    size_t klen = strlen(OG_TABLEVIEW_CACHE_PREFIX) + strlen(dir) + 1 + 20 + 1;
    char *key = malloc(klen);
    if (key) snprintf(key, klen, "%s%s@%llu", OG_TABLEVIEW_CACHE_PREFIX, dir, (unsigned long long)version);
    return key;
}

og_status og_tableview_get(og_cache *cache, og_table *t, uint64_t version, og_tableview **out)
{
    *out = NULL;
    if (!cache) return og_tableview_open(out, t, version);
    if (!t) return og_err(OG_ERR_INVALID, "table view: no table");
    char *key = view_key(og_table_dir(t), version);
    if (!key) return og_err(OG_ERR_NOMEM, "table view: out of memory");

    og_cache_entry *e = og_cache_get(cache, key);
    if (e) {
        *out = og_tableview_retain(og_cache_entry_value(e));
        /* charge what it derived since (columns, maps): the LRU bound follows real memory */
        og_cache_entry_recharge(cache, e, og_tableview_bytes(*out));
        og_cache_entry_release(e);
        free(key);
        return OG_OK;
    }
    og_tableview *v = NULL;
    og_status st = og_tableview_open(&v, t, version);
    if (st != OG_OK) {
        free(key);
        return st;
    }
    /* The cache takes one reference (freed through release_cb); the caller keeps another. */
    og_tableview_retain(v);
    /* Charged what it holds now, not og_tableview_estimate_bytes: the estimate counts every
     * column, the id map and a built topology, which a view over persisted (mapped) indexes
     * never allocates — at 2M nodes / 10M edges the edge view's estimate passed a 1 GiB bound,
     * so it was never retained and every query reopened it, its topology and a node-sized
     * visit array (docs/benchmarks.md "Scaling").  Each later get recharges its growth. */
    st = og_cache_put(cache, key, v, og_tableview_bytes(v), release_cb, &e);
    free(key);
    if (st != OG_OK) {
        og_tableview_release(v);
        return st;
    }
    og_tableview *held = og_cache_entry_value(e);
    if (held != v) {
        /* A racing loader inserted first: share its view (ours was released by the put). */
        og_tableview_retain(held);
        og_tableview_release(v);
        v = held;
    }
    og_cache_entry_release(e);
    *out = v;
    return OG_OK;
}

void og_tableview_evict(og_cache *cache, const char *dir, uint64_t version)
{
    char *key = cache ? view_key(dir, version) : NULL;
    if (key) og_cache_remove(cache, key);
    free(key);
}

og_status og_tableview_missing_error(og_status st, og_table *t, uint64_t version)
{
    if (st != OG_ERR_NOT_FOUND) return st;
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", og_error_message());
    uint64_t *vs = NULL;
    size_t n = 0;
    /* Only on this error path: a listing whose cost follows the table's history. */
    if (og_table_list_versions(t, &vs, &n) != OG_OK) return og_err(st, "%s", saved);
    int reclaimed = n == 0 || vs[0] > version;
    free(vs);
    if (!reclaimed) return og_err(st, "%s", saved);
    return og_err(OG_ERR_NOT_FOUND,
                  "table %s version %llu is gone: reclaimed by cleanup (omnigraph cleanup) or reclaimed by a hard "
                  "drop (schema apply --allow-data-loss); the commits that name it can no longer be read",
                  og_table_dir(t), (unsigned long long)version);
}

/* ------------------------------------------------------------------------------------------ */
/* Accessors                                                                                   */
/* ------------------------------------------------------------------------------------------ */

const char *og_tableview_dir(const og_tableview *v) { return og_table_dir(v->table); }
uint64_t og_tableview_version(const og_tableview *v) { return v->m.version; }
const og_manifest *og_tableview_manifest(const og_tableview *v) { return &v->m; }
og_table *og_tableview_table(const og_tableview *v) { return v->table; }
size_t og_tableview_rows(const og_tableview *v) { return v->nrows; }
og_status og_tableview_addrs(og_tableview *v, const uint64_t **out)
{
    *out = NULL;
    if (!v->nrows) return OG_OK;
    return get_addrs(v, out);
}

og_status og_tableview_field_id(const og_tableview *v, const char *name, int32_t *id)
{
    long idx = og_lance_schema_find_name(&v->m.schema, name);
    if (idx < 0)
        return og_err(OG_ERR_NOT_FOUND, "table %s version %llu has no field '%s'", og_table_dir(v->table),
                      (unsigned long long)v->m.version, name);
    *id = v->m.schema.fields[idx].id;
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Columns                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static atomic_size_t dict_loads;
size_t og_tableview_dict_loads(void) { return atomic_load(&dict_loads); }

/* The index of top-level field field_id, or v->ntop. */
static size_t top_index(const og_tableview *v, int32_t field_id)
{
    size_t i = 0;
    while (i < v->ntop && v->top_ids[i] != field_id) i++;
    return i;
}

og_status og_tableview_dict(og_tableview *v, int32_t field_id, const og_dictcol **out)
{
    *out = NULL;
    size_t i = top_index(v, field_id);
    if (i == v->ntop || v->top_type_st[i] != OG_OK || v->top_types[i].id != OG_T_STRING) return OG_OK;
    static const char *const sys[] = {"id", "src", "dst"}; /* keys and endpoints: distinct, read plain */
    for (size_t k = 0; k < 3; k++) {
        long idx = og_tv_sys_field_index(&v->m.schema, sys[k]);
        if (idx >= 0 && v->m.schema.fields[idx].id == field_id) return OG_OK;
    }
    og_dictcol *d = atomic_load_explicit(&v->dicts[i], memory_order_acquire);
    if (d || atomic_load(&v->nodict[i]) || atomic_load_explicit(&v->cols[i], memory_order_acquire)) {
        *out = d;
        return OG_OK;
    }
    const uint64_t *addrs = NULL;
    if (v->nrows && v->any_deletions) OG_TRY(get_addrs(v, &addrs)); /* (takes the lock itself) */
    pthread_mutex_lock(&v->lock);
    og_status st = OG_OK;
    d = atomic_load_explicit(&v->dicts[i], memory_order_acquire);
    if (!d && !atomic_load(&v->nodict[i]) && !atomic_load_explicit(&v->cols[i], memory_order_acquire)) {
        og_vector *unused;
        st = og_tv_load_column(v, i, addrs, &unused, &d);
        if (st == OG_OK) {
            atomic_fetch_add(&dict_loads, 1);
            atomic_fetch_add(&v->derived_bytes, og_dictcol_bytes(d));
            atomic_store_explicit(&v->dicts[i], d, memory_order_release);
        } else if (st == OG_ERR_LIMIT) { /* too many distinct values: the plain column serves */
            og_error_clear();
            st = OG_OK;
            atomic_store(&v->nodict[i], 1);
        }
    }
    pthread_mutex_unlock(&v->lock);
    if (st == OG_OK) *out = d;
    return st;
}

og_status og_tableview_column(og_tableview *v, int32_t field_id, const og_vector **out)
{
    *out = NULL;
    size_t i = 0;
    while (i < v->ntop && v->top_ids[i] != field_id) i++;
    if (i == v->ntop) {
        if (og_lance_schema_find_id(&v->m.schema, field_id) >= 0)
            return og_err(OG_ERR_INVALID, "table %s: field id %d is not a top-level field", og_table_dir(v->table),
                          field_id);
        return og_err(OG_ERR_NOT_FOUND, "table %s version %llu has no field id %d", og_table_dir(v->table),
                      (unsigned long long)v->m.version, field_id);
    }
    og_vector *c = atomic_load_explicit(&v->cols[i], memory_order_acquire);
    if (c) {
        *out = c;
        return OG_OK;
    }
    const uint64_t *addrs = NULL;
    if (v->nrows && v->any_deletions) OG_TRY(get_addrs(v, &addrs)); /* (takes the lock itself) */
    pthread_mutex_lock(&v->lock);
    og_status st = OG_OK;
    c = atomic_load_explicit(&v->cols[i], memory_order_acquire);
    if (!c) {
        st = og_tv_load_column(v, i, addrs, &c, NULL);
        if (st == OG_OK) {
            atomic_fetch_add(&v->derived_bytes, vector_bytes(c));
            atomic_store_explicit(&v->cols[i], c, memory_order_release);
        }
    }
    pthread_mutex_unlock(&v->lock);
    if (st == OG_OK) *out = c;
    return st;
}

int og_tableview_has_field(const og_tableview *v, int32_t field_id)
{
    return og_lance_schema_find_id(&v->m.schema, field_id) >= 0;
}

og_status og_tableview_zones(og_tableview *v, int32_t field_id, const og_colzones **out)
{
    *out = NULL;
    const og_vector *col;
    OG_TRY(og_tableview_column(v, field_id, &col)); /* also: the field exists */
    size_t i = 0;
    while (i < v->ntop && v->top_ids[i] != field_id) i++;
    og_colzones *z = atomic_load_explicit(&v->zones[i], memory_order_acquire);
    if (!z) {
        pthread_mutex_lock(&v->lock);
        z = atomic_load_explicit(&v->zones[i], memory_order_acquire);
        og_status st = OG_OK;
        if (!z && (st = og_colzones_build(col, &z)) == OG_OK && z) {
            atomic_fetch_add(&v->derived_bytes, z->nzones * (1 + 2 * sizeof(int64_t)) + sizeof *z);
            atomic_store_explicit(&v->zones[i], z, memory_order_release);
        }
        pthread_mutex_unlock(&v->lock);
        OG_TRY(st);
    }
    *out = z;
    return OG_OK;
}

#define OG_TABLEVIEW_POINT_GATHERS 16
#define OG_TABLEVIEW_POINT_SHARE 256
/* The key maps' read caches of one view, together (prepare_keys). */
#define OG_TV_KEYMAP_READ_CACHE ((size_t)2 << 20)

typedef struct addr_at {
    uint64_t addr;
    size_t i; /* index among the gathered rows */
} addr_at;

static int addr_at_cmp(const void *pa, const void *pb)
{
    const addr_at *a = pa, *b = pb;
    return (a->addr > b->addr) - (a->addr < b->addr);
}

og_status og_tableview_gather(og_tableview *v, int32_t field_id, const uint32_t *rows, size_t n, og_vector *out)
{
    memset(out, 0, sizeof *out);
    size_t i = 0;
    while (i < v->ntop && v->top_ids[i] != field_id) i++;
    og_vector *c = i < v->ntop ? atomic_load_explicit(&v->cols[i], memory_order_acquire) : NULL;
    /* A column read by point gathers again and again (a warm process) is loaded once, when
     * the rows its point reads fetched reach 1/OG_TABLEVIEW_POINT_SHARE of the view's rows (at
     * least OG_TABLEVIEW_POINT_GATHERS): a point read costs a few µs a row (the data file's
     * reader is kept in the table's cache: table.h og_table_take), a whole load a few ns a
     * row, so by then the reads have cost about what the load would, and a process that looks
     * up a few keys of a big table never holds its columns (at 5M nodes the benchmark's
     * lookups held 185 MiB of loaded columns: docs/benchmarks.md "Scaling"). */
    size_t load_at = v->nrows / OG_TABLEVIEW_POINT_SHARE;
    if (load_at < OG_TABLEVIEW_POINT_GATHERS) load_at = OG_TABLEVIEW_POINT_GATHERS;
    og_dictcol *d = i < v->ntop && !c ? atomic_load_explicit(&v->dicts[i], memory_order_acquire) : NULL;
    if (d) return og_dictcol_gather(out, d, rows, n);
    if (i == v->ntop || c || atomic_fetch_add(&v->points[i], (unsigned)(n ? n : 1)) >= load_at) {
        const og_dictcol *dc = NULL;
        if (i < v->ntop && !c) OG_TRY(og_tableview_dict(v, field_id, &dc)); /* a String: coded if it can be */
        if (dc) return og_dictcol_gather(out, dc, rows, n);
        const og_vector *col;
        OG_TRY(og_tableview_column(v, field_id, &col));
        return og_vector_gather(out, col, rows, n);
    }
    if (v->top_type_st[i] != OG_OK) return og_tableview_column(v, field_id, &(const og_vector *){NULL});
    /* the addresses of the non-null rows, in one call (a deletion file is read once) */
    uint32_t *live = malloc((n ? n : 1) * sizeof *live);
    uint64_t *addr = malloc((n ? n : 1) * sizeof *addr);
    size_t nlive = 0;
    og_status st = live && addr ? OG_OK : og_err(OG_ERR_NOMEM, "table view: out of memory");
    for (size_t k = 0; k < n && st == OG_OK; k++)
        if (rows[k] != UINT32_MAX) live[nlive++] = rows[k];
    if (st == OG_OK) st = og_tableview_row_addrs(v, live, nlive, addr);
    free(live);
    if (st == OG_OK) st = og_vector_init(out, v->top_types[i]);
    if (st != OG_OK) {
        free(addr);
        return st;
    }
    /* one take per data file (a file mapped and its reader opened once, however many of the
     * rows it holds), the rows in address order; then copied out in the caller's order */
    addr_at *ord = malloc((nlive ? nlive : 1) * sizeof *ord);
    uint64_t *at = malloc((nlive ? nlive : 1) * sizeof *at); /* part << 32 | index in it */
    uint32_t *offs = malloc((nlive ? nlive : 1) * sizeof *offs);
    og_vector *parts = calloc(nlive ? nlive : 1, sizeof *parts);
    size_t nparts = 0;
    if (!ord || !at || !offs || !parts) st = og_err(OG_ERR_NOMEM, "table view: out of memory");
    if (st == OG_OK) {
        for (size_t j = 0; j < nlive; j++) ord[j] = (addr_at){addr[j], j};
        qsort(ord, nlive, sizeof *ord, addr_at_cmp);
    }
    for (size_t a = 0, b; st == OG_OK && a < nlive; a = b) {
        uint64_t frag = OG_ROW_ADDR_FRAG(ord[a].addr);
        for (b = a; b < nlive && OG_ROW_ADDR_FRAG(ord[b].addr) == frag; b++) {
            offs[b - a] = (uint32_t)OG_ROW_ADDR_OFFSET(ord[b].addr);
            at[ord[b].i] = (uint64_t)nparts << 32 | (b - a);
        }
        og_vector *one = &parts[nparts];
        st = og_table_take(v->table, &v->m, frag, offs, b - a, &field_id, 1, one);
        if (st != OG_OK) break;
        nparts++;
        if (one->len != b - a || !og_type_eq(one->type, out->type))
            st = og_err(OG_ERR_CORRUPT, "table %s version %llu field id %d: a point read disagrees with the schema",
                        og_table_dir(v->table), (unsigned long long)v->m.version, field_id);
    }
    for (size_t k = 0, j = 0; k < n && st == OG_OK; k++) {
        if (rows[k] == UINT32_MAX) {
            st = og_vector_append_null(out);
            continue;
        }
        uint64_t w = at[j++];
        st = og_vector_append_from(out, &parts[w >> 32], (size_t)(w & 0xffffffffu));
    }
    for (size_t p = 0; p < nparts; p++) og_vector_free(&parts[p]);
    free(parts);
    free(offs);
    free(at);
    free(ord);
    free(addr);
    if (st != OG_OK) og_vector_free(out);
    return st;
}

/* The column of the top-level String field `name`.  OG_ERR_INVALID when absent or not a
 * String (`role` says what the caller needs it for). */
static og_status string_column(og_tableview *v, const char *name, const char *role, const og_vector **out)
{
    long idx = og_tv_sys_field_index(&v->m.schema, name);
    og_type t;
    if (idx < 0 || og_lance_schema_field_type(&v->m.schema, (size_t)idx, &t) != OG_OK || t.id != OG_T_STRING)
        return og_err(OG_ERR_INVALID, "table %s version %llu has no String field '%s' (%s)", og_table_dir(v->table),
                      (unsigned long long)v->m.version, name, role);
    return og_tableview_column(v, v->m.schema.fields[idx].id, out);
}

/* ------------------------------------------------------------------------------------------ */
/* The id map                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static og_status build_idmap(const og_vector *ids, og_strmap **out)
{
    *out = NULL;
    atomic_fetch_add(&og_tv_whole_reads, 1);
    og_strmap *m = malloc(sizeof *m);
    if (!m) return og_err(OG_ERR_NOMEM, "table view: out of memory");
    og_strmap_init(m);
    size_t key_bytes = ids->len ? (size_t)(ids->offsets[ids->len] - ids->offsets[0]) : 0;
    og_status st = og_strmap_reserve(m, ids->len - ids->null_count, key_bytes);
    for (size_t r = 0; st == OG_OK && r < ids->len; r++) {
        if (og_vector_is_null(ids, r)) continue;
        size_t n;
        const uint8_t *p = og_vector_get_bytes(ids, r, &n);
        st = og_strmap_insert(m, p, n, (uint32_t)r, NULL, NULL); /* the first row of an id wins */
    }
    if (st != OG_OK) {
        og_strmap_free(m);
        free(m);
        return st;
    }
    *out = m;
    return OG_OK;
}

/* The view's id map, built on first use. */
static og_status get_idmap(og_tableview *v, const og_strmap **out)
{
    og_strmap *m = atomic_load_explicit(&v->idmap, memory_order_acquire);
    if (m) {
        *out = m;
        return OG_OK;
    }
    const og_vector *ids;
    OG_TRY(string_column(v, "id", "node ids", &ids));
    pthread_mutex_lock(&v->lock);
    og_status st = OG_OK;
    m = atomic_load_explicit(&v->idmap, memory_order_acquire);
    if (!m) {
        st = build_idmap(ids, &m);
        if (st == OG_OK) {
            atomic_fetch_add(&v->derived_bytes, sizeof *m + og_strmap_bytes(m));
            atomic_store_explicit(&v->idmap, m, memory_order_release);
        }
    }
    pthread_mutex_unlock(&v->lock);
    if (st == OG_OK) *out = m;
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Persisted indexes (index/keymap.h, index/csr.h)                                             */
/* ------------------------------------------------------------------------------------------ */

/* OG_INDEX=off: never open or write index files (every lookup and traversal builds in memory,
 * as before they existed).  OG_INDEX=read: open them, never write them.  Read once. */
static int index_mode_env = -1; /* 0 off, 1 read, 2 read + write */

int og_tableview_index_mode(void)
{
    int m = __atomic_load_n(&index_mode_env, __ATOMIC_ACQUIRE);
    if (m >= 0) return m;
    const char *e = getenv("OG_INDEX");
    m = !e || !*e ? 2 : !strcmp(e, "off") || !strcmp(e, "0") ? 0 : !strcmp(e, "read") ? 1 : 2;
    __atomic_store_n(&index_mode_env, m, __ATOMIC_RELEASE);
    return m;
}

void og_tableview_set_index_mode(int mode) { __atomic_store_n(&index_mode_env, mode, __ATOMIC_RELEASE); }

/* The id field of a node view, or -1. */
static int32_t id_field(const og_tableview *v)
{
    long idx = og_tv_sys_field_index(&v->m.schema, "id");
    og_type t;
    if (idx < 0 || og_lance_schema_field_type(&v->m.schema, (size_t)idx, &t) != OG_OK || t.id != OG_T_STRING) {
        og_error_clear();
        return -1;
    }
    return v->m.schema.fields[idx].id;
}

/* Writes the keymaps this view built but the store lacks (caller holds the lock).  Failures
 * (a read-only store, a full disk) are not the reader's problem: the maps stay in memory. */
static void keymap_cache_put(og_tableview *v, char kind, const char *key, const uint8_t *p, size_t len);

static void save_keymaps(og_tableview *v, int32_t fid)
{
    for (size_t i = 0; i < v->m.nfragments; i++) {
        if (!v->km_unsaved[i]) continue; /* (set only for a map km_get opened) */
        char key[512];
        og_status st = og_keymap_store_key(key, sizeof key, og_table_dir(v->table), &v->m.fragments[i], fid);
        if (st == OG_OK) {
            /* a keymap opened over heap bytes: its own bytes are the file */
            const og_keymap *k = atomic_load(&atomic_load(&v->kms)[i]);
            st = og_store_put_if_absent(v->store, key, og_keymap_base(k), og_keymap_bytes(k));
            og_fault_point("index.after_keymap");
        }
        if (st != OG_OK && st != OG_ERR_ALREADY_EXISTS) {
            og_error_clear();
            break; /* one failure says the store will not take them: stop trying */
        }
        v->km_unsaved[i] = 0;
        if (og_table_cache(v->table)) { /* the store has it now: later views need not save it */
            char ckey[600];
            snprintf(ckey, sizeof ckey, "K:%s", key);
            og_cache_remove(og_table_cache(v->table), ckey);
            const og_keymap *k = atomic_load(&atomic_load(&v->kms)[i]);
            keymap_cache_put(v, 'k', key, og_keymap_base(k), og_keymap_bytes(k));
        }
    }
    og_error_clear();
    atomic_store(&v->keys_saved, 1);
}

static void keymap_bytes_free(void *p)
{
    og_bytes_free(p);
    free(p);
}

/* Keymap bytes are kept in the table's cache, "k:<store key>" when the store holds them and
 * "K:<store key>" when built here and not (yet) saved: a keymap belongs to one immutable data
 * file (its key holds the file's id), and every write opens a view of the table's new version,
 * which would otherwise fetch (or rebuild) the keymap of every fragment again. */
static void keymap_cache_put(og_tableview *v, char kind, const char *key, const uint8_t *p, size_t len)
{
    og_cache *cache = og_table_cache(v->table);
    og_bytes *b = cache ? malloc(sizeof *b) : NULL;
    if (!b) return;
    b->data = malloc(len ? len : 1);
    b->len = len;
    if (!b->data) {
        free(b);
        return;
    }
    memcpy(b->data, p, len);
    char ckey[600];
    og_cache_entry *e;
    snprintf(ckey, sizeof ckey, "%c:%s", kind, key);
    if (og_cache_put(cache, ckey, b, len + sizeof *b, keymap_bytes_free, &e) == OG_OK) og_cache_entry_release(e);
    og_error_clear();
}

void og_tableview_seed_keymap(og_tableview *v, const og_manifest *m, uint64_t fragment_id, const og_vector *cols,
                              size_t ncols)
{
    if (!og_tableview_index_mode() || !og_table_cache(v->table)) return;
    long idx = og_tv_sys_field_index(&m->schema, "id");
    long fi = og_manifest_find_fragment(m, fragment_id);
    og_type t;
    if (idx < 0 || fi < 0 || og_lance_schema_field_type(&m->schema, (size_t)idx, &t) != OG_OK || t.id != OG_T_STRING) {
        og_error_clear();
        return;
    }
    size_t top = 0; /* the id's position among the top-level columns */
    for (long i = 0; i < idx; i++) top += m->schema.fields[i].parent_id == -1;
    if (top >= ncols || cols[top].len != m->fragments[fi].physical_rows) return;
    char key[512];
    og_buf b = OG_BUF_INIT;
    if (og_keymap_store_key(key, sizeof key, og_table_dir(v->table), &m->fragments[fi], m->schema.fields[idx].id) == OG_OK &&
        og_keymap_encode(&cols[top], &b) == OG_OK)
        keymap_cache_put(v, 'K', key, b.data, b.len);
    og_buf_free(&b);
    og_error_clear();
}

/* Opens the keymap `key`: from the cache, else from the store (a local store maps the file and
 * keeps no copy; a remote one fetches it into the cache).  *built = 1 when the bytes are a
 * built copy the store may lack (the view then saves it as it would have after building). */
static og_status keymap_open_cached(og_tableview *v, const char *key, og_keymap **out, int *built)
{
    og_cache *cache = og_table_cache(v->table);
    *built = 0;
    if (!cache) return og_keymap_open(out, v->store, key);
    char ckey[600];
    snprintf(ckey, sizeof ckey, "k:%s", key);
    og_cache_entry *e = og_cache_get(cache, ckey);
    if (!e) {
        ckey[0] = 'K';
        e = og_cache_get(cache, ckey);
        *built = e != NULL;
        ckey[0] = 'k';
    }
    if (!e && og_store_is_local(v->store)) return og_keymap_open(out, v->store, key);
    if (!e) {
        og_bytes *b = calloc(1, sizeof *b);
        if (!b) return og_err(OG_ERR_NOMEM, "table view: out of memory");
        og_status st = og_store_get(v->store, key, b);
        if (st != OG_OK) {
            free(b);
            return st;
        }
        OG_TRY(og_cache_put(cache, ckey, b, b->len + sizeof *b, keymap_bytes_free, &e));
    }
    const og_bytes *have = og_cache_entry_value(e);
    uint8_t *copy = malloc(have->len ? have->len : 1);
    if (copy) memcpy(copy, have->data, have->len);
    size_t len = have->len;
    og_cache_entry_release(e);
    if (!copy) return og_err(OG_ERR_NOMEM, "table view: out of memory");
    og_status st = og_keymap_open_bytes(out, copy, len, copy, NULL);
    if (st != OG_OK) free(copy);
    return st;
}

/* The per-fragment key map slots of v, made once (each map opens when a probe first needs
 * it: km_get).  OG_ERR_INVALID when the view has no String id; *fid its field id. */
static og_status keys_begin(og_tableview *v, int32_t *fid)
{
    if (atomic_load_explicit(&v->kms, memory_order_acquire)) { /* (a lookup's fast path) */
        *fid = v->km_fid;
        return OG_OK;
    }
    *fid = id_field(v);
    if (*fid < 0)
        return og_err(OG_ERR_INVALID, "table %s version %llu has no String field 'id' (node ids)",
                      og_table_dir(v->table), (unsigned long long)v->m.version);
    pthread_mutex_lock(&v->lock);
    og_status st = OG_OK;
    if (!atomic_load_explicit(&v->kms, memory_order_acquire)) {
        size_t nf = v->m.nfragments;
        og_keymap *_Atomic *kms = calloc(nf ? nf : 1, sizeof *kms);
        uint8_t *unsaved = calloc(nf ? nf : 1, 1);
        if (!kms || !unsaved) {
            free(kms);
            free(unsaved);
            st = og_err(OG_ERR_NOMEM, "table view: out of memory");
        } else {
            v->km_unsaved = unsaved;
            v->km_fid = *fid;
            atomic_fetch_add(&v->derived_bytes, nf * (sizeof *kms + 1));
            atomic_store_explicit(&v->kms, kms, memory_order_release);
        }
    }
    pthread_mutex_unlock(&v->lock);
    return st;
}

/* The key map of fragment i: opened (or built in memory) the first time a probe or
 * prepare_keys needs it, then kept for the view's life.  A key lookup at 5M nodes (77
 * fragments after a bulk load) used to open every fragment's map before probing the first:
 * most of a fresh process's first lookup (docs/benchmarks.md "Scaling"). */
static og_status km_get(og_tableview *v, size_t i, int32_t fid, og_keymap **out)
{
    og_keymap *_Atomic *kms = atomic_load_explicit(&v->kms, memory_order_acquire);
    *out = atomic_load_explicit(&kms[i], memory_order_acquire);
    if (*out) return OG_OK;
    int mode = og_tableview_index_mode();
    pthread_mutex_lock(&v->lock);
    og_status st = OG_OK;
    og_keymap *k = atomic_load_explicit(&kms[i], memory_order_acquire);
    if (!k && og_fault_error("tableview.keys")) /* tests: a key map that cannot be read */
        st = og_err(OG_ERR_IO, "table %s: reading its key maps failed (injected by OG_FAULT_ERROR)",
                    og_table_dir(v->table));
    if (!k && st == OG_OK) {
        const og_fragment *f = &v->m.fragments[i];
        size_t heap = 0;
        char key[512];
        og_status ks = mode ? og_keymap_store_key(key, sizeof key, og_table_dir(v->table), f, fid) : OG_ERR_NOT_FOUND;
        int built = 0;
        if (ks == OG_OK) ks = keymap_open_cached(v, key, &k, &built);
        if (ks == OG_OK && built && mode == 2) v->km_unsaved[i] = 1, atomic_store(&v->km_built, 1);
        if (ks == OG_OK && og_keymap_rows(k) != f->physical_rows) {
            og_keymap_free(k); /* not this file's map: rebuild, never trust it */
            k = NULL;
            ks = OG_ERR_CORRUPT;
        }
        if (ks != OG_OK) {
            og_error_clear();
            og_buf b = OG_BUF_INIT;
            atomic_fetch_add(&og_tv_whole_reads, 1);
            st = og_keymap_build(v->table, &v->m, f, fid, &b);
            if (st == OG_OK && mode) {
                char bkey[512];
                if (og_keymap_store_key(bkey, sizeof bkey, og_table_dir(v->table), f, fid) == OG_OK)
                    keymap_cache_put(v, 'K', bkey, b.data, b.len);
                og_error_clear();
            }
            if (st == OG_OK) {
                st = og_keymap_open_bytes(&k, b.data, b.len, b.data, NULL);
                if (st == OG_OK) {
                    heap += b.len;
                    if (mode == 2) v->km_unsaved[i] = 1, atomic_store(&v->km_built, 1);
                    b.data = NULL;
                }
            }
            og_buf_free(&b);
        }
        if (st == OG_OK) {
            /* the maps' read caches (index/keymap.h): OG_TV_KEYMAP_READ_CACHE shared by the
             * fragments, within [4 KiB, OG_KEYMAP_READ_CACHE] each, charged up front */
            size_t nf = v->m.nfragments, share = OG_TV_KEYMAP_READ_CACHE / (nf ? nf : 1);
            if (share < 4096) share = 4096;
            if (share > OG_KEYMAP_READ_CACHE) share = OG_KEYMAP_READ_CACHE;
            heap += og_keymap_set_read_cache(k, share);
            atomic_fetch_add(&v->derived_bytes, heap);
            atomic_store_explicit(&kms[i], k, memory_order_release);
        }
    }
    pthread_mutex_unlock(&v->lock);
    if (st == OG_OK) *out = k;
    return st;
}

/* Run maps (index/keymap.h, docs/indexes.md "Run maps"): a view of at least
 * OG_TV_KEYRUN_MIN_FRAGMENTS fragments looks for one ending at each of its last
 * OG_TV_KEYRUN_TRIES fragments (a run written after a bulk load, then a few small appends). */
#define OG_TV_KEYRUN_MIN_FRAGMENTS 8
#define OG_TV_KEYRUN_TRIES 4

/* Adopts run map k if it covers some fragment of v (v->lock held): each of its fragments whose
 * id, rows and id file match one of v's.  1 when adopted (k is v's then), 0 when not. */
static int krun_adopt(og_tableview *v, og_keymap *k, int32_t fid)
{
    const og_keymap_frag *rf;
    size_t nr = og_keymap_run_frags(k, &rf), nf = v->m.nfragments;
    int32_t *view = malloc(nr * sizeof *view);
    uint8_t *covered = calloc(nf, 1);
    size_t hits = 0;
    for (size_t o = 0; view && covered && o < nr; o++) {
        view[o] = -1;
        long at = og_manifest_find_fragment(&v->m, rf[o].id);
        og_keymap_frag mine;
        if (at < 0 || covered[at] || og_keymap_frag_of(&mine, &v->m.fragments[at], fid) != OG_OK) {
            og_error_clear();
            continue;
        }
        if (mine.rows != rf[o].rows || mine.tag != rf[o].tag) continue; /* (another file under that id) */
        view[o] = (int32_t)at;
        covered[at] = 1;
        hits++;
    }
    if (!hits) {
        free(view);
        free(covered);
        return 0;
    }
    v->krun = k;
    v->krun_view = view;
    v->km_covered = covered;
    size_t cache = og_keymap_set_read_cache(k, OG_KEYMAP_READ_CACHE);
    atomic_fetch_add(&v->derived_bytes, sizeof(og_keymap_frag) * nr + nr * sizeof *view + nf + cache);
    return 1;
}

/* v's run map, looked for once (NULL when there is none: every failure only means probing the
 * fragments' own maps). */
static og_keymap *krun_get(og_tableview *v, int32_t fid)
{
    if (atomic_load_explicit(&v->krun_state, memory_order_acquire)) return v->krun;
    size_t nf = v->m.nfragments;
    int mode = og_tableview_index_mode();
    pthread_mutex_lock(&v->lock);
    if (!atomic_load_explicit(&v->krun_state, memory_order_acquire)) {
        for (size_t t = 0; mode && nf >= OG_TV_KEYRUN_MIN_FRAGMENTS && t < OG_TV_KEYRUN_TRIES && !v->krun; t++) {
            char key[512];
            og_keymap *k = NULL;
            if (og_keymap_run_store_key(key, sizeof key, og_table_dir(v->table), &v->m.fragments[nf - 1 - t], fid) == OG_OK &&
                og_keymap_open(&k, v->store, key) == OG_OK && og_keymap_is_run(k) && krun_adopt(v, k, fid))
                break;
            og_keymap_free(k);
            og_error_clear();
        }
        atomic_store_explicit(&v->krun_state, 1, memory_order_release);
    }
    pthread_mutex_unlock(&v->lock);
    return v->krun;
}

/* Writes the run map of all of v's fragments (their maps open in kms) unless one covers them
 * already; after the publish, best effort (docs/indexes.md "Run maps"). */
static void save_run(og_tableview *v, int32_t fid)
{
    size_t nf = v->m.nfragments;
    if (nf < OG_TV_KEYRUN_MIN_FRAGMENTS) return;
    og_keymap *have = krun_get(v, fid);
    size_t covered = 0;
    for (size_t i = 0; have && i < nf; i++) covered += v->km_covered[i];
    if (covered == nf) return;
    int expect = 0;
    if (!atomic_compare_exchange_strong(&v->krun_saving, &expect, 1)) return;
    og_keymap *_Atomic *kms = atomic_load_explicit(&v->kms, memory_order_acquire);
    og_keymap **maps = malloc(nf * sizeof *maps);
    og_keymap_frag *frags = malloc(nf * sizeof *frags);
    og_status st = maps && frags ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < nf && st == OG_OK; i++) {
        maps[i] = atomic_load_explicit(&kms[i], memory_order_acquire);
        if (!maps[i]) st = og_err(OG_ERR_INTERNAL, "fragment %zu has no key map", i);
        else st = og_keymap_frag_of(&frags[i], &v->m.fragments[i], fid);
    }
    char key[512];
    if (st == OG_OK) st = og_keymap_run_store_key(key, sizeof key, og_table_dir(v->table), &v->m.fragments[nf - 1], fid);
    if (st == OG_OK) st = og_keymap_put_run(v->store, key, maps, frags, nf); /* (in pieces: ~310 MB at 10M keys) */
    free(maps);
    free(frags);
    og_error_clear(); /* (derived: ALREADY_EXISTS is a racing builder's identical file) */
}

/* Opens (or builds in memory) the keymap of every fragment, once; with `persist` also writes
 * the built ones to the store (once), then the run map of them all.  OG_ERR_INVALID when the
 * view has no String id. */
static og_status prepare_keys(og_tableview *v, int persist)
{
    int mode = og_tableview_index_mode();
    if (persist && mode < 2) persist = 0;
    if (atomic_load_explicit(&v->keys_ready, memory_order_acquire) && !persist) return OG_OK;
    int32_t fid;
    OG_TRY(keys_begin(v, &fid));
    og_keymap *k;
    for (size_t i = 0; i < v->m.nfragments; i++) OG_TRY(km_get(v, i, fid, &k));
    pthread_mutex_lock(&v->lock);
    if (!atomic_load_explicit(&v->keys_ready, memory_order_acquire)) {
        int any = 0;
        for (size_t i = 0; i < v->m.nfragments; i++) any |= v->km_unsaved[i];
        atomic_store(&v->keys_saved, !any);
        atomic_store_explicit(&v->keys_ready, 1, memory_order_release);
    }
    int save = persist && !atomic_load(&v->keys_saved);
    if (save) save_keymaps(v, fid);
    pthread_mutex_unlock(&v->lock);
    if (persist && atomic_load(&v->keys_saved)) save_run(v, fid); /* (members in the store first) */
    return OG_OK;
}

og_status og_tableview_prepare_keys(og_tableview *v, int persist) { return prepare_keys(v, persist); }

void og_tableview_save_keys(og_tableview *v)
{
    if (og_tableview_index_mode() < 2 || !atomic_load(&v->km_built)) return;
    int32_t fid = id_field(v);
    if (fid < 0) {
        og_error_clear();
        return;
    }
    pthread_mutex_lock(&v->lock);
    if (atomic_load(&v->km_built)) {
        atomic_store(&v->km_built, 0);
        save_keymaps(v, fid);
    }
    pthread_mutex_unlock(&v->lock);
}

typedef struct find_ctx {
    const og_tableview *v;
    const roaring_bitmap_t *del; /* the fragment's deletions, or NULL when it has none */
    size_t frag;
    uint32_t row;
    int found;
} find_ctx;

/* Keeps the first live offset: its view row is the fragment's start plus the offset less the
 * rows deleted before it. */
static int find_live(void *ud, uint32_t off)
{
    find_ctx *c = ud;
    const og_tableview *v = c->v;
    if (!c->del) { /* every row is live */
        c->row = (uint32_t)(v->frag_start[c->frag] + off);
        c->found = 1;
        return 1;
    }
    if (roaring_bitmap_contains(c->del, off)) return 0; /* a deleted row: look further */
    c->row = (uint32_t)(v->frag_start[c->frag] + off - roaring_bitmap_rank(c->del, off));
    c->found = 1;
    return 1;
}

og_status og_tableview_find_id(og_tableview *v, const char *id, size_t len, uint32_t *row)
{
    uint32_t r;
    OG_TRY(og_tableview_lookup_id(v, id, len, &r));
    if (r == OG_TABLEVIEW_NO_ROW)
        return og_err(OG_ERR_NOT_FOUND, "table %s version %llu: no row with id '%.*s'", og_table_dir(v->table),
                      (unsigned long long)v->m.version, len > 200 ? 200 : (int)len, id);
    if (row) *row = r;
    return OG_OK;
}

/* What a run map's probe found: its entries for one key, by ordinal then offset. */
typedef struct run_hits {
    uint32_t (*at)[2];
    size_t n, cap;
    uint32_t local[8][2];
    int nomem;
} run_hits;

static int run_hit(void *ud, uint32_t ord, uint32_t off)
{
    run_hits *h = ud;
    if (h->n == h->cap) { /* (many dead rows of one id) */
        size_t cap = h->cap * 2;
        uint32_t (*at)[2] = h->at == h->local ? malloc(cap * sizeof *at) : realloc(h->at, cap * sizeof *at);
        if (!at) {
            h->nomem = 1;
            return 1;
        }
        if (h->at == h->local) memcpy(at, h->local, sizeof h->local);
        h->at = at, h->cap = cap;
    }
    h->at[h->n][0] = ord, h->at[h->n][1] = off;
    h->n++;
    return 0;
}

/* The first live row of id among the fragments run map k covers: *frag its fragment (nf when
 * none).  The entries are collected first: a fragment's deletions are read under v->lock,
 * never under the map's. */
static og_status run_lookup(og_tableview *v, og_keymap *k, const char *id, size_t len, size_t *frag, uint32_t *row)
{
    size_t nf = v->m.nfragments;
    *frag = nf;
    run_hits h = {.cap = 8};
    h.at = h.local;
    og_status st = og_keymap_find_run(k, id, len, run_hit, &h);
    if (st == OG_OK && h.nomem) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < h.n && st == OG_OK; i++) {
        int32_t vi = v->krun_view[h.at[i][0]];
        if (vi < 0 || (size_t)vi >= *frag) continue; /* (not in this version, or after a live one) */
        find_ctx c = {v, NULL, (size_t)vi, 0, 0};
        if (v->m.fragments[vi].deletion.present) st = og_tv_frag_deletions(v, (size_t)vi, &c.del);
        if (st == OG_OK) find_live(&c, h.at[i][1]);
        if (c.found) *frag = (size_t)vi, *row = c.row;
    }
    if (h.at != h.local) free(h.at);
    if (st != OG_OK)
        return og_err_wrap(st, "table %s version %llu: its run key map", og_table_dir(v->table), (unsigned long long)v->m.version);
    return OG_OK;
}

og_status og_tableview_lookup_id(og_tableview *v, const char *id, size_t len, uint32_t *row)
{
    *row = OG_TABLEVIEW_NO_ROW;
    const og_strmap *m = atomic_load_explicit(&v->idmap, memory_order_acquire);
    uint32_t r = 0;
    int found = 0;
    if (m || og_tableview_index_mode() == 0) {
        if (!m) OG_TRY(get_idmap(v, &m));
        found = og_strmap_get(m, id, len, &r);
    } else {
        int32_t fid;
        OG_TRY(keys_begin(v, &fid));
        /* the run map first (one probe for the fragments it covers), then the others' own maps
         * before the fragment it found: the first live row in fragment order either way */
        og_keymap *run = krun_get(v, fid);
        size_t stop = v->m.nfragments;
        if (run) {
            OG_TRY(run_lookup(v, run, id, len, &stop, &r));
            found = stop < v->m.nfragments;
        }
        for (size_t i = 0; i < stop; i++) {
            if (run && v->km_covered[i]) continue;
            find_ctx c = {v, NULL, i, 0, 0};
            og_keymap *k;
            OG_TRY(km_get(v, i, fid, &k)); /* (opened when the probe first reaches it) */
            if (v->m.fragments[i].deletion.present) OG_TRY(og_tv_frag_deletions(v, i, &c.del));
            og_status st = og_keymap_find(k, id, len, find_live, &c);
            if (st != OG_OK)
                return og_err_wrap(st, "table %s version %llu fragment %llu", og_table_dir(v->table),
                                   (unsigned long long)v->m.version, (unsigned long long)v->m.fragments[i].id);
            if (c.found) {
                found = 1, r = c.row;
                break;
            }
        }
    }
    if (found) *row = r;
    return OG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Topologies                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static int slot_matches(const topo_slot *s, const og_tableview *src, const og_tableview *dst)
{
    return s->src_version == src->m.version && s->dst_version == dst->m.version &&
           strcmp(s->src_dir, og_table_dir(src->table)) == 0 && strcmp(s->dst_dir, og_table_dir(dst->table)) == 0;
}

/* The cached topology for (src, dst), or NULL (takes the lock). */
static og_topology *find_topo(og_tableview *edges, const og_tableview *src, const og_tableview *dst)
{
    og_topology *t = NULL;
    pthread_mutex_lock(&edges->lock);
    for (size_t i = 0; i < edges->ntopos && !t; i++)
        if (slot_matches(edges->topos[i], src, dst)) t = edges->topos[i]->topo;
    pthread_mutex_unlock(&edges->lock);
    return t;
}

/* Endpoint rows of every edge: the node row of its src/dst id, OG_ROW_NONE when absent. */
typedef struct endpoint_job {
    const og_vector *ends;
    const og_strmap *ids;
    uint32_t *rows;
} endpoint_job;

static void *map_endpoints(void *arg)
{
    const endpoint_job *j = arg;
    og_strmap_get_many(j->ids, j->ends->values, j->ends->offsets, j->ends->len, OG_ROW_NONE, j->rows);
    if (j->ends->null_count)
        for (size_t e = 0; e < j->ends->len; e++)
            if (og_vector_is_null(j->ends, e)) j->rows[e] = OG_ROW_NONE;
    return NULL;
}

/* Maps the sources on a second thread while this one maps the destinations (both only read
 * their maps): 10M lookups at 5M edges are most of a first traversal. */
#define ENDPOINTS_PARALLEL_MIN 65536

static og_status build_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, og_topology **out)
{
    *out = NULL;
    atomic_fetch_add(&og_tv_whole_reads, 1);
    const og_vector *srcs, *dsts;
    const og_strmap *src_ids, *dst_ids;
    OG_TRY(string_column(edges, "src", "edge sources", &srcs));
    OG_TRY(string_column(edges, "dst", "edge destinations", &dsts));
    OG_TRY(get_idmap(src, &src_ids));
    OG_TRY(get_idmap(dst, &dst_ids));
    size_t n = edges->nrows;
    uint32_t *src_row = malloc((n ? n : 1) * sizeof *src_row);
    uint32_t *dst_row = malloc((n ? n : 1) * sizeof *dst_row);
    og_status st = src_row && dst_row ? OG_OK : og_err(OG_ERR_NOMEM, "table view: out of memory");
    if (st == OG_OK) {
        endpoint_job sj = {srcs, src_ids, src_row}, dj = {dsts, dst_ids, dst_row};
        pthread_t th;
        int threaded = n >= ENDPOINTS_PARALLEL_MIN && pthread_create(&th, NULL, map_endpoints, &sj) == 0;
        map_endpoints(&dj);
        if (threaded)
            pthread_join(th, NULL);
        else
            map_endpoints(&sj);
        st = og_topology_build(out, (uint32_t)src->nrows, (uint32_t)dst->nrows, src_row, dst_row, n, NULL);
    }
    free(src_row);
    free(dst_row);
    return st;
}

static void csr_release(void *hold) { og_csr_free(hold); }
static void csr_read_ahead(void *c) { og_csr_prefault_async(c); }

/* The persisted adjacency of (edges, src, dst), or NULL when absent or not usable. */
og_topology *og_tv_open_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, int prefault)
{
    char key[512];
    og_csr *c = NULL;
    og_csr_arrays a;
    if (og_csr_store_key(key, sizeof key, og_tableview_dir(edges), edges->m.version, og_tableview_dir(src),
                         src->m.version, og_tableview_dir(dst), dst->m.version) != OG_OK ||
        og_csr_open(&c, edges->store, key, &a) != OG_OK) {
        og_error_clear();
        return NULL;
    }
    og_topology *t = NULL;
    if (a.n_src != src->nrows || a.n_dst != dst->nrows || a.edge_rows != edges->nrows ||
        og_topology_wrap(&t, (uint32_t)a.n_src, (uint32_t)a.n_dst, (size_t)a.n_edges, a.off, a.nbr, a.edge, csr_release,
                         c) != OG_OK) {
        og_csr_free(c); /* another version's numbering: never trust it */
        og_error_clear();
        return NULL;
    }
    if (og_csr_fd(c) >= 0) og_topology_read_by_pread(t, og_csr_fd(c), og_csr_data(c));
    /* read the file ahead when a traversal first turns to the mapping, not at open: the whole
     * topology (1 GB at 50M edges) for a point query's few lists was most of a 1-hop's first
     * call at 10M nodes (docs/benchmarks.md "Scaling") */
    if (prefault && og_store_is_local(edges->store)) {
        if (og_csr_fd(c) >= 0) og_topology_on_bulk(t, csr_read_ahead, c);
        else og_csr_prefault_async(c);
    }
    return t;
}

/* Writes a built topology for the next process (failures are ignored: it is derived). */
static void save_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, const og_topology *t)
{
    char key[512];
    og_csr_arrays a;
    uint32_t ns, nd;
    og_topology_arrays(t, &ns, &nd, a.off, a.nbr, a.edge);
    a.n_src = ns, a.n_dst = nd, a.n_edges = og_topology_edge_count(t), a.edge_rows = edges->nrows;
    og_buf b = OG_BUF_INIT;
    if (og_csr_store_key(key, sizeof key, og_tableview_dir(edges), edges->m.version, og_tableview_dir(src),
                         src->m.version, og_tableview_dir(dst), dst->m.version) == OG_OK &&
        og_csr_encode(&a, &b) == OG_OK) {
        og_store_put_if_absent(edges->store, key, b.data, b.len);
        og_fault_point("index.after_topology");
    }
    og_buf_free(&b);
    og_error_clear();
}

og_status og_tableview_save_topology_files(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                           const int fd[2], size_t n)
{
    og_status st = og_tv_check_topology_views(edges, src_nodes, dst_nodes);
    if (st != OG_OK || og_tableview_index_mode() != 2) return st;
    if (n != edges->nrows || src_nodes->nrows > UINT32_MAX || dst_nodes->nrows > UINT32_MAX)
        return og_err(OG_ERR_INVALID, "topology rows: %zu edges for a view of %zu", n, edges->nrows);
    char key[512];
    OG_TRY(og_csr_store_key(key, sizeof key, og_tableview_dir(edges), edges->m.version, og_tableview_dir(src_nodes),
                            src_nodes->m.version, og_tableview_dir(dst_nodes), dst_nodes->m.version));
    /* derived: a lost race, a failed read or write is ignored (the first reader builds) */
    if (og_topology_put_files(edges->store, key, (uint32_t)src_nodes->nrows, (uint32_t)dst_nodes->nrows, fd, n) == OG_OK)
        og_fault_point("index.after_topology");
    og_error_clear();
    return OG_OK;
}

og_status og_tableview_save_topology_rows(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                          uint32_t *rows[2], size_t n)
{
    /* written a section at a time from the rows (og_topology_put_rows), never built whole
     * and then encoded: at 50M edges the two copies had been a load's peak (docs/load.md
     * "The memory bound") */
    og_status st = og_tv_check_topology_views(edges, src_nodes, dst_nodes);
    char key[512];
    if (st == OG_OK && og_tableview_index_mode() == 2) {
        if (n != edges->nrows || src_nodes->nrows > UINT32_MAX || dst_nodes->nrows > UINT32_MAX)
            st = og_err(OG_ERR_INVALID, "topology rows: %zu edges for a view of %zu", n, edges->nrows);
        for (size_t i = 0; st == OG_OK && i < n; i++)
            if (rows[0][i] >= src_nodes->nrows || rows[1][i] >= dst_nodes->nrows)
                st = og_err(OG_ERR_INVALID, "topology rows: edge row %zu names a node row out of range", i);
        if (st == OG_OK)
            st = og_csr_store_key(key, sizeof key, og_tableview_dir(edges), edges->m.version, og_tableview_dir(src_nodes),
                                  src_nodes->m.version, og_tableview_dir(dst_nodes), dst_nodes->m.version);
        if (st == OG_OK) {
            /* derived: a lost race (the file is there) or a failed write is ignored, as save_topology */
            if (og_topology_put_rows(edges->store, key, (uint32_t)src_nodes->nrows, (uint32_t)dst_nodes->nrows, rows[0],
                                     rows[1], n) == OG_OK)
                og_fault_point("index.after_topology");
            og_error_clear();
        }
    }
    free(rows[0]);
    free(rows[1]);
    rows[0] = rows[1] = NULL;
    return st;
}

/* The version number at p (digits), the rest in the return value; NULL when p has none. */
static const char *parse_version(const char *p, uint64_t *v)
{
    char *end;
    if (*p < '0' || *p > '9') return NULL;
    unsigned long long x = strtoull(p, &end, 10);
    *v = x;
    return end;
}

/* Parses a topology file name `<ev>-<src dir>-<sv>-<dst dir>-<dv>.csr` (the part after
 * `_index/<edge dir>/topology/`) of the given node table dirs into v = {ev, sv, dv}; 0 when
 * the name is another pair's or not a topology's. */
static int parse_topology_name(const char *p, const char *src_dir, const char *dst_dir, uint64_t v[3])
{
    size_t sd = strlen(src_dir), dd = strlen(dst_dir);
    if (!(p = parse_version(p, &v[0])) || *p++ != '-' || strncmp(p, src_dir, sd) != 0) return 0;
    p += sd;
    if (*p++ != '-' || !(p = parse_version(p, &v[1])) || *p++ != '-' || strncmp(p, dst_dir, dd) != 0) return 0;
    p += dd;
    return *p++ == '-' && (p = parse_version(p, &v[2])) != NULL && strcmp(p, ".csr") == 0;
}

static int triple_newer_first(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i]) return x[i] > y[i] ? -1 : 1;
    return 0;
}

void og_tv_older_topologies(og_tableview *edges, og_tableview *src, og_tableview *dst, uint64_t (**v)[3], size_t *n)
{
    *v = NULL;
    *n = 0;
    char prefix[512];
    snprintf(prefix, sizeof prefix, "_index/%s/topology/", og_tableview_dir(edges));
    og_keylist kl;
    if (og_store_list(edges->store, prefix, NULL, 0, &kl) != OG_OK) {
        og_error_clear();
        return;
    }
    uint64_t(*cand)[3] = malloc((kl.count ? kl.count : 1) * sizeof *cand);
    size_t nc = 0, plen = strlen(prefix);
    for (size_t i = 0; cand && i < kl.count; i++) {
        uint64_t t[3];
        if (strncmp(kl.keys[i], prefix, plen) != 0 ||
            !parse_topology_name(kl.keys[i] + plen, og_tableview_dir(src), og_tableview_dir(dst), t))
            continue;
        if (t[0] > edges->m.version || t[1] > src->m.version || t[2] > dst->m.version) continue;
        memcpy(cand[nc++], t, sizeof t);
    }
    og_keylist_free(&kl);
    if (cand) qsort(cand, nc, sizeof *cand, triple_newer_first);
    *v = cand;
    *n = cand ? nc : 0;
}

og_status og_tableview_topology(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                const og_topology **out)
{
    return og_tableview_topology_ex(edges, src_nodes, dst_nodes, 0, out);
}

og_status og_tv_check_topology_views(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes)
{
    if (!edges || !src_nodes || !dst_nodes) return og_err(OG_ERR_INVALID, "topology: a view is missing");
    if (edges == src_nodes || edges == dst_nodes)
        return og_err(OG_ERR_INVALID, "topology: edge view %s is also passed as a node view", og_tableview_dir(edges));
    if (edges->store != src_nodes->store || edges->store != dst_nodes->store)
        return og_err(OG_ERR_INVALID, "topology: views of %s, %s and %s come from different stores",
                      og_tableview_dir(edges), og_tableview_dir(src_nodes), og_tableview_dir(dst_nodes));
    return OG_OK;
}

/* Keeps t (built, or `mapped` from a file) in the edge view's list; a racer's that got there
 * first wins and t is freed.  *out = the kept one. */
static og_status adopt_topology(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes, og_topology *t,
                                int mapped, const og_topology **out)
{
    topo_slot *slot = calloc(1, sizeof *slot);
    og_status st = OG_OK;
    if (slot) {
        slot->src_dir = strdup(og_tableview_dir(src_nodes));
        slot->dst_dir = strdup(og_tableview_dir(dst_nodes));
        slot->src_version = src_nodes->m.version;
        slot->dst_version = dst_nodes->m.version;
        slot->topo = t;
    }
    if (!slot || !slot->src_dir || !slot->dst_dir) st = og_err(OG_ERR_NOMEM, "table view: out of memory");

    pthread_mutex_lock(&edges->lock);
    og_topology *existing = NULL;
    for (size_t i = 0; i < edges->ntopos && !existing; i++)
        if (slot_matches(edges->topos[i], src_nodes, dst_nodes)) existing = edges->topos[i]->topo;
    if (st == OG_OK && !existing) {
        topo_slot **grown = realloc(edges->topos, (edges->ntopos + 1) * sizeof *grown);
        if (!grown) {
            st = og_err(OG_ERR_NOMEM, "table view: out of memory");
        } else {
            edges->topos = grown;
            edges->topos[edges->ntopos++] = slot;
            slot = NULL;
            /* a mapped topology is shared page cache, not this view's heap (but the read
             * caches of its pooled scratches are: engine/topology.h) */
            atomic_fetch_add(&edges->derived_bytes,
                             sizeof(topo_slot) + sizeof(void *) +
                                 (mapped ? (og_topology_reads_by_pread(t) ? OG_TOPOLOGY_POOL * OG_TOPOLOGY_READ_CACHE : 0)
                                         : og_topology_edge_count(t) * 4 * sizeof(uint32_t) +
                                               (src_nodes->nrows + dst_nodes->nrows + 2) * sizeof(uint64_t)));
            existing = t;
        }
    }
    pthread_mutex_unlock(&edges->lock);
    if (slot) {
        if (slot->topo != existing) og_topology_free(slot->topo);
        free(slot->src_dir);
        free(slot->dst_dir);
        free(slot);
    } else if (st != OG_OK) {
        og_topology_free(t);
    }
    if (st != OG_OK && !existing) return st;
    *out = existing;
    return OG_OK;
}

/* The topology of the views' own version triple, built (a delta from an older persisted one
 * when it can, else in full); *out NULL and OG_OK never. */
static og_status build_own(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes, int mode,
                           og_topology **out)
{
    *out = NULL;
    if (mode && og_tv_delta_topology(edges, src_nodes, dst_nodes, out) != OG_OK) { /* derived: a full build decides */
        og_error_clear();
        *out = NULL;
    }
    return *out ? OG_OK : build_topology(edges, src_nodes, dst_nodes, out);
}

og_status og_tableview_topology_ex(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes, int persist,
                                   const og_topology **out)
{
    *out = NULL;
    OG_TRY(og_tv_check_topology_views(edges, src_nodes, dst_nodes));
    int mode = og_tableview_index_mode();
    og_topology *t = find_topo(edges, src_nodes, dst_nodes);
    if (t && persist == OG_TOPO_MATERIALIZE && og_topology_is_composed(t) && mode == 2) {
        /* optimize wants the triple's own file; readers keep the composed one they hold */
        og_topology *own = og_tv_open_topology(edges, src_nodes, dst_nodes, 0);
        if (!own) {
            OG_TRY(build_own(edges, src_nodes, dst_nodes, mode, &own));
            save_topology(edges, src_nodes, dst_nodes, own);
        }
        og_topology_free(own);
    }
    if (t) {
        *out = t;
        return OG_OK;
    }
    /* Built without the edge view's lock (it takes the node views' locks); a racing builder
     * may finish first, and then its topology is the one everyone gets. */
    int mapped = 0;
    if (mode) t = og_tv_open_topology(edges, src_nodes, dst_nodes, 1);
    if (!t && mode && persist != OG_TOPO_MATERIALIZE &&
        og_tv_compose_topology(edges, src_nodes, dst_nodes, &t) != OG_OK) { /* derived: a build decides */
        og_error_clear();
        t = NULL;
    }
    if (t) {
        mapped = 1; /* (a composed one: the base mapped, a small patch) */
    } else {
        OG_TRY(build_own(edges, src_nodes, dst_nodes, mode, &t));
        if (persist && mode == 2) save_topology(edges, src_nodes, dst_nodes, t);
    }
    return adopt_topology(edges, src_nodes, dst_nodes, t, mapped, out);
}

og_status og_tableview_topology_at_hand(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                        const og_topology **out)
{
    *out = NULL;
    OG_TRY(og_tv_check_topology_views(edges, src_nodes, dst_nodes));
    og_topology *t = find_topo(edges, src_nodes, dst_nodes);
    if (t) {
        *out = t;
        return OG_OK;
    }
    /* a writer reads a few adjacency entries: no read-ahead of the whole file */
    if (!og_tableview_index_mode() || !(t = og_tv_open_topology(edges, src_nodes, dst_nodes, 0))) return OG_OK;
    return adopt_topology(edges, src_nodes, dst_nodes, t, 1, out);
}
