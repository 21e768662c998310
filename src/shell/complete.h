/*
 * complete.h — tab completion of `omnigraph shell`: which words fit where the cursor is.
 *
 * Why apart from the terminal code: completion is a pure function of the text typed, the
 * graph's catalog (og_db_catalog) and its branch names, so it is tested without a terminal
 * (tests/shell/test_shell_complete.c); shell.c only hands its result to libedit.
 *
 * What completes:
 *   - at the start of a line, `.` + letters: the dot commands;
 *   - after `.branch ` / `.at `: branch names; after `.schema `: type names; after
 *     `.format `: table json csv; after `.timer `: on off;
 *   - `$x.` + letters: the properties of the type `$x` is bound to in the statement so far
 *     (`$x: Person`, `$w:worksOn`), or of every type when it is bound to none;
 *   - `$` + letters: the variables and parameters of the statement so far and the names set
 *     with `.params`;
 *   - a word starting upper case: node, interface and edge type names;
 *   - any other word: the query language's keywords and functions, and edge names in their
 *     query spelling (`worksOn` for edge WorksOn).
 */
#ifndef OG_SHELL_COMPLETE_H
#define OG_SHELL_COMPLETE_H

#include <stddef.h>

#include "omnigraph.h"

typedef struct og_shell_words {
    char **v;
    size_t n, cap;
} og_shell_words;

void og_shell_words_add(og_shell_words *w, const char *s, size_t len);
void og_shell_words_free(og_shell_words *w);

typedef struct og_shell_type {
    char *name;
    int kind;            /* 0 node, 1 edge, 2 interface */
    char *from, *to;     /* edges */
    char **props, **prop_types;
    size_t nprops;
} og_shell_type;

/* The names completion draws on: the catalog of the state read, branch names, .params keys. */
typedef struct og_shell_names {
    og_shell_type *types;
    size_t ntypes;
    og_shell_words branches;
    og_shell_words params;
} og_shell_names;

/* Replaces n's types with those of an og_db_catalog document.  OG_ERR_CORRUPT when it is not one. */
og_status og_shell_names_set_catalog(og_shell_names *n, const char *catalog_json);
/* Replaces n's branches with the names of an og_db_branch_list document. */
og_status og_shell_names_set_branches(og_shell_names *n, const char *branches_json);
/* Replaces n's parameter names with the keys of a JSON object ("" or NULL: none). */
void og_shell_names_set_params(og_shell_names *n, const char *params_json);
void og_shell_names_free(og_shell_names *n);
/* The type called `name` (edges also in their query spelling, any case), or NULL. */
const og_shell_type *og_shell_names_type(const og_shell_names *n, const char *name, size_t len);

/* Fills out with the completions of the word line[start..end) (the cursor is at end).
 * `stmt` is the statement typed on earlier lines (NULL or "" on its first line): variables
 * bound there count.  Candidates are whole words that start with the typed word, sorted,
 * without duplicates. */
void og_shell_complete(og_shell_words *out, const og_shell_names *n, const char *stmt, const char *line, size_t start,
                       size_t end);

#endif
