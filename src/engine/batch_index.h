/*
 * batch_index.h — the per-data-file indexes of a bulk load's flushed node batches, built on a
 * thread beside the load (docs/load.md "Indexes of flushed batches").
 *
 * Why: a key map and a text index cover one data file each (docs/indexes.md), and a flushed
 * batch's rows are exactly its data file's, already in memory.  Built after the publish they
 * were most of a 1M-node load's index stage, on cores the staging had left half idle; built
 * here they overlap the rest of the file.  Derived state, like every index file: each is
 * written whole with put_if_absent, a failure or a skipped batch only leaves the file to the
 * build after the publish, and nothing here ever fails the load.
 */
#ifndef OG_ENGINE_BATCH_INDEX_H
#define OG_ENGINE_BATCH_INDEX_H

#include <stddef.h>

#include "omnigraph.h"
#include "store/store.h"
#include "util/vector.h"

typedef struct og_batch_index og_batch_index;

/* What to build from one batch: the key map of `ids` at keymap_key (NULL: none) and the text
 * index of texts[i] at fts_keys[i].  The vectors are taken (moved: the caller's are left
 * empty); the keys copied. */
#define OG_BATCH_INDEX_MAX_TEXTS 8
typedef struct og_batch_index_task {
    og_store *store;
    char keymap_key[512];
    og_vector ids;
    size_t ntexts;
    char fts_keys[OG_BATCH_INDEX_MAX_TEXTS][512];
    og_vector texts[OG_BATCH_INDEX_MAX_TEXTS];
} og_batch_index_task;

/* A builder with its own thread, started at the first task.  NULL on out of memory (then
 * nothing is built beside the load). */
og_batch_index *og_batch_index_new(void);

/* Queues t (its vectors moved out of it).  Past a few waiting tasks (the builder is behind),
 * the task is dropped instead: memory stays bounded and the build after the publish makes
 * its files.  Returns 1 when queued.  Safe from any thread. */
int og_batch_index_add(og_batch_index *b, og_batch_index_task *t);

/* Waits until every queued task is built (or failed), then records the files written in the
 * calling thread's store journal (og_store_journal_adopt), so a write attempt that fails
 * deletes them with its data files.  The builder can take tasks again afterwards. */
void og_batch_index_join(og_batch_index *b);

/* Waits as og_batch_index_join, then deletes every file the builder wrote (best effort): for a
 * builder that outlived its write attempt, when that attempt was not published. */
void og_batch_index_discard(og_batch_index *b);

/* Waits, keeps what was written (the attempt published), frees.  NULL is a no-op. */
void og_batch_index_free(og_batch_index *b);

/* Files written and tasks dropped so far (tests). */
size_t og_batch_index_written(const og_batch_index *b);
size_t og_batch_index_dropped(const og_batch_index *b);

#endif
