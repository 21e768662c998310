/*
 * cmd_embed.c — `omnigraph embed`: fill, replace or remove @embed vectors, either on a graph
 * branch (one commit through og_db_embed) or offline from NDJSON to NDJSON (og_embed_file,
 * the reference's --input/--output/--spec pipeline).  docs/embeddings.md.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/graph_args.h"

static const char *embed_help =
    "usage: omnigraph embed [--reembed-all | --clean] [--type T]... [--select Type:field=value]...\n"
    "                       [--branch B] [--if-commit C] [--json] [--progress] [--no-cache] --store ROOT\n"
    "       omnigraph embed --input F --output F --spec F [--reembed-all | --clean] [--type T]...\n"
    "                       [--select Type:field=value]... [--json] [--progress] [--no-cache]\n"
    "\n"
    "Computes the vectors of @embed(\"source\") properties from their source property with the\n"
    "embedding provider of the environment (OMNIGRAPH_EMBED_PROVIDER, OMNIGRAPH_EMBED_BASE_URL,\n"
    "OMNIGRAPH_EMBED_MODEL, the provider's API key; see docs/embeddings.md).\n"
    "On a graph it writes ONE commit (a merge of the changed rows); with --input it reads and\n"
    "writes NDJSON files and touches no graph.  A rerun after a failure embeds only what is\n"
    "still missing (finished vectors are kept in the embedding cache).\n"
    "  (default)           fill missing vectors of the selected records\n"
    "  --reembed-all       replace the vectors of the selected records\n"
    "  --clean             remove the vectors of the selected records\n"
    "  --type T            only node type T (repeatable)\n"
    "  --select T:f=v      only records of T whose property f equals v (repeatable: any of them)\n"
    "  --branch B          the branch to embed (default main)\n"
    "  --if-commit C       only if the branch head is commit C (exit 4 otherwise)\n"
    "  --input F, --output F, --spec F   the offline file pipeline; the spec is\n"
    "                      {\"dimension\":N,\"types\":{\"T\":{\"target\":\"vec\",\"fields\":[\"src\"]}}}\n"
    "  --json              print the summary as JSON\n"
    "  --progress          progress lines on stderr\n"
    "  --no-cache          neither read nor fill the embedding cache\n"
    "  --store ROOT        the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --as ACTOR          actor recorded on the commit\n"
    "  --quiet             no target echo on stderr\n";

static void print_summary(const char *text, int json)
{
    if (json) {
        fputs(text, stdout);
        putchar('\n');
        return;
    }
    json_t *j = json_loads(text, 0, NULL);
    printf("%s: %lld records, %lld selected, %lld embedded, %lld cleaned (%s, %s %s)",
           json_string_value(json_object_get(j, "mode")), (long long)json_integer_value(json_object_get(j, "records")),
           (long long)json_integer_value(json_object_get(j, "selected_records")),
           (long long)json_integer_value(json_object_get(j, "embedded_records")),
           (long long)json_integer_value(json_object_get(j, "cleaned_records")),
           json_string_value(json_object_get(j, "provider")), "model", json_string_value(json_object_get(j, "model")));
    json_t *c = json_object_get(j, "commit"), *o = json_object_get(j, "output");
    if (json_is_string(c))
        printf("; commit %s on %s", json_string_value(c), json_string_value(json_object_get(j, "branch")));
    else if (json_object_get(j, "branch"))
        printf("; nothing changed, no commit");
    else if (json_is_string(o))
        printf("; wrote %s", json_string_value(o));
    putchar('\n');
    json_decref(j);
}

int og_cmd_embed(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(embed_help, stdout);
        return OG_EXIT_OK;
    }
    og_graph_args a = {.verb = "embed"};
    const char *input = NULL, *output = NULL, *spec = NULL, *seed = NULL, *if_commit = NULL;
    int reembed = 0, clean = 0, progress = 0, no_cache = 0;
    const char *types[64], *selects[64];
    size_t ntypes = 0, nselects = 0;
    og_flag flags[] = {
        {"--input", NULL, 1, 0, &input, NULL, NULL, NULL},
        {"--output", NULL, 1, 0, &output, NULL, NULL, NULL},
        {"--spec", NULL, 1, 0, &spec, NULL, NULL, NULL},
        {"--seed", NULL, 1, 0, &seed, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--reembed-all", NULL, 0, 0, NULL, &reembed, NULL, NULL},
        {"--clean", NULL, 0, 0, NULL, &clean, NULL, NULL},
        {"--progress", NULL, 0, 0, NULL, &progress, NULL, NULL},
        {"--no-cache", NULL, 0, 0, NULL, &no_cache, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--select", NULL, 1, 1, NULL, NULL, selects, &nselects},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, sizeof flags / sizeof flags[0], 1);
    if (rc) return rc;
    if (seed) return og_cli_usage("embed", "--seed manifests are not supported by this build; use --input, --output and --spec");
    if (reembed && clean) return og_cli_usage("embed", "--reembed-all and --clean exclude each other");
    og_db_embed_opts o = {reembed ? OG_DB_EMBED_REEMBED_ALL : clean ? OG_DB_EMBED_CLEAN : OG_DB_EMBED_FILL_MISSING,
                          types, ntypes, selects, nselects, a.branch, if_commit, progress, no_cache};
    char *summary = NULL;
    og_status st;
    if (input || output || spec) {
        if (!input || !output || !spec) return og_cli_usage("embed", "--input, --output and --spec go together");
        if (a.store || a.npositional || a.branch || if_commit)
            return og_cli_usage("embed", "the file pipeline (--input) takes no graph, --branch or --if-commit");
        st = og_embed_file(&summary, input, output, spec, &o);
    } else {
        const char *root = og_graph_args_root(&a);
        if (!root) return OG_EXIT_USAGE;
        og_graph_args_echo(&a, root);
        og_db *db = og_graph_args_open(&a, root);
        if (!db) return OG_EXIT_FAIL;
        og_receipt r;
        st = og_db_embed(&summary, &r, db, &o);
        og_db_close(db);
    }
    if (st) return og_cli_fail("embed", st);
    print_summary(summary, a.json);
    og_free(summary);
    return OG_EXIT_OK;
}
