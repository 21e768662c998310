/*
 * degree_count.h — counting the last hop of a pattern without enumerating it.
 *
 * `match { $a: N  $a link $b  $b link $c } return { count($c) }` asks how many (a, b, c) rows
 * there are, not what they are.  When the last operator of the pipeline is a single-hop
 * expansion whose destination nothing else reads (no filter, no projection other than row
 * counts, no order key), each row before it stands for as many rows as its node has distinct
 * neighbours: the executor stops one operator early and weighs every row by that number
 * (one visited-once reach of one hop — the expansion's own rule, so the answers are the
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

/* The last top-level operator of ir when it is an expansion that may be counted instead of run
 * (the shape above), else NULL.  A pure function of the IR (explain and run agree). */
const og_ir_op *og_degree_count_op(const og_ir_query *ir);

/* w[r] = the number of distinct nodes one hop from the node in column col of row r of b over t
 * in dir (0 for OG_ROW_NONE): the rows og_expand would make of row r. */
og_status og_degree_weights(const og_bindings *b, size_t col, const og_topology *t, og_dir dir, uint64_t *w);

/* 1 (the default): counts use the shape above; 0: always enumerate.  Same answers; tests and
 * benchmarks flip it to compare. */
extern int og_exec_count_degrees;

#endif
