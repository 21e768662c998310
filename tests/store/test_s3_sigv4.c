/*
 * test_s3_sigv4.c — AWS Signature Version 4 against the examples AWS publishes: the four
 * header-signing examples of the S3 API reference ("Signature Calculations for the
 * Authorization Header": GET object with a Range, PUT object, GET bucket lifecycle, GET
 * bucket list) and the signing-key derivation example of the general SigV4 documentation.
 * All use the documentation's example credentials; no network.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "store/s3_sigv4.h"
#include "util/buf.h"

#define EX_AK "AKIAIOSFODNN7EXAMPLE"
#define EX_SK "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define EX_HOST "examplebucket.s3.amazonaws.com"
#define EX_DATE "20130524T000000Z"

static void hex_of(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", p[i]);
}

static void signing_key_matches_the_general_sigv4_example(void **state)
{
    (void)state;
    uint8_t key[32];
    char hex[65];
    assert_int_equal(og_sigv4_signing_key("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215",
                                          "us-east-1", "iam", key),
                     OG_OK);
    hex_of(key, 32, hex);
    assert_string_equal(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

static void sha256_of_empty_and_known_bodies(void **state)
{
    (void)state;
    char hex[65];
    og_sigv4_sha256_hex("", 0, hex);
    assert_string_equal(hex, OG_SIGV4_EMPTY_SHA256);
    og_sigv4_sha256_hex("Welcome to Amazon S3.", 21, hex);
    assert_string_equal(hex, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
}

static void get_object_with_range_matches_aws_example(void **state)
{
    (void)state;
    og_sigv4_header h[] = {
        {"Host", EX_HOST},
        {"Range", "bytes=0-9"},
        {"x-amz-content-sha256", OG_SIGV4_EMPTY_SHA256},
        {"x-amz-date", EX_DATE},
    };
    og_sigv4_request r = {"GET", "/test.txt", "", h, 4, OG_SIGV4_EMPTY_SHA256, EX_DATE, "us-east-1", "s3"};
    og_buf auth = OG_BUF_INIT, canon = OG_BUF_INIT, sts = OG_BUF_INIT;
    assert_int_equal(og_sigv4_sign(&r, EX_AK, EX_SK, &auth, &canon, &sts), OG_OK);
    assert_string_equal(og_buf_cstr(&canon),
                        "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                        "x-amz-content-sha256:" OG_SIGV4_EMPTY_SHA256 "\nx-amz-date:20130524T000000Z\n\n"
                        "host;range;x-amz-content-sha256;x-amz-date\n" OG_SIGV4_EMPTY_SHA256);
    assert_string_equal(og_buf_cstr(&sts),
                        "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
                        "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
    assert_string_equal(og_buf_cstr(&auth),
                        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    og_buf_free(&auth);
    og_buf_free(&canon);
    og_buf_free(&sts);
}

static void put_object_matches_aws_example(void **state)
{
    (void)state;
    /* key "test$file.text": '$' is not unreserved, so the canonical URI encodes it */
    og_buf path = OG_BUF_INIT;
    assert_int_equal(og_buf_append_str(&path, "/"), OG_OK);
    assert_int_equal(og_sigv4_uri_encode(&path, "test$file.text", 1), OG_OK);
    assert_string_equal(og_buf_cstr(&path), "/test%24file.text");
    const char *body_hash = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
    og_sigv4_header h[] = {
        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
        {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
        {"Host", EX_HOST},
        {"x-amz-date", EX_DATE},
        {"x-amz-content-sha256", body_hash},
    };
    og_sigv4_request r = {"PUT", og_buf_cstr(&path), "", h, 5, body_hash, EX_DATE, "us-east-1", "s3"};
    og_buf auth = OG_BUF_INIT;
    assert_int_equal(og_sigv4_sign(&r, EX_AK, EX_SK, &auth, NULL, NULL), OG_OK);
    assert_string_equal(og_buf_cstr(&auth),
                        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                        "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
                        "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    og_buf_free(&auth);
    og_buf_free(&path);
}

static void get_bucket_lifecycle_matches_aws_example(void **state)
{
    (void)state;
    og_sigv4_param p[] = {{"lifecycle", NULL}};
    og_buf q = OG_BUF_INIT, auth = OG_BUF_INIT;
    assert_int_equal(og_sigv4_query(&q, p, 1), OG_OK);
    assert_string_equal(og_buf_cstr(&q), "lifecycle=");
    og_sigv4_header h[] = {
        {"Host", EX_HOST},
        {"x-amz-date", EX_DATE},
        {"x-amz-content-sha256", OG_SIGV4_EMPTY_SHA256},
    };
    og_sigv4_request r = {"GET", "/", og_buf_cstr(&q), h, 3, OG_SIGV4_EMPTY_SHA256, EX_DATE, "us-east-1", "s3"};
    assert_int_equal(og_sigv4_sign(&r, EX_AK, EX_SK, &auth, NULL, NULL), OG_OK);
    assert_non_null(strstr(og_buf_cstr(&auth),
                           "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"));
    og_buf_free(&q);
    og_buf_free(&auth);
}

static void list_objects_matches_aws_example(void **state)
{
    (void)state;
    /* given out of order: the canonical query sorts by name */
    og_sigv4_param p[] = {{"prefix", "J"}, {"max-keys", "2"}};
    og_buf q = OG_BUF_INIT, auth = OG_BUF_INIT;
    assert_int_equal(og_sigv4_query(&q, p, 2), OG_OK);
    assert_string_equal(og_buf_cstr(&q), "max-keys=2&prefix=J");
    og_sigv4_header h[] = {
        {"Host", EX_HOST},
        {"x-amz-date", EX_DATE},
        {"x-amz-content-sha256", OG_SIGV4_EMPTY_SHA256},
    };
    og_sigv4_request r = {"GET", "/", og_buf_cstr(&q), h, 3, OG_SIGV4_EMPTY_SHA256, EX_DATE, "us-east-1", "s3"};
    assert_int_equal(og_sigv4_sign(&r, EX_AK, EX_SK, &auth, NULL, NULL), OG_OK);
    assert_non_null(strstr(og_buf_cstr(&auth),
                           "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
    og_buf_free(&q);
    og_buf_free(&auth);
}

static void encoding_and_header_canonicalisation(void **state)
{
    (void)state;
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_sigv4_uri_encode(&b, "a b/c~d_e-f.g+h=i&\xc3\xa9", 0), OG_OK);
    assert_string_equal(og_buf_cstr(&b), "a%20b%2Fc~d_e-f.g%2Bh%3Di%26%C3%A9");
    og_buf_reset(&b);
    og_sigv4_param p[] = {{"start-after", "k/1 2"}, {"list-type", "2"}, {"continuation-token", "a+b/c="}, {"prefix", ""}};
    assert_int_equal(og_sigv4_query(&b, p, 4), OG_OK);
    assert_string_equal(og_buf_cstr(&b),
                        "continuation-token=a%2Bb%2Fc%3D&list-type=2&prefix=&start-after=k%2F1%202");
    og_buf_free(&b);

    /* header values are trimmed and inner runs of spaces collapse; names are lower-cased */
    og_sigv4_header h1[] = {{"Host", "h"}, {"X-Amz-Date", EX_DATE}, {"X-Odd", "  a   b  "}};
    og_sigv4_header h2[] = {{"x-odd", "a b"}, {"host", "h"}, {"x-amz-date", EX_DATE}};
    og_sigv4_request r1 = {"GET", "/", "", h1, 3, "UNSIGNED-PAYLOAD", EX_DATE, "eu-west-1", "s3"};
    og_sigv4_request r2 = {"GET", "/", "", h2, 3, "UNSIGNED-PAYLOAD", EX_DATE, "eu-west-1", "s3"};
    og_buf a1 = OG_BUF_INIT, a2 = OG_BUF_INIT, c1 = OG_BUF_INIT;
    assert_int_equal(og_sigv4_sign(&r1, EX_AK, EX_SK, &a1, &c1, NULL), OG_OK);
    assert_int_equal(og_sigv4_sign(&r2, EX_AK, EX_SK, &a2, NULL, NULL), OG_OK);
    assert_string_equal(og_buf_cstr(&a1), og_buf_cstr(&a2));
    assert_non_null(strstr(og_buf_cstr(&c1), "\nx-odd:a b\n"));
    assert_null(strstr(og_buf_cstr(&a1), EX_SK)); /* the secret never appears */
    og_buf_free(&a1);
    og_buf_free(&a2);
    og_buf_free(&c1);
}

static void bad_inputs_are_errors_not_crashes(void **state)
{
    (void)state;
    og_sigv4_header h[] = {{"host", "h"}};
    og_sigv4_request r = {"GET", "/", "", h, 1, "UNSIGNED-PAYLOAD", "2013-05-24", "us-east-1", "s3"};
    og_buf a = OG_BUF_INIT;
    assert_int_equal(og_sigv4_sign(&r, EX_AK, EX_SK, &a, NULL, NULL), OG_ERR_INVALID);
    r.amz_date = EX_DATE;
    r.nheaders = 0;
    assert_int_equal(og_sigv4_sign(&r, EX_AK, EX_SK, &a, NULL, NULL), OG_ERR_INVALID);
    assert_int_equal(og_sigv4_sign(NULL, EX_AK, EX_SK, &a, NULL, NULL), OG_ERR_INVALID);
    og_buf_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(signing_key_matches_the_general_sigv4_example),
        cmocka_unit_test(sha256_of_empty_and_known_bodies),
        cmocka_unit_test(get_object_with_range_matches_aws_example),
        cmocka_unit_test(put_object_matches_aws_example),
        cmocka_unit_test(get_bucket_lifecycle_matches_aws_example),
        cmocka_unit_test(list_objects_matches_aws_example),
        cmocka_unit_test(encoding_and_header_canonicalisation),
        cmocka_unit_test(bad_inputs_are_errors_not_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
