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
#include <libstemmer.h>

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

/* The analyzer skips the stemmer for an ASCII word ending in a digit where its language's
 * stemmer leaves such words unchanged (plain_code in analyzer.c).  Checked on random words of
 * letters, digits and inner apostrophes, and on the shapes stemmers rewrite (y between vowels,
 * "'s", doubled letters, suffixes before the digit, prefixes like "di"): in English (and
 * Porter) the stemmer gives every such word back, and in every language the analyzer's term
 * is what the stemmer gives, fast path or not. */
static void words_ending_in_a_digit_analyze_as_their_stem_in_every_language(void **state)
{
    (void)state;
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789'yyiu";
    static const char *const shaped[] = {"ayay1", "running1", "dogs'1", "x's2", "ies3", "ational4", "a1",  "1",
                                         "yes9",  "uiyu0",    "ing2",   "lyly7", "dimakan1", "guu7", "d'a1"};
    size_t nshaped = sizeof shaped / sizeof *shaped;
    uint64_t seed = 7;
    char w[40];
    size_t checked = 0;
    for (const char **lang = sb_stemmer_list(); *lang; lang++) {
        struct sb_stemmer *st = sb_stemmer_new(*lang, "UTF_8");
        if (!st) continue;
        int english = !strcmp(*lang, "english") || !strcmp(*lang, "porter");
        og_analyzer *a;
        og_analyzer_opts o = {*lang, 0, 1};
        assert_int_equal(og_analyzer_new(&a, &o), OG_OK);
        for (size_t round = 0; round < 2000 + nshaped; round++) {
            size_t len;
            if (round < nshaped) {
                len = strlen(shaped[round]);
                memcpy(w, shaped[round], len);
            } else {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                len = 1 + (seed >> 33) % 24;
                for (size_t k = 0; k < len; k++) {
                    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                    w[k] = alphabet[(seed >> 33) % (sizeof alphabet - 1)];
                }
                if (w[0] == '\'') w[0] = 'q';
                w[len - 1] = (char)('0' + (seed >> 40) % 10);
            }
            const sb_symbol *out = sb_stemmer_stem(st, (const sb_symbol *)w, (int)len);
            assert_non_null(out);
            size_t sl = (size_t)sb_stemmer_length(st);
            if (english && (sl != len || memcmp(out, w, len) != 0))
                fail_msg("%s stems '%.*s' to '%.*s'", *lang, (int)len, w, (int)sl, (const char *)out);
            if (!memchr(w, '\'', len) && w[0] != '\'') { /* apostrophes split or join words */
                char stem[64];
                memcpy(stem, out, sl);
                stem[sl] = '\0';
                og_text_tokens t = OG_TEXT_TOKENS_INIT;
                assert_int_equal(og_analyze(a, w, len, &t), OG_OK);
                assert_int_equal(t.n, 1);
                if (strcmp(og_text_term(&t, 0), stem) != 0)
                    fail_msg("%s analyzes '%.*s' to '%s', its stemmer to '%s'", *lang, (int)len, w, og_text_term(&t, 0), stem);
                og_text_tokens_free(&t);
                checked++;
            }
        }
        og_analyzer_free(a);
        sb_stemmer_delete(st);
    }
    assert_true(checked > 2000);
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
        cmocka_unit_test(words_ending_in_a_digit_analyze_as_their_stem_in_every_language),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
