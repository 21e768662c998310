/*
 * mcp_proposals.c — the merge-proposal tools (docs/mcp.md "Merge proposals"): an agent
 * proposes its branch for merge, a reviewer lists, reviews (the diff against the merge base
 * and what the merge would do, conflicts included, without publishing), approves (the merge,
 * by an actor the policy allows to merge into the target) or closes it.  The proposals live in
 * the graph (include/omnigraph.h "Merge proposals"); the policy questions are asked by
 * mcp.c before a call runs, with the proposal's branches (og_mcp_proposal_branches).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "util/error.h"

static const char *sarg(json_t *args, const char *k) { return json_string_value(json_object_get(args, k)); }

static json_t *status_result(og_status st)
{
    char msg[2048];
    snprintf(msg, sizeof msg, "%s: %s", og_status_name(st), og_error_message());
    return og_mcp_tool_text(msg, 1);
}

static json_t *text_result(og_status st, char *text)
{
    json_t *r;
    if (st == OG_OK) {
        r = og_mcp_tool_text(text, 0);
    } else if (st == OG_ERR_CONFLICT && text) { /* the conflicts, as data, with the message */
        json_t *doc = og_json_read(text, strlen(text));
        char msg[2048];
        snprintf(msg, sizeof msg, "conflict: %s", og_error_message());
        r = og_mcp_tool_text(msg, 1);
        json_t *sc = json_object_get(r, "structuredContent");
        if (sc && json_is_object(doc)) json_object_set(json_object_get(sc, "error"), "conflicts", json_object_get(doc, "conflicts"));
        json_decref(doc);
    } else {
        r = status_result(st);
    }
    og_free(text);
    return r;
}

og_status og_mcp_proposal_branches(og_mcp *m, const char *id, char *source, char *target, size_t cap)
{
    source[0] = target[0] = 0;
    char *text = NULL;
    OG_TRY(og_db_proposal_get(&text, m->o.db, id ? id : ""));
    json_t *p = json_loads(text, 0, NULL);
    og_free(text);
    snprintf(source, cap, "%s", json_string_value(json_object_get(p, "source")) ? json_string_value(json_object_get(p, "source")) : "");
    snprintf(target, cap, "%s", json_string_value(json_object_get(p, "target")) ? json_string_value(json_object_get(p, "target")) : "");
    json_decref(p);
    return OG_OK;
}

/* proposal_show: the review document with the diff's changes paged like rows. */
static json_t *show(og_mcp *m, json_t *args)
{
    og_mcp_page pg;
    char buf[256];
    if (og_mcp_page_args(m, args, &pg, buf, sizeof buf)) return og_mcp_tool_text(buf, 1);
    char *text = NULL;
    og_status st = og_db_proposal_review(&text, m->o.db, sarg(args, "id"));
    if (st != OG_OK) return text_result(st, text);
    json_t *doc = og_json_read(text, strlen(text)); /* the diff's U64 above 2^63-1 stays a number */
    og_free(text);
    json_t *diff = json_object_get(doc, "diff");
    json_t *ch = json_incref(json_object_get(diff, "changes"));
    json_object_set(doc, "diff_stats", json_object_get(diff, "stats"));
    json_object_del(doc, "diff");
    size_t total = json_array_size(ch);
    json_t *page = json_array();
    for (size_t i = pg.offset; i < total && i - pg.offset < pg.max_rows; i++) json_array_append(page, json_array_get(ch, i));
    json_decref(ch);
    json_object_set_new(doc, "changes", page);
    return og_mcp_page_result(doc, "changes", total, &pg);
}

static int strategy_of(const char *s, og_merge_strategy *out)
{
    if (!s || !strcmp(s, "fail")) *out = OG_MERGE_STRATEGY_FAIL;
    else if (!strcmp(s, "ours")) *out = OG_MERGE_STRATEGY_OURS;
    else if (!strcmp(s, "theirs")) *out = OG_MERGE_STRATEGY_THEIRS;
    else return 0;
    return 1;
}

json_t *og_mcp_proposal_run(og_mcp *m, const char *name, json_t *args)
{
    char *text = NULL;
    og_status st;
    if (!strcmp(name, "proposal_create")) {
        st = og_db_proposal_create(&text, m->o.db, sarg(args, "source"), sarg(args, "target"), sarg(args, "title"),
                                   sarg(args, "description"));
    } else if (!strcmp(name, "proposal_list")) {
        st = og_db_proposal_list(&text, m->o.db, sarg(args, "state"));
    } else if (!strcmp(name, "proposal_show")) {
        return show(m, args);
    } else if (!strcmp(name, "proposal_close")) {
        st = og_db_proposal_close(&text, m->o.db, sarg(args, "id"), sarg(args, "reason"));
    } else { /* proposal_approve */
        og_db_merge_strategy sg = {0};
        if (!strategy_of(sarg(args, "strategy"), &sg.all))
            return og_mcp_tool_text("invalid: `strategy` must be fail, ours or theirs", 1);
        st = og_db_proposal_approve(&text, m->o.db, sarg(args, "id"), &sg, sarg(args, "if_commit"));
    }
    return text_result(st, text);
}
