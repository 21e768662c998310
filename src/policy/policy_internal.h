/*
 * policy_internal.h — what the policy layer's files share: the compiled bundle and the small
 * libyaml helpers the bundle and tests-file readers both use.  Not part of the contract.
 */
#ifndef OG_POLICY_INTERNAL_H
#define OG_POLICY_INTERNAL_H

#include <stdint.h>
#include <yaml.h>

#include "policy/policy.h"

enum {
    POL_SCOPE_NONE = -1,
    POL_SCOPE_ANY = 0,
    POL_SCOPE_PROTECTED = 1,
    POL_SCOPE_UNPROTECTED = 2,
    POL_SCOPE_OWNED = 3,          /* the branch was created by the requesting actor */
    POL_SCOPE_ACTOR_NAMESPACE = 4 /* the branch is named `<actor>/...` */
};

typedef struct pol_rule {
    char *id;
    size_t line;
    char *group;
    size_t group_idx;       /* index into og_policy.groups */
    uint32_t actions;       /* bit (1u << og_policy_action) */
    og_policy_action order[OG_POLICY_ACTION_COUNT]; /* the actions as written, duplicates dropped */
    size_t naction;
    int branch_scope;       /* POL_SCOPE_* */
    int target_scope;
    int deny;               /* a `deny` rule (Cedar forbid) */
    char **queries;         /* `queries:` in file order (invoke_query only); NULL = any query */
    size_t nqueries;
} pol_rule;

typedef struct pol_actor {
    char *id;
    uint8_t *groups;        /* bitmap over og_policy.groups */
} pol_actor;

struct og_policy {
    og_policy_kind kind;
    char **groups;          /* sorted, distinct */
    size_t ngroups;
    pol_actor *actors;      /* sorted by id, distinct */
    size_t nactors;
    char **protected_branches; /* sorted, distinct */
    char **protected_skeletons; /* [i]: confusable skeleton of protected_branches[i] (NULL: none) */
    size_t nprotected;
    pol_rule *rules;        /* in file order */
    size_t nrules;
    int has_query_rules;    /* some rule has `queries:` */
    int has_owner_rules;    /* some rule has an `owned` scope: surfaces must look up branch creators */
};

/* ---- YAML helpers (yaml_util.c) ---- */
typedef struct pol_yaml {
    yaml_document_t doc;
    int loaded;
    const char *name;       /* file name for messages */
} pol_yaml;

/* Parses exactly one YAML document.  OG_ERR_PARSE "name:line: ..." on a syntax error, an empty
 * input or a second document. */
og_status pol_yaml_load(pol_yaml *y, const char *src, size_t len, const char *name);
void pol_yaml_free(pol_yaml *y);
yaml_node_t *pol_yaml_root(pol_yaml *y);
yaml_node_t *pol_yaml_node(pol_yaml *y, int index);
size_t pol_line(const yaml_node_t *n);
/* A plain ~ / null / empty scalar. */
int pol_is_null(const yaml_node_t *n);
/* A scalar as a NUL-free string (borrowed); OG_ERR_PARSE "name:line: <what> must be a string". */
og_status pol_scalar(pol_yaml *y, const yaml_node_t *n, const char *what, const char **out);
/* Sets the message "name:line: <fmt>" and returns code. */
og_status pol_fail(pol_yaml *y, og_status code, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Checks a mapping's keys are scalars, known (one of `known`, NULL-terminated) and distinct. */
og_status pol_check_keys(pol_yaml *y, yaml_node_t *map, const char *what, const char *const *known);
/* The value of key `k` in a mapping, or NULL. */
yaml_node_t *pol_get(pol_yaml *y, yaml_node_t *map, const char *k);

/* 1 when s is empty or only Unicode White_Space (Rust's str::trim().is_empty()). */
int pol_blank(const char *s);
/* A string -> a freshly allocated copy, or NULL on OOM. */
char *pol_strdup(const char *s);

#endif
