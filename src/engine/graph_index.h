/*
 * graph_index.h — writes the persisted graph indexes of a branch head ahead of its first
 * query (issue 17, docs/indexes.md "Who builds them"): the key map of every data file of every
 * node table and the topology of every edge type, for the head's table versions.  Without
 * it the first query of the first process after a load pays those builds (seconds at 1M nodes
 * / 5M edges); `optimize` runs it after compacting, so a user who runs `omnigraph load` then
 * `omnigraph optimize` gets fast first queries from the start.
 *
 * Derived state only (INVARIANTS.md 7): it reads a snapshot and writes index files with
 * put_if_absent, never a commit; files that exist are opened, not rewritten; a failure to
 * write one is not an error (the next reader builds it).  Nothing happens under
 * OG_INDEX=off or read (og_tableview_index_mode() != 2).
 */
#ifndef OG_ENGINE_GRAPH_INDEX_H
#define OG_ENGINE_GRAPH_INDEX_H

#include <stddef.h>

#include "engine/engine.h"

typedef struct og_graph_index_report {
    size_t node_tables; /* node tables whose key maps are now available */
    size_t edge_types;  /* edge types whose topology is now available */
} og_graph_index_report;

/* For the head of `branch` (NULL = "main").  Errors: OG_ERR_NOT_FOUND (branch), the table and
 * store layers' read errors, OG_ERR_NOMEM. */
og_status og_engine_graph_index_build(og_engine *e, const char *branch, og_graph_index_report *rep);

#endif
