/*
 * arrow.h — query results as Apache Arrow (private to src/api/).
 *
 * Why: a result that leaves as JSON text is parsed again by every notebook and pipeline that
 * reads it; Arrow hands the same typed columns over without a text round trip.  og_vector is
 * already Arrow's memory layout (util/vector.h), so the work here is the framing: offsets
 * narrowed to Arrow's 32-bit Utf8/List offsets, row ranges rebased to 0, and the
 * descriptions Arrow wants beside the buffers.
 *
 * Two outputs share one conversion (arrow_col.c): the IPC stream format (arrow_ipc.c, what
 * `omnigraph query --format arrow` writes and the server answers to
 * `Accept: application/vnd.apache.arrow.stream`) and the C Data Interface (arrow_cdata.c,
 * og_rows_to_arrow in include/omnigraph.h).  Type mapping: docs/query-language.md "Arrow output".
 */
#ifndef OG_API_ARROW_H
#define OG_API_ARROW_H

#include <stdint.h>

#include "api/rows.h"
#include "util/buf.h"

/* Arrow's type ids as the IPC schema's `Type` union numbers them (Schema.fbs). */
enum {
    OG_ARROW_NULL = 1,
    OG_ARROW_INT = 2,
    OG_ARROW_FLOAT = 3,
    OG_ARROW_BINARY = 4,
    OG_ARROW_UTF8 = 5,
    OG_ARROW_BOOL = 6,
    OG_ARROW_DATE = 8,
    OG_ARROW_TIMESTAMP = 10,
    OG_ARROW_LIST = 12,
    OG_ARROW_FIXED_SIZE_LIST = 16
};

/* One Arrow array: its type, its buffers in Arrow's order (validity first; a validity of
 * length 0 means "no nulls"), and its one child (List, FixedSizeList). */
typedef struct og_arrow_col {
    int type;          /* OG_ARROW_* */
    int bit_width;     /* INT: 32 or 64 */
    int is_signed;     /* INT */
    int precision;     /* FLOAT: 1 single, 2 double (Arrow's Precision enum) */
    int date_unit;     /* DATE: 0 day */
    int list_size;     /* FIXED_SIZE_LIST */
    int nullable;
    int is_json;       /* UTF8 holding JSON text (`return { $p }`): the arrow.json extension */
    char format[24];   /* the C Data Interface format string ("i", "u", "tsm:UTC", "+w:3") */
    int64_t length, null_count;
    int nbufs;         /* 0 (Null), 1 (FixedSizeList), 2 (fixed width, Bool, List), 3 (Utf8, Binary) */
    og_buf bufs[3];
    struct og_arrow_col *child; /* owned; named "item" */
} og_arrow_col;

/* Converts rows [row0, row0 + n) of result column `col` of r into *out (zeroed first).
 * OG_ERR_NOMEM; OG_ERR_LIMIT when one batch's strings or list items pass Arrow's 32-bit
 * offsets (2 GiB).  On error *out holds nothing to free. */
og_status og_arrow_col_from_rows(og_arrow_col *out, const og_rows *r, size_t col, size_t row0, size_t n);
void og_arrow_col_free(og_arrow_col *c);

/* Rows per record batch of the IPC stream. */
#define OG_ARROW_BATCH_ROWS 65536

/* Appends r as an Arrow IPC stream (schema message, record batches of at most
 * OG_ARROW_BATCH_ROWS rows, end-of-stream marker) to b.  Errors as og_arrow_col_from_rows. */
og_status og_rows_render_arrow(og_buf *b, const og_rows *r);

#endif
