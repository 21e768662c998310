/*
 * store_count.h — the counting store adapter: wraps any open store (local or S3) in place and
 * counts the requests that go through it by kind, together with the length of their
 * sequential critical path.  Tests use it to assert the request budget of each logical
 * operation (docs/storage.md "Requests per operation"); it can also inject a fixed latency
 * per request, so that what a remote store would make slow is visible on a local disk.
 *
 * Kinds: a whole GET (og_store_get and og_store_map), a ranged GET, HEAD (head and stat), PUT,
 * put-if-absent, LIST (one call, whatever the number of pages the adapter needs), DELETE.
 * The change watch (og_store_watch, og_store_change_count) is a local kernel facility, not a
 * request, and is not counted.
 *
 * Rounds (the critical path).  Every request gets a depth when it starts:
 *     depth = 1 + the largest depth of the requests that had COMPLETED before it started
 * (0 when none had), and `rounds` is the largest depth of any completed request.  A request
 * that starts after another completed may depend on its answer; one that overlaps it cannot.
 * So for a single-threaded caller that issues its requests one after another, rounds equals
 * the request count; requests issued concurrently (og_store_put_many, or threads) and
 * overlapping in time share a depth.  rounds is thus the longest chain of requests that each
 * began after the previous one ended — exactly the number of round trips a caller would wait
 * for in sequence if every request took the same time.  Because overlap is a matter of
 * timing, concurrent requests are only certain to overlap when each lasts long enough for
 * all of them to have started: og_store_count_install's latency_ms makes every request sleep
 * that long after it starts (tests that assert rounds set a few milliseconds).
 */
#ifndef OG_STORE_COUNT_H
#define OG_STORE_COUNT_H

#include <stdint.h>

#include "store/store.h"

typedef enum og_store_req {
    OG_STORE_REQ_GET = 0,
    OG_STORE_REQ_GET_RANGE,
    OG_STORE_REQ_HEAD,
    OG_STORE_REQ_PUT,
    OG_STORE_REQ_PUT_IF_ABSENT,
    OG_STORE_REQ_LIST,
    OG_STORE_REQ_DELETE,
    OG_STORE_REQ_KINDS
} og_store_req;

typedef struct og_store_counts {
    uint64_t n[OG_STORE_REQ_KINDS]; /* requests of each kind since install or reset */
    uint64_t total;                 /* their sum */
    uint64_t rounds;                /* the sequential critical path (above) */
} og_store_counts;

/* Wraps `st` in place: every later request through the handle (from any layer that holds it)
 * is counted, and sleeps latency_ms (0 = none) after it starts.  remote = 1 makes the handle
 * say it is not local (og_store_is_local), so the layers above read it as they read S3 —
 * ranged reads through their caches instead of memory maps — and a local directory counts
 * the requests an S3 store would get.  Call it while no request is in flight (right after
 * opening, in a test).  Installing twice only sets the latency and the remote flag.
 * OG_ERR_NOMEM. */
og_status og_store_count_install(og_store *st, uint32_t latency_ms, int remote);
/* From now on (on = 1) every store og_store_open opens in this process counts from its first
 * request, as og_store_count_install(st, latency_ms, remote) would make it; on = 0 stops that
 * for later opens.  For tests that count what opening a graph costs (the handle opens its own
 * store).  Not thread-safe against concurrent opens: set it before. */
void og_store_count_on_open(int on, uint32_t latency_ms, int remote);
/* Whole processes (a benchmark's omnigraph-server): OG_STORE_COUNT="<latency ms>[,remote]"
 * in the environment makes every store the process opens count as og_store_count_install
 * would (without the request log), and OG_STORE_COUNT_OUT=<file> receives one line per
 * store when it closes: "<uri> total=N GET=N GET_RANGE=N HEAD=N PUT=N PUT_IF_ABSENT=N LIST=N
 * DELETE=N rounds=N". */
/* An outage, for fault tests: with OG_STORE_DOWN_FILE=<path> in the environment when a
 * store starts counting, every request through it fails with OG_ERR_UNAVAILABLE while <path>
 * exists (as a request to a stopped S3 store fails once its retries run out) without reaching
 * the store; a request the outage catches in flight (the file appeared while it ran) took
 * effect — a write stands — but answers OG_ERR_UNAVAILABLE, as a lost answer would.  Remove
 * the file and the store is back.  tests/server/test_server_store_outage.c stops and
 * restarts the store of a running omnigraph-server this way. */
/* Zeroes the counts, the rounds and the log.  Call it while no request is in flight. */
void og_store_count_reset(og_store *st);
/* The counts since install or the last reset; all zero when st does not count. */
void og_store_count_get(og_store *st, og_store_counts *out);
/* The requests since install or the last reset, one line each in start order:
 * "<depth> <KIND> <key>"; malloc'd (the caller frees it), NULL when st does not count. */
char *og_store_count_log(og_store *st);
/* The name of a kind: "GET", "GET_RANGE", "HEAD", "PUT", "PUT_IF_ABSENT", "LIST", "DELETE". */
const char *og_store_req_name(og_store_req kind);

#endif
