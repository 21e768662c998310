/*
 * test_store_count.c — the counting store adapter (src/store/store_count.h): each kind of
 * request is counted once per call whatever layer makes it (map counts as a whole GET, stat
 * as a HEAD, a failed request still counts), the watch is not a request, requests made one
 * after another each start a new round, requests that overlap in time (two threads, with
 * injected latency) share one, a reset zeroes everything, and the wrapped store still obeys
 * the contract (put_if_absent arbitrates, the write journal records each put once).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/store.h"
#include "store/store_count.h"

typedef struct ctx {
    char dir[64];
    og_store *st;
} ctx;

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    strcpy(c->dir, "/tmp/og-count-XXXXXX");
    if (!mkdtemp(c->dir)) return -1;
    if (og_store_open(&c->st, c->dir) != OG_OK) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    og_store_close(c->st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
    free(c);
    return 0;
}

static void counts_each_kind(void **state)
{
    ctx *c = *state;
    og_store_counts k;
    og_store_count_get(c->st, &k);
    assert_int_equal(k.total, 0); /* not counting yet */
    assert_null(og_store_count_log(c->st));
    assert_int_equal(og_store_count_install(c->st, 0, 0), OG_OK);
    assert_true(og_store_is_local(c->st));
    assert_int_equal(og_store_put(c->st, "a/x", "hello", 5), OG_OK);
    assert_int_equal(og_store_put_if_absent(c->st, "a/y", "1", 1), OG_OK);
    assert_int_equal(og_store_put_if_absent(c->st, "a/y", "2", 1), OG_ERR_ALREADY_EXISTS);
    og_bytes b = {0};
    assert_int_equal(og_store_get(c->st, "a/x", &b), OG_OK);
    assert_memory_equal(b.data, "hello", 5);
    og_bytes_free(&b);
    assert_int_equal(og_store_get(c->st, "a/missing", &b), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_get_range(c->st, "a/x", 1, 2, &b), OG_OK);
    assert_memory_equal(b.data, "el", 2);
    og_bytes_free(&b);
    uint64_t size = 0;
    assert_int_equal(og_store_head(c->st, "a/x", &size), OG_OK);
    assert_int_equal(size, 5);
    assert_int_equal(og_store_stat(c->st, "a/y", &size, NULL), OG_OK);
    og_mapping *m = NULL;
    assert_int_equal(og_store_map(c->st, "a/x", &m), OG_OK);
    assert_int_equal(og_mapping_size(m), 5);
    og_mapping_release(m);
    og_keylist kl;
    assert_int_equal(og_store_list(c->st, "a/", NULL, 0, &kl), OG_OK);
    assert_int_equal(kl.count, 2);
    og_keylist_free(&kl);
    assert_int_equal(og_store_delete(c->st, "a/x"), OG_OK);
    assert_int_equal(og_store_key_check("../bad"), OG_ERR_INVALID);
    assert_int_equal(og_store_get(c->st, "../bad", &b), OG_ERR_INVALID); /* refused before any request */
    (void)og_store_watch(c->st, "a/");
    (void)og_store_change_count(c->st);
    og_store_count_get(c->st, &k);
    assert_int_equal(k.n[OG_STORE_REQ_PUT], 1);
    assert_int_equal(k.n[OG_STORE_REQ_PUT_IF_ABSENT], 2);
    assert_int_equal(k.n[OG_STORE_REQ_GET], 3); /* two gets (one missing) and the map */
    assert_int_equal(k.n[OG_STORE_REQ_GET_RANGE], 1);
    assert_int_equal(k.n[OG_STORE_REQ_HEAD], 2);
    assert_int_equal(k.n[OG_STORE_REQ_LIST], 1);
    assert_int_equal(k.n[OG_STORE_REQ_DELETE], 1);
    assert_int_equal(k.total, 11);
    assert_int_equal(k.rounds, 11); /* one after another: every request waited for the one before */
    char *log = og_store_count_log(c->st);
    assert_non_null(strstr(log, "1 PUT a/x\n2 PUT_IF_ABSENT a/y\n3 PUT_IF_ABSENT a/y\n4 GET a/x\n"));
    assert_non_null(strstr(log, "11 DELETE a/x\n"));
    free(log);
    og_store_count_reset(c->st);
    og_store_count_get(c->st, &k);
    assert_int_equal(k.total, 0);
    assert_int_equal(k.rounds, 0);
    log = og_store_count_log(c->st);
    assert_string_equal(log, "");
    free(log);
    /* installing again only changes the options: counting goes on, now "remote" */
    assert_int_equal(og_store_count_install(c->st, 0, 1), OG_OK);
    assert_false(og_store_is_local(c->st));
    assert_int_equal(og_store_head(c->st, "a/y", NULL), OG_OK);
    og_store_count_get(c->st, &k);
    assert_int_equal(k.n[OG_STORE_REQ_HEAD], 1);
    assert_string_equal(og_store_req_name(OG_STORE_REQ_PUT_IF_ABSENT), "PUT_IF_ABSENT");
}

static void journal_records_once(void **state)
{
    ctx *c = *state;
    assert_int_equal(og_store_count_install(c->st, 0, 0), OG_OK);
    og_store_journal j;
    og_store_journal_begin(&j, c->st, NULL);
    assert_int_equal(og_store_put(c->st, "j/a", "x", 1), OG_OK);
    assert_int_equal(og_store_put_if_absent(c->st, "j/b", "x", 1), OG_OK);
    og_store_journal_end(&j);
    assert_int_equal(j.keys.count, 2);
    assert_int_equal(og_store_journal_discard(&j), 2);
    assert_int_equal(og_store_head(c->st, "j/a", NULL), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_head(c->st, "j/b", NULL), OG_ERR_NOT_FOUND);
}

static void *head_thread(void *arg)
{
    og_store *st = arg;
    (void)og_store_head(st, "r/x", NULL);
    return NULL;
}

/* Two requests in flight at once share a round; the one after them is the next round. */
static void overlapping_requests_share_a_round(void **state)
{
    ctx *c = *state;
    assert_int_equal(og_store_put(c->st, "r/x", "x", 1), OG_OK);
    assert_int_equal(og_store_count_install(c->st, 200, 0), OG_OK);
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, head_thread, c->st), 0);
    assert_int_equal(pthread_create(&b, NULL, head_thread, c->st), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(og_store_head(c->st, "r/x", NULL), OG_OK);
    og_store_counts k;
    og_store_count_get(c->st, &k);
    assert_int_equal(k.n[OG_STORE_REQ_HEAD], 3);
    assert_int_equal(k.rounds, 2);
    char *log = og_store_count_log(c->st);
    assert_string_equal(log, "1 HEAD r/x\n1 HEAD r/x\n2 HEAD r/x\n");
    free(log);
}

/* og_store_put_many: independent writes share one round, each op reports its own outcome
 * (a lost put_if_absent among them), the first failure is the call's status, and the calling
 * thread's journal holds the puts and the won put_if_absent — not the lost one. */
static void put_many_shares_a_round(void **state)
{
    ctx *c = *state;
    assert_int_equal(og_store_put(c->st, "m/taken", "x", 1), OG_OK);
    assert_int_equal(og_store_count_install(c->st, 100, 0), OG_OK);
    og_store_journal j;
    og_store_journal_begin(&j, c->st, NULL);
    og_store_put_op ops[4] = {
        {"m/a", "aa", 2, 0, OG_OK},
        {"m/b", "bbb", 3, 0, OG_OK},
        {"m/c", "c", 1, 1, OG_OK},
        {"m/taken", "y", 1, 1, OG_OK},
    };
    assert_int_equal(og_store_put_many(c->st, ops, 4), OG_ERR_ALREADY_EXISTS);
    og_store_journal_end(&j);
    assert_int_equal(ops[0].status, OG_OK);
    assert_int_equal(ops[1].status, OG_OK);
    assert_int_equal(ops[2].status, OG_OK);
    assert_int_equal(ops[3].status, OG_ERR_ALREADY_EXISTS);
    assert_non_null(strstr(og_error_message(), "m/taken"));
    og_store_counts k;
    og_store_count_get(c->st, &k);
    assert_int_equal(k.n[OG_STORE_REQ_PUT], 2);
    assert_int_equal(k.n[OG_STORE_REQ_PUT_IF_ABSENT], 2);
    assert_int_equal(k.rounds, 1);
    assert_int_equal(j.keys.count, 3);
    og_bytes b = {0};
    assert_int_equal(og_store_get(c->st, "m/b", &b), OG_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "bbb", 3);
    og_bytes_free(&b);
    assert_int_equal(og_store_get(c->st, "m/taken", &b), OG_OK);
    assert_memory_equal(b.data, "x", 1); /* the loser did not overwrite */
    og_bytes_free(&b);
    assert_int_equal(og_store_journal_discard(&j), 3);
    assert_int_equal(og_store_head(c->st, "m/a", NULL), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_head(c->st, "m/taken", NULL), OG_OK);
    og_store_put_op bad = {"/bad", "x", 1, 0, OG_OK};
    assert_int_equal(og_store_put_many(c->st, &bad, 1), OG_ERR_INVALID);
}

/* OG_STORE_COUNT / OG_STORE_COUNT_OUT (benchmarks of a whole process): a store opened with
 * them set counts from its first request, reads as remote, cannot watch (as S3 cannot), and
 * reports its counts in one line when it closes. */
static void counts_from_the_environment(void **state)
{
    ctx *c = *state;
    char out[128], dir[128];
    snprintf(out, sizeof out, "%s/counts.txt", c->dir);
    snprintf(dir, sizeof dir, "%s/env", c->dir);
    setenv("OG_STORE_COUNT", "0,remote", 1);
    setenv("OG_STORE_COUNT_OUT", out, 1);
    og_store *st = NULL;
    og_status s = og_store_open(&st, dir);
    unsetenv("OG_STORE_COUNT");
    assert_int_equal(s, OG_OK);
    assert_false(og_store_is_local(st));
    assert_int_equal(og_store_put(st, "e/a", "x", 1), OG_OK);
    assert_int_equal(og_store_head(st, "e/a", NULL), OG_OK);
    assert_int_equal(og_store_watch(st, "e/"), OG_ERR_UNSUPPORTED);
    og_store_close(st);
    unsetenv("OG_STORE_COUNT_OUT");
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[512] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_non_null(strstr(line, " total=2 GET=0 GET_RANGE=0 HEAD=1 PUT=1 PUT_IF_ABSENT=0 LIST=0 DELETE=0 rounds=2\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counts_each_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(journal_records_once, setup, teardown),
        cmocka_unit_test_setup_teardown(overlapping_requests_share_a_round, setup, teardown),
        cmocka_unit_test_setup_teardown(put_many_shares_a_round, setup, teardown),
        cmocka_unit_test_setup_teardown(counts_from_the_environment, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
