/*
 * remote.h — the CLI against a served graph, and the operator config that names servers
 * (docs/cli.md "Remote mode and operator config").
 *
 * Three parts, each in its own file:
 *   remote_config.c  ~/.omnigraph/config.yaml ($OMNIGRAPH_HOME), the credentials file, and the
 *                    scope resolution main() runs before a graph verb: --server/--graph,
 *                    --profile, defaults, the refusals of misused scopes, and --yes;
 *   remote_http.c    one HTTP request to omnigraph-server over libcurl (loaded on first use,
 *                    util/curl_dl.h, so local verbs never map it);
 *   remote_verbs.c   the served form of each graph verb: the same flags, the same output and
 *                    exit status as the embedded verb, over the server's HTTP API only.
 */
#ifndef OG_CLI_REMOTE_H
#define OG_CLI_REMOTE_H

#include <stddef.h>

#include "omnigraph.h"
#include "shell/backend.h"
#include "util/buf.h"

/* A resolved served target.  The token is never printed. */
typedef struct og_remote {
    const char *name;  /* the server's name in config.yaml, or NULL when given as a URL */
    char url[1024];    /* base URL, no trailing slash */
    const char *graph; /* graph id (--graph, the profile's or defaults' default_graph), or NULL */
    const char *token; /* bearer token, or NULL */
    int quiet;         /* --quiet */
    int yes;           /* --yes */
    const char *header; /* one extra request header ("Name: value"), or NULL */
} og_remote;

/* ---- remote_config.c ---- */

/* Run by main() after the --format gate: resolves the scope of a graph verb.  Returns 1 when
 * it handled the command (served, or refused: *rc is the exit status), else 0 with argv
 * possibly rewritten (the profile's --store added, --profile / --yes removed) for the local
 * verb to run. */
int og_cli_scope_dispatch(int *argc, char ***argv, int *rc);

/* The verbs of the operator config: login, logout, profile, alias, graphs. */
int og_cmd_login(int argc, char **argv);
int og_cmd_logout(int argc, char **argv);
int og_cmd_profile(int argc, char **argv);
int og_cmd_alias(int argc, char **argv);
int og_cmd_graphs(int argc, char **argv);

/* Resolves --server NAME|URL to *r (URL and token); prints the error and returns an exit
 * status (2) when the name is unknown, else 0. */
int og_cli_remote_resolve(og_remote *r, const char *verb, const char *server);

/* ---- remote_http.c ---- */

typedef struct og_http_resp {
    long status;        /* the HTTP status; 0 when no answer came (transport error) */
    og_buf body;        /* the body, NUL-terminated */
    og_buf headers;     /* the response's header lines, NUL-terminated */
    char error[256];    /* the transport error when status is 0 */
} og_http_resp;

/* One request: METHOD base-url/PATH with the bearer token (when any), `body` of `ctype` (NULL
 * for none), `upload` a file streamed as the body instead (NULL for none); the answer into
 * *resp (free its body with og_buf_free).  `sink` non-NULL: a 200's body is written there as it
 * arrives instead of kept (export).  Returns 0 when an answer came, -1 on a transport error
 * (resp->error says why; libcurl missing included). */
int og_http_request(const og_remote *r, const char *method, const char *path, const char *ctype, const char *body,
                    const char *upload, void *sink, og_http_resp *resp);

/* Frees the body and headers of an answer. */
void og_http_resp_free(og_http_resp *resp);

/* The value of response header `name` (case-insensitive) copied into out; 1 when present. */
int og_http_header(const og_http_resp *resp, const char *name, char *out, size_t cap);

/* A query-string component, percent-encoded, appended to b. */
void og_http_escape(og_buf *b, const char *s);

/* ---- remote_verbs.c ---- */

/* Runs `verb` (argv[0]; query, mutate, load, branch, snapshot, export, commit, changes,
 * schema, blob) against r.  Returns the exit status. */
int og_cli_remote_run(og_remote *r, int argc, char **argv);

/* Prints an error answer as the embedded verb prints the same failure:
 * "omnigraph VERB: CLASS: message" (CLASS the og_status name the HTTP status and message stand
 * for); returns the exit status (4 for a lost --if-commit, else 1). */
int og_cli_remote_fail(const char *verb, const og_http_resp *resp);

/* An error answer (status != 200) as an og_status with og_err's message set from its body,
 * classed as og_cli_remote_fail classes it; returns the status. */
og_status og_cli_remote_error(const og_http_resp *resp);

/* A ReadOutput document rendered in format f as og_rows_render renders the same rows (its
 * target object turned back into the plain string; j is changed). */
struct json_t;
og_status og_cli_remote_render_read(struct json_t *j, og_format f, og_buf *out);

/* ---- shell_remote.c ---- */

/* The backend of `omnigraph shell --server URL --graph ID` (src/shell/backend.h) over this
 * client: the opener og_shell_main calls for --server. */
og_status og_cli_shell_remote_open(og_shell_backend *out, const char *server, const char *graph);

/* The same failure as the text `omnigraph test` matches `expect error:` against: "CLASS: message"
 * (malloc'd; free it). */
char *og_cli_remote_error_text(const og_http_resp *resp);

#endif
