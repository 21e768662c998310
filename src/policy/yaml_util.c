/*
 * yaml_util.c — the libyaml document helpers of the policy layer.  Policy files are small and
 * read once, so the whole document is loaded as a node tree (which keeps every node's line for
 * the "file:line: ..." messages) rather than walked as an event stream.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_internal.h"
#include "util/error.h"

char *pol_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* 1 when s is empty or only whitespace (Rust's str::trim: Unicode White_Space; ASCII and the
 * common Unicode spaces are what a YAML scalar can carry in practice). */
int pol_blank(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f') {
            p++;
        } else if (p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0)) {
            p += 2;
        } else if (p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80) {
            p += 3;
        } else if (p[0] == 0xE2 && p[1] == 0x80 && ((p[2] >= 0x80 && p[2] <= 0x8A) || p[2] == 0xA8 ||
                                                     p[2] == 0xA9 || p[2] == 0xAF)) {
            p += 3;
        } else if (p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F) {
            p += 3;
        } else if (p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) {
            p += 3;
        } else {
            return 0;
        }
    }
    return 1;
}

og_status pol_fail(pol_yaml *y, og_status code, size_t line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return og_err(code, "%s:%zu: %s", y->name, line, msg);
}

og_status pol_yaml_load(pol_yaml *y, const char *src, size_t len, const char *name)
{
    memset(y, 0, sizeof *y);
    y->name = name;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return og_err(OG_ERR_NOMEM, "%s: out of memory", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)src, len);
    og_status st = OG_OK;
    if (!yaml_parser_load(&parser, &y->doc)) {
        size_t line = parser.problem_mark.line + 1;
        if (parser.error == YAML_MEMORY_ERROR) st = og_err(OG_ERR_NOMEM, "%s: out of memory", name);
        else
            st = og_err(OG_ERR_PARSE, "%s:%zu: invalid YAML: %s%s%s", name, line,
                        parser.problem ? parser.problem : "syntax error", parser.context ? " " : "",
                        parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return st;
    }
    y->loaded = 1;
    if (!yaml_document_get_root_node(&y->doc)) {
        yaml_parser_delete(&parser);
        pol_yaml_free(y);
        return og_err(OG_ERR_PARSE, "%s:1: the file is empty (expected a YAML mapping)", name);
    }
    yaml_document_t second;
    if (!yaml_parser_load(&parser, &second)) {
        size_t line = parser.problem_mark.line + 1;
        st = og_err(OG_ERR_PARSE, "%s:%zu: invalid YAML: %s", name, line,
                    parser.problem ? parser.problem : "syntax error");
    } else {
        yaml_node_t *r2 = yaml_document_get_root_node(&second);
        if (r2)
            st = og_err(OG_ERR_PARSE, "%s:%zu: more than one YAML document (expected one mapping)", name,
                        (size_t)r2->start_mark.line + 1);
        yaml_document_delete(&second);
    }
    yaml_parser_delete(&parser);
    if (st != OG_OK) pol_yaml_free(y);
    return st;
}

void pol_yaml_free(pol_yaml *y)
{
    if (y->loaded) yaml_document_delete(&y->doc);
    y->loaded = 0;
}

yaml_node_t *pol_yaml_root(pol_yaml *y) { return yaml_document_get_root_node(&y->doc); }

yaml_node_t *pol_yaml_node(pol_yaml *y, int index) { return yaml_document_get_node(&y->doc, index); }

size_t pol_line(const yaml_node_t *n) { return (size_t)n->start_mark.line + 1; }

int pol_is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    return len == 0 || (len == 1 && v[0] == '~') || (len == 4 && (!memcmp(v, "null", 4) ||
                                                                   !memcmp(v, "Null", 4) ||
                                                                   !memcmp(v, "NULL", 4)));
}

og_status pol_scalar(pol_yaml *y, const yaml_node_t *n, const char *what, const char **out)
{
    if (n->type != YAML_SCALAR_NODE || pol_is_null(n))
        return pol_fail(y, OG_ERR_PARSE, pol_line(n), "%s must be a string", what);
    if (memchr(n->data.scalar.value, '\0', n->data.scalar.length))
        return pol_fail(y, OG_ERR_PARSE, pol_line(n), "%s must not contain a NUL character", what);
    *out = (const char *)n->data.scalar.value;
    return OG_OK;
}

og_status pol_check_keys(pol_yaml *y, yaml_node_t *map, const char *what, const char *const *known)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = pol_yaml_node(y, p->key);
        const char *key;
        if (!k || k->type != YAML_SCALAR_NODE)
            return pol_fail(y, OG_ERR_PARSE, k ? pol_line(k) : pol_line(map), "%s keys must be strings", what);
        OG_TRY(pol_scalar(y, k, "a key", &key));
        int ok = 0;
        for (size_t i = 0; known[i]; i++)
            if (!strcmp(key, known[i])) ok = 1;
        if (!ok) {
            char list[256] = "";
            size_t used = 0;
            for (size_t i = 0; known[i] && used < sizeof list; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
            return pol_fail(y, OG_ERR_PARSE, pol_line(k), "unknown field '%s' in %s (expected one of: %s)%s", key,
                            what, list,
                            !strcmp(key, "kind") && !strcmp(known[0], "version")
                                ? "; a bundle's kind comes from its binding (applies_to: [cluster]) or --server"
                                : "");
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = pol_yaml_node(y, q->key);
            if (!strcmp((const char *)k2->data.scalar.value, key))
                return pol_fail(y, OG_ERR_PARSE, pol_line(k), "duplicate field '%s' in %s", key, what);
        }
    }
    return OG_OK;
}

yaml_node_t *pol_get(pol_yaml *y, yaml_node_t *map, const char *k)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = pol_yaml_node(y, p->key);
        if (kn && kn->type == YAML_SCALAR_NODE && !strcmp((const char *)kn->data.scalar.value, k))
            return pol_yaml_node(y, p->value);
    }
    return NULL;
}
