/*
 * arrow_cdata.c — a query result through the Arrow C Data Interface (og_rows_to_arrow).
 *
 * Why: a program that embeds the library (pyarrow, DuckDB, Polars, a C++ Arrow consumer)
 * imports an ArrowSchema/ArrowArray pair without copying or parsing; the interface is only two
 * plain C structs, so no Arrow library is needed on either side of the call.
 *
 * The result is one struct array ("+s"), a child per column, as Arrow's importers read a record
 * batch.  Every node of the exported tree owns its buffers and its children (each with its own
 * release callback), so a consumer may move a child out and release the rest, as the
 * interface allows.  The og_rows may be freed as soon as the call returns.
 */
#include <stdlib.h>
#include <string.h>

#include "api/arrow.h"
#include "util/error.h"

static const uint64_t empty_buffer[1] = {0}; /* what a 0-byte buffer points at */

typedef struct cd_array {
    og_buf bufs[3];
    const void *ptrs[3];
    struct ArrowArray **kids;
} cd_array;

typedef struct cd_schema {
    char *format, *name, *metadata;
    struct ArrowSchema **kids;
} cd_schema;

static void release_array(struct ArrowArray *a)
{
    if (!a || !a->release) return;
    cd_array *p = a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) {
        if (p->kids[i]->release) p->kids[i]->release(p->kids[i]);
        free(p->kids[i]);
    }
    free(p->kids);
    for (int i = 0; i < 3; i++) og_buf_free(&p->bufs[i]);
    free(p);
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s)
{
    if (!s || !s->release) return;
    cd_schema *p = s->private_data;
    for (int64_t i = 0; i < s->n_children; i++) {
        if (p->kids[i]->release) p->kids[i]->release(p->kids[i]);
        free(p->kids[i]);
    }
    free(p->kids);
    free(p->format);
    free(p->name);
    free(p->metadata);
    free(p);
    s->release = NULL;
}

/* An array node with `nkids` zeroed child structs (each not yet valid: release NULL). */
static int array_init(struct ArrowArray *a, int64_t length, int64_t nulls, int nbufs, int64_t nkids)
{
    memset(a, 0, sizeof *a);
    cd_array *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->kids = calloc(nkids ? (size_t)nkids : 1, sizeof *p->kids);
    if (!p->kids) {
        free(p);
        return -1;
    }
    a->private_data = p;
    a->release = release_array;
    a->length = length, a->null_count = nulls, a->n_buffers = nbufs, a->buffers = p->ptrs;
    a->children = p->kids;
    for (int64_t i = 0; i < nkids; i++) {
        if (!(p->kids[i] = calloc(1, sizeof *p->kids[i]))) return -1;
        a->n_children = i + 1; /* release frees the children made so far */
    }
    return 0;
}

/* Moves c's buffers into array a (and its child, recursively). */
static int array_from_col(struct ArrowArray *a, og_arrow_col *c)
{
    if (array_init(a, c->length, c->null_count, c->nbufs, c->child ? 1 : 0)) return -1;
    cd_array *p = a->private_data;
    for (int i = 0; i < c->nbufs; i++) {
        p->bufs[i] = c->bufs[i];
        memset(&c->bufs[i], 0, sizeof c->bufs[i]);
        p->ptrs[i] = p->bufs[i].len ? (const void *)p->bufs[i].data : i == 0 ? NULL : (const void *)empty_buffer;
    }
    return c->child ? array_from_col(a->children[0], c->child) : 0;
}

static int schema_init(struct ArrowSchema *s, const char *format, const char *name, int nullable, int64_t nkids)
{
    memset(s, 0, sizeof *s);
    cd_schema *p = calloc(1, sizeof *p);
    if (!p) return -1;
    s->private_data = p;
    s->release = release_schema;
    p->kids = calloc(nkids ? (size_t)nkids : 1, sizeof *p->kids);
    p->format = strdup(format);
    p->name = strdup(name);
    if (!p->kids || !p->format || !p->name) return -1;
    s->format = p->format, s->name = p->name, s->flags = nullable ? ARROW_FLAG_NULLABLE : 0, s->children = p->kids;
    for (int64_t i = 0; i < nkids; i++) {
        if (!(p->kids[i] = calloc(1, sizeof *p->kids[i]))) return -1;
        s->n_children = i + 1;
    }
    return 0;
}

/* The binary key/value metadata of the interface: int32 count, then int32-length-prefixed
 * keys and values (native endianness). */
static char *json_metadata(void)
{
    static const char *const kv[] = {"ARROW:extension:name", "arrow.json", "ARROW:extension:metadata", ""};
    og_buf b = OG_BUF_INIT;
    int32_t n = 2;
    og_buf_append(&b, &n, 4);
    for (int i = 0; i < 4; i++) {
        int32_t len = (int32_t)strlen(kv[i]);
        og_buf_append(&b, &len, 4);
        og_buf_append(&b, kv[i], (size_t)len);
    }
    if (b.failed) {
        og_buf_free(&b);
        return NULL;
    }
    return (char *)og_buf_take(&b).data;
}

static int schema_from_col(struct ArrowSchema *s, const og_arrow_col *c, const char *name)
{
    if (schema_init(s, c->format, name, c->nullable, c->child ? 1 : 0)) return -1;
    if (c->is_json) {
        cd_schema *p = s->private_data;
        if (!(p->metadata = json_metadata())) return -1;
        s->metadata = p->metadata;
    }
    return c->child ? schema_from_col(s->children[0], c->child, "item") : 0;
}

og_status og_rows_to_arrow(const og_rows *r, struct ArrowSchema *schema, struct ArrowArray *array)
{
    if (!r || !schema || !array) return og_err(OG_ERR_INVALID, "og_rows_to_arrow: NULL argument");
    memset(schema, 0, sizeof *schema);
    memset(array, 0, sizeof *array);
    int64_t ncols = (int64_t)r->res.ncols;
    og_status st = OG_OK;
    int bad = schema_init(schema, "+s", "", 0, ncols) || array_init(array, (int64_t)r->res.nrows, 0, 1, ncols);
    for (int64_t c = 0; !bad && !st && c < ncols; c++) {
        og_arrow_col col;
        if ((st = og_arrow_col_from_rows(&col, r, (size_t)c, 0, r->res.nrows))) break;
        bad = schema_from_col(schema->children[c], &col, r->res.names[c]) || array_from_col(array->children[c], &col);
        og_arrow_col_free(&col);
    }
    if (bad || st) {
        release_schema(schema);
        release_array(array);
        memset(schema, 0, sizeof *schema);
        memset(array, 0, sizeof *array);
        return st ? st : og_err(OG_ERR_NOMEM, "out of memory exporting %zu rows", r->res.nrows);
    }
    return OG_OK;
}
