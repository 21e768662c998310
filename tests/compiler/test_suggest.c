/*
 * test_suggest.c — the "did you mean" rule (compiler/suggest.h): which names count as a typo
 * of which, and that a far name gets no guess; the messages that carry it are pinned by
 * tests/logic/errors/did_you_mean.gqt and did_you_mean_names.gqt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "compiler/schema.h"
#include "compiler/suggest.h"

static void distance_counts_edits_swaps_and_ignores_case(void **state)
{
    (void)state;
    assert_int_equal(og_typo_distance("Persn", "Person"), 1);
    assert_int_equal(og_typo_distance("nmae", "name"), 1); /* a swap of neighbours */
    assert_int_equal(og_typo_distance("person", "Person"), 0);
    assert_int_equal(og_typo_distance("kitten", "sitting"), 3);
    assert_int_equal(og_typo_distance("", "abc"), 3);
}

static void nearest_is_a_typo_or_nothing(void **state)
{
    (void)state;
    const char *c[] = {"Person", "Company", "Knows"};
    assert_string_equal(og_typo_nearest("Persn", c, 3), "Person");
    assert_string_equal(og_typo_nearest("Compnay", c, 3), "Company");
    assert_string_equal(og_typo_nearest("knows", c, 3), "Knows");
    assert_null(og_typo_nearest("Person", c, 3));  /* an exact name is no suggestion */
    assert_null(og_typo_nearest("Xyzzy", c, 3));   /* far from all */
    assert_null(og_typo_nearest("Kn", c, 3));      /* 3 edits */
    const char *p[] = {"id", "age"};
    assert_null(og_typo_nearest("x", p, 2));       /* one letter is no typo of `id` */
    assert_null(og_typo_nearest("ag", p, 2));      /* 1 edit of 2 letters: too short to tell */
    assert_string_equal(og_typo_nearest("agee", p, 2), "age");
}

static void catalog_helpers_name_types_edges_and_props(void **state)
{
    (void)state;
    const char *src = "node Person {\n name: String @key\n age: I32?\n}\nnode Company {\n name: String @key\n}\n"
                      "edge WorksAt: Person -> Company\n";
    og_catalog *cat = NULL;
    og_diags d = OG_DIAGS_INIT;
    assert_int_equal(og_schema_compile(&cat, "s.pg", src, strlen(src), &d), OG_OK);
    og_diags_free(&d);
    assert_string_equal(og_suggest_node(cat, "Compay"), "Company");
    assert_null(og_suggest_node(cat, "WorkAt")); /* an edge is not a node suggestion */
    assert_string_equal(og_suggest_edge(cat, "WorkAt"), "WorksAt");
    assert_string_equal(og_suggest_prop(og_catalog_node(cat, "Person"), "nmae"), "name");
    assert_null(og_suggest_prop(og_catalog_node(cat, "Company"), "age"));
    char buf[96];
    assert_string_equal(og_suggest_hint("Person", buf, sizeof buf), "; did you mean `Person`?");
    assert_string_equal(og_suggest_hint(NULL, buf, sizeof buf), "");
    og_catalog_free(cat);
}

static void names_and_edge_words(void **state)
{
    (void)state;
    const char *names[] = {"m", "n", "name", NULL, "m"}, *out[3];
    assert_int_equal(og_suggest_names("mn", names, 5, out, 3), 2); /* short: every name one edit away */
    assert_string_equal(out[0], "m");
    assert_string_equal(out[1], "n"); /* the repeated `m` is listed once */
    assert_int_equal(og_suggest_names("nme", names, 5, out, 3), 1); /* the typo rule's one first */
    assert_string_equal(out[0], "name");
    assert_int_equal(og_suggest_names("zzzz", names, 5, out, 3), 0);
    assert_int_equal(og_suggest_names("mn", names, 5, out, 1), 1); /* at most max */
    char buf[128];
    assert_string_equal(og_suggest_var_hint(out, 0, buf, sizeof buf), "");
    const char *two[] = {"m", "n"}, *three[] = {"a", "b", "c"};
    assert_string_equal(og_suggest_var_hint(two, 2, buf, sizeof buf), "; did you mean `$m` or `$n`?");
    assert_string_equal(og_suggest_var_hint(three, 3, buf, sizeof buf), "; did you mean `$a`, `$b` or `$c`?");
    assert_string_equal(og_suggest_edge_word("WorksAt", buf, sizeof buf), "worksAt");
    assert_string_equal(og_suggest_edge_word("OWNS", buf, sizeof buf), "owns");
    assert_string_equal(og_suggest_edge_word("knows", buf, sizeof buf), "knows");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(distance_counts_edits_swaps_and_ignores_case),
        cmocka_unit_test(nearest_is_a_typo_or_nothing),
        cmocka_unit_test(catalog_helpers_name_types_edges_and_props),
        cmocka_unit_test(names_and_edge_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
