/*
 * plan.c — staged write effects: staging rows, flushing batches, writing table versions.
 * See plan.h; the checks of the new images are plan_validate.c.
 *
 * Id bookkeeping: staged_ids maps an id to the FIRST staged row that had it; latest[first]
 * is the current row for that id (a merge-mode repeat supersedes the earlier row and becomes
 * the latest).  Committed rows are found through the base view's id map.  Rows whose id the
 * plan generated (edges and unkeyed nodes without "id": a fresh, process-monotonic ULID) are
 * unique by construction, so they enter staged_ids lazily — before the next row with a given
 * id, and before validation or any lookup — which spares a load of 5M id-less edges 5M map
 * inserts that nothing would ever look up.
 *
 * Streaming (og_plan_flush): flushable columns hold only rows [mem_base, nstaged); every
 * access to a staged property value goes through og_plan_i_col_row().  A flushed batch is
 * written in row order without the rows superseded at that time (the `skipped` bitmap remembers them), so
 * a flushed row's fragment offset is its rank among the batch's unskipped rows — recomputed
 * by one pass at write time for the rows superseded after their flush, which are deleted from
 * the staged fragment before the txn commits.
 */
#define _GNU_SOURCE /* qsort_r */
#include "engine/plan.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/suggest.h"
#include "engine/batch_index.h"
#include "engine/index_build.h"
#include "engine/layout.h"
#include "engine/plan_internal.h"
#include "index/fts.h"
#include "index/index.h"
#include "index/keymap.h"
#include "table/table.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/id.h"

static og_status job_join(og_plan *p);
static int job_reads_ids(const og_plan *p, const og_plan_table *pt);

static og_status table_cols_init(og_plan_table *pt)
{
    if (pt->cols) return OG_OK;
    size_t base = pt->is_edge ? 3 : 1;
    pt->ncols = base + pt->t->nprops;
    pt->cols = calloc(pt->ncols, sizeof *pt->cols);
    pt->retain = calloc(pt->ncols, 1);
    pt->labels = calloc(pt->t->nprops ? pt->t->nprops : 1, sizeof *pt->labels);
    if (!pt->cols || !pt->retain || !pt->labels) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < pt->t->nprops; i++)
        snprintf(pt->labels[i], sizeof pt->labels[i], "%s.%s", pt->t->name, pt->t->props[i].name);
    for (size_t c = 0; c < base; c++) OG_TRY(og_vector_init(&pt->cols[c], (og_type){OG_T_STRING, OG_T_NULL, 0}));
    /* A node type's ids are retained for the whole load (never flushed) and indexed in row
     * order: its id map keys them where they are, in the id column, instead of copying them
     * (og_strmap_init_column; 10M ids: ~250 MB less, docs/load.md "The memory bound"). */
    if (!pt->is_edge && !og_strmap_count(&pt->staged_ids))
        og_strmap_init_column(&pt->staged_ids, &pt->cols[0].values, &pt->cols[0].offsets);
    for (size_t i = 0; i < pt->t->nprops; i++) OG_TRY(og_vector_init(&pt->cols[base + i], pt->t->props[i].type));
    /* retained for validation after a flush: id, src, dst and every @unique member */
    for (size_t c = 0; c < base; c++) pt->retain[c] = 1;
    for (size_t k = 0; k < pt->t->ncons; k++) {
        const og_cat_constraint *cn = &pt->t->cons[k];
        if (cn->kind != OG_CONS_UNIQUE) continue;
        for (size_t c = 0; c < cn->ncols; c++)
            if (cn->col_props[c] >= 0 && (size_t)cn->col_props[c] < pt->t->nprops)
                pt->retain[base + (size_t)cn->col_props[c]] = 1;
    }
    return OG_OK;
}


og_status og_plan_table_cols(og_plan_table *pt) { return table_cols_init(pt); }

/* table_cols_init before a row is staged: a node type's first row turns its (empty) id map
 * into one over its id column, which the batch in flight may be reading (its endpoint
 * lookups, finish_row's rule): that batch first. */
static og_status staging_cols_init(og_plan *p, og_plan_table *pt)
{
    if (!pt->cols && !pt->is_edge && job_reads_ids(p, pt)) OG_TRY(job_join(p));
    return table_cols_init(pt);
}

size_t og_plan_prop_col(const og_plan_table *pt, size_t prop) { return (pt->is_edge ? 3 : 1) + prop; }

og_status og_plan_init(og_plan *p, og_read *read, const char *source)
{
    memset(p, 0, sizeof *p);
    p->read = read;
    p->cat = og_read_catalog(read);
    p->source = source;
    p->now_ms = og_now_ms();
    p->nodes = calloc(p->cat->nnodes ? p->cat->nnodes : 1, sizeof *p->nodes);
    p->edges = calloc(p->cat->nedges ? p->cat->nedges : 1, sizeof *p->edges);
    if (!p->nodes || !p->edges) return og_err(OG_ERR_NOMEM, "out of memory");
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->cat->nedges : p->cat->nnodes;
        for (size_t i = 0; i < n; i++) {
            og_plan_table *pt = pass ? &p->edges[i] : &p->nodes[i];
            pt->t = pass ? &p->cat->edges[i] : &p->cat->nodes[i];
            pt->is_edge = pass;
            pt->index = i;
            pt->ends_fd[0] = pt->ends_fd[1] = -1;
            og_strmap_init(&pt->staged_ids);
        }
    }
    return OG_OK;
}

static void table_free(og_plan_table *pt)
{
    for (size_t c = 0; pt->cols && c < pt->ncols; c++) og_vector_free(&pt->cols[c]);
    free(pt->cols);
    free(pt->retain);
    free(pt->labels);
    free(pt->skipped);
    free(pt->batches);
    og_table_txn_free(pt->txn); /* an uncommitted txn: its data files are garbage */
    free(pt->removed);
    free(pt->superseded);
    free(pt->lines);
    free(pt->latest);
    free(pt->wide_lines);
    free(pt->end_rows[0]);
    free(pt->end_rows[1]);
    for (int k = 0; k < 2; k++) {
        free(pt->ends[k]);
        og_vector_free(&pt->unres[k]);
        if (pt->ends_fd[k] >= 0) close(pt->ends_fd[k]);
        pt->ends_fd[k] = -1;
    }
    og_strmap_free(&pt->staged_ids);
}


void og_plan_free(og_plan *p)
{
    if (job_join(p) != OG_OK) og_error_clear(); /* an abandoned plan: its files are garbage */
    og_batch_index_join(p->side); /* its files into this thread's journal, as the batches' */
    og_batch_index_free(p->side);
    for (size_t i = 0; p->nodes && i < p->cat->nnodes; i++) table_free(&p->nodes[i]);
    for (size_t i = 0; p->edges && i < p->cat->nedges; i++) table_free(&p->edges[i]);
    free(p->nodes);
    free(p->edges);
    memset(p, 0, sizeof *p);
}

og_status og_plan_table_view(og_plan *p, og_plan_table *pt)
{
    if (pt->view) return OG_OK;
    return pt->is_edge ? og_read_edge_view(p->read, pt->index, &pt->view)
                       : og_read_node_view(p->read, pt->index, &pt->view);
}

/* ---- messages ------------------------------------------------------------------------------ */

const char *og_plan_where(const og_plan *p, uint64_t line, char *buf, size_t cap)
{
    const char *src = p->source;
    if (p->nsources) {
        size_t f = (size_t)(line >> OG_PLAN_LINE_BITS);
        src = f < p->nsources ? p->sources[f] : NULL;
        line &= ((uint64_t)1 << OG_PLAN_LINE_BITS) - 1;
    }
    if (src && line)
        snprintf(buf, cap, "%s:%llu", src, (unsigned long long)line);
    else
        buf[0] = '\0';
    return buf;
}

/* "seed.jsonl:12: " or "" */
const char *og_plan_i_where(const og_plan *p, uint64_t line, char *buf, size_t cap)
{
    og_plan_where(p, line, buf, cap);
    if (buf[0]) strncat(buf, ": ", cap - strlen(buf) - 1);
    return buf;
}

void og_plan_i_render_value(const og_vector *v, size_t i, char *buf, size_t cap)
{
    if (og_vector_is_null(v, i)) {
        snprintf(buf, cap, "null");
        return;
    }
    switch (v->type.id) {
    case OG_T_STRING: {
        size_t n;
        const uint8_t *s = og_vector_get_bytes(v, i, &n);
        snprintf(buf, cap, "%.*s", (int)(n > 200 ? 200 : n), (const char *)s);
        return;
    }
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64:
        snprintf(buf, cap, "%lld", (long long)og_vector_get_i64(v, i));
        return;
    case OG_T_U32: case OG_T_U64: snprintf(buf, cap, "%llu", (unsigned long long)og_vector_get_u64(v, i)); return;
    case OG_T_F32: case OG_T_F64: snprintf(buf, cap, "%g", og_vector_get_f64(v, i)); return;
    case OG_T_BOOL: snprintf(buf, cap, "%s", og_vector_get_bool(v, i) ? "true" : "false"); return;
    default: snprintf(buf, cap, "<%s>", "value"); return;
    }
}

/* ---- staging ------------------------------------------------------------------------------- */

/* og_plan_stage_json indexes the values of a type's first STAGE_PROPS_MAX properties in one
 * pass over a record; any later property is looked up by name. */
#define STAGE_PROPS_MAX 64

static og_status grow_row_arrays(og_plan_table *pt)
{
    if (pt->nstaged < pt->lines_cap) return OG_OK;
    size_t ncap = pt->lines_cap ? pt->lines_cap * 2 : 64;
    if (pt->wide_lines) {
        uint64_t *w = realloc(pt->wide_lines, ncap * sizeof *w);
        if (!w) return og_err(OG_ERR_NOMEM, "out of memory");
        pt->wide_lines = w;
    }
    if (pt->lines) {
        uint32_t *l = realloc(pt->lines, ncap * sizeof *l);
        if (!l) return og_err(OG_ERR_NOMEM, "out of memory");
        pt->lines = l;
    }
    if (pt->latest) {
        uint32_t *l = realloc(pt->latest, ncap * sizeof *l);
        if (!l) return og_err(OG_ERR_NOMEM, "out of memory");
        pt->latest = l;
    }
    size_t oldb = (pt->lines_cap + 7) / 8, newb = (ncap + 7) / 8;
    uint8_t *s = realloc(pt->superseded, newb);
    if (s) pt->superseded = s;
    uint8_t *k = s ? realloc(pt->skipped, newb) : NULL;
    if (k) pt->skipped = k;
    if (!s || !k) return og_err(OG_ERR_NOMEM, "out of memory"); /* the old capacity: both still cover it */
    memset(s + oldb, 0, newb - oldb);
    memset(k + oldb, 0, newb - oldb);
    pt->lines_cap = ncap;
    return OG_OK;
}

/* Sets the latest row of the id first staged at `first` (og_plan_table.latest, made at the
 * first value that is not `first` itself). */
static og_status set_latest(og_plan_table *pt, size_t first, uint32_t row)
{
    if (!pt->latest) {
        if (row == first) return OG_OK;
        pt->latest = malloc(pt->lines_cap * sizeof *pt->latest);
        if (!pt->latest) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < pt->lines_cap; i++) pt->latest[i] = (uint32_t)i;
    }
    pt->latest[first] = row;
    return OG_OK;
}

uint64_t og_plan_line(const og_plan_table *pt, size_t row)
{
    return pt->wide_lines ? pt->wide_lines[row] : pt->line_base + (pt->lines ? pt->lines[row] : row);
}

/* Records staged row r's input line (its arrays grown already). */
static og_status set_line(og_plan_table *pt, size_t r, uint64_t line)
{
    if (r == 0) pt->line_base = line;
    if (!pt->wide_lines && !pt->lines) {
        if (line == pt->line_base + r) return OG_OK; /* on the line after the row before */
        pt->lines = malloc(pt->lines_cap * sizeof *pt->lines);
        if (!pt->lines) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < r; i++) pt->lines[i] = (uint32_t)i;
    }
    if (!pt->wide_lines && (line < pt->line_base || line - pt->line_base > UINT32_MAX)) {
        uint64_t *w = malloc(pt->lines_cap * sizeof *w);
        if (!w) return og_err(OG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < r; i++) w[i] = pt->line_base + pt->lines[i];
        pt->wide_lines = w;
        free(pt->lines);
        pt->lines = NULL;
    }
    if (pt->wide_lines) pt->wide_lines[r] = line;
    else pt->lines[r] = (uint32_t)(line - pt->line_base);
    return OG_OK;
}


void og_plan_supersede(og_plan_table *pt, uint32_t row)
{
    uint8_t bit = (uint8_t)(1u << (row & 7));
    pt->nsuperseded += !(pt->superseded[row >> 3] & bit);
    pt->superseded[row >> 3] |= bit;
}

const char *og_plan_staged_id(const og_plan_table *pt, uint32_t row, size_t *len)
{
    return (const char *)og_vector_get_bytes(&pt->cols[0], og_plan_i_col_row(pt, 0, row), len);
}

/* The first staged row whose id is still in memory: 0, or mem_base once flushes dropped the
 * generated ids before it (og_plan_flush). */
static size_t ids_in_memory_from(const og_plan_table *pt) { return pt->retain[0] ? 0 : pt->mem_base; }

og_status og_plan_index_ids(og_plan_table *pt)
{
    /* flushed generated ids are fresh ULIDs no given id can equal: they need no entry */
    if (pt->cols && pt->ids_indexed < ids_in_memory_from(pt)) pt->ids_indexed = ids_in_memory_from(pt);
    for (size_t r = pt->ids_indexed; r < pt->nstaged; r++) {
        size_t n;
        const uint8_t *id = og_vector_get_bytes(&pt->cols[0], og_plan_i_col_row(pt, 0, r), &n);
        OG_TRY(og_strmap_insert(&pt->staged_ids, id, n, (uint32_t)r, NULL, NULL));
        pt->ids_indexed = r + 1;
    }
    return OG_OK;
}

long og_plan_staged_find(const og_plan_table *pt, const char *id, size_t len)
{
    uint32_t first;
    if (og_strmap_get(&pt->staged_ids, id, len, &first)) {
        uint32_t row = og_plan_i_latest(pt, first);
        return og_plan_i_superseded(pt, row) ? -1 : (long)row;
    }
    /* Not indexed yet (a caller that skipped og_plan_index_ids): generated ids are unique, so
     * a row of that range is its own latest. */
    size_t from = pt->cols && pt->ids_indexed < ids_in_memory_from(pt) ? ids_in_memory_from(pt) : pt->ids_indexed;
    for (size_t r = from; r < pt->nstaged; r++) {
        size_t n;
        const uint8_t *s = og_vector_get_bytes(&pt->cols[0], og_plan_i_col_row(pt, 0, r), &n);
        if (n == len && !memcmp(s, id, len)) return og_plan_i_superseded(pt, r) ? -1 : (long)r;
    }
    return -1;
}

void og_plan_i_lookup_failed(og_plan *p, og_status st)
{
    int none = 0;
    if (__atomic_compare_exchange_n(&p->lookup_failed, &none, (int)st, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        snprintf(p->lookup_msg, sizeof p->lookup_msg, "%s", og_error_message());
}

og_status og_plan_lookup_status(const og_plan *p)
{
    int st = __atomic_load_n(&p->lookup_failed, __ATOMIC_ACQUIRE);
    return st ? og_err((og_status)st, "%s", p->lookup_msg) : OG_OK;
}

long og_plan_committed_find(og_plan *p, og_plan_table *pt, const char *id, size_t len)
{
    if (pt->overwrite) return -1;
    og_status st = og_plan_table_view(p, pt);
    uint32_t row = OG_TABLEVIEW_NO_ROW;
    if (st == OG_OK) st = og_tableview_lookup_id(pt->view, id, len, &row);
    if (st != OG_OK) {
        og_plan_i_lookup_failed(p, st);
        return -1;
    }
    if (row == OG_TABLEVIEW_NO_ROW) return -1;
    if (pt->removed && ((pt->removed[row >> 3] >> (row & 7)) & 1)) return -1;
    return (long)row;
}

og_status og_plan_remove_committed(og_plan *p, og_plan_table *pt, uint32_t row)
{
    OG_TRY(og_plan_table_view(p, pt));
    size_t n = og_tableview_rows(pt->view);
    if (row >= n) return og_err(OG_ERR_INTERNAL, "removing row %u of %zu", row, n);
    if (!pt->removed) {
        pt->removed = calloc((n + 7) / 8 ? (n + 7) / 8 : 1, 1);
        if (!pt->removed) return og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (!((pt->removed[row >> 3] >> (row & 7)) & 1)) {
        pt->removed[row >> 3] |= (uint8_t)(1u << (row & 7));
        pt->nremoved++;
    }
    pt->touched = 1;
    return OG_OK;
}

og_status og_plan_overwrite(og_plan *p, og_plan_table *pt)
{
    OG_TRY(og_plan_table_view(p, pt));
    if (pt->txn && !pt->txn_overwritten)
        return og_err(OG_ERR_INTERNAL, "%s: overwrite requested after rows were flushed", pt->t->name);
    pt->overwrite = 1;
    pt->touched = 1;
    return OG_OK;
}

static og_status check_value_constraints(og_plan *p, og_plan_table *pt, uint32_t srow, uint64_t line)
{
    char w[300], val[256];
    const og_cat_type *t = pt->t;
    for (size_t i = 0; i < t->nprops; i++) {
        const og_cat_prop *pr = &t->props[i];
        const og_vector *v = &pt->cols[og_plan_prop_col(pt, i)];
        size_t row = og_plan_i_col_row(pt, og_plan_prop_col(pt, i), srow);
        if (og_vector_is_null(v, row) || !pr->is_enum) continue;
        size_t n;
        const uint8_t *s = og_vector_get_bytes(v, row, &n);
        if (!og_cat_prop_enum_has(pr, (const char *)s, n)) {
            og_buf allowed = OG_BUF_INIT;
            for (size_t k = 0; k < pr->n_enum; k++) og_buf_printf(&allowed, "%s%s", k ? ", " : "", pr->enum_values[k]);
            og_status st = og_err(OG_ERR_CONSTRAINT, "%sinvalid enum value '%.*s' for %s.%s (expected: %s)",
                                  og_plan_i_where(p, line, w, sizeof w), (int)n, (const char *)s, t->name, pr->name,
                                  og_buf_cstr(&allowed));
            og_buf_free(&allowed);
            return st;
        }
    }
    for (size_t c = 0; c < t->ncons; c++) {
        const og_cat_constraint *k = &t->cons[c];
        if (k->kind != OG_CONS_RANGE && k->kind != OG_CONS_CHECK) continue;
        if (k->ncols != 1 || k->col_props[0] < 0) continue;
        size_t pi = (size_t)k->col_props[0];
        const og_vector *v = &pt->cols[og_plan_prop_col(pt, pi)];
        size_t row = og_plan_i_col_row(pt, og_plan_prop_col(pt, pi), srow);
        if (og_vector_is_null(v, row)) continue;
        og_plan_i_render_value(v, row, val, sizeof val);
        if (k->kind == OG_CONS_CHECK) {
            size_t n;
            const uint8_t *s = og_vector_get_bytes(v, row, &n);
            int m = og_check_match(k, (const char *)s, n);
            if (m != 1)
                return og_err(OG_ERR_CONSTRAINT, "%s@check violation on %s.%s: value '%s' does not match \"%s\"",
                              og_plan_i_where(p, line, w, sizeof w), t->name, t->props[pi].name, val, k->pattern);
            continue;
        }
        /* long double holds every 64-bit integer exactly (x86-64: 64-bit mantissa), so an
         * integer value against an integer bound is exact past 2^53 */
        long double x;
        switch (v->type.id) {
        case OG_T_I32: case OG_T_I64: x = (long double)og_vector_get_i64(v, row); break;
        case OG_T_U32: case OG_T_U64: x = (long double)og_vector_get_u64(v, row); break;
        default: x = og_vector_get_f64(v, row); break;
        }
        if (isnan(x))
            return og_err(OG_ERR_CONSTRAINT, "%s@range violation on %s.%s: NaN is not in range", og_plan_i_where(p, line, w, sizeof w),
                          t->name, t->props[pi].name);
        long double lo = k->min.is_float ? (long double)k->min.f : (long double)k->min.i;
        long double hi = k->max.is_float ? (long double)k->max.f : (long double)k->max.i;
        if (k->min.present && x < lo)
            return og_err(OG_ERR_CONSTRAINT, "%s@range violation on %s.%s: value %s < min %s", og_plan_i_where(p, line, w, sizeof w),
                          t->name, t->props[pi].name, val, k->min.text);
        if (k->max.present && x > hi)
            return og_err(OG_ERR_CONSTRAINT, "%s@range violation on %s.%s: value %s > max %s", og_plan_i_where(p, line, w, sizeof w),
                          t->name, t->props[pi].name, val, k->max.text);
    }
    return OG_OK;
}

/* The key value of one cell (a key property: scalar, non-null). */
static og_status key_value_at(const og_vector *v, size_t row, og_key_value *kv)
{
    memset(kv, 0, sizeof *kv);
    switch (v->type.id) {
    case OG_T_BOOL: kv->b = og_vector_get_bool(v, row); break;
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: kv->i = og_vector_get_i64(v, row); break;
    case OG_T_U32: case OG_T_U64: kv->u = og_vector_get_u64(v, row); break;
    case OG_T_F32: case OG_T_F64: kv->f = og_vector_get_f64(v, row); break;
    case OG_T_STRING: {
        size_t n;
        kv->s = (const char *)og_vector_get_bytes(v, row, &n);
        kv->len = n;
        break;
    }
    default: return og_err(OG_ERR_INTERNAL, "key of an unsupported type");
    }
    return OG_OK;
}

static int cmp_prop_by_id(const void *a, const void *b, void *ud)
{
    const og_cat_type *t = ud;
    uint64_t x = t->props[*(const size_t *)a].id, y = t->props[*(const size_t *)b].id;
    return (x > y) - (x < y);
}

/* The id of a keyed edge (schema `@key(@src, @dst[, p...])`): the compact JSON array of its
 * members' canonical strings in the catalog's key order — the source node id, the
 * destination node id, then the key properties by stable property id — e.g.
 * ["alice","bob"] (the reference's encoding of a composite id). */
static og_status edge_key_id(const og_plan_table *pt, const og_cat_constraint *k, uint32_t srow, const char *from,
                             const char *to, og_buf *out)
{
    const og_cat_type *t = pt->t;
    size_t props[64], np = 0;
    for (size_t j = 0; j < k->ncols && np < 64; j++)
        if (k->col_props[j] >= 0) props[np++] = (size_t)k->col_props[j];
    qsort_r(props, np, sizeof *props, cmp_prop_by_id, (void *)t);
    json_t *a = json_array();
    og_status st = a ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK && (json_array_append_new(a, json_string(from)) || json_array_append_new(a, json_string(to))))
        st = og_err(OG_ERR_NOMEM, "out of memory");
    og_buf one = OG_BUF_INIT;
    for (size_t i = 0; i < np && st == OG_OK; i++) {
        size_t c = og_plan_prop_col(pt, props[i]);
        const og_vector *v = &pt->cols[c];
        size_t row = og_plan_i_col_row(pt, c, srow);
        if (og_vector_is_null(v, row)) {
            st = og_err(OG_ERR_CONSTRAINT, "%s: key property %s is null", t->name, t->props[props[i]].name);
            break;
        }
        og_key_value kv;
        og_buf_reset(&one);
        st = key_value_at(v, row, &kv);
        if (st == OG_OK) st = og_key_render_value(&one, v->type, &kv);
        if (st == OG_OK && json_array_append_new(a, json_stringn((const char *)one.data, one.len)))
            st = og_err(OG_ERR_NOMEM, "out of memory");
    }
    og_buf_free(&one);
    char *txt = st == OG_OK ? json_dumps(a, JSON_COMPACT) : NULL;
    if (st == OG_OK && !txt) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) st = og_buf_append_str(out, txt);
    free(txt);
    json_decref(a);
    return st;
}

/* The canonical key id of staged row `row` of a keyed node type. */
static og_status key_id_of_row(const og_plan_table *pt, uint32_t srow, og_buf *out)
{
    const og_cat_type *t = pt->t;
    og_key_value vals[16];
    if (t->nkey > 16) return og_err(OG_ERR_UNSUPPORTED, "keys of more than 16 properties");
    for (size_t k = 0; k < t->nkey; k++) {
        const og_vector *v = &pt->cols[og_plan_prop_col(pt, t->key_props[k])];
        size_t row = og_plan_i_col_row(pt, og_plan_prop_col(pt, t->key_props[k]), srow);
        memset(&vals[k], 0, sizeof vals[k]);
        if (og_vector_is_null(v, row))
            return og_err(OG_ERR_CONSTRAINT, "%s: key property %s is null", t->name, t->props[t->key_props[k]].name);
        switch (v->type.id) {
        case OG_T_BOOL: vals[k].b = og_vector_get_bool(v, row); break;
        case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: vals[k].i = og_vector_get_i64(v, row); break;
        case OG_T_U32: case OG_T_U64: vals[k].u = og_vector_get_u64(v, row); break;
        case OG_T_F32: case OG_T_F64: vals[k].f = og_vector_get_f64(v, row); break;
        case OG_T_STRING: {
            size_t n;
            vals[k].s = (const char *)og_vector_get_bytes(v, row, &n);
            vals[k].len = n;
            break;
        }
        default: return og_err(OG_ERR_INTERNAL, "key of an unsupported type");
        }
    }
    return og_key_id(out, t, vals, t->nkey);
}

/* Finishes a staged row whose property columns are filled: the id column (and src/dst for
 * edges) gets `id`, bookkeeping is updated.  *prev receives the earlier current row with the
 * same id, or -1. */
static og_status finish_row(og_plan *p, og_plan_table *pt, const char *id, size_t idlen, int generated,
                            const char *from, const char *to, uint64_t line, uint32_t *row, long *prev)
{
    /* a node staged while the batch in flight reads this type's ids: that batch first */
    if (!generated && job_reads_ids(p, pt)) OG_TRY(job_join(p));
    OG_TRY(grow_row_arrays(pt));
    if (!generated) OG_TRY(og_plan_index_ids(pt));
    uint32_t r = (uint32_t)pt->nstaged;
    OG_TRY(og_vector_append_bytes(&pt->cols[0], id, idlen));
    if (pt->is_edge) {
        OG_TRY(og_vector_append_bytes(&pt->cols[1], from, strlen(from)));
        OG_TRY(og_vector_append_bytes(&pt->cols[2], to, strlen(to)));
    }
    OG_TRY(set_line(pt, r, line));
    if (pt->latest) pt->latest[r] = r;
    *prev = -1;
    if (!generated) {
        uint32_t first;
        int inserted;
        OG_TRY(og_strmap_insert(&pt->staged_ids, id, idlen, r, &first, &inserted));
        uint32_t cur = og_plan_i_latest(pt, first);
        if (!inserted && !og_plan_i_superseded(pt, cur)) *prev = (long)cur;
        OG_TRY(set_latest(pt, first, r));
        pt->ids_indexed = r + 1;
    }
    pt->nstaged++;
    pt->touched = 1;
    pt->last_generated = generated;
    *row = r;
    return check_value_constraints(p, pt, r, line);
}

/* The next generated id (a fresh ULID), valid until the next call. */
static og_status next_ulid(og_plan *p, const char **out)
{
    if (p->ulid_pos == p->nulids) {
        size_t n = sizeof p->ulids / sizeof p->ulids[0];
        OG_TRY(og_ulid_new_n(p->ulids, n));
        p->nulids = n;
        p->ulid_pos = 0;
    }
    *out = p->ulids[p->ulid_pos++];
    return OG_OK;
}

og_status og_plan_stage_json(og_plan *p, og_plan_table *pt, const og_jtok *data, const char *id, const char *from,
                             const char *to, uint64_t line, uint32_t *row, long *prev)
{
    char w[300];
    const og_cat_type *t = pt->t;
    OG_TRY(staging_cols_init(p, pt));
    /* one pass over the members: each is a property or, when the type has no property `id`,
     * data.id as the entity's id (the older spelling of the top-level "id") */
    const og_jtok *byprop[STAGE_PROPS_MAX] = {0};
    const char *given_id = NULL;
    const og_jtok *k = data + 1;
    for (uint32_t m = 0; m < data->len; m++, k = og_jtok_next(k + 1)) {
        const og_jtok *val = k + 1;
        const char *key = k->v.s;
        if (!strcmp(key, "id") && !og_cat_type_prop(t, "id", NULL)) {
            if (val->kind != OG_J_STRING)
                return og_err(OG_ERR_INVALID, "%s%s: \"id\" must be a string", og_plan_i_where(p, line, w, sizeof w), t->name);
            if (id)
                return og_err(OG_ERR_INVALID, "%s%s: the id is given twice, as \"id\" and as data.id; keep the top-level one",
                              og_plan_i_where(p, line, w, sizeof w), t->name);
            given_id = val->v.s;
            continue;
        }
        if (key[0] == '_')
            return og_err(OG_ERR_INVALID, "%s%s: \"%s\" is a reserved field", og_plan_i_where(p, line, w, sizeof w), t->name, key);
        size_t pi;
        if (!og_cat_type_prop(t, key, &pi)) {
            if (pt->is_edge && (!strcmp(key, "src") || !strcmp(key, "dst")))
                return og_err(OG_ERR_INVALID, "%s%s has no property \"%s\"; an edge's endpoints are the line's \"from\"/\"to\"",
                              og_plan_i_where(p, line, w, sizeof w), t->name, key);
            char hint[96];
            return og_err(OG_ERR_INVALID, "%s%s has no property \"%s\"%s", og_plan_i_where(p, line, w, sizeof w), t->name, key,
                          og_suggest_hint(og_suggest_prop(t, key), hint, sizeof hint));
        }
        if (pi < STAGE_PROPS_MAX) byprop[pi] = val;
    }
    if (id) given_id = id;
    /* Messages name "Type.prop" (made once per type); the input position is added only when a
     * value fails, so a valid row formats nothing. */
    for (size_t i = 0; i < t->nprops; i++) {
        const og_cat_prop *pr = &t->props[i];
        const og_jtok *v = i < STAGE_PROPS_MAX ? byprop[i] : og_jobj_get(data, pr->name);
        if (!v && !pr->nullable)
            return og_err(OG_ERR_CONSTRAINT, "%s%s is required but missing", og_plan_i_where(p, line, w, sizeof w), pt->labels[i]);
        og_status vs = og_jsonval_append_tok(&pt->cols[og_plan_prop_col(pt, i)], v, pr->nullable, OG_JSONVAL_LOAD, pt->labels[i]);
        if (vs != OG_OK) {
            og_plan_i_where(p, line, w, sizeof w);
            size_t n = strlen(w);
            if (n >= 2) { /* "file:line: " -> "file:line", og_err_wrap adds ": " */
                w[n - 2] = '\0';
                return og_err_wrap(vs, "%s", w);
            }
            return vs;
        }
    }
    og_buf idb = OG_BUF_INIT;
    og_status st = OG_OK;
    int generated = 0;
    uint32_t r = (uint32_t)pt->nstaged;
    const og_cat_constraint *ek = pt->is_edge ? og_cat_type_key(t) : NULL;
    if (!pt->is_edge && t->nkey) {
        st = key_id_of_row(pt, r, &idb);
        if (st == OG_OK && given_id && strcmp(given_id, og_buf_cstr(&idb)) != 0)
            st = og_err(OG_ERR_INVALID, "%s%s: data.id \"%s\" is not the key's canonical id \"%s\"",
                        og_plan_i_where(p, line, w, sizeof w), t->name, given_id, og_buf_cstr(&idb));
    } else if (ek) {
        st = edge_key_id(pt, ek, r, from, to, &idb);
        if (st == OG_OK && given_id && strcmp(given_id, og_buf_cstr(&idb)) != 0)
            st = og_err(OG_ERR_INVALID, "%s%s: id \"%s\" is not the keyed edge's id %s (omit it: it is derived from @key)",
                        og_plan_i_where(p, line, w, sizeof w), t->name, given_id, og_buf_cstr(&idb));
    } else if (given_id) {
        st = og_buf_append_str(&idb, given_id);
    } else {
        const char *ulid;
        st = next_ulid(p, &ulid);
        *prev = -1;
        /* the common edge: no id buffer at all */
        return st == OG_OK ? finish_row(p, pt, ulid, OG_ULID_LEN, 1, from, to, line, row, prev) : st;
    }
    *prev = -1;
    if (st == OG_OK) st = finish_row(p, pt, og_buf_cstr(&idb), idb.len, generated, from, to, line, row, prev);
    og_buf_free(&idb);
    return st;
}

int og_plan_edges_bulk_ok(const og_plan_table *pt)
{
    return pt->is_edge && pt->cols && pt->t->nprops == 0 && !og_cat_type_key(pt->t);
}

/* For og_plan_stage_edges' running count of og_plan_table_mem_bytes: which of the id, src
 * and dst columns are flushable, and whether the count can run (none of them has a validity
 * bitmap, whose bytes grow every 8 rows; never so for ids and endpoints, which are not null). */
static int bulk_flushable(const og_plan_table *pt, int fl[3])
{
    for (int c = 0; c < 3; c++) {
        fl[c] = !pt->retain[c];
        if (fl[c] && pt->cols[c].validity) return 0;
    }
    return 1;
}

og_status og_plan_stage_edges(og_plan *p, og_plan_table *pt, size_t n, const char *const *from, const char *const *to,
                              const size_t *len, const uint64_t *line)
{
    if (!og_plan_edges_bulk_ok(pt)) return og_err(OG_ERR_INTERNAL, "%s: edges staged in bulk need no properties and no key", pt->t->name);
    /* The flush check of og_plan_maybe_flush after every row, with the batch's flushable bytes
     * counted as the rows are appended rather than recounted over the columns each time: a
     * string row adds its bytes and one 8-byte offset (vector_bytes). */
    int fl[3];
    int counted = bulk_flushable(pt, fl);
    size_t bytes = p->flush_bytes && counted ? og_plan_table_mem_bytes(pt) : 0;
    for (size_t i = 0; i < n; i++) {
        /* finish_row's work for a generated id, without a property or a constraint to check */
        const char *id;
        size_t lf = len[2 * i], lt = len[2 * i + 1];
        OG_TRY(next_ulid(p, &id));
        OG_TRY(grow_row_arrays(pt));
        uint32_t r = (uint32_t)pt->nstaged;
        OG_TRY(og_vector_append_bytes(&pt->cols[0], id, OG_ULID_LEN));
        OG_TRY(og_vector_append_bytes(&pt->cols[1], from[i], lf));
        OG_TRY(og_vector_append_bytes(&pt->cols[2], to[i], lt));
        OG_TRY(set_line(pt, r, line[i]));
        if (pt->latest) pt->latest[r] = r;
        pt->nstaged++;
        pt->touched = 1;
        pt->last_generated = 1;
        if (!counted) {
            OG_TRY(og_plan_maybe_flush(p, pt));
            continue;
        }
        bytes += (fl[0] ? 8 + OG_ULID_LEN : 0) + (fl[1] ? 8 + lf : 0) + (fl[2] ? 8 + lt : 0);
        size_t rows = pt->nstaged - pt->mem_base;
        if ((p->flush_rows && rows >= og_plan_flush_rows(p, pt)) || (p->flush_bytes && bytes >= p->flush_bytes)) {
            OG_TRY(og_plan_flush(p, pt));
            counted = bulk_flushable(pt, fl); /* the flush may have made the id column flushable */
            bytes = p->flush_bytes && counted ? og_plan_table_mem_bytes(pt) : 0;
        }
    }
    return OG_OK;
}

og_status og_plan_stage_vectors(og_plan *p, og_plan_table *pt, const og_vector *src, uint32_t *row, long *prev)
{
    OG_TRY(staging_cols_init(p, pt));
    size_t base = pt->is_edge ? 3 : 1;
    for (size_t c = base; c < pt->ncols; c++) OG_TRY(og_vector_append_from(&pt->cols[c], &src[c], 0));
    og_buf idb = OG_BUF_INIT;
    og_status st = OG_OK;
    int generated = 0;
    uint32_t r = (uint32_t)pt->nstaged;
    char from[1024] = "", to[1024] = "";
    if (pt->is_edge) {
        size_t n;
        const uint8_t *s = og_vector_get_bytes(&src[1], 0, &n);
        snprintf(from, sizeof from, "%.*s", (int)n, (const char *)s);
        s = og_vector_get_bytes(&src[2], 0, &n);
        snprintf(to, sizeof to, "%.*s", (int)n, (const char *)s);
    }
    const og_cat_constraint *ek = pt->is_edge ? og_cat_type_key(pt->t) : NULL;
    if (src[0].len) {
        size_t n;
        const uint8_t *id = og_vector_get_bytes(&src[0], 0, &n);
        st = og_buf_append(&idb, id, n);
    } else if (!pt->is_edge && pt->t->nkey) {
        st = key_id_of_row(pt, r, &idb);
    } else if (ek) {
        st = edge_key_id(pt, ek, r, from, to, &idb);
    } else {
        char ulid[OG_ULID_LEN + 1];
        st = og_ulid_new(ulid);
        if (st == OG_OK) st = og_buf_append_str(&idb, ulid);
        generated = 1;
    }
    *prev = -1;
    if (st == OG_OK) st = finish_row(p, pt, og_buf_cstr(&idb), idb.len, generated, from, to, 0, row, prev);
    og_buf_free(&idb);
    return st;
}

/* ---- writing ------------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Stages the committed removals of pt as per-fragment deletes in x. */
static og_status stage_deletes(og_plan_table *pt, og_table_txn *x)
{
    size_t n = og_tableview_rows(pt->view);
    uint64_t *del = malloc((pt->nremoved ? pt->nremoved : 1) * sizeof *del);
    uint32_t *offs = malloc((pt->nremoved ? pt->nremoved : 1) * sizeof *offs);
    if (!del || !offs) {
        free(del), free(offs);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t b = 0; b < (n + 7) / 8 && k < pt->nremoved; b++) { /* zero bytes skipped */
        if (!pt->removed[b]) continue;
        for (size_t r = b * 8; r < n && r < b * 8 + 8; r++)
            if ((pt->removed[r >> 3] >> (r & 7)) & 1) offs[k++] = (uint32_t)r;
    }
    /* the removed rows' addresses (a few: without listing every row of the table) */
    og_status st = og_tableview_row_addrs(pt->view, offs, k, del);
    if (st != OG_OK) {
        free(del), free(offs);
        return st;
    }
    qsort(del, k, sizeof *del, cmp_u64);
    for (size_t i = 0; i < k && st == OG_OK;) {
        uint32_t frag = OG_ROW_ADDR_FRAG(del[i]);
        size_t m = 0;
        while (i < k && OG_ROW_ADDR_FRAG(del[i]) == frag) offs[m++] = OG_ROW_ADDR_OFFSET(del[i++]);
        st = og_table_txn_delete(x, frag, offs, m);
    }
    free(del);
    free(offs);
    return st;
}

/* Builds the columns of staged rows rows[0..n) (ascending, not superseded, >= mem_base for
 * flushable columns) in the manifest's top-level field order. */
/* A borrowed view of rows [a, a + n) of v, for a null-free string/blob or fixed-width column;
 * 0 when v has nulls or another type (the caller gathers a copy then).  The writer reads
 * strings through absolute offsets, so the view's offsets need not start at 0. */
static int borrow_slice(const og_vector *v, size_t a, size_t n, og_vector *out)
{
    if (v->null_count || v->type.id == OG_T_LIST || v->type.id == OG_T_BOOL) return 0;
    size_t width = og_type_width(v->type);
    int binary = v->type.id == OG_T_STRING || v->type.id == OG_T_BLOB;
    if (!binary && !width) return 0;
    memset(out, 0, sizeof *out);
    out->type = v->type;
    out->len = n;
    if (binary) {
        out->values = v->values;
        out->offsets = v->offsets + a;
    } else {
        out->values = (uint8_t *)v->values + a * width;
    }
    return 1; /* flags without OG_VEC_OWNED: og_vector_free releases nothing */
}

/* The batch of staged rows rows[0..n) (in-memory ones, ascending) as top-level columns in the
 * txn's schema order.  own = 0: in-memory columns are borrowed where they can be (the batch is
 * written before anything is staged again); own = 1: the batch owns every column — the
 * flushable ones are moved out of the plan (left empty), the retained ones copied — so a
 * worker thread can write it while more rows are staged (og_plan_flush). */
static og_status build_batch(og_plan_table *pt, og_table_txn *x, const uint32_t *rows, size_t n, int own,
                             og_vector **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    const og_manifest *m = og_table_txn_manifest(x);
    size_t ntop = og_lance_schema_num_top(&m->schema);
    og_vector *batch = calloc(ntop ? ntop : 1, sizeof *batch);
    uint32_t *local = malloc((n ? n : 1) * sizeof *local);
    og_status st = batch && local ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n && st == OG_OK; i++) local[i] = (uint32_t)(rows[i] - pt->mem_base);
    /* rows are exactly the in-memory rows [mem_base, nstaged) */
    int contiguous = n == pt->nstaged - pt->mem_base && (!n || rows[0] == pt->mem_base);
    for (size_t f = 0; f < ntop && st == OG_OK; f++) {
        const og_lance_field *fld = &m->schema.fields[og_lance_schema_top(&m->schema, f)];
        long ci = -1;
        if (fld->id == OG_FIELD_ID) ci = 0;
        else if (pt->is_edge && fld->id == OG_FIELD_SRC) ci = 1;
        else if (pt->is_edge && fld->id == OG_FIELD_DST) ci = 2;
        else
            for (size_t i = 0; i < pt->t->nprops; i++) {
                int32_t fid;
                if (og_layout_field_id(pt->t->props[i].id, &fid) == OG_OK && fid == fld->id) ci = (long)og_plan_prop_col(pt, i);
            }
        if (ci >= 0 && !pt->retain[ci] && contiguous && pt->cols[ci].type.id != OG_T_LIST) {
            /* the whole in-memory column, borrowed (no copy of the batch: og_vector_free of a
             * borrowed, child-less vector releases nothing) — or taken */
            batch[f] = pt->cols[ci];
            if (own) {
                /* the next batch will be about this size: room for it now, not ~20 doublings
                 * copied by realloc (a few % of the loading thread at 1M / 5M) */
                st = og_vector_init(&pt->cols[ci], batch[f].type);
                size_t vb = batch[f].offsets ? (size_t)(batch[f].offsets[batch[f].len] - batch[f].offsets[0]) : 0;
                if (st == OG_OK) st = og_vector_reserve(&pt->cols[ci], batch[f].len, vb);
            } else
                batch[f].flags &= ~OG_VEC_OWNED;
        } else if (!own && ci >= 0 && pt->retain[ci] && contiguous &&
                   borrow_slice(&pt->cols[ci], pt->mem_base, n, &batch[f])) {
            /* a retained column's rows [mem_base, nstaged), borrowed in place (no gather) */
        } else if (ci >= 0) {
            st = og_vector_gather(&batch[f], &pt->cols[ci], pt->retain[ci] ? rows : local, n);
        } else { /* a stored field the catalog no longer has (soft-dropped): nulls */
            og_type ft;
            st = og_lance_schema_field_type(&m->schema, (size_t)og_lance_schema_top(&m->schema, f), &ft);
            if (st == OG_OK) st = og_vector_init(&batch[f], ft);
            for (size_t r = 0; r < n && st == OG_OK; r++) st = og_vector_append_null(&batch[f]);
        }
    }
    free(local);
    if (st != OG_OK) {
        for (size_t f = 0; batch && f < ntop; f++) og_vector_free(&batch[f]);
        free(batch);
        return st;
    }
    *out = batch;
    *nout = ntop;
    return OG_OK;
}

/* The txn of pt, begun on the base version at first use; an overwrite is staged at once. */
static og_status table_txn(og_plan *p, og_plan_table *pt, og_table_txn **out)
{
    if (!pt->txn) {
        OG_TRY(og_plan_table_view(p, pt));
        OG_TRY(og_table_txn_begin(&pt->txn, og_tableview_table(pt->view), og_tableview_version(pt->view), NULL));
    }
    if (pt->overwrite && !pt->txn_overwritten) {
        OG_TRY(og_table_txn_overwrite(pt->txn));
        pt->txn_overwritten = 1;
    }
    *out = pt->txn;
    return OG_OK;
}

/* Appends staged rows [mem_base, nstaged) that are not superseded as one fragment
 * (*fragment_id = UINT64_MAX when there were none); *kept receives their number. */
static og_status append_in_memory(og_plan *p, og_plan_table *pt, size_t *kept, uint64_t *fragment_id)
{
    *kept = 0;
    *fragment_id = UINT64_MAX;
    size_t span = pt->nstaged - pt->mem_base;
    if (!span) return OG_OK;
    uint32_t *idx = malloc(span * sizeof *idx);
    if (!idx) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t r = pt->mem_base; r < pt->nstaged; r++)
        if (!og_plan_i_superseded(pt, r)) idx[(*kept)++] = (uint32_t)r;
    og_status st = OG_OK;
    if (*kept) {
        og_table_txn *x = NULL;
        og_vector *batch = NULL;
        size_t ntop = 0;
        st = table_txn(p, pt, &x);
        if (st == OG_OK) st = build_batch(pt, x, idx, *kept, 0, &batch, &ntop);
        if (st == OG_OK) st = og_table_txn_append(x, batch, ntop, fragment_id);
        /* not for a loaded edge type whose ids were all generated (no one knows them to look
         * one up): at 5M edges those maps were ~250 MB of the load's cache and 5 % of its CPU */
        int generated_edges = pt->is_edge && p->flush_rows && pt->ids_indexed == 0;
        if (st == OG_OK && *fragment_id != UINT64_MAX && !generated_edges)
            og_tableview_seed_keymap(pt->view, og_table_txn_manifest(x), *fragment_id, batch, ntop);
        for (size_t f = 0; batch && f < ntop; f++) og_vector_free(&batch[f]);
        free(batch);
    }
    free(idx);
    return st;
}

/* Bytes a vector's buffers hold for its rows (an estimate good enough for a budget). */
static size_t vector_bytes(const og_vector *v)
{
    size_t b = v->validity ? (v->len + 7) / 8 : 0;
    switch (v->type.id) {
    case OG_T_BOOL: return b + (v->len + 7) / 8;
    case OG_T_STRING: case OG_T_BLOB:
        return b + (v->len + 1) * sizeof(int64_t) + (v->offsets ? (size_t)(v->offsets[v->len] - v->offsets[0]) : 0);
    case OG_T_LIST: return b + (v->len + 1) * sizeof(int64_t) + (v->child ? vector_bytes(v->child) : 0);
    default: return b + v->len * og_type_width(v->type);
    }
}

size_t og_plan_table_mem_bytes(const og_plan_table *pt)
{
    size_t b = 0;
    for (size_t c = 0; pt->cols && c < pt->ncols; c++)
        if (!pt->retain[c]) b += vector_bytes(&pt->cols[c]);
    return b;
}

/* Everything the plan holds per staged row: every staged column (retained or not), the id
 * map, input lines and bitmaps — what a load's memory budget counts (util/budget.h). */
static size_t table_bytes(const og_plan_table *pt)
{
    size_t b = 0;
    for (size_t c = 0; pt->cols && c < pt->ncols; c++) b += vector_bytes(&pt->cols[c]);
    b += og_strmap_bytes(&pt->staged_ids);
    if (pt->lines) b += pt->lines_cap * sizeof *pt->lines;
    if (pt->latest) b += pt->lines_cap * sizeof *pt->latest;
    b += pt->ends_cap * 2 * sizeof(uint32_t) + vector_bytes(&pt->unres[0]) + vector_bytes(&pt->unres[1]);
    if (pt->wide_lines) b += pt->lines_cap * sizeof *pt->wide_lines;
    b += 3 * ((pt->nstaged + 7) / 8); /* superseded, skipped, removed-ish bitmaps */
    return b;
}

uint64_t og_plan_mem_bytes(const og_plan *p)
{
    uint64_t b = 0;
    for (size_t i = 0; p->nodes && i < p->cat->nnodes; i++) b += table_bytes(&p->nodes[i]);
    for (size_t i = 0; p->edges && i < p->cat->nedges; i++) b += table_bytes(&p->edges[i]);
    return b;
}

/* One flushed batch being written on a worker thread while the loading thread stages more
 * rows (at most one at a time per plan: a second flush, og_plan_write and og_plan_free wait
 * for it).  The batch owns its columns (build_batch own = 1); the txn is the table's, which
 * nothing else touches until the job is joined.  At 1M nodes / 5M edges writing the 93 batches
 * (encoding, the data file's put and fsync) was ~18 % of the loading thread. */
typedef struct og_plan_job {
    og_plan_table *pt;
    og_table_txn *x;
    og_store *store;    /* the table's */
    og_vector *batch;
    size_t ntop;
    size_t batch_index; /* its og_plan_batch, whose fragment_id the join fills in */
    uint64_t fragment_id;
    og_status st;
    char msg[1024];
    og_store_journal journal; /* what it wrote, adopted by the loading thread's at the join
                               * (a failed load deletes it: docs/maintenance.md "Failed writes") */
    pthread_t th;
    int threaded;
    /* Compact endpoints resolved here instead of on the loading thread (og_plan_flush): side k's
     * strings are batch column ends_field[k]; their answers go to ends_out[k] (the table's
     * ends, sized before the start), the ids not staged to unres[k], numbered from
     * ends_base[k] (the table's unres length then) and appended to it at the join.  Meanwhile
     * ends_node[k]'s staged_ids is read here: the loading thread joins the job before it
     * writes that map (finish_row), so it is read-only until then. */
    int resolve;
    const og_plan_table *ends_node[2];
    uint32_t *ends_out[2];
    size_t ends_field[2], ends_base[2];
    og_vector unres[2];
    /* A node batch's key map and text indexes, handed to the plan's batch_index builder once
     * its data file is written (docs/load.md "Indexes of flushed batches"): the batch columns
     * side_top[0] (the id; SIZE_MAX: no key map) and side_top[1..] (indexed texts, field
     * side_fid[i]). */
    og_batch_index *side;
    size_t nside, side_top[1 + OG_BATCH_INDEX_MAX_TEXTS];
    int32_t side_fid[1 + OG_BATCH_INDEX_MAX_TEXTS];
} og_plan_job;

/* Looks up the endpoints of n staged edges of type `type` in node's staged_ids — side
 * strings col rows [o, o + n) — into out: the id's first staged row, or, for an id not staged
 * yet, OG_PLAN_END_UNRESOLVED | (base + its index in unres), its string appended to unres. */
static og_status resolve_ends(const og_plan_table *node, const og_vector *col, size_t o, size_t n, uint32_t *out,
                              og_vector *unres, size_t base, const char *type)
{
    og_strmap_get_many(&node->staged_ids, col->values, col->offsets + o, n, OG_PLAN_NOT_STAGED, out);
    for (size_t i = 0; i < n; i++) {
        if (out[i] != OG_PLAN_NOT_STAGED && !(out[i] & OG_PLAN_END_UNRESOLVED)) continue;
        if (base + unres->len >= OG_PLAN_END_UNRESOLVED) return og_err(OG_ERR_LIMIT, "%s: too many endpoints not staged yet", type);
        size_t len;
        const uint8_t *id = og_vector_get_bytes(col, o + i, &len);
        out[i] = OG_PLAN_END_UNRESOLVED | (uint32_t)(base + unres->len);
        OG_TRY(og_vector_append_bytes(unres, id, len));
    }
    return OG_OK;
}

/* The job's endpoint lookups (before its write: a failure fails the batch). */
static og_status job_resolve(og_plan_job *j)
{
    if (og_fault_error("load.resolve_ends")) return og_err(OG_ERR_IO, "injected failure resolving the endpoints of a batch");
    for (int k = 0; k < 2; k++) {
        const og_vector *col = &j->batch[j->ends_field[k]];
        OG_TRY(resolve_ends(j->ends_node[k], col, 0, col->len, j->ends_out[k], &j->unres[k], j->ends_base[k], j->pt->t->name));
    }
    return OG_OK;
}

/* Hands the written batch's id and indexed text columns to the builder beside the load
 * (best effort: a column it cannot take stays with the batch, a key it cannot name is left to
 * the build after the publish). */
static void job_side(og_plan_job *j)
{
    const og_manifest *m = og_table_txn_manifest(j->x);
    long fi = og_manifest_find_fragment(m, j->fragment_id);
    if (fi < 0) return;
    const og_fragment *f = &m->fragments[fi];
    const char *dir = og_table_dir(og_tableview_table(j->pt->view));
    og_batch_index_task t;
    memset(&t, 0, sizeof t);
    t.store = j->store;
    for (size_t i = 0; i < j->nside; i++) {
        og_vector *v = &j->batch[j->side_top[i]];
        if (j->side_top[i] == SIZE_MAX || !(v->flags & OG_VEC_OWNED) || v->type.id != OG_T_STRING) continue;
        if (i == 0) {
            if (og_keymap_store_key(t.keymap_key, sizeof t.keymap_key, dir, f, j->side_fid[0]) != OG_OK) continue;
            t.ids = *v;
        } else {
            if (og_index_file_key(t.fts_keys[t.ntexts], sizeof t.fts_keys[0], dir, f, j->side_fid[i], &og_index_def_fts) != OG_OK)
                continue;
            t.texts[t.ntexts++] = *v;
        }
        memset(v, 0, sizeof *v); /* moved: og_vector_free of the batch skips it */
    }
    og_error_clear();
    if (t.keymap_key[0] || t.ntexts) og_batch_index_add(j->side, &t);
}

static void *job_main(void *arg)
{
    og_plan_job *j = arg;
    if (j->threaded) og_store_journal_begin(&j->journal, j->store, NULL);
    j->st = j->resolve ? job_resolve(j) : OG_OK;
    if (j->st == OG_OK) j->st = og_table_txn_append(j->x, j->batch, j->ntop, &j->fragment_id);
    if (j->st == OG_OK && j->side) job_side(j);
    if (j->threaded) og_store_journal_end(&j->journal);
    if (j->st != OG_OK)
        snprintf(j->msg, sizeof j->msg, "%s", og_error_message());
    og_error_clear();
    return NULL;
}

/* Waits for the batch in flight, if any; its write error becomes the caller's. */
static og_status job_join(og_plan *p)
{
    og_plan_job *j = p->job;
    if (!j) return OG_OK;
    p->job = NULL;
    if (j->threaded) {
        pthread_join(j->th, NULL);
        og_store_journal_adopt(&j->journal);
    }
    for (size_t f = 0; f < j->ntop; f++) og_vector_free(&j->batch[f]);
    free(j->batch);
    og_status st = j->st;
    if (st == OG_OK)
        j->pt->batches[j->batch_index].fragment_id = j->fragment_id;
    else
        st = og_err(st, "writing %s: %s", j->pt->t->name, j->msg);
    for (int k = 0; k < 2; k++) { /* the batch's ids not staged, after the table's earlier ones */
        for (size_t i = 0; st == OG_OK && i < j->unres[k].len; i++) {
            size_t len;
            const uint8_t *id = og_vector_get_bytes(&j->unres[k], i, &len);
            st = og_vector_append_bytes(&j->pt->unres[k], id, len);
        }
        og_vector_free(&j->unres[k]);
    }
    free(j);
    return st;
}

og_status og_plan_i_join(og_plan *p) { return job_join(p); }

/* 1 when the batch in flight reads pt's staged_ids (its endpoint lookups). */
static int job_reads_ids(const og_plan *p, const og_plan_table *pt)
{
    return p->job && p->job->resolve && (p->job->ends_node[0] == pt || p->job->ends_node[1] == pt);
}

/* Which columns of a node batch the builder beside the load takes once it is written
 * (og_plan_job.side): the id for the key map, and every String property the automatic text
 * indexing would index (docs/indexes.md "Automatic indexing").  Only while that indexing is on. */
static void job_side_plan(og_plan *p, og_plan_table *pt, og_table_txn *x, og_plan_job *j)
{
    if (pt->is_edge || !p->flush_rows || og_tableview_index_mode() != 2 || !og_engine_auto_index_rows()) return;
    const char *knob = getenv("OG_LOAD_BATCH_INDEX"); /* 0: build them after the publish only */
    if (knob && !strcmp(knob, "0")) return;
    const og_manifest *m = og_table_txn_manifest(x);
    j->side_top[0] = SIZE_MAX;
    j->side_fid[0] = OG_FIELD_ID;
    j->nside = 1;
    for (size_t f = 0; f < j->ntop; f++) {
        int32_t id = m->schema.fields[og_lance_schema_top(&m->schema, f)].id;
        if (id == OG_FIELD_ID) {
            j->side_top[0] = f;
            continue;
        }
        for (size_t i = 0; !p->no_text_index && i < pt->t->nprops && j->nside < 1 + OG_BATCH_INDEX_MAX_TEXTS; i++) {
            const og_cat_prop *pr = &pt->t->props[i];
            int32_t fid;
            if (pr->index == OG_INDEX_NONE || !og_index_def_fts.applies(pr->type, (int)pr->index) ||
                og_layout_field_id(pr->id, &fid) != OG_OK || fid != id)
                continue;
            j->side_top[j->nside] = f;
            j->side_fid[j->nside++] = id;
        }
    }
    og_error_clear();
    if (j->side_top[0] == SIZE_MAX && j->nside == 1) return;
    if (!p->side) p->side = og_batch_index_new();
    j->side = p->side;
}

/* Starts writing rows idx[0..n) of pt (in memory, ascending) as batch `batch_index`; with
 * `resolve` (idx is every in-memory row) its compact endpoints are looked up there too. */
static og_status job_start(og_plan *p, og_plan_table *pt, const uint32_t *idx, size_t n, size_t batch_index, int resolve)
{
    og_table_txn *x;
    OG_TRY(table_txn(p, pt, &x));
    og_plan_job *j = calloc(1, sizeof *j);
    if (!j) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = build_batch(pt, x, idx, n, 1, &j->batch, &j->ntop);
    if (st != OG_OK) {
        free(j);
        return st;
    }
    if (resolve) {
        const og_manifest *m = og_table_txn_manifest(x);
        int found = 0;
        for (size_t f = 0; f < j->ntop; f++) {
            int32_t id = m->schema.fields[og_lance_schema_top(&m->schema, f)].id;
            if (id == OG_FIELD_SRC) j->ends_field[0] = f, found |= 1;
            if (id == OG_FIELD_DST) j->ends_field[1] = f, found |= 2;
        }
        for (int k = 0; k < 2; k++) {
            j->ends_node[k] = &p->nodes[k ? pt->t->to_node : pt->t->from_node];
            j->ends_out[k] = pt->ends[k] + (pt->mem_base - (pt->ends_spilled ? pt->ends_lo : 0));
            j->ends_base[k] = pt->unres[k].len;
            if (st == OG_OK) st = og_vector_init(&j->unres[k], (og_type){OG_T_STRING, OG_T_NULL, 0});
        }
        if (st == OG_OK && (found != 3 || j->batch[j->ends_field[0]].len != n || j->batch[j->ends_field[1]].len != n))
            st = og_err(OG_ERR_INTERNAL, "%s: a flushed batch without its endpoints", pt->t->name);
        if (st != OG_OK) {
            for (size_t f = 0; f < j->ntop; f++) og_vector_free(&j->batch[f]);
            for (int k = 0; k < 2; k++) og_vector_free(&j->unres[k]);
            free(j->batch);
            free(j);
            return st;
        }
        j->resolve = 1;
    }
    j->pt = pt;
    j->x = x;
    j->store = og_table_store(og_tableview_table(pt->view));
    j->batch_index = batch_index;
    job_side_plan(p, pt, x, j);
    /* A flushed batch's key map is not kept in the cache (og_tableview_seed_keymap): 5M nodes'
     * seeded maps were ~300 MB under a 25M-edge load's peak (docs/load.md "The memory bound").
     * It is written to the store beside the load instead (job_side_plan). */
    p->job = j;
    j->threaded = 1; /* before the thread reads it */
    if (pthread_create(&j->th, NULL, job_main, j) != 0) {
        j->threaded = 0;
        job_main(j); /* no thread to be had: write it here */
    }
    return OG_OK;
}

/* 1 when no validation step reads a staged id of edge type t: no @unique constraint (its
 * message names the rows' ids); RI and @card read src / dst. */
static int edge_ids_unread(const og_cat_type *t)
{
    for (size_t k = 0; k < t->ncons; k++)
        if (t->cons[k].kind == OG_CONS_UNIQUE) return 0;
    return 1;
}

/* Before a flush of edge table pt (load): keeps the staged_ids answer of each endpoint of
 * the batch instead of its string (og_plan_table.ends), and from the first such flush on
 * treats src / dst as flushable columns.  Only for an edge type without constraints and
 * without @card (check_card and @unique read the strings) whose every flush does it, from
 * the first.  With `defer` the lookups are left to the batch's writer thread (*deferred = 1:
 * og_plan_job.resolve): they were about a quarter of the loading thread of a 5M-edge load. */
static og_status compact_ends(og_plan *p, og_plan_table *pt, int defer, int *deferred)
{
    *deferred = 0;
    if (!pt->is_edge || !p->flush_rows || pt->t->ncons || pt->t->card_written || (!pt->ends_compact && pt->mem_base))
        return OG_OK;
    size_t from = pt->mem_base, n = pt->nstaged - from;
    /* the batches before this one are resolved (their job was joined): to the spill files */
    OG_TRY(og_plan_i_ends_spill(p, pt));
    size_t lo = pt->ends_spilled ? pt->ends_lo : 0, need = pt->nstaged - lo;
    if (need > pt->ends_cap) {
        size_t cap = pt->ends_cap ? pt->ends_cap : 4096;
        while (cap < need) cap *= 2;
        for (int k = 0; k < 2; k++) {
            uint32_t *e = realloc(pt->ends[k], cap * sizeof *e);
            if (!e) return og_err(OG_ERR_NOMEM, "out of memory");
            pt->ends[k] = e;
        }
        pt->ends_cap = cap;
    }
    for (int k = 0; k < 2; k++) {
        if (!pt->unres[k].type.id) OG_TRY(og_vector_init(&pt->unres[k], (og_type){OG_T_STRING, OG_T_NULL, 0}));
        if (defer) continue;
        const og_plan_table *node = &p->nodes[k ? pt->t->to_node : pt->t->from_node];
        OG_TRY(resolve_ends(node, &pt->cols[1 + k], og_plan_i_col_row(pt, 1 + (size_t)k, from), n, pt->ends[k] + (from - lo),
                            &pt->unres[k], 0, pt->t->name));
    }
    *deferred = defer;
    pt->nends = pt->nstaged;
    pt->ends_compact = 1;
    pt->retain[1] = pt->retain[2] = 0;
    return OG_OK;
}

og_status og_plan_flush(og_plan *p, og_plan_table *pt)
{
    if (!pt->cols || pt->nstaged == pt->mem_base) return OG_OK;
    OG_TRY(job_join(p));
    /* An edge type whose every id so far was generated (ids_indexed 0: no given id yet) keeps
     * no id once it is written: nothing looks a fresh ULID up, and at 5M edges the 26-byte ids
     * were a third of a load's memory (docs/load.md "The memory bound").  From here the id
     * column is flushable; og_plan_index_ids / og_plan_staged_find skip the dropped rows. */
    if (pt->is_edge && pt->retain[0] && pt->ids_indexed == 0 && pt->mem_base == 0 && edge_ids_unread(pt->t))
        pt->retain[0] = 0;
    size_t span = pt->nstaged - pt->mem_base, kept = 0;
    uint32_t *idx = malloc(span * sizeof *idx);
    if (!idx) return og_err(OG_ERR_NOMEM, "out of memory");
    for (size_t r = pt->mem_base; r < pt->nstaged; r++)
        if (!og_plan_i_superseded(pt, r)) idx[kept++] = (uint32_t)r;
    /* the endpoint lookups go with the batch to its writer thread when the batch holds every
     * in-memory row (a superseded row is not written, but its endpoints are kept too) */
    int resolve = 0;
    og_status st = compact_ends(p, pt, kept == span, &resolve);
    if (kept && pt->nbatches == pt->batches_cap) {
        size_t ncap = pt->batches_cap ? pt->batches_cap * 2 : 16;
        og_plan_batch *nb = realloc(pt->batches, ncap * sizeof *nb);
        if (nb) {
            pt->batches = nb;
            pt->batches_cap = ncap;
        } else {
            st = og_err(OG_ERR_NOMEM, "out of memory");
        }
    }
    /* the batch is written on a worker thread (og_plan_job); its fragment id is filled in when
     * it is joined — by the next flush, og_plan_write or og_plan_free */
    if (st == OG_OK && kept) st = job_start(p, pt, idx, kept, pt->nbatches, resolve);
    free(idx);
    if (st) return og_err_wrap(st, "writing %s", pt->t->name);
    if (kept) pt->batches[pt->nbatches++] = (og_plan_batch){pt->mem_base, pt->nstaged, UINT64_MAX};
    /* rows superseded by now were not written */
    for (size_t r = pt->mem_base; r < pt->nstaged; r++)
        if (og_plan_i_superseded(pt, r)) pt->skipped[r >> 3] |= (uint8_t)(1u << (r & 7));
    p->flushes++;
    p->flushed_rows += pt->nstaged - pt->mem_base;
    for (size_t c = 0; c < pt->ncols; c++) {
        if (pt->retain[c] || (pt->cols[c].len == 0 && !pt->cols[c].validity)) continue; /* taken (and room made) */
        og_type ty = pt->cols[c].type;
        og_vector_free(&pt->cols[c]);
        OG_TRY(og_vector_init(&pt->cols[c], ty));
    }
    pt->mem_base = pt->nstaged;
    return OG_OK;
}

size_t og_plan_flush_rows(const og_plan *p, const og_plan_table *pt)
{
    return pt->is_edge && p->edge_flush_rows ? p->edge_flush_rows : p->flush_rows;
}

og_status og_plan_maybe_flush(og_plan *p, og_plan_table *pt)
{
    size_t n = pt->nstaged - pt->mem_base;
    if (!n) return OG_OK;
    if ((p->flush_rows && n >= og_plan_flush_rows(p, pt)) || (p->flush_bytes && og_plan_table_mem_bytes(pt) >= p->flush_bytes))
        return og_plan_flush(p, pt);
    return OG_OK;
}

/* Deletes, from their staged fragments, the flushed rows superseded after their flush. */
static og_status delete_superseded_flushed(og_plan_table *pt, og_table_txn *x)
{
    og_status st = OG_OK;
    uint32_t *offs = NULL;
    size_t cap = 0;
    for (size_t b = 0; b < pt->nbatches && st == OG_OK; b++) {
        const og_plan_batch *bt = &pt->batches[b];
        size_t m = 0;
        uint32_t off = 0;
        for (size_t r = bt->first; r < bt->end; r++) {
            if ((pt->skipped[r >> 3] >> (r & 7)) & 1) continue;
            if (og_plan_i_superseded(pt, r)) {
                if (m == cap) {
                    size_t ncap = cap ? cap * 2 : 256;
                    uint32_t *no = realloc(offs, ncap * sizeof *no);
                    if (!no) {
                        st = og_err(OG_ERR_NOMEM, "out of memory");
                        break;
                    }
                    offs = no;
                    cap = ncap;
                }
                offs[m++] = off;
            }
            off++;
        }
        if (st == OG_OK && m) st = og_table_txn_delete(x, bt->fragment_id, offs, m);
    }
    free(offs);
    return st;
}

og_status og_plan_write(og_plan *p, og_commit_draft *d, size_t *ntables)
{
    *ntables = 0;
    OG_TRY(job_join(p)); /* the last flushed batch, and every fragment id known */
    /* p->side is not waited for here: building an index never delays a publish (INVARIANTS.md
     * 7).  A load takes it before it frees the plan (og_plan.side). */
    OG_TRY(og_plan_lookup_status(p));
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->cat->nedges : p->cat->nnodes;
        for (size_t i = 0; i < n; i++) {
            og_plan_table *pt = pass ? &p->edges[i] : &p->nodes[i];
            if (!pt->touched) continue;
            OG_TRY(og_plan_table_view(p, pt));
            og_table_txn *x = NULL;
            size_t kept = 0;
            uint64_t frag;
            og_status st = table_txn(p, pt, &x);
            if (st == OG_OK && !pt->overwrite && pt->nremoved) st = stage_deletes(pt, x);
            if (st == OG_OK && pt->nbatches) st = delete_superseded_flushed(pt, x);
            if (st == OG_OK) og_table_txn_defer_writes(x, 1); /* the last fragment goes with the commit */
            if (st == OG_OK) st = append_in_memory(p, pt, &kept, &frag);
            pt->txn = NULL;
            if (st) {
                og_table_txn_free(x);
                return og_err_wrap(st, "writing %s", pt->t->name);
            }
            kept = 0;
            for (size_t r = 0; r < pt->nstaged; r++) kept += !og_plan_i_superseded(pt, r);
            uint64_t rows = pt->overwrite ? kept : og_tableview_rows(pt->view) - pt->nremoved + kept;
            /* committed by the write protocol, with the commit object (graph.h) */
            OG_TRY(og_draft_stage_table(d, og_tableview_dir(pt->view), x, rows));
            (*ntables)++;
        }
    }
    return OG_OK;
}
