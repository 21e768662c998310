/*
 * bench_hybrid.c — the hybrid query of issue 15 (filter + traversal + rrf(nearest, bm25)) against
 * the sum of its parts, each run alone, in one process over the public C API
 * (bench/search/hybrid_run.sh, docs/benchmarks.md "Hybrid search").  Why the sum of the parts:
 * a user without a multimodal engine runs the traversal in a graph store, the vector search in
 * a vector store and the text search in a text engine, then joins the answers; the hybrid query
 * should cost no more than those parts together.
 *
 *   bench_hybrid gen DIR N
 *       DIR/data.ndjson: N documents Doc { slug, year (1990..2024), body (Zipf words of a
 *       5,000-word vocabulary, 8-40 words, plus one of 100 topic words), emb Vector(64)
 *       (clustered by topic) }, 200 tags Tag { name }, and 1-3 Tagged edges per document
 *       (Zipf over tags); DIR/queries.tsv: Q = 100 (tag, year, text, vector) tuples.  Fixed seed.
 *   bench_hybrid run GRAPH DIR [REPS]
 *       Each query of queries.tsv once to warm, then REPS (default 3) timed passes; per query
 *       shape the median wall-clock latency (ms) and the median thread-CPU time over every timed
 *       run (the steadier number on a shared machine).  One JSON line.
 *
 * Query shapes (all with limit 10 where they rank):
 *   hybrid      match { $t: Tag { name: $tag }  $d tagged $t  $d.year >= $y }
 *               order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 10
 *   traversal   match { $t: Tag { name: $tag }  $d tagged $t }         return count($d)
 *   filter      match { $d: Doc  $d.year >= $y }                       return count($d)
 *   nearest     match { $d: Doc } order { nearest($d.emb, $v) } limit 10   (vector index)
 *   bm25        match { $d: Doc } order { bm25($d.body, $q) } limit 10     (full-text index)
 *   rrf         match { $d: Doc } order { rrf(nearest, bm25) } limit 10    (unfiltered fusion,
 *               its nearest arm through the vector index) and rrf_exact (the same, --exact)
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omnigraph.h"

#define DIM 64
#define TOPICS 100
#define TAGS 200
#define VOCAB 5000
#define NQ 100

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* CPU time of the calling thread: on a shared machine wall time mostly measures the neighbours. */
static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static float gauss(void) { return (float)(sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand())); }

/* Zipf(1.1) over 1..n by inversion of a precomputed CDF. */
static double *zipf_cdf(size_t n)
{
    double *c = malloc(n * sizeof *c), s = 0;
    if (!c) exit(1);
    for (size_t i = 0; i < n; i++) c[i] = (s += 1.0 / pow((double)(i + 1), 1.1));
    for (size_t i = 0; i < n; i++) c[i] /= s;
    return c;
}
static size_t zipf(const double *c, size_t n)
{
    double u = urand();
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c[mid] < u) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* A pronounceable word for vocabulary entry i (distinct for distinct i). */
static void word(char *out, size_t i)
{
    static const char *syl[] = {"ka", "ro", "mi", "te", "su", "la", "no", "vi", "pe", "zu", "da", "fo", "gi", "ha", "je", "qu"};
    size_t k = 0;
    do {
        memcpy(out + k, syl[i % 16], 2);
        k += 2;
        i /= 16;
    } while (i);
    memcpy(out + k, "x", 2); /* a suffix no stemmer removes */
}

static int cmd_gen(const char *dir, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/data.ndjson", dir);
    FILE *f = fopen(path, "w");
    if (!f) return perror(path), 1;
    float *cent = malloc((size_t)TOPICS * DIM * sizeof *cent);
    if (!cent) return 1;
    for (size_t i = 0; i < (size_t)TOPICS * DIM; i++) cent[i] = gauss() * 1.5f;
    double *wc = zipf_cdf(VOCAB), *tc = zipf_cdf(TAGS);
    char w[32];
    for (size_t t = 0; t < TAGS; t++) fprintf(f, "{\"type\":\"Tag\",\"data\":{\"name\":\"tag%zu\"}}\n", t);
    for (size_t i = 0; i < n; i++) {
        size_t topic = (size_t)(urand() * TOPICS);
        fprintf(f, "{\"type\":\"Doc\",\"data\":{\"slug\":\"d%zu\",\"year\":%d,\"body\":\"topic%zu", i,
                1990 + (int)(urand() * 35), topic);
        size_t words = 8 + (size_t)(urand() * 33);
        for (size_t k = 0; k < words; k++) {
            word(w, zipf(wc, VOCAB));
            fprintf(f, " %s", w);
        }
        fputs("\",\"emb\":[", f);
        for (int d = 0; d < DIM; d++) fprintf(f, d ? ",%.6g" : "%.6g", (double)(cent[topic * DIM + d] + gauss()));
        fputs("]}}\n", f);
    }
    for (size_t i = 0; i < n; i++) {
        size_t m = 1 + (size_t)(urand() * 3), prev = SIZE_MAX;
        for (size_t k = 0; k < m; k++) {
            size_t t = zipf(tc, TAGS);
            if (t == prev) continue;
            prev = t;
            fprintf(f, "{\"edge\":\"Tagged\",\"from\":\"d%zu\",\"to\":\"tag%zu\"}\n", i, t);
        }
    }
    if (fclose(f) != 0) return 1;
    snprintf(path, sizeof path, "%s/queries.tsv", dir);
    f = fopen(path, "w");
    if (!f) return perror(path), 1;
    for (size_t q = 0; q < NQ; q++) {
        size_t topic = (size_t)(urand() * TOPICS);
        /* a tag among the 40 most used, a year keeping about half the documents */
        fprintf(f, "tag%zu\t%d\ttopic%zu", (size_t)(urand() * 40), 2000 + (int)(urand() * 10), topic);
        for (int k = 0; k < 2; k++) {
            word(w, zipf(wc, VOCAB));
            fprintf(f, " %s", w);
        }
        fputc('\t', f);
        for (int d = 0; d < DIM; d++) fprintf(f, d ? ",%.6g" : "%.6g", (double)(cent[topic * DIM + d] + gauss()));
        fputc('\n', f);
    }
    if (fclose(f) != 0) return 1;
    printf("{\"phase\":\"gen\",\"docs\":%zu,\"tags\":%d,\"queries\":%d,\"dim\":%d}\n", n, TAGS, NQ, DIM);
    free(cent);
    free(wc);
    free(tc);
    return 0;
}

static const char QUERIES[] =
    "query hybrid($tag: String, $y: I32, $q: String, $v: Vector(64)) {\n"
    "  match { $t: Tag { name: $tag }  $d tagged $t  $d.year >= $y }\n"
    "  return { $d.slug, rrf(nearest($d.emb, $v), bm25($d.body, $q)) as s }\n"
    "  order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 10 }\n"
    "query traversal($tag: String) { match { $t: Tag { name: $tag }  $d tagged $t } return { count($d) as n } }\n"
    "query filter($y: I32) { match { $d: Doc  $d.year >= $y } return { count($d) as n } }\n"
    "query nearest($v: Vector(64)) { match { $d: Doc } return { $d.slug, nearest($d.emb, $v) as dist }\n"
    "  order { nearest($d.emb, $v) } limit 10 }\n"
    "query bm25($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 10 }\n"
    "query rrf($q: String, $v: Vector(64)) { match { $d: Doc }\n"
    "  return { $d.slug, rrf(nearest($d.emb, $v), bm25($d.body, $q)) as s }\n"
    "  order { rrf(nearest($d.emb, $v), bm25($d.body, $q)) } limit 10 }\n";

enum { S_HYBRID, S_TRAVERSAL, S_FILTER, S_NEAREST, S_BM25, S_RRF, S_RRF_EXACT, NSHAPES };
static const char *shape_name[NSHAPES] = {"hybrid", "traversal", "filter", "nearest", "bm25", "rrf", "rrf_exact"};

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double run_one(og_db *db, int shape, const char *tag, const char *year, const char *text, const char *vec,
                      size_t *rows, double *cpu)
{
    char params[4096];
    const char *name = shape_name[shape];
    switch (shape) {
    case S_HYBRID:
        snprintf(params, sizeof params, "{\"tag\":\"%s\",\"y\":%s,\"q\":\"%s\",\"v\":[%s]}", tag, year, text, vec);
        break;
    case S_TRAVERSAL: snprintf(params, sizeof params, "{\"tag\":\"%s\"}", tag); break;
    case S_FILTER: snprintf(params, sizeof params, "{\"y\":%s}", year); break;
    case S_NEAREST: snprintf(params, sizeof params, "{\"v\":[%s]}", vec); break;
    case S_BM25: snprintf(params, sizeof params, "{\"q\":\"%s\"}", text); break;
    default:
        name = "rrf";
        snprintf(params, sizeof params, "{\"q\":\"%s\",\"v\":[%s]}", text, vec);
    }
    og_query_opts qo = {.exact = shape == S_RRF_EXACT};
    og_rows *r;
    double t0 = now_ms(), c0 = cpu_ms();
    if (og_db_query_ex(&r, db, QUERIES, strlen(QUERIES), name, params, NULL, &qo) != OG_OK) {
        fprintf(stderr, "bench_hybrid: %s: %s\n", name, og_error_message());
        exit(1);
    }
    double t = now_ms() - t0;
    *cpu = cpu_ms() - c0;
    *rows = og_rows_count(r);
    og_rows_free(r);
    return t;
}

static int cmd_run(const char *graph, const char *dir, int reps)
{
    og_db *db;
    if (og_db_open(&db, graph, NULL) != OG_OK) {
        fprintf(stderr, "bench_hybrid: open %s: %s\n", graph, og_error_message());
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/queries.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return perror(path), 1;
    static char tag[NQ][32], year[NQ][8], text[NQ][128], vec[NQ][2048];
    size_t nq = 0;
    char line[4096];
    while (nq < NQ && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strtok(line, "\t"), *b = strtok(NULL, "\t"), *c = strtok(NULL, "\t"), *d = strtok(NULL, "\t");
        if (!a || !b || !c || !d) continue;
        snprintf(tag[nq], sizeof tag[nq], "%s", a);
        snprintf(year[nq], sizeof year[nq], "%s", b);
        snprintf(text[nq], sizeof text[nq], "%s", c);
        snprintf(vec[nq], sizeof vec[nq], "%s", d);
        nq++;
    }
    fclose(f);
    double *lat[NSHAPES], *cpu[NSHAPES];
    size_t rows_sum[NSHAPES] = {0};
    for (int s = 0; s < NSHAPES; s++) {
        lat[s] = malloc(nq * (size_t)reps * sizeof **lat);
        cpu[s] = malloc(nq * (size_t)reps * sizeof **cpu);
    }
    size_t rows;
    double c;
    for (size_t q = 0; q < nq; q++) /* warm: index files mapped, analyser caches filled */
        for (int s = 0; s < NSHAPES; s++) run_one(db, s, tag[q], year[q], text[q], vec[q], &rows, &c);
    for (int r = 0; r < reps; r++)
        for (size_t q = 0; q < nq; q++)
            for (int s = 0; s < NSHAPES; s++) {
                size_t at = (size_t)r * nq + q;
                lat[s][at] = run_one(db, s, tag[q], year[q], text[q], vec[q], &rows, &cpu[s][at]);
                if (r == 0) rows_sum[s] += rows;
            }
    printf("{\"phase\":\"hybrid\",\"queries\":%zu,\"reps\":%d", nq, reps);
    double med[NSHAPES], cmed[NSHAPES];
    for (int s = 0; s < NSHAPES; s++) {
        qsort(lat[s], nq * (size_t)reps, sizeof **lat, dcmp);
        qsort(cpu[s], nq * (size_t)reps, sizeof **cpu, dcmp);
        med[s] = lat[s][nq * (size_t)reps / 2];
        cmed[s] = cpu[s][nq * (size_t)reps / 2];
        printf(",\"%s_ms\":%.3f,\"%s_cpu_ms\":%.3f,\"%s_rows\":%.1f", shape_name[s], med[s], shape_name[s], cmed[s],
               shape_name[s], (double)rows_sum[s] / (double)nq);
        free(lat[s]);
        free(cpu[s]);
    }
    double parts = med[S_TRAVERSAL] + med[S_FILTER] + med[S_NEAREST] + med[S_BM25];
    double cparts = cmed[S_TRAVERSAL] + cmed[S_FILTER] + cmed[S_NEAREST] + cmed[S_BM25];
    printf(",\"parts_ms\":%.3f,\"hybrid_over_parts\":%.3f,\"parts_cpu_ms\":%.3f,\"hybrid_over_parts_cpu\":%.3f}\n",
           parts, med[S_HYBRID] / parts, cparts, cmed[S_HYBRID] / cparts);
    og_db_close(db);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "gen")) return cmd_gen(argv[2], (size_t)strtoull(argv[3], NULL, 10));
    if (argc >= 4 && !strcmp(argv[1], "run")) return cmd_run(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 3);
    fprintf(stderr, "usage: bench_hybrid gen DIR N | bench_hybrid run GRAPH DIR [REPS]\n");
    return 2;
}
