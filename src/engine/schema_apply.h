/*
 * schema_apply.h — schema evolution on a live graph (reference-language.md §7): plan the
 * migration from the snapshot's accepted schema to a desired .pg text, and apply a fully
 * supported plan as ONE commit (kind schema_apply) through the write protocol.
 *
 * Applying changes metadata and table schemas only — no data is rewritten:
 *   add type          a new empty table (version 1)
 *   add property      a nullable column added to the table's schema (old rows read null)
 *   rename            names change; stable ids, table directories and data stay
 *   drop (soft)       the type's table leaves the commit / the property's column leaves the
 *                     table schema; earlier commits still read them (history is kept)
 *   drop (hard, --allow-data-loss)   the same now; the history is reclaimed later by cleanup
 *   extend enum, add index, metadata  the schema object only
 * Unsupported plans are refused before anything is written; so is a graph with branches
 * other than main (the reference's rule: apply needs one line of history).
 */
#ifndef OG_ENGINE_SCHEMA_APPLY_H
#define OG_ENGINE_SCHEMA_APPLY_H

#include "compiler/migrate.h"
#include "engine/engine.h"

/* Plans against the head of `branch` (NULL = main).  *out: free with og_migration_plan_free.
 * Compile errors of the desired text are OG_ERR_PARSE / OG_ERR_TYPE. */
og_status og_engine_schema_plan(og_engine *e, const char *branch, const char *file, const char *text, size_t len,
                                og_migration_plan *out);

/* Plans and applies.  A no-op plan publishes nothing (out->published = 0).  Errors:
 * OG_ERR_UNSUPPORTED (a refused step, listed with its code; or other branches exist),
 * compile errors, write-protocol errors.  `plan_out` (may be NULL) receives the plan that was
 * applied (free with og_migration_plan_free). */
og_status og_engine_schema_apply(og_engine *e, const char *branch, const char *file, const char *text, size_t len,
                                 int allow_data_loss, og_write_result *out, og_migration_plan *plan_out);
/* The same with `expected_head` (may be NULL): the branch head must be that commit
 * (OG_ERR_PRECONDITION_FAILED otherwise, nothing written; `--if-commit`). */
og_status og_engine_schema_apply_expect(og_engine *e, const char *branch, const char *expected_head, const char *file,
                                        const char *text, size_t len, int allow_data_loss, og_write_result *out,
                                        og_migration_plan *plan_out);

#endif
