/*
 * lsqb_common.h — what the two LSQB conformance tests share (test_lsqb.c loads the converted
 * NDJSON, test_lsqb_csv.c the CSV files unchanged): where the data set is, its expected counts,
 * and running one counting query.  Header-only: each test is one translation unit.
 */
#ifndef OG_TEST_LSQB_COMMON_H
#define OG_TEST_LSQB_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../og_test_data.h"
#include "omnigraph.h"
#include "util/buf.h"

/* The data set: the development data beside the checkout, or $OG_LSQB_DIR (a work tree
 * elsewhere). */
static inline const char *lsqb_dir(void)
{
    const char *d = getenv("OG_LSQB_DIR");
    return d && *d ? d : OG_SHARED_DIR "/data/lsqb-example";
}

static inline char *lsqb_slurp(const char *path)
{
    og_buf b = OG_BUF_INIT;
    if (og_buf_read_file(&b, path) != OG_OK) return NULL;
    return (char *)og_buf_take(&b).data;
}

/* expected-counts.txt: lines "qN=COUNT"; out[n] = the count of qn, -1 where absent. */
static inline int lsqb_read_expected(int64_t out[10])
{
    for (int i = 0; i < 10; i++) out[i] = -1;
    char path[512];
    snprintf(path, sizeof path, "%s/expected-counts.txt", lsqb_dir());
    char *text = lsqb_slurp(path);
    if (!text) return -1;
    char *save = NULL;
    for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        int n;
        long long c;
        if (sscanf(line, "q%d=%lld", &n, &c) == 2 && n >= 1 && n <= 9) out[n] = c;
    }
    free(text);
    return 0;
}

/* Runs query `name` of `queries`, which must return one row with one non-null integer column
 * "count" (cmocka assertions: include cmocka.h first). */
static inline int64_t lsqb_count_of(og_db *db, const char *queries, const char *name)
{
    og_rows *rows = NULL;
    og_status st = og_db_query(&rows, db, queries, strlen(queries), name, NULL, NULL);
    if (st) fail_msg("%s: %s: %s", name, og_status_name(st), og_error_message());
    assert_int_equal(og_rows_count(rows), 1);
    assert_int_equal(og_rows_width(rows), 1);
    assert_string_equal(og_rows_column_name(rows, 0), "count");
    assert_false(og_rows_is_null(rows, 0, 0));
    int64_t n = og_rows_int(rows, 0, 0);
    og_rows_free(rows);
    return n;
}

#endif
