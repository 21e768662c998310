/*
 * test_store_contract.c — the object store contract (store.h, STORAGE.md §2), backend
 * agnostic.  Runs against the store at $OG_TEST_STORE_URI when set (e.g. an S3 bucket with a
 * unique prefix), else against a fresh mkdtemp directory per test.  Every test works under
 * its own key namespace "<test>-<uuid>/" so runs never see each other's objects.
 */
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
#include "util/buf.h"
#include "util/error.h"
#include "util/id.h"

typedef struct fixture {
    og_store *st;
    char dir[64];  /* the mkdtemp root ("" when using OG_TEST_STORE_URI) */
    char ns[128];  /* key namespace, ends with '/' */
    char key[1200];
} fixture;

static void rm_rf(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    const char *uri = getenv("OG_TEST_STORE_URI");
    if (!uri || !*uri) {
        strcpy(f->dir, "/tmp/og-store-contract-XXXXXX");
        if (!mkdtemp(f->dir)) return -1;
        uri = f->dir;
    }
    if (og_store_open(&f->st, uri) != OG_OK) {
        fprintf(stderr, "open %s: %s\n", uri, og_error_message());
        return -1;
    }
    char u[OG_UUID_LEN + 1];
    if (og_uuid_new(u) != OG_OK) return -1;
    snprintf(f->ns, sizeof f->ns, "contract-%s/", u);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    /* Remove what the test wrote (matters for remote stores). */
    og_keylist l;
    if (og_store_list(f->st, f->ns, NULL, 0, &l) == OG_OK) {
        for (size_t i = 0; i < l.count; i++) og_store_delete(f->st, l.keys[i]);
        og_keylist_free(&l);
    }
    og_store_close(f->st);
    if (f->dir[0]) rm_rf(f->dir);
    free(f);
    return 0;
}

/* The namespaced key for `k` (valid until the next call). */
static const char *K(fixture *f, const char *k)
{
    snprintf(f->key, sizeof f->key, "%s%s", f->ns, k);
    return f->key;
}

static void put_str(fixture *f, const char *k, const char *v)
{
    assert_int_equal(og_store_put(f->st, K(f, k), v, strlen(v)), OG_OK);
}

static void assert_content(fixture *f, const char *k, const char *v)
{
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(f->st, K(f, k), &b), OG_OK);
    assert_int_equal(b.len, strlen(v));
    assert_memory_equal(b.data, v, b.len);
    og_bytes_free(&b);
}

static void assert_message_names(const char *key)
{
    const char *m = og_error_message();
    assert_non_null(m);
    if (!strstr(m, key)) fail_msg("error message \"%s\" does not name key \"%s\"", m, key);
}

/* Lists f->ns + prefix and checks the result equals the given keys (relative to ns). */
static void assert_list(fixture *f, const char *prefix, const char *start_after, size_t limit,
                        const char *const *want, size_t nwant)
{
    char pfx[1200], sa[1200];
    snprintf(pfx, sizeof pfx, "%s%s", f->ns, prefix);
    if (start_after) snprintf(sa, sizeof sa, "%s%s", f->ns, start_after);
    og_keylist l;
    assert_int_equal(og_store_list(f->st, pfx, start_after ? sa : NULL, limit, &l), OG_OK);
    size_t nl = strlen(f->ns);
    if (l.count != nwant) {
        for (size_t i = 0; i < l.count; i++) fprintf(stderr, "  got %s\n", l.keys[i]);
        fail_msg("list \"%s\": %zu keys, want %zu", prefix, l.count, nwant);
    }
    for (size_t i = 0; i < nwant; i++) {
        assert_true(strncmp(l.keys[i], f->ns, nl) == 0);
        assert_string_equal(l.keys[i] + nl, want[i]);
    }
    og_keylist_free(&l);
}

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- round trips ------------------------------------------------------------------------ */

static void put_get_round_trips_small_empty_and_1mib_objects(void **state)
{
    fixture *f = *state;
    put_str(f, "small.txt", "hello, store");
    assert_content(f, "small.txt", "hello, store");

    assert_int_equal(og_store_put(f->st, K(f, "empty"), NULL, 0), OG_OK);
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(f->st, K(f, "empty"), &b), OG_OK);
    assert_int_equal(b.len, 0);
    og_bytes_free(&b);
    uint64_t sz = 99;
    assert_int_equal(og_store_head(f->st, K(f, "empty"), &sz), OG_OK);
    assert_int_equal(sz, 0);

    size_t n = 1u << 20;
    uint8_t *big = malloc(n);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++) big[i] = (uint8_t)(i * 2654435761u >> 13);
    assert_int_equal(og_store_put(f->st, K(f, "deep/er/big.bin"), big, n), OG_OK);
    assert_int_equal(og_store_get(f->st, K(f, "deep/er/big.bin"), &b), OG_OK);
    assert_int_equal(b.len, n);
    assert_memory_equal(b.data, big, n);
    og_bytes_free(&b);
    free(big);
}

static void get_of_missing_key_is_not_found_naming_the_key(void **state)
{
    fixture *f = *state;
    og_bytes b = {NULL, 0};
    const char *k = K(f, "no/such/key");
    assert_int_equal(og_store_get(f->st, k, &b), OG_ERR_NOT_FOUND);
    assert_message_names(k);
    assert_int_equal(og_store_get_range(f->st, k, 0, 10, &b), OG_ERR_NOT_FOUND);
    uint64_t sz;
    assert_int_equal(og_store_head(f->st, k, &sz), OG_ERR_NOT_FOUND);
    assert_message_names(k);
    og_mapping *m = NULL;
    assert_int_equal(og_store_map(f->st, k, &m), OG_ERR_NOT_FOUND);
    assert_null(m);
    assert_int_equal(og_store_delete(f->st, k), OG_ERR_NOT_FOUND);
    assert_message_names(k);
    /* A "directory" of other keys is not itself an object. */
    put_str(f, "dir/child", "x");
    assert_int_equal(og_store_get(f->st, K(f, "dir"), &b), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_head(f->st, K(f, "dir"), &sz), OG_ERR_NOT_FOUND);
    /* A path through an object is not found either. */
    assert_int_equal(og_store_get(f->st, K(f, "dir/child/grandchild"), &b), OG_ERR_NOT_FOUND);
}

static void get_range_inside_crossing_end_and_past_end(void **state)
{
    fixture *f = *state;
    put_str(f, "r", "0123456789");
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get_range(f->st, K(f, "r"), 2, 3, &b), OG_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "234", 3);
    og_bytes_free(&b);
    assert_int_equal(og_store_get_range(f->st, K(f, "r"), 0, 10, &b), OG_OK);
    assert_int_equal(b.len, 10);
    assert_memory_equal(b.data, "0123456789", 10);
    og_bytes_free(&b);
    /* Crossing the end: truncated. */
    assert_int_equal(og_store_get_range(f->st, K(f, "r"), 7, 100, &b), OG_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "789", 3);
    og_bytes_free(&b);
    assert_int_equal(og_store_get_range(f->st, K(f, "r"), 9, UINT64_MAX, &b), OG_OK);
    assert_int_equal(b.len, 1);
    assert_memory_equal(b.data, "9", 1);
    og_bytes_free(&b);
    /* At and past the end: empty, not an error. */
    assert_int_equal(og_store_get_range(f->st, K(f, "r"), 10, 5, &b), OG_OK);
    assert_int_equal(b.len, 0);
    og_bytes_free(&b);
    assert_int_equal(og_store_get_range(f->st, K(f, "r"), 1000, 5, &b), OG_OK);
    assert_int_equal(b.len, 0);
    og_bytes_free(&b);
    /* Zero length inside. */
    assert_int_equal(og_store_get_range(f->st, K(f, "r"), 4, 0, &b), OG_OK);
    assert_int_equal(b.len, 0);
    og_bytes_free(&b);
}

static void head_reports_the_object_size(void **state)
{
    fixture *f = *state;
    put_str(f, "h/one", "abcde");
    uint64_t sz = 0;
    assert_int_equal(og_store_head(f->st, K(f, "h/one"), &sz), OG_OK);
    assert_int_equal(sz, 5);
}

static void put_overwrites_an_existing_object(void **state)
{
    fixture *f = *state;
    put_str(f, "o", "first version, longer");
    put_str(f, "o", "second");
    assert_content(f, "o", "second");
    uint64_t sz = 0;
    assert_int_equal(og_store_head(f->st, K(f, "o"), &sz), OG_OK);
    assert_int_equal(sz, 6);
}

static void put_if_absent_first_wins_and_second_gets_already_exists(void **state)
{
    fixture *f = *state;
    const char *k = K(f, "refs/main/00000000000000000001.json");
    assert_int_equal(og_store_put_if_absent(f->st, k, "winner", 6), OG_OK);
    k = K(f, "refs/main/00000000000000000001.json");
    assert_int_equal(og_store_put_if_absent(f->st, k, "loser!!", 7), OG_ERR_ALREADY_EXISTS);
    assert_message_names(k);
    assert_content(f, "refs/main/00000000000000000001.json", "winner");
    /* An empty object counts as present too. */
    assert_int_equal(og_store_put_if_absent(f->st, K(f, "e"), "", 0), OG_OK);
    assert_int_equal(og_store_put_if_absent(f->st, K(f, "e"), "x", 1), OG_ERR_ALREADY_EXISTS);
    assert_content(f, "e", "");
    /* Nothing but the two objects exists afterwards (no temp objects shown). */
    const char *want[] = {"e", "refs/main/00000000000000000001.json"};
    assert_list(f, "", NULL, 0, want, NKEYS(want));
}

/* og_store_put_if_absent_stream's pieces for a test: `pieces` in order, then the end — or,
 * with fail_at set, OG_ERR_IO when that piece is asked for. */
typedef struct pieces {
    const char *const *p;
    size_t n, next, fail_at;
} pieces;

static og_status next_piece(void *ctx, const void **data, size_t *len)
{
    pieces *c = ctx;
    if (c->fail_at && c->next + 1 == c->fail_at) return og_err(OG_ERR_IO, "piece %zu failed", c->next);
    *data = c->next < c->n ? c->p[c->next] : NULL;
    *len = c->next < c->n ? strlen(c->p[c->next]) : 0;
    c->next++;
    return OG_OK;
}

/* A put made in pieces is the pieces' concatenation, loses to an
 * object already there without replacing it, and a piece that fails leaves no object and no
 * temp file behind. */
static void put_if_absent_stream_writes_the_pieces_in_order(void **state)
{
    fixture *f = *state;
    const char *const parts[] = {"ab", "cde", "f"};
    pieces c = {parts, NKEYS(parts), 0, 0};
    assert_int_equal(og_store_put_if_absent_stream(f->st, K(f, "s/one"), next_piece, &c), OG_OK);
    assert_content(f, "s/one", "abcdef");
    pieces again = {parts, 1, 0, 0};
    assert_int_equal(og_store_put_if_absent_stream(f->st, K(f, "s/one"), next_piece, &again), OG_ERR_ALREADY_EXISTS);
    assert_content(f, "s/one", "abcdef");
    pieces bad = {parts, NKEYS(parts), 0, 3};
    assert_int_equal(og_store_put_if_absent_stream(f->st, K(f, "s/two"), next_piece, &bad), OG_ERR_IO);
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(f->st, K(f, "s/two"), &b), OG_ERR_NOT_FOUND);
    pieces none = {parts, 0, 0, 0};
    assert_int_equal(og_store_put_if_absent_stream(f->st, K(f, "s/empty"), next_piece, &none), OG_OK);
    assert_content(f, "s/empty", "");
    const char *want[] = {"s/empty", "s/one"};
    assert_list(f, "", NULL, 0, want, NKEYS(want));
    if (f->dir[0]) { /* a local store: no temp file either */
        char cmd[256];
        snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -name '.tmp-*' ! -name '.tmp-lock-*')\"", f->dir);
        assert_int_equal(system(cmd), 0);
    }
}

/* ---- list ------------------------------------------------------------------------------- */

static void put_all(fixture *f, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) put_str(f, keys[i], keys[i]);
}

static void list_with_prefix_mid_name_start_after_and_limit(void **state)
{
    fixture *f = *state;
    const char *keys[] = {
        "refs/main/00000000000000000003.json", "refs/main/00000000000000000001.json",
        "refs/main/00000000000000000002.json", "refs/main/10000000000000000000.json",
        "refs/mainline/00000000000000000001.json", "refs/dev/00000000000000000001.json",
        "commits/01A.json",
    };
    put_all(f, keys, NKEYS(keys));

    const char *mid[] = {"refs/main/00000000000000000001.json", "refs/main/00000000000000000002.json",
                         "refs/main/00000000000000000003.json"};
    assert_list(f, "refs/main/0000", NULL, 0, mid, NKEYS(mid));

    /* "refs/main" (no slash) matches the mainline branch too: a plain string prefix. */
    const char *all_main[] = {"refs/main/00000000000000000001.json",
                              "refs/main/00000000000000000002.json",
                              "refs/main/00000000000000000003.json",
                              "refs/main/10000000000000000000.json",
                              "refs/mainline/00000000000000000001.json"};
    assert_list(f, "refs/main", NULL, 0, all_main, NKEYS(all_main));

    const char *first[] = {"refs/main/00000000000000000001.json"};
    assert_list(f, "refs/main/", NULL, 1, first, 1);

    const char *after[] = {"refs/main/00000000000000000003.json", "refs/main/10000000000000000000.json"};
    assert_list(f, "refs/main/", "refs/main/00000000000000000002.json", 0, after, NKEYS(after));
    /* start_after that is not itself a key, and one that is a directory prefix. */
    assert_list(f, "refs/main/", "refs/main/00000000000000000002.jso", 0,
                (const char *const[]){"refs/main/00000000000000000002.json",
                                       "refs/main/00000000000000000003.json",
                                       "refs/main/10000000000000000000.json"},
                3);
    assert_list(f, "refs/", "refs/main", 0,
                (const char *const[]){"refs/main/00000000000000000001.json",
                                      "refs/main/00000000000000000002.json",
                                      "refs/main/00000000000000000003.json",
                                      "refs/main/10000000000000000000.json",
                                      "refs/mainline/00000000000000000001.json"},
                5);
    assert_list(f, "refs/", "refs/main/", 0,
                (const char *const[]){"refs/main/00000000000000000001.json",
                                      "refs/main/00000000000000000002.json",
                                      "refs/main/00000000000000000003.json",
                                      "refs/main/10000000000000000000.json",
                                      "refs/mainline/00000000000000000001.json"},
                5);
    assert_list(f, "refs/", "refs/main/~", 0,
                (const char *const[]){"refs/mainline/00000000000000000001.json"}, 1);
    assert_list(f, "refs/", "refs/mainline/00000000000000000001.json", 0, NULL, 0);
    assert_list(f, "refs/main/", "refs/main/00000000000000000001.json", 2,
                (const char *const[]){"refs/main/00000000000000000002.json",
                                      "refs/main/00000000000000000003.json"},
                2);

    /* Nothing under a missing prefix, or under a prefix that is an object's name plus '/'. */
    assert_list(f, "nothing/here/", NULL, 0, NULL, 0);
    assert_list(f, "commits/01A.json/", NULL, 0, NULL, 0);
    assert_list(f, "zzz", NULL, 0, NULL, 0);
}

static void list_pages_with_start_after_reproduce_the_full_listing(void **state)
{
    fixture *f = *state;
    const char *keys[] = {"p/a", "p/a-b", "p/a0", "p/b/c/d", "p/b/c-e", "p/b-x", "p/b0", "p/c"};
    put_all(f, keys, NKEYS(keys));
    og_keylist full;
    char pfx[256];
    snprintf(pfx, sizeof pfx, "%sp/", f->ns);
    assert_int_equal(og_store_list(f->st, pfx, NULL, 0, &full), OG_OK);
    assert_int_equal(full.count, NKEYS(keys));
    for (size_t i = 1; i < full.count; i++)
        if (strcmp(full.keys[i - 1], full.keys[i]) >= 0)
            fail_msg("list not sorted: \"%s\" before \"%s\"", full.keys[i - 1], full.keys[i]);
    /* Pages of 3. */
    size_t seen = 0;
    char last[1200] = "";
    for (;;) {
        og_keylist page;
        assert_int_equal(og_store_list(f->st, pfx, seen ? last : NULL, 3, &page), OG_OK);
        assert_true(page.count <= 3);
        for (size_t i = 0; i < page.count; i++) {
            assert_true(seen < full.count);
            assert_string_equal(page.keys[i], full.keys[seen]);
            seen++;
        }
        size_t n = page.count;
        if (n) snprintf(last, sizeof last, "%s", page.keys[n - 1]);
        og_keylist_free(&page);
        if (n < 3) break;
    }
    assert_int_equal(seen, full.count);
    og_keylist_free(&full);
}

static void list_orders_dash_before_slash_before_digits(void **state)
{
    fixture *f = *state;
    /* '-' (0x2d) < '/' (0x2f) < '0' (0x30): a depth-first walk that sorted directory names
     * without their '/' would put "d/x" before "d-b". */
    const char *keys[] = {"d0", "d/x/y/z", "e", "d-b", "d/w", "D", "d/x-1", "d/x/a"};
    put_all(f, keys, NKEYS(keys));
    const char *want[] = {"D", "d-b", "d/w", "d/x-1", "d/x/a", "d/x/y/z", "d0", "e"};
    assert_list(f, "", NULL, 0, want, NKEYS(want));
    assert_list(f, "d", NULL, 0, want + 1, 6);
    assert_list(f, "d/x", NULL, 0, want + 3, 3);
}

/* ---- delete ----------------------------------------------------------------------------- */

static void delete_then_get_is_not_found_and_the_key_can_be_reused(void **state)
{
    fixture *f = *state;
    put_str(f, "del/me", "bye");
    put_str(f, "del/keep", "stay");
    assert_int_equal(og_store_delete(f->st, K(f, "del/me")), OG_OK);
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(f->st, K(f, "del/me"), &b), OG_ERR_NOT_FOUND);
    assert_int_equal(og_store_delete(f->st, K(f, "del/me")), OG_ERR_NOT_FOUND);
    const char *want[] = {"del/keep"};
    assert_list(f, "", NULL, 0, want, 1);
    assert_int_equal(og_store_put_if_absent(f->st, K(f, "del/me"), "again", 5), OG_OK);
    assert_content(f, "del/me", "again");
    /* Once every key under "sub/" is gone, "sub" itself is usable as a key. */
    put_str(f, "sub/only", "x");
    assert_int_equal(og_store_delete(f->st, K(f, "sub/only")), OG_OK);
    put_str(f, "sub", "now an object");
    assert_content(f, "sub", "now an object");
}

/* ---- keys ------------------------------------------------------------------------------- */

static void invalid_keys_are_rejected_and_nothing_is_written(void **state)
{
    fixture *f = *state;
    const char *bad_rel[] = {"", "/abs", "a//b", "a/../b", "a/./b", "trailing/", "..", ".",
                             "a/..", "./a", ".tmp-123", "x/.tmp-abc"};
    og_keylist before;
    assert_int_equal(og_store_list(f->st, "", NULL, 0, &before), OG_OK);
    for (size_t i = 0; i < NKEYS(bad_rel); i++) {
        /* Both raw and under the test namespace. */
        for (int ns = 0; ns < 2; ns++) {
            char k[1200];
            snprintf(k, sizeof k, "%s%s", ns ? f->ns : "", bad_rel[i]);
            if (ns && bad_rel[i][0] == '\0') continue; /* ns + "" is the trailing '/' case */
            og_bytes b = {NULL, 0};
            uint64_t sz;
            og_mapping *m = NULL;
            assert_int_equal(og_store_key_check(k), OG_ERR_INVALID);
            assert_int_equal(og_store_put(f->st, k, "x", 1), OG_ERR_INVALID);
            assert_int_equal(og_store_put_if_absent(f->st, k, "x", 1), OG_ERR_INVALID);
            assert_int_equal(og_store_get(f->st, k, &b), OG_ERR_INVALID);
            assert_int_equal(og_store_get_range(f->st, k, 0, 1, &b), OG_ERR_INVALID);
            assert_int_equal(og_store_head(f->st, k, &sz), OG_ERR_INVALID);
            assert_int_equal(og_store_delete(f->st, k), OG_ERR_INVALID);
            assert_int_equal(og_store_map(f->st, k, &m), OG_ERR_INVALID);
            assert_null(m);
        }
    }
    assert_int_equal(og_store_put(f->st, NULL, "x", 1), OG_ERR_INVALID);
    char longkey[1100];
    memset(longkey, 'a', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    for (size_t i = 100; i < sizeof longkey - 1; i += 100) longkey[i] = '/';
    assert_int_equal(og_store_put(f->st, longkey, "x", 1), OG_ERR_INVALID);
    og_keylist after;
    assert_int_equal(og_store_list(f->st, "", NULL, 0, &after), OG_OK);
    assert_int_equal(after.count, before.count);
    for (size_t i = 0; i < after.count; i++) assert_string_equal(after.keys[i], before.keys[i]);
    og_keylist_free(&before);
    og_keylist_free(&after);
    /* Bad list prefixes are refused too. */
    og_keylist l;
    assert_int_equal(og_store_list(f->st, "/abs", NULL, 0, &l), OG_ERR_INVALID);
    assert_int_equal(og_store_list(f->st, "a/../", NULL, 0, &l), OG_ERR_INVALID);
    assert_int_equal(og_store_list(f->st, "a//", NULL, 0, &l), OG_ERR_INVALID);
    /* And good keys with dots inside names are fine. */
    assert_int_equal(og_store_key_check("_graph/format.json"), OG_OK);
    assert_int_equal(og_store_key_check("a/.hidden/..x/b..c"), OG_OK);
}

/* ---- map -------------------------------------------------------------------------------- */

static void map_contents_equal_get(void **state)
{
    fixture *f = *state;
    size_t n = 100000;
    uint8_t *data = malloc(n);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++) data[i] = (uint8_t)(i % 251);
    assert_int_equal(og_store_put(f->st, K(f, "m/data.lance"), data, n), OG_OK);
    og_mapping *m = NULL;
    assert_int_equal(og_store_map(f->st, K(f, "m/data.lance"), &m), OG_OK);
    assert_int_equal(og_mapping_size(m), n);
    og_bytes b = {NULL, 0};
    assert_int_equal(og_store_get(f->st, K(f, "m/data.lance"), &b), OG_OK);
    assert_memory_equal(og_mapping_data(m), b.data, n);
    assert_memory_equal(og_mapping_data(m), data, n);
    og_bytes_free(&b);
    og_mapping_release(m);

    assert_int_equal(og_store_put(f->st, K(f, "m/empty"), "", 0), OG_OK);
    assert_int_equal(og_store_map(f->st, K(f, "m/empty"), &m), OG_OK);
    assert_int_equal(og_mapping_size(m), 0);
    assert_non_null(og_mapping_data(m));
    og_mapping_release(m);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(put_get_round_trips_small_empty_and_1mib_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(get_of_missing_key_is_not_found_naming_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(get_range_inside_crossing_end_and_past_end, setup, teardown),
        cmocka_unit_test_setup_teardown(head_reports_the_object_size, setup, teardown),
        cmocka_unit_test_setup_teardown(put_overwrites_an_existing_object, setup, teardown),
        cmocka_unit_test_setup_teardown(put_if_absent_first_wins_and_second_gets_already_exists, setup, teardown),
        cmocka_unit_test_setup_teardown(put_if_absent_stream_writes_the_pieces_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(list_with_prefix_mid_name_start_after_and_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(list_pages_with_start_after_reproduce_the_full_listing, setup, teardown),
        cmocka_unit_test_setup_teardown(list_orders_dash_before_slash_before_digits, setup, teardown),
        cmocka_unit_test_setup_teardown(delete_then_get_is_not_found_and_the_key_can_be_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(invalid_keys_are_rejected_and_nothing_is_written, setup, teardown),
        cmocka_unit_test_setup_teardown(map_contents_equal_get, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
