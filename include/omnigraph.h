/*
 * omnigraph.h — the one public C API of OmniGraph-C.
 *
 * Every surface (the `omnigraph` CLI, `omnigraph-server`, embedding programs) uses only what
 * is declared here.  Conventions, after libgit2:
 *   - every fallible function returns an og_status; 0 (OG_OK) is success;
 *   - output parameters come first; handles are opaque;
 *   - after a failure, og_error_message() returns a human message for the calling thread,
 *     naming the object that failed; it stays valid until the next failing call.
 *
 * The numeric values of og_status are stable: they are part of the ABI and of the CLI's
 * exit-code and the server's HTTP mapping tables.
 */
#ifndef OMNIGRAPH_H
#define OMNIGRAPH_H

#ifdef __cplusplus
extern "C" {
#endif

#define OG_VERSION_STRING "0.1.0"

/* The storage version this build writes and reads (_graph/format.json "storage_version"). */
int og_storage_version(void);

typedef enum og_status {
    OG_OK = 0,
    OG_ERR_INVALID = 1,              /* bad argument or malformed input (usage error) */
    OG_ERR_NOT_FOUND = 2,            /* the named object does not exist */
    OG_ERR_ALREADY_EXISTS = 3,       /* create-exclusive lost: the object is already there */
    OG_ERR_CONFLICT = 4,             /* concurrent writers: retry budget exhausted, merge conflicts */
    OG_ERR_PRECONDITION_FAILED = 5,  /* an expected head / if-commit did not hold */
    OG_ERR_CORRUPT = 6,              /* stored bytes do not decode as what they claim to be */
    OG_ERR_UNSUPPORTED_VERSION = 7,  /* a format or storage version this build cannot read */
    OG_ERR_IO = 8,                   /* the operating system or the object store failed */
    OG_ERR_NOMEM = 9,                /* an allocation failed */
    OG_ERR_PARSE = 10,               /* .pg / .gq / NDJSON syntax error */
    OG_ERR_TYPE = 11,                /* type-check / catalog error */
    OG_ERR_CONSTRAINT = 12,          /* integrity violation (key, unique, enum, range, card, RI) */
    OG_ERR_UNSUPPORTED = 13,         /* a valid request this build refuses (e.g. a migration step) */
    OG_ERR_AUTH = 14,                /* missing or bad credentials */
    OG_ERR_THROTTLED = 15,           /* the store asked us to slow down and retries ran out */
    OG_ERR_LIMIT = 16,               /* a resource limit was exceeded before any effect */
    OG_ERR_INTERNAL = 17,            /* a bug: an internal invariant did not hold */
    OG_ERR_UNAVAILABLE = 18          /* the object store could not be reached (retries ran out); retry later */
} og_status;

/* Stable lower-case name of a status ("not_found", "conflict", ...). Never NULL. */
const char *og_status_name(og_status st);

/* The calling thread's message for its last failure ("" when none). */
const char *og_error_message(void);

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ========================================================================================
 * Databases
 * ======================================================================================== */

/* One open graph: a directory on a local disk or an "s3://bucket/prefix" root.  A handle may
 * be used from several threads; several processes may open one graph at once (writes are
 * arbitrated by the store, never by a lock). */
typedef struct og_db og_db;

typedef struct og_open_opts {
    const char *actor;   /* recorded on every commit this handle writes; NULL = "omnigraph" */
    size_t cache_bytes;  /* bound of the handle's cache of immutable objects; 0 = $OMNIGRAPH_CACHE_SIZE, else 64 MiB */
    /* How `actor` was established, recorded with it on every commit ("actor_via" in commit
     * JSON): "local" (the default: named by a local caller, not verified), "cluster" (the
     * cluster operator), "token", "unauthenticated" (a server's, per thread). */
    const char *actor_via;
} og_open_opts;

/* Creates a graph at `uri` from `.pg` schema text (`schema_name` labels errors, e.g. the file
 * name): one empty table per type, the genesis commit, branch "main".
 * Returns OG_OK, OG_ERR_PARSE / OG_ERR_TYPE (the schema; the message has file:line:col),
 * OG_ERR_ALREADY_EXISTS (a graph is there), OG_ERR_IO.  *out must be freed with og_db_close. */
og_status og_db_init(og_db **out, const char *uri, const char *schema_name, const char *schema, size_t len,
                     const og_open_opts *opts);

/* Opens an existing graph.  OG_ERR_NOT_FOUND (no graph at uri), OG_ERR_UNSUPPORTED_VERSION
 * (written by a newer build), OG_ERR_CORRUPT, OG_ERR_IO. */
og_status og_db_open(og_db **out, const char *uri, const og_open_opts *opts);
void og_db_close(og_db *db);
/* on = 1: keep branch heads between calls while a file-system change watch says no branch log
 * changed (local graphs on a local file system; elsewhere every call re-reads the head, as
 * with 0, the default).  For long-lived handles such as a server's: a write by any process
 * on this machine is still seen by the next call that starts after it completed.  Holds one
 * inotify watch per branch read. */
void og_db_keep_heads(og_db *db, int on);

/* Sets the actor recorded on the commits (and branch log entries) that the CALLING THREAD
 * writes, through any handle, until cleared with NULL; it wins over og_open_opts.actor.
 * A server calls it per request with the actor of the authenticated token, so one shared
 * handle attributes every write to its caller.  OG_ERR_INVALID: empty, longer than 256
 * bytes, or holding control characters (the thread's actor is then unchanged). */
og_status og_set_thread_actor(const char *actor);
/* og_set_thread_actor with the actor's provenance, recorded as the commits' "actor_via":
 * "token" (a server matched a bearer token), "unauthenticated" (a server without tokens;
 * actor may then be NULL: the handle's actor), "local", "cluster".  og_set_thread_actor
 * (or NULL, NULL) clears it: the handle's og_open_opts.actor_via applies again.
 * OG_ERR_INVALID for another value. */
og_status og_set_thread_actor_via(const char *actor, const char *via);
/* The message the calling thread's next writes (mutate, load, merge, schema apply, optimize)
 * record on their commits, shown by og_db_commit_list / og_db_commit_show ("message"); NULL
 * clears it (commits then carry none).  OG_ERR_INVALID: longer than 4096 bytes, or holding
 * control characters other than newline and tab (the thread's message is then unchanged). */
og_status og_set_thread_commit_message(const char *message);

/* Which state a read sees: the head of `branch` (NULL = "main"), or, when `commit` is set,
 * that commit (time travel).  The whole read uses one snapshot. */
typedef struct og_read_opts {
    const char *branch;
    const char *commit;
} og_read_opts;

/* ========================================================================================
 * Queries
 * ======================================================================================== */

/* A query result: ordered, typed columns.  Free with og_rows_free. */
typedef struct og_rows og_rows;

/* Compiles and runs read query `name` (NULL = the source's only query) of `.gq` text
 * `source`, with parameters as a JSON object text (NULL = none).
 * Returns OG_OK, OG_ERR_PARSE / OG_ERR_TYPE (compile errors, with the reference's T-codes),
 * OG_ERR_INVALID (a parameter, or a mutation given to og_db_query), OG_ERR_NOT_FOUND (no such
 * query, branch or commit), OG_ERR_UNSUPPORTED (a feature this build does not run yet). */
/* Per-query budgets (docs/maintenance.md "Query budgets").  A read query that runs longer than
 * time_ms, or whose intermediate results (bindings, computed columns, sort buffers) grow past
 * memory_bytes, stops promptly with OG_ERR_LIMIT naming the budget; what it held is freed and
 * the handle stays usable.  A field of 0 inherits (call -> handle -> $OG_QUERY_TIMEOUT_MS /
 * $OG_QUERY_MAX_MEMORY -> the defaults below); a negative field means unlimited. */
typedef struct og_budget {
    int64_t time_ms;
    int64_t memory_bytes;
} og_budget;
#define OG_QUERY_DEFAULT_TIME_MS 120000                 /* 2 minutes */
#define OG_QUERY_DEFAULT_MEMORY_BYTES ((int64_t)4 << 30) /* 4 GiB */
/* The handle's budgets for every later query (NULL = back to the defaults). */
void og_db_set_budget(og_db *db, const og_budget *b);
/* og_db_query with a budget for this one call (NULL = the handle's). */
og_status og_db_query_budget(og_rows **out, og_db *db, const char *source, size_t len, const char *name,
                             const char *params_json, const og_read_opts *at, const og_budget *budget);

og_status og_db_query(og_rows **out, og_db *db, const char *source, size_t len, const char *name,
                      const char *params_json, const og_read_opts *at);

/* Cancellation (Ctrl-C in `omnigraph shell`, docs/shell.md): once *flag is nonzero, the query,
 * mutation or load running on `db` stops at its next budget check with OG_ERR_LIMIT ("query
 * cancelled", "mutation cancelled"); a write publishes nothing.  The library only reads the
 * flag, so a signal handler may set it; the caller clears it before the next call.  NULL (the
 * default) = not cancellable. */
void og_db_set_cancel(og_db *db, const volatile int *flag);
/* The same for the calling thread's calls on any handle (a server's request: one handle, many
 * concurrent calls, each cancellable on its own — docs/mcp.md "Over HTTP"): while set, this
 * thread's queries, mutations and loads watch `flag` instead of the handle's.  NULL = back to
 * the handle's flag. */
void og_set_thread_cancel(const volatile int *flag);

/* Per-query options of og_db_query_ex (zero = og_db_query's behaviour). */
typedef struct og_query_opts {
    int exact; /* nearest(...) never uses a vector index: exact search (docs/search.md "Vector index") */
    uint32_t ef; /* nearest(...) over a vector index: the search beam per data file (0 = the
                  * default, 200; larger = better recall, slower; docs/search.md "Vector index") */
} og_query_opts;

/* og_db_query with per-query options `qo` (may be NULL). */
og_status og_db_query_ex(og_rows **out, og_db *db, const char *source, size_t len, const char *name,
                         const char *params_json, const og_read_opts *at, const og_query_opts *qo);

/* The plan of read query `name` of `source` (arguments as og_db_query) as text: one line per
 * operator in the order it runs, with the access path of each binding (key_lookup or
 * full_scan, join=cross for a separate component), the traversal, the predicates pushed into
 * it, where each filter runs, and estimated rows; `analyze` != 0 also runs the query and adds
 * the rows every step produced.  Format: docs/query-language.md "Explain".  *out is
 * NUL-terminated; free it with og_free.  Errors as og_db_query. */
og_status og_db_query_explain(char **out, og_db *db, const char *source, size_t len, const char *name,
                              const char *params_json, const og_read_opts *at, int analyze);

/* Checks every query of `.gq` text `source` against the schema of the state `at` selects
 * (NULL = the head of "main") without running anything, as `omnigraph lint` does offline:
 * {"ok","errors","warnings","queries":[{"name","kind":"read"|"mutation","ok"}],
 *  "diagnostics":[{"severity":"error"|"warning","code" ("Q000" parse, "T<n>" type, "L201", or
 *  ""),"message","query" (null for the file),"line","column","end_line","end_column" (1-based,
 *  columns in code points),"start","end" (the byte span),"hint"?}]} — a finding about the file
 * as a whole (L201) has null positions.  A text with errors is OG_OK with "ok": false; errors
 * are only OG_ERR_NOT_FOUND (branch, commit) and OG_ERR_NOMEM.  Free *out with og_free. */
og_status og_db_lint(char **out, og_db *db, const char *source, size_t len, const og_read_opts *at);

size_t og_rows_count(const og_rows *r);
size_t og_rows_width(const og_rows *r);
/* Column name as the reference spells it ("p.name", an alias, ...). */
const char *og_rows_column_name(const og_rows *r, size_t col);
/* Column type in the query language's spelling ("String", "I64?", "[String]", "Vector(3)"). */
const char *og_rows_column_type(const og_rows *r, size_t col);
/* The commit the result was read at. */
const char *og_rows_commit(const og_rows *r);
/* The query's name. */
const char *og_rows_query_name(const og_rows *r);

int og_rows_is_null(const og_rows *r, size_t row, size_t col);
/* Value accessors; the column's type decides which applies (else 0 / NULL). */
int64_t og_rows_int(const og_rows *r, size_t row, size_t col);      /* ints, Date (days), DateTime (ms) */
uint64_t og_rows_uint(const og_rows *r, size_t row, size_t col);    /* U32, U64 */
double og_rows_float(const og_rows *r, size_t row, size_t col);     /* F32, F64 */
int og_rows_bool(const og_rows *r, size_t row, size_t col);
const char *og_rows_string(const og_rows *r, size_t row, size_t col, size_t *len); /* String (not NUL-terminated) */

typedef enum og_format {
    OG_FORMAT_JSON = 0,  /* {"query_name","target","row_count","columns","rows","graph_commit_id"} */
    OG_FORMAT_JSONL,     /* a metadata line, then one JSON object per row */
    OG_FORMAT_CSV,       /* RFC 4180, a header line */
    OG_FORMAT_TABLE,     /* aligned text for people; cells past 60 columns are cut with "..." and
                          * the footer says how many were */
    OG_FORMAT_TABLE_WIDE, /* the same table with every cell whole */
    OG_FORMAT_ARROW       /* binary: an Apache Arrow IPC stream (docs/query-language.md "Arrow
                           * output"); *len counts its bytes */
} og_format;

/* Renders r (values encoded as reference-language.md §8: Date "YYYY-MM-DD", DateTime
 * "YYYY-MM-DDTHH:MM:SS.mmmZ", 64-bit ints beyond 2^53 as strings, NaN/Infinity as strings,
 * floats as their shortest round-trip decimal, F32 as a float32: docs/query-language.md).
 * `target` names what was read ("main", a commit id).  *out is NUL-terminated; free it with
 * og_free. */
og_status og_rows_render(char **out, size_t *len, const og_rows *r, og_format fmt, const char *target);
/* og_rows_render held to the time budget the query ran under (og_budget, counted from when the
 * query began: docs/maintenance.md "Query budgets"), so that a result too large to render in
 * time stops as the query would have: OG_ERR_LIMIT "query (rendering its rows) stopped: time
 * budget of N ms exceeded (...)", *out NULL.  For servers, where rendering a large result can
 * cost more than running the query.  Errors otherwise as og_rows_render. */
og_status og_rows_render_in_budget(char **out, size_t *len, const og_rows *r, og_format fmt, const char *target);
void og_rows_free(og_rows *r);
/* The Apache Arrow C Data Interface (arrow.apache.org/docs/format/CDataInterface.html): the
 * two structs exactly as that specification defines them, guarded as it prescribes so that a
 * program that also includes Arrow's own header compiles. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif

/* Exports r through the Arrow C Data Interface: *schema a struct ("+s") with one child per
 * column (named as og_rows_column_name, typed as docs/query-language.md "Arrow output": "i",
 * "l", "I", "L", "f", "g", "b", "tdD", "tsm:UTC", "u", "z", "+l", "+w:N", "n"), *array a struct
 * array of og_rows_count(r) rows.  Both own copies of what they hold: r may be freed at once;
 * the caller (or the Arrow library it hands them to) calls each one's release callback once.
 * Returns OG_OK, OG_ERR_INVALID (a NULL argument), OG_ERR_NOMEM, OG_ERR_LIMIT (a column's
 * strings or list items past 2 GiB); on error both are left released (release == NULL). */
og_status og_rows_to_arrow(const og_rows *r, struct ArrowSchema *schema, struct ArrowArray *array);

/* Keeps rows [offset, offset + limit) of r and drops the others, so a surface that bounds
 * what it sends (an agent's page, a response cap) renders only that page.  Returns the rows
 * kept; og_rows_count(r) before the call is the total.  Out of memory keeps r whole. */
size_t og_rows_slice(og_rows *r, size_t offset, size_t limit);

/* Frees memory returned by this API (rendered text, snapshot JSON, ...). */
void og_free(void *p);

/* A jansson value as JSON text exactly like json_dumps(j, flags), except that reals are
 * spelled as the rendered results spell them (the shortest decimal that reads back as the
 * same double: 0.1, not 0.10000000000000001).  For surfaces that re-wrap an API document.
 * NULL when out of memory; free with og_free. */
struct json_t;
char *og_json_text(const struct json_t *j, size_t flags);

/* Parses JSON text (an API document: rendered rows, a snapshot) like jansson's
 * json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY), except that an integer
 * above 2^63-1 — a U64 the results spell as a bare number, which jansson refuses — is kept:
 * og_json_text prints it back as that number, and og_json_digits returns its digits (a
 * string value otherwise holds it: read numbers through these two).  NULL when the text is
 * not JSON or out of memory; free with json_decref. */
struct json_t *og_json_read(const char *text, size_t len);
/* The decimal digits of such an integer, or NULL when j is any other value. */
const char *og_json_digits(const struct json_t *j);

/* A query result a server answered (its JSON body, as og_json_read parses it: "columns",
 * "rows" of row objects, "query_name", "target" as a plain string, "row_count",
 * "graph_commit_id") rendered in fmt byte for byte as og_rows_render renders the same rows in
 * process — for surfaces that print what a server answered as the embedded CLI prints it.
 * OG_ERR_INVALID for a body without "columns" and "rows" arrays, or for OG_FORMAT_ARROW (ask
 * the server for Arrow instead).  Free *out with og_free. */
og_status og_read_output_render(char **out, size_t *len, const struct json_t *j, og_format fmt);

/* Session settings (docs/query-language.md "Session settings"): checks `name = value`, the
 * value in the language's spelling (`v2`, `20`), against the one table the `set` lines of a
 * query are checked with — for what carries settings beside the text: `--set NAME=VALUE` and
 * the `settings` member of a served query or mutation.  OG_OK, or OG_ERR_INVALID with the
 * reference's message ("unknown setting `x`; expected one of engine", "unknown value `v1`
 * for setting `engine`; expected one of v2"). */
og_status og_settings_check(const char *name, const char *value);

/* ========================================================================================
 * Writes: every write publishes exactly one commit (or none), through one atomic step.
 * ======================================================================================== */

typedef struct og_receipt {
    int published;          /* 0: nothing changed, nothing was published (e.g. no match) */
    char commit[32];        /* the published commit id (ULID) */
    char branch[256];
    int attempts;           /* publish attempts (1 = no concurrent writer got in between) */
    uint64_t records, inserted, updated;          /* load; mutate (inserted, updated) */
    int embed_touched; /* load: it touched a node type with an @embed property, whose vectors a
                        * load never generates (results say embedding_generation "unsupported") */
    uint64_t affected_nodes, affected_edges;      /* mutate */
    /* schema apply with allow_data_loss: what the hard drop reclaimed after the publish */
    uint64_t reclaimed_tables, reclaimed_versions, reclaimed_files, reclaimed_bytes;
    og_status reclaim_status;  /* OG_OK, or why reclaiming failed (the apply is published anyway) */
    char reclaim_error[512];   /* its message ("" when reclaim_status is OG_OK) */
    /* load and mutate: text / vector index files built right after the publish because the
     * write left enough rows unindexed (docs/indexes.md "Automatic indexing") */
    uint64_t index_files_built;
    og_status index_status;    /* OG_OK, or why that build failed (the write is published anyway) */
    /* mutate: the affected rows by what happened to them — `inserted` (a new id), `updated`
     * (an update, or an insert whose key existed: an upsert) and `deleted` (with the edges a
     * node delete cascaded to); inserted + updated + deleted = affected_nodes + affected_edges */
    uint64_t deleted;
} og_receipt;

typedef enum og_load_mode { OG_LOAD_OVERWRITE = 1, OG_LOAD_APPEND, OG_LOAD_MERGE } og_load_mode;

/* "overwrite" / "append" / "merge" -> mode; OG_ERR_INVALID (with a message) otherwise. */
og_status og_load_mode_parse(const char *s, og_load_mode *out);
/* The mode's name ("overwrite", ...). */
const char *og_load_mode_name(og_load_mode m);

/* Where a load is, as og_load_opts.on_progress is told.  A publish attempt that lost a race
 * reads the file again from the start: `attempt` then grows and the counts start over. */
typedef struct og_load_progress {
    const char *stage;       /* "reading" (every progress_every records while the file is read),
                              * "validating" (the file is read: constraints across it and the
                              * base), "writing" (the staged rows go to data files) — each once
                              * per attempt, in that order — then, after the publish, "indexing"
                              * (once, when the load writes the key maps and topologies of what
                              * it loaded: docs/load.md "Graph indexes") */
    uint64_t records;        /* records parsed so far (all of them from "validating" on) */
    uint64_t bytes_read;     /* bytes of the file consumed so far */
    uint64_t bytes_total;    /* the file's size (0 when it is not a regular file) */
    uint64_t flushed_batches;/* staged batches already written to (unpublished) data files */
    int attempt;             /* 1, then 2… when a concurrent writer forced a retry */
} og_load_progress;
/* Called on the loading thread, between records; it must not call back into the handle. */
typedef void (*og_load_progress_fn)(void *ctx, const og_load_progress *p);

typedef struct og_load_opts {
    og_load_mode mode;         /* required: overwrite | append | merge */
    const char *branch;        /* NULL = "main" */
    const char *from;          /* fork `branch` from this branch first when it does not exist */
    const char *expected_head; /* the branch head must be this commit (else OG_ERR_PRECONDITION_FAILED) */
    int progress;              /* report progress on stderr every 100,000 records */
    og_load_progress_fn on_progress; /* optional: told the load's progress (og_load_progress) */
    void *progress_ctx;              /* passed to on_progress */
    uint64_t progress_every;         /* records between "reading" calls; 0 = 10,000 */
    int no_index;              /* 1: build no text / vector index after the load (bulk pipelines
                                * that run `index build` later; docs/indexes.md "Automatic indexing") */
} og_load_opts;

/* Loads an NDJSON file (reference-language.md §6) as one commit.  Errors: OG_ERR_PARSE
 * (malformed line, "file:line: ..."), OG_ERR_INVALID (unknown type or property, bad value),
 * OG_ERR_CONSTRAINT (enum, range, check, unique, key, edge endpoint, cardinality),
 * OG_ERR_ALREADY_EXISTS (append hit an existing id: key_conflict), OG_ERR_LIMIT,
 * OG_ERR_PRECONDITION_FAILED, OG_ERR_CONFLICT (concurrent writers exhausted the retries).
 * Nothing is published on any error. */
og_status og_db_load(og_receipt *out, og_db *db, const char *path, const og_load_opts *opts);

/* One CSV file of og_db_load_csv: `type` is the node or edge type of its rows, or NULL when
 * the file has a :LABEL (nodes) / :TYPE (edges) column naming each row's type. */
typedef struct og_load_csv_file {
    const char *type;
    const char *path;
} og_load_csv_file;

/* Loads CSV files (docs/load.md "CSV": a header row, neo4j-admin / LSQB column conventions,
 * RFC 4180 quoting) as ONE commit, like og_db_load of an NDJSON file holding their rows in
 * order.  `delimiter` 0 means ','.  Errors as og_db_load; a malformed file, an unknown column
 * or a cell of the wrong type is "file:line:column: what".  Nothing is published on any error. */
og_status og_db_load_csv(og_receipt *out, og_db *db, const og_load_csv_file *files, size_t nfiles, char delimiter,
                         const og_load_opts *opts);

/* Runs mutation `name` of `.gq` source (insert / update / delete) as one commit.
 * `expected_head` (may be NULL): compare-and-swap on the branch head.  Errors as og_db_query
 * and og_db_load. */
og_status og_db_mutate(og_receipt *out, og_db *db, const char *source, size_t len, const char *name,
                       const char *params_json, const char *branch, const char *expected_head);

/* og_db_mutate with options.  `from`: fork `branch` from the head of branch `from` first
 * when `branch` does not exist (or was deleted), as og_load_opts.from; a branch that exists
 * is written as it is.  Errors as og_db_mutate, plus OG_ERR_NOT_FOUND (no branch `from`). */
typedef struct og_db_mutate_opts {
    const char *branch;        /* NULL = "main" */
    const char *from;          /* may be NULL */
    const char *expected_head; /* may be NULL: compare-and-swap on the branch head */
} og_db_mutate_opts;
og_status og_db_mutate_ex(og_receipt *out, og_db *db, const char *source, size_t len, const char *name,
                          const char *params_json, const og_db_mutate_opts *opts);

/* Budgets of writes (docs/maintenance.md "Budgets of mutations and loads").  A mutation or a
 * load that runs longer than time_ms, or whose staged rows and intermediate results grow past
 * memory_bytes, stops with OG_ERR_LIMIT naming the budget; nothing is published, the files it
 * wrote are deleted and the handle stays usable.  Fields as og_budget for queries: 0 inherits (call -> handle ->
 * $OG_WRITE_TIMEOUT_MS / $OG_WRITE_MAX_MEMORY -> the defaults below), negative = unlimited.
 * The automatic compaction that may follow a published write is not counted. */
#define OG_WRITE_DEFAULT_TIME_MS 3600000                /* 1 hour */
#define OG_WRITE_DEFAULT_MEMORY_BYTES ((int64_t)4 << 30) /* 4 GiB */
/* The handle's budgets for every later mutation and load (NULL = back to the defaults). */
void og_db_set_write_budget(og_db *db, const og_budget *b);
/* og_db_mutate_ex / og_db_load with a budget for this one call (NULL = the handle's). */
og_status og_db_mutate_budget(og_receipt *out, og_db *db, const char *source, size_t len, const char *name,
                              const char *params_json, const og_db_mutate_opts *opts, const og_budget *budget);
og_status og_db_load_budget(og_receipt *out, og_db *db, const char *path, const og_load_opts *opts,
                            const og_budget *budget);

/* Writes the graph (or only the listed types) as NDJSON that og_db_load accepts: loading it
 * into a graph with the same schema in overwrite mode reproduces every row and id. */
og_status og_db_export(og_db *db, FILE *out, const og_read_opts *at, const char *const *types, size_t ntypes);
/* Writes one node or edge type as CSV that og_db_load_csv reads back (docs/load.md "CSV"): a
 * header row (`:ID` for unkeyed nodes and edges, `from`/`to` for edges, then the properties),
 * one row per entity.  `delimiter` 0 means ','.  OG_ERR_NOT_FOUND for an unknown type. */
og_status og_db_export_csv(og_db *db, FILE *out, const og_read_opts *at, const char *type, char delimiter);

/* The snapshot a read would see, as JSON text: {"commit","branch","schema","tables":[{"type",
 * "kind","table","version","rows"}]}.  Free *out with og_free. */
og_status og_db_snapshot(char **out, og_db *db, const og_read_opts *at);

/* The bytes of Blob property `property` of the node (is_edge 0) or edge (1) of type `type`
 * whose id is `id`, at the read's snapshot.  *out (free with og_free) holds *len bytes;
 * commit_out (may be NULL) receives the commit read.  Errors: OG_ERR_INVALID (unknown type or
 * property, or not a Blob property), OG_ERR_NOT_FOUND (no such entity, branch or commit, or
 * the cell is null). */
og_status og_db_blob_get(char **out, size_t *len, char commit_out[32], og_db *db, const og_read_opts *at, int is_edge,
                         const char *type, const char *id, const char *property);

/* The `.pg` source of the schema at that snapshot.  Free *out with og_free. */
og_status og_db_schema_source(char **out, og_db *db, const og_read_opts *at);

/* The schema catalog at that snapshot, for tools that complete or explain queries:
 * {"interfaces":[T],"nodes":[T],"edges":[T]} where T is {"name","properties":[{"name","type",
 * "nullable","key"}]} plus "implements":[...] on a node and "from","to" on an edge; "type" is
 * the schema spelling ("String", "I64?", "[String]", "enum(a, b)").  Free *out with og_free.
 * Errors: OG_ERR_NOT_FOUND (branch or commit), I/O. */
og_status og_db_catalog(char **out, og_db *db, const og_read_opts *at);

/* Schema evolution (reference-language.md §7).  og_db_schema_plan: the migration from the
 * schema at the head of `branch` (NULL = main) to `schema` text, as text ("supported: yes" +
 * steps) or, with json != 0, {"supported":bool,"steps":[...]}; unsupported steps carry their
 * [OG-XXX-NNN] code.  Free *out with og_free.  Compile errors: OG_ERR_PARSE / OG_ERR_TYPE. */
og_status og_db_schema_plan(char **out, og_db *db, const char *branch, const char *schema_name, const char *schema,
                            size_t len, int json);
/* Applies a fully supported plan as one commit (kind schema_apply); a no-op plan publishes
 * nothing.  `allow_data_loss` makes drops hard: the dropped columns are rewritten out of the
 * data files in the new commit, and right after the publish the history of the affected
 * tables (a dropped type's whole table) is deleted; reading an earlier commit's rows of those
 * tables then fails with OG_ERR_NOT_FOUND ("reclaimed by a hard drop").  The receipt's
 * reclaimed_* fields count what was deleted; a failure while reclaiming does not fail the
 * call (the commit is published): it is in reclaim_status / reclaim_error.  *plan_out (may be
 * NULL) receives the applied plan as og_db_schema_plan renders it.  Errors:
 * OG_ERR_UNSUPPORTED (a refused step, or branches other than main exist), compile errors,
 * OG_ERR_CONFLICT. */
og_status og_db_schema_apply(og_receipt *out, char **plan_out, og_db *db, const char *branch, const char *schema_name,
                             const char *schema, size_t len, int allow_data_loss, int json);

/* og_db_schema_apply with options: `expected_head` (may be NULL) pins the head of `branch`
 * (OG_ERR_PRECONDITION_FAILED, nothing written, when it is another commit). */
typedef struct og_db_schema_apply_opts {
    const char *branch;        /* NULL = "main" */
    const char *expected_head; /* may be NULL */
    int allow_data_loss;
    int json;                  /* *plan_out as JSON */
} og_db_schema_apply_opts;
og_status og_db_schema_apply_ex(og_receipt *out, char **plan_out, og_db *db, const char *schema_name, const char *schema,
                                size_t len, const og_db_schema_apply_opts *opts);

/* ========================================================================================
 * Versioning: branches, history, changes, merge (docs/versioning.md).  Text results are JSON
 * documents (free with og_free); their shapes are listed in docs/c-api.md "Versioning".
 * ======================================================================================== */

/* Creates branch `name` from the head of `from_branch`, or from commit `from_commit` (at most
 * one of the two; both NULL = the head of "main").  Writes no commit and copies no data.
 * head_out (may be NULL) receives the commit the branch starts at.  Errors:
 * OG_ERR_ALREADY_EXISTS, OG_ERR_NOT_FOUND (source), OG_ERR_INVALID (name rules, main). */
og_status og_db_branch_create(og_db *db, const char *name, const char *from_branch, const char *from_commit,
                              char head_out[32]);
/* Options of og_db_branch_create_ex.  Set `version` to OG_DB_BRANCH_CREATE_OPTS_VERSION and
 * zero the rest (later versions only add fields at the end). */
#define OG_DB_BRANCH_CREATE_OPTS_VERSION 1
typedef struct og_db_branch_create_opts {
    unsigned int version;
    const char *from_branch; /* as og_db_branch_create (NULL with from_commit NULL = "main") */
    const char *from_commit; /* may be NULL */
    const char *message;     /* what the branch is for (may be NULL): kept in its create entry and
                              * listed by og_db_branch_list as "message"; at most 1024 bytes of
                              * UTF-8, no control characters other than newline and tab */
} og_db_branch_create_opts;
/* og_db_branch_create with options (NULL = all defaults).  Errors as og_db_branch_create, plus
 * OG_ERR_INVALID for a bad message or an unknown version; a refused create leaves nothing. */
og_status og_db_branch_create_ex(char head_out[32], og_db *db, const char *name, const og_db_branch_create_opts *opts);
/* Ends branch `name` (its data stays until cleanup).  OG_ERR_INVALID (main), OG_ERR_NOT_FOUND. */
og_status og_db_branch_delete(og_db *db, const char *name);
/* The same, only while the branch head is `expected_head`: else OG_ERR_PRECONDITION_FAILED
 * and nothing is deleted. */
og_status og_db_branch_delete_if(og_db *db, const char *name, const char *expected_head);
/* {"branches":[{"name","head","incarnation","seq","created_by","created_at","base","message"}]}
 * sorted by name; created_by / created_at / base (the commit it was created from) / message
 * (given at creation) come from the branch's create entry (null when cleanup removed it;
 * message null when none was given). */
og_status og_db_branch_list(char **out, og_db *db);
/* The actor that created the live incarnation of branch `name` into out (cap bytes; "" when
 * its create entry is gone, e.g. after cleanup) — what a policy's `owned` scope compares with
 * the caller (docs/policy.md).  OG_ERR_NOT_FOUND when the branch does not exist. */
og_status og_db_branch_creator(og_db *db, const char *name, char *out, size_t cap);

/* The first-parent history of `branch` (NULL = "main"), newest first, at most `limit` commits
 * (0 = all): {"branch","head","commits":[<commit>...]}.  A commit is {"id","parents",
 * "schema","kind","mode","stats","actor","message","created_at","depth"}; depth is the
 * commit's first-parent depth (1 for the genesis commit), which the CLI and the server print
 * as the reference's graph_manifest_version. */
og_status og_db_commit_list(char **out, og_db *db, const char *branch, size_t limit);
/* One commit: <commit> plus "tables":[{"type","kind","table","version","rows"}]. */
og_status og_db_commit_show(char **out, og_db *db, const char *commit_id);
/* Resolves a commit reference to a full commit id (out_id, cap >= 27): a full id, a unique
 * id prefix (4+ characters, case-insensitive), a branch name (its head), the short form (the
 * id's last 8 to 16 characters, tried when no id starts so), or REF~N (the N-th first-parent
 * ancestor of REF; REF~ = REF~1).  Every API call that takes a commit accepts these
 * spellings.  Errors: OG_ERR_NOT_FOUND (no such branch or commit, or ~N beyond the root),
 * OG_ERR_INVALID (an ambiguous prefix or short form, listing the candidates; a malformed ~N). */
og_status og_db_resolve_commit(og_db *db, const char *ref, char *out_id, size_t cap);
/* The merge base of two commit references (any spelling og_db_resolve_commit takes): the
 * newest commit both histories contain, what a merge of one into the other diffs against.
 * out_id as og_db_resolve_commit.  Errors: those of og_db_resolve_commit; OG_ERR_NOT_FOUND
 * when the two share no history. */
og_status og_db_merge_base(og_db *db, const char *a, const char *b, char *out_id, size_t cap);

#define OG_CHANGES_INSERT (1u << 1)
#define OG_CHANGES_UPDATE (1u << 2)
#define OG_CHANGES_DELETE (1u << 3)

typedef struct og_changes_opts {
    const char *from, *to;     /* commits (og_db_changes only) */
    const char *const *types;  /* only these node/edge types; NULL = all */
    size_t ntypes;
    unsigned ops;              /* OG_CHANGES_* bits; 0 = all */
} og_changes_opts;

/* Row-level changes from commit `from` to commit `to` of one schema:
 * {"from","to","stats":{...},"changes":[{"kind","type","id","op","before"?,"after"?}]},
 * nodes before edges, then type, then id.  Errors: OG_ERR_NOT_FOUND, OG_ERR_UNSUPPORTED
 * (change_schema_boundary). */
og_status og_db_changes(char **out, og_db *db, const og_changes_opts *o);
/* The changes of commit `commit_id` against its first parent, plus a "cause" block.
 * OG_ERR_INVALID (commit_has_no_parent) for the genesis commit.  `filter` may be NULL. */
og_status og_db_commit_changes(char **out, og_db *db, const char *commit_id, const og_changes_opts *filter);

/* How a row conflict of a merge is settled (Git's `-X ours|theirs`): fail (the default: the
 * merge publishes nothing), keep the target's row (ours), or take the source's change (theirs:
 * its update, insert or delete). */
typedef enum og_merge_strategy {
    OG_MERGE_STRATEGY_FAIL = 0,
    OG_MERGE_STRATEGY_OURS = 1,
    OG_MERGE_STRATEGY_THEIRS = 2
} og_merge_strategy;

/* The change feed: one bounded page of `branch`'s first-parent history after a position, as
 * blocks of row changes (docs/versioning.md "The change feed"):
 * {"blocks":[{"cause":{"graph_commit_id","parent_commit_id","merged_parent_commit_id",
 * "authored_branch","actor_id","authored_at"},"changes":[{"kind","type":{"id","name"},"id","op",
 * "before"?,"after"?}]}],"next_page_token","cursor","caught_up"} (images are {"properties",
 * "endpoints"?}).  The first page starts at `cursor` (a terminal page's "cursor"), or `start`:
 * "now" (the default: nothing is replayed), "beginning", or "after:<commit>" (any commit
 * reference); further pages of the same poll continue with `page_token` (the poll's cut, the
 * branch head when it began, is kept).  A page that ends inside a commit carries only
 * "next_page_token"; the durable "cursor" comes only on the terminal page, after complete
 * commits, with "caught_up" (whether the cut is still the head).  Errors: OG_ERR_INVALID (the
 * message begins "change cursor rejected:" for a malformed cursor / token / start), OG_ERR_LIMIT
 * (limit above 8192), OG_ERR_NOT_FOUND (no such branch; "change_feed_gap: ..." when the cursor's
 * commit is not in the branch's first-parent history: re-baseline), OG_ERR_UNSUPPORTED (a
 * commit across a schema change).  Two errors also leave a detail object in *out: a gap
 * {"cursor","first_unreadable_commit_id"}, and a commit that cannot be diffed
 * {"reason":"parentless_commit"|"schema_boundary","graph_commit_id"}.  Free *out with og_free
 * (also after an error). */
#define OG_CHANGES_NODES 1u
#define OG_CHANGES_EDGES 2u
typedef struct og_changes_poll_opts {
    const char *branch;        /* NULL = "main" */
    const char *cursor;        /* at most one of cursor, start, page_token */
    const char *start;
    const char *page_token;
    size_t limit;              /* changes per page: 0 = 1000, at most 8192 */
    const char *const *types;  /* only these types; NULL = all */
    size_t ntypes;
    unsigned ops;              /* OG_CHANGES_INSERT|UPDATE|DELETE bits; 0 = all */
    unsigned kinds;            /* OG_CHANGES_NODES|EDGES bits; 0 = both */
} og_changes_poll_opts;
og_status og_db_changes_poll(char **out, og_db *db, const og_changes_poll_opts *o);
/* One commit's changes against its first parent in the feed's shape, {"cause","changes"} (a
 * block of og_db_changes_poll), filtered by o's types, ops and kinds; o->branch names the
 * cause's "authored_branch" (NULL = "main"); the paging fields are ignored.  A commit that
 * cannot be diffed fails as og_db_changes_poll does, with the same detail in *out. */
og_status og_db_commit_feed(char **out, og_db *db, const char *commit, const og_changes_poll_opts *o);

typedef struct og_db_merge_opts {
    const char *source;        /* required */
    const char *target;        /* NULL = "main" */
    const char *expected_head; /* the target head must be this commit (else OG_ERR_PRECONDITION_FAILED) */
    int delete_branch;         /* delete `source` after a successful merge */
} og_db_merge_opts;

/* How og_db_branch_merge_ex settles row conflicts. */
typedef struct og_db_merge_strategy {
    og_merge_strategy all;     /* every row conflict (divergent_insert, divergent_update, delete_vs_update) */
    og_merge_strategy divergent_insert, divergent_update, delete_vs_update; /* per kind: overrides `all` unless FAIL */
} og_db_merge_strategy;

/* Merges branch `source` into `target` as one commit (or none when already up to date):
 * {"outcome":"already_up_to_date"|"fast_forward"|"merged","source","target","actor_id","base",
 * "source_head","previous_head","commit":{...}|null,"inserted","updated","deleted",
 * "branch_deleted","resolved":[...],"stats":{"fragments_read","fragments_skipped","rows_read"}} (stats: what
 * the merge's diffs read).  On OG_ERR_CONFLICT nothing is published and *out (when the
 * conflicts came from the merge) is {"conflicts":[{"kind","type","id","message","entity_kind",
 * "type_name","entity_id","properties"}]} ("properties": for row conflicts, the properties whose
 * values differ, [{"property","base"?,"source"?,"target"?}]); the error message lists each one
 * once.  A merge that settled conflicts by strategy lists them in "resolved" (the same objects
 * plus "resolution": "ours"|"theirs"); the merged image is still validated, so an orphan edge
 * or a constraint violation the chosen side causes is a conflict.  Other errors: OG_ERR_NOT_FOUND, OG_ERR_INVALID, OG_ERR_UNSUPPORTED (a
 * three-way merge across a schema change), OG_ERR_PRECONDITION_FAILED. */
og_status og_db_branch_merge(char **out, og_db *db, const og_db_merge_opts *o);
/* og_db_branch_merge settling row conflicts as `strategy` says (NULL = none settled). */
og_status og_db_branch_merge_ex(char **out, og_db *db, const og_db_merge_opts *o, const og_db_merge_strategy *strategy);
/* What og_db_branch_merge_ex would do, without doing it: the merge is decided (outcome, counts,
 * conflicts, validation) and nothing is published or written.  The same result with
 * "dry_run": true and "commit": null (delete_branch is ignored); conflicts as there. */
og_status og_db_branch_merge_dry_run(char **out, og_db *db, const og_db_merge_opts *o,
                                     const og_db_merge_strategy *strategy);

/* Merge proposals (docs/versioning.md "Merge proposals"): a request to merge a branch into
 * another, kept in the graph's store (an append-only log of events per proposal, each
 * published by put-if-absent), so it survives restarts and is the same for every process
 * serving the graph.  A <proposal> is {"id","state":"open"|"merged"|"closed","source",
 * "target","title","description","created_by","created_at","source_head","updated_by",
 * "updated_at","merge_commit","close_reason","events":[{"event","actor","at",...}]}.  The
 * actor is the calling thread's (og_set_thread_actor) or the handle's.  Who may do what is
 * the surface's policy decision, not the API's. */
/* Opens a proposal to merge `source` into `target` (NULL = "main"); title required.
 * OG_ERR_NOT_FOUND (a branch), OG_ERR_INVALID (same branches, empty title). */
og_status og_db_proposal_create(char **out, og_db *db, const char *source, const char *target, const char *title,
                                const char *description);
/* {"proposals":[<proposal without events>...]} newest first; state NULL = every state. */
og_status og_db_proposal_list(char **out, og_db *db, const char *state);
/* <proposal>.  OG_ERR_NOT_FOUND. */
og_status og_db_proposal_get(char **out, og_db *db, const char *id);
/* What approving would do, without doing it: {"proposal","merge_base","diff":<og_db_changes
 * from the merge base to the source head>,"merge":<og_db_branch_merge dry-run result>|null,
 * "conflicts":[...]} ("conflicts" empty when the merge would succeed). */
og_status og_db_proposal_review(char **out, og_db *db, const char *id);
/* Approves an open proposal: merges its source into its target (og_db_branch_merge_ex with
 * `strategy`, on the target head `expected_head` when given) and records it merged with the
 * merge's commit: {"proposal":<proposal>,"merge":<merge result>}.  On OG_ERR_CONFLICT nothing
 * changes and *out holds the conflicts (as og_db_branch_merge).  OG_ERR_PRECONDITION_FAILED
 * when the proposal is not open. */
og_status og_db_proposal_approve(char **out, og_db *db, const char *id, const og_db_merge_strategy *strategy,
                                 const char *expected_head);
/* Closes an open proposal without merging (reason may be NULL): <proposal>.
 * OG_ERR_PRECONDITION_FAILED when it is not open. */
og_status og_db_proposal_close(char **out, og_db *db, const char *id, const char *reason);

/* ========================================================================================
 * Embeddings (docs/embeddings.md).  The provider is configured by the environment:
 * OMNIGRAPH_EMBED_PROVIDER (openai-compatible | openai | gemini | mock), OMNIGRAPH_EMBED_BASE_URL,
 * OMNIGRAPH_EMBED_MODEL, the provider's key variable, OMNIGRAPH_EMBED_{DEADLINE,TIMEOUT}_MS,
 * OMNIGRAPH_EMBED_RETRY_{ATTEMPTS,BACKOFF_MS}, OMNIGRAPH_EMBEDDINGS_MOCK.  Provider failures are
 * typed: OG_ERR_AUTH (no or a refused key), OG_ERR_THROTTLED (429 after the retries), OG_ERR_IO
 * (5xx, transport, timeouts), OG_ERR_LIMIT (the overall deadline), OG_ERR_CORRUPT (a malformed
 * answer or a NaN / Inf / zero vector), OG_ERR_TYPE (a vector of the wrong dimension, or a
 * model other than the one @embed recorded).  Keys never appear in a message.
 * ======================================================================================== */

typedef enum og_db_embed_mode {
    OG_DB_EMBED_FILL_MISSING = 0, /* embed the selected records that have no vector */
    OG_DB_EMBED_REEMBED_ALL,      /* replace the vectors of the selected records */
    OG_DB_EMBED_CLEAN             /* remove the vectors of the selected records */
} og_db_embed_mode;

typedef struct og_db_embed_opts {
    og_db_embed_mode mode;
    const char *const *types;   /* only these node types (NULL = every type with a target) */
    size_t ntypes;
    const char *const *selects; /* "Type:field=value": when given, a record must match one of them */
    size_t nselects;
    const char *branch;         /* og_db_embed: NULL = "main" */
    const char *expected_head;  /* og_db_embed: the branch head must be this commit */
    int progress;               /* progress lines on stderr */
    int no_cache;               /* do not read or fill the embedding cache */
} og_db_embed_opts;

/* A query-time embedding provider for one graph handle, used by `nearest($v.p, "text")`
 * instead of the environment (omnigraph-server sets a cluster graph's providers.embedding
 * profile this way).  NULL or "" fields take the provider's defaults; the limits (timeouts,
 * retries, batching) stay the environment's. */
typedef struct og_db_embed_provider {
    const char *kind;     /* "openai-compatible" (NULL) | "openai" | "gemini" | "mock" */
    const char *base_url; /* a custom endpoint (then no key is needed, as for a local server) */
    const char *model;
    const char *api_key;  /* secret; copied, never printed */
} og_db_embed_provider;

/* Sets (or, with p NULL, clears back to the environment) the provider of `db`'s text queries;
 * takes effect at the next text query.  OG_ERR_INVALID for an unknown kind. */
og_status og_db_set_embed_provider(og_db *db, const og_db_embed_provider *p);

/* Fills, replaces or removes the vectors of every @embed property of `branch` from its source
 * property and publishes the changed rows as ONE commit (a merge load; none when nothing
 * changed).  Resumable: finished embeddings are kept in the graph's embedding cache, so a rerun
 * after a failure only asks the provider for what is still missing.  *summary_json (may be
 * NULL; free with og_free): {"input","output","branch","records","selected_records",
 * "embedded_records","cleaned_records","mode","dimension","model","provider","commit",
 * "requests","cache_hits"}.  Errors: the provider's (above), OG_ERR_INVALID (no @embed
 * property, a bad --type / --select), OG_ERR_PRECONDITION_FAILED (expected_head), the load's. */
og_status og_db_embed(char **summary_json, og_receipt *out, og_db *db, const og_db_embed_opts *o);

/* The offline file pipeline: reads load-format NDJSON from `input`, writes every record to
 * `output` with vectors filled / replaced / removed as the spec file says
 * ({"dimension":N,"types":{"T":{"target":"vec","fields":["source"]}}}).  The output is
 * written to a temporary file and renamed into place, so a failed run leaves no output.
 * *summary_json as og_db_embed's (input and output are the paths).  Errors: OG_ERR_PARSE
 * (input), OG_ERR_INVALID (spec, filters), the provider's, OG_ERR_IO. */
og_status og_embed_file(char **summary_json, const char *input, const char *output, const char *spec_path,
                        const og_db_embed_opts *o);

/* ========================================================================================
 * Maintenance (docs/maintenance.md)
 * ======================================================================================== */

typedef struct og_optimize_result {
    int published;               /* 0: nothing to compact, nothing was published */
    char commit[32];             /* the `optimize` commit */
    int attempts;                /* > 1 when a concurrent write made it re-plan */
    size_t tables;               /* tables given a new version */
    size_t fragments_before;     /* over those tables */
    size_t fragments_after;
    uint64_t rows_rewritten;     /* live rows copied into new data files */
    uint64_t deleted_rows_dropped; /* deleted rows no longer stored */
    /* then the persisted property indexes of the (new) head (og_db_index_build, docs/indexes.md) */
    uint64_t index_files_built;  /* index files written by this call */
    uint64_t index_files;        /* data files needing one (over every indexed property and kind) */
    uint64_t index_covered;      /* of those, with a whole index file after this call */
    int index_status;            /* OG_OK, or why the index build stopped (the compaction stands) */
    char index_error[200];       /* its message ("" when OG_OK) */
} og_optimize_result;

/* Compacts the head of `branch` (NULL = "main"): small fragments are merged and deletions
 * materialised into new data files, published as one `optimize` commit (same rows, same ids,
 * same answers); a second run with nothing left to do publishes nothing.  Then, like
 * og_db_index_build, writes every persisted property index file the branch head lacks (the
 * compacted data files are new and uncovered until then), and the key maps and edge
 * topologies of the head (docs/indexes.md), so a new process's first query opens them instead
 * of building them; those steps are derived state, so their failure is reported in
 * index_status / index_error and never fails the call.  `expected_head`
 * (may be NULL) as for og_db_mutate.  Errors: OG_ERR_NOT_FOUND (branch), OG_ERR_CONFLICT
 * (re-planned too often against concurrent writers), OG_ERR_PRECONDITION_FAILED, I/O errors.
 * Loads and mutations also run it automatically after their commit when a table of the new
 * head has more than $OG_AUTO_OPTIMIZE_FRAGMENTS (default 16; 0 = never) fragments of under
 * 65,536 rows (docs/maintenance.md). */
og_status og_db_optimize(og_optimize_result *out, og_db *db, const char *branch, const char *expected_head);

/* Cleanup (docs/maintenance.md): reclaims commits, branch log entries, table versions, data,
 * deletion and index files that no retained commit reaches, and orphans of failed writes. */
typedef struct og_cleanup_opts_pub {
    int64_t keep_commits;   /* keep commits fewer than N parent links from a live head; <= 0 = not set */
    int64_t older_than_ms;  /* keep commits created within this many ms; < 0 = not set */
    int64_t grace_ms;       /* never touch objects younger than this; < 0 = the default, 1 hour */
    int confirm;            /* 0 = dry run: report only, delete nothing */
} og_cleanup_opts_pub;

typedef struct og_cleanup_result {
    int dry_run;                 /* 1: counts are what --confirm would remove */
    uint64_t commits_retained;
    uint64_t commits_removed, commits_bytes;
    uint64_t log_entries_removed, log_entries_bytes;
    uint64_t versions_removed, versions_bytes; /* table manifests */
    uint64_t versions_emptied;   /* manifests kept (their numbers are never reused), files reclaimed */
    uint64_t files_removed, files_bytes;       /* data + deletion files of unretained versions */
    uint64_t orphans_removed, orphans_bytes;   /* data + deletion files no version names */
    uint64_t index_removed, index_bytes;       /* derived files under _index/ */
    uint64_t young_kept;         /* objects left alone for the grace period */
    uint64_t tables;
} og_cleanup_result;

/* Dry run by default.  With neither retention knob every commit reachable from a live
 * branch head is kept (only unreachable history and orphans go).  Errors: OG_ERR_INVALID,
 * OG_ERR_CONFLICT (a branch was created meanwhile at a commit being removed: run it again),
 * OG_ERR_CORRUPT, I/O errors; *out counts what was removed also on error. */
og_status og_db_cleanup(og_cleanup_result *out, og_db *db, const og_cleanup_opts_pub *opts);

/* Persisted property indexes (docs/indexes.md): for the head of `branch` (NULL = "main"),
 * every node property with @index (or @key) and every index kind that applies to it ("fts"
 * for String full text; more kinds register in src/index/), report per data file whether its
 * index file exists and is whole; og_db_index_build also writes the missing ones (off the
 * write path: no commit, loads and mutations never wait).  `kind` and `property` ("prop" or
 * "Type.prop") may be NULL (= all).  *out is a JSON report (free with og_free):
 * {"branch","commit","files","covered","built","indexes":[{"type","property","kind","table",
 * "version","files","covered","built","null_files"}]}.  Errors: OG_ERR_INVALID (unknown
 * kind), OG_ERR_NOT_FOUND (branch, or a property filter naming no indexed property), I/O. */
og_status og_db_index_status(char **out, og_db *db, const char *branch, const char *kind, const char *property);
og_status og_db_index_build(char **out, og_db *db, const char *branch, const char *kind, const char *property);

#ifdef __cplusplus
}
#endif
#endif /* OMNIGRAPH_H */
