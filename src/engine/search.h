/*
 * search.h — execution of the search functions of one read query (reference-language.md §3.5,
 * docs/search.md): the text predicates search / fuzzy / match_text, and the scores and
 * orderings nearest / bm25 / rrf.
 *
 * Correctness baseline: everything covers exactly the LIVE rows of the snapshot's table
 * versions (what og_exec_source serves), so BM25 statistics (N, df, average length) cover
 * exactly the rows a read sees — deleted and replaced rows never count — whether the text is
 * read from persisted full-text index files (index/fts.h) or analysed from the rows.
 *
 * Semantics (the analyzer is text/analyzer.h):
 *   search(f, q)      every non-stop term of q occurs in f.  A q without such terms matches
 *                     nothing.
 *   fuzzy(f, q, k)    every non-stop term of q is within k edits (Levenshtein over code points,
 *                     on the stemmed terms) of some non-stop term of f.  k defaults to 2.
 *   match_text(f, q)  phrase: the terms of q, stop words included, occur in f at the same
 *                     relative word positions (in order, adjacent).
 *   bm25(f, q)        sum over the distinct non-stop terms t of q of
 *                       idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)),
 *                     idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), k1 = 1.2, b = 0.75;
 *                     N = rows of the type with a non-null f, dl = a row's non-stop terms,
 *                     avgdl their mean.  A row matches when its score is > 0 (shares a term).
 *                     Null f: null score.
 *   nearest(v, q)     squared Euclidean distance (vec/distance.h); null for a null vector.
 *   rrf(a, b, k)      per entity of the ranked variable: sum over the arms that rank it of
 *                     1 / (k + rank + 1) (rank 0-based).
 * A null query string matches nothing (scores 0).
 *
 * Lifetime: one og_search per execution; it borrows the IR, the source and the parameters.
 * Not thread-safe.
 */
#ifndef OG_ENGINE_SEARCH_H
#define OG_ENGINE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/ir.h"
#include "engine/bindings.h"
#include "engine/exec.h"
#include "omnigraph.h"
#include "util/vector.h"

typedef struct og_search og_search;

#define OG_BM25_K1 1.2
#define OG_BM25_B 0.75

og_status og_search_new(og_search **out, const og_ir_query *ir, const og_exec_source *src, const og_vector *params,
                        int64_t now_ms);
void og_search_free(og_search *s);

/* Clears in sel (n bits) the rows whose entity rows[i] (of t->var's node type; OG_ROW_NONE
 * never matches) fail the text match t. */
og_status og_search_text_filter(og_search *s, const og_ir_text *t, const uint32_t *rows, size_t n, uint8_t *sel);

/* The text match t as a Bool vector over rows[0..n). */
og_status og_search_text_eval(og_search *s, const og_ir_text *t, const uint32_t *rows, size_t n, og_vector *out);

/* The score of ir->ranks[rank] for entity rows[0..n) of the rank's variable, as an F64 vector
 * (null where there is none).  An rrf score is only known after og_search_order ran it. */
og_status og_search_score(og_search *s, int rank, const uint32_t *rows, size_t n, og_vector *out);

/* The rows of the ranked variable's type that bm25 rank ir->ranks[rank] scores above 0 (the
 * rows sharing a query term), ascending; borrowed until og_search_free.  A bm25 ordering keeps
 * only those rows, so the executor may bind just them instead of scanning the type: the cost
 * of a ranked query then follows the postings of its terms, not the table's size. */
og_status og_search_candidates(og_search *s, int rank, const uint32_t **rows, size_t *n);

/* og_search_candidates cut to the rows that can be among the first k of the ordering: those
 * scoring at least the k-th highest score (ties at the cut all kept, so later order keys and
 * the id tie-break still choose among them), ascending, in *rows (owned).  Only valid when
 * every candidate row becomes exactly one result row (the executor's bare scan of the ranked
 * type, no aggregation). */
og_status og_search_candidates_top(og_search *s, int rank, uint64_t k, uint32_t **rows, size_t *n);

/* For a nearest ordering ir->ranks[rank] with a limit whose match block is the bare scan of
 * the ranked type: the rows vector index files name as candidates (search_ann.h) plus every
 * live row of the data files no index covers, ascending, in *rows (owned) with *used = 1; the
 * ordering then ranks just those exactly.  *used = 0 (nothing allocated) when no index file
 * applies or exact search is forced. */
og_status og_search_nearest_candidates(og_search *s, int rank, uint64_t limit, uint32_t **rows, size_t *n, int *used);

/* For an rrf ordering ir->ranks[rank] with a limit whose match block is the bare scan of the
 * ranked type: fuses the arms over every live row of the type, keeping only the first `limit`
 * fused entities (docs/search.md "Fusion: rrf": each arm is ranked only as deep as the fused
 * top `limit` provably needs, with exact ranks), and returns their rows ascending in *rows
 * (owned) with *used = 1; og_search_order then keys just those.  *used = 0 (nothing
 * allocated) without a limit or under og_search_set_rrf_full. */
og_status og_search_rrf_candidates(og_search *s, int rank, uint64_t limit, uint32_t **rows, size_t *n, int *used);

/* Test hook (this thread): 1 = fuse every entity of both arms with no depth or limit cut (the
 * full fusion the bounded one must equal), 0 = bounded (the default). */
void og_search_set_rrf_full(int on);

/* Test hook (this thread): 1 = a bm25 top-k scores every posting of every query term (the
 * exhaustive stream the MaxScore one must equal), 0 = MaxScore (the default). */
void og_search_set_bm25_exhaustive(int on);

/* A search ordering by ir->ranks[rank] over the final rows b, whose column var_col holds the
 * ranked variable: drops the rows the ranking leaves out (nearest: null vectors; bm25: no
 * shared term; rrf: entities in neither arm) and returns the primary sort key over the kept
 * rows in *key (owned) with its direction in *desc.  `limit` (0 = none) is the query's: the
 * size of an rrf nearest arm, and the number of fused entities an rrf keeps (every row of
 * each: limit rows never need more entities). */
og_status og_search_order(og_search *s, int rank, og_bindings *b, size_t var_col, uint64_t limit, og_vector *key,
                          int *desc);

/* Test hook: how many text segments of this process came from the cache of analysed fragments
 * (search.c; OG_TEXT_CACHE_MB) rather than being analysed. */
uint64_t og_search_text_cache_hits(void);

#endif
