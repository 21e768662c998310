/*
 * cmd_maint.c — maintenance verbs over the public API (docs/maintenance.md):
 *   omnigraph optimize [--branch B] [--if-commit C] [--json] ROOT
 *   omnigraph cleanup [--keep-commits N] [--older-than D] [--grace D] [--confirm] [--json] ROOT
 * Kept apart from cmd_graph.c because maintenance changes layout, never content.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
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
    "own when a table passes $OG_AUTO_OPTIMIZE_FRAGMENTS small fragments (default 16, 0 = never).\n"
    "Then builds the persisted indexes the head lacks (`omnigraph index build`, docs/indexes.md).\n"
    "  --branch B          the branch (default main)\n"
    "  --if-commit C       only if the branch head is commit C (exit 4 otherwise)\n"
    "  -m, --message TEXT  the optimize commit's message (commit list / show print it)\n"
    "  --json              print {\"commit\": ... | null, \"tables\", \"fragments_before\", ...}\n"
    "  --store ROOT        the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --as ACTOR          actor recorded on the commit\n"
    "  --quiet             no target echo, no summary line of a write\n";

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
    /* og_db_optimize also built the indexes the new head lacks: a failure there is reported,
     * never the command's (the compaction is published already) */
    if (st == OG_OK && r.index_status != OG_OK) fprintf(stderr, "omnigraph optimize: index build: %s\n", r.index_error);
    og_db_close(db);
    if (st) return og_cli_fail("optimize", st);
    if (a.json) {
        if (r.published) printf("{\"commit\": \"%s\", ", r.commit);
        else printf("{\"commit\": null, ");
        printf("\"branch\": \"%s\", \"tables\": %zu, \"fragments_before\": %zu, \"fragments_after\": %zu, "
               "\"rows_rewritten\": %" PRIu64 ", \"deleted_rows_dropped\": %" PRIu64 ", \"attempts\": %d, "
               "\"index_files_built\": %" PRIu64 ", \"index_files\": %" PRIu64 ", \"index_covered\": %" PRIu64 "}\n",
               a.branch ? a.branch : "main", r.tables, r.fragments_before, r.fragments_after, r.rows_rewritten,
               r.deleted_rows_dropped, r.attempts, r.index_files_built, r.index_files, r.index_covered);
    } else if (a.quiet) { /* --quiet: the summary of a write is informational */
    } else if (r.published) {
        printf("optimized %s: commit %s, %zu table(s), %zu -> %zu fragments, %" PRIu64 " rows rewritten, %" PRIu64
               " deleted rows dropped\n",
               a.branch ? a.branch : "main", r.commit, r.tables, r.fragments_before, r.fragments_after,
               r.rows_rewritten, r.deleted_rows_dropped);
    } else {
        printf("nothing to optimize on %s\n", a.branch ? a.branch : "main");
    }
    if (!a.json && !a.quiet && r.index_files_built)
        printf("built %" PRIu64 " index file(s): %" PRIu64 "/%" PRIu64 " data files covered\n", r.index_files_built,
               r.index_covered, r.index_files);
    return OG_EXIT_OK;
}

static const char *cleanup_help =
    "usage: omnigraph cleanup [--keep-commits N] [--older-than DURATION] [--grace DURATION]\n"
    "                         [--confirm] [--json] ROOT\n"
    "\n"
    "Reclaims what no retained commit reaches: commits, branch log entries, table versions,\n"
    "data, deletion and index files, and the files of failed or abandoned writes.  A DRY RUN\n"
    "unless --confirm: it reports what it would remove (objects and bytes per kind).\n"
    "Retained: every live branch head, and the commits the retention keeps on the history of\n"
    "one (with neither flag: every commit reachable from a live head).  With both flags a\n"
    "commit is kept when either keeps it.  Nothing younger than the grace period is touched.\n"
    "  --keep-commits N        keep the commits fewer than N parent links from a live head\n"
    "  --older-than DURATION   keep the commits created within DURATION (30s, 15m, 2h, 7d, 1w)\n"
    "  --grace DURATION        leave objects younger than this alone (default 1h; writes in\n"
    "                          flight stay safe as long as it exceeds the 30 min plan bound)\n"
    "  --confirm               delete (default: dry run)\n"
    "  --json                  print the report as one JSON object\n"
    "  --store ROOT            the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --quiet                 no target echo, no summary line of a write\n";

int64_t og_cli_duration_ms(const char *s)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || v < 0 || end == s) return -1;
    int64_t unit = 1000;
    if (!strcmp(end, "ms")) unit = 1;
    else if (*end) {
        if (end[1]) return -1;
        switch (*end) {
        case 's': unit = 1000; break;
        case 'm': unit = 60 * 1000; break;
        case 'h': unit = 3600 * 1000; break;
        case 'd': unit = 86400LL * 1000; break;
        case 'w': unit = 7 * 86400LL * 1000; break;
        default: return -1;
        }
    }
    if (v > INT64_MAX / unit) return -1;
    return (int64_t)v * unit;
}

int64_t og_cli_size_bytes(const char *s)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || v < 0 || end == s) return -1;
    int64_t unit = 1;
    if (*end) {
        if (end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB")) return -1;
        switch (*end) {
        case 'K': case 'k': unit = 1024; break;
        case 'M': unit = 1024 * 1024; break;
        case 'G': unit = 1024LL * 1024 * 1024; break;
        default: return -1;
        }
    }
    if (v > INT64_MAX / unit) return -1;
    return (int64_t)v * unit;
}

int og_cmd_cleanup(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(cleanup_help, stdout);
        return OG_EXIT_OK;
    }
    og_graph_args a = {.verb = "cleanup"};
    const char *keep = NULL, *older = NULL, *grace = NULL;
    int confirm = 0;
    og_flag flags[] = {{"--keep-commits", NULL, 1, 0, &keep, NULL, NULL, NULL},
                       {"--older-than", NULL, 1, 0, &older, NULL, NULL, NULL},
                       {"--grace", NULL, 1, 0, &grace, NULL, NULL, NULL},
                       {"--confirm", NULL, 0, 0, NULL, &confirm, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 4, 1);
    if (rc) return rc;
    if (a.at) return og_cli_usage("cleanup", "--at is for reads; cleanup works on the whole graph");
    if (a.branch) return og_cli_usage("cleanup", "--branch: cleanup works on every branch at once");
    og_cleanup_opts_pub o = {0, -1, -1, confirm};
    if (keep) {
        char *end;
        errno = 0;
        long long n = strtoll(keep, &end, 10);
        if (errno || *end || end == keep || n < 1)
            return og_cli_usage("cleanup", "--keep-commits needs a whole number of at least 1");
        o.keep_commits = n;
    }
    if (older && (o.older_than_ms = og_cli_duration_ms(older)) < 0)
        return og_cli_usage("cleanup", "--older-than needs a duration such as 30s, 15m, 2h, 7d or 1w");
    if (grace && (o.grace_ms = og_cli_duration_ms(grace)) < 0)
        return og_cli_usage("cleanup", "--grace needs a duration such as 30s, 15m, 2h, 7d or 1w");
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_graph_args_echo(&a, root);
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    og_cleanup_result r;
    og_status st = og_db_cleanup(&r, db, &o);
    og_db_close(db);
    if (st) return og_cli_fail("cleanup", st);
    if (a.json) {
        printf("{\"dry_run\": %s, \"commits_retained\": %" PRIu64 ", "
               "\"commits\": {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}, "
               "\"log_entries\": {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}, "
               "\"table_versions\": {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"emptied\": %" PRIu64 "}, "
               "\"data_files\": {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}, "
               "\"orphan_files\": {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}, "
               "\"index_files\": {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}, "
               "\"total\": {\"objects\": %" PRIu64 ", \"bytes\": %" PRIu64 "}, "
               "\"kept_for_grace\": %" PRIu64 ", \"tables\": %" PRIu64 "}\n",
               r.dry_run ? "true" : "false", r.commits_retained, r.commits_removed, r.commits_bytes,
               r.log_entries_removed, r.log_entries_bytes, r.versions_removed, r.versions_bytes, r.versions_emptied,
               r.files_removed, r.files_bytes, r.orphans_removed, r.orphans_bytes, r.index_removed, r.index_bytes,
               r.commits_removed + r.log_entries_removed + r.versions_removed + r.files_removed + r.orphans_removed +
                   r.index_removed,
               r.commits_bytes + r.log_entries_bytes + r.versions_bytes + r.files_bytes + r.orphans_bytes +
                   r.index_bytes,
               r.young_kept, r.tables);
        return OG_EXIT_OK;
    }
    if (a.quiet && !r.dry_run) return OG_EXIT_OK; /* a dry run's report is what was asked for */
    const char *verb = r.dry_run ? "would remove" : "removed";
    printf("cleanup%s: %" PRIu64 " commit(s) retained\n", r.dry_run ? " (dry run; --confirm deletes)" : "",
           r.commits_retained);
    printf("  %-14s %s %8" PRIu64 " object(s) %12" PRIu64 " bytes\n", "commits", verb, r.commits_removed,
           r.commits_bytes);
    printf("  %-14s %s %8" PRIu64 " object(s) %12" PRIu64 " bytes\n", "log entries", verb, r.log_entries_removed,
           r.log_entries_bytes);
    printf("  %-14s %s %8" PRIu64 " object(s) %12" PRIu64 " bytes (%" PRIu64 " more emptied)\n", "table versions",
           verb, r.versions_removed, r.versions_bytes, r.versions_emptied);
    printf("  %-14s %s %8" PRIu64 " object(s) %12" PRIu64 " bytes\n", "data files", verb, r.files_removed,
           r.files_bytes);
    printf("  %-14s %s %8" PRIu64 " object(s) %12" PRIu64 " bytes\n", "orphan files", verb, r.orphans_removed,
           r.orphans_bytes);
    printf("  %-14s %s %8" PRIu64 " object(s) %12" PRIu64 " bytes\n", "index files", verb, r.index_removed,
           r.index_bytes);
    if (r.young_kept) printf("  %" PRIu64 " object(s) younger than the grace period left alone\n", r.young_kept);
    return OG_EXIT_OK;
}
