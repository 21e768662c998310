/*
 * routes_ext.c — routes the reference's wire surface lacks, added so that every graph verb of
 * the CLI runs served as it runs embedded (docs/cli.md "Remote mode and operator config";
 * OmniGraph-C extensions, listed in docs/server.md):
 *
 *   POST …/query/explain   the plan of a read (`omnigraph query --explain [--analyze]`)
 *
 * (`omnigraph changes --from --to` reads the studio's GET …/diff, routes_changes.c.)
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
