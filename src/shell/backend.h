/*
 * backend.h — what `omnigraph shell` asks of the graph it is connected to.
 *
 * Why a seam: the shell talks to a graph opened in this process (`--store ROOT`, the local
 * backend over include/omnigraph.h, backend_local.c) or to a graph served by omnigraph-server
 * (`--server URL --graph ID`).  Everything the shell does — run a statement, explain it, list
 * branches, read the catalog and the schema, resolve a commit, cancel — goes through these few
 * calls, so a remote backend is one table of functions; the dot commands, completion and
 * printing stay as they are.  The HTTP client lives in the CLI (src/cli/remote.h), above this
 * layer, so the CLI hands the shell an opener for served graphs (og_shell_remote_fn, shell.h)
 * built over it (src/cli/shell_remote.c); without one, `--server` is refused.
 *
 * Every call returns an og_status and leaves its message in og_error_message() (the remote
 * backend sets it from the server's error body).  Strings returned are malloc'd and freed
 * with og_shell_backend.ops->free.
 */
#ifndef OG_SHELL_BACKEND_H
#define OG_SHELL_BACKEND_H

#include <stddef.h>

#include "omnigraph.h"

/* Which state a statement sees (reads) or writes (branch only: a write goes to a head). */
typedef struct og_shell_target {
    const char *branch; /* never NULL */
    const char *commit; /* NULL = the branch head; else a full commit id (time travel) */
} og_shell_target;

typedef struct og_shell_result {
    int write;         /* 1: the statement was a mutation; `receipt` holds what it did */
    char *text;        /* a read: its rows rendered in the format asked (free with ops->free) */
    size_t rows;       /* a read: how many rows */
    char commit[32];   /* a read: the commit it read */
    og_receipt receipt;
} og_shell_result;

typedef struct og_shell_backend_ops {
    const char *kind; /* "local" | "remote" */
    /* Runs one `.gq` statement: a read query (rows in `fmt`), or a mutation as one commit on
     * t->branch (refused with OG_ERR_INVALID while t->commit is set). */
    og_status (*run)(void *self, const char *src, size_t len, const char *params, const og_shell_target *t,
                     og_format fmt, og_shell_result *out);
    /* The plan of a read query as text (docs/query-language.md "Explain"). */
    og_status (*explain)(void *self, const char *src, size_t len, const char *params, const og_shell_target *t,
                         char **out);
    /* {"branches":[{"name","head",...}]} */
    og_status (*branches)(void *self, char **out);
    /* og_db_catalog's document and og_db_schema_source's text at the target */
    og_status (*catalog)(void *self, const og_shell_target *t, char **out);
    og_status (*schema_source)(void *self, const og_shell_target *t, char **out);
    /* a commit reference (id, prefix, branch, REF~N) to a full id */
    og_status (*resolve)(void *self, const char *ref, char out[32]);
    /* while *flag is nonzero the running call stops (Ctrl-C) */
    void (*set_cancel)(void *self, const volatile int *flag);
    void (*free)(void *p);
    void (*close)(void *self);
} og_shell_backend_ops;

typedef struct og_shell_backend {
    const og_shell_backend_ops *ops;
    void *self;
} og_shell_backend;

/* A graph opened in this process (a directory or s3://bucket/prefix); `actor` (NULL = the
 * default) is recorded on the commits its mutations publish.  Errors as og_db_open. */
og_status og_shell_backend_local(og_shell_backend *out, const char *root, const char *actor);
/* Opens the graph `graph` served at `server` (a URL, or a server named in the operator
 * config) as *out; errors with og_err's message, as the other calls. */
typedef og_status (*og_shell_remote_fn)(og_shell_backend *out, const char *server, const char *graph);

#endif
