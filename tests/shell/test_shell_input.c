/*
 * test_shell_input.c — where `omnigraph shell` ends a statement typed over several lines, and
 * where its caret points (src/shell/input.h, docs/shell.md "Statements").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "shell/input.h"

static size_t end_of(const char *s) { return og_shell_stmt_end(s, strlen(s)); }

static void a_query_ends_where_its_braces_close(void **state)
{
    (void)state;
    const char *q = "query q() {\n  match { $p: Person }\n  return { $p.name }\n}\nquery r() {";
    size_t e = end_of(q);
    assert_int_equal(e, (size_t)(strstr(q, "}\nquery r") - q) + 1);
    /* still open: the second query, and the first one cut after its match block */
    assert_int_equal(end_of("query r() {"), 0);
    assert_int_equal(end_of("query q() {\n  match { $p: Person }\n"), 0);
    assert_int_equal(end_of("query q($x: String)\n"), 0); /* no brace yet: waits */
}

static void braces_in_strings_and_comments_do_not_count(void **state)
{
    (void)state;
    assert_int_equal(end_of("query q() { match { $p: P { name: \"}\" } } return { $p.n } "), 0);
    const char *q = "query q() { // }\n /* } */ match { $p: P { name: \"a\\\"}\" } } return { $p.n } }";
    assert_int_equal(end_of(q), strlen(q));
}

static void a_semicolon_outside_braces_ends_a_statement(void **state)
{
    (void)state;
    assert_int_equal(end_of("query q() garbage;rest"), strlen("query q() garbage;"));
    /* inside braces a `;` is the language's */
    assert_int_equal(end_of("query q() { a; b"), 0);
    /* a stray `}` ends the statement, so the parser reports it */
    assert_int_equal(end_of("return } x"), strlen("return }"));
}

static void blank_text_is_blanks_comments_and_semicolons(void **state)
{
    (void)state;
    assert_true(og_shell_stmt_blank(" \n\t; // hi\n /* x */ ", 20));
    assert_false(og_shell_stmt_blank(" q ", 3));
    assert_false(og_shell_stmt_blank("\"\"", 2));
}

static void the_error_position_is_read_from_the_message(void **state)
{
    (void)state;
    unsigned l = 0, c = 0;
    size_t ts = 9, te = 9;
    assert_true(og_shell_error_pos("<query>:2:15: unknown type 'Persn'\n  hint: ...", &l, &c, &ts, &te));
    assert_int_equal(l, 2);
    assert_int_equal(c, 15);
    assert_int_equal(ts, 0);
    assert_int_equal(te, strlen("<query>:2:15: "));
    const char *m = "mutation failed: <mutation>:1:3: x";
    assert_true(og_shell_error_pos(m, &l, &c, &ts, &te));
    assert_int_equal(l, 1);
    assert_int_equal(c, 3);
    assert_string_equal(m + te, "x");
    assert_int_equal(ts, strlen("mutation failed: "));
    assert_false(og_shell_error_pos("branch dev not found", &l, &c, NULL, NULL));
    assert_false(og_shell_error_pos("<query>: no position", &l, &c, NULL, NULL));
}

static void the_caret_sits_under_the_column(void **state)
{
    (void)state;
    const char *src = "query q() {\n  match { $p: Persn }\n}";
    og_buf b = OG_BUF_INIT;
    og_shell_caret(&b, src, strlen(src), 2, 15, 0);
    assert_string_equal(og_buf_cstr(&b), "  2 |   match { $p: Persn }\n    |               ^\n");
    /* the line numbers of a script: the statement started on line 10 */
    b.len = 0;
    og_shell_caret(&b, src, strlen(src), 2, 15, 9);
    assert_string_equal(og_buf_cstr(&b), "  11 |   match { $p: Persn }\n     |               ^\n");
    /* columns count code points: an accent before the error takes one column */
    b.len = 0;
    const char *u = "{ \"é\" x";
    og_shell_caret(&b, u, strlen(u), 1, 7, 0);
    assert_string_equal(og_buf_cstr(&b), "  1 | { \"é\" x\n    |       ^\n");
    /* a CJK character takes two columns on screen, a combining accent none */
    b.len = 0;
    const char *cjk = "{ \"田中\" x";
    og_shell_caret(&b, cjk, strlen(cjk), 1, 8, 0);
    assert_string_equal(og_buf_cstr(&b), "  1 | { \"田中\" x\n    |          ^\n");
    b.len = 0;
    const char *comb = "e\xcc\x81 x"; /* e + U+0301: one column, two code points */
    og_shell_caret(&b, comb, strlen(comb), 1, 4, 0);
    assert_string_equal(og_buf_cstr(&b), "  1 | e\xcc\x81 x\n    |   ^\n");
    /* a line that does not exist prints nothing */
    b.len = 0;
    og_shell_caret(&b, src, strlen(src), 9, 1, 0);
    assert_int_equal(b.len, 0);
    og_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_query_ends_where_its_braces_close),
        cmocka_unit_test(braces_in_strings_and_comments_do_not_count),
        cmocka_unit_test(a_semicolon_outside_braces_ends_a_statement),
        cmocka_unit_test(blank_text_is_blanks_comments_and_semicolons),
        cmocka_unit_test(the_error_position_is_read_from_the_message),
        cmocka_unit_test(the_caret_sits_under_the_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
