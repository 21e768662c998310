/*
 * store_local.c — the local file-system adapter of the object store (STORAGE.md §2).
 *
 * A key maps to the file <root>/<key>.  Objects become visible only whole:
 *   put            write <dir>/.tmp-<uuid>, fsync it, rename() it onto the key, fsync <dir>
 *   put_if_absent  a name already there loses at once; else write <dir>/.tmp-<uuid>, fsync
 *                  it, link() it to the key — link never replaces an existing name, so
 *                  exactly one racer succeeds and every other gets EEXIST — then unlink
 *                  the temp and fsync <dir>
 *   put_unsynced   the file's bytes overwritten in place, no temp, no fsync (a hint nobody
 *                  needs whole or after a crash)
 * Parent directories are created on demand (the parent of each new directory is fsynced so
 * the directory entry itself survives a crash).  A crash can leave ".tmp-" files behind; they
 * are never returned by list() and key rules forbid keys that look like them, so they are
 * invisible garbage for `cleanup`.  delete() removes the file and then any directories it
 * left empty, so the key space behaves like a flat object store.
 *
 * Change watch (store.h og_store_watch): one inotify instance per process, shared by every
 * local store.  The kernel queues an event inside the very system call that changes a
 * watched directory (link, rename, unlink, write), so a non-blocking read of the queue made
 * after that call returned is certain to see it: that is the whole proof that a changed
 * counter is never missed.  Only file systems whose every writer is this kernel qualify (a
 * fixed list below; NFS and other network file systems do not: their remote writes raise no
 * event).  A forked child gets its own instance (pthread_atfork), so it never drains the
 * parent's queue.
 */
#include "store/store_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#ifdef __linux__
#include <sys/inotify.h>
#include <sys/vfs.h>
#endif

#include "util/error.h"
#include "util/fault.h"
#include "util/id.h"

typedef struct local_store {
    char *root;     /* absolute, normalised, with a trailing '/' ("/data/g/" or "/") */
    size_t root_len;
} local_store;

/* How often put retries when a parent directory vanishes under it (a concurrent delete
 * removing directories it emptied). */
#define MKDIR_RETRIES 8

static local_store *L(og_store *st) { return (local_store *)st->impl; }

/* ---- paths ---------------------------------------------------------------------------- */

/* malloc'd "<root><key>". */
static og_status key_path(local_store *ls, const char *key, char **out)
{
    size_t kl = strlen(key);
    char *p = malloc(ls->root_len + kl + 1);
    if (!p) return og_err(OG_ERR_NOMEM, "store key \"%s\": out of memory", key);
    memcpy(p, ls->root, ls->root_len);
    memcpy(p + ls->root_len, key, kl + 1);
    *out = p;
    return OG_OK;
}

/* Normalises a local path (relative to the cwd when not absolute) into "/a/b/" form:
 * "." and empty segments dropped, ".." pops.  malloc'd. */
static og_status normalise_root(const char *path, char **out)
{
    char *cwd = NULL;
    if (path[0] != '/') {
        cwd = getcwd(NULL, 0);
        if (!cwd) return og_err_errno(errno, "store \"%s\": getcwd", path);
    }
    size_t cap = (cwd ? strlen(cwd) : 0) + strlen(path) + 3;
    char *res = malloc(cap);
    if (!res) {
        free(cwd);
        return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", path);
    }
    size_t n = 0;
    res[n++] = '/';
    const char *parts[2] = {cwd ? cwd : "", path};
    for (int i = 0; i < 2; i++) {
        const char *p = parts[i];
        while (*p) {
            while (*p == '/') p++;
            if (!*p) break;
            const char *e = strchr(p, '/');
            size_t sl = e ? (size_t)(e - p) : strlen(p);
            if (sl == 1 && p[0] == '.') {
                /* skip */
            } else if (sl == 2 && p[0] == '.' && p[1] == '.') {
                if (n > 1) { /* drop the last "seg/" */
                    n--;
                    while (n > 1 && res[n - 1] != '/') n--;
                }
            } else {
                memcpy(res + n, p, sl);
                n += sl;
                res[n++] = '/';
            }
            p += sl;
        }
    }
    res[n] = '\0';
    free(cwd);
    *out = res;
    return OG_OK;
}

/* ---- small syscall helpers -------------------------------------------------------------- */

/* fsyncs the directory at `path` (EINVAL: the file system cannot sync directories; accepted). */
static og_status fsync_dir(const char *path, const char *key)
{
    int fd;
    do {
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return og_err_errno(errno, "store key \"%s\": open directory %s", key, path);
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL) return og_err_errno(e, "store key \"%s\": fsync directory %s", key, path);
    return OG_OK;
}

/* fsyncs the directory that contains `path` (path is "/…/name"; it has a '/'). */
static og_status fsync_parent(char *path, const char *key)
{
    char *slash = strrchr(path, '/');
    if (!slash) return OG_OK;
    if (slash == path) return fsync_dir("/", key);
    *slash = '\0';
    og_status s = fsync_dir(path, key);
    *slash = '/';
    return s;
}

/* mkdir -p for every directory of `path` from byte `from` on (path[from-1] is a '/' of an
 * existing directory) up to, not including, the last segment when `last_is_file`.  Each newly
 * created directory's parent is fsynced.  With `sync_existing`, so is the parent of each
 * directory found already there: another writer may have just created it and not yet synced
 * its entry, and we must not acknowledge an object whose directory could vanish in a crash. */
static og_status make_dirs(char *path, size_t from, int last_is_file, int sync_existing,
                           const char *what)
{
    size_t len = strlen(path);
    for (size_t i = from; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        if (path[i] == '\0' && last_is_file) break;
        if (i == 0 || path[i - 1] == '/') continue; /* "//" or leading '/' */
        char saved = path[i];
        path[i] = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        og_status s = OG_OK;
        if (rc == 0) {
            s = fsync_parent(path, what);
        } else if (e == EEXIST) {
            struct stat sb;
            if (stat(path, &sb) != 0)
                s = og_err_errno(errno, "store \"%s\": stat %s", what, path);
            else if (!S_ISDIR(sb.st_mode))
                s = og_err(OG_ERR_IO, "store \"%s\": %s exists and is not a directory", what, path);
            else if (sync_existing)
                s = fsync_parent(path, what);
        } else {
            s = og_err_errno(e, "store \"%s\": mkdir %s", what, path);
        }
        path[i] = saved;
        if (s != OG_OK) return s;
    }
    return OG_OK;
}

/* Bytes per write(2).  The page cache keeps a file in folios as large as the writes that
 * made it (Linux 6.x), and a reader's fault on a mapped page maps its whole folio: right after
 * a bulk load wrote each data file in one call, the first queries' point reads mapped ~2.5x
 * the file pages they mapped once the files had been read back from disk (docs/engine.md
 * "Memory").  64 KiB writes leave 64 KiB folios, the reader's usual fault-around. */
#define WRITE_CHUNK ((size_t)64 << 10)

static og_status write_all(int fd, const uint8_t *p, size_t n, const char *key, const char *tmp)
{
    while (n > 0) {
        size_t chunk = n > WRITE_CHUNK ? WRITE_CHUNK : n;
        ssize_t w = write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return og_err_errno(errno, "store key \"%s\": write %s", key, tmp);
        }
        if (w == 0) return og_err(OG_ERR_IO, "store key \"%s\": write %s made no progress", key, tmp);
        p += w;
        n -= (size_t)w;
    }
    return OG_OK;
}

/* Reads exactly n bytes at off unless EOF comes first; *got tells how many. */
static og_status pread_all(int fd, uint8_t *p, size_t n, uint64_t off, size_t *got, const char *key)
{
    size_t done = 0;
    while (done < n) {
        size_t chunk = n - done > ((size_t)1 << 30) ? ((size_t)1 << 30) : n - done;
        ssize_t r = pread(fd, p + done, chunk, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            return og_err_errno(errno, "store key \"%s\": read", key);
        }
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return OG_OK;
}

/* Opens an object for reading; a missing key, a path through a non-directory or a directory
 * at the key are all OG_ERR_NOT_FOUND.  *size_out gets the object's size. */
static og_status open_object(local_store *ls, const char *key, int *fd_out, uint64_t *size_out)
{
    char *path = NULL;
    OG_TRY(key_path(ls, key, &path));
    int fd;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* no hang on a fifo */
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        free(path);
        if (e == ENOENT || e == ENOTDIR) return og_err(OG_ERR_NOT_FOUND, "store key \"%s\" not found", key);
        return og_err_errno(e, "store key \"%s\": open", key);
    }
    free(path);
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return og_err_errno(e, "store key \"%s\": fstat", key);
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return og_err(OG_ERR_NOT_FOUND, "store key \"%s\" not found (not a regular file)", key);
    }
    *fd_out = fd;
    *size_out = (uint64_t)sb.st_size;
    return OG_OK;
}

/* ---- reads -------------------------------------------------------------------------------- */

static og_status read_span(local_store *ls, const char *key, uint64_t off, uint64_t len, int whole,
                           og_bytes *out)
{
    int fd;
    uint64_t size;
    OG_TRY(open_object(ls, key, &fd, &size));
    uint64_t n = 0;
    if (whole) {
        off = 0;
        n = size;
    } else if (off < size) {
        n = size - off < len ? size - off : len;
    }
    if (n > (uint64_t)SIZE_MAX - 1) {
        close(fd);
        return og_err(OG_ERR_LIMIT, "store key \"%s\": %llu bytes do not fit in memory", key,
                      (unsigned long long)n);
    }
    uint8_t *buf = malloc((size_t)n + 1); /* +1: never malloc(0) */
    if (!buf) {
        close(fd);
        return og_err(OG_ERR_NOMEM, "store key \"%s\": out of memory for %llu bytes", key,
                      (unsigned long long)n);
    }
    size_t got = 0;
    og_status s = n ? pread_all(fd, buf, (size_t)n, off, &got, key) : OG_OK;
    close(fd); /* read-only descriptor: close cannot lose data */
    if (s != OG_OK) {
        free(buf);
        return s;
    }
    out->data = buf;
    out->len = got;
    return OG_OK;
}

static og_status local_get(og_store *st, const char *key, og_bytes *out)
{
    return read_span(L(st), key, 0, 0, 1, out);
}

static og_status local_get_range(og_store *st, const char *key, uint64_t off, uint64_t len,
                                 og_bytes *out)
{
    return read_span(L(st), key, off, len, 0, out);
}

static og_status local_stat(og_store *st, const char *key, uint64_t *size_out, int64_t *mtime_ms)
{
    char *path = NULL;
    OG_TRY(key_path(L(st), key, &path));
    struct stat sb;
    int rc = stat(path, &sb);
    int e = errno;
    free(path);
    if (rc != 0) {
        if (e == ENOENT || e == ENOTDIR) return og_err(OG_ERR_NOT_FOUND, "store key \"%s\" not found", key);
        return og_err_errno(e, "store key \"%s\": stat", key);
    }
    if (!S_ISREG(sb.st_mode))
        return og_err(OG_ERR_NOT_FOUND, "store key \"%s\" not found (not a regular file)", key);
    *size_out = (uint64_t)sb.st_size;
    *mtime_ms = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
    return OG_OK;
}

static og_status local_head(og_store *st, const char *key, uint64_t *size_out)
{
    int64_t mt;
    return local_stat(st, key, size_out, &mt);
}

/* Maps `size` bytes of fd read-only at an address that is 4 KiB past a 2 MiB boundary (the
 * file's offset 0 included), so no 2 MiB stretch of the file can be mapped as one huge page.
 *
 * Why: since Linux 6.x a file's page cache holds large folios (up to 2 MiB for a file written
 * or read in big runs), and a read fault in a mapping whose address is aligned with the file
 * maps the whole 2 MiB folio into the process at once (FilePmdMapped).  A key lookup touches
 * three pages of a key map and a small traversal a few pages of the topology, but each touch
 * charged the process 2 MiB of RSS: at 5M nodes / 25M edges 100 lookups left the five 28 MB key
 * maps wholly resident, and 100 one-hop counts 123 MB of the 480 MB topology (docs/benchmarks.md
 * "Scaling").  Off that alignment the kernel maps pages, with its usual fault-around (64 KiB
 * around the touched page): the same 600 random touches of the topology map 38 MB instead of
 * 428 MB, for ~30 more minor faults per MiB a sequential scan reads.  MADV_NOHUGEPAGE changes
 * neither on the kernels measured.  Falls back to a plain mapping when the address space cannot
 * spare the extra 2 MiB.
 *
 * No madvise(MADV_RANDOM): it does not turn fault-around off.  Linux skips fault-around only
 * for a mapping without ->map_pages or one registered with userfaultfd; MADV_RANDOM only stops
 * readahead, and fault-around maps pages already cached.  On 6.18, 600 random touches of a
 * cached 512 MiB file mapped like this cost 62 KiB of RSS a touch with or without it, and the
 * 5M and 10M bench query processes' RSS after each query kind stayed within 0.1 MiB
 * (bench/graph/fault_around.c; docs/benchmarks.md "Scaling").  It does help for a file not in
 * the page cache (4.4 KiB a touch: the fault reads and maps its page alone), but then a
 * sequential read goes a page at a time (64 MiB in 0.66–0.87 s instead of 21–28 ms), and the
 * files a query maps are cached after a load, an optimize, or the topology's prefetch. */
#define MAP_HUGE_SPAN ((size_t)2 << 20)
static void *map_unaligned(int fd, size_t size)
{
    if (size < MAP_HUGE_SPAN) return mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), reserve = size + MAP_HUGE_SPAN + page;
    uint8_t *r = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    uintptr_t at = (((uintptr_t)r + MAP_HUGE_SPAN - 1) & ~(uintptr_t)(MAP_HUGE_SPAN - 1)) + page;
    uint8_t *p = mmap((void *)at, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        munmap(r, reserve);
        return mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    /* give back the reservation around the file's pages (size is rounded up to whole pages) */
    size_t used = (size + page - 1) & ~(page - 1);
    if (p > r) munmap(r, (size_t)(p - r));
    if (p + used < r + reserve) munmap(p + used, (size_t)(r + reserve - (p + used)));
    return p;
}

static og_status local_map(og_store *st, const char *key, og_mapping **out)
{
    int fd;
    uint64_t size;
    OG_TRY(open_object(L(st), key, &fd, &size));
    if (size > (uint64_t)SIZE_MAX) {
        close(fd);
        return og_err(OG_ERR_LIMIT, "store key \"%s\": too large to map", key);
    }
    og_mapping *m = calloc(1, sizeof *m);
    if (!m) {
        close(fd);
        return og_err(OG_ERR_NOMEM, "store key \"%s\": out of memory", key);
    }
    m->kind = OG_MAPPING_MMAP;
    m->size = (size_t)size;
    if (size > 0) {
        void *p = map_unaligned(fd, (size_t)size);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            free(m);
            return og_err_errno(e, "store key \"%s\": mmap", key);
        }
        m->base = p;
        m->map_len = (size_t)size;
        m->data = p;
    }
    close(fd); /* the mapping keeps the file alive */
    *out = m;
    return OG_OK;
}

static og_status local_open_fd(og_store *st, const char *key, int *fd, uint64_t *size_out)
{
    return open_object(L(st), key, fd, size_out);
}

/* ---- writes ------------------------------------------------------------------------------- */

/* What a temp file gets: data[0..len), or (fill != NULL) the pieces fill gives
 * (og_store_put_if_absent_stream). */
typedef struct temp_src {
    const void *data;
    size_t len;
    og_store_fill_fn fill;
    void *ctx;
} temp_src;

static og_status write_src(int fd, const temp_src *src, const char *key, const char *tmp)
{
    if (!src->fill) return write_all(fd, src->data, src->len, key, tmp);
    for (;;) {
        const void *p;
        size_t n;
        OG_TRY(src->fill(src->ctx, &p, &n));
        if (!n) return OG_OK;
        OG_TRY(write_all(fd, p, n, key, tmp));
    }
}

static og_status write_temp_src(local_store *ls, char *path, const char *key, const temp_src *src, int sync,
                                char **tmp_out);

/* Writes `data` to a fresh temp file beside `path` (path = "<root><key>") and fsyncs it
 * (unless !sync).  Creates missing parent directories.  *tmp_out is malloc'd; on error
 * nothing is left. */
static og_status write_temp(local_store *ls, char *path, const char *key, const void *data,
                            size_t len, int sync, char **tmp_out)
{
    temp_src src = {data, len, NULL, NULL};
    return write_temp_src(ls, path, key, &src, sync, tmp_out);
}

static og_status write_temp_src(local_store *ls, char *path, const char *key, const temp_src *src, int sync,
                                char **tmp_out)
{
    char *slash = strrchr(path, '/'); /* always present: path starts with the root's '/' */
    size_t dir_len = (size_t)(slash - path) + 1;
    char *tmp = malloc(dir_len + strlen(OG_STORE_TMP_PREFIX) + OG_UUID_LEN + 1);
    if (!tmp) return og_err(OG_ERR_NOMEM, "store key \"%s\": out of memory", key);
    char uuid[OG_UUID_LEN + 1];
    og_status s = og_uuid_new(uuid);
    if (s != OG_OK) {
        free(tmp);
        return og_err_wrap(s, "store key \"%s\": temp name", key);
    }
    memcpy(tmp, path, dir_len);
    strcpy(tmp + dir_len, OG_STORE_TMP_PREFIX);
    strcat(tmp, uuid);

    int fd = -1;
    for (int attempt = 0;; attempt++) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) break;
        int e = errno;
        if (e == EINTR) continue;
        if (e == ENOENT && attempt < MKDIR_RETRIES) {
            /* A parent directory is missing: create them (the root itself exists). */
            s = make_dirs(path, ls->root_len, 1, 1, key);
            if (s != OG_OK) {
                free(tmp);
                return s;
            }
            continue;
        }
        free(tmp);
        return og_err_errno(e, "store key \"%s\": create temp file", key);
    }
    s = write_src(fd, src, key, tmp);
    if (s == OG_OK) og_fault_point("store.put.after_write");
    if (s == OG_OK && sync && fsync(fd) != 0) s = og_err_errno(errno, "store key \"%s\": fsync %s", key, tmp);
    if (close(fd) != 0 && s == OG_OK) s = og_err_errno(errno, "store key \"%s\": close %s", key, tmp);
    if (s != OG_OK) {
        unlink(tmp); /* best effort; a leftover temp is invisible anyway */
        free(tmp);
        return s;
    }
    *tmp_out = tmp;
    return OG_OK;
}

static og_status put_file(og_store *st, const char *key, const void *data, size_t len, int sync)
{
    local_store *ls = L(st);
    char *path = NULL, *tmp = NULL;
    OG_TRY(key_path(ls, key, &path));
    og_status s = write_temp(ls, path, key, data, len, sync, &tmp);
    if (s != OG_OK) {
        free(path);
        return s;
    }
    og_fault_point("store.put.before_publish");
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        s = og_err_errno(e, "store key \"%s\": rename temp onto key", key);
    } else if (sync) {
        s = fsync_parent(path, key);
    }
    free(tmp);
    free(path);
    return s;
}

static og_status local_put(og_store *st, const char *key, const void *data, size_t len)
{
    return put_file(st, key, data, len, 1);
}

/* store.h og_store_put_unsynced: the object's bytes replaced in place, not flushed.  No temp
 * file and no rename: overwriting the object frees no inode and creates none after the
 * first, which matters on ext4 without a journal, where every freed inode is skipped (and
 * read) by each file creation nearby for the next 5 to 35 s (docs/benchmarks.md "Fleet").
 * The price: a reader racing the write may see a mix of old and new bytes or a short file,
 * and a crash may leave anything — which the one caller, the head hint, tolerates. */
static og_status local_put_unsynced(og_store *st, const char *key, const void *data, size_t len)
{
    local_store *ls = L(st);
    char *path = NULL;
    OG_TRY(key_path(ls, key, &path));
    int fd = -1;
    og_status s = OG_OK;
    for (int attempt = 0;; attempt++) {
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) break;
        int e = errno;
        if (e == EINTR) continue;
        if (e == ENOENT && attempt < MKDIR_RETRIES && (s = make_dirs(path, ls->root_len, 1, 1, key)) == OG_OK)
            continue;
        if (s == OG_OK) s = og_err_errno(e, "store key \"%s\": open", key);
        free(path);
        return s;
    }
    struct stat sb;
    size_t done = 0;
    while (s == OG_OK && done < len) {
        size_t chunk = len - done > WRITE_CHUNK ? WRITE_CHUNK : len - done; /* (folios: write_all) */
        ssize_t w = pwrite(fd, (const uint8_t *)data + done, chunk, (off_t)done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) s = og_err_errno(w < 0 ? errno : EIO, "store key \"%s\": write", key);
        else done += (size_t)w;
    }
    if (s == OG_OK) og_fault_point("store.put.after_write");
    if (s == OG_OK && fstat(fd, &sb) == 0 && (uint64_t)sb.st_size > len && ftruncate(fd, (off_t)len) != 0)
        s = og_err_errno(errno, "store key \"%s\": truncate", key);
    if (s == OG_OK) og_fault_point("store.put.before_publish");
    if (close(fd) != 0 && s == OG_OK) s = og_err_errno(errno, "store key \"%s\": close", key);
    free(path);
    return s;
}

static og_status put_if_absent_src(og_store *st, const char *key, const temp_src *src);

static og_status local_put_if_absent(og_store *st, const char *key, const void *data, size_t len)
{
    temp_src src = {data, len, NULL, NULL};
    return put_if_absent_src(st, key, &src);
}

static og_status local_put_if_absent_stream(og_store *st, const char *key, og_store_fill_fn fill, void *ctx)
{
    temp_src src = {NULL, 0, fill, ctx};
    return put_if_absent_src(st, key, &src);
}

static og_status put_if_absent_src(og_store *st, const char *key, const temp_src *src)
{
    local_store *ls = L(st);
    char *path = NULL, *tmp = NULL;
    OG_TRY(key_path(ls, key, &path));
    /* A name already taken loses without writing and flushing a temp file first (a writer
     * probing for a free table version number meets several); link() below still decides
     * every race this look misses. */
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        free(path);
        return og_err(OG_ERR_ALREADY_EXISTS, "store key \"%s\" already exists", key);
    }
    og_status s = write_temp_src(ls, path, key, src, 1, &tmp);
    if (s != OG_OK) {
        free(path);
        return s;
    }
    og_fault_point("store.put.before_publish");
    /* link() fails with EEXIST if the name exists — even as a directory — and never replaces
     * it: the kernel's create-exclusive, the local compare-and-swap. */
    int rc = link(tmp, path);
    int e = errno;
    if (rc != 0) {
        if (e == EEXIST)
            s = og_err(OG_ERR_ALREADY_EXISTS, "store key \"%s\" already exists", key);
        else
            s = og_err_errno(e, "store key \"%s\": link temp to key", key);
    }
    if (unlink(tmp) != 0 && s == OG_OK)
        s = og_err_errno(errno, "store key \"%s\": unlink temp %s", key, tmp);
    /* Sync the directory whether we won or not: on a win it makes the new name durable;
     * the unlinked temp is harmless either way. */
    if (rc == 0 && s == OG_OK) s = fsync_parent(path, key);
    free(tmp);
    free(path);
    return s;
}

static og_status local_delete(og_store *st, const char *key)
{
    local_store *ls = L(st);
    char *path = NULL;
    OG_TRY(key_path(ls, key, &path));
    if (unlink(path) != 0) {
        int e = errno;
        free(path);
        if (e == ENOENT || e == ENOTDIR || e == EISDIR || e == EPERM) {
            /* EISDIR/EPERM: the name is a directory, which is not an object. */
            if (e == EPERM) {
                struct stat sb;
                char *p2 = NULL;
                OG_TRY(key_path(ls, key, &p2));
                int isdir = stat(p2, &sb) == 0 && S_ISDIR(sb.st_mode);
                free(p2);
                if (!isdir) return og_err_errno(e, "store key \"%s\": unlink", key);
            }
            return og_err(OG_ERR_NOT_FOUND, "store key \"%s\" not found", key);
        }
        return og_err_errno(e, "store key \"%s\": unlink", key);
    }
    /* Remove the directories this left empty, bottom up, never the root.  ENOTEMPTY/EEXIST
     * (still used), ENOENT (someone else removed it) all just stop the walk. */
    for (;;) {
        char *slash = strrchr(path + ls->root_len, '/');
        if (!slash) break;
        *slash = '\0';
        if (rmdir(path) != 0) break;
    }
    free(path);
    return OG_OK;
}

/* ---- list --------------------------------------------------------------------------------- */

typedef struct entry {
    char *name;
    size_t len;
    int is_dir;
} entry;

/* Byte i of the entry's sort key: its name, plus a '/' for a directory.  Sorting siblings by
 * that key makes a depth-first walk emit whole keys in bytewise order ("a-b" < "a/x"). */
static int entry_byte(const entry *e, size_t i)
{
    if (i < e->len) return (unsigned char)e->name[i];
    if (i == e->len && e->is_dir) return '/';
    return -1;
}

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    for (size_t i = 0;; i++) {
        int cx = entry_byte(x, i), cy = entry_byte(y, i);
        if (cx != cy) return cx < cy ? -1 : 1;
        if (cx < 0) return 0;
    }
}

typedef struct list_ctx {
    local_store *ls;
    const char *prefix;      /* the whole prefix */
    const char *start_after; /* may be NULL */
    size_t limit;
    og_keylist *out;
    char *key;  /* the current directory's key prefix ("" or "a/b/"), grown as we descend */
    size_t cap;
} list_ctx;

static int list_full(const list_ctx *c) { return c->limit && c->out->count >= c->limit; }

static og_status key_reserve(list_ctx *c, size_t need)
{
    if (need <= c->cap) return OG_OK;
    size_t cap = c->cap ? c->cap : 256;
    while (cap < need) cap *= 2;
    char *k = realloc(c->key, cap);
    if (!k) return og_err(OG_ERR_NOMEM, "list \"%s\": out of memory", c->prefix);
    c->key = k;
    c->cap = cap;
    return OG_OK;
}

static void free_entries(entry *ents, size_t n)
{
    for (size_t i = 0; i < n; i++) free(ents[i].name);
    free(ents);
}

/* Reads, filters and sorts the entries of the directory whose key prefix is c->key[0..klen). */
static og_status read_dir(list_ctx *c, size_t klen, const char *partial, entry **ents_out,
                          size_t *n_out)
{
    *ents_out = NULL;
    *n_out = 0;
    size_t rl = c->ls->root_len;
    char *path = malloc(rl + klen + 1);
    if (!path) return og_err(OG_ERR_NOMEM, "list \"%s\": out of memory", c->prefix);
    memcpy(path, c->ls->root, rl);
    memcpy(path + rl, c->key, klen);
    path[rl + klen] = '\0';
    DIR *d = opendir(path);
    if (!d) {
        int e = errno;
        free(path);
        if (e == ENOENT || e == ENOTDIR) return OG_OK; /* nothing there (or removed meanwhile) */
        return og_err_errno(e, "list \"%s\": opendir", c->prefix);
    }
    size_t plen = strlen(partial), tl = strlen(OG_STORE_TMP_PREFIX);
    entry *ents = NULL;
    size_t n = 0, cap = 0;
    og_status s = OG_OK;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno != 0) s = og_err_errno(errno, "list \"%s\": readdir", c->prefix);
            break;
        }
        const char *nm = de->d_name;
        size_t nl = strlen(nm);
        if ((nl == 1 && nm[0] == '.') || (nl == 2 && nm[0] == '.' && nm[1] == '.')) continue;
        if (nl >= tl && memcmp(nm, OG_STORE_TMP_PREFIX, tl) == 0) continue;
        if (nl < plen || memcmp(nm, partial, plen) != 0) continue;
        int is_dir;
        if (de->d_type == DT_DIR) {
            is_dir = 1;
        } else if (de->d_type == DT_REG) {
            is_dir = 0;
        } else if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK) {
            struct stat sb;
            if (fstatat(dirfd(d), nm, &sb, 0) != 0) {
                if (errno == ENOENT) continue; /* deleted meanwhile, or a dangling link */
                s = og_err_errno(errno, "list \"%s\": stat %s", c->prefix, nm);
                break;
            }
            if (S_ISREG(sb.st_mode)) is_dir = 0;
            else if (S_ISDIR(sb.st_mode) && de->d_type != DT_LNK) is_dir = 1;
            else continue; /* directory symlinks are not followed (no cycles) */
        } else {
            continue; /* fifos, sockets, devices are not objects */
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            entry *ne = realloc(ents, nc * sizeof *ne);
            if (!ne) {
                s = og_err(OG_ERR_NOMEM, "list \"%s\": out of memory", c->prefix);
                break;
            }
            ents = ne;
            cap = nc;
        }
        char *copy = malloc(nl + 1);
        if (!copy) {
            s = og_err(OG_ERR_NOMEM, "list \"%s\": out of memory", c->prefix);
            break;
        }
        memcpy(copy, nm, nl + 1);
        ents[n].name = copy;
        ents[n].len = nl;
        ents[n].is_dir = is_dir;
        n++;
    }
    closedir(d); /* a read-only directory stream: nothing to lose */
    free(path);
    if (s != OG_OK) {
        free_entries(ents, n);
        return s;
    }
    if (n > 1) qsort(ents, n, sizeof *ents, entry_cmp);
    *ents_out = ents;
    *n_out = n;
    return OG_OK;
}

/* Walks the directory at key prefix c->key[0..klen) depth first, in key order. */
static og_status walk(list_ctx *c, size_t klen, const char *partial)
{
    entry *ents;
    size_t n;
    OG_TRY(read_dir(c, klen, partial, &ents, &n));
    og_status s = OG_OK;
    const char *sa = c->start_after;
    for (size_t i = 0; i < n && s == OG_OK && !list_full(c); i++) {
        size_t nl = ents[i].len;
        s = key_reserve(c, klen + nl + 2);
        if (s != OG_OK) break;
        memcpy(c->key + klen, ents[i].name, nl);
        if (ents[i].is_dir) {
            c->key[klen + nl] = '/';
            c->key[klen + nl + 1] = '\0';
            size_t sub = klen + nl + 1;
            /* Every key below starts with c->key: skip the subtree when all of it is
             * <= start_after (c->key < start_after and start_after does not extend it). */
            if (sa && strncmp(sa, c->key, sub) != 0 && strcmp(c->key, sa) < 0) continue;
            s = walk(c, sub, "");
        } else {
            c->key[klen + nl] = '\0';
            if (sa && strcmp(c->key, sa) <= 0) continue;
            s = og_keylist_push(c->out, c->key, klen + nl);
        }
    }
    free_entries(ents, n);
    return s;
}

static og_status local_list(og_store *st, const char *prefix, const char *start_after, size_t limit,
                            og_keylist *out)
{
    list_ctx c = {L(st), prefix, start_after, limit, out, NULL, 0};
    const char *slash = strrchr(prefix, '/');
    size_t dlen = slash ? (size_t)(slash - prefix) + 1 : 0;
    og_status s = key_reserve(&c, dlen + 1);
    if (s != OG_OK) return s;
    memcpy(c.key, prefix, dlen);
    c.key[dlen] = '\0';
    s = walk(&c, dlen, prefix + dlen);
    free(c.key);
    return s;
}

/* ---- change watch --------------------------------------------------------------------------- */

#ifdef __linux__
static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static int watch_fd = -1;          /* the process's inotify instance; -1 = none yet */
static uint64_t watch_count = 1;   /* moves on every event (store.h og_store_change_count) */

/* Every event but reads (IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE: a probe must not move it). */
#define WATCH_MASK                                                                                    \
    (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |  \
     IN_DELETE_SELF | IN_MOVE_SELF)

static void watch_prepare(void) { pthread_mutex_lock(&watch_mu); }
static void watch_parent(void) { pthread_mutex_unlock(&watch_mu); }
static void watch_child(void)
{
    /* the queue is shared with the parent: never drain it here; start afresh on demand */
    if (watch_fd >= 0) close(watch_fd);
    watch_fd = -1;
    watch_count++;
    pthread_mutex_unlock(&watch_mu);
}
static void watch_init_once(void) { (void)pthread_atfork(watch_prepare, watch_parent, watch_child); }

/* 1 when every writer of the file system at `path` is this machine's kernel, 0 when not,
 * -1 when `path` does not exist.  Not overlayfs: a write made in its upper directory (from the
 * host, or another container sharing it) raises no event on the overlay's inode, and a kept
 * head would go stale; graphs in containers belong on a mounted volume anyway. */
static int fs_is_local(const char *path)
{
    struct statfs sf;
    if (statfs(path, &sf) != 0) return errno == ENOENT || errno == ENOTDIR ? -1 : 0;
    switch ((unsigned long)sf.f_type) {
    case 0xEF53UL:     /* ext2/3/4 */
    case 0x58465342UL: /* xfs */
    case 0x9123683EUL: /* btrfs */
    case 0x01021994UL: /* tmpfs */
    case 0x858458F6UL: /* ramfs */
    case 0xF2F52010UL: /* f2fs */
    case 0x2FC12FC1UL: /* zfs */
    case 0xCA451A4EUL: /* bcachefs */
        return 1;
    default:
        return 0;
    }
}

/* Drains the queue (watch_mu held): any event, a lost one or a read error moves the count. */
static void watch_drain_locked(void)
{
    if (watch_fd < 0) return;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(watch_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) watch_count++;
            return;
        }
        if (n == 0) return;
        watch_count++;
    }
}

static og_status local_watch(og_store *st, const char *prefix)
{
    char *path = NULL;
    OG_TRY(key_path(L(st), prefix, &path));
    pthread_once(&watch_once, watch_init_once);
    og_status s = OG_OK;
    int local = fs_is_local(path);
    if (local <= 0) {
        s = local < 0 ? og_err(OG_ERR_NOT_FOUND, "store prefix \"%s\": no such directory", prefix)
                      : og_err(OG_ERR_UNSUPPORTED, "store prefix \"%s\": not a local file system", prefix);
        free(path);
        return s;
    }
    pthread_mutex_lock(&watch_mu);
    if (watch_fd < 0) watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int e = watch_fd < 0 ? errno : 0;
    if (!e && inotify_add_watch(watch_fd, path, WATCH_MASK | IN_ONLYDIR) < 0) e = errno;
    if (e == ENOENT || e == ENOTDIR)
        s = og_err(OG_ERR_NOT_FOUND, "store prefix \"%s\": no such directory", prefix);
    else if (e == ENOMEM)
        s = og_err(OG_ERR_NOMEM, "store prefix \"%s\": out of memory", prefix);
    else if (e) /* EMFILE / ENOSPC: the user's inotify instances or watches are used up */
        s = og_err(OG_ERR_UNSUPPORTED, "store prefix \"%s\": cannot watch (errno %d)", prefix, e);
    pthread_mutex_unlock(&watch_mu);
    free(path);
    return s;
}

static uint64_t local_change_count(og_store *st)
{
    (void)st;
    pthread_mutex_lock(&watch_mu);
    watch_drain_locked();
    uint64_t c = watch_count;
    pthread_mutex_unlock(&watch_mu);
    return c;
}
#endif

/* ---- open / close ------------------------------------------------------------------------- */

static void local_close(og_store *st)
{
    local_store *ls = L(st);
    if (!ls) return;
    free(ls->root);
    free(ls);
    st->impl = NULL;
}

/* store.h og_store_lock: flock(2) on <root>/.tmp-lock-<name>, polled without blocking so
 * that the wait is bounded (a holder that hangs must not hold the others for ever).  The
 * file is created once and left: an empty name list() never returns.  flock belongs to the
 * open file, so two threads of one process that each open it exclude each other too. */
static og_status local_lock(og_store *st, const char *name, int64_t wait_ms, int *out)
{
    local_store *ls = st->impl;
    size_t tl = strlen(OG_STORE_TMP_PREFIX), nl = strlen(name);
    char *path = malloc(ls->root_len + tl + 5 + nl + 1);
    if (!path) return og_err(OG_ERR_NOMEM, "lock %s: out of memory", name);
    memcpy(path, ls->root, ls->root_len);
    memcpy(path + ls->root_len, OG_STORE_TMP_PREFIX, tl);
    memcpy(path + ls->root_len + tl, "lock-", 5);
    memcpy(path + ls->root_len + tl + 5, name, nl + 1);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    int e = errno;
    free(path);
    if (fd < 0) return og_err_errno(e, "lock %s: open", name);
    int64_t deadline = og_now_ms() + wait_ms;
    long pause_us = 100;
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            *out = fd;
            return OG_OK;
        }
        e = errno;
        if (e == EINTR) continue;
        if (e != EWOULDBLOCK) {
            close(fd);
            return og_err_errno(e, "lock %s: flock", name);
        }
        if (og_now_ms() >= deadline) {
            close(fd);
            return og_err(OG_ERR_CONFLICT, "lock %s: still held after %lld ms", name, (long long)wait_ms);
        }
        struct timespec ts = {0, pause_us * 1000};
        nanosleep(&ts, NULL);
        if (pause_us < 2000) pause_us *= 2;
    }
}

static const og_store_ops local_ops = {
    .name = "local",
    .get = local_get,
    .get_range = local_get_range,
    .head = local_head,
    .stat = local_stat,
    .put = local_put,
    .put_if_absent = local_put_if_absent,
    .put_if_absent_stream = local_put_if_absent_stream,
    .put_unsynced = local_put_unsynced,
    .list = local_list,
    .delete = local_delete,
    .map = local_map,
    .open_fd = local_open_fd,
    .close = local_close,
    .lock = local_lock,
#ifdef __linux__
    .watch = local_watch,
    .change_count = local_change_count,
#endif
};

/* Refuses a root whose file system has no link() (so no create-exclusive): STORAGE.md §2 says
 * such a store is refused at open.  A read-only root is accepted (reads still work; writes
 * will fail with their own error). */
static og_status probe_link(const char *root, const char *uri)
{
    char u1[OG_UUID_LEN + 1], u2[OG_UUID_LEN + 1];
    OG_TRY(og_uuid_new(u1));
    OG_TRY(og_uuid_new(u2));
    size_t rl = strlen(root), tl = strlen(OG_STORE_TMP_PREFIX);
    char *a = malloc(rl + tl + OG_UUID_LEN + 1), *b = malloc(rl + tl + OG_UUID_LEN + 1);
    if (!a || !b) {
        free(a);
        free(b);
        return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    }
    memcpy(a, root, rl);
    memcpy(a + rl, OG_STORE_TMP_PREFIX, tl);
    memcpy(a + rl + tl, u1, OG_UUID_LEN + 1);
    memcpy(b, a, rl + tl);
    memcpy(b + rl + tl, u2, OG_UUID_LEN + 1);
    og_status s = OG_OK;
    int fd = open(a, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        if (e != EACCES && e != EROFS && e != EPERM)
            s = og_err_errno(e, "store \"%s\": create probe file", uri);
    } else {
        close(fd); /* empty file, nothing to lose */
        if (link(a, b) != 0) {
            int e = errno;
            if (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == EXDEV || e == ENOSYS)
                s = og_err(OG_ERR_UNSUPPORTED,
                           "store \"%s\": the file system has no hard links, so no atomic "
                           "create-if-absent", uri);
            else
                s = og_err_errno(e, "store \"%s\": link probe", uri);
        } else {
            unlink(b);
        }
        unlink(a);
    }
    free(a);
    free(b);
    return s;
}

og_status og_store_local_open(og_store **out, const char *uri)
{
    *out = NULL;
    const char *path = uri;
    if (strncmp(uri, "file://", 7) == 0) {
        path = uri + 7;
        if (path[0] != '/')
            return og_err(OG_ERR_INVALID, "store \"%s\": a file:// URI needs an absolute path", uri);
    }
    if (!*path) return og_err(OG_ERR_INVALID, "store \"%s\": empty path", uri);
    local_store *ls = calloc(1, sizeof *ls);
    if (!ls) return og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
    og_status s = normalise_root(path, &ls->root);
    if (s != OG_OK) {
        free(ls);
        return s;
    }
    ls->root_len = strlen(ls->root);
    s = make_dirs(ls->root, 1, 0, 0, uri);
    if (s == OG_OK) {
        struct stat sb;
        if (stat(ls->root, &sb) != 0) s = og_err_errno(errno, "store \"%s\": stat root", uri);
        else if (!S_ISDIR(sb.st_mode)) s = og_err(OG_ERR_INVALID, "store \"%s\": not a directory", uri);
    }
    if (s == OG_OK) s = probe_link(ls->root, uri);
    /* The normalised URI: the absolute root path, without its trailing '/' (unless "/"). */
    char *norm = NULL;
    if (s == OG_OK) {
        norm = strdup(ls->root);
        if (!norm) s = og_err(OG_ERR_NOMEM, "store \"%s\": out of memory", uri);
        else if (ls->root_len > 1) norm[ls->root_len - 1] = '\0';
    }
    if (s == OG_OK) s = og_store_new(&local_ops, norm, 1, ls, out);
    free(norm);
    if (s != OG_OK) {
        free(ls->root);
        free(ls);
    }
    return s;
}
