/*
 * mcp_discover.c — what an agent can find without being told: prompts for the common agent
 * workflows, resource templates (a commit, what a branch changed), and completion of branch
 * names (docs/mcp.md "Discovery").
 *
 * Why prompts at all: an agent host shows them to its user as ready-made tasks, and they are
 * where the graph can say how work is meant to flow here — explore, write on an own branch,
 * have it reviewed — instead of each agent guessing.  They name tools, never data, so they
 * need no authorization of their own: the tools they name are checked when called.
 */
#include <stdio.h>
#include <string.h>

#include "mcp/mcp_int.h"

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
     "using if_commit when you read before writing; 4) check the result with branch_diff (branch = your branch) and fix "
     "anything unintended; 5) report the branch name and the diff's summary for review. Do not merge it yourself unless "
     "you were asked to."},
    {"review_branch", "Review a branch", "Review what a branch changed before it is merged.", "branch",
     "the branch to review", 1,
     "Review branch `%s`: call branch_diff with branch=%s (page through with offset while truncated), group the changes "
     "by type and operation, and check each against the schema (omnigraph://schema) and what the rows around it say "
     "(graph_query). Then call branch_merge with source=%s only if the change is correct and your policy allows it; "
     "otherwise list what must change."},
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
    return json_pack("{s[{ss ss ss ss} {ss ss ss ss}]}", "resourceTemplates", "uriTemplate", "omnigraph://commits/{commit}",
                     "name", "commit", "description", "One commit: its parents, actor, time and table versions (any commit "
                     "reference: an id, a unique prefix, a branch, BRANCH~N)", "mimeType", "application/json",
                     "uriTemplate", "omnigraph://branches/{branch}/diff", "name", "branch-diff", "description",
                     "The row-level changes of a branch since its merge base with main (the first page; the branch_diff "
                     "tool pages on)", "mimeType", "application/json");
}

/* completion/complete: branch names for the `branch` argument of a prompt or the resource
 * templates (prefix match, sorted as the branch list is, at most 100). */
json_t *og_mcp_complete(og_db *db, json_t *params)
{
    json_t *arg = json_object_get(params, "argument");
    const char *an = json_string_value(json_object_get(arg, "name"));
    const char *prefix = json_string_value(json_object_get(arg, "value"));
    json_t *values = json_array();
    size_t total = 0;
    if (an && !strcmp(an, "branch")) {
        char *text = NULL;
        if (og_db_branch_list(&text, db) == OG_OK) {
            json_t *j = json_loads(text, 0, NULL);
            size_t i;
            json_t *b;
            json_array_foreach(json_object_get(j, "branches"), i, b) {
                const char *n = json_string_value(json_object_get(b, "name"));
                if (!n || (prefix && strncmp(n, prefix, strlen(prefix)))) continue;
                if (total++ < 100) json_array_append_new(values, json_string(n));
            }
            json_decref(j);
        }
        og_free(text);
    }
    return json_pack("{s{so sI sb}}", "completion", "values", values, "total", (json_int_t)total, "hasMore", total > 100);
}
