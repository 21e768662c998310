/*
 * cmd_mcp.c — `omnigraph mcp`: one graph served to a local agent over the Model Context
 * Protocol's stdio transport (newline-delimited JSON-RPC on stdin/stdout; logs on stderr).
 * The protocol itself is src/mcp/ (transport-neutral); this file only frames lines.  The
 * notifications a tool call sends (progress, log messages) are lines of their own, written and
 * flushed as they happen, before the call's response line; the log level set by
 * logging/setLevel holds for the process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cluster/cluster.h"
#include "cluster/stored.h"
#include "mcp/mcp.h"

static const char *mcp_help =
    "usage: omnigraph mcp (--store ROOT | ROOT) [--queries FILE.gq]... [--as ACTOR]\n"
    "       omnigraph mcp --cluster DIR [--graph ID] [--as ACTOR [--policy]]\n"
    "\n"
    "Serves one graph over the Model Context Protocol on stdin/stdout (newline-delimited\n"
    "JSON-RPC 2.0), for an agent started by this process's parent (docs/mcp.md).  Tools: the\n"
    "operational set (query, mutate, load, branches, commits, snapshot, schema) and one tool per\n"
    "stored query: the applied stored queries of the cluster graph, or the queries of the\n"
    "--queries files (type-checked against the graph's schema at start).\n"
    "  --store ROOT       the graph (or $OMNIGRAPH_STORE)\n"
    "  --cluster DIR      a cluster directory or storage root; --graph picks the graph\n"
    "  --queries FILE     expose the queries of a .gq file as tools (repeatable)\n"
    "  --as ACTOR         recorded on every commit the agent's writes publish\n"
    "  --policy           enforce the policy bundle bound to the cluster graph for ACTOR: the\n"
    "                     agent sees and may call only what the policy allows ACTOR\n";

/* og_mcp_opts.notify: one line on stdout, flushed at once so the agent sees it live. */
static void notify_line(void *ctx, const char *json)
{
    FILE *out = ctx;
    fputs(json, out);
    fputc('\n', out);
    fflush(out);
}

int og_cmd_mcp(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(mcp_help, stdout);
        return OG_EXIT_OK;
    }
    const char *store = NULL, *root = NULL, *cluster = NULL, *graph = NULL, *actor = NULL;
    const char *files[64];
    size_t nfiles = 0;
    int use_policy = 0;
    og_mcp_policy *pol = NULL;
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--store") && store) || (!strcmp(argv[i], "--cluster") && cluster) ||
            (!strcmp(argv[i], "--graph") && graph) || (!strcmp(argv[i], "--as") && actor))
            return og_cli_usage("mcp", "%s given twice", argv[i]);
        if (!strcmp(argv[i], "--store") && i + 1 < argc) store = argv[++i];
        else if (!strcmp(argv[i], "--cluster") && i + 1 < argc) cluster = argv[++i];
        else if (!strcmp(argv[i], "--graph") && i + 1 < argc) graph = argv[++i];
        else if (!strcmp(argv[i], "--as") && i + 1 < argc) actor = argv[++i];
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc && nfiles < 64) files[nfiles++] = argv[++i];
        else if (!strcmp(argv[i], "--policy")) use_policy = 1;
        else if (argv[i][0] != '-' && !root) root = argv[i]; /* a positional ROOT, as on the graph verbs */
        else if (argv[i][0] != '-') return og_cli_usage("mcp", "unexpected argument '%s'", argv[i]);
        else return og_cli_usage("mcp", "unknown or incomplete option '%s'", argv[i]);
    }
    if (root && (store || cluster))
        return og_cli_usage("mcp", "two graphs given: %s %s and %s", store ? "--store" : "--cluster", store ? store : cluster, root);
    if (root) store = root;
    if (!store && !cluster) store = getenv("OMNIGRAPH_STORE");
    if (store && !*store) store = NULL;
    if (use_policy && !actor) return og_cli_usage("mcp", "--policy needs --as ACTOR (the actor the policy decides for)");
    if (use_policy && !cluster) return og_cli_usage("mcp", "--policy needs --cluster (a graph with a bound policy bundle)");
    og_cluster *c = NULL;
    og_db *db = NULL;
    og_stored_set *set = NULL;
    og_mcp *m = NULL;
    og_status st = OG_OK;
    og_open_opts oo = {.actor = actor};
    if (cluster) {
        st = og_cluster_open(&c, cluster);
        if (st == OG_OK && !graph) {
            if (og_cluster_graph_count(c) == 1) graph = og_cluster_graph_id(c, 0);
            else st = OG_ERR_INVALID, fprintf(stderr, "omnigraph mcp: the cluster has %zu graphs: choose one with --graph\n",
                                              og_cluster_graph_count(c));
        }
        const char *uri = st == OG_OK ? og_cluster_graph_uri(c, graph) : NULL;
        if (st == OG_OK && !uri) st = OG_ERR_NOT_FOUND, fprintf(stderr, "omnigraph mcp: graph '%s' is not applied\n", graph);
        if (st == OG_OK) st = og_db_open(&db, uri, &oo);
        if (st == OG_OK) { /* the graph's providers.embedding profile for text `nearest` */
            og_db_embed_provider ep;
            char key[1024];
            int bound = 0;
            if (og_cluster_embedding_provider(c, graph, &ep, key, sizeof key, &bound) != OG_OK ||
                (bound && og_db_set_embed_provider(db, &ep) != OG_OK))
                fprintf(stderr, "omnigraph mcp: warning: %s; text queries use the environment's provider\n",
                        og_error_message());
            memset(key, 0, sizeof key);
        }
        if (st == OG_OK) st = og_cluster_stored_queries(&set, c, graph, db);
        if (st == OG_OK && use_policy) {
            const char *bundle = og_cluster_policy_text(c, graph);
            if (!bundle) st = OG_ERR_NOT_FOUND, fprintf(stderr, "omnigraph mcp: no policy bundle is bound to graph '%s'\n", graph);
            else st = og_mcp_policy_new(&pol, bundle, strlen(bundle), "policy", graph);
        }
    } else if (store) {
        st = og_db_open(&db, store, &oo);
        if (st == OG_OK) st = og_stored_set_new(&set);
        char *schema = NULL;
        if (st == OG_OK && nfiles) st = og_db_schema_source(&schema, db, NULL);
        for (size_t i = 0; st == OG_OK && i < nfiles; i++) {
            og_buf b = OG_BUF_INIT;
            st = og_cli_read_file(files[i], &b);
            if (st == OG_OK)
                st = og_stored_set_add(set, files[i], (const char *)b.data, b.len, NULL, schema, strlen(schema));
            og_buf_free(&b);
        }
        og_free(schema);
    } else {
        return og_cli_usage("mcp", "--store ROOT or --cluster DIR is required");
    }
    if (st == OG_OK) {
        og_mcp_opts mo = {.db = db, .queries = set, .graph_id = graph, .schema_apply_disabled = cluster != NULL,
                          .authorize = pol ? og_mcp_policy_authorize : NULL, .authorize_ctx = pol,
                          .notify = notify_line, .notify_ctx = stdout};
        st = og_mcp_new(&m, &mo);
    }
    if (st != OG_OK) {
        if (og_error_message()[0]) fprintf(stderr, "omnigraph mcp: %s: %s\n", og_status_name(st), og_error_message());
        og_mcp_policy_free(pol);
        og_stored_set_free(set);
        og_db_close(db);
        og_cluster_close(c);
        return OG_EXIT_FAIL;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (!n) continue;
        char *out = NULL;
        if (og_mcp_handle(m, actor, line, (size_t)n, &out) != OG_OK) {
            fprintf(stderr, "omnigraph mcp: out of memory\n");
            break;
        }
        if (out) {
            fputs(out, stdout);
            fputc('\n', stdout);
            fflush(stdout);
            og_free(out);
        }
    }
    free(line);
    og_mcp_free(m);
    og_mcp_policy_free(pol);
    og_stored_set_free(set);
    og_db_close(db);
    og_cluster_close(c);
    return OG_EXIT_OK;
}
