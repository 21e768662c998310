/*
 * export.h — a snapshot as NDJSON in the load envelope (reference-language.md §6.1), so that
 * export → load (overwrite) into a graph with the same schema is lossless: every row, every
 * id, every value.
 */
#ifndef OG_ENGINE_EXPORT_H
#define OG_ENGINE_EXPORT_H

#include <stdio.h>

#include "engine/engine.h"

/* Writes every node type, then every edge type (or only those named in types[0..ntypes),
 * matched exactly for nodes and case-insensitively for edges), rows in table order. */
/* One value as the load format spells it (the encodings listed in export.c), for export and
 * for the before/after images of change sets.  NULL only when memory runs out. */
json_t *og_export_value_json(const og_vector *v, size_t i);

og_status og_engine_export(og_engine *e, const char *branch, const char *commit, const char *const *types,
                           size_t ntypes, FILE *out);

/* Writes one node or edge type (`type`, edges matched case-insensitively) as CSV in the shape
 * `load --csv` reads back (export_csv.c): a header row, then one row per entity.  `delim` 0
 * means ','.  OG_ERR_NOT_FOUND for an unknown type. */
og_status og_engine_export_csv(og_engine *e, const char *branch, const char *commit, const char *type, char delim,
                               FILE *out);

#endif
