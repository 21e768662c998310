/*
 * rows.h — the og_rows result object behind the public API (private to src/api/).
 */
#ifndef OG_API_ROWS_H
#define OG_API_ROWS_H

#include "engine/exec.h"
#include "graph/graph.h"
#include "omnigraph.h"

struct og_rows {
    og_result res;
    char commit[OG_ULID_LEN + 1];
    char *query_name;
    char **type_names; /* per column, the .gq spelling */
};

/* Fills the derived fields (type names, query name) after the engine produced res. */
og_status og_rows_finish(og_rows *r, const char *name);

#endif
