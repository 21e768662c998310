/*
 * tableview_load.c — loading a view's whole column (og_tv_load_column: og_tableview_column and
 * og_tableview_dict load through it, under the view's lock).
 *
 * A column is scanned fragment by fragment into buffers reserved at its final size (a coded
 * String column into a dictionary builder, dictcol.h), each scanned batch checked against
 * the view's row numbering.  Over og_tableview_load_split_rows rows and two or more fragments
 * of a local store, the fragments are split in two halves scanned on two threads into the one
 * column (tableview.h): a fresh process's first aggregate over a bulk load's 77 fragments at
 * 5M rows spent most of its time here (docs/benchmarks.md "Scaling").
 *
 * og_tableview_stream reads columns the same way, fragment by fragment on up to two threads,
 * but hands each batch to its caller instead of keeping it: what a one-pass aggregate over a
 * table too large to hold reads (issue 36; docs/engine.md "Memory").
 */
#include "engine/tableview_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "engine/dictcol.h"
#include "engine/tableview.h"
#include "util/error.h"
#include "util/hugepage.h"

/* Appends every row of src to dst (same type). */
static og_status append_all(og_vector *dst, const og_vector *src)
{
    for (size_t i = 0; i < src->len; i++) OG_TRY(og_vector_append_from(dst, src, i));
    return OG_OK;
}

/* Gives back spare capacity of an owned vector (the column is never appended to again; a
 * failed shrinking realloc just keeps the larger buffer). */
static void *shrink_to(void *p, size_t bytes)
{
    if (!p || !bytes) return p;
    void *q = realloc(p, bytes);
    return q ? q : p;
}

static void shrink_vector(og_vector *v)
{
    if (!(v->flags & OG_VEC_OWNED) || !v->len) return;
    size_t n = v->len;
    v->validity = shrink_to(v->validity, (n + 7) / 8);
    switch (v->type.id) {
    case OG_T_STRING:
    case OG_T_BLOB: {
        v->offsets = shrink_to(v->offsets, (n + 1) * sizeof(int64_t));
        size_t used = (size_t)v->offsets[n];
        if (used && used < v->cap_bytes) {
            v->values = shrink_to(v->values, used);
            v->cap_bytes = used;
        }
        break;
    }
    case OG_T_LIST:
        v->offsets = shrink_to(v->offsets, (n + 1) * sizeof(int64_t));
        if (v->child) shrink_vector(v->child);
        break;
    case OG_T_BOOL: v->values = shrink_to(v->values, (n + 7) / 8); break;
    default: v->values = shrink_to(v->values, n * og_type_width(v->type)); break;
    }
    v->cap_rows = n;
}

/* Memory of a whole column (issue 17: the bench query process held 1.2x Kuzu's RSS, most of
 * it column copies and their growth slack).  The view knows the column's row count before the
 * scan, so the row buffers are allocated once at their final size (calloc: pages nobody
 * writes stay unmapped) and each batch is copied in with one memcpy per buffer, instead of
 * appended row by row into buffers that double (a peak of up to twice the column, and freed
 * blocks the allocator keeps).  String bytes are the one size not known ahead: sized from the
 * data seen so far, extrapolated to the whole column, and trimmed at the end. */
static int bulk_type(og_type t)
{
    switch (t.id) {
    case OG_T_I32: case OG_T_I64: case OG_T_U32: case OG_T_U64: case OG_T_F32: case OG_T_F64:
    case OG_T_DATE32: case OG_T_DATE64: case OG_T_VECTOR: case OG_T_STRING: case OG_T_BLOB:
        return og_type_width(t) > 0 || t.id == OG_T_STRING || t.id == OG_T_BLOB;
    default: return 0; /* BOOL (bit-packed), LIST: row by row */
    }
}

/* Huge pages are asked for behind a reserved column buffer (og_huge_hint): a whole-column
 * load then takes one fault per 2 MiB instead of one per 4 KiB page — at 5M rows the faults of
 * the aggregate's two column loads were a third of its first call (docs/benchmarks.md
 * "Scaling").  The buffer is written whole, so this costs no extra memory. */
static og_status column_reserve(og_vector *col, size_t rows)
{
    if (!rows) return OG_OK;
    if (col->type.id == OG_T_STRING || col->type.id == OG_T_BLOB) {
        int64_t *o = calloc(rows + 1, sizeof(int64_t));
        if (!o) return og_err(OG_ERR_NOMEM, "table view: out of memory");
        free(col->offsets); /* og_vector_init's one entry */
        col->offsets = o;
        og_huge_hint(o, (rows + 1) * sizeof(int64_t));
    } else {
        col->values = calloc(rows, og_type_width(col->type));
        if (!col->values) return og_err(OG_ERR_NOMEM, "table view: out of memory");
        og_huge_hint(col->values, rows * og_type_width(col->type));
    }
    col->cap_rows = rows;
    return OG_OK;
}

/* Appends batch vector src (same type, bulk_type) to col, whose row buffers hold `total` rows. */
static og_status column_append_bulk(og_vector *col, const og_vector *src, size_t total)
{
    size_t n = src->len, at = col->len;
    if (n > col->cap_rows - at) return og_err(OG_ERR_INTERNAL, "table view: column overflow");
    if (src->null_count && !col->validity) {
        col->validity = malloc((col->cap_rows + 7) / 8);
        if (!col->validity) return og_err(OG_ERR_NOMEM, "table view: out of memory");
        memset(col->validity, 0xff, (col->cap_rows + 7) / 8);
    }
    if (col->type.id == OG_T_STRING || col->type.id == OG_T_BLOB) {
        int64_t first = src->offsets[0], used = col->offsets[at];
        size_t bytes = (size_t)(src->offsets[n] - first);
        size_t need = (size_t)used + bytes;
        if (need > col->cap_bytes) {
            /* the bytes per row so far (this batch included), over the whole column, +1/16 */
            size_t want = (size_t)((double)need / (double)(at + n) * (double)total * 1.0625) + 64;
            if (want < col->cap_bytes + col->cap_bytes / 4) want = col->cap_bytes + col->cap_bytes / 4;
            if (want < need) want = need;
            uint8_t *q = realloc(col->values, want);
            if (!q) return og_err(OG_ERR_NOMEM, "table view: out of memory");
            col->values = q;
            col->cap_bytes = want;
            og_huge_hint(q + used, want - (size_t)used); /* (the part not yet written) */
        }
        if (bytes) memcpy((uint8_t *)col->values + used, (const uint8_t *)src->values + first, bytes);
        /* (n rows of offsets past `at`, rebased onto this column's bytes) */
        for (size_t i = 0; i < n; i++) col->offsets[at + i + 1] = used + (src->offsets[i + 1] - first);
    } else {
        size_t w = og_type_width(col->type);
        if (src->values) memcpy((uint8_t *)col->values + at * w, src->values, n * w);
    }
    if (col->validity) {
        for (size_t i = 0; i < n; i++) {
            size_t r = at + i;
            if (og_vector_is_null(src, i)) {
                col->validity[r >> 3] &= (uint8_t)~(1u << (r & 7));
                if (col->type.id != OG_T_STRING && col->type.id != OG_T_BLOB) /* as append_null: zeros */
                    memset((uint8_t *)col->values + r * og_type_width(col->type), 0, og_type_width(col->type));
            } else {
                col->validity[r >> 3] |= (uint8_t)(1u << (r & 7));
            }
        }
    }
    col->null_count += src->null_count;
    col->len += n;
    return OG_OK;
}

/* 1 when the scan batch's row addresses are view rows pos.. (the column lines up with the
 * view's numbering).  With row_addrs listed, a compare; without (a view with no deletions
 * never needs to list them), the live rows of fragment i are offsets 0.. in order. */
static int batch_lines_up(const og_tableview *v, const uint64_t *row_addrs, size_t pos, const og_table_batch *b)
{
    if (row_addrs) return memcmp(b->row_addrs, row_addrs + pos, b->nrows * sizeof *b->row_addrs) == 0;
    size_t fi = 0;
    while (fi < v->m.nfragments && v->frag_start[fi + 1] <= pos) fi++; /* (empty fragments too) */
    /* A scan's batch holds rows of one fragment, offsets strictly ascending (table.h): when its
     * first and last rows are the view's rows pos and pos + nrows - 1 of the same fragment,
     * so is every row between — two compares instead of one a row (a first whole-column
     * load at 5M rows spent a tenth of its time here). */
    if (b->nrows && fi < v->m.nfragments && v->frag_start[fi + 1] >= pos + b->nrows) {
        uint64_t id = v->m.fragments[fi].id, off = pos - v->frag_start[fi];
        return b->fragment_id == id && b->row_addrs[0] == OG_ROW_ADDR(id, off) &&
               b->row_addrs[b->nrows - 1] == OG_ROW_ADDR(id, off + b->nrows - 1);
    }
    for (size_t j = 0; j < b->nrows; j++) {
        size_t row = pos + j;
        while (fi < v->m.nfragments && v->frag_start[fi + 1] <= row) fi++;
        if (fi == v->m.nfragments || b->row_addrs[j] != OG_ROW_ADDR(v->m.fragments[fi].id, row - v->frag_start[fi]))
            return 0;
    }
    return 1;
}

/* One side of a whole-column load: the rows of fragments [f0, f1), view rows [row0, row1). */
typedef struct load_part {
    og_tableview *v;
    size_t i; /* the top-level field */
    const uint64_t *row_addrs;
    size_t f0, f1, row0, row1;
    og_vector *col;          /* a plain column (its row buffers reserved when bulk) */
    int bulk;
    int at_place;            /* one of two sides: fixed-width rows copied to their place, nulls */
    uint8_t *nulls;          /*   noted in this side's own bitmap of row1 - row0 bits (NULL: */
    size_t null_count;       /*   none seen); joined by og_tv_load_column */
    og_dictcol_builder *db;  /* or the builder coding it */
    atomic_int *failed;      /* set by the side that fails: the other stops early */
    og_status st;
    char msg[256];           /* a failure's message (a thread's last error does not travel) */
} load_part;

/* Copies fixed-width batch src to rows pos.. of part p's column (at_place). */
static og_status put_at_place(load_part *p, const og_vector *src, size_t pos)
{
    og_vector *col = p->col;
    size_t w = og_type_width(col->type), n = src->len;
    if (src->values) memcpy((uint8_t *)col->values + pos * w, src->values, n * w);
    if (!src->null_count) return OG_OK;
    size_t span = p->row1 - p->row0;
    if (!p->nulls) {
        p->nulls = malloc((span + 7) / 8);
        if (!p->nulls) return og_err(OG_ERR_NOMEM, "table view: out of memory");
        memset(p->nulls, 0xff, (span + 7) / 8);
    }
    for (size_t k = 0; k < n; k++)
        if (og_vector_is_null(src, k)) {
            size_t r = pos - p->row0 + k;
            p->nulls[r >> 3] &= (uint8_t)~(1u << (r & 7));
            memset((uint8_t *)col->values + (pos + k) * w, 0, w); /* as append_null: zeros */
            p->null_count++;
        }
    return OG_OK;
}

static og_status load_part_run(load_part *p)
{
    og_tableview *v = p->v;
    size_t i = p->i;
    if (p->row1 == p->row0) return OG_OK;
    og_table_scan *scan = NULL;
    og_table_scan_opts opts = {&v->top_ids[i], 1, NULL, 0, 0, 0};
    og_status st = og_table_scan_open_range(&scan, v->table, &v->m, &opts, p->f0, p->f1);
    size_t pos = p->row0;
    while (st == OG_OK) {
        if (p->failed && atomic_load_explicit(p->failed, memory_order_relaxed)) {
            og_table_scan_free(scan);
            return OG_OK; /* (the other side's failure is the load's) */
        }
        og_table_batch b;
        st = og_table_scan_next(scan, &b);
        if (st != OG_OK || b.nrows == 0) break;
        if (b.ncols != 1 || b.cols[0].len != b.nrows || !og_type_eq(b.cols[0].type, v->top_types[i]) ||
            b.nrows > p->row1 - pos || !batch_lines_up(v, p->row_addrs, pos, &b)) {
            st = og_err(OG_ERR_CORRUPT, "table %s version %llu field id %d: scanned rows disagree with the live rows",
                        og_table_dir(v->table), (unsigned long long)v->m.version, v->top_ids[i]);
            break;
        }
        if (p->db) st = og_dictcol_append(p->db, &b.cols[0]);
        else if (p->at_place) st = put_at_place(p, &b.cols[0], pos);
        else st = p->bulk ? column_append_bulk(p->col, &b.cols[0], v->nrows) : append_all(p->col, &b.cols[0]);
        pos += b.nrows;
    }
    og_table_scan_free(scan);
    if (st == OG_OK && pos != p->row1)
        st = og_err(OG_ERR_CORRUPT, "table %s version %llu field id %d: scan gave %zu of %zu live rows",
                    og_table_dir(v->table), (unsigned long long)v->m.version, v->top_ids[i], pos - p->row0,
                    p->row1 - p->row0);
    if (st != OG_OK && p->failed) atomic_store(p->failed, 1);
    return st;
}

static void *load_part_main(void *arg)
{
    load_part *p = arg;
    p->st = load_part_run(p);
    if (p->st != OG_OK) {
        snprintf(p->msg, sizeof p->msg, "%s", og_error_message());
        og_error_clear();
    }
    return NULL;
}

int og_tableview_load_threads = 2;
size_t og_tableview_load_split_rows = (size_t)1 << 18;
static atomic_size_t split_loads;
size_t og_tableview_split_loads(void) { return atomic_load(&split_loads); }

/* A whole column of at least og_tableview_load_split_rows rows over two or more fragments of a local
 * store is loaded on two threads, each scanning about half of the fragments (a fresh
 * process's first aggregate at 5M nodes spent most of its time loading its two columns:
 * docs/benchmarks.md "Scaling").  The sides write into the one column (a fixed-width one's
 * reserved buffer, a coded one's code array: og_dictcol_begin_part), so the load holds no
 * second copy; a plain String column (bytes of unknown size) loads on one thread. */

static size_t split_fragment(const og_tableview *v);

/* The fragment index where a two-sided load of v splits (0: load on one thread). */
static size_t load_split(const og_tableview *v, int coded, og_type t)
{
    if (og_tableview_load_threads < 2 || v->nrows < og_tableview_load_split_rows || v->nrows < 2 || v->m.nfragments < 2 ||
        !og_store_is_local(v->store))
        return 0;
    if (!coded && !(bulk_type(t) && og_type_width(t) > 0 && t.id != OG_T_BOOL)) return 0;
    return split_fragment(v);
}

/* The fragment index nearest the view's middle row (0: none splits it). */
static size_t split_fragment(const og_tableview *v)
{
    size_t best = 0, half = v->nrows / 2;
    for (size_t k = 1; k < v->m.nfragments; k++) {
        size_t at = v->frag_start[k];
        if (at == 0 || at >= v->nrows) continue;
        size_t d = at > half ? at - half : half - at, bd = v->frag_start[best] > half ? v->frag_start[best] - half : half - v->frag_start[best];
        if (!best || d < bd) best = k;
    }
    return best;
}

/* Scans field top[i] into a new owned vector (the caller holds the view's lock); row_addrs
 * may be NULL for a view without deletions.  With dout set (a String field), codes it into
 * *dout instead (dictcol.h): OG_ERR_LIMIT when it has too many distinct values. */
og_status og_tv_load_column(og_tableview *v, size_t i, const uint64_t *row_addrs, og_vector **out, og_dictcol **dout)
{
    *out = NULL;
    if (dout) *dout = NULL;
    atomic_fetch_add(&og_tv_whole_reads, 1);
    if (v->top_type_st[i] != OG_OK)
        return og_err(v->top_type_st[i], "table %s version %llu: field id %d has a type this build cannot read",
                      og_table_dir(v->table), (unsigned long long)v->m.version, v->top_ids[i]);
    og_vector *col = dout ? NULL : calloc(1, sizeof *col);
    og_dictcol_builder *db = NULL;
    og_status st = dout ? og_dictcol_begin(&db, v->nrows) : !col ? og_err(OG_ERR_NOMEM, "table view: out of memory")
                                                                : og_vector_init(col, v->top_types[i]);
    int bulk = bulk_type(v->top_types[i]);
    if (st == OG_OK && bulk && col) st = column_reserve(col, v->nrows);
    if (st != OG_OK) {
        if (col) og_vector_free(col);
        free(col);
        return st;
    }
    size_t k = load_split(v, dout != NULL, v->top_types[i]);
    atomic_int failed = 0;
    load_part a = {v, i, row_addrs, 0, v->m.nfragments, 0, v->nrows, col, bulk, 0, NULL, 0, db, &failed, OG_OK, {0}};
    load_part b = a;
    og_dictcol_builder *pdb = NULL;
    if (k) {
        a.f1 = b.f0 = k;
        a.row1 = b.row0 = v->frag_start[k];
        a.at_place = b.at_place = !db;
        if (db && og_dictcol_begin_part(&pdb, db, a.row1) != OG_OK) { /* (cannot fail on a fresh builder) */
            og_error_clear();
            k = 0, a = (load_part){v, i, row_addrs, 0, v->m.nfragments, 0, v->nrows, col, bulk, 0, NULL, 0, db, NULL, OG_OK, {0}};
        }
        b.db = pdb;
    }
    if (k) {
        atomic_fetch_add(&split_loads, 1);
        pthread_t th;
        int threaded = pthread_create(&th, NULL, load_part_main, &b) == 0;
        st = load_part_run(&a);
        if (threaded) pthread_join(th, NULL);
        else load_part_main(&b); /* no thread: the second side after the first */
        if (st == OG_OK && b.st != OG_OK) st = og_err(b.st, "%s", b.msg);
        if (st == OG_OK && db) {
            st = og_dictcol_join(db, pdb); /* (frees the part) */
            pdb = NULL;
        }
        if (st == OG_OK && col) { /* the two sides' rows and nulls, as one column */
            col->len = v->nrows;
            col->null_count = a.null_count + b.null_count;
            if (col->null_count) {
                col->validity = malloc((v->nrows + 7) / 8);
                if (!col->validity) st = og_err(OG_ERR_NOMEM, "table view: out of memory");
                else memset(col->validity, 0xff, (v->nrows + 7) / 8);
                for (int side = 0; st == OG_OK && side < 2; side++) {
                    const load_part *p = side ? &b : &a;
                    for (size_t r = 0; p->nulls && r < p->row1 - p->row0; r++)
                        if (!((p->nulls[r >> 3] >> (r & 7)) & 1)) {
                            size_t row = p->row0 + r;
                            col->validity[row >> 3] &= (uint8_t)~(1u << (row & 7));
                        }
                }
            }
        }
        og_dictcol_builder_free(pdb);
        free(a.nulls);
        free(b.nulls);
#ifdef __GLIBC__
        /* the second side's scan buffers came from its thread's malloc arena, which keeps
         * their pages after the thread ends: hand them back, so splitting the load adds no
         * resident memory (~100 KiB at 5M rows otherwise) */
        malloc_trim(0);
#endif
    } else {
        st = load_part_run(&a);
    }
    if (db) {
        if (st == OG_OK) return og_dictcol_finish(db, dout);
        og_dictcol_builder_free(db);
        return st;
    }
    if (st != OG_OK) {
        og_vector_free(col);
        free(col);
        return st;
    }
    shrink_vector(col);
    *out = col;
    return OG_OK;
}


/* ---- streaming (og_tableview_stream) ------------------------------------------------------ */

/* Rows a streamed batch holds: a data file's page (lance_file.h OG_LANCE_DEFAULT_PAGE_ROWS),
 * so a fixed-width column's batch points into the mapped page instead of being copied, and 8K
 * rows of an 8-byte column (64 KiB) and what the consumer derives from them stay in the L2
 * cache. */
#define OG_TV_STREAM_BATCH 8192

static atomic_size_t streams;
size_t og_tableview_streams(void) { return atomic_load(&streams); }

typedef struct stream_part {
    og_tableview *v;
    const int32_t *fids;
    const size_t *tops; /* each field's top-level index */
    size_t nf;
    int part;
    size_t f0, f1, row0, row1;
    og_tableview_batch_fn use;
    void *ctx;
    atomic_int *failed;
    og_status st;
    char msg[256];
} stream_part;

static og_status stream_part_run(stream_part *p)
{
    og_tableview *v = p->v;
    if (p->row1 == p->row0) return OG_OK;
    og_table_scan *scan = NULL;
    og_table_scan_opts opts = {p->fids, p->nf, NULL, 0, OG_TV_STREAM_BATCH, 1};
    og_status st = og_table_scan_open_range(&scan, v->table, &v->m, &opts, p->f0, p->f1);
    size_t pos = p->row0, fi = p->f0;
    while (st == OG_OK) {
        if (p->failed && atomic_load_explicit(p->failed, memory_order_relaxed)) {
            og_table_scan_free(scan);
            return OG_OK; /* (the other side's failure is the stream's) */
        }
        og_table_batch b;
        st = og_table_scan_next(scan, &b);
        if (st != OG_OK || b.nrows == 0) break;
        /* (no deletions: the batch is rows first_offset.. of the fragment holding view row pos) */
        while (fi < p->f1 && v->frag_start[fi + 1] <= pos) fi++;
        int ok = b.ncols == p->nf && b.nrows <= p->row1 - pos && fi < p->f1 && b.fragment_id == v->m.fragments[fi].id &&
                 b.first_offset == pos - v->frag_start[fi] && pos + b.nrows <= v->frag_start[fi + 1];
        for (size_t k = 0; ok && k < p->nf; k++)
            ok = b.cols[k].len == b.nrows && og_type_eq(b.cols[k].type, v->top_types[p->tops[k]]);
        if (!ok) {
            st = og_err(OG_ERR_CORRUPT, "table %s version %llu: streamed rows disagree with the live rows",
                        og_table_dir(v->table), (unsigned long long)v->m.version);
            break;
        }
        st = p->use(p->ctx, p->part, pos, b.nrows, b.cols);
        pos += b.nrows;
    }
    og_table_scan_free(scan);
    if (st == OG_OK && pos != p->row1)
        st = og_err(OG_ERR_CORRUPT, "table %s version %llu: a scan gave %zu of %zu live rows", og_table_dir(v->table),
                    (unsigned long long)v->m.version, pos - p->row0, p->row1 - p->row0);
    if (st != OG_OK && p->failed) atomic_store(p->failed, 1);
    return st;
}

static void *stream_part_main(void *arg)
{
    stream_part *p = arg;
    p->st = stream_part_run(p);
    if (p->st != OG_OK) {
        snprintf(p->msg, sizeof p->msg, "%s", og_error_message());
        og_error_clear();
    }
    return NULL;
}

int og_tableview_column_loaded(og_tableview *v, int32_t field_id)
{
    for (size_t i = 0; i < v->ntop; i++)
        if (v->top_ids[i] == field_id)
            return atomic_load_explicit(&v->cols[i], memory_order_acquire) != NULL ||
                   atomic_load_explicit(&v->dicts[i], memory_order_acquire) != NULL;
    return 0;
}

og_status og_tableview_field_type(og_tableview *v, int32_t field_id, og_type *out)
{
    for (size_t i = 0; i < v->ntop; i++)
        if (v->top_ids[i] == field_id) {
            if (v->top_type_st[i] != OG_OK) break;
            *out = v->top_types[i];
            return OG_OK;
        }
    return og_err(OG_ERR_NOT_FOUND, "table %s version %llu has no readable top-level field id %d",
                  og_table_dir(v->table), (unsigned long long)v->m.version, field_id);
}

og_status og_tableview_stream(og_tableview *v, const int32_t *field_ids, size_t nf, int parts,
                              og_tableview_batch_fn use, void *ctx)
{
    if (v->any_deletions)
        return og_err(OG_ERR_UNSUPPORTED, "table %s version %llu has deleted rows: load its columns",
                      og_table_dir(v->table), (unsigned long long)v->m.version);
    size_t *tops = malloc((nf ? nf : 1) * sizeof *tops);
    if (!tops) return og_err(OG_ERR_NOMEM, "table view: out of memory");
    og_status st = OG_OK;
    for (size_t k = 0; k < nf && st == OG_OK; k++) {
        og_type t;
        st = og_tableview_field_type(v, field_ids[k], &t);
        for (tops[k] = 0; st == OG_OK && v->top_ids[tops[k]] != field_ids[k];) tops[k]++;
    }
    if (st != OG_OK) {
        free(tops);
        return st;
    }
    atomic_fetch_add(&streams, 1);
    size_t k = parts >= 2 && og_tableview_load_threads >= 2 && v->nrows >= og_tableview_load_split_rows &&
                       v->m.nfragments >= 2 && og_store_is_local(v->store)
                   ? split_fragment(v)
                   : 0;
    atomic_int failed = 0;
    stream_part a = {v, field_ids, tops, nf, 0, 0, v->m.nfragments, 0, v->nrows, use, ctx, &failed, OG_OK, {0}};
    if (!k) {
        st = stream_part_run(&a);
        free(tops);
        return st;
    }
    stream_part b = a;
    a.f1 = b.f0 = k;
    a.row1 = b.row0 = v->frag_start[k];
    b.part = 1;
    pthread_t th;
    int threaded = pthread_create(&th, NULL, stream_part_main, &b) == 0;
    st = stream_part_run(&a);
    if (threaded) pthread_join(th, NULL);
    else stream_part_main(&b); /* no thread: the second side after the first */
    if (st == OG_OK && b.st != OG_OK) st = og_err(b.st, "%s", b.msg);
    free(tops);
    return st;
}
