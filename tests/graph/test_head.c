/*
 * test_head.c — head lookup: the hint is used (a constant number of probes), and the true
 * head is still found when the hint is stale, missing, corrupt, ahead of the log, names
 * another branch, or points at entries that cleanup reclaimed; a corrupt log entry is a typed
 * corrupt error naming its key.  Kept heads (og_graph_keep_heads): a warm lookup makes
 * no store call, and a commit, branch delete or re-create by another process is seen by the
 * very next lookup (on a store that cannot watch, every lookup probes and is just as right).
 */
#include <sys/wait.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "graph_testutil.h"

#define N_COMMITS 20

typedef struct fixture {
    char *dir;
    og_store *st;
    og_graph *g;
    char head[OG_ULID_LEN + 1];
    uint64_t seq;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir();
    f->st = tu_store(f->dir);
    f->g = tu_init(f->st);
    og_write_result r = {0};
    if (og_branch_create(f->g, "b", "main", NULL, NULL, NULL) != OG_OK) return -1;
    for (int i = 0; i < N_COMMITS; i++)
        if (tu_commit(f->g, "b", &r) != OG_OK) return -1;
    memcpy(f->head, r.commit, sizeof f->head);
    f->seq = r.seq;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    og_graph_close(f->g);
    og_store_close(f->st);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Opens a fresh handle (no memory hints), resolves branch b, checks it is the true head. */
static og_head_stats lookup_fresh(fixture *f, int use_hint)
{
    og_graph_opts o = {0};
    o.use_hint = use_hint;
    og_graph *g;
    assert_int_equal(og_graph_open(&g, f->st, &o), OG_OK);
    og_head_stats before, after;
    og_graph_head_stats(g, &before);
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(g, "b", &e), OG_OK);
    assert_int_equal(e.seq, f->seq);
    assert_string_equal(e.commit, f->head);
    og_graph_head_stats(g, &after);
    og_graph_close(g);
    after.lookups -= before.lookups;
    after.hint_hits -= before.hint_hits;
    after.list_fallbacks -= before.list_fallbacks;
    after.probes -= before.probes;
    return after;
}

static void put_hint(fixture *f, const char *body)
{
    assert_int_equal(og_store_put(f->st, "_graph/hints/b.json", body, strlen(body)), OG_OK);
}

static void hint_gives_constant_probe_lookup(void **state)
{
    fixture *f = *state;
    og_head_stats s = lookup_fresh(f, 0);
    assert_int_equal(s.hint_hits, 1);
    assert_int_equal(s.list_fallbacks, 0);
    assert_true(s.probes <= 2); /* the hinted entry + the miss after it */
    /* Warm handle: the hinted entry is cached, only the miss probe remains. */
    og_head_stats b, a;
    og_graph_head_stats(f->g, &b);
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(f->g, "b", &e), OG_OK);
    og_graph_head_stats(f->g, &a);
    assert_int_equal(a.probes - b.probes, 1);
    assert_int_equal(a.list_fallbacks, b.list_fallbacks);
}

static void stale_hint_gallops_to_true_head(void **state)
{
    fixture *f = *state;
    put_hint(f, "{\"branch\":\"b\",\"seq\":1}");
    og_head_stats s = lookup_fresh(f, 0);
    assert_int_equal(s.hint_hits, 1);
    assert_int_equal(s.list_fallbacks, 0);
    assert_true(s.probes <= 12); /* ~2*log2(20) */
}

static void missing_hint_falls_back_to_list(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_store_delete(f->st, "_graph/hints/b.json"), OG_OK);
    og_head_stats s = lookup_fresh(f, 0);
    assert_int_equal(s.list_fallbacks, 1);
    assert_int_equal(s.hint_hits, 0);
}

static void corrupt_or_wrong_hints_fall_back_to_list(void **state)
{
    fixture *f = *state;
    const char *bad[] = {"garbage", "{\"branch\":\"b\",\"seq\":999999}", "{\"branch\":\"other\",\"seq\":3}",
                         "{\"branch\":\"b\",\"seq\":-4}", "{\"branch\":\"b\"}", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_hint(f, bad[i]);
        og_head_stats s = lookup_fresh(f, 0);
        assert_int_equal(s.list_fallbacks, 1);
    }
}

static void hints_disabled_still_finds_head(void **state)
{
    fixture *f = *state;
    og_head_stats s = lookup_fresh(f, -1);
    assert_int_equal(s.list_fallbacks, 1);
}

static void reclaimed_old_entries_are_handled(void **state)
{
    fixture *f = *state;
    put_hint(f, "{\"branch\":\"b\",\"seq\":3}");
    /* What cleanup may do: delete old entries in ascending order, never the newest. */
    for (uint64_t s = 1; s < f->seq; s++) {
        char key[512];
        assert_int_equal(og_ref_key("b", s, key, sizeof key), OG_OK);
        assert_int_equal(og_store_delete(f->st, key), OG_OK);
    }
    og_head_stats s = lookup_fresh(f, 0);
    assert_int_equal(s.list_fallbacks, 1);
    /* The warm handle remembers the head seq (still present): no list needed. */
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(f->g, "b", &e), OG_OK);
    assert_int_equal(e.seq, f->seq);
    /* And the next write still works. */
    og_write_result r;
    assert_int_equal(tu_commit(f->g, "b", &r), OG_OK);
    assert_int_equal(r.seq, f->seq + 1);
}

static void other_handle_sees_new_head_from_its_memory_hint(void **state)
{
    fixture *f = *state;
    og_graph *g2 = tu_open(f->st);
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(g2, "b", &e), OG_OK);
    og_write_result r;
    for (int i = 0; i < 5; i++) assert_int_equal(tu_commit(f->g, "b", &r), OG_OK);
    assert_int_equal(og_graph_head_entry(g2, "b", &e), OG_OK);
    assert_string_equal(e.commit, r.commit);
    assert_int_equal(e.seq, r.seq);
    og_graph_close(g2);
}

static void corrupt_log_entry_is_typed_corrupt(void **state)
{
    fixture *f = *state;
    char key[512];
    assert_int_equal(og_ref_key("b", f->seq + 1, key, sizeof key), OG_OK);
    assert_int_equal(og_store_put(f->st, key, "{\"seq\":1}", 9), OG_OK);
    og_graph *g2 = tu_open(f->st);
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(g2, "b", &e), OG_ERR_CORRUPT);
    assert_non_null(strstr(og_error_message(), key));
    og_graph_close(g2);
}


/* ---- kept heads (og_graph_keep_heads) ---------------------------------------------------------- */

static og_graph *open_keeping(fixture *f)
{
    og_graph *g = tu_open(f->st);
    og_graph_keep_heads(g, 1);
    return g;
}

/* 1 when the fixture's store can watch (a local directory on a local file system). */
static int can_watch(fixture *f)
{
    og_status st = og_store_watch(f->st, "_graph/refs/b/");
    og_error_clear();
    return st == OG_OK;
}

/* In another process (its own store and handle): `commits` commits on branch b, then, when
 * `del`, deletes b, and when `recreate`, creates it again from main. */
static void other_process(fixture *f, int commits, int del, int recreate)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        og_store *st;
        og_graph *g;
        if (og_store_open(&st, f->dir) != OG_OK || og_graph_open(&g, st, NULL) != OG_OK) _exit(2);
        og_write_result r;
        for (int i = 0; i < commits; i++)
            if (tu_commit(g, "b", &r) != OG_OK) _exit(3);
        if (del && og_branch_delete(g, "b", "tester") != OG_OK) _exit(4);
        if (recreate && og_branch_create(g, "b", "main", NULL, NULL, NULL) != OG_OK) _exit(5);
        og_graph_close(g);
        og_store_close(st);
        _exit(0);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
}

static void kept_head_costs_no_store_call(void **state)
{
    fixture *f = *state;
    og_graph *g = open_keeping(f);
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(g, "b", &e), OG_OK); /* found and kept */
    og_head_stats b, a;
    og_graph_head_stats(g, &b);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(og_graph_head_entry(g, "b", &e), OG_OK);
        assert_int_equal(e.seq, f->seq);
        assert_string_equal(e.commit, f->head);
    }
    og_graph_head_stats(g, &a);
    if (can_watch(f)) {
        assert_int_equal(a.cache_hits - b.cache_hits, 5);
        assert_int_equal(a.probes, b.probes);
    } else {
        printf("SKIP: (kept heads) the store cannot watch: every lookup probed\n");
        assert_int_equal(a.cache_hits, 0);
    }
    /* this handle's own commit: the next lookup finds it (and keeps it) */
    og_write_result r;
    assert_int_equal(tu_commit(g, "b", &r), OG_OK);
    assert_int_equal(og_graph_head_entry(g, "b", &e), OG_OK);
    assert_string_equal(e.commit, r.commit);
    og_graph_close(g);
}

static void kept_head_sees_other_process_writes(void **state)
{
    fixture *f = *state;
    og_graph *g = open_keeping(f);
    og_ref_entry e;
    uint64_t seq = f->seq;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 3; i++) assert_int_equal(og_graph_head_entry(g, "b", &e), OG_OK); /* warm */
        assert_int_equal(e.seq, seq);
        other_process(f, round + 1, 0, 0);
        seq += (uint64_t)round + 1;
        assert_int_equal(og_graph_head_entry(g, "b", &e), OG_OK); /* the very next lookup */
        assert_int_equal(e.seq, seq);
        char id[OG_ULID_LEN + 1];
        uint64_t s2;
        og_graph *fresh = tu_open(f->st);
        tu_head(fresh, "b", id, &s2);
        og_graph_close(fresh);
        assert_string_equal(e.commit, id);
    }
    /* deleted elsewhere: the snapshot of b is not found; re-created elsewhere: found again */
    og_snapshot *snap;
    assert_int_equal(og_graph_snapshot_branch(g, "b", &snap), OG_OK);
    og_snapshot_free(snap);
    other_process(f, 0, 1, 0);
    assert_int_equal(og_graph_snapshot_branch(g, "b", &snap), OG_ERR_NOT_FOUND);
    other_process(f, 0, 0, 1);
    assert_int_equal(og_graph_snapshot_branch(g, "b", &snap), OG_OK);
    og_snapshot_free(snap);
    /* and main, kept meanwhile, moved by another process too */
    assert_int_equal(og_graph_head_entry(g, "main", &e), OG_OK);
    uint64_t main_seq = e.seq;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        og_store *st;
        og_graph *g2;
        og_write_result r;
        if (og_store_open(&st, f->dir) != OG_OK || og_graph_open(&g2, st, NULL) != OG_OK) _exit(2);
        _exit(tu_commit(g2, "main", &r) == OG_OK ? 0 : 3);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_int_equal(og_graph_head_entry(g, "main", &e), OG_OK);
    assert_int_equal(e.seq, main_seq + 1);
    og_graph_close(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(hint_gives_constant_probe_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_hint_gallops_to_true_head, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_hint_falls_back_to_list, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupt_or_wrong_hints_fall_back_to_list, setup, teardown),
        cmocka_unit_test_setup_teardown(hints_disabled_still_finds_head, setup, teardown),
        cmocka_unit_test_setup_teardown(reclaimed_old_entries_are_handled, setup, teardown),
        cmocka_unit_test_setup_teardown(other_handle_sees_new_head_from_its_memory_hint, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupt_log_entry_is_typed_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(kept_head_costs_no_store_call, setup, teardown),
        cmocka_unit_test_setup_teardown(kept_head_sees_other_process_writes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
