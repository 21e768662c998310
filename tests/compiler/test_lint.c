/*
 * test_lint.c — `omnigraph lint`'s compiler half (lint.h): the example graph's queries and
 * mutations (examples/library) and, when ../shared/data is present, every one of the 73
 * cookbook queries lint clean against their schemas; reports
 * carry params, result shapes and read/write sets; parse errors become Q000, type errors are
 * per query; L201 and hardcoded-mutation warnings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <cmocka.h>

#include "util/buf.h"
#include "compiler/lint.h"
#include "compiler/schema.h"
#include "../og_test_data.h"

static char *slurp(const char *path, size_t *len)
{
    og_buf b = OG_BUF_INIT;
    if (og_buf_read_file(&b, path) != OG_OK) return NULL;
    if (len) *len = b.len;
    return (char *)og_buf_take(&b).data;
}

static og_catalog *compile_schema(const char *text)
{
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    og_status st = og_schema_compile(&cat, "schema.pg", text, strlen(text), &d);
    if (st != OG_OK)
        for (size_t i = 0; i < d.len; i++) fprintf(stderr, "schema: %s\n", d.v[i].message);
    og_diags_free(&d);
    assert_int_equal(st, OG_OK);
    return cat;
}

#define COOKBOOK OG_SHARED_DIR "/data/cookbook-industry-intel"

static int have_cookbook;

/* Every query of examples/library lints clean against its schema, with no warnings. */
static void example_queries_all_lint_clean(void **state)
{
    (void)state;
    char *schema = slurp(OG_SOURCE_DIR "/examples/library/schema.pg", NULL);
    assert_non_null(schema);
    og_catalog *cat = compile_schema(schema);
    static const char *files[] = {"queries.gq", "mutations.gq"};
    size_t total = 0;
    for (size_t f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/examples/library/%s", OG_SOURCE_DIR, files[f]);
        size_t len = 0;
        char *text = slurp(path, &len);
        assert_non_null(text);
        og_lint_report r;
        assert_int_equal(og_lint_run(&r, cat, path, text, len), OG_OK);
        for (size_t i = 0; i < r.nqueries; i++)
            if (!r.queries[i].ok) fprintf(stderr, "%s: %s\n", r.queries[i].name, r.queries[i].error);
        assert_true(r.ok);
        total += r.queries_processed;
        og_lint_report_free(&r);
        free(text);
    }
    assert_true(total >= 20);
    og_catalog_free(cat);
    free(schema);
}

static void cookbook_queries_all_lint_clean(void **state)
{
    (void)state;
    if (!have_cookbook) return; /* main printed the SKIP line */
    char *schema = slurp(COOKBOOK "/schema.pg", NULL);
    assert_non_null(schema);
    og_catalog *cat = compile_schema(schema);
    DIR *dir = opendir(COOKBOOK "/queries");
    assert_non_null(dir);
    struct dirent *de;
    size_t total = 0, files = 0;
    while ((de = readdir(dir))) {
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 3, ".gq") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/queries/%s", COOKBOOK, de->d_name);
        size_t len = 0;
        char *text = slurp(path, &len);
        assert_non_null(text);
        og_lint_report r;
        assert_int_equal(og_lint_run(&r, cat, path, text, len), OG_OK);
        og_buf out = OG_BUF_INIT;
        assert_int_equal(og_lint_render_text(&out, &r), OG_OK);
        if (!r.ok) fprintf(stderr, "%s\n%s", path, og_buf_cstr(&out));
        for (size_t i = 0; i < r.nqueries; i++)
            if (!r.queries[i].ok) fprintf(stderr, "%s: %s\n", r.queries[i].name, r.queries[i].error);
        assert_true(r.ok);
        total += r.queries_processed;
        files++;
        og_buf_free(&out);
        og_lint_report_free(&r);
        free(text);
    }
    closedir(dir);
    assert_int_equal(files, 8);
    assert_int_equal(total, 73);
    og_catalog_free(cat);
    free(schema);
}


static const char *SCHEMA =
    "node Person { name: String @key  age: I32?  nick: String?  tags: [String]?  seen: DateTime? }\n"
    "node Doc { slug: String @key  body: String  embedding: Vector(4)  vec: Vector(4)? @embed(body) }\n"
    "edge Knows: Person -> Person\n"
    "edge Wrote: Person -> Doc\n";

static og_lint_report lint(og_catalog *cat, const char *gq)
{
    og_lint_report r;
    assert_int_equal(og_lint_run(&r, cat, "t.gq", gq, strlen(gq)), OG_OK);
    return r;
}

static void report_has_params_columns_and_access_sets(void **state)
{
    (void)state;
    og_catalog *cat = compile_schema(SCHEMA);
    og_lint_report r = lint(cat,
        "query q($n: String, $v: Vector(4)?, $t: [I32]) { match { $p: Person { name: $n }  $p wrote $d }\n"
        "  return { $p, $p.age, $p.tags, $d.embedding, count($d) as c, max($p.nick) as s } }\n"
        "query m($n: String) { delete Person where name = $n }\n");
    assert_true(r.ok);
    assert_int_equal(r.queries_processed, 2);
    assert_int_equal(r.nqueries, 2);
    const og_lint_query *q = &r.queries[0];
    assert_true(q->ok);
    assert_false(q->is_mutation);
    assert_int_equal(q->ir->nparams, 3);
    assert_string_equal(q->ir->params[1].name, "v");
    assert_true(q->ir->params[1].type.nullable);
    assert_int_equal(q->ncolumns, 6);
    assert_string_equal(q->columns[0].name, "p");
    assert_string_equal(q->columns[0].kind, "object"); /* `return { $p }`: the node object */
    assert_false(q->columns[0].nullable);
    assert_string_equal(q->columns[1].name, "p.age");
    assert_string_equal(q->columns[1].kind, "int");
    assert_true(q->columns[1].nullable);
    assert_string_equal(q->columns[2].kind, "list");
    assert_string_equal(q->columns[2].item_kind, "string");
    assert_string_equal(q->columns[3].kind, "vector");
    assert_int_equal(q->columns[3].vector_dim, 4);
    assert_string_equal(q->columns[4].kind, "bigint");
    assert_string_equal(q->columns[5].kind, "string");
    assert_int_equal(q->ir->nreads, 3);
    assert_string_equal(q->ir->reads[0].name, "Doc");
    assert_string_equal(q->ir->reads[1].name, "Person");
    assert_true(q->ir->reads[2].is_edge);
    assert_int_equal(q->ir->nwrites, 0);
    const og_lint_query *m = &r.queries[1];
    assert_true(m->is_mutation);
    assert_int_equal(m->ir->nwrites, 3); /* Person + incident Knows, Wrote */
    og_buf b = OG_BUF_INIT;
    assert_int_equal(og_lint_render_text(&b, &r), OG_OK);
    const char *t = og_buf_cstr(&b);
    assert_non_null(strstr(t, "OK    query `q` (read)\n      params: $n: String, $v: Vector(4)?, $t: [I32]\n"));
    assert_non_null(strstr(t, "      result: p: object, p.age: int?, p.tags: list<string>?, d.embedding: vector(4), c: bigint?, s: string?\n"));
    assert_non_null(strstr(t, "      reads: node Doc, node Person, edge Wrote\n      writes: -\n"));
    assert_non_null(strstr(t, "OK    query `m` (mutation)\n"));
    assert_non_null(strstr(t, "      writes: node Person, edge Knows, edge Wrote\n"));
    assert_non_null(strstr(t, "INFO  Lint complete: 2 queries processed (0 error(s), 0 warning(s), 0 info item(s))\n"));
    og_buf_free(&b);
    og_lint_report_free(&r);
    og_catalog_free(cat);
}

static void type_errors_are_per_query(void **state)
{
    (void)state;
    og_catalog *cat = compile_schema(SCHEMA);
    og_lint_report r = lint(cat,
        "query good() { match { $p: Person } return { $p.name } }\n"
        "query bad() { match { $c: Person  $c knowz $f } return { $c.name } }\n");
    assert_false(r.ok);
    assert_int_equal(r.errors, 1);
    assert_true(r.queries[0].ok);
    assert_false(r.queries[1].ok);
    assert_string_equal(r.queries[1].code, "T4");
    assert_non_null(strstr(r.queries[1].error, "type error: T4: unknown edge type `knowz`"));
    assert_int_equal(r.queries[1].diag.line, 2);
    og_buf b = OG_BUF_INIT;
    og_lint_render_text(&b, &r);
    assert_non_null(strstr(og_buf_cstr(&b), "ERROR query `bad`: type error: T4: unknown edge type `knowz`; did you mean `knows`? (at 2:38)\n"));
    og_buf_free(&b);
    og_lint_report_free(&r);
    og_catalog_free(cat);
}

static void parse_error_is_q000(void **state)
{
    (void)state;
    og_catalog *cat = compile_schema(SCHEMA);
    og_lint_report r = lint(cat, "query good() { match { $p: Person } return { $p.name } }\nquery bad( {");
    assert_false(r.ok);
    assert_int_equal(r.queries_processed, 0);
    assert_int_equal(r.nfindings, 1);
    assert_string_equal(r.findings[0].code, "Q000");
    assert_false(r.findings[0].warning);
    assert_non_null(strstr(r.findings[0].message, "parse error: expected"));
    assert_int_equal(r.findings[0].diag.line, 2);
    og_lint_report_free(&r);
    og_catalog_free(cat);
}

static void l201_and_hardcoded_mutation_warnings(void **state)
{
    (void)state;
    og_catalog *cat = compile_schema(SCHEMA);
    og_lint_report r = lint(cat,
        "query set_age($n: String, $a: I32) { update Person set { age: $a } where name = $n }\n"
        "query fixed() { insert Person { name: \"x\" } }\n"
        "query set_body($s: String, $b: String) { update Doc set { body: $b } where slug = $s }\n");
    assert_true(r.ok);
    assert_int_equal(r.queries[1].nwarnings, 1);
    assert_non_null(strstr(r.queries[1].warnings[0], "hardcoded mutations"));
    /* Person: nick, seen, tags are nullable and never updated (age is, name is the key);
     * Doc: vec is nullable but @embed-derived, so not reported. */
    assert_int_equal(r.nfindings, 3);
    assert_string_equal(r.findings[0].code, "L201");
    assert_true(r.findings[0].warning);
    assert_string_equal(r.findings[0].message, "Person.nick exists in schema but no update query sets it");
    assert_string_equal(r.findings[1].property, "seen");
    assert_string_equal(r.findings[2].property, "tags");
    assert_int_equal(r.findings[0].nquery_names, 1);
    assert_string_equal(r.findings[0].query_names[0], "set_age");
    assert_int_equal(r.warnings, 4);
    og_lint_report_free(&r);
    og_catalog_free(cat);
}

int main(void)
{
    have_cookbook = og_test_have_data("compiler_test_lint (cookbook queries)", COOKBOOK);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(example_queries_all_lint_clean),
        cmocka_unit_test(cookbook_queries_all_lint_clean),
        cmocka_unit_test(report_has_params_columns_and_access_sets),
        cmocka_unit_test(type_errors_are_per_query),
        cmocka_unit_test(parse_error_is_q000),
        cmocka_unit_test(l201_and_hardcoded_mutation_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
