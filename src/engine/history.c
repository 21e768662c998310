/*
 * history.c — commit DAG walks.  See history.h.
 *
 * An ancestor set is built breadth-first from one commit: the array of ids is also the BFS
 * queue, so distances are non-decreasing along it and each id's first visit is its shortest
 * distance.  The id -> index map is an og_strmap (no hash order leaks: choices are made by
 * distance, created_at and id only).
 */
#include "engine/history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/strmap.h"

typedef struct anc_set {
    og_strmap idx;
    og_commit_id *ids;
    uint32_t *dist;
    size_t n, cap;
} anc_set;

static void anc_free(anc_set *s)
{
    og_strmap_free(&s->idx);
    free(s->ids);
    free(s->dist);
}

static og_status anc_add(anc_set *s, const char *id, uint32_t dist)
{
    int inserted;
    OG_TRY(og_strmap_insert(&s->idx, id, strlen(id), (uint32_t)s->n, NULL, &inserted));
    if (!inserted) return OG_OK;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        og_commit_id *ids = realloc(s->ids, cap * sizeof *ids);
        if (ids) s->ids = ids;
        uint32_t *d = ids ? realloc(s->dist, cap * sizeof *d) : NULL;
        if (!ids || !d) return og_err(OG_ERR_NOMEM, "out of memory");
        s->dist = d;
        s->cap = cap;
    }
    snprintf(s->ids[s->n].id, sizeof s->ids[s->n].id, "%s", id);
    s->dist[s->n] = dist;
    s->n++;
    return OG_OK;
}

/* Every ancestor of `start` with its distance; stops early once `stop` (may be NULL) is seen. */
static og_status anc_build(og_graph *g, const char *start, const char *stop, anc_set *s, int *stopped)
{
    memset(s, 0, sizeof *s);
    og_strmap_init(&s->idx);
    if (stopped) *stopped = 0;
    const og_commit *c;
    og_cache_entry *hold;
    OG_TRY(og_graph_commit_get(g, start, &c, &hold)); /* checks the start exists */
    og_cache_entry_release(hold);
    OG_TRY(anc_add(s, start, 0));
    for (size_t i = 0; i < s->n; i++) {
        if (stop && !strcmp(s->ids[i].id, stop)) {
            if (stopped) *stopped = 1;
            return OG_OK;
        }
        og_status st = og_graph_commit_get(g, s->ids[i].id, &c, &hold);
        if (st == OG_ERR_NOT_FOUND && i > 0) { /* reclaimed by cleanup: this line of history ends */
            og_error_clear();
            continue;
        }
        OG_TRY(st);
        for (size_t p = 0; p < c->nparents && st == OG_OK; p++) st = anc_add(s, c->parents[p], s->dist[i] + 1);
        og_cache_entry_release(hold);
        OG_TRY(st);
    }
    return OG_OK;
}

og_status og_history_first_parent(og_graph *g, const char *start, size_t limit, og_commit_id **out, size_t *n)
{
    return og_history_first_parent_until(g, start, limit, NULL, NULL, out, n);
}

og_status og_history_first_parent_until(og_graph *g, const char *start, size_t limit,
                                        int (*stop)(void *ud, const char *id), void *ud, og_commit_id **out,
                                        size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0, len = 0;
    og_commit_id *ids = NULL;
    char cur[OG_ULID_LEN + 1];
    snprintf(cur, sizeof cur, "%s", start);
    og_status st = OG_OK;
    while (st == OG_OK && (limit == 0 || len < limit)) {
        if (stop && stop(ud, cur)) break;
        const og_commit *c;
        og_cache_entry *hold;
        st = og_graph_commit_get(g, cur, &c, &hold);
        if (st == OG_ERR_NOT_FOUND && len > 0) { /* reclaimed by cleanup: the history ends here */
            og_error_clear();
            st = OG_OK;
            break;
        }
        if (st) break;
        if (len == cap) {
            cap = cap ? cap * 2 : 32;
            og_commit_id *grown = realloc(ids, cap * sizeof *grown);
            if (!grown) {
                og_cache_entry_release(hold);
                st = og_err(OG_ERR_NOMEM, "out of memory");
                break;
            }
            ids = grown;
        }
        snprintf(ids[len++].id, sizeof ids[0].id, "%s", c->id);
        int more = c->nparents > 0;
        if (more) snprintf(cur, sizeof cur, "%s", c->parents[0]);
        og_cache_entry_release(hold);
        if (!more) break;
    }
    if (st) {
        free(ids);
        return st;
    }
    *out = ids;
    *n = len;
    return OG_OK;
}

/* 1 when commit x is the better tie-break choice than y (later created_at, then larger id). */
static og_status later(og_graph *g, const char *x, const char *y, int *yes)
{
    const og_commit *cx, *cy;
    og_cache_entry *hx, *hy;
    OG_TRY(og_graph_commit_get(g, x, &cx, &hx));
    og_status st = og_graph_commit_get(g, y, &cy, &hy);
    if (st) {
        og_cache_entry_release(hx);
        return st;
    }
    int c = strcmp(cx->created_at, cy->created_at);
    *yes = c > 0 || (c == 0 && strcmp(x, y) > 0);
    og_cache_entry_release(hx);
    og_cache_entry_release(hy);
    return OG_OK;
}

/* The bounded merge-base search: both ancestor sets grow one BFS level at a time, the
 * shallower side first.  After level k of a side is expanded, the set holds every ancestor at
 * distance <= k + 1 ("complete" depth).  A common ancestor not yet in both sets is deeper than
 * one side's complete depth, so its summed distance exceeds min(complete_a, complete_b): once
 * the best sum found is at most that, no unseen ancestor can win or tie, and the search stops.
 * The cost follows the divergence of the two commits, not the length of the history. */
typedef struct mb_side {
    anc_set s;
    size_t next;      /* first id not expanded yet */
    uint64_t complete; /* every ancestor at distance <= complete is in s */
    int done;          /* nothing left to expand */
} mb_side;

typedef struct mb_best {
    uint64_t sum;
    char *out;
    int *found;
} mb_best;

/* A common ancestor `id` at summed distance `sum`: keep it when it beats the best so far. */
static og_status mb_offer(og_graph *g, mb_best *b, const char *id, uint64_t sum)
{
    int take = sum < b->sum;
    if (!take && sum == b->sum) OG_TRY(later(g, id, b->out, &take));
    if (take) {
        b->sum = sum;
        snprintf(b->out, OG_ULID_LEN + 1, "%s", id);
        *b->found = 1;
    }
    return OG_OK;
}

/* Expands one BFS level of side x; every id new to x that the other side holds is offered. */
static og_status mb_expand(og_graph *g, mb_side *x, const mb_side *y, mb_best *b)
{
    if (x->next >= x->s.n) {
        x->done = 1;
        return OG_OK;
    }
    uint32_t level = x->s.dist[x->next];
    while (x->next < x->s.n && x->s.dist[x->next] == level) {
        size_t i = x->next++;
        const og_commit *c;
        og_cache_entry *hold;
        og_status st = og_graph_commit_get(g, x->s.ids[i].id, &c, &hold);
        if (st == OG_ERR_NOT_FOUND && i > 0) { /* reclaimed by cleanup: this line of history ends */
            og_error_clear();
            continue;
        }
        OG_TRY(st);
        for (size_t p = 0; p < c->nparents && st == OG_OK; p++) {
            size_t before = x->s.n;
            st = anc_add(&x->s, c->parents[p], level + 1);
            uint32_t j;
            if (st == OG_OK && x->s.n > before &&
                og_strmap_get(&y->s.idx, c->parents[p], strlen(c->parents[p]), &j))
                st = mb_offer(g, b, c->parents[p], (uint64_t)level + 1 + y->s.dist[j]);
        }
        og_cache_entry_release(hold);
        OG_TRY(st);
    }
    x->complete = (uint64_t)level + 1;
    if (x->next >= x->s.n) x->done = 1;
    return OG_OK;
}

og_status og_history_merge_base(og_graph *g, const char *a, const char *b, char out[OG_ULID_LEN + 1], int *found)
{
    out[0] = '\0';
    *found = 0;
    mb_side sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    og_strmap_init(&sa.s.idx);
    og_strmap_init(&sb.s.idx);
    mb_best best = {UINT64_MAX, out, found};
    const og_commit *c;
    og_cache_entry *hold;
    og_status st = og_graph_commit_get(g, a, &c, &hold); /* both starts must exist */
    if (st == OG_OK) {
        og_cache_entry_release(hold);
        st = og_graph_commit_get(g, b, &c, &hold);
        if (st == OG_OK) og_cache_entry_release(hold);
    }
    if (st == OG_OK) st = anc_add(&sa.s, a, 0);
    if (st == OG_OK) st = anc_add(&sb.s, b, 0);
    if (st == OG_OK && !strcmp(a, b)) st = mb_offer(g, &best, a, 0);
    while (st == OG_OK && !(sa.done && sb.done)) {
        uint64_t ca = sa.done ? UINT64_MAX : sa.complete, cb = sb.done ? UINT64_MAX : sb.complete;
        if (*found && best.sum <= (ca < cb ? ca : cb)) break;
        mb_side *x = (!sa.done && (sb.done || sa.complete <= sb.complete)) ? &sa : &sb;
        st = mb_expand(g, x, x == &sa ? &sb : &sa, &best);
    }
    anc_free(&sa.s);
    anc_free(&sb.s);
    if (st) {
        out[0] = '\0';
        *found = 0;
    }
    return st;
}

og_status og_history_is_ancestor(og_graph *g, const char *anc, const char *desc, int *yes)
{
    *yes = 0;
    anc_set s;
    og_status st = anc_build(g, desc, anc, &s, yes);
    anc_free(&s);
    return st;
}

og_status og_history_fork_missing(og_graph *g, const char *branch, const char *from, const char *actor)
{
    og_ref_entry head;
    og_status st = og_graph_head_entry(g, branch, &head);
    if (st == OG_OK && head.kind != OG_REF_DELETE) return OG_OK;
    if (st != OG_OK && st != OG_ERR_NOT_FOUND) return st;
    og_error_clear();
    st = og_branch_create(g, branch, from, NULL, actor, NULL);
    if (st == OG_ERR_ALREADY_EXISTS) { /* someone forked it first: write onto theirs */
        og_error_clear();
        return OG_OK;
    }
    return st;
}
