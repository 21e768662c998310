/*
 * test_fts.c — the full-text index file (index/fts.h) and the index registry (index/index.h):
 * documents, term frequencies, positions and lengths round-trip; stop and non-stop
 * occurrences of one stem are separate entries; nulls keep their row; truncated, foreign,
 * another analyzer's and damaged files are refused or reported (never read out of bounds);
 * index file names follow the documented rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "index/fts.h"
#include "index/index.h"
#include "util/error.h"

#define OK(expr)                                                                                   \
    do {                                                                                           \
        og_status ok_st_ = (expr);                                                                 \
        if (ok_st_ != OG_OK) fail_msg("%s -> %d: %s", #expr, (int)ok_st_, og_error_message());   \
    } while (0)

static const char *DOCS[] = {
    "The quick brown fox jumps over the lazy dog", /* the(stop) quick brown fox jump over the lazi dog */
    NULL,
    "having have",                                 /* have (non-stop, from "having") and have (stop) */
    "dog dog dog",
};
#define NDOCS 4

static int doc_fn(void *ud, size_t i, const char **p, size_t *len)
{
    (void)ud;
    if (!DOCS[i]) return 0;
    *p = DOCS[i];
    *len = strlen(DOCS[i]);
    return 1;
}

static void encode(og_buf *b)
{
    og_analyzer *an;
    OK(og_analyzer_new(&an, NULL));
    OK(og_fts_encode(an, NDOCS, doc_fn, NULL, b));
    og_analyzer_free(an);
}

static og_fts *open_encoded(void)
{
    og_buf b = OG_BUF_INIT;
    encode(&b);
    og_fts *f = NULL;
    OK(og_fts_open_bytes(&f, b.data, b.len, b.data, NULL));
    return f;
}

static void postings_round_trip(void **state)
{
    (void)state;
    og_fts *f = open_encoded();
    assert_int_equal(og_fts_rows(f), NDOCS);
    assert_int_equal(og_fts_doc_len(f, 0), 7);
    assert_int_equal(og_fts_doc_len(f, 1), OG_FTS_NULL_LEN);
    assert_int_equal(og_fts_doc_len(f, 2), 1);
    assert_int_equal(og_fts_doc_len(f, 3), 3);
    assert_int_equal(og_fts_doc_len(f, 99), OG_FTS_NULL_LEN);
    /* dog: doc 0 (tf 1, position 8), doc 3 (tf 3, positions 0 1 2) */
    long e = og_fts_find(f, "dog", 3, 0);
    assert_true(e >= 0);
    og_fts_iter it;
    og_fts_iter_init(&it, f, (size_t)e, 1);
    assert_int_equal(og_fts_iter_next(&it), 1);
    assert_int_equal(it.doc, 0);
    assert_int_equal(it.tf, 1);
    assert_int_equal(it.pos[0], 8);
    assert_int_equal(og_fts_iter_next(&it), 1);
    assert_int_equal(it.doc, 3);
    assert_int_equal(it.tf, 3);
    assert_int_equal(it.pos[0], 0);
    assert_int_equal(it.pos[2], 2);
    assert_int_equal(og_fts_iter_next(&it), 0);
    og_fts_iter_free(&it);
    /* "the" only as a stop word, twice in doc 0 */
    assert_true(og_fts_find(f, "the", 3, 0) < 0);
    e = og_fts_find(f, "the", 3, 1);
    assert_true(e >= 0);
    og_fts_iter_init(&it, f, (size_t)e, 1);
    assert_int_equal(og_fts_iter_next(&it), 1);
    assert_int_equal(it.tf, 2);
    assert_int_equal(it.pos[0], 0);
    assert_int_equal(it.pos[1], 6);
    og_fts_iter_free(&it);
    /* one stem, two entries: "having" -> have (non-stop, position 0), "have" (stop, position 1) */
    long ns = og_fts_find(f, "have", 4, 0), sw = og_fts_find(f, "have", 4, 1);
    assert_true(ns >= 0 && sw >= 0 && ns != sw);
    og_fts_iter_init(&it, f, (size_t)sw, 1);
    assert_int_equal(og_fts_iter_next(&it), 1);
    assert_int_equal(it.doc, 2);
    assert_int_equal(it.pos[0], 1);
    og_fts_iter_free(&it);
    assert_true(og_fts_find(f, "cat", 3, 0) < 0);
    assert_true(og_fts_find(f, "", 0, 0) < 0);
    /* entries ascend by (term, stop); document frequencies */
    const char *prev = NULL;
    size_t pl = 0;
    for (size_t i = 0; i < og_fts_terms(f); i++) {
        const char *t;
        size_t tl;
        int stop;
        uint32_t df;
        og_fts_term(f, i, &t, &tl, &stop, &df);
        if (prev) {
            int c = memcmp(prev, t, pl < tl ? pl : tl);
            assert_true(c < 0 || (c == 0 && pl <= tl));
        }
        if (tl == 3 && !memcmp(t, "dog", 3)) assert_int_equal(df, 2);
        prev = t, pl = tl;
    }
    og_fts_free(f);
}

static void empty_and_all_null(void **state)
{
    (void)state;
    og_analyzer *an;
    OK(og_analyzer_new(&an, NULL));
    og_vector v;
    OK(og_vector_init(&v, (og_type){OG_T_STRING, OG_T_NULL, 0}));
    og_buf b = OG_BUF_INIT;
    OK(og_fts_encode_vector(an, &v, &b)); /* zero rows */
    og_fts *f;
    OK(og_fts_open_bytes(&f, b.data, b.len, b.data, NULL));
    assert_int_equal(og_fts_rows(f), 0);
    assert_int_equal(og_fts_terms(f), 0);
    assert_true(og_fts_find(f, "a", 1, 0) < 0);
    og_fts_free(f);
    OK(og_vector_append_null(&v));
    OK(og_vector_append_bytes(&v, "...", 3));
    og_buf b2 = OG_BUF_INIT;
    OK(og_fts_encode_vector(an, &v, &b2));
    OK(og_fts_open_bytes(&f, b2.data, b2.len, b2.data, NULL));
    assert_int_equal(og_fts_rows(f), 2);
    assert_int_equal(og_fts_doc_len(f, 0), OG_FTS_NULL_LEN);
    assert_int_equal(og_fts_doc_len(f, 1), 0);
    og_fts_free(f);
    og_vector_free(&v);
    og_analyzer_free(an);
}

static void damaged_files_are_refused(void **state)
{
    (void)state;
    og_buf b = OG_BUF_INIT;
    encode(&b);
    og_fts *f;
    /* truncated at every length */
    for (size_t n = 0; n < b.len; n++) {
        assert_int_equal(og_fts_open_bytes(&f, b.data, n, NULL, NULL), OG_ERR_CORRUPT);
        og_error_clear();
    }
    /* another analyzer's or format's file */
    for (size_t at = 8; at <= 12; at += 4) {
        b.data[at]++;
        assert_int_equal(og_fts_open_bytes(&f, b.data, b.len, NULL, NULL), OG_ERR_CORRUPT);
        b.data[at]--;
    }
    /* a lying size */
    b.data[16]++;
    assert_int_equal(og_fts_open_bytes(&f, b.data, b.len, NULL, NULL), OG_ERR_CORRUPT);
    b.data[16]--;
    og_error_clear();
    OK(og_index_def_fts.check(b.data, b.len, NDOCS));
    assert_int_equal(og_index_def_fts.check(b.data, b.len, NDOCS + 1), OG_ERR_CORRUPT);
    og_error_clear();
    /* every single-byte change after the header opens or not, but iterating never reads out
     * of bounds and reports damage as a negative status */
    for (size_t at = 96; at + 8 < b.len; at++) {
        uint8_t keep = b.data[at];
        b.data[at] ^= 0xff;
        if (og_fts_open_bytes(&f, b.data, b.len, NULL, NULL) == OG_OK) {
            for (size_t i = 0; i < og_fts_terms(f); i++) {
                og_fts_iter it;
                og_fts_iter_init(&it, f, i, 1);
                int r;
                while ((r = og_fts_iter_next(&it)) == 1) assert_true(it.doc < NDOCS);
                assert_true(r == 0 || r == -(int)OG_ERR_CORRUPT);
                og_fts_iter_free(&it);
            }
            (void)og_fts_find(f, "dog", 3, 0);
            og_fts_free(f);
        }
        og_error_clear();
        b.data[at] = keep;
    }
    og_buf_free(&b);
}

static void registry_and_file_names(void **state)
{
    (void)state;
    assert_true(og_index_def_count() >= 1);
    assert_ptr_equal(og_index_def_find("fts"), &og_index_def_fts);
    assert_null(og_index_def_find("nope"));
    assert_null(og_index_def_find(NULL));
    for (size_t i = 0; i < og_index_def_count(); i++) assert_ptr_equal(og_index_def_find(og_index_def_at(i)->name), og_index_def_at(i));
    assert_true(og_index_def_fts.applies((og_type){OG_T_STRING, OG_T_NULL, 0}, 2 /* inverted */));
    assert_false(og_index_def_fts.applies((og_type){OG_T_I64, OG_T_NULL, 0}, 1));
    int32_t fields[] = {3, 12};
    og_data_file df = {0};
    df.path = "0a1b-2c3d.lance";
    df.fields = fields;
    df.nfields = 2;
    og_fragment fr = {0};
    fr.id = 7;
    fr.files = &df;
    fr.nfiles = 1;
    char key[256];
    OK(og_index_file_key(key, sizeof key, "node_1_4.lance", &fr, 12, &og_index_def_fts));
    assert_string_equal(key, "_index/node_1_4.lance/0a1b-2c3d/fts-12.v1");
    assert_int_equal(og_index_file_key(key, sizeof key, "node_1_4.lance", &fr, 5, &og_index_def_fts), OG_ERR_NOT_FOUND);
    assert_int_equal(og_index_file_key(key, 10, "node_1_4.lance", &fr, 12, &og_index_def_fts), OG_ERR_LIMIT);
    og_error_clear();
    /* view rows of a fragment with deletions: live offsets 0, 2, 5 at view rows 10, 11, 12 */
    uint64_t addrs[] = {(7ull << 32) | 0, (7ull << 32) | 2, (7ull << 32) | 5};
    og_index_frag f = {7, 6, 10, 3, addrs, 0, NULL, NULL};
    assert_int_equal(og_index_frag_row(&f, 0), 10);
    assert_int_equal(og_index_frag_row(&f, 1), UINT32_MAX);
    assert_int_equal(og_index_frag_row(&f, 5), 12);
    assert_int_equal(og_index_frag_row(&f, 6), UINT32_MAX);
    og_index_frag g = {8, 4, 3, 4, NULL, 0, NULL, NULL};
    assert_int_equal(og_index_frag_row(&g, 3), 6);
    assert_int_equal(og_index_frag_row(&g, 4), UINT32_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(postings_round_trip),
        cmocka_unit_test(empty_and_all_null),
        cmocka_unit_test(damaged_files_are_refused),
        cmocka_unit_test(registry_and_file_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
