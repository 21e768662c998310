/*
 * lint.h — offline checking of a whole .gq file against a catalog (the compiler half of
 * `omnigraph lint`, reference-surfaces.md §1.2, reference-language.md §8–§9).
 *
 * og_lint_run() parses the file, type-checks and lowers every query, and collects per query
 * its kind, parameters, result columns (name, value kind, nullability, list item kind,
 * vector dimension), read and write sets, and warnings; plus file-level findings:
 *   Q000  parse error (then no query is processed)
 *   L201  a nullable, non-key property of a node type that has update queries but that no
 *         update query of the file assigns (warning)
 * and the per-query warning "mutation declares no params; ...".  The report is plain data;
 * the CLI renders it (text here, JSON in src/cli/cmd_lint.c).
 */
#ifndef OG_COMPILER_LINT_H
#define OG_COMPILER_LINT_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/catalog.h"
#include "compiler/ir.h"
#include "compiler/lexer.h"
#include "omnigraph.h"
#include "util/buf.h"

typedef struct og_lint_column {
    const char *name;
    const char *kind;      /* string bool int bigint float date datetime blob vector list object */
    const char *item_kind; /* list: the item kind, else NULL */
    uint32_t vector_dim;   /* vector: the dimension, else 0 */
    int nullable;
} og_lint_column;

typedef struct og_lint_query {
    char *name;
    int is_mutation;
    int ok;
    char *error;           /* "type error: T5: ..." when !ok */
    char code[8];          /* "T5", or "" */
    og_diag diag;          /* position of the error when !ok */
    char **warnings;
    size_t nwarnings;
    og_ir_query *ir;       /* when ok (params, columns, reads, writes) */
    og_lint_column *columns;
    size_t ncolumns;
} og_lint_query;

typedef struct og_lint_finding {
    int warning;           /* 0 = error */
    char code[8];          /* "Q000", "L201" */
    char *message;
    char *type_name, *property; /* L201 */
    char **query_names;
    size_t nquery_names;
    og_diag diag;          /* Q000: the parse error */
} og_lint_finding;

typedef struct og_lint_report {
    int ok;                /* no errors */
    size_t queries_processed, errors, warnings, infos;
    og_lint_query *queries;
    size_t nqueries;
    og_lint_finding *findings;
    size_t nfindings;
    og_query_file *file;   /* the parsed file (NULL after a parse error) */
    og_source src;
} og_lint_report;

/* Lints `text` (display name `file`) against cat.  *out is always filled (free with
 * og_lint_report_free), also when the file has errors; the return value is OG_OK unless
 * memory ran out.  The report borrows cat (IR nodes point into it) and text. */
og_status og_lint_run(og_lint_report *out, const og_catalog *cat, const char *file,
                      const char *text, size_t len);
void og_lint_report_free(og_lint_report *r);

/* The reference CLI's human format ("OK    query `x` (read)", "ERROR query `x`: ...",
 * "WARN  ...", "INFO  Lint complete: ...") with, under each OK query, its params, result
 * columns and read/write sets. */
og_status og_lint_render_text(og_buf *out, const og_lint_report *r);

/* Value kind of a type as lint reports it (bare node variables project their id: string). */
const char *og_lint_kind(const og_qtype *t);

/* Renders a parameter type in .gq spelling ("[String]?", "Vector(3)"). */
const char *og_lint_type_name(const og_qtype *t, char *buf, size_t cap);

/* The JSON kind of a scalar type as lint reports and stored-query schemas use it: "string",
 * "bool", "int", "bigint", "float", "date", "datetime", "blob", "vector", "list". */
const char *og_lint_scalar_kind(og_type_id id);

#endif
