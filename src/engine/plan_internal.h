/*
 * plan_internal.h — what plan.c (staging, flushing, writing) and plan_validate.c (the
 * whole-image checks) share about a plan's staged rows.  Not part of plan.h's contract.
 */
#ifndef OG_ENGINE_PLAN_INTERNAL_H
#define OG_ENGINE_PLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/plan.h"

/* The staged_ids answer for an id no staged row has. */
#define OG_PLAN_NOT_STAGED UINT32_MAX

/* The index into cols[c] of staged row r (r >= mem_base unless column c is retained). */
static inline size_t og_plan_i_col_row(const og_plan_table *pt, size_t c, size_t r)
{
    return pt->retain[c] ? r : r - pt->mem_base;
}

/* The latest staged row of the id whose first staged row is `first` (og_plan_table.latest). */
static inline uint32_t og_plan_i_latest(const og_plan_table *pt, size_t first)
{
    return pt->latest ? pt->latest[first] : (uint32_t)first;
}

static inline int og_plan_i_superseded(const og_plan_table *pt, size_t row)
{
    return pt->superseded && ((pt->superseded[row >> 3] >> (row & 7)) & 1);
}

/* Compact endpoints rows [r0, r0 + n) of side `side` of pt (r0 + n <= nends) into out, from
 * memory or the spill file; a read error is recorded as the plan's failed lookup
 * (og_plan_lookup_status) and answers OG_PLAN_END_UNRESOLVED | 0 ... — never used, since the
 * plan does not publish then.  Returns 0 on such an error. */
int og_plan_i_ends(og_plan *p, const og_plan_table *pt, int side, size_t r0, size_t n, uint32_t *out);
/* Writes end rows [r0, r0 + n) of side `side` to pt's spill file (og_plan_table
 * .end_rows_in_files); a write error is recorded as og_plan_i_ends' is.  0 on error. */
int og_plan_i_end_rows_put(og_plan *p, og_plan_table *pt, int side, size_t r0, size_t n, const uint32_t *rows);
/* Writes the in-memory compact endpoints [ends_lo, nends) of pt to its spill files (opened,
 * best effort, at the first call once pt has compact endpoints and p->spill_dir is set) and
 * empties that window; nothing when pt keeps them in memory. */
og_status og_plan_i_ends_spill(og_plan *p, og_plan_table *pt);
/* Records a failed read (og_plan.lookup_failed: og_plan_validate / og_plan_write return it). */
void og_plan_i_lookup_failed(og_plan *p, og_status st);
/* Moves every compact endpoint still in memory to the spill files (before validation, which
 * then reads them there).  OG_OK also when pt spills nothing. */
og_status og_plan_i_ends_spill_all(og_plan_table *pt);

/* Waits for the flushed batch being written, if any (plan.c); its error becomes the caller's. */
og_status og_plan_i_join(og_plan *p);

/* "seed.jsonl:12: " or "" (og_plan_where with its separator). */
const char *og_plan_i_where(const og_plan *p, uint64_t line, char *buf, size_t cap);
/* A value of v for a message: at most 200 bytes of a string, "null", a number. */
void og_plan_i_render_value(const og_vector *v, size_t i, char *buf, size_t cap);

#endif
