/*
 * cmd_index.c — persisted property indexes over the public API (docs/indexes.md):
 *   omnigraph index build  [--type T] [--property P] [--branch B] [--json] ROOT
 *   omnigraph index status [--type T] [--property P] [--branch B] [--json] ROOT
 * Kept apart from cmd_maint.c: an index build writes derived files only, never a commit.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/graph_args.h"

static const char *index_help =
    "usage: omnigraph index build|status [--type T] [--property P] [--branch B] [--json] ROOT\n"
    "\n"
    "Persisted indexes are derived files beside the table data, one per data file and indexed\n"
    "property (docs/indexes.md).  They are never needed for a correct answer, only for a fast one.\n"
    "  build               write the missing (or damaged) index files of the branch head; loads\n"
    "                      and mutations never wait for it (no commit is made)\n"
    "  status              per indexed property and index type: data files covered / total\n"
    "  --type T            one index type (fts: full text of @index String properties)\n"
    "  --property P        one property: `body` or `Doc.body`\n"
    "  --branch B          the branch (default main)\n"
    "  --json              print the report as JSON\n"
    "  --store ROOT        the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --quiet             no target echo on stderr\n";

static void print_report(const char *verb, const char *text, int json)
{
    if (json) {
        printf("%s\n", text);
        return;
    }
    json_t *r = json_loads(text, 0, NULL);
    if (!r) {
        printf("%s\n", text);
        return;
    }
    json_t *list = json_object_get(r, "indexes");
    printf("%s %s at %s\n", verb, json_string_value(json_object_get(r, "branch")),
           json_string_value(json_object_get(r, "commit")));
    if (!json_array_size(list)) printf("  no indexed property has an index type\n");
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        char name[256];
        snprintf(name, sizeof name, "%s.%s", json_string_value(json_object_get(o, "type")),
                 json_string_value(json_object_get(o, "property")));
        printf("  %-28s %-7s v%-5lld %lld/%lld files covered", name, json_string_value(json_object_get(o, "kind")),
               (long long)json_integer_value(json_object_get(o, "version")),
               (long long)json_integer_value(json_object_get(o, "covered")),
               (long long)json_integer_value(json_object_get(o, "files")));
        if (json_integer_value(json_object_get(o, "built")))
            printf(" (%lld built)", (long long)json_integer_value(json_object_get(o, "built")));
        printf("\n");
    }
    json_decref(r);
}

int og_cmd_index(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv) || argc < 2) {
        fputs(index_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    const char *sub = argv[1];
    int build = !strcmp(sub, "build");
    if (!build && strcmp(sub, "status") != 0) return og_cli_usage("index", "expected `build` or `status`");
    og_graph_args a = {.verb = build ? "index build" : "index status"};
    const char *type = NULL, *prop = NULL;
    og_flag flags[] = {{"--type", NULL, 1, 0, &type, NULL, NULL, NULL},
                       {"--property", NULL, 1, 0, &prop, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, flags, 2, 1);
    if (rc) return rc;
    if (a.at) return og_cli_usage("index", "--at is for reads; indexes are built for a branch head");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    if (build) og_graph_args_echo(&a, root); /* writes echo their target; status is a read */
    if (!build && a.actor) return og_cli_usage(a.verb, "--as names the actor of a write; a read records none");
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    char *out = NULL;
    og_status st = build ? og_db_index_build(&out, db, a.branch, type, prop)
                         : og_db_index_status(&out, db, a.branch, type, prop);
    og_db_close(db);
    if (st) return og_cli_fail(a.verb, st);
    print_report(build ? "built" : "indexes of", out, a.json);
    og_free(out);
    return OG_EXIT_OK;
}
