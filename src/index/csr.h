/*
 * csr.h — the persisted adjacency (CSR by source, CSC by destination) of one edge table version
 * between two node table versions (STORAGE.md §8, INVARIANTS.md 7): derived, immutable, opened
 * by mmap and shared by every process.
 *
 * Rows are the dense live-row numbers of the three table versions (the engine's table views
 * number live rows in manifest order, then offset), so the file is valid exactly for the
 * (edge version, source node version, destination node version) it is named after, forever:
 * `_index/<edge dir>/topology/<edge version>-<src dir>-<src version>-<dst dir>-<dst version>.csr`
 * (og_csr_store_key).  Unlike the keymap it is not split per data file: a change to any of the
 * three tables needs a new file (built by the first reader that misses it, or by an explicit
 * index build).  Written once with put_if_absent: a crash leaves no file or a whole one.
 *
 * File layout (little-endian, sections 8-byte aligned):
 *   header (64 bytes): "OGCSR\0\0\0", u32 format 1, u32 0, u64 n_src, u64 n_dst, u64 n_edges
 *     (edges in the index), u64 edge_rows (rows of the edge version), u64 0, u64 0
 *   u64 off_out[n_src + 1], u64 off_in[n_dst + 1]
 *   u32 nbr_out[n_edges], u32 edge_out[n_edges], u32 nbr_in[n_edges], u32 edge_in[n_edges]
 *   trailer "OGCSREND"
 * Opening checks the sizes, the trailer and that both offset arrays start at 0 and end at
 * n_edges; the caller checks n_src / n_dst / edge_rows against its views.
 */
#ifndef OG_INDEX_CSR_H
#define OG_INDEX_CSR_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "store/store.h"
#include "util/buf.h"

/* The arrays of one adjacency; [0] = out (by source), [1] = in (by destination). */
typedef struct og_csr_arrays {
    uint64_t n_src, n_dst, n_edges, edge_rows;
    const uint64_t *off[2]; /* n_src + 1, n_dst + 1 */
    const uint32_t *nbr[2]; /* n_edges each */
    const uint32_t *edge[2];
} og_csr_arrays;

/* Appends the file encoding `a` to out.  OG_ERR_NOMEM. */
og_status og_csr_encode(const og_csr_arrays *a, og_buf *out);

/* The same file written in pieces (a topology too big to hold twice: engine/topology.h
 * og_topology_put_rows): the header of a file of these sizes (a's arrays unused), its total
 * size, and the trailer after the arrays, which fill exactly total - header - trailer bytes.
 * OG_ERR_LIMIT as og_csr_encode. */
#define OG_CSR_HEADER_BYTES 64
#define OG_CSR_TRAILER_BYTES 8
og_status og_csr_head(const og_csr_arrays *a, uint8_t out[OG_CSR_HEADER_BYTES], size_t *total);
void og_csr_tail(uint8_t out[OG_CSR_TRAILER_BYTES]);

/* The store key of the adjacency of (edge_dir @ ev) between (src_dir @ sv) and (dst_dir @ dv).
 * OG_ERR_LIMIT when cap is too small. */
og_status og_csr_store_key(char *key, size_t cap, const char *edge_dir, uint64_t ev, const char *src_dir, uint64_t sv,
                           const char *dst_dir, uint64_t dv);

typedef struct og_csr og_csr;
/* Maps object `key` of st; *arrays point into the mapping until og_csr_free.
 * OG_ERR_NOT_FOUND when absent, OG_ERR_CORRUPT for a malformed file. */
og_status og_csr_open(og_csr **out, og_store *st, const char *key, og_csr_arrays *arrays);
/* The same over caller-owned bytes (tests, fuzzing); nothing is taken. */
og_status og_csr_parse(const uint8_t *p, size_t len, og_csr_arrays *arrays);
void og_csr_free(og_csr *c);
/* Reads a local file into the page cache ahead of use (MADV_WILLNEED) on a tracked thread (the
 * mapping lives until both og_csr_free and the thread are done), so first-touched pages cost
 * minor faults, not disk reads, without mapping pages a traversal never touches into the
 * process's RSS.  A hint: nothing fails. */
void og_csr_prefault_async(og_csr *c);
size_t og_csr_bytes(const og_csr *c);
/* A read-only descriptor of the mapped file (a local store), or -1; closed by og_csr_free once
 * nothing holds the file.  Its bytes at offset o are og_csr_data(c)[o]: a reader of a few
 * lists can pread them instead of faulting the mapping (engine/topology.h
 * og_topology_read_by_pread). */
int og_csr_fd(const og_csr *c);
const uint8_t *og_csr_data(const og_csr *c);

#endif
