/*
 * routes_blob.c — GET / HEAD /graphs/{id}/blob (reference-surfaces.md §2.6): one Blob cell
 * as application/octet-stream with a strong ETag (SHA-256 of the bytes), one byte range
 * (206 / 416), and the conditional headers If-Match (412), If-None-Match (304) and If-Range.
 */
#include <ctype.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

static void etag_of(const char *p, size_t n, char out[70])
{
    unsigned char d[32];
    unsigned int len = 32;
    EVP_Digest(p, n, d, &len, EVP_sha256(), NULL);
    out[0] = '"';
    for (int i = 0; i < 32; i++) snprintf(out + 1 + 2 * i, 3, "%02x", d[i]);
    out[65] = '"';
    out[66] = 0;
}

/* Does the header list (comma separated entity tags, or *) hold `etag`?  weak: W/ prefixes
 * compare too (If-None-Match); strong: a W/ tag never matches (If-Match, If-Range). */
static int tag_listed(const char *list, const char *etag, int weak)
{
    while (*list) {
        while (*list == ' ' || *list == ',') list++;
        if (!*list) break;
        if (*list == '*') return 1;
        int is_weak = !strncmp(list, "W/", 2);
        const char *t = is_weak ? list + 2 : list;
        const char *e = strchr(t, ',');
        size_t n = e ? (size_t)(e - t) : strlen(t);
        while (n && t[n - 1] == ' ') n--;
        if ((weak || !is_weak) && n == strlen(etag) && !strncmp(t, etag, n)) return 1;
        if (!e) break;
        list = e + 1;
    }
    return 0;
}

/* One "bytes=a-b" range over n bytes: 1 with [*start, *end) set, 0 when absent, multiple or
 * malformed (serve everything), -1 when unsatisfiable. */
static int parse_range(const char *h, size_t n, size_t *start, size_t *end)
{
    if (!h || strncmp(h, "bytes=", 6) || strchr(h, ',')) return 0;
    const char *p = h + 6;
    char *x;
    if (*p == '-') {
        if (!isdigit((unsigned char)p[1])) return 0;
        unsigned long long k = strtoull(p + 1, &x, 10);
        if (*x) return 0;
        if (k == 0 || n == 0) return -1;
        *start = k >= n ? 0 : n - (size_t)k;
        *end = n;
        return 1;
    }
    if (!isdigit((unsigned char)*p)) return 0;
    unsigned long long a = strtoull(p, &x, 10), b;
    if (*x != '-') return 0;
    if (!x[1]) {
        b = n ? n - 1 : 0;
    } else {
        if (!isdigit((unsigned char)x[1])) return 0;
        b = strtoull(x + 1, &x, 10);
        if (*x || b < a) return 0;
    }
    if (a >= n) return -1;
    if (b >= n) b = n - 1;
    *start = (size_t)a;
    *end = (size_t)b + 1;
    return 1;
}

struct MHD_Response *og_h_blob(og_req *r)
{
    const char *entity = og_req_arg(r, "entity"), *type = og_req_arg(r, "type"), *id = og_req_arg(r, "id"),
               *prop = og_req_arg(r, "property"), *branch = og_req_arg(r, "branch"),
               *snapshot = og_req_arg(r, "snapshot");
    if (!entity || !type || !id || !prop)
        return og_resp_error(r, 400, "bad_request", "entity, type, id and property are required", NULL, NULL);
    if (strcmp(entity, "node") && strcmp(entity, "edge"))
        return og_resp_error(r, 400, "bad_request", "entity must be node or edge", NULL, NULL);
    if (branch && snapshot)
        return og_resp_error(r, 400, "bad_request", "'branch' and 'snapshot' are mutually exclusive", NULL, NULL);
    struct MHD_Response *deny = og_req_authorize(r, OG_ACTION_READ, snapshot ? branch : (branch ? branch : "main"), NULL);
    if (deny) return deny;
    og_read_opts at = {branch, snapshot};
    char *data;
    size_t n;
    char commit[32];
    og_status st = og_db_blob_get(&data, &n, commit, r->g->db, &at, !strcmp(entity, "edge"), type, id, prop);
    if (st) return og_resp_status(r, st);
    char etag[70];
    etag_of(data, n, etag);
    const char *if_match = og_req_header(r, "If-Match"), *if_none = og_req_header(r, "If-None-Match"),
               *if_range = og_req_header(r, "If-Range"), *range = og_req_header(r, "Range");
    int head = !strcmp(r->method, "HEAD");
    if (if_match && !tag_listed(if_match, etag, 0)) {
        og_free(data);
        json_t *d = json_pack("{s:s,s:s}", "expected", if_match, "actual", etag);
        return og_resp_error(r, 412, "conflict", "If-Match does not hold", "precondition_failure", d);
    }
    struct MHD_Response *out;
    if (if_none && tag_listed(if_none, etag, 1)) {
        og_free(data);
        out = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        r->status = 304;
    } else {
        size_t a = 0, b = n;
        int ranged = head ? 0 : parse_range(range, n, &a, &b);
        if (ranged && if_range && !tag_listed(if_range, etag, 0)) ranged = 0; /* the range was for another value */
        if (ranged < 0) {
            og_free(data);
            json_t *d = json_pack("{s:I,s:I,s:I}", "start", (json_int_t)0, "end", (json_int_t)0, "length", (json_int_t)n);
            struct MHD_Response *e = og_resp_error(r, 416, "bad_request", "range not satisfiable", "blob_range", d);
            char cr[64];
            snprintf(cr, sizeof cr, "bytes */%zu", n);
            if (e) MHD_add_response_header(e, "Content-Range", cr);
            return e;
        }
        if (ranged) {
            char *slice = malloc(b - a ? b - a : 1);
            memcpy(slice, data + a, b - a);
            og_free(data);
            out = MHD_create_response_from_buffer(b - a, slice, MHD_RESPMEM_MUST_FREE);
            char cr[96];
            snprintf(cr, sizeof cr, "bytes %zu-%zu/%zu", a, b - 1, n);
            if (out) MHD_add_response_header(out, "Content-Range", cr);
            r->status = 206;
        } else {
            out = MHD_create_response_from_buffer(n, data, MHD_RESPMEM_MUST_FREE);
            r->status = 200;
        }
        if (out) MHD_add_response_header(out, "Content-Type", "application/octet-stream");
    }
    if (!out) return NULL;
    MHD_add_response_header(out, "Accept-Ranges", "bytes");
    MHD_add_response_header(out, "ETag", etag);
    MHD_add_response_header(out, "Omnigraph-Snapshot-Id", commit);
    return out;
}
