/*
 * routes.c — the handlers of omnigraph-server's routes (reference-surfaces.md §2.3) and the
 * route table.  Each handler reads its request, asks for the policy decision the route needs
 * (when it depends on body fields; the others are decided before the body is read), calls
 * include/omnigraph.h, and maps the API's JSON documents to the reference's wire shapes.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "server/server_int.h"

#define INTERNAL_SCHEMA_VERSION 1 /* the storage-format version this build writes (docs/storage.md) */

/* ---- shared helpers -------------------------------------------------------------------- */

/* An API document parsed back; og_json_read keeps a U64 above 2^63-1 of the rows, which
 * jansson's own parser refuses, so it prints back as the number it was. */
static json_t *parse_owned(char *text)
{
    json_t *j = text ? og_json_read(text, strlen(text)) : NULL;
    og_free(text);
    return j;
}

static json_t *str_or_null(const char *s) { return s && *s ? json_string(s) : json_null(); }

/* "2026-12-03T14:18:45.012Z" -> epoch microseconds. */
static json_int_t iso_to_us(const char *s)
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

/* An API commit document -> CommitOutput.  graph_manifest_version is the commit's
 * first-parent depth ("depth" of og_db_commit_list / og_db_commit_show), as the CLI prints. */
static json_t *commit_output(json_t *c, const char *branch)
{
    json_t *o = json_object();
    json_t *parents = json_object_get(c, "parents");
    json_object_set_new(o, "graph_commit_id", json_incref(json_object_get(c, "id")));
    json_object_set_new(o, "graph_manifest_version", json_integer(json_integer_value(json_object_get(c, "depth"))));
    json_object_set_new(o, "created_at", json_integer(iso_to_us(json_string_value(json_object_get(c, "created_at")))));
    json_object_set_new(o, "graph_branch", str_or_null(branch));
    json_object_set_new(o, "parent_commit_id", str_or_null(json_string_value(json_array_get(parents, 0))));
    json_object_set_new(o, "merged_parent_commit_id", str_or_null(json_string_value(json_array_get(parents, 1))));
    json_object_set_new(o, "actor_id", str_or_null(json_string_value(json_object_get(c, "actor"))));
    json_object_set_new(o, "actor_via", str_or_null(json_string_value(json_object_get(c, "actor_via"))));
    return o;
}

/* The CommitOutput of a just-published commit (or null). */
static json_t *receipt_commit(og_req *r, const og_receipt *rc, const char *branch)
{
    if (!rc->published) return json_null();
    char *text = NULL;
    json_t *c = og_db_commit_show(&text, r->g->db, rc->commit) == OG_OK ? parse_owned(text) : NULL;
    if (!c) {
        json_t *o = json_object();
        json_object_set_new(o, "graph_commit_id", json_string(rc->commit));
        json_object_set_new(o, "graph_manifest_version", json_integer(0));
        json_object_set_new(o, "created_at", json_integer(0));
        json_object_set_new(o, "graph_branch", json_string(branch));
        return o;
    }
    json_t *o = commit_output(c, branch);
    json_decref(c);
    return o;
}

/* The graph_manifest_version of a commit: its first-parent depth (0 when unreadable). */
static json_int_t commit_depth(og_req *r, const char *commit)
{
    char *text = NULL;
    json_t *c = commit && og_db_commit_show(&text, r->g->db, commit) == OG_OK ? parse_owned(text) : NULL;
    json_int_t d = json_integer_value(json_object_get(c, "depth"));
    json_decref(c);
    return d;
}

/* The head commit of `branch`, or "" when there is no such branch. */
static void branch_head(og_req *r, const char *branch, char out[64], int *exists)
{
    out[0] = 0;
    *exists = 0;
    char *text = NULL;
    json_t *j = og_db_branch_list(&text, r->g->db) == OG_OK ? parse_owned(text) : NULL;
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(j, "branches"), i, b)
    {
        if (!strcmp(json_string_value(json_object_get(b, "name")), branch)) {
            snprintf(out, 64, "%s", json_string_value(json_object_get(b, "head")));
            *exists = 1;
        }
    }
    json_decref(j);
}

static struct MHD_Response *bad(og_req *r, const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    return og_resp_error(r, 400, "bad_request", msg, NULL, NULL);
}

/* A required / optional string field of the body; on a wrong type *resp is set. */
static const char *field(og_req *r, const char *key, const char *alias, int required, struct MHD_Response **resp)
{
    int wrong = 0;
    const char *v = og_req_str(r, key, &wrong);
    if (!v && alias && !wrong) v = og_req_str(r, alias, &wrong);
    if (wrong)
        *resp = bad(r, "field '%s' must be a string", key);
    else if (!v && required)
        *resp = bad(r, "missing field '%s'", key);
    return v;
}

/* The body's "params" as JSON object text (NULL = none); *resp set when not an object. */
static char *params_text(og_req *r, struct MHD_Response **resp)
{
    int wrong = 0;
    char *text = og_req_object_text(r, "params", &wrong);
    if (wrong == 1) *resp = bad(r, "field '%s' must be a JSON object", "params");
    else if (wrong) *resp = og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    return text;
}

/* The body's "settings" (docs/server.md "Session settings"): each member a session setting,
 * its value the language's spelling as a string ("v2") or an integer, checked by the table
 * the `set` lines of the text are checked with.  The settings this engine has change no
 * answer (docs/query-language.md), so an accepted one needs nothing further; the text's own
 * `set` lines still apply after them.  NULL when absent or accepted, else the refusal (400). */
static struct MHD_Response *check_settings(og_req *r)
{
    int wrong = 0;
    char *text = og_req_object_text(r, "settings", &wrong);
    if (wrong == 1) return bad(r, "field '%s' must be a JSON object", "settings");
    if (wrong) return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    if (!text) return NULL;
    json_t *j = og_json_read(text, strlen(text));
    free(text);
    struct MHD_Response *resp = j ? NULL : og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v)
    {
        char val[64];
        if (json_is_string(v) && json_string_length(v) < sizeof val && strlen(json_string_value(v)) == json_string_length(v))
            snprintf(val, sizeof val, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
        else {
            resp = bad(r, "setting `%s` takes its value as a string (\"v2\") or an integer", k);
            break;
        }
        if (og_settings_check(k, val) != OG_OK) {
            resp = bad(r, "%s", og_error_message());
            break;
        }
    }
    json_decref(j);
    return resp;
}

static int body_bool(og_req *r, const char *key, int *out)
{
    json_t *v = json_object_get(r->json, key);
    if (!v || json_is_null(v)) return 1;
    if (!json_is_boolean(v)) return 0;
    *out = json_is_true(v);
    return 1;
}

/* The first query name of `.gq` source (the default when the request names none). */
static void source_query_name(const char *src, char out[128])
{
    out[0] = 0;
    const char *p = src;
    while ((p = strstr(p, "query")) != NULL) {
        int word_start = p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        p += 5;
        if (!word_start || !isspace((unsigned char)*p)) continue;
        while (isspace((unsigned char)*p)) p++;
        size_t n = 0;
        while (n < 127 && (isalnum((unsigned char)p[n]) || p[n] == '_')) n++;
        memcpy(out, p, n);
        out[n] = 0;
        return;
    }
}

/* The entity kind ("node"/"edge") of type `name` at the head of `branch`, or NULL. */
static const char *type_kind(json_t *snapshot, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(snapshot, "tables"), i, t)
    {
        if (!strcasecmp(json_string_value(json_object_get(t, "type")), name))
            return json_string_value(json_object_get(t, "kind"));
    }
    return NULL;
}

/* Sorts an array of objects by their string member `key` (an insertion sort: the arrays are
 * short — a load's types, the served graphs). */
static void sort_by_key(json_t *arr, const char *key)
{
    size_t n = json_array_size(arr);
    if (n < 2) return;
    json_t **v = malloc(n * sizeof *v);
    if (!v) return;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_incref(json_array_get(arr, i));
        const char *k = json_string_value(json_object_get(x, key));
        size_t j = i;
        for (; j > 0 && strcmp(json_string_value(json_object_get(v[j - 1], key)), k ? k : "") > 0; j--) v[j] = v[j - 1];
        v[j] = x;
    }
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, v[i]);
    free(v);
}

/* ---- flat routes ----------------------------------------------------------------------- */

static struct MHD_Response *h_healthz(og_req *r)
{
    return og_resp_json(r, 200,
                        json_pack("{s:s,s:s,s:i,s:s}", "status", "ok", "version", OG_VERSION_STRING,
                                  "internal_schema_version", INTERNAL_SCHEMA_VERSION, "source_version",
                                  "omnigraph-c " OG_VERSION_STRING));
}

static struct MHD_Response *h_openapi(og_req *r)
{
    char *doc = og_server_openapi(r->s->mode != OG_AUTH_OPEN);
    if (!doc) return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    json_t *j = parse_owned(doc);
    return og_resp_json(r, 200, j);
}

static struct MHD_Response *h_graphs(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_GRAPH_LIST, NULL, NULL);
    if (deny) return deny;
    json_t *a = json_array();
    if (r->s->graphs_dynamic) pthread_mutex_lock(&r->s->graphs_mu);
    for (size_t i = 0; i < r->s->ngraphs; i++)
        if (r->s->graphs[i].db && !r->s->graphs[i].dead)
            json_array_append_new(a, json_pack("{s:s,s:s}", "graph_id", r->s->graphs[i].id, "uri", r->s->graphs[i].uri));
    if (r->s->graphs_dynamic) pthread_mutex_unlock(&r->s->graphs_mu);
    sort_by_key(a, "graph_id"); /* graphs created while serving are kept in creation order */
    return og_resp_json(r, 200, json_pack("{s:o}", "graphs", a));
}

/* ---- reads ----------------------------------------------------------------------------- */

static const char *query_branch(og_req *r)
{
    const char *b = og_req_arg(r, "branch");
    return b && *b ? b : "main";
}

static struct MHD_Response *h_snapshot(og_req *r)
{
    /* ?snapshot=C reads commit C (time travel, as POST /query's `snapshot`); the decision is
     * read on the branch named beside it, else main */
    const char *snapshot = og_req_arg(r, "snapshot");
    if (snapshot && !*snapshot) snapshot = NULL;
    const char *b = og_req_arg(r, "branch");
    if (snapshot && b && *b) return bad(r, "%s", "'branch' and 'snapshot' are mutually exclusive");
    const char *branch = query_branch(r);
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, branch, NULL);
    if (deny) return deny;
    og_read_opts at = {snapshot ? NULL : branch, snapshot};
    char *text;
    og_status st = og_db_snapshot(&text, r->g->db, &at);
    if (st) return og_resp_status(r, st);
    json_t *j = parse_owned(text);
    json_t *ds = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(j, "tables"), i, t)
    {
        json_array_append_new(ds, json_pack("{s:O,s:O,s:O,s:O,s:O}", "entity_kind", json_object_get(t, "kind"),
                                            "type_name", json_object_get(t, "type"), "dataset_path",
                                            json_object_get(t, "table"), "published_dataset_version",
                                            json_object_get(t, "version"), "entity_count", json_object_get(t, "rows")));
    }
    json_t *o = json_object();
    json_object_set_new(o, "graph_branch", json_string(branch)); /* with `snapshot`: the branch decided on */
    json_object_set_new(o, "graph_manifest_version", json_integer(commit_depth(r, json_string_value(json_object_get(j, "commit")))));
    json_object_set_new(o, "internal_schema_version", json_integer(INTERNAL_SCHEMA_VERSION));
    json_object_set_new(o, "datasets", ds);
    json_object_set_new(o, "graph_commit_id", json_incref(json_object_get(j, "commit")));
    json_decref(j);
    return og_resp_json(r, 200, o);
}

/* og_rows_render's JSON begins {"query_name": "<name>", "target": "<target>", ...: replace the
 * target string with the object {"<kind>":"<target>"}.  NULL (text untouched) when the text
 * is not shaped so, or the name is not plain printable ASCII (then it may be escaped in the
 * text); the caller then parses it. */
static struct MHD_Response *splice_target(og_req *r, char *text, size_t len, const char *want, const char *kind)
{
    size_t wl = strlen(want), kl = strlen(kind);
    for (size_t i = 0; i < wl; i++)
        if (want[i] < 0x20 || want[i] > 0x7e || want[i] == '"' || want[i] == '\\') return NULL;
    char *key = strstr(text, "\"target\": \"");
    if (!key || (size_t)(key - text) >= 512) return NULL;
    size_t head = (size_t)(key - text) + 10; /* at the opening quote of the value */
    if (head + wl + 2 > len || memcmp(text + head + 1, want, wl) || text[head + 1 + wl] != '"') return NULL;
    size_t qlen = wl + 2, olen = kl + wl + 7, tail = len - head - qlen; /* {"kind":"want"} */
    char *buf = malloc(head + olen + tail + 1);
    if (!buf) return NULL;
    char *o = buf;
    memcpy(o, text, head), o += head;
    *o++ = '{', *o++ = '"';
    memcpy(o, kind, kl), o += kl;
    memcpy(o, "\":\"", 3), o += 3;
    memcpy(o, want, wl), o += wl;
    *o++ = '"', *o++ = '}';
    memcpy(o, text + head + qlen, tail), o += tail;
    *o = 0;
    struct MHD_Response *out = MHD_create_response_from_buffer((size_t)(o - buf), buf, MHD_RESPMEM_MUST_FREE);
    if (!out) {
        free(buf);
        return NULL;
    }
    MHD_add_response_header(out, "Content-Type", "application/json");
    r->status = 200;
    og_free(text);
    return out;
}

/* 1 when an Accept header names the Arrow IPC stream type (docs/server.md "Arrow results"): the
 * rows then leave as Arrow instead of ReadOutput JSON.  A type with q=0 is refused, not asked. */
static int wants_arrow(const char *accept)
{
    static const char want[] = "application/vnd.apache.arrow.stream";
    for (const char *p = accept; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        const char *end = p + strcspn(p, ",");
        size_t n = strcspn(p, ";,");
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
        if (n == sizeof want - 1 && !strncasecmp(p, want, n)) {
            const char *q = p + n;
            int zero = 0;
            for (; q < end; q++)
                if ((q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
                    double v = strtod(q + 2, NULL);
                    zero = v <= 0;
                }
            return !zero;
        }
        p = end;
    }
    return 0;
}

static struct MHD_Response *arrow_response(og_req *r, char *bytes, size_t len)
{
    struct MHD_Response *out = MHD_create_response_from_buffer(len, bytes, MHD_RESPMEM_MUST_FREE);
    if (!out) {
        og_free(bytes);
        return og_resp_error(r, 500, "internal", "cannot build the response", NULL, NULL);
    }
    MHD_add_response_header(out, "Content-Type", "application/vnd.apache.arrow.stream");
    r->status = 200;
    return out;
}

/* The body's optional integer `key` in [min, max] into *out: 1 when given, 0 when absent or
 * null (*out untouched), -1 with *resp the 400 when it is something else. */
static int body_count(og_req *r, const char *key, int64_t min, uint64_t max, uint64_t *out, struct MHD_Response **resp)
{
    int64_t v = -1;
    int present = 0;
    if (r->flat_ok) {
        const og_jtok *t = og_body_flat_get(r, key);
        present = t && t->kind != OG_J_NULL;
        if (present && t->kind == OG_J_INT) v = t->v.i;
    } else {
        json_t *j = r->json ? json_object_get(r->json, key) : NULL;
        present = j && !json_is_null(j);
        if (present && json_is_integer(j)) v = json_integer_value(j);
    }
    if (!present) return 0;
    if (v < min || (uint64_t)v > max) {
        char msg[160];
        snprintf(msg, sizeof msg, "field '%s' must be an integer from %lld to %llu", key, (long long)min,
                 (unsigned long long)max);
        *resp = og_resp_error(r, 400, "bad_request", msg, NULL, NULL);
        return -1;
    }
    *out = (uint64_t)v;
    return 1;
}

/* The read's page (docs/server.md "Paging a read"): `max_rows` (1 or more) and `offset` keep
 * rows [offset, offset + max_rows) before rendering; without either every row is sent.
 * *paged = 1 when either was given. */
static struct MHD_Response *read_page(og_req *r, uint64_t *offset, uint64_t *max_rows, int *paged)
{
    struct MHD_Response *resp = NULL;
    *offset = 0;
    *max_rows = UINT64_MAX;
    int o = body_count(r, "offset", 0, (uint64_t)1 << 40, offset, &resp);
    int m = o < 0 ? -1 : body_count(r, "max_rows", 1, (uint64_t)1 << 40, max_rows, &resp);
    if (o < 0 || m < 0) return resp;
    *paged = o || m;
    return NULL;
}

/* The page's fields after "rows" in a paged ReadOutput: total_rows, offset, truncated and,
 * when rows remain, next_offset. */
static void page_fields(json_t *j, size_t total, uint64_t offset, size_t kept)
{
    uint64_t end = offset + kept;
    json_object_set_new(j, "total_rows", json_integer((json_int_t)total));
    json_object_set_new(j, "offset", json_integer((json_int_t)offset));
    json_object_set_new(j, "truncated", json_boolean(end < total));
    if (end < total) json_object_set_new(j, "next_offset", json_integer((json_int_t)end));
}

/* The ad-hoc read lane after its checks: runs `src` (query `name`) and renders ReadOutput.
 * The query's time budget (--query-timeout) covers the rendering too: a result that cannot
 * be rendered in time is the same typed timeout as a query that cannot run in time. */
static struct MHD_Response *run_read(og_req *r, const char *src, const char *name, const char *params,
                                     const char *branch, const char *snapshot, int legacy)
{
    og_read_opts at = {branch, snapshot};
    og_rows *rows;
    uint64_t offset, max_rows;
    int paged = 0;
    struct MHD_Response *bad_page = read_page(r, &offset, &max_rows, &paged);
    if (bad_page) return bad_page;
    struct MHD_Response *busy = og_req_mem_admit(r); /* the server-wide memory bound */
    if (busy) return busy;
    og_status st = og_db_query(&rows, r->g->db, src, strlen(src), name, params, &at);
    if (st) {
        og_req_mem_release(r);
        return og_resp_status(r, st);
    }
    size_t total = og_rows_count(rows), kept = total;
    if (paged) {
        size_t from = offset < total ? (size_t)offset : total;
        size_t want = total - from < max_rows ? total - from : (size_t)max_rows;
        kept = og_rows_slice(rows, from, want);
        if (kept != want) { /* out of memory: the slice kept every row */
            og_rows_free(rows);
            og_req_mem_release(r);
            return og_resp_error(r, 500, "internal", "out of memory paging the result", NULL, NULL);
        }
    }
    char *text;
    size_t len;
    int arrow = wants_arrow(og_req_header(r, "Accept"));
    st = og_rows_render_in_budget(&text, &len, rows, arrow ? OG_FORMAT_ARROW : OG_FORMAT_JSON,
                                  snapshot ? snapshot : (branch ? branch : "main"));
    og_rows_free(rows);
    og_req_mem_release(r);
    if (st) return og_resp_status(r, st);
    if (arrow) {
        struct MHD_Response *out = arrow_response(r, text, len);
        if (paged && out && r->status == 200) { /* the page's counts ride in headers beside the stream */
            char v[32];
            snprintf(v, sizeof v, "%zu", total);
            MHD_add_response_header(out, "Omnigraph-Total-Rows", v);
            if ((uint64_t)kept + offset < total) {
                snprintf(v, sizeof v, "%llu", (unsigned long long)(offset + kept));
                MHD_add_response_header(out, "Omnigraph-Next-Offset", v);
            }
        }
        return out;
    }
    if (!legacy && !paged) {
        /* the rendered text names the target as a string; splice the object in, without
         * parsing the rows again (the hot path of a key lookup) */
        struct MHD_Response *fast = splice_target(r, text, len, snapshot ? snapshot : (branch ? branch : "main"),
                                                  snapshot ? "snapshot" : "branch");
        if (fast) return fast;
    }
    json_t *target = snapshot ? json_pack("{s:s}", "snapshot", snapshot)
                              : json_pack("{s:s}", "branch", branch ? branch : "main");
    json_t *j = parse_owned(text);
    if (!j) {
        json_decref(target);
        return og_resp_error(r, 500, "internal", "cannot render the result", NULL, NULL);
    }
    json_object_set_new(j, "target", target);
    if (legacy) json_object_del(j, "graph_commit_id");
    if (paged) page_fields(j, total, offset, kept);
    return og_resp_json(r, 200, j);
}

struct MHD_Response *og_run_read(og_req *r, const char *src, const char *name, const char *params, const char *branch,
                                 const char *snapshot)
{
    return run_read(r, src, name, params, branch, snapshot, 0);
}

struct MHD_Response *og_bad(og_req *r, const char *fmt, const char *arg) { return bad(r, fmt, arg); }

static struct MHD_Response *run_query(og_req *r, int legacy)
{
    struct MHD_Response *resp = NULL;
    const char *src = field(r, legacy ? "query_source" : "query", legacy ? NULL : "query_source", 1, &resp);
    const char *name = field(r, legacy ? "query_name" : "name", legacy ? NULL : "query_name", 0, &resp);
    const char *branch = field(r, "branch", NULL, 0, &resp);
    const char *snapshot = field(r, "snapshot", NULL, 0, &resp);
    if (resp) return resp;
    if (branch && snapshot) return bad(r, "%s", "'branch' and 'snapshot' are mutually exclusive");
    if ((resp = check_settings(r))) return resp;
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, snapshot ? branch : (branch ? branch : "main"), NULL);
    if (deny) return deny;
    char *params = params_text(r, &resp);
    if (resp) return resp;
    struct MHD_Response *out = run_read(r, src, name, params, branch, snapshot, legacy);
    free(params);
    if (legacy && out && r->status == 200) {
        MHD_add_response_header(out, "Deprecation", "true");
        MHD_add_response_header(out, "Link", "<query>; rel=\"successor-version\"");
    }
    return out;
}

static struct MHD_Response *h_query(og_req *r) { return run_query(r, 0); }
static struct MHD_Response *h_read(og_req *r) { return run_query(r, 1); }

/* run_query reads its body only through og_req_str, params_text and check_settings */
int og_route_flat_body(const og_route *rt) { return rt->handler == h_query || rt->handler == h_read; }

/* ---- mutations ------------------------------------------------------------------------- */

/* A raw commit id: no wildcard, list, quotes, weak prefix or white space. */
static int raw_commit_id(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i])) return 0;
    return 1;
}

static struct MHD_Response *precondition_failed(og_req *r, const char *branch, const char *expected)
{
    char head[64];
    int exists;
    branch_head(r, branch, head, &exists);
    json_t *d = json_pack("{s:s,s:o}", "expected", expected, "actual", str_or_null(head));
    char msg[256];
    snprintf(msg, sizeof msg, "branch '%s' head is not %s", branch, expected);
    return og_resp_error(r, 412, NULL, msg, "precondition_failure", d);
}

/* The ad-hoc mutation lane after its checks (and the decision): one write under the graph's
 * write lock, `cas` the expected head (412 when it moved), ChangeOutput. */
struct MHD_Response *og_run_mutation(og_req *r, const char *src, const char *name, const char *params,
                                     const char *branch, const char *cas)
{
    og_db_mutate_opts mo = {branch, NULL, cas};
    og_receipt rc;
    og_write_hold h;
    og_write_lock(r->g->locks, branch, &h);
    og_status st = og_db_mutate_ex(&rc, r->g->db, src, strlen(src), name, params, &mo);
    og_write_unlock(&h);
    if (st == OG_ERR_PRECONDITION_FAILED && cas) return precondition_failed(r, branch, cas);
    if (st) return og_resp_status(r, st);
    char qname[128];
    if (name)
        snprintf(qname, sizeof qname, "%s", name);
    else
        source_query_name(src, qname);
    json_t *o = json_object();
    json_object_set_new(o, "query_name", json_string(qname));
    json_object_set_new(o, "branch", json_string(branch));
    json_object_set_new(o, "affected_nodes", json_integer((json_int_t)rc.affected_nodes));
    json_object_set_new(o, "affected_edges", json_integer((json_int_t)rc.affected_edges));
    json_object_set_new(o, "inserted", json_integer((json_int_t)rc.inserted));
    json_object_set_new(o, "updated", json_integer((json_int_t)rc.updated));
    json_object_set_new(o, "deleted", json_integer((json_int_t)rc.deleted));
    json_object_set_new(o, "actor_id", str_or_null(r->actor));
    json_object_set_new(o, "commit", receipt_commit(r, &rc, branch));
    return og_resp_json(r, 200, o);
}

/* The Omnigraph-If-Graph-Commit header of a request: NULL and *resp unset when absent on an
 * ordinary route; *resp set when it is where it must not be, missing, or malformed. */
const char *og_req_cas(og_req *r, int conditional, struct MHD_Response **resp)
{
    const char *cas = og_req_header(r, "Omnigraph-If-Graph-Commit");
    if (!conditional && cas)
        *resp = bad(r, "%s", "Omnigraph-If-Graph-Commit is accepted only on the /if-graph-commit routes");
    else if (conditional && !cas)
        *resp = bad(r, "%s", "missing header Omnigraph-If-Graph-Commit");
    else if (conditional && !raw_commit_id(cas))
        *resp = bad(r, "%s", "Omnigraph-If-Graph-Commit must hold one raw commit id (no *, lists, quotes or W/)");
    return conditional ? cas : NULL;
}

static struct MHD_Response *run_mutate(og_req *r, int conditional, int legacy)
{
    struct MHD_Response *resp = NULL;
    const char *cas = og_req_cas(r, conditional, &resp);
    if (resp) return resp;
    const char *src = field(r, "query", "query_source", 1, &resp);
    const char *name = field(r, "name", "query_name", 0, &resp);
    const char *branch = field(r, "branch", NULL, 0, &resp);
    if (resp) return resp;
    if (!branch) branch = "main";
    if ((resp = check_settings(r))) return resp;
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_CHANGE, branch, NULL);
    if (deny) return deny;
    char *params = params_text(r, &resp);
    if (resp) return resp;
    struct MHD_Response *out = og_run_mutation(r, src, name, params, branch, cas);
    free(params);
    if (legacy && out && r->status == 200) {
        MHD_add_response_header(out, "Deprecation", "true");
        MHD_add_response_header(out, "Link", "<mutate>; rel=\"successor-version\"");
    }
    return out;
}

static struct MHD_Response *h_mutate(og_req *r) { return run_mutate(r, 0, 0); }
static struct MHD_Response *h_mutate_if(og_req *r) { return run_mutate(r, 1, 0); }
static struct MHD_Response *h_change(og_req *r) { return run_mutate(r, 0, 1); }

/* ---- loads ----------------------------------------------------------------------------- */

/* Counts the records of each type in the NDJSON file (for the per-type lists of the output). */
static void count_types(const char *path, json_t *snapshot, json_t *nodes, json_t *edges)
{
    FILE *f = fopen(path, "rb");
    if (!f) return;
    json_t *counts = json_object();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        json_t *rec = json_loadb(line, (size_t)n, JSON_DECODE_ANY, NULL);
        const char *t = json_string_value(json_object_get(rec, "type"));
        const char *e = json_string_value(json_object_get(rec, "edge"));
        const char *name = t ? t : e;
        if (name) {
            char key[300];
            snprintf(key, sizeof key, "%c%s", t ? 'n' : 'e', name);
            json_int_t c = json_integer_value(json_object_get(counts, key));
            json_object_set_new(counts, key, json_integer(c + 1));
        }
        json_decref(rec);
    }
    free(line);
    fclose(f);
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(counts, tmp, key, v)
    {
        json_t *entry = json_pack("{s:s,s:O}", "name", key + 1, "entities_loaded", v);
        json_array_append_new(key[0] == 'n' ? nodes : edges, entry);
    }
    (void)snapshot;
    json_decref(counts);
}

static void sort_by_name(json_t *arr) { sort_by_key(arr, "name"); }

/* Loads the spooled file at r->spool_path. */
/* A CSV load's per-type count: a file of one named type holds all the records, listed under
 * its kind as the snapshot names it; a file that names each row's type (:LABEL / :TYPE) lists
 * none (total_entities still counts them). */
static void count_csv(og_req *r, const char *branch, const char *type, uint64_t records, json_t *nodes, json_t *edges)
{
    char *snap = NULL;
    og_read_opts at = {branch, NULL};
    if (!type || og_db_snapshot(&snap, r->g->db, &at)) return;
    json_t *j = json_loads(snap, 0, NULL), *t;
    og_free(snap);
    size_t i;
    json_array_foreach(json_object_get(j, "tables"), i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "type")) ? json_string_value(json_object_get(t, "type")) : "", type))
            continue;
        int edge = !strcmp(json_string_value(json_object_get(t, "kind")) ? json_string_value(json_object_get(t, "kind")) : "", "edge");
        json_array_append_new(edge ? edges : nodes,
                              json_pack("{s:s,s:I}", "name", type, "entities_loaded", (json_int_t)records));
        break;
    }
    json_decref(j);
}

static struct MHD_Response *run_load_as(og_req *r, const char *branch, const char *from, const char *mode_s,
                                        int with_uri, const og_load_csv_file *csv, char delimiter, const char *cas);

static struct MHD_Response *run_load(og_req *r, const char *branch, const char *from, const char *mode_s, int with_uri)
{
    return run_load_as(r, branch, from, mode_s, with_uri, NULL, 0, NULL);
}

/* The loads after their body is spooled: NDJSON (csv NULL) or one CSV file; `cas` (may be
 * NULL) the head the branch must still have (412 when it moved, nothing written). */
static struct MHD_Response *run_load_as(og_req *r, const char *branch, const char *from, const char *mode_s,
                                        int with_uri, const og_load_csv_file *csv, char delimiter, const char *cas)
{
    og_load_mode mode = OG_LOAD_MERGE;
    if (mode_s && og_load_mode_parse(mode_s, &mode)) return bad(r, "%s", og_error_message());
    char head[64];
    int exists;
    branch_head(r, branch, head, &exists);
    int fork = !exists && from;
    if (!exists && !from) {
        char msg[300];
        snprintf(msg, sizeof msg, "branch '%s' not found (give 'from' to create it)", branch);
        return og_resp_error(r, 404, "not_found", msg, NULL, NULL);
    }
    if (fork) { /* a fork copies its source: read on it as well (docs/policy.md "Forks and merges read") */
        struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, from, NULL);
        if (!deny) deny = og_req_authorize(r, OG_ACTION_BRANCH_CREATE, from, branch);
        if (deny) return deny;
    }
    if (!(r->decided && r->action == OG_ACTION_CHANGE) || fork) {
        struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_CHANGE, branch, NULL);
        if (deny) return deny;
    }
    og_load_opts lo = {.mode = mode, .branch = branch, .from = fork ? from : NULL, .expected_head = cas};
    og_receipt rc;
    og_write_hold h;
    og_write_lock(r->g->locks, branch, &h);
    og_status st = csv ? og_db_load_csv(&rc, r->g->db, csv, 1, delimiter, &lo) : og_db_load(&rc, r->g->db, r->spool_path, &lo);
    og_write_unlock(&h);
    if (st == OG_ERR_PRECONDITION_FAILED && cas) return precondition_failed(r, branch, cas);
    if (st) return og_resp_status(r, st);
    json_t *nodes = json_array(), *edges = json_array();
    if (csv) count_csv(r, branch, csv->type, rc.records, nodes, edges);
    else count_types(r->spool_path, NULL, nodes, edges);
    sort_by_name(nodes);
    sort_by_name(edges);
    json_t *o = json_object();
    if (with_uri) json_object_set_new(o, "uri", json_string(r->g->uri));
    json_object_set_new(o, "branch", json_string(branch));
    json_object_set_new(o, "base_branch", str_or_null(from));
    json_object_set_new(o, "branch_created", json_boolean(fork));
    json_object_set_new(o, "mode", json_string(og_load_mode_name(mode)));
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "edges", edges);
    json_object_set_new(o, "total_entities", json_integer((json_int_t)rc.records));
    /* loads never embed: "unsupported" when an @embed type was touched (docs/embeddings.md) */
    json_object_set_new(o, "embedding_generation", rc.embed_touched ? json_string("unsupported") : json_null());
    json_object_set_new(o, "actor_id", str_or_null(r->actor));
    json_object_set_new(o, "commit", receipt_commit(r, &rc, branch));
    return og_resp_json(r, 200, o);
}

static struct MHD_Response *load_ndjson(og_req *r, int conditional)
{
    struct MHD_Response *resp = NULL;
    const char *cas = og_req_cas(r, conditional, &resp);
    if (resp) return resp;
    if (r->spool_fd < 0) { /* an empty body: still one (empty) batch file */
        const char *dir = getenv("TMPDIR");
        snprintf(r->spool_path, sizeof r->spool_path, "%s/omnigraph-load-XXXXXX", dir && *dir ? dir : "/tmp");
        r->spool_fd = mkstemp(r->spool_path);
        if (r->spool_fd < 0) {
            r->spool_path[0] = 0;
            return og_resp_error(r, 500, "internal", "cannot create a temporary file", NULL, NULL);
        }
    }
    return run_load_as(r, query_branch(r), og_req_arg(r, "from"), og_req_arg(r, "mode"), 0, NULL, 0, cas);
}

static struct MHD_Response *h_load_ndjson(og_req *r) { return load_ndjson(r, 0); }
/* POST …/load/ndjson/if-graph-commit: the same load, only while the branch head is the
 * Omnigraph-If-Graph-Commit commit (`omnigraph load --if-commit` served). */
static struct MHD_Response *h_load_ndjson_if(og_req *r) { return load_ndjson(r, 1); }

/* POST …/load/csv?type=T&delimiter=C&branch=&from=&mode=: one CSV file (docs/load.md "CSV")
 * as the body, `text/csv`, loaded as one commit like `omnigraph load --csv T=FILE`. */
static struct MHD_Response *h_load_csv(og_req *r)
{
    const char *type = og_req_arg(r, "type"), *delim = og_req_arg(r, "delimiter");
    if (delim && (strlen(delim) != 1 || delim[0] == '"' || delim[0] == '\n' || delim[0] == '\r'))
        return bad(r, "%s", "'delimiter' must be one character other than a quote or a line break");
    if (r->spool_fd < 0) { /* an empty body: an empty file, which the CSV reader refuses (no header) */
        const char *dir = getenv("TMPDIR");
        snprintf(r->spool_path, sizeof r->spool_path, "%s/omnigraph-load-XXXXXX", dir && *dir ? dir : "/tmp");
        r->spool_fd = mkstemp(r->spool_path);
        if (r->spool_fd < 0) {
            r->spool_path[0] = 0;
            return og_resp_error(r, 500, "internal", "cannot create a temporary file", NULL, NULL);
        }
    }
    og_load_csv_file f = {type && *type ? type : NULL, r->spool_path};
    return run_load_as(r, query_branch(r), og_req_arg(r, "from"), og_req_arg(r, "mode"), 0, &f, delim ? delim[0] : 0,
                       NULL);
}

static struct MHD_Response *load_json(og_req *r, int legacy)
{
    struct MHD_Response *resp = NULL;
    const char *data = field(r, "data", NULL, 1, &resp);
    const char *branch = field(r, "branch", NULL, 0, &resp);
    const char *from = field(r, "from", NULL, 0, &resp);
    const char *mode = field(r, "mode", NULL, 0, &resp);
    if (resp) return resp;
    const char *dir = getenv("TMPDIR");
    snprintf(r->spool_path, sizeof r->spool_path, "%s/omnigraph-load-XXXXXX", dir && *dir ? dir : "/tmp");
    r->spool_fd = mkstemp(r->spool_path);
    if (r->spool_fd < 0) {
        r->spool_path[0] = 0;
        return og_resp_error(r, 500, "internal", "cannot create a temporary file", NULL, NULL);
    }
    size_t n = json_string_length(json_object_get(r->json, "data"));
    for (size_t off = 0; off < n;) {
        ssize_t w = write(r->spool_fd, data + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return og_resp_error(r, 500, "internal", "cannot spool the load", NULL, NULL);
        off += (size_t)w;
    }
    struct MHD_Response *out = run_load(r, branch ? branch : "main", from, mode, 1);
    if (legacy && out) {
        MHD_add_response_header(out, "Deprecation", "true");
        MHD_add_response_header(out, "Link", "<load>; rel=\"successor-version\"");
    }
    return out;
}

static struct MHD_Response *h_load(og_req *r) { return load_json(r, 0); }
static struct MHD_Response *h_ingest(og_req *r) { return load_json(r, 1); }

/* ---- export: a producer thread writes NDJSON into a pipe; the response reads it -------- */

typedef struct export_job {
    og_db *db;
    char *branch;
    char commit[32];  /* export this commit instead of the branch head ("" = head) */
    char *trailer;    /* a last line written only after every record succeeded (baseline) */
    int nothing;      /* the filters left no type: only the trailer is written */
    char **types;
    size_t ntypes;
    int rfd, wfd;
    pthread_t th;
    int started;
    og_status st;
    og_req *r;
} export_job;

static void *export_main(void *arg)
{
    export_job *j = arg;
    FILE *f = fdopen(j->wfd, "w");
    if (!f) {
        close(j->wfd);
        j->st = OG_ERR_IO;
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 64 * 1024);
    og_read_opts at = {j->commit[0] ? NULL : j->branch, j->commit[0] ? j->commit : NULL};
    j->st = j->nothing ? OG_OK : og_db_export(j->db, f, &at, (const char *const *)j->types, j->ntypes);
    if (!j->st && j->trailer && fputs(j->trailer, f) < 0) j->st = OG_ERR_IO;
    if (fclose(f) && !j->st) j->st = OG_ERR_IO;
    return NULL;
}

static ssize_t export_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    export_job *j = cls;
    for (;;) {
        ssize_t n = read(j->rfd, buf, max);
        if (n > 0) return n;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
        /* EOF: the producer is done; a failure after the 200 aborts the stream */
        pthread_join(j->th, NULL);
        j->started = 0;
        if (j->st) {
            if (j->r) j->r->stream_failed = 1;
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
}

static void export_free(void *cls)
{
    export_job *j = cls;
    if (j->rfd >= 0) close(j->rfd); /* a producer still writing gets EPIPE and stops */
    if (j->started) pthread_join(j->th, NULL);
    for (size_t i = 0; i < j->ntypes; i++) free(j->types[i]);
    free(j->types);
    free(j->branch);
    free(j->trailer);
    free(j);
}

/* Starts the stream of `types` (names; ntypes 0 = every type, unless `nothing`) of the branch
 * head or of `commit`, followed by `trailer` (taken over; may be NULL).  Every check is done. */
static struct MHD_Response *start_export(og_req *r, const char *branch, const char *commit, char **types,
                                         size_t ntypes, int nothing, char *trailer)
{
    export_job *j = calloc(1, sizeof *j);
    if (!j) {
        for (size_t i = 0; i < ntypes; i++) free(types[i]);
        free(types);
        free(trailer);
        return og_resp_error(r, 500, "internal", "out of memory", NULL, NULL);
    }
    j->rfd = j->wfd = -1;
    j->db = r->g->db;
    j->r = r;
    j->branch = strdup(branch);
    snprintf(j->commit, sizeof j->commit, "%s", commit ? commit : "");
    j->types = types;
    j->ntypes = ntypes;
    j->nothing = nothing;
    j->trailer = trailer;
    pthread_mutex_lock(&r->s->mu);
    int slot = r->s->exports < r->s->o.export_slots;
    if (slot) r->s->exports++;
    pthread_mutex_unlock(&r->s->mu);
    if (!slot) {
        export_free(j);
        json_t *d = json_pack("{s:s,s:I,s:I}", "resource", "stream_export_slots", "limit",
                              (json_int_t)r->s->o.export_slots, "actual", (json_int_t)r->s->o.export_slots + 1);
        return og_resp_error(r, 413, "bad_request", "too many export streams at once; retry later", "resource_limit", d);
    }
    r->export_slot = 1;
    int fds[2];
    if (pipe(fds)) {
        export_free(j);
        return og_resp_error(r, 500, "internal", "cannot create a pipe", NULL, NULL);
    }
    j->rfd = fds[0];
    j->wfd = fds[1];
    if (pthread_create(&j->th, NULL, export_main, j)) {
        close(j->wfd);
        export_free(j);
        return og_resp_error(r, 500, "internal", "cannot start the export", NULL, NULL);
    }
    j->started = 1;
    struct MHD_Response *out = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, export_read, j, export_free);
    if (!out) {
        export_free(j);
        return NULL;
    }
    MHD_add_response_header(out, "Content-Type", "application/x-ndjson; charset=utf-8");
    r->status = 200;
    return out;
}

/* The body's field `key`: absent/null, or an array of strings (else *resp). */
static json_t *string_list(og_req *r, const char *key, struct MHD_Response **resp)
{
    json_t *a = json_object_get(r->json, key), *v;
    if (!a || json_is_null(a)) return NULL;
    size_t i;
    if (!json_is_array(a)) goto bad;
    json_array_foreach(a, i, v) if (!json_is_string(v)) goto bad;
    return a;
bad:
    *resp = bad(r, "field '%s' must be an array of strings", key);
    return NULL;
}

/* The shared prelude of the streaming routes (/export, /changes/baseline): the body holds only
 * the fields of `allowed` (space separated), an optional string `branch` (default main). */
static struct MHD_Response *stream_fields(og_req *r, const char *allowed, const char **branch)
{
    const char *key;
    json_t *v;
    json_object_foreach(r->json, key, v)
    {
        size_t n = strlen(key);
        int known = 0;
        for (const char *p = allowed; *p && !known;) {
            size_t k = strcspn(p, " ");
            known = k == n && !strncmp(p, key, n);
            p += k + (p[k] == ' ');
        }
        if (!known) return bad(r, "unknown field '%s'", key);
    }
    struct MHD_Response *resp = NULL;
    *branch = field(r, "branch", NULL, 0, &resp);
    if (!*branch) *branch = "main";
    return resp;
}

/* ... then the export decision on the branch and the snapshot of its head, or of `commit`
 * (*snap, owned). */
static struct MHD_Response *stream_snapshot(og_req *r, const char *branch, const char *commit, json_t **snap)
{
    *snap = NULL;
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_EXPORT, branch, NULL);
    if (deny) return deny;
    og_read_opts at = {commit ? NULL : branch, commit};
    char *text;
    og_status st = og_db_snapshot(&text, r->g->db, &at);
    if (st) return og_resp_status(r, st);
    *snap = parse_owned(text);
    return *snap ? NULL : og_resp_error(r, 500, "internal", "cannot read the snapshot", NULL, NULL);
}

static struct MHD_Response *h_export(og_req *r)
{
    const char *branch;
    struct MHD_Response *resp = stream_fields(r, "branch snapshot type_names", &branch);
    json_t *types = resp ? NULL : string_list(r, "type_names", &resp);
    const char *snapshot = resp ? NULL : field(r, "snapshot", NULL, 0, &resp);
    if (resp) return resp;
    if (snapshot && json_object_get(r->json, "branch") && !json_is_null(json_object_get(r->json, "branch")))
        return bad(r, "%s", "'branch' and 'snapshot' are mutually exclusive");
    /* every check before the 200: the decision, the branch or commit and the type names */
    json_t *snap, *v;
    if ((resp = stream_snapshot(r, branch, snapshot, &snap))) return resp;
    char commit[32] = ""; /* the commit the snapshot resolved to: the stream reads exactly it */
    if (snapshot) snprintf(commit, sizeof commit, "%s", json_string_value(json_object_get(snap, "commit")));
    size_t i;
    json_array_foreach(types, i, v) if (!type_kind(snap, json_string_value(v)))
    {
        json_decref(snap);
        return bad(r, "unknown type name in 'type_names': %s", json_string_value(v));
    }
    json_decref(snap);
    size_t n = json_array_size(types);
    char **names = calloc(n + 1, sizeof *names);
    json_array_foreach(types, i, v) names[i] = strdup(json_string_value(v));
    return start_export(r, branch, snapshot ? commit : NULL, names, n, 0, NULL);
}

/* POST /changes/baseline: the entities of one commit (the branch head, pinned), then the
 * line {"baseline":{"snapshot_commit_id","resume_cursor"}} to poll /changes from. */
static struct MHD_Response *h_baseline(og_req *r)
{
    const char *branch;
    struct MHD_Response *resp = stream_fields(r, "branch kind type op", &branch);
    json_t *kinds = resp ? NULL : string_list(r, "kind", &resp), *types = resp ? NULL : string_list(r, "type", &resp);
    if (!resp) string_list(r, "op", &resp); /* ops do not narrow a snapshot of entities */
    if (resp) return resp;
    json_t *snap, *v;
    if ((resp = stream_snapshot(r, branch, NULL, &snap))) return resp;
    size_t i;
    int want_node = !json_array_size(kinds), want_edge = want_node;
    json_array_foreach(kinds, i, v)
    {
        if (!strcmp(json_string_value(v), "node")) want_node = 1;
        else if (!strcmp(json_string_value(v), "edge")) want_edge = 1;
        else {
            json_decref(snap);
            return bad(r, "kind must be node or edge, not '%s'", json_string_value(v));
        }
    }
    json_array_foreach(types, i, v) if (!type_kind(snap, json_string_value(v)))
    {
        json_decref(snap);
        return bad(r, "unknown type '%s'", json_string_value(v));
    }
    /* the selected types: listed (or all), of the wanted kinds */
    json_t *tables = json_object_get(snap, "tables"), *t;
    char **names = calloc(json_array_size(tables) + 1, sizeof *names);
    size_t n = 0;
    json_array_foreach(tables, i, t)
    {
        const char *name = json_string_value(json_object_get(t, "type"));
        int edge = !strcmp(json_string_value(json_object_get(t, "kind")), "edge");
        int listed = !json_array_size(types);
        size_t k;
        json_t *w;
        json_array_foreach(types, k, w) listed |= !strcasecmp(json_string_value(w), name);
        if (listed && (edge ? want_edge : want_node)) names[n++] = strdup(name);
    }
    char head[32];
    snprintf(head, sizeof head, "%s", json_string_value(json_object_get(snap, "commit")));
    json_decref(snap);
    char *trailer = malloc(160);
    snprintf(trailer, 160, "{\"baseline\":{\"snapshot_commit_id\":\"%s\",\"resume_cursor\":\"v1c%s\"}}\n", head, head);
    return start_export(r, branch, head, names, n, n == 0, trailer);
}

/* ---- schema ---------------------------------------------------------------------------- */

static struct MHD_Response *h_schema_get(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    char *text;
    og_status st = og_db_schema_source(&text, r->g->db, NULL);
    if (st) return og_resp_status(r, st);
    json_t *o = json_pack("{s:s}", "schema_source", text);
    og_free(text);
    return og_resp_json(r, 200, o);
}

static struct MHD_Response *h_schema_plan(og_req *r)
{
    struct MHD_Response *resp = NULL;
    const char *src = field(r, "schema_source", NULL, 1, &resp);
    if (resp) return resp;
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    char *text;
    og_status st = og_db_schema_plan(&text, r->g->db, NULL, "schema.pg", src, strlen(src), 1);
    if (st) return og_resp_status(r, st);
    json_t *plan = parse_owned(text);
    json_t *steps = json_object_get(plan, "steps");
    json_t *o = json_object();
    json_object_set_new(o, "uri", json_string(r->g->uri));
    json_object_set_new(o, "supported", json_incref(json_object_get(plan, "supported")));
    json_object_set_new(o, "step_count", json_integer((json_int_t)json_array_size(steps)));
    json_object_set_new(o, "steps", steps ? json_incref(steps) : json_array());
    json_decref(plan);
    return og_resp_json(r, 200, o);
}

static struct MHD_Response *h_schema_apply(og_req *r)
{
    struct MHD_Response *resp = NULL;
    const char *src = field(r, "schema_source", NULL, 1, &resp);
    if (resp) return resp;
    int loss = 0;
    if (!body_bool(r, "allow_data_loss", &loss)) return bad(r, "field '%s' must be a boolean", "allow_data_loss");
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_SCHEMA_APPLY, NULL, "main");
    if (deny) return deny;
    if (r->s->o.cluster)
        return og_resp_error(r, 409, "conflict",
                             "this graph is managed by its cluster: change its schema with `omnigraph cluster apply`",
                             NULL, NULL);
    og_db_schema_apply_opts so = {NULL, NULL, loss, 1};
    og_receipt rc;
    char *plan_text = NULL;
    og_write_hold h;
    og_write_lock(r->g->locks, "main", &h);
    og_status st = og_db_schema_apply_ex(&rc, &plan_text, r->g->db, "schema.pg", src, strlen(src), &so);
    og_write_unlock(&h);
    if (st) {
        og_free(plan_text);
        return og_resp_status(r, st);
    }
    json_t *plan = parse_owned(plan_text);
    json_t *steps = json_object_get(plan, "steps");
    json_t *o = json_object();
    json_object_set_new(o, "uri", json_string(r->g->uri));
    json_object_set_new(o, "supported", json_true());
    json_object_set_new(o, "applied", json_boolean(rc.published));
    json_object_set_new(o, "step_count", json_integer((json_int_t)json_array_size(steps)));
    json_t *commit = receipt_commit(r, &rc, "main"); /* the head's depth when nothing was published */
    json_object_set_new(o, "graph_manifest_version",
                        json_integer(json_is_object(commit) ? json_integer_value(json_object_get(commit, "graph_manifest_version"))
                                                            : commit_depth(r, "main")));
    json_object_set_new(o, "steps", steps ? json_incref(steps) : json_array());
    json_object_set_new(o, "actor_id", str_or_null(r->actor));
    json_object_set_new(o, "commit", commit);
    json_decref(plan);
    return og_resp_json(r, 200, o);
}

/* ---- branches -------------------------------------------------------------------------- */

static struct MHD_Response *h_branches_list(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    char *text;
    og_status st = og_db_branch_list(&text, r->g->db);
    if (st) return og_resp_status(r, st);
    json_t *j = parse_owned(text);
    json_t *names = json_array();
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(j, "branches"), i, b) json_array_append(names, json_object_get(b, "name"));
    /* the reference's names, then (an OmniGraph-C addition) each branch's record in the same
     * order: head, creator, base, creation time, message */
    json_t *details = json_incref(json_object_get(j, "branches"));
    json_decref(j);
    return og_resp_json(r, 200, json_pack("{s:o,s:o}", "branches", names, "details", details ? details : json_array()));
}

static struct MHD_Response *h_branch_create(og_req *r)
{
    struct MHD_Response *resp = NULL;
    const char *name = field(r, "name", NULL, 1, &resp);
    const char *from = field(r, "from", NULL, 0, &resp);
    const char *message = field(r, "message", NULL, 0, &resp); /* an OmniGraph-C addition */
    if (resp) return resp;
    if (!from) from = "main";
    /* the new branch holds everything of its source: read on the source first (docs/policy.md) */
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, from, NULL);
    if (!deny) deny = og_req_authorize(r, OG_ACTION_BRANCH_CREATE, from, name);
    if (deny) return deny;
    og_write_hold h;
    og_write_lock(r->g->locks, name, &h);
    og_db_branch_create_opts co = {OG_DB_BRANCH_CREATE_OPTS_VERSION, from, NULL, message};
    og_status st = og_db_branch_create_ex(NULL, r->g->db, name, &co);
    og_write_unlock(&h);
    if (st) return og_resp_status(r, st);
    return og_resp_json(r, 200, json_pack("{s:s,s:s,s:s,s:o,s:o}", "uri", r->g->uri, "from", from, "name", name, "actor_id",
                                          str_or_null(r->actor), "message", message && *message ? json_string(message)
                                                                                                : json_null()));
}

static struct MHD_Response *h_branch_delete(og_req *r)
{
    const char *name = r->path_branch;
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_BRANCH_DELETE, NULL, name);
    if (deny) return deny;
    og_write_hold h;
    og_write_lock(r->g->locks, name, &h);
    og_status st = og_db_branch_delete(r->g->db, name);
    og_write_unlock(&h);
    if (st) return og_resp_status(r, st);
    return og_resp_json(r, 200,
                        json_pack("{s:s,s:s,s:o}", "uri", r->g->uri, "name", name, "actor_id", str_or_null(r->actor)));
}

static const char *conflict_kind(const char *k)
{
    static const char *known[] = {"divergent_insert",    "divergent_update",      "delete_vs_update",
                                  "orphan_edge",         "unique_violation",      "cardinality_violation",
                                  "value_constraint_violation"};
    for (size_t i = 0; k && i < sizeof known / sizeof *known; i++)
        if (!strcmp(k, known[i])) return known[i];
    return "value_constraint_violation";
}

/* One side of a merge strategy: "ours" / "theirs"; -1 for anything else. */
static int strategy_side(json_t *v)
{
    const char *s = json_string_value(v);
    return !s ? -1 : !strcmp(s, "ours") ? OG_MERGE_STRATEGY_OURS : !strcmp(s, "theirs") ? OG_MERGE_STRATEGY_THEIRS : -1;
}

/* The body's `strategy` (an OmniGraph-C extension, `omnigraph branch merge --strategy`):
 * absent, "ours" | "theirs" for every row conflict, or an object naming a side per conflict
 * kind ({"all"?, "divergent_insert"?, "divergent_update"?, "delete_vs_update"?}). */
static int merge_strategy(og_req *r, og_db_merge_strategy *sg)
{
    memset(sg, 0, sizeof *sg);
    json_t *v = json_object_get(r->json, "strategy");
    if (!v || json_is_null(v)) return 1;
    if (json_is_string(v)) {
        int side = strategy_side(v);
        if (side < 0) return 0;
        sg->all = (og_merge_strategy)side;
        return 1;
    }
    if (!json_is_object(v) || !json_object_size(v)) return 0;
    const char *k;
    json_t *x;
    json_object_foreach(v, k, x)
    {
        int side = strategy_side(x);
        og_merge_strategy *slot = !strcmp(k, "all")                ? &sg->all
                                  : !strcmp(k, "divergent_insert") ? &sg->divergent_insert
                                  : !strcmp(k, "divergent_update") ? &sg->divergent_update
                                  : !strcmp(k, "delete_vs_update") ? &sg->delete_vs_update
                                                                   : NULL;
        if (side < 0 || !slot) return 0;
        *slot = (og_merge_strategy)side;
    }
    return 1;
}

static struct MHD_Response *h_branch_merge(og_req *r)
{
    struct MHD_Response *resp = NULL;
    const char *source = field(r, "source", NULL, 1, &resp);
    const char *target = field(r, "target", NULL, 0, &resp);
    if (resp) return resp;
    int del = 0;
    if (!body_bool(r, "delete_branch", &del)) return bad(r, "field '%s' must be a boolean", "delete_branch");
    og_db_merge_strategy sg;
    if (!merge_strategy(r, &sg))
        return bad(r, "%s", "field 'strategy' must be \"ours\", \"theirs\" or an object mapping all, divergent_insert, "
                            "divergent_update or delete_vs_update to \"ours\" or \"theirs\"");
    int dry = 0;
    if (!body_bool(r, "dry_run", &dry)) return bad(r, "field '%s' must be a boolean", "dry_run");
    if (dry) del = 0;
    if (!target) target = "main";
    /* a merge copies the source's rows into the target: read on the source first (docs/policy.md) */
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, source, NULL);
    if (!deny) deny = og_req_authorize(r, OG_ACTION_BRANCH_MERGE, source, target);
    if (deny) return deny;
    og_db_merge_opts mo = {source, target, NULL, 0};
    char *text = NULL;
    og_write_hold h;
    /* No lock on the target here: the engine queues the writers of one branch itself and
     * lets the next merge plan on the one being published (docs/graph-authority.md §2,
     * "Writers of one branch in one process"), which a lock held to the end would forbid. */
    og_status st = dry ? og_db_branch_merge_dry_run(&text, r->g->db, &mo, &sg)
                       : og_db_branch_merge_ex(&text, r->g->db, &mo, &sg);
    json_t *j = parse_owned(text);
    if (st == OG_ERR_CONFLICT && json_object_get(j, "conflicts")) {
        char *snap_text = NULL;
        og_read_opts at = {target, NULL};
        json_t *snap = og_db_snapshot(&snap_text, r->g->db, &at) == OG_OK ? parse_owned(snap_text) : NULL;
        json_t *list = json_array();
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(j, "conflicts"), i, c)
        {
            const char *type = json_string_value(json_object_get(c, "type"));
            const char *kind = type ? type_kind(snap, type) : NULL;
            json_t *e = json_object();
            json_object_set_new(e, "entity_kind", json_string(kind ? kind : "node"));
            json_object_set_new(e, "type_name", json_string(type ? type : ""));
            json_object_set_new(e, "entity_id", str_or_null(json_string_value(json_object_get(c, "id"))));
            json_object_set_new(e, "kind", json_string(conflict_kind(json_string_value(json_object_get(c, "kind")))));
            json_object_set_new(e, "message", json_incref(json_object_get(c, "message")));
            /* an OmniGraph-C addition: for a row conflict, each property whose values differ with
             * its base, source and target values (the studio shows one row per property) */
            json_t *props = json_object_get(c, "properties");
            if (json_is_array(props)) json_object_set_new(e, "properties", json_incref(props));
            json_array_append_new(list, e);
        }
        json_decref(snap);
        json_decref(j);
        return og_resp_error(r, 409, "conflict", og_error_message(), "merge_conflicts", list);
    }
    if (st) {
        json_decref(j);
        return og_resp_status(r, st);
    }
    json_t *o = json_object();
    json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "target", json_string(target));
    json_object_set_new(o, "outcome", json_incref(json_object_get(j, "outcome")));
    /* the actor the merge is recorded under: the token's, else (unauthenticated) the library's */
    json_object_set_new(o, "actor_id",
                        str_or_null(r->actor ? r->actor : json_string_value(json_object_get(j, "actor_id"))));
    /* OmniGraph-C additions, the library's merge document (og_db_branch_merge_ex): base,
     * source_head, previous_head, commit, inserted/updated/deleted, resolved (the conflicts a
     * strategy settled), stats, and dry_run for a dry run — so a served `branch merge --json`
     * prints what the embedded one prints.  branch_deleted is the server's own, below. */
    const char *key;
    json_t *val;
    json_object_foreach(j, key, val) if (strcmp(key, "branch_deleted") && !json_object_get(o, key))
        json_object_set(o, key, val);
    json_decref(j);
    if (del) {
        char creator[OG_ACTOR_NAME_MAX];
        og_req_branch_creator(r, source, creator, sizeof creator); /* for `owned` scopes */
        og_authz_request q = {r->actor, OG_ACTION_BRANCH_DELETE, r->g->id, NULL, source, NULL, NULL, creator};
        og_authz_decision d;
        og_status pst = og_authz_decide(r->s->mode, r->s->o.policy, &q, &d);
        if (pst || !d.allowed) {
            json_object_set_new(o, "branch_deleted", json_false());
            json_object_set_new(o, "branch_delete_error", json_string(pst ? "policy evaluation failed" : d.message));
        } else if ((og_write_lock(r->g->locks, source, &h), pst = og_db_branch_delete(r->g->db, source),
                    og_write_unlock(&h), pst) != OG_OK) {
            json_object_set_new(o, "branch_deleted", json_false());
            json_object_set_new(o, "branch_delete_error", json_string(og_error_message()));
        } else {
            json_object_set_new(o, "branch_deleted", json_true());
        }
    }
    return og_resp_json(r, 200, o);
}

/* ---- commits --------------------------------------------------------------------------- */

static struct MHD_Response *h_commits_list(og_req *r)
{
    const char *branch = query_branch(r);
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, branch, NULL);
    if (deny) return deny;
    char *text;
    og_status st = og_db_commit_list(&text, r->g->db, branch, 0);
    if (st) return og_resp_status(r, st);
    json_t *j = parse_owned(text);
    json_t *cs = json_object_get(j, "commits");
    size_t i;
    json_t *c, *out = json_array();
    json_array_foreach(cs, i, c) json_array_append_new(out, commit_output(c, branch));
    json_decref(j);
    return og_resp_json(r, 200, json_pack("{s:o}", "commits", out));
}

static struct MHD_Response *h_commit_show(og_req *r)
{
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, "main", NULL);
    if (deny) return deny;
    char *text;
    og_status st = og_db_commit_show(&text, r->g->db, r->commit_id);
    if (st) return og_resp_status(r, st);
    json_t *j = parse_owned(text);
    json_t *o = commit_output(j, NULL);
    json_decref(j);
    return og_resp_json(r, 200, o);
}

/* ---- the route table ------------------------------------------------------------------- */

#define G "/graphs/{graph_id}"
const og_route og_routes[] = {
    {"GET", "/healthz", h_healthz, OG_BODY_NONE, 0, OG_ACTION_NONE, "", "healthz", "Process health", NULL,
     "HealthOutput", NULL},
    {"GET", "/openapi.json", h_openapi, OG_BODY_NONE, 0, OG_ACTION_NONE, "", "openapi", "This OpenAPI document", NULL,
     NULL, NULL},
    {"GET", "/graphs", h_graphs, OG_BODY_NONE, 1, OG_ACTION_GRAPH_LIST, "", "list_graphs", "List served graphs", NULL,
     "GraphListResponse", NULL},
    {"POST", "/graphs", og_h_graph_create, OG_BODY_JSON, 1, OG_ACTION_ADMIN, "", "create_graph",
     "Create a graph under the server's --graph-dir (OmniGraph-C extension)", "GraphCreateRequest", "GraphCreateOutput",
     NULL},
    {"DELETE", G, og_h_graph_delete, OG_BODY_NONE, 1, OG_ACTION_ADMIN, "", "delete_graph",
     "Delete a graph created through POST /graphs (OmniGraph-C extension)", NULL, "GraphDeleteOutput", NULL},
    {"GET", G "/snapshot", h_snapshot, OG_BODY_NONE, 1, OG_ACTION_READ, "branch snapshot", "cluster_snapshot",
     "Per-dataset versions and entity counts of a branch head (or of a commit: snapshot)", NULL, "SnapshotOutput", NULL},
    {"POST", G "/query", h_query, OG_BODY_JSON, 1, OG_ACTION_READ, "", "cluster_query", "Run an inline read query",
     "QueryRequest", "ReadOutput", NULL},
    {"POST", G "/query/explain", og_h_query_explain, OG_BODY_JSON, 1, OG_ACTION_READ, "", "cluster_query_explain",
     "The plan of an inline read query (analyze: run it and add actual rows; OmniGraph-C extension)",
     "ExplainRequest", "ExplainOutput", NULL},
    {"POST", G "/read", h_read, OG_BODY_JSON, 1, OG_ACTION_READ, "", "cluster_read",
     "Deprecated: run an inline read query (use /query)", "ReadRequest", "ReadOutput", NULL},
    {"POST", G "/mutate/if-graph-commit", h_mutate_if, OG_BODY_JSON, 1, OG_ACTION_CHANGE, "",
     "cluster_mutate_if_graph_commit", "Run an inline mutation if the branch head is the given commit",
     "ChangeRequest", "ChangeOutput", NULL},
    {"POST", G "/mutate", h_mutate, OG_BODY_JSON, 1, OG_ACTION_CHANGE, "", "cluster_mutate", "Run an inline mutation",
     "ChangeRequest", "ChangeOutput", NULL},
    {"POST", G "/change", h_change, OG_BODY_JSON, 1, OG_ACTION_CHANGE, "", "cluster_change",
     "Deprecated: run an inline mutation (use /mutate)", "ChangeRequest", "ChangeOutput", NULL},
    {"POST", G "/load/ndjson/if-graph-commit", h_load_ndjson_if, OG_BODY_NDJSON, 1, OG_ACTION_CHANGE, "branch from mode",
     "cluster_load_ndjson_if_graph_commit", "Load one NDJSON batch as one commit if the branch head is the given commit",
     NULL, "GraphBatchLoadOutput", NULL},
    {"POST", G "/load/ndjson", h_load_ndjson, OG_BODY_NDJSON, 1, OG_ACTION_CHANGE, "branch from mode",
     "cluster_load_ndjson", "Load one NDJSON graph batch as one commit", NULL, "GraphBatchLoadOutput", NULL},
    {"POST", G "/load/csv", h_load_csv, OG_BODY_NDJSON, 1, OG_ACTION_CHANGE, "type delimiter branch from mode",
     "cluster_load_csv", "Load one CSV file (text/csv) of type T as one commit", NULL, "GraphBatchLoadOutput", NULL},
    {"POST", G "/load", h_load, OG_BODY_JSON, 1, OG_ACTION_CHANGE, "", "cluster_load",
     "Load an NDJSON batch given as a JSON string", "IngestRequest", "IngestOutput", NULL},
    {"POST", G "/ingest", h_ingest, OG_BODY_JSON, 1, OG_ACTION_CHANGE, "", "cluster_ingest",
     "Deprecated: load an NDJSON batch (use /load)", "IngestRequest", "IngestOutput", NULL},
    {"POST", G "/export", h_export, OG_BODY_JSON, 1, OG_ACTION_EXPORT, "", "cluster_export",
     "Stream a branch as NDJSON", "ExportRequest", NULL, "application/x-ndjson"},
    {"POST", G "/changes/baseline", h_baseline, OG_BODY_JSON, 1, OG_ACTION_EXPORT, "", "cluster_changes_baseline",
     "Stream an entity snapshot, then the commit and cursor to poll /changes from", "ChangeBaselineRequest", NULL,
     "application/x-ndjson"},
    {"GET", G "/blob", og_h_blob, OG_BODY_NONE, 1, OG_ACTION_READ, "entity type id property branch snapshot",
     "cluster_blob", "One Blob cell (ranges, ETag, conditional headers)", NULL, NULL, "application/octet-stream"},
    {"HEAD", G "/blob", og_h_blob, OG_BODY_NONE, 1, OG_ACTION_READ, "entity type id property branch snapshot",
     "cluster_blob_head", "Headers of one Blob cell", NULL, NULL, "application/octet-stream"},
    {"GET", G "/queries", og_h_queries_list, OG_BODY_NONE, 1, OG_ACTION_READ, "", "cluster_list_queries",
     "The graph's stored queries with their typed parameters", NULL, "StoredQueryListOutput", NULL},
    {"POST", G "/queries/{name}/if-graph-commit", og_h_query_invoke_if, OG_BODY_JSON_OPTIONAL, 1,
     OG_ACTION_INVOKE_QUERY, "", "cluster_invoke_query_if_graph_commit",
     "Invoke a stored mutation if the branch head is the given commit", "StoredQueryRequest", "ChangeOutput", NULL},
    {"POST", G "/queries/{name}", og_h_query_invoke, OG_BODY_JSON_OPTIONAL, 1, OG_ACTION_INVOKE_QUERY, "",
     "cluster_invoke_query", "Invoke a stored query by name (ReadOutput or ChangeOutput)", "StoredQueryRequest",
     "StoredQueryOutput", NULL},
    {"POST", G "/mcp", og_h_mcp, OG_BODY_RAW, 1, OG_ACTION_NONE, "", "cluster_mcp",
     "Model Context Protocol, Streamable HTTP: one JSON-RPC 2.0 message per POST (initialize answers an "
     "Mcp-Session-Id; sessions are optional)", "JsonRpcMessage", "JsonRpcResponse", NULL},
    {"DELETE", G "/mcp", og_h_mcp, OG_BODY_NONE, 1, OG_ACTION_NONE, "", "cluster_mcp_end_session",
     "End the MCP session named by the Mcp-Session-Id header", NULL, NULL, NULL},
    {"GET", G "/schema", h_schema_get, OG_BODY_NONE, 1, OG_ACTION_READ, "", "cluster_schema",
     "The accepted schema source", NULL, "SchemaOutput", NULL},
    {"POST", G "/schema/plan", h_schema_plan, OG_BODY_JSON, 1, OG_ACTION_READ, "", "cluster_schema_plan",
     "Plan a schema migration (writes nothing; OmniGraph-C extension)", "SchemaApplyRequest", "SchemaPlanOutput",
     NULL},
    {"POST", G "/schema/apply", h_schema_apply, OG_BODY_JSON, 1, OG_ACTION_SCHEMA_APPLY, "", "cluster_schema_apply",
     "Apply a schema migration as one commit", "SchemaApplyRequest", "SchemaApplyOutput", NULL},
    {"GET", G "/branches", h_branches_list, OG_BODY_NONE, 1, OG_ACTION_READ, "", "cluster_list_branches",
     "List branches", NULL, "BranchListOutput", NULL},
    {"POST", G "/branches/merge", h_branch_merge, OG_BODY_JSON, 1, OG_ACTION_BRANCH_MERGE, "", "cluster_merge_branch",
     "Merge a branch into another", "BranchMergeRequest", "BranchMergeOutput", NULL},
    {"POST", G "/branches", h_branch_create, OG_BODY_JSON, 1, OG_ACTION_BRANCH_CREATE, "", "cluster_create_branch",
     "Create a branch", "BranchCreateRequest", "BranchCreateOutput", NULL},
    {"DELETE", G "/branches/{branch}", h_branch_delete, OG_BODY_NONE, 1, OG_ACTION_BRANCH_DELETE, "",
     "cluster_delete_branch", "Delete a branch", NULL, "BranchDeleteOutput", NULL},
    {"POST", G "/proposals", og_h_proposal_create, OG_BODY_JSON, 1, OG_ACTION_CHANGE, "", "cluster_create_proposal",
     "Propose merging a branch (OmniGraph-C extension)", "ProposalCreateRequest", "ProposalOutput", NULL},
    {"GET", G "/proposals", og_h_proposal_list, OG_BODY_NONE, 1, OG_ACTION_READ, "state", "cluster_list_proposals",
     "Merge proposals, newest first (OmniGraph-C extension)", NULL, "ProposalListOutput", NULL},
    {"GET", G "/proposals/{name}", og_h_proposal_show, OG_BODY_NONE, 1, OG_ACTION_READ, "", "cluster_show_proposal",
     "A merge proposal with its diff and what approving would do (OmniGraph-C extension)", NULL,
     "ProposalReviewOutput", NULL},
    {"POST", G "/proposals/{name}/approve", og_h_proposal_approve, OG_BODY_JSON, 1, OG_ACTION_BRANCH_MERGE, "",
     "cluster_approve_proposal", "Approve (merge) a merge proposal (OmniGraph-C extension)", "ProposalApproveRequest",
     "ProposalApproveOutput", NULL},
    {"POST", G "/proposals/{name}/close", og_h_proposal_close, OG_BODY_JSON, 1, OG_ACTION_CHANGE, "",
     "cluster_close_proposal", "Close a merge proposal without merging (OmniGraph-C extension)", "ProposalCloseRequest",
     "ProposalOutput", NULL},
    {"GET", G "/commits", h_commits_list, OG_BODY_NONE, 1, OG_ACTION_READ, "branch", "cluster_list_commits",
     "First-parent history of a branch, newest first", NULL, "CommitListOutput", NULL},
    {"GET", G "/commits/{commit_id}/changes", og_h_commit_changes, OG_BODY_NONE, 1, OG_ACTION_READ,
     "page_token limit kind type op", "cluster_commit_changes", "One commit's row changes against its first parent, paged",
     NULL, "CommitChangesOutput", NULL},
    {"GET", G "/changes", og_h_changes, OG_BODY_NONE, 1, OG_ACTION_READ, "branch cursor start page_token limit kind type op",
     "cluster_changes", "Poll a branch's change feed (cursor, start or page_token)", NULL, "ChangeFeedOutput", NULL},
    {"GET", G "/commits/{commit_id}", h_commit_show, OG_BODY_NONE, 1, OG_ACTION_READ, "", "cluster_get_commit",
     "One commit", NULL, "CommitOutput", NULL},
    {"GET", G "/diff", og_h_diff, OG_BODY_NONE, 1, OG_ACTION_READ, "from to page_token limit type op", "cluster_diff",
     "The rows that differ between two commits, paged (OmniGraph-C extension)", NULL, "DiffOutput", NULL},
    {"POST", G "/lint", og_h_lint, OG_BODY_JSON, 1, OG_ACTION_READ, "", "cluster_lint",
     "Check a query text against the schema, with positioned diagnostics; runs nothing (OmniGraph-C extension)",
     "LintRequest", "LintOutput", NULL},
};
const size_t og_nroutes = sizeof og_routes / sizeof *og_routes;
