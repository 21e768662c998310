/*
 * test_server_body.c — the query lanes' body parsed flat (src/server/body.c) answers exactly
 * as the jansson lane: a value printed back from the tokens reads back (jansson) equal to
 * the original for every kind of value; and against a running server, /query finds a row
 * whose key is full of escapes however the request spells it, and every body jsontok refuses
 * or reads differently from jansson (a raw NUL after a literal, a duplicate key, not an
 * object, not JSON, an integer past 2^64-1) gets jansson's 400, as before; an integer in
 * (2^63-1, 2^64-1], which jansson alone refuses, is accepted on every lane.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server_client.h"
#include "server/server_int.h"

static void tokens_print_back_equal(void **state)
{
    (void)state;
    const char *docs[] = {
        "{}",
        "[]",
        "{\"n\":\"p-4242\"}",
        "{\"s\":\"q\\\"uote back\\\\slash \\/ \\b\\f\\n\\r\\t \\u0001\\u001f \\u00e9 \\ud83d\\ude00 Zoë\"}",
        "{\"i\":0,\"min\":-9223372036854775808,\"max\":9223372036854775807,\"neg\":-1}",
        "{\"r\":0.1,\"tiny\":1e-300,\"big\":1.5e300,\"negz\":-0.0,\"whole\":5.0,\"e\":2.5E+3,\"x\":123456789012345678.0}",
        "{\"t\":true,\"f\":false,\"z\":null}",
        "{\"nest\":{\"a\":[1,[2,[3,{}]],{\"b\":{\"c\":[]}}],\"\":\"empty key\"},\"arr\":[null,true,\"x\",1.25]}",
        "{\"k\\u0000ok\":1}", /* refused by both: \u0000 */
        "  {\"spaced\" :\t[ 1 , 2 ]\n}  ",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        json_error_t e;
        json_t *want = json_loads(docs[i], JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
        char *buf = strdup(docs[i]);
        og_jdoc d = OG_JDOC_INIT;
        size_t root;
        og_status st = og_json_parse(&d, buf, strlen(buf), &root, NULL, 0);
        if (!want) {
            assert_int_not_equal(st, OG_OK);
        } else {
            assert_int_equal(st, OG_OK);
            og_buf b = OG_BUF_INIT;
            assert_int_equal(og_jtok_text(&d.tok[root], &b), OG_OK);
            assert_int_equal(og_buf_append_byte(&b, 0), OG_OK);
            json_t *got = json_loads((const char *)b.data, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
            if (!got || !json_equal(got, want)) fprintf(stderr, "doc %zu printed back as %s\n", i, (char *)b.data);
            assert_non_null(got);
            assert_true(json_equal(got, want));
            /* reals keep their kind and value exactly (json_equal compares them exactly) */
            json_decref(got);
            og_buf_free(&b);
        }
        json_decref(want);
        og_jdoc_free(&d);
        free(buf);
    }
}

static char dir[64];
static srv S;

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-srvbody-XXXXXX");
    if (!mkdtemp(dir) || make_graph(dir, "g")) return -1;
    char graph[128], log[128];
    snprintf(graph, sizeof graph, "g1=%s/g", dir);
    snprintf(log, sizeof log, "%s/server.log", dir);
    const char *args[] = {"--graph", graph, "--bind", "127.0.0.1:0", "--unauthenticated", NULL};
    curl_global_init(CURL_GLOBAL_ALL);
    return srv_start(&S, log, args);
}

static int teardown(void **state)
{
    (void)state;
    int rc = srv_stop(&S);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return -1;
    return rc == 0 ? 0 : -1;
}

#define LOOKUP_Q "\"query\":\"query q($n: String) { match { $p: Person { name: $n } } return { $p.name } }\""

static void lookup_of_escaped_key(void **state)
{
    (void)state;
    /* the key: Zoë "q" back\slash, a tab, U+0001 and an emoji */
    const char *json_name = "\"Zo\\u00eb \\\"q\\\" back\\\\slash\\t\\u0001 \\ud83d\\ude00\"";
    char body[512];
    snprintf(body, sizeof body,
             "{\"query\":\"query a($n: String) { insert Person { name: $n, age: 3 } }\",\"params\":{\"n\":%s}}",
             json_name);
    http_resp r = post_json(&S, NULL, "/graphs/g1/mutate", body);
    assert_int_equal(r.status, 200);
    http_free(&r);
    /* the same key spelled three ways: escaped, raw UTF-8, and with escaped ASCII */
    const char *spellings[] = {json_name, "\"Zoë \\\"q\\\" back\\\\slash\\t\\u0001 😀\"",
                               "\"\\u005aoë \\u0022q\\u0022 back\\u005cslash\\u0009\\u0001 \\ud83d\\ude00\""};
    for (size_t i = 0; i < 3; i++) {
        snprintf(body, sizeof body, "{" LOOKUP_Q ",\"params\":{\"n\":%s},\"unknown\":[1,{\"x\":2.5}]}", spellings[i]);
        r = post_json(&S, NULL, "/graphs/g1/query", body);
        if (r.status != 200) fprintf(stderr, "%s -> %s\n", body, r.body);
        assert_int_equal(r.status, 200);
        assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
        json_t *row = json_array_get(json_object_get(r.json, "rows"), 0);
        assert_string_equal(json_string_value(json_object_get(row, "p.name")), "Zoë \"q\" back\\slash\t\x01 😀");
        http_free(&r);
    }
    /* the lanes read optional fields the same way: null is absent, "main" is main */
    r = post_json(&S, NULL, "/graphs/g1/query",
                  "{" LOOKUP_Q ",\"params\":{\"n\":\"Ada\"},\"branch\":null,\"snapshot\":null,\"name\":\"q\"}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    http_free(&r);
    r = post_json(&S, NULL, "/graphs/g1/read",
                  "{\"query_source\":\"query q($n: String) { match { $p: Person { name: $n } } return { $p.name } }\","
                  "\"params\":{\"n\":\"Ada\"}}");
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "row_count")), 1);
    http_free(&r);
}

/* status 400 and the message contains `what` */
static void expect_400(const char *body, size_t len, const char *what)
{
    const char *h[] = {"Content-Type: application/json", NULL};
    http_resp r = http(&S, "POST", "/graphs/g1/query", h, body, len);
    if (r.status != 400 || !r.json || !strstr(jstr(r.json, "error"), what))
        fprintf(stderr, "body %.*s -> %ld %s (wanted '%s')\n", (int)len, body, r.status, r.body ? r.body : "", what);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(jstr(r.json, "error"), what));
    assert_string_equal(jstr(r.json, "code"), "bad_request");
    http_free(&r);
}

static void refusals_are_jansson_s(void **state)
{
    (void)state;
    /* an integer in (2^63-1, 2^64-1] (a U64) is kept (docs/server.md); past that, jansson's 400 */
    const char *big = "{" LOOKUP_Q ",\"params\":{\"n\":\"Ada\"},\"x\":18446744073709551615}";
    http_resp ok = post_json(&S, NULL, "/graphs/g1/query", big);
    assert_int_equal(ok.status, 200);
    http_free(&ok);
    const char *bigger = "{" LOOKUP_Q ",\"params\":{\"n\":\"Ada\"},\"x\":18446744073709551616}";
    expect_400(bigger, strlen(bigger), "too big integer");
    const char *dup = "{" LOOKUP_Q ",\"params\":{\"n\":\"Ada\",\"n\":\"Bob\"}}";
    expect_400(dup, strlen(dup), "duplicate object key");
    const char *arr = "[" LOOKUP_Q "]";
    expect_400(arr, strlen(arr), "not valid JSON");
    const char *scalar = "\"just a string\"";
    expect_400(scalar, strlen(scalar), "not valid JSON");
    const char *cut = "{" LOOKUP_Q ",\"params\":{\"n\":";
    expect_400(cut, strlen(cut), "not valid JSON");
    const char *params = "{" LOOKUP_Q ",\"params\":[\"Ada\"]}";
    expect_400(params, strlen(params), "field 'params' must be a JSON object");
    const char *query = "{\"query\":7}";
    expect_400(query, strlen(query), "field 'query' must be a string");
    const char *nul = "{\"query\":\"x\\u0000\"}";
    expect_400(nul, strlen(nul), "not valid JSON");
    /* a raw NUL right after a literal: jsontok refuses it, so the answer is whatever jansson
     * makes of it (json_loadb skips it in 2.14), exactly as before the flat lane */
    const char raw[] = "{" LOOKUP_Q ",\"params\":{\"n\":\"Ada\"},\"x\":true\0}";
    json_t *j = json_loadb(raw, sizeof raw - 1, JSON_REJECT_DUPLICATES, NULL);
    if (j) {
        const char *h[] = {"Content-Type: application/json", NULL};
        http_resp rr = http(&S, "POST", "/graphs/g1/query", h, raw, sizeof raw - 1);
        assert_int_equal(rr.status, 200);
        http_free(&rr);
        json_decref(j);
    } else {
        expect_400(raw, sizeof raw - 1, "not valid JSON");
    }
    /* and the server still answers */
    http_resp r = post_json(&S, NULL, "/graphs/g1/query", "{" LOOKUP_Q ",\"params\":{\"n\":\"Ada\"}}");
    assert_int_equal(r.status, 200);
    http_free(&r);
}

int main(void)
{
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(tokens_print_back_equal),
    };
    const struct CMUnitTest live[] = {
        cmocka_unit_test(lookup_of_escaped_key),
        cmocka_unit_test(refusals_are_jansson_s),
    };
    int rc = cmocka_run_group_tests(unit, NULL, NULL);
    return rc | cmocka_run_group_tests(live, setup, teardown);
}
