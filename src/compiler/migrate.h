/*
 * migrate.h — schema evolution planning (reference-language.md §7): accepted catalog (the
 * identity authority) x desired .pg text -> the desired catalog with identities resolved
 * (exact name per kind, else @rename_from) and an ordered list of steps, each supported or
 * refused with a reason (and the reference's OG-MF-* code when it has one).
 *
 * Offline and storage-free: the engine's `schema apply` executes a plan only when
 * plan.supported and nsteps > 0 (a no-op plan is "not applied").
 */
#ifndef OG_COMPILER_MIGRATE_H
#define OG_COMPILER_MIGRATE_H

#include <stddef.h>

#include "compiler/catalog.h"
#include "compiler/lexer.h"
#include "omnigraph.h"
#include "util/buf.h"

typedef enum og_step_kind {
    OG_STEP_ADD_TYPE = 0,
    OG_STEP_RENAME_TYPE,
    OG_STEP_ADD_PROPERTY,
    OG_STEP_RENAME_PROPERTY,
    OG_STEP_ADD_CONSTRAINT,          /* only Index is supported */
    OG_STEP_EXTEND_ENUM,
    OG_STEP_UPDATE_TYPE_METADATA,    /* @description / @instruction on a type */
    OG_STEP_UPDATE_PROPERTY_METADATA,/* @description on a property */
    OG_STEP_DROP_TYPE,               /* soft by default */
    OG_STEP_DROP_PROPERTY,           /* soft by default */
    OG_STEP_UNSUPPORTED
} og_step_kind;

/* "add_type", "rename_type", ..., "unsupported_change" (the reference's snake_case kinds). */
const char *og_step_kind_name(og_step_kind k);

typedef struct og_migration_step {
    og_step_kind kind;
    og_type_kind type_kind;
    char *type_name;     /* the (desired) type name; for DROP_TYPE the accepted name */
    char *property_name; /* property steps: the desired name (accepted name for drops) */
    char *from, *to;     /* RENAME_*: accepted and desired names */
    char *detail;        /* ADD_PROPERTY: type ("I32?"); ADD_CONSTRAINT: "@index(a, b)";
                            EXTEND_ENUM: added values "x, y"; *_METADATA: the new values
                            ("description=...; instruction=..."); else NULL */
    char *entity;        /* UNSUPPORTED: "node:Person.age", "edge:Knows", ... */
    char *reason;        /* UNSUPPORTED: one-line reason */
    const char *code;    /* UNSUPPORTED: "OG-MF-103" / "OG-MF-106" or NULL (static string) */
    int hard;            /* DROP_*: 1 when --allow-data-loss promoted it (never set by the planner) */
} og_migration_step;

typedef struct og_migration_plan {
    int supported;            /* no UNSUPPORTED step */
    og_migration_step *steps; /* in order: interfaces, nodes, edges (desired order), then drops */
    size_t nsteps;
    og_catalog *desired;      /* the desired schema with resolved identities (owned) */
} og_migration_plan;

/* Plans accepted -> desired text.  On OG_OK *out owns the plan (free with
 * og_migration_plan_free); diags may receive warnings (e.g. a @rename_from on an exactly
 * matching name is ignored).  Errors (desired schema invalid, a @rename_from naming nothing,
 * a cross-kind or cross-owner rename, two declarations claiming one identity) are
 * OG_ERR_PARSE / OG_ERR_TYPE with every error in diags; *out is then empty. */
og_status og_migration_plan_build(og_migration_plan *out, const og_catalog *accepted, const char *file,
                                  const char *text, size_t len, og_diags *diags);
void og_migration_plan_free(og_migration_plan *p);

/* One line per step: "AddProperty node Person.age: I32?", "[OG-MF-103] adding required ...". */
og_status og_migration_step_render(og_buf *out, const og_migration_step *s);
/* "supported: yes|no" + steps, or "no changes". */
og_status og_migration_plan_render(og_buf *out, const og_migration_plan *p);
/* {"supported":bool,"steps":[{"kind":"add_property",...}]} (compact). */
og_status og_migration_plan_json(og_buf *out, const og_migration_plan *p);

#endif
