/*
 * test_concurrency.c — several writer processes on one graph.  K=4 processes each commit
 * M=25 times to main: every acknowledged commit is in the final history exactly once, the
 * history is one linear parent chain with nothing unacknowledged in it, and the log's seqs
 * are dense and name that chain in order.  Then writers on two branches of one graph at once,
 * threads sharing one graph handle, and the in-process pipeline of one branch: a writer
 * plans on the entry the writer before it is still publishing, and when that one is not
 * published the follower publishes nothing of its plan and starts again.
 *
 * Runs on a local directory, or on the object store at $OG_TEST_STORE_URI (graph_testutil.h;
 * tests/store/run-s3-tests.sh runs it against the S3 test store).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sys/wait.h>

#include "graph_testutil.h"

#define K 4
#define M 25
#define MAX_IDS 1024

typedef char ulid_t[OG_ULID_LEN + 1];

/* Child: wait for the start signal, then commit until M acknowledgements, writing each
 * acknowledged commit id to `out`.  Exit code: 0 ok, else how it failed. */
static void child_writer(const char *dir, const char *branch, int start_fd, int out_fd, int m)
{
    char go;
    if (read(start_fd, &go, 1) < 0) _exit(5);
    og_store *st = tu_store(dir);
    og_graph *g;
    if (og_graph_open(&g, st, NULL) != OG_OK) _exit(3);
    int acks = 0, tries = 0, attempts = 0;
    while (acks < m && tries < 40 * m) {
        tries++;
        og_write_result r = {0};
        og_status s = tu_commit(g, branch, &r);
        attempts += r.attempts;
        if (s == OG_ERR_CONFLICT) continue; /* not acknowledged: nothing was published */
        if (s != OG_OK) {
            fprintf(stderr, "writer: %s\n", og_error_message());
            _exit(4);
        }
        char line[OG_ULID_LEN + 2];
        memcpy(line, r.commit, OG_ULID_LEN);
        line[OG_ULID_LEN] = '\n';
        if (write(out_fd, line, OG_ULID_LEN + 1) != OG_ULID_LEN + 1) _exit(6);
        acks++;
    }
    /* A last record: how many publish attempts the acknowledgements took. */
    char line[OG_ULID_LEN + 2];
    snprintf(line, sizeof line, "#%025d", attempts);
    line[OG_ULID_LEN] = '\n';
    if (write(out_fd, line, OG_ULID_LEN + 1) != OG_ULID_LEN + 1) _exit(6);
    og_graph_close(g);
    og_store_close(st);
    _exit(acks == m ? 0 : 7);
}

typedef struct job {
    const char *branch;
    int m;
} job;

/* Runs the writers concurrently; collects acknowledged ids per job index. */
static void run_writers(const char *dir, const job *jobs, int n, ulid_t *acked, size_t *nacked)
{
    int start[2];
    assert_int_equal(pipe(start), 0);
    int outs[16];
    pid_t pids[16];
    for (int i = 0; i < n; i++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        fflush(NULL);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(start[1]);
            close(p[0]);
            child_writer(dir, jobs[i].branch, start[0], p[1], jobs[i].m);
        }
        close(p[1]);
        outs[i] = p[0];
    }
    close(start[0]);
    close(start[1]); /* EOF releases every child at once */
    *nacked = 0;
    long total_attempts = 0;
    for (int i = 0; i < n; i++) {
        char buf[OG_ULID_LEN + 1];
        ssize_t got;
        while ((got = read(outs[i], buf, sizeof buf)) == (ssize_t)sizeof buf) {
            if (buf[0] == '#') {
                total_attempts += atol(buf + 1);
                continue;
            }
            assert_true(*nacked < MAX_IDS);
            memcpy(acked[*nacked], buf, OG_ULID_LEN);
            acked[*nacked][OG_ULID_LEN] = '\0';
            (*nacked)++;
        }
        close(outs[i]);
    }
    print_message("%zu acknowledged commits took %ld publish attempts\n", *nacked, total_attempts);
    for (int i = 0; i < n; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) != 0) fail_msg("writer %d exited %d", i, WEXITSTATUS(status));
    }
}

/* History of `branch` = chain from its head; checks linear, dense seqs, exactly the acks. */
static void check_history(og_graph *g, const char *branch, const char *fork_point, ulid_t *acked, size_t nacked,
                          size_t first_seq_commits)
{
    static ulid_t chain[MAX_IDS];
    char head[OG_ULID_LEN + 1];
    uint64_t seq;
    tu_head(g, branch, head, &seq);
    long len = tu_chain_len(g, head, chain, MAX_IDS);
    assert_true(len > 0); /* linear: no commit has two parents */
    /* Own commits are the chain down to the fork point. */
    size_t own = 0;
    while (own < (size_t)len && strcmp(chain[own], fork_point) != 0) own++;
    assert_int_equal(own, nacked);
    for (size_t i = 0; i < own; i++) {
        int hits = 0;
        for (size_t j = 0; j < nacked; j++) hits += strcmp(chain[i], acked[j]) == 0;
        if (hits != 1) fail_msg("commit %s appears %d times among the acknowledgements", chain[i], hits);
    }
    for (size_t j = 0; j < nacked; j++) {
        int hits = 0;
        for (size_t i = 0; i < own; i++) hits += strcmp(chain[i], acked[j]) == 0;
        if (hits != 1) fail_msg("acknowledged commit %s appears %d times in the history", acked[j], hits);
    }
    /* Dense seqs: entry first_seq_commits + k names chain[own-k]. */
    assert_int_equal(seq, first_seq_commits + own);
    for (size_t k = 1; k <= own; k++) {
        char key[512];
        og_bytes b = {0};
        og_ref_entry e;
        assert_int_equal(og_ref_key(branch, first_seq_commits + k, key, sizeof key), OG_OK);
        assert_int_equal(og_store_get(og_graph_store(g), key, &b), OG_OK);
        assert_int_equal(og_ref_entry_decode(b.data, b.len, key, &e), OG_OK);
        og_bytes_free(&b);
        assert_int_equal(e.kind, OG_REF_ADVANCE);
        assert_string_equal(e.commit, chain[own - k]);
        assert_string_equal(e.previous, own - k + 1 < (size_t)len ? chain[own - k + 1] : "");
    }
}

static void parallel_writers_on_one_branch_form_one_chain(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    og_graph *g = tu_init(st);
    char genesis[OG_ULID_LEN + 1];
    tu_head(g, "main", genesis, NULL);
    og_graph_close(g);
    job jobs[K];
    for (int i = 0; i < K; i++) jobs[i] = (job){"main", M};
    static ulid_t acked[MAX_IDS];
    size_t nacked;
    run_writers(dir, jobs, K, acked, &nacked);
    assert_int_equal(nacked, K * M);
    g = tu_open(st);
    check_history(g, "main", genesis, acked, nacked, 1);
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_branch(g, "main", &s), OG_OK);
    assert_int_equal(og_snapshot_table(s, "t_person")->version, 1 + K * M);
    og_snapshot_free(s);
    og_graph_close(g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

static void writers_on_two_branches_at_once(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    og_graph *g = tu_init(st);
    char genesis[OG_ULID_LEN + 1];
    tu_head(g, "main", genesis, NULL);
    assert_int_equal(og_branch_create(g, "agent/side", "main", NULL, NULL, NULL), OG_OK);
    og_graph_close(g);
    job jobs[4] = {{"main", 12}, {"agent/side", 12}, {"main", 12}, {"agent/side", 12}};
    static ulid_t acked[MAX_IDS];
    size_t nacked;
    run_writers(dir, jobs, 4, acked, &nacked);
    assert_int_equal(nacked, 48);
    /* Split the acknowledgements by branch: jobs wrote in order, but we can tell them apart by
     * checking which chain they are in. */
    g = tu_open(st);
    static ulid_t on_main[MAX_IDS], on_side[MAX_IDS];
    size_t nm = 0, ns = 0;
    static ulid_t chain[MAX_IDS];
    char head[OG_ULID_LEN + 1];
    tu_head(g, "main", head, NULL);
    long len = tu_chain_len(g, head, chain, MAX_IDS);
    assert_int_equal(len, 25);
    for (size_t j = 0; j < nacked; j++) {
        int in_main = 0;
        for (long i = 0; i < len; i++) in_main |= strcmp(chain[i], acked[j]) == 0;
        memcpy(in_main ? on_main[nm++] : on_side[ns++], acked[j], sizeof(ulid_t));
    }
    assert_int_equal(nm, 24);
    assert_int_equal(ns, 24);
    check_history(g, "main", genesis, on_main, nm, 1);
    check_history(g, "agent/side", genesis, on_side, ns, 1);
    og_graph_close(g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

typedef struct thread_job {
    og_graph *g;
    const char *branch;
    int acks;
    ulid_t ids[64];
} thread_job;

static void *thread_writer(void *arg)
{
    thread_job *j = arg;
    for (int tries = 0; j->acks < 10 && tries < 400; tries++) {
        og_write_result r;
        og_status s = tu_commit(j->g, j->branch, &r);
        if (s == OG_OK) memcpy(j->ids[j->acks++], r.commit, sizeof(ulid_t));
        else if (s != OG_ERR_CONFLICT) break;
    }
    return NULL;
}

static void threads_sharing_one_handle(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    og_graph *g = tu_init(st);
    char genesis[OG_ULID_LEN + 1];
    tu_head(g, "main", genesis, NULL);
    static thread_job jobs[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].g = g;
        jobs[i].branch = "main";
        assert_int_equal(pthread_create(&t[i], NULL, thread_writer, &jobs[i]), 0);
    }
    static ulid_t acked[MAX_IDS];
    size_t nacked = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(jobs[i].acks, 10);
        for (int k = 0; k < jobs[i].acks; k++) memcpy(acked[nacked++], jobs[i].ids[k], sizeof(ulid_t));
    }
    check_history(g, "main", genesis, acked, nacked, 1);
    og_graph_close(g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

/* ---- the in-process pipeline of one branch (docs/graph-authority.md §2) ------------------
 *
 * Writer A stops at "graph.before_publish" (its effects durable, its turn handed on, its
 * entry not yet published) until writer B, on another thread of the same handle, has
 * planned.  B must have planned on A's commit — not on the published head — and publish
 * after it.  With `steal`, A's hook then publishes a competing entry first (a nested write
 * of A's thread, which stays outside the pipeline), so A loses its publish: B, planned on a
 * commit that never became visible, must publish nothing of that plan, start again and land
 * once; so must A; and no entry may name anything of the two dead plans. */
typedef struct pipe_race {
    og_graph *g;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int a_waiting, b_planned, hooked, steal;
    char b_first_base[OG_ULID_LEN + 1];
    char published_at_b_plan[OG_ULID_LEN + 1];
    char stolen[OG_ULID_LEN + 1];
    int b_calls;
    og_write_result a, b;
    og_status a_st, b_st;
} pipe_race;

static _Thread_local int is_writer_a;

static int wait_flag(pipe_race *r, int *flag)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    int rc = 0;
    pthread_mutex_lock(&r->mu);
    while (!*flag && rc == 0) rc = pthread_cond_timedwait(&r->cv, &r->mu, &until);
    int got = *flag;
    pthread_mutex_unlock(&r->mu);
    return got;
}

static void set_flag(pipe_race *r, int *flag)
{
    pthread_mutex_lock(&r->mu);
    *flag = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void race_hook(const char *point, void *arg)
{
    pipe_race *r = arg;
    if (!is_writer_a || r->hooked || strcmp(point, "graph.before_publish") != 0) return;
    r->hooked = 1;
    set_flag(r, &r->a_waiting);
    if (!wait_flag(r, &r->b_planned)) return; /* B never planned on us: the test fails below */
    if (r->steal) {
        og_write_result w;
        if (tu_commit(r->g, "main", &w) == OG_OK) memcpy(r->stolen, w.commit, sizeof r->stolen);
    }
}

static og_status b_writer(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    pipe_race *r = ctx;
    if (r->b_calls++ == 0) {
        memcpy(r->b_first_base, og_snapshot_commit_id(base), sizeof r->b_first_base);
        char head[OG_ULID_LEN + 1];
        tu_head(g, "main", head, NULL);
        memcpy(r->published_at_b_plan, head, sizeof head);
        set_flag(r, &r->b_planned);
    }
    return tu_bump_fn(NULL, g, base, d, attempt);
}

static void *writer_a(void *arg)
{
    pipe_race *r = arg;
    is_writer_a = 1;
    r->a_st = tu_commit(r->g, "main", &r->a);
    return NULL;
}

static void *writer_b(void *arg)
{
    pipe_race *r = arg;
    if (!wait_flag(r, &r->a_waiting)) return NULL;
    og_write_opts o = {0};
    o.branch = "main";
    o.actor = "tester";
    r->b_st = og_graph_write(r->g, &o, b_writer, r, &r->b);
    return NULL;
}

static size_t commit_objects(og_store *st)
{
    og_keylist l;
    assert_int_equal(og_store_list(st, "_graph/commits/", NULL, 0, &l), OG_OK);
    size_t n = l.count;
    og_keylist_free(&l);
    return n;
}

static void pipeline_race(int steal)
{
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    og_graph_close(tu_init(st));
    static pipe_race r;
    memset(&r, 0, sizeof r);
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    r.steal = steal;
    og_graph_opts go = {0};
    go.step_hook = race_hook;
    go.step_hook_arg = &r;
    assert_int_equal(og_graph_open(&r.g, st, &go), OG_OK);
    char genesis[OG_ULID_LEN + 1];
    tu_head(r.g, "main", genesis, NULL);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, writer_a, &r), 0);
    assert_int_equal(pthread_create(&tb, NULL, writer_b, &r), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_true(r.b_planned);
    assert_int_equal(r.a_st, OG_OK);
    assert_int_equal(r.b_st, OG_OK);
    /* B planned on A's entry while main's published head was still the genesis */
    assert_string_equal(r.published_at_b_plan, genesis);
    assert_string_not_equal(r.b_first_base, genesis);
    ulid_t acked[3];
    size_t n = 0;
    memcpy(acked[n++], r.a.commit, sizeof(ulid_t));
    memcpy(acked[n++], r.b.commit, sizeof(ulid_t));
    if (!steal) {
        /* no one else wrote: A published what B planned on, and B landed on it first time */
        assert_string_equal(r.b_first_base, r.a.commit);
        assert_int_equal(r.a.attempts, 1);
        assert_int_equal(r.b.attempts, 1);
        assert_int_equal(r.b_calls, 1);
    } else {
        assert_true(r.stolen[0]);
        memcpy(acked[n++], r.stolen, sizeof(ulid_t));
        /* A lost to the stolen entry, so B's first plan stood on a commit never published */
        assert_true(r.a.attempts >= 2); /* more when the machine is slow enough for a plan to age */
        assert_true(r.b.attempts >= 2);
        assert_true(r.b_calls >= 2);
        assert_string_not_equal(r.b_first_base, r.a.commit);
    }
    check_history(r.g, "main", genesis, acked, n, 1);
    /* one commit object per commit on the branch; with `steal`, A's first attempt, which B
     * followed, leaves its effects to cleanup (B's manifest could name its files): garbage
     * that no entry names, as the history check above shows */
    if (!steal) assert_int_equal(commit_objects(st), n + 1);
    else assert_true(commit_objects(st) >= n + 2);
    og_graph_close(r.g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

static void a_writer_plans_on_the_entry_being_published(void **state)
{
    (void)state;
    pipeline_race(0);
}

static void a_plan_on_an_unpublished_write_is_dropped_and_redone(void **state)
{
    (void)state;
    pipeline_race(1);
}

/* Many threads of one handle on one branch, all at once: every write lands exactly once in
 * one dense chain (most of them planned on an entry still being published). */
static void many_threads_pipeline_into_one_branch(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    og_store *st = tu_store(dir);
    og_graph *g = tu_init(st);
    char genesis[OG_ULID_LEN + 1];
    tu_head(g, "main", genesis, NULL);
    enum { T = 12 };
    static thread_job jobs[T];
    pthread_t t[T];
    for (int i = 0; i < T; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].g = g;
        jobs[i].branch = "main";
        assert_int_equal(pthread_create(&t[i], NULL, thread_writer, &jobs[i]), 0);
    }
    static ulid_t acked[MAX_IDS];
    size_t nacked = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(jobs[i].acks, 10);
        for (int k = 0; k < jobs[i].acks; k++) memcpy(acked[nacked++], jobs[i].ids[k], sizeof(ulid_t));
    }
    check_history(g, "main", genesis, acked, nacked, 1);
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_branch(g, "main", &s), OG_OK);
    assert_int_equal(og_snapshot_table(s, "t_person")->version, 1 + T * 10);
    og_snapshot_free(s);
    assert_int_equal(commit_objects(st), nacked + 1);
    og_graph_close(g);
    og_store_close(st);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parallel_writers_on_one_branch_form_one_chain),
        cmocka_unit_test(writers_on_two_branches_at_once),
        cmocka_unit_test(threads_sharing_one_handle),
        cmocka_unit_test(a_writer_plans_on_the_entry_being_published),
        cmocka_unit_test(a_plan_on_an_unpublished_write_is_dropped_and_redone),
        cmocka_unit_test(many_threads_pipeline_into_one_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
