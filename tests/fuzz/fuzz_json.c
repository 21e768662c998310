/*
 * fuzz_json.c — differential libFuzzer target: og_json_parse (util/jsontok.h) against
 * jansson's json_loadb(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY), the parser it replaces.
 * Pins down that both accept exactly the same inputs (top-level scalars included: with
 * JSON_DECODE_ANY jansson takes them too), and that on acceptance the token array is the
 * same tree: kinds, int64 values, doubles bitwise, string bytes and lengths (NUL-terminated,
 * in the input buffer), object members by key and count, array elements in order, and every
 * container's span/len consistent.  It also checks the doc contract: a failed parse leaves
 * the tokens already in the doc as they were and says "column C: ..."; a successful one
 * appends behind them.  abort() on any disagreement.  Tolerated: OG_ERR_NOMEM (jansson has
 * its own allocator), and jansson skipping a raw NUL right after a number or literal (see
 * jansson_nul_quirk: jsontok rightly rejects those).  Seeds: tests/fuzz/corpus/fuzz_json/.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsontok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t g_size;
static const char *g_lo, *g_hi; /* the parsed copy */

static void die(const char *what)
{
    fprintf(stderr, "fuzz_json: %s (input of %zu bytes)\n", what, g_size);
    abort();
}

#define CHECK(cond, what)          \
    do {                           \
        if (!(cond)) die(what);    \
    } while (0)

/* A jansson 2.14 quirk, the one place where the two parsers legitimately disagree: the byte
 * after a number or a bare word (true/false/null) is read ahead and pushed back into the
 * lexer's NUL-terminated stream buffer, where a pushed-back NUL reads as "buffer empty" and is
 * skipped.  So jansson accepts "1\0", "[1\0]", "[true\0,2]" (one NUL only: "1\0\0" fails;
 * cf. JSONTestSuite's n_multidigit_number_then_00.json), while jsontok rejects every raw NUL
 * as RFC 8259 does.  jansson then goes on lexing at the next byte as at the start of a token,
 * which is what a space there would do: this rewrites each such NUL (outside a string, right
 * after an ASCII letter or digit) to ' ' and returns how many it rewrote. */
static size_t jansson_nul_quirk(char *b, size_t n)
{
    size_t k = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '\0' && i > 0) {
            char a = b[i - 1];
            if ((a >= '0' && a <= '9') || (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z')) {
                b[i] = ' ';
                k++;
            }
        }
    }
    return k;
}

/* Compares the value at t with j; returns the token after it. */
static const og_jtok *same(const og_jtok *t, const json_t *j)
{
    switch (t->kind) {
    case OG_J_NULL: CHECK(json_is_null(j), "null vs other"); CHECK(t->span == 1, "scalar span"); return t + 1;
    case OG_J_TRUE: CHECK(json_is_true(j), "true vs other"); CHECK(t->span == 1, "scalar span"); return t + 1;
    case OG_J_FALSE: CHECK(json_is_false(j), "false vs other"); CHECK(t->span == 1, "scalar span"); return t + 1;
    case OG_J_INT:
        CHECK(json_is_integer(j), "int vs other");
        CHECK(t->span == 1, "scalar span");
        CHECK(t->v.i == (int64_t)json_integer_value(j), "int value");
        return t + 1;
    case OG_J_REAL: {
        CHECK(json_is_real(j), "real vs other");
        CHECK(t->span == 1, "scalar span");
        double a = t->v.d, b = json_real_value(j);
        CHECK(memcmp(&a, &b, sizeof a) == 0, "real bits");
        return t + 1;
    }
    case OG_J_STRING:
        CHECK(json_is_string(j), "string vs other");
        CHECK(t->span == 1, "scalar span");
        CHECK(t->len == json_string_length(j), "string length");
        CHECK(memcmp(t->v.s, json_string_value(j), t->len) == 0, "string bytes");
        CHECK(t->v.s >= g_lo && t->v.s + t->len < g_hi, "string outside the buffer");
        CHECK(t->v.s[t->len] == '\0', "string not NUL-terminated");
        return t + 1;
    case OG_J_ARRAY: {
        CHECK(json_is_array(j), "array vs other");
        CHECK(t->len == json_array_size(j), "array size");
        const og_jtok *c = t + 1;
        for (size_t i = 0; i < t->len; i++) c = same(c, json_array_get(j, i));
        CHECK(c == og_jtok_next(t), "array span");
        return c;
    }
    case OG_J_OBJECT: {
        CHECK(json_is_object(j), "object vs other");
        CHECK(t->len == json_object_size(j), "object size");
        const og_jtok *c = t + 1;
        for (size_t i = 0; i < t->len; i++) {
            CHECK(c->kind == OG_J_STRING && c->span == 1, "key not a string");
            CHECK(c->v.s[c->len] == '\0', "key not NUL-terminated");
            const json_t *v = json_object_getn(j, c->v.s, c->len);
            CHECK(v != NULL, "key missing from jansson's object");
            CHECK(og_jobj_get(t, c->v.s) == c + 1, "og_jobj_get");
            c = same(c + 1, v);
        }
        CHECK(c == og_jtok_next(t), "object span");
        return c;
    }
    default: die("bad kind");
    }
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static og_jdoc d = OG_JDOC_INIT;
    g_size = size;

    /* a value already in the doc, which the parse under test must not disturb */
    char pre[] = "[\"pre\",7]";
    size_t r0;
    og_jdoc_reset(&d);
    if (og_json_parse(&d, pre, strlen(pre), &r0, NULL, 0) != OG_OK) die("prefix parse");
    size_t n0 = d.n;

    /* an exact-size copy, so ASan sees any read past the end */
    char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    g_lo = buf;
    g_hi = buf + size;

    char msg[256];
    size_t root = (size_t)-1;
    og_status st = og_json_parse(&d, buf, size, &root, msg, sizeof msg);

    json_error_t err;
    static const char empty[1];
    json_t *j = json_loadb(size ? (const char *)data : empty, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);

    if (st == OG_ERR_PARSE && j) {
        /* acceptable only as the quirk above: then the rewritten input must parse to the same
         * tree (the failed parse left the doc at n0) */
        memcpy(buf, data, size);
        if (!jansson_nul_quirk(buf, size)) {
            fprintf(stderr, "jsontok rejects (%s), jansson accepts\n", msg);
            die("disagreement");
        }
        CHECK(d.n == n0, "failure changed the doc");
        st = og_json_parse(&d, buf, size, &root, msg, sizeof msg);
        if (st != OG_OK) {
            fprintf(stderr, "jsontok rejects (%s) even without jansson's skipped NULs\n", msg);
            die("disagreement");
        }
    }
    if (st == OG_ERR_NOMEM) {
        /* allowed to differ; the doc must still be as it was */
    } else if (st != OG_OK) {
        CHECK(st == OG_ERR_PARSE && !j, "status neither OK nor PARSE");
        CHECK(strncmp(msg, "column ", 7) == 0, "message without a column");
        CHECK(root == (size_t)-1, "root set on failure");
    } else {
        /* the one extension: an integer in (2^63-1, 2^64-1] is OG_J_UINT where jansson says
         * "too big integer" */
        int has_uint = 0;
        for (size_t k = root; k < d.n; k++) has_uint |= d.tok[k].kind == OG_J_UINT;
        if (!j && !(has_uint && strstr(err.text, "too big integer"))) {
            fprintf(stderr, "jsontok accepts, jansson rejects (%s at column %d)\n", err.text, err.column);
            die("disagreement");
        }
        CHECK(root == n0, "root not appended behind the prefix");
        if (j) {
            const og_jtok *end = same(&d.tok[root], j);
            CHECK(end == d.tok + d.n, "tokens after the root value");
        }
    }
    if (st != OG_OK) CHECK(d.n == n0, "failure changed the doc");
    /* the prefix value survived (possibly across a reallocation) */
    CHECK(d.tok[r0].kind == OG_J_ARRAY && d.tok[r0].span == 3 && d.tok[r0].len == 2, "prefix array");
    CHECK(d.tok[r0 + 1].kind == OG_J_STRING && d.tok[r0 + 1].len == 3 && !memcmp(d.tok[r0 + 1].v.s, "pre", 4),
          "prefix string");
    CHECK(d.tok[r0 + 2].kind == OG_J_INT && d.tok[r0 + 2].v.i == 7, "prefix int");

    json_decref(j);
    free(buf);
    return 0;
}
