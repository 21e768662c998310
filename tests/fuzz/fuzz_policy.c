/*
 * fuzz_policy.c — libFuzzer target for the policy bundle and tests-file readers: any input
 * must load or fail with a typed "fuzz.yaml:<line>: ..." message (never crash, leak or loop).
 * For a bundle that loads, its Cedar text is produced and a few requests over the names the
 * input itself contains are decided; each decision must be well formed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(og_status st)
{
    if (st == OG_ERR_NOMEM) return;
    if (st != OG_ERR_PARSE && st != OG_ERR_INVALID) abort();
    if (strncmp(og_error_message(), "fuzz.yaml:", 10) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    for (int k = 0; k < 2; k++) {
        og_policy *p = NULL;
        og_status st = og_policy_parse((const char *)data, size, "fuzz.yaml",
                                       k ? OG_POLICY_KIND_SERVER : OG_POLICY_KIND_GRAPH, &p);
        if (st != OG_OK) {
            if (p) abort();
            check_failure(st);
            continue;
        }
        char *text = NULL;
        if (og_policy_cedar(p, "g", &text, NULL) != OG_OK || !text) abort();
        free(text);
        /* Requests whose names are slices of the input (so known actors and branches occur). */
        static const char *const names[] = {"main", "a", "team", "act-a", "", "release"};
        for (int i = 0; i < 24; i++) {
            og_policy_request req = {.actor = names[i % 6], .action = (og_policy_action)(i % OG_POLICY_ACTION_COUNT),
                                     .graph_id = "g", .branch = i & 1 ? names[(i / 2) % 6] : NULL,
                                     .target_branch = i & 2 ? names[(i / 3) % 6] : NULL};
            og_policy_decision d;
            if (og_policy_decide(p, &req, &d) != OG_OK) abort();
            if (d.allowed && (!d.matched_rule_id || d.unknown_actor || d.mask_as_not_found)) abort();
            if (!d.allowed && d.matched_rule_id) abort();
            if (!memchr(d.message, '\0', sizeof d.message)) abort();
        }
        og_policy_free(p);
    }
    og_policy_tests *t = NULL;
    og_status st = og_policy_tests_parse((const char *)data, size, "fuzz.yaml", &t);
    if (st == OG_OK) og_policy_tests_free(t);
    else {
        if (t) abort();
        check_failure(st);
    }
    return 0;
}
