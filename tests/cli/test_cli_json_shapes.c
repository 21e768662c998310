/*
 * test_cli_json_shapes.c — the `--json` documents the reference's CLI documents, pinned member
 * by member so an OmniGraph user's scripts keep working: branch list {"branches": [names]},
 * branch create/delete/merge, commit list/show (CommitOutput members), commit changes
 * ({"cause","changes"} with typed images).  Our own extra members may sit beside them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "cli_run.h"

static int setup(void **state)
{
    (void)state;
    if (cli_scratch_new("/tmp/og-jshape-XXXXXX")) return -1;
    write_file("s.pg", "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n");
    write_file("d.jsonl", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n"
                          "{\"type\":\"Person\",\"data\":{\"name\":\"Bob\"}}\n"
                          "{\"edge\":\"Knows\",\"from\":\"Ada\",\"to\":\"Bob\"}\n");
    return run(NULL, 0, "%s init --quiet --schema %s/s.pg %s/g && %s load --quiet --data %s/d.jsonl --mode overwrite %s/g",
               bin, dir, dir, bin, dir, dir);
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

/* Runs a command expected to exit 0 and parses its stdout as one JSON document. */
static json_t *run_json(const char *fmt, const char *a1, const char *a2)
{
    char cmd[1024], out[65536];
    snprintf(cmd, sizeof cmd, fmt, a1, a2);
    assert_int_equal(run(out, sizeof out, "%s %s", bin, cmd), 0);
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    if (!j) fail_msg("not one JSON document (%s): %s", e.text, out);
    return j;
}

static const char *str(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_string(v)) fail_msg("member '%s' is not a string", k);
    return json_string_value(v);
}

/* The reference's CommitOutput members, with their JSON types. */
static void assert_commit_output(json_t *c, const char *id)
{
    assert_true(json_is_object(c));
    if (id) assert_string_equal(str(c, "graph_commit_id"), id);
    else str(c, "graph_commit_id");
    assert_non_null(json_object_get(c, "graph_branch")); /* string or null */
    assert_true(json_is_integer(json_object_get(c, "graph_manifest_version")));
    assert_non_null(json_object_get(c, "parent_commit_id"));
    assert_non_null(json_object_get(c, "merged_parent_commit_id"));
    assert_non_null(json_object_get(c, "actor_id"));
    json_t *t = json_object_get(c, "created_at");
    assert_true(json_is_integer(t));
    assert_true(json_integer_value(t) > 1600000000000000LL); /* epoch microseconds */
}

static void branch_shapes(void **state)
{
    (void)state;
    json_t *j = run_json("branch create --quiet --json --as carol dev %s/g%s", dir, "");
    assert_string_equal(str(j, "name"), "dev");
    assert_string_equal(str(j, "from"), "main");
    assert_string_equal(str(j, "actor_id"), "carol");
    assert_non_null(strstr(str(j, "uri"), "/g"));
    assert_int_equal(strlen(str(j, "head")), 26);
    json_decref(j);

    j = run_json("branch list --quiet --json %s/g%s", dir, "");
    json_t *names = json_object_get(j, "branches");
    assert_int_equal(json_array_size(names), 2);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "dev"); /* strings, sorted */
    assert_string_equal(json_string_value(json_array_get(names, 1)), "main");
    assert_int_equal(strlen(json_string_value(json_object_get(json_object_get(j, "heads"), "main"))), 26);
    json_decref(j);
    /* --format json is --json; jsonl/csv/table are one record per branch */
    json_t *k = run_json("branch list --quiet --format json %s/g%s", dir, "");
    j = run_json("branch list --quiet --json %s/g%s", dir, "");
    assert_true(json_equal(j, k));
    json_decref(j);
    json_decref(k);
    char out[4096];
    assert_int_equal(run(out, sizeof out, "%s branch list --format jsonl %s/g", bin, dir), 0);
    assert_true(!strncmp(out, "{\"name\":\"dev\",\"head\":\"", 22));

    /* merge: a fast-forward carries the whole CommitOutput */
    assert_int_equal(run(NULL, 0, "%s mutate --quiet --store %s/g --branch dev -e 'query a() { insert Person { name: \"Cy\" } }'",
                         bin, dir), 0);
    j = run_json("branch merge --quiet --json dev %s/g%s", dir, "");
    assert_string_equal(str(j, "source"), "dev");
    assert_string_equal(str(j, "target"), "main");
    assert_string_equal(str(j, "outcome"), "fast_forward");
    assert_non_null(json_object_get(j, "actor_id"));
    assert_null(json_object_get(j, "branch_deleted")); /* absent unless --delete-branch */
    assert_commit_output(json_object_get(j, "commit"), NULL);
    assert_string_equal(str(json_object_get(j, "commit"), "graph_branch"), "main");
    json_decref(j);
    j = run_json("branch merge --quiet --json dev %s/g%s", dir, "");
    assert_string_equal(str(j, "outcome"), "already_up_to_date");
    assert_true(json_is_null(json_object_get(j, "commit")));
    json_decref(j);

    j = run_json("branch delete --quiet --json dev %s/g%s", dir, "");
    assert_string_equal(str(j, "name"), "dev");
    assert_non_null(strstr(str(j, "uri"), "/g"));
    assert_true(json_is_null(json_object_get(j, "actor_id")));
    json_decref(j);
}

static void commit_shapes(void **state)
{
    (void)state;
    json_t *j = run_json("commit list --quiet --json %s/g%s", dir, "");
    json_t *commits = json_object_get(j, "commits");
    assert_true(json_array_size(commits) >= 2);
    json_t *head = json_array_get(commits, 0), *init = json_array_get(commits, json_array_size(commits) - 1);
    char head_id[32];
    snprintf(head_id, sizeof head_id, "%s", str(head, "id"));
    assert_commit_output(head, head_id);
    assert_string_equal(str(head, "graph_branch"), "main");
    assert_string_equal(str(head, "parent_commit_id"), json_string_value(json_array_get(json_object_get(head, "parents"), 0)));
    assert_true(json_is_null(json_object_get(init, "parent_commit_id")));
    assert_non_null(strstr(str(head, "created_at_utc"), "Z")); /* ours, beside the reference's */
    json_decref(j);

    j = run_json("commit show --quiet --json %s %s/g", head_id, dir);
    assert_commit_output(j, head_id);
    assert_true(json_is_array(json_object_get(j, "tables")));
    json_decref(j);

    /* commit changes: the reference's {"cause","changes"}, images under "properties" */
    j = run_json("commit changes --quiet --json %s %s/g", head_id, dir);
    json_t *cause = json_object_get(j, "cause");
    assert_string_equal(str(cause, "graph_commit_id"), head_id);
    assert_true(json_is_integer(json_object_get(cause, "authored_at")));
    str(cause, "authored_branch");
    json_t *changes = json_object_get(j, "changes"), *c;
    size_t i;
    assert_true(json_array_size(changes) >= 1);
    json_array_foreach(changes, i, c)
    {
        assert_true(!strcmp(str(c, "kind"), "node") || !strcmp(str(c, "kind"), "edge"));
        str(json_object_get(c, "type"), "name");
        str(json_object_get(c, "type"), "id");
        str(c, "id");
        if (!strcmp(str(c, "op"), "insert")) assert_true(json_is_object(json_object_get(json_object_get(c, "after"), "properties")));
    }
    json_decref(j);
    char out[4096];
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet %s %s/g", bin, head_id, dir), 0);
    assert_non_null(strstr(out, "insert Person Cy\n"));
    assert_non_null(strstr(out, "1 inserted, 0 updated, 0 deleted\n"));
    assert_int_equal(run(out, sizeof out, "%s commit changes --quiet --kind edge %s %s/g", bin, head_id, dir), 0);
    assert_non_null(strstr(out, "0 inserted, 0 updated, 0 deleted\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(branch_shapes),
        cmocka_unit_test(commit_shapes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
