/*
 * authz.c — the runtime states' built-in decisions and the hand-off to a policy engine.
 */
#include "server/authz.h"

#include <stdio.h>
#include <string.h>

const char *og_action_name(og_action a)
{
    static const char *names[] = {"read",          "export",        "change",       "schema_apply",
                                  "branch_create", "branch_delete", "branch_merge", "admin",
                                  "invoke_query",  "graph_list",    "none"};
    return (unsigned)a <= OG_ACTION_NONE ? names[a] : "?";
}

static void deny(og_authz_decision *out, const og_authz_request *req, const char *why)
{
    out->allowed = 0;
    out->mask_as_not_found = req->action == OG_ACTION_INVOKE_QUERY; /* §4 anti-probing */
    snprintf(out->message, sizeof out->message, "%s: action '%s'%s%s%s%s denied for actor '%s'", why,
             og_action_name(req->action), req->branch ? " on branch '" : "", req->branch ? req->branch : "",
             req->branch ? "'" : "", req->target_branch ? " (target branch given)" : "",
             req->actor ? req->actor : "anonymous");
}

og_status og_authz_decide(og_auth_mode mode, const og_authz *policy, const og_authz_request *req,
                          og_authz_decision *out)
{
    memset(out, 0, sizeof *out);
    if (req->action == OG_ACTION_NONE) {
        out->allowed = 1;
        return OG_OK;
    }
    switch (mode) {
    case OG_AUTH_OPEN:
        /* graph_list too: every graph's routes are open to whoever reaches the server, so
         * hiding their ids would protect nothing */
        out->allowed = 1;
        return OG_OK;
    case OG_AUTH_DEFAULT_DENY:
        if (req->action == OG_ACTION_READ) {
            out->allowed = 1;
            return OG_OK;
        }
        deny(out, req, "no policy is configured (tokens alone allow read only)");
        return OG_OK;
    case OG_AUTH_POLICY:
        if (!policy || !policy->decide) {
            if (req->action == OG_ACTION_READ) {
                out->allowed = 1;
                return OG_OK;
            }
            deny(out, req, "no policy applies");
            return OG_OK;
        }
        return policy->decide(policy->ctx, req, out);
    }
    deny(out, req, "unknown runtime state");
    return OG_OK;
}
