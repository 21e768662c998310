/*
 * test_rows_json.c — og_rows_render's JSON, written directly into the buffer, is byte for
 * byte what the jansson tree it replaced prints (og_rows_render_json_tree), for every value
 * type: strings with quotes, backslashes, control characters, NULs and 2-, 3- and 4-byte
 * UTF-8; integers around the JS-safe bounds; floats (shortest spelling, -0.0, subnormals,
 * NaN and the infinities); dates, date-times, blobs, vectors, lists, nulls; empty results
 * and zero-column rows.  Where the tree behaves in a way of its own (a string that is not
 * UTF-8, a column name twice, an object column) the direct writer declines, and the
 * rendered document is still the tree's.  Random documents from a fixed seed, plus a golden
 * document checked literally.  And the other way round: a served result (the JSON document
 * read back with og_json_read) renders through og_read_output_render as CSV, JSONL and the
 * tables byte for byte as og_rows_render renders the rows in process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/rows.h"
#include "util/utf8.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static size_t pick(size_t n) { return (size_t)(next() % n); }

/* string pieces: valid UTF-8 (with every escape jansson knows), then invalid sequences */
static const char *const PIECES[] = {"", "plain", "q\"uote", "back\\slash", "/sl/ash", "\x01", "\x1f", "\n", "\t",
                                     "\b", "\f", "\r", "\x7f", "caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac",
                                     "\xf0\x9f\x98\x80", "\xe2\x80\xa8", " sp ", "{\"json\":1}", "\xc2\x80"};
static const char *const BAD[] = {"\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe6\x97"};

static size_t gen_text(char *out, size_t cap, int allow_bad, int *bad)
{
    size_t n = 0, parts = pick(5);
    for (size_t k = 0; k < parts; k++) {
        const char *p = PIECES[pick(sizeof PIECES / sizeof *PIECES)];
        if (allow_bad && pick(40) == 0) {
            p = BAD[pick(sizeof BAD / sizeof *BAD)];
            *bad = 1;
        }
        size_t l = strlen(p);
        if (pick(30) == 0 && n + 1 < cap) out[n++] = '\0'; /* an embedded NUL */
        if (n + l < cap) memcpy(out + n, p, l), n += l;
    }
    return n;
}

static const int64_t INTS[] = {0, 1, -1, 9007199254740991LL, -9007199254740991LL, 9007199254740992LL,
                               -9007199254740992LL, INT64_MAX, INT64_MIN, 42, -2147483648LL, 2147483647LL};
static const uint64_t UINTS[] = {0, 1, 9007199254740991ULL, 9007199254740992ULL, UINT64_MAX, 4294967295ULL};

static double gen_double(void)
{
    static const double D[] = {0.0, -0.0, 0.1, 1.0, -2.5, 1e300, -1e-300, 5e-324, 1e21, 1e-7, 123456789012345678.0,
                               1e16, 1e15, 0.000123, 3.141592653589793};
    switch (pick(6)) {
    case 0: return NAN;
    case 1: return pick(2) ? INFINITY : -INFINITY;
    case 2: {
        uint64_t bits = next();
        double d;
        memcpy(&d, &bits, sizeof d);
        return isfinite(d) ? d : 1.5;
    }
    default: return D[pick(sizeof D / sizeof *D)];
    }
}

static void append_scalar(og_vector *v, og_type_id t, int allow_bad, int *bad)
{
    char buf[128];
    switch (t) {
    case OG_T_BOOL: og_vector_append_bool(v, (int)pick(2)); break;
    case OG_T_I32: og_vector_append_i64(v, (int64_t)(int32_t)next()); break;
    case OG_T_I64: og_vector_append_i64(v, pick(2) ? INTS[pick(sizeof INTS / sizeof *INTS)] : (int64_t)next()); break;
    case OG_T_U32: og_vector_append_u64(v, (uint32_t)next()); break;
    case OG_T_U64: og_vector_append_u64(v, pick(2) ? UINTS[pick(sizeof UINTS / sizeof *UINTS)] : next()); break;
    case OG_T_F32: {
        double d = gen_double();
        if (isfinite(d) && fabs(d) > 3.4e38) d = 1.25;
        og_vector_append_f64(v, (double)(float)d);
        break;
    }
    case OG_T_F64: og_vector_append_f64(v, gen_double()); break;
    case OG_T_DATE32: og_vector_append_i64(v, (int64_t)(pick(200000)) - 100000); break;
    case OG_T_DATE64: og_vector_append_i64(v, (int64_t)(next() % 8000000000000ULL) - 4000000000000LL); break;
    case OG_T_STRING: case OG_T_BLOB: og_vector_append_bytes(v, buf, gen_text(buf, sizeof buf, allow_bad, bad)); break;
    default: break;
    }
}

static const og_type_id SCALARS[] = {OG_T_BOOL, OG_T_I32, OG_T_I64, OG_T_U32, OG_T_U64, OG_T_F32,
                                     OG_T_F64, OG_T_DATE32, OG_T_DATE64, OG_T_STRING, OG_T_BLOB};
#define NSCALARS (sizeof SCALARS / sizeof *SCALARS)

/* A random result: `ncols` columns of random types, `nrows` rows, nulls here and there. */
static og_rows *gen_rows(size_t ncols, size_t nrows, int allow_bad, int *bad)
{
    og_rows *r = calloc(1, sizeof *r);
    og_result *res = &r->res;
    res->ncols = ncols;
    res->nrows = nrows;
    res->names = calloc(ncols + 1, sizeof *res->names);
    res->types = calloc(ncols + 1, sizeof *res->types);
    res->cols = calloc(ncols + 1, sizeof *res->cols);
    char name[64];
    int qbad = 0;
    size_t qn = gen_text(name, sizeof name - 1, allow_bad, &qbad);
    name[qn] = 0;
    res->query = strdup(strlen(name) ? name : "q"); /* a name with an embedded NUL ends there */
    if (qbad && !og_utf8_valid((const uint8_t *)res->query, strlen(res->query))) *bad = 1;
    for (size_t c = 0; c < ncols; c++) {
        int nb = 0;
        size_t n = gen_text(name, sizeof name - 8, allow_bad, &nb);
        name[n] = 0;
        snprintf(name + strlen(name), 8, "%zu", c); /* distinct unless made equal below */
        if (allow_bad && c && pick(20) == 0) {
            snprintf(name, sizeof name, "%s", res->names[c - 1]); /* a name twice */
            *bad = 1;
        }
        if (!og_utf8_valid((const uint8_t *)name, strlen(name))) *bad = 1;
        res->names[c] = strdup(name);
        og_type t = {SCALARS[pick(NSCALARS)], OG_T_NULL, 0};
        size_t kind = pick(8);
        if (kind == 0) t = (og_type){OG_T_VECTOR, OG_T_NULL, (uint32_t)(1 + pick(4))};
        if (kind == 1) t = (og_type){OG_T_LIST, SCALARS[pick(NSCALARS)], 0};
        res->types[c] = (og_qtype){t, 1, 0, -1, 0};
        assert_int_equal(og_vector_init(&res->cols[c], t), OG_OK);
        og_vector *v = &res->cols[c];
        for (size_t i = 0; i < nrows; i++) {
            if (pick(6) == 0) {
                og_vector_append_null(v);
            } else if (t.id == OG_T_VECTOR) {
                float f[8];
                for (uint32_t k = 0; k < t.dim; k++) f[k] = (float)(pick(3) ? gen_double() : 0.1);
                for (uint32_t k = 0; k < t.dim; k++)
                    if (!isfinite(f[k])) f[k] = 2.5f;
                og_vector_append_floats(v, f, t.dim);
            } else if (t.id == OG_T_LIST) {
                size_t items = pick(4);
                for (size_t k = 0; k < items; k++) append_scalar(v->child, t.elem, allow_bad, bad);
                og_vector_append_list_end(v);
            } else {
                append_scalar(v, t.id, allow_bad, bad);
            }
        }
        assert_int_equal(v->len, nrows);
    }
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    snprintf(r->commit, sizeof r->commit, "%s", pick(2) ? "01JABCDEFGHJKMNPQRSTVWXYZ0" : "");
    return r;
}

static char *render(const og_rows *r, const char *target)
{
    char *text;
    size_t len;
    assert_int_equal(og_rows_render(&text, &len, r, OG_FORMAT_JSON, target), OG_OK);
    assert_int_equal(strlen(text), len);
    return text;
}

static void expect_same(const og_rows *r, const char *target, int direct_expected, int round)
{
    og_buf tree = OG_BUF_INIT, direct = OG_BUF_INIT;
    assert_int_equal(og_rows_render_json_tree(&tree, r, target), OG_OK);
    int declined = og_rows_render_json_direct(&direct, r, target);
    char *text = render(r, target);
    const char *want = og_buf_cstr(&tree);
    if (strcmp(text, want)) fail_msg("round %d: og_rows_render differs from the tree:\n%s\n---\n%s", round, text, want);
    if (direct_expected && declined) fail_msg("round %d: the direct writer declined a document it should write", round);
    if (!declined && strcmp(og_buf_cstr(&direct), want))
        fail_msg("round %d: direct:\n%s\n--- tree:\n%s", round, og_buf_cstr(&direct), want);
    og_free(text);
    og_buf_free(&tree);
    og_buf_free(&direct);
}

static void test_random_documents_match_the_tree(void **state)
{
    (void)state;
    const char *targets[] = {"main", NULL, "feature/x\"y", "caf\xc3\xa9"};
    int declined_cases = 0;
    for (int round = 0; round < 3000; round++) {
        int allow_bad = round % 3 == 0, bad = 0;
        og_rows *r = gen_rows(pick(7), pick(6), allow_bad, &bad);
        const char *target = targets[pick(4)];
        expect_same(r, target, !bad, round);
        og_buf scratch = OG_BUF_INIT;
        declined_cases += og_rows_render_json_direct(&scratch, r, target) != 0;
        og_buf_free(&scratch);
        og_rows_free(r);
    }
    assert_true(declined_cases > 0); /* the fallback was exercised too */
    /* a target that is not UTF-8: the tree drops the member, the direct writer declines */
    int bad = 0;
    og_rows *r = gen_rows(2, 2, 0, &bad);
    expect_same(r, "\xff", 0, -1);
    og_rows_free(r);
}

/* What a remote client prints (og_read_output_render of the served JSON) is what the embedded
 * CLI prints (og_rows_render of the rows), in every text format. */
static int expect_served_same(const og_rows *r, int round)
{
    for (size_t c = 0; c < r->res.ncols; c++) /* a query cannot return a Blob (T24) */
        if (r->res.cols[c].type.id == OG_T_BLOB || r->res.cols[c].type.elem == OG_T_BLOB) return 0;
    char *doc = render(r, "main");
    json_t *j = og_json_read(doc, strlen(doc));
    if (!j && strstr(doc, "\\u0000")) { /* og_json_read refuses a NUL in a string */
        og_free(doc);
        return 0;
    }
    if (!j) fail_msg("round %d: the served document does not read back:\n%s", round, doc);
    const og_format fmts[] = {OG_FORMAT_CSV, OG_FORMAT_TABLE, OG_FORMAT_TABLE_WIDE, OG_FORMAT_JSONL, OG_FORMAT_JSON};
    for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
        char *want, *got;
        size_t wl, gl;
        assert_int_equal(og_rows_render(&want, &wl, r, fmts[f], "main"), OG_OK);
        assert_int_equal(og_read_output_render(&got, &gl, j, fmts[f]), OG_OK);
        if (wl != gl || memcmp(want, got, wl))
            fail_msg("round %d, format %d: served:\n%s\n--- embedded:\n%s", round, (int)fmts[f], got, want);
        og_free(want);
        og_free(got);
    }
    json_decref(j);
    og_free(doc);
    return 1;
}

static void test_served_rendering_is_the_embedded(void **state)
{
    (void)state;
    int compared = 0;
    for (int round = 0; round < 1500; round++) {
        int bad = 0;
        og_rows *r = gen_rows(pick(7), pick(6), 0, &bad);
        compared += expect_served_same(r, round);
        og_rows_free(r);
    }
    assert_true(compared > 800);
    /* a cell past 60 columns is cut in the table (and said so), whole in the wide one */
    og_rows *r = gen_rows(0, 0, 0, &(int){0});
    og_result *res = &r->res;
    res->ncols = 1;
    res->nrows = 2;
    res->names = realloc(res->names, 2 * sizeof *res->names);
    res->types = realloc(res->types, 2 * sizeof *res->types);
    res->cols = realloc(res->cols, 2 * sizeof *res->cols);
    res->names[0] = strdup("long");
    res->types[0] = (og_qtype){{OG_T_STRING, OG_T_NULL, 0}, 1, 0, -1, 0};
    assert_int_equal(og_vector_init(&res->cols[0], res->types[0].t), OG_OK);
    const char *wide = "\xe6\x97\xa5\xe6\x9c\xac wide characters and a line\nbreak, repeated until well past sixty columns";
    og_vector_append_bytes(&res->cols[0], (const uint8_t *)wide, strlen(wide));
    og_vector_append_bytes(&res->cols[0], (const uint8_t *)"", 0);
    free(r->query_name); /* finished again for the one column */
    free(r->type_names);
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    char *table;
    assert_int_equal(og_rows_render(&table, NULL, r, OG_FORMAT_TABLE, "main"), OG_OK);
    assert_non_null(strstr(table, "1 cell cut at 60 columns"));
    assert_non_null(strstr(table, "\"\"")); /* the empty string, not a null */
    og_free(table);
    assert_true(expect_served_same(r, -1));
    og_rows_free(r);
    /* not a served result, or Arrow asked of text: typed errors, nothing rendered */
    json_t *notrows = json_pack("{s:[]}", "columns");
    char *out = (char *)1;
    assert_int_equal(og_read_output_render(&out, NULL, notrows, OG_FORMAT_CSV), OG_ERR_INVALID);
    assert_null(out);
    json_object_set_new(notrows, "rows", json_array());
    assert_int_equal(og_read_output_render(&out, NULL, notrows, OG_FORMAT_ARROW), OG_ERR_INVALID);
    assert_null(out);
    json_decref(notrows);
}

/* An object column (`return { $p }`) is left to the tree, which re-indents its JSON text. */
static void test_object_column_is_the_trees(void **state)
{
    (void)state;
    og_rows *r = calloc(1, sizeof *r);
    og_result *res = &r->res;
    res->ncols = 1;
    res->nrows = 2;
    res->names = calloc(1, sizeof *res->names);
    res->types = calloc(1, sizeof *res->types);
    res->cols = calloc(1, sizeof *res->cols);
    res->names[0] = strdup("p");
    res->types[0] = (og_qtype){{OG_T_STRING, OG_T_NULL, 0}, 0, 0, 0, 1};
    assert_int_equal(og_vector_init(&res->cols[0], res->types[0].t), OG_OK);
    const char *o = "{\"id\":\"a\",\"name\":\"Ada\",\"tags\":[1,2]}";
    og_vector_append_bytes(&res->cols[0], o, strlen(o));
    og_vector_append_null(&res->cols[0]);
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    og_buf b = OG_BUF_INIT;
    assert_int_not_equal(og_rows_render_json_direct(&b, r, "main"), 0);
    og_buf_free(&b);
    expect_same(r, "main", 0, -2);
    char *text = render(r, "main");
    assert_non_null(strstr(text, "      \"p\": {\n        \"id\": \"a\",\n        \"name\": \"Ada\",\n        \"tags\": [\n"));
    assert_non_null(strstr(text, "    },\n    {}\n  ],")); /* a row of null cells only: no key at all */
    og_free(text);
    og_rows_free(r);
}

/* One document spelled out, so both writers cannot be wrong together. */
static void test_golden_document(void **state)
{
    (void)state;
    og_rows *r = calloc(1, sizeof *r);
    og_result *res = &r->res;
    res->query = strdup("lookup");
    res->ncols = 4;
    res->nrows = 2;
    res->names = calloc(4, sizeof *res->names);
    res->types = calloc(4, sizeof *res->types);
    res->cols = calloc(4, sizeof *res->cols);
    const char *names[] = {"name", "big", "f", "tags"};
    og_type types[] = {{OG_T_STRING, OG_T_NULL, 0}, {OG_T_I64, OG_T_NULL, 0}, {OG_T_F64, OG_T_NULL, 0},
                       {OG_T_LIST, OG_T_DATE32, 0}};
    for (int c = 0; c < 4; c++) {
        res->names[c] = strdup(names[c]);
        res->types[c] = (og_qtype){types[c], 1, 0, -1, 0};
        assert_int_equal(og_vector_init(&res->cols[c], types[c]), OG_OK);
    }
    og_vector_append_bytes(&res->cols[0], "a\"\\\n\x01\xc3\xa9", 7);
    og_vector_append_null(&res->cols[0]);
    og_vector_append_i64(&res->cols[1], 9007199254740992LL);
    og_vector_append_i64(&res->cols[1], -3);
    og_vector_append_f64(&res->cols[2], 0.1);
    og_vector_append_f64(&res->cols[2], NAN);
    og_vector_append_i64(res->cols[3].child, 0);
    og_vector_append_i64(res->cols[3].child, 19000);
    og_vector_append_list_end(&res->cols[3]);
    og_vector_append_list_end(&res->cols[3]);
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    snprintf(r->commit, sizeof r->commit, "C1");
    char *text = render(r, "main");
    assert_string_equal(text, "{\n"
                              "  \"query_name\": \"lookup\",\n"
                              "  \"target\": \"main\",\n"
                              "  \"row_count\": 2,\n"
                              "  \"columns\": [\n    \"name\",\n    \"big\",\n    \"f\",\n    \"tags\"\n  ],\n"
                              "  \"rows\": [\n"
                              "    {\n"
                              "      \"name\": \"a\\\"\\\\\\n\\u0001\xc3\xa9\",\n"
                              "      \"big\": 9007199254740992,\n"
                              "      \"f\": 0.1,\n"
                              "      \"tags\": [\n        \"1970-01-01\",\n        \"2022-01-08\"\n      ]\n"
                              "    },\n"
                              "    {\n" /* a null cell is left out; a NaN is null */
                              "      \"big\": -3,\n"
                              "      \"f\": null,\n"
                              "      \"tags\": []\n"
                              "    }\n"
                              "  ],\n"
                              "  \"graph_commit_id\": \"C1\"\n"
                              "}\n");
    expect_same(r, "main", 1, -3);
    og_free(text);
    og_rows_free(r);
    /* no rows, no columns */
    r = calloc(1, sizeof *r);
    r->res.query = strdup("none");
    assert_int_equal(og_rows_finish(r, NULL), OG_OK);
    text = render(r, NULL);
    assert_string_equal(text, "{\n  \"query_name\": \"none\",\n  \"target\": \"main\",\n  \"row_count\": 0,\n"
                              "  \"columns\": [],\n  \"rows\": [],\n  \"graph_commit_id\": \"\"\n}\n");
    og_free(text);
    r->res.nrows = 2; /* zero-column rows */
    expect_same(r, "main", 1, -4);
    og_rows_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_documents_match_the_tree),
        cmocka_unit_test(test_object_column_is_the_trees),
        cmocka_unit_test(test_golden_document),
        cmocka_unit_test(test_served_rendering_is_the_embedded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
