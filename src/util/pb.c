/*
 * pb.c — protobuf wire format encoder/decoder.  See pb.h.
 */
#include "util/pb.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

og_status og_pb_put_varint_raw(og_buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        t[n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
    return og_buf_append(b, t, n);
}

og_status og_pb_put_tag(og_buf *b, uint32_t field, int wire)
{
    return og_pb_put_varint_raw(b, ((uint64_t)field << 3) | (unsigned)wire);
}

og_status og_pb_put_uint(og_buf *b, uint32_t field, uint64_t v)
{
    OG_TRY(og_pb_put_tag(b, field, OG_PB_VARINT));
    return og_pb_put_varint_raw(b, v);
}

og_status og_pb_put_int(og_buf *b, uint32_t field, int64_t v)
{
    return og_pb_put_uint(b, field, (uint64_t)v);
}

og_status og_pb_put_bytes(og_buf *b, uint32_t field, const void *p, size_t n)
{
    OG_TRY(og_pb_put_tag(b, field, OG_PB_LEN));
    OG_TRY(og_pb_put_varint_raw(b, n));
    return og_buf_append(b, p, n);
}

og_status og_pb_put_str(og_buf *b, uint32_t field, const char *s)
{
    return og_pb_put_bytes(b, field, s, strlen(s));
}

og_status og_pb_put_fixed64(og_buf *b, uint32_t field, uint64_t v)
{
    OG_TRY(og_pb_put_tag(b, field, OG_PB_I64));
    return og_buf_append_u64le(b, v);
}

og_status og_pb_put_fixed32(og_buf *b, uint32_t field, uint32_t v)
{
    OG_TRY(og_pb_put_tag(b, field, OG_PB_I32));
    return og_buf_append_u32le(b, v);
}

og_status og_pb_put_packed_uint(og_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    og_buf tmp = OG_BUF_INIT;
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) st = og_pb_put_varint_raw(&tmp, v[i]);
    if (st == OG_OK) st = og_pb_put_bytes(b, field, tmp.data, tmp.len);
    og_buf_free(&tmp);
    return st;
}

og_status og_pb_put_msg(og_buf *b, uint32_t field, const og_buf *msg)
{
    return og_pb_put_bytes(b, field, msg->data, msg->len);
}

og_status og_pb_read_varint(og_pb_reader *r, uint64_t *out)
{
    if (r->p < r->end && !(*r->p & 0x80)) { /* one byte: most keys, lengths and ids */
        *out = *r->p++;
        return OG_OK;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return og_err(OG_ERR_CORRUPT, "protobuf: truncated varint");
        uint8_t c = *r->p++;
        if (shift == 63 && (c & 0x7e)) return og_err(OG_ERR_CORRUPT, "protobuf: varint overflows 64 bits");
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return OG_OK;
        }
    }
    return og_err(OG_ERR_CORRUPT, "protobuf: varint longer than 10 bytes");
}

int og_pb_next(og_pb_reader *r, og_pb_field *f)
{
    if (r->p >= r->end) return 0;
    uint64_t key = 0;
    if (og_pb_read_varint(r, &key) != OG_OK) return -1;
    memset(f, 0, sizeof *f);
    f->field = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    if (f->field == 0 || key >> 3 > UINT32_MAX) {
        og_err(OG_ERR_CORRUPT, "protobuf: field number 0 or too large");
        return -1;
    }
    switch (f->wire) {
    case OG_PB_VARINT:
        if (og_pb_read_varint(r, &f->u) != OG_OK) return -1;
        return 1;
    case OG_PB_I64:
        if (r->end - r->p < 8) break;
        f->u = og_load_u64le(r->p);
        r->p += 8;
        return 1;
    case OG_PB_I32:
        if (r->end - r->p < 4) break;
        f->u = og_load_u32le(r->p);
        r->p += 4;
        return 1;
    case OG_PB_LEN: {
        uint64_t n = 0;
        if (og_pb_read_varint(r, &n) != OG_OK) return -1;
        if (n > (uint64_t)(r->end - r->p)) break;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return 1;
    }
    default:
        og_err(OG_ERR_CORRUPT, "protobuf: unsupported wire type %d (field %u)", f->wire, f->field);
        return -1;
    }
    og_err(OG_ERR_CORRUPT, "protobuf: field %u runs past the end of the message", f->field);
    return -1;
}

og_status og_pb_unpack_uints(const og_pb_field *f, uint64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (f->wire == OG_PB_VARINT) {
        *out = malloc(sizeof(uint64_t));
        if (!*out) return og_err(OG_ERR_NOMEM, "out of memory");
        (*out)[0] = f->u;
        *n = 1;
        return OG_OK;
    }
    if (f->wire != OG_PB_LEN) return og_err(OG_ERR_CORRUPT, "protobuf: field %u is not a packed list", f->field);
    /* at most one value per byte */
    uint64_t *v = malloc((f->len ? f->len : 1) * sizeof(uint64_t));
    if (!v) return og_err(OG_ERR_NOMEM, "out of memory");
    og_pb_reader r = og_pb_reader_init(f->data, f->len);
    size_t k = 0;
    while (r.p < r.end) {
        og_status st = og_pb_read_varint(&r, &v[k]);
        if (st) {
            free(v);
            return st;
        }
        k++;
    }
    *out = v;
    *n = k;
    return OG_OK;
}
