/*
 * table_gc.c — reclaiming table history (see table.h): og_table_gc removes the versions
 * older than a kept one and the files only they name; og_table_destroy removes a whole table
 * directory.  Used by a hard drop (`schema apply --allow-data-loss`) right after its publish.
 *
 * What og_table_gc deletes is decided from manifests alone.  A listing of data/ would also
 * show files a concurrent txn has staged for a version whose manifest does not exist yet;
 * nothing tells them apart from garbage without a grace period, so only files named by a
 * removed manifest and by no kept manifest are candidates.  Orphans of abandoned txns stay
 * for cleanup (og_table_sweep below, with its grace period).
 *
 * Order — files first, manifests last.  The removed manifests are the GC's to-do list: as long
 * as one exists, a repeated run finds its files again.
 *   - A crash while deleting files leaves every kept version whole (no file a kept manifest
 *     names is ever a candidate) and some old manifests whose files are partly gone; reading
 *     such a version fails with OG_ERR_NOT_FOUND naming the missing file (table_scan.c), never
 *     a crash, and the next run deletes the rest (a file already gone is not an error).
 *   - A crash while deleting manifests leaves fewer old versions; the next run ends the job.
 * The reverse order (manifests first) would lose the to-do list on a crash: the files of the
 * deleted manifests would be orphans no manifest names, i.e. garbage only a listing-based
 * cleanup could find.
 */
#include "table/table_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/fault.h"

/* A store key and its size when a manifest records it (0 = ask the store). */
typedef struct gc_file {
    char *key;
    uint64_t size;
} gc_file;

typedef struct gc_files {
    gc_file *v;
    size_t n, cap;
} gc_files;

static void gc_files_free(gc_files *f)
{
    for (size_t i = 0; i < f->n; i++) free(f->v[i].key);
    free(f->v);
    memset(f, 0, sizeof *f);
}

static og_status gc_files_push(gc_files *f, const char *key, uint64_t size)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        gc_file *p = realloc(f->v, cap * sizeof *p);
        if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
        f->v = p;
        f->cap = cap;
    }
    char *k = strdup(key);
    if (!k) return og_err(OG_ERR_NOMEM, "out of memory");
    f->v[f->n++] = (gc_file){k, size};
    return OG_OK;
}

static int gc_file_cmp(const void *a, const void *b)
{
    return strcmp(((const gc_file *)a)->key, ((const gc_file *)b)->key);
}

/* Sorts and drops duplicate keys. */
static void gc_files_unique(gc_files *f)
{
    if (f->n < 2) return;
    qsort(f->v, f->n, sizeof *f->v, gc_file_cmp);
    size_t k = 1;
    for (size_t i = 1; i < f->n; i++) {
        if (!strcmp(f->v[i].key, f->v[k - 1].key)) {
            free(f->v[i].key);
            continue;
        }
        f->v[k++] = f->v[i];
    }
    f->n = k;
}

static int gc_files_has(const gc_files *f, const char *key)
{
    gc_file probe = {(char *)key, 0};
    return f->n && bsearch(&probe, f->v, f->n, sizeof *f->v, gc_file_cmp) != NULL;
}

/* Every data file and deletion file manifest m names, as store keys, into out. */
static og_status collect_files(const og_table *t, const og_manifest *m, gc_files *out)
{
    char rel[4096], key[4096];
    for (size_t i = 0; i < m->nfragments; i++) {
        const og_fragment *f = &m->fragments[i];
        for (size_t k = 0; k < f->nfiles; k++) {
            if ((size_t)snprintf(rel, sizeof rel, "data/%s", f->files[k].path) >= sizeof rel)
                return og_err(OG_ERR_INVALID, "table %s: data file path too long", t->dir);
            OG_TRY(og_table_i_key(t, rel, key, sizeof key));
            OG_TRY(gc_files_push(out, key, f->files[k].size_bytes));
        }
        if (f->deletion.present) {
            OG_TRY(og_deletion_path(rel, sizeof rel, f->id, f->deletion.read_version, f->deletion.id, f->deletion.kind));
            OG_TRY(og_table_i_key(t, rel, key, sizeof key));
            OG_TRY(gc_files_push(out, key, 0));
        }
    }
    return OG_OK;
}

/* Deletes one key, adding its size to *bytes.  *deleted = 0 when it was already gone. */
static og_status delete_key(og_table *t, const char *key, uint64_t size, uint64_t *bytes, int *deleted)
{
    *deleted = 0;
    og_status st = OG_OK;
    if (!size) {
        st = og_store_head(t->store, key, &size);
        if (st == OG_ERR_NOT_FOUND) {
            og_error_clear();
            return OG_OK;
        }
        if (st != OG_OK) return st;
    }
    st = og_store_delete(t->store, key);
    if (st == OG_ERR_NOT_FOUND) {
        og_error_clear();
        return OG_OK;
    }
    if (st != OG_OK) return og_err_wrap(st, "table %s: deleting %s", t->dir, key);
    *bytes += size;
    *deleted = 1;
    return OG_OK;
}

/* Deletes manifest `v` and evicts its cached copy. */
static og_status delete_manifest(og_table *t, const og_table_i_manifest *v, og_table_gc_stats *s)
{
    int deleted;
    OG_TRY(delete_key(t, v->key, 0, &s->bytes_removed, &deleted));
    if (t->cache) {
        char ck[4200];
        og_table_i_cache_key(t, v->version, ck, sizeof ck);
        og_cache_remove(t->cache, ck);
    }
    if (deleted) s->versions_removed++;
    if (v->version > s->newest_removed) s->newest_removed = v->version;
    return OG_OK;
}

og_status og_table_gc(og_table *t, uint64_t keep_from, og_table_gc_stats *out)
{
    og_table_gc_stats local;
    og_table_gc_stats *s = out ? out : &local;
    memset(s, 0, sizeof *s);
    if (keep_from == 0) return og_err(OG_ERR_INVALID, "table %s: gc needs a version to keep", t->dir);
    og_table_i_manifest *vs;
    size_t nv;
    OG_TRY(og_table_i_list_manifests(t, &vs, &nv));
    int found = 0;
    for (size_t i = 0; i < nv; i++) found |= vs[i].version == keep_from;
    if (!found) {
        og_table_i_manifests_free(vs, nv);
        return og_err(OG_ERR_NOT_FOUND, "table %s: version %llu does not exist; nothing was reclaimed", t->dir,
                      (unsigned long long)keep_from);
    }
    /* Decide from manifests, before any delete: what kept versions name, then the rest. */
    gc_files keep = {0}, doomed = {0};
    og_status st = OG_OK;
    for (size_t i = 0; i < nv && st == OG_OK; i++) {
        og_manifest m;
        st = og_table_i_load(t, vs[i].version, &m, NULL);
        if (st == OG_ERR_NOT_FOUND && vs[i].version < keep_from) { /* a racing gc got there first */
            og_error_clear();
            st = OG_OK;
            continue;
        }
        if (st != OG_OK) {
            st = og_err_wrap(st, "table %s: gc reads version %llu", t->dir, (unsigned long long)vs[i].version);
            break;
        }
        st = collect_files(t, &m, vs[i].version >= keep_from ? &keep : &doomed);
        og_manifest_free(&m);
    }
    if (st == OG_OK) {
        gc_files_unique(&keep);
        gc_files_unique(&doomed);
    }
    for (size_t i = 0; i < doomed.n && st == OG_OK; i++) {
        if (gc_files_has(&keep, doomed.v[i].key)) continue;
        int deleted;
        st = delete_key(t, doomed.v[i].key, doomed.v[i].size, &s->bytes_removed, &deleted);
        if (deleted) s->files_removed++;
    }
    if (st == OG_OK) og_fault_point("table.gc_after_files");
    for (size_t i = 0; i < nv && st == OG_OK && vs[i].version < keep_from; i++) st = delete_manifest(t, &vs[i], s);
    gc_files_free(&keep);
    gc_files_free(&doomed);
    og_table_i_manifests_free(vs, nv);
    return st;
}

og_status og_table_destroy(og_table *t, og_table_gc_stats *out)
{
    og_table_gc_stats local;
    og_table_gc_stats *s = out ? out : &local;
    memset(s, 0, sizeof *s);
    og_table_i_manifest *vs;
    size_t nv;
    OG_TRY(og_table_i_list_manifests(t, &vs, &nv));
    og_keylist kl;
    og_status st = og_store_list(t->store, t->prefix, NULL, 0, &kl);
    if (st != OG_OK) {
        og_table_i_manifests_free(vs, nv);
        return st;
    }
    /* Everything but the manifests first (data, deletions, whatever else a Lance writer left). */
    char vprefix[4096];
    st = og_table_i_key(t, "_versions/", vprefix, sizeof vprefix);
    size_t vlen = strlen(vprefix);
    for (size_t i = 0; i < kl.count && st == OG_OK; i++) {
        const char *rest = kl.keys[i] + vlen;
        uint64_t v;
        if (!strncmp(kl.keys[i], vprefix, vlen) && !strchr(rest, '/') && og_manifest_parse_name(rest, &v, NULL))
            continue; /* a manifest: the second phase */
        int deleted;
        st = delete_key(t, kl.keys[i], 0, &s->bytes_removed, &deleted);
        if (deleted) s->files_removed++;
    }
    og_keylist_free(&kl);
    if (st == OG_OK) og_fault_point("table.gc_after_files");
    for (size_t i = 0; i < nv && st == OG_OK; i++) st = delete_manifest(t, &vs[i], s);
    og_table_i_manifests_free(vs, nv);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* og_table_sweep: cleanup's per-table pass (see table.h)                                   */
/* ---------------------------------------------------------------------------------------- */

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static og_status live_push(og_table_sweep_stats *s, const char *name)
{
    char **p = realloc(s->live_files, (s->nlive_files + 1) * sizeof *p);
    if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
    s->live_files = p;
    if (!(p[s->nlive_files] = strdup(name))) return og_err(OG_ERR_NOMEM, "out of memory");
    s->nlive_files++;
    return OG_OK;
}

static og_status live_version_push(og_table_sweep_stats *s, uint64_t v)
{
    uint64_t *p = realloc(s->live_versions, (s->nlive_versions + 1) * sizeof *p);
    if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
    s->live_versions = p;
    p[s->nlive_versions++] = v;
    return OG_OK;
}

void og_table_sweep_stats_free(og_table_sweep_stats *s)
{
    for (size_t i = 0; i < s->nlive_files; i++) free(s->live_files[i]);
    free(s->live_files);
    free(s->live_versions);
    s->live_files = NULL;
    s->live_versions = NULL;
    s->nlive_files = s->nlive_versions = 0;
}

/* Deletes (or, dry, only measures) one key whose size/mtime the caller knows. */
static og_status sweep_delete(og_table *t, const char *key, int dry, int *deleted)
{
    *deleted = 0;
    if (dry) {
        *deleted = 1;
        return OG_OK;
    }
    og_status st = og_store_delete(t->store, key);
    if (st == OG_ERR_NOT_FOUND) {
        og_error_clear();
        return OG_OK;
    }
    if (st != OG_OK) return og_err_wrap(st, "table %s: deleting %s", t->dir, key);
    *deleted = 1;
    return OG_OK;
}

og_status og_table_sweep(og_table *t, const og_table_sweep_opts *o, og_table_sweep_stats *s)
{
    memset(s, 0, sizeof *s);
    uint64_t *keep = NULL;
    if (o->nkeep) {
        keep = malloc(o->nkeep * sizeof *keep);
        if (!keep) return og_err(OG_ERR_NOMEM, "out of memory");
        memcpy(keep, o->keep, o->nkeep * sizeof *keep);
        qsort(keep, o->nkeep, sizeof *keep, u64_cmp);
    }
    uint64_t min_keep = o->nkeep ? keep[0] : UINT64_MAX;
    og_table_i_manifest *vs = NULL;
    size_t nv = 0;
    og_status st = og_table_i_list_manifests(t, &vs, &nv);
    if (st != OG_OK) {
        free(keep);
        return st;
    }
    /* 1. Classify every version from its manifest, before any delete. */
    gc_files live = {0}, named = {0};
    unsigned char *doomed = calloc(nv ? nv : 1, 1);
    uint64_t *msize = calloc(nv ? nv : 1, sizeof *msize);
    if (!doomed || !msize) st = og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < nv && st == OG_OK; i++) {
        og_manifest m;
        st = og_table_i_load(t, vs[i].version, &m, NULL);
        if (st == OG_ERR_NOT_FOUND) { /* a concurrent cleanup got there first */
            og_error_clear();
            st = OG_OK;
            continue;
        }
        if (st != OG_OK) {
            st = og_err_wrap(st, "table %s: cleanup reads version %llu", t->dir, (unsigned long long)vs[i].version);
            break;
        }
        int kept = o->nkeep && bsearch(&vs[i].version, keep, o->nkeep, sizeof *keep, u64_cmp) != NULL;
        int64_t mtime = m.ts_seconds > 0 ? m.ts_seconds * 1000 + m.ts_nanos / 1000000 : 0;
        if (!kept && mtime <= 0) { /* no timestamp in the manifest: ask the store */
            st = og_store_stat(t->store, vs[i].key, &msize[i], &mtime);
            if (st == OG_ERR_NOT_FOUND) {
                og_error_clear();
                st = OG_OK;
                og_manifest_free(&m);
                continue;
            }
        }
        int young = mtime <= 0 || mtime >= o->cutoff_ms;
        if (st == OG_OK) {
            if (kept || young) {
                st = collect_files(t, &m, &live);
                for (size_t f = 0; f < m.nfragments && st == OG_OK; f++)
                    for (size_t k = 0; k < m.fragments[f].nfiles && st == OG_OK; k++)
                        st = live_push(s, m.fragments[f].files[k].path);
                if (st == OG_OK) st = live_version_push(s, vs[i].version);
                if (!kept) s->versions_young++;
            } else {
                st = collect_files(t, &m, &named);
                if (vs[i].version < min_keep) doomed[i] = 1;
                else s->versions_emptied++; /* its number must never be reused: the manifest stays */
            }
        }
        og_manifest_free(&m);
    }
    if (st == OG_OK) {
        gc_files_unique(&live);
        gc_files_unique(&named);
    }
    /* 2. Manifests below the oldest kept version: no writer can ever take those numbers again. */
    for (size_t i = 0; i < nv && st == OG_OK; i++) {
        if (!doomed[i]) continue;
        uint64_t size = msize[i];
        if (!size) {
            st = og_store_head(t->store, vs[i].key, &size);
            if (st == OG_ERR_NOT_FOUND) {
                og_error_clear();
                st = OG_OK;
                continue;
            }
            if (st != OG_OK) break;
        }
        int deleted;
        st = sweep_delete(t, vs[i].key, o->dry_run, &deleted);
        if (st == OG_OK && deleted) {
            s->versions_removed++;
            s->versions_bytes += size;
            if (!o->dry_run && t->cache) {
                char ck[4200];
                og_table_i_cache_key(t, vs[i].version, ck, sizeof ck);
                og_cache_remove(t->cache, ck);
            }
        }
    }
    if (st == OG_OK && !o->dry_run) og_fault_point("cleanup.after_manifests");
    /* 3. Data and deletion files no live version names: listed, so orphans of failed or
     *    abandoned writes are found too; anything younger than the grace period stays. */
    og_keylist kl = {0};
    if (st == OG_OK) st = og_store_list(t->store, t->prefix, NULL, 0, &kl);
    size_t plen = strlen(t->prefix);
    for (size_t i = 0; i < kl.count && st == OG_OK; i++) {
        const char *rest = kl.keys[i] + plen;
        int is_data = !strncmp(rest, "data/", 5) && !strchr(rest + 5, '/');
        int is_del = !strncmp(rest, "_deletions/", 11) && !strchr(rest + 11, '/');
        if (!is_data && !is_del) continue; /* manifests, and anything that is not ours */
        if (gc_files_has(&live, kl.keys[i])) continue;
        uint64_t size = 0;
        int64_t mtime = 0;
        st = og_store_stat(t->store, kl.keys[i], &size, &mtime);
        if (st == OG_ERR_NOT_FOUND) {
            og_error_clear();
            st = OG_OK;
            continue;
        }
        if (st != OG_OK) break;
        if (mtime <= 0 || mtime >= o->cutoff_ms) { /* maybe a write in flight */
            if (is_data) st = live_push(s, rest + 5);
            s->files_young++;
            continue;
        }
        int deleted;
        st = sweep_delete(t, kl.keys[i], o->dry_run, &deleted);
        if (st != OG_OK || !deleted) continue;
        if (gc_files_has(&named, kl.keys[i])) {
            s->files_removed++;
            s->files_bytes += size;
        } else {
            s->orphans_removed++;
            s->orphans_bytes += size;
        }
    }
    og_keylist_free(&kl);
    gc_files_free(&live);
    gc_files_free(&named);
    og_table_i_manifests_free(vs, nv);
    free(doomed);
    free(msize);
    free(keep);
    if (st != OG_OK) og_table_sweep_stats_free(s);
    return st;
}
