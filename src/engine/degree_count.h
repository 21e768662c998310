/*
 * degree_count.h — counting the last hop of a pattern without enumerating it.
 *
 * `match { $a: N  $a link $b  $b link $c } return { count($c) }` asks how many (a, b, c) rows
 * there are, not what they are.  When the pipeline ends in single-hop expansions whose
 * destinations nothing else reads (no filter, no projection other than row counts, no order
 * key), each row before them stands for as many rows as they would make of it: the executor
 * stops before them and weighs every row by that number, computed from adjacency lists
 * (distinct neighbours, the expansion's own visited-once rule, so the answers are the
 * enumerating path's, self-loops and parallel edges included).  docs/query-language.md
 * "Explain" shows it as `traversal=degree_count`.
 */
#ifndef OG_ENGINE_DEGREE_COUNT_H
#define OG_ENGINE_DEGREE_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/ir.h"
#include "engine/bindings.h"
#include "engine/topology.h"
#include "omnigraph.h"

/* How many trailing top-level operators of ir may be counted instead of run (0 = none): the
 * last is a one-hop expansion (out or in, no edge binding, no predicate) whose destination only
 * row counts read (group and order keys do not), every column a row count or a group key; the
 * ones before it are such expansions too, each binding exactly the next one's start.  A pure
 * function of the IR (explain and run agree). */
size_t og_degree_count_ops(const og_ir_query *ir);
/* The last of them, or NULL. */
const og_ir_op *og_degree_count_op(const og_ir_query *ir);

/* w[r] = the rows the hops (t[i], dir[i]), i < nhops, would make of row r of b, starting from
 * the node in its column col (0 for OG_ROW_NONE): the distinct neighbours of the last hop,
 * summed over the distinct neighbours of the hops before. */
og_status og_degree_weights(const og_bindings *b, size_t col, const og_topology *const *t, const og_dir *dir,
                            size_t nhops, uint64_t *w);

/* 1 (the default): counts use the shape above; 0: always enumerate.  Same answers; tests and
 * benchmarks flip it to compare. */
extern int og_exec_count_degrees;

#endif
