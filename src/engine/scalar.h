/*
 * scalar.h — the row-by-row kernels of computed values (docs/reference.md "Expressions"):
 * arithmetic and the scalar functions of the query language.
 *
 * Inputs are columns of one length n or of length 1 (a constant, broadcast); the result has
 * the longest input's length.  The compiler (compiler/query_check_fn.c) has already typed
 * every argument, so a type these kernels do not take is OG_ERR_INTERNAL.  Nulls propagate
 * (a null operand gives a null result) except in concat (nulls are skipped) and coalesce.
 * Integer arithmetic is exact in I64 and fails (OG_ERR_INVALID) on overflow; a zero divisor
 * gives null, for integers and floats alike.
 */
#ifndef OG_ENGINE_SCALAR_H
#define OG_ENGINE_SCALAR_H

#include "compiler/query_ast.h"
#include "omnigraph.h"
#include "util/vector.h"

/* out (initialised here, type out_type: I64 or F64) = a op b; b is NULL for OG_QA_NEG. */
og_status og_scalar_arith(og_qarith op, const og_vector *a, const og_vector *b, og_type out_type, og_vector *out);

/* out (initialised here, type out_type) = fn(args[0..nargs)). */
og_status og_scalar_func(og_qfn fn, const og_vector *const *args, int nargs, og_type out_type, og_vector *out);

#endif
