/*
 * cmd_schema.c — `omnigraph schema check <file.pg> [--json]` and
 * `omnigraph schema plan --schema <new.pg> --from <old.pg> [--json]` (offline: both sides
 * are .pg files; the store-backed plan/apply comes with the engine).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compiler/migrate.h"
#include "compiler/schema.h"

static const char *check_help =
    "usage: omnigraph schema check <file.pg> [--json]\n"
    "\n"
    "Parses and checks a schema.  Valid: exit 0 and a summary (types, properties,\n"
    "constraints, index intents).  Invalid: exit 1 and every error as\n"
    "file:line:col: message, each followed by a hint.\n"
    "  --json   print {\"ok\":...,\"summary\":{...}} or {\"ok\":false,\"errors\":[...]}\n";

static const char *plan_help =
    "usage: omnigraph schema plan --schema <new.pg> --from <old.pg> [--json]   (offline)\n"
    "       omnigraph schema plan --schema <new.pg> [--branch B] [--json] ROOT  (against a graph)\n"
    "\n"
    "Plans the migration from the schema in --from (taken as the accepted schema, with\n"
    "fresh identities) to the desired schema in --schema.  Prints the ordered steps;\n"
    "unsupported steps are marked with [OG-XXX-NNN] codes where the reference has one.\n"
    "Exit 0 when the plan is fully supported (or empty), 1 when a step is unsupported or\n"
    "either schema is invalid.\n"
    "  --json   print {\"supported\":bool,\"steps\":[...]}\n";

static const char *schema_help =
    "usage: omnigraph schema check|plan|apply|show ...\n"
    "\n"
    "  check <file.pg> [--json]                          check a schema file\n"
    "  plan --schema <new.pg> --from <old.pg> [--json]   plan a migration (offline)\n"
    "  plan --schema <new.pg> ROOT [--json]              plan a migration of a graph\n"
    "  apply --schema <new.pg> ROOT [--allow-data-loss]  apply it as one commit\n"
    "  show ROOT                                         print a graph's schema source (alias: get)\n";

static json_t *diags_json(const og_diags *d)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < d->len; i++) {
        const og_diag *g = &d->v[i];
        json_t *o = json_object();
        json_object_set_new(o, "severity", json_string(g->warning ? "warning" : "error"));
        json_object_set_new(o, "file", json_string(g->file ? g->file : ""));
        json_object_set_new(o, "line", json_integer(g->line));
        json_object_set_new(o, "column", json_integer(g->col));
        json_object_set_new(o, "message", json_string(g->message ? g->message : ""));
        json_object_set_new(o, "hint", g->hint ? json_string(g->hint) : json_null());
        json_array_append_new(arr, o);
    }
    return arr;
}

static void print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (s) {
        printf("%s\n", s);
        free(s);
    }
    json_decref(j);
}

static void print_diags(FILE *f, const og_diags *d)
{
    og_buf b = OG_BUF_INIT;
    for (size_t i = 0; i < d->len; i++) og_diag_format(&b, &d->v[i]);
    if (b.len) fwrite(b.data, 1, b.len, f);
    og_buf_free(&b);
}

static int schema_check(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(check_help, stdout);
        return OG_EXIT_OK;
    }
    const char *file = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return og_cli_usage("schema check", "unknown option '%s'", argv[i]);
        else if (file) return og_cli_usage("schema check", "unexpected argument '%s'", argv[i]);
        else file = argv[i];
    }
    if (!file) return og_cli_usage("schema check", "missing <file.pg>");
    og_buf text = OG_BUF_INIT;
    if (og_cli_read_file(file, &text) != OG_OK) {
        og_buf_free(&text);
        return OG_EXIT_FAIL;
    }
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&cat, file, (const char *)text.data, text.len, &d);
    int rc = st == OG_OK ? OG_EXIT_OK : OG_EXIT_FAIL;
    if (st == OG_ERR_NOMEM) fprintf(stderr, "omnigraph: out of memory\n");
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "ok", json_boolean(st == OG_OK));
        json_object_set_new(o, "file", json_string(file));
        if (cat) {
            og_buf s = OG_BUF_INIT;
            og_schema_summary_json(&s, cat);
            json_t *sum = json_loadb((const char *)s.data, s.len, 0, NULL);
            og_buf_free(&s);
            json_object_set_new(o, "summary", sum ? sum : json_null());
        }
        json_object_set_new(o, st == OG_OK ? "warnings" : "errors", diags_json(&d));
        print_json(o);
    } else if (cat) {
        print_diags(stderr, &d);
        og_buf s = OG_BUF_INIT;
        og_buf_printf(&s, "%s: ok\n", file);
        og_schema_summary(&s, cat);
        og_cli_out(&s);
        og_buf_free(&s);
    } else {
        print_diags(stderr, &d);
        size_t n = og_diags_errors(&d);
        fprintf(stderr, "%s: %zu error%s\n", file, n, n == 1 ? "" : "s");
    }
    og_catalog_free(cat);
    og_diags_free(&d);
    og_buf_free(&text);
    return rc;
}

static int schema_plan(int argc, char **argv)
{
    if (og_cli_wants_help(argc, argv)) {
        fputs(plan_help, stdout);
        return OG_EXIT_OK;
    }
    const char *to = NULL, *from = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--from")) from = argv[i];
    if (!from) return og_cmd_schema_graph(argc, argv, 0); /* against a graph: cmd_graph.c */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--schema") && i + 1 < argc) to = argv[++i];
        else if (!strcmp(argv[i], "--from") && i + 1 < argc) from = argv[++i];
        else if (!strcmp(argv[i], "--schema") || !strcmp(argv[i], "--from"))
            return og_cli_usage("schema plan", "%s needs a file argument", argv[i]);
        else return og_cli_usage("schema plan", "unexpected argument '%s'", argv[i]);
    }
    if (!to) return og_cli_usage("schema plan", "--schema <new.pg> is required");
    og_buf old_text = OG_BUF_INIT, new_text = OG_BUF_INIT;
    int rc = OG_EXIT_FAIL;
    og_catalog *accepted = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_migration_plan plan;
    memset(&plan, 0, sizeof plan);
    if (og_cli_read_file(from, &old_text) != OG_OK || og_cli_read_file(to, &new_text) != OG_OK) goto done;
    og_status st = og_schema_compile(&accepted, from, (const char *)old_text.data, old_text.len, &d);
    if (st == OG_OK) {
        og_diags_free(&d); /* warnings of the old schema (inert hints) are not interesting here */
        st = og_migration_plan_build(&plan, accepted, to, (const char *)new_text.data, new_text.len, &d);
    }
    if (st != OG_OK) {
        if (json) {
            json_t *o = json_object();
            json_object_set_new(o, "supported", json_false());
            json_object_set_new(o, "errors", diags_json(&d));
            print_json(o);
        } else {
            print_diags(stderr, &d);
            if (st == OG_ERR_NOMEM) fprintf(stderr, "omnigraph: out of memory\n");
        }
        goto done;
    }
    og_buf out = OG_BUF_INIT;
    if (json) {
        og_migration_plan_json(&out, &plan);
        og_buf_append_byte(&out, '\n');
    } else {
        print_diags(stderr, &d);
        og_migration_plan_render(&out, &plan);
    }
    og_cli_out(&out);
    og_buf_free(&out);
    rc = plan.supported ? OG_EXIT_OK : OG_EXIT_FAIL;
done:
    og_migration_plan_free(&plan);
    og_catalog_free(accepted);
    og_diags_free(&d);
    og_buf_free(&old_text);
    og_buf_free(&new_text);
    return rc;
}

int og_cmd_schema(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(schema_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? OG_EXIT_USAGE : OG_EXIT_OK;
    }
    if (!strcmp(argv[1], "check")) return schema_check(argc - 1, argv + 1);
    if (!strcmp(argv[1], "plan")) return schema_plan(argc - 1, argv + 1);
    if (!strcmp(argv[1], "show") || !strcmp(argv[1], "get")) /* `get`: the reference's alias */
        return og_cmd_schema_show(argc - 1, argv + 1);     /* cmd_graph.c */
    if (!strcmp(argv[1], "apply")) return og_cmd_schema_graph(argc - 1, argv + 1, 1); /* cmd_graph.c */
    return og_cli_usage("schema", "unknown subcommand '%s' (expected check or plan)", argv[1]);
}
