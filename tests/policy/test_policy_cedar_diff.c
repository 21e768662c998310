/*
 * test_policy_cedar_diff.c — the differential test of the policy engine against Cedar.
 *
 * A seeded generator writes random valid bundles as YAML (block and flow styles, names with
 * quotes, backslashes, tabs, colons and non-ASCII letters, repeated protected branches, actors
 * in several groups or none; `deny:` rules and per-query `queries:` lists, the OmniGraph-C
 * extension; the `owned` and `actor_namespace` scopes) and random requests, some naming a
 * stored query, some on branches named `<actor>/...` or created by the requesting actor.  Our library parses each bundle, compiles it
 * to Cedar text and decides every request.  The corpus (the Cedar text, the generator's own
 * model of groups and protected branches, and our decisions) goes to cedar_diff.mjs, where
 * @cedar-policy/cedar-wasm (pinned in package-lock.json) validates the text against our
 * schema and evaluates every request; any difference in the decision or in the matched rule
 * fails.  Node and the npm package are installed by scripts/install-deps.sh; without them
 * this test FAILS (it is never skipped).
 *
 * OG_POLICY_DIFF_SEED=<n> picks another corpus (the default is fixed so failures reproduce).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "policy/policy.h"
#include "util/buf.h"
#include "util/error.h"

#define NBUNDLES 480
#define NREQUESTS 24 /* per bundle: 11,520 (bundle, request) pairs */

static uint64_t rng;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static uint32_t below(uint32_t n) { return next() % n; }

static const char *const actor_pool[] = {
    "act-andrew", "act-bruno", "act-carla", "act-dora", "agent-1", "act \"quoted\"", "back\\slash",
    "tab\there", "ünïcödé", "a:b", "act-andrew ", "ACT-ANDREW", "x",
};
static const char *const group_pool[] = {
    "team", "admins", "readers", "writers", "g \"q\"", "g\\b", "ops:night", "grüppe", "line\nbreak", "T",
};
static const char *const branch_pool[] = {
    "main", "release", "feature", "dev", "main ", "Main", "x:y", "\"q\"", "straße", "feat/1", "x/y", "x/", "",
};
static const char *const query_pool[] = {
    "friends", "adults", "Adults", "q \"x\"", "s\\q", "ünï", "a:b", "add_person", "adults ",
};
static const char *const rule_pool[] = {
    "r1", "r2", "R1", "alpha", "Alpha", "beta", "a:b:c", "rule \"x\"", "z\\z", "ÿ", "rule-0", "_", "9",
};
#define N(a) (sizeof a / sizeof a[0])

static const og_policy_action branch_actions[] = {OG_POLICY_READ, OG_POLICY_EXPORT, OG_POLICY_CHANGE};
static const og_policy_action target_actions[] = {OG_POLICY_SCHEMA_APPLY, OG_POLICY_BRANCH_CREATE,
                                                  OG_POLICY_BRANCH_DELETE, OG_POLICY_BRANCH_MERGE};

/* A YAML double-quoted scalar. */
static void yq(og_buf *b, const char *s)
{
    og_buf_append_byte(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            og_buf_append_byte(b, '\\');
            og_buf_append_byte(b, (uint8_t)*s);
        } else if (*s == '\n') og_buf_append_str(b, "\\n");
        else if (*s == '\t') og_buf_append_str(b, "\\t");
        else og_buf_append_byte(b, (uint8_t)*s);
    }
    og_buf_append_byte(b, '"');
}

/* A JSON string. */
static void jq(og_buf *b, const char *s)
{
    og_buf_append_byte(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            og_buf_append_byte(b, '\\');
            og_buf_append_byte(b, c);
        } else if (c < 0x20) og_buf_printf(b, "\\u%04x", c);
        else og_buf_append_byte(b, c);
    }
    og_buf_append_byte(b, '"');
}

typedef struct gen_group {
    const char *name;
    const char *members[5];
    size_t nmembers;
} gen_group;

typedef struct gen_rule {
    const char *id;
    const char *group;
    og_policy_action actions[OG_POLICY_ACTION_COUNT];
    size_t nactions;
    const char *scope_field; /* NULL, "branch_scope", "target_branch_scope" */
    const char *scope;
    int deny;
    const char *queries[4];
    size_t nqueries;
} gen_rule;

static const char *const scopes[] = {"any", "protected", "unprotected", "owned", "actor_namespace"};

/* Picks k distinct entries of pool (k <= n) in random order. */
static void pick(const char *const *pool, size_t n, const char **out, size_t k)
{
    const char *tmp[32];
    for (size_t i = 0; i < n; i++) tmp[i] = pool[i];
    for (size_t i = 0; i < k; i++) {
        size_t j = i + below((uint32_t)(n - i));
        const char *t = tmp[i];
        tmp[i] = tmp[j];
        tmp[j] = t;
        out[i] = tmp[i];
    }
}

static void pick_actions(const og_policy_action *pool, size_t n, gen_rule *r)
{
    const char *names[OG_POLICY_ACTION_COUNT], *chosen[OG_POLICY_ACTION_COUNT];
    for (size_t i = 0; i < n; i++) names[i] = og_policy_action_name(pool[i]);
    r->nactions = 1 + below((uint32_t)n);
    pick(names, n, chosen, r->nactions);
    for (size_t i = 0; i < r->nactions; i++) assert_int_equal(og_policy_action_parse(chosen[i], &r->actions[i]), OG_OK);
}

static void one_bundle(og_buf *out, int index)
{
    int server = below(10) == 0;
    og_policy_kind kind = server ? OG_POLICY_KIND_SERVER : OG_POLICY_KIND_GRAPH;
    int flow = below(2);
    gen_group groups[4];
    size_t ngroups = 1 + below(4);
    const char *gnames[4];
    pick(group_pool, N(group_pool), gnames, ngroups);
    for (size_t i = 0; i < ngroups; i++) {
        groups[i].name = gnames[i];
        groups[i].nmembers = 1 + below(4);
        pick(actor_pool, N(actor_pool), groups[i].members, groups[i].nmembers);
    }
    const char *prot[4];
    size_t nprot = below(4);
    for (size_t i = 0; i < nprot; i++) prot[i] = branch_pool[below(N(branch_pool) - 1)]; /* repeats allowed */
    gen_rule rules[6];
    size_t nrules = below(7);
    const char *ids[6];
    pick(rule_pool, N(rule_pool), ids, nrules);
    for (size_t i = 0; i < nrules; i++) {
        gen_rule *r = &rules[i];
        memset(r, 0, sizeof *r);
        r->id = ids[i];
        r->group = groups[below((uint32_t)ngroups)].name;
        r->deny = below(4) == 0;
        if (server) {
            r->actions[0] = OG_POLICY_GRAPH_LIST;
            r->nactions = 1;
            continue;
        }
        switch (below(5)) {
        case 3: /* per-query: invoke_query alone, 1-4 named queries */
            r->actions[0] = OG_POLICY_INVOKE_QUERY;
            r->nactions = 1;
            r->nqueries = 1 + below(4);
            pick(query_pool, N(query_pool), r->queries, r->nqueries);
            break;
        case 4: { /* a stored-queries-only grant: read and/or change (+ invoke_query), named queries,
                   * a branch scope when invoke_query is not among the actions */
            static const og_policy_action stored[] = {OG_POLICY_READ, OG_POLICY_CHANGE, OG_POLICY_INVOKE_QUERY};
            pick_actions(stored, N(stored), r);
            int invoke = 0;
            for (size_t a = 0; a < r->nactions; a++) invoke |= r->actions[a] == OG_POLICY_INVOKE_QUERY;
            if (!invoke && below(2)) r->scope_field = "branch_scope";
            r->nqueries = 1 + below(4);
            pick(query_pool, N(query_pool), r->queries, r->nqueries);
            break;
        }
        case 0:
            pick_actions(branch_actions, N(branch_actions), r);
            if (below(4)) r->scope_field = "branch_scope";
            break;
        case 1:
            pick_actions(target_actions, N(target_actions), r);
            if (below(4)) r->scope_field = "target_branch_scope";
            break;
        default: {
            static const og_policy_action all[] = {OG_POLICY_READ, OG_POLICY_EXPORT, OG_POLICY_CHANGE,
                                                   OG_POLICY_SCHEMA_APPLY, OG_POLICY_BRANCH_CREATE,
                                                   OG_POLICY_BRANCH_DELETE, OG_POLICY_BRANCH_MERGE,
                                                   OG_POLICY_ADMIN, OG_POLICY_INVOKE_QUERY};
            pick_actions(all, N(all), r);
        }
        }
        if (r->scope_field) r->scope = scopes[below((uint32_t)N(scopes))];
    }

    /* The YAML. */
    og_buf y = OG_BUF_INIT;
    og_buf_printf(&y, "# generated bundle %d\nversion: 1\ngroups:\n", index);
    for (size_t i = 0; i < ngroups; i++) {
        og_buf_append_str(&y, "  ");
        yq(&y, groups[i].name);
        if (flow) {
            og_buf_append_str(&y, ": [");
            for (size_t j = 0; j < groups[i].nmembers; j++) {
                if (j) og_buf_append_str(&y, ", ");
                yq(&y, groups[i].members[j]);
            }
            og_buf_append_str(&y, "]\n");
        } else {
            og_buf_append_str(&y, ":\n");
            for (size_t j = 0; j < groups[i].nmembers; j++) {
                og_buf_append_str(&y, "    - ");
                yq(&y, groups[i].members[j]);
                og_buf_append_byte(&y, '\n');
            }
        }
    }
    if (nprot || below(2)) {
        og_buf_append_str(&y, "protected_branches: [");
        for (size_t i = 0; i < nprot; i++) {
            if (i) og_buf_append_str(&y, ", ");
            yq(&y, prot[i]);
        }
        og_buf_append_str(&y, "]\n");
    }
    og_buf_append_str(&y, "rules:\n");
    for (size_t i = 0; i < nrules; i++) {
        gen_rule *r = &rules[i];
        og_buf_append_str(&y, "  - id: ");
        yq(&y, r->id);
        const char *kw = r->deny ? "deny" : "allow";
        if (flow) {
            og_buf_printf(&y, "\n    %s: { actors: { group: ", kw);
            yq(&y, r->group);
            og_buf_append_str(&y, " }, actions: [");
            for (size_t a = 0; a < r->nactions; a++)
                og_buf_printf(&y, "%s%s", a ? ", " : "", og_policy_action_name(r->actions[a]));
            og_buf_append_str(&y, "]");
            if (r->scope_field) og_buf_printf(&y, ", %s: %s", r->scope_field, r->scope);
            if (r->nqueries) {
                og_buf_append_str(&y, ", queries: [");
                for (size_t q = 0; q < r->nqueries; q++) {
                    if (q) og_buf_append_str(&y, ", ");
                    yq(&y, r->queries[q]);
                }
                og_buf_append_str(&y, "]");
            }
            og_buf_append_str(&y, " }\n");
        } else {
            og_buf_printf(&y, "\n    %s:\n      actors:\n        group: ", kw);
            yq(&y, r->group);
            og_buf_append_str(&y, "\n      actions:\n");
            for (size_t a = 0; a < r->nactions; a++)
                og_buf_printf(&y, "        - %s\n", og_policy_action_name(r->actions[a]));
            if (r->scope_field) og_buf_printf(&y, "      %s: %s\n", r->scope_field, r->scope);
            if (r->nqueries) {
                og_buf_append_str(&y, "      queries:\n");
                for (size_t q = 0; q < r->nqueries; q++) {
                    og_buf_append_str(&y, "        - ");
                    yq(&y, r->queries[q]);
                    og_buf_append_byte(&y, '\n');
                }
            }
        }
    }

    og_policy *p = NULL;
    og_status st = og_policy_parse((const char *)y.data, y.len, "generated.yaml", kind, &p);
    if (st != OG_OK) fprintf(stderr, "%s\n%.*s\n", og_error_message(), (int)y.len, (const char *)y.data);
    assert_int_equal(st, OG_OK);
    char graph[32];
    snprintf(graph, sizeof graph, below(2) ? "graph-%d" : "g \"%d\"", index);
    char *cedar = NULL;
    assert_int_equal(og_policy_cedar(p, graph, &cedar, NULL), OG_OK);

    /* One JSON line: the Cedar text, the generator's model, the requests and our answers. */
    og_buf_append_str(out, "{\"bundle\":");
    og_buf_printf(out, "%d,\"cedar\":", index);
    jq(out, cedar);
    char *ents = NULL;
    assert_int_equal(og_policy_cedar_entities(p, graph, &ents, NULL), OG_OK);
    og_buf_append_str(out, ",\"our_entities\":");
    for (const char *c = ents; *c; c++) /* already JSON; one line */
        if (*c != '\n') og_buf_append_byte(out, (uint8_t)*c);
    free(ents);
    og_buf_append_str(out, ",\"graph\":");
    jq(out, graph);
    og_buf_append_str(out, ",\"groups\":{");
    for (size_t i = 0; i < ngroups; i++) {
        if (i) og_buf_append_byte(out, ',');
        jq(out, groups[i].name);
        og_buf_append_str(out, ":[");
        for (size_t j = 0; j < groups[i].nmembers; j++) {
            if (j) og_buf_append_byte(out, ',');
            jq(out, groups[i].members[j]);
        }
        og_buf_append_byte(out, ']');
    }
    og_buf_append_str(out, "},\"protected\":[");
    for (size_t i = 0; i < nprot; i++) {
        if (i) og_buf_append_byte(out, ',');
        jq(out, prot[i]);
    }
    og_buf_append_str(out, "],\"requests\":[");
    for (int q = 0; q < NREQUESTS; q++) {
        og_policy_request req = {0};
        /* Mostly members and the actions rules name, so allows and matched rules are common. */
        const gen_group *gg = &groups[below((uint32_t)ngroups)];
        req.actor = below(3) ? gg->members[below((uint32_t)gg->nmembers)] : actor_pool[below(N(actor_pool))];
        if (nrules && below(2)) {
            const gen_rule *rr = &rules[below((uint32_t)nrules)];
            req.action = rr->actions[below((uint32_t)rr->nactions)];
        } else {
            req.action = server && below(4) ? OG_POLICY_GRAPH_LIST : (og_policy_action)below(OG_POLICY_ACTION_COUNT);
        }
        req.graph_id = graph;
        /* branches in an actor's namespace (the requester's or another's), and creators (the
         * requester, another actor, or unknown) for the owned / actor_namespace scopes */
        char bns[300], tns[300];
        snprintf(bns, sizeof bns, "%s/b", below(2) ? req.actor : actor_pool[below(N(actor_pool))]);
        snprintf(tns, sizeof tns, "%s/t%s", below(2) ? req.actor : actor_pool[below(N(actor_pool))], below(2) ? "/x" : "");
        if (below(4)) req.branch = below(3) ? branch_pool[below(N(branch_pool))] : bns;
        if (below(2)) req.target_branch = below(3) ? branch_pool[below(N(branch_pool))] : tns;
        if (req.branch && below(2)) req.branch_creator = below(2) ? req.actor : actor_pool[below(N(actor_pool))];
        if (req.target_branch && below(2))
            req.target_branch_creator = below(2) ? req.actor : below(4) ? actor_pool[below(N(actor_pool))] : "";
        /* mostly on invoke_query, often on read/change (a stored query's call), sometimes on
         * other actions (no rule can list queries there) */
        int stored_lane = req.action == OG_POLICY_INVOKE_QUERY || req.action == OG_POLICY_READ || req.action == OG_POLICY_CHANGE;
        if (req.action == OG_POLICY_INVOKE_QUERY ? below(6) : stored_lane ? below(2) : !below(6))
            req.query = query_pool[below(N(query_pool))];
        og_policy_decision d;
        assert_int_equal(og_policy_decide(p, &req, &d), OG_OK);
        if (q) og_buf_append_byte(out, ',');
        og_buf_append_str(out, "{\"actor\":");
        jq(out, req.actor);
        og_buf_printf(out, ",\"action\":\"%s\"", og_policy_action_name(req.action));
        if (req.branch) {
            og_buf_append_str(out, ",\"branch\":");
            jq(out, req.branch);
        }
        if (req.target_branch) {
            og_buf_append_str(out, ",\"target_branch\":");
            jq(out, req.target_branch);
        }
        if (req.query) {
            og_buf_append_str(out, ",\"query\":");
            jq(out, req.query);
        }
        if (req.branch_creator) {
            og_buf_append_str(out, ",\"branch_creator\":");
            jq(out, req.branch_creator);
        }
        if (req.target_branch_creator) {
            og_buf_append_str(out, ",\"target_branch_creator\":");
            jq(out, req.target_branch_creator);
        }
        og_buf_printf(out, ",\"branch_is_protected\":%s,\"target_branch_is_protected\":%s",
                      og_policy_is_protected(p, req.branch) ? "true" : "false",
                      og_policy_is_protected(p, req.target_branch) ? "true" : "false");
        og_buf_printf(out, ",\"allowed\":%s,\"rule\":", d.allowed ? "true" : "false");
        if (d.matched_rule_id) jq(out, d.matched_rule_id);
        else og_buf_append_str(out, "null");
        og_buf_append_byte(out, '}');
    }
    og_buf_append_str(out, "]}\n");
    free(cedar);
    og_policy_free(p);
    og_buf_free(&y);
}

static void our_decisions_equal_cedars(void **state)
{
    (void)state;
    const char *seed = getenv("OG_POLICY_DIFF_SEED");
    rng = seed ? strtoull(seed, NULL, 10) : 0x5eed2026u;
    if (!rng) rng = 1;
    og_buf corpus = OG_BUF_INIT;
    og_buf_append_str(&corpus, "{\"schema\":");
    jq(&corpus, og_policy_cedar_schema());
    og_buf_append_str(&corpus, "}\n");
    for (int i = 0; i < NBUNDLES; i++) one_bundle(&corpus, i);
    char path[1024];
    snprintf(path, sizeof path, "%s/policy-cedar-corpus.jsonl", OG_BINARY_DIR);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(corpus.data, 1, corpus.len, f), corpus.len);
    assert_int_equal(fclose(f), 0);
    og_buf_free(&corpus);

    /* Node must be there: install-deps installs it, and a skipped differential test would
     * hide a divergence. */
    if (system("command -v node >/dev/null 2>&1") != 0) {
        fprintf(stderr, "FAIL: node is not on PATH; run scripts/install-deps.sh (the Cedar differential test "
                        "cannot be skipped)\n");
        fail();
    }
    char cmd[3072];
    snprintf(cmd, sizeof cmd, "node %s/tests/policy/cedar_diff.mjs %s %d", OG_SOURCE_DIR, path, NBUNDLES * NREQUESTS);
    int rc = system(cmd);
    if (rc != 0) fprintf(stderr, "FAIL: %s exited with %d\n", cmd, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
    assert_int_equal(rc, 0);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(our_decisions_equal_cedars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
