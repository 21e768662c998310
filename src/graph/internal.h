/*
 * internal.h — shared private structures of the graph layer (not a contract: only
 * src/graph/ sources include it).
 */
#ifndef OG_GRAPH_INTERNAL_H
#define OG_GRAPH_INTERNAL_H

#include <pthread.h>

#include "graph/graph.h"

#define OG_KEY_MAX 1024

/* In-memory head hints: last seq seen per branch (bounded, plain array; mutable state that is
 * only ever a hint, INVARIANTS.md 15). */
#define OG_MEM_HINTS 64
typedef struct og_mem_hint {
    char branch[OG_BRANCH_MAX + 1];
    uint64_t seq;
    uint64_t stamp;
} og_mem_hint;

/* A kept branch head (og_graph_keep_heads): valid while the store's change count is
 * still `count`, the value read after the branch's log directory was watched and before the
 * probe that found `e`. */
#define OG_HEAD_SLOTS 16
typedef struct og_head_slot {
    char branch[OG_BRANCH_MAX + 1];
    og_ref_entry e;
    uint64_t count; /* 0 = empty */
} og_head_slot;

/* A branch this handle lost a publish on lately (txn.c): its writes take the branch's
 * cross-process publish lock from their first attempt until `until` (ms). */
#define OG_CONTENDED_SLOTS 16
typedef struct og_contended {
    char branch[OG_BRANCH_MAX + 1];
    int64_t until; /* 0 = empty */
} og_contended;

/* The in-process write pipeline of one branch (txn.c, docs/graph-authority.md §2
 * "Writers of one branch in one process"); defined there. */
struct og_pipe;

struct og_graph {
    og_store *store;
    og_cache *cache;
    int max_attempts; /* 0 = bounded by retry_ms */
    int64_t retry_ms;
    unsigned backoff_base_ms, backoff_max_ms;
    int use_hint;
    int64_t max_plan_ms;
    pthread_mutex_t lock; /* guards hints and stats */
    og_mem_hint hints[OG_MEM_HINTS];
    og_contended contended[OG_CONTENDED_SLOTS]; /* under lock */
    uint64_t hint_clock;
    og_head_stats head_stats;
    int cache_heads; /* 1 = keep heads (og_head_slot); 0 = off, or the store cannot watch */
    og_head_slot heads[OG_HEAD_SLOTS];
    void (*step_hook)(const char *point, void *arg);
    void *step_hook_arg;
    struct og_pipe *pipes; /* the branches being written in this process; under lock */
};

struct og_snapshot {
    og_ref_entry head; /* valid when has_head */
    int has_head;
    const og_commit *commit;
    og_cache_entry *commit_hold;
    const og_bytes *schema;
    og_cache_entry *schema_hold;
};

/* A table txn the protocol commits after the callback (og_draft_stage_table). */
typedef struct og_staged_table {
    char *dir;
    og_table_txn *x;
    uint64_t rows;
    uint64_t version; /* the number its manifest was encoded at */
} og_staged_table;

struct og_commit_draft {
    og_commit c; /* id, created_at, actor, message filled by the protocol */
    size_t tables_cap, stats_cap;
    int noop;
    og_staged_table *staged;
    size_t nstaged;
};

/* refs.c */
uint64_t og_graph_hint_get_mem(og_graph *g, const char *branch);
void og_graph_hint_note(og_graph *g, const char *branch, uint64_t seq);
/* Publishes entry e (put_if_absent of its key); then refreshes the hints (best effort).
 * OG_ERR_ALREADY_EXISTS = lost.  An indeterminate store error is resolved by reading back. */
og_status og_graph_publish_entry(og_graph *g, const og_ref_entry *e);
/* Head entry or *found = 0 when the name never had a log (no error set). */
og_status og_graph_head_lookup(og_graph *g, const char *branch, og_ref_entry *out, int *found);
/* The same for a name about to be created, which usually has no log: when this handle has no
 * memory of it, one list (limit 1) answers at once instead of reading a stored hint first. */
og_status og_graph_head_lookup_new(og_graph *g, const char *branch, og_ref_entry *out, int *found);

/* commit.c */
og_status og_graph_commit_write(og_graph *g, const og_commit *c);
/* Caches a commit this process has written (its encoded bytes), as a later read would decode it. */
void og_graph_commit_cache_written(og_graph *g, const og_commit *c, const void *bytes, size_t len);
og_status og_commit_copy_tables(og_commit *dst, const og_commit *src);
void og_commit_clear(og_commit *c);

/* snapshot.c */
og_status og_snapshot_make(og_graph *g, const og_ref_entry *head, const char *commit_id, og_snapshot **out);

/* A fault point of the write protocol plus the test step hook. */
void og_graph_step(og_graph *g, const char *point);

/* shared helpers */
/* 1 if dir is a usable table directory (a key fragment under tables/, as table.h wants). */
int og_table_dir_valid(const char *dir);
/* 1 if s is an RFC 3339 UTC millisecond timestamp as og_format_time_ms writes it. */
int og_timestamp_valid(const char *s);
char *og_strdup_or_null(const char *s);
int og_actor_valid(const char *actor);

#endif
