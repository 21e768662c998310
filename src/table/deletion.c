/*
 * deletion.c — Lance deletion files (see deletion.h): the BITMAP kind we write and read, and
 * the ARROW_ARRAY kind LanceDB writes, which we read.
 *
 * BITMAP bodies are written by CRoaring's portable serialisation, after making sure the bitmap
 * holds no run containers (the layout LANCE.md describes; tests/table/test_deletion.c pins the
 * bytes).  They are read by our own strict decoder rather than CRoaring's, so that a corrupt
 * file (unsorted arrays, overlapping runs, a wrong cardinality) is refused as OG_ERR_CORRUPT
 * instead of producing a bitmap that breaks CRoaring's invariants later.
 *
 * ARROW_ARRAY bodies are Arrow IPC: a Schema message and one (or more) RecordBatch messages,
 * each a FlatBuffers table, with the row offsets in the batch body.  A small bounds-checked
 * FlatBuffers reader below is all that needs: tables, vtables, vectors, unions.
 */
#include "table/deletion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <zstd.h>

#include "util/error.h"

#define COOKIE_NO_RUN 12346u
#define COOKIE_RUN 12347u
#define ARRAY_MAX 4096u

/* ------------------------------------------------------------------------------------------ */
/* BITMAP: writing                                                                             */
/* ------------------------------------------------------------------------------------------ */

og_status og_deletion_encode_bitmap(const roaring_bitmap_t *rows, og_buf *out)
{
    /* Rebuild from the values: CRoaring then holds an array container up to 4096 values and a
     * bitmap container above, never a run container, whatever operations built `rows`. */
    uint64_t card = roaring_bitmap_get_cardinality(rows);
    uint32_t *vals = card ? malloc((size_t)card * sizeof *vals) : NULL;
    if (card && !vals) return og_err(OG_ERR_NOMEM, "out of memory encoding a deletion bitmap");
    if (card) roaring_bitmap_to_uint32_array(rows, vals);
    roaring_bitmap_t *plain = roaring_bitmap_create();
    if (!plain) {
        free(vals);
        return og_err(OG_ERR_NOMEM, "out of memory encoding a deletion bitmap");
    }
    if (card) roaring_bitmap_add_many(plain, (size_t)card, vals);
    free(vals);
    roaring_bitmap_remove_run_compression(plain);

    size_t need = roaring_bitmap_portable_size_in_bytes(plain);
    og_status st = og_buf_reserve(out, need);
    if (st == OG_OK) {
        size_t wrote = roaring_bitmap_portable_serialize(plain, (char *)out->data + out->len);
        if (wrote != need || wrote < 8 || og_load_u32le(out->data + out->len) != COOKIE_NO_RUN)
            st = og_err(OG_ERR_INTERNAL, "roaring serialisation did not give the no-run layout");
        else
            out->len += wrote;
    }
    roaring_bitmap_free(plain);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* BITMAP: reading (portable roaring, with or without run containers)                          */
/* ------------------------------------------------------------------------------------------ */

static og_status corrupt(const char *what)
{
    return og_err(OG_ERR_CORRUPT, "deletion file: %s", what);
}

static og_status decode_bitmap(const uint8_t *p, size_t len, roaring_bitmap_t *bm)
{
    if (len < 4) return corrupt("shorter than its cookie");
    uint32_t cookie = og_load_u32le(p);
    size_t pos, n;
    const uint8_t *runbits = NULL;
    int has_offsets;
    if (cookie == COOKIE_NO_RUN) {
        if (len < 8) return corrupt("truncated header");
        n = og_load_u32le(p + 4);
        pos = 8;
        has_offsets = 1;
    } else if ((cookie & 0xFFFFu) == COOKIE_RUN) {
        n = (size_t)(cookie >> 16) + 1;
        pos = 4;
        size_t rb = (n + 7) / 8;
        if (len - pos < rb) return corrupt("truncated run flags");
        runbits = p + pos;
        pos += rb;
        has_offsets = n >= 4; /* CRoaring's NO_OFFSET_THRESHOLD */
    } else {
        return corrupt("unknown roaring cookie");
    }
    if (n > 65536) return corrupt("too many containers");
    if ((len - pos) / 4 < n) return corrupt("truncated container headers");
    const uint8_t *hdr = p + pos;
    pos += 4 * n;
    const uint8_t *offs = NULL;
    if (has_offsets) {
        if ((len - pos) / 4 < n) return corrupt("truncated container offsets");
        offs = p + pos;
        pos += 4 * n; /* bodies follow in order; each offset is checked against that below */
    }
    uint32_t *vals = malloc(65536 * sizeof *vals);
    if (!vals) return og_err(OG_ERR_NOMEM, "out of memory decoding a deletion bitmap");
    og_status st = OG_OK;
    long prev_key = -1;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        uint32_t key = og_load_u16le(hdr + 4 * i);
        uint32_t card = (uint32_t)og_load_u16le(hdr + 4 * i + 2) + 1;
        if ((long)key <= prev_key) { st = corrupt("container keys not increasing"); break; }
        prev_key = key;
        if (has_offsets && og_load_u32le(offs + 4 * i) != pos) {
            st = corrupt("container offset does not match its body");
            break;
        }
        int is_run = runbits && ((runbits[i >> 3] >> (i & 7)) & 1);
        size_t cnt = 0;
        if (is_run) {
            if (len - pos < 2) { st = corrupt("truncated run container"); break; }
            size_t nruns = og_load_u16le(p + pos);
            pos += 2;
            if ((len - pos) / 4 < nruns) { st = corrupt("truncated run container"); break; }
            long last = -1;
            for (size_t r = 0; r < nruns; r++) {
                uint32_t start = og_load_u16le(p + pos + 4 * r);
                uint32_t lenm1 = og_load_u16le(p + pos + 4 * r + 2);
                if ((long)start <= last || start + lenm1 > 0xFFFFu) { st = corrupt("bad run"); break; }
                for (uint32_t x = start; x <= start + lenm1; x++) vals[cnt++] = (key << 16) | x;
                last = (long)(start + lenm1);
            }
            pos += 4 * nruns;
            if (st == OG_OK && cnt != card) st = corrupt("run container cardinality mismatch");
        } else if (card <= ARRAY_MAX) {
            if ((len - pos) / 2 < card) { st = corrupt("truncated array container"); break; }
            long last = -1;
            for (size_t k = 0; k < card; k++) {
                uint32_t x = og_load_u16le(p + pos + 2 * k);
                if ((long)x <= last) { st = corrupt("array container not sorted"); break; }
                last = x;
                vals[cnt++] = (key << 16) | x;
            }
            pos += 2 * (size_t)card;
        } else {
            if (len - pos < 8192) { st = corrupt("truncated bitmap container"); break; }
            for (uint32_t w = 0; w < 1024; w++) {
                uint64_t word = og_load_u64le(p + pos + 8 * w);
                while (word) {
                    int b = __builtin_ctzll(word);
                    vals[cnt++] = (key << 16) | (w << 6) | (uint32_t)b;
                    word &= word - 1;
                }
            }
            pos += 8192;
            if (cnt != card) st = corrupt("bitmap container cardinality mismatch");
        }
        if (st == OG_OK) roaring_bitmap_add_many(bm, cnt, vals);
    }
    free(vals);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* ARROW_ARRAY: a minimal, bounds-checked FlatBuffers reader                                   */
/* ------------------------------------------------------------------------------------------ */

typedef struct fb {
    const uint8_t *p;
    size_t len;
} fb;

/* A table at absolute position t within b, or t == SIZE_MAX when absent/invalid. */
static int fb_table_ok(const fb *b, size_t t, size_t *vt, size_t *vlen)
{
    if (t > b->len || b->len - t < 4) return 0;
    int32_t so = (int32_t)og_load_u32le(b->p + t);
    int64_t v = (int64_t)t - so;
    if (v < 0 || (uint64_t)v > b->len || b->len - (size_t)v < 4) return 0;
    size_t vs = og_load_u16le(b->p + v);
    if (vs < 4 || (vs & 1) || b->len - (size_t)v < vs) return 0;
    *vt = (size_t)v;
    *vlen = vs;
    return 1;
}

/* Position of field `i` of table t, or 0 when the field is absent. */
static size_t fb_field(const fb *b, size_t t, unsigned i, size_t width)
{
    size_t vt, vs;
    if (!fb_table_ok(b, t, &vt, &vs)) return 0;
    size_t at = 4 + 2 * (size_t)i;
    if (at + 2 > vs) return 0;
    size_t off = og_load_u16le(b->p + vt + at);
    if (!off) return 0;
    if (t + off > b->len || b->len - (t + off) < width) return 0;
    return t + off;
}

static uint64_t fb_uint(const fb *b, size_t t, unsigned i, size_t width, uint64_t dflt)
{
    size_t at = fb_field(b, t, i, width);
    if (!at) return dflt;
    switch (width) {
    case 1: return b->p[at];
    case 2: return og_load_u16le(b->p + at);
    case 4: return og_load_u32le(b->p + at);
    default: return og_load_u64le(b->p + at);
    }
}

/* Follows an offset field to its target (a table, vector or string); SIZE_MAX if absent. */
static size_t fb_ref(const fb *b, size_t t, unsigned i)
{
    size_t at = fb_field(b, t, i, 4);
    if (!at) return SIZE_MAX;
    uint64_t target = (uint64_t)at + og_load_u32le(b->p + at);
    return target < b->len ? (size_t)target : SIZE_MAX;
}

/* A vector field: *count elements of `elem` bytes starting at the returned position. */
static size_t fb_vector(const fb *b, size_t t, unsigned i, size_t elem, size_t *count)
{
    size_t v = fb_ref(b, t, i);
    *count = 0;
    if (v == SIZE_MAX || b->len - v < 4) return SIZE_MAX;
    size_t n = og_load_u32le(b->p + v);
    if (elem && (b->len - v - 4) / elem < n) return SIZE_MAX;
    *count = n;
    return v + 4;
}

enum { MSG_SCHEMA = 1, MSG_RECORD_BATCH = 3 };
enum { TYPE_INT = 2 };
enum { CODEC_LZ4_FRAME = 0, CODEC_ZSTD = 1 };

/* Checks the Schema message: one field of type Int with 32-bit width. */
static og_status check_schema(const fb *b, size_t schema)
{
    size_t nf;
    size_t fields = fb_vector(b, schema, 1, 4, &nf);
    if (fields == SIZE_MAX || nf != 1) return corrupt("arrow schema must have exactly one field");
    size_t fpos = fields;
    size_t field = (size_t)((uint64_t)fpos + og_load_u32le(b->p + fpos));
    if (field >= b->len) return corrupt("arrow field out of range");
    if (fb_uint(b, field, 2, 1, 0) != TYPE_INT) return corrupt("arrow deletion column is not an integer");
    size_t ty = fb_ref(b, field, 3);
    if (ty == SIZE_MAX || fb_uint(b, ty, 0, 4, 0) != 32)
        return corrupt("arrow deletion column is not 32-bit");
    return OG_OK;
}

/* One (possibly compressed) buffer of a record batch body, into *out (malloc'd). */
static og_status body_buffer(const uint8_t *body, size_t body_len, uint64_t off, uint64_t len,
                             int codec, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (off > body_len || len > body_len - off) return corrupt("arrow buffer outside the body");
    const uint8_t *p = body + off;
    if (len == 0) return OG_OK;
    if (codec < 0) {
        *out = malloc(len);
        if (!*out) return og_err(OG_ERR_NOMEM, "out of memory");
        memcpy(*out, p, len);
        *out_len = len;
        return OG_OK;
    }
    if (len < 8) return corrupt("compressed arrow buffer shorter than its length prefix");
    int64_t raw = (int64_t)og_load_u64le(p);
    p += 8;
    len -= 8;
    if (raw == -1) {
        *out = malloc(len ? len : 1);
        if (!*out) return og_err(OG_ERR_NOMEM, "out of memory");
        memcpy(*out, p, len);
        *out_len = len;
        return OG_OK;
    }
    if (raw < 0 || raw > (int64_t)1 << 34) return corrupt("bad uncompressed arrow buffer length");
    if (codec == CODEC_ZSTD) {
        unsigned long long fcs = ZSTD_getFrameContentSize(p, len);
        if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != (unsigned long long)raw)
            return corrupt("zstd frame size differs from the buffer's length prefix");
    }
    *out = malloc(raw ? (size_t)raw : 1);
    if (!*out) return og_err(OG_ERR_NOMEM, "out of memory");
    if (codec == CODEC_ZSTD) {
        size_t got = ZSTD_decompress(*out, (size_t)raw, p, len);
        if (ZSTD_isError(got) || got != (size_t)raw) {
            free(*out);
            *out = NULL;
            return corrupt("zstd buffer does not decompress");
        }
    } else {
        LZ4F_dctx *dctx = NULL;
        if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
            free(*out);
            *out = NULL;
            return og_err(OG_ERR_NOMEM, "out of memory (lz4)");
        }
        size_t dst = (size_t)raw, src = len;
        size_t r = LZ4F_decompress(dctx, *out, &dst, p, &src, NULL);
        LZ4F_freeDecompressionContext(dctx);
        if (LZ4F_isError(r) || dst != (size_t)raw) {
            free(*out);
            *out = NULL;
            return corrupt("lz4 buffer does not decompress");
        }
    }
    *out_len = (size_t)raw;
    return OG_OK;
}

static og_status record_batch(const fb *b, size_t rb, const uint8_t *body, size_t body_len,
                              roaring_bitmap_t *bm)
{
    uint64_t rows = fb_uint(b, rb, 0, 8, 0);
    size_t nn, nb;
    size_t nodes = fb_vector(b, rb, 1, 16, &nn);
    size_t bufs = fb_vector(b, rb, 2, 16, &nb);
    if (nodes == SIZE_MAX || nn != 1 || bufs == SIZE_MAX || nb != 2)
        return corrupt("arrow record batch must have one column with two buffers");
    uint64_t nlen = og_load_u64le(b->p + nodes), nulls = og_load_u64le(b->p + nodes + 8);
    if (nlen != rows) return corrupt("arrow column length differs from the batch length");
    if (nulls != 0) return corrupt("arrow deletion column has nulls");
    int codec = -1;
    size_t comp = fb_ref(b, rb, 3);
    if (comp != SIZE_MAX) {
        codec = (int)fb_uint(b, comp, 0, 1, 0);
        if (codec != CODEC_ZSTD && codec != CODEC_LZ4_FRAME)
            return og_err(OG_ERR_UNSUPPORTED, "deletion file: unknown arrow compression codec %d", codec);
    }
    uint8_t *vals;
    size_t vlen;
    OG_TRY(body_buffer(body, body_len, og_load_u64le(b->p + bufs + 16), og_load_u64le(b->p + bufs + 24),
                       codec, &vals, &vlen));
    og_status st = OG_OK;
    if (rows > vlen / 4) st = corrupt("arrow value buffer shorter than the batch");
    for (uint64_t i = 0; st == OG_OK && i < rows; i++) {
        uint32_t x = og_load_u32le(vals + 4 * i);
        roaring_bitmap_add(bm, x);
    }
    free(vals);
    return st;
}

/* One encapsulated message at data[pos..]: [0xFFFFFFFF][u32 len] (or the pre-1.0 [u32 len])
 * then the FlatBuffers Message, then its body.  Sets *next to the byte after the body;
 * *end_of_stream for a zero length. */
static og_status read_message(const uint8_t *p, size_t len, size_t pos, int *seen_schema,
                              roaring_bitmap_t *bm, size_t *next, int *end_of_stream)
{
    *end_of_stream = 0;
    if (pos > len || len - pos < 4) return corrupt("truncated arrow message");
    uint32_t mlen = og_load_u32le(p + pos);
    pos += 4;
    if (mlen == 0xFFFFFFFFu) {
        if (len - pos < 4) return corrupt("truncated arrow message");
        mlen = og_load_u32le(p + pos);
        pos += 4;
    }
    if (mlen == 0) {
        *end_of_stream = 1;
        *next = pos;
        return OG_OK;
    }
    if (mlen > len - pos || mlen < 4) return corrupt("arrow message runs past the end");
    fb b = {p + pos, mlen};
    size_t root = og_load_u32le(b.p);
    if (root >= mlen) return corrupt("arrow message root out of range");
    uint64_t type = fb_uint(&b, root, 1, 1, 0);
    size_t header = fb_ref(&b, root, 2);
    int64_t body_len = (int64_t)fb_uint(&b, root, 3, 8, 0);
    pos += mlen;
    if (body_len < 0 || (uint64_t)body_len > len - pos) return corrupt("arrow body runs past the end");
    if (header == SIZE_MAX) return corrupt("arrow message without a header");
    if (type == MSG_SCHEMA) {
        OG_TRY(check_schema(&b, header));
        *seen_schema = 1;
    } else if (type == MSG_RECORD_BATCH) {
        if (!*seen_schema) return corrupt("arrow record batch before the schema");
        OG_TRY(record_batch(&b, header, p + pos, (size_t)body_len, bm));
    } else {
        return corrupt("unexpected arrow message type");
    }
    *next = pos + (size_t)body_len;
    return OG_OK;
}

/* The IPC file format: "ARROW1" + padding, messages, then the Footer flatbuffer, its i32
 * length and "ARROW1".  Writers may pad after the leading magic (Lance aligns to 64 bytes),
 * so the record batches are found through the footer's blocks, as Arrow readers do. */
static og_status decode_arrow_file(const uint8_t *p, size_t len, roaring_bitmap_t *bm)
{
    if (len < 8 + 10) return corrupt("arrow file too short");
    uint32_t flen = og_load_u32le(p + len - 10);
    if (flen > len - 10 - 8 || flen < 4) return corrupt("arrow footer length out of range");
    fb b = {p + len - 10 - flen, flen};
    size_t root = og_load_u32le(b.p);
    if (root >= flen) return corrupt("arrow footer root out of range");
    size_t schema = fb_ref(&b, root, 1);
    if (schema == SIZE_MAX) return corrupt("arrow footer without a schema");
    OG_TRY(check_schema(&b, schema));
    size_t nblocks;
    size_t blocks = fb_vector(&b, root, 3, 24, &nblocks);
    if (blocks == SIZE_MAX) return OG_OK; /* no record batch: nothing deleted */
    size_t data_end = len - 10 - flen;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t off = og_load_u64le(b.p + blocks + 24 * i);
        if (off < 8 || off >= data_end) return corrupt("arrow block outside the file");
        int seen = 1, eos = 0;
        size_t next = 0;
        OG_TRY(read_message(p, data_end, (size_t)off, &seen, bm, &next, &eos));
        if (eos) return corrupt("arrow block points at an end-of-stream marker");
    }
    return OG_OK;
}

/* The IPC stream format: messages until an end-of-stream marker or the end of the bytes. */
static og_status decode_arrow(const uint8_t *p, size_t len, roaring_bitmap_t *bm)
{
    if (len >= 8 && memcmp(p, "ARROW1", 6) == 0) return decode_arrow_file(p, len, bm);
    size_t pos = 0;
    int seen_schema = 0;
    while (len - pos >= 4) {
        int eos = 0;
        size_t next = 0;
        OG_TRY(read_message(p, len, pos, &seen_schema, bm, &next, &eos));
        if (eos) break;
        pos = next;
    }
    if (!seen_schema) return corrupt("arrow stream without a schema");
    return OG_OK;
}

og_status og_deletion_decode_arrow(const uint8_t *data, size_t len, roaring_bitmap_t **out)
{
    roaring_bitmap_t *bm = roaring_bitmap_create();
    if (!bm) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = decode_arrow(data, len, bm);
    if (st != OG_OK) {
        roaring_bitmap_free(bm);
        return st;
    }
    *out = bm;
    return OG_OK;
}

og_status og_deletion_decode(og_deletion_kind kind, const uint8_t *data, size_t len,
                             roaring_bitmap_t **out)
{
    if (kind == OG_DELETION_ARROW_ARRAY) return og_deletion_decode_arrow(data, len, out);
    if (kind != OG_DELETION_BITMAP) return og_err(OG_ERR_UNSUPPORTED, "unknown deletion file type %d", (int)kind);
    roaring_bitmap_t *bm = roaring_bitmap_create();
    if (!bm) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = decode_bitmap(data, len, bm);
    if (st != OG_OK) {
        roaring_bitmap_free(bm);
        return st;
    }
    *out = bm;
    return OG_OK;
}

og_status og_deletion_path(char *out, size_t cap, uint64_t fragment_id, uint64_t read_version,
                           uint64_t id, og_deletion_kind kind)
{
    int n = snprintf(out, cap, "_deletions/%llu-%llu-%llu.%s", (unsigned long long)fragment_id,
                     (unsigned long long)read_version, (unsigned long long)id,
                     kind == OG_DELETION_BITMAP ? "bin" : "arrow");
    if (n < 0 || (size_t)n >= cap) return og_err(OG_ERR_INVALID, "deletion path too long");
    return OG_OK;
}
