/*
 * keymap.c — the per-data-file key -> row map (keymap.h): build, encode, open, probe.
 *
 * Why a bucket directory instead of a probed hash table: the file is built once by a counting
 * sort (stable, so offsets stay ascending inside a bucket), and a lookup is two dependent reads
 * (bucket start, then a short run of 16-byte entries) plus the key compare — a cold process
 * touches three pages of the mapping per fragment.
 */
#include "index/keymap.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/wordcache.h"

#define KM_MAGIC "OGKEYMAP"
#define KM_TRAILER "OGKMEND"
#define KM_HEADER 48
#define KM_FORMAT 1     /* one data file's map */
#define KM_FORMAT_RUN 2 /* a run of fragments' map (keymap.h "Run maps") */
#define KM_HASH 1
#define KM_FRAG_BYTES 24
#define KM_RUN_MAX_FRAGS ((uint32_t)1 << 20)

struct og_keymap {
    const uint8_t *base;     /* the bytes; NULL while a map opened by descriptor is not mapped */
    size_t len;
    uint64_t rows, keys, blob_len;
    uint32_t bits;
    uint32_t format;         /* KM_FORMAT or KM_FORMAT_RUN */
    uint32_t ew;             /* words an entry: 4, or 5 in a run map (the fragment's ordinal last) */
    uint32_t nfrags;         /* a run map's fragments (0 for one file's) */
    og_keymap_frag *frags;   /* a run map's fragment table, copied at open */
    size_t boff, eoff, kboff; /* where the buckets, the entries and the key bytes start */
    const uint32_t *buckets; /* 2^bits + 1 */
    const uint32_t *entries; /* ew u32 per key */
    const uint8_t *blob;
    void *own;
    og_mapping *mapping;
    void *mapped;            /* mapped here from fd (munmap'd by og_keymap_free) */
    /* Reads by pread (og_keymap_open on a local store): the buckets probed so far, copied
     * (entries, then their key bytes) into a cache of at most OG_KEYMAP_READ_CACHE bytes; once
     * that is full the map reads its mapping (a process probing that many buckets is a bulk
     * reader, for whom the mapping is cheaper).  Why: a probe touches two or three pages, and
     * each page fault maps the kernel's 64 KiB of fault-around (docs/engine.md "Memory"). */
    int fd; /* -1: read the mapping */
    pthread_mutex_t mu;
    og_wordcache rc; /* bucket -> its entries (4 words each: hash, row, the key's arena word, length), then the keys */
};

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

uint64_t og_keymap_hash(const void *key, size_t len)
{
    const uint8_t *p = key;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)len * 0x100000001b3ULL);
    while (len >= 8) {
        h = (h ^ mix64(og_load_u64le(p))) * 0x9e3779b97f4a7c15ULL;
        h = (h << 29) | (h >> 35);
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    for (size_t i = 0; i < len; i++) tail |= (uint64_t)p[i] << (8 * i);
    h = (h ^ mix64(tail ^ 0x27d4eb2f165667c5ULL)) * 0x9e3779b97f4a7c15ULL;
    return mix64(h);
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bytes of a whole file: header, fragment table (run maps), buckets, entries of ew words,
 * key bytes, trailer. */
static size_t layout_size(uint32_t bits, uint64_t keys, uint64_t blob, uint32_t nfrags, uint32_t ew)
{
    size_t nb = ((size_t)1 << bits) + 1;
    return KM_HEADER + (size_t)nfrags * KM_FRAG_BYTES + pad8(nb * 4) + pad8((size_t)keys * ew * 4) + pad8((size_t)blob) + 8;
}

/* The bucket bits for `keys` keys: about two keys a bucket. */
static uint32_t bits_for(uint64_t keys)
{
    uint32_t bits = 0;
    while (bits < 30 && ((uint64_t)1 << bits) < (keys + 1) / 2) bits++;
    return bits;
}

/* Writes the 48-byte header at h. */
static void put_header(uint8_t *h, uint32_t format, uint64_t rows, uint64_t keys, uint32_t bits, uint32_t nfrags,
                       uint64_t blob)
{
    memcpy(h, KM_MAGIC, 8);
    uint32_t u32 = format;
    memcpy(h + 8, &u32, 4);
    u32 = KM_HASH, memcpy(h + 12, &u32, 4);
    memcpy(h + 16, &rows, 8);
    memcpy(h + 24, &keys, 8);
    memcpy(h + 32, &bits, 4);
    memcpy(h + 36, &nfrags, 4);
    memcpy(h + 40, &blob, 8);
}

og_status og_keymap_encode(const og_vector *ids, og_buf *out)
{
    if (ids->type.id != OG_T_STRING) return og_err(OG_ERR_INVALID, "keymap: the id column is not a String");
    size_t n = ids->len;
    if (n >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "keymap: %zu rows in one data file", n);
    size_t keys = n - ids->null_count;
    uint64_t blob = n ? (uint64_t)(ids->offsets[n] - ids->offsets[0]) : 0;
    if (blob >= UINT32_MAX) return og_err(OG_ERR_LIMIT, "keymap: %llu key bytes in one data file", (unsigned long long)blob);
    uint32_t bits = bits_for(keys);
    size_t nb = (size_t)1 << bits;
    size_t total = layout_size(bits, keys, blob, 0, 4);
    uint32_t *starts = calloc(nb + 1, sizeof *starts);
    uint64_t *hashes = malloc((n ? n : 1) * sizeof *hashes);
    if (!starts || !hashes) {
        free(starts), free(hashes);
        return og_err(OG_ERR_NOMEM, "keymap: out of memory");
    }
    for (size_t r = 0; r < n; r++) {
        if (og_vector_is_null(ids, r)) continue;
        size_t len;
        const uint8_t *p = og_vector_get_bytes(ids, r, &len);
        hashes[r] = og_keymap_hash(p, len);
        starts[(bits ? hashes[r] >> (64 - bits) : 0) + 1]++;
    }
    for (size_t b = 0; b < nb; b++) starts[b + 1] += starts[b];
    og_status st = og_buf_reserve(out, total);
    if (st != OG_OK) {
        free(starts), free(hashes);
        return st;
    }
    size_t at = out->len;
    uint8_t *h = out->data + at;
    memset(h, 0, total);
    put_header(h, KM_FORMAT, n, keys, bits, 0, blob);
    uint8_t *bk = h + KM_HEADER;
    memcpy(bk, starts, (nb + 1) * 4);
    uint8_t *ent = bk + pad8((nb + 1) * 4);
    uint8_t *bl = ent + keys * 16;
    if (blob) memcpy(bl, ids->values + ids->offsets[0], (size_t)blob);
    memcpy(bl + pad8((size_t)blob), KM_TRAILER, 8);
    /* scatter, stable: offsets ascend inside each bucket */
    for (size_t r = 0; r < n; r++) {
        if (og_vector_is_null(ids, r)) continue;
        size_t b = bits ? hashes[r] >> (64 - bits) : 0;
        uint32_t e[4] = {(uint32_t)hashes[r], (uint32_t)r, (uint32_t)(ids->offsets[r] - ids->offsets[0]),
                         (uint32_t)(ids->offsets[r + 1] - ids->offsets[r])};
        memcpy(ent + (size_t)starts[b]++ * 16, e, 16);
    }
    free(starts);
    free(hashes);
    out->len = at + total;
    return OG_OK;
}

og_status og_keymap_build(og_table *t, const og_manifest *m, const og_fragment *f, int32_t id_field, og_buf *out)
{
    if (f->physical_rows >= UINT32_MAX)
        return og_err(OG_ERR_LIMIT, "keymap: fragment %llu has %llu rows", (unsigned long long)f->id,
                      (unsigned long long)f->physical_rows);
    size_t n = (size_t)f->physical_rows;
    uint32_t *offs = malloc((n ? n : 1) * sizeof *offs);
    if (!offs) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
    for (size_t i = 0; i < n; i++) offs[i] = (uint32_t)i;
    og_vector ids;
    memset(&ids, 0, sizeof ids);
    og_status st = og_table_take(t, m, f->id, offs, n, &id_field, 1, &ids);
    free(offs);
    if (st != OG_OK) return st;
    if (ids.len != n)
        st = og_err(OG_ERR_CORRUPT, "keymap: fragment %llu gave %zu of %zu rows", (unsigned long long)f->id, ids.len, n);
    if (st == OG_OK) st = og_keymap_encode(&ids, out);
    og_vector_free(&ids);
    return st;
}

/* The path of f's data file holding field id_field, or NULL. */
static const char *id_file(const og_fragment *f, int32_t id_field)
{
    for (size_t i = 0; i < f->nfiles; i++) {
        const og_data_file *df = &f->files[i];
        for (size_t k = 0; k < df->nfields; k++)
            if (df->fields[k] == id_field) return df->path;
    }
    return NULL;
}

static og_status store_key(char *key, size_t cap, const char *dir, const og_fragment *f, int32_t id_field,
                           const char *leaf)
{
    const char *path = id_file(f, id_field);
    if (!path)
        return og_err(OG_ERR_NOT_FOUND, "keymap: fragment %llu has no data file holding field %d", (unsigned long long)f->id,
                      id_field);
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    size_t nl = strlen(name);
    if (nl > 6 && !strcmp(name + nl - 6, ".lance")) nl -= 6;
    int w = snprintf(key, cap, "_index/%s/%.*s/%s", dir, (int)nl, name, leaf);
    if (w < 0 || (size_t)w >= cap) return og_err(OG_ERR_LIMIT, "keymap: store key too long");
    return OG_OK;
}

og_status og_keymap_store_key(char *key, size_t cap, const char *dir, const og_fragment *f, int32_t id_field)
{
    return store_key(key, cap, dir, f, id_field, "keymap.v1");
}

og_status og_keymap_run_store_key(char *key, size_t cap, const char *dir, const og_fragment *f, int32_t id_field)
{
    return store_key(key, cap, dir, f, id_field, "keyrun.v1");
}

og_status og_keymap_frag_of(og_keymap_frag *out, const og_fragment *f, int32_t id_field)
{
    const char *path = id_file(f, id_field);
    if (!path)
        return og_err(OG_ERR_NOT_FOUND, "keymap: fragment %llu has no data file holding field %d", (unsigned long long)f->id,
                      id_field);
    out->id = f->id;
    out->rows = f->physical_rows;
    out->tag = og_keymap_hash(path, strlen(path));
    return OG_OK;
}


/* A new map of a len-byte file from its header h (KM_HEADER bytes) and trailer t (its last
 * 8), checked; no bytes attached yet.  OG_ERR_CORRUPT for a malformed file. */
static og_status km_new(og_keymap **out, const uint8_t *h, const uint8_t *t, size_t len)
{
    *out = NULL;
    if (len < KM_HEADER + 8 || memcmp(h, KM_MAGIC, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "keymap: not a keymap file (%zu bytes)", len);
    uint32_t format = og_load_u32le(h + 8);
    if ((format != KM_FORMAT && format != KM_FORMAT_RUN) || og_load_u32le(h + 12) != KM_HASH)
        return og_err(OG_ERR_CORRUPT, "keymap: format %u hash %u is not supported", format, og_load_u32le(h + 12));
    uint64_t rows = og_load_u64le(h + 16), keys = og_load_u64le(h + 24), blob = og_load_u64le(h + 40);
    uint32_t bits = og_load_u32le(h + 32), nfrags = og_load_u32le(h + 36);
    uint32_t ew = format == KM_FORMAT_RUN ? 5 : 4;
    int frags_ok = format == KM_FORMAT_RUN ? nfrags >= 1 && nfrags <= KM_RUN_MAX_FRAGS : nfrags == 0;
    int rows_ok = format == KM_FORMAT_RUN || rows < UINT32_MAX;
    if (bits > 30 || !frags_ok || !rows_ok || keys > rows || keys >= UINT32_MAX || blob >= UINT32_MAX ||
        layout_size(bits, keys, blob, nfrags, ew) != len || memcmp(t, KM_TRAILER, 8) != 0)
        return og_err(OG_ERR_CORRUPT, "keymap: sizes in the header do not match the file (%zu bytes)", len);
    og_keymap *k = calloc(1, sizeof *k);
    if (!k) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
    size_t nb = ((size_t)1 << bits) + 1;
    k->len = len;
    k->rows = rows;
    k->keys = keys;
    k->blob_len = blob;
    k->bits = bits;
    k->format = format;
    k->ew = ew;
    k->nfrags = nfrags;
    k->boff = KM_HEADER + (size_t)nfrags * KM_FRAG_BYTES;
    k->eoff = k->boff + pad8(nb * 4);
    k->kboff = k->eoff + pad8((size_t)keys * ew * 4);
    k->fd = -1;
    og_wordcache_init(&k->rc, OG_KEYMAP_READ_CACHE);
    *out = k;
    return OG_OK;
}

/* Copies and checks a run map's fragment table from its bytes p (nfrags x KM_FRAG_BYTES):
 * each fragment's rows fit an offset and together they are the header's rows. */
static og_status km_take_frags(og_keymap *k, const uint8_t *p)
{
    if (!k->nfrags) return OG_OK;
    k->frags = malloc((size_t)k->nfrags * sizeof *k->frags);
    if (!k->frags) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
    uint64_t sum = 0;
    for (uint32_t i = 0; i < k->nfrags; i++) {
        const uint8_t *f = p + (size_t)i * KM_FRAG_BYTES;
        k->frags[i].id = og_load_u64le(f), k->frags[i].rows = og_load_u64le(f + 8), k->frags[i].tag = og_load_u64le(f + 16);
        if (k->frags[i].rows >= UINT32_MAX) return og_err(OG_ERR_CORRUPT, "keymap: fragment %u of the run is too large", i);
        sum += k->frags[i].rows;
    }
    if (sum != k->rows) return og_err(OG_ERR_CORRUPT, "keymap: the run's fragments do not add up to its rows");
    return OG_OK;
}

/* Points k at its bytes p. */
static void km_attach(og_keymap *k, const uint8_t *p)
{
    k->buckets = (const uint32_t *)(const void *)(p + k->boff);
    k->entries = (const uint32_t *)(const void *)(p + k->eoff);
    k->blob = p + k->kboff;
    k->base = p;
}

og_status og_keymap_open_bytes(og_keymap **out, const uint8_t *p, size_t len, void *own, og_mapping *mapping)
{
    *out = NULL;
    if (len < KM_HEADER + 8) return og_err(OG_ERR_CORRUPT, "keymap: not a keymap file (%zu bytes)", len);
    OG_TRY(km_new(out, p, p + len - 8, len));
    og_status st = km_take_frags(*out, p + KM_HEADER);
    if (st != OG_OK) {
        og_keymap_free(*out);
        *out = NULL;
        return st;
    }
    km_attach(*out, p);
    (*out)->own = own;
    (*out)->mapping = mapping;
    return OG_OK;
}

og_status og_keymap_open(og_keymap **out, og_store *st, const char *key)
{
    *out = NULL;
    int fd = -1;
    uint64_t size = 0;
    if (og_store_is_local(st)) { /* by descriptor: read the header and the trailer, map nothing yet */
        og_status s = og_store_open_fd(st, key, &fd, &size);
        if (s == OG_ERR_NOT_FOUND) return s;
        if (s != OG_OK) og_error_clear(); /* (past the descriptor bound: map it) */
        uint8_t h[KM_HEADER], t[8];
        if (s == OG_OK && size >= KM_HEADER + 8 && size <= SIZE_MAX && og_pread_full(fd, h, sizeof h, 0) &&
            og_pread_full(fd, t, sizeof t, size - 8)) {
            s = km_new(out, h, t, (size_t)size);
            if (s == OG_OK && (*out)->nfrags) {
                size_t fb = (size_t)(*out)->nfrags * KM_FRAG_BYTES;
                uint8_t *tmp = malloc(fb);
                if (!tmp) s = og_err(OG_ERR_NOMEM, "keymap: out of memory");
                else if (!og_pread_full(fd, tmp, fb, KM_HEADER)) s = og_err(OG_ERR_IO, "keymap: reading its fragment table");
                else s = km_take_frags(*out, tmp);
                free(tmp);
            }
            if (s == OG_OK && pthread_mutex_init(&(*out)->mu, NULL) != 0) s = og_err(OG_ERR_NOMEM, "keymap: no mutex");
            else if (s == OG_OK) (*out)->fd = fd;
            if (s != OG_OK) {
                if (*out) (*out)->fd = -1; /* (no mutex to destroy) */
                og_keymap_free(*out);
                *out = NULL;
                og_store_close_fd(fd);
                return og_err_wrap(s, "%s", key);
            }
            return OG_OK;
        }
        if (fd >= 0) og_store_close_fd(fd); /* (too short, or unreadable: the mapping says why) */
    }
    og_mapping *m;
    OG_TRY(og_store_map(st, key, &m));
    og_status s = og_keymap_open_bytes(out, og_mapping_data(m), og_mapping_size(m), NULL, m);
    if (s != OG_OK) {
        og_mapping_release(m);
        return og_err_wrap(s, "%s", key);
    }
    if (og_store_is_local(st) && og_mapping_size(m) > 0) { /* a hint: without it probes read the mapping */
        if (og_store_open_fd(st, key, &fd, &size) != OG_OK) og_error_clear();
        else if (size != og_mapping_size(m) || pthread_mutex_init(&(*out)->mu, NULL) != 0) og_store_close_fd(fd); /* replaced since */
        else (*out)->fd = fd;
    }
    return OG_OK;
}

void og_keymap_free(og_keymap *k)
{
    if (!k) return;
    if (k->fd >= 0) {
        og_store_close_fd(k->fd);
        pthread_mutex_destroy(&k->mu);
        og_wordcache_free(&k->rc);
    }
    if (k->mapped) munmap(k->mapped, k->len);
    if (k->mapping) og_mapping_release(k->mapping);
    free(k->frags);
    free(k->own);
    free(k);
}

uint64_t og_keymap_rows(const og_keymap *k) { return k->rows; }
int og_keymap_reads_by_pread(const og_keymap *k) { return k->fd >= 0 && !k->rc.full; }

size_t og_keymap_set_read_cache(og_keymap *k, size_t bytes)
{
    if (k->fd < 0) return 0;
    pthread_mutex_lock(&k->mu);
    if (bytes < k->rc.bound && k->rc.used) og_wordcache_clear(&k->rc); /* (set right after opening; a smaller bound starts afresh) */
    k->rc.bound = bytes;
    pthread_mutex_unlock(&k->mu);
    return bytes;
}
uint64_t og_keymap_keys(const og_keymap *k) { return k->keys; }
size_t og_keymap_bytes(const og_keymap *k) { return k->len; }
static int km_map(og_keymap *k);

const uint8_t *og_keymap_base(const og_keymap *ck)
{
    og_keymap *k = (og_keymap *)(uintptr_t)ck;
    if (k->fd < 0) return k->base;
    pthread_mutex_lock(&k->mu);
    km_map(k);
    const uint8_t *p = k->base;
    pthread_mutex_unlock(&k->mu);
    return p;
}

/* 1 when entry en (ew words, key position and length at [2], [3]) names a row and key bytes
 * inside k. */
static int entry_ok(const og_keymap *k, const uint32_t *en)
{
    if ((uint64_t)en[2] + en[3] > k->blob_len) return 0;
    if (k->format == KM_FORMAT_RUN) return en[4] < k->nfrags && en[1] < k->frags[en[4]].rows;
    return en[1] < k->rows;
}

/* Bucket b's entries in the cache (read with pread on a miss), k->mu held.  1: *ent (n
 * entries of k->ew words each: hash, row, the key's arena word, length[, fragment ordinal];
 * each key's bytes at (const uint8_t *)(k->rc.arena + ent[2])); 0: read the mapping; -1: the
 * file is damaged (a bound check failed). */
static int km_cached_bucket(og_keymap *k, size_t b, const uint32_t **ent, uint32_t *n)
{
    const uint32_t *hit = og_wordcache_find(&k->rc, b, n);
    if (hit) {
        *ent = hit;
        return 1;
    }
    if (k->rc.full) return 0;
    uint32_t se[2];
    if (!og_pread_full(k->fd, se, sizeof se, (uint64_t)(k->boff + b * 4))) return 0;
    if (se[0] > se[1] || se[1] > k->keys) return -1;
    size_t ew = k->ew, cnt = se[1] - se[0], words = cnt * ew;
    uint32_t *tmp = malloc((cnt ? cnt : 1) * ew * 4);
    if (!tmp) return 0;
    if (cnt && !og_pread_full(k->fd, tmp, cnt * ew * 4, (uint64_t)(k->eoff + (size_t)se[0] * ew * 4))) {
        free(tmp);
        return 0;
    }
    for (size_t i = 0; i < cnt; i++) {
        if (!entry_ok(k, tmp + ew * i)) {
            free(tmp);
            return -1;
        }
        words += (tmp[ew * i + 3] + 3) / 4;
    }
    if (!og_wordcache_reserve(&k->rc, words)) { /* a bulk reader: the mapping from now on */
        free(tmp);
        return 0;
    }
    uint32_t *dst = k->rc.arena + k->rc.len;
    size_t kw = k->rc.len + cnt * ew; /* the next key's arena word */
    for (size_t i = 0; i < cnt; i++) {
        uint32_t len = tmp[ew * i + 3];
        if (len && !og_pread_full(k->fd, k->rc.arena + kw, len, (uint64_t)(k->kboff + tmp[ew * i + 2]))) {
            free(tmp);
            return 0;
        }
        memcpy(dst + ew * i, tmp + ew * i, ew * 4);
        dst[ew * i + 2] = (uint32_t)kw;
        kw += (len + 3) / 4;
    }
    free(tmp);
    og_wordcache_add(&k->rc, b, words, (uint32_t)cnt);
    *ent = dst;
    *n = (uint32_t)cnt;
    return 1;
}

/* Maps a map opened by descriptor (k->mu held): its probes read the mapping from now on.  0
 * when it cannot be mapped. */
static int km_map(og_keymap *k)
{
    if (k->base) return 1;
    void *p = mmap(NULL, k->len, PROT_READ, MAP_PRIVATE, k->fd, 0);
    if (p == MAP_FAILED) return 0;
    k->mapped = p;
    km_attach(k, p);
    return 1;
}

/* Calls cb (one file's map) or cb_run (a run map) for every entry of key, in order, until
 * one returns nonzero. */
static og_status km_find(const og_keymap *ck, const void *key, size_t len, int (*cb)(void *ud, uint32_t offset),
                         int (*cb_run)(void *ud, uint32_t ord, uint32_t offset), void *ud)
{
    og_keymap *k = (og_keymap *)(uintptr_t)ck; /* only the read cache changes */
    if (!k->keys) return OG_OK;
    uint64_t h = og_keymap_hash(key, len);
    size_t b = k->bits ? (size_t)(h >> (64 - k->bits)) : 0, ew = k->ew;
    if (k->fd >= 0) {
        pthread_mutex_lock(&k->mu);
        const uint32_t *ent;
        uint32_t n;
        int got = km_cached_bucket(k, b, &ent, &n);
        if (got < 0) {
            pthread_mutex_unlock(&k->mu);
            return og_err(OG_ERR_CORRUPT, "keymap: bucket %zu is out of bounds", b);
        }
        if (got > 0) {
            for (uint32_t i = 0; i < n; i++) {
                const uint32_t *en = ent + (size_t)i * ew;
                if (en[0] != (uint32_t)h || en[3] != len) continue;
                if (len && memcmp(k->rc.arena + en[2], key, len) != 0) continue;
                if (cb_run ? cb_run(ud, en[4], en[1]) : cb(ud, en[1])) break;
            }
            pthread_mutex_unlock(&k->mu);
            return OG_OK;
        }
        int mapped = km_map(k); /* (a mapping set under the lock is read after it) */
        pthread_mutex_unlock(&k->mu);
        if (!mapped) return og_err_errno(errno, "keymap: mapping a %zu-byte map", k->len);
    }
    uint32_t s = k->buckets[b], e = k->buckets[b + 1];
    if (s > e || e > k->keys) return og_err(OG_ERR_CORRUPT, "keymap: bucket %zu is out of bounds", b);
    for (uint32_t i = s; i < e; i++) {
        const uint32_t *en = k->entries + (size_t)i * ew;
        if (en[0] != (uint32_t)h || en[3] != len) continue;
        if (!entry_ok(k, en)) return og_err(OG_ERR_CORRUPT, "keymap: entry %u is out of bounds", i);
        if (len && memcmp(k->blob + en[2], key, len) != 0) continue;
        if (cb_run ? cb_run(ud, en[4], en[1]) : cb(ud, en[1])) break;
    }
    return OG_OK;
}

og_status og_keymap_find(const og_keymap *k, const void *key, size_t len, int (*cb)(void *ud, uint32_t offset), void *ud)
{
    if (k->format != KM_FORMAT) return og_err(OG_ERR_INVALID, "keymap: a run map is probed with og_keymap_find_run");
    return km_find(k, key, len, cb, NULL, ud);
}

og_status og_keymap_find_run(const og_keymap *k, const void *key, size_t len,
                             int (*cb)(void *ud, uint32_t ord, uint32_t offset), void *ud)
{
    if (k->format != KM_FORMAT_RUN) return og_err(OG_ERR_INVALID, "keymap: not a run map");
    return km_find(k, key, len, NULL, cb, ud);
}

int og_keymap_is_run(const og_keymap *k) { return k->format == KM_FORMAT_RUN; }

size_t og_keymap_run_frags(const og_keymap *k, const og_keymap_frag **out)
{
    *out = k->frags;
    return k->nfrags;
}

/* k's bytes for one pass of the run encoder: its own, or a mapping of its descriptor made
 * here (*unmap set: munmap it after, so the pass leaves none of the file's pages resident). */
static const uint8_t *bytes_for_pass(const og_keymap *k, int *unmap)
{
    *unmap = 0;
    if (k->base) return k->base;
    if (k->fd < 0) return NULL;
    void *p = mmap(NULL, k->len, PROT_READ, MAP_PRIVATE, k->fd, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, k->len, MADV_SEQUENTIAL);
    *unmap = 1;
    return p;
}

/* A run map is made in pieces (og_store_fill_fn), so that neither a load nor the encoder
 * holds the whole file (~310 MB at 10M keys) beside the members: the header and fragment
 * table; the bucket directory; the entries a range of buckets at a time (a range covers whole
 * buckets of every member, whose entries are then one contiguous run in each); each member's
 * key bytes straight from its file; padding and the trailer.  What it holds is the directory
 * and one bucket number per key (~8 bytes a key) plus one range of entries. */
uint32_t og_keymap_run_chunk = (uint32_t)1 << 20;

typedef struct run_gen {
    og_keymap *const *maps;
    const og_keymap_frag *frags;
    size_t n;
    uint32_t bits, shift; /* shift: bits less the fewest bits of a member */
    size_t nb;
    uint64_t keys, blob, rows;
    uint32_t *starts;  /* nb + 1: where each bucket's entries start */
    uint32_t *where;   /* each entry's bucket, member after member */
    uint64_t *ebase;   /* per member: its first entry's index in `where` */
    uint64_t *kbase;   /* per member: its key bytes' start in the run's */
    int phase;         /* 0 header, 1 directory, 2 entries, 3 key bytes, 4 trailer, 5 done */
    size_t next;       /* phase 2: the next bucket; phase 3: the next member */
    uint8_t *buf;      /* the piece handed out (phases 0, 2, 4) */
    size_t cap;
    uint32_t *cur;     /* phase 2: per bucket of the range, its next entry */
    const uint8_t *held; /* phase 3: the member mapped for the last piece (unmapped next) */
    const og_keymap *held_k;
} run_gen;

static void gen_release_held(run_gen *g)
{
    if (g->held) munmap((void *)(uintptr_t)g->held, g->held_k->len);
    g->held = NULL;
}

static void gen_free(run_gen *g)
{
    gen_release_held(g);
    free(g->starts), free(g->where), free(g->ebase), free(g->kbase), free(g->buf), free(g->cur);
}

static uint8_t *gen_buf(run_gen *g, size_t n)
{
    if (n > g->cap) {
        uint8_t *b = realloc(g->buf, n);
        if (!b) return NULL;
        g->buf = b, g->cap = n;
    }
    return g->buf;
}

/* Pass 1: every key's bucket, the directory, each member checked as the reader would. */
static og_status gen_begin(run_gen *g, og_keymap *const *maps, const og_keymap_frag *frags, size_t n)
{
    memset(g, 0, sizeof *g);
    g->maps = maps, g->frags = frags, g->n = n;
    if (!n || n > KM_RUN_MAX_FRAGS) return og_err(OG_ERR_INVALID, "keymap: a run of %zu fragments", n);
    uint32_t min_bits = 30;
    for (size_t i = 0; i < n; i++) {
        if (maps[i]->format != KM_FORMAT || maps[i]->rows != frags[i].rows)
            return og_err(OG_ERR_INVALID, "keymap: run member %zu is not the map of its fragment", i);
        g->keys += maps[i]->keys, g->blob += maps[i]->blob_len, g->rows += frags[i].rows;
        if (maps[i]->bits < min_bits) min_bits = maps[i]->bits;
    }
    if (g->keys >= UINT32_MAX || g->blob >= UINT32_MAX)
        return og_err(OG_ERR_LIMIT, "keymap: a run of %llu keys and %llu key bytes", (unsigned long long)g->keys,
                      (unsigned long long)g->blob);
    g->bits = bits_for(g->keys);
    /* (never fewer bucket bits than a member's — bits_for grows with the keys — so a member's
     * bucket is a range of the run's, and its entries come out in offset order) */
    for (size_t i = 0; i < n; i++)
        if (maps[i]->bits > g->bits) return og_err(OG_ERR_INTERNAL, "keymap: run member %zu has more buckets than the run", i);
    g->shift = g->bits - min_bits;
    g->nb = (size_t)1 << g->bits;
    g->starts = calloc(g->nb + 1, sizeof *g->starts);
    g->where = malloc((g->keys ? g->keys : 1) * sizeof *g->where);
    g->ebase = malloc((n + 1) * sizeof *g->ebase);
    g->kbase = malloc((n + 1) * sizeof *g->kbase);
    if (!g->starts || !g->where || !g->ebase || !g->kbase) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
    uint64_t e0 = 0, k0 = 0;
    for (size_t i = 0; i < n; i++) {
        const og_keymap *k = maps[i];
        g->ebase[i] = e0, g->kbase[i] = k0;
        int unmap;
        const uint8_t *p = bytes_for_pass(k, &unmap);
        if (!p) return og_err_errno(errno, "keymap: mapping run member %zu", i);
        const uint32_t *ent = (const uint32_t *)(const void *)(p + k->eoff);
        og_status st = OG_OK;
        for (uint64_t e = 0; e < k->keys; e++) {
            const uint32_t *en = ent + e * 4;
            uint64_t h;
            if (!entry_ok(k, en) || (uint32_t)(h = og_keymap_hash(p + k->kboff + en[2], en[3])) != en[0]) {
                st = og_err(OG_ERR_CORRUPT, "keymap: run member %zu: entry %llu is damaged", i, (unsigned long long)e);
                break;
            }
            uint32_t b = g->bits ? (uint32_t)(h >> (64 - g->bits)) : 0;
            g->where[e0 + e] = b;
            g->starts[b + 1]++;
        }
        if (unmap) munmap((void *)(uintptr_t)p, k->len);
        if (st != OG_OK) return st;
        e0 += k->keys, k0 += k->blob_len;
    }
    g->ebase[n] = e0, g->kbase[n] = k0;
    for (size_t b = 0; b < g->nb; b++) g->starts[b + 1] += g->starts[b];
    return OG_OK;
}

/* Phase 2: the entries of the next range of whole member buckets. */
static og_status gen_entries(run_gen *g, const void **data, size_t *len)
{
    size_t b0 = g->next, unit = (size_t)1 << g->shift, b1 = b0 + unit;
    while (b1 < g->nb && g->starts[b1 + unit] - g->starts[b0] <= og_keymap_run_chunk) b1 += unit;
    size_t cnt = g->starts[b1] - g->starts[b0];
    uint8_t *out = gen_buf(g, cnt * 20 + 1);
    uint32_t *cur = realloc(g->cur, (b1 - b0) * sizeof *cur);
    if (!out || !cur) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
    g->cur = cur;
    for (size_t b = b0; b < b1; b++) cur[b - b0] = g->starts[b] - g->starts[b0];
    uint32_t *dst = (uint32_t *)(void *)out;
    for (size_t i = 0; i < g->n; i++) {
        const og_keymap *k = g->maps[i];
        if (!k->keys) continue;
        uint32_t ms = g->bits - k->bits;
        int unmap;
        const uint8_t *p = bytes_for_pass(k, &unmap);
        if (!p) return og_err_errno(errno, "keymap: mapping run member %zu", i);
        const uint32_t *mb = (const uint32_t *)(const void *)(p + k->boff);
        const uint32_t *ent = (const uint32_t *)(const void *)(p + k->eoff);
        uint32_t es = mb[b0 >> ms], ee = mb[b1 >> ms];
        og_status st = es <= ee && ee <= k->keys ? OG_OK : og_err(OG_ERR_CORRUPT, "keymap: run member %zu: its buckets are damaged", i);
        for (uint32_t e = es; e < ee && st == OG_OK; e++) {
            uint32_t b = g->where[g->ebase[i] + e];
            if (b < b0 || b >= b1) {
                st = og_err(OG_ERR_CORRUPT, "keymap: run member %zu: entry %u is out of its bucket", i, e);
                break;
            }
            const uint32_t *en = ent + (size_t)e * 4;
            uint32_t *d = dst + (size_t)cur[b - b0]++ * 5;
            d[0] = en[0], d[1] = en[1], d[2] = (uint32_t)(g->kbase[i] + en[2]), d[3] = en[3], d[4] = (uint32_t)i;
        }
        if (unmap) munmap((void *)(uintptr_t)p, k->len);
        if (st != OG_OK) return st;
    }
    g->next = b1;
    *data = out, *len = cnt * 20;
    return OG_OK;
}

static og_status gen_fill(void *ctx, const void **data, size_t *len)
{
    run_gen *g = ctx;
    gen_release_held(g);
    *data = NULL, *len = 0;
    for (;;) {
        switch (g->phase) {
        case 0: { /* header and fragment table */
            size_t n = KM_HEADER + g->n * KM_FRAG_BYTES;
            uint8_t *h = gen_buf(g, n);
            if (!h) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
            memset(h, 0, n);
            put_header(h, KM_FORMAT_RUN, g->rows, g->keys, g->bits, (uint32_t)g->n, g->blob);
            for (size_t i = 0; i < g->n; i++) {
                uint8_t *f = h + KM_HEADER + i * KM_FRAG_BYTES;
                memcpy(f, &g->frags[i].id, 8), memcpy(f + 8, &g->frags[i].rows, 8), memcpy(f + 16, &g->frags[i].tag, 8);
            }
            g->phase = 1;
            *data = h, *len = n;
            return OG_OK;
        }
        case 1: { /* the directory, padded (its count is odd when nb is even) */
            size_t bytes = (g->nb + 1) * 4;
            g->phase = 2;
            if (bytes % 8) {
                uint32_t *pad = realloc(g->starts, (g->nb + 2) * sizeof *pad);
                if (!pad) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
                g->starts = pad;
                pad[g->nb + 1] = 0;
                bytes += 4;
            }
            *data = g->starts, *len = bytes;
            return OG_OK;
        }
        case 2: /* the entries, a range of buckets a piece (an empty range gives none) */
            while (g->keys && g->next < g->nb) {
                OG_TRY(gen_entries(g, data, len));
                if (*len) return OG_OK;
            }
            g->phase = 3, g->next = 0;
            if ((g->keys * 20) % 8) { /* the section's padding */
                static const uint8_t zero[8];
                *data = zero, *len = 8 - (size_t)(g->keys * 20) % 8;
                return OG_OK;
            }
            continue;
        case 3: /* each member's key bytes, from its file */
            while (g->next < g->n && !g->maps[g->next]->blob_len) g->next++;
            if (g->next < g->n) {
                const og_keymap *k = g->maps[g->next++];
                int unmap;
                const uint8_t *p = bytes_for_pass(k, &unmap);
                if (!p) return og_err_errno(errno, "keymap: mapping a run member");
                if (unmap) g->held = p, g->held_k = k;
                *data = p + k->kboff, *len = (size_t)k->blob_len;
                return OG_OK;
            }
            g->phase = 4;
            continue;
        case 4: { /* padding and the trailer */
            size_t pad = pad8((size_t)g->blob) - (size_t)g->blob;
            uint8_t *t = gen_buf(g, pad + 8);
            if (!t) return og_err(OG_ERR_NOMEM, "keymap: out of memory");
            memset(t, 0, pad);
            memcpy(t + pad, KM_TRAILER, 8);
            g->phase = 5;
            *data = t, *len = pad + 8;
            return OG_OK;
        }
        default:
            return OG_OK; /* the end */
        }
    }
}

og_status og_keymap_encode_run(og_keymap *const *maps, const og_keymap_frag *frags, size_t n, og_buf *out)
{
    run_gen g;
    og_status st = gen_begin(&g, maps, frags, n);
    size_t at = out->len;
    if (st == OG_OK) st = og_buf_reserve(out, layout_size(g.bits, g.keys, g.blob, (uint32_t)n, 5));
    for (;;) {
        const void *p;
        size_t len;
        if (st == OG_OK) st = gen_fill(&g, &p, &len);
        if (st != OG_OK || !len) break;
        st = og_buf_append(out, p, len);
    }
    gen_free(&g);
    if (st != OG_OK) out->len = at;
    return st;
}

og_status og_keymap_put_run(og_store *st, const char *key, og_keymap *const *maps, const og_keymap_frag *frags,
                            size_t n)
{
    run_gen g;
    og_status s = gen_begin(&g, maps, frags, n);
    if (s == OG_OK) s = og_store_put_if_absent_stream(st, key, gen_fill, &g);
    gen_free(&g);
    return s;
}
