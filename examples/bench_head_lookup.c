/*
 * bench_head_lookup.c — benchmark of the graph authority (issue 3, docs/graph-authority.md):
 *
 *   1. commit latency of a one-row-equivalent write on local disk: one small immutable effect
 *      object (stand-in for a one-row Lance data file + manifest), the commit object, the
 *      publish (put_if_absent of the next log entry) and the hint — median and p99;
 *   2. head-resolution time for a branch with 10 and with 10,000 commits, through a fresh
 *      handle (stored hint) and a warm handle (in-memory hint), and their ratio (target
 *      <= 1.5); plus the hint-less list fallback for contrast.
 *
 * Usage: bench_head_lookup [dir] [big_commits]   (dir defaults to a new /tmp directory,
 * removed afterwards; big_commits defaults to 10000).  Prints plain "key: value" lines.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph/graph.h"
#include "util/error.h"

#define LAT_COMMITS 300
#define LOOKUPS 2000

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

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static void die(const char *what)
{
    fprintf(stderr, "bench_head_lookup: %s: %s\n", what, og_error_message());
    exit(1);
}

static void rmrf(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        unlink(dir);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) rmrf(path);
        else unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* The write: one ~1 KiB immutable effect object, then table t at version+1 with one more row. */
static og_status one_row_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)attempt;
    int with_effect = *(int *)ctx;
    const og_table_ref *t = og_snapshot_table(base, "t");
    uint64_t v = t ? t->version : 0, rows = t ? t->rows : 0;
    if (with_effect) {
        static char payload[1024];
        char uuid[OG_UUID_LEN + 1], key[128];
        OG_TRY(og_uuid_new(uuid));
        snprintf(key, sizeof key, "tables/t/data/%s.lance", uuid);
        OG_TRY(og_store_put(og_graph_store(g), key, payload, sizeof payload));
    }
    OG_TRY(og_draft_set_table(d, "t", v + 1, rows + 1));
    return og_draft_set_operation(d, OG_OP_LOAD, "append");
}

static void commit_n(og_graph *g, const char *branch, int n, int with_effect, double *lat)
{
    og_write_opts o = {0};
    o.branch = branch;
    o.actor = "bench";
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        if (og_graph_write(g, &o, one_row_fn, &with_effect, NULL) != OG_OK) die("commit");
        if (lat) lat[i] = now_us() - t0;
    }
}

typedef struct lookup_times {
    double fresh_median, warm_median, list_median;
} lookup_times;

static lookup_times time_lookups(og_store *st, og_graph *warm, const char *branch)
{
    static double v[LOOKUPS];
    lookup_times r;
    og_ref_entry e;
    /* Fresh handle per lookup: stored hint → entry → one miss probe → recheck. */
    int n = LOOKUPS / 4;
    for (int i = 0; i < n; i++) {
        og_graph *g;
        if (og_graph_open(&g, st, NULL) != OG_OK) die("open");
        double t0 = now_us();
        if (og_graph_head_entry(g, branch, &e) != OG_OK) die("head");
        v[i] = now_us() - t0;
        og_graph_close(g);
    }
    r.fresh_median = pct(v, (size_t)n, 0.5);
    /* Warm handle: in-memory hint and cached entry → one miss probe + recheck. */
    for (int i = 0; i < LOOKUPS; i++) {
        double t0 = now_us();
        if (og_graph_head_entry(warm, branch, &e) != OG_OK) die("head");
        v[i] = now_us() - t0;
    }
    r.warm_median = pct(v, LOOKUPS, 0.5);
    /* No hints at all: the list fallback (what the hint saves). */
    og_graph_opts o = {0};
    o.use_hint = -1;
    n = 50;
    for (int i = 0; i < n; i++) {
        og_graph *g;
        if (og_graph_open(&g, st, &o) != OG_OK) die("open");
        double t0 = now_us();
        if (og_graph_head_entry(g, branch, &e) != OG_OK) die("head");
        v[i] = now_us() - t0;
        og_graph_close(g);
    }
    r.list_median = pct(v, (size_t)n, 0.5);
    return r;
}

int main(int argc, char **argv)
{
    char tmpl[] = "/tmp/og-bench-head-XXXXXX";
    const char *dir = argc > 1 ? argv[1] : mkdtemp(tmpl);
    int big = argc > 2 ? atoi(argv[2]) : 10000;
    if (!dir || big < 11) {
        fprintf(stderr, "usage: bench_head_lookup [dir] [big_commits>10]\n");
        return 2;
    }
    og_store *st;
    if (og_store_open(&st, dir) != OG_OK) die("store open");
    const char *schema = "{\"types\":[]}";
    og_graph_init_opts io = {schema, strlen(schema), NULL, 0, "bench", NULL};
    og_graph *g;
    if (og_graph_init(&g, st, &io, NULL) != OG_OK) die("init");

    static double lat[LAT_COMMITS];
    commit_n(g, "main", LAT_COMMITS, 1, lat);
    double med = pct(lat, LAT_COMMITS, 0.5), p99 = pct(lat, LAT_COMMITS, 0.99);
    printf("commit_latency_median_us: %.1f\n", med);
    printf("commit_latency_p99_us: %.1f\n", p99);

    if (og_branch_create(g, "small", "main", NULL, "bench", NULL) != OG_OK) die("branch small");
    if (og_branch_create(g, "big", "main", NULL, "bench", NULL) != OG_OK) die("branch big");
    commit_n(g, "small", 10, 0, NULL);
    double t0 = now_us();
    commit_n(g, "big", big, 0, NULL);
    printf("build_%d_commits_s: %.2f\n", big, (now_us() - t0) / 1e6);

    lookup_times s = time_lookups(st, g, "small"), b = time_lookups(st, g, "big");
    printf("head_lookup_fresh_10_us: %.2f\n", s.fresh_median);
    printf("head_lookup_fresh_%d_us: %.2f\n", big, b.fresh_median);
    printf("head_lookup_fresh_ratio: %.2f\n", b.fresh_median / s.fresh_median);
    printf("head_lookup_warm_10_us: %.2f\n", s.warm_median);
    printf("head_lookup_warm_%d_us: %.2f\n", big, b.warm_median);
    printf("head_lookup_warm_ratio: %.2f\n", b.warm_median / s.warm_median);
    printf("head_lookup_nohint_10_us: %.2f\n", s.list_median);
    printf("head_lookup_nohint_%d_us: %.2f\n", big, b.list_median);
    printf("head_lookup_nohint_ratio: %.2f\n", b.list_median / s.list_median);
    double ratio = b.fresh_median / s.fresh_median;
    if (b.warm_median / s.warm_median > ratio) ratio = b.warm_median / s.warm_median;
    printf("target_ratio_le_1.5: %s\n", ratio <= 1.5 ? "met" : "MISSED");

    og_graph_close(g);
    og_store_close(st);
    if (argc <= 1) rmrf(dir);
    return 0;
}
