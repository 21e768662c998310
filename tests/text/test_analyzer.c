/*
 * test_analyzer.c — text/analyzer.h: normalisation and case folding, word segmentation,
 * stop-word flags, Snowball stemming, positions, invalid UTF-8, options, edit distance.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "text/analyzer.h"

/* "term@pos" (with a trailing "*" for stop words), space separated. */
static void render(const og_text_tokens *t, char *out, size_t cap)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < t->n && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%s@%u%s", i ? " " : "", og_text_term(t, i), t->v[i].pos,
                              t->v[i].stop ? "*" : "");
}

static void check(og_analyzer *a, const char *in, const char *want)
{
    og_text_tokens t = OG_TEXT_TOKENS_INIT;
    assert_int_equal(og_analyze(a, in, strlen(in), &t), OG_OK);
    char got[1024];
    render(&t, got, sizeof got);
    if (strcmp(got, want) != 0) fail_msg("analyze(\"%s\"): got \"%s\", want \"%s\"", in, got, want);
    og_text_tokens_free(&t);
}

static void english_defaults(void **state)
{
    (void)state;
    og_analyzer *a;
    assert_int_equal(og_analyzer_new(&a, NULL), OG_OK);
    check(a, "The Running dogs", "the@0* run@1 dog@2");
    check(a, "state-of-the-art,  databases!", "state@0 of@1* the@2* art@3 databas@4");
    check(a, "", "");
    check(a, "  ...  ", "");
    /* case folding and NFKC: full-width letters, the fi ligature, German sharp s */
    check(a, "ＡＢＣ ﬁsh STRASSE straße", "abc@0 fish@1 strass@2 strass@3");
    /* accents are kept (folded, composed) */
    check(a, "Café CAFÉ", "café@0 café@1");
    /* digits are words; apostrophes between letters stay inside */
    check(a, "Top 10 in 2024: don't stop; people's 'quoted'", "top@0 10@1 in@2* 2024@3 don't@4 stop@5 peopl@6 quot@7");
    /* ideographs are one word each */
    check(a, "数据库 db", "数@0 据@1 库@2 db@3");
    og_analyzer_free(a);
}

static void invalid_utf8_separates_words(void **state)
{
    (void)state;
    og_analyzer *a;
    assert_int_equal(og_analyzer_new(&a, NULL), OG_OK);
    og_text_tokens t = OG_TEXT_TOKENS_INIT;
    const char in[] = "graph\xff\xfenodes\0edges";
    assert_int_equal(og_analyze(a, in, sizeof in - 1, &t), OG_OK);
    char got[256];
    render(&t, got, sizeof got);
    assert_string_equal(got, "graph@0 node@1 edg@2");
    og_text_tokens_free(&t);
    og_analyzer_free(a);
}

static void long_words_are_dropped_but_keep_a_position(void **state)
{
    (void)state;
    og_analyzer *a;
    assert_int_equal(og_analyzer_new(&a, NULL), OG_OK);
    char in[600];
    memset(in, 'x', sizeof in);
    memcpy(in, "alpha ", 6);
    memcpy(in + sizeof in - 5, " beta", 5);
    og_text_tokens t = OG_TEXT_TOKENS_INIT;
    assert_int_equal(og_analyze(a, in, sizeof in, &t), OG_OK);
    char got[256];
    render(&t, got, sizeof got);
    assert_string_equal(got, "alpha@0 beta@2");
    assert_int_equal(t.nwords, 3);
    og_text_tokens_free(&t);
    og_analyzer_free(a);
}

static void options(void **state)
{
    (void)state;
    og_analyzer *a;
    og_analyzer_opts o = {NULL, 1, 1};
    assert_int_equal(og_analyzer_new(&a, &o), OG_OK);
    check(a, "The Running dogs", "the@0 running@1 dogs@2");
    og_analyzer_free(a);
    og_analyzer_opts g = {"german", 0, 1};
    assert_int_equal(og_analyzer_new(&a, &g), OG_OK);
    check(a, "Häuser", "haus@0");
    og_analyzer_free(a);
    og_analyzer_opts bad = {"klingon", 0, 0};
    assert_int_equal(og_analyzer_new(&a, &bad), OG_ERR_INVALID);
    assert_null(a);
}

static void stop_list(void **state)
{
    (void)state;
    assert_true(og_text_is_stop_word("the", 3));
    assert_true(og_text_is_stop_word("a", 1));
    assert_true(og_text_is_stop_word("you", 3));
    assert_false(og_text_is_stop_word("th", 2));
    assert_false(og_text_is_stop_word("graph", 5));
    assert_false(og_text_is_stop_word("", 0));
}

static void edit_distance(void **state)
{
    (void)state;
    assert_int_equal(og_text_edit_distance("kitten", 6, "sitting", 7, 5), 3);
    assert_int_equal(og_text_edit_distance("kitten", 6, "sitting", 7, 2), 3); /* capped: max + 1 */
    assert_int_equal(og_text_edit_distance("graph", 5, "graph", 5, 0), 0);
    assert_int_equal(og_text_edit_distance("graph", 5, "grap", 4, 0), 1);
    assert_int_equal(og_text_edit_distance("", 0, "abc", 3, 3), 3);
    /* code points, not bytes: é vs e is one edit */
    assert_int_equal(og_text_edit_distance("café", 5, "cafe", 4, 2), 1);
    /* swapping two letters is two edits (Levenshtein, not Damerau) */
    assert_int_equal(og_text_edit_distance("ab", 2, "ba", 2, 2), 2);
}

/* The all-ASCII fast path and the utf8proc path give the same terms: s alone (ASCII) vs s
 * followed by a non-ASCII word (the general path), on random ASCII strings. */
static void ascii_path_equals_general_path(void **state)
{
    (void)state;
    og_analyzer *a;
    assert_int_equal(og_analyzer_new(&a, NULL), OG_OK);
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 '',.-!?\t\n_";
    uint64_t seed = 99;
    char s[700];
    og_text_tokens x = OG_TEXT_TOKENS_INIT, y = OG_TEXT_TOKENS_INIT;
    for (int round = 0; round < 3000; round++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t len = (seed >> 33) % 80, k = 0;
        if (round % 100 == 0) len = 600; /* long words too */
        for (; k < len; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t r = (seed >> 33) % (sizeof alphabet - 1);
            s[k] = round % 100 == 0 ? 'x' : alphabet[r];
        }
        memcpy(s + k, " \xc3\xa9", 3);
        assert_int_equal(og_analyze(a, s, len, &x), OG_OK);
        assert_int_equal(og_analyze(a, s, len + 3, &y), OG_OK);
        assert_int_equal(y.n, x.n + 1);
        assert_int_equal(y.nwords, x.nwords + 1);
        for (size_t i = 0; i < x.n; i++) {
            if (strcmp(og_text_term(&x, i), og_text_term(&y, i)) || x.v[i].pos != y.v[i].pos || x.v[i].stop != y.v[i].stop)
                fail_msg("'%.*s': token %zu differs: %s vs %s", (int)len, s, i, og_text_term(&x, i), og_text_term(&y, i));
        }
    }
    og_text_tokens_free(&x);
    og_text_tokens_free(&y);
    og_analyzer_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(english_defaults),
        cmocka_unit_test(invalid_utf8_separates_words),
        cmocka_unit_test(long_words_are_dropped_but_keep_a_position),
        cmocka_unit_test(options),
        cmocka_unit_test(stop_list),
        cmocka_unit_test(edit_distance),
        cmocka_unit_test(ascii_path_equals_general_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
