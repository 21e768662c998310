/*
 * graph_testutil.h — shared helpers for the graph-layer tests: scratch graph roots, a
 * one-table "bump" writer whose effect is a dummy immutable object standing in for a Lance
 * table version, and history walks.
 *
 * Scratch roots: a fresh mkdtemp directory, or — when $OG_TEST_STORE_URI is set (an s3://
 * URI from tests/store/run-s3-tests.sh) — a unique prefix under it
 * ("<uri>/g-<pid>-<time>-<n>"), which tu_rmrf empties again through the store.
 */
#ifndef OG_GRAPH_TESTUTIL_H
#define OG_GRAPH_TESTUTIL_H

#include <dirent.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph/graph.h"
#include "util/error.h"

#define TEST_SCHEMA "{\"types\":[{\"name\":\"Person\",\"table\":\"t_person\"}]}"

/* 1 when a scratch root is a store URI rather than a local directory. */
static inline int tu_is_uri(const char *root) { return strncmp(root, "s3://", 5) == 0; }

/* Deletes every object under a store URI root. */
static inline void tu_store_clear(const char *uri)
{
    og_store *st = NULL;
    if (og_store_open(&st, uri) != OG_OK) return;
    og_keylist kl = {0};
    if (og_store_list(st, "", NULL, 0, &kl) == OG_OK) {
        for (size_t i = 0; i < kl.count; i++) og_store_delete(st, kl.keys[i]);
        og_keylist_free(&kl);
    }
    og_store_close(st);
}

/* rm -rf of a scratch tree (opendir/readdir; no nftw, whose feature macro we cannot set here),
 * or the emptying of a scratch prefix on a store. */
static inline void tu_rmrf(const char *dir)
{
    if (tu_is_uri(dir)) {
        tu_store_clear(dir);
        return;
    }
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
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) tu_rmrf(path);
        else unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* A fresh empty directory under /tmp, or a fresh prefix under $OG_TEST_STORE_URI (caller
 * frees the string and removes the tree with tu_rmrf). */
static inline char *tu_tmpdir(void)
{
    const char *base = getenv("OG_TEST_STORE_URI");
    if (base && *base) {
        static unsigned counter;
        size_t n = strlen(base) + 80;
        char *u = malloc(n);
        if (!u) exit(2);
        snprintf(u, n, "%s%sg-%ld-%ld-%u", base, base[strlen(base) - 1] == '/' ? "" : "/", (long)getpid(),
                 (long)time(NULL), counter++);
        return u;
    }
    char *d = strdup("/tmp/og-graph-test-XXXXXX");
    if (!d || !mkdtemp(d)) {
        fprintf(stderr, "mkdtemp failed\n");
        exit(2);
    }
    return d;
}

static inline og_store *tu_store(const char *dir)
{
    og_store *st = NULL;
    if (og_store_open(&st, dir) != OG_OK) {
        fprintf(stderr, "store open %s: %s\n", dir, og_error_message());
        exit(2);
    }
    return st;
}

static inline og_graph *tu_init(og_store *st)
{
    og_table_ref t = {(char *)"t_person", 1, 0};
    og_graph_init_opts io = {TEST_SCHEMA, strlen(TEST_SCHEMA), &t, 1, "tester", "genesis"};
    og_graph *g = NULL;
    if (og_graph_init(&g, st, &io, NULL) != OG_OK) {
        fprintf(stderr, "init: %s\n", og_error_message());
        exit(2);
    }
    return g;
}

static inline og_graph *tu_open(og_store *st)
{
    og_graph *g = NULL;
    if (og_graph_open(&g, st, NULL) != OG_OK) {
        fprintf(stderr, "open: %s\n", og_error_message());
        exit(2);
    }
    return g;
}

/* The writer callback of most tests: writes one immutable dummy "data file" as its effect,
 * then names table t_person at version base+1 with one more row. */
typedef struct tu_bump {
    int calls;
    char last_base[OG_ULID_LEN + 1];
    og_status fail_with; /* != OG_OK: return it instead of writing */
} tu_bump;

static og_status tu_bump_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)attempt;
    tu_bump *b = ctx;
    if (b) {
        b->calls++;
        memcpy(b->last_base, og_snapshot_commit_id(base), sizeof b->last_base);
        if (b->fail_with != OG_OK) return og_err(b->fail_with, "test writer refused");
    }
    const og_table_ref *t = og_snapshot_table(base, "t_person");
    uint64_t v = t ? t->version : 0, rows = t ? t->rows : 0;
    char uuid[OG_UUID_LEN + 1], key[128];
    OG_TRY(og_uuid_new(uuid));
    snprintf(key, sizeof key, "tables/t_person/data/%s.lance", uuid);
    OG_TRY(og_store_put(og_graph_store(g), key, "LANC", 4));
    OG_TRY(og_draft_set_table(d, "t_person", v + 1, rows + 1));
    OG_TRY(og_draft_set_operation(d, OG_OP_MUTATE, NULL));
    OG_TRY(og_draft_set_stat(d, "inserted", 1));
    return OG_OK;
}

static inline og_status tu_commit(og_graph *g, const char *branch, og_write_result *res)
{
    og_write_opts o = {0};
    o.branch = branch;
    o.actor = "tester";
    return og_graph_write(g, &o, tu_bump_fn, NULL, res);
}

/* The head commit id of a branch (fails the process if the branch cannot be resolved). */
static inline void tu_head(og_graph *g, const char *branch, char out[OG_ULID_LEN + 1], uint64_t *seq)
{
    og_ref_entry e;
    if (og_graph_head_entry(g, branch, &e) != OG_OK) {
        fprintf(stderr, "head %s: %s\n", branch, og_error_message());
        exit(2);
    }
    memcpy(out, e.kind == OG_REF_DELETE ? e.previous : e.commit, OG_ULID_LEN + 1);
    if (seq) *seq = e.seq;
}

/* Walks first parents from `from` to the genesis; returns the chain length (commits) and
 * fails (-1) if any commit is unreadable or has more than one parent. */
static inline long tu_chain_len(og_graph *g, const char *from, char (*ids)[OG_ULID_LEN + 1], long cap)
{
    char cur[OG_ULID_LEN + 1];
    memcpy(cur, from, sizeof cur);
    long n = 0;
    for (;;) {
        const og_commit *c;
        og_cache_entry *h;
        if (og_graph_commit_get(g, cur, &c, &h) != OG_OK) return -1;
        if (ids && n < cap) memcpy(ids[n], cur, sizeof cur);
        n++;
        size_t np = c->nparents;
        if (np > 1) {
            og_cache_entry_release(h);
            return -1;
        }
        if (np == 0) {
            og_cache_entry_release(h);
            return n;
        }
        memcpy(cur, c->parents[0], sizeof cur);
        og_cache_entry_release(h);
    }
}

#endif
