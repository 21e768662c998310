/*
 * lance_file.h — Lance data files, file format 2.0 (footer version 0.3): a writer that turns
 * og_vector batches into the bytes of one `.lance` file, and a zero-copy reader over the bytes
 * of one (docs/lance-format.md has the layout, the encodings and the decisions).
 *
 * Columns.  A file holds the fields of an og_lance_schema (pre-order).  The caller hands the
 * writer one og_vector per TOP-LEVEL field (a LIST vector carries its items in ->child); each
 * field is one physical column (og_lance_schema_column_index gives the number the manifest's
 * DataFile.column_indices records).  Every column is paged on its own.
 *
 * Memory.
 *   Writer: copies everything it is given (vectors passed to og_lance_writer_write may be
 *     freed right after the call); it copies the schema in og_lance_writer_new.  The finished
 *     file is handed over in an og_buf the caller owns (og_buf_free).
 *   Reader: BORROWS the byte span given to og_lance_reader_open (an og_mapping, a heap
 *     buffer); the span must stay valid and unchanged until og_lance_reader_free.  The reader
 *     owns its decoded metadata (schema, page tables).
 *   Vectors filled by og_lance_reader_read / returned by a scan may borrow from the span:
 *     fixed-width and bool columns whose range lies in one page (and, when the page has a
 *     validity bitmap, starts on a byte boundary of it) point straight into the page buffers
 *     (flags without OG_VEC_OWNED); everything else (strings, blobs, lists, ranges that span
 *     pages, all-null pages, misaligned buffers, dictionary pages) is copied into an owned
 *     vector.  Either way call og_vector_free when done; a borrowed vector must not outlive
 *     the reader's span, and its buffers must not be written through.
 *
 * Errors.  Every offset and size in the file is checked against the span before it is used.
 *   OG_ERR_CORRUPT               truncated file, bad magic, a malformed protobuf, a buffer
 *                                outside the file or a buffer index outside the page, sizes
 *                                that do not match the page's row count, an encoding we do not
 *                                decode (named in the message), a list child too short ...
 *   OG_ERR_UNSUPPORTED_VERSION   footer version other than 0.3 (file format 2.0)
 *   OG_ERR_UNSUPPORTED           a field whose logical type has no og_type (struct, ...)
 *   OG_ERR_INVALID               API misuse: wrong vector types/lengths, rows out of range
 *   OG_ERR_NOT_FOUND             a field id the file does not hold
 *   OG_ERR_LIMIT                 a read that would decode more than OG_LANCE_MAX_DECODE_BYTES
 *   OG_ERR_NOMEM
 */
#ifndef OG_TABLE_LANCE_FILE_H
#define OG_TABLE_LANCE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "table/lance_schema.h"
#include "util/buf.h"
#include "util/vector.h"

#define OG_LANCE_FILE_MAJOR 0
#define OG_LANCE_FILE_MINOR 3
#define OG_LANCE_FOOTER_SIZE 40
#define OG_LANCE_ALIGN 64                       /* every page buffer starts 64-byte aligned */
#define OG_LANCE_DEFAULT_PAGE_ROWS 8192
#define OG_LANCE_DEFAULT_PAGE_BYTES (1u << 20)  /* 1 MiB of values per page buffer */
#define OG_LANCE_DEFAULT_BATCH_ROWS 4096
/* One read decodes at most this many bytes (values, offsets and string bytes together);
 * larger requests give OG_ERR_LIMIT — read fewer rows at a time.  All-null pages cost no file
 * bytes, so without a bound a tiny (corrupt) file could ask for any amount of memory. */
#define OG_LANCE_MAX_DECODE_BYTES ((uint64_t)1 << 28)

/* ---------------------------------------------------------------------------------------- */
/* Writer                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct og_lance_writer og_lance_writer;

typedef struct og_lance_writer_opts {
    size_t max_page_rows;   /* a page closes at this many rows (items for a list child); 0 = default */
    size_t max_page_bytes;  /* ... or when its largest buffer reaches this size; 0 = default */
} og_lance_writer_opts;

/* A writer for a file holding `schema` (copied; validated: OG_ERR_INVALID for a structural
 * problem or a field type with no og_type).  opts may be NULL for the defaults. */
og_status og_lance_writer_new(og_lance_writer **out, const og_lance_schema *schema,
                              const og_lance_writer_opts *opts);

/* Overrides max_page_rows for one physical column (tests use it to make columns break at
 * different rows).  OG_ERR_INVALID for a column out of range or 0 rows. */
og_status og_lance_writer_set_column_page_rows(og_lance_writer *w, size_t column, size_t max_rows);

/* Appends one batch of rows: cols[i] is the vector of the i-th top-level field (ncols must
 * equal og_lance_schema_num_top), all of the same length and of the field's og_type.
 * A null in a field declared non-nullable is OG_ERR_INVALID.  May be called any number of
 * times; on an error the writer is unusable (free it). */
og_status og_lance_writer_write(og_lance_writer *w, const og_vector *cols, size_t ncols);

/* Rows written so far. */
uint64_t og_lance_writer_num_rows(const og_lance_writer *w);

/* Closes every open page and moves the complete file into *out, which must be empty
 * (OG_BUF_INIT; OG_ERR_INVALID otherwise).  The writer can then only be freed. */
og_status og_lance_writer_finish(og_lance_writer *w, og_buf *out);

void og_lance_writer_free(og_lance_writer *w);

/* ---------------------------------------------------------------------------------------- */
/* Reader                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct og_lance_reader og_lance_reader;

/* Parses footer, offset tables, the FileDescriptor, every column's metadata and every page's
 * encoding (so a file that opens has only decodable pages with in-bounds buffers).  Borrows
 * data[0, size) — see "Memory" above. */
og_status og_lance_reader_open(og_lance_reader **out, const uint8_t *data, size_t size);
void og_lance_reader_free(og_lance_reader *r);
/* The heap an open reader holds (its parsed metadata), for a cache's charge. */
size_t og_lance_reader_bytes(const og_lance_reader *r);

/* A range source: how a reader reaches a file it does not hold in memory (an object on S3).
 * read() makes bytes [off, off+len) of the file available (off + len <= size): *data points at
 * len bytes that stay valid until release(ctx, *pin).  prefetch() (may be NULL) hints that a
 * range will be read soon; it must not block on the fetch.  ctx must outlive the reader.
 *
 * og_lance_reader_open_source reads the footer first (one read of the file's last
 * `tail_bytes`, 0 = 64 KiB), then, only if they lie before that tail, the offset tables and the
 * column metadata and global buffers they point to; it keeps that metadata window pinned and
 * validates it exactly as og_lance_reader_open does.  Page buffers are read on demand: each
 * og_lance_reader_read pins the pages of the rows it decodes (one read per page, the page's
 * buffers merged), decodes from them into OWNED vectors (never borrowed: nothing outlives the
 * read's pins), and releases them; with `readahead` > 0 it hints the next `readahead` pages
 * of each column it reads.  A metadata window larger than OG_LANCE_MAX_DECODE_BYTES is
 * OG_ERR_LIMIT; a read() error is passed on. */
typedef struct og_lance_source {
    uint64_t size;
    uint64_t tail_bytes;
    unsigned readahead;
    void *ctx;
    og_status (*read)(void *ctx, uint64_t off, uint64_t len, const uint8_t **data, void **pin);
    void (*release)(void *ctx, void *pin);
    void (*prefetch)(void *ctx, uint64_t off, uint64_t len);
} og_lance_source;

og_status og_lance_reader_open_source(og_lance_reader **out, const og_lance_source *src);

uint64_t og_lance_reader_num_rows(const og_lance_reader *r);
/* The file's schema (owned by the reader). */
const og_lance_schema *og_lance_reader_schema(const og_lance_reader *r);
void og_lance_reader_version(const og_lance_reader *r, uint16_t *major, uint16_t *minor);

/* Physical columns, and the column holding field `field_id` (-1 when the file lacks it). */
size_t og_lance_reader_num_columns(const og_lance_reader *r);
long og_lance_reader_column_of_field(const og_lance_reader *r, int32_t field_id);
/* Pages of a physical column and the [row_start, row_start+rows) each covers (rows are items
 * for a list child).  OG_ERR_INVALID for indexes out of range. */
size_t og_lance_reader_num_pages(const og_lance_reader *r, size_t column);
og_status og_lance_reader_page_info(const og_lance_reader *r, size_t column, size_t page,
                                    uint64_t *row_start, uint64_t *rows);

/* Decodes rows [row_start, row_start + row_count) of the top-level field `field_id` into *out
 * (overwritten, not freed first; free with og_vector_free), across page boundaries.
 * OG_ERR_NOT_FOUND for an id the file lacks or a child field's id, OG_ERR_INVALID for a
 * range past num_rows, OG_ERR_CORRUPT for bad page contents. */
og_status og_lance_reader_read(og_lance_reader *r, int32_t field_id, uint64_t row_start,
                               uint64_t row_count, og_vector *out);
/* The same by the position of the field among the top-level fields (0-based). */
og_status og_lance_reader_read_top(og_lance_reader *r, size_t top_index, uint64_t row_start,
                                   uint64_t row_count, og_vector *out);

/* ---------------------------------------------------------------------------------------- */
/* Scan: batches of rows over a projection                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct og_lance_scan og_lance_scan;

/* A scan over the top-level fields `field_ids[0..n)` (in that order; n == 0 = every
 * top-level field in schema order), `batch_rows` rows per batch (0 = 4096).  The scan
 * borrows the reader, which must outlive it. */
og_status og_lance_scan_open(og_lance_scan **out, og_lance_reader *r, const int32_t *field_ids,
                             size_t n, size_t batch_rows);
/* The next batch: *cols points at ncols vectors owned by the scan (valid until the next call
 * or og_lance_scan_free), *row_start is the first row's position in the file, *nrows its
 * length; *nrows == 0 at the end. */
og_status og_lance_scan_next(og_lance_scan *s, const og_vector **cols, uint64_t *row_start,
                             size_t *nrows);
size_t og_lance_scan_num_cols(const og_lance_scan *s);
void og_lance_scan_free(og_lance_scan *s);

#endif
