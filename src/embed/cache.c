/*
 * cache.c — a per-graph cache of embeddings in one append-only file, so a repeated query text
 * costs no request and a rerun of `omnigraph embed` after a crash or a quota error only asks
 * the provider for what is still missing.
 *
 * Why a plain append-only file: the cache is derived state (invariant 7) — losing it costs
 * requests, never correctness — so it needs no transactions: each record is written by one
 * write() on an O_APPEND descriptor and carries its own checksum; a torn last record is
 * dropped when the file is next opened.  The key is SHA-256 over (provider, model, dimension,
 * role for Gemini only — the others send identical requests for both roles — and the text).
 *
 * File: "OGEMBC1\n", then records: u32 "OGEC" | 32-byte key | u32 dim | dim x f32 | u32 FNV-1a
 * of the bytes before it (all little-endian).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embed/embed_internal.h"
#include "util/error.h"
#include "util/sha256.h"
#include "util/strmap.h"

#define HDR "OGEMBC1\n"
#define REC_MAGIC 0x4345474Fu

struct og_embed_cache {
    int fd;
    char path[1024];
    og_strmap map; /* key -> entry index */
    uint32_t *dims;
    size_t *offs;  /* into pool */
    float *pool;
    size_t n, cap, pool_len, pool_cap;
};

static uint32_t fnv32(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static void make_key(const og_embed_config *cfg, og_embed_role role, const char *text, size_t len, uint32_t dim,
                     uint8_t key[32])
{
    og_buf b = OG_BUF_INIT;
    char head[400];
    int hl = snprintf(head, sizeof head, "%s%c%s%c%u%c%s%c", og_embed_provider_name(cfg->provider), 0, cfg->model, 0, dim,
                      0, cfg->provider == OG_EMBED_GEMINI ? (role == OG_EMBED_DOCUMENT ? "document" : "query") : "", 0);
    if (hl < 0) hl = 0;
    if ((size_t)hl >= sizeof head) hl = (int)sizeof head - 1;
    if (og_buf_append(&b, head, (size_t)hl) == OG_OK && og_buf_append(&b, text, len) == OG_OK)
        og_sha256(b.data, b.len, key);
    else
        memset(key, 0, 32); /* out of memory: an all-zero key never matches a real one's use */
    og_buf_free(&b);
}

static og_status add_entry(og_embed_cache *c, const uint8_t key[32], uint32_t dim, const float *v)
{
    if (og_strmap_get(&c->map, key, 32, NULL)) return OG_OK;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        uint32_t *d = realloc(c->dims, nc * sizeof *d);
        if (!d) return og_err(OG_ERR_NOMEM, "embedding cache: out of memory");
        c->dims = d;
        size_t *o = realloc(c->offs, nc * sizeof *o);
        if (!o) return og_err(OG_ERR_NOMEM, "embedding cache: out of memory");
        c->offs = o;
        c->cap = nc;
    }
    if (c->pool_len + dim > c->pool_cap) {
        size_t nc = c->pool_cap ? c->pool_cap * 2 : 4096;
        while (nc < c->pool_len + dim) nc *= 2;
        float *p = realloc(c->pool, nc * sizeof *p);
        if (!p) return og_err(OG_ERR_NOMEM, "embedding cache: out of memory");
        c->pool = p;
        c->pool_cap = nc;
    }
    OG_TRY(og_strmap_insert(&c->map, key, 32, (uint32_t)c->n, NULL, NULL));
    c->dims[c->n] = dim;
    c->offs[c->n] = c->pool_len;
    memcpy(c->pool + c->pool_len, v, dim * sizeof *v);
    c->pool_len += dim;
    c->n++;
    return OG_OK;
}

static og_status mkdirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0700) && errno != EEXIST) return og_err_errno(errno, "embedding cache: cannot create %s", tmp);
        *p = '/';
    }
    return OG_OK;
}

og_status og_embed_cache_path(char *out, size_t cap, const char *id)
{
    char dir[900];
    const char *d = getenv("OMNIGRAPH_EMBED_CACHE_DIR"), *home = getenv("OMNIGRAPH_HOME"), *h = getenv("HOME");
    if (d && *d) snprintf(dir, sizeof dir, "%s", d);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/embed-cache", home);
    else if (h && *h) snprintf(dir, sizeof dir, "%s/.omnigraph/embed-cache", h);
    else return og_err(OG_ERR_INVALID, "embedding cache: set OMNIGRAPH_EMBED_CACHE_DIR, OMNIGRAPH_HOME or HOME");
    char hex[OG_SHA256_HEX_LEN + 1];
    OG_TRY(og_sha256_hex(id, strlen(id), hex));
    hex[16] = 0;
    if ((size_t)snprintf(out, cap, "%s/%s.cache", dir, hex) >= cap)
        return og_err(OG_ERR_INVALID, "embedding cache: the path is too long");
    return OG_OK;
}

og_status og_embed_cache_open(og_embed_cache **out, const char *path)
{
    *out = NULL;
    if (strlen(path) >= sizeof((og_embed_cache *)0)->path)
        return og_err(OG_ERR_INVALID, "embedding cache: the path is too long");
    OG_TRY(mkdirs(path));
    og_embed_cache *c = calloc(1, sizeof *c);
    if (!c) return og_err(OG_ERR_NOMEM, "embedding cache: out of memory");
    og_strmap_init(&c->map);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (c->fd < 0) {
        og_status st = og_err_errno(errno, "embedding cache: cannot open %s", path);
        og_embed_cache_close(c);
        return st;
    }
    og_buf b = OG_BUF_INIT;
    og_status st = og_buf_read_file(&b, path);
    size_t good = 0;
    if (st == OG_OK && b.len >= 8 && !memcmp(b.data, HDR, 8)) {
        good = 8;
        while (st == OG_OK && good + 44 <= b.len) {
            const uint8_t *p = b.data + good;
            if (og_load_u32le(p) != REC_MAGIC) break;
            uint32_t dim = og_load_u32le(p + 36);
            size_t rl = 40 + (size_t)dim * 4 + 4;
            if (!dim || dim > 65536 || good + rl > b.len) break;
            if (fnv32(p, rl - 4) != og_load_u32le(p + rl - 4)) break;
            float *v = malloc(dim * sizeof *v);
            if (!v) {
                st = og_err(OG_ERR_NOMEM, "embedding cache: out of memory");
                break;
            }
            for (uint32_t i = 0; i < dim; i++) {
                uint32_t u = og_load_u32le(p + 40 + 4 * (size_t)i);
                memcpy(&v[i], &u, 4);
            }
            st = add_entry(c, p + 4, dim, v);
            free(v);
            good += rl;
        }
    }
    if (st == OG_OK && (good != b.len || !good)) {
        /* Empty, foreign or torn: keep the good prefix (or start the file afresh). */
        if (ftruncate(c->fd, (off_t)good)) st = og_err_errno(errno, "embedding cache: cannot repair %s", path);
        else if (!good && write(c->fd, HDR, 8) != 8) st = og_err_errno(errno, "embedding cache: cannot write %s", path);
    }
    og_buf_free(&b);
    if (st != OG_OK) {
        og_embed_cache_close(c);
        return st;
    }
    *out = c;
    return OG_OK;
}

void og_embed_cache_close(og_embed_cache *c)
{
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    og_strmap_free(&c->map);
    free(c->dims);
    free(c->offs);
    free(c->pool);
    free(c);
}

size_t og_embed_cache_count(const og_embed_cache *c) { return c->n; }

int og_embed_cache_get(og_embed_cache *c, const og_embed_config *cfg, og_embed_role role, const char *text, size_t len,
                       uint32_t dim, float *out)
{
    uint8_t key[32];
    make_key(cfg, role, text, len, dim, key);
    uint32_t ix;
    if (!og_strmap_get(&c->map, key, 32, &ix) || c->dims[ix] != dim) return 0;
    memcpy(out, c->pool + c->offs[ix], dim * sizeof *out);
    return 1;
}

og_status og_embed_cache_put(og_embed_cache *c, const og_embed_config *cfg, og_embed_role role, const char *text,
                             size_t len, uint32_t dim, const float *v)
{
    uint8_t key[32];
    make_key(cfg, role, text, len, dim, key);
    if (og_strmap_get(&c->map, key, 32, NULL)) return OG_OK;
    og_buf b = OG_BUF_INIT;
    og_status st = og_buf_append_u32le(&b, REC_MAGIC);
    if (st == OG_OK) st = og_buf_append(&b, key, 32);
    if (st == OG_OK) st = og_buf_append_u32le(&b, dim);
    for (uint32_t i = 0; st == OG_OK && i < dim; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        st = og_buf_append_u32le(&b, u);
    }
    if (st == OG_OK) st = og_buf_append_u32le(&b, fnv32(b.data, b.len));
    if (st == OG_OK && write(c->fd, b.data, b.len) != (ssize_t)b.len)
        st = og_err_errno(errno, "embedding cache: cannot append to %s", c->path);
    og_buf_free(&b);
    if (st == OG_OK) st = add_entry(c, key, dim, v);
    return st;
}
