/*
 * bench_policy.c — how long one authorization decision takes (og_policy_decide), for
 * bench/policy/run.sh, which sets it beside Cedar itself (cedar-wasm) on the same requests.
 *
 *   bench_policy BUNDLE [DECISIONS] [EMIT.json]
 *
 * Builds 1024 requests over the bundle's actors (plus one unknown actor), every action and a
 * few branches, decides them DECISIONS times in all (default 2,000,000) and prints `key: value`
 * lines (CPU time, so other processes on the machine do not inflate it).  With EMIT.json it
 * also writes the schema, policies, entities and the requests with their Cedar context and
 * our decision, for bench/policy/cedar_bench.mjs.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/policy.h"

#define NREQ 1024

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_policy BUNDLE [DECISIONS] [EMIT.json]\n");
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 2000000;
    og_policy *p = NULL;
    double t0 = cpu_now();
    if (og_policy_load(argv[1], OG_POLICY_KIND_GRAPH, &p) != OG_OK) {
        fprintf(stderr, "bench_policy: %s\n", og_error_message());
        return 1;
    }
    double load_s = cpu_now() - t0;
    char *ents_text = NULL, *cedar = NULL;
    if (og_policy_cedar_entities(p, "bench", &ents_text, NULL) != OG_OK ||
        og_policy_cedar(p, "bench", &cedar, NULL) != OG_OK)
        return 1;
    json_t *ents = json_loads(ents_text, 0, NULL);
    const char *actors[256];
    size_t nactors = 0;
    for (size_t i = 0; i < json_array_size(ents) && nactors < 255; i++) {
        json_t *uid = json_object_get(json_array_get(ents, i), "uid");
        if (!strcmp(json_string_value(json_object_get(uid, "type")), "Omnigraph::Actor"))
            actors[nactors++] = json_string_value(json_object_get(uid, "id"));
    }
    actors[nactors++] = "act-unknown";
    static const char *const branches[] = {"main", "release", "feature", "dev", NULL};
    og_policy_request reqs[NREQ];
    uint64_t r = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < NREQ; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        og_policy_action a = (og_policy_action)(r % (OG_POLICY_ACTION_COUNT - 1)); /* per-graph actions */
        reqs[i] = (og_policy_request){.actor = actors[(r >> 8) % nactors], .action = a, .graph_id = "bench",
                                      .branch = branches[(r >> 20) % 5], .target_branch = branches[(r >> 30) % 5]};
    }
    long allowed = 0;
    og_policy_decision d;
    t0 = cpu_now();
    for (long i = 0; i < n; i++) {
        og_policy_decide(p, &reqs[i % NREQ], &d);
        allowed += d.allowed;
    }
    double s = cpu_now() - t0;
    printf("bundle: %s\nactors: %zu\ndecisions: %ld\nallowed: %ld\n", argv[1], nactors - 1, n, allowed);
    printf("load_us: %.1f\nns_per_decision: %.1f\ndecisions_per_s: %.0f\n", load_s * 1e6, s / (double)n * 1e9,
           (double)n / s);

    if (argc > 3) {
        json_t *o = json_object();
        json_object_set_new(o, "schema", json_string(og_policy_cedar_schema()));
        json_object_set_new(o, "cedar", json_string(cedar));
        json_object_set(o, "entities", ents);
        json_t *list = json_array();
        for (int i = 0; i < NREQ; i++) {
            og_policy_decide(p, &reqs[i], &d);
            json_t *q = json_object(), *ctx = json_object();
            json_object_set_new(q, "actor", json_string(reqs[i].actor));
            json_object_set_new(q, "action", json_string(og_policy_action_name(reqs[i].action)));
            json_object_set_new(ctx, "has_branch", json_boolean(reqs[i].branch != NULL));
            json_object_set_new(ctx, "branch", json_string(reqs[i].branch ? reqs[i].branch : ""));
            json_object_set_new(ctx, "has_target_branch", json_boolean(reqs[i].target_branch != NULL));
            json_object_set_new(ctx, "target_branch", json_string(reqs[i].target_branch ? reqs[i].target_branch : ""));
            json_object_set_new(ctx, "branch_is_protected", json_boolean(og_policy_is_protected(p, reqs[i].branch)));
            json_object_set_new(ctx, "target_branch_is_protected",
                                json_boolean(og_policy_is_protected(p, reqs[i].target_branch)));
            json_object_set_new(q, "context", ctx);
            json_object_set_new(q, "allowed", json_boolean(d.allowed));
            json_array_append_new(list, q);
        }
        json_object_set_new(o, "requests", list);
        if (json_dump_file(o, argv[3], JSON_COMPACT) != 0) return 1;
        json_decref(o);
    }
    json_decref(ents);
    free(ents_text);
    free(cedar);
    og_policy_free(p);
    return 0;
}
