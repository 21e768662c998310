/*
 * query_check_int.h — internals shared by the two halves of the type checker
 * (query_check.c: reads; query_check_mut.c: mutations).  Not a public contract.
 */
#ifndef OG_COMPILER_QUERY_CHECK_INT_H
#define OG_COMPILER_QUERY_CHECK_INT_H

#include "compiler/query_check.h"

typedef struct og_chk {
    const og_catalog *cat;
    og_query_file *f;
    og_query *q;
    const og_source *src;
    og_diag *err;
    og_status st;      /* first error (OG_OK while none) */
    int *visible;      /* stack of variable indices in scope */
    size_t nvisible, cap;
    int depth;         /* negation depth */
    int in_order;      /* resolving order keys (aliases allowed) */
    const og_qexpr *rrf_ok; /* the one expression that may be an rrf(...) (a top-level key) */
} og_chk;

/* Records the error (message "code: text", code may be NULL) and returns 0. */
int og_chk_fail(og_chk *c, og_qspan sp, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int og_chk_nomem(og_chk *c);

og_qtype og_qt_scalar(og_type_id id);
og_qtype og_qt_prop(const og_cat_prop *p);
int og_qt_is_numeric(og_type_id id);
int og_qt_is_list(const og_qtype *t);
int og_qt_compatible(const og_qtype *a, const og_qtype *b);
const char *og_qt_name(const og_qtype *t, char *buf, size_t cap);

/* Type of a literal (list typing rules of §3.6); 0 on error (no code). */
int og_chk_lit_type(og_chk *c, const og_qlit *lit, og_qtype *out);
/* Literal against a property type (T3 family: mismatch, enum membership, vector length). */
int og_chk_lit_against(og_chk *c, const og_qlit *lit, const og_cat_prop *p, const char *prop);
/* Declared parameter index by name, or -1. */
int og_chk_param(const og_chk *c, const char *name);

/* "; did you mean `$x`?" for an unknown `$name` (or ""): the nearest of the variables in
 * scope (vars) and the declared parameters (params), compiler/suggest.h's rule for names. */
const char *og_chk_name_hint(og_chk *c, const char *name, int vars, int params, char *buf, size_t cap);
/* The visible `shortest { }` path variable called name, or -1. */
int og_chk_path_var(og_chk *c, const char *name);

/* Resolves (types) one expression; in_agg: inside an aggregate's argument. */
int og_chk_resolve(og_chk *c, og_qexpr *e, int in_agg);
/* Arithmetic and scalar functions (query_check_fn.c). */
int og_chk_arith(og_chk *c, og_qexpr *e, int in_agg);
int og_chk_func(og_chk *c, og_qexpr *e, int in_agg);

/* Mutation half. */
int og_chk_mutations(og_chk *c);

#endif
