/*
 * ir.h — the typed intermediate representation of a checked .gq query (INVARIANTS.md 10):
 * everything the engine needs to execute a read or a mutation, with names resolved to
 * catalog indices and stable property ids, and search modes, scores, traversals and
 * mutations as typed nodes.
 *
 * A read query is a pipeline of operators over a stream of rows (one row = one binding of the
 * query's variables), followed by projection, optional aggregation, ordering and limit:
 *
 *   SCAN      var: node type, with pushed-down predicates.  The first SCAN starts the stream;
 *             a later SCAN is a cross join with the rows so far (separate components).
 *   EXPAND    from bound `src` over an edge type in direction dir (OUT = follow edges from
 *             their src to their dst, IN = the reverse, BOTH = either, deduplicated) for
 *             min..max hops (BFS, visited-once, spec §3.2), binding `dst` (or nothing for the
 *             anonymous `$_`, dst == -1) and, when edge_var >= 0, the matched edge row (one
 *             output row per edge; single hop only).  dst_preds filter the reached node,
 *             edge_preds the edge.  `closing`: dst was already bound — keep only rows whose
 *             reached node is that binding (a join predicate / cycle close).  For a cross-type
 *             edge (from != to type) the lowering already clamped max_hops to 1 (as the
 *             reference does), so `{2,3}` arrives as 2..1 and matches nothing.
 *   FILTER    a predicate over several variables (or constants), applied to joined rows.
 *   ANTIJOIN  drop a row when the inner pipeline, run with that row's bindings, yields a row.
 *             The inner pipeline starts from that one row, so a SCAN inside it cross-joins
 *             with it; outer_vars lists the outer variables the block mentions.
 *   PATH      `$p: shortest { $a e{min,max} $b }` (an extension): src and dst are bound; per
 *             row, a shortest walk from src to dst over edge_type in dir (node_type's nodes)
 *             whose length lies in min..max binds the path variable `var`, or the row is
 *             dropped.  Of several shortest walks, the one whose node ids are smallest in
 *             order (source first) is taken.  preds: predicates over the path alone.
 * A top-level pipeline always starts with a SCAN (the checker requires a binding).
 *
 * Predicates are comparisons (the `contains` overload is resolved: LIST_CONTAINS vs
 * STR_CONTAINS) or text matches (search / fuzzy / match_text on a node property).
 *
 * Values (og_ir_expr) are typed: property, node id, parameter, literal, now() (one timestamp
 * per execution, reads and writes alike), a search score (SCORE -> ir->ranks[rank]: the
 * nearest distance, the BM25 score or the RRF score of the row's ranked variable), a text
 * match as a Bool, an aggregate, or a reference to an output column.
 *
 * Ordering: when ir->rank_order >= 0 the rank ir->ranks[rank_order] defines the order
 * (nearest: ascending distance, top-limit; bm25: only rows matching the query, by score
 * descending; rrf: fusion of its two arms) and ir->orders holds the later keys, which sort
 * rows of equal score (the current reference's contract).  Else ir->orders are the sort keys.
 * Ties always break by
 * the ids of all bound variables (spec §3.4) — that is the engine's job.
 *
 * Ownership: an og_ir_query owns an arena holding everything inside; og_ir_free() frees it.
 */
#ifndef OG_COMPILER_IR_H
#define OG_COMPILER_IR_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/catalog.h"
#include "compiler/query_ast.h"
#include "omnigraph.h"
#include "util/buf.h"

typedef struct og_ir_rank og_ir_rank;

typedef enum og_ir_expr_kind {
    OG_IRX_PROP = 0, /* var.prop */
    OG_IRX_ID,       /* the id of var (bare `$v` projection) */
    OG_IRX_PARAM,    /* declared parameter */
    OG_IRX_LIT,
    OG_IRX_NOW,
    OG_IRX_SCORE,    /* score of ranks[rank] for the row */
    OG_IRX_TEXT,     /* Bool: the text match `text` holds for the row */
    OG_IRX_AGG,      /* aggregate over the group */
    OG_IRX_COLUMN,   /* output column `column` (alias reference in order) */
    OG_IRX_PRED,     /* Bool value of the condition `pred`: true, false, or null when unknown */
    OG_IRX_OBJECT,   /* node var as an object: JSON text {"@id": ..., props except Blob/Vector} */
    OG_IRX_META,     /* a system field of edge var: `meta` (its src or dst node id) */
    OG_IRX_ARITH,    /* arg `arith` arg2 (NEG: -arg), in the result type (I64 or F64) */
    OG_IRX_FUNC,     /* fn(arg, arg2, arg3): a scalar function, typed by the checker */
    OG_IRX_PATH      /* fn (LENGTH or NODES) of the path variable var: its hops (I64) or its
                      * nodes' ids, source first ([String]) */
} og_ir_expr_kind;

typedef enum og_ir_meta { OG_IR_META_SRC = 0, OG_IR_META_DST } og_ir_meta;

typedef enum og_ir_text_mode {
    OG_IR_TEXT_SEARCH = 0, /* token match */
    OG_IR_TEXT_FUZZY,      /* token match within max_edits (default 2) */
    OG_IR_TEXT_MATCH       /* match_text: same as search in the reference */
} og_ir_text_mode;

struct og_ir_expr;

typedef struct og_ir_text {
    og_ir_text_mode mode;
    int var;              /* node variable */
    int prop;             /* String property index in the variable's type */
    uint64_t prop_id;
    struct og_ir_expr *query;     /* String literal or parameter */
    struct og_ir_expr *max_edits; /* FUZZY: integer literal or parameter, NULL = 2 */
} og_ir_text;

typedef struct og_ir_expr {
    og_ir_expr_kind kind;
    og_qtype type;
    int var, prop;     /* PROP (prop = index in the variable's type), ID */
    uint64_t prop_id;  /* PROP */
    int param;         /* PARAM: index into ir->params */
    og_qlit lit;       /* LIT (strings and items live in the IR arena) */
    int rank;          /* SCORE */
    og_ir_text *text;  /* TEXT */
    og_qagg agg;       /* AGG */
    int distinct;      /* AGG: count(distinct arg) */
    struct og_ir_expr *arg;
    int column;        /* COLUMN */
    struct og_ir_pred *pred; /* PRED */
    og_ir_meta meta;   /* META */
    og_qarith arith;   /* ARITH */
    og_qfn fn;         /* FUNC */
    int nargs;         /* FUNC */
    struct og_ir_expr *arg2, *arg3; /* ARITH: right operand; FUNC: later arguments */
} og_ir_expr;

typedef enum og_ir_cmp {
    OG_IR_EQ = 0,
    OG_IR_NE,
    OG_IR_LT,
    OG_IR_LE,
    OG_IR_GT,
    OG_IR_GE,
    OG_IR_LIST_CONTAINS, /* left is a list: membership of the scalar right */
    OG_IR_STR_CONTAINS,  /* exact, case-sensitive substring */
    OG_IR_STARTS_WITH    /* exact, case-sensitive prefix */
} og_ir_cmp;
/* (`a in b` lowers to b LIST_CONTAINS a, or b STR_CONTAINS a when b is a String.) */

const char *og_ir_cmp_name(og_ir_cmp c);

/* A predicate.  CMP and TEXT are leaves; AND / OR / NOT combine predicates with three-valued
 * logic (a comparison with a null is unknown; `not unknown` is unknown; a row is kept only
 * when the whole predicate is true); TEST is a Bool expression (l) used as a predicate;
 * ISNULL tests l for null (negated: not null), which is never unknown. */
typedef enum og_ir_pred_kind {
    OG_IRP_CMP = 0,
    OG_IRP_TEXT,
    OG_IRP_AND,
    OG_IRP_OR,
    OG_IRP_NOT,
    OG_IRP_TEST,
    OG_IRP_ISNULL,
    OG_IRP_IFF      /* a = b over conditions (negated: a != b); unknown when either is */
} og_ir_pred_kind;

typedef struct og_ir_pred {
    og_ir_pred_kind kind;
    og_ir_cmp op;           /* CMP */
    og_ir_expr *l, *r;      /* CMP; NULL on either side = SQL NULL semantics apply; TEST/ISNULL: l */
    og_ir_text text;        /* TEXT */
    struct og_ir_pred *a, *b; /* AND, OR, IFF: a and b; NOT: a */
    int negated;            /* ISNULL: `is not null`; IFF: `!=` */
} og_ir_pred;

typedef enum og_ir_op_kind { OG_IR_SCAN = 0, OG_IR_EXPAND, OG_IR_FILTER, OG_IR_ANTIJOIN, OG_IR_PATH } og_ir_op_kind;

typedef struct og_ir_op {
    og_ir_op_kind kind;
    /* SCAN: var, node_type, preds.  EXPAND: dst_type, preds = dst predicates */
    int var;
    int node_type;
    og_ir_pred *preds;
    size_t npreds;
    /* EXPAND */
    int src, dst, edge_var; /* dst / edge_var -1 when absent */
    int edge_type;
    og_qdir dir;
    uint32_t min_hops, max_hops;
    int closing;
    og_ir_pred *edge_preds;
    size_t nedge_preds;
    /* FILTER */
    og_ir_pred pred;
    /* ANTIJOIN (sub: OG_QSUB_NOT keeps rows without an inner match, OG_QSUB_EXISTS rows with
     * one, OG_QSUB_COUNT rows whose number of inner matches `count_op` count_value holds, or
     * with sub_arg the aggregate sub_agg (an og_qagg) of sub_arg over them; OG_QSUB_OPTIONAL
     * a left outer join: the inner rows, and each outer row without one with opt_vars null) */
    int sub;
    og_ir_cmp count_op;
    struct og_ir_expr *count_value;
    int sub_agg;
    struct og_ir_expr *sub_arg;
    int *opt_vars; /* OPTIONAL: the variables the block binds */
    size_t nopt;
    int *outer_vars; /* outer variables the inner pipeline references */
    size_t nouter;
    struct og_ir_op *inner;
    size_t ninner;
} og_ir_op;

typedef struct og_ir_var {
    const char *name;
    int is_edge;
    int type;  /* node index (or edge index when is_edge) into the catalog */
    int depth; /* 0 = top level; n = bound inside the n-th nested `not { }` */
    int optional; /* bound by `optional { }`: its row may be null (UINT32_MAX in the bindings) */
    int is_path;  /* a `shortest { }` path (type = its nodes' type): the bindings hold the number
                   * of a path the executor keeps, not a table row */
} og_ir_var;

typedef enum og_ir_rank_kind { OG_IR_RANK_NEAREST = 0, OG_IR_RANK_BM25, OG_IR_RANK_RRF } og_ir_rank_kind;

struct og_ir_rank {
    og_ir_rank_kind kind;
    int var;               /* the ranked (node) variable; any variable, scan- or expand-bound */
    int prop;              /* NEAREST: Vector prop; BM25: String prop */
    uint64_t prop_id;
    og_ir_expr *query;     /* NEAREST: Vector literal/param or String (embedded); BM25: String */
    int query_is_text;     /* NEAREST with a String query */
    int arm1, arm2;        /* RRF: indices into ranks */
    og_ir_expr *k;         /* RRF: integer literal or param (literal 60 when omitted) */
};

typedef struct og_ir_column {
    const char *name;  /* alias, else "v.prop", "v", param name, "literal", function name */
    og_ir_expr *expr;
    og_qtype type;
    int group_key;     /* aggregate query: a non-aggregate column (implicit GROUP BY) */
} og_ir_column;

typedef struct og_ir_order {
    og_ir_expr *key;
    int desc;
} og_ir_order;

typedef struct og_ir_param {
    const char *name;
    og_qtype type;
} og_ir_param;

typedef struct og_ir_assign {
    const char *name;
    int prop;          /* index into the type's props, or OG_QPROP_FROM / OG_QPROP_TO */
    uint64_t prop_id;  /* 0 for from/to */
    og_ir_expr *value; /* literal, parameter or now() */
    int is_key;        /* assigns a @key member (an update of it fails at run time) */
} og_ir_assign;

/* A compound mutation `where` (query_ast.h og_qmcond): leaves compare `leaf` with op, or
 * test a Bool property (BARE); three-valued like og_ir_pred. */
typedef struct og_ir_mcond {
    og_qmc_kind kind;
    og_ir_assign leaf;
    og_ir_cmp op;
    int swapped;       /* CMP: `value op property` (`prop in $list` is `$list contains prop`) */
    int negated;       /* ISNULL: `is not null` */
    struct og_ir_mcond *a, *b;
} og_ir_mcond;

typedef struct og_ir_mutation {
    og_qmut_kind kind;
    int is_edge;
    int type;          /* node or edge index into the catalog */
    uint64_t type_id;
    og_ir_assign *assigns;
    size_t nassigns;
    og_ir_assign where; /* UPDATE / DELETE: where.name op where.value */
    og_ir_cmp where_op;
    int where_swapped;  /* value op property (set only while matching a compound leaf) */
    og_ir_mcond *cond;  /* a compound where instead (NULL when the plain form applies) */
    int strict;         /* INSERT: refuse an existing key (key_conflict) instead of upserting */
} og_ir_mutation;

typedef struct og_ir_access {
    int is_edge;
    int type;
    const char *name;
} og_ir_access;

typedef struct og_ir_query {
    og_qarena arena;
    const og_catalog *cat; /* borrowed: the catalog the query was checked against */
    const char *name;
    const char *description, *instruction;
    int mcp_hidden;            /* @mcp(expose: false) */
    const char *mcp_tool_name; /* @mcp(tool_name: ...) or NULL */
    int is_mutation;
    og_ir_param *params;
    size_t nparams;
    og_ir_var *vars;
    size_t nvars;
    /* read */
    og_ir_op *ops;
    size_t nops;
    og_ir_column *columns;
    size_t ncolumns;
    int aggregate;
    int distinct;      /* `return distinct`: aggregate is set too and every column is a group key */
    og_ir_rank *ranks;
    size_t nranks;
    int rank_order;    /* -1 or the rank that orders the result */
    og_ir_order *orders;
    size_t norders;
    int has_limit;
    uint64_t limit;
    int limit_param;   /* `limit $n`: the parameter (index into params) read at run time, or -1 */
    int has_offset;    /* `offset M`: skip the first M rows of the ordered result */
    uint64_t offset;
    int offset_param;  /* `offset $m`, or -1 */
    /* mutation */
    og_ir_mutation *mutations;
    size_t nmutations;
    /* access sets, sorted by (node < edge, name), deduplicated (spec §8) */
    og_ir_access *reads, *writes;
    size_t nreads, nwrites;
} og_ir_query;

/* Lowers query `qi` of f, which og_query_check() accepted against cat, into a new IR
 * (*out; free with og_ir_free).  OG_ERR_NOMEM, or OG_ERR_INTERNAL when the query was not
 * checked. */
og_status og_query_lower(og_ir_query **out, const og_query_file *f, size_t qi,
                         const og_catalog *cat);

/* Check + lower in one call: the usual entry point.  Errors as og_query_check(). */
og_status og_query_compile(og_ir_query **out, og_query_file *f, size_t qi,
                           const og_catalog *cat, const og_source *src, og_diag *err);

void og_ir_free(og_ir_query *ir);

/* EXPLAIN-style text of the IR, one operator per line, deterministic (tests assert on it). */
og_status og_ir_dump(og_buf *out, const og_ir_query *ir);
/* The text of one value / predicate (as in the dump). */
og_status og_ir_dump_expr(og_buf *out, const og_ir_query *ir, const og_ir_expr *e);
og_status og_ir_dump_pred(og_buf *out, const og_ir_query *ir, const og_ir_pred *p);

#endif
