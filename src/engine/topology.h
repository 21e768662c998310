/*
 * topology.h — the adjacency index of one edge table version: CSR (out-edges by source row)
 * and CSC (in-edges by destination row), plus the traversal primitives the expand operator
 * uses (ARCHITECTURE.md §5).
 *
 * Nodes are addressed by dense row numbers of their node table version (the engine maps ids to
 * rows); edges by their row number in the edge table version.  A topology is immutable once
 * built and is cached per edge table version (derived state: never built on the write path).
 *
 * Multi-hop reachability follows the reference's BFS rule (reference-language.md §3.2): per
 * source, each node is visited at most once at its shortest depth; the source is pre-visited,
 * so it is emitted only through a direct self-loop at depth 1; a node is emitted iff its depth
 * lies in [min, max].
 */
#ifndef OG_ENGINE_TOPOLOGY_H
#define OG_ENGINE_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/rowmap.h"
#include "engine/visit_set.h"
#include "omnigraph.h"
#include "store/store.h"
#include "util/wordcache.h"

#define OG_ROW_NONE UINT32_MAX /* an edge endpoint with no live node row: the edge is skipped */

typedef enum og_dir { OG_DIR_OUT = 0, OG_DIR_IN = 1, OG_DIR_BOTH = 2 } og_dir;

typedef struct og_topology og_topology;

/* Builds from n_edges (src_row[i], dst_row[i]) pairs.  `live` (may be NULL) is a bitmap of the
 * edge rows to include (LSB first).  Within one node, edges keep edge-row order. */
og_status og_topology_build(og_topology **out, uint32_t n_src_nodes, uint32_t n_dst_nodes, const uint32_t *src_row,
                            const uint32_t *dst_row, size_t n_edges, const uint8_t *live);
void og_topology_free(og_topology *t);

/* Writes the topology file (index/csr.h) of what og_topology_build(n_src_nodes, n_dst_nodes,
 * src_row, dst_row, n_edges, NULL) builds — byte for byte what og_csr_encode of it gives, with
 * edge_rows = n_edges — under `key` with og_store_put_if_absent_stream, one section at a
 * time: besides the rows it holds the two offset arrays and one section (4 bytes an edge), not
 * both sides and their encoded copy (a 50M-edge load's topology: ~1.9 GB that way, ~0.4 GB
 * this way; docs/load.md "The memory bound").  Errors: og_topology_build's, the store's. */
og_status og_topology_put_rows(og_store *st, const char *key, uint32_t n_src_nodes, uint32_t n_dst_nodes,
                               const uint32_t *src_row, const uint32_t *dst_row, size_t n_edges);
/* The same with the rows in files: fd[0] the sources, fd[1] the destinations, 4 bytes a row
 * from offset 0 (a load's spilled endpoint rows), read 16,384 rows at a time, so not even the
 * rows are held.  A failed read fails the put (nothing is written). */
og_status og_topology_put_files(og_store *st, const char *key, uint32_t n_src_nodes, uint32_t n_dst_nodes, const int fd[2],
                                size_t n_edges);

/* A topology over arrays someone else owns (a mapped index file, index/csr.h): off[s] has
 * n_src + 1 (s = OUT) or n_dst + 1 (s = IN) entries from 0 to n_edges, nbr[s] / edge[s]
 * n_edges each.  release(hold) runs at og_topology_free.  The arrays are trusted for their
 * offsets' order; a neighbour outside the node range is skipped by the traversals. */
og_status og_topology_wrap(og_topology **out, uint32_t n_src_nodes, uint32_t n_dst_nodes, size_t n_edges,
                           const uint64_t *const off[2], const uint32_t *const nbr[2], const uint32_t *const edge[2],
                           void (*release)(void *hold), void *hold);

/* Reads a wrapped topology's lists with pread(2) from `fd`, whose bytes at offset o are
 * base[o] (the file the arrays are mapped from), instead of touching the mapping, for the
 * traversals that start few reads: og_topology_reach and og_topology_edges with a scratch from
 * og_topology_reach_get copy each list they read into that scratch's read cache (bounded by
 * OG_TOPOLOGY_READ_CACHE bytes; past it a traversal reads the mapping, and the next one to
 * start empties the cache).  Why: a touched page of a mapped file costs the kernel's 64 KiB of
 * fault-around in RSS, and no madvise turns that off (docs/engine.md "Memory").  The caller
 * keeps fd open until og_topology_free (the release of og_topology_wrap closes it).  A read
 * that fails falls back to the mapping. */
void og_topology_read_by_pread(og_topology *t, int fd, const void *base);
/* Sets a hook that t calls once, when a reader first goes to its mapped arrays (a traversal
 * past the read cache of og_topology_read_by_pread, og_topology_simple, a caller of
 * og_topology_bulk_read):
 * the caller reads the file ahead then (index/csr.h og_csr_prefault_async), so a point query
 * never reads a whole topology (docs/engine.md "Memory").  ctx must outlive t. */
void og_topology_on_bulk(og_topology *t, void (*fn)(void *ctx), void *ctx);
/* Tells t's hook that the caller is about to read the arrays of og_topology_arrays in bulk
 * (borrowing them for their sizes alone is not). */
void og_topology_bulk_read(const og_topology *t);
/* 1 when t (or the base of a composed t) reads lists by pread (og_topology_read_by_pread): a
 * reader of a few nodes should then go through og_topology_edges, not the arrays. */
int og_topology_reads_by_pread(const og_topology *t);
#define OG_TOPOLOGY_READ_CACHE ((size_t)1 << 20)
/* Scratches a topology keeps for reuse (og_topology_reach_put). */
#define OG_TOPOLOGY_POOL 4

/* The topology's arrays, borrowed (what index/csr.h persists); NULL arrays for a composed one. */
void og_topology_arrays(const og_topology *t, uint32_t *n_src, uint32_t *n_dst, const uint64_t *off[2],
                        const uint32_t *nbr[2], const uint32_t *edge[2]);

size_t og_topology_edge_count(const og_topology *t);

/* 1 when, in direction dir (OUT or IN), no node lists a neighbour twice and every neighbour
 * is inside the node range, so a node's distinct neighbours are its list as stored and their
 * number its degree; 0 otherwise, for a composed topology, or when the check cannot allocate.
 * Decided on the first ask (one pass over the edges, a stamp per node) and kept. */
int og_topology_simple(const og_topology *t, og_dir dir);
/* og_topology_simple's answer when this topology has already decided it, else 0 — for a
 * reader touching a few nodes, for whom deciding (one pass over every list) would cost more
 * than the query (issue 36: a one-hop count from one node read the whole 5M-node topology). */
int og_topology_simple_known(const og_topology *t, og_dir dir);

typedef struct og_reach og_reach;

/* The edges of one node in one direction (OUT: by source, IN: by destination): arrays of
 * `*n` neighbour rows and edge rows in edge-row order, borrowed from the topology or from
 * `scratch` (valid until its next use).  A composed topology needs scratch (an og_reach);
 * OG_ERR_NOMEM when it cannot grow. */
og_status og_topology_edges(const og_topology *t, og_dir dir, uint32_t node, og_reach *scratch,
                            const uint32_t **neighbours, const uint32_t **edges, size_t *n);

/* A topology of a newer version triple composed from an older one's (`base`, in its numbering)
 * without rebuilding it: base entries are translated through the row maps (an entry whose edge
 * or either node is gone is dropped), and the patch — n_patch (source, destination, edge) rows
 * in the newer numbering: the edges the base cannot give (appended ones, ones at a moved node)
 * — is added.  n_edges is the newer version's count of indexed edges.  The edge map must keep
 * old rows in order (og_rowmap_is_monotone), so each node's entries stay in edge-row order, as
 * a full build's.  `edges_follow_nodes`: every edge gone from the base has an endpoint gone too
 * (a cascade), so reachability checks nodes only.  Takes base and the maps (dst_map may be
 * src_map) in every case; the patch is copied. */
og_status og_topology_compose(og_topology **out, og_topology *base, og_rowmap *src_map, og_rowmap *dst_map,
                              og_rowmap *edge_map, int edges_follow_nodes, uint32_t n_src_nodes, uint32_t n_dst_nodes,
                              size_t n_edges, const uint32_t *p_src, const uint32_t *p_dst, const uint32_t *p_edge,
                              size_t n_patch);
int og_topology_is_composed(const og_topology *t);

/* A growable list of (node, depth) results, reused across calls. */
struct og_reach {
    uint32_t *node;
    uint32_t *depth;
    size_t len, cap;
    /* BFS scratch: the visited nodes (engine/visit_set.h), a queue grown on demand */
    og_visit_set visit;
    uint32_t *queue;
    size_t queue_cap;
    /* a composed topology's entries of one node (og_topology_edges): 2 x adj_cap */
    uint32_t *adj;
    size_t adj_cap;
    /* The read cache of a topology read by pread (og_topology_read_by_pread): (node, side,
     * with edges) -> its list, at most OG_TOPOLOGY_READ_CACHE bytes.  Only a scratch from
     * og_topology_reach_get uses it (rc_on); rc_owner names the topology its entries came
     * from (a serial number, never an address that a new topology could reuse). */
    int rc_on;
    uint64_t rc_owner;
    og_wordcache rc;
};

void og_reach_init(og_reach *r);
void og_reach_free(og_reach *r);

/* A scratch og_reach for traversals of t (reused across queries: its visit stamps stay
 * allocated), or NULL when out of memory; give it back with og_topology_reach_put (which
 * frees it when the pool is full).  Thread-safe. */
og_reach *og_topology_reach_get(const og_topology *t);
void og_topology_reach_put(const og_topology *t, og_reach *r);

/* Replaces r's results with the distinct nodes reachable from `src` whose shortest depth is in
 * [min_hops, max_hops] (1 <= min <= max), in BFS order (depth, then edge order).  OG_DIR_BOTH
 * needs a topology whose source and destination node tables are the same (From == To) and
 * deduplicates a pair linked in both directions. */
og_status og_topology_reach(const og_topology *t, og_dir dir, uint32_t src, uint32_t min_hops, uint32_t max_hops,
                            og_reach *r);

#endif
