/*
 * txn.c — the write protocol of STORAGE.md §5, the single function every writer (load,
 * mutate, merge, schema apply, optimize, revert) goes through, and the commit draft the
 * writer fills.
 *
 *   capture   head entry s (+ its incarnation) → commit → schema: one coherent view
 *   plan      the caller's callback validates against that view and writes its immutable
 *             effects (table versions), filling the draft (tables, schema, operation, parents)
 *   commit    the commit object under a fresh ULID (plain put: nobody else can pick the name)
 *   publish   put_if_absent of log entry s+1 — the only step that makes anything visible
 *   lost      entry s+1 exists: re-capture and re-run the callback from scratch (never reuse
 *             a stale plan), bounded, with jittered exponential back-off; a pinned expected
 *             head turns the loss into precondition_failed instead.
 *
 * A delete + recreate of the branch between capture and publish appends entries s+1 and s+2,
 * so the stale writer's put_if_absent of s+1 loses and it re-captures the new incarnation
 * (or fails its expected-incarnation pin): the old base can never land on the new branch.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/internal.h"
#include "table/table.h"
#include "util/error.h"
#include "util/fault.h"

/* ---- the draft -------------------------------------------------------------------------- */

static size_t table_pos(const og_commit *c, const char *dir, int *found)
{
    size_t lo = 0, hi = c->ntables;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->tables[mid].dir, dir);
        if (r == 0) {
            *found = 1;
            return mid;
        }
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

og_status og_draft_set_table(og_commit_draft *d, const char *dir, uint64_t version, uint64_t rows)
{
    if (!og_table_dir_valid(dir))
        return og_err(OG_ERR_INVALID, "draft: \"%s\" is not a valid table directory", dir ? dir : "");
    og_commit *c = &d->c;
    int found;
    size_t at = table_pos(c, dir, &found);
    if (found) {
        c->tables[at].version = version;
        c->tables[at].rows = rows;
        return OG_OK;
    }
    if (c->ntables == d->tables_cap) {
        size_t cap = d->tables_cap ? d->tables_cap * 2 : 8;
        og_table_ref *t = realloc(c->tables, cap * sizeof *t);
        if (!t) return og_err(OG_ERR_NOMEM, "draft: out of memory adding table %s", dir);
        c->tables = t;
        d->tables_cap = cap;
    }
    char *copy = strdup(dir);
    if (!copy) return og_err(OG_ERR_NOMEM, "draft: out of memory adding table %s", dir);
    memmove(&c->tables[at + 1], &c->tables[at], (c->ntables - at) * sizeof *c->tables);
    c->tables[at] = (og_table_ref){copy, version, rows};
    c->ntables++;
    return OG_OK;
}

og_status og_draft_remove_table(og_commit_draft *d, const char *dir)
{
    og_commit *c = &d->c;
    int found;
    size_t at = table_pos(c, dir, &found);
    if (!found) return og_err(OG_ERR_NOT_FOUND, "draft: table %s is not in the commit", dir);
    free(c->tables[at].dir);
    memmove(&c->tables[at], &c->tables[at + 1], (c->ntables - at - 1) * sizeof *c->tables);
    c->ntables--;
    return OG_OK;
}

og_status og_draft_set_schema(og_commit_draft *d, const char *schema_id)
{
    if (!schema_id || !og_sha256_hex_valid(schema_id))
        return og_err(OG_ERR_INVALID, "draft: \"%s\" is not a schema id", schema_id ? schema_id : "");
    memcpy(d->c.schema, schema_id, OG_SCHEMA_ID_LEN + 1);
    return OG_OK;
}

og_status og_draft_set_operation(og_commit_draft *d, og_op_kind kind, const char *mode)
{
    if (!og_op_kind_name(kind) || kind == OG_OP_INIT)
        return og_err(OG_ERR_INVALID, "draft: invalid operation kind %d", (int)kind);
    char *m = NULL;
    if (mode && !(m = strdup(mode))) return og_err(OG_ERR_NOMEM, "draft: out of memory");
    free(d->c.mode);
    d->c.mode = m;
    d->c.kind = kind;
    return OG_OK;
}

og_status og_draft_set_stat(og_commit_draft *d, const char *name, int64_t value)
{
    og_commit *c = &d->c;
    if (!name || !*name) return og_err(OG_ERR_INVALID, "draft: a stat needs a name");
    for (size_t i = 0; i < c->nstats; i++)
        if (strcmp(c->stats[i].name, name) == 0) {
            c->stats[i].value = value;
            return OG_OK;
        }
    if (c->nstats == d->stats_cap) {
        size_t cap = d->stats_cap ? d->stats_cap * 2 : 4;
        og_stat *s = realloc(c->stats, cap * sizeof *s);
        if (!s) return og_err(OG_ERR_NOMEM, "draft: out of memory");
        c->stats = s;
        d->stats_cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return og_err(OG_ERR_NOMEM, "draft: out of memory");
    c->stats[c->nstats++] = (og_stat){copy, value};
    return OG_OK;
}

og_status og_draft_add_parent(og_commit_draft *d, const char *commit_id)
{
    if (!commit_id || !og_ulid_valid(commit_id))
        return og_err(OG_ERR_INVALID, "draft: \"%s\" is not a commit id", commit_id ? commit_id : "");
    if (d->c.nparents >= OG_GRAPH_MAX_PARENTS) return og_err(OG_ERR_INVALID, "draft: a commit has at most two parents");
    for (size_t i = 0; i < d->c.nparents; i++)
        if (strcmp(d->c.parents[i], commit_id) == 0)
            return og_err(OG_ERR_INVALID, "draft: commit %s is already a parent", commit_id);
    memcpy(d->c.parents[d->c.nparents++], commit_id, OG_ULID_LEN + 1);
    return OG_OK;
}

void og_draft_set_noop(og_commit_draft *d) { d->noop = 1; }

og_status og_draft_stage_table(og_commit_draft *d, const char *dir, og_table_txn *x, uint64_t rows)
{
    og_status st = og_table_dir_valid(dir) ? OG_OK
                                           : og_err(OG_ERR_INVALID, "draft: \"%s\" is not a valid table directory", dir ? dir : "");
    og_staged_table *p = st == OG_OK ? realloc(d->staged, (d->nstaged + 1) * sizeof *p) : NULL;
    char *copy = p ? strdup(dir) : NULL;
    if (p) d->staged = p;
    if (st == OG_OK && !copy) st = og_err(OG_ERR_NOMEM, "draft: out of memory staging table %s", dir);
    if (st != OG_OK) {
        free(copy);
        og_table_txn_free(x);
        return st;
    }
    d->staged[d->nstaged++] = (og_staged_table){copy, x, rows, 0};
    return OG_OK;
}

static void draft_free_staged(og_commit_draft *d)
{
    for (size_t i = 0; i < d->nstaged; i++) {
        free(d->staged[i].dir);
        og_table_txn_free(d->staged[i].x);
    }
    free(d->staged);
    d->staged = NULL;
    d->nstaged = 0;
}

static og_status draft_init(og_commit_draft *d, const og_snapshot *base)
{
    memset(d, 0, sizeof *d);
    const og_commit *bc = og_snapshot_commit(base);
    OG_TRY(og_commit_copy_tables(&d->c, bc));
    d->tables_cap = d->c.ntables;
    memcpy(d->c.schema, bc->schema, sizeof d->c.schema);
    memcpy(d->c.parents[0], bc->id, OG_ULID_LEN + 1);
    d->c.nparents = 1;
    return OG_OK;
}

/* ---- the in-process pipeline of one branch -----------------------------------------------
 *
 * Writers of one branch in one process take turns to plan (docs/graph-authority.md §2,
 * "Writers of one branch in one process"): a writer holds its branch's turn from its capture
 * until its effects — data files, manifests, commit object — are durable, and then hands the
 * turn on before it publishes.  The next writer captures the entry the previous one is about
 * to publish (seq s+1, its commit, cached when written) instead of the published head, so its
 * plan and its flushes overlap the previous publish; only its own publish (s+2) waits, until
 * the previous writer's outcome is known.  Published: it goes on.  Not published (lost,
 * failed, outcome unknown): its plan stood on a commit that is not on the branch, so it
 * publishes nothing, discards its effects and starts again from a fresh capture — as after a
 * lost publish, without the back-off.  An error or a no-op decided on such a plan waits the
 * same way and counts only if the previous writer published.  The publish is still the one
 * put_if_absent of the next entry, in seq order; nothing here decides anything the store
 * does not.  A write made from inside another write of the same thread (a callback or a step
 * hook racing its own write, as tests do) stays outside the pipeline. */
enum { SLOT_PENDING, SLOT_PUBLISHED, SLOT_FAILED };

typedef struct pipe_slot {
    og_ref_entry e; /* the entry its writer publishes */
    int state;      /* SLOT_*, under g->lock */
    int followed;   /* a writer planned on it (under g->lock) */
    unsigned refs;  /* its writer, the pipe's tail, the writer that planned on it */
} pipe_slot;

struct og_pipe {
    struct og_pipe *next;
    char branch[OG_BRANCH_MAX + 1];
    int planning;         /* a writer holds the turn */
    pipe_slot *tail;      /* the newest writer past its effects, or NULL */
    unsigned refs;        /* writers inside og_graph_write for this branch */
    pthread_cond_t turn;  /* signalled when the turn is handed on */
    pthread_cond_t done;  /* broadcast when a slot's outcome is known */
};

typedef struct pipe_turn {
    struct og_pipe *p; /* NULL: outside the pipeline */
    pipe_slot *pred;   /* the in-flight writer this attempt planned on, or NULL */
    pipe_slot *mine;   /* this attempt's slot once its effects are durable */
    int held;          /* this attempt holds the turn */
    int waited;        /* it waited for the turn, or planned on a predecessor */
    int alone;         /* no other writer of the branch in this process when the write began */
} pipe_turn;

static _Thread_local int write_depth; /* og_graph_write calls on this thread's stack */

static void slot_unref_locked(pipe_slot *s)
{
    if (s && --s->refs == 0) free(s);
}

static struct og_pipe *pipe_enter(og_graph *g, const char *branch, int *alone)
{
    pthread_mutex_lock(&g->lock);
    struct og_pipe *p = g->pipes;
    while (p && strcmp(p->branch, branch)) p = p->next;
    if (!p && (p = calloc(1, sizeof *p)) != NULL) {
        snprintf(p->branch, sizeof p->branch, "%s", branch);
        pthread_cond_init(&p->turn, NULL);
        pthread_cond_init(&p->done, NULL);
        p->next = g->pipes;
        g->pipes = p;
    }
    if (p) *alone = ++p->refs == 1;
    pthread_mutex_unlock(&g->lock);
    return p; /* NULL (out of memory): the write goes on outside the pipeline */
}

static void pipe_leave(og_graph *g, struct og_pipe *p)
{
    if (!p) return;
    pthread_mutex_lock(&g->lock);
    if (--p->refs == 0) {
        struct og_pipe **pp = &g->pipes;
        while (*pp != p) pp = &(*pp)->next;
        *pp = p->next;
        slot_unref_locked(p->tail);
        pthread_cond_destroy(&p->turn);
        pthread_cond_destroy(&p->done);
        free(p);
    }
    pthread_mutex_unlock(&g->lock);
}

/* Waits for the turn; t->pred = the tail if its publish is still pending. */
static void turn_take(og_graph *g, pipe_turn *t)
{
    if (!t->p) return;
    pthread_mutex_lock(&g->lock);
    while (t->p->planning) {
        t->waited = 1;
        pthread_cond_wait(&t->p->turn, &g->lock);
    }
    t->p->planning = 1;
    t->held = 1;
    pipe_slot *tail = t->p->tail;
    if (tail && tail->state == SLOT_PENDING) {
        tail->refs++;
        tail->followed = 1;
        t->pred = tail;
        t->waited = 1;
    }
    pthread_mutex_unlock(&g->lock);
}

/* Hands the turn on; `mine` (may be NULL) becomes the tail the next writer plans on. */
static void turn_give(og_graph *g, pipe_turn *t, pipe_slot *mine)
{
    if (!t->held) return;
    pthread_mutex_lock(&g->lock);
    if (mine) {
        mine->refs++;
        slot_unref_locked(t->p->tail);
        t->p->tail = mine;
    }
    t->p->planning = 0;
    t->held = 0;
    pthread_cond_signal(&t->p->turn);
    pthread_mutex_unlock(&g->lock);
}

/* Waits until the predecessor's publish outcome is known; 1 = published.  Drops it. */
static int pred_wait(og_graph *g, pipe_turn *t)
{
    if (!t->pred) return 1;
    pthread_mutex_lock(&g->lock);
    while (t->pred->state == SLOT_PENDING) pthread_cond_wait(&t->p->done, &g->lock);
    int ok = t->pred->state == SLOT_PUBLISHED;
    slot_unref_locked(t->pred);
    t->pred = NULL;
    pthread_mutex_unlock(&g->lock);
    return ok;
}

static og_status slot_new(og_graph *g, pipe_turn *t, const og_ref_entry *e)
{
    if (!t->p) return OG_OK;
    pipe_slot *s = calloc(1, sizeof *s);
    if (!s) return og_err(OG_ERR_NOMEM, "out of memory writing to branch \"%s\"", e->branch);
    s->e = *e;
    s->state = SLOT_PENDING;
    s->refs = 1;
    t->mine = s;
    turn_give(g, t, s);
    return OG_OK;
}

/* Settles this attempt's slot (if any) and drops it; unresolved means not published.
 * Returns 1 when another writer planned on it: that writer's manifests may name this
 * attempt's data files, so an unpublished attempt must leave its effects to `cleanup`
 * rather than delete them (a table version never names a missing file). */
static int slot_settle(og_graph *g, pipe_turn *t, int published)
{
    if (!t->mine) return 0;
    pthread_mutex_lock(&g->lock);
    if (t->mine->state == SLOT_PENDING) t->mine->state = published ? SLOT_PUBLISHED : SLOT_FAILED;
    int followed = t->mine->followed;
    pthread_cond_broadcast(&t->p->done);
    slot_unref_locked(t->mine);
    t->mine = NULL;
    pthread_mutex_unlock(&g->lock);
    return followed;
}

/* ---- the protocol ----------------------------------------------------------------------- */

static void backoff(og_graph *g, int attempt)
{
    uint64_t cap = g->backoff_base_ms;
    for (int i = 1; i < attempt && cap < g->backoff_max_ms; i++) cap *= 2;
    if (cap > g->backoff_max_ms) cap = g->backoff_max_ms;
    uint32_t r = 0;
    if (og_random_bytes(&r, sizeof r) != OG_OK) r = (uint32_t)og_now_ms();
    /* Equal jitter: half fixed, half random, in microseconds. */
    uint64_t us = cap * 500 + (uint64_t)r % (cap * 500 + 1);
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Checks the draft the callback returned before anything about it is written. */
static og_status draft_check(og_graph *g, const og_commit_draft *d, const og_snapshot *base, const char *branch)
{
    if (d->c.kind == OG_OP_NONE)
        return og_err(OG_ERR_INVALID, "write to branch \"%s\": the writer set no operation kind", branch);
    if (strcmp(d->c.schema, og_snapshot_schema_id(base)) != 0) {
        char key[128];
        uint64_t size;
        og_schema_key(d->c.schema, key);
        og_status st = og_store_head(g->store, key, &size);
        if (st == OG_ERR_NOT_FOUND)
            return og_err(OG_ERR_INVALID, "write to branch \"%s\": schema %s was never stored (%s missing)", branch,
                          d->c.schema, key);
        if (st != OG_OK) return og_err_wrap(st, "checking schema %s", d->c.schema);
    }
    for (size_t i = 1; i < d->c.nparents; i++) {
        const og_commit *pc;
        og_cache_entry *hold;
        og_status st = og_graph_commit_get(g, d->c.parents[i], &pc, &hold);
        og_cache_entry_release(hold);
        if (st != OG_OK) return og_err_wrap(st, "write to branch \"%s\": parent", branch);
    }
    return OG_OK;
}

/* Writes the staged tables and the commit object (docs/graph-authority.md §3): every staged
 * txn's data and deletion files together with the commit object, which names the versions
 * the manifests will most likely get, in one round; then the manifests.  A manifest that
 * lost its number to another writer of the table got the next free one: the commit object
 * written names the wrong version, so it is deleted and a new one, under a fresh id, is
 * written (a commit object is never rewritten in place).  Nothing here is visible: the
 * publish comes after.  commit_id follows the commit object that may exist, for the
 * caller's clean-up of an unpublished attempt. */
static og_status write_staged(og_graph *g, og_commit_draft *d, char commit_id[OG_ULID_LEN + 1])
{
    og_commit *c = &d->c;
    size_t nops = 1;
    og_store_put_op *ops = NULL;
    og_buf cb = OG_BUF_INIT;
    char ckey[64];
    og_status st = OG_OK;
    for (size_t i = 0; i < d->nstaged && st == OG_OK; i++) {
        og_staged_table *t = &d->staged[i];
        og_store_put_op *tops;
        size_t n;
        st = og_table_txn_commit_begin(t->x, &tops, &n, &t->version);
        if (st == OG_OK) st = og_draft_set_table(d, t->dir, t->version, t->rows);
        if (st == OG_OK && n) {
            og_store_put_op *grown = realloc(ops, (nops - 1 + n + 1) * sizeof *grown);
            if (!grown) st = og_err(OG_ERR_NOMEM, "out of memory writing table %s", t->dir);
            else {
                ops = grown;
                memcpy(ops + nops - 1, tops, n * sizeof *tops);
                nops += n;
            }
        }
    }
    if (st == OG_OK && !ops && !(ops = malloc(sizeof *ops))) st = og_err(OG_ERR_NOMEM, "out of memory");
    if (st == OG_OK) st = og_commit_encode(c, &cb);
    if (st == OG_OK) {
        og_commit_key(c->id, ckey);
        ops[nops - 1] = (og_store_put_op){ckey, cb.data, cb.len, 0, OG_OK};
        st = og_store_put_many(g->store, ops, nops);
        if (st != OG_OK) og_err_wrap(st, "writing commit %s and its table files", c->id);
    }
    free(ops);
    if (st == OG_OK) og_graph_commit_cache_written(g, c, cb.data, cb.len);
    og_buf_free(&cb);
    int moved = 0;
    for (size_t i = 0; i < d->nstaged && st == OG_OK; i++) {
        og_staged_table *t = &d->staged[i];
        uint64_t got;
        st = og_table_txn_commit_end(t->x, &got);
        if (st == OG_OK && got != t->version) {
            moved = 1;
            st = og_draft_set_table(d, t->dir, got, t->rows);
        }
    }
    if (st != OG_OK || !moved) return st;
    char cache_key[OG_ULID_LEN + 8], okey[64];
    snprintf(cache_key, sizeof cache_key, "c:%s", c->id);
    og_cache_remove(g->cache, cache_key);
    og_commit_key(c->id, okey);
    (void)og_store_delete(g->store, okey); /* never named by anything: garbage either way */
    og_error_clear();
    OG_TRY(og_ulid_new(c->id));
    memcpy(commit_id, c->id, OG_ULID_LEN + 1);
    return og_graph_commit_write(g, c);
}

/* One attempt.  *lost = 1 when the publish lost to another writer, 2 when the plan grew too
 * old to publish, 3 when it planned on an in-flight write of this process that was not
 * published (all mean: start again from a fresh capture).  *stage says how far it got:
 * 0 = certainly not published, 1 = the publish was sent (its outcome may be unknown on an
 * error), 2 = published; *commit_written = 1 once the commit object may exist. */
static og_status attempt_inner(og_graph *g, const og_write_opts *o, const char *actor, og_write_fn fn, void *ctx,
                               int attempt, pipe_turn *t, og_write_result *res, int *lost, int *stage,
                               char commit_id[OG_ULID_LEN + 1])
{
    *lost = 0;
    int64_t captured_at = og_now_ms();
    og_ref_entry head;
    int found = 1;
    /* a pin holds or not on the published head, never on one still being published */
    if (t->pred && (o->expected_head || o->expected_incarnation)) (void)pred_wait(g, t);
    if (t->pred) head = t->pred->e; /* the entry the writer before this one is publishing */
    else if (attempt == 1 && o->first_head && !strcmp(o->first_head->branch, o->branch) &&
             (!t->p || (t->alone && !t->waited)))
        head = *o->first_head; /* looked up before the turn: good only if nobody else wrote */
    else OG_TRY(og_graph_head_lookup(g, o->branch, &head, &found));
    if (!found) return og_err(OG_ERR_NOT_FOUND, "branch \"%s\" not found", o->branch);
    if (head.kind == OG_REF_DELETE) return og_err(OG_ERR_NOT_FOUND, "branch \"%s\" not found (it was deleted)", o->branch);
    if (o->expected_head && strcmp(o->expected_head, head.commit) != 0)
        return og_err(OG_ERR_PRECONDITION_FAILED, "branch \"%s\" is at commit %s, not the expected %s", o->branch,
                      head.commit, o->expected_head);
    if (o->expected_incarnation && strcmp(o->expected_incarnation, head.incarnation) != 0)
        return og_err(OG_ERR_PRECONDITION_FAILED,
                      "branch \"%s\" was deleted and re-created (incarnation %s, expected %s)", o->branch,
                      head.incarnation, o->expected_incarnation);

    og_snapshot *base = NULL;
    og_status st = og_snapshot_make(g, &head, head.commit, &base);
    if (st != OG_OK) return og_err_wrap(st, "capturing branch \"%s\"", o->branch);
    og_commit_draft d;
    st = draft_init(&d, base);
    if (st == OG_OK) st = fn(ctx, g, base, &d, attempt);
    if (st == OG_OK && d.noop) {
        res->published = 0;
        memcpy(res->commit, head.commit, sizeof res->commit);
        res->seq = head.seq;
        goto done;
    }
    if (st == OG_OK) st = draft_check(g, &d, base, o->branch);
    if (st != OG_OK) goto done;
    og_graph_step(g, "graph.after_effects");
    if (og_fault_error("graph.after_effects")) {
        st = og_err(OG_ERR_IO, "write to branch \"%s\": injected I/O error at graph.after_effects", o->branch);
        goto done;
    }

    og_commit *c = &d.c;
    c->actor = strdup(actor);
    if (o->actor_via) snprintf(c->actor_via, sizeof c->actor_via, "%s", o->actor_via);
    c->message = og_strdup_or_null(o->message);
    if (!c->actor || (o->message && !c->message)) {
        st = og_err(OG_ERR_NOMEM, "out of memory writing to branch \"%s\"", o->branch);
        goto done;
    }
    int64_t now = og_now_ms();
    og_format_time_ms(now, c->created_at);
    if ((st = og_ulid_new(c->id)) != OG_OK) goto done;
    memcpy(commit_id, c->id, OG_ULID_LEN + 1);
    if (d.nstaged) st = write_staged(g, &d, commit_id);
    else st = og_graph_commit_write(g, c);
    if (st != OG_OK) goto done;
    og_graph_step(g, "graph.after_commit_object");

    og_ref_entry e;
    memset(&e, 0, sizeof e);
    e.seq = head.seq + 1;
    memcpy(e.branch, head.branch, sizeof e.branch);
    memcpy(e.incarnation, head.incarnation, sizeof e.incarnation);
    e.kind = OG_REF_ADVANCE;
    memcpy(e.commit, c->id, sizeof e.commit);
    memcpy(e.previous, head.commit, sizeof e.previous);
    snprintf(e.actor, sizeof e.actor, "%s", actor);
    memcpy(e.at, c->created_at, sizeof e.at);
    /* effects durable: the next writer of the branch may plan on this entry */
    if ((st = slot_new(g, t, &e)) != OG_OK) goto done;
    og_graph_step(g, "graph.before_publish");
    if (!pred_wait(g, t)) {
        /* planned on a write that was not published: start again, nothing of ours is visible */
        *lost = 3;
        st = og_err(OG_ERR_ALREADY_EXISTS, "write to branch \"%s\": the write it followed was not published",
                    o->branch);
        goto done;
    }
    if (og_now_ms() - captured_at > g->max_plan_ms) {
        /* Too old to publish safely (cleanup may have reclaimed log entries after our base,
         * see docs/graph-authority.md): treat like a lost publish and re-capture. */
        *lost = 2;
        st = OG_ERR_ALREADY_EXISTS;
        goto done;
    }
    *stage = 1;
    st = og_graph_publish_entry(g, &e);
    if (st == OG_ERR_ALREADY_EXISTS) {
        *lost = 1;
        *stage = 0; /* someone else's entry: ours certainly is not published */
    } else if (st == OG_OK) {
        *stage = 2;
        res->published = 1;
        memcpy(res->commit, c->id, sizeof res->commit);
        res->seq = e.seq;
    }
done:
    draft_free_staged(&d);
    og_commit_clear(&d.c);
    og_snapshot_free(base);
    return st;
}

/* An attempt inside a write journal (store.h): when it is certainly not published (its
 * callback or a later step failed, it lost the publish, or it was a no-op), everything it
 * wrote under tables/ (and _index/) and its commit object are deleted before returning — best effort; what
 * a crash or a failed delete leaves is garbage for `cleanup`.  Only keys the attempt itself
 * created are in the journal, and none of them can be named by a published commit.  When the
 * publish outcome is unknown nothing is deleted; nor when another writer of this process
 * planned on the attempt (the pipeline above): that writer's manifest may name its files. */
static og_status attempt_once(og_graph *g, const og_write_opts *o, const char *actor, og_write_fn fn, void *ctx,
                              int attempt, pipe_turn *t, og_write_result *res, int *lost)
{
    og_store_journal j;
    og_store_journal_begin(&j, g->store, "tables/");
    /* and index files: an attempt writes none itself (INVARIANTS.md 7), but a load's flushed
     * batches get theirs beside it, named by data files only this attempt wrote
     * (docs/load.md "Indexes of flushed batches") */
    j.prefix2 = "_index/";
    int stage = 0;
    char commit_id[OG_ULID_LEN + 1] = "";
    turn_take(g, t);
    og_status st = attempt_inner(g, o, actor, fn, ctx, attempt, t, res, lost, &stage, commit_id);
    turn_give(g, t, NULL); /* it ended before its effects were durable */
    if (t->pred && !pred_wait(g, t) && stage == 0) {
        /* its error or no-op was decided on a write that was not published: start again */
        *lost = 3;
        st = og_err(OG_ERR_ALREADY_EXISTS, "write to branch \"%s\": the write it followed was not published",
                    o->branch);
    }
    int followed = slot_settle(g, t, stage == 2);
    og_store_journal_end(&j);
    int noop = st == OG_OK && !res->published;
    if (stage == 0 && (st != OG_OK || noop) && !followed) {
        char saved[2048];
        snprintf(saved, sizeof saved, "%s", og_error_message());
        for (size_t i = 0; i < j.keys.count; i++) og_table_cache_forget_key(g->cache, j.keys.keys[i]);
        og_store_journal_discard(&j);
        if (commit_id[0]) {
            char key[64];
            og_commit_key(commit_id, key);
            char ckey[OG_ULID_LEN + 8];
            snprintf(ckey, sizeof ckey, "c:%s", commit_id);
            og_cache_remove(g->cache, ckey); /* cached when written: it never existed */
            (void)og_store_delete(g->store, key);
        }
        og_error_clear();
        if (st != OG_OK) og_err(st, "%s", saved); /* the attempt's own message, not a delete's */
    } else {
        og_store_journal_free(&j);
    }
    return st;
}

/* ---- the cross-process publish lock ------------------------------------------------------
 *
 * Writers of one branch in one process queue on the server's lock (docs/server.md
 * "Concurrent writes"); writers in different processes (several server replicas, a CLI
 * beside a server) only meet at the publish, where all but one lose and plan again.  On a
 * store that can lock (og_store_lock: a local disk) a write therefore also takes the
 * branch's advisory cross-process lock, from its capture to its end, once its handle has
 * seen the branch contended: from the first attempt for CONTENDED_MS after a lost publish on
 * it, else from the attempt after a loss.  An uncontended write pays nothing, and the lock
 * never decides anything — the publish's put_if_absent does; a writer that cannot get the
 * lock within its retry bound goes on without it.  A thread that already holds one (a
 * nested write, as tests make to race themselves) takes none, so it cannot wait on itself. */
#define CONTENDED_MS (10LL * 1000)

static _Thread_local int publish_lock_held;

static int contended_recently(og_graph *g, const char *branch)
{
    int64_t now = og_now_ms();
    int hit = 0;
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < OG_CONTENDED_SLOTS && !hit; i++)
        hit = g->contended[i].until > now && strcmp(g->contended[i].branch, branch) == 0;
    pthread_mutex_unlock(&g->lock);
    return hit;
}

static void contended_note(og_graph *g, const char *branch)
{
    int64_t until = og_now_ms() + CONTENDED_MS;
    pthread_mutex_lock(&g->lock);
    int slot = 0;
    for (int i = 0; i < OG_CONTENDED_SLOTS; i++) {
        if (strcmp(g->contended[i].branch, branch) == 0) {
            slot = i;
            break;
        }
        if (g->contended[i].until < g->contended[slot].until) slot = i; /* the oldest, or an empty one */
    }
    snprintf(g->contended[slot].branch, sizeof g->contended[slot].branch, "%s", branch);
    g->contended[slot].until = until;
    pthread_mutex_unlock(&g->lock);
}

/* Takes the branch's publish lock, waiting until `deadline` at most: the held handle, or -1
 * (the store cannot lock, it was held too long, or this thread holds one already). */
static int publish_lock(og_graph *g, const char *branch, int64_t deadline)
{
    if (publish_lock_held) return -1;
    char enc[OG_BRANCH_ENC_MAX + 1], name[OG_BRANCH_ENC_MAX + 3];
    og_branch_encode(branch, enc);
    snprintf(name, sizeof name, "b.%s", enc);
    int fd = -1;
    int64_t wait = deadline - og_now_ms();
    if (og_store_lock(g->store, name, wait > 0 ? wait : 0, &fd) != OG_OK) {
        og_error_clear(); /* never the write's error: it only goes on racing */
        return -1;
    }
    publish_lock_held = 1;
    return fd;
}

static void publish_unlock(int fd)
{
    if (fd < 0) return;
    og_store_unlock(fd);
    publish_lock_held = 0;
}

og_status og_graph_write(og_graph *g, const og_write_opts *o, og_write_fn fn, void *ctx, og_write_result *out)
{
    og_write_result res;
    memset(&res, 0, sizeof res);
    if (!o || !fn) return og_err(OG_ERR_INVALID, "write: options and a writer callback are required");
    OG_TRY(og_branch_name_check(o->branch));
    const char *actor = o->actor ? o->actor : "omnigraph";
    if (!og_actor_valid(actor)) return og_err(OG_ERR_INVALID, "write to branch \"%s\": invalid actor", o->branch);
    if (o->actor_via && !og_actor_via_valid(o->actor_via))
        return og_err(OG_ERR_INVALID, "write to branch \"%s\": unknown actor provenance \"%s\"", o->branch, o->actor_via);
    if (o->expected_head && !og_ulid_valid(o->expected_head))
        return og_err(OG_ERR_INVALID, "write to branch \"%s\": expected head \"%s\" is not a commit id", o->branch,
                      o->expected_head);
    /* The bound: an explicit attempt count, else time (and a few attempts however long each
     * took: a slow plan must still get its retries). */
    int max = o->max_attempts > 0 ? o->max_attempts : g->max_attempts;
    int64_t t0 = og_now_ms(), deadline = t0 + g->retry_ms;
    int fd = contended_recently(g, o->branch) ? publish_lock(g, o->branch, deadline) : -1;
    og_write_opts locked;
    if (fd >= 0 && o->first_head) {
        /* the caller's head was looked up before the wait for the lock: most likely stale */
        locked = *o;
        locked.first_head = NULL;
        o = &locked;
    }
    pipe_turn t;
    memset(&t, 0, sizeof t);
    if (write_depth == 0) t.p = pipe_enter(g, o->branch, &t.alone);
    write_depth++;
    og_status st = OG_OK;
    int attempt = 1;
    for (;; attempt++) {
        int lost = 0;
        res.attempts = attempt;
        st = attempt_once(g, o, actor, fn, ctx, attempt, &t, &res, &lost);
        if (!lost) break;
        if (lost == 3) { /* the write it followed failed: no one else is in the way */
            if (og_now_ms() < deadline || attempt < OG_GRAPH_MIN_ATTEMPTS) continue;
            st = og_err(OG_ERR_CONFLICT, "write to branch \"%s\": %d attempts in %lld ms each followed a write that failed",
                        o->branch, attempt, (long long)(og_now_ms() - t0));
            break;
        }
        if (lost == 1) contended_note(g, o->branch);
        if (lost == 1 && o->expected_head) {
            st = og_err(OG_ERR_PRECONDITION_FAILED,
                        "branch \"%s\" moved away from the expected head %s while the write was prepared", o->branch,
                        o->expected_head);
            break;
        }
        int spent = max > 0 ? attempt >= max : attempt >= OG_GRAPH_MIN_ATTEMPTS && og_now_ms() >= deadline;
        if (spent) {
            st = og_err(OG_ERR_CONFLICT,
                        "write to branch \"%s\" lost its publish %d times in %lld ms to concurrent writers; giving up",
                        o->branch, attempt, (long long)(og_now_ms() - t0));
            break;
        }
        backoff(g, attempt);
        if (fd < 0) fd = publish_lock(g, o->branch, deadline);
    }
    write_depth--;
    pipe_leave(g, t.p);
    publish_unlock(fd);
    if (out && (st == OG_OK || st == OG_ERR_CONFLICT)) *out = res;
    return st;
}
