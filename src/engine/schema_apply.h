/*
 * schema_apply.h — schema evolution on a live graph (reference-language.md §7): plan the
 * migration from the snapshot's accepted schema to a desired .pg text, and apply a fully
 * supported plan as ONE commit (kind schema_apply) through the write protocol.
 *
 * Applying changes metadata and table schemas; only a hard drop rewrites data:
 *   add type          a new empty table (version 1)
 *   add property      a nullable column added to the table's schema (old rows read null)
 *   rename            names change; stable ids, table directories and data stay
 *   drop (soft)       the type's table leaves the commit / the property's column leaves the
 *                     table schema; earlier commits still read them (history is kept)
 *   drop (hard, --allow-data-loss)   the same, and inside the apply every fragment holding a
 *                     dropped column is rewritten without it (og_table_txn_compact, one
 *                     fragment at a time) in the table's new version; after the publish the
 *                     history is reclaimed: og_table_gc keeps only versions >= the one the new
 *                     commit names, a dropped type's table directory is deleted (its id is
 *                     never reused).  Earlier commits then fail to read those tables with
 *                     OG_ERR_NOT_FOUND saying the data was reclaimed by a hard drop.
 *   extend enum, add index, metadata  the schema object only
 * Unsupported plans are refused before anything is written; so is a graph with branches
 * other than main (the reference's rule: apply needs one line of history).  The rule is
 * checked again after the publish: if a branch appeared meanwhile, nothing is reclaimed (its
 * head may name the old versions) and og_schema_reclaim says so.
 */
#ifndef OG_ENGINE_SCHEMA_APPLY_H
#define OG_ENGINE_SCHEMA_APPLY_H

#include "compiler/migrate.h"
#include "engine/engine.h"

/* Plans against the head of `branch` (NULL = main).  *out: free with og_migration_plan_free.
 * Compile errors of the desired text are OG_ERR_PARSE / OG_ERR_TYPE. */
og_status og_engine_schema_plan(og_engine *e, const char *branch, const char *file, const char *text, size_t len,
                                og_migration_plan *out);

/* What a hard drop reclaimed after its publish.  A failure here does not fail the apply (it
 * is published; retrying it would be a no-op): `status` and `error` report it, and the data
 * not reclaimed stays (reads of the old commits keep working or fail as above). */
typedef struct og_schema_reclaim {
    uint64_t tables;   /* tables garbage-collected or removed, completely */
    uint64_t versions; /* table versions (manifests) deleted */
    uint64_t files;    /* data and deletion files deleted */
    uint64_t bytes;    /* bytes deleted, manifests included */
    og_status status;  /* OG_OK, or the first failure */
    char error[512];   /* its message ("" when status is OG_OK) */
} og_schema_reclaim;

/* Plans and applies.  A no-op plan publishes nothing (out->published = 0).  Errors:
 * OG_ERR_UNSUPPORTED (a refused step, listed with its code; or other branches exist),
 * compile errors, write-protocol errors.  `plan_out` (may be NULL) receives the plan that was
 * applied (free with og_migration_plan_free). */
og_status og_engine_schema_apply(og_engine *e, const char *branch, const char *file, const char *text, size_t len,
                                 int allow_data_loss, og_write_result *out, og_migration_plan *plan_out);
/* The same with `expected_head` (may be NULL): the branch head must be that commit
 * (OG_ERR_PRECONDITION_FAILED otherwise, nothing written; `--if-commit`), and `reclaim_out`
 * (may be NULL; zeroed first) receiving what a hard drop reclaimed. */
og_status og_engine_schema_apply_expect(og_engine *e, const char *branch, const char *expected_head, const char *file,
                                        const char *text, size_t len, int allow_data_loss, og_write_result *out,
                                        og_migration_plan *plan_out, og_schema_reclaim *reclaim_out);

#endif
