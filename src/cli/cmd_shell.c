/*
 * cmd_shell.c — the `shell` verb: hands its arguments to the interactive shell of src/shell/
 * (docs/shell.md), which lives in its own library so the CLI's verbs stay one-shot commands.
 * The CLI gives it what only the CLI has: a way to open a graph served by omnigraph-server.
 */
#include "cli/cli.h"
#include "shell/shell.h"

/* The opener of served graphs goes here once it is built over the CLI's HTTP client
 * (remote.h): it fills og_shell_backend_ops with requests to the server's read, change,
 * explain, branches, schema and catalog routes.  NULL: `shell --server` is refused. */
int og_cmd_shell(int argc, char **argv) { return og_shell_main(argc, argv, NULL); }
