/*
 * cmd_commit.c — `omnigraph commit list|show|changes` (reference-storage.md §2 and §6) over
 * the public versioning API: first-parent history newest first, one commit with its table
 * versions, and one commit's changes against its first parent.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/graph_args.h"

static const char *commit_help =
    "usage: omnigraph commit list [--branch B] [--limit N] [--json] ROOT\n"
    "       omnigraph commit show ID [--json] ROOT\n"
    "       omnigraph commit changes ID [--type T]... [--op OP]... [--json] ROOT\n"
    "\n"
    "list: the branch's first-parent history, newest first (a branch shows the history it\n"
    "inherited, then its own commits).  show: one commit and the table versions it names.\n"
    "changes: the rows the commit changed against its first parent (a merge commit is diffed\n"
    "against the target's previous head).\n"
    "  --branch B         the branch to list (default main)\n"
    "  --limit N          at most N commits\n"
    "  --type T, --op OP  filters of commit changes (repeatable)\n"
    "  --store ROOT       the graph (or $OMNIGRAPH_STORE)\n"
    "  --json             JSON output\n";

static void print_text(const char *text)
{
    fputs(text, stdout);
    if (*text && text[strlen(text) - 1] != '\n') putchar('\n');
}

static void print_commit_line(json_t *c)
{
    json_t *parents = json_object_get(c, "parents");
    printf("%s %s %-8s %s%s\n", json_string_value(json_object_get(c, "id")),
           json_string_value(json_object_get(c, "created_at")),
           json_is_string(json_object_get(c, "kind")) ? json_string_value(json_object_get(c, "kind")) : "?",
           json_string_value(json_object_get(c, "actor")), json_array_size(parents) > 1 ? " (merge)" : "");
}

int og_cmd_commit(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv) || argc < 2) {
        fputs(commit_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    const char *sub = argv[1];
    char verb[32];
    snprintf(verb, sizeof verb, "commit %s", sub);
    int is_list = !strcmp(sub, "list"), is_show = !strcmp(sub, "show"), is_changes = !strcmp(sub, "changes");
    if (!is_list && !is_show && !is_changes)
        return og_cli_usage("commit", "unknown subcommand '%s' (list, show, changes)", sub);
    og_graph_args a = {.verb = verb};
    const char *limit_s = NULL;
    const char *types[64], *ops[64];
    size_t ntypes = 0, nops = 0;
    og_flag list_flags[] = {{"--limit", NULL, 1, 0, &limit_s, NULL, NULL, NULL}};
    og_flag change_flags[] = {
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--op", NULL, 1, 1, NULL, NULL, ops, &nops},
    };
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, is_list ? list_flags : is_changes ? change_flags : NULL,
                                 is_list ? 1 : is_changes ? 2 : 0, is_list ? 1 : 2);
    if (rc) return rc;
    if (a.at) return og_cli_usage(verb, "--at does not apply here");
    if (!is_list && a.branch) return og_cli_usage(verb, "--branch applies to commit list only");
    size_t limit = 0;
    if (limit_s) {
        char *end;
        long long v = strtoll(limit_s, &end, 10);
        if (*limit_s == '\0' || *end || v <= 0) return og_cli_usage(verb, "--limit must be a positive integer");
        limit = (size_t)v;
    }
    unsigned opbits = 0;
    if ((rc = og_cli_parse_ops(verb, ops, nops, &opbits))) return rc;
    const char *id = NULL;
    if (!is_list) {
        if (!a.npositional) return og_cli_usage(verb, "a commit id is required");
        id = a.positional[0];
        memmove(a.positional, a.positional + 1, (a.npositional - 1) * sizeof a.positional[0]);
        a.npositional--;
    }
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    char *text = NULL;
    og_status st;
    if (is_list) {
        st = og_db_commit_list(&text, db, a.branch, limit);
    } else if (is_show) {
        st = og_db_commit_show(&text, db, id);
    } else {
        og_changes_opts f = {NULL, NULL, ntypes ? types : NULL, ntypes, opbits};
        st = og_db_commit_changes(&text, db, id, &f);
    }
    og_db_close(db);
    if (st) return og_cli_fail(verb, st);
    if (is_changes) {
        og_cli_print_changes(text, a.json);
    } else if (a.json) {
        print_text(text);
    } else {
        json_t *j = json_loads(text, 0, NULL);
        if (is_list) {
            json_t *arr = json_object_get(j, "commits");
            for (size_t i = 0; i < json_array_size(arr); i++) print_commit_line(json_array_get(arr, i));
        } else {
            print_commit_line(j);
            json_t *tables = json_object_get(j, "tables");
            for (size_t i = 0; i < json_array_size(tables); i++) {
                json_t *t = json_array_get(tables, i);
                printf("  %s %s v%lld (%lld rows)\n", json_string_value(json_object_get(t, "kind")),
                       json_string_value(json_object_get(t, "type")), (long long)json_integer_value(json_object_get(t, "version")),
                       (long long)json_integer_value(json_object_get(t, "rows")));
            }
        }
        json_decref(j);
    }
    og_free(text);
    return OG_EXIT_OK;
}
