/*
 * test_cli_embed.c — `omnigraph embed` with the mock provider: the JSON summary, one commit on
 * the graph, --progress lines, a rerun that changes nothing, --clean with --select, --if-commit (exit 4), the
 * offline --input/--output/--spec pipeline, and usage errors (exit 2).
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

#define ENV "OMNIGRAPH_EMBED_PROVIDER=mock OMNIGRAPH_HOME=%s/home"

static void embed_graph_and_files(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/og-cli-embed-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(bin, sizeof bin, "%s/omnigraph", OG_BINARY_DIR);
    char out[8192];
    write_file("s.pg", "node Doc { slug: String @key  body: String?  vec: Vector(3)? @embed(\"body\") }\n"
                      "node Tag { name: String @key }\n");
    write_file("d.jsonl", "{\"type\":\"Doc\",\"data\":{\"slug\":\"a\",\"body\":\"alpha\"}}\n"
                          "{\"type\":\"Doc\",\"data\":{\"slug\":\"b\",\"body\":\"beta\"}}\n");
    assert_int_equal(run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g", bin, dir, dir), 0);
    /* loading never embeds: as in the reference, a load result says embedding_generation
     * "unsupported" when it touched a node type with an @embed property, null otherwise, and the
     * vectors stay null */
    write_file("t.jsonl", "{\"type\":\"Tag\",\"data\":{\"name\":\"x\"}}\n");
    assert_int_equal(run(out, sizeof out, ENV " %s load --quiet --json --mode overwrite --data %s/t.jsonl %s/g", dir, bin, dir, dir), 0);
    assert_non_null(strstr(out, "\"embedding_generation\": null"));
    assert_int_equal(run(out, sizeof out, ENV " %s load --quiet --json --mode overwrite --data %s/d.jsonl %s/g", dir, bin, dir, dir), 0);
    assert_non_null(strstr(out, "\"total_entities\": 2"));
    assert_non_null(strstr(out, "\"embedding_generation\": \"unsupported\""));
    assert_int_equal(run(out, sizeof out, ENV " %s load --json --mode merge --data %s/t.jsonl --branch other --from main %s/g 2>&1", dir, bin, dir, dir), 0);
    assert_non_null(strstr(out, "\"embedding_generation\": null"));
    assert_int_equal(run(out, sizeof out, ENV " %s load --mode overwrite --data %s/d.jsonl --branch other %s/g 2>&1", dir, bin, dir, dir), 0);
    assert_non_null(strstr(out, "never generates @embed vectors"));
    assert_int_equal(run(out, sizeof out, "%s query --store %s/g -e 'query q() { match { $d: Doc } return { $d.slug, $d.vec } order { $d.slug asc } }' --format csv",
                         bin, dir), 0);
    assert_string_equal(out, "d.slug,d.vec\r\na,\r\nb,\r\n");

    assert_int_equal(run(out, sizeof out, ENV " %s embed --quiet --json --store %s/g", dir, bin, dir), 0);
    assert_non_null(strstr(out, "\"records\": 2"));
    assert_non_null(strstr(out, "\"selected_records\": 2"));
    assert_non_null(strstr(out, "\"embedded_records\": 2"));
    assert_non_null(strstr(out, "\"cleaned_records\": 0"));
    assert_non_null(strstr(out, "\"mode\": \"fill_missing\""));
    assert_non_null(strstr(out, "\"dimension\": 3"));
    assert_non_null(strstr(out, "\"model\": \"mock\""));
    const char *c = strstr(out, "\"commit\": \"");
    assert_non_null(c);
    char head[32] = "";
    memcpy(head, c + 11, 26);
    assert_int_equal(run(out, sizeof out, "%s export %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"vec\":["));

    /* --progress: a progress line on stderr (every two seconds, and one at the end) */
    assert_int_equal(run(out, sizeof out, ENV " %s embed --quiet --progress --reembed-all %s/g 2>&1", dir, bin, dir), 0);
    assert_non_null(strstr(out, "omnigraph embed: 2 records read, 2 selected, "));

    /* nothing missing: no commit */
    assert_int_equal(run(out, sizeof out, ENV " %s embed %s/g 2>/dev/null", dir, bin, dir), 0);
    assert_non_null(strstr(out, "nothing changed, no commit"));

    /* --if-commit guards the head */
    assert_int_equal(run(NULL, 0, ENV " %s embed --quiet --clean --if-commit 01ZZZZZZZZZZZZZZZZZZZZZZZZ %s/g 2>/dev/null", dir,
                         bin, dir),
                     4);
    assert_int_equal(run(out, sizeof out, ENV " %s embed --clean --select Doc:slug=a --if-commit %s %s/g 2>/dev/null", dir, bin,
                         head, dir),
                     0);
    assert_non_null(strstr(out, "1 cleaned"));
    assert_int_equal(run(out, sizeof out, "%s export %s/g", bin, dir), 0);
    assert_non_null(strstr(out, "\"slug\":\"a\",\"body\":\"alpha\"}"));

    /* the offline file pipeline */
    write_file("raw.jsonl", "{\"type\":\"Document\",\"data\":{\"body\":\"x\"}}\n");
    write_file("spec.json", "{\"dimension\":2,\"types\":{\"Document\":{\"target\":\"e\",\"fields\":[\"body\"]}}}");
    assert_int_equal(run(out, sizeof out, ENV " %s embed --json --input %s/raw.jsonl --output %s/out.jsonl --spec %s/spec.json",
                         dir, bin, dir, dir, dir),
                     0);
    assert_non_null(strstr(out, "\"embedded_records\": 1"));
    assert_int_equal(run(out, sizeof out, "cat %s/out.jsonl", dir), 0);
    assert_non_null(strstr(out, "\"e\":["));

    /* usage errors */
    assert_int_equal(run(NULL, 0, "%s embed --reembed-all --clean %s/g 2>/dev/null", bin, dir), 2);
    assert_int_equal(run(NULL, 0, "%s embed --seed x.yaml --input a 2>/dev/null", bin), 2);
    assert_int_equal(run(out, sizeof out, "%s embed --seed %s/none.yaml 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "cannot read seed manifest"));

    /* a --seed manifest: input, output and spec relative to its directory */
    assert_int_equal(run(NULL, 0, "mkdir -p %s/m", dir), 0);
    write_file("m/seed.yaml", "sources:\n  raw_seed: ../raw.jsonl\nembeddings:\n  dimension: 2\n  types:\n"
                              "    Document:\n      target: e\n      fields: [body]\n");
    assert_int_equal(run(out, sizeof out, ENV " %s embed --json --seed %s/m/seed.yaml", dir, bin, dir), 0);
    assert_non_null(strstr(out, "\"embedded_records\": 1"));
    assert_non_null(strstr(out, "m/./build/seed.embedded.jsonl"));
    assert_int_equal(run(out, sizeof out, "cat %s/m/build/seed.embedded.jsonl", dir), 0);
    assert_non_null(strstr(out, "\"e\":["));
    write_file("m/bad.yaml", "sources:\n  raw_seed: ../raw.jsonl\n");
    assert_int_equal(run(out, sizeof out, "%s embed --seed %s/m/bad.yaml 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "is missing embeddings"));
    write_file("m/broken.yaml", "sources: [\n");
    assert_int_equal(run(out, sizeof out, "%s embed --seed %s/m/broken.yaml 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "broken.yaml:"));
    assert_int_equal(run(NULL, 0, "%s embed --input %s/raw.jsonl 2>/dev/null", bin, dir), 2);
    /* a bad provider name is a typed failure, not a crash */
    assert_int_equal(run(out, sizeof out, "OMNIGRAPH_EMBED_PROVIDER=nope %s embed --quiet %s/g 2>&1", bin, dir), 1);
    assert_non_null(strstr(out, "unknown provider"));

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(embed_graph_and_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
