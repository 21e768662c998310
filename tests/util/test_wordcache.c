/*
 * test_wordcache.c — the bounded pread cache (util/wordcache.h): a run reads back under its
 * key with its n after the table and the arena grew many times (positions, not pointers,
 * name other words of the arena); a key never added misses, key 0 included; the bound is
 * never passed (a reserve past it fails and sets `full`, and nothing is lost before it);
 * clear forgets everything and the cache fills again; og_pread_full reads exactly, or fails on
 * a short file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/wordcache.h"

static void fill(og_wordcache *c, uint64_t key, size_t words)
{
    assert_true(og_wordcache_reserve(c, words));
    for (size_t i = 0; i < words; i++) c->arena[c->len + i] = (uint32_t)(key * 31 + i);
    og_wordcache_add(c, key, words, (uint32_t)(words + 1000));
}

static void expect_run(const og_wordcache *c, uint64_t key, size_t words)
{
    uint32_t n = 0;
    const uint32_t *run = og_wordcache_find(c, key, &n);
    if (!run) fail_msg("key %llu missing", (unsigned long long)key);
    assert_int_equal(n, words + 1000);
    for (size_t i = 0; i < words; i++) assert_int_equal(run[i], (uint32_t)(key * 31 + i));
}

static void runs_survive_growth(void **state)
{
    (void)state;
    og_wordcache c;
    og_wordcache_init(&c, (size_t)64 << 20);
    uint32_t n;
    assert_null(og_wordcache_find(&c, 0, &n)); /* empty */
    for (uint64_t k = 0; k < 5000; k++) fill(&c, k * 7, (size_t)(k % 13));
    for (uint64_t k = 0; k < 5000; k++) expect_run(&c, k * 7, (size_t)(k % 13));
    assert_null(og_wordcache_find(&c, 3, &n)); /* never added */
    assert_null(og_wordcache_find(&c, UINT64_MAX - 1, &n));
    assert_int_equal(c.used, 5000);
    assert_false(c.full);
    og_wordcache_free(&c);
}

static void the_bound_is_never_passed(void **state)
{
    (void)state;
    const size_t bound = 64 * 1024;
    og_wordcache c;
    og_wordcache_init(&c, bound);
    uint64_t k = 0;
    while (og_wordcache_reserve(&c, 10)) {
        for (size_t i = 0; i < 10; i++) c.arena[c.len + i] = (uint32_t)(k * 31 + i);
        og_wordcache_add(&c, k, 10, 1010);
        assert_true(c.slots * 16 + c.cap * sizeof(uint32_t) <= bound);
        k++;
    }
    assert_true(c.full);
    assert_true(k > 100);
    for (uint64_t j = 0; j < k; j++) expect_run(&c, j, 10); /* nothing lost before the bound */
    og_wordcache_clear(&c);
    assert_false(c.full);
    uint32_t n;
    assert_null(og_wordcache_find(&c, 0, &n));
    fill(&c, 42, 3); /* fills again after a clear */
    expect_run(&c, 42, 3);
    og_wordcache_free(&c);
    og_wordcache zero;
    memset(&zero, 0, sizeof zero); /* zeroed memory: an empty cache of bound 0 */
    assert_false(og_wordcache_reserve(&zero, 1));
    assert_true(zero.full);
}

static void pread_full_reads_exactly(void **state)
{
    (void)state;
    char path[] = "/tmp/og-wordcache-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    char data[5000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (char)(i * 7);
    assert_int_equal(write(fd, data, sizeof data), (ssize_t)sizeof data);
    char got[1000];
    assert_true(og_pread_full(fd, got, sizeof got, 3000));
    assert_memory_equal(got, data + 3000, sizeof got);
    assert_false(og_pread_full(fd, got, sizeof got, 4500)); /* past the end */
    close(fd);
    assert_false(og_pread_full(-1, got, 10, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runs_survive_growth),
        cmocka_unit_test(the_bound_is_never_passed),
        cmocka_unit_test(pread_full_reads_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
