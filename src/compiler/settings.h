#ifndef OG_COMPILER_SETTINGS_H
#define OG_COMPILER_SETTINGS_H

/* Session settings: the names a `set NAME = VALUE;` line of a query file or a `--set
 * NAME=VALUE` flag may give a value, with the values each takes (docs/query-language.md
 * "Session settings").  One table, so the parser, the CLI and the docs name the same ones. */

#include <stddef.h>

typedef struct og_setting_def {
    const char *name;
    const char *const *values; /* the enum's values, NULL-terminated */
    const char *def;           /* the process default */
    const char *scope;         /* "request": any caller may set it */
    const char *what;          /* one line for `show` and the docs */
} og_setting_def;

/* The known settings (n of them). */
const og_setting_def *og_settings(size_t *n);

/* Checks `name = value` (value_len bytes; is_string when it was written as a string literal,
 * is_int when as an integer).  0 and a message in msg (the reference's wording: "unknown
 * setting `x`; expected one of …", "unknown value `y` for setting `x`; expected one of …")
 * when refused; 1 when accepted.  value NULL checks the name alone (`reset NAME;`). */
int og_setting_check(const char *name, size_t name_len, const char *value, size_t value_len, int is_string, int is_int,
                     char *msg, size_t cap);

#endif
