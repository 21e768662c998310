/*
 * bindings.h — the intermediate result of a match pipeline: a table of row numbers.
 *
 * Column k holds, for every intermediate row, the row number of variable k's entity in that
 * variable's node (or edge) table version.  Properties are not copied along: operators pass
 * row numbers, and projection, filters and ordering gather the property columns they need at
 * the end (late materialisation).  OG_ROW_NONE marks "no entity".
 *
 * The operators here are the relational core of §3.7: expand (single and multi hop, with an
 * optional edge column), the cycle-closing semi-join, cross product, selection, and the
 * anti-join mask.
 */
#ifndef OG_ENGINE_BINDINGS_H
#define OG_ENGINE_BINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/topology.h"
#include "omnigraph.h"

typedef struct og_bindings {
    size_t n_cols;
    size_t n_rows;
    size_t cap_rows;
    uint32_t **cols;
} og_bindings;

og_status og_bindings_init(og_bindings *b, size_t n_cols);
void og_bindings_free(og_bindings *b);

/* One-column table holding rows[0..n) (a node scan's output). */
og_status og_bindings_from_rows(og_bindings *b, const uint32_t *rows, size_t n);
/* A one-column binding of the rows whose bit is set in bits (n rows; row i = bit i%64 of word
 * i/64; bits past n are ignored), in row order. */
og_status og_bindings_from_bits(og_bindings *b, const uint64_t *bits, size_t n);

/* Appends one row (n_cols values). */
og_status og_bindings_push(og_bindings *b, const uint32_t *values);

/* Keeps the rows whose bit is set in `sel` (in place, order preserved). */
void og_bindings_select(og_bindings *b, const uint8_t *sel);

/* out = every row of a followed by every row of b (columns of a, then of b), a-major order. */
og_status og_bindings_cross(og_bindings *out, const og_bindings *a, const og_bindings *b);

/* Expand from column `src_col` over a topology: out = in's columns + the destination column
 * (+ an edge-row column when `with_edge`).  Hop bounds [min,max] follow the BFS rule of
 * topology.h; with_edge requires min == max == 1 and emits one row per edge (parallel edges
 * are distinct rows).  Without with_edge, one row per (input row, distinct destination). */
og_status og_expand(og_bindings *out, const og_bindings *in, size_t src_col, const og_topology *t, og_dir dir,
                    uint32_t min_hops, uint32_t max_hops, int with_edge);

/* Cycle closing: keeps the rows of b whose src_col entity reaches the dst_col entity within
 * [min,max] hops (when both endpoints are already bound). */
og_status og_expand_filter(og_bindings *b, size_t src_col, size_t dst_col, const og_topology *t, og_dir dir,
                           uint32_t min_hops, uint32_t max_hops);

/* Anti-join support: given the surviving rows of an inner pipeline, whose column
 * `origin_col` holds the outer row number each came from, clears in `keep` (n_outer bits, all
 * set by the caller) the outer rows that produced at least one inner row. */
void og_antijoin_mask(const og_bindings *inner, size_t origin_col, uint8_t *keep, size_t n_outer);

#endif
