/*
 * cmd_graph.c — the graph verbs over the public API: init, load, query, mutate, export,
 * snapshot (reference-surfaces.md §1.2).  Every decision is an og_db_* call; this file only
 * parses flags and prints.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/graph_args.h"
#include "cli/output.h"
#include "util/buf.h"

#define COMMON_HELP                                                                       \
    "  --store ROOT       the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n" \
    "  --as ACTOR         actor recorded on commits\n"                                    \
    "  --quiet            no target echo, no summary line of a write\n"
/* The reads' common flags: a read records no actor (--as is refused) and echoes nothing. */
#define READ_HELP                                                                         \
    "  --store ROOT       the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n" \
    "  --branch B, --at C (alias --snapshot C)   the state read: a branch head (default main)\n" \
    "                     or a commit (an id, a unique id prefix, a branch name, REF~N)\n"

static int help(const char *text, int argc, char **argv)
{
    if (!og_cli_wants_help(argc, argv)) return 0;
    fputs(text, stdout);
    return 1;
}

/* ---- init ---------------------------------------------------------------------------------- */

static const char *init_help =
    "usage: omnigraph init --schema <file.pg> [--json] ROOT\n"
    "\n"
    "Creates a graph at ROOT (a directory, created if needed, or s3://bucket/prefix) with the\n"
    "schema: one empty table per node and edge type, the first commit, and branch main.\n"
    "Refuses a ROOT that already holds a graph.\n"
    "  --schema FILE      the .pg schema (required)\n"
    "  --json             print the new graph's snapshot: {\"commit\",\"branch\",\"schema\",\"tables\"}\n" COMMON_HELP;

int og_cmd_init(int argc, char **argv)
{
    if (help(init_help, argc, argv)) return OG_EXIT_OK;
    og_graph_args a = {.verb = "init"};
    const char *schema = NULL;
    og_flag flags[] = {{"--schema", NULL, 1, 0, &schema, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 1, 1);
    if (rc) return rc;
    if (!schema) return og_cli_usage("init", "--schema FILE is required");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_buf text = OG_BUF_INIT;
    if (og_cli_read_file(schema, &text) != OG_OK) return OG_EXIT_FAIL;
    og_graph_args_echo(&a, root);
    og_open_opts o = {.actor = a.actor};
    og_db *db;
    og_status st = og_db_init(&db, root, schema, (const char *)text.data, text.len, &o);
    og_buf_free(&text);
    if (st) return og_cli_fail("init", st);
    char *snap = NULL;
    if (a.json && og_db_snapshot(&snap, db, NULL) == OG_OK) printf("%s\n", snap);
    else if (!a.json && !a.quiet) printf("initialised graph at %s\n", root);
    og_free(snap);
    og_db_close(db);
    return OG_EXIT_OK;
}

/* og_cli_fail, but naming the input the user gave: the engine calls an unnamed query source
 * "<query>" / "<mutation>" (tag NULL), a load names its spool file (tag = that path). */
static int fail_in(const char *verb, og_status st, const char *file, const char *tag)
{
    const char *msg = og_error_message();
    if (!tag) tag = strstr(msg, "<query>") ? "<query>" : strstr(msg, "<mutation>") ? "<mutation>" : NULL;
    const char *at = tag ? strstr(msg, tag) : NULL;
    if (!file || !at) return og_cli_fail(verb, st);
    const char *rest = at + strlen(tag);
    int restlen = (int)strlen(rest);
    while (restlen > 0 && rest[restlen - 1] == '\n') restlen--; /* one line break, not a blank line */
    fprintf(stderr, "omnigraph %s: %s: %.*s%s%.*s\n", verb, og_status_name(st), (int)(at - msg), msg, file, restlen, rest);
    return st == OG_ERR_PRECONDITION_FAILED ? OG_EXIT_PRECONDITION : OG_EXIT_FAIL;
}

/* ---- load ---------------------------------------------------------------------------------- */

static const char *load_help =
    "usage: omnigraph load (--data FILE | --csv [TYPE=]FILE...) --mode overwrite|append|merge\n"
    "                      [--branch B] [--from BASE] [--no-index] ROOT\n"
    "\n"
    "Loads an NDJSON file, or CSV files, as ONE commit; nothing is published if any line is invalid.\n"
    "  --data FILE        one JSON object per line (- = stdin): {\"type\":T,\"data\":{...}} or\n"
    "                     {\"edge\":E,\"from\":ID,\"to\":ID,\"data\":{...}}\n"
    "  --csv TYPE=FILE    a CSV file of node or edge type TYPE (repeatable: all files are one commit);\n"
    "                     a header row names the columns: properties, from/to for edges, and the\n"
    "                     neo4j-admin forms name:ID(Group), :START_ID, :END_ID, name:type, :LABEL,\n"
    "                     :TYPE (then TYPE= may be left out)\n"
    "  --delimiter C      the CSV field delimiter: one character, or tab (default ,)\n"
    "  --mode M           overwrite: replace every type present in the file\n"
    "                     append: strict insert (an existing id is a key conflict)\n"
    "                     merge: upsert by id\n"
    "  --branch B         the branch to write (default main)\n"
    "  --from BASE        create B from BASE first when B does not exist\n"
    "  --if-commit C      only if the branch head is commit C (exit 4 otherwise)\n"
    "  --progress         report progress on stderr\n"
    "  --no-index         build no text / vector index right after the load (by default a load\n"
    "                     that leaves 1,000+ rows of an @index property unindexed builds them;\n"
    "                     run `omnigraph index build` or `optimize` later)\n"
    "  -m, --message TEXT the commit's message (commit list / show print it)\n"
    "  --json             print the result as JSON: branch, mode, per-type counts, the commit\n"
    "  --format F         json, jsonl, csv or table (the result as one record)\n"
    "  --timeout D        stop the load after D (30s, 10m, 2h; default 1h or $OG_WRITE_TIMEOUT_MS):\n"
    "                     error `limit`, nothing published, its files deleted\n"
    "  --max-memory N     stop it when the rows it holds pass N bytes (512M, 2G; default 4G or\n"
    "                     $OG_WRITE_MAX_MEMORY)\n" COMMON_HELP;

int og_cmd_load(int argc, char **argv)
{
    if (help(load_help, argc, argv)) return OG_EXIT_OK;
    og_graph_args a = {.verb = "load"};
    const char *data = NULL, *mode = NULL, *from = NULL, *if_commit = NULL, *format = NULL, *timeout = NULL,
               *max_memory = NULL, *delimiter = NULL;
    const char *csv[64];
    size_t ncsv = 0;
    int progress = 0, no_index = 0;
    og_flag flags[] = {
        {"--data", NULL, 1, 0, &data, NULL, NULL, NULL},
        {"--csv", NULL, 1, 1, NULL, NULL, csv, &ncsv},
        {"--delimiter", NULL, 1, 0, &delimiter, NULL, NULL, NULL},
        {"--mode", NULL, 1, 0, &mode, NULL, NULL, NULL},
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--progress", NULL, 0, 0, NULL, &progress, NULL, NULL},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
        {"--timeout", NULL, 1, 0, &timeout, NULL, NULL, NULL},
        {"--max-memory", NULL, 1, 0, &max_memory, NULL, NULL, NULL},
        {"--no-index", NULL, 0, 0, NULL, &no_index, NULL, NULL},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, sizeof flags / sizeof flags[0], 1);
    if (rc) return rc;
    og_budget budget = {0, 0}; /* docs/maintenance.md "Budgets of mutations and loads" */
    if (timeout && (budget.time_ms = og_cli_duration_ms(timeout)) <= 0)
        return og_cli_usage("load", "--timeout needs a duration such as 500ms, 30s or 2m");
    if (max_memory && (budget.memory_bytes = og_cli_size_bytes(max_memory)) <= 0)
        return og_cli_usage("load", "--max-memory needs a size such as 512M or 2G");
    og_cli_format fmt;
    if ((rc = og_cli_format_parse("load", format, a.json, &fmt))) return rc;
    a.format = (int)fmt;
    og_load_csv_file files[64];
    char types[64][128];
    char delim = ',';
    if (data && ncsv) return og_cli_usage("load", "give --data FILE or --csv TYPE=FILE, not both");
    if (!data && !ncsv) return og_cli_usage("load", "--data FILE (NDJSON) or --csv TYPE=FILE is required");
    if (delimiter && !ncsv) return og_cli_usage("load", "--delimiter applies to --csv files");
    if (delimiter && !strcmp(delimiter, "tab")) delimiter = "\t";
    if (delimiter && (strlen(delimiter) != 1 || strchr("\"\r\n", delimiter[0])))
        return og_cli_usage("load", "--delimiter takes one character (or tab), not a quote or line break");
    if (delimiter) delim = delimiter[0];
    for (size_t i = 0; i < ncsv; i++) { /* TYPE=FILE; a FILE alone when it names its types in a column */
        const char *eq = strchr(csv[i], '=');
        size_t tl = eq ? (size_t)(eq - csv[i]) : 0;
        int is_type = eq && tl > 0 && tl < sizeof types[i] && strcspn(csv[i], "/.") >= tl;
        if (is_type) snprintf(types[i], sizeof types[i], "%.*s", (int)tl, csv[i]);
        files[i].type = is_type ? types[i] : NULL;
        files[i].path = is_type ? eq + 1 : csv[i];
    }
    if (!mode) return og_cli_usage("load", "--mode is required: overwrite, append or merge");
    og_load_opts lo = {.branch = a.branch, .from = from, .expected_head = if_commit, .progress = progress,
                       .no_index = no_index};
    if (og_load_mode_parse(mode, &lo.mode) != OG_OK) return og_cli_usage("load", "%s", og_error_message());
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_graph_args_echo(&a, root);
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    /* `--data -`: stdin is spooled to a temporary file, because a load whose publish loses a
     * race re-reads its input from the start (docs/load.md). */
    char spool[64] = "";
    if (data && !strcmp(data, "-")) {
        const char *tmp = getenv("TMPDIR");
        snprintf(spool, sizeof spool, "%s/og-stdin-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
        int fd = mkstemp(spool);
        FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
        char buf[1 << 16];
        size_t n;
        int ok = out != NULL;
        while (ok && (n = fread(buf, 1, sizeof buf, stdin)) > 0) ok = fwrite(buf, 1, n, out) == n;
        ok = ok && !ferror(stdin);
        if (out && fclose(out) != 0) ok = 0;
        if (!out && fd >= 0) close(fd);
        if (!ok) {
            fprintf(stderr, "omnigraph load: cannot spool stdin to %s\n", spool);
            if (fd >= 0) unlink(spool);
            og_db_close(db);
            return OG_EXIT_FAIL;
        }
        data = spool;
    }
    int created = 0;
    if (from && fmt != OG_CLI_TEXT) { /* the result says whether this load forked the branch */
        char *bl = NULL;
        char want[300];
        snprintf(want, sizeof want, "\"name\":\"%s\"", a.branch ? a.branch : "main");
        if (og_db_branch_list(&bl, db) == OG_OK) created = !strstr(bl, want);
        og_free(bl);
    }
    og_receipt r;
    og_db_set_write_budget(db, &budget); /* --timeout / --max-memory: this one load */
    og_status st = ncsv ? og_db_load_csv(&r, db, files, ncsv, delim, &lo) : og_db_load(&r, db, data, &lo);
    og_cli_write_info wi = {data, og_load_mode_name(lo.mode), from, created && r.published, NULL,
                            ncsv ? files : NULL, ncsv, delim};
    if (!st) og_cli_print_receipt(&a, db, &r, 1, &wi);
    if (*spool) unlink(spool);
    int exit_code = OG_EXIT_OK;
    if (st && *spool) exit_code = fail_in("load", st, "<stdin>", spool);
    else if (st) exit_code = og_cli_fail("load", st);
    if (st == OG_ERR_PRECONDITION_FAILED && if_commit && a.json) og_cli_print_precondition(db, a.branch, if_commit);
    og_db_close(db);
    return exit_code;
}

/* ---- query and mutate ------------------------------------------------------------------------ */

static const char *query_help =
    "usage: omnigraph query (-e TEXT | --query FILE) [NAME] [--params JSON | --params-file F]\n"
    "                       [--branch B | --at COMMIT] [--format json|jsonl|csv|table|arrow] [--out FILE]\n"
    "                       (--store ROOT | ROOT)\n"
    "\n"
    "Runs a read query.  NAME picks the query when the source holds several.\n"
    "  -e, --query-string TEXT   the .gq source inline\n"
    "  --query FILE              the .gq source file (- reads it from stdin)\n"
    "  --params JSON             parameters as a JSON object ({\"name\": \"Alice\"})\n"
    "  --params-file F           parameters from a file\n"
    "  --branch B                read the head of branch B (default main)\n"
    "  --at C, --snapshot C      read commit C (time travel); C is an id, a unique id prefix,\n"
    "                            a branch name or REF~N (N-th first parent)\n"
    "  --format F                json (default), jsonl, csv, table, or kv (one `column: value`\n"
    "                            block per row); --json = json; arrow: an Apache Arrow IPC\n"
    "                            stream (binary: redirect stdout or give --out)\n"
    "  --out FILE                write the result to FILE instead of stdout\n"
    "  --wide, --no-truncate     with --format table: show every cell whole (by default a cell\n"
    "                            past 60 columns is cut with \"...\" and the footer says so)\n"
    "  --timeout D               stop the query after D (500ms, 30s, 2m; default 2m or\n"
    "                            $OG_QUERY_TIMEOUT_MS): error `limit`, exit 1\n"
    "  --max-memory N            stop it when its intermediate results pass N bytes (512M, 2G;\n"
    "                            default 4G or $OG_QUERY_MAX_MEMORY)\n"
    "  --exact                   nearest(...) by exact search even where a vector index exists\n"
    "  --ef N                    nearest(...) over a vector index: search beam N per data file\n"
    "                            (default 200; larger = better recall, slower)\n"
    "  --explain                 print the plan instead of rows: each step's access path,\n"
    "                            traversal, pushed filters and estimated rows (nothing is read)\n"
    "  --analyze                 with --explain: run the query and add each step's actual rows\n"
    "  --set NAME=VALUE          a session setting (repeatable), checked as a `set NAME = VALUE;`\n"
    "                            line is; the settings are listed in docs/query-language.md\n"
    "  --store ROOT              the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n";

static const char *mutate_help =
    "usage: omnigraph mutate (-e TEXT | --query FILE) [NAME] [--params JSON | --params-file F]\n"
    "                        [--branch B] [--from BASE] [--if-commit C] [--json] (--store ROOT | ROOT)\n"
    "\n"
    "Runs a mutation (insert / update / delete) as ONE commit; nothing is published when it\n"
    "matches nothing or fails.\n"
    "  -e, --query-string TEXT   the .gq source inline\n"
    "  --query FILE              the .gq source file (- reads it from stdin); the source may\n"
    "                            also be one branch statement: branch create X [from Y],\n"
    "                            branch delete X, branch merge X [into Y]\n"
    "  --params JSON | --params-file F\n"
    "  --branch B                the branch to write (default main)\n"
    "  --from BASE               create B from BASE first when B does not exist\n"
    "  --if-commit C             only if the branch head is commit C (exit 4 otherwise)\n"
    "  -m, --message TEXT        the commit's message (commit list / show print it)\n"
    "  --json                    print the result as JSON: query, branch, counts, the commit\n"
    "  --format F                json, jsonl, csv or table (the result as one record)\n"
    "  --timeout D               stop the mutation after D (500ms, 30s, 2m; default 1h or\n"
    "                            $OG_WRITE_TIMEOUT_MS): error `limit`, nothing published\n"
    "  --max-memory N            stop it when the rows it stages pass N bytes (512M, 2G;\n"
    "                            default 4G or $OG_WRITE_MAX_MEMORY)\n"
    "  --set NAME=VALUE          a session setting (repeatable), as for query\n" COMMON_HELP;

static int looks_like_path(const char *s) { return strchr(s, '/') || access(s, F_OK) == 0; }

/* A query NAME is an identifier; a word that cannot be one (`./g`, `s3://b/p`, `my-graph`) is a ROOT. */
static int can_be_query_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

/* `--query -` / `--params-file -`: the text on stdin. */
static og_status file_or_stdin(const char *path, og_buf *out)
{
    if (strcmp(path, "-")) return og_cli_read_file(path, out);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0) og_buf_append(out, chunk, n);
    if (ferror(stdin)) {
        fprintf(stderr, "omnigraph: cannot read stdin\n");
        return OG_ERR_IO;
    }
    return OG_OK;
}

/* Blank or only `//` / `#` comments: nothing a compiler could call a query. */
static int source_blank(const og_buf *b)
{
    const char *p = (const char *)b->data, *e = p + b->len;
    while (p < e) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        else if (*p == '#' || (*p == '/' && p + 1 < e && p[1] == '/')) {
            while (p < e && *p != '\n') p++;
        } else {
            return 0;
        }
    }
    return 1;
}

static int is_branch_statement(const og_buf *b)
{
    const char *p = (const char *)b->data, *e = p + b->len;
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n')) p++;
    return e - p > 7 && !strncmp(p, "branch ", 7);
}

/* `mutate -e 'branch create b0 [from main]'` (also delete, merge X [into Y]): the reference
 * accepts a branch statement as the whole source of a mutation. */
static int run_branch_statement(og_graph_args *a, const og_buf *src, const char *root)
{
    char buf[1024], *w[6];
    size_t n = 0;
    snprintf(buf, sizeof buf, "%.*s", (int)(src->len < sizeof buf ? src->len : sizeof buf - 1), (const char *)src->data);
    for (char *save = NULL, *t = strtok_r(buf, " \t\n\"", &save); t && n < 6; t = strtok_r(NULL, " \t\n\"", &save))
        w[n++] = t;
    int create = n >= 3 && !strcmp(w[1], "create") && (n == 3 || (n == 5 && !strcmp(w[3], "from")));
    int del = n == 3 && !strcmp(w[1], "delete");
    int merge = n >= 3 && !strcmp(w[1], "merge") && (n == 3 || (n == 5 && !strcmp(w[3], "into")));
    if (!create && !del && !merge)
        return og_cli_usage("mutate", "a branch statement is `branch create X [from Y]`, `branch delete X` or "
                                      "`branch merge X [into Y]`");
    og_db *db = og_graph_args_open(a, root);
    if (!db) return OG_EXIT_FAIL;
    og_status st;
    char *out = NULL;
    if (create) st = og_db_branch_create(db, w[2], n == 5 ? w[4] : NULL, NULL, NULL);
    else if (del) st = og_db_branch_delete(db, w[2]);
    else {
        og_db_merge_opts mo = {w[2], n == 5 ? w[4] : NULL, NULL, 0};
        st = og_db_branch_merge(&out, db, &mo);
    }
    int rc = OG_EXIT_OK;
    if (st) rc = og_cli_fail("mutate", st);
    else if (out) printf("%s\n", out);
    else if (a->json) printf("{\"statement\":\"branch %s\",\"branch\":\"%s\"}\n", w[1], w[2]);
    else printf("%s branch %s\n", create ? "created" : "deleted", w[2]);
    og_free(out);
    og_db_close(db);
    return rc;
}

/* --format kv: one block per row, `column: value` lines (strings bare, null as `null`, other
 * values as JSON), a blank line between rows, then `(N rows)`.  `jsonl` is the rows' text. */
static void print_kv(const og_rows *rows, const char *jsonl)
{
    size_t w = og_rows_width(rows), nr = 0, name_w = 0;
    for (size_t c = 0; c < w; c++)
        if (strlen(og_rows_column_name(rows, c)) > name_w) name_w = strlen(og_rows_column_name(rows, c));
    const char *p = strchr(jsonl, '\n'); /* past the metadata line */
    for (p = p ? p + 1 : ""; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        json_t *o = og_json_read(p, n); /* a U64 above 2^63-1 stays a number */
        if (o) {
            if (nr++) putchar('\n');
            for (size_t c = 0; c < w; c++) {
                const char *name = og_rows_column_name(rows, c);
                json_t *v = json_object_get(o, name);
                printf("%s:%*s ", name, (int)(name_w - strlen(name)), "");
                if (json_is_string(v) && !og_json_digits(v)) {
                    printf("%s\n", json_string_value(v));
                } else if (!v || json_is_null(v)) {
                    printf("null\n");
                } else { /* values as the rows spell them (reals shortest, big integers bare) */
                    char *t = og_json_text(v, JSON_COMPACT | JSON_ENCODE_ANY);
                    printf("%s\n", t ? t : "");
                    og_free(t);
                }
            }
            json_decref(o);
        }
        p += n + (e ? 1 : 0);
    }
    printf("(%zu row%s)\n", nr, nr == 1 ? "" : "s");
}

/* --out FILE: the whole result, or (on a failed write) no file at all. */
static int write_out(const char *verb, const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "omnigraph %s: io: cannot create %s: %s\n", verb, path, strerror(errno));
        return OG_EXIT_FAIL;
    }
    int bad = fwrite(data, 1, len, f) != len;
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "omnigraph %s: io: cannot write %s: %s\n", verb, path, strerror(errno));
        remove(path);
        return OG_EXIT_FAIL;
    }
    return OG_EXIT_OK;
}

static int run_gq(int argc, char **argv, int is_mutation)
{
    const char *verb = is_mutation ? "mutate" : "query";
    if (help(is_mutation ? mutate_help : query_help, argc, argv)) return OG_EXIT_OK;
    og_graph_args a = {.verb = verb};
    int explain = 0, analyze = 0;
    const char *inline_src = NULL, *file = NULL, *params = NULL, *params_file = NULL, *format = NULL, *if_commit = NULL,
               *from = NULL, *timeout = NULL, *max_memory = NULL, *ef = NULL, *out_file = NULL;
    int exact = 0, wide = 0;
    const char *sets[64];
    size_t nsets = 0;
    og_flag flags[] = {
        {"--query-string", "-e", 1, 0, &inline_src, NULL, NULL, NULL},
        {"--query", NULL, 1, 0, &file, NULL, NULL, NULL},
        {"--params", NULL, 1, 0, &params, NULL, NULL, NULL},
        {"--params-file", NULL, 1, 0, &params_file, NULL, NULL, NULL},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--timeout", NULL, 1, 0, &timeout, NULL, NULL, NULL},
        {"--max-memory", NULL, 1, 0, &max_memory, NULL, NULL, NULL},
        {"--exact", NULL, 0, 0, NULL, &exact, NULL, NULL},
        {"--explain", NULL, 0, 0, NULL, &explain, NULL, NULL},
        {"--analyze", NULL, 0, 0, NULL, &analyze, NULL, NULL},
        {"--ef", NULL, 1, 0, &ef, NULL, NULL, NULL},
        {"--wide", "--no-truncate", 0, 0, NULL, &wide, NULL, NULL},
        {"--set", NULL, 1, 1, NULL, NULL, sets, &nsets},
        {"--out", NULL, 1, 0, &out_file, NULL, NULL, NULL},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, sizeof flags / sizeof flags[0], 2);
    if (rc) return rc;
    if ((rc = og_cli_check_sets(verb, sets, nsets))) return rc;
    if (!!inline_src == !!file) return og_cli_usage(verb, "give exactly one of -e TEXT or --query FILE");
    if (params && params_file) return og_cli_usage(verb, "give --params or --params-file, not both");
    if (is_mutation && a.at) return og_cli_usage(verb, "--at is for reads");
    if (is_mutation && exact) return og_cli_usage(verb, "--exact is for reads");
    if (is_mutation && ef) return og_cli_usage(verb, "--ef is for reads");
    unsigned long ef_n = 0;
    if (ef) {
        char *end;
        ef_n = strtoul(ef, &end, 10);
        if (*end || !*ef || ef_n == 0 || ef_n > 100000) return og_cli_usage(verb, "--ef needs a number from 1 to 100000");
    }
    if (!is_mutation && (if_commit || from)) return og_cli_usage(verb, "%s is for mutations", if_commit ? "--if-commit" : "--from");
    og_budget budget = {0, 0}; /* docs/maintenance.md "Query budgets" and "Budgets of mutations and loads" */
    if (timeout && (budget.time_ms = og_cli_duration_ms(timeout)) <= 0)
        return og_cli_usage(verb, "--timeout needs a duration such as 500ms, 30s or 2m");
    if (max_memory && (budget.memory_bytes = og_cli_size_bytes(max_memory)) <= 0)
        return og_cli_usage(verb, "--max-memory needs a size such as 512M or 2G");
    if (!is_mutation && a.actor) return og_cli_usage(verb, "--as names the actor of a write; a read records none");
    if (is_mutation && (explain || analyze)) return og_cli_usage(verb, "--explain is for reads");
    if (analyze && !explain) return og_cli_usage(verb, "--analyze goes with --explain");
    if (wide && (is_mutation || !format || strcmp(format, "table")))
        return og_cli_usage(verb, "--wide goes with --format table (the other formats never cut a value)");
    if (explain && format) return og_cli_usage(verb, "--explain prints text; drop --format");
    int kv = format && !strcmp(format, "kv"); /* the reference's per-row key/value blocks */
    if (kv && (is_mutation || a.json))
        return og_cli_usage(verb, is_mutation ? "--format kv is for reads" : "--json and --format kv contradict each other");
    if (kv) format = NULL;
    int arrow = format && !strcmp(format, "arrow"); /* binary rows: docs/query-language.md "Arrow output" */
    if (arrow && (is_mutation || a.json))
        return og_cli_usage(verb, is_mutation ? "--format arrow is for reads" : "--json and --format arrow contradict each other");
    if (out_file && (is_mutation || explain)) return og_cli_usage(verb, "--out is for the rows of a read");
    if (out_file && kv) return og_cli_usage(verb, "--out goes with --format json, jsonl, csv, table or arrow");
    if (arrow && !out_file && isatty(STDOUT_FILENO))
        return og_cli_usage(verb, "--format arrow writes binary: redirect stdout (> result.arrow) or give --out FILE");
    if (arrow) format = NULL;
    og_cli_format cfmt;
    if ((rc = og_cli_format_parse(verb, format, a.json, &cfmt))) return rc;
    a.format = (int)cfmt;
    og_format fmt = kv ? OG_FORMAT_JSONL : arrow ? OG_FORMAT_ARROW : OG_FORMAT_JSON;
    if (format && !is_mutation) {
        if (!strcmp(format, "json")) fmt = OG_FORMAT_JSON;
        else if (!strcmp(format, "jsonl")) fmt = OG_FORMAT_JSONL;
        else if (!strcmp(format, "csv")) fmt = OG_FORMAT_CSV;
        else if (!strcmp(format, "table")) fmt = wide ? OG_FORMAT_TABLE_WIDE : OG_FORMAT_TABLE;
        else return og_cli_usage(verb, "--format must be json, jsonl, csv or table");
    }
    /* Positionals: [NAME] [ROOT].  A single one is the ROOT when no --store / $OMNIGRAPH_STORE
     * names the graph and it looks like a path (contains '/' or "://", or exists), or when it
     * cannot be a NAME (with --store that makes two roots: a usage error). */
    const char *name = NULL;
    const char *env = getenv("OMNIGRAPH_STORE");
    if (a.npositional == 2) { /* in either order: the one that looks like a path is the ROOT */
        int swap = looks_like_path(a.positional[0]) && !looks_like_path(a.positional[1]);
        name = a.positional[swap ? 1 : 0];
        a.positional[0] = a.positional[swap ? 0 : 1];
        a.npositional = 1;
    } else if (a.npositional == 1 && a.store && !can_be_query_name(a.positional[0])) {
        /* `query --store g ./g`: not a NAME, so a second graph root (og_graph_args_root refuses it) */
    } else if (a.npositional == 1 && (a.store || (env && *env && can_be_query_name(a.positional[0])) ||
                                      !looks_like_path(a.positional[0]))) {
        name = a.positional[0];
        a.npositional = 0;
        if (!a.store && !(env && *env)) /* say what became of the word (`query mygraph -e ...`) */
            return og_cli_usage(verb, "no graph given: '%s' is not an existing directory, so it was read as the "
                                      "query NAME; give the graph as --store ROOT (or a path: ./%s)", name, name);
    }
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_buf src = OG_BUF_INIT, pbuf = OG_BUF_INIT;
    if (file && file_or_stdin(file, &src) != OG_OK) return OG_EXIT_FAIL;
    if (inline_src) og_buf_append_str(&src, inline_src);
    if (source_blank(&src)) {
        og_buf_free(&src);
        return og_cli_usage(verb, "the query source%s%s is empty: give a .gq text such as\n"
                                  "  omnigraph %s -e 'query people() { match { $p: Person } return { $p.name } }' ./graph",
                            file ? " " : "", file ? (strcmp(file, "-") ? file : "on stdin") : "", verb);
    }
    if (is_mutation && is_branch_statement(&src)) {
        int brc = run_branch_statement(&a, &src, root);
        og_buf_free(&src);
        return brc;
    }
    if (params_file) {
        if (file_or_stdin(params_file, &pbuf) != OG_OK) {
            og_buf_free(&src);
            return OG_EXIT_FAIL;
        }
        params = og_buf_cstr(&pbuf);
    }
    og_db *db = og_graph_args_open(&a, root);
    og_status st = OG_OK;
    int exit_code = OG_EXIT_OK;
    if (!db) {
        exit_code = OG_EXIT_FAIL;
    } else if (is_mutation) {
        og_receipt r;
        og_db_mutate_opts mo = {a.branch, from, if_commit};
        og_db_set_write_budget(db, &budget); /* --timeout / --max-memory: this one mutation */
        st = og_db_mutate_ex(&r, db, (const char *)src.data, src.len, name, params, &mo);
        og_cli_write_info wi = {.query_name = name};
        char qname[128] = "";
        if (!name) { /* the one query of the source */
            const char *q = strstr((const char *)src.data, "query ");
            if (q && sscanf(q + 6, " %127[A-Za-z0-9_]", qname) == 1) wi.query_name = qname;
        }
        if (st) exit_code = fail_in(verb, st, file, NULL);
        else og_cli_print_receipt(&a, db, &r, 0, &wi);
        if (st == OG_ERR_PRECONDITION_FAILED && if_commit && a.json) og_cli_print_precondition(db, a.branch, if_commit);
    } else if (explain) {
        og_read_opts at = {a.branch, a.at};
        char *text = NULL;
        st = og_db_query_explain(&text, db, (const char *)src.data, src.len, name, params, &at, analyze);
        if (st) exit_code = fail_in(verb, st, file, NULL);
        else fputs(text, stdout);
        og_free(text);
    } else {
        og_rows *rows = NULL;
        og_read_opts at = {a.branch, a.at};
        og_db_set_budget(db, &budget); /* --timeout / --max-memory: this process's one query */
        og_query_opts qo = {exact, (uint32_t)ef_n};
        st = og_db_query_ex(&rows, db, (const char *)src.data, src.len, name, params, &at, &qo);
        char *text = NULL;
        size_t tlen = 0;
        if (st == OG_OK) st = og_rows_render(&text, &tlen, rows, fmt, a.at ? a.at : (a.branch ? a.branch : "main"));
        if (st) exit_code = fail_in(verb, st, file, NULL);
        else if (kv) print_kv(rows, text);
        else if (out_file) exit_code = write_out(verb, out_file, text, tlen);
        else fwrite(text, 1, tlen, stdout);
        og_free(text);
        og_rows_free(rows);
    }
    og_db_close(db);
    og_buf_free(&src);
    og_buf_free(&pbuf);
    return exit_code;
}

int og_cmd_query(int argc, char **argv) { return run_gq(argc, argv, 0); }
int og_cmd_mutate(int argc, char **argv) { return run_gq(argc, argv, 1); }

/* ---- export and snapshot ----------------------------------------------------------------------- */

static const char *export_help =
    "usage: omnigraph export [--branch B | --at COMMIT] [--type T]... [--format jsonl|csv] ROOT\n"
    "\n"
    "Writes the graph as NDJSON in the load format to stdout (ids included), so that\n"
    "`omnigraph load --mode overwrite` into a graph with the same schema reproduces it.\n"
    "  --type T           only this node or edge type (repeatable)\n"
    "  --format jsonl     the load format, JSON lines (the default)\n"
    "  --format csv       one type (--type T) as CSV that `load --csv T=FILE` reads back\n" READ_HELP;

int og_cmd_export(int argc, char **argv)
{
    if (help(export_help, argc, argv)) return OG_EXIT_OK;
    og_graph_args a = {.verb = "export"};
    const char *types[64];
    size_t ntypes = 0;
    const char *format = NULL;
    og_flag flags[] = {{"--type", NULL, 1, 1, NULL, NULL, types, &ntypes}, {"--format", NULL, 1, 0, &format, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 2, 1);
    if (rc) return rc;
    if (a.actor) return og_cli_usage("export", "--as names the actor of a write; a read records none");
    int csv = format && !strcmp(format, "csv");
    if (a.json || (format && strcmp(format, "jsonl") && !csv))
        return og_cli_usage("export", "export writes the load format: JSON lines (--format jsonl) or CSV (--format csv); %s%s is not offered",
                            a.json ? "--json" : "--format ", a.json ? "" : format);
    if (csv && ntypes != 1) return og_cli_usage("export", "--format csv writes one type: give exactly one --type T");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    og_read_opts at = {a.branch, a.at};
    og_status st = csv ? og_db_export_csv(db, stdout, &at, types[0], ',') : og_db_export(db, stdout, &at, types, ntypes);
    og_db_close(db);
    return st ? og_cli_fail("export", st) : OG_EXIT_OK;
}

/* snapshot and schema show: open the graph, fetch one text, print it. */
typedef og_status (*text_getter)(char **out, og_db *db, const og_read_opts *at);

static int print_db_text(const char *verb, const char *help_text, int argc, char **argv, text_getter get)
{
    if (help(help_text, argc, argv)) return OG_EXIT_OK;
    og_graph_args a = {.verb = verb};
    int rc = og_graph_args_parse(&a, argc, argv, NULL, 0, 1);
    if (rc) return rc;
    if (a.actor) return og_cli_usage(verb, "--as names the actor of a write; a read records none");
    if (a.json) return og_cli_usage(verb, "takes no --json: it prints the schema source");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    og_read_opts at = {a.branch, a.at};
    char *text = NULL;
    og_status st = get(&text, db, &at);
    og_db_close(db);
    if (st) return og_cli_fail(verb, st);
    fputs(text, stdout);
    if (*text && text[strlen(text) - 1] != '\n') putchar('\n');
    og_free(text);
    return OG_EXIT_OK;
}

static const char *snapshot_help =
    "usage: omnigraph snapshot [--branch B | --at COMMIT] [--json | --format F] ROOT\n"
    "\n"
    "Prints the snapshot a read would see: the commit, and per type its table version and row\n"
    "count.\n"
    "  --json             the snapshot document: {\"commit\",\"branch\",\"schema\",\"tables\"} and the\n"
    "                     reference's {\"graph_branch\",\"graph_manifest_version\",\n"
    "                     \"internal_schema_version\",\"datasets\"} (the default output)\n"
    "  --format F         json, jsonl, csv or table (one record per type)\n" READ_HELP;

int og_cmd_snapshot(int argc, char **argv)
{
    if (help(snapshot_help, argc, argv)) return OG_EXIT_OK;
    og_graph_args a = {.verb = "snapshot"};
    const char *format = NULL;
    og_flag flags[] = {{"--format", NULL, 1, 0, &format, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 1, 1);
    if (rc) return rc;
    if (a.actor) return og_cli_usage("snapshot", "--as names the actor of a write; a read records none");
    og_cli_format fmt;
    if ((rc = og_cli_format_parse("snapshot", format, a.json, &fmt))) return rc;
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    og_read_opts at = {a.branch, a.at};
    char *text = NULL;
    og_status st = og_db_snapshot(&text, db, &at);
    if (st) {
        og_db_close(db);
        return og_cli_fail("snapshot", st);
    }
    json_t *j = json_loads(text, 0, NULL);
    og_free(text);
    json_int_t depth = og_cli_commit_depth(db, json_string_value(json_object_get(j, "commit")));
    og_db_close(db);
    if (!j) return OG_EXIT_FAIL;
    /* the reference's SnapshotOutput beside our own members */
    json_t *ds = json_array(), *t;
    size_t i;
    json_array_foreach(json_object_get(j, "tables"), i, t)
    {
        json_array_append_new(ds, json_pack("{s:O,s:O,s:O,s:O,s:n,s:O}", "entity_kind", json_object_get(t, "kind"),
                                            "type_name", json_object_get(t, "type"), "dataset_path", json_object_get(t, "table"),
                                            "published_dataset_version", json_object_get(t, "version"),
                                            "native_dataset_branch", "entity_count", json_object_get(t, "rows")));
    }
    json_t *b = json_object_get(j, "branch");
    json_object_set_new(j, "graph_branch", json_is_string(b) ? json_incref(b) : json_string(a.branch ? a.branch : "main"));
    json_object_set_new(j, "graph_manifest_version", json_integer(depth));
    json_object_set_new(j, "internal_schema_version", json_integer(og_storage_version()));
    json_object_set_new(j, "datasets", ds);
    static const char *cols[] = {"type", "kind", "table", "version", "rows"};
    og_cli_print_records(fmt == OG_CLI_TEXT ? OG_CLI_JSON : fmt, j, "tables", cols, 5);
    json_decref(j);
    return OG_EXIT_OK;
}

static const char *show_help =
    "usage: omnigraph schema show [--branch B | --at COMMIT] ROOT   (alias: schema get)\n\nPrints the graph's .pg schema source.\n" READ_HELP;

/* `schema show`, reached from cmd_schema.c. */
int og_cmd_schema_show(int argc, char **argv)
{
    return print_db_text("schema show", show_help, argc, argv, og_db_schema_source);
}

/* ---- schema plan / apply against a graph ------------------------------------------------------ */

static const char *apply_help =
    "usage: omnigraph schema apply --schema <new.pg> [--allow-data-loss] [--if-commit C] [--json] ROOT\n"
    "\n"
    "Plans the migration from the graph's schema to <new.pg> and applies it as ONE commit when\n"
    "every step is supported (add type, add nullable property, renames via @rename_from, extend\n"
    "enum, add index, metadata, drops).  Unsupported steps are listed with their [OG-XXX-NNN]\n"
    "codes and nothing is written.  The graph must have no branch other than main.\n"
    "  --allow-data-loss   make drops hard instead of soft: dropped columns are rewritten out\n"
    "                      of the data, and right after the commit the history of the affected\n"
    "                      tables is deleted (earlier commits can no longer read them)\n"
    "  --if-commit C       only if the branch head is commit C (exit 4 otherwise)\n"
    "  -m, --message TEXT  the commit's message (commit list / show print it)\n"
    "  --json              print {\"uri\",\"supported\",\"applied\",\"step_count\",\"steps\",\"actor_id\",\n"
    "                      \"commit\": {...} | null, \"plan\": {...}, \"reclaimed\": {...} | null}\n" COMMON_HELP;

int og_cmd_schema_graph(int argc, char **argv, int apply)
{
    const char *verb = apply ? "schema apply" : "schema plan";
    if (apply && help(apply_help, argc, argv)) return OG_EXIT_OK;
    og_graph_args a = {.verb = verb};
    const char *schema = NULL, *if_commit = NULL;
    int allow = 0;
    og_flag flags[] = {{"--schema", NULL, 1, 0, &schema, NULL, NULL, NULL},
                       {"--allow-data-loss", NULL, 0, 0, NULL, &allow, NULL, NULL},
                       {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 3, 1);
    if (rc) return rc;
    if (!apply && if_commit) return og_cli_usage(verb, "--if-commit is for schema apply");
    if (!schema) return og_cli_usage(verb, "--schema FILE is required");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_buf text = OG_BUF_INIT;
    if (og_cli_read_file(schema, &text) != OG_OK) return OG_EXIT_FAIL;
    if (apply) og_graph_args_echo(&a, root);
    og_db *db = og_graph_args_open(&a, root);
    if (!db) {
        og_buf_free(&text);
        return OG_EXIT_FAIL;
    }
    char *plan = NULL;
    og_receipt r;
    og_db_schema_apply_opts ao = {a.branch, if_commit, allow, a.json};
    og_status st = apply ? og_db_schema_apply_ex(&r, &plan, db, schema, (const char *)text.data, text.len, &ao)
                         : og_db_schema_plan(&plan, db, a.branch, schema, (const char *)text.data, text.len, a.json);
    og_buf_free(&text);
    if (st) {
        og_db_close(db);
        return og_cli_fail(verb, st);
    }
    /* a hard drop that published but could not reclaim everything: exit 0, say so */
    if (apply && r.reclaim_status) fprintf(stderr, "warning: %s\n", r.reclaim_error);
    /* exit 1 when the plan is not supported, like the offline form (docs/schema-language.md §7) */
    int unsupported = plan && (strstr(plan, "\"supported\":false") || !strncmp(plan, "supported: no", 13));
    if (apply && a.json) {
        /* the reference's SchemaApplyOutput, the commit as every write's, then ours */
        json_t *pj = plan ? json_loads(plan, 0, NULL) : NULL;
        json_t *steps = json_object_get(pj, "steps");
        json_t *o = json_object();
        json_object_set_new(o, "uri", json_string(root));
        json_object_set_new(o, "supported", json_true());
        json_object_set_new(o, "applied", json_boolean(r.published));
        json_object_set_new(o, "step_count", json_integer((json_int_t)json_array_size(steps)));
        json_t *cj = og_cli_commit_json(db, &r); /* the head's depth when nothing was published */
        json_object_set_new(o, "graph_manifest_version",
                            json_integer(json_is_object(cj) ? json_integer_value(json_object_get(cj, "graph_manifest_version"))
                                                            : og_cli_commit_depth(db, "main")));
        json_object_set_new(o, "steps", steps ? json_incref(steps) : json_array());
        json_object_set_new(o, "actor_id", a.actor ? json_string(a.actor) : json_null());
        json_object_set_new(o, "commit", cj);
        json_object_set_new(o, "plan", pj ? pj : json_null());
        if (allow && r.published)
            json_object_set_new(o, "reclaimed",
                                json_pack("{s:I,s:I,s:I,s:I,s:o}", "tables", (json_int_t)r.reclaimed_tables, "versions",
                                          (json_int_t)r.reclaimed_versions, "files", (json_int_t)r.reclaimed_files, "bytes",
                                          (json_int_t)r.reclaimed_bytes, "error",
                                          r.reclaim_status ? json_string(r.reclaim_error) : json_null()));
        else
            json_object_set_new(o, "reclaimed", json_null());
        char *js = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (js) printf("%s\n", js);
        free(js);
    } else if (!(apply && a.quiet && !unsupported)) { /* --quiet: a successful apply prints nothing */
        if (plan) fputs(plan, stdout);
        if (plan && *plan && plan[strlen(plan) - 1] != '\n') putchar('\n');
        if (apply && r.published) printf("applied as commit %s\n", r.commit);
        else if (apply) printf("no changes: nothing applied\n");
        if (apply && allow && r.published)
            printf("reclaimed %llu table(s): %llu version(s), %llu file(s), %llu bytes\n",
                   (unsigned long long)r.reclaimed_tables, (unsigned long long)r.reclaimed_versions,
                   (unsigned long long)r.reclaimed_files, (unsigned long long)r.reclaimed_bytes);
    }
    og_free(plan);
    og_db_close(db);
    return unsupported && !(apply && r.published) ? OG_EXIT_FAIL : OG_EXIT_OK;
}
