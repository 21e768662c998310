/*
 * routes_changes.c — row-level change routes (reference-surfaces.md §2.3): one commit's
 * changes against its first parent, paged (GET /commits/{id}/changes), and the branch change
 * feed with durable cursors and bounded polls (GET /changes).  The server keeps no consumer
 * state: cursors and page tokens carry everything (opaque to clients, versioned "v1").
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server_int.h"

#define PAGE_DEFAULT 1000
#define PAGE_MAX 8192
#define POLL_COMMITS 128

typedef struct filter {
    const char *types[32];
    size_t ntypes;
    unsigned ops;
    int kinds; /* bit 1 node, bit 2 edge; 0 = both */
    const char *bad;
} filter;

static enum MHD_Result take_filter(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    filter *f = cls;
    if (!value) value = "";
    if (!strcmp(key, "type")) {
        if (f->ntypes < 32) f->types[f->ntypes++] = value;
    } else if (!strcmp(key, "op")) {
        if (!strcmp(value, "insert")) f->ops |= OG_CHANGES_INSERT;
        else if (!strcmp(value, "update")) f->ops |= OG_CHANGES_UPDATE;
        else if (!strcmp(value, "delete")) f->ops |= OG_CHANGES_DELETE;
        else f->bad = "op must be insert, update or delete";
    } else if (!strcmp(key, "kind")) {
        if (!strcmp(value, "node")) f->kinds |= 1;
        else if (!strcmp(value, "edge")) f->kinds |= 2;
        else f->bad = "kind must be node or edge";
    }
    return MHD_YES;
}

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
    json_object_set_new(o, "type", json_pack("{s:O,s:O}", "id", json_object_get(c, "type"), "name",
                                             json_object_get(c, "type")));
    json_object_set_new(o, "id", json_incref(json_object_get(c, "id")));
    json_object_set_new(o, "op", json_incref(json_object_get(c, "op")));
    json_t *b = image(json_object_get(c, "before"), edge), *a = image(json_object_get(c, "after"), edge);
    if (b) json_object_set_new(o, "before", b);
    if (a) json_object_set_new(o, "after", a);
    return o;
}

/* Reads the common query parameters; a response on a bad one. */
static struct MHD_Response *read_params(og_req *r, filter *f, size_t *limit)
{
    memset(f, 0, sizeof *f);
    MHD_get_connection_values(r->c, MHD_GET_ARGUMENT_KIND, take_filter, f);
    if (f->bad) return og_resp_error(r, 400, "bad_request", f->bad, NULL, NULL);
    const char *l = og_req_arg(r, "limit");
    *limit = PAGE_DEFAULT;
    if (l) {
        char *end;
        unsigned long long v = strtoull(l, &end, 10);
        if (*end || !*l || !v) return og_resp_error(r, 400, "bad_request", "limit must be a positive integer", NULL, NULL);
        if (v > PAGE_MAX) {
            json_t *d = json_pack("{s:s,s:I,s:I}", "resource", "change_page_entries", "limit", (json_int_t)PAGE_MAX,
                                  "actual", (json_int_t)v);
            return og_resp_error(r, 413, "bad_request", "limit is above the page ceiling", "resource_limit", d);
        }
        *limit = (size_t)v;
    }
    return NULL;
}

/* The changes of one commit (filtered), or a response on failure. */
static struct MHD_Response *commit_changes(og_req *r, const char *commit, const filter *f, json_t **out)
{
    og_changes_opts o = {NULL, NULL, f->ntypes ? f->types : NULL, f->ntypes, f->ops};
    char *text = NULL;
    og_status st = og_db_commit_changes(&text, r->g->db, commit, &o);
    if (st == OG_ERR_INVALID || st == OG_ERR_UNSUPPORTED) {
        og_free(text);
        json_t *d = json_pack("{s:s,s:s}", "reason", st == OG_ERR_INVALID ? "parentless_commit" : "schema_boundary",
                              "graph_commit_id", commit);
        return og_resp_error(r, 409, "conflict", og_error_message(), "change_diff_refusal", d);
    }
    if (st) return og_resp_status(r, st);
    *out = json_loads(text, 0, NULL);
    og_free(text);
    if (!*out) return og_resp_error(r, 500, "internal", "cannot read the changes", NULL, NULL);
    if (f->kinds && f->kinds != 3) { /* the API filters types and ops; kinds are filtered here */
        json_t *keep = json_array(), *c;
        size_t i;
        json_array_foreach(json_object_get(*out, "changes"), i, c)
        {
            int edge = !strcmp(json_string_value(json_object_get(c, "kind")), "edge");
            if ((f->kinds == 2) == edge) json_array_append(keep, c);
        }
        json_object_set_new(*out, "changes", keep);
    }
    return NULL;
}

struct MHD_Response *og_h_commit_changes(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    filter f;
    size_t limit;
    struct MHD_Response *bad = read_params(r, &f, &limit);
    if (bad) return bad;
    size_t offset = 0;
    const char *tok = og_req_arg(r, "page_token");
    if (tok) {
        char *end;
        if (strncmp(tok, "v1o", 3) || !isdigit((unsigned char)tok[3]) ||
            (offset = strtoull(tok + 3, &end, 10), *end))
            return og_resp_error(r, 400, "bad_request", "page_token rejected: not a token of this route", NULL, NULL);
    }
    json_t *j;
    if ((bad = commit_changes(r, r->commit_id, &f, &j))) return bad;
    json_t *all = json_object_get(j, "changes"), *page = json_array();
    size_t n = json_array_size(all);
    for (size_t i = offset; i < n && i < offset + limit; i++) json_array_append_new(page, change_output(json_array_get(all, i)));
    json_t *o = json_object();
    json_object_set_new(o, "cause", cause_output(json_object_get(j, "cause"), "main"));
    json_object_set_new(o, "changes", page);
    if (offset + limit < n) {
        char next[48];
        snprintf(next, sizeof next, "v1o%zu", offset + limit);
        json_object_set_new(o, "next_page_token", json_string(next));
    } else {
        json_object_set_new(o, "next_page_token", json_null());
    }
    json_decref(j);
    return og_resp_json(r, 200, o);
}

/* ---- the feed ---------------------------------------------------------------------------- */

/* Cursor "v1c<commit>" (delivered up to and including commit); page token
 * "v1p<cut>.<after>.<offset>" (a poll up to the cut, resumed after commit `after`, skipping
 * `offset` changes of the next commit). */
static int parse_id(const char *s, size_t n, char out[32])
{
    if (n == 0 || n > 31) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i])) return 0;
    memcpy(out, s, n);
    out[n] = 0;
    return 1;
}

struct MHD_Response *og_h_changes(og_req *r)
{
    const char *branch = og_req_arg(r, "branch");
    if (!branch || !*branch) branch = "main";
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, branch, NULL);
    if (deny) return deny;
    filter f;
    size_t limit;
    struct MHD_Response *bad = read_params(r, &f, &limit);
    if (bad) return bad;
    const char *cursor = og_req_arg(r, "cursor"), *start = og_req_arg(r, "start"), *tok = og_req_arg(r, "page_token");
    if ((cursor != NULL) + (start != NULL) + (tok != NULL) > 1)
        return og_resp_error(r, 400, "bad_request", "cursor, start and page_token are mutually exclusive", NULL, NULL);
    /* the branch's first-parent history, newest first */
    char *text;
    og_status st = og_db_commit_list(&text, r->g->db, branch, 0);
    if (st) return og_resp_status(r, st);
    json_t *hist = json_loads(text, 0, NULL);
    og_free(text);
    json_t *commits = json_object_get(hist, "commits");
    size_t n = json_array_size(commits);
    char cut[32] = "", after[32] = "";
    size_t skip = 0;
    int from_beginning = 0;
    const char *head = json_string_value(json_object_get(json_array_get(commits, 0), "id"));
    if (tok) {
        const char *d1 = strchr(tok, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        char *end = NULL;
        if (strncmp(tok, "v1p", 3) || !d1 || !d2 || !parse_id(tok + 3, (size_t)(d1 - tok - 3), cut) ||
            !parse_id(d1 + 1, (size_t)(d2 - d1 - 1), after) || (skip = strtoull(d2 + 1, &end, 10), *end)) {
            json_decref(hist);
            return og_resp_error(r, 400, "bad_request", "change cursor rejected: malformed page_token", NULL, NULL);
        }
    } else if (cursor) {
        if (strncmp(cursor, "v1c", 3) || !parse_id(cursor + 3, strlen(cursor + 3), after)) {
            json_decref(hist);
            return og_resp_error(r, 400, "bad_request", "change cursor rejected: malformed cursor", NULL, NULL);
        }
    } else if (start && !strcmp(start, "beginning")) {
        from_beginning = 1;
    } else if (start && !strncmp(start, "after:", 6)) {
        if (!parse_id(start + 6, strlen(start + 6), after)) {
            json_decref(hist);
            return og_resp_error(r, 400, "bad_request", "change cursor rejected: bad start after:<commit_id>", NULL, NULL);
        }
    } else if (start && strcmp(start, "now")) {
        json_decref(hist);
        return og_resp_error(r, 400, "bad_request", "start must be now, beginning or after:<commit_id>", NULL, NULL);
    } else {
        snprintf(after, sizeof after, "%s", head ? head : ""); /* now */
    }
    if (!cut[0]) snprintf(cut, sizeof cut, "%s", head ? head : "");
    /* positions (index in newest-first order) of the cut and of the resume point */
    long icut = -1, iafter = from_beginning ? (long)n - 1 : -1;
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_object_get(json_array_get(commits, i), "id"));
        if (!strcmp(id, cut)) icut = (long)i;
        if (!from_beginning && !strcmp(id, after)) iafter = (long)i;
    }
    if (icut < 0 || iafter < 0 || iafter < icut) {
        json_t *d = json_pack("{s:s,s:s}", "cursor", cursor ? cursor : (tok ? tok : ""), "first_unreadable_commit_id",
                              iafter < 0 ? after : cut);
        json_decref(hist);
        return og_resp_error(r, 410, NULL, "the cursor's commit is not in the branch's history; re-baseline",
                             "change_feed_gap", d);
    }
    json_t *blocks = json_array();
    size_t delivered = 0, walked = 0;
    long i = iafter - 1;        /* the next commit to deliver (older index = larger) */
    char last_done[32] = "";
    snprintf(last_done, sizeof last_done, "%s", json_string_value(json_object_get(json_array_get(commits, iafter), "id")));
    size_t resume_skip = 0;
    int more = 0;
    for (; i >= icut; i--) {
        if (walked == POLL_COMMITS) {
            more = 1;
            break;
        }
        const char *id = json_string_value(json_object_get(json_array_get(commits, i), "id"));
        json_t *j;
        if ((bad = commit_changes(r, id, &f, &j))) {
            json_decref(blocks);
            json_decref(hist);
            return bad;
        }
        walked++;
        json_t *all = json_object_get(j, "changes"), *list = json_array();
        size_t total = json_array_size(all), k = skip;
        for (; k < total && delivered < limit; k++, delivered++)
            json_array_append_new(list, change_output(json_array_get(all, k)));
        if (json_array_size(list) || !skip)
            json_array_append_new(blocks, json_pack("{s:o,s:o}", "cause", cause_output(json_object_get(j, "cause"), branch),
                                                    "changes", list));
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
    json_t *o = json_object();
    json_object_set_new(o, "blocks", blocks);
    if (more) {
        char next[128];
        snprintf(next, sizeof next, "v1p%s.%s.%zu", cut, last_done, resume_skip);
        json_object_set_new(o, "next_page_token", json_string(next));
        json_object_set_new(o, "cursor", json_null());
        json_object_set_new(o, "caught_up", json_null());
    } else {
        char cur[48];
        snprintf(cur, sizeof cur, "v1c%s", cut);
        json_object_set_new(o, "next_page_token", json_null());
        json_object_set_new(o, "cursor", json_string(cur));
        json_object_set_new(o, "caught_up", json_boolean(head && !strcmp(cut, head)));
    }
    json_decref(hist);
    return og_resp_json(r, 200, o);
}
