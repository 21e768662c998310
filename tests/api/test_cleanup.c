/*
 * test_cleanup.c — `cleanup` through the public API, checked against the store's key set:
 * a dry run deletes nothing and reports what --confirm then deletes; retention by
 * keep-commits keeps the head's answers and every retained commit readable while older
 * commits become a typed not_found; a deleted branch's history and the orphans of failed or
 * abandoned writes (data files, manifests, commit objects, index files) go; the grace period
 * protects young objects; a live branch keeps what it needs; a reader that read an old commit
 * before cleanup gets the same rows or not_found, never other rows; a crash at each cleanup
 * fault point leaves a graph whose retained commits all read correctly, and a rerun ends in
 * the same key set as an uninterrupted run; confirmed cleanups running beside a writer and a
 * reader on their own handles lose no write, fail no read and still reclaim history.  With
 * OG_TEST_STORE_URI set (tests/store/run-s3-tests.sh) the main scenario and the concurrent one
 * also run on S3; otherwise they say SKIP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <jansson.h>

#include "omnigraph.h"
#include "store/store.h"
#include "util/fault.h"
#include "util/id.h"

#include "api_rows.h"

typedef struct ctx {
    char dir[64], uri[1024];
    og_db *db;
    og_store *st;
    int s3;
} ctx;

static const char *SCHEMA = "node Person { name: String @key  age: I32? }\n"
                            "edge Knows: Person -> Person\n";
static const char *MUTS = "query add($n: String, $a: I32) { insert Person { name: $n, age: $a } }\n"
                          "query link($f: String, $t: String) { insert Knows { from: $f, to: $t } }\n"
                          "query older($n: String) { update Person set { age: 99 } where name = $n }\n"
                          "query drop($n: String) { delete Person where name = $n }\n";
static const char *Q_ALL = "query q() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }";
static const char *Q_HOP =
    "query q() { match { $p: Person { name: \"p0\" } $p knows $f } return { $f.name } order { $f.name } }";

static int open_ctx(ctx *c, const char *uri)
{
    snprintf(c->uri, sizeof c->uri, "%s", uri);
    setenv("OG_AUTO_OPTIMIZE_FRAGMENTS", "0", 1);
    if (og_db_init(&c->db, c->uri, "s.pg", SCHEMA, strlen(SCHEMA), NULL) != OG_OK) {
        fprintf(stderr, "init: %s\n", og_error_message());
        return -1;
    }
    if (og_store_open(&c->st, c->uri) != OG_OK) return -1;
    return 0;
}

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-cleanup-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    char uri[128];
    snprintf(uri, sizeof uri, "%s/g", c->dir);
    if (open_ctx(c, uri)) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_db_close(c->db);
    og_store_close(c->st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) fprintf(stderr, "rm failed\n");
    free(c);
    return 0;
}

static void mut(ctx *c, const char *name, const char *params, const char *branch, char commit[32])
{
    og_receipt r;
    og_status st = og_db_mutate(&r, c->db, MUTS, strlen(MUTS), name, params, branch, NULL);
    if (st != OG_OK) fail_msg("%s %s: %s", name, params, og_error_message());
    if (commit) snprintf(commit, 32, "%s", r.commit);
}

static void rows(ctx *c, const char *q, const char *commit, char *out, size_t cap)
{
    og_status st = api_rows_render(c->db, q, commit, out, cap);
    if (st != OG_OK) fail_msg("query at %s: %s", commit ? commit : "head", og_error_message());
}

/* Every key in the store, one per line (sorted: the store lists sorted). */
static char *keyset(ctx *c)
{
    og_keylist kl;
    assert_int_equal(og_store_list(c->st, "", NULL, 0, &kl), OG_OK);
    size_t n = 1;
    for (size_t i = 0; i < kl.count; i++) n += strlen(kl.keys[i]) + 1;
    char *s = malloc(n), *p = s;
    for (size_t i = 0; i < kl.count; i++) p += sprintf(p, "%s\n", kl.keys[i]);
    *p = '\0';
    og_keylist_free(&kl);
    return s;
}

static size_t count_prefix(ctx *c, const char *prefix)
{
    og_keylist kl;
    assert_int_equal(og_store_list(c->st, prefix, NULL, 0, &kl), OG_OK);
    size_t n = kl.count;
    og_keylist_free(&kl);
    return n;
}

static og_cleanup_result run_cleanup(ctx *c, int64_t keep, int64_t grace_ms, int confirm)
{
    og_cleanup_opts_pub o = {keep, -1, grace_ms, confirm};
    og_cleanup_result r;
    /* With no grace period a file written in the millisecond the cleanup reads the clock is
     * still "in flight" (mtime >= cutoff) and stays; let that millisecond pass. */
    if (grace_ms == 0) usleep(20000);
    if (og_db_cleanup(&r, c->db, &o) != OG_OK) fail_msg("cleanup: %s", og_error_message());
    return r;
}

static uint64_t total(const og_cleanup_result *r)
{
    return r->commits_removed + r->log_entries_removed + r->versions_removed + r->files_removed +
           r->orphans_removed + r->index_removed;
}

/* 12 one-row commits, some edges, an update and a delete; commits[i] = the i-th commit. */
static size_t build_history(ctx *c, char commits[][32])
{
    size_t n = 0;
    char p[128];
    for (int i = 0; i < 8; i++) {
        snprintf(p, sizeof p, "{\"n\":\"p%d\",\"a\":%d}", i, i);
        mut(c, "add", p, NULL, commits[n++]);
    }
    mut(c, "link", "{\"f\":\"p0\",\"t\":\"p1\"}", NULL, commits[n++]);
    mut(c, "link", "{\"f\":\"p0\",\"t\":\"p2\"}", NULL, commits[n++]);
    og_optimize_result o; /* compaction: the old fragments' files are named by old versions only */
    if (og_db_optimize(&o, c->db, NULL, NULL) != OG_OK) fail_msg("optimize: %s", og_error_message());
    assert_int_equal(o.published, 1);
    snprintf(commits[n++], 32, "%s", o.commit);
    mut(c, "older", "{\"n\":\"p3\"}", NULL, commits[n++]);
    mut(c, "drop", "{\"n\":\"p7\"}", NULL, commits[n++]);
    mut(c, "add", "{\"n\":\"p8\",\"a\":8}", NULL, commits[n++]);
    return n;
}

static void dry_run_deletes_nothing_and_confirm_matches_it(void **state)
{
    ctx *c = *state;
    char commits[16][32], head_rows[2048], hop[256];
    size_t n = build_history(c, commits);
    rows(c, Q_ALL, NULL, head_rows, sizeof head_rows);
    rows(c, Q_HOP, NULL, hop, sizeof hop);
    assert_string_equal(hop, "p1;p2");
    char *before = keyset(c);
    /* default grace (1 h): everything is young, nothing to do even with keep 1 */
    og_cleanup_result r = run_cleanup(c, 1, -1, 1);
    assert_int_equal(total(&r), 0);
    assert_int_equal(r.commits_retained, n + 1); /* + genesis */
    /* dry run with grace 0 reports, deletes nothing */
    og_cleanup_result dry = run_cleanup(c, 3, 0, 0);
    assert_int_equal(dry.dry_run, 1);
    assert_true(dry.commits_removed >= 10);
    assert_true(dry.versions_removed > 0 && dry.files_removed > 0 && dry.log_entries_removed > 0);
    char *after_dry = keyset(c);
    assert_string_equal(before, after_dry);
    /* confirm removes exactly what the dry run said */
    og_cleanup_result done = run_cleanup(c, 3, 0, 1);
    assert_int_equal(done.dry_run, 0);
    assert_int_equal(done.commits_removed, dry.commits_removed);
    assert_int_equal(done.commits_bytes, dry.commits_bytes);
    assert_int_equal(done.log_entries_removed, dry.log_entries_removed);
    assert_int_equal(done.versions_removed, dry.versions_removed);
    assert_int_equal(done.versions_bytes, dry.versions_bytes);
    assert_int_equal(done.files_removed, dry.files_removed);
    assert_int_equal(done.files_bytes, dry.files_bytes);
    assert_int_equal(done.commits_retained, 3);
    /* the head answers the same; the three retained commits read; older ones are not_found */
    char now[2048];
    rows(c, Q_ALL, NULL, now, sizeof now);
    assert_string_equal(now, head_rows);
    rows(c, Q_HOP, NULL, now, sizeof now);
    assert_string_equal(now, "p1;p2");
    for (size_t i = n - 3; i < n; i++) rows(c, Q_ALL, commits[i], now, sizeof now);
    og_rows *qr = NULL;
    og_read_opts at = {NULL, commits[0]};
    assert_int_equal(og_db_query(&qr, c->db, Q_ALL, strlen(Q_ALL), NULL, NULL, &at), OG_ERR_NOT_FOUND);
    if (!strstr(og_error_message(), "reclaimed by cleanup")) fail_msg("message: %s", og_error_message());
    /* history ends at the oldest retained commit instead of failing */
    char *list;
    assert_int_equal(og_db_commit_list(&list, c->db, NULL, 20), OG_OK);
    json_t *j = json_loads(list, 0, NULL);
    og_free(list);
    assert_non_null(j);
    json_t *arr = json_is_array(j) ? j : json_object_get(j, "commits");
    assert_int_equal(json_array_size(arr), 3);
    json_decref(j);
    /* writes go on; a second run has nothing to do */
    mut(c, "add", "{\"n\":\"q\",\"a\":1}", NULL, NULL);
    og_cleanup_result again = run_cleanup(c, 0, 0, 1);
    assert_int_equal(total(&again), 0);
    free(before);
    free(after_dry);
}

static void deleted_branches_and_orphans_go_live_branches_stay(void **state)
{
    ctx *c = *state;
    char commits[16][32], p[128];
    size_t n = build_history(c, commits);
    (void)n;
    /* a live branch from an early commit, and a branch with its own writes that is deleted */
    assert_int_equal(og_db_branch_create(c->db, "keep", NULL, commits[2], NULL), OG_OK);
    assert_int_equal(og_db_branch_create(c->db, "gone", "main", NULL, NULL), OG_OK);
    char gone_commit[32];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "{\"n\":\"g%d\",\"a\":%d}", i, i);
        mut(c, "add", p, "gone", gone_commit);
    }
    assert_int_equal(og_db_branch_delete(c->db, "gone"), OG_OK);
    char keep_rows[2048], main_rows[2048];
    rows(c, Q_ALL, commits[2], keep_rows, sizeof keep_rows);
    rows(c, Q_ALL, NULL, main_rows, sizeof main_rows);
    /* orphans of a failed write: a data file, a manifest past the head, a commit object,
     * and an index file of a data file nobody names */
    char *snap;
    assert_int_equal(og_db_snapshot(&snap, c->db, NULL), OG_OK);
    json_t *sj = json_loads(snap, 0, NULL);
    og_free(snap);
    char tdir[256];
    snprintf(tdir, sizeof tdir, "%s",
             json_string_value(json_object_get(json_array_get(json_object_get(sj, "tables"), 0), "table")));
    char key[512], uuid[OG_UUID_LEN + 1], ulid[OG_ULID_LEN + 1];
    assert_int_equal(og_uuid_new(uuid), OG_OK);
    snprintf(key, sizeof key, "tables/%s/data/%s.lance", tdir, uuid);
    assert_int_equal(og_store_put(c->st, key, "junk", 4), OG_OK);
    snprintf(key, sizeof key, "_index/%s/%s/fts.v1", tdir, uuid);
    assert_int_equal(og_store_put(c->st, key, "derived", 7), OG_OK);
    assert_int_equal(og_ulid_new(ulid), OG_OK);
    snprintf(key, sizeof key, "_graph/commits/%s.json", ulid);
    assert_int_equal(og_store_put(c->st, key, "{}", 2), OG_OK);
    json_decref(sj);
    og_cleanup_result r = run_cleanup(c, 2, 0, 1);
    assert_true(r.orphans_removed >= 1);
    assert_true(r.index_removed >= 1);
    assert_true(r.commits_removed >= 3);
    snprintf(key, sizeof key, "_index/%s/%s/fts.v1", tdir, uuid);
    assert_int_equal(og_store_head(c->st, key, NULL), OG_ERR_NOT_FOUND);
    snprintf(key, sizeof key, "_graph/commits/%s.json", ulid);
    assert_int_equal(og_store_head(c->st, key, NULL), OG_ERR_NOT_FOUND);
    /* the deleted branch's commits are gone; its log keeps only the delete entry */
    og_rows *qr = NULL;
    og_read_opts at = {NULL, gone_commit};
    assert_int_equal(og_db_query(&qr, c->db, Q_ALL, strlen(Q_ALL), NULL, NULL, &at), OG_ERR_NOT_FOUND);
    assert_int_equal(count_prefix(c, "_graph/refs/gone/"), 1);
    /* the live branch reads exactly as before, main too */
    char now[2048];
    rows(c, Q_ALL, commits[2], now, sizeof now);
    assert_string_equal(now, keep_rows);
    og_read_opts kb = {"keep", NULL};
    assert_int_equal(og_db_query(&qr, c->db, Q_ALL, strlen(Q_ALL), NULL, NULL, &kb), OG_OK);
    og_rows_free(qr);
    rows(c, Q_ALL, NULL, now, sizeof now);
    assert_string_equal(now, main_rows);
    /* the branch can still be written; its fork point fell outside retention, so a merge says
     * so (typed not_found), and with full retention a branch merges as ever */
    mut(c, "add", "{\"n\":\"k1\",\"a\":5}", "keep", NULL);
    og_db_merge_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.source = "keep";
    mo.target = "main";
    char *mout = NULL;
    assert_int_equal(og_db_branch_merge(&mout, c->db, &mo), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "reclaimed by cleanup"));
    assert_int_equal(og_db_branch_create(c->db, "recent", "main", NULL, NULL), OG_OK);
    mut(c, "add", "{\"n\":\"r1\",\"a\":6}", "recent", NULL);
    mut(c, "add", "{\"n\":\"m1\",\"a\":7}", NULL, NULL);
    r = run_cleanup(c, 0, 0, 1); /* full retention: only unreachable things */
    mo.source = "recent";
    og_status ms = og_db_branch_merge(&mout, c->db, &mo);
    if (ms != OG_OK) fail_msg("merge: %s", og_error_message());
    og_free(mout);
    rows(c, Q_ALL, NULL, now, sizeof now);
    assert_non_null(strstr(now, "r1|6"));
    assert_non_null(strstr(now, "m1|7"));
}


static void grace_period_protects_young_orphans(void **state)
{
    ctx *c = *state;
    mut(c, "add", "{\"n\":\"a\",\"a\":1}", NULL, NULL);
    char *snap;
    assert_int_equal(og_db_snapshot(&snap, c->db, NULL), OG_OK);
    json_t *sj = json_loads(snap, 0, NULL);
    og_free(snap);
    char key[512], uuid[OG_UUID_LEN + 1];
    assert_int_equal(og_uuid_new(uuid), OG_OK);
    snprintf(key, sizeof key, "tables/%s/data/%s.lance",
             json_string_value(json_object_get(json_array_get(json_object_get(sj, "tables"), 0), "table")), uuid);
    json_decref(sj);
    assert_int_equal(og_store_put(c->st, key, "in flight", 9), OG_OK);
    og_cleanup_result r = run_cleanup(c, 0, 60 * 60 * 1000, 1);
    assert_int_equal(r.orphans_removed, 0);
    assert_int_equal(og_store_head(c->st, key, NULL), OG_OK);
    sleep(1);
    r = run_cleanup(c, 0, 500, 1);
    assert_int_equal(r.orphans_removed, 1);
    assert_int_equal(og_store_head(c->st, key, NULL), OG_ERR_NOT_FOUND);
}

static void a_reader_of_an_old_commit_gets_its_rows_or_not_found(void **state)
{
    ctx *c = *state;
    char commits[16][32];
    build_history(c, commits);
    char before[2048], hop_before[256];
    rows(c, Q_ALL, commits[5], before, sizeof before);
    /* a second handle (another process, in effect) reads the old commit and keeps its caches */
    og_db *reader;
    assert_int_equal(og_db_open(&reader, c->uri, NULL), OG_OK);
    assert_int_equal(api_rows_render(reader, Q_ALL, commits[5], hop_before, sizeof hop_before), OG_OK);
    run_cleanup(c, 1, 0, 1);
    for (int round = 0; round < 2; round++) {
        char got[2048];
        og_status st = api_rows_render(reader, Q_ALL, commits[5], got, sizeof got);
        if (st == OG_OK) assert_string_equal(got, before);
        else assert_int_equal(st, OG_ERR_NOT_FOUND);
    }
    /* and the head still reads right through the old handle */
    char h1[2048], h2[2048];
    assert_int_equal(api_rows_render(reader, Q_ALL, NULL, h1, sizeof h1), OG_OK);
    rows(c, Q_ALL, NULL, h2, sizeof h2);
    assert_string_equal(h1, h2);
    og_db_close(reader);
}

/* A data file gone from under a view a handle holds (reclaimed by a cleanup elsewhere): reading
 * a property it held is an error, never nulls — "null" is only for a property the stored table
 * lacks (docs/invariants.md: every read answers right or fails typed) — and a key lookup is an
 * error, never "no such row".  The handle's view has read the age column, not the name column,
 * so the later reads of name must open the (gone) data files. */
static void a_data_file_gone_under_a_held_view_fails_the_read_not_nulls(void **state)
{
    ctx *c = *state;
    char p[64];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "{\"n\":\"p%d\",\"a\":%d}", i, i);
        mut(c, "add", p, NULL, NULL);
    }
    og_db *reader;
    assert_int_equal(og_db_open(&reader, c->uri, NULL), OG_OK);
    char got[2048];
    assert_int_equal(api_rows_render(reader, "query q() { match { $p: Person } return { count($p) as n } }", NULL,
                                     got, sizeof got),
                     OG_OK);
    assert_string_equal(got, "3");
    /* a second handle has only counted: its key lookup must read the (gone) key data */
    og_db *counted;
    assert_int_equal(og_db_open(&counted, c->uri, NULL), OG_OK);
    assert_int_equal(api_rows_render(counted, "query q() { match { $p: Person } return { count($p) as n } }", NULL,
                                     got, sizeof got),
                     OG_OK);
    const char *q_age = "query q() { match { $p: Person } return { $p.age } order { $p.age } }";
    assert_int_equal(api_rows_render(reader, q_age, NULL, got, sizeof got), OG_OK);
    assert_string_equal(got, "0;1;2");
    og_keylist kl;
    assert_int_equal(og_store_list(c->st, "", NULL, 0, &kl), OG_OK);
    size_t gone = 0;
    for (size_t i = 0; i < kl.count; i++)
        if (strstr(kl.keys[i], "/data/") && strstr(kl.keys[i], ".lance")) {
            assert_int_equal(og_store_delete(c->st, kl.keys[i]), OG_OK);
            gone++;
        }
    og_keylist_free(&kl);
    assert_true(gone > 0);
    struct {
        const char *q, *want;
    } qs[] = {
        {"query q() { match { $p: Person { name: \"p1\" } } return { $p.age } }", "1"},
        {Q_ALL, "p0|0;p1|1;p2|2"},
        {"query q() { match { $p: Person  $p.name >= \"p\" } return { $p.age } order { $p.age } }", "0;1;2"},
        {"query q() { match { $p: Person  $p.name = \"p1\" } return { $p.age } }", "1"},
        {"query q() { match { $p: Person } return { $p.age } order { $p.age } }", "0;1;2"},
    };
    for (size_t q = 0; q < sizeof qs / sizeof *qs; q++) {
        og_status st = api_rows_render(reader, qs[q].q, NULL, got, sizeof got);
        if (st == OG_OK && strcmp(got, qs[q].want))
            fail_msg("query %zu answered '%s' (not '%s') with its data files gone", q, got, qs[q].want);
        if (st != OG_OK) assert_int_equal(st, OG_ERR_NOT_FOUND);
    }
    const size_t order[] = {1, 4, 0}; /* all rows, then the key lookup */
    for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
        size_t q = order[k];
        og_status st = api_rows_render(counted, qs[q].q, NULL, got, sizeof got);
        if (st == OG_OK && strcmp(got, qs[q].want))
            fail_msg("query %zu answered '%s' (not '%s') with its data files gone", q, got, qs[q].want);
        if (st != OG_OK) assert_int_equal(st, OG_ERR_NOT_FOUND);
    }
    og_db_close(counted);
    og_db_close(reader);
}

/* A crash at each fault point of a confirmed cleanup: every retained commit still reads its
 * answers, and a rerun ends in exactly the key set of an uninterrupted run. */
static void a_crash_at_any_point_of_cleanup_leaves_a_readable_graph(void **state)
{
    ctx *c = *state;
    const char *points[] = {"cleanup.after_log_entries", "cleanup.after_commits", "cleanup.after_manifests",
                            "cleanup.after_files"};
    for (size_t k = 0; k < sizeof points / sizeof *points; k++) {
        /* a fresh graph per point */
        og_db_close(c->db);
        og_store_close(c->st);
        char uri[256], cmd[512];
        snprintf(uri, sizeof uri, "%s/g%zu", c->dir, k);
        assert_int_equal(open_ctx(c, uri), 0);
        char commits[16][32];
        size_t n = build_history(c, commits);
        char want[3][2048];
        for (size_t i = 0; i < 3; i++) rows(c, Q_ALL, commits[n - 3 + i], want[i], sizeof want[i]);
        char hop0[256];
        rows(c, Q_HOP, NULL, hop0, sizeof hop0); /* the head's key maps (and topology, or an older one) */
        /* what an uninterrupted run leaves, on a copy */
        snprintf(cmd, sizeof cmd, "cp -a '%s' '%s.ref'", uri, uri);
        assert_int_equal(system(cmd), 0);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            og_db *db;
            if (og_db_open(&db, c->uri, NULL) != OG_OK) _exit(2);
            setenv("OG_FAULT", points[k], 1);
            og_cleanup_opts_pub o = {3, -1, 0, 1};
            og_cleanup_result r;
            og_db_cleanup(&r, db, &o);
            _exit(3); /* the fault point did not fire */
        }
        int ws;
        waitpid(pid, &ws, 0);
        assert_true(WIFEXITED(ws));
        if (WEXITSTATUS(ws) != OG_FAULT_EXIT_CODE) fail_msg("%s: child exited %d", points[k], WEXITSTATUS(ws));
        /* readable: a fresh handle reads the retained commits and the head */
        og_db_close(c->db);
        assert_int_equal(og_db_open(&c->db, c->uri, NULL), OG_OK);
        for (size_t i = 0; i < 3; i++) {
            char got[2048];
            rows(c, Q_ALL, commits[n - 3 + i], got, sizeof got);
            assert_string_equal(got, want[i]);
        }
        char hop[256];
        rows(c, Q_HOP, NULL, hop, sizeof hop);
        assert_string_equal(hop, "p1;p2");
        /* a rerun finishes the job: the same keys as the uninterrupted run.  A traversal of the
         * head after each (hop0's own), so both have the head's topology in the same state: a
         * reader composes it from an older file while one is retained, and builds and writes
         * it once none is — which the crashed run's reads above may have met earlier. */
        run_cleanup(c, 3, 0, 1);
        og_db_close(c->db); /* (a new process: not the topology the reads above hold) */
        assert_int_equal(og_db_open(&c->db, c->uri, NULL), OG_OK);
        rows(c, Q_HOP, NULL, hop, sizeof hop);
        char *got = keyset(c);
        og_db *ref;
        char ref_uri[300];
        snprintf(ref_uri, sizeof ref_uri, "%s.ref", uri);
        assert_int_equal(og_db_open(&ref, ref_uri, NULL), OG_OK);
        og_cleanup_opts_pub o = {3, -1, 0, 1};
        og_cleanup_result rr;
        assert_int_equal(og_db_cleanup(&rr, ref, &o), OG_OK);
        og_db *mine_db = c->db;
        c->db = ref;
        rows(c, Q_HOP, NULL, hop, sizeof hop);
        c->db = mine_db;
        og_db_close(ref);
        og_store *rs;
        assert_int_equal(og_store_open(&rs, ref_uri), OG_OK);
        og_store *mine = c->st;
        c->st = rs;
        char *want_keys = keyset(c);
        c->st = mine;
        og_store_close(rs);
        /* hints are rewritten by every open of a branch: compare everything else */
        assert_string_equal(got, want_keys);
        free(got);
        free(want_keys);
    }
}

/* ---- cleanup beside concurrent writers and readers --------------------------------------- */

typedef struct conc {
    const char *uri;
    atomic_int writer_done;
    int writes, write_errors;       /* writer: commits published, failures */
    int reads, read_not_found, read_errors, read_regressions; /* reader: head reads */
    char write_error[256], read_error[256];
} conc;

static const char *Q_COUNT = "query q() { match { $p: Person } return { count($p) as n } }";

/* 40 one-row commits on its own handle, paced so the run outlives the grace period. */
static void *conc_writer(void *arg)
{
    conc *k = arg;
    og_db *db;
    if (og_db_open(&db, k->uri, NULL) != OG_OK) {
        snprintf(k->write_error, sizeof k->write_error, "open: %s", og_error_message());
        k->write_errors++;
        atomic_store(&k->writer_done, 1);
        return NULL;
    }
    for (int i = 0; i < 40; i++) {
        char p[96];
        snprintf(p, sizeof p, "{\"n\":\"w%02d\",\"a\":%d}", i, i);
        og_receipt r;
        if (og_db_mutate(&r, db, MUTS, strlen(MUTS), "add", p, NULL, NULL) == OG_OK && r.published) {
            k->writes++;
        } else if (!k->write_errors++) {
            snprintf(k->write_error, sizeof k->write_error, "add %d: %s", i, og_error_message());
        }
        usleep(100000);
    }
    og_db_close(db);
    atomic_store(&k->writer_done, 1);
    return NULL;
}

/* Reads the head's row count on its own handle until the writer is done: every read answers
 * (or, for a snapshot reclaimed under it, says not_found), and counts never go backwards. */
static void *conc_reader(void *arg)
{
    conc *k = arg;
    og_db *db;
    if (og_db_open(&db, k->uri, NULL) != OG_OK) {
        k->read_errors++;
        return NULL;
    }
    long last = -1;
    while (!atomic_load(&k->writer_done)) {
        char got[64];
        og_status st = api_rows_render(db, Q_COUNT, NULL, got, sizeof got);
        k->reads++;
        if (st == OG_ERR_NOT_FOUND) {
            k->read_not_found++;
        } else if (st != OG_OK) {
            if (!k->read_errors++) snprintf(k->read_error, sizeof k->read_error, "%s", og_error_message());
        } else {
            long n = atol(got);
            if (n < last || n > 3 + 40) k->read_regressions++;
            last = n;
        }
        usleep(20000);
    }
    og_db_close(db);
    return NULL;
}

/* Confirmed cleanups (keep 1 commit, grace 2 s) every 200 ms while a writer commits and a
 * reader reads on their own handles: every write publishes, every read answers, cleanup
 * really removes history meanwhile, and the end state holds every row and reads right. */
static void cleanup_beside_writers_and_readers(ctx *c)
{
    char p[96];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "{\"n\":\"s%d\",\"a\":%d}", i, i);
        mut(c, "add", p, NULL, NULL);
    }
    conc k;
    memset(&k, 0, sizeof k);
    k.uri = c->uri;
    atomic_init(&k.writer_done, 0);
    pthread_t w, r;
    assert_int_equal(pthread_create(&w, NULL, conc_writer, &k), 0);
    assert_int_equal(pthread_create(&r, NULL, conc_reader, &k), 0);
    uint64_t removed = 0;
    int runs = 0, conflicts = 0, failures = 0;
    char cleanup_error[256] = "";
    while (!atomic_load(&k.writer_done)) {
        og_cleanup_opts_pub o = {1, -1, 2000, 1};
        og_cleanup_result res;
        og_status st = og_db_cleanup(&res, c->db, &o);
        runs++;
        if (st == OG_OK) removed += res.commits_removed;
        else if (st == OG_ERR_CONFLICT) conflicts++;
        else if (!failures++) snprintf(cleanup_error, sizeof cleanup_error, "%s", og_error_message());
        usleep(200000);
    }
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    if (k.write_errors) fail_msg("%d writes failed: %s", k.write_errors, k.write_error);
    if (k.read_errors) fail_msg("%d reads failed: %s", k.read_errors, k.read_error);
    if (failures) fail_msg("%d cleanups failed: %s", failures, cleanup_error);
    assert_int_equal(k.writes, 40);
    assert_int_equal(k.read_regressions, 0);
    assert_true(k.reads > 0);
    assert_true(runs > 5);
    assert_true(removed > 0); /* it did reclaim history while the writer ran */
    (void)conflicts;          /* (no branch is created here; allowed by the contract anyway) */
    /* every row is there, and the head reads the same after a last cleanup */
    char all[4096], again[4096];
    rows(c, Q_COUNT, NULL, all, sizeof all);
    assert_string_equal(all, "43");
    rows(c, Q_ALL, NULL, all, sizeof all);
    for (int i = 0; i < 40; i++) {
        snprintf(p, sizeof p, "w%02d|%d", i, i);
        if (!strstr(all, p)) fail_msg("row %s missing after the concurrent run", p);
    }
    run_cleanup(c, 1, 0, 1);
    rows(c, Q_ALL, NULL, again, sizeof again);
    assert_string_equal(again, all);
}

static void cleanup_beside_concurrent_writers_and_readers(void **state)
{
    cleanup_beside_writers_and_readers(*state);
}

/* The same on the store named by OG_TEST_STORE_URI (S3 in run-s3-tests.sh). */
static void cleanup_beside_concurrent_writers_on_the_test_store(void **state)
{
    (void)state;
    const char *base = getenv("OG_TEST_STORE_URI");
    if (!base || !*base) {
        printf("SKIP: OG_TEST_STORE_URI is not set (tests/store/run-s3-tests.sh runs this against S3)\n");
        return;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    char id[OG_ULID_LEN + 1], uri[1024];
    assert_int_equal(og_ulid_new(id), OG_OK);
    snprintf(uri, sizeof uri, "%s/cleanup-conc-%s", base, id);
    assert_int_equal(open_ctx(&c, uri), 0);
    cleanup_beside_writers_and_readers(&c);
    og_keylist kl;
    assert_int_equal(og_store_list(c.st, "", NULL, 0, &kl), OG_OK);
    for (size_t i = 0; i < kl.count; i++) og_store_delete(c.st, kl.keys[i]);
    og_keylist_free(&kl);
    og_db_close(c.db);
    og_store_close(c.st);
}

/* The main scenario on the store named by OG_TEST_STORE_URI (S3 in run-s3-tests.sh). */
static void cleanup_on_the_test_store(void **state)
{
    (void)state;
    const char *base = getenv("OG_TEST_STORE_URI");
    if (!base || !*base) {
        printf("SKIP: OG_TEST_STORE_URI is not set (tests/store/run-s3-tests.sh runs this against S3)\n");
        return;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    char id[OG_ULID_LEN + 1], uri[1024];
    assert_int_equal(og_ulid_new(id), OG_OK);
    snprintf(uri, sizeof uri, "%s/cleanup-%s", base, id);
    assert_int_equal(open_ctx(&c, uri), 0);
    char commits[16][32];
    size_t n = build_history(&c, commits);
    assert_int_equal(og_db_branch_create(c.db, "gone", "main", NULL, NULL), OG_OK);
    mut(&c, "add", "{\"n\":\"g\",\"a\":1}", "gone", NULL);
    assert_int_equal(og_db_branch_delete(c.db, "gone"), OG_OK);
    char head[2048], hop[256];
    rows(&c, Q_ALL, NULL, head, sizeof head);
    rows(&c, Q_HOP, NULL, hop, sizeof hop);
    char *before = keyset(&c);
    og_cleanup_result dry = run_cleanup(&c, 2, 0, 0);
    char *after_dry = keyset(&c);
    assert_string_equal(before, after_dry);
    assert_true(dry.commits_removed >= n - 2);
    /* S3 Last-Modified has whole seconds: let every object age past a 0 grace period */
    sleep(1);
    og_cleanup_result done = run_cleanup(&c, 2, 0, 1);
    assert_int_equal(done.commits_removed, dry.commits_removed);
    assert_true(done.versions_removed > 0 && done.files_removed > 0);
    char now[2048];
    rows(&c, Q_ALL, NULL, now, sizeof now);
    assert_string_equal(now, head);
    rows(&c, Q_HOP, NULL, now, sizeof now);
    assert_string_equal(now, hop);
    rows(&c, Q_ALL, commits[n - 2], now, sizeof now);
    og_rows *qr = NULL;
    og_read_opts at = {NULL, commits[0]};
    assert_int_equal(og_db_query(&qr, c.db, Q_ALL, strlen(Q_ALL), NULL, NULL, &at), OG_ERR_NOT_FOUND);
    og_cleanup_result again = run_cleanup(&c, 2, 0, 1);
    assert_int_equal(total(&again), 0);
    /* remove the test's objects */
    og_keylist kl;
    assert_int_equal(og_store_list(c.st, "", NULL, 0, &kl), OG_OK);
    for (size_t i = 0; i < kl.count; i++) og_store_delete(c.st, kl.keys[i]);
    og_keylist_free(&kl);
    free(before);
    free(after_dry);
    og_db_close(c.db);
    og_store_close(c.st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(dry_run_deletes_nothing_and_confirm_matches_it, setup, teardown),
        cmocka_unit_test_setup_teardown(deleted_branches_and_orphans_go_live_branches_stay, setup, teardown),
        cmocka_unit_test_setup_teardown(grace_period_protects_young_orphans, setup, teardown),
        cmocka_unit_test_setup_teardown(a_reader_of_an_old_commit_gets_its_rows_or_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(a_data_file_gone_under_a_held_view_fails_the_read_not_nulls, setup, teardown),
        cmocka_unit_test_setup_teardown(a_crash_at_any_point_of_cleanup_leaves_a_readable_graph, setup, teardown),
        cmocka_unit_test(cleanup_on_the_test_store),
        cmocka_unit_test_setup_teardown(cleanup_beside_concurrent_writers_and_readers, setup, teardown),
        cmocka_unit_test(cleanup_beside_concurrent_writers_on_the_test_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
