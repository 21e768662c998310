/*
 * fuzz_csv.c — libFuzzer target for the CSV load path: the RFC 4180 reader (util/csv.h) and
 * the row → record conversion (load/csv_load.h).
 *
 * The first input byte picks the delimiter (',' '|' '\t' ';'), the rest is the file.  Checked
 * properties, abort() on a violation:
 *   - the reader ends with 1…1 then 0, or -1 with OG_ERR_PARSE / OG_ERR_LIMIT and a message
 *     "<input>:L:C: …"; an error is sticky;
 *   - every field is valid UTF-8 without NUL, NUL-terminated at its length, positioned at a
 *     line/column within the input, lines non-decreasing;
 *   - re-encoding the records read (quoting what needs it and what was quoted) and reading the
 *     result again gives exactly the same records: same fields, bytes and quoted flags;
 *   - the same bytes as a load file of a small schema (header row and all) stage without a
 *     crash or leak: every record or a typed error (PARSE, INVALID, LIMIT);
 *   - read on the worker threads (og_csv_source_start, batches of 1–61 bytes) they give the
 *     same records, positions and first error as the sequential read.
 * Seeds: tests/fuzz/corpus/fuzz_csv/.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compiler/schema.h"
#include "load/csv_load.h"
#include "util/csv.h"
#include "util/error.h"
#include "util/utf8.h"
#include "../engine/csv_records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, what)                                    \
    do {                                                     \
        if (!(cond)) {                                       \
            fprintf(stderr, "fuzz_csv: %s\n", what);         \
            abort();                                         \
        }                                                    \
    } while (0)

typedef struct rec {
    char **f;
    size_t *len;
    int *quoted;
    size_t n;
} rec;

typedef struct recs {
    rec *r;
    size_t n;
} recs;

static void recs_free(recs *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        for (size_t k = 0; k < rs->r[i].n; k++) free(rs->r[i].f[k]);
        free(rs->r[i].f);
        free(rs->r[i].len);
        free(rs->r[i].quoted);
    }
    free(rs->r);
}

/* Reads buf with the invariants above; returns the reader's last answer (0 or -1). */
static int read_all(const char *buf, size_t len, char delim, recs *out, size_t max_record)
{
    memset(out, 0, sizeof *out);
    FILE *f = fmemopen((void *)buf, len ? len : 1, "rb");
    CHECK(f, "fmemopen");
    if (!len) { /* fmemopen cannot open an empty buffer: read one byte past it never */
        fclose(f);
        f = fopen("/dev/null", "rb");
        CHECK(f, "/dev/null");
    }
    og_csv_reader *r;
    CHECK(og_csv_reader_new(&r, f, "<input>", delim) == OG_OK, "reader_new");
    og_csv_reader_set_max_record(r, max_record);
    og_csv_field *fs;
    size_t n;
    og_status st;
    int k;
    uint64_t last_line = 0;
    while ((k = og_csv_next(r, &fs, &n, &st)) == 1) {
        CHECK(n >= 1, "a record has a field");
        CHECK(og_csv_record_line(r) >= last_line, "lines go forward");
        last_line = og_csv_record_line(r);
        rec *nr = realloc(out->r, (out->n + 1) * sizeof *nr);
        CHECK(nr, "oom");
        out->r = nr;
        rec *rc = &out->r[out->n++];
        rc->n = n;
        rc->f = calloc(n, sizeof *rc->f);
        rc->len = calloc(n, sizeof *rc->len);
        rc->quoted = calloc(n, sizeof *rc->quoted);
        CHECK(rc->f && rc->len && rc->quoted, "oom");
        for (size_t i = 0; i < n; i++) {
            CHECK(fs[i].s[fs[i].len] == '\0', "NUL-terminated");
            CHECK(memchr(fs[i].s, '\0', fs[i].len) == NULL, "no NUL inside");
            CHECK(og_utf8_valid((const unsigned char *)fs[i].s, fs[i].len), "valid UTF-8");
            CHECK(fs[i].line >= last_line && fs[i].col >= 1 && fs[i].line <= len + 1 && fs[i].col <= len + 1, "position");
            rc->f[i] = malloc(fs[i].len + 1);
            CHECK(rc->f[i], "oom");
            memcpy(rc->f[i], fs[i].s, fs[i].len + 1);
            rc->len[i] = fs[i].len;
            rc->quoted[i] = fs[i].quoted;
        }
    }
    if (k < 0) {
        CHECK(st == OG_ERR_PARSE || st == OG_ERR_LIMIT, "typed error");
        CHECK(!strncmp(og_error_message(), "<input>:", 8), "message names the position");
        og_status st2;
        CHECK(og_csv_next(r, &fs, &n, &st2) == -1 && st2 == st, "sticky error");
    }
    og_csv_reader_free(r);
    fclose(f);
    return k;
}

/* The records as CSV again. */
static char *encode(const recs *rs, char delim, size_t *len)
{
    char *out = NULL;
    FILE *m = open_memstream(&out, len);
    CHECK(m, "memstream");
    for (size_t i = 0; i < rs->n; i++) {
        const rec *r = &rs->r[i];
        for (size_t k = 0; k < r->n; k++) {
            if (k) fputc(delim, m);
            int q = r->quoted[k] || (r->n == 1 && r->len[k] == 0) ||
                    (i == 0 && k == 0 && r->len[k] >= 3 && !memcmp(r->f[k], "\xEF\xBB\xBF", 3)); /* not a BOM */
            for (size_t j = 0; j < r->len[k] && !q; j++) {
                char c = r->f[k][j];
                if (c == delim || c == '"' || c == '\r' || c == '\n') q = 1;
            }
            if (q) fputc('"', m);
            for (size_t j = 0; j < r->len[k]; j++) {
                if (r->f[k][j] == '"') fputc('"', m);
                fputc(r->f[k][j], m);
            }
            if (q) fputc('"', m);
        }
        fputs(i & 1 ? "\r\n" : "\n", m);
    }
    fclose(m);
    return out;
}

static og_catalog *g_cat;

/* The same bytes as a load file of Person / City / LivesIn. */
static void stage_all(const uint8_t *data, size_t size, char delim, int variant)
{
    if (!g_cat) {
        const char *pg = "node Person { name: String @key age: I32? score: F64? ok: Bool? born: Date? tags: [String]? v: Vector(2)? }\n"
                         "node City { code: I64 @key }\n"
                         "edge LivesIn: Person -> City { since: U32? }\n";
        og_diags d = OG_DIAGS_INIT;
        CHECK(og_schema_compile(&g_cat, "f.pg", pg, strlen(pg), &d) == OG_OK, "schema");
        og_diags_free(&d);
    }
    int fd = memfd_create("fuzz_csv", 0);
    CHECK(fd >= 0, "memfd");
    CHECK(write(fd, data, size) == (ssize_t)size, "memfd write");
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    static const char *types[] = {"Person", "LivesIn", NULL};
    og_csv_source *s = NULL;
    og_status st = og_csv_source_open(&s, g_cat, types[variant % 3], path, delim, 0);
    if (st == OG_OK) {
        og_ndjson_record rec;
        int k;
        while ((k = og_csv_source_next(s, &rec, &st)) == 1) {
            CHECK(rec.type && rec.data && rec.data->kind == OG_J_OBJECT, "a record has a type and a data object");
            CHECK(rec.kind != OG_NDJSON_EDGE || (rec.from && rec.to), "an edge has its endpoints");
        }
        if (k < 0) CHECK(st == OG_ERR_PARSE || st == OG_ERR_INVALID || st == OG_ERR_LIMIT, "typed row error");
    } else {
        CHECK(st == OG_ERR_PARSE || st == OG_ERR_INVALID || st == OG_ERR_LIMIT, "typed header error");
    }
    og_csv_source_free(s);
    char *seq = csv_records_render(g_cat, types[variant % 3], path, delim, 0, 0);
    char *par = csv_records_render(g_cat, types[variant % 3], path, delim, 1 + size % 61, 0);
    CHECK(!strcmp(seq, par), "the threads' read gives the sequential read's records and error");
    free(seq);
    free(par);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 16)) return 0;
    static const char delims[] = {',', '|', '\t', ';'};
    char delim = delims[data[0] & 3];
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    recs a;
    int k = read_all(buf, len, delim, &a, 1u << 20);
    if (k == 0) {
        size_t elen = 0;
        char *e = encode(&a, delim, &elen);
        recs b;
        CHECK(read_all(e, elen, delim, &b, 1u << 22) == 0, "the re-encoded records read back");
        CHECK(a.n == b.n, "same record count");
        for (size_t i = 0; i < a.n; i++) {
            CHECK(a.r[i].n == b.r[i].n, "same field count");
            for (size_t j = 0; j < a.r[i].n; j++) {
                CHECK(a.r[i].len[j] == b.r[i].len[j] && !memcmp(a.r[i].f[j], b.r[i].f[j], a.r[i].len[j]), "same bytes");
                int forced = (a.r[i].n == 1 && a.r[i].len[j] == 0) ||
                             (i == 0 && j == 0 && a.r[i].len[j] >= 3 && !memcmp(a.r[i].f[j], "\xEF\xBB\xBF", 3));
                CHECK(a.r[i].quoted[j] == b.r[i].quoted[j] || forced, "same quoting");
            }
        }
        recs_free(&b);
        free(e);
    }
    recs_free(&a);
    stage_all((const uint8_t *)buf, len, delim, data[0] >> 2);
    return 0;
}
