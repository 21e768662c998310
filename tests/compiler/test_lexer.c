/*
 * test_lexer.c — the shared .pg/.gq tokenizer (lexer.h): token kinds, spans and positions,
 * comments, strings and their four escapes, numbers vs ranges, variables, errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/lexer.h"

typedef struct lexed {
    og_source src;
    og_tokens toks;
    og_diag err;
    og_status st;
} lexed;

static void lex(lexed *l, const char *text)
{
    memset(l, 0, sizeof *l);
    assert_int_equal(og_source_init(&l->src, "t.gq", text, strlen(text)), OG_OK);
    l->st = og_lex(&l->toks, &l->src, &l->err);
}

static void unlex(lexed *l)
{
    og_tokens_free(&l->toks);
    og_diag_free(&l->err);
    og_source_free(&l->src);
}

static void kinds_of_words_and_punctuation(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "node Foo_1 _bar baz9 { } ( ) [ ] , : ; = == != < <= > >= -> <- @ ? . .. * | - + / ! % &");
    assert_int_equal(l.st, OG_OK);
    og_tok_kind want[] = {OG_TOK_IDENT, OG_TOK_TYPENAME, OG_TOK_IDENT, OG_TOK_IDENT, OG_TOK_LBRACE, OG_TOK_RBRACE,
                          OG_TOK_LPAREN, OG_TOK_RPAREN, OG_TOK_LBRACKET, OG_TOK_RBRACKET, OG_TOK_COMMA, OG_TOK_COLON,
                          OG_TOK_SEMI, OG_TOK_EQ, OG_TOK_EQEQ, OG_TOK_NE, OG_TOK_LT, OG_TOK_LE, OG_TOK_GT, OG_TOK_GE,
                          OG_TOK_ARROW, OG_TOK_LARROW, OG_TOK_AT, OG_TOK_QUESTION, OG_TOK_DOT, OG_TOK_DOTDOT,
                          OG_TOK_STAR, OG_TOK_PIPE, OG_TOK_MINUS, OG_TOK_PLUS, OG_TOK_SLASH, OG_TOK_BANG,
                          OG_TOK_PERCENT, OG_TOK_AMP, OG_TOK_EOF};
    assert_int_equal(l.toks.len, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < l.toks.len; i++) assert_int_equal(l.toks.v[i].kind, want[i]);
    assert_true(og_tok_is(&l.toks.v[0], "node"));
    assert_false(og_tok_is(&l.toks.v[0], "nod"));
    assert_string_equal(og_tok_kind_name(OG_TOK_LBRACE), "'{'");
    unlex(&l);
}

static void spans_lines_and_columns(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "a\n  bb // c\n/* x\n y */ C \"é\" d");
    assert_int_equal(l.st, OG_OK);
    assert_int_equal(l.toks.len, 6);
    assert_int_equal(l.toks.v[0].line, 1);
    assert_int_equal(l.toks.v[0].col, 1);
    assert_int_equal(l.toks.v[1].line, 2);
    assert_int_equal(l.toks.v[1].col, 3);
    assert_int_equal(l.toks.v[1].start, 4);
    assert_int_equal(l.toks.v[1].end, 6);
    assert_int_equal(l.toks.v[2].kind, OG_TOK_TYPENAME);
    assert_int_equal(l.toks.v[2].line, 4);
    assert_int_equal(l.toks.v[2].col, 7);
    assert_int_equal(l.toks.v[4].col, 13);
    unlex(&l);
}

static void non_ascii_outside_strings_is_an_error(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "a\n  Cé");
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_int_equal(l.err.line, 2);
    assert_int_equal(l.err.col, 4);
    assert_non_null(strstr(l.err.message, "unexpected character"));
    assert_non_null(l.err.hint);
    unlex(&l);
}

static void columns_count_code_points(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "\"éé\" x");
    assert_int_equal(l.st, OG_OK);
    assert_int_equal(l.toks.v[1].col, 6); /* 2-byte é twice: byte offset 7, column 6 */
    assert_int_equal(l.toks.v[1].start, 7);
    unlex(&l);
}

static void strings_decode_the_four_escapes(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "\"a\\\"b\\\\c\\nd\\re\\tf\" \"\"");
    assert_int_equal(l.st, OG_OK);
    assert_int_equal(l.toks.v[0].kind, OG_TOK_STRING);
    assert_string_equal(l.toks.v[0].str, "a\"b\\c\nd\re\tf");
    assert_int_equal(l.toks.v[0].str_len, 11);
    assert_string_equal(l.toks.v[1].str, "");
    unlex(&l);
}

static void unsupported_escape_is_an_error(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "x \"ab\\qc\"");
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_non_null(strstr(l.err.message, "unsupported escape sequence '\\q'"));
    assert_int_equal(l.err.col, 6);
    assert_int_equal(l.toks.len, 0);
    unlex(&l);
    lex(&l, "\"\\u0041\"");
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_non_null(strstr(l.err.message, "unsupported escape sequence"));
    unlex(&l);
}

static void unterminated_string_and_comment(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "\"abc");
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_non_null(strstr(l.err.message, "unterminated string"));
    unlex(&l);
    lex(&l, "a /* b");
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_non_null(strstr(l.err.message, "unterminated block comment"));
    assert_int_equal(l.err.col, 3);
    unlex(&l);
    lex(&l, "a /* b */ */");
    assert_int_equal(l.st, OG_OK); /* not nested: the trailing "*" "/" are tokens */
    assert_int_equal(l.toks.v[1].kind, OG_TOK_STAR);
    assert_int_equal(l.toks.v[2].kind, OG_TOK_SLASH);
    unlex(&l);
}

static void hash_is_not_a_comment(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "node A { } # comment");
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_non_null(strstr(l.err.message, "'#'"));
    assert_int_equal(l.err.col, 12);
    unlex(&l);
}

static void numbers_floats_and_ranges(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "0..5 1.5..2 12 3.25 1. 99999999999999999999999");
    assert_int_equal(l.st, OG_OK);
    og_tok_kind want[] = {OG_TOK_INT, OG_TOK_DOTDOT, OG_TOK_INT, OG_TOK_FLOAT, OG_TOK_DOTDOT, OG_TOK_INT,
                          OG_TOK_INT, OG_TOK_FLOAT, OG_TOK_INT, OG_TOK_DOT, OG_TOK_INT, OG_TOK_EOF};
    assert_int_equal(l.toks.len, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < l.toks.len; i++) assert_int_equal(l.toks.v[i].kind, want[i]);
    assert_int_equal(l.toks.v[6].u, 12);
    assert_true(l.toks.v[7].f == 3.25);
    assert_true(l.toks.v[10].overflow);
    assert_false(l.toks.v[6].overflow);
    unlex(&l);
}

static void variables_and_dollar(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "$p $_ $a1.name $ X");
    assert_int_equal(l.st, OG_OK);
    assert_int_equal(l.toks.v[0].kind, OG_TOK_VAR);
    assert_int_equal(l.toks.v[0].text_len, 1);
    assert_memory_equal(l.toks.v[0].text, "p", 1);
    assert_int_equal(l.toks.v[0].start, 0);
    assert_int_equal(l.toks.v[0].end, 2);
    assert_int_equal(l.toks.v[1].kind, OG_TOK_VAR);
    assert_memory_equal(l.toks.v[1].text, "_", 1);
    assert_int_equal(l.toks.v[2].kind, OG_TOK_VAR);
    assert_int_equal(l.toks.v[3].kind, OG_TOK_DOT);
    assert_int_equal(l.toks.v[4].kind, OG_TOK_IDENT);
    assert_int_equal(l.toks.v[5].kind, OG_TOK_DOLLAR);
    assert_int_equal(l.toks.v[6].kind, OG_TOK_TYPENAME);
    unlex(&l);
}

static void adjacency_lets_enum_values_rejoin(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "data-eng 3d");
    assert_int_equal(l.st, OG_OK);
    assert_int_equal(l.toks.v[0].kind, OG_TOK_IDENT);
    assert_int_equal(l.toks.v[1].kind, OG_TOK_MINUS);
    assert_int_equal(l.toks.v[1].start, l.toks.v[0].end);
    assert_int_equal(l.toks.v[2].start, l.toks.v[1].end);
    assert_int_equal(l.toks.v[3].kind, OG_TOK_INT);
    assert_int_equal(l.toks.v[4].kind, OG_TOK_IDENT);
    assert_int_equal(l.toks.v[4].start, l.toks.v[3].end);
    unlex(&l);
}

static void invalid_utf8_and_nul_are_errors(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "a // caf\xc3\n");
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_non_null(strstr(l.err.message, "invalid UTF-8"));
    assert_int_equal(l.err.col, 9);
    unlex(&l);
    lex(&l, "\"\xed\xa0\x80\""); /* a UTF-16 surrogate encoded in UTF-8 */
    assert_int_equal(l.st, OG_ERR_PARSE);
    unlex(&l);
    memset(&l, 0, sizeof l);
    const char nul[] = "a \0 b";
    assert_int_equal(og_source_init(&l.src, "t.gq", nul, sizeof nul - 1), OG_OK);
    l.st = og_lex(&l.toks, &l.src, &l.err);
    assert_int_equal(l.st, OG_ERR_PARSE);
    assert_non_null(strstr(l.err.message, "NUL byte"));
    unlex(&l);
    lex(&l, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    assert_int_equal(l.st, OG_OK);
    unlex(&l);
}

static void empty_and_whitespace_only(void **state)
{
    (void)state;
    lexed l;
    lex(&l, " \t\r\n // only a comment");
    assert_int_equal(l.st, OG_OK);
    assert_int_equal(l.toks.len, 1);
    assert_int_equal(l.toks.v[0].kind, OG_TOK_EOF);
    unlex(&l);
}

static void source_pos_and_diag_format(void **state)
{
    (void)state;
    og_source src;
    const char *t = "ab\ncd\n";
    assert_int_equal(og_source_init(&src, "f.pg", t, strlen(t)), OG_OK);
    uint32_t line, col;
    og_source_pos(&src, 4, &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 2);
    og_source_pos(&src, 1000, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 1);
    og_diags ds = OG_DIAGS_INIT;
    assert_int_equal(og_diags_add(&ds, OG_ERR_TYPE, &src, 3, 4, "do this", "bad %s", "thing"), OG_ERR_TYPE);
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_diag_format(&b, &ds.v[0]), OG_OK);
    assert_string_equal(og_buf_cstr(&b), "f.pg:2:1: bad thing\n  hint: do this\n");
    assert_int_equal(og_diags_errors(&ds), 1);
    og_buf_free(&b);
    og_diags_free(&ds);
    og_source_free(&src);
}

static void describe_tokens(void **state)
{
    (void)state;
    lexed l;
    lex(&l, "foo \"bar\"");
    char buf[64];
    assert_string_equal(og_tok_describe(&l.toks.v[0], buf, sizeof buf), "'foo'");
    assert_string_equal(og_tok_describe(&l.toks.v[1], buf, sizeof buf), "string \"bar\"");
    assert_string_equal(og_tok_describe(&l.toks.v[2], buf, sizeof buf), "end of input");
    unlex(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kinds_of_words_and_punctuation),
        cmocka_unit_test(spans_lines_and_columns),
        cmocka_unit_test(non_ascii_outside_strings_is_an_error),
        cmocka_unit_test(columns_count_code_points),
        cmocka_unit_test(strings_decode_the_four_escapes),
        cmocka_unit_test(unsupported_escape_is_an_error),
        cmocka_unit_test(unterminated_string_and_comment),
        cmocka_unit_test(hash_is_not_a_comment),
        cmocka_unit_test(numbers_floats_and_ranges),
        cmocka_unit_test(variables_and_dollar),
        cmocka_unit_test(adjacency_lets_enum_values_rejoin),
        cmocka_unit_test(invalid_utf8_and_nul_are_errors),
        cmocka_unit_test(empty_and_whitespace_only),
        cmocka_unit_test(source_pos_and_diag_format),
        cmocka_unit_test(describe_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
