/*
 * jsonout.c — JSON text with shortest round-trip reals.  See jsonout.h.
 *
 * The shortest spelling is found by trying 1..17 significant digits ("%.*e" then strtod):
 * at most 17 tries of a few hundred nanoseconds, which is nothing next to the I/O a result
 * row costs.  The digits are then laid out like the reference's float printer (its Arrow JSON
 * writer): positional from 1e-5 up to below 1e10, otherwise d.ddde±x with at least one
 * digit after the point ("1.0e10", "1.5e-7").
 */
#include "util/jsonout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/jsontok.h"

/* A bignum is a string whose bytes start with this marker (a NUL, which no JSON-loaded string
 * can hold) followed by the digits. */
static const char BIGNUM_TAG[3] = {'\0', '\x01', '#'};

json_t *og_json_bignum(uint64_t u)
{
    char b[32];
    memcpy(b, BIGNUM_TAG, 3);
    int n = snprintf(b + 3, sizeof b - 3, "%llu", (unsigned long long)u);
    return json_stringn(b, 3 + (size_t)n);
}

const char *og_json_bignum_digits(const json_t *j)
{
    if (!json_is_string(j) || json_string_length(j) <= 3 || memcmp(json_string_value(j), BIGNUM_TAG, 3)) return NULL;
    return json_string_value(j) + 3;
}

/* The jansson value of the token run starting at t (og_jtok layout: a value, then its
 * children); NULL when out of memory. */
static json_t *tok_tree(const og_jtok *t)
{
    switch ((og_jkind)t->kind) {
    case OG_J_NULL: return json_null();
    case OG_J_FALSE: return json_false();
    case OG_J_TRUE: return json_true();
    case OG_J_INT: return json_integer((json_int_t)t->v.i);
    case OG_J_UINT: return og_json_bignum(t->v.u);
    case OG_J_REAL: return json_real(t->v.d);
    case OG_J_STRING: return json_stringn(t->v.s, t->len);
    case OG_J_ARRAY: {
        json_t *a = json_array();
        const og_jtok *e = t + 1;
        for (uint32_t i = 0; a && i < t->len; i++, e = og_jtok_next(e))
            if (json_array_append_new(a, tok_tree(e))) {
                json_decref(a);
                return NULL;
            }
        return a;
    }
    case OG_J_OBJECT: {
        json_t *o = json_object();
        const og_jtok *k = t + 1;
        for (uint32_t i = 0; o && i < t->len; i++) {
            const og_jtok *v = k + 1;
            if (json_object_setn_new(o, k->v.s, k->len, tok_tree(v))) {
                json_decref(o);
                return NULL;
            }
            k = og_jtok_next(v);
        }
        return o;
    }
    }
    return NULL;
}

json_t *og_json_load_wide(const char *text, size_t len)
{
    char *buf = malloc(len + 1); /* the tokenizer decodes strings in place */
    if (!buf) return NULL;
    memcpy(buf, text, len);
    buf[len] = '\0';
    og_jdoc d = OG_JDOC_INIT;
    size_t root;
    json_t *j = NULL;
    if (og_json_parse(&d, buf, len, &root, NULL, 0) == OG_OK) j = tok_tree(&d.tok[root]);
    og_jdoc_free(&d);
    free(buf);
    return j;
}

/* Shortest significant digits of d (finite, != 0, positive) into dig, exponent into *e
 * (value = d.ddd * 10^e); returns the digit count. */
static int shortest_digits(double d, char *dig, int *e)
{
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, d);
        if (p == 17 || strtod(buf, NULL) == d) break;
    }
    /* buf = D[.DDD]e±XX */
    int n = 0;
    const char *s = buf;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9') dig[n++] = *s;
    *e = *s == 'e' ? atoi(s + 1) : 0;
    while (n > 1 && dig[n - 1] == '0') n--; /* "%.*e" may pad with zeros */
    dig[n] = '\0';
    return n;
}

size_t og_json_format_real(double d, char *out)
{
    if (!isfinite(d)) return (size_t)snprintf(out, 32, "%s", isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
    char *o = out;
    if (signbit(d)) {
        *o++ = '-';
        d = -d;
    }
    if (d == 0) {
        memcpy(o, "0.0", 4);
        return (size_t)(o - out) + 3;
    }
    char dig[24];
    int e;
    int len = shortest_digits(d, dig, &e);
    int kk = e + 1; /* the decimal point sits after kk digits */
    if (kk >= len && kk <= 10) { /* whole number below 1e10: digits, zeros, ".0" */
        memcpy(o, dig, (size_t)len);
        o += len;
        for (int i = len; i < kk; i++) *o++ = '0';
        memcpy(o, ".0", 2);
        o += 2;
    } else if (kk > 0 && kk <= 10) { /* point inside the digits */
        memcpy(o, dig, (size_t)kk);
        o += kk;
        *o++ = '.';
        memcpy(o, dig + kk, (size_t)(len - kk));
        o += len - kk;
    } else if (kk > -5 && kk <= 0) { /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int i = kk; i < 0; i++) *o++ = '0';
        memcpy(o, dig, (size_t)len);
        o += len;
    } else { /* d.ddde±x, below 1e-5 or from 1e10 */
        *o++ = dig[0];
        *o++ = '.';
        if (len > 1) {
            memcpy(o, dig + 1, (size_t)(len - 1));
            o += len - 1;
        } else {
            *o++ = '0';
        }
        o += sprintf(o, "e%d", kk - 1);
    }
    *o = '\0';
    return (size_t)(o - out);
}

double og_json_f32(float f)
{
    if (!isfinite(f)) return (double)f;
    char buf[40];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, (double)f);
        if (strtof(buf, NULL) == f) return strtod(buf, NULL);
    }
    return (double)f;
}

/* ---- the writer ---------------------------------------------------------------------------- */

void og_json_put_indent(og_buf *b, size_t flags, int depth, int space)
{
    size_t n = flags & 0x1F; /* JSON_INDENT(n) */
    if (n) {
        og_buf_append_byte(b, '\n');
        for (size_t i = 0; i < n * (size_t)depth; i++) og_buf_append_byte(b, ' ');
    } else if (space && !(flags & JSON_COMPACT)) {
        og_buf_append_byte(b, ' ');
    }
}

/* Decodes one UTF-8 code point (the input is valid: jansson checked it). */
static size_t utf8_next(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (k > n) k = n;
    unsigned v = k == 1 ? c : k == 2 ? c & 0x1F : k == 3 ? c & 0x0F : c & 0x07;
    for (size_t i = 1; i < k; i++) v = (v << 6) | (s[i] & 0x3F);
    *cp = v;
    return k;
}

void og_json_put_string(og_buf *b, const char *s, size_t n, size_t flags)
{
    og_buf_append_byte(b, '"');
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && p[run] >= 0x20 && p[run] != '"' && p[run] != '\\' && p[run] < 0x80 &&
               !(p[run] == '/' && (flags & JSON_ESCAPE_SLASH)))
            run++;
        if (run > i) og_buf_append(b, p + i, run - i);
        i = run;
        if (i >= n) break;
        unsigned cp;
        size_t k = utf8_next(p + i, n - i, &cp);
        switch (cp) {
        case '"': og_buf_append_str(b, "\\\""); break;
        case '\\': og_buf_append_str(b, "\\\\"); break;
        case '/': og_buf_append_str(b, "\\/"); break;
        case '\b': og_buf_append_str(b, "\\b"); break;
        case '\f': og_buf_append_str(b, "\\f"); break;
        case '\n': og_buf_append_str(b, "\\n"); break;
        case '\r': og_buf_append_str(b, "\\r"); break;
        case '\t': og_buf_append_str(b, "\\t"); break;
        default:
            if (cp < 0x20) {
                og_buf_printf(b, "\\u%04X", cp);
            } else if (cp >= 0x80 && (flags & JSON_ENSURE_ASCII)) {
                if (cp >= 0x10000) {
                    unsigned v = cp - 0x10000;
                    og_buf_printf(b, "\\u%04X\\u%04X", 0xD800 | (v >> 10), 0xDC00 | (v & 0x3FF));
                } else {
                    og_buf_printf(b, "\\u%04X", cp);
                }
            } else {
                og_buf_append(b, p + i, k);
            }
        }
        i += k;
    }
    og_buf_append_byte(b, '"');
}

static int cmp_keys(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int put_value(og_buf *b, const json_t *j, size_t flags, int depth)
{
    if (depth > 2048) return -1;
    char num[40];
    switch (json_typeof(j)) {
    case JSON_NULL: og_buf_append_str(b, "null"); return 0;
    case JSON_TRUE: og_buf_append_str(b, "true"); return 0;
    case JSON_FALSE: og_buf_append_str(b, "false"); return 0;
    case JSON_INTEGER: og_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(j)); return 0;
    case JSON_REAL: {
        double d = json_real_value(j);
        if (!isfinite(d)) return -1; /* jansson refuses these too */
        size_t n = og_json_format_real(d, num);
        og_buf_append(b, num, n);
        return 0;
    }
    case JSON_STRING: {
        const char *s = json_string_value(j);
        size_t n = json_string_length(j);
        if (n > 3 && !memcmp(s, BIGNUM_TAG, 3)) og_buf_append(b, s + 3, n - 3);
        else og_json_put_string(b, s, n, flags);
        return 0;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        og_buf_append_byte(b, '[');
        if (!n) {
            og_buf_append_byte(b, ']');
            return 0;
        }
        og_json_put_indent(b, flags, depth + 1, 0);
        for (size_t i = 0; i < n; i++) {
            if (put_value(b, json_array_get(j, i), flags, depth + 1)) return -1;
            if (i + 1 < n) {
                og_buf_append_byte(b, ',');
                og_json_put_indent(b, flags, depth + 1, 1);
            }
        }
        og_json_put_indent(b, flags, depth, 0);
        og_buf_append_byte(b, ']');
        return 0;
    }
    case JSON_OBJECT: {
        size_t n = json_object_size(j);
        og_buf_append_byte(b, '{');
        if (!n) {
            og_buf_append_byte(b, '}');
            return 0;
        }
        const char **keys = malloc(n * sizeof *keys);
        if (!keys) return -1;
        size_t k = 0;
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)j, key, v)
        {
            if (k < n) keys[k++] = key;
        }
        if (flags & JSON_SORT_KEYS) qsort(keys, k, sizeof *keys, cmp_keys);
        og_json_put_indent(b, flags, depth + 1, 0);
        int rc = 0;
        for (size_t i = 0; i < k && !rc; i++) {
            og_json_put_string(b, keys[i], strlen(keys[i]), flags);
            og_buf_append_str(b, (flags & JSON_COMPACT) ? ":" : ": ");
            rc = put_value(b, json_object_get(j, keys[i]), flags, depth + 1);
            if (i + 1 < k) {
                og_buf_append_byte(b, ',');
                og_json_put_indent(b, flags, depth + 1, 1);
            }
        }
        free(keys);
        if (rc) return -1;
        og_json_put_indent(b, flags, depth, 0);
        og_buf_append_byte(b, '}');
        return 0;
    }
    }
    return -1;
}

char *og_json_dumps(const json_t *j, size_t flags)
{
    if (!j) return NULL;
    if (!(flags & JSON_ENCODE_ANY) && !json_is_object(j) && !json_is_array(j)) return NULL;
    og_buf b = OG_BUF_INIT;
    if (put_value(&b, j, flags, 0) || og_buf_append_byte(&b, '\0') != OG_OK) {
        og_buf_free(&b);
        return NULL;
    }
    return (char *)b.data; /* the buffer's bytes are malloc'd: the caller frees them */
}
