/*
 * test_manifest.c — lance.table.Manifest: encode/decode round trip of every field we write
 * (schema with a primary key and a list, fragments with several data files and a deletion
 * file, flags, max_fragment_id present even when 0, writer version, data format), the file
 * layout ([u32 len][msg] + 16-byte footer), V2/V1 names, and typed rejection (OG_ERR_CORRUPT)
 * of corrupt or truncated manifests — never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "table/manifest.h"
#include "util/error.h"
#include "util/pb.h"

static og_data_file make_file(const char *path, const int32_t *ids, size_t n)
{
    og_data_file d;
    memset(&d, 0, sizeof d);
    d.path = strdup(path);
    d.fields = malloc(n * sizeof *d.fields);
    d.column_indices = malloc(n * sizeof *d.column_indices);
    for (size_t i = 0; i < n; i++) {
        d.fields[i] = ids[i];
        d.column_indices[i] = (int32_t)i;
    }
    d.nfields = d.ncolumn_indices = n;
    d.major = 2;
    d.size_bytes = 1234 + n;
    return d;
}

static void build(og_manifest *m)
{
    og_manifest_init(m);
    og_type i64 = {OG_T_I64, OG_T_NULL, 0}, str = {OG_T_STRING, OG_T_NULL, 0};
    og_type lst = {OG_T_LIST, OG_T_STRING, 0}, vec = {OG_T_VECTOR, OG_T_NULL, 8};
    assert_int_equal(og_lance_schema_add_column(&m->schema, "id", str, 0, -1, 0, 1), OG_OK);
    assert_int_equal(og_lance_schema_add_column(&m->schema, "n", i64, 1, -1, 1, 0), OG_OK);
    assert_int_equal(og_lance_schema_add_column(&m->schema, "tags", lst, 17, 40, 1, 0), OG_OK);
    assert_int_equal(og_lance_schema_add_column(&m->schema, "emb", vec, 41, -1, 1, 0), OG_OK);

    int32_t ids_a[] = {0, 1, 17, 40, 41}, ids_b[] = {99};
    og_fragment f;
    memset(&f, 0, sizeof f);
    f.id = 0;
    f.physical_rows = 10;
    f.nfiles = 1;
    f.files = calloc(1, sizeof *f.files);
    f.files[0] = make_file("a.lance", ids_a, 5);
    assert_int_equal(og_manifest_add_fragment(m, &f), OG_OK);
    og_fragment_free(&f);

    memset(&f, 0, sizeof f);
    f.id = 7;
    f.physical_rows = 70000;
    f.nfiles = 2;
    f.files = calloc(2, sizeof *f.files);
    f.files[0] = make_file("b.lance", ids_a, 5);
    f.files[1] = make_file("c.lance", ids_b, 1);
    f.deletion = (og_deletion_info){1, OG_DELETION_BITMAP, 3, 987654321, 21891};
    assert_int_equal(og_manifest_add_fragment(m, &f), OG_OK);
    og_fragment_free(&f);

    m->version = 4;
    m->ts_seconds = 1764680000;
    m->ts_nanos = 123000000;
    m->reader_flags = m->writer_flags = OG_LANCE_FLAG_DELETION_FILES;
    m->has_max_fragment_id = 1;
    m->max_fragment_id = 9;
    assert_int_equal(og_manifest_set_strings(m, "omnigraph-c", "0.1.0", "lance", "2.0"), OG_OK);
}

static void assert_same(const og_manifest *a, const og_manifest *b)
{
    assert_int_equal(a->schema.count, b->schema.count);
    for (size_t i = 0; i < a->schema.count; i++) {
        const og_lance_field *x = &a->schema.fields[i], *y = &b->schema.fields[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->parent_id, y->parent_id);
        assert_string_equal(x->logical_type, y->logical_type);
        assert_int_equal(x->nullable, y->nullable);
        assert_int_equal(x->unenforced_primary_key, y->unenforced_primary_key);
        assert_int_equal(x->metadata_count, y->metadata_count);
    }
    assert_int_equal(a->nfragments, b->nfragments);
    for (size_t i = 0; i < a->nfragments; i++) {
        const og_fragment *x = &a->fragments[i], *y = &b->fragments[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->physical_rows, y->physical_rows);
        assert_int_equal(x->nfiles, y->nfiles);
        for (size_t k = 0; k < x->nfiles; k++) {
            assert_string_equal(x->files[k].path, y->files[k].path);
            assert_int_equal(x->files[k].nfields, y->files[k].nfields);
            assert_memory_equal(x->files[k].fields, y->files[k].fields, x->files[k].nfields * 4);
            assert_memory_equal(x->files[k].column_indices, y->files[k].column_indices, x->files[k].nfields * 4);
            assert_int_equal(x->files[k].major, y->files[k].major);
            assert_int_equal(x->files[k].minor, y->files[k].minor);
            assert_int_equal(x->files[k].size_bytes, y->files[k].size_bytes);
        }
        assert_int_equal(x->deletion.present, y->deletion.present);
        assert_int_equal(x->deletion.kind, y->deletion.kind);
        assert_int_equal(x->deletion.read_version, y->deletion.read_version);
        assert_int_equal(x->deletion.id, y->deletion.id);
        assert_int_equal(x->deletion.num_deleted_rows, y->deletion.num_deleted_rows);
    }
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->ts_seconds, b->ts_seconds);
    assert_int_equal(a->ts_nanos, b->ts_nanos);
    assert_int_equal(a->reader_flags, b->reader_flags);
    assert_int_equal(a->writer_flags, b->writer_flags);
    assert_int_equal(a->has_max_fragment_id, b->has_max_fragment_id);
    assert_int_equal(a->max_fragment_id, b->max_fragment_id);
    assert_string_equal(a->writer_library, b->writer_library);
    assert_string_equal(a->format_name, b->format_name);
    assert_string_equal(a->format_version, b->format_version);
}

static void round_trip(void **state)
{
    (void)state;
    og_manifest m, back, copy;
    build(&m);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_manifest_file_encode(&m, &b), OG_OK);
    /* layout: length word at 0, footer [i64 0][u16 0][u16 2]["LANC"] */
    assert_int_equal(og_load_u32le(b.data), b.len - 4 - 16);
    assert_true(og_load_u64le(b.data + b.len - 16) == 0);
    assert_int_equal(og_load_u16le(b.data + b.len - 8), 0);
    assert_int_equal(og_load_u16le(b.data + b.len - 6), 2);
    assert_memory_equal(b.data + b.len - 4, "LANC", 4);
    assert_int_equal(og_manifest_file_decode(b.data, b.len, &back), OG_OK);
    assert_same(&m, &back);
    assert_int_equal(og_fragment_live_rows(&back.fragments[1]), 70000 - 21891);
    assert_int_equal(og_manifest_live_rows(&back), 10 + 70000 - 21891);
    /* the primary key survived with its metadata */
    assert_int_equal(back.schema.fields[0].unenforced_primary_key, 1);
    assert_int_equal(back.schema.fields[0].nullable, 0);
    assert_non_null(og_lance_field_metadata(&back.schema.fields[0], OG_LANCE_PK_METADATA_KEY, NULL));
    assert_int_equal(og_manifest_copy(&copy, &back), OG_OK);
    assert_same(&m, &copy);
    og_manifest_free(&copy);
    og_manifest_free(&back);
    og_manifest_free(&m);
    og_buf_free(&b);
}

/* max_fragment_id is a proto3 optional: 0 must still be on the wire. */
static void max_fragment_id_zero_is_written(void **state)
{
    (void)state;
    og_manifest m, back;
    build(&m);
    og_fragment_free(&m.fragments[1]);
    m.nfragments = 1;
    m.max_fragment_id = 0;
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_manifest_encode(&m, &b), OG_OK);
    og_pb_reader r = og_pb_reader_init(b.data, b.len);
    og_pb_field f;
    int seen = 0;
    while (og_pb_next(&r, &f) == 1)
        if (f.field == 11) seen = 1 + (int)f.u;
    assert_int_equal(seen, 1);
    assert_int_equal(og_manifest_decode(b.data, b.len, &back), OG_OK);
    assert_int_equal(back.has_max_fragment_id, 1);
    assert_int_equal(back.max_fragment_id, 0);
    og_manifest_free(&back);
    og_manifest_free(&m);
    og_buf_free(&b);
}

/* The footer's position is honoured (LanceDB may write other sections before the manifest). */
static void manifest_not_at_zero(void **state)
{
    (void)state;
    og_manifest m, back;
    build(&m);
    og_buf msg = OG_BUF_INIT, file = OG_BUF_INIT;
    assert_int_equal(og_manifest_encode(&m, &msg), OG_OK);
    og_buf_append_zeros(&file, 100);
    og_buf_append_u32le(&file, (uint32_t)msg.len);
    og_buf_append(&file, msg.data, msg.len);
    og_buf_append_u64le(&file, 100);
    og_buf_append_u16le(&file, 0);
    og_buf_append_u16le(&file, 2);
    og_buf_append(&file, "LANC", 4);
    assert_int_equal(og_manifest_file_decode(file.data, file.len, &back), OG_OK);
    assert_same(&m, &back);
    og_manifest_free(&back);
    og_manifest_free(&m);
    og_buf_free(&msg);
    og_buf_free(&file);
}

static og_status decode_file(og_buf *b)
{
    og_manifest back;
    og_status st = og_manifest_file_decode(b->data, b->len, &back);
    if (st == OG_OK) og_manifest_free(&back);
    return st;
}

static void corrupt_manifests_rejected(void **state)
{
    (void)state;
    og_manifest m;
    build(&m);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_manifest_file_encode(&m, &b), OG_OK);

    /* every truncation */
    for (size_t n = 0; n < b.len; n++) {
        og_buf t = {b.data, n, n, 0};
        assert_int_equal(decode_file(&t), OG_ERR_CORRUPT);
    }
    /* wrong magic */
    b.data[b.len - 1] = 'X';
    assert_int_equal(decode_file(&b), OG_ERR_CORRUPT);
    b.data[b.len - 1] = 'C';
    /* footer position past the end */
    b.data[b.len - 16] = 0xff;
    assert_int_equal(decode_file(&b), OG_ERR_CORRUPT);
    b.data[b.len - 16] = 0;
    /* length word larger than the body */
    b.data[3] = 0x7f;
    assert_int_equal(decode_file(&b), OG_ERR_CORRUPT);
    b.data[3] = 0;
    assert_int_equal(decode_file(&b), OG_OK);
    /* every single-byte corruption: OK or a typed error, never a crash */
    for (size_t i = 0; i < b.len; i++) {
        for (int k = 0; k < 3; k++) {
            static const uint8_t x[3] = {0x01, 0x80, 0xff};
            b.data[i] ^= x[k];
            og_status st = decode_file(&b);
            assert_true(st == OG_OK || st == OG_ERR_CORRUPT || st == OG_ERR_UNSUPPORTED);
            b.data[i] ^= x[k];
        }
    }
    og_buf_free(&b);

    /* semantic checks */
    og_manifest bad;
    assert_int_equal(og_manifest_copy(&bad, &m), OG_OK);
    bad.max_fragment_id = 3; /* below fragment 7 */
    assert_int_equal(og_manifest_file_encode(&bad, &b), OG_OK);
    assert_int_equal(decode_file(&b), OG_ERR_CORRUPT);
    og_buf_reset(&b);
    bad.max_fragment_id = 9;
    bad.fragments[1].id = 0; /* duplicate id */
    assert_int_equal(og_manifest_file_encode(&bad, &b), OG_OK);
    assert_int_equal(decode_file(&b), OG_ERR_CORRUPT);
    og_buf_reset(&b);
    bad.fragments[1].id = 7;
    bad.fragments[1].deletion.num_deleted_rows = 70001; /* more than its rows */
    assert_int_equal(og_manifest_file_encode(&bad, &b), OG_OK);
    assert_int_equal(decode_file(&b), OG_ERR_CORRUPT);
    og_buf_reset(&b);
    og_manifest_free(&bad);

    /* a message that is not a manifest at all */
    const uint8_t junk[] = {0x08, 0x96, 0x01, 0x12, 0x7f};
    og_manifest back;
    assert_int_equal(og_manifest_decode(junk, sizeof junk, &back), OG_ERR_CORRUPT);
    /* no version number */
    assert_int_equal(og_manifest_decode(junk, 0, &back), OG_ERR_CORRUPT);
    og_manifest_free(&m);
    og_buf_free(&b);
}

/* Appends fragment `id` of `rows` rows and one data file holding field 0. */
static void add_one_file_fragment(og_manifest *m, uint64_t id, uint64_t rows, const char *path)
{
    int32_t ids[] = {0};
    og_fragment f;
    memset(&f, 0, sizeof f);
    f.id = id;
    f.physical_rows = rows;
    f.nfiles = 1;
    f.files = calloc(1, sizeof *f.files);
    f.files[0] = make_file(path, ids, 1);
    assert_int_equal(og_manifest_add_fragment(m, &f), OG_OK);
    og_fragment_free(&f);
}

/* Fragment ids must be distinct in any order (the check sorts a copy when they do not
 * ascend): a repeat far apart, ids out of order, and a long ascending list that decodes with
 * every fragment in its place; copies of a decoded manifest own their files. */
static void fragment_ids_are_distinct_in_any_order(void **state)
{
    (void)state;
    og_manifest m, back;
    build(&m); /* fragments 0 and 7 */
    m.max_fragment_id = 5000;
    for (uint64_t id = 3000; id > 2990; id--) { /* descending after 0, 7 */
        add_one_file_fragment(&m, id, 1, "d.lance");
    }
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_manifest_encode(&m, &b), OG_OK);
    assert_int_equal(og_manifest_decode(b.data, b.len, &back), OG_OK);
    assert_int_equal(back.nfragments, 12);
    assert_int_equal(back.fragments[11].id, 2991);
    og_manifest_free(&back);
    m.fragments[5].id = 7; /* the same id as fragment 1, out of order */
    og_buf_free(&b);
    assert_int_equal(og_manifest_encode(&m, &b), OG_OK);
    assert_int_equal(og_manifest_decode(b.data, b.len, &back), OG_ERR_CORRUPT);
    assert_non_null(strstr(og_error_message(), "fragment id 7 appears twice"));
    og_error_clear();
    og_manifest_free(&m);
    og_buf_free(&b);
    /* 2,000 ascending fragments: one pass, all kept in order */
    build(&m);
    m.max_fragment_id = 5000;
    for (uint64_t id = 10; id < 2010; id++) {
        add_one_file_fragment(&m, id, 2, "e.lance");
    }
    assert_int_equal(og_manifest_encode(&m, &b), OG_OK);
    assert_int_equal(og_manifest_decode(b.data, b.len, &back), OG_OK);
    assert_int_equal(back.nfragments, 2002);
    for (size_t i = 2; i < 2002; i++) assert_int_equal(back.fragments[i].id, i + 8);
    /* a copy owns its files (the decoded manifest keeps them in one block): it outlives the
     * original, and freeing one of its fragments leaves the others whole */
    og_manifest copy;
    assert_int_equal(og_manifest_copy(&copy, &back), OG_OK);
    og_manifest_free(&back);
    assert_int_equal(copy.nfragments, 2002);
    assert_int_equal(copy.fragments[2001].id, 2009);
    assert_string_equal(copy.fragments[2001].files[0].path, "e.lance");
    assert_int_equal(copy.fragments[2001].files[0].nfields, 1);
    assert_int_equal(copy.fragments[2001].files[0].fields[0], 0);
    assert_string_equal(copy.fragments[1].files[1].path, "c.lance");
    assert_int_equal(copy.fragments[1].files[1].fields[0], 99);
    og_fragment_free(&copy.fragments[5]);
    assert_string_equal(copy.fragments[6].files[0].path, "e.lance");
    og_fragment extra;
    assert_int_equal(og_fragment_copy(&extra, &copy.fragments[7]), OG_OK);
    assert_int_equal(og_manifest_add_fragment(&copy, &extra), OG_OK);
    og_fragment_free(&extra);
    og_manifest again;
    assert_int_equal(og_manifest_copy(&again, &copy), OG_OK);
    og_manifest_free(&copy);
    assert_int_equal(again.nfragments, 2003);
    assert_string_equal(again.fragments[2002].files[0].path, "e.lance");
    assert_int_equal(again.fragments[2002].id, again.fragments[7].id);
    og_manifest_free(&again);
    og_manifest_free(&m);
    og_buf_free(&b);
}

/* A data file whose field ids are spelt out one varint field each (valid protobuf, never
 * what a writer packs) decodes whole, however many there are: the decoder's one-block arena
 * does not bound such a list, and its fragment falls back to memory of its own. */
static void unpacked_field_lists_decode_whole(void **state)
{
    (void)state;
    og_manifest m, back;
    build(&m);
    og_fragment_free(&m.fragments[1]);
    m.nfragments = 1;
    og_buf enc = OG_BUF_INIT, df = OG_BUF_INIT, fr = OG_BUF_INIT, body = OG_BUF_INIT;
    assert_int_equal(og_manifest_encode(&m, &enc), OG_OK);
    enum { K = 3000 };
    assert_int_equal(og_pb_put_str(&df, 1, "many.lance"), OG_OK); /* DataFile.path */
    for (int i = 0; i < K; i++) assert_int_equal(og_pb_put_uint(&df, 2, (uint64_t)(i % 5)), OG_OK); /* .fields */
    assert_int_equal(og_pb_put_uint(&fr, 1, 3), OG_OK);             /* DataFragment.id */
    assert_int_equal(og_pb_put_bytes(&fr, 2, df.data, df.len), OG_OK); /* .files */
    assert_int_equal(og_pb_put_uint(&fr, 4, 10), OG_OK);            /* .physical_rows */
    assert_int_equal(og_buf_append(&body, enc.data, enc.len), OG_OK);
    assert_int_equal(og_pb_put_bytes(&body, 2, fr.data, fr.len), OG_OK); /* Manifest.fragments */
    assert_int_equal(og_manifest_decode(body.data, body.len, &back), OG_OK);
    assert_int_equal(back.nfragments, 2);
    const og_data_file *d = &back.fragments[1].files[0];
    assert_string_equal(d->path, "many.lance");
    assert_int_equal(d->nfields, K);
    assert_int_equal(d->fields[K - 1], (K - 1) % 5);
    og_manifest copy;
    assert_int_equal(og_manifest_copy(&copy, &back), OG_OK);
    og_manifest_free(&back);
    assert_int_equal(copy.fragments[1].files[0].fields[K - 2], (K - 2) % 5);
    assert_string_equal(copy.fragments[0].files[0].path, "a.lance");
    og_manifest_free(&copy);
    og_manifest_free(&m);
    og_buf_free(&enc), og_buf_free(&df), og_buf_free(&fr), og_buf_free(&body);
}

static void names(void **state)
{
    (void)state;
    char p[64];
    assert_int_equal(og_manifest_path(p, sizeof p, 1), OG_OK);
    assert_string_equal(p, "_versions/18446744073709551614.manifest");
    assert_int_equal(og_manifest_path(p, sizeof p, 12), OG_OK);
    assert_string_equal(p, "_versions/18446744073709551603.manifest");
    uint64_t v;
    int v2;
    assert_int_equal(og_manifest_parse_name("tables/x/_versions/18446744073709551603.manifest", &v, &v2), 1);
    assert_int_equal(v, 12);
    assert_int_equal(v2, 1);
    assert_int_equal(og_manifest_parse_name("_versions/3.manifest", &v, &v2), 1);
    assert_int_equal(v, 3);
    assert_int_equal(v2, 0);
    assert_int_equal(og_manifest_parse_name("_versions/latest_version_hint.json", &v, NULL), 0);
    assert_int_equal(og_manifest_parse_name("_versions/.manifest", &v, NULL), 0);
    assert_int_equal(og_manifest_parse_name("_versions/0.manifest", &v, NULL), 0);
    assert_int_equal(og_manifest_parse_name("_versions/3.manifest.tmp", &v, NULL), 0);
    assert_int_equal(og_manifest_path(p, 10, 1), OG_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(max_fragment_id_zero_is_written),
        cmocka_unit_test(manifest_not_at_zero),
        cmocka_unit_test(corrupt_manifests_rejected),
        cmocka_unit_test(names),
        cmocka_unit_test(fragment_ids_are_distinct_in_any_order),
        cmocka_unit_test(unpacked_field_lists_decode_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
