/*
 * shortest.h — shortest paths between two bound nodes (`$p: shortest { $a e{lo,hi} $b }`,
 * docs/reference.md "Shortest paths"): the executor's PATH operator (compiler/ir.h).
 *
 * A path is kept in an og_paths store and named in the bindings by its number, so the
 * relational operators pass it along like any binding; length($p) and nodes($p) read it back.
 */
#ifndef OG_ENGINE_SHORTEST_H
#define OG_ENGINE_SHORTEST_H

#include <stddef.h>
#include <stdint.h>

#include "engine/bindings.h"
#include "engine/topology.h"
#include "omnigraph.h"
#include "util/vector.h"

/* Every path found by one execution: path k is nodes[off[k] .. off[k + 1]) (node rows, source
 * first), so its length in hops is off[k + 1] - off[k] - 1. */
typedef struct og_paths {
    uint32_t *nodes;
    size_t nnodes, nodes_cap;
    size_t *off; /* n + 1 entries once n > 0 */
    size_t n, off_cap;
} og_paths;

void og_paths_free(og_paths *p);

/* For every row of b: the shortest walk from the node in src_col to the node in dst_col over t
 * in direction dir, if its length lies in [lo, hi] (1 <= lo <= hi), is added to store and its
 * number appended as a new last column; rows without one (or with an endpoint OG_ROW_NONE)
 * are dropped, the others keep their order.  Of several equally short walks the one whose
 * node ids (ids: the id column of the nodes' table) are smallest in order, source first, is
 * taken.  Cost: one breadth-first search (bounded by hi) per distinct destination, backwards
 * from it, then a walk forwards from each source. */
og_status og_shortest_paths(og_bindings *b, size_t src_col, size_t dst_col, const og_topology *t, og_dir dir,
                            uint32_t lo, uint32_t hi, const og_vector *ids, og_paths *store);

#endif
