/*
 * test_strmap.c — the byte-string hash map: insert-if-absent semantics, binary keys, growth,
 * insertion-order enumeration, and a property test against a naive list for random keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/strmap.h"

static void insert_if_absent_keeps_the_first_value(void **state)
{
    (void)state;
    og_strmap m;
    og_strmap_init(&m);
    uint32_t got = 99;
    int ins = -1;
    assert_int_equal(og_strmap_get(&m, "a", 1, &got), 0);
    assert_int_equal(og_strmap_insert(&m, "alice", 5, 7, &got, &ins), OG_OK);
    assert_int_equal(got, 7);
    assert_int_equal(ins, 1);
    assert_int_equal(og_strmap_insert(&m, "alice", 5, 8, &got, &ins), OG_OK);
    assert_int_equal(got, 7);
    assert_int_equal(ins, 0);
    assert_int_equal(og_strmap_count(&m), 1);
    assert_int_equal(og_strmap_get(&m, "alice", 5, &got), 1);
    assert_int_equal(got, 7);
    /* a prefix and an extension are different keys */
    assert_int_equal(og_strmap_get(&m, "alic", 4, NULL), 0);
    assert_int_equal(og_strmap_get(&m, "alice!", 6, NULL), 0);
    og_strmap_free(&m);
}

static void binary_and_empty_keys_are_distinct(void **state)
{
    (void)state;
    og_strmap m;
    og_strmap_init(&m);
    assert_int_equal(og_strmap_insert(&m, "", 0, 1, NULL, NULL), OG_OK);
    assert_int_equal(og_strmap_insert(&m, "\0", 1, 2, NULL, NULL), OG_OK);
    assert_int_equal(og_strmap_insert(&m, "\0\0", 2, 3, NULL, NULL), OG_OK);
    assert_int_equal(og_strmap_insert(&m, "a\0b", 3, 4, NULL, NULL), OG_OK);
    assert_int_equal(og_strmap_insert(&m, "a\0c", 3, 5, NULL, NULL), OG_OK);
    assert_int_equal(og_strmap_count(&m), 5);
    uint32_t v;
    assert_int_equal(og_strmap_get(&m, "", 0, &v), 1);
    assert_int_equal(v, 1);
    assert_int_equal(og_strmap_get(&m, "\0\0", 2, &v), 1);
    assert_int_equal(v, 3);
    assert_int_equal(og_strmap_get(&m, "a\0c", 3, &v), 1);
    assert_int_equal(v, 5);
    assert_int_equal(og_strmap_get(&m, "a", 1, &v), 0);
    og_strmap_free(&m);
}

static void an_empty_key_alone_enumerates(void **state)
{
    (void)state;
    og_strmap m;
    og_strmap_init(&m);
    assert_int_equal(og_strmap_insert(&m, NULL, 0, 42, NULL, NULL), OG_OK);
    const uint8_t *k = NULL;
    size_t len = 9;
    uint32_t v = 0;
    og_strmap_entry(&m, 0, &k, &len, &v);
    assert_non_null(k);
    assert_int_equal(len, 0);
    assert_int_equal(v, 42);
    og_strmap_free(&m);
}

static void growth_keeps_every_key_and_bounds_the_load_factor(void **state)
{
    (void)state;
    og_strmap m;
    og_strmap_init(&m);
    char key[32];
    for (uint32_t i = 0; i < 50000; i++) {
        int n = snprintf(key, sizeof key, "node-%u", i);
        assert_int_equal(og_strmap_insert(&m, key, (size_t)n, i, NULL, NULL), OG_OK);
        assert_true(2 * og_strmap_count(&m) <= m.nslots);
    }
    assert_int_equal(og_strmap_count(&m), 50000);
    for (uint32_t i = 0; i < 50000; i++) {
        int n = snprintf(key, sizeof key, "node-%u", i);
        uint32_t v = 0;
        assert_int_equal(og_strmap_get(&m, key, (size_t)n, &v), 1);
        assert_int_equal(v, i);
    }
    assert_true(og_strmap_bytes(&m) > 50000 * sizeof(og_strmap_entry_));
    og_strmap_free(&m);
}

static void reserve_then_insert_does_not_rehash(void **state)
{
    (void)state;
    og_strmap m;
    og_strmap_init(&m);
    assert_int_equal(og_strmap_reserve(&m, 1000, 2890), OG_OK); /* "0".."999": 2890 bytes */
    uint64_t *slots = m.slots;
    size_t nslots = m.nslots;
    uint8_t *arena = m.arena;
    og_strmap_entry_ *entries = m.entries;
    char key[16];
    for (uint32_t i = 0; i < 1000; i++) {
        int n = snprintf(key, sizeof key, "%u", i);
        assert_int_equal(og_strmap_insert(&m, key, (size_t)n, i, NULL, NULL), OG_OK);
    }
    assert_ptr_equal(m.slots, slots);
    assert_int_equal(m.nslots, nslots);
    assert_ptr_equal(m.arena, arena);
    assert_ptr_equal(m.entries, entries);
    assert_int_equal(m.arena_len, 2890);
    assert_int_equal(og_strmap_reserve(&m, OG_STRMAP_MAX_KEYS + 1, 0), OG_ERR_LIMIT);
    /* and the map still answers after growing past the reservation */
    for (uint32_t i = 1000; i < 5000; i++) {
        int n = snprintf(key, sizeof key, "%u", i);
        assert_int_equal(og_strmap_insert(&m, key, (size_t)n, i, NULL, NULL), OG_OK);
    }
    for (uint32_t i = 0; i < 5000; i++) {
        int n = snprintf(key, sizeof key, "%u", i);
        uint32_t v = 0;
        assert_int_equal(og_strmap_get(&m, key, (size_t)n, &v), 1);
        assert_int_equal(v, i);
    }
    og_strmap_free(&m);
}

/* The naive model: an array of (key, value), first insert wins. */
typedef struct model_kv {
    uint8_t key[12];
    size_t len;
    uint32_t value;
} model_kv;

static long model_find(const model_kv *kv, size_t n, const uint8_t *key, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (kv[i].len == len && memcmp(kv[i].key, key, len) == 0) return (long)i;
    return -1;
}

static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

/* Random short keys over a 3-letter alphabet (so collisions of whole keys are frequent, and
 * lengths 0..11 include prefixes of each other); inserts and lookups are checked against the
 * model after every step, and enumeration must match the model's insertion order. */
static void random_operations_match_a_naive_list(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng_state = seed;
        og_strmap m;
        og_strmap_init(&m);
        model_kv *kv = calloc(3000, sizeof *kv);
        assert_non_null(kv);
        size_t nkv = 0;
        for (int step = 0; step < 3000; step++) {
            uint8_t key[12];
            size_t len = rng() % 12;
            for (size_t i = 0; i < len; i++) key[i] = (uint8_t)("ab\0"[rng() % 3]);
            uint32_t value = rng();
            long at = model_find(kv, nkv, key, len);
            if (rng() % 3) {
                uint32_t stored = 0;
                int ins = -1;
                assert_int_equal(og_strmap_insert(&m, key, len, value, &stored, &ins), OG_OK);
                if (at < 0) {
                    memcpy(kv[nkv].key, key, len);
                    kv[nkv].len = len;
                    kv[nkv].value = value;
                    nkv++;
                    assert_int_equal(ins, 1);
                    assert_int_equal(stored, value);
                } else {
                    assert_int_equal(ins, 0);
                    assert_int_equal(stored, kv[at].value);
                }
            } else {
                uint32_t got = 0;
                int hit = og_strmap_get(&m, key, len, &got);
                assert_int_equal(hit, at >= 0);
                if (at >= 0) assert_int_equal(got, kv[at].value);
            }
            assert_int_equal(og_strmap_count(&m), nkv);
        }
        for (size_t i = 0; i < nkv; i++) {
            const uint8_t *k;
            size_t len;
            uint32_t v;
            og_strmap_entry(&m, i, &k, &len, &v);
            assert_int_equal(len, kv[i].len);
            if (len) assert_memory_equal(k, kv[i].key, len);
            assert_int_equal(v, kv[i].value);
        }
        free(kv);
        og_strmap_free(&m);
    }
}

/* og_strmap_get_many answers exactly like og_strmap_get for every key of a string-column
 * layout: hits, misses (the `absent` value), the empty key, binary keys, offsets not
 * starting at 0 (a slice), batch sizes below, at and far above the prefetch pipeline's
 * depth, and an empty map. */
static void batched_lookups_match_single_lookups(void **state)
{
    (void)state;
    enum { NKEYS = 20000 };
    og_strmap m;
    og_strmap_init(&m);
    uint8_t *bytes = malloc((size_t)NKEYS * 24 + 64);
    int64_t *offsets = malloc((NKEYS + 2) * sizeof *offsets);
    uint32_t *got = malloc((NKEYS + 1) * sizeof *got);
    assert_non_null(bytes);
    assert_non_null(offsets);
    assert_non_null(got);
    uint32_t absent = 0xdeadbeefu;
    og_strmap_get_many(&m, bytes, offsets, 0, absent, got); /* n = 0, empty map */
    memcpy(bytes, "zz", 2);
    offsets[0] = 0, offsets[1] = 2;
    og_strmap_get_many(&m, bytes, offsets, 1, absent, got);
    assert_int_equal(got[0], absent);

    srand(7);
    size_t off = 5; /* a slice: the first key starts past 0 */
    offsets[0] = (int64_t)off;
    for (size_t i = 0; i < NKEYS; i++) {
        size_t len = i == 17 ? 0 : (size_t)(rand() % 20);
        for (size_t k = 0; k < len; k++) bytes[off + k] = (uint8_t)(rand() % 4); /* short alphabet: near-collisions */
        off += len;
        offsets[i + 1] = (int64_t)off;
        if (rand() % 2) {
            assert_int_equal(og_strmap_insert(&m, bytes + offsets[i], len, (uint32_t)i, NULL, NULL), OG_OK);
        }
    }
    assert_true(og_strmap_count(&m) > 1000);
    static const size_t sizes[] = {1, 5, 8, 23, 24, 25, 31, 100, NKEYS};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t first = s * 37 % 100, n = sizes[s] + first > NKEYS ? NKEYS - first : sizes[s];
        og_strmap_get_many(&m, bytes, offsets + first, n, absent, got);
        for (size_t i = 0; i < n; i++) {
            size_t k = first + i;
            uint32_t v = absent;
            og_strmap_get(&m, bytes + offsets[k], (size_t)(offsets[k + 1] - offsets[k]), &v);
            if (got[i] != v) fail_msg("batch of %zu from %zu: key %zu got %u want %u", n, first, k, got[i], v);
        }
    }
    og_strmap_free(&m);
    free(bytes);
    free(offsets);
    free(got);
}

/* A map over a string column (og_strmap_init_column) answers what a map holding copies of
 * the keys answers — the first row of each key, for single and batched lookups, through many
 * rehashes and while the column's buffers are reallocated under it — holds nothing but its
 * slots at a load factor of at most 3/4, and refuses a row inserted out of order. */
static void a_map_over_a_column_answers_as_one_with_copied_keys(void **state)
{
    (void)state;
    enum { NROWS = 30000 };
    struct { uint8_t *bytes; int64_t *offsets; } col = {NULL, NULL};
    size_t cap_bytes = 16, cap_rows = 4;
    col.bytes = malloc(cap_bytes);
    col.offsets = malloc((cap_rows + 1) * sizeof *col.offsets);
    assert_non_null(col.bytes);
    assert_non_null(col.offsets);
    col.offsets[0] = 0;
    og_strmap m, ref;
    og_strmap_init_column(&m, (void *const *)&col.bytes, &col.offsets);
    og_strmap_init(&ref);
    srand(11);
    for (uint32_t r = 0; r < NROWS; r++) {
        char key[32];
        /* ~1 in 4 rows repeats an earlier key (a merge's repeat keeps the first row) */
        int len = snprintf(key, sizeof key, "k%u", (unsigned)(rand() % 4 == 0 && r ? (uint32_t)rand() % r : r));
        if (r + 1 >= cap_rows) { /* the column grows under the map (realloc moves it) */
            cap_rows *= 2;
            col.offsets = realloc(col.offsets, (cap_rows + 1) * sizeof *col.offsets);
            assert_non_null(col.offsets);
        }
        if ((size_t)col.offsets[r] + (size_t)len > cap_bytes) {
            cap_bytes = cap_bytes * 2 + (size_t)len;
            col.bytes = realloc(col.bytes, cap_bytes);
            assert_non_null(col.bytes);
        }
        memcpy(col.bytes + col.offsets[r], key, (size_t)len);
        col.offsets[r + 1] = col.offsets[r] + len;
        uint32_t got, want;
        int ins, want_ins;
        assert_int_equal(og_strmap_insert(&ref, key, (size_t)len, r, &want, &want_ins), OG_OK);
        assert_int_equal(og_strmap_insert(&m, key, (size_t)len, r, &got, &ins), OG_OK);
        assert_int_equal(got, want);
        assert_int_equal(ins, want_ins);
    }
    assert_int_equal(og_strmap_count(&m), og_strmap_count(&ref));
    assert_true(4 * og_strmap_count(&m) <= 3 * m.nslots);
    assert_int_equal(og_strmap_bytes(&m), m.nslots * sizeof(uint64_t));
    uint32_t *got = malloc(NROWS * sizeof *got);
    assert_non_null(got);
    og_strmap_get_many(&m, col.bytes, col.offsets, NROWS, UINT32_MAX, got);
    for (uint32_t r = 0; r < NROWS; r++) {
        uint32_t want = 0, one = 0;
        size_t len = (size_t)(col.offsets[r + 1] - col.offsets[r]);
        assert_int_equal(og_strmap_get(&ref, col.bytes + col.offsets[r], len, &want), 1);
        assert_int_equal(og_strmap_get(&m, col.bytes + col.offsets[r], len, &one), 1);
        assert_int_equal(one, want);
        assert_int_equal(got[r], want);
    }
    assert_int_equal(og_strmap_get(&m, "nope", 4, NULL), 0);
    /* the next row must come next */
    assert_int_equal(og_strmap_insert(&m, "new", 3, NROWS + 5, NULL, NULL), OG_ERR_INTERNAL);
    free(got);
    og_strmap_free(&m);
    og_strmap_free(&ref);
    free(col.bytes);
    free(col.offsets);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(insert_if_absent_keeps_the_first_value),
        cmocka_unit_test(binary_and_empty_keys_are_distinct),
        cmocka_unit_test(an_empty_key_alone_enumerates),
        cmocka_unit_test(growth_keeps_every_key_and_bounds_the_load_factor),
        cmocka_unit_test(reserve_then_insert_does_not_rehash),
        cmocka_unit_test(random_operations_match_a_naive_list),
        cmocka_unit_test(batched_lookups_match_single_lookups),
        cmocka_unit_test(a_map_over_a_column_answers_as_one_with_copied_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
