/*
 * test_objects.c — immutable graph objects: commit encode/decode round trip and strict
 * decoding (every missing or mistyped field is a typed corrupt error naming the object),
 * schema objects named by their SHA-256 (identical re-put is fine, tampered bytes are
 * corrupt), commit objects whose content disagrees with their name, log-entry strictness,
 * randomly mangled objects (decode or corrupt, never a crash), and the shared cache
 * (LRU order, byte bound, holders outliving eviction, concurrent use).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "graph_testutil.h"

#define GOOD_COMMIT                                                                                         \
    "{\"id\":\"01JH0000000000000000000000\",\"parents\":[\"01JG0000000000000000000000\"],"                  \
    "\"schema\":\"" SCHEMA_HEX "\",\"tables\":{\"t_b\":{\"version\":7,\"rows\":1234},\"t_a\":{\"version\":1," \
    "\"rows\":0}},\"operation\":{\"kind\":\"load\",\"mode\":\"merge\",\"stats\":{\"inserted\":10,"          \
    "\"updated\":2}},\"actor\":\"alice\",\"message\":null,\"created_at\":\"2026-12-02T15:04:05.123Z\"}"
#define SCHEMA_HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void commit_round_trips(void **state)
{
    (void)state;
    og_commit *c;
    assert_int_equal(og_commit_decode(GOOD_COMMIT, strlen(GOOD_COMMIT), "x", &c), OG_OK);
    assert_string_equal(c->id, "01JH0000000000000000000000");
    assert_int_equal(c->nparents, 1);
    assert_int_equal(c->ntables, 2);
    assert_string_equal(c->tables[0].dir, "t_a"); /* sorted */
    assert_int_equal(og_commit_table(c, "t_b")->version, 7);
    assert_int_equal(og_commit_table(c, "t_b")->rows, 1234);
    assert_null(og_commit_table(c, "t_c"));
    assert_int_equal(c->kind, OG_OP_LOAD);
    assert_string_equal(c->mode, "merge");
    assert_int_equal(c->nstats, 2);
    assert_null(c->message);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_commit_encode(c, &b), OG_OK);
    og_commit *c2;
    assert_int_equal(og_commit_decode(b.data, b.len, "y", &c2), OG_OK);
    og_buf b2 = OG_BUF_INIT;
    assert_int_equal(og_commit_encode(c2, &b2), OG_OK);
    assert_int_equal(b.len, b2.len);
    assert_memory_equal(b.data, b2.data, b.len);
    /* Field order of STORAGE.md §4. */
    const char *s = og_buf_cstr(&b);
    assert_true(strstr(s, "\"id\"") < strstr(s, "\"parents\""));
    assert_true(strstr(s, "\"operation\"") < strstr(s, "\"created_at\""));
    og_buf_free(&b);
    og_buf_free(&b2);
    og_commit_free(c);
    og_commit_free(c2);
}

/* Provenance (issue 37 item 10): an optional member, absent on older commits. */
static void commit_records_actor_via(void **state)
{
    (void)state;
    og_commit *c;
    assert_int_equal(og_commit_decode(GOOD_COMMIT, strlen(GOOD_COMMIT), "x", &c), OG_OK);
    assert_string_equal(c->actor_via, ""); /* not recorded */
    snprintf(c->actor_via, sizeof c->actor_via, "token");
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_commit_encode(c, &b), OG_OK);
    assert_non_null(strstr(og_buf_cstr(&b), "\"actor\":\"alice\",\"actor_via\":\"token\","));
    og_commit *c2;
    assert_int_equal(og_commit_decode(b.data, b.len, "y", &c2), OG_OK);
    assert_string_equal(c2->actor_via, "token");
    og_commit_free(c2);
    og_buf_free(&b);
    og_commit_free(c);
    const char *bad = "\"actor\":\"alice\",\"actor_via\":7,";
    char doc[1024];
    snprintf(doc, sizeof doc, "%.*s%s%s", (int)(strstr(GOOD_COMMIT, "\"actor\"") - GOOD_COMMIT), GOOD_COMMIT, bad,
             strstr(GOOD_COMMIT, "\"message\""));
    assert_int_equal(og_commit_decode(doc, strlen(doc), "z", &c), OG_ERR_CORRUPT);
    assert_int_equal(og_actor_via_valid("token"), 1);
    assert_int_equal(og_actor_via_valid("Token"), 0);
    assert_int_equal(og_actor_via_valid(NULL), 0);
}

/* Replaces the first occurrence of `from` in GOOD_COMMIT with `to` and expects corrupt. */
static void expect_corrupt(const char *from, const char *to)
{
    const char *good = GOOD_COMMIT;
    const char *at = strstr(good, from);
    if (!at) fail_msg("pattern %s not in the sample", from);
    char buf[2048];
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    og_commit *c = NULL;
    og_status s = og_commit_decode(buf, strlen(buf), "_graph/commits/X.json", &c);
    if (s != OG_ERR_CORRUPT) fail_msg("mutation %s -> %s decoded with status %d", from, to, s);
    assert_null(c);
    assert_non_null(strstr(og_error_message(), "_graph/commits/X.json"));
}

static void commit_decoding_is_strict(void **state)
{
    (void)state;
    expect_corrupt("\"id\":", "\"idx\":");
    expect_corrupt("01JH0000000000000000000000", "not-a-ulid");
    expect_corrupt("[\"01JG0000000000000000000000\"]", "\"01JG0000000000000000000000\"");
    expect_corrupt("[\"01JG0000000000000000000000\"]", "[1]");
    expect_corrupt("[\"01JG0000000000000000000000\"]",
                   "[\"01JG0000000000000000000000\",\"01JG0000000000000000000001\",\"01JG0000000000000000000002\"]");
    expect_corrupt(SCHEMA_HEX, "xyz");
    expect_corrupt("\"version\":7", "\"version\":-7");
    expect_corrupt("\"version\":7", "\"version\":\"7\"");
    expect_corrupt(",\"rows\":1234", "");
    expect_corrupt("{\"version\":7,\"rows\":1234}", "7");
    expect_corrupt("\"tables\":{", "\"tablez\":{");
    expect_corrupt("\"kind\":\"load\"", "\"kind\":\"explode\"");
    expect_corrupt("\"kind\":\"load\"", "\"kinds\":\"load\"");
    expect_corrupt("\"mode\":\"merge\"", "\"mode\":3");
    expect_corrupt("\"inserted\":10", "\"inserted\":\"10\"");
    expect_corrupt("\"actor\":\"alice\"", "\"actor\":null");
    expect_corrupt("\"message\":null,", "");
    expect_corrupt("\"message\":null", "\"message\":5");
    expect_corrupt("\"2026-12-02T15:04:05.123Z\"", "\"yesterday\"");
    expect_corrupt("\"2026-12-02T15:04:05.123Z\"", "\"2026-12-02T15:04:05.12xZ\"");
    expect_corrupt("{\"id\"", "[{\"id\"");
    expect_corrupt("\"t_b\":{", "\"t_a\":{"); /* duplicate table key */
    expect_corrupt("\"t_b\":{", "\"../t_b\":{");
    expect_corrupt("\"t_b\":{", "\"\":{");
    og_commit *c = NULL;
    assert_int_equal(og_commit_decode("{", 1, "k", &c), OG_ERR_CORRUPT);
}

#define GOOD_ENTRY                                                                                     \
    "{\"seq\":42,\"branch\":\"main\",\"incarnation\":\"01JA0000000000000000000000\",\"kind\":\"advance\"," \
    "\"commit\":\"01JH0000000000000000000000\",\"previous\":\"01JG0000000000000000000000\",\"actor\":\"alice\"," \
    "\"at\":\"2026-12-02T15:04:05.123Z\"}"

/* Random byte edits and truncations of valid objects: every result decodes or is corrupt,
 * never a crash (ASan/UBSan watch), and whatever decodes re-encodes to something decodable. */
static void mangled_objects_decode_or_are_corrupt(void **state)
{
    (void)state;
    unsigned seed = 12345;
    const char *samples[] = {GOOD_COMMIT, GOOD_ENTRY};
    static const char alphabet[] = "{}[]\":,0123456789-eE.truenullfalse \\\x01\xff";
    int decoded = 0;
    for (int i = 0; i < 6000; i++) {
        const char *good = samples[i & 1];
        size_t n = strlen(good);
        char buf[2048];
        memcpy(buf, good, n);
        int edits = 1 + (int)((seed >> 16) % 4);
        for (int k = 0; k < edits; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % n;
            seed = seed * 1103515245u + 12345u;
            buf[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 8) % 8 == 0) n = (seed >> 12) % n;
        og_status st;
        if (i & 1) {
            og_ref_entry e;
            st = og_ref_entry_decode(buf, n, "entry", &e);
            if (st == OG_OK) {
                og_buf b = OG_BUF_INIT;
                assert_int_equal(og_ref_entry_encode(&e, &b), OG_OK);
                og_ref_entry e2;
                assert_int_equal(og_ref_entry_decode(b.data, b.len, "re", &e2), OG_OK);
                og_buf_free(&b);
            }
        } else {
            og_commit *c = NULL;
            st = og_commit_decode(buf, n, "commit", &c);
            if (st == OG_OK) {
                og_buf b = OG_BUF_INIT;
                assert_int_equal(og_commit_encode(c, &b), OG_OK);
                og_commit *c2;
                assert_int_equal(og_commit_decode(b.data, b.len, "re", &c2), OG_OK);
                og_commit_free(c2);
                og_buf_free(&b);
                og_commit_free(c);
            }
        }
        if (st != OG_OK && st != OG_ERR_CORRUPT) fail_msg("mangled object gave status %d", st);
        decoded += st == OG_OK;
    }
    assert_true(decoded > 0);
    assert_true(decoded < 6000);
}

static void log_entry_decoding_is_strict(void **state)
{
    (void)state;
    og_ref_entry e;
    assert_int_equal(og_ref_entry_decode(GOOD_ENTRY, strlen(GOOD_ENTRY), "k", &e), OG_OK);
    assert_int_equal(e.seq, 42);
    assert_int_equal(e.kind, OG_REF_ADVANCE);
    const char *bad[][2] = {
        {"\"seq\":42", "\"seq\":0"},
        {"\"seq\":42", "\"seq\":\"42\""},
        {"\"kind\":\"advance\"", "\"kind\":\"jump\""},
        {"\"previous\":\"01JG0000000000000000000000\"", "\"previous\":null"}, /* advance needs one */
        {"\"commit\":\"01JH0000000000000000000000\"", "\"commit\":null"},
        {"\"incarnation\":\"01JA0000000000000000000000\"", "\"incarnation\":\"x\""},
        {"\"actor\":\"alice\",", ""},
        {"2026-12-02T15:04:05.123Z", "2026-12-02 15:04:05.123Z"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *good = GOOD_ENTRY, *at = strstr(good, bad[i][0]);
        assert_non_null(at);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - good), good, bad[i][1], at + strlen(bad[i][0]));
        if (og_ref_entry_decode(buf, strlen(buf), "_graph/refs/main/x.json", &e) != OG_ERR_CORRUPT)
            fail_msg("entry mutation %zu decoded", i);
        assert_non_null(strstr(og_error_message(), "_graph/refs/main/x.json"));
    }
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

static void schema_objects_are_content_addressed(void **state)
{
    fixture *f = *state;
    char id[OG_SCHEMA_ID_LEN + 1], id2[OG_SCHEMA_ID_LEN + 1], want[OG_SCHEMA_ID_LEN + 1];
    const char *sch = "{\"types\":[]}";
    assert_int_equal(og_graph_schema_put(f->g, sch, strlen(sch), id), OG_OK);
    assert_int_equal(og_sha256_hex(sch, strlen(sch), want), OG_OK);
    assert_string_equal(id, want);
    assert_int_equal(og_graph_schema_put(f->g, sch, strlen(sch), id2), OG_OK); /* identical: fine */
    assert_string_equal(id, id2);
    assert_int_equal(og_graph_schema_put(f->g, "nope", 4, id2), OG_ERR_INVALID);
    char key[128];
    og_schema_key(id, key);
    og_bytes b = {0};
    assert_int_equal(og_store_get(f->st, key, &b), OG_OK);
    assert_memory_equal(b.data, sch, strlen(sch));
    og_bytes_free(&b);
    /* Tampered bytes under the id: corrupt on a cold read, corrupt on re-put. */
    assert_int_equal(og_store_put(f->st, key, "{\"types\":[1]}", 13), OG_OK);
    og_graph *g2 = tu_open(f->st);
    const og_bytes *got;
    og_cache_entry *h;
    assert_int_equal(og_graph_schema_get(g2, id, &got, &h), OG_ERR_CORRUPT);
    assert_non_null(strstr(og_error_message(), key));
    assert_int_equal(og_graph_schema_put(g2, sch, strlen(sch), id2), OG_ERR_CORRUPT);
    char missing[OG_SCHEMA_ID_LEN + 1];
    memset(missing, 'e', OG_SCHEMA_ID_LEN);
    missing[OG_SCHEMA_ID_LEN] = '\0';
    assert_int_equal(og_graph_schema_get(g2, missing, &got, &h), OG_ERR_NOT_FOUND);
    og_graph_close(g2);
}

static void commit_object_must_match_its_name(void **state)
{
    fixture *f = *state;
    const char *id = "01JG0000000000000000000000";
    char key[64];
    og_commit_key(id, key);
    assert_int_equal(og_store_put(f->st, key, GOOD_COMMIT, strlen(GOOD_COMMIT)), OG_OK);
    const og_commit *c;
    og_cache_entry *h;
    assert_int_equal(og_graph_commit_get(f->g, id, &c, &h), OG_ERR_CORRUPT);
    assert_non_null(strstr(og_error_message(), key));
    assert_int_equal(og_store_put(f->st, key, "{]", 2), OG_OK);
    assert_int_equal(og_graph_commit_get(f->g, id, &c, &h), OG_ERR_CORRUPT);
}

static int freed;
static void count_free(void *p)
{
    freed++;
    free(p);
}

static void cache_evicts_lru_within_bound_and_holders_survive(void **state)
{
    (void)state;
    og_cache *c;
    assert_int_equal(og_cache_new(&c, 4 * (1000 + 200)), OG_OK);
    freed = 0;
    og_cache_entry *e, *held;
    char key[16];
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "k%d", i);
        int *v = malloc(sizeof *v);
        *v = i;
        assert_int_equal(og_cache_put(c, key, v, 1000, count_free, &e), OG_OK);
        if (i == 0) held = e;
        else og_cache_entry_release(e);
    }
    /* Touch k1 so k2 is the least recently used after k0. */
    e = og_cache_get(c, "k1");
    assert_non_null(e);
    og_cache_entry_release(e);
    int *v = malloc(sizeof *v);
    *v = 4;
    assert_int_equal(og_cache_put(c, "k4", v, 1000, count_free, &e), OG_OK);
    og_cache_entry_release(e);
    og_cache_stats s;
    og_cache_get_stats(c, &s);
    assert_true(s.bytes <= s.max_bytes);
    assert_int_equal(s.evictions, 1);
    assert_null(og_cache_get(c, "k0")); /* evicted: least recently used */
    assert_int_equal(*(int *)og_cache_entry_value(held), 0); /* but still alive for its holder */
    assert_int_equal(freed, 0);
    og_cache_entry_release(held);
    assert_int_equal(freed, 1);
    e = og_cache_get(c, "k1");
    assert_non_null(e);
    og_cache_entry_release(e);
    /* A duplicate insert returns the existing value and frees the new one. */
    v = malloc(sizeof *v);
    *v = 99;
    assert_int_equal(og_cache_put(c, "k1", v, 1000, count_free, &e), OG_OK);
    assert_int_equal(*(int *)og_cache_entry_value(e), 1);
    assert_int_equal(freed, 2);
    /* Too big for the bound: returned, never retained. */
    og_cache_entry *big;
    v = malloc(sizeof *v);
    assert_int_equal(og_cache_put(c, "big", v, 1 << 20, count_free, &big), OG_OK);
    assert_null(og_cache_get(c, "big"));
    og_cache_entry_release(big);
    assert_int_equal(freed, 3);
    assert_int_equal(og_cache_remove(c, "k3"), 1);
    assert_int_equal(og_cache_remove(c, "k3"), 0);
    og_cache_free(c); /* e (k1) is still held */
    assert_int_equal(*(int *)og_cache_entry_value(e), 1);
    og_cache_entry_release(e);
}

static og_cache *shared;
static void *hammer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 20000; i++) {
        char key[16];
        seed = seed * 1103515245u + 12345u;
        snprintf(key, sizeof key, "k%u", (seed >> 8) % 200);
        og_cache_entry *e = og_cache_get(shared, key);
        if (!e) {
            char *v = strdup(key);
            if (og_cache_put(shared, key, v, 64, free, &e) != OG_OK) continue;
        }
        if (strcmp(og_cache_entry_value(e), key) != 0) abort();
        og_cache_entry_release(e);
    }
    return NULL;
}

static void cache_is_thread_safe(void **state)
{
    (void)state;
    assert_int_equal(og_cache_new(&shared, 50 * 200), OG_OK);
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++) pthread_create(&t[i], NULL, hammer, (void *)(i + 1));
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    og_cache_stats s;
    og_cache_get_stats(shared, &s);
    assert_true(s.bytes <= s.max_bytes);
    assert_true(s.evictions > 0);
    og_cache_free(shared);
}

static void graph_cache_serves_repeat_reads(void **state)
{
    fixture *f = *state;
    og_write_result r;
    assert_int_equal(tu_commit(f->g, "main", &r), OG_OK);
    og_graph *g2 = tu_open(f->st);
    og_snapshot *s1, *s2;
    assert_int_equal(og_graph_snapshot_commit(g2, r.commit, &s1), OG_OK);
    og_cache_stats a, b;
    og_cache_get_stats(og_graph_cache(g2), &a);
    assert_int_equal(og_graph_snapshot_commit(g2, r.commit, &s2), OG_OK);
    og_cache_get_stats(og_graph_cache(g2), &b);
    assert_int_equal(b.hits - a.hits, 2); /* commit + schema */
    assert_int_equal(b.misses, a.misses);
    assert_ptr_equal(og_snapshot_commit(s1), og_snapshot_commit(s2));
    og_snapshot_free(s1);
    og_snapshot_free(s2);
    og_graph_close(g2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(commit_round_trips),
        cmocka_unit_test(commit_records_actor_via),
        cmocka_unit_test(commit_decoding_is_strict),
        cmocka_unit_test(log_entry_decoding_is_strict),
        cmocka_unit_test(mangled_objects_decode_or_are_corrupt),
        cmocka_unit_test_setup_teardown(schema_objects_are_content_addressed, setup, teardown),
        cmocka_unit_test_setup_teardown(commit_object_must_match_its_name, setup, teardown),
        cmocka_unit_test(cache_evicts_lru_within_bound_and_holders_survive),
        cmocka_unit_test(cache_is_thread_safe),
        cmocka_unit_test_setup_teardown(graph_cache_serves_repeat_reads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
