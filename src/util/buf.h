/*
 * buf.h — a growable byte buffer (og_buf) and an owned byte span (og_bytes).
 *
 * og_buf is the writer's scratch: append, then hand the bytes on.  Growth failures are
 * reported as OG_ERR_NOMEM, never an abort.
 */
#ifndef OG_UTIL_BUF_H
#define OG_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef struct og_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    int failed; /* a growth failed since the last reset: some append is missing (writers that
                 * do not check every append check this once at the end) */
} og_buf;

/* Bytes owned by the holder; free with og_bytes_free. */
typedef struct og_bytes {
    uint8_t *data;
    size_t len;
} og_bytes;

#define OG_BUF_INIT {NULL, 0, 0, 0}

og_status og_buf_reserve(og_buf *b, size_t extra);
og_status og_buf_append(og_buf *b, const void *p, size_t n);
og_status og_buf_append_byte(og_buf *b, uint8_t c);
og_status og_buf_append_str(og_buf *b, const char *s);
og_status og_buf_printf(og_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
og_status og_buf_append_zeros(og_buf *b, size_t n);
og_status og_buf_append_u16le(og_buf *b, uint16_t v);
og_status og_buf_append_u32le(og_buf *b, uint32_t v);
og_status og_buf_append_u64le(og_buf *b, uint64_t v);
/* Pads with zeros until len is a multiple of `align` (a power of two). */
og_status og_buf_pad_to(og_buf *b, size_t align);
/* Ensures data is NUL-terminated past len (len unchanged); returns data as a C string. */
const char *og_buf_cstr(og_buf *b);
void og_buf_reset(og_buf *b);
void og_buf_free(og_buf *b);
/* Moves the contents into an og_bytes and leaves b empty. */
og_bytes og_buf_take(og_buf *b);

void og_bytes_free(og_bytes *b);

/* Appends the whole file at `path` to b and NUL-terminates it (og_buf_cstr).  OG_ERR_IO (the
 * message names the path) or OG_ERR_NOMEM; on error b keeps what it had. */
og_status og_buf_read_file(og_buf *b, const char *path);

static inline uint16_t og_load_u16le(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t og_load_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t og_load_u64le(const uint8_t *p)
{
    return (uint64_t)og_load_u32le(p) | ((uint64_t)og_load_u32le(p + 4) << 32);
}

#endif
