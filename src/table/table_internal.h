/*
 * table_internal.h — what table.c, table_scan.c and table_txn.c share.  Private to
 * src/table/ (the contract is table.h).
 */
#ifndef OG_TABLE_TABLE_INTERNAL_H
#define OG_TABLE_TABLE_INTERNAL_H

#include "table/table.h"
#include "util/cache.h"

struct og_table {
    og_store *store;
    char *dir;
    char *prefix;    /* "tables/<dir>/" */
    og_cache *cache; /* borrowed; NULL = no caching */
    unsigned refs;   /* the opener's, plus one per open txn (og_table_i_retain): a txn the write
                      * protocol commits may outlive the view that opened the table */
};

/* One more holder of t; og_table_close drops one and frees t with the last. */
void og_table_i_retain(og_table *t);

/* prefix + rel into out[cap]. OG_ERR_INVALID when it does not fit. */
og_status og_table_i_key(const og_table *t, const char *rel, char *out, size_t cap);

/* One manifest file of the table: its version and store key. */
typedef struct og_table_i_manifest {
    uint64_t version;
    char *key;
} og_table_i_manifest;

/* Every manifest file directly in _versions/ (V1 and V2 names), ascending by version (*out
 * malloc'd, may be NULL when *n == 0; free with og_table_i_manifests_free). */
og_status og_table_i_list_manifests(og_table *t, og_table_i_manifest **out, size_t *n);
void og_table_i_manifests_free(og_table_i_manifest *v, size_t n);

/* The "m:tables/<dir>/<version>" key of a version's cached manifest. */
void og_table_i_cache_key(const og_table *t, uint64_t version, char *out, size_t cap);
/* Caches the manifest bytes this process has just written as `version` (decoded, exactly as a
 * later og_table_load would read them back), so the next write or read of the version costs no
 * request.  Best effort: nothing happens without a cache or on any error. */
void og_table_i_cache_written(og_table *t, uint64_t version, const void *bytes, size_t len, int v1);

/* Caches a deletion file this process has just written, as deletion_bytes would read it. */
void og_table_i_cache_deletion(og_table *t, const char *key, const void *bytes, size_t len);

/* The highest version number of the table this handle has seen taken (0 = none), and noting
 * one: a writer starts its manifest's put_if_absent past it, so writers of one table on many
 * branches in one process do not race for the same numbers.  A hint in the handle's cache. */
uint64_t og_table_i_version_seen(og_table *t);
void og_table_i_version_note(og_table *t, uint64_t version);
/* A put_if_absent of `version` lost: another process took it (this one's writers never try
 * the same number).  Notes it and, for a while, makes this process's reservations of the
 * table keep to its lane (table.c): processes that write one table then stop racing for the
 * same numbers. */
void og_table_i_version_lost(og_table *t, uint64_t version);
/* The number a writer about to commit should try first: `at_least` (past its base), or past
 * every number seen or reserved in this handle, and reserved for it — so writers of one
 * table in one process (a server's writers on many branches at once) each try a different
 * number instead of all losing the same put_if_absent but one.  A reserved number a writer
 * never takes is a gap, which costs nothing: any free number past the base will do. */
uint64_t og_table_i_version_reserve(og_table *t, uint64_t at_least);

/* Loads a manifest, telling which naming the version's file used (*v1 = 1 for V1). */
og_status og_table_i_load(og_table *t, uint64_t version, og_manifest *out, int *v1);

/* Deletions to apply to a fragment instead of its deletion file (a txn's staged ones):
 * returns NULL to use the file. */
typedef const roaring_bitmap_t *(*og_table_i_del_fn)(void *ctx, uint64_t fragment_id);

og_status og_table_i_scan_open(og_table_scan **out, og_table *t, const og_manifest *m,
                               const og_table_scan_opts *opts, og_table_i_del_fn del_fn,
                               void *del_ctx);

/* dst = the rows sel[0..n) of src (ascending or not), as a new owned vector. */
og_status og_table_i_vector_select(const og_vector *src, const uint32_t *sel, size_t n,
                                   og_vector *dst);
/* dst = `len` null rows of `type` (owned). */
og_status og_table_i_vector_nulls(og_type type, size_t len, og_vector *dst);

#endif
