/*
 * output.h — `--format json|jsonl|csv|table` for every verb that prints records (commit
 * list, branch list, snapshot, changes, ...), the same four formats `query` renders from
 * og_rows, over the JSON documents the public API returns:
 *   json   the whole document, indented (what --json prints);
 *   jsonl  the document without its record list on the first line, then one record per line
 *          (as `query --format jsonl`: a metadata line, then the rows);
 *   csv    RFC 4180: a header line, CRLF line ends, fields quoted when they hold a comma, a
 *          quote or a line break; a null (or absent) value is an empty field and an empty
 *          string is "" so the two stay distinct; lists and objects are compact JSON;
 *   table  columns aligned by display width (East Asian wide characters count 2, combining
 *          marks 0), a null is an empty cell and an empty string is "", then "(N rows)".
 */
#ifndef OG_CLI_OUTPUT_H
#define OG_CLI_OUTPUT_H

#include <jansson.h>
#include <stddef.h>

typedef enum og_cli_format {
    OG_CLI_TEXT = 0, /* neither --format nor --json: the verb's own text */
    OG_CLI_JSON,
    OG_CLI_JSONL,
    OG_CLI_CSV,
    OG_CLI_TABLE
} og_cli_format;

/* --format's value (NULL when not given) and --json into *out.  A bad value, or --json with a
 * --format other than json, prints a usage error and returns OG_EXIT_USAGE; else 0. */
int og_cli_format_parse(const char *verb, const char *value, int json, og_cli_format *out);

/* The display width of n bytes of UTF-8 text in terminal columns (East Asian wide characters 2,
 * combining marks 0; a byte that is not UTF-8 counts 1): what the table format aligns by. */
size_t og_cli_text_width(const void *text, size_t n);

/* The --format gate, run by main() before a verb sees its arguments: every verb (and
 * subcommand) declares which formats it prints (output.c's table), so that `--format F`
 * is never silently ignored.  A format the verb does not print is a usage error naming the
 * verb and the formats it has (exit 2).  For a verb that does not parse --format itself,
 * `--format json` becomes `--json` and `--format table` (its human-readable report, the
 * reference's "table" output) is dropped from argv.  Returns 0 (argv possibly rewritten,
 * *argc updated) or OG_EXIT_USAGE after printing the error. */
int og_cli_format_gate(int *argc, char **argv);

/* Prints `doc` in format f (not OG_CLI_TEXT).  The records are the array doc[rows_key], or,
 * with rows_key NULL, doc itself as the one record.  `cols` names the record members that
 * csv and table show (a dotted name "a.b" that is not a member's name reaches into object
 * member a; "label=path" shows header `label` over member `path`). */
void og_cli_print_records(int f, json_t *doc, const char *rows_key, const char *const *cols, size_t ncols);

#endif
