/*
 * cmd_changes.c — `omnigraph changes --from C1 --to C2` (reference-storage.md §6): row-level
 * changes between two commits, per type, over the public API; `changes poll` (the change feed
 * with cursors, og_db_changes_poll, every page consumed) and `changes baseline` (a durable
 * snapshot file and the cursor that resumes the feed after it); also the filter and printing
 * shared with `commit changes` (cmd_commit.c).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <libgen.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/graph_args.h"
#include "cli/output.h"

static const char *changes_help =
    "usage: omnigraph changes --from C1 --to C2 [--type T]... [--op insert|update|delete]... [--json | --format F] ROOT\n"
    "       omnigraph changes poll [--branch B] [--cursor C | --start now|beginning|after:COMMIT] [--limit N]\n"
    "                              [--kind node|edge]... [--type T]... [--op OP]... [--json | --format F] ROOT\n"
    "       omnigraph changes baseline --out PATH [--branch B] [--kind K]... [--type T]... [--op OP]... [--json] ROOT\n"
    "\n"
    "Row-level changes from commit C1 to commit C2 (same schema): per type the inserted,\n"
    "updated (before and after image) and deleted rows by id.  Only table fragments that\n"
    "differ between the two commits are read.\n"
    "  --from C1, --to C2  the commits (required)\n"
    "  --type T            only this node or edge type (repeatable)\n"
    "  --op OP             only this operation (repeatable)\n"
    "  --store ROOT        the graph (or $OMNIGRAPH_STORE)\n"
    "  --json              the full change set as JSON (images included)\n"
    "  --format F          json, jsonl, csv or table (one record per row change)\n"
    "\n"
    "poll: the change feed of branch B (default main): the commits of its first-parent history\n"
    "after a position, each as a block (its cause: commit, parents, actor, time) of row changes.\n"
    "The first poll starts at --start: now (the default: nothing is replayed, only a cursor),\n"
    "beginning, or after:COMMIT; later polls pass the printed cursor with --cursor.  Every page\n"
    "is fetched (--limit N changes per page, default 1000, at most 8192); the cursor is printed\n"
    "last, only after the final page.  Delivery is at least once: apply blocks idempotently by\n"
    "commit id and store the cursor with them.  A cursor whose commit left the branch's history\n"
    "fails with change_feed_gap: take a new baseline.\n"
    "baseline: writes the entities of the head of B (or only --kind / --type) to PATH in the\n"
    "load format, durably (a temporary file, fsync, rename, directory fsync), then prints the\n"
    "snapshot commit and the cursor that resumes the feed right after it.  A failure leaves an\n"
    "existing PATH untouched.  --op only binds the feed that follows.\n";

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

void og_cli_print_changes(const char *text, int format)
{
    json_t *j = og_json_read(text, strlen(text)); /* a U64 above 2^63-1 stays a number */
    if (format != OG_CLI_TEXT) {
        static const char *cols[] = {"kind", "type", "id", "op", "before", "after"};
        og_cli_print_records(format, j, "changes", cols, format == OG_CLI_CSV ? 6 : 4);
        json_decref(j);
        return;
    }
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

static int parse_kinds(const char *verb, const char *const *kinds, size_t n, unsigned *out)
{
    *out = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(kinds[i], "node")) *out |= OG_CHANGES_NODES;
        else if (!strcmp(kinds[i], "edge")) *out |= OG_CHANGES_EDGES;
        else return og_cli_usage(verb, "--kind must be node or edge (got '%s')", kinds[i]);
    }
    return 0;
}

static void print_cause(json_t *cause)
{
    json_t *p = json_object_get(cause, "parent_commit_id"), *m = json_object_get(cause, "merged_parent_commit_id"),
           *a = json_object_get(cause, "actor_id");
    printf("commit %s", json_string_value(json_object_get(cause, "graph_commit_id")));
    if (json_is_string(p)) printf(" (parent %s", json_string_value(p));
    if (json_is_string(m)) printf(", merged %s", json_string_value(m));
    if (json_is_string(p)) printf(")");
    printf(" on %s", json_string_value(json_object_get(cause, "authored_branch")));
    if (json_is_string(a)) printf(" by %s", json_string_value(a));
    printf("\n");
}

/* `changes poll`: every page of one poll, blocks split across pages joined. */
static int changes_poll(int argc, char **argv)
{
    og_graph_args a = {.verb = "changes poll"};
    const char *cursor = NULL, *start = NULL, *limit_s = NULL, *format = NULL;
    const char *types[64], *ops[64], *kinds[64];
    size_t ntypes = 0, nops = 0, nkinds = 0;
    og_flag flags[] = {
        {"--cursor", NULL, 1, 0, &cursor, NULL, NULL, NULL},
        {"--start", NULL, 1, 0, &start, NULL, NULL, NULL},
        {"--limit", NULL, 1, 0, &limit_s, NULL, NULL, NULL},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--op", NULL, 1, 1, NULL, NULL, ops, &nops},
        {"--kind", NULL, 1, 1, NULL, NULL, kinds, &nkinds},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, 7, 1);
    if (rc) return rc;
    if (a.at) return og_cli_usage(a.verb, "--at does not apply: poll follows a branch (--branch)");
    if (a.actor) return og_cli_usage(a.verb, "--as names the actor of a write; a read records none");
    if (cursor && start) return og_cli_usage(a.verb, "give --cursor or --start, not both");
    og_cli_format fmt;
    if ((rc = og_cli_format_parse(a.verb, format, a.json, &fmt))) return rc;
    og_changes_poll_opts o = {a.branch, cursor, start, NULL, 0, ntypes ? types : NULL, ntypes, 0, 0};
    if ((rc = og_cli_parse_ops(a.verb, ops, nops, &o.ops))) return rc;
    if ((rc = parse_kinds(a.verb, kinds, nkinds, &o.kinds))) return rc;
    if (limit_s) {
        char *end;
        long long v = strtoll(limit_s, &end, 10);
        if (!*limit_s || *end || v <= 0 || v > 8192) return og_cli_usage(a.verb, "--limit must be an integer from 1 to 8192");
        o.limit = (size_t)v;
    }
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    json_t *blocks = json_array(), *last = NULL;
    char token[160] = "";
    og_status st = OG_OK;
    int printed_block = 0;
    for (;;) {
        char *text = NULL;
        st = og_db_changes_poll(&text, db, &o);
        if (st) {
            og_free(text); /* the error's detail */
            break;
        }
        if (last) json_decref(last);
        last = og_json_read(text, strlen(text));
        og_free(text);
        json_t *b;
        size_t i;
        json_array_foreach(json_object_get(last, "blocks"), i, b)
        {
            json_t *cause = json_object_get(b, "cause");
            json_t *prev = json_array_get(blocks, json_array_size(blocks) - 1);
            int same = prev && json_equal(json_object_get(prev, "cause"), cause);
            if (fmt == OG_CLI_TEXT) { /* printed as it comes */
                if (!same) {
                    if (printed_block++) printf("\n");
                    print_cause(cause);
                }
                json_t *c;
                size_t k;
                json_array_foreach(json_object_get(b, "changes"), k, c)
                printf("  %-6s %s %s\n", json_string_value(json_object_get(c, "op")),
                       json_string_value(json_object_get(json_object_get(c, "type"), "name")),
                       json_string_value(json_object_get(c, "id")));
                fflush(stdout);
            }
            if (same) json_array_extend(json_object_get(prev, "changes"), json_object_get(b, "changes"));
            else json_array_append(blocks, b);
        }
        const char *next = json_string_value(json_object_get(last, "next_page_token"));
        if (!next) break;
        snprintf(token, sizeof token, "%s", next);
        o.cursor = o.start = NULL;
        o.page_token = token;
    }
    og_db_close(db);
    if (st) {
        json_decref(blocks);
        json_decref(last);
        return og_cli_fail(a.verb, st);
    }
    json_t *cur = json_object_get(last, "cursor"), *caught = json_object_get(last, "caught_up");
    if (fmt == OG_CLI_TEXT) {
        if (!printed_block) printf("(no new commits)\n");
        printf("\ncursor: %s\ncaught_up: %s\n", json_string_value(cur), json_is_true(caught) ? "true" : "false");
    } else if (fmt == OG_CLI_JSON) {
        json_t *doc = json_pack("{s:O,s:O,s:O}", "blocks", blocks, "cursor", cur, "caught_up", caught);
        og_cli_print_records(OG_CLI_JSON, doc, "blocks", NULL, 0);
        json_decref(doc);
    } else { /* one record per change, its commit beside it; the cursor last */
        json_t *rows = json_array(), *b, *c;
        size_t i, k;
        json_array_foreach(blocks, i, b) json_array_foreach(json_object_get(b, "changes"), k, c)
        {
            json_t *r = json_pack("{s:O}", "graph_commit_id", json_object_get(json_object_get(b, "cause"), "graph_commit_id"));
            json_object_update(r, c);
            json_array_append_new(rows, r);
        }
        json_t *doc = json_pack("{s:o}", "changes", rows);
        static const char *cols[] = {"graph_commit_id", "kind", "type=type.name", "id", "op"};
        og_cli_print_records(fmt, doc, "changes", cols, 5);
        json_decref(doc);
        json_t *tail = json_pack("{s:O,s:O}", "cursor", cur, "caught_up", caught);
        char *s = json_dumps(tail, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (fmt == OG_CLI_JSONL) printf("%s\n", s);
        else fprintf(stderr, "cursor: %s\ncaught_up: %s\n", json_string_value(cur), json_is_true(caught) ? "true" : "false");
        free(s);
        json_decref(tail);
    }
    json_decref(blocks);
    json_decref(last);
    return OG_EXIT_OK;
}

/* `changes baseline`: the snapshot file, durable, then the handshake. */
static int changes_baseline(int argc, char **argv)
{
    og_graph_args a = {.verb = "changes baseline"};
    const char *out = NULL;
    const char *types[64], *ops[64], *kinds[64];
    size_t ntypes = 0, nops = 0, nkinds = 0;
    og_flag flags[] = {
        {"--out", NULL, 1, 0, &out, NULL, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--op", NULL, 1, 1, NULL, NULL, ops, &nops},
        {"--kind", NULL, 1, 1, NULL, NULL, kinds, &nkinds},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, 4, 1);
    if (rc) return rc;
    if (a.at) return og_cli_usage(a.verb, "--at does not apply: a baseline is the head of a branch (--branch)");
    if (a.actor) return og_cli_usage(a.verb, "--as names the actor of a write; a read records none");
    if (!out || !*out) return og_cli_usage(a.verb, "--out PATH is required");
    unsigned opbits, kindbits;
    if ((rc = og_cli_parse_ops(a.verb, ops, nops, &opbits))) return rc;
    if ((rc = parse_kinds(a.verb, kinds, nkinds, &kindbits))) return rc;
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    og_read_opts at = {a.branch, NULL};
    char *text = NULL;
    og_status st = og_db_snapshot(&text, db, &at);
    if (st) {
        og_db_close(db);
        return og_cli_fail(a.verb, st);
    }
    json_t *snap = json_loads(text, 0, NULL);
    og_free(text);
    char head[32];
    snprintf(head, sizeof head, "%s", json_string_value(json_object_get(snap, "commit")));
    /* the selected types: listed (or all) of the wanted kinds; an unknown --type is an error */
    const char *names[256];
    size_t n = 0;
    json_t *t;
    size_t i;
    for (size_t k = 0; k < ntypes; k++) {
        int known = 0;
        json_array_foreach(json_object_get(snap, "tables"), i, t) known |= !strcmp(json_string_value(json_object_get(t, "type")), types[k]);
        if (!known) {
            json_decref(snap);
            og_db_close(db);
            fprintf(stderr, "omnigraph %s: not_found: no node or edge type '%s'\n", a.verb, types[k]);
            return OG_EXIT_FAIL;
        }
    }
    json_array_foreach(json_object_get(snap, "tables"), i, t)
    {
        const char *name = json_string_value(json_object_get(t, "type"));
        int edge = !strcmp(json_string_value(json_object_get(t, "kind")), "edge");
        int listed = !ntypes;
        for (size_t k = 0; k < ntypes; k++) listed |= !strcmp(types[k], name);
        if (listed && (!kindbits || (kindbits & (edge ? OG_CHANGES_EDGES : OG_CHANGES_NODES))) && n < 256) names[n++] = name;
    }
    /* the file: a temporary beside PATH, written, fsynced, renamed over PATH, directory fsynced */
    size_t plen = strlen(out);
    char *tmp = malloc(plen + 16), *dirbuf = strdup(out);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", out);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        fprintf(stderr, "omnigraph %s: io: cannot create a temporary file beside %s\n", a.verb, out);
        if (fd >= 0) close(fd), unlink(tmp);
        st = OG_ERR_IO;
    } else {
        at.branch = NULL;
        at.commit = head; /* pinned: a commit landing meanwhile is the feed's first block */
        st = n ? og_db_export(db, f, &at, names, n) : OG_OK;
        if (st) og_cli_fail(a.verb, st);
        int ok = st == OG_OK && fflush(f) == 0 && fsync(fileno(f)) == 0;
        if (fclose(f) != 0) ok = 0;
        if (ok && rename(tmp, out) != 0) ok = 0;
        if (ok) {
            int dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY);
            if (dfd < 0 || fsync(dfd) != 0) ok = 0;
            if (dfd >= 0) close(dfd);
        }
        if (!ok) {
            if (st == OG_OK) fprintf(stderr, "omnigraph %s: io: cannot write %s durably\n", a.verb, out), st = OG_ERR_IO;
            unlink(tmp);
        }
    }
    free(tmp);
    free(dirbuf);
    json_decref(snap);
    og_db_close(db);
    if (st) return OG_EXIT_FAIL;
    if (a.json) printf("{\n  \"snapshot_commit_id\": \"%s\",\n  \"resume_cursor\": \"v1c%s\"\n}\n", head, head);
    else printf("snapshot: %s\nsnapshot_commit_id: %s\nresume_cursor: v1c%s\n", out, head, head);
    return OG_EXIT_OK;
}

int og_cmd_changes(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(changes_help, stdout);
        return OG_EXIT_OK;
    }
    if (argc >= 2 && !strcmp(argv[1], "poll")) return changes_poll(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "baseline")) return changes_baseline(argc - 1, argv + 1);
    og_graph_args a = {.verb = "changes"};
    const char *from = NULL, *to = NULL, *format = NULL;
    const char *types[64], *ops[64];
    size_t ntypes = 0, nops = 0;
    og_flag flags[] = {
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--to", NULL, 1, 0, &to, NULL, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},
        {"--op", NULL, 1, 1, NULL, NULL, ops, &nops},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, 5, 1);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse("changes", format, a.json, &fmt))) return rc;
    if (!from || !to) return og_cli_usage("changes", "--from C1 and --to C2 are required");
    if (a.actor) return og_cli_usage("changes", "--as names the actor of a write; a read records none");
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
    og_cli_print_changes(text, fmt);
    og_free(text);
    return OG_EXIT_OK;
}
