/*
 * catalog.h — the resolved schema catalog: what a .pg schema means once parsed, checked and
 * given stable identities.  The query type checker, the loader, mutations and the planner
 * consult it; it is the in-memory form of the accepted schema IR (STORAGE.md §4).
 *
 * Ownership: an og_catalog is created by og_catalog_build() / og_schema_compile() /
 * og_catalog_from_json() / the migration planner and owned by whoever received it; free it
 * with og_catalog_free().  Every pointer inside (names, arrays, compiled regexes) is owned by
 * the catalog and lives exactly as long as it.  The catalog is immutable after creation and
 * may be shared read-only between threads.
 *
 * Identity (INVARIANTS.md 8, spec §7): type ids, property ids and table incarnation ids come
 * from ONE monotonically increasing, never-reused sequence (cat->next_id is the next value to
 * consume; ids are >= 1).  At creation they are allocated canonically: first every type in
 * (kind, name) order with kind interface < node < edge, then every property in
 * (owner type id, property name) order, then a table incarnation for each node/edge type in
 * type-id order.  Names are not identity: renames keep ids; drop-then-re-add gets new ids.
 *
 * Ordering inside the catalog: types and properties appear in declaration order (a node's own
 * properties in source order, then interface-injected ones in `implements` order).  Lookup
 * helpers below are the way to find things by name.
 */
#ifndef OG_COMPILER_CATALOG_H
#define OG_COMPILER_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/buf.h"
#include "util/vector.h"

/* ---- annotation metadata ----------------------------------------------------------------- */

typedef enum og_lit_kind {
    OG_LIT_STRING = 0, /* "x"          text = decoded value */
    OG_LIT_INT,        /* 42           text = digits as written */
    OG_LIT_FLOAT,      /* 4.2          text = as written */
    OG_LIT_BOOL,       /* true/false   text = "true"/"false" */
    OG_LIT_IDENT       /* bare ident   text = the identifier */
} og_lit_kind;

typedef struct og_annot_arg {
    char *key; /* NULL for a positional argument, else the kwarg name (`model` in @embed) */
    og_lit_kind kind;
    char *text;
} og_annot_arg;

/* An annotation as written: `@name`, `@name(arg, key = lit ...)`.  Unknown annotations are
 * carried verbatim in og_cat_type.annots / og_cat_prop.annots (metadata only). */
typedef struct og_annotation {
    char *name;       /* without '@' */
    int has_parens;   /* `@x()` vs `@x` */
    og_annot_arg *args;
    size_t nargs;
    size_t off;       /* byte offset of the '@' in the source (0 when loaded from JSON) */
} og_annotation;

/* ---- constraints and index intents ------------------------------------------------------- */

typedef enum og_index_kind {
    OG_INDEX_NONE = 0,
    OG_INDEX_BTREE,    /* enum, Bool, ints, floats, Date, DateTime; id/src/dst */
    OG_INDEX_INVERTED, /* free-text String (FTS / BM25) */
    OG_INDEX_VECTOR    /* Vector(N): ANN */
} og_index_kind;

const char *og_index_kind_name(og_index_kind k); /* "none" "btree" "inverted" "vector" */

typedef enum og_cons_kind {
    OG_CONS_KEY = 0,
    OG_CONS_UNIQUE,
    OG_CONS_INDEX,
    OG_CONS_RANGE,
    OG_CONS_CHECK
} og_cons_kind;

const char *og_cons_kind_name(og_cons_kind k); /* "key" "unique" "index" "range" "check" */

/* Column reference of a constraint: a property, or an edge's system column src/dst (or id). */
#define OG_COL_ID  (-1)
#define OG_COL_SRC (-2)
#define OG_COL_DST (-3)

/* A signed numeric @range bound as written. */
typedef struct og_range_bound {
    int present;
    int is_float;  /* written with a fraction */
    int64_t i;     /* integer value (when !is_float; saturated if it overflowed) */
    double f;      /* value as a double (always set) */
    char *text;    /* as written, e.g. "-5", "2.5" */
} og_range_bound;

typedef struct og_cat_constraint {
    og_cons_kind kind;
    char **cols;      /* column names in the order written ("src"/"dst" for edge columns) */
    int *col_props;   /* per column: index into the owning type's props[], or OG_COL_* */
    size_t ncols;     /* RANGE and CHECK: exactly 1 */
    og_range_bound min, max; /* RANGE */
    char *pattern;    /* CHECK: the regex source (PCRE2 syntax, see docs/schema-language.md) */
    void *regex;      /* CHECK: compiled pcre2_code*, owned; use og_check_match() */
    int from_property; /* 1 when desugared from a property-level @key/@unique/@index */
    uint32_t line, col; /* where it was written (0 when loaded from JSON) */
    size_t off;         /* byte offset in the source */
} og_cat_constraint;

/* ---- properties ------------------------------------------------------------------------ */

typedef struct og_cat_prop {
    char *name;
    uint64_t id;          /* stable property id */
    og_type type;         /* storage type (vector.h); an enum is OG_T_STRING with is_enum */
    int nullable;         /* written `T?` */
    int is_enum;
    char **enum_values;   /* enum: sorted (byte order), deduplicated; owned */
    size_t n_enum;
    og_index_kind index;  /* derived intent from a single-column @index/@key (NONE if neither) */
    int is_key;           /* member of the type's @key */
    char *embed_source;   /* @embed source property name, or NULL */
    char *embed_model;    /* @embed model kwarg, or NULL */
    char *description;    /* @description, or NULL */
    char *rename_from;    /* @rename_from hint, or NULL (identity hint for migrations) */
    char *interface;      /* NULL when declared directly; else the interface it came from */
    og_annotation *annots; /* unknown annotations (metadata), in source order */
    size_t n_annots;
    uint32_t line, col;   /* declaration position (0 when loaded from JSON) */
    size_t off;           /* byte offset of the name in the source */
} og_cat_prop;

/* ---- types ------------------------------------------------------------------------------ */

typedef enum og_type_kind {
    OG_KIND_INTERFACE = 0,
    OG_KIND_NODE,
    OG_KIND_EDGE
} og_type_kind;

const char *og_type_kind_name(og_type_kind k); /* "interface" "node" "edge" */

#define OG_CARD_UNBOUNDED UINT32_MAX

typedef struct og_cat_type {
    og_type_kind kind;
    char *name;
    uint64_t id;              /* stable type id */
    uint64_t incarnation;     /* table incarnation id (0 for interfaces) */
    og_cat_prop *props;
    size_t nprops;
    og_cat_constraint *cons;  /* all constraints incl. desugared property-level ones */
    size_t ncons;
    /* @key: indices into props[] ordered by stable property id (the canonical key order);
     * nkey == 0 when the node is unkeyed (always 0 for edges). */
    size_t *key_props;
    size_t nkey;
    /* node: interfaces implemented, as written */
    char **implements;
    size_t nimplements;
    /* edge: endpoints (names + indices into cat->nodes) and cardinality */
    char *from, *to;
    size_t from_node, to_node;
    uint32_t card_min, card_max; /* card_max == OG_CARD_UNBOUNDED for `min..`; default 0.. */
    int card_written;            /* 1 when @card(...) appeared */
    /* metadata */
    char *description, *instruction, *rename_from; /* NULL when absent */
    og_annotation *annots; /* unknown annotations, in source order */
    size_t n_annots;
    uint32_t line, col;
    size_t off;            /* byte offset of the name in the source */
} og_cat_type;

typedef struct og_catalog {
    og_cat_type *interfaces;
    size_t ninterfaces;
    og_cat_type *nodes;
    size_t nnodes;
    og_cat_type *edges;
    size_t nedges;
    uint64_t next_id;   /* next identity to allocate (shared by types, properties, incarnations) */
    char *domain;       /* schema identity domain (opaque, e.g. a ULID) or NULL */
    char *source;       /* the original .pg text (NUL-terminated) or NULL */
} og_catalog;

void og_catalog_free(og_catalog *cat);

/* ---- lookups (NULL when absent; names are NUL-terminated) ---------------------------------- */

const og_cat_type *og_catalog_node(const og_catalog *cat, const char *name);
const og_cat_type *og_catalog_interface(const og_catalog *cat, const char *name);
/* Exact-name edge lookup. */
const og_cat_type *og_catalog_edge(const og_catalog *cat, const char *name);
/* Case-insensitive (ASCII) edge lookup over name[0..len) — how queries resolve edge words
 * (`$a wrote $b` finds edge `Wrote`).  Unique because edge names are unique case-folded. */
const og_cat_type *og_catalog_edge_ci(const og_catalog *cat, const char *name, size_t len);
/* Any type by stable id (NULL when none). */
const og_cat_type *og_catalog_type_by_id(const og_catalog *cat, uint64_t id);
/* Property by name; *index_out (optional) receives its index in t->props. */
const og_cat_prop *og_cat_type_prop(const og_cat_type *t, const char *name, size_t *index_out);
/* Property by stable id (NULL when none); *index_out (optional) receives its index. */
const og_cat_prop *og_cat_type_prop_by_id(const og_cat_type *t, uint64_t id, size_t *index_out);
/* 1 when node type t implements interface `iface`. */
int og_cat_type_implements(const og_cat_type *t, const char *iface);
/* The type's @key constraint, or NULL. */
const og_cat_constraint *og_cat_type_key(const og_cat_type *t);
/* 1 when value[0..len) is a member of the enum property's value set. */
int og_cat_prop_enum_has(const og_cat_prop *p, const char *value, size_t len);
/* The edges whose from (dir=0) or to (dir=1) endpoint is node type `node_index`: fills up to
 * cap indices into cat->edges and returns the total count. */
size_t og_catalog_edges_at(const og_catalog *cat, size_t node_index, int dir, size_t *out,
                           size_t cap);

/* "String", "I64?", "[String]?", "Vector(8)", "enum(a, b)?" — the schema spelling. */
const char *og_cat_prop_type_name(const og_cat_prop *p, char *buf, size_t cap);
/* The table directory name of a node/edge type: "<kind>_<type id>_<incarnation>", e.g.
 * "node_3_17.lance" (STORAGE.md §3: derived from identity, never from the name; the
 * ".lance" suffix lets LanceDB open it: connect("<root>/tables"), openTable("node_3_17")). */
const char *og_cat_type_table_dir(const og_cat_type *t, char *buf, size_t cap);

/* @check: 1 when value matches the constraint's regex (unanchored search), 0 when not,
 * -1 on a matcher failure (e.g. invalid UTF-8 in value).  Thread-safe. */
int og_check_match(const og_cat_constraint *c, const char *value, size_t len);

/* ---- the canonical key id (spec §1.6), shared by load and mutate -------------------------- */

/* One typed key value.  Which member is read depends on the property's storage type:
 *   BOOL -> b; I32 I64 DATE32 (epoch days) DATE64 (epoch ms) -> i; U32 U64 -> u;
 *   F32 F64 -> f; STRING (incl. enums) -> s/len. */
typedef struct og_key_value {
    int64_t i;
    uint64_t u;
    double f;
    int b;
    const char *s;
    size_t len;
} og_key_value;

/* Appends the canonical rendering of one value of storage type `type` to out: ints in
 * decimal, bools true/false, Date as epoch days, DateTime as epoch ms, finite floats in the
 * shortest round-trip form without exponent (-0 -> 0), strings verbatim.  Non-finite floats
 * are OG_ERR_CONSTRAINT. */
og_status og_key_render_value(og_buf *out, og_type type, const og_key_value *v);

/* The id of a keyed node.  vals[i] is the value of property t->props[t->key_props[i]], i.e.
 * values are given in stable-property-id order (the canonical order).  A single key renders
 * as the bare value; a composite key as a compact JSON array of the rendered strings, e.g.
 * ["le guin","Lathe"].  The id is APPENDED to out, which is left NUL-terminated (og_buf_cstr).
 * Errors: OG_ERR_INVALID (type not keyed / n != t->nkey), OG_ERR_CONSTRAINT (non-finite). */
og_status og_key_id(og_buf *out, const og_cat_type *t, const og_key_value *vals, size_t n);

#endif
