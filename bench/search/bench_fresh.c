/*
 * bench_fresh.c — search at its defaults, in process (issue 35; bench/search/defaults_run.sh,
 * docs/benchmarks.md "Search defaults").  A user's first search is usually the first call of a
 * new process (a CLI call, a short-lived worker), so each run of this program is one fresh
 * process: it times open + the first query (wall and process CPU, from main), then the warm
 * median of later queries in the same process.  The same program does it for SQLite FTS5, so
 * ours and the peer are measured by one harness, one process each, over the same texts.
 *
 *   bench_fresh og GRAPH DIR SHAPE N [START] [WARM]
 *       SHAPE lookup | bm25 | nearest (ours, defaults: index files when present).  Queries
 *       from DIR/queries.tsv (bench_hybrid gen: tag, year, text, vector); a lookup asks for
 *       the slug d<(i * 9973) mod N>.  The first call uses query START (default 0), the warm
 *       pass WARM (default 20) queries after it, once to warm and once timed.
 *   bench_fresh fts5 DB DIR bm25 N [START] [WARM]
 *       the same for an FTS5 table built by fts5-build: MATCH 'a OR b OR c' ORDER BY bm25 LIMIT 10.
 *   bench_fresh fts5-build DB DOCS.ndjson
 *       the FTS5 table (tokenize 'porter unicode61', one transaction, then 'optimize').
 *   bench_fresh recall GRAPH DIR NQ GT.tsv [EF,EF,...]
 *       recall@10 of nearest at the defaults against --exact over the first NQ queries; writes
 *       the exact top-10 slugs (query number, slug) to GT.tsv for the peers' recall.  With a
 *       list of search beams, one more JSON line per beam (og_query_opts.ef) over the same
 *       exact top 10s: recall and mean CPU ms per query (a warm process).
 * One JSON line per run.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omnigraph.h"

#define NQ 100

static double clk(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_fresh: %s: %s\n", what, msg ? msg : "");
    exit(1);
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char text[NQ][160], vec[NQ][2048];
static size_t nq;

static void read_queries(const char *dir)
{
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/queries.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f) die("open", path);
    while (nq < NQ && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strtok(line, "\t"), *b = strtok(NULL, "\t"), *c = strtok(NULL, "\t"), *d = strtok(NULL, "\t");
        if (!a || !b || !c || !d) continue;
        snprintf(text[nq], sizeof text[nq], "%s", c);
        snprintf(vec[nq], sizeof vec[nq], "%s", d);
        nq++;
    }
    fclose(f);
    if (!nq) die("queries", path);
}

static const char GQ[] =
    "query lookup($s: String) { match { $d: Doc { slug: $s } } return { $d.slug, $d.year } }\n"
    "query bm25($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } "
    "order { bm25($d.body, $q) } limit 10 }\n"
    "query nearest($v: Vector(64)) { match { $d: Doc } return { $d.slug } order { nearest($d.emb, $v) } limit 10 }\n";

static og_db *og;
static sqlite3 *lite;
static sqlite3_stmt *fts;
static size_t ndocs;

static uint32_t og_ef; /* og_query_opts.ef of og_run's non-exact queries (0 = the default) */

static og_rows *og_run(const char *shape, size_t q, int exact)
{
    char params[4096];
    if (!strcmp(shape, "lookup")) snprintf(params, sizeof params, "{\"s\":\"d%zu\"}", q * 9973 % ndocs);
    else if (!strcmp(shape, "bm25")) snprintf(params, sizeof params, "{\"q\":\"%s\"}", text[q % nq]);
    else snprintf(params, sizeof params, "{\"v\":[%s]}", vec[q % nq]);
    og_query_opts o = {.exact = exact, .ef = exact ? 0 : og_ef};
    og_rows *r;
    if (og_db_query_ex(&r, og, GQ, sizeof GQ - 1, shape, params, NULL, &o) != OG_OK) die(shape, og_error_message());
    return r;
}

static void fts_run(size_t q)
{
    char m[512], *w, *save = NULL, buf[160];
    size_t k = 0;
    snprintf(buf, sizeof buf, "%s", text[q % nq]);
    m[0] = 0;
    for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
        k += (size_t)snprintf(m + k, sizeof m - k, "%s%s", k ? " OR " : "", w);
    sqlite3_bind_text(fts, 1, m, -1, SQLITE_TRANSIENT);
    while (sqlite3_step(fts) == SQLITE_ROW) (void)sqlite3_column_text(fts, 0);
    sqlite3_reset(fts);
}

static void open_sys(int is_og, const char *path)
{
    if (is_og) {
        if (og_db_open(&og, path, NULL) != OG_OK) die("open", og_error_message());
        return;
    }
    if (sqlite3_open_v2(path, &lite, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) die("sqlite open", path);
    if (sqlite3_prepare_v2(lite, "SELECT slug FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs) LIMIT 10", -1, &fts,
                           NULL) != SQLITE_OK)
        die("fts5 prepare", sqlite3_errmsg(lite));
}

static void one(int is_og, const char *shape, size_t q)
{
    if (is_og) og_rows_free(og_run(shape, q, 0));
    else fts_run(q);
}

static int cmd_run(int is_og, const char *path, const char *shape, size_t start, size_t warm, double w0, double c0)
{
    open_sys(is_og, path);
    one(is_og, shape, start);
    double first_w = clk(CLOCK_MONOTONIC) - w0, first_c = clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
    double *lw = malloc(warm * sizeof *lw), *lc = malloc(warm * sizeof *lc);
    if (!lw || !lc) die("memory", "");
    for (size_t i = 0; i < warm; i++) one(is_og, shape, start + 1 + i); /* warm-up pass */
    for (size_t i = 0; i < warm; i++) {
        double a = clk(CLOCK_MONOTONIC), b = clk(CLOCK_PROCESS_CPUTIME_ID);
        one(is_og, shape, start + 1 + i);
        lw[i] = clk(CLOCK_MONOTONIC) - a;
        lc[i] = clk(CLOCK_PROCESS_CPUTIME_ID) - b;
    }
    qsort(lw, warm, sizeof *lw, dcmp);
    qsort(lc, warm, sizeof *lc, dcmp);
    printf("{\"system\":\"%s\",\"shape\":\"%s\",\"first_wall_ms\":%.3f,\"first_cpu_ms\":%.3f,"
           "\"warm_wall_ms\":%.3f,\"warm_cpu_ms\":%.3f,\"warm\":%zu}\n",
           is_og ? "og" : "fts5", shape, first_w, first_c, warm ? lw[warm / 2] : 0, warm ? lc[warm / 2] : 0, warm);
    free(lw);
    free(lc);
    if (is_og) og_db_close(og);
    else {
        sqlite3_finalize(fts);
        sqlite3_close(lite);
    }
    return 0;
}

static int cmd_fts5_build(const char *db_path, const char *docs)
{
    double t0 = clk(CLOCK_MONOTONIC), c0 = clk(CLOCK_PROCESS_CPUTIME_ID);
    sqlite3 *db;
    char *err = NULL;
    if (sqlite3_open(db_path, &db) != SQLITE_OK) die("sqlite open", db_path);
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
    size_t cap = 0, n = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *j = json_loads(line, 0, NULL), *d = j ? json_object_get(j, "data") : NULL;
        if (!d) die("docs", "not a load-format line");
        sqlite3_bind_text(ins, 1, json_string_value(json_object_get(d, "slug")), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, json_string_value(json_object_get(d, "body")), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE) die("fts5 insert", sqlite3_errmsg(db));
        sqlite3_reset(ins);
        json_decref(j);
        n++;
    }
    free(line);
    fclose(f);
    sqlite3_finalize(ins);
    if (sqlite3_exec(db, "COMMIT; INSERT INTO docs(docs) VALUES('optimize');", NULL, NULL, &err) != SQLITE_OK)
        die("fts5 commit", err);
    sqlite3_close(db);
    printf("{\"system\":\"fts5\",\"phase\":\"build\",\"docs\":%zu,\"wall_s\":%.2f,\"cpu_s\":%.2f}\n", n,
           (clk(CLOCK_MONOTONIC) - t0) / 1e3, (clk(CLOCK_PROCESS_CPUTIME_ID) - c0) / 1e3);
    return 0;
}

static void slugs(const og_rows *r, char out[10][32], size_t *n)
{
    *n = og_rows_count(r) < 10 ? og_rows_count(r) : 10;
    for (size_t i = 0; i < *n; i++) {
        size_t len;
        const char *s = og_rows_string(r, i, 0, &len);
        snprintf(out[i], 32, "%.*s", (int)len, s);
    }
}

static int cmd_recall(const char *graph, size_t want, const char *gt_path, const char *efs)
{
    open_sys(1, graph);
    FILE *gt = fopen(gt_path, "w");
    if (!gt) die("open", gt_path);
    size_t hits = 0, total = 0;
    double ann_c = 0;
    for (size_t q = 0; q < want && q < nq; q++) {
        char a[10][32], e[10][32];
        size_t na, ne;
        double c = clk(CLOCK_PROCESS_CPUTIME_ID);
        og_rows *r = og_run("nearest", q, 0);
        ann_c += clk(CLOCK_PROCESS_CPUTIME_ID) - c;
        slugs(r, a, &na);
        og_rows_free(r);
        r = og_run("nearest", q, 1);
        slugs(r, e, &ne);
        og_rows_free(r);
        for (size_t i = 0; i < ne; i++) {
            fprintf(gt, "%zu\t%s\n", q, e[i]);
            for (size_t j = 0; j < na; j++) hits += !strcmp(e[i], a[j]);
        }
        total += ne;
    }
    fclose(gt);
    printf("{\"system\":\"og\",\"phase\":\"recall\",\"queries\":%zu,\"recall10\":%.4f,\"ann_cpu_ms_mean\":%.3f}\n",
           want < nq ? want : nq, total ? (double)hits / (double)total : 0, ann_c / (double)(want < nq ? want : nq));
    for (const char *e = efs; e && *e;) { /* the beam sweep over the exact top 10s just written */
        og_ef = (uint32_t)strtoul(e, (char **)&e, 10);
        if (*e == ',') e++;
        FILE *g = fopen(gt_path, "r");
        if (!g || !og_ef) die("sweep", gt_path);
        char line[128];
        size_t gq[NQ * 10], ng = 0;
        char gs[NQ * 10][32];
        while (ng < NQ * 10 && fgets(line, sizeof line, g) && sscanf(line, "%zu\t%31s", &gq[ng], gs[ng]) == 2) ng++;
        fclose(g);
        hits = 0;
        ann_c = 0;
        size_t nqs = want < nq ? want : nq;
        for (size_t q = 0; q < nqs; q++) {
            char a[10][32];
            size_t na;
            double c = clk(CLOCK_PROCESS_CPUTIME_ID);
            og_rows *r = og_run("nearest", q, 0);
            ann_c += clk(CLOCK_PROCESS_CPUTIME_ID) - c;
            slugs(r, a, &na);
            og_rows_free(r);
            for (size_t i = 0; i < ng; i++)
                if (gq[i] == q)
                    for (size_t j = 0; j < na; j++) hits += !strcmp(gs[i], a[j]);
        }
        printf("{\"system\":\"og\",\"phase\":\"sweep\",\"ef\":%u,\"queries\":%zu,\"recall10\":%.4f,\"ann_cpu_ms_mean\":%.3f}\n",
               og_ef, nqs, total ? (double)hits / (double)total : 0, ann_c / (double)nqs);
    }
    og_ef = 0;
    og_db_close(og);
    return 0;
}

int main(int argc, char **argv)
{
    double w0 = clk(CLOCK_MONOTONIC), c0 = clk(CLOCK_PROCESS_CPUTIME_ID);
    if (argc == 4 && !strcmp(argv[1], "fts5-build")) return cmd_fts5_build(argv[2], argv[3]);
    if ((argc == 6 || argc == 7) && !strcmp(argv[1], "recall")) {
        read_queries(argv[3]);
        return cmd_recall(argv[2], (size_t)strtoull(argv[4], NULL, 10), argv[5], argc == 7 ? argv[6] : NULL);
    }
    if (argc >= 6 && (!strcmp(argv[1], "og") || !strcmp(argv[1], "fts5"))) {
        int is_og = !strcmp(argv[1], "og");
        const char *shape = argv[4];
        if (strcmp(shape, "bm25") && (!is_og || (strcmp(shape, "lookup") && strcmp(shape, "nearest"))))
            die("shape", shape);
        read_queries(argv[3]);
        ndocs = (size_t)strtoull(argv[5], NULL, 10);
        if (!ndocs) die("N", argv[5]);
        return cmd_run(is_og, argv[2], shape, argc > 6 ? (size_t)strtoull(argv[6], NULL, 10) : 0,
                       argc > 7 ? (size_t)strtoull(argv[7], NULL, 10) : 20, w0, c0);
    }
    fprintf(stderr, "usage: bench_fresh og GRAPH DIR lookup|bm25|nearest N [START] [WARM]\n"
                    "       bench_fresh fts5 DB DIR bm25 N [START] [WARM]\n"
                    "       bench_fresh fts5-build DB DOCS.ndjson\n"
                    "       bench_fresh recall GRAPH DIR NQ GT.tsv [EF,EF,...]\n");
    return 2;
}
