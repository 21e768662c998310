/*
 * test_write_budget.c — budgets of mutations and loads (docs/maintenance.md "Budgets of
 * mutations and loads"): a load or a mutation over its time or memory budget stops with
 * OG_ERR_LIMIT naming the budget, publishes nothing, leaves no file behind (the store's file set is exactly what it was, also
 * after a load that had already flushed data files) and leaves the handle usable; budgets per
 * call, per handle and from the environment.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "omnigraph.h"

typedef struct ctx {
    char dir[64], uri[96], data[96];
    og_db *db;
} ctx;

static const char *SCHEMA = "node P { name: String @key  n: I32?  note: String? }\n";
static const char *MUTS = "query bump() { update P set { n: 7 } where n >= 0 }\n"
                          "query one($k: String) { update P set { n: 1 } where name = $k }\n";
#define ROWS 150000 /* more than a load's flush (65,536 rows): data files exist mid-load */

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-wbudget-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->uri, sizeof c->uri, "%s/g", c->dir);
    snprintf(c->data, sizeof c->data, "%s/in.jsonl", c->dir);
    if (og_db_init(&c->db, c->uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) return -1;
    FILE *f = fopen(c->data, "w");
    if (!f) return -1;
    for (int i = 0; i < ROWS; i++)
        fprintf(f, "{\"type\":\"P\",\"data\":{\"name\":\"p%06d\",\"n\":%d,\"note\":\"row %d of the budget test\"}}\n", i,
                i % 1000, i);
    fclose(f);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) fprintf(stderr, "rm failed\n");
    free(c);
    unsetenv("OG_WRITE_TIMEOUT_MS");
    unsetenv("OG_WRITE_MAX_MEMORY");
    return 0;
}

/* The graph's files (relative paths, sorted, one per line) — what "nothing left" compares. */
static char *files_buf;
static size_t files_len, files_cap;
static size_t files_root;

static int add_file(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag != FTW_F) return 0;
    size_t n = strlen(path + files_root) + 1;
    if (files_len + n + 1 > files_cap) {
        files_cap = (files_len + n + 1) * 2;
        files_buf = realloc(files_buf, files_cap);
    }
    memcpy(files_buf + files_len, path + files_root, n - 1);
    files_buf[files_len + n - 1] = '\n';
    files_len += n;
    files_buf[files_len] = '\0';
    return 0;
}

static int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *file_set(const ctx *c)
{
    files_buf = NULL;
    files_len = files_cap = 0;
    files_root = strlen(c->uri);
    assert_int_equal(nftw(c->uri, add_file, 16, FTW_PHYS), 0);
    if (!files_buf) return strdup("");
    size_t n = 0;
    for (char *p = files_buf; *p; p++) n += *p == '\n';
    char **lines = calloc(n, sizeof *lines);
    size_t i = 0;
    for (char *tok = strtok(files_buf, "\n"); tok; tok = strtok(NULL, "\n")) lines[i++] = tok;
    qsort(lines, i, sizeof *lines, cmp_line);
    size_t len = 0;
    for (size_t k = 0; k < i; k++) len += strlen(lines[k]) + 1;
    char *out = malloc(len + 1), *w = out;
    for (size_t k = 0; k < i; k++) w += sprintf(w, "%s\n", lines[k]);
    *w = '\0';
    free(lines);
    free(files_buf);
    return out;
}

static void head_of(ctx *c, char out[32])
{
    assert_int_equal(og_db_resolve_commit(c->db, "main", out, 32), OG_OK);
}

static og_status load(ctx *c, const og_budget *b)
{
    og_load_opts o;
    memset(&o, 0, sizeof o);
    o.mode = OG_LOAD_OVERWRITE;
    og_receipt r;
    return og_db_load_budget(&r, c->db, c->data, &o, b);
}

/* A refused write: LIMIT with `want` in the message, the same head, the same files. */
static void expect_refused(ctx *c, og_status st, const char *want, const char *head_before, const char *files_before)
{
    assert_int_equal(st, OG_ERR_LIMIT);
    if (!strstr(og_error_message(), want)) fail_msg("message '%s' lacks '%s'", og_error_message(), want);
    char head[32];
    head_of(c, head);
    assert_string_equal(head, head_before);
    char *files = file_set(c);
    assert_string_equal(files, files_before);
    free(files);
}

static void load_over_budget_leaves_nothing(void **state)
{
    ctx *c = *state;
    char head[32];
    head_of(c, head);
    char *before = file_set(c);
    og_budget mem = {0, 1 << 20}; /* 1 MiB: passed long before the first flush */
    expect_refused(c, load(c, &mem), "load stopped: memory budget of 1048576 bytes", head, before);
    og_budget tm = {1, 0}; /* 1 ms */
    expect_refused(c, load(c, &tm), "load stopped: time budget of 1 ms exceeded", head, before);
    /* a flush every 20,000 rows: data files are written before the budget trips */
    setenv("OG_LOAD_FLUSH_ROWS", "20000", 1);
    og_budget mem2 = {0, 4 << 20};
    expect_refused(c, load(c, &mem2), "load stopped: memory budget", head, before);
    unsetenv("OG_LOAD_FLUSH_ROWS");
    free(before);
    /* the same handle loads it all with no limit */
    og_budget unlimited = {-1, -1};
    assert_int_equal(load(c, &unlimited), OG_OK);
    og_rows *rows;
    const char *q = "query q() { match { $p: P } return { count($p) as n } }";
    assert_int_equal(og_db_query(&rows, c->db, q, strlen(q), NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_rows_int(rows, 0, 0), ROWS);
    og_rows_free(rows);
}

static void mutation_over_budget_publishes_nothing(void **state)
{
    ctx *c = *state;
    og_budget unlimited = {-1, -1};
    assert_int_equal(load(c, &unlimited), OG_OK);
    char head[32];
    head_of(c, head);
    char *before = file_set(c);
    og_receipt r;
    og_budget tm = {1, 0};
    expect_refused(c, og_db_mutate_budget(&r, c->db, MUTS, strlen(MUTS), "bump", NULL, NULL, &tm),
                   "mutation stopped: time budget of 1 ms exceeded", head, before);
    og_budget mem = {0, 256 << 10};
    expect_refused(c, og_db_mutate_budget(&r, c->db, MUTS, strlen(MUTS), "bump", NULL, NULL, &mem),
                   "mutation stopped: memory budget of 262144 bytes", head, before);
    /* per handle, then from the environment (a fresh handle) */
    og_budget h = {1, 0};
    og_db_set_write_budget(c->db, &h);
    expect_refused(c, og_db_mutate_budget(&r, c->db, MUTS, strlen(MUTS), "bump", NULL, NULL, NULL),
                   "mutation stopped: time budget of 1 ms", head, before);
    og_db_set_write_budget(c->db, NULL);
    setenv("OG_WRITE_MAX_MEMORY", "300000", 1);
    expect_refused(c, og_db_mutate(&r, c->db, MUTS, strlen(MUTS), "bump", NULL, NULL, NULL),
                   "mutation stopped: memory budget of 300000 bytes", head, before);
    unsetenv("OG_WRITE_MAX_MEMORY");
    free(before);
    /* a small mutation under the same budgets, then the big one without: both publish */
    assert_int_equal(og_db_mutate_budget(&r, c->db, MUTS, strlen(MUTS), "one", "{\"k\": \"p000042\"}", NULL, &mem),
                     OG_OK);
    assert_true(r.published);
    assert_int_equal(og_db_mutate(&r, c->db, MUTS, strlen(MUTS), "bump", NULL, NULL, NULL), OG_OK);
    assert_int_equal(r.affected_nodes, ROWS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(load_over_budget_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(mutation_over_budget_publishes_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
