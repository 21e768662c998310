/*
 * shell_remote.c — `omnigraph shell --server URL --graph ID`: the shell's backend
 * (src/shell/backend.h) over the CLI's HTTP client (remote.h), using only the server's public
 * routes (docs/server.md).
 *
 * Why here and not in src/shell/: the HTTP client, the operator config (named servers, tokens)
 * and the rendering of a served answer exactly as the embedded one prints belong to the CLI;
 * the shell stays a library over one table of functions, and this file fills that table.
 *
 * How each call maps: a statement goes to POST …/query (with `branch`, or `snapshot` while
 * travelling); the server's "is a mutation" refusal sends it to POST …/mutate instead — the
 * same try-read-first rule as the local backend.  Branches come from GET …/branches and each
 * head from GET …/snapshot; the schema from GET …/schema, compiled here (the CLI links the
 * compiler for its offline verbs) into the catalog document og_db_catalog returns, so Tab
 * completion works as it does locally.  A commit reference is resolved against the served
 * history: a full id, a branch name, REF~N, or an id prefix unique across the branches.
 * `.explain` asks POST …/query/explain.  Ctrl-C waits for the answer.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/remote.h"
#include "compiler/catalog.h"
#include "compiler/schema.h"
#include "util/error.h"

typedef struct served {
    og_remote r;
    char graph[128];
} served;

/* GET or POST /graphs/{graph}PATH; OG_OK with *out the JSON answer of a 200, else og_err set. */
static og_status call(served *sv, const char *method, const char *path, json_t *body, json_t **out)
{
    *out = NULL;
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/graphs/");
    og_http_escape(&p, sv->graph);
    og_buf_append_str(&p, path);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    og_http_resp resp;
    int rc = og_http_request(&sv->r, method, og_buf_cstr(&p), body ? "application/json" : NULL, text, NULL, NULL, &resp);
    free(text);
    og_buf_free(&p);
    og_status st = OG_OK;
    if (rc) st = og_err(OG_ERR_IO, "%s", resp.error); /* it names the URL */
    else if (resp.status != 200) st = og_cli_remote_error(&resp);
    else if (!(*out = json_loads((const char *)resp.body.data, 0, NULL)))
        st = og_err(OG_ERR_INTERNAL, "the server's answer to %s %s is not JSON", method, path);
    og_http_resp_free(&resp);
    return st;
}

static og_status gq_body(json_t **out, const char *src, size_t len, const char *params)
{
    *out = json_object();
    json_object_set_new(*out, "query", json_stringn(src, len));
    if (params && *params) {
        json_error_t e;
        json_t *pj = json_loads(params, 0, &e);
        if (!json_is_object(pj)) {
            json_decref(pj);
            json_decref(*out);
            *out = NULL;
            return og_err(OG_ERR_INVALID, "parameters must be a JSON object: %s", e.text);
        }
        json_object_set_new(*out, "params", pj);
    }
    return OG_OK;
}

static og_status served_run(void *self, const char *src, size_t len, const char *params, const og_shell_target *t,
                            og_format fmt, og_shell_result *out)
{
    served *sv = self;
    memset(out, 0, sizeof *out);
    json_t *body, *ans;
    OG_TRY(gq_body(&body, src, len, params));
    if (t->commit) json_object_set_new(body, "snapshot", json_string(t->commit));
    else json_object_set_new(body, "branch", json_string(t->branch));
    og_status st = call(sv, "POST", "/query", body, &ans);
    if (st == OG_OK) {
        out->rows = (size_t)json_integer_value(json_object_get(ans, "row_count"));
        const char *c = json_string_value(json_object_get(ans, "graph_commit_id"));
        snprintf(out->commit, sizeof out->commit, "%s", c ? c : "");
        og_buf text = OG_BUF_INIT;
        st = og_cli_remote_render_read(ans, fmt, &text);
        if (st == OG_OK) out->text = strdup(og_buf_cstr(&text));
        og_buf_free(&text);
        json_decref(ans);
        json_decref(body);
        if (st) return st;
        return out->text ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
    }
    if (!(st == OG_ERR_INVALID && strstr(og_error_message(), "is a mutation"))) {
        json_decref(body);
        return st;
    }
    out->write = 1;
    if (t->commit) {
        json_decref(body);
        return og_err(OG_ERR_INVALID, "a mutation writes a branch head, and the shell is reading commit %s: "
                                      "`.at` alone returns to the head of %s", t->commit, t->branch);
    }
    json_object_del(body, "snapshot");
    st = call(sv, "POST", "/mutate", body, &ans);
    json_decref(body);
    if (st) return st;
    og_receipt *r = &out->receipt;
    json_t *c = json_object_get(ans, "commit");
    const char *id = json_string_value(json_object_get(c, "graph_commit_id"));
    const char *b = json_string_value(json_object_get(ans, "branch"));
    r->published = id != NULL;
    snprintf(r->commit, sizeof r->commit, "%s", id ? id : "");
    snprintf(r->branch, sizeof r->branch, "%s", b ? b : t->branch);
    r->attempts = 1;
    r->affected_nodes = (uint64_t)json_integer_value(json_object_get(ans, "affected_nodes"));
    r->affected_edges = (uint64_t)json_integer_value(json_object_get(ans, "affected_edges"));
    json_decref(ans);
    return OG_OK;
}

static og_status served_explain(void *self, const char *src, size_t len, const char *params,
                                const og_shell_target *t, char **out)
{
    served *sv = self;
    *out = NULL;
    json_t *body, *ans;
    OG_TRY(gq_body(&body, src, len, params));
    if (t->commit) json_object_set_new(body, "snapshot", json_string(t->commit));
    else json_object_set_new(body, "branch", json_string(t->branch));
    og_status st = call(sv, "POST", "/query/explain", body, &ans);
    json_decref(body);
    if (st) return st;
    const char *plan = json_string_value(json_object_get(ans, "plan"));
    *out = strdup(plan ? plan : "");
    json_decref(ans);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

/* The head commit of branch b (GET …/snapshot?branch=b). */
static og_status branch_head(served *sv, const char *b, char out[32])
{
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/snapshot?branch=");
    og_http_escape(&p, b);
    json_t *ans;
    og_status st = call(sv, "GET", og_buf_cstr(&p), NULL, &ans);
    og_buf_free(&p);
    if (st) return st;
    const char *id = json_string_value(json_object_get(ans, "graph_commit_id"));
    snprintf(out, 32, "%s", id ? id : "");
    json_decref(ans);
    return OG_OK;
}

/* {"branches":[{"name","head"}]}, as og_db_branch_list's document holds them. */
static og_status served_branches(void *self, char **out)
{
    served *sv = self;
    *out = NULL;
    json_t *ans, *b;
    OG_TRY(call(sv, "GET", "/branches", NULL, &ans));
    json_t *arr = json_array();
    size_t i;
    json_array_foreach(json_object_get(ans, "branches"), i, b) {
        const char *name = json_string_value(b);
        char head[32] = "";
        if (!name) continue;
        if (branch_head(sv, name, head)) og_error_clear();
        json_array_append_new(arr, json_pack("{s:s,s:s}", "name", name, "head", head));
    }
    json_decref(ans);
    json_t *doc = json_pack("{s:o}", "branches", arr);
    *out = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static og_status served_schema(void *self, const og_shell_target *t, char **out)
{
    (void)t; /* GET …/schema serves the graph's current schema */
    json_t *ans;
    *out = NULL;
    OG_TRY(call(self, "GET", "/schema", NULL, &ans));
    const char *src = json_string_value(json_object_get(ans, "schema_source"));
    *out = strdup(src ? src : "");
    json_decref(ans);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static json_t *types_json(const og_cat_type *v, size_t n, int edges, int nodes)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const og_cat_type *t = &v[i];
        json_t *o = json_pack("{s:s}", "name", t->name);
        if (edges) {
            json_object_set_new(o, "from", json_string(t->from));
            json_object_set_new(o, "to", json_string(t->to));
        }
        if (nodes) {
            json_t *im = json_array();
            for (size_t k = 0; k < t->nimplements; k++) json_array_append_new(im, json_string(t->implements[k]));
            json_object_set_new(o, "implements", im);
        }
        json_t *props = json_array();
        for (size_t k = 0; k < t->nprops; k++) {
            char tb[256];
            json_array_append_new(props, json_pack("{s:s,s:s,s:b,s:b}", "name", t->props[k].name, "type",
                                                   og_cat_prop_type_name(&t->props[k], tb, sizeof tb), "nullable",
                                                   t->props[k].nullable, "key", t->props[k].is_key));
        }
        json_object_set_new(o, "properties", props);
        json_array_append_new(a, o);
    }
    return a;
}

/* og_db_catalog's document (docs/c-api.md "Catalog") from the served schema's source. */
static og_status served_catalog(void *self, const og_shell_target *t, char **out)
{
    char *src;
    *out = NULL;
    OG_TRY(served_schema(self, t, &src));
    og_catalog *cat = NULL;
    og_diags d;
    memset(&d, 0, sizeof d);
    og_status st = og_schema_compile(&cat, "schema.pg", src, strlen(src), &d);
    free(src);
    og_diags_free(&d);
    if (st) return og_err(st, "the served schema does not compile here");
    json_t *o = json_object();
    json_object_set_new(o, "interfaces", types_json(cat->interfaces, cat->ninterfaces, 0, 0));
    json_object_set_new(o, "nodes", types_json(cat->nodes, cat->nnodes, 0, 1));
    json_object_set_new(o, "edges", types_json(cat->edges, cat->nedges, 1, 0));
    og_catalog_free(cat);
    *out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

/* The parent of commit id (GET …/commits/{id}); "" for the genesis commit. */
static og_status commit_parent(served *sv, const char *id, char out[32])
{
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/commits/");
    og_http_escape(&p, id);
    json_t *ans;
    og_status st = call(sv, "GET", og_buf_cstr(&p), NULL, &ans);
    og_buf_free(&p);
    if (st) return st;
    const char *parent = json_string_value(json_object_get(ans, "parent_commit_id"));
    snprintf(out, 32, "%s", parent ? parent : "");
    json_decref(ans);
    return OG_OK;
}

/* A commit id, or a prefix of exactly one commit of the served branches' histories. */
static og_status resolve_id(served *sv, const char *ref, char out[32])
{
    if (strlen(ref) == 26 && commit_parent(sv, ref, out) == OG_OK) {
        snprintf(out, 32, "%s", ref);
        return OG_OK;
    }
    og_error_clear();
    json_t *bs, *b, *c;
    OG_TRY(call(sv, "GET", "/branches", NULL, &bs));
    char found[32] = "";
    int many = 0;
    size_t i, k;
    size_t n = strlen(ref);
    json_array_foreach(json_object_get(bs, "branches"), i, b) {
        og_buf p = OG_BUF_INIT;
        og_buf_append_str(&p, "/commits?branch=");
        og_http_escape(&p, json_string_value(b));
        json_t *cs;
        og_status st = call(sv, "GET", og_buf_cstr(&p), NULL, &cs);
        og_buf_free(&p);
        if (st) continue;
        json_array_foreach(json_object_get(cs, "commits"), k, c) {
            const char *id = json_string_value(json_object_get(c, "graph_commit_id"));
            if (!id || strncasecmp(id, ref, n)) continue;
            if (*found && strcmp(found, id)) many = 1;
            snprintf(found, sizeof found, "%s", id);
        }
        json_decref(cs);
    }
    json_decref(bs);
    og_error_clear();
    if (many) return og_err(OG_ERR_INVALID, "commit prefix %s is ambiguous: give more characters", ref);
    if (!*found) return og_err(OG_ERR_NOT_FOUND, "no commit, branch or commit prefix %s on the server", ref);
    snprintf(out, 32, "%s", found);
    return OG_OK;
}

/* A branch name, a commit id or unique prefix, each optionally followed by ~N (N parents up). */
static og_status served_resolve(void *self, const char *ref, char out[32])
{
    served *sv = self;
    char base[256];
    const char *tilde = strrchr(ref, '~');
    long up = 0;
    if (tilde) {
        char *end;
        up = strtol(tilde + 1, &end, 10);
        if (*end || up < 0 || tilde == ref) return og_err(OG_ERR_INVALID, "bad commit reference %s (REF~N)", ref);
    }
    snprintf(base, sizeof base, "%.*s", (int)(tilde ? (size_t)(tilde - ref) : strlen(ref)), ref);
    char id[32];
    if (branch_head(sv, base, id) != OG_OK || !*id) {
        og_error_clear();
        OG_TRY(resolve_id(sv, base, id));
    }
    for (long i = 0; i < up; i++) {
        char parent[32];
        OG_TRY(commit_parent(sv, id, parent));
        if (!*parent) return og_err(OG_ERR_NOT_FOUND, "%s goes past the first commit", ref);
        memcpy(id, parent, sizeof id);
    }
    snprintf(out, 32, "%s", id);
    return OG_OK;
}

static void served_set_cancel(void *self, const volatile int *flag) { (void)self, (void)flag; }

static void served_free(void *p) { free(p); }

static void served_close(void *self) { free(self); }

static const og_shell_backend_ops served_ops = {
    "remote",       served_run,     served_explain,    served_branches, served_catalog,
    served_schema, served_resolve, served_set_cancel, served_free,     served_close,
};

og_status og_cli_shell_remote_open(og_shell_backend *out, const char *server, const char *graph)
{
    served *sv = calloc(1, sizeof *sv);
    if (!sv) return og_err(OG_ERR_NOMEM, "out of memory");
    if (og_cli_remote_resolve(&sv->r, "shell", server)) {
        free(sv);
        return og_err(OG_ERR_INVALID, "cannot resolve --server %s", server);
    }
    snprintf(sv->graph, sizeof sv->graph, "%s", graph);
    sv->r.graph = sv->graph;
    sv->r.quiet = 1;
    /* one request up front, so a wrong URL, graph or token is said at once */
    json_t *ans;
    og_status st = call(sv, "GET", "/branches", NULL, &ans);
    if (st) {
        free(sv);
        return st;
    }
    json_decref(ans);
    out->ops = &served_ops;
    out->self = sv;
    return OG_OK;
}
