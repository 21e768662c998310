/*
 * graph_args.c — shared flag parsing and output helpers of the graph verbs.  See graph_args.h.
 */
#include "cli/graph_args.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "cli/cli.h"
#include "util/typo.h"
#include "cli/output.h"

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
        else if (match(arg, "--message", &iv) || match(arg, "-m", &iv)) common_value = &a->message;
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
        if (arg[0] == '-' && arg[1] != '\0') {
            const char *cands[140] = {"--store", "--branch", "--at", "--snapshot", "--as", "--json", "--quiet", "--help"};
            size_t nc = 8;
            for (size_t f = 0; f < nflags && nc + 2 <= 140; f++) {
                cands[nc++] = flags[f].name;
                cands[nc++] = flags[f].alias;
            }
            char word[128];
            snprintf(word, sizeof word, "%.*s", (int)strcspn(arg, "="), arg);
            const char *near = og_typo_nearest(word, cands, nc);
            if (near) return og_cli_usage(verb, "unknown option '%s' (did you mean %s?)", arg, near);
            return og_cli_usage(verb, "unknown option '%s'", arg);
        }
        if (a->npositional >= max_positional || a->npositional >= 6)
            return og_cli_usage(verb, "unexpected argument '%s'", arg);
        a->positional[a->npositional++] = arg;
    }
    if (a->branch && a->at)
        return og_cli_usage(verb, "--branch and --at name two different states; give one of them");
    if (a->message) { /* the verbs whose writes publish a commit */
        static const char *const writes[] = {"load", "mutate", "branch merge", "schema apply", "optimize",
                                             "branch create"};
        int ok = 0;
        for (size_t k = 0; k < sizeof writes / sizeof writes[0]; k++) ok |= !strcmp(verb, writes[k]);
        if (!ok)
            return og_cli_usage(verb, "-m/--message is the message of a commit or a new branch; `%s` makes neither "
                                      "(it goes with load, mutate, branch merge, schema apply, optimize, branch create)",
                                verb);
    }
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

void og_cli_print_precondition_body(const char *branch, const char *expected, const char *actual)
{
    char msg[512];
    snprintf(msg, sizeof msg, "branch '%s' head is not %s", branch ? branch : "main", expected);
    json_t *o = json_pack("{s:s,s:{s:s,s:o}}", "error", msg, "precondition_failure", "expected", expected, "actual",
                          actual && *actual ? json_string(actual) : json_null());
    char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (s) printf("%s\n", s);
    free(s);
    json_decref(o);
}

void og_cli_print_precondition(og_db *db, const char *branch, const char *expected)
{
    char head[64] = "";
    if (og_db_resolve_commit(db, branch ? branch : "main", head, sizeof head) != OG_OK) head[0] = 0;
    og_cli_print_precondition_body(branch, expected, head);
}

int og_cli_fail(const char *verb, og_status st)
{
    const char *msg = og_error_message();
    int len = (int)strlen(msg);
    while (len > 0 && msg[len - 1] == '\n') len--; /* one line break, not a blank line */
    fprintf(stderr, "omnigraph %s: %s: %.*s\n", verb, og_status_name(st), len, msg);
    return st == OG_ERR_PRECONDITION_FAILED ? OG_EXIT_PRECONDITION : OG_EXIT_FAIL;
}

og_db *og_graph_args_open(og_graph_args *a, const char *root)
{
    og_open_opts o = {.actor = a->actor};
    og_db *db;
    /* branch create keeps its -m with the branch (cmd_branch.c), not on a commit */
    og_status st = a->message && strcmp(a->verb, "branch create") ? og_set_thread_commit_message(a->message) : OG_OK;
    if (st) {
        og_cli_fail(a->verb, st);
        return NULL;
    }
    st = og_db_open(&db, root, &o);
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

/* "2026-12-03T14:18:45.012Z" -> epoch microseconds (0 when unreadable). */
static json_int_t iso_us(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int ms = 0;
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                     &tm.tm_sec, &ms) < 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (json_int_t)timegm(&tm) * 1000000 + (json_int_t)ms * 1000;
}

static json_t *str_or_null(const char *s) { return s && *s ? json_string(s) : json_null(); }

void og_cli_commit_add_reference(json_t *c, const char *branch, json_int_t version)
{
    json_t *parents = json_object_get(c, "parents");
    json_t *created = json_object_get(c, "created_at");
    if (json_is_string(created)) { /* ours is ISO 8601; the reference's is epoch microseconds */
        json_object_set(c, "created_at_utc", created);
        json_object_set_new(c, "created_at", json_integer(iso_us(json_string_value(created))));
    }
    json_object_set(c, "graph_commit_id", json_object_get(c, "id"));
    json_object_set_new(c, "graph_branch", str_or_null(branch));
    json_t *depth = json_object_get(c, "depth"); /* og_db_commit_list / _show: first-parent depth */
    json_object_set_new(c, "graph_manifest_version", json_integer(json_is_integer(depth) ? json_integer_value(depth) : version));
    json_object_set_new(c, "parent_commit_id", str_or_null(json_string_value(json_array_get(parents, 0))));
    json_object_set_new(c, "merged_parent_commit_id", str_or_null(json_string_value(json_array_get(parents, 1))));
    json_object_set_new(c, "actor_id", str_or_null(json_string_value(json_object_get(c, "actor"))));
    json_object_set_new(c, "actor_via", str_or_null(json_string_value(json_object_get(c, "actor_via"))));
}

json_t *og_cli_commit_output(og_db *db, const char *commit, const char *branch)
{
    char *text = NULL;
    json_t *c = db && og_db_commit_show(&text, db, commit) == OG_OK ? json_loads(text, 0, NULL) : NULL;
    og_free(text);
    json_t *parents = json_object_get(c, "parents");
    json_t *o = json_object();
    json_object_set_new(o, "graph_commit_id", json_string(commit));
    json_object_set_new(o, "graph_branch", str_or_null(branch));
    json_object_set_new(o, "graph_manifest_version", json_integer(json_integer_value(json_object_get(c, "depth"))));
    json_object_set_new(o, "parent_commit_id", str_or_null(json_string_value(json_array_get(parents, 0))));
    json_object_set_new(o, "merged_parent_commit_id", str_or_null(json_string_value(json_array_get(parents, 1))));
    json_object_set_new(o, "actor_id", str_or_null(json_string_value(json_object_get(c, "actor"))));
    json_object_set_new(o, "actor_via", str_or_null(json_string_value(json_object_get(c, "actor_via"))));
    json_object_set_new(o, "created_at", json_integer(iso_us(json_string_value(json_object_get(c, "created_at")))));
    json_decref(c);
    return o;
}

json_int_t og_cli_commit_depth(og_db *db, const char *commit)
{
    char *text = NULL;
    json_t *c = db && commit && og_db_commit_show(&text, db, commit) == OG_OK ? json_loads(text, 0, NULL) : NULL;
    og_free(text);
    json_int_t d = json_integer_value(json_object_get(c, "depth"));
    json_decref(c);
    return d;
}

json_t *og_cli_commit_json(og_db *db, const og_receipt *r)
{
    if (!r->published) return json_null();
    json_t *o = og_cli_commit_output(db, r->commit, r->branch);
    json_object_set_new(o, "attempts", json_integer(r->attempts));
    return o;
}

/* Per type, the records of an NDJSON file: nodes and edges as [{"name","entities_loaded"}]
 * sorted by name. */
static void count_types(const char *path, json_t *nodes, json_t *edges)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) return;
    json_t *counts = json_object();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        json_t *rec = json_loadb(line, (size_t)n, JSON_DECODE_ANY, NULL);
        const char *t = json_string_value(json_object_get(rec, "type")), *e = json_string_value(json_object_get(rec, "edge"));
        if (t || e) {
            char key[300];
            snprintf(key, sizeof key, "%c%s", t ? 'n' : 'e', t ? t : e);
            json_object_set_new(counts, key, json_integer(json_integer_value(json_object_get(counts, key)) + 1));
        }
        json_decref(rec);
    }
    free(line);
    fclose(f);
    const char **keys = malloc(json_object_size(counts) * sizeof *keys);
    size_t nk = 0;
    const char *key;
    json_t *v;
    json_object_foreach(counts, key, v) keys[nk++] = key;
    for (size_t i = 1; i < nk; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *x = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = x;
        }
    for (size_t i = 0; i < nk; i++)
        json_array_append_new(keys[i][0] == 'n' ? nodes : edges,
                              json_pack("{s:s,s:O}", "name", keys[i] + 1, "entities_loaded", json_object_get(counts, keys[i])));
    free(keys);
    json_decref(counts);
}

/* The data rows of a CSV file: its records (RFC 4180: a line break inside quotes is data)
 * less the header; blank lines are not records. */
static json_int_t csv_rows(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    json_int_t records = 0;
    int in_quote = 0, filled = 0, c;
    while ((c = getc(f)) != EOF) {
        if (c == '"') in_quote = !in_quote;
        if (c == '\n' && !in_quote) {
            records += filled;
            filled = 0;
        } else if (c != '\r') {
            filled = 1;
        }
    }
    records += filled;
    fclose(f);
    return records > 0 ? records - 1 : 0;
}

/* Per type, the rows of load --csv files of a named type, under the kind the snapshot gives
 * that type; a file whose rows name their types (:LABEL / :TYPE) is not split. */
static void count_csv_types(og_db *db, const char *branch, const og_cli_write_info *w, json_t *nodes, json_t *edges)
{
    char *snap = NULL;
    og_read_opts at = {branch, NULL};
    if (og_db_snapshot(&snap, db, &at) != OG_OK) return;
    json_t *root = json_loads(snap, 0, NULL), *tables = json_object_get(root, "tables"), *t;
    og_free(snap);
    size_t i;
    json_array_foreach(tables, i, t)
    {
        const char *name = json_string_value(json_object_get(t, "type"));
        json_int_t n = 0;
        int any = 0;
        for (size_t k = 0; name && k < w->ncsv; k++)
            if (w->csv[k].type && !strcmp(w->csv[k].type, name)) n += csv_rows(w->csv[k].path), any = 1;
        if (!any) continue;
        int edge = json_string_value(json_object_get(t, "kind")) && !strcmp(json_string_value(json_object_get(t, "kind")), "edge");
        json_array_append_new(edge ? edges : nodes, json_pack("{s:s,s:I}", "name", name, "entities_loaded", n));
    }
    json_decref(root);
}

void og_cli_print_receipt(const og_graph_args *a, og_db *db, const og_receipt *r, int load, const og_cli_write_info *w)
{
    int fmt = a->format ? a->format : a->json ? OG_CLI_JSON : OG_CLI_TEXT;
    if (fmt == OG_CLI_TEXT) {
        if (a->quiet) return; /* --quiet: a write's summary line is informational */
        if (!r->published)
            printf("no changes (nothing published)\n");
        else if (load)
            printf("loaded %llu records (%llu inserted, %llu updated) as commit %s on %s\n",
                   (unsigned long long)r->records, (unsigned long long)r->inserted, (unsigned long long)r->updated,
                   r->commit, r->branch);
        else
            printf("affected %llu nodes, %llu edges in commit %s on %s\n", (unsigned long long)r->affected_nodes,
                   (unsigned long long)r->affected_edges, r->commit, r->branch);
        if (load && r->embed_touched)
            fprintf(stderr, "note: a load never generates @embed vectors; fill missing ones with "
                            "`omnigraph embed` (docs/embeddings.md)\n");
        return;
    }
    const char *branch = a->branch ? a->branch : "main";
    json_t *o = json_object();
    if (load) {
        json_t *nodes = json_array(), *edges = json_array();
        if (w && w->csv) count_csv_types(db, branch, w, nodes, edges);
        else count_types(w ? w->data_path : NULL, nodes, edges);
        json_object_set_new(o, "branch", json_string(branch));
        json_object_set_new(o, "base_branch", str_or_null(w ? w->from : NULL));
        json_object_set_new(o, "branch_created", json_boolean(w && w->branch_created));
        json_object_set_new(o, "mode", str_or_null(w ? w->mode : NULL));
        json_object_set_new(o, "nodes", nodes);
        json_object_set_new(o, "edges", edges);
        json_object_set_new(o, "total_entities", json_integer((json_int_t)r->records));
        json_object_set_new(o, "embedding_generation", r->embed_touched ? json_string("unsupported") : json_null());
    } else {
        json_object_set_new(o, "query_name", str_or_null(w ? w->query_name : NULL));
        json_object_set_new(o, "branch", json_string(branch));
        json_object_set_new(o, "affected_nodes", json_integer((json_int_t)r->affected_nodes));
        json_object_set_new(o, "affected_edges", json_integer((json_int_t)r->affected_edges));
        json_object_set_new(o, "inserted", json_integer((json_int_t)r->inserted));
        json_object_set_new(o, "updated", json_integer((json_int_t)r->updated));
        json_object_set_new(o, "deleted", json_integer((json_int_t)r->deleted));
    }
    json_object_set_new(o, "actor_id", str_or_null(a->actor));
    json_object_set_new(o, "commit", og_cli_commit_json(db, r));
    if (load) {
        json_object_set_new(o, "records", json_integer((json_int_t)r->records));
        json_object_set_new(o, "inserted", json_integer((json_int_t)r->inserted));
        json_object_set_new(o, "updated", json_integer((json_int_t)r->updated));
    }
    static const char *load_cols[] = {"commit.graph_commit_id", "branch", "mode", "total_entities", "inserted", "updated"};
    static const char *mut_cols[] = {"commit.graph_commit_id", "branch", "query_name", "affected_nodes", "affected_edges"};
    og_cli_print_records(fmt, o, NULL, load ? load_cols : mut_cols, load ? 6 : 5);
    json_decref(o);
}

int og_cli_check_sets(const char *verb, const char *const *sets, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(sets[i], '=');
        char nm[128];
        if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof nm)
            return og_cli_usage(verb, "--set takes NAME=VALUE, got '%s'", sets[i]);
        memcpy(nm, sets[i], (size_t)(eq - sets[i]));
        nm[eq - sets[i]] = 0;
        if (og_settings_check(nm, eq + 1) != OG_OK) return og_cli_usage(verb, "--set: %s", og_error_message());
    }
    return 0;
}
