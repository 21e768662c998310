/*
 * input.c — statement boundaries and error carets of `omnigraph shell` (input.h).
 *
 * The scanner knows only what can hide a brace or a `;` in a `.gq` text: strings ("..." with
 * backslash escapes) and comments (`// ...` to the end of the line, `/ * ... * /`).  It never
 * parses the query; the compiler does, and its message names the line and column the caret
 * marks, padded by each character's width on screen (utf8proc) so it lines up under
 * accented and East Asian text.
 */
#include "shell/input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

typedef struct scan {
    const char *s;
    size_t len, i;
} scan;

/* Skips a string, a comment or one other byte at sc->i; returns the byte skipped, '"' for a
 * whole string, or 0 for a comment (strings and comments hold no structure). */
static int scan_next(scan *sc)
{
    const char *s = sc->s;
    size_t n = sc->len;
    char c = s[sc->i];
    if (c == '"') {
        for (sc->i++; sc->i < n && s[sc->i] != '"'; sc->i++)
            if (s[sc->i] == '\\' && sc->i + 1 < n) sc->i++;
        if (sc->i < n) sc->i++;
        return '"';
    }
    if (c == '/' && sc->i + 1 < n && s[sc->i + 1] == '/') {
        while (sc->i < n && s[sc->i] != '\n') sc->i++;
        return 0;
    }
    if (c == '/' && sc->i + 1 < n && s[sc->i + 1] == '*') {
        sc->i += 2;
        while (sc->i + 1 < n && !(s[sc->i] == '*' && s[sc->i + 1] == '/')) sc->i++;
        sc->i = sc->i + 1 < n ? sc->i + 2 : n;
        return 0;
    }
    sc->i++;
    return (unsigned char)c;
}

size_t og_shell_stmt_end(const char *text, size_t len)
{
    scan sc = {text, len, 0};
    int depth = 0;
    while (sc.i < len) {
        int c = scan_next(&sc);
        if (c == '{') {
            depth++;
        } else if (c == '}') {
            if (--depth <= 0) return sc.i; /* the first top-level pair closed, or a stray '}' */
        } else if (c == ';' && depth == 0) {
            return sc.i;
        }
    }
    return 0;
}

int og_shell_stmt_blank(const char *text, size_t len)
{
    scan sc = {text, len, 0};
    while (sc.i < len) {
        int c = scan_next(&sc);
        if (c && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ';') return 0;
    }
    return 1;
}

int og_shell_error_pos(const char *message, unsigned *line, unsigned *col, size_t *tag_start, size_t *tag_end)
{
    static const char *const tags[] = {"<query>:", "<mutation>:"};
    for (size_t t = 0; t < 2; t++) {
        const char *p = message ? strstr(message, tags[t]) : NULL;
        int used = 0;
        if (!p || sscanf(p + strlen(tags[t]), "%u:%u%n", line, col, &used) != 2 || *line == 0 || *col == 0) continue;
        const char *e = p + strlen(tags[t]) + used;
        if (*e == ':') e++;
        while (*e == ' ') e++;
        if (tag_start) *tag_start = (size_t)(p - message);
        if (tag_end) *tag_end = (size_t)(e - message);
        return 1;
    }
    return 0;
}

void og_shell_caret(og_buf *out, const char *text, size_t len, unsigned line, unsigned col, unsigned line_offset)
{
    size_t at = 0;
    for (unsigned l = 1; l < line; l++) {
        const char *nl = memchr(text + at, '\n', len - at);
        if (!nl) return;
        at = (size_t)(nl - text) + 1;
    }
    const char *nl = memchr(text + at, '\n', len - at);
    size_t end = nl ? (size_t)(nl - text) : len;
    if (end > at && text[end - 1] == '\r') end--;
    char num[16];
    int w = snprintf(num, sizeof num, "%u", line + line_offset);
    og_buf_printf(out, "  %s | %.*s\n  %*s | ", num, (int)(end - at), text + at, w, "");
    /* pad up to the column: each code point by its width on screen (an accent 1, a CJK
     * character 2, a combining mark 0), a tab stays a tab */
    unsigned cp = 1;
    for (size_t i = at; i < end && cp < col; cp++) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)text + i, (utf8proc_ssize_t)(end - i), &c);
        if (k <= 0) { /* not UTF-8: a byte is a column */
            og_buf_append_byte(out, ' ');
            i++;
            continue;
        }
        i += (size_t)k;
        if (c == '\t') og_buf_append_byte(out, '\t');
        else
            for (int cw = utf8proc_charwidth(c); cw > 0; cw--) og_buf_append_byte(out, ' ');
    }
    while (cp++ < col) og_buf_append_byte(out, ' '); /* a column just past the end */
    og_buf_append_str(out, "^\n");
}
