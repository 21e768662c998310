/*
 * bench_search.c — BM25 top-10 latency of OmniGraph-C against SQLite FTS5, in one process on
 * the same documents and the same queries (bench/search/run.sh, docs/benchmarks.md).
 *
 *   bench_search GRAPH FTS5_DB DOCS.ndjson QUERIES.txt [REPS]
 *
 * GRAPH is a loaded graph (node Doc { slug: String @key  body: String @index }).  FTS5_DB is
 * built from DOCS.ndjson when it does not exist (tokenize 'porter unicode61'; the build time
 * is printed).  Each query runs once to warm both sides, then REPS (default 5) times; every
 * run is timed in wall and thread-CPU time.  The OmniGraph side is the public API
 * (og_db_query of a .gq bm25 ordering with limit 10); the FTS5 side a prepared
 * `... MATCH 'a OR b' ORDER BY bm25(docs) LIMIT 10` (OR: a bm25 ordering ranks every document
 * sharing a term).  Also prints the mean overlap of the two top-10 sets.  One JSON line out.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "omnigraph.h"

static double now_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, dcmp);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_search: %s: %s\n", what, msg);
    exit(1);
}

static double build_fts5(sqlite3 *db, const char *docs)
{
    double t0 = now_s(CLOCK_MONOTONIC);
    char *err = NULL;
    if (sqlite3_exec(db,
                     "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                     "CREATE VIRTUAL TABLE docs USING fts5(slug UNINDEXED, body, tokenize='porter unicode61');"
                     "BEGIN;",
                     NULL, NULL, &err) != SQLITE_OK)
        die("fts5 create", err);
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(db, "INSERT INTO docs(slug, body) VALUES (?1, ?2)", -1, &ins, NULL) != SQLITE_OK)
        die("fts5 insert", sqlite3_errmsg(db));
    FILE *f = fopen(docs, "r");
    if (!f) die("open", docs);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL), *d = j ? json_object_get(j, "data") : NULL;
        if (!d) die("docs", "not a load-format line");
        sqlite3_bind_text(ins, 1, json_string_value(json_object_get(d, "slug")), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, json_string_value(json_object_get(d, "body")), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE) die("fts5 insert", sqlite3_errmsg(db));
        sqlite3_reset(ins);
        json_decref(j);
    }
    free(line);
    fclose(f);
    sqlite3_finalize(ins);
    if (sqlite3_exec(db, "COMMIT; INSERT INTO docs(docs) VALUES('optimize');", NULL, NULL, &err) != SQLITE_OK)
        die("fts5 commit", err);
    return now_s(CLOCK_MONOTONIC) - t0;
}

#define TOP 10

typedef struct top {
    char slug[TOP][64];
    size_t n;
} top;

static const char *GQ = "query top($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } "
                        "order { bm25($d.body, $q) } limit 10 }";

static void run_og(og_db *db, const char *q, top *out)
{
    json_t *p = json_pack("{s:s}", "q", q);
    char *params = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    og_rows *r;
    if (og_db_query(&r, db, GQ, strlen(GQ), "top", params, NULL) != OG_OK) die("query", og_error_message());
    free(params);
    out->n = 0;
    for (size_t i = 0; i < og_rows_count(r) && i < TOP; i++) {
        size_t len;
        const char *s = og_rows_string(r, i, 0, &len);
        snprintf(out->slug[out->n++], 64, "%.*s", (int)len, s);
    }
    og_rows_free(r);
}

static void run_fts5(sqlite3_stmt *st, const char *match, top *out)
{
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    out->n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && out->n < TOP)
        snprintf(out->slug[out->n++], 64, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_reset(st);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_search GRAPH FTS5_DB DOCS.ndjson QUERIES.txt [REPS]\n");
        return 2;
    }
    int reps = argc > 5 ? atoi(argv[5]) : 5;
    struct stat sb;
    int fresh = stat(argv[2], &sb) != 0;
    sqlite3 *lite;
    if (sqlite3_open(argv[2], &lite) != SQLITE_OK) die("sqlite open", argv[2]);
    double fts5_build = fresh ? build_fts5(lite, argv[3]) : -1;
    sqlite3_stmt *sel;
    if (sqlite3_prepare_v2(lite, "SELECT slug FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs) LIMIT 10", -1, &sel,
                           NULL) != SQLITE_OK)
        die("fts5 select", sqlite3_errmsg(lite));
    og_db *db;
    if (og_db_open(&db, argv[1], NULL) != OG_OK) die("open", og_error_message());

    char qs[128][128], ms[128][300];
    size_t nq = 0;
    FILE *f = fopen(argv[4], "r");
    if (!f) die("open", argv[4]);
    while (nq < 128 && fgets(qs[nq], sizeof qs[nq], f)) {
        qs[nq][strcspn(qs[nq], "\n")] = 0;
        if (!qs[nq][0]) continue;
        char tmp[128];
        snprintf(tmp, sizeof tmp, "%s", qs[nq]);
        ms[nq][0] = 0;
        for (char *save, *w = strtok_r(tmp, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            size_t l = strlen(ms[nq]);
            snprintf(ms[nq] + l, sizeof ms[nq] - l, "%s\"%s\"", l ? " OR " : "", w);
        }
        nq++;
    }
    fclose(f);

    size_t nrun = nq * (size_t)reps;
    double *ow = malloc(nrun * sizeof *ow), *oc = malloc(nrun * sizeof *oc);
    double *fw = malloc(nrun * sizeof *fw), *fc = malloc(nrun * sizeof *fc);
    double first = 0, overlap = 0;
    top a, b;
    for (size_t i = 0; i < nq; i++) {
        double t0 = now_s(CLOCK_MONOTONIC);
        run_og(db, qs[i], &a); /* warm-up (the first one also maps the files) */
        if (i == 0) first = now_s(CLOCK_MONOTONIC) - t0;
        run_fts5(sel, ms[i], &b);
        size_t same = 0;
        for (size_t x = 0; x < a.n; x++)
            for (size_t y = 0; y < b.n; y++) same += !strcmp(a.slug[x], b.slug[y]);
        size_t den = a.n > b.n ? a.n : b.n;
        overlap += den ? (double)same / (double)den : 1.0;
    }
    size_t k = 0;
    for (int r = 0; r < reps; r++)
        for (size_t i = 0; i < nq; i++, k++) {
            double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
            run_og(db, qs[i], &a);
            ow[k] = now_s(CLOCK_MONOTONIC) - w0, oc[k] = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
            w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
            run_fts5(sel, ms[i], &b);
            fw[k] = now_s(CLOCK_MONOTONIC) - w0, fc[k] = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
        }
    printf("{\"queries\":%zu,\"reps\":%d,\"fts5_build_s\":%.3f,\"og_first_query_ms\":%.3f,"
           "\"og_wall_ms_p50\":%.3f,\"og_wall_ms_p95\":%.3f,\"og_cpu_ms_p50\":%.3f,\"og_cpu_ms_p95\":%.3f,"
           "\"fts5_wall_ms_p50\":%.3f,\"fts5_wall_ms_p95\":%.3f,\"fts5_cpu_ms_p50\":%.3f,\"fts5_cpu_ms_p95\":%.3f,"
           "\"top10_overlap\":%.3f}\n",
           nq, reps, fts5_build, first * 1e3, pct(ow, nrun, .5) * 1e3, pct(ow, nrun, .95) * 1e3,
           pct(oc, nrun, .5) * 1e3, pct(oc, nrun, .95) * 1e3, pct(fw, nrun, .5) * 1e3, pct(fw, nrun, .95) * 1e3,
           pct(fc, nrun, .5) * 1e3, pct(fc, nrun, .95) * 1e3, nq ? overlap / (double)nq : 0);
    free(ow), free(oc), free(fw), free(fc);
    og_db_close(db);
    sqlite3_finalize(sel);
    sqlite3_close(lite);
    return 0;
}
