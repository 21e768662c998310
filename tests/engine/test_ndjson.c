/*
 * test_ndjson.c — the strict load envelope: accepted shapes, blank/CRLF lines, line numbers in
 * errors, and every envelope-level rejection of reference-language.md §6.1 — each in both read
 * modes, sequential and background (og_ndjson_reader_start: worker threads parse ahead in
 * batches), which must give the same records and the same first error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "load/ndjson.h"

static int background; /* read_all's mode */

/* Reads all records of `text`; returns the count, or -(line of the first error). */
static int read_all(const char *text, og_status *st, size_t max_line)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    og_ndjson_reader *r;
    assert_int_equal(og_ndjson_reader_new(&r, f, "t.jsonl"), OG_OK);
    if (max_line) og_ndjson_reader_set_max_line(r, max_line);
    if (background) assert_int_equal(og_ndjson_reader_start(r), OG_OK);
    og_ndjson_record rec;
    int n = 0, k;
    *st = OG_OK;
    while ((k = og_ndjson_next(r, &rec, st)) == 1) n++;
    if (k < 0) {
        /* line number is in the message: "t.jsonl:<line>: ..." */
        int line = 0;
        sscanf(og_error_message(), "t.jsonl:%d:", &line);
        n = -line;
    }
    og_ndjson_reader_free(r);
    fclose(f);
    return n;
}

static void accepts_nodes_and_edges_skipping_blank_and_crlf_lines(void **state)
{
    (void)state;
    const char *text = "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\"}}\r\n"
                       "\n   \n"
                       "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Grace\"}\n"
                       "{\"type\":\"Person\"}";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    og_ndjson_reader *r;
    og_ndjson_reader_new(&r, f, "t.jsonl");
    og_ndjson_record rec;
    og_status st;
    assert_int_equal(og_ndjson_next(r, &rec, &st), 1);
    assert_int_equal(rec.kind, OG_NDJSON_NODE);
    assert_string_equal(rec.type, "Person");
    assert_string_equal(og_jobj_get(rec.data, "name")->v.s, "Ada");
    assert_int_equal(og_ndjson_next(r, &rec, &st), 1);
    assert_int_equal(rec.kind, OG_NDJSON_EDGE);
    assert_int_equal(rec.line, 4);
    assert_string_equal(rec.from, "Ada");
    assert_string_equal(rec.to, "Grace");
    assert_true(rec.data->kind == OG_J_OBJECT && rec.data->len == 0);
    assert_int_equal(og_ndjson_next(r, &rec, &st), 1);
    assert_int_equal(rec.line, 5);
    assert_int_equal(og_ndjson_next(r, &rec, &st), 0);
    assert_int_equal(og_ndjson_bytes_read(r), strlen(text));
    og_ndjson_reader_free(r);
    fclose(f);
}

static void rejects_envelope_errors_with_their_line_number(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        const char *needle;
    } cases[] = {
        {"[1,2]", "must be a JSON object"},
        {"{\"type\":\"A\",\"edge\":\"B\"}", "both"},
        {"{\"data\":{}}", "needs \"type\""},
        {"{\"type\":\"A\",\"extra\":1}", "unknown node envelope key \"extra\""},
        {"{\"edge\":\"E\",\"from\":\"a\",\"to\":\"b\",\"type2\":1}", "unknown edge envelope key"},
        {"{\"type\":\"A\",\"data\":[1]}", "\"data\" must be a JSON object"},
        {"{\"type\":\"A\",\"data\":{\"x\":1,\"x\":2}}", "duplicate"},
        {"{\"type\":\"A\",\"data\":{\"o\":{\"k\":1,\"k\":1}}}", "duplicate"},
        {"{\"edge\":\"E\",\"from\":1,\"to\":\"b\"}", "must be strings"},
        {"{\"edge\":\"E\",\"from\":\"a\"}", "needs \"from\" and \"to\""},
        {"{\"type\":\"\"}", "non-empty string"},
        {"{\"type\":\"A\"", "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"type\":\"Ok\"}\n\n%s\n{\"type\":\"Never\"}\n", cases[i].line);
        og_status st;
        int n = read_all(text, &st, 0);
        assert_int_equal(n, -3);
        assert_int_equal(st, OG_ERR_PARSE);
        if (!strstr(og_error_message(), cases[i].needle)) fail_msg("case %zu: message '%s' lacks '%s'", i, og_error_message(), cases[i].needle);
    }
}

static void rejects_an_over_long_line_as_a_limit(void **state)
{
    (void)state;
    og_status st;
    int n = read_all("{\"type\":\"A\",\"data\":{\"s\":\"0123456789012345678901234567890123456789\"}}\n", &st, 32);
    assert_int_equal(n, -1);
    assert_int_equal(st, OG_ERR_LIMIT);
}

/* `n` node lines (blank line every 7th), the one at `bad` (1-based record index, 0 = none)
 * malformed; malloc'd. */
static char *many_lines(int n, int bad)
{
    size_t cap = (size_t)n * 64 + 64;
    char *t = malloc(cap), *p = t;
    for (int i = 1; i <= n; i++) {
        if (i % 7 == 0) *p++ = '\n';
        p += sprintf(p, i == bad ? "{\"type\":\"N\",\"data\":{\"i\":%d}\n" : "{\"type\":\"N\",\"data\":{\"i\":%d}}\n", i);
    }
    *p = '\0';
    return t;
}

/* Many batches: every record arrives once and in input order, and an error deep in the input
 * (in a later batch, with workers ahead of the caller) has the same line as a sequential read. */
static void background_reads_many_batches_in_order_with_the_same_error(void **state)
{
    (void)state;
    char *ok = many_lines(10000, 0);
    FILE *f = fmemopen(ok, strlen(ok), "r");
    og_ndjson_reader *r;
    assert_int_equal(og_ndjson_reader_new(&r, f, "t.jsonl"), OG_OK);
    assert_int_equal(og_ndjson_reader_start(r), OG_OK);
    og_ndjson_record rec;
    og_status st;
    int want = 1, k;
    while ((k = og_ndjson_next(r, &rec, &st)) == 1) {
        assert_int_equal(og_jobj_get(rec.data, "i")->v.i, want);
        assert_int_equal(rec.line, (uint64_t)(want + want / 7));
        want++;
    }
    assert_int_equal(k, 0);
    assert_int_equal(want, 10001);
    assert_int_equal(og_ndjson_bytes_read(r), strlen(ok));
    assert_int_equal(og_ndjson_next(r, &rec, &st), 0); /* the end stays the end */
    og_ndjson_reader_free(r);
    fclose(f);
    free(ok);

    char *bad = many_lines(9000, 7777);
    background = 0;
    int seq = read_all(bad, &st, 0);
    background = 1;
    int bg = read_all(bad, &st, 0);
    background = 0;
    assert_int_equal(seq, -(7777 + 7777 / 7));
    assert_int_equal(bg, seq);
    assert_int_equal(st, OG_ERR_PARSE);
    free(bad);
}

/* A caller that stops early frees the reader while workers are ahead (and blocked on a full
 * ring): no hang, no leak (ASan). */
static void background_reader_frees_mid_stream(void **state)
{
    (void)state;
    char *t = many_lines(20000, 0);
    FILE *f = fmemopen(t, strlen(t), "r");
    og_ndjson_reader *r;
    assert_int_equal(og_ndjson_reader_new(&r, f, "t.jsonl"), OG_OK);
    assert_int_equal(og_ndjson_reader_start(r), OG_OK);
    og_ndjson_record rec;
    og_status st;
    for (int i = 0; i < 1500; i++) assert_int_equal(og_ndjson_next(r, &rec, &st), 1);
    og_ndjson_reader_free(r);
    fclose(f);
    free(t);
}

static void background_start_after_a_read_is_refused(void **state)
{
    (void)state;
    const char *t = "{\"type\":\"A\"}\n";
    FILE *f = fmemopen((void *)t, strlen(t), "r");
    og_ndjson_reader *r;
    assert_int_equal(og_ndjson_reader_new(&r, f, "t.jsonl"), OG_OK);
    og_ndjson_record rec;
    og_status st;
    assert_int_equal(og_ndjson_next(r, &rec, &st), 1);
    assert_int_equal(og_ndjson_reader_start(r), OG_ERR_INVALID);
    og_ndjson_reader_free(r);
    fclose(f);
}

static int sequential(void **state)
{
    (void)state;
    background = 0;
    return 0;
}

static int in_background(void **state)
{
    (void)state;
    background = 1;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(accepts_nodes_and_edges_skipping_blank_and_crlf_lines, sequential),
        cmocka_unit_test_setup(rejects_envelope_errors_with_their_line_number, sequential),
        cmocka_unit_test_setup(rejects_an_over_long_line_as_a_limit, sequential),
        cmocka_unit_test_setup(rejects_envelope_errors_with_their_line_number, in_background),
        cmocka_unit_test_setup(rejects_an_over_long_line_as_a_limit, in_background),
        cmocka_unit_test_setup(background_reads_many_batches_in_order_with_the_same_error, sequential),
        cmocka_unit_test_setup(background_reader_frees_mid_stream, sequential),
        cmocka_unit_test_setup(background_start_after_a_read_is_refused, sequential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
