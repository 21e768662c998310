/*
 * merge.h — `branch merge SOURCE --into TARGET` (reference-storage.md §5, STORAGE.md §7).
 *
 * The source head is captured once; the target is the write's base, captured by
 * og_graph_write (so a lost publish re-runs the whole merge from a fresh target head, never
 * publishing a stale plan).  Per attempt:
 *   - merge base = og_history_merge_base(target head, source head);
 *   - already_up_to_date when the heads are equal or the base is the source head: nothing is
 *     published;
 *   - fast_forward when the base is the target head: one new commit whose content (schema
 *     and table versions) equals the source head's, parents [target head, source head];
 *   - merged otherwise: per type, when both sides changed its table, a row-level three-way
 *     merge by id comparing whole rows (engine/changes.h deltas base->source and
 *     base->target): one side changed → that side wins; both made the same change → fine;
 *     else a conflict: divergent_insert (absent in base, both inserted different rows),
 *     delete_vs_update (one side deleted, the other updated), divergent_update.  The source
 *     side's winning changes are staged on the target through a write plan (engine/plan.h)
 *     and the merged image is validated like any write: orphan edges (an edge whose endpoint
 *     the other side deleted) are reported completely, then the plan's validator checks
 *     @unique, @card and value constraints (its first violation becomes one conflict).
 *     Parents [target head, source head].
 * Any conflict → OG_ERR_CONFLICT with every conflict listed (type, id, kind) and nothing
 * published.  A row conflict (divergent_insert, divergent_update, delete_vs_update) names the
 * properties in which the two sides differ, with each side's value and the base's (the
 * conflict's `properties`).  og_engine_merge_resolve picks a side per row-conflict kind instead
 * (Git's `-X ours|theirs`): ours keeps the target's row, theirs takes the source's (its
 * update, insert or delete); the resolved conflicts are reported in og_merge_result.resolved
 * and the merged image is still validated (orphan edges and constraints stay conflicts).  A three-way merge needs one schema on all three commits (else
 * OG_ERR_UNSUPPORTED); a fast-forward adopts the source's schema.
 */
#ifndef OG_ENGINE_MERGE_H
#define OG_ENGINE_MERGE_H

#include <jansson.h>

#include "engine/engine.h"

typedef enum og_merge_outcome {
    OG_MERGE_ALREADY_UP_TO_DATE = 1,
    OG_MERGE_FAST_FORWARD = 2,
    OG_MERGE_MERGED = 3
} og_merge_outcome;

typedef enum og_conflict_kind {
    OG_CONFLICT_DIVERGENT_INSERT = 1,
    OG_CONFLICT_DIVERGENT_UPDATE,
    OG_CONFLICT_DELETE_VS_UPDATE,
    OG_CONFLICT_ORPHAN_EDGE,
    OG_CONFLICT_UNIQUE_VIOLATION,
    OG_CONFLICT_CARDINALITY_VIOLATION,
    OG_CONFLICT_VALUE_CONSTRAINT_VIOLATION
} og_conflict_kind;

/* "already_up_to_date" / "fast_forward" / "merged"; "divergent_insert", ... */
const char *og_merge_outcome_name(og_merge_outcome o);
const char *og_conflict_kind_name(og_conflict_kind k);

/* How a row conflict is settled: fail (the default), keep the target's row (ours), or take
 * the source's change (theirs). */
typedef enum og_merge_side { OG_MERGE_SIDE_FAIL = 0, OG_MERGE_SIDE_OURS = 1, OG_MERGE_SIDE_THEIRS = 2 } og_merge_side;

/* "fail" / "ours" / "theirs". */
const char *og_merge_side_name(og_merge_side s);

typedef struct og_merge_conflict {
    og_conflict_kind kind;
    int is_edge;   /* the type is an edge type */
    char *type;    /* node or edge type name */
    char *id;      /* entity id, or NULL (a constraint over several rows) */
    char *message; /* names the type and id once, then what differs */
    /* row conflicts: [{"property","base"?,"source"?,"target"?}], one per property whose value
     * differs between the sides (a side that deleted the row, or a base without it, has no
     * key); NULL for the other kinds */
    json_t *properties;
    og_merge_side resolution; /* in og_merge_result.resolved: the side taken */
} og_merge_conflict;

typedef struct og_merge_opts {
    const char *source;        /* required */
    const char *target;        /* NULL = "main" */
    const char *expected_head; /* the target head must be this commit, or NULL */
    /* Test-only (NULL otherwise): called at the end of every attempt whose plan succeeded,
     * after its effects are written and before the write protocol publishes it, with the
     * attempt number (1 = first).  Race tests pause here to let another writer move the
     * target, forcing a lost publish and a re-plan on the new head. */
    void (*attempt_hook)(int attempt, void *arg);
    void *attempt_hook_arg;
} og_merge_opts;

/* Per og_conflict_kind (index = kind): how a row conflict of that kind is settled; only
 * divergent_insert, divergent_update and delete_vs_update are consulted. */
typedef struct og_merge_resolve {
    og_merge_side side[OG_CONFLICT_VALUE_CONSTRAINT_VIOLATION + 1];
    /* 1: decide everything (outcome, counts, conflicts, validation) and publish nothing: the
     * plan is not written and the draft is a no-op, so no file is left behind */
    int dry_run;
} og_merge_resolve;

typedef struct og_merge_result {
    og_merge_outcome outcome;
    char base[OG_ULID_LEN + 1];
    char source_head[OG_ULID_LEN + 1];
    char target_head[OG_ULID_LEN + 1]; /* the target head the merge was made on */
    og_write_result write;             /* published = 0 for already_up_to_date */
    uint64_t inserted, updated, deleted; /* source changes applied to the target (merged) */
    /* cost evidence of the last attempt's diffs (base->source, base->target; merged only):
     * fragments compared and skipped unread, fragments read, rows read */
    size_t fragments_skipped, fragments_read;
    uint64_t rows_read;
    og_merge_conflict *conflicts;      /* when OG_ERR_CONFLICT came from the merge itself */
    size_t nconflicts;
    og_merge_conflict *resolved;       /* row conflicts settled by og_engine_merge_resolve */
    size_t nresolved;
} og_merge_result;

/* Merges; `out` is filled on success and with the conflicts on OG_ERR_CONFLICT; free it with
 * og_merge_result_free in both cases. */
og_status og_engine_merge(og_engine *e, const og_merge_opts *o, og_merge_result *out);
/* The same, settling row conflicts as `resolve` says (NULL = every conflict fails). */
og_status og_engine_merge_resolve(og_engine *e, const og_merge_opts *o, const og_merge_resolve *resolve,
                                  og_merge_result *out);
void og_merge_result_free(og_merge_result *r);

#endif
