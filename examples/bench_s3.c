/*
 * bench_s3.c — local vs object store, same run (bench/s3/run.sh drives it):
 *
 *   bench_s3 bench ROOT... [--rows N] [--commits K]
 *       For each root (a directory or s3://bucket/prefix, emptied first is the caller's job):
 *       (1) commit latency: K graph commits, each appending ONE row to a real Lance table
 *           (data file put + manifest put_if_absent + commit object + log entry publish);
 *       (2) a cold two-column scan of an N-row (default 1M) table of 8 columns written as 4
 *           fragments: a fresh store handle and an empty range cache, so every byte comes
 *           from the store (on a local root: mmap over the OS page cache).  On an s3:// root
 *           the scan runs with the prefetch pool off and on, to measure whether it pays; on a
 *           local root also through the range reader (OG_TABLE_RANGE_READS) for its overhead.
 *           Each scan figure is the median of 3.
 *       Prints one line per measurement and, for two roots, the ratio second/first.
 *
 *   bench_s3 graph-table ROOT
 *       For tests/interop/s3.test.mjs: writes table "people.lance" (three versions: append,
 *       append, delete), a graph on ROOT whose commits name those versions, and prints one
 *       JSON line per commit: {"commit", "table", "version", "rows"} — the version is read
 *       back through the graph (og_graph_snapshot_commit), as a reader would resolve it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "table/range_cache.h"
#include "table/table.h"
#include "util/error.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        og_status st_ = (x);                                                                       \
        if (st_ != OG_OK) {                                                                        \
            fprintf(stderr, "bench_s3: %s (%s:%d)\n", og_error_message(), __FILE__, __LINE__);    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char SCHEMA[] = "{\"types\":[{\"name\":\"Person\",\"table\":\"people.lance\"}]}";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- a small people table -------------------------------------------------------------- */

static void people_schema(og_lance_schema *s)
{
    *s = (og_lance_schema)OG_LANCE_SCHEMA_INIT;
    og_type str = {OG_T_STRING, OG_T_NULL, 0}, i64 = {OG_T_I64, OG_T_NULL, 0};
    CHECK(og_lance_schema_add_column(s, "id", str, 0, -1, 0, 1));
    CHECK(og_lance_schema_add_column(s, "age", i64, 1, -1, 1, 0));
}

static void people_rows(og_vector cols[2], long start, long n)
{
    og_type str = {OG_T_STRING, OG_T_NULL, 0}, i64 = {OG_T_I64, OG_T_NULL, 0};
    CHECK(og_vector_init(&cols[0], str));
    CHECK(og_vector_init(&cols[1], i64));
    for (long i = start; i < start + n; i++) {
        char b[32];
        int k = snprintf(b, sizeof b, "p%06ld", i);
        CHECK(og_vector_append_bytes(&cols[0], b, (size_t)k));
        if (i % 7 == 3) CHECK(og_vector_append_null(&cols[1]));
        else CHECK(og_vector_append_i64(&cols[1], 20 + i % 50));
    }
}

/* The graph writer of one commit: append `rows` rows (or delete offsets of fragment 0). */
typedef struct wctx {
    long start, rows;
    int delete_some;
} wctx;

static og_status write_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)attempt;
    wctx *w = ctx;
    const og_table_ref *ref = og_snapshot_table(base, "people.lance");
    og_table *t;
    OG_TRY(og_table_open(&t, og_graph_store(g), "people.lance"));
    og_table_txn *x;
    og_status st = og_table_txn_begin(&x, t, ref ? ref->version : 0, NULL);
    if (st == OG_OK && w->delete_some) {
        uint32_t offs[] = {0, 2, 4};
        st = og_table_txn_delete(x, 0, offs, 3);
    } else if (st == OG_OK) {
        og_vector cols[2];
        people_rows(cols, w->start, w->rows);
        st = og_table_txn_append(x, cols, 2, NULL);
        og_vector_free(&cols[0]);
        og_vector_free(&cols[1]);
    }
    uint64_t v = 0;
    if (st == OG_OK) st = og_table_txn_commit(x, &v);
    uint64_t rows = 0;
    if (st == OG_OK) {
        const og_manifest *m = og_table_txn_manifest(x);
        for (size_t i = 0; i < m->nfragments; i++) {
            uint64_t del = 0;
            roaring_bitmap_t *bm;
            st = og_table_fragment_deletions(t, &m->fragments[i], &bm);
            if (st != OG_OK) break;
            del = roaring_bitmap_get_cardinality(bm);
            roaring_bitmap_free(bm);
            rows += m->fragments[i].physical_rows - del;
        }
    }
    og_table_txn_free(x);
    og_table_close(t);
    if (st == OG_OK) st = og_draft_set_table(d, "people.lance", v, rows);
    if (st == OG_OK) st = og_draft_set_operation(d, w->delete_some ? OG_OP_MUTATE : OG_OP_LOAD, "append");
    return st;
}

/* A graph with an empty people table at version 1 as its genesis. */
static og_graph *new_graph(og_store *st)
{
    og_table *t;
    CHECK(og_table_open(&t, st, "people.lance"));
    og_lance_schema s;
    people_schema(&s);
    og_table_txn *x;
    uint64_t v;
    CHECK(og_table_txn_begin(&x, t, 0, &s));
    CHECK(og_table_txn_commit(x, &v));
    og_table_txn_free(x);
    og_lance_schema_free(&s);
    og_table_close(t);
    og_table_ref ref = {(char *)"people.lance", v, 0};
    og_graph_init_opts io = {SCHEMA, strlen(SCHEMA), &ref, 1, "bench", "genesis"};
    og_graph *g;
    CHECK(og_graph_init(&g, st, &io, NULL));
    return g;
}

static void print_commit(og_graph *g, const char *commit)
{
    og_snapshot *s;
    CHECK(og_graph_snapshot_commit(g, commit, &s));
    const og_table_ref *r = og_snapshot_table(s, "people.lance");
    printf("{\"commit\":\"%s\",\"table\":\"people\",\"version\":%llu,\"rows\":%llu}\n", commit,
           (unsigned long long)r->version, (unsigned long long)r->rows);
    og_snapshot_free(s);
}

static int cmd_graph_table(const char *root)
{
    og_store *st;
    CHECK(og_store_open(&st, root));
    og_graph *g = new_graph(st);
    wctx steps[] = {{0, 50, 0}, {50, 30, 0}, {0, 0, 1}};
    for (size_t i = 0; i < 3; i++) {
        og_write_opts o = {0};
        o.branch = "main";
        o.actor = "bench";
        og_write_result r;
        CHECK(og_graph_write(g, &o, write_fn, &steps[i], &r));
        print_commit(g, r.commit);
    }
    og_graph_close(g);
    og_store_close(st);
    return 0;
}

/* ---- the benchmark ---------------------------------------------------------------------- */

enum { WIDE = 8, NFRAGS = 4 };

static void commit_latency(og_store *st, int k, double *p50, double *p90)
{
    og_graph *g = new_graph(st);
    double *ms = calloc((size_t)k, sizeof *ms);
    for (int i = 0; i < k; i++) {
        wctx w = {i, 1, 0};
        og_write_opts o = {0};
        o.branch = "main";
        o.actor = "bench";
        double t0 = now_ms();
        CHECK(og_graph_write(g, &o, write_fn, &w, NULL));
        ms[i] = now_ms() - t0;
    }
    qsort(ms, (size_t)k, sizeof *ms, cmp_d);
    *p50 = ms[k / 2];
    *p90 = ms[(k * 9) / 10 < k ? (k * 9) / 10 : k - 1];
    free(ms);
    og_graph_close(g);
}

static uint64_t write_wide(og_store *st, long rows, uint64_t *bytes)
{
    og_table *t;
    CHECK(og_table_open(&t, st, "wide.lance"));
    og_lance_schema s = OG_LANCE_SCHEMA_INIT;
    og_type i64 = {OG_T_I64, OG_T_NULL, 0}, f64 = {OG_T_F64, OG_T_NULL, 0};
    for (int c = 0; c < WIDE; c++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", c);
        CHECK(og_lance_schema_add_column(&s, name, c % 2 ? f64 : i64, c, -1, 0, c == 0));
    }
    og_table_txn *x;
    uint64_t v;
    CHECK(og_table_txn_begin(&x, t, 0, &s));
    long per = (rows + NFRAGS - 1) / NFRAGS;
    for (long start = 0; start < rows; start += per) {
        long n = rows - start < per ? rows - start : per;
        og_table_fragment_writer *w;
        CHECK(og_table_txn_fragment_begin(x, &w));
        for (long b = 0; b < n; b += 65536) {
            long m = n - b < 65536 ? n - b : 65536;
            og_vector cols[WIDE];
            for (int c = 0; c < WIDE; c++) {
                CHECK(og_vector_init(&cols[c], c % 2 ? f64 : i64));
                for (long r = 0; r < m; r++) {
                    long row = start + b + r;
                    if (c % 2) CHECK(og_vector_append_f64(&cols[c], (double)row / 4.0));
                    else CHECK(og_vector_append_i64(&cols[c], row * WIDE + c));
                }
            }
            CHECK(og_table_fragment_write(w, cols, WIDE));
            for (int c = 0; c < WIDE; c++) og_vector_free(&cols[c]);
        }
        CHECK(og_table_fragment_finish(w, NULL));
    }
    CHECK(og_table_txn_commit(x, &v));
    og_table_txn_free(x);
    og_lance_schema_free(&s);
    og_manifest m;
    CHECK(og_table_load(t, v, &m));
    *bytes = 0;
    for (size_t i = 0; i < m.nfragments; i++) *bytes += m.fragments[i].files[0].size_bytes;
    og_manifest_free(&m);
    og_table_close(t);
    return v;
}

/* A cold scan of columns c2 (i64) and c5 (f64): new store handle, empty range cache. */
static double cold_scan1(const char *root, uint64_t v, long rows, unsigned threads, int force, og_range_stats *stats)
{
    og_range_config c;
    og_range_config_get(&c);
    c.prefetch_threads = threads;
    c.force = force;
    CHECK(og_range_configure(&c));
    og_range_stats_reset();
    double t0 = now_ms();
    og_store *st;
    CHECK(og_store_open(&st, root));
    og_table *t;
    CHECK(og_table_open(&t, st, "wide.lance"));
    og_manifest m;
    CHECK(og_table_load(t, v, &m));
    int32_t f[] = {2, 5};
    og_table_scan_opts o = {f, 2, NULL, 0, 0, 0};
    og_table_scan *s;
    CHECK(og_table_scan_open(&s, t, &m, &o));
    long seen = 0;
    int64_t sum = 0;
    for (;;) {
        og_table_batch b;
        CHECK(og_table_scan_next(s, &b));
        if (!b.nrows) break;
        for (size_t r = 0; r < b.nrows; r++) sum += og_vector_get_i64(&b.cols[0], r);
        seen += (long)b.nrows;
    }
    og_table_scan_free(s);
    og_manifest_free(&m);
    og_table_close(t);
    og_store_close(st);
    double ms = now_ms() - t0;
    og_range_stats_get(stats);
    int64_t want = 0;
    for (long r = 0; r < rows; r++) want += r * WIDE + 2;
    if (seen != rows || sum != want) {
        fprintf(stderr, "bench_s3: scan read %ld rows (sum %lld), expected %ld\n", seen, (long long)sum, rows);
        exit(1);
    }
    return ms;
}

/* The median of 3 cold scans. */
static double cold_scan(const char *root, uint64_t v, long rows, unsigned threads, int force, og_range_stats *stats)
{
    double ms[3];
    for (int i = 0; i < 3; i++) ms[i] = cold_scan1(root, v, rows, threads, force, stats);
    qsort(ms, 3, sizeof *ms, cmp_d);
    return ms[1];
}

static int cmd_bench(int argc, char **argv)
{
    long rows = 1000000;
    int commits = 20;
    const char *roots[4];
    int nroots = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) rows = atol(argv[++i]);
        else if (strcmp(argv[i], "--commits") == 0 && i + 1 < argc) commits = atoi(argv[++i]);
        else if (nroots < 4) roots[nroots++] = argv[i];
    }
    if (!nroots || rows <= 0 || commits <= 0) {
        fprintf(stderr, "usage: bench_s3 bench ROOT... [--rows N] [--commits K]\n");
        return 2;
    }
    double p50[4], p90[4], scan[4];
    for (int i = 0; i < nroots; i++) {
        og_store *st;
        CHECK(og_store_open(&st, roots[i]));
        const char *kind = og_store_is_local(st) ? "local" : "s3";
        commit_latency(st, commits, &p50[i], &p90[i]);
        printf("%-5s commit (1-row append, graph write): p50 %.2f ms  p90 %.2f ms  (%d commits)\n", kind, p50[i],
               p90[i], commits);
        uint64_t bytes;
        double tw = now_ms();
        uint64_t v = write_wide(st, rows, &bytes);
        tw = now_ms() - tw;
        int local = og_store_is_local(st);
        og_store_close(st);
        printf("%-5s wrote %ld rows x %d columns in %d fragments: %.1f MB in %.0f ms\n", kind, rows, WIDE, NFRAGS,
               (double)bytes / 1e6, tw);
        og_range_config cfg;
        og_range_config_get(&cfg);
        unsigned threads = cfg.prefetch_threads ? cfg.prefetch_threads : 4;
        og_range_stats rs;
        if (local) {
            scan[i] = cold_scan(roots[i], v, rows, threads, 0, &rs);
            printf("%-5s cold 2-column scan (mmap): %.1f ms\n", kind, scan[i]);
            double r0 = cold_scan(roots[i], v, rows, 0, 1, &rs);
            double r1 = cold_scan(roots[i], v, rows, threads, 1, &rs);
            printf("%-5s cold 2-column scan, range reads forced: %.1f ms without prefetch, %.1f ms with %u threads "
                   "(%llu reads, %.2f MB)\n",
                   kind, r0, r1, threads, (unsigned long long)rs.gets, (double)rs.bytes_fetched / 1e6);
        } else {
            double seq = cold_scan(roots[i], v, rows, 0, 0, &rs);
            printf("%-5s cold 2-column scan, no prefetch: %.1f ms  (%llu GETs, %.2f MB of %.1f MB)\n", kind, seq,
                   (unsigned long long)rs.gets, (double)rs.bytes_fetched / 1e6, (double)bytes / 1e6);
            scan[i] = cold_scan(roots[i], v, rows, threads, 0, &rs);
            printf("%-5s cold 2-column scan, prefetch %u threads: %.1f ms  (%llu GETs, %llu prefetched, "
                   "%llu waits, %.2f MB)  prefetch speed-up %.2fx\n",
                   kind, threads, scan[i], (unsigned long long)rs.gets, (unsigned long long)rs.prefetches,
                   (unsigned long long)rs.waits, (double)rs.bytes_fetched / 1e6, seq / scan[i]);
        }
    }
    if (nroots == 2)
        printf("ratio second/first: commit p50 %.1fx, cold scan %.1fx\n", p50[1] / p50[0], scan[1] / scan[0]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "graph-table") == 0) return cmd_graph_table(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "bench") == 0) return cmd_bench(argc - 2, argv + 2);
    fprintf(stderr, "usage: bench_s3 bench ROOT... [--rows N] [--commits K]\n"
                    "       bench_s3 graph-table ROOT\n");
    return 2;
}
