/*
 * exec_internal.h — the state the read executor's files share: one execution (exec), one
 * pipeline's bindings (pipe), the operators as explained (xstep), and the functions one file
 * calls in another.  exec_read.c holds the values, filter placement, the operators and the
 * driver; exec_join.c the hash join of a separate component; exec_project.c projection,
 * aggregation and ordering; exec_explain.c the estimated plan; exec_stream.c the streamed
 * aggregate.  exec.h is the contract the rest of the engine sees; nothing outside these five
 * files includes this header.
 */
#ifndef OG_ENGINE_EXEC_INTERNAL_H
#define OG_ENGINE_EXEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/aggregate.h"
#include "engine/bindings.h"
#include "engine/dictcol.h"
#include "engine/exec.h"
#include "engine/filter.h"
#include "engine/search.h"
#include "engine/shortest.h"
#include "engine/sort.h"

/* One operator as explained: where it runs, what it was estimated and found to produce. */
typedef struct xstep {
    const og_ir_op *op;
    int depth;          /* 0 top level; n inside the n-th nested anti-join */
    char label[24];     /* "3", "4.1" */
    size_t written;     /* 1-based position as the compiler wrote it in its pipeline */
    double est;
    uint64_t rows;      /* actual rows after the operator (when ran) */
    int ran;
    int key_lookup;     /* SCAN: the row came from the key index */
    int cross;          /* SCAN: joined to the rows before it (a separate component) */
    int hash;           /* SCAN: that join is a hash join on an equality (og_xr_hash_join); FILTER: its key */
    int fused;          /* FILTER: applied while that join forms its pairs */
} xstep;

typedef struct exec {
    const og_ir_query *ir;
    const og_exec_source *src;
    const og_vector *params;
    int64_t now_ms;
    og_search *search; /* the search functions' state (engine/search.h) */
    uint64_t rows_through, rows_peak; /* rows out of every operator: sum and largest */
    xstep *steps;      /* explain: every operator, in run order (NULL = not explaining) */
    size_t nsteps, steps_cap;
    /* the page (`limit` / `offset`, literals or parameters, resolved by resolve_page in exec_read.c): rows
     * [offset, offset + limit) of the ordered result; `window` = offset + limit is how many
     * leading rows the top-k paths (search candidates) must keep, 0 = all of them */
    int has_limit;
    uint64_t limit, offset, window;
    og_paths *paths;   /* the `shortest { }` paths found (engine/shortest.h), owned by og_xr_run */
    const uint64_t *weights; /* a counted last hop (engine/degree_count.h): the rows each row stands for */
} exec;

/* One pipeline's state: bindings plus the variable → column map. */
typedef struct pipe {
    og_bindings b;
    int *var_col;   /* ir->nvars entries */
    int started;    /* a SCAN (or the outer rows of an anti-join) has produced the row set */
    int identity_col; /* a column known to hold 0..n-1 over its whole table, or -1 */
} pipe;

/* exec_read.c: values, filter placement, operators, the driver. */
/* A value for every row of p (or one row to broadcast).  *out is always an owned vector. */
og_status og_xr_eval(exec *x, const pipe *p, const og_ir_expr *e, og_vector *out);
/* Keeps the rows of p satisfying every predicate of preds[0..npreds). */
og_status og_xr_filter_rows(exec *x, pipe *p, const og_ir_pred *preds, size_t npreds);
/* The rows of var's property column as colscan.h wants them (og_xr_var_rows), or its coded
 * column (dictcol.h) when the source has one (og_xr_var_dict, else *d = NULL). */
og_status og_xr_var_rows(exec *x, const pipe *p, int var, uint64_t prop_id, const og_vector **col,
                         const uint32_t **rows);
og_status og_xr_var_dict(exec *x, const pipe *p, int var, uint64_t prop_id, const og_dictcol **d,
                         const uint32_t **rows);
/* The values of var's property prop_id (OG_PROP_ID_COLUMN: its ids) for every row of p. */
og_status og_xr_gather_var(exec *x, const pipe *p, int var, uint64_t prop_id, og_vector *out);
/* Marks in vars the variables e reads; *opaque = 1 when it holds an expression placement does
 * not look into (a search score, an aggregate): a filter over it stays where written. */
void og_xr_expr_vars(const og_ir_expr *e, unsigned char *vars, int *opaque);
/* 1 when filter op may run with the variables in `bound`. */
int og_xr_filter_ready(const og_ir_query *ir, const og_ir_op *op, const unsigned char *bound, unsigned char *vars);
/* Marks in bound the variables op binds. */
void og_xr_mark_bound(const og_ir_op *op, unsigned char *bound);
/* order[0..nops) = the run order of ops (each filter early), given the variables bound before the
 * pipeline (bound becomes those bound after it). */
og_status og_xr_schedule_ops(const og_ir_query *ir, const og_ir_op *ops, size_t nops, unsigned char *bound,
                             size_t *order);
/* A SCAN whose `key = constant` predicate names its one row: *hit = 1 and *row (UINT32_MAX:
 * no such node); anything else leaves *hit 0. */
og_status og_xr_key_lookup(exec *x, const og_ir_op *op, int *hit, uint32_t *row);
/* Runs the query of *xp into out (explain reads the counters it leaves in *xp). */
og_status og_xr_run(exec *xp, og_result *out);

/* The kernels' operator of an IR comparison (exec_read.c). */
og_cmp_op og_xr_cmp_op(og_ir_cmp c);

/* exec_stream.c: a scan + filter + aggregate of one node type read batch by batch. */
/* The aggregated columns of x's query into cols[0..ncolumns), *nrows groups, *done = 1, when
 * its shape streams (one scan of a node type, predicates the typed kernels take over numeric
 * properties, aggregates og_colstream takes, a coded group key or none) and the source would
 * rather stream its columns; *done = 0: nothing done. */
og_status og_xr_stream_aggregate(exec *x, og_vector *cols, size_t *nrows, int *done);

/* exec_join.c: the hash join of a separate component on an equality. */
/* Which of fs[0..nf) keys a hash join with scan variable `var` (-1: none). */
int og_xr_hash_key_filter(const og_ir_query *ir, int var, const og_ir_op *const *fs, size_t nf, int *scan_left);
/* Joins p's rows with scan pipe s on that key; *used = 0 when it does not apply. */
og_status og_xr_hash_join(exec *x, pipe *p, const og_ir_op *op, const pipe *s, const og_ir_op *const *filters,
                          size_t nf, uint64_t *pairs, int *used);

/* exec_project.c: projection, aggregation, order. */
og_status og_xr_broadcast(og_vector *v, size_t n); /* a 1-row constant to n rows, in place */
og_agg_fn og_xr_agg_fn(og_qagg a);
og_status og_xr_project_aggregate(exec *x, const pipe *p, og_vector *cols, size_t *nrows);
og_status og_xr_order_rows(exec *x, const pipe *p, const og_vector *cols, size_t nrows, int aggregate,
                           const og_sort_key *rank_key, uint32_t *perm);
og_status og_xr_keep_rank_window(exec *x, pipe *p, const og_sort_key *rank, uint64_t window);

#endif
