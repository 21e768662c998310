/*
 * changes.h — row-level changes between two versions of a graph (reference-storage.md §6,
 * STORAGE.md §7): per node/edge type, the rows inserted, updated (before and after image) and
 * deleted, keyed by `id`, comparing whole rows (every column, typed; nulls equal nulls).
 *
 * Cost follows the change, not the table: two versions of one table are compared fragment by
 * fragment first.  A fragment present in both with the same data files and the same deletion
 * file is skipped without reading a row; a fragment only in one side contributes its live rows;
 * a fragment whose deletion file changed contributes only the rows whose liveness differs.
 * Those candidate rows are then paired by id: an id on both sides is an update when the rows
 * differ (and nothing when a compaction only moved it), an id on one side is a delete or an
 * insert.  A type is compared only when its table version differs between the two commits.
 *
 * Both commits must have the same schema (a diff is never guessed across a schema change:
 * OG_ERR_UNSUPPORTED "change_schema_boundary").  The merge (engine/merge.h) uses the per-table
 * primitive og_table_delta_compute on (base, side) pairs.
 *
 * Errors: OG_ERR_NOT_FOUND (commit, type), OG_ERR_INVALID (a commit without parent for
 * og_changes_commit: "commit_has_no_parent"; a bad filter), OG_ERR_UNSUPPORTED, store and
 * table errors.
 */
#ifndef OG_ENGINE_CHANGES_H
#define OG_ENGINE_CHANGES_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

typedef enum og_change_op { OG_CHANGE_INSERT = 1, OG_CHANGE_UPDATE = 2, OG_CHANGE_DELETE = 3 } og_change_op;

/* "insert" / "update" / "delete". */
const char *og_change_op_name(og_change_op op);

#define OG_CHANGE_NO_ROW UINT32_MAX

/* Candidate rows read from one side: columns in layout order (id, [src, dst], then the type's
 * properties in catalog order), each with the catalog's type. */
typedef struct og_row_set {
    og_vector *cols;
    size_t ncols;
    size_t nrows;
    uint64_t *addrs;   /* nrows Lance row addresses (fragment << 32 | offset) in the row's version */
    size_t addrs_cap;
} og_row_set;

typedef struct og_change {
    og_change_op op;
    uint32_t before;   /* row of og_table_delta.before, or OG_CHANGE_NO_ROW (insert) */
    uint32_t after;    /* row of og_table_delta.after, or OG_CHANGE_NO_ROW (delete) */
    const uint8_t *id; /* the row's id bytes (borrowed from the row sets) */
    size_t idlen;
} og_change;

/* The changes of one type between two table versions, sorted by id (bytewise). */
typedef struct og_table_delta {
    const og_cat_type *t;
    int is_edge;
    size_t index;               /* into cat->nodes / cat->edges */
    og_row_set before, after;
    og_change *changes;
    size_t nchanges;
    /* cost evidence: fragments compared, skipped unread, and rows read */
    size_t fragments_skipped, fragments_read;
    uint64_t rows_read;
} og_table_delta;

void og_table_delta_free(og_table_delta *d);

/* The changes of catalog type t (table `dir`) from table version `from` to version `to` (each
 * NULL when the type has no table on that side: every row of the other side is then an insert
 * or a delete).  `out` is initialised here; free it with og_table_delta_free. */
og_status og_table_delta_compute(og_graph *g, const og_cat_type *t, int is_edge, size_t index, const char *dir,
                                 const og_table_ref *from, const og_table_ref *to, og_table_delta *out);

/* The change of id[0..len) in d, or NULL (binary search). */
const og_change *og_table_delta_find(const og_table_delta *d, const void *id, size_t len);

typedef struct og_change_filter {
    const char *const *types; /* type names (nodes exact, edges case-insensitively); NULL = all */
    size_t ntypes;
    unsigned ops;             /* bit (1 << op); 0 = all */
} og_change_filter;

/* A change set: the deltas of every type that changed (nodes before edges, catalog order),
 * with the read of the `to` commit that owns the catalog. */
typedef struct og_changeset {
    char from[OG_ULID_LEN + 1], to[OG_ULID_LEN + 1];
    og_read *read;              /* the `to` commit (catalog) */
    og_table_delta *tables;
    size_t ntables;
    uint64_t inserted, updated, deleted;
    size_t fragments_skipped, fragments_read;
    uint64_t rows_read;
} og_changeset;

/* Changes from commit `from` to commit `to` (any two retained commits of one schema). */
og_status og_changes_between(og_engine *e, const char *from, const char *to, const og_change_filter *f,
                             og_changeset *out);
/* Changes of commit `id` against its first parent.  The genesis commit (no parent) is
 * OG_ERR_INVALID "commit_has_no_parent". */
og_status og_changes_commit(og_engine *e, const char *id, const og_change_filter *f, og_changeset *out);
void og_changeset_free(og_changeset *c);

#endif
