/*
 * test_sha256.c — util/sha256.h: the FIPS 180-4 examples (empty, "abc", the two-block 448-bit
 * message, a million 'a'), every length 0..600 of pseudo-random bytes (each padding case:
 * tails below, at and above 56 bytes, whole blocks) equal to OpenSSL's digest, the hex form,
 * and og_sha256_hex_valid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include "util/sha256.h"

static void hex_of(const char *msg, size_t len, const char *want)
{
    char got[OG_SHA256_HEX_LEN + 1];
    assert_int_equal(og_sha256_hex(msg, len, got), OG_OK);
    assert_string_equal(got, want);
}

static void fips_examples(void **state)
{
    (void)state;
    hex_of("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *m = malloc(1000000);
    assert_non_null(m);
    memset(m, 'a', 1000000);
    hex_of(m, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(m);
}

static void equals_openssl_at_every_length(void **state)
{
    (void)state;
    uint8_t buf[600];
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        buf[i] = (uint8_t)x;
    }
    for (size_t len = 0; len <= sizeof buf; len++) {
        uint8_t ours[OG_SHA256_LEN], theirs[EVP_MAX_MD_SIZE];
        unsigned n = 0;
        assert_int_equal(og_sha256(buf, len, ours), OG_OK);
        assert_int_equal(EVP_Digest(buf, len, theirs, &n, EVP_sha256(), NULL), 1);
        assert_int_equal(n, OG_SHA256_LEN);
        assert_memory_equal(ours, theirs, OG_SHA256_LEN);
    }
}

static void hex_validity(void **state)
{
    (void)state;
    assert_true(og_sha256_hex_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    assert_false(og_sha256_hex_valid("E3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    assert_false(og_sha256_hex_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85"));
    assert_false(og_sha256_hex_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8555"));
    assert_false(og_sha256_hex_valid(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fips_examples),
        cmocka_unit_test(equals_openssl_at_every_length),
        cmocka_unit_test(hex_validity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
