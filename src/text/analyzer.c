/*
 * analyzer.c — normalisation (utf8proc), word segmentation, stop words and Snowball stemming
 * (libstemmer).  See analyzer.h for the contract; docs/search.md for the user's view.
 *
 * Why our own segmentation instead of full UAX #29: the word rule "letters, digits and marks,
 * apostrophes between letters" is what the search functions need, is easy to state in the
 * docs, and gives the same terms on both sides of a match.
 */
#include "text/analyzer.h"

#include <libstemmer.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "util/error.h"
#include "util/strmap.h"
#include "util/utf8.h"

struct og_analyzer {
    struct sb_stemmer *stem; /* NULL when no_stem */
    int plain_codes;         /* words ending in a digit are their own stem (plain_code) */
    int no_stop;
    char *buf;               /* scratch: the cleaned input */
    size_t buf_cap;
    /* memo of folded word -> stem: text repeats its words, and stemming is the cost */
    og_strmap memo;          /* word -> index into memo_ent */
    struct { uint32_t off, len; uint8_t stop; } *memo_ent;
    size_t memo_n, memo_cap;
    char *memo_buf;
    size_t memo_len, memo_buf_cap;
};

#define MEMO_MAX 65536 /* words remembered before the memo starts over */

/* The built-in English stop list: function words that carry no topic.  Sorted (strcmp). */
static const char *const stop_words[] = {
    "a",     "an",    "and",   "are",  "as",    "at",    "be",   "been", "but",  "by",   "for",
    "from",  "had",   "has",   "have", "he",    "her",   "his",  "i",    "if",   "in",   "into",
    "is",    "it",    "its",   "no",   "not",   "of",    "on",   "or",   "she",  "so",   "such",
    "that",  "the",   "their", "then", "there", "these", "they", "this", "to",   "was",  "we",
    "were",  "which", "will",  "with", "you",
};

int og_text_is_stop_word(const char *w, size_t len)
{
    size_t lo = 0, hi = sizeof stop_words / sizeof stop_words[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *s = stop_words[mid];
        size_t sl = strlen(s);
        int c = memcmp(w, s, len < sl ? len : sl);
        if (c == 0) c = (len > sl) - (len < sl);
        if (c == 0) return 1;
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return 0;
}

og_status og_analyzer_new(og_analyzer **out, const og_analyzer_opts *opts)
{
    *out = NULL;
    og_analyzer *a = calloc(1, sizeof *a);
    if (!a) return og_err(OG_ERR_NOMEM, "out of memory");
    const char *lang = opts && opts->language ? opts->language : "english";
    a->no_stop = opts ? opts->no_stop : 0;
    if (!(opts && opts->no_stem)) {
        a->stem = sb_stemmer_new(lang, "UTF_8");
        if (!a->stem) {
            free(a);
            return og_err(OG_ERR_INVALID, "unknown stemmer language '%s'", lang);
        }
    }
    static const char *const plain[] = {"english", "en", "eng", "porter"};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) a->plain_codes |= !strcmp(lang, plain[i]);
    a->plain_codes |= !a->stem;
    *out = a;
    return OG_OK;
}

void og_analyzer_free(og_analyzer *a)
{
    if (!a) return;
    if (a->stem) sb_stemmer_delete(a->stem);
    og_strmap_free(&a->memo);
    free(a->memo_ent);
    free(a->memo_buf);
    free(a->buf);
    free(a);
}

void og_text_tokens_free(og_text_tokens *t)
{
    if (!t) return;
    free(t->v);
    free(t->terms);
    memset(t, 0, sizeof *t);
}

static og_status push_token(og_text_tokens *t, const char *term, size_t len, uint32_t pos, int stop)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 16;
        og_text_token *nv = realloc(t->v, nc * sizeof *nv);
        if (!nv) return og_err(OG_ERR_NOMEM, "out of memory");
        t->v = nv;
        t->cap = nc;
    }
    if (t->terms_len + len + 1 > (size_t)INT32_MAX) return og_err(OG_ERR_LIMIT, "text too large to analyze");
    if (t->terms_len + len + 1 > t->terms_cap) {
        size_t nc = t->terms_cap ? t->terms_cap * 2 : 256;
        while (nc < t->terms_len + len + 1) nc *= 2;
        char *nt = realloc(t->terms, nc);
        if (!nt) return og_err(OG_ERR_NOMEM, "out of memory");
        t->terms = nt;
        t->terms_cap = nc;
    }
    memcpy(t->terms + t->terms_len, term, len);
    t->terms[t->terms_len + len] = '\0';
    t->v[t->n++] = (og_text_token){(uint32_t)t->terms_len, (uint32_t)len, pos, (uint8_t)(stop != 0)};
    t->terms_len += len + 1;
    return OG_OK;
}

/* 1 for an ASCII word that ends in a digit and does not start with an apostrophe — an id, a
 * code, a year — when the analyzer's stemmer leaves such words as they are (a->plain_codes:
 * the English ones strip letter suffixes only; Dutch, Indonesian, Irish and Serbian do not
 * qualify, tests/text/test_analyzer.c checks each language).  Such a word skips the memo and the
 * stemmer: words like these are mostly unique, and a bulk load's keys filled the memo to no
 * use, most of the time of their text index. */
static int plain_code(const og_analyzer *a, const char *w, size_t wl)
{
    if (!a->plain_codes || !wl || w[0] == '\'' || (unsigned char)(w[wl - 1] - '0') > 9) return 0;
    for (size_t i = 0; i < wl; i++)
        if ((unsigned char)w[i] >= 0x80) return 0;
    return 1;
}

/* Ends the current word w[0..wl): stop flag, stem, emit; always takes one position. */
static og_status flush_word(og_analyzer *a, og_text_tokens *t, const char *w, size_t wl)
{
    uint32_t pos = t->nwords++;
    if (wl > OG_TEXT_MAX_WORD) return OG_OK;
    if (plain_code(a, w, wl)) /* its own stem: no memo, no stemmer */
        return push_token(t, w, wl, pos, !a->no_stop && og_text_is_stop_word(w, wl));
    uint32_t k;
    if (og_strmap_get(&a->memo, w, wl, &k))
        return push_token(t, a->memo_buf + a->memo_ent[k].off, a->memo_ent[k].len, pos, a->memo_ent[k].stop);
    int stop = !a->no_stop && og_text_is_stop_word(w, wl);
    const char *term = w;
    size_t tl = wl;
    if (a->stem) {
        const sb_symbol *s = sb_stemmer_stem(a->stem, (const sb_symbol *)w, (int)wl);
        if (!s) return og_err(OG_ERR_NOMEM, "out of memory");
        term = (const char *)s;
        tl = (size_t)sb_stemmer_length(a->stem);
    }
    /* remember it (a failure to remember only costs speed) */
    if (a->memo_n >= MEMO_MAX) {
        og_strmap_free(&a->memo);
        og_strmap_init(&a->memo);
        a->memo_n = a->memo_len = 0;
    }
    if (a->memo_n == a->memo_cap) {
        size_t nc = a->memo_cap ? a->memo_cap * 2 : 256;
        void *ne = realloc(a->memo_ent, nc * sizeof *a->memo_ent);
        if (ne) a->memo_ent = ne, a->memo_cap = nc;
    }
    if (a->memo_len + tl > a->memo_buf_cap) {
        size_t nc = a->memo_buf_cap ? a->memo_buf_cap * 2 : 4096;
        while (nc < a->memo_len + tl) nc *= 2;
        char *nb = realloc(a->memo_buf, nc);
        if (nb) a->memo_buf = nb, a->memo_buf_cap = nc;
    }
    if (a->memo_n < a->memo_cap && a->memo_len + tl <= a->memo_buf_cap &&
        og_strmap_insert(&a->memo, w, wl, (uint32_t)a->memo_n, NULL, NULL) == OG_OK) {
        memcpy(a->memo_buf + a->memo_len, term, tl);
        a->memo_ent[a->memo_n].off = (uint32_t)a->memo_len;
        a->memo_ent[a->memo_n].len = (uint32_t)tl;
        a->memo_ent[a->memo_n++].stop = (uint8_t)stop;
        a->memo_len += tl;
    }
    return push_token(t, term, tl, pos, stop);
}

static int ascii_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int ascii_alpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* All-ASCII text: NFKC and case folding are lower-casing, words are [A-Za-z0-9] runs (the
 * general path's rules restricted to ASCII), so utf8proc is skipped. */
static og_status analyze_ascii(og_analyzer *a, const unsigned char *s, size_t len, og_text_tokens *out)
{
    char w[OG_TEXT_MAX_WORD + 2];
    size_t wl = 0;
    og_status st = OG_OK;
    for (size_t i = 0; i <= len && st == OG_OK; i++) {
        unsigned char c = i < len ? s[i] : ' ';
        if (ascii_alnum(c)) {
            if (wl <= OG_TEXT_MAX_WORD) w[wl] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            wl++;
        } else if (c == '\'' && wl && ascii_alpha(s[i - 1]) && i + 1 < len && ascii_alpha(s[i + 1])) {
            if (wl <= OG_TEXT_MAX_WORD) w[wl] = '\'';
            wl++;
        } else if (wl) {
            st = flush_word(a, out, w, wl); /* a word past the limit is dropped there by its length */
            wl = 0;
        }
    }
    return st;
}

static int is_word_cp(utf8proc_int32_t cp)
{
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return 1;
    default: return 0;
    }
}

static int is_letter_cp(utf8proc_int32_t cp)
{
    utf8proc_category_t c = utf8proc_category(cp);
    return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}

/* Characters written without spaces between words: one word each. */
static int is_ideograph(utf8proc_int32_t cp)
{
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

og_status og_analyze(og_analyzer *a, const char *s, size_t len, og_text_tokens *out)
{
    out->n = 0;
    out->terms_len = 0;
    out->nwords = 0;
    if (len == 0) return OG_OK;
    if (len > (size_t)INT32_MAX / 4) return og_err(OG_ERR_LIMIT, "text of %zu bytes is too large to analyze", len);
    size_t hi = 0;
    for (size_t i = 0; i < len; i++) hi |= (unsigned char)s[i] & 0x80;
    if (!hi) return analyze_ascii(a, (const unsigned char *)s, len, out);
    /* 1. invalid UTF-8 and NUL become spaces, so utf8proc accepts the whole string */
    if (a->buf_cap < len) {
        char *nb = realloc(a->buf, len);
        if (!nb) return og_err(OG_ERR_NOMEM, "out of memory");
        a->buf = nb;
        a->buf_cap = len;
    }
    const unsigned char *in = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t l = in[i] ? og_utf8_seq_len(in + i, len - i) : 0;
        if (l == 0) {
            a->buf[i++] = ' ';
            continue;
        }
        memcpy(a->buf + i, in + i, l);
        i += l;
    }
    utf8proc_uint8_t *norm = NULL;
    utf8proc_ssize_t nl = utf8proc_map((const utf8proc_uint8_t *)a->buf, (utf8proc_ssize_t)len, &norm,
                                       UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD);
    if (nl < 0) {
        if (nl == UTF8PROC_ERROR_NOMEM) return og_err(OG_ERR_NOMEM, "out of memory");
        return og_err(OG_ERR_INTERNAL, "utf8proc: %s", utf8proc_errmsg(nl));
    }
    /* 2. words; the folded text is the word buffer (words never grow while we scan) */
    og_status st = OG_OK;
    char *w = malloc((size_t)nl + 1);
    if (!w) st = og_err(OG_ERR_NOMEM, "out of memory");
    size_t wl = 0;
    utf8proc_int32_t prev = 0;
    for (utf8proc_ssize_t i = 0; i < nl && st == OG_OK;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t l = utf8proc_iterate(norm + i, nl - i, &cp);
        if (l <= 0) { /* cannot happen after utf8proc_map; treat as a separator */
            l = 1;
            cp = ' ';
        }
        if (is_ideograph(cp)) {
            if (wl) st = flush_word(a, out, w, wl);
            wl = 0;
            if (st == OG_OK) st = flush_word(a, out, (const char *)norm + i, (size_t)l);
            prev = 0;
        } else if (is_word_cp(cp)) {
            memcpy(w + wl, norm + i, (size_t)l);
            wl += (size_t)l;
            prev = cp;
        } else if ((cp == '\'' || cp == 0x2019) && wl && is_letter_cp(prev) && i + l < nl) {
            utf8proc_int32_t next;
            utf8proc_ssize_t l2 = utf8proc_iterate(norm + i + l, nl - i - l, &next);
            if (l2 > 0 && is_letter_cp(next) && !is_ideograph(next)) {
                w[wl++] = '\'';
                prev = cp;
            } else {
                st = flush_word(a, out, w, wl);
                wl = 0;
            }
        } else {
            if (wl) st = flush_word(a, out, w, wl);
            wl = 0;
            prev = 0;
        }
        i += l;
    }
    if (st == OG_OK && wl) st = flush_word(a, out, w, wl);
    free(w);
    free(norm);
    return st;
}

static size_t decode(const char *s, size_t n, uint32_t *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (l <= 0) {
            cp = 0xFFFD;
            l = 1;
        }
        out[k++] = (uint32_t)cp;
        i += (size_t)l;
    }
    return k;
}

uint32_t og_text_edit_distance(const char *a, size_t alen, const char *b, size_t blen, uint32_t max)
{
    enum { CAP = OG_TEXT_MAX_WORD + 1 };
    if (alen >= CAP || blen >= CAP) /* not terms: only equality counts */
        return alen == blen && memcmp(a, b, alen) == 0 ? 0 : max + 1;
    uint32_t x[CAP], y[CAP], row[CAP + 1];
    size_t n = decode(a, alen, x, CAP), m = decode(b, blen, y, CAP);
    size_t diff = n > m ? n - m : m - n;
    if (diff > max) return max + 1;
    for (size_t j = 0; j <= m; j++) row[j] = (uint32_t)j;
    for (size_t i = 1; i <= n; i++) {
        uint32_t diag = row[0], best;
        row[0] = (uint32_t)i;
        best = row[0];
        for (size_t j = 1; j <= m; j++) {
            uint32_t up = row[j];
            uint32_t v = diag + (x[i - 1] != y[j - 1]);
            if (up + 1 < v) v = up + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best > max) return max + 1;
    }
    return row[m] > max ? max + 1 : row[m];
}
