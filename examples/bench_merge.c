/*
 * bench_merge.c — the cost of a merge follows the divergence, not the table (issue 7, "Cost
 * follows the size of the divergence"; bench/merge/run.sh, docs/benchmarks.md "Merge
 * benchmark").  Everything goes through the public C API in one process:
 *
 *   1. og_db_load (overwrite) of N Person rows (default 1,000,000) in as many fragments as the
 *      loader makes by default;
 *   2. branch dev; ONE mutation on dev updates 10 rows spread over the table (tag = 1);
 *      one mutation on main updates one other row, so the merge is a real three-way merge;
 *   3. og_db_branch_merge dev -> main, timed, with its diff counters (fragments read /
 *      skipped, rows read) and the bytes it touched;
 *   4. the diff alone: og_db_changes from the load commit to dev's head (the merge's
 *      base->source delta), timed and measured;
 *   5. in the same run, a full scan of the table (a query reading every name and age), timed
 *      and measured the same way; the ratio scan / merge is printed.
 *
 * Bytes touched = Δ rchar of /proc/self/io (pread/read: the store's get and get_range) +
 * Δ minor page faults × page size (the local store maps table data files; every page first
 * touched through a mapping faults once).  Faults also count fresh heap pages, so it is an
 * upper bound of what was read, measured the same way for both.
 *
 * usage: bench_merge DIR [ROWS]   (DIR must not exist; it is left for inspection)
 * Prints one JSON object on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "omnigraph.h"

static const char *SCHEMA = "node Person { name: String @key  age: I32?  tag: I32? }\n";
static const char *MUTS =
    "query touch10() { update Person set { age: 999 } where tag = 1 }\n"
    "query touch_main($n: String) { update Person set { age: 1000 } where name = $n }\n";
static const char *SCAN = "query scan() { match { $p: Person } return { count($p.name) as n, sum($p.age) as s } }\n";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct meter {
    double t0;
    unsigned long long rchar0;
    long minflt0;
    double ms;
    unsigned long long bytes;
} meter;

static unsigned long long rchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    unsigned long long v = 0;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "rchar:", 6)) v = strtoull(line + 6, NULL, 10);
    if (f) fclose(f);
    return v;
}

static long minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static void meter_start(meter *m)
{
    m->rchar0 = rchar();
    m->minflt0 = minflt();
    m->t0 = now_ms();
}

static void meter_stop(meter *m)
{
    m->ms = now_ms() - m->t0;
    long pages = minflt() - m->minflt0;
    m->bytes = (rchar() - m->rchar0) + (unsigned long long)pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static int die(const char *what, og_status st)
{
    fprintf(stderr, "bench_merge: %s: %s: %s\n", what, og_status_name(st), og_error_message());
    return 1;
}

/* The integer after "key": in json text (0 when absent). */
static long long json_int(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = text ? strstr(text, pat) : NULL;
    return p ? strtoll(p + strlen(pat), NULL, 10) : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_merge DIR [ROWS]\n");
        return 2;
    }
    const char *dir = argv[1];
    long rows = argc > 2 ? atol(argv[2]) : 1000000;
    if (rows < 20) rows = 20;
    if (mkdir(dir, 0755) != 0) {
        perror(dir);
        return 2;
    }
    char data[1024], uri[1024];
    snprintf(data, sizeof data, "%s/people.jsonl", dir);
    snprintf(uri, sizeof uri, "%s/graph", dir);
    FILE *f = fopen(data, "w");
    if (!f) {
        perror(data);
        return 2;
    }
    long stride = rows / 10;
    for (long i = 0; i < rows; i++) {
        if (i % stride == 7 && i / stride < 10)
            fprintf(f, "{\"type\":\"Person\",\"data\":{\"name\":\"p%08ld\",\"age\":%ld,\"tag\":1}}\n", i, i % 100);
        else
            fprintf(f, "{\"type\":\"Person\",\"data\":{\"name\":\"p%08ld\",\"age\":%ld}}\n", i, i % 100);
    }
    fclose(f);

    og_db *db;
    og_status st = og_db_init(&db, uri, "bench.pg", SCHEMA, strlen(SCHEMA), NULL);
    if (st) return die("init", st);
    og_receipt r;
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    double t = now_ms();
    st = og_db_load(&r, db, data, &lo);
    double load_ms = now_ms() - t;
    if (st) return die("load", st);
    char base[32], dev_head[32];
    snprintf(base, sizeof base, "%s", r.commit);
    og_db_close(db);

    if ((st = og_db_open(&db, uri, NULL))) return die("open", st);
    if ((st = og_db_branch_create(db, "dev", NULL, NULL, NULL))) return die("branch create", st);
    t = now_ms();
    st = og_db_mutate(&r, db, MUTS, strlen(MUTS), "touch10", NULL, "dev", NULL);
    double mutate_ms = now_ms() - t;
    if (st) return die("mutate dev", st);
    snprintf(dev_head, sizeof dev_head, "%s", r.commit);
    if (r.affected_nodes != 10) {
        fprintf(stderr, "bench_merge: the dev mutation touched %llu rows, not 10\n", (unsigned long long)r.affected_nodes);
        return 1;
    }
    if ((st = og_db_mutate(&r, db, MUTS, strlen(MUTS), "touch_main", "{\"n\": \"p00000003\"}", "main", NULL)))
        return die("mutate main", st);
    og_db_close(db);

    /* the merge, on a fresh handle (cold object cache, like a CLI call) */
    if ((st = og_db_open(&db, uri, NULL))) return die("open", st);
    og_db_merge_opts mo = {"dev", "main", NULL, 0};
    char *out = NULL;
    meter mm;
    meter_start(&mm);
    st = og_db_branch_merge(&out, db, &mo);
    meter_stop(&mm);
    if (st) return die("merge", st);
    if (!strstr(out, "\"outcome\": \"merged\"")) {
        fprintf(stderr, "bench_merge: not a three-way merge: %s\n", out);
        return 1;
    }
    long long frag_read = json_int(out, "fragments_read"), frag_skipped = json_int(out, "fragments_skipped"),
              rows_read = json_int(out, "rows_read"), updated = json_int(out, "updated");
    og_free(out);
    og_db_close(db);

    /* the diff alone (what the merge's base->source delta computes), on a fresh handle */
    if ((st = og_db_open(&db, uri, NULL))) return die("open", st);
    og_changes_opts co = {base, dev_head, NULL, 0, 0};
    meter md;
    meter_start(&md);
    st = og_db_changes(&out, db, &co);
    meter_stop(&md);
    if (st) return die("changes", st);
    long long diff_updated = json_int(out, "updated"), diff_fr = json_int(out, "fragments_read"),
              diff_fs = json_int(out, "fragments_skipped"), diff_rows = json_int(out, "rows_read");
    og_free(out);
    og_db_close(db);
    if (diff_updated != 10) {
        fprintf(stderr, "bench_merge: the diff found %lld updates, not 10\n", diff_updated);
        return 1;
    }

    /* the full scan, on a fresh handle too */
    if ((st = og_db_open(&db, uri, NULL))) return die("open", st);
    meter ms;
    og_rows *rs = NULL;
    meter_start(&ms);
    st = og_db_query(&rs, db, SCAN, strlen(SCAN), "scan", NULL, NULL);
    meter_stop(&ms);
    if (st) return die("scan", st);
    long long scanned = og_rows_int(rs, 0, 0);
    og_rows_free(rs);
    og_db_close(db);
    if (scanned != rows) {
        fprintf(stderr, "bench_merge: the scan saw %lld rows, not %ld\n", scanned, rows);
        return 1;
    }

    struct stat sb;
    printf("{\"rows\": %ld, \"load_ms\": %.0f, \"mutate10_ms\": %.1f,\n"
           " \"merge\": {\"ms\": %.1f, \"bytes\": %llu, \"fragments_compared\": %lld, \"fragments_read\": %lld,"
           " \"fragments_skipped\": %lld, \"rows_read\": %lld, \"updated\": %lld},\n"
           " \"diff\": {\"ms\": %.1f, \"bytes\": %llu, \"fragments_read\": %lld, \"fragments_skipped\": %lld, \"rows_read\": %lld},\n"
           " \"scan\": {\"ms\": %.1f, \"bytes\": %llu},\n"
           " \"scan_over_merge\": {\"time\": %.2f, \"bytes\": %.2f}, \"scan_over_diff\": {\"time\": %.1f, \"bytes\": %.1f},"
           " \"ndjson_bytes\": %lld}\n",
           rows, load_ms, mutate_ms, mm.ms, mm.bytes, frag_read + frag_skipped, frag_read, frag_skipped, rows_read,
           updated, md.ms, md.bytes, diff_fr, diff_fs, diff_rows, ms.ms, ms.bytes, mm.ms > 0 ? ms.ms / mm.ms : 0.0,
           mm.bytes ? (double)ms.bytes / (double)mm.bytes : 0.0, md.ms > 0 ? ms.ms / md.ms : 0.0,
           md.bytes ? (double)ms.bytes / (double)md.bytes : 0.0,
           stat(data, &sb) == 0 ? (long long)sb.st_size : -1LL);
    return 0;
}
