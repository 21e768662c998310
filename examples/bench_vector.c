/*
 * bench_vector.c — OmniGraph-C's side of the vector benchmark (bench/search/vector_run.sh,
 * docs/benchmarks.md "Vector search").  Everything but the data generator goes through the
 * public C API, in one process.
 *
 * usage:
 *   bench_vector gen DIR N Q
 *       writes DIR/base.f32 (N x 128 float32, clustered: 1,000 Gaussian clusters whose
 *       centres overlap), DIR/queries.f32 (Q x 128, same distribution), DIR/gt.u32 (the exact
 *       top 10 row numbers of each query, by brute force) and DIR/data.ndjson (nodes
 *       Vec { slug "v<row>", emb }) — fixed seed, so every run builds the same data.
 *   bench_vector run DIR GRAPH
 *       og_db_init + og_db_load of data.ndjson into GRAPH (timed), og_db_index_build of the
 *       vector index (timed), then every query exact (og_query_opts.exact) and through the
 *       index: median latency of a warm pass (after one untimed warm-up pass) and recall@10
 *       against gt.u32; and the memory-bandwidth bound of an exact scan (N x 128 x 4 bytes /
 *       measured memcpy bandwidth).
 *   bench_vector query DIR GRAPH EXACT
 *       only the two query passes on a graph `run` built (EXACT 1 = exact search), in a fresh
 *       process: also the latency of its very first query (opening the indexes) and the median
 *       of its first pass.
 *
 * Prints one JSON object per line on stdout.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "omnigraph.h"

#define DIM 128
#define K 10
#define CLUSTERS 1000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* CPU seconds of every thread of the process so far: on a shared machine the wall time of a
 * build says more about the neighbours than about the build. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static uint64_t rng = 0x853c49e6748fea9bull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static float gauss(void) { return (float)(sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand())); }

static int write_all(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static void *read_all(const char *dir, const char *name, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(len > 0 ? (size_t)len : 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(p);
        return NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return p;
}

static float l2sq(const float *a, const float *b)
{
    float s = 0;
    for (int d = 0; d < DIM; d++) {
        float t = a[d] - b[d];
        s += t * t;
    }
    return s;
}

static int cmd_gen(const char *dir, size_t n, size_t q)
{
    float *cent = malloc((size_t)CLUSTERS * DIM * sizeof *cent);
    float *base = malloc(n * DIM * sizeof *base), *qs = malloc(q * DIM * sizeof *qs);
    uint32_t *gt = malloc(q * K * sizeof *gt);
    if (!cent || !base || !qs || !gt) return 1;
    for (size_t i = 0; i < (size_t)CLUSTERS * DIM; i++) cent[i] = gauss() * 1.5f;
    for (size_t i = 0; i < n + q; i++) {
        float *v = i < n ? base + i * DIM : qs + (i - n) * DIM;
        size_t c = (size_t)(urand() * CLUSTERS);
        for (int d = 0; d < DIM; d++) v[d] = cent[c * DIM + d] + gauss();
    }
    for (size_t j = 0; j < q; j++) { /* exact top 10, ties by row */
        float bd[K];
        size_t nb = 0;
        for (size_t i = 0; i < n; i++) {
            float d = l2sq(qs + j * DIM, base + i * DIM);
            if (nb == K && d >= bd[K - 1]) continue;
            size_t at = nb < K ? nb++ : K - 1;
            while (at > 0 && bd[at - 1] > d) {
                bd[at] = bd[at - 1];
                gt[j * K + at] = gt[j * K + at - 1];
                at--;
            }
            bd[at] = d;
            gt[j * K + at] = (uint32_t)i;
        }
    }
    if (write_all(dir, "base.f32", base, n * DIM * sizeof *base) ||
        write_all(dir, "queries.f32", qs, q * DIM * sizeof *qs) || write_all(dir, "gt.u32", gt, q * K * sizeof *gt))
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/data.ndjson", dir);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "{\"type\":\"Vec\",\"data\":{\"slug\":\"v%zu\",\"emb\":[", i);
        for (int d = 0; d < DIM; d++) fprintf(f, d ? ",%.9g" : "%.9g", (double)base[i * DIM + d]);
        fputs("]}}\n", f);
    }
    if (fclose(f) != 0) return 1;
    printf("{\"phase\":\"gen\",\"n\":%zu,\"queries\":%zu,\"dim\":%d}\n", n, q, DIM);
    free(cent);
    free(base);
    free(qs);
    free(gt);
    return 0;
}

static int fail(og_status st, const char *what)
{
    fprintf(stderr, "bench_vector: %s: %s\n", what, og_error_message());
    return (int)st ? 1 : 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *QUERY = "query knn($v: Vector(128)) { match { $d: Vec } return { $d.slug } "
                           "order { nearest($d.emb, $v) } limit 10 }";

/* One pass over the queries: latencies (us) into lat, hits against gt into *hits. */
static int pass(og_db *db, const float *qs, size_t q, const uint32_t *gt, int exact, double *lat, size_t *hits)
{
    char *params = malloc(DIM * 24 + 32);
    *hits = 0;
    og_query_opts qo = {.exact = exact};
    for (size_t j = 0; j < q; j++) {
        size_t at = (size_t)sprintf(params, "{\"v\":[");
        for (int d = 0; d < DIM; d++) at += (size_t)sprintf(params + at, d ? ",%.9g" : "%.9g", (double)qs[j * DIM + d]);
        strcpy(params + at, "]}");
        og_rows *rows = NULL;
        double t0 = now_us();
        og_status st = og_db_query_ex(&rows, db, QUERY, strlen(QUERY), NULL, params, NULL, &qo);
        lat[j] = now_us() - t0;
        if (st != OG_OK) {
            free(params);
            return fail(st, "query");
        }
        for (size_t r = 0; r < og_rows_count(rows); r++) {
            size_t len;
            const char *slug = og_rows_string(rows, r, 0, &len);
            char tmp[32] = {0};
            memcpy(tmp, slug, len < sizeof tmp - 1 ? len : sizeof tmp - 1);
            unsigned long row = strtoul(tmp + 1, NULL, 10);
            for (int k = 0; k < K; k++) *hits += gt[j * K + k] == row;
        }
        og_rows_free(rows);
    }
    free(params);
    return 0;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n ? v[n / 2] : 0;
}

static double memcpy_gbps(void)
{
    size_t sz = (size_t)256 << 20;
    char *a = malloc(sz), *b = malloc(sz);
    memset(a, 1, sz);
    memset(b, 2, sz);
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now_us();
        memcpy(b, a, sz);
        double s = (now_us() - t0) / 1e6;
        a[r] = b[sz - 1 - (size_t)r]; /* keep the copy */
        if ((double)sz / s / 1e9 > best) best = (double)sz / s / 1e9;
    }
    free(a);
    free(b);
    return best;
}

static int cmd_run(const char *dir, const char *graph)
{
    size_t blen, qlen, glen;
    float *base = read_all(dir, "base.f32", &blen);
    float *qs = read_all(dir, "queries.f32", &qlen);
    uint32_t *gt = read_all(dir, "gt.u32", &glen);
    if (!base || !qs || !gt) return 1;
    size_t n = blen / (DIM * sizeof(float)), q = qlen / (DIM * sizeof(float));
    free(base);
    static const char schema[] = "node Vec { slug: String @key  emb: Vector(128) @index }\n";
    og_open_opts oo = {.actor = "bench_vector", .cache_bytes = (size_t)4096 << 20};
    og_db *db;
    og_status st = og_db_init(&db, graph, "vec.pg", schema, strlen(schema), &oo);
    if (st) return fail(st, "og_db_init");
    char data[4096];
    snprintf(data, sizeof data, "%s/data.ndjson", dir);
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    og_receipt rc;
    double t0 = now_us(), c0 = cpu_s();
    st = og_db_load(&rc, db, data, &lo);
    if (st) return fail(st, "og_db_load");
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"load\",\"n\":%zu,\"seconds\":%.2f,\"cpu_seconds\":%.2f}\n", n,
           (now_us() - t0) / 1e6, cpu_s() - c0);
    double *lat = malloc(q * sizeof *lat);
    size_t hits;
    /* exact: one warm-up pass (loads the column), then the timed pass */
    if (pass(db, qs, q, gt, 1, lat, &hits) || pass(db, qs, q, gt, 1, lat, &hits)) return 1;
    double gbps = memcpy_gbps();
    double bound_ms = (double)n * DIM * 4 / (gbps * 1e9) * 1e3;
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"exact\",\"median_ms\":%.3f,\"recall10\":%.4f,"
           "\"memcpy_gbps\":%.2f,\"bound_ms\":%.3f}\n",
           median(lat, q) / 1e3, (double)hits / (double)(q * K), gbps, bound_ms);
    fflush(stdout);
    char *report = NULL;
    t0 = now_us();
    c0 = cpu_s();
    st = og_db_index_build(&report, db, NULL, "vector", "Vec.emb");
    if (st) return fail(st, "og_db_index_build");
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"index\",\"seconds\":%.2f,\"cpu_seconds\":%.2f}\n",
           (now_us() - t0) / 1e6, cpu_s() - c0);
    og_free(report);
    fflush(stdout);
    if (pass(db, qs, q, gt, 0, lat, &hits) || pass(db, qs, q, gt, 0, lat, &hits)) return 1;
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"ann\",\"median_ms\":%.3f,\"recall10\":%.4f}\n", median(lat, q) / 1e3,
           (double)hits / (double)(q * K));
    og_db_close(db);
    free(lat);
    free(qs);
    free(gt);
    return 0;
}

/* Queries only, on a graph `run` built (for profiling): EXACT 1 = exact search. */
static int cmd_query(const char *dir, const char *graph, int exact)
{
    size_t qlen, glen;
    float *qs = read_all(dir, "queries.f32", &qlen);
    uint32_t *gt = read_all(dir, "gt.u32", &glen);
    if (!qs || !gt) return 1;
    size_t q = qlen / (DIM * sizeof(float)), hits;
    og_open_opts oo = {.actor = "bench_vector", .cache_bytes = (size_t)4096 << 20};
    og_db *db;
    og_status st = og_db_open(&db, graph, &oo);
    if (st) return fail(st, "og_db_open");
    double *lat = malloc(q * sizeof *lat);
    if (pass(db, qs, q, gt, exact, lat, &hits)) return 1;
    double first = lat[0], cold = median(lat, q); /* the fresh process's first query; its first pass */
    if (pass(db, qs, q, gt, exact, lat, &hits)) return 1;
    printf("{\"system\":\"omnigraph-c\",\"phase\":\"%s\",\"first_ms\":%.3f,\"first_pass_median_ms\":%.3f,"
           "\"median_ms\":%.3f,\"recall10\":%.4f}\n",
           exact ? "exact" : "ann", first / 1e3, cold / 1e3, median(lat, q) / 1e3, (double)hits / (double)(q * K));
    og_db_close(db);
    free(lat);
    free(qs);
    free(gt);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "query")) return cmd_query(argv[2], argv[3], atoi(argv[4]));
    if (argc == 5 && !strcmp(argv[1], "gen")) return cmd_gen(argv[2], (size_t)atol(argv[3]), (size_t)atol(argv[4]));
    if (argc == 4 && !strcmp(argv[1], "run")) return cmd_run(argv[2], argv[3]);
    fprintf(stderr, "usage: bench_vector gen DIR N Q | bench_vector run DIR GRAPH\n");
    return 2;
}
