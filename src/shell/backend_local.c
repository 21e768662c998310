/*
 * backend_local.c — the shell's backend for a graph opened in this process (backend.h), over
 * the public C API only (include/omnigraph.h).
 *
 * A statement is tried as a read first; the compiler tells a mutation apart ("is a mutation;
 * run it with mutate"), and then it runs as one commit on the target branch.  Compiling twice
 * costs microseconds against a write's publish, and keeps the shell free of a second parser.
 */
#include <stdlib.h>
#include <string.h>

#include "shell/backend.h"
#include "util/error.h"

typedef struct local {
    og_db *db;
} local;

static int is_mutation_error(og_status st)
{
    return st == OG_ERR_INVALID && strstr(og_error_message(), "is a mutation; ");
}

static og_status local_run(void *self, const char *src, size_t len, const char *params, const og_shell_target *t,
                           og_format fmt, og_shell_result *out)
{
    local *l = self;
    memset(out, 0, sizeof *out);
    og_read_opts at = {t->branch, t->commit};
    og_rows *rows = NULL;
    og_status st = og_db_query(&rows, l->db, src, len, NULL, params, &at);
    if (st == OG_OK) {
        out->rows = og_rows_count(rows);
        snprintf(out->commit, sizeof out->commit, "%s", og_rows_commit(rows));
        st = og_rows_render(&out->text, NULL, rows, fmt, t->commit ? t->commit : t->branch);
        og_rows_free(rows);
        return st;
    }
    if (!is_mutation_error(st)) return st;
    out->write = 1;
    if (t->commit)
        return og_err(OG_ERR_INVALID, "a mutation writes a branch head, and the shell is reading commit %s: "
                                      "`.at` alone returns to the head of %s", t->commit, t->branch);
    og_db_mutate_opts mo = {t->branch, NULL, NULL};
    return og_db_mutate_ex(&out->receipt, l->db, src, len, NULL, params, &mo);
}

static og_status local_explain(void *self, const char *src, size_t len, const char *params, const og_shell_target *t,
                               char **out)
{
    local *l = self;
    og_read_opts at = {t->branch, t->commit};
    return og_db_query_explain(out, l->db, src, len, NULL, params, &at, 0);
}

static og_status local_branches(void *self, char **out) { return og_db_branch_list(out, ((local *)self)->db); }

static og_status local_catalog(void *self, const og_shell_target *t, char **out)
{
    og_read_opts at = {t->branch, t->commit};
    return og_db_catalog(out, ((local *)self)->db, &at);
}

static og_status local_schema(void *self, const og_shell_target *t, char **out)
{
    og_read_opts at = {t->branch, t->commit};
    return og_db_schema_source(out, ((local *)self)->db, &at);
}

static og_status local_resolve(void *self, const char *ref, char out[32])
{
    return og_db_resolve_commit(((local *)self)->db, ref, out, 32);
}

static void local_set_cancel(void *self, const volatile int *flag) { og_db_set_cancel(((local *)self)->db, flag); }

static void local_close(void *self)
{
    local *l = self;
    og_db_close(l->db);
    free(l);
}

static const og_shell_backend_ops local_ops = {
    "local", local_run, local_explain, local_branches, local_catalog, local_schema, local_resolve, local_set_cancel,
    og_free, local_close,
};

og_status og_shell_backend_local(og_shell_backend *out, const char *root, const char *actor)
{
    local *l = calloc(1, sizeof *l);
    if (!l) return og_err(OG_ERR_NOMEM, "out of memory");
    og_open_opts o = {.actor = actor};
    og_status st = og_db_open(&l->db, root, &o);
    if (st) {
        free(l);
        return st;
    }
    out->ops = &local_ops;
    out->self = l;
    return OG_OK;
}
