/*
 * body.c — the JSON body of the hot read lanes (POST /query and /read) parsed flat: one pass
 * of util/jsontok.h into a token array the request keeps between requests, no DOM.  jansson
 * allocates every value and hashes every object; for a key lookup that was ~7 % of the
 * server's CPU per request (the body parsed, then its params printed again for og_db_query).
 *
 * Same answers as the jansson lane, by construction: jsontok accepts exactly what
 * json_loadb(JSON_REJECT_DUPLICATES) accepts save two cases (an integer above INT64_MAX,
 * which it reads and jansson refuses; a raw NUL right after a literal, which it refuses and
 * jansson skips), and whenever it refuses, or the root is not an object, or such an integer
 * appears, the caller parses the body with jansson as before — so every error message and
 * status is jansson's (and such an integer, a U64, is then read by og_json_read: http.c).  Member lookup compares keys as json_object_get does; a value is
 * printed back compactly in document order (what json_dumps(JSON_COMPACT) keeps), numbers so
 * that they read back as the same value.
 */
#include <stdio.h>
#include <string.h>

#include "server/server_int.h"
#include "util/error.h"
#include "util/jsonout.h"

int og_body_flat_parse(og_req *r)
{
    if (!r->body_len) return 0;
    if (r->flat_cap < r->body_len + 1) {
        size_t cap = r->flat_cap ? r->flat_cap : 1024;
        while (cap < r->body_len + 1) cap *= 2;
        char *b = realloc(r->flat_buf, cap);
        if (!b) return 0;
        r->flat_buf = b;
        r->flat_cap = cap;
    }
    memcpy(r->flat_buf, r->body, r->body_len); /* decoded in place: the body stays as sent */
    r->flat_buf[r->body_len] = 0;
    og_jdoc_reset(&r->flat);
    size_t root;
    if (og_json_parse(&r->flat, r->flat_buf, r->body_len, &root, NULL, 0) != OG_OK) {
        og_error_clear();
        return 0;
    }
    if (r->flat.tok[root].kind != OG_J_OBJECT) return 0;
    for (size_t i = root; i < r->flat.n; i++)
        if (r->flat.tok[i].kind == OG_J_UINT) return 0; /* jansson's "too big integer" */
    r->flat_root = root;
    r->flat_ok = 1;
    return 1;
}

const og_jtok *og_body_flat_get(const og_req *r, const char *key)
{
    return r->flat_ok ? og_jobj_get(&r->flat.tok[r->flat_root], key) : NULL;
}

static og_status put_string(og_buf *b, const char *s, size_t n)
{
    OG_TRY(og_buf_append_byte(b, '"'));
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default:
            if (c < 0x20) {
                snprintf(u, sizeof u, "\\u%04x", c);
                esc = u;
            }
        }
        if (!esc) continue;
        OG_TRY(og_buf_append(b, s + run, i - run));
        OG_TRY(og_buf_append_str(b, esc));
        run = i + 1;
    }
    OG_TRY(og_buf_append(b, s + run, n - run));
    return og_buf_append_byte(b, '"');
}

og_status og_jtok_text(const og_jtok *t, og_buf *b)
{
    char num[40];
    switch ((og_jkind)t->kind) {
    case OG_J_NULL: return og_buf_append_str(b, "null");
    case OG_J_FALSE: return og_buf_append_str(b, "false");
    case OG_J_TRUE: return og_buf_append_str(b, "true");
    case OG_J_INT: snprintf(num, sizeof num, "%lld", (long long)t->v.i); return og_buf_append_str(b, num);
    case OG_J_UINT: snprintf(num, sizeof num, "%llu", (unsigned long long)t->v.u); return og_buf_append_str(b, num);
    case OG_J_REAL: og_json_format_real(t->v.d, num); return og_buf_append_str(b, num);
    case OG_J_STRING: return put_string(b, t->v.s, t->len);
    case OG_J_ARRAY:
    case OG_J_OBJECT: {
        int obj = t->kind == OG_J_OBJECT;
        OG_TRY(og_buf_append_byte(b, obj ? '{' : '['));
        const og_jtok *c = t + 1;
        for (uint32_t i = 0; i < t->len; i++) {
            if (i) OG_TRY(og_buf_append_byte(b, ','));
            if (obj) {
                OG_TRY(put_string(b, c->v.s, c->len));
                OG_TRY(og_buf_append_byte(b, ':'));
                c++;
            }
            OG_TRY(og_jtok_text(c, b));
            c = og_jtok_next(c);
        }
        return og_buf_append_byte(b, obj ? '}' : ']');
    }
    }
    return og_err(OG_ERR_INVALID, "unknown JSON token kind %d", t->kind);
}
