/*
 * plan.h — a write's staged effects over one base snapshot, their validation, and writing
 * them as new table versions (the "plan and validate" and "write effects" steps of
 * STORAGE.md §5, shared by load and mutate).
 *
 * Per node/edge type a plan holds: the committed rows it removes (a bitmap over the base
 * table view's rows, or "overwrite": all of them) and the staged new rows (columns in layout
 * order, engine/layout.h).  The NEW IMAGE of a type is its committed rows minus the removed
 * ones plus the staged rows that are not superseded.  Validation (INVARIANTS.md 9) runs on new
 * images before anything is written: types, non-null, enum, @range, @check, id uniqueness,
 * @unique, edge referential integrity and @card.  Every failure is OG_ERR_CONSTRAINT with a
 * message naming the type, property, value and (for loads) the input line.
 *
 * Memory (docs/load.md): a plan can stream.  With flush thresholds set (og_plan.flush_rows /
 * flush_bytes, load only) the staged property columns that validation does not need are
 * written to data files batch by batch; what stays in memory per staged row is its id, edge
 * src/dst, @unique member values, input line and a few bits — so a load's memory is bounded
 * by O(ids + constraint-key values) plus one batch per type, not by the file.
 */
#ifndef OG_ENGINE_PLAN_H
#define OG_ENGINE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/jsonval.h"
#include "graph/graph.h"
#include "util/id.h"
#include "util/strmap.h"

/* One flushed batch of a type's staged rows: staged rows [first, end) minus those superseded
 * when it was flushed ("skipped") went, in row order, into fragment `fragment_id` of the
 * type's txn. */
typedef struct og_plan_batch {
    size_t first, end;
    uint64_t fragment_id;
} og_plan_batch;

typedef struct og_plan_table {
    const og_cat_type *t;
    int is_edge;
    size_t index;            /* into cat->nodes or cat->edges */
    og_tableview *view;      /* the base version (borrowed from the read) */
    uint8_t *removed;        /* bitmap over view rows; NULL = none */
    size_t nremoved;
    int overwrite;           /* every committed row is removed */
    og_vector *cols;         /* staged rows, layout order: id, [src, dst], props (see below) */
    size_t ncols;
    size_t nstaged;
    uint8_t *superseded;     /* bitmap over staged rows replaced by a later one (merge) */
    uint32_t *lines;         /* per staged row: its input line (0 = none) minus line_base —
                              * og_plan_line; 4 bytes a row (5M edges: 20 MB less than 8).
                              * NULL while every staged row r is on line line_base + r (a
                              * type's records on consecutive lines, as in a bulk file): the
                              * array is made at the first row that is not (docs/load.md
                              * "The memory bound"; 50M edges: 200 MB less) */
    uint64_t line_base;      /* the first staged row's line */
    uint64_t *wide_lines;    /* once a line does not fit that way (a CSV load's next file,
                              * lines out of order): every row's whole line, lines unused */
    uint32_t *latest;        /* per FIRST staged row of an id, the id's current row (a merge's
                              * repeat supersedes the earlier one); NULL while every row is
                              * its own (no repeat yet: a bulk load never makes it) */
    size_t lines_cap;        /* rows the per-row arrays (lines, latest, bitmaps) have room for */
    og_strmap staged_ids;    /* id -> staged row (the latest); see ids_indexed */
    size_t ids_indexed;      /* rows [ids_indexed, nstaged) got GENERATED ids (fresh ULIDs,
                              * unique by construction) and are not in staged_ids yet: they
                              * are indexed only when a lookup or a given id needs the map */
    char (*labels)[160];     /* "Type.prop" per property, for messages (made once) */
    int touched;
    int last_generated;      /* the latest staged row's id was generated (a fresh ULID): no
                              * committed row can hold it, so callers skip the committed
                              * lookup (on an edge table without keymaps that lookup would
                              * build the id maps of every data file) */
    /* Streaming (og_plan_flush; load only).  A RETAINED column (retain[c]: id, src, dst and
     * every @unique member) holds all nstaged rows; a flushable column holds rows
     * [mem_base, nstaged) only — cols[c] row (r - mem_base) is staged row r — the earlier ones
     * are in data files staged in txn.  Without a flush mem_base is 0 and every column holds
     * every staged row. */
    uint8_t *retain;         /* ncols flags */
    size_t mem_base;
    uint8_t *skipped;        /* bitmap over staged rows: superseded when flushed, not written */
    og_plan_batch *batches;
    size_t nbatches, batches_cap;
    struct og_table_txn *txn; /* opened on the base version at the first flush (or at write) */
    int txn_overwritten;     /* og_table_txn_overwrite was staged */
    size_t nsuperseded;      /* staged rows marked superseded (og_plan_supersede) */
    /* og_plan.capture_topology: for an edge table whose new image is exactly its staged rows
     * between two node tables whose new images are exactly theirs, the RI check keeps the
     * staged node row of every edge's src / dst here — the new versions' row numbers, so the
     * edge type's topology can be written right after the publish without one lookup more
     * (load.c).  NULL when not captured. */
    uint32_t *end_rows[2];
    /* Compact endpoints (og_plan_flush, load only, an edge type without constraints or @card): once a
     * batch is flushed its src / dst strings are not kept; for each of staged rows [0, nends)
     * ends[side][r] is the endpoint's answer from the node type's staged_ids when the batch was
     * flushed (its FIRST staged row), or OG_PLAN_END_UNRESOLVED | k: the k-th id of unres[side]
     * (not staged then).  src / dst are then flushable columns holding rows [mem_base, nstaged).
     * At 25M edges the two id strings and their offsets were ~900 MB of a load's peak. */
    uint32_t *ends[2];
    size_t nends, ends_cap;
    og_vector unres[2];
    int ends_compact;
    /* Spilled compact endpoints (og_plan.spill_dir): rows [0, ends_lo) of ends[side] are in the
     * unlinked temp file ends_fd[side] (4 bytes a row at offset 4 * row), ends[side] holds rows
     * [ends_lo, nends) only — the batches not spilled yet.  Valid while ends_spilled.  Read
     * through og_plan_i_ends (plan_internal.h).  At 50M edges they were 400 MB of a load's
     * peak (docs/load.md "The memory bound"). */
    int ends_spilled;
    int ends_fd[2];
    size_t ends_lo;
    /* With ends_spilled, og_plan.capture_topology keeps the endpoint rows in those files
     * instead of end_rows (all nstaged rows written there by the RI check): load.c takes the
     * descriptors (then ends_spilled is 0 again). */
    int end_rows_in_files;
} og_plan_table;

#define OG_PLAN_END_UNRESOLVED 0x80000000u

/* Staged lines of a multi-file load: the file's index in the top 24 bits, its line below. */
#define OG_PLAN_LINE_BITS 40
static inline uint64_t og_plan_line_encode(uint32_t file, uint64_t line)
{
    return ((uint64_t)file << OG_PLAN_LINE_BITS) | line;
}

typedef struct og_plan {
    og_read *read;
    const og_catalog *cat;
    og_plan_table *nodes, *edges;
    const char *source;      /* input name for messages ("seed.jsonl"), or NULL */
    /* A load of several files (CSV): a staged line carries its file's index in its top bits
     * (og_plan_line_encode) and messages name sources[index] instead of `source`. */
    const char *const *sources;
    size_t nsources;
    int64_t now_ms;
    uint64_t inserted, updated, deleted;
    /* og_plan_maybe_flush thresholds: a type's in-memory staged rows are flushed when they
     * reach flush_rows rows or flush_bytes bytes of flushable columns (0 = no limit of that
     * kind; both 0 = never flush, the default, which mutate relies on). */
    size_t flush_rows, flush_bytes;
    size_t edge_flush_rows;  /* flush_rows of an edge table when nonzero (og_plan_flush_rows) */
    uint64_t flushes;        /* batches flushed so far (all types) */
    uint64_t flushed_rows;   /* staged rows covered by those batches */
    int capture_topology;    /* og_plan_table.end_rows (load only) */
    /* A directory for the unlinked temp files of spilled compact endpoints (og_plan_table
     * .ends_spilled; load only: the local store's root), or NULL to keep them in memory. */
    const char *spill_dir;
    struct og_plan_job *job; /* the flushed batch being written on a worker thread (plan.c) */
    /* Builds flushed node batches' key maps and text indexes beside the load (batch_index.h).
     * og_plan_free joins it into the calling thread's journal (a failed attempt deletes its
     * files); a load that is about to publish takes it first and settles it afterwards. */
    struct og_batch_index *side;
    int no_text_index;          /* 1: the builder writes key maps only (a load's --no-index) */
    /* A committed-row lookup that failed (a read error, not "absent"): og_plan_committed_find
     * answers -1 then, so the plan may have decided wrongly (an insert of a key that exists,
     * an endpoint called dangling).  The first failure is kept here — lookups run on the RI
     * check's threads too — and og_plan_validate / og_plan_write return it: a plan built on
     * a failed read never publishes (docs/invariants.md #13). */
    int lookup_failed;        /* atomic: 0, else the first failure's og_status */
    char lookup_msg[512];     /* its message (written by the thread that set lookup_failed) */
    /* Generated ids made OG_PLAN_ULIDS at a time (og_ulid_new_n: one clock read and lock for
     * them all; a load of 5M edges made 5M calls), handed out in order from ulid_pos. */
    char ulids[64][OG_ULID_LEN + 1];
    size_t ulid_pos, nulids;
} og_plan;

og_status og_plan_init(og_plan *p, og_read *read, const char *source);
/* "seed.jsonl:12" / "people.csv:4" of a staged line, for messages ("" without a source). */
const char *og_plan_where(const og_plan *p, uint64_t line, char *buf, size_t cap);
void og_plan_free(og_plan *p);

/* Column index of property i of a type in its staged columns. */
size_t og_plan_prop_col(const og_plan_table *pt, size_t prop);

/* Opens (lazily) the table's base view.  Called by the functions below as needed. */
og_status og_plan_table_view(og_plan *p, og_plan_table *pt);

/* Stages one row from a JSON `data` object (load; a token of a util/jsontok.h document): every member must be a property (or "id", below);
 * values convert strictly (jsonval.h, load mode); the id is derived from the @key (a keyed
 * node, or a keyed edge: og_cat_type_key) and checked against a given one, or is the given
 * one, or a new ULID.  The id is given as `id` (the record's top-level "id", may be NULL) or,
 * the older spelling, data.id when the type has no property `id` (both at once is refused;
 * with such a property data.id is that property).  Edges give from/to.  *row receives
 * the staged row index; *prev the earlier current staged row with the same id, or -1 (the new
 * row is now the current one for that id: the caller supersedes or refuses the old one). */
og_status og_plan_stage_json(og_plan *p, og_plan_table *pt, const og_jtok *data, const char *id, const char *from,
                             const char *to, uint64_t line, uint32_t *row, long *prev);

og_status og_plan_table_cols(og_plan_table *pt);

/* A bulk load's common edge (docs/load.md "Edges in bulk"): n edges of pt, each with a
 * generated id and no data, staged as n og_plan_stage_json calls (empty data, no id) each
 * followed by og_plan_maybe_flush would stage them — same rows, lines and flushes — without
 * the per-record work.  Only when og_plan_edges_bulk_ok(pt): an edge type without properties
 * and without @key whose columns exist (an edge was staged the usual way first).  len[2i] and
 * len[2i+1] are the bytes of from[i] and to[i] (the parsers know them; ids hold no NUL). */
int og_plan_edges_bulk_ok(const og_plan_table *pt);
og_status og_plan_stage_edges(og_plan *p, og_plan_table *pt, size_t n, const char *const *from, const char *const *to,
                              const size_t *len, const uint64_t *line);

/* Stages one row given as one 1-row vector per staged column (layout order, types equal to
 * the columns').  An empty id vector (length 0) asks for a derived id: the @key's canonical id
 * for a keyed node or edge, else a new ULID.  *prev as for og_plan_stage_json. */
og_status og_plan_stage_vectors(og_plan *p, og_plan_table *pt, const og_vector *src, uint32_t *row, long *prev);

/* Puts the rows with generated ids that are not indexed yet into staged_ids (see plan.c's
 * header), so that og_plan_staged_find is a map lookup.  OG_ERR_NOMEM. */
og_status og_plan_index_ids(og_plan_table *pt);

/* The staged row index whose id is id[0..len) and is still current, or -1.  Correct without
 * og_plan_index_ids too (unindexed rows are then searched one by one). */
long og_plan_staged_find(const og_plan_table *pt, const char *id, size_t len);
/* The committed (base view) row whose id is id[0..len) and which is not removed, or -1.
 * A failed read also answers -1 and is recorded in p->lookup_failed (og_plan_lookup_status). */
long og_plan_committed_find(og_plan *p, og_plan_table *pt, const char *id, size_t len);

/* OG_OK, or the first failed committed-row lookup of this plan (its message restored as the
 * thread's last error).  og_plan_validate and og_plan_write check it; a caller that acts on
 * og_plan_committed_find without either checks it itself. */
og_status og_plan_lookup_status(const og_plan *p);

/* Marks committed row `row` removed / staged row `row` superseded. */
og_status og_plan_remove_committed(og_plan *p, og_plan_table *pt, uint32_t row);
void og_plan_supersede(og_plan_table *pt, uint32_t row);
og_status og_plan_overwrite(og_plan *p, og_plan_table *pt);

/* The input line of staged row `row` (0 = none). */
uint64_t og_plan_line(const og_plan_table *pt, size_t row);

/* The id string of a staged row. */
const char *og_plan_staged_id(const og_plan_table *pt, uint32_t row, size_t *len);

/* Streaming staged rows to data files (load).  og_plan_flush writes pt's in-memory staged
 * rows [mem_base, nstaged) that are not superseded as one new fragment of pt's txn (opened
 * lazily on the base version; overwrite staged first when pt->overwrite) and drops them from
 * the flushable columns; retained columns, ids, lines and the bookkeeping stay.  Nothing it
 * writes is reachable before the txn og_plan_write stages (og_draft_stage_table: the write
 * protocol commits it) is committed and the graph commit naming that version is published (STORAGE.md §5 step 3); a failed or abandoned plan leaves garbage for
 * cleanup.  A flushed row that is superseded later is deleted from its staged fragment by
 * og_plan_write.  og_plan_overwrite after a flush of the same table is OG_ERR_INTERNAL.
 * og_plan_maybe_flush flushes when pt passed p->flush_rows / p->flush_bytes. */
og_status og_plan_flush(og_plan *p, og_plan_table *pt);
og_status og_plan_maybe_flush(og_plan *p, og_plan_table *pt);
/* The row threshold for pt: edge_flush_rows for an edge table when set, else flush_rows. */
size_t og_plan_flush_rows(const og_plan *p, const og_plan_table *pt);
/* Bytes held by pt's flushable columns now (the streaming budget's measure). */
size_t og_plan_table_mem_bytes(const og_plan_table *pt);
/* What the whole plan holds in memory (staged columns, id maps, lines): a load's budget. */
uint64_t og_plan_mem_bytes(const og_plan *p);

/* The values of top-level field `field_id` at committed (base view) rows rows[0..n) of pt
 * (its view open) into `out` (owned): point reads for a few rows, the whole column for many.
 * OG_ERR_NOT_FOUND when the stored table lacks the field; og_tableview_gather's errors. */
og_status og_plan_committed_values(og_plan_table *pt, int32_t field_id, const uint32_t *rows, size_t n, og_vector *out);

/* Calls fn(ud, edge row, is_dst, id, len) for every committed (base view) row of edge table
 * et whose src id is in `srcs` (is_dst 0) or whose dst id is in `dsts` (is_dst 1); either map
 * may be NULL or empty; an edge with both ends listed is reported once per end.  Removed rows
 * are reported too (fn decides).  Uses the base versions' topology when one is at hand (on
 * the view or persisted: og_tableview_topology_at_hand, never built here) and holds every
 * edge, so a write touching a few nodes reads a few adjacency entries; else one pass over the
 * src/dst columns.  Stops at fn's first error. */
typedef og_status (*og_plan_edge_fn)(void *ud, uint32_t edge, int is_dst, const char *id, size_t len);
og_status og_plan_incident_edges(og_plan *p, og_plan_table *et, const og_strmap *srcs, const og_strmap *dsts,
                                 og_plan_edge_fn fn, void *ud);

/* Validates every touched table's new image (see above). */
og_status og_plan_validate(og_plan *p);

/* 1 when staged rows [0, nstaged) of pt are its whole new image, in the order the new table
 * version numbers its rows: every committed row removed (or none), nothing superseded, so no
 * row is left out of the data files og_plan_flush / og_plan_write append in staged order. */
int og_plan_staged_is_image(og_plan *p, og_plan_table *pt);

/* Stages every touched table as a new version from its base version in the draft
 * (og_draft_stage_table: the write protocol writes its last data file, deletion files and
 * manifest, with the commit object, after the callback).  Returns the number of tables in
 * *ntables. */
og_status og_plan_write(og_plan *p, og_commit_draft *d, size_t *ntables);

#endif
