/*
 * stored.h — stored queries: named, typed `.gq` queries a graph publishes (through cluster
 * apply), listed and invoked by name with JSON parameters (reference-surfaces.md §1–§2:
 * `queries list|validate`, `GET /graphs/{id}/queries`, `POST /graphs/{id}/queries/{name}`).
 *
 * A set is built from `.gq` texts checked against one schema; each query keeps its source,
 * its parameter declarations (the contract: a JSON Schema is derived from each type), and its
 * description / instruction annotations.  Invocation runs through the public API exactly like
 * the ad-hoc lane (og_db_query / og_db_mutate_ex), so results and errors are the same.
 *
 * Surfaces (CLI, HTTP server, MCP) share this module; none of it knows a transport.
 */
#ifndef OG_CLUSTER_STORED_H
#define OG_CLUSTER_STORED_H

#include <stddef.h>

#include "omnigraph.h"

typedef struct og_stored_set og_stored_set;

typedef struct og_stored_param {
    char *name;       /* without '$' */
    char *gq_type;    /* "String", "[I32]", "Vector(3)" (non-null spelling) */
    const char *kind; /* string bool int bigint float date datetime blob vector list */
    const char *item_kind; /* list: the item kind, else NULL */
    unsigned vector_dim;   /* vector: the dimension, else 0 */
    int nullable;
} og_stored_param;

typedef struct og_stored_query {
    char *name;
    char *tool_name;     /* the MCP tool name (= name) */
    char *description;   /* may be NULL */
    char *instruction;   /* may be NULL */
    int mutation;
    int mcp_expose;      /* 1: an MCP tool */
    og_stored_param *params;
    size_t nparams;
    char *file;          /* display name of the .gq it came from */
    char *source;        /* the whole .gq text (the query is run by name from it) */
} og_stored_query;

og_status og_stored_set_new(og_stored_set **out);
void og_stored_set_free(og_stored_set *s);

/* Parses `text` (display name `file`) and type-checks the queries named in `names`
 * (NULL-terminated; NULL = every query of the file) against `schema` (.pg text), adding them
 * to the set.  Errors (nothing added): OG_ERR_PARSE (the file, or the schema), OG_ERR_TYPE
 * ("query `x` does not type-check against the schema: T5: ..."), OG_ERR_NOT_FOUND (a name the
 * file does not declare), OG_ERR_ALREADY_EXISTS (a name already in the set). */
og_status og_stored_set_add(og_stored_set *s, const char *file, const char *text, size_t len,
                            const char *const *names, const char *schema, size_t schema_len);

size_t og_stored_set_count(const og_stored_set *s);
/* Sorted by name. */
const og_stored_query *og_stored_set_at(const og_stored_set *s, size_t i);
const og_stored_query *og_stored_set_find(const og_stored_set *s, const char *name);
/* The exposed query whose tool_name is `tool`, or NULL. */
const og_stored_query *og_stored_set_find_tool(const og_stored_set *s, const char *tool);

/* {"queries":[{name, tool_name, mcp_expose, description?, instruction?, mutation,
 * params:[{name, kind, item_kind?, vector_dim?, nullable}]}]} (compact).  og_free. */
og_status og_stored_set_list_json(char **out, const og_stored_set *s);

/* The JSON Schema (draft 2020-12 subset) of the query's parameters as one object:
 * {"type":"object","properties":{...},"required":[...],"additionalProperties":false}.
 * og_free. */
og_status og_stored_query_params_schema(char **out, const og_stored_query *q);
/* The same as a jansson object (new reference). */
struct json_t;
struct json_t *og_stored_params_schema_json(const og_stored_query *q);

typedef struct og_stored_invoke_opts {
    const char *params_json;  /* a JSON object, NULL = {} */
    const char *branch;       /* NULL = main */
    const char *snapshot;     /* reads only: a commit id */
    int expect_mutation;      /* -1 = either; 0/1 must match the query's kind */
    const char *expected_head;/* mutations: compare-and-swap on the branch head (may be NULL) */
    const char *actor;        /* echoed as actor_id in a ChangeOutput (may be NULL) */
    /* reads only: render rows [row_offset, row_offset + row_limit) of the result (row_limit 0 =
     * all); *total_rows, when given, receives the result's full row count */
    size_t row_offset, row_limit;
    size_t *total_rows;
} og_stored_invoke_opts;

/* Checks the parameters against the declarations (unknown name, missing non-nullable, JSON
 * kind), then runs the query: a read renders ReadOutput {query_name, target, row_count,
 * columns, rows, graph_commit_id}; a mutation ChangeOutput {query_name, branch,
 * affected_nodes, affected_edges, actor_id?, commit}.  Errors: OG_ERR_INVALID
 * ("param `$x`: ...", expect_mutation mismatch, a snapshot given to a mutation), and every
 * error of og_db_query / og_db_mutate_ex.  *out is JSON text (og_free). */
og_status og_stored_invoke(char **out, og_db *db, const og_stored_query *q, const og_stored_invoke_opts *o);

/* The ChangeOutput of a published (or empty) mutation receipt, as og_stored_invoke renders it;
 * shared with the ad-hoc mutate surfaces.  og_free. */
og_status og_stored_change_output(char **out, og_db *db, const char *query_name, const char *branch,
                                  const og_receipt *r, const char *actor);

/* Checks params_json against q's declarations only (the first check og_stored_invoke does). */
og_status og_stored_check_params(const og_stored_query *q, const char *params_json);

#endif
