/*
 * store.c — the public face of the object store (store.h).  Validates every key before it
 * reaches an adapter, picks the adapter from the URI ("s3://" → S3, anything else → local
 * file system) and dispatches through the og_store_ops vtable (store_impl.h).  Also owns the
 * small shared helpers: key lists, heap mappings, handle allocation.
 */
#include "store/store_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/error.h"

/* Checks one segment [s, s+n) of a key; `what` is "key" or "prefix" for the message. */
static og_status segment_check(const char *what, const char *full, const char *s, size_t n)
{
    if (n == 0) return og_err(OG_ERR_INVALID, "invalid %s \"%s\": empty path segment", what, full);
    if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return og_err(OG_ERR_INVALID, "invalid %s \"%s\": \".\" or \"..\" segment", what, full);
    if (n > OG_STORE_SEGMENT_MAX)
        return og_err(OG_ERR_INVALID, "invalid %s \"%s\": segment longer than %d bytes", what,
                      full, OG_STORE_SEGMENT_MAX);
    size_t tl = strlen(OG_STORE_TMP_PREFIX);
    if (n >= tl && memcmp(s, OG_STORE_TMP_PREFIX, tl) == 0)
        return og_err(OG_ERR_INVALID, "invalid %s \"%s\": segments starting with \"%s\" are reserved",
                      what, full, OG_STORE_TMP_PREFIX);
    return OG_OK;
}

og_status og_store_key_check(const char *key)
{
    if (!key) return og_err(OG_ERR_INVALID, "invalid key: NULL");
    size_t len = strlen(key);
    if (len == 0) return og_err(OG_ERR_INVALID, "invalid key \"\": empty");
    if (len > OG_STORE_KEY_MAX)
        return og_err(OG_ERR_INVALID, "invalid key \"%.64s...\": longer than %d bytes", key,
                      OG_STORE_KEY_MAX);
    if (key[0] == '/') return og_err(OG_ERR_INVALID, "invalid key \"%s\": starts with '/'", key);
    if (key[len - 1] == '/') return og_err(OG_ERR_INVALID, "invalid key \"%s\": ends with '/'", key);
    const char *p = key;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        OG_TRY(segment_check("key", key, p, n));
        if (!slash) break;
        p = slash + 1;
    }
    return OG_OK;
}

og_status og_store_prefix_check(const char *prefix)
{
    if (!prefix) return og_err(OG_ERR_INVALID, "invalid list prefix: NULL");
    size_t len = strlen(prefix);
    if (len == 0) return OG_OK;
    if (len > OG_STORE_KEY_MAX)
        return og_err(OG_ERR_INVALID, "invalid list prefix \"%.64s...\": longer than %d bytes",
                      prefix, OG_STORE_KEY_MAX);
    if (prefix[0] == '/')
        return og_err(OG_ERR_INVALID, "invalid list prefix \"%s\": starts with '/'", prefix);
    const char *p = prefix;
    for (;;) {
        const char *slash = strchr(p, '/');
        if (!slash) break; /* the last, partial segment: anything can start a valid name */
        OG_TRY(segment_check("list prefix", prefix, p, (size_t)(slash - p)));
        p = slash + 1;
    }
    return OG_OK;
}

og_status og_store_new(const og_store_ops *ops, const char *uri, int is_local, void *impl,
                       og_store **out)
{
    *out = NULL;
    og_store *st = calloc(1, sizeof *st);
    char *u = strdup(uri);
    if (!st || !u) {
        free(st);
        free(u);
        return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    }
    st->ops = ops;
    st->uri = u;
    st->is_local = is_local;
    st->impl = impl;
    *out = st;
    return OG_OK;
}

/* 1 when uri starts with "<scheme>://", scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ). */
static int has_scheme(const char *uri)
{
    const char *p = uri;
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) return 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    return strncmp(p, "://", 3) == 0;
}

og_status og_store_open(og_store **out, const char *uri)
{
    if (!out) return og_err(OG_ERR_INVALID, "og_store_open: NULL output");
    *out = NULL;
    if (!uri || !*uri) return og_err(OG_ERR_INVALID, "invalid store URI: empty");
    og_status s;
    if (strncmp(uri, "s3://", 5) == 0) s = og_store_s3_open(out, uri);
    else if (has_scheme(uri) && strncmp(uri, "file://", 7) != 0)
        return og_err(OG_ERR_INVALID, "store \"%s\": unknown URI scheme", uri);
    else s = og_store_local_open(out, uri);
    if (s == OG_OK && (s = og_store_i_count_opened(*out)) != OG_OK) {
        og_store_close(*out);
        *out = NULL;
    }
    return s;
}

void og_store_close(og_store *st)
{
    if (!st) return;
    if (st->ops && st->ops->close) st->ops->close(st);
    free(st->uri);
    free(st);
}

const char *og_store_uri(const og_store *st) { return st ? st->uri : NULL; }

int og_store_is_local(const og_store *st) { return st ? st->is_local : 0; }

#define CHECK_STORE(st)                                                                \
    do {                                                                               \
        if (!(st)) return og_err(OG_ERR_INVALID, "%s: NULL store", __func__);          \
    } while (0)

og_status og_store_get(og_store *st, const char *key, og_bytes *out)
{
    CHECK_STORE(st);
    if (!out) return og_err(OG_ERR_INVALID, "og_store_get: NULL output");
    out->data = NULL;
    out->len = 0;
    OG_TRY(og_store_key_check(key));
    return st->ops->get(st, key, out);
}

og_status og_store_get_range(og_store *st, const char *key, uint64_t off, uint64_t len,
                             og_bytes *out)
{
    CHECK_STORE(st);
    if (!out) return og_err(OG_ERR_INVALID, "og_store_get_range: NULL output");
    out->data = NULL;
    out->len = 0;
    OG_TRY(og_store_key_check(key));
    return st->ops->get_range(st, key, off, len, out);
}

og_status og_store_head(og_store *st, const char *key, uint64_t *size_out)
{
    CHECK_STORE(st);
    OG_TRY(og_store_key_check(key));
    uint64_t dummy;
    return st->ops->head(st, key, size_out ? size_out : &dummy);
}

og_status og_store_stat(og_store *st, const char *key, uint64_t *size_out, int64_t *mtime_ms)
{
    CHECK_STORE(st);
    OG_TRY(og_store_key_check(key));
    uint64_t size = 0;
    int64_t mt = 0;
    og_status rc = st->ops->stat ? st->ops->stat(st, key, &size, &mt) : st->ops->head(st, key, &size);
    if (rc != OG_OK) return rc;
    if (size_out) *size_out = size;
    if (mtime_ms) *mtime_ms = mt;
    return OG_OK;
}

/* ---- the write journal (see store.h) ----------------------------------------------------- */

static _Thread_local og_store_journal *cur_journal;

void og_store_journal_begin(og_store_journal *j, og_store *st, const char *prefix)
{
    memset(j, 0, sizeof *j);
    j->st = st;
    j->prefix = prefix;
    j->outer = cur_journal;
    cur_journal = j;
}

void og_store_journal_end(og_store_journal *j)
{
    if (cur_journal == j) cur_journal = j->outer;
}

static void journal_note(og_store *st, const char *key)
{
    og_store_journal *j = cur_journal;
    if (!j || j->st != st || j->failed) return;
    if (j->prefix && strncmp(key, j->prefix, strlen(j->prefix)) != 0 &&
        !(j->prefix2 && strncmp(key, j->prefix2, strlen(j->prefix2)) == 0))
        return;
    if (og_keylist_push(&j->keys, key, strlen(key)) != OG_OK) j->failed = 1; /* then discard nothing */
}

void og_store_i_journal_note(og_store *st, const char *key) { journal_note(st, key); }

size_t og_store_journal_discard(og_store_journal *j)
{
    size_t n = 0;
    for (size_t i = j->keys.count; !j->failed && i-- > 0;) /* newest first: manifests before files */
        n += og_store_delete(j->st, j->keys.keys[i]) == OG_OK;
    og_keylist_free(&j->keys);
    return n;
}

void og_store_journal_free(og_store_journal *j) { og_keylist_free(&j->keys); }

void og_store_journal_adopt(og_store_journal *from)
{
    if (from->failed && cur_journal && cur_journal->st == from->st) cur_journal->failed = 1;
    for (size_t i = 0; i < from->keys.count; i++) journal_note(from->st, from->keys.keys[i]);
    og_keylist_free(&from->keys);
}

og_status og_store_put(og_store *st, const char *key, const void *data, size_t len)
{
    CHECK_STORE(st);
    OG_TRY(og_store_key_check(key));
    if (!data && len) return og_err(OG_ERR_INVALID, "put \"%s\": NULL data with length %zu", key, len);
    journal_note(st, key); /* before: a put that fails half-way may still have landed */
    return st->ops->put(st, key, data ? data : "", len);
}

og_status og_store_put_unsynced(og_store *st, const char *key, const void *data, size_t len)
{
    CHECK_STORE(st);
    OG_TRY(og_store_key_check(key));
    if (!data && len) return og_err(OG_ERR_INVALID, "put \"%s\": NULL data with length %zu", key, len);
    journal_note(st, key);
    if (!st->ops->put_unsynced) return st->ops->put(st, key, data ? data : "", len);
    return st->ops->put_unsynced(st, key, data ? data : "", len);
}

og_status og_store_put_if_absent(og_store *st, const char *key, const void *data, size_t len)
{
    CHECK_STORE(st);
    OG_TRY(og_store_key_check(key));
    if (!data && len)
        return og_err(OG_ERR_INVALID, "put_if_absent \"%s\": NULL data with length %zu", key, len);
    og_status rc = st->ops->put_if_absent(st, key, data ? data : "", len);
    if (rc == OG_OK) journal_note(st, key); /* only a key we certainly created is ours */
    return rc;
}

og_status og_store_put_if_absent_stream(og_store *st, const char *key, og_store_fill_fn fill, void *ctx)
{
    CHECK_STORE(st);
    OG_TRY(og_store_key_check(key));
    if (!fill) return og_err(OG_ERR_INVALID, "put_if_absent \"%s\": no fill function", key);
    og_status rc;
    if (st->ops->put_if_absent_stream) {
        rc = st->ops->put_if_absent_stream(st, key, fill, ctx);
    } else { /* no files to write pieces to: the whole object, then the usual put */
        og_buf b = OG_BUF_INIT;
        const void *p;
        size_t n;
        while ((rc = fill(ctx, &p, &n)) == OG_OK && n) {
            rc = og_buf_append(&b, p, n);
            if (rc != OG_OK) break;
        }
        if (rc == OG_OK) rc = st->ops->put_if_absent(st, key, b.data ? (const void *)b.data : "", b.len);
        og_buf_free(&b);
    }
    if (rc == OG_OK) journal_note(st, key);
    return rc;
}

og_status og_store_list(og_store *st, const char *prefix, const char *start_after, size_t limit,
                        og_keylist *out)
{
    CHECK_STORE(st);
    if (!out) return og_err(OG_ERR_INVALID, "og_store_list: NULL output");
    out->keys = NULL;
    out->count = 0;
    if (!prefix) prefix = "";
    OG_TRY(og_store_prefix_check(prefix));
    og_status s = st->ops->list(st, prefix, start_after, limit, out);
    if (s != OG_OK) og_keylist_free(out);
    return s;
}

void og_keylist_free(og_keylist *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->count; i++) free(l->keys[i]);
    free(l->keys);
    l->keys = NULL;
    l->count = 0;
}

og_status og_keylist_push(og_keylist *l, const char *key, size_t len)
{
    /* og_keylist has no capacity field: the capacity is implied, 0 when empty, else the
     * smallest power of two >= max(count, 8).  So it is full exactly when count is 0 or a
     * power of two >= 8. */
    size_t n = l->count;
    if (n == 0 || (n >= 8 && (n & (n - 1)) == 0)) {
        size_t cap = n ? n * 2 : 8;
        char **k = realloc(l->keys, cap * sizeof *k);
        if (!k) return og_err(OG_ERR_NOMEM, "list: out of memory");
        l->keys = k;
    }
    char *copy = malloc(len + 1);
    if (!copy) return og_err(OG_ERR_NOMEM, "list: out of memory");
    memcpy(copy, key, len);
    copy[len] = '\0';
    l->keys[l->count++] = copy;
    return OG_OK;
}

og_status og_store_delete(og_store *st, const char *key)
{
    CHECK_STORE(st);
    OG_TRY(og_store_key_check(key));
    return st->ops->delete(st, key);
}

og_status og_mapping_from_bytes(og_bytes *b, og_mapping **out)
{
    og_mapping *m = calloc(1, sizeof *m);
    if (!m) return og_err(OG_ERR_NOMEM, "map: out of memory");
    m->kind = OG_MAPPING_HEAP;
    m->base = b->data;
    m->data = b->data;
    m->size = b->len;
    b->data = NULL;
    b->len = 0;
    *out = m;
    return OG_OK;
}

og_status og_store_watch(og_store *st, const char *prefix)
{
    CHECK_STORE(st);
    if (!prefix || !*prefix || prefix[strlen(prefix) - 1] != '/')
        return og_err(OG_ERR_INVALID, "og_store_watch: the prefix must name a directory (end in '/')");
    OG_TRY(og_store_prefix_check(prefix));
    if (!st->ops->watch) return og_err(OG_ERR_UNSUPPORTED, "a %s store cannot watch for changes", st->ops->name);
    return st->ops->watch(st, prefix);
}

uint64_t og_store_change_count(og_store *st)
{
    return st && st->ops->change_count ? st->ops->change_count(st) : 0;
}

og_status og_store_lock(og_store *st, const char *name, int64_t wait_ms, int *fd)
{
    *fd = -1;
    CHECK_STORE(st);
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 245) return og_err(OG_ERR_INVALID, "og_store_lock: a lock name has 1 to 245 bytes");
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '%' || c == '-'))
            return og_err(OG_ERR_INVALID, "og_store_lock: lock name \"%s\" has a character outside [A-Za-z0-9._%%-]", name);
    }
    if (!st->ops->lock) return og_err(OG_ERR_UNSUPPORTED, "a %s store cannot lock", st->ops->name);
    return st->ops->lock(st, name, wait_ms < 0 ? 0 : wait_ms, fd);
}

void og_store_unlock(int fd)
{
    if (fd >= 0) close(fd); /* closing the last descriptor of the open file drops its flock */
}

/* Descriptors og_store_open_fd hands out stay open as long as their reader lives (a key map
 * per fragment, a topology per edge type), so the process-wide count is bounded: a quarter of
 * the soft RLIMIT_NOFILE, at most OG_STORE_READ_FDS_MAX — past it readers map instead. */
static atomic_int open_fds;
static int fd_budget;
static pthread_once_t fd_budget_once = PTHREAD_ONCE_INIT;
static void fd_budget_init(void)
{
    struct rlimit rl;
    rlim_t soft = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    fd_budget = soft == RLIM_INFINITY || soft / 4 > OG_STORE_READ_FDS_MAX ? OG_STORE_READ_FDS_MAX : (int)(soft / 4);
}

og_status og_store_open_fd(og_store *st, const char *key, int *fd, uint64_t *size_out)
{
    CHECK_STORE(st);
    if (!fd || !size_out) return og_err(OG_ERR_INVALID, "og_store_open_fd: NULL output");
    *fd = -1;
    *size_out = 0;
    OG_TRY(og_store_key_check(key));
    if (!st->ops->open_fd) return og_err(OG_ERR_UNSUPPORTED, "a %s store has no files to read", st->ops->name);
    pthread_once(&fd_budget_once, fd_budget_init);
    if (atomic_fetch_add(&open_fds, 1) >= fd_budget) {
        atomic_fetch_sub(&open_fds, 1);
        return og_err(OG_ERR_LIMIT, "store: %d read descriptors are open (the bound)", fd_budget);
    }
    og_status s = st->ops->open_fd(st, key, fd, size_out);
    if (s != OG_OK) {
        atomic_fetch_sub(&open_fds, 1);
        *fd = -1;
    }
    return s;
}

void og_store_close_fd(int fd)
{
    if (fd < 0) return;
    close(fd);
    atomic_fetch_sub(&open_fds, 1);
}

int og_store_open_fds(void) { return atomic_load(&open_fds); }

og_status og_store_map(og_store *st, const char *key, og_mapping **out)
{
    CHECK_STORE(st);
    if (!out) return og_err(OG_ERR_INVALID, "og_store_map: NULL output");
    *out = NULL;
    OG_TRY(og_store_key_check(key));
    if (st->ops->map) return st->ops->map(st, key, out);
    og_bytes b = {NULL, 0};
    OG_TRY(st->ops->get(st, key, &b));
    og_status s = og_mapping_from_bytes(&b, out);
    og_bytes_free(&b);
    return s;
}

const uint8_t *og_mapping_data(const og_mapping *m)
{
    static const uint8_t empty[1];
    if (!m) return NULL;
    return m->data ? m->data : empty;
}

size_t og_mapping_size(const og_mapping *m) { return m ? m->size : 0; }

void og_mapping_release(og_mapping *m)
{
    if (!m) return;
    if (m->kind == OG_MAPPING_MMAP) {
        if (m->map_len) munmap(m->base, m->map_len); /* can only fail on a bad argument */
    } else {
        free(m->base);
    }
    free(m);
}
