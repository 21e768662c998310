/*
 * suggest.c — "did you mean" for a mistyped verb or flag.
 *
 * A newcomer who types `omnigraph qurey` or `--brnach` should be told the word they meant, not
 * only that theirs is unknown.  The nearest candidate by edit distance (Levenshtein, with a
 * swap of two neighbours counting as one edit) is offered when it is close enough to be a
 * typo: at most 2 edits, and fewer than half the word's length.
 */
#include <string.h>

#include "cli/cli.h"

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *og_cli_suggest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t bd = 99;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        size_t dd = edit_distance(word, cands[i]);
        if (dd < bd) {
            bd = dd;
            best = cands[i];
        }
    }
    size_t len = strlen(word);
    if (!best || bd == 0 || bd > 2 || bd * 2 >= len) return NULL;
    return best;
}
