/*
 * cmd_analyze.c — `omnigraph analyze [--json] [--language L] [--no-stem] [--no-stop] TEXT...`:
 * shows the terms the search functions see for a string (text/analyzer.h), offline, so a user
 * can tell why `search`, `match_text` or `bm25` does or does not match (docs/search.md).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "text/analyzer.h"
#include "util/error.h"

static const char *analyze_help =
    "usage: omnigraph analyze [--json | --format F] [--language L] [--no-stem] [--no-stop] TEXT...\n"
    "\n"
    "Prints the terms the full-text functions (search, fuzzy, match_text, bm25) derive from\n"
    "TEXT (several arguments are joined with spaces): one line per term with its word position,\n"
    "`stop` for a stop word (skipped by search, fuzzy and bm25; kept by match_text phrases).\n"
    "  --json          print {\"tokens\": [{\"term\", \"position\", \"stop\"}...], \"words\": N}\n"
    "  --format F      json (= --json), jsonl, csv or table: one record per term (position,\n"
    "                  term, stop)\n"
    "  --language L    Snowball stemmer language (default english)\n"
    "  --no-stem       keep words unstemmed\n"
    "  --no-stop       flag no stop words\n";

int og_cmd_analyze(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(analyze_help, stdout);
        return OG_EXIT_OK;
    }
    og_analyzer_opts o = {NULL, 0, 0};
    int json = 0;
    const char *format = NULL;
    og_buf text = OG_BUF_INIT;
    int ntext = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--no-stem")) o.no_stem = 1;
        else if (!strcmp(argv[i], "--no-stop")) o.no_stop = 1;
        else if (!strcmp(argv[i], "--format") && i + 1 < argc && !format) format = argv[++i];
        else if (!strcmp(argv[i], "--language")) {
            if (i + 1 >= argc) {
                og_buf_free(&text);
                return og_cli_usage("analyze", "--language needs a value");
            }
            o.language = argv[++i];
        } else if (!strncmp(argv[i], "--", 2) && argv[i][2]) {
            og_buf_free(&text);
            return og_cli_usage("analyze", "unknown option '%s'", argv[i]);
        } else {
            if ((ntext++ && og_buf_append_byte(&text, ' ')) || og_buf_append_str(&text, argv[i])) {
                og_buf_free(&text);
                fprintf(stderr, "omnigraph analyze: out of memory\n");
                return OG_EXIT_FAIL;
            }
        }
    }
    og_cli_format fmt;
    if (og_cli_format_parse("analyze", format, json, &fmt)) {
        og_buf_free(&text);
        return OG_EXIT_USAGE;
    }
    if (!ntext) return og_cli_usage("analyze", "give the text to analyze");
    og_analyzer *a = NULL;
    og_text_tokens t = OG_TEXT_TOKENS_INIT;
    og_status st = og_analyzer_new(&a, &o);
    if (st == OG_OK) st = og_analyze(a, (const char *)text.data, text.len, &t);
    if (st != OG_OK) {
        fprintf(stderr, "omnigraph analyze: %s\n", og_error_message());
        og_analyzer_free(a);
        og_buf_free(&text);
        return OG_EXIT_FAIL;
    }
    if (fmt != OG_CLI_TEXT) {
        json_t *root = json_object(), *arr = json_array();
        for (size_t i = 0; i < t.n; i++) {
            json_t *tok = json_object();
            json_object_set_new(tok, "term", json_stringn(og_text_term(&t, i), t.v[i].len));
            json_object_set_new(tok, "position", json_integer(t.v[i].pos));
            json_object_set_new(tok, "stop", json_boolean(t.v[i].stop));
            json_array_append_new(arr, tok);
        }
        json_object_set_new(root, "tokens", arr);
        json_object_set_new(root, "words", json_integer(t.nwords));
        static const char *cols[] = {"position", "term", "stop"};
        char *s = fmt == OG_CLI_JSON ? json_dumps(root, JSON_COMPACT) : NULL;
        if (s) printf("%s\n", s);
        else if (fmt != OG_CLI_JSON) og_cli_print_records(fmt, root, "tokens", cols, 3); /* one record per term */
        free(s);
        json_decref(root);
    } else {
        for (size_t i = 0; i < t.n; i++)
            printf("%u\t%s%s\n", t.v[i].pos, og_text_term(&t, i), t.v[i].stop ? "\tstop" : "");
    }
    og_text_tokens_free(&t);
    og_analyzer_free(a);
    og_buf_free(&text);
    return OG_EXIT_OK;
}
