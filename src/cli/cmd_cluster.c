/*
 * cmd_cluster.c — `omnigraph cluster validate|plan|apply|status|import|force-unlock` and
 * `omnigraph queries list|validate|run` (reference-surfaces.md §1.2, §5; docs/cluster.md).
 * Flags and printing only: the work is in src/cluster/.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/graph_args.h"
#include "cli/output.h"
#include "cluster/cluster.h"
#include "cluster/stored.h"

static const char *cluster_help =
    "usage: omnigraph cluster validate [--config DIR] [--json]\n"
    "       omnigraph cluster plan     [--config DIR] [--json]\n"
    "       omnigraph cluster apply    [--config DIR] [--as ACTOR] [--allow-data-loss] [--json]\n"
    "       omnigraph cluster approve  RESOURCE --as ACTOR [--config DIR] [--json]\n"
    "       omnigraph cluster status   [--config DIR] [--json]\n"
    "       omnigraph cluster refresh  [--config DIR] [--json]\n"
    "       omnigraph cluster import   [--config DIR] [--json]\n"
    "       omnigraph cluster force-unlock LOCK_ID [--config DIR] [--json]\n"
    "\n"
    "A cluster is a directory holding cluster.yaml, the .pg schemas, .gq stored queries and\n"
    "policy bundles it names (docs/cluster.md).  validate checks it; plan diffs it against the\n"
    "applied ledger; apply creates graphs, migrates schemas (unsupported migrations are refused),\n"
    "publishes stored queries that type-check and policy bundles, and records a new ledger\n"
    "revision (compare-and-swap: of two concurrent applies one wins, the other fails having\n"
    "recorded nothing).  import creates the first ledger; refresh re-observes the graphs and the\n"
    "catalog into it.  A graph removed from cluster.yaml is deleted only after `approve graph.ID`.\n"
    "Exit 0 on success, 1 otherwise.\n"
    "  --config DIR       the cluster directory (default .)\n"
    "  --as ACTOR         recorded on the graph commits apply writes\n"
    "  --allow-data-loss  schema drops are hard (reclaimed) instead of soft\n"
    "  --json             the full JSON report\n"
    "  --quiet            apply, approve, import, refresh, force-unlock print nothing on success\n"
    "                     but diagnostics\n";

static void print_diags(json_t *r)
{
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(r, "diagnostics"), i, d) {
        fprintf(stderr, "%s %s %s: %s\n", json_string_value(json_object_get(d, "severity")),
                json_string_value(json_object_get(d, "code")), json_string_value(json_object_get(d, "path")),
                json_string_value(json_object_get(d, "message")));
    }
}

/* quiet (--quiet): a write that succeeded (apply, approve, import, refresh, force-unlock)
 * prints nothing but its diagnostics; reports (validate, plan, status), diagnostics and a
 * failed write's changes are always printed. */
static void print_human(const char *sub, json_t *r, int quiet)
{
    print_diags(r);
    int is_write = strcmp(sub, "validate") && strcmp(sub, "plan") && strcmp(sub, "status");
    if (quiet && is_write && json_is_true(json_object_get(r, "ok"))) return;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "changes"), i, c) {
        const char *op = json_string_value(json_object_get(c, "operation"));
        const char *res = json_string_value(json_object_get(c, "result"));
        const char *reason = json_string_value(json_object_get(c, "reason"));
        printf("%c %-40s %-7s %s%s%s\n", op[0] == 'c' ? '+' : op[0] == 'd' ? '-' : '~',
               json_string_value(json_object_get(c, "resource")), op,
               res ? res : json_string_value(json_object_get(c, "disposition")), reason ? ": " : "", reason ? reason : "");
        json_t *steps = json_object_get(json_object_get(c, "migration"), "steps");
        size_t k;
        json_t *s;
        json_array_foreach(steps, k, s) {
            char *t = json_dumps(s, JSON_COMPACT);
            printf("    %s\n", t ? t : "");
            free(t);
        }
    }
    size_t ai;
    json_t *ag;
    json_array_foreach(json_object_get(r, "approvals_required"), ai, ag)
        printf("approval %s: %s (omnigraph cluster approve %s --as ACTOR)\n",
               json_is_true(json_object_get(ag, "satisfied")) ? "recorded" : "required",
               json_string_value(json_object_get(ag, "resource")), json_string_value(json_object_get(ag, "resource")));
    if (!strcmp(sub, "plan") && !json_array_size(json_object_get(r, "changes")) && json_is_true(json_object_get(r, "ok")))
        printf("no changes: the applied state matches the configuration\n");
    if (!strcmp(sub, "apply") && json_is_true(json_object_get(r, "ok")))
        printf("applied %lld change(s); state revision %lld%s\n", (long long)json_integer_value(json_object_get(r, "applied_count")),
               (long long)json_integer_value(json_object_get(r, "state_revision")),
               json_is_true(json_object_get(r, "state_written")) ? "" : " (nothing to write)");
    if (!strcmp(sub, "validate") && json_is_true(json_object_get(r, "ok")))
        printf("ok: %zu resources\n", json_object_size(json_object_get(r, "resources")));
    if (!strcmp(sub, "import") && json_is_true(json_object_get(r, "ok"))) printf("imported: state revision 1\n");
    if (!strcmp(sub, "status")) {
        printf("state revision %lld%s\n", (long long)json_integer_value(json_object_get(r, "state_revision")),
               json_is_true(json_object_get(r, "state_present")) ? "" : " (no applied state)");
        json_t *lock = json_object_get(r, "lock");
        if (lock)
            printf("locked by %s (operation %s, since %s, pid %lld)\n", json_string_value(json_object_get(lock, "lock_id")),
                   json_string_value(json_object_get(lock, "operation")), json_string_value(json_object_get(lock, "created_at")),
                   (long long)json_integer_value(json_object_get(lock, "pid")));
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(r, "resource_statuses"), k, v)
            printf("  %-40s %s\n", k, json_string_value(json_object_get(v, "status")));
        json_object_foreach(json_object_get(r, "graphs"), k, v)
            printf("  graph %s: %s%s%s\n", k, json_string_value(json_object_get(v, "status")),
                   json_object_get(v, "message") ? ": " : "", json_object_get(v, "message") ? json_string_value(json_object_get(v, "message")) : "");
        size_t ci;
        json_t *cc;
        json_array_foreach(json_object_get(r, "catalog_conditions"), ci, cc)
            printf("  %s: %s (%s)\n", json_string_value(json_object_get(cc, "resource")),
                   json_string_value(json_object_get(cc, "code")), json_string_value(json_object_get(cc, "key")));
    }
    if (!strcmp(sub, "force-unlock") && json_is_true(json_object_get(r, "ok"))) printf("lock removed\n");
    if (!strcmp(sub, "approve") && json_is_true(json_object_get(r, "ok")))
        printf("cluster approve: %s %s approved by %s (approval %s)\n", json_string_value(json_object_get(r, "operation")),
               json_string_value(json_object_get(r, "resource")), json_string_value(json_object_get(r, "approved_by")),
               json_string_value(json_object_get(r, "approval_id")));
    if (!strcmp(sub, "refresh") && json_is_true(json_object_get(r, "ok")))
        printf("refreshed: state revision %lld\n", (long long)json_integer_value(json_object_get(r, "state_revision")));
}

int og_cmd_cluster(int argc, char **argv)
{
    if (argc < 2 || og_cli_wants_help(argc, argv)) {
        fputs(cluster_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    const char *sub = argv[1], *dir = NULL, *actor = NULL, *lock_id = NULL;
    int json = 0, allow = 0, quiet = 0;
    for (int i = 2; i < argc; i++) {
        if ((!strcmp(argv[i], "--config") && dir) || (!strcmp(argv[i], "--as") && actor))
            return og_cli_usage("cluster", "%s given twice", argv[i]);
        if (!strcmp(argv[i], "--config") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--as") && i + 1 < argc) actor = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if (!strcmp(argv[i], "--allow-data-loss")) allow = 1;
        else if ((!strcmp(sub, "force-unlock") || !strcmp(sub, "approve")) && argv[i][0] != '-' && !lock_id) lock_id = argv[i];
        else return og_cli_usage("cluster", "unknown or incomplete option '%s'", argv[i]);
    }
    if (!dir) dir = ".";
    og_cluster_opts o = {.actor = actor, .allow_data_loss = allow, .json = json};
    char *out = NULL;
    og_status st;
    if (!strcmp(sub, "validate")) st = og_cluster_validate(&out, dir);
    else if (!strcmp(sub, "plan")) st = og_cluster_plan(&out, dir, &o);
    else if (!strcmp(sub, "apply")) st = og_cluster_apply(&out, dir, &o);
    else if (!strcmp(sub, "status")) st = og_cluster_status(&out, dir);
    else if (!strcmp(sub, "import")) st = og_cluster_import(&out, dir, &o);
    else if (!strcmp(sub, "refresh")) st = og_cluster_refresh(&out, dir, &o);
    else if (!strcmp(sub, "approve")) {
        if (!lock_id) return og_cli_usage("cluster", "approve needs the RESOURCE (for example graph.ID)");
        st = og_cluster_approve(&out, dir, lock_id, &o);
    }
    else if (!strcmp(sub, "force-unlock")) {
        if (!lock_id) return og_cli_usage("cluster", "force-unlock needs the exact LOCK_ID");
        st = og_cluster_force_unlock(&out, dir, lock_id);
    } else {
        return og_cli_usage("cluster", "unknown subcommand '%s'", sub);
    }
    if (out) {
        if (json) {
            printf("%s\n", out);
        } else {
            json_t *r = json_loads(out, 0, NULL);
            if (r) print_human(sub, r, quiet);
            json_decref(r);
        }
        og_free(out);
    }
    if (st != OG_OK) {
        fprintf(stderr, "omnigraph cluster %s: %s: %s\n", sub, og_status_name(st), og_error_message());
        return OG_EXIT_FAIL;
    }
    return OG_EXIT_OK;
}

/* ---- queries ---------------------------------------------------------------------------- */

static const char *queries_help =
    "usage: omnigraph queries list     [--cluster DIR] [--graph ID] [--json | --format F]\n"
    "       omnigraph queries validate [--cluster DIR] [--graph ID] [--json]\n"
    "       omnigraph queries run NAME [--cluster DIR] [--graph ID] [--params JSON | --params-file F]\n"
    "                                  [--branch B | --snapshot COMMIT] [--as ACTOR] [--format F]\n"
    "\n"
    "The stored queries a cluster apply published for a graph (docs/cluster.md).  list prints\n"
    "each query's name, kind and typed parameters; validate type-checks every stored query\n"
    "against the graph's live schema (exit 1 naming the first that no longer does); run invokes\n"
    "one by name with JSON parameters, checked against its declarations (a mutation publishes\n"
    "one commit on --branch).  --graph may be omitted when the cluster has one graph.\n"
    "--format json|jsonl|csv|table: list one record per query (name, mutation, mcp_expose,\n"
    "tool_name); run a read's rows (its columns), a mutation's result as one record.\n"
    "--quiet: run prints no result for a mutation (unless --json or --format asks for it).\n";

/* `want_provider`: bind the graph's applied embedding profile (`embedding_provider:`), as a
 * cluster-booted server does, so `nearest($v.p, "text")` embeds with the cluster's provider and
 * not the environment's; a profile whose ${VAR} is unset is an error naming it. */
static og_status open_graph(og_cluster **c, og_db **db, og_stored_set **set, const char *dir, const char **graph,
                            const char *actor, int want_provider)
{
    og_status st = og_cluster_open(c, dir);
    if (st != OG_OK) return st;
    if (!*graph) {
        if (og_cluster_graph_count(*c) != 1) {
            og_buf b = OG_BUF_INIT;
            for (size_t i = 0; i < og_cluster_graph_count(*c); i++)
                og_buf_printf(&b, "%s%s", i ? ", " : "", og_cluster_graph_id(*c, i));
            fprintf(stderr, "omnigraph queries: choose a graph with --graph (applied graphs: %s)\n", b.len ? og_buf_cstr(&b) : "none");
            og_buf_free(&b);
            return OG_ERR_INVALID;
        }
        *graph = og_cluster_graph_id(*c, 0);
    }
    const char *uri = og_cluster_graph_uri(*c, *graph);
    if (!uri) {
        fprintf(stderr, "omnigraph queries: graph '%s' not found in the applied cluster state\n", *graph);
        return OG_ERR_NOT_FOUND;
    }
    og_open_opts oo = {.actor = actor};
    st = og_db_open(db, uri, &oo);
    if (st != OG_OK) return st;
    if (want_provider) {
        og_db_embed_provider ep;
        char key[1024];
        int bound = 0;
        st = og_cluster_embedding_provider(*c, *graph, &ep, key, sizeof key, &bound);
        if (st == OG_OK && bound) st = og_db_set_embed_provider(*db, &ep);
        memset(key, 0, sizeof key);
        if (st != OG_OK) return st;
    }
    return og_cluster_stored_queries(set, *c, *graph, *db);
}

int og_cmd_queries(int argc, char **argv)
{
    if (argc < 2 || og_cli_wants_help(argc, argv)) {
        fputs(queries_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    const char *sub = argv[1], *dir = ".", *graph = NULL, *name = NULL, *params = NULL, *params_file = NULL;
    const char *branch = NULL, *snapshot = NULL, *actor = NULL, *format = NULL;
    int json = 0, quiet = 0;
    static const char *const valued[] = {"--cluster", "--graph", "--params", "--params-file", "--branch", "--snapshot", "--as"};
    int seen[sizeof valued / sizeof valued[0]] = {0};
    for (int i = 2; i < argc; i++) {
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            if (!strcmp(argv[i], valued[k]) && seen[k]++) return og_cli_usage("queries", "%s given twice", argv[i]);
        if (!strcmp(argv[i], "--cluster") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--graph") && i + 1 < argc) graph = argv[++i];
        else if (!strcmp(argv[i], "--params") && i + 1 < argc) params = argv[++i];
        else if (!strcmp(argv[i], "--params-file") && i + 1 < argc) params_file = argv[++i];
        else if (!strcmp(argv[i], "--branch") && i + 1 < argc) branch = argv[++i];
        else if (!strcmp(argv[i], "--snapshot") && i + 1 < argc) snapshot = argv[++i];
        else if (!strcmp(argv[i], "--as") && i + 1 < argc) actor = argv[++i];
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if (!strcmp(argv[i], "--format") && i + 1 < argc && !format && strcmp(sub, "validate")) format = argv[++i];
        else if (!strcmp(sub, "run") && argv[i][0] != '-' && !name) name = argv[i];
        else return og_cli_usage("queries", "unknown or incomplete option '%s'", argv[i]);
    }
    if (strcmp(sub, "list") && strcmp(sub, "validate") && strcmp(sub, "run"))
        return og_cli_usage("queries", "unknown subcommand '%s'", sub);
    if (!strcmp(sub, "run") && !name) return og_cli_usage("queries", "run needs a query NAME");
    og_cli_format fmt;
    if (og_cli_format_parse("queries", format, json, &fmt)) return OG_EXIT_USAGE;
    og_cluster *c = NULL;
    og_db *db = NULL;
    og_stored_set *set = NULL;
    og_buf pbuf = OG_BUF_INIT;
    int rc = OG_EXIT_OK;
    og_status st = open_graph(&c, &db, &set, dir, &graph, actor, !strcmp(sub, "run"));
    if (st != OG_OK) {
        fprintf(stderr, "omnigraph queries %s: %s: %s\n", sub, og_status_name(st), og_error_message());
        rc = OG_EXIT_FAIL;
    } else if (!strcmp(sub, "list")) {
        char *out = NULL;
        og_stored_set_list_json(&out, set);
        if (fmt == OG_CLI_JSON && !format) {
            printf("%s\n", out);
        } else if (fmt != OG_CLI_TEXT) {
            json_t *j = json_loads(out, 0, NULL);
            static const char *cols[] = {"name", "mutation", "mcp_expose", "tool_name"};
            og_cli_print_records(fmt, j, "queries", cols, 4);
            json_decref(j);
        } else {
            for (size_t i = 0; i < og_stored_set_count(set); i++) {
                const og_stored_query *q = og_stored_set_at(set, i);
                printf("%s (%s)%s(", q->name, q->mutation ? "mutation" : "read", q->mcp_expose ? " " : " [not exposed] ");
                for (size_t k = 0; k < q->nparams; k++)
                    printf("%s$%s: %s%s", k ? ", " : "", q->params[k].name, q->params[k].gq_type, q->params[k].nullable ? "?" : "");
                printf(")%s%s\n", q->description ? "  -- " : "", q->description ? q->description : "");
            }
        }
        og_free(out);
    } else if (!strcmp(sub, "validate")) {
        if (json) printf("{\"ok\":true,\"graph\":\"%s\",\"queries\":%zu}\n", graph, og_stored_set_count(set));
        else printf("ok: %zu stored queries of graph '%s' type-check against its schema\n", og_stored_set_count(set), graph);
    } else {
        const og_stored_query *q = og_stored_set_find(set, name);
        if (params_file) {
            if (og_cli_read_file(params_file, &pbuf) != OG_OK) rc = OG_EXIT_FAIL;
            else params = og_buf_cstr(&pbuf);
        }
        if (rc == OG_EXIT_OK && !q) {
            fprintf(stderr, "omnigraph queries run: not_found: stored query '%s' not found\n", name);
            rc = OG_EXIT_FAIL;
        } else if (rc == OG_EXIT_OK) {
            og_stored_invoke_opts io = {.params_json = params, .branch = branch, .snapshot = snapshot,
                                        .expect_mutation = -1, .actor = actor};
            char *out = NULL;
            st = og_stored_invoke(&out, db, q, &io);
            if (st != OG_OK) {
                fprintf(stderr, "omnigraph queries run: %s: %s\n", og_status_name(st), og_error_message());
                rc = st == OG_ERR_PRECONDITION_FAILED ? OG_EXIT_PRECONDITION : OG_EXIT_FAIL;
            } else if (fmt == OG_CLI_TEXT && quiet && q->mutation) {
                /* --quiet: a mutation's result is its summary; --json / --format still print it */
            } else if (fmt == OG_CLI_TEXT || (fmt == OG_CLI_JSON && !format)) {
                printf("%s\n", out);
            } else { /* a read's rows by its columns, or a mutation's result as one record */
                json_t *j = json_loads(out, 0, NULL), *cj = json_object_get(j, "columns");
                const char *cols[64];
                size_t nc = 0;
                for (size_t k = 0; k < json_array_size(cj) && nc < 64; k++) {
                    json_t *col = json_array_get(cj, k);
                    const char *cn = json_is_string(col) ? json_string_value(col)
                                                         : json_string_value(json_object_get(col, "name"));
                    if (cn) cols[nc++] = cn;
                }
                static const char *mcols[] = {"commit.graph_commit_id", "branch", "query_name", "affected_nodes",
                                              "affected_edges"};
                if (json_object_get(j, "rows")) og_cli_print_records(fmt, j, "rows", cols, nc);
                else og_cli_print_records(fmt, j, NULL, mcols, 5);
                json_decref(j);
            }
            og_free(out);
        }
    }
    og_buf_free(&pbuf);
    og_stored_set_free(set);
    og_db_close(db);
    og_cluster_close(c);
    return rc;
}
