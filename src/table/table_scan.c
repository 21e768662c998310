/*
 * table_scan.c — reading a table version: batch scans with projection and deletion vectors,
 * random-access takes, and the vector helpers (row selection, all-null columns) they use.
 *
 * A scan walks the manifest's fragments in order.  For each fragment it opens LFILE's reader
 * over the data files that hold a projected field: on a local store over og_store_map (a real
 * mmap); on any other store (S3), or with OG_TABLE_RANGE_READS=1, over a range source
 * (range_cache.h): the footer and metadata are read with ranged GETs, then only the pages of
 * the projected columns, through the bounded range cache, with the next pages of each column
 * and the tails of the next fragment's files prefetched by a small thread pool.  Fields no
 * file holds read as null (a column added after the fragment was written).  The fragment's deletion vector is expanded into a plain bitset once, so the per
 * batch test is a bit lookup.  A batch without deleted rows hands the reader's vectors on as
 * they are (zero-copy for fixed-width pages); a batch with deleted rows is compacted into
 * owned vectors holding only the live rows.
 */
#include "table/table_internal.h"

#include <stdlib.h>
#include <string.h>

#include "table/lance_file.h"
#include "table/range_cache.h"
#include "util/error.h"

/* ---------------------------------------------------------------------------------------- */
/* Vector helpers                                                                            */
/* ---------------------------------------------------------------------------------------- */

static int is_var(og_type_id id) { return id == OG_T_STRING || id == OG_T_BLOB || id == OG_T_LIST; }

og_status og_table_i_vector_nulls(og_type type, size_t len, og_vector *dst)
{
    OG_TRY(og_vector_init(dst, type));
    og_status st = OG_OK;
    size_t vbytes = (len + 7) / 8;
    dst->validity = calloc(vbytes ? vbytes : 1, 1);
    if (!dst->validity) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && is_var(type.id)) {
        int64_t *o = calloc(len + 1, sizeof *o);
        if (!o) st = og_err(OG_ERR_NOMEM, "out of memory");
        free(dst->offsets);
        dst->offsets = o;
    } else if (st == OG_OK) {
        size_t bytes = type.id == OG_T_BOOL ? vbytes : len * og_type_width(type);
        dst->values = calloc(bytes ? bytes : 1, 1);
        if (!dst->values) st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (st != OG_OK) {
        og_vector_free(dst);
        return st;
    }
    dst->len = len;
    dst->null_count = len;
    dst->cap_rows = len;
    return OG_OK;
}

static og_status select_validity(const og_vector *src, const uint32_t *sel, size_t n, og_vector *dst)
{
    dst->null_count = 0;
    if (!src->validity) return OG_OK;
    uint8_t *bits = calloc((n + 7) / 8 ? (n + 7) / 8 : 1, 1);
    if (!bits) return og_err(OG_ERR_NOMEM, "out of memory");
    size_t nulls = 0;
    for (size_t i = 0; i < n; i++) {
        if (og_bit_get(src->validity, sel[i]))
            bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        else
            nulls++;
    }
    if (nulls == 0) {
        free(bits);
        return OG_OK;
    }
    dst->validity = bits;
    dst->null_count = nulls;
    return OG_OK;
}

og_status og_table_i_vector_select(const og_vector *src, const uint32_t *sel, size_t n, og_vector *dst)
{
    og_status st = og_vector_init(dst, src->type);
    if (st != OG_OK) return st;
    st = select_validity(src, sel, n, dst);
    if (st != OG_OK) goto fail;
    switch (src->type.id) {
    case OG_T_BOOL: {
        uint8_t *bits = calloc((n + 7) / 8 ? (n + 7) / 8 : 1, 1);
        if (!bits) { st = og_err(OG_ERR_NOMEM, "out of memory"); goto fail; }
        for (size_t i = 0; i < n; i++)
            if (og_bit_get(src->values, sel[i])) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        dst->values = bits;
        break;
    }
    case OG_T_STRING: case OG_T_BLOB: {
        size_t total = 0;
        for (size_t i = 0; i < n; i++) total += (size_t)(src->offsets[sel[i] + 1] - src->offsets[sel[i]]);
        int64_t *o = malloc((n + 1) * sizeof *o);
        uint8_t *bytes = malloc(total ? total : 1);
        if (!o || !bytes) {
            free(o);
            free(bytes);
            st = og_err(OG_ERR_NOMEM, "out of memory");
            goto fail;
        }
        free(dst->offsets);
        dst->offsets = o;
        dst->values = bytes;
        o[0] = 0;
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            size_t b = (size_t)src->offsets[sel[i]], e = (size_t)src->offsets[sel[i] + 1];
            if (e > b) memcpy(bytes + at, (const uint8_t *)src->values + b, e - b);
            at += e - b;
            o[i + 1] = (int64_t)at;
        }
        dst->cap_bytes = total;
        break;
    }
    case OG_T_LIST: {
        size_t items = 0;
        for (size_t i = 0; i < n; i++) items += (size_t)(src->offsets[sel[i] + 1] - src->offsets[sel[i]]);
        uint32_t *csel = malloc((items ? items : 1) * sizeof *csel);
        int64_t *o = malloc((n + 1) * sizeof *o);
        if (!csel || !o) {
            free(csel);
            free(o);
            st = og_err(OG_ERR_NOMEM, "out of memory");
            goto fail;
        }
        free(dst->offsets);
        dst->offsets = o;
        o[0] = 0;
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            for (int64_t k = src->offsets[sel[i]]; k < src->offsets[sel[i] + 1]; k++) csel[at++] = (uint32_t)k;
            o[i + 1] = (int64_t)at;
        }
        og_vector_free(dst->child);
        st = og_table_i_vector_select(src->child, csel, items, dst->child);
        free(csel);
        if (st != OG_OK) {
            /* dst->child is zeroed by a failed select; re-init so og_vector_free stays safe */
            og_vector_init(dst->child, (og_type){src->type.elem, OG_T_NULL, 0});
            goto fail;
        }
        break;
    }
    default: {
        size_t w = og_type_width(src->type);
        size_t bytes = n * w;
        uint8_t *vals = malloc(bytes ? bytes : 1);
        if (!vals) { st = og_err(OG_ERR_NOMEM, "out of memory"); goto fail; }
        for (size_t i = 0; i < n; i++) memcpy(vals + i * w, (const uint8_t *)src->values + (size_t)sel[i] * w, w);
        dst->values = vals;
        break;
    }
    }
    dst->len = n;
    dst->cap_rows = n;
    return OG_OK;
fail:
    og_vector_free(dst);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Deletions                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static void cached_bytes_free(void *p)
{
    og_bytes_free(p);
    free(p);
}

/* A deletion file's bytes (a copy in *out).  Deletion files are immutable and randomly named
 * (never reused), so with a cache each is read from the store once per handle: every write
 * to a table opens a view of its new version, which reads the deletions of every fragment. */
static og_status deletion_bytes(og_table *t, const char *key, og_bytes *out)
{
    char ckey[4200];
    snprintf(ckey, sizeof ckey, "d:%s", key);
    og_cache_entry *e = t->cache ? og_cache_get(t->cache, ckey) : NULL;
    if (!e) {
        OG_TRY(og_store_get(t->store, key, out));
        og_bytes *copy = t->cache ? malloc(sizeof *copy) : NULL;
        if (!copy) return OG_OK;
        copy->data = malloc(out->len ? out->len : 1);
        copy->len = out->len;
        if (!copy->data) {
            free(copy);
            return OG_OK;
        }
        memcpy(copy->data, out->data, out->len);
        if (og_cache_put(t->cache, ckey, copy, copy->len + sizeof *copy, cached_bytes_free, &e) == OG_OK)
            og_cache_entry_release(e);
        og_error_clear();
        return OG_OK;
    }
    const og_bytes *have = og_cache_entry_value(e);
    out->data = malloc(have->len ? have->len : 1);
    out->len = have->len;
    if (out->data) memcpy(out->data, have->data, have->len);
    og_cache_entry_release(e);
    return out->data ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

void og_table_i_cache_deletion(og_table *t, const char *key, const void *bytes, size_t len)
{
    if (!t->cache) return;
    og_bytes *copy = malloc(sizeof *copy);
    if (!copy) return;
    copy->data = malloc(len ? len : 1);
    copy->len = len;
    if (!copy->data) {
        free(copy);
        return;
    }
    memcpy(copy->data, bytes, len);
    char ckey[4200];
    snprintf(ckey, sizeof ckey, "d:%s", key);
    og_cache_entry *e;
    if (og_cache_put(t->cache, ckey, copy, copy->len + sizeof *copy, cached_bytes_free, &e) == OG_OK)
        og_cache_entry_release(e);
    og_error_clear();
}

og_status og_table_fragment_deletions(og_table *t, const og_fragment *f, roaring_bitmap_t **out)
{
    *out = NULL;
    if (!f->deletion.present) {
        *out = roaring_bitmap_create();
        return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    }
    char rel[128], key[4096];
    OG_TRY(og_deletion_path(rel, sizeof rel, f->id, f->deletion.read_version, f->deletion.id, f->deletion.kind));
    OG_TRY(og_table_i_key(t, rel, key, sizeof key));
    og_bytes b = {NULL, 0};
    og_status st = deletion_bytes(t, key, &b);
    if (st == OG_ERR_NOT_FOUND)
        return og_err(OG_ERR_NOT_FOUND,
                      "table %s: deletion file %s of fragment %llu is missing: its version was reclaimed by "
                      "cleanup, or the file was removed from the store",
                      t->dir, rel, (unsigned long long)f->id);
    if (st != OG_OK) return st;
    st = og_deletion_decode(f->deletion.kind, b.data, b.len, out);
    og_bytes_free(&b);
    if (st != OG_OK) return og_err_wrap(st, "table %s fragment %llu", t->dir, (unsigned long long)f->id);
    if (roaring_bitmap_get_cardinality(*out) && roaring_bitmap_maximum(*out) >= f->physical_rows) {
        roaring_bitmap_free(*out);
        *out = NULL;
        return og_err(OG_ERR_CORRUPT, "table %s: deletion file %s names a row past fragment %llu's %llu rows",
                      t->dir, rel, (unsigned long long)f->id, (unsigned long long)f->physical_rows);
    }
    return OG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Fragment readers                                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef struct frag_files {
    size_t n;
    og_mapping **maps;         /* local: the mapped files */
    og_range_file **rfiles;    /* object store: the range sources */
    og_lance_reader **readers; /* NULL until needed */
    og_cache_entry **held;     /* a reader borrowed from the table's cache (open_file `keep`) */
} frag_files;

static void frag_files_close(frag_files *ff)
{
    for (size_t i = 0; i < ff->n; i++) {
        if (ff->held[i]) {
            og_cache_entry_release(ff->held[i]); /* the cached reader and its mapping live on */
            continue;
        }
        og_lance_reader_free(ff->readers[i]);
        if (ff->maps[i]) og_mapping_release(ff->maps[i]);
        og_range_file_close(ff->rfiles[i]);
    }
    free(ff->maps);
    free(ff->rfiles);
    free(ff->readers);
    free(ff->held);
    memset(ff, 0, sizeof *ff);
}

/* An opened local data file kept in the table's cache under "f:<store key>" (cache.h), for
 * point reads (og_table_take): opening a reader parses the file's footer, every column's
 * metadata and every page's encoding — ~0.4 ms for a 1M-row fragment of the benchmark graph,
 * 50x the lookup it served — and data files are immutable and uniquely named, so the parsed
 * reader never goes stale.  Charged its parsed metadata; the mapping is file-backed, shared
 * page cache (docs/engine.md "Memory"). */
typedef struct cached_file {
    og_mapping *map;
    og_lance_reader *reader;
} cached_file;

static void cached_file_free(void *p)
{
    cached_file *c = p;
    og_lance_reader_free(c->reader);
    og_mapping_release(c->map);
    free(c);
}

static og_status frag_files_init(frag_files *ff, const og_fragment *f)
{
    memset(ff, 0, sizeof *ff);
    if (!f->nfiles) return OG_OK;
    ff->maps = calloc(f->nfiles, sizeof *ff->maps);
    ff->rfiles = calloc(f->nfiles, sizeof *ff->rfiles);
    ff->readers = calloc(f->nfiles, sizeof *ff->readers);
    ff->held = calloc(f->nfiles, sizeof *ff->held);
    if (!ff->maps || !ff->rfiles || !ff->readers || !ff->held) {
        frag_files_close(ff);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    ff->n = f->nfiles;
    return OG_OK;
}

/* The data file of fragment f that holds field id `fid` (the last one wins, as in Lance, when
 * several claim it), or -1. */
static long file_of_field(const og_fragment *f, int32_t fid)
{
    long found = -1;
    for (size_t i = 0; i < f->nfiles; i++)
        for (size_t k = 0; k < f->files[i].nfields; k++)
            if (f->files[i].fields[k] == fid) found = (long)i;
    return found;
}

/* The store key of a data file. */
static og_status data_key(const og_table *t, const og_data_file *d, char *key, size_t cap)
{
    char rel[4096];
    if ((size_t)snprintf(rel, sizeof rel, "data/%s", d->path) >= sizeof rel)
        return og_err(OG_ERR_INVALID, "data file path too long");
    return og_table_i_key(t, rel, key, cap);
}

/* Opens data file i of fragment f into ff.  keep: a local file's reader is taken from (or
 * put into) the table's cache — for point reads; a scan's readers stay its own, so a scan's
 * touched pages are unmapped when it ends. */
static og_status open_file(og_table *t, const og_fragment *f, frag_files *ff, size_t i, int keep)
{
    if (ff->readers[i]) return OG_OK;
    const og_data_file *d = &f->files[i];
    if (!((d->major == 2 && d->minor == 0) || (d->major == 0 && d->minor == 3)))
        return og_err(OG_ERR_UNSUPPORTED_VERSION, "table %s: data file %s has file version %u.%u (we read 2.0)",
                      t->dir, d->path, d->major, d->minor);
    char key[4096];
    OG_TRY(data_key(t, d, key, sizeof key));
    char ckey[4100];
    keep = keep && t->cache && !og_range_use(t->store) && (size_t)snprintf(ckey, sizeof ckey, "f:%s", key) < sizeof ckey;
    if (keep && (ff->held[i] = og_cache_get(t->cache, ckey))) {
        ff->readers[i] = ((cached_file *)og_cache_entry_value(ff->held[i]))->reader;
        return OG_OK;
    }
    og_status st;
    if (og_range_use(t->store)) {
        st = og_range_file_open(&ff->rfiles[i], t->store, key, d->size_bytes);
    } else {
        st = og_store_map(t->store, key, &ff->maps[i]);
    }
    if (st == OG_ERR_NOT_FOUND)
        return og_err(OG_ERR_NOT_FOUND,
                      "table %s: data file %s of fragment %llu is missing: its version was reclaimed by cleanup, "
                      "or the file was removed from the store",
                      t->dir, d->path, (unsigned long long)f->id);
    if (st != OG_OK) return st;
    if (ff->rfiles[i]) {
        og_lance_source src;
        og_range_file_source(ff->rfiles[i], &src);
        st = og_lance_reader_open_source(&ff->readers[i], &src);
        if (st == OG_ERR_NOT_FOUND)
            return og_err(OG_ERR_NOT_FOUND,
                          "table %s: data file %s of fragment %llu is missing: its version was reclaimed by "
                          "cleanup, or the file was removed from the store",
                          t->dir, d->path, (unsigned long long)f->id);
    } else {
        st = og_lance_reader_open(&ff->readers[i], og_mapping_data(ff->maps[i]), og_mapping_size(ff->maps[i]));
    }
    if (st != OG_OK) return og_err_wrap(st, "table %s data file %s", t->dir, d->path);
    if (og_lance_reader_num_rows(ff->readers[i]) != f->physical_rows)
        return og_err(OG_ERR_CORRUPT, "table %s: data file %s has %llu rows, its fragment %llu says %llu",
                      t->dir, d->path, (unsigned long long)og_lance_reader_num_rows(ff->readers[i]),
                      (unsigned long long)f->id, (unsigned long long)f->physical_rows);
    cached_file *c = keep ? malloc(sizeof *c) : NULL;
    if (c) { /* best effort: without it the file stays this scan's own */
        *c = (cached_file){ff->maps[i], ff->readers[i]};
        og_cache_entry *e;
        if (og_cache_put(t->cache, ckey, c, sizeof *c + og_lance_reader_bytes(c->reader), cached_file_free, &e) ==
            OG_OK) {
            /* a racing opener may have put it first: use the cached one, ours is freed */
            ff->maps[i] = NULL;
            ff->held[i] = e;
            ff->readers[i] = ((cached_file *)og_cache_entry_value(e))->reader;
        } else {
            ff->maps[i] = NULL, ff->readers[i] = NULL; /* freed by the failed put */
            og_error_clear();
            return open_file(t, f, ff, i, 0);
        }
    }
    return OG_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Scan                                                                                      */
/* ---------------------------------------------------------------------------------------- */

struct og_table_scan {
    og_table *t;
    const og_manifest *m;
    og_table_i_del_fn del_fn;
    void *del_ctx;
    size_t nfields;
    int32_t *field_ids;
    og_type *types;
    size_t *frags;      /* manifest indexes of the fragments to scan */
    size_t nfrags, next_frag;
    size_t batch_rows;
    /* the current fragment */
    const og_fragment *cur;
    frag_files ff;
    long *file_of;      /* per projected field: data file index or -1 */
    uint8_t *deleted;   /* bitset over physical rows, or NULL when none is deleted */
    uint64_t pos;
    int ranged;         /* data files are read through range_cache.h */
    int keep_files;     /* og_table_take: readers from the table's cache (open_file) */
    int no_addrs;       /* og_table_scan_opts.no_row_addrs */
    /* the current batch */
    og_vector *cols;
    uint64_t *addrs;
    uint32_t *sel;
};

static void batch_clear(og_table_scan *s)
{
    for (size_t i = 0; i < s->nfields; i++) og_vector_free(&s->cols[i]);
}

static void frag_close(og_table_scan *s)
{
    frag_files_close(&s->ff);
    free(s->deleted);
    s->deleted = NULL;
    s->cur = NULL;
}

void og_table_scan_free(og_table_scan *s)
{
    if (!s) return;
    batch_clear(s);
    frag_close(s);
    if (s->ranged) og_range_cancel(s);
    free(s->field_ids);
    free(s->types);
    free(s->frags);
    free(s->file_of);
    free(s->cols);
    free(s->addrs);
    free(s->sel);
    free(s);
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

og_status og_table_i_scan_open(og_table_scan **out, og_table *t, const og_manifest *m,
                               const og_table_scan_opts *opts, og_table_i_del_fn del_fn, void *del_ctx)
{
    *out = NULL;
    og_table_scan_opts none = {0};
    if (!opts) opts = &none;
    og_table_scan *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
    s->t = t;
    s->m = m;
    s->ranged = og_range_use(t->store);
    s->del_fn = del_fn;
    s->del_ctx = del_ctx;
    s->no_addrs = opts->no_row_addrs;
    s->batch_rows = opts->batch_rows ? opts->batch_rows : OG_LANCE_DEFAULT_BATCH_ROWS;
    if (s->batch_rows > UINT32_MAX) s->batch_rows = UINT32_MAX;
    og_status st = OG_OK;
    size_t nf = opts->nfields ? opts->nfields : og_lance_schema_num_top(&m->schema);
    s->field_ids = calloc(nf ? nf : 1, sizeof *s->field_ids);
    s->types = calloc(nf ? nf : 1, sizeof *s->types);
    s->file_of = calloc(nf ? nf : 1, sizeof *s->file_of);
    s->cols = calloc(nf ? nf : 1, sizeof *s->cols);
    s->addrs = malloc(s->batch_rows * sizeof *s->addrs);
    s->sel = malloc(s->batch_rows * sizeof *s->sel);
    size_t nfr = opts->nfragments > m->nfragments ? opts->nfragments : m->nfragments; /* (named twice: deduped below) */
    s->frags = calloc(nfr ? nfr : 1, sizeof *s->frags);
    if (!s->field_ids || !s->types || !s->file_of || !s->cols || !s->addrs || !s->sel || !s->frags) {
        og_table_scan_free(s);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    s->nfields = nf;
    for (size_t i = 0; st == OG_OK && i < nf; i++) {
        long idx;
        if (opts->nfields) {
            idx = og_lance_schema_find_id(&m->schema, opts->field_ids[i]);
            if (idx < 0)
                st = og_err(OG_ERR_NOT_FOUND, "table %s: no field with id %d", t->dir, opts->field_ids[i]);
            else if (m->schema.fields[idx].parent_id != -1)
                st = og_err(OG_ERR_INVALID, "table %s: field %d is not a top-level field", t->dir, opts->field_ids[i]);
        } else {
            idx = og_lance_schema_top(&m->schema, i);
        }
        if (st == OG_OK) {
            s->field_ids[i] = m->schema.fields[idx].id;
            st = og_lance_schema_field_type(&m->schema, (size_t)idx, &s->types[i]);
        }
    }
    if (st == OG_OK) {
        if (opts->nfragments) { /* the named fragments, each once, in manifest order */
            for (size_t k = 0; st == OG_OK && k < opts->nfragments; k++) {
                long i = og_manifest_find_fragment(m, opts->fragment_ids[k]);
                if (i < 0)
                    st = og_err(OG_ERR_NOT_FOUND, "table %s version %llu: no fragment %llu", t->dir,
                                (unsigned long long)m->version, (unsigned long long)opts->fragment_ids[k]);
                else
                    s->frags[s->nfrags++] = (size_t)i;
            }
            if (s->nfrags > 1) {
                qsort(s->frags, s->nfrags, sizeof *s->frags, size_cmp);
                size_t w = 1;
                for (size_t k = 1; k < s->nfrags; k++)
                    if (s->frags[k] != s->frags[w - 1]) s->frags[w++] = s->frags[k];
                s->nfrags = w;
            }
        } else {
            for (size_t i = 0; i < m->nfragments; i++) s->frags[s->nfrags++] = i;
        }
    }
    if (st != OG_OK) {
        og_table_scan_free(s);
        return st;
    }
    *out = s;
    return OG_OK;
}

og_status og_table_scan_open(og_table_scan **out, og_table *t, const og_manifest *m,
                             const og_table_scan_opts *opts)
{
    return og_table_i_scan_open(out, t, m, opts, NULL, NULL);
}

og_status og_table_scan_open_range(og_table_scan **out, og_table *t, const og_manifest *m,
                                   const og_table_scan_opts *opts, size_t frag_begin, size_t frag_end)
{
    *out = NULL;
    if (frag_begin > frag_end || frag_end > m->nfragments || (opts && opts->nfragments))
        return og_err(OG_ERR_INVALID, "table %s version %llu: a scan of fragments [%zu, %zu) of %zu", t->dir,
                      (unsigned long long)m->version, frag_begin, frag_end, m->nfragments);
    og_table_scan *s;
    OG_TRY(og_table_i_scan_open(&s, t, m, opts, NULL, NULL));
    s->nfrags = 0;
    for (size_t i = frag_begin; i < frag_end; i++) s->frags[s->nfrags++] = i;
    *out = s;
    return OG_OK;
}

static og_status bitset_from(const roaring_bitmap_t *bm, uint64_t rows, uint8_t **out)
{
    *out = NULL;
    uint64_t card = roaring_bitmap_get_cardinality(bm);
    if (!card) return OG_OK;
    uint8_t *bits = calloc((size_t)((rows + 7) / 8) + 1, 1);
    uint32_t *vals = malloc((size_t)card * sizeof *vals);
    if (!bits || !vals) {
        free(bits);
        free(vals);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    roaring_bitmap_to_uint32_array(bm, vals);
    for (uint64_t i = 0; i < card; i++)
        if (vals[i] < rows) bits[vals[i] >> 3] |= (uint8_t)(1u << (vals[i] & 7));
    free(vals);
    *out = bits;
    return OG_OK;
}

/* Range reads: hints the footer reads of the next fragment's files that hold a projected
 * field (the same ranges og_lance_reader_open_source will ask for). */
static void prefetch_next_tails(og_table_scan *s)
{
    if (s->next_frag >= s->nfrags) return;
    const og_fragment *f = &s->m->fragments[s->frags[s->next_frag]];
    og_range_config c;
    og_range_config_get(&c);
    if (!c.prefetch_threads) return;
    for (size_t k = 0; k < f->nfiles; k++) {
        const og_data_file *d = &f->files[k];
        int wanted = 0;
        for (size_t i = 0; i < s->nfields; i++) wanted |= file_of_field(f, s->field_ids[i]) == (long)k;
        if (!wanted || d->size_bytes < OG_LANCE_FOOTER_SIZE) continue;
        char key[4096];
        if (data_key(s->t, d, key, sizeof key) != OG_OK) {
            og_error_clear();
            continue;
        }
        uint64_t tail = c.tail_bytes ? c.tail_bytes : 65536;
        if (tail < OG_LANCE_FOOTER_SIZE) tail = OG_LANCE_FOOTER_SIZE;
        if (tail > d->size_bytes) tail = d->size_bytes;
        og_range_prefetch(s, s->t->store, key, d->size_bytes - tail, tail);
    }
}

static og_status frag_open(og_table_scan *s, const og_fragment *f)
{
    s->cur = f;
    s->pos = 0;
    OG_TRY(frag_files_init(&s->ff, f));
    for (size_t i = 0; i < s->nfields; i++) {
        s->file_of[i] = file_of_field(f, s->field_ids[i]);
        if (s->file_of[i] >= 0) OG_TRY(open_file(s->t, f, &s->ff, (size_t)s->file_of[i], s->keep_files));
    }
    if (s->ranged) prefetch_next_tails(s);
    const roaring_bitmap_t *override = s->del_fn ? s->del_fn(s->del_ctx, f->id) : NULL;
    if (override) return bitset_from(override, f->physical_rows, &s->deleted);
    if (!f->deletion.present) return OG_OK;
    roaring_bitmap_t *bm;
    OG_TRY(og_table_fragment_deletions(s->t, f, &bm));
    og_status st = bitset_from(bm, f->physical_rows, &s->deleted);
    roaring_bitmap_free(bm);
    return st;
}

/* Reads rows [start, start+count) of projected field i of the current fragment into *v. */
static og_status read_field(og_table_scan *s, size_t i, uint64_t start, size_t count, og_vector *v)
{
    if (s->file_of[i] < 0) return og_table_i_vector_nulls(s->types[i], count, v);
    og_status st = og_lance_reader_read(s->ff.readers[s->file_of[i]], s->field_ids[i], start, count, v);
    if (st != OG_OK)
        return og_err_wrap(st, "table %s fragment %llu field %d", s->t->dir,
                           (unsigned long long)s->cur->id, s->field_ids[i]);
    if (!og_type_eq(v->type, s->types[i]) || v->len != count) {
        og_vector_free(v);
        return og_err(OG_ERR_CORRUPT, "table %s fragment %llu: field %d has another type in its data file",
                      s->t->dir, (unsigned long long)s->cur->id, s->field_ids[i]);
    }
    return OG_OK;
}

og_status og_table_scan_next(og_table_scan *s, og_table_batch *out)
{
    batch_clear(s);
    memset(out, 0, sizeof *out);
    out->ncols = s->nfields;
    out->cols = s->cols;
    out->row_addrs = s->addrs;
    for (;;) {
        if (!s->cur) {
            if (s->next_frag >= s->nfrags) return OG_OK; /* end */
            og_status st = frag_open(s, &s->m->fragments[s->frags[s->next_frag++]]);
            if (st != OG_OK) {
                frag_close(s);
                return st;
            }
        }
        const og_fragment *f = s->cur;
        if (s->pos >= f->physical_rows) {
            frag_close(s);
            continue;
        }
        uint64_t start = s->pos;
        size_t count = (size_t)(f->physical_rows - start < s->batch_rows ? f->physical_rows - start : s->batch_rows);
        s->pos += count;
        size_t live = 0;
        if (!s->deleted) { /* every row live: no selection, addresses in one (vectorized) run */
            uint64_t a0 = OG_ROW_ADDR(f->id, start);
            if (!s->no_addrs)
                for (size_t r = 0; r < count; r++) s->addrs[r] = a0 + r;
            live = count;
        }
        for (size_t r = 0; s->deleted && r < count; r++) {
            uint64_t row = start + r;
            if (og_bit_get(s->deleted, (size_t)row)) continue;
            s->sel[live] = (uint32_t)r;
            s->addrs[live] = OG_ROW_ADDR(f->id, row);
            live++;
        }
        if (!live) continue;
        for (size_t i = 0; i < s->nfields; i++) {
            og_vector v;
            og_status st = read_field(s, i, start, count, &v);
            if (st == OG_OK && live != count) {
                st = og_table_i_vector_select(&v, s->sel, live, &s->cols[i]);
                og_vector_free(&v);
            } else if (st == OG_OK) {
                s->cols[i] = v;
            }
            if (st != OG_OK) {
                for (size_t k = 0; k < i; k++) og_vector_free(&s->cols[k]);
                return st;
            }
        }
        out->nrows = live;
        out->fragment_id = f->id;
        out->first_offset = live == count ? start : OG_ROW_ADDR_OFFSET(s->addrs[0]);
        out->row_addrs = s->no_addrs && live == count ? NULL : s->addrs;
        return OG_OK;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Take                                                                                      */
/* ---------------------------------------------------------------------------------------- */

og_status og_table_take(og_table *t, const og_manifest *m, uint64_t fragment_id,
                        const uint32_t *offsets, size_t n, const int32_t *field_ids,
                        size_t nfields, og_vector *out)
{
    for (size_t i = 0; i < nfields; i++) memset(&out[i], 0, sizeof out[i]);
    long fi = og_manifest_find_fragment(m, fragment_id);
    if (fi < 0)
        return og_err(OG_ERR_NOT_FOUND, "table %s version %llu: no fragment %llu", t->dir,
                      (unsigned long long)m->version, (unsigned long long)fragment_id);
    const og_fragment *f = &m->fragments[fi];
    for (size_t k = 0; k < n; k++) {
        if (offsets[k] >= f->physical_rows)
            return og_err(OG_ERR_INVALID, "table %s: row %u is past fragment %llu's %llu rows", t->dir,
                          offsets[k], (unsigned long long)fragment_id, (unsigned long long)f->physical_rows);
        if (k && offsets[k] < offsets[k - 1])
            return og_err(OG_ERR_INVALID, "og_table_take: offsets must be ascending");
    }
    if (n == 0) {
        for (size_t i = 0; i < nfields; i++) {
            long idx = og_lance_schema_find_id(&m->schema, field_ids[i]);
            og_type ty;
            og_status st = idx < 0 ? og_err(OG_ERR_NOT_FOUND, "table %s: no field with id %d", t->dir, field_ids[i])
                                   : og_lance_schema_field_type(&m->schema, (size_t)idx, &ty);
            if (st == OG_OK) st = og_vector_init(&out[i], ty);
            if (st != OG_OK) {
                for (size_t k = 0; k <= i; k++) og_vector_free(&out[k]);
                return st;
            }
        }
        return OG_OK;
    }
    og_table_scan_opts o = {field_ids, nfields, &fragment_id, 1, 1, 0};
    og_table_scan *s;
    OG_TRY(og_table_scan_open(&s, t, m, &o));
    /* A take of every row (a key map built from a whole fragment) reads the file as a scan
     * does: its reader stays its own, so the pages it touched are unmapped when it ends rather
     * than held by the table's cache (a bulk load's index stage read every data file). */
    s->keep_files = n < f->physical_rows;
    og_status st = frag_open(s, f);
    /* Runs of offsets at most TAKE_GAP apart are read as one range: a few scattered rows (a
     * top-k's winners, a point gather) cost a read each instead of every row between the first
     * and the last.  Dense offsets, or more than TAKE_RUNS runs, stay one range. */
    enum { TAKE_GAP = 64, TAKE_RUNS = 32 };
    size_t nruns = 1;
    for (size_t k = 1; k < n; k++) nruns += offsets[k] - offsets[k - 1] > TAKE_GAP;
    uint32_t gap = nruns > TAKE_RUNS ? UINT32_MAX : TAKE_GAP;
    uint32_t *sel = malloc((n ? n : 1) * sizeof *sel);
    if (st == OG_OK && !sel) st = og_err(OG_ERR_NOMEM, "out of memory");
    size_t done = 0;
    for (; st == OG_OK && done < nfields; done++) {
        for (size_t a = 0, b; st == OG_OK && a < n; a = b) {
            for (b = a + 1; b < n && offsets[b] - offsets[b - 1] <= gap; b++) {}
            uint64_t lo = offsets[a], hi = (uint64_t)offsets[b - 1] + 1;
            for (size_t k = a; k < b; k++) sel[k - a] = (uint32_t)(offsets[k] - lo);
            og_vector v, part;
            st = read_field(s, done, lo, (size_t)(hi - lo), &v);
            if (st != OG_OK) break;
            st = og_table_i_vector_select(&v, sel, b - a, &part);
            og_vector_free(&v);
            if (st != OG_OK) break;
            if (a == 0) {
                out[done] = part; /* the first run starts the column */
                continue;
            }
            for (size_t k = 0; k < part.len && st == OG_OK; k++) st = og_vector_append_from(&out[done], &part, k);
            og_vector_free(&part);
        }
        if (st != OG_OK) {
            og_vector_free(&out[done]);
            break;
        }
    }
    if (st != OG_OK)
        for (size_t k = 0; k < done; k++) og_vector_free(&out[k]);
    free(sel);
    og_table_scan_free(s);
    return st;
}
