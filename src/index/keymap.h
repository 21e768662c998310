/*
 * keymap.h — the persisted key -> row map of ONE data file of a node table (STORAGE.md §8,
 * INVARIANTS.md 7): derived, immutable, opened by mmap and shared by every process.
 *
 * A data file never changes, so the map of its `id` column is valid forever, for every table
 * version that names the file.  It maps each non-null id to the PHYSICAL row offsets that hold
 * it (deleted rows included: deletion vectors differ between versions and are applied by the
 * reader), ascending.  A table version's key lookup probes the maps of its fragments in
 * manifest order; an append adds one small map for its new file instead of rebuilding one for
 * the table.
 *
 * Store key: `_index/<table dir>/<data file name without .lance>/keymap.v1`
 * (og_keymap_store_key).  Written once with put_if_absent: a crash leaves no file or a whole
 * one; racing builders write identical bytes and the loser gets OG_ERR_ALREADY_EXISTS.
 *
 * File layout (little-endian, every section 8-byte aligned):
 *   header (48 bytes): "OGKEYMAP", u32 format 1, u32 hash 1, u64 rows (physical rows of the
 *     file), u64 keys (non-null ids), u32 bucket_bits, u32 0, u64 blob bytes
 *   buckets: u32[2^bucket_bits + 1]   entry index where each bucket starts (the last = keys)
 *   entries: keys x {u32 hash low bits, u32 row offset, u32 key position, u32 key length},
 *            grouped by bucket (the hash's top bucket_bits bits), ascending offset within one
 *   blob:    the key bytes
 *   trailer: "OGKMEND\0"
 * Opening checks the sizes and the trailer (a truncated or foreign file is OG_ERR_CORRUPT);
 * every lookup bounds-checks what it reads, so a damaged file can never make a read go
 * outside the mapping.  Maps never hold more than 2^32 - 1 rows or 4 GiB of key bytes
 * (OG_ERR_LIMIT at build: the reader then keeps its in-memory map).
 *
 * Run maps (format 2).  A bulk load leaves one data file per flushed batch (153 at 10M nodes),
 * and probing that many maps was most of a fresh process's first lookup (docs/indexes.md
 * "Run maps").  A run map is the maps of a run of fragments merged into one file, written
 * after the publish beside the last fragment's map:
 *   `_index/<table dir>/<last fragment's id data file name>/keyrun.v1` (og_keymap_run_store_key)
 * Its layout is format 1's with u32 nfrags in the header's spare word, a fragment table of
 * nfrags x {u64 fragment id, u64 physical rows, u64 tag (og_keymap_hash of the path of the
 * fragment's id data file)} after the header, and 20-byte entries {u32 hash low bits, u32 row
 * offset, u32 key position, u32 key length, u32 ordinal in the fragment table}, grouped by
 * bucket and ordered by (ordinal, offset) inside one.  A reader uses it for the fragments of
 * its version whose id, rows and tag match an entry of the table and probes the others' own
 * maps.
 */
#ifndef OG_INDEX_KEYMAP_H
#define OG_INDEX_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "store/store.h"
#include "table/manifest.h"
#include "table/table.h"
#include "util/buf.h"
#include "util/vector.h"

typedef struct og_keymap og_keymap;

/* Encodes the map of `ids` (a String vector: one entry per physical row of the file, nulls
 * skipped) into out (appended).  OG_ERR_INVALID (not a String vector), OG_ERR_LIMIT, NOMEM. */
og_status og_keymap_encode(const og_vector *ids, og_buf *out);

/* Reads the `id` column (field `id_field`) of every physical row of fragment f of version m of
 * table t and encodes its map into out.  The table layer's errors. */
og_status og_keymap_build(og_table *t, const og_manifest *m, const og_fragment *f, int32_t id_field, og_buf *out);

/* The store key of fragment f's map in table directory `dir` (the data file holding field
 * `id_field`).  OG_ERR_NOT_FOUND when no data file of f holds it; OG_ERR_LIMIT when `cap` is
 * too small. */
og_status og_keymap_store_key(char *key, size_t cap, const char *dir, const og_fragment *f, int32_t id_field);

/* Opens a map over bytes the caller keeps alive (a heap copy or a mapping): `own` (may be
 * NULL) is free()d and `mapping` (may be NULL) released by og_keymap_free.  On error neither
 * is taken.  OG_ERR_CORRUPT for a malformed file. */
og_status og_keymap_open_bytes(og_keymap **out, const uint8_t *p, size_t len, void *own, og_mapping *mapping);
/* Opens the object `key` of st.  OG_ERR_NOT_FOUND when absent, OG_ERR_CORRUPT.  On a local
 * store the map keeps a read-only descriptor of the file (og_store_open_fd), checks the
 * header and trailer with two preads and maps nothing: og_keymap_find reads the buckets it
 * probes with pread into a cache of at most OG_KEYMAP_READ_CACHE bytes until that cache is
 * full, then maps the file and reads the mapping (a bulk reader); a read that fails maps it
 * too.  Opening costs a few system calls and no page of the file — a view probes its
 * fragments' maps in order, opening each when the probe reaches it (docs/indexes.md).  Past
 * the process's descriptor bound, or on another store, the object is mapped (or fetched)
 * whole at once and probes read it. */
og_status og_keymap_open(og_keymap **out, og_store *st, const char *key);
void og_keymap_free(og_keymap *k);

#define OG_KEYMAP_READ_CACHE ((size_t)256 << 10)
/* Sets k's read-cache bound (a view of many fragments gives each map a share); returns the
 * bytes k may now hold (0 when it does not read by pread). */
size_t og_keymap_set_read_cache(og_keymap *k, size_t bytes);
/* 1 when k reads by pread and its cache is not full (for tests). */
int og_keymap_reads_by_pread(const og_keymap *k);

uint64_t og_keymap_rows(const og_keymap *k);
uint64_t og_keymap_keys(const og_keymap *k);
/* The map's bytes (what a file holding it contains; a map opened by descriptor maps its file
 * now — NULL when that fails) and their count. */
const uint8_t *og_keymap_base(const og_keymap *k);
size_t og_keymap_bytes(const og_keymap *k);

/* Calls cb(ud, offset) for every physical row offset whose id is key[0..len), ascending,
 * until cb returns nonzero (cb must not call into k: it may run under k's lock).  Returns OG_OK, or OG_ERR_CORRUPT when a bound check fails (the
 * map is damaged). */
og_status og_keymap_find(const og_keymap *k, const void *key, size_t len, int (*cb)(void *ud, uint32_t offset),
                         void *ud);

/* A run map's record of one fragment (og_keymap_frag_of). */
typedef struct og_keymap_frag {
    uint64_t id, rows, tag;
} og_keymap_frag;

/* f's record in a run map.  OG_ERR_NOT_FOUND when no data file of f holds id_field. */
og_status og_keymap_frag_of(og_keymap_frag *out, const og_fragment *f, int32_t id_field);
/* The store key of the run map ending at fragment f (errors as og_keymap_store_key). */
og_status og_keymap_run_store_key(char *key, size_t cap, const char *dir, const og_fragment *f, int32_t id_field);
/* Merges the one-file maps maps[0..n) of the fragments frags[0..n) (in manifest order) into a
 * run map, appended to out.  Reads each member twice (a member opened by descriptor is mapped
 * for each pass and unmapped after it).  OG_ERR_INVALID (a member that is a run, or whose rows
 * are not its fragment's), OG_ERR_CORRUPT (a damaged member), OG_ERR_LIMIT (2^32 keys or key
 * bytes), NOMEM; out is left as it was on error. */
og_status og_keymap_encode_run(og_keymap *const *maps, const og_keymap_frag *frags, size_t n, og_buf *out);
/* Writes the run map of og_keymap_encode_run to `key` of st with put_if_absent, made and
 * written in pieces (og_store_put_if_absent_stream): it holds ~8 bytes a key and one range of
 * entries, never the whole file.  Its errors, and the store's (OG_ERR_ALREADY_EXISTS). */
og_status og_keymap_put_run(og_store *st, const char *key, og_keymap *const *maps, const og_keymap_frag *frags,
                            size_t n);
/* Entries a piece of a run map holds at most (more when one range of member buckets has
 * more); tests lower it to cut a small run into many pieces. */
extern uint32_t og_keymap_run_chunk;
/* 1 for a run map (probe it with og_keymap_find_run; og_keymap_find refuses it). */
int og_keymap_is_run(const og_keymap *k);
/* A run map's fragment table (its entries' ordinals index it); 0 for a one-file map. */
size_t og_keymap_run_frags(const og_keymap *k, const og_keymap_frag **out);
/* og_keymap_find for a run map: cb(ud, ordinal, offset) for every entry of key, by ordinal then
 * offset.  OG_ERR_INVALID for a one-file map. */
og_status og_keymap_find_run(const og_keymap *k, const void *key, size_t len,
                             int (*cb)(void *ud, uint32_t ord, uint32_t offset), void *ud);

/* The hash the format uses (format hash 1), exposed for tests. */
uint64_t og_keymap_hash(const void *key, size_t len);

#endif
