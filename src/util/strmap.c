/*
 * strmap.c — the byte-string -> uint32 open-addressing hash map behind strmap.h.
 *
 * Three arrays: `slots` (the probe table), `entries` (hash, key location and value, in
 * insertion order) and `arena` (the key bytes).  Keys are located by offset, not pointer, so
 * the arena can be reallocated freely.  A slot is one word: the entry index + 1 in the low 32
 * bits and the high 32 bits of the key's hash as a tag, so a probe that passes another key's
 * slot almost never touches that key's entry (lookups in big maps are bound by cache misses,
 * and the slot's line is the only one a mismatch costs).  The home slot comes from the low
 * hash bits, the tag from the high ones.  Entries are 16 bytes and keep no hash: a resize
 * rehashes the keys (sequentially, in entry order).  Linear probing at load factor <= 1/2.
 */
#include "util/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/hugepage.h"

/* A multiply-xorshift hash over 8-byte words (seeded with the length so "a" and "a\0" differ).
 * Not cryptographic: the map's worst case is slower lookups, never a wrong answer. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    return x;
}

/* The last n (1-7) bytes ending at `end` as one word, by whole loads: a copy of n bytes into a
 * zeroed word compiled to a byte loop whose 8-byte reload stalled on store forwarding — a
 * third of this hash's time on the 9-byte keys of a bulk load.  `whole` (a full word ends at
 * end) lets the last 8 bytes be loaded at once, overlapping the word before. */
static inline uint64_t tail_word(const uint8_t *end, size_t n, int whole)
{
    uint64_t w;
    if (whole) {
        memcpy(&w, end - 8, 8);
        return w >> (8 * (8 - n)); /* the n bytes, low first, as the byte copy placed them */
    }
    if (n >= 4) { /* two 4-byte loads, overlapping for n < 8: every byte is in one of them */
        uint32_t a, b;
        memcpy(&a, end - n, 4);
        memcpy(&b, end - 4, 4);
        return (uint64_t)a | ((uint64_t)b << 32);
    }
    const uint8_t *p = end - n; /* 1-3 bytes: first, middle, last */
    return (uint64_t)p[0] | ((uint64_t)p[n / 2] << 8) | ((uint64_t)p[n - 1] << 16);
}

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)n * 0xc2b2ae3d27d4eb4fULL);
    int whole = n >= 8;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix64(h ^ w) + 0x165667b19e3779f9ULL;
        p += 8;
        n -= 8;
    }
    if (n) h = mix64(h ^ tail_word(p + n, n, whole) ^ ((uint64_t)n << 56));
    return mix64(h);
}

void og_strmap_init(og_strmap *m) { memset(m, 0, sizeof *m); }

void og_strmap_init_column(og_strmap *m, void *const *bytes, int64_t *const *offsets)
{
    memset(m, 0, sizeof *m);
    m->col_bytes = bytes;
    m->col_offsets = offsets;
}

/* The key of entry e (slot word low half - 1): its bytes and length. */
static inline const uint8_t *entry_key(const og_strmap *m, uint32_t e, size_t *len)
{
    if (m->col_bytes) {
        const int64_t *off = *m->col_offsets;
        *len = (size_t)(off[e + 1] - off[e]);
        return (const uint8_t *)*m->col_bytes + off[e];
    }
    *len = m->entries[e].key_len;
    return m->arena + m->entries[e].key_off;
}

/* The value of entry e. */
static inline uint32_t entry_value(const og_strmap *m, uint32_t e) { return m->col_bytes ? e : m->entries[e].value; }

void og_strmap_free(og_strmap *m)
{
    if (!m) return;
    free(m->slots);
    free(m->entries);
    free(m->arena);
    memset(m, 0, sizeof *m);
}

size_t og_strmap_count(const og_strmap *m) { return m->count; }

size_t og_strmap_bytes(const og_strmap *m)
{
    if (m->col_bytes) return m->nslots * sizeof *m->slots;
    return m->nslots * sizeof *m->slots + m->cap * sizeof *m->entries + m->arena_cap;
}

static uint64_t slot_word(uint64_t hash, size_t index)
{
    return (hash & 0xffffffff00000000ULL) | (uint64_t)(index + 1);
}

/* Keys a rehash hashes ahead of placing them: their home slots are prefetched first, so the
 * cache misses of a table bigger than the cache overlap (a load's 1M-key id map spent ~40 %
 * of its inserts' time in rehashes that waited for one miss at a time). */
#define REHASH_AHEAD 16

/* Rebuilds the probe table with `nslots` slots (a power of two >= 2 * count). */
static og_status rehash(og_strmap *m, size_t nslots)
{
    uint64_t *s = calloc(nslots, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "strmap: out of memory");
    /* probed at random: at 5M keys the slots are 128 MB, and a 5M-node load's read stage
     * took 10.4-10.7 s with huge pages behind them against 11.1-12.3 s without */
    og_huge_hint(s, nslots * sizeof *s);
    size_t mask = nslots - 1;
    uint64_t hs[REHASH_AHEAD];
    /* entries in insertion order; over a column, every row so far (a repeated key's later
     * rows are not in the map: found there, they are skipped) */
    size_t n_all = m->col_bytes ? m->cap : m->count;
    for (size_t i0 = 0; i0 < n_all; i0 += REHASH_AHEAD) {
        size_t n = n_all - i0 < REHASH_AHEAD ? n_all - i0 : REHASH_AHEAD;
        for (size_t j = 0; j < n; j++) {
            size_t len;
            const uint8_t *key = entry_key(m, (uint32_t)(i0 + j), &len);
            hs[j] = hash_bytes(key, len);
            __builtin_prefetch(&s[(size_t)hs[j] & mask], 1);
        }
        for (size_t j = 0; j < n; j++) {
            size_t k = (size_t)hs[j] & mask;
            int dup = 0;
            while (s[k] && !dup) {
                if (m->col_bytes && (s[k] & 0xffffffff00000000ULL) == (hs[j] & 0xffffffff00000000ULL)) {
                    size_t la, lb;
                    const uint8_t *a = entry_key(m, (uint32_t)(i0 + j), &la), *b = entry_key(m, (uint32_t)s[k] - 1, &lb);
                    dup = la == lb && !memcmp(a, b, la);
                }
                if (!dup) k = (k + 1) & mask;
            }
            if (!dup) s[k] = slot_word(hs[j], i0 + j);
        }
    }
    free(m->slots);
    m->slots = s;
    m->nslots = nslots;
    return OG_OK;
}

/* Slots needed for n keys at load factor <= 1/2 (over a column: <= 3/4). */
static size_t slots_for(const og_strmap *m, size_t n)
{
    size_t s = 16;
    while (m->col_bytes ? s / 4 * 3 < n : s < 2 * n) s <<= 1;
    return s;
}

/* Makes room for `more` arena bytes past the current end. */
static og_status arena_room(og_strmap *m, size_t more)
{
    if (more > SIZE_MAX - m->arena_len) return og_err(OG_ERR_LIMIT, "strmap: key arena overflow");
    size_t need = m->arena_len + more;
    if (need <= m->arena_cap) return OG_OK;
    size_t ncap = m->arena_cap ? m->arena_cap : 256;
    while (ncap < need) ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    uint8_t *a = realloc(m->arena, ncap);
    if (!a) return og_err(OG_ERR_NOMEM, "strmap: out of memory");
    m->arena = a;
    m->arena_cap = ncap;
    return OG_OK;
}

og_status og_strmap_reserve(og_strmap *m, size_t n, size_t key_bytes)
{
    if (n > OG_STRMAP_MAX_KEYS) return og_err(OG_ERR_LIMIT, "strmap: %zu keys is past the limit", n);
    if (n > m->cap && !m->col_bytes) {
        og_strmap_entry_ *e = realloc(m->entries, n * sizeof *e);
        if (!e) return og_err(OG_ERR_NOMEM, "strmap: out of memory");
        m->entries = e;
        m->cap = n;
    }
    if (!m->col_bytes && key_bytes > m->arena_cap - m->arena_len && key_bytes <= SIZE_MAX - m->arena_len) {
        uint8_t *a = realloc(m->arena, m->arena_len + key_bytes);
        if (!a) return og_err(OG_ERR_NOMEM, "strmap: out of memory");
        m->arena = a;
        m->arena_cap = m->arena_len + key_bytes;
    }
    size_t want = slots_for(m, n);
    if (want > m->nslots) OG_TRY(rehash(m, want));
    return OG_OK;
}

/* key bytes a == b, for the short keys ids are (8-30 bytes): word compares inline, where a
 * memcmp call was ~7 % of a bulk load's CPU. */
static inline int key_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t x, y;
    if (n >= 8) { /* whole words, then the last 8 bytes (overlapping the word before) */
        for (size_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y) return 0;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t p, q, r, t;
        memcpy(&p, a, 4), memcpy(&q, b, 4), memcpy(&r, a + n - 4, 4), memcpy(&t, b + n - 4, 4);
        return p == q && r == t;
    }
    for (; n; a++, b++, n--)
        if (*a != *b) return 0;
    return 1;
}

/* The slot holding key (hash h), or the empty slot where it would go. */
static size_t find_slot(const og_strmap *m, const uint8_t *key, size_t len, uint64_t h)
{
    size_t mask = m->nslots - 1;
    size_t k = (size_t)h & mask;
    uint64_t tag = h & 0xffffffff00000000ULL;
    for (;;) {
        uint64_t s = m->slots[k];
        if (!s) return k;
        if ((s & 0xffffffff00000000ULL) == tag) {
            size_t elen;
            const uint8_t *ek = entry_key(m, (uint32_t)s - 1, &elen);
            if (elen == len && key_eq(ek, key, len)) return k;
        }
        k = (k + 1) & mask;
    }
}

int og_strmap_get(const og_strmap *m, const void *key, size_t len, uint32_t *value)
{
    if (!m->count) return 0;
    uint64_t h = hash_bytes(key, len);
    uint64_t s = m->slots[find_slot(m, key, len, h)];
    if (!s) return 0;
    if (value) *value = entry_value(m, (uint32_t)s - 1);
    return 1;
}

/* Batched lookups overlap the three dependent cache misses of a probe (slot, entry, key
 * bytes) across keys: key i's slot is prefetched at step i, its entry once the slot word is
 * in cache (step i + GM_STAGE), its key bytes at step i + 2*GM_STAGE, and it is looked up at
 * step i + 3*GM_STAGE.  A small ring keeps each in-flight key's hash. */
#define GM_STAGE 8
#define GM_RING (4 * GM_STAGE) /* a power of two > 3*GM_STAGE */

void og_strmap_get_many(const og_strmap *m, const uint8_t *bytes, const int64_t *offsets, size_t n, uint32_t absent,
                        uint32_t *values)
{
    if (!m->count) {
        for (size_t i = 0; i < n; i++) values[i] = absent;
        return;
    }
    size_t mask = m->nslots - 1;
    uint64_t ring[GM_RING], found[GM_RING];
    for (size_t step = 0; step < n + 3 * GM_STAGE; step++) {
        if (step < n) {
            size_t i = step;
            uint64_t h = hash_bytes(bytes + offsets[i], (size_t)(offsets[i + 1] - offsets[i]));
            ring[i % GM_RING] = h;
            __builtin_prefetch(&m->slots[(size_t)h & mask]);
        }
        if (step >= GM_STAGE && step - GM_STAGE < n) {
            /* the first slot from home with the key's tag (its line is in cache now): past a
             * load factor of 1/2 the home slot is often another key's */
            uint64_t h = ring[(step - GM_STAGE) % GM_RING], tag = h & 0xffffffff00000000ULL, w;
            size_t k = (size_t)h & mask;
            while ((w = m->slots[k]) && (w & 0xffffffff00000000ULL) != tag) k = (k + 1) & mask;
            found[(step - GM_STAGE) % GM_RING] = w;
            if (w) __builtin_prefetch(m->col_bytes ? (const void *)&(*m->col_offsets)[(uint32_t)w - 1] : &m->entries[(uint32_t)w - 1]);
        }
        if (step >= 2 * GM_STAGE && step - 2 * GM_STAGE < n) {
            uint64_t w = found[(step - 2 * GM_STAGE) % GM_RING];
            size_t len;
            if (w) __builtin_prefetch(entry_key(m, (uint32_t)w - 1, &len));
        }
        if (step >= 3 * GM_STAGE) {
            size_t i = step - 3 * GM_STAGE;
            size_t len = (size_t)(offsets[i + 1] - offsets[i]);
            uint64_t w = m->slots[find_slot(m, bytes + offsets[i], len, ring[i % GM_RING])];
            values[i] = w ? entry_value(m, (uint32_t)w - 1) : absent;
        }
    }
}

/* og_strmap_insert of a new key over a column: `value` must be the next row (m->cap counts
 * the rows seen, inserted or repeated). */
static og_status insert_column_row(og_strmap *m, const void *key, size_t len, uint64_t h, size_t at, uint32_t value,
                                   uint32_t *stored, int *inserted)
{
    if (value != m->cap)
        return og_err(OG_ERR_INTERNAL, "strmap over a column: row %u inserted after row %zu", value, m->cap);
    if (value >= UINT32_MAX - 1) return og_err(OG_ERR_LIMIT, "strmap: row %u is past the limit", value);
    if ((m->count + 1) > m->nslots / 4 * 3) {
        m->cap++; /* (the rehash places this row too, with the rows before it) */
        og_status st = rehash(m, slots_for(m, m->count + 1));
        if (st != OG_OK) {
            m->cap--;
            return st;
        }
    } else {
        m->slots[at != SIZE_MAX ? at : find_slot(m, key, len, h)] = slot_word(h, value);
        m->cap++;
    }
    m->count++;
    if (stored) *stored = value;
    if (inserted) *inserted = 1;
    return OG_OK;
}

og_status og_strmap_insert(og_strmap *m, const void *key, size_t len, uint32_t value, uint32_t *stored,
                           int *inserted)
{
    uint64_t h = hash_bytes(key, len);
    size_t at = SIZE_MAX; /* the empty slot the key goes to, while no rehash moves it */
    if (m->count) {
        at = find_slot(m, key, len, h);
        uint64_t s = m->slots[at];
        if (s && m->col_bytes && value != m->cap)
            return og_err(OG_ERR_INTERNAL, "strmap over a column: row %u inserted after row %zu", value, m->cap);
        if (s) {
            if (stored) *stored = entry_value(m, (uint32_t)s - 1);
            if (inserted) *inserted = 0;
            if (m->col_bytes) m->cap++; /* the row is seen: a rehash finds its first row */
            return OG_OK;
        }
    }
    if (m->count >= OG_STRMAP_MAX_KEYS) return og_err(OG_ERR_LIMIT, "strmap: more than %zu keys", OG_STRMAP_MAX_KEYS);
    if (m->col_bytes) return insert_column_row(m, key, len, h, at, value, stored, inserted);
    /* Grow everything first, so a failure leaves the map as it was. */
    if (m->count == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 16;
        if (ncap > OG_STRMAP_MAX_KEYS) ncap = OG_STRMAP_MAX_KEYS;
        og_strmap_entry_ *e = realloc(m->entries, ncap * sizeof *e);
        if (!e) return og_err(OG_ERR_NOMEM, "strmap: out of memory");
        m->entries = e;
        m->cap = ncap;
    }
    if (len > UINT32_MAX - 1) return og_err(OG_ERR_LIMIT, "strmap: a key of %zu bytes is too long", len);
    OG_TRY(arena_room(m, len));
    if (2 * (m->count + 1) > m->nslots) {
        OG_TRY(rehash(m, slots_for(m, m->count + 1)));
        at = SIZE_MAX;
    }

    og_strmap_entry_ *e = &m->entries[m->count];
    e->key_off = m->arena_len;
    e->key_len = (uint32_t)len;
    e->value = value;
    if (len) memcpy(m->arena + m->arena_len, key, len);
    m->arena_len += len;
    m->slots[at != SIZE_MAX ? at : find_slot(m, key, len, h)] = slot_word(h, m->count);
    m->count++;
    if (stored) *stored = value;
    if (inserted) *inserted = 1;
    return OG_OK;
}

void og_strmap_entry(const og_strmap *m, size_t i, const uint8_t **key, size_t *len, uint32_t *value)
{
    const og_strmap_entry_ *e = &m->entries[i];
    if (key) *key = m->arena ? m->arena + e->key_off : (const uint8_t *)"";
    if (len) *len = e->key_len;
    if (value) *value = e->value;
}
