/*
 * test_utf8.c — util/utf8.h: every scalar value U+0000..U+10FFFF (surrogates excluded)
 * encodes to the sequence og_utf8_seq_len accepts with exactly that length, and the bytes
 * decode back to it; overlong forms, surrogates, code points past U+10FFFF, stray
 * continuation bytes and truncated sequences are rejected; og_utf8_valid walks a whole
 * buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/utf8.h"

static uint32_t decode(const unsigned char *s, size_t k)
{
    static const unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t cp = s[0] & lead_mask[k];
    for (size_t i = 1; i < k; i++) cp = cp << 6 | (s[i] & 0x3F);
    return cp;
}

static void every_scalar_value_round_trips(void **state)
{
    (void)state;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        unsigned char u[4];
        size_t k = og_utf8_encode(cp, u);
        size_t want = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (k != want) fail_msg("U+%04X: encoded in %zu bytes, want %zu", cp, k, want);
        if (og_utf8_seq_len(u, k) != k) fail_msg("U+%04X: its encoding is rejected", cp);
        if (k > 1 && og_utf8_seq_len(u, k - 1) != 0) fail_msg("U+%04X: a truncated encoding is accepted", cp);
        if (decode(u, k) != cp) fail_msg("U+%04X: decodes to U+%04X", cp, decode(u, k));
    }
}

static void invalid_sequences_are_rejected(void **state)
{
    (void)state;
    static const struct { const char *s; size_t n; } bad[] = {
        {"\xC0\x80", 2},         /* overlong NUL */
        {"\xC1\xBF", 2},         /* overlong U+007F */
        {"\xE0\x9F\xBF", 3},     /* overlong U+07FF */
        {"\xF0\x8F\xBF\xBF", 4}, /* overlong U+FFFF */
        {"\xED\xA0\x80", 3},     /* U+D800 */
        {"\xED\xBF\xBF", 3},     /* U+DFFF */
        {"\xF4\x90\x80\x80", 4}, /* U+110000 */
        {"\xF5\x80\x80\x80", 4}, /* lead byte past F4 */
        {"\x80", 1},             /* a continuation byte alone */
        {"\xE2\x82", 2},         /* truncated */
        {"\xE2\x28\xA1", 3},     /* a non-continuation second byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (og_utf8_seq_len((const unsigned char *)bad[i].s, bad[i].n) != 0) fail_msg("case %zu accepted", i);
        assert_false(og_utf8_valid((const unsigned char *)bad[i].s, bad[i].n));
    }
}

static void valid_walks_a_whole_buffer(void **state)
{
    (void)state;
    const char *ok = "plain, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80";
    assert_true(og_utf8_valid((const unsigned char *)ok, strlen(ok)));
    assert_true(og_utf8_valid((const unsigned char *)"", 0));
    /* the last sequence cut short */
    assert_false(og_utf8_valid((const unsigned char *)ok, strlen(ok) - 1));
    /* one bad byte in the middle */
    const char *mid = "ab\xFF" "cd";
    assert_false(og_utf8_valid((const unsigned char *)mid, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_scalar_value_round_trips),
        cmocka_unit_test(invalid_sequences_are_rejected),
        cmocka_unit_test(valid_walks_a_whole_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
