/*
 * jsontok.c — the strict token-array JSON parser behind jsontok.h.
 *
 * Recursive descent over the buffer with a depth counter (the limit bounds the recursion).
 * Tokens are addressed by index while parsing (the array may move when it grows).  Strings
 * are scanned without copying until the first escape; from there on the decoded bytes are
 * written behind the read position.  Duplicate keys: each new key is compared with the
 * object's earlier keys while it has at most DUP_LINEAR members; a bigger object is checked
 * once more at its end by sorting its keys, so the worst case stays O(m log m).
 */
#include "util/jsontok.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/utf8.h"

#define DUP_LINEAR 16

typedef struct jparser {
    og_jdoc *d;
    char *buf;
    size_t len, pos;
    int depth;
    og_status st;
    char *msg;
    size_t cap;
} jparser;

void og_jdoc_init(og_jdoc *d) { memset(d, 0, sizeof *d); }

void og_jdoc_free(og_jdoc *d)
{
    free(d->tok);
    memset(d, 0, sizeof *d);
}

void og_jdoc_reset(og_jdoc *d) { d->n = 0; }

static int jfail(jparser *p, size_t at, const char *fmt, ...)
{
    if (p->st == OG_OK) {
        p->st = OG_ERR_PARSE;
        if (p->msg && p->cap) {
            int k = snprintf(p->msg, p->cap, "column %zu: ", at + 1);
            if (k >= 0 && (size_t)k < p->cap) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(p->msg + k, p->cap - (size_t)k, fmt, ap);
                va_end(ap);
            }
        }
    }
    return -1;
}

#define NO_TOK ((size_t)-1)

/* Appends one token and returns its index, or NO_TOK on failure (returned, not stored
 * through a pointer: no address-taken locals in the recursive frames, see parse_key). */
static size_t push(jparser *p, og_jkind kind)
{
    og_jdoc *d = p->d;
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 64;
        if (ncap > UINT32_MAX) {
            jfail(p, p->pos, "too many values");
            return NO_TOK;
        }
        og_jtok *t = realloc(d->tok, ncap * sizeof *t);
        if (!t) {
            p->st = OG_ERR_NOMEM;
            if (p->msg && p->cap) snprintf(p->msg, p->cap, "out of memory");
            return NO_TOK;
        }
        d->tok = t;
        d->cap = ncap;
    }
    og_jtok *t = &d->tok[d->n];
    t->kind = (uint8_t)kind;
    t->span = 1;
    t->len = 0;
    t->v.i = 0;
    return d->n++;
}

static void skip_ws(jparser *p)
{
    while (p->pos < p->len) {
        char c = p->buf[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        p->pos++;
    }
}

static int hex4(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* One escape at buf[*i] (the backslash), decoded to *o; advances both. */
static int decode_escape(jparser *p, size_t *i, char **o)
{
    size_t at = *i;
    if (at + 1 >= p->len) return jfail(p, at, "premature end of input in a string");
    char c = p->buf[at + 1];
    char out;
    switch (c) {
    case '"': out = '"'; break;
    case '\\': out = '\\'; break;
    case '/': out = '/'; break;
    case 'b': out = '\b'; break;
    case 'f': out = '\f'; break;
    case 'n': out = '\n'; break;
    case 'r': out = '\r'; break;
    case 't': out = '\t'; break;
    case 'u': {
        uint32_t cp, lo;
        if (at + 6 > p->len || hex4(p->buf + at + 2, &cp)) return jfail(p, at, "invalid \\u escape");
        size_t used = 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return jfail(p, at, "invalid Unicode '\\u%04X' (a lone low surrogate)", cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (at + 12 > p->len || p->buf[at + 6] != '\\' || p->buf[at + 7] != 'u' || hex4(p->buf + at + 8, &lo) ||
                lo < 0xDC00 || lo > 0xDFFF)
                return jfail(p, at, "invalid Unicode '\\u%04X' (a high surrogate without its low half)", cp);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            used = 12;
        }
        if (cp == 0) return jfail(p, at, "\\u0000 is not allowed in a string");
        *o += og_utf8_encode(cp, (unsigned char *)*o);
        *i = at + used;
        return 0;
    }
    default: return jfail(p, at, "invalid escape '\\%c'", c);
    }
    *(*o)++ = out;
    *i = at + 2;
    return 0;
}

/* The high bit of every byte of w (8 input bytes, first in the low byte) that ends a plain
 * ASCII run of a string: '"', '\\', a control byte (< 0x20) or a non-ASCII byte.  Bytes above
 * a flagged one may be flagged falsely (a borrow), never the lowest one, which is what the
 * scan uses. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OG_JSON_SWAR 1 /* the first input byte is the low byte of a loaded word */
#else
#define OG_JSON_SWAR 0
#endif

static inline uint64_t string_stops(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t q = w ^ (ones * '"'), e = w ^ (ones * '\\');
    return ((q - ones) & ~q & high) | ((e - ones) & ~e & high) | ((w - ones * 0x20) & ~w & high) | (w & high);
}

/* A string at p->pos (its opening quote) into token `t`. */
static int parse_string(jparser *p, size_t t)
{
    const unsigned char *b = (const unsigned char *)p->buf;
    size_t start = p->pos + 1, i = start;
    /* copy-free scan up to the first escape: plain ASCII eight bytes at a time (strings were
     * the parser threads' largest cost in a bulk load), the rest byte by byte */
    for (;;) {
        while (OG_JSON_SWAR && i + 8 <= p->len) {
            uint64_t w;
            memcpy(&w, b + i, 8);
            uint64_t m = string_stops(w);
            if (m) {
                i += (size_t)__builtin_ctzll(m) >> 3;
                break;
            }
            i += 8;
        }
        if (i >= p->len) return jfail(p, p->pos, "premature end of input in a string");
        unsigned c = b[i];
        if (c == '"' || c == '\\') break;
        if (c < 0x20) return jfail(p, i, "control character 0x%x in a string", c);
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k = og_utf8_seq_len(b + i, p->len - i);
        if (!k) return jfail(p, i, "invalid UTF-8 in a string");
        i += k;
    }
    char *o = p->buf + i;
    while (b[i] != '"') {
        if (b[i] == '\\') {
            if (decode_escape(p, &i, &o)) return -1;
        } else if (b[i] < 0x20) {
            return jfail(p, i, "control character 0x%x in a string", b[i]);
        } else {
            size_t k = b[i] < 0x80 ? 1 : og_utf8_seq_len(b + i, p->len - i);
            if (!k) return jfail(p, i, "invalid UTF-8 in a string");
            memmove(o, b + i, k);
            o += k;
            i += k;
        }
        if (i >= p->len) return jfail(p, p->pos, "premature end of input in a string");
    }
    size_t n = (size_t)(o - (p->buf + start));
    if (n > UINT32_MAX) return jfail(p, p->pos, "string too long");
    *o = '\0'; /* at or before the closing quote, which is consumed */
    og_jtok *tk = &p->d->tok[t];
    tk->v.s = p->buf + start;
    tk->len = (uint32_t)n;
    p->pos = i + 1;
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int parse_number(jparser *p, size_t t)
{
    const char *b = p->buf;
    size_t s = p->pos, i = s;
    int neg = 0, real = 0;
    if (b[i] == '-') {
        neg = 1;
        i++;
    }
    if (i < p->len && b[i] == '0') {
        i++;
    } else if (i < p->len && b[i] >= '1' && b[i] <= '9') {
        while (i < p->len && is_digit(b[i])) i++;
    } else {
        return jfail(p, s, "invalid number");
    }
    if (i < p->len && b[i] == '.') {
        real = 1;
        i++;
        if (i >= p->len || !is_digit(b[i])) return jfail(p, s, "invalid number");
        while (i < p->len && is_digit(b[i])) i++;
    }
    if (i < p->len && (b[i] == 'e' || b[i] == 'E')) {
        real = 1;
        i++;
        if (i < p->len && (b[i] == '+' || b[i] == '-')) i++;
        if (i >= p->len || !is_digit(b[i])) return jfail(p, s, "invalid number");
        while (i < p->len && is_digit(b[i])) i++;
    }
    og_jtok *tk = &p->d->tok[t];
    if (!real) {
        /* accumulate as the magnitude; int64's range is [-2^63, 2^63 - 1] */
        uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : UINT64_MAX, v = 0;
        for (size_t k = s + (size_t)neg; k < i; k++) {
            unsigned dgt = (unsigned)(b[k] - '0');
            if (v > (limit - dgt) / 10) return jfail(p, s, neg ? "too big negative integer" : "too big integer");
            v = v * 10 + dgt;
        }
        if (!neg && v > (uint64_t)INT64_MAX) {
            tk->kind = OG_J_UINT;
            tk->v.u = v;
        } else {
            tk->kind = OG_J_INT;
            tk->v.i = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
        }
    } else {
        /* strtod needs a terminated copy (the buffer is not terminated after the number) */
        char small[64], *txt = small;
        size_t n = i - s;
        if (n >= sizeof small && !(txt = malloc(n + 1))) {
            p->st = OG_ERR_NOMEM;
            return -1;
        }
        memcpy(txt, b + s, n);
        txt[n] = '\0';
        errno = 0;
        double d = strtod(txt, NULL);
        int over = errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL);
        if (txt != small) free(txt);
        if (over) return jfail(p, s, "real number overflow");
        tk->kind = OG_J_REAL;
        tk->v.d = d;
    }
    p->pos = i;
    return 0;
}

static int key_cmp(const void *a, const void *b)
{
    const og_jtok *x = *(const og_jtok *const *)a, *y = *(const og_jtok *const *)b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return memcmp(x->v.s, y->v.s, x->len);
}

/* The keys of a big object (token obj, complete) sorted: a duplicate is adjacent. */
static int check_dups_sorted(jparser *p, size_t obj, size_t at)
{
    og_jtok *o = &p->d->tok[obj];
    const og_jtok **keys = malloc(o->len * sizeof *keys);
    if (!keys) {
        p->st = OG_ERR_NOMEM;
        return -1;
    }
    const og_jtok *k = o + 1;
    for (uint32_t m = 0; m < o->len; m++) {
        keys[m] = k;
        k = og_jtok_next(k + 1);
    }
    qsort(keys, o->len, sizeof *keys, key_cmp);
    int rc = 0;
    for (uint32_t m = 1; m < o->len && !rc; m++)
        if (!key_cmp(&keys[m - 1], &keys[m])) rc = jfail(p, at, "duplicate object key \"%s\"", keys[m]->v.s);
    free(keys);
    return rc;
}

static int parse_value(jparser *p);

/* The parts of a container that do not recurse live in their own functions, so the frames
 * of the parse_value <-> parse_container recursion stay small: under -O0 with ASan, UBSan
 * and coverage instrumentation (the test build) the 2048 levels of OG_JSON_MAX_DEPTH must
 * fit in an 8 MB stack. */

/* An object member's key (at p->pos) and its ':'; self is the object, count its members so
 * far. */
static int parse_key(jparser *p, size_t self, uint32_t count)
{
    if (p->pos >= p->len || p->buf[p->pos] != '"') return jfail(p, p->pos, "string or '}' expected");
    size_t key_at = p->pos, kt = push(p, OG_J_STRING);
    if (kt == NO_TOK || parse_string(p, kt)) return -1;
    if (count < DUP_LINEAR) {
        const og_jtok *nk = &p->d->tok[kt], *k = &p->d->tok[self + 1];
        for (uint32_t m = 0; m < count; m++, k = og_jtok_next(k + 1))
            if (k->len == nk->len && (!nk->len || k->v.s[0] == nk->v.s[0]) && !memcmp(k->v.s, nk->v.s, nk->len))
                return jfail(p, key_at, "duplicate object key \"%s\"", nk->v.s);
    }
    skip_ws(p);
    if (p->pos >= p->len || p->buf[p->pos] != ':') return jfail(p, p->pos, "':' expected");
    p->pos++;
    skip_ws(p);
    return 0;
}

/* What follows an element: ',' (returns 0) or the closing bracket (returns 1), or -1. */
static int parse_sep(jparser *p, char close)
{
    skip_ws(p);
    if (p->pos >= p->len) return jfail(p, p->pos, "premature end of input ('%c' expected)", close);
    char c = p->buf[p->pos];
    if (c == close) {
        p->pos++;
        return 1;
    }
    if (c != ',') return jfail(p, p->pos, "',' or '%c' expected", close);
    p->pos++;
    skip_ws(p);
    return 0;
}

/* Consumes the opening bracket and whitespace; 1 if the container is empty (its close
 * consumed too). */
static int open_container(jparser *p, char close)
{
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->buf[p->pos] == close) {
        p->pos++;
        return 1;
    }
    return 0;
}

static int close_container(jparser *p, size_t self, uint32_t count, int is_obj, size_t open)
{
    og_jtok *t = &p->d->tok[self];
    t->len = count;
    t->span = (uint32_t)(p->d->n - self);
    if (is_obj && count > DUP_LINEAR) return check_dups_sorted(p, self, open);
    return 0;
}

static int parse_container(jparser *p, int is_obj)
{
    size_t open = p->pos, self = push(p, is_obj ? OG_J_OBJECT : OG_J_ARRAY);
    if (self == NO_TOK) return -1;
    char close = is_obj ? '}' : ']';
    uint32_t count = 0;
    int end = open_container(p, close);
    while (!end) {
        if (is_obj && parse_key(p, self, count)) return -1;
        if (parse_value(p)) return -1;
        if (count == UINT32_MAX) return jfail(p, p->pos, "too many members");
        count++;
        if ((end = parse_sep(p, close)) < 0) return -1;
    }
    return close_container(p, self, count, is_obj, open);
}

static int literal(jparser *p, const char *word, og_jkind kind)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->buf + p->pos, word, n) != 0) return jfail(p, p->pos, "invalid token");
    if (push(p, kind) == NO_TOK) return -1;
    p->pos += n;
    return 0;
}

/* A value other than an object or array at p->pos (< p->len). */
static int parse_scalar(jparser *p)
{
    size_t t;
    switch (p->buf[p->pos]) {
    case '"': return (t = push(p, OG_J_STRING)) == NO_TOK ? -1 : parse_string(p, t);
    case 't': return literal(p, "true", OG_J_TRUE);
    case 'f': return literal(p, "false", OG_J_FALSE);
    case 'n': return literal(p, "null", OG_J_NULL);
    default:
        if (p->buf[p->pos] == '-' || is_digit(p->buf[p->pos]))
            return (t = push(p, OG_J_INT)) == NO_TOK ? -1 : parse_number(p, t);
        unsigned char c = (unsigned char)p->buf[p->pos];
        if (c >= 0x80 && !og_utf8_seq_len((const unsigned char *)p->buf + p->pos, p->len - p->pos))
            return jfail(p, p->pos, "invalid UTF-8");
        return jfail(p, p->pos, "invalid token");
    }
}

static int parse_value(jparser *p)
{
    if (++p->depth > OG_JSON_MAX_DEPTH) return jfail(p, p->pos, "maximum parsing depth reached");
    if (p->pos >= p->len) return jfail(p, p->pos, "premature end of input (a value expected)");
    char c = p->buf[p->pos];
    int rc = c == '{' || c == '[' ? parse_container(p, c == '{') : parse_scalar(p);
    p->depth--;
    return rc;
}

og_status og_json_parse(og_jdoc *d, char *buf, size_t len, size_t *root, char *msg, size_t cap)
{
    jparser p = {d, buf, len, 0, 0, OG_OK, msg, cap};
    size_t n0 = d->n;
    if (msg && cap) msg[0] = '\0';
    skip_ws(&p);
    if (parse_value(&p) == 0) {
        skip_ws(&p);
        if (p.pos < p.len) jfail(&p, p.pos, "end of input expected after the value");
    }
    if (p.st != OG_OK) {
        d->n = n0;
        return p.st;
    }
    *root = n0;
    return OG_OK;
}

const og_jtok *og_jobj_get(const og_jtok *obj, const char *key)
{
    size_t n = strlen(key);
    const og_jtok *k = obj + 1;
    for (uint32_t m = 0; m < obj->len; m++) {
        if (k->len == n && !memcmp(k->v.s, key, n)) return k + 1;
        k = og_jtok_next(k + 1);
    }
    return NULL;
}

const char *og_jkind_name(og_jkind k)
{
    switch (k) {
    case OG_J_OBJECT: return "an object";
    case OG_J_ARRAY: return "an array";
    case OG_J_STRING: return "a string";
    case OG_J_INT: case OG_J_UINT: return "an integer";
    case OG_J_REAL: return "a number";
    case OG_J_TRUE: case OG_J_FALSE: return "a boolean";
    default: return "null";
    }
}
