/*
 * index.h — the contract of persisted per-data-file property indexes (docs/indexes.md,
 * STORAGE.md §8, INVARIANTS.md 7): a small registry of index KINDS, the naming of their files,
 * and what the read path is handed to use them.
 *
 * Why a registry: `omnigraph index build|status` and `optimize` walk every indexed property of
 * a branch head and, for each kind that applies, make sure every data file has its index file.
 * They know nothing about what a kind stores; a kind (fts here, vector / scalar elsewhere) is
 * four fields: a name, a format number, which properties it applies to, a builder and a check.
 * Adding a kind = one og_index_def in its own file + one line in registry.c.
 *
 * Rules every kind follows:
 *   - One file per (data file, property): it describes the PHYSICAL rows 0..physical_rows-1
 *     of the fragment's data file holding the property, deleted rows included (deletion
 *     vectors differ between table versions and are applied by the reader), so it is valid
 *     for every table version that names the data file.
 *   - Store key (og_index_file_key):
 *         _index/<table dir>/<data file name without .lance>/<kind>-<field id>.v<format>
 *     beside the keymap of the same data file.  An index file is garbage when no live table
 *     version names its data file (the directory's name + ".lance").
 *   - Written once with put_if_absent (a crash leaves no file or a whole one), never changed.
 *   - Derived: a reader that finds a file missing, foreign, truncated or damaged ignores it
 *     and computes the same answer from the rows; results never depend on coverage.
 *   - Built off the write path only: by `omnigraph index build`, and by `optimize`.
 *
 * A fragment whose data files do not hold the property (written before the property existed)
 * reads as all nulls and needs no index file (og_index_file_key: OG_ERR_NOT_FOUND).
 */
#ifndef OG_INDEX_INDEX_H
#define OG_INDEX_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "store/store.h"
#include "table/manifest.h"
#include "table/table.h"
#include "util/buf.h"
#include "util/vector.h"

typedef struct og_index_def {
    const char *name; /* "fts", "vector", "scalar": the --type of `omnigraph index` and the file prefix */
    uint32_t format;  /* the file format, part of the file name: a new format never reads an old file */
    /* 1 when this kind indexes a property of storage type `type` whose catalog index intent
     * (compiler/catalog.h og_index_kind: OG_INDEX_BTREE / INVERTED / VECTOR) is `intent`. */
    int (*applies)(og_type type, int intent);
    /* Encodes the index of column `field_id` over every physical row of fragment f of
     * version m of table t into out (appended).  The table layer's errors, OG_ERR_LIMIT. */
    og_status (*build)(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field_id, og_buf *out);
    /* OG_OK when p[0..len) is a complete file of this kind for a data file of `rows` physical
     * rows (header, sizes, trailer); OG_ERR_CORRUPT otherwise. */
    og_status (*check)(const uint8_t *p, size_t len, uint64_t rows);
} og_index_def;

/* The registered kinds, in a fixed order (registry.c). */
size_t og_index_def_count(void);
const og_index_def *og_index_def_at(size_t i);
/* NULL when no kind has that name. */
const og_index_def *og_index_def_find(const char *name);

/* The store key of kind d's file for field `field_id` of fragment f of table directory `dir`
 * (format above).  OG_ERR_NOT_FOUND when no data file of f holds the field; OG_ERR_LIMIT when
 * `cap` is too small. */
og_status og_index_file_key(char *key, size_t cap, const char *dir, const og_fragment *f, int32_t field_id,
                            const og_index_def *d);

/* Every physical row of column `field_id` of fragment f of version m of table t, in row order,
 * into *out (a fresh og_vector): what a kind's build encodes.  `what` names the kind in errors:
 * OG_ERR_LIMIT (2^32 rows or more), OG_ERR_CORRUPT (the table gave fewer rows), the table
 * layer's errors. */
og_status og_index_read_column(og_table *t, const og_manifest *m, const og_fragment *f, int32_t field_id,
                               const char *what, og_vector *out);

/* --- what the read path is handed (engine/exec.h node_index) ------------------------------- */

/* One fragment of a table version, in view order, with its index file when there is one. */
typedef struct og_index_frag {
    uint64_t fragment_id;
    uint64_t physical_rows;
    size_t view_start;       /* view row of its first live row */
    size_t live_rows;        /* its live rows: view rows [view_start, view_start + live_rows) */
    const uint64_t *addrs;   /* NULL when the fragment has no deletions (view row = view_start +
                                offset); else its live rows' addresses (fragment << 32 | offset),
                                ascending, live_rows of them (borrowed from the view) */
    int no_data;             /* no data file holds the property: every row is null */
    og_mapping *file;        /* the mapped index file (owned), or NULL: absent, unreadable, or
                                index files switched off (OG_INDEX=off) */
    char *ident;             /* owned, or NULL: names this fragment's LIVE rows of the property
                                for the life of the process ("<store uri>|<index file key>|
                                <deletion file id or ->"): data and deletion files never change,
                                so what is derived from those rows may be cached under it */
} og_index_frag;

typedef struct og_index_frags {
    og_index_frag *v;
    size_t n;
} og_index_frags;

void og_index_frags_free(og_index_frags *f);

/* The view row of physical row `offset` of fragment fr, or UINT32_MAX when that row is deleted
 * (binary search among addrs when the fragment has deletions). */
uint32_t og_index_frag_row(const og_index_frag *fr, uint32_t offset);

#endif
