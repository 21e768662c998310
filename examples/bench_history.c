/*
 * bench_history.c — flat history (issue 17, "Flat history (prove it)"; bench/history/run.sh,
 * docs/benchmarks.md "Flat history").  Why: agents write a graph one small commit at a time,
 * so nothing a user does may get slower as the history grows.  This program builds a history
 * through the public C API in one process (minutes for 10,000 commits, not an hour) and
 * measures the everyday operations at whatever depth the history has:
 *
 *   bench_history init DIR                 a graph (Person rows) + 100 branches, ~10 commits
 *   bench_history grow DIR COMMITS         one-row commits on main (the same table) until
 *                                          main's first-parent history holds COMMITS commits
 *   bench_history compare SMALL BIG REPS  the operations below on two such graphs (e.g. 10 and
 *                                          10,000 commits), alternating rounds so that a change
 *                                          of machine load hits both; medians and BIG / SMALL
 *   bench_history cli OMNIGRAPH SMALL BIG REPS  four of them through the CLI (a fresh process
 *                                          each), alternating the same way
 *
 * Operations (`compare`; reads also on a fresh handle = open + operation + close): head lookup
 * (a key lookup query at main's head), one-row commit (insert), `changes` between that commit
 * and its parent, commit list --limit 20 of main (and --limit 10: at 10 commits --limit 20
 * prints only 10), branch create, merge of a 10-row divergence
 * (a branch whose one mutation updates 10 rows while its target changed one other row: a
 * three-way merge; only the merge is timed).  Writes go to branches forked from main's head
 * for the round and deleted after it (untimed), so main keeps its history length and its 100
 * branches.  `grow` also prints the amortised cost of every 1,000 one-row commits, automatic
 * compaction included.
 * Prints one JSON object per mode on stdout.  DIR holds the graph at DIR/graph.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "omnigraph.h"

extern char **environ;

#define BASE_ROWS 1000   /* grp = i % 100: 10 rows per group */
#define BRANCHES 100

static const char *SCHEMA = "node Person { name: String @key  age: I32?  grp: I32? }\n";
static const char *Q =
    "query get($n: String) { match { $p: Person { name: $n } } return { $p.age } }\n"
    "query add($n: String, $a: I32) { insert Person { name: $n, age: $a } }\n"
    "query touch($g: I32, $a: I32) { update Person set { age: $a } where grp = $g }\n"
    "query touch1($n: String, $a: I32) { update Person set { age: $a } where name = $n }\n";

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, og_status st)
{
    fprintf(stderr, "bench_history: %s: %s: %s\n", what, og_status_name(st), og_error_message());
    exit(1);
}

static og_db *open_db(const char *dir)
{
    char uri[1024];
    snprintf(uri, sizeof uri, "%s/graph", dir);
    og_db *db;
    og_status st = og_db_open(&db, uri, NULL);
    if (st) die("open", st);
    return db;
}

/* Commits in main's first-parent history (one full listing). */
static long history_len(og_db *db)
{
    char *out = NULL;
    og_status st = og_db_commit_list(&out, db, "main", 0);
    if (st) die("commit list", st);
    long n = 0;
    for (const char *p = out; (p = strstr(p, "\"created_at\"")); p++) n++;
    og_free(out);
    return n;
}

static void add_row(og_db *db, const char *name, int age, og_receipt *r)
{
    char params[128];
    snprintf(params, sizeof params, "{\"n\": \"%s\", \"a\": %d}", name, age);
    og_status st = og_db_mutate(r, db, Q, strlen(Q), "add", params, "main", NULL);
    if (st) die("one-row commit", st);
}

static int cmd_init(const char *dir)
{
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
    for (int i = 0; i < BASE_ROWS; i++)
        fprintf(f, "{\"type\":\"Person\",\"data\":{\"name\":\"p%06d\",\"age\":%d,\"grp\":%d}}\n", i, i % 90, i % 100);
    fclose(f);
    og_db *db;
    og_status st = og_db_init(&db, uri, "bench.pg", SCHEMA, strlen(SCHEMA), NULL);
    if (st) die("init", st);
    og_receipt r;
    og_load_opts lo = {.mode = OG_LOAD_OVERWRITE};
    if ((st = og_db_load(&r, db, data, &lo))) die("load", st);
    for (int i = 0; i < BRANCHES; i++) {
        char name[32];
        snprintf(name, sizeof name, "b%03d", i);
        if ((st = og_db_branch_create(db, name, NULL, NULL, NULL))) die("branch create", st);
    }
    long n = history_len(db);
    og_db_close(db);
    printf("{\"mode\": \"init\", \"history\": %ld, \"branches\": %d, \"rows\": %d}\n", n, BRANCHES + 1, BASE_ROWS);
    return 0;
}

static int cmd_grow(const char *dir, long target)
{
    og_db *db = open_db(dir);
    long n = history_len(db);
    double t0 = now_ms();
    long made = 0;
    double tchunk = t0;
    og_receipt r;
    /* auto-optimize commits land on main's first-parent history too: re-count now and then */
    while (n < target) {
        long batch = target - n;
        for (long i = 0; i < batch; i++, made++) {
            char name[32];
            snprintf(name, sizeof name, "h%07ld", made + n);
            add_row(db, name, (int)(made % 100), &r);
            if (made % 1000 == 999) { /* the amortised cost of the last 1,000 (automatic compaction included) */
                double t = now_ms();
                printf("{\"mode\": \"grow_chunk\", \"history\": %ld, \"ms_per_commit\": %.3f}\n", n + made + 1,
                       (t - tchunk) / 1000);
                tchunk = t;
            }
        }
        n = history_len(db);
    }
    og_db_close(db);
    printf("{\"mode\": \"grow\", \"history\": %ld, \"one_row_commits\": %ld, \"seconds\": %.1f}\n", n, made,
           (now_ms() - t0) / 1e3);
    return 0;
}

/* One graph of the comparison: its handle, its main head, and per-operation samples. */
enum { OP_LOOKUP, OP_LOOKUP_COLD, OP_COMMIT, OP_CHANGES, OP_CHANGES_COLD, OP_LIST, OP_LIST_COLD, OP_LIST10,
       OP_BRANCH, OP_MERGE, OP_N };
static const char *OP_NAME[OP_N] = {"lookup", "lookup_cold", "commit", "changes", "changes_cold",
                                    "list20", "list20_cold", "list10", "branch_create", "merge10"};
enum { CLI_LOOKUP, CLI_COMMIT, CLI_LIST, CLI_BRANCH, CLI_N };
static const char *CLI_NAME[CLI_N] = {"lookup", "commit", "list20", "branch_create"};

typedef struct side {
    const char *dir;
    char uri[1024];
    og_db *db;
    long history;
    double *t[OP_N]; /* wall ms */
    double *c[OP_N]; /* the thread's CPU ms: what the operation costs, without the waits of a loaded machine */
} side;

static void tmpname(char *out, size_t cap, const char *what, int rep)
{
    snprintf(out, cap, "%s%lx_%d", what, (unsigned long)getpid(), rep);
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double since(double t0)
{
    return now_ms() - t0;
}

/* One round of every operation on one graph.  Writes go to branches forked from main's head
 * for the round and deleted afterwards (untimed), so main keeps its history length and its
 * 100 branches: the graph at "10 commits" stays at 10 for every round. */
static void round_ops(side *g, int rep)
{
    og_status st;
    char params[256], w[64], s[64], x[64];
    og_db *db = g->db;
    tmpname(w, sizeof w, "w", rep);
    tmpname(s, sizeof s, "s", rep);
    tmpname(x, sizeof x, "x", rep);

    snprintf(params, sizeof params, "{\"n\": \"p%06d\"}", rep * 37 % BASE_ROWS);
    og_rows *rs = NULL;
    double t0 = now_ms(), c0 = cpu_ms();
    if ((st = og_db_query(&rs, db, Q, strlen(Q), "get", params, NULL))) die("lookup", st);
    if (og_rows_count(rs) != 1) die("lookup: not one row", OG_ERR_INTERNAL);
    og_rows_free(rs);
    g->t[OP_LOOKUP][rep] = since(t0);
    g->c[OP_LOOKUP][rep] = cpu_ms() - c0;

    snprintf(params, sizeof params, "{\"n\": \"p%06d\"}", rep * 41 % BASE_ROWS);
    t0 = now_ms();
    c0 = cpu_ms();
    og_db *c = open_db(g->dir);
    if ((st = og_db_query(&rs, c, Q, strlen(Q), "get", params, NULL))) die("lookup", st);
    og_rows_free(rs);
    og_db_close(c);
    g->t[OP_LOOKUP_COLD][rep] = since(t0);
    g->c[OP_LOOKUP_COLD][rep] = cpu_ms() - c0;

    /* one-row commit on a branch at main's head */
    char head[32];
    if ((st = og_db_branch_create(db, w, NULL, NULL, head))) die("branch create", st);
    og_receipt r;
    snprintf(params, sizeof params, "{\"n\": \"%s\", \"a\": %d}", w, rep);
    t0 = now_ms();
    c0 = cpu_ms();
    if ((st = og_db_mutate(&r, db, Q, strlen(Q), "add", params, w, NULL))) die("one-row commit", st);
    g->t[OP_COMMIT][rep] = since(t0);
    g->c[OP_COMMIT][rep] = cpu_ms() - c0;
    char one[32];
    snprintf(one, sizeof one, "%s", r.commit);

    /* changes between that commit and its parent (adjacent commits) */
    og_changes_opts co = {head, one, NULL, 0, 0};
    char *out = NULL;
    t0 = now_ms();
    c0 = cpu_ms();
    if ((st = og_db_changes(&out, db, &co))) die("changes", st);
    g->t[OP_CHANGES][rep] = since(t0);
    g->c[OP_CHANGES][rep] = cpu_ms() - c0;
    if (!strstr(out, "\"insert\"")) die("changes: no insert", OG_ERR_INTERNAL);
    og_free(out);
    t0 = now_ms();
    c0 = cpu_ms();
    c = open_db(g->dir);
    if ((st = og_db_changes(&out, c, &co))) die("changes", st);
    og_free(out);
    og_db_close(c);
    g->t[OP_CHANGES_COLD][rep] = since(t0);
    g->c[OP_CHANGES_COLD][rep] = cpu_ms() - c0;

    /* commit list --limit 20 of main */
    t0 = now_ms();
    c0 = cpu_ms();
    if ((st = og_db_commit_list(&out, db, "main", 20))) die("commit list", st);
    g->t[OP_LIST][rep] = since(t0);
    g->c[OP_LIST][rep] = cpu_ms() - c0;
    og_free(out);
    t0 = now_ms();
    c0 = cpu_ms();
    c = open_db(g->dir);
    if ((st = og_db_commit_list(&out, c, "main", 20))) die("commit list", st);
    og_free(out);
    og_db_close(c);
    g->t[OP_LIST_COLD][rep] = since(t0);
    g->c[OP_LIST_COLD][rep] = cpu_ms() - c0;
    /* --limit 10: the same output size at 10 commits as at 10,000 (--limit 20 prints 10 there) */
    t0 = now_ms();
    c0 = cpu_ms();
    if ((st = og_db_commit_list(&out, db, "main", 10))) die("commit list", st);
    g->t[OP_LIST10][rep] = since(t0);
    g->c[OP_LIST10][rep] = cpu_ms() - c0;
    og_free(out);

    /* branch create from main's head */
    t0 = now_ms();
    c0 = cpu_ms();
    if ((st = og_db_branch_create(db, x, NULL, NULL, NULL))) die("branch create", st);
    g->t[OP_BRANCH][rep] = since(t0);
    g->c[OP_BRANCH][rep] = cpu_ms() - c0;

    /* merge of a 10-row divergence: s (from w) updates 10 rows in one commit, w one other row */
    if ((st = og_db_branch_create(db, s, w, NULL, NULL))) die("branch create", st);
    snprintf(params, sizeof params, "{\"g\": %d, \"a\": %d}", rep % 100, 1000 + rep);
    if ((st = og_db_mutate(&r, db, Q, strlen(Q), "touch", params, s, NULL))) die("touch", st);
    if (r.affected_nodes != 10) die("touch: not 10 rows", OG_ERR_INTERNAL);
    snprintf(params, sizeof params, "{\"n\": \"p%06d\", \"a\": %d}", (rep % 100) + 101, 2000 + rep);
    if ((st = og_db_mutate(&r, db, Q, strlen(Q), "touch1", params, w, NULL))) die("touch1", st);
    og_db_merge_opts mo = {s, w, NULL, 0};
    t0 = now_ms();
    c0 = cpu_ms();
    st = og_db_branch_merge(&out, db, &mo);
    g->t[OP_MERGE][rep] = since(t0);
    g->c[OP_MERGE][rep] = cpu_ms() - c0;
    if (st) die("merge", st);
    if (!strstr(out, "\"outcome\": \"merged\"")) {
        fprintf(stderr, "bench_history: not a three-way merge: %s\n", out);
        exit(1);
    }
    og_free(out);
    if ((st = og_db_branch_delete(db, s)) || (st = og_db_branch_delete(db, w)) || (st = og_db_branch_delete(db, x)))
        die("branch delete", st);
}

static void print_side(const side *g, int reps, const char *label)
{
    printf("  \"%s\": {\"history\": %ld", label, g->history);
    for (int op = 0; op < OP_N; op++) printf(", \"%s_ms\": %.3f", OP_NAME[op], median(g->t[op], reps));
    for (int op = 0; op < OP_N; op++) printf(", \"%s_cpu_ms\": %.3f", OP_NAME[op], median(g->c[op], reps));
    printf("}");
}

/* Alternates rounds between the two graphs (small first in even rounds, big first in odd
 * ones), so a change in machine load hits both; prints medians and big / small ratios. */
static int cmd_compare(const char *small_dir, const char *big_dir, int reps)
{
    if (reps < 1) reps = 1;
    side g[2];
    memset(g, 0, sizeof g);
    g[0].dir = small_dir;
    g[1].dir = big_dir;
    for (int k = 0; k < 2; k++) {
        g[k].db = open_db(g[k].dir);
        g[k].history = history_len(g[k].db);
        for (int op = 0; op < OP_N; op++) {
            g[k].t[op] = calloc((size_t)reps + 1, sizeof(double));
            g[k].c[op] = calloc((size_t)reps + 1, sizeof(double));
        }
        round_ops(&g[k], reps); /* one untimed warm-up round (slot reps) */
    }
    for (int rep = 0; rep < reps; rep++)
        for (int k = 0; k < 2; k++) round_ops(&g[(k + rep) % 2], rep);
    printf("{\"mode\": \"compare\", \"reps\": %d,\n", reps);
    print_side(&g[0], reps, "small");
    printf(",\n");
    print_side(&g[1], reps, "big");
    printf(",\n  \"ratio\": {");
    for (int op = 0; op < OP_N; op++)
        printf("%s\"%s\": %.2f", op ? ", " : "", OP_NAME[op], median(g[1].t[op], reps) / median(g[0].t[op], reps));
    printf("},\n  \"cpu_ratio\": {");
    for (int op = 0; op < OP_N; op++)
        printf("%s\"%s\": %.2f", op ? ", " : "", OP_NAME[op], median(g[1].c[op], reps) / median(g[0].c[op], reps));
    printf("}}\n");
    for (int k = 0; k < 2; k++) {
        og_db_close(g[k].db);
        for (int op = 0; op < OP_N; op++) {
            free(g[k].t[op]);
            free(g[k].c[op]);
        }
    }
    return 0;
}

static double last_child_cpu; /* user + system ms of the last run_ms child */

/* Runs argv as a fresh process (stdout/stderr to /dev/null); its wall time in ms (its CPU
 * time in last_child_cpu). */
static double run_ms(char *const *argv)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now_ms();
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        perror(argv[0]);
        exit(1);
    }
    int ws;
    struct rusage ru;
    wait4(pid, &ws, 0, &ru);
    double ms = now_ms() - t0;
    last_child_cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        fprintf(stderr, "bench_history: %s %s failed (status %d)\n", argv[0], argv[1], ws);
        exit(1);
    }
    return ms;
}

/* The CLI: a fresh `omnigraph` process per operation, alternating between the two graphs. */
static int cmd_cli(const char *og, const char *small_dir, const char *big_dir, int reps)
{
    if (reps < 1) reps = 1;
    const char *dirs[2] = {small_dir, big_dir};
    char uri[2][1024];
    long hist[2];
    double *t[2][CLI_N], *cpu[2][CLI_N];
    for (int k = 0; k < 2; k++) {
        snprintf(uri[k], sizeof uri[k], "%s/graph", dirs[k]);
        og_db *db = open_db(dirs[k]);
        hist[k] = history_len(db);
        og_db_close(db);
        for (int op = 0; op < CLI_N; op++) {
            t[k][op] = calloc((size_t)reps + 1, sizeof(double));
            cpu[k][op] = calloc((size_t)reps + 1, sizeof(double));
        }
    }
    char *getq = "query get($n: String) { match { $p: Person { name: $n } } return { $p.age } }";
    char *addq = "query add($n: String, $a: I32) { insert Person { name: $n, age: $a } }";
    for (int rep = -1; rep < reps; rep++) { /* rep -1: untimed warm-up */
        int slot = rep < 0 ? reps : rep;
        for (int kk = 0; kk < 2; kk++) {
            int k = (kk + (rep < 0 ? 0 : rep)) % 2;
            char params[128], w[64], x[64];
            tmpname(w, sizeof w, "cw", slot);
            tmpname(x, sizeof x, "cx", slot);
            snprintf(params, sizeof params, "{\"n\": \"p%06d\"}", (rep + 2) * 43 % BASE_ROWS);
            char *q[] = {(char *)og, "query", "-e", getq, "--params", params, uri[k], NULL};
            t[k][CLI_LOOKUP][slot] = run_ms(q);
            cpu[k][CLI_LOOKUP][slot] = last_child_cpu;
            og_db *db = open_db(dirs[k]); /* the write's branch, untimed */
            og_status st = og_db_branch_create(db, w, NULL, NULL, NULL);
            if (st) die("branch create", st);
            og_db_close(db);
            snprintf(params, sizeof params, "{\"n\": \"%s\", \"a\": %d}", w, slot);
            char *m[] = {(char *)og, "mutate", "-e", addq, "--params", params, "--branch", w, uri[k], NULL};
            t[k][CLI_COMMIT][slot] = run_ms(m);
            cpu[k][CLI_COMMIT][slot] = last_child_cpu;
            char *l[] = {(char *)og, "commit", "list", "--limit", "20", uri[k], NULL};
            t[k][CLI_LIST][slot] = run_ms(l);
            cpu[k][CLI_LIST][slot] = last_child_cpu;
            char *b[] = {(char *)og, "branch", "create", x, uri[k], NULL};
            t[k][CLI_BRANCH][slot] = run_ms(b);
            cpu[k][CLI_BRANCH][slot] = last_child_cpu;
            db = open_db(dirs[k]);
            if ((st = og_db_branch_delete(db, w)) || (st = og_db_branch_delete(db, x))) die("branch delete", st);
            og_db_close(db);
        }
    }
    printf("{\"mode\": \"cli\", \"reps\": %d,\n", reps);
    for (int k = 0; k < 2; k++) {
        printf("  \"%s\": {\"history\": %ld", k ? "big" : "small", hist[k]);
        for (int op = 0; op < CLI_N; op++) printf(", \"%s_ms\": %.3f", CLI_NAME[op], median(t[k][op], reps));
        for (int op = 0; op < CLI_N; op++) printf(", \"%s_cpu_ms\": %.3f", CLI_NAME[op], median(cpu[k][op], reps));
        printf("},\n");
    }
    printf("  \"ratio\": {");
    for (int op = 0; op < CLI_N; op++)
        printf("%s\"%s\": %.2f", op ? ", " : "", CLI_NAME[op], median(t[1][op], reps) / median(t[0][op], reps));
    printf("},\n  \"cpu_ratio\": {");
    for (int op = 0; op < CLI_N; op++)
        printf("%s\"%s\": %.2f", op ? ", " : "", CLI_NAME[op], median(cpu[1][op], reps) / median(cpu[0][op], reps));
    printf("}}\n");
    for (int k = 0; k < 2; k++)
        for (int op = 0; op < CLI_N; op++) {
            free(t[k][op]);
            free(cpu[k][op]);
        }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && !strcmp(argv[1], "init")) return cmd_init(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "grow")) return cmd_grow(argv[2], atol(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "compare")) return cmd_compare(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 15);
    if (argc >= 5 && !strcmp(argv[1], "cli")) return cmd_cli(argv[2], argv[3], argv[4], argc > 5 ? atoi(argv[5]) : 9);
    fprintf(stderr, "usage: bench_history init DIR | grow DIR COMMITS | compare SMALL BIG [REPS] |"
                    " cli OMNIGRAPH SMALL BIG [REPS]\n");
    return 2;
}
