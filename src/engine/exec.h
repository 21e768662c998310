/*
 * exec.h — execution of a read query's typed IR (compiler/ir.h) over one snapshot.
 *
 * The executor never sees a table, a file or a store key: it reads through an og_exec_source,
 * which the engine backs with cached table views of the snapshot's table versions.  Columns are
 * addressed by stable property id (0 = the `id` column), so a rename never changes a plan.
 *
 * Model (ARCHITECTURE.md §5, reference-language.md §3.7): the pipeline passes og_bindings —
 * row numbers per bound variable — between operators; property values are gathered only where
 * a predicate, a projection or an ordering needs them.  Result order is a pure function of the
 * snapshot and the query: ORDER keys, then the ids of every bound variable (by variable name).
 */
#ifndef OG_ENGINE_EXEC_H
#define OG_ENGINE_EXEC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/ir.h"
#include "engine/topology.h"
#include "index/index.h"
#include "omnigraph.h"
#include "util/vector.h"

#define OG_PROP_ID_COLUMN 0 /* the `id` column of a node or edge table */
#define OG_PROP_SRC_COLUMN UINT64_MAX       /* the `src` column of an edge table */
#define OG_PROP_DST_COLUMN (UINT64_MAX - 1) /* the `dst` column of an edge table */

struct og_colzones; /* engine/colscan.h */
struct og_dictcol;  /* engine/dictcol.h */

typedef struct og_exec_source {
    void *ud;
    /* Live rows of node type `node` (index into cat->nodes) in the snapshot. */
    og_status (*node_rows)(void *ud, size_t node, size_t *n);
    /* The whole column of property `prop_id` (or OG_PROP_ID_COLUMN) over those rows; borrowed,
     * valid for the whole execution.  A property missing from the stored table reads as an
     * all-null column of the property's type. */
    og_status (*node_column)(void *ud, size_t node, uint64_t prop_id, const og_vector **out);
    og_status (*edge_column)(void *ud, size_t edge, uint64_t prop_id, const og_vector **out);
    /* Adjacency of edge type `edge` between its from/to node rows; borrowed. */
    og_status (*edge_topology)(void *ud, size_t edge, const og_topology **out);
    /* Optional (may be NULL): the row of node type `node` whose id is id[0..len), or OG_OK
     * with *row = UINT32_MAX when there is none — a miss is no error status, so a lookup that
     * could not read is never taken for "no such row".  Lets a scan with an equality on a
     * single @key property look the row up instead of filtering the whole table. */
    og_status (*node_find_id)(void *ud, size_t node, const char *id, size_t len, uint32_t *row);
    /* Optional (may be NULL): property `prop_id` of rows[0..n) (UINT32_MAX = null) of node
     * (is_edge 0) or edge type `type` as an owned vector, without loading the whole column.
     * The executor uses it for small bindings; OG_ERR_UNSUPPORTED = use the column instead. */
    og_status (*gather)(void *ud, int is_edge, size_t type, uint64_t prop_id, const uint32_t *rows, size_t n,
                        og_vector *out);
    /* Optional (may be NULL = no provider): the embedding of text[0..len) as dim floats into
     * out, for `nearest` with a String query; `model` is the model the property's @embed
     * recorded (NULL when none), which the provider must resolve to.  OG_ERR_UNSUPPORTED when
     * there is no provider. */
    og_status (*embed_text)(void *ud, const char *model, const char *text, size_t len, uint32_t dim, float *out);
    /* Optional (may be NULL = no index files): the fragments behind node type `node`'s rows, in
     * view order, each with its mapped index file of kind `kind` (index/index.h) for property
     * `prop_id` when one exists.  *out is owned (og_index_frags_free); its `addrs` are borrowed
     * for the execution.  A reader must give the same answers whatever files exist. */
    og_status (*node_index)(void *ud, size_t node, uint64_t prop_id, const char *kind, struct og_index_frags *out);
    /* Optional (may be NULL): zone maps of node type `node`'s column `prop_id` (colscan.h),
     * borrowed like the column; *out = NULL when there are none.  Only ever lets a filter
     * skip rows that cannot match. */
    og_status (*node_zones)(void *ud, size_t node, uint64_t prop_id, const struct og_colzones **out);
    /* Optional (may be NULL): the dictionary-coded form of a String property's column
     * (dictcol.h) of node (is_edge 0) or edge type `type`, borrowed like the column, or
     * *out = NULL when it has none (not a String, too many distinct values, the plain column
     * already loaded, a property the stored table lacks): the caller reads the column then.
     * The executor filters, groups, orders and gathers through it when it is there. */
    og_status (*column_dict)(void *ud, int is_edge, size_t type, uint64_t prop_id, const struct og_dictcol **out);
    /* Optional (both NULL = never stream): reading columns batch by batch instead of whole
     * (issue 36; docs/engine.md "Memory").  node_stream_plan sets *yes = 1 when node type
     * `node`'s properties prop_ids[0..n) should be streamed — none is loaded, and together
     * they would take more of the handle's cache than a whole load may — and then types[i]
     * to each one's type.  node_stream reads them: use(ctx, part, row0, rows, cols) per batch
     * of node rows [row0, row0 + rows), cols[i] property prop_ids[i] (borrowed for the call);
     * parts = 2 lets two threads take part 0 (the earlier rows) and part 1.  OG_ERR_UNSUPPORTED
     * before any batch: not streamable after all (load the columns). */
    og_status (*node_stream_plan)(void *ud, size_t node, const uint64_t *prop_ids, size_t n, og_type *types, int *yes);
    og_status (*node_stream)(void *ud, size_t node, const uint64_t *prop_ids, size_t n, int parts,
                             og_status (*use)(void *ctx, int part, size_t row0, size_t rows, const og_vector *cols),
                             void *ctx);
} og_exec_source;

/* Bindings of at most this many rows gather properties by point reads (og_exec_source.gather). */
#define OG_EXEC_POINT_GATHER_MAX 64

typedef struct og_result {
    char *query;       /* the query's name (owned) */
    size_t ncols, nrows;
    char **names;      /* owned */
    og_qtype *types;
    og_vector *cols;   /* owned vectors, nrows each */
    /* rows out of every operator of the match pipeline (anti-join inner pipelines included):
     * their sum and the largest — the work a query did, independent of timing */
    uint64_t rows_through, rows_peak;
} og_result;

void og_result_free(og_result *r);

/* Converts a JSON object of parameters (may be NULL) into one 1-row vector per declared
 * parameter (*out: ir->nparams vectors; free each with og_vector_free, then free(*out)).
 * A missing parameter becomes a 0-row vector: nullable ones read as null, others fail when
 * evaluated ("parameter 'x' not provided").  Type errors are OG_ERR_INVALID naming the
 * parameter. */
og_status og_exec_bind_params(const og_ir_query *ir, const json_t *params, og_vector **out);

/* The value of a constant expression (literal, parameter, now()) as a 1-row owned vector. */
og_status og_exec_const(const og_ir_query *ir, const og_ir_expr *e, const og_vector *params, int64_t now_ms,
                        og_vector *out);

/* Runs read query `ir` with parameter vectors `params` (from og_exec_bind_params) at time
 * `now_ms` (what now() returns, the same for the whole query).  Errors: OG_ERR_INVALID (a
 * parameter), OG_ERR_UNSUPPORTED (a feature this build does not execute yet, named), errors
 * of the source. */
og_status og_exec_read(const og_ir_query *ir, const og_exec_source *src, const og_vector *params, int64_t now_ms,
                       og_result *out);

/* The plan of read query `ir` as text (docs/query-language.md "Explain"): one line per
 * operator in run order — access path of each binding (key lookup or scan, cross join of a
 * separate component), traversal, pushed predicates, where each filter runs — with its
 * estimated rows and, when `run` is non-zero, the rows it actually produced (the query is
 * executed; *res, when not NULL, receives its result — free it with og_result_free).
 * Without `run` nothing is scanned: estimates read row and edge counts only (and a key
 * lookup, which is one index probe).  Appends to out.  Errors as og_exec_read. */
og_status og_exec_explain(const og_ir_query *ir, const og_exec_source *src, const og_vector *params, int64_t now_ms,
                          int run, og_buf *out, og_result *res);

/* 1 (the default): a filter over several bindings runs as soon as they are all bound.  0:
 * where the compiler wrote it, after every traversal of its block.  Tests and benchmarks
 * flip it to measure the difference; nothing else should. */
extern int og_exec_place_filters;

/* 1 (the default): a separate component joined by an equality with the rows before it
 * (`$a.k = $b.k`) is a hash join; 0: the cross join, filtered.  Same answers; tests and
 * benchmarks flip it to compare. */
extern int og_exec_hash_join;

/* 1 (the default): comparisons and aggregates of the shapes engine/colscan.h takes run on its
 * typed column kernels (with zone maps); 0: the generic value-by-value paths.  Same answers;
 * tests and benchmarks flip it to compare. */
extern int og_exec_typed;

/* 1 (the default): a scan + filter + aggregate over one node type whose columns the source
 * would rather stream (og_exec_source.node_stream_plan) reads them batch by batch, fused
 * (exec_stream.c); 0: never.  Same answers; tests flip it to compare. */
extern int og_exec_stream;

#endif
