/*
 * session.h — the state of one `omnigraph shell` session, shared by the read-eval loop
 * (shell.c) and the dot commands (dot.c).  Internal to src/shell/.
 */
#ifndef OG_SHELL_SESSION_H
#define OG_SHELL_SESSION_H

#include <stddef.h>

#include "shell/backend.h"
#include "shell/complete.h"
#include "util/buf.h"

typedef struct og_shell {
    og_shell_backend be;
    const char *graph;   /* what was opened, for the banner and messages */
    char branch[256];
    char commit[32];     /* "" = the branch head; else the commit read (.at) */
    char *params;        /* .params: a JSON object text, or NULL */
    og_format fmt;       /* .format: OG_FORMAT_TABLE, OG_FORMAT_JSON or OG_FORMAT_CSV */
    int timer;           /* .timer on */
    int explain_next;    /* .explain: the next statement is explained, not run */
    long maxrows;        /* .maxrows: rows printed before the rest is cut with a note; 0 = all */
    int interactive;     /* stdin is a terminal: prompts, history, Ctrl-C */
    int errors;          /* statements and commands that failed */
    int quit;            /* .quit */
    int read_depth;      /* .read nesting */
    const char *source;  /* the input being read ("<stdin>", a .read file) for messages */
    unsigned line_no;    /* lines read of it so far */
    og_buf stmt;         /* the statement being typed (complete lines) */
    unsigned stmt_line;  /* the input line it starts on */
    og_shell_names names;/* completion: catalog, branches, parameter names */
} og_shell;

/* Feeds one input line (without its line break): a dot command when no statement is open,
 * else part of a statement; runs every statement it completes. */
void og_shell_feed(og_shell *s, const char *line);
/* Runs a dot command line (".branch dev").  0 on success, 1 on failure (already printed). */
int og_shell_dot(og_shell *s, const char *line);
/* Reads a file of statements and dot commands as if typed. */
int og_shell_read_file(og_shell *s, const char *path);
/* Reloads what completion knows of the current state (catalog, branches). */
void og_shell_refresh_names(og_shell *s);
/* Prints the last API failure as "error: <status>: <message>" (a script's failures start
 * with "<source>:<line>: "), and counts it. */
void og_shell_print_failure(og_shell *s, og_status st);
/* Prints and counts a failure of the shell's own ("error: <message>"). */
void og_shell_error(og_shell *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The target of the next statement. */
og_shell_target og_shell_target_now(const og_shell *s);

#endif
