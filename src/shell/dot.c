/*
 * dot.c — the dot commands of `omnigraph shell` (docs/shell.md "Dot commands"): everything a
 * person types that is not a query — switch branch, travel in time, set parameters, change
 * the output, read a file, leave.  Each one is a few lines over the backend (backend.h).
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/session.h"
#include "shell/shell.h"

typedef int (*dot_fn)(og_shell *s, const char *arg);

typedef struct dot_cmd {
    const char *name, *args, *help;
    dot_fn run;
} dot_cmd;

#define fail(s, ...) (og_shell_error(s, __VA_ARGS__), 1)

static int dot_help(og_shell *s, const char *arg);

/* ---- .schema [TYPE] ------------------------------------------------------------------------ */

/* The declaration of `name` in .pg text: from its `node|edge|interface NAME` line to the brace
 * that closes it (or the end of that line when it has no body). */
static int print_decl(const char *src, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = src; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        static const char *const kinds[] = {"node ", "edge ", "interface "};
        for (int k = 0; k < 3; k++) {
            size_t kl = strlen(kinds[k]);
            if (strncmp(q, kinds[k], kl) != 0) continue;
            const char *n = q + kl;
            while (*n == ' ') n++;
            if (strncmp(n, name, nl) != 0 || isalnum((unsigned char)n[nl]) || n[nl] == '_') continue;
            int depth = 0, opened = 0;
            const char *e = p;
            for (; *e; e++) {
                if (*e == '{') depth++, opened = 1;
                else if (*e == '}' && --depth == 0 && opened) {
                    e++;
                    break;
                } else if (*e == '\n' && !opened) break;
            }
            printf("%.*s\n", (int)(e - p), p);
            return 1;
        }
    }
    return 0;
}

static int dot_schema(og_shell *s, const char *arg)
{
    og_shell_target t = og_shell_target_now(s);
    char *src = NULL;
    og_status st = s->be.ops->schema_source(s->be.self, &t, &src);
    if (st) {
        og_shell_print_failure(s, st);
        return 1;
    }
    if (!*arg) {
        fputs(src, stdout);
        if (*src && src[strlen(src) - 1] != '\n') putchar('\n');
        s->be.ops->free(src);
        return 0;
    }
    const og_shell_type *ty = og_shell_names_type(&s->names, arg, strlen(arg));
    int found = ty && print_decl(src, ty->name);
    s->be.ops->free(src);
    if (!found) return fail(s, "no type %s in the schema (.schema lists it whole)", arg);
    if (ty->kind == 0) { /* a node: the edges that reach it, which its block does not show */
        for (size_t i = 0; i < s->names.ntypes; i++) {
            const og_shell_type *e = &s->names.types[i];
            if (e->kind == 1 && ((e->from && !strcmp(e->from, ty->name)) || (e->to && !strcmp(e->to, ty->name))))
                printf("-- edge %s: %s -> %s\n", e->name, e->from, e->to);
        }
    }
    return 0;
}

/* ---- branches and time travel --------------------------------------------------------------- */

static int dot_branches(og_shell *s, const char *arg)
{
    (void)arg;
    char *text = NULL;
    og_status st = s->be.ops->branches(s->be.self, &text);
    if (st) {
        og_shell_print_failure(s, st);
        return 1;
    }
    json_t *doc = json_loads(text, 0, NULL), *b;
    s->be.ops->free(text);
    size_t i;
    json_array_foreach(json_object_get(doc, "branches"), i, b) {
        const char *name = json_string_value(json_object_get(b, "name"));
        const char *head = json_string_value(json_object_get(b, "head"));
        if (!name) continue;
        printf("%c %-24s %s\n", !strcmp(name, s->branch) ? '*' : ' ', name, head ? head : "");
    }
    json_decref(doc);
    return 0;
}

static int branch_exists(og_shell *s, const char *name)
{
    og_shell_refresh_names(s);
    for (size_t i = 0; i < s->names.branches.n; i++)
        if (!strcmp(s->names.branches.v[i], name)) return 1;
    return 0;
}

static int dot_branch(og_shell *s, const char *arg)
{
    if (!*arg) {
        printf("%s\n", s->branch);
        return 0;
    }
    if (strlen(arg) >= sizeof s->branch || !branch_exists(s, arg))
        return fail(s, "no branch %s (.branches lists them; `omnigraph branch create` makes one)", arg);
    snprintf(s->branch, sizeof s->branch, "%s", arg);
    s->commit[0] = 0; /* a branch switch reads its head */
    og_shell_refresh_names(s);
    printf("branch %s\n", s->branch);
    return 0;
}

static int dot_at(og_shell *s, const char *arg)
{
    if (!*arg) {
        s->commit[0] = 0;
        og_shell_refresh_names(s);
        printf("reading the head of %s\n", s->branch);
        return 0;
    }
    char id[32];
    og_status st = s->be.ops->resolve(s->be.self, arg, id);
    if (st) {
        og_shell_print_failure(s, st);
        return 1;
    }
    snprintf(s->commit, sizeof s->commit, "%s", id);
    og_shell_refresh_names(s);
    printf("reading commit %s (`.at` alone returns to the head of %s)\n", s->commit, s->branch);
    return 0;
}

/* ---- settings ------------------------------------------------------------------------------- */

static int dot_params(og_shell *s, const char *arg)
{
    if (!*arg) {
        printf("%s\n", s->params ? s->params : "{}");
        return 0;
    }
    json_error_t je;
    json_t *j = json_loads(arg, 0, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        return fail(s, ".params takes a JSON object, such as {\"name\": \"Ada\"}: %s", j ? "not an object" : je.text);
    }
    free(s->params);
    s->params = json_object_size(j) ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    og_shell_names_set_params(&s->names, s->params);
    return 0;
}

static int dot_format(og_shell *s, const char *arg)
{
    if (!*arg) printf("%s\n", s->fmt == OG_FORMAT_JSON ? "json" : s->fmt == OG_FORMAT_CSV ? "csv" : "table");
    else if (!strcmp(arg, "table")) s->fmt = OG_FORMAT_TABLE;
    else if (!strcmp(arg, "json")) s->fmt = OG_FORMAT_JSON;
    else if (!strcmp(arg, "csv")) s->fmt = OG_FORMAT_CSV;
    else return fail(s, ".format is table, json or csv, not %s", arg);
    return 0;
}

static int on_off(og_shell *s, const char *what, const char *arg, int *v)
{
    if (!*arg) printf("%s\n", *v ? "on" : "off");
    else if (!strcmp(arg, "on")) *v = 1;
    else if (!strcmp(arg, "off")) *v = 0;
    else return fail(s, "%s is on or off", what);
    return 0;
}

static int dot_timer(og_shell *s, const char *arg) { return on_off(s, ".timer", arg, &s->timer); }

static int dot_maxrows(og_shell *s, const char *arg)
{
    if (!*arg) {
        printf("%ld\n", s->maxrows);
        return 0;
    }
    char *end;
    errno = 0;
    long n = strtol(arg, &end, 10);
    if (*end || n < 0 || errno) return fail(s, ".maxrows takes a number of rows (0 = all), not %s", arg);
    s->maxrows = n;
    return 0;
}

static int dot_explain(og_shell *s, const char *arg)
{
    (void)arg;
    s->explain_next = 1;
    if (s->interactive) printf("the next query is explained, not run\n");
    return 0;
}

static int dot_read(og_shell *s, const char *arg)
{
    if (!*arg) return fail(s, "%s", ".read takes a file name");
    return og_shell_read_file(s, arg);
}

static int dot_quit(og_shell *s, const char *arg)
{
    (void)arg;
    s->quit = 1;
    return 0;
}

static const dot_cmd cmds[] = {
    {".help", "", "this list", dot_help},
    {".schema", "[TYPE]", "the schema, or one type's declaration (and a node's edges)", dot_schema},
    {".branches", "", "the branches and their heads (* = the current one)", dot_branches},
    {".branch", "[NAME]", "switch to branch NAME (reads its head; mutations write it)", dot_branch},
    {".at", "[COMMIT]", "read commit COMMIT (an id, a prefix, a branch, REF~N); alone: the head again", dot_at},
    {".params", "[JSON]", "parameters of the next queries, a JSON object ({} clears)", dot_params},
    {".format", "[table|json|csv]", "how rows print", dot_format},
    {".timer", "[on|off]", "print how long each statement took", dot_timer},
    {".maxrows", "[N]", "rows printed before the rest is cut with a note (0 = all)", dot_maxrows},
    {".explain", "", "show the plan of the next query instead of running it", dot_explain},
    {".read", "FILE", "run the statements and commands of FILE", dot_read},
    {".quit", "", "leave (also .exit and Ctrl-D)", dot_quit},
    {".exit", "", NULL, dot_quit},
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

const char *og_shell_dot_name(size_t i) { return i < NCMDS ? cmds[i].name : NULL; }

static int dot_help(og_shell *s, const char *arg)
{
    (void)s;
    (void)arg;
    printf("Type a query (query name(...) { ... }); it runs when its braces close, or at `;`.\n"
           "Mutations (insert, update, delete) run as one commit on the current branch.\n"
           "Tab completes keywords, types, $var.properties, parameters and branch names.\n"
           "Ctrl-C cancels a running query; Ctrl-D or .quit leaves.\n\n");
    for (size_t i = 0; i < NCMDS; i++) {
        if (!cmds[i].help) continue;
        char head[40];
        snprintf(head, sizeof head, "%s %s", cmds[i].name, cmds[i].args);
        printf("  %-26s %s\n", head, cmds[i].help);
    }
    return 0;
}

int og_shell_dot(og_shell *s, const char *line)
{
    while (*line == ' ' || *line == '\t') line++;
    size_t nl = 0;
    while (line[nl] && !isspace((unsigned char)line[nl])) nl++;
    char arg[4096];
    const char *a = line + nl;
    while (*a == ' ' || *a == '\t') a++;
    snprintf(arg, sizeof arg, "%s", a);
    for (size_t k = strlen(arg); k > 0 && isspace((unsigned char)arg[k - 1]); k--) arg[k - 1] = 0;
    for (size_t i = 0; i < NCMDS; i++)
        if (strlen(cmds[i].name) == nl && !strncmp(cmds[i].name, line, nl)) return cmds[i].run(s, arg);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(nl < 60 ? nl : 60), line);
    return fail(s, "unknown command %s (.help lists the commands)", name);
}
