/*
 * typo.h — the typo rule behind every "did you mean" (typo.c): the compiler's unknown names
 * (compiler/suggest.h) and the CLI's unknown verbs and flags.
 */
#ifndef OG_UTIL_TYPO_H
#define OG_UTIL_TYPO_H

#include <stddef.h>

/* Edit distance of a and b (insert, delete, replace, swap of two neighbours: one edit each;
 * letters compared without case).  Words past 64 bytes are "far" (99). */
size_t og_typo_distance(const char *a, const char *b);

/* The candidate nearest to `word` when it is a likely typo — at most 2 edits and fewer than
 * half the word's length, or the same letters in another case — else NULL.  An exact match is
 * no suggestion (NULL).  Ties keep the first candidate. */
const char *og_typo_nearest(const char *word, const char *const *cands, size_t n);

#endif
