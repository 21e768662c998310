/*
 * test_pipeline.c — the `omnigraph embed` record transform with the mock provider: the spec
 * file, the three modes, --type / --select, blank and non-string sources, only-changed output,
 * unchanged vectors left alone, and the @embed model check.
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

#include "embed/embed.h"

static const og_embed_target T[] = {{"Doc", "vec", "body", 4, ""}};

static og_status run(const char *input, og_embed_mode mode, const og_embed_filter *f, int only_changed, char **out,
                     og_embed_summary *s)
{
    og_embed_config c;
    og_embed_config_defaults(&c, OG_EMBED_MOCK);
    og_embedder *e;
    assert_int_equal(og_embedder_open(&e, &c), OG_OK);
    FILE *in = fmemopen((void *)input, strlen(input), "r");
    size_t len;
    FILE *o = open_memstream(out, &len);
    og_status st = og_embed_run(e, T, 1, mode, f, in, "in.jsonl", o, only_changed, s, NULL, NULL);
    fclose(o);
    fclose(in);
    og_embedder_close(e);
    return st;
}

/* The vector of line `n` (0-based) of out, or NULL. */
static json_t *line_vec(const char *out, int n, json_t **holder)
{
    const char *p = out;
    for (int i = 0; i < n && p; i++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    *holder = p ? json_loadb(p, strcspn(p, "\n"), 0, NULL) : NULL;
    return *holder ? json_object_get(json_object_get(*holder, "data"), "vec") : NULL;
}

static void assert_mock(json_t *vec, const char *text)
{
    float want[4];
    og_embed_mock_vector(text, strlen(text), 4, want);
    assert_int_equal(json_array_size(vec), 4);
    for (int i = 0; i < 4; i++) assert_true((float)json_number_value(json_array_get(vec, i)) == want[i]);
}

static const char *IN = "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"alpha\"}}\n"
                        "\n"
                        "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"beta\",\"vec\":[1,0,0,0]}}\n"
                        "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"body\":\"  \"}}\n"
                        "{\"type\":\"Doc\",\"data\":{\"slug\":\"d\"}}\n"
                        "{\"type\":\"Other\",\"data\":{\"x\":1}}\n"
                        "{\"edge\":\"E\",\"from\":\"a\",\"to\":\"b\"}\n";

static void fill_missing_embeds_only_what_lacks_a_vector(void **state)
{
    (void)state;
    char *out;
    og_embed_summary s;
    assert_int_equal(run(IN, OG_EMBED_MODE_FILL_MISSING, NULL, 0, &out, &s), OG_OK);
    assert_int_equal(s.records, 6);
    assert_int_equal(s.selected, 5); /* as the reference counts: every node record the filter passes */
    assert_int_equal(s.embedded, 1);
    assert_int_equal(s.cleaned, 0);
    json_t *h;
    assert_mock(line_vec(out, 0, &h), "alpha"); /* the text exactly as stored */
    json_decref(h);
    json_t *v = line_vec(out, 1, &h);
    assert_int_equal(json_integer_value(json_array_get(v, 0)), 1); /* kept as it was */
    json_decref(h);
    assert_null(line_vec(out, 2, &h)); /* blank source: no vector */
    json_decref(h);
    assert_non_null(strstr(out, "{\"edge\":\"E\",\"from\":\"a\",\"to\":\"b\"}\n")); /* passed through */
    free(out);
}

static void reembed_all_replaces_and_cleans_blank_sources(void **state)
{
    (void)state;
    const char *in = "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"beta\",\"vec\":[1,0,0,0]}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"body\":null,\"vec\":[0,1,0,0]}}\n";
    char *out;
    og_embed_summary s;
    assert_int_equal(run(in, OG_EMBED_MODE_REEMBED_ALL, NULL, 0, &out, &s), OG_OK);
    assert_int_equal(s.embedded, 1);
    assert_int_equal(s.cleaned, 1);
    json_t *h;
    assert_mock(line_vec(out, 0, &h), "beta");
    json_decref(h);
    assert_null(line_vec(out, 1, &h));
    json_decref(h);
    /* run again on its own output with only_changed: nothing differs, nothing is written */
    char *out2;
    assert_int_equal(run(out, OG_EMBED_MODE_REEMBED_ALL, NULL, 1, &out2, &s), OG_OK);
    assert_int_equal(s.embedded, 1);
    assert_string_equal(out2, "");
    free(out2);
    free(out);
}

static void clean_removes_selected_vectors(void **state)
{
    (void)state;
    const char *in = "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"x\",\"vec\":[1,0,0,0]}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"y\",\"vec\":[1,0,0,0]}}\n";
    const char *sel[] = {"Doc:slug=b"};
    og_embed_filter f = {NULL, 0, sel, 1};
    char *out;
    og_embed_summary s;
    assert_int_equal(run(in, OG_EMBED_MODE_CLEAN, &f, 1, &out, &s), OG_OK);
    assert_int_equal(s.selected, 1);
    assert_int_equal(s.cleaned, 1);
    assert_string_equal(out, "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"y\"}}\n");
    free(out);
}

static void filters_are_checked(void **state)
{
    (void)state;
    char *out;
    og_embed_summary s;
    const char *bad[] = {"Doc:slug"};
    og_embed_filter f = {NULL, 0, bad, 1};
    assert_int_equal(run(IN, OG_EMBED_MODE_FILL_MISSING, &f, 0, &out, &s), OG_ERR_INVALID);
    free(out);
    const char *other[] = {"Other:x=1"};
    og_embed_filter g = {NULL, 0, other, 1};
    assert_int_equal(run(IN, OG_EMBED_MODE_FILL_MISSING, &g, 0, &out, &s), OG_ERR_INVALID);
    free(out);
    const char *types[] = {"Nope"};
    og_embed_filter h = {types, 1, NULL, 0};
    assert_int_equal(run(IN, OG_EMBED_MODE_FILL_MISSING, &h, 0, &out, &s), OG_ERR_INVALID);
    free(out);
}

/* The reference's selector forms: "Type:field=value" and "field=value" (any type), trimmed,
 * numbers compared as written; the default mode with a selector re-embeds the selected
 * records ("reembed_selected") — the way to refresh one record after its source changed. */
static void selectors_and_reembed_selected(void **state)
{
    (void)state;
    const char *in = "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"n\":7,\"body\":\"alpha\",\"vec\":[1,0,0,0]}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\" b \",\"body\":\"beta\",\"vec\":[1,0,0,0]}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\"c\",\"body\":\"gamma\",\"vec\":[1,0,0,0]}}\n"
                     "{\"type\":\"Doc\",\"data\":{\"slug\":\"d\",\"vec\":[1,0,0,0]}}\n";
    const char *sel[] = {"slug = b", "Doc:n=7", "Doc:slug=d"};
    og_embed_filter f = {NULL, 0, sel, 3};
    assert_int_equal(og_embed_mode_effective(OG_EMBED_MODE_FILL_MISSING, &f), OG_EMBED_MODE_REEMBED_SELECTED);
    assert_string_equal(og_embed_mode_name(OG_EMBED_MODE_REEMBED_SELECTED), "reembed_selected");
    assert_int_equal(og_embed_mode_effective(OG_EMBED_MODE_CLEAN, &f), OG_EMBED_MODE_CLEAN);
    og_embed_filter none = {NULL, 0, NULL, 0};
    assert_int_equal(og_embed_mode_effective(OG_EMBED_MODE_FILL_MISSING, &none), OG_EMBED_MODE_FILL_MISSING);
    char *out;
    og_embed_summary s;
    assert_int_equal(run(in, OG_EMBED_MODE_FILL_MISSING, &f, 0, &out, &s), OG_OK);
    assert_int_equal(s.selected, 3);
    assert_int_equal(s.embedded, 2);
    assert_int_equal(s.cleaned, 1); /* d has no source: a replaced record without one loses its vector */
    json_t *h;
    assert_mock(line_vec(out, 0, &h), "alpha"); /* had a vector: replaced all the same */
    json_decref(h);
    assert_mock(line_vec(out, 1, &h), "beta");
    json_decref(h);
    json_t *v = line_vec(out, 2, &h); /* not selected: kept */
    assert_int_equal(json_integer_value(json_array_get(v, 0)), 1);
    json_decref(h);
    assert_null(line_vec(out, 3, &h));
    json_decref(h);
    free(out);
    /* no selector form at all, or an empty field, is refused */
    const char *bad[] = {"=x"};
    og_embed_filter g = {NULL, 0, bad, 1};
    assert_int_equal(run(in, OG_EMBED_MODE_FILL_MISSING, &g, 0, &out, &s), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "Type:field=value or field=value"));
    free(out);
}

static void bad_records_are_refused(void **state)
{
    (void)state;
    char *out;
    og_embed_summary s;
    assert_int_equal(run("{\"type\":\"Doc\",\"data\":{\"body\":7}}\n", OG_EMBED_MODE_FILL_MISSING, NULL, 0, &out, &s),
                     OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "in.jsonl:1: Doc.body"));
    free(out);
    assert_int_equal(run("{\"type\":\"Doc\"}\n{nope\n", OG_EMBED_MODE_FILL_MISSING, NULL, 0, &out, &s), OG_ERR_PARSE);
    assert_non_null(strstr(og_error_message(), "in.jsonl:2:"));
    free(out);
}

static void spec_files(void **state)
{
    (void)state;
    og_embed_target *t;
    size_t n;
    const char *ok = "{\"dimension\":8,\"types\":{\"Document\":{\"target\":\"embedding\",\"fields\":[\"body\"]}}}";
    assert_int_equal(og_embed_spec_parse(&t, &n, ok, strlen(ok)), OG_OK);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].type, "Document");
    assert_string_equal(t[0].target, "embedding");
    assert_string_equal(t[0].source, "body");
    assert_int_equal(t[0].dim, 8);
    free(t);
    const char *two = "{\"dimension\":8,\"types\":{\"D\":{\"target\":\"e\",\"fields\":[\"a\",\"b\"]}}}";
    assert_int_equal(og_embed_spec_parse(&t, &n, two, strlen(two)), OG_ERR_INVALID);
    assert_non_null(strstr(og_error_message(), "exactly one source field"));
    const char *none = "{\"dimension\":8,\"types\":{\"D\":{\"target\":\"e\",\"fields\":[]}}}";
    assert_int_equal(og_embed_spec_parse(&t, &n, none, strlen(none)), OG_ERR_INVALID);
    const char *nodim = "{\"types\":{\"D\":{\"target\":\"e\",\"fields\":[\"a\"]}}}";
    assert_int_equal(og_embed_spec_parse(&t, &n, nodim, strlen(nodim)), OG_ERR_INVALID);
    assert_int_equal(og_embed_spec_parse(&t, &n, "{", 1), OG_ERR_INVALID);
}

static void recorded_model_must_match(void **state)
{
    (void)state;
    og_embed_config c;
    og_embed_config_defaults(&c, OG_EMBED_OPENAI);
    og_embed_target t = {"Doc", "vec", "body", 4, "text-embedding-3-large"};
    assert_int_equal(og_embed_check_model(&t, &c), OG_OK);
    snprintf(t.model, sizeof t.model, "nomic-embed-text");
    assert_int_equal(og_embed_check_model(&t, &c), OG_ERR_TYPE);
    assert_non_null(strstr(og_error_message(), "nomic-embed-text"));
    t.model[0] = 0;
    assert_int_equal(og_embed_check_model(&t, &c), OG_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_missing_embeds_only_what_lacks_a_vector),
        cmocka_unit_test(reembed_all_replaces_and_cleans_blank_sources),
        cmocka_unit_test(clean_removes_selected_vectors),
        cmocka_unit_test(filters_are_checked),
        cmocka_unit_test(selectors_and_reembed_selected),
        cmocka_unit_test(bad_records_are_refused),
        cmocka_unit_test(spec_files),
        cmocka_unit_test(recorded_model_must_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
