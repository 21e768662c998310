/*
 * pb.h — the protobuf wire format, hand-rolled: varints, tags, length-delimited fields.
 *
 * Lance's manifests, file descriptors, column metadata and encodings are protobuf messages.
 * We transcribe the field numbers we need (docs/lance-format.md) and encode/decode them with
 * these few functions instead of generated code: the messages are small, and a reader that
 * skips unknown fields is all forward compatibility needs.
 *
 * Writer: append fields to an og_buf.  A nested message is written into its own og_buf and
 * appended with og_pb_put_bytes (length-delimited).
 * Reader: og_pb_reader walks a byte span; og_pb_next yields (field, wire type) and the value;
 * every read is bounds-checked and a malformed message gives OG_ERR_CORRUPT.
 */
#ifndef OG_UTIL_PB_H
#define OG_UTIL_PB_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/buf.h"

enum { OG_PB_VARINT = 0, OG_PB_I64 = 1, OG_PB_LEN = 2, OG_PB_I32 = 5 };

og_status og_pb_put_varint_raw(og_buf *b, uint64_t v);
og_status og_pb_put_tag(og_buf *b, uint32_t field, int wire);
og_status og_pb_put_uint(og_buf *b, uint32_t field, uint64_t v);  /* uint32/uint64/bool/enum */
og_status og_pb_put_int(og_buf *b, uint32_t field, int64_t v);    /* int32/int64 (negative = 10 bytes) */
og_status og_pb_put_bytes(og_buf *b, uint32_t field, const void *p, size_t n);
og_status og_pb_put_str(og_buf *b, uint32_t field, const char *s);
og_status og_pb_put_fixed64(og_buf *b, uint32_t field, uint64_t v);
og_status og_pb_put_fixed32(og_buf *b, uint32_t field, uint32_t v);
/* A packed repeated uint field (varints inside one length-delimited field). */
og_status og_pb_put_packed_uint(og_buf *b, uint32_t field, const uint64_t *v, size_t n);
/* An embedded message: field tag, length, then the bytes of `msg`. */
og_status og_pb_put_msg(og_buf *b, uint32_t field, const og_buf *msg);

typedef struct og_pb_reader {
    const uint8_t *p, *end;
} og_pb_reader;

typedef struct og_pb_field {
    uint32_t field;
    int wire;
    uint64_t u;               /* VARINT, I64, I32 values */
    const uint8_t *data;      /* LEN: the payload */
    size_t len;
} og_pb_field;

static inline og_pb_reader og_pb_reader_init(const void *p, size_t n)
{
    og_pb_reader r = {(const uint8_t *)p, (const uint8_t *)p + n};
    return r;
}

/* Returns 1 and fills *f for the next field, 0 at the end, or -1 (and sets an OG_ERR_CORRUPT
 * message) on malformed input. */
int og_pb_next(og_pb_reader *r, og_pb_field *f);
og_status og_pb_read_varint(og_pb_reader *r, uint64_t *out);

/* Decodes a packed repeated varint payload (also accepts a single non-packed value through
 * f->wire == VARINT).  *out is malloc'd (free it); *n counts the values. */
og_status og_pb_unpack_uints(const og_pb_field *f, uint64_t **out, size_t *n);

#endif
