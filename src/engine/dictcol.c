/*
 * dictcol.c — dictionary-coded String columns.  See dictcol.h.
 *
 * Building: each row's string is hashed (strings of at most 8 bytes by one word and their
 * length, longer ones over all their bytes) into an open-addressing table of the values met
 * so far, codes given in first-appearance order; codes start 1 byte wide and are widened once
 * past 256 values.  finish() sorts the values and renumbers the codes in one pass.
 *
 * Two parts (og_dictcol_begin_part): the second builder codes the rows past the split into
 * the first one's array with its own table of values; neither moves or frees that array
 * while both write it (past 256 values a side widens into an array of its own).  The join
 * adds the part's values to the first builder's table — first appearance order, as if its
 * rows had been appended after the first side's — and renumbers the part's codes: in place
 * when the union still fits a byte, else into one new 2-byte array (as a one-sided widen).
 */
#include "engine/dictcol.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/hash.h"

struct og_dictcol_builder {
    og_dictcol *d;
    size_t cap;           /* rows the codes array holds */
    size_t nvals;         /* distinct values so far */
    uint64_t *word;       /* per value: its first min(len, 8) bytes, zero-padded */
    uint32_t *vlen;       /* per value: its length */
    uint64_t *hash;       /* per value */
    size_t valcap;
    uint32_t *slots;      /* value + 1; 0 = empty */
    size_t nslots;
    /* Parallel building (og_dictcol_begin_part): while `external`, d->codes is not this
     * builder's to move or free (another builder writes beside it in the same array); past
     * 256 values the builder widens into an array of its own instead.  `shared` is that array
     * in the first builder, freed by og_dictcol_join (or og_dictcol_builder_free). */
    int external;
    void *shared;
    int no_widen;         /* og_dictcol_join adds values without widening (it widens itself) */
};

static inline uint64_t first_word(const uint8_t *p, size_t len)
{
    uint64_t w = 0;
    memcpy(&w, p, len < 8 ? len : 8);
    return w;
}

void og_dictcol_free(og_dictcol *d)
{
    if (!d) return;
    free(d->validity);
    free(d->codes);
    if (d->dict.type.id == OG_T_STRING) og_vector_free(&d->dict);
    free(d);
}

void og_dictcol_builder_free(og_dictcol_builder *b)
{
    if (!b) return;
    if (b->d && (b->external || b->d->codes == b->shared)) b->d->codes = NULL;
    free(b->shared);
    og_dictcol_free(b->d);
    free(b->word);
    free(b->vlen);
    free(b->hash);
    free(b->slots);
    free(b);
}

size_t og_dictcol_bytes(const og_dictcol *d)
{
    if (!d) return 0;
    size_t n = sizeof *d + d->len * d->width + (d->validity ? (d->len + 7) / 8 : 0);
    n += (d->dict.len + 1) * sizeof(int64_t) + (d->dict.len ? (size_t)d->dict.offsets[d->dict.len] : 0);
    return n;
}

og_status og_dictcol_begin(og_dictcol_builder **out, size_t rows)
{
    *out = NULL;
    og_dictcol_builder *b = calloc(1, sizeof *b);
    og_dictcol *d = b ? calloc(1, sizeof *d) : NULL;
    if (!d) {
        free(b);
        return og_err(OG_ERR_NOMEM, "out of memory coding a column");
    }
    b->d = d;
    d->width = 1;
    og_status st = og_vector_init(&d->dict, (og_type){OG_T_STRING, 0, 0});
    b->cap = rows ? rows : 16;
    d->codes = st == OG_OK ? malloc(b->cap) : NULL;
    b->nslots = 64;
    b->slots = calloc(b->nslots, sizeof *b->slots);
    if (st == OG_OK && (!d->codes || !b->slots)) st = og_err(OG_ERR_NOMEM, "out of memory coding a column");
    if (st) {
        og_dictcol_builder_free(b);
        return st;
    }
    *out = b;
    return OG_OK;
}

static og_status rehash(og_dictcol_builder *b)
{
    size_t ns = b->nslots * 2;
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory coding a column");
    for (size_t v = 0; v < b->nvals; v++) {
        size_t p = b->hash[v] & (ns - 1);
        while (s[p]) p = (p + 1) & (ns - 1);
        s[p] = (uint32_t)v + 1;
    }
    free(b->slots);
    b->slots = s;
    b->nslots = ns;
    return OG_OK;
}

static inline uint64_t hash_of(const uint8_t *p, size_t len, uint64_t w)
{
    if (len > 8) return og_hash_bytes(p, len);
    uint64_t h = (w ^ ((uint64_t)len << 56)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* The code of p[0..len) (w: its first word), added when new. */
static og_status code_of(og_dictcol_builder *b, const uint8_t *p, size_t len, uint64_t w, uint32_t *code)
{
    uint64_t h = hash_of(p, len, w);
    const og_vector *dv = &b->d->dict;
    size_t s = h & (b->nslots - 1);
    for (;;) {
        uint32_t e = b->slots[s];
        if (!e) break;
        uint32_t v = e - 1;
        if (b->word[v] == w && b->vlen[v] == len &&
            (len <= 8 || (b->hash[v] == h && memcmp((const uint8_t *)dv->values + dv->offsets[v], p, len) == 0))) {
            *code = v;
            return OG_OK;
        }
        s = (s + 1) & (b->nslots - 1);
    }
    if (b->nvals == OG_DICTCOL_MAX)
        return og_err(OG_ERR_LIMIT, "more than %d distinct values: not coded", OG_DICTCOL_MAX);
    if (b->nvals == b->valcap) {
        size_t nc = b->valcap ? b->valcap * 2 : 64;
        uint64_t *nw = realloc(b->word, nc * sizeof *nw);
        if (nw) b->word = nw;
        uint64_t *nh = nw ? realloc(b->hash, nc * sizeof *nh) : NULL;
        if (nh) b->hash = nh;
        uint32_t *nl = nh ? realloc(b->vlen, nc * sizeof *nl) : NULL;
        if (!nl) return og_err(OG_ERR_NOMEM, "out of memory coding a column");
        b->vlen = nl;
        b->valcap = nc;
    }
    OG_TRY(og_vector_append_bytes(&b->d->dict, p, len));
    b->word[b->nvals] = w;
    b->vlen[b->nvals] = (uint32_t)len;
    b->hash[b->nvals] = h;
    b->slots[s] = (uint32_t)b->nvals + 1;
    *code = (uint32_t)b->nvals++;
    if (b->nvals * 2 > b->nslots) OG_TRY(rehash(b));
    if (b->nvals == 257 && b->d->width == 1 && !b->no_widen) { /* widen the codes so far to 2 bytes */
        og_dictcol *d = b->d;
        uint16_t *c2 = malloc(b->cap * sizeof *c2);
        if (!c2) return og_err(OG_ERR_NOMEM, "out of memory coding a column");
        for (size_t i = 0; i < d->len; i++) c2[i] = ((const uint8_t *)d->codes)[i];
        if (!b->external) free(d->codes);
        d->codes = c2;
        d->width = 2;
        b->external = 0; /* (a part's codes move into an array of its own) */
    }
    return OG_OK;
}

og_status og_dictcol_append(og_dictcol_builder *b, const og_vector *src)
{
    og_dictcol *d = b->d;
    if (src->type.id != OG_T_STRING) return og_err(OG_ERR_INTERNAL, "only a String column is coded");
    size_t n = src->len;
    if (n > b->cap - d->len && (b->external || b->shared))
        return og_err(OG_ERR_INTERNAL, "coding a column: a part got more rows than it holds");
    if (n > b->cap - d->len) {
        size_t nc = b->cap * 2 > d->len + n ? b->cap * 2 : d->len + n;
        void *q = realloc(d->codes, nc * d->width);
        if (!q) return og_err(OG_ERR_NOMEM, "out of memory coding a column");
        d->codes = q;
        if (d->validity) {
            uint8_t *vq = realloc(d->validity, (nc + 7) / 8);
            if (!vq) return og_err(OG_ERR_NOMEM, "out of memory coding a column");
            memset(vq + (b->cap + 7) / 8, 0xff, (nc + 7) / 8 - (b->cap + 7) / 8);
            d->validity = vq;
        }
        b->cap = nc;
    }
    if (src->null_count && !d->validity) {
        d->validity = malloc((b->cap + 7) / 8);
        if (!d->validity) return og_err(OG_ERR_NOMEM, "out of memory coding a column");
        memset(d->validity, 0xff, (b->cap + 7) / 8);
    }
    const uint8_t *bytes = src->values;
    const int64_t *off = src->offsets;
    const uint8_t *end = bytes ? bytes + off[n] : NULL; /* (no bytes at all: every row null or empty) */
    int nullable = src->validity && src->null_count;
    uint8_t *c1 = d->width == 1 ? d->codes : NULL;
    /* The table and the row count in locals: a store through the 1-byte code pointer may alias
     * anything, so fields read through b and d would be reloaded every row (a coded column of
     * 5M rows spent ~4 ns a row here). */
    const uint32_t *slots = b->slots;
    const uint64_t *word = b->word;
    const uint32_t *vlen = b->vlen;
    size_t mask = b->nslots - 1, r = d->len;
    for (size_t i = 0; i < n; i++, r++) {
        uint32_t code = 0;
        if (nullable && og_vector_is_null(src, i)) {
            d->validity[r >> 3] &= (uint8_t)~(1u << (r & 7));
            d->null_count++;
        } else {
            size_t len = (size_t)(off[i + 1] - off[i]);
            const uint8_t *p = len ? bytes + off[i] : (const uint8_t *)"";
            uint64_t w;
            if (!len) {
                w = 0;
            } else if (len >= 8 || p + 8 <= end) { /* one unaligned load, masked to the string */
                memcpy(&w, p, 8);
                if (len < 8) w &= (1ull << (8 * len)) - 1;
            } else {
                w = first_word(p, len);
            }
            /* the common case: a value already met, found by its first probe */
            uint64_t h = hash_of(p, len, w);
            uint32_t e = slots[h & mask];
            if (e && word[e - 1] == w && vlen[e - 1] == len && len <= 8) {
                code = e - 1;
            } else {
                d->len = r; /* (a widening copies the codes so far) */
                OG_TRY(code_of(b, p, len, w, &code));
                c1 = d->width == 1 ? d->codes : NULL; /* (it may have widened them) */
                slots = b->slots, word = b->word, vlen = b->vlen, mask = b->nslots - 1;
            }
        }
        if (c1) c1[r] = (uint8_t)code;
        else ((uint16_t *)d->codes)[r] = (uint16_t)code;
    }
    d->len = r;
    return OG_OK;
}

og_status og_dictcol_begin_part(og_dictcol_builder **out, og_dictcol_builder *b, size_t at)
{
    *out = NULL;
    og_dictcol *d = b->d;
    if (b->external || b->shared || d->width != 1 || d->len || at == 0 || at >= b->cap)
        return og_err(OG_ERR_INTERNAL, "coding a column: a part must split a fresh column");
    og_dictcol_builder *p;
    OG_TRY(og_dictcol_begin(&p, 1));
    free(p->d->codes);
    p->d->codes = (uint8_t *)d->codes + at;
    p->cap = b->cap - at;
    p->external = 1;
    b->shared = d->codes;
    b->external = 1;
    b->cap = at;
    *out = p;
    return OG_OK;
}

/* Code i of builder b (its own numbering). */
static inline uint32_t raw_code(const og_dictcol_builder *b, size_t i)
{
    return b->d->width == 1 ? ((const uint8_t *)b->d->codes)[i] : ((const uint16_t *)b->d->codes)[i];
}

og_status og_dictcol_join(og_dictcol_builder *b, og_dictcol_builder *p)
{
    og_dictcol *d = b->d, *pd = p->d;
    og_status st = OG_OK;
    size_t at = b->cap, total = at + p->cap;
    if (!b->shared || d->len != at || pd->len != p->cap)
        st = og_err(OG_ERR_INTERNAL, "coding a column: a part ended short of its rows");
    /* the part's values in the first builder's numbering (added there when new) */
    uint32_t *remap = st == OG_OK ? malloc((p->nvals ? p->nvals : 1) * sizeof *remap) : NULL;
    if (st == OG_OK && !remap) st = og_err(OG_ERR_NOMEM, "out of memory coding a column");
    b->no_widen = 1;
    for (size_t v = 0; st == OG_OK && v < p->nvals; v++) {
        size_t len;
        const uint8_t *q = og_vector_get_bytes(&pd->dict, v, &len);
        st = code_of(b, len ? q : (const uint8_t *)"", len, p->word[v], &remap[v]);
    }
    b->no_widen = 0;
    if (st == OG_OK && b->nvals <= 256 && d->width == 1 && pd->width == 1 && b->external && p->external) {
        /* both still code in the shared array, 1 byte wide: renumber the part's rows in place */
        uint8_t *c = (uint8_t *)b->shared + at;
        for (size_t i = 0; i < pd->len; i++) c[i] = (uint8_t)remap[c[i]];
    } else if (st == OG_OK) {
        unsigned w = b->nvals <= 256 ? 1 : 2;
        void *nc = malloc(total * w);
        if (!nc) st = og_err(OG_ERR_NOMEM, "out of memory coding a column");
        for (size_t i = 0; st == OG_OK && i < total; i++) {
            uint32_t code = i < at ? raw_code(b, i) : remap[raw_code(p, i - at)];
            if (w == 1) ((uint8_t *)nc)[i] = (uint8_t)code;
            else ((uint16_t *)nc)[i] = (uint16_t)code;
        }
        if (st == OG_OK) {
            if (!b->external) free(d->codes);
            if (!p->external) free(pd->codes);
            pd->codes = NULL;
            p->external = 0;
            free(b->shared);
            b->shared = nc; /* (becomes d->codes below) */
            d->codes = nc;
            d->width = w;
        }
    }
    if (st == OG_OK && (d->validity || pd->validity)) { /* nulls: one bitmap over both parts */
        uint8_t *vb = realloc(d->validity, (total + 7) / 8);
        if (!vb) st = og_err(OG_ERR_NOMEM, "out of memory coding a column");
        else {
            if (!d->validity) memset(vb, 0xff, (total + 7) / 8);
            d->validity = vb;
            for (size_t i = 0; i < pd->len; i++) {
                size_t r = at + i;
                if (og_dictcol_is_null(pd, i)) vb[r >> 3] &= (uint8_t)~(1u << (r & 7));
                else vb[r >> 3] |= (uint8_t)(1u << (r & 7));
            }
        }
    }
    free(remap);
    if (st == OG_OK) {
        d->codes = b->shared;
        b->shared = NULL;
        b->external = 0;
        d->len = total;
        d->null_count += pd->null_count;
        b->cap = total;
    }
    og_dictcol_builder_free(p);
    return st;
}

og_status og_dictcol_finish(og_dictcol_builder *b, og_dictcol **out)
{
    *out = NULL;
    og_dictcol *d = b->d;
    size_t nv = b->nvals;
    uint32_t *ord = malloc((nv ? nv : 1) * sizeof *ord), *remap = malloc((nv ? nv : 1) * sizeof *remap);
    og_vector sorted;
    og_status st = ord && remap ? og_vector_init(&sorted, (og_type){OG_T_STRING, 0, 0})
                                : og_err(OG_ERR_NOMEM, "out of memory coding a column");
    int inited = st == OG_OK;
    if (st == OG_OK) {
        for (size_t v = 0; v < nv; v++) ord[v] = (uint32_t)v;
        /* a bottom-up merge sort (qsort's comparator could not see the values without a
         * global, and two views may finish columns at once) */
        uint32_t *tmp = malloc((nv ? nv : 1) * sizeof *tmp);
        if (!tmp) st = og_err(OG_ERR_NOMEM, "out of memory coding a column");
        for (size_t w = 1; st == OG_OK && w < nv; w *= 2) {
            for (size_t lo = 0; lo < nv; lo += 2 * w) {
                size_t mid = lo + w < nv ? lo + w : nv, hi = lo + 2 * w < nv ? lo + 2 * w : nv;
                size_t i = lo, j = mid, k = lo;
                while (i < mid && j < hi)
                    tmp[k++] = og_vector_row_cmp(&d->dict, ord[j], &d->dict, ord[i]) < 0 ? ord[j++] : ord[i++];
                while (i < mid) tmp[k++] = ord[i++];
                while (j < hi) tmp[k++] = ord[j++];
            }
            memcpy(ord, tmp, nv * sizeof *ord);
        }
        free(tmp);
    }
    for (size_t v = 0; v < nv && st == OG_OK; v++) {
        size_t len;
        const uint8_t *p = og_vector_get_bytes(&d->dict, ord[v], &len);
        st = og_vector_append_bytes(&sorted, p, len);
        remap[ord[v]] = (uint32_t)v;
    }
    if (st == OG_OK) {
        if (d->width == 1) {
            uint8_t *c = d->codes;
            for (size_t i = 0; i < d->len; i++) c[i] = (uint8_t)remap[c[i]];
        } else {
            uint16_t *c = d->codes;
            for (size_t i = 0; i < d->len; i++) c[i] = (uint16_t)remap[c[i]];
        }
        og_vector_free(&d->dict);
        d->dict = sorted;
        inited = 0;
        if (d->len < b->cap) { /* give back what the row estimate over-reserved */
            void *q = realloc(d->codes, (d->len ? d->len : 1) * d->width);
            if (q) d->codes = q;
        }
        b->d = NULL;
        *out = d;
    }
    if (inited) og_vector_free(&sorted);
    free(ord);
    free(remap);
    og_dictcol_builder_free(b);
    return st;
}

og_status og_dictcol_from_vector(const og_vector *src, og_dictcol **out)
{
    og_dictcol_builder *b;
    OG_TRY(og_dictcol_begin(&b, src->len));
    og_status st = og_dictcol_append(b, src);
    if (st) {
        og_dictcol_builder_free(b);
        return st;
    }
    return og_dictcol_finish(b, out);
}

og_status og_dictcol_gather(og_vector *out, const og_dictcol *d, const uint32_t *idx, size_t n)
{
    OG_TRY(og_vector_init(out, (og_type){OG_T_STRING, 0, 0}));
    og_status st = OG_OK;
    const int64_t *doff = d->dict.offsets;
    const uint8_t *dbytes = d->dict.values;
    for (size_t k = 0; k < n && st == OG_OK; k++) {
        size_t r = idx ? idx[k] : k;
        if (r == UINT32_MAX || og_dictcol_is_null(d, r)) {
            st = og_vector_append_null(out);
            continue;
        }
        uint32_t c = og_dictcol_code(d, r);
        st = og_vector_append_bytes(out, dbytes + doff[c], (size_t)(doff[c + 1] - doff[c]));
    }
    if (st) og_vector_free(out);
    return st;
}

og_status og_dictcol_gather_codes(og_vector *out, const og_dictcol *d, const uint32_t *idx, size_t n)
{
    OG_TRY(og_vector_init(out, (og_type){OG_T_U32, 0, 0}));
    og_status st = OG_OK;
    for (size_t k = 0; k < n && st == OG_OK; k++) {
        size_t r = idx ? idx[k] : k;
        if (r == UINT32_MAX || og_dictcol_is_null(d, r)) st = og_vector_append_null(out);
        else st = og_vector_append_u64(out, og_dictcol_code(d, r));
    }
    if (st) og_vector_free(out);
    return st;
}

/* The first code whose value is >= k (strict = 0) or > k (strict = 1). */
static int64_t bound(const og_dictcol *d, const uint8_t *k, size_t klen, int strict)
{
    size_t lo = 0, hi = d->dict.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, len;
        const uint8_t *p = og_vector_get_bytes(&d->dict, mid, &len);
        size_t m = len < klen ? len : klen;
        int c = m ? memcmp(p, k, m) : 0;
        if (!c) c = (len > klen) - (len < klen);
        if (c < 0 || (strict && c == 0)) lo = mid + 1;
        else hi = mid;
    }
    return (int64_t)lo;
}

void og_dictcol_range(const og_dictcol *d, og_cmp_op op, const uint8_t *k, size_t klen, int64_t *lo, int64_t *hi)
{
    int64_t ge = bound(d, k, klen, 0), gt = bound(d, k, klen, 1), last = (int64_t)d->dict.len - 1;
    switch (op) {
    case OG_CMP_LT: *lo = 0, *hi = ge - 1; break;
    case OG_CMP_LE: *lo = 0, *hi = gt - 1; break;
    case OG_CMP_GT: *lo = gt, *hi = last; break;
    case OG_CMP_GE: *lo = ge, *hi = last; break;
    default: *lo = ge, *hi = gt - 1; break; /* EQ, and NE's complement */
    }
}
