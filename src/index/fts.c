/*
 * fts.c — the per-data-file inverted index (fts.h): encode, open, look up, iterate.
 *
 * Why this shape: the encoder analyses every document once, collects (term, doc, position)
 * triples in document order and groups them by term with one stable counting sort, so each
 * term's postings come out ascending by document and position without per-term allocations.
 * Document and position streams are separate so BM25 and term matches never touch positions.
 * Varint deltas keep the file about the size of the text; the reader walks the mapping
 * directly (no decompression step), which a whole-file zstd frame would forbid.
 */
#include "index/fts.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/catalog.h"
#include "index/index.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/strmap.h"

#define FTS_MAGIC "OGFTSIDX"
#define FTS_TRAILER "OGFTEND"
#define FTS_HEADER 96
#define FTS_ENTRY 40

struct og_fts {
    const uint8_t *base;
    size_t len;
    uint64_t rows, nterms, blob_len, docs_len, pos_len;
    const uint8_t *lens, *dict, *blob, *docs, *pos;
    void *own;
    og_mapping *mapping;
};

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* ---- encoding ------------------------------------------------------------------------------ */

typedef struct tok3 {
    uint32_t id, doc, pos;
} tok3;

static og_status put_varint(og_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    return og_buf_append(b, tmp, n);
}

typedef struct term_ref {
    const uint8_t *key; /* term bytes followed by the stop byte */
    size_t len;         /* term length (without the stop byte) */
    uint32_t id;
} term_ref;

static int term_cmp3(const uint8_t *a, size_t al, int as, const uint8_t *b, size_t bl, int bs)
{
    size_t m = al < bl ? al : bl;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    if (al != bl) return al < bl ? -1 : 1;
    return (as > bs) - (as < bs);
}

static int term_ref_cmp(const void *pa, const void *pb)
{
    const term_ref *a = pa, *b = pb;
    return term_cmp3(a->key, a->len, a->key[a->len], b->key, b->len, b->key[b->len]);
}

og_status og_fts_encode(og_analyzer *an, size_t ndocs, og_fts_doc_fn docfn, void *ud, og_buf *out)
{
    if (ndocs >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "fts: %zu rows in one data file", ndocs);
    og_status st = OG_OK;
    og_text_tokens toks = OG_TEXT_TOKENS_INIT;
    og_strmap vocab;
    og_strmap_init(&vocab);
    uint32_t *lens = malloc((ndocs ? ndocs : 1) * sizeof *lens);
    tok3 *tk = NULL, *sorted = NULL;
    size_t ntk = 0, captk = 0;
    uint32_t *cnt = NULL, *df = NULL, *last = NULL;
    size_t capid = 0;
    term_ref *refs = NULL;
    og_buf docs = OG_BUF_INIT, pos = OG_BUF_INIT;
    uint64_t nonnull = 0, total = 0;
    if (!lens) st = og_err(OG_ERR_NOMEM, "fts: out of memory");
    uint8_t key[OG_TEXT_MAX_WORD + 2];
    for (size_t i = 0; i < ndocs && st == OG_OK; i++) {
        const char *p;
        size_t len;
        if (!docfn(ud, i, &p, &len)) {
            lens[i] = OG_FTS_NULL_LEN;
            continue;
        }
        nonnull++;
        lens[i] = 0;
        st = og_analyze(an, p, len, &toks);
        for (size_t k = 0; k < toks.n && st == OG_OK; k++) {
            const og_text_token *t = &toks.v[k];
            size_t tl = t->len > OG_TEXT_MAX_WORD ? OG_TEXT_MAX_WORD : t->len;
            memcpy(key, og_text_term(&toks, k), tl);
            key[tl] = t->stop ? 1 : 0;
            uint32_t id;
            int ins;
            st = og_strmap_insert(&vocab, key, tl + 1, (uint32_t)og_strmap_count(&vocab), &id, &ins);
            if (st) break;
            if (id >= capid) {
                size_t nc = capid ? capid * 2 : 4096;
                uint32_t *a = realloc(cnt, nc * sizeof *a);
                if (a) cnt = a;
                uint32_t *b = a ? realloc(df, nc * sizeof *b) : NULL;
                if (b) df = b;
                uint32_t *c = b ? realloc(last, nc * sizeof *c) : NULL;
                if (c) last = c;
                if (!c) {
                    st = og_err(OG_ERR_NOMEM, "fts: out of memory");
                    break;
                }
                memset(cnt + capid, 0, (nc - capid) * sizeof *cnt);
                memset(df + capid, 0, (nc - capid) * sizeof *df);
                memset(last + capid, 0, (nc - capid) * sizeof *last);
                capid = nc;
            }
            if (ntk == captk) {
                if (captk >= (size_t)UINT32_MAX) {
                    st = og_err(OG_ERR_LIMIT, "fts: more than 2^32 terms in one data file");
                    break;
                }
                size_t nc = captk ? captk * 2 : 65536;
                tok3 *n = realloc(tk, nc * sizeof *n);
                if (!n) {
                    st = og_err(OG_ERR_NOMEM, "fts: out of memory");
                    break;
                }
                tk = n;
                captk = nc;
            }
            tk[ntk++] = (tok3){id, (uint32_t)i, t->pos};
            cnt[id]++;
            if (last[id] != i + 1) {
                last[id] = (uint32_t)(i + 1);
                df[id]++;
            }
            if (!t->stop) lens[i]++;
        }
        total += lens[i];
    }
    size_t nterms = og_strmap_count(&vocab);
    /* group by term id, stable (documents and positions stay ascending) */
    if (st == OG_OK) {
        sorted = malloc((ntk ? ntk : 1) * sizeof *sorted);
        refs = malloc((nterms ? nterms : 1) * sizeof *refs);
        if (!sorted || !refs) st = og_err(OG_ERR_NOMEM, "fts: out of memory");
    }
    if (st == OG_OK) {
        uint32_t acc = 0;
        for (size_t id = 0; id < nterms; id++) {
            uint32_t c = cnt[id];
            cnt[id] = acc; /* now: where term id's tokens start */
            acc += c;
        }
        for (size_t k = 0; k < ntk; k++) sorted[cnt[tk[k].id]++] = tk[k];
        /* cnt[id] is now the end of term id's tokens */
        for (size_t v = 0; v < nterms; v++) {
            const uint8_t *kb;
            size_t kl;
            uint32_t id;
            og_strmap_entry(&vocab, v, &kb, &kl, &id);
            refs[v] = (term_ref){kb, kl - 1, id};
        }
        qsort(refs, nterms, sizeof *refs, term_ref_cmp);
    }
    free(tk);
    tk = NULL;
    /* header, lengths, dict, blob, then the streams */
    size_t at = out->len;
    uint64_t blob_len = 0;
    for (size_t v = 0; st == OG_OK && v < nterms; v++) blob_len += refs[v].len;
    if (st == OG_OK) st = og_buf_append_zeros(out, FTS_HEADER + pad8(ndocs * 4) + nterms * FTS_ENTRY + pad8(blob_len));
    if (st == OG_OK) {
        uint8_t *base = out->data + at;
        memcpy(base + FTS_HEADER, lens, ndocs * 4);
        uint8_t *dict = base + FTS_HEADER + pad8(ndocs * 4);
        uint8_t *blob = dict + nterms * FTS_ENTRY;
        uint32_t boff = 0;
        for (size_t v = 0; v < nterms && st == OG_OK; v++) {
            uint32_t id = refs[v].id;
            uint32_t s = id ? cnt[id - 1] : 0, e = cnt[id];
            /* cnt was turned into ends in id order, so term id's tokens are [end(id-1), end(id)) */
            uint64_t doff = docs.len, poff = pos.len;
            int64_t prev = -1;
            for (uint32_t k = s; k < e && st == OG_OK;) {
                uint32_t d = sorted[k].doc, j = k;
                while (j < e && sorted[j].doc == d) j++;
                st = put_varint(&docs, (uint64_t)((int64_t)d - prev));
                if (st == OG_OK) st = put_varint(&docs, j - k);
                uint32_t pp = 0;
                for (uint32_t q = k; q < j && st == OG_OK; q++) {
                    st = put_varint(&pos, sorted[q].pos - pp);
                    pp = sorted[q].pos;
                }
                prev = d;
                k = j;
            }
            if (st) break;
            if (docs.len - doff > UINT32_MAX || pos.len - poff > UINT32_MAX) {
                st = og_err(OG_ERR_LIMIT, "fts: a term's postings exceed 4 GiB");
                break;
            }
            uint8_t *en = dict + v * FTS_ENTRY;
            uint32_t u32;
            memcpy(en, &doff, 8);
            memcpy(en + 8, &poff, 8);
            u32 = (uint32_t)(docs.len - doff), memcpy(en + 16, &u32, 4);
            u32 = (uint32_t)(pos.len - poff), memcpy(en + 20, &u32, 4);
            memcpy(en + 24, &boff, 4);
            memcpy(en + 28, &df[id], 4);
            uint16_t tl = (uint16_t)refs[v].len;
            memcpy(en + 32, &tl, 2);
            en[34] = refs[v].key[refs[v].len];
            memcpy(blob + boff, refs[v].key, refs[v].len);
            boff += (uint32_t)refs[v].len;
        }
    }
    if (st == OG_OK) {
        uint8_t h[FTS_HEADER];
        memset(h, 0, sizeof h);
        memcpy(h, FTS_MAGIC, 8);
        uint32_t u32 = OG_FTS_FORMAT;
        memcpy(h + 8, &u32, 4);
        u32 = OG_FTS_ANALYZER, memcpy(h + 12, &u32, 4);
        uint64_t v64[7] = {ndocs, nterms, blob_len, docs.len, pos.len, nonnull, total};
        memcpy(h + 16, v64, sizeof v64);
        memcpy(out->data + at, h, FTS_HEADER);
        st = og_buf_append(out, docs.data, docs.len);
        if (st == OG_OK) st = og_buf_pad_to(out, 8);
        if (st == OG_OK) st = og_buf_append(out, pos.data, pos.len);
        if (st == OG_OK) st = og_buf_pad_to(out, 8);
        if (st == OG_OK) st = og_buf_append(out, FTS_TRAILER, 8);
    }
    if (st) out->len = at;
    og_buf_free(&docs);
    og_buf_free(&pos);
    free(sorted);
    free(refs);
    free(cnt);
    free(df);
    free(last);
    free(lens);
    og_strmap_free(&vocab);
    og_text_tokens_free(&toks);
    return st;
}

static int vector_doc(void *ud, size_t i, const char **p, size_t *len)
{
    const og_vector *v = ud;
    if (og_vector_is_null(v, i)) return 0;
    *p = (const char *)og_vector_get_bytes(v, i, len);
    return 1;
}

og_status og_fts_encode_vector(og_analyzer *an, const og_vector *texts, og_buf *out)
{
    if (texts->type.id != OG_T_STRING) return og_err(OG_ERR_INVALID, "fts: the column is not a String");
    return og_fts_encode(an, texts->len, vector_doc, (void *)texts, out);
}

/* ---- reading ------------------------------------------------------------------------------- */

og_status og_fts_open_bytes(og_fts **out, const uint8_t *p, size_t len, void *own, og_mapping *mapping)
{
    *out = NULL;
    if (len < FTS_HEADER + 8 || memcmp(p, FTS_MAGIC, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "fts: not a full-text index (%zu bytes)", len);
    if (og_load_u32le(p + 8) != OG_FTS_FORMAT || og_load_u32le(p + 12) != OG_FTS_ANALYZER)
        return og_err(OG_ERR_CORRUPT, "fts: format %u analyzer %u is not this build's", og_load_u32le(p + 8), og_load_u32le(p + 12));
    uint64_t rows = og_load_u64le(p + 16), nterms = og_load_u64le(p + 24), blob = og_load_u64le(p + 32), dl = og_load_u64le(p + 40), pl = og_load_u64le(p + 48);
    /* every size is bounded by the file's before any arithmetic on them */
    if (rows >= UINT32_MAX || og_load_u64le(p + 56) > rows || nterms > len / FTS_ENTRY || blob > len || dl > len || pl > len ||
        (uint64_t)FTS_HEADER + pad8(rows * 4) + nterms * FTS_ENTRY + pad8(blob) + pad8(dl) + pad8(pl) + 8 != len ||
        memcmp(p + len - 8, FTS_TRAILER, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "fts: sizes in the header do not match the file (%zu bytes)", len);
    og_fts *f = calloc(1, sizeof *f);
    if (!f) return og_err(OG_ERR_NOMEM, "fts: out of memory");
    f->base = p;
    f->len = len;
    f->rows = rows;
    f->nterms = nterms;
    f->blob_len = blob;
    f->docs_len = dl;
    f->pos_len = pl;
    f->lens = p + FTS_HEADER;
    f->dict = f->lens + pad8(rows * 4);
    f->blob = f->dict + nterms * FTS_ENTRY;
    f->docs = f->blob + pad8(blob);
    f->pos = f->docs + pad8(dl);
    f->own = own;
    f->mapping = mapping;
    *out = f;
    return OG_OK;
}

void og_fts_free(og_fts *f)
{
    if (!f) return;
    if (f->mapping) og_mapping_release(f->mapping);
    free(f->own);
    free(f);
}

uint64_t og_fts_rows(const og_fts *f) { return f->rows; }
uint64_t og_fts_nonnull(const og_fts *f) { return og_load_u64le(f->base + 56); }
uint64_t og_fts_total_len(const og_fts *f) { return og_load_u64le(f->base + 64); }
size_t og_fts_terms(const og_fts *f) { return (size_t)f->nterms; }
uint32_t og_fts_doc_len(const og_fts *f, size_t i) { return i < f->rows ? og_load_u32le(f->lens + i * 4) : OG_FTS_NULL_LEN; }

/* Entry i's term, clamped to the blob (a damaged offset yields a short or empty term). */
static void entry_term(const og_fts *f, size_t i, const uint8_t **t, size_t *len, int *stop)
{
    const uint8_t *en = f->dict + i * FTS_ENTRY;
    uint64_t off = og_load_u32le(en + 24), tl = (uint16_t)(en[32] | en[33] << 8);
    if (off > f->blob_len) off = f->blob_len;
    if (tl > f->blob_len - off) tl = f->blob_len - off;
    *t = f->blob + off;
    *len = (size_t)tl;
    *stop = en[34] != 0;
}

long og_fts_find(const og_fts *f, const char *term, size_t len, int stop)
{
    size_t lo = 0, hi = (size_t)f->nterms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint8_t *t;
        size_t tl;
        int ts;
        entry_term(f, mid, &t, &tl, &ts);
        int c = term_cmp3(t, tl, ts, (const uint8_t *)term, len, stop != 0);
        if (c == 0) return (long)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

void og_fts_term(const og_fts *f, size_t i, const char **term, size_t *len, int *stop, uint32_t *df)
{
    const uint8_t *t;
    entry_term(f, i, &t, len, stop);
    *term = (const char *)t;
    if (df) *df = og_load_u32le(f->dict + i * FTS_ENTRY + 28);
}

void og_fts_iter_init(og_fts_iter *it, const og_fts *f, size_t i, int want_pos)
{
    memset(it, 0, sizeof *it);
    const uint8_t *en = f->dict + i * FTS_ENTRY;
    uint64_t doff = og_load_u64le(en), poff = og_load_u64le(en + 8), dlen = og_load_u32le(en + 16), plen = og_load_u32le(en + 20);
    it->rows = f->rows;
    it->left = og_load_u32le(en + 28);
    it->last = -1;
    it->want_pos = want_pos;
    if (doff > f->docs_len || dlen > f->docs_len - doff || poff > f->pos_len || plen > f->pos_len - poff) {
        /* out of bounds: an empty range makes the first next() report the damage */
        it->d = it->de = f->docs;
        it->p = it->pe = f->pos;
        if (!it->left) it->left = 1;
        return;
    }
    it->d = f->docs + doff;
    it->de = it->d + dlen;
    it->p = f->pos + poff;
    it->pe = it->p + plen;
}

static int rdv(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
    uint64_t x = 0;
    for (int sh = 0; *p < e && sh < 64; sh += 7) {
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

int og_fts_iter_next(og_fts_iter *it)
{
    if (!it->left) return 0;
    uint64_t dd, tf;
    if (!rdv(&it->d, it->de, &dd) || !rdv(&it->d, it->de, &tf)) goto bad;
    int64_t doc = it->last + (int64_t)dd;
    if ((dd == 0 && it->last >= 0) || dd > it->rows || doc >= (int64_t)it->rows || tf == 0 || tf > UINT32_MAX)
        goto bad;
    it->last = doc;
    it->doc = (uint32_t)doc;
    it->tf = (uint32_t)tf;
    it->left--;
    if (it->want_pos) {
        if (tf > it->pos_cap) {
            if (tf > (uint64_t)(it->pe - it->p)) goto bad; /* each position takes a byte at least */
            uint32_t *n = realloc(it->pos, tf * sizeof *n);
            if (!n) {
                og_err(OG_ERR_NOMEM, "fts: out of memory");
                return -(int)OG_ERR_NOMEM;
            }
            it->pos = n;
            it->pos_cap = tf;
        }
        uint64_t p = 0;
        for (uint64_t k = 0; k < tf; k++) {
            uint64_t d;
            if (!rdv(&it->p, it->pe, &d) || (k && d == 0) || p + d > UINT32_MAX) goto bad;
            p += d;
            it->pos[k] = (uint32_t)p;
        }
    }
    return 1;
bad:
    og_err(OG_ERR_CORRUPT, "fts: damaged postings");
    it->left = 0;
    return -(int)OG_ERR_CORRUPT;
}

void og_fts_iter_free(og_fts_iter *it)
{
    free(it->pos);
    it->pos = NULL;
    it->pos_cap = 0;
}

/* ---- the index kind -------------------------------------------------------------------------- */

static int fts_applies(og_type type, int intent)
{
    return type.id == OG_T_STRING && intent == OG_INDEX_INVERTED;
}

static og_status fts_build(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field_id, og_buf *out)
{
    og_vector col;
    og_status st = og_index_read_column(t, m, f, field_id, "fts", &col);
    if (st != OG_OK) return st;
    og_analyzer *an = NULL;
    st = og_analyzer_new(&an, NULL);
    if (st == OG_OK) st = og_fts_encode_vector(an, &col, out);
    og_analyzer_free(an);
    og_vector_free(&col);
    return st;
}

static og_status fts_check(const uint8_t *p, size_t len, uint64_t rows)
{
    og_fts *f;
    OG_TRY(og_fts_open_bytes(&f, p, len, NULL, NULL));
    uint64_t r = f->rows;
    og_fts_free(f);
    if (r != rows) return og_err(OG_ERR_CORRUPT, "fts: the file has %llu rows, the data file %llu",
                                 (unsigned long long)r, (unsigned long long)rows);
    return OG_OK;
}

const og_index_def og_index_def_fts = {"fts", OG_FTS_FORMAT, fts_applies, fts_build, fts_check};
