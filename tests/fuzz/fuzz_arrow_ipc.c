/*
 * fuzz_arrow_ipc.c — the Arrow encoders (src/api/arrow_*.c) over results shaped by the input:
 * column types (every scalar, lists of each, vectors of 1-4 dimensions, untyped nulls, JSON
 * objects), row counts, null patterns, string lengths and a slice.  Each result must render as
 * a well-framed IPC stream (tests/api/arrow_walk.h: rows and columns as built) and export
 * through the C Data Interface with every node's length and null count as the rows hold,
 * released without a leak.
 */
#include <stdlib.h>
#include <string.h>

#include "../api/arrow_walk.h"
#include "api/arrow.h"
#include "api/rows.h"

typedef struct in {
    const uint8_t *p;
    size_t n;
} in;

static unsigned take(in *s, unsigned mod)
{
    if (!s->n) return 0;
    unsigned v = *s->p++;
    s->n--;
    return mod ? v % mod : v;
}

static const og_type_id SCALARS[] = {OG_T_BOOL, OG_T_I32, OG_T_I64, OG_T_U32, OG_T_U64, OG_T_F32,
                                     OG_T_F64, OG_T_DATE32, OG_T_DATE64, OG_T_STRING, OG_T_BLOB};

static void scalar(og_vector *v, in *s)
{
    unsigned x = take(s, 0);
    switch (v->type.id) {
    case OG_T_BOOL: og_vector_append_bool(v, x & 1); break;
    case OG_T_I32: case OG_T_I64: case OG_T_DATE32: case OG_T_DATE64: og_vector_append_i64(v, (int64_t)x - 128); break;
    case OG_T_U32: case OG_T_U64: og_vector_append_u64(v, x); break;
    case OG_T_F32: case OG_T_F64: og_vector_append_f64(v, x / 3.0); break;
    default: {
        char b[16];
        size_t n = x % sizeof b;
        memset(b, 'a' + (int)(x % 26), n);
        og_vector_append_bytes(v, b, n);
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in s = {data, size};
    size_t ncols = take(&s, 6), nrows = take(&s, 0) * (take(&s, 4) == 3 ? 300 : 1);
    og_rows *r = calloc(1, sizeof *r);
    if (!r) return 0;
    r->res.query = strdup("fuzz");
    r->res.ncols = ncols;
    r->res.nrows = nrows;
    r->res.names = calloc(ncols + 1, sizeof *r->res.names);
    r->res.types = calloc(ncols + 1, sizeof *r->res.types);
    r->res.cols = calloc(ncols + 1, sizeof *r->res.cols);
    for (size_t c = 0; c < ncols; c++) {
        unsigned kind = take(&s, 16), nullp = take(&s, 4);
        og_type t = {SCALARS[kind % 11], OG_T_NULL, 0};
        if (kind == 11) t = (og_type){OG_T_VECTOR, OG_T_NULL, 1 + take(&s, 4)};
        if (kind == 12 || kind == 13) t = (og_type){OG_T_LIST, SCALARS[take(&s, 11)], 0};
        if (kind == 14) t = (og_type){OG_T_NULL, OG_T_NULL, 0};
        char name[16];
        snprintf(name, sizeof name, "c%zu", c);
        r->res.names[c] = strdup(name);
        r->res.types[c] = (og_qtype){t, nullp != 0, 0, kind == 15 ? 0 : -1, kind == 15};
        og_vector *v = &r->res.cols[c];
        og_vector_init(v, t);
        if (t.id == OG_T_NULL) { /* an untyped null column: rows and no buffers */
            v->len = nrows, v->null_count = nrows;
            continue;
        }
        for (size_t i = 0; i < nrows; i++) {
            if (nullp && take(&s, nullp + 1) == 0) {
                og_vector_append_null(v);
            } else if (t.id == OG_T_VECTOR) {
                float f[4] = {(float)take(&s, 0), 1, 2, 3};
                og_vector_append_floats(v, f, t.dim);
            } else if (t.id == OG_T_LIST) {
                for (unsigned k = take(&s, 4); k; k--) scalar(v->child, &s);
                og_vector_append_list_end(v);
            } else {
                scalar(v, &s);
            }
        }
    }
    og_rows_finish(r, NULL);
    int has_null_col = 0; /* slicing copies rows, which an untyped null column has none of */
    for (size_t c = 0; c < ncols; c++) has_null_col |= r->res.cols[c].type.id == OG_T_NULL;
    if (take(&s, 2) && !has_null_col) og_rows_slice(r, take(&s, 0), take(&s, 0));
    nrows = r->res.nrows;

    char *bytes = NULL;
    size_t len = 0;
    if (og_rows_render(&bytes, &len, r, OG_FORMAT_ARROW, "main") == OG_OK) {
        arrow_walk w;
        if (arrow_walk_stream((const uint8_t *)bytes, len, &w) || w.rows != (int64_t)nrows || w.ncols != (int64_t)ncols)
            abort();
    }
    og_free(bytes);

    struct ArrowSchema sc;
    struct ArrowArray a;
    if (og_rows_to_arrow(r, &sc, &a) == OG_OK) {
        if (a.length != (int64_t)nrows || a.n_children != (int64_t)ncols) abort();
        for (size_t c = 0; c < ncols; c++) {
            const og_vector *v = &r->res.cols[c];
            int64_t nulls = 0;
            for (size_t i = 0; i < nrows; i++) nulls += og_vector_is_null(v, i);
            if (v->type.id == OG_T_NULL) nulls = (int64_t)nrows;
            if (a.children[c]->length != (int64_t)nrows || a.children[c]->null_count != nulls) abort();
        }
        a.release(&a);
        sc.release(&sc);
    }
    og_rows_free(r);
    return 0;
}
