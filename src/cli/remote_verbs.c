/*
 * remote_verbs.c — the graph verbs run against omnigraph-server (remote.h): the same flags,
 * the same stdout, exit status and error class as the embedded verb, over the HTTP API of
 * docs/server.md only.
 *
 * Why a second implementation of each verb's printing: the embedded verbs print from og_db
 * handles and og_rows; here only the server's JSON exists, so each served verb turns that
 * JSON back into the embedded verb's output (tests/cli/remote-parity.sh runs one command
 * sequence both ways and diffs them).  What the server does not offer (a route, a flag) is
 * refused with its reason, never ignored (docs/cli.md "Remote mode and operator config").
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/graph_args.h"
#include "cli/output.h"
#include "cli/remote.h"
#include "util/error.h"

/* ---- requests, errors, echo ------------------------------------------------------------------ */

/* One request to /graphs/{graph}PATH; a transport failure is printed ("io") and -1 returned. */
static int call(og_remote *r, const char *verb, const char *method, const char *path, json_t *body, const char *upload,
                FILE *sink, og_http_resp *resp)
{
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/graphs/");
    og_http_escape(&p, r->graph);
    og_buf_append_str(&p, path);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    const char *ctype = upload ? "application/x-ndjson" : body ? "application/json" : NULL;
    int rc = og_http_request(r, method, og_buf_cstr(&p), ctype, text, upload, sink, resp);
    free(text);
    og_buf_free(&p);
    if (rc) fprintf(stderr, "omnigraph %s: io: %s\n", verb, resp->error);
    return rc;
}

static int starts_digit_colon(const char *s)
{ /* ":12:34: " after a source name */
    if (*s++ != ':') return 0;
    int d = 0;
    while (*s >= '0' && *s <= '9') s++, d++;
    if (!d || *s++ != ':') return 0;
    d = 0;
    while (*s >= '0' && *s <= '9') s++, d++;
    return d && *s == ':';
}

/* The og_status name the embedded verb would print for this answer. */
static const char *error_class(long status, const char *code, const char *msg)
{
    switch (status) {
    case 401: return "auth";
    case 403: return "auth";
    case 404: return "not_found";
    case 409: return strstr(msg, "already exists") ? "already_exists" : "conflict";
    case 412: return "precondition_failed";
    case 413: return "limit";
    case 429: return "throttled";
    case 400: {
        /* a source position "<query>:L:C: " then a T-code is a type error, else a parse error */
        const char *lt = strchr(msg, '<');
        const char *gt = lt ? strchr(lt, '>') : NULL;
        if (lt == msg && gt && starts_digit_colon(gt + 1)) {
            const char *p = strchr(strchr(gt + 2, ':') + 1, ':') + 1;
            while (*p == ' ') p++;
            return p[0] == 'T' && p[1] >= '0' && p[1] <= '9' ? "type" : "parse";
        }
        if (strstr(msg, "constraint")) return "constraint";
        return "invalid";
    }
    default: (void)code; return status >= 500 ? "internal" : "invalid";
    }
}

/* The class the server named (Omnigraph-Error-Class, docs/server.md "Errors"), else the one
 * the status and message imply (an older or foreign server). */
static const char *served_class(const og_http_resp *resp, const char *code, const char *msg)
{
    static _Thread_local char cls[32];
    if (og_http_header(resp, "Omnigraph-Error-Class", cls, sizeof cls) && cls[0] &&
        strspn(cls, "abcdefghijklmnopqrstuvwxyz_") == strlen(cls))
        return cls;
    return error_class(resp->status, code ? code : "", msg);
}

char *og_cli_remote_error_text(const og_http_resp *resp)
{
    json_t *j = json_loads((const char *)resp->body.data, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "error"));
    const char *code = json_string_value(json_object_get(j, "code"));
    char fallback[64];
    if (!msg) {
        snprintf(fallback, sizeof fallback, "the server answered HTTP %ld", resp->status);
        msg = fallback;
    }
    int len = (int)strlen(msg);
    while (len > 0 && msg[len - 1] == '\n') len--;
    og_buf b = OG_BUF_INIT;
    og_buf_printf(&b, "%s: %.*s", served_class(resp, code, msg), len, msg);
    og_buf_append_byte(&b, 0);
    json_decref(j);
    return (char *)b.data;
}

int og_cli_remote_fail(const char *verb, const og_http_resp *resp)
{
    json_t *j = json_loads((const char *)resp->body.data, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "error"));
    const char *code = json_string_value(json_object_get(j, "code"));
    char fallback[64];
    if (!msg) {
        snprintf(fallback, sizeof fallback, "the server answered HTTP %ld", resp->status);
        msg = fallback;
    }
    int len = (int)strlen(msg);
    while (len > 0 && msg[len - 1] == '\n') len--;
    fprintf(stderr, "omnigraph %s: %s: %.*s\n", verb, served_class(resp, code, msg), len, msg);
    json_decref(j);
    return resp->status == 412 ? OG_EXIT_PRECONDITION : OG_EXIT_FAIL;
}

/* An error answer as og_err's status and message (the served shell's backend, shell_remote.c). */
og_status og_cli_remote_error(const og_http_resp *resp)
{
    static const struct { const char *name; og_status st; } classes[] = {
        {"auth", OG_ERR_AUTH}, {"not_found", OG_ERR_NOT_FOUND}, {"already_exists", OG_ERR_ALREADY_EXISTS},
        {"conflict", OG_ERR_CONFLICT}, {"precondition_failed", OG_ERR_PRECONDITION_FAILED}, {"limit", OG_ERR_LIMIT},
        {"throttled", OG_ERR_THROTTLED}, {"type", OG_ERR_TYPE}, {"parse", OG_ERR_PARSE},
        {"constraint", OG_ERR_CONSTRAINT}, {"internal", OG_ERR_INTERNAL}, {"unavailable", OG_ERR_UNAVAILABLE},
    };
    json_t *j = json_loads((const char *)resp->body.data, 0, NULL);
    const char *msg = json_string_value(json_object_get(j, "error"));
    const char *code = json_string_value(json_object_get(j, "code"));
    char fallback[64];
    if (!msg) {
        snprintf(fallback, sizeof fallback, "the server answered HTTP %ld", resp->status);
        msg = fallback;
    }
    const char *cls = error_class(resp->status, code ? code : "", msg);
    og_status st = OG_ERR_INVALID;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (!strcmp(classes[i].name, cls)) st = classes[i].st;
    int len = (int)strlen(msg);
    while (len > 0 && msg[len - 1] == '\n') len--;
    og_err(st, "%.*s", len, msg);
    json_decref(j);
    return st;
}

og_status og_cli_remote_render_read(json_t *j, og_format f, og_buf *out)
{
    json_t *t = json_object_get(j, "target");
    json_t *ts = json_object_get(t, json_object_get(t, "snapshot") ? "snapshot" : "branch");
    if (ts) json_object_set_new(j, "target", json_incref(ts));
    char *text = NULL;
    size_t n = 0;
    og_status st = og_read_output_render(&text, &n, j, f);
    if (st == OG_OK) og_buf_append(out, text, n);
    og_free(text);
    return st;
}
/* "omnigraph VERB → graph G on SERVER (served)" on stderr unless --quiet (every served write). */
static void echo(const og_remote *r, const char *verb)
{
    if (r->quiet) return;
    fprintf(stderr, "omnigraph %s \xe2\x86\x92 graph %s on %s (served%s%s)\n", verb, r->graph, r->url, r->name ? ", " : "",
            r->name ? r->name : "");
}

static void print_pretty(json_t *o)
{
    char *s = og_json_text(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) printf("%s\n", s);
    og_free(s);
}

/* og_json_read, not json_loads: a result's U64 above 2^63-1 is a bare number jansson refuses. */
static json_t *parse_body(const og_http_resp *resp)
{
    return resp->body.data ? og_json_read((const char *)resp->body.data, resp->body.len) : NULL;
}

/* A lost --if-commit under --json: the server's 412 body in the shape the embedded verb
 * prints (graph_args.h og_cli_print_precondition_body). */
static void print_precondition(const og_http_resp *resp, const char *branch)
{
    json_t *j = parse_body(resp), *pf = json_object_get(j, "precondition_failure");
    const char *expected = json_string_value(json_object_get(pf, "expected"));
    if (expected) og_cli_print_precondition_body(branch, expected, json_string_value(json_object_get(pf, "actual")));
    json_decref(j);
}

/* A served verb's refusal of a flag the server has no counterpart for. */
static int not_served(const char *verb, const char *flag, const char *why)
{
    return og_cli_usage(verb, "%s is not offered served (%s); drop it, or run the command on the store (--store ROOT)",
                        flag, why);
}

/* ---- query --------------------------------------------------------------------------------------- */

/* The receipt's commit in the embedded order (graph_args.c og_cli_commit_json). */
static json_t *commit_embedded(json_t *c)
{
    if (!json_is_object(c)) return json_null();
    static const char *keys[] = {"graph_commit_id", "graph_branch", "graph_manifest_version", "parent_commit_id",
                                 "merged_parent_commit_id", "actor_id", "actor_via", "created_at"};
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(c, keys[i]);
        json_object_set(o, keys[i], v ? v : json_null());
    }
    return o;
}

static int get_json(og_remote *r, const char *verb, const char *path, json_t **out);

/* The server's merge answer as the embedded `branch merge --json` prints the library's
 * document (cmd_branch.c): outcome, source, target, actor_id first, then the rest in the
 * server's order; the commit in the embedded order with its attempts; branch_deleted only
 * when it was asked for. */
static json_t *merge_embedded(json_t *j, int delete_branch)
{
    static const char *const head[] = {"outcome", "source", "target", "actor_id"};
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) {
        json_t *v = json_object_get(j, head[i]);
        json_object_set(o, head[i], v ? v : json_null());
    }
    const char *key;
    json_t *val;
    json_object_foreach(j, key, val)
    {
        if (json_object_get(o, key) || (!delete_branch && !strcmp(key, "branch_deleted"))) continue;
        if (!strcmp(key, "commit") && json_is_object(val)) {
            json_t *c = commit_embedded(val);
            json_object_set(c, "attempts", json_object_get(val, "attempts"));
            json_object_set_new(o, key, c);
        } else {
            json_object_set(o, key, val);
        }
    }
    return o;
}

/* The server's 409 merge_conflicts as the library's conflict document, which the embedded
 * `branch merge --json` prints: {conflicts:[{kind, type, id, message, entity_kind,
 * type_name, entity_id, properties?}]}. */
static json_t *merge_conflicts_embedded(json_t *mc)
{
    json_t *list = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(mc, i, c)
    {
        json_t *e = json_object();
        json_object_set(e, "kind", json_object_get(c, "kind"));
        json_object_set(e, "type", json_object_get(c, "type_name"));
        json_object_set(e, "id", json_object_get(c, "entity_id"));
        json_object_set(e, "message", json_object_get(c, "message"));
        json_object_set(e, "entity_kind", json_object_get(c, "entity_kind"));
        json_object_set(e, "type_name", json_object_get(c, "type_name"));
        json_object_set(e, "entity_id", json_object_get(c, "entity_id"));
        if (json_object_get(c, "properties")) json_object_set(e, "properties", json_object_get(c, "properties"));
        json_array_append_new(list, e);
    }
    json_t *doc = json_object();
    json_object_set_new(doc, "conflicts", list);
    return doc;
}

static const char *query_source(const char *inline_src, const char *file, og_buf *src)
{
    if (file && og_cli_read_file(file, src) != OG_OK) return NULL;
    if (inline_src) og_buf_append_str(src, inline_src);
    return og_buf_cstr(src);
}

/* The one query name of a source ("query NAME("), for the receipt when the server has none. */
static void first_query_name(const char *src, char *out, size_t cap)
{
    out[0] = 0;
    const char *q = strstr(src, "query ");
    char fmt[32];
    snprintf(fmt, sizeof fmt, " %%%zu[A-Za-z0-9_]", cap - 1);
    if (q) sscanf(q + 6, fmt, out);
}

static int run_gq(og_remote *r, int argc, char **argv, int is_mutation)
{
    const char *verb = is_mutation ? "mutate" : "query";
    og_graph_args a = {.verb = verb};
    int explain = 0, analyze = 0, exact = 0, wide = 0;
    const char *inline_src = NULL, *file = NULL, *params = NULL, *params_file = NULL, *format = NULL, *if_commit = NULL,
               *from = NULL, *timeout = NULL, *max_memory = NULL;
    const char *sets[64];
    size_t nsets = 0;
    og_flag flags[] = {
        {"--query-string", "-e", 1, 0, &inline_src, NULL, NULL, NULL},
        {"--query", NULL, 1, 0, &file, NULL, NULL, NULL},
        {"--params", NULL, 1, 0, &params, NULL, NULL, NULL},
        {"--params-file", NULL, 1, 0, &params_file, NULL, NULL, NULL},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--timeout", NULL, 1, 0, &timeout, NULL, NULL, NULL},
        {"--max-memory", NULL, 1, 0, &max_memory, NULL, NULL, NULL},
        {"--exact", NULL, 0, 0, NULL, &exact, NULL, NULL},
        {"--explain", NULL, 0, 0, NULL, &explain, NULL, NULL},
        {"--analyze", NULL, 0, 0, NULL, &analyze, NULL, NULL},
        {"--wide", "--no-truncate", 0, 0, NULL, &wide, NULL, NULL},
        {"--set", NULL, 1, 1, NULL, NULL, sets, &nsets},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, sizeof flags / sizeof flags[0], 1);
    if (rc) return rc;
    /* session settings: checked as the embedded verb checks them, then carried in the request's
     * `settings` member (the server checks them again; the text's `set` lines apply after them) */
    if ((rc = og_cli_check_sets(verb, sets, nsets))) return rc;
    if (inline_src && file) return og_cli_usage(verb, "give exactly one of -e TEXT or --query FILE");
    if (!inline_src && !file && !a.npositional)
        return og_cli_usage(verb, "give -e TEXT or --query FILE, or the NAME of a stored query of the server");
    if (params && params_file) return og_cli_usage(verb, "give --params or --params-file, not both");
    if (is_mutation && a.at) return og_cli_usage(verb, "--at is for reads");
    if (!is_mutation && (if_commit || from)) return og_cli_usage(verb, "%s is for mutations", if_commit ? "--if-commit" : "--from");
    if (is_mutation && (explain || analyze)) return og_cli_usage(verb, "--explain is for reads");
    if (analyze && !explain) return og_cli_usage(verb, "--analyze goes with --explain");
    if (explain && format) return og_cli_usage(verb, "--explain prints text; drop --format");
    if (explain && !inline_src && !file)
        return og_cli_usage(verb, "--explain needs the query source (-e TEXT or --query FILE)");
    if (exact) return not_served(verb, "--exact", "the server picks the access path");
    if (wide && (is_mutation || !format || strcmp(format, "table")))
        return og_cli_usage(verb, "--wide goes with --format table (the other formats never cut a value)");
    if (timeout || max_memory)
        return not_served(verb, timeout ? "--timeout" : "--max-memory", "the server's --query-timeout and "
                                                                        "--query-max-memory set every query's budgets");
    if (from) return not_served(verb, "--from", "POST /mutate takes no base branch; create it first with branch create");
    int arrow = format && !strcmp(format, "arrow"); /* the server's Arrow stream, passed through */
    if (arrow && (is_mutation || a.json))
        return og_cli_usage(verb, is_mutation ? "--format arrow is for reads" : "--json and --format arrow contradict each other");
    if (arrow && isatty(STDOUT_FILENO))
        return og_cli_usage(verb, "--format arrow writes binary: redirect stdout (> result.arrow)");
    if (arrow) format = NULL;
    og_cli_format cfmt;
    if ((rc = og_cli_format_parse(verb, format, a.json, &cfmt))) return rc;
    og_format fmt = OG_FORMAT_JSON;
    if (format && !is_mutation)
        fmt = !strcmp(format, "jsonl") ? OG_FORMAT_JSONL : !strcmp(format, "csv") ? OG_FORMAT_CSV
                                                         : !strcmp(format, "table") ? (wide ? OG_FORMAT_TABLE_WIDE : OG_FORMAT_TABLE)
                                                                                    : OG_FORMAT_JSON;
    const char *name = a.npositional ? a.positional[0] : NULL;
    og_buf src = OG_BUF_INIT, pbuf = OG_BUF_INIT;
    const char *text = NULL;
    if ((inline_src || file) && !(text = query_source(inline_src, file, &src))) return OG_EXIT_FAIL;
    if (params_file) {
        if (og_cli_read_file(params_file, &pbuf) != OG_OK) {
            og_buf_free(&src);
            return OG_EXIT_FAIL;
        }
        params = og_buf_cstr(&pbuf);
    }
    json_t *pj = NULL;
    if (params) {
        json_error_t e;
        pj = json_loads(params, 0, &e);
        if (!json_is_object(pj)) {
            json_decref(pj);
            og_buf_free(&src);
            og_buf_free(&pbuf);
            fprintf(stderr, "omnigraph %s: invalid: parameters must be a JSON object: %s\n", verb, e.text);
            return OG_EXIT_FAIL;
        }
    }
    json_t *body = json_object();
    char path[512];
    if (text) {
        json_object_set_new(body, "query", json_string(text));
        if (name) json_object_set_new(body, "name", json_string(name));
        snprintf(path, sizeof path, "/%s%s", is_mutation ? "mutate" : "query",
                 if_commit ? "/if-graph-commit" : explain ? "/explain" : "");
        if (analyze) json_object_set_new(body, "analyze", json_true());
    } else { /* a stored query of the server's registry */
        og_buf p = OG_BUF_INIT;
        og_buf_append_str(&p, "/queries/");
        og_http_escape(&p, name);
        if (if_commit) og_buf_append_str(&p, "/if-graph-commit");
        snprintf(path, sizeof path, "%s", og_buf_cstr(&p));
        og_buf_free(&p);
    }
    if (pj) json_object_set_new(body, "params", pj);
    if (nsets) { /* {"engine": "v2"}: an identifier as a string, an integer as a number */
        json_t *settings = json_object();
        for (size_t i = 0; i < nsets; i++) {
            const char *eq = strchr(sets[i], '='), *v = eq + 1;
            size_t sign = v[0] == '-';
            int is_int = strlen(v) > sign && strspn(v + sign, "0123456789") == strlen(v) - sign;
            json_object_setn_new(settings, sets[i], (size_t)(eq - sets[i]),
                                 is_int ? json_integer((json_int_t)strtoll(v, NULL, 10)) : json_string(v));
        }
        json_object_set_new(body, "settings", settings);
    }
    if (a.branch) json_object_set_new(body, "branch", json_string(a.branch));
    if (a.at) json_object_set_new(body, "snapshot", json_string(a.at));
    char hdr[200];
    if (if_commit) {
        snprintf(hdr, sizeof hdr, "Omnigraph-If-Graph-Commit: %s", if_commit);
        r->header = hdr;
    }
    if (is_mutation) echo(r, verb);
    if (arrow) r->header = "Accept: application/vnd.apache.arrow.stream";
    og_http_resp resp;
    int exit_code = OG_EXIT_OK;
    if (call(r, verb, "POST", path, body, NULL, NULL, &resp)) {
        exit_code = OG_EXIT_FAIL;
    } else if (arrow && resp.status == 200) {
        if (fwrite(resp.body.data, 1, resp.body.len, stdout) != resp.body.len) exit_code = OG_EXIT_FAIL;
    } else if (resp.status != 200) {
        exit_code = og_cli_remote_fail(verb, &resp);
        if (resp.status == 412 && a.json) print_precondition(&resp, a.branch); /* the structured lost race */
    } else {
        json_t *j = parse_body(&resp);
        if (!j) {
            fprintf(stderr, "omnigraph %s: internal: the server's answer is not JSON\n", verb);
            exit_code = OG_EXIT_FAIL;
        } else if (explain) { /* the plan text, as og_db_query_explain wrote it */
            const char *plan = json_string_value(json_object_get(j, "plan"));
            if (plan) fputs(plan, stdout);
        } else if (json_object_get(j, "rows")) { /* ReadOutput, printed as the embedded CLI prints it */
            og_buf out = OG_BUF_INIT;
            og_status st = og_cli_remote_render_read(j, fmt, &out);
            if (st == OG_OK) og_cli_out(&out);
            else exit_code = og_cli_fail(verb, st);
            og_buf_free(&out);
        } else { /* ChangeOutput, as the embedded receipt */
            json_t *c = json_object_get(j, "commit");
            const char *branch = json_string_value(json_object_get(j, "branch"));
            if (cfmt == OG_CLI_TEXT) {
                if (a.quiet) {
                } else if (!json_is_object(c)) {
                    printf("no changes (nothing published)\n");
                } else {
                    printf("affected %lld nodes, %lld edges in commit %s on %s\n",
                           (long long)json_integer_value(json_object_get(j, "affected_nodes")),
                           (long long)json_integer_value(json_object_get(j, "affected_edges")),
                           json_string_value(json_object_get(c, "graph_commit_id")), branch ? branch : "main");
                }
            } else {
                char qn[128];
                first_query_name(text ? text : "", qn, sizeof qn);
                json_t *o = json_object();
                json_t *q = json_object_get(j, "query_name");
                json_object_set_new(o, "query_name", name ? json_string(name) : json_is_string(q) ? json_incref(q) : *qn ? json_string(qn) : json_null());
                json_object_set_new(o, "branch", json_string(branch ? branch : "main"));
                json_object_set(o, "affected_nodes", json_object_get(j, "affected_nodes"));
                json_object_set(o, "affected_edges", json_object_get(j, "affected_edges"));
                for (const char *const *k = (const char *const[]){"inserted", "updated", "deleted", NULL}; *k; k++)
                    if (json_object_get(j, *k)) json_object_set(o, *k, json_object_get(j, *k));
                json_t *actor = json_object_get(j, "actor_id");
                json_object_set_new(o, "actor_id", actor ? json_incref(actor) : json_null());
                json_object_set_new(o, "commit", commit_embedded(c));
                static const char *mut_cols[] = {"commit.graph_commit_id", "branch", "query_name", "affected_nodes",
                                                 "affected_edges"};
                og_cli_print_records(cfmt, o, NULL, mut_cols, 5);
                json_decref(o);
            }
        }
        json_decref(j);
    }
    r->header = NULL;
    og_http_resp_free(&resp);
    json_decref(body);
    og_buf_free(&src);
    og_buf_free(&pbuf);
    return exit_code;
}

/* ---- load ---------------------------------------------------------------------------------------- */

static int run_load(og_remote *r, int argc, char **argv)
{
    og_graph_args a = {.verb = "load"};
    const char *data = NULL, *mode = NULL, *from = NULL, *if_commit = NULL, *format = NULL, *timeout = NULL,
               *max_memory = NULL;
    int progress = 0;
    og_flag flags[] = {
        {"--data", NULL, 1, 0, &data, NULL, NULL, NULL},
        {"--mode", NULL, 1, 0, &mode, NULL, NULL, NULL},
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--progress", NULL, 0, 0, NULL, &progress, NULL, NULL},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
        {"--timeout", NULL, 1, 0, &timeout, NULL, NULL, NULL},
        {"--max-memory", NULL, 1, 0, &max_memory, NULL, NULL, NULL},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, 8, 0);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse("load", format, a.json, &fmt))) return rc;
    if (!data) return og_cli_usage("load", "--data FILE is required");
    if (!mode) return og_cli_usage("load", "--mode is required: overwrite, append or merge");
    if (strcmp(mode, "overwrite") && strcmp(mode, "append") && strcmp(mode, "merge"))
        return og_cli_usage("load", "--mode must be overwrite, append or merge (got '%s')", mode);
    if (a.at) return og_cli_usage("load", "--at is for reads");
    if (progress) return not_served("load", "--progress", "the server reports no progress of a load");
    if (timeout || max_memory) return not_served("load", timeout ? "--timeout" : "--max-memory", "the server budgets its loads");
    og_buf q = OG_BUF_INIT;
    og_buf_printf(&q, "/load/ndjson%s?mode=%s", if_commit ? "/if-graph-commit" : "", mode);
    if (a.branch) og_buf_append_str(&q, "&branch="), og_http_escape(&q, a.branch);
    if (from) og_buf_append_str(&q, "&from="), og_http_escape(&q, from);
    /* stdin is spooled to a file so that its length is known up front (the server refuses a
     * body past 32 MiB from its Content-Length, before reading it) */
    char spool[64] = "";
    if (!strcmp(data, "-")) {
        const char *tmp = getenv("TMPDIR");
        snprintf(spool, sizeof spool, "%s/og-stdin-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
        int fd = mkstemp(spool);
        FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
        char buf[1 << 16];
        size_t n;
        int ok = out != NULL;
        while (ok && (n = fread(buf, 1, sizeof buf, stdin)) > 0) ok = fwrite(buf, 1, n, out) == n;
        if (out && fclose(out) != 0) ok = 0;
        if (!out && fd >= 0) close(fd);
        if (!ok) {
            fprintf(stderr, "omnigraph load: cannot spool stdin to %s\n", spool);
            if (fd >= 0) unlink(spool);
            og_buf_free(&q);
            return OG_EXIT_FAIL;
        }
        data = spool;
    } else if (access(data, R_OK) != 0) {
        fprintf(stderr, "omnigraph load: io: cannot read %s\n", data);
        og_buf_free(&q);
        return OG_EXIT_FAIL;
    }
    echo(r, "load");
    og_http_resp resp;
    int exit_code = OG_EXIT_OK;
    char hdr[200];
    if (if_commit) { /* compare-and-swap on the branch head: POST …/load/ndjson/if-graph-commit */
        snprintf(hdr, sizeof hdr, "Omnigraph-If-Graph-Commit: %s", if_commit);
        r->header = hdr;
    }
    int failed = call(r, "load", "POST", og_buf_cstr(&q), NULL, data, NULL, &resp);
    r->header = NULL;
    if (failed) {
        exit_code = OG_EXIT_FAIL;
    } else if (resp.status != 200) {
        exit_code = og_cli_remote_fail("load", &resp);
        if (resp.status == 412 && a.json) print_precondition(&resp, a.branch);
    } else {
        json_t *j = parse_body(&resp);
        json_t *c = json_object_get(j, "commit");
        json_int_t total = json_integer_value(json_object_get(j, "total_entities"));
        int merge = !strcmp(mode, "merge");
        if (fmt == OG_CLI_TEXT) {
            if (a.quiet) {
            } else if (!json_is_object(c)) {
                printf("no changes (nothing published)\n");
            } else if (merge) { /* the server does not split a merge into inserts and updates */
                printf("loaded %lld records (merged) as commit %s on %s\n", (long long)total,
                       json_string_value(json_object_get(c, "graph_commit_id")), a.branch ? a.branch : "main");
            } else {
                printf("loaded %lld records (%lld inserted, 0 updated) as commit %s on %s\n", (long long)total,
                       (long long)total, json_string_value(json_object_get(c, "graph_commit_id")),
                       a.branch ? a.branch : "main");
            }
        } else {
            json_object_set_new(j, "commit", commit_embedded(c));
            json_object_set_new(j, "records", json_integer(total));
            json_object_set_new(j, "inserted", merge ? json_null() : json_integer(total));
            json_object_set_new(j, "updated", merge ? json_null() : json_integer(0));
            json_object_del(j, "uri");
            static const char *load_cols[] = {"commit.graph_commit_id", "branch", "mode", "total_entities", "inserted",
                                              "updated"};
            og_cli_print_records(fmt, j, NULL, load_cols, 6);
        }
        json_decref(j);
    }
    og_http_resp_free(&resp);
    og_buf_free(&q);
    if (*spool) unlink(spool);
    return exit_code;
}

/* ---- branch ------------------------------------------------------------------------------------- */

/* The head commit of branch b (GET /commits?branch=b, newest first) into head; 0 when found. */
static int branch_head(og_remote *r, const char *b, char *head, size_t cap)
{
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/commits?branch=");
    og_http_escape(&p, b);
    og_http_resp resp;
    int rc = -1;
    if (!call(r, "branch", "GET", og_buf_cstr(&p), NULL, NULL, NULL, &resp) && resp.status == 200) {
        json_t *j = parse_body(&resp);
        const char *id = json_string_value(json_object_get(json_array_get(json_object_get(j, "commits"), 0), "graph_commit_id"));
        if (id) {
            snprintf(head, cap, "%s", id);
            rc = 0;
        }
        json_decref(j);
    }
    og_http_resp_free(&resp);
    og_buf_free(&p);
    return rc;
}

static int run_branch(og_remote *r, int argc, char **argv)
{
    if (argc < 2) return og_cli_usage("branch", "a subcommand is required (create, list, delete, merge)");
    const char *sub = argv[1];
    char verb[32];
    snprintf(verb, sizeof verb, "branch %s", sub);
    og_graph_args a = {.verb = verb};
    const char *from = NULL, *into = NULL, *if_commit = NULL, *format = NULL;
    const char *strategies[64];
    size_t nstrategies = 0;
    int del = 0;
    og_flag flags[] = {
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},
        {"--into", NULL, 1, 0, &into, NULL, NULL, NULL},
        {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL},
        {"--delete-branch", NULL, 0, 0, NULL, &del, NULL, NULL},
        {"--strategy", "-X", 1, 1, NULL, NULL, strategies, &nstrategies},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
    };
    int is_create = !strcmp(sub, "create"), is_list = !strcmp(sub, "list"), is_delete = !strcmp(sub, "delete"),
        is_merge = !strcmp(sub, "merge");
    if (!is_create && !is_list && !is_delete && !is_merge)
        return og_cli_usage("branch", "unknown subcommand '%s' (create, list, delete, merge)", sub);
    og_flag *fl = is_list ? flags + 5 : is_create ? flags : is_delete ? flags + 2 : flags + 1;
    size_t nfl = is_list ? 1 : is_create ? 1 : is_delete ? 1 : 4;
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, fl, nfl, is_list ? 0 : 1);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse(verb, format, a.json && is_list, &fmt))) return rc;
    if (a.branch) return og_cli_usage(verb, "--branch does not apply here");
    if (a.at && !is_create) return og_cli_usage(verb, "--at applies to branch create only");
    if (is_create && from && a.at) return og_cli_usage(verb, "give --from or --at, not both");
    if (if_commit) return not_served(verb, "--if-commit", "the server's branch routes take no expected head");
    og_db_merge_strategy sg = {OG_MERGE_STRATEGY_FAIL, OG_MERGE_STRATEGY_FAIL, OG_MERGE_STRATEGY_FAIL,
                               OG_MERGE_STRATEGY_FAIL};
    if (is_merge && (rc = og_cli_parse_strategies(verb, strategies, nstrategies, &sg))) return rc;
    const char *name = NULL;
    if (!is_list) {
        if (!a.npositional) return og_cli_usage(verb, "a branch name is required");
        name = a.positional[0];
    }
    og_http_resp resp;
    int exit_code = OG_EXIT_OK;
    if (is_list) {
        if (call(r, verb, "GET", "/branches", NULL, NULL, NULL, &resp)) return OG_EXIT_FAIL;
        if (resp.status != 200) {
            exit_code = og_cli_remote_fail(verb, &resp);
            og_http_resp_free(&resp);
            return exit_code;
        }
        json_t *j = parse_body(&resp);
        og_http_resp_free(&resp);
        json_t *names = json_object_get(j, "branches"), *b;
        json_t *recs = json_array(), *heads = json_object(), *msgs = json_object();
        size_t i;
        json_array_foreach(names, i, b)
        {
            char head[64] = "";
            branch_head(r, json_string_value(b), head, sizeof head);
            /* the message from the server's `details` (an OmniGraph-C addition), null when absent */
            json_t *m = json_object_get(json_array_get(json_object_get(j, "details"), i), "message");
            if (!json_is_string(m)) m = json_null();
            json_array_append_new(recs, json_pack("{s:O,s:s,s:O}", "name", b, "head", head, "message", m));
            json_object_set_new(heads, json_string_value(b), json_string(head));
            json_object_set(msgs, json_string_value(b), m);
        }
        if (fmt == OG_CLI_JSON) {
            json_t *doc = json_pack("{s:O,s:o,s:o}", "branches", names, "heads", heads, "messages", msgs);
            msgs = NULL;
            og_cli_print_records(OG_CLI_JSON, doc, NULL, NULL, 0);
            json_decref(doc);
        } else if (fmt) {
            json_decref(heads);
            json_t *doc = json_pack("{s:o}", "branches", recs);
            recs = NULL;
            static const char *cols[] = {"name", "head", "message"};
            og_cli_print_records(fmt, doc, "branches", cols, 3);
            json_decref(doc);
        } else {
            json_decref(heads);
            json_array_foreach(recs, i, b) printf("%s %s\n", json_string_value(json_object_get(b, "name")),
                                                  json_string_value(json_object_get(b, "head")));
        }
        json_decref(recs);
        json_decref(msgs);
        json_decref(j);
        return OG_EXIT_OK;
    }
    echo(r, verb);
    if (is_create) {
        json_t *body = json_pack("{s:s}", "name", name);
        if (from || a.at) json_object_set_new(body, "from", json_string(a.at ? a.at : from));
        if (a.message && *a.message) json_object_set_new(body, "message", json_string(a.message));
        int failed = call(r, verb, "POST", "/branches", body, NULL, NULL, &resp);
        json_decref(body);
        if (failed) return OG_EXIT_FAIL;
        if (resp.status != 200) {
            exit_code = og_cli_remote_fail(verb, &resp);
        } else {
            json_t *j = parse_body(&resp);
            char head[64] = "";
            branch_head(r, name, head, sizeof head);
            if (a.json) {
                json_object_set_new(j, "head", json_string(head));
                json_t *m = json_incref(json_object_get(j, "message")); /* after head, as embedded */
                if (m) json_object_del(j, "message"), json_object_set_new(j, "message", m);
                print_pretty(j);
            } else if (!a.quiet) {
                printf("created branch %s at %s\n", name, head);
            }
            json_decref(j);
        }
    } else if (is_delete) {
        og_buf p = OG_BUF_INIT;
        og_buf_append_str(&p, "/branches/");
        og_http_escape(&p, name);
        int failed = call(r, verb, "DELETE", og_buf_cstr(&p), NULL, NULL, NULL, &resp);
        og_buf_free(&p);
        if (failed) return OG_EXIT_FAIL;
        if (resp.status != 200) {
            exit_code = og_cli_remote_fail(verb, &resp);
        } else if (a.json) {
            json_t *j = parse_body(&resp);
            print_pretty(j);
            json_decref(j);
        } else if (!a.quiet) {
            printf("deleted branch %s\n", name);
        }
    } else {
        json_t *body = json_pack("{s:s,s:b}", "source", name, "delete_branch", del);
        if (into) json_object_set_new(body, "target", json_string(into));
        if (nstrategies) { /* per conflict kind, as the server's `strategy` object takes it */
            static const char *side[] = {NULL, "ours", "theirs"};
            json_t *st = json_object();
            if (sg.all) json_object_set_new(st, "all", json_string(side[sg.all]));
            if (sg.divergent_insert) json_object_set_new(st, "divergent_insert", json_string(side[sg.divergent_insert]));
            if (sg.divergent_update) json_object_set_new(st, "divergent_update", json_string(side[sg.divergent_update]));
            if (sg.delete_vs_update) json_object_set_new(st, "delete_vs_update", json_string(side[sg.delete_vs_update]));
            json_object_set_new(body, "strategy", st);
        }
        int failed = call(r, verb, "POST", "/branches/merge", body, NULL, NULL, &resp);
        json_decref(body);
        if (failed) return OG_EXIT_FAIL;
        if (resp.status != 200) {
            if (a.json) {
                json_t *j = parse_body(&resp), *mc = json_object_get(j, "merge_conflicts");
                if (json_is_array(mc)) { /* the conflicts as the embedded verb prints the library's */
                    json_t *doc = merge_conflicts_embedded(mc);
                    print_pretty(doc);
                    json_decref(doc);
                } else if (j) {
                    print_pretty(j);
                }
                json_decref(j);
            }
            exit_code = og_cli_remote_fail(verb, &resp);
        } else {
            json_t *j = parse_body(&resp);
            const char *outcome = json_string_value(json_object_get(j, "outcome"));
            char head[64] = "";
            int published = outcome && strcmp(outcome, "already_up_to_date") != 0;
            if (published) branch_head(r, into ? into : "main", head, sizeof head);
            if (a.json) {
                json_t *c = json_object_get(j, "commit"), *full = NULL;
                const char *id = json_string_value(json_object_get(c, "graph_commit_id"));
                if (id) { /* the whole commit, as the embedded verb shows it (og_cli_commit_output) */
                    og_buf p = OG_BUF_INIT;
                    og_buf_append_str(&p, "/commits/"), og_http_escape(&p, id);
                    if (get_json(r, verb, og_buf_cstr(&p), &full) == OG_EXIT_OK) {
                        json_object_set(full, "attempts", json_object_get(c, "attempts"));
                        if (!json_is_string(json_object_get(full, "graph_branch"))) /* the branch merged into */
                            json_object_set(full, "graph_branch", json_object_get(c, "graph_branch"));
                        json_object_set_new(j, "commit", full);
                    }
                    og_buf_free(&p);
                }
                json_t *doc = merge_embedded(j, del);
                print_pretty(doc);
                json_decref(doc);
            } else if (!a.quiet && published) {
                printf("%s: merged %s into %s as commit %s\n", outcome, name, into ? into : "main", head);
            } else if (!a.quiet) {
                printf("%s: nothing to merge from %s into %s\n", outcome ? outcome : "?", name, into ? into : "main");
            }
            if (!a.json) og_cli_print_resolved(j);
            json_decref(j);
        }
    }
    og_http_resp_free(&resp);
    return exit_code;
}

/* ---- snapshot, schema, export -------------------------------------------------------------------- */

static int get_json(og_remote *r, const char *verb, const char *path, json_t **out)
{
    og_http_resp resp;
    *out = NULL;
    if (call(r, verb, "GET", path, NULL, NULL, NULL, &resp)) return OG_EXIT_FAIL;
    int rc = OG_EXIT_OK;
    if (resp.status != 200) rc = og_cli_remote_fail(verb, &resp);
    else if (!(*out = parse_body(&resp))) {
        fprintf(stderr, "omnigraph %s: internal: the server's answer is not JSON\n", verb);
        rc = OG_EXIT_FAIL;
    }
    og_http_resp_free(&resp);
    return rc;
}

static int run_snapshot(og_remote *r, int argc, char **argv)
{
    og_graph_args a = {.verb = "snapshot"};
    const char *format = NULL;
    og_flag flags[] = {{"--format", NULL, 1, 0, &format, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 1, 0);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse("snapshot", format, a.json, &fmt))) return rc;
    if (a.at && a.branch) return og_cli_usage("snapshot", "give --branch or --at, not both");
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/snapshot");
    if (a.branch) og_buf_append_str(&p, "?branch="), og_http_escape(&p, a.branch);
    if (a.at) og_buf_append_str(&p, "?snapshot="), og_http_escape(&p, a.at);
    json_t *j;
    rc = get_json(r, "snapshot", og_buf_cstr(&p), &j);
    og_buf_free(&p);
    if (rc) return rc;
    /* our members first, as the embedded snapshot prints them, then the reference's */
    json_t *o = json_object(), *tables = json_array(), *d;
    size_t i;
    json_array_foreach(json_object_get(j, "datasets"), i, d)
        json_array_append_new(tables, json_pack("{s:O,s:O,s:O,s:O,s:O}", "type", json_object_get(d, "type_name"), "kind",
                                                json_object_get(d, "entity_kind"), "table", json_object_get(d, "dataset_path"),
                                                "version", json_object_get(d, "published_dataset_version"), "rows",
                                                json_object_get(d, "entity_count")));
    json_object_set(o, "commit", json_object_get(j, "graph_commit_id"));
    json_object_set(o, "branch", json_object_get(j, "graph_branch"));
    json_object_set_new(o, "tables", tables);
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) if (strcmp(k, "graph_commit_id")) json_object_set(o, k, v);
    static const char *cols[] = {"type", "kind", "table", "version", "rows"};
    og_cli_print_records(fmt == OG_CLI_TEXT ? OG_CLI_JSON : fmt, o, "tables", cols, 5);
    json_decref(o);
    json_decref(j);
    return OG_EXIT_OK;
}

static int run_schema(og_remote *r, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (!strcmp(sub, "show") || !strcmp(sub, "get")) {
        og_graph_args a = {.verb = "schema show"};
        int rc = og_graph_args_parse(&a, argc - 1, argv + 1, NULL, 0, 0);
        if (rc) return rc;
        if (a.json) return og_cli_usage("schema show", "takes no --json: it prints the schema source");
        if (a.branch || a.at) return not_served("schema show", a.branch ? "--branch" : "--at", "GET /schema reads main");
        json_t *j;
        if ((rc = get_json(r, "schema show", "/schema", &j))) return rc;
        const char *text = json_string_value(json_object_get(j, "schema_source"));
        if (text) {
            fputs(text, stdout);
            if (*text && text[strlen(text) - 1] != '\n') putchar('\n');
        }
        json_decref(j);
        return OG_EXIT_OK;
    }
    /* apply */
    og_graph_args a = {.verb = "schema apply"};
    const char *schema = NULL, *if_commit = NULL;
    int allow = 0;
    og_flag flags[] = {{"--schema", NULL, 1, 0, &schema, NULL, NULL, NULL},
                       {"--allow-data-loss", NULL, 0, 0, NULL, &allow, NULL, NULL},
                       {"--if-commit", NULL, 1, 0, &if_commit, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, flags, 3, 0);
    if (rc) return rc;
    if (!schema) return og_cli_usage("schema apply", "--schema FILE is required");
    if (if_commit) return not_served("schema apply", "--if-commit", "POST /schema/apply takes no expected head");
    if (a.branch || a.at) return og_cli_usage("schema apply", "%s does not apply here", a.branch ? "--branch" : "--at");
    og_buf text = OG_BUF_INIT;
    if (og_cli_read_file(schema, &text) != OG_OK) return OG_EXIT_FAIL;
    echo(r, "schema apply");
    json_t *body = json_pack("{s:s,s:b}", "schema_source", og_buf_cstr(&text), "allow_data_loss", allow);
    og_buf_free(&text);
    og_http_resp resp;
    int failed = call(r, "schema apply", "POST", "/schema/apply", body, NULL, NULL, &resp);
    json_decref(body);
    if (failed) return OG_EXIT_FAIL;
    int exit_code = OG_EXIT_OK;
    if (resp.status != 200) {
        exit_code = og_cli_remote_fail("schema apply", &resp);
    } else {
        json_t *j = parse_body(&resp);
        if (a.json) print_pretty(j);
        else if (!a.quiet) {
            json_t *c = json_object_get(j, "commit");
            if (json_is_true(json_object_get(j, "applied")) && json_is_object(c))
                printf("applied as commit %s\n", json_string_value(json_object_get(c, "graph_commit_id")));
            else printf("no changes: nothing applied\n");
        }
        json_decref(j);
    }
    og_http_resp_free(&resp);
    return exit_code;
}

static int run_export(og_remote *r, int argc, char **argv)
{
    og_graph_args a = {.verb = "export"};
    const char *types[64];
    size_t ntypes = 0;
    const char *format = NULL;
    og_flag flags[] = {{"--type", NULL, 1, 1, NULL, NULL, types, &ntypes}, {"--format", NULL, 1, 0, &format, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 2, 0);
    if (rc) return rc;
    if (a.json || (format && strcmp(format, "jsonl")))
        return og_cli_usage("export", "export writes the load format, JSON lines (--format jsonl); %s%s is not offered",
                            a.json ? "--json" : "--format ", a.json ? "" : format);
    if (a.at && a.branch) return og_cli_usage("export", "give --branch or --at, not both");
    json_t *body = json_object();
    if (a.branch) json_object_set_new(body, "branch", json_string(a.branch));
    if (a.at) json_object_set_new(body, "snapshot", json_string(a.at));
    if (ntypes) {
        json_t *t = json_array();
        for (size_t i = 0; i < ntypes; i++) json_array_append_new(t, json_string(types[i]));
        json_object_set_new(body, "type_names", t);
    }
    og_http_resp resp;
    int failed = call(r, "export", "POST", "/export", body, NULL, stdout, &resp);
    json_decref(body);
    if (failed) return OG_EXIT_FAIL;
    int exit_code = resp.status == 200 ? OG_EXIT_OK : og_cli_remote_fail("export", &resp);
    og_http_resp_free(&resp);
    fflush(stdout);
    return exit_code;
}

/* ---- commit, changes, blob ---------------------------------------------------------------------- */

/* The server's CommitOutput with the embedded members it can carry: id, created_at_utc. */
static void commit_add_ours(json_t *c)
{
    json_int_t us = json_integer_value(json_object_get(c, "created_at"));
    time_t s = (time_t)(us / 1000000);
    struct tm tm;
    char iso[40] = "";
    if (gmtime_r(&s, &tm)) {
        strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(iso + strlen(iso), sizeof iso - strlen(iso), ".%03dZ", (int)((us / 1000) % 1000));
    }
    json_object_set_new(c, "created_at_utc", json_string(iso));
}

static int run_commit(og_remote *r, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    char verb[32];
    snprintf(verb, sizeof verb, "commit %s", sub);
    og_graph_args a = {.verb = verb};
    const char *format = NULL, *limit = NULL;
    og_flag flags[] = {{"--format", NULL, 1, 0, &format, NULL, NULL, NULL}, {"--limit", NULL, 1, 0, &limit, NULL, NULL, NULL}};
    int is_list = !strcmp(sub, "list"), is_show = !strcmp(sub, "show"), is_changes = !strcmp(sub, "changes");
    if (!is_list && !is_show && !is_changes) return og_cli_usage("commit", "unknown subcommand '%s' (list, show, changes)", sub);
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, flags, 2, is_list ? 0 : 1);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse(verb, format, a.json, &fmt))) return rc;
    if (!is_list && !a.npositional) return og_cli_usage(verb, "a commit id is required");
    og_buf p = OG_BUF_INIT;
    if (is_list) {
        og_buf_append_str(&p, "/commits");
        if (a.branch) og_buf_append_str(&p, "?branch="), og_http_escape(&p, a.branch);
    } else {
        og_buf_append_str(&p, "/commits/");
        og_http_escape(&p, a.positional[0]);
        if (is_changes) og_buf_append_str(&p, "/changes");
        if (is_changes && limit) og_buf_append_str(&p, "?limit="), og_http_escape(&p, limit);
    }
    json_t *j;
    rc = get_json(r, verb, og_buf_cstr(&p), &j);
    og_buf_free(&p);
    if (rc) return rc;
    if (is_changes) {
        static const char *cols[] = {"kind", "type.name", "id", "op"};
        og_cli_print_records(fmt == OG_CLI_TEXT ? OG_CLI_JSON : fmt, j, "changes", cols, 4);
        json_decref(j);
        return OG_EXIT_OK;
    }
    json_t *list = is_list ? json_object_get(j, "commits") : NULL, *c;
    size_t i;
    if (is_list) json_array_foreach(list, i, c) commit_add_ours(c);
    else commit_add_ours(j);
    if (fmt == OG_CLI_TEXT) {
        if (is_list) json_array_foreach(list, i, c) printf("%s %s %s\n", json_string_value(json_object_get(c, "graph_commit_id")),
                                                         json_string_value(json_object_get(c, "created_at_utc")),
                                                         json_string_value(json_object_get(c, "actor_id")) ? json_string_value(json_object_get(c, "actor_id")) : "-");
        else print_pretty(j);
    } else {
        static const char *cols[] = {"id=graph_commit_id", "created_at=created_at_utc", "actor=actor_id", "parent_commit_id"};
        og_cli_print_records(fmt, j, is_list ? "commits" : NULL, cols, 4);
    }
    json_decref(j);
    return OG_EXIT_OK;
}

/* `changes baseline` served: POST /changes/baseline streams the entities, then one handshake
 * line; the file gets the entities (durably: temporary, fsync, rename), stdout the handshake. */
static int run_baseline(og_remote *r, int argc, char **argv)
{
    og_graph_args a = {.verb = "changes baseline"};
    const char *out = NULL;
    const char *kinds[64], *types[64], *ops[64];
    size_t nk = 0, nt = 0, no = 0;
    og_flag flags[] = {{"--out", NULL, 1, 0, &out, NULL, NULL, NULL},
                       {"--kind", NULL, 1, 1, NULL, NULL, kinds, &nk},
                       {"--type", NULL, 1, 1, NULL, NULL, types, &nt},
                       {"--op", NULL, 1, 1, NULL, NULL, ops, &no}};
    int rc = og_graph_args_parse(&a, argc, argv, flags, 4, 0);
    if (rc) return rc;
    if (a.at) return og_cli_usage(a.verb, "--at does not apply: a baseline is the head of a branch (--branch)");
    if (!out || !*out) return og_cli_usage(a.verb, "--out PATH is required");
    json_t *body = json_object(), *ka = json_array(), *ta = json_array(), *oa = json_array();
    for (size_t i = 0; i < nk; i++) json_array_append_new(ka, json_string(kinds[i]));
    for (size_t i = 0; i < nt; i++) json_array_append_new(ta, json_string(types[i]));
    for (size_t i = 0; i < no; i++) json_array_append_new(oa, json_string(ops[i]));
    if (a.branch) json_object_set_new(body, "branch", json_string(a.branch));
    json_object_set_new(body, "kind", ka);
    json_object_set_new(body, "type", ta);
    json_object_set_new(body, "op", oa);
    size_t plen = strlen(out);
    char *tmp = malloc(plen + 16);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", out);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (!f) {
        fprintf(stderr, "omnigraph %s: io: cannot create a temporary file beside %s\n", a.verb, out);
        if (fd >= 0) close(fd), unlink(tmp);
        free(tmp);
        json_decref(body);
        return OG_EXIT_FAIL;
    }
    og_http_resp resp;
    int failed = call(r, a.verb, "POST", "/changes/baseline", body, NULL, f, &resp);
    json_decref(body);
    int exit_code = failed ? OG_EXIT_FAIL : resp.status == 200 ? OG_EXIT_OK : og_cli_remote_fail(a.verb, &resp);
    og_http_resp_free(&resp);
    /* the last line is the handshake: read it, then cut the file before it */
    char head[64] = "", cursor[256] = "";
    if (exit_code == OG_EXIT_OK && fflush(f) == 0) {
        long size = ftell(f), start = size > 1 ? size - 2 : 0;
        char c;
        while (start > 0 && fseek(f, start, SEEK_SET) == 0 && fread(&c, 1, 1, f) == 1 && c != '\n') start--;
        if (start > 0) start++;
        char line[1024] = "";
        fseek(f, start, SEEK_SET);
        size_t n = fread(line, 1, sizeof line - 1, f);
        line[n] = 0;
        json_t *hj = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
        json_t *b = json_object_get(hj, "baseline");
        if (json_string_value(json_object_get(b, "snapshot_commit_id")) && json_string_value(json_object_get(b, "resume_cursor"))) {
            snprintf(head, sizeof head, "%s", json_string_value(json_object_get(b, "snapshot_commit_id")));
            snprintf(cursor, sizeof cursor, "%s", json_string_value(json_object_get(b, "resume_cursor")));
        }
        json_decref(hj);
        if (!*head || ftruncate(fileno(f), start) != 0) {
            fprintf(stderr, "omnigraph %s: io: the server's baseline ended without its handshake line\n", a.verb);
            exit_code = OG_EXIT_FAIL;
        }
    }
    int ok = exit_code == OG_EXIT_OK && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, out) != 0) ok = 0;
    if (!ok) {
        if (exit_code == OG_EXIT_OK) fprintf(stderr, "omnigraph %s: io: cannot write %s durably\n", a.verb, out);
        unlink(tmp);
        exit_code = OG_EXIT_FAIL;
    }
    free(tmp);
    if (exit_code) return exit_code;
    if (a.json) printf("{\n  \"snapshot_commit_id\": \"%s\",\n  \"resume_cursor\": \"%s\"\n}\n", head, cursor);
    else printf("snapshot: %s\nsnapshot_commit_id: %s\nresume_cursor: %s\n", out, head, cursor);
    return OG_EXIT_OK;
}

/* `changes --from C1 --to C2` served: every page of GET …/diff joined into og_db_changes'
 * document, printed by the embedded verb's printer. */
static int run_diff(og_remote *r, int argc, char **argv)
{
    og_graph_args a = {.verb = "changes"};
    const char *from = NULL, *to = NULL, *format = NULL;
    const char *types[64], *ops[64];
    size_t ntypes = 0, nops = 0;
    og_flag flags[] = {
        {"--from", NULL, 1, 0, &from, NULL, NULL, NULL},     {"--to", NULL, 1, 0, &to, NULL, NULL, NULL},
        {"--type", NULL, 1, 1, NULL, NULL, types, &ntypes},  {"--op", NULL, 1, 1, NULL, NULL, ops, &nops},
        {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
    };
    int rc = og_graph_args_parse(&a, argc, argv, flags, 5, 0);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse("changes", format, a.json, &fmt))) return rc;
    if (!from || !to) return og_cli_usage("changes", "--from C1 and --to C2 are required");
    unsigned opbits;
    if ((rc = og_cli_parse_ops("changes", ops, nops, &opbits))) return rc;
    og_buf q = OG_BUF_INIT;
    og_buf_append_str(&q, "/diff?limit=8192&from="), og_http_escape(&q, from);
    og_buf_append_str(&q, "&to="), og_http_escape(&q, to);
    for (size_t i = 0; i < ntypes; i++) og_buf_append_str(&q, "&type="), og_http_escape(&q, types[i]);
    for (size_t i = 0; i < nops; i++) og_buf_append_str(&q, "&op="), og_http_escape(&q, ops[i]);
    json_t *doc = NULL, *all = json_array();
    const char *token = NULL;
    char *next = NULL;
    do {
        og_buf p = OG_BUF_INIT;
        og_buf_append_str(&p, og_buf_cstr(&q));
        if (token) og_buf_append_str(&p, "&page_token="), og_http_escape(&p, token);
        json_t *j;
        rc = get_json(r, "changes", og_buf_cstr(&p), &j);
        og_buf_free(&p);
        if (rc) break;
        json_array_extend(all, json_object_get(j, "changes"));
        json_t *t = json_object_get(j, "next_page_token");
        free(next);
        next = json_is_string(t) ? strdup(json_string_value(t)) : NULL;
        token = next;
        json_object_del(j, "next_page_token");
        if (doc) json_decref(j);
        else doc = j;
    } while (token);
    og_buf_free(&q);
    free(next);
    if (!rc && doc) {
        json_object_set(doc, "changes", all);
        char *text = og_json_text(doc, JSON_PRESERVE_ORDER | JSON_COMPACT); /* read by og_json_read */
        if (text) og_cli_print_changes(text, fmt);
        og_free(text);
    }
    json_decref(all);
    json_decref(doc);
    return rc ? rc : OG_EXIT_OK;
}

static int run_changes(og_remote *r, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (!strcmp(sub, "baseline")) return run_baseline(r, argc - 1, argv + 1);
    if (strcmp(sub, "poll")) return run_diff(r, argc, argv);
    og_graph_args a = {.verb = "changes poll"};
    const char *cursor = NULL, *start = NULL, *limit = NULL, *format = NULL;
    const char *kinds[64], *types[64], *ops[64];
    size_t nk = 0, nt = 0, no = 0;
    og_flag flags[] = {{"--cursor", NULL, 1, 0, &cursor, NULL, NULL, NULL}, {"--start", NULL, 1, 0, &start, NULL, NULL, NULL},
                       {"--limit", NULL, 1, 0, &limit, NULL, NULL, NULL},   {"--format", NULL, 1, 0, &format, NULL, NULL, NULL},
                       {"--kind", NULL, 1, 1, NULL, NULL, kinds, &nk},      {"--type", NULL, 1, 1, NULL, NULL, types, &nt},
                       {"--op", NULL, 1, 1, NULL, NULL, ops, &no}};
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, flags, 7, 0);
    if (rc) return rc;
    og_cli_format fmt;
    if ((rc = og_cli_format_parse("changes poll", format, a.json, &fmt))) return rc;
    if (cursor && start) return og_cli_usage("changes poll", "give --cursor or --start, not both");
    /* every page, as the embedded poll: the blocks of all pages, the cursor of the last */
    json_t *blocks = json_array(), *j = NULL;
    const char *token = NULL;
    char tokbuf[2048] = "";
    for (int page = 0; page < 100000; page++) {
        og_buf p = OG_BUF_INIT;
        og_buf_append_str(&p, "/changes?branch=");
        og_http_escape(&p, a.branch ? a.branch : "main");
        if (token) og_buf_append_str(&p, "&page_token="), og_http_escape(&p, token);
        else if (cursor) og_buf_append_str(&p, "&cursor="), og_http_escape(&p, cursor);
        else if (start) og_buf_append_str(&p, "&start="), og_http_escape(&p, start);
        if (limit) og_buf_append_str(&p, "&limit="), og_http_escape(&p, limit);
        for (size_t i = 0; i < nk; i++) og_buf_append_str(&p, "&kind="), og_http_escape(&p, kinds[i]);
        for (size_t i = 0; i < nt; i++) og_buf_append_str(&p, "&type="), og_http_escape(&p, types[i]);
        for (size_t i = 0; i < no; i++) og_buf_append_str(&p, "&op="), og_http_escape(&p, ops[i]);
        json_decref(j);
        rc = get_json(r, "changes poll", og_buf_cstr(&p), &j);
        og_buf_free(&p);
        if (rc) {
            json_decref(blocks);
            return rc;
        }
        json_array_extend(blocks, json_object_get(j, "blocks"));
        const char *next = json_string_value(json_object_get(j, "next_page_token"));
        if (!next) break;
        snprintf(tokbuf, sizeof tokbuf, "%s", next);
        token = tokbuf;
    }
    json_object_set_new(j, "blocks", blocks);
    json_object_del(j, "next_page_token");
    if (fmt == OG_CLI_TEXT || fmt == OG_CLI_JSON) print_pretty(j);
    else {
        static const char *cols[] = {"cause.graph_commit_id", "cause.actor_id", "cause.authored_at"};
        og_cli_print_records(fmt, j, "blocks", cols, 3);
    }
    json_decref(j);
    return OG_EXIT_OK;
}

static int run_blob(og_remote *r, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    int is_get = !strcmp(sub, "get"), is_stat = !strcmp(sub, "stat");
    if (!is_get && !is_stat) return og_cli_usage("blob", "unknown subcommand '%s' (get, stat)", sub);
    char verb[16];
    snprintf(verb, sizeof verb, "blob %s", sub);
    og_graph_args a = {.verb = verb};
    const char *offset = NULL, *length = NULL, *out = NULL;
    og_flag flags[] = {{"--offset", NULL, 1, 0, &offset, NULL, NULL, NULL},
                       {"--length", NULL, 1, 0, &length, NULL, NULL, NULL},
                       {"--out", NULL, 1, 0, &out, NULL, NULL, NULL}};
    int rc = og_graph_args_parse(&a, argc - 1, argv + 1, flags, is_get ? 3 : 0, 4);
    if (rc) return rc;
    if (a.npositional != 4) return og_cli_usage(verb, "give ENTITY TYPE ID PROPERTY (ENTITY is node or edge)");
    if (strcmp(a.positional[0], "node") && strcmp(a.positional[0], "edge"))
        return og_cli_usage(verb, "ENTITY must be node or edge (got '%s')", a.positional[0]);
    if (length && atoll(length) <= 0) return og_cli_usage(verb, "--length must be at least 1");
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/blob?entity="), og_http_escape(&p, a.positional[0]);
    og_buf_append_str(&p, "&type="), og_http_escape(&p, a.positional[1]);
    og_buf_append_str(&p, "&id="), og_http_escape(&p, a.positional[2]);
    og_buf_append_str(&p, "&property="), og_http_escape(&p, a.positional[3]);
    if (a.branch) og_buf_append_str(&p, "&branch="), og_http_escape(&p, a.branch);
    if (a.at) og_buf_append_str(&p, "&snapshot="), og_http_escape(&p, a.at);
    char range[100];
    if (offset || length) {
        long long o = offset ? atoll(offset) : 0, l = length ? atoll(length) : 0;
        if (length) snprintf(range, sizeof range, "Range: bytes=%lld-%lld", o, o + l - 1);
        else snprintf(range, sizeof range, "Range: bytes=%lld-", o);
        r->header = range;
    }
    og_http_resp resp;
    FILE *f = NULL;
    char tmp[1100] = "";
    if (is_get && out) {
        snprintf(tmp, sizeof tmp, "%s.tmp-%ld", out, (long)getpid());
        f = fopen(tmp, "wb");
        if (!f) {
            og_buf_free(&p);
            fprintf(stderr, "omnigraph %s: io: cannot write %s\n", verb, tmp);
            return OG_EXIT_FAIL;
        }
    }
    int failed = call(r, verb, is_get ? "GET" : "HEAD", og_buf_cstr(&p), NULL, NULL, NULL, &resp);
    r->header = NULL;
    og_buf_free(&p);
    int exit_code = OG_EXIT_OK;
    if (failed) {
        exit_code = OG_EXIT_FAIL;
    } else if (resp.status != 200 && resp.status != 206) {
        if (is_stat && !resp.body.len) /* HEAD carries no error body */
            fprintf(stderr, "omnigraph %s: %s: the server answered HTTP %ld\n", verb, error_class(resp.status, "", ""),
                    resp.status);
        else
            og_cli_remote_fail(verb, &resp);
        exit_code = resp.status == 412 ? OG_EXIT_PRECONDITION : OG_EXIT_FAIL;
    } else if (is_get) {
        FILE *dst = f ? f : stdout;
        if (resp.body.len && fwrite(resp.body.data, 1, resp.body.len, dst) != resp.body.len) exit_code = OG_EXIT_FAIL;
    } else {
        char size[32] = "", etag[200] = "", snap[100] = "";
        og_http_header(&resp, "Content-Length", size, sizeof size);
        og_http_header(&resp, "ETag", etag, sizeof etag);
        og_http_header(&resp, "Omnigraph-Snapshot-Id", snap, sizeof snap);
        /* the embedded stat's shape: the quoted strong tag, the target as asked, the commit read */
        if (a.json) {
            json_t *target = json_object();
            if (a.branch) json_object_set_new(target, "branch", json_string(a.branch));
            if (a.at) json_object_set_new(target, "snapshot", json_string(a.at));
            json_object_set_new(target, "resolved_snapshot", json_string(snap));
            json_t *o = json_pack("{s:{s:s,s:s,s:s,s:s},s:s,s:I,s:s,s:o}", "selector", "entity", a.positional[0], "type",
                                  a.positional[1], "id", a.positional[2], "property", a.positional[3], "kind", "managed",
                                  "size", (json_int_t)atoll(size), "etag", etag, "target", target);
            print_pretty(o);
            json_decref(o);
        } else {
            printf("%s %s %s %s\nkind: managed\nsize: %s\netag: %s\n", a.positional[0], a.positional[1], a.positional[2],
                   a.positional[3], size, etag);
            if (a.branch) printf("branch: %s\n", a.branch);
            if (a.at) printf("snapshot: %s\n", a.at);
            printf("resolved_snapshot: %s\n", snap);
        }
    }
    if (f) {
        if (fclose(f) != 0) exit_code = OG_EXIT_FAIL;
        if (exit_code == OG_EXIT_OK && rename(tmp, out) != 0) exit_code = OG_EXIT_FAIL;
        if (exit_code != OG_EXIT_OK) unlink(tmp);
    }
    og_http_resp_free(&resp);
    return exit_code;
}

int og_cli_remote_run(og_remote *r, int argc, char **argv)
{
    const char *verb = argv[0];
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) /* the scope refused --as on a served write */
        if (!strcmp(argv[i], "--as") || !strncmp(argv[i], "--as=", 5))
            return og_cli_usage(verb, "--as names the actor of a write; a read records none");
    if (!strcmp(verb, "query") || !strcmp(verb, "read")) return run_gq(r, argc, argv, 0);
    if (!strcmp(verb, "mutate") || !strcmp(verb, "change")) return run_gq(r, argc, argv, 1);
    if (!strcmp(verb, "load")) return run_load(r, argc, argv);
    if (!strcmp(verb, "branch")) return run_branch(r, argc, argv);
    if (!strcmp(verb, "snapshot")) return run_snapshot(r, argc, argv);
    if (!strcmp(verb, "schema")) return run_schema(r, argc, argv);
    if (!strcmp(verb, "export")) return run_export(r, argc, argv);
    if (!strcmp(verb, "commit")) return run_commit(r, argc, argv);
    if (!strcmp(verb, "changes")) return run_changes(r, argc, argv);
    if (!strcmp(verb, "blob")) return run_blob(r, argc, argv);
    return og_cli_usage(verb, "does not run through a server");
}
