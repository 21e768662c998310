/*
 * csv.h — a strict, streaming RFC 4180 record reader (the tokenizer under `load --csv`,
 * docs/load.md "CSV").
 *
 * Why a reader of our own rather than a library: Debian's C CSV library (libcsv) neither
 * reports the line and column of a fault nor refuses malformed quoting, and a load must say
 * "file:line:column: what" and load nothing.  The grammar is small:
 *
 *   - fields separated by one delimiter byte (',' by default; '|' for LSQB, '\t', ';' …);
 *   - a record ends at LF or CRLF (a CR not followed by LF is an error outside quotes);
 *   - a field may be quoted with '"'; inside, the delimiter, CR and LF are data and '""' is
 *     one quote; after the closing quote only a delimiter or the end of the record may follow;
 *     a quote inside an unquoted field is an error (it is almost always a quoting mistake);
 *   - a UTF-8 byte order mark at the very start is skipped; every field must be valid UTF-8
 *     and hold no NUL byte;
 *   - an empty line (no bytes before its LF) is skipped, not an empty record; the last
 *     record may lack its line end.
 *
 * Memory is bounded by the longest record (at most the record limit, 32 MiB by default):
 * the input is read through a fixed buffer and each record is decoded into one reused
 * buffer.  Fields are NUL-terminated in that buffer and stay valid until the next call.
 */
#ifndef OG_UTIL_CSV_H
#define OG_UTIL_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "omnigraph.h"

#define OG_CSV_MAX_RECORD (32u << 20)

typedef struct og_csv_field {
    char *s;         /* decoded bytes, NUL-terminated, in the reader's buffer */
    size_t len;
    int quoted;      /* written between quotes ("" is then an empty string, not a missing value) */
    uint64_t line;   /* 1-based line where the field starts */
    uint32_t col;    /* 1-based byte column where the field starts (at its opening quote) */
} og_csv_field;

typedef struct og_csv_reader og_csv_reader;

/* Reads from `in` (not closed by the reader).  `name` labels messages ("people.csv").
 * `delim` is any byte but '"', CR, LF and NUL (else OG_ERR_INVALID). */
og_status og_csv_reader_new(og_csv_reader **out, FILE *in, const char *name, char delim);
/* A reader of the `len` bytes at `buf` (not copied: they must outlive the reader's reads),
 * whose first byte is at line `line`, column 1 of the input it came from, so positions in
 * messages are the input's — for parsing a piece of a file split at record boundaries
 * (og_csv_split) on another thread.  No byte order mark is skipped: it belongs to a file's
 * start only.  og_csv_reader_reset_mem points a reader at the next piece (clearing an
 * error). */
og_status og_csv_reader_new_mem(og_csv_reader **out, const char *buf, size_t len, const char *name, char delim,
                                uint64_t line);
void og_csv_reader_reset_mem(og_csv_reader *r, const char *buf, size_t len, uint64_t line);
/* The bytes the reader has buffered but not consumed yet, and the line of the first of them
 * (they start a line when the last record read ended with its line end): where a reader of
 * the rest of the input takes over after a header row read with this one. */
void og_csv_reader_rest(const og_csv_reader *r, const char **p, size_t *n, uint64_t *line);
/* The length of the longest prefix of buf[0..len) made of whole records: it ends just after
 * the last line feed outside quotes (0: none), and *lines gets the line feeds in it.  Quotes
 * are taken as well-formed ('"' toggles quoting); where they are not, the reader refuses the
 * record that holds the first bad one, at its position, whatever piece it is split into. */
size_t og_csv_split(const char *buf, size_t len, uint64_t *lines);
/* Limit on one record's decoded bytes (default OG_CSV_MAX_RECORD); for tests. */
void og_csv_reader_set_max_record(og_csv_reader *r, size_t max);
/* Returns 1 with the record's fields (*fields valid until the next call), 0 at the end of the
 * input, or -1 with a typed error: OG_ERR_PARSE for malformed input (the message reads
 * "<name>:<line>:<column>: <what>"), OG_ERR_LIMIT for an over-long record, OG_ERR_IO,
 * OG_ERR_NOMEM.  After -1 every later call answers the same error. */
int og_csv_next(og_csv_reader *r, og_csv_field **fields, size_t *n, og_status *err);
/* The line on which the last record returned starts. */
uint64_t og_csv_record_line(const og_csv_reader *r);
/* Bytes of input consumed so far (for progress; of its buffer for a memory reader). */
uint64_t og_csv_bytes_read(const og_csv_reader *r);
const char *og_csv_reader_name(const og_csv_reader *r);
size_t og_csv_reader_max_record(const og_csv_reader *r);
void og_csv_reader_free(og_csv_reader *r);

#endif
