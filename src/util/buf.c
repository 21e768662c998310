/*
 * buf.c — growable byte buffers.  Doubling growth; every size computation is overflow-checked.
 */
#include "util/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

og_status og_buf_reserve(og_buf *b, size_t extra)
{
    if (extra <= b->cap - b->len) return OG_OK;
    if (extra > SIZE_MAX - b->len - 1) {
        b->failed = 1;
        return og_err(OG_ERR_NOMEM, "buffer size overflow");
    }
    size_t need = b->len + extra + 1; /* +1 keeps room for og_buf_cstr's NUL */
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return og_err(OG_ERR_NOMEM, "out of memory growing a buffer to %zu bytes", cap);
    }
    b->data = p;
    b->cap = cap - 1;
    return OG_OK;
}

og_status og_buf_append(og_buf *b, const void *p, size_t n)
{
    if (n == 0) return OG_OK;
    OG_TRY(og_buf_reserve(b, n));
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return OG_OK;
}

og_status og_buf_append_byte(og_buf *b, uint8_t c) { return og_buf_append(b, &c, 1); }

og_status og_buf_append_str(og_buf *b, const char *s) { return og_buf_append(b, s, strlen(s)); }

og_status og_buf_printf(og_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return og_err(OG_ERR_INTERNAL, "bad format string");
    OG_TRY(og_buf_reserve(b, (size_t)n + 1));
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return OG_OK;
}

og_status og_buf_append_zeros(og_buf *b, size_t n)
{
    if (n == 0) return OG_OK;
    OG_TRY(og_buf_reserve(b, n));
    memset(b->data + b->len, 0, n);
    b->len += n;
    return OG_OK;
}

og_status og_buf_append_u16le(og_buf *b, uint16_t v)
{
    uint8_t t[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    return og_buf_append(b, t, 2);
}

og_status og_buf_append_u32le(og_buf *b, uint32_t v)
{
    uint8_t t[4];
    for (int i = 0; i < 4; i++) t[i] = (uint8_t)(v >> (8 * i));
    return og_buf_append(b, t, 4);
}

og_status og_buf_append_u64le(og_buf *b, uint64_t v)
{
    uint8_t t[8];
    for (int i = 0; i < 8; i++) t[i] = (uint8_t)(v >> (8 * i));
    return og_buf_append(b, t, 8);
}

og_status og_buf_pad_to(og_buf *b, size_t align)
{
    size_t rem = b->len & (align - 1);
    return rem ? og_buf_append_zeros(b, align - rem) : OG_OK;
}

const char *og_buf_cstr(og_buf *b)
{
    if (!b->data && og_buf_reserve(b, 1) != OG_OK) return "";
    b->data[b->len] = '\0';
    return (const char *)b->data;
}

void og_buf_reset(og_buf *b)
{
    b->len = 0;
    b->failed = 0;
}

void og_buf_free(og_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

og_bytes og_buf_take(og_buf *b)
{
    og_bytes out = {b->data, b->len};
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
    return out;
}

void og_bytes_free(og_bytes *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

og_status og_buf_read_file(og_buf *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return og_err_errno(errno, "cannot read %s", path);
    size_t start = b->len;
    char chunk[65536];
    size_t n;
    og_status st = OG_OK;
    while (st == OG_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0) st = og_buf_append(b, chunk, n);
    if (st == OG_OK && ferror(f)) st = og_err_errno(errno ? errno : EIO, "cannot read %s", path);
    fclose(f);
    if (st != OG_OK) {
        b->len = start;
        return st;
    }
    og_buf_cstr(b);
    return OG_OK;
}
