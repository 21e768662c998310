/*
 * store_impl.h — the adapter interface behind store.h.  Private to src/store/.
 *
 * store.c owns the public functions: it validates every key (og_store_key_check) and every
 * list prefix before dispatching, so an adapter may assume its keys are well formed.  Each
 * adapter (store_local.c, store_s3.c) fills in an og_store_ops table and an open function
 * that builds its state and wraps it with og_store_new().
 *
 * Ownership:
 *   - og_store_new() copies `uri`; og_store_close() calls ops->close(st) (which frees only the
 *     adapter's `impl`), then frees the uri and the struct itself.
 *   - og_bytes results are malloc'd by the adapter and freed by the caller (og_bytes_free).
 *   - og_keylist results: adapters build them with og_keylist_push(); keys and the array are
 *     malloc'd; the list must be sorted bytewise (strcmp) and already filtered by prefix,
 *     start_after and limit (store.c does not post-process it).
 *   - og_mapping: an adapter either returns a real mapping (kind OG_MAPPING_MMAP, base/map_len
 *     as passed to munmap) or a heap copy (OG_MAPPING_HEAP, base from malloc, may be NULL when
 *     size == 0).  og_mapping_release() in store.c undoes either.  An adapter that has no
 *     cheaper way may set ops->map = NULL: store.c then does get() + og_mapping_from_bytes().
 *
 * Every ops function returns OG_OK or a typed error whose message names the key
 * (the semantics are those of store.h).  ops functions may be called from several threads.
 */
#ifndef OG_STORE_IMPL_H
#define OG_STORE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Longest key accepted (bytes, excluding NUL) and longest single segment. */
#define OG_STORE_KEY_MAX 1024
#define OG_STORE_SEGMENT_MAX 255

/* Prefix of the temporary objects an adapter may leave behind after a crash; no key segment
 * may start with it (og_store_key_check rejects such keys) and list() never returns them. */
#define OG_STORE_TMP_PREFIX ".tmp-"

typedef struct og_store_ops {
    const char *name; /* "local", "s3" — for messages */
    og_status (*get)(og_store *st, const char *key, og_bytes *out);
    og_status (*get_range)(og_store *st, const char *key, uint64_t off, uint64_t len,
                           og_bytes *out);
    og_status (*head)(og_store *st, const char *key, uint64_t *size_out);
    /* size and last-modified ms; may be NULL (store.c then uses head and reports 0) */
    og_status (*stat)(og_store *st, const char *key, uint64_t *size_out, int64_t *mtime_ms);
    og_status (*put)(og_store *st, const char *key, const void *data, size_t len);
    og_status (*put_if_absent)(og_store *st, const char *key, const void *data, size_t len);
    /* store.h og_store_put_if_absent_stream; may be NULL (store.c gathers the pieces, then
     * put_if_absent) */
    og_status (*put_if_absent_stream)(og_store *st, const char *key, og_store_fill_fn fill, void *ctx);
    /* store.h og_store_put_unsynced; may be NULL (store.c then does a durable put).  The
     * macro lets a file shared with older trees (the fleet bench's baseline build copies
     * store_count.c) tell whether the op exists. */
#define OG_STORE_PUT_UNSYNCED 1
    og_status (*put_unsynced)(og_store *st, const char *key, const void *data, size_t len);
    /* prefix is never NULL (may be ""); start_after may be NULL; limit 0 = no limit. */
    og_status (*list)(og_store *st, const char *prefix, const char *start_after, size_t limit,
                      og_keylist *out);
    og_status (*delete)(og_store *st, const char *key);
    og_status (*map)(og_store *st, const char *key, og_mapping **out); /* may be NULL */
    /* store.h og_store_open_fd; may be NULL (no files) */
    og_status (*open_fd)(og_store *st, const char *key, int *fd, uint64_t *size_out);
    /* change watch (store.h og_store_watch); both NULL when the adapter cannot watch */
    og_status (*watch)(og_store *st, const char *prefix);
    uint64_t (*change_count)(og_store *st);
    /* store.h og_store_lock; may be NULL (cannot lock).  The macro, as OG_STORE_PUT_UNSYNCED. */
#define OG_STORE_LOCK 1
    og_status (*lock)(og_store *st, const char *name, int64_t wait_ms, int *fd);
    void (*close)(og_store *st); /* frees st->impl only; may be NULL */
} og_store_ops;

struct og_store {
    const og_store_ops *ops;
    char *uri;    /* normalised URI (owned; freed by og_store_close) */
    int is_local; /* 1 for the local file-system adapter */
    void *impl;   /* the adapter's state */
};

enum og_mapping_kind { OG_MAPPING_HEAP = 0, OG_MAPPING_MMAP = 1 };

struct og_mapping {
    const uint8_t *data; /* the object's bytes (NULL or any pointer when size == 0) */
    size_t size;
    int kind;       /* enum og_mapping_kind */
    void *base;     /* MMAP: address passed to munmap; HEAP: pointer passed to free */
    size_t map_len; /* MMAP: length passed to munmap (0 = nothing mapped) */
};

/* Allocates the handle (copying uri) and stores it in *out.  On failure returns OG_ERR_NOMEM
 * and leaves *out NULL; the caller still owns impl. */
og_status og_store_new(const og_store_ops *ops, const char *uri, int is_local, void *impl,
                       og_store **out);

/* Appends a NUL-terminated copy of the first `len` bytes of `key` to l. */
og_status og_keylist_push(og_keylist *l, const char *key, size_t len);

/* Wraps heap bytes as a mapping; takes ownership of b->data (b is left empty) on success. */
og_status og_mapping_from_bytes(og_bytes *b, og_mapping **out);

/* Checks a list() prefix: "" is fine; otherwise no leading '/', no NUL, and every complete
 * segment (one followed by '/') must be a valid key segment.  The last partial segment may
 * be anything that could begin a valid segment. */
og_status og_store_prefix_check(const char *prefix);

/* store.c: records `key` in the calling thread's write journal (store.h), as og_store_put does
 * before its write; for og_store_put_many, which writes from other threads. */
void og_store_i_journal_note(og_store *st, const char *key);

/* store_count.c: installs the counting adapter on a store just opened when a test asked for
 * it (og_store_count_on_open); OG_OK otherwise. */
og_status og_store_i_count_opened(og_store *st);

/* Adapter open functions.  `uri` is the full URI as given to og_store_open. */
og_status og_store_local_open(og_store **out, const char *uri);
/* Provided by store_s3.c when the S3 adapter is built; store.c references it weakly and
 * returns OG_ERR_UNSUPPORTED when it is absent. */
og_status og_store_s3_open(og_store **out, const char *uri);

#endif
