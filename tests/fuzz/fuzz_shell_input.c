/*
 * fuzz_shell_input.c — libFuzzer target over what `omnigraph shell` does with typed text
 * before any graph sees it (src/shell/input.h, complete.h): statement boundaries, error
 * positions, carets and completion.  Properties, abort() on a violation:
 *   - a statement's end E is within the text, and the text cut at E (or followed by anything
 *     else) ends at the same E;
 *   - an error position names a line and column >= 1 and a tag inside the message;
 *   - a caret block is empty or two lines ending in "^\n";
 *   - every completion candidate starts with the word typed.
 * Seeds: tests/fuzz/corpus/fuzz_shell_input/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/complete.h"
#include "shell/input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *CATALOG =
    "{\"interfaces\":[{\"name\":\"Named\",\"properties\":[{\"name\":\"name\",\"type\":\"String\"}]}],"
    "\"nodes\":[{\"name\":\"Person\",\"implements\":[\"Named\"],\"properties\":[{\"name\":\"handle\",\"type\":\"String\"},"
    "{\"name\":\"name\",\"type\":\"String\"}]}],"
    "\"edges\":[{\"name\":\"WorksOn\",\"from\":\"Person\",\"to\":\"Person\",\"properties\":[{\"name\":\"hours\",\"type\":\"I32?\"}]}]}";

static void die(const char *what)
{
    fprintf(stderr, "fuzz_shell_input: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;

    size_t end = og_shell_stmt_end(text, size);
    if (end > size) die("statement end past the text");
    if (end) {
        if (og_shell_stmt_end(text, end) != end) die("the statement cut at its end ends elsewhere");
        char *more = malloc(end + 3);
        memcpy(more, text, end);
        memcpy(more + end, "}{", 2);
        more[end + 2] = 0;
        if (og_shell_stmt_end(more, end + 2) != end) die("what follows a statement moved its end");
        free(more);
    }
    (void)og_shell_stmt_blank(text, size);

    unsigned line = 0, col = 0;
    size_t ts = 0, te = 0, mlen = strlen(text);
    if (og_shell_error_pos(text, &line, &col, &ts, &te)) {
        if (!line || !col || ts >= te || te > mlen) die("error position out of range");
    }
    og_buf b = OG_BUF_INIT;
    line = size ? (unsigned)(data[0] % 8) + 1 : 1;
    col = size > 1 ? (unsigned)data[1] % 200 + 1 : 1;
    og_shell_caret(&b, text, size, line, col, size > 2 ? data[2] : 0);
    if (b.len && (b.len < 2 || memcmp(b.data + b.len - 2, "^\n", 2) != 0)) die("a caret block does not end in ^");
    og_buf_free(&b);

    og_shell_names n;
    memset(&n, 0, sizeof n);
    if (og_shell_names_set_catalog(&n, CATALOG) != OG_OK) die("the seed catalog");
    og_shell_names_set_branches(&n, "{\"branches\":[{\"name\":\"main\"},{\"name\":\"dev\"}]}");
    og_shell_names_set_params(&n, "{\"who\":1}");
    og_shell_names any;
    memset(&any, 0, sizeof any);
    (void)og_shell_names_set_catalog(&any, text); /* any text: a catalog, or a typed refusal */
    (void)og_shell_names_set_branches(&any, text);
    og_shell_names_set_params(&any, text);
    og_shell_names_free(&any);
    /* the last line is the one being typed, everything before it the statement so far */
    char *nl = strrchr(text, '\n');
    const char *cur = nl ? nl + 1 : text;
    if (nl) *nl = 0;
    size_t cend = strlen(cur), cstart = cend;
    while (cstart > 0 && !strchr(" \t\n{}()[],:;=<>!+-*/\"", cur[cstart - 1])) cstart--;
    og_shell_words w = {0};
    og_shell_complete(&w, &n, nl ? text : NULL, cur, cstart, cend);
    for (size_t i = 0; i < w.n; i++)
        if (strncmp(w.v[i], cur + cstart, cend - cstart) != 0) die("a candidate does not start with the word typed");
    og_shell_words_free(&w);
    og_shell_names_free(&n);
    free(text);
    return 0;
}
