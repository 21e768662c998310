/*
 * test_deletion.c — Lance deletion files: the BITMAP byte layout LANCE.md specifies (array
 * container, bitmap container above 4096 rows, two containers for a 70000-row fragment, no
 * run containers even for a bitmap built from ranges), round trips, rejection of corrupt
 * bodies, and ARROW_ARRAY files: hand-built Arrow IPC (stream and file, uncompressed and
 * ZSTD) and one LanceDB 0.31 wrote (tests/table/data/lancedb_deletion.arrow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zstd.h>

#include "table/deletion.h"

static roaring_bitmap_t *of(const uint32_t *v, size_t n)
{
    roaring_bitmap_t *bm = roaring_bitmap_create();
    roaring_bitmap_add_many(bm, n, v);
    return bm;
}

static void check_round_trip(const roaring_bitmap_t *bm, const og_buf *b)
{
    roaring_bitmap_t *back = NULL;
    assert_int_equal(og_deletion_decode(OG_DELETION_BITMAP, b->data, b->len, &back), OG_OK);
    assert_true(roaring_bitmap_equals(bm, back));
    roaring_bitmap_free(back);
}

static void array_container_layout(void **state)
{
    (void)state;
    uint32_t rows[] = {1, 5, 7, 19};
    roaring_bitmap_t *bm = of(rows, 4);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_deletion_encode_bitmap(bm, &b), OG_OK);
    const uint8_t want[] = {
        0x3a, 0x30, 0, 0,   /* cookie 12346 */
        1, 0, 0, 0,         /* one container */
        0, 0, 3, 0,         /* key 0, cardinality - 1 = 3 */
        16, 0, 0, 0,        /* body at byte 16 */
        1, 0, 5, 0, 7, 0, 19, 0,
    };
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    check_round_trip(bm, &b);
    og_buf_free(&b);
    roaring_bitmap_free(bm);
}

static void bitmap_container_layout(void **state)
{
    (void)state;
    roaring_bitmap_t *bm = roaring_bitmap_create();
    for (uint32_t r = 0; r < 10000; r += 2) roaring_bitmap_add(bm, r); /* 5000 rows */
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_deletion_encode_bitmap(bm, &b), OG_OK);
    assert_int_equal(b.len, 16 + 8192);
    assert_int_equal(og_load_u32le(b.data), 12346);
    assert_int_equal(og_load_u32le(b.data + 4), 1);
    assert_int_equal(og_load_u16le(b.data + 8), 0);
    assert_int_equal(og_load_u16le(b.data + 10), 4999);
    assert_int_equal(og_load_u32le(b.data + 12), 16);
    /* rows 0..9998 even: words 0..155 are 0x5555...; word 156 holds rows 9984..9998 */
    for (int w = 0; w < 156; w++) assert_true(og_load_u64le(b.data + 16 + 8 * w) == 0x5555555555555555ull);
    assert_true(og_load_u64le(b.data + 16 + 8 * 156) == 0x5555ull);
    for (int w = 157; w < 1024; w++) assert_true(og_load_u64le(b.data + 16 + 8 * w) == 0);
    check_round_trip(bm, &b);
    og_buf_free(&b);
    roaring_bitmap_free(bm);
}

static void two_containers_70000_rows(void **state)
{
    (void)state;
    roaring_bitmap_t *bm = roaring_bitmap_create();
    for (uint32_t r = 0; r < 65536; r += 3) roaring_bitmap_add(bm, r);      /* 21846: bitmap */
    for (uint32_t r = 65536; r < 70000; r += 100) roaring_bitmap_add(bm, r); /* 45: array */
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_deletion_encode_bitmap(bm, &b), OG_OK);
    assert_int_equal(og_load_u32le(b.data), 12346);
    assert_int_equal(og_load_u32le(b.data + 4), 2);
    assert_int_equal(og_load_u16le(b.data + 8), 0);
    assert_int_equal(og_load_u16le(b.data + 10), 21846 - 1);
    assert_int_equal(og_load_u16le(b.data + 12), 1);
    assert_int_equal(og_load_u16le(b.data + 14), 45 - 1);
    assert_int_equal(og_load_u32le(b.data + 16), 24);
    assert_int_equal(og_load_u32le(b.data + 20), 24 + 8192);
    assert_int_equal(b.len, 24 + 8192 + 2 * 45);
    assert_int_equal(og_load_u16le(b.data + 24 + 8192), 0);     /* 65536 & 0xFFFF */
    assert_int_equal(og_load_u16le(b.data + 24 + 8192 + 2), 100);
    check_round_trip(bm, &b);
    og_buf_free(&b);
    roaring_bitmap_free(bm);
}

static void ranges_never_give_run_containers(void **state)
{
    (void)state;
    roaring_bitmap_t *bm = roaring_bitmap_create();
    roaring_bitmap_add_range(bm, 0, 60000); /* CRoaring makes a run container here */
    roaring_bitmap_add_range(bm, 70000, 70010);
    roaring_bitmap_run_optimize(bm);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_deletion_encode_bitmap(bm, &b), OG_OK);
    assert_int_equal(og_load_u32le(b.data), 12346);
    assert_int_equal(og_load_u32le(b.data + 4), 2);
    assert_int_equal(og_load_u16le(b.data + 10), 59999);
    assert_int_equal(og_load_u16le(b.data + 14), 9);
    assert_int_equal(b.len, 24 + 8192 + 20);
    check_round_trip(bm, &b);

    /* our reader also accepts CRoaring's run layout (12347), as other writers may use it */
    size_t n = roaring_bitmap_portable_size_in_bytes(bm);
    char *raw = malloc(n);
    roaring_bitmap_portable_serialize(bm, raw);
    assert_int_equal(og_load_u16le((const uint8_t *)raw), 12347);
    roaring_bitmap_t *back = NULL;
    assert_int_equal(og_deletion_decode(OG_DELETION_BITMAP, (const uint8_t *)raw, n, &back), OG_OK);
    assert_true(roaring_bitmap_equals(bm, back));
    roaring_bitmap_free(back);
    free(raw);
    og_buf_free(&b);
    roaring_bitmap_free(bm);
}

static void empty_bitmap(void **state)
{
    (void)state;
    roaring_bitmap_t *bm = roaring_bitmap_create();
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_deletion_encode_bitmap(bm, &b), OG_OK);
    assert_int_equal(b.len, 8);
    check_round_trip(bm, &b);
    og_buf_free(&b);
    roaring_bitmap_free(bm);
}

static void corrupt_bitmaps_rejected(void **state)
{
    (void)state;
    uint32_t rows[] = {1, 5, 7, 19, 70000};
    roaring_bitmap_t *bm = of(rows, 5);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_deletion_encode_bitmap(bm, &b), OG_OK);
    roaring_bitmap_t *out = NULL;
    /* every truncation */
    for (size_t n = 0; n < b.len; n++)
        assert_int_equal(og_deletion_decode(OG_DELETION_BITMAP, b.data, n, &out), OG_ERR_CORRUPT);
    /* bad cookie */
    b.data[0] ^= 0xff;
    assert_int_equal(og_deletion_decode(OG_DELETION_BITMAP, b.data, b.len, &out), OG_ERR_CORRUPT);
    b.data[0] ^= 0xff;
    /* unsorted array: swap 5 and 7 */
    size_t body = 8 + 2 * 4 + 2 * 4;
    b.data[body + 2] = 7;
    b.data[body + 4] = 5;
    assert_int_equal(og_deletion_decode(OG_DELETION_BITMAP, b.data, b.len, &out), OG_ERR_CORRUPT);
    /* every single-byte corruption gives OK or CORRUPT, never a crash */
    for (size_t i = 0; i < b.len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            b.data[i] ^= (uint8_t)(1u << bit);
            og_status st = og_deletion_decode(OG_DELETION_BITMAP, b.data, b.len, &out);
            assert_true(st == OG_OK || st == OG_ERR_CORRUPT);
            if (st == OG_OK) roaring_bitmap_free(out);
            b.data[i] ^= (uint8_t)(1u << bit);
        }
    }
    og_buf_free(&b);
    roaring_bitmap_free(bm);
}

static void deletion_paths(void **state)
{
    (void)state;
    char p[64];
    assert_int_equal(og_deletion_path(p, sizeof p, 3, 7, 1234, OG_DELETION_BITMAP), OG_OK);
    assert_string_equal(p, "_deletions/3-7-1234.bin");
    assert_int_equal(og_deletion_path(p, sizeof p, 0, 1, 9, OG_DELETION_ARROW_ARRAY), OG_OK);
    assert_string_equal(p, "_deletions/0-1-9.arrow");
    assert_int_equal(og_deletion_path(p, 8, 0, 1, 9, OG_DELETION_BITMAP), OG_ERR_INVALID);
}

/* --- a hand-built Arrow IPC file: FlatBuffers written back to front, as flatc would ------ */

typedef struct fbb {
    uint8_t buf[2048];
    size_t head; /* data lives in buf[head, sizeof buf) */
} fbb;

static size_t fb_pos(const fbb *b) { return sizeof b->buf - b->head; } /* offset from the end */
static void fb_bytes(fbb *b, const void *p, size_t n)
{
    b->head -= n;
    memcpy(b->buf + b->head, p, n);
}
static void fb_pad(fbb *b, size_t align)
{
    while (fb_pos(b) % align) fb_bytes(b, "\0", 1);
}
static void fb_u32(fbb *b, uint32_t v) { uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)}; fb_bytes(b, t, 4); }
static void fb_u64(fbb *b, uint64_t v) { fb_u32(b, (uint32_t)(v >> 32)); fb_u32(b, (uint32_t)v); }
static void fb_u16(fbb *b, uint16_t v) { uint8_t t[2] = {(uint8_t)v, (uint8_t)(v >> 8)}; fb_bytes(b, t, 2); }

/* Table fields given as (size, value, is_offset): writes the table, then its vtable right
 * before it; returns the table's position.  Offsets are positions (from the end). */
typedef struct fbf { int size; uint64_t v; int is_ref; } fbf;
static size_t fb_table(fbb *b, const fbf *f, int n)
{
    fb_pad(b, 8);
    uint16_t offs[16] = {0};
    size_t end = fb_pos(b);
    for (int i = n - 1; i >= 0; i--) {
        if (!f[i].size) continue;
        fb_pad(b, (size_t)f[i].size);
        if (f[i].is_ref) {
            fb_pad(b, 4);
            fb_u32(b, (uint32_t)(fb_pos(b) + 4 - f[i].v));
        } else if (f[i].size == 8) {
            fb_u64(b, f[i].v);
        } else if (f[i].size == 4) {
            fb_u32(b, (uint32_t)f[i].v);
        } else if (f[i].size == 2) {
            fb_u16(b, (uint16_t)f[i].v);
        } else {
            uint8_t c = (uint8_t)f[i].v;
            fb_bytes(b, &c, 1);
        }
        offs[i] = (uint16_t)fb_pos(b);
    }
    fb_pad(b, 4);
    fb_u32(b, 0); /* soffset to the vtable, patched below */
    size_t table = fb_pos(b);
    uint16_t tsize = (uint16_t)(table - end);
    /* vtable: vsize, tsize, field offsets relative to the table start */
    for (int i = n - 1; i >= 0; i--) fb_u16(b, offs[i] ? (uint16_t)(table - offs[i]) : 0);
    fb_u16(b, tsize);
    fb_u16(b, (uint16_t)(4 + 2 * n));
    size_t vt = fb_pos(b);
    int32_t so = (int32_t)(vt - table); /* vtable is before the table: table - soffset = vtable */
    size_t at = sizeof b->buf - table;
    b->buf[at] = (uint8_t)so;
    b->buf[at + 1] = (uint8_t)(so >> 8);
    b->buf[at + 2] = (uint8_t)(so >> 16);
    b->buf[at + 3] = (uint8_t)(so >> 24);
    return table;
}
static size_t fb_finish(fbb *b, size_t root)
{
    fb_pad(b, 4);
    fb_u32(b, (uint32_t)(fb_pos(b) + 4 - root));
    return fb_pos(b);
}

/* Appends one encapsulated message (continuation, length, flatbuffer padded to 8, body). */
static void ipc_message(og_buf *out, fbb *b, const uint8_t *body, size_t body_len)
{
    size_t len = fb_pos(b);
    size_t padded = (len + 7) & ~(size_t)7;
    og_buf_append_u32le(out, 0xFFFFFFFFu);
    og_buf_append_u32le(out, (uint32_t)padded);
    og_buf_append(out, b->buf + b->head, len);
    og_buf_append_zeros(out, padded - len);
    og_buf_append(out, body, body_len);
}

static size_t schema_table(fbb *b)
{
    fbf intf[] = {{4, 32, 0}, {1, 0, 0}}; /* Int {bitWidth 32, is_signed false} */
    size_t ty = fb_table(b, intf, 2);
    fb_pad(b, 4);
    fb_bytes(b, "row_id\0\0", 8);
    fb_u32(b, 6);
    size_t name = fb_pos(b);
    fbf fieldf[] = {{4, name, 1}, {1, 0, 0}, {1, 2, 0}, {4, ty, 1}};
    size_t field = fb_table(b, fieldf, 4);
    fb_pad(b, 4);
    fb_u32(b, (uint32_t)(fb_pos(b) + 4 - field));
    fb_u32(b, 1);
    size_t fields = fb_pos(b);
    fbf schemaf[] = {{0, 0, 0}, {4, fields, 1}};
    return fb_table(b, schemaf, 2);
}

static void build_schema(og_buf *out)
{
    fbb b;
    b.head = sizeof b.buf;
    size_t schema = schema_table(&b);
    fbf msgf[] = {{2, 4, 0}, {1, 1, 0}, {4, schema, 1}, {8, 0, 0}};
    fb_finish(&b, fb_table(&b, msgf, 4));
    ipc_message(out, &b, NULL, 0);
}

/* The file footer: Footer {version, schema, recordBatches: [Block {offset, metaDataLength,
 * bodyLength}]}, then its length and the closing magic. */
static void build_footer(og_buf *out, uint64_t off, uint32_t meta_len, uint64_t body_len)
{
    fbb b;
    b.head = sizeof b.buf;
    size_t schema = schema_table(&b);
    fb_pad(&b, 8);
    fb_u64(&b, body_len);
    fb_u32(&b, 0);
    fb_u32(&b, meta_len);
    fb_u64(&b, off);
    fb_u32(&b, 1);
    size_t blocks = fb_pos(&b);
    fbf footf[] = {{2, 4, 0}, {4, schema, 1}, {0, 0, 0}, {4, blocks, 1}};
    fb_finish(&b, fb_table(&b, footf, 4));
    size_t len = fb_pos(&b);
    og_buf_append(out, b.buf + b.head, len);
    og_buf_append_u32le(out, (uint32_t)len);
    og_buf_append(out, "ARROW1", 6);
}

static void build_batch(og_buf *out, const uint32_t *rows, size_t n, int zstd)
{
    og_buf body = OG_BUF_INIT;
    size_t data_len;
    if (zstd) {
        size_t cap = ZSTD_compressBound(4 * n);
        uint8_t *tmp = malloc(cap);
        size_t c = ZSTD_compress(tmp, cap, rows, 4 * n, 3);
        og_buf_append_u64le(&body, 4 * n);
        og_buf_append(&body, tmp, c);
        free(tmp);
    } else {
        og_buf_append(&body, rows, 4 * n);
    }
    data_len = body.len;
    og_buf_pad_to(&body, 8);
    fbb b;
    b.head = sizeof b.buf;
    size_t comp = 0;
    if (zstd) {
        fbf cf[] = {{1, 1, 0}, {1, 0, 0}};
        comp = fb_table(&b, cf, 2);
    }
    fb_pad(&b, 8);
    fb_u64(&b, data_len); /* buffers: [validity {0,0}, data {0, len}] back to front */
    fb_u64(&b, 0);
    fb_u64(&b, 0);
    fb_u64(&b, 0);
    fb_u32(&b, 2);
    size_t bufs = fb_pos(&b);
    fb_pad(&b, 8);
    fb_u64(&b, 0);
    fb_u64(&b, n);
    fb_u32(&b, 1);
    size_t nodes = fb_pos(&b);
    fbf rbf[] = {{8, n, 0}, {4, nodes, 1}, {4, bufs, 1}, {zstd ? 4 : 0, comp, 1}};
    size_t rb = fb_table(&b, rbf, 4);
    fbf msgf[] = {{2, 4, 0}, {1, 3, 0}, {4, rb, 1}, {8, body.len, 0}};
    fb_finish(&b, fb_table(&b, msgf, 4));
    ipc_message(out, &b, body.data, body.len);
    og_buf_free(&body);
}

static void arrow_files(void **state)
{
    (void)state;
    uint32_t rows[] = {0, 3, 4, 100, 65537};
    for (int variant = 0; variant < 4; variant++) {
        int zstd = variant & 1, file = variant >> 1;
        og_buf f = OG_BUF_INIT;
        if (file) {
            og_buf_append(&f, "ARROW1", 6);
            og_buf_append_zeros(&f, 58); /* Lance pads the magic to 64 bytes */
        }
        build_schema(&f);
        size_t batch_at = f.len;
        build_batch(&f, rows, 5, zstd);
        size_t batch_end = f.len;
        og_buf_append_u32le(&f, 0xFFFFFFFFu);
        og_buf_append_u32le(&f, 0);
        if (file) {
            uint32_t meta = og_load_u32le(f.data + batch_at + 4) + 8;
            build_footer(&f, batch_at, meta, batch_end - batch_at - meta);
        }
        roaring_bitmap_t *bm = NULL;
        assert_int_equal(og_deletion_decode(OG_DELETION_ARROW_ARRAY, f.data, f.len, &bm), OG_OK);
        assert_int_equal(roaring_bitmap_get_cardinality(bm), 5);
        for (int i = 0; i < 5; i++) assert_true(roaring_bitmap_contains(bm, rows[i]));
        roaring_bitmap_free(bm);
        /* every truncation and every byte flip: OK, CORRUPT or UNSUPPORTED, never a crash */
        for (size_t n = 0; n < f.len; n++) {
            og_status st = og_deletion_decode(OG_DELETION_ARROW_ARRAY, f.data, n, &bm);
            if (st == OG_OK) roaring_bitmap_free(bm);
            else assert_int_equal(st, OG_ERR_CORRUPT);
        }
        for (size_t i = 0; i < f.len; i++) {
            f.data[i] ^= 0x5a;
            og_status st = og_deletion_decode(OG_DELETION_ARROW_ARRAY, f.data, f.len, &bm);
            assert_true(st == OG_OK || st == OG_ERR_CORRUPT || st == OG_ERR_UNSUPPORTED);
            if (st == OG_OK) roaring_bitmap_free(bm);
            f.data[i] ^= 0x5a;
        }
        og_buf_free(&f);
    }
}

/* A deletion file LanceDB 0.31 wrote itself (its delete() hid rows 167, 216 and 442 of a
 * fragment of ours): Arrow IPC file, magic padded to 64 bytes, ZSTD body compression. */
static void lancedb_arrow_file(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/table/data/lancedb_deletion.arrow", OG_SOURCE_DIR);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    uint8_t buf[4096];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    assert_true(n > 100);
    roaring_bitmap_t *bm = NULL;
    assert_int_equal(og_deletion_decode(OG_DELETION_ARROW_ARRAY, buf, n, &bm), OG_OK);
    assert_int_equal(roaring_bitmap_get_cardinality(bm), 3);
    assert_true(roaring_bitmap_contains(bm, 167));
    assert_true(roaring_bitmap_contains(bm, 216));
    assert_true(roaring_bitmap_contains(bm, 442));
    roaring_bitmap_free(bm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(array_container_layout),
        cmocka_unit_test(bitmap_container_layout),
        cmocka_unit_test(two_containers_70000_rows),
        cmocka_unit_test(ranges_never_give_run_containers),
        cmocka_unit_test(empty_bitmap),
        cmocka_unit_test(corrupt_bitmaps_rejected),
        cmocka_unit_test(deletion_paths),
        cmocka_unit_test(arrow_files),
        cmocka_unit_test(lancedb_arrow_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
