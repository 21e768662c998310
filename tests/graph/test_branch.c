/*
 * test_branch.c — branch names (every rule, with its message), the percent-encoding round
 * trip, and branch control: create from a branch or a commit, already-exists, delete as a
 * tombstone, main is undeletable, list skips deleted branches, recreate-after-delete is a new
 * incarnation further down the same log; a branch's message lives in its create entry (read
 * back by a new handle after advances, refused when malformed, with nothing written).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "graph_testutil.h"
#include "graph/origin.h"

static void assert_bad_name(const char *name, const char *msg_part)
{
    og_status s = og_branch_name_check(name);
    if (s != OG_ERR_INVALID) fail_msg("name \"%s\" accepted", name);
    if (!strstr(og_error_message(), msg_part))
        fail_msg("name \"%s\": message \"%s\" lacks \"%s\"", name, og_error_message(), msg_part);
}

static void branch_name_rules_reject_with_reasons(void **state)
{
    (void)state;
    assert_bad_name("", "empty");
    assert_bad_name("a..b", "..");
    assert_bad_name("..", "..");
    assert_bad_name("a\tb", "control");
    assert_bad_name("a\x7f", "control");
    assert_bad_name("/a", "start or end with '/'");
    assert_bad_name("a/", "start or end with '/'");
    assert_bad_name("a//b", "empty path component");
    assert_bad_name("_system", "reserved");
    assert_bad_name("refs/heads/x", "reserved");
    assert_bad_name("HEAD", "reserved");
    assert_bad_name("a b", "' '");
    assert_bad_name("a:b", "':'");
    assert_bad_name("a~1", "'~'");
    assert_bad_name("x@{1}", "@{");
    assert_bad_name("-x", "'-'");
    assert_bad_name(".hidden", "'.'");
    assert_bad_name("a/.b", "'.'");
    assert_bad_name("a.", "end with '.'");
    assert_bad_name("x.lock", ".lock");
    assert_bad_name("\xc3\x28", "UTF-8");
    char big[202];
    memset(big, 'a', 201);
    big[201] = '\0';
    assert_bad_name(big, "limit");
    char wide[200];
    for (int i = 0; i < 99; i++) wide[2 * i] = 'a', wide[2 * i + 1] = '/';
    wide[198] = 'a';
    wide[199] = '\0'; /* 199 bytes, 99 slashes → 199 + 2*99 encoded */
    assert_bad_name(wide, "encoded");
    char ok200[201];
    memset(ok200, 'a', 200);
    ok200[200] = '\0';
    assert_int_equal(og_branch_name_check(ok200), OG_OK);
    const char *good[] = {"main", "agent/ingest-42", "feature_x", "v1.2", "a-b/c.d/e_f", "caf\xc3\xa9", "a@b"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (og_branch_name_check(good[i]) != OG_OK) fail_msg("name \"%s\" rejected: %s", good[i], og_error_message());
}

/* Issue 37 item 6: names that deceive are refused when a branch is created (each with its
 * reason), while everything a person would really name a branch still passes. */
static void assert_bad_new(const char *name, const char *msg_part)
{
    og_status s = og_branch_name_check_new(name);
    if (s != OG_ERR_INVALID) fail_msg("new name \"%s\" accepted", name);
    if (!strstr(og_error_message(), msg_part))
        fail_msg("new name \"%s\": message \"%s\" lacks \"%s\"", name, og_error_message(), msg_part);
}

static void new_branch_names_do_not_deceive(void **state)
{
    (void)state;
    assert_bad_new("Main", "confusable with \"main\"");
    assert_bad_new("MAIN", "confusable with \"main\"");
    assert_bad_new("m\xd0\xb0in", "mixes scripts (Latin with Cyrillic");          /* Cyrillic a */
    assert_bad_new("rnain", "confusable with \"main\"");                            /* r+n reads as m */
    assert_bad_new("main\xe2\x80\x8b", "U+200B");                                   /* zero-width space */
    assert_bad_new("ma\xe2\x80\x8din", "U+200D");                                   /* zero-width joiner */
    assert_bad_new("\xef\xbd\x8d\xef\xbd\x81\xef\xbd\x89\xef\xbd\x8e", "confusable with \"main\""); /* full-width */
    assert_bad_new("a\xc2\xa0" "b", "U+00A0");                                          /* no-break space */
    assert_bad_new("cafe\xcc\x81", "normalization form C");                          /* e + combining acute */
    assert_bad_new("01JX4Q", "looks like a commit id");
    assert_bad_new("7zzz", "looks like a commit id"); /* ids are case-insensitive */
    assert_bad_new("01ARZ3NDEKTSV4RRFFQ69G5FAV", "looks like a commit id");
    assert_bad_new("a..b", ".."); /* the old rules still apply */
    const char *good[] = {"main2",   "feature",          "test",        "feat",        "agent/ingest-42", "v1.2",
                          "caf\xc3\xa9", "8abc",        "01-release",  "release-01JX4Q",
                          "stra\xc3\x9f" "e", "\xe6\x97\xa5\xe6\x9c\xac" "-docs", "\xd0\xbf\xd1\x80\xd0\xbe\xd0\xb5\xd0\xba\xd1\x82"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        if (og_branch_name_check_new(good[i]) != OG_OK)
            fail_msg("new name \"%s\" rejected: %s", good[i], og_error_message());
    }
    assert_bad_new("0123", "looks like a commit id"); /* digits are id characters */
    /* a name made before these rules still passes the general check (it opens, writes, deletes) */
    assert_int_equal(og_branch_name_check("Main"), OG_OK);
}

static void branch_encoding_round_trips(void **state)
{
    (void)state;
    char enc[3 * OG_BRANCH_MAX + 1], dec[OG_BRANCH_MAX + 1];
    og_branch_encode("agent/ingest-42", enc);
    assert_string_equal(enc, "agent%2Fingest-42");
    assert_int_equal(og_branch_decode(enc, dec, sizeof dec), OG_OK);
    assert_string_equal(dec, "agent/ingest-42");
    og_branch_encode("caf\xc3\xa9 %x", enc);
    assert_string_equal(enc, "caf%C3%A9%20%25x");
    assert_int_equal(og_branch_decode(enc, dec, sizeof dec), OG_OK);
    assert_string_equal(dec, "caf\xc3\xa9 %x");
    assert_int_equal(og_branch_decode("a%2", dec, sizeof dec), OG_ERR_INVALID);
    assert_int_equal(og_branch_decode("a%61", dec, sizeof dec), OG_ERR_INVALID); /* non-canonical */
    assert_int_equal(og_branch_decode("a/b", dec, sizeof dec), OG_ERR_INVALID);
    char key[512];
    assert_int_equal(og_ref_key("agent/ingest-42", 1, key, sizeof key), OG_OK);
    assert_string_equal(key, "_graph/refs/agent%2Fingest-42/18446744073709551614.json");
    assert_int_equal(og_ref_key("main", 42, key, sizeof key), OG_OK);
    assert_string_equal(key, "_graph/refs/main/18446744073709551573.json");
}

typedef struct fixture {
    char *dir;
    og_store *st;
    og_graph *g;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_tmpdir();
    f->st = tu_store(f->dir);
    f->g = tu_init(f->st);
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

static void create_from_branch_and_commit(void **state)
{
    fixture *f = *state;
    og_write_result r1, r2;
    assert_int_equal(tu_commit(f->g, "main", &r1), OG_OK);
    assert_int_equal(tu_commit(f->g, "main", &r2), OG_OK);
    og_ref_entry e;
    assert_int_equal(og_branch_create(f->g, "agent/ingest-42", "main", NULL, "alice", &e), OG_OK);
    assert_int_equal(e.seq, 1);
    assert_int_equal(e.kind, OG_REF_CREATE);
    assert_string_equal(e.commit, r2.commit);
    assert_string_equal(e.actor, "alice");
    og_bytes b = {0};
    assert_int_equal(og_store_get(f->st, "_graph/refs/agent%2Fingest-42/18446744073709551614.json", &b), OG_OK);
    og_bytes_free(&b);
    assert_int_equal(og_branch_create(f->g, "old", NULL, r1.commit, NULL, &e), OG_OK);
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_branch(f->g, "old", &s), OG_OK);
    assert_string_equal(og_snapshot_commit_id(s), r1.commit);
    og_snapshot_free(s);
    /* Writes on the fork don't move main. */
    assert_int_equal(tu_commit(f->g, "agent/ingest-42", NULL), OG_OK);
    char h[OG_ULID_LEN + 1];
    tu_head(f->g, "main", h, NULL);
    assert_string_equal(h, r2.commit);

    assert_int_equal(og_branch_create(f->g, "old", "main", NULL, NULL, NULL), OG_ERR_ALREADY_EXISTS);
    assert_non_null(strstr(og_error_message(), "old"));
    assert_int_equal(og_branch_create(f->g, "main", "old", NULL, NULL, NULL), OG_ERR_ALREADY_EXISTS);
    assert_int_equal(og_branch_create(f->g, "x", "nosuch", NULL, NULL, NULL), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "nosuch"));
    assert_int_equal(og_branch_create(f->g, "x", NULL, "01ARZ3NDEKTSV4RRFFQ69G5FAV", NULL, NULL), OG_ERR_NOT_FOUND);
    assert_int_equal(og_branch_create(f->g, "x", "main", r1.commit, NULL, NULL), OG_ERR_INVALID);
    assert_int_equal(og_branch_create(f->g, "_x", "main", NULL, NULL, NULL), OG_ERR_INVALID);
}

static void delete_list_and_recreate_as_new_incarnation(void **state)
{
    fixture *f = *state;
    og_ref_entry first, second;
    assert_int_equal(og_branch_create(f->g, "b", "main", NULL, NULL, &first), OG_OK);
    assert_int_equal(og_branch_create(f->g, "a/x", "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_branch_create(f->g, "c", "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(tu_commit(f->g, "b", NULL), OG_OK);
    og_branch_list l;
    assert_int_equal(og_branch_list_all(f->g, &l), OG_OK);
    assert_int_equal(l.count, 4);
    assert_string_equal(l.items[0].branch, "a/x");
    assert_string_equal(l.items[1].branch, "b");
    assert_int_equal(l.items[1].kind, OG_REF_ADVANCE);
    assert_string_equal(l.items[2].branch, "c");
    assert_string_equal(l.items[3].branch, "main");
    og_branch_list_free(&l);

    assert_int_equal(og_branch_delete(f->g, "main", NULL), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "main"));
    assert_int_equal(og_branch_delete(f->g, "b", "bob"), OG_OK);
    assert_int_equal(og_branch_delete(f->g, "b", NULL), OG_ERR_NOT_FOUND);
    assert_int_equal(og_branch_delete(f->g, "nosuch", NULL), OG_ERR_NOT_FOUND);
    og_ref_entry e;
    assert_int_equal(og_graph_head_entry(f->g, "b", &e), OG_OK);
    assert_int_equal(e.kind, OG_REF_DELETE);
    assert_int_equal(e.seq, 3);
    assert_string_equal(e.commit, "");
    og_snapshot *s;
    assert_int_equal(og_graph_snapshot_branch(f->g, "b", &s), OG_ERR_NOT_FOUND);
    assert_non_null(strstr(og_error_message(), "deleted"));
    assert_int_equal(tu_commit(f->g, "b", NULL), OG_ERR_NOT_FOUND);

    assert_int_equal(og_branch_list_all(f->g, &l), OG_OK);
    assert_int_equal(l.count, 3);
    for (size_t i = 0; i < l.count; i++) assert_string_not_equal(l.items[i].branch, "b");
    og_branch_list_free(&l);

    assert_int_equal(og_branch_create(f->g, "b", "c", NULL, NULL, &second), OG_OK);
    assert_int_equal(second.seq, 4);
    assert_string_not_equal(second.incarnation, first.incarnation);
    assert_int_equal(og_branch_list_all(f->g, &l), OG_OK);
    assert_int_equal(l.count, 4);
    og_branch_list_free(&l);
    /* A second handle (no memory hints) agrees. */
    og_graph *g2 = tu_open(f->st);
    assert_int_equal(og_graph_head_entry(g2, "b", &e), OG_OK);
    assert_int_equal(e.seq, 4);
    assert_string_equal(e.incarnation, second.incarnation);
    og_graph_close(g2);
}

static void list_handles_names_that_prefix_each_other(void **state)
{
    fixture *f = *state;
    const char *names[] = {"a", "a-b", "a.hint", "a/b", "a0", "ab", "z/y/x"};
    size_t n = sizeof names / sizeof names[0];
    for (size_t i = 0; i < n; i++) assert_int_equal(og_branch_create(f->g, names[i], "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(tu_commit(f->g, "a", NULL), OG_OK);
    assert_int_equal(og_branch_delete(f->g, "ab", NULL), OG_OK);
    og_branch_list l;
    assert_int_equal(og_branch_list_all(f->g, &l), OG_OK);
    assert_int_equal(l.count, n); /* + main - ab */
    for (size_t i = 0; i < n; i++) {
        int seen = strcmp(names[i], "ab") == 0 ? 1 : 0;
        for (size_t j = 0; j < l.count; j++) seen += strcmp(l.items[j].branch, names[i]) == 0;
        if (seen != 1) fail_msg("branch %s listed %d times", names[i], seen);
    }
    og_branch_list_free(&l);
}

/* The message goes into the create entry, so any handle (a restarted server, a replica on the
 * same store) reads it back through og_branch_origin, however far the branch has advanced. */
static void message_is_kept_in_the_create_entry(void **state)
{
    fixture *f = *state;
    og_ref_entry e, head, origin;
    assert_int_equal(og_branch_create_msg(f->g, "agent/why", "main", NULL, "alice", "fix the owners\tof\nrisky projects",
                                          &e),
                     OG_OK);
    assert_string_equal(e.message, "fix the owners\tof\nrisky projects");
    /* on disk: the entry's JSON carries it; an entry without one has no "message" key */
    og_bytes b = {0};
    assert_int_equal(og_store_get(f->st, "_graph/refs/agent%2Fwhy/18446744073709551614.json", &b), OG_OK);
    char text[4096];
    snprintf(text, sizeof text, "%.*s", (int)b.len, (const char *)b.data);
    assert_non_null(strstr(text, "\"message\":\"fix the owners\\tof\\nrisky projects\""));
    og_bytes_free(&b);
    assert_int_equal(og_branch_create(f->g, "plain", "main", NULL, NULL, NULL), OG_OK);
    assert_int_equal(og_store_get(f->st, "_graph/refs/plain/18446744073709551614.json", &b), OG_OK);
    snprintf(text, sizeof text, "%.*s", (int)b.len, (const char *)b.data);
    assert_null(strstr(text, "message"));
    og_bytes_free(&b);
    assert_int_equal(tu_commit(f->g, "agent/why", NULL), OG_OK);
    assert_int_equal(tu_commit(f->g, "agent/why", NULL), OG_OK);

    og_graph *g2 = tu_open(f->st); /* a fresh handle: nothing from f->g's memory */
    assert_int_equal(og_graph_head_entry(g2, "agent/why", &head), OG_OK);
    assert_int_equal(head.kind, OG_REF_ADVANCE);
    assert_string_equal(head.message, ""); /* advances carry none */
    assert_int_equal(og_branch_origin(g2, &head, &origin), OG_OK);
    assert_string_equal(origin.message, "fix the owners\tof\nrisky projects");
    assert_string_equal(origin.actor, "alice");
    assert_int_equal(og_graph_head_entry(g2, "plain", &head), OG_OK);
    assert_string_equal(head.message, "");
    og_graph_close(g2);
}

static void bad_messages_are_refused_and_leave_nothing(void **state)
{
    fixture *f = *state;
    char big[OG_BRANCH_MESSAGE_MAX + 2];
    memset(big, 'm', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(og_branch_create_msg(f->g, "b1", "main", NULL, NULL, big, NULL), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "at most 1024 bytes"));
    assert_int_equal(og_branch_create_msg(f->g, "b1", "main", NULL, NULL, "bell\a", NULL), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "control"));
    assert_int_equal(og_branch_create_msg(f->g, "b1", "main", NULL, NULL, "\xc3\x28", NULL), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "UTF-8"));
    big[OG_BRANCH_MESSAGE_MAX] = '\0'; /* exactly the limit is fine */
    og_ref_entry e;
    og_branch_list l;
    assert_int_equal(og_branch_list_all(f->g, &l), OG_OK);
    assert_int_equal(l.count, 1); /* main only: no refused create wrote an entry */
    og_branch_list_free(&l);
    og_keylist kl = {0};
    assert_int_equal(og_store_list(f->st, "_graph/refs/b1/", NULL, 0, &kl), OG_OK);
    assert_int_equal(kl.count, 0);
    og_keylist_free(&kl);
    assert_int_equal(og_branch_create_msg(f->g, "b1", "main", NULL, NULL, big, &e), OG_OK);
    assert_int_equal(strlen(e.message), OG_BRANCH_MESSAGE_MAX);
    /* a create refused because the name exists keeps the first message, and writes nothing */
    assert_int_equal(og_branch_create_msg(f->g, "b1", "main", NULL, NULL, "second", NULL), OG_ERR_ALREADY_EXISTS);
    assert_int_equal(og_graph_head_entry(f->g, "b1", &e), OG_OK);
    assert_int_equal(e.seq, 1);
    assert_int_equal(strlen(e.message), OG_BRANCH_MESSAGE_MAX);
}

/* A message is only ever part of a create: an advance or delete carrying one is corrupt, and a
 * create entry written before messages existed (no key) decodes with none. */
static void message_decoding_is_strict(void **state)
{
    (void)state;
    og_ref_entry e;
    const char *old = "{\"seq\":1,\"branch\":\"x\",\"incarnation\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\",\"kind\":\"create\","
                      "\"commit\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\",\"previous\":null,\"actor\":\"a\",\"at\":\"2026-01-01T00:00:00.000Z\"}";
    assert_int_equal(og_ref_entry_decode(old, strlen(old), "k", &e), OG_OK);
    assert_string_equal(e.message, "");
    const char *adv = "{\"seq\":2,\"branch\":\"x\",\"incarnation\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\",\"kind\":\"advance\","
                      "\"commit\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\",\"previous\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\",\"actor\":\"a\","
                      "\"at\":\"2026-01-01T00:00:00.000Z\",\"message\":\"no\"}";
    assert_int_equal(og_ref_entry_decode(adv, strlen(adv), "k", &e), OG_ERR_CORRUPT);
    assert_non_null(strstr(og_error_message(), "only a create carries a message"));
    const char *num = "{\"seq\":1,\"branch\":\"x\",\"incarnation\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\",\"kind\":\"create\","
                      "\"commit\":\"01ARZ3NDEKTSV4RRFFQ69G5FAV\",\"previous\":null,\"actor\":\"a\",\"at\":\"2026-01-01T00:00:00.000Z\","
                      "\"message\":7}";
    assert_int_equal(og_ref_entry_decode(num, strlen(num), "k", &e), OG_ERR_CORRUPT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(branch_name_rules_reject_with_reasons),
        cmocka_unit_test(new_branch_names_do_not_deceive),
        cmocka_unit_test(branch_encoding_round_trips),
        cmocka_unit_test_setup_teardown(create_from_branch_and_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(delete_list_and_recreate_as_new_incarnation, setup, teardown),
        cmocka_unit_test_setup_teardown(list_handles_names_that_prefix_each_other, setup, teardown),
        cmocka_unit_test_setup_teardown(message_is_kept_in_the_create_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_messages_are_refused_and_leave_nothing, setup, teardown),
        cmocka_unit_test(message_decoding_is_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
