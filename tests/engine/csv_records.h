/*
 * csv_records.h — renders every record a CSV source gives (load/csv_load.h), read either
 * sequentially or on the worker threads (og_csv_source_start with a given batch size), as one
 * string, so tests and tests/fuzz/fuzz_csv.c can check that both reads give the same records,
 * positions and first error.  Test code only.
 */
#ifndef OG_TESTS_CSV_RECORDS_H
#define OG_TESTS_CSV_RECORDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/csv_load.h"
#include "util/buf.h"
#include "util/error.h"

static inline void csv_records_tok(og_buf *b, const og_jtok *t)
{
    char num[64];
    switch (t->kind) {
    case OG_J_STRING: og_buf_append(b, "\"", 1); og_buf_append(b, t->v.s, t->len); og_buf_append(b, "\"", 1); return;
    case OG_J_INT: snprintf(num, sizeof num, "%lld", (long long)t->v.i); break;
    case OG_J_UINT: snprintf(num, sizeof num, "%llu", (unsigned long long)t->v.u); break;
    case OG_J_REAL: snprintf(num, sizeof num, "%.17g", t->v.d); break;
    case OG_J_TRUE: snprintf(num, sizeof num, "true"); break;
    case OG_J_FALSE: snprintf(num, sizeof num, "false"); break;
    case OG_J_NULL: snprintf(num, sizeof num, "null"); break;
    case OG_J_ARRAY: case OG_J_OBJECT: {
        og_buf_append(b, t->kind == OG_J_ARRAY ? "[" : "{", 1);
        const og_jtok *k = t + 1;
        for (uint32_t i = 0; i < t->len; i++) {
            if (i) og_buf_append(b, ",", 1);
            csv_records_tok(b, k);
            k = og_jtok_next(k);
            if (t->kind == OG_J_OBJECT) {
                og_buf_append(b, ":", 1);
                csv_records_tok(b, k);
                k = og_jtok_next(k);
            }
        }
        og_buf_append(b, t->kind == OG_J_ARRAY ? "]" : "}", 1);
        return;
    }
    default: snprintf(num, sizeof num, "?"); break;
    }
    og_buf_append(b, num, strlen(num));
}

/* Every record of the CSV file at `path` (type as og_csv_source_open's; batch 0: the
 * sequential read, else the threads' with that batch size; max_record 0: the default) as
 * "kind type line id from to data\n" lines, then "END bytes" or "ERR <status> <message>".
 * Caller frees. */
static inline char *csv_records_render(const og_catalog *cat, const char *type, const char *path, char delim,
                                       size_t batch, size_t max_record)
{
    og_buf b = OG_BUF_INIT;
    og_csv_source *s = NULL;
    og_status st = og_csv_source_open(&s, cat, type, path, delim, 3);
    if (st == OG_OK && max_record) og_csv_source_set_max_record(s, max_record);
    if (st == OG_OK && batch) st = og_csv_source_start(s, batch);
    int k = -1;
    if (st == OG_OK) {
        og_ndjson_record r;
        char line[512];
        while ((k = og_csv_source_next(s, &r, &st)) == 1) {
            snprintf(line, sizeof line, "%d %s %llu %s %s %s ", (int)r.kind, r.type, (unsigned long long)r.line,
                     r.id ? r.id : "-", r.from ? r.from : "-", r.to ? r.to : "-");
            og_buf_append(&b, line, strlen(line));
            csv_records_tok(&b, r.data);
            og_buf_append(&b, "\n", 1);
        }
    }
    char tail[64];
    if (k == 0) {
        snprintf(tail, sizeof tail, "END %llu", (unsigned long long)og_csv_source_bytes(s));
        og_buf_append(&b, tail, strlen(tail));
    } else {
        snprintf(tail, sizeof tail, "ERR %d ", (int)st);
        og_buf_append(&b, tail, strlen(tail));
        og_buf_append(&b, og_error_message(), strlen(og_error_message()));
    }
    og_csv_source_free(s);
    const char *c = og_buf_cstr(&b);
    char *out = strdup(c ? c : "");
    og_buf_free(&b);
    return out;
}

#endif
