/*
 * fuzz_branch_name.c — libFuzzer target for the branch-name rules and the confusable
 * skeletons behind protected-branch matching (src/graph/names.c, src/util/ident.c): any bytes
 * must be accepted or refused with OG_ERR_INVALID and a message (never crash, leak or read
 * past the name), and what the stricter new-name check accepts must keep its promises — it
 * passes the general check, is not confusable with `main`, and a policy protecting `main`
 * does not count it protected unless it is `main`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "policy/policy.h"
#include "util/error.h"
#include "util/ident.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static og_policy *protect_main(void)
{
    static og_policy *p;
    static const char bundle[] = "version: 1\ngroups: {g: [a]}\nprotected_branches: [main]\nrules: []\n";
    if (!p && og_policy_parse(bundle, sizeof bundle - 1, "fuzz.yaml", OG_POLICY_KIND_GRAPH, &p) != OG_OK) abort();
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 600) return 0;
    char *name = malloc(size + 1);
    if (!name) return 0;
    memcpy(name, data, size);
    name[size] = '\0'; /* names are C strings: an embedded NUL ends it */
    og_status st = og_branch_name_check_new(name);
    if (st != OG_OK) {
        if (st != OG_ERR_INVALID || !og_error_message()[0]) abort();
    } else {
        if (og_branch_name_check(name) != OG_OK) abort();
        if (og_ident_confusable(name, "main")) abort();
        if (strcmp(name, "main") && og_policy_is_protected(protect_main(), name)) abort();
    }
    char sk[OG_IDENT_SKELETON_MAX];
    if (og_ident_skeleton(name, sk, sizeof sk) == OG_OK) {
        if (strlen(sk) >= sizeof sk) abort();
        /* a name and its own skeleton never count as confusable with themselves */
        if (og_ident_confusable(name, name)) abort();
    }
    og_error_clear();
    free(name);
    return 0;
}
