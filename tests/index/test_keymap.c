/*
 * test_keymap.c — the persisted index formats of src/index/: a keymap finds every offset of a
 * key in ascending order (duplicates, nulls, empty keys, misses, many keys across buckets),
 * round-trips through a store with put_if_absent, and refuses truncated, foreign or resized
 * files with OG_ERR_CORRUPT; a CSR file round-trips its arrays and refuses damaged headers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "index/csr.h"
#include "index/keymap.h"
#include "util/error.h"
#include "../store/store_fixture.h"

#define OK(expr)                                                                                   \
    do {                                                                                           \
        og_status ok_st_ = (expr);                                                                 \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message());   \
    } while (0)

static const og_type T_STR = {OG_T_STRING, OG_T_NULL, 0};

typedef struct hits {
    uint32_t off[16];
    size_t n;
    size_t stop_after; /* 0 = never stop */
} hits;

static int collect(void *ud, uint32_t off)
{
    hits *h = ud;
    if (h->n < 16) h->off[h->n] = off;
    h->n++;
    return h->stop_after && h->n >= h->stop_after;
}

static og_keymap *open_encoded(const og_vector *ids)
{
    og_buf b = OG_BUF_INIT;
    OK(og_keymap_encode(ids, &b));
    og_keymap *k = NULL;
    OK(og_keymap_open_bytes(&k, b.data, b.len, b.data, NULL));
    return k;
}

static size_t find(const og_keymap *k, const char *key, hits *h)
{
    memset(h, 0, sizeof *h);
    OK(og_keymap_find(k, key, strlen(key), collect, h));
    return h->n;
}

static void finds_every_offset_of_a_key(void **state)
{
    (void)state;
    og_vector ids;
    OK(og_vector_init(&ids, T_STR));
    const char *rows[] = {"a", "b", NULL, "a", "", "c", "a"};
    for (size_t i = 0; i < 7; i++)
        OK(rows[i] ? og_vector_append_bytes(&ids, rows[i], strlen(rows[i])) : og_vector_append_null(&ids));
    og_keymap *k = open_encoded(&ids);
    assert_int_equal(og_keymap_rows(k), 7);
    assert_int_equal(og_keymap_keys(k), 6);
    hits h;
    assert_int_equal(find(k, "a", &h), 3);
    assert_int_equal(h.off[0], 0);
    assert_int_equal(h.off[1], 3);
    assert_int_equal(h.off[2], 6);
    assert_int_equal(find(k, "b", &h), 1);
    assert_int_equal(h.off[0], 1);
    assert_int_equal(find(k, "", &h), 1);
    assert_int_equal(h.off[0], 4);
    assert_int_equal(find(k, "c", &h), 1);
    assert_int_equal(h.off[0], 5);
    assert_int_equal(find(k, "d", &h), 0);
    assert_int_equal(find(k, "aa", &h), 0);
    /* the callback stops the walk */
    memset(&h, 0, sizeof h);
    h.stop_after = 1;
    OK(og_keymap_find(k, "a", 1, collect, &h));
    assert_int_equal(h.n, 1);
    og_keymap_free(k);
    og_vector_free(&ids);
}

static void many_keys_and_an_empty_map(void **state)
{
    (void)state;
    og_vector ids;
    OK(og_vector_init(&ids, T_STR));
    char key[32];
    for (int i = 0; i < 50000; i++) {
        int n = snprintf(key, sizeof key, "node-%d-with-a-longer-tail", i);
        OK(og_vector_append_bytes(&ids, key, (size_t)n));
    }
    og_keymap *k = open_encoded(&ids);
    hits h;
    for (int i = 0; i < 50000; i += 997) {
        snprintf(key, sizeof key, "node-%d-with-a-longer-tail", i);
        assert_int_equal(find(k, key, &h), 1);
        assert_int_equal(h.off[0], (uint32_t)i);
    }
    assert_int_equal(find(k, "node-50000-with-a-longer-tail", &h), 0);
    og_keymap_free(k);
    og_vector_free(&ids);

    og_vector empty;
    OK(og_vector_init(&empty, T_STR));
    k = open_encoded(&empty);
    assert_int_equal(og_keymap_keys(k), 0);
    assert_int_equal(find(k, "x", &h), 0);
    og_keymap_free(k);
    og_vector_free(&empty);
}

static void damaged_files_are_corrupt(void **state)
{
    (void)state;
    og_vector ids;
    OK(og_vector_init(&ids, T_STR));
    for (int i = 0; i < 100; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "k%d", i);
        OK(og_vector_append_bytes(&ids, key, (size_t)n));
    }
    og_buf b = OG_BUF_INIT;
    OK(og_keymap_encode(&ids, &b));
    og_keymap *k = NULL;
    /* truncated */
    assert_int_equal(og_keymap_open_bytes(&k, b.data, b.len - 1, NULL, NULL), OG_ERR_CORRUPT);
    assert_int_equal(og_keymap_open_bytes(&k, b.data, 10, NULL, NULL), OG_ERR_CORRUPT);
    /* a foreign file */
    uint8_t junk[128];
    memset(junk, 'x', sizeof junk);
    assert_int_equal(og_keymap_open_bytes(&k, junk, sizeof junk, NULL, NULL), OG_ERR_CORRUPT);
    /* a header that claims more keys than the file holds */
    uint8_t *copy = malloc(b.len);
    memcpy(copy, b.data, b.len);
    copy[24] ^= 0x40;
    assert_int_equal(og_keymap_open_bytes(&k, copy, b.len, NULL, NULL), OG_ERR_CORRUPT);
    /* a damaged bucket directory is refused at lookup, never read past */
    memcpy(copy, b.data, b.len);
    OK(og_keymap_open_bytes(&k, copy, b.len, NULL, NULL));
    memset(copy + 48, 0xff, 4 * 64); /* the first buckets' starts */
    hits h;
    og_status st = OG_OK;
    for (int i = 0; i < 100 && st == OG_OK; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "k%d", i);
        memset(&h, 0, sizeof h);
        st = og_keymap_find(k, key, (size_t)n, collect, &h);
    }
    assert_int_equal(st, OG_ERR_CORRUPT);
    og_keymap_free(k);
    free(copy);
    og_buf_free(&b);
    og_vector_free(&ids);
}

static void keymaps_round_trip_through_a_store(void **state)
{
    og_store *st = ((fixture *)*state)->st;
    og_vector ids;
    OK(og_vector_init(&ids, T_STR));
    OK(og_vector_append_bytes(&ids, "x", 1));
    OK(og_vector_append_bytes(&ids, "y", 1));
    og_buf b = OG_BUF_INIT;
    OK(og_keymap_encode(&ids, &b));
    /* the key is named after the data file that holds the id field */
    int32_t fields[] = {0, 1};
    og_data_file df = {.path = "0a1b-2c.lance", .fields = fields, .nfields = 2};
    og_fragment fr = {.id = 3, .files = &df, .nfiles = 1, .physical_rows = 2};
    char key[256];
    OK(og_keymap_store_key(key, sizeof key, "node_1_2.lance", &fr, 0));
    assert_string_equal(key, "_index/node_1_2.lance/0a1b-2c/keymap.v1");
    assert_int_equal(og_keymap_store_key(key, sizeof key, "node_1_2.lance", &fr, 7), OG_ERR_NOT_FOUND);
    og_keymap *k = NULL;
    assert_int_equal(og_keymap_open(&k, st, "_index/node_1_2.lance/0a1b-2c/keymap.v1"), OG_ERR_NOT_FOUND);
    OK(og_store_put_if_absent(st, "_index/node_1_2.lance/0a1b-2c/keymap.v1", b.data, b.len));
    /* a second builder loses the race and changes nothing */
    assert_int_equal(og_store_put_if_absent(st, "_index/node_1_2.lance/0a1b-2c/keymap.v1", b.data, b.len),
                     OG_ERR_ALREADY_EXISTS);
    OK(og_keymap_open(&k, st, "_index/node_1_2.lance/0a1b-2c/keymap.v1"));
    hits h;
    assert_int_equal(find(k, "y", &h), 1);
    assert_int_equal(h.off[0], 1);
    og_keymap_free(k);
    og_buf_free(&b);
    og_vector_free(&ids);
}

/* A keymap opened from a local store reads the buckets it probes with pread into its bounded
 * cache: every key (repeated ids, an empty id, nulls skipped, misses) finds the same offsets as
 * over the file's bytes in memory, cold and warm, with a stop from the callback, and past the
 * cache's bound (where it reads the mapping instead). */
static void pread_probes_equal_in_memory_probes(void **state)
{
    og_store *st = ((fixture *)*state)->st;
    enum { N = 60000 }; /* ~3 MB of map: far past the 256 KiB cache */
    og_vector ids;
    OK(og_vector_init(&ids, T_STR));
    for (int i = 0; i < N; i++) {
        char key[32];
        int n = snprintf(key, sizeof key, "node-%d", i % 7 == 0 ? i / 7 : i); /* repeats */
        if (i % 11 == 0) OK(og_vector_append_null(&ids));
        else if (i == 5) OK(og_vector_append_bytes(&ids, "", 0));
        else OK(og_vector_append_bytes(&ids, key, (size_t)n));
    }
    og_buf b = OG_BUF_INIT;
    OK(og_keymap_encode(&ids, &b));
    OK(og_store_put(st, "_index/t/f/keymap.v1", b.data, b.len));
    og_keymap *mem = NULL, *pr = NULL;
    OK(og_keymap_open_bytes(&mem, b.data, b.len, NULL, NULL));
    OK(og_keymap_open(&pr, st, "_index/t/f/keymap.v1"));
    assert_true(og_keymap_reads_by_pread(pr));
    assert_false(og_keymap_reads_by_pread(mem));
    hits a, c;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 400; i++) { /* a few hundred keys: all from the cache on the second pass */
            char key[32];
            snprintf(key, sizeof key, i % 5 == 0 ? "absent-%d" : "node-%d", i * 13);
            if (i == 3) key[0] = '\0'; /* the empty id */
            assert_int_equal(find(pr, key, &c), find(mem, key, &a));
            assert_memory_equal(a.off, c.off, sizeof a.off);
            memset(&a, 0, sizeof a), memset(&c, 0, sizeof c);
            a.stop_after = c.stop_after = 1;
            OK(og_keymap_find(mem, key, strlen(key), collect, &a));
            OK(og_keymap_find(pr, key, strlen(key), collect, &c));
            assert_int_equal(a.n, c.n);
            assert_memory_equal(a.off, c.off, sizeof a.off);
        }
    assert_true(og_keymap_reads_by_pread(pr));
    for (int i = 0; i < N; i += 3) { /* a bulk reader fills the cache, then reads the mapping */
        char key[32];
        snprintf(key, sizeof key, "node-%d", i);
        assert_int_equal(find(pr, key, &c), find(mem, key, &a));
        assert_memory_equal(a.off, c.off, sizeof a.off);
    }
    assert_false(og_keymap_reads_by_pread(pr));
    og_keymap_free(pr);
    og_keymap_free(mem);
    og_buf_free(&b);
    og_vector_free(&ids);
}

/* A map opened from a local store by descriptor checks its header and trailer there (a
 * truncated, too short, foreign or wrong-format file is OG_ERR_CORRUPT, and keeps no
 * descriptor), maps nothing until asked for its bytes (og_keymap_base: the file's bytes) or
 * until its read cache is full, and probes alike before and after it is mapped. */
static void a_map_opened_by_descriptor_checks_its_file_and_maps_late(void **state)
{
    og_store *st = ((fixture *)*state)->st;
    og_vector ids;
    OK(og_vector_init(&ids, T_STR));
    for (int i = 0; i < 500; i++) {
        char key[32];
        OK(og_vector_append_bytes(&ids, key, (size_t)snprintf(key, sizeof key, "k%d", i % 400)));
    }
    og_buf b = OG_BUF_INIT;
    OK(og_keymap_encode(&ids, &b));
    int fds = og_store_open_fds();
    /* damaged files: each refused, no descriptor kept */
    uint8_t *bad = malloc(b.len);
    for (int c = 0; c < 4; c++) {
        memcpy(bad, b.data, b.len);
        size_t len = b.len;
        if (c == 0) len -= 8;           /* truncated: sizes and trailer disagree */
        if (c == 1) len = 10;           /* shorter than a header */
        if (c == 2) bad[0] = 'X';       /* not a keymap */
        if (c == 3) bad[8] = 9;         /* another format */
        OK(og_store_put(st, "_index/t/bad/keymap.v1", bad, len));
        og_keymap *k = NULL;
        assert_int_equal(og_keymap_open(&k, st, "_index/t/bad/keymap.v1"), OG_ERR_CORRUPT);
        assert_null(k);
        assert_int_equal(og_store_open_fds(), fds);
    }
    free(bad);
    OK(og_store_put(st, "_index/t/f/keymap.v1", b.data, b.len));
    og_keymap *k = NULL, *mem = NULL;
    OK(og_keymap_open(&k, st, "_index/t/f/keymap.v1"));
    OK(og_keymap_open_bytes(&mem, b.data, b.len, NULL, NULL));
    assert_int_equal(og_store_open_fds(), fds + 1);
    assert_int_equal(og_keymap_rows(k), 500);
    assert_int_equal(og_keymap_keys(k), 500);
    hits a, c;
    for (int pass = 0; pass < 2; pass++) { /* before the mapping, then after it */
        for (int i = 0; i < 450; i += 7) {
            char key[32];
            snprintf(key, sizeof key, "k%d", i);
            assert_int_equal(find(k, key, &c), find(mem, key, &a));
            assert_memory_equal(a.off, c.off, sizeof a.off);
        }
        if (pass == 0) {
            assert_true(og_keymap_reads_by_pread(k));
            const uint8_t *p = og_keymap_base(k); /* maps it now */
            assert_non_null(p);
            assert_int_equal(og_keymap_bytes(k), b.len);
            assert_memory_equal(p, b.data, b.len);
        }
    }
    og_keymap_free(k);
    og_keymap_free(mem);
    assert_int_equal(og_store_open_fds(), fds);
    og_buf_free(&b);
    og_vector_free(&ids);
}

static void csr_round_trips_and_refuses_damage(void **state)
{
    (void)state;
    /* 3 sources, 2 destinations, edges 0:(0->1) 1:(2->0) 2:(0->0) */
    uint64_t off_out[] = {0, 2, 2, 3}, off_in[] = {0, 2, 3};
    uint32_t nbr_out[] = {1, 0, 0}, edge_out[] = {0, 2, 1}, nbr_in[] = {2, 0, 0}, edge_in[] = {1, 2, 0};
    og_csr_arrays a = {3, 2, 3, 4, {off_out, off_in}, {nbr_out, nbr_in}, {edge_out, edge_in}};
    og_buf b = OG_BUF_INIT;
    OK(og_csr_encode(&a, &b));
    og_csr_arrays got;
    OK(og_csr_parse(b.data, b.len, &got));
    assert_int_equal(got.n_src, 3);
    assert_int_equal(got.n_dst, 2);
    assert_int_equal(got.n_edges, 3);
    assert_int_equal(got.edge_rows, 4);
    assert_memory_equal(got.off[0], off_out, sizeof off_out);
    assert_memory_equal(got.off[1], off_in, sizeof off_in);
    assert_memory_equal(got.nbr[0], nbr_out, sizeof nbr_out);
    assert_memory_equal(got.edge[1], edge_in, sizeof edge_in);
    char key[256];
    OK(og_csr_store_key(key, sizeof key, "edge_5_1.lance", 7, "node_1_1.lance", 3, "node_1_1.lance", 4));
    assert_string_equal(key, "_index/edge_5_1.lance/topology/7-node_1_1.lance-3-node_1_1.lance-4.csr");
    assert_int_equal(og_csr_parse(b.data, b.len - 8, &got), OG_ERR_CORRUPT);
    uint8_t *copy = malloc(b.len);
    memcpy(copy, b.data, b.len);
    copy[64 + 8 * 3] = 9; /* off_out[3] != n_edges */
    assert_int_equal(og_csr_parse(copy, b.len, &got), OG_ERR_CORRUPT);
    memcpy(copy, b.data, b.len);
    copy[16] = 4; /* n_src no longer matches the size */
    assert_int_equal(og_csr_parse(copy, b.len, &got), OG_ERR_CORRUPT);
    free(copy);
    og_buf_free(&b);
}

typedef struct run_hits {
    uint32_t at[64][2];
    size_t n, stop_after;
} run_hits;

static int collect_run(void *ud, uint32_t ord, uint32_t off)
{
    run_hits *h = ud;
    if (h->n < 64) h->at[h->n][0] = ord, h->at[h->n][1] = off;
    h->n++;
    return h->stop_after && h->n >= h->stop_after;
}

/* The run map's answer for key must be every member's, member after member (ordinal, then
 * ascending offset). */
static void run_equals_members(const og_keymap *run, og_keymap *const *members, size_t n, const char *key)
{
    run_hits got = {0};
    OK(og_keymap_find_run(run, key, strlen(key), collect_run, &got));
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        hits h;
        find(members[i], key, &h);
        for (size_t j = 0; j < h.n && j < 16; j++, at++) {
            assert_true(at < got.n);
            assert_int_equal(got.at[at][0], i);
            assert_int_equal(got.at[at][1], h.off[j]);
        }
    }
    assert_int_equal(got.n, at);
}

/* Run maps (keymap.h "Run maps"): the merge of several members answers every key as the
 * members do, in member then offset order (duplicates within and across members, nulls, the
 * empty id, misses), with a stop from the callback; keeps the fragment table; refuses a
 * member that is a run or not its fragment's map; reads alike from a store by descriptor;
 * and a damaged run (truncated, its fragments' rows not adding up, an entry naming a fragment
 * it does not have) is OG_ERR_CORRUPT. */
static void run_maps_answer_as_their_members(void **state)
{
    og_store *st = ((fixture *)*state)->st;
    og_vector ids[3];
    for (int m = 0; m < 3; m++) OK(og_vector_init(&ids[m], T_STR));
    const char *m0[] = {"a", "b", "a", NULL, "c", ""};
    for (int i = 0; i < 6; i++)
        OK(m0[i] ? og_vector_append_bytes(&ids[0], m0[i], strlen(m0[i])) : og_vector_append_null(&ids[0]));
    OK(og_vector_append_bytes(&ids[1], "b", 1));
    OK(og_vector_append_bytes(&ids[1], "d", 1));
    for (int i = 0; i < 3000; i++) { /* more buckets than the small members */
        char key[16];
        int n = snprintf(key, sizeof key, "k%d", i % 2900);
        OK(og_vector_append_bytes(&ids[2], key, (size_t)n));
    }
    OK(og_vector_append_bytes(&ids[2], "a", 1));
    og_keymap *mem[3];
    og_keymap_frag frags[3];
    for (int m = 0; m < 3; m++) {
        mem[m] = open_encoded(&ids[m]);
        frags[m] = (og_keymap_frag){100 + (uint64_t)m, ids[m].len, 7 * (uint64_t)m + 1};
    }
    og_buf b = OG_BUF_INIT;
    OK(og_keymap_encode_run(mem, frags, 3, &b));
    og_keymap *run = NULL;
    OK(og_keymap_open_bytes(&run, b.data, b.len, NULL, NULL));
    assert_true(og_keymap_is_run(run));
    assert_false(og_keymap_is_run(mem[0]));
    const og_keymap_frag *rf;
    assert_int_equal(og_keymap_run_frags(run, &rf), 3);
    assert_memory_equal(rf, frags, sizeof frags);
    assert_int_equal(og_keymap_keys(run), 5 + 2 + 3001);
    static const char *keys[] = {"a", "b", "c", "d", "", "k0", "k5", "k2899", "k2950", "zz", "k1"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) run_equals_members(run, mem, 3, keys[i]);
    run_hits first = {.stop_after = 1};
    OK(og_keymap_find_run(run, "a", 1, collect_run, &first));
    assert_int_equal(first.n, 1);
    assert_int_equal(first.at[0][0], 0);
    assert_int_equal(first.at[0][1], 0);
    /* each kind of map is probed by its own function */
    hits h;
    assert_int_equal(og_keymap_find(run, "a", 1, collect, &h), OG_ERR_INVALID);
    assert_int_equal(og_keymap_find_run(mem[0], "a", 1, collect_run, &first), OG_ERR_INVALID);
    og_error_clear();
    /* refused members */
    og_buf x = OG_BUF_INIT;
    og_keymap *with_run[2] = {mem[0], run};
    assert_int_equal(og_keymap_encode_run(with_run, frags, 2, &x), OG_ERR_INVALID);
    og_keymap_frag wrong = frags[1];
    wrong.rows++;
    assert_int_equal(og_keymap_encode_run(&mem[1], &wrong, 1, &x), OG_ERR_INVALID);
    assert_int_equal(x.len, 0);
    og_error_clear();
    /* made in many small pieces: the same bytes; written to a store in pieces: the same file */
    uint32_t chunk = og_keymap_run_chunk;
    og_keymap_run_chunk = 7;
    og_buf small = OG_BUF_INIT;
    OK(og_keymap_encode_run(mem, frags, 3, &small));
    assert_int_equal(small.len, b.len);
    assert_memory_equal(small.data, b.data, b.len);
    OK(og_keymap_put_run(st, "_index/t/g/keyrun.v1", mem, frags, 3));
    og_keymap_run_chunk = chunk;
    og_bytes put = {NULL, 0};
    OK(og_store_get(st, "_index/t/g/keyrun.v1", &put));
    assert_int_equal(put.len, b.len);
    assert_memory_equal(put.data, b.data, b.len);
    og_bytes_free(&put);
    og_buf_free(&small);
    assert_int_equal(og_keymap_put_run(st, "_index/t/g/keyrun.v1", mem, frags, 3), OG_ERR_ALREADY_EXISTS);
    og_error_clear();
    /* members of like size (ranges of a few buckets each: hundreds of pieces), with repeats
     * across them: the same bytes as one piece, every key answered as the members do */
    {
        og_vector v[3];
        og_keymap *mm[3];
        og_keymap_frag ff[3];
        for (int m = 0; m < 3; m++) {
            OK(og_vector_init(&v[m], T_STR));
            for (int i = 0; i < 600; i++) {
                char key[16];
                int kn = snprintf(key, sizeof key, "x%d", (i * 7 + m * 200) % 1000);
                OK(og_vector_append_bytes(&v[m], key, (size_t)kn));
            }
            mm[m] = open_encoded(&v[m]);
            ff[m] = (og_keymap_frag){(uint64_t)m, 600, (uint64_t)m};
        }
        og_buf whole = OG_BUF_INIT, pieces = OG_BUF_INIT;
        OK(og_keymap_encode_run(mm, ff, 3, &whole));
        og_keymap_run_chunk = 7;
        OK(og_keymap_encode_run(mm, ff, 3, &pieces));
        og_keymap_run_chunk = chunk;
        assert_int_equal(pieces.len, whole.len);
        assert_memory_equal(pieces.data, whole.data, whole.len);
        og_keymap *r = NULL;
        OK(og_keymap_open_bytes(&r, pieces.data, pieces.len, NULL, NULL));
        for (int i = 0; i < 1000; i += 13) {
            char key[16];
            snprintf(key, sizeof key, "x%d", i);
            run_equals_members(r, mm, 3, key);
        }
        og_keymap_free(r);
        for (int m = 0; m < 3; m++) og_keymap_free(mm[m]), og_vector_free(&v[m]);
        og_buf_free(&whole);
        og_buf_free(&pieces);
    }
    /* by descriptor from a store: the same answers */
    OK(og_store_put(st, "_index/t/f/keyrun.v1", b.data, b.len));
    og_keymap *pr = NULL;
    OK(og_keymap_open(&pr, st, "_index/t/f/keyrun.v1"));
    assert_true(og_keymap_reads_by_pread(pr));
    assert_int_equal(og_keymap_run_frags(pr, &rf), 3);
    assert_memory_equal(rf, frags, sizeof frags);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) run_equals_members(pr, mem, 3, keys[i]);
    og_keymap_free(pr);
    /* damage */
    og_keymap *bad = NULL;
    assert_int_equal(og_keymap_open_bytes(&bad, b.data, b.len - 8, NULL, NULL), OG_ERR_CORRUPT);
    uint8_t *copy = malloc(b.len);
    memcpy(copy, b.data, b.len);
    copy[48 + 8] ^= 1; /* the first fragment's rows: no longer the header's sum */
    assert_int_equal(og_keymap_open_bytes(&bad, copy, b.len, NULL, NULL), OG_ERR_CORRUPT);
    memcpy(copy, b.data, b.len);
    OK(og_keymap_open_bytes(&bad, copy, b.len, NULL, NULL));
    size_t nb = ((size_t)1 << og_load_u32le(copy + 32)) + 1;
    size_t eoff = 48 + 3 * 24 + ((nb * 4 + 7) & ~(size_t)7);
    for (size_t e = 0; e < og_keymap_keys(run); e++) copy[eoff + e * 20 + 16] = 9; /* every entry: ordinal 9 of 3 */
    run_hits any = {0};
    og_status s = OG_OK;
    for (size_t i = 0; i < sizeof keys / sizeof *keys && s == OG_OK; i++) s = og_keymap_find_run(bad, keys[i], strlen(keys[i]), collect_run, &any);
    assert_int_equal(s, OG_ERR_CORRUPT);
    og_error_clear();
    og_keymap_free(bad);
    free(copy);
    og_keymap_free(run);
    for (int m = 0; m < 3; m++) {
        og_keymap_free(mem[m]);
        og_vector_free(&ids[m]);
    }
    og_buf_free(&b);
}

/* The fuzzer's seeds (tests/fuzz/corpus/fuzz_index/, a selector byte then the file) must be
 * valid files, or the fuzzer would start from the refusal paths only. */
static void fuzz_seeds_decode(void **state)
{
    (void)state;
    static const char *seeds[] = {"keymap_small", "csr_small", "keyrun_small"};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/fuzz_index/%s", OG_SOURCE_DIR, seeds[i]);
        og_buf b = OG_BUF_INIT;
        OK(og_buf_read_file(&b, path));
        assert_true(b.len > 1);
        uint8_t *p = malloc(b.len);
        memcpy(p, b.data + 1, b.len - 1);
        if (b.data[0] & 1) {
            og_csr_arrays a;
            OK(og_csr_parse(p, b.len - 1, &a));
            assert_int_equal(a.n_edges, 3);
        } else {
            og_keymap *k;
            OK(og_keymap_open_bytes(&k, p, b.len - 1, NULL, NULL));
            if (og_keymap_is_run(k)) { /* "a" at offsets 0 and 2 of the first member, 1 of the second */
                run_hits r = {0};
                OK(og_keymap_find_run(k, "a", 1, collect_run, &r));
                assert_int_equal(r.n, 3);
                assert_int_equal(r.at[2][0], 1);
                assert_int_equal(r.at[2][1], 1);
            } else {
                hits h;
                assert_int_equal(find(k, "a", &h), 2);
                assert_int_equal(h.off[1], 3);
                assert_int_equal(find(k, "node-1", &h), 1);
            }
            og_keymap_free(k);
        }
        free(p);
        og_buf_free(&b);
    }
}

static int setup(void **state) { return store_fixture_open(state, "/tmp/og-index-XXXXXX"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_every_offset_of_a_key),
        cmocka_unit_test(many_keys_and_an_empty_map),
        cmocka_unit_test(damaged_files_are_corrupt),
        cmocka_unit_test_setup_teardown(keymaps_round_trip_through_a_store, setup, teardown),
        cmocka_unit_test_setup_teardown(pread_probes_equal_in_memory_probes, setup, teardown),
        cmocka_unit_test_setup_teardown(a_map_opened_by_descriptor_checks_its_file_and_maps_late, setup, teardown),
        cmocka_unit_test(csr_round_trips_and_refuses_damage),
        cmocka_unit_test_setup_teardown(run_maps_answer_as_their_members, setup, teardown),
        cmocka_unit_test(fuzz_seeds_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
