/*
 * cmd_branch.c — `omnigraph branch create|list|delete|merge` (reference-surfaces.md §1.2,
 * reference-storage.md §3 and §5) over the public versioning API.  Flags and printing only.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/graph_args.h"
#include "cli/output.h"

static const char *branch_help =
    "usage: omnigraph branch create [--from B | --at COMMIT] [-m TEXT] NAME [--json] ROOT\n"
    "       omnigraph branch list [--json | --format json|jsonl|csv|table] ROOT\n"
    "       omnigraph branch delete NAME [--if-commit C] [--json] ROOT\n"
    "       omnigraph branch merge SOURCE [--into TARGET] [--strategy [KIND=]ours|theirs]...\n"
    "                              [--delete-branch] [--if-commit C] [--json] ROOT\n"
    "\n"
    "Branches are named heads in the commit history.  create writes no commit and copies no\n"
    "data; delete ends the branch (its data stays until cleanup).  merge publishes one commit\n"
    "on TARGET (default main): already_up_to_date (nothing), fast_forward, or merged (two\n"
    "parents).  A conflict (exit 1) is listed once: its kind, the type and id, and each\n"
    "property whose value differs, with both sides' values; nothing is published.\n"
    "  --from B           create from the head of branch B (default main)\n"
    "  --at C             create from commit C (an id, a unique id prefix, a branch, REF~N)\n"
    "  --into T           the merge target (default main)\n"
    "  --strategy S       settle row conflicts instead of failing, as Git's -X: `ours` keeps\n"
    "                     TARGET's row, `theirs` takes SOURCE's change (update, insert or\n"
    "                     delete); KIND=ours|theirs for one kind only (divergent_insert,\n"
    "                     divergent_update, delete_vs_update); repeatable; alias -X.  Orphan\n"
    "                     edges and constraint violations are never settled\n"
    "  --delete-branch    delete SOURCE after a successful merge\n"
    "  -m, --message TEXT create: what the branch is for, kept with the branch (branch list\n"
    "                     --json / --format show it); merge: the merge commit's message\n"
    "  --if-commit C      merge / delete only if the head (TARGET's, or the deleted branch's)\n"
    "                     is commit C (exit 4 otherwise); create is create-exclusive already\n"
    "  --store ROOT       the graph (or $OMNIGRAPH_STORE)\n"
    "  --as ACTOR         actor recorded on the log entry / commit\n"
    "  --json             JSON output in the reference's shapes: list {\"branches\": [names]}\n"
    "                     (and our \"heads\": {name: head}, \"messages\": {name: message|null});\n"
    "                     create {\"uri\",\"from\",\"name\",\"actor_id\",\"head\",\"message\"};\n"
    "                     delete {\"uri\",\"name\",\"actor_id\"}; merge\n"
    "                     {\"source\",\"target\",\"outcome\",\"commit\",\"actor_id\",...}\n"
    "  --format F         branch list: json (= --json), or jsonl, csv or table: one record per\n"
    "                     branch (name, head, message)\n";

static void print_json_text(const char *text)
{
    fputs(text, stdout);
    if (*text && text[strlen(text) - 1] != '\n') putchar('\n');
}

/* Prints a document, indented (takes the reference). */
static void print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (s) printf("%s\n", s);
    free(s);
}

/* --json / --format json: the reference's {"branches": [names]} and our "heads" {name: head}
 * and "messages" {name: message or null}; --format jsonl|csv|table: one record per branch
 * (name, head, message); else "name head" lines. */
static int branch_list(og_graph_args *a, og_db *db)
{
    char *text = NULL;
    og_status st = og_db_branch_list(&text, db);
    if (st) return og_cli_fail("branch list", st);
    json_t *j = json_loads(text, 0, NULL);
    og_free(text);
    json_t *arr = json_object_get(j, "branches"), *b;
    size_t i;
    if (a->format == OG_CLI_JSON) {
        json_t *names = json_array(), *heads = json_object(), *msgs = json_object();
        json_array_foreach(arr, i, b)
        {
            json_array_append(names, json_object_get(b, "name"));
            json_object_set(heads, json_string_value(json_object_get(b, "name")), json_object_get(b, "head"));
            json_t *m = json_object_get(b, "message");
            json_object_set_new(msgs, json_string_value(json_object_get(b, "name")), m ? json_incref(m) : json_null());
        }
        json_t *doc = json_pack("{s:o,s:o,s:o}", "branches", names, "heads", heads, "messages", msgs);
        og_cli_print_records(OG_CLI_JSON, doc, NULL, NULL, 0);
        json_decref(doc);
    } else if (a->format) {
        static const char *cols[] = {"name", "head", "message"};
        og_cli_print_records(a->format, j, "branches", cols, 3);
    } else {
        json_array_foreach(arr, i, b) printf("%s %s\n", json_string_value(json_object_get(b, "name")),
                                             json_string_value(json_object_get(b, "head")));
    }
    json_decref(j);
    return OG_EXIT_OK;
}

/* --strategy values into the merge options; a usage error (exit 2) on a bad one. */
int og_cli_parse_strategies(const char *verb, const char *const *specs, size_t n, og_db_merge_strategy *mo)
{
    static const char *kinds[] = {"divergent_insert", "divergent_update", "delete_vs_update"};
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(specs[i], '='), *side = eq ? eq + 1 : specs[i];
        og_merge_strategy s = !strcmp(side, "ours") ? OG_MERGE_STRATEGY_OURS
                              : !strcmp(side, "theirs") ? OG_MERGE_STRATEGY_THEIRS
                                                        : OG_MERGE_STRATEGY_FAIL;
        if (s == OG_MERGE_STRATEGY_FAIL)
            return og_cli_usage(verb, "--strategy must be ours, theirs or KIND=ours|theirs (got '%s')", specs[i]);
        og_merge_strategy *slot = &mo->all;
        if (eq) {
            size_t k;
            for (k = 0; k < 3; k++)
                if (strlen(kinds[k]) == (size_t)(eq - specs[i]) && !strncmp(specs[i], kinds[k], (size_t)(eq - specs[i]))) break;
            if (k == 3)
                return og_cli_usage(verb, "--strategy: '%.*s' is not a conflict kind a side can settle (divergent_insert, "
                                    "divergent_update, delete_vs_update)", (int)(eq - specs[i]), specs[i]);
            slot = k == 0 ? &mo->divergent_insert : k == 1 ? &mo->divergent_update : &mo->delete_vs_update;
        }
        if (*slot != OG_MERGE_STRATEGY_FAIL && *slot != s)
            return og_cli_usage(verb, "--strategy: '%s' contradicts an earlier --strategy", specs[i]);
        *slot = s;
    }
    return 0;
}

void og_cli_print_resolved(json_t *j)
{
    json_t *arr = json_object_get(j, "resolved");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *c = json_array_get(arr, i);
        printf("  settled %s (%s): %s\n", json_string_value(json_object_get(c, "kind")),
               json_string_value(json_object_get(c, "resolution")), json_string_value(json_object_get(c, "message")));
    }
}

static int branch_merge(og_graph_args *a, og_db *db, const char *source, og_db_merge_opts *mo,
                        const og_db_merge_strategy *sg)
{
    const char *into = mo->target;
    char *text = NULL;
    og_status st = og_db_branch_merge_ex(&text, db, mo, sg);
    if (st) {
        if (a->json && text) print_json_text(text);
        og_free(text);
        int rc = og_cli_fail("branch merge", st);
        if (st == OG_ERR_CONFLICT)
            fprintf(stderr, "hint: make the two sides agree (change the row on %s or on %s) and merge again, or settle "
                            "row conflicts with --strategy ours (keep %s) or --strategy theirs (take %s)\n",
                    into ? into : "main", source, into ? into : "main", source);
        return rc;
    }
    json_t *j = json_loads(text, 0, NULL);
    if (a->json) {
        if (!mo->delete_branch) json_object_del(j, "branch_deleted"); /* the reference omits it then */
        json_t *c = json_object_get(j, "commit");
        if (json_is_object(c)) { /* the reference's whole CommitOutput, our "attempts" kept */
            json_t *full = og_cli_commit_output(db, json_string_value(json_object_get(c, "graph_commit_id")),
                                                json_string_value(json_object_get(c, "graph_branch")));
            json_object_set(full, "attempts", json_object_get(c, "attempts"));
            json_object_set_new(j, "commit", full);
        }
        char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) printf("%s\n", s);
        free(s);
    } else {
        const char *outcome = json_string_value(json_object_get(j, "outcome"));
        json_t *c = json_object_get(j, "commit");
        /* --quiet: the summary is informational; settled conflicts are still listed */
        if (!a->quiet && json_is_object(c))
            printf("%s: merged %s into %s as commit %s\n", outcome, source, into ? into : "main",
                   json_string_value(json_object_get(c, "graph_commit_id")));
        else if (!a->quiet)
            printf("%s: nothing to merge from %s into %s\n", outcome, source, into ? into : "main");
        og_cli_print_resolved(j);
    }
    json_decref(j);
    og_free(text);
    return OG_EXIT_OK;
}

int og_cmd_branch(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv) || argc < 2) {
        fputs(branch_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    const char *sub = argv[1];
    char verb[32];
    snprintf(verb, sizeof verb, "branch %s", sub);
    og_graph_args a = {.verb = verb};
    const char *from = NULL, *into = NULL, *if_commit = NULL, *format = NULL;
    const char *strategies[64];
    size_t nstrategies = 0;
    int del = 0;
    og_flag list_flags[] = {{"--format", NULL, 1, 0, &format, NULL, NULL, NULL}};
    og_flag flags[] = {
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--into", NULL, 1, 0, &into, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--delete-branch", NULL, 0, 0, NULL, &del, NULL, NULL},
        {"--strategy", "-X", 1, 1, NULL, NULL, strategies, &nstrategies},
    };
    int is_create = !strcmp(sub, "create"), is_list = !strcmp(sub, "list"), is_delete = !strcmp(sub, "delete"),
        is_merge = !strcmp(sub, "merge");
    if (!is_create && !is_list && !is_delete && !is_merge)
        return og_cli_usage("branch", "unknown subcommand '%s' (create, list, delete, merge)", sub);
    size_t nflags = is_create ? 1 : is_merge ? 4 : 0;
    og_flag *fl = is_merge ? flags + 1 : is_delete ? flags + 2 : is_list ? list_flags : flags;
    if (is_list) nflags = 1;
    if (is_delete) nflags = 1; /* --if-commit */
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, fl, is_merge ? 4 : nflags, is_list ? 1 : 2);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse(verb, format, a.json && is_list, &fmt))) return rc;
    a.format = (int)fmt;
    og_db_merge_opts mo = {NULL, into, if_commit, del};
    og_db_merge_strategy sg = {OG_MERGE_STRATEGY_FAIL, OG_MERGE_STRATEGY_FAIL, OG_MERGE_STRATEGY_FAIL,
                               OG_MERGE_STRATEGY_FAIL};
    if (is_merge && (rc = og_cli_parse_strategies(verb, strategies, nstrategies, &sg))) return rc;
    if (a.branch) return og_cli_usage(verb, "--branch does not apply here");
    if (is_list && a.actor) return og_cli_usage(verb, "--as names the actor of a write; a read records none");
    if (a.at && !is_create) return og_cli_usage(verb, "--at applies to branch create only");
    if (is_create && from && a.at) return og_cli_usage(verb, "give --from or --at, not both");
    /* the name comes first, then the optional positional ROOT */
    const char *name = NULL;
    if (!is_list) {
        if (!a.npositional) return og_cli_usage(verb, "a branch name is required");
        name = a.positional[0];
        memmove(a.positional, a.positional + 1, (a.npositional - 1) * sizeof a.positional[0]);
        a.npositional--;
        const char *env = getenv("OMNIGRAPH_STORE");
        struct stat sb;
        if (!a.npositional && !a.store && !(env && *env) &&
            (strchr(name, '/') || strstr(name, "://") || (stat(name, &sb) == 0 && S_ISDIR(sb.st_mode))))
            return og_cli_usage(verb, "'%s' looks like the graph, but the branch name comes first: "
                                      "omnigraph branch %s NAME %s", name, sub, name);
    }
    const char *root = og_graph_args_root(&a);
    if (!root) return OG_EXIT_USAGE;
    if (!is_list) og_graph_args_echo(&a, root); /* writes only (reference-surfaces.md §1.4) */
    og_db *db = og_graph_args_open(&a, root);
    if (!db) return OG_EXIT_FAIL;
    int exit_code = OG_EXIT_OK;
    if (is_list) {
        exit_code = branch_list(&a, db);
    } else if (is_merge) {
        mo.source = name;
        exit_code = branch_merge(&a, db, name, &mo, &sg);
    } else if (is_create) {
        char head[32];
        og_db_branch_create_opts co = {OG_DB_BRANCH_CREATE_OPTS_VERSION, from, a.at, a.message};
        og_status st = og_db_branch_create_ex(head, db, name, &co);
        if (st) exit_code = og_cli_fail(verb, st);
        else if (a.json) /* the reference's BranchCreateOutput, the head it starts at, its message */
            print_json(json_pack("{s:s,s:s,s:s,s:o,s:s,s:o}", "uri", root, "from", a.at ? a.at : from ? from : "main",
                                 "name", name, "actor_id", a.actor ? json_string(a.actor) : json_null(), "head", head,
                                 "message", a.message && *a.message ? json_string(a.message) : json_null()));
        else if (!a.quiet) printf("created branch %s at %s\n", name, head);
    } else {
        og_status st = og_db_branch_delete_if(db, name, if_commit);
        if (st) exit_code = og_cli_fail(verb, st);
        else if (a.json) /* the reference's BranchDeleteOutput */
            print_json(json_pack("{s:s,s:s,s:o}", "uri", root, "name", name, "actor_id",
                                 a.actor ? json_string(a.actor) : json_null()));
        else if (!a.quiet) printf("deleted branch %s\n", name);
    }
    og_db_close(db);
    return exit_code;
}
