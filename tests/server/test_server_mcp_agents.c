/*
 * test_server_mcp_agents.c — a scripted multi-agent session over the server's MCP endpoint
 * (issues 37 and 38): three agents, each with its own bearer token, work on branches of their
 * own under a policy bundle; a lead reviews a branch's diff and merges; two agents' edits of
 * the same row conflict and the lead settles it with a strategy; the actions the policy
 * denies (writing main, merging, a look-alike of main, an ad-hoc read by a stored-queries-only
 * kiosk) are refused; and every commit says who wrote it and that a token established it.
 * Then the same through merge proposals (agents propose, a lead reviews, approves, meets a
 * conflict and closes it), two leads approving one proposal at once (exactly one merge), a
 * long query stopped by notifications/cancelled from its own actor only, and the server's
 * default agent-branch rule (--mcp-agent-branch) against its absence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "server_client.h"

static policy_server P;
static const char *TOKENS =
    "{\"agent-a\":\"tok-a\",\"agent-b\":\"tok-b\",\"agent-c\":\"tok-c\",\"lead\":\"tok-l\",\"lead2\":\"tok-l2\"}";

static const char *BUNDLE =
    "version: 1\n"
    "groups:\n"
    "  agents: [agent-a, agent-b, agent-c]\n"
    "  leads: [lead, lead2]\n"
    "protected_branches: [main]\n"
    "rules:\n"
    "  - id: agents-read\n"
    "    allow: { actors: { group: agents }, actions: [read], branch_scope: any }\n"
    "  - id: agents-write\n"
    "    allow: { actors: { group: agents }, actions: [change], branch_scope: unprotected }\n"
    "  - id: agents-branch\n"
    "    allow: { actors: { group: agents }, actions: [branch_create], target_branch_scope: unprotected }\n"
    "  - id: leads-read\n"
    "    allow: { actors: { group: leads }, actions: [read], branch_scope: any }\n"
    "  - id: leads-land\n"
    "    allow: { actors: { group: leads }, actions: [branch_merge, branch_delete], target_branch_scope: any }\n";

static int setup(void **state)
{
    (void)state;
    return policy_server_setup(&P, "/tmp/og-mcpagents-XXXXXX", BUNDLE,
                               TOKENS);
}

static int teardown(void **state)
{
    (void)state;
    return policy_server_teardown(&P);
}

/* One tools/call as the token's actor: the result object (owned by *keep). */
static json_t *tool(const char *token, const char *name, const char *args, http_resp *keep)
{
    char auth[64], body[2048];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}", name,
             args);
    const char *h[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream", auth, NULL};
    *keep = http(&P.s, "POST", "/graphs/g/mcp", h, body, strlen(body));
    assert_int_equal(keep->status, 200);
    json_t *res = json_object_get(keep->json, "result");
    assert_non_null(res);
    return res;
}

static const char *text_of(json_t *res)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
}

/* Calls a tool that must succeed; returns its parsed text (caller json_decref). */
static json_t *ok(const char *token, const char *name, const char *args)
{
    http_resp r;
    json_t *res = tool(token, name, args, &r);
    if (json_is_true(json_object_get(res, "isError"))) fail_msg("%s %s: %s", name, args, text_of(res));
    json_t *t = json_loads(text_of(res), 0, NULL);
    http_free(&r);
    return t;
}

/* Calls a tool that must fail with a text containing `want`. */
static void refused(const char *token, const char *name, const char *args, const char *want)
{
    http_resp r;
    json_t *res = tool(token, name, args, &r);
    assert_true(json_is_true(json_object_get(res, "isError")));
    if (!strstr(text_of(res), want)) fail_msg("%s %s: \"%s\" lacks \"%s\"", name, args, text_of(res), want);
    http_free(&r);
}

static long age_on(const char *token, const char *branch, const char *name)
{
    char args[512];
    snprintf(args, sizeof args,
             "{\"query\":\"query q($n: String) { match { $p: Person { name: $n } } return { $p.age } }\","
             "\"params\":{\"n\":\"%s\"},\"branch\":\"%s\"}", name, branch);
    json_t *t = ok(token, "graph_query", args);
    json_t *row = json_array_get(json_object_get(t, "rows"), 0);
    long age = row ? (long)json_integer_value(json_object_get(row, "p.age")) : -1;
    json_decref(t);
    return age;
}

static void test_agents_branch_review_merge(void **state)
{
    (void)state;
    /* each agent works on a branch of its own */
    json_decref(ok("tok-a", "branch_create", "{\"name\":\"agent-a/decision\"}"));
    json_decref(ok("tok-b", "branch_create", "{\"name\":\"agent-b/decision\"}"));
    json_decref(ok("tok-a", "graph_mutate",
                   "{\"query\":\"query m() { insert Person { name: \\\"Grace\\\", age: 45 } }\",\"branch\":\"agent-a/decision\","
                   "\"message\":\"a: add Grace\"}"));
    json_decref(ok("tok-a", "graph_mutate",
                   "{\"query\":\"query u() { update Person set { age: 37 } where name = \\\"Ada\\\" }\","
                   "\"branch\":\"agent-a/decision\"}"));
    json_decref(ok("tok-b", "graph_mutate",
                   "{\"query\":\"query u() { update Person set { age: 38 } where name = \\\"Ada\\\" }\","
                   "\"branch\":\"agent-b/decision\"}"));
    /* branches are isolated: main and the other agent see nothing of it */
    assert_int_equal(age_on("tok-c", "main", "Ada"), 36);
    assert_int_equal(age_on("tok-b", "agent-b/decision", "Ada"), 38);
    assert_int_equal(age_on("tok-a", "agent-b/decision", "Grace"), -1);

    /* denied: an agent writing main, merging, or making a look-alike of main */
    refused("tok-c", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"X\\\" } }\",\"branch\":\"main\"}",
            "forbidden: policy denied action 'change' on branch 'main' for actor 'agent-c'");
    refused("tok-c", "branch_merge", "{\"source\":\"agent-a/decision\"}",
            "forbidden: policy denied action 'branch_merge'");
    refused("tok-b", "branch_create", "{\"name\":\"Main\"}", "forbidden: policy denied action 'branch_create'");
    refused("tok-b", "graph_mutate", "{\"query\":\"query m() { insert Person { name: \\\"X\\\" } }\",\"branch\":\"MAIN\"}",
            "forbidden: policy denied action 'change' on branch 'MAIN'");

    /* the lead reviews agent-a's branch against main: one insert, one update */
    json_t *d = ok("tok-l", "branch_diff", "{\"branch\":\"agent-a/decision\"}");
    json_t *changes = json_object_get(d, "changes");
    assert_int_equal(json_array_size(changes), 2);
    json_decref(d);
    /* ... and lands it; then agent-b's edit of the same row conflicts */
    json_t *m = ok("tok-l", "branch_merge", "{\"source\":\"agent-a/decision\",\"message\":\"land a\"}");
    assert_string_equal(jstr(m, "outcome"), "fast_forward");
    json_decref(m);
    refused("tok-l", "branch_merge", "{\"source\":\"agent-b/decision\"}", "conflict");
    assert_int_equal(age_on("tok-c", "main", "Ada"), 37); /* a failed merge published nothing */
    m = ok("tok-l", "branch_merge", "{\"source\":\"agent-b/decision\",\"strategy\":\"theirs\"}");
    assert_string_equal(jstr(m, "outcome"), "merged");
    json_decref(m);
    assert_int_equal(age_on("tok-c", "main", "Ada"), 38);
    assert_int_equal(age_on("tok-c", "main", "Grace"), 45);
    json_decref(ok("tok-l", "branch_delete", "{\"name\":\"agent-a/decision\"}"));
    refused("tok-a", "branch_delete", "{\"name\":\"agent-b/decision\"}", "forbidden: policy denied action 'branch_delete'");

    /* branch_list tells whose branch is whose: creator, base commit, creation time — of the
     * live incarnation (a name re-created by another agent is that agent's) */
    json_decref(ok("tok-c", "branch_create", "{\"name\":\"agent-a/decision\"}"));
    json_decref(ok("tok-c", "graph_mutate",
                   "{\"query\":\"query m() { insert Person { name: \\\"Cy\\\" } }\",\"branch\":\"agent-a/decision\"}"));
    json_t *bl = ok("tok-c", "branch_list", "{}");
    int seen = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(bl, "branches")); i++) {
        json_t *b = json_array_get(json_object_get(bl, "branches"), i);
        const char *name = jstr(b, "name");
        if (!strcmp(name, "agent-a/decision")) {
            assert_string_equal(jstr(b, "created_by"), "agent-c");
            seen++;
        } else if (!strcmp(name, "agent-b/decision")) {
            assert_string_equal(jstr(b, "created_by"), "agent-b");
            assert_int_equal(strlen(jstr(b, "base")), 26); /* the main head it forked */
            assert_int_equal(strlen(jstr(b, "created_at")), 24);
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    json_decref(bl);

    /* provenance: main's history names the lead (its merges, with the message given), and
     * the landed branch's head was agent-a's commit; each actor was established by a token */
    json_t *h = ok("tok-l", "commit_list", "{\"branch\":\"main\",\"limit\":4}");
    json_t *commits = json_object_get(h, "commits");
    json_t *c0 = json_array_get(commits, 0), *c1 = json_array_get(commits, 1);
    assert_string_equal(jstr(c0, "actor"), "lead");
    assert_string_equal(jstr(c0, "actor_via"), "token");
    assert_string_equal(jstr(c1, "message"), "land a");
    char args[128];
    snprintf(args, sizeof args, "{\"commit_id\":\"%s\"}", json_string_value(json_array_get(json_object_get(c1, "parents"), 1)));
    json_t *a = ok("tok-c", "commit_get", args);
    assert_string_equal(jstr(a, "actor"), "agent-a");
    assert_string_equal(jstr(a, "actor_via"), "token");
    json_decref(a);
    json_decref(h);
}

static const char *err_code_of(json_t *res)
{
    return jstr(json_object_get(json_object_get(res, "structuredContent"), "error"), "code");
}

/* The proposal id of proposal_create's result. */
static void propose(const char *token, const char *source, const char *title, char *id, size_t cap)
{
    char args[512];
    snprintf(args, sizeof args, "{\"source\":\"%s\",\"title\":\"%s\"}", source, title);
    json_t *p = ok(token, "proposal_create", args);
    assert_string_equal(jstr(p, "state"), "open");
    snprintf(id, cap, "%s", jstr(p, "id"));
    json_decref(p);
}

static size_t main_commits(void)
{
    json_t *h = ok("tok-l", "commit_list", "{\"branch\":\"main\",\"limit\":1000}");
    size_t n = json_array_size(json_object_get(h, "commits"));
    json_decref(h);
    return n;
}

/* A tools/call run on a thread of its own (no assertions off the main thread). */
typedef struct call_job {
    const char *token, *body, *accept;
    http_resp resp;
    volatile int done;
    pthread_t t;
} call_job;

static void *call_run(void *p)
{
    call_job *j = p;
    char auth[64], accept[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", j->token);
    snprintf(accept, sizeof accept, "Accept: %s", j->accept ? j->accept : "application/json");
    const char *h[] = {"Content-Type: application/json", accept, auth, NULL};
    j->resp = http(&P.s, "POST", "/graphs/g/mcp", h, j->body, strlen(j->body));
    j->done = 1;
    return NULL;
}

/* Issue 38: the task "record a decision on a branch and propose it" for several agents, a lead
 * approving through proposals, a conflict the lead sees in review and that approving refuses
 * (the proposal stays open until closed), and two leads approving one proposal at once:
 * exactly one merge is published, the other approval is a typed precondition failure. */
static void test_agents_propose_a_lead_approves(void **state)
{
    (void)state;
    char a[64], b[64], c[64];
    json_decref(ok("tok-a", "branch_create", "{\"name\":\"agent-a/pia\"}"));
    json_decref(ok("tok-a", "graph_mutate",
                   "{\"query\":\"query m() { insert strict Person { name: \\\"Pia\\\", age: 30 } }\",\"branch\":\"agent-a/pia\"}"));
    propose("tok-a", "agent-a/pia", "add Pia", a, sizeof a);
    json_decref(ok("tok-b", "branch_create", "{\"name\":\"agent-b/alan\"}"));
    json_decref(ok("tok-b", "graph_mutate",
                   "{\"query\":\"query u() { update Person set { age: 50 } where name = \\\"Alan\\\" }\",\"branch\":\"agent-b/alan\"}"));
    propose("tok-b", "agent-b/alan", "Alan is 50", b, sizeof b);
    json_decref(ok("tok-c", "branch_create", "{\"name\":\"agent-c/alan\"}"));
    json_decref(ok("tok-c", "graph_mutate",
                   "{\"query\":\"query u() { update Person set { age: 51 } where name = \\\"Alan\\\" }\",\"branch\":\"agent-c/alan\"}"));
    propose("tok-c", "agent-c/alan", "Alan is 51", c, sizeof c);
    /* an agent cannot approve, not even its own proposal */
    char args[256];
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", a);
    refused("tok-a", "proposal_approve", args, "forbidden: policy denied action 'branch_merge'");
    /* the lead's queue: the three open proposals */
    json_t *l = ok("tok-l", "proposal_list", "{\"state\":\"open\"}");
    int found = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(l, "proposals")); i++) {
        const char *id = jstr(json_array_get(json_object_get(l, "proposals"), i), "id");
        found += !strcmp(id, a) + !strcmp(id, b) + !strcmp(id, c);
    }
    assert_int_equal(found, 3);
    json_decref(l);
    /* review b: one update, no conflicts; approve it */
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", b);
    json_t *r = ok("tok-l", "proposal_show", args);
    assert_int_equal(json_array_size(json_object_get(r, "changes")), 1);
    assert_int_equal(json_array_size(json_object_get(r, "conflicts")), 0);
    json_decref(r);
    r = ok("tok-l", "proposal_approve", args);
    assert_string_equal(jstr(json_object_get(r, "proposal"), "state"), "merged");
    json_decref(r);
    assert_int_equal(age_on("tok-l", "main", "Alan"), 50);
    /* c edited the same row: review shows the conflict, approving refuses it, c stays open */
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", c);
    r = ok("tok-l", "proposal_show", args);
    assert_true(json_array_size(json_object_get(r, "conflicts")) >= 1);
    json_decref(r);
    http_resp keep;
    json_t *res = tool("tok-l", "proposal_approve", args, &keep);
    assert_true(json_is_true(json_object_get(res, "isError")));
    assert_string_equal(err_code_of(res), "conflict");
    http_free(&keep);
    assert_int_equal(age_on("tok-l", "main", "Alan"), 50); /* nothing merged */
    r = ok("tok-l", "proposal_list", "{\"state\":\"open\"}");
    int open_c = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(r, "proposals")); i++)
        open_c |= !strcmp(jstr(json_array_get(json_object_get(r, "proposals"), i), "id"), c);
    assert_true(open_c); /* still open after the refused approval */
    json_decref(r);
    snprintf(args, sizeof args, "{\"id\":\"%s\",\"reason\":\"conflicts with the accepted age\"}", c);
    r = ok("tok-l", "proposal_close", args);
    assert_string_equal(jstr(r, "state"), "closed");
    json_decref(r);

    /* two leads approve a at once: main moved since a forked, so the merge is one commit */
    size_t before = main_commits();
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"proposal_approve\","
             "\"arguments\":{\"id\":\"%s\"}}}", a);
    call_job j1 = {.token = "tok-l", .body = body}, j2 = {.token = "tok-l2", .body = body};
    assert_int_equal(pthread_create(&j1.t, NULL, call_run, &j1), 0);
    assert_int_equal(pthread_create(&j2.t, NULL, call_run, &j2), 0);
    pthread_join(j1.t, NULL);
    pthread_join(j2.t, NULL);
    assert_int_equal(j1.resp.status, 200);
    assert_int_equal(j2.resp.status, 200);
    json_t *r1 = json_object_get(j1.resp.json, "result"), *r2 = json_object_get(j2.resp.json, "result");
    int e1 = json_is_true(json_object_get(r1, "isError")), e2 = json_is_true(json_object_get(r2, "isError"));
    assert_int_equal(e1 + e2, 1); /* exactly one approval merged */
    json_t *loser = e1 ? r1 : r2, *winner = e1 ? r2 : r1;
    assert_string_equal(err_code_of(loser), "precondition_failed");
    assert_string_equal(jstr(json_object_get(json_object_get(winner, "structuredContent"), "proposal"), "state"), "merged");
    http_free(&j1.resp);
    http_free(&j2.resp);
    assert_int_equal(main_commits(), before + 1); /* one merge published, not two */
    assert_int_equal(age_on("tok-l", "main", "Pia"), 30);
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", a);
    r = ok("tok-l", "proposal_show", args);
    assert_string_equal(jstr(json_object_get(r, "proposal"), "state"), "merged");
    json_decref(r);
}

/* Issue 38: notifications/cancelled over HTTP stops the running call it names — only when it
 * comes from the call's own actor — whether the call answers plain JSON or streams. */
static void cancel_one(const char *accept, const char *meta)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_query\",%s"
             "\"arguments\":{\"branch\":\"agent-a/big\",\"query\":\"query q() { match { $a: Person  $b: Person  $c: Person  "
             "$d: Person  $a.age + $b.age + $c.age + $d.age = 1000 } return { $a.name } }\"}}}", meta);
    call_job j = {.token = "tok-a", .body = body, .accept = accept};
    assert_int_equal(pthread_create(&j.t, NULL, call_run, &j), 0);
    usleep(800 * 1000);
    const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":77}}";
    const char *hb[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream",
                        "Authorization: Bearer tok-b", NULL};
    http_resp n = http(&P.s, "POST", "/graphs/g/mcp", hb, note, strlen(note)); /* another actor's: no effect */
    assert_int_equal(n.status, 202);
    http_free(&n);
    usleep(800 * 1000);
    assert_false(j.done); /* still running */
    const char *ha[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream",
                        "Authorization: Bearer tok-a", NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    n = http(&P.s, "POST", "/graphs/g/mcp", ha, note, strlen(note));
    assert_int_equal(n.status, 202);
    http_free(&n);
    pthread_join(j.t, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(s < 20.0); /* stopped, not run to its end */
    assert_int_equal(j.resp.status, 200);
    /* the POST is still answered (HTTP must): the call's tool error says it was cancelled */
    if (!strstr(j.resp.body ? j.resp.body : "", "cancelled")) fail_msg("not cancelled: %.400s", j.resp.body ? j.resp.body : "");
    http_free(&j.resp);
}

static void test_cancel_over_http(void **state)
{
    (void)state;
    char data[1 << 14] = "", args[1 << 15];
    for (int i = 0; i < 150; i++)
        snprintf(data + strlen(data), sizeof data - strlen(data),
                 "{\\\"type\\\":\\\"Person\\\",\\\"data\\\":{\\\"name\\\":\\\"q%d\\\",\\\"age\\\":%d}}\\n", i, i % 90);
    snprintf(args, sizeof args,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_load\",\"arguments\":"
             "{\"data\":\"%s\",\"branch\":\"agent-a/big\",\"from\":\"main\"}}}", data);
    call_job load = {.token = "tok-a", .body = args};
    call_run(&load); /* a body beyond tool()'s buffer */
    json_t *res = json_object_get(load.resp.json, "result");
    if (!res || json_is_true(json_object_get(res, "isError"))) fail_msg("load: %.300s", load.resp.body ? load.resp.body : "");
    http_free(&load.resp);
    cancel_one("application/json", "");                                                 /* answered inline */
    cancel_one("application/json, text/event-stream", "\"_meta\":{\"progressToken\":5},"); /* streamed */
    /* a cancellation naming no running call is accepted and changes nothing */
    const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":12345}}";
    const char *h[] = {"Content-Type: application/json", "Accept: application/json", "Authorization: Bearer tok-a", NULL};
    http_resp n = http(&P.s, "POST", "/graphs/g/mcp", h, note, strlen(note));
    assert_int_equal(n.status, 202);
    http_free(&n);
    assert_int_equal(age_on("tok-a", "agent-a/big", "q7"), 7); /* the graph serves on */
}

/* Restarts the fixture's server with `extra` arguments (NULL-terminated) after its own. */
static void restart_with(const char *const *extra)
{
    assert_int_equal(srv_stop(&P.s), 0);
    const char *args[16] = {"--graph", P.graph, "--bind", "127.0.0.1:0", "--policy", P.pol};
    size_t n = 6;
    for (size_t i = 0; extra && extra[i] && n < 15; i++) args[n++] = extra[i];
    args[n] = NULL;
    setenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON", TOKENS, 1);
    assert_int_equal(srv_start(&P.s, P.logpath, args), 0);
    unsetenv("OMNIGRAPH_SERVER_BEARER_TOKENS_JSON");
}

/* Issue 38: without the server's default agent-branch rule an MCP write naming no branch is
 * refused; with --mcp-agent-branch '{actor}/work' it goes to the caller's own branch, created
 * from main on first use (decided as that actor's branch_create: a lead, who may not create
 * branches, is refused), and main is untouched. */
static void test_default_agent_branch_rule(void **state)
{
    (void)state;
    const char *write = "{\"query\":\"query m() { insert Person { name: \\\"Rue\\\", age: 9 } }\"}";
    refused("tok-a", "graph_mutate", write, "argument `branch` is required");
    /* one branch for everyone would defeat the rule: refused at start */
    const char *args[] = {"--graph", P.graph, "--bind", "127.0.0.1:0", "--mcp-agent-branch", "work", NULL};
    assert_true(srv_start_fails(P.logpath, args));
    const char *rule[] = {"--mcp-agent-branch", "{actor}/work", NULL};
    restart_with(rule);
    json_t *r = ok("tok-a", "graph_mutate", write);
    assert_string_equal(jstr(r, "branch"), "agent-a/work");
    json_decref(r);
    r = ok("tok-a", "graph_mutate", "{\"query\":\"query u() { update Person set { age: 10 } where name = \\\"Rue\\\" }\"}");
    assert_string_equal(jstr(r, "branch"), "agent-a/work"); /* the same branch again */
    json_decref(r);
    assert_int_equal(age_on("tok-a", "agent-a/work", "Rue"), 10);
    assert_int_equal(age_on("tok-a", "main", "Rue"), -1);
    json_t *bl = ok("tok-a", "branch_list", "{}");
    int seen = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(bl, "branches")); i++) {
        json_t *b = json_array_get(json_object_get(bl, "branches"), i);
        if (!strcmp(jstr(b, "name"), "agent-a/work")) seen = !strcmp(jstr(b, "created_by"), "agent-a");
    }
    assert_true(seen);
    json_decref(bl);
    refused("tok-l", "graph_mutate", write, "forbidden: the agent branch 'lead/work' does not exist and cannot be created");
    restart_with(NULL);
    refused("tok-a", "graph_mutate", write, "argument `branch` is required");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_agents_branch_review_merge),
                                       cmocka_unit_test(test_agents_propose_a_lead_approves),
                                       cmocka_unit_test(test_cancel_over_http),
                                       cmocka_unit_test(test_default_agent_branch_rule)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
