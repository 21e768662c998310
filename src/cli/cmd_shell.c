/*
 * cmd_shell.c — the `shell` verb: hands its arguments to the interactive shell of src/shell/
 * (docs/shell.md), which lives in its own library so the CLI's verbs stay one-shot commands.
 */
#include "cli/cli.h"
#include "shell/shell.h"

int og_cmd_shell(int argc, char **argv) { return og_shell_main(argc, argv); }
