/*
 * bench_graph.c — OmniGraph-C's side of the graph benchmark against Kùzu (issue 6,
 * bench/graph/run.sh, docs/benchmarks.md "Graph benchmark").  Everything goes through the
 * public C API (include/omnigraph.h), in one process, so process start-up is not measured.
 *
 * usage:
 *   bench_graph load  GRAPH SCHEMA.pg DATA.ndjson
 *       og_db_init a new graph at GRAPH, then times one og_db_load (overwrite) of DATA.
 *   bench_graph load-csv GRAPH SCHEMA.pg NODES.csv EDGES.csv
 *       the same through og_db_load_csv of the CSV files Kùzu's COPY reads (Node, then Link;
 *       bench/load/run.sh).
 *   bench_graph optimize GRAPH
 *       times one og_db_optimize (compaction, then the persisted indexes of the head).
 *   bench_graph query GRAPH QUERIES.gq STARTS.txt LO HI RESULTS REPS
 *       opens GRAPH and runs, for every start key of STARTS.txt, the queries lookup, hop1,
 *       hop2, hop3 of QUERIES.gq (parameter $k), then agg ($lo, $hi).  Per query kind: the
 *       first call after the handle opened ("first", the cold-handle number), one untimed
 *       warm-up pass, then REPS timed passes (the warm median); agg runs once, then 10 x REPS timed.  Writes every answer of the
 *       warm-up pass to RESULTS in the line format kuzu_bench.mjs writes too, so run.sh can
 *       check that both systems computed the same thing.
 *
 *   bench_graph patterns GRAPH PATTERNS.gq REPS
 *       opens GRAPH and runs each whole-graph count of PATTERNS.gq (two_paths, triangles,
 *       four_cycles; bench/graph/patterns.sh): the first call, then REPS timed calls (median),
 *       and prints the count, so patterns.sh can compare it with Kùzu's.  OG_BENCH_COUNT_DEGREES=0
 *       times the enumerating path instead of the counted last hop (engine/degree_count.h: the
 *       benchmark's one reach past the public API, to measure both paths in one build).
 *
 * Prints one JSON object per line on stdout.  OG_BENCH_CACHE_MB sets the handle's cache bound
 * (default 1024, the same budget run.sh gives Kùzu's buffer pool).  OG_BENCH_ONLY=NAME runs
 * only that query kind (for profiling one query with perf).  OG_BENCH_BRANCH=B queries branch
 * B's head instead of main's (warm traversals over a topology composed after a small commit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "omnigraph.h"

#define MAX_STARTS 1000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, size_t n, double q)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i];
}

static long max_rss_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* Memory of the process from /proc/self/status (Linux; zeros elsewhere): the peak RSS since the
 * last reset (VmHWM), and the current anonymous (private heap) and file-backed (mapped data and
 * index files: shared, evictable page cache) resident sizes, in KiB. */
typedef struct mem_kb {
    long hwm, anon, file;
} mem_kb;

static mem_kb mem_now(void)
{
    mem_kb m = {0, 0, 0};
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return m;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        long kb;
        if (sscanf(line, "VmHWM: %ld", &kb) == 1) m.hwm = kb;
        else if (sscanf(line, "RssAnon: %ld", &kb) == 1) m.anon = kb;
        else if (sscanf(line, "RssFile: %ld", &kb) == 1) m.file = kb;
    }
    fclose(f);
    return m;
}

/* Starts a new peak (VmHWM) for the next query kind; ru_maxrss follows it, so the process
 * peak is kept by the caller as the maximum of the per-kind peaks. */
static void mem_reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static int fail(og_status st, const char *what)
{
    fprintf(stderr, "bench_graph: %s failed: %s: %s\n", what, og_status_name(st), og_error_message());
    return 1;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap) break;
        cap *= 2;
        char *grown = realloc(buf, cap);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

static og_open_opts open_opts(void)
{
    const char *mb = getenv("OG_BENCH_CACHE_MB");
    og_open_opts o = {.actor = "bench_graph", .cache_bytes = (size_t)(mb ? atol(mb) : 1024) << 20};
    return o;
}

/* When each load stage began (og_load_opts.on_progress), for where the load's time goes. */
typedef struct load_phases {
    double validating, writing, indexing;
} load_phases;

static void on_load_progress(void *ctx, const og_load_progress *p)
{
    load_phases *ph = ctx;
    double t = now_us();
    if (!strcmp(p->stage, "validating")) ph->validating = t;
    else if (!strcmp(p->stage, "writing")) ph->writing = t;
    else if (!strcmp(p->stage, "indexing")) ph->indexing = t;
}

/* DATA is the NDJSON file, or with `nodes_csv` (load-csv) the edges' CSV file.  Besides the
 * total: the seconds of each stage — read and stage the records, validate, write the data files
 * and publish, then (after the publish) the key maps and topologies the load writes and the
 * text index of the key (og_db_load's automatic indexing); OG_BENCH_NO_INDEX=1 skips the text
 * index (og_load_opts.no_index). */
static int cmd_load(const char *graph, const char *schema_path, const char *data, const char *nodes_csv)
{
    size_t slen;
    char *schema = read_file(schema_path, &slen);
    if (!schema) return 1;
    og_open_opts oo = open_opts();
    og_db *db;
    double t0 = now_us();
    og_status st = og_db_init(&db, graph, schema_path, schema, slen, &oo);
    double t1 = now_us();
    free(schema);
    if (st != OG_OK) return fail(st, "og_db_init");
    load_phases ph = {0, 0, 0};
    const char *ni = getenv("OG_BENCH_NO_INDEX");
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE, .on_progress = on_load_progress, .progress_ctx = &ph,
                       .progress_every = 1000000, .no_index = ni && !strcmp(ni, "1")};
    og_receipt r;
    double t2 = now_us();
    if (nodes_csv) {
        og_load_csv_file files[2] = {{"Node", nodes_csv}, {"Link", data}};
        st = og_db_load_csv(&r, db, files, 2, ',', &lo);
    } else {
        st = og_db_load(&r, db, data, &lo);
    }
    double t3 = now_us();
    if (st != OG_OK) {
        og_db_close(db);
        return fail(st, nodes_csv ? "og_db_load_csv" : "og_db_load");
    }
    og_db_close(db);
    double s = (t3 - t2) / 1e6;
    double ix = ph.indexing ? ph.indexing : t3; /* no "indexing" call: nothing to index */
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"%s\",\"records\":%llu,\"init_ms\":%.1f,\"seconds\":%.3f,"
           "\"read_s\":%.3f,\"validate_s\":%.3f,\"write_publish_s\":%.3f,\"index_s\":%.3f,"
           "\"records_per_s\":%.0f,\"max_rss_kb\":%ld}\n",
           nodes_csv ? "load_csv" : "load", (unsigned long long)r.records, (t1 - t0) / 1e3, s,
           ph.validating ? (ph.validating - t2) / 1e6 : 0, ph.writing ? (ph.writing - ph.validating) / 1e6 : 0,
           ph.writing ? (ix - ph.writing) / 1e6 : 0, (t3 - ix) / 1e6, (double)r.records / s, max_rss_kb());
    return 0;
}

/* og_db_optimize of a loaded graph, timed: what a user runs after `omnigraph load` (it compacts
 * the load's fragments and writes the key maps and topologies of the head, so the first query
 * of a new process opens them instead of building them). */
static int cmd_optimize(const char *graph)
{
    og_open_opts oo = open_opts();
    og_db *db;
    og_status st = og_db_open(&db, graph, &oo);
    if (st != OG_OK) return fail(st, "og_db_open");
    og_optimize_result r;
    double t0 = now_us();
    st = og_db_optimize(&r, db, NULL, NULL);
    double t1 = now_us();
    og_db_close(db);
    if (st != OG_OK) return fail(st, "og_db_optimize");
    if (r.index_status != OG_OK) fprintf(stderr, "bench_graph: optimize: index build: %s\n", r.index_error);
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"optimize\",\"seconds\":%.3f,\"fragments_before\":%zu,"
           "\"fragments_after\":%zu,\"rows_rewritten\":%llu,\"index_status\":%d,\"max_rss_kb\":%ld}\n",
           (t1 - t0) / 1e6, r.fragments_before, r.fragments_after, (unsigned long long)r.rows_rewritten, r.index_status,
           max_rss_kb());
    return 0;
}

typedef struct bench {
    og_db *db;
    const char *src;
    size_t srclen;
    FILE *results;
    og_read_opts at; /* OG_BENCH_BRANCH: read that branch's head (e.g. one commit past an optimize) */
} bench;

/* Runs query `name` once; writes its answer to b->results when `record`; returns the time in
 * microseconds (query + reading every value + freeing), or a negative number on failure. */
static double run_one(bench *b, const char *name, const char *key, const char *params, int record)
{
    og_rows *rows;
    double t0 = now_us();
    og_status st = og_db_query(&rows, b->db, b->src, b->srclen, name, params, b->at.branch ? &b->at : NULL);
    if (st != OG_OK) {
        fail(st, name);
        return -1;
    }
    size_t n = og_rows_count(rows), len = 0;
    int64_t iv = 0, mv = 0;
    double fv = 0;
    const char *sv = "";
    /* Read every value inside the timed region (both sides materialise their answers). */
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(name, "lookup")) {
            iv = og_rows_int(rows, i, 0);
            sv = og_rows_string(rows, i, 1, &len);
        } else if (!strcmp(name, "agg")) {
            sv = og_rows_string(rows, i, 0, &len);
            iv = og_rows_int(rows, i, 1);
            fv = og_rows_float(rows, i, 2);
            mv = og_rows_int(rows, i, 3);
        } else {
            iv = og_rows_int(rows, i, 0);
        }
        if (record) {
            if (!strcmp(name, "lookup"))
                fprintf(b->results, "lookup %s %lld %.*s\n", key, (long long)iv, (int)len, sv);
            else if (!strcmp(name, "agg"))
                fprintf(b->results, "agg %.*s %lld %.3f %lld\n", (int)len, sv, (long long)iv, fv, (long long)mv);
            else
                fprintf(b->results, "%s %s %lld\n", name, key, (long long)iv);
        }
    }
    if (record && n == 0) fprintf(b->results, "%s %s none\n", name, key ? key : "-");
    og_rows_free(rows);
    return now_us() - t0;
}

/* CPU time of the whole process (every thread), µs: the first call's CPU is what it costs
 * whatever the machine's load, unlike its wall time. */
static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static long peak_kb; /* the process's peak RSS over every query kind (mem_reset_peak) */

/* One line per query kind; peak_rss_kb is the peak RSS while this kind ran (its first call,
 * warm-up and timed passes: what it adds to what the earlier kinds left resident), rss_anon_kb
 * / rss_file_kb what is resident right after it (private heap vs mapped files). */
static void report(const char *name, double first, double first_cpu, double *samples, size_t n)
{
    double med = quantile(samples, n, 0.5), p90 = quantile(samples, n, 0.9);
    mem_kb m = mem_now();
    if (m.hwm > peak_kb) peak_kb = m.hwm;
    printf("{\"system\":\"omnigraph-c\",\"query\":\"%s\",\"first_us\":%.1f,\"first_cpu_us\":%.1f,\"samples\":%zu,"
           "\"median_us\":%.1f,\"p90_us\":%.1f,\"peak_rss_kb\":%ld,\"rss_anon_kb\":%ld,\"rss_file_kb\":%ld}\n",
           name, first, first_cpu, n, med, p90, m.hwm, m.anon, m.file);
    fflush(stdout);
    mem_reset_peak();
}

static int cmd_query(const char *graph, const char *gq, const char *starts_path, const char *lo, const char *hi,
                     const char *results_path, int reps)
{
    static char *keys[MAX_STARTS];
    size_t nkeys = 0;
    char *starts = read_file(starts_path, NULL);
    if (!starts) return 1;
    for (char *save = NULL, *t = strtok_r(starts, "\n", &save); t && nkeys < MAX_STARTS; t = strtok_r(NULL, "\n", &save))
        keys[nkeys++] = t;
    bench b = {0};
    b.at.branch = getenv("OG_BENCH_BRANCH");
    char *src = read_file(gq, &b.srclen);
    if (!src) return 1;
    b.src = src;
    b.results = fopen(results_path, "w");
    if (!b.results) {
        perror(results_path);
        return 1;
    }
    og_open_opts oo = open_opts();
    double t0 = now_us();
    og_status st = og_db_open(&b.db, graph, &oo);
    if (st != OG_OK) return fail(st, "og_db_open");
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"open\",\"ms\":%.2f}\n", (now_us() - t0) / 1e3);

    static const char *kinds[] = {"lookup", "hop1", "hop2", "hop3"};
    size_t cap = nkeys * (size_t)reps + 10 * (size_t)reps + 1;
    double *samples = malloc(cap * sizeof *samples);
    char params[512];
    int rc = 0;
    const char *only = getenv("OG_BENCH_ONLY");
    for (size_t k = 0; k < 4 && rc == 0; k++) {
        if (only && strcmp(only, kinds[k])) continue;
        double first = 0, first_cpu = 0;
        size_t ns = 0;
        for (int pass = -1; pass < reps && rc == 0; pass++) {
            for (size_t i = 0; i < nkeys; i++) {
                snprintf(params, sizeof params, "{\"k\":\"%s\"}", keys[i]);
                double c0 = cpu_us();
                double us = run_one(&b, kinds[k], keys[i], params, pass == -1);
                if (us < 0) {
                    rc = 1;
                    break;
                }
                if (pass == -1 && i == 0) first = us, first_cpu = cpu_us() - c0;
                if (pass >= 0) samples[ns++] = us;
            }
        }
        if (rc == 0) report(kinds[k], first, first_cpu, samples, ns);
    }
    if (rc == 0 && (!only || !strcmp(only, "agg"))) {
        snprintf(params, sizeof params, "{\"lo\":%s,\"hi\":%s}", lo, hi);
        double c0 = cpu_us();
        double first = run_one(&b, "agg", NULL, params, 1);
        double first_cpu = cpu_us() - c0;
        size_t ns = 0;
        for (int pass = 0; pass < 10 * reps && first >= 0; pass++) {
            double us = run_one(&b, "agg", NULL, params, 0);
            if (us < 0) break;
            samples[ns++] = us;
        }
        if (first < 0 || ns != (size_t)(10 * reps)) rc = 1;
        else report("agg", first, first_cpu, samples, ns);
    }
    long rss = max_rss_kb();
    if (peak_kb > rss) rss = peak_kb;
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"done\",\"max_rss_kb\":%ld}\n", rss);
    free(samples);
    fclose(b.results);
    og_db_close(b.db);
    free(src);
    free(starts);
    return rc;
}

extern int og_exec_count_degrees; /* engine/degree_count.h */

static int cmd_patterns(const char *graph, const char *gq, int reps)
{
    const char *cd = getenv("OG_BENCH_COUNT_DEGREES");
    if (cd && !strcmp(cd, "0")) og_exec_count_degrees = 0;
    bench b = {0};
    char *src = read_file(gq, &b.srclen);
    if (!src) return 1;
    b.src = src;
    og_open_opts oo = open_opts();
    og_status st = og_db_open(&b.db, graph, &oo);
    if (st != OG_OK) return fail(st, "og_db_open");
    static const char *kinds[] = {"two_paths", "triangles", "four_cycles"};
    double *samples = malloc((size_t)reps * sizeof *samples), *cpus = malloc((size_t)reps * sizeof *cpus);
    int rc = 0;
    const char *only = getenv("OG_BENCH_ONLY");
    for (size_t k = 0; k < 3 && rc == 0; k++) {
        if (only && strcmp(only, kinds[k])) continue;
        double first = 0, first_cpu = 0, c0 = cpu_us();
        long long count = -1;
        for (int pass = -1; pass < reps && rc == 0; pass++) {
            og_rows *rows;
            double t0 = now_us(), u0 = cpu_us();
            st = og_db_query(&rows, b.db, b.src, b.srclen, kinds[k], NULL, NULL);
            if (st != OG_OK) {
                rc = fail(st, kinds[k]);
                break;
            }
            count = og_rows_count(rows) ? (long long)og_rows_int(rows, 0, 0) : -1;
            og_rows_free(rows);
            double us = now_us() - t0;
            if (pass == -1) first = us, first_cpu = cpu_us() - c0;
            else samples[pass] = us, cpus[pass] = cpu_us() - u0;
        }
        if (rc) break;
        printf("{\"system\":\"omnigraph-c\",\"query\":\"%s\",\"count\":%lld,\"first_us\":%.1f,\"first_cpu_us\":%.1f,"
               "\"samples\":%d,\"median_us\":%.1f,\"median_cpu_us\":%.1f}\n",
               kinds[k], count, first, first_cpu, reps, quantile(samples, (size_t)reps, 0.5),
               quantile(cpus, (size_t)reps, 0.5));
        fflush(stdout);
    }
    free(samples);
    free(cpus);
    og_db_close(b.db);
    free(src);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "patterns")) {
        int reps = atoi(argv[4]);
        return cmd_patterns(argv[2], argv[3], reps < 1 ? 1 : reps);
    }
    if (argc == 5 && !strcmp(argv[1], "load")) return cmd_load(argv[2], argv[3], argv[4], NULL);
    if (argc == 6 && !strcmp(argv[1], "load-csv")) return cmd_load(argv[2], argv[3], argv[5], argv[4]);
    if (argc == 3 && !strcmp(argv[1], "optimize")) return cmd_optimize(argv[2]);
    if (argc == 9 && !strcmp(argv[1], "query")) {
        int reps = atoi(argv[8]);
        if (reps < 1) reps = 1;
        return cmd_query(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7], reps);
    }
    fprintf(stderr,
            "usage: %s load GRAPH SCHEMA.pg DATA.ndjson\n"
            "       %s load-csv GRAPH SCHEMA.pg NODES.csv EDGES.csv\n"
            "       %s optimize GRAPH\n"
            "       %s query GRAPH QUERIES.gq STARTS.txt LO HI RESULTS REPS\n"
            "       %s patterns GRAPH PATTERNS.gq REPS\n",
            argv[0], argv[0], argv[0], argv[0], argv[0]);
    return 2;
}
