/*
 * analyzer.h — the text analyzer: the ONE function that turns a string into search terms,
 * shared by every text search function (search, fuzzy, match_text, bm25) on both sides — the
 * stored text and the query string — and by any future full-text index, so a term can only
 * ever match a term produced the same way (docs/search.md "The analyzer").
 *
 * Pipeline, in order:
 *   1. Unicode normalisation NFKC and full case folding (utf8proc).  Invalid UTF-8 bytes act
 *      as word separators.
 *   2. Word segmentation: a word is a maximal run of letters, digits and combining marks
 *      (Unicode categories L*, N*, M*); an apostrophe (' or U+2019) between two letters stays
 *      inside the word ("don't").  Each Han / Hiragana / Katakana character is a word of its
 *      own.  Everything else separates words.
 *   3. Stop words: a word of the built-in English stop list is flagged `stop` (still emitted,
 *      with its position, so phrase matching can require it; term matching skips it).
 *   4. Stemming with the Snowball stemmer of the analyzer's language (libstemmer; English by
 *      default).  Stop words are stemmed too.
 *   Words longer than OG_TEXT_MAX_WORD bytes (after folding) are dropped, keeping their
 *   position.
 *
 * Positions count words (0, 1, 2, ...), stop words and dropped words included.
 *
 * An analyzer holds a Snowball stemmer, which is not thread-safe: use one analyzer per thread.
 */
#ifndef OG_TEXT_ANALYZER_H
#define OG_TEXT_ANALYZER_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

#define OG_TEXT_MAX_WORD 255

typedef struct og_analyzer og_analyzer;

typedef struct og_analyzer_opts {
    const char *language; /* a libstemmer algorithm name ("english", "german", ...); NULL = english */
    int no_stem;          /* 1: keep folded words unstemmed */
    int no_stop;          /* 1: flag no word as a stop word */
} og_analyzer_opts;

/* opts NULL = the defaults (English stemming, English stop words).  The stop list is English;
 * with another language it is still applied unless no_stop.  OG_ERR_INVALID for a language
 * libstemmer does not know, OG_ERR_NOMEM. */
og_status og_analyzer_new(og_analyzer **out, const og_analyzer_opts *opts);
void og_analyzer_free(og_analyzer *a);

typedef struct og_text_token {
    uint32_t term;   /* byte offset of the term in og_text_tokens.terms (NUL-terminated there) */
    uint32_t len;    /* the term's length in bytes */
    uint32_t pos;    /* word position */
    uint8_t stop;    /* a stop word */
} og_text_token;

typedef struct og_text_tokens {
    og_text_token *v;
    size_t n, cap;
    char *terms;           /* the terms, each followed by NUL */
    size_t terms_len, terms_cap;
    uint32_t nwords;       /* positions used (words seen, including stop and dropped words) */
} og_text_tokens;

#define OG_TEXT_TOKENS_INIT {NULL, 0, 0, NULL, 0, 0, 0}

/* Analyzes s[0..len) into out (its previous contents are replaced; its buffers reused).
 * OG_ERR_NOMEM, OG_ERR_LIMIT (more than 2^31 bytes of terms). */
og_status og_analyze(og_analyzer *a, const char *s, size_t len, og_text_tokens *out);

static inline const char *og_text_term(const og_text_tokens *t, size_t i) { return t->terms + t->v[i].term; }

void og_text_tokens_free(og_text_tokens *t);

/* 1 when the case-folded word w[0..len) is on the built-in English stop list. */
int og_text_is_stop_word(const char *w, size_t len);

/* Levenshtein distance between two UTF-8 strings counted in code points, or max + 1 when it
 * exceeds max (the computation stops early).  Invalid bytes count as one code point each.
 * Meant for terms: a string of more than OG_TEXT_MAX_WORD bytes is at distance 0 from an equal
 * string and max + 1 from any other. */
uint32_t og_text_edit_distance(const char *a, size_t alen, const char *b, size_t blen, uint32_t max);

#endif
