/*
 * test_csv.c — the strict RFC 4180 reader (util/csv.h): quoting, embedded delimiters, quotes
 * and line breaks, CRLF, the BOM, empty lines and cells, other delimiters, and every malformed
 * input refused with its line:column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/buf.h"
#include "util/csv.h"
#include "util/error.h"

/* Reads all of `text` and renders it as "a|b;c|d" (fields '|', records ';'; a quoted field
 * is marked with a leading '"'), or "ERR:<message>" at the first error. */
static char *render(const char *text, size_t len, char delim)
{
    FILE *f = fmemopen((void *)text, len, "rb");
    assert_non_null(f);
    og_csv_reader *r;
    assert_int_equal(og_csv_reader_new(&r, f, "t.csv", delim), OG_OK);
    og_buf b = OG_BUF_INIT;
    og_csv_field *fs;
    size_t n;
    og_status st;
    int k, nrec = 0;
    while ((k = og_csv_next(r, &fs, &n, &st)) == 1) {
        if (nrec++) og_buf_append(&b, ";", 1);
        for (size_t i = 0; i < n; i++) {
            if (i) og_buf_append(&b, "|", 1);
            if (fs[i].quoted) og_buf_append(&b, "\"", 1);
            og_buf_append(&b, fs[i].s, fs[i].len);
        }
    }
    if (k < 0) {
        og_buf_free(&b);
        og_buf_append(&b, "ERR:", 4);
        og_buf_append(&b, og_error_message(), strlen(og_error_message()));
        /* an error is sticky */
        og_status st2;
        assert_int_equal(og_csv_next(r, &fs, &n, &st2), -1);
        assert_int_equal(st2, st);
    }
    og_csv_reader_free(r);
    fclose(f);
    const char *c = og_buf_cstr(&b);
    char *out = strdup(c ? c : "");
    og_buf_free(&b);
    return out;
}

#define CHECK(text, want) CHECK_D(text, ',', want)
#define CHECK_D(text, d, want)                                      \
    do {                                                            \
        char *got_ = render((text), sizeof(text) - 1, (d));         \
        if (strcmp(got_, (want))) fail_msg("%s\n got: %s\nwant: %s", #text, got_, (want)); \
        free(got_);                                                 \
    } while (0)

static void plain_records_and_line_ends(void **s)
{
    (void)s;
    CHECK("a,b\n1,2\n", "a|b;1|2");
    CHECK("a,b\r\n1,2\r\n", "a|b;1|2");
    CHECK("a,b\n1,2", "a|b;1|2"); /* no final line end */
    CHECK("a,b\n\n1,2\n\n\n", "a|b;1|2"); /* empty lines are skipped */
    CHECK("a,b\n1,\n,2\n", "a|b;1|;|2");
    CHECK("", "");
}

static void quoted_fields_hold_delimiters_quotes_and_line_breaks(void **s)
{
    (void)s;
    CHECK("a,b\n\"x,y\",\"say \"\"hi\"\"\"\n", "a|b;\"x,y|\"say \"hi\"");
    CHECK("a\n\"two\nlines\"\n", "a;\"two\nlines");
    CHECK("a\n\"crlf\r\ninside\"\r\n", "a;\"crlf\r\ninside");
    CHECK("a,b\n\"\",x\n", "a|b;\"|x"); /* a quoted empty field is marked quoted */
}

static void bom_and_other_delimiters(void **s)
{
    (void)s;
    CHECK("\xEF\xBB\xBFid:ID(City)\n4\n", "id:ID(City);4");
    CHECK_D(":START_ID(City)|:END_ID(Country)\n4|2\n", '|', ":START_ID(City)|:END_ID(Country);4|2");
    CHECK_D("a\tb\n1\t\"x\ty\"\n", '\t', "a|b;1|\"x\ty");
    CHECK("caf\xC3\xA9\n", "caf\xC3\xA9");
}

static void malformed_input_is_refused_at_its_line_and_column(void **s)
{
    (void)s;
    CHECK("a,b\n1,\"open\n", "ERR:t.csv:2:3: the quoted field opened here is never closed (a missing '\"'?)");
    CHECK("a,b\n1,x\"y\n", "ERR:t.csv:2:4: a quote inside an unquoted field (quote the whole field and write the quote as \"\")");
    CHECK("a,b\n\"x\"y,1\n", "ERR:t.csv:2:4: unexpected 'y' after the closing quote of a field (write a quote inside a quoted field as \"\")");
    CHECK("a,b\r1,2\n", "ERR:t.csv:1:4: a carriage return must be followed by a line feed (CRLF)");
    CHECK("a\n\xC3\x28\n", "ERR:t.csv:2:1: invalid UTF-8 in field 1 (byte 1 of the field)");
    CHECK("a,b\n1,x\xFFz\n", "ERR:t.csv:2:3: invalid UTF-8 in field 2 (byte 2 of the field)");
    CHECK("a\nx\0y\n", "ERR:t.csv:2:1: a NUL byte in field 1 (byte 2 of the field)");
}

static void a_record_over_the_limit_is_refused(void **s)
{
    (void)s;
    const char *text = "a\n0123456789012345678901234567890123456789\n";
    FILE *f = fmemopen((void *)text, strlen(text), "rb");
    og_csv_reader *r;
    assert_int_equal(og_csv_reader_new(&r, f, "t.csv", ','), OG_OK);
    og_csv_reader_set_max_record(r, 16);
    og_csv_field *fs;
    size_t n;
    og_status st;
    assert_int_equal(og_csv_next(r, &fs, &n, &st), 1);
    assert_int_equal(og_csv_next(r, &fs, &n, &st), -1);
    assert_int_equal(st, OG_ERR_LIMIT);
    assert_string_equal(og_error_message(), "t.csv:2:1: record is over the 16-byte limit");
    og_csv_reader_free(r);
    fclose(f);
}

static void field_positions_and_bad_delimiters(void **s)
{
    (void)s;
    const char *text = "a,\"b\nc\",d\nx,y,z\n";
    FILE *f = fmemopen((void *)text, strlen(text), "rb");
    og_csv_reader *r;
    assert_int_equal(og_csv_reader_new(&r, f, "t.csv", ','), OG_OK);
    og_csv_field *fs;
    size_t n;
    og_status st;
    assert_int_equal(og_csv_next(r, &fs, &n, &st), 1);
    assert_int_equal(n, 3);
    assert_int_equal(fs[1].line, 1);
    assert_int_equal(fs[1].col, 3);
    assert_int_equal(fs[2].line, 2);
    assert_int_equal(fs[2].col, 4);
    assert_int_equal(og_csv_next(r, &fs, &n, &st), 1);
    assert_int_equal(og_csv_record_line(r), 3);
    assert_int_equal(fs[2].col, 5);
    assert_int_equal(og_csv_next(r, &fs, &n, &st), 0);
    assert_int_equal(og_csv_bytes_read(r), strlen(text));
    og_csv_reader_free(r);
    fclose(f);
    assert_int_equal(og_csv_reader_new(&r, NULL, "t.csv", '"'), OG_ERR_INVALID);
    assert_int_equal(og_csv_reader_new(&r, NULL, "t.csv", '\n'), OG_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_records_and_line_ends),
        cmocka_unit_test(quoted_fields_hold_delimiters_quotes_and_line_breaks),
        cmocka_unit_test(bom_and_other_delimiters),
        cmocka_unit_test(malformed_input_is_refused_at_its_line_and_column),
        cmocka_unit_test(a_record_over_the_limit_is_refused),
        cmocka_unit_test(field_positions_and_bad_delimiters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
