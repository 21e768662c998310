/*
 * shell.h — `omnigraph shell`: an interactive session on one graph (docs/shell.md).
 *
 * The layer (og_shell) sits beside the CLI and uses the graph only through the public API
 * (include/omnigraph.h, via backend.h); libedit gives it line editing, history and
 * completion.  The CLI's dispatch table calls og_shell_main for the verb `shell`.
 */
#ifndef OG_SHELL_SHELL_H
#define OG_SHELL_SHELL_H

#include <stddef.h>

/* `omnigraph shell [--store ROOT | --server URL --graph ID] [--branch B] [--as ACTOR]
 * [--format F]`; argv[0] is "shell".  Returns the process exit status: 0, 1 when a statement
 * or command failed (non-interactive input), 2 for a usage error. */
int og_shell_main(int argc, char **argv);

/* The i-th dot command's name (".help", ".schema", ...), NULL past the last (dot.c). */
const char *og_shell_dot_name(size_t i);

#endif
