/*
 * budget.c — the thread's running query budget (budget.h).  Thread-local because a query runs
 * on one thread and its checks sit deep in loops that have no context pointer to carry it.
 */
#include "util/budget.h"

#include <time.h>

#include "util/error.h"

static _Thread_local og_query_budget *cur;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void og_budget_begin(og_query_budget *b, int64_t time_ms, int64_t max_bytes)
{
    b->time_ms = time_ms > 0 ? time_ms : 0;
    b->deadline_ms = time_ms > 0 ? mono_ms() + time_ms : 0;
    b->max_bytes = max_bytes > 0 ? (uint64_t)max_bytes : 0;
    b->used = b->peak = b->tracked = 0;
    b->tick = 0;
    b->tripped = 0;
    b->what = "query";
    b->raise_time = "--timeout, og_budget.time_ms or $OG_QUERY_TIMEOUT_MS";
    b->raise_memory = "--max-memory, og_budget.memory_bytes or $OG_QUERY_MAX_MEMORY";
    b->cancel = NULL;
    b->outer = cur;
    cur = b;
}

void og_budget_begin_write(og_query_budget *b, int64_t time_ms, int64_t max_bytes, const char *what,
                           const char *raise_time, const char *raise_memory)
{
    og_budget_begin(b, time_ms, max_bytes);
    b->what = what;
    b->raise_time = raise_time;
    b->raise_memory = raise_memory;
}

void og_budget_end(og_query_budget *b)
{
    if (cur == b) cur = b->outer;
}

static og_status trip_time(og_query_budget *b);
static og_status trip_memory(og_query_budget *b);

void og_budget_set_cancel(og_query_budget *b, const volatile int *flag) { b->cancel = flag; }

static og_status trip_cancel(og_query_budget *b)
{
    b->tripped = 3;
    return og_err(OG_ERR_LIMIT, "%s cancelled", b->what);
}

/* The state a tripped budget keeps failing with. */
static og_status trip_again(og_query_budget *b)
{
    return b->tripped == 1 ? trip_time(b) : b->tripped == 2 ? trip_memory(b) : trip_cancel(b);
}

static og_status trip_time(og_query_budget *b)
{
    b->tripped = 1;
    return og_err(OG_ERR_LIMIT, "%s stopped: time budget of %lld ms exceeded (raise it with %s)", b->what,
                  (long long)b->time_ms, b->raise_time);
}

static og_status trip_memory(og_query_budget *b)
{
    b->tripped = 2;
    return og_err(OG_ERR_LIMIT,
                  "%s stopped: memory budget of %llu bytes exceeded by its intermediate results (raise it with %s)",
                  b->what, (unsigned long long)b->max_bytes, b->raise_memory);
}

og_status og_budget_check(void)
{
    og_query_budget *b = cur;
    if (!b) return OG_OK;
    if (b->tripped) return trip_again(b); /* stays tripped */
    if (b->cancel && *b->cancel) return trip_cancel(b);
    if (!b->deadline_ms || (b->tick++ & 63)) return OG_OK;
    return mono_ms() >= b->deadline_ms ? trip_time(b) : OG_OK;
}

og_status og_budget_charge(uint64_t bytes)
{
    og_query_budget *b = cur;
    if (!b) return OG_OK;
    b->used += bytes;
    if (b->used + b->tracked > b->peak) b->peak = b->used + b->tracked;
    if (b->cancel && *b->cancel) return trip_cancel(b);
    if (b->max_bytes && b->used + b->tracked > b->max_bytes) return trip_memory(b);
    if (b->deadline_ms && mono_ms() >= b->deadline_ms) return trip_time(b);
    return OG_OK;
}

void og_budget_release(uint64_t bytes)
{
    og_query_budget *b = cur;
    if (!b) return;
    b->used = bytes > b->used ? 0 : b->used - bytes;
}

og_status og_budget_track(uint64_t bytes)
{
    og_query_budget *b = cur;
    if (!b) return OG_OK;
    if (b->tripped) return trip_again(b);
    if (b->cancel && *b->cancel) return trip_cancel(b);
    b->tracked = bytes;
    if (b->used + b->tracked > b->peak) b->peak = b->used + b->tracked;
    if (b->max_bytes && b->used + b->tracked > b->max_bytes) return trip_memory(b);
    if (b->deadline_ms && mono_ms() >= b->deadline_ms) return trip_time(b);
    return OG_OK;
}
