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
 *
 *   bench_search --compare GRAPH DOCS.ndjson QUERIES.txt [DETAILS.tsv]
 *
 * Ranking comparison (docs/search.md "Ranking against SQLite FTS5"): our bm25 top 10 (ties
 * broken by slug) against FTS5 top 10s in eight configurations (fts5_peer.h): tokenizer
 * stock 'porter unicode61' / 'porter ogstop unicode61' (+ our stop words) / 'oganalyzer
 * porter' (+ our word splitting, still Porter) / 'oganalyzer' (+ Snowball: our analyzer),
 * each ranked by FTS5's bm25() and by lucene_bm25() (+ our idf form), ties broken by slug.
 * Every query that differs from stock FTS5 is put in the first category whose configuration
 * gives our exact top 10: idf form, stop words, stop words + idf, word splitting, word
 * splitting + idf, stemmer, stemmer + idf; else "repeated term" when two query words share a
 * stem (FTS5 counts it twice, we once), else unexplained.  Prints one JSON line of
 * fractions and counts; DETAILS.tsv gets one line per query (query, category, both lists).
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
#include "fts5_peer.h"

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

/* A top-10 list; scores are filled when the query returns them (column 1). */
typedef struct ranked {
    char slug[TOP][64];
    double score[TOP];
    size_t n;
} ranked;

static const char *GQ = "query top($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } "
                        "order { bm25($d.body, $q) } limit 10 }";

static void run_og(og_db *db, const char *gq, const char *q, ranked *out)
{
    json_t *p = json_pack("{s:s}", "q", q);
    char *params = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    og_rows *r;
    if (og_db_query(&r, db, gq, strlen(gq), "top", params, NULL) != OG_OK) die("query", og_error_message());
    free(params);
    out->n = 0;
    for (size_t i = 0; i < og_rows_count(r) && i < TOP; i++) {
        size_t len;
        const char *s = og_rows_string(r, i, 0, &len);
        snprintf(out->slug[out->n], 64, "%.*s", (int)len, s);
        out->score[out->n++] = og_rows_float(r, i, 1);
    }
    og_rows_free(r);
}

static void run_fts5(sqlite3_stmt *st, const char *match, ranked *out)
{
    int scored = sqlite3_column_count(st) > 1;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    out->n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && out->n < TOP) {
        snprintf(out->slug[out->n], 64, "%s", (const char *)sqlite3_column_text(st, 0));
        out->score[out->n++] = scored ? sqlite3_column_double(st, 1) : 0;
    }
    sqlite3_reset(st);
}

static int compare_main(int argc, char **argv);

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--compare")) return compare_main(argc - 1, argv + 1);
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
    ranked a, b;
    for (size_t i = 0; i < nq; i++) {
        double t0 = now_s(CLOCK_MONOTONIC);
        run_og(db, GQ, qs[i], &a); /* warm-up (the first one also maps the files) */
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
            run_og(db, GQ, qs[i], &a);
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

/* ---- --compare ------------------------------------------------------------------------------ */

static const char *GQ_TIES = "query top($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } "
                             "order { bm25($d.body, $q), $d.slug } limit 10 }";

static int same_list(const ranked *a, const ranked *b)
{
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->slug[i], b->slug[i])) return 0;
    return 1;
}

static int same_set(const ranked *a, const ranked *b)
{
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++) {
        int found = 0;
        for (size_t k = 0; k < b->n && !found; k++) found = !strcmp(a->slug[i], b->slug[k]);
        if (!found) return 0;
    }
    return 1;
}

static void put_list(FILE *f, const ranked *r)
{
    fputc('\t', f);
    for (size_t i = 0; i < r->n; i++) fprintf(f, "%s%s:%.6g", i ? " " : "", r->slug[i], r->score[i]);
}

#define NTOK 4
#define NCFG (2 * NTOK)
static const char *CFG_TOK[NTOK] = {"porter unicode61", "porter ogstop unicode61", "oganalyzer porter", "oganalyzer"};
static const char *CATS[] = {"identical",      "idf form",       "stop words", "stop words + idf", "word splitting",
                             "word splitting + idf", "stemmer", "stemmer + idf", "repeated term", "unexplained"};
#define NCAT (sizeof CATS / sizeof CATS[0])

static int compare_main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_search --compare GRAPH DOCS.ndjson QUERIES.txt [DETAILS.tsv]\n");
        return 2;
    }
    sqlite3 *lite;
    if (sqlite3_open(":memory:", &lite) != SQLITE_OK) die("sqlite open", ":memory:");
    if (og_fts5_peer_register(lite) != SQLITE_OK) die("fts5 peer", sqlite3_errmsg(lite));
    char *err = NULL;
    double t0 = now_s(CLOCK_MONOTONIC);
    for (int t = 0; t < NTOK; t++) {
        char sql[256];
        snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE t%d USING fts5(slug UNINDEXED, body, tokenize='%s');", t,
                 CFG_TOK[t]);
        if (sqlite3_exec(lite, sql, NULL, NULL, &err) != SQLITE_OK) die("fts5 create", err);
    }
    if (sqlite3_exec(lite, "BEGIN", NULL, NULL, &err) != SQLITE_OK) die("fts5", err);
    sqlite3_stmt *ins[NTOK];
    for (int t = 0; t < NTOK; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO t%d(slug, body) VALUES (?1, ?2)", t);
        if (sqlite3_prepare_v2(lite, sql, -1, &ins[t], NULL) != SQLITE_OK) die("fts5 insert", sqlite3_errmsg(lite));
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) die("open", argv[2]);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL), *d = j ? json_object_get(j, "data") : NULL;
        if (!d) die("docs", "not a load-format line");
        for (int t = 0; t < NTOK; t++) {
            sqlite3_bind_text(ins[t], 1, json_string_value(json_object_get(d, "slug")), -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(ins[t], 2, json_string_value(json_object_get(d, "body")), -1, SQLITE_TRANSIENT);
            if (sqlite3_step(ins[t]) != SQLITE_DONE) die("fts5 insert", sqlite3_errmsg(lite));
            sqlite3_reset(ins[t]);
        }
        json_decref(j);
    }
    free(line);
    fclose(f);
    for (int t = 0; t < NTOK; t++) sqlite3_finalize(ins[t]);
    if (sqlite3_exec(lite, "COMMIT", NULL, NULL, &err) != SQLITE_OK) die("fts5 commit", err);
    double build = now_s(CLOCK_MONOTONIC) - t0;
    /* cfg 2t: table t by bm25(); 2t+1: table t by lucene_bm25(); NCFG: stock with FTS5's own tie order */
    sqlite3_stmt *sel[NCFG + 1];
    for (int c = 0; c <= NCFG; c++) {
        char sql[256];
        int t = c == NCFG ? 0 : c / 2;
        if (c == NCFG)
            snprintf(sql, sizeof sql, "SELECT slug, -bm25(t0) FROM t0 WHERE t0 MATCH ?1 ORDER BY bm25(t0) LIMIT 10");
        else if (c % 2 == 0)
            snprintf(sql, sizeof sql,
                     "SELECT slug, -bm25(t%d) FROM t%d WHERE t%d MATCH ?1 ORDER BY bm25(t%d), slug LIMIT 10", t, t, t, t);
        else
            snprintf(sql, sizeof sql,
                     "SELECT slug, lucene_bm25(t%d, 1) AS s FROM t%d WHERE t%d MATCH ?1 ORDER BY s DESC, slug LIMIT 10",
                     t, t, t);
        if (sqlite3_prepare_v2(lite, sql, -1, &sel[c], NULL) != SQLITE_OK) die("fts5 select", sqlite3_errmsg(lite));
    }
    og_db *db;
    if (og_db_open(&db, argv[1], NULL) != OG_OK) die("open", og_error_message());
    FILE *qf = fopen(argv[3], "r"), *det = argc > 4 ? fopen(argv[4], "w") : NULL;
    if (!qf) die("open", argv[3]);
    if (det) fprintf(det, "query\tcategory\tomnigraph\tfts5_stock\n");
    size_t nq = 0, cat[NCAT] = {0}, set_same = 0, own_ties_same = 0, full_same = 0, full_set = 0;
    char q[256];
    while (fgets(q, sizeof q, qf)) {
        q[strcspn(q, "\n")] = 0;
        if (!q[0]) continue;
        char tmp[256], m[600] = "";
        snprintf(tmp, sizeof tmp, "%s", q);
        for (char *save, *w = strtok_r(tmp, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            size_t l = strlen(m);
            snprintf(m + l, sizeof m - l, "%s\"%s\"", l ? " OR " : "", w);
        }
        ranked ours, fr[NCFG + 1];
        run_og(db, GQ_TIES, q, &ours);
        for (int c = 0; c <= NCFG; c++) run_fts5(sel[c], m, &fr[c]);
        size_t k = NCAT - 1;
        if (same_list(&ours, &fr[0])) k = 0;
        else
            for (int c = 1; c < NCFG; c++)
                if (same_list(&ours, &fr[c])) {
                    k = (size_t)c;
                    break;
                }
        if (k == NCAT - 1 && ogp_repeats_term(q)) k = NCAT - 2;
        cat[k]++;
        set_same += same_set(&ours, &fr[0]);
        own_ties_same += same_list(&ours, &fr[NCFG]);
        full_same += same_list(&ours, &fr[NCFG - 1]);
        full_set += same_set(&ours, &fr[NCFG - 1]);
        if (det) {
            fprintf(det, "%s\t%s", q, CATS[k]);
            put_list(det, &ours);
            put_list(det, &fr[0]);
            fputc('\n', det);
        }
        nq++;
    }
    fclose(qf);
    if (det) fclose(det);
    double den = nq ? (double)nq : 1;
    printf("{\"queries\":%zu,\"fts5_build_s\":%.3f,\"stock_same_order\":%.3f,\"stock_same_set\":%.3f,"
           "\"stock_own_ties_same_order\":%.3f,\"comparable_same_order\":%.3f,\"comparable_same_set\":%.3f,\"categories\":{",
           nq, build, (double)cat[0] / den, (double)set_same / den, (double)own_ties_same / den, (double)full_same / den,
           (double)full_set / den);
    for (size_t i = 0; i < NCAT; i++) printf("%s\"%s\":%zu", i ? "," : "", CATS[i], cat[i]);
    printf("}}\n");
    og_db_close(db);
    for (int c = 0; c <= NCFG; c++) sqlite3_finalize(sel[c]);
    sqlite3_close(lite);
    return 0;
}
