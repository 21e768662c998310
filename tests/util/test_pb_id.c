/*
 * test_pb_id.c — protobuf wire round trips (varint edges, packed lists, negative ints,
 * malformed input rejected as corrupt) and ULID/UUID shape and ordering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/id.h"
#include "util/pb.h"

static void pb_round_trips_fields(void **state)
{
    (void)state;
    og_buf b = OG_BUF_INIT;
    uint64_t packed[] = {0, 1, 127, 128, UINT64_MAX};
    assert_int_equal(og_pb_put_uint(&b, 1, 300), OG_OK);
    assert_int_equal(og_pb_put_int(&b, 4, -1), OG_OK);
    assert_int_equal(og_pb_put_str(&b, 2, "hello"), OG_OK);
    assert_int_equal(og_pb_put_packed_uint(&b, 3, packed, 5), OG_OK);
    assert_int_equal(og_pb_put_fixed64(&b, 5, 42), OG_OK);

    og_pb_reader r = og_pb_reader_init(b.data, b.len);
    og_pb_field f;
    assert_int_equal(og_pb_next(&r, &f), 1);
    assert_int_equal(f.field, 1);
    assert_int_equal(f.u, 300);
    assert_int_equal(og_pb_next(&r, &f), 1);
    assert_int_equal((int64_t)f.u, -1);
    assert_int_equal(og_pb_next(&r, &f), 1);
    assert_int_equal(f.len, 5);
    assert_memory_equal(f.data, "hello", 5);
    assert_int_equal(og_pb_next(&r, &f), 1);
    uint64_t *vals;
    size_t n;
    assert_int_equal(og_pb_unpack_uints(&f, &vals, &n), OG_OK);
    assert_int_equal(n, 5);
    assert_true(vals[4] == UINT64_MAX);
    assert_int_equal(vals[3], 128);
    free(vals);
    assert_int_equal(og_pb_next(&r, &f), 1);
    assert_int_equal(f.wire, OG_PB_I64);
    assert_int_equal(f.u, 42);
    assert_int_equal(og_pb_next(&r, &f), 0);
    og_buf_free(&b);
}

static void pb_rejects_truncated_and_overlong(void **state)
{
    (void)state;
    const uint8_t trunc_len[] = {0x12, 0x05, 'a', 'b'};      /* says 5 bytes, has 2 */
    const uint8_t trunc_var[] = {0x08, 0x80, 0x80};          /* varint never ends */
    const uint8_t field0[] = {0x00, 0x01};                   /* field number 0 */
    const uint8_t wire7[] = {0x0f, 0x01};                    /* wire type 7 */
    const uint8_t *cases[] = {trunc_len, trunc_var, field0, wire7};
    size_t lens[] = {sizeof trunc_len, sizeof trunc_var, sizeof field0, sizeof wire7};
    for (int i = 0; i < 4; i++) {
        og_pb_reader r = og_pb_reader_init(cases[i], lens[i]);
        og_pb_field f;
        assert_int_equal(og_pb_next(&r, &f), -1);
    }
}

static void ulids_are_valid_and_strictly_increasing(void **state)
{
    (void)state;
    char prev[OG_ULID_LEN + 1] = "";
    for (int i = 0; i < 2000; i++) {
        char id[OG_ULID_LEN + 1];
        assert_int_equal(og_ulid_new(id), OG_OK);
        assert_true(og_ulid_valid(id));
        assert_true(strcmp(prev, id) < 0);
        strcpy(prev, id);
    }
    assert_false(og_ulid_valid("not-a-ulid"));
    char u[OG_UUID_LEN + 1];
    og_uuid_new(u);
    assert_int_equal(strlen(u), 36);
    assert_int_equal(u[14], '4');
    char t[25];
    og_format_time_ms(1764687845123LL, t);
    assert_string_equal(t, "2025-12-02T15:04:05.123Z");
}

/* The first 10 chars are the 48-bit millisecond timestamp in Crockford base32 (ULID spec). */
static void ulid_prefix_encodes_the_creation_millisecond(void **state)
{
    (void)state;
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    int64_t before = og_now_ms();
    char id[OG_ULID_LEN + 1];
    assert_int_equal(og_ulid_new(id), OG_OK);
    int64_t after = og_now_ms();
    int64_t ms = 0;
    for (int c = 0; c < 10; c++) {
        const char *d = strchr(alphabet, id[c]);
        assert_non_null(d);
        ms = ms * 32 + (d - alphabet);
    }
    assert_true(ms >= before && ms <= after);
    /* the next id in the same millisecond is the 80-bit random part plus one */
    char next[OG_ULID_LEN + 1];
    assert_int_equal(og_ulid_new(next), OG_OK);
    if (!strncmp(id, next, 10) && id[25] != 'Z') {
        assert_memory_equal(id, next, 25);
        assert_int_equal(strchr(alphabet, next[25]) - strchr(alphabet, id[25]), 1);
    }
}

/* og_ulid_new_n (a load's generated ids): n ids as n og_ulid_new calls in one millisecond —
 * valid, strictly increasing, each the previous 128-bit value plus one (decoded here with
 * the whole 130-bit layout, so the split time / random encoding is pinned), and the next
 * og_ulid_new still above them.  The ids after the first of a call are made by a base-32
 * increment of the previous one's characters (util/id.c): 100 calls of 300 carry over one
 * character about every 32 ids, over two about every 1,024. */
static void ulids_made_many_at_once_are_consecutive(void **state)
{
    (void)state;
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    char ids[300][OG_ULID_LEN + 1];
    for (int round = 0; round < 100; round++) {
        assert_int_equal(og_ulid_new_n(ids, 300), OG_OK);
        unsigned __int128 prev = 0;
        for (int k = 0; k < 300; k++) {
            assert_true(og_ulid_valid(ids[k]));
            unsigned __int128 x = 0;
            for (int c = 0; c < OG_ULID_LEN; c++) x = (x << 5) | (unsigned)(strchr(alphabet, ids[k][c]) - alphabet);
            if (k) {
                assert_true(strcmp(ids[k - 1], ids[k]) < 0);
                assert_true(x == prev + 1);
            }
            prev = x;
        }
    }
    char next[OG_ULID_LEN + 1];
    assert_int_equal(og_ulid_new(next), OG_OK);
    assert_true(strcmp(ids[299], next) < 0);
    assert_int_equal(og_ulid_new_n(ids, 0), OG_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pb_round_trips_fields),
        cmocka_unit_test(pb_rejects_truncated_and_overlong),
        cmocka_unit_test(ulids_are_valid_and_strictly_increasing),
        cmocka_unit_test(ulid_prefix_encodes_the_creation_millisecond),
        cmocka_unit_test(ulids_made_many_at_once_are_consecutive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
