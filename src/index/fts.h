/*
 * fts.h — the full-text inverted index of ONE data file's String column (index kind "fts",
 * index.h; docs/indexes.md, docs/search.md).
 *
 * Why per data file: a data file never changes, so its index is valid for every table version
 * naming it; deletion vectors are applied by the reader, and BM25 statistics (N, df, avgdl) are
 * computed by the reader over the snapshot's LIVE rows from the postings and document lengths,
 * so a score never depends on which files are indexed.
 *
 * Terms come from text/analyzer.h with the default settings (the analyzer the query side
 * uses).  A term is (bytes, stop): a stop word occurrence and a non-stop occurrence of the same
 * stem are two entries, so term queries (search, fuzzy, bm25) read the non-stop entry and
 * phrases read whichever the query word is.
 *
 * File layout (little-endian; sections 8-byte aligned):
 *   header (96 bytes): "OGFTSIDX", u32 format 1, u32 analyzer OG_FTS_ANALYZER,
 *     u64 rows (physical rows), u64 terms, u64 blob bytes, u64 doc stream bytes,
 *     u64 position stream bytes, u64 non-null docs, u64 sum of lengths, u64 0, u64 0, u64 0
 *   lengths: u32[rows]   non-stop terms per row, UINT32_MAX for a null value
 *   dict:    terms x 40 bytes {u64 doc stream offset, u64 position stream offset,
 *            u32 doc stream bytes, u32 position stream bytes, u32 term offset, u32 df,
 *            u16 term length, u8 stop, u8 0, u32 0}, ascending by (term bytes, stop)
 *   blob:    term bytes
 *   docs:    per term, per document holding it: varint doc delta (the first: the doc), varint tf
 *   pos:     per term, per document: tf varints of word-position deltas (the first absolute)
 *   trailer: "OGFTEND\0"
 * Opening checks the sizes and the trailer; every read is bounds-checked, and the postings
 * iterator checks that documents ascend below `rows`, so a damaged file yields OG_ERR_CORRUPT
 * (the reader then ignores it), never a read outside the mapping.
 */
#ifndef OG_INDEX_FTS_H
#define OG_INDEX_FTS_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"
#include "omnigraph.h"
#include "store/store.h"
#include "text/analyzer.h"
#include "util/buf.h"

/* Bumped whenever the analyzer's output for some text changes: files of another analyzer are
 * ignored (OG_ERR_CORRUPT at open). */
#define OG_FTS_ANALYZER 1
#define OG_FTS_FORMAT 1
#define OG_FTS_NULL_LEN UINT32_MAX

extern const og_index_def og_index_def_fts;

typedef struct og_fts og_fts;

/* The text of document i into *p, *len; returns 0 for a null value. */
typedef int (*og_fts_doc_fn)(void *ud, size_t i, const char **p, size_t *len);

/* Encodes the index of documents 0..ndocs-1 into out (appended), analysing with `an` (which
 * must have the default settings).  OG_ERR_LIMIT (>= 2^32 rows or 4 GiB of postings), NOMEM. */
og_status og_fts_encode(og_analyzer *an, size_t ndocs, og_fts_doc_fn doc, void *ud, og_buf *out);

/* og_fts_encode over a String vector (one document per row). */
og_status og_fts_encode_vector(og_analyzer *an, const og_vector *texts, og_buf *out);

/* Opens an index over bytes the caller keeps alive; `own` (may be NULL) is free()d and
 * `mapping` (may be NULL) released by og_fts_free.  On error neither is taken.
 * OG_ERR_CORRUPT for a malformed file or another analyzer's. */
og_status og_fts_open_bytes(og_fts **out, const uint8_t *p, size_t len, void *own, og_mapping *mapping);
void og_fts_free(og_fts *f);

uint64_t og_fts_rows(const og_fts *f);
/* Documents with a non-null value, and the sum of their lengths (header counts). */
uint64_t og_fts_nonnull(const og_fts *f);
uint64_t og_fts_total_len(const og_fts *f);
size_t og_fts_terms(const og_fts *f);
/* Non-stop terms of document i (i < rows), OG_FTS_NULL_LEN for a null value. */
uint32_t og_fts_doc_len(const og_fts *f, size_t i);

/* The dict entry of (term[0..len), stop), or -1. */
long og_fts_find(const og_fts *f, const char *term, size_t len, int stop);
/* Entry i's term bytes, length, stop flag and document frequency (over physical rows). */
void og_fts_term(const og_fts *f, size_t i, const char **term, size_t *len, int *stop, uint32_t *df);

/* Iterates the postings of one entry. */
typedef struct og_fts_iter {
    const uint8_t *d, *de, *p, *pe;
    uint64_t rows;
    uint32_t left;        /* documents still to read (df) */
    int64_t last;
    int want_pos;
    uint32_t doc, tf;     /* the current document */
    uint32_t *pos;        /* want_pos: its tf positions (ascending) */
    size_t pos_cap;
} og_fts_iter;

/* Starts iterating entry i; with want_pos the positions of each document are decoded too.
 * Free with og_fts_iter_free. */
void og_fts_iter_init(og_fts_iter *it, const og_fts *f, size_t i, int want_pos);
/* 1: it->doc / it->tf (and it->pos) hold the next document; 0: done; OG_ERR_CORRUPT (negated
 * status, < 0) or -OG_ERR_NOMEM on failure. */
int og_fts_iter_next(og_fts_iter *it);
void og_fts_iter_free(og_fts_iter *it);

#endif
