/*
 * arrow_walk.h — a strict walker over an Arrow IPC stream, for the tests and the fuzzer
 * (header-only, static): checks the framing every Arrow reader relies on — continuation
 * markers, 8-aligned metadata lengths, the FlatBuffers Message table (version V5, its header
 * type, its body length), every buffer of a record batch inside the body and 8-aligned, and
 * the end-of-stream marker as the last 8 bytes.  Apache Arrow's own reader checks the rest
 * (tests/interop/arrow_output.test.mjs).
 */
#ifndef OG_TEST_ARROW_WALK_H
#define OG_TEST_ARROW_WALK_H

#include <stddef.h>
#include <stdint.h>

typedef struct arrow_walk {
    int64_t rows;     /* sum of the record batches' lengths */
    size_t batches;
    int64_t ncols;    /* fields of the schema */
    int64_t nodes;    /* field nodes of the last batch */
} arrow_walk;

static uint32_t aw_u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static int64_t aw_i64(const uint8_t *p) { return (int64_t)((uint64_t)aw_u32(p) | (uint64_t)aw_u32(p + 4) << 32); }

/* The position of field `id` of the table at `t` in buf[0..n), 0 when absent or out of bounds. */
static size_t aw_field(const uint8_t *b, size_t n, size_t t, int id, size_t width)
{
    if (t + 4 > n || t % 4) return 0;
    int32_t so = (int32_t)aw_u32(b + t);
    int64_t vt = (int64_t)t - so;
    if (vt < 0 || (size_t)vt + 4 > n) return 0;
    uint16_t vlen = (uint16_t)(b[vt] | b[vt + 1] << 8), tlen = (uint16_t)(b[vt + 2] | b[vt + 3] << 8);
    if ((size_t)vt + vlen > n || 4 + 2 * (size_t)id + 2 > vlen) return 0;
    uint16_t off = (uint16_t)(b[vt + 4 + 2 * id] | b[vt + 5 + 2 * id] << 8);
    if (!off || off + width > tlen || t + off + width > n || (t + off) % width) return 0;
    return t + off;
}

/* The target of the offset field `id` of table t; 0 when absent. */
static size_t aw_ref(const uint8_t *b, size_t n, size_t t, int id)
{
    size_t at = aw_field(b, n, t, id, 4);
    if (!at) return 0;
    size_t to = at + aw_u32(b + at);
    return to < n ? to : 0;
}

/* 0 when s[0..n) is a well-framed stream (w filled), else the byte position of the fault (+1). */
static size_t arrow_walk_stream(const uint8_t *s, size_t n, arrow_walk *w)
{
    *w = (arrow_walk){0, 0, -1, 0};
    size_t p = 0;
    for (int first = 1;; first = 0) {
        if (p + 8 > n || aw_u32(s + p) != 0xFFFFFFFFu) return p + 1;
        uint32_t mlen = aw_u32(s + p + 4);
        if (mlen == 0) return p + 8 == n && !first && w->ncols >= 0 ? 0 : p + 1; /* end of stream */
        if (mlen % 8 || p + 8 + mlen > n) return p + 1;
        const uint8_t *m = s + p + 8;
        size_t root = aw_u32(m);
        size_t fv = aw_field(m, mlen, root, 0, 2), ft = aw_field(m, mlen, root, 1, 1), fb = aw_field(m, mlen, root, 3, 8);
        size_t hdr = aw_ref(m, mlen, root, 2);
        if (!fv || (m[fv] | m[fv + 1] << 8) != 4 || !ft || !hdr) return p + 9;
        int64_t body = fb ? aw_i64(m + fb) : 0;
        if (body < 0 || body % 8 || p + 8 + mlen + (size_t)body > n) return p + 9;
        if (m[ft] == 1) { /* Schema: first, once */
            if (!first) return p + 9;
            size_t fields = aw_ref(m, mlen, hdr, 1);
            if (!fields || fields + 4 > mlen) return p + 9;
            w->ncols = aw_u32(m + fields);
        } else if (m[ft] == 3) { /* RecordBatch */
            if (first) return p + 9;
            size_t fl = aw_field(m, mlen, hdr, 0, 8), nodes = aw_ref(m, mlen, hdr, 1), bufs = aw_ref(m, mlen, hdr, 2);
            if (!fl || !nodes || !bufs || nodes + 4 > mlen || bufs + 4 > mlen) return p + 9;
            int64_t len = aw_i64(m + fl);
            uint32_t nn = aw_u32(m + nodes), nb = aw_u32(m + bufs);
            if (len < 0 || nodes + 4 + 16 * (size_t)nn > mlen || bufs + 4 + 16 * (size_t)nb > mlen) return p + 9;
            if ((nodes + 4) % 8 || (bufs + 4) % 8) return p + 9;
            for (uint32_t i = 0; i < nn; i++) {
                int64_t nl = aw_i64(m + nodes + 4 + 16 * i), nc = aw_i64(m + nodes + 12 + 16 * i);
                if (nl < 0 || nc < 0 || nc > nl) return p + 9;
            }
            for (uint32_t i = 0; i < nb; i++) {
                int64_t bo = aw_i64(m + bufs + 4 + 16 * i), bl = aw_i64(m + bufs + 12 + 16 * i);
                if (bo < 0 || bl < 0 || bo % 8 || bo + bl > body) return p + 9;
            }
            if (w->ncols >= 0 && (int64_t)nn < w->ncols) return p + 9;
            w->rows += len;
            w->batches++;
            w->nodes = nn;
        } else {
            return p + 9;
        }
        p += 8 + mlen + (size_t)body;
    }
}

#endif
