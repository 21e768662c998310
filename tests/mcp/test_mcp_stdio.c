/*
 * test_mcp_stdio.c — `omnigraph mcp --store ROOT --queries F.gq --as ACTOR`, the stdio
 * transport for a local agent on a plain graph (no cluster): the same tools as over HTTP
 * (the operational set plus one per stored query), a stored mutation on a branch, the merge,
 * the schema resource, and the actor recorded on the agent's commits.  The binary under test
 * is the build's `omnigraph` (tests/cli/cli_run.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli/cli_run.h"

static char out[1 << 17];

static const char *SCHEMA = "node Person {\n    name: String @key\n    age: I32?\n}\nedge Knows: Person -> Person\n";
static const char *QUERIES =
    "query adults($min: I32) @description(\"People at least $min years old.\") {\n"
    "    match { $p: Person  $p.age >= $min }\n    return { $p.name }\n    order { $p.name asc }\n}\n"
    "query add_person($name: String, $age: I32?) {\n    insert Person { name: $name, age: $age }\n}\n"
    "query hidden() @mcp(expose: false) {\n    match { $p: Person }\n    return { $p.name }\n}\n";

/* The response with `id` among the newline-delimited responses in `out`. */
static json_t *response(long id)
{
    for (char *line = out; line && *line;) {
        char *nl = strchr(line, '\n');
        json_t *j = json_loadb(line, nl ? (size_t)(nl - line) : strlen(line), 0, NULL);
        if (j && json_integer_value(json_object_get(j, "id")) == id) return j;
        json_decref(j);
        line = nl ? nl + 1 : NULL;
    }
    fail_msg("no response with id %ld in:\n%s", id, out);
    return NULL;
}

static json_t *sc(json_t *r) { return json_object_get(json_object_get(r, "result"), "structuredContent"); }

static int has_tool(json_t *list, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(json_object_get(list, "result"), "tools"), i, t)
        if (!strcmp(json_string_value(json_object_get(t, "name")), name)) return 1;
    return 0;
}

static void test_stdio_store(void **state)
{
    (void)state;
    write_file("people.pg", SCHEMA);
    write_file("people.gq", QUERIES);
    write_file("seed.ndjson", "{\"type\":\"Person\",\"data\":{\"name\":\"Ada\",\"age\":36}}\n"
                              "{\"type\":\"Person\",\"data\":{\"name\":\"Grace\",\"age\":45}}\n");
    assert_int_equal(run(NULL, 0, "%s init --schema %s/people.pg %s/g.omni 2>&1", bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "%s load --quiet --data %s/seed.ndjson --mode merge %s/g.omni", bin, dir, dir), 0);
    write_file("in.jsonl",
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
               "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n"
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_create\",\"arguments\":{\"name\":\"feature\"}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"add_person\","
               "\"arguments\":{\"params\":{\"name\":\"Zed\",\"age\":50},\"branch\":\"feature\"}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\",\"arguments\":{\"params\":{\"min\":40}}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"branch_merge\",\"arguments\":{\"source\":\"feature\"}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\",\"arguments\":{\"params\":{\"min\":40}}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{\"uri\":\"omnigraph://schema\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"commit_list\",\"arguments\":{\"limit\":1}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"hidden\",\"arguments\":{}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\",\"arguments\":{\"params\":{}}}}\n");
    assert_int_equal(run(out, sizeof out, "%s mcp --store %s/g.omni --queries %s/people.gq --as agent-1 < %s/in.jsonl", bin, dir,
                         dir, dir),
                     0);

    assert_null(strstr(out, "notifications/")); /* no progressToken, no log level: no notifications */
    json_t *r = response(1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")), "2025-11-25");
    json_decref(r);
    /* the operational set and the exposed stored queries; @mcp(expose: false) stays off */
    r = response(2);
    const char *builtins[] = {"graph_health", "graph_query", "graph_snapshot", "schema_get",   "branch_list",
                              "commit_list",  "commit_get",  "graph_mutate",   "graph_load",   "branch_create",
                              "branch_delete", "branch_merge", "schema_apply", "adults",       "add_person"};
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++) assert_true(has_tool(r, builtins[i]));
    assert_false(has_tool(r, "hidden"));
    json_decref(r);
    r = response(4);
    assert_false(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
    json_decref(r);
    r = response(5); /* the write is on the branch: main does not see Zed yet */
    assert_int_equal(json_integer_value(json_object_get(sc(r), "row_count")), 1);
    json_decref(r);
    r = response(6);
    assert_string_equal(json_string_value(json_object_get(sc(r), "outcome")), "fast_forward");
    json_decref(r);
    r = response(7);
    assert_int_equal(json_integer_value(json_object_get(sc(r), "row_count")), 2);
    char *rows = json_dumps(json_object_get(sc(r), "rows"), JSON_COMPACT);
    assert_non_null(strstr(rows, "Zed"));
    free(rows);
    json_decref(r);
    r = response(8);
    const char *schema =
        json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(r, "result"), "contents"), 0), "text"));
    assert_non_null(schema);
    assert_non_null(strstr(schema, "node Person"));
    json_decref(r);
    r = response(9); /* --as is the actor of the agent's commits */
    char *commits = json_dumps(sc(r), JSON_COMPACT);
    assert_non_null(strstr(commits, "agent-1"));
    free(commits);
    json_decref(r);
    r = response(10); /* not exposed: an unknown tool */
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "error"), "message")), "Unknown tool: hidden");
    json_decref(r);
    r = response(11); /* typed parameters: the error of the ad-hoc lane, as a tool error */
    assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0), "text")),
        "invalid: param `$min`: missing required parameter of type I32");
    json_decref(r);
}

/* Notifications over stdio: lines of their own before the call's response line — progress
 * only for the call with a token, log messages at or above the level, which holds for the
 * rest of the process. */
static void test_stdio_notifications(void **state)
{
    (void)state;
    write_file("notes.jsonl",
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\","
               "\"arguments\":{\"params\":{\"min\":40}},\"_meta\":{\"progressToken\":\"p1\"}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"adults\","
               "\"arguments\":{\"params\":{\"min\":40}}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n");
    assert_int_equal(run(out, sizeof out, "%s mcp --store %s/g.omni --queries %s/people.gq < %s/notes.jsonl", bin, dir, dir, dir), 0);
    /* walk the lines: what came before each response */
    size_t progress_before_1 = 0, logs_before_3 = 0, other = 0;
    int seen1 = 0, seen3 = 0, seen4 = 0;
    double last = 0;
    for (char *line = out; line && *line;) {
        char *nl = strchr(line, '\n');
        json_t *j = json_loadb(line, nl ? (size_t)(nl - line) : strlen(line), 0, NULL);
        assert_non_null(j);
        const char *method = json_string_value(json_object_get(j, "method"));
        json_t *p = json_object_get(j, "params");
        long id = (long)json_integer_value(json_object_get(j, "id"));
        if (method && !strcmp(method, "notifications/progress") && !seen1) {
            assert_string_equal(json_string_value(json_object_get(p, "progressToken")), "p1");
            assert_true(json_number_value(json_object_get(p, "progress")) > last);
            last = json_number_value(json_object_get(p, "progress"));
            progress_before_1++;
        } else if (method && !strcmp(method, "notifications/message") && seen1 && !seen3) {
            assert_string_not_equal(json_string_value(json_object_get(p, "level")), "debug");
            logs_before_3++;
        } else if (method) {
            other++;
        } else if (id == 1) {
            seen1 = 1;
        } else if (id == 3) {
            seen3 = 1;
        } else if (id == 4) {
            seen4 = 1;
        }
        json_decref(j);
        line = nl ? nl + 1 : NULL;
    }
    assert_true(seen1 && seen3 && seen4);
    assert_true(progress_before_1 >= 3);
    assert_true(logs_before_3 >= 2); /* "read main at commit …", "N rows in T ms" */
    assert_int_equal(other, 0);      /* nothing else: no progress for call 3, nothing for ping */
}

/* Reads newline-delimited messages from fd until one with `id` arrives (returned) or `ms`
 * pass (NULL); every message before it is appended to *seen as "id," (responses) so the
 * order can be checked. */
static json_t *await_id(int fd, long id, int ms, char *seen, size_t cap)
{
    static char buf[1 << 16];
    static size_t have;
    for (int waited = 0;;) {
        char *nl;
        while ((nl = memchr(buf, '\n', have))) {
            json_t *j = json_loadb(buf, (size_t)(nl - buf), 0, NULL);
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, buf + used, have - used);
            have -= used;
            json_t *jid = json_object_get(j, "id");
            if (jid && !json_object_get(j, "method")) {
                snprintf(seen + strlen(seen), cap - strlen(seen), "%ld,", (long)json_integer_value(jid));
                if (json_integer_value(jid) == id) return j;
            }
            json_decref(j);
        }
        if (waited >= ms) return NULL;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) > 0) {
            ssize_t n = read(fd, buf + have, sizeof buf - have - 1);
            if (n <= 0) return NULL;
            have += (size_t)n;
        } else {
            waited += 100;
        }
    }
}

/* Issue 38 item 9: over stdio a ping is answered while a long query runs, and
 * notifications/cancelled stops that query (no response for it; the process stays usable). */
static void test_stdio_concurrent_and_cancel(void **state)
{
    (void)state;
    char seed[1 << 14] = "";
    for (int i = 0; i < 120; i++)
        snprintf(seed + strlen(seed), sizeof seed - strlen(seed), "{\"type\":\"Person\",\"data\":{\"name\":\"p%03d\",\"age\":%d}}\n", i, i);
    write_file("many.ndjson", seed);
    assert_int_equal(run(NULL, 0, "%s init --schema %s/people.pg %s/big.omni 2>&1", bin, dir, dir), 0);
    assert_int_equal(run(NULL, 0, "%s load --quiet --data %s/many.ndjson --mode merge %s/big.omni", bin, dir, dir), 0);
    int to[2], from[2];
    assert_int_equal(pipe(to), 0);
    assert_int_equal(pipe(from), 0);
    char store[160];
    snprintf(store, sizeof store, "%s/big.omni", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[1]);
        close(from[0]);
        execl(bin, "omnigraph", "mcp", "--store", store, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    FILE *w = fdopen(to[1], "w");
    assert_non_null(w);
    fprintf(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\",\"arguments\":"
               "{\"query\":\"query q() { match { $a: Person  $b: Person  $c: Person } return { $a.name, $b.name, $c.name } "
               "order { $c.name desc } }\"}}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
    fflush(w);
    char seen[256] = "";
    json_t *r = await_id(from[0], 3, 10000, seen, sizeof seen);
    assert_non_null(r); /* the ping is answered ... */
    json_decref(r);
    assert_string_equal(seen, "1,3,"); /* ... before the query (1.7M rows) */
    fprintf(w, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2,\"reason\":\"t\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_health\",\"arguments\":{}}}\n");
    fflush(w);
    r = await_id(from[0], 4, 30000, seen, sizeof seen); /* queued behind the query: it must stop */
    assert_non_null(r);
    json_decref(r);
    assert_string_equal(seen, "1,3,4,"); /* no response for the cancelled call */
    fclose(w);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(from[0]);
}

/* The next newline-delimited message from fd within `ms` (NULL: none). */
static json_t *next_msg(int fd, int ms)
{
    static char buf[1 << 16];
    static size_t have;
    for (int waited = 0;;) {
        char *nl = memchr(buf, '\n', have);
        if (nl) {
            json_t *j = json_loadb(buf, (size_t)(nl - buf), 0, NULL);
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, buf + used, have - used);
            have -= used;
            return j;
        }
        if (waited >= ms) return NULL;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) > 0) {
            ssize_t n = read(fd, buf + have, sizeof buf - have - 1);
            if (n <= 0) return NULL;
            have += (size_t)n;
        } else {
            waited += 100;
        }
    }
}

/* The next message with `id` or `method` (others skipped, counted in *skipped). */
static json_t *next_of(int fd, long id, const char *method, int ms, int *skipped)
{
    json_t *j;
    while ((j = next_msg(fd, ms))) {
        const char *m = json_string_value(json_object_get(j, "method"));
        if (method ? (m && !strcmp(m, method)) : (!m && json_integer_value(json_object_get(j, "id")) == id)) return j;
        if (skipped) (*skipped)++;
        json_decref(j);
    }
    return NULL;
}

/* Issue 38: over stdio a client subscribes to a branch resource and is told when that branch's
 * head moves — also when another process wrote it; with --agent-branch a write naming no
 * branch lands on the agent's own branch. */
static void test_stdio_subscriptions_and_agent_branch(void **state)
{
    (void)state;
    assert_int_equal(run(NULL, 0, "%s init --schema %s/people.pg %s/sub.omni 2>&1", bin, dir, dir), 0);
    int to[2], from[2];
    assert_int_equal(pipe(to), 0);
    assert_int_equal(pipe(from), 0);
    char store[160];
    snprintf(store, sizeof store, "%s/sub.omni", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[1]);
        close(from[0]);
        execl(bin, "omnigraph", "mcp", "--store", store, "--as", "agent-1", "--agent-branch", "{actor}/work", (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    FILE *w = fdopen(to[1], "w");
    assert_non_null(w);
    fprintf(w, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_mutate\",\"arguments\":"
               "{\"query\":\"query m() { insert Person { name: \\\"Kit\\\" } }\"}}}\n");
    fflush(w);
    json_t *r = next_of(from[0], 1, NULL, 10000, NULL);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(json_object_get(json_object_get(json_object_get(r, "result"), "capabilities"), "resources"), "subscribe")));
    json_decref(r);
    r = next_of(from[0], 2, NULL, 20000, NULL);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(sc(r), "branch")), "agent-1/work");
    json_decref(r);
    fprintf(w, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"omnigraph://commits/main\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"omnigraph://branches/agent-1/work/diff\"}}\n");
    fflush(w);
    r = next_of(from[0], 4, NULL, 10000, NULL);
    assert_non_null(json_object_get(r, "result"));
    json_decref(r);
    /* nothing moves: no update */
    r = next_of(from[0], 0, "notifications/resources/updated", 1500, NULL);
    assert_null(r);
    /* another process writes main: both resources depend on main's head */
    write_file("m.gq", "query m() { insert Person { name: \"Lou\" } }\n");
    assert_int_equal(run(NULL, 0, "%s mutate --query %s/m.gq --branch main %s >/dev/null 2>&1", bin, dir, store), 0);
    int uris = 0;
    for (int k = 0; k < 2; k++) {
        r = next_of(from[0], 0, "notifications/resources/updated", 10000, NULL);
        assert_non_null(r);
        const char *u = json_string_value(json_object_get(json_object_get(r, "params"), "uri"));
        uris |= !strcmp(u, "omnigraph://commits/main") ? 1 : !strcmp(u, "omnigraph://branches/agent-1/work/diff") ? 2 : 4;
        json_decref(r);
    }
    assert_int_equal(uris, 3);
    fclose(w);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(from[0]);
}

static int setup(void **state)
{
    (void)state;
    return cli_scratch_new("/tmp/og-mcpstdio-XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    return cli_scratch_remove();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_stdio_store), cmocka_unit_test(test_stdio_notifications),
                                       cmocka_unit_test(test_stdio_concurrent_and_cancel),
                                       cmocka_unit_test(test_stdio_subscriptions_and_agent_branch)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
