/*
 * visit_set.h — the visited nodes of one traversal (og_topology_reach's BFS): a small hash set
 * while few nodes are visited, a dense bitmap once many are.
 *
 * Why not one array indexed by node: a BFS from one start visits a few hundred nodes of
 * millions.  A node-sized array of visit stamps (4 bytes a node: 20 MB at 5M nodes) puts each
 * of those few hundred on its own page, so the first traversals of a process take a fresh
 * zero-page fault per visited node, and every pooled scratch holds 20 MB
 * (docs/benchmarks.md "Scaling").  The hash set of the visited nodes stays in a few cache
 * lines and is emptied by clearing its slots; past 1/64 of the nodes (where its slots would
 * weigh as much as a bitmap) it turns into a bitmap of 1 bit per node, which is emptied by
 * clearing the bits of the nodes visited (the BFS queue lists them), never wholesale.  Small
 * universes (<= 65,536 nodes: an 8 KiB bitmap) use the bitmap from the start.
 */
#ifndef OG_ENGINE_VISIT_SET_H
#define OG_ENGINE_VISIT_SET_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef struct og_visit_set {
    uint32_t *slots; /* hash mode: open addressing, UINT32_MAX = empty, cap a power of two */
    size_t cap, count;
    uint64_t *bits; /* dense mode: one bit per node of the universe (kept across traversals) */
    size_t bits_words;
    size_t universe;
    int dense;
} og_visit_set;

void og_visit_set_init(og_visit_set *s);
void og_visit_set_free(og_visit_set *s);

/* Starts an empty set over the nodes [0, universe); the set must be empty (new, or ended with
 * og_visit_set_end).  OG_ERR_NOMEM. */
og_status og_visit_set_begin(og_visit_set *s, size_t universe);

/* Adds `node` (< universe); *fresh = 1 when it was not in the set yet.  OG_ERR_NOMEM when the
 * set cannot grow (the set is unchanged). */
og_status og_visit_set_add(og_visit_set *s, uint32_t node, int *fresh);

int og_visit_set_has(const og_visit_set *s, uint32_t node);

/* Empties the set.  `added[0..n)` plus `extra` (UINT32_MAX = none) must list every node added
 * since og_visit_set_begin (duplicates allowed): a bitmap clears just their bits, so the cost
 * follows the traversal, not the universe. */
void og_visit_set_end(og_visit_set *s, const uint32_t *added, size_t n, uint32_t extra);

#endif
