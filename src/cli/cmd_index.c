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
#include "cli/output.h"

static const char *index_help =
    "usage: omnigraph index build|status [--kind K] [--type T] [--property P] [--branch B] [--json | --format F] ROOT\n"
    "\n"
    "Persisted indexes are derived files beside the table data, one per data file and indexed\n"
    "property (docs/indexes.md).  They are never needed for a correct answer, only for a fast one.\n"
    "  build               write the missing (or damaged) index files of the branch head; loads\n"
    "                      and mutations never wait for it (no commit is made)\n"
    "  status              per indexed property and index type: data files covered / total\n"
    "  --kind K            one index kind (fts: full text of @index String properties)\n"
    "  --type T            one node or edge type (build needs --property with it); the old\n"
    "                      spelling `--type fts` of the index kind still works, with a warning\n"
    "  --property P        one property: `body` or `Doc.body`\n"
    "  --branch B          the branch (default main)\n"
    "  --json              print the report as JSON\n"
    "  --format F          json (= --json), jsonl, csv or table: one record per index (type,\n"
    "                      property, kind, version, covered, files, built)\n"
    "  --store ROOT        the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --quiet             no target echo, no summary line of a write\n";

/* Whether the branch head's schema has a node or edge type `name` (its snapshot lists one
 * table per type). */
static int graph_has_type(og_db *db, const char *branch, const char *name)
{
    char *snap = NULL;
    og_read_opts at = {branch, NULL};
    if (og_db_snapshot(&snap, db, &at)) return 0;
    json_t *j = json_loads(snap, 0, NULL);
    og_free(snap);
    int hit = 0;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(j, "tables"), i, t) {
        const char *ty = json_string_value(json_object_get(t, "type"));
        if (ty && !strcmp(ty, name)) hit = 1;
    }
    json_decref(j);
    return hit;
}

/* The report with only type `name`'s indexes (the totals recounted over them). */
static char *filter_report(const char *text, const char *name)
{
    json_t *j = json_loads(text, 0, NULL);
    json_t *keep = json_array();
    json_int_t files = 0, covered = 0;
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(j, "indexes"), i, o) {
        const char *ty = json_string_value(json_object_get(o, "type"));
        if (!ty || strcmp(ty, name)) continue;
        json_array_append(keep, o);
        files += json_integer_value(json_object_get(o, "files"));
        covered += json_integer_value(json_object_get(o, "covered"));
    }
    json_object_set_new(j, "indexes", keep);
    if (json_object_get(j, "files")) json_object_set_new(j, "files", json_integer(files));
    if (json_object_get(j, "covered")) json_object_set_new(j, "covered", json_integer(covered));
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s; /* free() */
}

static void print_report(const char *verb, const char *text, int fmt)
{
    if (fmt == OG_CLI_JSON) {
        printf("%s\n", text);
        return;
    }
    json_t *r = json_loads(text, 0, NULL);
    if (!r) {
        printf("%s\n", text);
        return;
    }
    if (fmt != OG_CLI_TEXT) {
        static const char *cols[] = {"type", "property", "kind", "version", "covered", "files", "built"};
        og_cli_print_records(fmt, r, "indexes", cols, 7);
        json_decref(r);
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
    const char *type = NULL, *prop = NULL, *format = NULL, *kind = NULL;
    og_flag flags[] = {{"--type", NULL, 1, 0, &type, NULL, NULL, NULL},
                       {"--property", NULL, 1, 0, &prop, NULL, NULL, NULL},
                       {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
                       {"--kind", NULL, 1, 0, &kind, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, flags, 4, 1);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse(a.verb, format, a.json, &fmt))) return rc;
    if (a.at) return og_cli_usage("index", "--at is for reads; indexes are built for a branch head");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    if (build) og_graph_args_echo(&a, root); /* writes echo their target; status is a read */
    if (!build && a.actor) return og_cli_usage(a.verb, "--as names the actor of a write; a read records none");
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    /* --type is a node or edge type everywhere; `--type fts` was this verb's old spelling of
     * the index kind, kept working with a warning */
    char qualified[512];
    const char *filter_type = NULL;
    if (type) {
        int is_type = graph_has_type(db, a.branch, type);
        if (!is_type && !kind) {
            fprintf(stderr, "omnigraph %s: warning: `--type %s` names an index kind; use `--kind %s` (--type is a "
                            "node or edge type)\n", a.verb, type, type);
            kind = type;
        } else if (!is_type) {
            og_db_close(db);
            return og_cli_usage(a.verb, "--type %s: the graph has no node or edge type of that name", type);
        } else if (prop && strchr(prop, '.')) {
            if (strncmp(prop, type, strlen(type)) || prop[strlen(type)] != '.') {
                og_db_close(db);
                return og_cli_usage(a.verb, "--property %s is not a property of --type %s", prop, type);
            }
        } else if (prop) {
            snprintf(qualified, sizeof qualified, "%s.%s", type, prop);
            prop = qualified;
        } else if (build) {
            og_db_close(db);
            return og_cli_usage(a.verb, "index build --type %s needs --property P too (or no --type: every missing "
                                        "index file of the head)", type);
        } else {
            filter_type = type;
        }
    }
    char *out = NULL;
    og_status st = build ? og_db_index_build(&out, db, a.branch, kind, prop)
                         : og_db_index_status(&out, db, a.branch, kind, prop);
    og_db_close(db);
    if (st) return og_cli_fail(a.verb, st);
    char *filtered = filter_type ? filter_report(out, filter_type) : NULL;
    if (!(build && a.quiet && fmt == OG_CLI_TEXT))
        print_report(build ? "built" : "indexes of", filtered ? filtered : out, fmt);
    free(filtered);
    og_free(out);
    return OG_EXIT_OK;
}
