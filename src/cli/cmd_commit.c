/*
 * cmd_commit.c — `omnigraph commit list|show|changes` (reference-storage.md §2 and §6) over
 * the public versioning API: first-parent history newest first, one commit with its table
 * versions, and one commit's changes against its first parent.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/graph_args.h"
#include "cli/output.h"

static const char *commit_help =
    "usage: omnigraph commit list [--branch B] [--limit N] [--json | --format F] ROOT\n"
    "       omnigraph commit show ID [--json | --format F] ROOT\n"
    "       omnigraph commit changes ID [--kind node|edge]... [--type T]... [--op OP]... [--limit N]\n"
    "                                   [--page-token T] [--json | --format F] ROOT\n"
    "\n"
    "list: the branch's first-parent history, newest first (a branch shows the history it\n"
    "inherited, then its own commits).  show: one commit and the table versions it names.\n"
    "changes: the rows the commit changed against its first parent (a merge commit is diffed\n"
    "against the target's previous head).\n"
    "  --branch B         the branch to list (default main)\n"
    "  --limit N          list: at most N commits; changes: the page size (at most 8192)\n"
    "  --page-token T     changes: print only the page T names (v1o0 is the first) and its\n"
    "                     next_page_token, the tokens of GET /graphs/{id}/commits/{commit}/changes;\n"
    "                     without it every page is printed\n"
    "  --kind K, --type T, --op OP  filters of commit changes (repeatable)\n"
    "  --store ROOT       the graph (or $OMNIGRAPH_STORE)\n"
    "  --json             JSON output, the reference's shapes: list {\"commits\": [...]} and show\n"
    "                     one commit, each with the reference's members (\"graph_commit_id\",\n"
    "                     \"parent_commit_id\", \"merged_parent_commit_id\", \"actor_id\",\n"
    "                     \"created_at\" in epoch microseconds, ...) beside ours (\"id\", \"kind\",\n"
    "                     \"stats\", \"created_at_utc\", ...); changes {\"cause\", \"changes\"} as one\n"
    "                     block of `changes poll` (and \"next_page_token\" with --page-token)\n"
    "  --format F         json (= --json), jsonl, csv or table: list one record per commit (id,\n"
    "                     created_at_utc, kind, actor, message), show one per table (type, kind,\n"
    "                     table, version, rows), changes one per row change (kind, type, id,\n"
    "                     op)\n";

/* Page sizes of `commit changes`, as GET /graphs/{id}/commits/{commit}/changes. */
#define OG_CLI_CHANGE_PAGE_DEFAULT 1000
#define OG_CLI_CHANGE_PAGE_MAX 8192

/* `commit changes`: the block as JSON, one record per change, or text lines and a tally. */
static void print_changes(json_t *j, int fmt)
{
    json_t *changes = json_object_get(j, "changes"), *c;
    size_t i;
    if (fmt != OG_CLI_TEXT) {
        static const char *cols[] = {"kind", "type=type.name", "id", "op"};
        og_cli_print_records(fmt, j, "changes", cols, 4);
        return;
    }
    long long n[3] = {0, 0, 0};
    json_array_foreach(changes, i, c)
    {
        const char *op = json_string_value(json_object_get(c, "op"));
        n[!strcmp(op, "insert") ? 0 : !strcmp(op, "update") ? 1 : 2]++;
        printf("%-6s %s %s\n", op, json_string_value(json_object_get(json_object_get(c, "type"), "name")),
               json_string_value(json_object_get(c, "id")));
    }
    printf("%lld inserted, %lld updated, %lld deleted\n", n[0], n[1], n[2]);
}

static void print_commit_line(json_t *c)
{
    json_t *parents = json_object_get(c, "parents");
    printf("%s %s %-8s %s%s", json_string_value(json_object_get(c, "id")),
           json_string_value(json_object_get(c, "created_at_utc")),
           json_is_string(json_object_get(c, "kind")) ? json_string_value(json_object_get(c, "kind")) : "?",
           json_string_value(json_object_get(c, "actor")), json_array_size(parents) > 1 ? " (merge)" : "");
    /* how the actor was established, so a local `--as alice` never passes for alice's token */
    const char *via = json_string_value(json_object_get(c, "actor_via"));
    if (via) printf(" via %s", via);
    /* the message a person gave the write (-m), its first line, after the actor */
    const char *m = json_string_value(json_object_get(c, "message"));
    if (m && *m) printf("  %.*s%s", (int)strcspn(m, "\n"), m, strchr(m, '\n') ? " ..." : "");
    putchar('\n');
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
    const char *limit_s = NULL, *format = NULL, *page_token = NULL;
    const char *types[64], *ops[64], *kinds[64];
    size_t ntypes = 0, nops = 0, nkinds = 0;
    og_flag list_flags[] = {{"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
                            {"--limit", NULL, 1, 0, &limit_s, NULL, NULL, NULL}};
    og_flag change_flags[] = {
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--op", NULL, 1, 1, NULL, NULL, ops, &nops},
        {"--kind", NULL, 1, 1, NULL, NULL, kinds, &nkinds},
        {"--limit", NULL, 1, 0, &limit_s, NULL, NULL, NULL},
        {"--page-token", NULL, 1, 0, &page_token, NULL, NULL, NULL},
    };
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, is_changes ? change_flags : list_flags,
                                 is_list ? 2 : is_changes ? 6 : 1, is_list ? 1 : 2);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse(verb, format, a.json, &fmt))) return rc;
    unsigned kindbits = 0;
    for (size_t i = 0; i < nkinds; i++) {
        if (!strcmp(kinds[i], "node")) kindbits |= OG_CHANGES_NODES;
        else if (!strcmp(kinds[i], "edge")) kindbits |= OG_CHANGES_EDGES;
        else return og_cli_usage(verb, "--kind must be node or edge (got '%s')", kinds[i]);
    }
    if (a.at) return og_cli_usage(verb, "--at does not apply here");
    if (a.actor) return og_cli_usage(verb, "--as names the actor of a write; a read records none");
    if (!is_list && a.branch) return og_cli_usage(verb, "--branch applies to commit list only");
    size_t limit = 0;
    if (limit_s) {
        char *end;
        long long v = strtoll(limit_s, &end, 10);
        if (*limit_s == '\0' || *end || v <= 0) return og_cli_usage(verb, "--limit must be a positive integer");
        limit = (size_t)v;
        if (is_changes && limit > OG_CLI_CHANGE_PAGE_MAX)
            return og_cli_usage(verb, "--limit must be at most 8192 changes per page");
    }
    /* paging (the server route's tokens: "v1o<offset>") */
    size_t offset = 0;
    /* like the reference: every page is fetched and printed unless --page-token names one */
    int paged = is_changes && page_token;
    if (page_token) {
        char *end;
        if (strncmp(page_token, "v1o", 3) || !isdigit((unsigned char)page_token[3]) ||
            (offset = strtoull(page_token + 3, &end, 10), *end))
            return og_cli_usage(verb, "--page-token rejected: not a token of commit changes (expected v1o<N>)");
    }
    if (paged && !limit) limit = OG_CLI_CHANGE_PAGE_DEFAULT;
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
    } else { /* the reference's CommitChangesOutput: one block of the change feed */
        og_changes_poll_opts f = {NULL, NULL, NULL, NULL, 0, ntypes ? types : NULL, ntypes, opbits, kindbits};
        st = og_db_commit_feed(&text, db, id, &f);
    }
    og_db_close(db);
    if (st) {
        og_free(text);
        return og_cli_fail(verb, st);
    }
    json_t *j = og_json_read(text, strlen(text)); /* a U64 above 2^63-1 stays a number */
    og_free(text);
    if (!j) return OG_EXIT_FAIL;
    char next[48] = "";
    if (is_list) {
        json_t *c;
        size_t i;
        json_array_foreach(json_object_get(j, "commits"), i, c) og_cli_commit_add_reference(c, a.branch ? a.branch : "main", 0);
    } else if (is_show) {
        og_cli_commit_add_reference(j, NULL, 0);
    } else if (paged) { /* the page: changes [offset, offset + limit) of the filtered list */
        json_t *all = json_object_get(j, "changes"), *page = json_array();
        size_t n = json_array_size(all);
        for (size_t i = offset; i < n && i < offset + limit; i++) json_array_append(page, json_array_get(all, i));
        json_object_set_new(j, "changes", page);
        if (offset + limit < n) snprintf(next, sizeof next, "v1o%zu", offset + limit);
        json_object_set_new(j, "next_page_token", next[0] ? json_string(next) : json_null());
    }
    if (is_changes) {
        print_changes(j, fmt);
        /* in text mode, say how to continue (JSON carries next_page_token) */
        if (paged && fmt == OG_CLI_TEXT) printf("next page: %s\n", next[0] ? next : "none (last page)");
    } else if (fmt != OG_CLI_TEXT) {
        static const char *list_cols[] = {"id", "created_at_utc", "kind", "actor", "actor_via", "message"};
        static const char *show_cols[] = {"type", "kind", "table", "version", "rows"};
        og_cli_print_records(fmt, j, is_list ? "commits" : "tables", is_list ? list_cols : show_cols, is_list ? 6 : 5);
    } else if (is_list) {
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
    return OG_EXIT_OK;
}
