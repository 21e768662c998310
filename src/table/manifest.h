/*
 * manifest.h — Lance table manifests (`lance.table.Manifest`, LANCE.md "Manifest"): the
 * in-memory form of one table version, its protobuf codec, and the manifest file layout.
 *
 * A manifest is a complete description of one table version: every field (pre-order, with the
 * stable field ids), every fragment with its data files and deletion file, the version number
 * and the bookkeeping Lance readers need (feature flags, max_fragment_id, writer version,
 * data format).  Field numbers we read and write:
 *   Manifest      fields 1, fragments 2, version 3, timestamp 7 {seconds 1, nanos 2},
 *                 reader_feature_flags 9, writer_feature_flags 10, max_fragment_id 11
 *                 (proto3 optional: present for a table with fragments), writer_version 13
 *                 {library 1, version 2}, data_format 15 {file_format 1, version 2};
 *                 index_section 6 is only noted (LanceDB indexes are never authority).
 *   DataFragment  id 1, files 2, deletion_file 3, physical_rows 4.
 *   DataFile      path 1, fields 2 (packed int32), column_indices 3 (packed int32),
 *                 file_major_version 4, file_minor_version 5, file_size_bytes 6.
 *   DeletionFile  file_type 1, read_version 2, id 3, num_deleted_rows 4.
 * Unknown fields are skipped on decode (LanceDB writes more of them).
 *
 * File layout: [u32 length][Manifest] at the position the footer names (we write 0), then a
 * 16-byte footer [i64 position][u16 0][u16 2]["LANC"].
 *
 * Memory: an og_manifest owns everything it points to; og_manifest_free releases it.
 */
#ifndef OG_TABLE_MANIFEST_H
#define OG_TABLE_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "table/deletion.h"
#include "table/lance_schema.h"
#include "util/buf.h"

#define OG_MANIFEST_FOOTER_SIZE 16
/* reader/writer feature flag: some fragment has a deletion file. */
#define OG_LANCE_FLAG_DELETION_FILES 1u

typedef struct og_data_file {
    char *path;                 /* relative to the table's data/ directory */
    int32_t *fields;            /* field ids held by the file (list children included) */
    size_t nfields;
    int32_t *column_indices;    /* physical column of each of those ids (same count) */
    size_t ncolumn_indices;
    uint32_t major, minor;      /* we write 2, 0 (what LanceDB records for 2.0 files) */
    uint64_t size_bytes;        /* 0 = unknown */
} og_data_file;

typedef struct og_deletion_info {
    int present;
    og_deletion_kind kind;
    uint64_t read_version;
    uint64_t id;
    uint64_t num_deleted_rows;
} og_deletion_info;

typedef struct og_fragment {
    uint64_t id;
    og_data_file *files;
    size_t nfiles;
    og_deletion_info deletion;
    uint64_t physical_rows;     /* rows in the data files, deleted ones included */
    int in_arena;               /* files (and their paths and arrays) live in the manifest's
                                 * arena: og_fragment_free leaves them to og_manifest_free */
} og_fragment;

typedef struct og_manifest {
    og_lance_schema schema;     /* every field, pre-order */
    og_fragment *fragments;
    size_t nfragments;
    uint64_t version;
    int64_t ts_seconds;
    int32_t ts_nanos;
    uint64_t reader_flags, writer_flags;
    int has_max_fragment_id;
    uint32_t max_fragment_id;
    char *writer_library;       /* may be NULL */
    char *writer_version;       /* may be NULL */
    char *format_name;          /* data_format.file_format ("lance"); may be NULL */
    char *format_version;       /* data_format.version ("2.0"); may be NULL */
    int has_index_section;      /* read only: the version carries LanceDB index metadata */
    /* One block holding the data files (structs, paths, field arrays) of the fragments that
     * og_manifest_decode / og_manifest_copy made (in_arena): no allocation per file — a
     * 763-fragment edge manifest's thousands of small allocations and frees were most of a
     * fresh process's first traversal at 10M nodes (docs/benchmarks.md "Scaling"). */
    void *arena;
    size_t arena_used;
} og_manifest;

/* A zeroed manifest (no fields, no fragments). */
void og_manifest_init(og_manifest *m);
void og_manifest_free(og_manifest *m);
og_status og_manifest_copy(og_manifest *dst, const og_manifest *src);

/* Fragments: deep copy / free of one, and appending a deep copy to a manifest. */
og_status og_fragment_copy(og_fragment *dst, const og_fragment *src);
void og_fragment_free(og_fragment *f);
og_status og_manifest_add_fragment(og_manifest *m, const og_fragment *f);
/* Index of the fragment with this id, or -1. */
long og_manifest_find_fragment(const og_manifest *m, uint64_t id);
/* Live rows of a fragment / of the whole version (physical rows minus deleted rows). */
uint64_t og_fragment_live_rows(const og_fragment *f);
uint64_t og_manifest_live_rows(const og_manifest *m);

/* Sets string members (copies; NULL clears).  OG_ERR_NOMEM. */
og_status og_manifest_set_strings(og_manifest *m, const char *writer_library,
                                  const char *writer_version, const char *format_name,
                                  const char *format_version);

/* The protobuf message bytes, appended to `out`. */
og_status og_manifest_encode(const og_manifest *m, og_buf *out);
/* Decodes message bytes into *m (initialised first; free with og_manifest_free even on
 * failure is not needed: on error *m is left empty).  Checks what a reader relies on: a valid
 * schema, unique fragment ids, max_fragment_id >= every fragment id, fields and
 * column_indices of equal length, known deletion file types.  OG_ERR_CORRUPT. */
og_status og_manifest_decode(const uint8_t *p, size_t n, og_manifest *m);

/* A whole manifest file (length word, message, footer), appended to `out`. */
og_status og_manifest_file_encode(const og_manifest *m, og_buf *out);
/* Decodes a manifest file: footer magic, position and length checked.  OG_ERR_CORRUPT. */
og_status og_manifest_file_decode(const uint8_t *p, size_t n, og_manifest *m);

/* "_versions/{u64max - version:020}.manifest" (V2 naming), relative to the table dir. */
og_status og_manifest_path(char *out, size_t cap, uint64_t version);
/* Parses the file name part of a manifest key ("…/18446744073709551614.manifest" or V1
 * "…/3.manifest"); returns 1 and the version, 0 when the name is not a manifest name.
 * *v2 (may be NULL) tells which naming it used. */
int og_manifest_parse_name(const char *key, uint64_t *version, int *v2);

#endif
