/*
 * mcp_result.c — how tool results are shaped for a model's context (docs/mcp.md "Results").
 *
 * Why a file of its own: an agent pays for every byte a tool returns, and a result that does
 * not fit its context is worse than none.  So every result is compact JSON with numbers in
 * their shortest round-trip spelling (jansson's json_dumps prints 0.7358 as
 * 0.73580000000000001), row results come one bounded page at a time (rows and bytes, with the
 * total and the offset of the next page), and a failed call carries its error class as data
 * ({"error":{"code","message"}}) beside the text, so a client can branch on it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"

char *og_mcp_dump(const json_t *j) { return og_json_text(j, JSON_COMPACT | JSON_PRESERVE_ORDER); }

/* What a compiler message says about where and what (issue 38: errors as data): a message
 * "<source>:LINE:COL: RULE: text; did you mean `a`?" gives "line", "column", "diagnostic"
 * (RULE, the docs/query-language.md code such as "T6") and "candidates" (each `name` after
 * "did you mean").  Fields it does not carry are left out. */
static void error_details(json_t *e, const char *msg)
{
    const char *p = msg;
    while (*p && *p != ':' && *p != '\n' && *p != ' ') p++;
    unsigned line = 0, col = 0;
    int n = 0;
    if (*p == ':' && sscanf(p, ":%u:%u: %n", &line, &col, &n) == 2 && n > 0 && line > 0) {
        json_object_set_new(e, "line", json_integer(line));
        json_object_set_new(e, "column", json_integer(col));
        const char *r = p + n, *q = r;
        if (isupper((unsigned char)*q)) {
            q++;
            while (isdigit((unsigned char)*q)) q++;
            if (q - r > 1 && q[0] == ':' && q[1] == ' ')
                json_object_set_new(e, "diagnostic", json_stringn(r, (size_t)(q - r)));
        }
    }
    const char *dym = strstr(msg, "did you mean");
    if (!dym) return;
    json_t *cands = json_array();
    for (const char *a = strchr(dym, '`'); a;) {
        const char *b = strchr(a + 1, '`');
        if (!b || memchr(a, '\n', (size_t)(b - a))) break;
        if (b > a + 1) json_array_append_new(cands, json_stringn(a + 1, (size_t)(b - a - 1)));
        a = strchr(b + 1, '`');
    }
    if (json_array_size(cands)) json_object_set_new(e, "candidates", cands);
    else json_decref(cands);
}

/* "code: message" → {"error":{"code","message"}} (with error_details' fields); a text without
 * a code prefix is "error".  The message loses its trailing newline. */
static json_t *error_object(const char *text)
{
    const char *p = text;
    while (*p && (islower((unsigned char)*p) || *p == '_')) p++;
    int coded = p > text && p[0] == ':' && p[1] == ' ';
    const char *msg = coded ? p + 2 : text;
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
    json_t *e = json_pack("{ss% ss%}", "code", coded ? text : "error", coded ? (size_t)(p - text) : strlen("error"), "message",
                          msg, n);
    if (e) error_details(e, msg);
    return json_pack("{so}", "error", e);
}

json_t *og_mcp_tool_text(const char *text, int is_error)
{
    json_t *r = json_object();
    if (!text) text = "";
    json_t *j = is_error ? NULL : og_json_read(text, strlen(text)); /* a U64 above 2^63-1 stays a number */
    if (json_is_object(j)) {
        char *c = og_mcp_dump(j);
        json_object_set_new(r, "content", json_pack("[{ss ss}]", "type", "text", "text", c ? c : text));
        og_free(c);
        json_object_set_new(r, "structuredContent", j);
    } else {
        json_decref(j);
        json_object_set_new(r, "content", json_pack("[{ss ss}]", "type", "text", "text", text));
        if (is_error) json_object_set_new(r, "structuredContent", error_object(text));
    }
    json_object_set_new(r, "isError", json_boolean(is_error));
    return r;
}

static int int_arg(json_t *args, const char *k, json_int_t lo, json_int_t hi, size_t dflt, size_t *out, char *buf,
                   size_t cap)
{
    json_t *v = json_object_get(args, k);
    *out = dflt;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        snprintf(buf, cap, "invalid: `%s` must be an integer from %lld to %lld", k, (long long)lo, (long long)hi);
        return -1;
    }
    *out = (size_t)json_integer_value(v);
    return 0;
}

const char *og_mcp_page_args(const og_mcp *m, json_t *args, og_mcp_page *p, char *buf, size_t cap)
{
    size_t dr = m->o.max_rows ? m->o.max_rows : OG_MCP_DEFAULT_MAX_ROWS;
    size_t db = m->o.max_bytes ? m->o.max_bytes : OG_MCP_DEFAULT_MAX_BYTES;
    if (int_arg(args, "offset", 0, (json_int_t)1 << 40, 0, &p->offset, buf, cap) ||
        int_arg(args, "max_rows", 1, OG_MCP_MAX_ROWS_LIMIT, dr, &p->max_rows, buf, cap) ||
        int_arg(args, "max_bytes", 1024, OG_MCP_MAX_BYTES_LIMIT, db, &p->max_bytes, buf, cap))
        return buf;
    return NULL;
}

json_t *og_mcp_page_result(json_t *doc, const char *key, size_t total, const og_mcp_page *p)
{
    json_t *items = json_object_get(doc, key);
    if (!json_is_array(items)) {
        char *t = og_mcp_dump(doc);
        json_decref(doc);
        json_t *r = og_mcp_tool_text(t, 0);
        og_free(t);
        return r;
    }
    /* the page without its items, plus room for the fields added below */
    json_incref(items);
    json_object_set_new(doc, key, json_array());
    char *shell = og_mcp_dump(doc);
    size_t used = (shell ? strlen(shell) : 0) + 96, keep = 0, n = json_array_size(items);
    og_free(shell);
    for (; keep < n && keep < p->max_rows; keep++) {
        char *s = og_mcp_dump(json_array_get(items, keep));
        size_t len = (s ? strlen(s) : 0) + 1;
        og_free(s);
        if (used + len > p->max_bytes) break;
        used += len;
    }
    while (json_array_size(items) > keep) json_array_remove(items, json_array_size(items) - 1);
    json_object_set_new(doc, key, items);
    if (json_object_get(doc, "row_count")) json_object_set_new(doc, "row_count", json_integer((json_int_t)keep));
    json_object_set_new(doc, "total_rows", json_integer((json_int_t)total));
    json_object_set_new(doc, "offset", json_integer((json_int_t)p->offset));
    size_t end = p->offset + keep;
    int more = end < total;
    json_object_set_new(doc, "truncated", json_boolean(more));
    if (more) json_object_set_new(doc, "next_offset", json_integer((json_int_t)end));
    char *t = og_mcp_dump(doc);
    json_t *r = json_object();
    json_t *content = json_pack("[{ss ss}]", "type", "text", "text", t ? t : "{}");
    og_free(t);
    if (more) {
        char note[400];
        if (keep == 0 && n > 0)
            snprintf(note, sizeof note,
                     "The row at offset %zu alone is larger than max_bytes (%zu): return fewer or shorter columns, "
                     "or raise max_bytes.", p->offset, p->max_bytes);
        else
            snprintf(note, sizeof note,
                     "Showing %s %zu-%zu of %zu. Call again with offset=%zu for the next page, or narrow the query "
                     "(filters, fewer columns, limit).", key, p->offset + (keep ? 1 : 0), end, total, end);
        json_array_append_new(content, json_pack("{ss ss}", "type", "text", "text", note));
    }
    json_object_set_new(r, "content", content);
    json_object_set_new(r, "structuredContent", doc);
    json_object_set_new(r, "isError", json_false());
    return r;
}
