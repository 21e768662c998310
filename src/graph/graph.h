/*
 * graph.h — the graph authority (STORAGE.md §3–§7): the format stamp, immutable schema and
 * commit objects, append-only branch logs, snapshots, and the ONE write protocol through
 * which every graph change becomes visible.
 *
 * Layout under the store root:
 *   _graph/format.json                               {"format":"omnigraph","storage_version":1}
 *   _graph/schemas/<sha256 hex>.json                 schema bytes as given (immutable)
 *   _graph/commits/<ULID>.json                       commit objects (immutable)
 *   _graph/refs/<enc branch>/<20-digit inverted seq>.json   branch log entries (immutable)
 *   _graph/hints/<enc branch>.json                   best-effort "last known seq" (never authority)
 *
 * The only publication door is og_store_put_if_absent of a branch's next log entry, done by
 * og_graph_write (and by branch create/delete, which only append log entries).  Everything
 * else written here is immutable and uniquely named, so a crash anywhere leaves either the
 * old or the new state plus unreachable garbage: there is no recovery code (docs/graph-authority.md).
 *
 * A graph handle may be used from several threads; all of its operations share one cache of
 * immutable objects (og_graph_cache) with a byte bound.  Errors are typed og_status codes;
 * og_error_message() names the branch, commit id or store key involved:
 *   OG_ERR_NOT_FOUND, OG_ERR_ALREADY_EXISTS, OG_ERR_CONFLICT, OG_ERR_PRECONDITION_FAILED,
 *   OG_ERR_CORRUPT, OG_ERR_UNSUPPORTED_VERSION, OG_ERR_INVALID, OG_ERR_IO (and the store's
 *   OG_ERR_AUTH / OG_ERR_THROTTLED), OG_ERR_NOMEM.
 */
#ifndef OG_GRAPH_H
#define OG_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "store/store.h"
#include "table/table.h"
#include "util/cache.h"
#include "util/id.h"
#include "util/sha256.h"

#define OG_STORAGE_VERSION 1
#define OG_BRANCH_MAX 200        /* bytes of a branch name */
#define OG_BRANCH_ENC_MAX 240    /* bytes of its percent-encoded form (one path segment) */
#define OG_ACTOR_MAX 256         /* bytes of an actor name */
#define OG_BRANCH_MESSAGE_MAX 1024 /* bytes of a branch's message (its create entry's "message") */
#define OG_SCHEMA_ID_LEN OG_SHA256_HEX_LEN
#define OG_GRAPH_MAX_PARENTS 2
/* A lost publish is retried until it wins or OG_GRAPH_RETRY_MS passed (and at least
 * OG_GRAPH_MIN_ATTEMPTS attempts were made): contention is not the caller's error. */
#define OG_GRAPH_MIN_ATTEMPTS 8
#define OG_GRAPH_RETRY_MS (60LL * 1000)
#define OG_GRAPH_DEFAULT_CACHE_BYTES ((size_t)64 << 20)

typedef struct og_graph og_graph;
typedef struct og_snapshot og_snapshot;
typedef struct og_commit_draft og_commit_draft;

/* ---- objects ---------------------------------------------------------------------------- */

typedef enum og_op_kind {
    OG_OP_NONE = 0, /* unset (a draft whose callback never chose a kind is refused) */
    OG_OP_INIT,
    OG_OP_LOAD,
    OG_OP_MUTATE,
    OG_OP_MERGE,
    OG_OP_SCHEMA_APPLY,
    OG_OP_OPTIMIZE,
    OG_OP_REVERT
} og_op_kind;

/* "init", "load", ... ; NULL for an unknown kind. */
const char *og_op_kind_name(og_op_kind k);

/* One table of a commit: the Lance table version it names. */
typedef struct og_table_ref {
    char *dir;        /* table directory under tables/ */
    uint64_t version; /* Lance table version */
    uint64_t rows;    /* live rows at that version */
} og_table_ref;

typedef struct og_stat {
    char *name;
    int64_t value;
} og_stat;

/* A decoded commit object.  Immutable; owned by the cache (or by og_commit_free for one made
 * with og_commit_decode). */
typedef struct og_commit {
    char id[OG_ULID_LEN + 1];
    char parents[OG_GRAPH_MAX_PARENTS][OG_ULID_LEN + 1];
    size_t nparents;                       /* 0 only for the genesis commit */
    char schema[OG_SCHEMA_ID_LEN + 1];
    og_table_ref *tables;                  /* sorted by dir, unique */
    size_t ntables;
    og_op_kind kind;
    char *mode;                            /* NULL when absent */
    og_stat *stats;                        /* in stored order */
    size_t nstats;
    char *actor;
    /* How the actor was established (docs/versioning.md "Who wrote a commit"): "token" (a
     * server matched a bearer token), "local" (named by a local caller, e.g. `--as`: not
     * verified), "cluster" (the cluster operator's `omnigraph cluster` commands),
     * "unauthenticated" (a server without tokens); "" = not recorded (commits written before
     * provenance was). */
    char actor_via[16];
    char *message;                         /* NULL when null */
    char created_at[25];                   /* RFC 3339 UTC, milliseconds */
} og_commit;

/* The table entry for `dir`, or NULL. */
const og_table_ref *og_commit_table(const og_commit *c, const char *dir);

/* Encodes a commit as its JSON object bytes (appended to out). */
og_status og_commit_encode(const og_commit *c, og_buf *out);
/* Strict decode: every field present with its type, ids well formed, kind known; anything
 * else is OG_ERR_CORRUPT naming `what` (the object key).  Free with og_commit_free. */
og_status og_commit_decode(const void *data, size_t len, const char *what, og_commit **out);
void og_commit_free(og_commit *c);

typedef enum og_ref_kind { OG_REF_CREATE = 1, OG_REF_ADVANCE, OG_REF_DELETE } og_ref_kind;

/* A branch log entry.  create: commit = the starting commit, previous = "".  advance:
 * commit = new head, previous = old head.  delete: commit = "", previous = the head it
 * ended.  A create mints a new incarnation; advance and delete carry the entry before's.
 * message: what its creator said the branch is for (create entries only; "" = none, and the
 * entry then has no "message" key, so entries without one are written as before). */
typedef struct og_ref_entry {
    uint64_t seq; /* 1 for the first entry a branch name ever had; dense afterwards */
    char branch[OG_BRANCH_MAX + 1];
    char incarnation[OG_ULID_LEN + 1];
    og_ref_kind kind;
    char commit[OG_ULID_LEN + 1];
    char previous[OG_ULID_LEN + 1];
    char actor[OG_ACTOR_MAX + 1];
    char at[25];
    char message[OG_BRANCH_MESSAGE_MAX + 1];
} og_ref_entry;

og_status og_ref_entry_encode(const og_ref_entry *e, og_buf *out);
og_status og_ref_entry_decode(const void *data, size_t len, const char *what, og_ref_entry *out);

/* ---- names and keys --------------------------------------------------------------------- */

/* Branch-name rules (OG_ERR_INVALID with a message saying which rule): non-empty; at most
 * OG_BRANCH_MAX bytes and OG_BRANCH_ENC_MAX once percent-encoded; valid UTF-8; no control
 * characters (< 0x20, 0x7f); none of space ~ ^ : ? * [ \ ; no "..", no "@{"; no leading or
 * trailing "/", no "//"; no path component starting with "." and no trailing "." or ".lock";
 * not starting with "-"; reserved: names starting with "_" (system) or "refs/", and "HEAD". */
og_status og_branch_name_check(const char *name);
/* The stricter rules of a *new* branch name (docs/graph-authority.md "Branch names"): every rule of
 * og_branch_name_check, plus NFC, no invisible/format characters, no mixed scripts
 * (util/ident.h), not confusable with `main` (`Main`, `mаin`, `ｍａｉｎ`), and not shaped like a
 * commit id or an id prefix (4-26 commit-id characters starting with a digit 0-7), which a
 * reference could then resolve to the branch instead of the commit.  Names created before
 * these rules still open, write and delete: only creation is refused. */
og_status og_branch_name_check_new(const char *name);
/* 1 for the provenance values a commit may record (og_commit.actor_via): "token", "local",
 * "cluster", "unauthenticated". */
int og_actor_via_valid(const char *via);

/* Percent-encoding of a branch name for its log directory: bytes outside [A-Za-z0-9._-]
 * become %XX (upper-case hex).  out must hold 3*strlen(name)+1 bytes.  Decode reverses it
 * (OG_ERR_INVALID on a malformed or non-canonical encoding). */
void og_branch_encode(const char *name, char *out);
og_status og_branch_decode(const char *enc, char *out, size_t cap);

/* Store key of a branch's log entry with sequence number `seq` (inverted, 20 digits). */
og_status og_ref_key(const char *branch, uint64_t seq, char *out, size_t cap);
/* Store key of a commit object / schema object. */
void og_commit_key(const char *commit_id, char out[64]);
void og_schema_key(const char *schema_id, char out[128]);

/* ---- handles ---------------------------------------------------------------------------- */

typedef struct og_graph_opts {
    size_t cache_bytes;     /* bound of the handle's object cache; 0 = OG_GRAPH_DEFAULT_CACHE_BYTES */
    int max_attempts;       /* publish attempts per write; 0 = no count: retry_ms bounds them */
    int64_t retry_ms;       /* keep retrying a lost publish this long; 0 = OG_GRAPH_RETRY_MS */
    unsigned backoff_base_ms; /* first retry waits up to this (jittered); 0 = 2 */
    unsigned backoff_max_ms;  /* back-off cap; 0 = 200 */
    int use_hint;           /* -1 = never read or write head hints (tests/bench); 0/1 = use them */
    int64_t max_plan_ms;    /* re-capture instead of publishing a plan older than this; 0 = OG_GRAPH_MAX_PLAN_MS */
    /* Test-only: called right after each fault point of the write protocol passes
     * ("graph.after_effects", "graph.after_commit_object", "graph.before_publish" — the
     * write's turn already handed to the next writer of the branch, docs/graph-authority.md
     * §2 — and "graph.after_publish"), so a crash
     * test can arm a store fault point for the next step only. */
    void (*step_hook)(const char *point, void *arg);
    void *step_hook_arg;
} og_graph_opts;

typedef struct og_graph_init_opts {
    const void *schema;     /* the accepted schema's canonical JSON bytes (required) */
    size_t schema_len;
    const og_table_ref *tables; /* table versions of the genesis commit (already written) */
    size_t ntables;
    const char *actor;      /* NULL = "omnigraph" */
    const char *message;    /* may be NULL */
} og_graph_init_opts;

/* Creates a graph in `st`: the format stamp (put_if_absent; an identical existing stamp left
 * by an interrupted init is accepted), the schema object, the genesis commit (kind init) and
 * branch main's create entry, which is the publish.  `st` is borrowed and must outlive the
 * handle.  Errors: OG_ERR_ALREADY_EXISTS (the graph is initialised: main has a log),
 * OG_ERR_UNSUPPORTED_VERSION / OG_ERR_CORRUPT (a foreign stamp is there), OG_ERR_INVALID. */
og_status og_graph_init(og_graph **out, og_store *st, const og_graph_init_opts *init, const og_graph_opts *opts);

/* Opens an existing graph: checks the format stamp (missing → OG_ERR_NOT_FOUND; unknown or
 * newer storage_version → OG_ERR_UNSUPPORTED_VERSION; unreadable → OG_ERR_CORRUPT) and that
 * branch main has a log (an interrupted init → OG_ERR_NOT_FOUND saying to run init again). */
og_status og_graph_open(og_graph **out, og_store *st, const og_graph_opts *opts);
void og_graph_close(og_graph *g);

og_store *og_graph_store(og_graph *g);
/* The handle's shared cache of immutable objects (layers above use their own key prefixes). */
og_cache *og_graph_cache(og_graph *g);

/* ---- schema and commit objects ---------------------------------------------------------- */

/* Stores schema bytes (must be a JSON document) as _graph/schemas/<sha256>.json with
 * put_if_absent; an existing identical object is fine.  id_out receives the hex id.
 * Errors: OG_ERR_INVALID (not JSON), OG_ERR_CORRUPT (a different object under that id). */
og_status og_graph_schema_put(og_graph *g, const void *bytes, size_t len, char id_out[OG_SCHEMA_ID_LEN + 1]);
/* The schema bytes of `id` (checked against their hash once, then cached).  *hold keeps them
 * alive: release with og_cache_entry_release.  Errors: OG_ERR_NOT_FOUND, OG_ERR_CORRUPT. */
og_status og_graph_schema_get(og_graph *g, const char *id, const og_bytes **out, og_cache_entry **hold);

/* The commit `id` (cached).  *hold keeps it alive: release with og_cache_entry_release.
 * Errors: OG_ERR_NOT_FOUND (never existed, or reclaimed by cleanup), OG_ERR_CORRUPT,
 * OG_ERR_INVALID (not a ULID). */
og_status og_graph_commit_get(og_graph *g, const char *id, const og_commit **out, og_cache_entry **hold);

/* ---- branch logs ------------------------------------------------------------------------ */

/* The newest log entry of `branch` (which may be a delete).  Probes from the in-memory or
 * stored hint with get (seq+1, +2, +4, … then bisection); when the hint is missing, stale or
 * corrupt it falls back to one sorted list with limit 1.  Cost does not grow with history.
 * Errors: OG_ERR_NOT_FOUND (the name never had a log), OG_ERR_INVALID (bad name). */
og_status og_graph_head_entry(og_graph *g, const char *branch, og_ref_entry *out);

/* Counters of head lookups on this handle (tests and the bench check the hint is used). */
typedef struct og_head_stats {
    uint64_t lookups, hint_hits, list_fallbacks, probes;
    uint64_t cache_hits; /* lookups answered by the kept head (cache_heads) */
} og_head_stats;
void og_graph_head_stats(og_graph *g, og_head_stats *out);

/* on = 1: keep each branch's head between lookups while the store's change watch says its log
 * did not change (og_store_watch: local stores on a local file system; elsewhere, and when
 * the watch cannot be had, every lookup probes as with 0, the default).  For long-lived
 * handles (the server): a warm lookup costs no store call, and a write by any process on
 * this machine is seen by the next lookup that starts after the write completed. */
void og_graph_keep_heads(og_graph *g, int on);

/* ---- snapshots -------------------------------------------------------------------------- */

/* One immutable view for a whole read: branch head entry → commit → schema + table versions.
 * Errors: OG_ERR_NOT_FOUND (no such branch, or it was deleted; a missing commit or schema). */
og_status og_graph_snapshot_branch(og_graph *g, const char *branch, og_snapshot **out);
/* A snapshot of any retained commit (time travel); branch/seq/incarnation are empty. */
og_status og_graph_snapshot_commit(og_graph *g, const char *commit_id, og_snapshot **out);
/* Snapshots are independent of the handle's lifetime. */
void og_snapshot_free(og_snapshot *s);

const og_commit *og_snapshot_commit(const og_snapshot *s);
const char *og_snapshot_commit_id(const og_snapshot *s);
const char *og_snapshot_schema_id(const og_snapshot *s);
const og_bytes *og_snapshot_schema(const og_snapshot *s);
/* The table entry for dir, or NULL. */
const og_table_ref *og_snapshot_table(const og_snapshot *s, const char *dir);
/* The branch head entry the snapshot was resolved from; NULL for a commit snapshot. */
const og_ref_entry *og_snapshot_head(const og_snapshot *s);

/* ---- the write protocol (STORAGE.md §5) --------------------------------------------------- */

/* The content of the commit being built.  It starts as a copy of the base snapshot (tables,
 * schema; first parent = the base head) so a writer only states what it changes. */
og_status og_draft_set_table(og_commit_draft *d, const char *dir, uint64_t version, uint64_t rows);
og_status og_draft_remove_table(og_commit_draft *d, const char *dir);
/* A schema id that the callback has stored with og_graph_schema_put. */
og_status og_draft_set_schema(og_commit_draft *d, const char *schema_id);
og_status og_draft_set_operation(og_commit_draft *d, og_op_kind kind, const char *mode);
og_status og_draft_set_stat(og_commit_draft *d, const char *name, int64_t value);
/* A second parent (a merge's source head). */
og_status og_draft_add_parent(og_commit_draft *d, const char *commit_id);
/* The deferred form of og_table_txn_commit + og_draft_set_table: hands a table txn with its
 * staged changes to the protocol, which commits it after the callback returns — its data and
 * deletion files in the same round as the commit object, then its manifest — and names the
 * version it got, with `rows` live rows, in the commit (docs/storage.md "Requests per
 * operation").  The draft owns x from here, also on error. */
og_status og_draft_stage_table(og_commit_draft *d, const char *dir, og_table_txn *x, uint64_t rows);
/* Nothing to publish (e.g. a zero-row mutation): og_graph_write returns OG_OK, published 0. */
void og_draft_set_noop(og_commit_draft *d);

/* The writer's plan/validate/write-effects step.  Called with the captured base snapshot and
 * a fresh draft, once per attempt: after a lost publish the protocol re-captures and calls it
 * again from scratch, so it must not carry state from an earlier attempt into the plan.  It
 * writes only immutable, uniquely named effects (table versions) and fills the draft.  A
 * non-OK return aborts the write with that status (never retried). */
typedef og_status (*og_write_fn)(void *ctx, og_graph *g, const og_snapshot *base, og_commit_draft *draft,
                                 int attempt);

typedef struct og_write_opts {
    const char *branch;               /* required */
    const char *actor;                /* NULL = "omnigraph" */
    const char *actor_via;            /* og_commit.actor_via; NULL = not recorded */
    const char *message;              /* may be NULL */
    const char *expected_head;        /* commit id the head must be, or NULL */
    const char *expected_incarnation; /* incarnation the branch must have, or NULL */
    int max_attempts;                 /* > 0: at most this many attempts; 0 = the handle's bound */
    /* The branch's head as the caller looked it up just before (a merge reads it beside the
     * source's head), used by the first attempt instead of a lookup of its own; NULL = look it
     * up.  A stale one costs nothing but a lost publish: the next attempt looks it up. */
    const og_ref_entry *first_head;
} og_write_opts;

/* Default longest a write may spend between its capture and its publish before it
 * re-captures (cleanup's grace period, one hour, must exceed it; docs/graph-authority.md). */
#define OG_GRAPH_MAX_PLAN_MS (30LL * 60 * 1000)

typedef struct og_write_result {
    int published;                    /* 0 when the draft was a no-op */
    char commit[OG_ULID_LEN + 1];     /* the new head commit */
    uint64_t seq;                     /* its log entry's seq */
    int attempts;                     /* 1 = no lost publish */
} og_write_result;

/* capture → fn → commit object → publish (put_if_absent of entry seq+1) → on a lost publish
 * re-capture and re-run fn with jittered exponential back-off, until it wins or the retry
 * bound (max_attempts when set, else retry_ms and at least OG_GRAPH_MIN_ATTEMPTS) is spent.
 * On a store that can lock (og_store_lock: a local disk) the write holds the branch's
 * cross-process publish lock from its first capture to its end, so writers of one branch in
 * different processes queue instead of losing publishes to each other.
 * Fault points: graph.after_effects, graph.after_commit_object, graph.after_publish.
 * Errors: OG_ERR_PRECONDITION_FAILED (expected head/incarnation did not hold; never retried),
 * OG_ERR_CONFLICT (every attempt lost its publish), OG_ERR_NOT_FOUND (branch missing or
 * deleted), whatever fn returned, store errors.  `out` may be NULL. */
og_status og_graph_write(og_graph *g, const og_write_opts *opts, og_write_fn fn, void *ctx, og_write_result *out);

/* ---- branch control (STORAGE.md §7) ------------------------------------------------------- */

/* Creates `name` from the head of branch `from_branch` or from commit `from_commit` (exactly
 * one non-NULL): one create entry, new incarnation, no data copied.  A name whose newest
 * entry is a delete is re-created as a new incarnation.  Errors: OG_ERR_ALREADY_EXISTS,
 * OG_ERR_NOT_FOUND (source), OG_ERR_INVALID (name rules).  out may be NULL. */
og_status og_branch_create(og_graph *g, const char *name, const char *from_branch, const char *from_commit,
                           const char *actor, og_ref_entry *out);
/* og_branch_create recording `message` (may be NULL or "": none) in the create entry, where
 * every reader of the log finds it (og_branch_origin).  OG_ERR_INVALID, nothing written, for a
 * message longer than OG_BRANCH_MESSAGE_MAX bytes, not UTF-8, or holding control characters
 * other than newline and tab. */
og_status og_branch_create_msg(og_graph *g, const char *name, const char *from_branch, const char *from_commit,
                               const char *actor, const char *message, og_ref_entry *out);
/* Appends a delete entry.  Errors: OG_ERR_INVALID (main), OG_ERR_NOT_FOUND. */
og_status og_branch_delete(og_graph *g, const char *name, const char *actor);
/* The same, only while the branch head is commit `expected_head` (NULL = any): a head that
 * moved gives OG_ERR_PRECONDITION_FAILED and deletes nothing (checked against the entry the
 * delete is published after, so a write racing the delete cannot slip in unseen). */
og_status og_branch_delete_if(og_graph *g, const char *name, const char *actor, const char *expected_head);

typedef struct og_branch_list {
    og_ref_entry *items; /* sorted by name (bytewise on the encoded form) */
    size_t count;
} og_branch_list;
/* Branches whose newest entry is not a delete. */
og_status og_branch_list_all(og_graph *g, og_branch_list *out);
void og_branch_list_free(og_branch_list *l);

/* ---- maintenance (gc.c): what `cleanup` needs (src/engine/cleanup.c) ------------------- */

/* The time part of a ULID, ms since the epoch (0 when it is not a ULID). */
int64_t og_ulid_time_ms(const char *id);

/* One branch name's whole log, ascending by seq (deleted names included). */
typedef struct og_graph_log {
    char branch[OG_BRANCH_MAX + 1];
    og_ref_entry *entries;
    size_t n;
} og_graph_log;
/* Every branch log in the store (one list of _graph/refs/, one get per entry; cost follows
 * history: maintenance only).  Foreign keys are ignored; a corrupt entry is OG_ERR_CORRUPT. */
og_status og_graph_logs_all(og_graph *g, og_graph_log **out, size_t *n);
void og_graph_logs_free(og_graph_log *l, size_t n);

typedef struct og_commit_id_list {
    char (*ids)[OG_ULID_LEN + 1]; /* sorted (ULID order = creation order) */
    size_t n;
} og_commit_id_list;
/* Every commit object in the store (a list of _graph/commits/). */
og_status og_graph_commit_ids_all(og_graph *g, og_commit_id_list *out);
void og_commit_id_list_free(og_commit_id_list *l);

/* Delete one log entry / one commit object and evict it from the handle's cache.  With
 * dry = 1 nothing is deleted (the size is still read).  *deleted = 0 (no error) when the
 * object is already gone; *bytes (may be NULL) grows by its size.  The callers' ordering
 * rules (docs/graph-authority.md §4, docs/maintenance.md) are what make this safe. */
og_status og_graph_gc_delete_entry(og_graph *g, const char *branch, uint64_t seq, int dry, uint64_t *bytes,
                                   int *deleted);
og_status og_graph_gc_delete_commit(og_graph *g, const char *id, int dry, uint64_t *bytes, int *deleted);

#endif
