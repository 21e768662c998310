/*
 * cmd_shell.c — the `shell` verb: hands its arguments to the interactive shell of src/shell/
 * (docs/shell.md), which lives in its own library so the CLI's verbs stay one-shot commands.
 * The CLI gives it what only the CLI has: a way to open a graph served by omnigraph-server.
 */
#include "cli/cli.h"
#include "cli/remote.h"
#include "shell/shell.h"

/* The opener of served graphs: the backend over the CLI's HTTP client (shell_remote.c). */
int og_cmd_shell(int argc, char **argv) { return og_shell_main(argc, argv, og_cli_shell_remote_open); }
