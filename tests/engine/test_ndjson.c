/*
 * test_ndjson.c — the strict load envelope: accepted shapes, blank/CRLF lines, line numbers in
 * errors, and every envelope-level rejection of reference-language.md §6.1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/ndjson.h"

/* Reads all records of `text`; returns the count, or -(line of the first error). */
static int read_all(const char *text, og_status *st, size_t max_line)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    og_ndjson_reader *r;
    assert_int_equal(og_ndjson_reader_new(&r, f, "t.jsonl"), OG_OK);
    if (max_line) og_ndjson_reader_set_max_line(r, max_line);
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
    assert_string_equal(json_string_value(json_object_get(rec.data, "name")), "Ada");
    assert_int_equal(og_ndjson_next(r, &rec, &st), 1);
    assert_int_equal(rec.kind, OG_NDJSON_EDGE);
    assert_int_equal(rec.line, 4);
    assert_string_equal(rec.from, "Ada");
    assert_string_equal(rec.to, "Grace");
    assert_true(json_is_object(rec.data) && json_object_size(rec.data) == 0);
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
        {"{\"edge\":\"E\",\"from\":\"a\",\"to\":\"b\",\"data\":{\"src\":\"x\"}}", "not allowed inside edge data"},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_nodes_and_edges_skipping_blank_and_crlf_lines),
        cmocka_unit_test(rejects_envelope_errors_with_their_line_number),
        cmocka_unit_test(rejects_an_over_long_line_as_a_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
