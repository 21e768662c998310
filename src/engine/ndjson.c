/*
 * ndjson.c — strict NDJSON envelope reader for `load`.  See ndjson.h.
 *
 * Lines are read with getline into one reused buffer; a line longer than the limit is
 * reported as soon as it is seen (OG_ERR_LIMIT), before it is parsed.  jansson's
 * JSON_REJECT_DUPLICATES gives the "no duplicate keys at any depth" rule.
 */
#include "engine/ndjson.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

struct og_ndjson_reader {
    FILE *in;
    char *name;
    char *line;
    size_t cap;
    size_t max_line;
    uint64_t lineno;
    uint64_t bytes;
    json_t *current;
};

og_status og_ndjson_reader_new(og_ndjson_reader **out, FILE *in, const char *name)
{
    og_ndjson_reader *r = calloc(1, sizeof *r);
    if (!r) return og_err(OG_ERR_NOMEM, "out of memory");
    r->name = strdup(name ? name : "<input>");
    if (!r->name) {
        free(r);
        return og_err(OG_ERR_NOMEM, "out of memory");
    }
    r->in = in;
    r->max_line = OG_NDJSON_MAX_LINE;
    *out = r;
    return OG_OK;
}

void og_ndjson_reader_set_max_line(og_ndjson_reader *r, size_t max) { r->max_line = max; }

uint64_t og_ndjson_bytes_read(const og_ndjson_reader *r) { return r->bytes; }

void og_ndjson_reader_free(og_ndjson_reader *r)
{
    if (!r) return;
    json_decref(r->current);
    free(r->line);
    free(r->name);
    free(r);
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

static int fail(og_ndjson_reader *r, og_status *err, og_status code, const char *what)
{
    *err = og_err(code, "%s:%llu: %s", r->name, (unsigned long long)r->lineno, what);
    return -1;
}

/* Checks the envelope of one parsed line and fills rec. */
static int check_envelope(og_ndjson_reader *r, json_t *obj, og_ndjson_record *rec, og_status *err)
{
    char msg[512];
    if (!json_is_object(obj)) return fail(r, err, OG_ERR_PARSE, "each line must be a JSON object");
    json_t *type = json_object_get(obj, "type");
    json_t *edge = json_object_get(obj, "edge");
    if (type && edge) return fail(r, err, OG_ERR_PARSE, "a line has both \"type\" and \"edge\"; a record is a node or an edge");
    if (!type && !edge) return fail(r, err, OG_ERR_PARSE, "a line needs \"type\" (a node) or \"edge\" (an edge)");
    json_t *name = type ? type : edge;
    if (!json_is_string(name) || json_string_length(name) == 0)
        return fail(r, err, OG_ERR_PARSE, type ? "\"type\" must be a non-empty string" : "\"edge\" must be a non-empty string");

    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = type ? (!strcmp(key, "type") || !strcmp(key, "data"))
                      : (!strcmp(key, "edge") || !strcmp(key, "from") || !strcmp(key, "to") || !strcmp(key, "data"));
        if (!ok) {
            snprintf(msg, sizeof msg, "unknown %s envelope key \"%s\" (allowed: %s)", type ? "node" : "edge", key,
                     type ? "type, data" : "edge, from, to, data");
            return fail(r, err, OG_ERR_PARSE, msg);
        }
    }
    json_t *data = json_object_get(obj, "data");
    if (data && !json_is_object(data)) return fail(r, err, OG_ERR_PARSE, "\"data\" must be a JSON object");
    if (!data) {
        data = json_object();
        if (!data || json_object_set_new(obj, "data", data)) return fail(r, err, OG_ERR_NOMEM, "out of memory");
    }
    memset(rec, 0, sizeof *rec);
    rec->line = r->lineno;
    rec->type = json_string_value(name);
    rec->data = data;
    if (type) {
        rec->kind = OG_NDJSON_NODE;
        return 1;
    }
    rec->kind = OG_NDJSON_EDGE;
    json_t *from = json_object_get(obj, "from"), *to = json_object_get(obj, "to");
    if (!from || !to) return fail(r, err, OG_ERR_PARSE, "an edge needs \"from\" and \"to\"");
    if (!json_is_string(from) || !json_is_string(to))
        return fail(r, err, OG_ERR_PARSE, "edge \"from\" and \"to\" must be strings (node ids)");
    if (json_object_get(data, "src") || json_object_get(data, "dst"))
        return fail(r, err, OG_ERR_PARSE, "\"src\"/\"dst\" are not allowed inside edge data; use \"from\"/\"to\"");
    rec->from = json_string_value(from);
    rec->to = json_string_value(to);
    return 1;
}

int og_ndjson_next(og_ndjson_reader *r, og_ndjson_record *rec, og_status *err)
{
    *err = OG_OK;
    json_decref(r->current);
    r->current = NULL;
    for (;;) {
        errno = 0;
        ssize_t n = getline(&r->line, &r->cap, r->in);
        if (n < 0) {
            if (ferror(r->in)) {
                *err = og_err_errno(errno ? errno : EIO, "%s: read failed", r->name);
                return -1;
            }
            return 0;
        }
        r->lineno++;
        r->bytes += (uint64_t)n;
        if ((size_t)n > r->max_line) {
            char msg[128];
            snprintf(msg, sizeof msg, "line is %zd bytes, over the %zu-byte limit", n, r->max_line);
            return fail(r, err, OG_ERR_LIMIT, msg);
        }
        if (is_blank(r->line, (size_t)n)) continue;
        json_error_t jerr;
        json_t *obj = json_loadb(r->line, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
        if (!obj) {
            char msg[256];
            snprintf(msg, sizeof msg, "invalid JSON at column %d: %s", jerr.column, jerr.text);
            return fail(r, err, OG_ERR_PARSE, msg);
        }
        r->current = obj;
        return check_envelope(r, obj, rec, err);
    }
}
