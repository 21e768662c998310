/*
 * tableview_internal.h — the inside of an og_tableview, shared by tableview.c (views, columns,
 * key maps, topologies), tableview_incidence.c (a write's edges at a node through an older
 * topology), tableview_delta.c (a topology built from an older one) and tableview_compose.c
 * (a topology composed from an older one), so no file outgrows
 * what one can read at once.  Not for other modules: they
 * use tableview.h.
 */
#ifndef OG_ENGINE_TABLEVIEW_INTERNAL_H
#define OG_ENGINE_TABLEVIEW_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/colscan.h"
#include "engine/tableview.h"
#include "index/keymap.h"
#include "util/strmap.h"

/* One topology of an edge view, keyed by the node table versions it maps endpoints into. */
typedef struct topo_slot {
    char *src_dir, *dst_dir;
    uint64_t src_version, dst_version;
    og_topology *topo;
} topo_slot;

struct og_tableview {
    atomic_size_t refs;
    og_table *table; /* the view's own handle */
    og_store *store;
    og_manifest m;
    size_t nrows;
    uint64_t *_Atomic row_addrs; /* built on first use (a mapped traversal never needs them) */
    roaring_bitmap_t *_Atomic *dels; /* per fragment: its deletion file, read on first use */

    size_t ntop;                 /* top-level fields */
    int32_t *top_ids;            /* their field ids, schema order */
    og_type *top_types;          /* their og_types (valid only where top_ok[i]) */
    og_status *top_type_st;      /* og_lance_schema_field_type's answer per field */
    og_vector *_Atomic *cols;    /* per top-level field: NULL until loaded */
    og_colzones *_Atomic *zones; /* per top-level field: NULL until built (colscan.h) */
    atomic_uint *points;         /* per top-level field: rows point gathers fetched so far */
    struct og_dictcol *_Atomic *dicts; /* per top-level field: the coded String column, NULL until loaded */
    atomic_int *nodict;          /* per top-level field: 1 = not coded (not a String, too many values) */
    og_strmap *_Atomic idmap;
    int any_deletions;           /* some fragment has a deletion file */
    size_t *frag_start;          /* view row where each fragment's live rows start (nfragments + 1) */
    og_keymap *_Atomic *_Atomic kms; /* per fragment, NULL until a probe first needs it */
    uint8_t *km_unsaved;         /* per fragment: built here, not (yet) in the store (v->lock) */
    int32_t km_fid;              /* the id field the maps index (set before kms) */
    atomic_int keys_ready;       /* kms covers every fragment */
    atomic_int keys_saved;       /* every km_unsaved is 0 (or saving failed: never retried) */
    atomic_int km_built;         /* a map was built since the last og_tableview_save_keys */
    og_keymap *krun;             /* the run map over some fragments (keymap.h), or NULL */
    int32_t *krun_view;          /* per run ordinal: the view's fragment index, or -1 */
    uint8_t *km_covered;         /* per fragment: 1 when krun holds its keys */
    atomic_int krun_state;       /* 1 once looked for (krun then final) */
    atomic_int krun_saving;      /* 1 once a persist call took the run map's build */

    pthread_mutex_t lock;        /* serialises lazy loads and guards topos */
    topo_slot **topos;
    size_t ntopos;

    size_t base_bytes;
    size_t estimate_bytes;
    atomic_size_t derived_bytes;
};

/* Work proportional to a whole table (tableview.h og_tableview_whole_reads). */
extern _Atomic size_t og_tv_whole_reads;
/* Scans top-level field i of v into a new owned vector *out (the caller holds v->lock);
 * row_addrs may be NULL for a view without deletions.  With dout set (a String field), codes
 * it into *dout instead (dictcol.h): OG_ERR_LIMIT when it has too many distinct values.
 * tableview_load.c. */
struct og_dictcol;
og_status og_tv_load_column(og_tableview *v, size_t i, const uint64_t *row_addrs, og_vector **out,
                            struct og_dictcol **dout);

/* The index of system column `name` ("id", "src", "dst") in schema s, or -1. */
long og_tv_sys_field_index(const og_lance_schema *s, const char *name);
/* The deletion bitmap of fragment fi of v (which has a deletion file), read once and kept. */
og_status og_tv_frag_deletions(og_tableview *v, size_t fi, const roaring_bitmap_t **out);
/* The fragment (index) holding view row `row` (< nrows). */
size_t og_tv_frag_of_row(const og_tableview *v, size_t row);
/* The persisted adjacency of (edges, src, dst), or NULL when absent or not usable; `prefault`
 * asks the kernel to read it ahead. */
og_topology *og_tv_open_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, int prefault);
/* The version triples {edge, src, dst} of the persisted topologies of (edges, src, dst) at
 * versions no newer than the three views' (theirs included), newest first (by edge version,
 * then source, then destination): *v owned, *n of them; none when the listing fails (a
 * missing older topology only costs a full build). */
void og_tv_older_topologies(og_tableview *edges, og_tableview *src, og_tableview *dst, uint64_t (**v)[3], size_t *n);
/* The topology of (edges, src, dst) built from an older persisted one plus what changed since
 * (tableview_delta.c), or *out NULL (OG_OK) when no base is usable or worth it; an error only
 * means "build in full". */
og_status og_tv_delta_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, og_topology **out);
/* The topology of (edges, src, dst) composed from an older persisted one (topology.h
 * og_topology_compose: nothing rebuilt, nothing written) when few rows changed since
 * (tableview_compose.c), or *out NULL (OG_OK) when no base suits; an error only means "build". */
og_status og_tv_compose_topology(og_tableview *edges, og_tableview *src, og_tableview *dst, og_topology **out);

/* Shared by the delta and the composed topology (tableview_delta.c). */
/* match[i] = the index in cur of old's fragment i when cur still holds it (same id, data files
 * and physical rows), else SIZE_MAX. */
og_status og_tv_match_fragments(const og_manifest *old, const og_manifest *cur, size_t *match);
/* The deleted offsets of fragment fi of v, ascending (*out NULL, *n 0 without a deletion
 * file); free *out. */
og_status og_tv_deleted_offsets(og_tableview *v, size_t fi, uint32_t **out, size_t *n);
/* Reads the String system fields names[0..nf) (nf <= 2) at view rows rows[0..n) (ascending) of
 * v, in runs per fragment, and hands each run to use(ctx, its rows, k, its columns). */
typedef og_status (*og_tv_rows_fn)(void *ctx, const uint32_t *rows, size_t k, const og_vector *cols);
og_status og_tv_read_rows(og_tableview *v, const char *const *names, size_t nf, const uint32_t *rows, size_t n,
                          og_tv_rows_fn use, void *ctx);
/* 1 when a and b are views of the same table version (the same node table on both ends of an
 * edge type: one row map serves both). */
int og_tv_same_view(og_tableview *a, og_tableview *b);
/* The live row of id ids[i] in nodes, OG_ROW_NONE when none (or a null id), as a full build
 * maps an endpoint. */
og_status og_tv_lookup_id(og_tableview *nodes, const og_vector *ids, size_t i, uint32_t *row);

/* OG_ERR_INVALID when the three views cannot make a topology together. */
og_status og_tv_check_topology_views(og_tableview *edges, og_tableview *src_nodes, og_tableview *dst_nodes);

#endif
