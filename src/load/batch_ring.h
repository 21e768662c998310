/*
 * batch_ring.h — input read and parsed ahead on worker threads, handed to one consumer in
 * input order (docs/load.md "Parsing on worker threads").  Why a module: the NDJSON reader
 * (load/ndjson.c) and the CSV source (load/csv_load.c) parse the same way and had each
 * their own copy of this scheme.
 *
 * Batch number k is made by worker k % nworkers in slot k % nslots (nslots a multiple of
 * nworkers, so a slot is always refilled by the worker that filled it before, and a batch's
 * memory lives in its slot until then).  The workers take turns at reading the raw input of
 * their next batch (`read`: one worker at a time, batches in number order), then parse it
 * (`parse`) in parallel; the consumer takes batches in number order (og_batch_ring_take) and
 * gives each back when it is done with it (og_batch_ring_release).  A worker may read ahead at
 * most nslots batches past the one the consumer holds.  A batch that ends the input (`read` or
 * `parse` answers 1: the end, or a failure it records in the batch) stops every worker after
 * it; what such a batch holds is the caller's business (records before the failure, then the
 * error), so the consumer sees exactly what a sequential read gives.
 */
#ifndef OG_LOAD_BATCH_RING_H
#define OG_LOAD_BATCH_RING_H

#include <stddef.h>

#include "omnigraph.h"

typedef struct og_batch_ring og_batch_ring;

typedef struct og_batch_ring_ops {
    /* Empties `batch` before worker `worker` refills it (what it held for the consumer). */
    void (*clear)(void *ctx, void *worker, void *batch);
    /* Reads the next batch's raw input into `batch` (this worker holds the read turn).  1 when
     * no batch follows (end of input, or a failure recorded in the batch), else 0. */
    int (*read)(void *ctx, void *worker, void *batch);
    /* Parses `batch` (in parallel with the other workers).  1 when no batch follows (read said
     * so, or a failure recorded in the batch), else 0. */
    int (*parse)(void *ctx, void *worker, void *batch, int ended);
} og_batch_ring_ops;

/* Starts nworkers threads over nslots batches (borrowed, nslots a multiple of nworkers, at most
 * 16 of each); workers[i] is worker i's own state, passed to its calls.  OG_ERR_NOMEM, or the
 * thread creation's error (no thread is left running then). */
og_status og_batch_ring_start(og_batch_ring **out, const og_batch_ring_ops *ops, void *ctx, void *const *workers,
                              size_t nworkers, void *const *batches, size_t nslots);

/* The batch the consumer takes next, waiting until it is parsed; the same batch until
 * og_batch_ring_release. */
void *og_batch_ring_take(og_batch_ring *r);
/* The batch taken and not released, or NULL. */
void *og_batch_ring_held(const og_batch_ring *r);
/* The consumer is done with the batch it holds: its slot may be refilled. */
void og_batch_ring_release(og_batch_ring *r);

/* Stops and joins the workers and frees the ring (not the batches); NULL is a no-op. */
void og_batch_ring_free(og_batch_ring *r);

#endif
