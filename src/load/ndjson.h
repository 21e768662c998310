/*
 * ndjson.h — the strict NDJSON envelope reader of `load` (reference-language.md §6.1).
 *
 * This module checks the envelope only: one JSON object per non-blank line, exactly one of
 * "type" (a node) or "edge", no unknown envelope keys, string from/to, an optional string
 * "id" (the entity's id, as export writes it), an object `data`,
 * no duplicate keys at any depth, no line over the limit.  Property-level checks (unknown
 * fields, JSON types against the schema, ids) belong to the loader, which has the catalog.
 *
 * Records stream: og_ndjson_next reads one line at a time, so memory stays bounded by the
 * longest line whatever the file size (with background parsing: by a few batches of lines).
 */
#ifndef OG_LOAD_NDJSON_H
#define OG_LOAD_NDJSON_H

#include <stdint.h>
#include <stdio.h>

#include "omnigraph.h"
#include "util/jsontok.h"

#define OG_NDJSON_MAX_LINE (32u << 20) /* 32 MiB, the reference's per-line limit */

typedef enum og_ndjson_kind { OG_NDJSON_NODE = 1, OG_NDJSON_EDGE = 2 } og_ndjson_kind;

typedef struct og_ndjson_record {
    og_ndjson_kind kind;
    uint64_t line;      /* 1-based line number in the input */
    const char *type;   /* node type or edge type name, as written */
    const char *id;     /* the top-level "id" (a string), or NULL when absent */
    const char *from;   /* edges only */
    const char *to;     /* edges only */
    size_t from_len, to_len; /* their bytes (a node id holds no NUL byte: strlen would agree) */
    const og_jtok *data;/* always an object ({} when absent: shared, read-only) */
    /* the pointers above are into the reader's line and token buffers: valid until the next
     * og_ndjson_next call */
} og_ndjson_record;

typedef struct og_ndjson_reader og_ndjson_reader;

/* Reads from `in` (not closed by the reader).  `name` labels error messages ("seed.jsonl"). */
og_status og_ndjson_reader_new(og_ndjson_reader **out, FILE *in, const char *name);
/* Limit on one line's bytes (default OG_NDJSON_MAX_LINE); for tests. */
void og_ndjson_reader_set_max_line(og_ndjson_reader *r, size_t max);
/* Moves the reading and parsing to a worker thread that runs ahead of og_ndjson_next (see
 * ndjson.c); the records, errors and their order are the same.  Call before the first read.
 * The worker stops when the reader is freed.  OG_ERR_INVALID after a read, OG_ERR_NOMEM,
 * OG_ERR_IO when no thread can be started. */
og_status og_ndjson_reader_start(og_ndjson_reader *r);
/* Returns 1 with *rec filled, 0 at end of input, or -1 with a typed error (OG_ERR_PARSE for
 * malformed lines, OG_ERR_LIMIT for an over-long line, OG_ERR_IO); messages read
 * "<name>:<line>: <what>". */
int og_ndjson_next(og_ndjson_reader *r, og_ndjson_record *rec, og_status *err);
/* With background parsing: the k-th record after the last one og_ndjson_next returned, when
 * it is parsed already and in the same batch (valid as long as that one), else NULL (always
 * NULL for a sequential read).  og_ndjson_skip(r, k) then takes the first k of them, as k
 * og_ndjson_next calls would: a caller handles a run of like records at once. */
const og_ndjson_record *og_ndjson_peek(const og_ndjson_reader *r, size_t k);
void og_ndjson_skip(og_ndjson_reader *r, size_t k);
/* Bytes consumed so far (for progress reporting). */
uint64_t og_ndjson_bytes_read(const og_ndjson_reader *r);
void og_ndjson_reader_free(og_ndjson_reader *r);

#endif
