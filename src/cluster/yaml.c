/*
 * yaml.c — reads a YAML document (cluster.yaml, policy bundles) into a jansson tree, so the
 * validator walks one familiar value type.  libyaml gives events; we build the tree and record
 * what a plain YAML loader would hide: duplicate mapping keys (reported, not overwritten) and
 * aliases (refused: a cluster file has no use for them, and they would make paths ambiguous).
 *
 * Plain scalars are typed the YAML 1.2 core way (true/false, null/~, integers); quoted ones
 * are always strings.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cluster/internal.h"
#include "util/error.h"

typedef struct frame {
    json_t *node;
    char *pending_key; /* mapping: the key read, waiting for its value */
    size_t key_line;   /* its line (1-based) */
    char path[512];
} frame;

static json_t *scalar_value(const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return json_stringn(v, n);
    if (n == 0 || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL")) return json_null();
    if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE")) return json_true();
    if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE")) return json_false();
    size_t i = (v[0] == '-' || v[0] == '+') ? 1 : 0;
    if (i < n) {
        size_t k = i;
        while (k < n && v[k] >= '0' && v[k] <= '9') k++;
        if (k == n && n - i < 18) return json_integer(strtoll(v, NULL, 10));
    }
    return json_stringn(v, n);
}

static void child_path(char *out, size_t cap, const char *parent, const char *key, long index)
{
    if (key)
        snprintf(out, cap, "%s%s%s", parent, *parent ? "." : "", key);
    else
        snprintf(out, cap, "%s[%ld]", parent, index);
}

og_status og_yaml_load(json_t **out, json_t *diags, const char *text, size_t len, const char *what)
{
    *out = NULL;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) return og_err(OG_ERR_NOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    frame stack[64];
    int depth = 0;
    json_t *root = NULL;
    og_status st = OG_OK;
    int docs = 0, done = 0;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            og_diag_add(diags, "error", "invalid_cluster_yaml", what, "could not parse %s: %s at line %zu column %zu",
                        what, p.problem ? p.problem : "syntax error", p.problem_mark.line + 1,
                        p.problem_mark.column + 1);
            st = OG_ERR_PARSE;
            break;
        }
        json_t *value = NULL;
        int push = 0;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                og_diag_add(diags, "error", "invalid_cluster_yaml", what, "%s must hold exactly one YAML document", what);
                st = OG_ERR_PARSE;
                done = 1;
            }
            break;
        case YAML_ALIAS_EVENT:
            og_diag_add(diags, "error", "invalid_cluster_yaml", what,
                        "could not parse %s: YAML aliases are not supported (line %zu)", what, ev.start_mark.line + 1);
            st = OG_ERR_PARSE;
            done = 1;
            break;
        case YAML_SCALAR_EVENT: value = scalar_value(&ev); break;
        case YAML_SEQUENCE_START_EVENT: value = json_array(); push = 1; break;
        case YAML_MAPPING_START_EVENT: value = json_object(); push = 1; break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0) {
                free(stack[depth - 1].pending_key);
                json_decref(stack[depth - 1].node);
                depth--;
            }
            break;
        default: break;
        }
        if (value) {
            char path[512] = "";
            json_t *parent = depth ? stack[depth - 1].node : NULL;
            int keep = 1;
            if (!parent) {
                root = value;
                json_incref(root);
            } else if (json_is_array(parent)) {
                child_path(path, sizeof path, stack[depth - 1].path, NULL, (long)json_array_size(parent));
                json_array_append(parent, value);
            } else if (!stack[depth - 1].pending_key) {
                /* a mapping key */
                if (!json_is_string(value)) {
                    const char *k = json_is_true(value) ? "true" : json_is_false(value) ? "false" : NULL;
                    if (json_is_integer(value) || json_is_null(value) || k) {
                        char kb[32];
                        if (json_is_integer(value)) snprintf(kb, sizeof kb, "%lld", (long long)json_integer_value(value));
                        stack[depth - 1].pending_key = strdup(json_is_integer(value) ? kb : k ? k : "null");
                    } else {
                        og_diag_add(diags, "error", "invalid_cluster_yaml", stack[depth - 1].path,
                                    "mapping keys must be scalars (line %zu)", ev.start_mark.line + 1);
                        st = OG_ERR_PARSE;
                        done = 1;
                        stack[depth - 1].pending_key = strdup("?");
                    }
                } else {
                    stack[depth - 1].pending_key = strdup(json_string_value(value));
                }
                stack[depth - 1].key_line = ev.start_mark.line + 1;
                keep = 0;
                if (push) {
                    og_diag_add(diags, "error", "invalid_cluster_yaml", stack[depth - 1].path,
                                "mapping keys must be scalars (line %zu)", ev.start_mark.line + 1);
                    st = OG_ERR_PARSE;
                    done = 1;
                    push = 0;
                }
            } else {
                char *key = stack[depth - 1].pending_key;
                stack[depth - 1].pending_key = NULL;
                child_path(path, sizeof path, stack[depth - 1].path, key, 0);
                if (json_object_get(parent, key)) {
                    og_diag_add(diags, "error", "duplicate_key", path, "duplicate key `%s` (line %zu)", key,
                                stack[depth - 1].key_line);
                    st = OG_ERR_PARSE;
                } else {
                    json_object_set(parent, key, value);
                }
                free(key);
            }
            if (push && depth < 64) {
                stack[depth].node = json_incref(value);
                stack[depth].pending_key = NULL;
                snprintf(stack[depth].path, sizeof stack[depth].path, "%s", path);
                depth++;
            } else if (push) {
                og_diag_add(diags, "error", "invalid_cluster_yaml", what, "%s nests deeper than 64 levels", what);
                st = OG_ERR_PARSE;
                done = 1;
            }
            (void)keep;
            json_decref(value);
        }
        yaml_event_delete(&ev);
    }
    while (depth > 0) {
        depth--;
        free(stack[depth].pending_key);
        json_decref(stack[depth].node);
    }
    yaml_parser_delete(&p);
    if (st != OG_OK) {
        json_decref(root);
        return og_err(st, "%s is not valid YAML", what);
    }
    *out = root ? root : json_null();
    return OG_OK;
}

void og_diag_add(json_t *diags, const char *severity, const char *code, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *d = json_object();
    json_object_set_new(d, "code", json_string(code));
    json_object_set_new(d, "severity", json_string(severity));
    json_object_set_new(d, "path", json_string(path ? path : ""));
    json_object_set_new(d, "message", json_string(msg));
    json_array_append_new(diags, d);
}

int og_diag_errors(const json_t *diags)
{
    size_t i;
    json_t *d;
    int n = 0;
    json_array_foreach((json_t *)diags, i, d) n += !strcmp(json_string_value(json_object_get(d, "severity")), "error");
    return n;
}
