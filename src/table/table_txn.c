/*
 * table_txn.c — staged table writes: append, delete, overwrite, compact and schema changes
 * on top of a named base version, committed as one new Lance version (see table.h).
 *
 * The working state is a full manifest (a copy of the base) edited in memory.  Appends write
 * their data file at once (a unique data/<uuid>.lance nobody else can name) and add a
 * fragment with the next fragment id; deletions accumulate per fragment in a roaring bitmap
 * seeded from the fragment's current deletion file, and are written as new, cumulative BITMAP
 * files at commit; the manifest goes last, with put_if_absent, so it is the one step that
 * makes the version exist.  A lost put_if_absent means another writer took that number: we
 * re-encode the same content under the next number (the content never depends on the number
 * it gets, except the version field itself).
 */
#include "table/table_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table/lance_file.h"
#include "table/range_cache.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/id.h"

/* Writer feature flags we honour: 1 = deletion files. */
#define KNOWN_WRITER_FLAGS 1u
/* put_if_absent attempts at consecutive numbers before searching: a writer whose base is far
 * behind the newest version (a branch forked long ago, or many branches written from one
 * base) then finds a taken/free boundary above its last attempt with existence probes —
 * galloping, then bisecting — in O(log gap) probes instead of listing every version of the
 * table (a listing costs O(versions): it grew with the history).  Any free number above the
 * base will do: cleanup only frees numbers below the oldest retained version
 * (docs/maintenance.md), so a free number above a live base was never used. */
#define VERSION_PROBE_AFTER 4
/* A lost number is contention, not the caller's error: the commit keeps trying for this long
 * (and at least VERSION_MIN_ATTEMPTS times) before it gives up with a conflict. */
#define VERSION_RETRY_MS (60LL * 1000)
#define VERSION_MIN_ATTEMPTS 64
/* After a probed boundary was lost too, the next try lands a random distance past the new
 * boundary, the range doubling with each such loss up to this: writers of other processes
 * that lost the same number (every process reserves its numbers on its own) then spread
 * over different numbers instead of all probing to, and racing for, the same first free
 * one.  The numbers skipped are gaps, which are allowed (a commit names its versions). */
#define VERSION_SPREAD_MAX 32

#define WRITER_LIBRARY "omnigraph-c"

typedef struct staged_del {
    uint64_t fragment_id;
    roaring_bitmap_t *rows; /* cumulative: the base file's rows plus the staged ones */
    uint64_t base_count;    /* rows in the fragment's deletion file when staging began */
} staged_del;

/* A write not yet sent: a data file held back by og_table_txn_defer_writes, or a deletion
 * file encoded by og_table_txn_commit_begin. */
typedef struct pending_put {
    char *key;
    og_buf data;
    int is_data; /* 1 data file, 0 deletion file */
} pending_put;

/* Held-back data files are sent early once they hold this many bytes (a large load). */
#define DEFER_MAX_BYTES (4u << 20)

struct og_table_txn {
    og_table *t;
    uint64_t base;
    int v1_naming;
    og_manifest m;
    uint64_t next_fragment_id;
    staged_del *dels;
    size_t ndels;
    int done;
    int defer;          /* data files wait for the commit (og_table_txn_defer_writes) */
    pending_put *pend;  /* writes not yet sent */
    size_t npend;
    size_t pend_bytes;
    og_store_put_op *ops; /* handed out by commit_begin */
    og_buf manifest;      /* encoded by commit_begin at version v */
    uint64_t v;
    int begun;
};

struct og_table_fragment_writer {
    og_table_txn *x;
    og_lance_writer *w;
};

static og_status txn_usable(const og_table_txn *x)
{
    if (!x) return og_err(OG_ERR_INVALID, "no table txn");
    if (x->done) return og_err(OG_ERR_INVALID, "table %s: the txn was already committed", x->t->dir);
    return OG_OK;
}

const og_manifest *og_table_txn_manifest(const og_table_txn *x) { return &x->m; }

static void pend_clear(og_table_txn *x)
{
    for (size_t i = 0; i < x->npend; i++) {
        free(x->pend[i].key);
        og_buf_free(&x->pend[i].data);
    }
    free(x->pend);
    x->pend = NULL;
    x->npend = 0;
    x->pend_bytes = 0;
    free(x->ops);
    x->ops = NULL;
}

/* Queues a write; takes *data (left empty) on every path. */
static og_status pend_add(og_table_txn *x, const char *key, og_buf *data, int is_data)
{
    pending_put *p = realloc(x->pend, (x->npend + 1) * sizeof *p);
    char *k = strdup(key);
    if (p) x->pend = p;
    if (!p || !k) {
        free(k);
        og_buf_free(data);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    x->pend[x->npend++] = (pending_put){k, *data, is_data};
    x->pend_bytes += data->len;
    *data = (og_buf)OG_BUF_INIT;
    return OG_OK;
}

/* The queued writes have landed: cache them as a reader of this process would read them
 * back (the next write to the table opens a view of this version) and drop them. */
static void pend_written(og_table_txn *x)
{
    for (size_t i = 0; i < x->npend; i++) {
        pending_put *p = &x->pend[i];
        if (p->is_data) {
            og_range_seed(x->t->store, p->key, p->data.data, p->data.len);
            og_fault_point("table.after_data_file");
        } else {
            og_table_i_cache_deletion(x->t, p->key, p->data.data, p->data.len);
            og_fault_point("table.after_deletion_file");
        }
    }
    pend_clear(x);
}

static og_status pend_ops(og_table_txn *x, og_store_put_op **ops)
{
    *ops = NULL;
    if (!x->npend) return OG_OK;
    free(x->ops);
    x->ops = calloc(x->npend, sizeof *x->ops);
    if (!x->ops) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < x->npend; i++)
        x->ops[i] = (og_store_put_op){x->pend[i].key, x->pend[i].data.data, x->pend[i].data.len, 0, OG_OK};
    *ops = x->ops;
    return OG_OK;
}

/* Sends the queued writes together (one round on an object store). */
static og_status pend_flush(og_table_txn *x)
{
    if (!x->npend) return OG_OK;
    og_store_put_op *ops;
    OG_TRY(pend_ops(x, &ops));
    OG_TRY(og_store_put_many(x->t->store, ops, x->npend));
    pend_written(x);
    return OG_OK;
}

void og_table_txn_defer_writes(og_table_txn *x, int on)
{
    if (x) x->defer = on ? 1 : 0;
}

void og_table_txn_free(og_table_txn *x)
{
    if (!x) return;
    pend_clear(x);
    og_buf_free(&x->manifest);
    og_manifest_free(&x->m);
    for (size_t i = 0; i < x->ndels; i++) roaring_bitmap_free(x->dels[i].rows);
    free(x->dels);
    og_table_close(x->t); /* the txn's own hold (og_table_txn_begin) */
    free(x);
}

static uint64_t next_id_after(const og_manifest *m)
{
    uint64_t next = m->has_max_fragment_id ? (uint64_t)m->max_fragment_id + 1 : 0;
    for (size_t i = 0; i < m->nfragments; i++)
        if (m->fragments[i].id >= next) next = m->fragments[i].id + 1;
    return next;
}

og_status og_table_txn_begin(og_table_txn **out, og_table *t, uint64_t base_version,
                             const og_lance_schema *schema)
{
    *out = NULL;
    og_table_txn *x = calloc(1, sizeof *x);
    if (!x) return og_err(OG_ERR_NOMEM, "out of memory");
    x->t = t;
    og_table_i_retain(t); /* the write protocol may commit x after the view that opened t is gone */
    x->base = base_version;
    og_manifest_init(&x->m);
    og_status st = OG_OK;
    if (base_version) {
        st = og_table_i_load(t, base_version, &x->m, &x->v1_naming);
        if (st == OG_OK && (x->m.writer_flags & ~(uint64_t)KNOWN_WRITER_FLAGS))
            st = og_err(OG_ERR_UNSUPPORTED, "table %s version %llu needs writer features 0x%llx",
                        t->dir, (unsigned long long)base_version, (unsigned long long)x->m.writer_flags);
        if (st == OG_OK && x->m.format_version && strcmp(x->m.format_version, "2.0") != 0)
            st = og_err(OG_ERR_UNSUPPORTED_VERSION, "table %s version %llu stores data format %s (we write 2.0)",
                        t->dir, (unsigned long long)base_version, x->m.format_version);
    } else if (!schema) {
        st = og_err(OG_ERR_INVALID, "table %s: a new table needs a schema", t->dir);
    }
    if (st == OG_OK) {
        x->next_fragment_id = next_id_after(&x->m);
        if (schema) st = og_table_txn_set_schema(x, schema);
    }
    if (st != OG_OK) {
        og_table_txn_free(x);
        return st;
    }
    *out = x;
    return OG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Schema                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static int file_holds_field(const og_manifest *m, int32_t id)
{
    for (size_t i = 0; i < m->nfragments; i++)
        for (size_t k = 0; k < m->fragments[i].nfiles; k++)
            for (size_t q = 0; q < m->fragments[i].files[k].nfields; q++)
                if (m->fragments[i].files[k].fields[q] == id) return 1;
    return 0;
}

og_status og_table_txn_set_schema(og_table_txn *x, const og_lance_schema *schema)
{
    OG_TRY(txn_usable(x));
    og_status st = og_lance_schema_validate(schema);
    if (st != OG_OK) return og_err_wrap(OG_ERR_INVALID, "table %s: schema", x->t->dir);
    const og_lance_schema *old = &x->m.schema;
    int has_rows = og_manifest_live_rows(&x->m) > 0 || x->m.nfragments > 0;
    for (size_t i = 0; i < schema->count; i++) {
        const og_lance_field *f = &schema->fields[i];
        og_type ty;
        st = og_lance_schema_field_type(schema, i, &ty);
        if (st != OG_OK && f->parent_id == -1) return og_err_wrap(OG_ERR_INVALID, "table %s: field %s", x->t->dir, f->name);
        long j = og_lance_schema_find_id(old, f->id);
        if (j >= 0) {
            const og_lance_field *g = &old->fields[j];
            if (strcmp(f->logical_type, g->logical_type) != 0 || f->parent_id != g->parent_id)
                return og_err(OG_ERR_INVALID, "table %s: field id %d changes from %s '%s' to %s '%s'",
                              x->t->dir, f->id, g->logical_type, g->name, f->logical_type, f->name);
            if (has_rows && g->nullable && !f->nullable)
                return og_err(OG_ERR_INVALID, "table %s: field '%s' (id %d) cannot become non-nullable",
                              x->t->dir, f->name, f->id);
        } else {
            if (file_holds_field(&x->m, f->id))
                return og_err(OG_ERR_INVALID, "table %s: field id %d is still held by a data file; "
                              "a new column needs a new id", x->t->dir, f->id);
            if (has_rows && !f->nullable && f->parent_id == -1)
                return og_err(OG_ERR_INVALID, "table %s: new field '%s' must be nullable (existing rows read it as null)",
                              x->t->dir, f->name);
        }
    }
    og_lance_schema copy = OG_LANCE_SCHEMA_INIT;
    OG_TRY(og_lance_schema_copy(&copy, schema));
    og_lance_schema_free(&x->m.schema);
    x->m.schema = copy;
    return OG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Appends                                                                                   */
/* ---------------------------------------------------------------------------------------- */

og_status og_table_txn_fragment_begin(og_table_txn *x, og_table_fragment_writer **out)
{
    *out = NULL;
    OG_TRY(txn_usable(x));
    if (!x->m.schema.count) return og_err(OG_ERR_INVALID, "table %s: no schema", x->t->dir);
    og_table_fragment_writer *w = calloc(1, sizeof *w);
    if (!w) return og_err(OG_ERR_NOMEM, "out of memory");
    w->x = x;
    og_status st = og_lance_writer_new(&w->w, &x->m.schema, NULL);
    if (st != OG_OK) {
        free(w);
        return og_err_wrap(st, "table %s", x->t->dir);
    }
    *out = w;
    return OG_OK;
}

og_status og_table_fragment_write(og_table_fragment_writer *w, const og_vector *cols, size_t ncols)
{
    og_status st = og_lance_writer_write(w->w, cols, ncols);
    if (st != OG_OK) return og_err_wrap(st, "table %s append", w->x->t->dir);
    return OG_OK;
}

void og_table_fragment_abort(og_table_fragment_writer *w)
{
    if (!w) return;
    og_lance_writer_free(w->w);
    free(w);
}

/* Builds the fragment record for a finished data file. */
static og_status make_fragment(og_table_txn *x, const char *name, uint64_t size, uint64_t rows,
                               og_fragment *f)
{
    memset(f, 0, sizeof *f);
    const og_lance_schema *s = &x->m.schema;
    f->files = calloc(1, sizeof *f->files);
    if (!f->files) return og_err(OG_ERR_NOMEM, "out of memory");
    f->nfiles = 1;
    og_data_file *d = &f->files[0];
    d->path = strdup(name);
    d->fields = malloc(s->count * sizeof *d->fields);
    d->column_indices = malloc(s->count * sizeof *d->column_indices);
    if (!d->path || !d->fields || !d->column_indices) {
        og_fragment_free(f);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < s->count; i++) {
        d->fields[i] = s->fields[i].id;
        d->column_indices[i] = (int32_t)og_lance_schema_column_index(s, i);
    }
    d->nfields = d->ncolumn_indices = s->count;
    d->major = 2;
    d->minor = 0;
    d->size_bytes = size;
    f->id = x->next_fragment_id;
    f->physical_rows = rows;
    return OG_OK;
}

static og_status stage_fragment(og_table_txn *x, og_fragment *f)
{
    og_fragment *p = realloc(x->m.fragments, (x->m.nfragments + 1) * sizeof *p);
    if (!p) {
        og_fragment_free(f);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    x->m.fragments = p;
    p[x->m.nfragments++] = *f;
    if (f->id > UINT32_MAX) return og_err(OG_ERR_LIMIT, "table %s: fragment ids exhausted", x->t->dir);
    if (!x->m.has_max_fragment_id || f->id > x->m.max_fragment_id) x->m.max_fragment_id = (uint32_t)f->id;
    x->m.has_max_fragment_id = 1;
    x->next_fragment_id = f->id + 1;
    return OG_OK;
}

og_status og_table_fragment_finish(og_table_fragment_writer *w, uint64_t *fragment_id)
{
    og_table_txn *x = w->x;
    if (fragment_id) *fragment_id = UINT64_MAX;
    uint64_t rows = og_lance_writer_num_rows(w->w);
    if (rows == 0) {
        og_table_fragment_abort(w);
        return OG_OK;
    }
    if (rows > UINT32_MAX) {
        og_table_fragment_abort(w);
        return og_err(OG_ERR_LIMIT, "table %s: a fragment holds at most 2^32-1 rows", x->t->dir);
    }
    og_buf file = OG_BUF_INIT;
    og_status st = og_lance_writer_finish(w->w, &file);
    og_table_fragment_abort(w);
    if (st != OG_OK) return og_err_wrap(st, "table %s", x->t->dir);
    char uuid[OG_UUID_LEN + 1], name[OG_UUID_LEN + 16], rel[OG_UUID_LEN + 32], key[4096];
    st = og_uuid_new(uuid);
    if (st == OG_OK) {
        snprintf(name, sizeof name, "%s.lance", uuid);
        snprintf(rel, sizeof rel, "data/%s", name);
        st = og_table_i_key(x->t, rel, key, sizeof key);
    }
    size_t size = file.len;
    if (st == OG_OK && x->defer) {
        st = pend_add(x, key, &file, 1);
        if (st == OG_OK && x->pend_bytes >= DEFER_MAX_BYTES) st = pend_flush(x);
    } else if (st == OG_OK) {
        st = og_store_put(x->t->store, key, file.data, file.len);
        if (st == OG_OK) og_range_seed(x->t->store, key, file.data, file.len);
        if (st == OG_OK) og_fault_point("table.after_data_file");
    }
    og_buf_free(&file);
    if (st != OG_OK) return st;
    og_fragment f;
    OG_TRY(make_fragment(x, name, size, rows, &f));
    OG_TRY(stage_fragment(x, &f));
    if (fragment_id) *fragment_id = f.id;
    return OG_OK;
}

og_status og_table_txn_append(og_table_txn *x, const og_vector *cols, size_t ncols,
                              uint64_t *fragment_id)
{
    if (fragment_id) *fragment_id = UINT64_MAX;
    OG_TRY(txn_usable(x));
    if (ncols != og_lance_schema_num_top(&x->m.schema))
        return og_err(OG_ERR_INVALID, "table %s: append of %zu columns to a schema of %zu", x->t->dir,
                      ncols, og_lance_schema_num_top(&x->m.schema));
    if (!ncols || cols[0].len == 0) return og_err(OG_ERR_INVALID, "table %s: empty append", x->t->dir);
    og_table_fragment_writer *w;
    OG_TRY(og_table_txn_fragment_begin(x, &w));
    og_status st = og_table_fragment_write(w, cols, ncols);
    if (st != OG_OK) {
        og_table_fragment_abort(w);
        return st;
    }
    return og_table_fragment_finish(w, fragment_id);
}

/* ---------------------------------------------------------------------------------------- */
/* Deletes, overwrite, compaction                                                            */
/* ---------------------------------------------------------------------------------------- */

static staged_del *find_del(og_table_txn *x, uint64_t fragment_id)
{
    for (size_t i = 0; i < x->ndels; i++)
        if (x->dels[i].fragment_id == fragment_id) return &x->dels[i];
    return NULL;
}

static void drop_del(og_table_txn *x, uint64_t fragment_id)
{
    for (size_t i = 0; i < x->ndels; i++)
        if (x->dels[i].fragment_id == fragment_id) {
            roaring_bitmap_free(x->dels[i].rows);
            x->dels[i] = x->dels[--x->ndels];
            return;
        }
}

og_status og_table_txn_delete(og_table_txn *x, uint64_t fragment_id, const uint32_t *offsets, size_t n)
{
    OG_TRY(txn_usable(x));
    long fi = og_manifest_find_fragment(&x->m, fragment_id);
    if (fi < 0)
        return og_err(OG_ERR_NOT_FOUND, "table %s: no fragment %llu to delete from", x->t->dir,
                      (unsigned long long)fragment_id);
    const og_fragment *f = &x->m.fragments[fi];
    for (size_t i = 0; i < n; i++)
        if (offsets[i] >= f->physical_rows)
            return og_err(OG_ERR_INVALID, "table %s: row %u is past fragment %llu's %llu rows", x->t->dir,
                          offsets[i], (unsigned long long)fragment_id, (unsigned long long)f->physical_rows);
    staged_del *d = find_del(x, fragment_id);
    if (!d) {
        staged_del *p = realloc(x->dels, (x->ndels + 1) * sizeof *p);
        if (!p) return og_err(OG_ERR_NOMEM, "out of memory");
        x->dels = p;
        roaring_bitmap_t *bm;
        OG_TRY(og_table_fragment_deletions(x->t, f, &bm));
        d = &x->dels[x->ndels++];
        d->fragment_id = fragment_id;
        d->rows = bm;
        d->base_count = roaring_bitmap_get_cardinality(bm);
    }
    if (n) roaring_bitmap_add_many(d->rows, n, offsets);
    return OG_OK;
}

og_status og_table_txn_overwrite(og_table_txn *x)
{
    OG_TRY(txn_usable(x));
    for (size_t i = 0; i < x->m.nfragments; i++) og_fragment_free(&x->m.fragments[i]);
    x->m.nfragments = 0;
    for (size_t i = 0; i < x->ndels; i++) roaring_bitmap_free(x->dels[i].rows);
    x->ndels = 0;
    return OG_OK;
}

static const roaring_bitmap_t *staged_rows(void *ctx, uint64_t fragment_id)
{
    staged_del *d = find_del(ctx, fragment_id);
    return d ? d->rows : NULL;
}

og_status og_table_txn_compact(og_table_txn *x, const uint64_t *fragment_ids, size_t n,
                               uint64_t *fragment_id)
{
    if (fragment_id) *fragment_id = UINT64_MAX;
    OG_TRY(txn_usable(x));
    if (!n) return og_err(OG_ERR_INVALID, "table %s: nothing to compact", x->t->dir);
    long first = -1;
    for (size_t k = 0; k < n; k++) {
        long fi = og_manifest_find_fragment(&x->m, fragment_ids[k]);
        if (fi < 0)
            return og_err(OG_ERR_NOT_FOUND, "table %s: no fragment %llu to compact", x->t->dir,
                          (unsigned long long)fragment_ids[k]);
        if (first < 0 || fi < first) first = fi;
    }
    OG_TRY(pend_flush(x)); /* the scan below reads the files */
    /* Scan the live rows (staged deletions applied) of the listed fragments, every field. */
    og_table_scan_opts o = {NULL, 0, fragment_ids, n, 0, 0};
    og_table_scan *s;
    OG_TRY(og_table_i_scan_open(&s, x->t, &x->m, &o, staged_rows, x));
    og_table_fragment_writer *w;
    og_status st = og_table_txn_fragment_begin(x, &w);
    if (st != OG_OK) {
        og_table_scan_free(s);
        return st;
    }
    og_table_batch b;
    while ((st = og_table_scan_next(s, &b)) == OG_OK && b.nrows)
        if ((st = og_table_fragment_write(w, b.cols, b.ncols)) != OG_OK) break;
    og_table_scan_free(s);
    if (st != OG_OK) {
        og_table_fragment_abort(w);
        return st;
    }
    /* Finish stages the new fragment at the end; move it to where the first old one was. */
    size_t before = x->m.nfragments;
    uint64_t nid;
    OG_TRY(og_table_fragment_finish(w, &nid));
    og_fragment moved;
    int have_new = x->m.nfragments > before;
    if (have_new) moved = x->m.fragments[--x->m.nfragments];
    size_t keep = 0;
    for (size_t i = 0; i < x->m.nfragments; i++) {
        int gone = 0;
        for (size_t k = 0; k < n; k++) gone |= x->m.fragments[i].id == fragment_ids[k];
        if (gone) {
            if ((long)i == first && have_new) {
                og_fragment_free(&x->m.fragments[i]);
                x->m.fragments[keep++] = moved;
                have_new = 0;
                continue;
            }
            drop_del(x, x->m.fragments[i].id);
            og_fragment_free(&x->m.fragments[i]);
            continue;
        }
        x->m.fragments[keep++] = x->m.fragments[i];
    }
    x->m.nfragments = keep;
    for (size_t k = 0; k < n; k++) drop_del(x, fragment_ids[k]);
    if (fragment_id) *fragment_id = nid;
    return OG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Commit                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Encodes the new cumulative deletion files and queues them (pend_add). */
static og_status stage_deletion_files(og_table_txn *x)
{
    for (size_t i = 0; i < x->ndels; i++) {
        staged_del *d = &x->dels[i];
        long fi = og_manifest_find_fragment(&x->m, d->fragment_id);
        if (fi < 0) continue; /* removed since (overwrite or compaction) */
        og_fragment *f = &x->m.fragments[fi];
        uint64_t card = roaring_bitmap_get_cardinality(d->rows);
        if (card == d->base_count) continue; /* nothing new: keep the old file */
        uint64_t id;
        OG_TRY(og_random_bytes(&id, sizeof id));
        id >>= 1; /* keep it within i64 for readers that parse it signed */
        char rel[128], key[4096];
        OG_TRY(og_deletion_path(rel, sizeof rel, f->id, x->base, id, OG_DELETION_BITMAP));
        OG_TRY(og_table_i_key(x->t, rel, key, sizeof key));
        og_buf b = OG_BUF_INIT;
        og_status st = og_deletion_encode_bitmap(d->rows, &b);
        if (st == OG_OK) st = pend_add(x, key, &b, 0);
        og_buf_free(&b);
        if (st != OG_OK) return st;
        f->deletion.present = 1;
        f->deletion.kind = OG_DELETION_BITMAP;
        f->deletion.read_version = x->base;
        f->deletion.id = id;
        f->deletion.num_deleted_rows = card;
        d->base_count = card;
    }
    return OG_OK;
}

static og_status manifest_key(const og_table_txn *x, uint64_t v, char *key, size_t cap)
{
    char rel[64];
    if (x->v1_naming)
        snprintf(rel, sizeof rel, "_versions/%llu.manifest", (unsigned long long)v);
    else
        OG_TRY(og_manifest_path(rel, sizeof rel, v));
    return og_table_i_key(x->t, rel, key, cap);
}

/* Whether version v's manifest exists right now. */
static og_status version_taken(const og_table_txn *x, uint64_t v, int *taken)
{
    char key[4096];
    OG_TRY(manifest_key(x, v, key, sizeof key));
    uint64_t size;
    og_status st = og_store_head(x->t->store, key, &size);
    *taken = st == OG_OK;
    if (st == OG_ERR_NOT_FOUND) {
        og_error_clear();
        return OG_OK;
    }
    return st;
}

/* A number above `taken` (a version that exists) whose predecessor exists and which itself
 * did not at the probe: gallop up for a free number, then bisect down to the boundary. */
static og_status next_free_version(const og_table_txn *x, uint64_t taken, uint64_t *out)
{
    uint64_t lo = taken, hi, step = 1;
    int t;
    for (;;) {
        hi = lo + step;
        OG_TRY(version_taken(x, hi, &t));
        if (!t) break;
        lo = hi;
        if (step < (UINT64_C(1) << 40)) step *= 2;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        OG_TRY(version_taken(x, mid, &t));
        if (t) lo = mid;
        else hi = mid;
    }
    *out = hi;
    return OG_OK;
}

og_status og_table_txn_commit_begin(og_table_txn *x, og_store_put_op **ops, size_t *nops, uint64_t *version)
{
    *ops = NULL;
    *nops = 0;
    if (version) *version = 0;
    OG_TRY(txn_usable(x));
    if (x->begun) return og_err(OG_ERR_INVALID, "table %s: the commit was already begun", x->t->dir);
    OG_TRY(stage_deletion_files(x));
    int any_del = 0;
    for (size_t i = 0; i < x->m.nfragments; i++) any_del |= x->m.fragments[i].deletion.present;
    x->m.reader_flags = (x->m.reader_flags & ~(uint64_t)OG_LANCE_FLAG_DELETION_FILES) | (any_del ? OG_LANCE_FLAG_DELETION_FILES : 0);
    x->m.writer_flags = (x->m.writer_flags & ~(uint64_t)OG_LANCE_FLAG_DELETION_FILES) | (any_del ? OG_LANCE_FLAG_DELETION_FILES : 0);
    if (x->m.nfragments) x->m.has_max_fragment_id = 1;
    OG_TRY(og_manifest_set_strings(&x->m, WRITER_LIBRARY, OG_VERSION_STRING, "lance", "2.0"));
    x->m.has_index_section = 0;
    int64_t ms = og_now_ms();
    x->m.ts_seconds = ms / 1000;
    x->m.ts_nanos = (int32_t)(ms % 1000) * 1000000;
    /* The number this version will most likely get: past the base, and past every number
     * this handle saw taken or handed to another writer (of another branch) since. */
    uint64_t v = og_table_i_version_reserve(x->t, x->base + 1);
    x->v = v;
    x->m.version = v;
    og_buf_reset(&x->manifest);
    OG_TRY(og_manifest_file_encode(&x->m, &x->manifest));
    OG_TRY(pend_ops(x, ops));
    *nops = x->npend;
    x->begun = 1;
    if (version) *version = v;
    return OG_OK;
}

/* Sleeps a random time below `cap_ms` milliseconds (contention back-off). */
static void version_pause(unsigned cap_ms)
{
    uint32_t r = 0;
    if (og_random_bytes(&r, sizeof r) != OG_OK) r = (uint32_t)og_now_ms();
    uint64_t us = (uint64_t)r % ((uint64_t)cap_ms * 1000 + 1);
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

og_status og_table_txn_commit_end(og_table_txn *x, uint64_t *version)
{
    if (version) *version = 0;
    OG_TRY(txn_usable(x));
    if (!x->begun) return og_err(OG_ERR_INVALID, "table %s: the commit was not begun", x->t->dir);
    pend_written(x);
    uint64_t v = x->v;
    og_status st = OG_OK;
    int64_t t0 = og_now_ms();
    for (int attempt = 0;; attempt++) {
        if (attempt >= VERSION_MIN_ATTEMPTS && og_now_ms() - t0 > VERSION_RETRY_MS) {
            st = og_err(OG_ERR_CONFLICT, "table %s: no free version number after %d attempts in %lld ms",
                        x->t->dir, attempt, (long long)(og_now_ms() - t0));
            break;
        }
        char key[4096];
        st = manifest_key(x, v, key, sizeof key);
        if (st == OG_OK && v != x->m.version) {
            x->m.version = v;
            og_buf_reset(&x->manifest);
            st = og_manifest_file_encode(&x->m, &x->manifest);
        }
        if (st == OG_OK) st = og_store_put_if_absent(x->t->store, key, x->manifest.data, x->manifest.len);
        if (st != OG_ERR_ALREADY_EXISTS) break;
        og_error_clear();
        og_table_i_version_lost(x->t, v);
        /* The next number goes through this process's reservation, so that its other
         * writers of the table that lost too each get a different one. */
        if (attempt + 1 < VERSION_PROBE_AFTER) {
            v = og_table_i_version_reserve(x->t, v + 1);
            continue;
        }
        uint64_t free_at;
        st = next_free_version(x, v, &free_at);
        if (st != OG_OK) break;
        int past = attempt + 1 - VERSION_PROBE_AFTER; /* boundaries lost before this one */
        uint64_t spread = past >= 5 ? VERSION_SPREAD_MAX : UINT64_C(1) << past;
        if (spread > VERSION_SPREAD_MAX) spread = VERSION_SPREAD_MAX;
        uint64_t r = 0;
        if (spread > 1 && og_random_bytes(&r, sizeof r) != OG_OK) r = (uint64_t)og_now_ms();
        v = og_table_i_version_reserve(x->t, free_at + r % spread);
        if (past >= 8) version_pause(past >= 12 ? 20 : 4); /* a long fight: let the others land */
    }
    if (st == OG_OK) {
        og_table_i_cache_written(x->t, v, x->manifest.data, x->manifest.len, x->v1_naming);
        og_table_i_version_note(x->t, v);
    }
    og_buf_free(&x->manifest);
    if (st != OG_OK) return st;
    og_fault_point("table.after_manifest");
    x->done = 1;
    if (version) *version = v;
    return OG_OK;
}

og_status og_table_txn_commit(og_table_txn *x, uint64_t *version)
{
    if (version) *version = 0;
    og_store_put_op *ops;
    size_t n;
    OG_TRY(og_table_txn_commit_begin(x, &ops, &n, NULL));
    if (n) OG_TRY(og_store_put_many(x->t->store, ops, n));
    return og_table_txn_commit_end(x, version);
}
