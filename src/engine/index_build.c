/*
 * index_build.c — `omnigraph index build|status` over a branch head (index_build.h).
 *
 * Why per data file and not per table: a data file never changes, so its index file, once
 * whole, covers that file for every table version that names it; a commit adds files, and the
 * next run only builds theirs.
 */
#include "engine/index_build.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/catalog.h"
#include "engine/layout.h"
#include "engine/tableview.h"
#include "graph/graph.h"
#include "index/ann.h"
#include "index/fts.h"
#include "index/index.h"
#include "util/error.h"
#include "util/fault.h"

/* 1 when the file at key is a whole index of kind d for a data file of `rows` rows. */
static int file_ok(og_store *st, const char *key, const og_index_def *d, uint64_t rows, int *exists)
{
    og_mapping *m;
    *exists = 0;
    if (og_store_map(st, key, &m) != OG_OK) {
        og_error_clear();
        return 0;
    }
    *exists = 1;
    int ok = d->check(og_mapping_data(m), og_mapping_size(m), rows) == OG_OK;
    og_error_clear();
    og_mapping_release(m);
    return ok;
}

static og_status build_one(og_store *st, og_table *t, const og_manifest *m, const og_fragment *f, int32_t fid,
                           const og_index_def *d, const char *key, int damaged)
{
    og_buf b = OG_BUF_INIT;
    og_status s = d->build(t, m, f, fid, &b);
    if (s == OG_OK && damaged) {
        s = og_store_delete(st, key);
        if (s == OG_ERR_NOT_FOUND) {
            og_error_clear();
            s = OG_OK;
        }
    }
    if (s == OG_OK) {
        s = og_store_put_if_absent(st, key, b.data, b.len);
        if (s == OG_ERR_ALREADY_EXISTS) { /* a racing builder wrote the same bytes */
            og_error_clear();
            s = OG_OK;
        }
        if (s == OG_OK) og_fault_point("index.build.after_file");
    }
    og_buf_free(&b);
    return s;
}

static int prop_matches(const char *filter, const og_cat_type *t, const og_cat_prop *p)
{
    if (!filter) return 1;
    const char *dot = strchr(filter, '.');
    if (!dot) return !strcmp(filter, p->name);
    return (size_t)(dot - filter) == strlen(t->name) && !strncmp(filter, t->name, (size_t)(dot - filter)) &&
           !strcmp(dot + 1, p->name);
}

/* 1 when an object exists at key (the after-write rule trusts an existing file: checking it
 * would read every index file of the table after every load). */
static int file_exists(og_store *st, const char *key)
{
    uint64_t size;
    int ok = og_store_head(st, key, &size) == OG_OK;
    og_error_clear();
    return ok;
}

/* The rows of the data files of v holding property fid that have no index file of kind d. */
static og_status uncovered_rows(og_store *st, og_tableview *v, int32_t fid, const og_index_def *d, uint64_t *rows)
{
    const og_manifest *m = og_tableview_manifest(v);
    *rows = 0;
    for (size_t i = 0; i < m->nfragments; i++) {
        char key[512];
        og_status s = og_index_file_key(key, sizeof key, og_tableview_dir(v), &m->fragments[i], fid, d);
        if (s == OG_ERR_NOT_FOUND) { /* written before the property existed: all null */
            og_error_clear();
            continue;
        }
        if (s) return s;
        if (!file_exists(st, key)) *rows += m->fragments[i].physical_rows;
    }
    return OG_OK;
}

/* The data files of one property whose index files the automatic build after a write makes,
 * on BUILD_THREADS threads: each file is independent, and a bulk load's automatic text index
 * of its @key (16 files at 1M nodes) was the longest part of the load's index stage, on one
 * core (docs/load.md "Flow"). */
#define BUILD_THREADS 2

typedef struct build_todo {
    const og_fragment *f;
    char key[512];
    int exists;
    og_status st;
    char msg[512]; /* its failure's message (the thread's last error does not travel) */
} build_todo;

typedef struct build_pool {
    og_store *st;
    og_table *t;
    const og_manifest *m;
    int32_t fid;
    const og_index_def *d;
    build_todo *todo;
    size_t n;
    size_t next;      /* atomic: the next file to take */
    size_t failed_at; /* atomic: the lowest failed index (n: none); later files are skipped */
} build_pool;

static void *build_worker(void *arg)
{
    build_pool *b = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->n || i > __atomic_load_n(&b->failed_at, __ATOMIC_ACQUIRE)) break;
        build_todo *w = &b->todo[i];
        w->st = build_one(b->st, b->t, b->m, w->f, b->fid, b->d, w->key, w->exists);
        if (w->st == OG_OK) continue;
        snprintf(w->msg, sizeof w->msg, "%s", og_error_message());
        og_error_clear();
        size_t cur = __atomic_load_n(&b->failed_at, __ATOMIC_ACQUIRE);
        while (i < cur && !__atomic_compare_exchange_n(&b->failed_at, &cur, i, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        }
    }
    return NULL;
}

/* Builds todo[0..n), on BUILD_THREADS threads when `threads` (else in file order, one at a
 * time: `omnigraph index build`, whose crash points tests count file by file); the first
 * failure in file order is the answer, with its message. */
static og_status build_files(build_pool *b, int threads)
{
    b->next = 0;
    b->failed_at = b->n;
    pthread_t th;
    int threaded = threads && b->n >= 2 && BUILD_THREADS > 1 && pthread_create(&th, NULL, build_worker, b) == 0;
    build_worker(b);
    if (threaded) pthread_join(th, NULL);
    for (size_t i = 0; i < b->n; i++)
        if (b->todo[i].st != OG_OK) return og_err(b->todo[i].st, "%s", b->todo[i].msg);
    return OG_OK;
}

static og_status run_prop(og_read *r, og_store *st, size_t node, const og_cat_prop *p, const og_index_def *d,
                          int build, uint64_t auto_rows, json_t *list, uint64_t tot[3])
{
    const og_catalog *cat = og_read_catalog(r);
    og_tableview *v;
    OG_TRY(og_read_node_view(r, node, &v));
    int32_t fid;
    OG_TRY(og_layout_field_id(p->id, &fid));
    const og_manifest *m = og_tableview_manifest(v);
    og_table *t = og_tableview_table(v);
    uint64_t files = 0, covered = 0, built = 0, nulls = 0;
    og_status s = OG_OK;
    if (auto_rows) {
        uint64_t u = 0;
        OG_TRY(uncovered_rows(st, v, fid, d, &u));
        if (u < auto_rows) return OG_OK; /* below the rule: nothing to do, nothing reported */
    }
    build_pool pool = {st, t, m, fid, d, calloc(m->nfragments ? m->nfragments : 1, sizeof *pool.todo), 0, 0, 0};
    if (!pool.todo) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < m->nfragments && s == OG_OK; i++) {
        const og_fragment *f = &m->fragments[i];
        build_todo *w = &pool.todo[pool.n];
        s = og_index_file_key(w->key, sizeof w->key, og_tableview_dir(v), f, fid, d);
        if (s == OG_ERR_NOT_FOUND) {
            og_error_clear();
            s = OG_OK;
            nulls++;
            continue;
        }
        if (s) break;
        files++;
        if (auto_rows ? file_exists(st, w->key) : file_ok(st, w->key, d, f->physical_rows, &w->exists)) {
            covered++;
            continue;
        }
        if (!build) continue;
        w->f = f;
        pool.n++;
    }
    if (s == OG_OK && pool.n) s = build_files(&pool, auto_rows > 0);
    if (s == OG_OK) covered += pool.n, built += pool.n;
    free(pool.todo);
    if (s) return og_err_wrap(s, "index %s of %s.%s", d->name, cat->nodes[node].name, p->name);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "type", cat->nodes[node].name, "property",
                          p->name, "kind", d->name, "table", og_tableview_dir(v), "version",
                          (json_int_t)og_tableview_version(v), "files", (json_int_t)files, "covered",
                          (json_int_t)covered, "built", (json_int_t)built, "null_files", (json_int_t)nulls);
    if (!o || json_array_append_new(list, o)) return og_err(OG_ERR_NOMEM, "out of memory");
    tot[0] += files, tot[1] += covered, tot[2] += built;
    return OG_OK;
}

/* og_engine_index_run; auto_rows > 0: the after-write rule of og_engine_index_auto (only the
 * `fts` and `vector` kinds, existence is coverage, build a property only past auto_rows). */
static og_status index_run(og_engine *e, const og_index_run_opts *o, uint64_t auto_rows, json_t **report)
{
    *report = NULL;
    const og_index_def *only = NULL;
    if (o->kind && !(only = og_index_def_find(o->kind))) {
        char names[256] = "";
        for (size_t i = 0; i < og_index_def_count(); i++) {
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", og_index_def_at(i)->name);
        }
        return og_err(OG_ERR_INVALID, "unknown index type '%s' (known: %s)", o->kind, names);
    }
    og_read *r;
    OG_TRY(og_read_begin(&r, e, o->branch, NULL));
    const og_catalog *cat = og_read_catalog(r);
    json_t *list = json_array();
    og_status s = list ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    uint64_t tot[3] = {0, 0, 0};
    int matched = 0;
    for (size_t n = 0; n < cat->nnodes && s == OG_OK; n++) {
        const og_cat_type *t = &cat->nodes[n];
        for (size_t k = 0; k < t->nprops && s == OG_OK; k++) {
            const og_cat_prop *p = &t->props[k];
            if (p->index == OG_INDEX_NONE || !prop_matches(o->property, t, p)) continue;
            for (size_t di = 0; di < og_index_def_count() && s == OG_OK; di++) {
                const og_index_def *d = og_index_def_at(di);
                if ((only && d != only) || !d->applies(p->type, (int)p->index)) continue;
                if (auto_rows && d != &og_index_def_fts && d != &og_index_def_vector) continue;
                matched = 1;
                s = run_prop(r, og_engine_store(e), n, p, d, o->build, auto_rows, list, tot);
            }
        }
    }
    if (s == OG_OK && o->property && !matched)
        s = og_err(OG_ERR_NOT_FOUND, "no property '%s' has an index%s%s", o->property, only ? " of type " : "",
                   only ? only->name : "");
    if (s == OG_OK) {
        json_t *rep = json_pack("{s:s, s:s, s:I, s:I, s:I, s:O}", "branch", o->branch ? o->branch : "main", "commit",
                                og_snapshot_commit_id(og_read_snapshot(r)), "files", (json_int_t)tot[0], "covered",
                                (json_int_t)tot[1], "built", (json_int_t)tot[2], "indexes", list);
        if (!rep) s = og_err(OG_ERR_NOMEM, "out of memory");
        *report = rep;
    }
    json_decref(list);
    og_read_end(r);
    return s;
}

og_status og_engine_index_run(og_engine *e, const og_index_run_opts *o, json_t **report)
{
    return index_run(e, o, 0, report);
}

uint64_t og_engine_auto_index_rows(void)
{
    const char *v = getenv("OG_AUTO_INDEX_ROWS");
    if (!v || !*v) return OG_AUTO_INDEX_ROWS;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    return *end ? OG_AUTO_INDEX_ROWS : (uint64_t)n;
}

og_status og_engine_index_auto(og_engine *e, const char *branch, uint64_t rows_written, int compacted,
                               uint64_t *built)
{
    *built = 0;
    uint64_t min = og_engine_auto_index_rows();
    /* OG_INDEX=off / read: this process writes no index file */
    if (!min || (rows_written < min && !compacted) || og_tableview_index_mode() != 2) return OG_OK;
    og_index_run_opts o = {branch, NULL, NULL, 1};
    json_t *rep = NULL;
    og_status s = index_run(e, &o, min, &rep);
    if (s == OG_OK) *built = (uint64_t)json_integer_value(json_object_get(rep, "built"));
    json_decref(rep);
    return s;
}
