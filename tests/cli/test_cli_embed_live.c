/*
 * test_cli_embed_live.c — the recipe of docs/embeddings.md ("fully offline with a local model"),
 * command by command, against a real embedding server.  It runs only when
 * OMNIGRAPH_EMBED_BASE_URL is set (with OMNIGRAPH_EMBED_PROVIDER / _MODEL / a key as the server
 * needs, and OMNIGRAPH_EMBED_TEST_DIM = the model's dimension, default 768); otherwise it
 * prints a SKIP line and exits 77, which ctest reports as "Skipped".
 *
 * Steps: init a graph whose Vector(N) property records the model in @embed, load three
 * documents, `omnigraph embed --progress --json`, then `omnigraph query` with a text parameter:
 * the nearest document must be one of the two about a cat, not the one about revenue — what a
 * real model gives and the mock provider cannot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_run.h"

static void recipe_against_a_real_server(void **state)
{
    (void)state;
    assert_int_equal(cli_scratch_new("/tmp/og-cli-embed-live-XXXXXX"), 0);
    const char *dv = getenv("OMNIGRAPH_EMBED_TEST_DIM");
    unsigned dim = dv && *dv ? (unsigned)atoi(dv) : 768;
    const char *model = getenv("OMNIGRAPH_EMBED_MODEL");
    char schema[512], model_arg[300] = "";
    if (model && *model) snprintf(model_arg, sizeof model_arg, ", model=\"%s\"", model);
    snprintf(schema, sizeof schema,
             "node Document { slug: String @key  body: String  embedding: Vector(%u)? @embed(\"body\"%s) @index }\n", dim,
             model_arg);
    write_file("s.pg", schema);
    write_file("d.jsonl", "{\"type\":\"Document\",\"data\":{\"slug\":\"cat\",\"body\":\"a cat sat on the mat\"}}\n"
                          "{\"type\":\"Document\",\"data\":{\"slug\":\"kitten\",\"body\":\"a kitten rested on the rug\"}}\n"
                          "{\"type\":\"Document\",\"data\":{\"slug\":\"revenue\",\"body\":\"quarterly revenue grew by ten percent\"}}\n");
    static char out[1 << 16];
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/graph && %s load --quiet --mode overwrite --data %s/d.jsonl %s/graph",
                         bin, dir, dir, bin, dir, dir),
                     0);
    int rc = run(out, sizeof out, "OMNIGRAPH_HOME=%s/home %s embed --store %s/graph --progress --json 2>&1", dir, bin, dir);
    printf("%s", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\"embedded_records\": 3"));
    rc = run(out, sizeof out,
             "OMNIGRAPH_HOME=%s/home %s query --store %s/graph --format csv -e 'query q($t: String) { match { $d: Document } "
             "return { $d.slug } order { nearest($d.embedding, $t) } limit 3 }' --params '{\"t\": \"a small cat lying on a rug\"}' 2>&1",
             dir, bin, dir);
    printf("%s", out);
    assert_int_equal(rc, 0);
    assert_true(!strncmp(out, "d.slug\r\ncat\r\n", 13) || !strncmp(out, "d.slug\r\nkitten\r\n", 16));
    assert_int_equal(cli_scratch_remove(), 0);
}

int main(void)
{
    const char *base = getenv("OMNIGRAPH_EMBED_BASE_URL");
    if (!base || !*base) {
        printf("SKIP: OMNIGRAPH_EMBED_BASE_URL is not set (no real embedding server for the docs/embeddings.md recipe)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(recipe_against_a_real_server)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
