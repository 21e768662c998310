/*
 * budget.h — per-query time and memory budgets (docs/maintenance.md "Query budgets").
 *
 * A budget is begun on the thread that runs a query (the API does it around every read) and
 * ended after it; the executor's loops call og_budget_check() at points where a runaway query
 * spends its time (expansion, sorting, materialising columns) and og_budget_charge() where it
 * grows intermediate results.  A tripped budget makes those calls return OG_ERR_LIMIT with a
 * message naming the budget ("time budget of 2000 ms exceeded", "memory budget of …"); the
 * executor then unwinds through its normal error paths, freeing what it held, so the handle
 * stays usable.  With no budget begun every call is a no-op returning OG_OK.
 *
 * Memory counts the query's own intermediate results (bindings, computed columns, sort
 * buffers) — not the table data it maps or caches, which belongs to the snapshot.
 */
#ifndef OG_UTIL_BUDGET_H
#define OG_UTIL_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"

typedef struct og_query_budget {
    int64_t deadline_ms;  /* monotonic ms; 0 = no time limit */
    int64_t time_ms;      /* the limit as given (for the message) */
    uint64_t max_bytes;   /* 0 = no memory limit */
    uint64_t used;        /* bytes charged and not released */
    uint64_t tracked;     /* bytes last reported by og_budget_track (counted on top of used) */
    uint64_t peak;
    unsigned tick;
    int tripped;          /* 0; 1 = time, 2 = memory, 3 = cancelled (every later call fails the same way) */
    const char *what;     /* "query" (og_budget_begin), "mutation", "load": names it in messages */
    const char *raise_time, *raise_memory; /* how to raise each budget, for the messages */
    const volatile int *cancel; /* when set and nonzero, every check fails (og_budget_set_cancel) */
    struct og_query_budget *outer;
} og_query_budget;

/* time_ms / max_bytes: <= 0 = unlimited.  A query's budget. */
void og_budget_begin(og_query_budget *b, int64_t time_ms, int64_t max_bytes);
/* The same for a write: `what` ("mutation", "load") and how to raise each budget (e.g.
 * "--timeout, og_budget.time_ms or $OG_WRITE_TIMEOUT_MS") name it in the messages. */
void og_budget_begin_write(og_query_budget *b, int64_t time_ms, int64_t max_bytes, const char *what,
                           const char *raise_time, const char *raise_memory);
void og_budget_end(og_query_budget *b);
/* Makes the running budget `b` also stop once *flag becomes nonzero (a person pressed Ctrl-C
 * in `omnigraph shell`): checks then fail with OG_ERR_LIMIT "<what> cancelled".  The flag is
 * only read, so a signal handler may set it.  NULL = not cancellable (the default). */
void og_budget_set_cancel(og_query_budget *b, const volatile int *flag);

/* OG_ERR_LIMIT once the time budget is spent (reads the clock every 64th call). */
og_status og_budget_check(void);
/* Adds bytes to the running query's use; OG_ERR_LIMIT over the memory budget (the bytes are
 * counted anyway, so a later release balances). */
og_status og_budget_charge(uint64_t bytes);
void og_budget_release(uint64_t bytes);
/* Reports that the running write holds `bytes` (a write measures what its plan holds instead
 * of charging each allocation; counted on top of the charged bytes, replacing the previous
 * report) and checks both budgets; OG_ERR_LIMIT when either is spent. */
og_status og_budget_track(uint64_t bytes);

#endif
