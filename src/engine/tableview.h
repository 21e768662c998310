/*
 * tableview.h — the engine's read-side access to ONE table version (ARCHITECTURE.md §5,
 * INVARIANTS.md 7 and 15).
 *
 * An og_tableview is an immutable in-memory view of the LIVE rows (deletion vectors applied)
 * of one version of one Lance table, numbered densely 0..n-1 in scan order: fragments in
 * manifest order, rows in offset order within a fragment.  These row numbers are what
 * og_bindings and og_topology carry; og_tableview_addrs maps them back to Lance row
 * addresses (fragment << 32 | offset) for deletes and updates.
 *
 * Everything beyond the manifest and the row addresses is derived lazily, on first use, and
 * kept for the view's life: whole columns (one projected scan each), the id -> row map, and
 * edge topologies.  A view never writes anything: derived structures are built on reads only.
 * Because a table version never changes, a view never goes stale, and caching views by
 * (table dir, version) is always correct.
 *
 * Ownership and lifetime:
 *   - Views are reference counted.  og_tableview_open and og_tableview_get hand the caller one
 *     reference; og_tableview_retain adds one, og_tableview_release drops one and frees the
 *     view at zero.  A cache entry holds its own reference, so a view the caller holds stays
 *     valid after eviction or after the cache is freed.
 *   - A view opens its own og_table handle on the table's store and directory (no I/O), so the
 *     og_table passed in may be closed right after the call; the og_store must outlive every
 *     view made from it.
 *   - Everything a view hands out (row addresses, columns, manifest, topologies) is borrowed
 *     and stays valid until the caller's reference is released.
 *
 * Thread safety: every function may be called from several threads on one view at once.
 * Lazy loads are serialised by a per-view mutex; an already loaded column or map is read
 * without locking (published with release/acquire atomics).  Loading never holds one view's
 * lock while taking another's.
 *
 * Memory accounting: og_tableview_get charges a cached view og_tableview_bytes — the heap it
 * holds right now (row addresses, manifest, derived columns, maps, built topologies) — when it
 * inserts it, and recharges that on every later hit (og_cache_entry_recharge), so the handle's
 * cache bound follows the memory views really hold.  Mapped index files (key maps, topologies)
 * are not charged: they are shared, clean page cache the kernel reclaims under pressure.
 * og_tableview_estimate_bytes is the worst case — every column (the live share of the data
 * files' sizes, or a per-type width when a file's size is unknown), the id map and one
 * topology for an edge table — for callers that plan ahead.
 *
 * Errors: OG_ERR_NOT_FOUND (a version or field that does not exist; an id not in the view),
 * OG_ERR_INVALID (a child field id, a view used for a role it lacks the columns for),
 * OG_ERR_CORRUPT (stored data contradicts the manifest), OG_ERR_LIMIT (more than
 * UINT32_MAX - 1 live rows), OG_ERR_NOMEM, and the table layer's I/O errors.
 */
#ifndef OG_ENGINE_TABLEVIEW_H
#define OG_ENGINE_TABLEVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "engine/topology.h"
#include "omnigraph.h"
#include "table/manifest.h"
#include "table/table.h"
#include "util/cache.h"
#include "util/vector.h"

typedef struct og_tableview og_tableview;

/* Cache key prefix of table views in a graph handle's og_cache: "v:<table dir>@<version>". */
#define OG_TABLEVIEW_CACHE_PREFIX "v:"

/* --- opening ------------------------------------------------------------------------------ */

/* Opens an uncached view of version `version` of table `t`: loads the manifest and the
 * deletion vectors and numbers the live rows.  *out holds one reference.
 * OG_ERR_NOT_FOUND for a missing version, OG_ERR_LIMIT for too many rows. */
og_status og_tableview_open(og_tableview **out, og_table *t, uint64_t version);

/* The view of (t, version) from a graph handle's cache, opened and inserted on a miss (key
 * "v:<og_table_dir(t)>@<version>"; one cache serves one store).  *out holds one reference of
 * the caller's, independent of the cache entry.  Concurrent misses may both open a view; the
 * cache keeps the first and every caller gets that one.  `cache` may be NULL (= open). */
og_status og_tableview_get(og_cache *cache, og_table *t, uint64_t version, og_tableview **out);

og_tableview *og_tableview_retain(og_tableview *v);
/* Drops one reference (NULL is ignored); the last one frees the view and all it derived. */
void og_tableview_release(og_tableview *v);

/* Drops the cached view of (dir, version) from `cache` (NULL is ignored); holders keep theirs.
 * For versions a hard drop has deleted (og_table_gc), so this handle's later reads of them
 * fail like any other process's instead of answering from memory. */
void og_tableview_evict(og_cache *cache, const char *dir, uint64_t version);

/* The error for a failed load of version `version` of table t that a commit names: when `st`
 * is OG_ERR_NOT_FOUND and the table holds no version that old (only newer ones, or none),
 * the version was reclaimed by a hard drop, and the result is OG_ERR_NOT_FOUND saying so
 * (table, version, `schema apply --allow-data-loss`).  Anything else is returned as it is,
 * message kept.  Lists the table's versions: call it on the error path only. */
og_status og_tableview_missing_error(og_status st, og_table *t, uint64_t version);

/* --- what the view is --------------------------------------------------------------------- */

const char *og_tableview_dir(const og_tableview *v);
uint64_t og_tableview_version(const og_tableview *v);
/* The version's manifest (schema, fragments), borrowed. */
const og_manifest *og_tableview_manifest(const og_tableview *v);
/* The view's own table handle (for og_table_take and the like), borrowed. */
og_table *og_tableview_table(const og_tableview *v);

/* Live rows. */
size_t og_tableview_rows(const og_tableview *v);
/* rows() row addresses (fragment << 32 | offset), in view row order (manifest fragment order —
 * not necessarily ascending ids after a compaction — then offset); *out NULL when the view has
 * no rows.  Listed on first use (the deletion files are read then): OG_ERR_CORRUPT when a
 * deletion file disagrees with the manifest's deleted-row count, OG_ERR_NOMEM. */
og_status og_tableview_addrs(og_tableview *v, const uint64_t **out);

/* The row addresses of view rows rows[0..n) into out[0..n), without listing every row when
 * few are asked for (a write removing a handful of rows): a fragment without a deletion file
 * gives the offset directly, one with a deletion file is bisected over its deleted-row ranks.
 * OG_ERR_INTERNAL (a row out of range), OG_ERR_CORRUPT, the table layer's I/O errors. */
og_status og_tableview_row_addrs(og_tableview *v, const uint32_t *rows, size_t n, uint64_t *out);

/* The id of the top-level field `name` in the version's schema.  OG_ERR_NOT_FOUND. */
og_status og_tableview_field_id(const og_tableview *v, const char *name, int32_t *id);

/* --- derived, lazily ---------------------------------------------------------------------- */

/* The whole column of top-level field `field_id` over the view's rows (rows() long, row i of
 * the vector is view row i), loaded on first use by one projected scan and kept for the
 * view's life; borrowed.  Fragments written before the field existed read as nulls.
 * OG_ERR_NOT_FOUND (no such field), OG_ERR_INVALID (a child field id), OG_ERR_CORRUPT (the
 * scan's rows disagree with the view's numbering). */
og_status og_tableview_column(og_tableview *v, int32_t field_id, const og_vector **out);

/* The dictionary-coded form of String field `field_id`'s column (engine/dictcol.h), loaded on
 * first use by one projected scan and kept for the view's life like a column; borrowed.
 * *out = NULL (OG_OK) when the field is not a String, has more than OG_DICTCOL_MAX distinct
 * values (remembered: the scan is not repeated), or its plain column is already loaded — the
 * caller then reads og_tableview_column.  A coded column is what og_tableview_gather reads
 * from once it would load a String column whole.  Errors as og_tableview_column. */
struct og_dictcol;
og_status og_tableview_dict(og_tableview *v, int32_t field_id, const struct og_dictcol **out);
/* How many coded columns this process has loaded (tests). */
size_t og_tableview_dict_loads(void);
/* A whole column of at least og_tableview_load_split_rows rows (256K) over two or more
 * fragments of a local store loads on og_tableview_load_threads threads (2; 1 = never split),
 * each scanning about half of the fragments into the one column; the column is the same
 * either way (tests lower the bound to compare).  og_tableview_split_loads counts such loads. */
extern int og_tableview_load_threads;
extern size_t og_tableview_load_split_rows;
size_t og_tableview_split_loads(void);

/* 1 when the view's version has a field with id `field_id`, else 0.  A caller that reads a
 * property the stored table may lack (written before the property existed: null everywhere)
 * asks this, never the OG_ERR_NOT_FOUND of a read: a read also fails NOT_FOUND when a data
 * file of the version is gone (reclaimed by cleanup), and that must stay an error, not
 * become nulls (docs/invariants.md). */
int og_tableview_has_field(const og_tableview *v, int32_t field_id);

/* Zone maps of field `field_id`'s column (engine/colscan.h): built on first use from the
 * column and kept for the view's life, like the column; *out = NULL (OG_OK) for a type that
 * has none.  Derived only: a reader never needs them for a correct answer. */
struct og_colzones;
og_status og_tableview_zones(og_tableview *v, int32_t field_id, const struct og_colzones **out);

/* Streaming a whole column without keeping it (issue 36): a one-pass filter + aggregate over a
 * table too large to hold its columns reads them batch by batch instead (docs/engine.md
 * "Memory").  og_tableview_stream scans the top-level fields field_ids[0..nf) of every live
 * row in view order and hands each batch to use(ctx, part, row0, n, cols): view rows
 * [row0, row0 + n), cols[k] the batch's vector of field_ids[k] (borrowed until use returns).
 * With parts = 2, over og_tableview_load_split_rows rows and two or more fragments of a local
 * store, the fragments are split in two halves scanned on two threads: part 0 gets the rows
 * before part 1's, each part's batches in view order (use must only touch per-part state);
 * otherwise every batch is part 0's.  Nothing is kept on the view: each data file's pages
 * are unmapped once its fragment is read.  OG_ERR_UNSUPPORTED for a view with deleted rows
 * (the caller loads the column then), OG_ERR_NOT_FOUND for a field the stored table lacks,
 * use's error, the table layer's errors. */
typedef og_status (*og_tableview_batch_fn)(void *ctx, int part, size_t row0, size_t n, const og_vector *cols);
og_status og_tableview_stream(og_tableview *v, const int32_t *field_ids, size_t nf, int parts,
                              og_tableview_batch_fn use, void *ctx);
/* 1 when field `field_id`'s whole column (plain or dictionary-coded) is loaded on the view. */
int og_tableview_column_loaded(og_tableview *v, int32_t field_id);
/* The type of top-level field `field_id` (OG_ERR_NOT_FOUND when the view has none). */
og_status og_tableview_field_type(og_tableview *v, int32_t field_id, og_type *out);
/* How many og_tableview_stream scans this process ran (tests, benchmarks). */
size_t og_tableview_streams(void);

/* The values of top-level field `field_id` at view rows rows[0..n) (UINT32_MAX = a null row)
 * into `out` (an owned vector): from the whole column when it is loaded, else by point reads
 * of just those rows (og_table_take), so a query touching a few rows of a large table reads a
 * few pages instead of the column.  Errors as og_tableview_column. */
og_status og_tableview_gather(og_tableview *v, int32_t field_id, const uint32_t *rows, size_t n, og_vector *out);

/* The row whose `id` column equals id[0..len).  The map is built on first use over the field
 * named "id" (a String); null ids are not mapped, and should a version hold an id twice, the
 * first row in view order is the one found.  OG_OK / OG_ERR_NOT_FOUND (a miss);
 * OG_ERR_INVALID when the table has no String "id" field. */
og_status og_tableview_find_id(og_tableview *v, const char *id, size_t len, uint32_t *row);

/* og_tableview_find_id with a miss answered OG_OK and *row = OG_TABLEVIEW_NO_ROW, so every
 * error, OG_ERR_NOT_FOUND included (a data file or key map of the version gone: reclaimed by
 * cleanup), is a failure of the lookup, never a miss (docs/invariants.md).  What the engine's
 * callers use. */
#define OG_TABLEVIEW_NO_ROW UINT32_MAX
og_status og_tableview_lookup_id(og_tableview *v, const char *id, size_t len, uint32_t *row);

/* The adjacency of edge view `edges` (String fields "src" and "dst") between the rows of
 * node views `src_nodes` and `dst_nodes` (may be the same view): each edge's endpoints are
 * looked up with og_tableview_find_id, and an edge with an endpoint not found (or null) gets
 * OG_ROW_NONE and is left out — a dangling edge never fails a read.  Built once per
 * (edge view, source node table version, destination node table version) and kept in a small
 * list on the edge view; borrowed from `edges`.  The three views must share one store.
 * OG_ERR_INVALID (missing src/dst columns, a node view without ids, an edge view passed as
 * its own node view, views of different stores), plus column and id-map errors. */
og_status og_tableview_topology(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                const og_topology **out);

/* --- persisted indexes (index/keymap.h, index/csr.h; docs/indexes.md) ---------------------- */

/* og_tableview_find_id answers from the per-data-file keymaps of the view's fragments (files
 * read by pread, or maps built in memory for the fragments that lack one) unless the view
 * already built its in-memory id map; it probes the fragments in order, opening (or building)
 * each fragment's map when the probe first reaches it.  og_tableview_topology opens the
 * persisted adjacency of its three versions when present.  Neither ever writes: the read
 * path asks for that with og_tableview_save_keys / og_tableview_prepare_keys(v, 1) and
 * og_tableview_topology_ex(..., persist = 1), which write what they had to build
 * (put_if_absent; a failure to write is ignored).  Results never depend on which files exist
 * (INVARIANTS.md 7). */

/* The process-wide mode: 0 = no index files (OG_INDEX=off), 1 = read only (OG_INDEX=read),
 * 2 = read and write (default).  The setter is for tests and benchmarks. */
/* A fragment this process has just staged on top of view v's table (m: the txn's working
 * manifest; cols: the fragment's top-level columns, as appended): caches its keymap as one
 * built here, so that the next view of the table — the next write's — finds it without a
 * request.  Best effort: nothing happens without a String id or with index files off. */
void og_tableview_seed_keymap(og_tableview *v, const og_manifest *m, uint64_t fragment_id, const og_vector *cols,
                              size_t ncols);
int og_tableview_index_mode(void);
void og_tableview_set_index_mode(int mode);

/* Makes the keymap of every fragment available (opening files, building the missing ones in
 * memory), writing the built ones when `persist`.  OG_ERR_INVALID (no String id field), the
 * table layer's errors. */
og_status og_tableview_prepare_keys(og_tableview *v, int persist);
/* Writes the keymaps this view's lookups built in memory so far (the store lacked them), in
 * index mode 2 (og_tableview_index_mode); failures are ignored (the maps stay in memory). */
void og_tableview_save_keys(og_tableview *v);

/* og_tableview_topology that, when it had to build the adjacency and `persist` is set, writes
 * it for the next process.  A missing topology is first composed from an older persisted one
 * when few rows changed since (og_tableview_composed_topologies): nothing is built or written
 * then.  persist = OG_TOPO_MATERIALIZE (optimize) never composes: it writes the version
 * triple's own file (built as a delta or in full) even when a composed one is at hand. */
#define OG_TOPO_PERSIST 1
#define OG_TOPO_MATERIALIZE 2
og_status og_tableview_topology_ex(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes, int persist,
                                   const og_topology **out);

/* Writes the persisted topology of (edges, src_nodes, dst_nodes) from endpoint rows a writer
 * has already resolved — rows[0][i] / rows[1][i] the src / dst node row of edge row i, n the
 * edge view's rows — the file the first reader would otherwise build, without one id lookup (a
 * bulk load found the rows in its referential-integrity check: load.c).  Takes both arrays
 * (freed once the file is written a section at a time, og_topology_put_rows; NULL afterwards,
 * whatever the outcome).  Derived state: only with index files read and
 * written (og_tableview_index_mode() == 2); a failure to write is ignored; nothing is kept on
 * the view.  OG_ERR_INVALID (n or a row out of range: nothing is written), OG_ERR_NOMEM. */
og_status og_tableview_save_topology_rows(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                          uint32_t *rows[2], size_t n);
/* The same from rows in files (fd[0] sources, fd[1] destinations, 4 bytes a row: a load's
 * spilled endpoint rows, engine/plan.h), read a chunk at a time (og_topology_put_files); a row
 * out of range writes nothing.  The descriptors stay the caller's. */
og_status og_tableview_save_topology_files(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                           const int fd[2], size_t n);

/* The topology of (edges, src_nodes, dst_nodes) if one is at hand — already on the view, or
 * a persisted file (opened and kept) — else *out = NULL (OG_OK).  Never builds one: for the
 * write path, which may use an index that exists but never waits for one (INVARIANTS.md 7).
 * OG_ERR_INVALID as og_tableview_topology. */
og_status og_tableview_topology_at_hand(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                        const og_topology **out);

/* The committed edges at given nodes when the base has no topology at hand but an OLDER
 * version triple of the same tables does (persisted), and the edge table only deleted rows and
 * appended fragments since its version: og_incidence_find answers from that topology (the
 * node's row in the old node version by its key maps) plus a read of the appended fragments'
 * src/dst, never from the whole table.  *out = NULL (OG_OK) when there is no such triple
 * (a compaction of old fragments, index files off): the caller reads the columns then.
 * Views must outlive nothing: the incidence holds its own references.  Free with
 * og_incidence_free. */
typedef struct og_incidence og_incidence;
og_status og_tableview_incidence(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes,
                                 og_incidence **out);
/* The edge rows (of the base edge view, live there) whose src (is_dst 0) or dst (is_dst 1) is
 * id[0..len): *rows (malloc'd, free it; NULL when none) and *n. */
og_status og_incidence_find(og_incidence *inc, int is_dst, const char *id, size_t len, uint32_t **rows, size_t *n);
void og_incidence_free(og_incidence *inc);

/* How many times this process did work proportional to a whole table: loaded a column,
 * listed every row address, built a fragment's keymap or the id map in memory, built a
 * topology from the columns.  A counter for tests and benchmarks (a small write on a graph
 * whose key maps and topologies are persisted should add none). */
size_t og_tableview_whole_reads(void);

/* A missing topology is built, when versions of the same three tables have a persisted one,
 * from that one plus what changed since (a "delta", tableview_delta.c): the old pairs of the
 * edges still there, renumbered through the fragments both versions hold, and the endpoints of
 * the other edges (appended, compacted, or at a deleted or re-inserted node row) looked up —
 * the same adjacency as a full build, without looking up every endpoint again.  How many this
 * process built that way (tests, benchmarks). */
size_t og_tableview_delta_topologies(void);

/* How many topologies this process composed from an older persisted one instead of building
 * (topology.h og_topology_compose, tableview_compose.c): the base file mapped as it is, rows
 * translated through the fragments both versions hold, plus a small patch of the edges it
 * cannot give (appended, at a re-inserted node) — what a small commit costs a reader. */
size_t og_tableview_composed_topologies(void);

/* --- memory --------------------------------------------------------------------------------- */

/* Heap bytes the view holds now (base + loaded columns, id map, topologies). */
size_t og_tableview_bytes(const og_tableview *v);
/* The size the view is charged in a cache: base + the estimate described above. */
size_t og_tableview_estimate_bytes(const og_tableview *v);

#endif
