/*
 * csv_load.h — CSV files as load records (docs/load.md "CSV").
 *
 * A CSV source turns the rows of one file into the same records the NDJSON reader gives
 * (og_ndjson_record: type, id, from/to, and a `data` object as util/jsontok.h tokens), so a
 * CSV load is staged, validated and committed by exactly the NDJSON path — one set of rules.
 *
 * The header row names the columns, in the conventions of neo4j-admin import (which LSQB's
 * files use):
 *   name            a property of the type (`id` without a property `id`: the record's id;
 *                   edges: `from` / `to` are the endpoints)
 *   name:TYPE       the same, with the column's type checked against the schema: the neo4j
 *                   names (int long short byte float double boolean string char date
 *                   datetime localdatetime, `[]` for a list) or the schema's own spelling
 *   name:ID(Group) / :ID      nodes: fills the type's @key (the name is then only a label),
 *                   or the node id of an unkeyed type; edges: the edge's id
 *   :START_ID(Group) / :END_ID(Group)   edges: the endpoints (Group, when given, must be the
 *                   edge's endpoint type)
 *   :LABEL / :TYPE  the row's node / edge type, for a file that mixes types
 *   :IGNORE         a column that is not loaded
 * Cells are converted by the column's schema type: numbers and Bool (true/false) from their
 * text, String, enum, Date, DateTime and Blob as the text itself, lists and vectors as a JSON
 * array in the cell.  An empty cell is null (absent); a quoted empty cell ("") is the empty
 * string for a String column.
 */
#ifndef OG_LOAD_CSV_LOAD_H
#define OG_LOAD_CSV_LOAD_H

#include <stdint.h>

#include "compiler/catalog.h"
#include "load/ndjson.h"

typedef struct og_csv_source og_csv_source;

/* Opens the CSV file at `path` and reads its header.  `type` is the node or edge type of
 * every row, or NULL when the file has a :LABEL / :TYPE column.  `file_index` is stored in
 * the high bits of each record's line (og_plan_line_encode, engine/plan.h) so that messages name the file.
 * Errors (header): OG_ERR_PARSE / OG_ERR_INVALID "file:1:column: what", OG_ERR_IO. */
og_status og_csv_source_open(og_csv_source **out, const og_catalog *cat, const char *type, const char *path,
                             char delim, uint32_t file_index);
/* Moves the reading, parsing and converting of the rows after the header to two worker
 * threads that run ahead of og_csv_source_next in batches of about `batch_bytes` of input (0:
 * 64 KiB; small values are for tests), as the NDJSON reader's og_ndjson_reader_start: the
 * records, their order, positions and the first error are those of the sequential read.
 * Call once, before the first og_csv_source_next; og_csv_source_free stops the threads.
 * OG_ERR_NOMEM, OG_ERR_IO when no thread can be started. */
og_status og_csv_source_start(og_csv_source *s, size_t batch_bytes);
/* The limit on one record's decoded bytes (default OG_CSV_MAX_RECORD); for tests, before
 * og_csv_source_start. */
void og_csv_source_set_max_record(og_csv_source *s, size_t max);
/* 1 with *rec (valid until the next call), 0 at the end, -1 with a typed error
 * ("file:line:column: what"). */
int og_csv_source_next(og_csv_source *s, og_ndjson_record *rec, og_status *err);
/* As og_ndjson_peek / og_ndjson_skip: the records after the last one returned that are
 * already converted in the same batch (worker threads only), and taking k of them. */
const og_ndjson_record *og_csv_source_peek(const og_csv_source *s, size_t k);
void og_csv_source_skip(og_csv_source *s, size_t k);
uint64_t og_csv_source_bytes(const og_csv_source *s);
void og_csv_source_free(og_csv_source *s);

#endif
