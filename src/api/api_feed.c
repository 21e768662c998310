/*
 * api_feed.c — the change feed of the public API (include/omnigraph.h "og_db_changes_poll"):
 * one bounded page of a branch's first-parent history as commit blocks of row changes, with
 * the reference's cursor semantics (docs/versioning.md "The change feed").  Built only on
 * og_db_commit_list and og_db_commit_changes, so it decides nothing the history and changes
 * modules do not; the graph keeps no consumer state: cursors ("v1c<commit>") and page
 * tokens ("v1p<cut>.<after>.<offset>") carry everything, the same spellings the server's
 * GET /changes uses.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/db.h"
#include "util/error.h"
#include "util/jsonout.h"

#define PAGE_DEFAULT 1000
#define PAGE_MAX 8192
#define POLL_COMMITS 128

static json_int_t iso_us(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int ms = 0;
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                     &tm.tm_sec, &ms) < 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (json_int_t)timegm(&tm) * 1000000 + (json_int_t)ms * 1000;
}

static json_t *nstr(json_t *v) { return json_is_string(v) ? json_incref(v) : json_null(); }

static json_t *cause_output(json_t *cause, const char *branch)
{
    json_t *o = json_object();
    json_object_set_new(o, "graph_commit_id", nstr(json_object_get(cause, "commit")));
    json_object_set_new(o, "parent_commit_id", nstr(json_object_get(cause, "parent")));
    json_object_set_new(o, "merged_parent_commit_id", nstr(json_object_get(cause, "merged_parent")));
    json_object_set_new(o, "authored_branch", json_string(branch));
    json_object_set_new(o, "actor_id", nstr(json_object_get(cause, "actor")));
    json_object_set_new(o, "authored_at", json_integer(iso_us(json_string_value(json_object_get(cause, "created_at")))));
    return o;
}

static json_t *image(json_t *row, int edge)
{
    if (!row || json_is_null(row)) return NULL;
    json_t *props = json_deep_copy(row);
    json_t *o = json_object();
    if (edge) {
        json_object_set_new(o, "endpoints", json_pack("{s:O,s:O}", "from", json_object_get(row, "from"), "to",
                                                      json_object_get(row, "to")));
        json_object_del(props, "from");
        json_object_del(props, "to");
    }
    json_object_set_new(o, "properties", props);
    return o;
}

static json_t *change_output(json_t *c)
{
    int edge = !strcmp(json_string_value(json_object_get(c, "kind")), "edge");
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_incref(json_object_get(c, "kind")));
    json_object_set_new(o, "type", json_pack("{s:O,s:O}", "id", json_object_get(c, "type"), "name", json_object_get(c, "type")));
    json_object_set_new(o, "id", json_incref(json_object_get(c, "id")));
    json_object_set_new(o, "op", json_incref(json_object_get(c, "op")));
    json_t *b = image(json_object_get(c, "before"), edge), *a = image(json_object_get(c, "after"), edge);
    if (b) json_object_set_new(o, "before", b);
    if (a) json_object_set_new(o, "after", a);
    return o;
}

/* One commit's changes in the feed's shape, {"cause","changes"}: types and ops filtered by
 * og_db_commit_changes, kinds here.  A refusal to diff the commit (no parent, a schema change)
 * leaves {"reason","graph_commit_id"} in *detail. */
static og_status commit_feed(og_db *db, const char *commit, const og_changes_poll_opts *o, json_t **out,
                             json_t **detail)
{
    *out = NULL;
    og_changes_opts f = {NULL, NULL, o->types, o->ntypes, o->ops};
    char *text = NULL;
    og_status st = og_db_commit_changes(&text, db, commit, &f);
    if (st == OG_ERR_INVALID || st == OG_ERR_UNSUPPORTED)
        *detail = json_pack("{s:s,s:s}", "reason", st == OG_ERR_INVALID ? "parentless_commit" : "schema_boundary",
                            "graph_commit_id", commit);
    if (st) {
        og_free(text);
        return st;
    }
    json_t *j = og_json_load_wide(text, strlen(text)); /* a U64 above 2^63-1 stays a number */
    og_free(text);
    if (!j) return og_err(OG_ERR_INTERNAL, "changes of %s: cannot read the change set", commit);
    unsigned kinds = o->kinds & (OG_CHANGES_NODES | OG_CHANGES_EDGES);
    json_t *list = json_array(), *c;
    size_t i;
    json_array_foreach(json_object_get(j, "changes"), i, c)
    {
        int edge = !strcmp(json_string_value(json_object_get(c, "kind")), "edge");
        if (!kinds || kinds == (OG_CHANGES_NODES | OG_CHANGES_EDGES) || edge == (kinds == OG_CHANGES_EDGES))
            json_array_append_new(list, change_output(c));
    }
    const char *branch = o->branch && *o->branch ? o->branch : "main";
    *out = json_pack("{s:o,s:o}", "cause", cause_output(json_object_get(j, "cause"), branch), "changes", list);
    json_decref(j);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

/* The error detail as the caller's *out (NULL when there is none). */
static og_status with_detail(char **out, og_status st, json_t *detail)
{
    if (detail) {
        *out = json_dumps(detail, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(detail);
    }
    return st;
}

og_status og_db_commit_feed(char **out, og_db *db, const char *commit, const og_changes_poll_opts *o)
{
    *out = NULL;
    if (!db || !commit || !o) return og_err(OG_ERR_INVALID, "commit feed: a commit and options are required");
    json_t *j = NULL, *detail = NULL;
    og_status st = commit_feed(db, commit, o, &j, &detail);
    if (st) return with_detail(out, st, detail);
    *out = og_json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER); /* reals in their shortest spelling */
    json_decref(j);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}

static int parse_id(const char *s, size_t n, char out[32])
{
    if (n == 0 || n > 31) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i])) return 0;
    memcpy(out, s, n);
    out[n] = 0;
    return 1;
}

og_status og_db_changes_poll(char **out, og_db *db, const og_changes_poll_opts *o)
{
    *out = NULL;
    if (!db || !o) return og_err(OG_ERR_INVALID, "changes poll: options are required");
    const char *branch = o->branch && *o->branch ? o->branch : "main";
    size_t limit = o->limit ? o->limit : PAGE_DEFAULT;
    if (limit > PAGE_MAX)
        return og_err(OG_ERR_LIMIT, "changes poll: limit %zu is above the page ceiling %d", limit, PAGE_MAX);
    const char *cursor = o->cursor, *start = o->start, *tok = o->page_token;
    if ((cursor != NULL) + (start != NULL) + (tok != NULL) > 1)
        return og_err(OG_ERR_INVALID, "changes poll: cursor, start and page_token are mutually exclusive");
    char *text;
    OG_TRY(og_db_commit_list(&text, db, branch, 0));
    json_t *hist = json_loads(text, 0, NULL);
    og_free(text);
    json_t *commits = json_object_get(hist, "commits");
    size_t n = json_array_size(commits);
    char cut[32] = "", after[32] = "";
    size_t skip = 0;
    int from_beginning = 0;
    char headbuf[32] = "";
    const char *hid = json_string_value(json_object_get(json_array_get(commits, 0), "id"));
    if (hid) snprintf(headbuf, sizeof headbuf, "%s", hid);
    const char *head = hid ? headbuf : NULL;
    og_status st = OG_OK;
    if (tok) {
        const char *d1 = strchr(tok, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        char *end = NULL;
        if (strncmp(tok, "v1p", 3) || !d1 || !d2 || !parse_id(tok + 3, (size_t)(d1 - tok - 3), cut) ||
            !parse_id(d1 + 1, (size_t)(d2 - d1 - 1), after) || !isdigit((unsigned char)d2[1]) ||
            (skip = strtoull(d2 + 1, &end, 10), *end))
            st = og_err(OG_ERR_INVALID, "change cursor rejected: malformed page_token");
    } else if (cursor) {
        if (strncmp(cursor, "v1c", 3) || !parse_id(cursor + 3, strlen(cursor + 3), after))
            st = og_err(OG_ERR_INVALID, "change cursor rejected: malformed cursor '%s'", cursor);
    } else if (start && !strcmp(start, "beginning")) {
        from_beginning = 1;
    } else if (start && !strncmp(start, "after:", 6)) {
        /* any commit reference; an id-shaped one that names nothing is a gap (below) */
        char buf[27];
        if (start[6] && og_db_resolve_commit(db, start + 6, buf, sizeof buf) == OG_OK) {
            if (!parse_id(buf, strlen(buf), after)) st = og_err(OG_ERR_INTERNAL, "resolved commit id '%s'", buf);
        } else {
            og_error_clear();
            if (!parse_id(start + 6, strlen(start + 6), after))
                st = og_err(OG_ERR_INVALID, "change cursor rejected: bad start '%s' (after:<commit_id>)", start);
        }
    } else if (start && strcmp(start, "now")) {
        st = og_err(OG_ERR_INVALID, "changes poll: start must be now, beginning or after:<commit_id> (got '%s')", start);
    } else {
        snprintf(after, sizeof after, "%s", head ? head : ""); /* now */
    }
    if (st) {
        json_decref(hist);
        return st;
    }
    if (!cut[0]) snprintf(cut, sizeof cut, "%s", head ? head : "");
    long icut = -1, iafter = from_beginning ? (long)n - 1 : -1;
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_object_get(json_array_get(commits, i), "id"));
        if (!strcmp(id, cut)) icut = (long)i;
        if (!from_beginning && !strcmp(id, after)) iafter = (long)i;
    }
    if (icut < 0 || iafter < 0 || iafter < icut) {
        const char *gap = iafter < 0 ? after : cut;
        st = og_err(OG_ERR_NOT_FOUND,
                    "change_feed_gap: commit %s is not in the first-parent history of branch '%s'; re-baseline "
                    "(omnigraph changes baseline)",
                    gap, branch);
        json_t *d = json_pack("{s:s,s:s}", "cursor", cursor ? cursor : (tok ? tok : ""), "first_unreadable_commit_id", gap);
        json_decref(hist);
        return with_detail(out, st, d);
    }
    /* from the beginning, the genesis commit (no parent, no diff) is where the feed starts */
    json_t *blocks = json_array(), *detail = NULL;
    size_t delivered = 0, walked = 0, resume_skip = 0;
    long i = iafter - 1;
    char last_done[32];
    snprintf(last_done, sizeof last_done, "%s", json_string_value(json_object_get(json_array_get(commits, iafter), "id")));
    int more = 0;
    for (; i >= icut; i--) {
        if (walked == POLL_COMMITS) {
            more = 1;
            break;
        }
        const char *id = json_string_value(json_object_get(json_array_get(commits, i), "id"));
        json_t *j = NULL;
        if ((st = commit_feed(db, id, o, &j, &detail)) != OG_OK) break;
        walked++;
        json_t *all = json_object_get(j, "changes"), *list = json_array();
        size_t total = json_array_size(all), k = skip;
        for (; k < total && delivered < limit; k++, delivered++) json_array_append(list, json_array_get(all, k));
        if (json_array_size(list) || !skip)
            json_array_append_new(blocks, json_pack("{s:O,s:o}", "cause", json_object_get(j, "cause"), "changes", list));
        else
            json_decref(list);
        json_decref(j);
        skip = 0;
        if (k < total) { /* the page is full inside this commit */
            resume_skip = k;
            more = 1;
            break;
        }
        snprintf(last_done, sizeof last_done, "%s", id);
        if (delivered >= limit && i > icut) {
            more = 1;
            i--;
            break;
        }
    }
    json_decref(hist);
    if (st) {
        json_decref(blocks);
        return with_detail(out, st, detail);
    }
    json_t *page = json_object();
    json_object_set_new(page, "blocks", blocks);
    if (more) {
        char next[128];
        snprintf(next, sizeof next, "v1p%s.%s.%zu", cut, last_done, resume_skip);
        json_object_set_new(page, "next_page_token", json_string(next));
        json_object_set_new(page, "cursor", json_null());
        json_object_set_new(page, "caught_up", json_null());
    } else {
        char cur[48];
        snprintf(cur, sizeof cur, "v1c%s", cut);
        json_object_set_new(page, "next_page_token", json_null());
        json_object_set_new(page, "cursor", json_string(cur));
        json_object_set_new(page, "caught_up", json_boolean(head && !strcmp(cut, head)));
    }
    *out = og_json_dumps(page, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(page);
    return *out ? OG_OK : og_err(OG_ERR_NOMEM, "out of memory");
}
