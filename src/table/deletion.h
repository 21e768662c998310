/*
 * deletion.h — Lance deletion files: which rows of a fragment are deleted (LANCE.md
 * "Deletion files").
 *
 * A deletion set is a CRoaring bitmap of 0-based row offsets within one fragment's data files.
 * Two file kinds exist:
 *   BITMAP       (file_type 1, "_deletions/{frag}-{read_version}-{id}.bin") — the portable
 *                roaring layout without run containers.  This is the only kind we write.
 *   ARROW_ARRAY  (file_type 0, "...arrow") — an Arrow IPC file with one UInt32 (or Int32)
 *                column of row offsets, buffers optionally ZSTD- or LZ4-compressed.  LanceDB
 *                writes it for small sets of deletions; we read it.
 * Decoders are bounds-checked: malformed bytes give OG_ERR_CORRUPT, an unknown compression
 * codec OG_ERR_UNSUPPORTED, never a crash.
 */
#ifndef OG_TABLE_DELETION_H
#define OG_TABLE_DELETION_H

#include <stddef.h>
#include <stdint.h>

#include <roaring/roaring.h>

#include "omnigraph.h"
#include "util/buf.h"

typedef enum og_deletion_kind {
    OG_DELETION_ARROW_ARRAY = 0,
    OG_DELETION_BITMAP = 1
} og_deletion_kind;

/* Appends the BITMAP file body for `rows` to `out`: cookie 12346, container count, per
 * container (key, cardinality - 1), per container the body offset, then the bodies (a sorted
 * u16 array up to 4096 rows, else a 1024-word bitmap).  `rows` is not modified (run containers
 * in it are expanded in a private copy). */
og_status og_deletion_encode_bitmap(const roaring_bitmap_t *rows, og_buf *out);

/* Decodes a deletion file body of either kind into a new bitmap (*out; free with
 * roaring_bitmap_free).  OG_ERR_CORRUPT on malformed bytes. */
og_status og_deletion_decode(og_deletion_kind kind, const uint8_t *data, size_t len,
                             roaring_bitmap_t **out);

/* Decodes an ARROW_ARRAY deletion file (Arrow IPC file or stream) into a new bitmap. */
og_status og_deletion_decode_arrow(const uint8_t *data, size_t len, roaring_bitmap_t **out);

/* The deletion file's path relative to the table directory:
 * "_deletions/{fragment_id}-{read_version}-{id}.bin" (or ".arrow").  Returns OG_ERR_INVALID
 * when `cap` is too small. */
og_status og_deletion_path(char *out, size_t cap, uint64_t fragment_id, uint64_t read_version,
                           uint64_t id, og_deletion_kind kind);

#endif
