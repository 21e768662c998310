/*
 * store.h — the object store contract (STORAGE.md §2).  The only module that touches bytes on
 * disk or on the network.
 *
 * Keys are '/'-separated paths relative to the store root ("_graph/format.json"); a key never
 * starts with '/', never contains "." or ".." segments, empty segments or NUL.  Objects are
 * immutable once visible: the only operation that arbitrates between writers is
 * og_store_put_if_absent().
 *
 * A store is opened from a URI: a local directory path ("/data/g", "./g", "file:///data/g")
 * or, once the S3 adapter exists, "s3://bucket/prefix".  Callers never learn which adapter
 * they hold; every adapter implements the same vtable (store_impl.h) and the same semantics,
 * which the contract tests in tests/store/ run against each backend.
 *
 * All functions return OG_OK or a typed error with og_error_message() naming the key:
 *   OG_ERR_NOT_FOUND       the key does not exist (get, get_range, head, delete, map)
 *   OG_ERR_ALREADY_EXISTS  put_if_absent lost: the key exists (its content is not ours)
 *   OG_ERR_INVALID         a malformed key or URI
 *   OG_ERR_IO / OG_ERR_AUTH / OG_ERR_THROTTLED   the backend failed
 *   OG_ERR_UNAVAILABLE     the store did not answer (or answered 5xx) through every retry:
 *                          a remote store that is down; a write's outcome may be unknown
 * A store handle may be used from several threads at once.
 */
#ifndef OG_STORE_H
#define OG_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/buf.h"

typedef struct og_store og_store;

/* A sorted list of keys (bytewise order), owned by the caller. */
typedef struct og_keylist {
    char **keys;
    size_t count;
} og_keylist;

/* A read-only view of a whole object: memory-mapped on a local disk, a heap copy elsewhere.
 * The bytes stay valid until og_mapping_release. */
typedef struct og_mapping og_mapping;

/* Opens (and for a local root, creates the directory of) the store at `uri`. */
og_status og_store_open(og_store **out, const char *uri);
void og_store_close(og_store *st);

/* The URI the store was opened with, normalised (absolute path for local stores). */
const char *og_store_uri(const og_store *st);
/* 1 when the store is a local file system (so og_store_map is a real mmap). */
int og_store_is_local(const og_store *st);

og_status og_store_get(og_store *st, const char *key, og_bytes *out);
/* Reads [off, off+len); a range past the end is truncated to the object's end
 * (out->len tells how much was read); off beyond the end gives an empty result. */
og_status og_store_get_range(og_store *st, const char *key, uint64_t off, uint64_t len, og_bytes *out);
og_status og_store_head(og_store *st, const char *key, uint64_t *size_out);
/* head plus the object's last-modified time (ms since the epoch; the file's mtime locally,
 * Last-Modified on S3, whole seconds there).  *mtime_ms = 0 when the store cannot tell.
 * Used by cleanup's grace period; either output may be NULL. */
og_status og_store_stat(og_store *st, const char *key, uint64_t *size_out, int64_t *mtime_ms);

/* Durable write of a uniquely named object: visible whole or not at all, fsynced (or
 * acknowledged by the object store) before returning.  Overwrites silently if the key exists
 * (callers only use it for names nobody else can choose). */
og_status og_store_put(og_store *st, const char *key, const void *data, size_t len);

/* A put whose durability and atomicity nobody needs (the head hint, docs/graph-authority.md
 * §4).  Locally the object's bytes are overwritten in place, not flushed (no temp file, so
 * no inode is created or freed per overwrite): a reader racing it may see old and new bytes
 * mixed or a short file, and after a crash the key may hold its previous object, nothing, or
 * a short or empty file — so a reader must treat whatever it finds as a hint.  On an object
 * store it is a put. */
og_status og_store_put_unsynced(og_store *st, const char *key, const void *data, size_t len);

/* The compare-and-swap: creates `key` only if no object has that key.  Exactly one of several
 * racing callers (threads, processes, machines) gets OG_OK; every other gets
 * OG_ERR_ALREADY_EXISTS.  Durable before returning OG_OK. */
og_status og_store_put_if_absent(og_store *st, const char *key, const void *data, size_t len);

/* og_store_put_if_absent of an object made in pieces, in order: fill(ctx, &data, &len) gives
 * the next `len` bytes at `data` (valid until the next call), len 0 at the end, or an error,
 * which fails the put (nothing is left).  For an object too big to hold whole beside the state
 * it is made from (a load's topology file of 50M edges is ~960 MB: docs/load.md "The memory
 * bound"): a local store writes each piece to the temp file as it comes; a store without
 * files gathers the pieces first.  Journalled as og_store_put_if_absent. */
typedef og_status (*og_store_fill_fn)(void *ctx, const void **data, size_t *len);
og_status og_store_put_if_absent_stream(og_store *st, const char *key, og_store_fill_fn fill, void *ctx);

/* Every key that starts with `prefix` (a plain string prefix, not a directory), sorted.
 * `start_after` (may be NULL) skips keys <= it.  `limit` 0 = no limit. */
og_status og_store_list(og_store *st, const char *prefix, const char *start_after, size_t limit,
                        og_keylist *out);
void og_keylist_free(og_keylist *l);

og_status og_store_delete(og_store *st, const char *key);

/* Several independent writes at once (src/store/store_batch.c).  One logical operation often
 * writes objects that do not depend on each other — a data file, a deletion file, a commit
 * object — and on an object store each write is a round trip; issued together they cost one
 * (docs/storage.md "Requests per operation").  Each op is a put, or a put_if_absent when
 * if_absent = 1; its own outcome lands in op->status.  They run concurrently (the caller's
 * thread takes one, a short-lived thread each of the others, at most OG_STORE_PUT_MANY_MAX at
 * a time), in no order among themselves: use it only for writes none of which must be durable
 * before another starts.  The calling thread's write journal records them as og_store_put and
 * og_store_put_if_absent would.  Returns OG_OK when every op succeeded, else the status and
 * message of the first failed op in array order. */
#define OG_STORE_PUT_MANY_MAX 16
typedef struct og_store_put_op {
    const char *key;
    const void *data;
    size_t len;
    int if_absent;
    og_status status; /* out */
} og_store_put_op;
og_status og_store_put_many(og_store *st, og_store_put_op *ops, size_t n);

/* A write journal: while one is begun on a thread, every og_store_put (noted before the put)
 * and every successful og_store_put_if_absent (after it: a lost one is not ours) made BY THAT
 * THREAD on store `st` under `prefix` (NULL = any key) is recorded.  The graph write protocol
 * uses it so that an attempt that is certainly not published deletes what it wrote before
 * returning its error (docs/maintenance.md "Failed writes").  Journals nest (end restores the
 * outer one).  discard deletes the recorded keys, newest first, best effort (errors ignored;
 * they overwrite the thread's error message, so save it first), returns how many it deleted and frees the list; free
 * only frees it (the write was published: the keys are live). */
typedef struct og_store_journal {
    og_store *st;
    const char *prefix;
    const char *prefix2; /* a second prefix recorded too (NULL: none); set after begin */
    og_keylist keys;
    int failed; /* out of memory while recording: discard deletes nothing */
    struct og_store_journal *outer;
} og_store_journal;
void og_store_journal_begin(og_store_journal *j, og_store *st, const char *prefix);
void og_store_journal_end(og_store_journal *j);
size_t og_store_journal_discard(og_store_journal *j);
void og_store_journal_free(og_store_journal *j);
/* For a worker thread that wrote on this thread's behalf in its own journal (begun on the same
 * store): records every key `from` holds in this thread's journal, as if written here, and
 * frees from's list (a load's batches written while it stages more rows: engine/plan.c). */
void og_store_journal_adopt(og_store_journal *from);

/* Change watch (local stores on a local file system).  og_store_watch(st, prefix): from
 * now on, every change to the objects directly under the "directory" `prefix` (a key prefix
 * ending in '/' that names existing objects) moves og_store_change_count() — whoever makes it,
 * this process or another on this machine: an object created, replaced, written or removed,
 * the directory itself removed or moved, and a lost event (the kernel's queue overflowed).
 * Reads move nothing.  Watching the same prefix again is cheap and harmless; a watch lasts
 * until the directory goes (which moves the count: watch it again).  Errors:
 * OG_ERR_UNSUPPORTED when the store cannot watch (S3; a file system that other machines may
 * write, such as NFS; no inotify), OG_ERR_NOT_FOUND when the directory does not exist.
 * og_store_change_count(st): the counter (one non-blocking system call, no path lookup).  If
 * a change completes after a watch was in place and after a call returned c, every call made
 * after the change completes returns a value other than c.  The counter may also move for
 * changes nobody asked about; 0 when the store cannot watch.  Used by the graph layer to keep
 * branch heads between reads (og_graph_keep_heads). */
og_status og_store_watch(og_store *st, const char *prefix);
uint64_t og_store_change_count(og_store *st);

/* Advisory cross-process lock (local stores).  og_store_lock(st, name, wait_ms, &fd) takes
 * the exclusive lock called `name` (1 to 245 bytes of [A-Za-z0-9._%-]) that every process on
 * this machine taking the same name on the same root shares, waiting at most wait_ms for
 * it; *fd is then the holder's handle (>= 0) for og_store_unlock.  Nothing is ever decided
 * by it — the store's put_if_absent still arbitrates every write — it only lets writers
 * queue instead of racing: the graph layer takes one per branch around a write
 * (docs/graph-authority.md §2).  The holder's death releases it.  Errors (the caller then
 * goes on unlocked): OG_ERR_UNSUPPORTED when the store cannot lock (S3, a "remote" counting
 * store), OG_ERR_CONFLICT when it was still held after wait_ms, OG_ERR_IO (a read-only root).
 * Locally the lock is flock(2) on <root>/.tmp-lock-<name>, a name list() never returns. */
og_status og_store_lock(og_store *st, const char *name, int64_t wait_ms, int *fd);
void og_store_unlock(int fd);

/* A read-only file descriptor of an object, for pread(2) beside a mapping of it (closed with
 * og_store_close_fd); *size_out gets the object's size.  OG_ERR_UNSUPPORTED when the store
 * has no files (S3), OG_ERR_NOT_FOUND when the object is absent, OG_ERR_LIMIT when the
 * process already holds its bound of such descriptors (a quarter of the soft RLIMIT_NOFILE,
 * at most OG_STORE_READ_FDS_MAX): readers then read their mapping. */
#define OG_STORE_READ_FDS_MAX 512
og_status og_store_open_fd(og_store *st, const char *key, int *fd, uint64_t *size_out);
void og_store_close_fd(int fd);
/* Descriptors og_store_open_fd has open now (tests). */
int og_store_open_fds(void);

/* Maps a whole object read-only. */
og_status og_store_map(og_store *st, const char *key, og_mapping **out);
const uint8_t *og_mapping_data(const og_mapping *m);
size_t og_mapping_size(const og_mapping *m);
void og_mapping_release(og_mapping *m);

/* Checks a key against the rules above (OG_OK or OG_ERR_INVALID naming the problem). */
og_status og_store_key_check(const char *key);

#endif
