/*
 * table.c — opening a table directory, finding its versions and loading a named version's
 * manifest.  Scans live in table_scan.c, staged writes in table_txn.c (see table.h).
 *
 * Manifests are looked up by name, never by listing, except for the tool-only
 * og_table_latest_version / og_table_list_versions: a graph read costs one GET per table
 * version it names, however long the history.
 */
#include "table/table_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/id.h"

/* Reader feature flags we understand: 1 deletion files, 2 stable row ids (row addresses are
 * still fragment << 32 | offset, which is all we use), 4 "v2 format" (deprecated), 8 table
 * config present. */
#define KNOWN_READER_FLAGS 15u

og_status og_table_open(og_table **out, og_store *store, const char *dir)
{
    *out = NULL;
    if (!store || !dir || !dir[0]) return og_err(OG_ERR_INVALID, "table: no store or directory");
    size_t n = strlen(dir);
    if (dir[n - 1] == '/') return og_err(OG_ERR_INVALID, "table directory '%s' ends with '/'", dir);
    og_table *t = calloc(1, sizeof *t);
    if (!t) return og_err(OG_ERR_NOMEM, "out of memory");
    t->store = store;
    t->refs = 1;
    t->dir = strdup(dir);
    t->prefix = malloc(n + sizeof "tables//");
    if (!t->dir || !t->prefix) {
        og_table_close(t);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    snprintf(t->prefix, n + sizeof "tables//", "tables/%s/", dir);
    char probe[4096];
    og_status st = og_table_i_key(t, "_versions/x", probe, sizeof probe);
    if (st == OG_OK) st = og_store_key_check(probe);
    if (st != OG_OK) {
        og_table_close(t);
        return og_err_wrap(OG_ERR_INVALID, "table directory '%s'", dir);
    }
    *out = t;
    return OG_OK;
}

void og_table_i_retain(og_table *t) { __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED); }

void og_table_close(og_table *t)
{
    if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    free(t->dir);
    free(t->prefix);
    free(t);
}

const char *og_table_dir(const og_table *t) { return t->dir; }
og_store *og_table_store(const og_table *t) { return t->store; }

og_status og_table_i_key(const og_table *t, const char *rel, char *out, size_t cap)
{
    int k = snprintf(out, cap, "%s%s", t->prefix, rel);
    if (k < 0 || (size_t)k >= cap) return og_err(OG_ERR_INVALID, "table key too long: %s%s", t->prefix, rel);
    return OG_OK;
}

static int cmp_manifest(const void *a, const void *b)
{
    uint64_t x = ((const og_table_i_manifest *)a)->version, y = ((const og_table_i_manifest *)b)->version;
    return x < y ? -1 : x > y;
}

void og_table_i_manifests_free(og_table_i_manifest *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].key);
    free(v);
}

og_status og_table_i_list_manifests(og_table *t, og_table_i_manifest **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char prefix[4096];
    OG_TRY(og_table_i_key(t, "_versions/", prefix, sizeof prefix));
    og_keylist kl;
    OG_TRY(og_store_list(t->store, prefix, NULL, 0, &kl));
    og_table_i_manifest *v = kl.count ? calloc(kl.count, sizeof *v) : NULL;
    if (kl.count && !v) {
        og_keylist_free(&kl);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < kl.count; i++) {
        const char *rest = kl.keys[i] + strlen(prefix);
        if (strchr(rest, '/')) continue; /* not directly in _versions/ */
        if (!og_manifest_parse_name(rest, &v[k].version, NULL)) continue;
        v[k].key = kl.keys[i]; /* taken from the list */
        kl.keys[i] = NULL;
        k++;
    }
    og_keylist_free(&kl);
    if (k) qsort(v, k, sizeof *v, cmp_manifest);
    if (!k) {
        free(v);
        v = NULL;
    }
    *out = v;
    *n = k;
    return OG_OK;
}

og_status og_table_list_versions(og_table *t, uint64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    og_table_i_manifest *all;
    size_t k;
    OG_TRY(og_table_i_list_manifests(t, &all, &k));
    uint64_t *v = k ? malloc(k * sizeof *v) : NULL;
    if (k && !v) {
        og_table_i_manifests_free(all, k);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < k; i++) v[i] = all[i].version;
    og_table_i_manifests_free(all, k);
    *out = v;
    *n = k;
    return OG_OK;
}

og_status og_table_latest_version(og_table *t, uint64_t *out)
{
    *out = 0;
    char prefix[4096];
    OG_TRY(og_table_i_key(t, "_versions/", prefix, sizeof prefix));
    /* With V2 names the newest version sorts first: a short listing finds it. */
    og_keylist kl;
    OG_TRY(og_store_list(t->store, prefix, NULL, 8, &kl));
    for (size_t i = 0; i < kl.count; i++) {
        uint64_t v;
        int v2;
        const char *rest = kl.keys[i] + strlen(prefix);
        if (!strchr(rest, '/') && og_manifest_parse_name(rest, &v, &v2) && v2) {
            *out = v;
            og_keylist_free(&kl);
            return OG_OK;
        }
    }
    og_keylist_free(&kl);
    uint64_t *all;
    size_t n;
    OG_TRY(og_table_list_versions(t, &all, &n));
    if (n) *out = all[n - 1];
    free(all);
    return OG_OK;
}

void og_table_set_cache(og_table *t, og_cache *cache) { t->cache = cache; }

og_cache *og_table_cache(const og_table *t) { return t->cache; }

void og_table_cache_forget_key(og_cache *cache, const char *key)
{
    const char *v = cache && strncmp(key, "tables/", 7) == 0 ? strstr(key, "/_versions/") : NULL;
    uint64_t version;
    if (!v || strchr(v + 11, '/') || !og_manifest_parse_name(v + 11, &version, NULL)) return;
    char ckey[4200];
    snprintf(ckey, sizeof ckey, "m:%.*s%llu", (int)(v + 1 - key), key, (unsigned long long)version);
    og_cache_remove(cache, ckey);
}

/* A cached manifest and the naming its file used. */
typedef struct cached_manifest {
    og_manifest m;
    int v1;
} cached_manifest;

static void cached_manifest_free(void *p)
{
    cached_manifest *c = p;
    og_manifest_free(&c->m);
    free(c);
}

static og_status load_uncached(og_table *t, uint64_t version, og_manifest *out, int *v1, size_t *bytes);

void og_table_i_cache_written(og_table *t, uint64_t version, const void *bytes, size_t len, int v1)
{
    if (!t->cache) return;
    cached_manifest *c = calloc(1, sizeof *c);
    if (!c) return;
    og_manifest_init(&c->m);
    c->v1 = v1;
    if (og_manifest_file_decode(bytes, len, &c->m) != OG_OK || c->m.version != version) {
        og_manifest_free(&c->m);
        free(c);
        og_error_clear();
        return;
    }
    char key[4200];
    og_table_i_cache_key(t, version, key, sizeof key);
    og_cache_entry *e;
    if (og_cache_put(t->cache, key, c, 2 * len + sizeof *c, cached_manifest_free, &e) == OG_OK) og_cache_entry_release(e);
    else og_error_clear();
}

/* The handle's version-number hint of a table ("vn:<prefix>" in the cache): the highest
 * number seen taken or reserved, and until when its numbers keep to this process's lane. */
typedef struct version_hint {
    uint64_t seen;
    int64_t lanes_until; /* ms; 0 = consecutive numbers */
} version_hint;

/* Lanes (og_table_i_version_lost): after another process took a number this one tried, its
 * writers of the table take only numbers ≡ lane (mod VERSION_LANES) for VERSION_LANES_MS, so
 * that processes with different lanes never try the same number; a loss inside the lane (two
 * processes drew the same one) draws another.  The lane is the process's: one draw serves
 * every table. */
#define VERSION_LANES 16
#define VERSION_LANES_MS (60LL * 1000)
static uint32_t version_lane; /* lane + 1; 0 = not drawn; under version_mu */

static void hint_free(void *p) { free(p); }

static int hint_get(og_table *t, version_hint *out)
{
    memset(out, 0, sizeof *out);
    char key[4200];
    snprintf(key, sizeof key, "vn:%s", t->prefix);
    og_cache_entry *e = t->cache ? og_cache_get(t->cache, key) : NULL;
    if (!e) return 0;
    *out = *(const version_hint *)og_cache_entry_value(e);
    og_cache_entry_release(e);
    return 1;
}

uint64_t og_table_i_version_seen(og_table *t)
{
    version_hint h;
    hint_get(t, &h);
    return h.seen;
}

/* Notes and reservations of one process are made one at a time, so that two writers of a
 * table reserving at once get different numbers. */
static pthread_mutex_t version_mu = PTHREAD_MUTEX_INITIALIZER;

static void hint_put_locked(og_table *t, const version_hint *h)
{
    if (!t->cache) return;
    char key[4200];
    snprintf(key, sizeof key, "vn:%s", t->prefix);
    version_hint *v = malloc(sizeof *v);
    if (!v) return;
    *v = *h;
    og_cache_remove(t->cache, key);
    og_cache_entry *e;
    if (og_cache_put(t->cache, key, v, sizeof *v + 64, hint_free, &e) == OG_OK) og_cache_entry_release(e);
    og_error_clear();
}

static void lane_draw_locked(void)
{
    uint32_t r = 0;
    if (og_random_bytes(&r, sizeof r) != OG_OK) r = (uint32_t)og_now_ms() ^ (uint32_t)getpid();
    uint32_t lane = r % VERSION_LANES;
    if (version_lane && lane == version_lane - 1) lane = (lane + 1) % VERSION_LANES; /* another one */
    version_lane = lane + 1;
}

void og_table_i_version_note(og_table *t, uint64_t version)
{
    if (!t->cache) return;
    pthread_mutex_lock(&version_mu);
    version_hint h;
    hint_get(t, &h);
    if (h.seen < version) {
        h.seen = version;
        hint_put_locked(t, &h);
    }
    pthread_mutex_unlock(&version_mu);
}

void og_table_i_version_lost(og_table *t, uint64_t version)
{
    if (!t->cache) return;
    pthread_mutex_lock(&version_mu);
    version_hint h;
    hint_get(t, &h);
    int64_t now = og_now_ms();
    int in_lane = h.lanes_until > now && version_lane && version % VERSION_LANES == version_lane - 1;
    if (!version_lane || in_lane) lane_draw_locked();
    if (h.seen < version) h.seen = version;
    h.lanes_until = now + VERSION_LANES_MS;
    hint_put_locked(t, &h);
    pthread_mutex_unlock(&version_mu);
}

uint64_t og_table_i_version_reserve(og_table *t, uint64_t at_least)
{
    pthread_mutex_lock(&version_mu);
    version_hint h;
    hint_get(t, &h); /* one lookup of the hint, as before reservations */
    uint64_t v = h.seen >= at_least ? h.seen + 1 : at_least;
    if (h.lanes_until > og_now_ms() && version_lane) {
        uint64_t lane = version_lane - 1;
        v += (lane + VERSION_LANES - v % VERSION_LANES) % VERSION_LANES;
    }
    h.seen = v;
    hint_put_locked(t, &h);
    pthread_mutex_unlock(&version_mu);
    return v;
}

void og_table_i_cache_key(const og_table *t, uint64_t version, char *out, size_t cap)
{
    snprintf(out, cap, "m:%s%llu", t->prefix, (unsigned long long)version);
}

og_status og_table_i_load(og_table *t, uint64_t version, og_manifest *out, int *v1)
{
    og_manifest_init(out);
    if (!t->cache) return load_uncached(t, version, out, v1, NULL);
    char key[4200];
    og_table_i_cache_key(t, version, key, sizeof key);
    og_cache_entry *e = og_cache_get(t->cache, key);
    if (!e) {
        cached_manifest *c = calloc(1, sizeof *c);
        if (!c) return og_err(OG_ERR_NOMEM, "out of memory");
        size_t bytes = 0;
        og_status st = load_uncached(t, version, &c->m, &c->v1, &bytes);
        if (st != OG_OK) {
            free(c);
            return st;
        }
        OG_TRY(og_cache_put(t->cache, key, c, 2 * bytes + sizeof *c, cached_manifest_free, &e));
    }
    const cached_manifest *c = og_cache_entry_value(e);
    og_status st = og_manifest_copy(out, &c->m);
    if (v1) *v1 = c->v1;
    og_cache_entry_release(e);
    return st;
}

static og_status load_uncached(og_table *t, uint64_t version, og_manifest *out, int *v1, size_t *bytes)
{
    og_manifest_init(out);
    if (version == 0) return og_err(OG_ERR_NOT_FOUND, "table %s: version 0 does not exist", t->dir);
    char rel[64], key[4096];
    OG_TRY(og_manifest_path(rel, sizeof rel, version));
    OG_TRY(og_table_i_key(t, rel, key, sizeof key));
    og_bytes b = {NULL, 0};
    og_status st = og_store_get(t->store, key, &b);
    int used_v1 = 0;
    if (st == OG_ERR_NOT_FOUND) {
        snprintf(rel, sizeof rel, "_versions/%llu.manifest", (unsigned long long)version);
        OG_TRY(og_table_i_key(t, rel, key, sizeof key));
        st = og_store_get(t->store, key, &b);
        used_v1 = 1;
    }
    if (st == OG_ERR_NOT_FOUND)
        return og_err(OG_ERR_NOT_FOUND, "table %s: version %llu not found", t->dir,
                      (unsigned long long)version);
    if (st != OG_OK) return st;
    if (bytes) *bytes = b.len;
    st = og_manifest_file_decode(b.data, b.len, out);
    og_bytes_free(&b);
    if (st != OG_OK) return og_err_wrap(st, "table %s version %llu", t->dir, (unsigned long long)version);
    if (out->version != version) {
        og_manifest_free(out);
        return og_err(OG_ERR_CORRUPT, "table %s: manifest %s holds version %llu", t->dir, key,
                      (unsigned long long)out->version);
    }
    if (out->reader_flags & ~(uint64_t)KNOWN_READER_FLAGS) {
        uint64_t f = out->reader_flags;
        og_manifest_free(out);
        return og_err(OG_ERR_UNSUPPORTED, "table %s version %llu needs reader features 0x%llx",
                      t->dir, (unsigned long long)version, (unsigned long long)f);
    }
    if (v1) *v1 = used_v1;
    return OG_OK;
}

og_status og_table_load(og_table *t, uint64_t version, og_manifest *out)
{
    return og_table_i_load(t, version, out, NULL);
}
