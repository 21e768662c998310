/*
 * graph_args.h — the flags the graph verbs share (reference-surfaces.md §1.1–§1.2):
 * `--store ROOT` or a positional ROOT, `--branch B`, `--at COMMIT` (alias `--snapshot`),
 * `--json`, `--as ACTOR`, `--quiet`.  Verb-specific flags are recognised by the verb's own
 * table and handed back through og_graph_args.extra.
 */
#ifndef OG_CLI_GRAPH_ARGS_H
#define OG_CLI_GRAPH_ARGS_H

#include <jansson.h>

#include "omnigraph.h"

#define OG_EXIT_PRECONDITION 4

typedef struct og_flag {
    const char *name;   /* "--data" */
    const char *alias;  /* "-e" or NULL */
    int takes_value;
    int repeatable;
    const char **value; /* set for a value flag (the last one given) */
    int *seen;          /* set for a switch */
    const char **many;  /* repeatable: array of at least 64 entries */
    size_t *nmany;
} og_flag;

typedef struct og_graph_args {
    const char *verb;
    const char *store;
    const char *branch;
    const char *at;
    const char *actor;
    int json;
    int quiet;
    int format;        /* og_cli_format (output.h) of a verb that takes --format; 0 = its text */
    const char *positional[6];
    size_t npositional;
    const char *message; /* -m / --message: the commit message of a write verb */
} og_graph_args;

/* Parses argv[1..argc) against the common flags and `flags` (may be NULL).  Returns 0, or
 * prints a usage error and returns OG_EXIT_USAGE. */
int og_graph_args_parse(og_graph_args *a, int argc, char **argv, og_flag *flags, size_t nflags,
                        size_t max_positional);

/* The graph root: --store, else the first positional (which is then consumed), else
 * $OMNIGRAPH_STORE.  NULL (with a usage message printed) when none. */
const char *og_graph_args_root(og_graph_args *a);

/* Opens the graph at the root; prints the error and returns NULL on failure. */
og_db *og_graph_args_open(og_graph_args *a, const char *root);

/* Prints "omnigraph <verb>: <status>: <message>" to stderr; returns the exit code for st
 * (OG_EXIT_PRECONDITION for a lost --if-commit, else 1). */
int og_cli_fail(const char *verb, og_status st);
/* `--set NAME=VALUE` values checked as the text's `set` lines are (og_settings_check): 0, or
 * the usage exit after saying which one is wrong.  Embedded and served verbs share it. */
int og_cli_check_sets(const char *verb, const char *const *sets, size_t n);

/* A lost --if-commit under --json: the structured body on stdout, served and embedded alike
 * (the server's 412 body, docs/server.md "Errors"):
 * {"error": "branch 'B' head is not E", "precondition_failure": {"expected": E, "actual": A}}
 * (A null when the branch does not exist).  og_cli_print_precondition reads A from db. */
void og_cli_print_precondition_body(const char *branch, const char *expected, const char *actual);
void og_cli_print_precondition(og_db *db, const char *branch, const char *expected);

/* "omnigraph <verb> -> <root> (direct, local|remote)" on stderr unless --quiet. */
void og_graph_args_echo(const og_graph_args *a, const char *root);

/* What a write's result document names besides the receipt (fields may be NULL). */
typedef struct og_cli_write_info {
    const char *data_path;   /* load: the NDJSON file (its types are counted) */
    const char *mode;        /* load: overwrite | append | merge */
    const char *from;        /* load: the --from base */
    int branch_created;      /* load: the branch was forked by this write */
    const char *query_name;  /* mutate */
    const og_load_csv_file *csv; /* load --csv: its files (their rows are counted per type) */
    size_t ncsv;
    char csv_delimiter;
} og_cli_write_info;

/* The reference's CommitOutput of a published write: {"graph_commit_id","graph_branch",
 * "graph_manifest_version","parent_commit_id","merged_parent_commit_id","actor_id",
 * "created_at" (epoch microseconds)} plus our "attempts"; json null when nothing was
 * published. */
json_t *og_cli_commit_json(og_db *db, const og_receipt *r);

/* The reference's CommitOutput of any commit (the members above; "parent_commit_id" and
 * the rest null when the commit cannot be read).  `branch` may be NULL. */
json_t *og_cli_commit_output(og_db *db, const char *commit, const char *branch);

/* The reference's graph_manifest_version of a commit: its first-parent depth (1 for the
 * genesis commit; og_db_commit_show's "depth"); 0 when it cannot be read. */
json_int_t og_cli_commit_depth(og_db *db, const char *commit);

/* Adds the reference's CommitOutput members to c, a commit document of og_db_commit_list /
 * og_db_commit_show, beside its own: "created_at" becomes epoch microseconds and the ISO 8601
 * text moves to "created_at_utc"; "graph_manifest_version" is c's "depth" (else `version`). */
void og_cli_commit_add_reference(json_t *c, const char *branch, json_int_t version);

/* Prints a write receipt: --json / --format as the reference's result document (load:
 * {"branch","base_branch","branch_created","mode","nodes","edges","total_entities","actor_id",
 * "commit",...}; mutate: {"query_name","branch","affected_nodes","affected_edges","actor_id",
 * "commit"}) plus our counters; else one line. */
void og_cli_print_receipt(const og_graph_args *a, og_db *db, const og_receipt *r, int load, const og_cli_write_info *w);

#endif
