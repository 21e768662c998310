/*
 * scan_index.h — node scans narrowed by per-data-file scalar indexes (index/scalar.h,
 * docs/indexes.md "Scalar indexes").
 *
 * The rule: when one predicate of a scan is `$v.p OP constant` (OP one of = != < <= > >=),
 * `$v.p in <list literal or parameter>`, `$v.p is null` or `$v.p is not null` on a property
 * with a scalar index file for at least one data file of the version, the scan starts from the
 * rows the index files name (for `is null`: the live rows they do not name; every live row of
 * a data file without a file) instead of every row; the scan's predicates — that one included — are then applied as always, so the
 * answer is the full scan's by construction.  A damaged or foreign file only makes its data
 * file scanned.  OG_INDEX=off (no index files at all) turns it off.
 */
#ifndef OG_ENGINE_SCAN_INDEX_H
#define OG_ENGINE_SCAN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/ir.h"
#include "engine/exec.h"
#include "omnigraph.h"
#include "util/vector.h"

/* Candidate rows for scan op (of nrows rows): *rows (owned, ascending view rows) and *n with
 * *used = 1, or *used = 0 (nothing allocated) when no predicate has a usable index. */
og_status og_scan_index_candidates(const og_ir_query *ir, const og_exec_source *src, const og_vector *params,
                                   int64_t now_ms, const og_ir_op *op, size_t nrows, uint32_t **rows, size_t *n,
                                   int *used);

/* Test hook: how many scans of this process started from scalar index files. */
uint64_t og_scan_index_uses(void);

#endif
