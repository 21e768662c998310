/*
 * test_csv_parallel.c — the CSV load's parsing on worker threads (og_csv_source_start,
 * docs/load.md "CSV") gives exactly the records of the sequential read: same rows, types,
 * ids, endpoints, converted cells and line numbers, and the same first error at the same
 * file:line:column — for every batch size down to one byte, so that records, quoted fields
 * with line breaks, CRLF ends and errors land on every side of a batch boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "compiler/schema.h"
#include "csv_records.h"

static const char *SCHEMA =
    "node Person { name: String @key  age: I32?  score: F64?  active: Bool?  born: Date?  nick: String?  tags: [String]? }\n"
    "node City { code: I64 @key  label: String? }\n"
    "edge LivesIn: Person -> City { since: I32? }\n"
    "edge Knows: Person -> Person\n";

static og_catalog *cat;
static char dir[] = "/tmp/og-csvpar-XXXXXX";

static int setup(void **state)
{
    (void)state;
    og_diags d = OG_DIAGS_INIT;
    if (og_schema_compile(&cat, "t.pg", SCHEMA, strlen(SCHEMA), &d) != OG_OK) return -1;
    og_diags_free(&d);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    og_catalog_free(cat);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static const char *put(const char *name, const char *text, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* The file read with every batch size 1..max_batch and the default gives what the
 * sequential read gives; returns the sequential rendering (caller frees). */
static char *same_both_ways(const char *type, const char *text, size_t len, char delim, size_t max_batch, size_t max_record)
{
    const char *path = put("t.csv", text, len);
    char *want = csv_records_render(cat, type, path, delim, 0, max_record);
    size_t sizes[] = {0, 4096, 256 << 10};
    for (size_t b = 1; b <= max_batch + 3; b++) {
        size_t batch = b <= max_batch ? b : sizes[b - max_batch - 1];
        if (!batch) continue;
        char *got = csv_records_render(cat, type, path, delim, batch, max_record);
        if (strcmp(got, want)) fail_msg("batch %zu:\n got: %s\nwant: %s", batch, got, want);
        free(got);
    }
    return want;
}

#define SAME(type, text, delim) free(same_both_ways((type), (text), sizeof(text) - 1, (delim), 48, 0))

static void rows_and_quoted_line_breaks_across_every_boundary(void **state)
{
    (void)state;
    SAME("Person", "name,age,score,active,born,nick,tags\n"
                   "ann,31,1.5,true,2020-01-02,\"A, the\nfirst\",\"[\"\"x\"\",\"\"y\"\"]\"\n"
                   "\n"
                   "bob,,,,,\"\",\r\n"
                   "\"c\"\"d\",7,,FALSE,,\"two\r\nlines\n\nand more\",[]\r\n"
                   "eve,8,,,,,\n",
         ',');
    SAME("LivesIn", "from|to|since\nann|1|2001\n\"bob\n\"|2|\n", '|');
    SAME("Person", "\xEF\xBB\xBFname\nann\nbob", ',');    /* BOM, no final line end */
    SAME("Person", "name\n", ',');                        /* a header only */
    SAME(NULL, "name,code,:LABEL\nann,,Person\n,5,City\n\"z\",,Person\n", ','); /* mixed types */
    const char *one = "name,nick\nann,\"x\ny\"\n";
    char *want = same_both_ways("Person", one, strlen(one), ',', 48, 0);
    assert_string_equal(want, "1 Person 3298534883330 - - - {\"name\":\"ann\",\"nick\":\"x\ny\"}\nEND 20");
    free(want);
}

static void the_first_error_is_the_same_at_every_boundary(void **state)
{
    (void)state;
    static const char *cases[] = {
        "name,age\nann,1\nbob,1,2\n",            /* field count */
        "name,age\nann,1\nbob,x\ncid,3\n",       /* a cell that does not convert */
        "name,age\nann,1\nb\"ob,2\nc,\"3\n",     /* a quote inside an unquoted field: the rest looks quoted */
        "name,age\nann,1\n\"bob\"x,2\n",         /* text after a closing quote */
        "name,age\nann,1\nbob,\"2\n",            /* never closed */
        "name,age\nann,1\rbob,2\n",              /* CR without LF */
        "name,age\nann,1\n\xC3\x28,2\n",         /* invalid UTF-8 */
        "name,age\nann,1\nbob,1.5\n",            /* a fraction in an integer column */
        "name,nick\nann,\"a\nb\"\nbob,\"c\nd\nbad\"x\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *want = same_both_ways("Person", cases[i], strlen(cases[i]), ',', 40, 0);
        if (!strstr(want, "ERR ")) fail_msg("case %zu loads: %s", i, want);
        if (!strstr(want, "t.csv:")) fail_msg("case %zu names no position: %s", i, want);
        free(want);
    }
}

static void a_record_over_the_limit_is_refused_as_in_a_sequential_read(void **state)
{
    (void)state;
    /* records under and over a 24-byte limit; the long one holds line breaks and "" pairs */
    const char *text = "name,nick\nann,short\nbob,\"0123456789\n\"\"\"\"0123456789\"\"\"\"012345\"\ncid,x\n";
    char *want = same_both_ways("Person", text, strlen(text), ',', 40, 24);
    assert_non_null(strstr(want, "ERR "));
    assert_non_null(strstr(want, "t.csv:3:1: record is over the 24-byte limit"));
    free(want);
    const char *ok = "name,nick\nann,\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\n";
    free(same_both_ways("Person", ok, strlen(ok), ',', 40, 24));
}

/* A larger file: 3,000 rows, every fifth with a quoted multi-line cell, CRLF on some, an
 * error on the last row or none; batches of 1..4 KiB and the default. */
static void a_generated_file_reads_the_same(void **state)
{
    (void)state;
    for (int bad = 0; bad < 2; bad++) {
        og_buf b = OG_BUF_INIT;
        og_buf_append_str(&b, "name,age,nick,tags\n");
        for (int i = 0; i < 3000; i++) {
            char row[160];
            if (i % 5 == 0)
                snprintf(row, sizeof row, "p%d,%d,\"multi\nline, \"\"%d\"\"\",\"[\"\"t%d\"\"]\"%s", i, i, i, i, i % 3 ? "\r\n" : "\n");
            else
                snprintf(row, sizeof row, "p%d,%d,n%d,%s", i, i, i, i % 7 ? "\n" : "\r\n");
            og_buf_append_str(&b, row);
        }
        if (bad) og_buf_append_str(&b, "last,1.5,,\n");
        const char *path = put("big.csv", (const char *)b.data, b.len);
        char *want = csv_records_render(cat, "Person", path, ',', 0, 0);
        assert_int_equal(!!strstr(want, "ERR "), bad);
        size_t batches[] = {1000, 1024, 1500, 4096, 0};
        for (size_t k = 0; k < 5; k++) {
            char *got = csv_records_render(cat, "Person", path, ',', batches[k] ? batches[k] : (256 << 10), 0);
            if (strcmp(got, want)) fail_msg("batch %zu differs", batches[k]);
            free(got);
        }
        free(want);
        og_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_and_quoted_line_breaks_across_every_boundary),
        cmocka_unit_test(the_first_error_is_the_same_at_every_boundary),
        cmocka_unit_test(a_record_over_the_limit_is_refused_as_in_a_sequential_read),
        cmocka_unit_test(a_generated_file_reads_the_same),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
