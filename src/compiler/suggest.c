/*
 * suggest.c — the nearest known name to a mistyped one (suggest.h).
 *
 * Damerau-Levenshtein over ASCII-folded bytes: `Persn` → `Person` (1 edit), `nmae` → `name`
 * (a swap, 1 edit), `person` → `Person` (case only).  The threshold — at most 2 edits, fewer
 * than half the word — keeps suggestions to typos: `x` is not "did you mean `id`?".
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compiler/suggest.h"

size_t og_suggest_distance(const char *a, const char *b)
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

const char *og_suggest_nearest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t bd = 99;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        if (!strcmp(word, cands[i])) return NULL;
        size_t d = og_suggest_distance(word, cands[i]);
        if (d < bd) bd = d, best = cands[i];
    }
    if (!best) return NULL;
    if (bd == 0) return best; /* the same name in another case */
    return bd <= 2 && bd * 2 < strlen(word) ? best : NULL;
}

/* The nearest name among n types (a stride walk: the catalog keeps types in arrays). */
static const char *nearest_type(const og_cat_type *v, size_t n, const char *word)
{
    const char *cands[256];
    const char *best = NULL;
    /* batches of 256 keep the stack small; the best of each batch competes in the next */
    for (size_t at = 0; at < n; at += 255) {
        size_t k = 0;
        if (best) cands[k++] = best;
        for (size_t i = at; i < n && i < at + 255; i++) cands[k++] = v[i].name;
        const char *b = og_suggest_nearest(word, cands, k);
        if (b) best = b;
    }
    return best;
}

const char *og_suggest_node(const og_catalog *cat, const char *word)
{
    return cat ? nearest_type(cat->nodes, cat->nnodes, word) : NULL;
}

const char *og_suggest_edge(const og_catalog *cat, const char *word)
{
    return cat ? nearest_type(cat->edges, cat->nedges, word) : NULL;
}

const char *og_suggest_prop(const og_cat_type *t, const char *word)
{
    if (!t) return NULL;
    const char *cands[256];
    const char *best = NULL;
    for (size_t at = 0; at < t->nprops; at += 255) {
        size_t k = 0;
        if (best) cands[k++] = best;
        for (size_t i = at; i < t->nprops && i < at + 255; i++) cands[k++] = t->props[i].name;
        const char *b = og_suggest_nearest(word, cands, k);
        if (b) best = b;
    }
    return best;
}

const char *og_suggest_hint(const char *best, char *buf, size_t cap)
{
    if (!best) {
        if (cap) buf[0] = 0;
    } else {
        snprintf(buf, cap, "; did you mean `%s`?", best);
    }
    return buf;
}
