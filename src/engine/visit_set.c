/*
 * visit_set.c — the traversal visited-set of visit_set.h: a linear-probing hash set of node
 * numbers that turns into a bitmap past 1/64 of the universe.
 */
#include "engine/visit_set.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define EMPTY UINT32_MAX
#define SMALL_CAP 1024                 /* first hash capacity: 4 KiB */
#define DENSE_UNIVERSE ((size_t)1 << 16) /* at or below: a bitmap from the start (8 KiB) */

void og_visit_set_init(og_visit_set *s) { memset(s, 0, sizeof *s); }

void og_visit_set_free(og_visit_set *s)
{
    free(s->slots);
    free(s->bits);
    memset(s, 0, sizeof *s);
}

static inline size_t slot_of(uint32_t node, size_t cap)
{
    return (size_t)(((uint64_t)node * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* Allocates (once per universe size) the bitmap; its pages are zero and stay zero between
 * traversals, since og_visit_set_end clears exactly the bits set. */
static og_status ensure_bits(og_visit_set *s)
{
    size_t words = (s->universe + 63) / 64;
    if (s->bits_words >= words) return OG_OK;
    uint64_t *b = calloc(words ? words : 1, sizeof *b);
    if (!b) return og_err(OG_ERR_NOMEM, "out of memory");
    free(s->bits); /* all zero: nothing to carry over */
    s->bits = b;
    s->bits_words = words;
    return OG_OK;
}

og_status og_visit_set_begin(og_visit_set *s, size_t universe)
{
    s->universe = universe;
    s->count = 0;
    s->dense = universe <= DENSE_UNIVERSE;
    if (s->dense) return ensure_bits(s);
    if (!s->slots) {
        s->slots = malloc(SMALL_CAP * sizeof *s->slots);
        if (!s->slots) return og_err(OG_ERR_NOMEM, "out of memory");
        memset(s->slots, 0xff, SMALL_CAP * sizeof *s->slots);
        s->cap = SMALL_CAP;
    }
    return OG_OK;
}

static int hash_insert(uint32_t *slots, size_t cap, uint32_t node)
{
    for (size_t i = slot_of(node, cap);; i = (i + 1) & (cap - 1)) {
        if (slots[i] == node) return 0;
        if (slots[i] == EMPTY) {
            slots[i] = node;
            return 1;
        }
    }
}

/* The hash set is full enough to double, or big enough to become the bitmap. */
static og_status grow(og_visit_set *s)
{
    if ((s->cap * 2) * sizeof(uint32_t) * 8 > s->universe) { /* its slots would outweigh a bitmap */
        OG_TRY(ensure_bits(s));
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i] != EMPTY) {
                s->bits[s->slots[i] >> 6] |= 1ull << (s->slots[i] & 63);
                s->slots[i] = EMPTY;
            }
        s->dense = 1;
        return OG_OK;
    }
    size_t ncap = s->cap * 2;
    uint32_t *n = malloc(ncap * sizeof *n);
    if (!n) return og_err(OG_ERR_NOMEM, "out of memory");
    memset(n, 0xff, ncap * sizeof *n);
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i] != EMPTY) hash_insert(n, ncap, s->slots[i]);
    free(s->slots);
    s->slots = n;
    s->cap = ncap;
    return OG_OK;
}

og_status og_visit_set_add(og_visit_set *s, uint32_t node, int *fresh)
{
    if (!s->dense && (s->count + 1) * 2 > s->cap) OG_TRY(grow(s));
    if (s->dense) {
        uint64_t m = 1ull << (node & 63), *w = &s->bits[node >> 6];
        *fresh = !(*w & m);
        *w |= m;
        return OG_OK;
    }
    *fresh = hash_insert(s->slots, s->cap, node);
    s->count += (size_t)*fresh;
    return OG_OK;
}

int og_visit_set_has(const og_visit_set *s, uint32_t node)
{
    if (s->dense) return (int)((s->bits[node >> 6] >> (node & 63)) & 1);
    for (size_t i = slot_of(node, s->cap);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i] == node) return 1;
        if (s->slots[i] == EMPTY) return 0;
    }
}

void og_visit_set_end(og_visit_set *s, const uint32_t *added, size_t n, uint32_t extra)
{
    if (s->dense) {
        for (size_t i = 0; i < n; i++) s->bits[added[i] >> 6] &= ~(1ull << (added[i] & 63));
        if (extra != EMPTY) s->bits[extra >> 6] &= ~(1ull << (extra & 63));
    } else if (s->count * 16 < s->cap) {
        /* Few entries in slots a big traversal grew: sweep each one's probe run from its home
         * slot to the next empty slot.  Every entry lies in the run of some listed node's home
         * (a run is never split by an empty slot while entries are only added), so the
         * sweeps together empty every slot they find filled. */
        for (size_t i = 0; i <= n; i++) {
            uint32_t x = i < n ? added[i] : extra;
            if (x == EMPTY) continue;
            for (size_t j = slot_of(x, s->cap); s->slots[j] != EMPTY; j = (j + 1) & (s->cap - 1)) s->slots[j] = EMPTY;
        }
    } else if (s->count) {
        memset(s->slots, 0xff, s->cap * sizeof *s->slots);
    }
    s->count = 0;
}
