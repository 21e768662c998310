/*
 * test_served.c — the graph calls of `omnigraph test --server URL [--graph ID]` (docs/testing.md
 * "Against a server"): each step of a `.gqt` case sent to omnigraph-server over its HTTP API.
 *
 * Why a file of its own: cmd_test.c drives a case through include/omnigraph.h; a served run
 * must drive the same case through the wire only (remote.h), so that a CI job can check that
 * a deployed server answers the corpus as the library does.  Each case runs on a fresh graph
 * the runner creates through POST /graphs and deletes afterwards, where the server allows it
 * (--graph-dir); otherwise the runner borrows one served graph as scratch (--graph ID): before
 * each case it deletes the graph's other branches, empties it by applying a one-type schema,
 * applies the case's schema and loads the seed (every step a commit; the history stays).  Each call returns 0, or -1
 * with the error as the embedded runner spells it ("<class>: <message>", classes as
 * og_status_name), so `expect error:` substrings mean the same in both modes.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gqt.h"
#include "cli/remote.h"

/* "io: ..." for a transport failure, else the server's answer in the embedded spelling. */
static char *fail_text(const og_http_resp *resp, int transport)
{
    if (transport) {
        size_t n = strlen(resp->error) + 8;
        char *s = malloc(n);
        if (s) snprintf(s, n, "io: %s", resp->error);
        return s;
    }
    return og_cli_remote_error_text(resp);
}

/* One request to /graphs/{graph}PATH with a JSON body (NULL: none); 0 on a 200 with *out its
 * parsed body (may be NULL when unwanted), else -1 and *err. */
static int srv_call(const og_remote *r, const char *method, const char *path, json_t *body, const char *upload,
                    json_t **out, char **err)
{
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/graphs/");
    og_http_escape(&p, r->graph);
    og_buf_append_str(&p, path);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    const char *ctype = upload ? "application/x-ndjson" : body ? "application/json" : NULL;
    og_http_resp resp;
    int t = og_http_request(r, method, og_buf_cstr(&p), ctype, text, upload, NULL, &resp);
    free(text);
    og_buf_free(&p);
    int rc = 0;
    if (t || resp.status != 200) {
        *err = fail_text(&resp, t);
        rc = -1;
    } else if (out) {
        *out = json_loads((const char *)resp.body.data, 0, NULL);
        if (!*out) {
            *err = strdup("internal: the server's answer is not JSON");
            rc = -1;
        }
    }
    og_http_resp_free(&resp);
    return rc;
}

static int srv_branch_names(const og_remote *r, json_t **names, char **err)
{
    json_t *j = NULL;
    if (srv_call(r, "GET", "/branches", NULL, NULL, &j, err)) return -1;
    json_t *bs = json_object_get(j, "branches");
    *names = json_array();
    size_t i;
    json_t *b;
    json_array_foreach(bs, i, b) {
        json_t *n = json_is_string(b) ? b : json_object_get(b, "name");
        if (json_is_string(n)) json_array_append(*names, n);
    }
    json_decref(j);
    return 0;
}

static int apply_schema(const og_remote *r, const char *src, char **err)
{
    json_t *body = json_pack("{s:s,s:b}", "schema_source", src, "allow_data_loss", 1);
    int rc = srv_call(r, "POST", "/schema/apply", body, NULL, NULL, err);
    json_decref(body);
    return rc;
}

/* Loads NDJSON text as one batch (mode NULL = the server's default). */
static int load_text(const og_remote *r, const char *dir, const char *ndjson, const char *branch, const char *from,
                     const char *mode, char **err)
{
    char path[700];
    snprintf(path, sizeof path, "%s/served-load.jsonl", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        *err = strdup("io: cannot write the batch file");
        return -1;
    }
    fputs(ndjson, f);
    fclose(f);
    og_buf q = OG_BUF_INIT;
    og_buf_append_str(&q, "/load/ndjson?branch=");
    og_http_escape(&q, branch ? branch : "main");
    if (from) {
        og_buf_append_str(&q, "&from=");
        og_http_escape(&q, from);
    }
    if (mode) {
        og_buf_append_str(&q, "&mode=");
        og_http_escape(&q, mode);
    }
    int rc = srv_call(r, "POST", og_buf_cstr(&q), NULL, path, NULL, err);
    og_buf_free(&q);
    remove(path);
    return rc;
}

/* The schema that empties the scratch graph: every type of the previous case dropped. */
static const char scratch_schema[] = "node OmnigraphTestScratch {\n    id: String @key\n}\n";

int gqt_srv_reset(const og_remote *r, const char *dir, const char *schema, const char *seed, char **err)
{
    json_t *names = NULL;
    if (srv_branch_names(r, &names, err)) return -1;
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        if (!strcmp(json_string_value(n), "main")) continue;
        og_buf p = OG_BUF_INIT;
        og_buf_append_str(&p, "/branches/");
        og_http_escape(&p, json_string_value(n));
        int rc = srv_call(r, "DELETE", og_buf_cstr(&p), NULL, NULL, NULL, err);
        og_buf_free(&p);
        if (rc) {
            json_decref(names);
            return -1;
        }
    }
    json_decref(names);
    if (apply_schema(r, scratch_schema, err) || apply_schema(r, schema, err)) return -1;
    int blank = 1;
    for (const char *p = seed; *p; p++)
        if (*p != ' ' && *p != '\n' && *p != '\t') blank = 0;
    return blank ? 0 : load_text(r, dir, seed, "main", NULL, "overwrite", err);
}

int gqt_srv_query(const og_remote *r, const char *branch, const char *src, const char *params, char ***cols,
                  size_t *ncols, char ***rows, size_t *nrows, char **err)
{
    json_t *body = json_pack("{s:s}", "query", src);
    if (branch) json_object_set_new(body, "branch", json_string(branch));
    if (params) {
        json_t *pj = json_loads(params, 0, NULL);
        if (!json_is_object(pj)) {
            json_decref(pj);
            json_decref(body);
            *err = strdup("invalid: parameters must be a JSON object");
            return -1;
        }
        json_object_set_new(body, "params", pj);
    }
    json_t *j = NULL;
    int rc = srv_call(r, "POST", "/query", body, NULL, &j, err);
    json_decref(body);
    if (rc) return -1;
    json_t *c = json_object_get(j, "columns"), *rs = json_object_get(j, "rows");
    *ncols = json_array_size(c);
    *nrows = json_array_size(rs);
    *cols = calloc(*ncols + 1, sizeof **cols);
    *rows = calloc(*nrows + 1, sizeof **rows);
    if (!*cols || !*rows) abort();
    for (size_t i = 0; i < *ncols; i++) {
        const char *s = json_string_value(json_array_get(c, i));
        (*cols)[i] = strdup(s ? s : "");
    }
    for (size_t i = 0; i < *nrows; i++) (*rows)[i] = json_dumps(json_array_get(rs, i), JSON_COMPACT);
    json_decref(j);
    return 0;
}

int gqt_srv_mutate(const og_remote *r, const char *branch, const char *src, const char *params, uint64_t *nodes,
                   uint64_t *edges, char **err)
{
    json_t *body = json_pack("{s:s}", "query", src);
    if (branch) json_object_set_new(body, "branch", json_string(branch));
    if (params) {
        json_t *pj = json_loads(params, 0, NULL);
        if (!json_is_object(pj)) {
            json_decref(pj);
            json_decref(body);
            *err = strdup("invalid: parameters must be a JSON object");
            return -1;
        }
        json_object_set_new(body, "params", pj);
    }
    json_t *j = NULL;
    int rc = srv_call(r, "POST", "/mutate", body, NULL, &j, err);
    json_decref(body);
    if (rc) return -1;
    *nodes = (uint64_t)json_integer_value(json_object_get(j, "affected_nodes"));
    *edges = (uint64_t)json_integer_value(json_object_get(j, "affected_edges"));
    json_decref(j);
    return 0;
}

int gqt_srv_load(const og_remote *r, const char *dir, const char *ndjson, const char *branch, const char *from,
                 const char *mode, char **err)
{
    return load_text(r, dir, ndjson, branch, from, mode ? mode : "append", err);
}

int gqt_srv_branch(const og_remote *r, const char *op, const char *a, const char *b, char **outcome, char **err)
{
    if (!strcmp(op, "delete")) {
        og_buf p = OG_BUF_INIT;
        og_buf_append_str(&p, "/branches/");
        og_http_escape(&p, a);
        int rc = srv_call(r, "DELETE", og_buf_cstr(&p), NULL, NULL, NULL, err);
        og_buf_free(&p);
        return rc;
    }
    int merge = !strcmp(op, "merge");
    json_t *body = merge ? json_pack("{s:s}", "source", a) : json_pack("{s:s}", "name", a);
    if (b) json_object_set_new(body, merge ? "target" : "from", json_string(b));
    json_t *j = NULL;
    int rc = srv_call(r, "POST", merge ? "/branches/merge" : "/branches", body, NULL, &j, err);
    json_decref(body);
    if (rc) return -1;
    const char *oc = json_string_value(json_object_get(j, "outcome"));
    if (outcome) *outcome = oc ? strdup(oc) : NULL;
    json_decref(j);
    return 0;
}

int gqt_srv_branch_list(const og_remote *r, char ***names, size_t *n, char **err)
{
    json_t *a = NULL;
    if (srv_branch_names(r, &a, err)) return -1;
    *n = json_array_size(a);
    *names = calloc(*n + 1, sizeof **names);
    if (!*names) abort();
    for (size_t i = 0; i < *n; i++) (*names)[i] = strdup(json_string_value(json_array_get(a, i)));
    json_decref(a);
    return 0;
}

void gqt_srv_strings_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* One request to a flat path (/graphs…); 0 on a 200, else -1 and *err. */
static int flat_call(const og_remote *r, const char *method, const char *path, json_t *body, char **err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    og_http_resp resp;
    int t = og_http_request(r, method, path, body ? "application/json" : NULL, text, NULL, NULL, &resp);
    free(text);
    int rc = 0;
    if (t || resp.status != 200) {
        *err = fail_text(&resp, t);
        rc = -1;
    }
    og_http_resp_free(&resp);
    return rc;
}

int gqt_srv_fresh(const og_remote *r, const char *id, const char *dir, const char *schema, const char *seed, char **err)
{
    json_t *body = json_pack("{s:s,s:s}", "graph_id", id, "schema_source", schema);
    int rc = flat_call(r, "POST", "/graphs", body, err);
    json_decref(body);
    if (rc) return -1;
    int blank = 1;
    for (const char *p = seed; *p; p++)
        if (*p != ' ' && *p != '\n' && *p != '\t') blank = 0;
    if (blank) return 0;
    og_remote g = *r;
    g.graph = id;
    if (!load_text(&g, dir, seed, "main", NULL, "overwrite", err)) return 0;
    char *ignored = NULL;
    gqt_srv_drop(r, id, &ignored); /* a seed that does not load leaves no graph behind */
    free(ignored);
    return -1;
}

int gqt_srv_drop(const og_remote *r, const char *id, char **err)
{
    og_buf p = OG_BUF_INIT;
    og_buf_append_str(&p, "/graphs/");
    og_http_escape(&p, id);
    int rc = flat_call(r, "DELETE", og_buf_cstr(&p), NULL, err);
    og_buf_free(&p);
    return rc;
}
