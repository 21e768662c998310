/*
 * api_proposals.c — merge proposals (include/omnigraph.h "Merge proposals", docs/versioning.md):
 * open, list, show, review (diff + dry-run merge), approve (= merge) and close.
 *
 * A proposal is the fold of its event log (graph/proposal.h): `opened` (source, target, title,
 * description, the source head then), then at most one of `merged` (the merge commit) or
 * `closed` (a reason).  A decision is appended at the next seq with put-if-absent, so when two
 * callers decide at once exactly one wins and the other is told the proposal is no longer open.
 * Approving merges first and records second: if the process dies in between, the merge is
 * published and the proposal still open — approving again finds the branch already merged
 * (already_up_to_date) and records it, so nothing is lost or merged twice.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/db.h"
#include "graph/proposal.h"
#include "util/datetime.h"
#include "util/error.h"
#include "util/id.h"
#include "util/jsonout.h"

static og_status dump(json_t *j, char **out)
{
    *out = j ? og_json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static void now_text(char out[25])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    og_datetime_format((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, out);
}

static const char *actor_of(og_db *db)
{
    const char *a = og_engine_actor(db->e);
    return a && *a ? a : "omnigraph";
}

/* The events of `id` folded into a proposal object (with "events" when `with_events`), and the
 * next free seq.  OG_ERR_NOT_FOUND for an unknown id. */
static og_status load(og_db *db, const char *id, int with_events, json_t **out, uint64_t *next_seq)
{
    *out = NULL;
    char **texts;
    size_t n;
    OG_TRY(og_proposal_events(og_engine_graph(db->e), id, &texts, &n));
    if (!n) return og_err(OG_ERR_NOT_FOUND, "merge proposal '%s' not found", id);
    json_t *p = json_object(), *events = json_array();
    og_status st = OG_OK;
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        json_t *e = json_loads(texts[i], 0, NULL);
        const char *ev = json_string_value(json_object_get(e, "event"));
        if (!ev || (i == 0) != !strcmp(ev, "opened")) {
            json_decref(e);
            st = og_err(OG_ERR_CORRUPT, "merge proposal %s: event %zu is malformed", id, i + 1);
            break;
        }
        if (i == 0) {
            json_object_set_new(p, "id", json_string(id));
            json_object_set_new(p, "state", json_string("open"));
            static const char *const copy[] = {"source", "target", "title", "description", "source_head"};
            for (size_t k = 0; k < sizeof copy / sizeof *copy; k++) {
                json_t *v = json_object_get(e, copy[k]);
                json_object_set(p, copy[k], v ? v : json_null());
            }
            json_object_set(p, "created_by", json_object_get(e, "actor"));
            json_object_set(p, "created_at", json_object_get(e, "at"));
            json_object_set_new(p, "updated_by", json_null());
            json_object_set_new(p, "updated_at", json_null());
            json_object_set_new(p, "merge_commit", json_null());
            json_object_set_new(p, "close_reason", json_null());
        } else if (!strcmp(json_string_value(json_object_get(p, "state")), "open")) {
            json_object_set_new(p, "state", json_string(!strcmp(ev, "merged") ? "merged" : "closed"));
            json_object_set(p, "updated_by", json_object_get(e, "actor"));
            json_object_set(p, "updated_at", json_object_get(e, "at"));
            json_t *mc = json_object_get(e, "merge_commit"), *why = json_object_get(e, "reason");
            if (mc) json_object_set(p, "merge_commit", mc);
            if (why) json_object_set(p, "close_reason", why);
        }
        json_array_append_new(events, e);
    }
    og_proposal_texts_free(texts, n);
    if (st != OG_OK) {
        json_decref(p);
        json_decref(events);
        return st;
    }
    if (with_events) json_object_set_new(p, "events", events);
    else json_decref(events);
    *next_seq = n + 1;
    *out = p;
    return OG_OK;
}

static og_status append(og_db *db, const char *id, uint64_t seq, json_t *event)
{
    char *text = json_dumps(event, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(event);
    if (!text) return og_err(OG_ERR_NOMEM, "out of memory");
    og_status st = og_proposal_append(og_engine_graph(db->e), id, seq, text, strlen(text));
    free(text);
    return st;
}

og_status og_db_proposal_create(char **out, og_db *db, const char *source, const char *target, const char *title,
                                const char *description)
{
    *out = NULL;
    if (!target) target = "main";
    if (!source || !*source) return og_err(OG_ERR_INVALID, "merge proposal: a source branch is required");
    if (!title || !*title) return og_err(OG_ERR_INVALID, "merge proposal: a title is required");
    if (!strcmp(source, target))
        return og_err(OG_ERR_INVALID, "merge proposal: source and target are both '%s'", target);
    char sh[32], th[32];
    OG_TRY(og_db_resolve_commit(db, source, sh, sizeof sh));
    OG_TRY(og_db_resolve_commit(db, target, th, sizeof th));
    /* only branches: a commit id or BRANCH~N resolves too, but cannot be merged or proposed */
    char creator[300];
    og_status bst = og_db_branch_creator(db, source, creator, sizeof creator);
    if (bst == OG_ERR_NOT_FOUND) return og_err(OG_ERR_NOT_FOUND, "merge proposal: no branch '%s'", source);
    og_error_clear();
    bst = og_db_branch_creator(db, target, creator, sizeof creator);
    if (bst == OG_ERR_NOT_FOUND) return og_err(OG_ERR_NOT_FOUND, "merge proposal: no branch '%s'", target);
    og_error_clear();
    char id[OG_ULID_LEN + 1], at[25];
    OG_TRY(og_ulid_new(id));
    now_text(at);
    json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "event", "opened", "actor", actor_of(db), "at", at,
                          "source", source, "target", target, "title", title, "description",
                          description ? description : "", "source_head", sh);
    if (!e) return og_err(OG_ERR_INVALID, "merge proposal: the title and description must be UTF-8");
    OG_TRY(append(db, id, 1, e));
    return og_db_proposal_get(out, db, id);
}

og_status og_db_proposal_get(char **out, og_db *db, const char *id)
{
    *out = NULL;
    json_t *p;
    uint64_t next;
    OG_TRY(load(db, id, 1, &p, &next));
    return dump(p, out);
}

og_status og_db_proposal_list(char **out, og_db *db, const char *state)
{
    *out = NULL;
    if (state && strcmp(state, "open") && strcmp(state, "merged") && strcmp(state, "closed"))
        return og_err(OG_ERR_INVALID, "merge proposal list: unknown state '%s' (open, merged or closed)", state);
    char **ids;
    size_t n;
    OG_TRY(og_proposal_ids(og_engine_graph(db->e), &ids, &n));
    json_t *a = json_array();
    og_status st = OG_OK;
    for (size_t i = n; i-- > 0 && st == OG_OK;) { /* ULIDs: newest last, listed first */
        json_t *p;
        uint64_t next;
        st = load(db, ids[i], 0, &p, &next);
        if (st != OG_OK) break;
        if (!state || !strcmp(json_string_value(json_object_get(p, "state")), state)) json_array_append_new(a, p);
        else json_decref(p);
    }
    og_proposal_texts_free(ids, n);
    if (st != OG_OK) {
        json_decref(a);
        return st;
    }
    return dump(json_pack("{s:o}", "proposals", a), out);
}

static og_status must_be_open(json_t *p)
{
    const char *state = json_string_value(json_object_get(p, "state"));
    if (!strcmp(state, "open")) return OG_OK;
    return og_err(OG_ERR_PRECONDITION_FAILED, "merge proposal %s is %s, not open",
                  json_string_value(json_object_get(p, "id")), state);
}

og_status og_db_proposal_close(char **out, og_db *db, const char *id, const char *reason)
{
    *out = NULL;
    json_t *p;
    uint64_t next;
    OG_TRY(load(db, id, 0, &p, &next));
    og_status st = must_be_open(p);
    json_decref(p);
    if (st != OG_OK) return st;
    char at[25];
    now_text(at);
    json_t *e = json_pack("{s:s, s:s, s:s, s:s?}", "event", "closed", "actor", actor_of(db), "at", at, "reason", reason);
    if (!e) return og_err(OG_ERR_INVALID, "merge proposal close: the reason must be UTF-8");
    st = append(db, id, next, e);
    if (st == OG_ERR_ALREADY_EXISTS)
        return og_err(OG_ERR_PRECONDITION_FAILED, "merge proposal %s was decided by someone else meanwhile", id);
    if (st != OG_OK) return st;
    return og_db_proposal_get(out, db, id);
}

og_status og_db_proposal_review(char **out, og_db *db, const char *id)
{
    *out = NULL;
    json_t *p;
    uint64_t next;
    OG_TRY(load(db, id, 1, &p, &next));
    const char *source = json_string_value(json_object_get(p, "source"));
    const char *target = json_string_value(json_object_get(p, "target"));
    json_t *doc = json_pack("{s:o}", "proposal", p);
    char base[32] = "";
    char *text = NULL;
    og_status st = og_db_merge_base(db, source, target, base, sizeof base);
    if (st == OG_OK) {
        json_object_set_new(doc, "merge_base", json_string(base));
        og_changes_opts co = {.from = base, .to = source};
        st = og_db_changes(&text, db, &co);
        if (st == OG_OK) json_object_set_new(doc, "diff", og_json_load_wide(text, strlen(text))); /* U64 whole */
        og_free(text);
        text = NULL;
    }
    if (st == OG_OK) { /* what approving would do now: the merge, decided and not published */
        og_db_merge_opts mo = {.source = source, .target = target};
        og_status ms = og_db_branch_merge_dry_run(&text, db, &mo, NULL);
        json_t *m = text ? og_json_load_wide(text, strlen(text)) : NULL;
        og_free(text);
        if (ms == OG_OK) {
            json_object_set_new(doc, "merge", m);
            json_object_set_new(doc, "conflicts", json_array());
        } else if (ms == OG_ERR_CONFLICT) {
            json_object_set_new(doc, "merge", json_null());
            json_t *c = json_object_get(m, "conflicts");
            json_object_set(doc, "conflicts", c ? c : json_array());
            json_decref(m);
            og_error_clear();
        } else {
            json_decref(m);
            st = ms;
        }
    }
    if (st != OG_OK) {
        json_decref(doc);
        return st;
    }
    return dump(doc, out);
}

og_status og_db_proposal_approve(char **out, og_db *db, const char *id, const og_db_merge_strategy *strategy,
                                 const char *expected_head)
{
    *out = NULL;
    json_t *p;
    uint64_t next;
    OG_TRY(load(db, id, 0, &p, &next));
    og_status st = must_be_open(p);
    if (st != OG_OK) {
        json_decref(p);
        return st;
    }
    og_db_merge_opts mo = {.source = json_string_value(json_object_get(p, "source")),
                           .target = json_string_value(json_object_get(p, "target")),
                           .expected_head = expected_head};
    char *mtext = NULL;
    st = og_db_branch_merge_ex(&mtext, db, &mo, strategy);
    json_decref(p);
    if (st != OG_OK) { /* conflicts (in *out) or another failure: the proposal stays open */
        *out = mtext;
        return st;
    }
    json_t *m = og_json_load_wide(mtext, strlen(mtext));
    og_free(mtext);
    json_t *c = json_object_get(m, "commit");
    const char *commit = json_string_value(json_object_get(c, "graph_commit_id"));
    char head[32] = "";
    if (!commit) { /* already up to date: merged before (a crash before the record, or by hand) */
        og_db_resolve_commit(db, json_string_value(json_object_get(m, "target")), head, sizeof head);
        og_error_clear();
        commit = head;
    }
    char at[25];
    now_text(at);
    json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s}", "event", "merged", "actor", actor_of(db), "at", at,
                          "merge_commit", commit, "outcome", json_string_value(json_object_get(m, "outcome")));
    st = append(db, id, next, e);
    if (st == OG_ERR_ALREADY_EXISTS)
        st = og_err(OG_ERR_PRECONDITION_FAILED,
                    "merge proposal %s was decided by someone else while it was being merged (the merge is published)",
                    id);
    json_t *doc = NULL;
    if (st == OG_OK) st = load(db, id, 0, &doc, &next);
    if (st != OG_OK) {
        json_decref(m);
        return st;
    }
    return dump(json_pack("{s:o, s:o}", "proposal", doc, "merge", m), out);
}
