/*
 * input.h — the text rules of `omnigraph shell` that need no terminal: where a statement
 * typed over several lines ends, and where an error message points in it.
 *
 * Why a module of its own: these rules decide what a person sees (a query runs when its
 * braces close; a caret sits under the column the compiler named), so they are tested
 * directly (tests/shell/test_shell_input.c) rather than only through a terminal.
 */
#ifndef OG_SHELL_INPUT_H
#define OG_SHELL_INPUT_H

#include <stddef.h>

#include "util/buf.h"

/* The length of the first complete statement of text[0..len): through the `}` that closes
 * the first top-level brace pair (so `query q() { ... }` runs when its braces close), or
 * through a `;` outside braces, strings and comments.  A stray `}` (braces below zero) also
 * ends a statement, so the parser reports it instead of the shell waiting forever.  0 while
 * the statement is incomplete (or text holds only blanks and comments). */
size_t og_shell_stmt_end(const char *text, size_t len);

/* 1 when text[0..len) holds nothing but blanks, comments and `;`. */
int og_shell_stmt_blank(const char *text, size_t len);

/* The 1-based line and column (in code points) an error message names for the statement
 * (the first "<query>:L:C: " or "<mutation>:L:C: " in it), and where that tag sits in the
 * message, [*tag_start, *tag_end) (may be NULL), so the shell can say the position its own
 * way.  0 when it names none. */
int og_shell_error_pos(const char *message, unsigned *line, unsigned *col, size_t *tag_start, size_t *tag_end);

/* Appends the source line `line` of text[0..len) (1-based), prefixed "  N | " where N is
 * line + line_offset, then a line with a caret under column `col` (counted in code points,
 * padded by their width on screen, tabs kept, so the caret lines up).  Appends nothing when
 * the line does not exist. */
void og_shell_caret(og_buf *out, const char *text, size_t len, unsigned line, unsigned col, unsigned line_offset);

#endif
