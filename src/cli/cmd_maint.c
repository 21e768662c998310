/*
 * cmd_maint.c — maintenance verbs over the public API (docs/maintenance.md):
 *   omnigraph optimize [--branch B] [--if-commit C] [--json] ROOT
 * Kept apart from cmd_graph.c because maintenance changes layout, never content.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/graph_args.h"

static const char *optimize_help =
    "usage: omnigraph optimize [--branch B] [--if-commit C] [--json] ROOT\n"
    "\n"
    "Compacts the head of a branch: small fragments are merged and deleted rows dropped from\n"
    "the data files, as ONE `optimize` commit (same rows, same ids, same answers).  Prints what\n"
    "it did; with nothing to compact it publishes nothing.  Loads and mutations run it on their\n"
    "own when a table passes $OG_AUTO_OPTIMIZE_FRAGMENTS small fragments (default 64, 0 = never).\n"
    "Then builds the persisted indexes the head lacks (`omnigraph index build`, docs/indexes.md).\n"
    "  --branch B          the branch (default main)\n"
    "  --if-commit C       only if the branch head is commit C (exit 4 otherwise)\n"
    "  --json              print {\"commit\": ... | null, \"tables\", \"fragments_before\", ...}\n"
    "  --store ROOT        the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --as ACTOR          actor recorded on the commit\n"
    "  --quiet             no target echo on stderr\n";

int og_cmd_optimize(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(optimize_help, stdout);
        return OG_EXIT_OK;
    }
    og_graph_args a = {.verb = "optimize"};
    const char *if_commit = NULL;
    og_flag flags[] = {{"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 1, 1);
    if (rc) return rc;
    if (a.at) return og_cli_usage("optimize", "--at is for reads; optimize works on a branch head");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_graph_args_echo(&a, root);
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    og_optimize_result r;
    og_status st = og_db_optimize(&r, db, a.branch, if_commit);
    /* then the persisted indexes the (new) head lacks (docs/indexes.md): derived state, so a
     * failure is reported but never fails the compaction, which is published already */
    char *idx = NULL;
    if (st == OG_OK && og_db_index_build(&idx, db, a.branch, NULL, NULL) != OG_OK)
        fprintf(stderr, "omnigraph optimize: index build: %s\n", og_error_message());
    og_free(idx);
    og_db_close(db);
    if (st) return og_cli_fail("optimize", st);
    if (a.json) {
        if (r.published) printf("{\"commit\": \"%s\", ", r.commit);
        else printf("{\"commit\": null, ");
        printf("\"branch\": \"%s\", \"tables\": %zu, \"fragments_before\": %zu, \"fragments_after\": %zu, "
               "\"rows_rewritten\": %" PRIu64 ", \"deleted_rows_dropped\": %" PRIu64 ", \"attempts\": %d}\n",
               a.branch ? a.branch : "main", r.tables, r.fragments_before, r.fragments_after, r.rows_rewritten,
               r.deleted_rows_dropped, r.attempts);
    } else if (r.published) {
        printf("optimized %s: commit %s, %zu table(s), %zu -> %zu fragments, %" PRIu64 " rows rewritten, %" PRIu64
               " deleted rows dropped\n",
               a.branch ? a.branch : "main", r.commit, r.tables, r.fragments_before, r.fragments_after,
               r.rows_rewritten, r.deleted_rows_dropped);
    } else {
        printf("nothing to optimize on %s\n", a.branch ? a.branch : "main");
    }
    return OG_EXIT_OK;
}
