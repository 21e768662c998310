/*
 * table_demo.c — the `make run` demo of the table layer: writes a Lance table with every
 * column type OmniGraph stores (nulls included) under DIR/tables/demo.lance, deletes a row in
 * a second version, adds a column in a third, then reads every version back through the
 * scanner and prints it.  The table is real Lance: LanceDB opens it with
 * connect("DIR/tables") + openTable("demo").
 *
 * usage: table_demo [DIR]   (default ./build/demo; an existing demo table there is replaced)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "table/table.h"
#include "util/error.h"
#include "util/id.h"

#define CHECK(expr)                                                                              \
    do {                                                                                         \
        og_status st_ = (expr);                                                                  \
        if (st_ != OG_OK) {                                                                      \
            fprintf(stderr, "table_demo: %s: %s\n", og_status_name(st_), og_error_message());   \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static og_type ty(og_type_id id) { return (og_type){id, OG_T_NULL, 0}; }

enum { ROWS = 5 };

static void build_schema(og_lance_schema *s)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    CHECK(og_lance_schema_add_column(s, "id", ty(OG_T_STRING), 0, -1, 0, 1));
    CHECK(og_lance_schema_add_column(s, "age", ty(OG_T_I32), 1, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "visits", ty(OG_T_I64), 2, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "rank", ty(OG_T_U32), 3, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "bytes_in", ty(OG_T_U64), 4, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "ratio", ty(OG_T_F32), 5, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "score", ty(OG_T_F64), 6, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "active", ty(OG_T_BOOL), 7, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "born", ty(OG_T_DATE32), 8, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "seen_at", ty(OG_T_DATE64), 9, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "name", ty(OG_T_STRING), 10, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "avatar", ty(OG_T_BLOB), 11, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "embedding", (og_type){OG_T_VECTOR, OG_T_NULL, 3}, 12, -1, 1, 0));
    CHECK(og_lance_schema_add_column(s, "tags", (og_type){OG_T_LIST, OG_T_STRING, 0}, 13, 14, 1, 0));
    CHECK(og_lance_schema_add_column(s, "lucky", (og_type){OG_T_LIST, OG_T_I64, 0}, 15, 16, 1, 0));
}

static void build_rows(const og_lance_schema *s, og_vector *c)
{
    static const char *const ids[ROWS] = {"alice", "bob", "carol", "dave", "erin"};
    static const char *const names[ROWS] = {"Alice Liddell", "Bob", NULL, "Dave Ø", ""};
    for (size_t i = 0; i < og_lance_schema_num_top(s); i++) {
        og_type t;
        CHECK(og_lance_schema_field_type(s, (size_t)og_lance_schema_top(s, i), &t));
        CHECK(og_vector_init(&c[i], t));
    }
    for (int r = 0; r < ROWS; r++) {
        int null = r == 2; /* carol has nulls everywhere but her id */
        CHECK(og_vector_append_bytes(&c[0], ids[r], strlen(ids[r])));
        if (null) {
            for (int k = 1; k < 15; k++) CHECK(og_vector_append_null(&c[k]));
            continue;
        }
        CHECK(og_vector_append_i64(&c[1], 30 + r));
        CHECK(og_vector_append_i64(&c[2], 1000000000000ll * r - 7));
        CHECK(og_vector_append_u64(&c[3], (uint64_t)r + 1));
        CHECK(og_vector_append_u64(&c[4], 18000000000000000000ull + (uint64_t)r));
        CHECK(og_vector_append_f64(&c[5], 0.25 * r));
        CHECK(og_vector_append_f64(&c[6], 3.141592653589793 * r));
        CHECK(og_vector_append_bool(&c[7], r % 2 == 0));
        CHECK(og_vector_append_i64(&c[8], -3650 + 4000 * r));           /* days since 1970 */
        CHECK(og_vector_append_i64(&c[9], 1764680000000ll + 3600000ll * r)); /* ms since 1970 */
        if (names[r]) CHECK(og_vector_append_bytes(&c[10], names[r], strlen(names[r])));
        else CHECK(og_vector_append_null(&c[10]));
        uint8_t blob[3] = {0xde, 0xad, (uint8_t)r};
        CHECK(og_vector_append_bytes(&c[11], blob, (size_t)r % 4));
        float emb[3] = {(float)r, 0.5f, (float)-r};
        CHECK(og_vector_append_floats(&c[12], emb, 3));
        for (int k = 0; k < r; k++) {
            char tag[16];
            int n = snprintf(tag, sizeof tag, "tag%d", k);
            CHECK(og_vector_append_bytes(c[13].child, tag, (size_t)n));
        }
        CHECK(og_vector_append_list_end(&c[13]));
        if (r == 4) {
            CHECK(og_vector_append_null(&c[14]));
        } else {
            for (int k = 0; k <= r; k++) CHECK(og_vector_append_i64(c[14].child, 7 * k));
            CHECK(og_vector_append_list_end(&c[14]));
        }
    }
}

static void print_value(const og_vector *v, size_t r)
{
    if (og_vector_is_null(v, r)) {
        printf("null");
        return;
    }
    switch (v->type.id) {
    case OG_T_I32: case OG_T_I64: printf("%lld", (long long)og_vector_get_i64(v, r)); break;
    case OG_T_U32: case OG_T_U64: printf("%llu", (unsigned long long)og_vector_get_u64(v, r)); break;
    case OG_T_F32: case OG_T_F64: printf("%g", og_vector_get_f64(v, r)); break;
    case OG_T_BOOL: printf("%s", og_vector_get_bool(v, r) ? "true" : "false"); break;
    case OG_T_DATE32: {
        char buf[25];
        og_format_time_ms(og_vector_get_i64(v, r) * 86400000ll, buf);
        printf("%.10s", buf);
        break;
    }
    case OG_T_DATE64: {
        char buf[25];
        og_format_time_ms(og_vector_get_i64(v, r), buf);
        printf("%s", buf);
        break;
    }
    case OG_T_STRING: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, r, &n);
        printf("\"%.*s\"", (int)n, (const char *)p);
        break;
    }
    case OG_T_BLOB: {
        size_t n;
        const uint8_t *p = og_vector_get_bytes(v, r, &n);
        printf("0x");
        for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
        break;
    }
    case OG_T_VECTOR: {
        const float *f = og_vector_get_floats(v, r);
        printf("[");
        for (uint32_t i = 0; i < v->type.dim; i++) printf("%s%g", i ? ", " : "", (double)f[i]);
        printf("]");
        break;
    }
    case OG_T_LIST: {
        size_t b, e;
        og_vector_get_list(v, r, &b, &e);
        printf("[");
        for (size_t i = b; i < e; i++) {
            if (i > b) printf(", ");
            print_value(v->child, i);
        }
        printf("]");
        break;
    }
    default: printf("?"); break;
    }
}

static void print_version(og_table *t, uint64_t version, const char *what, int full)
{
    og_manifest m;
    CHECK(og_table_load(t, version, &m));
    printf("\n== version %llu (%s): %llu rows in %zu fragment(s)\n", (unsigned long long)version, what,
           (unsigned long long)og_manifest_live_rows(&m), m.nfragments);
    og_table_scan *s;
    CHECK(og_table_scan_open(&s, t, &m, NULL));
    og_table_batch b;
    for (;;) {
        CHECK(og_table_scan_next(s, &b));
        if (!b.nrows) break;
        for (size_t r = 0; r < b.nrows; r++) {
            printf("  row %u:%u", OG_ROW_ADDR_FRAG(b.row_addrs[r]), OG_ROW_ADDR_OFFSET(b.row_addrs[r]));
            if (!full) { /* the key and the newest column only */
                for (size_t c = 0; c < b.ncols; c += b.ncols - 1) {
                    printf("  %s = ", m.schema.fields[og_lance_schema_top(&m.schema, c)].name);
                    print_value(&b.cols[c], r);
                    if (b.ncols == 1) break;
                }
                printf("\n");
                continue;
            }
            printf("\n");
            for (size_t c = 0; c < b.ncols; c++) {
                const og_lance_field *f = &m.schema.fields[og_lance_schema_top(&m.schema, c)];
                char tn[32];
                og_type type;
                CHECK(og_lance_schema_field_type(&m.schema, (size_t)og_lance_schema_top(&m.schema, c), &type));
                printf("    %-10s %-12s ", f->name, og_type_name(type, tn, sizeof tn));
                print_value(&b.cols[c], r);
                printf("\n");
            }
        }
    }
    og_table_scan_free(s);
    og_manifest_free(&m);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "build/demo";
    og_store *st;
    CHECK(og_store_open(&st, dir));
    /* start from a clean table: remove the keys of an earlier run */
    og_keylist kl;
    CHECK(og_store_list(st, "tables/demo.lance/", NULL, 0, &kl));
    for (size_t i = 0; i < kl.count; i++) CHECK(og_store_delete(st, kl.keys[i]));
    og_keylist_free(&kl);

    og_table *t;
    CHECK(og_table_open(&t, st, "demo.lance"));
    og_lance_schema s;
    build_schema(&s);
    og_vector cols[15];
    build_rows(&s, cols);

    og_table_txn *x;
    uint64_t v1, v2, v3;
    CHECK(og_table_txn_begin(&x, t, 0, &s));
    CHECK(og_table_txn_append(x, cols, 15, NULL));
    CHECK(og_table_txn_commit(x, &v1));
    og_table_txn_free(x);

    uint32_t bob[] = {1};
    CHECK(og_table_txn_begin(&x, t, v1, NULL));
    CHECK(og_table_txn_delete(x, 0, bob, 1));
    CHECK(og_table_txn_commit(x, &v2));
    og_table_txn_free(x);

    og_lance_schema s3;
    CHECK(og_lance_schema_copy(&s3, &s));
    CHECK(og_lance_schema_add_column(&s3, "nickname", ty(OG_T_STRING), 20, -1, 1, 0));
    CHECK(og_table_txn_begin(&x, t, v2, &s3));
    CHECK(og_table_txn_commit(x, &v3));
    og_table_txn_free(x);

    printf("OmniGraph-C table demo: a Lance table (file format 2.0) at %s/tables/demo.lance\n", og_store_uri(st));
    print_version(t, v1, "5 rows, every column type", 1);
    print_version(t, v2, "bob deleted", 0);
    print_version(t, v3, "column 'nickname' added: old rows read it as null", 0);
    printf("\nRead it with LanceDB: connect(\"%s/tables\"), openTable(\"demo\"), checkout(1..3).\n", og_store_uri(st));

    for (int i = 0; i < 15; i++) og_vector_free(&cols[i]);
    og_lance_schema_free(&s);
    og_lance_schema_free(&s3);
    og_table_close(t);
    og_store_close(st);
    return 0;
}
