/*
 * gqt.h — the logic-test case model of `omnigraph test` (docs/testing.md).
 *
 * A `.gqt` file is a scenario: a runner section (YAML: which environments to run in), a `.pg`
 * schema, NDJSON seed rows and a list of steps (read queries, mutations, branch statements,
 * restarts), each with its expected outcome.  gqt_parse.c turns the text into a gqt_case and
 * refuses malformed files with a line number; cmd_test.c runs a case through the public API
 * (include/omnigraph.h) and compares; gqt_json.c canonicalises JSON rows so that comparisons
 * do not depend on key order, number spelling or null cells.
 */
#ifndef OG_CLI_GQT_H
#define OG_CLI_GQT_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef enum gqt_step_kind { GQT_QUERY = 1, GQT_MUTATE, GQT_RESTART, GQT_LOAD, GQT_CONCURRENT } gqt_step_kind;

typedef enum gqt_expect_kind {
    GQT_EX_NONE = 0,
    GQT_EX_UNORDERED,
    GQT_EX_ORDERED,
    GQT_EX_ERROR,    /* error: <substring> */
    GQT_EX_OK,
    GQT_EX_AFFECTED, /* affected: nodes=N edges=M */
    GQT_EX_OUTCOME   /* outcome: <word> (branch merge) */
} gqt_expect_kind;

/* A byte range of the case file: the body of an expect section (what --bless rewrites). */
typedef struct gqt_span {
    size_t off, len;
} gqt_span;

/* An expectation (or a whole step) this build cannot honour: reported as skipped, with why. */
typedef struct gqt_note {
    int line;
    char *why;
} gqt_note;

/* One labelled statement of a `--- concurrent` block and the outcome its `--- expect` names. */
typedef struct gqt_session {
    char *label;
    char *branch;       /* `on B` (NULL = main) */
    char *body;
    int line;
    int expect;         /* 0 none yet, GQT_EX_OK or GQT_EX_ERROR */
    char *expect_arg;   /* error substring */
} gqt_session;

/* A step may carry several expectations (the reference's format allows rows, shape, plan, error,
 * affected, outcome on one step, in any order); each is checked on its own.  `expect` is the
 * step's rows-or-error outcome (GQT_EX_NONE when it only asserts counts or ok). */
typedef struct gqt_step {
    gqt_step_kind kind;
    int line;           /* line of the step's `---` header */
    char *branch;       /* `branch: B` (NULL = main) */
    char *body;         /* the GQ text, branch statement, or load NDJSON */
    char *params;       /* `--- params` body (NULL = none) */
    gqt_expect_kind expect;     /* GQT_EX_UNORDERED / ORDERED / ERROR, or NONE */
    int expect_line;
    char *expect_arg;   /* error substring */
    int has_ok, has_affected, has_outcome;
    uint64_t nodes, edges;
    char *outcome;      /* outcome word (branch merge) */
    char *rows;         /* rows expect body (JSONL) */
    gqt_span rows_span;
    int has_shape;
    char *shape;        /* `--- expect shape` body */
    gqt_span shape_span;
    int settings;       /* the body leads with `set`/`reset` lines or is a `show` statement */
    int show;           /* a `show NAME` / `show all` query step: its shape is derived */
    char *load_mode;    /* --- load: mode word (NULL = append) */
    char *load_from;    /* --- load: `from: B` */
    gqt_session *sessions; /* --- concurrent */
    size_t nsessions;
    int order_unenforceable; /* the `order:` script names store requests */
    char *order;        /* the `order:` line */
    char *skip_step;    /* the whole step cannot run here: why (a generated load or params) */
    gqt_note *notes;    /* expectations reported as skipped */
    size_t nnotes;
    int loop;           /* index into gqt_case.loops, or -1 */
} gqt_step;

typedef struct gqt_loop {
    char *var;          /* without `$` */
    char **values;
    size_t nvalues;
    size_t first, end;  /* steps [first, end) repeat */
} gqt_loop;

typedef struct gqt_env {
    char *target, *storage, *profile;
    int runnable;       /* this build can run it */
    char *why_not;      /* when not */
} gqt_env;

typedef struct gqt_case {
    char *path;
    char *text;         /* the whole file (NUL-terminated) */
    size_t len;
    long timeout_ms;
    gqt_env *envs;
    size_t nenvs;
    char *schema;
    char *seed;
    gqt_step *steps;
    size_t nsteps;
    gqt_loop *loops;
    size_t nloops;
    char *skip;         /* the whole case cannot be honoured here: why */
} gqt_case;

/* Parses c->text (set c->path/text/len first).  Returns 0, or -1 with a message
 * ("line N: ...") in err. */
int gqt_parse(gqt_case *c, og_buf *err);
void gqt_case_free(gqt_case *c);

/* Canonical form of one JSON value (text s[0..n)): object keys sorted, members whose value
 * is null dropped, numbers as decimals rounded at the 12th fractional digit (so 2 == 2.0),
 * strings re-escaped minimally, ", " and ": " separators.  Returns 0, or -1 with a message in
 * err when the text is not one JSON value. */
int gqt_json_canon(const char *s, size_t n, og_buf *out, og_buf *err);

/* ---- test_served.c: a case's graph calls against omnigraph-server (`test --server`) ---------
 * Each returns 0, or -1 with *err ("<class>: <message>", malloc'd) — the class spelled as
 * og_status_name, so `expect error:` means the same as embedded.  `dir` is the case's
 * temporary directory (batch files are written there). */
struct og_remote;
int gqt_srv_reset(const struct og_remote *r, const char *dir, const char *schema, const char *seed, char **err);
int gqt_srv_query(const struct og_remote *r, const char *branch, const char *src, const char *params, char ***cols,
                  size_t *ncols, char ***rows, size_t *nrows, char **err);
int gqt_srv_mutate(const struct og_remote *r, const char *branch, const char *src, const char *params, uint64_t *nodes,
                   uint64_t *edges, char **err);
int gqt_srv_load(const struct og_remote *r, const char *dir, const char *ndjson, const char *branch, const char *from,
                 const char *mode, char **err);
/* op "create" (b: from), "delete", "merge" (b: into; *outcome the merge's outcome word) */
int gqt_srv_branch(const struct og_remote *r, const char *op, const char *a, const char *b, char **outcome, char **err);
int gqt_srv_branch_list(const struct og_remote *r, char ***names, size_t *n, char **err);
void gqt_srv_strings_free(char **v, size_t n);
/* A fresh graph per case (`test --server URL` without --graph): POST /graphs creates graph
 * `id` from `schema` and `seed` is loaded into it; gqt_srv_drop deletes it (DELETE
 * /graphs/ID).  A server started without --graph-dir refuses, and its message says so. */
int gqt_srv_fresh(const struct og_remote *r, const char *id, const char *dir, const char *schema, const char *seed,
                  char **err);
int gqt_srv_drop(const struct og_remote *r, const char *id, char **err);

#endif /* OG_CLI_GQT_H */
