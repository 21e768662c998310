/*
 * gqt_json.c — canonical JSON for `omnigraph test` row comparisons.
 *
 * Expected rows are written by hand and actual rows come from the renderer, so the two must
 * be compared as values, not text.  This reader works on the text directly (no double or
 * int64 conversion), so integers of any size compare exactly and a U64 above 2^63 written
 * as a number needs no special case; reals are rounded at the 12th decimal place so float
 * noise below it cannot fail a case (the reference's rule).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/gqt.h"
#include "util/utf8.h"

typedef struct rd {
    const char *s;
    size_t n, i;
    og_buf *err;
    int depth;
} rd;

static int fail(rd *r, const char *what)
{
    og_buf_printf(r->err, "column %zu: %s", r->i + 1, what);
    return -1;
}

static void ws(rd *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' || r->s[r->i] == '\r'))
        r->i++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes a JSON string at r->i (the opening quote) into raw UTF-8 bytes. */
static int read_string(rd *r, og_buf *out)
{
    r->i++;
    while (r->i < r->n) {
        unsigned char c = (unsigned char)r->s[r->i];
        if (c == '"') {
            r->i++;
            return 0;
        }
        if (c < 0x20) return fail(r, "control character in a string");
        if (c != '\\') {
            og_buf_append_byte(out, c);
            r->i++;
            continue;
        }
        if (r->i + 1 >= r->n) break;
        char e = r->s[r->i + 1];
        r->i += 2;
        switch (e) {
        case '"': og_buf_append_byte(out, '"'); break;
        case '\\': og_buf_append_byte(out, '\\'); break;
        case '/': og_buf_append_byte(out, '/'); break;
        case 'b': og_buf_append_byte(out, '\b'); break;
        case 'f': og_buf_append_byte(out, '\f'); break;
        case 'n': og_buf_append_byte(out, '\n'); break;
        case 'r': og_buf_append_byte(out, '\r'); break;
        case 't': og_buf_append_byte(out, '\t'); break;
        case 'u': {
            uint32_t cp = 0;
            for (int k = 0; k < 4; k++) {
                int h = r->i < r->n ? hexval(r->s[r->i]) : -1;
                if (h < 0) return fail(r, "bad \\u escape");
                cp = cp * 16 + (uint32_t)h;
                r->i++;
            }
            if (cp >= 0xD800 && cp < 0xDC00 && r->i + 6 <= r->n && r->s[r->i] == '\\' && r->s[r->i + 1] == 'u') {
                uint32_t lo = 0;
                int okh = 1;
                for (int k = 0; k < 4; k++) {
                    int h = hexval(r->s[r->i + 2 + k]);
                    if (h < 0) okh = 0;
                    lo = lo * 16 + (uint32_t)(h < 0 ? 0 : h);
                }
                if (okh && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    r->i += 6;
                }
            }
            unsigned char u[4];
            size_t k = og_utf8_encode(cp, u);
            og_buf_append(out, u, k);
            break;
        }
        default: return fail(r, "bad escape");
        }
    }
    return fail(r, "unterminated string");
}

static void write_string(og_buf *out, const uint8_t *p, size_t n)
{
    og_buf_append_byte(out, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            og_buf_append_byte(out, '\\');
            og_buf_append_byte(out, c);
        } else if (c == '\n') {
            og_buf_append_str(out, "\\n");
        } else if (c == '\t') {
            og_buf_append_str(out, "\\t");
        } else if (c == '\r') {
            og_buf_append_str(out, "\\r");
        } else if (c < 0x20) {
            og_buf_printf(out, "\\u%04x", c);
        } else {
            og_buf_append_byte(out, c);
        }
    }
    og_buf_append_byte(out, '"');
}

/* A JSON number as a plain decimal rounded to 12 fractional digits, trailing zeros trimmed. */
static int read_number(rd *r, og_buf *out)
{
    size_t start = r->i;
    int neg = 0;
    if (r->s[r->i] == '-') {
        neg = 1;
        r->i++;
    }
    og_buf dig = OG_BUF_INIT;
    long point = 0, exp10 = 0;
    size_t nint = 0;
    while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
        og_buf_append_byte(&dig, (uint8_t)r->s[r->i++]);
        nint++;
    }
    if (nint == 0) {
        og_buf_free(&dig);
        r->i = start;
        return fail(r, "not a JSON value");
    }
    point = (long)nint;
    if (r->i < r->n && r->s[r->i] == '.') {
        r->i++;
        size_t nf = 0;
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
            og_buf_append_byte(&dig, (uint8_t)r->s[r->i++]);
            nf++;
        }
        if (!nf) {
            og_buf_free(&dig);
            return fail(r, "digits expected after '.'");
        }
    }
    if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
        r->i++;
        int eneg = 0;
        if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-')) eneg = r->s[r->i++] == '-';
        size_t ne = 0;
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
            if (exp10 < 100000) exp10 = exp10 * 10 + (r->s[r->i] - '0');
            r->i++;
            ne++;
        }
        if (!ne) {
            og_buf_free(&dig);
            return fail(r, "digits expected in the exponent");
        }
        if (eneg) exp10 = -exp10;
    }
    if (exp10 > 400 || exp10 < -400) { /* out of any column type's range: keep the text */
        og_buf_append(out, r->s + start, r->i - start);
        og_buf_free(&dig);
        return 0;
    }
    point += exp10;
    /* digits d[0..nd) with the decimal point before index `point` */
    size_t nd = dig.len;
    char *d = malloc(nd + 820);
    size_t lead = point < 0 ? (size_t)(-point) : 0;
    memset(d, '0', lead);
    memcpy(d + lead, dig.data, nd);
    nd += lead;
    if (point < 0) point = 0;
    while ((long)nd < point) d[nd++] = '0';
    /* round at 12 fractional digits */
    size_t keep = (size_t)point + 12;
    if (nd > keep) {
        int up = d[keep] >= '5';
        nd = keep;
        for (size_t k = nd; up && k-- > 0;) {
            if (d[k] == '9') {
                d[k] = '0';
            } else {
                d[k]++;
                up = 0;
            }
        }
        if (up) {
            memmove(d + 1, d, nd);
            d[0] = '1';
            nd++;
            point++;
        }
    }
    while (nd > (size_t)point && d[nd - 1] == '0') nd--;
    size_t z = 0;
    while (z + 1 < (size_t)point && d[z] == '0') z++;
    int allzero = 1;
    for (size_t k = 0; k < nd; k++)
        if (d[k] != '0') allzero = 0;
    if (neg && !allzero) og_buf_append_byte(out, '-');
    if (point == 0) og_buf_append_byte(out, '0');
    else og_buf_append(out, d + z, (size_t)point - z);
    if (nd > (size_t)point) {
        og_buf_append_byte(out, '.');
        og_buf_append(out, d + point, nd - (size_t)point);
    }
    free(d);
    og_buf_free(&dig);
    return 0;
}

typedef struct member {
    og_buf key;   /* decoded */
    og_buf value; /* canonical */
} member;

static int cmp_member(const void *a, const void *b)
{
    const member *x = a, *y = b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = n ? memcmp(x->key.data, y->key.data, n) : 0;
    if (c) return c;
    return (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

static int read_value(rd *r, og_buf *out, int *is_null);

static int read_object(rd *r, og_buf *out)
{
    member *m = NULL;
    size_t nm = 0;
    int rc = 0;
    r->i++;
    ws(r);
    if (r->i < r->n && r->s[r->i] == '}') {
        r->i++;
    } else {
        for (;;) {
            ws(r);
            if (r->i >= r->n || r->s[r->i] != '"') {
                rc = fail(r, "object key expected");
                break;
            }
            member *g = realloc(m, (nm + 1) * sizeof *m);
            if (!g) {
                rc = fail(r, "out of memory");
                break;
            }
            m = g;
            memset(&m[nm], 0, sizeof m[nm]);
            nm++;
            if ((rc = read_string(r, &m[nm - 1].key))) break;
            ws(r);
            if (r->i >= r->n || r->s[r->i] != ':') {
                rc = fail(r, "':' expected");
                break;
            }
            r->i++;
            int is_null = 0;
            if ((rc = read_value(r, &m[nm - 1].value, &is_null))) break;
            if (is_null) {
                og_buf_free(&m[nm - 1].key);
                og_buf_free(&m[nm - 1].value);
                nm--;
            }
            ws(r);
            if (r->i < r->n && r->s[r->i] == ',') {
                r->i++;
                continue;
            }
            if (r->i < r->n && r->s[r->i] == '}') {
                r->i++;
                break;
            }
            rc = fail(r, "',' or '}' expected");
            break;
        }
    }
    if (!rc) {
        if (nm) qsort(m, nm, sizeof *m, cmp_member); /* `{}`: m is NULL */
        for (size_t k = 1; k < nm && !rc; k++)
            if (!cmp_member(&m[k - 1], &m[k])) rc = fail(r, "duplicate object key");
    }
    if (!rc) {
        og_buf_append_byte(out, '{');
        for (size_t k = 0; k < nm; k++) {
            if (k) og_buf_append_str(out, ", ");
            write_string(out, m[k].key.data, m[k].key.len);
            og_buf_append_str(out, ": ");
            og_buf_append(out, m[k].value.data, m[k].value.len);
        }
        og_buf_append_byte(out, '}');
    }
    for (size_t k = 0; k < nm; k++) {
        og_buf_free(&m[k].key);
        og_buf_free(&m[k].value);
    }
    free(m);
    return rc;
}

static int read_array(rd *r, og_buf *out)
{
    r->i++;
    og_buf_append_byte(out, '[');
    ws(r);
    if (r->i < r->n && r->s[r->i] == ']') {
        r->i++;
        og_buf_append_byte(out, ']');
        return 0;
    }
    for (int first = 1;; first = 0) {
        if (!first) og_buf_append_str(out, ", ");
        int is_null = 0;
        if (read_value(r, out, &is_null)) return -1;
        ws(r);
        if (r->i < r->n && r->s[r->i] == ',') {
            r->i++;
            continue;
        }
        if (r->i < r->n && r->s[r->i] == ']') {
            r->i++;
            og_buf_append_byte(out, ']');
            return 0;
        }
        return fail(r, "',' or ']' expected");
    }
}

static int literal(rd *r, const char *word, og_buf *out)
{
    size_t k = strlen(word);
    if (r->n - r->i < k || memcmp(r->s + r->i, word, k)) return fail(r, "not a JSON value");
    r->i += k;
    og_buf_append_str(out, word);
    return 0;
}

static int read_value(rd *r, og_buf *out, int *is_null)
{
    ws(r);
    if (r->i >= r->n) return fail(r, "value expected");
    if (++r->depth > 256) return fail(r, "nesting too deep");
    int rc;
    char c = r->s[r->i];
    if (c == '{') {
        rc = read_object(r, out);
    } else if (c == '[') {
        rc = read_array(r, out);
    } else if (c == '"') {
        og_buf s = OG_BUF_INIT;
        rc = read_string(r, &s);
        if (!rc) write_string(out, s.data, s.len);
        og_buf_free(&s);
    } else if (c == 'n') {
        rc = literal(r, "null", out);
        *is_null = 1;
    } else if (c == 't') {
        rc = literal(r, "true", out);
    } else if (c == 'f') {
        rc = literal(r, "false", out);
    } else {
        rc = read_number(r, out);
    }
    r->depth--;
    return rc;
}

int gqt_json_canon(const char *s, size_t n, og_buf *out, og_buf *err)
{
    rd r = {s, n, 0, err, 0};
    int is_null = 0;
    if (read_value(&r, out, &is_null)) return -1;
    ws(&r);
    if (r.i != r.n) return fail(&r, "text after the JSON value");
    return 0;
}
