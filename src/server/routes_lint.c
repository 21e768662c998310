/*
 * routes_lint.c — POST /graphs/{id}/lint: a .gq text checked against the schema of a branch
 * or commit, nothing run (an OmniGraph-C extension, docs/server.md).  The studio's editor
 * calls it as the user types to underline parse and type errors; it is og_db_lint of the
 * public API.  It is decided as a read of that branch, exactly like POST …/query: the same
 * token and policy that may run a text may check it, and an actor confined to stored queries
 * may do neither.
 */
#include <string.h>

#include "server/server_int.h"

struct MHD_Response *og_h_lint(og_req *r)
{
    const char *key;
    json_t *v;
    json_object_foreach(r->json, key, v)
    {
        if (strcmp(key, "query") && strcmp(key, "branch") && strcmp(key, "snapshot"))
            return og_bad(r, "unknown field '%s'", key);
    }
    int wrong = 0;
    const char *src = og_req_str(r, "query", &wrong);
    if (wrong) return og_bad(r, "field '%s' must be a string", "query");
    if (!src) return og_bad(r, "missing field '%s'", "query");
    const char *branch = og_req_str(r, "branch", &wrong);
    if (wrong) return og_bad(r, "field '%s' must be a string", "branch");
    const char *snapshot = og_req_str(r, "snapshot", &wrong);
    if (wrong) return og_bad(r, "field '%s' must be a string", "snapshot");
    if (branch && snapshot) return og_bad(r, "%s", "'branch' and 'snapshot' are mutually exclusive");
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, snapshot ? branch : (branch ? branch : "main"), NULL);
    if (deny) return deny;
    og_read_opts at = {branch, snapshot};
    char *text = NULL;
    og_status st = og_db_lint(&text, r->g->db, src, strlen(src), &at);
    if (st) return og_resp_status(r, st);
    json_t *j = json_loads(text, 0, NULL);
    og_free(text);
    if (!j) return og_resp_error(r, 500, "internal", "cannot render the lint report", NULL, NULL);
    return og_resp_json(r, 200, j);
}
