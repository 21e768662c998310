/*
 * lance_tool.c — a small CLI over src/table/ that the interop tests (tests/interop/) and the
 * benchmark (bench/) drive.  ROOT is a store root; table NAME lives at ROOT/tables/NAME.lance,
 * so LanceDB opens it with connect(ROOT + "/tables") and openTable(NAME).
 *
 *   lance_tool write-all-types ROOT NAME   a table with every column type we store, over
 *                                          several versions (appends, deletions, an added
 *                                          column, a compaction); prints one JSON line per
 *                                          version: {"version":N,"op":"..."}
 *   lance_tool write-search ROOT NAME ROWS one version with an id, a text column and a
 *                                          Vector(16) column (for vector and full-text search)
 *   lance_tool write-overwrite ROOT NAME   version 1 = 5 rows, version 2 = overwrite with 3
 *   lance_tool dump ROOT NAME [--version N] [--columns a,b,...]
 *                                          the live rows as JSON lines ordered by _rowid
 *                                          (default: the latest version); values normalised
 *                                          as the tests compare them: 64-bit integers as
 *                                          decimal strings, blobs as byte arrays, Date as epoch
 *                                          milliseconds, vectors and lists as arrays
 *   lance_tool versions ROOT NAME          the version numbers, one per line
 *   lance_tool schema ROOT NAME [--version N]  one JSON line per field
 *   lance_tool bench-write ROOT NAME ROWS  writes ROWS rows (id String, i64, f64, name String,
 *                                          vec Vector(128)) as one version; prints rows/s
 *   lance_tool bench-scan ROOT NAME        scans i64 and f64 of the latest version; prints rows/s
 *
 * Exit status: 0 on success, 1 on an error (printed with its status name), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "table/table.h"
#include "util/buf.h"
#include "util/error.h"

#define CHECK(expr)                                                                              \
    do {                                                                                         \
        og_status st_ = (expr);                                                                  \
        if (st_ != OG_OK) {                                                                      \
            fprintf(stderr, "lance_tool: %s: %s (%s:%d)\n", og_status_name(st_),                \
                    og_error_message(), __FILE__, __LINE__);                                     \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static og_type ty(og_type_id id) { return (og_type){id, OG_T_NULL, 0}; }

static og_table *open_table(const char *root, const char *name, og_store **st)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s.lance", name);
    CHECK(og_store_open(st, root));
    og_table *t;
    CHECK(og_table_open(&t, *st, dir));
    return t;
}

static void commit(og_table_txn *x, const char *op)
{
    uint64_t v;
    CHECK(og_table_txn_commit(x, &v));
    og_table_txn_free(x);
    printf("{\"version\":%llu,\"op\":\"%s\"}\n", (unsigned long long)v, op);
}

/* ---------------------------------------------------------------------------------------- */
/* write-all-types                                                                           */
/* ---------------------------------------------------------------------------------------- */

enum { NCOLS = 17 };

static void all_types_schema(og_lance_schema *s)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    CHECK(og_lance_schema_add_column(s, "id", ty(OG_T_STRING), 0, -1, 0, 1));
    CHECK(og_lance_schema_add_column(s, "i32", ty(OG_T_I32), 1, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "i64", ty(OG_T_I64), 2, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "u32", ty(OG_T_U32), 3, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "u64", ty(OG_T_U64), 4, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "f32", ty(OG_T_F32), 5, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "f64", ty(OG_T_F64), 6, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "flag", ty(OG_T_BOOL), 7, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "day", ty(OG_T_DATE32), 8, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "at", ty(OG_T_DATE64), 9, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "name", ty(OG_T_STRING), 10, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "blob", ty(OG_T_BLOB), 11, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "vec", (og_type){OG_T_VECTOR, OG_T_NULL, 4}, 12, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "tags", (og_type){OG_T_LIST, OG_T_STRING, 0}, 13, 14, 1, 0));
    CHECK(og_lance_schema_add_column(s, "nums", (og_type){OG_T_LIST, OG_T_I64, 0}, 15, 16, 1, 0));
    CHECK(og_lance_schema_add_column(s, "ints", (og_type){OG_T_LIST, OG_T_I32, 0}, 17, 18, 1, 0));
    CHECK(og_lance_schema_add_column(s, "score", ty(OG_T_F32), 19, -1, 1, 0));
}

/* A pseudo-random but fixed value stream. */
static uint64_t mix(uint64_t k)
{
    k += 0x9e3779b97f4a7c15ull;
    k = (k ^ (k >> 30)) * 0xbf58476d1ce4e5b9ull;
    k = (k ^ (k >> 27)) * 0x94d049bb133111ebull;
    return k ^ (k >> 31);
}

/* Row k of column c is null? (id never; some columns have whole null stretches) */
static int is_null(int c, uint64_t k)
{
    if (c == 0) return 0;
    if (c == 6 && k >= 9000 && k < 9050) return 1; /* an all-null page region in f64 */
    return mix(k * 31 + (uint64_t)c) % 7 == 0;
}

static void append_value(og_vector *v, int c, uint64_t k)
{
    uint64_t r = mix(k * 131 + (uint64_t)c);
    char b[64];
    int n;
    if (is_null(c, k)) {
        CHECK(og_vector_append_null(v));
        return;
    }
    switch (c) {
    case 0: n = snprintf(b, sizeof b, "node-%06llu", (unsigned long long)k); CHECK(og_vector_append_bytes(v, b, (size_t)n)); break;
    case 1: CHECK(og_vector_append_i64(v, (int32_t)(uint32_t)r)); break;
    case 2: CHECK(og_vector_append_i64(v, (int64_t)r)); break; /* full 64-bit range */
    case 3: CHECK(og_vector_append_u64(v, (uint32_t)r)); break;
    case 4: CHECK(og_vector_append_u64(v, r)); break;
    case 5: CHECK(og_vector_append_f64(v, (double)(float)((double)(r % 100000) / 7.0 - 5000.0))); break;
    case 6: CHECK(og_vector_append_f64(v, (double)(int64_t)(r % 2000001) / 3.0 - 333333.0)); break;
    case 7: CHECK(og_vector_append_bool(v, (int)(r & 1))); break;
    case 8: CHECK(og_vector_append_i64(v, (int64_t)(r % 40000) - 10000)); break; /* dates before 1970 too */
    case 9: CHECK(og_vector_append_i64(v, (int64_t)(r % 4000000000000ull) - 1000000000000ll)); break;
    case 10: {
        static const char *const words[] = {"", "alpha", "beta", "gamma délta", "\"quoted\"", "tab\there",
                                            "日本語", "a much longer name that spans more bytes than most"};
        n = snprintf(b, sizeof b, "%s", words[r % 8]);
        CHECK(og_vector_append_bytes(v, b, (size_t)n));
        break;
    }
    case 11: {
        uint8_t bytes[16];
        size_t len = r % 17;
        for (size_t i = 0; i < len; i++) bytes[i] = (uint8_t)(r >> (i * 4));
        if (len == 16) len = 0; /* empty blobs too */
        CHECK(og_vector_append_bytes(v, bytes, len));
        break;
    }
    case 12: {
        float f[4];
        for (int i = 0; i < 4; i++) f[i] = (float)((double)((r >> (i * 8)) & 0xff) / 16.0 - 8.0);
        CHECK(og_vector_append_floats(v, f, 4));
        break;
    }
    case 13: case 15: case 16: {
        size_t items = r % 4; /* empty lists too */
        for (size_t i = 0; i < items; i++) {
            uint64_t q = mix(r + i);
            if (q % 9 == 0) {
                CHECK(og_vector_append_null(v->child)); /* a null item */
            } else if (c == 13) {
                n = snprintf(b, sizeof b, "t%llu", (unsigned long long)(q % 50));
                CHECK(og_vector_append_bytes(v->child, b, (size_t)n));
            } else if (c == 15) {
                CHECK(og_vector_append_i64(v->child, (int64_t)(q % 1000000) - 500000));
            } else {
                CHECK(og_vector_append_i64(v->child, (int32_t)(q % 1000)));
            }
        }
        CHECK(og_vector_append_list_end(v));
        break;
    }
    case 17: CHECK(og_vector_append_f64(v, (double)(r % 1000) / 4.0)); break;
    default: break;
    }
}

/* Column c of the schema order: index into append_value's cases (lists: 13 tags, 15 nums,
 * 16 ints; score = 17). */
static const int col_case[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17};

static void make_rows(const og_lance_schema *s, og_vector *cols, size_t ncols, uint64_t start, uint64_t n)
{
    for (size_t c = 0; c < ncols; c++) {
        og_type t;
        CHECK(og_lance_schema_field_type(s, (size_t)og_lance_schema_top(s, c), &t));
        CHECK(og_vector_init(&cols[c], t));
        const char *name = s->fields[og_lance_schema_top(s, c)].name;
        int cs = c < NCOLS ? col_case[c] : 17;
        if (!strcmp(name, "extra")) cs = 6;
        for (uint64_t k = start; k < start + n; k++) append_value(&cols[c], cs, k);
    }
}

static void append_range(og_table_txn *x, uint64_t start, uint64_t n)
{
    const og_lance_schema *s = &og_table_txn_manifest(x)->schema;
    size_t ncols = og_lance_schema_num_top(s);
    og_vector cols[32];
    make_rows(s, cols, ncols, start, n);
    CHECK(og_table_txn_append(x, cols, ncols, NULL));
    for (size_t c = 0; c < ncols; c++) og_vector_free(&cols[c]);
}

static void delete_where(og_table_txn *x, uint64_t frag, uint64_t rows, uint64_t modulo, uint64_t rem)
{
    uint32_t *offs = malloc(rows * sizeof *offs);
    size_t n = 0;
    for (uint64_t r = 0; r < rows; r++)
        if (r % modulo == rem) offs[n++] = (uint32_t)r;
    CHECK(og_table_txn_delete(x, frag, offs, n));
    free(offs);
}

static int cmd_write_all_types(const char *root, const char *name)
{
    og_store *st;
    og_table *t = open_table(root, name, &st);
    og_lance_schema s;
    all_types_schema(&s);
    og_table_txn *x;

    CHECK(og_table_txn_begin(&x, t, 0, &s));            /* v1: fragments 0 (9000 rows) and 1 */
    append_range(x, 0, 9000);
    append_range(x, 9000, 120);
    commit(x, "append 2 fragments");

    CHECK(og_table_txn_begin(&x, t, 1, NULL));          /* v2: fragment 2 */
    append_range(x, 9120, 300);
    commit(x, "append");

    CHECK(og_table_txn_begin(&x, t, 2, NULL));          /* v3: array-container deletions */
    delete_where(x, 0, 9000, 7, 3);
    delete_where(x, 2, 300, 10, 0);
    commit(x, "delete");

    og_lance_schema s2;                                  /* v4: add a nullable column */
    CHECK(og_lance_schema_copy(&s2, &s));
    CHECK(og_lance_schema_add_column(&s2, "extra", ty(OG_T_F64), 30, -1, 1, 0));
    CHECK(og_table_txn_begin(&x, t, 3, &s2));
    commit(x, "add column");

    CHECK(og_table_txn_begin(&x, t, 4, NULL));          /* v5: a fragment holding it */
    append_range(x, 9420, 250);
    commit(x, "append with new column");

    CHECK(og_table_txn_begin(&x, t, 5, NULL));          /* v6: cumulative, > 4096 in fragment 0 */
    delete_where(x, 0, 9000, 2, 0);
    delete_where(x, 1, 120, 1, 0);                      /* every row of fragment 1 */
    commit(x, "delete more");

    CHECK(og_table_txn_begin(&x, t, 6, NULL));          /* v7: compact 1, 2, 3 */
    uint64_t frags[] = {1, 2, 3};
    CHECK(og_table_txn_compact(x, frags, 3, NULL));
    commit(x, "compact");

    og_lance_schema_free(&s);
    og_lance_schema_free(&s2);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

static int cmd_write_overwrite(const char *root, const char *name)
{
    og_store *st;
    og_table *t = open_table(root, name, &st);
    og_lance_schema s;
    all_types_schema(&s);
    og_table_txn *x;
    CHECK(og_table_txn_begin(&x, t, 0, &s));
    append_range(x, 0, 5);
    commit(x, "append");
    CHECK(og_table_txn_begin(&x, t, 1, NULL));
    CHECK(og_table_txn_overwrite(x));
    append_range(x, 100, 3);
    commit(x, "overwrite");
    og_lance_schema_free(&s);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

static int cmd_write_search(const char *root, const char *name, uint64_t rows)
{
    static const char *const words[] = {"graph", "lance", "vector", "search", "table", "commit",
                                        "branch", "merge", "query", "index", "storage", "format"};
    og_store *st;
    og_table *t = open_table(root, name, &st);
    og_lance_schema s = OG_LANCE_SCHEMA_INIT;
    CHECK(og_lance_schema_add_column(&s, "id", ty(OG_T_STRING), 0, -1, 0, 1));
    CHECK(og_lance_schema_add_column(&s, "text", ty(OG_T_STRING), 1, -1, 1, 0));
    CHECK(og_lance_schema_add_column(&s, "vec", (og_type){OG_T_VECTOR, OG_T_NULL, 16}, 2, -1, 1, 0));
    og_table_txn *x;
    CHECK(og_table_txn_begin(&x, t, 0, &s));
    for (uint64_t part = 0; part < 2; part++) {          /* two fragments */
        og_vector c[3];
        CHECK(og_vector_init(&c[0], ty(OG_T_STRING)));
        CHECK(og_vector_init(&c[1], ty(OG_T_STRING)));
        CHECK(og_vector_init(&c[2], (og_type){OG_T_VECTOR, OG_T_NULL, 16}));
        for (uint64_t k = part * rows / 2; k < (part + 1) * rows / 2; k++) {
            char b[256];
            int n = snprintf(b, sizeof b, "doc-%05llu", (unsigned long long)k);
            CHECK(og_vector_append_bytes(&c[0], b, (size_t)n));
            uint64_t r = mix(k);
            n = snprintf(b, sizeof b, "%s %s %s number%llu", words[r % 12], words[(r >> 8) % 12],
                         words[(r >> 16) % 12], (unsigned long long)(k % 100));
            CHECK(og_vector_append_bytes(&c[1], b, (size_t)n));
            float f[16];
            for (int i = 0; i < 16; i++) f[i] = (float)((double)(mix(r + (uint64_t)i) % 2001) / 1000.0 - 1.0);
            CHECK(og_vector_append_floats(&c[2], f, 16));
        }
        CHECK(og_table_txn_append(x, c, 3, NULL));
        for (int i = 0; i < 3; i++) og_vector_free(&c[i]);
    }
    commit(x, "append");
    uint32_t del[] = {0, 1, 2};
    CHECK(og_table_txn_begin(&x, t, 1, NULL));
    CHECK(og_table_txn_delete(x, 0, del, 3));
    commit(x, "delete");
    og_lance_schema_free(&s);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* dump                                                                                      */
/* ---------------------------------------------------------------------------------------- */

static void json_str(og_buf *o, const uint8_t *p, size_t n)
{
    og_buf_append_byte(o, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            og_buf_append_byte(o, '\\');
            og_buf_append_byte(o, c);
        } else if (c < 0x20) {
            og_buf_printf(o, "\\u%04x", c);
        } else {
            og_buf_append_byte(o, c);
        }
    }
    og_buf_append_byte(o, '"');
}

static void json_double(og_buf *o, double d)
{
    if (d == 0) { /* JSON has no -0 worth keeping; JS compares -0 === 0 */
        og_buf_append_str(o, "0");
        return;
    }
    og_buf_printf(o, "%.17g", d);
}

static void json_value(og_buf *o, const og_vector *v, size_t r)
{
    if (og_vector_is_null(v, r)) {
        og_buf_append_str(o, "null");
        return;
    }
    switch (v->type.id) {
    case OG_T_I32: og_buf_printf(o, "%lld", (long long)og_vector_get_i64(v, r)); break;
    case OG_T_U32: og_buf_printf(o, "%llu", (unsigned long long)og_vector_get_u64(v, r)); break;
    case OG_T_I64: og_buf_printf(o, "\"%lld\"", (long long)og_vector_get_i64(v, r)); break;
    case OG_T_U64: og_buf_printf(o, "\"%llu\"", (unsigned long long)og_vector_get_u64(v, r)); break;
    case OG_T_F32: case OG_T_F64: json_double(o, og_vector_get_f64(v, r)); break;
    case OG_T_BOOL: og_buf_append_str(o, og_vector_get_bool(v, r) ? "true" : "false"); break;
    case OG_T_DATE32: og_buf_printf(o, "%lld", (long long)og_vector_get_i64(v, r) * 86400000ll); break;
    case OG_T_DATE64: og_buf_printf(o, "%lld", (long long)og_vector_get_i64(v, r)); break;
    case OG_T_STRING: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, r, &n);
        json_str(o, p, n);
        break;
    }
    case OG_T_BLOB: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, r, &n);
        og_buf_append_byte(o, '[');
        for (size_t i = 0; i < n; i++) og_buf_printf(o, "%s%u", i ? "," : "", p[i]);
        og_buf_append_byte(o, ']');
        break;
    }
    case OG_T_VECTOR: {
        const float *f = og_vector_get_floats(v, r);
        og_buf_append_byte(o, '[');
        for (uint32_t i = 0; i < v->type.dim; i++) {
            if (i) og_buf_append_byte(o, ',');
            json_double(o, (double)f[i]);
        }
        og_buf_append_byte(o, ']');
        break;
    }
    case OG_T_LIST: {
        size_t b, e;
        og_vector_get_list(v, r, &b, &e);
        og_buf_append_byte(o, '[');
        for (size_t i = b; i < e; i++) {
            if (i > b) og_buf_append_byte(o, ',');
            json_value(o, v->child, i);
        }
        og_buf_append_byte(o, ']');
        break;
    }
    default: og_buf_append_str(o, "null"); break;
    }
}

typedef struct line {
    uint64_t rowid;
    char *text;
} line;

static int cmp_line(const void *a, const void *b)
{
    uint64_t x = ((const line *)a)->rowid, y = ((const line *)b)->rowid;
    return x < y ? -1 : x > y;
}

static uint64_t resolve_version(og_table *t, const char *arg)
{
    if (arg) return strtoull(arg, NULL, 10);
    uint64_t v;
    CHECK(og_table_latest_version(t, &v));
    if (!v) {
        fprintf(stderr, "lance_tool: the table has no version\n");
        exit(1);
    }
    return v;
}

static int cmd_dump(const char *root, const char *name, const char *version, const char *columns)
{
    og_store *st;
    og_table *t = open_table(root, name, &st);
    og_manifest m;
    CHECK(og_table_load(t, resolve_version(t, version), &m));
    int32_t ids[256];
    size_t nids = 0;
    if (columns) {
        char *dup = strdup(columns), *save = NULL;
        for (char *c = strtok_r(dup, ",", &save); c && nids < 256; c = strtok_r(NULL, ",", &save)) {
            long i = og_lance_schema_find_name(&m.schema, c);
            if (i < 0) {
                fprintf(stderr, "lance_tool: no column %s\n", c);
                return 1;
            }
            ids[nids++] = m.schema.fields[i].id;
        }
        free(dup);
    }
    og_table_scan_opts o = {ids, nids, NULL, 0, 0, 0};
    og_table_scan *s;
    CHECK(og_table_scan_open(&s, t, &m, &o));
    const char *names[256];
    size_t ncols = nids ? nids : og_lance_schema_num_top(&m.schema);
    for (size_t c = 0; c < ncols && c < 256; c++) {
        long i = nids ? og_lance_schema_find_id(&m.schema, ids[c]) : og_lance_schema_top(&m.schema, c);
        names[c] = m.schema.fields[i].name;
    }
    line *lines = NULL;
    size_t nlines = 0, cap = 0;
    og_table_batch b;
    og_buf o2 = OG_BUF_INIT;
    for (;;) {
        CHECK(og_table_scan_next(s, &b));
        if (!b.nrows) break;
        for (size_t r = 0; r < b.nrows; r++) {
            og_buf_reset(&o2);
            og_buf_printf(&o2, "{\"_rowid\":\"%llu\"", (unsigned long long)b.row_addrs[r]);
            for (size_t c = 0; c < b.ncols; c++) {
                og_buf_append_byte(&o2, ',');
                json_str(&o2, (const uint8_t *)names[c], strlen(names[c]));
                og_buf_append_byte(&o2, ':');
                json_value(&o2, &b.cols[c], r);
            }
            og_buf_append_byte(&o2, '}');
            if (nlines == cap) {
                cap = cap ? cap * 2 : 1024;
                lines = realloc(lines, cap * sizeof *lines);
            }
            lines[nlines].rowid = b.row_addrs[r];
            lines[nlines].text = strdup(og_buf_cstr(&o2));
            nlines++;
        }
    }
    qsort(lines, nlines, sizeof *lines, cmp_line);
    for (size_t i = 0; i < nlines; i++) {
        fputs(lines[i].text, stdout);
        fputc('\n', stdout);
        free(lines[i].text);
    }
    free(lines);
    og_buf_free(&o2);
    og_table_scan_free(s);
    og_manifest_free(&m);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

static int cmd_versions(const char *root, const char *name)
{
    og_store *st;
    og_table *t = open_table(root, name, &st);
    uint64_t *v;
    size_t n;
    CHECK(og_table_list_versions(t, &v, &n));
    for (size_t i = 0; i < n; i++) printf("%llu\n", (unsigned long long)v[i]);
    free(v);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

static int cmd_schema(const char *root, const char *name, const char *version)
{
    og_store *st;
    og_table *t = open_table(root, name, &st);
    og_manifest m;
    CHECK(og_table_load(t, resolve_version(t, version), &m));
    og_buf o = OG_BUF_INIT;
    for (size_t i = 0; i < m.schema.count; i++) {
        const og_lance_field *f = &m.schema.fields[i];
        og_buf_reset(&o);
        og_buf_append_str(&o, "{\"name\":");
        json_str(&o, (const uint8_t *)f->name, strlen(f->name));
        og_buf_printf(&o, ",\"id\":%d,\"parent_id\":%d,\"logical_type\":", f->id, f->parent_id);
        json_str(&o, (const uint8_t *)f->logical_type, strlen(f->logical_type));
        og_buf_printf(&o, ",\"nullable\":%s,\"primary_key\":%s}", f->nullable ? "true" : "false",
                      f->unenforced_primary_key ? "true" : "false");
        puts(og_buf_cstr(&o));
    }
    og_buf_free(&o);
    og_manifest_free(&m);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* bench                                                                                     */
/* ---------------------------------------------------------------------------------------- */

#define BENCH_DIM 128
#define BENCH_BATCH 65536

static int cmd_bench_write(const char *root, const char *name, uint64_t rows)
{
    og_store *st;
    og_table *t = open_table(root, name, &st);
    og_lance_schema s = OG_LANCE_SCHEMA_INIT;
    CHECK(og_lance_schema_add_column(&s, "id", ty(OG_T_STRING), 0, -1, 0, 1));
    CHECK(og_lance_schema_add_column(&s, "i64", ty(OG_T_I64), 1, -1, 1, 0));
    CHECK(og_lance_schema_add_column(&s, "f64", ty(OG_T_F64), 2, -1, 1, 0));
    CHECK(og_lance_schema_add_column(&s, "name", ty(OG_T_STRING), 3, -1, 1, 0));
    CHECK(og_lance_schema_add_column(&s, "vec", (og_type){OG_T_VECTOR, OG_T_NULL, BENCH_DIM}, 4, -1, 1, 0));
    /* Build every batch first, as the LanceDB side builds its Arrow table before the write. */
    size_t nb = (size_t)((rows + BENCH_BATCH - 1) / BENCH_BATCH);
    og_vector(*batches)[5] = calloc(nb, sizeof *batches);
    float f[BENCH_DIM];
    for (size_t bi = 0; bi < nb; bi++) {
        og_vector *c = batches[bi];
        CHECK(og_vector_init(&c[0], ty(OG_T_STRING)));
        CHECK(og_vector_init(&c[1], ty(OG_T_I64)));
        CHECK(og_vector_init(&c[2], ty(OG_T_F64)));
        CHECK(og_vector_init(&c[3], ty(OG_T_STRING)));
        CHECK(og_vector_init(&c[4], (og_type){OG_T_VECTOR, OG_T_NULL, BENCH_DIM}));
        for (uint64_t k = (uint64_t)bi * BENCH_BATCH; k < rows && k < (uint64_t)(bi + 1) * BENCH_BATCH; k++) {
            char b[64];
            int n = snprintf(b, sizeof b, "id-%07llu", (unsigned long long)k);
            CHECK(og_vector_append_bytes(&c[0], b, (size_t)n));
            CHECK(og_vector_append_i64(&c[1], (int64_t)k));
            CHECK(og_vector_append_f64(&c[2], (double)k * 0.5));
            n = snprintf(b, sizeof b, "name %llu", (unsigned long long)(k % 1000));
            CHECK(og_vector_append_bytes(&c[3], b, (size_t)n));
            for (int i = 0; i < BENCH_DIM; i++) f[i] = (float)((k + (uint64_t)i) % 1000) / 1000.0f;
            CHECK(og_vector_append_floats(&c[4], f, BENCH_DIM));
        }
    }
    double t0 = now_s();
    og_table_txn *x;
    CHECK(og_table_txn_begin(&x, t, 0, &s));
    og_table_fragment_writer *w;
    CHECK(og_table_txn_fragment_begin(x, &w));
    for (size_t bi = 0; bi < nb; bi++) CHECK(og_table_fragment_write(w, batches[bi], 5));
    CHECK(og_table_fragment_finish(w, NULL));
    uint64_t v;
    CHECK(og_table_txn_commit(x, &v));
    og_table_txn_free(x);
    double dt = now_s() - t0;
    printf("{\"op\":\"write\",\"rows\":%llu,\"seconds\":%.6f,\"rows_per_s\":%.0f}\n",
           (unsigned long long)rows, dt, (double)rows / dt);
    for (size_t bi = 0; bi < nb; bi++)
        for (int c = 0; c < 5; c++) og_vector_free(&batches[bi][c]);
    free(batches);
    og_lance_schema_free(&s);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

static int cmd_bench_scan(const char *root, const char *name)
{
    og_store *st;
    og_table *t = open_table(root, name, &st);
    double t0 = now_s();
    uint64_t v;
    CHECK(og_table_latest_version(t, &v));
    og_manifest m;
    CHECK(og_table_load(t, v, &m));
    int32_t ids[] = {1, 2};
    og_table_scan_opts o = {ids, 2, NULL, 0, 8192, 0};
    og_table_scan *s;
    CHECK(og_table_scan_open(&s, t, &m, &o));
    og_table_batch b;
    uint64_t rows = 0;
    int64_t isum = 0;
    double fsum = 0;
    for (;;) {
        CHECK(og_table_scan_next(s, &b));
        if (!b.nrows) break;
        const int64_t *iv = b.cols[0].values;
        const double *fv = b.cols[1].values;
        for (size_t r = 0; r < b.nrows; r++) {
            isum += iv[r];
            fsum += fv[r];
        }
        rows += b.nrows;
    }
    og_table_scan_free(s);
    double dt = now_s() - t0;
    printf("{\"op\":\"scan\",\"rows\":%llu,\"seconds\":%.6f,\"rows_per_s\":%.0f,\"i64_sum\":\"%lld\",\"f64_sum\":%.1f}\n",
           (unsigned long long)rows, dt, (double)rows / dt, (long long)isum, fsum);
    og_manifest_free(&m);
    og_table_close(t);
    og_store_close(st);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */

static const char *opt(int argc, char **argv, const char *name)
{
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return NULL;
}

static int usage(void)
{
    fputs("usage: lance_tool write-all-types|write-overwrite|versions ROOT NAME\n"
          "       lance_tool write-search ROOT NAME ROWS\n"
          "       lance_tool dump ROOT NAME [--version N] [--columns a,b]\n"
          "       lance_tool schema ROOT NAME [--version N]\n"
          "       lance_tool bench-write ROOT NAME ROWS | bench-scan ROOT NAME\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 4) return usage();
    const char *cmd = argv[1], *root = argv[2], *name = argv[3];
    if (!strcmp(cmd, "write-all-types")) return cmd_write_all_types(root, name);
    if (!strcmp(cmd, "write-overwrite")) return cmd_write_overwrite(root, name);
    if (!strcmp(cmd, "write-search") && argc >= 5) return cmd_write_search(root, name, strtoull(argv[4], NULL, 10));
    if (!strcmp(cmd, "dump")) return cmd_dump(root, name, opt(argc, argv, "--version"), opt(argc, argv, "--columns"));
    if (!strcmp(cmd, "versions")) return cmd_versions(root, name);
    if (!strcmp(cmd, "schema")) return cmd_schema(root, name, opt(argc, argv, "--version"));
    if (!strcmp(cmd, "bench-write") && argc >= 5) return cmd_bench_write(root, name, strtoull(argv[4], NULL, 10));
    if (!strcmp(cmd, "bench-scan")) return cmd_bench_scan(root, name);
    return usage();
}
