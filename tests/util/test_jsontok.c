/*
 * test_jsontok.c — the strict token-array JSON parser (util/jsontok.h): the token layout
 * (span/len, og_jtok_next, og_jobj_get), in-place string decoding (escapes, \uXXXX and
 * surrogate pairs to UTF-8, NUL termination), the int64 and double limits, every rejection
 * jansson's json_loadb(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY) makes (duplicate keys at any
 * depth and object size, invalid UTF-8, control characters, \u0000, lone surrogates, trailing
 * garbage, leading zeros, bad literals) with OG_ERR_PARSE and "column C: " naming the byte,
 * the depth limit on the same side as jansson's (2048 nested values, scalars counted, accepted;
 * 2049 rejected — checked against jansson 2.14), failures leaving the doc as it was, doc
 * reuse, and og_jkind_name.  Every accepted/rejected text is also checked against jansson
 * itself; tests/fuzz/fuzz_json.c checks that agreement at large.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "util/jsontok.h"

/* A parse over a malloc'd copy of exactly the text (no terminator after it), so the parser
 * can rely on nothing past len. */
typedef struct parsed {
    og_jdoc d;
    char *buf;
    size_t len, root;
    og_status st;
    char msg[256];
} parsed;

static void parse_n(parsed *p, const char *text, size_t len)
{
    memset(p, 0, sizeof *p);
    og_jdoc_init(&p->d);
    p->buf = malloc(len ? len : 1);
    assert_non_null(p->buf);
    memcpy(p->buf, text, len);
    p->len = len;
    p->root = (size_t)-1;
    p->st = og_json_parse(&p->d, p->buf, len, &p->root, p->msg, sizeof p->msg);
}

static void parse(parsed *p, const char *text) { parse_n(p, text, strlen(text)); }

/* The reference: every accept/reject below is also jansson's. */
static int jansson_accepts(const char *text, size_t len)
{
    json_error_t err;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
    json_decref(j);
    return j != NULL;
}

static void done(parsed *p)
{
    og_jdoc_free(&p->d);
    free(p->buf);
}

static const og_jtok *root(const parsed *p) { return &p->d.tok[p->root]; }

/* text must be accepted; returns after checking the whole doc is one value. */
static void accept(parsed *p, const char *text)
{
    parse(p, text);
    if (p->st != OG_OK) fail_msg("rejected %s: %s", text, p->msg);
    if (!jansson_accepts(text, strlen(text))) fail_msg("jansson rejects %s", text);
    assert_int_equal(p->root, 0);
    assert_int_equal(root(p)->span, p->d.n);
}

/* text[0..len) must be rejected with OG_ERR_PARSE, a message starting "column <col>: " and
 * containing `what` (if not NULL), and no tokens left behind. */
static void reject_n(const char *text, size_t len, unsigned col, const char *what)
{
    parsed p;
    parse_n(&p, text, len);
    if (p.st != OG_ERR_PARSE) fail_msg("accepted (status %d) %.*s", (int)p.st, (int)len, text);
    if (jansson_accepts(text, len)) fail_msg("jansson accepts %.*s", (int)len, text);
    char want[32];
    snprintf(want, sizeof want, "column %u: ", col);
    if (strncmp(p.msg, want, strlen(want)) != 0) fail_msg("'%s' does not start with '%s'", p.msg, want);
    if (what && !strstr(p.msg, what)) fail_msg("'%s' does not mention '%s'", p.msg, what);
    assert_int_equal(p.d.n, 0);
    assert_int_equal(p.root, (size_t)-1);
    done(&p);
}

static void reject(const char *text, unsigned col, const char *what) { reject_n(text, strlen(text), col, what); }

/* "[[[...inner...]]]" with `depth` brackets. */
static char *nest(int depth, const char *inner)
{
    size_t il = strlen(inner);
    char *b = malloc(2 * (size_t)depth + il + 1), *q = b;
    assert_non_null(b);
    memset(q, '[', (size_t)depth);
    q += depth;
    memcpy(q, inner, il);
    q += il;
    memset(q, ']', (size_t)depth);
    q[depth] = '\0';
    return b;
}

/* {"k0":0,"k1":1,...} with n members, then `extra` (",\"k3\":9" for a duplicate) before '}'. */
static char *big_object(int n, const char *extra)
{
    size_t cap = (size_t)n * 24 + strlen(extra) + 8, len = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    b[len++] = '{';
    for (int i = 0; i < n; i++) len += (size_t)snprintf(b + len, cap - len, "%s\"k%d\":%d", i ? "," : "", i, i);
    len += (size_t)snprintf(b + len, cap - len, "%s}", extra);
    return b;
}

static void token_layout_spans_and_lengths(void **state)
{
    (void)state;
    parsed p;
    /*        0  1    2 3 4 5 6  7    8    9  10   11    12   13 */
    accept(&p, "{\"a\":[1,[2,3],{}],\"b\":{\"c\":null},\"d\":\"x\"}");
    const og_jtok *t = p.d.tok;
    assert_int_equal(p.d.n, 14);
    assert_int_equal(t[0].kind, OG_J_OBJECT);
    assert_int_equal(t[0].len, 3);
    assert_int_equal(t[0].span, 14);
    assert_int_equal(t[1].kind, OG_J_STRING);
    assert_string_equal(t[1].v.s, "a");
    assert_int_equal(t[2].kind, OG_J_ARRAY);
    assert_int_equal(t[2].len, 3);
    assert_int_equal(t[2].span, 6);
    assert_int_equal(t[3].kind, OG_J_INT);
    assert_int_equal(t[3].v.i, 1);
    assert_int_equal(t[3].span, 1);
    assert_int_equal(t[4].kind, OG_J_ARRAY);
    assert_int_equal(t[4].len, 2);
    assert_int_equal(t[4].span, 3);
    assert_int_equal(t[5].v.i, 2);
    assert_int_equal(t[6].v.i, 3);
    assert_int_equal(t[7].kind, OG_J_OBJECT);
    assert_int_equal(t[7].len, 0);
    assert_int_equal(t[7].span, 1);
    assert_string_equal(t[8].v.s, "b");
    assert_int_equal(t[9].kind, OG_J_OBJECT);
    assert_int_equal(t[9].len, 1);
    assert_int_equal(t[9].span, 3);
    assert_string_equal(t[10].v.s, "c");
    assert_int_equal(t[11].kind, OG_J_NULL);
    assert_string_equal(t[12].v.s, "d");
    assert_int_equal(t[13].kind, OG_J_STRING);
    assert_string_equal(t[13].v.s, "x");
    assert_int_equal(t[13].len, 1);

    /* og_jtok_next skips a whole value, scalars by one */
    assert_ptr_equal(og_jtok_next(&t[2]), &t[8]);
    assert_ptr_equal(og_jtok_next(&t[4]), &t[7]);
    assert_ptr_equal(og_jtok_next(&t[3]), &t[4]);
    assert_ptr_equal(og_jtok_next(&t[9]), &t[12]);
    assert_ptr_equal(og_jtok_next(&t[0]), &t[14]);

    /* og_jobj_get: found (each position), missing, prefix/extension of a key, nested */
    assert_ptr_equal(og_jobj_get(&t[0], "a"), &t[2]);
    assert_ptr_equal(og_jobj_get(&t[0], "b"), &t[9]);
    assert_ptr_equal(og_jobj_get(&t[0], "d"), &t[13]);
    assert_null(og_jobj_get(&t[0], "c")); /* a key of a nested object only */
    assert_null(og_jobj_get(&t[0], "z"));
    assert_null(og_jobj_get(&t[0], ""));
    assert_null(og_jobj_get(&t[0], "ab"));
    assert_ptr_equal(og_jobj_get(&t[9], "c"), &t[11]);
    assert_null(og_jobj_get(&t[7], "a")); /* empty object */
    done(&p);

    /* scalars of every kind, top-level scalars, empty containers, whitespace */
    accept(&p, " \t\r\n[true, false ,null,-0,0.5,-1.25e2,\"\",[],{}]\r\n ");
    t = p.d.tok;
    assert_int_equal(p.d.n, 10);
    assert_int_equal(t[0].len, 9);
    assert_int_equal(t[1].kind, OG_J_TRUE);
    assert_int_equal(t[2].kind, OG_J_FALSE);
    assert_int_equal(t[3].kind, OG_J_NULL);
    assert_int_equal(t[4].kind, OG_J_INT);
    assert_int_equal(t[4].v.i, 0);
    assert_int_equal(t[5].kind, OG_J_REAL);
    assert_true(t[5].v.d == 0.5);
    assert_int_equal(t[6].kind, OG_J_REAL);
    assert_true(t[6].v.d == -125.0);
    assert_int_equal(t[7].kind, OG_J_STRING);
    assert_int_equal(t[7].len, 0);
    assert_string_equal(t[7].v.s, "");
    assert_int_equal(t[8].kind, OG_J_ARRAY);
    assert_int_equal(t[8].span, 1);
    assert_int_equal(t[9].kind, OG_J_OBJECT);
    done(&p);

    accept(&p, "42");
    assert_int_equal(root(&p)->kind, OG_J_INT);
    assert_int_equal(root(&p)->v.i, 42);
    done(&p);
    accept(&p, " \"top\" ");
    assert_int_equal(root(&p)->kind, OG_J_STRING);
    assert_string_equal(root(&p)->v.s, "top");
    done(&p);
    accept(&p, "null");
    assert_int_equal(root(&p)->kind, OG_J_NULL);
    done(&p);
}

static void big_objects_without_duplicates_are_found_by_key(void **state)
{
    (void)state;
    /* 40 members: past the linear duplicate check, into the sorted one */
    char *txt = big_object(40, ",\"k\":-1,\"k40x\":40");
    parsed p;
    accept(&p, txt);
    assert_int_equal(root(&p)->len, 42);
    assert_int_equal(root(&p)->span, 1 + 2 * 42);
    const og_jtok *v = og_jobj_get(root(&p), "k39");
    assert_non_null(v);
    assert_int_equal(v->v.i, 39);
    v = og_jobj_get(root(&p), "k");
    assert_non_null(v);
    assert_int_equal(v->v.i, -1);
    assert_null(og_jobj_get(root(&p), "k40"));
    done(&p);
    free(txt);
}

static void string_escapes_decode_in_place(void **state)
{
    (void)state;
    parsed p;
    accept(&p, "[\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\", \"\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\\udbff\\udfff\","
               "\"\\n\xC3\xA9x\xF0\x9F\x98\x80y\", \"plain \xE2\x82\xAC\", \"\x7f\"]");
    const og_jtok *t = p.d.tok;
    assert_int_equal(t[0].len, 5);

    static const char s1[] = "a\"b\\c/d\be\ff\ng\rh\ti";
    assert_int_equal(t[1].len, sizeof s1 - 1);
    assert_memory_equal(t[1].v.s, s1, sizeof s1); /* NUL included */

    /* U+0041, U+00E9, U+20AC, U+1F600 (a surrogate pair), U+10FFFF */
    static const char s2[] = "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF";
    assert_int_equal(t[2].len, sizeof s2 - 1);
    assert_memory_equal(t[2].v.s, s2, sizeof s2);

    /* raw multi-byte UTF-8 behind an escape is moved down intact */
    static const char s3[] = "\n\xC3\xA9x\xF0\x9F\x98\x80y";
    assert_int_equal(t[3].len, sizeof s3 - 1);
    assert_memory_equal(t[3].v.s, s3, sizeof s3);

    assert_int_equal(t[4].len, 9);
    assert_string_equal(t[4].v.s, "plain \xE2\x82\xAC");
    assert_int_equal(t[5].len, 1);
    assert_string_equal(t[5].v.s, "\x7f");

    /* in place: every string points into the parsed buffer, its terminator too */
    for (int i = 1; i <= 5; i++) {
        assert_true(t[i].v.s > p.buf && t[i].v.s + t[i].len < p.buf + p.len);
        assert_int_equal(t[i].v.s[t[i].len], '\0');
        assert_int_equal(strlen(t[i].v.s), t[i].len);
    }
    done(&p);

    /* keys decode too, and compare decoded */
    accept(&p, "{\"k\\u0065y\":1}");
    assert_non_null(og_jobj_get(root(&p), "key"));
    assert_int_equal(p.d.tok[1].len, 3);
    done(&p);

    /* a string ending right at the buffer's end: the NUL goes on its closing quote */
    accept(&p, "\"ab\\n\"");
    assert_int_equal(root(&p)->len, 3);
    assert_memory_equal(root(&p)->v.s, "ab\n", 4);
    assert_ptr_equal(root(&p)->v.s, p.buf + 1);
    done(&p);
}

static void integer_limits(void **state)
{
    (void)state;
    parsed p;
    accept(&p, "[9223372036854775807,-9223372036854775808,0,-0,1,-1,1000000000000000000]");
    const og_jtok *t = p.d.tok;
    assert_int_equal(t[1].kind, OG_J_INT);
    assert_true(t[1].v.i == INT64_MAX);
    assert_int_equal(t[2].kind, OG_J_INT);
    assert_true(t[2].v.i == INT64_MIN);
    assert_true(t[3].v.i == 0 && t[4].v.i == 0);
    assert_true(t[5].v.i == 1 && t[6].v.i == -1);
    assert_true(t[7].v.i == INT64_C(1000000000000000000));
    done(&p);

    /* above int64 and up to 2^64-1: OG_J_UINT (a U64 column's upper half) */
    parse(&p, "[9223372036854775808,18446744073709551615]"); /* jansson: "too big integer" */
    assert_int_equal(p.st, OG_OK);
    assert_int_equal(p.d.tok[1].kind, OG_J_UINT);
    assert_true(p.d.tok[1].v.u == UINT64_C(9223372036854775808));
    assert_int_equal(p.d.tok[2].kind, OG_J_UINT);
    assert_true(p.d.tok[2].v.u == UINT64_MAX);
    done(&p);
    reject("[1,-9223372036854775809]", 4, "too big negative integer");
    reject("99999999999999999999", 1, "too big integer");
    reject("[18446744073709551616]", 2, "too big integer");
    /* written as reals, the same magnitudes are fine */
    accept(&p, "[9223372036854775808.0,-9223372036854775809e0]");
    assert_int_equal(p.d.tok[1].kind, OG_J_REAL);
    assert_true(p.d.tok[1].v.d == 9223372036854775808.0);
    assert_int_equal(p.d.tok[2].kind, OG_J_REAL);
    done(&p);
}

static void real_limits(void **state)
{
    (void)state;
    parsed p;
    accept(&p, "[1e308,-1.7976931348623157e308,1E+2,2.5e-3,1e-400,0.0,-0.0]");
    const og_jtok *t = p.d.tok;
    assert_true(t[1].v.d == 1e308);
    assert_true(t[2].v.d == -1.7976931348623157e308);
    assert_true(t[3].v.d == 100.0);
    assert_true(t[4].v.d == 2.5e-3);
    assert_true(t[5].v.d == 0.0); /* underflow is not an error (jansson agrees) */
    assert_int_equal(t[6].kind, OG_J_REAL);
    assert_int_equal(t[7].kind, OG_J_REAL);
    assert_true(t[7].v.d == 0.0);
    double nz = t[7].v.d;
    assert_true(memcmp(&nz, &(double){-0.0}, sizeof nz) == 0);
    done(&p);
    /* a long mantissa goes through the heap copy */
    char longnum[420];
    memset(longnum, '1', 150);
    strcpy(longnum + 150, ".5");
    accept(&p, longnum);
    assert_int_equal(root(&p)->kind, OG_J_REAL);
    assert_true(root(&p)->v.d > 1e149 && root(&p)->v.d < 1e150);
    done(&p);

    reject("1e309", 1, "real number overflow");
    reject("[0,-1e309]", 4, "real number overflow");
    reject("1.8e308", 1, "real number overflow");
    memset(longnum, '9', 400);
    strcpy(longnum + 400, ".0");
    reject(longnum, 1, "real number overflow");
}

static void duplicate_keys_rejected(void **state)
{
    (void)state;
    reject("{\"a\":1,\"a\":2}", 8, "duplicate object key \"a\"");
    reject("{\"a\":1,\"b\":2,\"a\":3}", 14, "duplicate");
    /* compared decoded */
    reject("{\"ab\":1,\"a\\u0062\":2}", 9, "duplicate object key \"ab\"");
    /* nested, small */
    reject("{\"x\":{\"a\":1,\"a\":2}}", 13, "duplicate");
    reject("[{},{\"a\":{\"b\":[{\"c\":1,\"c\":1}]}}]", 23, "duplicate");
    /* not duplicates: prefixes, same key in sibling or nested objects */
    parsed p;
    accept(&p, "{\"a\":{\"a\":1},\"ab\":[{\"a\":1},{\"a\":2}],\"\":0,\"b\":{\"\":1}}");
    done(&p);

    /* > 16 members: found by the end-of-object sort, reported at the object's '{' */
    char *txt = big_object(20, ",\"k3\":9");
    reject(txt, 1, "duplicate object key \"k3\"");
    free(txt);
    /* the duplicate is the 17th key: the first one past the linear check */
    txt = big_object(16, ",\"k0\":9");
    reject(txt, 1, "duplicate object key \"k0\"");
    free(txt);
    /* exactly 16 members, the last a duplicate: still the linear check, at the key */
    txt = big_object(15, ",\"k14\":9");
    reject(txt, (unsigned)(strlen(txt) - strlen("\"k14\":9}") + 1), "duplicate object key \"k14\"");
    free(txt);
    /* big and nested: reported at the inner object's '{' (column 6) */
    char *inner = big_object(30, ",\"k29\":0");
    char *outer = malloc(strlen(inner) + 16);
    sprintf(outer, "{\"x\":%s}", inner);
    reject(outer, 6, "duplicate object key \"k29\"");
    free(outer);
    free(inner);
}

static void invalid_utf8_rejected(void **state)
{
    (void)state;
    reject("\"\xC0\xAF\"", 2, "invalid UTF-8");              /* overlong '/' */
    reject("\"\xE0\x80\xAF\"", 2, "invalid UTF-8");          /* overlong, 3 bytes */
    reject("\"\xF0\x80\x80\xAF\"", 2, "invalid UTF-8");      /* overlong, 4 bytes */
    reject("\"\xED\xA0\x80\"", 2, "invalid UTF-8");          /* U+D800 encoded */
    reject("\"\xED\xBF\xBF\"", 2, "invalid UTF-8");          /* U+DFFF encoded */
    reject("\"\xF4\x90\x80\x80\"", 2, "invalid UTF-8");      /* U+110000 */
    reject("\"\xF5\x80\x80\x80\"", 2, "invalid UTF-8");
    reject("\"ab\xE2\x82\"", 4, "invalid UTF-8");            /* truncated before the quote */
    reject_n("\"ab\xE2\x82", 5, 4, "invalid UTF-8");         /* truncated at the buffer's end */
    reject("\"\x80\"", 2, "invalid UTF-8");                  /* a lone continuation byte */
    reject("\"\xFF\"", 2, "invalid UTF-8");
    reject("\"\\n\xC0\xAF\"", 4, "invalid UTF-8");           /* after an escape */
    reject("{\"k\xED\xA0\x80\":1}", 4, "invalid UTF-8");     /* in a key */
    reject("[\xFF]", 2, "invalid UTF-8");                    /* outside a string */
    /* valid non-ASCII outside a string is just an invalid token */
    reject("[\xC3\xA9]", 2, "invalid token");
    /* boundaries that are valid */
    parsed p;
    accept(&p, "[\"\xC2\x80\",\"\xDF\xBF\",\"\xE0\xA0\x80\",\"\xED\x9F\xBF\",\"\xEE\x80\x80\",\"\xF0\x90\x80\x80\",\"\xF4\x8F\xBF\xBF\"]");
    done(&p);
}

static void control_characters_and_bad_escapes_rejected(void **state)
{
    (void)state;
    reject("\"a\x01\"", 3, "control character 0x1");
    reject("\"a\tb\"", 3, "control character 0x9");
    reject("\"a\nb\"", 3, "control character");
    reject("\"\\n\x1f\"", 4, "control character 0x1f"); /* after an escape */
    reject_n("\"a\0b\"", 5, 3, "control character 0x0");
    reject("\"\\x\"", 2, "invalid escape");
    reject("\"\\u12G4\"", 2, "invalid \\u escape");
    reject("\"\\u12\"", 2, "invalid \\u escape");
    reject_n("\"\\", 2, 2, "premature end");
    reject("\"abc", 1, "premature end");
}

static void nul_escape_and_lone_surrogates_rejected(void **state)
{
    (void)state;
    reject("\"\\u0000\"", 2, "\\u0000");
    reject("{\"a\\u0000\":1}", 4, "\\u0000");
    reject("\"\\uD800\"", 2, "high surrogate");
    reject("\"x\\uDBFF\\u0041\"", 3, "high surrogate");      /* followed by a non-surrogate */
    reject("\"\\uD800\\uD800\"", 2, "high surrogate");       /* two high halves */
    reject("\"\\uD800\\n\"", 2, "high surrogate");
    reject("\"\\uD800\\uDC0\"", 2, "high surrogate");        /* the low half truncated */
    reject("\"\\uDC00\"", 2, "low surrogate");
    reject("\"ab\\uDFFF\\uD800\"", 4, "low surrogate");      /* the pair reversed */
}

static void structural_errors_rejected(void **state)
{
    (void)state;
    reject("[1] x", 5, "end of input expected");
    reject("{} {}", 4, "end of input expected");
    reject_n("[1]\0", 4, 4, "end of input expected");
    reject("\"a\"\"b\"", 4, "end of input expected");
    reject("", 1, "premature end");
    reject(" \n ", 4, "premature end");
    reject("[1,]", 4, "invalid token");
    reject("[1 2]", 4, "',' or ']' expected");
    reject("{\"a\" 1}", 6, "':' expected");
    reject("{\"a\":1,}", 8, "string or '}' expected");
    reject("{1:2}", 2, "string or '}' expected");
    reject("[", 2, "premature end");
    reject("[1", 3, "premature end");
    reject("{\"a\":", 6, "premature end");
    reject("\v[]", 1, "invalid token");  /* only space, tab, CR, LF are whitespace */
    reject("\f[]", 1, "invalid token");
    reject("\xEF\xBB\xBF[]", 1, "invalid token"); /* no BOM */
}

static void leading_zeros_and_bad_numbers_rejected(void **state)
{
    (void)state;
    reject("01", 2, "end of input expected");
    reject("[01]", 3, "',' or ']' expected");
    reject("-01", 3, "end of input expected");
    reject("[00.5]", 3, NULL);
    reject("-", 1, "invalid number");
    reject("[-a]", 2, "invalid number");
    reject("1.", 1, "invalid number");
    reject("1.e5", 1, "invalid number");
    reject("[1e]", 2, "invalid number");
    reject("1e+", 1, "invalid number");
    reject(".5", 1, "invalid token");
    reject("+1", 1, "invalid token");
    reject("[0x10]", 3, NULL);
    reject("NaN", 1, "invalid token");
    reject("[Infinity]", 2, "invalid token");
}

static void bad_literals_rejected(void **state)
{
    (void)state;
    reject("tru", 1, "invalid token");
    reject("[nul]", 2, "invalid token");
    reject("True", 1, "invalid token");
    reject("[fals]", 2, "invalid token");
    reject("truex", 5, "end of input expected");
    reject("[true1]", 6, "',' or ']' expected");
    reject("{\"a\":nulll}", 10, "',' or '}' expected");
    reject("[undefined]", 2, "invalid token");
}

static void depth_limit_matches_jansson(void **state)
{
    (void)state;
    /* jansson counts every value, scalars too: 2048 nested arrays, or 2047 around a scalar,
     * are accepted; one level more is "maximum parsing depth reached" at the value that
     * passes the limit (column 2049). */
    parsed p;
    char *txt = nest(OG_JSON_MAX_DEPTH, "");
    accept(&p, txt);
    assert_int_equal(p.d.n, OG_JSON_MAX_DEPTH);
    assert_int_equal(p.d.tok[OG_JSON_MAX_DEPTH - 1].span, 1);
    assert_int_equal(p.d.tok[OG_JSON_MAX_DEPTH - 2].len, 1);
    done(&p);
    free(txt);

    txt = nest(OG_JSON_MAX_DEPTH - 1, "7");
    accept(&p, txt);
    assert_int_equal(p.d.tok[OG_JSON_MAX_DEPTH - 1].v.i, 7);
    done(&p);
    free(txt);

    txt = nest(OG_JSON_MAX_DEPTH + 1, "");
    reject(txt, OG_JSON_MAX_DEPTH + 1, "maximum parsing depth reached");
    free(txt);
    txt = nest(OG_JSON_MAX_DEPTH, "7");
    reject(txt, OG_JSON_MAX_DEPTH + 1, "maximum parsing depth reached");
    free(txt);

    /* objects count the same: 1024 x [{"a": ... }] */
    size_t cap = 16 * OG_JSON_MAX_DEPTH;
    txt = malloc(cap);
    size_t n = 0;
    for (int i = 0; i < OG_JSON_MAX_DEPTH / 2; i++) n += (size_t)snprintf(txt + n, cap - n, "[{\"a\":");
    n += (size_t)snprintf(txt + n, cap - n, "[]");
    for (int i = 0; i < OG_JSON_MAX_DEPTH / 2; i++) n += (size_t)snprintf(txt + n, cap - n, "}]");
    reject(txt, 6 * (OG_JSON_MAX_DEPTH / 2) + 1, "maximum parsing depth reached"); /* 2049th value */
    n = 0;
    for (int i = 0; i < OG_JSON_MAX_DEPTH / 2; i++) n += (size_t)snprintf(txt + n, cap - n, "[{\"a\":");
    n += (size_t)snprintf(txt + n, cap - n, "0"); /* rejected too: the 2049th value */
    for (int i = 0; i < OG_JSON_MAX_DEPTH / 2; i++) n += (size_t)snprintf(txt + n, cap - n, "}]");
    reject(txt, 6 * (OG_JSON_MAX_DEPTH / 2) + 1, "maximum parsing depth reached");
    /* one pair less and a scalar: 2047 containers + the scalar */
    n = 0;
    for (int i = 0; i < OG_JSON_MAX_DEPTH / 2 - 1; i++) n += (size_t)snprintf(txt + n, cap - n, "[{\"a\":");
    n += (size_t)snprintf(txt + n, cap - n, "[0]");
    for (int i = 0; i < OG_JSON_MAX_DEPTH / 2 - 1; i++) n += (size_t)snprintf(txt + n, cap - n, "}]");
    accept(&p, txt);
    done(&p);
    free(txt);
}

static void failure_leaves_the_doc_unchanged(void **state)
{
    (void)state;
    og_jdoc d = OG_JDOC_INIT;
    char first[] = "{\"name\":\"ann\",\"n\":[1,2]}";
    size_t r1 = 99;
    char msg[128];
    assert_int_equal(og_json_parse(&d, first, strlen(first), &r1, msg, sizeof msg), OG_OK);
    assert_int_equal(r1, 0);
    size_t n0 = d.n;
    assert_int_equal(n0, 7);

    /* a failure deep into a value big enough to grow the array several times */
    size_t cap = 100000;
    char *bad = malloc(cap);
    size_t len = 0;
    bad[len++] = '[';
    for (int i = 0; i < 5000; i++) len += (size_t)snprintf(bad + len, cap - len, "%d,", i);
    len += (size_t)snprintf(bad + len, cap - len, "{\"x\":1,\"x\":2}]");
    size_t r2 = 12345;
    assert_int_equal(og_json_parse(&d, bad, len, &r2, msg, sizeof msg), OG_ERR_PARSE);
    assert_non_null(strstr(msg, "duplicate object key"));
    assert_int_equal(d.n, n0);
    assert_int_equal(r2, 12345); /* *root untouched */
    /* the earlier tokens survived the reallocation */
    assert_int_equal(d.tok[0].kind, OG_J_OBJECT);
    assert_int_equal(d.tok[0].span, 7);
    const og_jtok *name = og_jobj_get(&d.tok[0], "name");
    assert_non_null(name);
    assert_string_equal(name->v.s, "ann");
    assert_int_equal(og_jobj_get(&d.tok[0], "n")->len, 2);
    assert_true(d.cap >= 5000);

    /* failures of every stage, with msg NULL or too short to hold it all */
    char t1[] = "[1,2,";
    assert_int_equal(og_json_parse(&d, t1, strlen(t1), &r2, NULL, 0), OG_ERR_PARSE);
    assert_int_equal(d.n, n0);
    char t2[] = "[\"\\uD800\"]";
    char tiny[5];
    assert_int_equal(og_json_parse(&d, t2, strlen(t2), &r2, tiny, sizeof tiny), OG_ERR_PARSE);
    assert_string_equal(tiny, "colu");
    assert_int_equal(d.n, n0);
    char t3[] = "[1] 2";
    assert_int_equal(og_json_parse(&d, t3, strlen(t3), &r2, msg, sizeof msg), OG_ERR_PARSE);
    assert_int_equal(d.n, n0);
    assert_string_equal(msg, "column 5: end of input expected after the value");

    /* a success after the failures appends behind the first value */
    char second[] = "[true]";
    assert_int_equal(og_json_parse(&d, second, strlen(second), &r2, msg, sizeof msg), OG_OK);
    assert_int_equal(r2, n0);
    assert_int_equal(d.n, n0 + 2);
    assert_int_equal(msg[0], '\0'); /* cleared on success */
    assert_int_equal(d.tok[r2].kind, OG_J_ARRAY);
    assert_int_equal(d.tok[r2 + 1].kind, OG_J_TRUE);
    assert_string_equal(og_jobj_get(&d.tok[0], "name")->v.s, "ann");
    free(bad);
    og_jdoc_free(&d);
    assert_null(d.tok);
    assert_int_equal(d.n, 0);
    assert_int_equal(d.cap, 0);
}

static void doc_reuse_across_parses(void **state)
{
    (void)state;
    og_jdoc d;
    og_jdoc_init(&d);
    char msg[128];
    size_t cap_seen = 0;
    for (int round = 0; round < 200; round++) {
        og_jdoc_reset(&d);
        assert_int_equal(d.n, 0);
        char line[128];
        int len = snprintf(line, sizeof line, "{\"id\":%d,\"name\":\"p\\u00e9%d\",\"tags\":[%d,%d]}", round, round,
                           round, -round);
        size_t r = 99;
        assert_int_equal(og_json_parse(&d, line, (size_t)len, &r, msg, sizeof msg), OG_OK);
        assert_int_equal(r, 0);
        assert_int_equal(d.n, 9);
        assert_int_equal(og_jobj_get(&d.tok[0], "id")->v.i, round);
        char want[32];
        snprintf(want, sizeof want, "p\xC3\xA9%d", round);
        assert_string_equal(og_jobj_get(&d.tok[0], "name")->v.s, want);
        assert_int_equal(og_jobj_get(&d.tok[0], "tags")[2].v.i, -round);
        if (round == 0) cap_seen = d.cap;
        assert_int_equal(d.cap, cap_seen); /* reset keeps the capacity: no regrowth */
    }
    /* several values appended without a reset: each root is the previous n */
    og_jdoc_reset(&d);
    char a[] = "[1,2]", b[] = "\"s\"", c[] = "{\"k\":{}}";
    size_t ra, rb, rc;
    assert_int_equal(og_json_parse(&d, a, strlen(a), &ra, msg, sizeof msg), OG_OK);
    assert_int_equal(og_json_parse(&d, b, strlen(b), &rb, msg, sizeof msg), OG_OK);
    assert_int_equal(og_json_parse(&d, c, strlen(c), &rc, msg, sizeof msg), OG_OK);
    assert_int_equal(ra, 0);
    assert_int_equal(rb, 3);
    assert_int_equal(rc, 4);
    assert_int_equal(d.n, 7);
    assert_ptr_equal(og_jtok_next(&d.tok[ra]), &d.tok[rb]);
    assert_ptr_equal(og_jtok_next(&d.tok[rb]), &d.tok[rc]);
    assert_string_equal(d.tok[rb].v.s, "s");
    assert_int_equal(og_jobj_get(&d.tok[rc], "k")->kind, OG_J_OBJECT);
    og_jdoc_free(&d);
    og_jdoc_free(&d); /* freeing twice is harmless */
}

static void kind_names(void **state)
{
    (void)state;
    assert_string_equal(og_jkind_name(OG_J_NULL), "null");
    assert_string_equal(og_jkind_name(OG_J_FALSE), "a boolean");
    assert_string_equal(og_jkind_name(OG_J_TRUE), "a boolean");
    assert_string_equal(og_jkind_name(OG_J_INT), "an integer");
    assert_string_equal(og_jkind_name(OG_J_REAL), "a number");
    assert_string_equal(og_jkind_name(OG_J_STRING), "a string");
    assert_string_equal(og_jkind_name(OG_J_ARRAY), "an array");
    assert_string_equal(og_jkind_name(OG_J_OBJECT), "an object");
}

/* Plain ASCII runs are scanned eight bytes at a time: whatever ends a run — the closing
 * quote, an escape, a control byte, a UTF-8 sequence (valid or not), the end of the input —
 * is found at every offset from the string's start and from the end of a word, with the
 * answer (value or rejection) jansson gives. */
static void string_runs_end_where_their_first_special_byte_is(void **state)
{
    (void)state;
    static const struct {
        const char *ins; /* inserted at offset k of a run of 'a's */
        const char *dec; /* what it decodes to, NULL: rejected */
    } cases[] = {
        {"", ""}, {"\\n", "\n"}, {"\\\"", "\""}, {"\x01", NULL}, {"\x1f", NULL}, {"\xc3\xa9", "\xc3\xa9"},
        {"\xff", NULL}, {"\xc3", NULL}, {" ~\x7f", " ~\x7f"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t k = 0; k < 20; k++)
            for (size_t tail = 0; tail < 12; tail += 11) {
                char text[64], want[64];
                size_t n = 0, w = 0;
                text[n++] = '"';
                for (size_t i = 0; i < k; i++) text[n++] = 'a', want[w++] = 'a';
                n += (size_t)sprintf(text + n, "%s", cases[c].ins);
                if (cases[c].dec) w += (size_t)sprintf(want + w, "%s", cases[c].dec);
                for (size_t i = 0; i < tail; i++) text[n++] = 'b', want[w++] = 'b';
                text[n++] = '"';
                want[w] = '\0';
                parsed p;
                parse_n(&p, text, n);
                if (jansson_accepts(text, n) != (p.st == OG_OK)) fail_msg("case %zu at %zu: jansson differs (%s)", c, k, p.msg);
                if (!cases[c].dec) {
                    if (p.st != OG_ERR_PARSE) fail_msg("case %zu at %zu: accepted", c, k);
                } else {
                    if (p.st != OG_OK) fail_msg("case %zu at %zu: %s", c, k, p.msg);
                    assert_int_equal(root(&p)->len, w);
                    assert_memory_equal(root(&p)->v.s, want, w);
                }
                done(&p);
                /* cut before the closing quote: the input ends inside the string */
                parse_n(&p, text, n - 1);
                assert_int_equal(p.st, OG_ERR_PARSE);
                done(&p);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_layout_spans_and_lengths),
        cmocka_unit_test(big_objects_without_duplicates_are_found_by_key),
        cmocka_unit_test(string_escapes_decode_in_place),
        cmocka_unit_test(string_runs_end_where_their_first_special_byte_is),
        cmocka_unit_test(integer_limits),
        cmocka_unit_test(real_limits),
        cmocka_unit_test(duplicate_keys_rejected),
        cmocka_unit_test(invalid_utf8_rejected),
        cmocka_unit_test(control_characters_and_bad_escapes_rejected),
        cmocka_unit_test(nul_escape_and_lone_surrogates_rejected),
        cmocka_unit_test(structural_errors_rejected),
        cmocka_unit_test(leading_zeros_and_bad_numbers_rejected),
        cmocka_unit_test(bad_literals_rejected),
        cmocka_unit_test(depth_limit_matches_jansson),
        cmocka_unit_test(failure_leaves_the_doc_unchanged),
        cmocka_unit_test(doc_reuse_across_parses),
        cmocka_unit_test(kind_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
