/*
 * cedar.c — the Cedar text a bundle compiles to (§4's model, namespace Omnigraph), for
 * operators (`omnigraph policy compile`) and for the differential test that has Cedar itself
 * evaluate it.  eval.c decides exactly what this text means; keep the two in step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_internal.h"
#include "util/buf.h"
#include "util/error.h"

static const char schema_text[] =
    "namespace Omnigraph {\n"
    "    type RequestContext = {\n"
    "        has_branch: Bool,\n"
    "        branch: String,\n"
    "        has_target_branch: Bool,\n"
    "        target_branch: String,\n"
    "        branch_is_protected: Bool,\n"
    "        target_branch_is_protected: Bool,\n"
    "        has_query: Bool,\n"
    "        query: String,\n"
    "        branch_creator: Actor,\n"
    "        target_branch_creator: Actor,\n"
    "        branch_namespace: Actor,\n"
    "        target_branch_namespace: Actor,\n"
    "    };\n"
    "\n"
    "    entity Group;\n"
    "    entity Actor in [Group];\n"
    "    entity Graph;\n"
    "    entity Server;\n"
    "\n"
    "    action \"read\", \"export\", \"change\", \"schema_apply\", \"branch_create\",\n"
    "           \"branch_delete\", \"branch_merge\", \"admin\", \"invoke_query\"\n"
    "        appliesTo { principal: Actor, resource: Graph, context: RequestContext };\n"
    "    action \"graph_list\"\n"
    "        appliesTo { principal: Actor, resource: Server, context: RequestContext };\n"
    "}\n";

const char *og_policy_cedar_schema(void) { return schema_text; }

/* A Cedar string literal: quotes, with \" \\ \n \r \t \0 and \u{..} for other control
 * characters; everything else (valid UTF-8 from libyaml) as is. */
static og_status literal(og_buf *b, const char *s)
{
    OG_TRY(og_buf_append_byte(b, '"'));
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': OG_TRY(og_buf_append_str(b, "\\\"")); break;
        case '\\': OG_TRY(og_buf_append_str(b, "\\\\")); break;
        case '\n': OG_TRY(og_buf_append_str(b, "\\n")); break;
        case '\r': OG_TRY(og_buf_append_str(b, "\\r")); break;
        case '\t': OG_TRY(og_buf_append_str(b, "\\t")); break;
        default:
            if (*p < 0x20 || *p == 0x7f) OG_TRY(og_buf_printf(b, "\\u{%x}", *p));
            else OG_TRY(og_buf_append_byte(b, *p));
        }
    }
    return og_buf_append_byte(b, '"');
}

static const char *condition(int scope, int target)
{
    switch (scope) {
    case POL_SCOPE_ANY: return "true";
    case POL_SCOPE_PROTECTED:
        return target ? "context.has_target_branch && context.target_branch_is_protected"
                      : "context.has_branch && context.branch_is_protected";
    case POL_SCOPE_UNPROTECTED:
        return target ? "context.has_target_branch && context.target_branch_is_protected == false"
                      : "context.has_branch && context.branch_is_protected == false";
    case POL_SCOPE_OWNED:
        return target ? "context.has_target_branch && context.target_branch_creator == principal"
                      : "context.has_branch && context.branch_creator == principal";
    case POL_SCOPE_ACTOR_NAMESPACE:
        return target ? "context.has_target_branch && context.target_branch_namespace == principal"
                      : "context.has_branch && context.branch_namespace == principal";
    default: return NULL;
    }
}

static og_status emit(og_buf *b, const og_policy *p, const char *graph_id)
{
    OG_TRY(og_buf_append_str(b, "// Compiled from an OmniGraph policy bundle; one policy per (rule, action).\n"));
    for (size_t i = 0; i < p->nrules; i++) {
        const pol_rule *r = &p->rules[i];
        for (size_t k = 0; k < r->naction; k++) {
            og_policy_action a = r->order[k];
            const char *name = og_policy_action_name(a);
            og_buf id = OG_BUF_INIT;
            og_status st = og_buf_printf(&id, "%s:%s", r->id, name);
            if (st == OG_OK) st = og_buf_append_str(b, "\n@id(");
            if (st == OG_OK) st = literal(b, og_buf_cstr(&id));
            og_buf_free(&id);
            OG_TRY(st);
            OG_TRY(og_buf_append_str(b, r->deny ? ")\nforbid (\n    principal in Omnigraph::Group::"
                                                : ")\npermit (\n    principal in Omnigraph::Group::"));
            OG_TRY(literal(b, r->group));
            OG_TRY(og_buf_append_str(b, ",\n    action == Omnigraph::Action::"));
            OG_TRY(literal(b, name));
            if (og_policy_action_is_server(a)) {
                OG_TRY(og_buf_append_str(b, ",\n    resource == Omnigraph::Server::\"root\"\n)"));
            } else {
                OG_TRY(og_buf_append_str(b, ",\n    resource == Omnigraph::Graph::"));
                OG_TRY(literal(b, graph_id));
                OG_TRY(og_buf_append_str(b, "\n)"));
            }
            const char *c = condition(r->branch_scope, 0);
            if (!c) c = condition(r->target_scope, 1);
            if (c) OG_TRY(og_buf_printf(b, "\nwhen { %s }", c));
            if (r->nqueries) { /* a second `when` (Cedar ANDs them) after a read/change scope */
                OG_TRY(og_buf_append_str(b, "\nwhen { context.has_query && ("));
                for (size_t q = 0; q < r->nqueries; q++) {
                    OG_TRY(og_buf_append_str(b, q ? " || context.query == " : "context.query == "));
                    OG_TRY(literal(b, r->queries[q]));
                }
                OG_TRY(og_buf_append_str(b, ") }"));
            }
            OG_TRY(og_buf_append_str(b, ";\n"));
        }
    }
    return OG_OK;
}

og_status og_policy_cedar(const og_policy *p, const char *graph_id, char **out, size_t *len)
{
    *out = NULL;
    if (len) *len = 0;
    if (!graph_id) graph_id = "default";
    if (strlen(graph_id) == 0) return og_err(OG_ERR_INVALID, "graph id must not be empty");
    og_buf b = OG_BUF_INIT;
    og_status st = emit(&b, p, graph_id);
    if (st == OG_OK) st = og_buf_append_byte(&b, '\0');
    if (st != OG_OK) {
        og_buf_free(&b);
        return st;
    }
    if (len) *len = b.len - 1;
    *out = (char *)b.data; /* og_buf's storage is malloc'd: the caller free()s it */
    return OG_OK;
}

/* A JSON string (the names are valid UTF-8: libyaml checked them). */
static og_status json_str(og_buf *b, const char *s)
{
    OG_TRY(og_buf_append_byte(b, '"'));
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            OG_TRY(og_buf_append_byte(b, '\\'));
            OG_TRY(og_buf_append_byte(b, *p));
        } else if (*p < 0x20) {
            OG_TRY(og_buf_printf(b, "\\u%04x", *p));
        } else {
            OG_TRY(og_buf_append_byte(b, *p));
        }
    }
    return og_buf_append_byte(b, '"');
}

static og_status entity(og_buf *b, const char *type, const char *id, int first)
{
    OG_TRY(og_buf_printf(b, "%s\n  {\"uid\": {\"type\": \"Omnigraph::%s\", \"id\": ", first ? "" : ",", type));
    OG_TRY(json_str(b, id));
    return og_buf_append_str(b, "}, \"attrs\": {}, \"parents\": [");
}

static og_status emit_entities(og_buf *b, const og_policy *p, const char *graph_id)
{
    OG_TRY(og_buf_append_byte(b, '['));
    int first = 1;
    for (size_t i = 0; i < p->ngroups; i++, first = 0) {
        OG_TRY(entity(b, "Group", p->groups[i], first));
        OG_TRY(og_buf_append_str(b, "]}"));
    }
    for (size_t i = 0; i < p->nactors; i++, first = 0) {
        OG_TRY(entity(b, "Actor", p->actors[i].id, first));
        int any = 0;
        for (size_t g = 0; g < p->ngroups; g++) {
            if (!(p->actors[i].groups[g / 8] & (1u << (g % 8)))) continue;
            OG_TRY(og_buf_append_str(b, any ? ", {\"type\": \"Omnigraph::Group\", \"id\": "
                                            : "{\"type\": \"Omnigraph::Group\", \"id\": "));
            OG_TRY(json_str(b, p->groups[g]));
            OG_TRY(og_buf_append_byte(b, '}'));
            any = 1;
        }
        OG_TRY(og_buf_append_str(b, "]}"));
    }
    OG_TRY(entity(b, "Graph", graph_id, first));
    OG_TRY(og_buf_append_str(b, "]}"));
    OG_TRY(entity(b, "Server", "root", 0));
    return og_buf_append_str(b, "]}\n]\n");
}

og_status og_policy_cedar_entities(const og_policy *p, const char *graph_id, char **out, size_t *len)
{
    *out = NULL;
    if (len) *len = 0;
    if (!graph_id) graph_id = "default";
    if (strlen(graph_id) == 0) return og_err(OG_ERR_INVALID, "graph id must not be empty");
    og_buf b = OG_BUF_INIT;
    og_status st = emit_entities(&b, p, graph_id);
    if (st == OG_OK) st = og_buf_append_byte(&b, '\0');
    if (st != OG_OK) {
        og_buf_free(&b);
        return st;
    }
    if (len) *len = b.len - 1;
    *out = (char *)b.data;
    return OG_OK;
}
