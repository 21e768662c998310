/*
 * query_ast.h — the syntax tree of the .gq query and mutation language
 * (reference-language.md §2–§4) and the parser's entry point.
 *
 * Lifetime: one og_query_file owns an arena; every node, string and array inside it is
 * allocated there and freed at once by og_query_file_free().  Strings are NUL-terminated.
 *
 * Pipeline: og_query_parse() (query_parse.c) -> og_query_check() (query_check.c, fills the
 * "resolved" fields below and reports T1–T24) -> og_query_lower() (query_lower.c, the typed
 * IR of ir.h).  The parser reports the first syntax error only (like the reference PEG).
 *
 * Spans are byte offsets [start, end) into the source the file was parsed from.
 */
#ifndef OG_COMPILER_QUERY_AST_H
#define OG_COMPILER_QUERY_AST_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/lexer.h"
#include "omnigraph.h"
#include "util/vector.h"

/* Nesting limit for expressions, list literals and `not { }` blocks: deeper input is a
 * parse error, so no recursive pass can exhaust the stack. */
#define OG_QUERY_MAX_DEPTH 64

/* Size limits (parse errors beyond them) that keep every later pass cheap on hostile input:
 * items of one list (params, clauses of one block, projections, orderings, statements,
 * assignments, list-literal items) and match clauses of one query in total. */
#define OG_QUERY_MAX_ITEMS 4096
#define OG_QUERY_MAX_CLAUSES 4096

/* Bounds of `Vector(N)`. */
#define OG_QUERY_MAX_VECTOR_DIM 2147483647u

typedef struct og_qspan {
    size_t start, end;
} og_qspan;

/* ---- the arena ----------------------------------------------------------------------------- */

typedef struct og_qarena_chunk og_qarena_chunk;
typedef struct og_qarena {
    og_qarena_chunk *head;
} og_qarena;

/* Zeroed, 16-byte aligned memory living as long as the arena; NULL when out of memory. */
void *og_qarena_alloc(og_qarena *a, size_t n);
char *og_qarena_strndup(og_qarena *a, const char *s, size_t n);
void og_qarena_free(og_qarena *a);

/* ---- value types (of params, properties, expressions) ---------------------------------- */

/* A value type: a storage type (vector.h; Date = DATE32, DateTime = DATE64, [T] = LIST with
 * elem, Vector(N) = VECTOR with dim) plus nullability.  `node_type` >= 0 marks the value of a
 * bare node variable (its id); then t is STRING. */
typedef struct og_qtype {
    og_type t;
    int nullable;
    int is_enum;
    int node_type; /* index into catalog nodes, or -1 */
    int is_object; /* with node_type: the node as an object (`@id` and its properties, no Blob
                    * or Vector), carried as a String of JSON text */
} og_qtype;

/* "String", "[I32]?", "Vector(3)", "DateTime" — the .gq spelling. */
const char *og_qtype_name(const og_qtype *t, char *buf, size_t cap);

/* ---- literals ------------------------------------------------------------------------------- */

typedef enum og_qlit_kind {
    OG_QLIT_STRING = 0,
    OG_QLIT_INT,      /* fits in int64 */
    OG_QLIT_FLOAT,
    OG_QLIT_BOOL,
    OG_QLIT_DATE,     /* date("YYYY-MM-DD"): i = epoch days */
    OG_QLIT_DATETIME, /* datetime("…"): i = epoch milliseconds UTC */
    OG_QLIT_LIST
} og_qlit_kind;

typedef struct og_qlit {
    og_qlit_kind kind;
    og_qspan span;
    const char *s; /* STRING value; DATE/DATETIME: the text as written */
    size_t slen;
    int64_t i;     /* INT, DATE, DATETIME */
    double f;      /* FLOAT (INT also mirrored here) */
    int b;         /* BOOL */
    struct og_qlit *items; /* LIST */
    size_t nitems;
} og_qlit;

/* ---- expressions ---------------------------------------------------------------------------- */

typedef enum og_qexpr_kind {
    OG_QE_NOW = 0,
    OG_QE_PROP,      /* $v.prop */
    OG_QE_VAR,       /* $v — a parameter or a bound variable (resolved by the checker) */
    OG_QE_LIT,
    OG_QE_ALIAS,     /* bare ident: a return alias (order keys) */
    OG_QE_AGG,       /* count|sum|avg|min|max(arg) */
    OG_QE_NEAREST,   /* nearest($v.prop, query) */
    OG_QE_SEARCH,    /* search(field, query) */
    OG_QE_FUZZY,     /* fuzzy(field, query [, max_edits]) */
    OG_QE_MATCH_TEXT,/* match_text(field, query) */
    OG_QE_BM25,      /* bm25(field, query) */
    OG_QE_RRF,       /* rrf(rank, rank [, k]) */
    /* Boolean conditions (only inside an OG_QC_COND filter): */
    OG_QE_CMP,       /* a op b */
    OG_QE_AND,       /* a and b */
    OG_QE_OR,        /* a or b */
    OG_QE_NOT,       /* not a */
    OG_QE_ISNULL,    /* a is null (negated: a is not null) */
    /* Values computed per row (an extension, docs/reference.md "Expressions"): */
    OG_QE_ARITH,     /* a op b (op: an og_qarith); OG_QA_NEG: -a */
    OG_QE_FUNC       /* name(a [, b [, c]]); concat / coalesce of more arguments nest in b */
} og_qexpr_kind;

typedef enum og_qarith { OG_QA_ADD = 0, OG_QA_SUB, OG_QA_MUL, OG_QA_DIV, OG_QA_MOD, OG_QA_NEG } og_qarith;

/* The scalar functions (resolved from the name by the checker). */
typedef enum og_qfn {
    OG_QF_LOWER = 0,
    OG_QF_UPPER,
    OG_QF_TRIM,
    OG_QF_LENGTH,
    OG_QF_SUBSTRING,
    OG_QF_CONCAT,
    OG_QF_COALESCE,
    OG_QF_ABS,
    OG_QF_ROUND,
    OG_QF_FLOOR,
    OG_QF_CEIL,
    OG_QF_YEAR,
    OG_QF_MONTH,
    OG_QF_DAY,
    OG_QF_SIZE,
    OG_QF_NODES,     /* nodes($path): the ids of a shortest path's nodes (a path variable only) */
    OG_QF__COUNT
} og_qfn;

/* "lower", ...; og_qfn_find: the function named name[0..n), or -1. */
const char *og_qfn_name(og_qfn f);
int og_qfn_find(const char *name);

typedef enum og_qagg {
    OG_QAGG_COUNT = 0,
    OG_QAGG_SUM,
    OG_QAGG_AVG,
    OG_QAGG_MIN,
    OG_QAGG_MAX,
    OG_QAGG_COLLECT /* collect(x): the group's non-null values as a list (an extension) */
} og_qagg;

const char *og_qagg_name(og_qagg a);

typedef struct og_qexpr {
    og_qexpr_kind kind;
    og_qspan span;
    const char *var;  /* PROP, VAR, NEAREST: variable name without '$' */
    og_qspan var_span;
    const char *name; /* PROP, NEAREST: property (PROP: "@id", "@type", "@src", "@dst" for a
                       * meta field); ALIAS: the alias */
    og_qlit lit;      /* LIT */
    og_qagg agg;      /* AGG */
    /* AGG: a; NEAREST: a = query; SEARCH/FUZZY/MATCH_TEXT/BM25: a = field, b = query,
     * c = max_edits (FUZZY, optional); RRF: a, b = ranks, c = k (optional). */
    struct og_qexpr *a, *b, *c;
    int op;           /* CMP: an og_qop; ARITH: an og_qarith */
    int fn;           /* FUNC: an og_qfn (resolved by the checker) */
    int nargs;        /* FUNC: arguments written (a, b, c) */
    int negated;      /* ISNULL: `is not null` */

    /* resolved by the checker */
    og_qtype type;  /* value type */
    int is_param;   /* VAR: names a declared parameter (param index in `param`) */
    int param;
    int var_index;  /* PROP/VAR/NEAREST: index into the query's variable table, else -1 */
    int prop_index; /* PROP/NEAREST: index into the variable's type props; PROP meta fields:
                     * OG_QMETA_ID / _TYPE / _SRC / _DST */
    int is_agg;     /* contains an aggregate */
    int is_object;  /* VAR: a bare node variable projected as its object (`return { $p }`) */
    int distinct;   /* AGG: `count(distinct x)` counts distinct non-null values (an extension) */
} og_qexpr;

/* ---- clauses -------------------------------------------------------------------------------- */

typedef enum og_qop {
    OG_QOP_EQ = 0,
    OG_QOP_NE,
    OG_QOP_LT,
    OG_QOP_LE,
    OG_QOP_GT,
    OG_QOP_GE,
    OG_QOP_CONTAINS,
    OG_QOP_STARTS_WITH,
    OG_QOP_IN        /* a in b: membership of a in the list b, or a substring of the String b */
} og_qop;

const char *og_qop_name(og_qop op); /* "=", "!=", …, "contains", "starts_with" */

/* A value in a prop-match, assignment or mutation predicate: literal, $param or now(). */
typedef enum og_qvalue_kind { OG_QV_LIT = 0, OG_QV_VAR, OG_QV_NOW } og_qvalue_kind;

typedef struct og_qvalue {
    og_qvalue_kind kind;
    og_qspan span;
    og_qlit lit;
    const char *var;
    int param; /* resolved: param index, or -1 */
} og_qvalue;

/* Meta fields ($v.@id, ...) in og_qexpr.prop_index. */
#define OG_QMETA_ID (-10)
#define OG_QMETA_TYPE (-11)
#define OG_QMETA_SRC (-12)
#define OG_QMETA_DST (-13)

typedef struct og_qpropmatch {
    const char *prop;
    og_qspan prop_span;
    og_qvalue value;
    struct og_qexpr *expr; /* a condition as the value (`{adult: $age > 30}`), else NULL */
    int prop_index; /* resolved */
} og_qpropmatch;

typedef enum og_qclause_kind {
    OG_QC_BINDING = 0,
    OG_QC_TRAVERSAL,
    OG_QC_FILTER,
    OG_QC_TEXT,     /* standalone search/fuzzy/match_text: a filter `call = true` */
    OG_QC_NEGATION,
    OG_QC_COND,     /* a compound / bare Bool condition: left = the og_qexpr tree */
    OG_QC_PATH      /* `$p: shortest { $a edge{lo,hi} $b }` (an extension): var = the path
                     * variable, the traversal fields the walked pattern */
} og_qclause_kind;

typedef enum og_qdir { OG_QDIR_OUT = 0, OG_QDIR_IN, OG_QDIR_BOTH } og_qdir;

/* OG_QSUB_OPTIONAL: `optional { … }`, a left outer join (an extension): the block's new
 * variables stay visible after it and are null on the rows it did not match. */
typedef enum og_qsub { OG_QSUB_NOT = 0, OG_QSUB_EXISTS, OG_QSUB_COUNT, OG_QSUB_OPTIONAL } og_qsub;

typedef struct og_qclause {
    og_qclause_kind kind;
    og_qspan span;
    /* BINDING */
    const char *var;
    og_qspan var_span;
    const char *type_name;
    og_qspan type_span;
    og_qpropmatch *matches;
    size_t nmatches;
    /* TRAVERSAL */
    const char *src, *dst;       /* "_" for the anonymous variable */
    og_qspan src_span, dst_span;
    const char *edge_var;        /* $w: (NULL when absent; "_" for $_:) */
    og_qspan edge_var_span;
    const char *edge_word;
    og_qspan edge_span;
    int undirected;
    int has_bounds;
    uint32_t min_hops;
    uint32_t max_hops;
    int has_max;
    /* FILTER (left op right) and TEXT (left = the call) */
    og_qexpr *left, *right;
    og_qop op;
    /* NEGATION (`not { }`, `not exists { }`), and with `sub` the reference's correlated
     * sub-patterns: OG_QSUB_EXISTS `exists { }`, OG_QSUB_COUNT `count { } op right` */
    struct og_qclause *inner;
    size_t ninner;
    int sub;
    int sub_agg;              /* COUNT: the og_qagg of `sum(x) { … } op right` (count for `count { }`) */
    struct og_qexpr *sub_arg; /* its argument x, NULL for `count { }` */

    /* resolved by the checker */
    int type_index;  /* BINDING: node type; TRAVERSAL: edge type */
    int var_index;   /* BINDING: the variable */
    int src_index, dst_index, edge_var_index; /* TRAVERSAL: variables or -1 ($_) */
    og_qdir dir;     /* TRAVERSAL: direction as written src -> dst */
} og_qclause;

/* ---- return / order ------------------------------------------------------------------------ */

typedef struct og_qprojection {
    og_qexpr *expr;
    const char *alias; /* NULL when none */
    og_qspan alias_span;
    og_qspan span;
} og_qprojection;

typedef struct og_qordering {
    og_qexpr *expr;
    int desc;
    int has_dir;
    og_qspan span;
} og_qordering;

/* The result column name of a projection: its alias, else the reference engine's default
 * (`$p.name` -> "p.name", `$p` -> "p", an aggregate -> its argument's name, a literal ->
 * "literal", a condition -> "condition", ...).  Truncated to cap. */
const char *og_query_column_name(const og_qprojection *p, char *buf, size_t cap);

/* ---- mutations ------------------------------------------------------------------------------ */

typedef enum og_qmut_kind { OG_QM_INSERT = 0, OG_QM_UPDATE, OG_QM_DELETE } og_qmut_kind;

typedef struct og_qassign {
    const char *prop;
    og_qspan prop_span;
    og_qvalue value;
    struct og_qexpr *expr; /* an assignment computed from parameters (`{adult: $age > 30}`,
                            * `{n: $a + 1}`) instead of `value`, else NULL */
    int prop_index; /* resolved: index into type props; OG_QPROP_FROM / OG_QPROP_TO for edges */
} og_qassign;

#define OG_QPROP_FROM (-2) /* an edge's `from` / `@src` */
#define OG_QPROP_TO   (-3) /* an edge's `to` / `@dst` */
#define OG_QPROP_ID   (-4) /* `@id` in a mutation where */

/* A compound mutation `where` (a tree; leaves are `prop op value` or a bare Bool prop). */
typedef enum og_qmc_kind { OG_QMC_CMP = 0, OG_QMC_BARE, OG_QMC_AND, OG_QMC_OR, OG_QMC_NOT, OG_QMC_ISNULL } og_qmc_kind;

typedef struct og_qmcond {
    og_qmc_kind kind;
    og_qspan span;
    og_qassign leaf;   /* CMP: prop op value; BARE: prop */
    og_qop op;         /* CMP (any filter operator: contains, starts_with and in too) */
    int negated;       /* ISNULL: `prop is not null` (leaf.prop only) */
    struct og_qmcond *a, *b;
} og_qmcond;

typedef struct og_qmutation {
    og_qmut_kind kind;
    og_qspan span;
    const char *type_name;
    og_qspan type_span;
    og_qassign *assigns;
    size_t nassigns;
    /* UPDATE/DELETE: where prop op value */
    og_qassign where;
    og_qop where_op;
    og_qmcond *cond;    /* a compound `where` (then `where` / `where_op` are unused), else NULL */
    int strict;         /* `insert strict T {...}`: an existing key is a key_conflict, never an upsert */
    /* resolved */
    int is_edge;
    int type_index; /* into catalog nodes or edges */
} og_qmutation;

/* ---- declarations --------------------------------------------------------------------------- */

typedef struct og_qparam {
    const char *name; /* without '$' */
    og_qspan span;
    og_qtype type;
} og_qparam;

/* A variable of a read query (filled by the checker): node binding or edge binding. */
typedef struct og_qvar {
    const char *name;
    int is_edge;
    int type_index; /* node index, or edge index when is_edge */
    int depth;      /* negation depth where it was introduced (0 = top level) */
    int has_binding;/* introduced or re-stated by a `$v: Type` clause at its depth */
    int optional;   /* introduced inside `optional { }`: null on the rows the block did not match */
    int is_path;    /* a `shortest { }` path; type_index = the node type of its nodes */
} og_qvar;

typedef struct og_query {
    const char *name;
    og_qspan name_span;
    og_qspan span;
    const char *description, *instruction; /* NULL when absent */
    int mcp_seen, mcp_hidden;  /* @mcp(expose: false) */
    const char *mcp_tool_name; /* @mcp(tool_name: "x"), NULL when absent */
    og_qparam *params;
    size_t nparams;
    int is_mutation;
    /* read body */
    og_qclause *clauses;
    size_t nclauses;
    og_qprojection *projections;
    size_t nprojections;
    int distinct;             /* `return distinct { … }`: duplicate rows dropped (an extension) */
    og_qordering *orderings;
    size_t norderings;
    int has_limit;
    uint64_t limit;
    og_qspan limit_span;
    const char *limit_param;  /* `limit $n`: the parameter's name (then `limit` is unused) */
    int has_offset;           /* `offset M` / `offset $m` (an extension: pagination) */
    uint64_t offset;
    og_qspan offset_span;
    const char *offset_param;
    int limit_param_index, offset_param_index; /* resolved: param indices, or -1 */
    /* mutation body */
    og_qmutation *mutations;
    size_t nmutations;
    /* filled by og_query_check() */
    int checked;
    og_qvar *vars;
    size_t nvars, vars_cap;
} og_query;

/* A session-settings line at the head of a file: `set NAME = VALUE;` (value the text, a
 * string literal decoded), `reset NAME;` / `reset all;` (value NULL).  Checked against
 * compiler/settings.h by the parser. */
typedef struct og_qsetting {
    const char *name;
    const char *value;
    og_qspan span;
} og_qsetting;

typedef struct og_query_file {
    og_qarena arena;
    og_query *queries;
    size_t nqueries;
    og_qsetting *settings;
    size_t nsettings;
} og_query_file;

/* Parses a whole .gq file (any number of queries).  On success *out owns a new file (free
 * with og_query_file_free).  On a syntax error returns OG_ERR_PARSE with *err filled (first
 * error only; *out NULL).  OG_ERR_NOMEM possible.  err may be NULL. */
og_status og_query_parse(og_query_file **out, const og_source *src, og_diag *err);
void og_query_file_free(og_query_file *f);

/* The first query named `name`, or NULL (duplicates are not rejected; first wins). */
const og_query *og_query_find(const og_query_file *f, const char *name);
/* Its index in f->queries (for og_query_check / og_query_compile), or -1. */
long og_query_find_index(const og_query_file *f, const char *name);

/* 1 when two expressions are written the same (same kinds, names, literals, arguments). */
int og_qexpr_equal(const og_qexpr *a, const og_qexpr *b);

/* ---- date / time literals (shared with the engine's parameter binding) -------------------- */

/* "YYYY-MM-DD" -> days since 1970-01-01.  0 on success, -1 when malformed. */
int og_query_parse_date(const char *s, size_t n, int32_t *days);
/* RFC 3339 ("YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]", 'T' or ' ' separator, seconds optional,
 * no zone = UTC) or a bare date (midnight UTC) -> ms since the epoch.  0 or -1. */
int og_query_parse_datetime(const char *s, size_t n, int64_t *ms);

#endif
