/*
 * graph_args.c — shared flag parsing and output helpers of the graph verbs.  See graph_args.h.
 */
#include "cli/graph_args.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int match(const char *arg, const char *name, const char **inline_value)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (arg[n] == '\0') {
        *inline_value = NULL;
        return 1;
    }
    if (arg[n] == '=') {
        *inline_value = arg + n + 1;
        return 1;
    }
    return 0;
}

int og_graph_args_parse(og_graph_args *a, int argc, char **argv, og_flag *flags, size_t nflags,
                        size_t max_positional)
{
    const char *verb = a->verb;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *iv = NULL;
        const char **common_value = NULL;
        int *common_switch = NULL;
        if (match(arg, "--store", &iv)) common_value = &a->store;
        else if (match(arg, "--branch", &iv)) common_value = &a->branch;
        else if (match(arg, "--at", &iv) || match(arg, "--snapshot", &iv)) common_value = &a->at;
        else if (match(arg, "--as", &iv)) common_value = &a->actor;
        else if (!strcmp(arg, "--json")) common_switch = &a->json;
        else if (!strcmp(arg, "--quiet")) common_switch = &a->quiet;
        if (common_switch) {
            *common_switch = 1;
            continue;
        }
        if (common_value) {
            if (!iv) {
                if (i + 1 >= argc) return og_cli_usage(verb, "%s needs a value", arg);
                iv = argv[++i];
            }
            if (*common_value) return og_cli_usage(verb, "%.*s given twice", (int)strcspn(arg, "="), arg);
            *common_value = iv;
            continue;
        }
        og_flag *hit = NULL;
        for (size_t f = 0; f < nflags && !hit; f++)
            if (match(arg, flags[f].name, &iv) || (flags[f].alias && match(arg, flags[f].alias, &iv))) hit = &flags[f];
        if (hit) {
            if (!hit->takes_value) {
                if (iv) return og_cli_usage(verb, "%s takes no value", hit->name);
                *hit->seen = 1;
                continue;
            }
            if (!iv) {
                if (i + 1 >= argc) return og_cli_usage(verb, "%s needs a value", arg);
                iv = argv[++i];
            }
            if (hit->repeatable) {
                if (*hit->nmany >= 64) return og_cli_usage(verb, "too many %s flags", hit->name);
                hit->many[(*hit->nmany)++] = iv;
            } else {
                if (*hit->value) return og_cli_usage(verb, "%s given twice", hit->name);
                *hit->value = iv;
            }
            continue;
        }
        if (arg[0] == '-' && arg[1] != '\0') return og_cli_usage(verb, "unknown option '%s'", arg);
        if (a->npositional >= max_positional || a->npositional >= 4)
            return og_cli_usage(verb, "unexpected argument '%s'", arg);
        a->positional[a->npositional++] = arg;
    }
    if (a->branch && a->at)
        return og_cli_usage(verb, "--branch and --at name two different states; give one of them");
    return 0;
}

const char *og_graph_args_root(og_graph_args *a)
{
    if (a->store && a->npositional) {
        og_cli_usage(a->verb, "two graph roots given: --store %s and %s", a->store, a->positional[0]);
        return NULL;
    }
    if (a->store) return a->store;
    if (a->npositional) {
        const char *root = a->positional[0];
        memmove(a->positional, a->positional + 1, (a->npositional - 1) * sizeof a->positional[0]);
        a->npositional--;
        return root;
    }
    const char *env = getenv("OMNIGRAPH_STORE");
    if (env && *env) return env;
    og_cli_usage(a->verb, "no graph given: pass --store ROOT (or set OMNIGRAPH_STORE)");
    return NULL;
}

int og_cli_fail(const char *verb, og_status st)
{
    fprintf(stderr, "omnigraph %s: %s: %s\n", verb, og_status_name(st), og_error_message());
    return st == OG_ERR_PRECONDITION_FAILED ? OG_EXIT_PRECONDITION : OG_EXIT_FAIL;
}

og_db *og_graph_args_open(og_graph_args *a, const char *root)
{
    og_open_opts o = {a->actor, 0};
    og_db *db;
    og_status st = og_db_open(&db, root, &o);
    if (st) {
        og_cli_fail(a->verb, st);
        return NULL;
    }
    return db;
}

void og_graph_args_echo(const og_graph_args *a, const char *root)
{
    if (a->quiet) return;
    int remote = strncmp(root, "s3://", 5) == 0;
    fprintf(stderr, "omnigraph %s \xe2\x86\x92 %s (direct, %s)\n", a->verb, root, remote ? "remote" : "local");
}

void og_cli_print_receipt(const og_graph_args *a, const og_receipt *r, int load)
{
    if (!a->json) {
        if (!r->published)
            printf("no changes (nothing published)\n");
        else if (load)
            printf("loaded %llu records (%llu inserted, %llu updated) as commit %s on %s\n",
                   (unsigned long long)r->records, (unsigned long long)r->inserted, (unsigned long long)r->updated,
                   r->commit, r->branch);
        else
            printf("affected %llu nodes, %llu edges in commit %s on %s\n", (unsigned long long)r->affected_nodes,
                   (unsigned long long)r->affected_edges, r->commit, r->branch);
        return;
    }
    json_t *o = json_object();
    if (r->published) {
        json_t *c = json_object();
        json_object_set_new(c, "graph_commit_id", json_string(r->commit));
        json_object_set_new(c, "graph_branch", json_string(r->branch));
        json_object_set_new(c, "attempts", json_integer(r->attempts));
        json_object_set_new(o, "commit", c);
    } else {
        json_object_set_new(o, "commit", json_null());
    }
    if (load) {
        json_object_set_new(o, "records", json_integer((json_int_t)r->records));
        json_object_set_new(o, "inserted", json_integer((json_int_t)r->inserted));
        json_object_set_new(o, "updated", json_integer((json_int_t)r->updated));
    } else {
        json_object_set_new(o, "affected_nodes", json_integer((json_int_t)r->affected_nodes));
        json_object_set_new(o, "affected_edges", json_integer((json_int_t)r->affected_edges));
    }
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (s) printf("%s\n", s);
    free(s);
}
