/*
 * main.c — the `omnigraph` command-line entry point: a dispatch table of verbs (each in its
 * own cmd_<verb>.c, see cli.h), global --help, and the small helpers verbs share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/typo.h"
#include "cli/output.h"
#include "cli/remote.h"
#include "util/error.h"

static const og_cli_cmd commands[] = {
    {"schema", "check a .pg schema, or plan a migration between two schema files", og_cmd_schema},
    {"version", "print the version", og_cmd_version},
    /* one line per verb; keep alphabetical after the first two */
    {"analyze", "show the search terms of a text (offline)", og_cmd_analyze},
    {"blob", "read one Blob property: its bytes (get) or size and etag (stat)", og_cmd_blob},
    {"branch", "create, list, delete and merge branches", og_cmd_branch},
    {"changes", "row-level changes between two commits; the change feed (poll, baseline)", og_cmd_changes},
    {"cleanup", "reclaim history no retained commit reaches (dry run unless --confirm)", og_cmd_cleanup},
    {"cluster", "cluster as code: validate, plan, apply, status, import, force-unlock", og_cmd_cluster},
    {"commit", "list, show and diff commits", og_cmd_commit},
    {"embed", "fill, replace or remove @embed vectors (a graph branch, or NDJSON files)", og_cmd_embed},
    {"export", "write a graph as NDJSON in the load format", og_cmd_export},
    {"index", "build persisted indexes of a branch head, or show their coverage", og_cmd_index},
    {"init", "create a graph from a .pg schema", og_cmd_init},
    {"lint", "type-check a .gq query file against a schema (offline)", og_cmd_lint},
    {"load", "load an NDJSON file as one commit (overwrite | append | merge)", og_cmd_load},
    {"mcp", "serve one graph to an agent over the Model Context Protocol (stdio)", og_cmd_mcp},
    {"mutate", "run a .gq mutation as one commit", og_cmd_mutate},
    {"optimize", "compact a branch's small fragments and deletions as one commit", og_cmd_optimize},
    {"policy", "validate, test, explain and compile YAML policy bundles (offline)", og_cmd_policy},
    {"queries", "list, validate and run a cluster's stored queries", og_cmd_queries},
    {"query", "run a .gq read query", og_cmd_query},
    {"shell", "an interactive session on one graph: queries, dot commands, completion", og_cmd_shell},
    {"snapshot", "show the table versions a read sees", og_cmd_snapshot},
    {"test", "run .gqt logic-test cases (docs/testing.md)", og_cmd_test},
    /* operator config and served graphs (remote_config.c, docs/cli.md "Remote mode and operator config") */
    {"alias", "run an operator alias of config.yaml: a stored query on a named server", og_cmd_alias},
    {"graphs", "list the graphs a server serves", og_cmd_graphs},
    {"login", "store a bearer token for a named server (~/.omnigraph/credentials)", og_cmd_login},
    {"logout", "remove a server's stored bearer token", og_cmd_logout},
    {"profile", "list and show the operator profiles of ~/.omnigraph/config.yaml", og_cmd_profile},
};

/* A worked example per verb, printed under its help (`omnigraph help VERB`, `VERB --help`): a
 * newcomer copies a command that works before reading the flag list.  They use the
 * quickstart's graph (./g, docs/quickstart.md). */
static const struct {
    const char *verb, *text;
} examples[] = {
    {"schema", "omnigraph schema check --schema people.pg\n"
               "  omnigraph schema plan --schema people-v2.pg --from people.pg"},
    {"version", "omnigraph version --json"},
    {"analyze", "omnigraph analyze --language english 'The runners were running'"},
    {"blob", "omnigraph blob stat node Doc readme body ./g"},
    {"branch", "omnigraph branch create feature ./g && omnigraph branch merge feature ./g"},
    {"changes", "omnigraph changes poll --start beginning --limit 100 ./g"},
    {"cleanup", "omnigraph cleanup --keep-commits 10 ./g          # a dry run; add --confirm"},
    {"cluster", "omnigraph cluster validate --config ./cluster && omnigraph cluster plan --config ./cluster"},
    {"commit", "omnigraph commit list ./g && omnigraph commit show main ./g"},
    {"embed", "omnigraph embed --type Doc --store ./g"},
    {"export", "omnigraph export ./g > backup.jsonl"},
    {"index", "omnigraph index build --kind fts ./g && omnigraph index status ./g"},
    {"init", "omnigraph init ./g --schema people.pg"},
    {"lint", "omnigraph lint --schema people.pg --query queries.gq"},
    {"load", "omnigraph load --data people.jsonl --mode merge -m 'nightly import' ./g"},
    {"mcp", "omnigraph mcp ./g --queries agent.gq"},
    {"mutate", "omnigraph mutate -e 'query add() { insert Person { name: \"Ann\" } }' -m 'add Ann' ./g"},
    {"optimize", "omnigraph optimize ./g"},
    {"policy", "omnigraph policy validate policy.yaml"},
    {"queries", "omnigraph queries list --cluster ./cluster"},
    {"query", "omnigraph query -e 'query q() { match { $p: Person } return { $p.name } }' --format table ./g\n"
              "  echo 'query q() { match { $p: Person } return { count($p) as n } }' | omnigraph query --query - ./g"},
    {"snapshot", "omnigraph snapshot --branch main ./g"},
    {"test", "omnigraph test -q tests/logic     # every .gqt case below the directory"},
    {"shell", "omnigraph shell ./g\n"
              "  omnigraph shell --store ./g -c 'query n() { match { $p: Person } return { count($p) as n } }'"},
    {"alias", "omnigraph alias list && omnigraph alias people-by-team platform"},
    {"graphs", "omnigraph graphs list --server http://127.0.0.1:8080 --json"},
    {"login", "echo \"$TOKEN\" | omnigraph login prod        # prod: a name under servers: of config.yaml"},
    {"logout", "omnigraph logout prod"},
    {"profile", "omnigraph profile list && omnigraph profile show staging"},
};

static void print_example(const char *verb)
{
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++)
        if (!strcmp(examples[i].verb, verb)) printf("\nExample:\n  %s\n", examples[i].text);
}

/* The subcommands of the verbs that have them, so that flags given before the subcommand
 * (`omnigraph branch --format csv list ROOT`) work as they do after it. */
static const struct {
    const char *verb, *subs; /* subs: space-separated, with a leading and a trailing space */
} subcommands[] = {
    {"blob", " get stat "},
    {"branch", " create list delete merge "},
    {"changes", " poll baseline "},
    {"cluster", " validate plan apply approve status refresh import force-unlock "},
    {"commit", " list show changes "},
    {"index", " build status "},
    {"policy", " validate test explain compile "},
    {"queries", " list validate run "},
    {"schema", " check plan apply show get "},
    {"graphs", " list "},
    {"profile", " list show "},
};

static int is_sub(const char *subs, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(subs, word); n && p; p = strstr(p + 1, word))
        if (p[-1] == ' ' && p[n] == ' ') return 1;
    return 0;
}

/* argv[1] is a verb with subcommands and argv[2] a flag: move the first word that names one of
 * its subcommands to argv[2] (the flags keep their order).  A word right after a flag is that
 * flag's value only when it is not a subcommand name, so `--quiet list` finds `list`. */
static void hoist_subcommand(int argc, char **argv)
{
    if (argc < 4 || argv[2][0] != '-') return;
    for (size_t k = 0; k < sizeof subcommands / sizeof subcommands[0]; k++) {
        if (strcmp(argv[1], subcommands[k].verb) != 0) continue;
        for (int i = 3; i < argc; i++) {
            if (!strcmp(argv[i], "--")) return;
            if (argv[i][0] == '-' || !is_sub(subcommands[k].subs, argv[i])) continue;
            char *sub = argv[i];
            memmove(argv + 3, argv + 2, (size_t)(i - 2) * sizeof *argv);
            argv[2] = sub;
            return;
        }
        return;
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: omnigraph <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  (aliases: read = query, change = mutate, schema get = schema show)\n");
    fprintf(f, "\nRun `omnigraph help <command>` (or `omnigraph <command> --help`, -h) for a command's options.\n"
               "A command that prints results takes --format: json, jsonl, csv or table where it prints\n"
               "records, json or table (its human-readable report) otherwise; docs/cli.md lists them.\n");
}

#ifdef OG_HAVE_BUILD_INFO
#include "og_build_info.h"
#else
#define OG_BUILD_COMMIT "unknown"
#define OG_BUILD_TYPE "unknown"
#endif
#ifdef OG_BUILD_SANITIZED
#define OG_BUILD_SAN ", ASan+UBSan"
#else
#define OG_BUILD_SAN ""
#endif
#if defined(__clang__)
#define OG_BUILD_CC "clang " __clang_version__
#elif defined(__GNUC__)
#define OG_BUILD_CC "gcc " __VERSION__
#else
#define OG_BUILD_CC "unknown compiler"
#endif

int og_cmd_version(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        printf("usage: omnigraph version [--json]   (also: omnigraph --version, omnigraph -v)\n\n"
               "Prints the release, the storage format this build reads and writes, and how it was built.\n");
        return OG_EXIT_OK;
    }
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && !json) json = 1;
        else return og_cli_usage("version", "unexpected argument '%s'", argv[i]);
    }
    if (json) {
        printf("{\"version\":\"%s\",\"storage_version\":%d,\"table_format\":\"lance 2.0\","
               "\"commit\":\"%s\",\"build_type\":\"%s\"}\n",
               OG_VERSION_STRING, og_storage_version(), OG_BUILD_COMMIT, OG_BUILD_TYPE);
        return OG_EXIT_OK;
    }
    printf("omnigraph %s\n", OG_VERSION_STRING);
    printf("storage format: omnigraph storage version %d, tables in Lance file format 2.0\n", og_storage_version());
    printf("build: commit %s, %s%s, %s\n", OG_BUILD_COMMIT, OG_BUILD_TYPE[0] ? OG_BUILD_TYPE : "default", OG_BUILD_SAN,
           OG_BUILD_CC);
    return OG_EXIT_OK;
}

og_status og_cli_read_file(const char *path, og_buf *out)
{
    og_status st = og_buf_read_file(out, path);
    if (st != OG_OK) fprintf(stderr, "omnigraph: %s\n", og_error_message());
    return st;
}

int og_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    return 0;
}

int og_cli_usage(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "omnigraph %s: ", verb);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `omnigraph %s --help`)\n", verb);
    va_end(ap);
    return OG_EXIT_USAGE;
}

void og_cli_out(const og_buf *b)
{
    if (b->len) fwrite(b->data, 1, b->len, stdout);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return OG_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        if (argc >= 3 && !strcmp(argv[1], "help") && !strcmp(argv[2], "help")) { /* omnigraph help help */
            if (argc > 3) return og_cli_usage("help", "unexpected argument '%s'", argv[3]);
            printf("usage: omnigraph help [COMMAND [SUBCOMMAND]]\n\n"
                   "Without a command, lists the commands; `omnigraph help COMMAND [SUBCOMMAND]` prints that\n"
                   "command's options, the same as `omnigraph COMMAND [SUBCOMMAND] --help`.\n");
            return OG_EXIT_OK;
        }
        if (argc >= 3 && !strcmp(argv[1], "help")) { /* omnigraph help VERB [SUB] = omnigraph VERB [SUB] --help */
            if (!strcmp(argv[2], "read")) argv[2] = "query"; /* the reference's spellings */
            else if (!strcmp(argv[2], "change")) argv[2] = "mutate";
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (!strcmp(argv[2], commands[i].name)) {
                    char *hv[4] = {argv[2], argc >= 4 ? argv[3] : "--help", "--help", NULL};
                    fflush(stdout);
                    int hrc = commands[i].run(argc >= 4 ? 3 : 2, hv);
                    if (hrc == OG_EXIT_OK) print_example(argv[2]);
                    return hrc;
                }
            fprintf(stderr, "omnigraph help: unknown command '%s'\n\n", argv[2]);
            usage(stderr);
            return OG_EXIT_USAGE;
        }
        usage(stdout);
        return OG_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v")) argv[1] = "version";
    hoist_subcommand(argc, argv); /* `branch --format csv list` = `branch list --format csv` */
    if (og_cli_format_gate(&argc, argv)) return OG_EXIT_USAGE; /* --format F: accepted or refused, never ignored */
    /* --server/--graph/--profile/--yes and config.yaml: a served run, a refusal, or argv for the local verb */
    int scope_rc;
    if (og_cli_scope_dispatch(&argc, &argv, &scope_rc)) return scope_rc;
    /* the reference's spellings (reference-surfaces.md §1.2): read = query, change = mutate */
    if (!strcmp(argv[1], "ingest")) { /* the reference's deprecated spelling of load */
        fprintf(stderr, "omnigraph: warning: `ingest` is deprecated; use `omnigraph load` (same arguments)\n");
        argv[1] = "load";
        return og_cmd_load(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "check")) { /* the reference's alias of lint */
        argv[1] = "lint";
        return og_cmd_lint(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "query") && argc >= 3 && (!strcmp(argv[2], "lint") || !strcmp(argv[2], "check"))) {
        fprintf(stderr, "omnigraph: warning: `query %s` is deprecated; use `omnigraph lint`\n", argv[2]);
        argv[2] = "lint";
        return og_cmd_lint(argc - 2, argv + 2);
    }
    if (!strcmp(argv[1], "read")) return og_cmd_query(argc - 1, argv + 1);
    if (!strcmp(argv[1], "change")) return og_cmd_mutate(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            int wants_help = og_cli_wants_help(argc - 1, argv + 1);
            int crc = commands[i].run(argc - 1, argv + 1);
            if (wants_help && crc == OG_EXIT_OK) print_example(argv[1]);
            return crc;
        }
    const char *names[sizeof commands / sizeof commands[0] + 4];
    size_t nn = 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[nn++] = commands[i].name;
    names[nn++] = "read";
    names[nn++] = "change";
    names[nn++] = "help";
    const char *near = og_typo_nearest(argv[1], names, nn);
    if (near) {
        fprintf(stderr, "omnigraph: unknown command '%s' (did you mean '%s'?)\n", argv[1], near);
        fprintf(stderr, "(run `omnigraph help` for the list)\n");
        return OG_EXIT_USAGE;
    }
    fprintf(stderr, "omnigraph: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return OG_EXIT_USAGE;
}
