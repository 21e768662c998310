/*
 * test_versioning_race.c — versioning writes racing across processes (issue 7, "Concurrency
 * and conditions").  Every writer is a real engine write (og_engine_mutate / og_engine_merge /
 * og_branch_delete: what og_db_mutate, og_db_branch_merge and og_db_branch_delete forward to)
 * in its own forked process with its own handle on one graph directory.
 *
 *   writers_*            K processes mutating one branch, and K processes on K branches plus
 *                        main: every acknowledged write is in the final history exactly once,
 *                        the history is one linear first-parent chain whose log entries name
 *                        it in order, and the rows at the head are exactly the acknowledged ones.
 *   fork_missing_*       K processes forking the same missing branch (`--from`) and writing:
 *                        one create, every write on it.
 *   merge_race_*         FORCED interleavings: the merge pauses after planning (the merge's
 *                        test-only attempt hook) while another process publishes a mutation
 *                        on the target; then the merge either re-plans on the new head
 *                        (a planned fast-forward becomes a real merge that keeps the write),
 *                        fails typed (--if-commit → precondition_failed; a now-divergent row →
 *                        conflict), never publishing its stale plan.
 *   delete_race_*        FORCED: a merge into branch X paused while another process deletes X
 *                        (→ not_found, nothing published), or deletes and re-creates X (→ the
 *                        merge is re-planned on the new incarnation's head, never on the old).
 *                        Then timed: K processes mutating X while the parent deletes X after N
 *                        acknowledgements and re-creates it: every write acknowledged before
 *                        the delete is in the deleted incarnation's history; every entry of the
 *                        log continues its own incarnation's chain (nothing from the old
 *                        incarnation's base lands on the new one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "engine/history.h"
#include "engine/merge.h"
#include "engine/mutate.h"
#include "fixture.h"
#include "util/buf.h"

#define SCHEMA "node Person { name: String @key  age: I32? }\n"
#define QUERIES                                                                                         \
    "query add($n: String) { insert Person { name: $n } }\n"                                            \
    "query set_age($n: String, $a: I32) { update Person set { age: $a } where name = $n }\n"            \
    "query names() { match { $p: Person } return { $p.name } order { $p.name } }\n"                     \
    "query ages() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }\n"

#define MAXW 8
#define MAX_ACKS 512

typedef char ulid_t[OG_ULID_LEN + 1];

/* ---- helpers ----------------------------------------------------------------------------------- */

static og_status mutate(og_engine *e, const char *branch, const char *name, const char *params, og_write_result *w)
{
    json_t *pj = json_loads(params, 0, NULL);
    og_mutate_opts mo = {branch, NULL};
    og_write_result tmp;
    memset(&tmp, 0, sizeof tmp);
    og_status st = og_engine_mutate(e, "m.gq", QUERIES, strlen(QUERIES), name, pj, &mo, w ? w : &tmp, NULL);
    json_decref(pj);
    return st;
}

static og_status add_person(og_engine *e, const char *branch, const char *who, og_write_result *w)
{
    char p[128];
    snprintf(p, sizeof p, "{\"n\": \"%s\"}", who);
    return mutate(e, branch, "add", p, w);
}

/* Renders query `name` on branch (or at commit) as "a;b;c". */
static void query(og_engine *e, const char *branch, const char *commit, const char *name, char *out, size_t cap)
{
    og_result r;
    if (og_engine_query(e, branch, commit, "q.gq", QUERIES, strlen(QUERIES), name, NULL, &r, NULL) != OG_OK)
        fail_msg("query %s: %s", name, og_error_message());
    fixture_render(&r, out, cap);
    og_result_free(&r);
}

static void head_of(og_engine *e, const char *branch, og_ref_entry *out)
{
    if (og_graph_head_entry(og_engine_graph(e), branch, out) != OG_OK) fail_msg("head %s: %s", branch, og_error_message());
}

/* Log entry `seq` of `branch`. */
static void log_entry(og_engine *e, const char *branch, uint64_t seq, og_ref_entry *out)
{
    char key[1024];
    assert_int_equal(og_ref_key(branch, seq, key, sizeof key), OG_OK);
    og_bytes b = {NULL, 0};
    if (og_store_get(og_engine_store(e), key, &b) != OG_OK) fail_msg("log %s seq %llu: %s", branch, (unsigned long long)seq, og_error_message());
    assert_int_equal(og_ref_entry_decode(b.data, b.len, key, out), OG_OK);
    og_bytes_free(&b);
}

/* 1 when `name` is one of the ';'-separated rows of `rows`. */
static int has_row(const char *rows, const char *name)
{
    size_t n = strlen(name);
    for (const char *c = rows; *c;) {
        const char *end = strchr(c, ';');
        size_t len = end ? (size_t)(end - c) : strlen(c);
        if (len == n && !memcmp(c, name, n)) return 1;
        if (!end) break;
        c = end + 1;
    }
    return 0;
}

static size_t count_rows(const char *rows)
{
    size_t n = rows[0] ? 1 : 0;
    for (const char *c = rows; *c; c++) n += *c == ';';
    return n;
}

static int in_set(const ulid_t *set, size_t n, const char *id)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) k += !strcmp(set[i], id);
    return k;
}

/* Checks the log of `branch` from seq `from` to its head is one chain per incarnation: every
 * advance names the entry before's commit as previous and as its commit's first parent; a
 * create follows a delete and mints a new incarnation.  Collects the advance commits in order
 * (optional). */
static void check_log_chain(og_engine *e, const char *branch, uint64_t from, ulid_t *commits, size_t *ncommits)
{
    og_ref_entry head, prev, cur;
    head_of(e, branch, &head);
    size_t n = 0;
    log_entry(e, branch, from, &prev);
    for (uint64_t s = from + 1; s <= head.seq; s++) {
        log_entry(e, branch, s, &cur);
        if (cur.kind == OG_REF_ADVANCE) {
            if (prev.kind == OG_REF_DELETE) fail_msg("%s seq %llu: an advance right after a delete", branch, (unsigned long long)s);
            assert_string_equal(cur.incarnation, prev.incarnation);
            assert_string_equal(cur.previous, prev.commit);
            const og_commit *c;
            og_cache_entry *hold;
            assert_int_equal(og_graph_commit_get(og_engine_graph(e), cur.commit, &c, &hold), OG_OK);
            assert_string_equal(c->parents[0], cur.previous); /* published on the base it names */
            og_cache_entry_release(hold);
            if (commits) snprintf(commits[n++], sizeof commits[0], "%s", cur.commit);
        } else if (cur.kind == OG_REF_DELETE) {
            assert_string_equal(cur.incarnation, prev.incarnation);
            assert_string_equal(cur.previous, prev.commit);
        } else { /* create: a new incarnation */
            assert_int_equal(prev.kind, OG_REF_DELETE);
            assert_string_not_equal(cur.incarnation, prev.incarnation);
        }
        prev = cur;
    }
    if (ncommits) *ncommits = n;
}

/* The first-parent chain of `branch` down to (excluding) commit `stop`: every commit has one
 * parent; returns the chain newest first. */
static size_t chain_to(og_engine *e, const char *head, const char *stop, ulid_t *out, size_t cap)
{
    og_commit_id *ids;
    size_t n;
    assert_int_equal(og_history_first_parent(og_engine_graph(e), head, 0, &ids, &n), OG_OK);
    size_t k = 0;
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(ids[i].id, stop)) {
            found = 1;
            break;
        }
        assert_true(k < cap);
        snprintf(out[k++], sizeof out[0], "%s", ids[i].id);
    }
    free(ids);
    if (!found) fail_msg("commit %s is not on the first-parent chain of %s", stop, head);
    return k;
}

static void read_exact(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        if (r <= 0) fail_msg("pipe closed after %zu of %zu bytes", got, n);
        got += (size_t)r;
    }
}

static void wait_ok(pid_t pid)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) fail_msg("child %d failed (status %d)", (int)pid, status);
}

/* One acknowledgement record on a pipe: the commit id and the row name it inserted. */
typedef struct ack {
    char commit[OG_ULID_LEN + 1];
    char name[32];
} ack;

/* Child: inserts rows "<tag>-<try>" on `branch` until `m` are acknowledged (m = 0: until
 * `stop_fd` is readable), writing an ack per acknowledged write to out_fd.  Conflict (retries
 * exhausted) and not_found (the branch is deleted just now) are unacknowledged: nothing was
 * published; anything else fails the child. */
static void child_writer(const char *uri, const char *branch, const char *tag, int start_fd, int out_fd, int m,
                         int stop_fd)
{
    char go;
    if (read(start_fd, &go, 1) != 1) _exit(5);
    og_engine *e;
    if (og_engine_open(&e, uri, NULL) != OG_OK) _exit(3);
    int acks = 0;
    for (int t = 0; t < 4000 && (m == 0 || acks < m); t++) {
        if (stop_fd >= 0) {
            struct pollfd pf = {stop_fd, POLLIN, 0};
            if (poll(&pf, 1, 0) > 0) break;
        }
        ack a;
        memset(&a, 0, sizeof a);
        snprintf(a.name, sizeof a.name, "%s-%d", tag, t);
        og_write_result w;
        memset(&w, 0, sizeof w);
        og_status st = add_person(e, branch, a.name, &w);
        if (st == OG_ERR_CONFLICT) continue;
        if (st == OG_ERR_NOT_FOUND) {
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (st != OG_OK || !w.published) {
            fprintf(stderr, "writer %s: %s\n", tag, og_error_message());
            _exit(4);
        }
        snprintf(a.commit, sizeof a.commit, "%s", w.commit);
        if (write(out_fd, &a, sizeof a) != (ssize_t)sizeof a) _exit(6);
        acks++;
    }
    og_engine_close(e);
    _exit(m == 0 || acks == m ? 0 : 7);
}

typedef struct wjob {
    const char *branch;
    char tag[16];
    int m;
} wjob;

/* Forks one writer per job, releases them together, collects every ack per job. */
static void run_writers(const char *uri, wjob *jobs, int n, ack (*acks)[MAX_ACKS], size_t *nacks)
{
    int start[2];
    assert_int_equal(pipe(start), 0);
    int outs[MAXW];
    pid_t pids[MAXW];
    for (int i = 0; i < n; i++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        fflush(NULL);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(start[1]);
            close(p[0]);
            child_writer(uri, jobs[i].branch, jobs[i].tag, start[0], p[1], jobs[i].m, -1);
        }
        close(p[1]);
        outs[i] = p[0];
    }
    close(start[0]);
    char go[MAXW] = {0};
    assert_int_equal(write(start[1], go, (size_t)n), n);
    close(start[1]);
    for (int i = 0; i < n; i++) {
        nacks[i] = 0;
        ack a;
        ssize_t r;
        while ((r = read(outs[i], &a, sizeof a)) == (ssize_t)sizeof a) {
            assert_true(nacks[i] < MAX_ACKS);
            acks[i][nacks[i]++] = a;
        }
        close(outs[i]);
        wait_ok(pids[i]);
        assert_int_equal(nacks[i], (size_t)jobs[i].m);
    }
}

/* Every ack of the jobs on `branch` is on its first-parent chain exactly once, the chain above
 * `base` holds nothing else, the log names the chain in order, and the rows at the head are
 * the base's rows plus exactly the acknowledged inserts. */
static void check_branch(og_engine *e, const char *branch, const char *base, const char *base_rows, wjob *jobs, int n,
                         ack (*acks)[MAX_ACKS], const size_t *nacks, uint64_t base_seq)
{
    og_ref_entry head;
    head_of(e, branch, &head);
    static ulid_t chain[MAX_ACKS * MAXW], logc[MAX_ACKS * MAXW];
    size_t k = chain_to(e, head.commit, base, chain, MAX_ACKS * MAXW);
    for (size_t i = 0; i < k; i++) { /* linear: no merge commit, one parent each */
        const og_commit *c;
        og_cache_entry *hold;
        assert_int_equal(og_graph_commit_get(og_engine_graph(e), chain[i], &c, &hold), OG_OK);
        assert_int_equal(c->nparents, 1);
        og_cache_entry_release(hold);
    }
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(jobs[i].branch, branch)) continue;
        for (size_t j = 0; j < nacks[i]; j++) {
            if (in_set((const ulid_t *)chain, k, acks[i][j].commit) != 1)
                fail_msg("%s: acknowledged commit %s (%s) is on the history %d times", branch, acks[i][j].commit,
                         acks[i][j].name, in_set((const ulid_t *)chain, k, acks[i][j].commit));
            total++;
        }
    }
    assert_int_equal(k, total); /* nothing unacknowledged was published */
    size_t nl;
    check_log_chain(e, branch, base_seq, logc, &nl);
    assert_int_equal(nl, k);
    for (size_t i = 0; i < k; i++) assert_string_equal(logc[i], chain[k - 1 - i]);
    /* the data: base rows plus every acknowledged name, nothing else */
    size_t want_n = total + (base_rows[0] ? 1 : 0);
    char *got = malloc(65536);
    query(e, branch, NULL, "names", got, 65536);
    for (int i = 0; i < n; i++) {
        if (strcmp(jobs[i].branch, branch)) continue;
        for (size_t j = 0; j < nacks[i]; j++)
            if (!has_row(got, acks[i][j].name)) fail_msg("%s: acknowledged row %s missing at the head", branch, acks[i][j].name);
    }
    if (base_rows[0]) assert_true(has_row(got, base_rows));
    assert_int_equal(count_rows(got), want_n);
    free(got);
}

/* ---- (a) writers ------------------------------------------------------------------------------- */

static void writers_on_one_branch_all_acknowledged_writes_once_in_a_linear_history(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    og_ref_entry h0;
    head_of(f->e, "main", &h0);
    wjob jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i].branch = "main";
        snprintf(jobs[i].tag, sizeof jobs[i].tag, "w%d", i);
        jobs[i].m = 6;
    }
    static ack acks[MAXW][MAX_ACKS];
    size_t nacks[MAXW];
    run_writers(f->uri, jobs, 4, acks, nacks);
    og_engine *e;
    assert_int_equal(og_engine_open(&e, f->uri, NULL), OG_OK);
    check_branch(e, "main", h0.commit, "", jobs, 4, acks, nacks, h0.seq);
    og_engine_close(e);
    fixture_free(f);
}

static void writers_on_several_branches_each_history_holds_exactly_its_writes(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    og_write_result w;
    assert_int_equal(add_person(f->e, "main", "seed", &w), OG_OK);
    og_ref_entry h0;
    head_of(f->e, "main", &h0);
    const char *branches[3] = {"b0", "b1", "b2"};
    uint64_t seqs[3];
    for (int i = 0; i < 3; i++) {
        og_ref_entry e0;
        assert_int_equal(og_branch_create(og_engine_graph(f->e), branches[i], "main", NULL, NULL, &e0), OG_OK);
        seqs[i] = e0.seq;
    }
    /* two writers on main, one on b0, two on b1, one on b2: all at once */
    const char *where[6] = {"main", "main", "b0", "b1", "b1", "b2"};
    wjob jobs[6];
    for (int i = 0; i < 6; i++) {
        jobs[i].branch = where[i];
        snprintf(jobs[i].tag, sizeof jobs[i].tag, "%s.%d", where[i], i);
        jobs[i].m = 4;
    }
    static ack acks[MAXW][MAX_ACKS];
    size_t nacks[MAXW];
    run_writers(f->uri, jobs, 6, acks, nacks);
    og_engine *e;
    assert_int_equal(og_engine_open(&e, f->uri, NULL), OG_OK);
    check_branch(e, "main", h0.commit, "seed", jobs, 6, acks, nacks, h0.seq);
    for (int i = 0; i < 3; i++) check_branch(e, branches[i], h0.commit, "seed", jobs, 6, acks, nacks, seqs[i]);
    og_engine_close(e);
    fixture_free(f);
}

/* `--from BASE` racing itself: K processes fork the same missing branch and write to it at
 * once; every fork succeeds (a lost create means someone else forked it: write onto theirs),
 * the branch is created exactly once and every write is on it. */
static void fork_missing_racing_itself_creates_the_branch_once_and_every_write_lands(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    og_write_result w;
    assert_int_equal(add_person(f->e, "main", "seed", &w), OG_OK);
    enum { NF = 4 };
    int start[2], outs[NF];
    pid_t pids[NF];
    assert_int_equal(pipe(start), 0);
    for (int i = 0; i < NF; i++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        fflush(NULL);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(start[1]);
            close(p[0]);
            char go;
            if (read(start[0], &go, 1) != 1) _exit(5);
            og_engine *e;
            if (og_engine_open(&e, f->uri, NULL) != OG_OK) _exit(3);
            if (og_history_fork_missing(og_engine_graph(e), "feat", "main", NULL) != OG_OK) _exit(8);
            ack a;
            memset(&a, 0, sizeof a);
            snprintf(a.name, sizeof a.name, "f%d", i);
            og_write_result wr;
            memset(&wr, 0, sizeof wr);
            og_status st = OG_ERR_CONFLICT;
            for (int t = 0; t < 20 && st == OG_ERR_CONFLICT; t++) st = add_person(e, "feat", a.name, &wr);
            if (st != OG_OK) _exit(4);
            snprintf(a.commit, sizeof a.commit, "%s", wr.commit);
            if (write(p[1], &a, sizeof a) != (ssize_t)sizeof a) _exit(6);
            og_engine_close(e);
            _exit(0);
        }
        close(p[1]);
        outs[i] = p[0];
    }
    close(start[0]);
    char go[NF] = {0};
    assert_int_equal(write(start[1], go, NF), NF);
    close(start[1]);
    ack acks[NF];
    for (int i = 0; i < NF; i++) {
        read_exact(outs[i], &acks[i], sizeof acks[i]);
        close(outs[i]);
        wait_ok(pids[i]);
    }
    og_ref_entry first, h;
    log_entry(f->e, "feat", 1, &first);
    assert_int_equal(first.kind, OG_REF_CREATE);
    head_of(f->e, "feat", &h);
    assert_int_equal(h.seq, 1 + NF); /* one create, then exactly the NF writes */
    check_log_chain(f->e, "feat", 1, NULL, NULL);
    char got[1024];
    query(f->e, "feat", NULL, "names", got, sizeof got);
    assert_string_equal(got, "f0;f1;f2;f3;seed");
    fixture_free(f);
}

/* ---- (b) a merge racing a write to its target -------------------------------------------------- */

/* The merging process pauses in its attempt hook on attempt 1: it tells the helper process
 * (which then publishes its write on the target and answers with the commit id) and waits. */
typedef struct pause_ctx {
    int to_helper, from_helper;
    int calls;
    ulid_t helper_commit;
} pause_ctx;

static void pause_hook(int attempt, void *arg)
{
    pause_ctx *p = arg;
    p->calls++;
    if (attempt != 1) return;
    char go = 'g';
    if (write(p->to_helper, &go, 1) != 1) fail_msg("hook: write");
    read_exact(p->from_helper, p->helper_commit, OG_ULID_LEN);
    p->helper_commit[OG_ULID_LEN] = '\0';
}

/* What the helper does once the merge has planned. */
typedef enum helper_act { H_MUTATE, H_DELETE, H_DELETE_RECREATE } helper_act;

typedef struct helper {
    pid_t pid;
    int to_helper, from_helper; /* parent's ends */
} helper;

/* Forks a helper that waits for the hook, then on `branch`: runs mutation `name` with
 * `params` (H_MUTATE; answers with the published commit), or deletes it (answers with 26
 * zeros), or deletes and re-creates it from main (answers with the new start commit). */
static helper helper_start(const char *uri, helper_act act, const char *branch, const char *name, const char *params)
{
    int a[2], b[2];
    assert_int_equal(pipe(a), 0);
    assert_int_equal(pipe(b), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        og_engine *e;
        if (og_engine_open(&e, uri, NULL) != OG_OK) _exit(3);
        char go;
        if (read(a[0], &go, 1) != 1) _exit(5);
        char reply[OG_ULID_LEN + 1];
        memset(reply, '0', OG_ULID_LEN);
        og_status st = OG_OK;
        if (act == H_MUTATE) {
            og_write_result w;
            memset(&w, 0, sizeof w);
            st = mutate(e, branch, name, params, &w);
            if (st == OG_OK && !w.published) st = OG_ERR_INTERNAL;
            if (st == OG_OK) memcpy(reply, w.commit, OG_ULID_LEN);
        } else {
            st = og_branch_delete(og_engine_graph(e), branch, NULL);
            og_ref_entry ce;
            if (st == OG_OK && act == H_DELETE_RECREATE) st = og_branch_create(og_engine_graph(e), branch, "main", NULL, NULL, &ce);
            if (st == OG_OK && act == H_DELETE_RECREATE) memcpy(reply, ce.commit, OG_ULID_LEN);
        }
        if (st) fprintf(stderr, "helper: %s\n", og_error_message());
        if (write(b[1], reply, OG_ULID_LEN) != OG_ULID_LEN) _exit(6);
        og_engine_close(e);
        _exit(st ? 4 : 0);
    }
    close(a[0]);
    close(b[1]);
    helper h = {pid, a[1], b[0]};
    return h;
}

static void helper_end(helper *h)
{
    close(h->to_helper);
    close(h->from_helper);
    wait_ok(h->pid);
}

/* A fixture with main = {A, B} and branch dev forked from it, then dev inserts C and sets
 * A's age (one mutation each). */
static fixture *merge_fixture(og_ref_entry *main_head)
{
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    og_write_result w;
    assert_int_equal(add_person(f->e, "main", "A", &w), OG_OK);
    assert_int_equal(add_person(f->e, "main", "B", &w), OG_OK);
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "dev", "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(add_person(f->e, "dev", "C", &w), OG_OK);
    assert_int_equal(mutate(f->e, "dev", "set_age", "{\"n\": \"A\", \"a\": 7}", &w), OG_OK);
    head_of(f->e, "main", main_head);
    return f;
}

static void merge_race_planned_fast_forward_is_replanned_as_a_merge_keeping_the_write(void **state)
{
    (void)state;
    og_ref_entry h0;
    fixture *f = merge_fixture(&h0);
    helper h = helper_start(f->uri, H_MUTATE, "main", "add", "{\"n\": \"W\"}");
    pause_ctx p = {h.to_helper, h.from_helper, 0, ""};
    og_merge_opts mo = {"dev", "main", NULL, pause_hook, &p};
    og_merge_result r;
    og_status st = og_engine_merge(f->e, &mo, &r);
    if (st) fail_msg("merge: %s", og_error_message());
    helper_end(&h);
    /* attempt 1 planned a fast-forward on h0 and lost its publish to W; attempt 2 merged */
    assert_int_equal(p.calls, 2);
    assert_int_equal(r.write.attempts, 2);
    assert_int_equal(r.outcome, OG_MERGE_MERGED);
    assert_string_equal(r.target_head, p.helper_commit);
    assert_string_equal(r.base, h0.commit);
    const og_commit *mc;
    og_cache_entry *hold;
    assert_int_equal(og_graph_commit_get(og_engine_graph(f->e), r.write.commit, &mc, &hold), OG_OK);
    assert_int_equal(mc->nparents, 2);
    assert_string_equal(mc->parents[0], p.helper_commit); /* published on the new head, not h0 */
    og_cache_entry_release(hold);
    /* W survives in main's history and its effect is visible with the merge's */
    ulid_t chain[8];
    size_t k = chain_to(f->e, r.write.commit, h0.commit, chain, 8);
    assert_int_equal(k, 2);
    assert_string_equal(chain[1], p.helper_commit);
    char got[512];
    query(f->e, "main", NULL, "ages", got, sizeof got);
    assert_string_equal(got, "A|7;B|null;C|null;W|null");
    og_merge_result_free(&r);
    fixture_free(f);
}

static void merge_race_three_way_is_replanned_on_the_new_head(void **state)
{
    (void)state;
    og_ref_entry h0;
    fixture *f = merge_fixture(&h0);
    og_write_result w;
    assert_int_equal(add_person(f->e, "main", "M", &w), OG_OK); /* main diverged: a three-way merge */
    helper h = helper_start(f->uri, H_MUTATE, "main", "set_age", "{\"n\": \"B\", \"a\": 9}");
    pause_ctx p = {h.to_helper, h.from_helper, 0, ""};
    og_merge_opts mo = {"dev", "main", NULL, pause_hook, &p};
    og_merge_result r;
    og_status st = og_engine_merge(f->e, &mo, &r);
    if (st) fail_msg("merge: %s", og_error_message());
    helper_end(&h);
    assert_int_equal(r.write.attempts, 2);
    assert_int_equal(r.outcome, OG_MERGE_MERGED);
    assert_string_equal(r.target_head, p.helper_commit);
    const og_commit *mc;
    og_cache_entry *hold;
    assert_int_equal(og_graph_commit_get(og_engine_graph(f->e), r.write.commit, &mc, &hold), OG_OK);
    assert_string_equal(mc->parents[0], p.helper_commit);
    og_cache_entry_release(hold);
    char got[512];
    query(f->e, "main", NULL, "ages", got, sizeof got);
    assert_string_equal(got, "A|7;B|9;C|null;M|null");
    og_merge_result_free(&r);
    fixture_free(f);
}

static void merge_race_with_if_commit_fails_precondition_and_publishes_nothing(void **state)
{
    (void)state;
    og_ref_entry h0;
    fixture *f = merge_fixture(&h0);
    helper h = helper_start(f->uri, H_MUTATE, "main", "add", "{\"n\": \"W\"}");
    pause_ctx p = {h.to_helper, h.from_helper, 0, ""};
    og_merge_opts mo = {"dev", "main", h0.commit, pause_hook, &p};
    og_merge_result r;
    assert_int_equal(og_engine_merge(f->e, &mo, &r), OG_ERR_PRECONDITION_FAILED);
    assert_non_null(strstr(og_error_message(), "expected head"));
    helper_end(&h);
    assert_int_equal(p.calls, 1); /* never re-planned */
    og_ref_entry now;
    head_of(f->e, "main", &now);
    assert_string_equal(now.commit, p.helper_commit);
    assert_int_equal(now.seq, h0.seq + 1);
    char got[512];
    query(f->e, "main", NULL, "ages", got, sizeof got);
    assert_string_equal(got, "A|null;B|null;W|null");
    og_merge_result_free(&r);
    fixture_free(f);
}

static void merge_race_write_making_the_merge_divergent_fails_with_conflict(void **state)
{
    (void)state;
    og_ref_entry h0;
    fixture *f = merge_fixture(&h0);
    /* while the merge (a fast-forward on h0) waits, main sets A's age to 8: dev set it to 7 */
    helper h = helper_start(f->uri, H_MUTATE, "main", "set_age", "{\"n\": \"A\", \"a\": 8}");
    pause_ctx p = {h.to_helper, h.from_helper, 0, ""};
    og_merge_opts mo = {"dev", "main", NULL, pause_hook, &p};
    og_merge_result r;
    assert_int_equal(og_engine_merge(f->e, &mo, &r), OG_ERR_CONFLICT);
    helper_end(&h);
    assert_int_equal(p.calls, 1); /* attempt 2 found the conflict before any effect */
    assert_int_equal(r.nconflicts, 1);
    assert_int_equal(r.conflicts[0].kind, OG_CONFLICT_DIVERGENT_UPDATE);
    assert_string_equal(r.conflicts[0].id, "A");
    assert_non_null(strstr(og_error_message(), "divergent_update"));
    og_ref_entry now;
    head_of(f->e, "main", &now);
    assert_string_equal(now.commit, p.helper_commit); /* W is the head; the merge published nothing */
    char got[512];
    query(f->e, "main", NULL, "ages", got, sizeof got);
    assert_string_equal(got, "A|8;B|null");
    og_merge_result_free(&r);
    fixture_free(f);
}

/* ---- (c) a branch delete racing writes to that branch ------------------------------------------ */

/* main = {A}; branch x forked from main with one row X; branch src forked from x with S. */
static fixture *delete_fixture(og_ref_entry *x_head)
{
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    og_write_result w;
    assert_int_equal(add_person(f->e, "main", "A", &w), OG_OK);
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "x", "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(add_person(f->e, "x", "X", &w), OG_OK);
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "src", "x", NULL, NULL, NULL), OG_OK);
    assert_int_equal(add_person(f->e, "src", "S", &w), OG_OK);
    head_of(f->e, "x", x_head);
    return f;
}

static void delete_race_merge_into_a_deleted_branch_fails_not_found_publishing_nothing(void **state)
{
    (void)state;
    og_ref_entry x0;
    fixture *f = delete_fixture(&x0);
    helper h = helper_start(f->uri, H_DELETE, "x", NULL, NULL);
    pause_ctx p = {h.to_helper, h.from_helper, 0, ""};
    og_merge_opts mo = {"src", "x", NULL, pause_hook, &p};
    og_merge_result r;
    assert_int_equal(og_engine_merge(f->e, &mo, &r), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "deleted"));
    helper_end(&h);
    og_ref_entry now;
    head_of(f->e, "x", &now);
    assert_int_equal(now.kind, OG_REF_DELETE);
    assert_int_equal(now.seq, x0.seq + 1); /* the delete is the only entry after x0 */
    assert_string_equal(now.previous, x0.commit);
    og_merge_result_free(&r);
    fixture_free(f);
}

static void delete_race_merge_into_a_recreated_branch_is_replanned_on_the_new_incarnation(void **state)
{
    (void)state;
    og_ref_entry x0;
    fixture *f = delete_fixture(&x0);
    helper h = helper_start(f->uri, H_DELETE_RECREATE, "x", NULL, NULL);
    pause_ctx p = {h.to_helper, h.from_helper, 0, ""};
    og_merge_opts mo = {"src", "x", NULL, pause_hook, &p};
    og_merge_result r;
    og_status st = og_engine_merge(f->e, &mo, &r);
    if (st) fail_msg("merge: %s", og_error_message());
    helper_end(&h);
    /* attempt 1: a fast-forward of x0 (stale); attempt 2: on the new x, whose start is main's head */
    assert_int_equal(r.write.attempts, 2);
    og_ref_entry mh;
    head_of(f->e, "main", &mh);
    assert_string_equal(p.helper_commit, mh.commit);
    assert_string_equal(r.target_head, mh.commit);
    assert_int_equal(r.outcome, OG_MERGE_FAST_FORWARD); /* main's head is an ancestor of src */
    og_ref_entry now, create;
    head_of(f->e, "x", &now);
    log_entry(f->e, "x", x0.seq + 2, &create);
    assert_int_equal(create.kind, OG_REF_CREATE);
    assert_string_not_equal(create.incarnation, x0.incarnation);
    assert_int_equal(now.seq, x0.seq + 3);
    assert_string_equal(now.incarnation, create.incarnation);
    assert_string_equal(now.previous, mh.commit); /* not x0: the old base never lands here */
    check_log_chain(f->e, "x", x0.seq, NULL, NULL);
    og_merge_result_free(&r);
    fixture_free(f);
}

static void delete_race_writes_acknowledged_before_the_delete_stay_in_the_deleted_incarnation(void **state)
{
    (void)state;
    fixture *f = fixture_new(SCHEMA, QUERIES);
    assert_non_null(f);
    og_write_result w;
    assert_int_equal(add_person(f->e, "main", "A", &w), OG_OK);
    og_ref_entry x0;
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "x", "main", NULL, NULL, &x0), OG_OK);
    enum { NW = 3, BEFORE = 6 };
    int start[2], stop[2], outs[NW];
    pid_t pids[NW];
    assert_int_equal(pipe(start), 0);
    assert_int_equal(pipe(stop), 0);
    for (int i = 0; i < NW; i++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        fflush(NULL);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(start[1]);
            close(stop[1]);
            close(p[0]);
            char tag[8];
            snprintf(tag, sizeof tag, "d%d", i);
            child_writer(f->uri, "x", tag, start[0], p[1], 0, stop[0]);
        }
        close(p[1]);
        outs[i] = p[0];
    }
    close(start[0]);
    close(stop[0]);
    char go[NW] = {0};
    assert_int_equal(write(start[1], go, NW), NW);
    close(start[1]);
    /* read acks until BEFORE arrived, then delete x (the writers keep going) */
    static ack before[MAX_ACKS], after[MAX_ACKS];
    size_t nbefore = 0, nafter = 0;
    while (nbefore < BEFORE) {
        struct pollfd pf[NW];
        for (int i = 0; i < NW; i++) pf[i] = (struct pollfd){outs[i], POLLIN, 0};
        assert_true(poll(pf, NW, 20000) > 0);
        for (int i = 0; i < NW; i++)
            if (pf[i].revents & POLLIN) read_exact(outs[i], &before[nbefore++], sizeof before[0]);
    }
    og_ref_entry del;
    assert_int_equal(og_branch_delete(og_engine_graph(f->e), "x", NULL), OG_OK);
    head_of(f->e, "x", &del);
    assert_int_equal(del.kind, OG_REF_DELETE);
    /* a moment with x deleted (writers get not_found), then x again from main */
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    og_ref_entry x2;
    assert_int_equal(og_branch_create(og_engine_graph(f->e), "x", "main", NULL, NULL, &x2), OG_OK);
    nanosleep(&ts, NULL);
    nanosleep(&ts, NULL);
    close(stop[1]); /* POLLIN (EOF) on stop: writers finish */
    for (int i = 0; i < NW; i++) {
        ack a;
        while (read(outs[i], &a, sizeof a) == (ssize_t)sizeof a) {
            assert_true(nafter < MAX_ACKS);
            after[nafter++] = a;
        }
        close(outs[i]);
        wait_ok(pids[i]);
    }
    /* the deleted incarnation's history: first parents from the head the delete ended */
    static ulid_t old_chain[MAX_ACKS], new_chain[MAX_ACKS];
    size_t nold = chain_to(f->e, del.previous, x0.commit, old_chain, MAX_ACKS);
    for (size_t i = 0; i < nbefore; i++)
        if (in_set((const ulid_t *)old_chain, nold, before[i].commit) != 1)
            fail_msg("write %s acknowledged before the delete is not in the deleted incarnation's history", before[i].name);
    og_ref_entry xh;
    head_of(f->e, "x", &xh);
    assert_string_equal(xh.incarnation, x2.incarnation);
    size_t nnew = chain_to(f->e, xh.commit, x2.commit, new_chain, MAX_ACKS);
    /* every later ack is on exactly one of the two histories; the new one holds nothing else */
    size_t on_new = 0;
    for (size_t i = 0; i < nafter; i++) {
        int o = in_set((const ulid_t *)old_chain, nold, after[i].commit), n = in_set((const ulid_t *)new_chain, nnew, after[i].commit);
        if (o + n != 1) fail_msg("ack %s is on %d old and %d new histories", after[i].name, o, n);
        on_new += (size_t)n;
    }
    assert_int_equal(on_new, nnew);
    assert_int_equal(nold, nbefore + (nafter - on_new));
    /* the new incarnation's rows: main's plus its own writes only (no row of the old one) */
    char *got = malloc(65536);
    query(f->e, "x", NULL, "names", got, 65536);
    assert_int_equal(count_rows(got), 1 + nnew);
    for (size_t i = 0; i < nbefore; i++)
        if (has_row(got, before[i].name)) fail_msg("old incarnation's row %s is on the new x", before[i].name);
    free(got);
    check_log_chain(f->e, "x", x0.seq, NULL, NULL);
    print_message("delete race: %zu acks before the delete, %zu after (%zu on the new incarnation)\n", nbefore,
                  nafter, on_new);
    fixture_free(f);
}

int main(void)
{
    (void)fixture_load; /* fixture.h helpers this file does not need */
    (void)fixture_query;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writers_on_one_branch_all_acknowledged_writes_once_in_a_linear_history),
        cmocka_unit_test(writers_on_several_branches_each_history_holds_exactly_its_writes),
        cmocka_unit_test(fork_missing_racing_itself_creates_the_branch_once_and_every_write_lands),
        cmocka_unit_test(merge_race_planned_fast_forward_is_replanned_as_a_merge_keeping_the_write),
        cmocka_unit_test(merge_race_three_way_is_replanned_on_the_new_head),
        cmocka_unit_test(merge_race_with_if_commit_fails_precondition_and_publishes_nothing),
        cmocka_unit_test(merge_race_write_making_the_merge_divergent_fails_with_conflict),
        cmocka_unit_test(delete_race_merge_into_a_deleted_branch_fails_not_found_publishing_nothing),
        cmocka_unit_test(delete_race_merge_into_a_recreated_branch_is_replanned_on_the_new_incarnation),
        cmocka_unit_test(delete_race_writes_acknowledged_before_the_delete_stay_in_the_deleted_incarnation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
