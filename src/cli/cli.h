/*
 * cli.h — shared declarations of the `omnigraph` command-line tool.
 *
 * Each verb lives in its own file src/cli/cmd_<verb>.c and exposes one entry point
 *     int og_cmd_<verb>(int argc, char **argv);   (argv[0] is the verb itself)
 * returning the process exit status.  To add a verb: write cmd_<verb>.c, declare its entry
 * point below, and add one line to the dispatch table in main.c.
 *
 * Exit statuses: 0 success; 1 the input was checked and is invalid (or the operation
 * failed); 2 usage error (bad arguments).
 */
#ifndef OG_CLI_CLI_H
#define OG_CLI_CLI_H

#include <stddef.h>

#include "omnigraph.h"
#include "util/buf.h"

#define OG_EXIT_OK 0
#define OG_EXIT_FAIL 1
#define OG_EXIT_USAGE 2

typedef struct og_cli_cmd {
    const char *name;    /* the verb: "schema" */
    const char *summary; /* one line for `omnigraph --help` */
    int (*run)(int argc, char **argv);
} og_cli_cmd;

/* ---- verbs ---- */
int og_cmd_schema(int argc, char **argv);
int og_cmd_version(int argc, char **argv);
int og_cmd_lint(int argc, char **argv);   /* cmd_lint.c (query language) */
int og_cmd_analyze(int argc, char **argv); /* cmd_analyze.c (text analyzer) */
int og_cmd_policy(int argc, char **argv); /* cmd_policy.c (policy bundles, offline) */
/* cmd_graph.c: the graph verbs over the public API */
int og_cmd_init(int argc, char **argv);
int og_cmd_load(int argc, char **argv);
int og_cmd_query(int argc, char **argv);
int og_cmd_mutate(int argc, char **argv);
int og_cmd_export(int argc, char **argv);
int og_cmd_snapshot(int argc, char **argv);
int og_cmd_schema_show(int argc, char **argv);
/* `schema plan ... ROOT` (apply = 0) and `schema apply ... ROOT` (apply = 1) against a graph */
int og_cmd_schema_graph(int argc, char **argv, int apply);
/* versioning verbs: cmd_branch.c, cmd_commit.c, cmd_changes.c (docs/versioning.md) */
int og_cmd_branch(int argc, char **argv);
int og_cmd_commit(int argc, char **argv);
int og_cmd_changes(int argc, char **argv);
int og_cmd_embed(int argc, char **argv); /* cmd_embed.c (docs/embeddings.md) */
int og_cmd_blob(int argc, char **argv);  /* cmd_blob.c: blob get|stat */
/* cmd_maint.c: maintenance (docs/maintenance.md) */
int og_cmd_optimize(int argc, char **argv);
int og_cmd_cleanup(int argc, char **argv);
/* "500ms", "90" (seconds), "30s", "15m", "2h", "7d", "1w" -> ms; -1 when malformed (cmd_maint.c). */
int64_t og_cli_duration_ms(const char *s);
/* "1048576", "512K", "64M", "2G" -> bytes; -1 when malformed (cmd_maint.c). */
int64_t og_cli_size_bytes(const char *s);
int og_cmd_index(int argc, char **argv); /* cmd_index.c (docs/indexes.md) */
/* cmd_test.c: .gqt logic-test runner (docs/testing.md) */
int og_cmd_test(int argc, char **argv);
/* cmd_changes.c, shared with `commit changes`: --op values to OG_CHANGES_* bits (usage error
 * printed and OG_EXIT_USAGE returned on a bad one), and printing a change set text. */
int og_cli_parse_ops(const char *verb, const char *const *ops, size_t nops, unsigned *out);
void og_cli_print_changes(const char *text, int format); /* format: og_cli_format (output.h) */

/* cmd_branch.c, shared with the served merge: --strategy values into *mo (a usage error
 * printed and OG_EXIT_USAGE returned on a bad one), and the "  settled KIND (SIDE): …" lines
 * of a merge document's "resolved" list. */
int og_cli_parse_strategies(const char *verb, const char *const *specs, size_t n, og_db_merge_strategy *mo);
struct json_t;
void og_cli_print_resolved(struct json_t *merge_doc);

/* cmd_cluster.c: cluster as code and stored queries (docs/cluster.md); cmd_mcp.c: MCP over stdio */
int og_cmd_cluster(int argc, char **argv);
int og_cmd_queries(int argc, char **argv);
int og_cmd_mcp(int argc, char **argv);

/* cmd_shell.c: `omnigraph shell`, the interactive session of src/shell/ (docs/shell.md) */
int og_cmd_shell(int argc, char **argv);

/* ---- helpers (main.c) ---- */
/* Reads a whole file into out (NUL-terminated via og_buf_cstr).  On failure prints
 * "omnigraph: cannot read <path>: <reason>" to stderr and returns the status. */
og_status og_cli_read_file(const char *path, og_buf *out);
/* 1 when argv[1..argc) contains -h or --help. */
int og_cli_wants_help(int argc, char **argv);
/* Prints "omnigraph <verb>: <message>" and a pointer to --help to stderr; returns OG_EXIT_USAGE. */
int og_cli_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes bytes to stdout. */
void og_cli_out(const og_buf *b);

#endif
