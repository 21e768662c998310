/*
 * table.h — versioned Lance tables: the contract the graph and engine layers use for table
 * data (STORAGE.md §3, §4 "Table version", §10; LANCE.md).
 *
 * A table is one Lance dataset under the store key prefix "tables/<dir>/":
 *   data/<uuid>.lance                                   immutable data files (file format 2.0)
 *   _deletions/<fragment>-<read_version>-<id>.bin       immutable deletion vectors (BITMAP)
 *   _versions/<u64max - version, 20 digits>.manifest    one complete manifest per version
 *
 * Reads always name a version.  A graph commit names the table versions it sees; Lance's own
 * "latest" means nothing to the graph, so og_table_latest_version exists for tools only.
 *
 * Writes are staged in an og_table_txn that starts from a named base version (never from
 * "latest"), collects appends, deletes, an overwrite, compactions and schema changes, and
 * commits them as ONE new version: data files are written (og_store_put, uniquely named) as
 * they are staged, deletion files at commit, then the manifest is created with
 * og_store_put_if_absent at version base+1 — or the next free number when another writer took
 * that one (several writers on several branches share one numeric sequence; each manifest
 * lists its complete fragment set, so interleaving is harmless).  Nothing a txn writes is
 * reachable before its manifest exists, and a manifest is only graph-visible once a commit
 * names it, so an abandoned txn leaves garbage for cleanup, never a partial state.
 *
 * Fault points (util/fault.h): "table.after_data_file" after each data file is written,
 * "table.after_deletion_file" after each deletion file, "table.after_manifest" after the
 * manifest put.
 *
 * Errors: OG_ERR_NOT_FOUND (a version, fragment or field that does not exist),
 * OG_ERR_INVALID (API misuse: wrong column count or types, an offset past a fragment's rows,
 * an unstable schema change), OG_ERR_CORRUPT (a stored file does not decode),
 * OG_ERR_UNSUPPORTED(_VERSION) (a table or file feature this build cannot read or write),
 * OG_ERR_CONFLICT (no free version number within the retry bound), OG_ERR_IO / OG_ERR_NOMEM.
 */
#ifndef OG_TABLE_TABLE_H
#define OG_TABLE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "store/store.h"
#include "table/lance_schema.h"
#include "table/manifest.h"
#include "util/cache.h"
#include "util/vector.h"

/* The row address Lance reports as _rowid. */
#define OG_ROW_ADDR(frag, offset) (((uint64_t)(frag) << 32) | (uint64_t)(uint32_t)(offset))
#define OG_ROW_ADDR_FRAG(addr) ((uint32_t)((addr) >> 32))
#define OG_ROW_ADDR_OFFSET(addr) ((uint32_t)(addr))

typedef struct og_table og_table;

/* ---------------------------------------------------------------------------------------- */
/* Opening and versions                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* A handle on the table directory `dir` (one path segment or several, no leading '/') in
 * `store`, which the handle borrows.  Does no I/O: a table without any version opens fine.
 * OG_ERR_INVALID for a bad directory name. */
og_status og_table_open(og_table **out, og_store *store, const char *dir);
/* Gives the handle up; a txn begun on it keeps it alive until og_table_txn_free. */
void og_table_close(og_table *t);
const char *og_table_dir(const og_table *t);
og_store *og_table_store(const og_table *t);

/* Lets og_table_load keep decoded manifests in `cache` (util/cache.h; keys
 * "m:tables/<dir>/<version>"), which the table borrows: it must outlive the table.  Manifests
 * are immutable, so a cached one never goes stale.  NULL turns caching off. */
void og_table_set_cache(og_table *t, og_cache *cache);
/* The cache set by og_table_set_cache (NULL when none). */
og_cache *og_table_cache(const og_table *t);
/* A writer caches the manifests it writes (og_table_txn_commit).  A manifest key is a version
 * number, not a content hash: when an unpublished attempt deletes its manifest (the graph's
 * write journal), another writer may take that number with other bytes, so the deleter must
 * forget it.  `key` is any store key; only "tables/<dir>/_versions/<manifest>" keys evict. */
void og_table_cache_forget_key(og_cache *cache, const char *key);

/* The highest version number present (0 when the table has none).  For tools and tests:
 * graph reads must use the version their commit names. */
og_status og_table_latest_version(og_table *t, uint64_t *out);
/* Every version present, ascending (*out malloc'd, free it; may be NULL when *n == 0). */
og_status og_table_list_versions(og_table *t, uint64_t **out, size_t *n);

/* Loads the manifest of `version` into *out (free with og_manifest_free; a copy when it comes
 * from the cache).  Accepts V2 and V1 manifest names.  OG_ERR_NOT_FOUND when the version does not exist, OG_ERR_CORRUPT when its
 * manifest does not decode, OG_ERR_UNSUPPORTED when it needs reader features we lack. */
og_status og_table_load(og_table *t, uint64_t version, og_manifest *out);

/* ---------------------------------------------------------------------------------------- */
/* Scanning a version                                                                        */
/* ---------------------------------------------------------------------------------------- */

typedef struct og_table_scan og_table_scan;

typedef struct og_table_scan_opts {
    const int32_t *field_ids;    /* top-level field ids to read, in output order; */
    size_t nfields;              /*   0 = every top-level field in schema order */
    const uint64_t *fragment_ids;/* restrict to these fragments (manifest order kept); */
    size_t nfragments;           /*   0 = every fragment */
    size_t batch_rows;           /* physical rows per batch before deletions; 0 = 4096 */
    int no_row_addrs;            /* 1: a batch without deleted rows leaves row_addrs NULL — its
                                  * rows are first_offset, first_offset + 1, ... (a streaming
                                  * reader that needs no addresses skips writing 8 bytes a row) */
} og_table_scan_opts;

typedef struct og_table_batch {
    size_t nrows;                /* 0 at the end of the scan */
    size_t ncols;
    const og_vector *cols;       /* ncols vectors, in the projection's order */
    const uint64_t *row_addrs;   /* nrows row addresses (fragment << 32 | offset), ascending */
    uint64_t fragment_id;        /* every row of a batch comes from one fragment */
    uint64_t first_offset;       /* the offset of the batch's first row in its fragment */
} og_table_batch;

/* A scan of the live rows (deletion vectors applied) of version `m` of table `t`, fragment
 * by fragment in manifest order, rows in offset order.  Fields of the manifest that a
 * fragment's data files do not hold read as null.  The scan borrows t and m.  Data files are
 * mapped through og_store_map (a real mmap on local stores) and fixed-width columns of batches
 * without deletions point straight into the mapped pages.
 * OG_ERR_NOT_FOUND for an unknown field or fragment id, OG_ERR_INVALID for a child field id. */
og_status og_table_scan_open(og_table_scan **out, og_table *t, const og_manifest *m,
                             const og_table_scan_opts *opts);
/* A scan of only the fragments at manifest indexes [frag_begin, frag_end) (one part of a
 * whole scan; opts->nfragments must be 0).  OG_ERR_INVALID for a range outside the manifest. */
og_status og_table_scan_open_range(og_table_scan **out, og_table *t, const og_manifest *m,
                                   const og_table_scan_opts *opts, size_t frag_begin, size_t frag_end);
/* The next batch.  Vectors and row addresses stay valid until the next call or
 * og_table_scan_free; batches with no live rows are skipped. */
og_status og_table_scan_next(og_table_scan *s, og_table_batch *out);
void og_table_scan_free(og_table_scan *s);

/* Reads the rows at `offsets[0..n)` (ascending, live or not) of fragment `fragment_id` for
 * the top-level fields `field_ids[0..nfields)` into out[0..nfields) (owned vectors; free each
 * with og_vector_free).  OG_ERR_INVALID for an offset past the fragment's rows. */
og_status og_table_take(og_table *t, const og_manifest *m, uint64_t fragment_id,
                        const uint32_t *offsets, size_t n, const int32_t *field_ids,
                        size_t nfields, og_vector *out);

/* The deleted rows of a fragment at that version (a new bitmap; empty without a deletion
 * file).  Free with roaring_bitmap_free. */
og_status og_table_fragment_deletions(og_table *t, const og_fragment *f, roaring_bitmap_t **out);

/* ---------------------------------------------------------------------------------------- */
/* Staged writes                                                                             */
/* ---------------------------------------------------------------------------------------- */

typedef struct og_table_txn og_table_txn;

/* Starts a txn on top of `base_version` (0 = a new, empty table), borrowing t.  `schema`
 * (copied; may be NULL to keep the base's) sets the schema as og_table_txn_set_schema does;
 * a new table needs one.  The base is loaded here; "latest" is never consulted.
 * OG_ERR_NOT_FOUND for a missing base, OG_ERR_UNSUPPORTED for a base whose writer feature
 * flags we do not implement. */
og_status og_table_txn_begin(og_table_txn **out, og_table *t, uint64_t base_version,
                             const og_lance_schema *schema);
void og_table_txn_free(og_table_txn *x);

/* The working manifest: the base plus everything staged so far (fragment ids of staged
 * appends are final).  Borrowed; valid until the next call on the txn. */
const og_manifest *og_table_txn_manifest(const og_table_txn *x);

/* Replaces the schema.  Field ids are identities: a field whose id the current schema has
 * must keep its logical type and parent; a field with a new id is a new column, and must be
 * nullable when the table has rows (old fragments read it as null: a manifest-only change);
 * a field left out is dropped (its data stays in old files, unread).  An id that a current
 * data file holds but the current schema lacks may not be reused.  The "id" column's primary
 * key flag is the caller's (og_lance_schema_add_column).  OG_ERR_INVALID. */
og_status og_table_txn_set_schema(og_table_txn *x, const og_lance_schema *schema);

/* Appends one batch as a new fragment with one new data file: cols[i] is the i-th top-level
 * field of the txn's schema; every vector has the same length (> 0).  *fragment_id (may be
 * NULL) receives the new fragment's id (max_fragment_id + 1, never reused). */
og_status og_table_txn_append(og_table_txn *x, const og_vector *cols, size_t ncols,
                              uint64_t *fragment_id);

/* Streaming form of append for large fragments: open a fragment writer, write batches,
 * finish (writes the data file and stages the fragment). */
typedef struct og_table_fragment_writer og_table_fragment_writer;
og_status og_table_txn_fragment_begin(og_table_txn *x, og_table_fragment_writer **out);
og_status og_table_fragment_write(og_table_fragment_writer *w, const og_vector *cols, size_t ncols);
/* Writes the data file, stages the fragment and frees w (also on error).  A writer that wrote
 * no rows stages nothing (*fragment_id = UINT64_MAX). */
og_status og_table_fragment_finish(og_table_fragment_writer *w, uint64_t *fragment_id);
void og_table_fragment_abort(og_table_fragment_writer *w);

/* Marks rows `offsets[0..n)` of fragment `fragment_id` deleted (already deleted rows are
 * fine).  The fragment's deletion file at commit is cumulative: all rows deleted so far.
 * OG_ERR_NOT_FOUND for a fragment not in the working manifest, OG_ERR_INVALID for an offset
 * past its physical rows. */
og_status og_table_txn_delete(og_table_txn *x, uint64_t fragment_id, const uint32_t *offsets,
                              size_t n);

/* Drops every fragment (the txn's later appends make up the new content). */
og_status og_table_txn_overwrite(og_table_txn *x);

/* Rewrites the live rows of the listed fragments (in their manifest order, row order
 * preserved, staged deletions applied) into one new fragment holding every field of the
 * current schema, placed where the first of them was; the others leave the list.
 * *fragment_id (may be NULL) receives the new id (UINT64_MAX when no row was live: then the
 * fragments are simply removed). */
og_status og_table_txn_compact(og_table_txn *x, const uint64_t *fragment_ids, size_t n,
                               uint64_t *fragment_id);

/* Holds the data files of later appends in memory until the commit (or until they pass a
 * few MiB), so that og_table_txn_commit_begin can hand them to a caller that writes them
 * together with its own objects, in one round trip on an object store. */
void og_table_txn_defer_writes(og_table_txn *x, int on);

/* Writes the deletion files, then creates the manifest of the new version at the next free
 * version number after the base; *version receives the number it got.  The txn can then only
 * be freed.  OG_ERR_CONFLICT when no free number was found within the retry bound. */
og_status og_table_txn_commit(og_table_txn *x, uint64_t *version);

/* og_table_txn_commit in two steps, for a caller that writes other objects at the same time
 * (the graph write protocol writes its commit object in the same round as the data files).
 * begin encodes the deletion files and the manifest, with no request: *ops[0..*nops) are the
 * writes that must all be durable before the manifest (data files held back, deletion files;
 * owned by the txn), and *version is the number the manifest will most likely get — the
 * caller may name it before it exists.  The caller writes the ops (og_store_put_many), then
 * end creates the manifest with put_if_absent, at that number or, if another writer took it,
 * at the next free one: *version receives the number it got, which the caller must compare.
 * After a failed write of the ops, only og_table_txn_free. */
og_status og_table_txn_commit_begin(og_table_txn *x, og_store_put_op **ops, size_t *nops, uint64_t *version);
og_status og_table_txn_commit_end(og_table_txn *x, uint64_t *version);

/* ---------------------------------------------------------------------------------------- */
/* Reclaiming history (table_gc.c)                                                           */
/* ---------------------------------------------------------------------------------------- */

typedef struct og_table_gc_stats {
    uint64_t versions_removed;   /* manifests deleted */
    uint64_t files_removed;      /* data and deletion files (and, for destroy, any other key) */
    uint64_t bytes_removed;      /* bytes of everything deleted, manifests included */
    uint64_t newest_removed;     /* the highest version number deleted (0 = none): callers
                                    that cache their own per-version state evict up to it */
} og_table_gc_stats;

/* Removes every version numbered below `keep_from` and the data and deletion files those
 * versions name that no version >= keep_from names.  What to delete is decided from
 * manifests only, never from a directory listing: files a writer has staged for a version
 * that does not exist yet are named by no manifest and are left alone (so are orphans of
 * abandoned txns: reclaiming those needs a listing plus a grace period — a cleanup verb).
 * Files go first and manifests last, so a crash midway leaves every kept version whole and
 * the run can simply be repeated (an old manifest whose files are already gone reads as
 * OG_ERR_NOT_FOUND naming the missing file until the repeat deletes it).  Cached manifests of
 * removed versions are evicted from the table's cache.  Fault point "table.gc_after_files"
 * between the two phases.  *out (may be NULL) counts what was deleted, also on error.
 * OG_ERR_NOT_FOUND when version keep_from does not exist (then nothing is deleted),
 * OG_ERR_INVALID for keep_from 0; a manifest that does not decode stops the run before any
 * delete (OG_ERR_CORRUPT); store errors. */
og_status og_table_gc(og_table *t, uint64_t keep_from, og_table_gc_stats *out);

/* Deletes every key under tables/<dir>/ — for a table no commit of any live branch will
 * name again (a hard-dropped type: type ids and table directories are never reused).  Keys
 * outside _versions/ go first, manifests last (the same crash argument as og_table_gc).  A
 * table with no keys is fine.  *out (may be NULL) as for og_table_gc. */
og_status og_table_destroy(og_table *t, og_table_gc_stats *out);

/* ---- cleanup's per-table pass ---------------------------------------------------------- */

typedef struct og_table_sweep_opts {
    const uint64_t *keep;   /* versions a retained graph commit names (any order, may repeat) */
    size_t nkeep;           /* 0: no retained commit names this table */
    int64_t cutoff_ms;      /* objects written at or after this instant are in the grace period */
    int dry_run;            /* 1: only count */
} og_table_sweep_opts;

typedef struct og_table_sweep_stats {
    uint64_t versions_removed, versions_bytes; /* manifests deleted (numbers below every kept one) */
    uint64_t versions_emptied;   /* unretained manifests above the oldest kept one: kept so their
                                    numbers are never reused, their files reclaimed */
    uint64_t versions_young;     /* unretained manifests inside the grace period (kept whole) */
    uint64_t files_removed, files_bytes;     /* data + deletion files an unretained version named */
    uint64_t orphans_removed, orphans_bytes; /* data + deletion files no manifest names */
    uint64_t files_young;        /* unnamed files inside the grace period (kept) */
    char **live_files;           /* data file names ("<uuid>.lance") still named or young: the */
    size_t nlive_files;          /*   derived files under _index/ of any other name can go */
    uint64_t *live_versions;     /* versions kept or young (topology files of others can go) */
    size_t nlive_versions;
} og_table_sweep_stats;

/* Cleanup of one table (docs/maintenance.md): a version is live when `keep` names it or its
 * manifest is younger than cutoff_ms.  Unretained manifests numbered below the oldest kept
 * version are deleted (writers only ever take numbers above their base, a kept version, so
 * those numbers are never reused); unretained manifests above it stay, because deleting one
 * would let a later writer reuse its number.  Then every data and deletion file (a listing
 * of the table) that no live version names and that is older than cutoff_ms is deleted —
 * orphans of failed writes included.  Order: manifests, fault point "cleanup.after_manifests",
 * files; a crash leaves every live version whole and the next run finds the rest by listing.
 * A manifest that does not decode stops the pass before any delete (OG_ERR_CORRUPT).
 * *out must be freed with og_table_sweep_stats_free (also holds the live names); on error it
 * is freed already. */
og_status og_table_sweep(og_table *t, const og_table_sweep_opts *o, og_table_sweep_stats *out);
void og_table_sweep_stats_free(og_table_sweep_stats *s);

#endif
