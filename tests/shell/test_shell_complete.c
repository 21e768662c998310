/*
 * test_shell_complete.c — what Tab offers in `omnigraph shell` (src/shell/complete.h,
 * docs/shell.md "Completion"), over a catalog in og_db_catalog's shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shell/complete.h"

static const char *CATALOG =
    "{\"interfaces\":[],"
    "\"nodes\":[{\"name\":\"Person\",\"implements\":[],\"properties\":["
    "{\"name\":\"handle\",\"type\":\"String\",\"nullable\":false,\"key\":true},"
    "{\"name\":\"name\",\"type\":\"String\",\"nullable\":false,\"key\":false},"
    "{\"name\":\"born\",\"type\":\"Date?\",\"nullable\":true,\"key\":false}]},"
    "{\"name\":\"Project\",\"implements\":[],\"properties\":["
    "{\"name\":\"slug\",\"type\":\"String\",\"nullable\":false,\"key\":true},"
    "{\"name\":\"status\",\"type\":\"enum(active, done)\",\"nullable\":false,\"key\":false}]}],"
    "\"edges\":[{\"name\":\"WorksOn\",\"from\":\"Person\",\"to\":\"Project\",\"properties\":["
    "{\"name\":\"hours\",\"type\":\"I32?\",\"nullable\":true,\"key\":false}]},"
    "{\"name\":\"Knows\",\"from\":\"Person\",\"to\":\"Person\",\"properties\":[]}]}";

/* The candidates for the word ending at the end of `line`, joined by spaces. */
static const char *offer(og_shell_names *n, const char *stmt, const char *line)
{
    static char out[1024];
    size_t end = strlen(line), start = end;
    while (start > 0 && !strchr(" \t\n{}()[],:;=<>!+-*/\"", line[start - 1])) start--;
    og_shell_words w = {0};
    og_shell_complete(&w, n, stmt, line, start, end);
    out[0] = 0;
    for (size_t i = 0; i < w.n; i++) {
        strcat(out, i ? " " : "");
        strcat(out, w.v[i]);
    }
    og_shell_words_free(&w);
    return out;
}

static int setup(void **state)
{
    static og_shell_names n;
    memset(&n, 0, sizeof n);
    if (og_shell_names_set_catalog(&n, CATALOG) != OG_OK) return -1;
    if (og_shell_names_set_branches(&n, "{\"branches\":[{\"name\":\"main\",\"head\":\"01\"},"
                                        "{\"name\":\"dev\",\"head\":\"02\"},{\"name\":\"draft\",\"head\":\"03\"}]}") != OG_OK)
        return -1;
    og_shell_names_set_params(&n, "{\"handle\":\"ada\",\"limit\":3}");
    *state = &n;
    return 0;
}

static int teardown(void **state)
{
    og_shell_names_free(*state);
    return 0;
}

static void dot_commands_and_their_arguments(void **state)
{
    og_shell_names *n = *state;
    assert_string_equal(offer(n, NULL, ".b"), ".branch .branches");
    assert_string_equal(offer(n, NULL, ".branch d"), "dev draft");
    assert_string_equal(offer(n, NULL, ".at m"), "main");
    assert_string_equal(offer(n, NULL, ".schema P"), "Person Project");
    assert_string_equal(offer(n, NULL, ".format c"), "csv");
    assert_string_equal(offer(n, NULL, ".timer o"), "off on");
    /* inside an open statement a `.` word is not a command */
    assert_string_equal(offer(n, "query q() {", ".b"), "");
}

static void types_keywords_and_edge_words(void **state)
{
    og_shell_names *n = *state;
    assert_string_equal(offer(n, NULL, "query q() { match { $p: Pe"), "Person");
    assert_string_equal(offer(n, NULL, "query q() { match { $p: P"), "Person Project");
    assert_string_equal(offer(n, NULL, "W"), "WorksOn");
    assert_string_equal(offer(n, NULL, "ma"), "match match_text max");
    assert_string_equal(offer(n, NULL, "query q() { match { $p: Person  $p wo"), "worksOn");
    assert_string_equal(offer(n, NULL, "kn"), "knows");
}

static void properties_follow_the_variables_type(void **state)
{
    og_shell_names *n = *state;
    /* $p is bound to Person on an earlier line */
    assert_string_equal(offer(n, "query q() {\n  match { $p: Person }", "  return { $p."), "$p.born $p.handle $p.name");
    assert_string_equal(offer(n, "query q() {\n  match { $p: Person }", "  return { $p.n"), "$p.name");
    /* an edge variable: its edge's properties */
    assert_string_equal(offer(n, NULL, "match { $p $w:worksOn $j } return { $w."), "$w.hours");
    /* $j is bound to nothing: every type's properties */
    assert_string_equal(offer(n, NULL, "return { $j.s"), "$j.slug $j.status");
}

static void variables_and_parameters(void **state)
{
    og_shell_names *n = *state;
    assert_string_equal(offer(n, "query q($who: String) {\n match { $p: Person  $proj: Project }", " return { $p"),
                        "$p $proj");
    /* a word typed only here is not offered back to itself */
    assert_string_equal(offer(n, NULL, "$zz"), "");
    assert_string_equal(offer(n, NULL, "$h"), "$handle");
    assert_string_equal(offer(n, "query q($who: String) {", "$w"), "$who");
    assert_string_equal(offer(n, NULL, "$l"), "$limit");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(dot_commands_and_their_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(types_keywords_and_edge_words, setup, teardown),
        cmocka_unit_test_setup_teardown(properties_follow_the_variables_type, setup, teardown),
        cmocka_unit_test_setup_teardown(variables_and_parameters, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
