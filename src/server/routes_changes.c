/*
 * routes_changes.c — row-level change routes (reference-surfaces.md §2.3): one commit's
 * changes against its first parent, paged (GET /commits/{id}/changes), and the branch change
 * feed with durable cursors and bounded polls (GET /changes).  The server keeps no consumer
 * state: cursors and page tokens carry everything (opaque to clients, versioned "v1").  Both
 * are og_db_commit_feed / og_db_changes_poll (api_feed.c, shared with the CLI); this file maps
 * query parameters in and the API's errors and details out.  GET /diff (an OmniGraph-C
 * extension, docs/server.md) is og_db_changes: the net rows that differ between two commits,
 * what `omnigraph changes --from --to` prints — the studio's "Diff" of two commits.  The API's
 * change text is re-read with og_json_read (a U64 above 2^63-1 is a bare number there) and
 * answered through og_resp_json, which prints it back as it was.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

#define PAGE_DEFAULT 1000
#define PAGE_MAX 8192

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

/* The feed options the query parameters select (they live as long as the request). */
static og_changes_poll_opts feed_opts(const filter *f, const char *branch, size_t limit)
{
    og_changes_poll_opts o = {branch, NULL, NULL, NULL, limit, f->ntypes ? f->types : NULL, f->ntypes, f->ops,
                              (unsigned)f->kinds};
    return o;
}

/* A feed error as the reference's response: the API's detail object says which. */
static struct MHD_Response *feed_error(og_req *r, og_status st, char *detail_text)
{
    json_t *d = detail_text ? json_loads(detail_text, 0, NULL) : NULL;
    og_free(detail_text);
    if (d && st == OG_ERR_NOT_FOUND)
        return og_resp_error(r, 410, NULL, "the cursor's commit is not in the branch's history; re-baseline",
                             "change_feed_gap", d);
    if (d) return og_resp_error(r, 409, "conflict", og_error_message(), "change_diff_refusal", d);
    return og_resp_status(r, st);
}

/* The offset a page_token carries (prefix then digits); 0 without a token.  0 when malformed. */
static int page_offset(og_req *r, const char *prefix, size_t *offset)
{
    *offset = 0;
    const char *tok = og_req_arg(r, "page_token");
    if (!tok) return 1;
    size_t pl = strlen(prefix);
    char *end;
    if (strncmp(tok, prefix, pl) || !isdigit((unsigned char)tok[pl])) return 0;
    *offset = strtoull(tok + pl, &end, 10);
    return *end == 0;
}

/* o.changes = all[offset, offset + limit), and the token of the next page or null. */
static void put_page(json_t *o, json_t *all, const char *prefix, size_t offset, size_t limit)
{
    json_t *page = json_array();
    size_t n = json_array_size(all);
    for (size_t i = offset; i < n && i < offset + limit; i++) json_array_append(page, json_array_get(all, i));
    json_object_set_new(o, "changes", page);
    if (offset + limit < n) {
        char next[48];
        snprintf(next, sizeof next, "%s%zu", prefix, offset + limit);
        json_object_set_new(o, "next_page_token", json_string(next));
    } else {
        json_object_set_new(o, "next_page_token", json_null());
    }
}

struct MHD_Response *og_h_commit_changes(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    filter f;
    size_t limit;
    struct MHD_Response *bad = read_params(r, &f, &limit);
    if (bad) return bad;
    size_t offset;
    if (!page_offset(r, "v1o", &offset))
        return og_resp_error(r, 400, "bad_request", "page_token rejected: not a token of this route", NULL, NULL);
    og_changes_poll_opts fo = feed_opts(&f, "main", limit);
    char *text = NULL;
    og_status st = og_db_commit_feed(&text, r->g->db, r->commit_id, &fo);
    if (st) return feed_error(r, st, text);
    json_t *j = og_json_read(text, strlen(text)); /* a U64 above 2^63-1 stays a number */
    og_free(text);
    if (!j) return og_resp_error(r, 500, "internal", "cannot read the changes", NULL, NULL);
    json_t *o = json_object();
    json_object_set_new(o, "cause", json_incref(json_object_get(j, "cause")));
    put_page(o, json_object_get(j, "changes"), "v1o", offset, limit);
    json_decref(j);
    return og_resp_json(r, 200, o);
}

/* GET /diff?from=&to=: the rows that differ between two commits of one schema (og_db_changes'
 * document: from, to, stats, changes), paged like a commit's changes (the whole difference is computed per request; a page token is an offset
 * into it).  Commits are graph-wide, so the decision is a read of main, as for
 * /commits/{id}/changes. */
struct MHD_Response *og_h_diff(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    filter f;
    size_t limit;
    struct MHD_Response *bad = read_params(r, &f, &limit);
    if (bad) return bad;
    const char *from = og_req_arg(r, "from"), *to = og_req_arg(r, "to");
    if (!from || !*from || !to || !*to)
        return og_resp_error(r, 400, "bad_request", "from and to (commits) are required", NULL, NULL);
    size_t offset;
    if (!page_offset(r, "v1d", &offset))
        return og_resp_error(r, 400, "bad_request", "page_token rejected: not a token of this route", NULL, NULL);
    og_changes_opts co = {from, to, f.ntypes ? f.types : NULL, f.ntypes, f.ops};
    char *text = NULL;
    og_status st = og_db_changes(&text, r->g->db, &co);
    if (st) {
        og_free(text);
        return og_resp_status(r, st);
    }
    json_t *j = og_json_read(text, strlen(text)); /* a U64 above 2^63-1 stays a number */
    og_free(text);
    if (!j) return og_resp_error(r, 500, "internal", "cannot read the changes", NULL, NULL);
    json_t *o = json_object();
    json_object_set_new(o, "from", json_incref(json_object_get(j, "from")));
    json_object_set_new(o, "to", json_incref(json_object_get(j, "to")));
    json_object_set_new(o, "stats", json_incref(json_object_get(j, "stats")));
    put_page(o, json_object_get(j, "changes"), "v1d", offset, limit);
    json_decref(j);
    return og_resp_json(r, 200, o);
}

/* ---- the feed: og_db_changes_poll, whose cursors and page tokens these are ---------------- */

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
    og_changes_poll_opts o = feed_opts(&f, branch, limit);
    o.cursor = og_req_arg(r, "cursor");
    o.start = og_req_arg(r, "start");
    o.page_token = og_req_arg(r, "page_token");
    char *text = NULL;
    og_status st = og_db_changes_poll(&text, r->g->db, &o);
    if (st) return feed_error(r, st, text);
    json_t *page = og_json_read(text, strlen(text));
    og_free(text);
    if (!page) return og_resp_error(r, 500, "internal", "cannot read the change page", NULL, NULL);
    return og_resp_json(r, 200, page);
}
