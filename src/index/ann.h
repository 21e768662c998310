/*
 * ann.h — the persisted vector (ANN) index of ONE data file of a node table (docs/search.md
 * "Vector index", INVARIANTS.md 7): derived, immutable, never needed for a correct answer.
 *
 * Why per data file: a data file never changes, so its index is valid for every table version
 * that names the file (deletion vectors differ between versions and are applied by the
 * reader); an append adds a file without touching the other files' indexes.  A version's
 * nearest search merges the top hits of its indexed files with an exact scan of the rest.
 *
 * The graph is an HNSW (built by vec/hnsw.h, hnswlib) over the non-null vectors of the file,
 * labelled by PHYSICAL row offset (deleted rows included), with the squared-L2 metric of exact
 * search.  It is searched in place, from the file's mapping, by ann.c's own bounds-checked
 * search (hnswlib's algorithm): opening costs the header, not a pass over the file, so a fresh process answers its first query without loading every graph.
 *
 * Store key (index/index.h og_index_file_key): `_index/<table dir>/<data file name without
 * .lance>/vector-<field id>.v1`.  Written once with put_if_absent by `omnigraph index build`:
 * a crash leaves no file or a whole one.
 *
 * File layout (little-endian):
 *   header (64 bytes): "OGANNHNS", u32 format 2, u32 dim, u64 rows (physical rows of the
 *     file), u64 count (indexed vectors), u32 M, u32 efConstruction, u64 payload bytes,
 *     u64 payload checksum, u64 graph bytes
 *   payload: hnswlib's serialisation (the graph bytes), then the table of upper levels: one
 *     entry (u32 point id, u32 level, u64 offset of its lists in the graph) per point above
 *     level 0, by id — so opening reads this table in place instead of walking the graph's
 *     level table (one variable-length entry per point)
 *   trailer: "OGANNEND"
 * Format 1 (written before; still read) has no table (payload = graph, last header field 0):
 * its opening walks the level table.
 * Opening checks the magic, sizes, trailer, the graph's layout and the entry point's table
 * entry; a search checks every table entry, neighbour list and label it reads.  So a damaged or foreign file is
 * OG_ERR_CORRUPT (the reader then scans that data file exactly) or, for damage no check can
 * see, poorer candidates (whose distances the reader recomputes exactly) — never a read out
 * of bounds.  The payload checksum, and that the table is the graph's, are verified by
 * og_ann_check (index build and status).
 *
 * Thread safety: an opened index is immutable; og_ann_search may run on one index from many
 * threads at once.  The cache is thread-safe.
 */
#ifndef OG_INDEX_ANN_H
#define OG_INDEX_ANN_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "store/store.h"
#include "table/manifest.h"
#include "table/table.h"
#include "util/buf.h"
#include "util/vector.h"

typedef struct og_ann og_ann;

/* The search beam used when a caller passes 0 (recall@10 >= 0.95 on the benchmark data). */
#define OG_ANN_DEFAULT_EF 64

/* Encodes the index of `vecs` (a Vector(dim) vector: one entry per physical row of the file,
 * nulls skipped) into out (appended).  OG_ERR_INVALID (not a Vector vector, a non-finite
 * number), OG_ERR_LIMIT (more than 2^32 - 1 rows), OG_ERR_NOMEM, OG_ERR_IO. */
og_status og_ann_encode(const og_vector *vecs, og_buf *out);

/* Reads field `field` of every physical row of fragment f of version m of table t and
 * encodes its index into out.  The table layer's errors, and og_ann_encode's. */
og_status og_ann_build(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field, og_buf *out);

/* OG_OK when p[0..len) is a whole index file for a data file of `rows` physical rows
 * (header, sizes, trailer, checksum; format 2: its table of upper levels is the graph's);
 * OG_ERR_CORRUPT otherwise, OG_ERR_NOMEM. */
og_status og_ann_check(const uint8_t *p, size_t len, uint64_t rows);

/* The index kind "vector" of index/index.h (files `vector-<field id>.v1`). */
struct og_index_def;
extern const struct og_index_def og_index_def_vector;

/* Opens an index from bytes (copied: the caller may free them).  OG_ERR_CORRUPT for a
 * malformed file (see above: structure, not the checksum), OG_ERR_NOMEM. */
og_status og_ann_open_bytes(og_ann **out, const uint8_t *p, size_t len);
/* Maps the object `key` of st and opens it in place.  OG_ERR_NOT_FOUND when absent,
 * OG_ERR_CORRUPT. */
og_status og_ann_open(og_ann **out, og_store *st, const char *key);
void og_ann_free(og_ann *a);

/* Opens the index file `*file` (a mapping) through a process-wide cache of opened indexes (up
 * to OG_ANN_CACHE_ENTRIES), keyed by the file's 64-byte header — which holds a checksum of the
 * payload, so equal headers mean equal indexes: a server process opens each index once.  On a
 * cache miss the index reads the graph in place and takes the mapping over (*file becomes
 * NULL); on a hit *file is left to the caller.  OG_ERR_CORRUPT for a malformed file or one a
 * search found damaged.  Release with og_ann_release (not og_ann_free). */
#define OG_ANN_CACHE_ENTRIES 64
og_status og_ann_acquire(og_ann **out, og_mapping **file);
void og_ann_release(og_ann *a);
/* Drops every cached index nobody holds (tests and benchmarks: a "fresh process" cache). */
void og_ann_cache_clear(void);

uint64_t og_ann_rows(const og_ann *a);   /* physical rows of the file it describes */
uint64_t og_ann_count(const og_ann *a);  /* vectors indexed (non-null rows) */
uint32_t og_ann_dim(const og_ann *a);

/* The (at most) k indexed rows nearest to q (dim floats), nearest first: physical offsets and
 * squared distances into offs / dists (k entries each); *n how many.  ef = the search beam
 * (0 = OG_ANN_DEFAULT_EF; raised to k).  OG_ERR_CORRUPT when the graph turns out damaged (the
 * index is then refused from then on), OG_ERR_NOMEM. */
og_status og_ann_search(og_ann *a, const float *q, size_t k, size_t ef, uint32_t *offs, float *dists, size_t *n);

#endif
