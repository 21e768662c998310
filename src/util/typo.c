/*
 * typo.c — "did you mean": the nearest known word to a mistyped one (typo.h).
 *
 * Damerau-Levenshtein over ASCII-folded bytes: `Persn` → `Person` (1 edit), `nmae` → `name`
 * (a swap, 1 edit), `person` → `Person` (case only).  The threshold — at most 2 edits, fewer
 * than half the word — keeps suggestions to typos: `x` is not "did you mean `id`?".  One rule
 * for every surface: the compiler's unknown types and properties, the CLI's verbs and flags.
 */
#include <ctype.h>
#include <string.h>

#include "util/typo.h"

size_t og_typo_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int x = tolower((unsigned char)a[i - 1]), y = tolower((unsigned char)b[j - 1]);
            size_t v = d[i - 1][j - 1] + (x != y);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && x == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == y &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *og_typo_nearest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t bd = 99;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        if (!strcmp(word, cands[i])) return NULL;
        size_t d = og_typo_distance(word, cands[i]);
        if (d < bd) bd = d, best = cands[i];
    }
    if (!best) return NULL;
    if (bd == 0) return best; /* the same name in another case */
    return bd <= 2 && bd * 2 < strlen(word) ? best : NULL;
}
