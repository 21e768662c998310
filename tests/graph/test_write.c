/*
 * test_write.c — the write protocol: snapshot isolation and time travel, the expected-head
 * precondition (no retry, nothing published), retry after a lost publish from a fresh capture,
 * retry exhaustion as a typed conflict, the ABA case (delete + recreate between capture and
 * publish), no-op drafts, writer errors, schema changes and merge parents.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <time.h>

#include "graph_testutil.h"

typedef struct fixture {
    char *dir;
    og_store *st;
    og_graph *g, *g2; /* two handles on one graph: g2 plays "another process" */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir();
    f->st = tu_store(f->dir);
    f->g = tu_init(f->st);
    f->g2 = tu_open(f->st);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    og_graph_close(f->g);
    og_graph_close(f->g2);
    og_store_close(f->st);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void snapshot_keeps_resolving_to_its_commit(void **state)
{
    fixture *f = *state;
    og_write_result r;
    assert_int_equal(tu_commit(f->g, "main", &r), OG_OK);
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_branch(f->g, "main", &s), OG_OK);
    assert_string_equal(og_snapshot_commit_id(s), r.commit);
    uint64_t v = og_snapshot_table(s, "t_person")->version;
    for (int i = 0; i < 5; i++) assert_int_equal(tu_commit(f->g2, "main", NULL), OG_OK);
    assert_string_equal(og_snapshot_commit_id(s), r.commit);
    assert_int_equal(og_snapshot_table(s, "t_person")->version, v);
    assert_int_equal(og_snapshot_head(s)->seq, r.seq);
    /* A fresh snapshot sees the new head; the old one is untouched. */
    og_snapshot *s2;
    assert_int_equal(og_graph_snapshot_branch(f->g, "main", &s2), OG_OK);
    assert_int_equal(og_snapshot_table(s2, "t_person")->version, v + 5);
    assert_int_equal(og_snapshot_table(s, "t_person")->version, v);
    og_snapshot_free(s2);
    /* Time travel: the old commit by id. */
    og_snapshot *s3;
    assert_int_equal(og_graph_snapshot_commit(f->g2, r.commit, &s3), OG_OK);
    assert_int_equal(og_snapshot_table(s3, "t_person")->version, v);
    assert_null(og_snapshot_head(s3));
    og_snapshot_free(s3);
    /* A snapshot outlives its handle. */
    og_graph_close(f->g);
    f->g = NULL;
    assert_string_equal(og_snapshot_commit_id(s), r.commit);
    assert_int_equal(og_snapshot_table(s, "t_person")->version, v);
    og_snapshot_free(s);
}

static void unknown_commit_is_not_found(void **state)
{
    fixture *f = *state;
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_commit(f->g, "01ARZ3NDEKTSV4RRFFQ69G5FAV", &s), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "01ARZ3NDEKTSV4RRFFQ69G5FAV"));
    assert_int_equal(og_graph_snapshot_commit(f->g, "nope", &s), OG_ERR_INVALID);
    assert_int_equal(og_graph_snapshot_branch(f->g, "nosuch", &s), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "nosuch"));
}

static void expected_head_mismatch_fails_without_retry(void **state)
{
    fixture *f = *state;
    char before[OG_ULID_LEN + 1];
    uint64_t seq;
    og_write_result r;
    assert_int_equal(tu_commit(f->g, "main", &r), OG_OK);
    tu_head(f->g, "main", before, &seq);
    tu_bump b = {0};
    og_write_opts o = {0};
    o.branch = "main";
    o.expected_head = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    assert_int_equal(og_graph_write(f->g, &o, tu_bump_fn, &b, NULL), OG_ERR_PRECONDITION_FAILED);
    assert_int_equal(b.calls, 0);
    char after[OG_ULID_LEN + 1];
    uint64_t seq2;
    tu_head(f->g2, "main", after, &seq2);
    assert_string_equal(before, after);
    assert_int_equal(seq, seq2);
    o.expected_head = before; /* matching: succeeds */
    assert_int_equal(og_graph_write(f->g, &o, tu_bump_fn, &b, &r), OG_OK);
    assert_int_equal(r.attempts, 1);
}

/* A writer that, on the calls listed, lets "another process" (g2) commit first. */
typedef struct racer {
    og_graph *other;
    int calls;
    int interfere_upto; /* interfere on calls 1..interfere_upto */
    char bases[16][OG_ULID_LEN + 1];
    int aba; /* instead of committing: delete the branch and recreate it from main */
} racer;

static og_status racer_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    racer *r = ctx;
    r->calls++;
    assert_int_equal(attempt, r->calls);
    memcpy(r->bases[r->calls - 1], og_snapshot_commit_id(base), OG_ULID_LEN + 1);
    if (r->calls <= r->interfere_upto) {
        const char *branch = og_snapshot_head(base)->branch;
        if (r->aba) {
            assert_int_equal(og_branch_delete(r->other, branch, "other"), OG_OK);
            assert_int_equal(og_branch_create(r->other, branch, "main", NULL, "other", NULL), OG_OK);
        } else {
            assert_int_equal(tu_commit(r->other, branch, NULL), OG_OK);
        }
    }
    return tu_bump_fn(NULL, g, base, d, attempt);
}

static void lost_publish_retries_from_fresh_capture(void **state)
{
    fixture *f = *state;
    racer rc = {f->g2, 0, 1, {{0}}, 0};
    og_write_opts o = {0};
    o.branch = "main";
    og_write_result r;
    assert_int_equal(og_graph_write(f->g, &o, racer_fn, &rc, &r), OG_OK);
    assert_int_equal(rc.calls, 2);
    assert_int_equal(r.attempts, 2);
    char head[OG_ULID_LEN + 1];
    uint64_t seq;
    tu_head(f->g2, "main", head, &seq);
    assert_string_equal(head, r.commit);
    assert_int_equal(seq, 3); /* create, the racer's commit, ours */
    /* The second attempt planned against the racer's commit, and our parent is that commit. */
    assert_string_not_equal(rc.bases[0], rc.bases[1]);
    const og_commit *c;
    og_cache_entry *h;
    assert_int_equal(og_graph_commit_get(f->g, r.commit, &c, &h), OG_OK);
    assert_string_equal(c->parents[0], rc.bases[1]);
    assert_int_equal(c->tables[0].version, 3); /* 1 (genesis) + racer + ours */
    og_cache_entry_release(h);
    assert_int_equal(tu_chain_len(f->g, head, NULL, 0), 3);
}

static void retry_exhaustion_is_conflict(void **state)
{
    fixture *f = *state;
    racer rc = {f->g2, 0, 100, {{0}}, 0};
    og_write_opts o = {0};
    o.branch = "main";
    o.max_attempts = 4;
    og_write_result r;
    assert_int_equal(og_graph_write(f->g, &o, racer_fn, &rc, &r), OG_ERR_CONFLICT);
    assert_non_null(strstr(og_error_message(), "main"));
    assert_int_equal(rc.calls, 4);
    for (int i = 1; i < 4; i++) assert_string_not_equal(rc.bases[i - 1], rc.bases[i]);
    /* Nothing of ours was published: the history is the racer's four commits on genesis. */
    char head[OG_ULID_LEN + 1];
    uint64_t seq;
    tu_head(f->g2, "main", head, &seq);
    assert_int_equal(seq, 5);
    assert_int_equal(tu_chain_len(f->g2, head, NULL, 0), 5);
}

/* Contention is not the caller's error: a write that keeps losing its publish is retried
 * past the eight attempts that used to be the limit, and lands once it wins. */
static void lost_publishes_are_retried_until_the_write_wins(void **state)
{
    fixture *f = *state;
    racer rc = {f->g2, 0, 12, {{0}}, 0};
    og_write_opts o = {0};
    o.branch = "main";
    og_write_result r;
    assert_int_equal(og_graph_write(f->g, &o, racer_fn, &rc, &r), OG_OK);
    assert_int_equal(rc.calls, 13);
    assert_int_equal(r.attempts, 13);
    assert_int_equal(r.seq, 14); /* create, the racer's twelve commits, ours */
}

/* Without an attempt count the bound is time (og_graph_opts.retry_ms), and at least
 * OG_GRAPH_MIN_ATTEMPTS attempts however quickly it passes: then conflict, naming the branch
 * and what happened, with nothing of ours published. */
static void retry_time_bound_is_conflict(void **state)
{
    fixture *f = *state;
    og_graph_opts go = {0};
    go.retry_ms = 30;
    go.backoff_base_ms = 8;
    go.backoff_max_ms = 16;
    og_graph *g;
    assert_int_equal(og_graph_open(&g, f->st, &go), OG_OK);
    racer rc = {f->g2, 0, 16, {{0}}, 0};
    og_write_opts o = {0};
    o.branch = "main";
    og_write_result r;
    assert_int_equal(og_graph_write(g, &o, racer_fn, &rc, &r), OG_ERR_CONFLICT);
    assert_non_null(strstr(og_error_message(), "\"main\" lost its publish"));
    assert_true(rc.calls >= OG_GRAPH_MIN_ATTEMPTS && rc.calls < 16);
    assert_int_equal(r.attempts, rc.calls);
    char head[OG_ULID_LEN + 1];
    uint64_t seq;
    tu_head(f->g2, "main", head, &seq);
    assert_int_equal(seq, 1 + (uint64_t)rc.calls); /* only the racer's commits */
    og_graph_close(g);
}

static void lost_publish_with_expected_head_is_precondition_failed(void **state)
{
    fixture *f = *state;
    char head[OG_ULID_LEN + 1];
    tu_head(f->g, "main", head, NULL);
    racer rc = {f->g2, 0, 100, {{0}}, 0};
    og_write_opts o = {0};
    o.branch = "main";
    o.expected_head = head;
    assert_int_equal(og_graph_write(f->g, &o, racer_fn, &rc, NULL), OG_ERR_PRECONDITION_FAILED);
    assert_int_equal(rc.calls, 1);
    uint64_t seq;
    tu_head(f->g2, "main", head, &seq);
    assert_int_equal(seq, 2); /* only the racer's commit */
}

static void aba_writer_retries_on_new_incarnation_never_old_base(void **state)
{
    fixture *f = *state;
    /* b forks from main, gets two commits of its own; main stays at genesis. */
    assert_int_equal(og_branch_create(f->g, "b", "main", NULL, "t", NULL), OG_OK);
    og_write_result r;
    assert_int_equal(tu_commit(f->g, "b", &r), OG_OK);
    assert_int_equal(tu_commit(f->g, "b", &r), OG_OK);
    char old_base[OG_ULID_LEN + 1], main_head[OG_ULID_LEN + 1];
    og_ref_entry old_head;
    assert_int_equal(og_graph_head_entry(f->g, "b", &old_head), OG_OK);
    memcpy(old_base, old_head.commit, sizeof old_base);
    tu_head(f->g, "main", main_head, NULL);

    racer rc = {f->g2, 0, 1, {{0}}, 1};
    og_write_opts o = {0};
    o.branch = "b";
    assert_int_equal(og_graph_write(f->g, &o, racer_fn, &rc, &r), OG_OK);
    assert_int_equal(rc.calls, 2);
    assert_string_equal(rc.bases[0], old_base);
    assert_string_equal(rc.bases[1], main_head); /* fresh capture of the new incarnation */
    og_ref_entry now;
    assert_int_equal(og_graph_head_entry(f->g2, "b", &now), OG_OK);
    assert_string_not_equal(now.incarnation, old_head.incarnation);
    assert_int_equal(now.seq, old_head.seq + 3); /* delete, create, ours */
    const og_commit *c;
    og_cache_entry *h;
    assert_int_equal(og_graph_commit_get(f->g2, r.commit, &c, &h), OG_OK);
    assert_string_equal(c->parents[0], main_head);
    assert_int_equal(og_commit_table(c, "t_person")->version, 2); /* planned on main's v1, not b's v3 */
    og_cache_entry_release(h);
}

static void aba_writer_pinned_to_incarnation_fails(void **state)
{
    fixture *f = *state;
    og_ref_entry created;
    assert_int_equal(og_branch_create(f->g, "b", "main", NULL, "t", &created), OG_OK);
    racer rc = {f->g2, 0, 1, {{0}}, 1};
    og_write_opts o = {0};
    o.branch = "b";
    o.expected_incarnation = created.incarnation;
    assert_int_equal(og_graph_write(f->g, &o, racer_fn, &rc, NULL), OG_ERR_PRECONDITION_FAILED);
    assert_non_null(strstr(og_error_message(), "re-created"));
    og_ref_entry now;
    assert_int_equal(og_graph_head_entry(f->g2, "b", &now), OG_OK);
    assert_int_equal(now.kind, OG_REF_CREATE); /* nothing landed on the new incarnation */
    assert_int_equal(now.seq, created.seq + 2);
}

static og_status noop_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)ctx, (void)g, (void)base, (void)attempt;
    og_draft_set_noop(d);
    return OG_OK;
}

static og_status nokind_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)ctx, (void)g, (void)base, (void)attempt;
    return og_draft_set_table(d, "t_x", 1, 1);
}

static og_status baddir_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)ctx, (void)g, (void)base, (void)attempt;
    return og_draft_set_table(d, "a/../b", 1, 1);
}

static void noop_and_failing_writers_publish_nothing(void **state)
{
    fixture *f = *state;
    og_write_opts o = {0};
    o.branch = "main";
    og_write_result r;
    assert_int_equal(og_graph_write(f->g, &o, noop_fn, NULL, &r), OG_OK);
    assert_int_equal(r.published, 0);
    assert_int_equal(r.seq, 1);
    tu_bump b = {0, {0}, OG_ERR_CONSTRAINT};
    assert_int_equal(og_graph_write(f->g, &o, tu_bump_fn, &b, &r), OG_ERR_CONSTRAINT);
    assert_int_equal(b.calls, 1);
    assert_int_equal(og_graph_write(f->g, &o, nokind_fn, NULL, &r), OG_ERR_INVALID);
    assert_int_equal(og_graph_write(f->g, &o, baddir_fn, NULL, &r), OG_ERR_INVALID);
    char head[OG_ULID_LEN + 1];
    uint64_t seq;
    tu_head(f->g2, "main", head, &seq);
    assert_int_equal(seq, 1);
    o.branch = "gone";
    assert_int_equal(og_graph_write(f->g, &o, tu_bump_fn, NULL, &r), OG_ERR_NOT_FOUND);
    o.branch = "bad..name";
    assert_int_equal(og_graph_write(f->g, &o, tu_bump_fn, NULL, &r), OG_ERR_INVALID);
}

#define SCHEMA2 "{\"types\":[{\"name\":\"Person\",\"table\":\"t_person\"},{\"name\":\"Org\",\"table\":\"t_org\"}]}"

static og_status schema_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)base, (void)attempt;
    char id[OG_SCHEMA_ID_LEN + 1];
    if (ctx) OG_TRY(og_graph_schema_put(g, SCHEMA2, strlen(SCHEMA2), id));
    else memset(id, 'a', OG_SCHEMA_ID_LEN), id[OG_SCHEMA_ID_LEN] = '\0';
    OG_TRY(og_draft_set_schema(d, id));
    OG_TRY(og_draft_set_table(d, "t_org", 1, 0));
    return og_draft_set_operation(d, OG_OP_SCHEMA_APPLY, NULL);
}

static void schema_apply_names_new_schema_object(void **state)
{
    fixture *f = *state;
    og_write_opts o = {0};
    o.branch = "main";
    og_write_result r;
    assert_int_equal(og_graph_write(f->g, &o, schema_fn, NULL, &r), OG_ERR_INVALID); /* never stored */
    assert_int_equal(og_graph_write(f->g, &o, schema_fn, "store", &r), OG_OK);
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_branch(f->g2, "main", &s), OG_OK);
    assert_int_equal(og_snapshot_schema(s)->len, strlen(SCHEMA2));
    assert_non_null(og_snapshot_table(s, "t_org"));
    assert_non_null(og_snapshot_table(s, "t_person"));
    assert_int_equal(og_snapshot_commit(s)->kind, OG_OP_SCHEMA_APPLY);
    og_snapshot_free(s);
}

static og_status merge_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    (void)g, (void)base, (void)attempt;
    OG_TRY(og_draft_add_parent(d, ctx));
    return og_draft_set_operation(d, OG_OP_MERGE, "three_way");
}

static void merge_commit_has_two_parents(void **state)
{
    fixture *f = *state;
    assert_int_equal(og_branch_create(f->g, "feature", "main", NULL, "t", NULL), OG_OK);
    og_write_result fr, r;
    assert_int_equal(tu_commit(f->g, "feature", &fr), OG_OK);
    og_write_opts o = {0};
    o.branch = "main";
    assert_int_equal(og_graph_write(f->g, &o, merge_fn, fr.commit, &r), OG_OK);
    const og_commit *c;
    og_cache_entry *h;
    assert_int_equal(og_graph_commit_get(f->g2, r.commit, &c, &h), OG_OK);
    assert_int_equal(c->nparents, 2);
    assert_string_equal(c->parents[1], fr.commit);
    assert_string_equal(c->mode, "three_way");
    og_cache_entry_release(h);
    assert_int_equal(og_graph_write(f->g, &o, merge_fn, "01ARZ3NDEKTSV4RRFFQ69G5FAV", &r), OG_ERR_NOT_FOUND);
}

static og_status slow_first_fn(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *d, int attempt)
{
    int *calls = ctx;
    (*calls)++;
    if (attempt == 1) {
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return tu_bump_fn(NULL, g, base, d, attempt);
}

static void stale_plan_is_recaptured_not_published(void **state)
{
    fixture *f = *state;
    og_graph_opts go = {0};
    go.max_plan_ms = 200;
    og_graph *g;
    assert_int_equal(og_graph_open(&g, f->st, &go), OG_OK);
    int calls = 0;
    og_write_opts o = {0};
    o.branch = "main";
    og_write_result r;
    assert_int_equal(og_graph_write(g, &o, slow_first_fn, &calls, &r), OG_OK);
    assert_true(calls >= 2);
    assert_int_equal(r.attempts, calls);
    assert_int_equal(r.seq, 2); /* the slow first plan never reached the log */
    og_graph_close(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(snapshot_keeps_resolving_to_its_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_commit_is_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(expected_head_mismatch_fails_without_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(lost_publish_retries_from_fresh_capture, setup, teardown),
        cmocka_unit_test_setup_teardown(retry_exhaustion_is_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(lost_publishes_are_retried_until_the_write_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(retry_time_bound_is_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(lost_publish_with_expected_head_is_precondition_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(aba_writer_retries_on_new_incarnation_never_old_base, setup, teardown),
        cmocka_unit_test_setup_teardown(aba_writer_pinned_to_incarnation_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(noop_and_failing_writers_publish_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(schema_apply_names_new_schema_object, setup, teardown),
        cmocka_unit_test_setup_teardown(merge_commit_has_two_parents, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_plan_is_recaptured_not_published, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
