/*
 * cmd_changes.c — `omnigraph changes --from C1 --to C2` (reference-storage.md §6): row-level
 * changes between two commits, per type, over the public API; also the filter and printing
 * shared with `commit changes` (cmd_commit.c).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/graph_args.h"

static const char *changes_help =
    "usage: omnigraph changes --from C1 --to C2 [--type T]... [--op insert|update|delete]... [--json] ROOT\n"
    "\n"
    "Row-level changes from commit C1 to commit C2 (same schema): per type the inserted,\n"
    "updated (before and after image) and deleted rows by id.  Only table fragments that\n"
    "differ between the two commits are read.\n"
    "  --from C1, --to C2  the commits (required)\n"
    "  --type T            only this node or edge type (repeatable)\n"
    "  --op OP             only this operation (repeatable)\n"
    "  --store ROOT        the graph (or $OMNIGRAPH_STORE)\n"
    "  --json              the full change set as JSON (images included)\n";

int og_cli_parse_ops(const char *verb, const char *const *ops, size_t nops, unsigned *out)
{
    *out = 0;
    for (size_t i = 0; i < nops; i++) {
        if (!strcmp(ops[i], "insert")) *out |= OG_CHANGES_INSERT;
        else if (!strcmp(ops[i], "update")) *out |= OG_CHANGES_UPDATE;
        else if (!strcmp(ops[i], "delete")) *out |= OG_CHANGES_DELETE;
        else return og_cli_usage(verb, "--op must be insert, update or delete (got '%s')", ops[i]);
    }
    return 0;
}

void og_cli_print_changes(const char *text, int json)
{
    if (json) {
        fputs(text, stdout);
        if (*text && text[strlen(text) - 1] != '\n') putchar('\n');
        return;
    }
    json_t *j = json_loads(text, 0, NULL);
    json_t *arr = json_object_get(j, "changes"), *stats = json_object_get(j, "stats");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *c = json_array_get(arr, i);
        printf("%-6s %s %s\n", json_string_value(json_object_get(c, "op")), json_string_value(json_object_get(c, "type")),
               json_string_value(json_object_get(c, "id")));
    }
    printf("%lld inserted, %lld updated, %lld deleted\n", (long long)json_integer_value(json_object_get(stats, "inserted")),
           (long long)json_integer_value(json_object_get(stats, "updated")),
           (long long)json_integer_value(json_object_get(stats, "deleted")));
    json_decref(j);
}

int og_cmd_changes(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(changes_help, stdout);
        return OG_EXIT_OK;
    }
    og_graph_args a = {.verb = "changes"};
    const char *from = NULL, *to = NULL;
    const char *types[64], *ops[64];
    size_t ntypes = 0, nops = 0;
    og_flag flags[] = {
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--to", NULL, 1, 0, &to, NULL, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--op", NULL, 1, 1, NULL, NULL, ops, &nops},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, 4, 1);
    if (rc) return rc;
    if (!from || !to) return og_cli_usage("changes", "--from C1 and --to C2 are required");
    og_changes_opts o = {from, to, ntypes ? types : NULL, ntypes, 0};
    if ((rc = og_cli_parse_ops("changes", ops, nops, &o.ops))) return rc;
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    char *text = NULL;
    og_status st = og_db_changes(&text, db, &o);
    og_db_close(db);
    if (st) return og_cli_fail("changes", st);
    og_cli_print_changes(text, a.json);
    og_free(text);
    return OG_EXIT_OK;
}
