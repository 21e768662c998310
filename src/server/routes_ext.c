/*
 * routes_ext.c — routes the reference's wire surface lacks, added so that every graph verb of
 * the CLI runs served as it runs embedded (docs/cli.md "Remote mode and operator config";
 * OmniGraph-C extensions, listed in docs/server.md):
 *
 *   POST …/query/explain   the plan of a read (`omnigraph query --explain [--analyze]`)
 *   GET  …/changes/diff    the row changes between two commits (`omnigraph changes --from --to`)
 *
 * Each is one call of include/omnigraph.h after the request's decision, like its neighbours in
 * routes.c; the answers are the documents the library returns, so the CLI prints them with
 * the code its embedded verbs use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

/* POST …/query/explain {query, name?, params?, branch? | snapshot?, analyze?} → {plan}:
 * og_db_query_explain's text.  Decided as a read of the branch (as POST /query); with
 * `analyze` the query runs, so it is admitted against the memory bound like any read. */
struct MHD_Response *og_h_query_explain(og_req *r)
{
    const char *key;
    json_t *v;
    json_object_foreach(r->json, key, v) if (strcmp(key, "query") && strcmp(key, "name") && strcmp(key, "params") &&
                                             strcmp(key, "branch") && strcmp(key, "snapshot") && strcmp(key, "analyze"))
        return og_bad(r, "unknown field '%s'", key);
    int bad = 0;
    const char *src = og_req_str(r, "query", &bad);
    if (bad || !src) return og_bad(r, "%s", bad ? "field 'query' must be a string" : "missing field 'query'");
    const char *name = og_req_str(r, "name", &bad);
    const char *branch = bad ? NULL : og_req_str(r, "branch", &bad);
    const char *snapshot = bad ? NULL : og_req_str(r, "snapshot", &bad);
    if (bad) return og_bad(r, "%s", "fields 'name', 'branch' and 'snapshot' must be strings");
    if (branch && snapshot) return og_bad(r, "%s", "'branch' and 'snapshot' are mutually exclusive");
    json_t *an = json_object_get(r->json, "analyze");
    if (an && !json_is_boolean(an) && !json_is_null(an)) return og_bad(r, "field '%s' must be a boolean", "analyze");
    int analyze = json_is_true(an);
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, snapshot ? branch : (branch ? branch : "main"), NULL);
    if (deny) return deny;
    char *params = og_req_object_text(r, "params", &bad);
    if (bad == 1) return og_bad(r, "field '%s' must be an object", "params");
    if (bad) return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    if (analyze) {
        struct MHD_Response *busy = og_req_mem_admit(r);
        if (busy) {
            free(params);
            return busy;
        }
    }
    og_read_opts at = {branch, snapshot};
    char *text = NULL;
    og_status st = og_db_query_explain(&text, r->g->db, src, strlen(src), name, params, &at, analyze);
    if (analyze) og_req_mem_release(r);
    free(params);
    if (st) {
        og_free(text);
        return og_resp_status(r, st);
    }
    json_t *o = json_pack("{s:s}", "plan", text ? text : "");
    og_free(text);
    return og_resp_json(r, 200, o);
}

typedef struct diff_args {
    const char *types[64];
    size_t ntypes;
    unsigned ops;
    const char *bad;
} diff_args;

static enum MHD_Result take_diff_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    diff_args *d = cls;
    (void)kind;
    if (!value) value = "";
    if (!strcmp(key, "type")) {
        if (d->ntypes < 64) d->types[d->ntypes++] = value;
        else d->bad = "at most 64 'type' filters";
    } else if (!strcmp(key, "op")) {
        if (!strcmp(value, "insert")) d->ops |= OG_CHANGES_INSERT;
        else if (!strcmp(value, "update")) d->ops |= OG_CHANGES_UPDATE;
        else if (!strcmp(value, "delete")) d->ops |= OG_CHANGES_DELETE;
        else d->bad = "op must be insert, update or delete";
    }
    return MHD_YES;
}

/* GET …/changes/diff?from=C1&to=C2&type=T&op=OP → og_db_changes' document
 * {from, to, stats, changes:[…]} (commit references in any spelling the library takes).
 * Decided as a read of main, as GET /commits/{id} (commits belong to no one branch). */
struct MHD_Response *og_h_changes_diff(og_req *r)
{
    const char *from = og_req_arg(r, "from"), *to = og_req_arg(r, "to");
    if (!from || !*from || !to || !*to) return og_bad(r, "%s", "query parameters 'from' and 'to' (commits) are required");
    diff_args d;
    memset(&d, 0, sizeof d);
    MHD_get_connection_values(r->c, MHD_GET_ARGUMENT_KIND, take_diff_arg, &d);
    if (d.bad) return og_bad(r, "%s", d.bad);
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    og_changes_opts o = {from, to, d.ntypes ? d.types : NULL, d.ntypes, d.ops};
    char *text = NULL;
    og_status st = og_db_changes(&text, r->g->db, &o);
    if (st) {
        og_free(text);
        return og_resp_status(r, st);
    }
    json_t *j = json_loads(text, 0, NULL);
    og_free(text);
    if (!j) return og_resp_error(r, 500, "internal", "cannot read the changes", NULL, NULL);
    return og_resp_json(r, 200, j);
}
