/*
 * routes_proposals.c — merge proposals over HTTP (docs/server.md "Merge proposals"), the same
 * operations and policy questions as the MCP tools (docs/mcp.md): open one on a branch
 * (`change` on it), list and review (`read`), approve = merge (`read` on the source and
 * `branch_merge` source → target), close (`change` on the source, or `branch_merge` into the
 * target).  The proposals themselves live in the graph (include/omnigraph.h).
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"
#include "util/error.h"

/* A JSON text from the API as a response (or the error, with conflicts as detail). */
static struct MHD_Response *answer(og_req *r, og_status st, char *text)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    og_free(text);
    if (st == OG_OK && j) return og_resp_json(r, 200, j);
    if (st == OG_ERR_CONFLICT && json_object_get(j, "conflicts")) {
        json_t *c = json_incref(json_object_get(j, "conflicts"));
        json_decref(j);
        return og_resp_error(r, 409, "conflict", og_error_message(), "merge_conflicts", c);
    }
    json_decref(j);
    return og_resp_status(r, st == OG_OK ? OG_ERR_INTERNAL : st);
}

/* The proposal's branches, or a 404 response. */
static struct MHD_Response *branches(og_req *r, char *source, char *target, size_t cap)
{
    char *text = NULL;
    og_status st = og_db_proposal_get(&text, r->g->db, r->name ? r->name : "");
    if (st != OG_OK) return og_resp_status(r, st);
    json_t *p = json_loads(text, 0, NULL);
    og_free(text);
    const char *s = json_string_value(json_object_get(p, "source")), *t = json_string_value(json_object_get(p, "target"));
    snprintf(source, cap, "%s", s ? s : "");
    snprintf(target, cap, "%s", t ? t : "");
    json_decref(p);
    return NULL;
}

static struct MHD_Response *str_field(og_req *r, const char *key, int required, const char **out)
{
    int bad = 0;
    *out = og_req_str(r, key, &bad);
    if (bad) return og_bad(r, "field '%s' must be a string", key);
    if (required && !*out) return og_bad(r, "missing required field '%s'", key);
    return NULL;
}

struct MHD_Response *og_h_proposal_create(og_req *r)
{
    const char *source, *target, *title, *desc;
    struct MHD_Response *bad = str_field(r, "source", 1, &source);
    if (!bad) bad = str_field(r, "target", 0, &target);
    if (!bad) bad = str_field(r, "title", 1, &title);
    if (!bad) bad = str_field(r, "description", 0, &desc);
    if (bad) return bad;
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_CHANGE, source, NULL);
    if (deny) return deny;
    char *text = NULL;
    og_status st = og_db_proposal_create(&text, r->g->db, source, target, title, desc);
    return answer(r, st, text);
}

struct MHD_Response *og_h_proposal_list(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    char *text = NULL;
    og_status st = og_db_proposal_list(&text, r->g->db, og_req_arg(r, "state"));
    return answer(r, st, text);
}

struct MHD_Response *og_h_proposal_show(og_req *r)
{
    char source[1024], target[1024];
    struct MHD_Response *resp = branches(r, source, target, sizeof source);
    if (!resp) resp = og_req_authorize(r, OG_ACTION_READ, source, NULL);
    if (resp) return resp;
    char *text = NULL;
    og_status st = og_db_proposal_review(&text, r->g->db, r->name);
    return answer(r, st, text);
}

struct MHD_Response *og_h_proposal_approve(og_req *r)
{
    const char *how, *cas;
    struct MHD_Response *bad = str_field(r, "strategy", 0, &how);
    if (!bad) bad = str_field(r, "if_commit", 0, &cas);
    if (bad) return bad;
    og_db_merge_strategy sg = {0};
    if (!how || !strcmp(how, "fail")) sg.all = OG_MERGE_STRATEGY_FAIL;
    else if (!strcmp(how, "ours")) sg.all = OG_MERGE_STRATEGY_OURS;
    else if (!strcmp(how, "theirs")) sg.all = OG_MERGE_STRATEGY_THEIRS;
    else return og_bad(r, "field '%s' must be fail, ours or theirs", "strategy");
    char source[1024], target[1024];
    struct MHD_Response *resp = branches(r, source, target, sizeof source);
    /* a merge copies the source's rows into the target: read on the source first */
    if (!resp) resp = og_req_authorize(r, OG_ACTION_READ, source, NULL);
    if (!resp) resp = og_req_authorize(r, OG_ACTION_BRANCH_MERGE, source, target);
    if (resp) return resp;
    char *text = NULL;
    og_write_hold h;
    og_write_lock(r->g->locks, target, &h); /* an approval is a merge into `target` */
    og_status st = og_db_proposal_approve(&text, r->g->db, r->name, &sg, cas);
    og_write_unlock(&h);
    return answer(r, st, text);
}

struct MHD_Response *og_h_proposal_close(og_req *r)
{
    const char *reason;
    struct MHD_Response *bad = str_field(r, "reason", 0, &reason);
    if (bad) return bad;
    char source[1024], target[1024];
    struct MHD_Response *resp = branches(r, source, target, sizeof source);
    if (resp) return resp;
    /* the author's side (may write the source) or the reviewer's (may merge into the target) */
    og_authz_decision d;
    if (og_req_decide(r, OG_ACTION_CHANGE, source, NULL, &d) != OG_OK || !d.allowed) {
        resp = og_req_authorize(r, OG_ACTION_BRANCH_MERGE, source, target);
        if (resp) return resp;
    } else if ((resp = og_req_admit(r)) != NULL) {
        return resp;
    }
    char *text = NULL;
    og_status st = og_db_proposal_close(&text, r->g->db, r->name, reason);
    return answer(r, st, text);
}
