/*
 * suggest.c — the nearest known name to a mistyped one among a catalog's types and properties,
 * or among a query's own variables and parameters (suggest.h); the typo rule itself is
 * util/typo.c, shared with the CLI's verbs and flags.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compiler/suggest.h"
#include "util/typo.h"

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
        const char *b = og_typo_nearest(word, cands, k);
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
        const char *b = og_typo_nearest(word, cands, k);
        if (b) best = b;
    }
    return best;
}

const char *og_suggest_edge_word(const char *name, char *buf, size_t cap)
{
    if (!cap) return buf;
    snprintf(buf, cap, "%s", name);
    int caps = 1;
    for (size_t i = 1; buf[i]; i++) caps &= !islower((unsigned char)buf[i]);
    for (size_t i = 0; buf[i] && (i == 0 || caps); i++) buf[i] = (char)tolower((unsigned char)buf[i]);
    return buf;
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

size_t og_suggest_names(const char *word, const char *const *names, size_t n, const char **out, size_t max)
{
    if (!max) return 0;
    const char *one = og_typo_nearest(word, names, n);
    if (one) {
        out[0] = one;
        return 1;
    }
    if (strlen(word) > 3) return 0;
    size_t k = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        if (!names[i] || og_typo_distance(word, names[i]) != 1) continue;
        int seen = 0;
        for (size_t j = 0; j < k; j++) seen |= !strcmp(out[j], names[i]);
        if (!seen) out[k++] = names[i];
    }
    return k;
}

const char *og_suggest_var_hint(const char *const *best, size_t n, char *buf, size_t cap)
{
    if (!cap) return buf;
    buf[0] = 0;
    if (!n) return buf;
    size_t l = (size_t)snprintf(buf, cap, "; did you mean ");
    for (size_t i = 0; i < n && l < cap; i++)
        l += (size_t)snprintf(buf + l, cap - l, "%s`$%s`", i == 0 ? "" : i + 1 == n ? " or " : ", ", best[i]);
    if (l < cap) snprintf(buf + l, cap - l, "?");
    return buf;
}
