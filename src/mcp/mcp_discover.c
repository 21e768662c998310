/*
 * mcp_discover.c — what an agent can find without being told: prompts for the common agent
 * workflows, resource templates (a commit, what a branch changed, a node by its key), and
 * completion of branch names, node types and key values (docs/mcp.md "Discovery").
 *
 * Why prompts at all: an agent host shows them to its user as ready-made tasks, and they are
 * where the graph can say how work is meant to flow here — explore, write on an own branch,
 * have it reviewed — instead of each agent guessing.  They name tools, never data, so they
 * need no authorization of their own: the tools they name are checked when called.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "util/error.h"

typedef struct prompt {
    const char *name, *title, *description;
    const char *arg, *arg_description; /* one optional or required argument (NULL = none) */
    int arg_required;
    const char *text; /* %s = the argument (or "main") */
} prompt;

static const prompt prompts[] = {
    {"explore_schema", "Explore the graph", "Learn this graph's types and how to query them before doing anything else.",
     NULL, NULL, 0,
     "Read the omnigraph://schema resource and the omnigraph://language resource. Then list the node types, their key "
     "properties and the edges between them in a short table. Try one small graph_query per node type that returns "
     "3 rows (`limit 3`), and say which stored-query tools answer common questions."},
    {"propose_change", "Propose a change", "Make a change on a branch of your own and leave it for review.", "goal",
     "what the change should achieve", 1,
     "Goal: %s\n\nWork on a branch of your own, never on main: 1) branch_create with a name that says what the change "
     "is; 2) read what you need with graph_query; 3) write with graph_mutate (or a stored mutation) passing that branch, "
     "using if_commit when you read before writing, and `insert strict` for rows that must be new; 4) check the result "
     "with branch_diff (branch = your branch) and fix anything unintended; 5) propose it for review with proposal_create "
     "(source = your branch, a title and a description of what and why) and report the proposal id. Do not merge it "
     "yourself unless you were asked to."},
    {"review_branch", "Review a branch", "Review what a branch changed before it is merged.", "branch",
     "the branch to review", 1,
     "Review branch `%s`: call branch_diff with branch=%s (page through with offset while truncated), group the changes "
     "by type and operation, and check each against the schema (omnigraph://schema) and what the rows around it say "
     "(graph_query). If the branch has an open proposal (proposal_list), proposal_show also says whether merging would "
     "conflict; approve it with proposal_approve, or close it with proposal_close and a reason. Without a proposal, call "
     "branch_merge with source=%s only if the change is correct and your policy allows it; otherwise list what must "
     "change."},
};
#define NPROMPTS (sizeof prompts / sizeof prompts[0])

json_t *og_mcp_prompts_list(void)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < NPROMPTS; i++) {
        const prompt *p = &prompts[i];
        json_t *o = json_pack("{ss ss ss}", "name", p->name, "title", p->title, "description", p->description);
        if (p->arg)
            json_object_set_new(o, "arguments", json_pack("[{ss ss sb}]", "name", p->arg, "description", p->arg_description,
                                                          "required", p->arg_required));
        json_array_append_new(arr, o);
    }
    return json_pack("{so}", "prompts", arr);
}

json_t *og_mcp_prompt_get(const char *name, json_t *args, char *err, size_t cap)
{
    for (size_t i = 0; name && i < NPROMPTS; i++) {
        const prompt *p = &prompts[i];
        if (strcmp(p->name, name)) continue;
        const char *v = p->arg ? json_string_value(json_object_get(args, p->arg)) : NULL;
        if (p->arg && p->arg_required && (!v || !*v)) {
            snprintf(err, cap, "Invalid params: prompt %s needs the argument `%s`", p->name, p->arg);
            return NULL;
        }
        char text[2048];
        snprintf(text, sizeof text, p->text, v ? v : "main", v ? v : "main", v ? v : "main");
        return json_pack("{ss s[{ss s{ss ss}}]}", "description", p->description, "messages", "role", "user", "content",
                         "type", "text", "text", text);
    }
    snprintf(err, cap, "Invalid params: unknown prompt: %.200s", name ? name : "");
    return NULL;
}

json_t *og_mcp_resource_templates(void)
{
    return json_pack("{s[{ss ss ss ss} {ss ss ss ss} {ss ss ss ss}]}", "resourceTemplates", "uriTemplate",
                     "omnigraph://commits/{commit}", "name", "commit", "description",
                     "One commit: its parents, actor, time and table versions (any commit reference: an id, a unique "
                     "prefix, a branch, BRANCH~N)", "mimeType", "application/json",
                     "uriTemplate", "omnigraph://branches/{branch}/diff", "name", "branch-diff", "description",
                     "The row-level changes of a branch since its merge base with main (the first page; the branch_diff "
                     "tool pages on)", "mimeType", "application/json",
                     "uriTemplate", "omnigraph://nodes/{type}/{key}", "name", "node", "description",
                     "One node of main by its type and key value (percent-encoded), with every property; completion "
                     "offers the node types and a type's key values", "mimeType", "application/json");
}

/* ---- nodes by key ---------------------------------------------------------------------------- */

/* The catalog's node type `name` and its key property (NULL when either is missing); *cat is
 * the catalog document to json_decref. */
static json_t *key_prop(og_db *db, const char *name, json_t **cat, json_t **type)
{
    char *text = NULL;
    *cat = *type = NULL;
    if (og_db_catalog(&text, db, NULL) != OG_OK) return NULL;
    *cat = json_loads(text, 0, NULL);
    og_free(text);
    size_t i, k;
    json_t *t, *p;
    json_array_foreach(json_object_get(*cat, "nodes"), i, t) {
        if (!name || strcmp(json_string_value(json_object_get(t, "name")), name)) continue;
        *type = t;
        json_array_foreach(json_object_get(t, "properties"), k, p) if (json_is_true(json_object_get(p, "key"))) return p;
    }
    return NULL;
}

/* Whether a key of schema type `ty` is a string (completed with starts_with) or an integer. */
static int key_is_string(const char *ty) { return !strncmp(ty, "String", 6); }
static int key_is_integer(const char *ty) { return ty[0] == 'I' || ty[0] == 'U'; }

/* %XX-decodes `in` into out (URI template expansion encodes a key's reserved characters). */
static void pct_decode(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (; *in && n + 1 < cap; in++) {
        unsigned v;
        if (*in == '%' && isxdigit((unsigned char)in[1]) && isxdigit((unsigned char)in[2]) && sscanf(in + 1, "%2x", &v) == 1) {
            out[n++] = (char)v;
            in += 2;
        } else {
            out[n++] = *in;
        }
    }
    out[n] = 0;
}

og_status og_mcp_node_read(char **out, og_db *db, const char *type, const char *key_text)
{
    *out = NULL;
    json_t *cat, *t, *kp = key_prop(db, type, &cat, &t);
    if (!kp) {
        json_decref(cat);
        return og_err(OG_ERR_NOT_FOUND, t ? "node type %s has no @key property" : "no node type %s", type);
    }
    char key[1024], src[1400];
    pct_decode(key_text, key, sizeof key);
    const char *kn = json_string_value(json_object_get(kp, "name")), *ty = json_string_value(json_object_get(kp, "type"));
    char pty[64];
    snprintf(pty, sizeof pty, "%s", ty);
    if (pty[0] && pty[strlen(pty) - 1] == '?') pty[strlen(pty) - 1] = 0;
    snprintf(src, sizeof src, "query node($k: %s) { match { $n: %s { %s: $k } } return { $n } }", pty, type, kn);
    json_t *params = json_object();
    if (key_is_integer(ty)) {
        char *end;
        long long v = strtoll(key, &end, 10);
        if (*end || !*key) {
            json_decref(params);
            json_decref(cat);
            return og_err(OG_ERR_INVALID, "the key of %s is an integer (%s), not '%s'", type, ty, key);
        }
        json_object_set_new(params, "k", json_integer(v));
    } else {
        json_object_set_new(params, "k", json_string(key));
    }
    json_decref(cat);
    char *pj = json_dumps(params, JSON_COMPACT);
    json_decref(params);
    og_rows *rows = NULL;
    og_status st = pj ? og_db_query(&rows, db, src, strlen(src), NULL, pj, NULL) : OG_ERR_NOMEM;
    free(pj);
    if (st == OG_OK && og_rows_count(rows) == 0) st = og_err(OG_ERR_NOT_FOUND, "no %s with key '%s'", type, key);
    if (st == OG_OK) {
        size_t n = 0;
        og_rows_slice(rows, 0, 1);
        st = og_rows_render(out, &n, rows, OG_FORMAT_JSON, "main");
    }
    og_rows_free(rows);
    return st;
}

/* Up to `max` key values of node type `type` that start with `prefix` (String keys: a
 * starts_with filter in the query; other keys: their text), in key order. */
static size_t complete_keys(og_db *db, const char *type, const char *prefix, json_t *values, size_t max)
{
    json_t *cat, *t, *kp = key_prop(db, type, &cat, &t);
    size_t total = 0;
    if (!kp) {
        json_decref(cat);
        return 0;
    }
    const char *kn = json_string_value(json_object_get(kp, "name")), *ty = json_string_value(json_object_get(kp, "type"));
    int str = key_is_string(ty);
    char src[1024];
    /* one more than shown, so `hasMore` is known without counting every key */
    if (str)
        snprintf(src, sizeof src,
                 "query keys($p: String) { match { $n: %s  $n.%s starts_with $p } return { $n.%s } order { $n.%s asc } "
                 "limit %zu }", type, kn, kn, kn, max + 1);
    else /* bounded too: the first 10,000 keys, filtered by their text */
        snprintf(src, sizeof src, "query keys() { match { $n: %s } return { $n.%s } order { $n.%s asc } limit 10000 }", type,
                 kn, kn);
    json_t *params = json_pack("{ss}", "p", prefix ? prefix : "");
    char *pj = json_dumps(params, JSON_COMPACT);
    json_decref(params);
    og_rows *rows = NULL;
    if (pj && og_db_query(&rows, db, src, strlen(src), NULL, str ? pj : "{}", NULL) == OG_OK) {
        char *text = NULL;
        size_t n = 0;
        if (og_rows_render(&text, &n, rows, OG_FORMAT_JSON, "main") == OG_OK) {
            json_t *doc = json_loads(text, JSON_DECODE_ANY, NULL);
            size_t i;
            json_t *row;
            json_array_foreach(json_object_get(doc, "rows"), i, row) {
                json_t *v = json_object_iter_value(json_object_iter(row));
                char buf[512];
                if (json_is_string(v)) snprintf(buf, sizeof buf, "%s", json_string_value(v));
                else if (json_is_integer(v)) snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
                else continue;
                if (prefix && strncmp(buf, prefix, strlen(prefix))) continue;
                if (total++ < max) json_array_append_new(values, json_string(buf));
            }
            json_decref(doc);
        }
        og_free(text);
    }
    free(pj);
    og_rows_free(rows);
    json_decref(cat);
    return total;
}

/* completion/complete (at most OG_MCP_COMPLETE_MAX values, prefix match): branch names for the
 * `branch` argument of a prompt or a resource template; node type names for `type` and that
 * type's key values for `key` (context.arguments.type) of omnigraph://nodes/{type}/{key}.
 * `may_read`: the caller may read main (key values are data; without it none are offered). */
#define OG_MCP_COMPLETE_MAX 100
json_t *og_mcp_complete(og_db *db, json_t *params, int may_read)
{
    json_t *arg = json_object_get(params, "argument");
    const char *an = json_string_value(json_object_get(arg, "name"));
    const char *prefix = json_string_value(json_object_get(arg, "value"));
    const char *uri = json_string_value(json_object_get(json_object_get(params, "ref"), "uri"));
    int node_ref = uri && !strcmp(uri, "omnigraph://nodes/{type}/{key}");
    json_t *values = json_array();
    size_t total = 0;
    if (node_ref && an && !strcmp(an, "key") && may_read) {
        const char *type = json_string_value(json_object_get(json_object_get(json_object_get(params, "context"), "arguments"), "type"));
        if (type) total = complete_keys(db, type, prefix, values, OG_MCP_COMPLETE_MAX);
    } else if (node_ref && an && !strcmp(an, "type") && may_read) {
        char *text = NULL;
        if (og_db_catalog(&text, db, NULL) == OG_OK) {
            json_t *cat = json_loads(text, 0, NULL);
            size_t i;
            json_t *t;
            json_array_foreach(json_object_get(cat, "nodes"), i, t) {
                const char *n = json_string_value(json_object_get(t, "name"));
                if (!n || (prefix && strncmp(n, prefix, strlen(prefix)))) continue;
                if (total++ < OG_MCP_COMPLETE_MAX) json_array_append_new(values, json_string(n));
            }
            json_decref(cat);
        }
        og_free(text);
    } else if (an && !strcmp(an, "branch") && may_read) {
        char *text = NULL;
        if (og_db_branch_list(&text, db) == OG_OK) {
            json_t *j = json_loads(text, 0, NULL);
            size_t i;
            json_t *b;
            json_array_foreach(json_object_get(j, "branches"), i, b) {
                const char *n = json_string_value(json_object_get(b, "name"));
                if (!n || (prefix && strncmp(n, prefix, strlen(prefix)))) continue;
                if (total++ < OG_MCP_COMPLETE_MAX) json_array_append_new(values, json_string(n));
            }
            json_decref(j);
        }
        og_free(text);
    }
    json_t *c = json_pack("{so sb}", "values", values, "hasMore", total > OG_MCP_COMPLETE_MAX);
    /* key values are counted only up to one past the page: the total is known when they all fit */
    if (!(node_ref && total > OG_MCP_COMPLETE_MAX)) json_object_set_new(c, "total", json_integer((json_int_t)total));
    return json_pack("{so}", "completion", c);
}
